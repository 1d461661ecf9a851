#pragma once
/// @file
/// The CUDA driver API, loaded at run time: Tessera never links libcuda, so that every binary
/// starts on a machine without the NVIDIA driver (GPU features are then reported unavailable).
///
/// CudaDriver::get() dlopen()s "libcuda.so.1" (RTLD_NOW | RTLD_LOCAL) once per process, resolves
/// the entry points it needs by their exact versioned symbol names (cuMemAlloc_v2 and so on: the
/// unversioned symbols are the old ABI) and calls cuInit(0). The environment variable
/// TESSERA_CUDA_DRIVER, when set, names the library to open instead (tests point it at the
/// toolkit's stub library to exercise the "driver found, cuInit fails" path).
///
/// The types and constants below follow the driver API's C ABI (cuda.h of CUDA 12 and 13); they
/// are declared here so that core/ needs neither the toolkit's headers nor its libraries.
///
/// Errors (support::Expected, one diagnostic):
/// - "no CUDA driver found (libcuda.so.1: cannot open shared object file: No such file or directory)"
///   (the text in parentheses is dlerror()'s);
/// - "CUDA driver found but no device (cuInit: CUDA_ERROR_NO_DEVICE)";
/// - "CUDA driver found but cuInit failed: CUDA_ERROR_STUB_LIBRARY (...)" for other cuInit codes;
/// - "the CUDA driver 'libcuda.so.1' lacks cuXxx_v2 (driver too old?)".
///
/// Thread rules: get() is safe from any thread (the load happens once); the returned table is
/// immutable. The driver's own rules apply to the calls made through it (a context is current per
/// thread). listCudaDevices() and cudaErrorText() are safe from any thread.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/support/expected.h"

namespace tessera::runtime::cuda {

// ---- Driver API C ABI (the names and values of cuda.h) ----
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUevent = struct CUevent_st*;
using CUstream = struct CUstream_st*;

/// CUresult values Tessera tests for by value.
inline constexpr CUresult kCudaSuccess = 0;
inline constexpr CUresult kCudaErrorInvalidValue = 1;
inline constexpr CUresult kCudaErrorOutOfMemory = 2;
inline constexpr CUresult kCudaErrorStubLibrary = 34;
inline constexpr CUresult kCudaErrorNoDevice = 100;
inline constexpr CUresult kCudaErrorNotFound = 500;
inline constexpr CUresult kCudaErrorIllegalAddress = 700;

/// CUdevice_attribute values.
enum CudaDeviceAttribute : int {
    kAttrMaxThreadsPerBlock = 1,
    kAttrWarpSize = 10,
    kAttrClockRate = 13,  ///< kHz
    kAttrMultiprocessorCount = 16,
    kAttrMemoryClockRate = 36,  ///< kHz
    kAttrGlobalMemoryBusWidth = 37,  ///< bits
    kAttrL2CacheSize = 38,  ///< bytes
    kAttrComputeCapabilityMajor = 75,
    kAttrComputeCapabilityMinor = 76,
    kAttrMaxSharedMemoryPerMultiprocessor = 81,  ///< bytes
    kAttrMaxSharedMemoryPerBlockOptin = 97,  ///< bytes
};

/// CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
inline constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
/// CUjit_option values for cuModuleLoadDataEx's error log.
inline constexpr int kJitErrorLogBuffer = 5;
inline constexpr int kJitErrorLogBufferSizeBytes = 6;

/// The driver entry points Tessera uses, each named after its C function without the "cu" prefix
/// (memAlloc holds the symbol cuMemAlloc_v2, the one cuda.h's #define cuMemAlloc selects; the
/// names differ from the C ones so that a file that also includes cuda.h, whose macros rename
/// cuMemAlloc, still sees this class unchanged). All are non-null in a table returned by get().
class CudaDriver {
public:
    /// The process's driver, loaded and initialised on first use; the error (see the file comment)
    /// is the same on every call.
    static support::Expected<const CudaDriver*> get();

    /// The library that was opened ("libcuda.so.1" or $TESSERA_CUDA_DRIVER).
    std::string libraryName;
    /// cuDriverGetVersion(), e.g. 13000 for CUDA 13.0.
    int driverVersion = 0;

