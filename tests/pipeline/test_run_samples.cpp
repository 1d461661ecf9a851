// core/pipeline/compile.h + run.h end to end: every sample compiles, runs in tessera-runner and
// matches the reference interpreter; MobileNetV2 matches the output torch computed for it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/ir/npy.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/run.h"

namespace pipeline = tessera::pipeline;
namespace runtime = tessera::runtime;
namespace ir = tessera::ir;

namespace {

bool haveCompiler() { return std::system("c++ --version > /dev/null 2>&1") == 0; }

runtime::RunnerClientOptions runnerOptions() {
    runtime::RunnerClientOptions o;
    o.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    o.threads = 2;
    return o;
}

pipeline::RunOptions checkedOnce() {
    pipeline::RunOptions o;
    o.check = true;
    o.time = false;
    return o;
}

std::string sample(const std::string& name) { return std::string(TESSERA_SAMPLES) + "/" + name; }

}  // namespace

TEST(PipelineRun, MobileNetV2MatchesTorch) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    auto m = pipeline::loadModel(sample("mobilenet_v2.onnx"));
    ASSERT_TRUE(m.ok());
    auto x = ir::readNpy(sample("mobilenet_v2_input.npy"));
    ASSERT_TRUE(x.ok());
    auto cm = pipeline::compileModel(*m, {*x});
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    EXPECT_EQ(cm->kernelCount(), 100);
    runtime::RunnerClient runner(runnerOptions());
    auto rep = pipeline::runModel(*cm, {*x}, checkedOnce(), runner);
    ASSERT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
    EXPECT_TRUE(rep->allPassed);
    for (const auto& k : rep->kernels) EXPECT_TRUE(k.passed) << k.name << " rel.err " << k.maxRelError();
    auto torchOut = ir::readNpy(sample("mobilenet_v2_output.npy"));
    ASSERT_TRUE(torchOut.ok());
    ASSERT_EQ(rep->outputs.size(), 1u);
    const ir::TensorData& y = rep->outputs[0].second;
    ASSERT_EQ(y.dims, torchOut->dims);
    double num = 0, den = 0;
    for (std::int64_t i = 0; i < y.numElements(); ++i) {
        const double d = y.elementAsDouble(i) - torchOut->elementAsDouble(i);
        num += d * d;
        den += torchOut->elementAsDouble(i) * torchOut->elementAsDouble(i);
    }
    EXPECT_LT(std::sqrt(num / den), 1e-3);
}

TEST(PipelineRun, EveryDslSampleRunsAndChecks) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    runtime::RunnerClient runner(runnerOptions());
    int programs = 0;
    for (const auto& e : std::filesystem::directory_iterator(TESSERA_SAMPLES)) {
        if (e.path().extension() != ".tsr") continue;
        ++programs;
        SCOPED_TRACE(e.path().filename().string());
        auto m = pipeline::loadModel(e.path().string());
        ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
        const auto inputs = pipeline::defaultInputs(m->graph);
        auto cm = pipeline::compileModel(*m, inputs);
        ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
        auto rep = pipeline::runModel(*cm, inputs, checkedOnce(), runner);
        ASSERT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
        EXPECT_TRUE(rep->allPassed);
        for (const auto& k : rep->kernels) {
            EXPECT_TRUE(k.passed) << k.name;
            EXPECT_FALSE(k.checks.empty()) << k.name;
        }
    }
    EXPECT_EQ(programs, 7);
}

TEST(PipelineRun, TimingReportsEveryKernel) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    auto m = pipeline::loadModel(sample("dw_pw_block.onnx"));
    ASSERT_TRUE(m.ok());
    const auto inputs = pipeline::defaultInputs(m->graph);
    auto cm = pipeline::compileModel(*m, inputs);
    ASSERT_TRUE(cm.ok());
    pipeline::RunOptions o;
    o.minReps = o.maxReps = 5;
    o.minSeconds = 0;
    runtime::RunnerClient runner(runnerOptions());
    auto rep = pipeline::runModel(*cm, inputs, o, runner);
    ASSERT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
    ASSERT_EQ(rep->kernels.size(), 3u);
    for (const auto& k : rep->kernels) {
        EXPECT_EQ(k.time.reps, 5) << k.name;
        EXPECT_GT(k.time.median, 0) << k.name;
        EXPECT_LE(k.time.min, k.time.median) << k.name;
        EXPECT_GT(k.flops, 0) << k.name;
        EXPECT_GT(k.bytes, 0) << k.name;
    }
    EXPECT_GT(rep->total.median, 0);
    EXPECT_EQ(rep->threads, 2);
}

