#pragma once
/// @file
/// Renders diagnostics about text input the way compilers do: the "file:line:col: severity:
/// message" line, the source line with a caret under the range, and the notes (hints) below:
/// @code
/// prog.tsr:3:5: error: unknown op 'Covn'
///     3 | y = Covn(x, w);
///       |     ^~~~
///       = hint: did you mean 'Conv'?
/// @endcode
/// A range spanning several lines is underlined to the end of its first line. Tabs in the source
/// line are kept in the caret line so the caret stays aligned; other control bytes are shown as
/// '?'. Diagnostics without a line (model-level ones) print the one-line form and their notes.
///
/// Thread rules: pure functions.

#include <string>
#include <string_view>

#include "core/support/diagnostic.h"

namespace tessera::frontend::dsl {

std::string renderDiagnostic(const support::Diagnostic& d, std::string_view source);
/// All diagnostics in order, each followed by a newline.
std::string renderDiagnostics(const support::DiagnosticList& list, std::string_view source);

}  // namespace tessera::frontend::dsl
