// Kernel samples and points of a run (core/perf/kernel_points.h, core/pipeline/roofline_points.h)
// against hand-computed values.

#include <gtest/gtest.h>

#include <cmath>

#include "core/perf/kernel_points.h"
#include "core/pipeline/roofline_points.h"

using namespace tessera;
using perf::RooflineMode;

namespace {

/// A CPU run of two kernels and a reference step, with hand-chosen counts.
///   conv: 2e9 useful FLOPs (issued 2.5e9), 4e8 global bytes, 1e8 shared bytes in counts,
///         compulsory 5e7, median 0.01 s  -> 200 GFLOP/s
///   relu: FLOPs unknown to the registry (issued 1e6), 8e6 bytes, compulsory 8e6, 1e-4 s -> 10 GFLOP/s
void makeRun(pipeline::RunReport& report, pipeline::CompiledModel& cm, lower::Target target) {
    cm.target = target;
    pipeline::CompiledStep conv;
    conv.name = "conv";
    conv.opType = "Conv";
    conv.counts.flops = 2.5e9;
    conv.counts.loadBytes = 300'000'000;
    conv.counts.storeBytes = 100'000'000;
    conv.counts.sharedLoadBytes = 60'000'000;
    conv.counts.sharedStoreBytes = 40'000'000;
    conv.counts.localLoadBytes = 999;  // registers: never counted
    conv.counts.compulsoryBytes = 50'000'000;
    pipeline::CompiledStep relu;
    relu.name = "relu";
    relu.opType = "Relu";
    relu.counts.flops = 1e6;
    relu.counts.loadBytes = 4'000'000;
    relu.counts.storeBytes = 4'000'000;
    relu.counts.compulsoryBytes = 8'000'000;
    relu.counts.exact = false;
    pipeline::CompiledStep ref;
    ref.name = "branch";
    ref.kind = pipeline::StepKind::Reference;
    relu.group = "g1";
    cm.steps = {conv, ref, relu};
    schedule::FusionGroup g1;
    g1.name = "g1";
    g1.kind = schedule::FusionKind::PrologueEpilogue;
    g1.ops = {"relu", "add"};
    g1.anchor = "relu";
    cm.plan.groups = {g1};

    pipeline::KernelReport k1;
    k1.name = "conv";
    k1.opType = "Conv";
    k1.ops = {"conv"};
    k1.flops = 2.5e9;
    k1.usefulFlops = 2e9;
    k1.bytes = 400'000'000;
    k1.compulsoryBytes = 50'000'000;
    k1.time.median = 0.01;
    pipeline::KernelReport kr;
    kr.name = "branch";
    kr.opType = "If";
    kr.reference = true;
    kr.time.median = 1.0;
    pipeline::KernelReport k2;
    k2.name = "relu";
    k2.opType = "Relu";
    k2.ops = {"relu", "add"};  // a fused kernel
    k2.flops = 1e6;
    k2.usefulFlops = -1;
    k2.bytes = 8'000'000;
    k2.compulsoryBytes = 8'000'000;
    k2.time.median = 1e-4;
    report.kernels = {k1, kr, k2};
}

std::vector<perf::Roof> profileRoofs() {
    using perf::bandwidthRoof;
    using perf::computeRoof;
    return {
        computeRoof("FP32 FMA peak", "fp32", 100.0, 1, "fma avx2"),
        computeRoof("FP32 FMA peak", "fp32", 539.0, 2, "fma avx2"),
        computeRoof("FP32 ADD peak", "fp32", 270.0, 2, "add avx2"),
        computeRoof("FP64 FMA peak", "fp64", 269.0, 2, "fma avx2"),
        bandwidthRoof("DRAM triad bandwidth", "DRAM", 80.0, 2, "triad 512 MiB"),
        bandwidthRoof("DRAM load bandwidth", "DRAM", 95.0, 2, "load 512 MiB"),
        bandwidthRoof("DRAM load bandwidth", "DRAM", 60.0, 1, "load 512 MiB"),
        bandwidthRoof("L1 load bandwidth", "L1", 1000.0, 2, "load 32 KiB"),
        bandwidthRoof("L2 copy bandwidth", "L2", 400.0, 4, "copy 1 MiB"),
    };
}

}  // namespace

