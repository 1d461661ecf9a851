#include "core/frontend/onnx/onnx_tensor.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>

namespace tessera::frontend::onnx::detail {

namespace fs = std::filesystem;
using ::onnx::TensorProto;

std::optional<ir::DType> dtypeFromOnnx(std::int32_t code) {
    using ir::DType;
    switch (code) {
        case TensorProto::FLOAT: return DType::F32;
        case TensorProto::UINT8: return DType::U8;
        case TensorProto::INT8: return DType::I8;
        case TensorProto::UINT16: return DType::U16;
        case TensorProto::INT16: return DType::I16;
        case TensorProto::INT32: return DType::I32;
        case TensorProto::INT64: return DType::I64;
        case TensorProto::STRING: return DType::String;
        case TensorProto::BOOL: return DType::Bool;
        case TensorProto::FLOAT16: return DType::F16;
        case TensorProto::DOUBLE: return DType::F64;
        case TensorProto::UINT32: return DType::U32;
        case TensorProto::UINT64: return DType::U64;
        case TensorProto::COMPLEX64: return DType::Complex64;
        case TensorProto::COMPLEX128: return DType::Complex128;
        case TensorProto::BFLOAT16: return DType::BF16;
        default: return std::nullopt;
    }
}

std::string onnxDTypeName(std::int32_t code) {
    // Codes 17..23 postdate the ONNX 1.12 enum, so they are spelled out here.
    static const char* const kNames[] = {"undefined", "float",      "uint8",        "int8",       "uint16",
                                         "int16",     "int32",      "int64",        "string",     "bool",
                                         "float16",   "double",     "uint32",       "uint64",     "complex64",
                                         "complex128", "bfloat16",  "float8e4m3fn", "float8e4m3fnuz",
                                         "float8e5m2", "float8e5m2fnuz", "uint4",   "int4",       "float4e2m1"};
    if (code >= 0 && code < static_cast<std::int32_t>(std::size(kNames))) return kNames[code];
    return "code " + std::to_string(code);
}

bool isValidUtf8(const std::string& s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned c = p[i];
        if (c < 0x80) { ++i; continue; }
        int len = 0;
        unsigned cp = 0;
        if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
        else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
        else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
        else return false;
        if (i + static_cast<std::size_t>(len) > n) return false;
        for (int k = 1; k < len; ++k) {
            const unsigned cc = p[i + static_cast<std::size_t>(k)];
            if ((cc & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return false;
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += static_cast<std::size_t>(len);
    }
    return true;
}

std::string quoteName(const std::string& name) {
    constexpr std::size_t kMax = 80;
    std::string out = "'";
    const bool utf8 = isValidUtf8(name);
    std::size_t shown = 0;
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (shown >= kMax) {
            out += "...";
            break;
        }
        const auto c = static_cast<unsigned char>(name[i]);
        ++shown;
        if (c == '\'' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && !utf8)) {
            static const char* const kHex = "0123456789abcdef";
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    out += "'";
    return out;
}

namespace {

bool parseUnsigned(const std::string& s, std::int64_t& out) {
    if (s.empty() || s.size() > 19) return false;
    std::int64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v)) return false;
    }
    out = v;
    return true;
}

std::string bytesText(std::int64_t n) { return std::to_string(n) + " bytes"; }

/// Reads `length` bytes at `offset` of an external file after checking the path and bounds.
bool readExternal(const TensorProto& t, const TensorContext& ctx, std::int64_t expectedBytes,
                  std::vector<std::uint8_t>& bytes, std::string& error) {
    std::string location;
    std::int64_t offset = 0, length = -1;
    bool haveLocation = false;
    for (const auto& kv : t.external_data()) {
        if (kv.key() == "location") {
            location = kv.value();
            haveLocation = true;
        } else if (kv.key() == "offset") {
            if (!parseUnsigned(kv.value(), offset)) {
                error = "external data offset " + quoteName(kv.value()) + " is not a non-negative integer";
                return false;
            }
        } else if (kv.key() == "length") {
            if (!parseUnsigned(kv.value(), length)) {
                error = "external data length " + quoteName(kv.value()) + " is not a non-negative integer";
                return false;
            }
        }
    }
    if (!haveLocation || location.empty()) {
        error = "external data has no 'location'";
        return false;
    }
    if (location.find('\0') != std::string::npos) {
        error = "external data path " + quoteName(location) + " contains a NUL character";
        return false;
    }
    if (ctx.baseDir.empty()) {
        error = "external data " + quoteName(location) + " cannot be resolved for a model read from memory";
        return false;
    }
    const fs::path loc(location);
    if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory()) {
        error = "external data path " + quoteName(location) + " is absolute; it must be relative to the model's folder";
        return false;
    }
    std::error_code ec;
    const fs::path base = fs::weakly_canonical(fs::path(ctx.baseDir), ec);
    if (ec) {
        error = "cannot resolve the model's folder for external data " + quoteName(location);
        return false;
    }
    const fs::path full = fs::weakly_canonical(base / loc, ec);
    if (ec) {
        error = "cannot resolve external data path " + quoteName(location);
        return false;
    }
    const fs::path rel = full.lexically_relative(base);
    if (rel == ".") {
        error = "external data path " + quoteName(location) + " is not a regular file";
        return false;
    }
    if (rel.empty() || *rel.begin() == "..") {
        error = "external data path " + quoteName(location) + " is outside the model's folder";
        return false;
    }
    if (!fs::exists(full, ec)) {
        error = "external data file " + quoteName(location) + " not found";
        return false;
    }
    if (!fs::is_regular_file(full, ec)) {
        error = "external data " + quoteName(location) + " is not a regular file";
        return false;
    }
    const auto fileSize = static_cast<std::int64_t>(fs::file_size(full, ec));
    if (ec) {
        error = "cannot read the size of external data file " + quoteName(location);
        return false;
    }
    if (offset > fileSize) {
        error = "external data offset " + std::to_string(offset) + " is beyond the end of " + quoteName(location) +
                " (" + bytesText(fileSize) + ")";
        return false;
    }
    if (length >= 0 && length > fileSize - offset) {
        error = "external data range offset " + std::to_string(offset) + " + length " + std::to_string(length) +
                " is beyond the end of " + quoteName(location) + " (" + bytesText(fileSize) + ")";
        return false;
    }
    if (length >= 0 && length != expectedBytes) {
        error = "external data length " + std::to_string(length) + " does not match dtype x dims (" +
                bytesText(expectedBytes) + ")";
        return false;
    }
    if (length < 0 && fileSize - offset != expectedBytes) {
        error = "external data " + quoteName(location) + " holds " + bytesText(fileSize - offset) + " after offset " +
                std::to_string(offset) + " but dtype x dims needs " + bytesText(expectedBytes);
        return false;
    }
    if (ctx.externalBytesUsed && ctx.options) {
        if (expectedBytes > ctx.options->maxTotalExternalBytes - *ctx.externalBytesUsed) {
            error = "external data exceeds the limit of " + bytesText(ctx.options->maxTotalExternalBytes) + " in total";
            return false;
        }
        *ctx.externalBytesUsed += expectedBytes;
    }
    std::ifstream in(full, std::ios::binary);
    if (!in) {
        error = "cannot open external data file " + quoteName(location);
        return false;
    }
    in.seekg(offset);
    bytes.resize(static_cast<std::size_t>(expectedBytes));
    if (expectedBytes > 0) in.read(reinterpret_cast<char*>(bytes.data()), expectedBytes);
    if (!in || in.gcount() != expectedBytes) {
        error = "short read from external data file " + quoteName(location);
        bytes.clear();
        return false;
    }
    return true;
}

