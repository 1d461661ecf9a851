#pragma once
/// @file
/// `tessera-cli plan MODEL [--planner none|hidet|fuseplanner] [--hw PROFILE|FILE] [--json]
/// (without --planner: a DSL program's own `fuse` statements when it has any, else fuseplanner)
/// [--output FILE] [--check PLAN.json] [--input NAME=FILE.npy]`: makes (or, with --check, loads)
/// a fusion plan for the model (core/schedule/planners.h) on the graph `run` compiles (shapes
/// specialised to the inputs, constants folded) and prints its groups: kind, ops, anchor, tile,
/// predicted global bytes saved, redundant FLOPs, and every rule a group breaks.
/// - plain: a header line (planner, hardware, kernels for ops, fused groups, predicted traffic
///   saved), one line per group, the member ops of fused groups indented under it, then the
///   broken rules.
/// - `--json`: the plan object of schedule::planToJson ({"planner", "hardware", "groups": [{"name",
///   "kind", "ops", "anchor", "prologue", "epilogue", "tile", "predicted_bytes",
///   "predicted_bytes_saved", "redundant_flops", "reason"}]}) plus "model", "op_count",
///   "fused_groups", "predicted_bytes_saved" (sum) and "violations": [{"group", "node", "rule",
///   "message"}].
/// - `--why-not`: also, for every edge between two groups, why its ends are not one kernel
///   (schedule::crossingEdgeReasons / edgeReasonText, the Graph view's edge tooltips): the refusal
///   fusing them would give, FusePlanner's recorded reason, or "fusible: ..."; with `--json` as
///   "crossing_edges": [{"from", "to", "from_group", "to_group", "fusible", "refusal",
///   "planner_note"}].
/// - `--output FILE`: also writes the plan JSON (what `run --plan FILE` reads; edit it to fuse or
///   split by hand).
///
/// Exit codes: 0 success, 2 bad input (model, planner, profile, plan file), 3 the plan breaks a
/// rule (--check), 1 internal error.
/// Thread rules: none (runs on the caller's thread).

#include <iosfwd>
#include <string>
#include <vector>

namespace tessera::cli {

struct PlanCmdOptions {
    std::string modelPath;
    std::string planner;              ///< empty: the program's fuse statements if any, else fuseplanner
    std::string hw;                   ///< profile name or JSON file; empty = h200
    bool json = false;
    bool whyNot = false;              ///< list why the ends of each edge between groups are not one kernel
    std::string output;               ///< write the plan JSON here
    std::string check;                ///< check this plan file instead of planning
    std::vector<std::string> inputs;  ///< NAME=FILE.npy
};

int runPlanCommand(const PlanCmdOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
