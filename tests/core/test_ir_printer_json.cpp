// Printer golden files and the JSON round trip.
//
// Golden files live in tests/golden/ir/. To regenerate them after an intended format change, run
//   TESSERA_UPDATE_GOLDEN=1 ./tests/tessera_core_tests --gtest_filter='IrPrinter*'
// from the build directory, then review the diff (`git diff tests/golden/ir`) before committing.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/core/golden.h"
#include "core/ir/json.h"
#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "tests/core/test_ir_helpers.h"

using namespace tessera::ir;
using namespace tessera::ir::test;

namespace {

/// Depthwise + pointwise block with a symbolic batch, a Constant-fed Reshape, an unregistered
/// op, a declared-type disagreement and an If with subgraphs: every printer feature once.
Model blockModel() {
    Builder b;
    b.input("x", "f32[N,8,16,16]");
    std::vector<float> dw(8 * 9);
    for (std::size_t i = 0; i < dw.size(); ++i) dw[i] = static_cast<float>(i) * 0.25f - 1.0f;
    b.init("dw_w", TensorData::fromFloats(dw, {8, 1, 3, 3}));
    b.init("pw_w", TensorData::fromFloats(std::vector<float>(16 * 8, 0.125f), {16, 8, 1, 1}));
    b.init("pw_b", TensorData::fromFloats(std::vector<float>(16, 0.0f), {16}));
    b.g.value(b.val("pw_b")).isGraphInput = true;
    b.g.inputs().push_back(b.val("pw_b"));
    b.node("Conv", "dw", {"x", "dw_w"}, {"dw_out"},
           {{"group", Attribute::ofInt(8)}, {"kernel_shape", Attribute::ofInts({3, 3})}, {"pads", Attribute::ofInts({1, 1, 1, 1})},
            {"strides", Attribute::ofInts({2, 2})}});
    b.node("Clip", "relu6", {"dw_out", "", ""}, {"act"}, {{"min", Attribute::ofFloat(0)}, {"max", Attribute::ofFloat(6)}});
    b.node("Conv", "pw", {"act", "pw_w", "pw_b"}, {"pw_out"});
    b.node("Constant", "shape_k", {}, {"shape"}, {{"value", Attribute::ofTensor(std::make_shared<TensorData>(TensorData::fromInts({0, -1}, {2})))}});
    b.node("Reshape", "flat", {"pw_out", "shape"}, {"flat_out"});
    b.node("MyNorm", "custom", {"flat_out"}, {"norm"}, {{"eps", Attribute::ofFloat(1e-5)}}, "com.acme");
    b.g.value(b.val("norm")).onnxType = ty("f32[N,1024]");
    b.node("ReduceMean", "mean", {"flat_out"}, {"m"}, {{"axes", Attribute::ofInts({1})}, {"keepdims", Attribute::ofInt(1)}});
    b.g.value(b.val("m")).onnxType = ty("f32[N,2]");

    Builder then;
    then.node("Identity", "then_id", {"m"}, {"then_out"});
    then.output("then_out");
    then.g.name = "then";
    Builder els;
    els.node("Neg", "else_neg", {"m"}, {"else_out"});
    els.output("else_out");
    els.g.name = "else";
    b.input("flag", "bool[]");
    b.node("If", "branch", {"flag"}, {"z"},
           {{"then_branch", Attribute::ofGraph(std::make_shared<Graph>(std::move(then.g)))},
            {"else_branch", Attribute::ofGraph(std::make_shared<Graph>(std::move(els.g)))}});
    b.output("norm");
    b.output("z");
    b.g.name = "dw_block";
    Model m;
    m.graph = std::move(b.g);
    m.irVersion = 9;
    m.opsets = {{"", 18}, {"com.acme", 1}};
    m.producerName = "tessera-tests";
    m.producerVersion = "1";
    inferShapes(m.graph);
    return m;
}

/// Names that need quoting or escaping, strings and bools in constants.
Graph oddNamesGraph() {
    Builder b;
    b.input("in put", "f32[2]");
    b.input("ünï", "f32[2]");
    TensorData s;
    s.dtype = DType::String;
    s.dims = {2};
    s.strings = {"a\"b", "c\\d"};
    b.init("labels", s);
    TensorData flags;
    flags.dtype = DType::Bool;
    flags.dims = {3};
    flags.bytes = {1, 0, 1};
    b.init("flags", flags);
    b.node("Add", "quote\"d */", {"in put", "ünï"}, {"sum"});
    b.node("Relu", "", {"sum"}, {"out\n"});
    b.output("out\n");
    inferShapes(b.g);
    return std::move(b.g);
}

}  // namespace

