#include "views/timing/timing_table_model.h"

#include <algorithm>
#include <cmath>

#include <QBrush>
#include <QColor>
#include <QFont>

namespace tessera::views {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

/// The FLOPs a kernel is credited with: the op's useful count when known, else the issued count.
/// AI and GFLOP/s both use it, as the roofline's dots do (core/pipeline/roofline_points.h).
double creditedFlops(const TimingRow& r) { return r.usefulFlops >= 0 ? r.usefulFlops : r.flops; }
double intensity(const TimingRow& r) { return r.bytes > 0 ? creditedFlops(r) / static_cast<double>(r.bytes) : 0.0; }
double gflops(const TimingRow& r) { return r.medianSeconds > 0 ? creditedFlops(r) / r.medianSeconds * 1e-9 : 0.0; }
double gbps(const TimingRow& r)
{
    return r.medianSeconds > 0 ? static_cast<double>(r.bytes) / r.medianSeconds * 1e-9 : 0.0;
}
bool timed(const TimingRow& r) { return r.reps > 0; }

}  // namespace

TimingTableModel::TimingTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void TimingTableModel::setSnapshot(TimingSnapshot snapshot)
{
    beginResetModel();
    m_snapshot = std::move(snapshot);
    match();
    endResetModel();
}

void TimingTableModel::setPinned(std::shared_ptr<const PinnedRun> pinned)
{
    beginResetModel();
    m_pinned = std::move(pinned);
    match();
    endResetModel();
}

std::vector<int> matchKernels(const std::vector<KernelIdentity>& current, const std::vector<KernelIdentity>& other)
{
    std::vector<int> match(current.size(), -1);
    std::vector<bool> used(other.size(), false);
    auto sorted = [](std::vector<std::string> v) {
        std::sort(v.begin(), v.end());
        return v;
    };
    // Names first, so that a renamed kernel cannot take the match of one that kept its name.
    for (std::size_t r = 0; r < current.size(); ++r) {
        for (std::size_t p = 0; p < other.size(); ++p) {
            if (!used[p] && *other[p].name == *current[r].name) {
                match[r] = static_cast<int>(p);
                used[p] = true;
                break;
            }
        }
    }
    for (std::size_t r = 0; r < current.size(); ++r) {
        if (match[r] >= 0 || current[r].ops->empty())
            continue;
        const auto ops = sorted(*current[r].ops);
        for (std::size_t p = 0; p < other.size(); ++p) {
            if (!used[p] && sorted(*other[p].ops) == ops) {
                match[r] = static_cast<int>(p);
                used[p] = true;
                break;
            }
        }
    }
    return match;
}

void TimingTableModel::match()
{
    m_match.assign(m_snapshot.rows.size(), -1);
    m_gone.clear();
    if (!m_pinned)
        return;
    const auto& pk = m_pinned->kernels;
    std::vector<KernelIdentity> current;
    for (const TimingRow& r : m_snapshot.rows)
        current.push_back({&r.kernel, &r.ops});
    std::vector<KernelIdentity> other;
    for (const PinnedKernel& k : pk)
        other.push_back({&k.kernel, &k.ops});
    m_match = matchKernels(current, other);
    std::vector<bool> used(pk.size(), false);
    for (int m : m_match)
        if (m >= 0)
            used[static_cast<std::size_t>(m)] = true;
    for (std::size_t p = 0; p < pk.size(); ++p)
        if (!used[p])
            m_gone.push_back(static_cast<int>(p));
}

int TimingTableModel::rowOfKernel(const std::string& name) const
{
    for (int i = 0; i < rowCount(); ++i) {
        if (kernelAt(i) == name)
            return i;
    }
    return -1;
}

std::string TimingTableModel::kernelAt(int row) const
{
    const int n = static_cast<int>(m_snapshot.rows.size());
    if (row >= 0 && row < n)
        return m_snapshot.rows[static_cast<std::size_t>(row)].kernel;
    if (row >= n && row < rowCount())
        return m_pinned->kernels[static_cast<std::size_t>(m_gone[static_cast<std::size_t>(row - n)])].kernel;
    return {};
}

bool TimingTableModel::isGoneRow(int row) const
{
    return row >= static_cast<int>(m_snapshot.rows.size()) && row < rowCount();
}

const PinnedKernel* TimingTableModel::pinnedMatch(int row) const
{
    if (!m_pinned || row < 0 || row >= static_cast<int>(m_match.size()) || m_match[static_cast<std::size_t>(row)] < 0)
        return nullptr;
    return &m_pinned->kernels[static_cast<std::size_t>(m_match[static_cast<std::size_t>(row)])];
}