TEST(KernelPoints, SamplesFromRunCpu) {
    pipeline::RunReport report;
    pipeline::CompiledModel cm;
    makeRun(report, cm, lower::Target::Cpu);
    const auto samples = pipeline::kernelSamples(report, cm);
    ASSERT_EQ(samples.size(), 2u);  // the reference step has no point
    const auto& c = samples[0];
    EXPECT_EQ(c.name, "conv");
    EXPECT_EQ(c.group, "");
    EXPECT_EQ(c.fusionKind, "");
    EXPECT_DOUBLE_EQ(c.flops, 2e9);  // useful FLOPs win over issued ones
    EXPECT_DOUBLE_EQ(c.seconds, 0.01);
    EXPECT_DOUBLE_EQ(c.issuedBytes, 4e8);
    EXPECT_DOUBLE_EQ(c.compulsoryBytes, 5e7);
    ASSERT_EQ(c.levelBytes.size(), 2u);
    EXPECT_EQ(c.levelBytes[0].level, "L1");
    EXPECT_DOUBLE_EQ(c.levelBytes[0].bytes, 5e8);  // global 4e8 + shared 1e8
    EXPECT_EQ(c.levelBytes[1].level, "DRAM");
    EXPECT_DOUBLE_EQ(c.levelBytes[1].bytes, 5e7);
    EXPECT_TRUE(c.exactCounts);
    EXPECT_DOUBLE_EQ(perf::sampleGflops(c), 200.0);

    const auto& r = samples[1];
    EXPECT_EQ(r.group, "relu");  // covers two nodes
    EXPECT_EQ(r.fusionKind, "prologue-epilogue");  // the kind of its step's plan group
    EXPECT_DOUBLE_EQ(r.flops, 1e6);  // registry count unknown: issued FLOPs
    EXPECT_FALSE(r.exactCounts);
    EXPECT_DOUBLE_EQ(perf::sampleGflops(r), 10.0);

    const auto carm = pipeline::kernelPoints(report, cm, RooflineMode::Carm);
    ASSERT_EQ(carm.size(), 2u);
    EXPECT_DOUBLE_EQ(carm[0].bytes, 4e8);
    const auto dram = pipeline::kernelPoints(report, cm, RooflineMode::Dram);
    EXPECT_DOUBLE_EQ(dram[0].bytes, 5e7);

    auto dots = perf::sampleDots(c, RooflineMode::Carm);
    ASSERT_EQ(dots.size(), 1u);
    EXPECT_DOUBLE_EQ(dots[0].ai, 5.0);
    dots = perf::sampleDots(c, RooflineMode::Dram);
    EXPECT_DOUBLE_EQ(dots[0].ai, 40.0);
    dots = perf::sampleDots(c, RooflineMode::Hierarchical);
    ASSERT_EQ(dots.size(), 2u);
    EXPECT_DOUBLE_EQ(dots[0].ai, 4.0);
    EXPECT_EQ(dots[0].level, "L1");
    EXPECT_DOUBLE_EQ(dots[1].ai, 40.0);
}

TEST(KernelPoints, SamplesFromRunCuda) {
    pipeline::RunReport report;
    pipeline::CompiledModel cm;
    makeRun(report, cm, lower::Target::Cuda);
    const auto samples = pipeline::kernelSamples(report, cm);
    ASSERT_EQ(samples.size(), 2u);
    ASSERT_EQ(samples[0].levelBytes.size(), 3u);
    EXPECT_EQ(samples[0].levelBytes[0].level, "shared");
    EXPECT_DOUBLE_EQ(samples[0].levelBytes[0].bytes, 1e8);
    EXPECT_EQ(samples[0].levelBytes[1].level, "L2");
    EXPECT_DOUBLE_EQ(samples[0].levelBytes[1].bytes, 4e8);
    EXPECT_EQ(samples[0].levelBytes[2].level, "HBM");
    EXPECT_DOUBLE_EQ(samples[0].levelBytes[2].bytes, 5e7);
    // No shared traffic: no shared level.
    ASSERT_EQ(samples[1].levelBytes.size(), 2u);
    EXPECT_EQ(samples[1].levelBytes[0].level, "L2");
}

