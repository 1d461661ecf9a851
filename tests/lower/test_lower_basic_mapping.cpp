// Mapped loop nests (lower_util's emitMappedLoops / resolveMappings): exact kernel text for
// schedules, coverage (every output element written once, the right value), predicates, and
// schedule errors.

#include <gtest/gtest.h>

#include "core/golden.h"
#include "core/lower/detail/lower_heavy.h"
#include "core/lower/detail/lower_util.h"
#include "core/test_ir_helpers.h"
#include "lower/test_lower_basic_util.h"

namespace tessera::lower::test {
namespace {

using ir::test::in;
using ir::test::runOne;

ir::KernelScheduleDecl sched(const std::string& grid, const std::string& block = {}) {
    ir::KernelScheduleDecl s;
    s.subject = "n0";
    if (!grid.empty()) s.mappings.push_back({"grid", grid, {}, {}});
    if (!block.empty()) s.mappings.push_back({"block", block, {}, {}});
    return s;
}

/// Lowers Relu over `type` with the schedule and checks it against the reference; returns the text.
std::string lowerRelu(const std::string& type, const ir::KernelScheduleDecl& s) {
    auto r = runOne("Relu", {in(type)});
    ir::ProgramSchedule prog;
    prog.schedules.push_back(s);
    EXPECT_EQ(checkAgainstReference(r.g, makeInputs(r.g), &prog), "");
    auto lk = lowerNode(r.g, 0, &s);
    if (!lk) return "error: " + lk.diagnostics().firstError()->message;
    return printKernel(lk->kernel);
}

TEST(LowerMapping, GridSpatialBlockRepeat) {
    // grid = spatial(4,2), block = repeat(2,3): 8 parallel workers, each a 2x3 loop nest.
    const std::string text = lowerRelu("f32[8,6]", sched("spatial(4, 2)", "repeat(2, 3)"));
    tessera::test::checkGolden("lower/mapping_grid_spatial_block_repeat.txt", text);
}

TEST(LowerMapping, ComposedWithPredicate) {
    // spatial(2,2) * repeat(2,2) has task shape [4,4]; the output [3,4] needs i < 3.
    const std::string text = lowerRelu("f32[3,4]", sched("spatial(2, 2) * repeat(2, 2)"));
    tessera::test::checkGolden("lower/mapping_composed_predicate.txt", text);
    EXPECT_NE(text.find("if (i0_"), std::string::npos) << text;
}

TEST(LowerMapping, ManyMappingsCoverTheOutputExactly) {
    // Each is checked against the reference: every element written with the right value.
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"spatial(4, 6)", ""},
        {"spatial(2, 3)", "spatial(2, 2)"},
        {"spatial(2, 3)", "repeat(2, 2)"},
        {"repeat(2, 1) * spatial(2, 6)", ""},
        {"col_spatial(4, 6)", ""},
        {"spatial(2, 2, ranks=[1, 0])", "repeat(2, 3, ranks=[1, 0])"},
        {"spatial(1, 2)", "spatial(4, 1) * repeat(1, 3, attrs='u2')"},
        {"spatial(3, 5)", ""},                 // task shape [3,5]? no: covers [3,5] < [4,6] -> error
        {"spatial(5, 7)", ""},                 // larger than [4,6]: predicate
        {"auto_map(4, 6, workers=8)", ""},
    };
    for (const auto& [g, b] : cases) {
        SCOPED_TRACE(g + " / " + b);
        auto r = runOne("Relu", {in("f32[4,6]")});
        const auto s = sched(g, b);
        auto lk = lowerNode(r.g, 0, &s);
        if (g == "spatial(3, 5)") {
            ASSERT_FALSE(lk.ok());
            EXPECT_NE(lk.diagnostics().firstError()->message.find("does not cover [4,6]"), std::string::npos)
                << lk.diagnostics().firstError()->message;
            continue;
        }
        ASSERT_TRUE(lk.ok()) << lk.diagnostics().firstError()->format();
        ir::ProgramSchedule prog;
        prog.schedules.push_back(s);
        EXPECT_EQ(checkAgainstReference(r.g, makeInputs(r.g), &prog), "");
    }
}

