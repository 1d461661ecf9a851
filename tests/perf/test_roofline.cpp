// Roofline maths against hand-computed values in each chart mode.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/perf/roofline.h"

using namespace tessera::perf;

namespace {

// L1 1000, L2 500, L3 200, DRAM 50 GB/s; fp32 peak 800 (and a 400 no-FMA ceiling), fp64 400 GFLOP/s.
// Given out of order on purpose: levels must come back ordered from L1 outwards.
std::vector<Roof> cpuRoofs() {
    return {
        bandwidthRoof("DRAM bandwidth", "DRAM", 50.0, 16, "triad 512 MiB"),
        bandwidthRoof("L2 bandwidth", "L2", 500.0, 16),
        computeRoof("FP32 no-FMA", "fp32", 400.0, 16),
        bandwidthRoof("L1 bandwidth", "L1", 1000.0, 16),
        computeRoof("FP32 FMA peak", "fp32", 800.0, 16),
        bandwidthRoof("L3 bandwidth", "L3", 200.0, 16),
        computeRoof("FP64 FMA peak", "fp64", 400.0, 16),
    };
}

KernelPoint point(double flops, double bytes, double seconds) {
    KernelPoint p;
    p.name = "k";
    p.flops = flops;
    p.bytes = bytes;
    p.seconds = seconds;
    return p;
}

std::string firstError(const tessera::support::DiagnosticList& d) {
    const auto* e = d.firstError();
    return e ? e->message : std::string("<no error>");
}

}  // namespace

TEST(Roofline, AttainableAndRidge) {
    EXPECT_DOUBLE_EQ(ridgePoint(50.0, 800.0), 16.0);
    EXPECT_DOUBLE_EQ(ridgePoint(1000.0, 800.0), 0.8);
    EXPECT_TRUE(std::isinf(ridgePoint(0.0, 800.0)));
    EXPECT_DOUBLE_EQ(attainable(2.0, 50.0, 800.0), 100.0);   // below the ridge: slanted roof
    EXPECT_DOUBLE_EQ(attainable(20.0, 50.0, 800.0), 800.0);  // above: flat roof
    EXPECT_DOUBLE_EQ(attainable(16.0, 50.0, 800.0), 800.0);  // at the ridge both agree
    EXPECT_DOUBLE_EQ(attainable(0.0, 50.0, 800.0), 0.0);
    EXPECT_DOUBLE_EQ(attainable(std::numeric_limits<double>::infinity(), 50.0, 800.0), 800.0);
}

TEST(Roofline, NamesAndRanks) {
    EXPECT_STREQ(rooflineModeName(RooflineMode::Carm), "carm");
    EXPECT_STREQ(rooflineModeName(RooflineMode::Dram), "dram");
    EXPECT_STREQ(rooflineModeName(RooflineMode::Hierarchical), "hierarchical");
    EXPECT_STREQ(roofKindName(Roof::Kind::Bandwidth), "bandwidth");
    EXPECT_STREQ(roofKindName(Roof::Kind::Compute), "compute");
    EXPECT_EQ(memoryLevelRank("L1"), 0);
    EXPECT_EQ(memoryLevelRank("shared"), 1);
    EXPECT_EQ(memoryLevelRank("l2"), 2);
    EXPECT_EQ(memoryLevelRank("L3"), 3);
    EXPECT_EQ(memoryLevelRank("DRAM"), 4);
    EXPECT_EQ(memoryLevelRank("HBM"), 5);
    EXPECT_EQ(memoryLevelRank("L4"), -1);
    const Roof b = bandwidthRoof("x", "L2", 3.0);
    EXPECT_EQ(b.unit, "GB/s");
    EXPECT_EQ(b.kind, Roof::Kind::Bandwidth);
    const Roof c = computeRoof("y", "bf16", 4.0, 8);
    EXPECT_EQ(c.unit, "GFLOP/s");
    EXPECT_EQ(c.precision, "bf16");
    EXPECT_EQ(c.threads, 8);
}

