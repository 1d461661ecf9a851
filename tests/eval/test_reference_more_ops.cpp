// Reference interpreter (core/eval/reference_interpreter.h): evaluateAll and the ops added for
// the ONNX node tests, each on small cases whose results are worked out by hand from the spec.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/eval/reference_interpreter.h"
#include "core/ir/shape_inference.h"
#include "core/test_ir_helpers.h"

using namespace tessera;
using ir::Attribute;
using ir::TensorData;
using Dims = std::vector<std::int64_t>;

namespace {

std::string firstError(const support::DiagnosticList& d) {
    const auto* e = d.firstError();
    return e ? e->where + ": " + e->message : std::string("<no error>");
}

/// One node `op` over runtime inputs x0.. (an empty TensorData with Undefined dtype = omitted
/// input), outputs y0..y(outputs-1); returns the outputs.
std::vector<TensorData> runOp(const std::string& op, const std::vector<TensorData>& inputs,
                              const ir::test::Attrs& attrs = {}, int outputs = 1, std::int64_t opset = 17) {
    ir::test::Builder b;
    std::vector<std::string> ins;
    std::vector<TensorData> fed;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].dtype == ir::DType::Undefined) {
            ins.emplace_back();
            continue;
        }
        const std::string name = "x" + std::to_string(i);
        b.input(name, inputs[i].type().str());
        ins.push_back(name);
        fed.push_back(inputs[i]);
    }
    std::vector<std::string> outs;
    for (int k = 0; k < outputs; ++k) outs.push_back("y" + std::to_string(k));
    b.node(op, "n", ins, outs, attrs);
    for (const auto& o : outs) b.output(o);
    ir::inferShapes(b.g);
    eval::ReferenceOptions opt;
    opt.opset = opset;
    auto r = eval::evaluate(b.g, fed, opt);
    EXPECT_TRUE(r.ok()) << op << ": " << firstError(r.diagnostics());
    return r.ok() ? *r : std::vector<TensorData>(static_cast<std::size_t>(outputs));
}

TensorData f32(const std::vector<float>& v, Dims dims) { return TensorData::fromFloats(v, std::move(dims)); }
TensorData i64(const std::vector<std::int64_t>& v, Dims dims) { return TensorData::fromInts(v, std::move(dims)); }
TensorData i64v(const std::vector<std::int64_t>& v) { return i64(v, {static_cast<std::int64_t>(v.size())}); }
TensorData none() { return {}; }

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

}  // namespace

TEST(ReferenceEvaluateAll, KeepsEveryIntermediateValue) {
    ir::test::Builder b;
    b.input("x", "f32[3]");
    b.init("k", f32({2, 2, 2}, {3}));
    b.node("Relu", "relu", {"x"}, {"r"});
    b.node("Mul", "mul", {"r", "k"}, {"m"});
    b.node("Neg", "neg", {"m"}, {"y"});
    b.output("y");
    ir::inferShapes(b.g);
    auto all = eval::evaluateAll(b.g, {f32({-1, 0.5f, 3}, {3})});
    ASSERT_TRUE(all.ok()) << firstError(all.diagnostics());
    ASSERT_EQ(all->values.size(), b.g.numValues());
    const auto* r = all->value(b.g.findValue("r"));
    const auto* m = all->value(b.g.findValue("m"));
    ASSERT_NE(r, nullptr);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(r->dtype, ir::DType::F32);
    EXPECT_EQ(r->toDoubles(), (std::vector<double>{0, 0.5, 3}));
    EXPECT_EQ(m->toDoubles(), (std::vector<double>{0, 1, 6}));
    EXPECT_EQ(all->value(b.g.findValue("x"))->toDoubles(), (std::vector<double>{-1, 0.5, 3}));
    EXPECT_EQ(all->value(b.g.findValue("k")), nullptr);  // initializer: its data is in the graph
    EXPECT_EQ(all->value(ir::kNoValue), nullptr);
    ASSERT_EQ(all->outputs.size(), 1u);
    EXPECT_EQ(all->outputs[0].toDoubles(), (std::vector<double>{-0.0, -1, -6}));
    EXPECT_EQ(all->value(b.g.findValue("y"))->toDoubles(), all->outputs[0].toDoubles());
}

