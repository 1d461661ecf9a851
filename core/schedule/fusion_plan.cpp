// Fusion plans (issue 6): kind names, Hidet's epilogue/prologue rules as refusals, the plan
// checks, the trivial plan, normalisation and the JSON form. See fusion_plan.h for the semantics
// and ../shared/reference/semantics.md §2.3 for Hidet's rules.
#include "core/schedule/fusion_plan.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/ir/compute.h"
#include "core/ir/op_registry.h"
#include "core/schedule/attention_pattern.h"
#include "core/schedule/fusion_rules.h"

namespace tessera::schedule {

// ------------------------------------------------------------------------------ internal rules
namespace detail {
namespace {

const ir::OpSchema* schemaOf(const ir::Graph& g, ir::NodeId n) {
    const ir::Node& node = g.node(n);
    return ir::OpRegistry::instance().find(node.domain, node.opType);
}

bool isComputeNode(const ir::Node& n) { return n.opType == ir::kComputeOpType && n.domain == ir::kTesseraDomain; }

bool computeHasReduction(const ir::ComputeDef& d) {
    if (d.axes.size() > d.numOutputAxes) return true;
    return std::any_of(d.axes.begin(), d.axes.end(), [](const ir::ComputeAxis& a) { return a.reduction; });
}

/// Outputs that exist and are read or are graph outputs.
int liveOutputs(const ir::Graph& g, const ir::Node& n) {
    int live = 0;
    for (ir::ValueId v : n.outputs)
        if (v != ir::kNoValue && (g.value(v).isGraphOutput || !g.consumers(v).empty())) ++live;
    return live;
}

}  // namespace

std::string notFusibleReason(const ir::Graph& g, ir::NodeId n) {
    const ir::Node& node = g.node(n);
    const std::string who = node.name + " (" + node.opType + ")";
    if (isComputeNode(node)) {
        if (!node.compute) return who + " is not fusible: a Compute node without a definition";
        if (computeHasReduction(*node.compute)) return who + " is not fusible: its compute definition has a reduction";
    } else {
        const ir::OpSchema* s = schemaOf(g, n);
        if (!s) return who + " is not fusible: unknown op";
        if (s->category == ir::OpCategory::ControlFlow) return who + " is not fusible: control flow";
        if (s->category == ir::OpCategory::Constant) return who + " is not fusible: a constant, folded before lowering";
    }
    const int live = liveOutputs(g, node);
    if (live > 1) return who + " is not fusible: it has " + std::to_string(live) + " outputs in use";
    return {};
}

bool isInjectiveNode(const ir::Graph& g, ir::NodeId n) {
    const ir::Node& node = g.node(n);
    if (isComputeNode(node)) return node.compute && !computeHasReduction(*node.compute);
    const ir::OpSchema* s = schemaOf(g, n);
    return s && s->injective;
}

bool isElementwiseNode(const ir::Graph& g, ir::NodeId n) {
    const ir::Node& node = g.node(n);
    if (isComputeNode(node)) return false;
    const ir::OpSchema* s = schemaOf(g, n);
    if (!s) return false;
    if (s->category == ir::OpCategory::Elementwise) return true;
    return s->domain.empty() && (node.opType == "Identity" || node.opType == "Dropout");
}

bool isReshapeLikeNode(const ir::Graph& g, ir::NodeId n) {
    const ir::Node& node = g.node(n);
    if (!node.domain.empty()) return false;
    return node.opType == "Reshape" || node.opType == "Flatten" || node.opType == "Squeeze" || node.opType == "Unsqueeze";
}

bool isIndexMapNode(const ir::Graph& g, ir::NodeId n) {
    const ir::Node& node = g.node(n);
    return isReshapeLikeNode(g, n) || (node.domain.empty() && node.opType == "Transpose");
}

bool isConstantNode(const ir::Graph& g, ir::NodeId n) {
    const ir::OpSchema* s = schemaOf(g, n);
    return s && s->category == ir::OpCategory::Constant;
}

std::int64_t valueBytes(const ir::Graph& g, ir::ValueId v) {
    if (v < 0 || static_cast<std::size_t>(v) >= g.numValues()) return -1;
    const ir::TensorType& t = g.value(v).type;
    const auto n = t.shape.numElements();
    const auto size = static_cast<std::int64_t>(ir::dtypeSize(t.dtype));
    if (!n || size == 0) return -1;
    return *n * size;
}

int useCount(const ir::Graph& g, ir::ValueId v) {
    int uses = 0;
    for (ir::NodeId c : g.consumers(v))
        for (ir::ValueId in : g.node(c).inputs)
            if (in == v) ++uses;
    return uses;
}

GroupTraffic groupTraffic(const ir::Graph& g, const std::vector<ir::NodeId>& members) {
    const std::set<ir::NodeId> in(members.begin(), members.end());
    std::set<ir::ValueId> external, outputs, internal;
    for (ir::NodeId n : members) {
        for (ir::ValueId v : g.node(n).inputs)
            if (v != ir::kNoValue && !in.count(g.producer(v))) external.insert(v);
        for (ir::ValueId v : g.node(n).outputs) {
            if (v == ir::kNoValue) continue;
            const auto& cons = g.consumers(v);
            const bool outside = std::any_of(cons.begin(), cons.end(), [&](ir::NodeId c) { return !in.count(c); });
            if (g.value(v).isGraphOutput || outside) outputs.insert(v);
            else if (!cons.empty()) internal.insert(v);
        }
    }
    GroupTraffic t;
    t.bytes = 0;
    for (const auto* set : {&external, &outputs})
        for (ir::ValueId v : *set) {
            const std::int64_t b = valueBytes(g, v);
            if (b < 0 || t.bytes < 0) t.bytes = -1;
            else t.bytes += b;
        }
    for (ir::ValueId v : internal) t.saved += 2 * std::max<std::int64_t>(valueBytes(g, v), 0);
    return t;
}

bool dependsOnMembers(const ir::Graph& g, ir::ValueId v, const std::set<ir::NodeId>& members) {
    std::vector<ir::NodeId> stack;
    std::set<ir::NodeId> seen;
    if (const ir::NodeId p = g.producer(v); p != ir::kNoNode) stack.push_back(p);
    while (!stack.empty()) {
        const ir::NodeId n = stack.back();
        stack.pop_back();
        if (!seen.insert(n).second) continue;
        if (members.count(n)) return true;
        for (ir::ValueId in : g.node(n).inputs)
            if (in != ir::kNoValue)
                if (const ir::NodeId p = g.producer(in); p != ir::kNoNode) stack.push_back(p);
    }
    return false;
}

}  // namespace detail

// ------------------------------------------------------------------------------------ names
const char* fusionKindName(FusionKind k) {
    switch (k) {
        case FusionKind::Single: return "single";
        case FusionKind::PrologueEpilogue: return "prologue-epilogue";
        case FusionKind::DwPw: return "dw-pw";
        case FusionKind::PwDw: return "pw-dw";
        case FusionKind::PwPw: return "pw-pw";
        case FusionKind::Attention: return "attention";
    }
    return "single";
}

std::optional<FusionKind> parseFusionKind(std::string_view s) {
    for (FusionKind k : {FusionKind::Single, FusionKind::PrologueEpilogue, FusionKind::DwPw, FusionKind::PwDw,
                         FusionKind::PwPw, FusionKind::Attention})
        if (s == fusionKindName(k)) return k;
    return std::nullopt;
}

bool isConvChain(FusionKind k) { return k == FusionKind::DwPw || k == FusionKind::PwDw || k == FusionKind::PwPw; }

bool FusionGroup::contains(std::string_view node) const {
    return std::find(ops.begin(), ops.end(), node) != ops.end();
}

int FusionPlan::groupOf(std::string_view node) const {
    for (std::size_t i = 0; i < groups.size(); ++i)
        if (groups[i].contains(node)) return static_cast<int>(i);
    return -1;
}

int FusionPlan::fusedGroupCount() const {
    return static_cast<int>(std::count_if(groups.begin(), groups.end(), [](const FusionGroup& gr) { return gr.ops.size() > 1; }));
}

// ---------------------------------------------------------------------------------- refusals
namespace {

using NodeSet = std::set<ir::NodeId>;

struct Refusal {
    std::string rule;     ///< FusionViolation::rule; empty = allowed
    std::string message;
    bool ok() const { return rule.empty(); }
};

bool validNode(const ir::Graph& g, ir::NodeId n) { return n >= 0 && static_cast<std::size_t>(n) < g.numNodes(); }
bool validValue(const ir::Graph& g, ir::ValueId v) { return v >= 0 && static_cast<std::size_t>(v) < g.numValues(); }


std::string squote(const std::string& s) { return "'" + s + "'"; }

/// Why an injective op that is neither elementwise nor an index map is no bijection between its
/// input's and output's elements (Hidet: the task has no inverse map for that input).
std::string notBijectiveWhy(const ir::Node& c) {
    const std::string& op = c.opType;
    if (!c.domain.empty()) return "it is not a bijection between its input's and its output's elements";
    if (op == "Slice") return "Slice keeps only part of its input";
    if (op == "Pad") return "Pad adds elements its input does not have";
    if (op == "Gather" || op == "GatherElements" || op == "GatherND") return op + " picks elements by an index tensor";
    if (op == "Concat") return "Concat's output also holds its other inputs' elements";
    if (op == "Expand" || op == "Tile") return op + " repeats its input's elements";
    return op + " is not a bijection between its input's and its output's elements";
}

Refusal epilogueCheck(const ir::Graph& g, ir::ValueId value, ir::NodeId consumer, const NodeSet& members) {
    if (!validNode(g, consumer) || !validValue(g, value)) return {"unknown-node", "no such node or value"};
    const ir::Node& c = g.node(consumer);
    const std::string vname = g.value(value).name;
    const auto slot = std::find(c.inputs.begin(), c.inputs.end(), value);
    if (slot == c.inputs.end()) return {"not-connected", c.name + " does not read " + squote(vname)};
    if (const int uses = detail::useCount(g, value); uses != 1)
        return {"multi-use", c.name + "'s input " + squote(vname) + " has " + std::to_string(uses) + " uses"};
    if (g.value(value).isGraphOutput)
        return {"graph-output", squote(vname) + " is a graph output, so " + c.name + " cannot be an epilogue"};
    if (std::string r = detail::notFusibleReason(g, consumer); !r.empty()) return {"not-fusible", r};
    if (!detail::isInjectiveNode(g, consumer)) return {"not-injective", c.name + " is not injective: it cannot be an epilogue"};
    const bool indexMap = detail::isIndexMapNode(g, consumer);
    if (!indexMap && !detail::isElementwiseNode(g, consumer))
        return {"not-invertible", c.name + " is not invertible for " + squote(vname) + ": " + notBijectiveWhy(c)};
    const ir::ValueId out = c.outputs.empty() ? ir::kNoValue : c.outputs[0];
    if (out == ir::kNoValue) return {"not-connected", c.name + " has no output"};
    if (indexMap && c.inputs[0] != value)
        return {"not-invertible", c.name + " is not invertible for " + squote(vname) + ": it is not its data input"};
    const ir::Shape& inShape = g.value(value).type.shape;
    const ir::Shape& outShape = g.value(out).type.shape;
    if (!inShape.rankKnown() || !outShape.rankKnown())
        return {"not-invertible", c.name + "'s shapes are unknown: cannot tell whether it is invertible for " + squote(vname)};
    if (detail::isReshapeLikeNode(g, consumer) && (!inShape.knownDims() || !outShape.knownDims()))
        return {"not-invertible", c.name + "'s shapes are not static (" + inShape.str() + " -> " + outShape.str() +
                                      "): cannot map " + squote(vname) + "'s elements to its output"};
    if (!indexMap && inShape != outShape)
        return {"not-invertible", c.name + " is not invertible for " + squote(vname) + ": it broadcasts " + inShape.str() +
                                      " up to " + outShape.str()};
    for (ir::ValueId other : c.inputs) {
        if (other == ir::kNoValue || other == value) continue;
        if (members.count(g.producer(other)))
            return {"reads-group-output", c.name + "'s other input " + squote(g.value(other).name) + " is an output of the group"};
        if (detail::dependsOnMembers(g, other, members))
            return {"reads-group-output",
                    c.name + "'s other input " + squote(g.value(other).name) + " depends on the group's outputs"};
    }
    return {};
}

Refusal prologueCheck(const ir::Graph& g, ir::NodeId producer, const NodeSet& members) {
    if (!validNode(g, producer)) return {"unknown-node", "no such node"};
    const ir::Node& p = g.node(producer);
    bool feeds = false;
    for (ir::ValueId v : p.outputs)
        if (v != ir::kNoValue)
            for (ir::NodeId c : g.consumers(v)) feeds = feeds || members.count(c) > 0;
    if (!feeds) return {"not-connected", p.name + " does not feed the group"};
    if (std::string r = detail::notFusibleReason(g, producer); !r.empty()) return {"not-fusible", r};
    if (!detail::isInjectiveNode(g, producer)) return {"not-injective", p.name + " is not injective: it cannot be a prologue"};
    if (!detail::isElementwiseNode(g, producer) && !detail::isIndexMapNode(g, producer))
        return {"not-fusible", p.name + " (" + p.opType +
                                   ") is not inlined into loads: only elementwise ops, Transpose and the Reshape family are"};
    if (detail::isReshapeLikeNode(g, producer) && !p.inputs.empty() && p.inputs[0] != ir::kNoValue && !p.outputs.empty() &&
        p.outputs[0] != ir::kNoValue) {
        const ir::Shape& inShape = g.value(p.inputs[0]).type.shape;
        const ir::Shape& outShape = g.value(p.outputs[0]).type.shape;
        if (!inShape.knownDims() || !outShape.knownDims())
            return {"not-fusible", p.name + "'s shapes are not static (" + inShape.str() + " -> " + outShape.str() +
                                       "): its loads cannot be mapped to its input"};
    }
    for (ir::ValueId v : p.outputs) {
        if (v == ir::kNoValue) continue;
        const std::string vname = g.value(v).name;
        if (g.value(v).isGraphInput)
            return {"prologue-escapes", squote(vname) + " is a graph input, so " + p.name + " cannot be a prologue"};
        if (g.value(v).isGraphOutput)
            return {"prologue-escapes", squote(vname) + " is a graph output, so " + p.name + " cannot be a prologue"};
        for (ir::NodeId c : g.consumers(v))
            if (!members.count(c))
                return {"prologue-escapes",
                        p.name + "'s output " + squote(vname) + " is also read by " + g.node(c).name + " outside the group"};
    }
    for (ir::ValueId in : p.inputs)
        if (in != ir::kNoValue && detail::dependsOnMembers(g, in, members))
            return {"cycle", p.name + "'s input " + squote(g.value(in).name) +
                                 " depends on the group: as a prologue it would form a cycle"};
    return {};
}

NodeSet toSet(const std::vector<ir::NodeId>& v) { return NodeSet(v.begin(), v.end()); }

}  // namespace

std::string epilogueRefusal(const ir::Graph& g, ir::ValueId value, ir::NodeId consumer,
                            const std::vector<ir::NodeId>& groupMembers) {
    return epilogueCheck(g, value, consumer, toSet(groupMembers)).message;
}

std::string prologueRefusal(const ir::Graph& g, ir::NodeId producer, const std::vector<ir::NodeId>& groupMembers) {
    return prologueCheck(g, producer, toSet(groupMembers)).message;
}

// ------------------------------------------------------------------------------ group graph
namespace {

/// Position of every node in the graph's topological order (node order when cyclic).
std::vector<int> topoPositions(const ir::Graph& g) {
    std::vector<int> pos(g.numNodes(), 0);
    const auto order = g.topologicalOrder();
    for (std::size_t i = 0; i < g.numNodes(); ++i) {
        const ir::NodeId n = order ? (*order)[i] : static_cast<ir::NodeId>(i);
        pos[static_cast<std::size_t>(n)] = static_cast<int>(i);
    }
    return pos;
}

/// For each group, the groups it reads from (edges between distinct groups; a node in several
/// groups counts for the first one; unknown names are skipped).
std::vector<std::set<int>> groupInputs(const ir::Graph& g, const FusionPlan& plan) {
    std::unordered_map<ir::NodeId, int> groupOfNode;
    for (std::size_t i = 0; i < plan.groups.size(); ++i)
        for (const auto& name : plan.groups[i].ops)
            if (const ir::NodeId n = g.findNode(name); n != ir::kNoNode) groupOfNode.emplace(n, static_cast<int>(i));
    std::vector<std::set<int>> reads(plan.groups.size());
    for (const auto& [n, gi] : groupOfNode)
        for (ir::ValueId v : g.node(n).inputs) {
            if (v == ir::kNoValue) continue;
            const auto it = groupOfNode.find(g.producer(v));
            if (it != groupOfNode.end() && it->second != gi) reads[static_cast<std::size_t>(gi)].insert(it->second);
        }
    return reads;
}

/// Kahn's algorithm over groups; ties go to the group whose earliest member comes first in the
/// graph's topological order. Returns the order; `onCycle` gets the groups that are on a cycle
/// (or between cycles) when not every group could be ordered.
std::vector<int> orderGroups(const ir::Graph& g, const FusionPlan& plan, std::vector<int>& onCycle) {
    const auto reads = groupInputs(g, plan);
    const auto pos = topoPositions(g);
    const std::size_t n = plan.groups.size();
    std::vector<int> key(n, static_cast<int>(g.numNodes()) + 1);
    for (std::size_t i = 0; i < n; ++i)
        for (const auto& name : plan.groups[i].ops)
            if (const ir::NodeId id = g.findNode(name); id != ir::kNoNode)
                key[i] = std::min(key[i], pos[static_cast<std::size_t>(id)]);
    std::vector<std::set<int>> feeds(n);
    std::vector<int> indeg(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        indeg[i] = static_cast<int>(reads[i].size());
        for (int r : reads[i]) feeds[static_cast<std::size_t>(r)].insert(static_cast<int>(i));
    }
    using Item = std::pair<std::pair<int, int>, int>;  // ((key, index), index)
    std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
    for (std::size_t i = 0; i < n; ++i)
        if (indeg[i] == 0) ready.push({{key[i], static_cast<int>(i)}, static_cast<int>(i)});
    std::vector<int> order;
    while (!ready.empty()) {
        const int gi = ready.top().second;
        ready.pop();
        order.push_back(gi);
        for (int f : feeds[static_cast<std::size_t>(gi)])
            if (--indeg[static_cast<std::size_t>(f)] == 0) ready.push({{key[static_cast<std::size_t>(f)], f}, f});
    }
    onCycle.clear();
    if (order.size() == n) return order;
    // Left: groups on cycles and downstream of them; strip those that lead to no cycle.
    std::set<int> left;
    for (std::size_t i = 0; i < n; ++i)
        if (indeg[i] > 0) left.insert(static_cast<int>(i));
    for (bool changed = true; changed;) {
        changed = false;
        for (auto it = left.begin(); it != left.end();) {
            const auto& f = feeds[static_cast<std::size_t>(*it)];
            const bool leadsOn = std::any_of(f.begin(), f.end(), [&](int x) { return left.count(x) > 0; });
            if (!leadsOn) {
                it = left.erase(it);
                changed = true;
            } else {
                ++it;
            }
        }
    }
    onCycle.assign(left.begin(), left.end());
    return order;
}

std::string cycleMessage(const FusionPlan& plan, const std::vector<int>& onCycle) {
    std::string names;
    for (std::size_t i = 0; i < onCycle.size(); ++i) {
        if (i > 0) names += i + 1 == onCycle.size() ? " and " : ", ";
        names += plan.groups[static_cast<std::size_t>(onCycle[i])].name;
    }
    return "groups " + names + " form a cycle: they cannot run in any order";
}

}  // namespace

std::vector<int> detail::groupsOnCycle(const ir::Graph& g, const FusionPlan& plan) {
    std::vector<int> onCycle;
    orderGroups(g, plan, onCycle);
    return onCycle;
}

// --------------------------------------------------------------------------------- checkPlan
namespace {

struct Checker {
    const ir::Graph& g;
    const FusionPlan& plan;
    const target::GpuProfile* hw;
    std::vector<int> pos;
    std::vector<FusionViolation> out;

