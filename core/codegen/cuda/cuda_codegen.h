#pragma once
/// @file
/// CUDA C++ generator: kernels of the kernel IR (core/lower/kernel_ir.h) -> one readable,
/// deterministic CUDA translation unit for NVRTC, plus the launch configuration of each kernel.
///
/// Module layout
/// - No `#include` at all (NVRTC has no standard headers built in): the prelude defines the
///   fixed-width integer typedefs (int8_t .. uint64_t) and INT64_MIN, and the helpers the
///   expressions use as `__device__ __forceinline__` functions: f16/bf16 <-> float conversion
///   on uint16_t storage (f16 through the PTX `cvt` instructions, round to nearest even;
///   bf16 by bit manipulation, the same rounding as the C++ back end), tsr_floordiv /
///   tsr_floormod, tsr_min / tsr_max / tsr_abs, tsr_sigmoidf (1 / (1 + expf(-x))). Math
///   intrinsics are CUDA's device functions (expf/exp, logf, sqrtf, rsqrtf/rsqrt, tanhf, erff,
///   nearbyintf ...); inf/NaN immediates are `__int_as_float(0x7f800000)`,
///   `__longlong_as_double(...)`.
/// - Per kernel: a `//` header comment (entry point, IR name, source ops and op type, mappings,
///   notes, parameters), a `// launch: grid G x block B` line (and the static shared bytes), then
///   `extern "C" __global__ void __launch_bounds__(B) <entry>(const T* __restrict__ in_X, ...,
///   T* __restrict__ out_Y)`: one typed device pointer per Kernel::params entry, in that order
///   (inputs const; dense row-major; f16/bf16 as uint16_t, bool as uint8_t; parameters must not
///   alias). Entry names are the C++ back end's (`tk_` + sanitised kernel name, made unique).
///
/// Loop kinds
/// - Blocks: `for (int64_t w = blockIdx.x; w < E; w += gridDim.x)`; the launch's gridX is
///   min(E, maxGridX) (the largest Blocks extent of the kernel; 1 without a Blocks loop).
/// - Threads: always the block-strided form `for (int64_t t = threadIdx.x; t < E; t += blockDim.x)`
///   (one form for every Threads loop: it is correct for any block size). blockX is the largest
///   Threads extent of the kernel, capped at maxThreadsPerBlock, rounded up to a multiple of 32
///   (a whole warp; at most maxThreadsPerBlock) — the loop bound then idles the extra threads;
///   1 without a Threads loop. A Threads extent above maxThreadsPerBlock is valid (each thread
///   takes several iterations).
/// - Statements outside every Threads loop run in every thread of the block (identical values;
///   the lowering keeps per-block work inside Threads loops).
/// - Parallel (a CPU kind) runs as a serial loop, marked with a comment; Unroll -> `#pragma unroll
///   N` (N = factor, or the constant extent when the factor is 0, at most 64); Vectorize ->
///   `#pragma unroll N` with its factor (a plain loop when the factor is 0).
/// - Shared buffers: `__shared__ T t_name[N];` where the Allocate is; CudaLaunch::sharedBytes is
///   the sum of their bytes. Barrier -> `__syncthreads();`; a Blocks loop whose body has a
///   Barrier or touches a Shared buffer ends each iteration with `__syncthreads();` (a block that
///   runs several grid-stride iterations must not overwrite a tile slower threads still read).
///   Local buffers are per-thread scalars or arrays (registers / local memory).
/// - Per-thread buffers (BufferDecl::perThread, kernel_ir.h): declared with the running thread's
///   row only (`float t_acc[64];` for f32[256,8,8]); every access drops its leading index, which
///   must be the enclosing Threads loop's variable. That loop's extent must equal the leading
///   dimension and be at most maxThreadsPerBlock (so blockX covers it and each thread runs at
///   most one iteration: the row stays the same thread's across phases).
///
/// Errors (support::Diagnostic, the message names the kernel; no source is produced): a Blocks
/// loop inside a Blocks or Threads loop, a Threads loop inside a Threads loop, a Barrier inside a
/// Threads loop, a Blocks or Threads loop whose extent is not a constant, a Local buffer (a
/// per-thread buffer's row) above kCudaMaxLocalBytes, Shared buffers above
/// kCudaMaxStaticSharedBytes in all, an allocated Global buffer, a per-thread buffer that is not
/// Local, accessed outside a Threads loop, not indexed by that loop's variable first, or whose
/// leading extent differs from the loop's or exceeds maxThreadsPerBlock; invalid options.
///
/// Thread rules: pure function of its arguments; safe from any thread. The kernels are only read.

#include <cstdint>
#include <vector>

#include "core/codegen/c_emitter.h"
#include "core/lower/kernel_ir.h"
#include "core/support/expected.h"

namespace tessera::codegen {

/// Largest Local (per-thread) buffer the CUDA target accepts, in bytes (no heap on the device).
inline constexpr std::int64_t kCudaMaxLocalBytes = 64 * 1024;
/// Largest total of statically declared `__shared__` buffers of one kernel, in bytes (48 KiB,
/// the limit without the dynamic shared memory opt-in).
inline constexpr std::int64_t kCudaMaxStaticSharedBytes = 48 * 1024;

/// How to launch one kernel: gridDim = (gridX, 1, 1), blockDim = (blockX, 1, 1), no dynamic
/// shared memory (all shared memory is static).
struct CudaLaunch {
    std::int64_t gridX = 1;
    std::int64_t blockX = 1;
    std::int64_t sharedBytes = 0;  ///< static __shared__ bytes of the kernel (informational)
};

struct CudaOptions {
    /// Fully parenthesised expressions instead of minimal parentheses.
    bool fullParens = false;
    /// Upper bound of blockX (>= 1; CUDA allows 1024).
    int maxThreadsPerBlock = 1024;
    /// Upper bound of gridX (>= 1; CUDA allows 2^31 - 1).
    std::int64_t maxGridX = 2147483647;
};

struct CudaModule {
    GeneratedSource source;
    std::vector<CudaLaunch> launches;  ///< one per kernel, input order (a null kernel: {1, 1, 0})
};

/// The launch a kernel needs under `options` (its validation errors when it cannot run).
support::Expected<CudaLaunch> cudaLaunchFor(const lower::Kernel& kernel, const CudaOptions& options = {});

/// Generates one CUDA module with one `extern "C" __global__` entry point per kernel (a null
/// kernel gets an empty entry name and no code). Errors: every kernel's validation errors.
support::Expected<CudaModule> generateCuda(const std::vector<const lower::Kernel*>& kernels,
                                           const CudaOptions& options = {});

}  // namespace tessera::codegen