TEST(KernelPoints, ChartRoofsChooseThreadsLevelsAndPrecision) {
    const auto roofs = perf::chartRoofs(profileRoofs(), 2, "fp32");
    // L1, L2 (only measured at 4 threads: nearest count), DRAM (best of load 95 / triad 80 at 2
    // threads), then fp32 FMA 539 (2 threads, not the 1-thread 100) and ADD 270; no fp64.
    ASSERT_EQ(roofs.size(), 5u);
    EXPECT_EQ(roofs[0].level, "L1");
    EXPECT_DOUBLE_EQ(roofs[0].value, 1000.0);
    EXPECT_EQ(roofs[1].level, "L2");
    EXPECT_EQ(roofs[1].threads, 4);
    EXPECT_EQ(roofs[2].level, "DRAM");
    EXPECT_DOUBLE_EQ(roofs[2].value, 95.0);
    EXPECT_EQ(roofs[3].name, "FP32 FMA peak");
    EXPECT_DOUBLE_EQ(roofs[3].value, 539.0);
    EXPECT_EQ(roofs[4].name, "FP32 ADD peak");

    const auto one = perf::chartRoofs(profileRoofs(), 1, "fp32");
    ASSERT_EQ(one.size(), 5u);
    EXPECT_DOUBLE_EQ(one[2].value, 60.0);   // DRAM at 1 thread
    EXPECT_DOUBLE_EQ(one[3].value, 270.0);  // ADD only at 2 threads: nearest
    EXPECT_DOUBLE_EQ(one[4].value, 100.0);  // FMA at 1 thread

    // An absent precision keeps every precision.
    const auto anyPrec = perf::chartRoofs(profileRoofs(), 2, "bf16");
    EXPECT_EQ(anyPrec.size(), 6u);

    const auto dramOnly = perf::roofsForMode(roofs, RooflineMode::Dram);
    ASSERT_EQ(dramOnly.size(), 3u);
    EXPECT_EQ(dramOnly[0].level, "DRAM");
    EXPECT_EQ(perf::roofsForMode(roofs, RooflineMode::Carm).size(), 5u);
}

TEST(KernelPoints, AnalysisAgainstHandValues) {
    pipeline::RunReport report;
    pipeline::CompiledModel cm;
    makeRun(report, cm, lower::Target::Cpu);
    const auto roofs = perf::chartRoofs(profileRoofs(), 2, "fp32");

    // DRAM: conv AI 40 >= ridge 539/95 = 5.67: compute-bound, bound 539, 200/539 = 37.1 %.
    auto dram = pipeline::analyseKernels(report, cm, roofs, RooflineMode::Dram);
    ASSERT_EQ(dram.size(), 2u);
    ASSERT_TRUE(dram[0].analysis);
    EXPECT_DOUBLE_EQ(dram[0].analysis->ai, 40.0);
    EXPECT_DOUBLE_EQ(dram[0].analysis->bound, 539.0);
    EXPECT_EQ(dram[0].analysis->bindingRoof, "FP32 FMA peak");
    EXPECT_NEAR(dram[0].analysis->percentOfBound, 100.0 * 200.0 / 539.0, 1e-9);
    // relu: AI 1e6/8e6 = 0.125: DRAM-bound at 95 * 0.125 = 11.875; 10 / 11.875 = 84.2 %.
    ASSERT_TRUE(dram[1].analysis);
    EXPECT_DOUBLE_EQ(dram[1].analysis->bound, 11.875);
    EXPECT_EQ(dram[1].analysis->bindingRoof, "DRAM load bandwidth");
    EXPECT_NEAR(dram[1].analysis->percentOfBound, 100.0 * 10.0 / 11.875, 1e-9);

    // CARM: conv AI 5 under L1 1000 -> min(5000, 539) = 539 (compute roof).
    auto carm = pipeline::analyseKernels(report, cm, roofs, RooflineMode::Carm);
    ASSERT_TRUE(carm[0].analysis);
    EXPECT_DOUBLE_EQ(carm[0].analysis->ai, 5.0);
    EXPECT_DOUBLE_EQ(carm[0].analysis->bound, 539.0);

    // Hierarchical: conv L1 AI 4 -> min(4000, 539) = 539; DRAM AI 40 -> 539: the first tightest.
    // relu: L1 AI 0.125 -> 125; DRAM 0.125 -> 11.875: DRAM binds.
    auto hier = pipeline::analyseKernels(report, cm, roofs, RooflineMode::Hierarchical);
    ASSERT_TRUE(hier[1].analysis);
    ASSERT_EQ(hier[1].analysis->levels.size(), 2u);
    EXPECT_DOUBLE_EQ(hier[1].analysis->levels[0].bound, 125.0);
    EXPECT_DOUBLE_EQ(hier[1].analysis->bound, 11.875);
    EXPECT_EQ(hier[1].analysis->bindingRoof, "DRAM load bandwidth");
}

