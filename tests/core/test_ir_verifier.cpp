// Verifier errors (dangling inputs, cycles, duplicate producers, byte mismatches, attribute
// schema violations, subgraph scoping), whole-graph shape inference behaviour (constants feeding
// Reshape, declared-type disagreements, unknown ops) and a 5,000-node chain.

#include <gtest/gtest.h>

#include <algorithm>

#include "core/ir/verifier.h"
#include "tests/core/test_ir_helpers.h"

using namespace tessera::ir;
using namespace tessera::ir::test;
using tessera::support::DiagnosticList;
using tessera::support::Severity;

namespace {

std::vector<std::string> errorLines(const DiagnosticList& d) {
    std::vector<std::string> out;
    for (const auto& x : d.items())
        if (x.severity == Severity::Error) out.push_back(x.format());
    return out;
}

bool hasLine(const DiagnosticList& d, const std::string& line) {
    for (const auto& x : d.items())
        if (x.format() == line) return true;
    return false;
}

std::string dump(const DiagnosticList& d) {
    std::string s;
    for (const auto& x : d.items()) s += x.format() + "\n";
    return s;
}

Builder validBlock() {
    Builder b;
    b.input("x", "f32[1,4,8,8]");
    b.init("w", TensorData::fromFloats(std::vector<float>(4 * 9, 0.5f), {4, 1, 3, 3}));
    b.node("Conv", "Conv_0", {"x", "w"}, {"c"}, {{"group", Attribute::ofInt(4)}, {"pads", Attribute::ofInts({1, 1, 1, 1})}});
    b.node("Relu", "Relu_1", {"c"}, {"y"});
    b.output("y");
    return b;
}

}  // namespace

TEST(IrVerifier, ValidGraphHasNoDiagnostics) {
    Builder b = validBlock();
    const auto d = verify(b.g, "m.onnx");
    EXPECT_TRUE(d.empty()) << dump(d);
}

TEST(IrVerifier, DanglingInput) {
    Builder b;
    b.input("a", "f32[2]");
    b.node("Add", "Add_3", {"a", "foo"}, {"y"});
    b.output("y");
    const auto d = verify(b.g, "m.onnx");
    EXPECT_EQ(errorLines(d), std::vector<std::string>{
                                 "m.onnx: error: node 'Add_3' (Add): input 'foo' is not produced by any node, graph input or initializer"});
}

TEST(IrVerifier, Cycle) {
    Builder b;
    b.input("x", "f32[2]");
    b.node("Add", "A", {"x", "b"}, {"a"});
    b.node("Relu", "B", {"a"}, {"b"});
    b.node("Relu", "C", {"a"}, {"y"});
    b.output("y");
    const auto d = verify(b.g);
    EXPECT_EQ(errorLines(d), std::vector<std::string>{"error: graph '': cycle through nodes 'A', 'B'"});
    // Shape inference refuses too, with an error instead of looping.
    auto r = inferShapes(b.g, "m.onnx");
    ASSERT_TRUE(r.diagnostics.hasErrors());
    EXPECT_NE(r.diagnostics.firstError()->message.find("cycle"), std::string::npos);
}

TEST(IrVerifier, SelfLoop) {
    Builder b;
    b.node("Relu", "Loopy", {"z"}, {"z"});
    b.output("z");
    const auto d = verify(b.g);
    EXPECT_EQ(errorLines(d), std::vector<std::string>{"error: graph '': cycle through nodes 'Loopy'"});
}

TEST(IrVerifier, DuplicateProducer) {
    Builder b;
    b.input("i", "f32[2]");
    b.node("Relu", "n1", {"i"}, {"x"});
    b.node("Sigmoid", "n2", {"i"}, {"x"});
    b.output("x");
    const auto d = verify(b.g);
    EXPECT_TRUE(hasLine(d, "error: value 'x': is produced by both 'n1' and 'n2'")) << dump(d);
    // The Diagnostic's where/message split gives the one-line text the brief asks for.
    EXPECT_EQ(d.firstError()->where + " " + d.firstError()->message, "value 'x' is produced by both 'n1' and 'n2'");
}

