// GPU micro-benchmarks without a GPU: the generated CUDA source compiles with NVRTC for sm_90,
// sm_80 and sm_75 (tensor kernels only from sm_80), the work each kernel is credited with, the
// theoretical peaks, the plateau extraction from a sweep, the sweep sizes, the fingerprint, and the
// "no CUDA driver" answer of measureGpuRoofs.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>

#include "core/perf/gpu_microbench.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/runtime/runner_client.h"

namespace tessera::perf {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;
constexpr std::int64_t kGiB = 1024 * kMiB;

std::string cacheDir() { return std::string(TESSERA_BINARY_DIR) + "/perf-test-cuda"; }

// The body of `.entry NAME` in PTX text (up to the next .entry or the end).
std::string entryBody(const std::string& ptx, const std::string& name) {
    const auto at = ptx.find(".entry " + name + "(");
    if (at == std::string::npos) return {};
    const auto next = ptx.find(".entry ", at + 7);
    return ptx.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

int count(const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

runtime::cuda::CudaDeviceInfo h100Like() {
    runtime::cuda::CudaDeviceInfo d;
    d.name = "NVIDIA H100 80GB HBM3";
    d.ccMajor = 9;
    d.ccMinor = 0;
    d.smCount = 132;
    d.clockKHz = 1980000;
    d.memoryClockKHz = 2619000;
    d.memoryBusWidthBits = 5120;
    d.l2Bytes = 50 * kMiB;
    d.totalMemoryBytes = 81559 * kMiB;
    return d;
}

TEST(GpuMicrobench, SourceHasNoIncludesAndEveryKernel) {
    const std::string src = generateGpuMicrobenchSource(90);
    EXPECT_EQ(src.find("#include"), std::string::npos);
    for (GpuBench b : {GpuBench::FmaF32, GpuBench::FmaF16x2, GpuBench::MmaF16, GpuBench::MmaBf16, GpuBench::MmaTf32,
                       GpuBench::SharedLoad, GpuBench::GlobalLoad, GpuBench::GlobalCopy})
        EXPECT_NE(src.find(std::string(gpuBenchEntry(b)) + "("), std::string::npos) << gpuBenchEntry(b);
    EXPECT_NE(src.find("tsr_fill("), std::string::npos);
    EXPECT_NE(src.find("__launch_bounds__(256, 8)"), std::string::npos);
    // sm_86 holds 1536 threads per SM: 6 blocks; sm_75 has no mma.sync m16n8k16 kernels.
    EXPECT_NE(generateGpuMicrobenchSource(86).find("__launch_bounds__(256, 6)"), std::string::npos);
    const std::string old = generateGpuMicrobenchSource(75);
    EXPECT_EQ(old.find("mma.sync"), std::string::npos);
    EXPECT_NE(old.find("__launch_bounds__(256, 4)"), std::string::npos);
}

TEST(GpuMicrobench, CompilesWithNvrtcForSm90AndSm80) {
    auto info = runtime::cuda::nvrtcInfo();
    if (!info) GTEST_SKIP() << "NVRTC not available: " << info.diagnostics().items().front().message;
    for (const char* arch : {"sm_90", "sm_80"}) {
        SCOPED_TRACE(arch);
        runtime::cuda::CudaCompileOptions o;
        o.arch = arch;
        o.cacheDir = cacheDir();
        o.sourceName = std::string("gpu_microbench_") + arch + ".cu";
        const int number = std::string(arch) == "sm_90" ? 90 : 80;
        auto c = runtime::cuda::compileCuda(generateGpuMicrobenchSource(number), o);
        ASSERT_TRUE(c.ok()) << c.diagnostics().formatAll();
        EXPECT_FALSE(c->cubin.empty());  // ptxas accepted it
        const std::string& ptx = c->ptx;
        EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), std::string::npos);
        EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), std::string::npos);
        EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);

        // The FMA kernel: only fma.rn.f32 in its loop, a multiple of chains x unroll of them.
        const std::string fma = entryBody(ptx, "tsr_fma_f32");
        ASSERT_FALSE(fma.empty());
        const int fmas = count(fma, "fma.rn.f32");
        EXPECT_GE(fmas, kGpuFmaChains * kGpuFmaUnroll);
        EXPECT_EQ(fmas % (kGpuFmaChains * kGpuFmaUnroll), 0) << fmas;
        const std::string f16 = entryBody(ptx, "tsr_fma_f16x2");
        EXPECT_EQ(count(f16, "fma.rn.f16x2") % (kGpuFmaChains * kGpuFmaUnroll), 0);
        EXPECT_GE(count(f16, "fma.rn.f16x2"), kGpuFmaChains * kGpuFmaUnroll);
        const std::string mma = entryBody(ptx, "tsr_mma_f16");
        EXPECT_GE(count(mma, "mma.sync"), kGpuMmaAccumulators * kGpuMmaUnroll);
        EXPECT_EQ(count(mma, "mma.sync") % (kGpuMmaAccumulators * kGpuMmaUnroll), 0);

        // Vector loads: 16-byte global loads through the read-only path, 16-byte shared loads, and
        // exactly the unrolled number of them per loop body.
        const std::string load = entryBody(ptx, "tsr_bw_load");
        EXPECT_EQ(count(load, "ld.global.nc.v4.f32") % kGpuLoadUnroll, 0);
        EXPECT_GE(count(load, "ld.global.nc.v4.f32"), kGpuLoadUnroll);
        const std::string copy = entryBody(ptx, "tsr_bw_copy");
        EXPECT_GE(count(copy, "ld.global.v4.f32"), kGpuCopyUnroll);
        EXPECT_GE(count(copy, "st.global.v4.f32"), kGpuCopyUnroll);
        const std::string shared = entryBody(ptx, "tsr_shared_load");
        EXPECT_GE(count(shared, "ld.shared.v4.f32"), kGpuSharedUnroll);
        EXPECT_EQ(count(shared, "ld.shared.v4.f32") % kGpuSharedUnroll, 0);
    }
}

