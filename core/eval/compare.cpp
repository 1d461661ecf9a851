#include "core/eval/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace tessera::eval {

using ir::DType;

namespace {

std::string dimsText(const std::vector<std::int64_t>& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
}

std::string num(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", x);
    return buf;
}

bool exactType(DType t) { return ir::isInteger(t) || t == DType::Bool; }

bool readable(const ir::TensorData& t) { return t.dtype != DType::String && t.dtype != DType::Undefined && t.sizeConsistent(); }

}  // namespace

CompareOptions defaultCompareOptions(DType t) {
    switch (t) {
    case DType::F64: return {1e-7, 1e-12};
    case DType::F16: return {1e-2, 1e-3};
    case DType::BF16: return {2e-2, 1e-2};
    default: break;
    }
    if (exactType(t)) return {0.0, 0.0};
    return {};
}

std::string TensorComparison::summary() const {
    if (shapeMismatch)
        return actualDims == expectedDims ? "unreadable tensor data"
                                          : "shape " + dimsText(actualDims) + " vs " + dimsText(expectedDims) + " expected";
    std::string norms = "relL2 " + num(relL2) + ", maxAbs " + num(maxAbs);
    if (ok) return "ok (" + norms + ")";
    std::string s;
    if (dtypeMismatch) s = "dtype mismatch; ";
    if (beyondTolerance > 0)
        s += std::to_string(beyondTolerance) + " of " + std::to_string(compared) + " elements beyond tolerance" +
             (nonFiniteMismatches > 0 ? " (" + std::to_string(nonFiniteMismatches) + " non-finite)" : std::string()) +
             ", first at " + dimsText(firstBadCoord) + ": " + num(firstBadActual) + " vs " + num(firstBadExpected) +
             " expected (" + norms + ")";
    else
        s += "values within tolerance (" + norms + ")";
    return s;
}

TensorComparison compareTensors(const ir::TensorData& actual, const ir::TensorData& expected,
                                const CompareOptions& options) {
    TensorComparison r;
    if (!readable(actual) || !readable(expected) || actual.dims != expected.dims) {
        r.shapeMismatch = true;
        if (actual.dims != expected.dims) {
            r.actualDims = actual.dims;
            r.expectedDims = expected.dims;
        }
        return r;
    }
    r.dtypeMismatch = actual.dtype != expected.dtype;
    const bool exact = exactType(expected.dtype);
    const bool exactBoth = exact && exactType(actual.dtype);
    const std::int64_t n = expected.numElements();
    r.compared = n;
    double diff2 = 0, ref2 = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const double a = actual.elementAsDouble(i), e = expected.elementAsDouble(i);
        bool bad = false;
        if (exactBoth) {
            bad = actual.elementAsInt(i) != expected.elementAsInt(i);
        } else if (std::isnan(a) || std::isnan(e)) {
            bad = !(std::isnan(a) && std::isnan(e));
        } else if (std::isinf(a) || std::isinf(e)) {
            bad = a != e;
        } else if (exact) {
            bad = a != e;
        } else {
            bad = std::fabs(a - e) > options.absTol + options.relTol * std::fabs(e);
        }
        if (std::isfinite(a) && std::isfinite(e)) {
            const double d = a - e;
            diff2 += d * d;
            ref2 += e * e;
            r.maxAbs = std::max(r.maxAbs, std::fabs(d));
        }
        if (!bad) continue;
        if (!std::isfinite(a) || !std::isfinite(e)) ++r.nonFiniteMismatches;
        if (r.beyondTolerance++ == 0) {
            r.firstBadIndex = i;
            r.firstBadActual = a;
            r.firstBadExpected = e;
        }
    }
    r.relL2 = std::sqrt(diff2) / std::max(std::sqrt(ref2), 1e-30);
    // A NaN or inf where the reference has a number (or the other way round) is an unbounded
    // error: the figures say so instead of reporting the finite pairs alone (which can be 0).
    if (r.nonFiniteMismatches > 0) r.relL2 = r.maxAbs = std::numeric_limits<double>::infinity();
    if (r.firstBadIndex >= 0) {
        r.firstBadCoord.assign(expected.dims.size(), 0);
        std::int64_t rem = r.firstBadIndex;
        for (std::size_t d = expected.dims.size(); d-- > 0;) {
            r.firstBadCoord[d] = rem % expected.dims[d];
            rem /= expected.dims[d];
        }
    }
    r.ok = !r.dtypeMismatch && r.beyondTolerance == 0;
    return r;
}

TensorComparison compareTensors(const ir::TensorData& actual, const ir::TensorData& expected) {
    return compareTensors(actual, expected, defaultCompareOptions(expected.dtype));
}

}  // namespace tessera::eval
