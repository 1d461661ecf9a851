#include "views/timing/timing_panel.h"

#include <algorithm>

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "views/timing/timing_history_chart.h"

namespace tessera::views {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString counted(qsizetype n, const QString& one, const QString& many)
{
    return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
}

}  // namespace

TimingPanel::TimingPanel(QWidget* parent)
    : QWidget(parent), m_summary(new QLabel(this)), m_table(new QTableView(this)), m_model(new TimingTableModel(this)),
      m_proxy(new QSortFilterProxyModel(this)), m_splitter(new QSplitter(Qt::Vertical, this)),
      m_chart(new TimingHistoryChart(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_summary->setObjectName(QStringLiteral("timingSummary"));
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setContentsMargins(8, 4, 8, 4);
    m_summary->setWordWrap(true);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(Qt::UserRole);
    m_table->setObjectName(QStringLiteral("timingTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder);  // execution order until the user sorts
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    // Node names are paths ("/features/features.2/conv/conv.1/Conv"): their ends tell them apart.
    m_table->setTextElideMode(Qt::ElideMiddle);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setHighlightSections(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    // The median is what people look for first: right after the kernel and its op, so that a
    // narrow dock still shows it (the model keeps its column numbers; only the view's order moves).
    m_table->horizontalHeader()->moveSection(TimingTableModel::Median, TimingTableModel::Flops);
    layout->addWidget(m_summary);
    m_splitter->setObjectName(QStringLiteral("timingSplitter"));
    m_splitter->setChildrenCollapsible(true);
    m_chart->setObjectName(QStringLiteral("timingHistoryChart"));
    m_splitter->addWidget(m_table);
    m_splitter->addWidget(m_chart);
    // The table is what people read first: it gets twice the chart's height.
    m_splitter->setStretchFactor(0, 2);
    m_splitter->setStretchFactor(1, 1);
    m_splitter->setSizes({200, 100});
    // However small the dock is made, the table keeps its header and three rows (the chart
    // gives way first and can be collapsed).
    m_table->setMinimumHeight(m_table->horizontalHeader()->sizeHint().height() +
                              3 * m_table->verticalHeader()->defaultSectionSize() + 2 * m_table->frameWidth());
    m_splitter->setCollapsible(0, false);
    layout->addWidget(m_splitter, 1);
    // Selection changes from the user and from selectKernel() both redraw the history.
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] { refreshHistory(); });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &TimingPanel::onCurrentRowChanged);
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        const int row = m_proxy->mapToSource(index).row();
        if (row >= 0 && !m_model->isGoneRow(row) &&
            m_model->snapshot().rows[static_cast<std::size_t>(row)].status == KernelStatus::Failed)
            emit checkDetailsRequested(fromStd(m_model->kernelAt(row)));
    });
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, &TimingPanel::onContextMenu);
    clear(tr("No run yet: Run > Run (CPU) (Ctrl+R) times every kernel."));
}

QString TimingPanel::summaryFor(const TimingSnapshot& s)
{
    QStringList parts;
    if (s.timed && s.totalReps > 0)
        parts << tr("End to end %1 (median of %2)").arg(TimingTableModel::formatSeconds(s.totalSeconds)).arg(s.totalReps);
    else if (s.timed && s.totalSeconds > 0)
        parts << tr("End to end %1").arg(TimingTableModel::formatSeconds(s.totalSeconds));
    parts << counted(static_cast<qsizetype>(s.rows.size()), tr("kernel"), tr("kernels"));
    if (s.threads > 0)
        parts << counted(s.threads, tr("thread"), tr("threads"));
    if (!s.compileNote.empty())
        parts << fromStd(s.compileNote);
    if (s.checked) {
        int failed = 0;
        std::string first;
        for (const TimingRow& r : s.rows) {
            if (r.status == KernelStatus::Failed) {
                if (failed++ == 0)
                    first = r.kernel;
            }
        }
        if (failed == 0)
            parts << tr("check: all %1 match the reference")
                         .arg(counted(static_cast<qsizetype>(s.rows.size()), tr("kernel"), tr("kernels")));
        else
            parts << tr("check: %1 of %2 outside tolerance (first: '%3')")
                         .arg(failed)
                         .arg(s.rows.size())
                         .arg(fromStd(first));
    }
    return parts.join(QStringLiteral(" \u00b7 "));
}

void TimingPanel::setSnapshot(TimingSnapshot snapshot)
{
    m_baseSummary = summaryFor(snapshot);
    m_selecting = true;
    m_model->setSnapshot(std::move(snapshot));
    m_selecting = false;
    refreshSummary();
    placeComparisonColumn();
    refreshHistory();
    m_table->resizeColumnsToContents();
    // Long kernel names should not push the numbers out of view.
    const int kernelMax = std::clamp(m_table->viewport()->width() / 3, 140, 260);
    if (m_table->columnWidth(TimingTableModel::Kernel) > kernelMax)
        m_table->setColumnWidth(TimingTableModel::Kernel, kernelMax);
}

void TimingPanel::clear(const QString& message)
{
    m_selecting = true;
    m_model->setSnapshot({});
    m_selecting = false;
    m_baseSummary.clear();
    m_summary->setText(message);
    refreshHistory();
}

