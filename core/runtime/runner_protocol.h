#pragma once
/// @file
/// The tessera-runner protocol: how the IDE/CLI (RunnerClient, core/runtime/runner_client.h) has
/// user kernels run in a child process (app/runner), so that a crash or a hang in a kernel becomes
/// a diagnostic instead of taking the IDE down.
///
/// Transport
/// - One JSON object per line (UTF-8, '\n'-terminated, no line breaks inside) over the child's
///   stdin (requests) and stdout (events and answers). The runner writes nothing else to its
///   stdout: it moves its own stdout to stderr at start, so a kernel's printf goes to stderr, and
///   logs to stderr. It serves requests one at a time, in order, and exits on EOF of stdin.
/// - Buffers travel through a shared arena: a file the client creates (SharedArena,
///   core/runtime/shared_arena.h; in /dev/shm when it has room, else $TMPDIR or /tmp) and maps
///   MAP_SHARED; the runner maps the same file MAP_SHARED for the duration of a run. The client
///   writes inputs before a `run` and reads outputs after its answer.
///
/// Kernel ABI
/// - A kernel library is a shared object exporting kernels `extern "C" void NAME(void* const* args)`;
///   args[i] is the address of the i-th buffer named by that launch.
/// - Optional exports: `extern "C" void tessera_set_num_threads(int)` (the runner calls it with
///   `threads` when > 0; otherwise OpenMP follows OMP_NUM_THREADS, which the client sets when it
///   starts the runner) and `extern "C" int tessera_get_max_threads(void)` (reported as `threads`
///   and `omp_max_threads`).
/// - A CUDA run (`"target":"cuda"`) loads `module`, a .cubin or .ptx file (cuModuleLoadDataEx;
///   PTX is JIT-compiled by the driver), and launches its `__global__` kernels `entry` with one
///   parameter per arg: the device address (CUdeviceptr) of the i-th buffer named by that launch.
///
/// Requests (client -> runner)
/// - `{"request":"hello","protocol":1,"library":"/path/k.so"}` — "library" is optional.
///   Answer: `{"ok":true,"protocol":1,"pid":1234,"omp_max_threads":8}`; omp_max_threads is null
///   unless a library exporting tessera_get_max_threads was given.
/// - `{"request":"run", "library":"/path/k.so", "arena":{"path":"/dev/shm/tessera-arena-x","bytes":N},
///    "buffers":[{"offset":0,"bytes":4096}, ...], "launches":[{"entry":"k0","args":[0,1,2],"label":"Conv_0"}, ...],
///    "threads":4, "timing":{"time":true,"warmup":1,"min_reps":3,"max_reps":1000,"min_seconds":0.1},
///    "rotate_bytes":67108864}`
///   Every buffer must lie inside the arena; args are indices into "buffers"; label defaults to
///   the entry name; threads 0 = leave the runtime default; timing fields default as shown;
///   rotate_bytes 0 = no rotation.
///   The runner then:
///   1. runs every launch once, in order, on the arena (the results the caller checks), writing
///      `{"event":"launch","index":i}` before launch i so that the client knows which kernel faulted;
///   2. when timing.time, times on a private copy of the arena (so the arena keeps the results of
///      step 1 even when buffers alias): for each launch, `{"event":"time","index":i}`, then
///      `warmup` untimed calls and timed calls until at least min_reps calls and min_seconds of
///      timed calls, or max_reps calls. Launch rotation: when the bytes of the buffers the launch
///      names add up to less than rotate_bytes, it makes copies of them (enough that the copies
///      together exceed rotate_bytes, at most kMaxRotatedCopies and within a memory cap) and
///      cycles through them, one per call, so each call reads its data from memory, not cache;
///   3. then `{"event":"time_total"}` and the whole sequence, end to end, the same way (no rotation).
///   Answer: `{"ok":true,"timed":true,"threads":4,"kernels":[{"label":"Conv_0","median_s":..,"min_s":..,
///   "max_s":..,"q1_s":..,"q3_s":..,"mean_s":..,"reps":12,"rotated_copies":8}, ...],"total":{same fields}}`
///   (kernels empty and total zero when not timed; rotated_copies 1 = no rotation; times in s).
/// - CUDA runs: the same request with `"target":"cuda"` (default "cpu"), `"module":"/path/k.cubin"`
///   (or .ptx; "library" is then optional and unused) and `"device":0` (ordinal); each launch also
///   has `"grid":G,"block":B` (x dimensions; y and z are 1; default 1) and `"shared_bytes":S`
///   (dynamic shared memory, default 0; above 48 KiB the runner opts the kernel in first).
///   The runner (which keeps one primary context per device for its life and caches modules by
///   path) allocates one device buffer per buffer (cuMemAlloc), copies every buffer host to device
///   from the arena, then:
///   1. launches each launch once, in order, on the default stream (`{"event":"launch","index":i}`
///      before each, cuCtxSynchronize after each so that a fault is attributed to its kernel), and
///      copies every buffer device to host into the arena, in buffer order (buffers that overlap
///      in the arena are separate on the device: the later buffer's bytes win);
///   2. when timing.time, for each launch (`{"event":"time","index":i}`): `warmup` untimed
///      launches, then batches of launches timed with a CUDA event pair (one batch of n launches
///      counts as n samples of elapsed/n; batches are kept small enough for >= 10 of them) until
///      min_reps launches and min_seconds of timed time, or max_reps launches. Rotation as on the
///      CPU, through device copies of the launch's buffers (cuMemcpyDtoD; at most a quarter of
///      the free device memory); `"rotate_bytes":-1` means 2 x the device's L2 (what the client
///      sends for a cuda request whose rotateBytes is -1);
///   3. `{"event":"time_total"}` and the whole sequence timed the same way (no rotation).
///   Energy (optional fields, protocol 1 unchanged): where NVML loads (core/runtime/cuda/nvml.h)
///   and finds the device by its PCI bus id, each kernel entry also has `"energy_j"` (joules per
///   launch), `"avg_power_w"` (watts over the phase), `"energy_method"` ("nvml-energy-counter":
///   the device's total-energy counter read before and after; "nvml-power-samples": devices
///   without the counter, power read every 5 ms on a side thread and integrated),
///   `"energy_valid"`, `"energy_reps"` (launches measured) and `"energy_s"` (the phase's
///   wall-clock length). The phase is the launch's timed phase of step 2 (warm-up excluded; the
///   short gaps between batches included); when that was shorter than 0.1 s (max_reps reached
///   first), the runner launches the kernel again, untimed, for ~0.1 s (by its median time, at
///   most 10^6 launches) and measures that phase instead. The counter advances in steps of
///   ~10-100 ms, so "energy_valid" is false when the phase was shorter than 50 ms or the counter
///   did not move (fewer than two power samples for the fallback). Without NVML the fields are
///   absent (and always on the CPU).
///   Device memory is freed after each request. Answer: as above, plus `"device":{...}` (the
///   device's CudaDeviceInfo, core/runtime/cuda/cuda_driver.h) and `"threads":0`.
///   Errors: `{"ok":false,"error":"no CUDA driver found (...)"}` (or "CUDA driver found but no
///   device ..."), "cannot read module '...': ...", "cannot load module '...': CUDA_ERROR_... (...)
///   <JIT log>", "entry 'X' not found in module '...'", "cannot allocate N bytes on the GPU for
///   buffer i: ...", "kernel 'LABEL' could not be launched (grid G, block B, shared S bytes):
///   CUDA_ERROR_INVALID_VALUE (...)" (this one with `"code":"kernel_launch_failed"`,
///   kRunnerCodeKernelLaunchFailed); the runner keeps serving after these. A fault that leaves
///   the context unusable (illegal or misaligned address, illegal instruction, launch failure,
///   device assert, ...): `{"ok":false,"error":"kernel 'LABEL' faulted on the GPU:
///   CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)","fatal":true}`, after
///   which the runner exits with status kRunnerFatalExitStatus; the client reports the error and
///   starts a fresh runner for the next request.
/// - `{"request":"devices"}` -> `{"ok":true,"devices":[{CudaDeviceInfo JSON}, ...]}`, or
///   `{"ok":false,"error":"no CUDA driver found (...)"}` (the runner keeps serving).
/// - Any failure the runner can report: `{"ok":false,"error":"cannot load library '...': <dlerror>"}`
///   (also: entry not found, a buffer outside the arena, a bad request, an unknown request). After
///   such an answer the runner keeps serving.
/// - A kernel that crashes kills the runner (the client sees EOF and the signal through waitpid);
///   a kernel that hangs is killed by the client after its timeout. Either way the client starts
///   a fresh runner for the next request.
///
/// Thread rules: plain values and pure conversions; safe from any thread.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/runtime/cuda/cuda_driver.h"
#include "core/runtime/timing.h"
#include "core/support/expected.h"