TEST(ReferenceEvaluateAll, F32IntermediatesAreStoredAsF32) {
    // 1/3 in f32 is 0.3333333432674408; 1e8 + that value stays 1e8 in f32 but not in double.
    ir::test::Builder b;
    b.input("x", "f32[1]");
    b.init("three", f32({3}, {1}));
    b.init("big", f32({1e8f}, {1}));
    b.node("Div", "d", {"x", "three"}, {"q"});
    b.node("Add", "a", {"q", "big"}, {"s"});
    b.node("Sub", "s", {"s", "big"}, {"y"});
    b.output("y");
    ir::inferShapes(b.g);
    auto all = eval::evaluateAll(b.g, {f32({1}, {1})});
    ASSERT_TRUE(all.ok()) << firstError(all.diagnostics());
    EXPECT_EQ(all->value(b.g.findValue("q"))->elementAsDouble(0), static_cast<double>(1.0f / 3.0f));
    EXPECT_EQ(all->outputs[0].elementAsDouble(0), 0.0);
}

TEST(ReferenceEvaluateAll, CastsThroughHalfTypesRoundToThem) {
    // f32 -> f16 -> f32 as numpy's float16 (round to nearest even, subnormals, overflow to inf);
    // a newcomer's model once failed --check because the reference kept 1000.7.
    ir::test::Builder b;
    b.input("x", "f32[8]");
    b.node("Cast", "h", {"x"}, {"h"}, {{"to", Attribute::ofInt(10)}});
    b.node("Cast", "f", {"h"}, {"y"}, {{"to", Attribute::ofInt(1)}});
    b.node("Cast", "bh", {"x"}, {"bh"}, {{"to", Attribute::ofInt(16)}});
    b.node("Cast", "bf", {"bh"}, {"z"}, {{"to", Attribute::ofInt(1)}});
    b.output("y");
    b.output("z");
    ir::inferShapes(b.g);
    auto r = eval::evaluate(b.g, {f32({13.0038357f, 0.1f, 1.0f / 3.0f, 1000.7f, 65519.0f, 65520.0f, 1e-7f, -2.5e-5f}, {8})});
    ASSERT_TRUE(r.ok()) << firstError(r.diagnostics());
    const std::vector<double> want{13.0, 0.0999755859375, 0.333251953125, 1000.5, 65504.0,
                                   std::numeric_limits<double>::infinity(), 1.1920928955078125e-07, -2.4974346160888672e-05};
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ((*r)[0].elementAsDouble(static_cast<std::int64_t>(i)), want[i]) << i;
    // bfloat16: 8 significand bits (1000.7 -> 1000, 0.1 -> 205 / 2048).
    EXPECT_EQ((*r)[1].elementAsDouble(3), 1000.0);
    EXPECT_EQ((*r)[1].elementAsDouble(1), 205.0 / 2048.0);
}

TEST(ReferenceEvaluateAll, MissingOpNamesTheNode) {
    ir::test::Builder b;
    b.input("x", "f32[2]");
    b.node("NoSuchOp", "mystery", {"x"}, {"y"});
    b.output("y");
    auto all = eval::evaluateAll(b.g, {f32({1, 2}, {2})});
    ASSERT_FALSE(all.ok());
    EXPECT_EQ(all.diagnostics().firstError()->where, "node 'mystery' (NoSuchOp)");
    EXPECT_EQ(all.diagnostics().firstError()->message, eval::kNoReferenceImplementation);
}

