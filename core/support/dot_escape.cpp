#include "core/support/dot_escape.h"

#include <cstdint>

namespace tessera::support {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

/// Decodes one UTF-8 code point starting at text[i]; advances i. Invalid or overlong sequences
/// and surrogates give U+FFFD and consume one byte.
char32_t decodeUtf8(const std::string& text, std::size_t& i) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    if (b0 < 0x80) {
        ++i;
        return b0;
    }
    int len = 0;
    char32_t cp = 0;
    if ((b0 & 0xE0) == 0xC0) {
        len = 2;
        cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3;
        cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4;
        cp = b0 & 0x07;
    } else {
        ++i;
        return kReplacement;
    }
    if (i + static_cast<std::size_t>(len) > text.size()) {
        ++i;
        return kReplacement;
    }
    for (int k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
        if ((b & 0xC0) != 0x80) {
            ++i;
            return kReplacement;
        }
        cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        ++i;
        return kReplacement;
    }
    i += static_cast<std::size_t>(len);
    return cp;
}

}  // namespace

std::string escapeDotString(const std::string& text) {
    std::string out;
    out.reserve(text.size() + 8);
    for (std::size_t i = 0; i < text.size();) {
        const char32_t cp = decodeUtf8(text, i);
        switch (cp) {
            case U'"': out += "\\\""; break;
            case U'\\': out += "\\\\"; break;
            case U'\n': out += "\\n"; break;
            // '&' would start an HTML entity in a DOT string.
            case U'&': out += "&amp;"; break;
            default:
                if (cp < 0x20 || cp == 0x7F) {
                    out += ' ';
                } else if (cp < 0x80) {
                    out += static_cast<char>(cp);
                } else {
                    out += "&#" + std::to_string(static_cast<std::uint32_t>(cp)) + ";";
                }
        }
    }
    return out;
}

}  // namespace tessera::support
