#pragma once
// Small builders shared by the IR tests (tests/core/test_ir_*.cpp): parse "f32[1,N,?]" types and
// run shape inference on a one-node graph.

#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/op_registry.h"
#include "core/ir/shape_inference.h"

namespace tessera::ir::test {

/// "[1,N,?]" -> shape (digits known, "?" unknown, other text a symbol); "[*]" unknown rank.
inline Shape parseShape(const std::string& text) {
    if (text == "[*]") return Shape::unknownRank();
    std::vector<Dim> dims;
    std::string body = text.substr(1, text.size() - 2);
    std::size_t pos = 0;
    while (!body.empty() && pos <= body.size()) {
        const std::size_t comma = body.find(',', pos);
        const std::string tok = body.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (tok == "?") dims.push_back(Dim::unknown());
        else if (!tok.empty() && (std::isdigit(static_cast<unsigned char>(tok[0])) != 0)) dims.push_back(Dim::known(std::stoll(tok)));
        else dims.push_back(Dim::symbolic(tok));
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return Shape(std::move(dims));
}

/// "f32[1,3]" -> type.
inline TensorType ty(const std::string& text) {
    const auto b = text.find('[');
    TensorType t;
    t.dtype = parseDType(text.substr(0, b)).value_or(DType::Undefined);
    t.shape = parseShape(text.substr(b));
    return t;
}

/// One node input: a typed graph input, a constant initializer, or omitted.
struct In {
    TensorType type;
    std::shared_ptr<const TensorData> data;
    bool absent = false;
};
inline In in(const std::string& type) { return In{ty(type), nullptr, false}; }
inline In ints(const std::vector<std::int64_t>& v) {
    auto d = std::make_shared<TensorData>(TensorData::fromInts(v, {static_cast<std::int64_t>(v.size())}));
    return In{d->type(), d, false};
}
inline In floats(const std::vector<float>& v, std::vector<std::int64_t> dims) {
    auto d = std::make_shared<TensorData>(TensorData::fromFloats(v, std::move(dims)));
    return In{d->type(), d, false};
}
inline In absent() { return In{{}, nullptr, true}; }

using Attrs = std::vector<std::pair<std::string, Attribute>>;

struct OneNode {
    Graph g;
    ShapeInferenceResult result;
    std::vector<TensorType> outs;
    std::optional<std::int64_t> flops;
    /// First error message ("" when none).
    std::string error() const {
        const auto* e = result.diagnostics.firstError();
        return e ? e->message : std::string();
    }
    std::string out(std::size_t i = 0) const { return i < outs.size() ? outs[i].str() : "<none>"; }
};

/// Builds inputs x0..xn, one node `op` named "n0" with outputs y0..y(k-1), and runs inferShapes.
inline OneNode runOne(const std::string& op, const std::vector<In>& inputs, const Attrs& attrs = {}, int outputs = 1) {
    OneNode r;
    Node n;
    n.name = "n0";
    n.opType = op;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].absent) {
            n.inputs.push_back(kNoValue);
            continue;
        }
        Value v;
        v.name = "x" + std::to_string(i);
        v.type = inputs[i].type;
        v.data = inputs[i].data;
        v.isInitializer = v.data != nullptr;
        v.isGraphInput = v.data == nullptr;
        const ValueId id = r.g.addValue(std::move(v));
        if (r.g.value(id).isInitializer) r.g.initializers().push_back(id);
        else r.g.inputs().push_back(id);
        n.inputs.push_back(id);
    }
    for (int i = 0; i < outputs; ++i) {
        Value v;
        v.name = "y" + std::to_string(i);
        n.outputs.push_back(r.g.addValue(std::move(v)));
    }
    n.attributes = attrs;
    const NodeId id = r.g.addNode(std::move(n));
    if (!r.g.node(id).outputs.empty()) r.g.outputs().push_back(r.g.node(id).outputs[0]);
    r.result = inferShapes(r.g, "test.onnx");
    for (ValueId o : r.g.node(id).outputs) r.outs.push_back(r.g.value(o).type);
    r.flops = nodeFlops(r.g, id);
    return r;
}

/// Builds graphs by value name: values are created on first mention; "" is an omitted input.
class Builder {
public:
    Graph g;

    ValueId val(const std::string& name) {
        const ValueId id = g.findValue(name);
        if (id != kNoValue) return id;
        Value v;
        v.name = name;
        return g.addValue(std::move(v));
    }
    ValueId input(const std::string& name, const std::string& type) {
        const ValueId id = val(name);
        g.value(id).type = ty(type);
        g.value(id).isGraphInput = true;
        g.inputs().push_back(id);
        return id;
    }
    ValueId init(const std::string& name, TensorData data) {
        const ValueId id = val(name);
        auto d = std::make_shared<TensorData>(std::move(data));
        g.value(id).type = d->type();
        g.value(id).data = d;
        g.value(id).isInitializer = true;
        g.initializers().push_back(id);
        return id;
    }
    NodeId node(const std::string& op, const std::string& name, const std::vector<std::string>& ins,
                const std::vector<std::string>& outs, const Attrs& attrs = {}, const std::string& domain = "") {
        Node n;
        n.opType = op;
        n.name = name;
        n.domain = domain;
        for (const auto& i : ins) n.inputs.push_back(i.empty() ? kNoValue : val(i));
        for (const auto& o : outs) n.outputs.push_back(val(o));
        n.attributes = attrs;
        return g.addNode(std::move(n));
    }
    void output(const std::string& name) {
        const ValueId id = val(name);
        g.value(id).isGraphOutput = true;
        g.outputs().push_back(id);
    }
    const TensorType& type(const std::string& name) const { return g.value(g.findValue(name)).type; }
};

}  // namespace tessera::ir::test
