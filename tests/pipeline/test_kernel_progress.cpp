// Per-kernel progress (CompileOptions / RunOptions::kernelProgress): lowering counts fusion groups,
// the module compile is one unit, the run counts steps from the runner's per-launch events (run
// and timed), the check counts steps; within a phase `done` grows one step at a time up to total.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/run.h"

namespace pipeline = tessera::pipeline;
namespace runtime = tessera::runtime;
namespace ir = tessera::ir;

namespace {

bool haveCompiler() { return std::system("c++ --version > /dev/null 2>&1") == 0; }

struct Event {
    int done, total;
    std::string phase;
    bool operator==(const Event& o) const { return done == o.done && total == o.total && phase == o.phase; }
};

std::ostream& operator<<(std::ostream& os, const Event& e) {
    return os << e.phase << " " << e.done << "/" << e.total;
}

std::vector<Event> ofPhase(const std::vector<Event>& all, const std::string& phase) {
    std::vector<Event> out;
    for (const Event& e : all)
        if (e.phase == phase) out.push_back(e);
    return out;
}

/// done = 0, 1, ..., total, each once, all with the same total.
std::vector<Event> countingUpTo(int total, const std::string& phase) {
    std::vector<Event> out;
    for (int d = 0; d <= total; ++d) out.push_back({d, total, phase});
    return out;
}

runtime::RunnerClientOptions runnerOptions() {
    runtime::RunnerClientOptions o;
    o.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    o.threads = 2;
    return o;
}

struct Compiled {
    std::optional<pipeline::CompiledModel> cm;
    std::vector<ir::TensorData> inputs;
    std::vector<Event> events;
};

Compiled compileDwPw() {
    Compiled c;
    auto m = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/dw_pw_block.onnx");
    EXPECT_TRUE(m.ok());
    if (!m.ok()) return c;
    c.inputs = pipeline::defaultInputs(m->graph);
    pipeline::CompileOptions co;
    co.planner = "none";  // one kernel per op: dw_conv, relu6, pw_conv
    co.kernelProgress = [&c](int done, int total, const std::string& phase) {
        c.events.push_back({done, total, phase});
    };
    auto cm = pipeline::compileModel(*m, c.inputs, co);
    EXPECT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    if (cm.ok()) c.cm = std::move(*cm);
    return c;
}

}  // namespace

TEST(KernelProgress, CompileCountsFusionGroupsThenCodeGeneration) {
    Compiled c = compileDwPw();
    ASSERT_TRUE(c.cm);
    ASSERT_EQ(c.cm->steps.size(), 3u);
    std::vector<Event> want = countingUpTo(3, pipeline::kPhaseLowering);
    want.push_back({0, 1, pipeline::kPhaseGenerating});
    want.push_back({1, 1, pipeline::kPhaseGenerating});
    EXPECT_EQ(c.events, want);
}

TEST(KernelProgress, TimedCheckedRunCountsEveryStepInEachPhase) {
    if (!haveCompiler()) GTEST_SKIP() << "no host compiler";
    Compiled c = compileDwPw();
    ASSERT_TRUE(c.cm);
    runtime::RunnerClient runner(runnerOptions());
    pipeline::RunOptions o;
    o.check = true;
    o.minSeconds = 0.001;
    o.minReps = 1;
    std::vector<Event> events;
    o.kernelProgress = [&](int done, int total, const std::string& phase) { events.push_back({done, total, phase}); };
    auto r = pipeline::runModel(*c.cm, c.inputs, o, runner);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    EXPECT_TRUE(r->allPassed);

    // Phases in order: the module compile, the kernels (run and timed), the check.
    std::vector<Event> want = countingUpTo(1, pipeline::kPhaseCompilingModule);
    for (const Event& e : countingUpTo(3, pipeline::kPhaseRunningKernels)) want.push_back(e);
    for (const Event& e : countingUpTo(3, pipeline::kPhaseChecking)) want.push_back(e);
    EXPECT_EQ(events, want);
}

TEST(KernelProgress, UntimedRunCountsLaunches) {
    if (!haveCompiler()) GTEST_SKIP() << "no host compiler";
    Compiled c = compileDwPw();
    ASSERT_TRUE(c.cm);
    runtime::RunnerClient runner(runnerOptions());
    pipeline::RunOptions o;
    o.time = false;
    std::vector<Event> events;
    o.kernelProgress = [&](int done, int total, const std::string& phase) { events.push_back({done, total, phase}); };
    auto r = pipeline::runModel(*c.cm, c.inputs, o, runner);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    EXPECT_EQ(ofPhase(events, pipeline::kPhaseRunningKernels), countingUpTo(3, pipeline::kPhaseRunningKernels));
    EXPECT_TRUE(ofPhase(events, pipeline::kPhaseChecking).empty());  // no check asked for
}

TEST(KernelProgress, MobileNetStepsAdvanceMonotonicallyToTheEnd) {
    if (!haveCompiler()) GTEST_SKIP() << "no host compiler";
    auto m = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/mobilenet_v2.onnx");
    ASSERT_TRUE(m.ok());
    const auto inputs = pipeline::defaultInputs(m->graph);
    std::vector<Event> compileEvents;
    pipeline::CompileOptions co;
    co.kernelProgress = [&](int d, int t, const std::string& p) { compileEvents.push_back({d, t, p}); };
    auto cm = pipeline::compileModel(*m, inputs, co);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    const int steps = static_cast<int>(cm->steps.size());
    ASSERT_GT(steps, 50);
    const auto lowering = ofPhase(compileEvents, pipeline::kPhaseLowering);
    ASSERT_FALSE(lowering.empty());
    EXPECT_EQ(lowering.size(), static_cast<std::size_t>(lowering.back().total) + 1);

    runtime::RunnerClient runner(runnerOptions());
    pipeline::RunOptions o;
    o.time = false;  // the launches alone: the events, not the timings, are under test
    std::vector<Event> events;
    o.kernelProgress = [&](int d, int t, const std::string& p) { events.push_back({d, t, p}); };
    auto r = pipeline::runModel(*cm, inputs, o, runner);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    const auto running = ofPhase(events, pipeline::kPhaseRunningKernels);
    ASSERT_EQ(running, countingUpTo(steps, pipeline::kPhaseRunningKernels));
}
