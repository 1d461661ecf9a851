#include "app/cli/plan_cmd.h"

#include <cstdio>
#include <map>
#include <set>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/inspect.h"
#include "app/cli/run_cmd.h"
#include "core/ir/graph.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/host_profile.h"
#include "core/pipeline/prepare.h"
#include "core/schedule/fusion_edit.h"
#include "core/schedule/planners.h"
#include "core/support/atomic_file.h"
#include "core/target/gpu_profile.h"

namespace tessera::cli {

namespace {

void printDiagnostics(const support::DiagnosticList& d, std::ostream& err) {
    for (const auto& x : d.items()) err << x.format() << "\n";
}

std::string megabytes(std::int64_t bytes) {
    char b[32];
    if (bytes < 0) return "-";
    if (bytes >= 1000000)
        std::snprintf(b, sizeof b, "%.2f MB", static_cast<double>(bytes) / 1e6);
    else if (bytes >= 1000)
        std::snprintf(b, sizeof b, "%.1f kB", static_cast<double>(bytes) / 1e3);
    else
        std::snprintf(b, sizeof b, "%lld B", static_cast<long long>(bytes));
    return b;
}

std::string flopsText(std::int64_t f) {
    char b[32];
    if (f >= 1000000)
        std::snprintf(b, sizeof b, "%.2f M", static_cast<double>(f) / 1e6);
    else
        std::snprintf(b, sizeof b, "%lld", static_cast<long long>(f));
    return b;
}

/// The end of a node name is its most distinctive part (".../conv.2/Conv").
std::string shortName(const std::string& s, std::size_t width) {
    if (s.size() <= width) return s;
    return "..." + s.substr(s.size() - (width - 3));
}

std::string tileText(const schedule::FusionTile& t) {
    if (t.empty()) return "-";
    std::string r = std::to_string(t.h) + "x" + std::to_string(t.w);
    if (t.depth > 0) r += " d" + std::to_string(t.depth);
    if (t.filters > 0) r += " f" + std::to_string(t.filters);
    return r;
}

}  // namespace

int runPlanCommand(const PlanCmdOptions& options, std::ostream& out, std::ostream& err) {
    ir::Model model;
    std::vector<ir::TensorData> inputs;
    if (int rc = prepareInputs(options.modelPath, options.inputs, model, inputs, err); rc != kExitOk) return rc;
    auto hw = pipeline::findHardwareProfile(options.hw.empty() ? "h200" : options.hw);
    if (!hw.ok()) {
        printDiagnostics(hw.diagnostics(), err);
        return kExitBadInput;
    }
    // Plan on the graph `run` compiles: shapes specialised to the inputs, constants folded.
    auto spec = pipeline::specialiseModel(model, inputs);
    if (!spec.ok()) {
        printDiagnostics(spec.diagnostics(), err);
        return kExitBadInput;
    }
    const ir::Graph& g = spec->graph;

    schedule::FusionPlan plan;
    if (!options.check.empty()) {
        std::ifstream in(options.check, std::ios::binary);
        if (!in) {
            err << "error: --check " << options.check << ": cannot read the file\n";
            return kExitBadInput;
        }
        std::ostringstream ss;
        ss << in.rdbuf();
        auto p = schedule::planFromJson(ss.str(), options.check);
        if (!p.ok()) {
            printDiagnostics(p.diagnostics(), err);
            return kExitBadInput;
        }
        plan = std::move(*p);
    } else if (options.planner.empty() && !spec->program.fusions.empty()) {
        // A program's own fuse statements are its plan (as `run` compiles it) unless a planner is named.
        plan = pipeline::programFusionPlan(*spec);
        // Nodes the statements leave out run alone, as in `run`.
        for (const auto& grp : schedule::planNone(g).groups)
            if (plan.groupOf(grp.ops.front()) < 0) plan.groups.push_back(grp);
        auto ordered = schedule::normalizePlan(g, plan);
        if (ordered.ok()) plan = std::move(*ordered);
    } else {
        auto p = schedule::makePlan(g, options.planner.empty() ? "fuseplanner" : options.planner, *hw);
        if (!p.ok()) {
            printDiagnostics(p.diagnostics(), err);
            return kExitBadInput;
        }
        plan = std::move(*p);
    }
    auto violations = schedule::checkPlan(g, plan, &*hw);
    // A hand-written plan may leave nodes out: `run` runs them alone, so they are notes, not errors.
    std::vector<std::string> unplanned;
    if (!options.check.empty()) {
        std::erase_if(violations, [&](const schedule::FusionViolation& v) {
            if (v.rule != "coverage" || v.group >= 0 || v.node.empty() || plan.groupOf(v.node) >= 0) return false;
            unplanned.push_back(v.node);
            return true;
        });
        std::map<std::string, int> names;
        for (std::size_t i = 0; i < plan.groups.size(); ++i)
            if (++names[plan.groups[i].name] == 2)
                violations.push_back({static_cast<int>(i), "", "duplicate-name",
                                      "two groups are named '" + plan.groups[i].name + "'"});
    }

    if (!options.output.empty()) {
        std::string why;
        if (!support::writeFileAtomically(options.output, schedule::planToJson(plan), why)) {
            err << "error: --output " << options.output << ": " << why << "\n";
            return kExitBadInput;
        }
    }

    std::set<std::string> opNames;
    int unknownOps = 0;
    for (const auto& grp : plan.groups)
        for (const auto& op : grp.ops) {
            if (g.findNode(op) == ir::kNoNode) ++unknownOps;
            else opNames.insert(op);
        }
    const int ops = static_cast<int>(opNames.size());
    std::int64_t saved = 0;
    for (const auto& grp : plan.groups) saved += std::max<std::int64_t>(0, grp.predictedBytesSaved);

    if (options.json) {
        nlohmann::json j = nlohmann::json::parse(schedule::planToJson(plan));
        j["model"] = options.modelPath;
        j["op_count"] = ops;
        j["fused_groups"] = plan.fusedGroupCount();
        j["predicted_bytes_saved"] = saved;
        j["hardware_profile"] = nlohmann::json::parse(target::gpuProfileToJson(*hw));
        if (options.whyNot) {
            j["crossing_edges"] = nlohmann::json::array();
            for (const schedule::EdgeReason& r : schedule::crossingEdgeReasons(g, plan, *hw))
                j["crossing_edges"].push_back({{"from", r.from}, {"to", r.to}, {"from_group", r.fromGroup},
                                               {"to_group", r.toGroup}, {"fusible", r.fusible},
                                               {"refusal", r.refusal}, {"planner_note", r.plannerNote}});
        }
        j["violations"] = nlohmann::json::array();
        for (const auto& v : violations)
            j["violations"].push_back({{"group", v.group}, {"node", v.node}, {"rule", v.rule}, {"message", v.message}});
        out << j.dump(2) << "\n";
    } else {
        out << options.modelPath << ": " << (plan.planner.empty() ? "plan" : plan.planner) << " plan for "
            << hw->name << " (" << hw->sms << " SMs, " << hw->sharedBytes / 1024 << " KiB shared memory per block): "
            << plan.groups.size() << (plan.groups.size() == 1 ? " kernel for " : " kernels for ") << ops
            << (ops == 1 ? " op, " : " ops, ") << plan.fusedGroupCount()
            << " fused, predicted global traffic saved " << megabytes(saved) << "\n";
        if (plan.planner == "fuseplanner" || plan.planner == "hidet")
            out << "(predicted bytes: FusePlanner's access model for conv pairs, tensor sizes for Hidet groups; the "
                   "two are not comparable across planners)\n";
        out << std::left << std::setw(7) << "group" << std::setw(19) << "kind" << std::setw(5) << "ops"
            << std::setw(34) << "anchor" << std::setw(14) << "tile" << std::right << std::setw(12) << "saved"
            << std::setw(14) << "redundant" << "\n";
        for (const auto& grp : plan.groups) {
            out << std::left << std::setw(7) << grp.name << std::setw(19) << schedule::fusionKindName(grp.kind)
                << std::setw(5) << grp.ops.size() << std::setw(34) << shortName(grp.anchor, 33) << std::setw(14)
                << tileText(grp.tile) << std::right << std::setw(12)
                << (grp.kind == schedule::FusionKind::Single ? std::string("-") : megabytes(grp.predictedBytesSaved))
                << std::setw(14)
                << (grp.kind == schedule::FusionKind::Single ? std::string("-") : flopsText(grp.redundantFlops) + " FLOP")
                << "\n";
            if (grp.ops.size() > 1) {
                for (const auto& op : grp.ops) {
                    const ir::NodeId id = g.findNode(op);
                    out << "         " << (op == grp.anchor ? "* " : "  ") << op;
                    if (id != ir::kNoNode) out << " (" << g.node(id).opType << ")";
                    out << "\n";
                }
                if (!grp.reason.empty()) out << "         " << grp.reason << "\n";
            }
        }
        if (options.whyNot) {
            const auto reasons = schedule::crossingEdgeReasons(g, plan, *hw);
            out << "edges between kernels (" << reasons.size() << "):\n";
            for (const schedule::EdgeReason& r : reasons) {
                std::istringstream lines(schedule::edgeReasonText(r, "Ctrl+G in the GUI, or edit the plan file"));
                std::string line;
                for (bool first = true; std::getline(lines, line); first = false) out << (first ? "  " : "    ") << line << "\n";
            }
        }
        if (!violations.empty()) {
            out << "broken rules:\n";
            for (const auto& v : violations)
                out << "  " << (v.group >= 0 && v.group < static_cast<int>(plan.groups.size())
                                    ? plan.groups[static_cast<std::size_t>(v.group)].name + ": "
                                    : std::string())
                    << v.message << " [" << v.rule << "]\n";
        }
        if (!unplanned.empty())
            out << "note: " << unplanned.size() << " node(s) are in no group and run alone: " << unplanned.front()
                << (unplanned.size() > 1 ? ", ..." : "") << "\n";
        if (unknownOps > 0 && unknownOps * 2 > unknownOps + ops)
            out << "note: most of the plan's nodes are not in " << options.modelPath
                << ": is the plan for another model?\n";
        if (!options.check.empty() && violations.empty()) out << "the plan is legal\n";
        if (!options.output.empty()) out << "plan written to " << options.output << "\n";
    }
    if (!violations.empty()) {
        for (const auto& v : violations) err << "error: " << v.message << "\n";
        return 3;
    }
    return kExitOk;
}

}  // namespace tessera::cli