TEST(IrVerifier, InitializerByteMismatch) {
    Builder b;
    b.input("x", "f32[2,3]");
    TensorData w = TensorData::fromFloats({1, 2, 3}, {2, 3});  // 12 bytes for 6 floats
    b.init("w", w);
    b.node("Add", "add", {"x", "w"}, {"y"});
    b.output("y");
    const auto d = verify(b.g, "m.onnx");
    EXPECT_EQ(errorLines(d), std::vector<std::string>{"m.onnx: error: initializer 'w': 12 bytes for f32[2,3] (expected 24)"});
}

TEST(IrVerifier, InitializerWithoutDataAndNegativeDims) {
    Builder b;
    const ValueId w = b.val("w");
    b.g.value(w).isInitializer = true;
    b.g.initializers().push_back(w);
    TensorData neg;
    neg.dtype = DType::F32;
    neg.dims = {-2, 3};
    b.init("n", neg);
    const auto d = verify(b.g);
    EXPECT_TRUE(hasLine(d, "error: initializer 'w': has no data")) << dump(d);
    EXPECT_TRUE(hasLine(d, "error: initializer 'n': has a negative dim -2")) << dump(d);
}

TEST(IrVerifier, AttributeSchema) {
    Builder b;
    b.input("x", "f32[1,1,4,4]");
    b.init("w", TensorData::fromFloats(std::vector<float>(9, 1.0f), {1, 1, 3, 3}));
    b.node("Conv", "Conv_0", {"x", "w"}, {"c"}, {{"strides", Attribute::ofFloat(2.0)}, {"frobnicate", Attribute::ofInt(1)}});
    b.node("MaxPool", "Pool_1", {"c"}, {"p"});
    b.node("Add", "Add_2", {"p"}, {"y"});
    b.output("y");
    const auto d = verify(b.g, "m.onnx");
    const auto errs = errorLines(d);
    EXPECT_NE(std::find(errs.begin(), errs.end(), "m.onnx: error: node 'Conv_0' (Conv): attribute 'strides' must be ints, got float"),
              errs.end())
        << dump(d);
    EXPECT_TRUE(hasLine(d, "m.onnx: error: node 'Pool_1' (MaxPool): missing required attribute 'kernel_shape'")) << dump(d);
    EXPECT_TRUE(hasLine(d, "m.onnx: error: node 'Add_2' (Add): expects 2 inputs, got 1")) << dump(d);
    // Unknown attributes are warnings, not errors.
    EXPECT_TRUE(hasLine(d, "m.onnx: warning: node 'Conv_0' (Conv): unknown attribute 'frobnicate' (ignored)")) << dump(d);
    EXPECT_EQ(errs.size(), 3u) << dump(d);
}

TEST(IrVerifier, RequiredInputOmittedAndUnknownOpPasses) {
    Builder b;
    b.input("x", "f32[2]");
    b.node("Gemm", "g", {"", "x"}, {"y"});
    b.node("FancyOp", "f", {"y", "x", "x"}, {"z"}, {{"anything", Attribute::ofString("goes")}}, "com.acme");
    b.output("z");
    const auto d = verify(b.g);
    EXPECT_EQ(errorLines(d), std::vector<std::string>{"error: node 'g' (Gemm): required input #0 is missing"});
}

TEST(IrVerifier, GraphOutputAndDuplicateNodeNames) {
    Builder b;
    b.input("x", "f32[2]");
    b.node("Relu", "same", {"x"}, {"a"});
    b.node("Relu", "same", {"a"}, {"b"});
    b.output("b");
    b.output("ghost");
    const auto d = verify(b.g);
    EXPECT_TRUE(hasLine(d, "error: node 'same' (Relu): node name is used by more than one node")) << dump(d);
    EXPECT_TRUE(hasLine(d, "error: graph '': output 'ghost' is not produced by any node, graph input or initializer")) << dump(d);
}

