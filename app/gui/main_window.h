#pragma once
/// @file
/// Tessera's main window: the graph view in the centre, the properties panel, a Problems list
/// and the task-mapping visualizer (View > Task Mapping, Ctrl+M) in docks, File/View menus, recent files, drag-and-drop of .onnx files and a status bar
/// (node count, import/layout time, warnings, progress with Cancel).
///
/// Loading goes through a Session (import and layout off the UI thread); a failed load reports
/// its diagnostics through the error reporter (a modal message box unless replaced, e.g. by
/// tests) and the model shown before stays.
///
/// Targets: the Run toolbar's combo box and Run > Target (kept in step) choose where Run sends the
/// model (run_targets.h): the CPU, a CUDA device, or, without a driver or device, CUDA compile only
/// (CUDA C and PTX, nothing run). The devices are probed once at start-up on the run worker; the
/// list fills in when the answer comes. The choice is stored in QSettings ("run/target") and shown
/// in the status bar. For CUDA the Code dock shows the CUDA C and, beside it, NVRTC's PTX; a node's
/// kernel is highlighted in both (its lines by the source map, its `.entry` in the PTX).
///
/// Running goes through a RunSession (Run > Run (CPU), Ctrl+R; Stop, Esc): compile, JIT, run,
/// time and check on a worker thread, kernels in tessera-runner. Meanwhile the status bar shows
/// the stage and a progress bar with Cancel; when the compile is done the Code dock shows the
/// generated C++ and the graph colours operators by kernel status (views/graph/kernel_status.h);
/// when the run is done the Timings dock lists every kernel. Selecting a node highlights its
/// kernel's lines in the Code dock and its row in the Timings dock, and selecting a row selects
/// the node. A failed run (compiler missing, a kernel that crashed) is reported in the status bar
/// and the Problems dock (never modal); a newly loaded model cancels a run in progress.
///
/// Fusion plans (issue 6; main_window_fusion.cpp): the Fusion Plan dock (View > Fusion Plan,
/// Ctrl+Shift+P; views::FusionPlanPanel) shows the plan of the open model held by a PlanSession;
/// the graph draws its fused groups as clusters. Fuse (Ctrl+G) merges the selected nodes' groups,
/// Split (Ctrl+Shift+G) splits the selected node's group; Edit > Undo/Redo walk the plan's
/// history. A refused fusion shows its reason next to the node, in the status bar and in the
/// Problems dock. Runs compile with the plan on screen (RunSettings::compile.plan); afterwards
/// the plan table lists each group's measured time. Selecting a row selects the group's nodes
/// (its anchor's kernel in Code/Timings), selecting a node selects its group's row.
///
/// Program dock and Live mode (main_window_program.cpp): View > Program (Ctrl+E) shows the open
/// program's DSL text in a views::ProgramEditor: a `.tsr` editable, an ONNX model printed as DSL
/// read-only with a banner. 250 ms after the last edit the text is re-parsed (Session::loadText);
/// a program that parses replaces the model on screen (the graph keeps its zoom and centre), one
/// that does not keeps the last good model and shows its errors inline and in Problems (a click
/// there jumps to line:column). Selecting a node highlights its statement, clicking a statement
/// selects its node. File > Save Program (Ctrl+Alt+S) / Save Program As (Ctrl+Alt+Shift+S);
/// opening another file or closing the window asks about unsaved program text. Run > Live
/// (Ctrl+L): 250 ms after a change of the program, the fusion plan or the target the model is
/// compiled and run again (a newer run supersedes an older one); failures go to the status bar
/// and Problems, never a dialog.
///
/// Thread rules: UI thread only.

#include <functional>
#include <memory>

#include <QMainWindow>
#include <QPointer>
#include <QStringList>

#include <vector>

#include "app/gui/eta_estimator.h"
#include "app/gui/run_history.h"
#include "app/gui/run_inputs_dialog.h"
#include "app/gui/run_targets.h"
#include "core/ir/graph.h"
#include "core/support/diagnostic.h"

