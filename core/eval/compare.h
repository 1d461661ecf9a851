#pragma once
/// @file
/// Element-wise comparison of a computed tensor (a generated kernel's output, or the reference
/// interpreter's) with an expected one, with per-dtype tolerances. Used by the pipeline to check
/// every kernel against the reference interpreter and by the ONNX conformance runner.
///
/// Semantics
/// - Shapes must be equal (dims compared exactly; a scalar [] differs from [1]). On a shape
///   mismatch no element is compared: shapeMismatch = true, ok = false, the numbers stay 0.
/// - Dtypes must be equal, else dtypeMismatch = true and ok = false; the elements are still
///   compared (as doubles), so the report says how far the values are.
/// - Floating-point expected tensors (f16, bf16, f32, f64): element i is *bad* when
///   |a - e| > absTol + relTol * |e| (numpy's isclose rule). NaN equals NaN; NaN against a number
///   is bad. +inf equals +inf and -inf equals -inf; an infinity against anything else is bad.
/// - Integer and bool expected tensors are compared exactly (as int64; u64 above 2^63 compares
///   by bit pattern), whatever the options say; relL2 and maxAbs are still reported.
/// - relL2 = ||a - e||_2 / max(||e||_2, 1e-30), both norms over the elements where a and e are
///   both finite; maxAbs = max |a - e| over the same elements (0 when there are none). When any
///   element is a non-finite mismatch (NaN or inf in one tensor, not the same value in the other:
///   nonFiniteMismatches > 0), relL2 and maxAbs are +inf: the error is unbounded, and a figure of
///   0 from the finite pairs alone would read as a match.
/// - firstBad*: the lowest flat (row-major) index of a bad element, its coordinates and both
///   values; firstBadIndex = -1 and firstBadCoord empty when there is none.
/// - ok = !shapeMismatch && !dtypeMismatch && beyondTolerance == 0.
///
/// Thread rules: pure functions over their arguments; any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/tensor.h"

namespace tessera::eval {

struct CompareOptions {
    double relTol = 1e-4;  ///< relative tolerance, scaled by |expected|
    double absTol = 1e-6;  ///< absolute tolerance (same unit as the elements)
};

/// Tolerances for an expected tensor of dtype `t`:
/// f64: rel 1e-7, abs 1e-12; f32 (and anything not listed): rel 1e-4, abs 1e-6;
/// f16: rel 1e-2, abs 1e-3; bf16: rel 2e-2, abs 1e-2. Integer and bool types are compared
/// exactly regardless (the returned tolerances are 0).
CompareOptions defaultCompareOptions(ir::DType t);

struct TensorComparison {
    double relL2 = 0;                    ///< relative L2 error (see file comment)
    double maxAbs = 0;                   ///< largest |actual - expected| over finite pairs
    std::int64_t beyondTolerance = 0;    ///< number of bad elements
    std::int64_t nonFiniteMismatches = 0;  ///< bad elements where either value is NaN or inf
    std::int64_t compared = 0;           ///< number of elements compared (0 on a shape mismatch)
    std::int64_t firstBadIndex = -1;     ///< flat row-major index of the first bad element, -1 none
    std::vector<std::int64_t> firstBadCoord;  ///< its coordinates (empty when none)
    double firstBadActual = 0, firstBadExpected = 0;
    bool shapeMismatch = false;
    std::vector<std::int64_t> actualDims, expectedDims;  ///< set only on a shape mismatch
    bool dtypeMismatch = false;
    bool ok = false;

    /// One line: "ok (relL2 1.2e-08, maxAbs 3e-07)" or "3 of 120 elements beyond tolerance, first
    /// at [0,1,4]: 0.5 vs 0.25 expected (relL2 ..., maxAbs ...)" or "shape [2,3] vs [3,2] expected"
    /// (an unreadable tensor: "unreadable tensor data").
    std::string summary() const;
};

/// Compares `actual` with `expected` (see the file comment). Tensors whose byte size does not
/// match their dims, or String tensors, compare as a shape mismatch (nothing readable).
TensorComparison compareTensors(const ir::TensorData& actual, const ir::TensorData& expected,
                                const CompareOptions& options);
/// Same with defaultCompareOptions(expected.dtype).
TensorComparison compareTensors(const ir::TensorData& actual, const ir::TensorData& expected);

}  // namespace tessera::eval
