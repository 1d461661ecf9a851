#pragma once
/// @file
/// "Did you mean" suggestions: the candidate closest to a misspelled word by edit distance
/// (Levenshtein with adjacent transpositions, case-insensitive ties broken by order).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::frontend::dsl {

/// Optimal-string-alignment distance; gives up (returns limit + 1) once the distance exceeds
/// `limit` or either string is longer than 256 bytes.
std::size_t editDistance(std::string_view a, std::string_view b, std::size_t limit = 8);

/// Closest candidate within max(1, |word| / 3) edits (words of 1-2 letters: case differences, or one edit
/// when one word contains the other) (case differences count 0 when the words differ only in case); nullopt
/// when none is close enough or `word` is itself a candidate.
std::optional<std::string> closestMatch(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace tessera::frontend::dsl