class QAction;
class QActionGroup;
class QComboBox;
class QDockWidget;
class QLabel;
class QListWidget;
class QMenu;
class QProgressBar;
class QTabWidget;
class QTimer;
class QToolButton;
class QUndoStack;

namespace tessera::views {
class CodePanel;
class EnergyView;
class FusionPlanPanel;
class GraphView;
class MappingPanel;
class ProgramEditor;
class ProgramPanel;
class PropertiesPanel;
class RooflineView;
class TimingPanel;
}  // namespace tessera::views

namespace tessera::pipeline {
struct CompiledModel;
struct RunReport;
}

namespace tessera::runtime::cuda {
struct CudaCompiled;
}

namespace tessera::app {

class CheckController;
class Document;
class CompareController;
class AboutDialog;
class DocWindow;
class SettingsDialog;
class ShortcutsDialog;
class WelcomePanel;
struct RunSettings;
class PlanSession;
class ProjectController;
class RoofSession;
class RunSession;
class ScheduleController;
class Session;
struct LoadOutcome;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    /// Shows a load failure: a title and one line per diagnostic.
    using ErrorReporter = std::function<void(const QString& title, const QStringList& lines)>;

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Starts loading a model (asynchronously); supersedes a load in progress.
    void openFile(const QString& path);
    void setErrorReporter(ErrorReporter reporter);

    /// The state under the window: model, plan, schedules, run options, history, undo stack.
    Document* document() const { return m_doc; }
    Session* session() const;
    views::GraphView* graphView() const { return m_view; }
    views::PropertiesPanel* propertiesPanel() const { return m_properties; }
    QListWidget* problemsList() const { return m_problems; }
    views::MappingPanel* mappingPanel() const { return m_mapping; }
    QDockWidget* mappingDock() const { return m_mappingDock; }
    /// Shows and raises the task-mapping dock with the given expressions (blank block = one level).
    void showMapping(const QString& grid, const QString& block = QString());
    RunSession* runSession() const;
    views::CodePanel* codePanel() const { return m_code; }
    views::TimingPanel* timingPanel() const { return m_timing; }
    QDockWidget* codeDock() const { return m_codeDock; }
    QDockWidget* timingDock() const { return m_timingDock; }
    /// The Roofline dock (below Code; View > Roofline): the roofs of the profile saved for this CPU,
    /// or for the CUDA device (perf::findProfileFor; a banner otherwise), from the start and on each
    /// model shown; after each run every kernel's dot is added (pipeline::kernelSamples) against
    /// the roofs of the target that ran; clicking a dot selects the node, and selecting a node
    /// highlights its dot. A newly loaded model clears the dots.
    views::RooflineView* rooflineView() const { return m_roofline; }
    /// The dock's second tab, "Energy" (first: "Performance"): GFLOP/J per kernel from the run's
    /// NVML energy (views::kernelEnergies), in the same chart mode as the roofline (the two mode
    /// boxes follow each other) and with the same selection linking.
    views::EnergyView* energyView() const { return m_energy; }
    QTabWidget* rooflineTabs() const { return m_rooflineTabs; }
    /// The fusion-plan controller, its dock and panel (see the file comment).
    PlanSession* planSession() const;
    views::FusionPlanPanel* fusionPanel() const { return m_fusionPanel; }
    QDockWidget* fusionDock() const { return m_fusionDock; }
    /// User schedules: the Task Mapping dock's Apply (Ctrl+Return) / Reset to Default, undoable
    /// on the plan's undo stack and compiled with by the next run (schedule_controller.h).
    ScheduleController* scheduleController() const;
    QAction* undoAction() const { return m_undoAction; }
    QAction* redoAction() const { return m_redoAction; }
    /// Shows and raises the Fusion Plan dock.
    void showFusionPlan();
    QDockWidget* rooflineDock() const { return m_rooflineDock; }
    /// The Check dock's controller (check_controller.h: error heatmap of failing kernels).
    CheckController* checkController() const { return m_check; }
    /// Run > Pin Run / Unpin and the comparison views (compare_controller.h).
    CompareController* compareController() const { return m_compare; }
    /// .tessera projects: File > Save Project (Ctrl+S) / Save Project As (Ctrl+Shift+S), the title,
    /// unsaved-changes prompts, autosave and recovery (project_controller.h).
    ProjectController* projectController() const { return m_project; }
    QAction* runAction() const { return m_runAction; }
    QAction* stopAction() const { return m_stopAction; }
    /// Run > Check against Reference (checked by default).
    QAction* checkAction() const { return m_checkAction; }
    /// Run > Reference Interpreter for Unsupported Ops (checked by default).
    QAction* fallbackAction() const { return m_fallbackAction; }
    /// The target selector in the Run toolbar (objectName "targetCombo") and Run > Target.
    QComboBox* targetCombo() const { return m_targetCombo; }
    QMenu* targetMenu() const { return m_targetMenu; }
    /// The selectable targets as listed (see run_targets.h) and the one selected.
    const std::vector<RunTarget>& targets() const;
    RunTarget currentTarget() const;
    /// Whether the start-up device probe has answered (before, CUDA entries are not listed yet).
    bool targetsProbed() const;
    /// Selects a target by id ("cpu", "cuda:0", "cuda-compile", or "cuda" for the first CUDA
    /// entry; see targetIndexFor). Before the probe answered, a CUDA id is remembered and applied
    /// when it does. `remember`: store it in QSettings as the user's choice. Returns false for an
    /// id that is none of these forms.
    bool selectTarget(const QString& id, bool remember = false);
    /// The status bar's target line ("Target: CPU").
    QString targetStatusText() const;
    /// Starts a run of the model on screen (does nothing but say so without a model).
    void startRun();
    /// Cancels the run in progress.
    void stopRun();
    /// Run > Inputs...: input .npy files to feed and outputs to compare (RunInputsDialog).
    void showRunInputs();
    /// The files chosen in Run > Inputs... for the model on screen (cleared when another model opens).
    const RunInputFiles& runInputFiles() const;
    /// Sets the run's input and expected-output files as the dialog would (reads them now); the
    /// errors, one per file, when one cannot be used (nothing is changed then).
    std::vector<std::string> setRunInputFiles(const RunInputFiles& files);
    /// The run's line in the status bar (stage while running, the result after).
    QString runStatusText() const;

