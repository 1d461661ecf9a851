#pragma once
/// @file
/// GPU micro-benchmarks for the roofline (issue 7, semantics §2.4 "GPU adaptation"): CUDA-core
/// FMA peaks (FP32, FP16 as half2), tensor-core peaks (FP16, BF16, TF32 through `mma.sync`), the
/// shared-memory bandwidth, and a working-set sweep of global loads and copies whose plateaus give
/// the L1, L2 and HBM roofs.
///
/// The kernels are one CUDA C source generated here (generateGpuMicrobenchSource; no #include,
/// NVRTC compiles it, core/runtime/cuda/nvrtc.h) and run in tessera-runner through RunnerClient
/// (core/runtime/runner_client.h), which times every launch with CUDA events (median over
/// repetitions, each measurement at least `minSeconds` of GPU time).
///
/// Kernels (all `extern "C" __global__`, launched with kGpuBlockThreads threads per block and
/// gpuBlocksPerSm(arch) blocks per multiprocessor, one full wave; parameter 0 is a block of
/// kGpuParamCount doubles, see kGpuParam*; the last parameter is a float sink of one element per
/// thread, written only when a thread's result equals the sink key, which it never does, so the
/// work cannot be optimised away and no bytes are added to the measurement):
/// - `tsr_fma_f32`: every thread runs kGpuFmaChains independent `fmaf` chains (fma.rn.f32),
///   kGpuFmaUnroll steps unrolled per outer iteration. FLOPs: 2 per FMA.
/// - `tsr_fma_f16x2`: the same with inline PTX `fma.rn.f16x2` on packed halves. FLOPs: 4 per
///   f16x2 FMA (two lanes, multiply and add).
/// - `tsr_mma_f16`, `tsr_mma_bf16` (mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.f32) and
///   `tsr_mma_tf32` (mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32): every warp issues
///   kGpuMmaAccumulators independent accumulators x kGpuMmaUnroll steps per outer iteration on
///   register fragments. FLOPs per warp-wide mma: 2*16*8*16 = 4096 (m16n8k16), 2*16*8*8 = 2048
///   (m16n8k8). Emitted only for sm_80 and newer.
/// - `tsr_shared_load`: every block fills a kGpuSharedBytes shared array, then every thread loads
///   float4s (16 bytes) from it, kGpuSharedUnroll per outer iteration, consecutive threads reading
///   consecutive float4s (no bank conflicts). Bytes: 16 per load.
/// - `tsr_bw_load` (read-only; const __restrict__, so ld.global.nc.v4.f32) and `tsr_bw_copy`
///   over the first W bytes of one large buffer: thread t of T reads float4 index
///   (t + k*T) mod N for k = 0, 1, ... (N float4s, a power of two; the reads of one launch cover a
///   contiguous range modulo N, so every float4 is read the same number of times, +-1); loads keep
///   kGpuLoadUnroll float4s in flight and sum them; copy moves kGpuCopyUnroll float4s per outer
///   iteration from the first half of the working set to the second. Bytes: 16 per load, 32 per
///   copied float4 (load + store), whatever level served them.
/// - `tsr_fill`: writes a non-zero pattern over the large buffer before the sweep (not a roof).
///
/// Roofs (Roof::threads is 1: the whole device):
/// - compute: "FP32 FMA peak" (fp32), "FP16 FMA peak" (fp16, CUDA cores), "FP16 tensor-core peak"
///   (fp16), "BF16 tensor-core peak" (bf16), "TF32 tensor-core peak" (tf32);
/// - bandwidth: "shared load bandwidth" (level "shared", from tsr_shared_load), and from the sweep
///   plateaus (findPlateau over gpuSweepWindows): "L1 load bandwidth" (L1), "L2 load bandwidth",
///   "L2 copy bandwidth" (L2), "HBM load bandwidth", "HBM copy bandwidth" (HBM).
///
/// Thread rules: the pure functions may be called from any thread. measureGpuRoofs uses the given
/// RunnerClient (one thread at a time, as RunnerClient requires) and measures the device: other
/// work on the same GPU during the call distorts its numbers.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/perf/machine_profile.h"
#include "core/perf/roofline.h"
#include "core/runtime/cuda/cuda_driver.h"
#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::runtime {
class RunnerClient;
}

