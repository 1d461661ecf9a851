// Compute-heavy lowering templates (core/lower/detail/lower_heavy.h): every op lowered, run with the
// kernel-IR interpreter and compared with the reference interpreter (f32: 1e-5 relative), under
// several attribute combinations, default and user mappings; golden text of tiny kernels; the
// global traffic the tiled kernels issue.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/eval/compare.h"
#include "core/eval/reference_interpreter.h"
#include "core/golden.h"
#include "core/lower/lower.h"
#include "core/test_ir_helpers.h"
#include "lower/test_lower_basic_util.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::lower::test {
namespace {

using ir::Attribute;
using ir::test::Attrs;
using ir::test::floats;
using ir::test::in;
using ir::test::ints;
using ir::test::runOne;

Attribute I(std::int64_t v) { return Attribute::ofInt(v); }
Attribute Is(std::vector<std::int64_t> v) { return Attribute::ofInts(std::move(v)); }
Attribute F(double v) { return Attribute::ofFloat(v); }
Attribute S(std::string v) { return Attribute::ofString(std::move(v)); }

struct CheckOptions;
std::string heavyCheckLowered(const ir::Graph& g, const eval::ReferenceValues& refValues, const CheckOptions& co,
                              Target target);

struct CheckOptions {
    std::int64_t opset = 0;
    const ir::KernelScheduleDecl* schedule = nullptr;
    std::string* kernelText = nullptr;  ///< receives printKernel of the node's kernel
};

/// One-node graph of `op` with random inputs (constants stay constants), lowered, run by the
/// kernel-IR interpreter and compared output by output with the reference interpreter.
std::string heavyCheck(const std::string& op, const std::vector<ir::test::In>& ins, const Attrs& attrs = {},
                       int outputs = 1, const CheckOptions& co = {}) {
    auto r = runOne(op, ins, attrs, outputs);
    if (!r.error().empty()) return "shape inference: " + r.error();
    for (ir::ValueId o : r.g.node(0).outputs)
        if (std::find(r.g.outputs().begin(), r.g.outputs().end(), o) == r.g.outputs().end()) r.g.outputs().push_back(o);
    const auto inputs = makeInputs(r.g, 7);
    eval::ReferenceOptions ro;
    ro.opset = co.opset;
    auto ref = eval::evaluateAll(r.g, inputs, ro);
    if (!ref) return "reference: " + ref.diagnostics().firstError()->format();
    // Ops shape inference does not know yet (ReduceL1 ...): take the output types from the reference.
    for (ir::ValueId o : r.g.node(0).outputs) {
        ir::Value& v = r.g.value(o);
        const ir::TensorData* t = ref->value(o);
        if (t && !v.type.shape.knownDims()) {
            std::vector<ir::Dim> dims;
            for (auto d : t->dims) dims.push_back(ir::Dim::known(d));
            v.type.shape = ir::Shape(dims);
            if (v.type.dtype == ir::DType::Undefined) v.type.dtype = t->dtype;
        }
    }
    std::string problems;
    for (Target target : {Target::Cpu, Target::Cuda}) {
        const std::string p = heavyCheckLowered(r.g, *ref, co, target);
        if (!p.empty()) problems += (target == Target::Cuda ? "[cuda] " : "") + p;
    }
    return problems;
}

/// The lowering, interpreter run and comparison of heavyCheck for one target.
std::string heavyCheckLowered(const ir::Graph& g, const eval::ReferenceValues& refValues, const CheckOptions& co,
                              Target target) {
    const eval::ReferenceValues* ref = &refValues;
    LowerOptions lo;
    lo.opset = co.opset;
    lo.target = target;
    auto lk = lowerNode(g, 0, co.schedule, lo);
    if (!lk) return "lowering: " + lk.diagnostics().firstError()->format();
    if (co.kernelText && target == Target::Cpu) *co.kernelText = printKernel(lk->kernel);
    std::vector<ir::TensorData> storage;
    for (ir::ValueId v : lk->inputs) {
        const ir::Value& val = g.value(v);
        if (val.data) storage.push_back(*val.data);
        else if (const ir::TensorData* t = ref->value(v)) storage.push_back(*t);
        else return "no value for input " + val.name;
    }
    for (std::size_t o = 0; o < lk->outputs.size(); ++o) storage.emplace_back();
    std::vector<ir::TensorData*> params;
    for (auto& t : storage) params.push_back(&t);
    auto st = evalKernel(lk->kernel, params);
    if (!st) return "eval: " + st.diagnostics().firstError()->format();
    std::string problems;
    for (std::size_t o = 0; o < lk->outputs.size(); ++o) {
        const ir::TensorData* want = ref->value(lk->outputs[o]);
        if (!want) return "no reference value for output " + std::to_string(o);
        ir::TensorData got = storage[lk->inputs.size() + o];
        got.dims = want->dims;
        eval::CompareOptions cmpOpt = eval::defaultCompareOptions(want->dtype);
        if (want->dtype == ir::DType::F32) cmpOpt = {1e-5, 1e-5};
        auto cmp = eval::compareTensors(got, *want, cmpOpt);
        if (!cmp.ok) problems += "output " + std::to_string(o) + ": " + cmp.summary() + "\n";
    }
    return problems;
}

ir::KernelScheduleDecl schedule(const std::string& grid, const std::string& block = {}) {
    ir::KernelScheduleDecl s;
    s.subject = "n0";
    ir::ScheduleMappingDecl g;
    g.level = "grid";
    g.text = grid;
    s.mappings.push_back(g);
    if (!block.empty()) {
        ir::ScheduleMappingDecl b;
        b.level = "block";
        b.text = block;
        s.mappings.push_back(b);
    }
    return s;
}

TEST(LowerHeavy, MatMulShapes) {
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[5,7]"), in("f32[7,3]")}), "");
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[16,32]"), in("f32[32,64]")}), "");     // full tiles
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[19,33]"), in("f32[33,70]")}), "");     // edge tiles
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[2,3,9,5]"), in("f32[5,6]")}), "");      // batched, B broadcast
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[3,1,4,5]"), in("f32[2,5,3]")}), "");    // batch broadcast both ways
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[5]"), in("f32[5,4]")}), "");            // 1-D A
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[4,5]"), in("f32[5]")}), "");            // 1-D B (axpy, short K)
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[6,40]"), in("f32[40]")}), "");          // 1-D B (dot form)
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[2,6,40]"), in("f32[40]")}), "");
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[37]"), in("f32[37]")}), "");            // scalar result
    EXPECT_EQ(heavyCheck("MatMul", {in("i32[3,4]"), in("i32[4,5]")}), "");
    EXPECT_EQ(heavyCheck("MatMul", {in("f64[3,4]"), in("f64[4,5]")}), "");
}

TEST(LowerHeavy, MatMulUserMappings) {
    // Tile 4 x 16 from the repeat, tiles spread by the spatial part (predicate: 12 > 10 tiles).
    auto s1 = schedule("spatial(3, 4) * repeat(4, 16)");
    std::string text;
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[10,9]"), in("f32[9,64]")}, {}, 1, {0, &s1, &text}), "");
    EXPECT_NE(text.find("// grid = spatial(3,4).repeat(4,16)"), std::string::npos) << text;
    // Tile bigger than the accumulator budget: sub-tiles.
    auto s2 = schedule("spatial(1, 1) * repeat(40, 300)");
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[40,8]"), in("f32[8,300]")}, {}, 1, {0, &s2}), "");
    // Ends in spatial: 1-element tiles. Grid + block levels.
    auto s3 = schedule("repeat(2, 1) * spatial(4, 8)");
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[8,5]"), in("f32[5,8]")}, {}, 1, {0, &s3}), "");
    auto s4 = schedule("spatial(2, 2)", "spatial(2, 1) * repeat(2, 8)");
    EXPECT_EQ(heavyCheck("MatMul", {in("f32[8,5]"), in("f32[5,16]")}, {}, 1, {0, &s4}), "");
    // Rank mismatch is an error naming the mapping.
    auto bad = schedule("spatial(4)");
    const std::string err = heavyCheck("MatMul", {in("f32[4,5]"), in("f32[5,4]")}, {}, 1, {0, &bad});
    EXPECT_NE(err.find("lowering:"), std::string::npos) << err;
}

TEST(LowerHeavy, Gemm) {
    EXPECT_EQ(heavyCheck("Gemm", {in("f32[5,7]"), in("f32[7,9]")}), "");
    EXPECT_EQ(heavyCheck("Gemm", {in("f32[5,7]"), in("f32[7,9]"), in("f32[9]")}, {{"alpha", F(0.5)}, {"beta", F(2.0)}}), "");
    EXPECT_EQ(heavyCheck("Gemm", {in("f32[7,5]"), in("f32[7,9]"), in("f32[5,1]")}, {{"transA", I(1)}}), "");
    EXPECT_EQ(heavyCheck("Gemm", {in("f32[3,40]"), in("f32[10,40]"), in("f32[1,10]")}, {{"transB", I(1)}}), "");  // dot form
    EXPECT_EQ(heavyCheck("Gemm", {in("f32[1,70]"), in("f32[13,70]"), in("f32[13]")}, {{"transB", I(1)}}), "");
    EXPECT_EQ(heavyCheck("Gemm", {in("f32[7,5]"), in("f32[9,7]"), in("f32[5,9]")},
                         {{"transA", I(1)}, {"transB", I(1)}, {"beta", F(0.0)}}), "");
    EXPECT_EQ(heavyCheck("Gemm", {in("f32[4,3]"), in("f32[3,2]"), in("f32[]")}, {{"beta", F(-1.5)}}), "");
    EXPECT_EQ(heavyCheck("Gemm", {in("f32[20,3]"), in("f32[3,70]"), in("f32[20,70]")}), "");
}

TEST(LowerHeavy, ConvPointwiseAndDirect) {
    // Pointwise (matmul view), with and without bias, edge tiles.
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,6,5,5]"), in("f32[10,6,1,1]"), in("f32[10]")}), "");
    EXPECT_EQ(heavyCheck("Conv", {in("f32[2,3,9,9]"), in("f32[4,3,1,1]")}), "");
    // Direct 2-D: pads, strides, dilations.
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,3,9,9]"), in("f32[5,3,3,3]"), in("f32[5]")}, {{"pads", Is({1, 1, 1, 1})}}), "");
    EXPECT_EQ(heavyCheck("Conv", {in("f32[2,2,10,11]"), in("f32[3,2,3,2]")},
                         {{"strides", Is({2, 3})}, {"pads", Is({1, 0, 2, 1})}, {"dilations", Is({2, 1})}}), "");
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,3,8,8]"), in("f32[4,3,1,1]")}, {{"strides", Is({2, 2})}}), "");  // 1x1 strided
    // auto_pad.
    for (const char* ap : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
        SCOPED_TRACE(ap);
        EXPECT_EQ(heavyCheck("Conv", {in("f32[1,2,7,8]"), in("f32[3,2,4,3]")}, {{"auto_pad", S(ap)}, {"strides", Is({2, 2})}}), "");
    }
    // Groups: grouped and depthwise (with stride 2 and padding, like MobileNetV2).
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,4,6,6]"), in("f32[6,2,3,3]"), in("f32[6]")}, {{"group", I(2)}, {"pads", Is({1, 1, 1, 1})}}), "");
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,8,9,9]"), in("f32[8,1,3,3]"), in("f32[8]")}, {{"group", I(8)}, {"pads", Is({1, 1, 1, 1})}}), "");
    EXPECT_EQ(heavyCheck("Conv", {in("f32[2,6,10,10]"), in("f32[6,1,3,3]")},
                         {{"group", I(6)}, {"pads", Is({1, 1, 1, 1})}, {"strides", Is({2, 2})}}), "");
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,3,7,7]"), in("f32[6,1,3,3]")}, {{"group", I(3)}}), "");  // channel multiplier 2
    // 1-D and 3-D.
    EXPECT_EQ(heavyCheck("Conv", {in("f32[2,3,20]"), in("f32[4,3,5]"), in("f32[4]")}, {{"pads", Is({2, 1})}, {"strides", Is({2})}}), "");
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,2,5,6,7]"), in("f32[3,2,3,2,3]")}, {{"pads", Is({1, 0, 1, 1, 1, 0})}}), "");
    // A wide row beyond the 256-element tile and a kernel with more than 16 taps.
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,1,300]"), in("f32[2,1,20]")}, {{"pads", Is({3, 4})}}), "");
}

