#pragma once
/// @file
/// Comparing runs (issue 8): Run > Pin Run (Ctrl+Shift+B) makes the last finished run the
/// baseline, Run > Unpin ends the comparison. While a run is pinned:
/// - the Timings table has a "vs pinned" column (pinned median / current median per kernel,
///   matched by name or by node set; "new"/"gone" for unmatched kernels) and its summary line the
///   end-to-end ratio (views::TimingPanel::setPinned);
/// - the Roofline draws the pinned run's kernels as hollow markers with a thin line to the current
///   dot of the same kernel (views::RooflineView::setPinnedPoints);
/// - the Code dock offers "Diff vs pinned": a unified diff of the selected kernel's generated code
///   between the pinned and the current compile (the whole module when no operator is selected),
///   kept up to date as the selection changes and after each run.
/// The pin belongs to its model: it survives editing the program or reloading the same file
/// (comparing a schedule before and after an edit is the point), but opening a different source
/// file clears it, with a status-bar note ("Pin cleared: it was a run of mobilenet_v2.onnx").
/// The Timings summary says when the pinned run's threads, target or device differ from the
/// current run's.
///
/// Thread rules: UI thread only.

#include <memory>

#include <QObject>
#include <QString>

#include "app/gui/run_session.h"
#include "views/timing/timing_table_model.h"

class QAction;
class QMenu;

namespace tessera::views {
class CodePanel;
class GraphView;
class RooflineView;
class TimingPanel;
}  // namespace tessera::views

namespace tessera::app {

class Document;

/// The views a comparison with a pinned run draws into.
struct CompareViews {
    views::GraphView* graph = nullptr;      ///< its selection picks the kernel to diff
    views::CodePanel* code = nullptr;       ///< the diff (Diff vs pinned)
    views::TimingPanel* timings = nullptr;  ///< the pinned run's column
    views::RooflineView* roofline = nullptr;  ///< the pinned run's dots
};

class CompareController : public QObject {
    Q_OBJECT
public:
    /// Adds Pin Run and Unpin to `runMenu`, compares `doc`'s runs with the pinned one in `views`.
    CompareController(Document* doc, CompareViews views, QMenu* runMenu);

    QAction* pinAction() const { return m_pinAction; }
    QAction* unpinAction() const { return m_unpinAction; }
    bool isPinned() const { return m_pinned != nullptr; }
    /// The pinned run (null when none).
    const RunOutcome* pinned() const { return m_pinned.get(); }

    /// Pins the last finished run that has a report; false (and a status message) when none.
    bool pin();
    void unpin();

    /// The Timings comparison data of a report.
    static views::PinnedRun pinnedRunOf(const pipeline::RunReport& report, const QString& label);

    /// A kernel's code in the pinned and the current compile as a unified diff.
    struct KernelDiff {
        QString diff;   ///< empty when identical or unavailable
        QString title;  ///< what is compared
        QString note;   ///< shown when the diff is empty
    };
    /// The diff of node `node`'s kernel (the whole module when `node` is empty).
    static KernelDiff kernelDiff(const pipeline::CompiledModel& pinned, const pipeline::CompiledModel& current,
                                 const std::string& node);

private:
    void onRunFinished(bool ok);
    void refreshDiff();
    void updateActions();
    void onModelShown(const QString& path);

    Document* m_doc;
    CompareViews m_views;
    QAction* m_pinAction;
    QAction* m_unpinAction;
    std::unique_ptr<RunOutcome> m_pinned;
    QString m_pinnedPath;  ///< the source file of the pinned run's model
};

}  // namespace tessera::app
