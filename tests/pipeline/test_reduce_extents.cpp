// Reductions over many extents, against the reference interpreter: every reduction template
// (Reduce*, the global pools, Softmax, LayerNormalization) over runs of 1 .. 100,000 elements,
// odd and powers of two, alone and with outer reduced rows. Regression: the 16-lane partial
// sums seeded every lane with the running total of the rows before, so a GlobalAveragePool over
// 112x112 multiplied its sum by 16 per row until it overflowed to inf (EfficientNet-B0).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "core/ir/shape_inference.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/run.h"
#include "core/test_ir_helpers.h"

namespace pipeline = tessera::pipeline;
namespace runtime = tessera::runtime;
namespace ir = tessera::ir;

namespace {

bool haveCompiler() { return std::system("c++ --version > /dev/null 2>&1") == 0; }

std::string dims(std::initializer_list<std::int64_t> d) {
    std::string s = "f32[";
    bool first = true;
    for (auto x : d) {
        s += (first ? "" : ",") + std::to_string(x);
        first = false;
    }
    return s + "]";
}

/// Runs every node of `b` as its own kernel, checked against the reference interpreter, and
/// returns the report; inputs uniform in [-1, 1) from the fixed seed (plus 1 where `positive`).
pipeline::RunReport runChecked(ir::test::Builder& b) {
    EXPECT_FALSE(ir::inferShapes(b.g, "test").diagnostics.hasErrors());
    ir::Model m;
    m.opsets[""] = 17;
    m.graph = b.g;
    const auto inputs = pipeline::defaultInputs(m.graph);
    auto cm = pipeline::compileModel(m, inputs, pipeline::CompileOptions{});
    EXPECT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    if (!cm.ok()) return {};
    runtime::RunnerClientOptions ro;
    ro.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    ro.threads = 2;
    runtime::RunnerClient runner(ro);
    pipeline::RunOptions o;
    o.check = true;
    o.time = false;
    o.compiler.flags = {"-O1", "-fopenmp", "-shared", "-fPIC"};
    auto rep = pipeline::runModel(*cm, inputs, o, runner);
    EXPECT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
    return rep.ok() ? *rep : pipeline::RunReport{};
}

void expectAllMatch(const pipeline::RunReport& rep, std::size_t kernels) {
    ASSERT_EQ(rep.kernels.size(), kernels);
    for (const auto& k : rep.kernels) {
        EXPECT_TRUE(k.checked) << k.name;
        for (const auto& c : k.checks) EXPECT_TRUE(c.comparison.ok) << k.name << ": " << c.comparison.summary();
    }
    // The graph outputs end to end, too (what a user compares).
    EXPECT_EQ(rep.outputChecks.size(), rep.outputs.size());
    for (const auto& c : rep.outputChecks) {
        EXPECT_EQ(c.against, "reference interpreter");
        EXPECT_TRUE(c.comparison.ok) << c.tensor << ": " << c.comparison.summary();
        EXPECT_TRUE(std::isfinite(c.comparison.relL2));
    }
    EXPECT_TRUE(rep.allPassed);
}

}  // namespace

TEST(ReduceExtents, InnermostRunsFromOneToOneHundredThousand) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    ir::test::Builder b;
    int n = 0;
    for (std::int64_t e : {1, 2, 3, 15, 16, 17, 31, 32, 33, 47, 64, 100, 127, 128, 1000, 1024, 4097, 65536, 100000}) {
        const std::string x = "x" + std::to_string(n), s = "sum" + std::to_string(n), mx = "max" + std::to_string(n),
                          mn = "mean" + std::to_string(n);
        b.input(x, dims({2, e}));
        b.node("ReduceSum", "ReduceSum_" + std::to_string(e), {x}, {s}, {{"keepdims", ir::Attribute::ofInt(0)}});
        b.node("ReduceMax", "ReduceMax_" + std::to_string(e), {x}, {mx},
               {{"axes", ir::Attribute::ofInts({1})}, {"keepdims", ir::Attribute::ofInt(0)}});
        b.node("ReduceMean", "ReduceMean_" + std::to_string(e), {x}, {mn},
               {{"axes", ir::Attribute::ofInts({1})}, {"keepdims", ir::Attribute::ofInt(1)}});
        b.output(s);
        b.output(mx);
        b.output(mn);
        ++n;
    }
    expectAllMatch(runChecked(b), 3 * static_cast<std::size_t>(n));
}

TEST(ReduceExtents, GlobalPoolsOverManyRowsOfLongRuns) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    ir::test::Builder b;
    int n = 0;
    // (rows, run): 112x112 is EfficientNet's first squeeze-excitation; 7x7 MobileNetV2's head.
    for (auto [h, w] : {std::pair<std::int64_t, std::int64_t>{112, 112}, {7, 7}, {1, 1}, {3, 33}, {5, 317},
                        {56, 56}, {2, 4096}, {9, 31}, {64, 32}}) {
        const std::string x = "x" + std::to_string(n), a = "avg" + std::to_string(n), m = "max" + std::to_string(n),
                          s = "rsum" + std::to_string(n);
        b.input(x, dims({1, 3, h, w}));
        b.node("GlobalAveragePool", "GlobalAveragePool_" + std::to_string(n), {x}, {a});
        b.node("GlobalMaxPool", "GlobalMaxPool_" + std::to_string(n), {x}, {m});
        b.node("ReduceSum", "ReduceSumHW_" + std::to_string(n), {x}, {s},
               {{"axes", ir::Attribute::ofInts({2, 3})}, {"keepdims", ir::Attribute::ofInt(0)}});
        b.output(a);
        b.output(m);
        b.output(s);
        ++n;
    }
    expectAllMatch(runChecked(b), 3 * static_cast<std::size_t>(n));
}

TEST(ReduceExtents, SoftmaxAndLayerNormOverLongAxes) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    ir::test::Builder b;
    int n = 0;
    for (std::int64_t e : {1, 5, 31, 32, 33, 197, 768, 4096, 50257}) {
        const std::string x = "x" + std::to_string(n), sm = "sm" + std::to_string(n), ln = "ln" + std::to_string(n),
                          sc = "scale" + std::to_string(n), bi = "bias" + std::to_string(n);
        b.input(x, dims({3, e}));
        std::vector<float> ones(static_cast<std::size_t>(e), 1.5f), shift(static_cast<std::size_t>(e), -0.25f);
        b.init(sc, ir::TensorData::fromFloats(ones, {e}));
        b.init(bi, ir::TensorData::fromFloats(shift, {e}));
        b.node("Softmax", "Softmax_" + std::to_string(e), {x}, {sm}, {{"axis", ir::Attribute::ofInt(-1)}});
        b.node("LayerNormalization", "LayerNorm_" + std::to_string(e), {x, sc, bi}, {ln},
               {{"axis", ir::Attribute::ofInt(-1)}});
        b.output(sm);
        b.output(ln);
        ++n;
    }
    expectAllMatch(runChecked(b), 2 * static_cast<std::size_t>(n));
}