TEST(Roofline, DramBelowRidgeIsBandwidthBound) {
    // AI = 2e9 / 1e9 = 2 < ridge 16; bound = 50 * 2 = 100; 2e9 FLOP in 0.05 s = 40 GFLOP/s.
    auto r = analysePoint(point(2e9, 1e9, 0.05), cpuRoofs(), RooflineMode::Dram);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    EXPECT_EQ(r->mode, RooflineMode::Dram);
    EXPECT_DOUBLE_EQ(r->ai, 2.0);
    EXPECT_DOUBLE_EQ(r->gflops, 40.0);
    EXPECT_DOUBLE_EQ(r->bound, 100.0);
    EXPECT_EQ(r->bindingRoof, "DRAM bandwidth");
    EXPECT_DOUBLE_EQ(r->percentOfBound, 40.0);
    EXPECT_EQ(r->computeRoof, "FP32 FMA peak");  // highest compute roof when no precision is asked
    ASSERT_EQ(r->levels.size(), 1u);
    EXPECT_EQ(r->levels[0].level, "DRAM");
}

TEST(Roofline, DramAboveAndAtRidgeIsComputeBound) {
    // AI 32 > 16: bound 800; 32e9 FLOP in 0.1 s = 320 GFLOP/s = 40 %.
    auto r = analysePoint(point(32e9, 1e9, 0.1), cpuRoofs(), RooflineMode::Dram);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    EXPECT_DOUBLE_EQ(r->ai, 32.0);
    EXPECT_DOUBLE_EQ(r->bound, 800.0);
    EXPECT_EQ(r->bindingRoof, "FP32 FMA peak");
    EXPECT_DOUBLE_EQ(r->percentOfBound, 40.0);

    // Exactly at the ridge the compute roof is reported.
    auto at = analysePoint(point(16e9, 1e9, 0.1), cpuRoofs(), RooflineMode::Dram);
    ASSERT_TRUE(at.ok());
    EXPECT_DOUBLE_EQ(at->bound, 800.0);
    EXPECT_EQ(at->bindingRoof, "FP32 FMA peak");
    EXPECT_DOUBLE_EQ(at->percentOfBound, 20.0);
}

TEST(Roofline, DramPrecisionSelectsComputeRoof) {
    AnalysisOptions fp64;
    fp64.precision = "fp64";
    // AI 32: min(50*32, 400) = 400 under the fp64 peak.
    auto r = analysePoint(point(32e9, 1e9, 0.1), cpuRoofs(), RooflineMode::Dram, fp64);
    ASSERT_TRUE(r.ok());
    EXPECT_DOUBLE_EQ(r->bound, 400.0);
    EXPECT_EQ(r->bindingRoof, "FP64 FMA peak");
    EXPECT_DOUBLE_EQ(r->percentOfBound, 80.0);

    AnalysisOptions fp16;
    fp16.precision = "fp16";
    auto none = analysePoint(point(32e9, 1e9, 0.1), cpuRoofs(), RooflineMode::Dram, fp16);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(firstError(none.diagnostics()), "no compute roof of precision fp16 in the profile");
}

TEST(Roofline, DramFallsBackToHbmAndNeedsOne) {
    std::vector<Roof> gpu = {bandwidthRoof("HBM", "HBM", 3000.0), bandwidthRoof("L2", "L2", 8000.0),
                             computeRoof("FP32", "fp32", 60000.0)};
    auto r = analysePoint(point(4e9, 1e9, 1e-3), gpu, RooflineMode::Dram);
    ASSERT_TRUE(r.ok());
    EXPECT_DOUBLE_EQ(r->bound, 12000.0);  // 3000 * 4
    EXPECT_EQ(r->bindingRoof, "HBM");
    EXPECT_DOUBLE_EQ(r->gflops, 4000.0);

    std::vector<Roof> noMain = {bandwidthRoof("L2", "L2", 8000.0), computeRoof("FP32", "fp32", 60000.0)};
    auto bad = analysePoint(point(4e9, 1e9, 1e-3), noMain, RooflineMode::Dram);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(firstError(bad.diagnostics()),
              "no DRAM or HBM bandwidth roof in the profile (the classic roofline needs one)");
}

TEST(Roofline, CarmReportsEveryLevelAndTheL1Top) {
    // AI = 2e9 / 4e9 = 0.5 (all bytes issued). 2e9 FLOP in 0.01 s = 200 GFLOP/s.
    auto r = analysePoint(point(2e9, 4e9, 0.01), cpuRoofs(), RooflineMode::Carm);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    EXPECT_DOUBLE_EQ(r->ai, 0.5);
    EXPECT_DOUBLE_EQ(r->gflops, 200.0);
    EXPECT_DOUBLE_EQ(r->bound, 500.0);  // min(1000 * 0.5, 800)
    EXPECT_EQ(r->bindingRoof, "L1 bandwidth");
    EXPECT_DOUBLE_EQ(r->percentOfBound, 40.0);
    ASSERT_EQ(r->levels.size(), 4u);
    const char* levels[] = {"L1", "L2", "L3", "DRAM"};
    const double bounds[] = {500.0, 250.0, 100.0, 25.0};
    const double percents[] = {40.0, 80.0, 200.0, 800.0};
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(r->levels[i].level, levels[i]);
        EXPECT_DOUBLE_EQ(r->levels[i].ai, 0.5);  // one AI for every level in CARM
        EXPECT_DOUBLE_EQ(r->levels[i].bound, bounds[i]);
        EXPECT_EQ(r->levels[i].bindingRoof, r->levels[i].roofName);
        EXPECT_DOUBLE_EQ(r->levels[i].percentOfBound, percents[i]);
    }
}