    void add(int group, std::string node, std::string rule, std::string message) {
        out.push_back(FusionViolation{group, std::move(node), std::move(rule), std::move(message)});
    }
    void add(int group, const std::string& node, const Refusal& r) { add(group, node, r.rule, r.message); }
    std::string groupName(int gi) const { return plan.groups[static_cast<std::size_t>(gi)].name; }

    std::vector<ir::NodeId> sortedIds(const std::vector<std::string>& names) const {
        std::vector<ir::NodeId> ids;
        for (const auto& n : names)
            if (const ir::NodeId id = g.findNode(n); id != ir::kNoNode) ids.push_back(id);
        std::sort(ids.begin(), ids.end(), [&](ir::NodeId a, ir::NodeId b) { return pos[a] < pos[b]; });
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        return ids;
    }

    /// A value read by `n` that one of `producers` writes; kNoValue when none.
    ir::ValueId inputFrom(ir::NodeId n, const NodeSet& producers) const {
        for (ir::ValueId v : g.node(n).inputs)
            if (v != ir::kNoValue && producers.count(g.producer(v))) return v;
        return ir::kNoValue;
    }

    /// Epilogues in topological order: each reads the output of `core` (or of an earlier epilogue).
    void checkEpilogues(int gi, const std::vector<ir::NodeId>& epilogues, NodeSet members, NodeSet core) {
        for (ir::NodeId e : epilogues) {
            const std::string& name = g.node(e).name;
            const ir::ValueId v = inputFrom(e, core);
            if (v == ir::kNoValue) {
                add(gi, name, "not-connected", name + " does not read the output of the group's compute or of an earlier epilogue");
            } else if (Refusal r = epilogueCheck(g, v, e, members); !r.ok()) {
                add(gi, name, r);
            }
            members.insert(e);
            core.insert(e);
        }
    }

