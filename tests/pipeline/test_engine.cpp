// The engine façade (core/pipeline/engine.h): prepare once, compile a prepared model without
// specialising it again, and compileAndRun's phases, events and runner errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/npy.h"
#include "core/pipeline/engine.h"
#include "core/pipeline/load_model.h"

namespace pipeline = tessera::pipeline;
namespace runtime = tessera::runtime;
namespace support = tessera::support;
namespace ir = tessera::ir;

namespace {

bool haveCompiler() { return std::system("c++ --version > /dev/null 2>&1") == 0; }

std::shared_ptr<const ir::Model> loadSample(const std::string& name) {
    auto m = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/" + name);
    EXPECT_TRUE(m.ok()) << m.diagnostics().formatAll();
    if (!m.ok()) return nullptr;
    return std::make_shared<const ir::Model>(std::move(*m));
}

std::shared_ptr<const pipeline::PreparedModel> prepared(const std::shared_ptr<const ir::Model>& model,
                                                        const std::vector<ir::TensorData>& given = {},
                                                        const pipeline::PrepareOptions& options = {}) {
    auto p = pipeline::prepare(model, given, options);
    EXPECT_TRUE(p.ok()) << p.diagnostics().formatAll();
    return p.ok() ? *p : nullptr;
}

std::shared_ptr<pipeline::Runner> testRunner(const std::string& path) {
    runtime::RunnerClientOptions o;
    o.runnerPath = path;
    o.threads = 2;
    return std::make_shared<pipeline::Runner>(o);
}

std::string builtRunner() { return std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner"; }

}  // namespace

TEST(Engine, PrepareSeedsTheInputsNotGivenAndSpecialises) {
    auto model = loadSample("symbolic_batch.onnx");
    ASSERT_TRUE(model);
    auto p = prepared(model);
    ASSERT_TRUE(p);
    const auto rin = model->graph.runtimeInputs();
    ASSERT_EQ(p->inputs.size(), rin.size());
    EXPECT_EQ(p->filled, std::vector<bool>(rin.size(), true));
    const std::vector<ir::TensorData> seeded = pipeline::defaultInputs(model->graph);
    for (std::size_t i = 0; i < rin.size(); ++i) {
        EXPECT_EQ(p->inputs[i].dims, seeded[i].dims);
        EXPECT_EQ(p->inputs[i].bytes, seeded[i].bytes);
    }
    auto spec = pipeline::specialiseModel(*model, seeded);
    ASSERT_TRUE(spec.ok());
    EXPECT_EQ(p->model.graph.numNodes(), spec->graph.numNodes());
    EXPECT_EQ(p->model.sourcePath, model->sourcePath);
}

TEST(Engine, GivenInputsAreKeptAndMatchesTellsPreparationsApart) {
    auto model = loadSample("symbolic_batch.onnx");
    ASSERT_TRUE(model);
    auto fed = ir::readNpy(std::string(TESSERA_SAMPLES) + "/symbolic_batch_input.npy");
    ASSERT_TRUE(fed.ok());
    auto p = prepared(model, {*fed});
    ASSERT_TRUE(p);
    ASSERT_EQ(p->inputs.size(), 1u);
    EXPECT_FALSE(p->filled[0]);
    EXPECT_EQ(p->inputs[0].dims, fed->dims);

    EXPECT_TRUE(p->matches(model, {*fed}, {}));
    EXPECT_FALSE(p->matches(model, {}, {}));  // seeded instead of fed
    ir::TensorData other = *fed;
    other.bytes[0] ^= 1;
    EXPECT_FALSE(p->matches(model, {other}, {}));
    pipeline::PrepareOptions reseeded;
    reseeded.seed = 7;
    EXPECT_FALSE(p->matches(model, {*fed}, reseeded));
    auto same = loadSample("symbolic_batch.onnx");  // equal, but another model object
    EXPECT_FALSE(p->matches(same, {*fed}, {}));
}

TEST(Engine, ShapesOnlyBindsInputsWhoseValuesDecideNoShape) {
    auto model = loadSample("dw_pw_block.onnx");
    ASSERT_TRUE(model);
    pipeline::PrepareOptions options;
    options.shapesOnly = true;
    auto p = prepared(model, {}, options);
    ASSERT_TRUE(p);
    ASSERT_FALSE(p->inputs.empty());
    EXPECT_TRUE(p->inputs[0].isShapeOnly());
    EXPECT_TRUE(p->matches(model, {}, options));
    EXPECT_FALSE(p->matches(model, {}, {}));
}

TEST(Engine, CompilingAPreparedModelEqualsCompilingTheModel) {
    auto model = loadSample("dw_pw_block.onnx");
    ASSERT_TRUE(model);
    auto p = prepared(model);
    ASSERT_TRUE(p);
    pipeline::CompileOptions co;
    co.planner = "hidet";
    auto fromPrepared = pipeline::compileModel(*p, co);
    auto direct = pipeline::compileModel(*model, pipeline::defaultInputs(model->graph), co);
    ASSERT_TRUE(fromPrepared.ok()) << fromPrepared.diagnostics().formatAll();
    ASSERT_TRUE(direct.ok()) << direct.diagnostics().formatAll();
    EXPECT_EQ(fromPrepared->code.source, direct->code.source);
    EXPECT_EQ(fromPrepared->steps.size(), direct->steps.size());
    EXPECT_EQ(fromPrepared->foldedNodes, direct->foldedNodes);
    EXPECT_EQ(fromPrepared->inputSlots, direct->inputSlots);
}

TEST(Engine, CompileOnlyStopsAfterTheCompile) {
    auto model = loadSample("dw_pw_block.onnx");
    ASSERT_TRUE(model);
    pipeline::RunRequest request;
    request.prepared = prepared(model);
    request.compileOnly = true;
    int compiledEvents = 0;
    pipeline::RunEvents events;
    events.compiled = [&](const std::shared_ptr<const pipeline::CompiledModel>& cm) {
        ++compiledEvents;
        EXPECT_GT(cm->kernelCount(), 0);
        return true;
    };
    auto r = pipeline::compileAndRun(request, nullptr, events);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    EXPECT_EQ(compiledEvents, 1);
    EXPECT_TRUE(r->compiled);
    EXPECT_FALSE(r->report);
    EXPECT_FALSE(r->cudaModule);  // the CPU target: nothing for NVRTC
}

TEST(Engine, CompiledEventCanStopTheJob) {
    auto model = loadSample("dw_pw_block.onnx");
    ASSERT_TRUE(model);
    pipeline::RunRequest request;
    request.prepared = prepared(model);
    pipeline::RunEvents events;
    events.compiled = [](const std::shared_ptr<const pipeline::CompiledModel>&) { return false; };
    auto r = pipeline::compileAndRun(request, nullptr, events);  // no runner needed: nothing runs
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    EXPECT_TRUE(r->compiled);
    EXPECT_FALSE(r->report);
}

TEST(Engine, CompileAndRunChecksInTheRunner) {
    if (!haveCompiler()) GTEST_SKIP() << "no host compiler";
    auto model = loadSample("dw_pw_block.onnx");
    ASSERT_TRUE(model);
    auto runner = testRunner(builtRunner());
    pipeline::RunRequest request;
    request.prepared = prepared(model);
    request.run.check = true;
    request.run.time = false;
    request.runner = runner.get();
    auto r = pipeline::compileAndRun(request);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    ASSERT_TRUE(r->compiled);
    ASSERT_TRUE(r->report);
    EXPECT_TRUE(r->report->checked);
    EXPECT_TRUE(r->report->allPassed);
    EXPECT_EQ(r->report->kernels.size(), r->compiled->steps.size());
}

TEST(Engine, RunnerErrorsCarryTheRunnerFaultCode) {
    if (!haveCompiler()) GTEST_SKIP() << "no host compiler";
    auto model = loadSample("dw_pw_block.onnx");
    ASSERT_TRUE(model);
    auto runner = testRunner("/nonexistent/tessera-runner");
    pipeline::RunRequest request;
    request.prepared = prepared(model);
    request.run.time = false;
    request.runner = runner.get();
    auto r = pipeline::compileAndRun(request);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.diagnostics().hasCode(support::DiagnosticCode::RunnerFault)) << r.diagnostics().formatAll();
    const support::Diagnostic* e = r.diagnostics().firstError();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->where, pipeline::kRunnerWhere);
}

TEST(Engine, NoRunnerForARunIsAnError) {
    auto model = loadSample("dw_pw_block.onnx");
    ASSERT_TRUE(model);
    pipeline::RunRequest request;
    request.prepared = prepared(model);
    auto r = pipeline::compileAndRun(request);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.diagnostics().hasErrors());
}