TEST(LowerHeavy, ConvStagedForm) {
    // 2-D convs (group 1, or depthwise with rows narrower than 32) run on a staged, phase-split
    // input: strides, dilations, asymmetric pads, a partial channel tile (10 = 8 + 2), batch 2.
    std::string text;
    EXPECT_EQ(heavyCheck("Conv", {in("f32[2,3,13,11]"), in("f32[10,3,3,3]"), in("f32[10]")},
                         {{"strides", Is({2, 2})}, {"dilations", Is({2, 2})}, {"pads", Is({1, 2, 0, 1})}}, 1,
                         {0, nullptr, &text}), "");
    EXPECT_NE(text.find("direct conv on a staged input"), std::string::npos) << text;
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,3,16,16]"), in("f32[4,3,7,7]")}, {{"strides", Is({2, 2})}, {"pads", Is({3, 3, 3, 3})}}), "");
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,2,9,8]"), in("f32[3,2,2,3]")}, {{"strides", Is({3, 2})}, {"pads", Is({0, 1, 2, 0})}}), "");
    // Partial row tiles (3 rows per tile over 7 output rows) from a user mapping.
    auto sr = schedule("spatial(1, 2, 3, 1) * repeat(1, 4, 3, 6)");
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,3,7,6]"), in("f32[8,3,3,3]"), in("f32[8]")}, {{"pads", Is({1, 1, 1, 1})}}, 1,
                         {0, &sr, &text}), "");
    EXPECT_NE(text.find("staged input"), std::string::npos) << text;
    // Pointwise on a small image: input channels summed in chunks of 8 (12 = 8 + 4), partial co tile.
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,12,7,7]"), in("f32[10,12,1,1]"), in("f32[10]")}, {}, 1, {0, nullptr, &text}), "");
    EXPECT_NE(text.find("cb_"), std::string::npos) << text;
    // Narrow (or stride-1) depthwise is staged; a wide strided one keeps the row-vectorised form.
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,4,7,7]"), in("f32[4,1,3,3]")}, {{"group", I(4)}, {"strides", Is({2, 2})}, {"pads", Is({1, 1, 1, 1})}}, 1,
                         {0, nullptr, &text}), "");
    EXPECT_NE(text.find("depthwise conv on a staged input"), std::string::npos) << text;
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,2,3,40]"), in("f32[2,1,3,3]")}, {{"group", I(2)}, {"pads", Is({1, 1, 1, 1})}}, 1,
                         {0, nullptr, &text}), "");
    EXPECT_NE(text.find("depthwise conv on a staged input"), std::string::npos) << text;
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,2,5,40]"), in("f32[2,1,3,3]")},
                         {{"group", I(2)}, {"strides", Is({2, 2})}, {"pads", Is({1, 1, 1, 1})}}, 1,
                         {0, nullptr, &text}), "");
    EXPECT_NE(text.find("depthwise conv: rows"), std::string::npos) << text;
}

