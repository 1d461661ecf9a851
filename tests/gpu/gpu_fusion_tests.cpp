// Fusion plans on a real CUDA device (issue 6): every sample compiled under the hidet and
// fuseplanner plans runs in tessera-runner on the GPU, every fused kernel matches its member ops
// run in the reference interpreter (on the kernel's own inputs), and the graph outputs equal those
// of the unfused CUDA compile. Fused dw-pw kernels are checked at MobileNetV2 block shapes, at
// batch 1 and 4, through explicit plans. Skips visibly without a CUDA device or NVRTC.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <unistd.h>

#include "core/ir/graph.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/run.h"
#include "core/runtime/cuda/cuda_driver.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/runtime/runner_client.h"
#include "core/schedule/fusion_plan.h"

namespace tessera {
namespace {

std::string message(const support::DiagnosticList& d) {
    return d.firstError() ? d.firstError()->message : std::string("<no error>");
}

runtime::RunnerClientOptions runnerOptions() {
    runtime::RunnerClientOptions o;
    const char* env = std::getenv("TESSERA_RUNNER");
    o.runnerPath = env && *env ? std::string(env) : std::string(TESSERA_BINARY_DIR "/app/runner/tessera-runner");
    return o;
}

/// The build tree's samples, else ./samples (binaries carried to another machine run from a copy
/// of the repository).
std::string samplesDir() {
    const std::string built = TESSERA_SAMPLES;
    return std::filesystem::exists(built) ? built : std::string("samples");
}

double relL2(const ir::TensorData& a, const ir::TensorData& b) {
    double num = 0, den = 0;
    for (std::int64_t i = 0; i < a.numElements(); ++i) {
        const double d = a.elementAsDouble(i) - b.elementAsDouble(i);
        num += d * d;
        den += b.elementAsDouble(i) * b.elementAsDouble(i);
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

class GpuFusion : public ::testing::Test {
protected:
    void SetUp() override {
        auto devices = runtime::cuda::listCudaDevices();
        if (!devices) GTEST_SKIP() << "no CUDA driver/device: " << message(devices.diagnostics());
        if (auto info = runtime::cuda::nvrtcInfo(); !info)
            GTEST_SKIP() << "NVRTC not found: " << message(info.diagnostics());
    }

    /// Compiles for CUDA with `planner` (or `plan`), runs checked; returns the graph outputs.
    std::vector<std::pair<std::string, ir::TensorData>> run(const ir::Model& m, const std::vector<ir::TensorData>& in,
                                                            const std::string& planner,
                                                            const std::optional<schedule::FusionPlan>& plan = {},
                                                            int* fused = nullptr) {
        pipeline::CompileOptions co;
        co.target = lower::Target::Cuda;
        co.fallbackReference = true;
        co.planner = planner;
        co.plan = plan;
        auto cm = pipeline::compileModel(m, in, co);
        EXPECT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
        if (!cm.ok()) return {};
        // No group may be split (other warnings, e.g. a DSL `stage` the CUDA target does not honour, are fine).
        EXPECT_EQ(cm->warnings.formatAll().find("not fused"), std::string::npos) << cm->warnings.formatAll();
        if (fused) *fused = cm->plan.fusedGroupCount();
        pipeline::RunOptions ro;
        ro.check = true;
        ro.time = false;
        auto rep = pipeline::runModel(*cm, in, ro, m_runner);
        EXPECT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
        if (!rep.ok()) return {};
        EXPECT_TRUE(rep->allPassed);
        for (const auto& k : rep->kernels) EXPECT_TRUE(k.passed) << k.name << " rel.err " << k.maxRelError();
        return rep->outputs;
    }

    runtime::RunnerClient m_runner{runnerOptions()};
};

TEST_F(GpuFusion, EverySampleMatchesUnfusedUnderEachPlanner) {
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(samplesDir()))
        if (e.path().extension() == ".onnx" || e.path().extension() == ".tsr") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 10u);
    for (const std::string& f : files) {
        SCOPED_TRACE(f);
        auto m = pipeline::loadModel(f);
        ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
        const auto in = pipeline::defaultInputs(m->graph);
        const auto base = run(*m, in, "none");
        for (const char* planner : {"hidet", "fuseplanner"}) {
            SCOPED_TRACE(planner);
            const auto fused = run(*m, in, planner);
            ASSERT_EQ(fused.size(), base.size());
            for (std::size_t i = 0; i < base.size(); ++i)
                EXPECT_LT(relL2(fused[i].second, base[i].second), 1e-5) << base[i].first;
        }
    }
}

TEST_F(GpuFusion, DwPwKernelsAtMobileNetShapes) {
    // Depthwise 3x3 (stride s) -> Clip(0, 6) -> pointwise, as three nodes, fused by an explicit plan.
    struct Shape {
        std::int64_t n, c, h, s, k;
    };
    for (const Shape sh : {Shape{1, 32, 112, 1, 16}, Shape{1, 96, 112, 2, 24}, Shape{4, 144, 56, 1, 24},
                           Shape{4, 384, 14, 1, 96}, Shape{4, 960, 7, 1, 320}, Shape{2, 576, 14, 2, 160}}) {
        SCOPED_TRACE("n" + std::to_string(sh.n) + " c" + std::to_string(sh.c) + " h" + std::to_string(sh.h) + " s" +
                     std::to_string(sh.s) + " k" + std::to_string(sh.k));
        const std::string text =
            "tessera 0.1;\n"
            "input x: f32[" + std::to_string(sh.n) + ", " + std::to_string(sh.c) + ", " + std::to_string(sh.h) + ", " +
            std::to_string(sh.h) + "];\n"
            "param wd: f32[" + std::to_string(sh.c) + ", 1, 3, 3] = random(seed=1, low=-0.5, high=0.5);\n"
            "param bd: f32[" + std::to_string(sh.c) + "] = random(seed=2, low=-0.1, high=0.1);\n"
            "param lo: f32[] = 0.0;\nparam hi: f32[] = 6.0;\n"
            "param wp: f32[" + std::to_string(sh.k) + ", " + std::to_string(sh.c) +
            ", 1, 1] = random(seed=3, low=-0.2, high=0.2);\n"
            "param bp: f32[" + std::to_string(sh.k) + "] = random(seed=4, low=-0.1, high=0.1);\n"
            "dw = Conv(x, wd, bd, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[" + std::to_string(sh.s) + ", " +
            std::to_string(sh.s) + "], group=" + std::to_string(sh.c) + ");\n"
            "r = Clip(dw, lo, hi) as \"relu6\";\n"
            "pw = Conv(r, wp, bp);\n"
            "output pw;\n";
        const auto path = std::filesystem::temp_directory_path() / ("tessera_gpu_fusion_" + std::to_string(getpid()) + ".tsr");
        { std::ofstream(path) << text; }
        auto m = pipeline::loadModel(path.string());
        std::filesystem::remove(path);
        ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
        const auto in = pipeline::defaultInputs(m->graph);
        schedule::FusionPlan plan;
        plan.planner = "user";
        schedule::FusionGroup grp;
        grp.name = "block";
        grp.kind = schedule::FusionKind::DwPw;
        grp.ops = {"dw", "relu6", "pw"};
        grp.anchor = "dw";
        plan.groups.push_back(grp);
        int fused = 0;
        const auto base = run(*m, in, "none");
        const auto out = run(*m, in, "", plan, &fused);
        EXPECT_EQ(fused, 1);
        ASSERT_EQ(out.size(), 1u);
        ASSERT_EQ(base.size(), 1u);
        EXPECT_LT(relL2(out[0].second, base[0].second), 1e-5);
    }
}

}  // namespace
}  // namespace tessera
