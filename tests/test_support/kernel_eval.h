#pragma once
/// @file
/// Kernel IR interpreter: runs a lower::Kernel on host tensors without a compiler. Test support
/// (library tessera_test_support, not part of the product): the reference for the tests of
/// lowering and code generation, not for speed; it runs tensors of ~1e6 elements in well under a
/// second per simple kernel. It keeps the namespace of the kernel IR it runs (tessera::lower).
///
/// Semantics (those of core/lower/kernel_ir.h, as the C++ generator implements them)
/// - Float expressions (f16, bf16, f32, f64) are computed in double. Values are rounded to their
///   dtype where the generated C rounds them: at stores (to the buffer's dtype), at Casts to a
///   float dtype, at float immediates and at Let bindings of f32/f16/bf16 variables (to float,
///   as the C code holds them in `float`).
/// - Integers are exact in int64 (wrapping where C's fixed-width arithmetic wraps: i32/u32
///   results, and u64 division/comparison are unsigned); stores and casts wrap to the target
///   width. Bool is 0/1. Float -> integer casts truncate (NaN -> 0, out of range saturates, where
///   C would be undefined).
/// - `&&`/`||` short-circuit and Select evaluates only the chosen arm, as in C, so guarded loads
///   are never executed.
/// - Min/Max are `b < a ? b : a` / `a < b ? b : a`; Round is half to even; Sigmoid 1/(1+e^-x).
/// - Parallel/Unroll/Vectorize loops run serially in order; Barrier is a no-op.
/// - Temporaries (Allocate) start filled with NaN (float dtypes) or 0 (others), so a kernel that
///   reads a temporary before writing it produces NaN rather than plausible numbers.
///
/// Errors (a diagnostic; params may then be partially written): parameter count, dtype or
/// element-count mismatch; an index outside a buffer's shape (names the buffer, the indices and
/// the shape); a store to an Input parameter; integer division by zero; a variable read outside
/// its binding; a load/store of a temporary outside its Allocate; malformed IR (wrong number of
/// indices or arguments, an unknown buffer, an unsupported dtype such as string); more executed
/// statements than EvalOptions::maxSteps.
///
/// Thread rules: re-entrant; the kernel is only read; params are written (outputs) during the call.

#include <cstdint>
#include <vector>

#include "core/ir/tensor.h"
#include "core/lower/kernel_ir.h"
#include "core/support/expected.h"

namespace tessera::lower {

struct EvalOptions {
    /// Count executed operations into EvalStats (the counting rules of core/lower/counts.h).
    bool countOps = false;
    /// Stop with an error after this many executed statements; 0 = no limit.
    std::int64_t maxSteps = 0;
};

/// What one run executed. The op and byte fields are filled only with EvalOptions::countOps.
struct EvalStats {
    std::int64_t steps = 0;  ///< executed statements (Store, Let, If, loop iterations ...)
    double flops = 0;
    std::int64_t loadBytes = 0, storeBytes = 0;              ///< Global scope
    std::int64_t sharedLoadBytes = 0, sharedStoreBytes = 0;  ///< Shared scope
    std::int64_t localLoadBytes = 0, localStoreBytes = 0;    ///< Local scope
};

/// Runs `k`. params[i] is the tensor of buffer k.params[i]: inputs must have the buffer's dtype
/// and element count (dims are not compared beyond that); an output whose dtype or byte size does
/// not match is reset to the buffer's dtype and shape, zero-filled, before the run (one that
/// matches keeps its contents). Null pointers are errors.
support::Expected<EvalStats> evalKernel(const Kernel& k, const std::vector<ir::TensorData*>& params,
                                        const EvalOptions& options = {});

/// IEEE half / bfloat16 conversions used by the interpreter (round to nearest even), exposed for
/// tests of the generated helpers.
std::uint16_t floatToHalfBits(float f);
float halfBitsToFloat(std::uint16_t h);
std::uint16_t floatToBf16Bits(float f);
float bf16BitsToFloat(std::uint16_t b);

}  // namespace tessera::lower
