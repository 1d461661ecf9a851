#pragma once
/// @file
/// `tessera-cli plan MODEL [--planner none|hidet|fuseplanner] [--target cpu|cuda] [--hw PROFILE|FILE] [--json]
/// (without --planner: a DSL program's own `fuse` statements when it has any, else fuseplanner)
/// [--output FILE] [--check PLAN.json] [--input NAME=FILE.npy]`: makes (or, with --check, loads)
/// a fusion plan for the model (core/schedule/planners.h) on the graph `run` compiles (shapes
/// specialised to the inputs, constants folded) and prints its groups: kind, ops, anchor, tile,
/// predicted global bytes saved, redundant FLOPs, and every rule a group breaks. The profile is
/// `--hw`, else the target's as in `run`: `host` (this CPU) for `--target cpu` (the default),
/// `h200` for `--target cuda`; the header says which and whether it was the default.
/// - plain: a header line (planner, hardware, kernels for ops, fused groups, predicted traffic
///   saved in binary units, split into conv chains (FusePlanner's access model) and other groups
///   (2 x the intermediate tensors)), a table with one line per group (column widths from the
///   content; names over 28, anchors over 40 and tiles over 20 characters cut in the middle with
///   "…"), the member ops of fused groups indented under it, then the broken rules (each once,
///   with its group; nothing on stderr).
/// - `--json`: the plan object of schedule::planToJson ({"planner", "hardware", "groups": [{"name",
///   "kind", "ops", "anchor", "prologue", "epilogue", "tile", "predicted_bytes",
///   "predicted_bytes_saved", "redundant_flops", "reason"}]}) plus "model", "op_count",
///   "fused_groups", "predicted_bytes_saved" (sum), "predicted_bytes_saved_conv_chains",
///   "predicted_bytes_saved_other_groups", "target", "hardware_profile",
///   "hardware_profile_is_default" and "violations": [{"group", "node", "rule",
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
    std::string target = "cpu";       ///< "cpu" or "cuda": picks the default profile
    std::string hw;                   ///< profile name or JSON file; empty = the target's (host, h200)
    bool json = false;
    bool whyNot = false;              ///< list why the ends of each edge between groups are not one kernel
    std::string output;               ///< write the plan JSON here
    std::string check;                ///< check this plan file instead of planning
    std::vector<std::string> inputs;  ///< NAME=FILE.npy
};

int runPlanCommand(const PlanCmdOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
