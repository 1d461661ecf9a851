#pragma once
/// @file
/// Static operation and traffic counts of a kernel of the kernel IR (the inputs of the roofline
/// models in core/perf): what one execution of the kernel issues.
///
/// Counting rules
/// - FLOPs: every executed float operation (f16/bf16/f32/f64 operands) counts 1: + - * / (and
///   float Mod, FloorDiv, FloorMod), Min, Max, unary minus, and each intrinsic call (exp, sqrt,
///   sigmoid, pow ...); Fma counts 2. Comparisons, logic, Select, Casts, loads/stores and all
///   integer arithmetic (index maths) count 0.
/// - Bytes: every executed Load / Store counts dtypeSize of its buffer, by the buffer's scope:
///   Global -> loadBytes/storeBytes (the CARM view: traffic as issued, caches ignored), Shared ->
///   sharedLoadBytes/sharedStoreBytes, Local -> localLoadBytes/localStoreBytes (a Local scalar is a
///   register in generated code; it is still counted here).
/// - An Mma statement (kernel_ir.h) counts, per executing thread, 64 FLOPs (the warp's
///   2 * 16 * 8 * 8 useful FLOPs over its 32 lanes, whatever the precision: 3xTF32's extra
///   tensor-core work is not useful work), 4 A and 2 B operand loads and 4 loads and 4 stores of
///   the accumulator, each at its buffer's scope.
/// - compulsoryBytes: each Input parameter read once plus each Output parameter written once
///   (sum of their bytes): the DRAM view.
/// - Control flow as C executes it: an If counts its condition and the branch taken; a Select
///   counts its condition and the arm taken; `&&`/`||` skip their right operand when C does.
///
/// Exactness: loops with constant extents multiply. A loop whose variable reaches an If
/// condition, a Select condition, a `&&`/`||` operand or a nested loop extent (directly or
/// through Lets) is counted over ranges of its iterations: conditions are evaluated with interval
/// arithmetic on the variables' ranges, and a range whose conditions are not uniform is split in
/// halves (down to single iterations where needed). Guarded padding (conv borders), tail
/// predicates and triangular loops therefore count exactly, in time logarithmic in the extents
/// for affine guards. When a condition depends on data (a load, a float value), the If counts
/// the larger of its branches (component-wise max) and a Select the larger of its arms, and
/// `exact` is false; a loop extent that depends on data counts one iteration, `exact` false.
///
/// Thread rules: pure function of the kernel; safe from any thread.

#include <cstdint>

#include "core/lower/kernel_ir.h"

namespace tessera::lower {

struct KernelCounts {
    double flops = 0;
    std::int64_t loadBytes = 0, storeBytes = 0;              ///< Global scope, every executed access
    std::int64_t sharedLoadBytes = 0, sharedStoreBytes = 0;  ///< Shared scope
    std::int64_t localLoadBytes = 0, localStoreBytes = 0;    ///< Local scope
    std::int64_t compulsoryBytes = 0;  ///< Input params' bytes + Output params' bytes (each once)
    bool exact = true;                 ///< false when a data-dependent condition or extent was bounded
};

KernelCounts countKernel(const Kernel& k);

}  // namespace tessera::lower
