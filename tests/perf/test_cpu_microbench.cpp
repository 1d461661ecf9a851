// CPU micro-benchmarks: the generated kernels compile for every ISA this machine runs, the working
// sets follow the cache sizes, and a quick measurement in tessera-runner gives plausible roofs.
#include <gtest/gtest.h>

#include <string>

#include "core/perf/cpu_microbench.h"
#include "core/runtime/host_jit.h"

namespace tessera::perf {
namespace {

bool haveCompiler() { return runtime::hostCompilerVersion(runtime::defaultHostCompiler()).ok(); }

runtime::HostCompilerOptions testCompiler() {
    runtime::HostCompilerOptions o;
    o.cacheDir = std::string(TESSERA_BINARY_DIR) + "/perf-test-kernels";
    return o;
}

TEST(CpuMicrobench, SourceHasEveryKernel) {
    const std::string src = generateCpuMicrobenchSource(CpuIsa::Avx512);
    for (const char* e : {"tsr_peak_fma_f32", "tsr_peak_fma_f64", "tsr_peak_add_f32", "tsr_peak_mul_f64", "tsr_bw_load",
                          "tsr_bw_copy", "tsr_bw_triad", "tessera_set_num_threads", "tessera_get_max_threads"})
        EXPECT_NE(src.find(std::string(e) + "("), std::string::npos) << e;
    EXPECT_NE(src.find("vector_size(64)"), std::string::npos);
    // 16 FMA chains per thread: a0 .. a15.
    EXPECT_NE(src.find("a15 = a15 * b + c;"), std::string::npos);
    EXPECT_EQ(src.find("a16 "), std::string::npos);
    EXPECT_NE(generateCpuMicrobenchSource(CpuIsa::Avx2).find("vector_size(32)"), std::string::npos);
    EXPECT_EQ(generateCpuMicrobenchSource(CpuIsa::Scalar).find("vector_size"), std::string::npos);
}

TEST(CpuMicrobench, GeneratedSourcesCompile) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler";
    std::vector<CpuIsa> isas = {CpuIsa::Scalar};
    const CpuIsa native = detectCpuIsa();
    if (native != CpuIsa::Scalar) isas.push_back(CpuIsa::Avx2);
    if (native == CpuIsa::Avx512) isas.push_back(CpuIsa::Avx512);
    for (CpuIsa isa : isas) {
        auto opts = testCompiler();
        opts.flags = cpuMicrobenchFlags();
        auto lib = runtime::compileHostLibrary(generateCpuMicrobenchSource(isa), opts);
        ASSERT_TRUE(lib.ok()) << cpuIsaName(isa) << ": " << lib.diagnostics().formatAll();
        for (const auto& d : lib.diagnostics().items()) ADD_FAILURE() << cpuIsaName(isa) << " warning: " << d.format();
    }
}

TEST(CpuMicrobench, WorkingSetsFollowCaches) {
    CpuCacheInfo c;
    c.l1d = 48 * 1024;
    c.l2 = 1024 * 1024;
    c.l3 = 32 * 1024 * 1024;
    const auto ws = levelWorkingSets(c, 2);
    ASSERT_EQ(ws.size(), 4u);
    EXPECT_EQ(ws[0].level, "L1");
    EXPECT_EQ(ws[0].bytes, 48 * 1024);  // 2 threads x 24 KiB
    EXPECT_EQ(ws[1].level, "L2");
    EXPECT_EQ(ws[1].bytes, 1024 * 1024);
    EXPECT_EQ(ws[2].level, "L3");
    EXPECT_EQ(ws[2].bytes, (2 * 1024 * 1024 + 32 * 1024 * 1024) / 2);
    EXPECT_EQ(ws[3].level, "DRAM");
    EXPECT_EQ(ws[3].bytes, 256 * 1024 * 1024);  // max(4 x 32 MiB, 256 MiB)
    // No L3 level when the L2s together are as large as the L3.
    c.l3 = 2 * 1024 * 1024;
    const auto noL3 = levelWorkingSets(c, 2);
    ASSERT_EQ(noL3.size(), 3u);
    EXPECT_EQ(noL3[2].level, "DRAM");
    c.l3 = 128 * 1024 * 1024;
    EXPECT_EQ(levelWorkingSets(c, 1).back().bytes, 512 * 1024 * 1024);
}

TEST(CpuMicrobench, CacheInfoIsReadable) {
    const CpuCacheInfo c = readCpuCacheInfo();
    EXPECT_GE(c.cpus, 1);
    if (c.l1d > 0) {
        EXPECT_LE(c.l1d, c.l2 > 0 ? c.l2 : c.l1d);
    }
}

TEST(CpuMicrobench, QuickMeasurementIsPlausible) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler";
    CpuMicrobenchOptions o;
    o.quick = true;
    o.compiler = testCompiler();
    o.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    auto r = measureCpuRoofs(o);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    EXPECT_EQ(r->isa, detectCpuIsa());
    const int n = r->cache.cpus;

