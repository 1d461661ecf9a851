// Elementwise lowering templates: each op lowered, run by the kernel-IR interpreter and compared
// with the reference interpreter (or, for ops the reference does not implement, with a formula).

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <functional>

#include "core/test_ir_helpers.h"
#include "lower/test_lower_basic_util.h"

namespace tessera::lower::test {
namespace {

using ir::Attribute;
using ir::test::Attrs;
using ir::test::in;
using ir::test::runOne;

/// One-node graph of `op`; every input random; checked against the reference interpreter.
std::string refCheck(const std::string& op, const std::vector<ir::test::In>& ins, const Attrs& attrs = {},
                     int outputs = 1) {
    auto r = runOne(op, ins, attrs, outputs);
    if (!r.error().empty()) return "shape inference: " + r.error();
    return checkAgainstReference(r.g, makeInputs(r.g));
}

TEST(LowerElementwise, UnaryOpsMatchReference) {
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Neg", "Abs", "Reciprocal", "Floor",
                           "Ceil", "Sin", "Cos", "Softplus", "HardSwish", "Identity"}) {
        SCOPED_TRACE(op);
        EXPECT_EQ(refCheck(op, {in("f32[3,5,7]")}), "");
    }
    EXPECT_EQ(refCheck("Relu", {in("i32[4,6]")}), "");
    EXPECT_EQ(refCheck("Abs", {in("i64[9]")}), "");
    EXPECT_EQ(refCheck("Neg", {in("f64[2,3]")}), "");
    EXPECT_EQ(refCheck("Sigmoid", {in("f16[4,4]")}), "");
}

TEST(LowerElementwise, AttributeOpsMatchReference) {
    EXPECT_EQ(refCheck("LeakyRelu", {in("f32[2,33]")}, {{"alpha", Attribute::ofFloat(0.3)}}), "");
    EXPECT_EQ(refCheck("Elu", {in("f32[2,33]")}, {{"alpha", Attribute::ofFloat(0.7)}}), "");
    EXPECT_EQ(refCheck("HardSigmoid", {in("f32[40]")}, {{"alpha", Attribute::ofFloat(0.3)}, {"beta", Attribute::ofFloat(0.4)}}), "");
    EXPECT_EQ(refCheck("Gelu", {in("f32[5,8]")}), "");
    EXPECT_EQ(refCheck("Gelu", {in("f32[5,8]")}, {{"approximate", Attribute::ofString("tanh")}}), "");
    EXPECT_EQ(refCheck("Clip", {in("f32[5,8]")}, {{"min", Attribute::ofFloat(-0.5)}, {"max", Attribute::ofFloat(1.0)}}), "");
    EXPECT_EQ(refCheck("Clip", {in("f32[5,8]"), ir::test::floats({0.0f}, {}), ir::test::floats({6.0f}, {})}), "");
    EXPECT_EQ(refCheck("Clip", {in("f32[5,8]"), ir::test::absent(), ir::test::floats({0.25f}, {})}), "");
    EXPECT_EQ(refCheck("Clip", {in("f32[5,8]")}), "");
    // Runtime (non-constant) bounds become scalar kernel parameters.
    EXPECT_EQ(refCheck("Clip", {in("f32[5,8]"), in("f32[]"), in("f32[]")}), "");
}

TEST(LowerElementwise, BinaryOpsBroadcastAndMatchReference) {
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "Greater", "LessOrEqual",
                           "GreaterOrEqual"}) {
        SCOPED_TRACE(op);
        EXPECT_EQ(refCheck(op, {in("f32[2,3,4]"), in("f32[3,1]")}), "");
        EXPECT_EQ(refCheck(op, {in("f32[1,4]"), in("f32[3,1]")}), "");
        EXPECT_EQ(refCheck(op, {in("f32[]"), in("f32[5]")}), "");
    }
    for (const char* op : {"Add", "Sub", "Mul", "Less", "Equal"}) {
        SCOPED_TRACE(op);
        EXPECT_EQ(refCheck(op, {in("i64[3,4]"), in("i64[4]")}), "");
    }
    for (const char* op : {"Sum", "Mean", "Min", "Max"}) {
        SCOPED_TRACE(op);
        EXPECT_EQ(refCheck(op, {in("f32[2,3]"), in("f32[3]"), in("f32[2,1]")}), "");
        EXPECT_EQ(refCheck(op, {in("f32[4]")}), "");
    }
    EXPECT_EQ(refCheck("Where", {in("bool[2,3]"), in("f32[3]"), in("f32[2,1]")}), "");
    EXPECT_EQ(refCheck("Mul", {in("f16[2,3]"), in("f16[2,3]")}), "");
}

