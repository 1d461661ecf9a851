#include "core/ir/npy.h"

#include <bit>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <system_error>
#include <unistd.h>

namespace tessera::ir {

static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;

support::DiagnosticList errorList(const std::string& file, const std::string& message) {
    support::DiagnosticList d;
    d.error(file, "", message);
    return d;
}

struct DescrEntry {
    const char* code;  ///< without the byte-order character
    DType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"f2", DType::F16}, {"f4", DType::F32}, {"f8", DType::F64},          {"i1", DType::I8},
    {"i2", DType::I16}, {"i4", DType::I32}, {"i8", DType::I64},          {"u1", DType::U8},
    {"u2", DType::U16}, {"u4", DType::U32}, {"u8", DType::U64},          {"b1", DType::Bool},
    {"c8", DType::Complex64},               {"c16", DType::Complex128},
};

/// The header dict, as far as .npy uses it.
struct Header {
    std::optional<std::string> descr;
    std::optional<bool> fortranOrder;
    std::optional<std::vector<std::int64_t>> shape;
};

/// A small parser for the Python literal in the header: a dict of string keys whose values are
/// strings, True/False, or tuples of non-negative integers. Anything else is an error.
class HeaderParser {
public:
    explicit HeaderParser(std::string_view text) : m_text(text) {}

    bool parse(Header& h, std::string& error) {
        skipSpace();
        if (!eat('{')) return fail(error, "expected '{'");
        for (;;) {
            skipSpace();
            if (eat('}')) break;
            std::string key;
            if (!parseString(key)) return fail(error, "expected a quoted key");
            skipSpace();
            if (!eat(':')) return fail(error, "expected ':' after '" + key + "'");
            skipSpace();
            if (key == "descr") {
                std::string v;
                if (peek() == '[') return fail(error, "structured dtypes (a list descr) are not supported");
                if (!parseString(v)) return fail(error, "'descr' is not a string");
                h.descr = v;
            } else if (key == "fortran_order") {
                if (match("True"))
                    h.fortranOrder = true;
                else if (match("False"))
                    h.fortranOrder = false;
                else
                    return fail(error, "'fortran_order' is not True or False");
            } else if (key == "shape") {
                std::vector<std::int64_t> dims;
                if (!parseTuple(dims, error)) return false;
                h.shape = dims;
            } else {
                return fail(error, "unexpected key '" + key + "'");
            }
            skipSpace();
            if (eat(',')) continue;
            skipSpace();
            if (eat('}')) break;
            return fail(error, "expected ',' or '}'");
        }
        skipSpace();
        if (m_pos != m_text.size()) return fail(error, "unexpected text after the dict");
        return true;
    }

private:
    char peek() const { return m_pos < m_text.size() ? m_text[m_pos] : '\0'; }
    bool eat(char c) {
        if (peek() != c) return false;
        ++m_pos;
        return true;
    }
    bool match(std::string_view word) {
        if (m_text.substr(m_pos, word.size()) != word) return false;
        m_pos += word.size();
        return true;
    }
    void skipSpace() {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos]))) ++m_pos;
    }
    bool parseString(std::string& out) {
        const char q = peek();
        if (q != '\'' && q != '"') return false;
        ++m_pos;
        const std::size_t end = m_text.find(q, m_pos);
        if (end == std::string_view::npos) return false;
        out = std::string(m_text.substr(m_pos, end - m_pos));
        m_pos = end + 1;
        return true;
    }
    bool parseTuple(std::vector<std::int64_t>& dims, std::string& error) {
        if (!eat('(')) return fail(error, "'shape' is not a tuple");
        for (;;) {
            skipSpace();
            if (eat(')')) return true;
            if (!std::isdigit(static_cast<unsigned char>(peek()))) return fail(error, "'shape' holds a non-integer");
            std::int64_t v = 0;
            while (std::isdigit(static_cast<unsigned char>(peek()))) {
                const int digit = m_text[m_pos++] - '0';
                if (v > (std::numeric_limits<std::int64_t>::max() - digit) / 10)
                    return fail(error, "a dimension in 'shape' is too large");
                v = v * 10 + digit;
            }
            if (eat('L')) {}  // Python 2 long suffix
            dims.push_back(v);
            skipSpace();
            if (eat(',')) continue;
            skipSpace();
            if (eat(')')) return true;
            return fail(error, "expected ',' or ')' in 'shape'");
        }
    }
    bool fail(std::string& error, const std::string& what) {
        error = what + " at offset " + std::to_string(m_pos) + " of the header";
        return false;
    }

    std::string_view m_text;
    std::size_t m_pos = 0;
};

