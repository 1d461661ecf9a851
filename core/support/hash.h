#pragma once
/// @file
/// Content hashing for caches (compiled kernel libraries, layouts): 128-bit FNV-1a.
///
/// Not cryptographic: it guards against accidental collisions between contents Tessera itself
/// produced (generated sources, flags, compiler versions), not against an adversary. 128 bits make
/// an accidental collision within one cache practically impossible.
///
/// Thread rules: a Hasher is a plain value; use one instance from one thread at a time.

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::support {

/// Incremental 128-bit FNV-1a (offset basis and prime from the FNV specification).
class Hasher {
public:
    /// Feeds raw bytes.
    Hasher& update(std::string_view bytes) {
        for (const char c : bytes) {
            m_state ^= static_cast<unsigned char>(c);
            // The 128-bit FNV prime is 2^88 + 0x13B: the multiplication is a shift and a small product.
            m_state = (m_state << 88) + m_state * 0x13Bu;
        }
        return *this;
    }
    /// Feeds a field with its length first, so that ("ab","c") and ("a","bc") hash differently.
    Hasher& field(std::string_view bytes) {
        std::uint64_t n = bytes.size();
        char len[8];
        for (char& b : len) {
            b = static_cast<char>(n & 0xFFu);
            n >>= 8;
        }
        update(std::string_view(len, sizeof len));
        return update(bytes);
    }
    /// 32 lowercase hexadecimal digits, most significant first.
    std::string hex() const {
        static constexpr char kDigits[] = "0123456789abcdef";
        std::string out(32, '0');
        U128 v = m_state;
        for (int i = 31; i >= 0; --i) {
            out[static_cast<std::size_t>(i)] = kDigits[static_cast<unsigned>(v & 0xFu)];
            v >>= 4;
        }
        return out;
    }
    /// Low 64 bits of the state.
    std::uint64_t low64() const { return static_cast<std::uint64_t>(m_state); }

private:
    __extension__ typedef unsigned __int128 U128;
    static constexpr U128 kOffsetBasis =
        (static_cast<U128>(0x6c62272e07bb0142ull) << 64) | static_cast<U128>(0x62b821756295c58dull);
    U128 m_state = kOffsetBasis;
};

/// hex() of the 128-bit FNV-1a hash of `bytes`.
inline std::string hashHex(std::string_view bytes) { return Hasher().update(bytes).hex(); }

}  // namespace tessera::support
