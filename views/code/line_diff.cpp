#include "views/code/line_diff.h"

#include <algorithm>

namespace tessera::views {

std::vector<std::string> splitLines(const std::string& text)
{
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t nl = text.find('\n', start);
        if (nl == std::string::npos) {
            lines.push_back(text.substr(start));
            break;
        }
        lines.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    return lines;
}

std::vector<DiffLine> diffLines(const std::vector<std::string>& a, const std::vector<std::string>& b)
{
    std::vector<DiffLine> out;
    std::size_t head = 0;
    while (head < a.size() && head < b.size() && a[head] == b[head])
        ++head;
    std::size_t tail = 0;
    while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail])
        ++tail;
    for (std::size_t i = 0; i < head; ++i)
        out.push_back({DiffLine::Kind::Equal, a[i], int(i + 1), int(i + 1)});

    const std::size_t n = a.size() - head - tail, m = b.size() - head - tail;
    auto removed = [&](std::size_t i) { out.push_back({DiffLine::Kind::Removed, a[head + i], int(head + i + 1), 0}); };
    auto added = [&](std::size_t j) { out.push_back({DiffLine::Kind::Added, b[head + j], 0, int(head + j + 1)}); };
    if (n * m > kMaxDiffCells) {
        for (std::size_t i = 0; i < n; ++i)
            removed(i);
        for (std::size_t j = 0; j < m; ++j)
            added(j);
    } else if (n > 0 || m > 0) {
        // lcs[i][j]: length of the LCS of a's middle from i and b's middle from j; walking it
        // forward yields the script in order.
        std::vector<int> lcs((n + 1) * (m + 1), 0);
        auto at = [&](std::size_t i, std::size_t j) -> int& { return lcs[i * (m + 1) + j]; };
        for (std::size_t i = n; i-- > 0;)
            for (std::size_t j = m; j-- > 0;)
                at(i, j) = a[head + i] == b[head + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
        std::size_t i = 0, j = 0;
        while (i < n || j < m) {
            if (i < n && j < m && a[head + i] == b[head + j]) {
                out.push_back({DiffLine::Kind::Equal, a[head + i], int(head + i + 1), int(head + j + 1)});
                ++i;
                ++j;
            } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
                removed(i++);
            } else {
                added(j++);
            }
        }
    }
    for (std::size_t k = tail; k-- > 0;)
        out.push_back({DiffLine::Kind::Equal, a[a.size() - 1 - k], int(a.size() - k), int(b.size() - k)});
    return out;
}

std::string unifiedDiff(const std::string& before, const std::string& after, const std::string& beforeName,
                        const std::string& afterName, int context)
{
    const std::vector<DiffLine> script = diffLines(splitLines(before), splitLines(after));
    const std::size_t count = script.size();
    std::vector<std::size_t> changes;
    for (std::size_t k = 0; k < count; ++k)
        if (script[k].kind != DiffLine::Kind::Equal)
            changes.push_back(k);
    if (changes.empty())
        return {};
    const std::size_t ctx = static_cast<std::size_t>(std::max(0, context));
    std::string out = "--- " + beforeName + "\n+++ " + afterName + "\n";
    std::size_t c = 0;
    while (c < changes.size()) {
        const std::size_t first = changes[c] >= ctx ? changes[c] - ctx : 0;
        std::size_t last = changes[c];
        // Extend the hunk while the next change's context touches this one's.
        while (c + 1 < changes.size() && changes[c + 1] <= last + 2 * ctx + 1)
            last = changes[++c];
        ++c;
        const std::size_t end = std::min(count, last + ctx + 1);
        int aStart = 0, aLen = 0, bStart = 0, bLen = 0;
        std::string body;
        for (std::size_t k = first; k < end; ++k) {
            const DiffLine& d = script[k];
            const char mark = d.kind == DiffLine::Kind::Equal ? ' ' : d.kind == DiffLine::Kind::Removed ? '-' : '+';
            if (d.kind != DiffLine::Kind::Added) {
                if (aLen++ == 0)
                    aStart = d.beforeLine;
            }
            if (d.kind != DiffLine::Kind::Removed) {
                if (bLen++ == 0)
                    bStart = d.afterLine;
            }
            body += mark;
            body += d.text;
            body += '\n';
        }
        // An empty side is numbered by the line before the hunk, as diff -u does.
        auto lineBefore = [&](bool beforeSide) {
            for (std::size_t k = first; k-- > 0;) {
                const DiffLine& d = script[k];
                if (beforeSide && d.kind != DiffLine::Kind::Added)
                    return d.beforeLine;
                if (!beforeSide && d.kind != DiffLine::Kind::Removed)
                    return d.afterLine;
            }
            return 0;
        };
        if (aLen == 0)
            aStart = lineBefore(true);
        if (bLen == 0)
            bStart = lineBefore(false);
        out += "@@ -" + std::to_string(aStart) + "," + std::to_string(aLen) + " +" + std::to_string(bStart) + "," +
               std::to_string(bLen) + " @@\n" + body;
    }
    return out;
}

}  // namespace tessera::views