std::string shapeText(DType dt, const std::vector<std::int64_t>& dims) {
    std::string s(dtypeName(dt));
    s += "[";
    for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
}

}  // namespace

std::string npyDescr(DType dtype) {
    for (const auto& e : kDescrs)
        if (e.dtype == dtype) return std::string(dtypeSize(dtype) == 1 ? "|" : "<") + e.code;
    return {};
}

namespace {

/// parseNpy's work; headerOnly: `bytes` is the start of a file of `fileBytes` bytes (at least its
/// whole header; the data is not read) and the result has no elements.
support::Expected<TensorData> parseNpyImpl(std::string_view bytes, const std::string& name, bool headerOnly,
                                               std::uint64_t fileBytes) {
    if (bytes.size() < kMagicLen + 2 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
        return errorList(name, "not a .npy file (bad magic: expected \\x93NUMPY)");
    const unsigned major = static_cast<unsigned char>(bytes[6]);
    const unsigned minor = static_cast<unsigned char>(bytes[7]);
    std::size_t headerLen = 0, pos = 0;
    if (major == 1) {
        if (bytes.size() < 10) return errorList(name, "truncated .npy header");
        headerLen = static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
        pos = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) return errorList(name, "truncated .npy header");
        for (int k = 3; k >= 0; --k)
            headerLen = (headerLen << 8) | static_cast<unsigned char>(bytes[8 + static_cast<std::size_t>(k)]);
        pos = 12;
    } else {
        return errorList(name, ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                                   " is not supported (1.0, 2.0 and 3.0 are)");
    }
    if (pos + headerLen > bytes.size())
        return errorList(name, "truncated .npy header: it claims " + std::to_string(headerLen) + " bytes but the file has " +
                                   std::to_string(bytes.size() - pos) + " after the preamble");
    const std::string_view headerText = bytes.substr(pos, headerLen);
    pos += headerLen;

    Header h;
    std::string perr;
    if (!HeaderParser(headerText).parse(h, perr)) return errorList(name, "cannot read the .npy header: " + perr);
    if (!h.descr) return errorList(name, "the .npy header has no 'descr'");
    if (!h.shape) return errorList(name, "the .npy header has no 'shape'");
    if (!h.fortranOrder) return errorList(name, "the .npy header has no 'fortran_order'");

    const std::string& descr = *h.descr;
    if (descr.size() < 2) return errorList(name, "unsupported .npy dtype '" + descr + "'");
    const char order = descr[0];
    const std::string code = descr.substr(1);
    DType dt = DType::Undefined;
    for (const auto& e : kDescrs)
        if (code == e.code) dt = e.dtype;
    if (dt == DType::Undefined || (order != '<' && order != '>' && order != '|' && order != '='))
        return errorList(name, "unsupported .npy dtype '" + descr +
                                   "' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1 c8 c16)");
    if (order == '>' && dtypeSize(dt) > 1)
        return errorList(name, "big-endian data ('" + descr + "') is not supported; save it with arr.astype('<" + code +
                                   "')");
    if (*h.fortranOrder)
        return errorList(name, "fortran_order True is not supported; save it with np.ascontiguousarray(arr)");

    TensorData t;
    t.dtype = dt;
    t.dims = *h.shape;
    std::uint64_t count = 1;
    for (const std::int64_t d : t.dims) {
        if (d != 0 && count > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(d) / 16)
            return errorList(name, "shape " + shapeText(dt, t.dims) + " is too large");
        count *= static_cast<std::uint64_t>(d);
    }
    const std::uint64_t expected = count * dtypeSize(dt);
    const std::uint64_t available = (headerOnly ? fileBytes : bytes.size()) - pos;
    if (available < expected)
        return errorList(name, "truncated data: " + shapeText(dt, t.dims) + " needs " + std::to_string(expected) +
                                   " bytes but the file has " + std::to_string(available));
    if (available > expected)
        return errorList(name, std::to_string(available - expected) + " unexpected bytes after the " +
                                   shapeText(dt, t.dims) + " data");
    if (!headerOnly)
        t.bytes.assign(reinterpret_cast<const std::uint8_t*>(bytes.data()) + pos,
                       reinterpret_cast<const std::uint8_t*>(bytes.data()) + pos + expected);
    return t;
}

}  // namespace

