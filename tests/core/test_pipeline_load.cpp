// core/pipeline/load_model.h: one loader for ONNX models and DSL programs.
#include <gtest/gtest.h>

#include "core/pipeline/load_model.h"

namespace pipeline = tessera::pipeline;

TEST(PipelineLoad, KindFromExtension) {
    EXPECT_EQ(pipeline::sourceKindOf("a/b/matmul.tsr"), pipeline::SourceKind::Dsl);
    EXPECT_EQ(pipeline::sourceKindOf("MATMUL.TSR"), pipeline::SourceKind::Dsl);
    EXPECT_EQ(pipeline::sourceKindOf("model.onnx"), pipeline::SourceKind::Onnx);
    EXPECT_EQ(pipeline::sourceKindOf("tsr"), pipeline::SourceKind::Onnx);
    EXPECT_EQ(pipeline::sourceKindOf("noextension"), pipeline::SourceKind::Onnx);
}

TEST(PipelineLoad, LoadsBothKinds) {
    auto onnx = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/dw_pw_block.onnx");
    ASSERT_TRUE(onnx.ok());
    EXPECT_EQ(onnx->graph.numNodes(), 3u);
    auto dsl = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/matmul_tiled.tsr");
    ASSERT_TRUE(dsl.ok());
    ASSERT_EQ(dsl->graph.numNodes(), 1u);
    EXPECT_EQ(dsl->graph.node(0).opType, "Compute");
    EXPECT_EQ(dsl->graph.value(dsl->graph.outputs()[0]).type.str(), "f32[256,256]");
}

TEST(PipelineLoad, ErrorsNameTheFile) {
    auto missing = pipeline::loadModel("does/not/exist.tsr");
    ASSERT_FALSE(missing.ok());
    ASSERT_NE(missing.diagnostics().firstError(), nullptr);
    EXPECT_NE(missing.diagnostics().firstError()->format().find("does/not/exist.tsr"), std::string::npos);
}
