#pragma once
/// @file
/// Running a compiled model: JIT the module (CPU: the host compiler, compile units built in
/// parallel and cached one by one, runtime::compileHostModule; CUDA: NVRTC to a CUBIN for the
/// device's architecture, launched by the runner through the driver API), lay every tensor
/// out in a shared arena, run and time the kernels in `tessera-runner` (a child process: a crashing or
/// hanging kernel becomes an error, the caller survives), check each kernel's outputs against
/// the reference interpreter, and report per-kernel counts, times and errors.
///
/// Semantics
/// - Every tensor a step reads or writes gets its own slot in the arena (64-byte aligned; no
///   reuse). Constants are copied in once; runtime inputs are the fed tensors.
/// - The runner runs the launches once in order (those outputs are the results and what is
///   checked), then times each kernel (warm-up, then repetitions until RunOptions::minSeconds and
///   minReps, at most maxReps; median, min, IQR) and the whole sequence end to end. Inputs smaller
///   than twice the last-level cache are rotated between copies while timing (runner protocol).
/// - Reference steps (CompileOptions::fallbackReference) split the launches into segments; the
///   node runs in the reference interpreter on the arena's current values between segments and
///   its time is measured the same way (median of repetitions) on the calling thread.
/// - Checking (RunOptions::check): each kernel's outputs are compared with the reference
///   interpreter run on the very inputs the kernel read (core/eval/compare.h; tolerances per
///   dtype unless RunOptions::relTol is set, and an absolute tolerance of relTol x the RMS of the
///   expected tensor, so that elements where fp32 sums cancel to near zero are judged at the
///   tensor's scale). A kernel's error is therefore its own, not what upstream kernels left in
///   its inputs. Reference steps are not checked (checked = false). The graph outputs are also
///   checked end to end (RunReport::outputChecks): against the reference interpreter run on the
///   whole graph from the model's inputs, which catches what per-kernel checks cannot (a kernel
///   that writes inf hands every later kernel inf, and each of them matches its reference on
///   those inputs), and against RunOptions::expectedOutputs when given.
/// - Failing data (for the GUI's error heatmap and its "re-run in the reference interpreter"):
///   when a kernel fails its check, its failing outputs keep both tensors (OutputCheck::actual /
///   expected, the element-wise tolerances in OutputCheck::tolerance) and the kernel keeps the
///   inputs it read (KernelReport::checkInputs), in run order, while the bytes kept stay within
///   RunOptions::keepFailingBytes for the whole report (whole tensors only: a kernel whose data
///   does not fit keeps none of it and says so in KernelReport::keptNote). Passing kernels keep
///   nothing, so a healthy run costs no memory. rerunInReference() evaluates a failing kernel
///   again from its kept inputs.
/// - Testing hook: when the environment variable TESSERA_DEBUG_CORRUPT_KERNEL (kCorruptKernelEnv)
///   names a kernel (KernelReport::name; several names separated by commas), its first output is
///   corrupted in the arena right after it ran (its launch segment ends with it), as if the kernel
///   were wrong: the elements with flat index in [n/2, n/2 + max(1, n/8)) of its n elements move
///   1 + |x| away from zero (x + copysign(1 + |x|, x): f32, f64; integer types get 1 added; other
///   dtypes are left alone). Downstream steps
///   and the graph outputs read the corrupted values; the check flags the kernel with its first bad
///   element at flat index n/2 (unless the tolerance exceeds 1). For tests and demos only.
/// - RunReport::warnings says when timings look disturbed: on the CPU target, other processes
///   used more than 20% of the machine's CPU time while the kernels were timed (/proc/stat minus
///   the runner's and this process's own ticks, core/support/cpu_usage.h); where /proc cannot be
///   read, when the kernels' medians add up to more than 1.5x the end-to-end median (checked only
///   when no kernel's inputs were rotated: rotated, cold inputs make a kernel slower than in the
///   warm end-to-end sequence).
/// - Units: times in seconds, FLOPs and bytes as counted in the kernel IR (core/lower/counts.h):
///   `bytes` are the global bytes the kernel issues (CARM), `compulsoryBytes` each parameter
///   read or written once (DRAM view).
///
/// Errors: compiler missing or failing (from the host JIT or NVRTC), no CUDA driver or device for
/// a CUDA model ("no CUDA driver found ..."), GPU faults ("kernel 'X' faulted on the GPU:
/// CUDA_ERROR_ILLEGAL_ADDRESS ..."; the runner is restarted for the next run), runner faults (crash, abort,
/// timeout: "kernel 'X' crashed: SIGSEGV ..."), reference failures, cancellation. Every error of
/// running the kernels in the runner has where = kRunnerWhere and code
/// support::DiagnosticCode::RunnerFault. A kernel outside tolerance is not an error: it is
/// reported in KernelReport::check.
///
/// Phases (in this order; each may end the run with its errors): the module's compile, the
/// arena (layout, constants, inputs), the steps (kernel segments in the runner, reference steps
/// in this process), the kernels' checks, the graph outputs' checks, the timing warnings.
/// Thread rules: runModel blocks the calling thread (a worker thread in the GUI); the RunnerClient
/// must not be used by another thread meanwhile.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/eval/compare.h"
#include "core/pipeline/compile.h"
#include "core/runtime/cuda/cuda_driver.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/runtime/host_jit.h"
#include "core/runtime/runner_client.h"
#include "core/runtime/timing.h"