TEST(GpuMicrobench, CompilesForSm75WithoutTensorKernels) {
    auto info = runtime::cuda::nvrtcInfo();
    if (!info) GTEST_SKIP() << "NVRTC not available";
    runtime::cuda::CudaCompileOptions o;
    o.arch = "sm_75";
    o.cacheDir = cacheDir();
    auto c = runtime::cuda::compileCuda(generateGpuMicrobenchSource(75), o);
    ASSERT_TRUE(c.ok()) << c.diagnostics().formatAll();
    EXPECT_EQ(c->ptx.find("mma.sync"), std::string::npos);
    EXPECT_NE(c->ptx.find("fma.rn.f16x2"), std::string::npos);
}

TEST(GpuMicrobench, WorkAccountingAgainstHandValues) {
    // 1056 blocks x 256 threads = 270336 threads = 8448 warps.
    EXPECT_DOUBLE_EQ(gpuBenchWork(GpuBench::FmaF32, 1056, 1), 2.0 * 8 * 16 * 270336);  // 69206016
    EXPECT_DOUBLE_EQ(gpuBenchWork(GpuBench::FmaF32, 1056, 1000), 69206016000.0);
    EXPECT_DOUBLE_EQ(gpuBenchWork(GpuBench::FmaF16x2, 1056, 1000), 138412032000.0);
    // m16n8k16: 4096 FLOPs per warp-wide mma; 4 accumulators x 8 steps per outer iteration.
    EXPECT_DOUBLE_EQ(gpuMmaFlops(GpuBench::MmaF16), 4096.0);
    EXPECT_DOUBLE_EQ(gpuMmaFlops(GpuBench::MmaBf16), 4096.0);
    EXPECT_DOUBLE_EQ(gpuMmaFlops(GpuBench::MmaTf32), 2048.0);
    EXPECT_DOUBLE_EQ(gpuMmaFlops(GpuBench::FmaF32), 0.0);
    EXPECT_DOUBLE_EQ(gpuBenchWork(GpuBench::MmaF16, 1056, 10), 4096.0 * 32 * 10 * 8448);  // 11072962560
    EXPECT_DOUBLE_EQ(gpuBenchWork(GpuBench::MmaBf16, 1056, 10), 11072962560.0);
    EXPECT_DOUBLE_EQ(gpuBenchWork(GpuBench::MmaTf32, 1056, 10), 5536481280.0);
    // Bytes: 16 per float4 load (4 per outer iteration), 32 per float4 copied (4 per iteration),
    // 16 per shared float4 load (8 per iteration).
    EXPECT_DOUBLE_EQ(gpuBenchWork(GpuBench::GlobalLoad, 1056, 3), 16.0 * 4 * 3 * 270336);  // 51904512
    EXPECT_DOUBLE_EQ(gpuBenchWork(GpuBench::GlobalLoad, 1056, 6), 103809024.0);
    EXPECT_DOUBLE_EQ(gpuBenchWork(GpuBench::GlobalCopy, 1056, 3), 103809024.0);
    EXPECT_DOUBLE_EQ(gpuBenchWork(GpuBench::SharedLoad, 2, 5), 16.0 * 8 * 5 * 512);  // 327680
    EXPECT_TRUE(gpuBenchIsCompute(GpuBench::MmaTf32));
    EXPECT_FALSE(gpuBenchIsCompute(GpuBench::SharedLoad));
    EXPECT_TRUE(gpuBenchIsTensor(GpuBench::MmaBf16));
    EXPECT_FALSE(gpuBenchIsTensor(GpuBench::FmaF16x2));
}