TEST(ReferenceMoreOps, SliceNegativeStepAndSaturatedEnds) {
    const TensorData x = f32({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {10});
    auto y = runOp("Slice", {x, i64v({-1}), i64v({kMin}), i64v({0}), i64v({-3})});
    EXPECT_EQ(y[0].toDoubles(), (std::vector<double>{9, 6, 3, 0}));
    auto z = runOp("Slice", {x, i64v({2}), i64v({kMax}), none(), i64v({3})});
    EXPECT_EQ(z[0].toDoubles(), (std::vector<double>{2, 5, 8}));
    // 2-D, second axis only via axes = [-1].
    auto w = runOp("Slice", {f32({1, 2, 3, 4, 5, 6}, {2, 3}), i64v({1}), i64v({3}), i64v({-1})});
    EXPECT_EQ(w[0].dims, (Dims{2, 2}));
    EXPECT_EQ(w[0].toDoubles(), (std::vector<double>{2, 3, 5, 6}));
}

TEST(ReferenceMoreOps, PadModes) {
    const TensorData x = f32({1, 2, 3}, {3});
    const TensorData pads = i64v({2, 1});
    EXPECT_EQ(runOp("Pad", {x, pads}, {{"mode", Attribute::ofString("reflect")}})[0].toDoubles(),
              (std::vector<double>{3, 2, 1, 2, 3, 2}));
    EXPECT_EQ(runOp("Pad", {x, pads}, {{"mode", Attribute::ofString("edge")}})[0].toDoubles(),
              (std::vector<double>{1, 1, 1, 2, 3, 3}));
    EXPECT_EQ(runOp("Pad", {x, pads, f32({9}, {})})[0].toDoubles(), (std::vector<double>{9, 9, 1, 2, 3, 9}));
    // Negative pads crop.
    EXPECT_EQ(runOp("Pad", {x, i64v({-1, 0})})[0].toDoubles(), (std::vector<double>{2, 3}));
}

TEST(ReferenceMoreOps, SplitBySizesAndEvenly) {
    const TensorData x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
    auto parts = runOp("Split", {x, i64v({1, 2})}, {{"axis", Attribute::ofInt(1)}}, 2);
    EXPECT_EQ(parts[0].dims, (Dims{2, 1}));
    EXPECT_EQ(parts[0].toDoubles(), (std::vector<double>{1, 4}));
    EXPECT_EQ(parts[1].toDoubles(), (std::vector<double>{2, 3, 5, 6}));
    auto rows = runOp("Split", {x}, {}, 2);
    EXPECT_EQ(rows[1].toDoubles(), (std::vector<double>{4, 5, 6}));
}

TEST(ReferenceMoreOps, ConvTransposeStridedAndOverlapping) {
    const TensorData x = f32({1, 2, 3, 4}, {1, 1, 2, 2});
    const TensorData w = f32({1, 1, 1, 1}, {1, 1, 2, 2});
    auto s2 = runOp("ConvTranspose", {x, w}, {{"strides", Attribute::ofInts({2, 2})}});
    EXPECT_EQ(s2[0].dims, (Dims{1, 1, 4, 4}));
    EXPECT_EQ(s2[0].toDoubles(), (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
    auto s1 = runOp("ConvTranspose", {x, w, f32({10}, {1})});
    EXPECT_EQ(s1[0].dims, (Dims{1, 1, 3, 3}));
    EXPECT_EQ(s1[0].toDoubles(), (std::vector<double>{11, 13, 12, 14, 20, 16, 13, 17, 14}));
    // output_shape larger than the full result: the extra row/column is bias only.
    auto big = runOp("ConvTranspose", {x, w, f32({10}, {1})}, {{"output_shape", Attribute::ofInts({4, 4})}});
    EXPECT_EQ(big[0].dims, (Dims{1, 1, 4, 4}));
    EXPECT_EQ(big[0].toDoubles(), (std::vector<double>{11, 13, 12, 10, 14, 20, 16, 10, 13, 17, 14, 10, 10, 10, 10, 10}));
}

TEST(ReferenceMoreOps, LayerNormalizationAndStatistics) {
    auto y = runOp("LayerNormalization", {f32({1, 2, 3, 4}, {1, 4}), f32({1, 1, 2, 2}, {4}), f32({0, 0, 0, 1}, {4})},
                   {{"epsilon", Attribute::ofFloat(0.0)}}, 3);
    const double s = 1 / std::sqrt(1.25);
    const std::vector<double> want = {-1.5 * s, -0.5 * s, 2 * 0.5 * s, 2 * 1.5 * s + 1};
    ASSERT_EQ(y[0].numElements(), 4);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[0].elementAsDouble(i), want[static_cast<std::size_t>(i)], 1e-6);
    EXPECT_EQ(y[1].dims, (Dims{1, 1}));
    EXPECT_EQ(y[1].elementAsDouble(0), 2.5);
    EXPECT_NEAR(y[2].elementAsDouble(0), s, 1e-7);
}

TEST(ReferenceMoreOps, ReductionsAndArgExtremes) {
    const TensorData big = f32({1000, 1000}, {2});
    EXPECT_NEAR(runOp("ReduceLogSumExp", {big})[0].elementAsDouble(0), 1000 + std::log(2.0), 1e-3);
    const TensorData x = f32({3, -4, 1, 2}, {2, 2});
    EXPECT_EQ(runOp("ReduceL1", {x}, {{"axes", Attribute::ofInts({1})}})[0].toDoubles(), (std::vector<double>{7, 3}));
    EXPECT_EQ(runOp("ReduceL2", {x}, {{"axes", Attribute::ofInts({1})}})[0].toDoubles(),
              (std::vector<double>{5, std::sqrt(5.0f)}));
    EXPECT_EQ(runOp("ReduceSumSquare", {x}, {{"keepdims", Attribute::ofInt(0)}})[0].toDoubles(),
              (std::vector<double>{30}));
    const TensorData t = f32({1, 3, 3}, {3});
    auto first = runOp("ArgMax", {t});
    EXPECT_EQ(first[0].dtype, ir::DType::I64);
    EXPECT_EQ(first[0].toInts(), (std::vector<std::int64_t>{1}));
    EXPECT_EQ(runOp("ArgMax", {t}, {{"select_last_index", Attribute::ofInt(1)}})[0].toInts(),
              (std::vector<std::int64_t>{2}));
    EXPECT_EQ(runOp("ArgMin", {t}, {{"keepdims", Attribute::ofInt(0)}})[0].dims, Dims{});
}

TEST(ReferenceMoreOps, ResizeNearestAndLinear) {
    const TensorData x = f32({1, 2}, {1, 1, 1, 2});
    const TensorData scales = f32({1, 1, 1, 2}, {4});
    auto nearest = runOp("Resize", {x, none(), scales},
                         {{"coordinate_transformation_mode", Attribute::ofString("asymmetric")}});
    EXPECT_EQ(nearest[0].toDoubles(), (std::vector<double>{1, 1, 2, 2}));
    auto linear = runOp("Resize", {f32({0, 3}, {1, 1, 1, 2}), none(), none(), i64v({1, 1, 1, 4})},
                        {{"mode", Attribute::ofString("linear")},
                         {"coordinate_transformation_mode", Attribute::ofString("align_corners")}});
    EXPECT_EQ(linear[0].toDoubles(), (std::vector<double>{0, 1, 2, 3}));
    // half_pixel linear 2x: positions -0.25, 0.25, 0.75, 1.25 clamp at the edges.
    auto half = runOp("Resize", {f32({0, 4}, {1, 1, 1, 2}), none(), scales}, {{"mode", Attribute::ofString("linear")}});
    EXPECT_EQ(half[0].toDoubles(), (std::vector<double>{0, 1, 3, 4}));
}

TEST(ReferenceMoreOps, EinsumMatmulDiagonalAndImplicitOutput) {
    const TensorData a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
    const TensorData b = f32({7, 8, 9, 10, 11, 12}, {3, 2});
    EXPECT_EQ(runOp("Einsum", {a, b}, {{"equation", Attribute::ofString("ij,jk->ik")}})[0].toDoubles(),
              (std::vector<double>{58, 64, 139, 154}));
    const TensorData sq = f32({1, 2, 3, 4}, {2, 2});
    EXPECT_EQ(runOp("Einsum", {sq}, {{"equation", Attribute::ofString("ii->i")}})[0].toDoubles(),
              (std::vector<double>{1, 4}));
    // Implicit output: letters seen once, alphabetical -> "ji" is a transpose.
    EXPECT_EQ(runOp("Einsum", {sq}, {{"equation", Attribute::ofString("ji")}})[0].toDoubles(),
              (std::vector<double>{1, 3, 2, 4}));
    const TensorData batch = f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
    EXPECT_EQ(runOp("Einsum", {batch}, {{"equation", Attribute::ofString("...ii->...i")}})[0].toDoubles(),
              (std::vector<double>{1, 4, 5, 8}));
}

TEST(ReferenceMoreOps, ModSignsAndLogicalOps) {
    EXPECT_EQ(runOp("Mod", {i64v({-7, 7}), i64v({3, -3})})[0].toInts(), (std::vector<std::int64_t>{2, -2}));
    EXPECT_EQ(runOp("Mod", {f32({-7, 7}, {2}), f32({3, -3}, {2})}, {{"fmod", Attribute::ofInt(1)}})[0].toDoubles(),
              (std::vector<double>{-1, 1}));
    TensorData t = TensorData::fromInts({1, 1, 0, 0}, {4});
    TensorData u = TensorData::fromInts({1, 0, 1, 0}, {4});
    t.dtype = u.dtype = ir::DType::Bool;
    t.bytes = {1, 1, 0, 0};
    u.bytes = {1, 0, 1, 0};
    auto x = runOp("Xor", {t, u});
    EXPECT_EQ(x[0].dtype, ir::DType::Bool);
    EXPECT_EQ(x[0].toInts(), (std::vector<std::int64_t>{0, 1, 1, 0}));
    EXPECT_EQ(runOp("Not", {t})[0].toInts(), (std::vector<std::int64_t>{0, 0, 1, 1}));
}

TEST(ReferenceMoreOps, ShapeBuildersAndIndexOps) {
    EXPECT_EQ(runOp("Expand", {f32({1, 2}, {2, 1}), i64v({2, 3})})[0].toDoubles(),
              (std::vector<double>{1, 1, 1, 2, 2, 2}));
    EXPECT_EQ(runOp("Tile", {f32({1, 2}, {2}), i64v({3})})[0].toDoubles(), (std::vector<double>{1, 2, 1, 2, 1, 2}));
    EXPECT_EQ(runOp("Range", {f32({1}, {}), f32({2}, {}), f32({0.25f}, {})})[0].toDoubles(),
              (std::vector<double>{1, 1.25, 1.5, 1.75}));
    EXPECT_EQ(runOp("Trilu", {f32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3})}, {{"upper", Attribute::ofInt(0)}})[0].toDoubles(),
              (std::vector<double>{1, 0, 0, 4, 5, 0, 7, 8, 9}));
    EXPECT_EQ(runOp("GatherElements", {f32({1, 2, 3, 4}, {2, 2}), i64({1, 0, 0, 0}, {2, 2})},
                    {{"axis", Attribute::ofInt(1)}})[0]
                  .toDoubles(),
              (std::vector<double>{2, 1, 3, 3}));
    EXPECT_EQ(runOp("DepthToSpace", {f32({1, 2, 3, 4}, {1, 4, 1, 1})}, {{"blocksize", Attribute::ofInt(2)}})[0].toDoubles(),
              (std::vector<double>{1, 2, 3, 4}));
    auto topk = runOp("TopK", {f32({3, 1, 3, 2}, {4}), i64v({2})}, {}, 2);
    EXPECT_EQ(topk[0].toDoubles(), (std::vector<double>{3, 3}));
    EXPECT_EQ(topk[1].toInts(), (std::vector<std::int64_t>{0, 2}));  // ties: lower index first
    EXPECT_EQ(runOp("CumSum", {f32({1, 2, 3}, {3}), i64({0}, {})}, {{"exclusive", Attribute::ofInt(1)}})[0].toDoubles(),
              (std::vector<double>{0, 1, 3}));
}

