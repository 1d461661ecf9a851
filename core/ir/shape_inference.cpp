#include "core/ir/shape_inference.h"

#include <exception>
#include <limits>

#include "core/ir/compute.h"
#include "core/ir/op_registry.h"

namespace tessera::ir {

namespace {

std::string nodeWhere(const Node& n) { return "node '" + n.name + "' (" + n.opType + ")"; }

/// Disagreement between our type and a declared one. Only facts both sides know count: dtypes
/// when both are defined, ranks when both are known, extents when both are known. A symbol
/// against a number (or another symbol, or unknown) is compatible.
bool disagree(const TensorType& ours, const TensorType& theirs) {
    if (ours.dtype != DType::Undefined && theirs.dtype != DType::Undefined && ours.dtype != theirs.dtype) return true;
    if (!ours.shape.rankKnown() || !theirs.shape.rankKnown()) return false;
    if (ours.shape.rank() != theirs.shape.rank()) return true;
    for (std::size_t i = 0; i < ours.shape.rank(); ++i) {
        const Dim& a = ours.shape[i];
        const Dim& b = theirs.shape[i];
        if (a.isKnown() && b.isKnown() && a.value != b.value) return true;
    }
    return false;
}

InferContext makeContext(const Graph& g, const Node& n) {
    InferContext c{g, n, {}};
    c.inputTypes.reserve(n.inputs.size());
    for (ValueId v : n.inputs) {
        if (v >= 0 && static_cast<std::size_t>(v) < g.numValues()) c.inputTypes.push_back(g.value(v).type);
        else c.inputTypes.emplace_back();
    }
    return c;
}

bool validId(const Graph& g, ValueId v) { return v >= 0 && static_cast<std::size_t>(v) < g.numValues(); }

}  // namespace

namespace {

constexpr int kMaxSubgraphDepth = 64;

/// Enclosing graphs, innermost first: subgraph values that no node, input or initializer
/// defines take their type from the first enclosing graph holding a value of that name.
struct Scope {
    const Graph* graph = nullptr;
    const Scope* parent = nullptr;
};

const TensorType* outerType(const Scope* s, const std::string& name) {
    for (; s; s = s->parent) {
        const ValueId id = s->graph->findValue(name);
        if (id != kNoValue) return &s->graph->value(id).type;
    }
    return nullptr;
}

void inferGraph(Graph& g, const std::string& file, const std::string& prefix, const Scope* parent, int depth,
                ShapeInferenceResult& res, const NodeHook* afterNode = nullptr) {
    // Graph inputs and initializers keep what they declare; fill in only what is missing.
    for (std::size_t i = 0; i < g.numValues(); ++i) {
        Value& v = g.value(static_cast<ValueId>(i));
        if (v.isGraphInput || v.isInitializer) {
            if (v.type.isDefined()) continue;
            if (v.data) v.type = v.data->type();
            else if (v.onnxType) v.type = *v.onnxType;
        } else if (parent && g.producer(static_cast<ValueId>(i)) == kNoNode) {
            if (const TensorType* t = outerType(parent, v.name)) v.type = *t;
        }
    }
    const auto order = g.topologicalOrder();
    if (!order) {
        res.diagnostics.error(file, prefix + "graph '" + g.name + "'", "has a cycle; shape inference skipped");
        return;
    }
    const Scope scope{&g, parent};
    const OpRegistry& reg = OpRegistry::instance();
    auto inferNode = [&](NodeId id) {
        const Node& n = g.node(id);
        auto keepDeclared = [&]() {
            for (ValueId o : n.outputs)
                if (validId(g, o) && g.producer(o) == id && g.value(o).onnxType) g.value(o).type = *g.value(o).onnxType;
        };
        // Subgraph bodies (If/Loop/Scan) first: they see this graph's values as inferred so far.
        for (const auto& [attrName, a] : n.attributes) {
            std::vector<Graph*> subs;
            if (a.type == AttrType::Graph && a.g) subs.push_back(a.g.get());
            if (a.type == AttrType::Graphs)
                for (const auto& sg : a.graphs)
                    if (sg) subs.push_back(sg.get());
            for (Graph* sg : subs) {
                if (depth + 1 > kMaxSubgraphDepth) continue;
                inferGraph(*sg, file, prefix + nodeWhere(n) + " / " + attrName + ": ", &scope, depth + 1, res);
            }
        }
        if (n.compute) {
            // Compute definitions carry their own typing rules (core/ir/compute.h).
            const InferContext ctx = makeContext(g, n);
            std::vector<std::string> names;
            for (ValueId v : n.inputs) names.push_back(validId(g, v) ? g.value(v).name : std::string("_"));
            const ComputeTypeResult cr = inferComputeType(*n.compute, ctx.inputTypes, names);
            if (!cr.error.empty()) {
                res.diagnostics.error(file, prefix + nodeWhere(n), cr.error);
                keepDeclared();
                return;
            }
            ++res.inferredNodes;
            if (!n.outputs.empty() && validId(g, n.outputs[0]) && g.producer(n.outputs[0]) == id)
                g.value(n.outputs[0]).type = cr.output;
            return;
        }
        const OpSchema* schema = reg.find(n.domain, n.opType);
        if (!schema || !schema->inferShapes) {
            ++res.unknownOps;
            keepDeclared();
            return;
        }
        InferResult r;
        try {
            const InferContext ctx = makeContext(g, n);
            r = schema->inferShapes(ctx);
        } catch (const std::exception& e) {
            r.outputs.clear();
            r.error = std::string("internal error in shape inference: ") + e.what();
        }
        if (!r.ok()) {
            res.diagnostics.error(file, prefix + nodeWhere(n), r.error);
            keepDeclared();
            return;
        }
        ++res.inferredNodes;
        for (std::size_t i = 0; i < n.outputs.size(); ++i) {
            const ValueId o = n.outputs[i];
            if (!validId(g, o) || g.producer(o) != id) continue;
            Value& v = g.value(o);
            if (i >= r.outputs.size()) {
                if (v.onnxType) v.type = *v.onnxType;
                continue;
            }
            v.type = r.outputs[i];
            if (v.onnxType && disagree(v.type, *v.onnxType)) {
                ++res.disagreements;
                support::Diagnostic d;
                d.severity = support::Severity::Warning;
                d.file = file;
                d.where = prefix + "value '" + v.name + "'";
                d.message = "Tessera infers " + v.type.str() + " but the model declares " + v.onnxType->str();
                d.notes.push_back("produced by " + nodeWhere(n));
                res.diagnostics.add(std::move(d));
            }
        }
    };
    for (NodeId id : *order) {
        inferNode(id);
        if (afterNode && *afterNode) (*afterNode)(g, id);
    }
}

}  // namespace

ShapeInferenceResult inferShapes(Graph& g, const std::string& file, const NodeHook& afterNode) {
    ShapeInferenceResult res;
    inferGraph(g, file, {}, nullptr, 0, res, &afterNode);
    return res;
}

std::optional<std::int64_t> nodeFlops(const Graph& g, NodeId id) {
    if (id < 0 || static_cast<std::size_t>(id) >= g.numNodes()) return std::nullopt;
    const Node& n = g.node(id);
    if (n.compute) return computeFlops(*n.compute);
    const OpSchema* schema = OpRegistry::instance().find(n.domain, n.opType);
    if (!schema || !schema->flops) return std::nullopt;
    std::vector<TensorType> outs;
    outs.reserve(n.outputs.size());
    for (ValueId o : n.outputs) outs.push_back(validId(g, o) ? g.value(o).type : TensorType{});
    try {
        const InferContext ctx = makeContext(g, n);
        return schema->flops(ctx, outs);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::int64_t totalFlops(const Graph& g) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < g.numNodes(); ++i) {
        const auto f = nodeFlops(g, static_cast<NodeId>(i));
        if (f && *f > 0 && __builtin_add_overflow(total, *f, &total)) return std::numeric_limits<std::int64_t>::max();
    }
    return total;
}

}  // namespace tessera::ir