TEST(IrPrinter, BlockGolden) {
    const Model m = blockModel();
    const std::string text = printModel(m);
    tessera::test::checkGolden("ir/dw_block.txt", text);
    // Stable: printing twice gives identical text; the facts are where the format promises.
    EXPECT_EQ(printModel(m), text);
    EXPECT_NE(text.find("%dw_out: f32[N,8,8,8] = Conv \"dw\" (%x, %dw_w)"), std::string::npos) << text;
    EXPECT_NE(text.find("%m: f32[N,1] (declared f32[N,2]) = ReduceMean"), std::string::npos) << text;
    EXPECT_NE(text.find("# unregistered op"), std::string::npos);
}

TEST(IrPrinter, OddNamesGolden) {
    const Graph g = oddNamesGraph();
    const std::string text = printGraph(g);
    tessera::test::checkGolden("ir/odd_names.txt", text);
    EXPECT_NE(text.find("%\"in put\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"quote\\\"d */\""), std::string::npos) << text;
    EXPECT_NE(text.find("%\"out\\x0a\""), std::string::npos) << text;
}

TEST(IrPrinter, CyclicGraphStillPrints) {
    Builder b;
    b.node("Relu", "a", {"q"}, {"p"});
    b.node("Relu", "b", {"p"}, {"q"});
    const std::string text = printGraph(b.g);
    EXPECT_NE(text.find("# cycle: nodes in stored order"), std::string::npos);
    EXPECT_NE(text.find("%p = Relu \"a\" (%q)"), std::string::npos) << text;
}

// ------------------------------------------------------------------------------------ JSON

TEST(IrJson, RoundTripWithData) {
    Model m = blockModel();
    // Extra attribute kinds: NaN/inf floats, strings, a tensor, and a non-UTF-8 name.
    Node& custom = m.graph.node(m.graph.findNode("custom"));
    custom.setAttr("weird", Attribute::ofFloats({std::nan(""), INFINITY, -INFINITY, 1.5}));
    custom.setAttr("tags", Attribute::ofStrings({"a", "b\xff"}));
    const nlohmann::json j = toJson(m.graph, true);
    const std::string dumped = j.dump();  // must not throw on invalid UTF-8
    const auto back = graphFromJson(nlohmann::json::parse(dumped));
    ASSERT_TRUE(back.ok()) << back.diagnostics().items().front().format();
    const Graph& g2 = *back;
    EXPECT_EQ(printGraph(g2), printGraph(m.graph));
    ASSERT_EQ(g2.numValues(), m.graph.numValues());
    for (std::size_t i = 0; i < g2.numValues(); ++i) {
        const Value& a = m.graph.value(static_cast<ValueId>(i));
        const Value& b = g2.value(static_cast<ValueId>(i));
        EXPECT_EQ(a.name, b.name);
        EXPECT_EQ(a.type, b.type) << a.name;
        EXPECT_EQ(a.onnxType.has_value(), b.onnxType.has_value());
        EXPECT_EQ(a.isGraphInput, b.isGraphInput);
        EXPECT_EQ(a.isInitializer, b.isInitializer);
        EXPECT_EQ(a.isGraphOutput, b.isGraphOutput);
        ASSERT_EQ(a.data != nullptr, b.data != nullptr);
        if (a.data) {
            EXPECT_EQ(a.data->bytes, b.data->bytes) << a.name;
        }
    }
    const Node& c2 = g2.node(g2.findNode("custom"));
    EXPECT_EQ(c2.domain, "com.acme");
    const auto fl = c2.attrFloats("weird");
    ASSERT_EQ(fl.size(), 4u);
    EXPECT_TRUE(std::isnan(fl[0]));
    EXPECT_EQ(fl[1], INFINITY);
    EXPECT_EQ(fl[3], 1.5);
    EXPECT_EQ(c2.attr("tags")->strings[1], "b\xff");
    const Node& k = g2.node(g2.findNode("shape_k"));
    ASSERT_TRUE(k.attr("value")->t);
    EXPECT_EQ(k.attr("value")->t->toInts(), (std::vector<std::int64_t>{0, -1}));
    const Node& iff = g2.node(g2.findNode("branch"));
    ASSERT_TRUE(iff.attr("then_branch")->g);
    EXPECT_EQ(iff.attr("then_branch")->g->name, "then");
    EXPECT_TRUE(verify(g2).empty());
}

