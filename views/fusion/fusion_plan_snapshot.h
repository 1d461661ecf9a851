#pragma once
/// @file
/// What the fusion-plan views draw (issue 6): one row per fusion group of a
/// schedule::FusionPlan, with the plan's broken rules (schedule::checkPlan) attached to their
/// group, and a fixed colour per fused group shared by the plan table and the graph's clusters.
///
/// Units: bytes (elements x dtype size, FusePlanner's global-memory-access model), FLOPs, seconds.
/// Thread rules: plain values and pure functions; any thread.

#include <map>
#include <vector>

#include <QColor>
#include <QString>
#include <QStringList>

#include "core/schedule/fusion_plan.h"

namespace tessera::views {

struct FusionPlanRow {
    QString group;                 ///< group name ("g3", or the node's name for a single)
    QString kind;                  ///< schedule::fusionKindName
    QStringList ops;               ///< member node names, topological order
    QString anchor;
    QStringList prologue, epilogue;
    QString tile;                  ///< "7×7×32 · 64 filters", "" when the group has no tile
    qint64 bytesSaved = 0;         ///< predicted global bytes saved (FusionGroup::predictedBytesSaved)
    qint64 predictedBytes = -1;    ///< predicted global bytes of the group's kernel (-1 unknown)
    qint64 redundantFlops = 0;
    double measuredSeconds = -1;   ///< median of the group's kernel in the last run (-1: none yet)
    QString status;                ///< "" = legal; else the broken rules' messages joined by "; "
    QString rule;                  ///< first broken rule's key ("multi-use", ...), "" when legal
    QString reason;                ///< the planner's note on why the group exists
    QString advice;                ///< a legal conv chain FusePlanner would not make: its reason ("" none)
    QColor colour;                 ///< fusionGroupColour for fused groups; invalid for singles

    bool fused() const { return ops.size() > 1; }
    /// A dw-pw / pw-dw / pw-pw group: its bytes saved come from FusePlanner's access model.
    bool convChain() const;
};

struct FusionPlanSnapshot {
    QString planner;   ///< FusionPlan::planner
    QString hardware;  ///< FusionPlan::hardware
    std::vector<FusionPlanRow> rows;  ///< plan order

    int fusedGroupCount() const;
    /// Sum of bytesSaved over the rows (unknown = 0).
    qint64 totalBytesSaved() const;
    /// The part of totalBytesSaved() from conv chains (FusePlanner's global-memory-access model,
    /// with tiles and halos); the rest is from the other groups (2x each tensor kept inside, its
    /// write and its read). The two models are not the same measure.
    qint64 convChainBytesSaved() const;
    /// Row of group `name`, -1 if none.
    int rowOf(const QString& group) const;
    /// Row whose group holds node `node`, -1 if none.
    int rowOfNode(const QString& node) const;
};

/// Colour of the `fusedIndex`-th fused group (0-based, in plan order) from a fixed palette of
/// light, distinct hues (cycled).
QColor fusionGroupColour(int fusedIndex);

/// The rows of `plan`; `violations` (checkPlan of the same plan) go to their group's status
/// (plan-level ones, group -1, are not shown in rows); `advice` (group name -> FusePlanner's
/// reason not to make that conv chain, app::PlanSession::plannerAdvice) to their row's advice.
FusionPlanSnapshot makeFusionPlanSnapshot(const schedule::FusionPlan& plan,
                                          const std::vector<schedule::FusionViolation>& violations = {},
                                          const std::map<std::string, std::string>& advice = {});

/// "1.50 MiB", "12.0 KiB", "512 B"; "—" for negative (unknown).
QString formatBytes(qint64 bytes);
/// "1.20 GFLOP", "3.4 MFLOP", "512 FLOP", "0".
QString formatFlops(qint64 flops);
/// "7×7×32 · 64 filters" ("" for an empty tile).
QString formatTile(const schedule::FusionTile& tile);
/// A node path as the plan table draws it: the path parts that only repeat the start of the next
/// part are dropped ("/features/features.3/conv/conv.0/conv.0.0/Conv" -> "features.3/conv.0.0/Conv",
/// the block and the layer an exporter nests stay); names without '/' are returned as they are.
QString compactNodeName(const QString& name);

}  // namespace tessera::views
