#pragma once
/// @file
/// Runs in the window: Run > Run (Ctrl+R), Stop (Esc), Check against Reference, Reference
/// Interpreter for Unsupported Ops, Inputs... (Ctrl+Shift+I), Run > Target and the toolbar's
/// target selector; the Code dock (generated C++, or CUDA C with NVRTC's PTX beside it) and the
/// Timings dock; the run's line, progress bar (with an estimate of the time left) and Cancel in
/// the status bar; the kernel statuses drawn on the graph.
///
/// Runs go through the Document's run channel (RunSession: compile, JIT, run, time and check on a
/// worker, kernels in tessera-runner) with Document::runSettings(). When the compile is done the
/// Code dock shows the module and the graph colours operators by kernel status; when the run is
/// done the Timings dock lists every kernel, the history chart gets the run, and reportShown()
/// hands the report to the roofline and the plan table. A failed run (compiler missing, a kernel
/// that crashed) is reported in the run's line and Problems, never in a dialog; the kernel to
/// blame is selected.
///
/// Results describe the model, plan and schedules they were compiled from: a newly loaded model,
/// an edited program, a plan with other fused groups drop them (with a line that says why), and
/// changed kernel mappings mark the code as out of date.
///
/// Thread rules: UI thread only.

#include <functional>
#include <memory>

#include <QObject>
#include <QString>

#include "app/gui/eta_estimator.h"
#include "app/gui/run_inputs_dialog.h"

class QAction;
class QActionGroup;
class QComboBox;
class QDockWidget;
class QLabel;
class QMainWindow;
class QMenu;
class QProgressBar;
class QToolBar;
class QToolButton;

namespace tessera::views {
class CodePanel;
class GraphView;
class TimingPanel;
}  // namespace tessera::views

namespace tessera::pipeline {
struct CompiledModel;
struct RunReport;
}  // namespace tessera::pipeline

namespace tessera::runtime::cuda {
struct CudaCompiled;
}

namespace tessera::app {

class Document;
struct RunOutcome;

class RunController : public QObject {
    Q_OBJECT
public:
    /// The docks and widgets of the window it works in: the Code dock is tabbed with `rightTab`,
    /// the Timings dock with `bottomTab` (the Problems dock, raised when a run fails); actions go
    /// into `runMenu`, `viewMenu` and `tools`; the status bar's run widgets are added now.
    struct Placement {
        QMainWindow* window = nullptr;
        views::GraphView* graph = nullptr;
        QDockWidget* rightTab = nullptr;
        QDockWidget* bottomTab = nullptr;
        QMenu* runMenu = nullptr;
        QMenu* viewMenu = nullptr;
        QToolBar* tools = nullptr;
    };
    RunController(Document* doc, const Placement& place);

    views::CodePanel* codePanel() const { return m_code; }
    views::TimingPanel* timingPanel() const { return m_timing; }
    QDockWidget* codeDock() const { return m_codeDock; }
    QDockWidget* timingDock() const { return m_timingDock; }
    QAction* runAction() const { return m_runAction; }
    QAction* stopAction() const { return m_stopAction; }
    /// Run > Check against Reference (checked by default; Document::check).
    QAction* checkAction() const { return m_checkAction; }
    /// Run > Reference Interpreter for Unsupported Ops (checked by default).
    QAction* fallbackAction() const { return m_fallbackAction; }
    QAction* inputsAction() const { return m_inputsAction; }
    /// The target selector in the toolbar (objectName "targetCombo") and Run > Target.
    QComboBox* targetCombo() const { return m_targetCombo; }
    QMenu* targetMenu() const { return m_targetMenu; }
    /// The status bar's target line ("Target: CPU").
    QString targetStatusText() const;
    /// The run's line in the status bar (stage while running, the result after).
    QString runStatusText() const;
    /// Shows `text` in the run's line (red when `error`); roof measurements use it too.
    void setRunMessage(const QString& text, bool error);
    /// Replaces the run line's tooltip (the whole message by default), e.g. with a file's path.
    void setRunToolTip(const QString& tip);

    /// Starts a run of the document's model (says so without a model, or while `setRunGate`'s
    /// gate is closed).
    void startRun();
    /// Cancels the run in progress.
    void stopRun();
    /// A run waits while `blocked` returns true (it then says why itself).
    void setRunGate(std::function<bool()> blocked) { m_runBlocked = std::move(blocked); }
    /// Run > Inputs...: input .npy files to feed and outputs to compare (RunInputsDialog).
    void showRunInputs();
    /// The compiled model whose code and statuses are on screen (null when none).
    std::shared_ptr<const pipeline::CompiledModel> compiled() const { return m_compiled; }
    /// Code and timing row for the graph's node `nodeId` (after a compile).
    void showNodeResults(int nodeId);
    /// The Code, Timings and (given) Roofline docks opened and sized by the first run; false once
    /// the user's arrangement is to be kept (a restored layout).
    void setResultDocksArranged(bool arranged) { m_runDocksShown = arranged; }
    /// Follows the document's schedules (once Document::attachSchedules was called): changed
    /// mappings mark the code on screen as out of date.
    void attachSchedules();
    /// The dock arranged below Code by the first run.
    void setRooflineDock(QDockWidget* dock) { m_rooflineDock = dock; }

signals:
    void runStarted();
    /// A run's report is on screen (Timings); the roofline and the plan table show it too.
    void reportShown(const pipeline::RunReport& report);
    /// A run ended and its results (or its error) are on screen; ok as Document::runFinished.
    void runFinished(bool ok);
    /// A kernel was picked in Code or Timings: its node is to be selected.
    void kernelActivated(const QString& name);
    /// The results on screen were dropped (another model, program or plan).
    void resultsCleared();

private:
    void createActions(QMenu* runMenu, QToolBar* tools);
    void createDocks(QDockWidget* rightTab, QMenu* viewMenu);
    void createStatusWidgets();
    void onTargetChanged();
    void onRunStarted();
    void onRunProgress(double fraction, const QString& stage);
    void onRunCompiled();
    void onCudaCompiled();
    void onRunFinished(bool ok);
    void showFailure(const RunOutcome& out);
    void showCompiledCode();
    void showPtx();
    void setRunBusy(bool busy);
    /// Drops the results on screen: `code` and `timings` say why in the two docks.
    void clearResults(const QString& code, const QString& timings);
    void onPlanChanged();
    void onSchedulesChanged();

    Document* m_doc;
    QMainWindow* m_window;
    views::GraphView* m_graph;
    QDockWidget* m_bottomTab;
    views::CodePanel* m_code = nullptr;
    views::TimingPanel* m_timing = nullptr;
    QDockWidget* m_codeDock = nullptr;
    QDockWidget* m_timingDock = nullptr;
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
    QToolButton* m_runCancel = nullptr;
    EtaEstimator m_runEta;  ///< "about 20 s left" after the run's stage text
    bool m_runDocksShown = false;
    std::function<bool()> m_runBlocked;
    std::shared_ptr<const pipeline::CompiledModel> m_compiled;
    std::shared_ptr<const runtime::cuda::CudaCompiled> m_cudaModule;
};

}  // namespace tessera::app
