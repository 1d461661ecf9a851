#pragma once
/// @file
/// The fusion-plan table (issue 6): one row per group of a FusionPlanSnapshot.
///
/// Columns: Group (with the group's cluster colour as decoration), Kind, Ops (member count; the
/// tooltip lists them with their roles), Anchor, Tile, Saved (predicted global bytes saved),
/// Redundant (FLOPs recomputed), Measured (median seconds of the group's kernel in the last run,
/// "—" before one; "≈ 8.000 ms" in grey, with the reason in the tooltip, when the run's timings are
/// unreliable), Status ("ok", the broken rule's message in red, or for a legal conv chain that
/// FusePlanner would not make "legal; FusePlanner would not fuse: WHY" in amber).
/// Qt::UserRole (kSortRole) gives sortable raw values (numbers for the numeric columns);
/// kMembersRole gives the row's member names (QStringList) and kGroupRole its group name in any
/// column.
///
/// Thread rules: UI thread only.

#include <map>

#include <QAbstractTableModel>

#include "views/fusion/fusion_plan_snapshot.h"

namespace tessera::views {

class FusionPlanTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Group, Kind, Ops, Anchor, Tile, Saved, Redundant, Measured, Status, ColumnCount };
    static constexpr int kSortRole = Qt::UserRole;
    static constexpr int kMembersRole = Qt::UserRole + 1;
    static constexpr int kGroupRole = Qt::UserRole + 2;

    explicit FusionPlanTableModel(QObject* parent = nullptr);

    /// Replaces the rows (a model reset). Measured times of groups whose names stay are kept.
    void setSnapshot(FusionPlanSnapshot snapshot);
    const FusionPlanSnapshot& snapshot() const { return m_snapshot; }
    /// Measured median seconds per group name (a run's KernelReport::group); groups not in the
    /// map show "—". `unreliable` non-empty: the run's timings are suspect (the Timings dock's
    /// "Timings unreliable" reason, e.g. other processes took the CPUs and medians sit at the
    /// scheduler tick); the cells show "≈ value" in grey and the reason in their tooltip.
    /// Emits dataChanged for the Measured column only.
    void setMeasuredTimes(const std::map<QString, double>& secondsByGroup, const QString& unreliable = QString());
    void clearMeasuredTimes();
    /// The reason the measured times are unreliable ("" when they are not, or there are none).
    const QString& timingWarning() const { return m_timingWarning; }
    /// The row (nullptr when out of range).
    const FusionPlanRow* rowAt(int row) const;

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void applyTimes();

    FusionPlanSnapshot m_snapshot;
    std::map<QString, double> m_times;
    QString m_timingWarning;
};

}  // namespace tessera::views