TEST(Roofline, CarmAboveL1RidgeIsComputeBound) {
    // AI 1 > L1 ridge 0.8 but below the DRAM ridge 16.
    auto r = analysePoint(point(1e9, 1e9, 0.002), cpuRoofs(), RooflineMode::Carm);
    ASSERT_TRUE(r.ok());
    EXPECT_DOUBLE_EQ(r->bound, 800.0);
    EXPECT_EQ(r->bindingRoof, "FP32 FMA peak");
    EXPECT_DOUBLE_EQ(r->percentOfBound, 62.5);  // 500 / 800
    EXPECT_EQ(r->levels[0].bindingRoof, "FP32 FMA peak");
    EXPECT_EQ(r->levels[3].bindingRoof, "DRAM bandwidth");
    EXPECT_DOUBLE_EQ(r->levels[3].bound, 50.0);
}

TEST(Roofline, ZeroBytesIsInfiniteIntensity) {
    for (RooflineMode mode : {RooflineMode::Carm, RooflineMode::Dram}) {
        auto r = analysePoint(point(4e9, 0.0, 0.01), cpuRoofs(), mode);
        ASSERT_TRUE(r.ok()) << rooflineModeName(mode);
        EXPECT_TRUE(std::isinf(r->ai));
        EXPECT_DOUBLE_EQ(r->bound, 800.0);
        EXPECT_EQ(r->bindingRoof, "FP32 FMA peak");
        EXPECT_DOUBLE_EQ(r->percentOfBound, 50.0);
    }
}

TEST(Roofline, ZeroFlopsSitsAtZero) {
    auto r = analysePoint(point(0.0, 1e9, 0.01), cpuRoofs(), RooflineMode::Dram);
    ASSERT_TRUE(r.ok());
    EXPECT_DOUBLE_EQ(r->ai, 0.0);
    EXPECT_DOUBLE_EQ(r->bound, 0.0);
    EXPECT_DOUBLE_EQ(r->percentOfBound, 0.0);
    EXPECT_EQ(r->bindingRoof, "DRAM bandwidth");
}

TEST(Roofline, HierarchicalTakesTheTightestLevel) {
    KernelPoint p = point(8e9, 0.0, 0.1);  // 80 GFLOP/s
    p.levelBytes = {{"DRAM", 2e9}, {"L1", 16e9}, {"L2", 8e9}, {"L9", 1e9}};
    auto r = analysePoint(p, cpuRoofs(), RooflineMode::Hierarchical);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    ASSERT_EQ(r->levels.size(), 3u);
    EXPECT_EQ(r->levels[0].level, "L1");
    EXPECT_DOUBLE_EQ(r->levels[0].ai, 0.5);
    EXPECT_DOUBLE_EQ(r->levels[0].bound, 500.0);
    EXPECT_EQ(r->levels[1].level, "L2");
    EXPECT_DOUBLE_EQ(r->levels[1].ai, 1.0);
    EXPECT_DOUBLE_EQ(r->levels[1].bound, 500.0);
    EXPECT_EQ(r->levels[2].level, "DRAM");
    EXPECT_DOUBLE_EQ(r->levels[2].ai, 4.0);
    EXPECT_DOUBLE_EQ(r->levels[2].bound, 200.0);
    EXPECT_DOUBLE_EQ(r->ai, 4.0);
    EXPECT_DOUBLE_EQ(r->bound, 200.0);
    EXPECT_EQ(r->bindingRoof, "DRAM bandwidth");
    EXPECT_DOUBLE_EQ(r->percentOfBound, 40.0);
    // The L9 count has no roof: a warning, not an error.
    ASSERT_EQ(r.diagnostics().items().size(), 1u);
    EXPECT_EQ(r.diagnostics().items()[0].severity, tessera::support::Severity::Warning);
    EXPECT_EQ(r.diagnostics().items()[0].message,
              "bytes at level 'L9' have no bandwidth roof in the profile; level skipped");
}

