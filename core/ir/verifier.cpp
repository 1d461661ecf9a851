#include "core/ir/verifier.h"

#include <algorithm>
#include <unordered_map>

#include "core/ir/compute.h"
#include "core/ir/op_registry.h"

namespace tessera::ir {

namespace {

constexpr int kMaxSubgraphDepth = 64;
constexpr std::size_t kMaxCycleNames = 8;

/// One graph on the scope chain: its values are visible to the subgraphs nested in it.
struct Scope {
    const Graph* graph = nullptr;
    const std::vector<char>* defined = nullptr;
    const Scope* parent = nullptr;
};

bool visibleInOuter(const Scope* s, const std::string& name) {
    for (; s; s = s->parent) {
        const ValueId id = s->graph->findValue(name);
        if (id != kNoValue && (*s->defined)[static_cast<std::size_t>(id)]) return true;
    }
    return false;
}

std::string nodeDesc(const Node& n) { return "node '" + n.name + "' (" + n.opType + ")"; }

/// Tarjan's strongly connected components, iterative (deep chains must not overflow the stack).
std::vector<std::vector<NodeId>> cyclicComponents(const std::vector<std::vector<NodeId>>& succ) {
    const std::size_t n = succ.size();
    std::vector<int> index(n, -1), low(n, 0);
    std::vector<char> onStack(n, 0);
    std::vector<NodeId> stack;
    std::vector<std::vector<NodeId>> out;
    int counter = 0;
    struct Frame {
        NodeId v;
        std::size_t next;
    };
    std::vector<Frame> call;
    for (std::size_t root = 0; root < n; ++root) {
        if (index[root] >= 0) continue;
        call.push_back({static_cast<NodeId>(root), 0});
        while (!call.empty()) {
            Frame& f = call.back();
            const auto v = static_cast<std::size_t>(f.v);
            if (f.next == 0 && index[v] < 0) {
                index[v] = low[v] = counter++;
                stack.push_back(f.v);
                onStack[v] = 1;
            }
            if (f.next < succ[v].size()) {
                const auto w = static_cast<std::size_t>(succ[v][f.next++]);
                if (index[w] < 0) call.push_back({static_cast<NodeId>(w), 0});
                else if (onStack[w]) low[v] = std::min(low[v], index[w]);
                continue;
            }
            if (low[v] == index[v]) {
                std::vector<NodeId> comp;
                NodeId w;
                do {
                    w = stack.back();
                    stack.pop_back();
                    onStack[static_cast<std::size_t>(w)] = 0;
                    comp.push_back(w);
                } while (w != f.v);
                const bool selfLoop = comp.size() == 1 &&
                                      std::find(succ[v].begin(), succ[v].end(), f.v) != succ[v].end();
                if (comp.size() > 1 || selfLoop) {
                    std::sort(comp.begin(), comp.end());
                    out.push_back(std::move(comp));
                }
            }
            const NodeId done = f.v;
            call.pop_back();
            if (!call.empty()) {
                const auto p = static_cast<std::size_t>(call.back().v);
                low[p] = std::min(low[p], low[static_cast<std::size_t>(done)]);
            }
        }
    }
    return out;
}

std::string dataProblem(const TensorData& t) {
    for (auto d : t.dims)
        if (d < 0) return "has a negative dim " + std::to_string(d);
    if (t.dtype == DType::Undefined) return "has no element type";
    std::string shape = "[";
    for (std::size_t i = 0; i < t.dims.size(); ++i) shape += (i ? "," : "") + std::to_string(t.dims[i]);
    shape += "]";
    const std::string typeStr = std::string(dtypeName(t.dtype)) + shape;
    if (t.sizeConsistent()) return {};
    const std::int64_t n = t.numElements();
    if (t.dtype == DType::String)
        return std::to_string(t.strings.size()) + " strings for " + typeStr + " (expected " + std::to_string(n) + ")";
    std::int64_t expected = 0;
    if (n == 0 && !t.dims.empty() &&
        std::none_of(t.dims.begin(), t.dims.end(), [](std::int64_t d) { return d == 0; }))
        return "element count of " + typeStr + " overflows";
    if (__builtin_mul_overflow(n, static_cast<std::int64_t>(dtypeSize(t.dtype)), &expected))
        return "byte size of " + typeStr + " overflows";
    return std::to_string(t.bytes.size()) + " bytes for " + typeStr + " (expected " + std::to_string(expected) + ")";
}

class Verifier {
public:
    Verifier(const std::string& file, support::DiagnosticList& out) : m_file(file), m_out(out) {}

