#include "views/timing/timing_table_model.h"

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
    endResetModel();
}

int TimingTableModel::rowOfKernel(const std::string& name) const
{
    for (std::size_t i = 0; i < m_snapshot.rows.size(); ++i) {
        if (m_snapshot.rows[i].kernel == name)
            return static_cast<int>(i);
    }
    return -1;
}

int TimingTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_snapshot.rows.size());
}

int TimingTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString TimingTableModel::formatSeconds(double s)
{
    if (s < 1e-3)
        return QStringLiteral("%1 us").arg(s * 1e6, 0, 'f', 1);
    if (s < 1)
        return QStringLiteral("%1 ms").arg(s * 1e3, 0, 'f', 3);
    return QStringLiteral("%1 s").arg(s, 0, 'f', 3);
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
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const TimingRow& r = m_snapshot.rows[static_cast<std::size_t>(index.row())];
    const int col = index.column();
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
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Bytes: return tr("Global bytes the kernel issues (loads + stores), as counted in the kernel IR");
        case Intensity: return tr("Arithmetic intensity: FLOPs per byte issued");
        case Median: return tr("Median time of one kernel launch");
        case RelError: return tr("Worst relative L2 error of the kernel's outputs against the reference interpreter");
        default: return {};
        }
    }
    return {};
}

}  // namespace tessera::views
