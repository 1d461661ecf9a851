#pragma once
/// @file
/// `tessera-cli export-dsl MODEL [-o FILE]`: imports an ONNX model and prints it as a Tessera DSL
/// program (docs/dsl.md) that parses back to a structurally equal graph. Large constants are
/// written as `onnx("PATH", "NAME")` references; PATH is the model's path relative to the folder
/// of FILE (with -o) or to the current directory (stdout). The DSL parser accepts only paths
/// inside the program's folder, so a warning is printed when PATH leaves it (save the program
/// next to the model, or raise --inline-max). A `.tsr` MODEL is parsed and printed back in the
/// printer's canonical form, every constant inline.
///
/// Exit codes: 0 success, 2 bad input (the importer's one-line diagnostics go to `err`), 1 internal
/// error (e.g. the output file cannot be written).
/// Thread rules: none (runs on the caller's thread).

#include <cstdint>
#include <iosfwd>
#include <string>

namespace tessera::cli {

struct ExportDslOptions {
    std::string modelPath;                  ///< .onnx model or .tsr program
    std::string outputPath;                 ///< empty: print to `out`
    std::int64_t maxInlineElements = 16;    ///< constants up to this many elements are written inline
};

int runExportDsl(const ExportDslOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
