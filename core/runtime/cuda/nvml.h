#pragma once
/// @file
/// NVML (the NVIDIA Management Library), loaded at run time, for the GPU's power and energy
/// readings while the runner times kernels. Like the driver (cuda_driver.h), Tessera never links
/// it: every binary starts on a machine without it, and energy is then simply not reported.
///
/// Nvml::get() dlopen()s "libnvidia-ml.so.1" (RTLD_NOW | RTLD_LOCAL) once per process, resolves
/// the entry points below by their exact versioned symbol names (nvmlInit_v2,
/// nvmlDeviceGetHandleByPciBusId_v2, ...) and calls nvmlInit_v2(); it never calls nvmlShutdown
/// (the library stays loaded and initialised for the life of the process). The environment
/// variable TESSERA_NVML_LIBRARY, when set, names the library to open instead. Nvml::load() does
/// the same for a given name without caching (tests point it at a missing file or at a library
/// that lacks the symbols).
///
/// The types and values declared here follow NVML's C ABI (nvml.h); core/ includes no NVIDIA
/// header.
///
/// Units: energy in millijoules (nvmlDeviceGetTotalEnergyConsumption: the energy the device used
/// since the driver was last loaded; Volta and newer), power in milliwatts
/// (nvmlDeviceGetPowerUsage; on Ampere and newer the driver reports a moving average over about a
/// second, on older GPUs a near-instantaneous reading).
///
/// Errors (support::Expected, one diagnostic):
/// - "NVML not found (libnvidia-ml.so.1: cannot open shared object file: No such file or directory)"
///   (the text in parentheses is dlerror()'s);
/// - "the NVML library 'X' lacks nvmlInit_v2 (driver too old?)";
/// - "NVML found but nvmlInit failed: NVML_ERROR_DRIVER_NOT_LOADED (Driver Not Loaded)";
/// - device and reading errors: "NVML cannot find the GPU at PCI bus id 0000:3b:00.0:
///   NVML_ERROR_NOT_FOUND (Not Found)", "NVML cannot read the total energy of the GPU:
///   NVML_ERROR_NOT_SUPPORTED (Not Supported)", "... the power of the GPU: ...".
///
/// Thread rules: get() is safe from any thread (the load happens once); the returned table is
/// immutable, and NVML's calls are thread-safe, so the readings may be taken from any thread
/// (EnergyMeter samples power on a thread of its own). An EnergyMeter is used by one thread at a
/// time.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/support/expected.h"

namespace tessera::runtime::cuda {

// ---- NVML C ABI (the names and values of nvml.h) ----
using NvmlReturn = int;                     ///< nvmlReturn_t
using NvmlDevice = struct NvmlDevice_st*;   ///< nvmlDevice_t (an opaque handle)

inline constexpr NvmlReturn kNvmlSuccess = 0;
inline constexpr NvmlReturn kNvmlErrorNotSupported = 3;
inline constexpr NvmlReturn kNvmlErrorNotFound = 6;

/// The NVML entry points Tessera uses, each named after its C function without the "nvml"
/// prefix (deviceGetHandleByPciBusId holds the symbol nvmlDeviceGetHandleByPciBusId_v2). The
/// required ones are non-null in a table returned by get() or load(); the optional ones
/// (deviceGetTotalEnergyConsumption, deviceGetName) may be null in an old library.
class Nvml {
public:
    /// The process's NVML, loaded and initialised on first use ("libnvidia-ml.so.1" or
    /// $TESSERA_NVML_LIBRARY); the error (see the file comment) is the same on every call.
    static support::Expected<const Nvml*> get();
    /// Opens `libraryName`, resolves the symbols and calls nvmlInit_v2, without caching: each call
    /// opens the library again (dlopen counts references) and returns a new table. For tests and
    /// tools; the runner uses get().
    static support::Expected<std::unique_ptr<Nvml>> load(const std::string& libraryName);

    /// The library that was opened.
    std::string libraryName;

    // Required.
    NvmlReturn (*init)() = nullptr;                                                            ///< nvmlInit_v2
    const char* (*errorString)(NvmlReturn result) = nullptr;                                   ///< nvmlErrorString
    NvmlReturn (*deviceGetHandleByPciBusId)(const char* pciBusId, NvmlDevice* device) = nullptr;  ///< _v2
    NvmlReturn (*deviceGetHandleByIndex)(unsigned int index, NvmlDevice* device) = nullptr;     ///< _v2
    NvmlReturn (*deviceGetPowerUsage)(NvmlDevice device, unsigned int* milliwatts) = nullptr;
    // Optional (null when the library lacks them).
    NvmlReturn (*deviceGetTotalEnergyConsumption)(NvmlDevice device, unsigned long long* millijoules) = nullptr;
    NvmlReturn (*deviceGetName)(NvmlDevice device, char* name, unsigned int length) = nullptr;

    /// "NVML_ERROR_NOT_SUPPORTED (Not Supported)": Tessera's name of `code` (else "NVML error N")
    /// and the library's description when it gives one.
    std::string errorText(NvmlReturn code) const;