    void run(const Graph& g, const std::string& prefix, const Scope* parent, int depth) {
        const std::string graphWhere = prefix + "graph '" + g.name + "'";
        auto err = [&](const std::string& where, std::string msg) { m_out.error(m_file, prefix + where, std::move(msg)); };
        const std::size_t nv = g.numValues(), nn = g.numNodes();
        auto validValue = [&](ValueId v) { return v >= 0 && static_cast<std::size_t>(v) < nv; };

        // Names.
        std::unordered_map<std::string, int> valueNames, nodeNames;
        valueNames.reserve(nv);
        for (std::size_t i = 0; i < nv; ++i) {
            const std::string& name = g.value(static_cast<ValueId>(i)).name;
            if (name.empty()) err("value #" + std::to_string(i), "has an empty name");
            else if (++valueNames[name] == 2) err("value '" + name + "'", "name is used by more than one value");
        }
        nodeNames.reserve(nn);
        for (std::size_t i = 0; i < nn; ++i) {
            const Node& n = g.node(static_cast<NodeId>(i));
            if (!n.name.empty() && ++nodeNames[n.name] == 2) err(nodeDesc(n), "node name is used by more than one node");
        }

        // Graph inputs and initializers.
        std::vector<char> defined(nv, 0), isInput(nv, 0), isInit(nv, 0);
        for (std::size_t i = 0; i < nv; ++i) {
            const Value& v = g.value(static_cast<ValueId>(i));
            isInput[i] = v.isGraphInput;
            isInit[i] = v.isInitializer;
        }
        auto listed = [&](const std::vector<ValueId>& ids, const char* what, std::vector<char>& flag) {
            for (ValueId v : ids) {
                if (!validValue(v)) err(graphWhere, std::string(what) + " list refers to a missing value (id " + std::to_string(v) + ")");
                else flag[static_cast<std::size_t>(v)] = 1;
            }
        };
        listed(g.inputs(), "input", isInput);
        listed(g.initializers(), "initializer", isInit);
        for (std::size_t i = 0; i < nv; ++i) defined[i] = isInput[i] || isInit[i];

        // Producers: each value at most once, and never also an input or initializer.
        std::vector<NodeId> producer(nv, kNoNode);
        for (std::size_t i = 0; i < nn; ++i) {
            const Node& n = g.node(static_cast<NodeId>(i));
            for (std::size_t k = 0; k < n.outputs.size(); ++k) {
                const ValueId o = n.outputs[k];
                if (o == kNoValue) continue;
                if (!validValue(o)) {
                    err(nodeDesc(n), "output #" + std::to_string(k) + " refers to a missing value (id " + std::to_string(o) + ")");
                    continue;
                }
                const auto oi = static_cast<std::size_t>(o);
                const Value& v = g.value(o);
                if (producer[oi] != kNoNode) {
                    err("value '" + v.name + "'", "is produced by both '" + g.node(producer[oi]).name + "' and '" + n.name + "'");
                    continue;
                }
                producer[oi] = static_cast<NodeId>(i);
                if (isInit[oi]) err("value '" + v.name + "'", "is produced by '" + n.name + "' but is also an initializer");
                else if (isInput[oi]) err("value '" + v.name + "'", "is produced by '" + n.name + "' but is also a graph input");
                defined[oi] = 1;
            }
        }
        const Scope scope{&g, &defined, parent};

        // Node inputs.
        std::vector<std::vector<NodeId>> succ(nn);
        for (std::size_t i = 0; i < nn; ++i) {
            const Node& n = g.node(static_cast<NodeId>(i));
            for (std::size_t k = 0; k < n.inputs.size(); ++k) {
                const ValueId in = n.inputs[k];
                if (in == kNoValue) continue;
                if (!validValue(in)) {
                    err(nodeDesc(n), "input #" + std::to_string(k) + " refers to a missing value (id " + std::to_string(in) + ")");
                    continue;
                }
                const auto ii = static_cast<std::size_t>(in);
                if (producer[ii] != kNoNode) {
                    succ[static_cast<std::size_t>(producer[ii])].push_back(static_cast<NodeId>(i));
                } else if (!defined[ii] && !visibleInOuter(parent, g.value(in).name)) {
                    err(nodeDesc(n), "input '" + g.value(in).name + "' is not produced by any node, graph input or initializer");
                }
            }
        }

        // Graph outputs.
        for (ValueId o : g.outputs()) {
            if (!validValue(o)) {
                err(graphWhere, "output list refers to a missing value (id " + std::to_string(o) + ")");
                continue;
            }
            if (!defined[static_cast<std::size_t>(o)] && !visibleInOuter(parent, g.value(o).name))
                err(graphWhere, "output '" + g.value(o).name + "' is not produced by any node, graph input or initializer");
        }

        // Cycles.
        for (const auto& comp : cyclicComponents(succ)) {
            std::string names;
            for (std::size_t i = 0; i < comp.size() && i < kMaxCycleNames; ++i)
                names += (i ? ", '" : "'") + g.node(comp[i]).name + "'";
            if (comp.size() > kMaxCycleNames) names += " and " + std::to_string(comp.size() - kMaxCycleNames) + " more";
            err(graphWhere, "cycle through nodes " + names);
        }

        // Constant data.
        for (std::size_t i = 0; i < nv; ++i) {
            if (!isInit[i]) continue;
            const Value& v = g.value(static_cast<ValueId>(i));
            if (!v.data) {
                err("initializer '" + v.name + "'", "has no data");
                continue;
            }
            if (auto p = dataProblem(*v.data); !p.empty()) err("initializer '" + v.name + "'", p);
        }

        // Attributes: schema, tensor payloads, subgraphs.
        for (std::size_t i = 0; i < nn; ++i) {
            const Node& n = g.node(static_cast<NodeId>(i));
            const std::size_t before = m_out.items().size();
            checkNodeAgainstSchema(g, static_cast<NodeId>(i), m_file, m_out);
            const bool isComputeOp = n.opType == kComputeOpType && n.domain == kTesseraDomain;
            if (isComputeOp && !n.compute) err(nodeDesc(n), "Compute node has no compute definition");
            if (n.compute && !isComputeOp) err(nodeDesc(n), "only tessera::Compute nodes may carry a compute definition");
            if (n.compute && n.outputs.size() != 1) err(nodeDesc(n), "a Compute node has exactly one output");
            if (n.compute)
                if (auto p = computeStructureProblem(*n.compute, n.inputs.size()); !p.empty()) err(nodeDesc(n), p);
            if (!prefix.empty())
                for (std::size_t k = before; k < m_out.items().size(); ++k) m_out.items()[k].where = prefix + m_out.items()[k].where;
            for (const auto& attribute : n.attributes) {
                // Named copies, not structured bindings: clang 14 cannot capture bindings in lambdas.
                const std::string& name = attribute.first;
                const Attribute& a = attribute.second;
                auto checkTensor = [&](const std::shared_ptr<const TensorData>& t) {
                    if (!t) err(nodeDesc(n), "attribute '" + name + "' has no tensor");
                    else if (auto p = dataProblem(*t); !p.empty()) err(nodeDesc(n), "attribute '" + name + "': " + p);
                };
                if (a.type == AttrType::Tensor) checkTensor(a.t);
                if (a.type == AttrType::Tensors)
                    for (const auto& t : a.tensors) checkTensor(t);
                std::vector<const Graph*> subs;
                if (a.type == AttrType::Graph) subs.push_back(a.g.get());
                if (a.type == AttrType::Graphs)
                    for (const auto& sg : a.graphs) subs.push_back(sg.get());
                for (const Graph* sg : subs) {
                    if (!sg) {
                        err(nodeDesc(n), "attribute '" + name + "' has no graph");
                        continue;
                    }
                    if (depth + 1 > kMaxSubgraphDepth) {
                        err(nodeDesc(n), "subgraphs are nested more than " + std::to_string(kMaxSubgraphDepth) + " deep");
                        continue;
                    }
                    run(*sg, prefix + nodeDesc(n) + " / " + name + ": ", &scope, depth + 1);
                }
            }
        }
    }

private:
    const std::string& m_file;
    support::DiagnosticList& m_out;
};

}  // namespace

support::DiagnosticList verify(const Graph& g, const std::string& file) {
    support::DiagnosticList out;
    Verifier(file, out).run(g, {}, nullptr, 0);
    return out;
}

}  // namespace tessera::ir