TEST(IrJson, SummaryWithoutDataAndModel) {
    const Model m = blockModel();
    const auto j = toJson(m.graph, false);
    const auto& values = j.at("values");
    bool found = false;
    for (const auto& v : values) {
        if (v.at("name") == "dw_w") {
            found = true;
            EXPECT_EQ(v.at("data").at("bytes"), 8 * 9 * 4);
            EXPECT_EQ(v.at("data").at("dims"), nlohmann::json({8, 1, 3, 3}));
            EXPECT_FALSE(v.at("data").contains("base64"));
            EXPECT_EQ(v.at("type").at("shape"), nlohmann::json({8, 1, 3, 3}));
        }
        if (v.at("name") == "x") {
            EXPECT_EQ(v.at("type").at("shape"), nlohmann::json({"N", 8, 16, 16}));
        }
    }
    EXPECT_TRUE(found);
    const auto jm = toJson(m, false);
    EXPECT_EQ(jm.at("ir_version"), 9);
    EXPECT_EQ(jm.at("opsets").size(), 2u);
    EXPECT_EQ(jm.at("producer_name"), "tessera-tests");
    // A model object is accepted by graphFromJson (its graph is read).
    const auto g = graphFromJson(jm);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(g->numNodes(), m.graph.numNodes());
}

TEST(IrJson, MalformedInputGivesDiagnosticsNotExceptions) {
    using nlohmann::json;
    auto firstError = [](const json& j) {
        const auto r = graphFromJson(j);
        EXPECT_FALSE(r.ok()) << j.dump();
        if (r.ok() || !r.diagnostics().firstError()) return std::string();
        return r.diagnostics().firstError()->where + ": " + r.diagnostics().firstError()->message;
    };
    EXPECT_EQ(firstError(json(42)), "json graph: expected a graph object");
    EXPECT_EQ(firstError(json::object()), "json graph: missing key 'values'");
    EXPECT_EQ(firstError(json{{"values", 3}, {"nodes", json::array()}}), "json graph.values: expected an array");
    const json v = json{{"name", "a"}, {"type", {{"dtype", "f32"}, {"shape", {1}}}}};
    EXPECT_EQ(firstError(json{{"values", {v, v}}, {"nodes", json::array()}}), "json graph.values[1]: duplicate value name 'a'");
    EXPECT_EQ(firstError(json{{"values", {v}},
                              {"nodes", {{{"name", "n"}, {"op_type", "Relu"}, {"inputs", {"zz"}}, {"outputs", json::array()}}}}}),
              "json graph.nodes[0].inputs[0]: value 'zz' is not declared in values");
    const json badDtype = json{{"name", "a"}, {"type", {{"dtype", "f33"}, {"shape", nullptr}}}};
    EXPECT_EQ(firstError(json{{"values", {badDtype}}, {"nodes", json::array()}}), "json graph.values[0].type.dtype: unknown dtype 'f33'");
    const json negDim = json{{"name", "a"}, {"type", {{"dtype", "f32"}, {"shape", {-3}}}}};
    EXPECT_EQ(firstError(json{{"values", {negDim}}, {"nodes", json::array()}}), "json graph.values[0].type.shape[0]: negative extent -3");
    json badData = v;
    badData["data"] = {{"dtype", "f32"}, {"dims", {1}}, {"base64", "@@@="}};
    EXPECT_EQ(firstError(json{{"values", {badData}}, {"nodes", json::array()}}), "json graph.values[0].data.base64: invalid base64");
    json badAttr = {{"name", "n"}, {"op_type", "Relu"}, {"inputs", json::array()}, {"outputs", json::array()},
                    {"attributes", {{{"name", "k"}, {"type", "ints"}, {"value", "nope"}}}}};
    EXPECT_EQ(firstError(json{{"values", json::array()}, {"nodes", {badAttr}}}), "json graph.nodes[0].attributes[0].value: expected an array");
    // Deeply nested subgraphs are refused instead of recursing without bound.
    json deep = json{{"values", json::array()}, {"nodes", json::array()}};
    for (int i = 0; i < 200; ++i) {
        json node = {{"name", "n"}, {"op_type", "If"}, {"inputs", json::array()}, {"outputs", json::array()},
                     {"attributes", {{{"name", "g"}, {"type", "graph"}, {"value", deep}}}}};
        deep = json{{"values", json::array()}, {"nodes", {node}}};
    }
    EXPECT_NE(firstError(deep).find("nested too deep"), std::string::npos);
}