TEST(LowerHeavy, ConvUserMappings) {
    // Rank-4 mapping on a pointwise conv selects the direct conv; rank 3 the matmul view.
    auto s4 = schedule("spatial(1, 2, 5, 1) * repeat(1, 3, 1, 5)");
    std::string text;
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,4,5,5]"), in("f32[6,4,1,1]")}, {}, 1, {0, &s4, &text}), "");
    EXPECT_NE(text.find("direct conv"), std::string::npos) << text;
    auto s3 = schedule("spatial(1, 3, 2) * repeat(1, 2, 16)");
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,4,5,5]"), in("f32[6,4,1,1]")}, {}, 1, {0, &s3, &text}), "");
    EXPECT_NE(text.find("pointwise conv as matmul"), std::string::npos) << text;
    // Depthwise with rows split into partial tiles.
    auto sd = schedule("spatial(1, 4, 3, 2) * repeat(1, 1, 3, 3)");
    EXPECT_EQ(heavyCheck("Conv", {in("f32[1,4,7,6]"), in("f32[4,1,3,3]")}, {{"group", I(4)}, {"pads", Is({1, 1, 1, 1})}}, 1,
                         {0, &sd}), "");
}

TEST(LowerHeavy, Pooling) {
    EXPECT_EQ(heavyCheck("MaxPool", {in("f32[1,2,7,7]")}, {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}}), "");
    EXPECT_EQ(heavyCheck("MaxPool", {in("f32[2,3,8,9]")},
                         {{"kernel_shape", Is({3, 2})}, {"pads", Is({1, 1, 1, 0})}, {"dilations", Is({2, 1})}}), "");
    EXPECT_EQ(heavyCheck("MaxPool", {in("f32[1,2,8,8]")}, {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}, {"ceil_mode", I(1)}}), "");
    EXPECT_EQ(heavyCheck("MaxPool", {in("f32[1,2,7]")}, {{"kernel_shape", Is({2})}, {"auto_pad", S("SAME_UPPER")}}), "");
    for (int include : {0, 1}) {
        SCOPED_TRACE(include);
        EXPECT_EQ(heavyCheck("AveragePool", {in("f32[1,2,7,7]")},
                             {{"kernel_shape", Is({3, 3})}, {"pads", Is({1, 1, 1, 1})}, {"count_include_pad", I(include)}}), "");
        EXPECT_EQ(heavyCheck("AveragePool", {in("f32[1,2,8,8]")},
                             {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}, {"pads", Is({1, 1, 0, 0})},
                              {"ceil_mode", I(1)}, {"count_include_pad", I(include)}}), "");
        EXPECT_EQ(heavyCheck("AveragePool", {in("f32[1,1,9,9]")},
                             {{"kernel_shape", Is({2, 3})}, {"dilations", Is({2, 2})}, {"pads", Is({2, 1, 0, 2})},
                              {"count_include_pad", I(include)}}), "");
    }
    EXPECT_EQ(heavyCheck("AveragePool", {in("f32[1,2,6,6,6]")}, {{"kernel_shape", Is({2, 2, 2})}, {"auto_pad", S("SAME_LOWER")}}), "");
    EXPECT_EQ(heavyCheck("GlobalAveragePool", {in("f32[2,3,7,7]")}), "");
    EXPECT_EQ(heavyCheck("GlobalAveragePool", {in("f32[1,4,5]")}), "");
    EXPECT_EQ(heavyCheck("GlobalMaxPool", {in("f32[2,3,6,7]")}), "");
}

