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

}  // namespace tessera::ir::test
