#pragma once
/// @file
/// The Timings dock's content: a summary line (end-to-end time, kernel count, threads, check
/// result) above a sortable table of kernels (TimingTableModel behind a sort proxy).
///
/// Selecting a row emits kernelSelected(name) (the app selects the node in the graph);
/// selectKernel() selects a row from outside without emitting. Double-clicking a failed kernel's
/// row, or "Show Error Map" in its context menu, emits checkDetailsRequested(name).
///
/// While a run is pinned (setPinned) the table has the "vs pinned" column (TimingTableModel),
/// shown right after Median, and the summary line ends with the end-to-end ratio
/// ("vs pinned: 1.25x end to end (pinned 2.500 ms)").
/// Below the table (in a splitter) the history chart (TimingHistoryChart) draws the selected
/// kernel's median over the runs of the history the app gives (setHistory), or the end-to-end
/// time when no kernel is selected. The table keeps its header and three rows however small the
/// panel is made (its minimum height); the chart gives way and can be collapsed.
/// Thread rules: UI thread only.

#include <memory>
#include <string>

#include <QWidget>

#include "views/timing/timing_history.h"
#include "views/timing/timing_table_model.h"

class QLabel;
class QSortFilterProxyModel;
class QSplitter;
class QTableView;

namespace tessera::views {

class TimingPanel : public QWidget {
    Q_OBJECT
public:
    explicit TimingPanel(QWidget* parent = nullptr);

    void setSnapshot(TimingSnapshot snapshot);
    /// Empties the table and shows `message` in the summary line.
    void clear(const QString& message);
    /// Selects and shows the row of kernel `name` (clears the selection when there is none);
    /// does not emit kernelSelected.
    void selectKernel(const std::string& name);
    /// The kernel of the selected row, empty when none.
    std::string selectedKernel() const;
    /// Compares with a pinned run (nullptr: no comparison).
    void setPinned(std::shared_ptr<const PinnedRun> pinned);

    /// The runs of this session for the history chart (nullptr or empty: the chart says so).
    void setHistory(std::shared_ptr<const TimingHistory> history);
    const std::shared_ptr<const TimingHistory>& history() const { return m_history; }
    class TimingHistoryChart* historyChart() const { return m_chart; }

    QString summaryText() const;
    TimingTableModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    QTableView* table() const { return m_table; }

    /// The summary line for a snapshot, e.g. "End to end 1.234 ms (median of 40) · 3 kernels ·
    /// 2 threads · compile cache hit · check: all 3 kernels match the reference".
    static QString summaryFor(const TimingSnapshot& snapshot);
    /// How the pinned run's conditions differ from the current run's, e.g. "pinned with 2
    /// threads, this run 1; pinned on CUDA, this run on CPU"; empty when they match (or unknown).
    static QString conditionsNote(const PinnedRun& pinned, const TimingSnapshot& current);

signals:
    void kernelSelected(const QString& name);
    /// The user asked for the error details of a failed kernel.
    void checkDetailsRequested(const QString& name);

private:
    void onCurrentRowChanged(const QModelIndex& current);
    void refreshSummary();
    void placeComparisonColumn();
    void onContextMenu(const QPoint& pos);
    void refreshHistory();

    QLabel* m_summary;
    QTableView* m_table;
    TimingTableModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QSplitter* m_splitter;
    class TimingHistoryChart* m_chart;
    std::shared_ptr<const TimingHistory> m_history;
    bool m_selecting = false;
    QString m_baseSummary;
};

}  // namespace tessera::views