    void checkCoverage() {
        std::map<std::string, int> firstGroup;
        for (std::size_t i = 0; i < plan.groups.size(); ++i) {
            const int gi = static_cast<int>(i);
            std::set<std::string> inThis;
            for (const auto& name : plan.groups[i].ops) {
                if (g.findNode(name) == ir::kNoNode) {
                    add(gi, name, "unknown-node", "unknown node " + squote(name) + " in group " + groupName(gi));
                    continue;
                }
                if (!inThis.insert(name).second) {
                    add(gi, name, "coverage", "node " + squote(name) + " is listed twice in group " + groupName(gi));
                    continue;
                }
                const auto [it, fresh] = firstGroup.emplace(name, gi);
                if (!fresh)
                    add(gi, name, "coverage", "node " + squote(name) + " is in groups " + groupName(it->second) + " and " + groupName(gi));
            }
        }
        const auto order = g.topologicalOrder();
        for (std::size_t i = 0; i < g.numNodes(); ++i) {
            const ir::NodeId n = order ? (*order)[i] : static_cast<ir::NodeId>(i);
            const std::string& name = g.node(n).name;
            if (!detail::isConstantNode(g, n) && !firstGroup.count(name))
                add(-1, name, "coverage", "node " + squote(name) + " is in no group");
        }
    }