    // The Program dock and Live mode (main_window_program.cpp; see the file comment).
    views::ProgramPanel* programPanel() const { return m_programPanel; }
    views::ProgramEditor* programEditor() const;
    QDockWidget* programDock() const { return m_programDock; }
    /// The program text in the Program dock (a `.tsr`'s, edited or not; an ONNX model's DSL
    /// print; empty without a model).
    QString programText() const;
    /// Whether the program text has edits that are saved nowhere: neither in its .tsr nor in the
    /// saved project that holds it (setProgramHeldByProject). Closing and opening ask about these.
    bool programModified() const;
    /// Whether the program text differs from its .tsr on disk (also when a project holds it:
    /// then the Program dock's title says so, and nothing asks).
    bool programDiffersFromFile() const;
    /// The text the saved project holds for this program (ProjectController, after saving or
    /// opening a DSL project); a null string when no saved project holds it.
    void setProgramHeldByProject(const QString& text);
    /// The `.tsr` the program is saved to (empty for an ONNX model's print).
    QString programPath() const { return m_programPath; }
    /// Replaces the program text as if the user typed it (modified; re-parsed after the
    /// debounce). Does nothing for a read-only (exported) program.
    void setProgramText(const QString& text);
    /// File > Save Program: writes the text to programPath() (Save As when there is none).
    bool saveProgram();
    /// Writes the program to `path` (a dialog when empty) and opens it there as a program (an
    /// exported ONNX model becomes an editable program; its weights are referenced relative to
    /// the new folder). False when cancelled or the file cannot be written (reported).
    bool saveProgramAs(const QString& path = QString());
    /// Asks whether to save unsaved program edits (Save / Discard / Cancel). Returns false when
    /// the user cancelled or saving failed; true otherwise (also when nothing was modified).
    bool maybeSaveProgram();
    enum class SaveChoice { Save, Discard, Cancel };
    using SavePrompt = std::function<SaveChoice(const QString& fileName)>;
    /// Replaces the question maybeSaveProgram() asks (a message box by default; tests).
    void setSavePrompt(SavePrompt prompt);
    QAction* saveProgramAction() const { return m_saveProgramAction; }
    QAction* saveProgramAsAction() const { return m_saveProgramAsAction; }
    /// Run > Live (Ctrl+L), also on the toolbar.
    QAction* liveAction() const { return m_liveAction; }
    bool isLive() const;
    void setLive(bool on);