namespace tessera::pipeline {

/// `Diagnostic::where` of errors that come from the runner process (a kernel crashed, aborted,
/// timed out, or the runner failed).
inline constexpr const char* kRunnerWhere = "runner";

struct RunOptions {
    bool check = false;
    double relTol = -1;        ///< < 0: per-dtype defaults (f32: 1e-4); else relTol, absTol = relTol x RMS
    bool time = true;          ///< false: run once (results and checks only)
    int warmup = 1;
    int minReps = 3;
    int maxReps = 1000;
    double minSeconds = 0.1;   ///< per kernel
    int threads = 2;
    double timeoutSeconds = 120;
    runtime::HostCompilerOptions compiler;
    // CUDA target (CompiledModel::target == Cuda):
    int cudaDevice = 0;        ///< device ordinal the runner uses
    /// NVRTC architecture; empty = the device's own (sm_XX from its compute capability).
    std::string cudaArch;
    std::vector<std::string> nvrtcOptions;  ///< extra NVRTC options
    std::string cudaCacheDir;  ///< empty = runtime::cuda::defaultCudaCacheDir()
    /// Budget, in bytes over the whole report, for the tensors kept of failing kernels (outputs
    /// got and want, and the inputs they read; see the file comment); 0 keeps none.
    std::int64_t keepFailingBytes = std::int64_t{64} << 20;
    /// Graph outputs by name and what they must equal (e.g. a torch run's outputs read from
    /// .npy files), compared with the per-dtype tolerances (or relTol) whether or not `check` is
    /// set; a name that is not a graph output is an error.
    std::vector<std::pair<std::string, ir::TensorData>> expectedOutputs;
    /// Per-kernel progress (KernelProgress, compile.h): the module compile (its compile units), then each
    /// step once it has run and, when timing, been timed (from the runner's per-launch events;
    /// a reference step once it ran), then each step checked. Steps count in execution order,
    /// so `done` of kPhaseRunningKernels is the number of steps finished.
    KernelProgress kernelProgress;
};

/// Host JIT (CPU target): kernels that compile at the reduced optimisation level
/// (runtime::HostCompilerOptions::reducedOptFlag, -Og, in compile units of their own) because
/// -O3 does not pay for them. An elementwise kernel (CompiledStep::elementwise) qualifies when
/// - its largest parameter has at most kReducedOptMaxElements elements. Below -O2 GCC leaves the
///   loop scalar; measured on this 2-core Zen 3 machine (one thread, a Relu loop as generated,
///   bench/RESULTS.md "issue 18"), -O1 cost 0.09 us a launch at 64 elements and 2.2 us at 4096
///   over -O3's vector loop, so up to 1024 elements the loss (~0.5 us) stays below what the
///   kernel's OpenMP parallel region itself costs, while -O3 compiles such a kernel in 34 ms
///   against 6 ms at -Og (12 ms at -O1). Larger elementwise kernels (MobileNetV2's Clip and Add,
///   62k elements and up) keep -O3;
/// - or its source is at least kReducedOptMinSourceBytes: huge straight-line code, a fused chain
///   of several hundred elementwise ops, whose compile time at -O3 grows faster than its size (a
///   fused chain of 3,000 ops on [1,64]: 18.7 s at -O3, 11.7 s at -O1, 9.5 s at -Og). Its run
///   time at -Og was not measured on large tensors.
inline constexpr std::int64_t kReducedOptMaxElements = 1024;
inline constexpr std::size_t kReducedOptMinSourceBytes = 64 * 1024;

/// The testing hook's environment variable (see the file comment).
inline constexpr const char* kCorruptKernelEnv = "TESSERA_DEBUG_CORRUPT_KERNEL";

struct OutputCheck {
    std::string tensor;
    eval::TensorComparison comparison;
    /// The tolerances the comparison applied (per-dtype defaults widened by the tensor's RMS, or
    /// RunOptions::relTol).
    eval::CompareOptions tolerance;
    /// Failing outputs only, within RunOptions::keepFailingBytes: what the kernel computed and
    /// what the reference interpreter computed from the same inputs. Null otherwise.
    std::shared_ptr<const ir::TensorData> actual, expected;
    /// What it was compared with: empty for a kernel's check (the reference interpreter on the
    /// kernel's own inputs); "reference interpreter" (the whole graph from the model's inputs) or
    /// "expected" (RunOptions::expectedOutputs) for RunReport::outputChecks.
    std::string against;
};

struct KernelReport {
    std::string name;                 ///< node name
    std::string opType;
    std::vector<std::string> ops;     ///< nodes the kernel covers
    std::string group;                ///< fusion group (CompiledStep::group)
    bool reference = false;           ///< ran in the reference interpreter (fallback)
    double flops = 0;                 ///< as issued by the kernel IR (node FLOPs for reference steps)
    /// The op's FLOPs by the op registry (ir::nodeFlops: the work the model asks for, without lanes
    /// a tiled kernel computes and discards); -1 when unknown. Rates (GFLOP/s) use this when known.
    double usefulFlops = -1;
    std::int64_t bytes = 0;           ///< global bytes issued (loads + stores)
    std::int64_t compulsoryBytes = 0;
    runtime::TimingStats time;        ///< seconds
    int rotatedCopies = 1;
    /// Joules per run of the kernel and the average power (watts) while it was timed, from NVML
    /// on a CUDA device (runner_protocol.h, "energy_j"/"avg_power_w"); -1 when unknown (CPU
    /// targets, no NVML, reference steps, or a measurement the runner marked not valid).
    double energyJoules = -1;
    double avgPowerWatts = -1;
    bool checked = false;
    bool passed = true;
    std::vector<OutputCheck> checks;  ///< one per output (when checked)
    /// A failing kernel's inputs as it read them (runtime inputs of its reference graph, by value
    /// name, in that graph's order), within RunOptions::keepFailingBytes; empty otherwise.
    std::vector<std::pair<std::string, std::shared_ptr<const ir::TensorData>>> checkInputs;
    /// Why a failing kernel kept no data ("tensors of 80.0 MB exceed the 64.0 MB kept for failing
    /// kernels"); empty when it kept its data or passed.
    std::string keptNote;
    double maxRelError() const;       ///< worst relative L2 over outputs (0 when unchecked)
};

struct RunReport {
    std::vector<KernelReport> kernels;
    runtime::TimingStats total;       ///< end to end, seconds (sum over segments)
    /// The graph outputs judged end to end (see RunOptions::check and expectedOutputs), graph
    /// outputs first in graph order against the reference interpreter, then the expected tensors
    /// in the order given. A failure clears allPassed.
    std::vector<OutputCheck> outputChecks;
    int threads = 0;
    bool checked = false;
    bool allPassed = true;
    std::vector<std::pair<std::string, ir::TensorData>> outputs;  ///< graph outputs by name
    runtime::CompiledLibrary library;               ///< CPU target
    std::optional<runtime::cuda::CudaCompiled> cudaModule;  ///< CUDA target: the NVRTC result
    std::optional<runtime::cuda::CudaDeviceInfo> device;    ///< CUDA target: where it ran
    support::DiagnosticList warnings;
};

/// The NVRTC options runModel compiles `cm` with for architecture `arch` (RunOptions::cudaArch,
/// else the device's own): compiling with them beforehand makes runModel's compile a cache hit.
runtime::cuda::CudaCompileOptions cudaCompileOptions(const CompiledModel& cm, const RunOptions& options,
                                                      const std::string& arch);

/// `inputs` are the inputs given to compileModel (in the source graph's runtime-input order).
support::Expected<RunReport> runModel(const CompiledModel& cm, const std::vector<ir::TensorData>& inputs,
                                      const RunOptions& options, runtime::RunnerClient& runner,
                                      const support::CancelToken* cancel = nullptr,
                                      const support::ProgressSink& progress = {});

/// Evaluates kernel `kernel` of `cm` (a KernelReport::name) again in the reference interpreter on
/// `inputs` (KernelReport::checkInputs of a failing kernel: the kernel's own inputs), as the
/// check did: a fused kernel's member nodes together, else its node. Returns the outputs by value
/// name, in the order of the kernel's checks. Errors: no such kernel step, an input missing or of
/// the wrong shape, reference failures, cancellation. Thread rules: pure; any thread.
support::Expected<std::vector<std::pair<std::string, ir::TensorData>>> rerunInReference(
    const CompiledModel& cm, const std::string& kernel,
    const std::vector<std::pair<std::string, std::shared_ptr<const ir::TensorData>>>& inputs,
    const support::CancelToken* cancel = nullptr);

}  // namespace tessera::pipeline
