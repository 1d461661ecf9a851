// Imports every sample model and compares it with samples/expected.json, which the onnx Python
// package wrote (samples/make_samples.py): node counts, op histograms, parameters, inputs/outputs.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/frontend/onnx/onnx_importer.h"

namespace {

using nlohmann::json;
using tessera::frontend::onnx::importModel;
namespace ir = tessera::ir;
namespace support = tessera::support;

std::string samplePath(const std::string& rel) { return std::string(TESSERA_SAMPLES) + "/" + rel; }

json loadExpected() {
    std::ifstream in(samplePath("expected.json"));
    EXPECT_TRUE(in.good()) << "samples/expected.json missing";
    json j;
    if (in) in >> j;
    return j;
}

std::string allDiagnostics(const support::DiagnosticList& d) {
    std::string s;
    for (const auto& item : d.items()) s += item.format() + "\n";
    return s;
}

const ir::TensorType& shownType(const ir::Value& v) {
    return (!v.type.isDefined() && v.onnxType) ? *v.onnxType : v.type;
}

json shapeJson(const ir::Shape& s) {
    json arr = json::array();
    for (const auto& d : s.dims()) {
        if (d.isKnown()) arr.push_back(d.value);
        else if (d.isSymbolic()) arr.push_back(d.symbol);
        else arr.push_back(nullptr);
    }
    return arr;
}

void checkValues(const ir::Graph& g, const std::vector<ir::ValueId>& ids, const json& expected, const std::string& what) {
    ASSERT_EQ(ids.size(), expected.size()) << what;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto& v = g.value(ids[i]);
        const auto& e = expected[i];
        EXPECT_EQ(v.name, e["name"].get<std::string>()) << what;
        const auto& t = shownType(v);
        EXPECT_EQ(std::string(ir::dtypeName(t.dtype)), e["dtype"].get<std::string>()) << what << " " << v.name;
        ASSERT_TRUE(t.shape.rankKnown()) << what << " " << v.name;
        EXPECT_EQ(shapeJson(t.shape), e["shape"]) << what << " " << v.name << " is " << t.str();
    }
}

class OnnxSampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxSampleTest, MatchesOnnxPython) {
    const json all = loadExpected();
    ASSERT_TRUE(all.contains("models"));
    const std::string rel = GetParam();
    ASSERT_TRUE(all["models"].contains(rel)) << rel;
    const json& e = all["models"][rel];

    auto result = importModel(samplePath(rel));
    ASSERT_TRUE(result.ok()) << allDiagnostics(result.diagnostics());
    const ir::Model& m = *result;
    const ir::Graph& g = m.graph;

    EXPECT_EQ(static_cast<std::int64_t>(g.numNodes()), e["nodes"].get<std::int64_t>());
    std::map<std::string, int> hist;
    for (const auto& n : g.nodes()) ++hist[n.opType];
    std::map<std::string, int> want;
    for (auto it = e["op_histogram"].begin(); it != e["op_histogram"].end(); ++it) want[it.key()] = it.value().get<int>();
    EXPECT_EQ(hist, want);
    EXPECT_EQ(m.irVersion, e["ir_version"].get<std::int64_t>());
    EXPECT_EQ(m.defaultOpset(), e["default_opset"].get<std::int64_t>());

    std::int64_t params = 0, bytes = 0;
    for (ir::ValueId id : g.initializers()) {
        const auto& v = g.value(id);
        ASSERT_TRUE(v.data) << v.name;
        EXPECT_TRUE(v.data->sizeConsistent()) << v.name;
        params += v.data->numElements();
        bytes += static_cast<std::int64_t>(v.data->bytes.size());
    }
    EXPECT_EQ(params, e["parameters"].get<std::int64_t>());
    EXPECT_EQ(bytes, e["parameter_bytes"].get<std::int64_t>());
    EXPECT_EQ(static_cast<std::int64_t>(g.initializers().size()), e["initializers"].get<std::int64_t>());

    checkValues(g, g.runtimeInputs(), e["inputs"], "inputs");
    checkValues(g, g.outputs(), e["outputs"], "outputs");
    EXPECT_FALSE(result.diagnostics().hasErrors());
}

INSTANTIATE_TEST_SUITE_P(Samples, OnnxSampleTest,
                         ::testing::Values("mobilenet_v2.onnx", "dw_pw_block.onnx", "opset21_mlp.onnx",
                                           "control_flow_if.onnx", "symbolic_batch.onnx", "external_data/model.onnx"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string n = info.param.substr(0, info.param.find('.'));
                             for (char& c : n)
                                 if (c == '/') c = '_';
                             return n;
                         });

