#pragma once
/// @file
/// OpenMP C++ generator: kernels of the kernel IR (core/lower/kernel_ir.h) -> one readable,
/// deterministic C++ translation unit, built with `c++ -O3 -march=native -fopenmp -shared -fPIC`
/// (it also compiles without -fopenmp: the kernels then run on one thread).
///
/// Module layout
/// - Prelude: <algorithm>, <cmath>, <cstdint>, <cstring>, <limits>, <memory>, <type_traits>,
///   <omp.h> under `#ifdef _OPENMP`; helpers (f16/bf16 <-> float conversion on uint16_t storage,
///   tsr_floordiv/tsr_floormod, tsr_min/tsr_max, tsr_sigmoidf, tsr_rsqrtf ...); and
///   `extern "C" void tessera_set_num_threads(int n)` (omp_set_num_threads when n > 0) and
///   `extern "C" int tessera_get_max_threads(void)` (omp_get_max_threads, 1 without OpenMP).
///   The includes and helpers are GeneratedSource::sharedPreludeBytes (the part every compile
///   unit of the host JIT repeats); the two thread functions follow it.
/// - Per kernel: a `//` header comment (entry point, the IR name, source ops and op type,
///   mappings, notes, one line per parameter with its dtype, shape, role and source name), then
///   `extern "C" void <entry>(void* const* args)`: args[i] is Kernel::params[i]'s buffer (dense,
///   row-major; inputs `const T* __restrict__`, outputs `T* __restrict__`, so parameters must not
///   alias), f16/bf16 as uint16_t, bool as uint8_t.
///
/// Loop kinds: the outermost Parallel loop becomes `#pragma omp parallel for`, with
/// `collapse(n)` over directly nested Parallel loops whose extents do not depend on the collapsed
/// variables; Parallel loops inside a parallel region are plain loops. Unroll -> `#pragma GCC
/// unroll N` (N = factor, or the constant extent when factor is 0, at most 64; no pragma when the
/// extent is not constant). Vectorize -> `#pragma omp simd` (`#pragma GCC ivdep` without OpenMP):
/// a Vectorize loop promises independent iterations.
///
/// Temporaries: Allocate'd buffers are scalars, stack arrays, or heap arrays above 64 KiB; stack
/// arrays of 4 KiB and more are used through a `T* __restrict__` view of the array (so GCC keeps
/// the accumulators of a tile reading them in registers).
///
/// Arithmetic: f32/f16/bf16 compute in float, f64 in double, integers in their C types (integer
/// Div/Mod are C's, truncating; FloorDiv/FloorMod use helpers). Min/Max are `b < a ? b : a` and
/// `a < b ? b : a` (ONNX does not require NaN propagation; a NaN first operand propagates).
/// Round is nearbyint (half to even). Float immediates print the shortest text that reads back
/// exactly (`0.1f`); inf/nan via std::numeric_limits.
///
/// Names: see core/codegen/c_emitter.h (model names are sanitised, prefixed and made unique;
/// comments are escaped `//` comments). Thread rules: pure function; safe from any thread.

#include <string>
#include <vector>

#include "core/codegen/c_emitter.h"
#include "core/lower/kernel_ir.h"

namespace tessera::codegen {

struct CppOptions {
    /// Emit OpenMP pragmas (parallel for, simd). Off: serial loops, `#pragma GCC ivdep`.
    bool openmp = true;
    /// Fully parenthesised expressions instead of minimal parentheses.
    bool fullParens = false;
};

/// Generates one C++ module with one entry point per kernel (a null kernel gets an empty name).
GeneratedSource generateCpp(const std::vector<const lower::Kernel*>& kernels, const CppOptions& options = {});

}  // namespace tessera::codegen
