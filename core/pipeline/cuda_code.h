#pragma once
/// @file
/// CUDA code of a compiled model beyond its one module (CompiledModel::code), for
/// `tessera-cli compile --target cuda`: the architecture names NVRTC accepts, one kernel as a
/// module of its own, NVRTC's PTX and CUBIN of a module, and the SASS of a CUBIN. Built on
/// core/codegen/cuda and core/runtime/cuda/nvrtc.h (whose file comment gives the errors and
/// the cache).
/// Thread rules: pure functions apart from NVRTC's cache and the disassembler's process; any
/// thread.

#include <string>

#include "core/pipeline/compile.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/support/expected.h"

namespace tessera::pipeline {

/// Whether `arch` ("sm_90", "compute_90", "sm_90a") names an architecture: by its syntax only, or
/// with `askNvrtc` also one the NVRTC found here compiles for (an error when NVRTC is missing).
/// The value is true for a real architecture (sm_XX: PTX and CUBIN), false for compute_XX (PTX
/// only).
support::Expected<bool> checkCudaArch(const std::string& arch, bool askNvrtc);

/// The CUDA C of kernel step `step` of a CUDA-target CompiledModel as a module of its own.
support::Expected<std::string> kernelCudaModule(const CompiledStep& step);

/// NVRTC's PTX (and CUBIN for sm_XX) of the CUDA C `source` for `arch`, named `sourceName` in
/// its log, through the default NVRTC cache.
support::Expected<runtime::cuda::CudaCompiled> compileCudaModule(const std::string& source, const std::string& arch,
                                                                 const std::string& sourceName);

/// The SASS listing of a CUBIN file (cuobjdump, else nvdisasm).
support::Expected<std::string> disassembleCubin(const std::string& cubinPath);

}  // namespace tessera::pipeline
