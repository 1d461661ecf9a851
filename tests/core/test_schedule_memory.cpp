// Warp memory analysis: sectors and bank wavefronts on hand-worked cases (see memory_analysis.h for
// the precise definitions).
#include <gtest/gtest.h>

#include "core/schedule/mapping_parser.h"
#include "core/schedule/memory_analysis.h"

namespace {

using tessera::schedule::analyzeMemory;
using tessera::schedule::MemoryAccessSpec;
using tessera::schedule::MemoryLayout;
using tessera::schedule::MemoryReport;
using tessera::schedule::parseMapping;

MemoryReport run(const std::string& expr, std::vector<int64_t> shape = {}, int64_t elemBytes = 4, int64_t step = 0,
                 MemoryLayout layout = MemoryLayout::RowMajor) {
    auto m = parseMapping(expr);
    EXPECT_TRUE(m.ok()) << expr;
    MemoryAccessSpec spec;
    spec.shape = std::move(shape);
    spec.elemBytes = elemBytes;
    spec.step = step;
    spec.layout = layout;
    auto r = analyzeMemory(*m, spec);
    EXPECT_TRUE(r.ok()) << expr;
    return r.ok() ? *r : MemoryReport{};
}

TEST(ScheduleMemory, ContiguousFloatWarpIsIdeal) {
    auto r = run("spatial(32)");
    ASSERT_EQ(r.warps.size(), 1u);
    const auto& w = r.warps[0];
    EXPECT_EQ(w.activeLanes, 32);
    EXPECT_EQ(w.sectors, 4);
    EXPECT_EQ(w.idealSectors, 4);
    EXPECT_EQ(w.distinctWords, 32);
    EXPECT_EQ(w.wavefronts, 1);
    EXPECT_EQ(w.idealWavefronts, 1);
    EXPECT_EQ(w.conflictDegree, 1);
    EXPECT_FALSE(w.uncoalesced);
    EXPECT_FALSE(w.bankConflict);
    EXPECT_EQ(r.badWarps, 0);
    EXPECT_EQ(r.steps, 1);
}

TEST(ScheduleMemory, ColumnOfRowMajorSquareIsWorstCase) {
    auto r = run("spatial(32,1)", {32, 32});
    const auto& w = r.warps.at(0);
    EXPECT_EQ(w.sectors, 32);
    EXPECT_EQ(w.idealSectors, 4);
    EXPECT_EQ(w.wavefronts, 32);
    EXPECT_EQ(w.idealWavefronts, 1);
    EXPECT_EQ(w.conflictDegree, 32);
    EXPECT_TRUE(w.uncoalesced);
    EXPECT_TRUE(w.bankConflict);
    EXPECT_EQ(r.badWarps, 1);
}

TEST(ScheduleMemory, PaddedColumnIsConflictFree) {
    auto r = run("spatial(32,1)", {32, 33});
    const auto& w = r.warps.at(0);
    EXPECT_EQ(w.sectors, 32);  // still one sector per lane in global memory
    EXPECT_EQ(w.wavefronts, 1);
    EXPECT_FALSE(w.bankConflict);
    EXPECT_TRUE(w.uncoalesced);
}

TEST(ScheduleMemory, ColumnMajorColumnIsContiguous) {
    auto r = run("spatial(32,1)", {32, 32}, 4, 0, MemoryLayout::ColumnMajor);
    EXPECT_EQ(r.warps.at(0).sectors, 4);
    EXPECT_EQ(r.warps.at(0).wavefronts, 1);
}

TEST(ScheduleMemory, DoublesTakeTwoWavefrontsWithoutConflict) {
    auto r = run("spatial(32)", {}, 8);
    const auto& w = r.warps.at(0);
    EXPECT_EQ(w.sectors, 8);
    EXPECT_EQ(w.idealSectors, 8);
    EXPECT_EQ(w.distinctWords, 64);
    EXPECT_EQ(w.wavefronts, 2);
    EXPECT_EQ(w.idealWavefronts, 2);
    EXPECT_EQ(w.conflictDegree, 1);
    EXPECT_FALSE(w.bankConflict);
}

TEST(ScheduleMemory, HalvesShareWords) {
    auto r = run("spatial(32)", {}, 2);
    const auto& w = r.warps.at(0);
    EXPECT_EQ(w.sectors, 2);
    EXPECT_EQ(w.idealSectors, 2);
    EXPECT_EQ(w.distinctWords, 16);
    EXPECT_EQ(w.wavefronts, 1);
    EXPECT_FALSE(w.bankConflict);
}

TEST(ScheduleMemory, BroadcastIsFree) {
    auto r = run("spatial(32).projection({0: 0})", {1});
    const auto& w = r.warps.at(0);
    EXPECT_EQ(w.activeLanes, 32);
    EXPECT_EQ(w.distinctElements, 1);
    EXPECT_EQ(w.sectors, 1);
    EXPECT_EQ(w.idealSectors, 1);
    EXPECT_EQ(w.wavefronts, 1);
    EXPECT_FALSE(w.uncoalesced || w.bankConflict);
}

TEST(ScheduleMemory, StrideTwoIsTwoWayConflict) {
    auto r = run("spatial(32,1)", {32, 2});
    const auto& w = r.warps.at(0);
    EXPECT_EQ(w.sectors, 8);
    EXPECT_EQ(w.idealSectors, 4);
    EXPECT_EQ(w.wavefronts, 2);
    EXPECT_EQ(w.conflictDegree, 2);
}

TEST(ScheduleMemory, RowWarpsVersusColumnWarps) {
    auto rows = run("spatial(32,32)");
    ASSERT_EQ(rows.warps.size(), 32u);
    for (const auto& w : rows.warps) {
        EXPECT_EQ(w.sectors, 4);
        EXPECT_EQ(w.wavefronts, 1);
    }
    EXPECT_EQ(rows.totalSectors, 128);
    auto cols = run("col_spatial(32,32)");
    for (const auto& w : cols.warps) {
        EXPECT_EQ(w.sectors, 32);
        EXPECT_EQ(w.wavefronts, 32);
    }
    EXPECT_EQ(cols.badWarps, 32);
    EXPECT_EQ(cols.totalSectors, 1024);
    EXPECT_EQ(cols.totalIdealSectors, 128);
}

TEST(ScheduleMemory, StepsFollowEachWorkersList) {
    // Strided (cyclic): every step is one coalesced row segment.
    auto cyclic = run("repeat(4).spatial(32)", {}, 4, 2);
    EXPECT_EQ(cyclic.steps, 4);
    EXPECT_EQ(cyclic.step, 2);
    EXPECT_EQ(cyclic.warps.at(0).sectors, 4);
    EXPECT_EQ(cyclic.warps.at(0).wavefronts, 1);
    // Blocked: lane w reads element 4w + s, a 16-byte stride.
    auto blocked = run("spatial(32).repeat(4)", {}, 4, 1);
    EXPECT_EQ(blocked.warps.at(0).sectors, 16);
    EXPECT_EQ(blocked.warps.at(0).idealSectors, 4);
    EXPECT_EQ(blocked.warps.at(0).wavefronts, 4);
    EXPECT_EQ(blocked.warps.at(0).conflictDegree, 4);
    // A step past the end is an error (StepPastTheEndIsAnError), not an empty report.
}

TEST(ScheduleMemory, PartialWarpsAndPredicatedLanes) {
    auto partial = run("spatial(40)");
    ASSERT_EQ(partial.warps.size(), 2u);
    EXPECT_EQ(partial.warps[1].activeLanes, 8);
    EXPECT_EQ(partial.warps[1].sectors, 1);
    EXPECT_EQ(partial.warps[1].idealSectors, 1);
    auto predicated = run("spatial(32)", {20});
    EXPECT_EQ(predicated.warps.at(0).activeLanes, 20);
    EXPECT_EQ(predicated.warps.at(0).sectors, 3);
    EXPECT_EQ(predicated.warps.at(0).idealSectors, 3);
}

TEST(ScheduleMemory, BadSpecsAreErrors) {
    auto m = parseMapping("spatial(32)");
    MemoryAccessSpec spec;
    spec.elemBytes = 0;
    EXPECT_FALSE(analyzeMemory(*m, spec).ok());
    spec.elemBytes = 4;
    spec.shape = {4, 8};
    EXPECT_FALSE(analyzeMemory(*m, spec).ok());
    spec.shape = {0};
    EXPECT_FALSE(analyzeMemory(*m, spec).ok());
    spec.shape = {int64_t{1} << 62};
    EXPECT_FALSE(analyzeMemory(*m, spec).ok());
    spec.shape = {};
    spec.step = -1;
    EXPECT_FALSE(analyzeMemory(*m, spec).ok());
    spec.step = 0;
    spec.maxWorkers = 16;
    EXPECT_FALSE(analyzeMemory(*m, spec).ok());
}

}  // namespace

TEST(ScheduleMemory, StepPastTheEndIsAnError) {
    auto m = tessera::schedule::parseMapping("spatial(4,8).repeat(2,2)");
    ASSERT_TRUE(m.ok());
    tessera::schedule::MemoryAccessSpec spec;
    spec.step = 4;  // steps are 0..3
    auto r = tessera::schedule::analyzeMemory(*m, spec);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().firstError()->message,
              "step 4 is past the last step: each worker runs 4 task(s), steps 0..3");
    spec.step = 3;
    EXPECT_TRUE(tessera::schedule::analyzeMemory(*m, spec).ok());
}
