#include "core/runtime/cuda/cuda_runner.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "core/runtime/shared_arena.h"
#include "core/runtime/timing.h"

namespace tessera::runtime::cuda {

using nlohmann::json;

namespace {

json failure(const std::string& message) { return {{"ok", false}, {"error", message}}; }
json fatal(const std::string& message) { return {{"ok", false}, {"error", message}, {"fatal", true}}; }

/// Dynamic shared memory a kernel may use without opting in (cuFuncSetAttribute).
constexpr std::int64_t kDefaultDynamicSharedLimit = 48 * 1024;
/// The most device memory rotation copies may take (and never more than a quarter of the free memory).
constexpr std::int64_t kRotationMemoryCap = std::int64_t{4} << 30;

/// Device allocations freed together on destruction (errors ignored: after a fault the runner
/// exits anyway).
class DeviceMemory {
public:
    explicit DeviceMemory(const CudaDriver& d) : m_driver(d) {}
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;
    ~DeviceMemory() { release(); }

    CUresult allocate(std::int64_t bytes, CUdeviceptr& out) {
        out = 0;
        const CUresult rc = m_driver.memAlloc(&out, static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1)));
        if (rc == kCudaSuccess) m_pointers.push_back(out);
        return rc;
    }
    void release() {
        for (CUdeviceptr p : m_pointers) m_driver.memFree(p);
        m_pointers.clear();
    }

private:
    const CudaDriver& m_driver;
    std::vector<CUdeviceptr> m_pointers;
};

/// A start/stop event pair, destroyed on destruction.
class EventPair {
public:
    explicit EventPair(const CudaDriver& d) : m_driver(d) {}
    EventPair(const EventPair&) = delete;
    EventPair& operator=(const EventPair&) = delete;
    ~EventPair() {
        if (start) m_driver.eventDestroy(start);
        if (stop) m_driver.eventDestroy(stop);
    }
    CUresult create() {
        CUresult rc = m_driver.eventCreate(&start, 0);
        if (rc == kCudaSuccess) rc = m_driver.eventCreate(&stop, 0);
        return rc;
    }
    CUevent start = nullptr;
    CUevent stop = nullptr;

private:
    const CudaDriver& m_driver;
};

/// The kernel parameters of one launch: params[k] points at ptrs[k]. Moving keeps the pointers
/// valid (the vectors' storage moves with them); copying would not, so it is not allowed.
struct ArgSet {
    std::vector<CUdeviceptr> ptrs;
    std::vector<void*> params;

    explicit ArgSet(std::vector<CUdeviceptr> p) : ptrs(std::move(p)) {
        for (auto& x : ptrs) params.push_back(&x);
    }
    ArgSet(ArgSet&&) = default;
    ArgSet& operator=(ArgSet&&) = default;
    ArgSet(const ArgSet&) = delete;
    ArgSet& operator=(const ArgSet&) = delete;
    void** data() { return params.empty() ? nullptr : params.data(); }
};

/// The energy phase the runner aims for when a launch's timed phase was shorter (runner_protocol.h).
constexpr double kEnergyPhaseSeconds = 0.1;
/// The most launches of that extra phase.
constexpr std::int64_t kMaxEnergyLaunches = 1000000;

