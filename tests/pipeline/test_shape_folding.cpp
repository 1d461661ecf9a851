// Shape arithmetic folded once the inputs' shapes are known (core/pipeline/prepare.h), in the
// forms exporters write: Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Slice bounds from
// Shape -> Gather -> Div -> Mul, Shape(start, end), Size, and an If whose condition is a shape
// comparison; and the error that names the node deciding an extent from data.
#include <gtest/gtest.h>

#include "core/eval/reference_interpreter.h"
#include "core/ir/shape_inference.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/prepare.h"
#include "core/test_ir_helpers.h"

namespace pipeline = tessera::pipeline;
namespace ir = tessera::ir;
using ir::Attribute;
using ir::TensorData;

namespace {

TensorData ramp(std::vector<std::int64_t> dims) {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 13) - 6.0f;
    return TensorData::fromFloats(v, dims);
}

TensorData i64(std::vector<std::int64_t> v) {
    const auto n = static_cast<std::int64_t>(v.size());
    return TensorData::fromInts(v, {n});
}

std::string i64Name(ir::test::Builder& b, const std::string& name, std::vector<std::int64_t> v) {
    b.init(name, i64(std::move(v)));
    return name;
}

ir::Model modelOf(ir::test::Builder& b) {
    ir::Model m;
    m.opsets[""] = 17;
    m.graph = std::move(b.g);
    return m;
}

int countOp(const ir::Graph& g, const std::string& op) {
    int c = 0;
    for (const auto& n : g.nodes()) c += n.opType == op;
    return c;
}

}  // namespace

TEST(ShapeFolding, ReshapeTargetFromShapeGatherConcat) {
    // y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): what torch.onnx writes for
    // x.reshape(x.shape[0], -1) with a symbolic batch.
    ir::test::Builder b;
    b.input("x", "f32[N,4,6]");
    b.init("zero", TensorData::fromInts({0}, {}));
    b.init("axes0", i64({0}));
    b.init("minus1", i64({-1}));
    b.node("Shape", "shape", {"x"}, {"s"});
    b.node("Gather", "gather", {"s", "zero"}, {"n"}, {{"axis", Attribute::ofInt(0)}});
    b.node("Unsqueeze", "unsq", {"n", "axes0"}, {"n1"});
    b.node("Concat", "concat", {"n1", "minus1"}, {"target"}, {{"axis", Attribute::ofInt(0)}});
    b.node("Reshape", "reshape", {"x", "target"}, {"y"});
    b.node("Relu", "relu", {"y"}, {"z"});
    b.output("z");
    ir::Model m = modelOf(b);
    pipeline::SpecialiseStats stats;
    auto s = pipeline::specialiseModel(m, {ramp({3, 4, 6})}, &stats);
    ASSERT_TRUE(s.ok()) << s.diagnostics().formatAll();
    EXPECT_EQ(stats.foldedNodes, 4);  // Shape, Gather, Unsqueeze, Concat
    EXPECT_EQ(countOp(s->graph, "Shape"), 0);
    EXPECT_EQ(s->graph.numNodes(), 2u);  // Reshape, Relu
    EXPECT_EQ(s->graph.value(s->graph.findValue("y")).type.str(), "f32[3,24]");
    EXPECT_EQ(s->graph.value(s->graph.findValue("z")).type.str(), "f32[3,24]");
}

TEST(ShapeFolding, ShapeOfAReshapedValueFoldsInTurn) {
    // The second Shape reads a value whose shape is known only once the first chain folded.
    ir::test::Builder b;
    b.input("x", "f32[N,8]");
    b.init("two", i64({2}));
    b.init("minus1", i64({-1}));
    b.init("i1", TensorData::fromInts({1}, {}));
    b.node("Shape", "shape0", {"x"}, {"s0"});
    b.node("Slice", "slice0", {"s0", i64Name(b, "st0", {0}), i64Name(b, "en0", {1})}, {"n"});
    b.node("Concat", "cat", {"n", "minus1", "two"}, {"t"}, {{"axis", Attribute::ofInt(0)}});
    b.node("Reshape", "r", {"x", "t"}, {"y"});  // [N, 4, 2]
    b.node("Shape", "shape1", {"y"}, {"s1"});
    b.node("Gather", "g1", {"s1", "i1"}, {"four"}, {{"axis", Attribute::ofInt(0)}});
    b.node("Cast", "cast", {"four"}, {"fourf"}, {{"to", Attribute::ofInt(1)}});
    b.node("Div", "div", {"y", "fourf"}, {"z"});
    b.output("z");
    ir::Model m = modelOf(b);
    auto s = pipeline::specialiseModel(m, {ramp({5, 8})});
    ASSERT_TRUE(s.ok()) << s.diagnostics().formatAll();
    EXPECT_EQ(s->graph.numNodes(), 2u);  // Reshape, Div
    const ir::Value& four = s->graph.value(s->graph.findValue("fourf"));
    ASSERT_TRUE(four.data);
    EXPECT_EQ(four.data->elementAsDouble(0), 4.0);
    EXPECT_EQ(s->graph.value(s->graph.findValue("z")).type.str(), "f32[5,4,2]");
}

