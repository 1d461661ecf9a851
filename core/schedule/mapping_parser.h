#pragma once
/// @file
/// Parser for task-mapping expressions, the Hidet Script spelling used in the mapping editor, the
/// DSL's schedule blocks and `tessera-cli mapping`.
///
/// Grammar (whitespace allowed between tokens):
///   expr     := chain ('*' chain)*
///   chain    := atom ('.' method)*
///   method   := ('spatial' | 'repeat') '(' args ')' | 'projection' '(' '{' INT ':' '0' (',' INT ':' '0')* '}' ')'
///   atom     := prim '(' args ')' | '(' expr ')'
///   prim     := 'spatial' | 'repeat' | 'row_spatial' | 'col_spatial' | 'row_repeat' | 'col_repeat' | 'auto_map'
///   args     := INT (',' INT)* (',' kwarg)*
///   kwarg    := 'ranks' '=' '[' INT (',' INT)* ']' | 'attrs' '=' STRING | 'workers' '=' INT
/// STRING is "..." or '...'. `ranks` is allowed on spatial, repeat and auto_map; `attrs` on the repeat
/// forms; `workers` (required) on auto_map only. A trailing comma is allowed as in Python.
///
/// Errors: one Diagnostic (severity Error) for the first problem, with 1-based line and begin/end
/// columns (end inclusive) of the offending token or call, a message and, where one helps, a hint in
/// `notes` ("did you mean `repeat`?"). Semantic errors (rank mismatch, extents <= 0, auto_map not
/// dividing, size limits) point at the call or the `*` that failed. No input crashes or hangs: input
/// longer than kMaxExpressionLength, nesting deeper than kMaxNesting or integers over 2^62 are errors.
///
/// Thread rules: pure function; any thread.

#include <string_view>

#include "core/schedule/task_mapping.h"
#include "core/support/expected.h"

namespace tessera::schedule {

constexpr size_t kMaxExpressionLength = 64 * 1024;
constexpr int kMaxNesting = 64;

/// Parses `text`. `file` is copied into the diagnostics (may be empty).
support::Expected<TaskMapping> parseMapping(std::string_view text, std::string_view file = {});

}  // namespace tessera::schedule