TEST(IrVerifier, ConstantNodeTensorChecked) {
    Builder b;
    auto bad = std::make_shared<TensorData>(TensorData::fromInts({1, 2}, {3}));
    b.node("Constant", "k", {}, {"c"}, {{"value", Attribute::ofTensor(bad)}});
    b.output("c");
    const auto d = verify(b.g);
    EXPECT_TRUE(hasLine(d, "error: node 'k' (Constant): attribute 'value': 16 bytes for i64[3] (expected 24)")) << dump(d);
}

TEST(IrVerifier, SubgraphSeesOuterValues) {
    Builder body;
    body.node("Relu", "inner", {"x"}, {"r"});       // x comes from the enclosing graph
    body.node("Add", "inner_add", {"r", "nope"}, {"s"});  // nope is defined nowhere
    body.output("s");
    auto sub = std::make_shared<Graph>(std::move(body.g));
    sub->name = "then";
    Builder b;
    b.input("x", "f32[2]");
    b.input("cond", "bool[]");
    b.node("If", "if0", {"cond"}, {"y"}, {{"then_branch", Attribute::ofGraph(sub)}, {"else_branch", Attribute::ofGraph(sub)}});
    b.output("y");
    const auto d = verify(b.g);
    const auto errs = errorLines(d);
    ASSERT_EQ(errs.size(), 2u) << dump(d);  // once per branch
    EXPECT_EQ(errs[0],
              "error: node 'if0' (If) / then_branch: node 'inner_add' (Add): input 'nope' is not produced by any node, graph "
              "input or initializer");
}

TEST(IrVerifier, FiveThousandNodeChain) {
    Builder b;
    b.input("v0", "f32[N,16]");
    constexpr int kNodes = 5000;
    for (int i = 0; i < kNodes; ++i) {
        const std::string op = i % 3 == 0 ? "Relu" : (i % 3 == 1 ? "Sigmoid" : "Tanh");
        b.node(op, "n" + std::to_string(i), {"v" + std::to_string(i)}, {"v" + std::to_string(i + 1)});
    }
    b.output("v" + std::to_string(kNodes));
    const auto d = verify(b.g);
    EXPECT_TRUE(d.empty()) << dump(d);
    const auto r = inferShapes(b.g);
    EXPECT_FALSE(r.diagnostics.hasErrors());
    EXPECT_EQ(r.inferredNodes, kNodes);
    EXPECT_EQ(b.type("v5000").str(), "f32[N,16]");
    // A cycle closing the chain is found and named.
    Graph cyc = b.g;
    cyc.node(0).inputs[0] = cyc.findValue("v5000");
    cyc.rebuildIndex();
    const auto dc = verify(cyc);
    ASSERT_TRUE(dc.hasErrors());
    EXPECT_NE(dc.firstError()->message.find("cycle through nodes 'n0', 'n1', 'n2'"), std::string::npos) << dc.firstError()->message;
    EXPECT_NE(dc.firstError()->message.find("and 4992 more"), std::string::npos);
}

// ------------------------------------------------------------------ whole-graph inference

TEST(IrInferGraph, ConstantsFeedReshape) {
    Builder b;
    b.input("x", "f32[2,3,4]");
    b.input("y", "f32[6,4]");
    b.node("Constant", "k", {}, {"shape"}, {{"value_ints", Attribute::ofInts({0, -1})}});
    b.node("Reshape", "r1", {"x", "shape"}, {"a"});
    b.node("Shape", "s", {"y"}, {"ys"});
    b.node("Reshape", "r2", {"x", "ys"}, {"c"});
    b.output("a");
    b.output("c");
    const auto r = inferShapes(b.g, "m.onnx");
    EXPECT_TRUE(r.diagnostics.empty());
    EXPECT_EQ(b.type("shape").str(), "i64[2]");
    EXPECT_EQ(b.type("a").str(), "f32[2,12]");
    EXPECT_EQ(b.type("ys").str(), "i64[2]");
    EXPECT_EQ(b.type("c").str(), "f32[6,4]");
    EXPECT_EQ(r.inferredNodes, 4);
}