    /// The device at PCI bus id `pciBusId` ("0000:3b:00.0", as cuDeviceGetPCIBusId writes it; NVML
    /// reads the numbers as hexadecimal, so the 4- and 8-digit domain spellings both match).
    /// Matching by bus id rather than by index keeps CUDA's and NVML's numbering apart
    /// (CUDA_VISIBLE_DEVICES renumbers CUDA's devices only).
    support::Expected<NvmlDevice> deviceByPciBusId(const std::string& pciBusId) const;
    /// The device's energy counter, millijoules since the driver was loaded. Errors: the library
    /// lacks the call, or the device does not support it (before Volta): "NVML cannot read the
    /// total energy of the GPU: NVML_ERROR_NOT_SUPPORTED (Not Supported)".
    support::Expected<std::uint64_t> totalEnergyMillijoules(NvmlDevice device) const;
    /// The device's power draw, milliwatts (see the file comment for what the reading averages).
    support::Expected<std::uint32_t> powerMilliwatts(NvmlDevice device) const;

private:
    Nvml() = default;
};

/// How an energy figure was measured (the wire names of the runner protocol).
enum class EnergyMethod {
    None,          ///< not measured
    Counter,       ///< "nvml-energy-counter": the total-energy counter read before and after
    PowerSamples,  ///< "nvml-power-samples": power sampled every few ms and integrated
};
/// "nvml-energy-counter", "nvml-power-samples", "" for None.
const char* energyMethodName(EnergyMethod m);
/// The inverse; an unknown name gives None.
EnergyMethod energyMethodFromName(const std::string& name);

/// One power reading: `seconds` since some fixed origin, `watts`.
struct PowerSample {
    double seconds = 0;
    double watts = 0;
};

/// Joules from power samples over [t0, t1] by the trapezoidal rule between consecutive samples;
/// the power before the first sample and after the last is held constant (so one sample gives
/// watts x (t1 - t0)). Samples outside [t0, t1] are clipped to it; samples must be in time order.
/// 0 when there are no samples or t1 <= t0.
double integratePowerSamples(const std::vector<PowerSample>& samples, double t0, double t1);

/// The energy the device used over one measured phase.
struct EnergyReading {
    EnergyMethod method = EnergyMethod::None;  ///< None: not measured (`error` says why)
    double joules = 0;         ///< over the whole phase
    double seconds = 0;        ///< the phase's wall-clock length (steady_clock)
    double avgWatts = 0;       ///< joules / seconds
    /// Whether the figure can be trusted: false when the phase was shorter than
    /// kMinEnergyPhaseSeconds, when the counter did not move (it updates every ~10-100 ms), or
    /// when fewer than two power samples were taken.
    bool valid = false;
    std::string error;         ///< why a reading failed (method None)
};

/// Shortest phase whose energy is reported valid: the counter's update period (~10-100 ms,
/// device dependent) makes shorter phases mostly quantisation.
inline constexpr double kMinEnergyPhaseSeconds = 0.05;
/// Power sampling period of the fallback (devices without the energy counter).
inline constexpr double kPowerSamplePeriodSeconds = 0.005;

/// Measures a device's energy over phases delimited by start() and stop(): the total-energy
/// counter before and after when the device has one, else power sampled on a thread of its own
/// every kPowerSamplePeriodSeconds and integrated (integratePowerSamples).
///
/// Resolution: the counter advances in steps (every ~10-100 ms depending on the GPU and driver),
/// so a phase of T seconds is off by up to about one step at each end: keep phases well above
/// kMinEnergyPhaseSeconds (the runner measures over >= 0.1 s). Power samples on Ampere and newer
/// are ~1 s moving averages, which is why the counter is preferred.
///
/// Thread rules: one thread calls start()/stop(); the sampler thread is owned and joined by stop()
/// and the destructor.
class EnergyMeter {
public:
    /// Picks the method: the counter when a first read succeeds, else power samples when a first
    /// power read succeeds, else none (method() None; start/stop then return None readings whose
    /// error is the last NVML error).
    EnergyMeter(const Nvml& nvml, NvmlDevice device);
    EnergyMeter(const EnergyMeter&) = delete;
    EnergyMeter& operator=(const EnergyMeter&) = delete;
    ~EnergyMeter();

    EnergyMethod method() const { return m_method; }
    /// Begins a phase (a phase already running is discarded).
    void start();
    /// Ends the phase begun by start() and returns its energy (method None with `error` set when
    /// a read failed, or when start() was not called).
    EnergyReading stop();

private:
    void stopSampler();

    const Nvml& m_nvml;
    NvmlDevice m_device;
    EnergyMethod m_method = EnergyMethod::None;
    std::string m_error;
    bool m_running = false;
    double m_t0 = 0;
    std::uint64_t m_startMj = 0;
    std::string m_startError;
    std::thread m_sampler;
    std::atomic<bool> m_stopSampler{false};
    std::vector<PowerSample> m_samples;  ///< written by the sampler thread until it is joined
};

}  // namespace tessera::runtime::cuda
