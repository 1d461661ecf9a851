// A padded convolution reading a tensor that starts its shared-memory arena (the graph input is
// the arena's first buffer): the CPU conv template's staged copy must never load before or after
// the tensor, even where the padding guard is vectorised. Regression: GCC's `omp simd` turned
// `inside ? x[..] : 0` into an unmasked vector load + blend that read x[-1] and the runner died
// with SIGSEGV at the page before the arena.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/ir/shape_inference.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/run.h"
#include "core/test_ir_helpers.h"

namespace pipeline = tessera::pipeline;
namespace runtime = tessera::runtime;
namespace ir = tessera::ir;

namespace {

bool haveCompiler() { return std::system("c++ --version > /dev/null 2>&1") == 0; }

}  // namespace

TEST(ConvInputBounds, PaddedConvOnTheFirstArenaBufferRuns) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    for (const std::int64_t width : {6, 10, 17}) {
        SCOPED_TRACE(width);
        ir::test::Builder b;
        const std::string w = std::to_string(width);
        b.input("x", "f32[1,4," + w + "," + w + "]");
        std::vector<float> wv(5 * 4 * 3 * 3);
        for (std::size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>(static_cast<int>(i % 5) - 2) * 0.25f;
        b.init("w", ir::TensorData::fromFloats(wv, {5, 4, 3, 3}));
        b.node("Conv", "Conv_0", {"x", "w"}, {"y"},
               {{"pads", ir::Attribute::ofInts({1, 1, 1, 1})}, {"strides", ir::Attribute::ofInts({1, 1})}});
        b.output("y");
        ASSERT_FALSE(ir::inferShapes(b.g, "test").diagnostics.hasErrors());
        ir::Model m;
        m.opsets[""] = 17;
        m.graph = b.g;
        const auto inputs = pipeline::defaultInputs(m.graph);
        auto cm = pipeline::compileModel(m, inputs, pipeline::CompileOptions{});
        ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
        runtime::RunnerClientOptions ro;
        ro.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
        ro.threads = 2;
        runtime::RunnerClient runner(ro);
        pipeline::RunOptions o;
        o.check = true;
        o.time = false;
        auto rep = pipeline::runModel(*cm, inputs, o, runner);
        ASSERT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
        EXPECT_TRUE(rep->allPassed);
    }
}