TEST(IrInferGraph, DeclaredTypeDisagreements) {
    Builder b;
    b.input("x", "f32[1,4]");
    b.node("Relu", "r", {"x"}, {"a"});
    b.node("Relu", "s", {"a"}, {"b"});
    b.node("Cast", "c", {"b"}, {"d"}, {{"to", Attribute::ofInt(7)}});
    b.g.value(b.val("a")).onnxType = ty("f32[1,5]");   // differs in a known dim: warning
    b.g.value(b.val("b")).onnxType = ty("f32[N,4]");   // symbol vs 1: compatible, no warning
    b.g.value(b.val("d")).onnxType = ty("f32[1,4]");   // dtype differs: warning
    b.output("d");
    const auto r = inferShapes(b.g, "m.onnx");
    EXPECT_EQ(r.disagreements, 2);
    EXPECT_FALSE(r.diagnostics.hasErrors());
    ASSERT_EQ(r.diagnostics.items().size(), 2u);
    EXPECT_EQ(r.diagnostics.items()[0].format(),
              "m.onnx: warning: value 'a': Tessera infers f32[1,4] but the model declares f32[1,5]");
    EXPECT_EQ(r.diagnostics.items()[1].format(),
              "m.onnx: warning: value 'd': Tessera infers i64[1,4] but the model declares f32[1,4]");
    EXPECT_EQ(b.type("a").str(), "f32[1,4]");  // ours wins; onnxType kept beside it
}

TEST(IrInferGraph, UnknownOpsKeepDeclaredTypesAndErrorsNameTheNode) {
    Builder b;
    b.input("x", "f32[1,3,8,8]");
    b.node("FusedThing", "f", {"x"}, {"a"}, {}, "com.acme");
    b.g.value(b.val("a")).onnxType = ty("f32[1,3,8,8]");
    b.node("Relu", "r", {"a"}, {"b"});
    b.input("w2", "f32[4,2,3,3]");
    b.node("Conv", "bad", {"b", "w2"}, {"c"});
    b.output("c");
    const auto r = inferShapes(b.g, "m.onnx");
    EXPECT_EQ(r.unknownOps, 1);
    EXPECT_EQ(r.inferredNodes, 1);
    EXPECT_EQ(b.type("a").str(), "f32[1,3,8,8]");
    EXPECT_EQ(b.type("b").str(), "f32[1,3,8,8]");
    ASSERT_TRUE(r.diagnostics.hasErrors());
    EXPECT_EQ(r.diagnostics.firstError()->format(), "m.onnx: error: node 'bad' (Conv): input channels 3 != weight channels 2 * group 1");
    // Declared graph-input types are kept.
    EXPECT_EQ(b.type("x").str(), "f32[1,3,8,8]");
}

TEST(IrInferGraph, SubgraphsSeeOuterTypes) {
    Builder body;
    body.init("two", TensorData::fromFloats({2.0f}, {}));
    body.node("Mul", "then_mul", {"x", "two"}, {"then_y"});
    body.node("Reshape", "bad_reshape", {"then_y", "x"}, {"then_z"});
    body.output("then_y");
    auto sub = std::make_shared<Graph>(std::move(body.g));
    sub->name = "then";
    Builder b;
    b.input("x0", "f32[2,8]");
    b.node("Relu", "r", {"x0"}, {"x"});
    b.input("cond", "bool[]");
    b.node("If", "if0", {"cond"}, {"y"}, {{"then_branch", Attribute::ofGraph(sub)}});
    b.g.value(b.val("y")).onnxType = ty("f32[2,8]");
    b.output("y");
    const auto r = inferShapes(b.g, "m.onnx");
    EXPECT_EQ(sub->value(sub->findValue("then_y")).type.str(), "f32[2,8]");
    // If is registered but this one lacks else_branch: it is an error and keeps its declared type.
    EXPECT_EQ(b.type("y").str(), "f32[2,8]");
    EXPECT_EQ(r.unknownOps, 0);
    EXPECT_EQ(r.inferredNodes, 2);
    ASSERT_TRUE(r.diagnostics.hasErrors());
    EXPECT_EQ(r.diagnostics.firstError()->where, "node 'if0' (If) / then_branch: node 'bad_reshape' (Reshape)");
    const auto& items = r.diagnostics.items();
    ASSERT_GE(items.size(), 2u);
    EXPECT_EQ(items.back().where, "node 'if0' (If)");
    EXPECT_NE(items.back().message.find("else_branch"), std::string::npos) << items.back().message;
}