    // Desktop conventions (issue 8; main_window_conventions.cpp).
    /// The settings Run uses now: the Run menu's switches, the target, the plan on screen and the
    /// Preferences (app_settings.h: threads, compiler, extra flags, cache folders).
    RunSettings currentRunSettings() const;
    /// At start-up. On the first run (QSettings "welcome/firstRunDone" unset) shows the Welcome dock
    /// and, when `openSample` (no file was named), opens the MobileNetV2 sample. Later runs show
    /// the dock without a file unless "Don't show this at start-up" was ticked, and hide it when a
    /// file was named. Returns true when it started loading the sample.
    bool startFirstRun(bool openSample = true);
    /// Restores the window geometry and dock arrangement saved when the window last closed
    /// (QSettings "window/geometry", "window/state", layout version 1).
    void restoreLayout();
    bool hasSavedLayout() const;
    void saveLayout() const;
    /// Edit > Preferences... (Ctrl+, where the desktop has no Preferences key): window-modal.
    void showPreferences();
    /// Help > DSL Guide (F1) / Fusion Guide: the embedded guide ("dsl.md", "fusion.md") in a
    /// non-modal window.
    void showDoc(const QString& fileName);
    /// Help > Keyboard Shortcuts.
    void showShortcuts();
    /// Help > About Tessera.
    void showAbout();
    /// Help > Welcome.
    void showWelcome();
    WelcomePanel* welcomePanel() const { return m_welcome; }
    QDockWidget* welcomeDock() const { return m_welcomeDock; }
    QAction* preferencesAction() const { return m_preferencesAction; }
    QMenu* helpMenu() const { return m_helpMenu; }
    /// The open dialogs and guide window (null when closed).
    SettingsDialog* preferencesDialog() const;
    ShortcutsDialog* shortcutsDialog() const;
    AboutDialog* aboutDialog() const;
    DocWindow* docWindow() const;

    /// The model on screen (null before the first successful load).
    std::shared_ptr<const ir::Model> model() const;
    // Run > Measure Roofs (main_window_roofs.cpp): the GUI twin of `tessera-cli roofline measure
    // --target cpu --save`, on RoofSession's worker, with progress and Cancel in the status bar.
    /// Starts measuring this CPU's roofs (supersedes a measurement in progress).
    void measureRoofs();
    /// Cancels the measurement in progress; nothing is saved.
    void cancelRoofMeasurement();
    QAction* measureRoofsAction() const { return m_measureRoofsAction; }
    RoofSession* roofSession() const { return m_roofSession; }
    /// Asked before saving roofs with consistency problems (perf::roofConsistencyProblems); true
    /// saves anyway. A message box by default; tests replace it.
    using RoofSavePrompt = std::function<bool(const QStringList& problems)>;
    void setRoofSavePrompt(RoofSavePrompt prompt) { m_roofSavePrompt = std::move(prompt); }

    QString currentPath() const;
    QStringList recentFiles() const;

