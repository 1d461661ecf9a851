#pragma once
/// @file
/// CPU micro-benchmarks for the roofline: compute peaks (FMA, add, mul in FP32 and FP64) and memory
/// bandwidth per cache level (load-only, copy, triad over a working-set sweep).
///
/// The kernels are C++ source generated here (generateCpuMicrobenchSource), compiled by the host
/// JIT (core/runtime/host_jit.h) with -O3 -march=native, and run out of process in tessera-runner
/// (core/runtime/runner_client.h), which times them: median of repeated calls, each measurement
/// at least `minSeconds` long.
///
/// Kernels (all `extern "C" void NAME(void* const* args)`; args[0] is a 64-double parameter block
/// in the shared arena, see kParam*):
/// - `tsr_peak_<fma|add|mul>_<f32|f64>`: every OpenMP thread runs `chains` independent register
///   vectors of the ISA's width for `iterations` steps of `a = a*b + c` (fma), `a = a + c` (add) or
///   `a = a * b` (mul). FLOPs counted: 2 per FMA per lane, 1 per add or mul per lane.
/// - `tsr_bw_<load|copy|triad>`: every thread owns a private part of a buffer (allocated inside the
///   runner on first use, one buffer per slot, first-touched by the thread that uses it) and runs
///   `passes` passes of: load (sum of one array, 8 vector accumulators), copy (a[i] = b[i]) or
///   triad (a[i] = b[i] + s*c[i]) over arrays of `elements` floats each. Bytes counted: every load
///   and store issued (load 4, copy 8, triad 12 bytes per element), whatever level served them.
/// Working sets (bytes touched per pass, all threads together, T threads): L1 = T x L1d/2,
/// L2 = T x L2/2, L3 = halfway between T x L2 and L3 (left out when L3 <= T x L2), DRAM =
/// max(4 x L3, 256 MiB).
///
/// Thread rules: the functions may be called from any thread; measureCpuRoofs owns a runner for the
/// duration of the call and must not run concurrently with other timing work if its numbers are to
/// mean anything (it measures the machine).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/perf/roofline.h"
#include "core/runtime/host_jit.h"
#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::perf {

/// Instruction sets the generated kernels are written for.
enum class CpuIsa { Scalar, Avx2, Avx512 };

/// "scalar", "avx2", "avx512".
const char* cpuIsaName(CpuIsa isa);
/// The widest of Avx512 (avx512f), Avx2 (avx2 and fma) and Scalar this CPU supports
/// (__builtin_cpu_supports, at run time).
CpuIsa detectCpuIsa();
/// Vector width in bytes of the generated kernels: 64, 32, or the element size for Scalar (returns 0
/// for Scalar; each kernel then uses its element type).
int cpuIsaVectorBytes(CpuIsa isa);

/// Parameter block layout (doubles) of every kernel: inputs then outputs.
inline constexpr int kParamIterations = 0;  ///< peak: steps per thread; bandwidth: elements per array per thread
inline constexpr int kParamPasses = 1;      ///< bandwidth: passes over the arrays per call
inline constexpr int kParamB = 2;           ///< peak: multiplier b; triad: scalar s
inline constexpr int kParamC = 3;           ///< peak: addend c
inline constexpr int kParamSlot = 4;        ///< bandwidth: buffer slot 0..kMaxSlots-1
inline constexpr int kParamStride = 5;      ///< bandwidth: floats per thread in the slot's buffer
inline constexpr int kParamThreadsOut = 8;  ///< out: omp_get_num_threads() of the last call
inline constexpr int kParamSinkOut = 16;    ///< out: per-thread results (keeps the work alive), 32 doubles
inline constexpr int kParamCount = 64;
inline constexpr int kMaxSlots = 64;

/// Independent accumulator chains per thread in the peak kernels for `isa`.
int peakChains(CpuIsa isa);

/// The kernel library source for `isa` (a pure function of it). Exports the kernels above plus
/// tessera_set_num_threads / tessera_get_max_threads.
std::string generateCpuMicrobenchSource(CpuIsa isa);

/// Compiler flags the library is built with: HostCompilerOptions' defaults plus
/// -fno-tree-loop-distribute-patterns (so the copy loop stays a loop, not a memcpy call).
std::vector<std::string> cpuMicrobenchFlags();

