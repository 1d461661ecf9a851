// The control-flow sample through compile + run with --fallback-reference: the If and Loop nodes
// run as reference steps whose bodies read the graph input `x` by name (an arena slot is given to
// it), the kernels around them run in tessera-runner, and the result matches the recorded output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/eval/compare.h"
#include "core/eval/reference_interpreter.h"
#include "core/ir/npy.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/prepare.h"
#include "core/pipeline/run.h"

namespace eval = tessera::eval;
namespace pipeline = tessera::pipeline;
namespace runtime = tessera::runtime;
namespace ir = tessera::ir;

namespace {

std::string sample(const std::string& name) { return std::string(TESSERA_SAMPLES) + "/" + name; }

}  // namespace

TEST(PipelineControlFlow, SingleNodeGraphTakesTheBodiesOuterValues) {
    auto m = pipeline::loadModel(sample("control_flow_if.onnx"));
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    const ir::Graph& g = m->graph;
    const ir::NodeId ifNode = g.producer(g.findValue("if_out"));
    ASSERT_NE(ifNode, ir::kNoNode);
    const auto implicit = eval::subgraphInputs(g, ifNode);
    ASSERT_EQ(implicit.size(), 1u);
    EXPECT_EQ(g.value(implicit[0]).name, "x");
    const ir::Graph sub = pipeline::singleNodeGraph(g, ifNode);
    std::vector<std::string> names;
    for (ir::ValueId v : sub.runtimeInputs()) names.push_back(sub.value(v).name);
    EXPECT_EQ(names, (std::vector<std::string>{"is_pos", "x"}));
    EXPECT_TRUE(eval::subgraphInputs(g, g.producer(g.findValue("x_sum"))).empty());
}

TEST(PipelineControlFlow, SampleRunsWithReferenceFallback) {
    if (std::system("c++ --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    auto m = pipeline::loadModel(sample("control_flow_if.onnx"));
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    auto x = ir::readNpy(sample("control_flow_if_input.npy"));
    auto expected = ir::readNpy(sample("control_flow_if_output.npy"));
    ASSERT_TRUE(x.ok() && expected.ok());
    pipeline::CompileOptions co;
    co.fallbackReference = true;
    auto cm = pipeline::compileModel(*m, {*x}, co);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    std::vector<std::string> refSteps;
    for (const auto& s : cm->steps)
        if (s.kind == pipeline::StepKind::Reference) refSteps.push_back(s.opType);
    EXPECT_EQ(refSteps, (std::vector<std::string>{"If", "Loop"}));

    runtime::RunnerClientOptions ro;
    ro.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    ro.threads = 2;
    runtime::RunnerClient runner(ro);
    pipeline::RunOptions opts;
    opts.check = true;
    opts.time = false;
    auto rep = pipeline::runModel(*cm, {*x}, opts, runner);
    ASSERT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
    EXPECT_TRUE(rep->allPassed);
    ASSERT_EQ(rep->outputs.size(), 1u);
    const auto cmp = eval::compareTensors(rep->outputs[0].second, *expected);
    EXPECT_TRUE(cmp.ok) << cmp.summary();
    EXPECT_EQ(cmp.beyondTolerance, 0);
}