    static constexpr int kMaxRecent = 10;

signals:
    /// A model was loaded and drawn.
    void modelShown(const QString& path);
    /// A load failed (after the error was reported).
    void loadFailed(const QString& path);
    /// A run finished (ok = compiled, ran and, when checked, every kernel passed or not:
    /// ok is false only for errors and cancellation) and its results are on screen.
    void runFinished(bool ok);
    /// The target list changed (the device probe answered) or another target was selected.
    void targetChanged();
    /// A roof measurement ended: `savedPath` is the profile written (empty when it failed, was
    /// cancelled or the user declined to save a disturbed one).
    void roofMeasurementFinished(const QString& savedPath);
    /// Edited program text was parsed (ok: the graph shows it; else its errors are shown).
    void programParsed(bool ok);

protected:
    /// Saves the layout (saveLayout) when the window closes.
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void createDocks();
    void createStatusBar();
    void onLoadStarted(quint64 generation, const QString& path);
    void onStage(quint64 generation, const QString& stage);
    void onLoadFinished(quint64 generation, bool ok);
    void onNodeSelected(int nodeId);
    void showKernelSchedule(ir::NodeId node);
    void showProblems();
    void createRunDocks();
    void createRooflineDock();
    /// Feeds the Roofline dock the kernels of a finished run (and the roofs of its target).
    void showRoofline(const pipeline::RunReport& report);
    void onRunStarted(quint64 generation);
    void onRunProgress(quint64 generation, double fraction, const QString& stage);
    void onRunCompiled(quint64 generation);
    void onCudaCompiled(quint64 generation);
    /// Fills the combo box and the Target menu from the document's targets (when they changed)
    /// and shows the one selected.
    void onTargetChanged();
    /// A project's stored run in Timings, the plan table and the roofline (Document::shownRecord).
    void showRecord();
    void showRecordPlanTimes();
    /// Shows the compiled model in the Code dock (C++, or CUDA C with a PTX pane).
    void showCompiledCode();
    void showPtx();
    void onRunFinished(bool ok);
    void setRunBusy(bool busy);
    void setRunMessage(const QString& text, bool error);
    /// Code and timing row for the selected node (after a compile).
    void showNodeResults(int nodeId);
    void onKernelRowSelected(const QString& name);
    // Fusion plans (main_window_fusion.cpp).
    void createFusionDock();
    void onPlanChanged();
    void onPlanRefused(const QString& node, const QString& message);
    void onPlanGroupSelected(const QString& group, const QStringList& members);
    void selectPlanGroupOfNode(int nodeId);
    /// The measured time of each group of a finished run, into the plan table.
    void showPlanTimings(const pipeline::RunReport& report);
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    void setBusy(bool busy);
    void openDialog();

    Document* m_doc;
    views::GraphView* m_view;
    views::PropertiesPanel* m_properties;
    QListWidget* m_problems = nullptr;
    QDockWidget* m_propertiesDock = nullptr;
    QDockWidget* m_problemsDock = nullptr;
    views::MappingPanel* m_mapping = nullptr;
    QDockWidget* m_mappingDock = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QLabel* m_stageLabel = nullptr;
    QLabel* m_nodesLabel = nullptr;
    QLabel* m_timeLabel = nullptr;
    QLabel* m_zoomLabel = nullptr;
    QToolButton* m_problemsButton = nullptr;
    QProgressBar* m_progress = nullptr;
    QToolButton* m_cancelButton = nullptr;
    QString m_loadingPath;

    views::CodePanel* m_code = nullptr;
    views::TimingPanel* m_timing = nullptr;
    QDockWidget* m_codeDock = nullptr;
    QDockWidget* m_timingDock = nullptr;
    views::RooflineView* m_roofline = nullptr;
    views::EnergyView* m_energy = nullptr;
    QTabWidget* m_rooflineTabs = nullptr;
    QDockWidget* m_rooflineDock = nullptr;
    QAction* m_runAction = nullptr;
    QAction* m_stopAction = nullptr;
    QAction* m_checkAction = nullptr;
    QAction* m_fallbackAction = nullptr;
    QAction* m_inputsAction = nullptr;
    QComboBox* m_targetCombo = nullptr;
    QMenu* m_targetMenu = nullptr;
    QActionGroup* m_targetGroup = nullptr;
    QLabel* m_targetLabel = nullptr;
    QLabel* m_runLabel = nullptr;
    QProgressBar* m_runProgress = nullptr;
    EtaEstimator m_runEta;    ///< "about 20 s left" after the run's stage text
    QToolButton* m_runCancel = nullptr;
    bool m_runDocksShown = false;
    /// The compiled model whose code and statuses are on screen (null when none).
    std::shared_ptr<const pipeline::CompiledModel> m_compiled;
    /// The NVRTC result whose PTX is on screen (null when none).
    std::shared_ptr<const runtime::cuda::CudaCompiled> m_cudaModule;

