#pragma once
/// @file
/// The window's `.tessera` projects (issue 8; core/project/project.h holds the file format).
///
/// What a project restores: its source (an ONNX model, or a DSL program whose text is saved in
/// the project: when it differs from the .tsr, the Program dock gets it as unsaved edits), the fusion plan on
/// screen (PlanSession::setInitialState, checked against the model like a saved plan), the planner
/// and hardware, the target, Check and Reference-fallback, the kernel mappings applied from the
/// Task Mapping dock (ScheduleController::restore; compiled with), the expressions last shown
/// there, and the history
/// of runs, whose last run of the project's target fills the Timings dock until the next run.
///
/// Actions (File menu): Save Project (Ctrl+S), Save Project As... (Ctrl+Shift+S); File > Open,
/// Open Recent and drag-and-drop accept .tessera files (MainWindow::openFile routes them here
/// through interceptOpen()).
///
/// The window always holds a project: opening a model or program makes an untitled one. The
/// title is "<project or model file name>[*] — Tessera" and windowModified is set while the plan's
/// undo stack is not at its saved (clean) index, or, for a project with a file, after a run was
/// added to its history or the target or run options changed. An untitled project counts only
/// plan edits as changes (viewing and running models asks nothing on close).
///
/// Unsaved changes: closing the window or opening another file asks Save / Discard / Cancel
/// (UnsavedPrompt, injectable for tests; a QMessageBox by default). Save of an untitled project
/// asks for a file (SavePathPrompt). A project of a newer version opens read-only: a message
/// says so and Save is disabled (Save As writes a version-1 copy). A corrupt project is reported
/// through the window's ErrorReporter, the file is not touched and the model on screen stays.
///
/// Autosave: every autosaveInterval() (60 s) while modified, the project is written to
/// `<AppDataLocation>/autosave/autosave-<pid>.tessera` with `autosave-<pid>.json` beside it
/// naming the project file it belongs to; both are removed on a clean save and when the window
/// closes. checkForRecovery() (called by main() at start) finds autosaves of instances that are
/// no longer running and offers to recover the newest (RecoverPrompt): recovered, it opens as
/// the project it belonged to (or untitled), marked modified; declined, it is deleted.
///
/// Thread rules: UI thread only.

#include <functional>
#include <optional>

#include <QObject>
#include <QPointer>
#include <QString>

#include "app/gui/plan_session.h"
#include "app/gui/run_targets.h"
#include "core/project/project.h"

class QAction;
class QMenu;
class QTimer;

namespace tessera::app {

class Document;

class ProjectController : public QObject {
    Q_OBJECT
public:
    enum class UnsavedChoice { Save, Discard, Cancel };
    /// Asks what to do with unsaved changes of the project named `name`.
    using UnsavedPrompt = std::function<UnsavedChoice(const QString& name)>;
    /// Asks where to save (Save As); `suggested` is a proposal; "" = cancelled.
    using SavePathPrompt = std::function<QString(const QString& suggested)>;
    /// Offers to recover an autosave; `original` is the project it belonged to ("" = untitled),
    /// `savedAt` its modification time. true = recover.
    using RecoverPrompt = std::function<bool(const QString& original, const QString& savedAt)>;
    /// Shows an information message (read-only projects, changed sources).
    using Informer = std::function<void(const QString& title, const QString& text)>;

    /// Saves and restores `doc`. Adds its actions to `fileMenu` (before its last separator) and
    /// to `window`, whose title and modified flag it keeps and whose closing it may refuse
    /// (unsaved changes); dialogs open over `window`.
    ProjectController(Document* doc, QWidget* window, QMenu* fileMenu);
    ~ProjectController() override;

    /// The project file ("" for an untitled project).
    QString projectPath() const { return m_projectPath; }
    /// The project as last opened or saved, with the runs recorded since.
    const project::Project& project() const { return m_project; }
    /// The project as it would be saved now (plan, target and options from the window).
    project::Project currentProject() const;
    bool isModified() const;
    bool isReadOnly() const { return m_readOnly; }
    QAction* saveAction() const { return m_saveAction; }
    QAction* saveAsAction() const { return m_saveAsAction; }

