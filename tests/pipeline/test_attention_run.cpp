// The attention fusion end to end on the CPU: the torch-export attention pattern
// (tests/lower/attention_test_graphs.h) compiled under the hidet planner becomes one fused
// attention kernel (plus nothing else), runs in tessera-runner, passes its check against the
// unfused member ops in the reference interpreter, and gives the numbers of the unfused compile
// (planner none), for padding and causal masks, head dims 8 and 64 and odd sequence lengths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/run.h"
#include "core/runtime/runner_client.h"
#include "lower/attention_test_graphs.h"

namespace pipeline = tessera::pipeline;
namespace runtime = tessera::runtime;
namespace schedule = tessera::schedule;
namespace ir = tessera::ir;
namespace at = tessera::attention_test;

namespace {

bool haveCompiler() { return std::system("c++ --version > /dev/null 2>&1") == 0; }

runtime::RunnerClientOptions runnerOptions() {
    runtime::RunnerClientOptions o;
    o.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    o.threads = 2;
    return o;
}

struct Ran {
    std::vector<std::pair<std::string, ir::TensorData>> outputs;
    int kernels = 0;
    int attentionKernels = 0;
};

Ran runWith(const ir::Model& m, const std::vector<ir::TensorData>& inputs, const std::string& planner,
            runtime::RunnerClient& runner) {
    pipeline::CompileOptions co;
    co.planner = planner;
    auto cm = pipeline::compileModel(m, inputs, co);
    EXPECT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    if (!cm.ok()) return {};
    EXPECT_TRUE(cm->warnings.items().empty()) << cm->warnings.formatAll();
    pipeline::RunOptions ro;
    ro.check = true;
    ro.time = false;
    auto rep = pipeline::runModel(*cm, inputs, ro, runner);
    EXPECT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
    if (!rep.ok()) return {};
    EXPECT_TRUE(rep->allPassed);
    for (const auto& k : rep->kernels) EXPECT_TRUE(k.passed) << k.name << " rel.err " << k.maxRelError();
    Ran r;
    r.outputs = rep->outputs;
    r.kernels = cm->kernelCount();
    for (const auto& g : cm->plan.groups) r.attentionKernels += g.kind == schedule::FusionKind::Attention;
    return r;
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

}  // namespace

TEST(AttentionRun, FusedKernelChecksAndMatchesTheUnfusedCompile) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    runtime::RunnerClient runner(runnerOptions());
    std::vector<at::AttnSpec> specs(3);
    specs[0].mask = at::Mask::Padding;
    specs[0].headMerge = true;
    specs[1].B = 1, specs[1].H = 4, specs[1].Sq = 33, specs[1].Sk = 33, specs[1].D = 64, specs[1].Dv = 64;
    specs[1].mask = at::Mask::Causal;
    specs[2].B = 2, specs[2].H = 2, specs[2].Sq = 1, specs[2].Sk = 77, specs[2].mask = at::Mask::None;
    specs[2].scale = at::Scale::DivScores;
    for (const at::AttnSpec& s : specs) {
        SCOPED_TRACE("Sq " + std::to_string(s.Sq) + " Sk " + std::to_string(s.Sk) + " D " + std::to_string(s.D));
        ir::Model m;
        m.opsets[""] = 17;
        m.graph = at::buildAttention(s);
        const auto inputs = pipeline::defaultInputs(m.graph);
        const Ran base = runWith(m, inputs, "none", runner);
        const Ran fused = runWith(m, inputs, "hidet", runner);
        EXPECT_EQ(fused.kernels, 1);
        EXPECT_EQ(fused.attentionKernels, 1);
        EXPECT_GT(base.kernels, 3);
        ASSERT_EQ(fused.outputs.size(), 1u);
        ASSERT_EQ(base.outputs.size(), 1u);
        ASSERT_EQ(fused.outputs[0].second.dims, base.outputs[0].second.dims);
        EXPECT_LT(relL2(fused.outputs[0].second, base.outputs[0].second), 1e-5);
    }
}