    /// Anchor / prologue / epilogue lists name members, do not overlap. False when broken.
    bool checkShape(int gi) {
        const FusionGroup& gr = plan.groups[static_cast<std::size_t>(gi)];
        bool good = true;
        if (gr.ops.empty()) {
            add(gi, "", "kind", "group " + gr.name + " has no ops");
            return false;
        }
        if (!gr.contains(gr.anchor)) {
            add(gi, gr.anchor, "kind", "group " + gr.name + "'s anchor " + squote(gr.anchor) + " is not one of its ops");
            good = false;
        }
        for (const auto* list : {&gr.prologue, &gr.epilogue}) {
            const char* what = list == &gr.prologue ? "prologue" : "epilogue";
            for (const auto& n : *list) {
                if (!gr.contains(n)) {
                    add(gi, n, "kind", "group " + gr.name + "'s " + what + " names " + squote(n) + ", which is not one of its ops");
                    good = false;
                } else if (n == gr.anchor) {
                    add(gi, n, "kind", "group " + gr.name + ": the anchor " + squote(n) + " is also listed as " + what);
                    good = false;
                }
            }
        }
        for (const auto& n : gr.prologue)
            if (std::find(gr.epilogue.begin(), gr.epilogue.end(), n) != gr.epilogue.end()) {
                add(gi, n, "kind", "group " + gr.name + ": " + squote(n) + " is both a prologue and an epilogue");
                good = false;
            }
        if (gr.kind == FusionKind::Single && gr.ops.size() != 1) {
            add(gi, "", "kind", "group " + gr.name + " is 'single' but has " + std::to_string(gr.ops.size()) + " ops");
            good = false;
        }
        return good;
    }