namespace tessera::perf {

/// Threads per block of every micro-benchmark kernel (the kernels assume it).
inline constexpr int kGpuBlockThreads = 256;
inline constexpr int kGpuFmaChains = 8;        ///< independent FMA chains per thread
inline constexpr int kGpuFmaUnroll = 16;       ///< FMA steps per chain per outer iteration
inline constexpr int kGpuMmaAccumulators = 4;  ///< independent mma accumulators per warp
inline constexpr int kGpuMmaUnroll = 8;        ///< mma steps per accumulator per outer iteration
inline constexpr int kGpuSharedBytes = 8192;   ///< shared array per block (512 float4)
inline constexpr int kGpuSharedUnroll = 8;     ///< shared float4 loads per thread per outer iteration
inline constexpr int kGpuLoadUnroll = 4;       ///< global float4 loads per thread per outer iteration
inline constexpr int kGpuCopyUnroll = 4;       ///< global float4 copies per thread per outer iteration

/// Parameter block layout (doubles), the same for every kernel.
inline constexpr int kGpuParamOuter = 0;    ///< outer iterations per thread
inline constexpr int kGpuParamMask = 1;     ///< sweep: float4 count of the working set (copy: of one half) - 1
inline constexpr int kGpuParamB = 2;        ///< fma_f32: multiplier
inline constexpr int kGpuParamC = 3;        ///< fma_f32: addend
inline constexpr int kGpuParamSinkKey = 4;  ///< the value a result is compared with before the sink store
inline constexpr int kGpuParamStep = 5;     ///< shared: index advance per outer iteration
inline constexpr int kGpuParamHalfB = 6;    ///< fma_f16x2: multiplier, packed half2 bits
inline constexpr int kGpuParamHalfC = 7;    ///< fma_f16x2: addend, packed half2 bits
inline constexpr int kGpuParamFloats = 8;   ///< fill: floats in the buffer
inline constexpr int kGpuParamCount = 16;

/// One micro-benchmark kernel.
enum class GpuBench { FmaF32, FmaF16x2, MmaF16, MmaBf16, MmaTf32, SharedLoad, GlobalLoad, GlobalCopy };

/// Its entry point: "tsr_fma_f32", "tsr_fma_f16x2", "tsr_mma_f16", "tsr_mma_bf16", "tsr_mma_tf32",
/// "tsr_shared_load", "tsr_bw_load", "tsr_bw_copy".
const char* gpuBenchEntry(GpuBench bench);
/// Whether it measures FLOPs (true) or bytes (false).
bool gpuBenchIsCompute(GpuBench bench);
/// Whether it needs the tensor cores (sm_80+).
bool gpuBenchIsTensor(GpuBench bench);

/// The work of one launch of `blocks` blocks x kGpuBlockThreads threads running `outer` outer
/// iterations: FLOPs for compute kernels (rules in the file comment), bytes issued for bandwidth
/// kernels. E.g. FmaF32: 2 x 8 chains x 16 x outer x threads; MmaF16: 4096 x 4 x 8 x outer x warps.
double gpuBenchWork(GpuBench bench, std::int64_t blocks, std::int64_t outer);

/// FLOPs of one warp-wide mma of the tensor kernels: 4096 for F16/BF16 (m16n8k16), 2048 for TF32
/// (m16n8k8); 0 for the other kernels.
double gpuMmaFlops(GpuBench bench);

/// Threads a multiprocessor holds at most, by compute capability: 1024 (7.5), 1536 (8.6, 8.7,
/// 8.9, 12.x), 2048 otherwise.
int gpuMaxThreadsPerSm(int ccMajor, int ccMinor);
/// gpuMaxThreadsPerSm / kGpuBlockThreads, from an architecture number (75, 80, 86, 90, 120...).
int gpuBlocksPerSm(int archNumber);

/// The kernel source for architecture number `archNumber` (e.g. 90 for sm_90; a pure function of
/// it): __launch_bounds__(256, gpuBlocksPerSm(arch)) on every kernel; the tensor kernels only
/// when archNumber >= 80.
std::string generateGpuMicrobenchSource(int archNumber);

/// Theoretical peaks of a device from its CudaDeviceInfo (GFLOP/s and GB/s; 0 when unknown).
/// clock = clockKHz x 1e3 Hz, S = smCount:
/// - fp32 = S x clock x lanes x 2, lanes = 64 for cc 6.0, 7.x and 8.0, else 128;
/// - fp16 (CUDA cores, half2) = S x clock x 512 for cc 8.0, 9.x and 10.x, else S x clock x 256;
/// - tensorF16 (dense, fp32 accumulate) = S x clock x F with F = 1024 (7.x, 8.6, 8.7, 8.9, 12.x),
///   2048 (8.0), 4096 (9.x), 8192 (10.x); 0 before 7.0; tensorTf32 = tensorF16 / 2 (0 before 8.0);
/// - hbm = CudaDeviceInfo::peakDramBytesPerSecond() / 1e9;
/// - shared = S x clock x 128 bytes (32 banks x 4 bytes);
/// - l2 = S x clock x 64 bytes: a nominal ceiling (NVIDIA publishes no L2 bandwidth), used only
///   to flag implausible measurements.
struct GpuTheoreticalPeaks {
    double fp32 = 0;
    double fp16 = 0;
    double tensorF16 = 0;
    double tensorTf32 = 0;
    double hbm = 0;
    double l2 = 0;
    double shared = 0;
};
GpuTheoreticalPeaks gpuTheoreticalPeaks(const runtime::cuda::CudaDeviceInfo& device);

/// The theoretical peak a roof is compared with (by precision for compute roofs: fp32 -> fp32;
/// fp16 -> fp16 or tensorF16 when the name says "tensor"; bf16 -> tensorF16; tf32 -> tensorTf32;
/// by level for bandwidth roofs: shared, L1 -> shared; L2 -> l2; HBM, DRAM -> hbm); 0 when none.
double theoreticalPeakFor(const Roof& roof, const GpuTheoreticalPeaks& peaks);

/// One roof against its theoretical peak.
struct GpuRoofCheck {
    std::string roof;          ///< Roof::name
    double value = 0;          ///< measured
    double theoretical = 0;    ///< theoreticalPeakFor
    double ratio = 0;          ///< value / theoretical (0 when theoretical is 0)
    bool plausible = true;     ///< 0.1 <= ratio <= 1.0 (true when theoretical is 0)
};
/// A check for every roof; each implausible one also becomes a warning in `warnings` when given
/// ("'HBM load bandwidth' is 120% of the device's theoretical 4800 GB/s: ..."), text naming the
/// formula.
std::vector<GpuRoofCheck> checkRoofsAgainstPeaks(const std::vector<Roof>& roofs, const GpuTheoreticalPeaks& peaks,
                                                 support::DiagnosticList* warnings = nullptr);

/// One point of the working-set sweep.
struct GpuSweepPoint {
    std::string method;             ///< "load" or "copy"
    std::int64_t workingSetBytes = 0;  ///< bytes the launch cycles over (copy: source + destination)
    double gbPerSecond = 0;
};

/// A plateau found in a sweep.
struct Plateau {
    double value = 0;               ///< median of the run's values (mean of the two middle ones for an even count)
    std::int64_t fromBytes = 0;     ///< smallest working set of the run
    std::int64_t toBytes = 0;       ///< largest
    int points = 0;
};

/// The plateau of the points of `method` whose working set lies in [loBytes, hiBytes]: sorted by
/// size, the longest run of consecutive points whose largest value is at most (1 + tolerance) x
/// its smallest; among equally long runs the one with the highest median. nullopt when no point
/// lies in the window.
std::optional<Plateau> findPlateau(const std::vector<GpuSweepPoint>& sweep, const std::string& method,
                                   std::int64_t loBytes, std::int64_t hiBytes, double tolerance = 0.10);

/// Size windows of the sweep for each level: L1 [16 KiB, 64 KiB] (every SM reads the whole
/// working set, which then sits in its L1); L2 [l2/8, l2/2] (well inside L2; H100-class L2s are
/// split in two partitions); HBM [8 x l2, maxBytes]. A level whose window is empty (lo > hi) is
/// not measured.
struct GpuSweepWindows {
    std::int64_t l1Lo = 0, l1Hi = 0;
    std::int64_t l2Lo = 0, l2Hi = 0;
    std::int64_t hbmLo = 0, hbmHi = 0;
};
GpuSweepWindows gpuSweepWindows(std::int64_t l2Bytes, std::int64_t maxBytes);

/// The working sets (bytes, powers of two, ascending, distinct) of the sweep. Full: every power of
/// two from 16 KiB to maxBytes (rounded down to a power of two). Quick: only those inside the
/// windows: the two largest powers of two of the L1 window, those of the L2 window, and the two
/// smallest of the HBM window (fewer where a window holds fewer).
std::vector<std::int64_t> gpuSweepSizes(std::int64_t l2Bytes, std::int64_t maxBytes, bool quick);

/// "<name> | sm_<cc> | <S> SMs | <M> MiB" (M = totalMemoryBytes / 2^20), e.g.
/// "NVIDIA H200 | sm_90 | 132 SMs | 143167 MiB": the key of a GPU's machine profile. Clocks are
/// left out (they vary with the driver's power settings).
std::string gpuFingerprint(const runtime::cuda::CudaDeviceInfo& device);

struct GpuMicrobenchOptions {
    int device = 0;              ///< CUDA ordinal
    /// NVRTC architecture ("sm_90", "compute_90"); empty = the device's, or when NVRTC does not
    /// support it, compute_XX of the newest architecture NVRTC supports below it (PTX, JIT-compiled
    /// by the driver).
    std::string arch;
    /// Quick mode: the sweep holds only the sizes gpuSweepSizes(quick) gives, 0.05 s per
    /// measurement, 1 ms launches. A few seconds on an H100-class GPU.
    bool quick = false;
    /// GPU seconds each measurement runs at least; 0 = 0.15 (0.05 when quick).
    double minSeconds = 0;
    /// Largest working set of the sweep; 0 = min(4 GiB, total device memory / 4) (quick: also at
    /// most the second HBM point). The host arena holds a buffer this large.
    std::int64_t maxWorkingSetBytes = 0;
    /// NVRTC cache folder; empty = the default.
    std::string cacheDir;
};

struct GpuMicrobenchResult {
    runtime::cuda::CudaDeviceInfo device;
    std::string arch;                   ///< what NVRTC compiled for
    std::vector<Roof> roofs;            ///< in the order of the file comment
    std::vector<GpuSweepPoint> sweep;   ///< every sweep point, load then copy, ascending size
    GpuTheoreticalPeaks peaks;
    std::vector<GpuRoofCheck> checks;   ///< one per roof
    std::vector<std::string> notes;     ///< what was skipped and why
    /// fingerprint = gpuFingerprint(device), target "cuda:<ordinal>", the roofs, measured_at now,
    /// description "GPU micro-benchmarks (<arch>)".
    MachineProfile profile;
    double compileSeconds = 0;
    double seconds = 0;                 ///< wall time of the whole measurement
};

/// Compiles the kernels for the device and runs them through `runner` (three requests: compute
/// peaks, shared memory, sweep). Errors: the runner's (no CUDA driver: "no CUDA driver found
/// (...)", no device, a crash, a fault, a timeout), "no CUDA device N (the driver reports M)",
/// NVRTC's (not found, compile errors), "measurement cancelled", a non-positive time. Warnings:
/// implausible roofs (checkRoofsAgainstPeaks), a level whose sweep window holds no point.
/// `progress` (may be empty) gets a fraction 0..1 and a phase.
support::Expected<GpuMicrobenchResult> measureGpuRoofs(const GpuMicrobenchOptions& options,
                                                       runtime::RunnerClient& runner,
                                                       const support::CancelToken* cancel = nullptr,
                                                       const support::ProgressSink& progress = {});

}  // namespace tessera::perf
