#include "core/ir/attribute.h"

#include <cstdio>

#include "core/ir/graph.h"

namespace tessera::ir {

const char* attrTypeName(AttrType t) {
    switch (t) {
        case AttrType::Undefined: return "undefined";
        case AttrType::Int: return "int";
        case AttrType::Float: return "float";
        case AttrType::String: return "string";
        case AttrType::Tensor: return "tensor";
        case AttrType::Graph: return "graph";
        case AttrType::Ints: return "ints";
        case AttrType::Floats: return "floats";
        case AttrType::Strings: return "strings";
        case AttrType::Tensors: return "tensors";
        case AttrType::Graphs: return "graphs";
    }
    return "undefined";
}

Attribute Attribute::ofInt(std::int64_t v) { Attribute a; a.type = AttrType::Int; a.i = v; return a; }
Attribute Attribute::ofFloat(double v) { Attribute a; a.type = AttrType::Float; a.f = v; return a; }
Attribute Attribute::ofString(std::string v) { Attribute a; a.type = AttrType::String; a.s = std::move(v); return a; }
Attribute Attribute::ofInts(std::vector<std::int64_t> v) { Attribute a; a.type = AttrType::Ints; a.ints = std::move(v); return a; }
Attribute Attribute::ofFloats(std::vector<double> v) { Attribute a; a.type = AttrType::Floats; a.floats = std::move(v); return a; }
Attribute Attribute::ofStrings(std::vector<std::string> v) { Attribute a; a.type = AttrType::Strings; a.strings = std::move(v); return a; }
Attribute Attribute::ofTensor(std::shared_ptr<const TensorData> v) { Attribute a; a.type = AttrType::Tensor; a.t = std::move(v); return a; }
Attribute Attribute::ofGraph(std::shared_ptr<Graph> v) { Attribute a; a.type = AttrType::Graph; a.g = std::move(v); return a; }

namespace {

std::string formatFloat(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

std::string tensorSummary(const std::shared_ptr<const TensorData>& t) {
    if (!t) return "<tensor null>";
    return "<tensor " + t->type().str() + ">";
}

std::string graphSummary(const std::shared_ptr<Graph>& g) {
    if (!g) return "<graph null>";
    return "<graph " + g->name + ": " + std::to_string(g->numNodes()) + " nodes>";
}

template <typename T, typename F>
std::string list(const std::vector<T>& v, F f) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) s += ",";
        s += f(v[i]);
    }
    return s + "]";
}

}  // namespace

std::string Attribute::str() const {
    switch (type) {
        case AttrType::Undefined: return "<undefined>";
        case AttrType::Int: return std::to_string(i);
        case AttrType::Float: return formatFloat(f);
        case AttrType::String: return quote(s);
        case AttrType::Tensor: return tensorSummary(t);
        case AttrType::Graph: return graphSummary(g);
        case AttrType::Ints: return list(ints, [](std::int64_t v) { return std::to_string(v); });
        case AttrType::Floats: return list(floats, formatFloat);
        case AttrType::Strings: return list(strings, quote);
        case AttrType::Tensors: return list(tensors, tensorSummary);
        case AttrType::Graphs: return list(graphs, graphSummary);
    }
    return "<undefined>";
}

}  // namespace tessera::ir
