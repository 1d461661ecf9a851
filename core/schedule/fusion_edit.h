#pragma once
/// @file
/// Editing a fusion plan by hand (issue 6): the group a "Fuse" of some nodes makes, whether the
/// edit is legal, and for every graph edge between two groups why its ends are not one kernel
/// (the GUI's edge tooltips and `tessera-cli plan --why-not`).
///
/// Semantics
/// - fusedGroupFor: two convolutions (depthwise/pointwise) with only elementwise ops besides make
///   a dw-pw / pw-dw / pw-pw chain anchored at the first conv, with FusePlanner's best tile and
///   predictions on `hw`; anything else is prologue-epilogue anchored at the first non-injective
///   member (the last one when all are injective), earlier members prologue, later ones epilogue.
/// - fuseNodes: the groups of the named nodes are merged whole into one new group named `name`
///   (nodes in no group join as they are); the plan is normalised (a cycle between groups refuses)
///   and checked (checkPlan on `hw`): a violation of the new group, or a new plan-level one (not
///   among `existing`), refuses the edit with its node and message, e.g. "Relu_1's input 'c' has
///   2 uses".
/// - crossingEdgeReasons: one entry per producer -> consumer pair of nodes whose groups differ,
///   with what fuseNodes({producer, consumer}) says and FusePlanner's recorded reason for a conv
///   pair it did not fuse across that edge (from the producer group's reason).
///
/// Thread rules: pure functions (graphs and plans only read).

#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/schedule/fusion_plan.h"
#include "core/support/expected.h"
#include "core/target/gpu_profile.h"

namespace tessera::schedule {

/// The group a hand fusion of `members` (node names of `g`, any order, duplicates ignored) makes,
/// named `name`. Errors name a member that is not in `g` ("... is not in the compiled graph
/// (folded into a constant)").
support::Expected<FusionGroup> fusedGroupFor(const ir::Graph& g, const std::vector<std::string>& members,
                                             const target::GpuProfile& hw, const std::string& name);

/// The result of fuseNodes: `ok` with the new plan (planner "user", normalised) and the new
/// group's name, or the node the refusal is about and why.
struct FuseAttempt {
    bool ok = false;
    std::string node;
    std::string message;
    FusionPlan plan;
    std::string group;
};

/// Merges the groups of `names` (node names of `g`, at least two distinct, all in `g`) into one
/// group named `name`, see the file comment. `existing` = checkPlan of `plan` (its plan-level
/// violations do not refuse the edit).
FuseAttempt fuseNodes(const ir::Graph& g, const FusionPlan& plan, const std::vector<std::string>& names,
                      const target::GpuProfile& hw, const std::vector<FusionViolation>& existing,
                      const std::string& name);

/// A name "u1", "u2", ... used by no group of `plan` and no node of `g`.
std::string freshGroupName(const ir::Graph& g, const FusionPlan& plan);

/// Why the two ends of an edge are in different kernels.
struct EdgeReason {
    std::string from, to;            ///< node names (producer, consumer)
    std::string fromGroup, toGroup;  ///< their groups' names
    bool fusible = false;            ///< fuseNodes({from, to}) is accepted
    std::string refusal;             ///< else its message
    std::string plannerNote;         ///< "FusePlanner did not fuse dw-pw A -> B on h200: ..." or ""
};

/// For every producer -> consumer pair of nodes of `g` in different groups of `plan` (graph
/// order of the consumers, then of their inputs).
std::vector<EdgeReason> crossingEdgeReasons(const ir::Graph& g, const FusionPlan& plan, const target::GpuProfile& hw);

/// The text people read for `r` (the GUI's edge tooltip, the CLI's lines):
/// "A (g1) → B (g2): not one kernel" (a group named after its only node is not repeated), then on
/// the next line the refusal; or FusePlanner's note and "The rules allow it: select both nodes and
/// Fuse (KEYS)"; or "fusible: select both nodes and Fuse (KEYS)". `fuseKeys` e.g. "Ctrl+G".
std::string edgeReasonText(const EdgeReason& r, const std::string& fuseKeys);

}  // namespace tessera::schedule
