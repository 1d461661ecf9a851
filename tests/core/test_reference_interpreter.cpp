// Reference interpreter (core/eval/reference_interpreter.h): sample models against the outputs
// saved with them (torch or onnxruntime), and small hand-computed cases.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/eval/reference_interpreter.h"
#include "core/frontend/dsl/dsl.h"
#include "core/ir/npy.h"
#include "core/ir/shape_inference.h"
#include "core/pipeline/load_model.h"
#include "test_ir_helpers.h"

using namespace tessera;
using ir::TensorData;

namespace {

std::string firstError(const support::DiagnosticList& d) {
    const auto* e = d.firstError();
    return e ? e->where + ": " + e->message : std::string("<no error>");
}

TensorData readNpy(const std::string& path) {
    auto t = ir::readNpy(path);
    EXPECT_TRUE(t.ok()) << path << ": " << firstError(t.diagnostics());
    return t ? t.value() : TensorData{};
}

/// Runs the model at `model` on `input` and returns max |out - expected|; also checks shape/dtype.
double maxErrorOnSample(const std::string& model, const std::string& input, const std::string& expected) {
    const std::string dir = TESSERA_SAMPLES;
    auto m = pipeline::loadModel(dir + "/" + model);
    EXPECT_TRUE(m.ok()) << firstError(m.diagnostics());
    if (!m.ok()) return 1e30;
    eval::ReferenceOptions opt;
    opt.opset = m->defaultOpset();
    auto out = eval::evaluate(m->graph, {readNpy(dir + "/" + input)}, opt);
    EXPECT_TRUE(out.ok()) << firstError(out.diagnostics());
    if (!out.ok()) return 1e30;
    EXPECT_EQ(out->size(), 1u);
    const TensorData want = readNpy(dir + "/" + expected);
    const TensorData& got = out->front();
    EXPECT_EQ(got.dtype, ir::DType::F32);
    EXPECT_EQ(got.dims, want.dims);
    if (got.dims != want.dims) return 1e30;
    double err = 0;
    for (std::int64_t i = 0; i < want.numElements(); ++i)
        err = std::max(err, std::fabs(got.elementAsDouble(i) - want.elementAsDouble(i)));
    return err;
}

std::vector<double> run(const ir::Graph& g, const std::vector<TensorData>& inputs, std::vector<std::int64_t>* dims = nullptr) {
    auto out = eval::evaluate(g, inputs);
    EXPECT_TRUE(out.ok()) << firstError(out.diagnostics());
    if (!out.ok() || out->empty()) return {};
    if (dims) *dims = out->front().dims;
    return out->front().toDoubles();
}

}  // namespace

TEST(ReferenceSamples, MobileNetV2MatchesTorch) {
    const double err = maxErrorOnSample("mobilenet_v2.onnx", "mobilenet_v2_input.npy", "mobilenet_v2_output.npy");
    std::printf("mobilenet_v2 max abs error vs torch: %.3g\n", err);
    EXPECT_LT(err, 1e-4);
}

TEST(ReferenceSamples, DwPwBlockMatchesOnnxRuntime) {
    const double err = maxErrorOnSample("dw_pw_block.onnx", "dw_pw_block_input.npy", "dw_pw_block_output.npy");
    std::printf("dw_pw_block max abs error: %.3g\n", err);
    EXPECT_LT(err, 1e-4);
}

TEST(ReferenceSamples, ExternalDataConvMatches) {
    const double err =
        maxErrorOnSample("external_data/model.onnx", "external_data/input.npy", "external_data/output.npy");
    std::printf("external_data max abs error: %.3g\n", err);
    EXPECT_LT(err, 1e-4);
}

TEST(ReferenceSamples, Opset21MlpWithGeluMatches) {
    const double err = maxErrorOnSample("opset21_mlp.onnx", "opset21_mlp_input.npy", "opset21_mlp_output.npy");
    std::printf("opset21_mlp max abs error: %.3g\n", err);
    EXPECT_LT(err, 1e-4);
}

TEST(ReferenceSamples, SymbolicBatchGemmSoftmaxMatches) {
    const double err = maxErrorOnSample("symbolic_batch.onnx", "symbolic_batch_input.npy", "symbolic_batch_output.npy");
    std::printf("symbolic_batch max abs error: %.3g\n", err);
    EXPECT_LT(err, 1e-5);
}

