#pragma once
/// @file
/// The Code dock's content: a header line (which module, which kernel and its line range, or why
/// a node has no code) above the generated module in a CodeView. For a CUDA module a splitter
/// shows the CUDA C on the left and the PTX NVRTC made of it on the right, under its own header
/// line (architecture and size, the kernel's .entry lines, or why there is no PTX yet).
///
/// The app hands it the module text and, when a node is selected, the kernel's line range
/// (CompiledStep::firstLine..lastLine) and entry-point symbol; the panel finds that entry in the
/// PTX (findPtxEntry) and highlights both.
///
/// Diff vs pinned: while the app has a pinned run (setDiffAvailable(true)) a bar above the code
/// offers a "Diff vs pinned" toggle; checking it emits diffToggled(true) and the app answers with
/// showDiff() (a CodeDiffView in the code's place); unchecking it, or setDiffAvailable(false),
/// brings the code back. The panel only draws. Thread rules: UI thread only.

#include <QWidget>

class QLabel;
class QSplitter;
class QStackedWidget;
class QToolButton;

namespace tessera::views {

class CodeDiffView;
class CodeView;

class CodePanel : public QWidget {
    Q_OBJECT
public:
    explicit CodePanel(QWidget* parent = nullptr);

    /// Shows a whole C++ module (the PTX pane is hidden); `title` describes it, e.g.
    /// "dw_pw_block.cpp · 3 kernels · 120 lines".
    void setModule(const QString& source, const QString& title);
    /// Shows a whole CUDA C module with the PTX pane beside it; the PTX pane shows
    /// `ptxPlaceholder` until setPtx() (e.g. "Compiling to PTX with NVRTC...").
    void setCudaModule(const QString& source, const QString& title, const QString& ptxPlaceholder);
    /// Fills the PTX pane (CUDA modules only; ignored otherwise); `title` e.g. "PTX · sm_90 · 812
    /// lines". The kernel shown, if any, is highlighted in it at once.
    void setPtx(const QString& ptx, const QString& title);
    /// Empties the PTX pane and shows `placeholder` instead (e.g. why NVRTC failed).
    void clearPtx(const QString& placeholder);
    /// Highlights and scrolls to a kernel's lines (1-based, inclusive) of the current module and,
    /// when a PTX pane is shown and `entry` is given, its `.entry` in the PTX.
    void showKernel(const QString& kernelName, int firstLine, int lastLine, const QString& entry = QString());
    /// A note instead of a kernel (e.g. the node ran in the reference interpreter); the module
    /// stays, without highlight.
    void showNote(const QString& note);
    /// Empties the view and shows `placeholder` (e.g. "Run (Ctrl+R) to generate code").
    void clear(const QString& placeholder);

    /// Shows or hides the "Diff vs pinned" bar; hiding it leaves diff mode.
    void setDiffAvailable(bool available);
    /// Shows `diff` (a unified diff) in the code's place under `title` (`emptyNote` when the diff
    /// is empty) and checks the toggle.
    void showDiff(const QString& diff, const QString& title, const QString& emptyNote = QString());
    /// Leaves diff mode (the toggle unchecked, the code shown).
    void showCode();
    bool isDiffShown() const;
    CodeDiffView* diffView() const { return m_diff; }
    QToolButton* diffButton() const { return m_diffButton; }

    bool hasModule() const { return m_hasModule; }
    /// Whether the module is CUDA C and the PTX pane is part of the panel.
    bool isCuda() const { return m_cuda; }
    bool hasPtx() const { return m_hasPtx; }
    QString headerText() const;
    QString ptxHeaderText() const;
    /// The module (C++ or CUDA C).
    CodeView* codeView() const { return m_view; }
    /// The PTX (hidden unless isCuda()).
    CodeView* ptxView() const { return m_ptxView; }
    QWidget* ptxPane() const { return m_ptxPane; }
    QSplitter* splitter() const { return m_splitter; }

signals:
    /// The user toggled "Diff vs pinned".
    void diffToggled(bool on);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    /// Gives both pane headers the height of the taller one (CUDA mode), so the texts start level.
    void levelHeaders();
    void showPtxEntry();
    void updateHeader();

    QLabel* m_header;
    QSplitter* m_splitter;
    CodeView* m_view;
    QWidget* m_ptxPane;
    QLabel* m_ptxHeader;
    CodeView* m_ptxView;
    QString m_title;
    QString m_ptxTitle;
    QString m_kernel;
    QString m_entry;
    bool m_hasModule = false;
    bool m_cuda = false;
    bool m_hasPtx = false;
    QWidget* m_diffBar = nullptr;
    QToolButton* m_diffButton = nullptr;
    QStackedWidget* m_stack = nullptr;
    CodeDiffView* m_diff = nullptr;
};

}  // namespace tessera::views