TEST(LowerMapping, MappingTextAndLoopKinds) {
    auto r = runOne("Relu", {in("f32[4,8]")});
    const auto s = sched("spatial(4, 1)", "repeat(1, 8, attrs='u4')");
    auto lk = lowerNode(r.g, 0, &s);
    ASSERT_TRUE(lk.ok());
    EXPECT_EQ(lk->kernel.mappings,
              (std::vector<std::string>{"grid = spatial(4,1)", "block = repeat(1,8, attrs=\"u4u4\")"}));
    const std::string text = printKernel(lk->kernel);
    EXPECT_NE(text.find("parallel for w_"), std::string::npos) << text;
    EXPECT_NE(text.find("unroll(4) for br0_1_"), std::string::npos) << text;
    // Warp and thread levels compose into the block.
    ir::KernelScheduleDecl w = sched("spatial(2, 1)");
    w.mappings.push_back({"warp", "spatial(2, 2)", {}, {}});
    w.mappings.push_back({"thread", "repeat(1, 4)", {}, {}});
    auto lw = lowerNode(r.g, 0, &w);
    ASSERT_TRUE(lw.ok()) << lw.diagnostics().firstError()->format();
    EXPECT_EQ(lw->kernel.mappings,
              (std::vector<std::string>{"grid = spatial(2,1)", "block = spatial(2,2).repeat(1,4)"}));
    ir::ProgramSchedule prog;
    prog.schedules.push_back(w);
    EXPECT_EQ(checkAgainstReference(r.g, makeInputs(r.g), &prog), "");
}

TEST(LowerMapping, ScheduleErrorsNameMappingAndKernel) {
    auto r = runOne("Relu", {in("f32[4,8]")});
    auto bad = sched("spatail(4, 8)");
    auto e1 = lowerNode(r.g, 0, &bad);
    ASSERT_FALSE(e1.ok());
    EXPECT_EQ(e1.diagnostics().firstError()->where, "node 'n0' (Relu)");
    EXPECT_NE(e1.diagnostics().firstError()->message.find("grid mapping \"spatail(4, 8)\" of kernel 'n0' does not parse"),
              std::string::npos)
        << e1.diagnostics().firstError()->message;
    auto rank = sched("spatial(32)");
    auto e2 = lowerNode(r.g, 0, &rank);
    ASSERT_FALSE(e2.ok());
    EXPECT_NE(e2.diagnostics().firstError()->message.find("has rank 1 but the tensor [4,8] has rank 2"), std::string::npos)
        << e2.diagnostics().firstError()->message;
    auto mismatch = sched("spatial(4, 8)", "repeat(2)");
    auto e3 = lowerNode(r.g, 0, &mismatch);
    ASSERT_FALSE(e3.ok());
    EXPECT_NE(e3.diagnostics().firstError()->message.find("do not compose"), std::string::npos)
        << e3.diagnostics().firstError()->message;
}

TEST(LowerMapping, DefaultCpuMappingShapes) {
    using detail::defaultCpuMapping;
    EXPECT_EQ(defaultCpuMapping({1, 32, 112, 112}, 2).grid.str(), "spatial(1,8,1,1).repeat(1,4,112,112)");
    EXPECT_EQ(defaultCpuMapping({7}, 2).grid.str(), "spatial(7)");
    EXPECT_EQ(defaultCpuMapping({3, 224}, 2).grid.str(), "spatial(3,2).repeat(1,112)");
    EXPECT_EQ(defaultCpuMapping({}, 2).grid.str(), "spatial(1)");
    EXPECT_EQ(defaultCpuMapping({1000}, 4).grid.str(), "spatial(10).repeat(100)");
    // Scalars: one task, no loop, the store has no index.
    auto r = runOne("Relu", {in("f32[]")});
    auto lk = lowerNode(r.g, 0, nullptr);
    ASSERT_TRUE(lk.ok());
    EXPECT_NE(printKernel(lk->kernel).find("y0[] = max(x0[], 0.0f)"), std::string::npos) << printKernel(lk->kernel);
    EXPECT_EQ(checkAgainstReference(r.g, makeInputs(r.g)), "");
}

}  // namespace
}  // namespace tessera::lower::test

