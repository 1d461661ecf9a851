#pragma once
/// @file
/// Entry points of the Tessera DSL frontend: `.tsr` text -> ir::Model (docs/dsl.md).
///
/// parseProgram lexes, parses (recovering from syntax errors so that all of them are reported),
/// then checks and converts the program: op calls become ir::Node checked with the op registry
/// and per-node shape inference, compute definitions become tessera::Compute nodes
/// (core/ir/compute.h), schedules and fusion statements go to Model::program. Every problem is a
/// support::Diagnostic with the file, a line:column range, a message and hints in `notes`
/// ("hint: did you mean 'Conv'?"). Render them with renderDiagnostics (diagnostic_render.h).
///
/// Result: ok() with the model and any warnings, or the full list of errors (and warnings).
/// Never throws; no input crashes or hangs it (limits: lexer.h, parser.h, ParseOptions).
///
/// Thread rules: reentrant; the onnxLoader callback is called on the calling thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/ir/graph.h"
#include "core/support/expected.h"

namespace tessera::frontend::dsl {

/// At most this many diagnostics are returned; one more line says how many were left out.
constexpr std::size_t kMaxReportedDiagnostics = 100;

struct ParseOptions {
    /// Folder that `npy("...")` and `onnx("...", ...)` paths are relative to. Empty: the folder of
    /// the file name given to parseProgram, or no file access at all when that has no folder and
    /// allowFileAccess is false.
    std::string baseDir;
    /// When false, npy(...) and onnx(...) initializers are errors (fuzzing, untrusted snippets).
    bool allowFileAccess = true;
    /// Loads an ONNX model for `onnx(file, tensor)` initializers (core cannot link the ONNX
    /// frontend; the app and tests pass one). The path is already resolved against baseDir.
    /// Each file is loaded once per parse. Unset: onnx(...) initializers are errors.
    std::function<support::Expected<std::shared_ptr<const ir::Model>>(const std::string& path)> onnxLoader;
    /// Largest constant one initializer may create, and all of them together.
    std::int64_t maxTensorBytes = std::int64_t{512} << 20;
    std::int64_t maxTotalBytes = std::int64_t{2} << 30;
    /// Validate schedule mapping expressions with core/schedule's parser.
    bool checkMappings = true;
};

/// Parses and converts a program. `file` names it in diagnostics (and gives the default baseDir).
support::Expected<ir::Model> parseProgram(std::string_view text, const std::string& file,
                                          const ParseOptions& options = {});

/// Reads `path` (refusing files over 16 MiB) and parses it; Model::sourcePath = path.
support::Expected<ir::Model> parseProgramFile(const std::string& path, const ParseOptions& options = {});

/// The canonical ONNX op name for a DSL spelling: an exact registry name, or a lowercase alias
/// ("conv2d" -> "Conv", "relu" -> "Relu"); empty when unknown.
std::string resolveOpAlias(std::string_view name);

}  // namespace tessera::frontend::dsl
