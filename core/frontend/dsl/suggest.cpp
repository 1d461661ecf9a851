#include "core/frontend/dsl/suggest.h"

#include <algorithm>
#include <cctype>

namespace tessera::frontend::dsl {

std::size_t editDistance(std::string_view a, std::string_view b, std::size_t limit) {
    if (a.size() > 256 || b.size() > 256) return limit + 1;
    const std::size_t n = a.size(), m = b.size();
    if ((n > m ? n - m : m - n) > limit) return limit + 1;
    std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
    for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
    for (std::size_t i = 1; i <= n; ++i) {
        cur[0] = i;
        std::size_t rowMin = cur[0];
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                cur[j] = std::min(cur[j], prev2[j - 2] + 1);
            rowMin = std::min(rowMin, cur[j]);
        }
        if (rowMin > limit) return limit + 1;
        prev2 = prev;
        prev = cur;
    }
    return prev[m];
}

namespace {
std::string lower(std::string_view s) {
    std::string r(s);
    for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}
}  // namespace

std::optional<std::string> closestMatch(std::string_view word, const std::vector<std::string>& candidates) {
    if (word.empty() || word.size() > 256) return std::nullopt;
    const std::string lw = lower(word);
    // One- and two-letter words are too short for free edits: only case differences, or one
    // edit when one word contains the other ("jj" -> "j", "Cc" -> "C"; not "q" -> "x").
    const bool shortWord = word.size() <= 2;
    const std::size_t limit = shortWord ? 1 : std::max<std::size_t>(1, word.size() / 3);
    std::optional<std::string> best;
    std::size_t bestDist = limit + 1;
    for (const auto& c : candidates) {
        if (c == word) return std::nullopt;
        const std::string lc = lower(c);
        std::size_t d = lc == lw ? 0 : editDistance(lw, lc, limit);
        if (shortWord && d == 1 && lc.find(lw) == std::string::npos && lw.find(lc) == std::string::npos)
            continue;
        if (d < bestDist) {
            bestDist = d;
            best = c;
        }
    }
    return best;
}

}  // namespace tessera::frontend::dsl