support::Expected<TensorData> parseNpy(std::string_view bytes, const std::string& name) {
    return parseNpyImpl(bytes, name, false, 0);
}

support::Expected<TensorData> readNpyShape(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return errorList(path, std::string("cannot open: ") + std::strerror(errno));
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::is_regular_file(path, ec) ? std::filesystem::file_size(path, ec) : 0;
    if (ec || size == 0) return readNpy(path);  // not a plain file (a pipe ...): read it all
    // The header (NumPy pads it to 64 bytes; a few hundred with long shapes) is in the first
    // 64 KiB; what it claims for the data is checked against the file's size.
    std::string prefix(static_cast<std::size_t>(std::min<std::uintmax_t>(size, 64 * 1024)), '\0');
    f.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
    if (f.bad() || static_cast<std::size_t>(f.gcount()) != prefix.size()) return errorList(path, "read error");
    auto t = parseNpyImpl(prefix, path, true, static_cast<std::uint64_t>(size));
    if (!t.ok() && prefix.size() < size) return readNpy(path);  // a longer header: the full reader decides
    return t;
}

support::Expected<TensorData> readNpy(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return errorList(path, std::string("cannot open: ") + std::strerror(errno));
    // A regular file is read in one piece into a buffer of its size: a batch-32 image input is
    // 19 MB, and a string stream's doubling and final copy cost more than parsing it.
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) {
        const std::uintmax_t size = std::filesystem::file_size(path, ec);
        if (!ec) {
            std::string bytes(static_cast<std::size_t>(size), '\0');
            f.read(bytes.data(), static_cast<std::streamsize>(size));
            if (f.bad() || f.gcount() != static_cast<std::streamsize>(size)) return errorList(path, "read error");
            return parseNpy(bytes, path);
        }
    }
    std::ostringstream ss;
    ss << f.rdbuf();
    if (f.bad()) return errorList(path, "read error");
    return parseNpy(ss.str(), path);
}

support::Expected<std::string> encodeNpy(const TensorData& tensor, const std::string& name) {
    const std::string descr = npyDescr(tensor.dtype);
    if (descr.empty())
        return errorList(name, "dtype " + std::string(dtypeName(tensor.dtype)) + " has no .npy equivalent");
    for (const std::int64_t d : tensor.dims)
        if (d < 0) return errorList(name, "negative dimension in " + shapeText(tensor.dtype, tensor.dims));
    if (!tensor.sizeConsistent())
        return errorList(name, "tensor " + shapeText(tensor.dtype, tensor.dims) + " holds " +
                                   std::to_string(tensor.bytes.size()) + " bytes, expected " +
                                   std::to_string(tensor.numElements() * static_cast<std::int64_t>(dtypeSize(tensor.dtype))));
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
    for (std::size_t i = 0; i < tensor.dims.size(); ++i) dict += (i ? ", " : "") + std::to_string(tensor.dims[i]);
    if (tensor.dims.size() == 1) dict += ",";
    dict += "), }";
    // Pad with spaces and a final newline so that preamble + header is a multiple of 64.
    std::size_t preamble = 10;
    std::size_t total = preamble + dict.size() + 1;
    if ((total + 63) / 64 * 64 - preamble > 65535) {
        preamble = 12;
        total = preamble + dict.size() + 1;
    }
    const std::size_t padded = (total + 63) / 64 * 64;
    dict.append(padded - total, ' ');
    dict += '\n';
    const std::size_t headerLen = dict.size();

    std::string out(kMagic, kMagicLen);
    out += static_cast<char>(preamble == 10 ? 1 : 2);
    out += '\0';
    for (std::size_t k = 0; k < preamble - 8; ++k) out += static_cast<char>((headerLen >> (8 * k)) & 0xFFu);
    out += dict;
    out.append(reinterpret_cast<const char*>(tensor.bytes.data()), tensor.bytes.size());
    return out;
}

support::Expected<std::int64_t> writeNpy(const std::string& path, const TensorData& tensor) {
    auto bytes = encodeNpy(tensor, path);
    if (!bytes) return bytes.diagnostics();
    const std::string tmp = path + ".tmp" + std::to_string(::getpid());
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) return errorList(path, std::string("cannot write: ") + std::strerror(errno));
        f.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
        f.close();
        if (!f) {
            std::error_code ec;
            std::filesystem::remove(tmp, ec);
            return errorList(path, "write error (disk full?)");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        return errorList(path, "cannot write: " + ec.message());
    }
    return static_cast<std::int64_t>(bytes->size());
}

}  // namespace tessera::ir