TEST(LowerElementwise, IntegerDivTruncatesTowardZero) {
    ir::test::Builder b;
    b.input("a", "i32[6]");
    b.input("d", "i32[6]");
    b.node("Div", "div", {"a", "d"}, {"q"});
    b.output("q");
    ASSERT_FALSE(ir::inferShapes(b.g, "t").diagnostics.hasErrors());
    auto lk = lowerNode(b.g, 0, nullptr);
    ASSERT_TRUE(lk.ok());
    ir::TensorData a = makeData(ir::DType::I32, {6}), d = a, q;
    const std::int32_t av[6] = {7, -7, 7, -7, 0, 9}, dv[6] = {2, 2, -2, -2, 3, 3};
    std::memcpy(a.bytes.data(), av, sizeof av);
    std::memcpy(d.bytes.data(), dv, sizeof dv);
    ASSERT_TRUE(evalKernel(lk->kernel, {&a, &d, &q}).ok());
    EXPECT_EQ(q.toInts(), (std::vector<std::int64_t>{3, -3, -3, 3, 0, 3}));
}

/// Runs a one-input (or two-input) op on the given values and returns the output as doubles.
std::vector<double> runValues(const std::string& op, const std::string& type, const std::vector<double>& xs,
                              const Attrs& attrs = {}, const std::vector<double>& ys = {}) {
    std::vector<ir::test::In> ins{in(type)};
    if (!ys.empty()) ins.push_back(in(type));
    auto r = runOne(op, ins, attrs);
    EXPECT_EQ(r.error(), "");
    ir::Value& yv = r.g.value(r.g.node(0).outputs[0]);
    if (!yv.type.shape.isStatic()) {
        // Ops the registry does not know (Round, Sign ...) get no inferred type: set it here.
        yv.type = r.g.value(r.g.node(0).inputs[0]).type;
        if (op == "IsNaN" || op == "IsInf") yv.type.dtype = ir::DType::Bool;
    }
    auto lk = lowerNode(r.g, 0, nullptr);
    EXPECT_TRUE(lk.ok()) << (lk.ok() ? "" : lk.diagnostics().firstError()->format());
    if (!lk.ok()) return {};
    const ir::DType dt = r.g.value(r.g.node(0).inputs[0]).type.dtype;
    auto fill = [&](const std::vector<double>& v) {
        ir::TensorData t = makeData(dt, {static_cast<std::int64_t>(v.size())});
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (dt == ir::DType::F32) { float f = static_cast<float>(v[i]); std::memcpy(t.bytes.data() + 4 * i, &f, 4); }
            else if (dt == ir::DType::I64) { auto k = static_cast<std::int64_t>(v[i]); std::memcpy(t.bytes.data() + 8 * i, &k, 8); }
            else if (dt == ir::DType::Bool) t.bytes[i] = v[i] != 0 ? 1 : 0;
        }
        return t;
    };
    ir::TensorData x = fill(xs), y = ys.empty() ? ir::TensorData{} : fill(ys), out;
    std::vector<ir::TensorData*> params{&x};
    if (!ys.empty()) params.push_back(&y);
    params.push_back(&out);
    auto st = evalKernel(lk->kernel, params);
    EXPECT_TRUE(st.ok());
    return out.toDoubles();
}

