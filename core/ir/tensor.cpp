#include "core/ir/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace tessera::ir {

namespace {

template <typename T>
T load(const std::vector<std::uint8_t>& bytes, std::int64_t i) {
    T v;
    std::memcpy(&v, bytes.data() + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
    return v;
}

float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = (h >> 15) & 1u;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t mant = h & 0x3ffu;
    float v;
    if (exp == 0) {
        v = std::ldexp(static_cast<float>(mant), -24);
    } else if (exp == 31) {
        v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    } else {
        v = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
    }
    return sign ? -v : v;
}

float bf16ToFloat(std::uint16_t b) {
    std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

}  // namespace

std::string TensorType::str() const { return std::string(dtypeName(dtype)) + shape.str(); }

std::int64_t TensorData::numElements() const {
    std::int64_t n = 1;
    for (auto d : dims) {
        if (d < 0) return 0;
        if (__builtin_mul_overflow(n, d, &n)) return 0;
    }
    return n;
}

bool TensorData::isShapeOnly() const {
    for (auto d : dims)
        if (d < 0) return false;
    return dtype != DType::Undefined && bytes.empty() && strings.empty() && numElements() > 0;
}

bool TensorData::sizeConsistent() const {
    for (auto d : dims)
        if (d < 0) return false;
    const std::int64_t n = numElements();
    if (dtype == DType::String) return static_cast<std::int64_t>(strings.size()) == n;
    const std::size_t es = dtypeSize(dtype);
    if (es == 0) return false;
    std::int64_t expected = 0;
    if (__builtin_mul_overflow(n, static_cast<std::int64_t>(es), &expected)) return false;
    return static_cast<std::int64_t>(bytes.size()) == expected;
}

double TensorData::elementAsDouble(std::int64_t i) const {
    switch (dtype) {
        case DType::F16: return halfToFloat(load<std::uint16_t>(bytes, i));
        case DType::BF16: return bf16ToFloat(load<std::uint16_t>(bytes, i));
        case DType::F32: return load<float>(bytes, i);
        case DType::F64: return load<double>(bytes, i);
        case DType::I8: return load<std::int8_t>(bytes, i);
        case DType::I16: return load<std::int16_t>(bytes, i);
        case DType::I32: return load<std::int32_t>(bytes, i);
        case DType::I64: return static_cast<double>(load<std::int64_t>(bytes, i));
        case DType::U8: return load<std::uint8_t>(bytes, i);
        case DType::U16: return load<std::uint16_t>(bytes, i);
        case DType::U32: return load<std::uint32_t>(bytes, i);
        case DType::U64: return static_cast<double>(load<std::uint64_t>(bytes, i));
        case DType::Bool: return load<std::uint8_t>(bytes, i) ? 1.0 : 0.0;
        case DType::Complex64: return load<float>(bytes, 2 * i);
        case DType::Complex128: return load<double>(bytes, 2 * i);
        default: return 0.0;
    }
}

std::int64_t TensorData::elementAsInt(std::int64_t i) const {
    switch (dtype) {
        case DType::I64: return load<std::int64_t>(bytes, i);
        case DType::U64: return static_cast<std::int64_t>(load<std::uint64_t>(bytes, i));
        case DType::I32: return load<std::int32_t>(bytes, i);
        default: {
            const double d = elementAsDouble(i);
            if (!std::isfinite(d)) return 0;
            if (d >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
            if (d <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
            return static_cast<std::int64_t>(d);
        }
    }
}

std::vector<double> TensorData::toDoubles() const {
    std::vector<double> out;
    if (!sizeConsistent() || dtype == DType::String) return out;
    const auto n = numElements();
    out.reserve(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) out.push_back(elementAsDouble(i));
    return out;
}

std::vector<std::int64_t> TensorData::toInts() const {
    std::vector<std::int64_t> out;
    if (!sizeConsistent() || dtype == DType::String) return out;
    const auto n = numElements();
    out.reserve(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) out.push_back(elementAsInt(i));
    return out;
}

TensorType TensorData::type() const {
    TensorType t;
    t.dtype = dtype;
    t.shape = Shape::ofKnown(dims);
    return t;
}

TensorData TensorData::fromFloats(const std::vector<float>& v, std::vector<std::int64_t> dims) {
    TensorData t;
    t.dtype = DType::F32;
    t.dims = std::move(dims);
    t.bytes.resize(v.size() * sizeof(float));
    if (!v.empty()) std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
    return t;
}

TensorData TensorData::fromInts(const std::vector<std::int64_t>& v, std::vector<std::int64_t> dims) {
    TensorData t;
    t.dtype = DType::I64;
    t.dims = std::move(dims);
    t.bytes.resize(v.size() * sizeof(std::int64_t));
    if (!v.empty()) std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
    return t;
}

TensorStats computeStats(const TensorData& t, int bins) {
    TensorStats s;
    if (!t.sizeConsistent() || t.dtype == DType::String || t.dtype == DType::Undefined) return s;
    const auto n = t.numElements();
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const double v = t.elementAsDouble(i);
        if (!std::isfinite(v)) {
            ++s.nonFinite;
            continue;
        }
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        sum += v;
        ++s.count;
    }
    if (s.count == 0) return s;
    s.min = lo;
    s.max = hi;
    s.mean = sum / static_cast<double>(s.count);
    bins = std::max(1, bins);
    s.histogram.assign(static_cast<std::size_t>(bins), 0);
    const double width = (hi - lo) / bins;
    for (std::int64_t i = 0; i < n; ++i) {
        const double v = t.elementAsDouble(i);
        if (!std::isfinite(v)) continue;
        int b = width > 0 ? static_cast<int>((v - lo) / width) : 0;
        b = std::clamp(b, 0, bins - 1);
        ++s.histogram[static_cast<std::size_t>(b)];
    }
    return s;
}

}  // namespace tessera::ir