template <typename Dst, typename Field>
void packInto(std::vector<std::uint8_t>& bytes, const Field& field) {
    bytes.resize(static_cast<std::size_t>(field.size()) * sizeof(Dst));
    auto* out = bytes.data();
    for (const auto& v : field) {
        const Dst d = static_cast<Dst>(v);
        std::memcpy(out, &d, sizeof(Dst));
        out += sizeof(Dst);
    }
}

}  // namespace

std::shared_ptr<ir::TensorData> convertTensor(const TensorProto& t, const TensorContext& ctx, std::string& error) {
    const auto dtype = dtypeFromOnnx(t.data_type());
    if (!dtype) {
        if (t.data_type() == TensorProto::UNDEFINED)
            error = "tensor has no data_type";
        else
            error = "element type " + onnxDTypeName(t.data_type()) + " is not supported";
        return nullptr;
    }
    if (t.has_segment()) {
        error = "segmented tensors are not supported";
        return nullptr;
    }
    std::int64_t count = 1;
    for (int i = 0; i < t.dims_size(); ++i) {
        const std::int64_t d = t.dims(i);
        if (d < 0) {
            error = "dimension " + std::to_string(i) + " is negative (" + std::to_string(d) + ")";
            return nullptr;
        }
        if (__builtin_mul_overflow(count, d, &count)) {
            error = "element count overflows (dims too large)";
            return nullptr;
        }
    }
    const std::int64_t limit = ctx.options ? ctx.options->maxTensorBytes : std::numeric_limits<std::int64_t>::max();
    const auto elemSize = static_cast<std::int64_t>(ir::dtypeSize(*dtype));
    std::int64_t expectedBytes = 0;
    if (*dtype != ir::DType::String && __builtin_mul_overflow(count, elemSize, &expectedBytes)) {
        error = "byte count overflows (dims too large)";
        return nullptr;
    }
    if (expectedBytes > limit) {
        error = "tensor needs " + bytesText(expectedBytes) + ", above the limit of " + bytesText(limit);
        return nullptr;
    }

    auto out = std::make_shared<ir::TensorData>();
    out->dtype = *dtype;
    out->dims.assign(t.dims().begin(), t.dims().end());

    const bool external = t.data_location() == TensorProto::EXTERNAL;
    const int typedFields = (t.float_data_size() > 0) + (t.int32_data_size() > 0) + (t.int64_data_size() > 0) +
                            (t.double_data_size() > 0) + (t.uint64_data_size() > 0) + (t.string_data_size() > 0);
    if (external) {
        if (*dtype == ir::DType::String) {
            error = "string tensors cannot use external data";
            return nullptr;
        }
        if (t.has_raw_data() || typedFields > 0) {
            error = "tensor has both external data and inline data";
            return nullptr;
        }
        if (!readExternal(t, ctx, expectedBytes, out->bytes, error)) return nullptr;
        return out;
    }
    if (t.has_raw_data()) {
        if (typedFields > 0) {
            error = "tensor has both raw_data and typed data fields";
            return nullptr;
        }
        if (*dtype == ir::DType::String) {
            error = "string tensors cannot use raw_data";
            return nullptr;
        }
        const auto have = static_cast<std::int64_t>(t.raw_data().size());
        if (have != expectedBytes) {
            error = "raw_data has " + bytesText(have) + " but " + std::string(ir::dtypeName(*dtype)) + " x " +
                    std::to_string(count) + " elements needs " + bytesText(expectedBytes);
            return nullptr;
        }
        out->bytes.assign(t.raw_data().begin(), t.raw_data().end());
        return out;
    }
    if (typedFields > 1) {
        error = "tensor has more than one typed data field";
        return nullptr;
    }

    // Typed fields: the field that must hold the data and how many entries per element.
    using ir::DType;
    const char* fieldName = "";
    std::int64_t have = 0;
    std::int64_t perElement = 1;
    switch (*dtype) {
        case DType::F32: fieldName = "float_data"; have = t.float_data_size(); break;
        case DType::Complex64: fieldName = "float_data"; have = t.float_data_size(); perElement = 2; break;
        case DType::F64: fieldName = "double_data"; have = t.double_data_size(); break;
        case DType::Complex128: fieldName = "double_data"; have = t.double_data_size(); perElement = 2; break;
        case DType::I64: fieldName = "int64_data"; have = t.int64_data_size(); break;
        case DType::U32:
        case DType::U64: fieldName = "uint64_data"; have = t.uint64_data_size(); break;
        case DType::String: fieldName = "string_data"; have = t.string_data_size(); break;
        default: fieldName = "int32_data"; have = t.int32_data_size(); break;
    }
    if (typedFields == 1 && have == 0) {
        error = std::string("data of a ") + std::string(ir::dtypeName(*dtype)) + " tensor must be in " + fieldName +
                " or raw_data";
        return nullptr;
    }
    std::int64_t needed = 0;
    if (__builtin_mul_overflow(count, perElement, &needed)) {
        error = "element count overflows (dims too large)";
        return nullptr;
    }
    if (have != needed) {
        if (have == 0)
            error = "tensor has no data (dims say " + std::to_string(count) + " elements)";
        else
            error = std::string(fieldName) + " has " + std::to_string(have) + " entries but dims say " +
                    std::to_string(needed);
        return nullptr;
    }
    switch (*dtype) {
        case DType::F32:
        case DType::Complex64: packInto<float>(out->bytes, t.float_data()); break;
        case DType::F64:
        case DType::Complex128: packInto<double>(out->bytes, t.double_data()); break;
        case DType::I64: packInto<std::int64_t>(out->bytes, t.int64_data()); break;
        case DType::U32: packInto<std::uint32_t>(out->bytes, t.uint64_data()); break;
        case DType::U64: packInto<std::uint64_t>(out->bytes, t.uint64_data()); break;
        case DType::I32: packInto<std::int32_t>(out->bytes, t.int32_data()); break;
        case DType::I16: packInto<std::int16_t>(out->bytes, t.int32_data()); break;
        // f16 and bf16 keep their bit patterns in the low 16 bits of int32_data.
        case DType::U16:
        case DType::F16:
        case DType::BF16: packInto<std::uint16_t>(out->bytes, t.int32_data()); break;
        case DType::I8: packInto<std::int8_t>(out->bytes, t.int32_data()); break;
        case DType::U8: packInto<std::uint8_t>(out->bytes, t.int32_data()); break;
        case DType::Bool:
            out->bytes.resize(static_cast<std::size_t>(count));
            for (int i = 0; i < t.int32_data_size(); ++i) out->bytes[static_cast<std::size_t>(i)] = t.int32_data(i) != 0;
            break;
        case DType::String: out->strings.assign(t.string_data().begin(), t.string_data().end()); break;
        default:
            error = "element type " + onnxDTypeName(t.data_type()) + " is not supported";
            return nullptr;
    }
    return out;
}

