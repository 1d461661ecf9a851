#include "app/cli/plan_cmd.h"
#include "app/cli/cli_output.h"

#include <algorithm>
#include <array>
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
#include "core/pipeline/engine.h"
#include "core/pipeline/host_profile.h"
#include "core/schedule/fusion_edit.h"
#include "core/schedule/planners.h"
#include "core/support/atomic_file.h"
#include "core/target/gpu_profile.h"

namespace tessera::cli {

namespace {

std::string flopsText(std::int64_t f) {
    char b[32];
    if (f >= 1000000)
        std::snprintf(b, sizeof b, "%.2f M", static_cast<double>(f) / 1e6);
    else
        std::snprintf(b, sizeof b, "%lld", static_cast<long long>(f));
    return b;
}

/// Characters on screen: UTF-8 code points (node names are mostly ASCII; the ellipsis is one).
std::size_t displayWidth(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

/// `s` cut to `width` characters by replacing its middle with "…" (both ends of a node name say
/// most: "/features/features.1…/conv.1/Conv").
std::string elideMiddle(const std::string& s, std::size_t width) {
    std::vector<std::string> chars;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t len = 1;
        while (i + len < s.size() && (static_cast<unsigned char>(s[i + len]) & 0xC0) == 0x80) ++len;
        chars.push_back(s.substr(i, len));
        i += len;
    }
    if (chars.size() <= width || width < 3) return s;
    const std::size_t tail = (width - 1) / 2, head = width - 1 - tail;
    std::string r;
    for (std::size_t i = 0; i < head; ++i) r += chars[i];
    r += "\u2026";
    for (std::size_t i = chars.size() - tail; i < chars.size(); ++i) r += chars[i];
    return r;
}

std::string padRight(const std::string& s, std::size_t width) {
    const std::size_t w = displayWidth(s);
    return w >= width ? s : s + std::string(width - w, ' ');
}

std::string padLeft(const std::string& s, std::size_t width) {
    const std::size_t w = displayWidth(s);
    return w >= width ? s : std::string(width - w, ' ') + s;
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
    std::shared_ptr<const ir::Model> model;
    std::vector<ir::TensorData> given;
    if (int rc = loadModelAndInputs(options.modelPath, options.inputs, model, given, err); rc != kExitOk) return rc;
    if (options.target != "cpu" && options.target != "cuda") {
        err << "error: --target " << options.target << ": expected cpu or cuda\n";
        return kExitBadInput;
    }
    // The same profile `run` plans for: --hw, else the target's (host for the CPU, h200 for CUDA).
    const bool defaultHw = options.hw.empty();
    auto hw = pipeline::findHardwareProfile(defaultHw ? defaultProfileName(options.target) : options.hw);
    if (!hw.ok()) {
        printDiagnostics(hw.diagnostics(), err);
        return kExitBadInput;
    }
    // Plan on the graph `run` compiles: shapes specialised to the inputs, constants folded.
    std::shared_ptr<const pipeline::PreparedModel> prepared;
    if (int rc = prepareModel(model, given, /*shapesOnly=*/false, prepared, err); rc != kExitOk) return rc;
    const ir::Model& spec = prepared->model;
    const ir::Graph& g = spec.graph;

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
    } else if (options.planner.empty() && !spec.program.fusions.empty()) {
        // A program's own fuse statements are its plan (as `run` compiles it) unless a planner is named.
        plan = pipeline::programFusionPlan(spec);
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
        // A plan that covers none of the graph is not a hand plan that leaves a few nodes out:
        // it fuses nothing and `run` would compile every node alone. That is an error, not a note.
        const bool coversNone = std::none_of(plan.groups.begin(), plan.groups.end(), [&](const schedule::FusionGroup& grp) {
            return std::any_of(grp.ops.begin(), grp.ops.end(), [&](const std::string& op) { return g.findNode(op) != ir::kNoNode; });
        });
        if (coversNone && !unplanned.empty()) {
            const std::string none = "covers none of the graph's " + std::to_string(unplanned.size()) +
                                     (unplanned.size() == 1 ? " op" : " ops");
            violations.push_back({-1, "", "coverage",
                                  plan.groups.empty() ? "the plan is empty (no groups): it " + none
                                                      : "the plan " + none + ": none of its node names is in the graph"});
            unplanned.clear();
        }
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
    // Two models: FusePlanner's access model for conv chains, 2 x the inside tensors for the rest.
    std::int64_t savedChains = 0, savedOther = 0;
    for (const auto& grp : plan.groups)
        (schedule::isConvChain(grp.kind) ? savedChains : savedOther) += std::max<std::int64_t>(0, grp.predictedBytesSaved);
    const std::int64_t saved = savedChains + savedOther;

    if (options.json) {
        nlohmann::json j = nlohmann::json::parse(schedule::planToJson(plan));
        j["model"] = options.modelPath;
        j["op_count"] = ops;
        j["fused_groups"] = plan.fusedGroupCount();
        j["predicted_bytes_saved"] = saved;
        j["predicted_bytes_saved_conv_chains"] = savedChains;
        j["predicted_bytes_saved_other_groups"] = savedOther;
        j["target"] = options.target;
        j["hardware_profile_is_default"] = defaultHw;
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
        // A plan file: what it was made for, and the profile it is checked against now.
        std::string what = (plan.planner.empty() ? std::string("plan") : plan.planner) + " plan for ";
        if (!options.check.empty()) {
            std::string made = plan.planner.empty() ? std::string() : "made by " + plan.planner;
            if (!plan.hardware.empty()) made += (made.empty() ? "made " : " ") + std::string("for ") + plan.hardware;
            what = "plan " + std::filesystem::path(options.check).filename().string() +
                   (made.empty() ? std::string() : " (" + made + ")") + ", checked against ";
        }
        out << options.modelPath << ": " << what << hw->name << " (" << (defaultHw ? "the default for --target " + options.target + "; " : std::string())
            << hw->sms << " SMs, " << hw->sharedBytes / 1024 << " KiB shared memory per block): "
            << plan.groups.size() << (plan.groups.size() == 1 ? " kernel for " : " kernels for ") << ops
            << (ops == 1 ? " op, " : " ops, ") << plan.fusedGroupCount() << " fused, predicted global traffic saved "
            << bytesText(saved);
        if (saved > 0)
            out << ": conv chains " << bytesText(savedChains) << " (FusePlanner's access model) + other groups "
                << bytesText(savedOther) << " (intermediate tensors)";
        out << "\n";
        if (savedChains > 0 && savedOther > 0)
            out << "(the two parts come from different models: compare plans part by part)\n";
        // Column widths from the content; long names and tiles are cut in the middle.
        const std::size_t kMaxGroup = 28, kMaxAnchor = 40, kMaxTile = 20;
        struct Row {
            std::string group, kind, ops, anchor, tile, saved, redundant;
        };
        std::vector<Row> rows;
        Row head{"group", "kind", "ops", "anchor", "tile", "saved", "redundant"};
        for (const auto& grp : plan.groups) {
            const bool single = grp.kind == schedule::FusionKind::Single;
            rows.push_back({elideMiddle(grp.name, kMaxGroup), schedule::fusionKindName(grp.kind), std::to_string(grp.ops.size()),
                            elideMiddle(grp.anchor, kMaxAnchor), elideMiddle(tileText(grp.tile), kMaxTile),
                            single ? std::string("-") : bytesText(grp.predictedBytesSaved),
                            single ? std::string("-") : flopsText(grp.redundantFlops) + " FLOP"});
        }
        std::array<std::size_t, 7> width{};
        const auto widen = [&width](const Row& r) {
            const std::array<const std::string*, 7> cells{&r.group, &r.kind, &r.ops, &r.anchor, &r.tile, &r.saved, &r.redundant};
            for (std::size_t i = 0; i < cells.size(); ++i) width[i] = std::max(width[i], displayWidth(*cells[i]));
        };
        widen(head);
        for (const Row& r : rows) widen(r);
        const auto line = [&](const Row& r) {
            std::string l = padRight(r.group, width[0]) + "  " + padRight(r.kind, width[1]) + "  " + padRight(r.ops, width[2]) +
                            "  " + padRight(r.anchor, width[3]) + "  " + padRight(r.tile, width[4]) + "  " +
                            padLeft(r.saved, width[5]) + "  " + padLeft(r.redundant, width[6]);
            return l;
        };
        out << line(head) << "\n";
        for (std::size_t gi = 0; gi < plan.groups.size(); ++gi) {
            const auto& grp = plan.groups[gi];
            out << line(rows[gi]) << "\n";
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
    // Each broken rule is printed once, above (with its group) or in the JSON.
    if (!violations.empty()) return 3;
    return kExitOk;
}

}  // namespace tessera::cli
