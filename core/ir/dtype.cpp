#include "core/ir/dtype.h"

#include <array>
#include <string>
#include <utility>

namespace tessera::ir {

std::string_view dtypeName(DType t) {
    switch (t) {
        case DType::Undefined: return "undefined";
        case DType::F16: return "f16";
        case DType::BF16: return "bf16";
        case DType::F32: return "f32";
        case DType::F64: return "f64";
        case DType::I8: return "i8";
        case DType::I16: return "i16";
        case DType::I32: return "i32";
        case DType::I64: return "i64";
        case DType::U8: return "u8";
        case DType::U16: return "u16";
        case DType::U32: return "u32";
        case DType::U64: return "u64";
        case DType::Bool: return "bool";
        case DType::String: return "string";
        case DType::Complex64: return "c64";
        case DType::Complex128: return "c128";
    }
    return "undefined";
}

std::optional<DType> parseDType(std::string_view name) {
    static const std::array<std::pair<std::string_view, DType>, 20> kAliases{{
        {"float", DType::F32},      {"float32", DType::F32},  {"float16", DType::F16},
        {"half", DType::F16},       {"bfloat16", DType::BF16}, {"double", DType::F64},
        {"float64", DType::F64},    {"int8", DType::I8},      {"int16", DType::I16},
        {"int32", DType::I32},      {"int64", DType::I64},    {"uint8", DType::U8},
        {"uint16", DType::U16},     {"uint32", DType::U32},   {"uint64", DType::U64},
        {"complex64", DType::Complex64}, {"complex128", DType::Complex128},
        {"int", DType::I32},        {"long", DType::I64},     {"boolean", DType::Bool},
    }};
    for (int i = 0; i <= static_cast<int>(DType::Complex128); ++i) {
        auto t = static_cast<DType>(i);
        if (t != DType::Undefined && dtypeName(t) == name) return t;
    }
    for (const auto& [alias, t] : kAliases)
        if (alias == name) return t;
    return std::nullopt;
}

std::size_t dtypeSize(DType t) {
    switch (t) {
        case DType::Undefined:
        case DType::String: return 0;
        case DType::Bool:
        case DType::I8:
        case DType::U8: return 1;
        case DType::F16:
        case DType::BF16:
        case DType::I16:
        case DType::U16: return 2;
        case DType::F32:
        case DType::I32:
        case DType::U32: return 4;
        case DType::F64:
        case DType::I64:
        case DType::U64:
        case DType::Complex64: return 8;
        case DType::Complex128: return 16;
    }
    return 0;
}

bool isFloatingPoint(DType t) {
    return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64;
}

bool isInteger(DType t) {
    switch (t) {
        case DType::I8: case DType::I16: case DType::I32: case DType::I64:
        case DType::U8: case DType::U16: case DType::U32: case DType::U64: return true;
        default: return false;
    }
}

}  // namespace tessera::ir