    /// Opens a project file (asynchronously: the source loads like any model; projectOpened()
    /// follows). Returns false when the file is reported as unusable (then nothing changes).
    bool openProject(const QString& path);
    /// Save Project: to the project's file, or Save As for an untitled or read-only project.
    bool save();
    /// Saves to `path` (asked through SavePathPrompt when empty). false when cancelled or failed
    /// (reported).
    bool saveAs(const QString& path = QString());
    /// Called by MainWindow::openFile before a load: opens .tessera files itself (returns false:
    /// nothing more to do), asks about unsaved changes before another file (false = cancelled).
    bool interceptOpen(const QString& path);
    /// Asks about unsaved changes when there are any; true = go on (saved or discarded).
    bool maybeSave();

    /// Writes the autosave file now when the project is modified; returns its path ("" = none written).
    QString autosaveNow();
    /// `<AppDataLocation>/autosave`.
    static QString autosaveDir();
    /// This instance's autosave file.
    QString autosavePath() const;
    int autosaveInterval() const;
    void setAutosaveInterval(int ms);
    /// See the file comment. Returns true when a project was recovered.
    bool checkForRecovery();

    void setUnsavedPrompt(UnsavedPrompt prompt) { m_unsavedPrompt = std::move(prompt); }
    void setSavePathPrompt(SavePathPrompt prompt) { m_savePathPrompt = std::move(prompt); }
    void setRecoverPrompt(RecoverPrompt prompt) { m_recoverPrompt = std::move(prompt); }
    void setInformer(Informer informer) { m_inform = std::move(informer); }
    /// Where a DSL project's text comes from when saved: Document::programText() (the Program
    /// dock, edits included) unless replaced; without a provider the file's text is saved.
    void setProgramTextProvider(std::function<QString()> provider) { m_programText = std::move(provider); }

signals:
    /// A project was opened and its source shown (plan restoring may still be under way).
    void projectOpened(const QString& path);
    void projectSaved(const QString& path);
    /// The modified state or the title changed.
    void modifiedChanged(bool modified);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void onModelShown(const QString& path);
    void onLoadFailed(const QString& path);
    void onRunFinished(bool ok);
    void applyPending();
    /// Seeds the run history with the stored runs and shows the last one (Document::showRecord).
    void showLastRun();
    /// A saved DSL project's program text differs from the editor's.
    bool programChanged() const;
    void markDirty();
    /// The window's target is the project's (or what the project's resolves to on this machine).
    bool targetIsSaved() const;
    /// Target, Check or Reference fallback differ from the project's (projects with a file only).
    bool settingsChanged() const;
    void updateTitle();
    void removeAutosave();
    void reportError(const QString& title, const QStringList& lines);

    Document* m_doc;
    QWidget* m_window;
    /// Null once the plan session is being destroyed: its undo stack still emits cleanChanged
    /// from its destructor, when the window's own members are gone.
    QPointer<PlanSession> m_plans;
    QAction* m_saveAction = nullptr;
    QAction* m_saveAsAction = nullptr;
    QTimer* m_autosave = nullptr;
    project::Project m_project;
    QString m_projectPath;
    bool m_readOnly = false;
    bool m_dirty = false;
    bool m_applying = false;
    /// A project whose source is loading.
    std::optional<project::LoadedProject> m_pending;
    support::DiagnosticList m_pendingWarnings;
    PlanState m_pendingState;
    QString m_pendingSource;
    /// After recovery: the project path to adopt and that it starts modified.
    std::optional<QString> m_recoveredPath;
    UnsavedPrompt m_unsavedPrompt;
    SavePathPrompt m_savePathPrompt;
    RecoverPrompt m_recoverPrompt;
    Informer m_inform;
    std::function<QString()> m_programText;
};

}  // namespace tessera::app