TEST(LowerHeavy, Reductions) {
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSumExp"}) {
        SCOPED_TRACE(op);
        EXPECT_EQ(heavyCheck(op, {in("f32[3,4,40]")}, {{"axes", Is({-1})}}), "");                       // innermost, lanes
        EXPECT_EQ(heavyCheck(op, {in("f32[3,4,5]")}, {{"axes", Is({1})}, {"keepdims", I(0)}}), "");     // innermost kept
        EXPECT_EQ(heavyCheck(op, {in("f32[3,4,5]")}, {{"axes", Is({0, 2})}}), "");
        EXPECT_EQ(heavyCheck(op, {in("f32[3,4,5]")}, {{"keepdims", I(0)}}), "");                         // all axes
    }
    // Axes as a constant input (ReduceSum opset 13, the others opset 18), noop_with_empty_axes.
    EXPECT_EQ(heavyCheck("ReduceSum", {in("f32[3,4,5]"), ints({0, -1})}, {{"keepdims", I(0)}}), "");
    EXPECT_EQ(heavyCheck("ReduceMax", {in("f32[3,4,5]"), ints({1})}), "");
    EXPECT_EQ(heavyCheck("ReduceSum", {in("f32[3,4]")}, {{"noop_with_empty_axes", I(1)}}), "");
    EXPECT_EQ(heavyCheck("ReduceMean", {in("f32[2,300]")}, {{"axes", Is({0})}}), "");
    EXPECT_EQ(heavyCheck("ReduceSum", {in("i32[3,4]")}, {{"axes", Is({1})}}), "");
}

