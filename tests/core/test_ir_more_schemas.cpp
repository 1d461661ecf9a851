// Schemas for the ONNX ops that had code generators and reference implementations but no registry
// entry: Celu, Cosh, Sinh, Tan, IsInf, IsNaN, Mish, Range, ReduceL1, ReduceLogSum,
// ReduceLogSumExp, ReduceSumSquare, Round, Shrink, Sign, Softsign, ThresholdedRelu.
// Expected types and FLOP counts are worked out by hand from the ONNX operator specs and the
// FLOP conventions in core/ir/ops/*.cpp; the arithmetic is next to each value.

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/ir/verifier.h"
#include "tests/core/test_ir_helpers.h"

using namespace tessera::ir;
using namespace tessera::ir::test;

namespace {

Attribute I(std::int64_t v) { return Attribute::ofInt(v); }
Attribute Is(std::vector<std::int64_t> v) { return Attribute::ofInts(std::move(v)); }
Attribute F(double v) { return Attribute::ofFloat(v); }

/// A rank-0 constant of element type `dt` (I32, I64, F32 or F64) holding v.
In scalar(DType dt, double v) {
    auto d = std::make_shared<TensorData>();
    d->dtype = dt;
    d->bytes.resize(dtypeSize(dt));
    if (dt == DType::I32) {
        const auto x = static_cast<std::int32_t>(v);
        std::memcpy(d->bytes.data(), &x, sizeof x);
    } else if (dt == DType::I64) {
        const auto x = static_cast<std::int64_t>(v);
        std::memcpy(d->bytes.data(), &x, sizeof x);
    } else if (dt == DType::F32) {
        const auto x = static_cast<float>(v);
        std::memcpy(d->bytes.data(), &x, sizeof x);
    } else {
        std::memcpy(d->bytes.data(), &v, sizeof v);
    }
    return In{d->type(), d, false};
}

const OpSchema& schema(const char* op) {
    const OpSchema* s = OpRegistry::instance().find("", op);
    EXPECT_NE(s, nullptr) << op;
    static const OpSchema kNone;
    return s ? *s : kNone;
}

/// Default of attribute `name` as a string ("1" / "0.5"), "<none>" when absent or without default.
std::string defaultOf(const char* op, const char* name) {
    const AttrSchema* a = schema(op).findAttr(name);
    if (!a || !a->defaultValue) return "<none>";
    if (a->type == AttrType::Int) return "i:" + std::to_string(a->defaultValue->i);
    if (a->type == AttrType::Float) return "f:" + std::to_string(a->defaultValue->f);
    return "?";
}

}  // namespace

// ------------------------------------------------------------------------------ registry entries

TEST(IrMoreSchemas, EveryNewOpIsRegisteredWithItsArityAndCategory) {
    for (const char* op : {"Celu", "Cosh", "Sinh", "Tan", "IsInf", "IsNaN", "Mish", "Round", "Shrink", "Sign", "Softsign",
                           "ThresholdedRelu"}) {
        const OpSchema& s = schema(op);
        EXPECT_EQ(s.opType, op);
        EXPECT_EQ(s.category, OpCategory::Elementwise) << op;
        EXPECT_EQ(s.minInputs, 1) << op;
        EXPECT_EQ(s.maxInputs, 1) << op;
        EXPECT_EQ(s.minOutputs, 1) << op;
        EXPECT_EQ(s.maxOutputs, 1) << op;
        EXPECT_TRUE(s.injective) << op;
    }
    for (const char* op : {"ReduceL1", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
        const OpSchema& s = schema(op);
        EXPECT_EQ(s.category, OpCategory::Reduction) << op;
        EXPECT_EQ(s.minInputs, 1) << op;
        EXPECT_EQ(s.maxInputs, 2) << op;
        EXPECT_FALSE(s.injective) << op;
        ASSERT_NE(s.findAttr("axes"), nullptr) << op;
        EXPECT_EQ(s.findAttr("axes")->type, AttrType::Ints) << op;
        EXPECT_EQ(defaultOf(op, "keepdims"), "i:1") << op;
        EXPECT_EQ(defaultOf(op, "noop_with_empty_axes"), "i:0") << op;
    }
    const OpSchema& range = schema("Range");
    EXPECT_EQ(range.minInputs, 3);
    EXPECT_EQ(range.maxInputs, 3);
    EXPECT_TRUE(range.attributes.empty());
}

TEST(IrMoreSchemas, AttributeDefaultsFollowTheOnnxSpec) {
    EXPECT_EQ(defaultOf("Celu", "alpha"), "f:1.000000");
    EXPECT_EQ(defaultOf("ThresholdedRelu", "alpha"), "f:1.000000");
    EXPECT_EQ(defaultOf("Shrink", "lambd"), "f:0.500000");
    EXPECT_EQ(defaultOf("Shrink", "bias"), "f:0.000000");
    EXPECT_EQ(defaultOf("IsInf", "detect_negative"), "i:1");
    EXPECT_EQ(defaultOf("IsInf", "detect_positive"), "i:1");
    for (const char* op : {"Cosh", "Sinh", "Tan", "IsNaN", "Mish", "Round", "Sign", "Softsign"})
        EXPECT_TRUE(schema(op).attributes.empty()) << op;
}

TEST(IrMoreSchemas, WrongAttributeTypeIsAVerifierError) {
    Builder b;
    b.input("x", "f32[4]");
    b.node("Celu", "celu", {"x"}, {"y"}, {{"alpha", I(2)}});
    b.output("y");
    const auto d = verify(b.g, "m.onnx");
    const auto* e = d.firstError();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->message, "attribute 'alpha' must be float, got int");
}