TEST(OnnxSamples, MobileNetV2OutputIsInferred) {
    auto result = importModel(samplePath("mobilenet_v2.onnx"));
    ASSERT_TRUE(result.ok()) << allDiagnostics(result.diagnostics());
    const auto& g = result->graph;
    ASSERT_EQ(g.outputs().size(), 1u);
    const auto& out = g.value(g.outputs()[0]);
    EXPECT_EQ(out.type.str(), "f32[1,1000]");
    // Constant nodes stay nodes, with their value.
    int constants = 0;
    for (const auto& n : g.nodes()) {
        if (n.opType != "Constant") continue;
        ++constants;
        const auto* v = n.attr("value");
        ASSERT_NE(v, nullptr) << n.name;
        EXPECT_EQ(v->type, ir::AttrType::Tensor);
        ASSERT_TRUE(v->t);
        EXPECT_TRUE(v->t->sizeConsistent());
    }
    EXPECT_EQ(constants, 70);
    // Every node name is unique and non-empty.
    std::set<std::string> names;
    for (const auto& n : g.nodes()) {
        EXPECT_FALSE(n.name.empty());
        EXPECT_TRUE(names.insert(n.name).second) << n.name;
    }
    // No disagreement between Tessera's and ONNX's shape inference on this model.
    for (const auto& d : result.diagnostics().items())
        EXPECT_NE(d.severity, support::Severity::Error) << d.format();
}

TEST(OnnxSamples, DepthwiseConvKeepsGroup) {
    auto result = importModel(samplePath("dw_pw_block.onnx"));
    ASSERT_TRUE(result.ok()) << allDiagnostics(result.diagnostics());
    const auto& g = result->graph;
    const ir::NodeId dw = g.findNode("dw_conv");
    const ir::NodeId pw = g.findNode("pw_conv");
    ASSERT_NE(dw, ir::kNoNode);
    ASSERT_NE(pw, ir::kNoNode);
    EXPECT_EQ(g.node(dw).attrInt("group", 0), 32);
    EXPECT_EQ(g.node(pw).attrInt("group", 0), 1);
    EXPECT_EQ(g.node(dw).attrInts("kernel_shape"), (std::vector<std::int64_t>{3, 3}));
    EXPECT_EQ(g.node(dw).attrInts("pads"), (std::vector<std::int64_t>{1, 1, 1, 1}));
    // value_info is kept as the declared (ONNX) type.
    const ir::ValueId dwOut = g.findValue("dw_out");
    ASSERT_NE(dwOut, ir::kNoValue);
    ASSERT_TRUE(g.value(dwOut).onnxType.has_value());
    EXPECT_EQ(g.value(dwOut).onnxType->str(), "f32[1,32,56,56]");
    // Depthwise weight: [32,1,3,3].
    const ir::ValueId w = g.findValue("dw.weight");
    ASSERT_NE(w, ir::kNoValue);
    ASSERT_TRUE(g.value(w).data);
    EXPECT_EQ(g.value(w).data->dims, (std::vector<std::int64_t>{32, 1, 3, 3}));
}

TEST(OnnxSamples, IfAndLoopKeepTheirSubgraphs) {
    auto result = importModel(samplePath("control_flow_if.onnx"));
    ASSERT_TRUE(result.ok()) << allDiagnostics(result.diagnostics());
    const auto& g = result->graph;
    const ir::NodeId ifNode = g.findNode("branch");
    ASSERT_NE(ifNode, ir::kNoNode);
    const auto& n = g.node(ifNode);
    EXPECT_EQ(n.opType, "If");
    int graphs = 0;
    for (const auto& [name, a] : n.attributes)
        if (a.type == ir::AttrType::Graph) ++graphs;
    EXPECT_EQ(graphs, 2);
    const auto* thenB = n.attr("then_branch");
    const auto* elseB = n.attr("else_branch");
    ASSERT_TRUE(thenB && thenB->g);
    ASSERT_TRUE(elseB && elseB->g);
    EXPECT_EQ(thenB->g->numNodes(), 1u);
    EXPECT_EQ(thenB->g->node(0).opType, "Mul");
    EXPECT_EQ(elseB->g->node(0).opType, "Sub");
    // The branches read the outer "x": the name resolves inside the subgraph.
    EXPECT_NE(thenB->g->findValue("x"), ir::kNoValue);
    EXPECT_EQ(thenB->g->initializers().size(), 1u);

    const ir::NodeId loop = g.findNode("repeat_add");
    ASSERT_NE(loop, ir::kNoNode);
    const auto* body = g.node(loop).attr("body");
    ASSERT_TRUE(body && body->g);
    EXPECT_EQ(body->g->numNodes(), 2u);
    EXPECT_EQ(body->g->inputs().size(), 3u);
    EXPECT_EQ(body->g->outputs().size(), 2u);
}

