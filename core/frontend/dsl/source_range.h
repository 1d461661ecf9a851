#pragma once
/// @file
/// Source ranges of the DSL: 1-based line:column positions (columns count bytes) plus byte
/// offsets into the text, so that a range can both be reported and cut out of the source.
/// `end` is inclusive (the last character of the range), as in support::Diagnostic.

#include <cstddef>

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

}  // namespace tessera::frontend::dsl
