#pragma once
/// @file
/// One entry point that loads whatever the user opened: an ONNX model (`.onnx` and anything
/// else) or a Tessera DSL program (`.tsr`). The CLI and the GUI both load through it, so a
/// program opens the same way everywhere.
///
/// DSL programs may reference ONNX weights (`onnx("m.onnx", "w")`); the loader given to the DSL
/// frontend imports those files with the ONNX frontend (without ONNX's shape inference: only the
/// constants are needed).
///
/// Errors: every failure is a diagnostic in the result (file, line:column or node); never throws.
/// Thread rules: reentrant; may run on any thread. `cancel` is honoured by the ONNX importer.

#include <string>

#include "core/frontend/dsl/dsl.h"
#include "core/frontend/onnx/onnx_importer.h"
#include "core/ir/graph.h"
#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::pipeline {

enum class SourceKind { Onnx, Dsl };

/// `.tsr` (any case) is a DSL program; everything else is read as ONNX.
SourceKind sourceKindOf(const std::string& path);

/// DSL parse options whose onnxLoader imports ONNX files with the ONNX frontend.
frontend::dsl::ParseOptions dslParseOptions();

struct LoadOptions {
    frontend::onnx::ImportOptions onnx;  ///< for ONNX models
};

/// Loads `path` as an ONNX model or a DSL program (by extension). Model::sourcePath = path.
support::Expected<ir::Model> loadModel(const std::string& path, const LoadOptions& options = {},
                                       const support::CancelToken* cancel = nullptr);

}  // namespace tessera::pipeline