TEST(PipelineRun, OpWithoutGeneratorNamesTheNodeOrFallsBack) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    // x -> ConvTranspose (no code generator, has a reference implementation) -> Relu -> y
    ir::Model m;
    ir::Graph& g = m.graph;
    m.opsets[""] = 17;
    auto addValue = [&](const std::string& name, std::vector<std::int64_t> dims) {
        ir::Value v;
        v.name = name;
        v.type = {ir::DType::F32, ir::Shape::ofKnown(dims)};
        return g.addValue(v);
    };
    const auto x = addValue("x", {1, 1, 3, 3});
    g.value(x).isGraphInput = true;
    g.inputs().push_back(x);
    const auto w = addValue("w", {1, 1, 2, 2});
    g.value(w).data = std::make_shared<const ir::TensorData>(ir::TensorData::fromFloats({1, -2, 3, -4}, {1, 1, 2, 2}));
    g.value(w).isInitializer = true;
    g.initializers().push_back(w);
    const auto t = addValue("t", {1, 1, 4, 4});
    const auto y = addValue("y", {1, 1, 4, 4});
    g.value(y).isGraphOutput = true;
    g.outputs().push_back(y);
    ir::Node up;
    up.name = "up";
    up.opType = "ConvTranspose";
    up.inputs = {x, w};
    up.outputs = {t};
    g.addNode(up);
    ir::Node relu;
    relu.name = "relu";
    relu.opType = "Relu";
    relu.inputs = {t};
    relu.outputs = {y};
    g.addNode(relu);
    const auto inputs = pipeline::defaultInputs(g);

    auto strict = pipeline::compileModel(m, inputs);
    ASSERT_FALSE(strict.ok());
    const std::string msg = strict.diagnostics().formatAll();
    EXPECT_NE(msg.find("node 'up' (ConvTranspose)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no code generator for op 'ConvTranspose'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--fallback-reference"), std::string::npos) << msg;

    pipeline::CompileOptions co;
    co.fallbackReference = true;
    auto cm = pipeline::compileModel(m, inputs, co);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    ASSERT_EQ(cm->steps.size(), 2u);
    EXPECT_EQ(cm->steps[0].kind, pipeline::StepKind::Reference);
    EXPECT_EQ(cm->steps[1].kind, pipeline::StepKind::Kernel);
    runtime::RunnerClient runner(runnerOptions());
    auto rep = pipeline::runModel(*cm, inputs, checkedOnce(), runner);
    ASSERT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
    EXPECT_TRUE(rep->allPassed);
    EXPECT_TRUE(rep->kernels[0].reference);
    // Hand result: y = relu(conv_transpose(x, w)), stride 1, no pads: t[i,j] = sum x[i-a, j-b] w[a,b].
    const auto xs = inputs[0].toDoubles();
    const double wv[2][2] = {{1, -2}, {3, -4}};
    const auto& out = rep->outputs[0].second;
    ASSERT_EQ(out.dims, (std::vector<std::int64_t>{1, 1, 4, 4}));
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
            double acc = 0;
            for (int a = 0; a < 2; ++a)
                for (int b = 0; b < 2; ++b)
                    if (i - a >= 0 && i - a < 3 && j - b >= 0 && j - b < 3) acc += xs[(i - a) * 3 + (j - b)] * wv[a][b];
            EXPECT_NEAR(out.elementAsDouble(i * 4 + j), std::max(acc, 0.0), 1e-5) << i << "," << j;
        }
}

TEST(PipelineRun, MissingCompilerSaysWhichAndHow) {
    auto m = pipeline::loadModel(sample("dw_pw_block.onnx"));
    ASSERT_TRUE(m.ok());
    const auto inputs = pipeline::defaultInputs(m->graph);
    auto cm = pipeline::compileModel(*m, inputs);
    ASSERT_TRUE(cm.ok());
    pipeline::RunOptions o = checkedOnce();
    o.compiler.compiler = "tessera-no-such-compiler";
    runtime::RunnerClient runner(runnerOptions());
    auto rep = pipeline::runModel(*cm, inputs, o, runner);
    ASSERT_FALSE(rep.ok());
    const std::string msg = rep.diagnostics().formatAll();
    EXPECT_NE(msg.find("tessera-no-such-compiler"), std::string::npos) << msg;
    EXPECT_NE(msg.find("TESSERA_CXX"), std::string::npos) << msg;
}

TEST(PipelineRun, EachKernelIsCheckedOnItsOwnInputs) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    // With a zero tolerance the f32 convolutions differ from the double reference, but Clip is
    // exact on whatever its input holds: it must pass although the Conv before it fails.
    auto m = pipeline::loadModel(sample("dw_pw_block.onnx"));
    ASSERT_TRUE(m.ok());
    const auto inputs = pipeline::defaultInputs(m->graph);
    auto cm = pipeline::compileModel(*m, inputs);
    ASSERT_TRUE(cm.ok());
    pipeline::RunOptions o = checkedOnce();
    o.relTol = 0;
    runtime::RunnerClient runner(runnerOptions());
    auto rep = pipeline::runModel(*cm, inputs, o, runner);
    ASSERT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
    ASSERT_EQ(rep->kernels.size(), 3u);
    EXPECT_EQ(rep->kernels[0].opType, "Conv");
    EXPECT_FALSE(rep->kernels[0].passed);
    EXPECT_GT(rep->kernels[0].maxRelError(), 0);
    EXPECT_EQ(rep->kernels[1].opType, "Clip");
    EXPECT_TRUE(rep->kernels[1].passed);
    EXPECT_EQ(rep->kernels[1].maxRelError(), 0);
    EXPECT_FALSE(rep->allPassed);
}
