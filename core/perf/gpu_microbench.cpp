#include "core/perf/gpu_microbench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/runtime/cuda/nvrtc.h"
#include "core/runtime/runner_client.h"
#include "core/runtime/shared_arena.h"

namespace tessera::perf {

namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;
constexpr std::int64_t kGiB = 1024 * kMiB;

// A sink key no kernel result equals: the sums are finite and far smaller in magnitude.
constexpr double kSinkKey = -1.0e30;

// Packed half2 operands of tsr_fma_f16x2: b = 0.99951 (0x3BFF), c = 2^-11 (0x1000); the chains
// converge to c / (1 - b) ~ 1, finite and normal.
constexpr double kHalf2B = static_cast<double>(0x3BFF3BFFu);
constexpr double kHalf2C = static_cast<double>(0x10001000u);

std::string sizeText(std::int64_t bytes) {
    std::ostringstream o;
    if (bytes >= kGiB && bytes % kGiB == 0) o << bytes / kGiB << " GiB";
    else if (bytes >= kMiB && bytes % kMiB == 0) o << bytes / kMiB << " MiB";
    else if (bytes >= kMiB) o << std::round(10.0 * static_cast<double>(bytes) / kMiB) / 10 << " MiB";
    else o << (bytes + kKiB / 2) / kKiB << " KiB";
    return o.str();
}

std::string numberText(double v, int digits = 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::int64_t floorPow2(std::int64_t v) {
    std::int64_t p = 1;
    while (p <= v / 2) p *= 2;
    return v >= 1 ? p : 0;
}

}  // namespace

const char* gpuBenchEntry(GpuBench bench) {
    switch (bench) {
        case GpuBench::FmaF32: return "tsr_fma_f32";
        case GpuBench::FmaF16x2: return "tsr_fma_f16x2";
        case GpuBench::MmaF16: return "tsr_mma_f16";
        case GpuBench::MmaBf16: return "tsr_mma_bf16";
        case GpuBench::MmaTf32: return "tsr_mma_tf32";
        case GpuBench::SharedLoad: return "tsr_shared_load";
        case GpuBench::GlobalLoad: return "tsr_bw_load";
        case GpuBench::GlobalCopy: return "tsr_bw_copy";
    }
    return "";
}

bool gpuBenchIsCompute(GpuBench bench) {
    return bench == GpuBench::FmaF32 || bench == GpuBench::FmaF16x2 || gpuBenchIsTensor(bench);
}

bool gpuBenchIsTensor(GpuBench bench) {
    return bench == GpuBench::MmaF16 || bench == GpuBench::MmaBf16 || bench == GpuBench::MmaTf32;
}

double gpuMmaFlops(GpuBench bench) {
    switch (bench) {
        case GpuBench::MmaF16:
        case GpuBench::MmaBf16: return 2.0 * 16 * 8 * 16;
        case GpuBench::MmaTf32: return 2.0 * 16 * 8 * 8;
        default: return 0;
    }
}

double gpuBenchWork(GpuBench bench, std::int64_t blocks, std::int64_t outer) {
    const double threads = static_cast<double>(blocks) * kGpuBlockThreads;
    const double warps = threads / 32.0;
    const double o = static_cast<double>(outer);
    switch (bench) {
        case GpuBench::FmaF32: return 2.0 * kGpuFmaChains * kGpuFmaUnroll * o * threads;
        case GpuBench::FmaF16x2: return 4.0 * kGpuFmaChains * kGpuFmaUnroll * o * threads;
        case GpuBench::MmaF16:
        case GpuBench::MmaBf16:
        case GpuBench::MmaTf32: return gpuMmaFlops(bench) * kGpuMmaAccumulators * kGpuMmaUnroll * o * warps;
        case GpuBench::SharedLoad: return 16.0 * kGpuSharedUnroll * o * threads;
        case GpuBench::GlobalLoad: return 16.0 * kGpuLoadUnroll * o * threads;
        case GpuBench::GlobalCopy: return 32.0 * kGpuCopyUnroll * o * threads;
    }
    return 0;
}

int gpuMaxThreadsPerSm(int ccMajor, int ccMinor) {
    if (ccMajor == 7 && ccMinor == 5) return 1024;
    if (ccMajor == 8 && ccMinor >= 6) return 1536;
    if (ccMajor == 12) return 1536;
    return 2048;
}

int gpuBlocksPerSm(int archNumber) {
    return gpuMaxThreadsPerSm(archNumber / 10, archNumber % 10) / kGpuBlockThreads;
}

// ---- source ----

namespace {

void emitMma(std::ostringstream& o, const std::string& bounds, const char* name, const char* instr, int aRegs,
             unsigned aBits, unsigned bBits) {
    o << "extern \"C\" __global__ void " << bounds << " " << name
      << "(const double* __restrict__ p, float* __restrict__ sink) {\n"
      << "    const long long outer = (long long)p[" << kGpuParamOuter << "];\n"
      << "    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n"
      << "    // Fragments: small non-zero values that differ per thread (zero operands would let the\n"
      << "    // hardware save power and clock higher than on real data).\n"
      << "    const unsigned a0 = 0x" << std::hex << aBits << std::dec << "u ^ (t & 0x7u);\n";
    for (int r = 1; r < aRegs; ++r) o << "    const unsigned a" << r << " = a0 ^ " << (r << 3) << "u;\n";
    o << "    const unsigned b0 = 0x" << std::hex << bBits << std::dec << "u ^ ((t >> 3) & 0x7u);\n"
      << "    const unsigned b1 = b0 ^ 0x40u;\n";
    for (int k = 0; k < kGpuMmaAccumulators; ++k)
        o << "    float d" << k << "0 = 0.f, d" << k << "1 = 0.f, d" << k << "2 = 0.f, d" << k << "3 = 0.f;\n";
    o << "    for (long long i = 0; i < outer; ++i) {\n"
      << "#pragma unroll\n"
      << "        for (int u = 0; u < " << kGpuMmaUnroll << "; ++u) {\n";
    for (int k = 0; k < kGpuMmaAccumulators; ++k) {
        o << "            asm volatile(\"" << instr << " {%0,%1,%2,%3}, {";
        for (int r = 0; r < aRegs; ++r) o << (r ? "," : "") << "%" << 4 + r;
        o << "}, {%" << 4 + aRegs << ",%" << 5 + aRegs << "}, {%0,%1,%2,%3};\"\n"
          << "                : \"+f\"(d" << k << "0), \"+f\"(d" << k << "1), \"+f\"(d" << k << "2), \"+f\"(d" << k
          << "3)\n                : ";
        for (int r = 0; r < aRegs; ++r) o << "\"r\"(a" << r << "), ";
        o << "\"r\"(b0), \"r\"(b1));\n";
    }
    o << "        }\n    }\n    float s = 0.f;\n";
    for (int k = 0; k < kGpuMmaAccumulators; ++k)
        o << "    s += (d" << k << "0 + d" << k << "1) + (d" << k << "2 + d" << k << "3);\n";
    o << "    if (s == (float)p[" << kGpuParamSinkKey << "]) sink[t] = s;\n}\n\n";
}

}  // namespace

std::string generateGpuMicrobenchSource(int archNumber) {
    std::ostringstream o;
    const int blocksPerSm = std::max(1, gpuBlocksPerSm(archNumber));
    const std::string bounds =
        "__launch_bounds__(" + std::to_string(kGpuBlockThreads) + ", " + std::to_string(blocksPerSm) + ")";
    o << "// Tessera GPU micro-benchmarks (core/perf/gpu_microbench.cpp) for sm_" << archNumber << ".\n"
      << "// NVRTC, C++17, no include directives. Every kernel runs " << kGpuBlockThreads
      << " threads per block; p is a block of " << kGpuParamCount << " doubles.\n"
      << "struct alignas(16) tsr_f4 { float x, y, z, w; };\n"
      << "__device__ __forceinline__ void tsr_acc(tsr_f4& a, const tsr_f4& v) { a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w; }\n"
      << "__device__ __forceinline__ float tsr_sum(const tsr_f4& a) { return (a.x + a.y) + (a.z + a.w); }\n\n";

    // FP32 FMA chains.
    o << "extern \"C\" __global__ void " << bounds << " tsr_fma_f32(const double* __restrict__ p, float* __restrict__ sink) {\n"
      << "    const long long outer = (long long)p[" << kGpuParamOuter << "];\n"
      << "    const float b = (float)p[" << kGpuParamB << "];\n"
      << "    const float c = (float)p[" << kGpuParamC << "];\n"
      << "    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n"
      << "    const float a = __uint_as_float(0x3f000000u + (t & 1023u));  // 0.5 plus a few ulps\n";
    for (int k = 0; k < kGpuFmaChains; ++k) o << "    float a" << k << " = a + " << k << " * 0.01f;\n";
    o << "    for (long long i = 0; i < outer; ++i) {\n"
      << "#pragma unroll\n"
      << "        for (int u = 0; u < " << kGpuFmaUnroll << "; ++u) {\n";
    for (int k = 0; k < kGpuFmaChains; ++k) o << "            a" << k << " = fmaf(a" << k << ", b, c);\n";
    o << "        }\n    }\n    const float s = ";
    for (int k = 0; k < kGpuFmaChains; ++k) o << (k ? " + " : "") << "a" << k;
    o << ";\n    if (s == (float)p[" << kGpuParamSinkKey << "]) sink[t] = s;\n}\n\n";

    // FP16 half2 FMA chains (inline PTX: no cuda_fp16.h under NVRTC without -I).
    o << "extern \"C\" __global__ void " << bounds << " tsr_fma_f16x2(const double* __restrict__ p, float* __restrict__ sink) {\n"
      << "    const long long outer = (long long)p[" << kGpuParamOuter << "];\n"
      << "    const unsigned b = (unsigned)p[" << kGpuParamHalfB << "];\n"
      << "    const unsigned c = (unsigned)p[" << kGpuParamHalfC << "];\n"
      << "    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n"
      << "    const unsigned a = 0x38003800u + ((t & 0xffu) * 0x00010001u);  // ~0.5 in both halves\n";
    for (int k = 0; k < kGpuFmaChains; ++k) o << "    unsigned a" << k << " = a + " << k * 16 << "u * 0x00010001u;\n";
    o << "    for (long long i = 0; i < outer; ++i) {\n"
      << "#pragma unroll\n"
      << "        for (int u = 0; u < " << kGpuFmaUnroll << "; ++u) {\n";
    for (int k = 0; k < kGpuFmaChains; ++k)
        o << "            asm volatile(\"fma.rn.f16x2 %0, %0, %1, %2;\" : \"+r\"(a" << k << ") : \"r\"(b), \"r\"(c));\n";
    o << "        }\n    }\n    const float s = __uint_as_float((";
    for (int k = 0; k < kGpuFmaChains; ++k) o << (k ? " ^ " : "") << "a" << k;
    o << ") & 0x3fffffffu);\n    if (s == (float)p[" << kGpuParamSinkKey << "]) sink[t] = s;\n}\n\n";

    // Tensor cores (sm_80+): f16/bf16 m16n8k16 (A: 4 x b32, B: 2 x b32) and tf32 m16n8k8 (A: 4 x b32, B: 2 x b32).
    if (archNumber >= 80) {
        emitMma(o, bounds, "tsr_mma_f16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4, 0x2C002C00u,
                0x2C002C00u);
        emitMma(o, bounds, "tsr_mma_bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 4, 0x3D803D80u,
                0x3D803D80u);
        emitMma(o, bounds, "tsr_mma_tf32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 4, 0x3D800000u,
                0x3D800000u);
    }

    // Shared memory: thread t reads float4 (t + k*step) mod N, k = 0, 1, ...; the step is a run-time
    // value, so the compiler can neither merge loads nor hoist them out of the loop.
    const int sharedElems = kGpuSharedBytes / 16;
    o << "extern \"C\" __global__ void " << bounds << " tsr_shared_load(const double* __restrict__ p, float* __restrict__ sink) {\n"
      << "    __shared__ tsr_f4 s[" << sharedElems << "];\n"
      << "    const long long outer = (long long)p[" << kGpuParamOuter << "];\n"
      << "    const unsigned step = (unsigned)p[" << kGpuParamStep << "];\n"
      << "    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n"
      << "    for (unsigned i = threadIdx.x; i < " << sharedElems << "u; i += blockDim.x)\n"
      << "        s[i] = tsr_f4{(float)i, 1.0f, 2.0f, 3.0f};\n"
      << "    __syncthreads();\n"
      << "    tsr_f4 c0 = {0.f, 0.f, 0.f, 0.f}, c1 = c0, c2 = c0, c3 = c0;\n"
      << "    unsigned base = threadIdx.x;\n"
      << "    for (long long o = 0; o < outer; ++o) {\n";
    for (int u = 0; u < kGpuSharedUnroll; ++u)
        o << "        const tsr_f4 v" << u << " = s[(base + " << u << "u * step) & " << sharedElems - 1 << "u];\n";
    for (int u = 0; u < kGpuSharedUnroll; ++u) o << "        tsr_acc(c" << u % 4 << ", v" << u << ");\n";
    o << "        base += " << kGpuSharedUnroll << "u * step;\n"
      << "    }\n"
      << "    tsr_acc(c0, c1); tsr_acc(c2, c3); tsr_acc(c0, c2);\n"
      << "    const float r = tsr_sum(c0);\n"
      << "    if (r == (float)p[" << kGpuParamSinkKey << "]) sink[t] = r;\n}\n\n";

    // Global loads: thread t of T reads float4 (t + k*T) mod N, N = mask + 1.
    o << "extern \"C\" __global__ void " << bounds
      << " tsr_bw_load(const double* __restrict__ p, const tsr_f4* __restrict__ x, float* __restrict__ sink) {\n"
      << "    const long long outer = (long long)p[" << kGpuParamOuter << "];\n"
      << "    const unsigned mask = (unsigned)p[" << kGpuParamMask << "];\n"
      << "    const unsigned T = gridDim.x * blockDim.x;\n"
      << "    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n"
      << "    tsr_f4 c0 = {0.f, 0.f, 0.f, 0.f}, c1 = c0;\n"
      << "    unsigned i = t & mask;\n"
      << "    for (long long o = 0; o < outer; ++o) {\n";
    for (int u = 0; u < kGpuLoadUnroll; ++u)
        o << "        const tsr_f4 v" << u << " = x[" << (u == 0 ? std::string("i") : "(i + " + std::to_string(u) + "u * T) & mask")
          << "];\n";
    for (int u = 0; u < kGpuLoadUnroll; ++u) o << "        tsr_acc(c" << u % 2 << ", v" << u << ");\n";
    o << "        i = (i + " << kGpuLoadUnroll << "u * T) & mask;\n"
      << "    }\n"
      << "    tsr_acc(c0, c1);\n"
      << "    const float r = tsr_sum(c0);\n"
      << "    if (r == (float)p[" << kGpuParamSinkKey << "]) sink[t] = r;\n}\n\n";

    // Global copy: the second half of the working set = the first; all loads of an iteration are
    // issued before its stores (the halves may alias as far as the compiler knows).
    o << "extern \"C\" __global__ void " << bounds
      << " tsr_bw_copy(const double* __restrict__ p, tsr_f4* x, float* __restrict__ sink) {\n"
      << "    const long long outer = (long long)p[" << kGpuParamOuter << "];\n"
      << "    const unsigned mask = (unsigned)p[" << kGpuParamMask << "];\n"
      << "    const unsigned T = gridDim.x * blockDim.x;\n"
      << "    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n"
      << "    tsr_f4* y = x + ((unsigned long long)mask + 1ull);\n"
      << "    unsigned i = t & mask;\n"
      << "    for (long long o = 0; o < outer; ++o) {\n";
    for (int u = 0; u < kGpuCopyUnroll; ++u)
        o << "        const unsigned j" << u << " = " << (u == 0 ? std::string("i") : "(i + " + std::to_string(u) + "u * T) & mask")
          << ";\n";
    for (int u = 0; u < kGpuCopyUnroll; ++u) o << "        const tsr_f4 v" << u << " = x[j" << u << "];\n";
    for (int u = 0; u < kGpuCopyUnroll; ++u) o << "        y[j" << u << "] = v" << u << ";\n";
    o << "        i = (i + " << kGpuCopyUnroll << "u * T) & mask;\n"
      << "    }\n"
      << "    (void)sink;\n}\n\n";

    // Fill: a non-zero pattern over the sweep buffer.
    o << "extern \"C\" __global__ void " << bounds
      << " tsr_fill(const double* __restrict__ p, float* __restrict__ x, float* __restrict__ sink) {\n"
      << "    const unsigned long long n = (unsigned long long)p[" << kGpuParamFloats << "];\n"
      << "    const unsigned long long T = (unsigned long long)gridDim.x * blockDim.x;\n"
      << "    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += T)\n"
      << "        x[i] = 1.0f + 1e-3f * (float)(i & 1023ull);\n"
      << "    (void)sink;\n}\n";
    return o.str();
}

// ---- theoretical peaks and checks ----

GpuTheoreticalPeaks gpuTheoreticalPeaks(const runtime::cuda::CudaDeviceInfo& d) {
    GpuTheoreticalPeaks p;
    const double clock = static_cast<double>(d.clockKHz) * 1e3;
    const double perClock = static_cast<double>(d.smCount) * clock / 1e9;  // G(SM x cycles)/s
    const int cc = d.ccMajor * 10 + d.ccMinor;
    if (perClock > 0 && d.ccMajor > 0) {
        const int lanes = (cc == 60 || d.ccMajor == 7 || cc == 80) ? 64 : 128;
        p.fp32 = perClock * lanes * 2;
        p.fp16 = perClock * ((cc == 80 || d.ccMajor == 9 || d.ccMajor == 10) ? 512 : 256);
        double tensor = 0;
        if (d.ccMajor == 7 || cc == 86 || cc == 87 || cc == 89 || d.ccMajor == 12) tensor = 1024;
        else if (cc == 80) tensor = 2048;
        else if (d.ccMajor == 9) tensor = 4096;
        else if (d.ccMajor == 10) tensor = 8192;
        p.tensorF16 = perClock * tensor;
        p.tensorTf32 = d.ccMajor >= 8 ? p.tensorF16 / 2 : 0;
        p.shared = perClock * 128;
        p.l2 = perClock * 64;
    }
    p.hbm = d.peakDramBytesPerSecond() / 1e9;
    return p;
}

double theoreticalPeakFor(const Roof& roof, const GpuTheoreticalPeaks& peaks) {
    if (roof.kind == Roof::Kind::Compute) {
        const bool tensor = roof.name.find("tensor") != std::string::npos;
        if (roof.precision == "fp32") return peaks.fp32;
        if (roof.precision == "fp16") return tensor ? peaks.tensorF16 : peaks.fp16;
        if (roof.precision == "bf16") return peaks.tensorF16;
        if (roof.precision == "tf32") return peaks.tensorTf32;
        return 0;
    }
    const int rank = memoryLevelRank(roof.level);
    if (rank == memoryLevelRank("L1") || rank == memoryLevelRank("shared")) return peaks.shared;
    if (rank == memoryLevelRank("L2")) return peaks.l2;
    if (rank == memoryLevelRank("HBM") || rank == memoryLevelRank("DRAM")) return peaks.hbm;
    return 0;
}

namespace {

std::string peakFormula(const Roof& roof) {
    if (roof.kind == Roof::Kind::Compute) {
        if (roof.precision == "fp32") return "SMs x clock x FP32 lanes x 2";
        if (roof.name.find("tensor") != std::string::npos || roof.precision == "bf16" || roof.precision == "tf32")
            return "SMs x clock x dense tensor FLOP per clock";
        return "SMs x clock x FP16 FLOP per clock";
    }
    const int rank = memoryLevelRank(roof.level);
    if (rank == memoryLevelRank("L2")) return "nominal SMs x clock x 64 bytes";
    if (rank == memoryLevelRank("HBM") || rank == memoryLevelRank("DRAM")) return "memory clock x bus width x 2 / 8";
    return "SMs x clock x 128 bytes";
}

}  // namespace

std::vector<GpuRoofCheck> checkRoofsAgainstPeaks(const std::vector<Roof>& roofs, const GpuTheoreticalPeaks& peaks,
                                                 support::DiagnosticList* warnings) {
    std::vector<GpuRoofCheck> out;
    for (const Roof& r : roofs) {
        GpuRoofCheck c;
        c.roof = r.name;
        c.value = r.value;
        c.theoretical = theoreticalPeakFor(r, peaks);
        if (c.theoretical > 0) {
            c.ratio = r.value / c.theoretical;
            c.plausible = c.ratio >= 0.1 && c.ratio <= 1.0;
        }
        if (!c.plausible && warnings) {
            warnings->warning({}, "roofline measure",
                              "'" + r.name + "' is " + numberText(100 * c.ratio) + "% of the device's theoretical " +
                                  numberText(c.theoretical) + " " + r.unit + " (" + peakFormula(r) + ")" +
                                  (c.ratio > 1 ? ": above the peak, the measurement or its work count is wrong"
                                               : ": below 10% of the peak, the kernel did not run as intended"));
        }
        out.push_back(c);
    }
    return out;
}

// ---- sweep ----

std::optional<Plateau> findPlateau(const std::vector<GpuSweepPoint>& sweep, const std::string& method,
                                   std::int64_t loBytes, std::int64_t hiBytes, double tolerance) {
    std::vector<GpuSweepPoint> pts;
    for (const auto& p : sweep)
        if (p.method == method && p.workingSetBytes >= loBytes && p.workingSetBytes <= hiBytes) pts.push_back(p);
    if (pts.empty()) return std::nullopt;
    std::stable_sort(pts.begin(), pts.end(),
                     [](const GpuSweepPoint& a, const GpuSweepPoint& b) { return a.workingSetBytes < b.workingSetBytes; });
    auto medianOf = [&](std::size_t from, std::size_t to) {  // [from, to]
        std::vector<double> v;
        for (std::size_t i = from; i <= to; ++i) v.push_back(pts[i].gbPerSecond);
        std::sort(v.begin(), v.end());
        const std::size_t n = v.size();
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    };
    std::optional<Plateau> best;
    for (std::size_t from = 0; from < pts.size(); ++from) {
        double lo = pts[from].gbPerSecond, hi = lo;
        std::size_t to = from;
        while (to + 1 < pts.size()) {
            const double v = pts[to + 1].gbPerSecond;
            const double nlo = std::min(lo, v), nhi = std::max(hi, v);
            if (nhi > (1.0 + tolerance) * nlo) break;
            lo = nlo;
            hi = nhi;
            ++to;
        }
        Plateau p;
        p.points = static_cast<int>(to - from + 1);
        p.value = medianOf(from, to);
        p.fromBytes = pts[from].workingSetBytes;
        p.toBytes = pts[to].workingSetBytes;
        if (!best || p.points > best->points || (p.points == best->points && p.value > best->value)) best = p;
    }
    return best;
}

GpuSweepWindows gpuSweepWindows(std::int64_t l2Bytes, std::int64_t maxBytes) {
    GpuSweepWindows w;
    w.l1Lo = 16 * kKiB;
    w.l1Hi = 64 * kKiB;
    w.l2Lo = l2Bytes / 8;
    w.l2Hi = l2Bytes / 2;
    w.hbmLo = 8 * l2Bytes;
    w.hbmHi = maxBytes;
    return w;
}

std::vector<std::int64_t> gpuSweepSizes(std::int64_t l2Bytes, std::int64_t maxBytes, bool quick) {
    std::vector<std::int64_t> all;
    const std::int64_t top = floorPow2(maxBytes);
    for (std::int64_t s = 16 * kKiB; s <= top; s *= 2) all.push_back(s);
    if (!quick) return all;
    const GpuSweepWindows w = gpuSweepWindows(l2Bytes, maxBytes);
    auto inside = [&](std::int64_t lo, std::int64_t hi) {
        std::vector<std::int64_t> v;
        for (std::int64_t s : all)
            if (s >= lo && s <= hi) v.push_back(s);
        return v;
    };
    std::vector<std::int64_t> out;
    const auto l1 = inside(w.l1Lo, w.l1Hi);
    for (std::size_t i = l1.size() > 2 ? l1.size() - 2 : 0; i < l1.size(); ++i) out.push_back(l1[i]);
    for (std::int64_t s : inside(w.l2Lo, w.l2Hi)) out.push_back(s);
    const auto hbm = inside(w.hbmLo, w.hbmHi);
    for (std::size_t i = 0; i < hbm.size() && i < 2; ++i) out.push_back(hbm[i]);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::string gpuFingerprint(const runtime::cuda::CudaDeviceInfo& d) {
    return d.name + " | sm_" + std::to_string(d.ccMajor) + std::to_string(d.ccMinor) + " | " +
           std::to_string(d.smCount) + " SMs | " + std::to_string(d.totalMemoryBytes / kMiB) + " MiB";
}

// ---- measurement ----

namespace {

struct GpuJob {
    GpuBench bench = GpuBench::FmaF32;
    std::string label;
    double params[kGpuParamCount] = {};
    double work = 0;  // FLOPs or bytes of one launch
    std::int64_t workingSet = 0;  // sweep only
    bool fill = false;            // the fill launch (not measured)
};

/// The arch to compile for (see GpuMicrobenchOptions::arch) and a note when it is a fallback.
support::Expected<runtime::cuda::CudaArch> chooseArch(const GpuMicrobenchOptions& options,
                                                      const runtime::cuda::CudaDeviceInfo& device,
                                                      std::vector<std::string>& notes) {
    if (!options.arch.empty()) return runtime::cuda::validateCudaArch(options.arch);
    auto info = runtime::cuda::nvrtcInfo();
    if (!info) return info.diagnostics();
    const int want = device.ccMajor * 10 + device.ccMinor;
    const auto& archs = info->supportedArchs;
    if (archs.empty() || std::find(archs.begin(), archs.end(), want) != archs.end())
        return runtime::cuda::validateCudaArch(device.arch());
    int best = 0;
    for (int a : archs)
        if (a <= want) best = std::max(best, a);
    if (best == 0) return runtime::cuda::validateCudaArch(device.arch());  // reports "not supported"
    notes.push_back("NVRTC " + std::to_string(info->major) + "." + std::to_string(info->minor) + " does not know " +
                    device.arch() + ": compiled PTX for compute_" + std::to_string(best) +
                    " (the driver JIT-compiles it)");
    return runtime::cuda::validateCudaArch("compute_" + std::to_string(best));
}

}  // namespace

support::Expected<GpuMicrobenchResult> measureGpuRoofs(const GpuMicrobenchOptions& options,
                                                       runtime::RunnerClient& runner,
                                                       const support::CancelToken* cancel,
                                                       const support::ProgressSink& progress) {
    const auto start = std::chrono::steady_clock::now();
    const std::string where = "roofline measure";
    auto fail = [&](const std::string& message) {
        support::DiagnosticList d;
        d.error({}, where, message);
        return d;
    };
    auto report = [&](double f, const std::string& phase) {
        if (progress) progress(f, phase);
    };
    GpuMicrobenchResult result;
    support::DiagnosticList warnings;

    // The device.
    report(0.0, "asking the runner for CUDA devices");
    auto devices = runner.devices(cancel);
    if (!devices) return devices.diagnostics();
    if (options.device < 0 || options.device >= static_cast<int>(devices->size()))
        return fail("no CUDA device " + std::to_string(options.device) + " (the driver reports " +
                    std::to_string(devices->size()) + ")");
    const runtime::cuda::CudaDeviceInfo& dev = (*devices)[static_cast<std::size_t>(options.device)];
    result.device = dev;
    result.peaks = gpuTheoreticalPeaks(dev);

    // Compile.
    auto arch = chooseArch(options, dev, result.notes);
    if (!arch) return arch.diagnostics();
    result.arch = arch->text;
    report(0.02, "compiling micro-benchmarks for " + arch->text);
    runtime::cuda::CudaCompileOptions copts;
    copts.arch = arch->text;
    copts.cacheDir = options.cacheDir;
    copts.sourceName = "gpu_microbench_" + arch->text + ".cu";
    auto mod = runtime::cuda::compileCuda(generateGpuMicrobenchSource(arch->number), copts, cancel);
    if (!mod) return mod.diagnostics();
    result.compileSeconds = mod->compileSeconds;
    const std::string modulePath = arch->real ? mod->cubinPath : mod->ptxPath;
    const bool tensor = arch->number >= 80 && dev.ccMajor >= 8;
    if (!tensor)
        result.notes.push_back("tensor-core peaks skipped: mma.sync m16n8k16 needs sm_80 or newer (device " +
                               dev.arch() + ", compiled for " + arch->text + ")");

    // Launch shape and sizing.
    const int blocksPerSm =
        std::max(1, std::min(gpuBlocksPerSm(arch->number), gpuMaxThreadsPerSm(dev.ccMajor, dev.ccMinor) / kGpuBlockThreads));
    const std::int64_t blocks = static_cast<std::int64_t>(std::max(1, dev.smCount)) * blocksPerSm;
    const std::int64_t threads = blocks * kGpuBlockThreads;
    const double minSeconds = options.minSeconds > 0 ? options.minSeconds : (options.quick ? 0.05 : 0.15);
    const double launchSeconds = options.quick ? 1e-3 : 2e-3;
    const GpuTheoreticalPeaks& pk = result.peaks;
    auto orDefault = [](double v, double d) { return v > 0 ? v : d; };
    auto outerFor = [&](GpuBench b, double ratePerSecondG, double minWork) {
        const double perOuter = gpuBenchWork(b, blocks, 1);
        const double want = std::max(ratePerSecondG * 1e9 * launchSeconds, minWork);
        return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(want / perOuter)));
    };
    const std::string shape = std::to_string(blocks) + " blocks x " + std::to_string(kGpuBlockThreads) + " threads";
    auto timing = [&](runtime::RunRequest& req) {
        req.target = runtime::RunTarget::Cuda;
        req.modulePath = modulePath;
        req.device = options.device;
        req.timing.time = true;
        req.timing.warmup = 2;
        req.timing.minReps = 5;
        req.timing.maxReps = 1000000;
        req.timing.minSeconds = minSeconds;
        req.rotateBytes = 0;
        req.timeoutSeconds = 120;
    };
    // Runs `jobs` in one request; extra buffers after the params: the sink, then `bigBytes` (if > 0).
    // Returns the median seconds per job.
    auto runJobs = [&](const std::vector<GpuJob>& jobs, std::int64_t bigBytes) -> support::Expected<std::vector<double>> {
        std::vector<std::int64_t> sizes(jobs.size(), kGpuParamCount * static_cast<std::int64_t>(sizeof(double)));
        sizes.push_back(threads * static_cast<std::int64_t>(sizeof(float)));
        if (bigBytes > 0) sizes.push_back(bigBytes);
        std::int64_t total = 0;
        auto specs = runtime::layoutBuffers(sizes, total, 256);
        auto arena = runtime::SharedArena::create(total);
        if (!arena) return arena.diagnostics();
        runtime::RunRequest req;
        timing(req);
        arena->attach(req);
        req.buffers = specs;
        const int sink = static_cast<int>(jobs.size());
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            arena->write(specs[i], jobs[i].params, sizeof(jobs[i].params));
            runtime::LaunchSpec l;
            l.label = jobs[i].label;
            l.grid = blocks;
            l.block = kGpuBlockThreads;
            const bool usesBig = jobs[i].fill || jobs[i].bench == GpuBench::GlobalLoad || jobs[i].bench == GpuBench::GlobalCopy;
            l.entry = jobs[i].fill ? "tsr_fill" : gpuBenchEntry(jobs[i].bench);
            l.args = usesBig ? std::vector<int>{static_cast<int>(i), sink + 1, sink} : std::vector<int>{static_cast<int>(i), sink};
            req.launches.push_back(std::move(l));
        }
        auto r = runner.run(req, cancel);
        if (!r) return r.diagnostics();
        if (r->kernels.size() != jobs.size()) return fail("the runner returned no timing for every kernel");
        std::vector<double> out;
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            const double s = r->kernels[i].stats.median;
            if (!(s > 0)) return fail("kernel '" + jobs[i].label + "' measured a time of 0 s");
            out.push_back(s);
        }
        return out;
    };
    auto baseParams = [](GpuJob& j) {
        j.params[kGpuParamSinkKey] = kSinkKey;
        j.params[kGpuParamB] = 0.999999;
        j.params[kGpuParamC] = 1e-7;
        j.params[kGpuParamHalfB] = kHalf2B;
        j.params[kGpuParamHalfC] = kHalf2C;
        j.params[kGpuParamStep] = kGpuBlockThreads;
    };

    // 1. Compute peaks and the shared-memory roof.
    if (cancel && cancel->isCancelled()) return fail("measurement cancelled");
    report(0.05, "compute peaks and shared memory");
    std::vector<GpuJob> computeJobs;
    auto addCompute = [&](GpuBench b, const std::string& label, double rate) {
        GpuJob j;
        j.bench = b;
        j.label = label;
        baseParams(j);
        const std::int64_t outer = outerFor(b, rate, 0);
        j.params[kGpuParamOuter] = static_cast<double>(outer);
        j.work = gpuBenchWork(b, blocks, outer);
        computeJobs.push_back(j);
    };
    addCompute(GpuBench::FmaF32, "fma_f32", orDefault(pk.fp32, 10000));
    addCompute(GpuBench::FmaF16x2, "fma_f16x2", orDefault(pk.fp16, 20000));
    if (tensor) {
        addCompute(GpuBench::MmaF16, "mma_f16", orDefault(pk.tensorF16, 100000));
        addCompute(GpuBench::MmaBf16, "mma_bf16", orDefault(pk.tensorF16, 100000));
        addCompute(GpuBench::MmaTf32, "mma_tf32", orDefault(pk.tensorTf32, 50000));
    }
    addCompute(GpuBench::SharedLoad, "shared_load", orDefault(pk.shared, 10000));
    auto computeTimes = runJobs(computeJobs, 0);
    if (!computeTimes) return computeTimes.diagnostics();
    for (std::size_t i = 0; i < computeJobs.size(); ++i) {
        const GpuJob& j = computeJobs[i];
        const double rate = j.work / (*computeTimes)[i] / 1e9;
        const auto outer = static_cast<std::int64_t>(j.params[kGpuParamOuter]);
        const std::string o = std::to_string(outer);
        switch (j.bench) {
            case GpuBench::FmaF32:
                result.roofs.push_back(computeRoof("FP32 FMA peak", "fp32", rate, 1,
                                                   "fma.rn.f32 chains " + std::to_string(kGpuFmaChains) + " x " +
                                                       std::to_string(kGpuFmaUnroll * outer) + ", " + shape));
                break;
            case GpuBench::FmaF16x2:
                result.roofs.push_back(computeRoof("FP16 FMA peak", "fp16", rate, 1,
                                                   "fma.rn.f16x2 chains " + std::to_string(kGpuFmaChains) + " x " +
                                                       std::to_string(kGpuFmaUnroll * outer) + ", " + shape));
                break;
            case GpuBench::MmaF16:
            case GpuBench::MmaBf16:
            case GpuBench::MmaTf32: {
                const bool tf32 = j.bench == GpuBench::MmaTf32;
                const std::string prec = j.bench == GpuBench::MmaF16 ? "fp16" : j.bench == GpuBench::MmaBf16 ? "bf16" : "tf32";
                std::string upper = prec;
                for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
                result.roofs.push_back(computeRoof(
                    upper + " tensor-core peak", prec, rate, 1,
                    std::string("mma.sync ") + (tf32 ? "m16n8k8" : "m16n8k16") + " " + prec + " -> f32, " +
                        std::to_string(kGpuMmaAccumulators) + " accumulators x " +
                        std::to_string(kGpuMmaUnroll * outer) + " per warp, " + shape));
                break;
            }
            case GpuBench::SharedLoad:
                result.roofs.push_back(bandwidthRoof("shared load bandwidth", "shared", rate, 1,
                                                     "ld.shared float4 x " + std::to_string(kGpuSharedUnroll * outer) +
                                                         " per thread, " + std::to_string(kGpuSharedBytes / 1024) +
                                                         " KiB per block, " + shape));
                break;
            default: break;
        }
    }

    // 2. The working-set sweep.
    if (cancel && cancel->isCancelled()) return fail("measurement cancelled");
    std::int64_t maxBytes = options.maxWorkingSetBytes;
    if (maxBytes <= 0) {
        maxBytes = 4 * kGiB;
        if (dev.totalMemoryBytes > 0) maxBytes = std::min(maxBytes, dev.totalMemoryBytes / 4);
    }
    const std::int64_t l2 = dev.l2Bytes > 0 ? dev.l2Bytes : 4 * kMiB;
    const std::vector<std::int64_t> sizes = gpuSweepSizes(l2, maxBytes, options.quick);
    if (sizes.empty()) return fail("the largest working set (" + sizeText(maxBytes) + ") is below 16 KiB");
    const std::int64_t bigBytes = sizes.back();
    const GpuSweepWindows windows = gpuSweepWindows(l2, maxBytes);
    report(0.4, "working-set sweep, " + std::to_string(sizes.size()) + " sizes up to " + sizeText(bigBytes));
    std::vector<GpuJob> sweepJobs;
    {
        GpuJob fill;
        fill.fill = true;
        fill.label = "fill";
        baseParams(fill);
        fill.params[kGpuParamFloats] = static_cast<double>(bigBytes / 4);
        sweepJobs.push_back(fill);
    }
    auto sweepRate = [&](std::int64_t ws) {
        if (ws <= 256 * kKiB) return orDefault(pk.shared, 10000);
        if (ws <= l2) return orDefault(pk.l2, 5000);
        return orDefault(pk.hbm, 1000);
    };
    for (std::int64_t ws : sizes) {
        for (GpuBench b : {GpuBench::GlobalLoad, GpuBench::GlobalCopy}) {
            const bool copy = b == GpuBench::GlobalCopy;
            // Copy in the L1 window says nothing (the stores go to L2): quick mode leaves it out.
            if (copy && options.quick && ws <= windows.l1Hi) continue;
            GpuJob j;
            j.bench = b;
            j.label = std::string(copy ? "copy " : "load ") + sizeText(ws);
            baseParams(j);
            j.workingSet = ws;
            j.params[kGpuParamMask] = static_cast<double>((copy ? ws / 32 : ws / 16) - 1);
            // At least one pass over the working set per launch.
            const std::int64_t outer = outerFor(b, sweepRate(ws), static_cast<double>(ws));
            j.params[kGpuParamOuter] = static_cast<double>(outer);
            j.work = gpuBenchWork(b, blocks, outer);
            sweepJobs.push_back(j);
        }
    }
    auto sweepTimes = runJobs(sweepJobs, bigBytes);
    if (!sweepTimes) return sweepTimes.diagnostics();
    for (const char* method : {"load", "copy"})
        for (std::size_t i = 0; i < sweepJobs.size(); ++i) {
            const GpuJob& j = sweepJobs[i];
            if (j.fill) continue;
            if ((j.bench == GpuBench::GlobalCopy) != (std::string(method) == "copy")) continue;
            result.sweep.push_back({method, j.workingSet, j.work / (*sweepTimes)[i] / 1e9});
        }

    // 3. Plateaus.
    auto addPlateau = [&](const std::string& level, const std::string& method, std::int64_t lo, std::int64_t hi) {
        auto p = findPlateau(result.sweep, method, lo, hi);
        if (!p) {
            warnings.warning({}, where,
                             "no " + level + " " + method + " roof: no working set of the sweep lies in [" + sizeText(lo) +
                                 ", " + sizeText(hi) + "]");
            return;
        }
        result.roofs.push_back(bandwidthRoof(
            level + " " + method + " bandwidth", level, p->value, 1,
            std::string(method == "load" ? "ld.global.nc float4" : "float4 copy") + " sweep plateau " +
                sizeText(p->fromBytes) + (p->toBytes != p->fromBytes ? " - " + sizeText(p->toBytes) : std::string()) +
                " (" + std::to_string(p->points) + (p->points == 1 ? " point" : " points") + "), " + shape));
    };
    addPlateau("L1", "load", windows.l1Lo, windows.l1Hi);
    addPlateau("L2", "load", windows.l2Lo, windows.l2Hi);
    addPlateau("L2", "copy", windows.l2Lo, windows.l2Hi);
    addPlateau("HBM", "load", windows.hbmLo, windows.hbmHi);
    addPlateau("HBM", "copy", windows.hbmLo, windows.hbmHi);

    result.checks = checkRoofsAgainstPeaks(result.roofs, result.peaks, &warnings);
    result.profile.fingerprint = gpuFingerprint(dev);
    result.profile.target = "cuda:" + std::to_string(dev.ordinal);
    result.profile.description = "GPU micro-benchmarks (" + result.arch + (options.quick ? ", quick" : "") + ")";
    result.profile.roofs = result.roofs;
    result.profile.measuredAt = isoUtcNow();
    report(1.0, "done");
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return {std::move(result), std::move(warnings)};
}

}  // namespace tessera::perf
