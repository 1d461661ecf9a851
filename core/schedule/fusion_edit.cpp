// Hand edits of fusion plans (issue 6): see fusion_edit.h. Moved out of the GUI's PlanSession so
// that `tessera-cli plan --why-not` and the GUI's edge tooltips say the same.
#include "core/schedule/fusion_edit.h"

#include <algorithm>
#include <optional>
#include <set>

#include "core/ir/op_registry.h"
#include "core/schedule/planners.h"

namespace tessera::schedule {

namespace {

const ir::OpSchema* schemaOf(const ir::Graph& g, ir::NodeId n)
{
    const ir::Node& node = g.node(n);
    return ir::OpRegistry::instance().find(node.domain, node.opType);
}

bool injective(const ir::Graph& g, ir::NodeId n)
{
    const ir::OpSchema* s = schemaOf(g, n);
    return s != nullptr && s->injective;
}

std::int64_t valueBytes(const ir::Graph& g, ir::ValueId v)
{
    const ir::TensorType& t = g.value(v).type;
    const std::optional<std::int64_t> n = t.shape.numElements();
    return n ? *n * static_cast<std::int64_t>(ir::dtypeSize(t.dtype)) : 0;
}

/// Tensors produced and consumed only inside the group, not graph outputs: each saves a write and a read.
std::int64_t internalBytes(const ir::Graph& g, const std::set<ir::NodeId>& members)
{
    std::int64_t saved = 0;
    for (const ir::NodeId n : members) {
        for (const ir::ValueId v : g.node(n).outputs) {
            if (v == ir::kNoValue || g.value(v).isGraphOutput)
                continue;
            const std::vector<ir::NodeId>& uses = g.consumers(v);
            if (uses.empty())
                continue;
            const bool inside = std::all_of(uses.begin(), uses.end(), [&](ir::NodeId u) { return members.count(u) > 0; });
            if (inside)
                saved += 2 * valueBytes(g, v);
        }
    }
    return saved;
}

/// The part of `a`'s reason in which FusePlanner says it did not fuse a pair whose second conv
/// is a member of `b` ("FusePlanner did not fuse dw-pw C1 -> C2 on h200: ..."), else "".
std::string plannerRefusalBetween(const FusionGroup& a, const FusionGroup& b)
{
    static const std::string kPrefix = "FusePlanner did not fuse ";
    std::size_t at = a.reason.find(kPrefix);
    while (at != std::string::npos) {
        const std::size_t end = a.reason.find("; ", at);
        const std::string part = a.reason.substr(at, end == std::string::npos ? std::string::npos : end - at);
        for (const std::string& m : b.ops) {
            if (part.find(" -> " + m + " on ") != std::string::npos || part.find(" -> " + m + ":") != std::string::npos)
                return part;
        }
        at = end == std::string::npos ? end : a.reason.find(kPrefix, end);
    }
    return {};
}

}  // namespace

support::Expected<FusionGroup> fusedGroupFor(const ir::Graph& g, const std::vector<std::string>& members,
                                             const target::GpuProfile& hw, const std::string& name)
{
    std::vector<ir::NodeId> ids;
    for (const std::string& m : members) {
        const ir::NodeId n = g.findNode(m);
        if (n == ir::kNoNode) {
            support::DiagnosticList d;
            d.error("", "node '" + m + "'", "'" + m + "' is not in the compiled graph (folded into a constant)");
            return d;
        }
        if (std::find(ids.begin(), ids.end(), n) == ids.end())
            ids.push_back(n);
    }
    // Topological order of the members.
    const std::optional<std::vector<ir::NodeId>> order = g.topologicalOrder();
    if (order) {
        std::vector<ir::NodeId> sorted;
        for (const ir::NodeId n : *order) {
            if (std::find(ids.begin(), ids.end(), n) != ids.end())
                sorted.push_back(n);
        }
        ids = std::move(sorted);
    }
    FusionGroup grp;
    grp.name = name;
    for (const ir::NodeId n : ids)
        grp.ops.push_back(g.node(n).name);
    const std::set<ir::NodeId> set(ids.begin(), ids.end());
    grp.predictedBytesSaved = internalBytes(g, set);
    grp.reason = "fused by hand";

    // A conv chain: exactly two convolutions, everything else elementwise.
    std::vector<ir::NodeId> convs;
    bool othersElementwise = true;
    for (const ir::NodeId n : ids) {
        const ir::OpSchema* s = schemaOf(g, n);
        if (g.node(n).opType == "Conv")
            convs.push_back(n);
        else if (s == nullptr || s->category != ir::OpCategory::Elementwise)
            othersElementwise = false;
    }
    if (convs.size() == 2 && othersElementwise) {
        support::Expected<ConvLayer> a = convLayerOf(g, convs[0]);
        support::Expected<ConvLayer> b = convLayerOf(g, convs[1]);
        if (a.ok() && b.ok()) {
            using K = ConvLayerKind;
            std::optional<FusionKind> kind;
            if (a->kind == K::Depthwise && b->kind == K::Pointwise)
                kind = FusionKind::DwPw;
            else if (a->kind == K::Pointwise && b->kind == K::Depthwise)
                kind = FusionKind::PwDw;
            else if (a->kind == K::Pointwise && b->kind == K::Pointwise)
                kind = FusionKind::PwPw;
            if (kind) {
                grp.kind = *kind;
                grp.anchor = g.node(convs[0]).name;
                bool after = false;
                for (const ir::NodeId n : ids) {
                    if (after)
                        grp.epilogue.push_back(g.node(n).name);
                    after = after || n == convs[1];
                }
                const TileCost fused = bestFusedTile(a.value(), b.value(), *kind, hw);
                const TileCost la = bestLayerTile(a.value(), hw);
                const TileCost lb = bestLayerTile(b.value(), hw);
                if (fused.viable) {
                    // FP32 elements, as FusePlanner counts.
                    grp.tile = fused.tile;
                    grp.predictedBytes = fused.gma * 4;
                    grp.redundantFlops = fused.redundantFlops;
                    if (la.viable && lb.viable)
                        grp.predictedBytesSaved = (la.gma + lb.gma - fused.gma) * 4;
                }
                return grp;
            }
        }
    }
    grp.kind = ids.size() == 1 ? FusionKind::Single : FusionKind::PrologueEpilogue;
    auto anchorIt = std::find_if(ids.begin(), ids.end(), [&](ir::NodeId n) { return !injective(g, n); });
    if (anchorIt == ids.end())
        anchorIt = ids.end() - 1;
    grp.anchor = g.node(*anchorIt).name;
    for (auto it = ids.begin(); it != ids.end(); ++it) {
        if (it < anchorIt)
            grp.prologue.push_back(g.node(*it).name);
        else if (it > anchorIt)
            grp.epilogue.push_back(g.node(*it).name);
    }
    return grp;
}

std::string freshGroupName(const ir::Graph& g, const FusionPlan& plan)
{
    std::set<std::string> used;
    for (const FusionGroup& gr : plan.groups)
        used.insert(gr.name);
    int k = 1;
    while (used.count("u" + std::to_string(k)) > 0 || g.findNode("u" + std::to_string(k)) != ir::kNoNode)
        ++k;
    return "u" + std::to_string(k);
}

FuseAttempt fuseNodes(const ir::Graph& g, const FusionPlan& plan, const std::vector<std::string>& names,
                      const target::GpuProfile& hw, const std::vector<FusionViolation>& existing, const std::string& name)
{
    FuseAttempt out;
    const auto refused = [&out](const std::string& node, const std::string& message) {
        out.node = node;
        out.message = message;
        return out;
    };
    if (names.empty())
        return refused("", "no nodes to fuse");
    // Every group touched by the selection is merged whole.
    std::set<int> touched;
    std::vector<std::string> members;
    for (const std::string& n : names) {
        const int gi = plan.groupOf(n);
        if (gi >= 0)
            touched.insert(gi);
        else
            members.push_back(n);
    }
    for (const int gi : touched) {
        const auto& ops = plan.groups[static_cast<std::size_t>(gi)].ops;
        members.insert(members.end(), ops.begin(), ops.end());
    }
    if (touched.size() == 1 && members.size() == plan.groups[static_cast<std::size_t>(*touched.begin())].ops.size()) {
        std::string list;
        for (const std::string& n : names)
            list += (list.empty() ? "" : ", ") + n;
        return refused(names.front(), list + " are already one group (" + plan.groups[static_cast<std::size_t>(*touched.begin())].name + ")");
    }
    support::Expected<FusionGroup> grp = fusedGroupFor(g, members, hw, name);
    if (!grp.ok())
        return refused(names.front(), grp.diagnostics().items().front().message);
    FusionPlan next;
    next.planner = "user";
    next.hardware = plan.hardware.empty() ? hw.name : plan.hardware;
    bool placed = false;
    for (std::size_t i = 0; i < plan.groups.size(); ++i) {
        if (touched.count(static_cast<int>(i)) == 0) {
            next.groups.push_back(plan.groups[i]);
        } else if (!placed) {
            next.groups.push_back(grp.value());
            placed = true;
        }
    }
    if (!placed)
        next.groups.push_back(grp.value());
    support::Expected<FusionPlan> norm = normalizePlan(g, next);
    if (!norm.ok()) {
        const auto& items = norm.diagnostics().items();
        return refused(grp->anchor, items.empty() ? "the groups would depend on each other in a cycle" : items.front().message);
    }
    next = std::move(norm.value());
    const int at = next.groupOf(grp->anchor);
    // Only what this edit breaks refuses it (an older broken group, e.g. after a hardware
    // change, does not block other edits).
    std::set<std::string> before;
    for (const FusionViolation& v : existing)
        before.insert(v.message);
    for (const FusionViolation& v : checkPlan(g, next, &hw)) {
        if (v.group == at || (v.group < 0 && before.count(v.message) == 0))
            return refused(v.node.empty() ? grp->anchor : v.node, v.message);
    }
    out.ok = true;
    out.plan = std::move(next);
    out.group = grp->name;
    return out;
}

std::vector<EdgeReason> crossingEdgeReasons(const ir::Graph& g, const FusionPlan& plan, const target::GpuProfile& hw)
{
    std::vector<EdgeReason> out;
    const std::vector<FusionViolation> existing = checkPlan(g, plan, &hw);
    const std::string name = freshGroupName(g, plan);
    std::set<std::pair<ir::NodeId, ir::NodeId>> seen;
    for (std::size_t c = 0; c < g.numNodes(); ++c) {
        const ir::NodeId to = static_cast<ir::NodeId>(c);
        for (const ir::ValueId v : g.node(to).inputs) {
            if (v == ir::kNoValue)
                continue;
            const ir::NodeId from = g.producer(v);
            if (from == ir::kNoNode || from == to || !seen.insert({from, to}).second)
                continue;
            const int ga = plan.groupOf(g.node(from).name);
            const int gb = plan.groupOf(g.node(to).name);
            if (ga < 0 || gb < 0 || ga == gb)
                continue;
            EdgeReason r;
            r.from = g.node(from).name;
            r.to = g.node(to).name;
            r.fromGroup = plan.groups[static_cast<std::size_t>(ga)].name;
            r.toGroup = plan.groups[static_cast<std::size_t>(gb)].name;
            const FuseAttempt a = fuseNodes(g, plan, {r.from, r.to}, hw, existing, name);
            r.fusible = a.ok;
            r.refusal = a.message;
            r.plannerNote = plannerRefusalBetween(plan.groups[static_cast<std::size_t>(ga)], plan.groups[static_cast<std::size_t>(gb)]);
            out.push_back(std::move(r));
        }
    }
    return out;
}

std::string edgeReasonText(const EdgeReason& r, const std::string& fuseKeys)
{
    // A group named after its only node (planner none, a split) needs no second name.
    const auto end = [](const std::string& node, const std::string& group) {
        return node == group ? node : node + " (" + group + ")";
    };
    std::string text = end(r.from, r.fromGroup) + " \u2192 " + end(r.to, r.toGroup) + ": not one kernel\n";
    if (!r.fusible)
        return text + r.refusal;
    if (!r.plannerNote.empty())
        return text + r.plannerNote + "\nThe rules allow it: select both nodes and Fuse (" + fuseKeys + ")";
    return text + "fusible: select both nodes and Fuse (" + fuseKeys + ")";
}

}  // namespace tessera::schedule