// ------------------------------------------------------------------------------ elementwise

TEST(IrMoreSchemas, FloatUnaryOpsKeepTypeAndRejectIntegers) {
    for (const char* op : {"Celu", "Cosh", "Sinh", "Tan", "Mish", "Round", "Softsign", "ThresholdedRelu"}) {
        auto r = runOne(op, {in("f32[2,N,3]")});
        EXPECT_EQ(r.error(), "") << op;
        EXPECT_EQ(r.out(), "f32[2,N,3]") << op;
        EXPECT_EQ(runOne(op, {in("f16[5]")}).out(), "f16[5]") << op;
        EXPECT_EQ(runOne(op, {in("f64[*]")}).out(), "f64[*]") << op;
        EXPECT_EQ(runOne(op, {in("i32[4]")}).error(), "input 0 ('x0') is i32[4]: a floating-point element type is required")
            << op;
    }
}

TEST(IrMoreSchemas, SignAndShrinkAcceptIntegers) {
    EXPECT_EQ(runOne("Sign", {in("i32[4,2]")}).out(), "i32[4,2]");
    EXPECT_EQ(runOne("Sign", {in("f32[3]")}).out(), "f32[3]");
    EXPECT_EQ(runOne("Shrink", {in("i8[7]")}, {{"lambd", F(1.5)}, {"bias", F(1.5)}}).out(), "i8[7]");
    EXPECT_EQ(runOne("Shrink", {in("bf16[2,2]")}).out(), "bf16[2,2]");
    EXPECT_NE(runOne("Sign", {in("bool[4]")}).error().find("a numeric element type is required"), std::string::npos);
    EXPECT_NE(runOne("Shrink", {in("string[4]")}).error().find("a numeric element type is required"), std::string::npos);
}

TEST(IrMoreSchemas, IsNaNAndIsInfGiveBool) {
    EXPECT_EQ(runOne("IsNaN", {in("f32[2,3]")}).out(), "bool[2,3]");
    EXPECT_EQ(runOne("IsNaN", {in("f16[B,?]")}).out(), "bool[B,?]");
    EXPECT_EQ(runOne("IsInf", {in("f64[4]")}).out(), "bool[4]");
    EXPECT_EQ(runOne("IsInf", {in("f32[]")}, {{"detect_negative", I(0)}}).out(), "bool[]");
    EXPECT_EQ(runOne("IsInf", {in("f32[*]")}).out(), "bool[*]");
    EXPECT_EQ(runOne("IsNaN", {in("i64[4]")}).error(), "input 0 ('x0') is i64[4]: a floating-point element type is required");
    EXPECT_EQ(runOne("IsInf", {in("i32[4]")}).error(), "input 0 ('x0') is i32[4]: a floating-point element type is required");
}

TEST(IrMoreSchemas, ElementwiseFlops) {
    // N = 2 * 3 * 4 = 24 output elements.
    const std::vector<std::pair<const char*, std::int64_t>> perElement = {
        {"Tan", 1},  {"Sinh", 1},  {"Cosh", 1},     {"Round", 1}, {"Sign", 1},  {"ThresholdedRelu", 1},
        {"IsNaN", 1}, {"IsInf", 1}, {"Softsign", 3}, {"Mish", 3},  {"Shrink", 3}, {"Celu", 4},
    };
    for (const auto& [op, k] : perElement) {
        auto r = runOne(op, {in("f32[2,3,4]")});
        ASSERT_TRUE(r.flops.has_value()) << op;
        EXPECT_EQ(*r.flops, 24 * k) << op;
    }
    EXPECT_FALSE(runOne("Tan", {in("f32[2,N]")}).flops.has_value());
}

