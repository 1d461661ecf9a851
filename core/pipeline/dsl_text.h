#pragma once
/// @file
/// Text services of the Tessera DSL (docs/dsl.md) for editors and commands: parsing program text
/// as a `.tsr` file is loaded, printing a model as a program, rendering diagnostics with the
/// source line and a caret, and the outline of which statement defines which graph node. Built
/// on core/frontend/dsl (parser, printer, lexer); core/pipeline/load_model.h loads files.
///
/// Outline (dslOutline): node names follow docs/dsl.md §4.1 as the DSL's sema gives them: an op
/// call or compute definition defines the operator named by its `as` name, else by its first
/// non-omitted output (with the smallest free suffix `_1`, `_2`, ... when taken;
/// `<OpType>_<index>` without outputs); `input x` defines the graph input `x`, `output y` the
/// graph output `y` (for `output a, b;` each name its own statement, ranging over the name), and
/// `schedule S { ... }` points at the operator `S`. Statements inside graph literals (subgraph
/// bodies) define nothing drawn. The outline is only meaningful for text that parseDsl accepted:
/// then the names are exactly those of the model's nodes.
///
/// Errors: parseDsl's are every problem of the program, each with a line:column range (see
/// core/frontend/dsl/dsl.h); the outline and the token signature ignore errors.
/// Thread rules: pure functions (parseDsl reads the files the program names); any thread.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/frontend/dsl/dsl_printer.h"
#include "core/ir/graph.h"
#include "core/support/expected.h"

namespace tessera::pipeline {

/// The largest program text the DSL reads, in bytes.
inline constexpr std::size_t kMaxDslSourceBytes = 16 * 1024 * 1024;

/// Parses program text as pipeline::loadModel parses a `.tsr` file (`onnx(...)` weights through
/// the ONNX frontend). `file` names it in diagnostics; `npy(...)` and `onnx(...)` paths are
/// relative to `baseDir`, or to the folder of `file` when `baseDir` is empty.
support::Expected<ir::Model> parseDsl(std::string_view text, const std::string& file, const std::string& baseDir = {});

/// How printDsl writes constants: inline up to maxInlineElements elements, larger ones as
/// `onnx("<onnxReference>", NAME)` (core/frontend/dsl/dsl_printer.h).
using DslPrintOptions = frontend::dsl::PrintOptions;

/// The program text of `model`; stable (the same model gives byte-identical text), and parsing
/// it gives the model back (the round trip of core/frontend/dsl/dsl_printer.h).
std::string printDsl(const ir::Model& model, const DslPrintOptions& options = {});

/// Each diagnostic as "file:line:col: severity: message", the source line of `source` with a
/// caret under its range, and its notes; one-line form for diagnostics without a line.
std::string renderDslDiagnostics(const support::DiagnosticList& diagnostics, std::string_view source);

/// A statement that defines a drawn graph node (see the file comment).
struct DslStatement {
    enum class Defines { Operator, GraphInput, GraphOutput };
    int firstLine = 0;    ///< 1-based
    int firstColumn = 0;  ///< 1-based byte column
    int lastLine = 0;
    int lastColumn = 0;   ///< inclusive
    std::string node;     ///< operator name, or the value of the graph input/output
    Defines defines = Defines::Operator;
};

/// The statements of `text` (named `file` in the parser's diagnostics, which are discarded) that
/// define drawn nodes, in source order.
std::vector<DslStatement> dslOutline(std::string_view text, const std::string& file);

/// A hash of the token stream of `text` (kinds and spellings; not positions, comments or
/// whitespace). Equal for texts that parse to the same program; numbers count as spelled, so
/// `1.0` and `1.00` differ.
std::uint64_t dslTokenSignature(std::string_view text);

}  // namespace tessera::pipeline
