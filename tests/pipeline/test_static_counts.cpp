// Static counts of real lowered kernels (core/lower/counts.h): every kernel of MobileNetV2 and of
// the DSL samples, compiled for the CPU and for CUDA with and without a fusion planner (conv
// borders over flattened indices, tail predicates, GEMM tiles with lane and warp guards, MMAs),
// counted in closed form equals the splitting oracle, and on a small input also the count that
// visits every iteration; counting MobileNetV2 at batch 32 takes about as long as at batch 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/lower/counts.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"

namespace pipeline = tessera::pipeline;
namespace lower = tessera::lower;
namespace ir = tessera::ir;

namespace {

std::string sample(const std::string& name) { return std::string(TESSERA_SAMPLES) + "/" + name; }

void expectSameCounts(const lower::KernelCounts& a, const lower::KernelCounts& b) {
    EXPECT_EQ(a.flops, b.flops);
    EXPECT_EQ(a.loadBytes, b.loadBytes);
    EXPECT_EQ(a.storeBytes, b.storeBytes);
    EXPECT_EQ(a.sharedLoadBytes, b.sharedLoadBytes);
    EXPECT_EQ(a.sharedStoreBytes, b.sharedStoreBytes);
    EXPECT_EQ(a.localLoadBytes, b.localLoadBytes);
    EXPECT_EQ(a.localStoreBytes, b.localStoreBytes);
    EXPECT_EQ(a.compulsoryBytes, b.compulsoryBytes);
    EXPECT_EQ(a.exact, b.exact);
}

struct Variant {
    lower::Target target;
    std::string planner;
};

const std::vector<Variant> kVariants{{lower::Target::Cpu, "none"},
                                     {lower::Target::Cpu, "fuseplanner"},
                                     {lower::Target::Cuda, "none"},
                                     {lower::Target::Cuda, "fuseplanner"}};

std::string nameOf(const Variant& v) { return std::string(v.target == lower::Target::Cuda ? "cuda" : "cpu") + " " + v.planner; }

pipeline::CompiledModel compiled(const ir::Model& m, const std::vector<ir::TensorData>& inputs, const Variant& v) {
    pipeline::CompileOptions o;
    o.target = v.target;
    o.planner = v.planner;
    o.fallbackReference = true;
    auto cm = pipeline::compileModel(m, inputs, o);
    EXPECT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    return cm.ok() ? std::move(*cm) : pipeline::CompiledModel{};
}

/// MobileNetV2 (samples/, batch 1 at 224 x 224) with its input's batch and image dims made
/// symbolic, so that compiling specialises it to the input given.
ir::Model mobileNet() {
    auto m = pipeline::loadModel(sample("mobilenet_v2.onnx"));
    EXPECT_TRUE(m.ok()) << m.diagnostics().formatAll();
    if (!m.ok()) return {};
    ir::Graph& g = m->graph;
    for (const ir::ValueId v : g.inputs()) {
        ir::Value& in = g.value(v);
        if (in.isInitializer || in.type.shape.rank() != 4) continue;
        for (const std::size_t d : {0, 2, 3}) {
            in.type.shape[d] = ir::Dim::symbolic(d == 0 ? "N" : d == 2 ? "H" : "W");
            if (in.onnxType) in.onnxType->shape[d] = in.type.shape[d];
        }
    }
    for (const ir::ValueId v : g.outputs()) {
        ir::Value& out = g.value(v);
        if (out.type.shape.rank() >= 1) out.type.shape[0] = ir::Dim::symbolic("N");
        if (out.onnxType && out.onnxType->shape.rank() >= 1) out.onnxType->shape[0] = ir::Dim::symbolic("N");
    }
    return std::move(*m);
}

/// A zero input of the given shape (counts do not read data).
std::vector<ir::TensorData> mobileNetInput(std::vector<std::int64_t> dims) {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    return {ir::TensorData::fromFloats(std::vector<float>(static_cast<std::size_t>(n), 0.0f), std::move(dims))};
}

TEST(StaticCounts, MobileNetKernelsMatchEveryIterationOnASmallInput) {
    const ir::Model m = mobileNet();
    const auto inputs = mobileNetInput({2, 3, 8, 8});
    for (const Variant& v : kVariants) {
        SCOPED_TRACE(nameOf(v));
        const pipeline::CompiledModel cm = compiled(m, inputs, v);
        int kernels = 0;
        for (const auto& step : cm.steps) {
            if (step.kind != pipeline::StepKind::Kernel) continue;
            SCOPED_TRACE(step.name);
            ++kernels;
            expectSameCounts(step.counts, lower::countKernel(step.kernel, lower::CountMethod::Splitting));
            expectSameCounts(step.counts, lower::countKernel(step.kernel, lower::CountMethod::Enumerate));
        }
        EXPECT_GT(kernels, 10);
    }
}

TEST(StaticCounts, MobileNetKernelsMatchTheSplittingOracleAtBatch3) {
    // 3 x 40 x 40: odd batch and image sizes that no tile divides.
    const ir::Model m = mobileNet();
    const auto inputs = mobileNetInput({3, 3, 40, 40});
    for (const Variant& v : kVariants) {
        SCOPED_TRACE(nameOf(v));
        const pipeline::CompiledModel cm = compiled(m, inputs, v);
        for (const auto& step : cm.steps)
            if (step.kind == pipeline::StepKind::Kernel) {
                SCOPED_TRACE(step.name);
                expectSameCounts(step.counts, lower::countKernel(step.kernel, lower::CountMethod::Splitting));
            }
    }
}

TEST(StaticCounts, DslSampleKernelsMatchTheOracles) {
    for (const auto& e : std::filesystem::directory_iterator(TESSERA_SAMPLES)) {
        if (e.path().extension() != ".tsr") continue;
        SCOPED_TRACE(e.path().filename().string());
        auto m = pipeline::loadModel(e.path().string());
        ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
        const auto inputs = pipeline::defaultInputs(m->graph);
        for (const lower::Target t : {lower::Target::Cpu, lower::Target::Cuda}) {
            pipeline::CompileOptions o;
            o.target = t;
            o.fallbackReference = true;
            auto cm = pipeline::compileModel(*m, inputs, o);
            ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
            for (const auto& step : cm->steps)
                if (step.kind == pipeline::StepKind::Kernel) {
                    SCOPED_TRACE(step.name);
                    expectSameCounts(step.counts, lower::countKernel(step.kernel, lower::CountMethod::Splitting));
                }
        }
    }
}

TEST(StaticCounts, MobileNetBatch32CountsAreExactAndScaleWithTheBatch) {
    // Counting time is a benchmark (bench/RESULTS.md, "closed-form counts"), not a test; what a
    // test can hold is that batch 32 is counted exactly and does 32x the work of batch 1.
    const ir::Model m = mobileNet();
    for (const Variant& v : {kVariants[0], kVariants[2], kVariants[3]}) {
        SCOPED_TRACE(nameOf(v));
        double flops[2] = {0, 0};
        int i = 0;
        for (const std::int64_t batch : {1, 32}) {
            const pipeline::CompiledModel cm = compiled(m, mobileNetInput({batch, 3, 224, 224}), v);
            for (const auto& step : cm.steps)
                if (step.kind == pipeline::StepKind::Kernel) {
                    const lower::KernelCounts c = lower::countKernel(step.kernel);
                    EXPECT_TRUE(c.exact) << step.name;
                    flops[i] += c.flops;
                }
            ++i;
        }
        EXPECT_GT(flops[1], 31 * flops[0]);
    }
}

}  // namespace