    views::FusionPlanPanel* m_fusionPanel = nullptr;
    QDockWidget* m_fusionDock = nullptr;
    QAction* m_undoAction = nullptr;
    QAction* m_redoAction = nullptr;
    ProjectController* m_project = nullptr;
    void createScheduleController();  // main_window_schedules.cpp

    QMenu* m_runMenu = nullptr;
    CheckController* m_check = nullptr;
    CompareController* m_compare = nullptr;

    // The Program dock and Live mode (main_window_program.cpp).
    void createProgramDock();
    void onProgramLoaded(bool ok);
    void onProgramEdited();
    void parseProgramNow();
    void onProgramParsed(quint64 generation, bool ok);
    void showProgramModel(const LoadOutcome& out);
    void onProgramStatementActivated(int index);
    void highlightProgramNode(int nodeId);
    void jumpToProblem(const QString& file, int line, int column);
    void updateProgramTitle();
    void scheduleLive();
    void runLive();
    views::ProgramPanel* m_programPanel = nullptr;
    QDockWidget* m_programDock = nullptr;
    QAction* m_saveProgramAction = nullptr;
    QAction* m_saveProgramAsAction = nullptr;
    QAction* m_liveAction = nullptr;
    QTimer* m_programTimer = nullptr;
    QTimer* m_liveTimer = nullptr;
    QString m_programPath;
    bool m_programExported = false;
    bool m_programShownOnce = false;
    std::uint64_t m_programSignature = 0;
    QString m_liveKey;
    SavePrompt m_savePrompt;

    // Roof measurement (main_window_roofs.cpp).
    void createRoofMeasurement();
    void onRoofProgress(quint64 generation, double fraction, const QString& phase);
    void onRoofFinished(quint64 generation, bool ok);
    /// Looks the CPU profile up again and re-places the last run's dots against it (without a
    /// run on screen: showTargetRoofs).
    void reloadRoofProfile();
    /// The roofline's (and energy chart's) roofs for the selected target without a run: this
    /// CPU's saved profile, or the CUDA device's; the banner when none is saved. At start-up, on
    /// each model shown and when the target changes while no run's dots are on screen.
    void showTargetRoofs();
    void onTargetChangedForRoofs();
    /// True (and says so) while roofs are measured: kernels timed meanwhile would disturb both.
    bool roofMeasurementBlocksRun();
    RoofSession* m_roofSession = nullptr;
    QAction* m_measureRoofsAction = nullptr;
    QProgressBar* m_roofProgress = nullptr;
    QToolButton* m_roofCancel = nullptr;
    RoofSavePrompt m_roofSavePrompt;

    // Conventions (main_window_conventions.cpp).
    void createConventions();
    void sizeBottomDocks();
    void welcomeRun();
    void welcomeSelectNode();
    QAction* m_preferencesAction = nullptr;
    QMenu* m_helpMenu = nullptr;
    WelcomePanel* m_welcome = nullptr;
    QDockWidget* m_welcomeDock = nullptr;
    QPointer<SettingsDialog> m_preferences;
    QPointer<ShortcutsDialog> m_shortcuts;
    QPointer<AboutDialog> m_about;
    QPointer<DocWindow> m_docWindow;
    bool m_bottomSized = false;

    // Fixes from a newcomer's session (main_window_polish.cpp).
    void createPolish();
    /// Shows or hides a normal status-bar widget; while a temporary message is up it stays hidden
    /// and appears when the message goes (the message is drawn across that part of the bar).
    void setStatusWidgetVisible(QWidget* widget, bool visible);
    void onStatusMessageChanged(const QString& message);
    /// View > <dock>: shows a hidden dock, raises one behind another tab, closes one in front.
    void toggleDock(QDockWidget* dock);
};

}  // namespace tessera::app