TEST(ReferenceOps, MatMul2x3By3x2) {
    ir::test::Builder b;
    b.input("A", "f32[2,3]");
    b.input("B", "f32[3,2]");
    b.node("MatMul", "mm", {"A", "B"}, {"C"});
    b.output("C");
    ir::inferShapes(b.g);
    std::vector<std::int64_t> dims;
    const auto c = run(b.g,
                       {TensorData::fromFloats({1, 2, 3, 4, 5, 6}, {2, 3}),
                        TensorData::fromFloats({7, 8, 9, 10, 11, 12}, {3, 2})},
                       &dims);
    EXPECT_EQ(dims, (std::vector<std::int64_t>{2, 2}));
    EXPECT_EQ(c, (std::vector<double>{58, 64, 139, 154}));
}

TEST(ReferenceOps, MatMulVectorAndBatchBroadcast) {
    ir::test::Builder b;
    b.input("A", "f32[2,1,3]");
    b.input("v", "f32[3]");
    b.node("MatMul", "mv", {"A", "v"}, {"y"});
    b.output("y");
    ir::inferShapes(b.g);
    std::vector<std::int64_t> dims;
    const auto y = run(b.g, {TensorData::fromFloats({1, 2, 3, 4, 5, 6}, {2, 1, 3}), TensorData::fromFloats({1, 0, -1}, {3})},
                       &dims);
    EXPECT_EQ(dims, (std::vector<std::int64_t>{2, 1}));
    EXPECT_EQ(y, (std::vector<double>{-2, -2}));
}

TEST(ReferenceOps, GroupedConvWithPadsAndStride) {
    // X: 1x4x3x3 with channel c holding c+1 everywhere; group = 2, 2 output channels, each a
    // 2-channel 2x2 filter of ones (second group doubled); pads 1, stride 2 -> 2x2 output.
    ir::test::Builder b;
    b.input("X", "f32[1,4,3,3]");
    std::vector<float> x;
    for (int ch = 0; ch < 4; ++ch)
        for (int i = 0; i < 9; ++i) x.push_back(static_cast<float>(ch + 1));
    std::vector<float> w(2 * 2 * 2 * 2, 1.0f);
    for (int i = 8; i < 16; ++i) w[i] = 2.0f;
    b.init("W", TensorData::fromFloats(w, {2, 2, 2, 2}));
    b.init("B", TensorData::fromFloats({0.5f, -1.0f}, {2}));
    b.node("Conv", "conv", {"X", "W", "B"}, {"Y"},
           {{"group", ir::Attribute::ofInt(2)},
            {"pads", ir::Attribute::ofInts({1, 1, 1, 1})},
            {"strides", ir::Attribute::ofInts({2, 2})}});
    b.output("Y");
    ir::inferShapes(b.g);
    std::vector<std::int64_t> dims;
    const auto y = run(b.g, {TensorData::fromFloats(x, {1, 4, 3, 3})}, &dims);
    EXPECT_EQ(dims, (std::vector<std::int64_t>{1, 2, 2, 2}));
    // Windows start at -1 and 1: top-left window covers 1 pixel, edges 2, bottom-right 4.
    // Group 0 sums channels 1+2 = 3 per pixel; group 1 sums 2*(3+4) = 14 per pixel.
    EXPECT_EQ(y, (std::vector<double>{3 * 1 + 0.5, 3 * 2 + 0.5, 3 * 2 + 0.5, 3 * 4 + 0.5,  //
                                      14 * 1 - 1, 14 * 2 - 1, 14 * 2 - 1, 14 * 4 - 1}));
}

TEST(ReferenceOps, DepthwiseConvSameUpper) {
    ir::test::Builder b;
    b.input("X", "f32[1,2,2,2]");
    b.init("W", TensorData::fromFloats({1, 1, 1, 1, 0, 0, 0, 1}, {2, 1, 2, 2}));
    b.node("Conv", "dw", {"X", "W"}, {"Y"},
           {{"group", ir::Attribute::ofInt(2)}, {"auto_pad", ir::Attribute::ofString("SAME_UPPER")}});
    b.output("Y");
    ir::inferShapes(b.g);
    std::vector<std::int64_t> dims;
    const auto y = run(b.g, {TensorData::fromFloats({1, 2, 3, 4, 10, 20, 30, 40}, {1, 2, 2, 2})}, &dims);
    EXPECT_EQ(dims, (std::vector<std::int64_t>{1, 2, 2, 2}));
    // SAME_UPPER pads 1 at the end: channel 0 sums the window, channel 1 takes its bottom-right.
    EXPECT_EQ(y, (std::vector<double>{10, 6, 7, 4, 40, 0, 0, 0}));
}