/// Data cache sizes of one core (bytes). Read from /sys/devices/system/cpu/cpu0/cache/index*
/// (level, type, size), else sysconf(_SC_LEVEL*_CACHE_SIZE); 0 when unknown.
struct CpuCacheInfo {
    std::int64_t l1d = 0;
    std::int64_t l2 = 0;
    std::int64_t l3 = 0;  ///< one L3 instance as cpu0 sees it
    int cpus = 1;         ///< logical CPUs this process may run on (sched_getaffinity)
};
CpuCacheInfo readCpuCacheInfo();

/// One bandwidth working set.
struct LevelWorkingSet {
    std::string level;          ///< "L1", "L2", "L3", "DRAM"
    std::int64_t bytes = 0;     ///< all threads together
};
/// The working sets of the file comment for `threads` threads (unknown cache sizes fall back to
/// 32 KiB L1d, 1 MiB L2, 32 MiB L3).
std::vector<LevelWorkingSet> levelWorkingSets(const CpuCacheInfo& cache, int threads);

/// One measured point of the bandwidth sweep.
struct BandwidthPoint {
    std::string method;            ///< "load", "copy", "triad"
    std::int64_t workingSetBytes;  ///< all threads together
    int threads = 1;
    double gbPerSecond = 0;
};

struct CpuMicrobenchOptions {
    /// Quick mode: thread counts {1, N} for compute and {N} for bandwidth, add/mul only at N, no
    /// sweep, 0.05 s per measurement; well under 30 s on a 2-core machine.
    bool quick = false;
    /// Thread counts; empty = 1..N (N = CpuCacheInfo::cpus; over 16 CPUs: powers of two and N).
    std::vector<int> threadCounts;
    /// Seconds each measurement runs at least; 0 = 0.15 (0.05 when quick).
    double minSeconds = 0;
    /// Also measure the working-set sweep (powers of two from 16 KiB per thread to the DRAM set).
    bool sweep = false;
    /// ISA of the kernels; detectCpuIsa() when not set.
    bool forceIsa = false;
    CpuIsa isa = CpuIsa::Scalar;
    /// Compiler (flags are replaced by cpuMicrobenchFlags()).
    runtime::HostCompilerOptions compiler;
    /// tessera-runner to use; empty = runtime::findRunnerExecutable().
    std::string runnerPath;
    /// Called with a fraction 0..1 and a short phase text; may be empty.
    std::function<void(double, const std::string&)> progress;
};

struct CpuMicrobenchResult {
    CpuIsa isa = CpuIsa::Scalar;
    CpuCacheInfo cache;
    /// Compute roofs (level empty, precision fp32/fp64, method "fma"/"add"/"mul" + ISA) and
    /// bandwidth roofs (level L1..DRAM, method "load"/"copy"/"triad" + working set), one per
    /// measurement and thread count.
    std::vector<Roof> roofs;
    std::vector<BandwidthPoint> sweep;  ///< empty unless options.sweep
    std::string compilerVersion;
    double compileSeconds = 0;
    double seconds = 0;  ///< wall time of the whole measurement
};

/// Compiles and runs the micro-benchmarks. Errors: the compiler's (not found, failed), the runner's
/// (not found, crashed, timed out), "measurement cancelled", a kernel that reports a thread count
/// other than the one asked for (warning, its roofs use the reported count), a non-positive time.
/// Consistency checks of measured CPU roofs, one message per problem (each starting "timings look
/// disturbed"): a roof measured with more threads more than 10% below the same roof with fewer;
/// an ADD or MUL peak outside 0.35x..1.2x the FMA peak of the same precision and thread count (an
/// add or multiply issues where an FMA does and counts one FLOP, so about 0.5x is expected); a
/// closer level (L1 < L2 < L3 < DRAM) more than 10% below a further one for the same method and
/// thread count.
/// measureCpuRoofs reports them as warnings with support::DiagnosticCode::MeasurementDisturbed;
/// `roofline measure --save` refuses to save then.
std::vector<std::string> roofConsistencyProblems(const std::vector<Roof>& roofs);

support::Expected<CpuMicrobenchResult> measureCpuRoofs(const CpuMicrobenchOptions& options,
                                                       const support::CancelToken* cancel = nullptr);

/// The highest roof of `kind` matching level (bandwidth) or precision (compute; empty = any) with
/// `threads` (0 = any); nullptr when none.
const Roof* bestRoof(const std::vector<Roof>& roofs, Roof::Kind kind, const std::string& levelOrPrecision,
                     int threads = 0);

}  // namespace tessera::perf
