#pragma once
/// @file
/// The GPU half of the tessera-runner service (core/runtime/runner_service.h): runs a
/// `"target":"cuda"` request (core/runtime/runner_protocol.h describes the steps, the events, the
/// timing and the errors) through the driver API loaded at run time (cuda_driver.h).
///
/// State kept for the life of the object (the runner process): one primary context per device
/// used (retained on first use, released on destruction) and the modules loaded into it, keyed by
/// path (kernel caches name modules by content hash, so a path never changes meaning). Device
/// memory, rotation copies and events live for one request and are freed before it returns.
///
/// A fatal answer (`"fatal":true`: a fault left the context unusable) means this object, and the
/// process, can no longer use the GPU: the runner exits after sending it.
///
/// Energy: where NVML loads (nvml.h), each device is matched to its NVML handle by PCI bus id
/// when first used, and every timed launch also reports its energy (runner_protocol.h, "energy_j"
/// and the fields after it); without NVML, or when the device cannot be matched, those fields are
/// left out and timing is unchanged.
///
/// Thread rules: one thread at a time uses a CudaRunner; it makes its contexts current on the
/// calling thread.

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/runtime/cuda/cuda_driver.h"
#include "core/runtime/cuda/nvml.h"
#include "core/runtime/runner_protocol.h"

namespace tessera::runtime::cuda {

class CudaRunner {
public:
    /// Receives each event line (`{"event":...}`) as it happens.
    using Emit = std::function<void(const nlohmann::json&)>;

    CudaRunner() = default;
    CudaRunner(const CudaRunner&) = delete;
    CudaRunner& operator=(const CudaRunner&) = delete;
    ~CudaRunner();

    /// Runs `request` (target Cuda, already validated) over the arena mapped at `arena`
    /// (request.arenaBytes bytes; may be null when there are no buffers) and returns the answer:
    /// runResultToJson() with "device", or {"ok":false,"error":...} (plus "fatal":true after a
    /// fault). Never throws.
    nlohmann::json run(const RunRequest& request, std::uint8_t* arena, const Emit& emit);

private:
    struct Device {
        CUdevice handle = 0;
        CUcontext context = nullptr;
        CudaDeviceInfo info;
        std::map<std::string, CUmodule> modules;
        NvmlDevice nvml = nullptr;  ///< the device in NVML; null when NVML is unavailable
        std::string nvmlError;      ///< why nvml is null
    };

    /// The device `ordinal` with its primary context retained, or nullptr with `error` set.
    Device* device(const CudaDriver& d, int ordinal, std::string& error);
    /// The module at `path` loaded into `dev`'s context (current), or nullptr with `error` set.
    CUmodule module(const CudaDriver& d, Device& dev, const std::string& path, std::string& error);

    std::map<int, Device> m_devices;
};

}  // namespace tessera::runtime::cuda