TEST(GpuMicrobench, BlocksPerSm) {
    EXPECT_EQ(gpuBlocksPerSm(90), 8);
    EXPECT_EQ(gpuBlocksPerSm(80), 8);
    EXPECT_EQ(gpuBlocksPerSm(86), 6);
    EXPECT_EQ(gpuBlocksPerSm(89), 6);
    EXPECT_EQ(gpuBlocksPerSm(75), 4);
    EXPECT_EQ(gpuBlocksPerSm(120), 6);
    EXPECT_EQ(gpuBlocksPerSm(100), 8);
}

TEST(GpuMicrobench, TheoreticalPeaksAgainstHandValues) {
    // H100 SXM: 132 SMs at 1.98 GHz, HBM3 2619 MHz x 5120 bits.
    const GpuTheoreticalPeaks h = gpuTheoreticalPeaks(h100Like());
    EXPECT_NEAR(h.fp32, 66908.16, 1e-6);        // 132 x 1.98e9 x 128 x 2 / 1e9
    EXPECT_NEAR(h.fp16, 133816.32, 1e-6);       // x 512
    EXPECT_NEAR(h.tensorF16, 1070530.56, 1e-5); // x 4096
    EXPECT_NEAR(h.tensorTf32, 535265.28, 1e-5);
    EXPECT_NEAR(h.hbm, 3352.32, 1e-6);          // 2 x 2.619e9 x 5120 / 8 / 1e9
    EXPECT_NEAR(h.shared, 33454.08, 1e-6);      // x 128 bytes
    EXPECT_NEAR(h.l2, 16727.04, 1e-6);          // x 64 bytes
    // A100: 108 SMs at 1.41 GHz, 64 FP32 lanes, 2048 tensor FLOP per clock.
    runtime::cuda::CudaDeviceInfo a = h100Like();
    a.ccMajor = 8;
    a.smCount = 108;
    a.clockKHz = 1410000;
    const GpuTheoreticalPeaks ap = gpuTheoreticalPeaks(a);
    EXPECT_NEAR(ap.fp32, 19491.84, 1e-6);
    EXPECT_NEAR(ap.tensorF16, 311869.44, 1e-5);
    EXPECT_NEAR(ap.fp16, 77967.36, 1e-6);
    // Unknown clock: compute and on-chip peaks 0, HBM still from the memory clock.
    a.clockKHz = 0;
    const GpuTheoreticalPeaks z = gpuTheoreticalPeaks(a);
    EXPECT_EQ(z.fp32, 0.0);
    EXPECT_EQ(z.shared, 0.0);
    EXPECT_NEAR(z.hbm, 3352.32, 1e-6);
}

TEST(GpuMicrobench, TheoreticalPeakForRoofs) {
    GpuTheoreticalPeaks p;
    p.fp32 = 1;
    p.fp16 = 2;
    p.tensorF16 = 3;
    p.tensorTf32 = 4;
    p.hbm = 5;
    p.l2 = 6;
    p.shared = 7;
    EXPECT_EQ(theoreticalPeakFor(computeRoof("FP32 FMA peak", "fp32", 1), p), 1);
    EXPECT_EQ(theoreticalPeakFor(computeRoof("FP16 FMA peak", "fp16", 1), p), 2);
    EXPECT_EQ(theoreticalPeakFor(computeRoof("FP16 tensor-core peak", "fp16", 1), p), 3);
    EXPECT_EQ(theoreticalPeakFor(computeRoof("BF16 tensor-core peak", "bf16", 1), p), 3);
    EXPECT_EQ(theoreticalPeakFor(computeRoof("TF32 tensor-core peak", "tf32", 1), p), 4);
    EXPECT_EQ(theoreticalPeakFor(computeRoof("FP64 FMA peak", "fp64", 1), p), 0);
    EXPECT_EQ(theoreticalPeakFor(bandwidthRoof("HBM load bandwidth", "HBM", 1), p), 5);
    EXPECT_EQ(theoreticalPeakFor(bandwidthRoof("L2 copy bandwidth", "L2", 1), p), 6);
    EXPECT_EQ(theoreticalPeakFor(bandwidthRoof("shared load bandwidth", "shared", 1), p), 7);
    EXPECT_EQ(theoreticalPeakFor(bandwidthRoof("L1 load bandwidth", "L1", 1), p), 7);
}

