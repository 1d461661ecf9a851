#pragma once
/// @file
/// The GUI's document: the state of what the user works on, apart from any widget. It owns the
/// model on screen and the file it came from, the jobs that derive state from it (the loader,
/// the fusion plan with its planner, the run channel; the user schedules are attached once the
/// Task Mapping dock exists), the run options (Check, Reference fallback, target, fed inputs),
/// the Task Mapping expressions last shown, the program text of the Program dock, the run
/// history, the problems of every source, and the one undo stack (the plan's: fusion and
/// schedule edits).
///
/// Views and controllers subscribe to its signals (one fan-out, as RenderDoc's capture viewers
/// do) and change it through its setters; nothing reads state out of another controller's
/// widgets. A project (.tessera) is saved from the Document and restored into it.
///
/// Signals carry no payload beyond what changed: readers ask the Document for the current value.
/// - modelChanged(path): a model was loaded and is the document's now. Every view that shows
///   per-model state resets on it (the run history, the run inputs of another file, the
///   problems of the last run are dropped here before it is emitted).
/// - modelUpdated(): the edited program was parsed again (updateModel): views keep their state
///   but the results of runs of the old model.
/// - loadFailed(path): a load failed; the model stays.
/// - runFinished(ok): a run finished and its outcome is runs()->lastOutcome() (ok = compiled
///   and ran, or compiled only; false for errors and cancellation).
/// - targetChanged(): the target list changed (the device probe answered) or another target
///   was selected.
/// - runOptionsChanged(): Check or Reference fallback changed.
/// - mappingChanged(): the Task Mapping expressions changed (setMapping).
/// - problemsChanged(): the problems of a source changed (plan and schedule problems are the
///   plan session's and schedule controller's and are read through problems() too).
/// - historyChanged(): the run history was seeded (a project) or cleared.
/// - programEdited() / programTextReplaced(text): the Program dock's text was edited / the
///   document asks the Program dock to show `text` as if typed (a project's saved text).
/// - recordShown(): a project's stored run is shown until the next run (shownRecord()).
/// - statusMessage(text, ms), recentFileUsed(path), titleChanged(): requests to the shell.
///
/// Thread rules: UI thread only (the jobs it owns deliver their results on the UI thread).

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <QObject>
#include <QString>
#include <QStringList>

#include "app/gui/run_history.h"
#include "app/gui/run_inputs_dialog.h"
#include "app/gui/run_targets.h"
#include "app/gui/session.h"
#include "core/ir/graph.h"
#include "core/project/project.h"
#include "core/support/diagnostic.h"

class QUndoStack;

namespace tessera::app {

class PlanSession;
class RunSession;
class ScheduleController;
struct RunSettings;

class Document : public QObject {
    Q_OBJECT
public:
    /// Shows a failure to the user: a title and one line per diagnostic (a modal message box by
    /// default in the window; tests replace it).
    using ErrorReporter = std::function<void(const QString& title, const QStringList& lines)>;
    /// Where problems come from (the plan's and the schedules' are read from their owners).
    enum class ProblemSource { Load, Run, Roofs };

    /// `measure` turns a graph snapshot into a layout request (the graph view's fonts).
    explicit Document(Session::MeasureFn measure, QObject* parent = nullptr);
    ~Document() override;

    // The jobs whose results become the document's state.
    Session* loader() const { return m_loader; }
    RunSession* runs() const { return m_runs; }
    PlanSession* plans() const { return m_plans; }
    /// The Task Mapping dock's applied schedules (null until attachSchedules()).
    ScheduleController* schedules() const { return m_schedules; }
    /// Makes `schedules` (created with the Task Mapping panel) part of the document; it follows
    /// the model from now on.
    void attachSchedules(ScheduleController* schedules);
    /// The one undo stack: fusion and schedule edits.
    QUndoStack* undoStack() const;

    // The model.
    std::shared_ptr<const ir::Model> model() const { return m_model; }
    /// The file the model was loaded from ("" before the first load).
    QString path() const { return m_path; }
    /// Makes `model`, loaded from `path`, the document's model: the plan and the schedules follow
    /// it, run inputs chosen for another file and the run history are dropped, the problems of
    /// the last run too (those of the load are `loadDiagnostics`); then modelChanged().
    void setModel(std::shared_ptr<const ir::Model> model, const QString& path, support::DiagnosticList loadDiagnostics);
    /// The program on screen was edited and parsed again (or re-read): the same document with a
    /// new model. A run in progress is cancelled and its problems dropped; the plan and schedules
    /// follow; the run history, the run inputs and the load problems stay. Then modelUpdated().
    void updateModel(std::shared_ptr<const ir::Model> model, const QString& path);
    /// A load failed: its diagnostics become the load problems; then loadFailed().
    void setLoadFailed(const QString& path, support::DiagnosticList diagnostics);