TEST(LowerElementwise, OpsWithoutReferenceFollowOnnx) {
    // Round halves to even.
    EXPECT_EQ(runValues("Round", "f32[8]", {0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6, 3.0}),
              (std::vector<double>{0, 2, 2, -0, -2, 2, -3, 3}));
    EXPECT_EQ(runValues("Sign", "f32[4]", {-3, 0, 0.25, -0.0}), (std::vector<double>{-1, 0, 1, 0}));
    EXPECT_EQ(runValues("Sign", "i64[3]", {-3, 0, 7}), (std::vector<double>{-1, 0, 1}));
    // Mod: integers take the divisor's sign; fmod=1 the dividend's.
    EXPECT_EQ(runValues("Mod", "i64[4]", {7, -7, 7, -7}, {}, {3, 3, -3, -3}), (std::vector<double>{1, 2, -2, -1}));
    EXPECT_EQ(runValues("Mod", "i64[4]", {7, -7, 7, -7}, {{"fmod", Attribute::ofInt(1)}}, {3, 3, -3, -3}),
              (std::vector<double>{1, -1, 1, -1}));
    EXPECT_EQ(runValues("Mod", "f32[2]", {5.5, -5.5}, {{"fmod", Attribute::ofInt(1)}}, {2, 2}),
              (std::vector<double>{1.5, -1.5}));
    EXPECT_EQ(runValues("PRelu", "f32[4]", {-2, 3, -1, 0}, {}, {0.5, 0.5, 2, 2}), (std::vector<double>{-1, 3, -2, 0}));
    EXPECT_EQ(runValues("Xor", "bool[4]", {0, 1, 0, 1}, {}, {0, 0, 1, 1}), (std::vector<double>{0, 1, 1, 0}));
    EXPECT_EQ(runValues("And", "bool[4]", {0, 1, 0, 1}, {}, {0, 0, 1, 1}), (std::vector<double>{0, 0, 0, 1}));
    EXPECT_EQ(runValues("Or", "bool[4]", {0, 1, 0, 1}, {}, {0, 0, 1, 1}), (std::vector<double>{0, 1, 1, 1}));
    EXPECT_EQ(runValues("Not", "bool[2]", {0, 1}), (std::vector<double>{1, 0}));
    EXPECT_EQ(runValues("Softsign", "f32[3]", {-3, 0, 1}), (std::vector<double>{-0.75, 0, 0.5}));
    EXPECT_EQ(runValues("IsNaN", "f32[3]", {NAN, 0, INFINITY}), (std::vector<double>{1, 0, 0}));
    EXPECT_EQ(runValues("IsInf", "f32[3]", {NAN, -INFINITY, INFINITY}, {{"detect_negative", Attribute::ofInt(0)}}),
              (std::vector<double>{0, 0, 1}));
    EXPECT_EQ(runValues("ThresholdedRelu", "f32[3]", {0.5, 1.0, 2.0}), (std::vector<double>{0, 0, 2}));
    const auto selu = runValues("Selu", "f32[2]", {-1, 2});
    ASSERT_EQ(selu.size(), 2u);
    EXPECT_NEAR(selu[0], 1.0507009873554805 * 1.6732632423543772 * (std::exp(-1.0) - 1), 1e-6);
    EXPECT_NEAR(selu[1], 2 * 1.0507009873554805, 1e-6);
    const auto tn = runValues("Tan", "f32[2]", {0.25, -1});
    ASSERT_EQ(tn.size(), 2u);
    EXPECT_NEAR(tn[0], std::tan(0.25), 1e-6);
    // Softplus stays finite-accurate for large inputs.
    const auto sp = runValues("Softplus", "f32[2]", {100, -100});
    ASSERT_EQ(sp.size(), 2u);
    EXPECT_NEAR(sp[0], 100.0, 1e-4);
    EXPECT_NEAR(sp[1], std::exp(-100.0), 1e-40);
}

TEST(LowerElementwise, CastAndDropout) {
    EXPECT_EQ(refCheck("Cast", {in("f32[3,4]")}, {{"to", Attribute::ofInt(7)}}), "");   // -> i64
    EXPECT_EQ(refCheck("Cast", {in("i32[3,4]")}, {{"to", Attribute::ofInt(1)}}), "");   // -> f32
    EXPECT_EQ(refCheck("Cast", {in("f32[3,4]")}, {{"to", Attribute::ofInt(10)}}), "");  // -> f16
    EXPECT_EQ(refCheck("Cast", {in("f32[3,4]")}, {{"to", Attribute::ofInt(9)}}), "");   // -> bool
    EXPECT_EQ(refCheck("Dropout", {in("f32[3,4]")}, {}, 2), "");
    EXPECT_EQ(refCheck("Dropout", {in("f32[3,4]")}), "");
}

