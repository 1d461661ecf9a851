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
/// The fusion plan (the Fusion Plan dock, Edit > Undo/Redo, Fuse and Split, the plan's clusters
/// on the graph) and the user schedules are a FusionController's (fusion_controller.h); the
/// Welcome dock, the first run, the saved layout and View's dock toggles a WorkspaceController's
/// (workspace_controller.h); Edit > Preferences and the Help menu a HelpController's
/// (help_controller.h). Refused plan edits and schedules are listed in the Problems dock.
///
/// The Program dock (View > Program, Ctrl+E; Save Program; unsaved-text prompts) and Run > Live
/// (Ctrl+L) are a ProgramController's (program_controller.h); Live's runs are the RunController's.
///
/// Thread rules: UI thread only.

#include <functional>
#include <memory>

#include <QMainWindow>
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
class QToolButton;
class QUndoStack;

namespace tessera::views {
class CodePanel;
class EnergyView;
class GraphView;
class MappingPanel;
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
class FusionController;
class HelpController;
class ProgramController;
class RooflineController;
class RunController;
class ProjectController;
class RoofSession;
class RunSession;
class Session;
class WorkspaceController;

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
    /// Runs: the Run menu and target selector, the Code and Timings docks, the run's line in the
    /// status bar (run_controller.h).
    RunController* run() const { return m_run; }
    /// The Roofline dock (Performance and Energy tabs) and Run > Measure Roofs (roofline_controller.h).
    RooflineController* roofline() const { return m_roofline; }
    /// The Fusion Plan dock, the Edit menu and the user schedules (fusion_controller.h).
    FusionController* fusion() const { return m_fusion; }
    /// The Check dock's controller (check_controller.h: error heatmap of failing kernels).
    CheckController* checkController() const { return m_check; }
    /// Run > Pin Run / Unpin and the comparison views (compare_controller.h).
    CompareController* compareController() const { return m_compare; }
    /// .tessera projects: File > Save Project (Ctrl+S) / Save Project As (Ctrl+Shift+S), the title,
    /// unsaved-changes prompts, autosave and recovery (project_controller.h).
    ProjectController* projectController() const { return m_project; }
    /// The Program dock and Live mode (program_controller.h).
    ProgramController* program() const { return m_program; }

    /// The Welcome dock, the first run, the saved layout and View's dock toggles
    /// (workspace_controller.h).
    WorkspaceController* workspace() const { return m_workspace; }
    /// Edit > Preferences and the Help menu's windows (help_controller.h).
    HelpController* help() const { return m_help; }

    /// The model on screen (null before the first successful load).
    std::shared_ptr<const ir::Model> model() const;

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

protected:
    /// Saves the layout (WorkspaceController::saveLayout) when the window closes.
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void createDocks();
    void createStatusBar();
    void addPermanentStatusWidgets();
    void onLoadStarted(quint64 generation, const QString& path);
    void onStage(quint64 generation, const QString& stage);
    void onLoadFinished(quint64 generation, bool ok);
    /// The document's model's node, input and output counts in the status bar, and `times` (the
    /// import or parse and the layout milliseconds of the load that made it, %1 and %2).
    void showModelStats(const QString& times);
    void onNodeSelected(int nodeId);
    void showKernelSchedule(ir::NodeId node);
    void showProblems();
    /// Selects the node of kernel `name` (picked in Code, Timings or the roofline).
    void onKernelRowSelected(const QString& name);
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

    RunController* m_run = nullptr;
    RooflineController* m_roofline = nullptr;

    FusionController* m_fusion = nullptr;
    ProjectController* m_project = nullptr;

    QMenu* m_runMenu = nullptr;
    CheckController* m_check = nullptr;
    CompareController* m_compare = nullptr;

    ProgramController* m_program = nullptr;

    WorkspaceController* m_workspace = nullptr;
    HelpController* m_help = nullptr;
};

}  // namespace tessera::app