    // Compute: FMA in both precisions at 1 and N threads; add and mul at N.
    const Roof* fma32 = bestRoof(r->roofs, Roof::Kind::Compute, "fp32");
    const Roof* fma64 = bestRoof(r->roofs, Roof::Kind::Compute, "fp64");
    ASSERT_NE(fma32, nullptr);
    ASSERT_NE(fma64, nullptr);
    EXPECT_GT(fma32->value, 1.0);
    EXPECT_GT(fma64->value, 0.5);
    EXPECT_LT(fma32->value, 1e5);  // under 100 TFLOP/s: a CPU
    int computeRoofs = 0;
    for (const Roof& roof : r->roofs) {
        EXPECT_GT(roof.value, 0) << roof.name;
        EXPECT_GE(roof.threads, 1) << roof.name;
        if (roof.kind == Roof::Kind::Compute) {
            ++computeRoofs;
            EXPECT_EQ(roof.unit, "GFLOP/s");
            EXPECT_TRUE(roof.level.empty());
        } else {
            EXPECT_EQ(roof.unit, "GB/s");
            EXPECT_EQ(roof.threads, n) << roof.name;
        }
    }
    EXPECT_EQ(computeRoofs, n > 1 ? 4 + 4 : 6);

    // Bandwidth: load, copy and triad at every level; L1 at least 0.8 x DRAM (shared, noisy machine).
    const Roof* l1 = bestRoof(r->roofs, Roof::Kind::Bandwidth, "L1");
    const Roof* dram = bestRoof(r->roofs, Roof::Kind::Bandwidth, "DRAM");
    ASSERT_NE(l1, nullptr);
    ASSERT_NE(dram, nullptr);
    EXPECT_GT(dram->value, 0.5);
    EXPECT_LT(dram->value, 1e4);
    EXPECT_GE(l1->value, 0.8 * dram->value);
    int bandwidthRoofs = 0;
    for (const Roof& roof : r->roofs) bandwidthRoofs += roof.kind == Roof::Kind::Bandwidth;
    EXPECT_EQ(bandwidthRoofs, 3 * static_cast<int>(levelWorkingSets(r->cache, n).size()));
    EXPECT_TRUE(r->sweep.empty());
    EXPECT_LT(r->seconds, 30.0);
}