    void checkPrologueEpilogue(int gi) {
        const FusionGroup& gr = plan.groups[static_cast<std::size_t>(gi)];
        const ir::NodeId anchor = g.findNode(gr.anchor);
        if (anchor == ir::kNoNode) return;
        const auto ids = sortedIds(gr.ops);
        if (ids.size() <= 1) return;
        if (std::string r = detail::notFusibleReason(g, anchor); !r.empty()) add(gi, gr.anchor, "not-fusible", r);
        for (ir::NodeId n : ids) {
            const std::string& name = g.node(n).name;
            const bool listed = n == anchor || std::find(gr.prologue.begin(), gr.prologue.end(), name) != gr.prologue.end() ||
                                std::find(gr.epilogue.begin(), gr.epilogue.end(), name) != gr.epilogue.end();
            if (!listed)
                add(gi, name, "kind", "group " + gr.name + ": " + squote(name) + " is neither its anchor, a prologue nor an epilogue");
        }
        const auto pro = sortedIds(gr.prologue);
        const auto epi = sortedIds(gr.epilogue);
        NodeSet members(pro.begin(), pro.end());
        members.insert(anchor);
        checkEpilogues(gi, epi, members, NodeSet{anchor});
        // Prologues from the last to the first: each must feed the anchor, the epilogues or a
        // later prologue, and nothing else.
        NodeSet inner(epi.begin(), epi.end());
        inner.insert(anchor);
        for (auto it = pro.rbegin(); it != pro.rend(); ++it) {
            if (Refusal r = prologueCheck(g, *it, inner); !r.ok()) add(gi, g.node(*it).name, r);
            inner.insert(*it);
        }
    }

    /// An attention group: its core (the members that are neither prologue nor epilogue) is
    /// exactly the attention pattern matched at the anchor; epilogues read the PV MatMul's output
    /// (or an earlier epilogue's) by Hidet's epilogue rule; prologues feed the core, the other
    /// prologues or the epilogues and nothing else.
    void checkAttention(int gi) {
        const FusionGroup& gr = plan.groups[static_cast<std::size_t>(gi)];
        const ir::NodeId anchor = g.findNode(gr.anchor);
        if (anchor == ir::kNoNode) return;
        std::string why;
        const AttentionPattern p = matchAttention(g, anchor, &why);
        if (!p.ok()) {
            add(gi, gr.anchor, "not-attention", "group " + gr.name + " is not attention at " + gr.anchor + ": " + why);
            return;
        }
        const auto ids = sortedIds(gr.ops);
        const auto pro = sortedIds(gr.prologue);
        const auto epi = sortedIds(gr.epilogue);
        const std::vector<ir::NodeId> want = p.core();
        const NodeSet coreSet(want.begin(), want.end());
        for (ir::NodeId n : ids) {
            const bool listed = std::find(pro.begin(), pro.end(), n) != pro.end() ||
                                std::find(epi.begin(), epi.end(), n) != epi.end();
            if (!listed && !coreSet.count(n))
                add(gi, g.node(n).name, "not-attention", "group " + gr.name + ": " + squote(g.node(n).name) +
                                                             " is neither part of the attention core, a prologue nor an epilogue");
        }
        for (ir::NodeId n : want) {
            const bool inGroup = std::find(ids.begin(), ids.end(), n) != ids.end();
            const bool listed = std::find(pro.begin(), pro.end(), n) != pro.end() ||
                                std::find(epi.begin(), epi.end(), n) != epi.end();
            if (!inGroup || listed)
                add(gi, g.node(n).name, "not-attention", "group " + gr.name + ": the attention core's " +
                                                             squote(g.node(n).name) + (inGroup ? " is listed as a prologue or an epilogue" : " is missing"));
        }
        NodeSet members(pro.begin(), pro.end());
        members.insert(coreSet.begin(), coreSet.end());
        checkEpilogues(gi, epi, members, NodeSet{p.pv});
        NodeSet inner(epi.begin(), epi.end());
        inner.insert(coreSet.begin(), coreSet.end());
        for (auto it = pro.rbegin(); it != pro.rend(); ++it) {
            if (Refusal r = prologueCheck(g, *it, inner); !r.ok()) add(gi, g.node(*it).name, r);
            inner.insert(*it);
        }
    }

    struct ConvInfo {
        bool ok = false;
        std::int64_t inC = 0, outC = 0, kh = 1, kw = 1, group = 1, sh = 1, sw = 1;
        std::vector<std::int64_t> weightDims, pads;
    };

    ConvInfo convInfo(ir::NodeId n) const {
        ConvInfo c;
        const ir::Node& node = g.node(n);
        if (node.inputs.size() < 2 || node.inputs[0] == ir::kNoValue || node.inputs[1] == ir::kNoValue) return c;
        const auto x = g.value(node.inputs[0]).type.shape.knownDims();
        const auto w = g.value(node.inputs[1]).type.shape.knownDims();
        if (!x || !w || x->size() != 4 || w->size() != 4) return c;
        c.inC = (*x)[1];
        c.outC = (*w)[0];
        c.kh = (*w)[2];
        c.kw = (*w)[3];
        c.weightDims = *w;
        c.group = node.attrInt("group", 1);
        const auto strides = node.attrInts("strides", {1, 1});
        c.sh = strides.size() == 2 ? strides[0] : 1;
        c.sw = strides.size() == 2 ? strides[1] : 1;
        c.pads = node.attrInts("pads", {0, 0, 0, 0});
        c.ok = true;
        return c;
    }

