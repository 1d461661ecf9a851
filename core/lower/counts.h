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
/// Method (CountMethod::ClosedForm): counting never enumerates iterations; its time does not
/// grow with the batch and grows only with the logarithm of other extents and with the periods
/// of the index maths (tile, image row and image sizes).
/// - Loops whose bodies do not depend on their variable multiply (products of extents).
/// - A loop whose variable reaches an If condition, a Select condition, a `&&`/`||` operand or a
///   nested loop extent (directly or through Lets) is counted over ranges of its iterations:
///   conditions are evaluated with interval arithmetic on the variables' ranges, and a range
///   over which they are uniform counts once times its length.
/// - A range whose conditions are not uniform is counted by whole periods when the body executes
///   the same way at v and v + L for every v of the range. That is proved symbolically, not by
///   trying iterations: every deciding expression either moves with v by a constant that cancels
///   (a comparison of two sides that move alike; `(v / W) % H` for L a multiple of W * H; `t % 32`
///   for L = 32; `b * 256 + t` taken apart by `/` and `%` for L with 256 L a multiple of the
///   divisors) or has one value over the whole range. One period counts, times the number of
///   whole periods, plus the rest.
/// - Otherwise the range is split on the guard: at a multiple of the period candidate nearest
///   its middle (so that `b / 13` style guards fall on whole blocks of the split), else in
///   halves. A monotone guard (conv borders, tail predicates, triangular loops) needs a number
///   of splits logarithmic in the extent; lane and warp guards are periodic.
/// - Cooperative loops `for t in 0..T { for i in 0..I { ... t + i * T ... } }` whose body uses t
///   and i only in that sum are counted as one loop over it, 0..T*I (the same iterations).
/// When a condition depends on data (a load, a float value), the If counts the larger of its
/// branches (component-wise max) and a Select the larger of its arms, and `exact` is false; a
/// loop extent that depends on data counts one iteration, `exact` false.
///
/// The other methods are the test oracles of the closed form and give the same counts:
/// CountMethod::Splitting splits non-uniform ranges in halves only (the method before periods:
/// down to single iterations under div/mod guards, so its time grows with the batch),
/// CountMethod::Enumerate visits every iteration of every loop (time proportional to the
/// iteration count: small shapes only). They could differ only where interval arithmetic gives
/// up on a range but not on its points (an index product past int64, a narrowing cast that wraps
/// for part of a range): such a range counts as data-dependent.
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

/// How countKernel counts (see "Method" above); the three give the same counts.
enum class CountMethod { ClosedForm, Splitting, Enumerate };

KernelCounts countKernel(const Kernel& k, CountMethod method = CountMethod::ClosedForm);

}  // namespace tessera::lower
