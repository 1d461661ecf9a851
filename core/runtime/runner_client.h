#pragma once
/// @file
/// RunnerClient: runs kernel libraries in a tessera-runner child process (protocol:
/// core/runtime/runner_protocol.h) and turns its faults into diagnostics.
///
/// Typical use:
/// @code
///   auto arena = SharedArena::create(total);           // core/runtime/shared_arena.h
///   ... write inputs at their offsets ...
///   RunRequest req; req.libraryPath = lib.path; arena->attach(req);
///   req.buffers = {...}; req.launches = {{"k0", {0, 1, 2}, "Add_0"}};
///   RunnerClient client;                                // one per job channel
///   auto result = client.run(req, &cancel);             // outputs are now in the arena
/// @endcode
///
/// Process: the runner is started on first use (posix_spawnp, no shell) with OMP_NUM_THREADS set
/// when RunnerClientOptions::threads > 0, in its own process group, and kept for later runs.
/// After a fault the client is clean again and the next call starts a fresh runner. The runner
/// ends with the thread that started it (it sets PR_SET_PDEATHSIG and checks
/// TESSERA_RUNNER_PARENT, the client's pid, at start), so a killed caller leaves no runner behind;
/// callers that start it from a pool thread keep that thread alive.
///
/// Errors (one diagnostic, message as quoted; the runner's last stderr lines, if any, as notes):
/// - the runner died of a signal while launch i was in flight (checked pass or its timing):
///   "kernel '<label>' crashed: SIGSEGV (segmentation fault)" ("SIGABRT (aborted)", "SIGBUS (bus
///   error)", "SIGFPE (floating-point exception)", ...); during the end-to-end timing:
///   "end-to-end timing crashed: ..."; with nothing in flight: "runner crashed: ...";
/// - no progress within RunRequest::timeoutSeconds: the runner is killed (SIGKILL) and reaped,
///   "kernel '<label>' did not finish within N s (killed)" (or "runner did not answer within
///   N s (killed)");
/// - cancellation: the runner is killed, "run cancelled";
/// - an error answer from the runner (library or entry not found, buffer outside the arena, no
///   CUDA driver, a CUDA launch refused): its text, e.g. "cannot load library '...': <dlerror>"
///   (the runner stays up);
/// - a fatal answer (a GPU fault left the runner's CUDA context unusable; the runner exits): its
///   text, "kernel '<label>' faulted on the GPU: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory
///   access was encountered)", with stderr notes; the next call starts a fresh runner, as after a
///   crash. A GPU kernel that hangs is killed with the runner after the timeout, as on the CPU;
/// - a kernel that calls exit(): "kernel '<label>' ended the runner with exit status N";
/// - EOF or an exit with nothing in flight, or a line that is not the protocol:
///   "runner protocol error: ...";
/// - the executable missing: "tessera-runner not found ...: set TESSERA_RUNNER".
/// Codes (support::DiagnosticCode): crashes, timeouts, fatal answers, exits and protocol errors
/// are RunnerFault; an error answer the runner marks as a refused launch ("code":
/// "kernel_launch_failed", runner_protocol.h) is KernelLaunchFailed; the executable missing is
/// RunnerNotFound; other error answers and cancellation have none.
///
/// Thread rules: one thread at a time uses an instance (it owns a child process and its pipes);
/// several instances may be used from several threads. The CancelToken may be cancelled from any
/// thread; the client polls it every 50 ms.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/runner_protocol.h"
#include "core/runtime/subprocess.h"
#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::runtime {

/// The tessera-runner to start: $TESSERA_RUNNER when set; else `tessera-runner` next to the
/// running executable (/proc/self/exe); else `../runner/tessera-runner` relative to it (the build
/// tree: build/app/cli/tessera-cli and build/app/runner/tessera-runner). Error when none exists.
support::Expected<std::string> findRunnerExecutable();