    static bool isDepthwise(const ConvInfo& c) {
        return c.group == c.inC && c.weightDims[1] == 1 && c.inC > 0 && c.outC % c.inC == 0;
    }
    static bool isPointwise(const ConvInfo& c) {
        return c.kh == 1 && c.kw == 1 && c.group == 1 && c.sh == 1 && c.sw == 1 &&
               std::all_of(c.pads.begin(), c.pads.end(), [](std::int64_t p) { return p == 0; });
    }
    static std::string dimsText(const std::vector<std::int64_t>& d) {
        std::string s = "[";
        for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
        return s + "]";
    }

    bool checkConvKind(int gi, ir::NodeId n, bool wantDepthwise, const ConvInfo& c) {
        const std::string& name = g.node(n).name;
        if (!c.ok) {
            add(gi, name, "kind", name + "'s shapes are not static: cannot tell its convolution kind");
            return false;
        }
        if (wantDepthwise && !isDepthwise(c)) {
            add(gi, name, "kind", name + " is not depthwise (group " + std::to_string(c.group) + ", input channels " +
                                      std::to_string(c.inC) + ", weights " + dimsText(c.weightDims) + ")");
            return false;
        }
        if (!wantDepthwise && !isPointwise(c)) {
            add(gi, name, "kind", name + " is not pointwise (kernel " + std::to_string(c.kh) + "x" + std::to_string(c.kw) +
                                      ", group " + std::to_string(c.group) + ", strides " + dimsText({c.sh, c.sw}) +
                                      ", pads " + dimsText(c.pads) + ")");
            return false;
        }
        return true;
    }

    bool isConstantValue(ir::ValueId v) const {
        if (g.value(v).isInitializer) return true;
        const ir::NodeId p = g.producer(v);
        return p != ir::kNoNode && detail::isConstantNode(g, p);
    }

    /// Shared memory one tile of a conv chain needs, in bytes (FP32 = 4 bytes per element).
    /// With the second conv's output tile h x w, `depth` intermediate channels per tile and
    /// `filters` output channels per tile (0 = all of the second conv's filters; for a
    /// depthwise second conv its filters are the depth):
    ///   intermediate patch  mh = (h - 1) * s2h + k2h,  mw = (w - 1) * s2w + k2w   (second conv)
    ///   input patch         ih = (mh - 1) * s1h + k1h, iw = (mw - 1) * s1w + k1w  (first conv)
    ///   input channels      depthwise first: depth; pointwise first: all its input channels
    ///   weights             first:  depthwise depth * k1h * k1w, pointwise depth * C_in1
    ///                       second: depthwise depth * k2h * k2w, pointwise filters * depth
    ///   bytes = 4 * (ih * iw * input channels + weights)
    static std::int64_t chainSharedBytes(const ConvInfo& a, bool aDw, const ConvInfo& b, bool bDw, const FusionTile& t) {
        const std::int64_t mh = (t.h - 1) * b.sh + b.kh, mw = (t.w - 1) * b.sw + b.kw;
        const std::int64_t ih = (mh - 1) * a.sh + a.kh, iw = (mw - 1) * a.sw + a.kw;
        const std::int64_t inChannels = aDw ? t.depth : a.inC;
        const std::int64_t filters = t.filters > 0 ? t.filters : b.outC;
        const std::int64_t w1 = aDw ? t.depth * a.kh * a.kw : t.depth * a.inC;
        const std::int64_t w2 = bDw ? t.depth * b.kh * b.kw : filters * t.depth;
        return 4 * (ih * iw * inChannels + w1 + w2);
    }

    void checkConvChain(int gi) {
        const FusionGroup& gr = plan.groups[static_cast<std::size_t>(gi)];
        const std::string kindText = std::string(fusionKindName(gr.kind));
        const auto ids = sortedIds(gr.ops);
        std::vector<ir::NodeId> convs;
        for (ir::NodeId n : ids)
            if (g.node(n).opType == "Conv" && g.node(n).domain.empty()) convs.push_back(n);
        if (convs.size() != 2) {
            add(gi, "", "not-a-chain", "group " + gr.name + " (" + kindText + ") has " + std::to_string(convs.size()) +
                                           (convs.size() == 1 ? " convolution" : " convolutions") + "; a conv chain has 2");
            return;
        }
        const ir::NodeId c1 = convs[0], c2 = convs[1];
        if (gr.anchor != g.node(c1).name && gr.contains(gr.anchor))
            add(gi, gr.anchor, "kind", "group " + gr.name + "'s anchor should be its first convolution " + g.node(c1).name);
        if (!gr.prologue.empty()) add(gi, gr.prologue.front(), "kind", "group " + gr.name + " (" + kindText + ") cannot have prologue ops");
        bool chainOk = true;
        for (ir::NodeId n : ids)
            if (n != c1 && n != c2 && !detail::isElementwiseNode(g, n)) {
                add(gi, g.node(n).name, "not-a-chain", g.node(n).name + " (" + g.node(n).opType +
                                                           ") is not elementwise: a conv chain holds two convolutions and elementwise ops");
                chainOk = false;
            }
        if (!chainOk) return;
        const NodeSet members(ids.begin(), ids.end());
        NodeSet chain{c1};
        ir::ValueId v = g.node(c1).outputs.empty() ? ir::kNoValue : g.node(c1).outputs[0];
        while (v != ir::kNoValue) {
            const std::string vname = g.value(v).name;
            const std::string prod = g.node(g.producer(v)).name;
            if (g.value(v).isGraphOutput) {
                add(gi, prod, "graph-output", squote(vname) + " is a graph output: the chain's intermediate must stay inside the group");
                return;
            }
            if (const int uses = detail::useCount(g, v); uses != 1) {
                add(gi, prod, "multi-use", prod + "'s output " + squote(vname) + " has " + std::to_string(uses) +
                                              " uses: the chain's intermediate must stay inside the group");
                return;
            }
            const ir::NodeId c = g.consumers(v)[0];
            const std::string& cname = g.node(c).name;
            if (c == c2) {
                if (g.node(c2).inputs[0] != v) {
                    add(gi, cname, "not-a-chain", cname + " reads " + squote(vname) + " but not as its data input");
                    return;
                }
                break;
            }
            if (!members.count(c)) {
                add(gi, cname, "not-a-chain", squote(vname) + " leaves the group (read by " + cname + "): " + g.node(c1).name +
                                                  " does not reach " + g.node(c2).name + " inside the group");
                return;
            }
            for (ir::ValueId other : g.node(c).inputs)
                if (other != ir::kNoValue && other != v && !isConstantValue(other)) {
                    add(gi, cname, "not-a-chain", cname + "'s input " + squote(g.value(other).name) +
                                                      " is not a constant: ops between the convolutions may read only the intermediate and constants");
                    return;
                }
            chain.insert(c);
            v = g.node(c).outputs.empty() ? ir::kNoValue : g.node(c).outputs[0];
        }
        chain.insert(c2);
        std::vector<ir::NodeId> epilogues;
        for (ir::NodeId n : ids)
            if (!chain.count(n)) epilogues.push_back(n);
        checkEpilogues(gi, epilogues, chain, NodeSet{c2});

        const bool firstDw = gr.kind == FusionKind::DwPw;
        const bool secondDw = gr.kind == FusionKind::PwDw;
        const ConvInfo a = convInfo(c1), b = convInfo(c2);
        const bool kindsOk = checkConvKind(gi, c1, firstDw, a) & checkConvKind(gi, c2, secondDw, b);
        if (!kindsOk || !hw || gr.tile.empty()) return;
        const FusionTile& t = gr.tile;
        if (t.h <= 0 || t.w <= 0 || t.depth <= 0 || t.filters < 0) {
            add(gi, "", "kind", "group " + gr.name + "'s tile " + std::to_string(t.h) + "x" + std::to_string(t.w) + "x" +
                                    std::to_string(t.depth) + " is incomplete");
            return;
        }
        const std::int64_t need = chainSharedBytes(a, firstDw, b, secondDw, t);
        if (need > hw->sharedBytes) {
            const std::int64_t needKiB = (need + 1023) / 1024, haveKiB = hw->sharedBytes / 1024;
            add(gi, "", "shared-memory", "tile does not fit shared memory: " + std::to_string(needKiB) + " KiB > " +
                                             std::to_string(haveKiB) + " KiB");
        }
    }

