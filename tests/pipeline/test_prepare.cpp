// core/pipeline/prepare.h: shape specialisation and constant folding before lowering.
#include <gtest/gtest.h>

#include "core/pipeline/load_model.h"
#include "core/pipeline/prepare.h"

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
