// The attention pattern matcher (attention_pattern.h): from the QK^T MatMul forwards along the
// single-use chain of score ops to the Softmax and the PV MatMul.
#include "core/schedule/attention_pattern.h"

#include <set>

#include "core/schedule/fusion_plan.h"
#include "core/schedule/fusion_rules.h"

namespace tessera::schedule {

namespace {

bool isOp(const ir::Graph& g, ir::NodeId n, const char* op) {
    return n != ir::kNoNode && g.node(n).domain.empty() && g.node(n).opType == op;
}

/// "" when `v` (an intermediate of the core) may stay inside the kernel: one use, not a graph
/// output.
std::string intermediateRefusal(const ir::Graph& g, ir::ValueId v, const std::string& producer) {
    const std::string name = "'" + g.value(v).name + "'";
    if (g.value(v).isGraphOutput) return producer + "'s output " + name + " is a graph output";
    if (const int uses = detail::useCount(g, v); uses != 1)
        return producer + "'s output " + name + " has " + std::to_string(uses) + " uses";
    return {};
}

bool rankAtLeast2(const ir::Graph& g, ir::ValueId v) {
    return v != ir::kNoValue && g.value(v).type.shape.rankKnown() && g.value(v).type.shape.rank() >= 2;
}

}  // namespace

std::vector<ir::NodeId> AttentionPattern::core() const {
    std::vector<ir::NodeId> r{qk};
    r.insert(r.end(), scoreOps.begin(), scoreOps.end());
    r.push_back(softmax);
    r.push_back(pv);
    return r;
}

AttentionPattern matchAttention(const ir::Graph& g, ir::NodeId qk, std::string* whyNot) {
    auto fail = [&](std::string why) {
        if (whyNot) *whyNot = std::move(why);
        return AttentionPattern{};
    };
    if (qk < 0 || static_cast<std::size_t>(qk) >= g.numNodes()) return fail("no such node");
    if (!isOp(g, qk, "MatMul")) return fail(g.node(qk).name + " is not a MatMul");
    const ir::Node& mm = g.node(qk);
    if (mm.inputs.size() != 2 || mm.outputs.empty() || mm.outputs[0] == ir::kNoValue)
        return fail(mm.name + " does not have two inputs and an output");
    if (!rankAtLeast2(g, mm.inputs[0]) || !rankAtLeast2(g, mm.inputs[1]))
        return fail(mm.name + "'s operands are not matrices (rank >= 2) of known rank");
    AttentionPattern p;
    p.qk = qk;
    std::set<ir::NodeId> members{qk};
    ir::ValueId v = mm.outputs[0];
    std::string producer = mm.name;
    for (;;) {
        if (std::string r = intermediateRefusal(g, v, producer); !r.empty()) return fail(r);
        const ir::NodeId c = g.consumers(v)[0];
        if (isOp(g, c, "Softmax")) {
            p.softmax = c;
            break;
        }
        if (!detail::isElementwiseNode(g, c))
            return fail(g.node(c).name + " (" + g.node(c).opType + ") between " + mm.name +
                        " and the Softmax is not elementwise");
        if (p.scoreOps.size() == kMaxAttentionScoreOps)
            return fail("more than " + std::to_string(kMaxAttentionScoreOps) + " ops between " + mm.name + " and the Softmax");
        if (std::string r = epilogueRefusal(g, v, c, std::vector<ir::NodeId>(members.begin(), members.end())); !r.empty())
            return fail(r);
        const ir::Node& cn = g.node(c);
        if (cn.outputs.empty() || cn.outputs[0] == ir::kNoValue) return fail(cn.name + " has no output");
        p.scoreOps.push_back(c);
        members.insert(c);
        v = cn.outputs[0];
        producer = cn.name;
    }
    const ir::Node& sm = g.node(p.softmax);
    if (std::string r = detail::notFusibleReason(g, p.softmax); !r.empty()) return fail(r);
    if (sm.outputs.empty() || sm.outputs[0] == ir::kNoValue) return fail(sm.name + " has no output");
    const ir::Shape& sShape = g.value(v).type.shape;
    if (!sShape.rankKnown()) return fail(sm.name + "'s input has no known rank");
    const auto rank = static_cast<std::int64_t>(sShape.rank());
    std::int64_t axis = sm.attrInt("axis", -1);
    if (axis < 0) axis += rank;
    if (axis != rank - 1) return fail(sm.name + " is not over the last axis");
    members.insert(p.softmax);
    const ir::ValueId probs = sm.outputs[0];
    if (std::string r = intermediateRefusal(g, probs, sm.name); !r.empty()) return fail(r);
    const ir::NodeId pv = g.consumers(probs)[0];
    if (!isOp(g, pv, "MatMul")) return fail(sm.name + "'s output is read by " + g.node(pv).name + ", not a MatMul");
    const ir::Node& pvn = g.node(pv);
    if (pvn.inputs.size() != 2 || pvn.inputs[0] != probs || pvn.inputs[1] == probs || pvn.outputs.empty() ||
        pvn.outputs[0] == ir::kNoValue)
        return fail(pvn.name + " does not multiply the probabilities (its first input) by a second tensor");
    if (!rankAtLeast2(g, pvn.inputs[1])) return fail(pvn.name + "'s V is not a matrix (rank >= 2) of known rank");
    if (detail::dependsOnMembers(g, pvn.inputs[1], members))
        return fail(pvn.name + "'s V '" + g.value(pvn.inputs[1]).name + "' depends on the attention scores");
    p.pv = pv;
    return p;
}

}  // namespace tessera::schedule