    CUresult (*init)(unsigned int flags) = nullptr;
    CUresult (*driverGetVersion)(int* version) = nullptr;
    CUresult (*getErrorName)(CUresult error, const char** str) = nullptr;
    CUresult (*getErrorString)(CUresult error, const char** str) = nullptr;
    CUresult (*deviceGetCount)(int* count) = nullptr;
    CUresult (*deviceGet)(CUdevice* device, int ordinal) = nullptr;
    CUresult (*deviceGetName)(char* name, int len, CUdevice dev) = nullptr;
    CUresult (*deviceGetAttribute)(int* value, int attribute, CUdevice dev) = nullptr;
    CUresult (*deviceTotalMem)(std::size_t* bytes, CUdevice dev) = nullptr;  ///< _v2
    /// "0000:3b:00.0" (domain:bus:device.function, hexadecimal); NVML finds the same GPU by it.
    CUresult (*deviceGetPCIBusId)(char* pciBusId, int len, CUdevice dev) = nullptr;
    CUresult (*devicePrimaryCtxRetain)(CUcontext* ctx, CUdevice dev) = nullptr;
    CUresult (*devicePrimaryCtxRelease)(CUdevice dev) = nullptr;  ///< _v2
    CUresult (*ctxSetCurrent)(CUcontext ctx) = nullptr;
    CUresult (*ctxSynchronize)() = nullptr;
    CUresult (*moduleLoadDataEx)(CUmodule* module, const void* image, unsigned int numOptions, int* options,
                                   void** optionValues) = nullptr;
    CUresult (*moduleUnload)(CUmodule module) = nullptr;
    CUresult (*moduleGetFunction)(CUfunction* fn, CUmodule module, const char* name) = nullptr;
    CUresult (*funcSetAttribute)(CUfunction fn, int attribute, int value) = nullptr;
    CUresult (*memGetInfo)(std::size_t* free, std::size_t* total) = nullptr;  ///< _v2
    CUresult (*memAlloc)(CUdeviceptr* ptr, std::size_t bytes) = nullptr;  ///< _v2
    CUresult (*memFree)(CUdeviceptr ptr) = nullptr;  ///< _v2
    CUresult (*memcpyHtoD)(CUdeviceptr dst, const void* src, std::size_t bytes) = nullptr;  ///< _v2
    CUresult (*memcpyDtoH)(void* dst, CUdeviceptr src, std::size_t bytes) = nullptr;  ///< _v2
    CUresult (*memcpyDtoD)(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes) = nullptr;  ///< _v2
    CUresult (*launchKernel)(CUfunction fn, unsigned int gridX, unsigned int gridY, unsigned int gridZ,
                               unsigned int blockX, unsigned int blockY, unsigned int blockZ, unsigned int sharedBytes,
                               CUstream stream, void** params, void** extra) = nullptr;
    CUresult (*eventCreate)(CUevent* event, unsigned int flags) = nullptr;
    CUresult (*eventDestroy)(CUevent event) = nullptr;  ///< _v2
    CUresult (*eventRecord)(CUevent event, CUstream stream) = nullptr;
    CUresult (*eventSynchronize)(CUevent event) = nullptr;
    /// cuEventElapsedTime_v2 where the driver has it (CUDA >= 12.8), else cuEventElapsedTime.
    CUresult (*eventElapsedTime)(float* milliseconds, CUevent start, CUevent end) = nullptr;

    /// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)": the driver's name
    /// and description of `code`; codes the driver cannot name (the stub library) get Tessera's own
    /// name for the common ones, else "CUDA error N".
    std::string errorText(CUresult code) const;

private:
    CudaDriver() = default;
    friend struct CudaDriverLoader;
};

/// cudaErrorText through the process's driver when it loaded, else Tessera's own names
/// ("CUDA_ERROR_NO_DEVICE"), else "CUDA error N".
std::string cudaErrorText(CUresult code);

/// Whether `code` leaves the context unusable (a kernel fault: illegal or misaligned address,
/// illegal instruction, launch failure, assert, hardware stack error, ...). After such an error
/// every later call in the context fails; only a new process recovers.
bool isStickyCudaError(CUresult code);

/// What Tessera knows about one device (cuDeviceGetName, cuDeviceTotalMem, attributes).
struct CudaDeviceInfo {
    int ordinal = 0;
    std::string name;                          ///< "NVIDIA H200"
    int ccMajor = 0;                           ///< compute capability, e.g. 9
    int ccMinor = 0;                           ///< e.g. 0
    int smCount = 0;                           ///< multiprocessors
    std::int64_t totalMemoryBytes = 0;         ///< global memory
    std::int64_t l2Bytes = 0;                  ///< L2 cache
    std::int64_t sharedPerBlockOptinBytes = 0; ///< most dynamic + static shared memory a block may opt in to
    std::int64_t sharedPerSmBytes = 0;         ///< shared memory per multiprocessor
    int warpSize = 0;
    int clockKHz = 0;                          ///< SM clock (typical/boost), kHz
    int memoryClockKHz = 0;                    ///< peak memory clock, kHz
    int memoryBusWidthBits = 0;

    /// "sm_90" for compute capability 9.0 (NVRTC's --gpu-architecture spelling).
    std::string arch() const;
    /// Peak DRAM bandwidth in bytes/s from the memory clock and bus width (2 transfers per clock):
    /// 2 * memoryClockKHz * 1000 * memoryBusWidthBits / 8; 0 when either is unknown.
    double peakDramBytesPerSecond() const;
};

/// Every device the driver reports, in ordinal order. Errors: the driver's (see the file comment);
/// a device query failing: "cannot query CUDA device N: <cudaErrorText>". Creates no context.
support::Expected<std::vector<CudaDeviceInfo>> listCudaDevices();

/// JSON: {"ordinal":0,"name":"NVIDIA H200","arch":"sm_90","cc_major":9,"cc_minor":0,"sm_count":132,
/// "total_memory_bytes":..,"l2_bytes":..,"shared_per_block_optin_bytes":..,"shared_per_sm_bytes":..,
/// "warp_size":32,"clock_khz":..,"memory_clock_khz":..,"memory_bus_width_bits":..}. "arch" is
/// written for readers and ignored when read back.
nlohmann::json cudaDeviceInfoToJson(const CudaDeviceInfo& info);
/// The inverse; a missing field keeps its default, a field of the wrong type is an error naming it
/// ("device field 'sm_count' has the wrong type"). Never throws.
support::Expected<CudaDeviceInfo> cudaDeviceInfoFromJson(const nlohmann::json& j);

}  // namespace tessera::runtime::cuda