    void run() {
        pos = topoPositions(g);
        checkCoverage();
        for (std::size_t i = 0; i < plan.groups.size(); ++i) {
            const int gi = static_cast<int>(i);
            if (!checkShape(gi)) continue;
            const FusionKind k = plan.groups[i].kind;
            if (k == FusionKind::PrologueEpilogue) checkPrologueEpilogue(gi);
            else if (k == FusionKind::Attention) checkAttention(gi);
            else if (isConvChain(k)) checkConvChain(gi);
        }
        std::vector<int> onCycle;
        orderGroups(g, plan, onCycle);
        if (!onCycle.empty()) add(onCycle.front(), "", "cycle", cycleMessage(plan, onCycle));
    }
};

}  // namespace

std::vector<FusionViolation> checkPlan(const ir::Graph& g, const FusionPlan& plan, const target::GpuProfile* hw) {
    Checker c{g, plan, hw, {}, {}};
    c.run();
    return std::move(c.out);
}

// ---------------------------------------------------------------------------- planNone etc.
FusionPlan planNone(const ir::Graph& g) {
    FusionPlan p;
    p.planner = "none";
    const auto order = g.topologicalOrder();
    for (std::size_t i = 0; i < g.numNodes(); ++i) {
        const ir::NodeId n = order ? (*order)[i] : static_cast<ir::NodeId>(i);
        if (detail::isConstantNode(g, n)) continue;
        FusionGroup gr;
        gr.name = g.node(n).name;
        gr.kind = FusionKind::Single;
        gr.ops = {g.node(n).name};
        gr.anchor = g.node(n).name;
        const detail::GroupTraffic t = detail::groupTraffic(g, {n});
        gr.predictedBytes = t.bytes;
        gr.predictedBytesSaved = t.saved;
        gr.reason = "one kernel per op";
        p.groups.push_back(std::move(gr));
    }
    return p;
}

support::Expected<FusionPlan> normalizePlan(const ir::Graph& g, FusionPlan plan) {
    const auto pos = topoPositions(g);
    auto byTopo = [&](std::vector<std::string>& names) {
        std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
            const ir::NodeId x = g.findNode(a), y = g.findNode(b);
            const int px = x == ir::kNoNode ? static_cast<int>(pos.size()) : pos[static_cast<std::size_t>(x)];
            const int py = y == ir::kNoNode ? static_cast<int>(pos.size()) : pos[static_cast<std::size_t>(y)];
            return px < py;
        });
    };
    for (auto& gr : plan.groups) {
        byTopo(gr.ops);
        byTopo(gr.prologue);
        byTopo(gr.epilogue);
    }
    std::vector<int> onCycle;
    const auto order = orderGroups(g, plan, onCycle);
    if (!onCycle.empty()) {
        support::DiagnosticList d;
        d.error("", "fusion plan", cycleMessage(plan, onCycle));
        return d;
    }
    std::vector<FusionGroup> groups;
    groups.reserve(plan.groups.size());
    for (int gi : order) groups.push_back(std::move(plan.groups[static_cast<std::size_t>(gi)]));
    plan.groups = std::move(groups);
    return plan;
}

// -------------------------------------------------------------------------------------- JSON
namespace {

constexpr const char* kPlanFormat = "tessera-fusion-plan";
constexpr int kPlanVersion = 1;

support::DiagnosticList jsonError(const std::string& file, const std::string& where, const std::string& message) {
    support::DiagnosticList d;
    d.error(file, where, message);
    return d;
}

}  // namespace