// ------------------------------------------------------------------------------ reductions

TEST(IrMoreSchemas, ReduceOpsLikeReduceSum) {
    for (const char* op : {"ReduceL1", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
        // opset < 18: axes attribute.
        EXPECT_EQ(runOne(op, {in("f32[2,3,4]")}, {{"axes", Is({1})}}).out(), "f32[2,1,4]") << op;
        EXPECT_EQ(runOne(op, {in("f32[2,3,4]")}, {{"axes", Is({-1})}, {"keepdims", I(0)}}).out(), "f32[2,3]") << op;
        EXPECT_EQ(runOne(op, {in("f32[2,3,4]")}, {{"axes", Is({-3, 2})}}).out(), "f32[1,3,1]") << op;
        // opset >= 18: axes input (negative axes, keepdims=0).
        EXPECT_EQ(runOne(op, {in("f32[2,3,4]"), ints({-2, 0})}, {{"keepdims", I(0)}}).out(), "f32[4]") << op;
        EXPECT_EQ(runOne(op, {in("f16[2,S,4]"), ints({2})}).out(), "f16[2,S,1]") << op;
        // No axes: every axis.
        EXPECT_EQ(runOne(op, {in("f32[2,3,4]")}).out(), "f32[1,1,1]") << op;
        EXPECT_EQ(runOne(op, {in("f32[2,3,4]")}, {{"keepdims", I(0)}}).out(), "f32[]") << op;
        // Empty axes with noop_with_empty_axes=1: identity, 0 FLOPs.
        auto noop = runOne(op, {in("f32[2,3,4]"), ints({})}, {{"noop_with_empty_axes", I(1)}});
        EXPECT_EQ(noop.out(), "f32[2,3,4]") << op;
        ASSERT_TRUE(noop.flops.has_value()) << op;
        EXPECT_EQ(*noop.flops, 0) << op;
        // Axes not constant: extents unknown (rank kept with keepdims).
        EXPECT_EQ(runOne(op, {in("f32[2,1,4]"), in("i64[1]")}).out(), "f32[?,1,?]") << op;
        EXPECT_EQ(runOne(op, {in("f32[2,1,4]"), in("i64[1]")}, {{"keepdims", I(0)}}).out(), "f32[*]") << op;
        // Integer inputs keep their type (ReduceSumSquare and ReduceL1 are defined for int32/int64).
        EXPECT_EQ(runOne(op, {in("i64[5,6]"), ints({1})}, {{"keepdims", I(0)}}).out(), "i64[5]") << op;
        // Errors.
        EXPECT_EQ(runOne(op, {in("f32[2,3]")}, {{"axes", Is({2})}}).error(), "axis 2 is out of range for rank 2") << op;
        EXPECT_EQ(runOne(op, {in("f32[2,3]"), ints({1, -1})}).error(), "axis -1 is repeated") << op;
        // FLOPs: 1 per input element, as ReduceSum: 2 * 3 * 4 = 24.
        auto r = runOne(op, {in("f32[2,3,4]"), ints({1})});
        ASSERT_TRUE(r.flops.has_value()) << op;
        EXPECT_EQ(*r.flops, 24) << op;
        EXPECT_EQ(*r.flops, *runOne("ReduceSum", {in("f32[2,3,4]"), ints({1})}).flops) << op;
    }
}

// ------------------------------------------------------------------------------ Range

TEST(IrMoreSchemas, RangeWithConstantInputs) {
    // ceil((10 - 0) / 3) = ceil(3.33) = 4
    auto r = runOne("Range", {scalar(DType::I64, 0), scalar(DType::I64, 10), scalar(DType::I64, 3)});
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(), "i64[4]");
    ASSERT_TRUE(r.flops.has_value());
    EXPECT_EQ(*r.flops, 8);  // 2 per element (start + i * delta)
    // ceil((0 - 10) / -3) = ceil(3.33) = 4
    EXPECT_EQ(runOne("Range", {scalar(DType::I32, 10), scalar(DType::I32, 0), scalar(DType::I32, -3)}).out(), "i32[4]");
    // ceil((9 - 0) / 3) = 3 exactly
    EXPECT_EQ(runOne("Range", {scalar(DType::I32, 0), scalar(DType::I32, 9), scalar(DType::I32, 3)}).out(), "i32[3]");
    // ceil((1 - 5) / 2) = -2 -> max(-2, 0) = 0
    EXPECT_EQ(runOne("Range", {scalar(DType::I64, 5), scalar(DType::I64, 1), scalar(DType::I64, 2)}).out(), "i64[0]");
    // ceil((2 - 1) / 0.3) = ceil(3.33) = 4
    EXPECT_EQ(runOne("Range", {scalar(DType::F32, 1), scalar(DType::F32, 2), scalar(DType::F32, 0.3)}).out(), "f32[4]");
    // ceil((1 - 0) / 0.25) = 4 exactly
    EXPECT_EQ(runOne("Range", {scalar(DType::F64, 0), scalar(DType::F64, 1), scalar(DType::F64, 0.25)}).out(), "f64[4]");
    // ceil((-1 - 2.5) / -0.5) = 7
    EXPECT_EQ(runOne("Range", {scalar(DType::F32, 2.5), scalar(DType::F32, -1), scalar(DType::F32, -0.5)}).out(),
              "f32[7]");
    // One-element 1-D tensors are accepted as scalars: ceil((7 - 1) / 2) = 3
    EXPECT_EQ(runOne("Range", {ints({1}), ints({7}), ints({2})}).out(), "i64[3]");
}

