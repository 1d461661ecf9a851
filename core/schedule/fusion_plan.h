#pragma once
/// @file
/// Fusion plans (issue 6): a partition of a graph's operators into kernels, and its legality.
///
/// Semantics (../shared/reference/semantics.md §2.3 Hidet post-scheduling fusion, §2.5 FusePlanner)
/// - A plan is a list of groups; each group becomes one kernel. Every node of the graph except
///   `Constant` nodes (op category Constant: folded before lowering) must be in exactly one group.
///   Groups name their nodes by node name (ir::Node::name, unique in an imported graph), so a plan
///   survives re-import, shape specialisation and JSON round trips; nodes that constant folding
///   removes from the compiled graph are dropped from their group at compile time.
/// - Kinds:
///   - `single`: one op (any op).
///   - `prologue-epilogue` (Hidet): one anchor (usually a non-injective op: Conv, MatMul, a
///     reduction; an injective op may anchor a group of injective ops too) plus injective
///     prologue ops inlined into the anchor's loads and injective epilogue ops inlined into its
///     stores. Epilogue rule: the consumed tensor has exactly one use, is not a graph output, the
///     consumer is invertible for that input (elementwise with the input at the output's full
///     shape, or an index map: Transpose, or Reshape/Flatten/Squeeze/Unsqueeze with static
///     shapes) and none of its other inputs reads the group's outputs. Prologue rule: the
///     producer is injective and inlinable into loads (elementwise or an index map), every use
///     of its output is inside the group, and its output is not a graph input.
///   - `attention` (the hidet planner, core/schedule/attention_pattern.h): the core of scaled
///     dot-product attention, MatMul(Q, K^T) -> elementwise score ops (scale, mask) -> Softmax over
///     the last axis -> MatMul(P, V), computed by one FlashAttention-style kernel (online softmax,
///     the scores never reach global memory). `anchor` is the QK^T MatMul; `prologue` lists ops
///     inlined into the loads of Q, K^T, V and the score ops' other inputs (Hidet's prologue rule:
///     the scaling Muls, K's Transpose, head-split Reshapes), `epilogue` ops inlined into the stores
///     of the PV MatMul's output (Hidet's epilogue rule); every other member is part of the core.
///   - `dw-pw`, `pw-dw`, `pw-pw` (FCM / FusePlanner): two convolutions (depthwise = group equal to
///     input channels; pointwise = 1x1 kernel, group 1, stride 1, no padding) where the second
///     consumes the first's output (through elementwise ops such as ReLU6 = Clip), plus those
///     elementwise ops and elementwise epilogues of the second conv (Clip, a residual Add). The
///     intermediate tensor never reaches global memory; `tile` gives the output tile.
/// - `ops` lists every member in the graph's topological order; `anchor` is one of them (the first
///   convolution for conv chains, the op itself for `single`); `prologue` and `epilogue` are the
///   members before/after the anchor's compute (disjoint, both subsets of ops).
/// - Predictions (FusePlanner's global-memory-access model, in bytes = elements x dtype size):
///   `predictedBytes` is the group kernel's global traffic, `predictedBytesSaved` what it saves
///   against one kernel per member, `redundantFlops` the extra FLOPs recomputed (halos, weight
///   tiles). 0 for groups that save nothing; -1 = not predicted (planner `none`/`hidet` predict
///   bytes from tensor sizes: every tensor that stays inside the group is bytes saved twice: one
///   write and one read).
///
/// Thread rules: plain values; the functions below are pure (graphs only read).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/graph.h"
#include "core/support/expected.h"
#include "core/target/gpu_profile.h"

namespace tessera::schedule {

enum class FusionKind { Single, PrologueEpilogue, DwPw, PwDw, PwPw, Attention };
/// "single", "prologue-epilogue", "dw-pw", "pw-dw", "pw-pw", "attention"
const char* fusionKindName(FusionKind k);
std::optional<FusionKind> parseFusionKind(std::string_view s);
/// True for dw-pw, pw-dw, pw-pw.
bool isConvChain(FusionKind k);

/// Output tile of a conv-chain group (FusePlanner's l1_tile_h/w/d/filters): output rows, columns,
/// channels of the intermediate held per tile, and output filters per tile. 0 = not set.
struct FusionTile {
    std::int64_t h = 0, w = 0, depth = 0, filters = 0;
    bool empty() const { return h == 0 && w == 0 && depth == 0 && filters == 0; }
    bool operator==(const FusionTile&) const = default;
};

struct FusionGroup {
    std::string name;                   ///< "g0", "g1" ... (planners) or the user's name
    FusionKind kind = FusionKind::Single;
    std::vector<std::string> ops;       ///< node names, topological order
    std::string anchor;                 ///< a member of ops
    std::vector<std::string> prologue;  ///< members inlined into the anchor's loads
    std::vector<std::string> epilogue;  ///< members inlined into the anchor's (or chain's) stores
    FusionTile tile;
    std::int64_t predictedBytes = -1;       ///< global bytes of the group's kernel (-1 unknown)
    std::int64_t predictedBytesSaved = 0;   ///< vs one kernel per member
    std::int64_t redundantFlops = 0;        ///< FLOPs recomputed because of the fusion
    std::string reason;                     ///< why the planner made this group (free text)