TEST(GpuMicrobench, ChecksFlagRoofsOutsideTenToHundredPercent) {
    const GpuTheoreticalPeaks p = gpuTheoreticalPeaks(h100Like());
    std::vector<Roof> roofs = {
        computeRoof("FP32 FMA peak", "fp32", 60000),          // 89.7%
        bandwidthRoof("HBM copy bandwidth", "HBM", 4000),     // 119.3%: above the peak
        bandwidthRoof("shared load bandwidth", "shared", 1000),  // 3%: below 10%
        computeRoof("FP64 FMA peak", "fp64", 30000),          // no theoretical peak: not judged
    };
    support::DiagnosticList w;
    const auto checks = checkRoofsAgainstPeaks(roofs, p, &w);
    ASSERT_EQ(checks.size(), 4u);
    EXPECT_NEAR(checks[0].ratio, 60000 / 66908.16, 1e-12);
    EXPECT_TRUE(checks[0].plausible);
    EXPECT_NEAR(checks[1].ratio, 4000 / 3352.32, 1e-12);
    EXPECT_FALSE(checks[1].plausible);
    EXPECT_FALSE(checks[2].plausible);
    EXPECT_TRUE(checks[3].plausible);
    EXPECT_EQ(checks[3].theoretical, 0.0);
    ASSERT_EQ(w.items().size(), 2u);
    EXPECT_EQ(w.items()[0].message,
              "'HBM copy bandwidth' is 119% of the device's theoretical 3352 GB/s (memory clock x bus width x 2 / 8): "
              "above the peak, the measurement or its work count is wrong");
    EXPECT_NE(w.items()[1].message.find("'shared load bandwidth' is 3% of the device's theoretical 33454 GB/s"),
              std::string::npos);
}

TEST(GpuMicrobench, PlateauFromASyntheticSweep) {
    // An H100-like load sweep (GB/s): L1 ~ 18000, L2 ~ 7000 up to 16 MiB then falling, HBM ~ 3000.
    std::vector<GpuSweepPoint> s;
    const std::vector<std::pair<std::int64_t, double>> load = {
        {16 * kKiB, 17500}, {32 * kKiB, 18200}, {64 * kKiB, 18000}, {128 * kKiB, 12000}, {256 * kKiB, 8000},
        {1 * kMiB, 7200},   {2 * kMiB, 7100},   {4 * kMiB, 7000},   {8 * kMiB, 6900},    {16 * kMiB, 6800},
        {32 * kMiB, 5200},  {64 * kMiB, 3600},  {256 * kMiB, 3100}, {512 * kMiB, 3000},  {1 * kGiB, 2950},
        {2 * kGiB, 3050},   {4 * kGiB, 2400}};
    for (const auto& [ws, v] : load) s.push_back({"load", ws, v});
    s.push_back({"copy", 512 * kMiB, 2700});
    s.push_back({"copy", 1 * kGiB, 2750});

    auto l1 = findPlateau(s, "load", 16 * kKiB, 64 * kKiB);
    ASSERT_TRUE(l1);
    EXPECT_EQ(l1->points, 3);
    EXPECT_DOUBLE_EQ(l1->value, 18000);
    EXPECT_EQ(l1->fromBytes, 16 * kKiB);
    EXPECT_EQ(l1->toBytes, 64 * kKiB);

    // L2 window of a 50 MiB L2: [6.25 MiB, 25 MiB] -> 8 and 16 MiB; median of two = their mean.
    const GpuSweepWindows w = gpuSweepWindows(50 * kMiB, 4 * kGiB);
    auto l2 = findPlateau(s, "load", w.l2Lo, w.l2Hi);
    ASSERT_TRUE(l2);
    EXPECT_EQ(l2->points, 2);
    EXPECT_DOUBLE_EQ(l2->value, 6850);

    // HBM window [400 MiB, 4 GiB]: 512 MiB, 1 GiB, 2 GiB form the plateau (3050 / 2950 < 1.1);
    // 4 GiB (2400) breaks it.
    auto hbm = findPlateau(s, "load", w.hbmLo, w.hbmHi);
    ASSERT_TRUE(hbm);
    EXPECT_EQ(hbm->points, 3);
    EXPECT_DOUBLE_EQ(hbm->value, 3000);
    EXPECT_EQ(hbm->fromBytes, 512 * kMiB);
    EXPECT_EQ(hbm->toBytes, 2 * kGiB);

    // A wide window: the longest run wins (1 - 16 MiB, five points, median 7000).
    auto wide = findPlateau(s, "load", 16 * kKiB, 4 * kGiB);
    ASSERT_TRUE(wide);
    EXPECT_EQ(wide->points, 5);
    EXPECT_DOUBLE_EQ(wide->value, 7000);
    EXPECT_EQ(wide->fromBytes, 1 * kMiB);

    // Equally long runs: the higher one. Tolerance 0: every run has one point -> the highest value.
    auto single = findPlateau(s, "load", 16 * kKiB, 64 * kKiB, 0.0);
    ASSERT_TRUE(single);
    EXPECT_EQ(single->points, 1);
    EXPECT_DOUBLE_EQ(single->value, 18200);

    auto copy = findPlateau(s, "copy", w.hbmLo, w.hbmHi);
    ASSERT_TRUE(copy);
    EXPECT_DOUBLE_EQ(copy->value, 2725);
    EXPECT_FALSE(findPlateau(s, "copy", w.l2Lo, w.l2Hi));
    EXPECT_FALSE(findPlateau(s, "triad", 0, 4 * kGiB));
}

