#pragma once
// Small graphs for the fusion-planner tests (tests/fusion/*.cpp), built in code with shapes
// inferred by ir::inferShapes. Node names are "<Op>_<n>" so the tests can name them exactly.
// Every builder returns a graph whose shape inference succeeded (checked by ok()).

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/shape_inference.h"
#include "core/test_ir_helpers.h"

namespace tessera::fusion_test {

using ir::test::Builder;

/// Float initializer of `dims` filled with a small ramp (values do not matter to the planners).
inline ir::TensorData ramp(std::vector<std::int64_t> dims) {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7) * 0.125f - 0.25f;
    return ir::TensorData::fromFloats(v, std::move(dims));
}

/// Runs shape inference; true when it reported no error.
inline bool ok(ir::Graph& g) { return !ir::inferShapes(g, "test").diagnostics.hasErrors(); }

/// Conv attributes: kernel from the weights, `pad` on every side, stride, group.
inline ir::test::Attrs convAttrs(std::int64_t pad, std::int64_t stride = 1, std::int64_t group = 1) {
    return {{"pads", ir::Attribute::ofInts({pad, pad, pad, pad})},
            {"strides", ir::Attribute::ofInts({stride, stride})},
            {"group", ir::Attribute::ofInt(group)}};
}

/// x f32[1,8,16,16] -> Conv_0 (w [16,8,3,3], pad 1) -> c f32[1,16,16,16] -> Relu_1 -> y (output).
/// `convOutputUses`: 2 adds Sigmoid_2 reading c (output z); `convIsOutput` lists c as a graph
/// output too.
inline ir::Graph convRelu(int convOutputUses = 1, bool convIsOutput = false) {
    Builder b;
    b.input("x", "f32[1,8,16,16]");
    b.init("w", ramp({16, 8, 3, 3}));
    b.node("Conv", "Conv_0", {"x", "w"}, {"c"}, convAttrs(1));
    b.node("Relu", "Relu_1", {"c"}, {"y"});
    b.output("y");
    if (convOutputUses >= 2) {
        b.node("Sigmoid", "Sigmoid_2", {"c"}, {"z"});
        b.output("z");
    }
    if (convIsOutput) b.output("c");
    ok(b.g);
    return b.g;
}

/// a f32[4,32] x w [32,16] -> MatMul_0 -> m [4,16] -> Add_1 (+ bias [16], broadcast) -> s ->
/// Relu_2 -> y (output).
inline ir::Graph matmulBiasRelu() {
    Builder b;
    b.input("a", "f32[4,32]");
    b.init("w", ramp({32, 16}));
    b.init("bias", ramp({16}));
    b.node("MatMul", "MatMul_0", {"a", "w"}, {"m"});
    b.node("Add", "Add_1", {"m", "bias"}, {"s"});
    b.node("Relu", "Relu_2", {"s"}, {"y"});
    b.output("y");
    ok(b.g);
    return b.g;
}

/// a f32[4,32] x w [32,16] -> ReduceSum_0 over axis 0 (keepdims 1) -> r [1,16] -> Add_1 with
/// graph input big f32[4,16]: r is broadcast UP to [4,16] (not invertible) -> y (output).
inline ir::Graph reduceBroadcastAdd() {
    Builder b;
    b.input("a", "f32[4,16]");
    b.input("big", "f32[4,16]");
    b.node("ReduceSum", "ReduceSum_0", {"a", "axes"}, {"r"}, {{"keepdims", ir::Attribute::ofInt(1)}});
    b.init("axes", ir::TensorData::fromInts({0}, {1}));
    b.node("Add", "Add_1", {"r", "big"}, {"y"});
    b.output("y");
    ok(b.g);
    return b.g;
}

/// A transformer MLP as torch.onnx.export writes it: x f32[4,32] -> MatMul_0 (w1 [32,64]) -> Add_1
/// (bias) -> h, then the exact GELU 0.5 * h * (1 + erf(h / sqrt 2)) (Div_2, Erf_3, Add_4, Mul_5,
/// Mul_6) -> MatMul_7 (w2 [64,16]) -> y (output).
inline ir::Graph mlpGelu() {
    Builder b;
    b.input("x", "f32[4,32]");
    b.init("w1", ramp({32, 64}));
    b.init("bias", ramp({64}));
    b.init("w2", ramp({64, 16}));
    b.init("sqrt2", ir::TensorData::fromFloats({1.4142135f}, {}));
    b.init("one", ir::TensorData::fromFloats({1.0f}, {}));
    b.init("half", ir::TensorData::fromFloats({0.5f}, {}));
    b.node("MatMul", "MatMul_0", {"x", "w1"}, {"m"});
    b.node("Add", "Add_1", {"m", "bias"}, {"h"});
    b.node("Div", "Div_2", {"h", "sqrt2"}, {"d"});
    b.node("Erf", "Erf_3", {"d"}, {"e"});
    b.node("Add", "Add_4", {"e", "one"}, {"e1"});
    b.node("Mul", "Mul_5", {"h", "e1"}, {"p"});
    b.node("Mul", "Mul_6", {"p", "half"}, {"gl"});
    b.node("MatMul", "MatMul_7", {"gl", "w2"}, {"y"});
    b.output("y");
    ok(b.g);
    return b.g;
}

