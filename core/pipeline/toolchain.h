#pragma once
/// @file
/// The tools a run builds kernels with, and where their output is cached: what the CLI's
/// defaults, the About dialog and the Preferences dialog show and manage. Facts are asked from
/// the tools themselves (core/runtime/host_jit.h, core/runtime/cuda/nvrtc.h,
/// core/runtime/cuda/cuda_version.h); nothing here starts a run.
///
/// Errors are those of the tool asked: "host compiler 'c++' not found: ...", "NVRTC not found
/// (...)", "no CUDA driver found (...)", a cache folder that cannot be listed.
/// Thread rules: any thread; versions are cached per process after the first answer.

#include <cstdint>
#include <string>
#include <vector>

#include "core/support/expected.h"

namespace tessera::pipeline {

/// The cores this process may run on (its affinity mask: taskset, cpusets), at least 1: the
/// thread count runs default to.
int availableCores();

/// The host compiler runs use when none is given: $TESSERA_CXX when set and non-empty, else "c++".
std::string defaultHostCompiler();

/// The flags the host compiler gets when none are given ("-O3 -march=native -fopenmp -shared
/// -fPIC"), in order.
std::vector<std::string> defaultHostCompilerFlags();

/// First line of `<compiler> --version`.
support::Expected<std::string> hostCompilerVersion(const std::string& compiler);

/// The NVRTC library runs compile CUDA kernels with.
struct NvrtcVersion {
    std::string version;  ///< "major.minor", e.g. "13.0"
    std::string path;     ///< the shared object loaded
};
support::Expected<NvrtcVersion> nvrtcVersion();

/// The CUDA driver's version as "major.minor" ("12.8"), asked without initialising CUDA.
support::Expected<std::string> cudaDriverVersion();

/// Default cache folders of compiled CPU kernels and of NVRTC's output
/// ($XDG_CACHE_HOME/tessera/kernels and .../cuda, else under $HOME/.cache, else the temp folder).
std::string defaultKernelCacheDir();
std::string defaultCudaCacheDir();

/// Removes the files the CPU kernel cache (resp. the NVRTC cache) writes from `dir`, leaving
/// anything else there alone. Returns how many files were removed (0 when `dir` does not exist).
support::Expected<std::int64_t> clearKernelCache(const std::string& dir);
support::Expected<std::int64_t> clearCudaCache(const std::string& dir);

}  // namespace tessera::pipeline