TEST(GpuMicrobench, SweepSizes) {
    const auto full = gpuSweepSizes(50 * kMiB, 4 * kGiB, false);
    ASSERT_EQ(full.size(), 19u);  // 16 KiB = 2^14 .. 4 GiB = 2^32
    EXPECT_EQ(full.front(), 16 * kKiB);
    EXPECT_EQ(full.back(), 4 * kGiB);
    const auto quick = gpuSweepSizes(50 * kMiB, 4 * kGiB, true);
    EXPECT_EQ(quick, (std::vector<std::int64_t>{32 * kKiB, 64 * kKiB, 8 * kMiB, 16 * kMiB, 512 * kMiB, 1 * kGiB}));
    // 60 MiB L2: L2 window [7.5, 30] MiB, HBM from 480 MiB.
    EXPECT_EQ(gpuSweepSizes(60 * kMiB, 4 * kGiB, true),
              (std::vector<std::int64_t>{32 * kKiB, 64 * kKiB, 8 * kMiB, 16 * kMiB, 512 * kMiB, 1 * kGiB}));
    // 6 MiB L2 and a 100 MiB cap (rounded down to 64 MiB): HBM from 48 MiB -> only 64 MiB.
    EXPECT_EQ(gpuSweepSizes(6 * kMiB, 100 * kMiB, true),
              (std::vector<std::int64_t>{32 * kKiB, 64 * kKiB, 1 * kMiB, 2 * kMiB, 64 * kMiB}));
    EXPECT_EQ(gpuSweepSizes(6 * kMiB, 100 * kMiB, false).back(), 64 * kMiB);
    EXPECT_TRUE(gpuSweepSizes(6 * kMiB, 8 * kKiB, false).empty());
    const GpuSweepWindows w = gpuSweepWindows(60 * kMiB, 2 * kGiB);
    EXPECT_EQ(w.l2Lo, 60 * kMiB / 8);
    EXPECT_EQ(w.l2Hi, 30 * kMiB);
    EXPECT_EQ(w.hbmLo, 480 * kMiB);
    EXPECT_EQ(w.hbmHi, 2 * kGiB);
}

TEST(GpuMicrobench, Fingerprint) {
    runtime::cuda::CudaDeviceInfo d = h100Like();
    EXPECT_EQ(gpuFingerprint(d), "NVIDIA H100 80GB HBM3 | sm_90 | 132 SMs | 81559 MiB");
    d.clockKHz = 1500000;  // clocks are not part of it
    EXPECT_EQ(gpuFingerprint(d), "NVIDIA H100 80GB HBM3 | sm_90 | 132 SMs | 81559 MiB");
}

TEST(GpuMicrobench, MeasureWithoutDriverSaysSo) {
    if (runtime::cuda::listCudaDevices().ok()) GTEST_SKIP() << "a CUDA device is present (tests/gpu measures it)";
    runtime::RunnerClientOptions ro;
    ro.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    runtime::RunnerClient runner(ro);
    GpuMicrobenchOptions o;
    o.quick = true;
    auto r = measureGpuRoofs(o, runner);
    ASSERT_FALSE(r.ok());
    const std::string msg = r.diagnostics().items().front().message;
    EXPECT_TRUE(msg.rfind("no CUDA driver found (", 0) == 0 || msg.rfind("CUDA driver found but", 0) == 0) << msg;
}

}  // namespace
}  // namespace tessera::perf