/// x f32[4,32] -> Relu_0 -> r -> MatMul_1 (w [32,16]) -> y (output). `reluAlsoFeeds`: Tanh_2
/// reads r too (output t).
inline ir::Graph reluMatmul(bool reluAlsoFeeds = false) {
    Builder b;
    b.input("x", "f32[4,32]");
    b.init("w", ramp({32, 16}));
    b.node("Relu", "Relu_0", {"x"}, {"r"});
    b.node("MatMul", "MatMul_1", {"r", "w"}, {"y"});
    b.output("y");
    if (reluAlsoFeeds) {
        b.node("Tanh", "Tanh_2", {"r"}, {"t"});
        b.output("t");
    }
    ok(b.g);
    return b.g;
}

/// MatMul_0 (a [4,32] x w [32,16]) -> m -> Transpose_1 -> t [16,4] -> Relu_2 -> y (output).
inline ir::Graph matmulTranspose() {
    Builder b;
    b.input("a", "f32[4,32]");
    b.init("w", ramp({32, 16}));
    b.node("MatMul", "MatMul_0", {"a", "w"}, {"m"});
    b.node("Transpose", "Transpose_1", {"m"}, {"t"}, {{"perm", ir::Attribute::ofInts({1, 0})}});
    b.node("Relu", "Relu_2", {"t"}, {"y"});
    b.output("y");
    ok(b.g);
    return b.g;
}

/// MatMul_0 (a [4,32] x w [32,16]) -> m -> Slice_1 (columns 0..8, constant starts/ends/axes) ->
/// t [4,8] -> Relu_2 -> y (output). Slice keeps part of m: not invertible.
inline ir::Graph matmulSlice() {
    Builder b;
    b.input("a", "f32[4,32]");
    b.init("w", ramp({32, 16}));
    b.init("starts", ir::TensorData::fromInts({0}, {1}));
    b.init("ends", ir::TensorData::fromInts({8}, {1}));
    b.init("axes", ir::TensorData::fromInts({1}, {1}));
    b.node("MatMul", "MatMul_0", {"a", "w"}, {"m"});
    b.node("Slice", "Slice_1", {"m", "starts", "ends", "axes"}, {"t"});
    b.node("Relu", "Relu_2", {"t"}, {"y"});
    b.output("y");
    ok(b.g);
    return b.g;
}

/// a f32[N,32] (symbolic batch) x w [32,16] -> MatMul_0 -> m [N,16] -> Reshape_1 (shape [-1]) ->
/// r [?] -> Relu_2 -> y (output): the reshape's shapes are not static.
inline ir::Graph matmulReshapeSymbolic() {
    Builder b;
    b.input("a", "f32[N,32]");
    b.init("w", ramp({32, 16}));
    b.init("shape", ir::TensorData::fromInts({-1}, {1}));
    b.node("MatMul", "MatMul_0", {"a", "w"}, {"m"});
    b.node("Reshape", "Reshape_1", {"m", "shape"}, {"r"});
    b.node("Relu", "Relu_2", {"r"}, {"y"});
    b.output("y");
    ok(b.g);
    return b.g;
}

/// x f32[2,3,4] -> Transpose_0 (perm 0,2,1) -> t [2,4,3] -> Reshape_1 (shape [8,3]) -> r ->
/// MatMul_2 (w [3,5]) -> m [8,5] -> Flatten_3 (axis 0) -> f [1,40] -> Sigmoid_4 -> y (output).
/// `transposeAlsoFeeds`: Abs_5 reads t too (output q), so t has 2 uses.
inline ir::Graph indexMapsAroundMatmul(bool transposeAlsoFeeds = false) {
    Builder b;
    b.input("x", "f32[2,3,4]");
    b.init("shape", ir::TensorData::fromInts({8, 3}, {2}));
    b.init("w", ramp({3, 5}));
    b.node("Transpose", "Transpose_0", {"x"}, {"t"}, {{"perm", ir::Attribute::ofInts({0, 2, 1})}});
    b.node("Reshape", "Reshape_1", {"t", "shape"}, {"r"});
    b.node("MatMul", "MatMul_2", {"r", "w"}, {"m"});
    b.node("Flatten", "Flatten_3", {"m"}, {"f"}, {{"axis", ir::Attribute::ofInt(0)}});
    b.node("Sigmoid", "Sigmoid_4", {"f"}, {"y"});
    b.output("y");
    if (transposeAlsoFeeds) {
        b.node("Abs", "Abs_5", {"t"}, {"q"});
        b.output("q");
    }
    ok(b.g);
    return b.g;
}