TEST(LowerHeavy, LogSumExpDoesNotOverflow) {
    // log(sum(exp(x))) in f32 overflowed for any x > 88.7: [100, 90, -5] gave inf, not 100.000046.
    // Rows with -inf, +inf and equal values; short rows, 16-lane rows (40) and the kept-innermost
    // form; both targets, against the reference interpreter (double).
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> rows = {100, 90, -5, -1e4f, 1, 2, 3, 4, -inf, -inf, -inf, -inf,
                                     -inf, 7, -inf, 7,    inf, 1, -inf, 2, 500, 500, 500, 500};
    EXPECT_EQ(heavyCheck("ReduceLogSumExp", {floats(rows, {6, 4})}, {{"axes", Is({-1})}}), "");
    EXPECT_EQ(heavyCheck("ReduceLogSumExp", {floats(rows, {6, 4})}, {{"axes", Is({0})}}), "");
    std::vector<float> big(3 * 40);
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = 80.0f + static_cast<float>(i % 37);
    EXPECT_EQ(heavyCheck("ReduceLogSumExp", {floats(big, {3, 40})}, {{"axes", Is({-1})}}), "");
    // And the value itself (the reference, which the kernels matched above): 100 + log(1 + e^-10 + e^-105).
    auto one = runOne("ReduceLogSumExp", {floats({100, 90, -5}, {1, 3})}, {{"axes", Is({-1})}});
    ASSERT_EQ(one.error(), "");
    one.g.outputs().push_back(one.g.node(0).outputs[0]);
    const auto r = eval::evaluate(one.g, {});
    ASSERT_TRUE(r.ok());
    EXPECT_NEAR((*r)[0].toDoubles()[0], 100.0000454, 1e-6);
}

