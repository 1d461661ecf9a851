#pragma once
/// @file
/// The data behind the Check dock's error heatmap (ErrorHeatmapView): a failing kernel's outputs,
/// each with what the kernel computed ("got"), what the reference interpreter computed from the
/// same inputs ("want") and the tolerances of the check (core/pipeline/run.h, OutputCheck), and
/// the pure functions that turn them into the 2-D image the view draws.
///
/// Semantics
/// - Error of an element: Absolute |got - want|; Relative |got - want| / max(|want|, floor) with
///   floor = absTol / relTol (the magnitude below which the check's tolerance is absolute; for a
///   checked f32 run that is the expected tensor's RMS, so near-zero expected values do not blow
///   the scale up) or, when relTol is 0, 1e-30. NaN when exactly one of got/want is NaN, or when
///   they are infinities that differ; 0 when both are NaN or the same infinity.
/// - Bad element: the check's rule (eval::compareTensors): |got - want| > absTol + relTol·|want|.
///   firstBad is the row-major first bad element.
/// - Statistics (maxError, meanError) are over the whole tensor in the chosen mode and over the
///   finite errors only; nonFinite counts the NaN errors.
/// - A slice (SliceSpec) picks two axes of the tensor as image rows and columns and fixes every
///   other axis at an index. Rank 1 is one row (rowAxis -1); rank 0 one cell. Cells are row-major
///   (row r, column c at r·cols + c). defaultSlice() shows the last two axes of extent > 1 through
///   the first bad element (or through index 0 when none): [1,32,1,1] is one row of 32 cells.
///
/// Thread rules: plain values and pure functions; any thread.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/eval/compare.h"
#include "core/ir/tensor.h"

namespace tessera::views {

enum class ErrorMode { Absolute, Relative };

/// One output of a failing kernel.
struct ErrorTensor {
    std::string name;
    std::shared_ptr<const ir::TensorData> got, want;  ///< null when the run did not keep them
    eval::CompareOptions tolerance;
    std::string note;  ///< why there is no data, or the check's summary
};

/// What the Check dock shows: a kernel and its checked outputs.
struct ErrorHeatmapSnapshot {
    std::string kernel;  ///< KernelReport::name
    std::string opType;
    std::vector<ErrorTensor> outputs;  ///< failing outputs first, then the others
    std::string note;                  ///< e.g. why no data was kept
    bool canRerun = false;             ///< the kernel's inputs were kept
};

/// Which two axes form the image, and the index of every other axis.
struct SliceSpec {
    int rowAxis = -1;                  ///< -1: one row (rank < 2)
    int colAxis = -1;                  ///< -1: one column (rank 0)
    std::vector<std::int64_t> index;   ///< one per axis; the entries of rowAxis/colAxis are ignored
};

struct ErrorSlice {
    std::int64_t rows = 0, cols = 0;
    std::vector<double> cells;         ///< rows x cols, row-major; NaN where the error is
    std::vector<std::int64_t> flat;    ///< the tensor's flat index of each cell
};

struct ErrorStats {
    double maxError = 0, meanError = 0;
    std::int64_t elements = 0;
    std::int64_t nonFinite = 0;
    std::int64_t bad = 0;                     ///< elements beyond tolerance
    std::int64_t firstBad = -1;               ///< flat index, -1 when none
    std::vector<std::int64_t> firstBadCoord;  ///< its coordinates
    double firstBadGot = 0, firstBadWant = 0;
};

/// The error of one element pair (see the file comment).
double elementError(double got, double want, ErrorMode mode, const eval::CompareOptions& tolerance);
/// Statistics of a tensor pair; all zero (firstBad -1) when either is missing or the shapes
/// differ.
ErrorStats errorStats(const ErrorTensor& t, ErrorMode mode);
/// The slice through the first bad element (see the file comment).
SliceSpec defaultSlice(const ErrorTensor& t);
/// The cells of slice `s`; empty when data is missing, the shapes differ, or `s` is invalid
/// (axes out of range or equal, an index out of range, index of the wrong length).
ErrorSlice errorSlice(const ErrorTensor& t, const SliceSpec& s, ErrorMode mode);
/// The values of `t` in slice `s` (cells hold elements, not errors); empty as errorSlice.
ErrorSlice valueSlice(const ir::TensorData& t, const SliceSpec& s);
/// Coordinates of flat index `flat` in a row-major tensor of `dims`.
std::vector<std::int64_t> unflatten(std::int64_t flat, const std::vector<std::int64_t>& dims);
/// "[0, 1, 4]".
std::string coordText(const std::vector<std::int64_t>& coord);

}  // namespace tessera::views
