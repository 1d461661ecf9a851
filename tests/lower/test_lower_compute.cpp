// Compute-node lowering (lower_compute.cpp): DSL compute definitions lowered, run by the kernel-IR
// interpreter and compared with the reference interpreter; schedule items (tile, unroll,
// vectorize, parallel, stage) in the kernel text; every sample program lowered node by node.

#include <gtest/gtest.h>

#include <filesystem>

#include "core/frontend/dsl/dsl.h"
#include "core/golden.h"
#include "core/pipeline/load_model.h"
#include "lower/test_lower_basic_util.h"

namespace tessera::lower::test {
namespace {

ir::Model parse(const std::string& text) {
    frontend::dsl::ParseOptions o;
    o.allowFileAccess = false;
    auto m = frontend::dsl::parseProgram(text, "t.tsr", o);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.diagnostics().firstError()->format());
    return m.ok() ? std::move(*m) : ir::Model{};
}

std::string check(const std::string& text) {
    ir::Model m = parse(text);
    return checkAgainstReference(m.graph, makeInputs(m.graph), &m.program);
}

const eval::CompareOptions kF32Loose{1e-3, 1e-4};

std::string kernelText(const ir::Model& m, const std::string& node) {
    const ir::NodeId id = m.graph.findNode(node);
    if (id == ir::kNoNode) return "no node " + node;
    auto lk = lowerNode(m.graph, id, m.program.scheduleFor(node));
    if (!lk) return "error: " + lk.diagnostics().firstError()->message;
    return printKernel(lk->kernel);
}

TEST(LowerCompute, ReductionsMatchReference) {
    EXPECT_EQ(check("tessera 0.1;\ninput x: f32[5, 7];\n"
                    "s[i] = sum(j) x[i, j];\nm[i] = max(j) x[i, j] - 10.0;\nn[i] = min(j) x[i, j];\n"
                    "p[i] = prod(j) x[i, j];\nt[] = sum(i, j) x[i, j] * x[i, j];\n"
                    "output s; output m; output n; output p; output t;"),
              "");
    // Max of values that are all negative: the accumulator starts at -inf, not 0.
    EXPECT_EQ(check("tessera 0.1;\ninput x: f32[3, 4];\nm[i] = max(j) (-1.0 - x[i, j] * x[i, j]);\noutput m;"), "");
    // Nested reductions and a reduction inside an expression.
    EXPECT_EQ(check("tessera 0.1;\ninput x: f32[4, 6];\n"
                    "y[i, j] = x[i, j] - (sum(k) x[i, k]) / 6.0 + max(k) (sum(l) x[l, k]);\noutput y;"),
              "");
}

TEST(LowerCompute, IntegerFloorDivModAndCasts) {
    EXPECT_EQ(check("tessera 0.1;\ninput x: i64[12];\n"
                    "q[n: 12] = x[n] / 3 + x[n] % 3 + (n - 6) / 4 * 10 + (n - 6) % 4 * 100;\noutput q;"),
              "");
    EXPECT_EQ(check("tessera 0.1;\ninput x: f32[6];\n"
                    "c[n]: i32 = cast(floor(x[n] * 3.0), i32);\nf[n] = x[n] % 0.75;\noutput c; output f;"),
              "");
}

TEST(LowerCompute, SelectGuardsOutOfRangeReads) {
    // select evaluates only the chosen branch: x[n - 1] at n = 0 is never read.
    EXPECT_EQ(check("tessera 0.1;\ninput x: f32[8];\n"
                    "d[n: 8] = select(n > 0, x[n] - x[n - 1], 0.0);\noutput d;"),
              "");
    // A branch holding a reduction becomes an if/else.
    ir::Model m = parse("tessera 0.1;\ninput x: f32[4, 4];\n"
                        "z[i: 4] = select(i > 0, sum(k) x[i - 1, k], 0.0);\noutput z;");
    EXPECT_EQ(checkAgainstReference(m.graph, makeInputs(m.graph), &m.program), "");
    const std::string text = kernelText(m, "z");
    EXPECT_NE(text.find("} else {"), std::string::npos) << text;
}

TEST(LowerCompute, TileUnrollVectorizeParallelStage) {
    ir::Model m = parse("tessera 0.1;\ninput A: f32[4, 10];\ninput B: f32[10, 6];\n"
                        "C[i, j] = sum(k) A[i, k] * B[k, j];\noutput C;\n"
                        "schedule C {\n  grid = spatial(2, 3);\n  block = repeat(2, 2);\n  tile k by 4;\n"
                        "  unroll k by 2;\n  stage A, B in shared;\n}\n");
    EXPECT_EQ(checkAgainstReference(m.graph, makeInputs(m.graph), &m.program), "");
    tessera::test::checkGolden("lower/compute_matmul_tiled.txt", kernelText(m, "C"));

    ir::Model v = parse("tessera 0.1;\ninput x: f32[6, 16];\n"
                        "y[r, c] = x[r, c] * 2.0 + 1.0;\noutput y;\n"
                        "schedule y {\n  parallel r;\n  vectorize c by 8;\n}\n");
    EXPECT_EQ(checkAgainstReference(v.graph, makeInputs(v.graph), &v.program), "");
    const std::string text = kernelText(v, "y");
    EXPECT_NE(text.find("// grid = spatial(6,1).repeat(1,16)"), std::string::npos) << text;
    EXPECT_NE(text.find("parallel for w_"), std::string::npos) << text;
    EXPECT_NE(text.find("vectorize(8) for gr1_1_"), std::string::npos) << text;
}

/// Every sample program: every node lowered (with its schedule when one names it), run, and
/// compared with the reference interpreter.
TEST(LowerCompute, EverySampleProgramLowersAndMatchesReference) {
    int programs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(TESSERA_SAMPLES)) {
        if (entry.path().extension() != ".tsr") continue;
        const std::string name = entry.path().filename().string();
        SCOPED_TRACE(name);
        auto m = pipeline::loadModel(entry.path().string());
        ASSERT_TRUE(m.ok()) << m.diagnostics().firstError()->format();
        ++programs;
        for (std::size_t i = 0; i < m->graph.numNodes(); ++i)
            EXPECT_TRUE(hasGenerator(m->graph.node(static_cast<ir::NodeId>(i))))
                << m->graph.node(static_cast<ir::NodeId>(i)).opType;
        // The kernels compute in f32 (the reference in double): sums of cancelling terms and
        // trigonometry of large f32 arguments differ by ~1e-5 absolute.
        EXPECT_EQ(checkAgainstReference(m->graph, makeInputs(m->graph), &m->program, {}, kF32Loose), "");
    }
    EXPECT_EQ(programs, 7);
}

