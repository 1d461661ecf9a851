// Hidet's post-scheduling fusion rules as a planner (semantics.md §2.3, planners.h):
//   0. attention cores (attention_pattern.h: MatMul(Q, K^T) -> score ops -> Softmax -> MatMul(P, V)),
//      in topological order of their first MatMul, each anchors an `attention` group of its core
//      that then grows epilogues and prologues like any anchor (the Q/K scaling Muls, K's
//      Transpose and the head-split index maps become prologues);
//   1. anchors = non-injective fusible ops, in topological order; each grows epilogues (consumers
//      of its outputs, epilogueRefusal == "") and then prologues (producers of its inputs,
//      prologueRefusal == ""), taking only unassigned ops; a MatMul/Gemm anchor keeps no prologue
//      chain holding an expensive op (Erf, Exp, Tanh ...: it would run once per column tile);
//   2. ops that cannot be fused at all (unknown, control flow, Compute with a reduction) are
//      single groups;
//   3. injective ops that cannot be inlined into loads (Slice, Pad, Gather ...: never a
//      prologue), forwards: each anchors a group and grows epilogues, then prologues;
//   4. leftovers, walking backwards: each unassigned op anchors a group and grows prologues;
//   5. groups are ordered topologically and named g0, g1, ...
// The fused lowering inlines elementwise ops and index maps (Transpose, the Reshape family) into
// loads and stores, so the refusals accept those as prologues/epilogues; Slice, Pad, Gather ...
// are never inlined, but may anchor a group with elementwise epilogues.
#include <algorithm>
#include <set>
#include <string>

#include "core/schedule/attention_pattern.h"
#include "core/schedule/fusion_rules.h"
#include "core/schedule/planners.h"

namespace tessera::schedule {

namespace {

std::string joinNames(const ir::Graph& g, const std::vector<ir::NodeId>& ids) {
    std::string s;
    for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + g.node(ids[i]).name;
    return s;
}

struct HidetPlanner {
    const ir::Graph& g;
    std::vector<ir::NodeId> order;  ///< topological order
    std::vector<int> pos;           ///< node -> position in order
    std::vector<int> assigned;      ///< node -> group index, -1 unassigned, -2 in a seed group

    struct Growing {
        ir::NodeId anchor = ir::kNoNode;
        std::vector<ir::NodeId> members;  ///< insertion order: anchor, then absorbed ops
        std::vector<ir::NodeId> prologue, epilogue;
        bool leftover = false;
        bool attention = false;  ///< an attention core: members past the anchor that are neither
                                 ///< prologue nor epilogue are the core's
        std::string note;  ///< why nothing more was fused (first refusal at the anchor's output)
    };
    std::vector<Growing> grown;
    FusionPlan plan;
    std::vector<bool> fromSeed;  ///< per plan group