TEST(IrInferGraph, TotalFlops) {
    Builder b = validBlock();
    inferShapes(b.g);
    EXPECT_EQ(b.type("y").str(), "f32[1,4,8,8]");
    // Conv: 2 * 1 * 4 * 8 * 8 * (4/4) * 3 * 3 = 4608; Relu: 256
    EXPECT_EQ(*nodeFlops(b.g, 0), 4608);
    EXPECT_EQ(*nodeFlops(b.g, 1), 256);
    EXPECT_EQ(totalFlops(b.g), 4608 + 256);
    EXPECT_FALSE(nodeFlops(b.g, 7).has_value());
}

// -------------------------------------------------------------------------------- registry

TEST(IrRegistry, RequiredOpsPresentWithFlagsAndFormulas) {
    const auto& reg = OpRegistry::instance();
    const char* required[] = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Pow", "Relu", "Clip",
                              "Sigmoid", "Tanh", "Erf", "Gelu", "HardSwish", "Exp", "Sqrt", "BatchNormalization",
                              "LayerNormalization", "Softmax", "MaxPool", "AveragePool", "GlobalAveragePool", "ReduceMean",
                              "ReduceSum", "ReduceMax", "Flatten", "Reshape", "Transpose", "Concat", "Split", "Slice", "Gather",
                              "Squeeze", "Unsqueeze", "Pad", "Identity", "Constant", "Cast", "Shape", "Dropout"};
    for (const char* op : required) {
        const OpSchema* s = reg.find("", op);
        ASSERT_NE(s, nullptr) << op;
        EXPECT_TRUE(static_cast<bool>(s->inferShapes)) << op;
        EXPECT_TRUE(static_cast<bool>(s->flops)) << op;
        EXPECT_FALSE(s->hasCodegen) << op;
        EXPECT_FALSE(s->summary.empty()) << op;
    }
    EXPECT_EQ(reg.find("ai.onnx", "Conv"), reg.find("", "Conv"));
    EXPECT_EQ(reg.find("com.acme", "Conv"), nullptr);
    EXPECT_EQ(reg.find("", "NoSuchOp"), nullptr);
    for (const char* op : {"Add", "Relu", "Gelu", "Reshape", "Transpose", "Concat", "Slice", "Gather", "Pad", "Cast", "Identity"})
        EXPECT_TRUE(reg.find("", op)->injective) << op;
    for (const char* op : {"Conv", "MatMul", "Gemm", "ReduceMean", "Softmax", "BatchNormalization", "LayerNormalization",
                           "MaxPool", "GlobalAveragePool"})
        EXPECT_FALSE(reg.find("", op)->injective) << op;
    EXPECT_EQ(reg.find("", "Conv")->category, OpCategory::Convolution);
    EXPECT_STREQ(opCategoryName(reg.find("", "Reshape")->category), "data-movement");
    const OpSchema* conv = reg.find("", "Conv");
    ASSERT_NE(conv->findAttr("group"), nullptr);
    EXPECT_EQ(conv->findAttr("group")->defaultValue->i, 1);
    EXPECT_TRUE(reg.find("", "MaxPool")->findAttr("kernel_shape")->required);
    EXPECT_GE(reg.all().size(), 80u);
}