// Vectors are vectors: with AVX2 or AVX-512 the scalar kernels reach a fraction of the vector peak
// (1/8 or 1/16 in theory; asserted with a wide margin for a shared machine).
TEST(CpuMicrobench, ScalarPeakIsBelowVectorPeak) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler";
    const CpuIsa native = detectCpuIsa();
    if (native == CpuIsa::Scalar) GTEST_SKIP() << "no AVX2 on this CPU";
    auto run = [](CpuIsa isa) {
        CpuMicrobenchOptions o;
        o.quick = true;
        o.threadCounts = {1};
        o.forceIsa = true;
        o.isa = isa;
        o.compiler = testCompiler();
        o.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
        return measureCpuRoofs(o);
    };
    auto scalar = run(CpuIsa::Scalar);
    auto vector = run(native);
    ASSERT_TRUE(scalar.ok()) << scalar.diagnostics().formatAll();
    ASSERT_TRUE(vector.ok()) << vector.diagnostics().formatAll();
    EXPECT_EQ(scalar->isa, CpuIsa::Scalar);
    const Roof* s = bestRoof(scalar->roofs, Roof::Kind::Compute, "fp32", 1);
    const Roof* v = bestRoof(vector->roofs, Roof::Kind::Compute, "fp32", 1);
    ASSERT_NE(s, nullptr);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(s->method.substr(s->method.size() - 6), "scalar");
    EXPECT_GT(s->value, 0.2);
    EXPECT_LT(s->value * 2.5, v->value) << "scalar " << s->value << " vs " << cpuIsaName(native) << " " << v->value;
}

TEST(CpuMicrobench, CancelledBeforeStart) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler";
    support::CancelToken cancel;
    cancel.cancel();
    CpuMicrobenchOptions o;
    o.quick = true;
    o.compiler = testCompiler();
    o.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    auto r = measureCpuRoofs(o, &cancel);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.diagnostics().formatAll().find("cancelled"), std::string::npos) << r.diagnostics().formatAll();
}

}  // namespace
}  // namespace tessera::perf

TEST(CpuRoofChecks, DisturbedRoofsAreNamedAndConsistentOnesPass) {
    using tessera::perf::bandwidthRoof;
    using tessera::perf::computeRoof;
    using tessera::perf::roofConsistencyProblems;
    // A plausible set: ADD and MUL about half the FMA peak, more threads faster.
    const std::vector<tessera::perf::Roof> good = {
        computeRoof("FP32 FMA peak", "fp32", 280, 1), computeRoof("FP32 ADD peak", "fp32", 140, 1),
        computeRoof("FP32 MUL peak", "fp32", 139, 1), computeRoof("FP32 FMA peak", "fp32", 550, 2),
        bandwidthRoof("DRAM copy bandwidth", "DRAM", 20, 1), bandwidthRoof("DRAM copy bandwidth", "DRAM", 33, 2)};
    EXPECT_TRUE(roofConsistencyProblems(good).empty());

    // What a --quick run on a loaded machine saved: MUL at 0.18x FMA, and a 2-thread roof below 1 thread.
    const std::vector<tessera::perf::Roof> bad = {
        computeRoof("FP32 FMA peak", "fp32", 272, 2), computeRoof("FP32 MUL peak", "fp32", 50, 2),
        bandwidthRoof("L2 load bandwidth", "L2", 500, 1), bandwidthRoof("L2 load bandwidth", "L2", 300, 2)};
    const auto problems = roofConsistencyProblems(bad);
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_EQ(problems[0],
              "timings look disturbed: 'L2 load bandwidth' with 2 threads (300 GB/s) is below its 1-thread value "
              "(500 GB/s); measure again on a quiet machine");
    EXPECT_EQ(problems[1],
              "timings look disturbed: 'FP32 MUL peak' (50 GFLOP/s) is 0.18x the 'FP32 FMA peak' (272) with 2 "
              "threads, where about 0.5x is expected; measure again on a quiet machine");

    // Inverted levels of one method (seen under load: L1 copy below L3 copy).
    const std::vector<tessera::perf::Roof> inverted = {
        bandwidthRoof("L1 copy bandwidth", "L1", 30, 2, "copy 24 KiB"),
        bandwidthRoof("L3 copy bandwidth", "L3", 186, 2, "copy 8 MiB"),
        bandwidthRoof("DRAM triad bandwidth", "DRAM", 25, 2, "triad 256 MiB")};
    const auto inv = roofConsistencyProblems(inverted);
    ASSERT_EQ(inv.size(), 1u);
    EXPECT_EQ(inv[0],
              "timings look disturbed: 'L1 copy bandwidth' (30 GB/s) is below 'L3 copy bandwidth' (186 GB/s) with 2 "
              "threads; a closer cache level cannot be slower; measure again on a quiet machine");
}
