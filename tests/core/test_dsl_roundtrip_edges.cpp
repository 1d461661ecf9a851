// Round trip of hand-built models that exercise what imported ONNX graphs can hold and the
// samples do not: odd names, every attribute kind, special float values, every constant dtype,
// omitted inputs and outputs, nodes without outputs, unregistered ops, custom domains, nested
// subgraphs reading outer values, graph inputs and initializers listed as outputs, symbolic and
// unknown dims. Each case: print -> parse -> structurallyEqual -> print again (identical text).
// What the language cannot say (INT64_MIN, a negative NaN without an ONNX file to point at, an
// initializer order that contradicts the graph-input order, a model without a default-domain
// opset) is not tested here: the printer's header lists those limits.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <memory>

#include "core/frontend/dsl/dsl.h"
#include "core/frontend/dsl/dsl_printer.h"
#include "core/ir/shape_inference.h"
#include "tests/core/test_ir_helpers.h"

namespace {

namespace ir = tessera::ir;
namespace dsl = tessera::frontend::dsl;
using ir::Attribute;
using ir::TensorData;
using ir::test::Builder;

std::string diagnosticsText(const tessera::support::DiagnosticList& d) {
    std::string s;
    for (const auto& item : d.items()) {
        s += item.format() + "\n";
        for (const auto& n : item.notes) s += "    " + n + "\n";
    }
    return s;
}

/// Finishes a built graph the way the importer does: Tessera's shape inference fills the types
/// of registered ops' outputs (the parser infers them the same way).
ir::Model finish(Builder& b, std::map<std::string, std::int64_t> opsets = {{"", 17}}) {
    ir::Model m;
    m.graph = std::move(b.g);
    m.graph.name = "g";
    m.irVersion = 8;
    m.opsets = std::move(opsets);
    m.graph.rebuildIndex();
    (void)ir::inferShapes(m.graph, "edge.onnx");
    return m;
}

void expectRoundTrip(const ir::Model& m, const std::string& label) {
    const std::string text = dsl::printDsl(m);
    dsl::ParseOptions po;
    po.allowFileAccess = false;
    auto parsed = dsl::parseProgram(text, "edge.tsr", po);
    ASSERT_TRUE(parsed.ok()) << label << ": does not parse:\n" << diagnosticsText(parsed.diagnostics()) << "--- text ---\n" << text;
    std::string why;
    EXPECT_TRUE(dsl::structurallyEqual(m, *parsed, &why)) << label << ": " << why << "\n--- text ---\n" << text;
    EXPECT_EQ(text, dsl::printDsl(*parsed)) << label;
}

TensorData raw(ir::DType dt, std::vector<std::int64_t> dims, const void* p, std::size_t n) {
    TensorData t;
    t.dtype = dt;
    t.dims = std::move(dims);
    t.bytes.resize(n);
    std::memcpy(t.bytes.data(), p, n);
    return t;
}

TEST(DslRoundTripEdges, OddNames) {
    Builder b;
    b.input("in put \"q\" `tick` \\", "f32[2]");
    b.input("重み🔥", "f32[2]");
    b.input("tab\there\nnewline\r", "f32[2]");
    b.input("output", "f32[2]");  // a reserved word
    b.input("_", "f32[2]");       // the omission mark
    b.input("inf", "f32[2]");
    b.input("0", "f32[2]");
    b.node("Sum", "node \"名\"\n2", {"in put \"q\" `tick` \\", "重み🔥", "tab\there\nnewline\r", "output", "_", "inf", "0"},
           {"sum `out`"});
    b.node("Relu", "as", {"sum `out`"}, {"graph"});
    b.output("graph");
    expectRoundTrip(finish(b), "odd names");
}

TEST(DslRoundTripEdges, InvalidUtf8AndControlBytesInNames) {
    Builder b;
    b.input(std::string("bad\xff\xfe", 5), "f32[2]");
    b.input(std::string("ctl\x01\x7f", 5), "f32[2]");
    b.node("Add", std::string("n\xc3", 2), {std::string("bad\xff\xfe", 5), std::string("ctl\x01\x7f", 5)}, {"y"});
    b.output("y");
    expectRoundTrip(finish(b), "invalid utf-8");
}

TEST(DslRoundTripEdges, OmittedInputsOutputsAndNodesWithoutOutputs) {
    Builder b;
    b.input("x", "f32[4]");
    b.init("hi", TensorData::fromFloats({6}, {}));
    b.node("Clip", "clip", {"x", "", "hi"}, {"c"});
    b.node("Clip", "clip_trailing", {"c", "", ""}, {"d"});  // trailing omitted inputs kept
    b.node("Dropout", "drop", {"d"}, {"e", "mask_unused"});
    b.node("Print", "print", {"e"}, {}, {}, "com.acme");  // no outputs: named by `as`
    b.output("e");
    ir::Model m = finish(b, {{"", 17}, {"com.acme", 1}});
    // Omit Dropout's mask output.
    ir::Node& drop = m.graph.node(m.graph.findNode("drop"));
    drop.outputs[1] = ir::kNoValue;
    m.graph.rebuildIndex();
    expectRoundTrip(m, "omitted values");
}

TEST(DslRoundTripEdges, CustomDomainsAndUnregisteredOps) {
    Builder b;
    b.input("x", "f32[1,3,8,8]");
    b.input("s", "f32[4]");
    b.node("Resize", "resize", {"x", "", "s"}, {"r"}, {{"mode", Attribute::ofString("nearest")}});
    b.node("FusedThing", "f", {"r"}, {"y"}, {{"level", Attribute::ofInt(3)}}, "com.my-company.ops");
    b.node("Other", "o", {"y"}, {"z"}, {}, "com.microsoft");
    b.output("z");
    ir::Model m = finish(b, {{"", 17}, {"com.my-company.ops", 1}, {"com.microsoft", 1}});
    // Declared types of the unregistered ops' outputs (the importer takes them from value_info).
    for (const char* v : {"r", "y", "z"}) m.graph.value(m.graph.findValue(v)).type = ir::test::ty("f32[1,3,16,16]");
    expectRoundTrip(m, "domains");
}

TEST(DslRoundTripEdges, EveryAttributeKind) {
    Builder b;
    b.input("x", "f32[2]");
    auto t1 = std::make_shared<TensorData>(TensorData::fromFloats({1.5f, -0.0f}, {2}));
    auto t2 = std::make_shared<TensorData>(TensorData::fromInts({7}, {}));
    Attribute tensors;
    tensors.type = ir::AttrType::Tensors;
    tensors.tensors = {t1, t2};
    b.node("Op", "n", {"x"}, {"y"},
           {{"i", Attribute::ofInt(-3)},
            {"imax", Attribute::ofInt(std::numeric_limits<std::int64_t>::max())},
            {"f", Attribute::ofFloat(static_cast<double>(0.1f))},
            {"fint", Attribute::ofFloat(2.0)},
            {"fneg0", Attribute::ofFloat(-0.0)},
            {"finf", Attribute::ofFloat(-std::numeric_limits<double>::infinity())},
            {"fnan", Attribute::ofFloat(std::numeric_limits<double>::quiet_NaN())},
            {"s", Attribute::ofString("quote \" tick ` nl \n ü")},
            {"s_empty", Attribute::ofString("")},
            {"is", Attribute::ofInts({1, -2, 3})},
            {"is_empty", Attribute::ofInts({})},
            {"fs", Attribute::ofFloats({1.0, 0.25, std::numeric_limits<double>::infinity()})},
            {"fs_empty", Attribute::ofFloats({})},
            {"ss", Attribute::ofStrings({"a", ""})},
            {"ss_empty", Attribute::ofStrings({})},
            {"t", Attribute::ofTensor(t1)},
            {"ts", tensors}},
           "com.acme");
    b.output("y");
    ir::Model m = finish(b, {{"", 17}, {"com.acme", 1}});
    m.graph.value(m.graph.findValue("y")).type = ir::test::ty("f32[2]");
    expectRoundTrip(m, "attributes");
}

TEST(DslRoundTripEdges, ConstantDtypes) {
    Builder b;
    b.input("x", "f32[3]");
    const std::uint16_t halves[3] = {0x3C00, 0xFC00, 0x0001};  // 1, -inf, smallest subnormal
    b.init("h", raw(ir::DType::F16, {3}, halves, sizeof halves));
    const std::uint16_t bf[2] = {0x3F80, 0xC2F7};
    b.init("bf", raw(ir::DType::BF16, {2}, bf, sizeof bf));
    const float fl[4] = {0.1f, -0.0f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()};
    b.init("fl", raw(ir::DType::F32, {2, 2}, fl, sizeof fl));
    const double dd[2] = {0.1, std::numeric_limits<double>::lowest()};
    b.init("dd", raw(ir::DType::F64, {2}, dd, sizeof dd));
    const std::int8_t i8[2] = {-128, 127};
    b.init("i8", raw(ir::DType::I8, {2}, i8, sizeof i8));
    const std::uint32_t u32[1] = {4294967295u};
    b.init("u32", raw(ir::DType::U32, {1}, u32, sizeof u32));
    const std::int64_t i64[2] = {std::numeric_limits<std::int64_t>::max(), -5};
    b.init("i64", raw(ir::DType::I64, {2}, i64, sizeof i64));
    const std::uint8_t bools[2] = {1, 0};
    b.init("bb", raw(ir::DType::Bool, {2}, bools, sizeof bools));
    TensorData strs;
    strs.dtype = ir::DType::String;
    strs.dims = {2};
    strs.strings = {"a\"b", ""};
    b.init("strs", strs);
    b.init("empty", TensorData::fromFloats({}, {0}));
    b.node("Identity", "id", {"x"}, {"y"});
    b.output("y");
    expectRoundTrip(finish(b), "constant dtypes");
}

TEST(DslRoundTripEdges, NanAndInfInConstants) {
    Builder b;
    b.input("x", "f32[2]");
    const float f[2] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
    b.init("nans", raw(ir::DType::F32, {2}, f, sizeof f));
    b.node("Add", "add", {"x", "nans"}, {"y"});
    b.output("y");
    expectRoundTrip(finish(b), "nan constants");
}

TEST(DslRoundTripEdges, ConstantNodes) {
    Builder b;
    b.node("Constant", "k", {}, {"k_out"},
           {{"value", Attribute::ofTensor(std::make_shared<TensorData>(TensorData::fromFloats({1, 2, 3}, {3})))}});
    b.node("Constant", "kf", {}, {"kf_out"}, {{"value_float", Attribute::ofFloat(0.5)}});
    b.node("Constant", "kis", {}, {"kis_out"}, {{"value_ints", Attribute::ofInts({1, 2})}});
    b.node("Add", "add", {"k_out", "kf_out"}, {"y"});
    b.output("y");
    b.output("kis_out");
    expectRoundTrip(finish(b), "constant nodes");
}

TEST(DslRoundTripEdges, ShapesSymbolicUnknownAndUnknownRank) {
    Builder b;
    b.input("a", "f32[batch,?,3]");
    b.input("b", "f32[*]");
    b.input("c", "f32[]");
    b.input("d", "i64[0]");
    ir::Model m0;
    b.node("Relu", "r1", {"a"}, {"ra"});
    b.node("Relu", "r2", {"b"}, {"rb"});
    b.output("ra");
    b.output("rb");
    b.output("c");
    b.output("d");
    ir::Model m = finish(b);
    // A symbolic dim that is not an identifier.
    m.graph.value(m.graph.findValue("a")).type.shape[0] = ir::Dim::symbolic("batch size");
    (void)ir::inferShapes(m.graph, "edge.onnx");
    expectRoundTrip(m, "shapes");
}

TEST(DslRoundTripEdges, UndefinedInputDtype) {
    Builder b;
    b.input("a", "f32[2]");
    b.g.value(b.val("a")).type.dtype = ir::DType::Undefined;
    b.node("Op", "n", {"a"}, {"y"}, {}, "com.acme");
    b.output("y");
    ir::Model m = finish(b, {{"", 17}, {"com.acme", 1}});
    expectRoundTrip(m, "undefined dtype");
}

TEST(DslRoundTripEdges, InputsAndInitializersAsOutputs) {
    Builder b;
    b.input("x", "f32[2]");
    b.init("w", TensorData::fromFloats({1, 2}, {2}));
    b.node("Add", "add", {"x", "w"}, {"y"});
    b.output("y");
    b.output("x");
    b.output("w");
    expectRoundTrip(finish(b), "inputs as outputs");
}

TEST(DslRoundTripEdges, CustomOpsetsAndEmptyGraphName) {
    Builder b;
    b.input("x", "f32[2]");
    b.node("Op", "n", {"x"}, {"y"}, {}, "com.acme");
    b.output("y");
    ir::Model m = finish(b, {{"", 13}, {"com.acme", 2}, {"ai.onnx.ml", 3}});
    m.graph.name.clear();
    m.graph.value(m.graph.findValue("y")).type = ir::test::ty("f32[2]");
    expectRoundTrip(m, "no default opset");
}

TEST(DslRoundTripEdges, MetadataStrings) {
    Builder b;
    b.input("x", "f32[2]");
    b.node("Relu", "r", {"x"}, {"y"});
    b.output("y");
    ir::Model m = finish(b);
    m.producerName = "pytorch \"2\"";
    m.producerVersion = "2.1\n";
    m.graph.docString = "doc with ` and \\";
    m.irVersion = 10;
    expectRoundTrip(m, "metadata");
}

/// If with branches reading an outer value; the then-branch holds a nested If reading a value two
/// levels up; the else-branch returns an outer value directly and has an initializer.
TEST(DslRoundTripEdges, NestedSubgraphsAndOuterScope) {
    auto inner = std::make_shared<ir::Graph>();
    {
        Builder ib;
        ib.node("Neg", "inner_neg", {"x"}, {"inner_y"});
        ib.output("inner_y");
        *inner = std::move(ib.g);
        inner->name = "inner";
    }
    auto inner2 = std::make_shared<ir::Graph>();
    {
        Builder ib;
        ib.node("Abs", "inner_abs", {"x"}, {"inner_z"});
        ib.output("inner_z");
        *inner2 = std::move(ib.g);
        inner2->name = "inner2";
    }
    auto thenG = std::make_shared<ir::Graph>();
    {
        Builder tb;
        tb.node("If", "nested_if", {"c"}, {"t_y"}, {{"then_branch", Attribute::ofGraph(inner)}, {"else_branch", Attribute::ofGraph(inner2)}});
        tb.output("t_y");
        *thenG = std::move(tb.g);
        thenG->name = "then";
    }
    auto elseG = std::make_shared<ir::Graph>();
    {
        Builder eb;
        eb.init("two", TensorData::fromFloats({2}, {}));
        eb.node("Mul", "e_mul", {"x", "two"}, {"e_y"});
        eb.output("e_y");
        *elseG = std::move(eb.g);
        elseG->name = "else";
    }
    Builder b;
    b.input("c", "bool[]");
    b.input("x", "f32[3]");
    b.node("If", "outer_if", {"c"}, {"y"}, {{"then_branch", Attribute::ofGraph(thenG)}, {"else_branch", Attribute::ofGraph(elseG)}});
    b.output("y");
    expectRoundTrip(finish(b), "nested subgraphs");
}

/// A Loop body whose input has no type (ONNX lets the Loop node give it) and whose output is an
/// outer-scope value passed straight through.
TEST(DslRoundTripEdges, LoopBodyUntypedInputAndOuterOutput) {
    auto body = std::make_shared<ir::Graph>();
    {
        Builder lb;
        lb.input("i", "i64[]");
        lb.input("cond", "bool[]");
        lb.input("acc", "f32[2]");
        lb.g.value(lb.val("i")).type = ir::TensorType{};
        lb.node("Identity", "keep", {"cond"}, {"cond_out"});
        lb.node("Add", "add", {"acc", "x"}, {"acc_out"});
        lb.output("cond_out");
        lb.output("acc_out");
        *body = std::move(lb.g);
        body->name = "body";
    }
    Builder b;
    b.input("x", "f32[2]");
    b.init("n", TensorData::fromInts({3}, {}));
    const std::uint8_t t[1] = {1};
    b.init("go", raw(ir::DType::Bool, {}, t, 1));
    b.node("Loop", "loop", {"n", "go", "x"}, {"out"}, {{"body", Attribute::ofGraph(body)}});
    b.output("out");
    expectRoundTrip(finish(b), "loop");
}

}  // namespace
