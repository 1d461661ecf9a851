#pragma once
/// @file
/// The Code dock's content: a header line (which module, which kernel and its line range, or why
/// a node has no code) above a CodeView holding the generated C++ module.
///
/// The app hands it the module text and, when a node is selected, the kernel's line range
/// (CompiledStep::firstLine..lastLine); the panel only draws. Thread rules: UI thread only.

#include <QWidget>

class QLabel;

namespace tessera::views {

class CodeView;

class CodePanel : public QWidget {
    Q_OBJECT
public:
    explicit CodePanel(QWidget* parent = nullptr);

    /// Shows a whole module; `title` describes it, e.g. "dw_pw_block.cpp · 3 kernels · 120 lines".
    void setModule(const QString& source, const QString& title);
    /// Highlights and scrolls to a kernel's lines (1-based, inclusive) of the current module.
    void showKernel(const QString& kernelName, int firstLine, int lastLine);
    /// A note instead of a kernel (e.g. the node ran in the reference interpreter); the module
    /// stays, without highlight.
    void showNote(const QString& note);
    /// Empties the view and shows `placeholder` (e.g. "Run (Ctrl+R) to generate code").
    void clear(const QString& placeholder);

    bool hasModule() const { return m_hasModule; }
    QString headerText() const;
    CodeView* codeView() const { return m_view; }

private:
    QLabel* m_header;
    CodeView* m_view;
    QString m_title;
    bool m_hasModule = false;
};

}  // namespace tessera::views
