// Hand edits of fusion plans (issue 6): see fusion_edit.h. Moved out of the GUI's PlanSession so
// that `tessera-cli plan --why-not` and the GUI's edge tooltips say the same.
#include "core/schedule/fusion_edit.h"

#include <algorithm>
#include <optional>
#include <set>

#include "core/ir/op_registry.h"
#include "core/schedule/fusion_rules.h"
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

/// "a", "a and b", "a, b and c".
std::string listText(const std::vector<std::string>& names)
{
    std::string s;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0)
            s += i + 1 == names.size() ? " and " : ", ";
        s += names[i];
    }
    return s;
}

bool isConvNode(const ir::Graph& g, ir::NodeId n)
{
    return g.node(n).opType == "Conv" && g.node(n).domain.empty();
}

/// Why `grp` (a merge holding two or more convolutions that fusedGroupFor did not make a conv
/// chain) is not one: with more than two, the count; with two, the first rule a conv chain of
/// these members breaks (checkPlan's text). "" when no conv-chain reason applies.
std::string convChainRefusal(const ir::Graph& g, const FusionGroup& grp, const std::string& merged,
                             const target::GpuProfile& hw, std::string& node)
{
    std::vector<ir::NodeId> convs;
    for (const std::string& m : grp.ops) {
        const ir::NodeId n = g.findNode(m);
        if (n != ir::kNoNode && isConvNode(g, n))
            convs.push_back(n);
    }
    if (convs.size() < 2 || isConvChain(grp.kind))
        return {};
    if (convs.size() > 2) {
        node = g.node(convs[2]).name;
        return "merging " + merged + " would give a group with " + std::to_string(convs.size()) +
               " convolutions; a conv chain has 2";
    }
    // Two convolutions: try the chain their kinds suggest and report what it breaks.
    const support::Expected<ConvLayer> a = convLayerOf(g, convs[0]);
    const support::Expected<ConvLayer> b = convLayerOf(g, convs[1]);
    if (!a.ok() || !b.ok())
        return {};
    FusionGroup chain;
    chain.name = grp.name;
    chain.ops = grp.ops;
    chain.anchor = g.node(convs[0]).name;
    chain.kind = a->kind == ConvLayerKind::Depthwise  ? FusionKind::DwPw
                 : b->kind == ConvLayerKind::Depthwise ? FusionKind::PwDw
                                                       : FusionKind::PwPw;
    bool after = false;
    for (const std::string& m : grp.ops) {
        if (after)
            chain.epilogue.push_back(m);
        after = after || m == g.node(convs[1]).name;
    }
    FusionPlan trial;
    trial.groups.push_back(std::move(chain));
    for (const FusionViolation& v : checkPlan(g, trial, &hw)) {
        if (v.group == 0) {
            node = v.node.empty() ? grp.anchor : v.node;
            return v.message;
        }
    }
    return {};
}

/// `grp` with `anchor` (one of its ops) as anchor: earlier ops prologue, later ones epilogue.
FusionGroup withAnchor(FusionGroup grp, const std::string& anchor)
{
    grp.anchor = anchor;
    grp.prologue.clear();
    grp.epilogue.clear();
    bool after = false;
    for (const std::string& m : grp.ops) {
        if (m == anchor)
            after = true;
        else
            (after ? grp.epilogue : grp.prologue).push_back(m);
    }
    return grp;
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
    // Refusals speak of the merge ("merging g3 and g6 ..."), not of the group it would make.
    std::vector<std::string> mergedNames;
    for (std::size_t i = 0; i < plan.groups.size(); ++i) {
        if (touched.count(static_cast<int>(i)) > 0)
            mergedNames.push_back(plan.groups[i].name);
    }
    for (const std::string& n : names) {
        if (plan.groupOf(n) < 0 && std::find(mergedNames.begin(), mergedNames.end(), n) == mergedNames.end())
            mergedNames.push_back(n);
    }
    const std::string merged = listText(mergedNames);
    {
        std::string node;
        const std::string why = convChainRefusal(g, grp.value(), merged, hw, node);
        if (!why.empty())
            return refused(node, why);
    }
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
        std::vector<std::string> through;
        for (const int gi : detail::groupsOnCycle(g, next)) {
            const FusionGroup& other = next.groups[static_cast<std::size_t>(gi)];
            if (!other.contains(grp->anchor))
                through.push_back(other.name);
        }
        return refused(grp->anchor, "merging " + merged + " would form a cycle" +
                                        (through.empty() ? std::string() : " through " + listText(through)));
    }
    next = std::move(norm.value());
    const int at = next.groupOf(grp->anchor);
    // Only what this edit breaks refuses it (an older broken group, e.g. after a hardware
    // change, does not block other edits).
    std::set<std::string> before;
    for (const FusionViolation& v : existing)
        before.insert(v.message);
    const auto firstRefusal = [&](const FusionPlan& p) -> std::optional<FusionViolation> {
        for (const FusionViolation& v : checkPlan(g, p, &hw)) {
            if (v.group == at || (v.group < 0 && before.count(v.message) == 0))
                return v;
        }
        return std::nullopt;
    };
    std::optional<FusionViolation> bad = firstRefusal(next);
    // Only injective members (e.g. Slice -> Relu): the default anchor is the last one; another
    // member may anchor a legal group instead (a Slice is never a prologue but can anchor one).
    const FusionGroup& made = next.groups[static_cast<std::size_t>(at)];
    const bool allInjective = std::all_of(made.ops.begin(), made.ops.end(), [&](const std::string& m) {
        const ir::NodeId n = g.findNode(m);
        return n != ir::kNoNode && detail::isInjectiveNode(g, n);
    });
    if (bad && made.kind == FusionKind::PrologueEpilogue && allInjective) {
        const std::vector<std::string> candidates = made.ops;
        for (const std::string& anchor : candidates) {
            if (anchor == made.anchor)
                continue;
            FusionPlan alt = next;
            alt.groups[static_cast<std::size_t>(at)] = withAnchor(alt.groups[static_cast<std::size_t>(at)], anchor);
            if (!firstRefusal(alt)) {
                next = std::move(alt);
                bad.reset();
                break;
            }
        }
    }
    if (bad)
        return refused(bad->node.empty() ? grp->anchor : bad->node, bad->message);
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