    bool contains(std::string_view node) const;
};

struct FusionPlan {
    std::string planner;   ///< "none", "hidet", "fuseplanner", "user" (edited), "file"
    std::string hardware;  ///< profile name the plan was made for ("" = none)
    std::vector<FusionGroup> groups;

    /// Index of the group holding `node`, -1 if none.
    int groupOf(std::string_view node) const;
    /// Number of groups with more than one op.
    int fusedGroupCount() const;
};

/// One broken rule of a plan.
struct FusionViolation {
    int group = -1;        ///< index into plan.groups (-1: plan-level, e.g. a node in no group)
    std::string node;      ///< the node the rule is about ("" when none)
    std::string rule;      ///< short key: "coverage", "multi-use", "graph-output", "not-invertible",
                           ///< "not-injective", "prologue-escapes", "not-connected", "cycle",
                           ///< "not-a-chain", "shared-memory", "unknown-node", "kind",
                           ///< "not-attention" (an attention group whose core is not the
                           ///< attention pattern, attention_pattern.h),
                           ///< "not-fusible" (unknown op, control flow, Compute with a reduction,
                           ///< several live outputs; or a prologue that is neither
                           ///< elementwise nor an index map: the fused lowering inlines only
                           ///< those into loads), "reads-group-output" (an
                           ///< epilogue's other input is, or depends on, a group output)
    std::string message;   ///< for people: "Relu_12's input has 2 uses", "tile does not fit
                           ///< shared memory: 132 KiB > 99 KiB"
};

/// Why `consumer` cannot be an epilogue of a group whose outputs include `value` ("" = it can),
/// by Hidet's epilogue rule (uses, graph output, invertibility, other inputs). For the GUI's
/// "why not" at an edge. Invertible consumers: elementwise ops (and Identity, Dropout) reading
/// `value` at the output's full shape, Transpose, and Reshape/Flatten/Squeeze/Unsqueeze with
/// static shapes (lowerGroup maps the stores' indices). Slice, Pad, Gather, Concat, Expand ...
/// are refused as not invertible, with why ("Slice keeps only part of its input"). An other input
/// that merely depends on the group's outputs is refused too (a cycle).
std::string epilogueRefusal(const ir::Graph& g, ir::ValueId value, ir::NodeId consumer,
                            const std::vector<ir::NodeId>& groupMembers);
/// Why `producer` cannot be a prologue of a group with these members ("" = it can). Elementwise
/// producers and index maps (Transpose; the Reshape family with static shapes) are accepted: the
/// fused lowering inlines only those into loads.
std::string prologueRefusal(const ir::Graph& g, ir::NodeId producer, const std::vector<ir::NodeId>& groupMembers);

/// Checks a plan against a graph: coverage (every non-Constant node in exactly one group, no
/// unknown names), each group's kind rules (above), that groups can run in some order (no cycle
/// between groups), and for conv chains with a tile and a profile: the tile's weights + input
/// fit `hw->sharedBytes`. Empty = legal.
std::vector<FusionViolation> checkPlan(const ir::Graph& g, const FusionPlan& plan,
                                       const target::GpuProfile* hw = nullptr);

/// The trivial plan: one `single` group per non-Constant node, named after the node, topological
/// order. planner = "none".
FusionPlan planNone(const ir::Graph& g);

/// Orders the groups topologically (a group after every group it reads from) and members by the
/// graph's topological order. Errors when the groups form a cycle.
support::Expected<FusionPlan> normalizePlan(const ir::Graph& g, FusionPlan plan);

/// JSON form: {"format": "tessera-fusion-plan", "version": 1, "planner", "hardware",
/// "groups": [{"name", "kind", "ops": [...], "anchor", "prologue", "epilogue",
/// "tile": {"h","w","depth","filters"}, "predicted_bytes", "predicted_bytes_saved",
/// "redundant_flops", "reason"}]}. (`tessera-cli plan --json` prints this object plus extras.)
std::string planToJson(const FusionPlan& plan);
/// Parses planToJson's format; `file` names the source in diagnostics. Unknown kinds, missing
/// fields and a newer version are errors.
support::Expected<FusionPlan> planFromJson(const std::string& text, const std::string& file = {});

}  // namespace tessera::schedule