TEST(ReferenceOps, SoftmaxAxis) {
    ir::test::Builder b;
    b.input("X", "f32[2,2]");
    b.node("Softmax", "sm", {"X"}, {"Y"}, {{"axis", ir::Attribute::ofInt(0)}});
    b.output("Y");
    ir::inferShapes(b.g);
    const auto y = run(b.g, {TensorData::fromFloats({0, 1, 0, 1}, {2, 2})});
    ASSERT_EQ(y.size(), 4u);
    for (double v : y) EXPECT_FLOAT_EQ(v, 0.5);

    ir::test::Builder b2;
    b2.input("X", "f32[1,3]");
    b2.node("Softmax", "sm", {"X"}, {"Y"});
    b2.output("Y");
    ir::inferShapes(b2.g);
    const auto z = run(b2.g, {TensorData::fromFloats({0, std::log(2.0f), std::log(5.0f)}, {1, 3})});
    ASSERT_EQ(z.size(), 3u);
    EXPECT_FLOAT_EQ(z[0], 0.125f);
    EXPECT_FLOAT_EQ(z[1], 0.25f);
    EXPECT_FLOAT_EQ(z[2], 0.625f);
}

TEST(ReferenceOps, GemmTransBAndBroadcastC) {
    ir::test::Builder b;
    b.input("A", "f32[2,2]");
    b.init("B", TensorData::fromFloats({1, 0, 0, 1, 1, 1}, {3, 2}));
    b.init("C", TensorData::fromFloats({1, 2, 3}, {3}));
    b.node("Gemm", "g", {"A", "B", "C"}, {"Y"},
           {{"transB", ir::Attribute::ofInt(1)}, {"alpha", ir::Attribute::ofFloat(2.0)}, {"beta", ir::Attribute::ofFloat(10.0)}});
    b.output("Y");
    ir::inferShapes(b.g);
    const auto y = run(b.g, {TensorData::fromFloats({1, 2, 3, 4}, {2, 2})});
    EXPECT_EQ(y, (std::vector<double>{2 + 10, 4 + 20, 6 + 30, 6 + 10, 8 + 20, 14 + 30}));
}

TEST(ReferenceOps, PoolingReduceAndDataMovement) {
    ir::test::Builder b;
    b.input("X", "f32[1,1,3,3]");
    b.node("AveragePool", "avg", {"X"}, {"A"},
           {{"kernel_shape", ir::Attribute::ofInts({2, 2})}, {"pads", ir::Attribute::ofInts({1, 1, 0, 0})},
            {"strides", ir::Attribute::ofInts({2, 2})}, {"count_include_pad", ir::Attribute::ofInt(1)}});
    b.node("MaxPool", "max", {"X"}, {"M"}, {{"kernel_shape", ir::Attribute::ofInts({2, 2})}});
    b.node("ReduceSum", "rs", {"M"}, {"R"}, {{"axes", ir::Attribute::ofInts({3})}, {"keepdims", ir::Attribute::ofInt(0)}});
    b.node("Transpose", "tr", {"R"}, {"T"}, {{"perm", ir::Attribute::ofInts({2, 1, 0})}});
    b.output("A");
    b.output("T");
    ir::inferShapes(b.g);
    auto out = eval::evaluate(b.g, {TensorData::fromFloats({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3})});
    ASSERT_TRUE(out.ok()) << firstError(out.diagnostics());
    // count_include_pad: the top-left window holds 1 real pixel and 3 padded zeros.
    EXPECT_EQ((*out)[0].toDoubles(), (std::vector<double>{0.25, (2 + 3) / 4.0, (4 + 7) / 4.0, (5 + 6 + 8 + 9) / 4.0}));
    EXPECT_EQ((*out)[1].dims, (std::vector<std::int64_t>{2, 1, 1}));
    EXPECT_EQ((*out)[1].toDoubles(), (std::vector<double>{5 + 6, 8 + 9}));
}

