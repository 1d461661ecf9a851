#pragma once
/// @file
/// Reading ONNX test data: a serialized onnx::TensorProto (`input_0.pb`, `output_0.pb` of the ONNX
/// backend node tests) -> ir::TensorData, and a cheap summary of a model file (its top-level node
/// op types and whether its graph inputs/outputs are plain tensors) that does not run the importer.
///
/// The conversion is the importer's own (detail::convertTensor in onnx_tensor.h): raw_data and the
/// typed fields (float_data, int32_data for 8/16-bit ints, bool and f16/bf16 bits, int64_data,
/// double_data, uint64_data, string_data), with the same validation of untrusted input. External
/// data is refused (test data files are self-contained).
///
/// Errors (diagnostics with `file` = the path, never exceptions): missing, unreadable, empty or
/// over-size file; protobuf parse failure; a file that holds a SequenceProto, OptionalProto or
/// MapProto instead of a tensor ("unsupported test data kind: ..."); a tensor the importer rejects
/// (unsupported element type, byte count that does not match its dims, ...).
///
/// Thread rules: reentrant; any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/tensor.h"
#include "core/support/expected.h"

namespace tessera::frontend::onnx {

/// Largest test data / model file the readers here accept (256 MiB).
inline constexpr std::int64_t kMaxTestDataFileBytes = std::int64_t{256} << 20;

/// Reads one serialized onnx::TensorProto. The tensor's `name` field is not kept.
support::Expected<ir::TensorData> readTensorProtoFile(const std::string& path);

/// Same from bytes in memory; `displayName` is used in diagnostics.
support::Expected<ir::TensorData> parseTensorProto(const std::string& bytes, const std::string& displayName);

/// What a model file declares, read straight from the ModelProto (no importer, no checker).
struct OnnxModelSummary {
    std::vector<std::string> nodeOpTypes;   ///< op_type of each top-level graph node, in file order
    std::vector<std::string> nodeDomains;   ///< domain of each node ("" = default ONNX domain)
    std::vector<std::string> inputNames;    ///< graph inputs that are not initializers, in order
    std::vector<std::string> outputNames;   ///< graph outputs, in order
    bool nonTensorIO = false;               ///< some graph input/output is a sequence, optional, map or sparse tensor
    std::int64_t defaultOpset = 0;          ///< opset of the default domain, 0 when not imported
};

/// Reads the summary of the model at `path`. Errors: unreadable file or protobuf parse failure.
support::Expected<OnnxModelSummary> readModelSummary(const std::string& path);

}  // namespace tessera::frontend::onnx