TEST(ShapeFolding, SliceBoundsFromShapeArithmeticAndShapeAttributes) {
    // x[:, : W // 2 * 2] with W from Shape(start=-1): the Shape -> Gather -> Div -> Mul.
    ir::test::Builder b;
    b.input("x", "f32[2,N]");
    b.init("zero", i64({0}));
    b.init("one", i64({1}));
    b.init("two", i64({2}));
    b.node("Shape", "shape", {"x"}, {"w"}, {{"start", Attribute::ofInt(-1)}});
    b.node("Div", "half", {"w", "two"}, {"h"});
    b.node("Mul", "even", {"h", "two"}, {"end"});
    b.node("Size", "size", {"x"}, {"count"});
    b.node("Slice", "slice", {"x", "zero", "end", "one"}, {"y"});
    b.output("y");
    b.output("count");
    ir::Model m = modelOf(b);
    auto s = pipeline::specialiseModel(m, {ramp({2, 7})});
    ASSERT_TRUE(s.ok()) << s.diagnostics().formatAll();
    EXPECT_EQ(s->graph.value(s->graph.findValue("y")).type.str(), "f32[2,6]");
    const ir::Value& count = s->graph.value(s->graph.findValue("count"));
    ASSERT_TRUE(count.data);
    EXPECT_EQ(count.data->elementAsInt(0), 14);
    EXPECT_EQ(s->graph.numNodes(), 1u);  // the Slice
}

TEST(ShapeFolding, IfOnAShapeComparisonBecomesItsBranch) {
    // if x.shape[1] > 4: y = x * 2 else: y = x - 1, the branches reading x from the outer scope.
    ir::test::Builder thenB;
    thenB.init("k2", TensorData::fromFloats({2.0f}, {}));
    thenB.node("Mul", "mul", {"x", "k2"}, {"then_y"});
    thenB.output("then_y");
    ir::test::Builder elseB;
    elseB.init("k1", TensorData::fromFloats({1.0f}, {}));
    elseB.node("Sub", "sub", {"x", "k1"}, {"else_y"});
    elseB.output("else_y");
    auto graphOf = [](ir::test::Builder& sb, const char* name) {
        auto g = std::make_shared<ir::Graph>(std::move(sb.g));
        g->name = name;
        return g;
    };
    ir::test::Builder b;
    b.input("x", "f32[3,N]");
    b.init("idx", TensorData::fromInts({1}, {}));
    b.init("four", TensorData::fromInts({4}, {}));
    b.node("Shape", "shape", {"x"}, {"s"});
    b.node("Gather", "gather", {"s", "idx"}, {"w"}, {{"axis", Attribute::ofInt(0)}});
    b.node("Greater", "wide", {"w", "four"}, {"cond"});
    b.node("If", "branch", {"cond"}, {"y"},
           {{"then_branch", Attribute::ofGraph(graphOf(thenB, "then"))},
            {"else_branch", Attribute::ofGraph(graphOf(elseB, "else"))}});
    b.output("y");
    const ir::Model m = modelOf(b);
    for (const std::int64_t w : {6, 2}) {
        SCOPED_TRACE(w);
        const TensorData x = ramp({3, w});
        auto s = pipeline::specialiseModel(m, {x});
        ASSERT_TRUE(s.ok()) << s.diagnostics().formatAll();
        ASSERT_EQ(s->graph.numNodes(), 1u);
        EXPECT_EQ(s->graph.nodes()[0].opType, w > 4 ? "Mul" : "Sub");
        EXPECT_EQ(s->graph.nodes()[0].name, w > 4 ? "branch/mul" : "branch/sub");
        EXPECT_EQ(s->graph.value(s->graph.outputs()[0]).type.str(), "f32[3," + std::to_string(w) + "]");
        // Same values as the If in the reference interpreter.
        auto want = tessera::eval::evaluate(m.graph, {x});
        auto got = tessera::eval::evaluate(s->graph, {x});
        ASSERT_TRUE(want.ok() && got.ok());
        EXPECT_EQ((*want)[0].toDoubles(), (*got)[0].toDoubles());
    }
}

TEST(ShapeFolding, DataDependentExtentNamesTheNodeThatDecidesIt) {
    // NonZero's output length depends on x's values: lowering cannot know it.
    ir::test::Builder b;
    b.input("x", "f32[6]");
    b.node("NonZero", "nz", {"x"}, {"idx"});
    b.node("Transpose", "tr", {"idx"}, {"t"});
    b.output("t");
    ir::Model m = modelOf(b);
    ASSERT_FALSE(ir::inferShapes(m.graph, "test").diagnostics.hasErrors());
    const auto inputs = pipeline::defaultInputs(m.graph);
    pipeline::CompileOptions options;
    options.fallbackReference = true;  // NonZero itself may run in the reference interpreter
    auto cm = pipeline::compileModel(m, inputs, options);
    ASSERT_FALSE(cm.ok());
    const std::string msg = cm.diagnostics().formatAll();
    EXPECT_NE(msg.find("decided at run time by node 'nz' (NonZero), from the values of 'x'"), std::string::npos) << msg;
}

TEST(ShapeFolding, OpWithoutAShapeRuleIsNamedAsSuch) {
    // Einsum has no shape rule in Tessera: its output's extents are unknown for that reason, not
    // because of x's values, and the message says so (and what the user can do).
    ir::test::Builder b;
    b.input("x", "f32[2,6]");
    b.node("Einsum", "ein", {"x", "x"}, {"e"}, {{"equation", ir::Attribute::ofString("ij,ij->i")}});
    b.node("Relu", "relu", {"e"}, {"y"});
    b.output("y");
    ir::Model m = modelOf(b);
    ir::inferShapes(m.graph, "test");
    pipeline::CompileOptions options;
    options.fallbackReference = true;
    auto cm = pipeline::compileModel(m, pipeline::defaultInputs(m.graph), options);
    ASSERT_FALSE(cm.ok());
    const std::string msg = cm.diagnostics().formatAll();
    EXPECT_NE(msg.find("node 'ein' (Einsum) has no shape rule in Tessera (an op it does not know), so its output's "
                       "extents are unknown; declare them in the model (value_info)"),
              std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("decided at run time"), std::string::npos) << msg;
}