TEST(LowerHeavy, ElementwiseAtTheEdgesOfTheRange) {
    // f32 cosh(89) = 2.2e38 fits although e^89 does not; Softplus(1000) = 1000; NaN stays NaN
    // through Sign, Relu and Celu (as in NumPy and ONNX Runtime). Kernel (both targets) against the
    // reference, then the reference's own values.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const char* op : {"Cosh", "Sinh"}) {
        SCOPED_TRACE(op);
        EXPECT_EQ(heavyCheck(op, {floats({-89.0f, 89.0f, 88.8f, -0.3f, 0.0f, 1e-3f}, {6})}), "");
    }
    EXPECT_EQ(heavyCheck("Softplus", {floats({1000.0f, -1000.0f, 0.0f, 20.0f, -20.0f}, {5})}), "");
    for (const char* op : {"Sign", "Relu", "Celu"}) {
        SCOPED_TRACE(op);
        EXPECT_EQ(heavyCheck(op, {floats({nan, -1.5f, 2.0f, 0.0f}, {4})}), "");
    }
    auto value = [](const char* op, float x) {
        auto one = runOne(op, {floats({x}, {1})});
        one.g.outputs().push_back(one.g.node(0).outputs[0]);
        const auto r = eval::evaluate(one.g, {});
        return r.ok() ? (*r)[0].toDoubles()[0] : -12345.0;
    };
    EXPECT_NEAR(value("Softplus", 1000.0f), 1000.0, 1e-9);
    EXPECT_NEAR(value("Cosh", 89.0f) / 2.2448064e38, 1.0, 1e-6);  // math.cosh(89)
    EXPECT_TRUE(std::isnan(value("Sign", nan)));
    EXPECT_TRUE(std::isnan(value("Relu", nan)));
    EXPECT_TRUE(std::isnan(value("Celu", nan)));
}

