#include "views/debug/error_heatmap.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera::views {
namespace {

bool usable(const ErrorTensor& t)
{
    return t.got && t.want && t.got->dims == t.want->dims && t.got->sizeConsistent() && t.want->sizeConsistent() &&
           t.got->strings.empty();
}

std::vector<std::int64_t> stridesOf(const std::vector<std::int64_t>& dims)
{
    std::vector<std::int64_t> strides(dims.size(), 1);
    for (std::size_t i = dims.size(); i-- > 1;)
        strides[i - 1] = strides[i] * dims[i];
    return strides;
}

/// Flat indices of the slice's cells, row-major; false when the spec does not fit `dims`.
bool sliceIndices(const std::vector<std::int64_t>& dims, const SliceSpec& s, ErrorSlice& out)
{
    const int rank = static_cast<int>(dims.size());
    if (static_cast<int>(s.index.size()) != rank)
        return false;
    if (rank == 0) {
        if (s.rowAxis != -1 || s.colAxis != -1)
            return false;
        out.rows = out.cols = 1;
        out.flat = {0};
        return true;
    }
    if (s.colAxis < 0 || s.colAxis >= rank || s.rowAxis >= rank || s.rowAxis == s.colAxis ||
        (s.rowAxis < 0 && rank >= 2) || s.rowAxis < -1)
        return false;
    const auto strides = stridesOf(dims);
    std::int64_t base = 0;
    for (int a = 0; a < rank; ++a) {
        if (a == s.rowAxis || a == s.colAxis)
            continue;
        if (s.index[static_cast<std::size_t>(a)] < 0 || s.index[static_cast<std::size_t>(a)] >= dims[static_cast<std::size_t>(a)])
            return false;
        base += s.index[static_cast<std::size_t>(a)] * strides[static_cast<std::size_t>(a)];
    }
    out.rows = s.rowAxis < 0 ? 1 : dims[static_cast<std::size_t>(s.rowAxis)];
    out.cols = dims[static_cast<std::size_t>(s.colAxis)];
    const std::int64_t rowStride = s.rowAxis < 0 ? 0 : strides[static_cast<std::size_t>(s.rowAxis)];
    const std::int64_t colStride = strides[static_cast<std::size_t>(s.colAxis)];
    out.flat.reserve(static_cast<std::size_t>(out.rows * out.cols));
    for (std::int64_t r = 0; r < out.rows; ++r)
        for (std::int64_t c = 0; c < out.cols; ++c)
            out.flat.push_back(base + r * rowStride + c * colStride);
    return true;
}

}  // namespace

double elementError(double got, double want, ErrorMode mode, const eval::CompareOptions& tolerance)
{
    const bool gn = std::isnan(got), wn = std::isnan(want);
    if (gn && wn)
        return 0;
    if (gn || wn)
        return std::numeric_limits<double>::quiet_NaN();
    if (std::isinf(got) || std::isinf(want))
        return got == want ? 0 : std::numeric_limits<double>::quiet_NaN();
    const double diff = std::fabs(got - want);
    if (mode == ErrorMode::Absolute)
        return diff;
    const double floor = tolerance.relTol > 0 ? tolerance.absTol / tolerance.relTol : 1e-30;
    return diff / std::max({std::fabs(want), floor, 1e-30});
}

ErrorStats errorStats(const ErrorTensor& t, ErrorMode mode)
{
    ErrorStats s;
    if (!usable(t))
        return s;
    const std::int64_t n = t.want->numElements();
    s.elements = n;
    double sum = 0;
    std::int64_t finite = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const double e = elementError(t.got->elementAsDouble(i), t.want->elementAsDouble(i), mode, t.tolerance);
        if (!std::isfinite(e)) {
            ++s.nonFinite;
            continue;
        }
        s.maxError = std::max(s.maxError, e);
        sum += e;
        ++finite;
    }
    s.meanError = finite > 0 ? sum / static_cast<double>(finite) : 0;
    // The same rule as the check, so the first bad element is the one the run reported.
    const eval::TensorComparison c = eval::compareTensors(*t.got, *t.want, t.tolerance);
    s.bad = c.beyondTolerance;
    s.firstBad = c.firstBadIndex;
    s.firstBadCoord = c.firstBadCoord;
    s.firstBadGot = c.firstBadActual;
    s.firstBadWant = c.firstBadExpected;
    return s;
}

SliceSpec defaultSlice(const ErrorTensor& t)
{
    SliceSpec s;
    if (!t.want)
        return s;
    const std::vector<std::int64_t>& dims = t.want->dims;
    const int rank = static_cast<int>(dims.size());
    s.index.assign(dims.size(), 0);
    if (usable(t)) {
        const eval::TensorComparison c = eval::compareTensors(*t.got, *t.want, t.tolerance);
        if (c.firstBadIndex >= 0 && c.firstBadCoord.size() == dims.size())
            s.index = c.firstBadCoord;
    }
    // The image spans the axes that have more than one element (the last two of them): a
    // [1,32,1,1] tensor is a row of 32 cells, not the one cell its last two axes would give.
    std::vector<int> wide;
    for (int d = 0; d < rank; ++d)
        if (dims[static_cast<std::size_t>(d)] > 1)
            wide.push_back(d);
    if (wide.size() >= 2) {
        s.rowAxis = wide[wide.size() - 2];
        s.colAxis = wide.back();
    } else if (wide.size() == 1) {
        s.colAxis = wide[0];
        // A row: the row axis is another axis of extent 1 when there is one (rank >= 2), so that
        // the slice still names two distinct axes.
        s.rowAxis = -1;
        for (int d = rank - 1; d >= 0; --d)
            if (d != wide[0]) {
                s.rowAxis = d;
                break;
            }
    } else {
        s.rowAxis = rank >= 2 ? rank - 2 : -1;
        s.colAxis = rank >= 1 ? rank - 1 : -1;
    }
    return s;
}

ErrorSlice errorSlice(const ErrorTensor& t, const SliceSpec& spec, ErrorMode mode)
{
    ErrorSlice out;
    if (!usable(t) || !sliceIndices(t.want->dims, spec, out))
        return {};
    out.cells.reserve(out.flat.size());
    for (std::int64_t f : out.flat)
        out.cells.push_back(elementError(t.got->elementAsDouble(f), t.want->elementAsDouble(f), mode, t.tolerance));
    return out;
}

ErrorSlice valueSlice(const ir::TensorData& t, const SliceSpec& spec)
{
    ErrorSlice out;
    if (!t.sizeConsistent() || !t.strings.empty() || !sliceIndices(t.dims, spec, out))
        return {};
    out.cells.reserve(out.flat.size());
    for (std::int64_t f : out.flat)
        out.cells.push_back(t.elementAsDouble(f));
    return out;
}

std::vector<std::int64_t> unflatten(std::int64_t flat, const std::vector<std::int64_t>& dims)
{
    std::vector<std::int64_t> coord(dims.size(), 0);
    for (std::size_t i = dims.size(); i-- > 0;) {
        if (dims[i] > 0) {
            coord[i] = flat % dims[i];
            flat /= dims[i];
        }
    }
    return coord;
}

std::string coordText(const std::vector<std::int64_t>& coord)
{
    std::string s = "[";
    for (std::size_t i = 0; i < coord.size(); ++i) {
        if (i)
            s += ", ";
        s += std::to_string(coord[i]);
    }
    return s + "]";
}

}  // namespace tessera::views
