#include "core/runtime/cuda/cuda_version.h"

#include <dlfcn.h>

#include <cstdlib>

#include "core/runtime/cuda/cuda_driver.h"

namespace tessera::runtime::cuda {
namespace {

support::Expected<int> queryDriverVersion() {
    support::DiagnosticList errors;
    std::string name = "libcuda.so.1";
    if (const char* env = std::getenv("TESSERA_CUDA_DRIVER"); env && *env) name = env;
    ::dlerror();
    void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* e = ::dlerror();
        errors.error("", "", "no CUDA driver found (" + std::string(e ? e : name + ": cannot be opened") + ")");
        return errors;
    }
    using GetVersion = CUresult (*)(int*);
    auto get = reinterpret_cast<GetVersion>(::dlsym(handle, "cuDriverGetVersion"));
    if (!get) {
        errors.error("", "", "the CUDA driver '" + name + "' lacks cuDriverGetVersion");
        return errors;
    }
    int version = 0;
    const CUresult rc = get(&version);
    if (rc != kCudaSuccess || version <= 0) {
        // cudaErrorText would load the driver through CudaDriver::get(), which calls cuInit.
        using GetName = CUresult (*)(CUresult, const char**);
        auto getName = reinterpret_cast<GetName>(::dlsym(handle, "cuGetErrorName"));
        const char* text = nullptr;
        if (!getName || getName(rc, &text) != kCudaSuccess || !text)
            text = rc == kCudaErrorStubLibrary ? "CUDA_ERROR_STUB_LIBRARY" : nullptr;
        errors.error("", "", "cuDriverGetVersion failed: " + (text ? std::string(text) : "CUDA error " + std::to_string(rc)));
        return errors;
    }
    return version;
}

}  // namespace

support::Expected<int> cudaDriverVersion() {
    static const support::Expected<int> answer = queryDriverVersion();
    return answer;
}

std::string formatCudaVersion(int version) {
    if (version <= 0) return "unknown";
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

}  // namespace tessera::runtime::cuda