TEST(IrMoreSchemas, RangeFromConstantNodes) {
    Builder b;
    b.node("Constant", "c0", {}, {"start"}, {{"value_int", I(-4)}});
    b.node("Constant", "c1", {}, {"limit"}, {{"value_int", I(4)}});
    b.node("Constant", "c2", {}, {"delta"}, {{"value_int", I(1)}});
    b.node("Range", "r", {"start", "limit", "delta"}, {"y"});
    b.output("y");
    const auto res = inferShapes(b.g, "m.onnx");
    EXPECT_EQ(res.diagnostics.firstError(), nullptr);
    EXPECT_EQ(b.type("y").str(), "i64[8]");  // ceil((4 - -4) / 1) = 8
}

TEST(IrMoreSchemas, RangeWithRuntimeInputsHasUnknownLength) {
    EXPECT_EQ(runOne("Range", {in("i32[]"), in("i32[]"), in("i32[]")}).out(), "i32[?]");
    EXPECT_EQ(runOne("Range", {scalar(DType::F32, 0), in("f32[]"), scalar(DType::F32, 1)}).out(), "f32[?]");
    EXPECT_EQ(runOne("Range", {in("i64[*]"), scalar(DType::I64, 3), scalar(DType::I64, 1)}).out(), "i64[?]");
    EXPECT_FALSE(runOne("Range", {in("i32[]"), in("i32[]"), in("i32[]")}).flops.has_value());
}

TEST(IrMoreSchemas, RangeErrors) {
    EXPECT_EQ(runOne("Range", {scalar(DType::I64, 0), scalar(DType::I64, 4), scalar(DType::I64, 0)}).error(),
              "delta must not be 0");
    EXPECT_EQ(runOne("Range", {scalar(DType::F32, 0), scalar(DType::F32, 4), scalar(DType::F32, 0)}).error(),
              "delta must not be 0");
    EXPECT_EQ(runOne("Range", {in("i64[2]"), scalar(DType::I64, 4), scalar(DType::I64, 1)}).error(),
              "start must be a scalar, got shape [2]");
    EXPECT_EQ(runOne("Range", {in("f32[]"), in("i64[]"), in("f32[]")}).error(),
              "input 0 ('x0') is f32[] but input 1 ('x1') is i64[]: they must have one element type (insert a Cast)");
    EXPECT_EQ(runOne("Range", {in("bool[]"), in("bool[]"), in("bool[]")}).error(),
              "input 0 ('x0') is bool[]: a numeric element type is required");
    // More than 2^40 elements: absurd.
    EXPECT_EQ(runOne("Range", {scalar(DType::I64, 0), scalar(DType::I64, 9e18), scalar(DType::I64, 1)}).error(),
              "(limit - start) / delta is too large");
    EXPECT_EQ(runOne("Range", {scalar(DType::I64, -9e18), scalar(DType::I64, 9e18), scalar(DType::I64, 1)}).error(),
              "(limit - start) / delta is too large");
}
