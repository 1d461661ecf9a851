#pragma once
/// @file
/// NumPy .npy files <-> ir::TensorData: inputs fed to runs, outputs saved from them, and the
/// DSL's npy("...") initializers.
///
/// Format (numpy.lib.format): magic "\x93NUMPY", major/minor version, header length (2 bytes
/// little-endian in version 1.0, 4 bytes in 2.0 and 3.0), then a Python dict literal
/// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), } padded with spaces and
/// a newline, then the raw elements. Version 3.0 only differs in allowing UTF-8 in the header.
///
/// Supported: little-endian (or byte-order-free) descr f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1 c8 c16
/// (dtypes f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool c64 c128), C order, any rank (a scalar
/// has shape ()). TensorData keeps the same byte layout, so reading and writing copy bytes.
///
/// Errors are diagnostics whose `file` is the file name (or the display name given) and whose
/// message says what is wrong: bad magic, unsupported version, an unreadable header, Fortran
/// order, big-endian or unsupported dtypes, truncated data, trailing bytes. Never throws.
///
/// Thread rules: pure functions; safe from any thread.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/ir/tensor.h"
#include "core/support/expected.h"

namespace tessera::ir {

/// Parses the bytes of a .npy file. `name` is used as the diagnostic's file.
support::Expected<TensorData> parseNpy(std::string_view bytes, const std::string& name);

/// Reads and parses the .npy file at `path`.
support::Expected<TensorData> readNpy(const std::string& path);

/// Reads only the header of the .npy file at `path`: dtype and dims, no elements (the result is
/// ir::TensorData::isShapeOnly() unless it has no elements). The file's size is checked against
/// the header as readNpy does, so a truncated file is refused here too. For callers that need a
/// tensor's shape, not its values (`tessera-cli compile --input`): a batch-32 image input is 19 MB.
support::Expected<TensorData> readNpyShape(const std::string& path);

/// The .npy bytes of `tensor`: version 1.0 (2.0 when the header needs more than 65535 bytes),
/// header padded so the data starts at a multiple of 64 bytes. Errors for dtypes .npy cannot
/// express (bf16, string, undefined) and for byte counts that do not match the dims.
support::Expected<std::string> encodeNpy(const TensorData& tensor, const std::string& name = "tensor");

/// Writes `tensor` to `path` (through a temporary file renamed into place). Returns the number
/// of bytes written.
support::Expected<std::int64_t> writeNpy(const std::string& path, const TensorData& tensor);

/// The .npy descr of a dtype ("<f4", "|u1" ...), or empty when .npy has none.
std::string npyDescr(DType dtype);

}  // namespace tessera::ir