    // Run options.
    bool check() const { return m_check; }
    void setCheck(bool on);
    bool fallbackReference() const { return m_fallback; }
    void setFallbackReference(bool on);
    /// The selectable targets as listed (run_targets.h) and the one selected.
    const std::vector<RunTarget>& targets() const { return m_targets; }
    int currentTargetIndex() const { return m_target; }
    RunTarget currentTarget() const;
    /// Whether the start-up device probe has answered (before, CUDA entries are not listed yet).
    bool targetsProbed() const;
    /// Selects a target by id ("cpu", "cuda:0", "cuda-compile", or "cuda" for the first CUDA
    /// entry; targetIndexFor). Before the probe answered, a CUDA id is remembered and applied
    /// when it does. `remember`: store it in QSettings ("run/target") as the user's choice.
    /// Returns false for an id that is none of these forms.
    bool selectTarget(const QString& id, bool remember = false);
    /// Selects the listed target `index` (the CPU when it is not selectable).
    void setCurrentTargetIndex(int index, bool remember);
    /// Run > Inputs...: the files chosen for the model and the tensors read from them (cleared
    /// when another file is loaded).
    const RunInputFiles& runInputFiles() const { return m_inputFiles; }
    void setRunInputs(RunInputFiles files, RunInputData data);
    /// Reads `files` for the model (readRunInputs) and uses them; the errors, one per file, when
    /// one cannot be used (nothing changes then).
    std::vector<std::string> setRunInputFiles(const RunInputFiles& files);
    /// The settings the next run uses: Check, fallback, target, the plan on screen (or its
    /// planner before the plan is ready), the applied schedules, the Preferences (threads,
    /// compiler, flags, cache folders) read now, and the fed inputs.
    RunSettings runSettings() const;

    // What the views show besides the model.
    /// The Task Mapping expressions last shown (a project keeps them).
    QString mappingGrid() const { return m_mappingGrid; }
    QString mappingBlock() const { return m_mappingBlock; }
    void setMapping(const QString& grid, const QString& block);
    /// The Program dock's text (a `.tsr`'s, edited or not; an ONNX model's DSL print; empty
    /// without a program). The text lives in the editor's text document, with its own undo
    /// history; the Program dock gives the document read access (setProgramTextSource).
    QString programText() const { return m_programSource ? m_programSource() : QString(); }
    void setProgramTextSource(std::function<QString()> source) { m_programSource = std::move(source); }
    /// Called by the Program dock when the user edited the text (programEdited()).
    void noteProgramEdited() { emit programEdited(); }
    /// Asks the Program dock to take `text` as if the user typed it.
    void replaceProgramText(const QString& text);
    /// The text a saved project holds for the program (null when none does).
    QString programHeldByProject() const { return m_programHeld; }
    void setProgramHeldByProject(const QString& text);
    /// The Timings history of this model's runs.
    const RunHistory& runHistory() const { return m_history; }
    /// Adds a finished run to the history (the window does after a timed run).
    void addToHistory(const pipeline::RunReport& report, const RunSettings& settings, const std::string& time);
    /// Replaces the history with `runs` (oldest first; a project's stored runs).
    void seedRunHistory(const std::vector<views::TimingHistoryRun>& runs);
    /// A project's stored run shown in the views until the next run (null: none).
    const std::optional<project::RunRecord>& shownRecord() const { return m_shownRecord; }
    void showRecord(std::optional<project::RunRecord> record);

    // Problems.
    void setProblems(ProblemSource source, support::DiagnosticList diagnostics);
    void appendProblems(ProblemSource source, const support::DiagnosticList& diagnostics);
    /// Every problem, in the order load, run, plan, schedules, roofs.
    support::DiagnosticList problems() const;

    // Requests to the shell.
    void setErrorReporter(ErrorReporter reporter) { m_reportError = std::move(reporter); }
    void reportError(const QString& title, const QStringList& lines) const;
    void showMessage(const QString& text, int timeoutMs) { emit statusMessage(text, timeoutMs); }
    void noteRecentFile(const QString& path) { emit recentFileUsed(path); }

signals:
    void modelChanged(const QString& path);
    void modelUpdated();
    void loadFailed(const QString& path);
    void runFinished(bool ok);
    void targetChanged();
    void runOptionsChanged();
    void mappingChanged();
    void problemsChanged();
    void historyChanged();
    void programEdited();
    void programTextReplaced(const QString& text);
    void programHeldChanged();
    void recordShown();
    void statusMessage(const QString& text, int timeoutMs);
    void recentFileUsed(const QString& path);

private:
    void onDevicesProbed();

    Session* m_loader;
    RunSession* m_runs;
    PlanSession* m_plans;
    ScheduleController* m_schedules = nullptr;
    std::shared_ptr<const ir::Model> m_model;
    QString m_path;
    bool m_check = true;
    bool m_fallback = true;
    std::vector<RunTarget> m_targets;
    int m_target = 0;
    QString m_pendingTarget;  ///< a CUDA target asked for before the probe answered
    RunInputFiles m_inputFiles;
    RunInputData m_inputData;
    QString m_mappingGrid, m_mappingBlock;
    std::function<QString()> m_programSource;
    QString m_programHeld;
    RunHistory m_history;
    std::optional<project::RunRecord> m_shownRecord;
    support::DiagnosticList m_loadProblems, m_runProblems, m_roofProblems;
    ErrorReporter m_reportError;
};

}  // namespace tessera::app
