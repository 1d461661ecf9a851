#include "views/graph/graph_snapshot.h"

#include <cstdio>
#include <set>
#include <utility>

namespace tessera::views {

int GraphSnapshot::indexOf(int id) const
{
    const auto it = m_index.find(id);
    return it == m_index.end() ? -1 : it->second;
}

const SnapshotNode* GraphSnapshot::find(int id) const
{
    const int i = indexOf(id);
    return i < 0 ? nullptr : &nodes[static_cast<std::size_t>(i)];
}

std::string compactShape(const ir::TensorType& t)
{
    if (!t.shape.rankKnown())
        return "?";
    if (t.shape.rank() == 0)
        return t.dtype == ir::DType::Undefined ? "?" : "scalar";
    std::string out;
    for (std::size_t i = 0; i < t.shape.rank(); ++i) {
        if (i > 0)
            out += "\u00d7";
        out += t.shape[i].str();
    }
    return out;
}

namespace {

std::string typeText(const ir::TensorType& t)
{
    if (!t.isDefined())
        return "?";
    return t.str();
}

// "f32 = 6" for scalar constants, else the output type.
std::string constantText(const ir::Graph& g, const ir::Node& node)
{
    const ir::Attribute* value = node.attr("value");
    if (value != nullptr && value->type == ir::AttrType::Tensor && value->t && value->t->numElements() == 1 &&
        value->t->sizeConsistent() && value->t->dtype != ir::DType::String) {
        const ir::TensorData& t = *value->t;
        char buf[48];
        if (ir::isFloatingPoint(t.dtype))
            std::snprintf(buf, sizeof buf, "%.6g", t.elementAsDouble(0));
        else
            std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(t.elementAsInt(0)));
        return std::string(ir::dtypeName(t.dtype)) + " = " + buf;
    }
    if (!node.outputs.empty() && node.outputs.front() != ir::kNoValue)
        return typeText(g.value(node.outputs.front()).type);
    return {};
}

}  // namespace

GraphSnapshot makeGraphSnapshot(const ir::Graph& g)
{
    GraphSnapshot s;
    const int numOps = static_cast<int>(g.numNodes());
    s.operatorCount = numOps;
    const ir::OpRegistry& registry = ir::OpRegistry::instance();

    auto addNode = [&s](SnapshotNode n) {
        s.m_index.emplace(n.id, static_cast<int>(s.nodes.size()));
        s.nodes.push_back(std::move(n));
    };

    for (int i = 0; i < numOps; ++i) {
        const ir::Node& node = g.node(i);
        SnapshotNode n;
        n.id = i;
        n.irNode = i;
        n.opType = node.opType;
        n.name = node.name;
        if (const ir::OpSchema* schema = registry.find(node.domain, node.opType)) {
            n.category = schema->category;
            n.knownOp = true;
        }
        n.compact = node.opType == "Constant" && node.domain.empty() && node.inputs.empty();
        if (n.compact) {
            n.shapeText = constantText(g, node);
        } else if (!node.outputs.empty() && node.outputs.front() != ir::kNoValue) {
            n.shapeText = typeText(g.value(node.outputs.front()).type);
            if (node.outputs.size() > 1)
                n.shapeText += " +" + std::to_string(node.outputs.size() - 1);
        }
        addNode(std::move(n));
    }

    std::unordered_map<ir::ValueId, int> inputNodeOf;
    int nextId = numOps;
    for (const ir::ValueId v : g.inputs()) {
        const ir::Value& val = g.value(v);
        if (val.isInitializer)
            continue;
        SnapshotNode n;
        n.id = nextId++;
        n.kind = SnapshotNodeKind::GraphInput;
        n.value = v;
        n.opType = "Input";
        n.name = val.name;
        n.shapeText = typeText(val.type);
        inputNodeOf.emplace(v, n.id);
        addNode(std::move(n));
    }

    int edgeId = 0;
    auto sourceOf = [&](ir::ValueId v) -> int {
        const ir::NodeId p = g.producer(v);
        if (p != ir::kNoNode)
            return p;
        const auto it = inputNodeOf.find(v);
        return it == inputNodeOf.end() ? -1 : it->second;
    };
    auto addEdge = [&](int from, int to, ir::ValueId v) {
        SnapshotEdge e;
        e.id = edgeId++;
        e.from = from;
        e.to = to;
        e.value = v;
        e.label = compactShape(g.value(v).type);
        const SnapshotNode* src = s.find(from);
        e.weight = src != nullptr && src->compact ? 1 : 4;
        if (src != nullptr && src->compact)
            e.label.clear();  // the constant's tag already shows its value
        s.edges.push_back(std::move(e));
    };

    for (int i = 0; i < numOps; ++i) {
        std::set<ir::ValueId> seen;
        for (const ir::ValueId v : g.node(i).inputs) {
            if (v == ir::kNoValue || !seen.insert(v).second)
                continue;
            const int from = sourceOf(v);
            if (from >= 0 && from != i)
                addEdge(from, i, v);
        }
    }

    for (const ir::ValueId v : g.outputs()) {
        const ir::Value& val = g.value(v);
        SnapshotNode n;
        n.id = nextId++;
        n.kind = SnapshotNodeKind::GraphOutput;
        n.value = v;
        n.opType = "Output";
        n.name = val.name;
        n.shapeText = typeText(val.type);
        const int from = sourceOf(v);
        const int id = n.id;
        addNode(std::move(n));
        if (from >= 0)
            addEdge(from, id, v);
    }
    return s;
}

}  // namespace tessera::views
