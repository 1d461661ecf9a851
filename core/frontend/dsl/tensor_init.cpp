#include "core/frontend/dsl/tensor_init.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace tessera::frontend::dsl {

namespace {

std::uint16_t floatToHalf(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t absx = x & 0x7FFFFFFFu;
    if (absx >= 0x7F800000u)
        return static_cast<std::uint16_t>(sign | (absx > 0x7F800000u ? 0x7E00u : 0x7C00u));
    if (absx >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds to inf
    if (absx < 0x38800000u) {
        // Subnormal half (or zero): value = absx as float / 2^-24, rounded to nearest even.
        if (absx < 0x33000000u) return static_cast<std::uint16_t>(sign);
        const std::uint32_t mant = (absx & 0x7FFFFFu) | 0x800000u;
        const int shift = 113 - static_cast<int>(absx >> 23) + 13;  // bits to drop
        std::uint32_t h = mant >> shift;
        const std::uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1u))) ++h;
        return static_cast<std::uint16_t>(sign | h);
    }
    std::uint32_t h = ((absx >> 23) - 112) << 10 | ((absx >> 13) & 0x3FFu);
    const std::uint32_t rem = absx & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
}

std::uint16_t floatToBf16(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
    const std::uint32_t lsb = (x >> 16) & 1u;
    x += 0x7FFFu + lsb;
    return static_cast<std::uint16_t>(x >> 16);
}

template <typename T>
void put(ir::TensorData& t, std::int64_t i, T v) {
    const std::size_t off = static_cast<std::size_t>(i) * sizeof(T);
    if (off + sizeof(T) > t.bytes.size()) return;
    std::memcpy(t.bytes.data() + off, &v, sizeof(T));
}

template <typename T>
T clampTo(double v) {
    if (std::isnan(v)) return 0;
    v = std::trunc(v);
    if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
}

template <typename T>
T clampInt(std::int64_t v) {
    if constexpr (std::is_unsigned_v<T>) {
        if (v < 0) return 0;
        if (static_cast<std::uint64_t>(v) > std::numeric_limits<T>::max())
            return std::numeric_limits<T>::max();
        return static_cast<T>(v);
    } else {
        if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()))
            return std::numeric_limits<T>::min();
        if (v > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
            return std::numeric_limits<T>::max();
        return static_cast<T>(v);
    }
}

}  // namespace

std::optional<ir::TensorData> makeZeroTensor(ir::DType dtype, const std::vector<std::int64_t>& dims,
                                             std::int64_t maxBytes, std::string& error) {
    ir::TensorData t;
    t.dtype = dtype;
    t.dims = dims;
    std::int64_t n = 1;
    for (auto d : dims) {
        if (d < 0) {
            error = "negative extent";
            return std::nullopt;
        }
        if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d) {
            error = "element count overflows";
            return std::nullopt;
        }
        n *= d;
    }
    if (dtype == ir::DType::String) {
        if (n > maxBytes / 32) {
            error = "string tensor too large";
            return std::nullopt;
        }
        t.strings.assign(static_cast<std::size_t>(n), std::string());
        return t;
    }
    const auto size = static_cast<std::int64_t>(ir::dtypeSize(dtype));
    if (size == 0) {
        error = "dtype " + std::string(ir::dtypeName(dtype)) + " cannot hold constant data here";
        return std::nullopt;
    }
    if (n > maxBytes / size) {
        error = "tensor of " + std::to_string(n) + " elements (" + std::string(ir::dtypeName(dtype)) +
                ") exceeds the limit of " + std::to_string(maxBytes) + " bytes";
        return std::nullopt;
    }
    t.bytes.assign(static_cast<std::size_t>(n * size), 0);
    return t;
}

void storeElement(ir::TensorData& t, std::int64_t i, double v) {
    using D = ir::DType;
    switch (t.dtype) {
        case D::F32:
            put(t, i, static_cast<float>(v));
            break;
        case D::F64:
            put(t, i, v);
            break;
        case D::F16:
            put(t, i, floatToHalf(static_cast<float>(v)));
            break;
        case D::BF16:
            put(t, i, floatToBf16(static_cast<float>(v)));
            break;
        case D::I8:
            put(t, i, clampTo<std::int8_t>(v));
            break;
        case D::I16:
            put(t, i, clampTo<std::int16_t>(v));
            break;
        case D::I32:
            put(t, i, clampTo<std::int32_t>(v));
            break;
        case D::I64:
            put(t, i, clampTo<std::int64_t>(v));
            break;
        case D::U8:
            put(t, i, clampTo<std::uint8_t>(v));
            break;
        case D::U16:
            put(t, i, clampTo<std::uint16_t>(v));
            break;
        case D::U32:
            put(t, i, clampTo<std::uint32_t>(v));
            break;
        case D::U64:
            put(t, i, clampTo<std::uint64_t>(v));
            break;
        case D::Bool:
            put(t, i, static_cast<std::uint8_t>(v != 0.0 ? 1 : 0));
            break;
        default:
            break;
    }
}

void storeIntElement(ir::TensorData& t, std::int64_t i, std::int64_t v) {
    using D = ir::DType;
    switch (t.dtype) {
        case D::I8:
            put(t, i, clampInt<std::int8_t>(v));
            break;
        case D::I16:
            put(t, i, clampInt<std::int16_t>(v));
            break;
        case D::I32:
            put(t, i, clampInt<std::int32_t>(v));
            break;
        case D::I64:
            put(t, i, v);
            break;
        case D::U8:
            put(t, i, clampInt<std::uint8_t>(v));
            break;
        case D::U16:
            put(t, i, clampInt<std::uint16_t>(v));
            break;
        case D::U32:
            put(t, i, clampInt<std::uint32_t>(v));
            break;
        case D::U64:
            put(t, i, clampInt<std::uint64_t>(v));
            break;
        default:
            storeElement(t, i, static_cast<double>(v));
            break;
    }
}

std::uint64_t SplitMix64::next() {
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double SplitMix64::uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

void fillRandom(ir::TensorData& t, std::uint64_t seed, double low, double high) {
    SplitMix64 rng(seed);
    const std::int64_t n = t.numElements();
    for (std::int64_t i = 0; i < n; ++i) {
        const double v = low + rng.uniform() * (high - low);
        if (t.dtype == ir::DType::Bool)
            storeElement(t, i, v >= 0 ? 1.0 : 0.0);
        else if (ir::isInteger(t.dtype))
            storeElement(t, i, std::floor(v));
        else
            storeElement(t, i, v);
    }
}

}  // namespace tessera::frontend::dsl
