#pragma once
/// @file
/// What the Program dock needs to know about a program's text beyond its model: which statement
/// defines which drawn graph node (for the linked selection between the editor and the graph),
/// and a signature of its tokens (to tell an edit that changes the program from one that only
/// touches comments, spacing or line breaks). Both come from core/pipeline/dsl_text.h (dslOutline,
/// dslTokenSignature, where the naming rules are), here in the Program dock's types.
///
/// Thread rules: pure functions; any thread.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "views/program/program_editor.h"

namespace tessera::app {

/// The statements of `text` (named `file` in the parser's diagnostics, which are discarded) that
/// define drawn nodes, in source order.
std::vector<views::ProgramStatement> programOutline(std::string_view text, const std::string& file);

/// A hash of the token stream of `text` (kinds, spellings and values; not positions, comments or
/// whitespace). Equal for texts that parse to the same program.
std::uint64_t programTokenSignature(std::string_view text);

}  // namespace tessera::app
