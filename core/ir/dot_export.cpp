#include "core/ir/dot_export.h"

#include "core/support/dot_escape.h"

#include <sstream>

namespace tessera::ir {

namespace {

std::string typeText(const ir::Value& v) {
    if (v.type.isDefined()) return v.type.str();
    if (v.onnxType && v.onnxType->isDefined()) return v.onnxType->str();
    return "?";
}

}  // namespace

std::string graphToDot(const ir::Graph& g) {
    std::ostringstream os;
    os << "digraph \"" << support::escapeDotString(g.name.empty() ? std::string("graph") : g.name) << "\" {\n";
    os << "  charset=\"UTF-8\";\n  rankdir=TB;\n";
    os << "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fb\", fontname=\"DejaVu Sans\"];\n";
    os << "  edge [fontname=\"DejaVu Sans\", fontsize=9];\n";

    // Where each value comes from, as a DOT id (empty: an initializer or an outer-scope value).
    std::vector<std::string> source(g.numValues());
    const auto& inputs = g.inputs();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const ir::Value& v = g.value(inputs[i]);
        if (v.isInitializer) continue;
        const std::string id = "in" + std::to_string(i);
        source[static_cast<std::size_t>(inputs[i])] = id;
        os << "  " << id << " [shape=ellipse, fillcolor=\"#e3f4e1\", label=\"" << support::escapeDotString(v.name) << "\\n"
           << support::escapeDotString(typeText(v)) << "\"];\n";
    }
    for (std::size_t n = 0; n < g.numNodes(); ++n) {
        const ir::Node& node = g.node(static_cast<ir::NodeId>(n));
        for (ir::ValueId o : node.outputs)
            if (o != ir::kNoValue && g.producer(o) == static_cast<ir::NodeId>(n))
                source[static_cast<std::size_t>(o)] = "n" + std::to_string(n);
    }
    for (std::size_t n = 0; n < g.numNodes(); ++n) {
        const ir::Node& node = g.node(static_cast<ir::NodeId>(n));
        std::string label = support::escapeDotString(node.opType) + "\\n" + support::escapeDotString(node.name);
        std::string shapes;
        for (ir::ValueId o : node.outputs) {
            if (o == ir::kNoValue) continue;
            if (!shapes.empty()) shapes += ", ";
            shapes += typeText(g.value(o));
        }
        if (!shapes.empty()) label += "\\n" + support::escapeDotString(shapes);
        int weights = 0;
        for (ir::ValueId in : node.inputs)
            if (in != ir::kNoValue && g.value(in).isInitializer) ++weights;
        if (weights > 0) label += "\\n(" + std::to_string(weights) + (weights == 1 ? " weight)" : " weights)");
        int subgraphs = 0;
        for (const auto& [name, a] : node.attributes) {
            if (a.type == ir::AttrType::Graph) ++subgraphs;
            if (a.type == ir::AttrType::Graphs) subgraphs += static_cast<int>(a.graphs.size());
        }
        if (subgraphs > 0) label += "\\n[" + std::to_string(subgraphs) + " subgraph" + (subgraphs > 1 ? "s]" : "]");
        os << "  n" << n << " [label=\"" << label << "\"];\n";
    }
    for (std::size_t n = 0; n < g.numNodes(); ++n) {
        const ir::Node& node = g.node(static_cast<ir::NodeId>(n));
        for (ir::ValueId in : node.inputs) {
            if (in == ir::kNoValue) continue;
            const std::string& from = source[static_cast<std::size_t>(in)];
            if (from.empty()) continue;
            os << "  " << from << " -> n" << n << " [label=\"" << support::escapeDotString(typeText(g.value(in))) << "\"];\n";
        }
    }
    const auto& outputs = g.outputs();
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const ir::Value& v = g.value(outputs[i]);
        const std::string id = "out" + std::to_string(i);
        os << "  " << id << " [shape=ellipse, fillcolor=\"#fbeee3\", label=\"" << support::escapeDotString(v.name) << "\\n"
           << support::escapeDotString(typeText(v)) << "\"];\n";
        const std::string& from = source[static_cast<std::size_t>(outputs[i])];
        if (!from.empty()) os << "  " << from << " -> " << id << " [label=\"" << support::escapeDotString(typeText(v)) << "\"];\n";
    }
    os << "}\n";
    return os.str();
}

}  // namespace tessera::ir