/// One progress event of a run as the runner announces it (runner_protocol.h): `Launch` before
/// launch `index` of the checked pass, `Time` before launch `index` is timed, `TimeTotal` before
/// the end-to-end timing (index 0). Indices refer to RunRequest::launches.
struct RunnerEvent {
    enum class Kind { Launch, Time, TimeTotal };
    Kind kind = Kind::Launch;
    std::size_t index = 0;
};

/// Called by RunnerClient::run on the thread that called run(), once per event, in the order
/// the runner wrote them; it must return quickly (the runner's output waits meanwhile).
using RunnerEventSink = std::function<void(const RunnerEvent&)>;

struct RunnerClientOptions {
    /// Executable to start; empty = findRunnerExecutable(). Tests pass
    /// TESSERA_BINARY_DIR "/app/runner/tessera-runner".
    std::string runnerPath;
    /// OMP_NUM_THREADS for the runner; 0 = inherit the environment.
    int threads = 0;
    /// Extra environment variables for the runner.
    std::vector<std::pair<std::string, std::string>> env;
    /// How long the start-up handshake (hello) may take, in seconds.
    double startTimeoutSeconds = 10;
};

class RunnerClient {
public:
    explicit RunnerClient(RunnerClientOptions options = {});
    RunnerClient(const RunnerClient&) = delete;
    RunnerClient& operator=(const RunnerClient&) = delete;
    /// Closes the runner's stdin; kills it when it has not exited within a second.
    ~RunnerClient();

    /// Starts the runner if needed and asks hello; with a library, also its OpenMP thread count.
    support::Expected<RunnerHello> hello(const std::string& libraryPath = {}, const support::CancelToken* cancel = nullptr);

    /// Runs `request` (see runner_protocol.h for what the runner does). rotateBytes -1 becomes
    /// 2 x lastLevelCacheBytes() for a CPU run; for a CUDA run the runner uses 2 x the device's L2.
    /// On success the arena holds the outputs of the checked pass. `onEvent`, when set, hears
    /// every launch / time / time_total event (the protocol already sends them; nothing changes
    /// on the wire), which is how callers report progress per kernel.
    support::Expected<RunResult> run(const RunRequest& request, const support::CancelToken* cancel = nullptr,
                                     const RunnerEventSink& onEvent = {});

    /// The CUDA devices as the runner sees them (the `devices` request), starting it if needed.
    /// Errors: the runner's, e.g. "no CUDA driver found (libcuda.so.1: cannot open shared object
    /// file: No such file or directory)" (the runner stays up); no answer within timeoutSeconds
    /// (cuInit can take seconds): the runner is killed.
    support::Expected<std::vector<cuda::CudaDeviceInfo>> devices(const support::CancelToken* cancel = nullptr,
                                                                 double timeoutSeconds = 60);

    /// Stops the runner (if any) as the destructor does. The next call starts a new one.
    void shutdown();

    /// Whether a runner process is currently started (it may have died since the last call).
    bool started() const { return m_child.pid > 0; }
    /// Its pid, or -1.
    pid_t pid() const { return m_child.pid; }
    /// The last few KB the runner wrote to stderr (kernel prints, assertion messages).
    const std::string& stderrTail() const { return m_stderrTail; }

private:
    /// Outcome of waiting for one line.
    enum class Wait { Line, Eof, Timeout, Cancelled, Error };

    support::DiagnosticList start(const support::CancelToken* cancel);
    /// Reaps a runner that died since the last call, then starts one when none is running.
    support::DiagnosticList ensureStarted(const support::CancelToken* cancel);
    bool sendLine(const std::string& line);
    Wait readLine(std::string& line, double timeoutSeconds, const support::CancelToken* cancel);
    void drainStderr();
    /// Kills (when `kill`) and reaps the runner, closes fds, clears buffers. Returns how it ended.
    ExitStatus stop(bool kill);
    /// Error for a runner that ended or must be killed, with stderr notes; leaves the client clean.
    support::DiagnosticList fault(const std::string& message);

    RunnerClientOptions m_options;
    ChildProcess m_child;
    std::string m_readBuffer;
    std::string m_stderrTail;
};

}  // namespace tessera::runtime
