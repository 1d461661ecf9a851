// runModel with the host JIT's compile units: the generated module split into several units runs
// and checks exactly like the same module built as one unit; the compile phase counts units.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/frontend/dsl/dsl.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/run.h"

namespace pipeline = tessera::pipeline;
namespace runtime = tessera::runtime;
namespace ir = tessera::ir;

namespace {

bool haveCompiler() { return std::system("c++ --version > /dev/null 2>&1") == 0; }

/// A chain of 16 elementwise ops (Relu, Sigmoid, Add of the input, Mul by itself) on `shape`
/// (rows, columns), then a row sum: 17 kernels, 16 of them elementwise.
std::string chainProgram(const std::string& shape = "8, 64") {
    std::string p = "tessera 0.1;\ninput x: f32[" + shape + "];\n";
    std::string prev = "x";
    for (int i = 0; i < 16; ++i) {
        const std::string t = "t" + std::to_string(i);
        switch (i % 4) {
            case 0: p += t + " = Relu(" + prev + ");\n"; break;
            case 1: p += t + " = Sigmoid(" + prev + ");\n"; break;
            case 2: p += t + " = Add(" + prev + ", x);\n"; break;
            default: p += t + " = Mul(" + prev + ", " + prev + ");\n"; break;
        }
        prev = t;
    }
    p += "r[i] = sum(j) " + prev + "[i, j];\noutput r;\noutput " + prev + ";\n";
    return p;
}

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        path = std::filesystem::temp_directory_path() / ("tessera_units_" + std::to_string(::getpid()));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

}  // namespace

TEST(CompileUnits, SplitModuleRunsAndChecksLikeOneUnit) {
    if (!haveCompiler()) GTEST_SKIP() << "no host compiler";
    auto model = tessera::frontend::dsl::parseProgram(chainProgram(), "chain.tsr");
    ASSERT_TRUE(model.ok()) << model.diagnostics().formatAll();
    const std::vector<ir::TensorData> inputs = pipeline::defaultInputs(model->graph);
    auto cm = pipeline::compileModel(*model, inputs, pipeline::CompileOptions{});
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    ASSERT_EQ(cm->kernelCount(), 17);
    int elementwise = 0;
    for (const auto& s : cm->steps) elementwise += s.elementwise;
    EXPECT_EQ(elementwise, 16);
    // The generator's layout: one span per kernel, in order, after the shared prelude.
    ASSERT_EQ(cm->code.kernelSpans.size(), 17u);
    EXPECT_GT(cm->code.sharedPreludeBytes, 0u);
    EXPECT_GT(cm->code.kernelSpans[0].offset, cm->code.sharedPreludeBytes) << "the thread functions sit in between";
    for (std::size_t k = 1; k < 17; ++k)
        EXPECT_EQ(cm->code.kernelSpans[k].offset, cm->code.kernelSpans[k - 1].offset + cm->code.kernelSpans[k - 1].size);
    EXPECT_EQ(cm->code.source.compare(cm->code.kernelSpans[3].offset, 3, "// "), 0);

    TempDir cache;
    runtime::RunnerClientOptions ro;
    ro.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    ro.threads = 2;
    runtime::RunnerClient runner(ro);
    pipeline::RunOptions o;
    o.check = true;
    o.time = false;
    o.compiler.cacheDir = cache.path.string();
    o.compiler.flags = {"-O1", "-fopenmp", "-shared", "-fPIC"};  // quick; reducedOptFlag changes nothing
    o.compiler.jobs = 2;

    o.compiler.unitBytes = std::size_t{1} << 24;
    auto one = pipeline::runModel(*cm, inputs, o, runner);
    ASSERT_TRUE(one.ok()) << one.diagnostics().formatAll();
    EXPECT_EQ(one->library.units, 1);
    EXPECT_TRUE(one->allPassed);

    o.compiler.unitBytes = 4096;
    int lastDone = -1, lastTotal = 0;
    o.kernelProgress = [&](int done, int total, const std::string& phase) {
        if (phase != pipeline::kPhaseCompilingModule) return;
        EXPECT_GE(done, lastDone);
        lastDone = done;
        lastTotal = total;
    };
    auto split = pipeline::runModel(*cm, inputs, o, runner);
    ASSERT_TRUE(split.ok()) << split.diagnostics().formatAll();
    EXPECT_GE(split->library.units, 3);
    EXPECT_EQ(split->library.unitsReducedOpt, 0);
    EXPECT_EQ(split->library.unitsCompiled, split->library.units);
    EXPECT_EQ(lastTotal, split->library.units);
    EXPECT_EQ(lastDone, split->library.units);
    EXPECT_TRUE(split->allPassed);
    ASSERT_EQ(split->outputs.size(), one->outputs.size());
    for (std::size_t i = 0; i < one->outputs.size(); ++i) {
        EXPECT_EQ(split->outputs[i].first, one->outputs[i].first);
        EXPECT_EQ(split->outputs[i].second.bytes, one->outputs[i].second.bytes) << one->outputs[i].first;
    }
}

TEST(CompileUnits, OnlyTinyElementwiseKernelsCompileAtTheLowerLevel) {
    if (!haveCompiler()) GTEST_SKIP() << "no host compiler";
    TempDir cache;
    runtime::RunnerClientOptions ro;
    ro.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    runtime::RunnerClient runner(ro);
    pipeline::RunOptions o;
    o.time = false;
    o.compiler.cacheDir = cache.path.string();
    o.compiler.flags = {"-O3", "-fopenmp", "-shared", "-fPIC"};
    o.compiler.unitBytes = 4096;
    // 8 x 64 = 512 elements (at most kReducedOptMaxElements): the 16 elementwise kernels go to -Og
    // units, the row sum stays at -O3. 64 x 64 = 4096 elements: everything stays at -O3.
    for (const auto& [shape, reduced] : {std::pair<std::string, bool>{"8, 64", true}, {"64, 64", false}}) {
        auto model = tessera::frontend::dsl::parseProgram(chainProgram(shape), "chain.tsr");
        ASSERT_TRUE(model.ok()) << model.diagnostics().formatAll();
        const std::vector<ir::TensorData> inputs = pipeline::defaultInputs(model->graph);
        auto cm = pipeline::compileModel(*model, inputs, pipeline::CompileOptions{});
        ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
        auto r = pipeline::runModel(*cm, inputs, o, runner);
        ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
        ASSERT_GE(r->library.units, 2) << shape;
        if (reduced) {
            EXPECT_GE(r->library.unitsReducedOpt, 1) << shape;
            EXPECT_LT(r->library.unitsReducedOpt, r->library.units) << shape << ": the row sum keeps -O3";
        } else {
            EXPECT_EQ(r->library.unitsReducedOpt, 0) << shape;
        }
    }
}
