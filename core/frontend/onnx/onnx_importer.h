#pragma once
/// @file
/// ONNX ModelProto -> Tessera IR (tessera::ir::Model).
///
/// Accepts IR versions 3..10 and default-domain opsets 1..21. Debian's onnx 1.12 knows schemas
/// only up to IR 8 / opset 17; for newer models its checker is not run and Tessera's own op
/// registry and verifier decide, which is reported as a Note diagnostic.
///
/// Input is untrusted: the importer validates ranks, attributes, tensor byte counts, external-data
/// offsets/lengths and paths (relative to the model's folder, never outside it) itself before any
/// libonnx call that could crash on malformed input. Every failure is a Diagnostic naming the file
/// and the node or field; nothing throws into callers.
///
/// Thread rules: importModel is reentrant; different threads may import different files at once.

#include <cstdint>
#include <string>

#include "core/ir/graph.h"
#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::frontend::onnx {

struct ImportOptions {
    bool runOnnxShapeInference = true;   ///< run ONNX's inference (when safe) and keep its types in Value::onnxType
    bool runTesseraShapeInference = true; ///< run ir::inferShapes and report disagreements as warnings
    std::int64_t maxFileBytes = std::int64_t{4} << 30;        ///< refuse larger model files (4 GiB)
    std::int64_t maxTensorBytes = std::int64_t{2} << 30;      ///< refuse any single tensor above this (2 GiB)
    std::int64_t maxTotalExternalBytes = std::int64_t{8} << 30;
};

/// Loads and converts the model at `path`. On success the diagnostics hold warnings and notes
/// (version notices, shape-inference disagreements); on failure at least one Error.
support::Expected<ir::Model> importModel(const std::string& path, const ImportOptions& options = {},
                                         const support::CancelToken* cancel = nullptr);

/// Same from bytes already in memory; `displayName` is used in diagnostics and `baseDir` resolves
/// external data (empty: external data is refused).
support::Expected<ir::Model> importModelFromBytes(const std::string& bytes, const std::string& displayName,
                                                  const std::string& baseDir, const ImportOptions& options = {});

}  // namespace tessera::frontend::onnx