TEST(ReferenceCompute, DslMatMulDefinition) {
    const std::string text =
        "tessera 0.1;\n"
        "input A: f32[2, 3];\n"
        "input B: f32[3, 2];\n"
        "C[i, j] = sum(k) A[i, k] * B[k, j];\n"
        "D[i] = max(j) C[i, j] - C[(i + 1) % 2, 1 - j] / 2;\n"
        "output C;\n"
        "output D;\n";
    auto m = frontend::dsl::parseProgram(text, "t.tsr");
    ASSERT_TRUE(m.ok()) << firstError(m.diagnostics());
    auto out = eval::evaluate(m->graph, {TensorData::fromFloats({1, 2, 3, 4, 5, 6}, {2, 3}),
                                            TensorData::fromFloats({7, 8, 9, 10, 11, 12}, {3, 2})});
    ASSERT_TRUE(out.ok()) << firstError(out.diagnostics());
    ASSERT_EQ(out->size(), 2u);
    EXPECT_EQ((*out)[0].dtype, ir::DType::F32);
    EXPECT_EQ((*out)[0].toDoubles(), (std::vector<double>{58, 64, 139, 154}));
    // D[0] = max(58 - 154/2, 64 - 139/2) = -5.5; D[1] = max(139 - 64/2, 154 - 58/2) = 125.
    EXPECT_EQ((*out)[1].toDoubles(), (std::vector<double>{-5.5, 125}));
}

TEST(ReferenceCompute, IntegerFloorDivisionAndModulo) {
    const std::string text =
        "tessera 0.1;\n"
        "input x: f32[6];\n"
        "y[n: 6] = x[(n - 3) % 6] + cast((n - 3) / 2, f32) * 100.0;\n"
        "output y;\n";
    auto m = frontend::dsl::parseProgram(text, "t.tsr");
    ASSERT_TRUE(m.ok()) << firstError(m.diagnostics());
    const auto y = run(m->graph, {TensorData::fromFloats({0, 1, 2, 3, 4, 5}, {6})});
    // (n-3) % 6 = 3,4,5,0,1,2 and floor((n-3)/2) = -2,-1,-1,0,0,1.
    EXPECT_EQ(y, (std::vector<double>{3 - 200, 4 - 100, 5 - 100, 0, 1, 2 + 100}));
}

TEST(ReferenceErrors, UnsupportedOpNamesTheNode) {
    ir::test::Builder b;
    b.input("X", "f32[2]");
    b.node("Frobnicate", "x", {"X"}, {"Y"}, {}, "com.example");
    b.output("Y");
    auto out = eval::evaluate(b.g, {TensorData::fromFloats({1, 2}, {2})});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(firstError(out.diagnostics()), "node 'x' (Frobnicate): no reference implementation");

    ir::test::Builder b2;
    b2.input("X", "f32[2]");
    b2.node("NonMaxSuppression", "nms", {"X"}, {"Y"});
    b2.output("Y");
    auto out2 = eval::evaluate(b2.g, {TensorData::fromFloats({1, 2}, {2})});
    ASSERT_FALSE(out2.ok());
    EXPECT_EQ(firstError(out2.diagnostics()), "node 'nms' (NonMaxSuppression): no reference implementation");
}

TEST(ReferenceErrors, InputShapeMismatchAndElementLimit) {
    ir::test::Builder b;
    b.input("X", "f32[2,3]");
    b.node("Relu", "r", {"X"}, {"Y"});
    b.output("Y");
    ir::inferShapes(b.g);
    auto bad = eval::evaluate(b.g, {TensorData::fromFloats({1, 2, 3, 4}, {2, 2})});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(firstError(bad.diagnostics()), "input 'X': expected shape [2,3], got [2,2]");
    auto none = eval::evaluate(b.g, {});
    EXPECT_FALSE(none.ok());

    ir::test::Builder big;
    big.input("A", "f32[4,1]");
    big.input("B", "f32[1,4]");
    big.node("Add", "add", {"A", "B"}, {"C"});
    big.output("C");
    eval::ReferenceOptions opt;
    opt.maxElements = 8;
    auto lim = eval::evaluate(big.g, {TensorData::fromFloats({1, 2, 3, 4}, {4, 1}), TensorData::fromFloats({1, 2, 3, 4}, {1, 4})}, opt);
    ASSERT_FALSE(lim.ok());
    EXPECT_NE(firstError(lim.diagnostics()).find("node 'add' (Add): tensor of shape [4,4] exceeds the limit"),
              std::string::npos);
}

