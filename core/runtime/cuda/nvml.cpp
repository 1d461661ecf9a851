#include "core/runtime/cuda/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <type_traits>

namespace tessera::runtime::cuda {

namespace {

support::DiagnosticList errorList(const std::string& message) {
    support::DiagnosticList d;
    d.error("", "", message);
    return d;
}

/// nvmlReturn_t names (nvml.h), for the messages.
const char* nvmlErrorName(NvmlReturn code) {
    switch (code) {
        case 0: return "NVML_SUCCESS";
        case 1: return "NVML_ERROR_UNINITIALIZED";
        case 2: return "NVML_ERROR_INVALID_ARGUMENT";
        case 3: return "NVML_ERROR_NOT_SUPPORTED";
        case 4: return "NVML_ERROR_NO_PERMISSION";
        case 5: return "NVML_ERROR_ALREADY_INITIALIZED";
        case 6: return "NVML_ERROR_NOT_FOUND";
        case 7: return "NVML_ERROR_INSUFFICIENT_SIZE";
        case 8: return "NVML_ERROR_INSUFFICIENT_POWER";
        case 9: return "NVML_ERROR_DRIVER_NOT_LOADED";
        case 10: return "NVML_ERROR_TIMEOUT";
        case 11: return "NVML_ERROR_IRQ_ISSUE";
        case 12: return "NVML_ERROR_LIBRARY_NOT_FOUND";
        case 13: return "NVML_ERROR_FUNCTION_NOT_FOUND";
        case 14: return "NVML_ERROR_CORRUPTED_INFOROM";
        case 15: return "NVML_ERROR_GPU_IS_LOST";
        case 16: return "NVML_ERROR_RESET_REQUIRED";
        case 17: return "NVML_ERROR_OPERATING_SYSTEM";
        case 18: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
        case 19: return "NVML_ERROR_IN_USE";
        case 20: return "NVML_ERROR_MEMORY";
        case 21: return "NVML_ERROR_NO_DATA";
        case 999: return "NVML_ERROR_UNKNOWN";
        default: return nullptr;
    }
}

double steadySeconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

support::Expected<std::unique_ptr<Nvml>> Nvml::load(const std::string& libraryName) {
    ::dlerror();
    void* handle = ::dlopen(libraryName.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* e = ::dlerror();
        return errorList("NVML not found (" + std::string(e ? e : libraryName + ": cannot be opened") + ")");
    }
    // Never dlclose'd on success: NVML stays loaded and initialised for the life of the process.
    std::unique_ptr<Nvml> n(new Nvml);
    n->libraryName = libraryName;
    std::string missing;
    auto resolve = [&](auto& fn, const char* symbol, bool required) {
        void* p = ::dlsym(handle, symbol);
        if (!p) {
            if (required && missing.empty()) missing = symbol;
            return;
        }
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    resolve(n->init, "nvmlInit_v2", true);
    resolve(n->errorString, "nvmlErrorString", true);
    resolve(n->deviceGetHandleByPciBusId, "nvmlDeviceGetHandleByPciBusId_v2", true);
    resolve(n->deviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2", true);
    resolve(n->deviceGetPowerUsage, "nvmlDeviceGetPowerUsage", true);
    resolve(n->deviceGetTotalEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption", false);
    resolve(n->deviceGetName, "nvmlDeviceGetName", false);
    if (!missing.empty()) {
        ::dlclose(handle);
        return errorList("the NVML library '" + libraryName + "' lacks " + missing + " (driver too old?)");
    }
    if (const NvmlReturn rc = n->init(); rc != kNvmlSuccess) {
        std::string text = n->errorText(rc);
        ::dlclose(handle);
        return errorList("NVML found but nvmlInit failed: " + text);
    }
    return n;
}

support::Expected<const Nvml*> Nvml::get() {
    struct Outcome {
        std::unique_ptr<Nvml> nvml;
        std::string error;
    };
    static const Outcome outcome = [] {
        std::string name = "libnvidia-ml.so.1";
        if (const char* env = std::getenv("TESSERA_NVML_LIBRARY"); env && *env) name = env;
        auto loaded = load(name);
        Outcome o;
        if (loaded)
            o.nvml = std::move(*loaded);
        else
            o.error = loaded.diagnostics().items().front().message;
        return o;
    }();
    if (!outcome.nvml) return errorList(outcome.error);
    return static_cast<const Nvml*>(outcome.nvml.get());
}

std::string Nvml::errorText(NvmlReturn code) const {
    const char* name = nvmlErrorName(code);
    std::string out = name ? std::string(name) : "NVML error " + std::to_string(code);
    const char* text = errorString ? errorString(code) : nullptr;
    if (text && *text) out += std::string(" (") + text + ")";
    return out;
}

support::Expected<NvmlDevice> Nvml::deviceByPciBusId(const std::string& pciBusId) const {
    NvmlDevice dev = nullptr;
    const NvmlReturn rc = deviceGetHandleByPciBusId(pciBusId.c_str(), &dev);
    if (rc != kNvmlSuccess) return errorList("NVML cannot find the GPU at PCI bus id " + pciBusId + ": " + errorText(rc));
    return dev;
}

support::Expected<std::uint64_t> Nvml::totalEnergyMillijoules(NvmlDevice device) const {
    if (!deviceGetTotalEnergyConsumption)
        return errorList("NVML cannot read the total energy of the GPU: the library '" + libraryName +
                         "' lacks nvmlDeviceGetTotalEnergyConsumption");
    unsigned long long mj = 0;
    const NvmlReturn rc = deviceGetTotalEnergyConsumption(device, &mj);
    if (rc != kNvmlSuccess) return errorList("NVML cannot read the total energy of the GPU: " + errorText(rc));
    return static_cast<std::uint64_t>(mj);
}

support::Expected<std::uint32_t> Nvml::powerMilliwatts(NvmlDevice device) const {
    unsigned int mw = 0;
    const NvmlReturn rc = deviceGetPowerUsage(device, &mw);
    if (rc != kNvmlSuccess) return errorList("NVML cannot read the power of the GPU: " + errorText(rc));
    return static_cast<std::uint32_t>(mw);
}

const char* energyMethodName(EnergyMethod m) {
    switch (m) {
        case EnergyMethod::Counter: return "nvml-energy-counter";
        case EnergyMethod::PowerSamples: return "nvml-power-samples";
        case EnergyMethod::None: break;
    }
    return "";
}

EnergyMethod energyMethodFromName(const std::string& name) {
    if (name == "nvml-energy-counter") return EnergyMethod::Counter;
    if (name == "nvml-power-samples") return EnergyMethod::PowerSamples;
    return EnergyMethod::None;
}

double integratePowerSamples(const std::vector<PowerSample>& samples, double t0, double t1) {
    if (samples.empty() || !(t1 > t0)) return 0;
    // The power at time t: held before the first and after the last sample, linear between.
    auto powerAt = [&](double t) {
        if (t <= samples.front().seconds) return samples.front().watts;
        if (t >= samples.back().seconds) return samples.back().watts;
        auto hi = std::upper_bound(samples.begin(), samples.end(), t,
                                   [](double x, const PowerSample& s) { return x < s.seconds; });
        auto lo = hi - 1;
        const double span = hi->seconds - lo->seconds;
        if (span <= 0) return hi->watts;
        return lo->watts + (hi->watts - lo->watts) * (t - lo->seconds) / span;
    };
    // Breakpoints: t0, the samples strictly inside (t0, t1), t1; trapezoids between them are exact
    // for the piecewise-linear power above.
    std::vector<double> ts{t0};
    for (const PowerSample& s : samples)
        if (s.seconds > t0 && s.seconds < t1) ts.push_back(s.seconds);
    ts.push_back(t1);
    double joules = 0;
    for (std::size_t k = 1; k < ts.size(); ++k) joules += 0.5 * (powerAt(ts[k - 1]) + powerAt(ts[k])) * (ts[k] - ts[k - 1]);
    return joules;
}

EnergyMeter::EnergyMeter(const Nvml& nvml, NvmlDevice device) : m_nvml(nvml), m_device(device) {
    auto energy = m_nvml.totalEnergyMillijoules(m_device);
    if (energy) {
        m_method = EnergyMethod::Counter;
        return;
    }
    auto power = m_nvml.powerMilliwatts(m_device);
    if (power) {
        m_method = EnergyMethod::PowerSamples;
        return;
    }
    m_error = power.diagnostics().items().front().message;
}

EnergyMeter::~EnergyMeter() { stopSampler(); }

void EnergyMeter::stopSampler() {
    if (!m_sampler.joinable()) return;
    m_stopSampler.store(true);
    m_sampler.join();
}

void EnergyMeter::start() {
    stopSampler();
    m_samples.clear();
    m_startError.clear();
    m_running = true;
    if (m_method == EnergyMethod::Counter) {
        auto e = m_nvml.totalEnergyMillijoules(m_device);
        if (e)
            m_startMj = *e;
        else
            m_startError = e.diagnostics().items().front().message;
        m_t0 = steadySeconds();
    } else if (m_method == EnergyMethod::PowerSamples) {
        m_t0 = steadySeconds();
        m_stopSampler.store(false);
        m_sampler = std::thread([this] {
            const auto period = std::chrono::duration<double>(kPowerSamplePeriodSeconds);
            auto next = std::chrono::steady_clock::now();
            for (;;) {
                unsigned int mw = 0;
                if (m_nvml.deviceGetPowerUsage(m_device, &mw) == kNvmlSuccess)
                    m_samples.push_back({steadySeconds(), static_cast<double>(mw) * 1e-3});
                if (m_stopSampler.load()) break;
                next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
                std::this_thread::sleep_until(next);
            }
        });
    }
}

EnergyReading EnergyMeter::stop() {
    EnergyReading r;
    if (!m_running) {
        stopSampler();
        r.error = m_method == EnergyMethod::None ? m_error : "energy phase stopped without being started";
        return r;
    }
    m_running = false;
    if (m_method == EnergyMethod::None) {
        r.error = m_error;
        return r;
    }
    if (m_method == EnergyMethod::Counter) {
        auto e = m_nvml.totalEnergyMillijoules(m_device);
        const double t1 = steadySeconds();
        if (!m_startError.empty()) {
            r.error = m_startError;
            return r;
        }
        if (!e) {
            r.error = e.diagnostics().items().front().message;
            return r;
        }
        r.method = EnergyMethod::Counter;
        r.seconds = t1 - m_t0;
        // The counter never goes back; a smaller value would mean a driver reload in between.
        const std::uint64_t delta = *e >= m_startMj ? *e - m_startMj : 0;
        r.joules = static_cast<double>(delta) * 1e-3;
        r.valid = delta > 0 && r.seconds >= kMinEnergyPhaseSeconds;
    } else {
        stopSampler();  // the sampler takes one last reading after the stop request
        const double t1 = steadySeconds();
        r.seconds = t1 - m_t0;
        if (m_samples.empty()) {
            r.error = "NVML gave no power reading during the phase";
            return r;
        }
        r.method = EnergyMethod::PowerSamples;
        r.joules = integratePowerSamples(m_samples, m_t0, t1);
        r.valid = m_samples.size() >= 2 && r.joules > 0 && r.seconds >= kMinEnergyPhaseSeconds;
    }
    r.avgWatts = r.seconds > 0 ? r.joules / r.seconds : 0;
    return r;
}

}  // namespace tessera::runtime::cuda
