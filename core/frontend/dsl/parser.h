#pragma once
/// @file
/// Hand-written recursive-descent parser for the DSL (grammar: docs/dsl.md §3).
///
/// Error recovery: a syntax error is reported and the parser skips to the end of the statement
/// (the next ';' at bracket depth 0, or before the '}' closing the enclosing block), so every
/// syntax error of a file is reported, not only the first. A missing ';' at the end of a line is
/// reported and assumed, without skipping the next line.
///
/// Robustness: never throws into callers, never recurses deeper than kMaxNestingDepth (deeper
/// input is an error), always consumes input (no hang), and checks integer overflow in literals.
///
/// Thread rules: parseSource is reentrant.

#include <string>
#include <string_view>

#include "core/frontend/dsl/ast.h"
#include "core/support/diagnostic.h"

namespace tessera::frontend::dsl {

constexpr int kMaxNestingDepth = 256;

/// Parses `text` (named `file` in diagnostics). Syntax errors are appended to `diags`; the
/// returned AST holds every statement that parsed.
ast::Program parseSource(std::string_view text, const std::string& file, support::DiagnosticList& diags);

}  // namespace tessera::frontend::dsl
