#pragma once
/// @file
/// The runner side of the tessera-runner protocol (core/runtime/runner_protocol.h): loads kernel
/// libraries, maps the arena, runs, times and answers. app/runner/main.cpp is a thin wrapper
/// around serveRunner(); keeping the logic here lets tests drive it in-process (for requests
/// whose kernels do not crash).
///
/// Libraries stay loaded (dlopen RTLD_NOW | RTLD_LOCAL) for the life of the service, keyed by
/// path: kernel caches name libraries by content hash, so a path never changes meaning. The
/// arena is mapped for the duration of one request. CUDA runs and the `devices` request go to a
/// cuda::CudaRunner (core/runtime/cuda/cuda_runner.h), created on first use, which owns the
/// service's CUDA contexts and modules.
///
/// Thread rules: one thread at a time uses a RunnerService.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::runtime {

namespace cuda {
class CudaRunner;
}

class RunnerService {
public:
    /// Receives each event line (`{"event":...}`) as it happens.
    using Emit = std::function<void(const nlohmann::json&)>;

    RunnerService();
    RunnerService(const RunnerService&) = delete;
    RunnerService& operator=(const RunnerService&) = delete;
    ~RunnerService();

    /// Handles one request object and returns its answer (`{"ok":...}`). Never throws. An answer
    /// with `"fatal":true` means the GPU can no longer be used: the process should exit after
    /// sending it (serveRunner does).
    nlohmann::json handle(const nlohmann::json& request, const Emit& emit);

private:
    nlohmann::json hello(const nlohmann::json& request);
    nlohmann::json run(const nlohmann::json& request, const Emit& emit);
    nlohmann::json devices();
    /// dlopen'ed handle of `path`, or nullptr with `error` set.
    void* library(const std::string& path, std::string& error);

    std::map<std::string, void*> m_libraries;
    std::unique_ptr<cuda::CudaRunner> m_cuda;
};

/// Serves requests read line by line from `inFd`, writing one line per event or answer to
/// `outFd`, until EOF on inFd (returns 0), a write failure (returns 1) or a fatal answer (returns
/// kRunnerFatalExitStatus after writing it). A line that is not JSON gets
/// {"ok":false,"error":"bad request: ..."}; empty lines are ignored.
int serveRunner(int inFd, int outFd);

}  // namespace tessera::runtime