void TimingPanel::setHistory(std::shared_ptr<const TimingHistory> history)
{
    m_history = std::move(history);
    refreshHistory();
}

void TimingPanel::refreshHistory()
{
    // A "gone" row's kernel is not in the latest run: historySeries gives nothing for it.
    const std::string kernel = selectedKernel();
    if (!m_history) {
        m_chart->setSeries({}, fromStd(kernel));
        return;
    }
    m_chart->setSeries(historySeries(*m_history, kernel), fromStd(kernel));
}

void TimingPanel::setPinned(std::shared_ptr<const PinnedRun> pinned)
{
    m_selecting = true;
    m_model->setPinned(std::move(pinned));
    m_selecting = false;
    refreshSummary();
    placeComparisonColumn();
}

void TimingPanel::refreshSummary()
{
    if (m_baseSummary.isEmpty())
        return;
    QString text = m_baseSummary;
    const auto& pinned = m_model->pinned();
    const TimingSnapshot& s = m_model->snapshot();
    if (pinned && pinned->totalSeconds > 0 && s.timed && s.totalSeconds > 0)
        text += tr(" \u00b7 vs pinned: %1 end to end (pinned %2)")
                    .arg(TimingTableModel::formatRatio(pinned->totalSeconds / s.totalSeconds),
                         TimingTableModel::formatSeconds(pinned->totalSeconds));
    else if (pinned)
        text += tr(" \u00b7 compared with the pinned run");
    // A ratio between runs made under different conditions says so next to it.
    if (pinned) {
        const QString note = conditionsNote(*pinned, s);
        if (!note.isEmpty())
            text += QStringLiteral(" \u2014 ") + note;
    }
    // Inflated times are the first thing to know about a run, not a line lost in Problems.
    if (!s.timingWarning.empty())
        text += QStringLiteral("\n\u26a0 ") + tr("Timings unreliable: %1").arg(fromStd(s.timingWarning));
    m_summary->setText(text);
}

QString TimingPanel::conditionsNote(const PinnedRun& pinned, const TimingSnapshot& current)
{
    QStringList parts;
    if (pinned.threads > 0 && current.threads > 0 && pinned.threads != current.threads)
        parts << tr("pinned with %1 %2, this run %3")
                     .arg(pinned.threads)
                     .arg(pinned.threads == 1 ? tr("thread") : tr("threads"))
                     .arg(current.threads);
    if (!pinned.target.empty() && !current.target.empty() && pinned.target != current.target)
        parts << tr("pinned on %1, this run on %2").arg(fromStd(pinned.target), fromStd(current.target));
    else if (!pinned.machine.empty() && !current.machine.empty() && pinned.machine != current.machine)
        parts << tr("pinned on %1, this run on %2").arg(fromStd(pinned.machine), fromStd(current.machine));
    return parts.join(QStringLiteral("; "));
}

void TimingPanel::placeComparisonColumn()
{
    if (!m_model->pinned())
        return;
    // The ratio reads best next to the time it compares; the model keeps it last so that the
    // other columns keep their numbers with and without a pinned run.
    QHeaderView* h = m_table->horizontalHeader();
    const int visual = h->visualIndex(TimingTableModel::VsPinned);
    const int target = h->visualIndex(TimingTableModel::Median) + 1;
    if (visual >= 0 && visual != target)
        h->moveSection(visual, target);
    m_table->resizeColumnToContents(TimingTableModel::VsPinned);
}

void TimingPanel::onContextMenu(const QPoint& pos)
{
    const QModelIndex index = m_table->indexAt(pos);
    const int row = index.isValid() ? m_proxy->mapToSource(index).row() : -1;
    if (row < 0 || m_model->isGoneRow(row))
        return;
    const std::string kernel = m_model->kernelAt(row);
    const bool failed = m_model->snapshot().rows[static_cast<std::size_t>(row)].status == KernelStatus::Failed;
    QMenu menu(this);
    QAction* details = menu.addAction(tr("Show Error Map"));
    details->setEnabled(failed);
    details->setToolTip(failed ? QString() : tr("The kernel passed its check (or was not checked)"));
    if (menu.exec(m_table->viewport()->mapToGlobal(pos)) == details)
        emit checkDetailsRequested(fromStd(kernel));
}

void TimingPanel::selectKernel(const std::string& name)
{
    const int row = m_model->rowOfKernel(name);
    m_selecting = true;
    if (row < 0) {
        m_table->selectionModel()->clear();
    } else {
        const QModelIndex idx = m_proxy->mapFromSource(m_model->index(row, 0));
        m_table->selectionModel()->setCurrentIndex(
            idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_table->scrollTo(idx);
    }
    m_selecting = false;
}

std::string TimingPanel::selectedKernel() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return {};
    return m_model->kernelAt(m_proxy->mapToSource(rows.first()).row());
}

QString TimingPanel::summaryText() const { return m_summary->text(); }

void TimingPanel::onCurrentRowChanged(const QModelIndex& current)
{
    if (m_selecting || !current.isValid())
        return;
    const std::string kernel = m_model->kernelAt(m_proxy->mapToSource(current).row());
    if (!kernel.empty())
        emit kernelSelected(fromStd(kernel));
}

}  // namespace tessera::views
