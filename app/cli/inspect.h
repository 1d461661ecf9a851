#pragma once
/// @file
/// `tessera-cli inspect`: imports a model and prints a report (text, JSON, Graphviz DOT or the IR
/// printer's text). Kept out of main.cpp so that CLI11, which is slow to compile, stays in one TU.
///
/// Exit codes: 0 success, 2 bad input (the one-line diagnostics go to `err`), 1 internal error.
/// Thread rules: none (runs on the caller's thread).

#include <iosfwd>
#include <string>

namespace tessera::cli {

enum class InspectFormat { Text, Json, Dot, Ir };

struct InspectOptions {
    std::string modelPath;
    InspectFormat format = InspectFormat::Text;
    bool skipOnnxInference = false;  ///< do not run ONNX's own shape inference
};

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

int runInspect(const InspectOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
