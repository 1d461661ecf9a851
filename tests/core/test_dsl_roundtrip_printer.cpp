// The IR -> DSL printer (core/frontend/dsl/dsl_printer.h) on its own: golden files of the sample
// models, stability, name quoting, number spelling, constants by reference, and the structural
// equality that the round-trip tests (test_dsl_roundtrip.cpp) rely on.
//
// Golden files live in tests/golden/dsl/<sample>.tsr. Their `onnx("<sample>.onnx", ...)` references
// are relative to samples/ (as if the program were saved next to the model; the parser refuses
// paths with '..'), and test_dsl_roundtrip.cpp parses them with that base folder. To regenerate
// them after an intended printer change, run from the build directory
//   TESSERA_UPDATE_GOLDEN=1 ./tests/tessera_core_tests --gtest_filter='*DslPrinterGolden*'
// and review `git diff tests/golden/dsl` before committing.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "tests/core/golden.h"
#include "core/frontend/dsl/dsl_printer.h"
#include "core/frontend/onnx/onnx_importer.h"
#include "tests/core/test_ir_helpers.h"

namespace {

namespace ir = tessera::ir;
namespace dsl = tessera::frontend::dsl;
using ir::Attribute;
using ir::TensorData;
using ir::test::Builder;

std::string samplePath(const std::string& rel) { return std::string(TESSERA_SAMPLES) + "/" + rel; }

std::string diagnosticsText(const tessera::support::DiagnosticList& d) {
    std::string s;
    for (const auto& item : d.items()) s += item.format() + "\n";
    return s;
}

ir::Model importSample(const std::string& rel) {
    auto r = tessera::frontend::onnx::importModel(samplePath(rel));
    EXPECT_TRUE(r.ok()) << diagnosticsText(r.diagnostics());
    return r.ok() ? std::move(r.value()) : ir::Model{};
}

class DslPrinterGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(DslPrinterGolden, MatchesGoldenFile) {
    const std::string sample = GetParam();
    const ir::Model m = importSample(sample + ".onnx");
    tessera::test::checkGolden("dsl/" + sample + ".tsr", dsl::printDsl(m));
}

INSTANTIATE_TEST_SUITE_P(Samples, DslPrinterGolden,
                         ::testing::Values("dw_pw_block", "opset21_mlp", "control_flow_if", "symbolic_batch", "mobilenet_v2"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

TEST(DslPrinter, StableAcrossImportsAndCopies) {
    for (const char* s : {"mobilenet_v2.onnx", "control_flow_if.onnx", "external_data/model.onnx"}) {
        const ir::Model a = importSample(s);
        const ir::Model b = importSample(s);
        const ir::Model c = a;
        const std::string text = dsl::printDsl(a);
        EXPECT_EQ(text, dsl::printDsl(b)) << s;
        EXPECT_EQ(text, dsl::printDsl(c)) << s;
        EXPECT_EQ(text, dsl::printDsl(a)) << s;
    }
}

TEST(DslPrinter, LargeConstantsByReferenceSmallOnesInline) {
    const ir::Model m = importSample("dw_pw_block.onnx");
    const std::string text = dsl::printDsl(m);
    // Default reference: the file name of the model's source path.
    EXPECT_NE(text.find("param `dw.weight`: f32[32, 1, 3, 3] = onnx(\"dw_pw_block.onnx\", \"dw.weight\");"), std::string::npos) << text;
    EXPECT_NE(text.find("param `relu6.max`: f32[] = 6.0;"), std::string::npos) << text;
    EXPECT_NE(text.find("param `pw.bias`: f32[16] = [\n  -0.112778075,"), std::string::npos) << text;

    dsl::PrintOptions all;
    all.maxInlineElements = 1 << 20;
    const std::string inlined = dsl::printDsl(m, all);
    EXPECT_EQ(inlined.find("onnx("), std::string::npos);

    // No ONNX source: everything inline, whatever the size.
    ir::Model copy = m;
    copy.sourcePath.clear();
    EXPECT_EQ(dsl::printDsl(copy).find("onnx("), std::string::npos);
}

TEST(DslPrinter, HeaderOpsetsAndDomains) {
    const ir::Model m = importSample("opset21_mlp.onnx");
    const std::string text = dsl::printDsl(m);
    EXPECT_EQ(text.rfind("tessera 0.1;\nmodel name=\"opset21_mlp\", ir_version=10, producer=", 0), 0u) << text;
    EXPECT_NE(text.find("\nopset 21;\n"), std::string::npos);
    EXPECT_NE(text.find("gelu_out: f32[4, 128] = Gelu(fc2_out, approximate=\"tanh\") as \"gelu\";"), std::string::npos) << text;

    Builder b;
    b.input("x", "f32[4]");
    b.node("MyOp", "n", {"x"}, {"y"}, {}, "com.acme-corp.v2");
    b.node("Resize", "r", {"y", "", ""}, {"z"}, {}, "");  // not in the registry: needs ai.onnx::
    b.node("Custom", "c", {"z"}, {"w"}, {}, "com.model");  // `model` is reserved: string domain
    b.output("w");
    ir::Model model;
    model.graph = std::move(b.g);
    model.opsets = {{"", 17}, {"com.acme-corp.v2", 1}, {"ai.onnx.ml", 3}};
    const std::string t2 = dsl::printDsl(model);
    EXPECT_NE(t2.find("opset \"com.acme-corp.v2\" 1;"), std::string::npos) << t2;
    EXPECT_NE(t2.find("opset ai.onnx.ml 3;"), std::string::npos) << t2;
    EXPECT_NE(t2.find("y = \"com.acme-corp.v2\"::MyOp(x) as \"n\";"), std::string::npos) << t2;
    EXPECT_NE(t2.find("z = ai.onnx::Resize(y, _, _) as \"r\";"), std::string::npos) << t2;
    EXPECT_NE(t2.find("w = \"com.model\"::Custom(z) as \"c\";"), std::string::npos) << t2;
}

TEST(DslPrinter, Names) {
    EXPECT_EQ(dsl::dslName("x"), "x");
    EXPECT_EQ(dsl::dslName("fc1_out"), "fc1_out");
    EXPECT_EQ(dsl::dslName("_x9"), "_x9");
    EXPECT_EQ(dsl::dslName("onnx::Conv_538"), "`onnx::Conv_538`");
    EXPECT_EQ(dsl::dslName("input.1"), "`input.1`");
    EXPECT_EQ(dsl::dslName("0"), "`0`");
    EXPECT_EQ(dsl::dslName(""), "``");
    EXPECT_EQ(dsl::dslName(" "), "` `");
    // Reserved and contextual words.
    for (const char* w : {"input", "output", "param", "model", "graph", "tensor", "as", "_", "inf", "nan", "ints", "onnx",
                          "random", "sum", "max", "true"})
        EXPECT_EQ(dsl::dslName(w), std::string("`") + w + "`") << w;
    // Escapes; valid UTF-8 is kept, invalid bytes and control bytes are escaped.
    EXPECT_EQ(dsl::dslName("a`b\\c"), "`a\\`b\\\\c`");
    EXPECT_EQ(dsl::dslName("l1\nl2\r\n\t"), "`l1\\nl2\\r\\n\\t`");
    EXPECT_EQ(dsl::dslName(std::string("nul\0x", 5)), "`nul\\0x`");
    EXPECT_EQ(dsl::dslName("\x01\x7f"), "`\\x01\\x7f`");
    EXPECT_EQ(dsl::dslName("重み βeta 🔥"), "`重み βeta 🔥`");
    EXPECT_EQ(dsl::dslName("bad\xff\xc3"), "`bad\\xff\\xc3`");
    EXPECT_EQ(dsl::dslName("\xc0\x80"), "`\\xc0\\x80`");          // overlong NUL
    EXPECT_EQ(dsl::dslName("\xed\xa0\x80"), "`\\xed\\xa0\\x80`");  // surrogate
    EXPECT_EQ(dsl::dslString("say \"hi\" `x`"), "\"say \\\"hi\\\" `x`\"");
}

TEST(DslPrinter, HostileNamesStayOnOneLinePerStatement) {
    auto r = tessera::frontend::onnx::importModel(std::string(TESSERA_TEST_DATA) + "/bad/names_hostile.onnx");
    ASSERT_TRUE(r.ok()) << diagnosticsText(r.diagnostics());
    const std::string text = dsl::printDsl(*r);
    EXPECT_NE(text.find("`line1\\nline2\\r\\n\\ttabbed`: f32[1, 4, 8, 8] = Conv(`input \"quoted\" 'single'`"), std::string::npos) << text;
    EXPECT_NE(text.find("as \"conv \\\"one\\\" */ 节点\\n2\";"), std::string::npos) << text;
    EXPECT_NE(text.find("`weights/ünïcødé/重み/βeta→γ 🔥`"), std::string::npos) << text;
    // Every line is a whole statement (or a list continuation): no raw control characters.
    for (char c : text) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << static_cast<int>(c);
}

TEST(DslPrinter, AttributeSpelling) {
    Builder b;
    b.input("x", "f32[2]");
    b.node("MyOp", "n", {"x"}, {"y"},
           {{"f", Attribute::ofFloat(static_cast<double>(0.1f))},
            {"one", Attribute::ofFloat(1.0)},
            {"neg0", Attribute::ofFloat(-0.0)},
            {"big", Attribute::ofFloat(1e20)},
            {"tiny", Attribute::ofFloat(static_cast<double>(1e-5f))},
            {"pinf", Attribute::ofFloat(std::numeric_limits<double>::infinity())},
            {"ninf", Attribute::ofFloat(-std::numeric_limits<double>::infinity())},
            {"qnan", Attribute::ofFloat(std::numeric_limits<double>::quiet_NaN())},
            {"d", Attribute::ofFloat(0.1)},
            {"i", Attribute::ofInt(-7)},
            {"s", Attribute::ofString("a\"b")},
            {"e_ints", Attribute::ofInts({})},
            {"e_floats", Attribute::ofFloats({})},
            {"e_strings", Attribute::ofStrings({})},
            {"is", Attribute::ofInts({1, -2})},
            {"fs", Attribute::ofFloats({1.0, 0.5})},
            {"ss", Attribute::ofStrings({"a", "b"})},
            {"t", Attribute::ofTensor(std::make_shared<TensorData>(TensorData::fromInts({3, -1}, {2})))},
            {"input", Attribute::ofInt(1)}},
           "com.acme");
    b.output("y");
    ir::Model m;
    m.graph = std::move(b.g);
    const std::string text = dsl::printDsl(m);
    const std::string expect =
        "y = com.acme::MyOp(x, f=0.1, one=1.0, neg0=-0.0, big=1e+20, tiny=1e-05, pinf=inf, ninf=-inf, qnan=nan, "
        "d=0.1, i=-7, s=\"a\\\"b\", e_ints=ints[], e_floats=floats[], e_strings=strings[], is=[1, -2], "
        "fs=floats[1.0, 0.5], ss=[\"a\", \"b\"], t=tensor(i64[2], [3, -1]), `input`=1) as \"n\";";
    EXPECT_NE(text.find(expect), std::string::npos) << text;
}

TEST(DslPrinter, ConstantLiterals) {
    auto raw = [](ir::DType dt, std::vector<std::int64_t> dims, const void* p, std::size_t n) {
        TensorData t;
        t.dtype = dt;
        t.dims = std::move(dims);
        t.bytes.resize(n);
        std::memcpy(t.bytes.data(), p, n);
        return t;
    };
    Builder b;
    b.input("x", "f32[2]");
    const std::uint16_t halves[3] = {0x3C00, 0xBC00, 0x3555};  // 1, -1, 0.33325195
    b.init("h", raw(ir::DType::F16, {3}, halves, sizeof halves));
    const std::uint16_t bf[2] = {0x3F80, 0x7FC0};  // 1, nan
    b.init("bf", raw(ir::DType::BF16, {2}, bf, sizeof bf));
    const double dd[2] = {0.1, -2.5e-300};
    b.init("dd", raw(ir::DType::F64, {2}, dd, sizeof dd));
    const std::uint8_t bools[3] = {1, 0, 1};
    b.init("bb", raw(ir::DType::Bool, {3}, bools, sizeof bools));
    const std::uint64_t u64[1] = {18446744073709551615ull};  // no literal: onnx() or the loader's error
    b.init("u", raw(ir::DType::U64, {1}, u64, sizeof u64));
    const float negNan[1] = {-std::numeric_limits<float>::quiet_NaN()};
    b.init("negnan", raw(ir::DType::F32, {1}, negNan, sizeof negNan));
    const std::int64_t imin[1] = {std::numeric_limits<std::int64_t>::min()};
    b.init("imin", raw(ir::DType::I64, {1}, imin, sizeof imin));
    TensorData strs;
    strs.dtype = ir::DType::String;
    strs.dims = {2};
    strs.strings = {"a\nb", "ü"};
    b.init("strs", strs);
    b.init("empty", TensorData::fromFloats({}, {0, 3}));
    b.init("scalar", TensorData::fromInts({42}, {}));
    b.node("Identity", "y", {"x"}, {"y"});
    b.output("y");
    ir::Model m;
    m.graph = std::move(b.g);
    m.sourcePath = "some/dir/model.onnx";
    const std::string text = dsl::printDsl(m);
    EXPECT_NE(text.find("param h: f16[3] = [1.0, -1.0, 0.33325195];"), std::string::npos) << text;
    EXPECT_NE(text.find("param bf: bf16[2] = [1.0, nan];"), std::string::npos) << text;
    EXPECT_NE(text.find("param dd: f64[2] = [0.1, -2.5e-300];"), std::string::npos) << text;
    EXPECT_NE(text.find("param bb: bool[3] = [1, 0, 1];"), std::string::npos) << text;
    EXPECT_NE(text.find("param u: u64[1] = onnx(\"model.onnx\", \"u\");"), std::string::npos) << text;
    EXPECT_NE(text.find("param imin: i64[1] = onnx(\"model.onnx\", \"imin\");"), std::string::npos) << text;
    EXPECT_NE(text.find("param negnan: f32[1] = onnx(\"model.onnx\", \"negnan\");"), std::string::npos) << text;
    EXPECT_NE(text.find("param strs: string[2] = [\"a\\nb\", \"ü\"];"), std::string::npos) << text;
    EXPECT_NE(text.find("param empty: f32[0, 3] = [];"), std::string::npos) << text;
    EXPECT_NE(text.find("param scalar: i64[] = 42;"), std::string::npos) << text;
    EXPECT_NE(text.find("y = Identity(x);"), std::string::npos) << text;  // no type known: no annotation
}

TEST(DslPrinter, InputsAndInitializersKeepBothOrders) {
    Builder b;
    b.init("p0", TensorData::fromFloats({1}, {1}));
    b.input("x", "f32[1]");
    const ir::ValueId w = b.init("w", TensorData::fromFloats({2}, {1}));
    b.g.value(w).isGraphInput = true;
    b.g.inputs().push_back(w);
    b.init("p1", TensorData::fromFloats({3}, {1}));
    b.input("z", "f32[1]");
    b.node("Sum", "s", {"x", "w", "z", "p0", "p1"}, {"y"});
    b.output("y");
    ir::Model m;
    m.graph = std::move(b.g);
    const std::string text = dsl::printDsl(m);
    const std::string expect =
        "input x: f32[1];\nparam p0: f32[1] = [1.0];\ninput w: f32[1] = [2.0];\ninput z: f32[1];\nparam p1: f32[1] = [3.0];\n";
    EXPECT_NE(text.find(expect), std::string::npos) << text;
}

TEST(DslPrinter, NodeNamesOutputsAndOmittedValues) {
    Builder b;
    b.input("x", "f32[4,6]");
    b.node("Split", "x_split", {"x"}, {"a", "", "c"}, {{"axis", Attribute::ofInt(1)}, {"num_outputs", Attribute::ofInt(3)}});
    b.node("Relu", "a", {"a"}, {"r"});  // name equals a value name, not its own output: `as` needed
    b.node("Relu", "r2", {"c"}, {"r2"});  // name is the implicit one: no `as`
    b.node("Dropout", "dr", {"r2"}, {"d", ""});
    b.node("MyLog", "log0", {"d"}, {}, {}, "com.acme");  // no outputs
    b.output("r");
    b.output("d");
    b.output("x");
    // Builder names every listed output; "" stands for an omitted one.
    for (auto& n : b.g.nodes())
        for (auto& o : const_cast<ir::Node&>(n).outputs)
            if (o != ir::kNoValue && b.g.value(o).name.empty()) o = ir::kNoValue;
    ir::Model m;
    m.graph = std::move(b.g);
    const std::string text = dsl::printDsl(m);
    EXPECT_NE(text.find("a, _, c = Split(x, axis=1, num_outputs=3) as \"x_split\";"), std::string::npos) << text;
    EXPECT_NE(text.find("r = Relu(a) as \"a\";"), std::string::npos) << text;
    EXPECT_NE(text.find("r2 = Relu(c);"), std::string::npos) << text;
    EXPECT_NE(text.find("d, _ = Dropout(r2) as \"dr\";"), std::string::npos) << text;
    EXPECT_NE(text.find("\ncom.acme::MyLog(d) as \"log0\";"), std::string::npos) << text;
    EXPECT_NE(text.find("output r;\noutput d;\noutput x;\n"), std::string::npos) << text;
}

// ---- structural equality ------------------------------------------------------------------

TEST(DslStructuralEquality, EqualToItselfAndToAReimport) {
    for (const char* s : {"mobilenet_v2.onnx", "control_flow_if.onnx", "symbolic_batch.onnx"}) {
        const ir::Model a = importSample(s);
        const ir::Model b = importSample(s);
        std::string why;
        EXPECT_TRUE(dsl::structurallyEqual(a, b, &why)) << s << ": " << why;
        EXPECT_TRUE(dsl::structurallyEqual(a, a, &why)) << s << ": " << why;
    }
}

TEST(DslStructuralEquality, FindsEachKindOfDifference) {
    const ir::Model base = importSample("control_flow_if.onnx");
    auto differs = [&](const char* what, auto mutate, const char* expectInWhy) {
        ir::Model m = base;
        mutate(m);
        std::string why;
        EXPECT_FALSE(dsl::structurallyEqual(base, m, &why)) << what;
        EXPECT_NE(why.find(expectInWhy), std::string::npos) << what << ": " << why;
        why.clear();
        EXPECT_FALSE(dsl::structurallyEqual(m, base, &why)) << what;
    };
    auto nodeNamed = [](ir::Graph& g, const char* name) -> ir::Node& { return g.node(g.findNode(name)); };
    differs("ir version", [](ir::Model& m) { m.irVersion = 9; }, "ir_version");
    differs("opsets", [](ir::Model& m) { m.opsets["com.acme"] = 1; }, "opsets");
    differs("graph name", [](ir::Model& m) { m.graph.name = "other"; }, "graph name");
    differs("node name", [&](ir::Model& m) { nodeNamed(m.graph, "relu").name = "relu2"; }, "node");
    differs("op type", [&](ir::Model& m) { nodeNamed(m.graph, "relu").opType = "Sigmoid"; }, "Sigmoid");
    differs("domain", [&](ir::Model& m) { nodeNamed(m.graph, "relu").domain = "com.acme"; }, "com.acme");
    differs("attribute value", [&](ir::Model& m) { nodeNamed(m.graph, "sum_all").setAttr("keepdims", Attribute::ofInt(1)); },
            "keepdims");
    differs("attribute type", [&](ir::Model& m) { nodeNamed(m.graph, "sum_all").setAttr("keepdims", Attribute::ofFloat(0)); },
            "int vs float");
    differs("extra attribute", [&](ir::Model& m) { nodeNamed(m.graph, "relu").setAttr("alpha", Attribute::ofFloat(1)); },
            "attributes");
    differs("edge", [&](ir::Model& m) {
        auto& n = nodeNamed(m.graph, "relu");
        n.inputs[0] = m.graph.findValue("if_out");
        m.graph.rebuildIndex();
    }, "input 0");
    differs("output type", [&](ir::Model& m) { m.graph.value(m.graph.findValue("x_sum")).type.dtype = ir::DType::F64; },
            "f64");
    differs("input type", [&](ir::Model& m) { m.graph.value(m.graph.findValue("x")).type.shape[0] = ir::Dim::symbolic("N"); },
            "input 0");
    differs("initializer bytes", [&](ir::Model& m) {
        auto& v = m.graph.value(m.graph.findValue("zero"));
        auto d = std::make_shared<TensorData>(*v.data);
        d->bytes[0] ^= 1;
        v.data = d;
    }, "data differ");
    differs("initializer order", [&](ir::Model& m) { std::swap(m.graph.initializers()[0], m.graph.initializers()[1]); },
            "initializer 0");
    differs("subgraph", [&](ir::Model& m) {
        auto& n = nodeNamed(m.graph, "branch");
        auto a = *n.attr("then_branch");
        auto g = std::make_shared<ir::Graph>(*a.g);
        g->node(0).name = "renamed";
        a.g = g;
        n.setAttr("then_branch", a);
    }, "then_branch");
    differs("graph output", [](ir::Model& m) { m.graph.outputs().clear(); }, "outputs");

    // Floats compare at float32 precision (what ONNX stores), NaN equals NaN.
    ir::Model m = base;
    nodeNamed(m.graph, "sum_all").setAttr("f", Attribute::ofFloat(0.1));
    ir::Model n = base;
    nodeNamed(n.graph, "sum_all").setAttr("f", Attribute::ofFloat(static_cast<double>(0.1f)));
    EXPECT_TRUE(dsl::structurallyEqual(m, n));
    nodeNamed(m.graph, "sum_all").setAttr("f", Attribute::ofFloat(std::nan("")));
    nodeNamed(n.graph, "sum_all").setAttr("f", Attribute::ofFloat(std::nan("")));
    EXPECT_TRUE(dsl::structurallyEqual(m, n));

    // Options: metadata and constant bytes can be left out.
    ir::Model meta = base;
    meta.producerName = "someone else";
    dsl::EqualityOptions noMeta;
    noMeta.metadata = false;
    EXPECT_TRUE(dsl::structurallyEqual(base, meta, nullptr, noMeta));
}

}  // namespace
