// The fused attention kernel on a real CUDA device (core/lower/common/lower_attention.cpp): the
// torch-export attention pattern (tests/lower/attention_test_graphs.h) compiled for CUDA under the
// hidet planner is one attention kernel (one block per batch, head and tile of query rows, K/V
// blocks staged in shared memory), passes its check against the unfused member ops in the
// reference interpreter and gives the numbers of the unfused CUDA compile, for no mask, padding
// and causal masks, head dims 8 and 64, odd and long sequences (up to 1024 keys) and a single
// query; rows masked everywhere stay NaN as in the reference. Also the batched MatMul and long-axis
// Softmax shapes of transformer graphs. Skips visibly without a CUDA device or NVRTC.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/run.h"
#include "core/runtime/cuda/cuda_driver.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/runtime/runner_client.h"
#include "lower/attention_test_graphs.h"

namespace tessera {
namespace {

namespace at = attention_test;

std::string message(const support::DiagnosticList& d) {
    return d.firstError() ? d.firstError()->message : std::string("<no error>");
}

runtime::RunnerClientOptions runnerOptions() {
    runtime::RunnerClientOptions o;
    const char* env = std::getenv("TESSERA_RUNNER");
    o.runnerPath = env && *env ? std::string(env) : std::string(TESSERA_BINARY_DIR "/app/runner/tessera-runner");
    return o;
}

/// relL2 over the elements where both are finite; NaN positions must agree.
double relL2(const ir::TensorData& a, const ir::TensorData& b) {
    double num = 0, den = 0;
    for (std::int64_t i = 0; i < a.numElements(); ++i) {
        const double x = a.elementAsDouble(i), y = b.elementAsDouble(i);
        if (std::isnan(x) || std::isnan(y)) {
            if (std::isnan(x) != std::isnan(y)) return INFINITY;
            continue;
        }
        num += (x - y) * (x - y);
        den += y * y;
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

class GpuAttention : public ::testing::Test {
protected:
    void SetUp() override {
        auto devices = runtime::cuda::listCudaDevices();
        if (!devices) GTEST_SKIP() << "no CUDA driver/device: " << message(devices.diagnostics());
        if (auto info = runtime::cuda::nvrtcInfo(); !info) GTEST_SKIP() << "NVRTC not found: " << message(info.diagnostics());
    }

    struct Ran {
        std::vector<std::pair<std::string, ir::TensorData>> outputs;
        int attention = 0;
    };

    Ran run(const ir::Model& m, const std::vector<ir::TensorData>& in, const std::string& planner) {
        pipeline::CompileOptions co;
        co.target = lower::Target::Cuda;
        co.planner = planner;
        auto cm = pipeline::compileModel(m, in, co);
        EXPECT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
        if (!cm.ok()) return {};
        EXPECT_EQ(cm->warnings.formatAll().find("not fused"), std::string::npos) << cm->warnings.formatAll();
        pipeline::RunOptions ro;
        ro.check = true;
        ro.time = false;
        auto rep = pipeline::runModel(*cm, in, ro, m_runner);
        EXPECT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
        if (!rep.ok()) return {};
        EXPECT_TRUE(rep->allPassed);
        for (const auto& k : rep->kernels) EXPECT_TRUE(k.passed) << k.name << " rel.err " << k.maxRelError();
        Ran r;
        r.outputs = rep->outputs;
        for (const auto& g : cm->plan.groups) r.attention += g.kind == schedule::FusionKind::Attention;
        return r;
    }

    runtime::RunnerClient m_runner{runnerOptions()};
};

TEST_F(GpuAttention, FusedKernelMatchesUnfused) {
    std::vector<at::AttnSpec> specs;
    auto add = [&](std::int64_t B, std::int64_t H, std::int64_t Sq, std::int64_t Sk, std::int64_t D, at::Mask m) {
        at::AttnSpec s;
        s.B = B, s.H = H, s.Sq = Sq, s.Sk = Sk, s.D = D, s.Dv = D, s.mask = m;
        specs.push_back(s);
    };
    add(2, 2, 5, 7, 8, at::Mask::None);
    add(2, 4, 16, 16, 64, at::Mask::Padding);
    add(1, 2, 33, 33, 64, at::Mask::Causal);
    add(2, 3, 129, 129, 8, at::Mask::CausalWhere);
    add(1, 8, 1, 1024, 64, at::Mask::Padding);
    add(1, 4, 512, 512, 64, at::Mask::Causal);
    specs.back().headMerge = true;
    specs.push_back(specs[1]);
    specs.back().padded = {16, 3};  // batch 0 masked everywhere: NaN rows
    for (const at::AttnSpec& s : specs) {
        SCOPED_TRACE("B" + std::to_string(s.B) + " H" + std::to_string(s.H) + " Sq" + std::to_string(s.Sq) + " Sk" +
                     std::to_string(s.Sk) + " D" + std::to_string(s.D) + " mask " + std::to_string(static_cast<int>(s.mask)));
        ir::Model m;
        m.opsets[""] = 17;
        m.graph = at::buildAttention(s);
        const auto in = pipeline::defaultInputs(m.graph);
        const Ran base = run(m, in, "none");
        const Ran fused = run(m, in, "hidet");
        EXPECT_EQ(fused.attention, 1);
        ASSERT_EQ(fused.outputs.size(), 1u);
        ASSERT_EQ(base.outputs.size(), 1u);
        EXPECT_LT(relL2(fused.outputs[0].second, base.outputs[0].second), 1e-5);
    }
}

TEST_F(GpuAttention, BatchedMatMulAndLongSoftmax) {
    // [2,4,16,8] x [2,4,8,16], [2,16,32] x [32,64], [1,4,16,8] x [2,1,8,16]; Softmax over 4096
    // and 50257.
    struct Mm {
        std::string a, b;
    };
    for (const Mm& mm : {Mm{"f32[2,4,16,8]", "f32[2,4,8,16]"}, Mm{"f32[2,16,32]", "f32[32,64]"},
                         Mm{"f32[1,4,16,8]", "f32[2,1,8,16]"}}) {
        SCOPED_TRACE(mm.a + " x " + mm.b);
        ir::test::Builder b;
        b.input("A", mm.a);
        b.input("B", mm.b);
        b.node("MatMul", "MatMul_0", {"A", "B"}, {"Y"});
        b.output("Y");
        ASSERT_FALSE(ir::inferShapes(b.g, "mm").diagnostics.hasErrors());
        ir::Model m;
        m.opsets[""] = 17;
        m.graph = b.g;
        run(m, pipeline::defaultInputs(m.graph), "none");
    }
    for (const char* t : {"f32[4,4096]", "f32[1,3,50257]"}) {
        SCOPED_TRACE(t);
        ir::test::Builder b;
        b.input("X", t);
        b.node("Softmax", "Softmax_0", {"X"}, {"Y"}, {{"axis", ir::Attribute::ofInt(-1)}});
        b.output("Y");
        ASSERT_FALSE(ir::inferShapes(b.g, "sm").diagnostics.hasErrors());
        ir::Model m;
        m.opsets[""] = 17;
        m.graph = b.g;
        run(m, pipeline::defaultInputs(m.graph), "none");
    }
}

}  // namespace
}  // namespace tessera
