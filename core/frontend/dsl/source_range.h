#pragma once
/// @file
/// Source ranges of the DSL: 1-based line:column positions (columns count bytes) plus byte
/// offsets into the text, so that a range can both be reported and cut out of the source.
/// `end` is inclusive (the last character of the range), as in support::Diagnostic.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/support/diagnostic.h"

namespace tessera::frontend::dsl {

struct SourceRange {
    support::SourceLocation begin;  ///< first character
    support::SourceLocation end;    ///< last character (inclusive)
    std::size_t offset = 0;         ///< byte offset of `begin`
    std::size_t length = 0;         ///< bytes covered

    /// The smallest range covering both (either may be empty: length 0 and line 0).
    static SourceRange merge(const SourceRange& a, const SourceRange& b);
};

/// A diagnostic about `r` in `file` (the lexer, parser and sema all report through this).
inline support::Diagnostic makeDiagnostic(support::Severity severity, const std::string& file, const SourceRange& r,
                                          std::string message, std::vector<std::string> notes = {}) {
    support::Diagnostic d;
    d.severity = severity;
    d.file = file;
    d.begin = r.begin;
    d.end = r.end;
    d.message = std::move(message);
    d.notes = std::move(notes);
    return d;
}

}  // namespace tessera::frontend::dsl