QString TimingTableModel::comparisonText(int row) const
{
    if (!m_pinned || row < 0 || row >= rowCount())
        return {};
    if (isGoneRow(row))
        return tr("gone");
    const PinnedKernel* p = pinnedMatch(row);
    if (!p)
        return tr("new");
    const TimingRow& r = m_snapshot.rows[static_cast<std::size_t>(row)];
    if (p->reps <= 0 || r.reps <= 0 || !(r.medianSeconds > 0))
        return QStringLiteral("-");
    return formatRatio(p->medianSeconds / r.medianSeconds);
}

int TimingTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_snapshot.rows.size() + m_gone.size());
}

int TimingTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount + (m_pinned ? 1 : 0);
}

QString TimingTableModel::formatSeconds(double s)
{
    if (s < 1e-3)
        return QStringLiteral("%1 us").arg(s * 1e6, 0, 'f', 1);
    if (s < 1)
        return QStringLiteral("%1 ms").arg(s * 1e3, 0, 'f', 3);
    return QStringLiteral("%1 s").arg(s, 0, 'f', 3);
}

QString TimingTableModel::formatRatio(double ratio)
{
    if (ratio >= 100)
        return QStringLiteral("%1x").arg(ratio, 0, 'f', 0);
    if (ratio > 0 && ratio < 0.1)
        return QString::number(ratio, 'g', 2) + QLatin1Char('x');
    return QStringLiteral("%1x").arg(ratio, 0, 'f', 2);
}

QString TimingTableModel::formatCount(double v, const QString& unit)
{
    static const char* const kPrefixes[] = {"", "K", "M", "G", "T"};
    int p = 0;
    while (std::fabs(v) >= 1000 && p < 4) {
        v /= 1000;
        ++p;
    }
    const QString number = QString::number(v, 'g', std::fabs(v) < 10 ? 3 : 4);
    const QString suffix = QLatin1String(kPrefixes[p]) + unit;
    return suffix.isEmpty() ? number : number + QLatin1Char(' ') + suffix;
}

QVariant TimingTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount())
        return {};
    const int col = index.column();
    if (isGoneRow(index.row()))
        return goneData(index.row(), col, role);
    const TimingRow& r = m_snapshot.rows[static_cast<std::size_t>(index.row())];
    if (col == VsPinned)
        return comparisonData(index.row(), role);
    if (role == Qt::DisplayRole) {
        switch (col) {
        case Kernel: return fromStd(r.kernel);
        case Op: return fromStd(r.opType) + (r.reference ? QStringLiteral(" (ref)") : QString());
        case Flops: return formatCount(creditedFlops(r));
        case Bytes: return formatCount(static_cast<double>(r.bytes), QStringLiteral("B"));
        case Intensity: return QString::number(intensity(r), 'f', 2);
        case Median: return timed(r) ? formatSeconds(r.medianSeconds) : QStringLiteral("-");
        case GFlops: return timed(r) ? QString::number(gflops(r), 'f', 2) : QStringLiteral("-");
        case GBps: return timed(r) ? QString::number(gbps(r), 'f', 2) : QStringLiteral("-");
        case RelError: return r.checked ? QString::number(r.relError, 'e', 1) : QStringLiteral("-");
        case Status: return kernelStatusLabel(r.status);
        default: return {};
        }
    }
    if (role == Qt::UserRole) {
        switch (col) {
        case Kernel: return fromStd(r.kernel);
        case Op: return fromStd(r.opType);
        case Flops: return creditedFlops(r);
        case Bytes: return static_cast<qlonglong>(r.bytes);
        case Intensity: return intensity(r);
        case Median: return r.medianSeconds;
        case GFlops: return gflops(r);
        case GBps: return gbps(r);
        case RelError: return r.checked ? r.relError : -1.0;
        case Status: return static_cast<int>(r.status);
        default: return {};
        }
    }
    if (role == Qt::TextAlignmentRole) {
        if (col == Kernel || col == Op || col == Status)
            return QVariant::fromValue(Qt::AlignVCenter | Qt::AlignLeft);
        return QVariant::fromValue(Qt::AlignVCenter | Qt::AlignRight);
    }
    if (role == Qt::ForegroundRole && col == Status && r.status != KernelStatus::None)
        return QBrush(kernelStatusColor(r.status).darker(115));
    if (role == Qt::ForegroundRole && col == RelError && r.status == KernelStatus::Failed)
        return QBrush(kernelStatusColor(KernelStatus::Failed));
    if (role == Qt::FontRole && col == Status && r.status == KernelStatus::Failed) {
        QFont f;
        f.setBold(true);
        return f;
    }
    if (role == Qt::ToolTipRole) {
        if (col == RelError || col == Status) {
            QString tip = kernelStatusDescription(r.status);
            if (r.checked && !r.checkSummary.empty())
                tip += QLatin1Char('\n') + fromStd(r.checkSummary);
            return tip;
        }
        if (col == Median && timed(r))
            return r.reps == 1 ? tr("one repetition") : tr("median of %1 repetitions").arg(r.reps);
        if (col == Bytes)
            return tr("%1 bytes issued to global memory").arg(static_cast<qlonglong>(r.bytes));
        if (col == Flops)
            return tr("%1 floating-point operations").arg(r.flops, 0, 'f', 0);
        return fromStd(r.kernel);
    }
    return {};
}