TEST(LowerHeavy, ArgMinMax) {
    for (const char* op : {"ArgMax", "ArgMin"}) {
        SCOPED_TRACE(op);
        EXPECT_EQ(heavyCheck(op, {in("f32[3,4,5]")}, {{"axis", I(1)}}), "");
        EXPECT_EQ(heavyCheck(op, {in("f32[3,4,5]")}, {{"axis", I(-1)}, {"keepdims", I(0)}}), "");
        EXPECT_EQ(heavyCheck(op, {in("i32[6,7]")}, {{"axis", I(0)}, {"select_last_index", I(1)}}), "");
    }
}

TEST(LowerHeavy, SoftmaxAndNormalisation) {
    for (const char* op : {"Softmax", "LogSoftmax"}) {
        SCOPED_TRACE(op);
        EXPECT_EQ(heavyCheck(op, {in("f32[3,50]")}), "");
        EXPECT_EQ(heavyCheck(op, {in("f32[2,5,7]")}, {{"axis", I(1)}}), "");
        EXPECT_EQ(heavyCheck(op, {in("f32[2,5,7]")}, {{"axis", I(-3)}}), "");
        CheckOptions legacy;
        legacy.opset = 11;
        EXPECT_EQ(heavyCheck(op, {in("f32[2,5,7]")}, {{"axis", I(1)}}, 1, legacy), "");
        EXPECT_EQ(heavyCheck(op, {in("f32[2,5,7]")}, {}, 1, legacy), "");
    }
    EXPECT_EQ(heavyCheck("LayerNormalization", {in("f32[3,40]"), in("f32[40]"), in("f32[40]")}), "");
    EXPECT_EQ(heavyCheck("LayerNormalization", {in("f32[2,3,4]"), in("f32[3,4]")}, {{"axis", I(1)}, {"epsilon", F(1e-3)}}, 3), "");
    // Variance must be positive: a constant.
    EXPECT_EQ(heavyCheck("BatchNormalization", {in("f32[2,3,4,5]"), in("f32[3]"), in("f32[3]"), in("f32[3]"),
                                                ir::test::floats({0.5f, 1.0f, 2.5f}, {3})}, {{"epsilon", F(1e-3)}}), "");
    EXPECT_EQ(heavyCheck("BatchNormalization", {in("f32[2,3]"), in("f32[3]"), in("f32[3]"), in("f32[3]"),
                                                ir::test::floats({0.5f, 1.0f, 2.5f}, {3})}), "");
}

}  // namespace
}  // namespace tessera::lower::test