bool convertType(const ::onnx::TypeProto& t, ir::TensorType& out, std::string& error, std::string& note) {
    out = ir::TensorType{};
    if (!t.has_tensor_type()) {
        if (t.has_sequence_type()) note = "sequence type kept without a tensor type";
        else if (t.has_map_type()) note = "map type kept without a tensor type";
        else if (t.has_optional_type()) note = "optional type kept without a tensor type";
        else if (t.has_sparse_tensor_type()) note = "sparse tensor type kept without a tensor type";
        return true;
    }
    const auto& tt = t.tensor_type();
    if (tt.elem_type() != TensorProto::UNDEFINED) {
        const auto dt = dtypeFromOnnx(tt.elem_type());
        if (dt) {
            out.dtype = *dt;
        } else if (tt.elem_type() > 0 && tt.elem_type() <= 23) {
            note = "element type " + onnxDTypeName(tt.elem_type()) + " is not supported by Tessera";
        } else {
            error = "unknown element type " + onnxDTypeName(tt.elem_type());
            return false;
        }
    }
    if (!tt.has_shape()) {
        out.shape = ir::Shape::unknownRank();
        return true;
    }
    std::vector<ir::Dim> dims;
    dims.reserve(static_cast<std::size_t>(tt.shape().dim_size()));
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
        const auto& d = tt.shape().dim(i);
        if (d.has_dim_value()) {
            if (d.dim_value() < 0) {
                error = "dimension " + std::to_string(i) + " is negative (" + std::to_string(d.dim_value()) + ")";
                return false;
            }
            dims.push_back(ir::Dim::known(d.dim_value()));
        } else if (d.has_dim_param() && !d.dim_param().empty()) {
            dims.push_back(ir::Dim::symbolic(d.dim_param()));
        } else {
            dims.push_back(ir::Dim::unknown());
        }
    }
    out.shape = ir::Shape(std::move(dims));
    return true;
}

}  // namespace tessera::frontend::onnx::detail