std::string planToJson(const FusionPlan& plan) {
    using J = nlohmann::ordered_json;
    J root;
    root["format"] = kPlanFormat;
    root["version"] = kPlanVersion;
    root["planner"] = plan.planner;
    root["hardware"] = plan.hardware;
    J groups = J::array();
    for (const auto& gr : plan.groups) {
        J j;
        j["name"] = gr.name;
        j["kind"] = fusionKindName(gr.kind);
        j["ops"] = gr.ops;
        j["anchor"] = gr.anchor;
        j["prologue"] = gr.prologue;
        j["epilogue"] = gr.epilogue;
        j["tile"] = J{{"h", gr.tile.h}, {"w", gr.tile.w}, {"depth", gr.tile.depth}, {"filters", gr.tile.filters}};
        j["predicted_bytes"] = gr.predictedBytes;
        j["predicted_bytes_saved"] = gr.predictedBytesSaved;
        j["redundant_flops"] = gr.redundantFlops;
        j["reason"] = gr.reason;
        groups.push_back(std::move(j));
    }
    root["groups"] = std::move(groups);
    return root.dump(2) + "\n";
}

support::Expected<FusionPlan> planFromJson(const std::string& text, const std::string& file) {
    using J = nlohmann::json;
    J root;
    try {
        root = J::parse(text);
    } catch (const J::parse_error& e) {
        return jsonError(file, "", std::string("not valid JSON: ") + e.what());
    }
    if (!root.is_object()) return jsonError(file, "", "a fusion plan must be a JSON object");
    auto str = [&](const J& obj, const char* key, const std::string& where, bool required, std::string& out) -> std::string {
        const auto it = obj.find(key);
        if (it == obj.end()) return required ? where + "." + key + " is missing" : std::string();
        if (!it->is_string()) return where + "." + key + " must be a string";
        out = it->get<std::string>();
        return {};
    };
    auto int64 = [&](const J& obj, const char* key, const std::string& where, std::int64_t& out) -> std::string {
        const auto it = obj.find(key);
        if (it == obj.end()) return {};
        if (!it->is_number_integer()) return where + "." + key + " must be an integer";
        out = it->get<std::int64_t>();
        return {};
    };
    auto strings = [&](const J& obj, const char* key, const std::string& where, bool required,
                       std::vector<std::string>& out) -> std::string {
        const auto it = obj.find(key);
        if (it == obj.end()) return required ? where + "." + key + " is missing" : std::string();
        if (!it->is_array()) return where + "." + key + " must be an array of node names";
        for (const auto& e : *it) {
            if (!e.is_string()) return where + "." + key + " must be an array of node names";
            out.push_back(e.get<std::string>());
        }
        return {};
    };
    std::string format;
    if (auto e = str(root, "format", "plan", true, format); !e.empty()) return jsonError(file, "format", e);
    if (format != kPlanFormat)
        return jsonError(file, "format", "not a fusion plan: format is " + squote(format) + ", expected " + squote(kPlanFormat));
    const auto ver = root.find("version");
    if (ver == root.end() || !ver->is_number_integer()) return jsonError(file, "version", "plan.version is missing or not an integer");
    if (ver->get<std::int64_t>() > kPlanVersion)
        return jsonError(file, "version", "plan version " + std::to_string(ver->get<std::int64_t>()) +
                                              " is newer than this Tessera reads (" + std::to_string(kPlanVersion) + ")");
    if (ver->get<std::int64_t>() < 1) return jsonError(file, "version", "plan version must be 1");
    FusionPlan plan;
    if (auto e = str(root, "planner", "plan", true, plan.planner); !e.empty()) return jsonError(file, "planner", e);
    if (auto e = str(root, "hardware", "plan", false, plan.hardware); !e.empty()) return jsonError(file, "hardware", e);
    const auto groups = root.find("groups");
    if (groups == root.end() || !groups->is_array()) return jsonError(file, "groups", "plan.groups is missing or not an array");
    for (std::size_t i = 0; i < groups->size(); ++i) {
        const J& j = (*groups)[i];
        const std::string where = "groups[" + std::to_string(i) + "]";
        if (!j.is_object()) return jsonError(file, where, where + " must be an object");
        FusionGroup gr;
        std::string kind;
        std::string e;
        if (e = str(j, "name", where, true, gr.name); !e.empty()) return jsonError(file, where, e);
        if (e = str(j, "kind", where, true, kind); !e.empty()) return jsonError(file, where, e);
        const auto k = parseFusionKind(kind);
        if (!k)
            return jsonError(file, where, where + ".kind " + squote(kind) +
                                              " is unknown (single, prologue-epilogue, dw-pw, pw-dw, pw-pw, attention)");
        gr.kind = *k;
        if (e = strings(j, "ops", where, true, gr.ops); !e.empty()) return jsonError(file, where, e);
        if (e = str(j, "anchor", where, true, gr.anchor); !e.empty()) return jsonError(file, where, e);
        if (e = strings(j, "prologue", where, false, gr.prologue); !e.empty()) return jsonError(file, where, e);
        if (e = strings(j, "epilogue", where, false, gr.epilogue); !e.empty()) return jsonError(file, where, e);
        if (const auto t = j.find("tile"); t != j.end()) {
            if (!t->is_object()) return jsonError(file, where, where + ".tile must be an object");
            const std::string tw = where + ".tile";
            if (e = int64(*t, "h", tw, gr.tile.h); !e.empty()) return jsonError(file, where, e);
            if (e = int64(*t, "w", tw, gr.tile.w); !e.empty()) return jsonError(file, where, e);
            if (e = int64(*t, "depth", tw, gr.tile.depth); !e.empty()) return jsonError(file, where, e);
            if (e = int64(*t, "filters", tw, gr.tile.filters); !e.empty()) return jsonError(file, where, e);
        }
        if (e = int64(j, "predicted_bytes", where, gr.predictedBytes); !e.empty()) return jsonError(file, where, e);
        if (e = int64(j, "predicted_bytes_saved", where, gr.predictedBytesSaved); !e.empty()) return jsonError(file, where, e);
        if (e = int64(j, "redundant_flops", where, gr.redundantFlops); !e.empty()) return jsonError(file, where, e);
        if (e = str(j, "reason", where, false, gr.reason); !e.empty()) return jsonError(file, where, e);
        plan.groups.push_back(std::move(gr));
    }
    return plan;
}

}  // namespace tessera::schedule
