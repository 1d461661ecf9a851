#pragma once
/// @file
/// The Roofline dock (View > Roofline; below Code in the right column) and Run > Measure Roofs.
///
/// The dock's "Performance" tab draws the roofs of the profile saved for this CPU, or for the
/// CUDA device selected (perf::findProfileForMachine; a banner when none is saved), from the start
/// and whenever the target changes while no run's dots are on screen; after each run every
/// kernel's dot (pipeline::kernelSamples) against the roofs of the target that ran. The "Energy"
/// tab draws GFLOP/J per kernel from the run's NVML energy (views::kernelEnergies) in the same
/// chart mode and precision. Clicking a dot activates the kernel (kernelActivated); selectKernel
/// highlights one. Dots go when the run's results are dropped (another model, program or plan).
///
/// Measure Roofs is the GUI twin of `tessera-cli roofline measure --target cpu --save`: the
/// RoofSession measures on its worker, progress and Cancel are in the status bar (the run's line
/// says the phase), the measurement's problems go to the Document's problems, disturbed roofs
/// are saved only when the user agrees (RoofSavePrompt), and saved roofs are shown at once. A run
/// waits while roofs are measured (blocksRun: kernels timed meanwhile would disturb both).
///
/// Thread rules: UI thread only.

#include <functional>

#include <QObject>
#include <QString>
#include <QStringList>

class QAction;
class QDockWidget;
class QMainWindow;
class QMenu;
class QProgressBar;
class QTabWidget;
class QToolButton;

namespace tessera::views {
class EnergyView;
class RooflineView;
}  // namespace tessera::views

namespace tessera::pipeline {
struct RunReport;
}

namespace tessera::project {
struct RunRecord;
}

namespace tessera::app {

class Document;
class RoofSession;
class RunController;

class RooflineController : public QObject {
    Q_OBJECT
public:
    /// Asked before saving roofs with consistency problems (perf::roofConsistencyProblems); true
    /// saves anyway. A message box by default; tests replace it.
    using RoofSavePrompt = std::function<bool(const QStringList& problems)>;

    /// Docks into `window` (its toggle into `viewMenu`, Measure Roofs into `runMenu`); shows the
    /// results of `runs` and speaks through its run line.
    RooflineController(Document* doc, RunController* runs, QMainWindow* window, QMenu* viewMenu, QMenu* runMenu);

    views::RooflineView* rooflineView() const { return m_roofline; }
    views::EnergyView* energyView() const { return m_energy; }
    QTabWidget* tabs() const { return m_rooflineTabs; }
    QDockWidget* dock() const { return m_rooflineDock; }
    QAction* measureRoofsAction() const { return m_measureRoofsAction; }
    RoofSession* roofSession() const { return m_roofSession; }
    void setRoofSavePrompt(RoofSavePrompt prompt) { m_roofSavePrompt = std::move(prompt); }

    /// Starts measuring this CPU's roofs (not while a run is in progress).
    void measureRoofs();
    /// Cancels the measurement in progress; nothing is saved.
    void cancelMeasurement();
    /// True, and says so in the run's line, while roofs are measured.
    bool blocksRun();
    /// Highlights kernel `name`'s dot in both tabs ("" = none).
    void selectKernel(const QString& name);
    /// The roofs for the selected target without a run (see the file comment).
    void showTargetRoofs();
    /// A project's stored run: its dots, against this CPU's roofs when it was recorded here.
    void showRecord(const project::RunRecord& record);

signals:
    /// A dot was clicked: its kernel is to be selected.
    void kernelActivated(const QString& name);
    /// A measurement ended: `savedPath` is the profile written (empty when it failed, was
    /// cancelled or the user declined to save a disturbed one).
    void roofMeasurementFinished(const QString& savedPath);

private:
    void createDock(QMenu* viewMenu);
    void createMeasurement(QMenu* runMenu);
    /// The kernels of a finished run against the roofs of the target that ran.
    void showRun(const pipeline::RunReport& report);
    void onProgress(double fraction, const QString& phase);
    void onFinished();
    /// Looks the CPU profile up again and re-places the last run's dots against it (without a
    /// run on screen: showTargetRoofs).
    void reloadProfile();
    void onTargetChanged();

    Document* m_doc;
    RunController* m_runs;
    QMainWindow* m_window;
    views::RooflineView* m_roofline = nullptr;
    views::EnergyView* m_energy = nullptr;
    QTabWidget* m_rooflineTabs = nullptr;
    QDockWidget* m_rooflineDock = nullptr;
    RoofSession* m_roofSession = nullptr;
    QAction* m_measureRoofsAction = nullptr;
    QProgressBar* m_roofProgress = nullptr;
    QToolButton* m_roofCancel = nullptr;
    RoofSavePrompt m_roofSavePrompt;
};

}  // namespace tessera::app
