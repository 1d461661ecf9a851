#pragma once
/// @file
/// The Program dock and Live mode.
///
/// View > Program (Ctrl+E) shows the document's program as DSL text in a views::ProgramEditor: a
/// `.tsr` editable, an ONNX model printed as DSL read-only with a banner. 250 ms after the last
/// edit the text is parsed again (Session::loadText); a program that parses replaces the
/// document's model (Document::updateModel; the graph keeps its zoom, centre and selected node),
/// one that does not keeps the last good model and shows its errors inline, in Problems and in
/// the status bar's stage line. A click on a problem with a line jumps there. Selecting a node
/// highlights its statement, clicking a statement selects its node.
///
/// File > Save Program (Ctrl+Alt+S) / Save Program As (Ctrl+Alt+Shift+S); opening another file
/// (maybeSaveProgram) or closing the window asks about unsaved program text.
///
/// Run > Live (Ctrl+L, also on the toolbar): 250 ms after a change of the program, the fusion
/// plan, the schedules, the run options or the target, liveRunRequested() asks for a run (the
/// same model, plan, schedules, target and options as the last live run ask for none); failures
/// go to the status bar and Problems, never a dialog.
///
/// The document reads the text through Document::programText() and replaces it through
/// Document::replaceProgramText() (a project's saved text).
///
/// Signals:
/// - programParsed(ok): edited text was parsed (ok: the document's model is the text's; else its
///   errors are shown and the model stays).
/// - liveRunRequested(): Live asks for a run of the document's model with its current settings.
/// - programSavedAs(path): the program was saved under another name and the document's model is
///   now that file's (the shell titles the window after it).
///
/// Thread rules: UI thread only.

#include <cstdint>
#include <functional>
#include <utility>

#include <QObject>
#include <QString>

class QAction;
class QDockWidget;
class QLabel;
class QListWidget;
class QMainWindow;
class QMenu;
class QTimer;
class QToolBar;

namespace tessera::views {
class GraphView;
class ProgramEditor;
class ProgramPanel;
class PropertiesPanel;
}  // namespace tessera::views

namespace tessera::app {

class Document;
struct LoadOutcome;

/// The parts of the window the Program dock and Live work with.
struct ProgramShell {
    /// Holds the Program dock (left area) and parents the dialogs; its closing asks about
    /// unsaved program text.
    QMainWindow* window = nullptr;
    /// Shows each parsed program; its selection is linked with the statements.
    views::GraphView* graph = nullptr;
    /// Takes each parsed model before the graph selects a node of it.
    views::PropertiesPanel* properties = nullptr;
    /// Problems whose items carry their file, line and column (Qt::UserRole, +1, +2).
    QListWidget* problems = nullptr;
    /// The status bar's stage line: the parse errors while the text does not parse.
    QLabel* stageLabel = nullptr;
    QMenu* fileMenu = nullptr;   ///< gets Save Program and Save Program As before its last separator
    QMenu* viewMenu = nullptr;   ///< gets the Program dock's toggle
    QMenu* runMenu = nullptr;    ///< gets Live after `stopAction`
    QToolBar* toolBar = nullptr;  ///< gets Live after `stopAction`
    QAction* stopAction = nullptr;
};

class ProgramController : public QObject {
    Q_OBJECT
public:
    /// Shows `doc`'s program in a dock of `shell.window` and adds the actions to the shell's
    /// menus. Live follows the document's schedules when they are attached already.
    ProgramController(Document* doc, const ProgramShell& shell, QObject* parent = nullptr);
    ~ProgramController() override;

    /// The Welcome dock: a program shown beside it (same area) becomes a tab with it, in front,
    /// instead of splitting the area's height.
    void setWelcomeDock(QDockWidget* dock) { m_welcomeDock = dock; }

    views::ProgramPanel* programPanel() const { return m_panel; }
    views::ProgramEditor* programEditor() const;
    QDockWidget* programDock() const { return m_dock; }
    /// The program text on screen (a `.tsr`'s, edited or not; an ONNX model's DSL print; empty
    /// without a model).
    QString programText() const;
    /// Whether the program text has edits that are saved nowhere: neither in its .tsr nor in the
    /// saved project that holds it (Document::programHeldByProject). Closing and opening ask
    /// about these.
    bool programModified() const;
    /// Whether the program text differs from its .tsr on disk (also when a project holds it:
    /// then the Program dock's title says so, and nothing asks).
    bool programDiffersFromFile() const;
    /// The `.tsr` the program is saved to (empty for an ONNX model's print).
    QString programPath() const { return m_path; }
    /// Replaces the program text as if the user typed it (modified; parsed after the debounce).
    /// Does nothing for a read-only (exported) program.
    void setProgramText(const QString& text);
    /// File > Save Program: writes the text to programPath() (Save As when there is none).
    bool saveProgram();
    /// Writes the program to `path` (a dialog when empty) and opens it there as a program (an
    /// exported ONNX model becomes an editable program; its weights are referenced relative to
    /// the new folder). False when cancelled or the file cannot be written (reported through
    /// Document::reportError).
    bool saveProgramAs(const QString& path = QString());
    /// Asks whether to save unsaved program edits (Save / Discard / Cancel). Returns false when
    /// the user cancelled or saving failed; true otherwise (also when nothing was modified).
    bool maybeSaveProgram();
    enum class SaveChoice { Save, Discard, Cancel };
    using SavePrompt = std::function<SaveChoice(const QString& fileName)>;
    /// Replaces the question maybeSaveProgram() asks (a message box by default; tests).
    void setSavePrompt(SavePrompt prompt) { m_savePrompt = std::move(prompt); }
    QAction* saveProgramAction() const { return m_saveAction; }
    QAction* saveProgramAsAction() const { return m_saveAsAction; }
    /// Run > Live (Ctrl+L), also on the toolbar.
    QAction* liveAction() const { return m_liveAction; }
    bool isLive() const;
    void setLive(bool on);

signals:
    void programParsed(bool ok);
    void liveRunRequested();
    void programSavedAs(const QString& path);

protected:
    /// Asks about unsaved program text when the window is about to close (maybeSaveProgram).
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void onProgramLoaded(bool ok);
    void onProgramEdited();
    void parseProgramNow();
    void onProgramParsed(quint64 generation, bool ok);
    void showProgramModel(const LoadOutcome& out);
    void onStatementActivated(int index);
    void highlightNode(int nodeId);
    void jumpToProblem(const QString& file, int line, int column);
    void updateTitle();
    void scheduleLive();
    void runLive();

    Document* m_doc;
    ProgramShell m_shell;
    QDockWidget* m_welcomeDock = nullptr;
    views::ProgramPanel* m_panel;
    QDockWidget* m_dock;
    QAction* m_saveAction;
    QAction* m_saveAsAction;
    QAction* m_liveAction;
    QTimer* m_parseTimer;
    QTimer* m_liveTimer;
    QString m_path;
    bool m_exported = false;
    bool m_shownOnce = false;
    std::uint64_t m_signature = 0;
    QString m_liveKey;
    SavePrompt m_savePrompt;
};

}  // namespace tessera::app
