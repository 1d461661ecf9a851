#pragma once
/// @file
/// Element types. Names follow the DSL spelling (f32, bf16, i64, bool ...); ONNX's
/// TensorProto.DataType codes map onto them in core/frontend/onnx.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera::ir {

enum class DType : std::uint8_t {
    Undefined,
    F16, BF16, F32, F64,
    I8, I16, I32, I64,
    U8, U16, U32, U64,
    Bool,
    String,
    Complex64, Complex128,
};

/// Short name: "f32", "bf16", "i64", "u8", "bool", "string", "c64", "undefined".
std::string_view dtypeName(DType t);
/// Inverse of dtypeName (also accepts "float32", "float", "int64", "float16" ...). nullopt when unknown.
std::optional<DType> parseDType(std::string_view name);
/// Bytes per element; 0 for Undefined and String (strings have no fixed size).
std::size_t dtypeSize(DType t);
bool isFloatingPoint(DType t);
bool isInteger(DType t);  ///< signed or unsigned integer (not Bool)

}  // namespace tessera::ir