namespace tessera::lower::test {
namespace {

std::string kernelText(const std::string& op, const std::vector<ir::test::In>& ins, const Attrs& attrs = {}) {
    std::string text;
    CheckOptions co;
    co.kernelText = &text;
    const std::string problems = heavyCheck(op, ins, attrs, 1, co);
    EXPECT_EQ(problems, "") << op;
    return text;
}

TEST(LowerHeavyGolden, TinyKernels) {
    tessera::test::checkGolden("lower/heavy_matmul_tiny.txt", kernelText("MatMul", {in("f32[2,3]"), in("f32[3,4]")}));
    tessera::test::checkGolden("lower/heavy_gemm_transb_tiny.txt",
                               kernelText("Gemm", {in("f32[1,20]"), in("f32[3,20]"), in("f32[3]")}, {{"transB", I(1)}}));
    tessera::test::checkGolden("lower/heavy_conv_pointwise_tiny.txt",
                               kernelText("Conv", {in("f32[1,3,2,2]"), in("f32[2,3,1,1]"), in("f32[2]")}));
    tessera::test::checkGolden("lower/heavy_conv_depthwise_tiny.txt",
                               kernelText("Conv", {in("f32[1,2,4,4]"), in("f32[2,1,3,3]")},
                                          {{"group", I(2)}, {"pads", Is({1, 1, 1, 1})}}));
    tessera::test::checkGolden("lower/heavy_conv_direct_tiny.txt",
                               kernelText("Conv", {in("f32[1,2,5]"), in("f32[3,2,3]")}, {{"strides", Is({2})}, {"pads", Is({1, 1})}}));
}

}  // namespace
}  // namespace tessera::lower::test

namespace tessera::lower::test {
namespace {

/// Global bytes a lowered one-node kernel loads and stores when run.
EvalStats traffic(const std::string& op, const std::vector<ir::test::In>& ins, const Attrs& attrs = {}) {
    auto r = runOne(op, ins, attrs);
    EXPECT_EQ(r.error(), "");
    auto lk = lowerNode(r.g, 0, nullptr);
    EXPECT_TRUE(lk.ok());
    if (!lk) return {};
    std::vector<ir::TensorData> storage;
    for (ir::ValueId v : lk->inputs) {
        const auto dims = r.g.value(v).type.shape.knownDims().value_or(std::vector<std::int64_t>{});
        storage.push_back(makeData(r.g.value(v).type.dtype, dims));
    }
    storage.emplace_back();
    std::vector<ir::TensorData*> params;
    for (auto& t : storage) params.push_back(&t);
    EvalOptions eo;
    eo.countOps = true;
    auto st = evalKernel(lk->kernel, params, eo);
    EXPECT_TRUE(st.ok());
    return st ? *st : EvalStats{};
}

TEST(LowerHeavyTraffic, TiledKernelsLoadEachOperandOncePerTile) {
    // MatMul 16x32 * 32x64, tiles 8x64: A read once (one tile column); the B row of step k is
    // issued once per accumulator row (8) of each tile row (2) in the IR; the C++ compiler keeps
    // it in registers across the unrolled rows (staging it in a Local measured slower).
    auto mm = traffic("MatMul", {in("f32[16,32]"), in("f32[32,64]")});
    EXPECT_EQ(mm.loadBytes, (16 * 32 + 2 * 8 * 32 * 64) * 4);
    EXPECT_EQ(mm.storeBytes, 16 * 64 * 4);
    EXPECT_EQ(mm.flops, 2.0 * 16 * 32 * 64);
    // Pointwise conv 8 -> 16 channels on 8x8: X per accumulator row (8) of each 8-channel tile
    // (2), W once per hw tile (1).
    auto pw = traffic("Conv", {in("f32[1,8,8,8]"), in("f32[16,8,1,1]")});
    EXPECT_EQ(pw.loadBytes, (2 * 8 * 8 * 64 + 16 * 8) * 4);
    EXPECT_EQ(pw.storeBytes, 16 * 64 * 4);
    // Depthwise 3x3 stride 1 without padding on 6x6 -> 4x4 (narrow: staged form): per channel the
    // tile's 6x6 input rows are staged once; the 9 weights are read inside the pixel loop (32
    // lanes: 3 * 6 + 4 rounded up to 16), where the C++ compiler hoists them as loop invariants.
    auto dw = traffic("Conv", {in("f32[1,2,6,6]"), in("f32[2,1,3,3]")}, {{"group", I(2)}});
    EXPECT_EQ(dw.loadBytes, 2 * (6 * 6 + 9 * 32) * 4);
    EXPECT_EQ(dw.storeBytes, 2 * 16 * 4);
}

}  // namespace
}  // namespace tessera::lower::test