/// Times `unit(rep)` (one launch, or the whole sequence) as runner_protocol.h describes:
/// warm-up, then batches of launches between two events, each batch giving n samples of
/// elapsed / n seconds. Returns the first failing driver code (kCudaSuccess when all went well).
/// With a `meter`, the timed phase (after the warm-up has finished, up to the last batch's end)
/// is measured into `energy`; `nextRep` receives the rep count after the last call.
CUresult measureOnGpu(const CudaDriver& d, const EventPair& ev, const TimingRequest& t,
                      const std::function<CUresult(std::int64_t)>& unit, std::vector<double>& samples,
                      EnergyMeter* meter = nullptr, EnergyReading* energy = nullptr, std::int64_t* nextRep = nullptr) {
    std::int64_t rep = 0;
    for (int w = 0; w < t.warmup; ++w)
        if (const CUresult rc = unit(rep++); rc != kCudaSuccess) return rc;
    if (const CUresult rc = d.ctxSynchronize(); rc != kCudaSuccess) return rc;
    if (meter) meter->start();
    const auto maxReps = static_cast<std::int64_t>(t.maxReps);
    std::int64_t batch = 1;  // the first batch is a single launch: it estimates the launch's time
    double timed = 0;
    for (;;) {
        const std::int64_t n = std::max<std::int64_t>(1, std::min(batch, maxReps - static_cast<std::int64_t>(samples.size())));
        CUresult rc = d.eventRecord(ev.start, nullptr);
        for (std::int64_t k = 0; k < n && rc == kCudaSuccess; ++k) rc = unit(rep++);
        if (rc == kCudaSuccess) rc = d.eventRecord(ev.stop, nullptr);
        if (rc == kCudaSuccess) rc = d.eventSynchronize(ev.stop);
        float ms = 0;
        if (rc == kCudaSuccess) rc = d.eventElapsedTime(&ms, ev.start, ev.stop);
        if (rc != kCudaSuccess) return rc;
        const double seconds = static_cast<double>(ms) * 1e-3;
        const double per = seconds / static_cast<double>(n);
        samples.insert(samples.end(), static_cast<std::size_t>(n), per);
        timed += seconds;
        const auto count = static_cast<std::int64_t>(samples.size());
        if (count >= maxReps) break;
        if (count >= t.minReps && timed >= t.minSeconds) break;
        // The launches this measurement will take in all, and batches of a tenth of that (so
        // that there are >= 10 batches to take the median and quartiles over).
        double expected = static_cast<double>(std::max<std::int64_t>(t.minReps, 1));
        if (per > 0) expected = std::max(expected, std::ceil(t.minSeconds / per));
        expected = std::min(expected, static_cast<double>(maxReps));
        batch = std::max<std::int64_t>(1, static_cast<std::int64_t>(expected / 10));
    }
    if (meter && energy) *energy = meter->stop();
    if (nextRep) *nextRep = rep;
    return kCudaSuccess;
}

/// KernelEnergy from a phase of `calls` launches.
KernelEnergy kernelEnergy(const EnergyReading& r, std::int64_t calls) {
    KernelEnergy e;
    e.joulesPerCall = calls > 0 ? r.joules / static_cast<double>(calls) : 0;
    e.avgPowerWatts = r.avgWatts;
    e.method = energyMethodName(r.method);
    e.valid = r.valid && calls > 0;
    e.calls = calls;
    e.seconds = r.seconds;
    return e;
}

std::string oneLine(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    std::string out;
    for (char c : s) {
        if (c == '\n')
            out += "; ";
        else if (c != '\r')
            out += c;
    }
    return out;
}

}  // namespace

CudaRunner::~CudaRunner() {
    auto got = CudaDriver::get();
    if (!got) return;
    const CudaDriver& d = **got;
    for (auto& [ordinal, dev] : m_devices) {
        if (d.ctxSetCurrent(dev.context) == kCudaSuccess)
            for (auto& [path, mod] : dev.modules) d.moduleUnload(mod);
        d.devicePrimaryCtxRelease(dev.handle);
    }
    d.ctxSetCurrent(nullptr);
}

CudaRunner::Device* CudaRunner::device(const CudaDriver& d, int ordinal, std::string& error) {
    if (auto it = m_devices.find(ordinal); it != m_devices.end()) {
        if (const CUresult rc = d.ctxSetCurrent(it->second.context); rc != kCudaSuccess) {
            error = "cannot make the context of CUDA device " + std::to_string(ordinal) + " current: " + d.errorText(rc);
            return nullptr;
        }
        return &it->second;
    }
    auto devices = listCudaDevices();
    if (!devices) {
        error = devices.diagnostics().items().front().message;
        return nullptr;
    }
    if (ordinal < 0 || static_cast<std::size_t>(ordinal) >= devices->size()) {
        error = "no CUDA device " + std::to_string(ordinal) + " (the driver reports " + std::to_string(devices->size()) +
                (devices->size() == 1 ? " device)" : " devices)");
        return nullptr;
    }
    Device dev;
    dev.info = (*devices)[static_cast<std::size_t>(ordinal)];
    CUresult rc = d.deviceGet(&dev.handle, ordinal);
    if (rc == kCudaSuccess) rc = d.devicePrimaryCtxRetain(&dev.context, dev.handle);
    if (rc != kCudaSuccess) {
        error = "cannot create a context on CUDA device " + std::to_string(ordinal) + ": " + d.errorText(rc);
        return nullptr;
    }
    if (rc = d.ctxSetCurrent(dev.context); rc != kCudaSuccess) {
        d.devicePrimaryCtxRelease(dev.handle);
        error = "cannot make the context of CUDA device " + std::to_string(ordinal) + " current: " + d.errorText(rc);
        return nullptr;
    }
    // NVML's handle for the same GPU, by PCI bus id (CUDA_VISIBLE_DEVICES renumbers CUDA's
    // ordinals, not NVML's indices). Failing here only turns energy reporting off.
    if (auto nvml = Nvml::get(); !nvml) {
        dev.nvmlError = nvml.diagnostics().items().front().message;
    } else {
        char busId[64] = {};
        if (const CUresult br = d.deviceGetPCIBusId(busId, static_cast<int>(sizeof busId) - 1, dev.handle); br != kCudaSuccess) {
            dev.nvmlError = "cannot read the PCI bus id of CUDA device " + std::to_string(ordinal) + ": " + d.errorText(br);
        } else if (auto handle = (*nvml)->deviceByPciBusId(busId); !handle) {
            dev.nvmlError = handle.diagnostics().items().front().message;
        } else {
            dev.nvml = *handle;
        }
    }
    return &m_devices.emplace(ordinal, std::move(dev)).first->second;
}