namespace tessera::runtime {

/// Version spoken by this build; hello answers carry it and the client refuses a mismatch.
inline constexpr int kRunnerProtocolVersion = 1;
/// The most copies a launch's buffers are rotated through.
inline constexpr int kMaxRotatedCopies = 64;
/// The runner's exit status after a fatal answer (a GPU fault that left its context unusable).
inline constexpr int kRunnerFatalExitStatus = 4;
/// The "code" of an error answer for a kernel the driver refused to launch (its grid, block or
/// resources); other error answers carry no code.
inline constexpr const char* kRunnerCodeKernelLaunchFailed = "kernel_launch_failed";

/// A buffer: `bytes` bytes at `offset` in the arena.
struct BufferSpec {
    std::int64_t offset = 0;
    std::int64_t bytes = 0;
};

/// One kernel call: `entry` exported by the library (or the CUDA module), called with the
/// addresses of args[i].
struct LaunchSpec {
    std::string entry;
    std::vector<int> args;  ///< indices into RunRequest::buffers
    std::string label;      ///< shown in results and errors; empty = entry
    // CUDA only (ignored on the CPU): the launch configuration, x dimensions (y = z = 1).
    std::int64_t grid = 1;         ///< blocks, 1 .. 2^31-1
    std::int64_t block = 1;        ///< threads per block, 1 .. 2^31-1 (the driver refuses > 1024)
    std::int64_t sharedBytes = 0;  ///< dynamic shared memory per block, 0 .. 2^31-1
};

/// Where a run executes.
enum class RunTarget { Cpu, Cuda };
/// "cpu" / "cuda".
const char* runTargetName(RunTarget t);

struct TimingRequest {
    bool time = true;          ///< false: run once, no timing
    int warmup = 1;
    int minReps = 3;
    int maxReps = 1000;
    double minSeconds = 0.1;   ///< per kernel (and for the end-to-end sequence)
};

struct RunRequest {
    RunTarget target = RunTarget::Cpu;
    std::string libraryPath;        ///< CPU: the kernel library (.so)
    std::string modulePath;         ///< CUDA: the .cubin or .ptx file
    int device = 0;                 ///< CUDA: device ordinal
    std::string arenaPath;          ///< SharedArena::path()
    std::int64_t arenaBytes = 0;    ///< SharedArena::size()
    std::vector<BufferSpec> buffers;
    std::vector<LaunchSpec> launches;
    int threads = 0;                ///< 0 = the runner's default (OMP_NUM_THREADS at spawn)
    TimingRequest timing;
    /// Rotate a launch's buffers when they total fewer bytes than this. -1: the default (CPU:
    /// RunnerClient fills in 2 x lastLevelCacheBytes(); CUDA: the runner uses 2 x the device's
    /// L2), 0 = never.
    std::int64_t rotateBytes = -1;
    /// Client side only: the longest the runner may go without progress (one launch of the
    /// checked pass, one kernel's timing, the end-to-end timing) before it is killed.
    double timeoutSeconds = 60;
};

/// The energy one launch used while the runner timed it (CUDA runs where NVML works; see the
/// file comment for how it is measured and when it is valid).
struct KernelEnergy {
    double joulesPerCall = 0;   ///< "energy_j": the phase's energy / `calls`, joules
    double avgPowerWatts = 0;   ///< "avg_power_w": the phase's energy / its wall-clock length, watts
    std::string method;         ///< "energy_method": "nvml-energy-counter" | "nvml-power-samples"
    bool valid = false;         ///< "energy_valid": see the file comment
    std::int64_t calls = 0;     ///< "energy_reps": launches in the measured phase
    double seconds = 0;         ///< "energy_s": the phase's wall-clock length, seconds
};

struct KernelTiming {
    std::string label;
    TimingStats stats;
    int rotatedCopies = 1;  ///< 1 = no rotation
    std::optional<KernelEnergy> energy{};  ///< absent on the CPU and where NVML is unavailable
};

struct RunResult {
    bool timed = false;
    std::vector<KernelTiming> kernels;  ///< one per launch, in order (empty when not timed)
    TimingStats total;                  ///< the whole sequence end to end
    int threads = 0;                    ///< tessera_get_max_threads() when exported, else the request's (0 = unknown)
    std::optional<cuda::CudaDeviceInfo> device;  ///< CUDA runs: the device that ran them
};

struct RunnerHello {
    int protocol = 0;
    std::int64_t pid = 0;
    int ompMaxThreads = 0;  ///< 0 when unknown
};

/// The label shown for launch i (its label, else its entry).
std::string launchLabel(const LaunchSpec& launch);

// JSON conversions (wire format above). The *FromJson functions validate types and ranges and
// return a one-line error on failure (field name included); they never throw.
nlohmann::json runRequestToJson(const RunRequest& r);
support::Expected<RunRequest> runRequestFromJson(const nlohmann::json& j);
nlohmann::json timingStatsToJson(const TimingStats& s);
nlohmann::json runResultToJson(const RunResult& r);
support::Expected<RunResult> runResultFromJson(const nlohmann::json& j);

/// j.dump() on one line; invalid UTF-8 in strings is replaced rather than thrown about.
std::string dumpLine(const nlohmann::json& j);

}  // namespace tessera::runtime