    explicit HidetPlanner(const ir::Graph& graph) : g(graph) {
        if (auto o = g.topologicalOrder()) {
            order = std::move(*o);
        } else {
            for (std::size_t i = 0; i < g.numNodes(); ++i) order.push_back(static_cast<ir::NodeId>(i));
        }
        pos.assign(g.numNodes(), 0);
        for (std::size_t i = 0; i < order.size(); ++i) pos[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
        assigned.assign(g.numNodes(), -1);
    }

    bool free(ir::NodeId n) const {
        return n != ir::kNoNode && assigned[static_cast<std::size_t>(n)] == -1 && !detail::isConstantNode(g, n);
    }

    int newGroup(ir::NodeId anchor, bool leftover) {
        Growing gr;
        gr.anchor = anchor;
        gr.members = {anchor};
        gr.leftover = leftover;
        grown.push_back(std::move(gr));
        const int gi = static_cast<int>(grown.size()) - 1;
        assigned[static_cast<std::size_t>(anchor)] = gi;
        return gi;
    }

    void absorb(int gi, ir::NodeId n, bool asEpilogue) {
        Growing& gr = grown[static_cast<std::size_t>(gi)];
        gr.members.push_back(n);
        (asEpilogue ? gr.epilogue : gr.prologue).push_back(n);
        assigned[static_cast<std::size_t>(n)] = gi;
    }

    void growEpilogues(int gi) {
        for (bool changed = true; changed;) {
            changed = false;
            const std::vector<ir::NodeId> members = grown[static_cast<std::size_t>(gi)].members;
            for (ir::NodeId m : members) {
                for (ir::ValueId v : g.node(m).outputs) {
                    if (v == ir::kNoValue || g.consumers(v).size() != 1) continue;
                    const ir::NodeId c = g.consumers(v)[0];
                    if (!free(c) || !epilogueRefusal(g, v, c, members).empty()) continue;
                    absorb(gi, c, true);
                    changed = true;
                    break;
                }
                if (changed) break;
            }
        }
    }

    /// Ops costing many instructions per element (transcendental functions, Pow, Sqrt).
    static bool isExpensiveElementwise(const ir::Node& n) {
        static const std::set<std::string> kExpensive = {
            "Erf",  "Exp",   "Log",  "Tanh", "Sigmoid", "Softplus", "Gelu",  "Pow",   "Sqrt",  "Sin",
            "Cos",  "Tan",   "Asin", "Acos", "Atan",    "Sinh",     "Cosh",  "Asinh", "Acosh", "Atanh",
            "Elu",  "Selu",  "Celu", "Mish", "Softsign"};
        return n.domain.empty() && kExpensive.count(n.opType) > 0;
    }

    /// GEMM anchors (MatMul, Gemm) read each element of A once per column tile of the output: a
    /// prologue inlined into A's loads runs N / tile-width times per element. With an expensive
    /// op in it (the Erf of an exported GELU between a transformer's two MLP Linears) the GEMM
    /// ran at half its speed on the H200 (ViT-B/16's second MLP Linear: 11.8 TFLOP/s fused, the
    /// other Linears ~20), so such a prologue is left to its own elementwise kernel, where each
    /// element is computed once (XLA's fusion declines expensive producers into consumers that
    /// reuse operand elements, for the same reason). Cheap prologues (scaling, Clip, index maps)
    /// stay fused.
    void growPrologues(int gi) {
        growProloguesAll(gi, false);
        Growing& gr = grown[static_cast<std::size_t>(gi)];
        const std::string& op = g.node(gr.anchor).opType;
        if (gr.attention || gr.leftover || (op != "MatMul" && op != "Gemm") || !g.node(gr.anchor).domain.empty()) return;
        const auto costly = std::find_if(gr.prologue.begin(), gr.prologue.end(),
                                         [&](ir::NodeId m) { return isExpensiveElementwise(g.node(m)); });
        if (costly == gr.prologue.end()) return;
        const ir::Node& c = g.node(*costly);
        std::string why = "prologue " + c.name + " (" + c.opType + ") left to its own kernel: " + op +
                          " would recompute it for every column tile";
        for (ir::NodeId m : gr.prologue) {
            assigned[static_cast<std::size_t>(m)] = -1;
            gr.members.erase(std::find(gr.members.begin(), gr.members.end(), m));
        }
        gr.prologue.clear();
        growProloguesAll(gi, true);
        gr.note = gr.note.empty() ? why : gr.note + "; " + why;
    }

    /// Grows prologues by Hidet's rule; indexMapsOnly: Transpose and the Reshape family only.
    /// Prologues feed the anchor (or the attention core, or other prologues), never an epilogue:
    /// an epilogue's other input must come from outside the group (epilogueRefusal's
    /// reads-group-output rule), so a Not feeding the Where epilogue of a Slice stays outside.
    void growProloguesAll(int gi, bool indexMapsOnly) {
        for (bool changed = true; changed;) {
            changed = false;
            const Growing& gr = grown[static_cast<std::size_t>(gi)];
            const std::vector<ir::NodeId> members = gr.members;
            for (ir::NodeId m : members) {
                if (std::find(gr.epilogue.begin(), gr.epilogue.end(), m) != gr.epilogue.end()) continue;
                for (ir::ValueId v : g.node(m).inputs) {
                    if (v == ir::kNoValue) continue;
                    const ir::NodeId p = g.producer(v);
                    if (!free(p) || !prologueRefusal(g, p, members).empty()) continue;
                    if (indexMapsOnly && !detail::isIndexMapNode(g, p)) continue;
                    absorb(gi, p, false);
                    changed = true;
                    break;
                }
                if (changed) break;
            }
        }
    }

    /// When an anchor fused no epilogue: why its (single) consumer was refused, for the reason.
    void noteRefusal(int gi) {
        Growing& gr = grown[static_cast<std::size_t>(gi)];
        if (!gr.epilogue.empty() || gr.leftover) return;
        const ir::Node& a = g.node(gr.anchor);
        if (a.outputs.empty() || a.outputs[0] == ir::kNoValue) return;
        const ir::ValueId v = a.outputs[0];
        if (g.value(v).isGraphOutput) {
            gr.note = (gr.note.empty() ? "" : gr.note + "; ") + "no epilogue: '" + g.value(v).name + "' is a graph output";
            return;
        }
        for (ir::NodeId c : g.consumers(v)) {
            const std::string r = epilogueRefusal(g, v, c, gr.members);
            if (!r.empty()) {
                gr.note = (gr.note.empty() ? "" : gr.note + "; ") + "no epilogue: " + r;
                return;
            }
        }
    }

    void plan_(const FusionPlan* seed) {
        // Seed groups: kept as they are; their nodes are taken.
        std::vector<FusionGroup> seeds;
        if (seed) {
            for (const auto& sg : seed->groups) {
                seeds.push_back(sg);
                for (const auto& name : sg.ops)
                    if (const ir::NodeId n = g.findNode(name); n != ir::kNoNode)
                        assigned[static_cast<std::size_t>(n)] = -2;  // taken by a seed
            }
        }
        // 0: attention cores, before MatMul anchors take their parts.
        for (ir::NodeId n : order) {
            if (!free(n) || g.node(n).opType != "MatMul" || !g.node(n).domain.empty()) continue;
            const AttentionPattern p = matchAttention(g, n);
            if (!p.ok()) continue;
            const std::vector<ir::NodeId> core = p.core();
            if (!std::all_of(core.begin(), core.end(), [&](ir::NodeId m) { return free(m); })) continue;
            const int gi = newGroup(n, false);
            Growing& gr = grown[static_cast<std::size_t>(gi)];
            gr.attention = true;
            for (std::size_t i = 1; i < core.size(); ++i) {
                gr.members.push_back(core[i]);
                assigned[static_cast<std::size_t>(core[i])] = gi;
            }
            growEpilogues(gi);
            growPrologues(gi);
        }
        // 1 + 2: anchors and ops that cannot fuse, in topological order.
        for (ir::NodeId n : order) {
            if (!free(n)) continue;
            if (!detail::notFusibleReason(g, n).empty()) {
                const int gi = newGroup(n, false);
                grown[static_cast<std::size_t>(gi)].note = detail::notFusibleReason(g, n);
                continue;
            }
            if (detail::isInjectiveNode(g, n)) continue;
            const int gi = newGroup(n, false);
            growEpilogues(gi);
            growPrologues(gi);
            noteRefusal(gi);
        }
        // 2b: injective ops the fused lowering cannot inline into loads (Slice, Pad, Gather,
        // Concat ...) are never prologues, so they anchor their own group: forwards, each grows
        // epilogues (e.g. the Relu after a Slice) and then prologues.
        for (ir::NodeId n : order) {
            if (!free(n) || detail::isElementwiseNode(g, n) || detail::isIndexMapNode(g, n)) continue;
            const int gi = newGroup(n, false);
            growEpilogues(gi);
            growPrologues(gi);
            noteRefusal(gi);
        }
        // 3: leftovers, backwards.
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            if (!free(*it)) continue;
            const int gi = newGroup(*it, true);
            growPrologues(gi);
        }
        // Build the groups.
        for (Growing& gr : grown) {
            auto byPos = [&](ir::NodeId a, ir::NodeId b) { return pos[static_cast<std::size_t>(a)] < pos[static_cast<std::size_t>(b)]; };
            std::sort(gr.members.begin(), gr.members.end(), byPos);
            std::sort(gr.prologue.begin(), gr.prologue.end(), byPos);
            std::sort(gr.epilogue.begin(), gr.epilogue.end(), byPos);
            FusionGroup fg;
            fg.kind = gr.attention                ? FusionKind::Attention
                      : gr.members.size() == 1 ? FusionKind::Single
                                               : FusionKind::PrologueEpilogue;
            for (ir::NodeId m : gr.members) fg.ops.push_back(g.node(m).name);
            for (ir::NodeId m : gr.prologue) fg.prologue.push_back(g.node(m).name);
            for (ir::NodeId m : gr.epilogue) fg.epilogue.push_back(g.node(m).name);
            fg.anchor = g.node(gr.anchor).name;
            const detail::GroupTraffic t = detail::groupTraffic(g, gr.members);
            fg.predictedBytes = t.bytes;
            fg.predictedBytesSaved = t.saved;
            fg.redundantFlops = 0;
            if (!detail::notFusibleReason(g, gr.anchor).empty()) {
                fg.reason = gr.note;
            } else {
                fg.reason = std::string(gr.attention ? "attention: QK^T " : gr.leftover ? "leftover " : "anchor ") + fg.anchor;
                if (gr.attention) {
                    std::vector<ir::NodeId> core;
                    for (ir::NodeId m : gr.members)
                        if (m != gr.anchor && std::find(gr.prologue.begin(), gr.prologue.end(), m) == gr.prologue.end() &&
                            std::find(gr.epilogue.begin(), gr.epilogue.end(), m) == gr.epilogue.end())
                            core.push_back(m);
                    fg.reason += " -> " + joinNames(g, core) + " (online softmax, one kernel)";
                }
                if (!gr.prologue.empty()) fg.reason += "; prologue " + joinNames(g, gr.prologue);
                if (!gr.epilogue.empty()) fg.reason += "; epilogue " + joinNames(g, gr.epilogue);
                if (!gr.note.empty()) fg.reason += "; " + gr.note;
            }
            plan.groups.push_back(std::move(fg));
        }
        for (auto& s : seeds) plan.groups.push_back(std::move(s));
    }
};

}  // namespace

FusionPlan planHidet(const ir::Graph& g, const FusionPlan* seed) {
    HidetPlanner p(g);
    p.plan_(seed);
    FusionPlan plan = std::move(p.plan);
    plan.planner = "hidet";
    if (seed) plan.hardware = seed->hardware;
    auto normalized = normalizePlan(g, plan);
    if (normalized) plan = std::move(*normalized);  // a cycle can only come from the seed: keep the order then
    for (std::size_t i = 0; i < plan.groups.size(); ++i) plan.groups[i].name = "g" + std::to_string(i);
    return plan;
}

}  // namespace tessera::schedule
