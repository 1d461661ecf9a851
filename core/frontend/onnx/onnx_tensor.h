#pragma once
/// @file
/// Internal to core/frontend/onnx: ONNX TensorProto / TypeProto -> Tessera IR with validation of
/// untrusted input. Includes protobuf headers, so only the importer's own .cpp files include it.
///
/// Every check happens before any allocation sized by a declared field: element counts are
/// computed with overflow checks and compared with the limits and with the bytes actually present
/// (raw_data size, typed field length, external file size) before data is copied.
///
/// Thread rules: stateless functions plus a per-import ExternalDataBudget; reentrant.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

#include "core/frontend/onnx/onnx_importer.h"
#include "core/ir/tensor.h"

namespace tessera::frontend::onnx::detail {

/// Maps TensorProto.DataType codes to DType; nullopt for codes Tessera has no dtype for
/// (float8 variants, 4-bit ints) or that are invalid.
std::optional<ir::DType> dtypeFromOnnx(std::int32_t code);
/// ONNX's name for a data type code ("float", "float8e4m3fn", ...), or "code N" when unknown.
std::string onnxDTypeName(std::int32_t code);

/// Quotes a name for a one-line message: 'name', with quotes, backslashes, control characters
/// and invalid UTF-8 escaped (\n, \x1b ...); very long names are shortened.
std::string quoteName(const std::string& name);
/// True when `s` is well-formed UTF-8 (no overlongs, no surrogates).
bool isValidUtf8(const std::string& s);

/// What a tensor conversion needs to know about its context.
struct TensorContext {
    const ImportOptions* options = nullptr;
    std::string baseDir;               ///< folder external data is resolved against; empty: refused
    std::int64_t* externalBytesUsed = nullptr;  ///< running total across the import
};

/// Converts and validates a tensor. On failure returns nullptr and sets `error` to one line
/// (without the "where" prefix, e.g. "dimension 1 is negative (-3)").
std::shared_ptr<ir::TensorData> convertTensor(const ::onnx::TensorProto& t, const TensorContext& ctx,
                                              std::string& error);

/// Converts a declared type (graph input/output, value_info). Non-tensor types (sequence, map,
/// optional, sparse) give an undefined TensorType and set `note`. Returns false with `error` set
/// for invalid declarations (negative dims, unknown element type code).
bool convertType(const ::onnx::TypeProto& t, ir::TensorType& out, std::string& error, std::string& note);

}  // namespace tessera::frontend::onnx::detail