TEST(Roofline, HierarchicalComputeBoundAndNoUsableLevel) {
    KernelPoint p = point(80e9, 0.0, 1.0);
    p.levelBytes = {{"L1", 10e9}, {"DRAM", 1e9}};  // AI 8 and 80: both above their ridges
    auto r = analysePoint(p, cpuRoofs(), RooflineMode::Hierarchical);
    ASSERT_TRUE(r.ok());
    EXPECT_DOUBLE_EQ(r->bound, 800.0);
    EXPECT_EQ(r->bindingRoof, "FP32 FMA peak");
    EXPECT_DOUBLE_EQ(r->percentOfBound, 10.0);

    KernelPoint none = point(1e9, 0.0, 1.0);
    none.levelBytes = {{"L9", 1e9}};
    auto bad = analysePoint(none, cpuRoofs(), RooflineMode::Hierarchical);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(firstError(bad.diagnostics()), "no memory level has both a byte count and a bandwidth roof");
}

TEST(Roofline, ThreadsFilterAndBestRoofPerLevel) {
    std::vector<Roof> roofs = {bandwidthRoof("DRAM 1t", "DRAM", 10.0, 1), bandwidthRoof("DRAM 16t", "DRAM", 50.0, 16),
                               bandwidthRoof("DRAM 16t b", "DRAM", 40.0, 16), computeRoof("F 1t", "fp32", 50.0, 1),
                               computeRoof("F 16t", "fp32", 800.0, 16)};
    AnalysisOptions one;
    one.threads = 1;
    auto r1 = analysePoint(point(2e9, 1e9, 1.0), roofs, RooflineMode::Dram, one);
    ASSERT_TRUE(r1.ok());
    EXPECT_DOUBLE_EQ(r1->bound, 20.0);
    EXPECT_EQ(r1->bindingRoof, "DRAM 1t");
    auto all = analysePoint(point(2e9, 1e9, 1.0), roofs, RooflineMode::Dram);
    ASSERT_TRUE(all.ok());
    EXPECT_DOUBLE_EQ(all->bound, 100.0);  // highest DRAM roof (50) of any thread count
    EXPECT_EQ(all->bindingRoof, "DRAM 16t");
    AnalysisOptions eight;
    eight.threads = 8;
    auto r8 = analysePoint(point(2e9, 1e9, 1.0), roofs, RooflineMode::Dram, eight);
    ASSERT_FALSE(r8.ok());
    EXPECT_EQ(firstError(r8.diagnostics()), "no compute roof with 8 threads in the profile");
}

TEST(Roofline, InvalidPointsAndRoofs) {
    auto noWork = analysePoint(point(0.0, 0.0, 1.0), cpuRoofs(), RooflineMode::Carm);
    ASSERT_FALSE(noWork.ok());
    EXPECT_EQ(firstError(noWork.diagnostics()), "the kernel has neither FLOPs nor bytes: it has no place on a roofline");

    auto noTime = analysePoint(point(1.0, 1.0, 0.0), cpuRoofs(), RooflineMode::Carm);
    ASSERT_FALSE(noTime.ok());
    EXPECT_EQ(firstError(noTime.diagnostics()), "time 0 s is not a positive number");

    auto negative = analysePoint(point(-1.0, 1.0, 1.0), cpuRoofs(), RooflineMode::Carm);
    ASSERT_FALSE(negative.ok());
    EXPECT_EQ(firstError(negative.diagnostics()), "FLOP count -1 is not a finite number >= 0");

    auto noBandwidth = analysePoint(point(1.0, 1.0, 1.0), {computeRoof("F", "fp32", 1.0)}, RooflineMode::Carm);
    ASSERT_FALSE(noBandwidth.ok());
    EXPECT_EQ(firstError(noBandwidth.diagnostics()), "no bandwidth roof in the profile");

    auto zeroRoof = analysePoint(point(1.0, 1.0, 1.0), {computeRoof("F", "fp32", 0.0), bandwidthRoof("D", "DRAM", 1.0)},
                                 RooflineMode::Dram);
    ASSERT_FALSE(zeroRoof.ok());
    EXPECT_EQ(firstError(zeroRoof.diagnostics()), "value 0 is not a positive number");
    EXPECT_EQ(zeroRoof.diagnostics().firstError()->where, "roof 'F'");
}
