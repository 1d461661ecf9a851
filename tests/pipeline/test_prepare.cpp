// core/pipeline/prepare.h: shape specialisation and constant folding before lowering.
#include <gtest/gtest.h>

#include "core/pipeline/load_model.h"
#include "core/pipeline/prepare.h"
#include "core/test_ir_helpers.h"

namespace pipeline = tessera::pipeline;
namespace ir = tessera::ir;

namespace {
ir::TensorData zeros(std::vector<std::int64_t> dims) {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    return ir::TensorData::fromFloats(std::vector<float>(static_cast<std::size_t>(n), 0.f), dims);
}
}  // namespace

TEST(PipelinePrepare, MobileNetFoldsEveryConstantNode) {
    auto m = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/mobilenet_v2.onnx");
    ASSERT_TRUE(m.ok());
    pipeline::SpecialiseStats stats;
    auto s = pipeline::specialiseModel(*m, {zeros({1, 3, 224, 224})}, &stats);
    ASSERT_TRUE(s.ok()) << s.diagnostics().formatAll();
    EXPECT_EQ(stats.foldedNodes, 70);  // the 70 Constant nodes (Clip bounds)
    EXPECT_EQ(s->graph.numNodes(), 100u);
    EXPECT_EQ(m->graph.numValues(), s->graph.numValues());  // value ids preserved
    for (const auto& n : s->graph.nodes()) EXPECT_NE(n.opType, "Constant");
    EXPECT_EQ(s->graph.value(s->graph.outputs()[0]).type.str(), "f32[1,1000]");
}

TEST(PipelinePrepare, SymbolicBatchTakesTheFedExtent) {
    auto m = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/symbolic_batch.onnx");
    ASSERT_TRUE(m.ok());
    const auto& in = m->graph.value(m->graph.runtimeInputs()[0]);
    ASSERT_TRUE(in.type.shape.rankKnown());
    std::vector<std::int64_t> dims;
    for (const auto& d : in.type.shape.dims()) dims.push_back(d.isKnown() ? d.value : 3);
    auto s = pipeline::specialiseModel(*m, {zeros(dims)});
    ASSERT_TRUE(s.ok()) << s.diagnostics().formatAll();
    for (const auto& v : s->graph.values())
        if (v.type.shape.rankKnown()) {
            EXPECT_TRUE(v.type.shape.isStatic()) << v.name << " " << v.type.str();
        }
    EXPECT_EQ(s->graph.value(s->graph.outputs()[0]).type.shape[0].value, 3);
}

TEST(PipelinePrepare, WrongShapeNamesTheInputAndBothShapes) {
    auto m = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/mobilenet_v2.onnx");
    ASSERT_TRUE(m.ok());
    auto s = pipeline::specialiseModel(*m, {zeros({1, 3, 32, 32})});
    ASSERT_FALSE(s.ok());
    const std::string msg = s.diagnostics().formatAll();
    EXPECT_NE(msg.find("input 'input'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("f32[1,3,224,224]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("f32[1,3,32,32]"), std::string::npos) << msg;
    auto few = pipeline::specialiseModel(*m, {});
    ASSERT_FALSE(few.ok());
    EXPECT_NE(few.diagnostics().formatAll().find("1 runtime inputs, 0 were given"), std::string::npos);
}

TEST(PipelinePrepare, ShapeOnlyInputBindsTheShape) {
    auto m = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/symbolic_batch.onnx");
    ASSERT_TRUE(m.ok());
    const auto& in = m->graph.value(m->graph.runtimeInputs()[0]);
    std::vector<std::int64_t> dims;
    for (const auto& d : in.type.shape.dims()) dims.push_back(d.isKnown() ? d.value : 32);
    ir::TensorData shapeOnly;
    shapeOnly.dtype = in.type.dtype;
    shapeOnly.dims = dims;
    ASSERT_TRUE(shapeOnly.isShapeOnly());
    auto a = pipeline::specialiseModel(*m, {shapeOnly});
    auto b = pipeline::specialiseModel(*m, {zeros(dims)});
    ASSERT_TRUE(a.ok()) << a.diagnostics().formatAll();
    ASSERT_TRUE(b.ok());
    ASSERT_EQ(a->graph.numValues(), b->graph.numValues());
    for (std::size_t v = 0; v < a->graph.numValues(); ++v)
        EXPECT_EQ(a->graph.values()[v].type.str(), b->graph.values()[v].type.str()) << a->graph.values()[v].name;
    EXPECT_EQ(a->graph.value(a->graph.outputs()[0]).type.shape[0].value, 32);
    // A wrong shape is still refused; so is data that does not match its dims.
    ir::TensorData bad = shapeOnly;
    bad.dims.back() += 1;
    EXPECT_FALSE(pipeline::specialiseModel(*m, {bad}).ok());
    ir::TensorData torn = zeros(dims);
    torn.bytes.resize(4);
    ASSERT_FALSE(torn.isShapeOnly());
    EXPECT_NE(pipeline::specialiseModel(*m, {torn}).diagnostics().formatAll().find("data size does not match"),
              std::string::npos);
}

TEST(PipelinePrepare, ShapeOnlyShapeOperandIsRefused) {
    // x f32[2,6] reshaped by a runtime i64[2] input: its values decide the output's shape.
    ir::test::Builder b;
    b.input("x", "f32[2,6]");
    b.input("shape", "i64[2]");
    b.node("Reshape", "Reshape_0", {"x", "shape"}, {"y"});
    b.output("y");
    ir::Model m;
    m.graph = b.g;
    m.opsets[""] = 17;
    ir::TensorData shape;
    shape.dtype = ir::DType::I64;
    shape.dims = {2};
    auto s = pipeline::specialiseModel(m, {zeros({2, 6}), shape});
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.diagnostics().formatAll().find(
                  "input 'shape': its values decide shapes (a shape operand), but only its shape was given"),
              std::string::npos)
        << s.diagnostics().formatAll();
    auto full = pipeline::specialiseModel(m, {zeros({2, 6}), ir::TensorData::fromInts({3, 4}, {2})});
    ASSERT_TRUE(full.ok()) << full.diagnostics().formatAll();
    EXPECT_EQ(full->graph.value(full->graph.findValue("y")).type.str(), "f32[3,4]");
}
