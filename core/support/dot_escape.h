#pragma once
/// @file
/// Escaping names for Graphviz DOT. Model and program names are data, never syntax: any bytes
/// (quotes, backslashes, newlines, `*/`, invalid UTF-8) must come out as a safe double-quoted
/// DOT string. Used by `tessera-cli inspect --dot` and by the GUI's layout.

#include <string>

namespace tessera::support {

/// Escapes arbitrary bytes for use inside a double-quoted DOT string:
/// `"` -> `\"`, `\` -> `\\`, newline -> `\n` (a DOT line break), `&` -> `&amp;`, other control
/// characters -> a space, code points above U+007F -> `&#N;`, invalid UTF-8 -> `&#65533;` (U+FFFD).
/// The result is plain ASCII.
std::string escapeDotString(const std::string& text);

}  // namespace tessera::support
