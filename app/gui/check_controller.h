#pragma once
/// @file
/// The Check dock (issue 8, numerical debugging): when a run's check fails, the dock opens on the
/// first failing kernel with its error heatmap (views::ErrorHeatmapView) against the reference
/// interpreter. A failing kernel's row in the Timings dock (double-click, or "Show Error Map" in
/// its context menu) shows that kernel instead. View > Check shows and hides the dock.
///
/// The data comes from the run's report (pipeline::OutputCheck::actual/expected and
/// KernelReport::checkInputs, kept for failing kernels within RunOptions::keepFailingBytes).
/// "Re-run in Reference Interpreter" evaluates the kernel's nodes again
/// (pipeline::rerunInReference) on the controller's JobChannel; the result is shown beside the
/// heatmap. A new run, or another kernel shown, cancels a re-run in flight and drops its result.
///
/// Thread rules: UI thread only, except the re-run job, which runs the pure core entry point on
/// data it shares read-only (the compiled model, the kept inputs). The destructor cancels the job
/// and waits for the pool.

#include <memory>

#include <QObject>

#include "app/gui/job_channel.h"
#include "core/pipeline/run.h"
#include "core/support/cancel.h"
#include "views/debug/error_heatmap.h"

class QDockWidget;
class QMainWindow;
class QMenu;

namespace tessera::views {
class ErrorHeatmapView;
class TimingPanel;
}

namespace tessera::app {

class Document;

class CheckController : public QObject {
    Q_OBJECT
public:
    /// Creates the dock (objectName "checkDock", hidden) in `window`'s bottom area beside the
    /// `timings` dock, adds its toggle to `viewMenu`, shows `doc`'s runs' checks and opens a
    /// kernel's when `timingPanel` asks for its check details.
    CheckController(Document* doc, QMainWindow* window, QDockWidget* timings, views::TimingPanel* timingPanel,
                    QMenu* viewMenu);
    ~CheckController() override;

    QDockWidget* dock() const { return m_dock; }
    views::ErrorHeatmapView* view() const { return m_view; }
    /// Shows kernel `name` of the last run in the dock (and raises it). False, with the dock
    /// untouched, when the last run has no such checked kernel.
    bool showKernel(const QString& name);
    /// Whether a re-run is in flight.
    bool rerunBusy() const { return m_busy; }

    /// The heatmap's data for a kernel of a report: its outputs, failing ones first.
    static views::ErrorHeatmapSnapshot snapshotFor(const pipeline::KernelReport& kernel);

signals:
    /// A re-run finished and its result (or error) is on screen.
    void rerunFinished(bool ok);

private:
    void onRunFinished(bool ok);
    void onRerunRequested(const QString& kernel);

    Document* m_doc;
    QMainWindow* m_window;
    QDockWidget* m_dock;
    views::ErrorHeatmapView* m_view;
    std::shared_ptr<const pipeline::RunReport> m_report;
    std::shared_ptr<const pipeline::CompiledModel> m_compiled;
    bool m_busy = false;
    /// Re-runs in the reference interpreter; last, so that it is destroyed (and waited for) first.
    std::unique_ptr<JobChannel> m_rerun;
};

}  // namespace tessera::app