QVariant TimingTableModel::comparisonData(int row, int role) const
{
    const PinnedKernel* p = pinnedMatch(row);
    const TimingRow& r = m_snapshot.rows[static_cast<std::size_t>(row)];
    const bool timedBoth = p && p->reps > 0 && r.reps > 0 && r.medianSeconds > 0;
    const double ratio = timedBoth ? p->medianSeconds / r.medianSeconds : 0.0;
    switch (role) {
    case Qt::DisplayRole: return comparisonText(row);
    case Qt::UserRole: return p ? (timedBoth ? ratio : -1.0) : 0.0;
    case Qt::TextAlignmentRole: return QVariant::fromValue(Qt::AlignVCenter | Qt::AlignRight);
    case Qt::ForegroundRole:
        if (timedBoth && ratio > 1.05)
            return QBrush(QColor(0, 130, 60));
        if (timedBoth && ratio < 0.95)
            return QBrush(QColor(200, 40, 40));
        return {};
    case Qt::ToolTipRole:
        if (!p)
            return tr("Not in the pinned run (no kernel of that name or of the same nodes)");
        if (!timedBoth)
            return tr("Matched '%1' of the pinned run; not timed in both runs").arg(fromStd(p->kernel));
        return tr("Pinned %1 / now %2 (%3)\nmatched '%4' of the pinned run")
            .arg(formatSeconds(p->medianSeconds), formatSeconds(r.medianSeconds),
                 ratio >= 1 ? tr("%1x faster now").arg(ratio, 0, 'f', 2) : tr("%1x slower now").arg(1 / ratio, 0, 'f', 2),
                 fromStd(p->kernel));
    default: return {};
    }
}

QVariant TimingTableModel::goneData(int row, int col, int role) const
{
    const PinnedKernel& p =
        m_pinned->kernels[static_cast<std::size_t>(m_gone[static_cast<std::size_t>(row - static_cast<int>(m_snapshot.rows.size()))])];
    if (role == Qt::DisplayRole) {
        switch (col) {
        case Kernel: return fromStd(p.kernel);
        case Op: return fromStd(p.opType);
        case VsPinned: return tr("gone");
        default: return QStringLiteral("-");
        }
    }
    if (role == Qt::UserRole) {
        switch (col) {
        case Kernel: return fromStd(p.kernel);
        case Op: return fromStd(p.opType);
        case VsPinned: return -1.0;
        case Status: return -1;
        default: return -1.0;
        }
    }
    if (role == Qt::ForegroundRole)
        return QBrush(QColor(140, 140, 140));
    if (role == Qt::ToolTipRole)
        return p.reps > 0 ? tr("Only in the pinned run (%1 there)").arg(formatSeconds(p.medianSeconds))
                          : tr("Only in the pinned run");
    if (role == Qt::TextAlignmentRole)
        return QVariant::fromValue(Qt::AlignVCenter | (col == Kernel || col == Op ? Qt::AlignLeft : Qt::AlignRight));
    return {};
}

QVariant TimingTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case Kernel: return tr("Kernel");
        case Op: return tr("Op");
        case Flops: return tr("FLOPs");
        case Bytes: return tr("Bytes");
        case Intensity: return tr("AI");
        case Median: return tr("Median");
        case GFlops: return tr("GFLOP/s");
        case GBps: return tr("GB/s");
        case RelError: return tr("Rel. error");
        case Status: return tr("Status");
        case VsPinned: return m_pinned ? tr("vs pinned") : QVariant();
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Bytes: return tr("Global bytes the kernel issues (loads + stores), as counted in the kernel IR");
        case Intensity: return tr("Arithmetic intensity: FLOPs per byte issued");
        case Median: return tr("Median time of one kernel launch");
        case RelError: return tr("Worst relative L2 error of the kernel's outputs against the reference interpreter");
        case VsPinned:
            return m_pinned ? tr("Pinned run's median / this median (above 1: faster now); kernels matched by name or "
                                 "by the nodes they cover")
                            : QVariant();
        default: return {};
        }
    }
    return {};
}

}  // namespace tessera::views