TEST(LowerElementwise, DefaultMappingAndKernelText) {
    auto r = runOne("Relu", {in("f32[1,32,112,112]")});
    auto lk = lowerNode(r.g, 0, nullptr);
    ASSERT_TRUE(lk.ok());
    ASSERT_EQ(lk->kernel.mappings.size(), 1u);
    EXPECT_EQ(lk->kernel.mappings[0], "grid = spatial(1,8,1,1).repeat(1,4,112,112)");
    EXPECT_EQ(lk->kernel.params.size(), 2u);
    EXPECT_EQ(lk->kernel.opType, "Relu");
    EXPECT_EQ(lk->kernel.name, "n0");
    const auto sched = defaultCpuSchedule(r.g, 0);
    ASSERT_EQ(sched.size(), 1u);
    EXPECT_EQ(sched[0].level, "grid");
    EXPECT_EQ(sched[0].text, "spatial(1,8,1,1).repeat(1,4,112,112)");
    EXPECT_EQ(printKernel(lk->kernel),
              "kernel n0(in x0: f32[1,32,112,112], out y0: f32[1,32,112,112])\n"
              "  // ops: n0 (Relu)\n"
              "  // grid = spatial(1,8,1,1).repeat(1,4,112,112)\n"
              "  parallel for w_0 in 0..8 {  // grid = spatial(1,8,1,1).repeat(1,4,112,112)\n"
              "    for gr1_1_1 in 0..4 {  // grid repeat(1,4,112,112)\n"
              "      for gr1_2_2 in 0..112 {\n"
              "        for gr1_3_3 in 0..112 {\n"
              "          let i1_4: i64 = ((w_0 * 4) + gr1_1_1)\n"
              "          y0[0, i1_4, gr1_2_2, gr1_3_3] = max(x0[0, i1_4, gr1_2_2, gr1_3_3], 0.0f)\n"
              "        }\n"
              "      }\n"
              "    }\n"
              "  }\n");
}

TEST(LowerElementwise, ErrorsNameTheNode) {
    auto r = runOne("Relu", {in("f32[N,4]")});
    auto lk = lowerNode(r.g, 0, nullptr);
    ASSERT_FALSE(lk.ok());
    EXPECT_EQ(lk.diagnostics().firstError()->where, "node 'n0' (Relu)");
    EXPECT_NE(lk.diagnostics().firstError()->message.find("no concrete shape"), std::string::npos);
    auto u = runOne("Relu", {in("f32[4]")});
    u.g.node(0).opType = "NoSuchOp";
    auto e = lowerNode(u.g, 0, nullptr);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.diagnostics().firstError()->message, "no code generator for op 'NoSuchOp'");
    EXPECT_FALSE(hasGenerator(u.g.node(0)));
}

}  // namespace
}  // namespace tessera::lower::test

namespace tessera::lower::test {
namespace {

TEST(LowerDispatch, OpsWithGeneratorsListsTheBasicTemplates) {
    const auto ops = opsWithGenerators();
    EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
    for (const char* op : {"Abs", "Add", "And", "Cast", "CastLike", "Ceil", "Celu", "Clip", "Compute", "Concat",
                           "ConstantOfShape", "Cos", "Cosh", "Div", "Dropout", "Elu", "Equal", "Erf", "Exp", "Expand",
                           "Flatten", "Floor", "Gather", "Gelu", "Greater", "GreaterOrEqual", "HardSigmoid",
                           "HardSwish", "Identity", "IsInf", "IsNaN", "LeakyRelu", "Less", "LessOrEqual", "Log",
                           "Max", "Mean", "Min", "Mish", "Mod", "Mul", "Neg", "Not", "Or", "PRelu", "Pad", "Pow",
                           "Range", "Reciprocal", "Relu", "Reshape", "Round", "Selu", "Shape", "Shrink", "Sigmoid",
                           "Sign", "Sin", "Sinh", "Size", "Slice", "Softplus", "Softsign", "Split", "Sqrt", "Squeeze",
                           "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu", "Tile", "Transpose", "Unsqueeze", "Where",
                           "Xor"})
        EXPECT_TRUE(std::binary_search(ops.begin(), ops.end(), std::string(op))) << op;
    // Other domains have no generator, even with a known op type.
    auto r = ir::test::runOne("Relu", {ir::test::in("f32[4]")});
    EXPECT_TRUE(hasGenerator(r.g.node(0)));
    r.g.node(0).domain = "com.microsoft";
    EXPECT_FALSE(hasGenerator(r.g.node(0)));
    auto e = lowerNode(r.g, 0, nullptr);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.diagnostics().firstError()->message, "no code generator for op 'com.microsoft::Relu'");
}

}  // namespace
}  // namespace tessera::lower::test
