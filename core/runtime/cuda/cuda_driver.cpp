#include "core/runtime/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>
#include <utility>

namespace tessera::runtime::cuda {

using nlohmann::json;

namespace {

support::DiagnosticList errorList(const std::string& message) {
    support::DiagnosticList d;
    d.error("", "", message);
    return d;
}

/// Names for the codes Tessera reports most, for when the driver cannot name them itself (the
/// toolkit's stub library fails cuGetErrorName too).
const char* knownErrorName(CUresult code) {
    switch (code) {
        case 0: return "CUDA_SUCCESS";
        case 1: return "CUDA_ERROR_INVALID_VALUE";
        case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
        case 3: return "CUDA_ERROR_NOT_INITIALIZED";
        case 4: return "CUDA_ERROR_DEINITIALIZED";
        case 34: return "CUDA_ERROR_STUB_LIBRARY";
        case 35: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
        case 100: return "CUDA_ERROR_NO_DEVICE";
        case 101: return "CUDA_ERROR_INVALID_DEVICE";
        case 200: return "CUDA_ERROR_INVALID_IMAGE";
        case 201: return "CUDA_ERROR_INVALID_CONTEXT";
        case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
        case 214: return "CUDA_ERROR_ECC_UNCORRECTABLE";
        case 218: return "CUDA_ERROR_INVALID_PTX";
        case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
        case 400: return "CUDA_ERROR_INVALID_HANDLE";
        case 500: return "CUDA_ERROR_NOT_FOUND";
        case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
        case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
        case 702: return "CUDA_ERROR_LAUNCH_TIMEOUT";
        case 709: return "CUDA_ERROR_CONTEXT_IS_DESTROYED";
        case 710: return "CUDA_ERROR_ASSERT";
        case 714: return "CUDA_ERROR_HARDWARE_STACK_ERROR";
        case 715: return "CUDA_ERROR_ILLEGAL_INSTRUCTION";
        case 716: return "CUDA_ERROR_MISALIGNED_ADDRESS";
        case 717: return "CUDA_ERROR_INVALID_ADDRESS_SPACE";
        case 718: return "CUDA_ERROR_INVALID_PC";
        case 719: return "CUDA_ERROR_LAUNCH_FAILED";
        case 999: return "CUDA_ERROR_UNKNOWN";
        default: return nullptr;
    }
}

std::string fallbackErrorText(CUresult code) {
    if (const char* n = knownErrorName(code)) return n;
    return "CUDA error " + std::to_string(code);
}

/// The outcome of loading the driver: the table or the error text.
struct LoadOutcome {
    CudaDriver* driver = nullptr;
    std::string error;
};

}  // namespace

/// Fills a CudaDriver (friend: the constructor is private).
struct CudaDriverLoader {
    static LoadOutcome load() {
        LoadOutcome out;
        std::string name = "libcuda.so.1";
        if (const char* env = std::getenv("TESSERA_CUDA_DRIVER"); env && *env) name = env;
        ::dlerror();
        void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char* e = ::dlerror();
            out.error = "no CUDA driver found (" + std::string(e ? e : name + ": cannot be opened") + ")";
            return out;
        }
        // Never dlclose'd: the driver stays loaded for the life of the process.
        auto* d = new CudaDriver;
        d->libraryName = name;
        std::string missing;
        auto resolve = [&](auto& fn, const char* symbol, const char* fallback = nullptr) {
            void* p = ::dlsym(handle, symbol);
            if (!p && fallback) p = ::dlsym(handle, fallback);
            if (!p) {
                if (missing.empty()) missing = symbol;
                return;
            }
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
        };
        resolve(d->init, "cuInit");
        resolve(d->driverGetVersion, "cuDriverGetVersion");
        resolve(d->getErrorName, "cuGetErrorName");
        resolve(d->getErrorString, "cuGetErrorString");
        resolve(d->deviceGetCount, "cuDeviceGetCount");
        resolve(d->deviceGet, "cuDeviceGet");
        resolve(d->deviceGetName, "cuDeviceGetName");
        resolve(d->deviceGetAttribute, "cuDeviceGetAttribute");
        resolve(d->deviceTotalMem, "cuDeviceTotalMem_v2");
        resolve(d->deviceGetPCIBusId, "cuDeviceGetPCIBusId");
        resolve(d->devicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
        resolve(d->devicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
        resolve(d->ctxSetCurrent, "cuCtxSetCurrent");
        resolve(d->ctxSynchronize, "cuCtxSynchronize");
        resolve(d->moduleLoadDataEx, "cuModuleLoadDataEx");
        resolve(d->moduleUnload, "cuModuleUnload");
        resolve(d->moduleGetFunction, "cuModuleGetFunction");
        resolve(d->funcSetAttribute, "cuFuncSetAttribute");
        resolve(d->memGetInfo, "cuMemGetInfo_v2");
        resolve(d->memAlloc, "cuMemAlloc_v2");
        resolve(d->memFree, "cuMemFree_v2");
        resolve(d->memcpyHtoD, "cuMemcpyHtoD_v2");
        resolve(d->memcpyDtoH, "cuMemcpyDtoH_v2");
        resolve(d->memcpyDtoD, "cuMemcpyDtoD_v2");
        resolve(d->launchKernel, "cuLaunchKernel");
        resolve(d->eventCreate, "cuEventCreate");
        resolve(d->eventDestroy, "cuEventDestroy_v2");
        resolve(d->eventRecord, "cuEventRecord");
        resolve(d->eventSynchronize, "cuEventSynchronize");
        resolve(d->eventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
        if (!missing.empty()) {
            out.error = "the CUDA driver '" + name + "' lacks " + missing + " (driver too old?)";
            delete d;
            return out;
        }
        const CUresult rc = d->init(0);
        if (rc == kCudaErrorNoDevice) {
            out.error = "CUDA driver found but no device (cuInit: " + fallbackErrorText(rc) + ")";
            delete d;
            return out;
        }
        if (rc != kCudaSuccess) {
            out.error = "CUDA driver found but cuInit failed: " + d->errorText(rc);
            delete d;
            return out;
        }
        if (d->driverGetVersion(&d->driverVersion) != kCudaSuccess) d->driverVersion = 0;
        out.driver = d;
        return out;
    }
};

support::Expected<const CudaDriver*> CudaDriver::get() {
    static const LoadOutcome outcome = CudaDriverLoader::load();
    if (!outcome.driver) return errorList(outcome.error);
    return static_cast<const CudaDriver*>(outcome.driver);
}

std::string CudaDriver::errorText(CUresult code) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (!getErrorName || getErrorName(code, &name) != kCudaSuccess || !name) name = nullptr;
    if (!getErrorString || getErrorString(code, &text) != kCudaSuccess || !text) text = nullptr;
    std::string out = name ? std::string(name) : fallbackErrorText(code);
    if (text) out += std::string(" (") + text + ")";
    return out;
}

std::string cudaErrorText(CUresult code) {
    auto d = CudaDriver::get();
    if (d) return (*d)->errorText(code);
    return fallbackErrorText(code);
}

bool isStickyCudaError(CUresult code) {
    switch (code) {
        case 214:  // ECC uncorrectable
        case 700:  // illegal address
        case 702:  // launch timeout
        case 709:  // context is destroyed
        case 710:  // device-side assert
        case 714:  // hardware stack error
        case 715:  // illegal instruction
        case 716:  // misaligned address
        case 717:  // invalid address space
        case 718:  // invalid PC
        case 719:  // launch failed
        case 999:  // unknown
            return true;
        default:
            return false;
    }
}

std::string CudaDeviceInfo::arch() const { return "sm_" + std::to_string(ccMajor) + std::to_string(ccMinor); }

double CudaDeviceInfo::peakDramBytesPerSecond() const {
    if (memoryClockKHz <= 0 || memoryBusWidthBits <= 0) return 0;
    return 2.0 * static_cast<double>(memoryClockKHz) * 1000.0 * static_cast<double>(memoryBusWidthBits) / 8.0;
}

support::Expected<std::vector<CudaDeviceInfo>> listCudaDevices() {
    auto got = CudaDriver::get();
    if (!got) return got.diagnostics();
    const CudaDriver& d = **got;
    int count = 0;
    if (const CUresult rc = d.deviceGetCount(&count); rc != kCudaSuccess)
        return errorList("cannot count CUDA devices: " + d.errorText(rc));
    if (count <= 0) return errorList("CUDA driver found but no device (cuDeviceGetCount: 0)");
    std::vector<CudaDeviceInfo> out;
    for (int i = 0; i < count; ++i) {
        CudaDeviceInfo info;
        info.ordinal = i;
        CUdevice dev = 0;
        CUresult rc = d.deviceGet(&dev, i);
        char name[256] = {};
        if (rc == kCudaSuccess) rc = d.deviceGetName(name, static_cast<int>(sizeof name) - 1, dev);
        std::size_t total = 0;
        if (rc == kCudaSuccess) rc = d.deviceTotalMem(&total, dev);
        auto attr = [&](int attribute, auto& field) {
            if (rc != kCudaSuccess) return;
            int v = 0;
            rc = d.deviceGetAttribute(&v, attribute, dev);
            field = static_cast<std::remove_reference_t<decltype(field)>>(v);
        };
        attr(kAttrComputeCapabilityMajor, info.ccMajor);
        attr(kAttrComputeCapabilityMinor, info.ccMinor);
        attr(kAttrMultiprocessorCount, info.smCount);
        attr(kAttrL2CacheSize, info.l2Bytes);
        attr(kAttrMaxSharedMemoryPerBlockOptin, info.sharedPerBlockOptinBytes);
        attr(kAttrMaxSharedMemoryPerMultiprocessor, info.sharedPerSmBytes);
        attr(kAttrWarpSize, info.warpSize);
        attr(kAttrClockRate, info.clockKHz);
        attr(kAttrMemoryClockRate, info.memoryClockKHz);
        attr(kAttrGlobalMemoryBusWidth, info.memoryBusWidthBits);
        if (rc != kCudaSuccess) return errorList("cannot query CUDA device " + std::to_string(i) + ": " + d.errorText(rc));
        info.name = name;
        info.totalMemoryBytes = static_cast<std::int64_t>(total);
        out.push_back(std::move(info));
    }
    return out;
}

json cudaDeviceInfoToJson(const CudaDeviceInfo& info) {
    return {{"ordinal", info.ordinal},
            {"name", info.name},
            {"arch", info.arch()},
            {"cc_major", info.ccMajor},
            {"cc_minor", info.ccMinor},
            {"sm_count", info.smCount},
            {"total_memory_bytes", info.totalMemoryBytes},
            {"l2_bytes", info.l2Bytes},
            {"shared_per_block_optin_bytes", info.sharedPerBlockOptinBytes},
            {"shared_per_sm_bytes", info.sharedPerSmBytes},
            {"warp_size", info.warpSize},
            {"clock_khz", info.clockKHz},
            {"memory_clock_khz", info.memoryClockKHz},
            {"memory_bus_width_bits", info.memoryBusWidthBits}};
}

support::Expected<CudaDeviceInfo> cudaDeviceInfoFromJson(const json& j) {
    if (!j.is_object()) return errorList("device is not a JSON object");
    CudaDeviceInfo info;
    std::string bad;
    auto field = [&](const char* key, auto& out) {
        auto it = j.find(key);
        if (it == j.end() || it->is_null() || !bad.empty()) return;
        using T = std::remove_reference_t<decltype(out)>;
        if constexpr (std::is_same_v<T, std::string>) {
            if (!it->is_string()) {
                bad = key;
                return;
            }
        } else {
            if (!it->is_number_integer()) {
                bad = key;
                return;
            }
        }
        out = it->get<T>();
    };
    field("ordinal", info.ordinal);
    field("name", info.name);
    field("cc_major", info.ccMajor);
    field("cc_minor", info.ccMinor);
    field("sm_count", info.smCount);
    field("total_memory_bytes", info.totalMemoryBytes);
    field("l2_bytes", info.l2Bytes);
    field("shared_per_block_optin_bytes", info.sharedPerBlockOptinBytes);
    field("shared_per_sm_bytes", info.sharedPerSmBytes);
    field("warp_size", info.warpSize);
    field("clock_khz", info.clockKHz);
    field("memory_clock_khz", info.memoryClockKHz);
    field("memory_bus_width_bits", info.memoryBusWidthBits);
    if (!bad.empty()) return errorList("device field '" + bad + "' has the wrong type");
    return info;
}

}  // namespace tessera::runtime::cuda