TEST(KernelPoints, MainMemoryLevelFollowsTheProfile) {
    // A CUDA sample (HBM count) against a profile that calls its main memory DRAM.
    perf::KernelSample s;
    s.name = "k";
    s.flops = 1e9;
    s.seconds = 0.01;  // 100 GFLOP/s
    s.levelBytes = {{"L2", 1e9}, {"HBM", 1e8}};
    const std::vector<perf::Roof> roofs = {perf::bandwidthRoof("DRAM", "DRAM", 500.0),
                                           perf::bandwidthRoof("L2", "L2", 2000.0),
                                           perf::computeRoof("FP32 FMA peak", "fp32", 10000.0)};
    auto a = perf::analyseSample(s, roofs, RooflineMode::Hierarchical);
    ASSERT_TRUE(a) << a.diagnostics().items().size();
    ASSERT_EQ(a->levels.size(), 2u);
    EXPECT_EQ(a->levels[1].level, "DRAM");
    EXPECT_DOUBLE_EQ(a->levels[1].bound, 5000.0);  // 500 GB/s x AI 10
    EXPECT_DOUBLE_EQ(a->bound, 2000.0);            // L2: 2000 x AI 1
    EXPECT_DOUBLE_EQ(a->percentOfBound, 5.0);
}

TEST(KernelPoints, LabelsAndModes) {
    EXPECT_EQ(perf::formatSignificant(539.0), "539");
    EXPECT_EQ(perf::formatSignificant(80.0), "80");
    EXPECT_EQ(perf::formatSignificant(80.24), "80.2");
    EXPECT_EQ(perf::formatSignificant(0.125), "0.125");
    EXPECT_EQ(perf::formatSignificant(12345.0), "12300");
    EXPECT_EQ(perf::formatSignificant(0.0), "0");
    EXPECT_EQ(perf::roofLabel(perf::bandwidthRoof("DRAM triad bandwidth", "DRAM", 80.0)), "DRAM 80 GB/s");
    EXPECT_EQ(perf::roofLabel(perf::computeRoof("FP32 FMA peak", "fp32", 539.4)), "FP32 FMA 539 GFLOP/s");
    EXPECT_EQ(perf::modeDefinition(RooflineMode::Carm), "CARM: AI = FLOPs / all bytes issued by loads and stores");
    EXPECT_EQ(*perf::parseRooflineMode("DRAM"), RooflineMode::Dram);
    EXPECT_EQ(*perf::parseRooflineMode("hierarchical"), RooflineMode::Hierarchical);
    EXPECT_FALSE(perf::parseRooflineMode("cache"));
}
