#pragma once
/// @file
/// Where Run sends the model: the entries of the window's target selector (the Run toolbar's
/// combo box and Run > Target), made from the answer of the start-up CUDA device probe
/// (RunSession::probeDevices, the runner's `devices` request), and how each entry sets up a run.
///
/// Entries, in order:
/// - "CPU" (id "cpu"): OpenMP C++ compiled by the host compiler, run in tessera-runner;
/// - one per CUDA device the runner reports, "CUDA 0: NVIDIA H200 (sm_90)" (id "cuda:0"): CUDA C
///   compiled by NVRTC for that device's architecture, run by the runner on that device;
/// - when the probe found no driver or no device (or failed), "CUDA (compile only, sm_90)"
///   (id "cuda-compile"): CUDA C compiled to PTX for kCompileOnlyArch, nothing run; its tooltip
///   says why (the probe's error, e.g. "no CUDA driver found (libcuda.so.1: ...)");
/// - before the probe answered, a disabled "CUDA: looking for devices..." (id "cuda-probing").
///
/// Thread rules: pure; any thread.

#include <string>
#include <vector>

#include <QString>

#include "core/pipeline/run.h"

namespace tessera::app {

struct RunSettings;

/// The architecture PTX is made for when no device is there to ask.
inline constexpr const char* kCompileOnlyArch = "sm_90";

/// What the start-up probe found.
struct DeviceProbe {
    bool answered = false;                          ///< false until the probe finished
    std::vector<runtime::cuda::CudaDeviceInfo> devices;
    QString error;                                  ///< the probe's first error (empty on success)
};

struct RunTarget {
    enum class Kind { Cpu, CudaDevice, CudaCompileOnly, Probing };
    Kind kind = Kind::Cpu;
    int device = 0;   ///< CudaDevice: the ordinal
    QString arch;     ///< CUDA kinds: "sm_90"
    QString id;       ///< "cpu", "cuda:0", "cuda-compile", "cuda-probing" (stored in QSettings)
    QString label;    ///< as listed
    QString toolTip;  ///< what it does (and, for compile only, why nothing runs)
    QString shortName;  ///< for the Run action and status bar: "CPU", "CUDA 0", "CUDA, compile only"

    bool isCuda() const { return kind == Kind::CudaDevice || kind == Kind::CudaCompileOnly; }
    bool selectable() const { return kind != Kind::Probing; }
};

/// The selector's entries for a probe's answer (see the file comment).
std::vector<RunTarget> runTargets(const DeviceProbe& probe);

/// Index in `targets` of the entry to select for `id` (a stored or requested choice): the entry
/// with that id; for "cuda" (any CUDA target) or a CUDA id that is no longer listed, the first
/// selectable CUDA entry; otherwise (unknown or empty id) the CPU entry, 0.
int targetIndexFor(const std::vector<RunTarget>& targets, const QString& id);

/// Why a compile-only target runs nothing, for the status line: "no CUDA driver found",
/// "no CUDA device found" or, for other probe errors, "CUDA devices unavailable".
QString compileOnlyReason(const DeviceProbe& probe);

/// Sets the compile target and the run's CUDA device and architecture for `target`
/// (compile only: RunSettings::cudaCompileOnly).
void applyTarget(const RunTarget& target, RunSettings& settings);

}  // namespace tessera::app
