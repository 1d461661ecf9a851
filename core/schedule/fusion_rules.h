#pragma once
/// @file
/// Internal helpers of the fusion planners and checks (issue 6; implemented in fusion_plan.cpp).
/// Not a public API: the GUI and CLI use fusion_plan.h / planners.h.
///
/// Thread rules: pure functions over a graph that is only read.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/schedule/fusion_plan.h"

namespace tessera::schedule::detail {

/// "" when `n` may join a group with other ops; else why not, e.g. "Loop_3 (Loop) is not
/// fusible: control flow". Not fusible: ops without a registry schema, control flow (If, Loop,
/// Scan), Constant, tessera Compute nodes with a reduction (or without a definition), ops with
/// more than one output.
std::string notFusibleReason(const ir::Graph& g, ir::NodeId n);
/// Hidet's injective: the schema's flag; Compute nodes: a definition without reduction axes.
bool isInjectiveNode(const ir::Graph& g, ir::NodeId n);
/// Ops the fused lowering inlines into loads/stores: category Elementwise, Identity, Dropout.
bool isElementwiseNode(const ir::Graph& g, ir::NodeId n);
/// Ops that are pure index maps, a bijection between their input's and output's elements:
/// Transpose (permuted indices) and the Reshape family Reshape, Flatten, Squeeze, Unsqueeze
/// (same flat row-major offset). Hidet's epilogue rule calls them invertible; the fused lowering
/// rewrites a store through them (epilogue) or a load (prologue) at the mapped index.
bool isIndexMapNode(const ir::Graph& g, ir::NodeId n);
/// True for the Reshape family (Reshape, Flatten, Squeeze, Unsqueeze): the element at flat
/// row-major offset p of the input is the element at p of the output.
bool isReshapeLikeNode(const ir::Graph& g, ir::NodeId n);
/// A Constant node (op category Constant): folded before lowering, in no group.
bool isConstantNode(const ir::Graph& g, ir::NodeId n);

/// Bytes of a value: elements x dtype size; -1 when the shape is not static or the size unknown.
std::int64_t valueBytes(const ir::Graph& g, ir::ValueId v);
/// Uses of `v`: input slots reading it over all nodes (Mul(x, x) counts 2).
int useCount(const ir::Graph& g, ir::ValueId v);
/// True when `v` is produced by one of `members` or (transitively) computed from their outputs.
bool dependsOnMembers(const ir::Graph& g, ir::ValueId v, const std::set<ir::NodeId>& members);

/// Global-traffic prediction of a group with these members (fusion_plan.h): `bytes` = external
/// inputs (each distinct value once, initializers included) + outputs (graph outputs or read
/// outside); -1 when one of them has no static size. `saved` = 2 x bytes of every tensor produced
/// and only read inside (not a graph output); unknown sizes count 0.
struct GroupTraffic {
    std::int64_t bytes = -1;
    std::int64_t saved = 0;
};
GroupTraffic groupTraffic(const ir::Graph& g, const std::vector<ir::NodeId>& members);

/// Indices of the groups of `plan` that lie on a cycle between groups (or between two cycles),
/// ascending; empty when the groups can run in some order.
std::vector<int> groupsOnCycle(const ir::Graph& g, const FusionPlan& plan);

}  // namespace tessera::schedule::detail
