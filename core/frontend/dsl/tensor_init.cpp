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

std::optional<ir::TensorData> parseNpy(const std::string& bytes, std::string& error) {
    if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
        error = "not a .npy file (bad magic)";
        return std::nullopt;
    }
    const unsigned major = static_cast<unsigned char>(bytes[6]);
    std::size_t headerLen = 0, pos = 0;
    if (major == 1) {
        headerLen = static_cast<unsigned char>(bytes[8]) |
                    (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
        pos = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) {
            error = "truncated .npy header";
            return std::nullopt;
        }
        for (int k = 3; k >= 0; --k)
            headerLen = (headerLen << 8) | static_cast<unsigned char>(bytes[8 + static_cast<std::size_t>(k)]);
        pos = 12;
    } else {
        error = ".npy format version " + std::to_string(major) + " is not supported";
        return std::nullopt;
    }
    if (headerLen > 1u << 20 || pos + headerLen > bytes.size()) {
        error = "truncated .npy header";
        return std::nullopt;
    }
    const std::string header = bytes.substr(pos, headerLen);
    pos += headerLen;
    auto valueOf = [&](const std::string& key) -> std::string {
        const std::size_t k = header.find("'" + key + "'");
        if (k == std::string::npos) return {};
        std::size_t c = header.find(':', k);
        if (c == std::string::npos) return {};
        ++c;
        while (c < header.size() && header[c] == ' ') ++c;
        if (c >= header.size()) return {};
        const char open = header[c];
        const char close = open == '(' ? ')' : open == '\'' ? '\'' : ',';
        const std::size_t e = header.find(close, c + 1);
        if (e == std::string::npos) return header.substr(c);
        return header.substr(c, e - c + 1);
    };
    std::string descr = valueOf("descr");
    const std::string fortran = valueOf("fortran_order");
    const std::string shape = valueOf("shape");
    if (descr.size() < 4 || descr.front() != '\'' || shape.empty() || shape.front() != '(') {
        error = "cannot read the .npy header";
        return std::nullopt;
    }
    descr = descr.substr(1, descr.size() - 2);
    if (fortran.rfind("True", 0) == 0) {
        error = ".npy file is in Fortran order; save it with np.ascontiguousarray";
        return std::nullopt;
    }
    if (descr.size() < 3 || descr[0] == '>') {
        error = ".npy dtype '" + descr + "' is not supported (little-endian numeric types only)";
        return std::nullopt;
    }
    const std::string code = descr.substr(1);
    using D = ir::DType;
    D dt = D::Undefined;
    if (code == "f2")
        dt = D::F16;
    else if (code == "f4")
        dt = D::F32;
    else if (code == "f8")
        dt = D::F64;
    else if (code == "i1")
        dt = D::I8;
    else if (code == "i2")
        dt = D::I16;
    else if (code == "i4")
        dt = D::I32;
    else if (code == "i8")
        dt = D::I64;
    else if (code == "u1")
        dt = D::U8;
    else if (code == "u2")
        dt = D::U16;
    else if (code == "u4")
        dt = D::U32;
    else if (code == "u8")
        dt = D::U64;
    else if (code == "b1")
        dt = D::Bool;
    if (dt == D::Undefined) {
        error = ".npy dtype '" + descr + "' is not supported";
        return std::nullopt;
    }
    std::vector<std::int64_t> dims;
    std::int64_t cur = -1;
    for (std::size_t i = 1; i < shape.size(); ++i) {
        const char c = shape[i];
        if (c >= '0' && c <= '9') {
            if (cur < 0) cur = 0;
            if (cur > (std::numeric_limits<std::int64_t>::max() - 9) / 10) {
                error = ".npy shape overflows";
                return std::nullopt;
            }
            cur = cur * 10 + (c - '0');
        } else if (c == ',' || c == ')') {
            if (cur >= 0) dims.push_back(cur);
            cur = -1;
            if (c == ')') break;
        } else if (c != ' ' && c != 'L') {
            error = "cannot read the .npy shape";
            return std::nullopt;
        }
    }
    std::string err;
    auto t = makeZeroTensor(dt, dims, static_cast<std::int64_t>(bytes.size()), err);
    if (!t || t->bytes.size() > bytes.size() - pos) {
        error = "the .npy file holds fewer bytes than its shape needs";
        return std::nullopt;
    }
    std::memcpy(t->bytes.data(), bytes.data() + pos, t->bytes.size());
    return t;
}

}  // namespace tessera::frontend::dsl
