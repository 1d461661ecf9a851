#include "core/ir/printer.h"

#include <cmath>
#include <cstdio>
#include <string_view>

#include "core/ir/compute.h"
#include "core/ir/op_registry.h"

namespace tessera::ir {

namespace {

constexpr std::int64_t kShownElements = 4;
constexpr int kMaxPrintDepth = 64;

std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

bool plainName(std::string_view s) {
    if (s.empty()) return false;
    for (unsigned char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                        c == ':' || c == '/' || c == '-';
        if (!ok) return false;
    }
    return true;
}

std::string valueRef(const Graph& g, ValueId v) {
    if (v == kNoValue) return "_";
    if (v < 0 || static_cast<std::size_t>(v) >= g.numValues()) return "%<invalid " + std::to_string(v) + ">";
    const std::string& n = g.value(v).name;
    return plainName(n) ? "%" + n : "%" + quoted(n);
}

std::string formatNumber(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string dataSummary(const TensorData& t) {
    if (!t.sizeConsistent()) {
        if (t.dtype == DType::String) return "<" + std::to_string(t.strings.size()) + " strings, inconsistent>";
        return "<" + std::to_string(t.bytes.size()) + " bytes, inconsistent>";
    }
    const std::int64_t n = t.numElements();
    std::string s = "[";
    for (std::int64_t i = 0; i < n && i < kShownElements; ++i) {
        if (i) s += ", ";
        if (t.dtype == DType::String) s += quoted(t.strings[static_cast<std::size_t>(i)]);
        else if (isFloatingPoint(t.dtype) || t.dtype == DType::Complex64 || t.dtype == DType::Complex128)
            s += formatNumber(t.elementAsDouble(i));
        else if (t.dtype == DType::U64) s += std::to_string(static_cast<std::uint64_t>(t.elementAsInt(i)));
        else if (t.dtype == DType::Bool) s += t.elementAsInt(i) ? "true" : "false";
        else s += std::to_string(t.elementAsInt(i));
    }
    if (n > kShownElements) s += ", ... (" + std::to_string(n) + " total)";
    return s + "]";
}

std::string typeText(const Value& v) {
    std::string s = v.type.str();
    if (v.onnxType && *v.onnxType != v.type) s += " (declared " + v.onnxType->str() + ")";
    return s;
}

std::string attrText(const Attribute& a) {
    switch (a.type) {
        case AttrType::Tensor: return a.t ? "tensor " + a.t->type().str() + " " + dataSummary(*a.t) : "tensor <null>";
        case AttrType::Graph: return a.g ? "graph " + quoted(a.g->name) : "graph <null>";
        case AttrType::Graphs: {
            std::string s = "[";
            for (std::size_t i = 0; i < a.graphs.size(); ++i)
                s += (i ? ", " : "") + (a.graphs[i] ? "graph " + quoted(a.graphs[i]->name) : std::string("graph <null>"));
            return s + "]";
        }
        default: return a.str();
    }
}

void printGraphInto(const Graph& g, const std::string& indent, int depth, std::string& out) {
    out += "graph " + quoted(g.name) + " {\n";
    const std::string in1 = indent + "  ";
    for (ValueId v : g.inputs()) {
        if (v < 0 || static_cast<std::size_t>(v) >= g.numValues()) continue;
        if (g.value(v).isInitializer) continue;
        out += in1 + "input  " + valueRef(g, v) + ": " + typeText(g.value(v)) + "\n";
    }
    for (ValueId v : g.initializers()) {
        if (v < 0 || static_cast<std::size_t>(v) >= g.numValues()) continue;
        const Value& val = g.value(v);
        out += in1 + "init   " + valueRef(g, v) + ": " + typeText(val) + " = " + (val.data ? dataSummary(*val.data) : "<no data>");
        if (val.isGraphInput) out += " (also graph input)";
        out += "\n";
    }
    std::vector<NodeId> order;
    if (auto topo = g.topologicalOrder()) {
        order = std::move(*topo);
    } else {
        out += in1 + "# cycle: nodes in stored order\n";
        for (std::size_t i = 0; i < g.numNodes(); ++i) order.push_back(static_cast<NodeId>(i));
    }
    const OpRegistry& reg = OpRegistry::instance();
    for (NodeId id : order) {
        const Node& n = g.node(id);
        out += in1;
        if (n.outputs.empty()) out += "()";
        for (std::size_t i = 0; i < n.outputs.size(); ++i) {
            if (i) out += ", ";
            const ValueId o = n.outputs[i];
            out += valueRef(g, o);
            if (o >= 0 && static_cast<std::size_t>(o) < g.numValues() && g.value(o).type.isDefined())
                out += ": " + typeText(g.value(o));
        }
        out += " = ";
        if (!n.domain.empty()) out += n.domain + "::";
        out += n.opType + " " + quoted(n.name) + " (";
        for (std::size_t i = 0; i < n.inputs.size(); ++i) out += (i ? ", " : "") + valueRef(g, n.inputs[i]);
        out += ")";
        if (!n.attributes.empty()) {
            out += " {";
            for (std::size_t i = 0; i < n.attributes.size(); ++i)
                out += (i ? ", " : "") + n.attributes[i].first + "=" + attrText(n.attributes[i].second);
            out += "}";
        }
        if (n.compute) {
            out += " compute " + printCompute(*n.compute, valueRef(g, n.outputs.empty() ? kNoValue : n.outputs[0]),
                                              [&](int slot) {
                                                  return slot >= 0 && static_cast<std::size_t>(slot) < n.inputs.size()
                                                             ? valueRef(g, n.inputs[static_cast<std::size_t>(slot)])
                                                             : std::string("%<slot ") + std::to_string(slot) + ">";
                                              });
        } else if (!reg.find(n.domain, n.opType)) {
            out += "  # unregistered op";
        }
        out += "\n";
        for (const auto& [name, a] : n.attributes) {
            std::vector<const Graph*> subs;
            if (a.type == AttrType::Graph && a.g) subs.push_back(a.g.get());
            if (a.type == AttrType::Graphs)
                for (const auto& sg : a.graphs)
                    if (sg) subs.push_back(sg.get());
            for (const Graph* sg : subs) {
                out += in1 + "  " + name + ": ";
                if (depth >= kMaxPrintDepth) {
                    out += "graph " + quoted(sg->name) + " { ... }\n";
                    continue;
                }
                printGraphInto(*sg, in1 + "  ", depth + 1, out);
            }
        }
    }
    for (ValueId v : g.outputs()) {
        if (v < 0 || static_cast<std::size_t>(v) >= g.numValues()) continue;
        out += in1 + "output " + valueRef(g, v) + ": " + typeText(g.value(v)) + "\n";
    }
    out += indent + "}\n";
}

}  // namespace

std::string printGraph(const Graph& g) {
    std::string out;
    printGraphInto(g, "", 0, out);
    return out;
}

std::string printModel(const Model& m) {
    std::string out = "model ir_version=" + std::to_string(m.irVersion);
    if (!m.producerName.empty() || !m.producerVersion.empty()) {
        std::string producer = m.producerName;
        if (!m.producerVersion.empty()) producer += (producer.empty() ? "" : " ") + m.producerVersion;
        out += " producer=" + quoted(producer);
    }
    out += " opsets=[";
    bool first = true;
    for (const auto& [domain, version] : m.opsets) {
        out += (first ? "" : ", ") + quoted(domain) + "=" + std::to_string(version);
        first = false;
    }
    out += "]\n";
    out += printGraph(m.graph);
    return out;
}

}  // namespace tessera::ir