TEST(OnnxSamples, SymbolicBatchDimSurvives) {
    auto result = importModel(samplePath("symbolic_batch.onnx"));
    ASSERT_TRUE(result.ok()) << allDiagnostics(result.diagnostics());
    const auto& g = result->graph;
    const auto in = g.runtimeInputs();
    ASSERT_EQ(in.size(), 1u);
    const auto& t = g.value(in[0]).type;
    ASSERT_EQ(t.shape.rank(), 2u);
    EXPECT_TRUE(t.shape[0].isSymbolic());
    EXPECT_EQ(t.shape[0].symbol, "N");
    EXPECT_EQ(t.shape[1].value, 64);
    const auto& out = g.value(g.outputs()[0]);
    ASSERT_TRUE(out.onnxType.has_value());
    EXPECT_EQ(out.onnxType->shape[0].symbol, "N");
}

TEST(OnnxSamples, ExternalDataIsLoadedFromTheModelFolder) {
    auto result = importModel(samplePath("external_data/model.onnx"));
    ASSERT_TRUE(result.ok()) << allDiagnostics(result.diagnostics());
    const auto& g = result->graph;
    std::ifstream in(samplePath("external_data/weights.bin"), std::ios::binary);
    ASSERT_TRUE(in.good());
    std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

    const ir::ValueId w = g.findValue("conv.weight");
    const ir::ValueId b = g.findValue("conv.bias");
    ASSERT_NE(w, ir::kNoValue);
    ASSERT_NE(b, ir::kNoValue);
    const auto& wd = *g.value(w).data;
    const auto& bd = *g.value(b).data;
    EXPECT_EQ(wd.dims, (std::vector<std::int64_t>{16, 8, 3, 3}));
    EXPECT_EQ(bd.dims, (std::vector<std::int64_t>{16}));
    ASSERT_EQ(wd.bytes.size(), 16u * 8 * 3 * 3 * 4);
    ASSERT_EQ(bd.bytes.size(), 16u * 4);
    // make_samples.py lays the tensors out with 64-byte alignment: weight at 0, bias right after.
    const std::size_t biasOffset = (wd.bytes.size() + 63) / 64 * 64;
    ASSERT_GE(file.size(), biasOffset + bd.bytes.size());
    EXPECT_EQ(std::memcmp(wd.bytes.data(), file.data(), wd.bytes.size()), 0);
    EXPECT_EQ(std::memcmp(bd.bytes.data(), file.data() + biasOffset, bd.bytes.size()), 0);
    // Weights are finite and look like the generator's N(0, 0.2) draws.
    const auto stats = ir::computeStats(wd);
    EXPECT_EQ(stats.nonFinite, 0);
    EXPECT_LT(stats.max, 2.0);
    EXPECT_GT(stats.min, -2.0);
    EXPECT_NE(stats.min, stats.max);
}

TEST(OnnxSamples, Opset21GivesTheNote) {
    auto result = importModel(samplePath("opset21_mlp.onnx"));
    ASSERT_TRUE(result.ok()) << allDiagnostics(result.diagnostics());
    EXPECT_EQ(result->irVersion, 10);
    EXPECT_EQ(result->defaultOpset(), 21);
    bool found = false;
    for (const auto& d : result.diagnostics().items())
        if (d.severity == support::Severity::Note &&
            d.message.find("opset 21 is newer than the ONNX 1.12 schemas in this build") != std::string::npos)
            found = true;
    EXPECT_TRUE(found) << allDiagnostics(result.diagnostics());
    const ir::NodeId gelu = result->graph.findNode("gelu");
    ASSERT_NE(gelu, ir::kNoNode);
    EXPECT_EQ(result->graph.node(gelu).attrString("approximate", ""), "tanh");
}

}  // namespace
