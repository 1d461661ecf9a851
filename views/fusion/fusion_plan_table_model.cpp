#include "views/fusion/fusion_plan_table_model.h"

#include <QBrush>
#include <QPixmap>
#include <QPainter>

#include "views/timing/timing_table_model.h"

namespace tessera::views {
namespace {

QString memberList(const FusionPlanRow& r)
{
    QStringList lines;
    for (const QString& op : r.ops) {
        QString role;
        if (op == r.anchor)
            role = QStringLiteral(" (anchor)");
        else if (r.prologue.contains(op))
            role = QStringLiteral(" (prologue)");
        else if (r.epilogue.contains(op))
            role = QStringLiteral(" (epilogue)");
        else if (r.kind.contains(QLatin1Char('w')) && r.kind != QLatin1String("prologue-epilogue"))
            role = QStringLiteral(" (in chain)");
        else if (r.kind == QLatin1String("attention"))
            role = QStringLiteral(" (attention core)");
        lines << op + role;
    }
    return lines.join(QLatin1Char('\n'));
}

QPixmap swatch(const QColor& c)
{
    QPixmap pm(12, 12);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(c.darker(150));
    p.setBrush(c);
    p.drawRoundedRect(QRectF(0.5, 0.5, 11, 11), 3, 3);
    return pm;
}

}  // namespace

FusionPlanTableModel::FusionPlanTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void FusionPlanTableModel::setSnapshot(FusionPlanSnapshot snapshot)
{
    beginResetModel();
    m_snapshot = std::move(snapshot);
    applyTimes();
    endResetModel();
}

void FusionPlanTableModel::setMeasuredTimes(const std::map<QString, double>& secondsByGroup, const QString& unreliable)
{
    m_times = secondsByGroup;
    m_timingWarning = secondsByGroup.empty() ? QString() : unreliable;
    applyTimes();
    if (!m_snapshot.rows.empty())
        emit dataChanged(index(0, Measured), index(rowCount() - 1, Measured));
}

void FusionPlanTableModel::clearMeasuredTimes() { setMeasuredTimes({}); }

void FusionPlanTableModel::applyTimes()
{
    for (FusionPlanRow& r : m_snapshot.rows) {
        const auto it = m_times.find(r.group);
        r.measuredSeconds = it == m_times.end() ? -1 : it->second;
    }
}

const FusionPlanRow* FusionPlanTableModel::rowAt(int row) const
{
    return row >= 0 && row < rowCount() ? &m_snapshot.rows[static_cast<std::size_t>(row)] : nullptr;
}

int FusionPlanTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_snapshot.rows.size());
}

int FusionPlanTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant FusionPlanTableModel::data(const QModelIndex& index, int role) const
{
    const FusionPlanRow* r = index.isValid() ? rowAt(index.row()) : nullptr;
    if (r == nullptr || index.column() < 0 || index.column() >= ColumnCount)
        return {};
    if (role == kMembersRole)
        return r->ops;
    if (role == kGroupRole)
        return r->group;
    const auto col = static_cast<Column>(index.column());
    switch (role) {
    case Qt::DisplayRole:
        switch (col) {
        case Group: return r->group;
        case Kind: return r->kind;
        case Ops: return static_cast<int>(r->ops.size());
        case Anchor: return r->anchor;
        case Tile: return r->tile;
        case Saved: return r->bytesSaved > 0 ? formatBytes(r->bytesSaved) : QStringLiteral("0");
        case Redundant: return formatFlops(r->redundantFlops);
        case Measured:
            if (r->measuredSeconds < 0)
                return QStringLiteral("\u2014");
            return m_timingWarning.isEmpty() ? TimingTableModel::formatSeconds(r->measuredSeconds)
                                             : QStringLiteral("\u2248 ") + TimingTableModel::formatSeconds(r->measuredSeconds);
        case Status:
            if (!r->status.isEmpty())
                return r->status;
            return r->advice.isEmpty() ? QStringLiteral("ok")
                                       : QObject::tr("legal; FusePlanner would not fuse: %1").arg(r->advice);
        case ColumnCount: break;
        }
        break;
    case kSortRole:
        switch (col) {
        case Ops: return static_cast<int>(r->ops.size());
        case Saved: return r->bytesSaved;
        case Redundant: return r->redundantFlops;
        case Measured: return r->measuredSeconds;
        default: return data(index, Qt::DisplayRole);
        }
    case Qt::ToolTipRole:
        switch (col) {
        case Group:
            return r->reason.isEmpty() ? r->group : QStringLiteral("%1: %2").arg(r->group, r->reason);
        case Ops: return memberList(*r);
        case Saved:
            return r->predictedBytes >= 0 ? QObject::tr("Predicted global traffic of the kernel: %1; saved %2 "
                                                        "against one kernel per op")
                                                .arg(formatBytes(r->predictedBytes), formatBytes(r->bytesSaved))
                                          : QObject::tr("Saved against one kernel per op: %1").arg(formatBytes(r->bytesSaved));
        case Measured:
            if (r->measuredSeconds < 0)
                return QObject::tr("Not measured yet: run the model (Ctrl+R)");
            if (!m_timingWarning.isEmpty())
                return QObject::tr("Median time of the group's kernel in the last run: %1\nTimings unreliable: %2")
                    .arg(TimingTableModel::formatSeconds(r->measuredSeconds), m_timingWarning);
            return QObject::tr("Median time of the group's kernel in the last run: %1")
                .arg(TimingTableModel::formatSeconds(r->measuredSeconds));
        case Status:
            if (r->status.isEmpty() && !r->advice.isEmpty())
                return QObject::tr("The group follows every fusion rule, but FusePlanner's cost model would not "
                                   "fuse this pair on %1: %2")
                    .arg(m_snapshot.hardware.isEmpty() ? QObject::tr("this hardware") : m_snapshot.hardware, r->advice);
            return r->status.isEmpty() ? QObject::tr("The group follows every fusion rule")
                                       : QStringLiteral("%1: %2").arg(r->rule, r->status);
        default: return data(index, Qt::DisplayRole);
        }
    case Qt::DecorationRole:
        if (col == Group && r->colour.isValid())
            return swatch(r->colour);
        break;
    case Qt::ForegroundRole:
        if (col == Status && !r->status.isEmpty())
            return QBrush(QColor(0xc6, 0x28, 0x28));
        if (col == Measured && r->measuredSeconds >= 0 && !m_timingWarning.isEmpty())
            return QBrush(QColor(0x9a, 0xa0, 0xa6));
        if (col == Status && !r->advice.isEmpty())
            return QBrush(QColor(0xb3, 0x5c, 0x00));
        if (col == Status || (col == Kind && !r->fused()))
            return QBrush(QColor(0x6b, 0x72, 0x7b));
        break;
    case Qt::TextAlignmentRole:
        if (col == Ops || col == Saved || col == Redundant || col == Measured)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        break;
    default: break;
    }
    return {};
}

QVariant FusionPlanTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        switch (static_cast<Column>(section)) {
        case Group: return tr("Group");
        case Kind: return tr("Kind");
        case Ops: return tr("Ops");
        case Anchor: return tr("Anchor");
        case Tile: return tr("Tile");
        case Saved: return tr("Saved");
        case Redundant: return tr("Redundant");
        case Measured: return tr("Measured");
        case Status: return tr("Status");
        case ColumnCount: break;
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (static_cast<Column>(section)) {
        case Tile: return tr("Output tile of a conv chain: rows × columns × channels, filters per tile");
        case Saved: return tr("Predicted global-memory bytes saved against one kernel per op");
        case Redundant: return tr("FLOPs recomputed because of the fusion (halos, weight tiles)");
        case Measured: return tr("Median time of the group's kernel in the last run");
        case Status: return tr("ok, the fusion rule the group breaks, or FusePlanner's advice against a legal conv chain");
        default: break;
        }
    }
    return QAbstractTableModel::headerData(section, orientation, role);
}

}  // namespace tessera::views