TEST(LowerCompute, SampleSchedulesAreHonoured) {
    auto m = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/matmul_tiled.tsr");
    ASSERT_TRUE(m.ok());
    const ir::NodeId id = m->graph.findNode("C");
    auto lk = lowerNode(m->graph, id, m->program.scheduleFor("C"));
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().firstError()->format();
    EXPECT_EQ(lk->kernel.mappings,
              (std::vector<std::string>{"grid = spatial(2,2)", "block = spatial(16,16).repeat(8,8)"}));
    ASSERT_EQ(lk->kernel.notes.size(), 1u);
    EXPECT_EQ(lk->kernel.notes[0], "stage A, B in shared: no effect on the CPU target (caches do this)");
    const std::string text = printKernel(lk->kernel);
    EXPECT_NE(text.find("parallel for w_0 in 0..4 {  // grid = spatial(2,2)"), std::string::npos) << text;
    EXPECT_NE(text.find("for t_1 in 0..256 {  // block = spatial(16,16).repeat(8,8)"), std::string::npos) << text;
    EXPECT_NE(text.find("for k_o_"), std::string::npos) << text;
    EXPECT_NE(text.find("unroll(4) for k_i_"), std::string::npos) << text;
}

TEST(LowerCompute, ErrorsForBadSchedules) {
    ir::Model m = parse("tessera 0.1;\ninput A: f32[4, 10];\n"
                        "s[i] = sum(k) A[i, k];\noutput s;\n");
    ir::KernelScheduleDecl s;
    s.subject = "s";
    s.tiles.push_back({"q", 4, {}, {}});
    auto lk = lowerNode(m.graph, m.graph.findNode("s"), &s);
    ASSERT_FALSE(lk.ok());
    EXPECT_EQ(lk.diagnostics().firstError()->message, "schedule of 's' names unknown axis 'q'");
    ir::KernelScheduleDecl g;
    g.subject = "s";
    g.mappings.push_back({"grid", "spatial(2)", {}, {}});
    auto lg = lowerNode(m.graph, m.graph.findNode("s"), &g);
    ASSERT_FALSE(lg.ok());
    EXPECT_NE(lg.diagnostics().firstError()->message.find("does not cover [4]"), std::string::npos)
        << lg.diagnostics().firstError()->message;
}

}  // namespace
}  // namespace tessera::lower::test