TEST(ReferenceErrors, CancelledBeforeTheFirstNode) {
    ir::test::Builder b;
    b.input("X", "f32[2]");
    b.node("Relu", "r", {"X"}, {"Y"});
    b.output("Y");
    support::CancelToken cancel;
    cancel.cancel();
    auto out = eval::evaluate(b.g, {TensorData::fromFloats({1, 2}, {2})}, &cancel);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(firstError(out.diagnostics()), "node 'r' (Relu): cancelled");
}

TEST(ReferenceOps, ShapeGatherReshapeConcatCastClipBatchNorm) {
    ir::test::Builder b;
    b.input("X", "f32[1,2,2]");
    b.node("Shape", "shape", {"X"}, {"S"});
    b.init("idx", TensorData::fromInts({2, -3}, {2}));
    b.node("Gather", "gather", {"S", "idx"}, {"G"});  // [2, 1]
    b.node("Reshape", "reshape", {"X", "G"}, {"R"});
    b.output("G");
    ir::inferShapes(b.g);
    auto out = eval::evaluate(b.g, {TensorData::fromFloats({1, 2, 3, 4}, {1, 2, 2})});
    // Reshape of 4 elements to [2,1] must fail and name the node.
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(firstError(out.diagnostics()), "node 'reshape' (Reshape): cannot reshape [1,2,2] to [2,1]");

    ir::test::Builder c;
    c.input("X", "f32[1,2,2]");
    c.init("shape", TensorData::fromInts({0, -1}, {2}));
    c.node("Reshape", "reshape", {"X", "shape"}, {"R"});                      // [1,4]
    c.init("axes", TensorData::fromInts({0}, {1}));
    c.node("Squeeze", "sq", {"R", "axes"}, {"Q"});                             // [4]
    c.node("Unsqueeze", "usq", {"Q", "axes"}, {"U"});                          // [1,4]
    c.node("Concat", "cat", {"U", "U"}, {"C"}, {{"axis", ir::Attribute::ofInt(0)}});  // [2,4]
    c.node("Clip", "clip", {"C"}, {"K"}, {{"min", ir::Attribute::ofFloat(1.5)}, {"max", ir::Attribute::ofFloat(3.5)}});
    c.node("Cast", "cast", {"K"}, {"I"}, {{"to", ir::Attribute::ofInt(7)}});  // i64, truncates
    c.node("Flatten", "flat", {"X"}, {"F"}, {{"axis", ir::Attribute::ofInt(2)}});  // [2,2]
    c.init("scale", TensorData::fromFloats({2, 1}, {2}));
    c.init("bias", TensorData::fromFloats({0, 1}, {2}));
    c.init("mean", TensorData::fromFloats({1, 0}, {2}));
    c.init("var", TensorData::fromFloats({4, 1}, {2}));
    c.node("BatchNormalization", "bn", {"F", "scale", "bias", "mean", "var"}, {"B"},
           {{"epsilon", ir::Attribute::ofFloat(0.0)}});
    c.init("raxes", TensorData::fromInts({1}, {1}));
    c.node("ReduceMean", "mean_", {"B", "raxes"}, {"M"}, {{"keepdims", ir::Attribute::ofInt(0)}});
    c.output("I");
    c.output("M");
    ir::inferShapes(c.g);
    auto r = eval::evaluate(c.g, {TensorData::fromFloats({1, 2, 3, 4}, {1, 2, 2})});
    ASSERT_TRUE(r.ok()) << firstError(r.diagnostics());
    EXPECT_EQ((*r)[0].dtype, ir::DType::I64);
    EXPECT_EQ((*r)[0].dims, (std::vector<std::int64_t>{2, 4}));
    EXPECT_EQ((*r)[0].toInts(), (std::vector<std::int64_t>{1, 2, 3, 3, 1, 2, 3, 3}));
    // F = [[1,2],[3,4]] with channels as columns: column 0 gives 2*(x-1)/2 = x-1, column 1 x+1,
    // so B = [[0,3],[2,5]] and the row means are 1.5 and 3.5.
    EXPECT_EQ((*r)[1].toDoubles(), (std::vector<double>{1.5, 3.5}));
}
