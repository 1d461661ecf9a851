// Failing kernels keep their data (issue 8): the testing hook TESSERA_DEBUG_CORRUPT_KERNEL
// moves a kernel's output slice [n/2, n/2 + n/8) away from zero, the check flags it with the first bad
// element at n/2, got/want and the kernel's inputs are kept within RunOptions::keepFailingBytes
// (none over budget, none for passing kernels), and rerunInReference reproduces want.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>

#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/run.h"

namespace pipeline = tessera::pipeline;
namespace runtime = tessera::runtime;
namespace ir = tessera::ir;

namespace {

bool haveCompiler() { return std::system("c++ --version > /dev/null 2>&1") == 0; }

struct EnvGuard {
    explicit EnvGuard(const char* value) { setenv(pipeline::kCorruptKernelEnv, value, 1); }
    ~EnvGuard() { unsetenv(pipeline::kCorruptKernelEnv); }
};

struct Fixture {
    std::optional<pipeline::CompiledModel> cm;
    std::vector<ir::TensorData> inputs;
};

Fixture compileSample() {
    Fixture f;
    auto m = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/dw_pw_block.onnx");
    if (!m.ok()) return f;
    f.inputs = pipeline::defaultInputs(m->graph);
    pipeline::CompileOptions co;
    co.planner = "none";  // one kernel per op: dw_conv, relu6, pw_conv
    auto cm = pipeline::compileModel(*m, f.inputs, co);
    if (cm.ok()) f.cm = std::move(*cm);
    return f;
}

runtime::RunnerClientOptions runnerOptions() {
    runtime::RunnerClientOptions o;
    o.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    o.threads = 2;
    return o;
}

}  // namespace

TEST(FailingData, CorruptedKernelKeepsGotWantAndInputs) {
    if (!haveCompiler()) GTEST_SKIP() << "no host compiler";
    Fixture f = compileSample();
    ASSERT_TRUE(f.cm);
    ASSERT_GE(f.cm->stepOfNode("relu6"), 0);
    EnvGuard env("relu6");
    runtime::RunnerClient runner(runnerOptions());
    pipeline::RunOptions o;
    o.check = true;
    o.time = false;
    auto r = pipeline::runModel(*f.cm, f.inputs, o, runner);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    EXPECT_FALSE(r->allPassed);
    for (const pipeline::KernelReport& k : r->kernels) {
        if (k.name != "relu6") {
            // The other kernels read relu6's corrupted output but are checked on their own inputs.
            EXPECT_TRUE(k.passed) << k.name;
            EXPECT_TRUE(k.checkInputs.empty()) << k.name;
            for (const auto& c : k.checks) EXPECT_FALSE(c.actual) << k.name;
            continue;
        }
        EXPECT_FALSE(k.passed);
        ASSERT_EQ(k.checks.size(), 1u);
        const pipeline::OutputCheck& c = k.checks[0];
        ASSERT_TRUE(c.actual && c.expected);
        const std::int64_t n = c.expected->numElements();
        EXPECT_EQ(c.comparison.firstBadIndex, n / 2);
        EXPECT_EQ(c.comparison.beyondTolerance, std::max<std::int64_t>(1, n / 8));
        const double want = c.expected->elementAsDouble(n / 2);
        EXPECT_DOUBLE_EQ(c.actual->elementAsDouble(n / 2), static_cast<double>(static_cast<float>(want) + std::copysign(1.0f + std::fabs(static_cast<float>(want)), static_cast<float>(want))));
        EXPECT_GT(c.tolerance.relTol, 0);
        ASSERT_EQ(k.checkInputs.size(), 1u);  // Clip's min/max are constants
        EXPECT_EQ(k.checkInputs[0].first, "dw_out");
        EXPECT_TRUE(k.keptNote.empty());

        auto again = pipeline::rerunInReference(*f.cm, k.name, k.checkInputs);
        ASSERT_TRUE(again.ok()) << again.diagnostics().formatAll();
        ASSERT_EQ(again->size(), 1u);
        EXPECT_EQ((*again)[0].first, c.tensor);
        EXPECT_EQ((*again)[0].second.bytes, c.expected->bytes);
    }
    auto missing = pipeline::rerunInReference(*f.cm, "relu6", {});
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.diagnostics().formatAll().find("input 'dw_out' was not kept"), std::string::npos);
    EXPECT_FALSE(pipeline::rerunInReference(*f.cm, "nope", {}).ok());
}

TEST(FailingData, OverBudgetKeepsNothingAndSaysWhy) {
    if (!haveCompiler()) GTEST_SKIP() << "no host compiler";
    Fixture f = compileSample();
    ASSERT_TRUE(f.cm);
    EnvGuard env("dw_conv");
    runtime::RunnerClient runner(runnerOptions());
    pipeline::RunOptions o;
    o.check = true;
    o.time = false;
    o.keepFailingBytes = 100;
    auto r = pipeline::runModel(*f.cm, f.inputs, o, runner);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    const int s = f.cm->stepOfNode("dw_conv");
    ASSERT_GE(s, 0);
    const pipeline::KernelReport& k = r->kernels[static_cast<std::size_t>(s)];
    EXPECT_FALSE(k.passed);
    EXPECT_TRUE(k.checkInputs.empty());
    for (const auto& c : k.checks) EXPECT_FALSE(c.actual);
    EXPECT_NE(k.keptNote.find("exceed the 0.0 MB left"), std::string::npos) << k.keptNote;
}