TEST(ReferenceMoreOps, ClipTakesMinAndMaxInputs) {
    EXPECT_EQ(runOp("Clip", {f32({-2, 0.5f, 9}, {3}), f32({-1}, {}), f32({1}, {})})[0].toDoubles(),
              (std::vector<double>{-1, 0.5, 1}));
    EXPECT_EQ(runOp("Clip", {f32({-2, 0.5f, 9}, {3}), none(), f32({1}, {})})[0].toDoubles(),
              (std::vector<double>{-2, 0.5, 1}));
}

TEST(ReferenceMoreOps, MaxPoolIndices) {
    auto y = runOp("MaxPool", {f32({1, 5, 3, 2, 0, 4, 9, 8}, {1, 2, 2, 2})}, {{"kernel_shape", Attribute::ofInts({2, 2})}}, 2);
    EXPECT_EQ(y[0].toDoubles(), (std::vector<double>{5, 9}));
    EXPECT_EQ(y[1].toInts(), (std::vector<std::int64_t>{1, 6}));  // flat into N,C,H,W
}

TEST(ReferenceMoreOps, TrainingDropoutIsReportedAsUnsupported) {
    ir::test::Builder b;
    b.input("x", "f32[2]");
    b.init("ratio", f32({0.5f}, {}));
    TensorData on = TensorData::fromInts({1}, {});
    on.dtype = ir::DType::Bool;
    on.bytes = {1};
    b.init("train", on);
    b.node("Dropout", "drop", {"x", "ratio", "train"}, {"y"});
    b.output("y");
    auto r = eval::evaluate(b.g, {f32({1, 2}, {2})});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().firstError()->message,
              std::string(eval::kNoReferenceImplementation) + " for Dropout in training mode (random mask)");
}