namespace tessera::lower::test {
namespace {

// The default GPU plan: 256-thread blocks taken innermost dim first, the grid covering the rest;
// defaultSchedule reads it back from the kernel's recorded mappings.
TEST(LowerGpuDefaults, ElementwisePlan) {
    auto r = ir::test::runOne("Relu", {ir::test::in("f32[1,32,112,112]")});
    ASSERT_EQ(r.error(), "");
    LowerOptions cuda;
    cuda.target = Target::Cuda;
    const auto sched = defaultSchedule(r.g, 0, cuda);
    ASSERT_EQ(sched.size(), 2u);
    EXPECT_EQ(sched[0].level, "grid");
    EXPECT_EQ(sched[0].text, "spatial(1,32,56,1)");
    EXPECT_EQ(sched[1].level, "block");
    EXPECT_EQ(sched[1].text, "spatial(1,1,2,112)");
    auto lk = lowerNode(r.g, 0, nullptr, cuda);
    ASSERT_TRUE(lk.ok());
    const std::string text = printKernel(lk->kernel);
    EXPECT_NE(text.find("blocks for w_0 in 0..1792 {"), std::string::npos) << text;
    EXPECT_NE(text.find("threads for t_1 in 0..224 {"), std::string::npos) << text;
    // CPU defaults are unchanged by the target switch.
    const auto cpu = defaultCpuSchedule(r.g, 0, cuda);
    ASSERT_FALSE(cpu.empty());
    EXPECT_EQ(cpu[0].text.find("spatial(1,8,1,1)"), 0u) << cpu[0].text;
}

TEST(LowerGpuDefaults, TiledPlanCapsTheTile) {
    // A large output keeps a 4x4 per-thread tile of the CPU's 8x64.
    const auto big = detail::defaultGpuMapping({2048, 2048}, detail::tiledMapping({2048, 2048}, {8, 64}));
    EXPECT_EQ(big.grid.str(), "spatial(512,2)");
    ASSERT_TRUE(big.block.has_value());
    EXPECT_EQ(big.block->str(), "spatial(1,256).repeat(4,4)");
    EXPECT_EQ(big.target, Target::Cuda);
    // A small one (fewer than kGpuMinThreads tiles) gets one element per thread.
    const auto small = detail::defaultGpuMapping({16, 40}, detail::tiledMapping({16, 40}, {8, 64}));
    EXPECT_EQ(small.grid.str(), "spatial(3,1)");
    ASSERT_TRUE(small.block.has_value());
    EXPECT_EQ(small.block->str(), "spatial(6,40)");
}

}  // namespace
}  // namespace tessera::lower::test

namespace tessera::lower::test {
namespace {

// The GEMM template's occupancy rule: a 128x128 product is one 128x128 block; with a minimum of 16
// blocks it keeps the default plan (one output per thread), with 0 it takes the template.
TEST(LowerGpuDefaults, GemmTemplateNeedsEnoughBlocks) {
    auto r = ir::test::runOne("MatMul", {ir::test::in("f32[128,64]"), ir::test::in("f32[64,128]")});
    ASSERT_EQ(r.error(), "");
    LowerOptions cuda;
    cuda.target = Target::Cuda;
    auto always = lowerNode(r.g, 0, nullptr, cuda);
    ASSERT_TRUE(always.ok());
    EXPECT_NE(printKernel(always->kernel).find(" shared"), std::string::npos);
    cuda.gpuGemmMinBlocks = 16;
    auto small = lowerNode(r.g, 0, nullptr, cuda);
    ASSERT_TRUE(small.ok());
    const std::string text = printKernel(small->kernel);
    EXPECT_EQ(text.find(" shared"), std::string::npos) << text;
    EXPECT_NE(text.find("block = spatial(2,128)"), std::string::npos) << text;
}

}  // namespace
}  // namespace tessera::lower::test
