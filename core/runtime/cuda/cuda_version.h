#pragma once
/// @file
/// Versions of the CUDA pieces found at run time, for an About box or `--version`-style reports,
/// asked without initialising anything.
///
/// cudaDriverVersion() dlopen()s the driver like CudaDriver::get() ("libcuda.so.1", or
/// $TESSERA_CUDA_DRIVER) but calls only cuDriverGetVersion, which the driver answers before
/// cuInit: it neither creates driver state in the calling process nor needs a device, so a
/// process that never runs kernels itself (the GUI; the runner owns the CUDA context) can show
/// the driver's version. The handle is never closed (the driver stays loaded, as CudaDriver's).
///
/// Errors (one diagnostic):
/// - "no CUDA driver found (<dlerror>)";
/// - "the CUDA driver '<name>' lacks cuDriverGetVersion";
/// - "cuDriverGetVersion failed: <error name>" (e.g. the toolkit's stub library:
///   CUDA_ERROR_STUB_LIBRARY).
///
/// Thread rules: any thread; the answer is computed once per process and cached.

#include <string>

#include "core/support/expected.h"

namespace tessera::runtime::cuda {

/// cuDriverGetVersion() of the process's driver (e.g. 13000 for CUDA 13.0), see the file comment.
support::Expected<int> cudaDriverVersion();

/// "13.0" for 13000, "12.8" for 12080 (the encoding of cuDriverGetVersion and nvcc's
/// CUDA_VERSION: 1000 * major + 10 * minor). Non-positive values give "unknown".
std::string formatCudaVersion(int version);

}  // namespace tessera::runtime::cuda
