#include "core/pipeline/toolchain.h"

#include "core/runtime/cuda/cuda_version.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/runtime/host_jit.h"

namespace tessera::pipeline {

int availableCores() { return runtime::availableCores(); }

std::string defaultHostCompiler() { return runtime::defaultHostCompiler(); }

std::vector<std::string> defaultHostCompilerFlags() { return runtime::HostCompilerOptions().flags; }

support::Expected<std::string> hostCompilerVersion(const std::string& compiler) {
    return runtime::hostCompilerVersion(compiler);
}

support::Expected<NvrtcVersion> nvrtcVersion() {
    auto info = runtime::cuda::nvrtcInfo();
    if (!info.ok()) return info.diagnostics();
    return NvrtcVersion{std::to_string(info->major) + "." + std::to_string(info->minor), info->path};
}

support::Expected<std::string> cudaDriverVersion() {
    auto version = runtime::cuda::cudaDriverVersion();
    if (!version.ok()) return version.diagnostics();
    return runtime::cuda::formatCudaVersion(*version);
}

std::string defaultKernelCacheDir() { return runtime::defaultKernelCacheDir(); }

std::string defaultCudaCacheDir() { return runtime::cuda::defaultCudaCacheDir(); }

support::Expected<std::int64_t> clearKernelCache(const std::string& dir) { return runtime::clearKernelCache(dir); }

support::Expected<std::int64_t> clearCudaCache(const std::string& dir) { return runtime::cuda::clearCudaCache(dir); }

}  // namespace tessera::pipeline