/// Only elementwise ops: x, z f32[8,8] -> Exp_0 -> e -> Add_1 (e + z) -> s -> Neg_2 -> n ->
/// Sigmoid_3 -> y (output); also Abs_4 reads s (output q), so s has 2 uses.
inline ir::Graph elementwiseChain() {
    Builder b;
    b.input("x", "f32[8,8]");
    b.input("z", "f32[8,8]");
    b.node("Exp", "Exp_0", {"x"}, {"e"});
    b.node("Add", "Add_1", {"e", "z"}, {"s"});
    b.node("Neg", "Neg_2", {"s"}, {"n"});
    b.node("Sigmoid", "Sigmoid_3", {"n"}, {"y"});
    b.node("Abs", "Abs_4", {"s"}, {"q"});
    b.output("y");
    b.output("q");
    ok(b.g);
    return b.g;
}

/// MobileNet-style block with constants as Constant nodes:
/// x f32[1,32,16,16] -> Conv_0 depthwise 3x3 (group 32, pad 1) -> Clip_1 (Constant_a, Constant_b:
/// ReLU6) -> Conv_2 pointwise (w2 [64,32,1,1]) -> Clip_3 (same bounds) -> y (output).
inline ir::Graph dwPwBlock() {
    Builder b;
    b.input("x", "f32[1,32,16,16]");
    b.init("w1", ramp({32, 1, 3, 3}));
    b.init("w2", ramp({64, 32, 1, 1}));
    auto lo = std::make_shared<ir::TensorData>(ir::TensorData::fromFloats({0.0f}, {}));
    auto hi = std::make_shared<ir::TensorData>(ir::TensorData::fromFloats({6.0f}, {}));
    b.node("Constant", "Constant_a", {}, {"lo"}, {{"value", ir::Attribute::ofTensor(lo)}});
    b.node("Constant", "Constant_b", {}, {"hi"}, {{"value", ir::Attribute::ofTensor(hi)}});
    b.node("Conv", "Conv_0", {"x", "w1"}, {"d"}, convAttrs(1, 1, 32));
    b.node("Clip", "Clip_1", {"d", "lo", "hi"}, {"dc"});
    b.node("Conv", "Conv_2", {"dc", "w2"}, {"p"}, convAttrs(0));
    b.node("Clip", "Clip_3", {"p", "lo", "hi"}, {"y"});
    b.output("y");
    ok(b.g);
    return b.g;
}

/// x f32[4,16] -> Slice_0 (columns 0..8, constant starts/ends/axes) -> t [4,8] -> Relu_1 -> y
/// (output): only injective ops; the Slice cannot be a prologue but can anchor the group.
inline ir::Graph sliceRelu() {
    Builder b;
    b.input("x", "f32[4,16]");
    b.init("starts", ir::TensorData::fromInts({0}, {1}));
    b.init("ends", ir::TensorData::fromInts({8}, {1}));
    b.init("axes", ir::TensorData::fromInts({1}, {1}));
    b.node("Slice", "Slice_0", {"x", "starts", "ends", "axes"}, {"t"});
    b.node("Relu", "Relu_1", {"t"}, {"y"});
    b.output("y");
    ok(b.g);
    return b.g;
}

/// Four convolutions in a row: x f32[1,16,8,8] -> Conv_0 depthwise 3x3 (group 16, pad 1) -> a ->
/// Conv_1 pointwise (w [32,16,1,1]) -> b -> Conv_2 pointwise (w [32,32,1,1]) -> c -> Conv_3
/// depthwise 3x3 (group 32, pad 1) -> y (output): a dw-pw and a pw-dw chain.
inline ir::Graph fourConvs() {
    Builder b;
    b.input("x", "f32[1,16,8,8]");
    b.init("w0", ramp({16, 1, 3, 3}));
    b.init("w1", ramp({32, 16, 1, 1}));
    b.init("w2", ramp({32, 32, 1, 1}));
    b.init("w3", ramp({32, 1, 3, 3}));
    b.node("Conv", "Conv_0", {"x", "w0"}, {"a"}, convAttrs(1, 1, 16));
    b.node("Conv", "Conv_1", {"a", "w1"}, {"b"}, convAttrs(0));
    b.node("Conv", "Conv_2", {"b", "w2"}, {"c"}, convAttrs(0));
    b.node("Conv", "Conv_3", {"c", "w3"}, {"y"}, convAttrs(1, 1, 32));
    b.output("y");
    ok(b.g);
    return b.g;
}

/// x f32[1,8,16,16] -> Conv_0 standard 3x3 (w [16,8,3,3], pad 1) -> c -> Conv_1 depthwise 3x3
/// (group 16, pad 1) -> y (output): two convolutions that make no conv chain.
inline ir::Graph standardThenDepthwise() {
    Builder b;
    b.input("x", "f32[1,8,16,16]");
    b.init("w0", ramp({16, 8, 3, 3}));
    b.init("w1", ramp({16, 1, 3, 3}));
    b.node("Conv", "Conv_0", {"x", "w0"}, {"c"}, convAttrs(1));
    b.node("Conv", "Conv_1", {"c", "w1"}, {"y"}, convAttrs(1, 1, 16));
    b.output("y");
    ok(b.g);
    return b.g;
}

}  // namespace tessera::fusion_test
