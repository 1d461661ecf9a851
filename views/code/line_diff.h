#pragma once
/// @file
/// A line diff for comparing two versions of generated code (the Code dock's "Diff vs pinned"):
/// the longest common subsequence of lines, printed as a unified diff.
///
/// Semantics
/// - Lines are compared exactly (no whitespace folding). Texts are split at '\n'; a final '\n'
///   does not start an extra empty line, so "a\n" and "a" are both the one line "a".
/// - diffLines() returns the edit script in order: runs of Equal, Removed (only in `before`) and
///   Added (only in `after`) lines. Where several scripts are shortest, removals come before the
///   additions that replace them.
/// - unifiedDiff() prints it as `diff -u` does: "--- before", "+++ after" headers, then hunks
///   "@@ -l,n +l,n @@" with `context` lines of context around each change (hunks whose context
///   touches are merged), lines prefixed ' ', '-' or '+'. Line numbers are 1-based; an empty side
///   of a hunk is "-l,0" with l the line before it. Identical texts give an empty string.
/// - Cost: O(n·m) time and memory over the lines left after removing the common head and tail,
///   so a kernel of a few hundred lines diffs at once; above kMaxDiffCells cells the middle is
///   shown as one removal and one addition instead.
///
/// Thread rules: pure functions; any thread.

#include <cstddef>
#include <string>
#include <vector>

namespace tessera::views {

/// The largest LCS table (lines x lines) diffLines builds before giving up on alignment.
inline constexpr std::size_t kMaxDiffCells = std::size_t{16} << 20;

struct DiffLine {
    enum class Kind { Equal, Removed, Added };
    Kind kind = Kind::Equal;
    std::string text;
    int beforeLine = 0;  ///< 1-based line in `before` (0 for Added)
    int afterLine = 0;   ///< 1-based line in `after` (0 for Removed)
};

/// The text's lines (see the file comment).
std::vector<std::string> splitLines(const std::string& text);

/// The edit script from `before` to `after` (see the file comment).
std::vector<DiffLine> diffLines(const std::vector<std::string>& before, const std::vector<std::string>& after);

/// A unified diff of two texts; `beforeName`/`afterName` go into the headers.
std::string unifiedDiff(const std::string& before, const std::string& after, const std::string& beforeName,
                        const std::string& afterName, int context = 3);

}  // namespace tessera::views