CUmodule CudaRunner::module(const CudaDriver& d, Device& dev, const std::string& path, std::string& error) {
    if (auto it = dev.modules.find(path); it != dev.modules.end()) return it->second;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot read module '" + path + "': " + std::strerror(errno);
        return nullptr;
    }
    std::vector<char> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) {
        error = "cannot read module '" + path + "': read error";
        return nullptr;
    }
    // PTX is text that the driver reads up to a NUL; a cubin or fatbin is not affected by one more byte.
    image.push_back('\0');
    char log[8192] = {};
    int options[2] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes};
    void* values[2] = {log, reinterpret_cast<void*>(static_cast<std::uintptr_t>(sizeof log - 1))};
    CUmodule mod = nullptr;
    const CUresult rc = d.moduleLoadDataEx(&mod, image.data(), 2, options, values);
    if (rc != kCudaSuccess) {
        error = "cannot load module '" + path + "': " + d.errorText(rc);
        const std::string jitLog = oneLine(log);
        if (!jitLog.empty()) error += ": " + jitLog;
        return nullptr;
    }
    dev.modules[path] = mod;
    return mod;
}

json CudaRunner::run(const RunRequest& req, std::uint8_t* arena, const Emit& emit) {
    auto got = CudaDriver::get();
    if (!got) return failure(got.diagnostics().items().front().message);
    const CudaDriver& d = **got;

    std::string error;
    Device* dev = device(d, req.device, error);
    if (!dev) return failure(error);
    CUmodule mod = module(d, *dev, req.modulePath, error);
    if (!mod) return failure(error);

    // Whether a failed call left the context unusable: sticky codes always do; otherwise the
    // context is asked (a synchronize fails again after a fault).
    auto contextLost = [&](CUresult rc) { return isStickyCudaError(rc) || d.ctxSynchronize() != kCudaSuccess; };
    // The answer for a failed driver call outside a kernel launch.
    auto callFailed = [&](CUresult rc, const std::string& what) {
        if (contextLost(rc)) return fatal("the GPU context was lost while " + what + ": " + d.errorText(rc));
        return failure("error while " + what + ": " + d.errorText(rc));
    };

    std::vector<CUfunction> fns;
    for (const LaunchSpec& l : req.launches) {
        CUfunction f = nullptr;
        const CUresult rc = d.moduleGetFunction(&f, mod, l.entry.c_str());
        if (rc == kCudaErrorNotFound) return failure("entry '" + l.entry + "' not found in module '" + req.modulePath + "'");
        if (rc != kCudaSuccess) return callFailed(rc, "looking up entry '" + l.entry + "' in module '" + req.modulePath + "'");
        if (l.sharedBytes > kDefaultDynamicSharedLimit) {
            if (const CUresult sr = d.funcSetAttribute(f, kFuncAttrMaxDynamicSharedSizeBytes, static_cast<int>(l.sharedBytes));
                sr != kCudaSuccess) {
                if (contextLost(sr)) return callFailed(sr, "opting kernel '" + launchLabel(l) + "' in to shared memory");
                return failure("kernel '" + launchLabel(l) + "' cannot use " + std::to_string(l.sharedBytes) +
                               " bytes of dynamic shared memory (the device allows " +
                               std::to_string(dev->info.sharedPerBlockOptinBytes) + " per block): " + d.errorText(sr));
            }
        }
        fns.push_back(f);
    }

    // Device buffers, filled from the arena.
    DeviceMemory memory(d);
    std::vector<CUdeviceptr> buffers(req.buffers.size(), 0);
    for (std::size_t b = 0; b < req.buffers.size(); ++b) {
        const CUresult rc = memory.allocate(req.buffers[b].bytes, buffers[b]);
        if (rc != kCudaSuccess) {
            if (contextLost(rc)) return callFailed(rc, "allocating GPU memory");
            return failure("cannot allocate " + std::to_string(req.buffers[b].bytes) + " bytes on the GPU for buffer " +
                           std::to_string(b) + ": " + d.errorText(rc));
        }
    }
    for (std::size_t b = 0; b < req.buffers.size(); ++b) {
        if (req.buffers[b].bytes <= 0) continue;
        const CUresult rc = d.memcpyHtoD(buffers[b], arena + req.buffers[b].offset, static_cast<std::size_t>(req.buffers[b].bytes));
        if (rc != kCudaSuccess) return callFailed(rc, "copying buffer " + std::to_string(b) + " to the GPU");
    }
    auto argsOf = [&](std::size_t i) {
        std::vector<CUdeviceptr> p;
        for (int b : req.launches[i].args) p.push_back(buffers[static_cast<std::size_t>(b)]);
        return ArgSet(std::move(p));
    };
    std::vector<ArgSet> baseArgs;
    for (std::size_t i = 0; i < req.launches.size(); ++i) baseArgs.push_back(argsOf(i));

    auto launch = [&](std::size_t i, ArgSet& args) {
        const LaunchSpec& l = req.launches[i];
        return d.launchKernel(fns[i], static_cast<unsigned int>(l.grid), 1, 1, static_cast<unsigned int>(l.block), 1, 1,
                              static_cast<unsigned int>(l.sharedBytes), nullptr, args.data(), nullptr);
    };
    // The answer for launch i failing with rc (at launch or at the synchronize after it).
    auto launchFailed = [&](std::size_t i, CUresult rc) {
        const LaunchSpec& l = req.launches[i];
        if (contextLost(rc)) return fatal("kernel '" + launchLabel(l) + "' faulted on the GPU: " + d.errorText(rc));
        json answer = failure("kernel '" + launchLabel(l) + "' could not be launched (grid " + std::to_string(l.grid) +
                              ", block " + std::to_string(l.block) + ", shared " + std::to_string(l.sharedBytes) +
                              " bytes): " + d.errorText(rc));
        answer["code"] = kRunnerCodeKernelLaunchFailed;
        return answer;
    };

    // 1. The checked pass; then the results go back to the arena.
    for (std::size_t i = 0; i < req.launches.size(); ++i) {
        emit({{"event", "launch"}, {"index", i}});
        CUresult rc = launch(i, baseArgs[i]);
        if (rc == kCudaSuccess) rc = d.ctxSynchronize();
        if (rc != kCudaSuccess) return launchFailed(i, rc);
    }
    for (std::size_t b = 0; b < req.buffers.size(); ++b) {
        if (req.buffers[b].bytes <= 0) continue;
        const CUresult rc = d.memcpyDtoH(arena + req.buffers[b].offset, buffers[b], static_cast<std::size_t>(req.buffers[b].bytes));
        if (rc != kCudaSuccess) return callFailed(rc, "copying buffer " + std::to_string(b) + " from the GPU");
    }

    RunResult result;
    result.device = dev->info;
    if (!req.timing.time) return runResultToJson(result);
    result.timed = true;

    // 2. Each launch on its own, on the device buffers (the arena already holds the results).
    std::optional<EnergyMeter> meter;
    if (dev->nvml) {
        auto nvml = Nvml::get();  // loaded when the device was first used
        if (nvml) meter.emplace(**nvml, dev->nvml);
        if (meter && meter->method() == EnergyMethod::None) meter.reset();
    }
    EventPair events(d);
    if (const CUresult rc = events.create(); rc != kCudaSuccess) return callFailed(rc, "creating CUDA events");
    const std::int64_t rotateBytes = req.rotateBytes < 0 ? 2 * dev->info.l2Bytes : req.rotateBytes;
    std::int64_t memoryCap = kRotationMemoryCap;
    {
        std::size_t freeBytes = 0, totalBytes = 0;
        if (const CUresult rc = d.memGetInfo(&freeBytes, &totalBytes); rc != kCudaSuccess)
            return callFailed(rc, "asking for the free GPU memory");
        memoryCap = std::min<std::int64_t>(memoryCap, static_cast<std::int64_t>(freeBytes / 4));
    }
    for (std::size_t i = 0; i < req.launches.size(); ++i) {
        emit({{"event", "time"}, {"index", i}});
        const LaunchSpec& l = req.launches[i];
        std::vector<int> ids;  // the distinct buffers of the launch
        for (int b : l.args)
            if (std::find(ids.begin(), ids.end(), b) == ids.end()) ids.push_back(b);
        std::vector<std::int64_t> sizes;
        std::int64_t launchBytes = 0;
        for (int b : ids) {
            sizes.push_back(req.buffers[static_cast<std::size_t>(b)].bytes);
            launchBytes += sizes.back();
        }
        int copies = rotationCopies(launchBytes, rotateBytes, kMaxRotatedCopies, memoryCap);
        // Copy 0 is the buffers themselves; copy c > 0 holds all of them in one allocation.
        DeviceMemory rotation(d);
        std::vector<ArgSet> sets;
        sets.push_back(argsOf(i));
        std::int64_t blockBytes = 0;
        const std::vector<BufferSpec> placed = layoutBuffers(sizes, blockBytes, 256);
        for (int c = 1; c < copies; ++c) {
            CUdeviceptr block = 0;
            if (const CUresult rc = rotation.allocate(blockBytes, block); rc != kCudaSuccess) {
                if (contextLost(rc)) return callFailed(rc, "allocating rotation copies");
                copies = c;  // out of memory: rotate through fewer copies
                break;
            }
            for (std::size_t k = 0; k < ids.size(); ++k) {
                if (placed[k].bytes <= 0) continue;
                const CUresult rc = d.memcpyDtoD(block + static_cast<CUdeviceptr>(placed[k].offset),
                                                 buffers[static_cast<std::size_t>(ids[k])], static_cast<std::size_t>(placed[k].bytes));
                if (rc != kCudaSuccess) return callFailed(rc, "making rotation copies");
            }
            std::vector<CUdeviceptr> p;
            for (int b : l.args) {
                const auto k = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), b) - ids.begin());
                p.push_back(block + static_cast<CUdeviceptr>(placed[k].offset));
            }
            sets.emplace_back(std::move(p));
        }
        std::vector<double> samples;
        auto unit = [&](std::int64_t rep) {
            return launch(i, sets[static_cast<std::size_t>(rep % static_cast<std::int64_t>(sets.size()))]);
        };
        EnergyReading energy;
        std::int64_t nextRep = 0;
        const CUresult rc = measureOnGpu(d, events, req.timing, unit, samples, meter ? &*meter : nullptr, &energy, &nextRep);
        if (rc != kCudaSuccess) return launchFailed(i, rc);
        KernelTiming timing{launchLabel(l), computeTimingStats(samples), static_cast<int>(sets.size()), std::nullopt};
        if (meter) {
            std::int64_t calls = static_cast<std::int64_t>(samples.size());
            if (energy.method != EnergyMethod::None && energy.seconds < kEnergyPhaseSeconds && timing.stats.median > 0) {
                // The timed phase ended early (max_reps): too short for the energy counter.
                // Launch the kernel again, untimed, for about kEnergyPhaseSeconds and measure that.
                const double target = std::max(kEnergyPhaseSeconds, req.timing.minSeconds);
                calls = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(target / timing.stats.median)), 1,
                                                 kMaxEnergyLaunches);
                meter->start();
                CUresult er = kCudaSuccess;
                for (std::int64_t k = 0; k < calls && er == kCudaSuccess; ++k) er = unit(nextRep++);
                if (er == kCudaSuccess) er = d.ctxSynchronize();
                energy = meter->stop();
                if (er != kCudaSuccess) return launchFailed(i, er);
            }
            if (energy.method != EnergyMethod::None) timing.energy = kernelEnergy(energy, calls);
        }
        result.kernels.push_back(std::move(timing));
    }

    // 3. The whole sequence end to end.
    emit({{"event", "time_total"}});
    std::size_t failedLaunch = req.launches.size();
    std::vector<double> totalSamples;
    const CUresult rc = measureOnGpu(d, events, req.timing, [&](std::int64_t) {
        for (std::size_t i = 0; i < req.launches.size(); ++i)
            if (const CUresult r = launch(i, baseArgs[i]); r != kCudaSuccess) {
                failedLaunch = i;
                return r;
            }
        return kCudaSuccess;
    }, totalSamples);
    if (rc != kCudaSuccess) {
        if (failedLaunch < req.launches.size()) return launchFailed(failedLaunch, rc);
        if (contextLost(rc)) return fatal("a kernel faulted on the GPU during the end-to-end timing: " + d.errorText(rc));
        return failure("the end-to-end timing failed: " + d.errorText(rc));
    }
    result.total = computeTimingStats(totalSamples);
    return runResultToJson(result);
}

}  // namespace tessera::runtime::cuda
