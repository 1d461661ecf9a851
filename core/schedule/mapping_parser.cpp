#include "core/schedule/mapping_parser.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace tessera::schedule {

using support::Diagnostic;
using support::DiagnosticList;
using support::Expected;

namespace {

constexpr int64_t kMaxInteger = int64_t{1} << 62;

enum class Tok { Ident, Int, String, LParen, RParen, LBracket, RBracket, LBrace, RBrace, Comma, Dot, Star, Equal, Colon, Minus, End, Bad };

struct Token {
    Tok kind = Tok::End;
    size_t begin = 0;  ///< byte offset
    size_t end = 0;    ///< one past the last byte
    std::string text;  ///< identifier, string contents
    int64_t value = 0;
    bool overflow = false;
};

const char* const kPrimitives[] = {"spatial", "repeat", "row_spatial", "col_spatial", "row_repeat", "col_repeat", "auto_map"};
const char* const kMethods[] = {"spatial", "repeat", "projection"};
const char* const kKeywords[] = {"ranks", "attrs", "workers"};

/// Optimal-string-alignment distance: Levenshtein plus adjacent transpositions ("repaet" -> 1).
size_t editDistance(std::string_view a, std::string_view b) {
    if (a.size() > 64 || b.size() > 64) return 1000;
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

template <size_t N>
std::string closest(std::string_view word, const char* const (&candidates)[N]) {
    std::string best;
    size_t bestDist = 1000;
    for (const char* c : candidates) {
        const size_t d = editDistance(word, c);
        if (d < bestDist) {
            bestDist = d;
            best = c;
        }
    }
    const size_t limit = std::max<size_t>(2, word.size() / 3);
    return bestDist <= limit ? best : std::string();
}

std::string printable(std::string_view s) {
    std::string out;
    for (unsigned char c : s.substr(0, 40)) {
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    if (s.size() > 40) out += "...";
    return out;
}

/// Thrown only inside this file to unwind the recursive descent; parseMapping catches it.
struct ParseFailure {
    Diagnostic diag;
};

struct Range {
    size_t begin = 0, end = 0;
};

class Parser {
public:
    Parser(std::string_view text, std::string_view file) : m_text(text), m_file(file) { m_cur = lex(); }

    TaskMapping parseTop() {
        TaskMapping m = parseExpr(0).first;
        if (m_cur.kind != Tok::End) fail(m_cur, "unexpected " + describe(m_cur) + " after the mapping expression",
                                         {"combine mappings with `*` or chain them with `.spatial(...)` / `.repeat(...)`"});
        return m;
    }

private:
    // ---- lexer ------------------------------------------------------------------------------
    Token lex() {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t' || m_text[m_pos] == '\n' ||
                                         m_text[m_pos] == '\r'))
            ++m_pos;
        Token t;
        t.begin = m_pos;
        if (m_pos >= m_text.size()) {
            t.kind = Tok::End;
            t.end = m_pos;
            return t;
        }
        const char c = m_text[m_pos];
        auto single = [&](Tok k) {
            t.kind = k;
            t.end = ++m_pos;
            return t;
        };
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            while (m_pos < m_text.size() &&
                   (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
                ++m_pos;
            t.kind = Tok::Ident;
            t.end = m_pos;
            t.text = std::string(m_text.substr(t.begin, t.end - t.begin));
            return t;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            while (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos]))) {
                const int digit = m_text[m_pos] - '0';
                // Checked before multiplying: value * 10 + digit must stay <= kMaxInteger.
                if (!t.overflow && t.value > (kMaxInteger - digit) / 10) t.overflow = true;
                if (!t.overflow) t.value = t.value * 10 + digit;
                ++m_pos;
            }
            t.kind = Tok::Int;
            t.end = m_pos;
            return t;
        }
        if (c == '"' || c == '\'') {
            ++m_pos;
            while (m_pos < m_text.size() && m_text[m_pos] != c && m_text[m_pos] != '\n') t.text += m_text[m_pos++];
            if (m_pos >= m_text.size() || m_text[m_pos] != c) {
                t.kind = Tok::Bad;
                t.end = m_pos;
                fail(t, "unterminated string", {std::string("close the string with ") + c});
            }
            t.kind = Tok::String;
            t.end = ++m_pos;
            return t;
        }
        switch (c) {
            case '(': return single(Tok::LParen);
            case ')': return single(Tok::RParen);
            case '[': return single(Tok::LBracket);
            case ']': return single(Tok::RBracket);
            case '{': return single(Tok::LBrace);
            case '}': return single(Tok::RBrace);
            case ',': return single(Tok::Comma);
            case '.': return single(Tok::Dot);
            case '*': return single(Tok::Star);
            case '=': return single(Tok::Equal);
            case ':': return single(Tok::Colon);
            case '-': return single(Tok::Minus);
            default: break;
        }
        // One UTF-8 sequence (or one byte) so the caret covers the whole character.
        size_t len = 1;
        const auto uc = static_cast<unsigned char>(c);
        if (uc >= 0xc0) len = uc >= 0xf0 ? 4 : uc >= 0xe0 ? 3 : 2;
        t.kind = Tok::Bad;
        t.end = std::min(m_text.size(), m_pos + len);
        fail(t, "unexpected character '" + printable(m_text.substr(t.begin, t.end - t.begin)) + "'",
             {"a mapping is built from spatial(...), repeat(...), auto_map(...), `*` and `.`"});
        return t;
    }

    void advance() { m_cur = lex(); }

    // ---- diagnostics ------------------------------------------------------------------------
    [[noreturn]] void failRange(Range r, std::string message, std::vector<std::string> notes = {}) {
        Diagnostic d;
        d.file = std::string(m_file);
        const size_t last = r.end > r.begin ? r.end - 1 : r.begin;
        d.begin = location(r.begin);
        d.end = location(last);
        d.message = std::move(message);
        d.notes = std::move(notes);
        throw ParseFailure{std::move(d)};
    }
    [[noreturn]] void fail(const Token& t, std::string message, std::vector<std::string> notes = {}) {
        failRange({t.begin, t.end}, std::move(message), std::move(notes));
    }

    /// 1-based line and byte column of an offset (expressions are usually one line).
    support::SourceLocation location(size_t offset) const {
        offset = std::min(offset, m_text.size());
        int line = 1;
        size_t lineStart = 0;
        for (size_t i = 0; i < offset; ++i)
            if (m_text[i] == '\n') {
                ++line;
                lineStart = i + 1;
            }
        return {line, static_cast<int>(offset - lineStart) + 1};
    }

    std::string describe(const Token& t) const {
        switch (t.kind) {
            case Tok::End: return "end of input";
            case Tok::Ident: return "'" + printable(t.text) + "'";
            case Tok::Int: return "number " + printable(m_text.substr(t.begin, t.end - t.begin));
            case Tok::String: return "string";
            default: return "'" + printable(m_text.substr(t.begin, t.end - t.begin)) + "'";
        }
    }

    Token expect(Tok kind, const char* what) {
        if (m_cur.kind != kind) fail(m_cur, std::string("expected ") + what + ", found " + describe(m_cur));
        Token t = m_cur;
        advance();
        return t;
    }

    int64_t parseInt(const char* what) {
        bool negative = false;
        size_t begin = m_cur.begin;
        if (m_cur.kind == Tok::Minus) {
            negative = true;
            advance();
        }
        if (m_cur.kind != Tok::Int) fail(m_cur, std::string("expected ") + what + ", found " + describe(m_cur));
        if (m_cur.overflow) fail(m_cur, "integer " + printable(m_text.substr(m_cur.begin, m_cur.end - m_cur.begin)) + " is too large");
        const int64_t v = negative ? -m_cur.value : m_cur.value;
        m_lastIntRange = {begin, m_cur.end};
        advance();
        return v;
    }

    // ---- grammar ----------------------------------------------------------------------------
    using Result = std::pair<TaskMapping, Range>;

    TaskMapping unwrap(Expected<TaskMapping> e, Range r) {
        if (!e) {
            const Diagnostic* d = e.diagnostics().firstError();
            failRange(r, d ? d->message : "invalid mapping", d ? d->notes : std::vector<std::string>{});
        }
        return std::move(*e);
    }

    Result parseExpr(int depth) {
        Result lhs = parseChain(depth);
        while (m_cur.kind == Tok::Star) {
            const Token star = m_cur;
            advance();
            Result rhs = parseChain(depth);
            Range all{lhs.second.begin, rhs.second.end};
            if (lhs.first.rank() != rhs.first.rank())
                fail(star, "cannot compose rank-" + std::to_string(lhs.first.rank()) + " " + lhs.first.str() +
                               " with rank-" + std::to_string(rhs.first.rank()) + " " + rhs.first.str(),
                     {"both sides of `*` must have the same number of dimensions"});
            lhs.first = unwrap(TaskMapping::compose(lhs.first, rhs.first), all);
            lhs.second = all;
        }
        return lhs;
    }

    Result parseChain(int depth) {
        Result r = parseAtom(depth);
        while (m_cur.kind == Tok::Dot) {
            advance();
            if (m_cur.kind != Tok::Ident) fail(m_cur, "expected a method after '.', found " + describe(m_cur),
                                               {"chain with .spatial(...), .repeat(...) or .projection({dim: 0})"});
            const Token name = m_cur;
            advance();
            if (name.text == "spatial" || name.text == "repeat") {
                Result rhs = parseCall(name, depth);
                Range all{r.second.begin, rhs.second.end};
                if (r.first.rank() != rhs.first.rank())
                    failRange({name.begin, rhs.second.end},
                              "cannot compose rank-" + std::to_string(r.first.rank()) + " " + r.first.str() +
                                  " with rank-" + std::to_string(rhs.first.rank()) + " " + rhs.first.str(),
                              {"a chained level must have the same number of dimensions"});
                r.first = unwrap(TaskMapping::compose(r.first, rhs.first), all);
                r.second = all;
            } else if (name.text == "projection") {
                r = parseProjection(std::move(r), name);
            } else {
                std::vector<std::string> notes;
                if (auto c = closest(name.text, kMethods); !c.empty()) notes.push_back("did you mean `" + c + "`?");
                else notes.push_back("chain with .spatial(...), .repeat(...) or .projection({dim: 0})");
                fail(name, "unknown mapping method '" + printable(name.text) + "'", std::move(notes));
            }
        }
        return r;
    }

    Result parseProjection(Result base, const Token& name) {
        expect(Tok::LParen, "'(' after projection");
        expect(Tok::LBrace, "'{' (projection takes a dict {dim: 0, ...})");
        std::vector<int> dims;
        while (m_cur.kind != Tok::RBrace) {
            const int64_t dim = parseInt("a dimension");
            const Range dimRange = m_lastIntRange;
            expect(Tok::Colon, "':'");
            const int64_t value = parseInt("0");
            if (value != 0) failRange(m_lastIntRange, "projection value must be 0, got " + std::to_string(value),
                                      {"Hidet projects a dimension onto index 0 only"});
            if (dim < 0 || dim >= base.first.rank())
                failRange(dimRange, "projection dim " + std::to_string(dim) + " is out of range for rank " +
                                        std::to_string(base.first.rank()));
            dims.push_back(static_cast<int>(dim));
            if (m_cur.kind == Tok::Comma) advance();
            else if (m_cur.kind != Tok::RBrace) fail(m_cur, "expected ',' or '}', found " + describe(m_cur));
        }
        advance();
        const Token close = expect(Tok::RParen, "')'");
        Range all{base.second.begin, close.end};
        base.first = unwrap(base.first.projection(dims), {name.begin, close.end});
        base.second = all;
        return base;
    }

    Result parseAtom(int depth) {
        if (m_cur.kind == Tok::LParen) {
            const Token open = m_cur;
            if (depth + 1 > kMaxNesting) fail(open, "parentheses nested deeper than " + std::to_string(kMaxNesting));
            advance();
            Result inner = parseExpr(depth + 1);
            if (m_cur.kind != Tok::RParen)
                fail(m_cur, "expected ')' to close the '(' at column " + std::to_string(open.begin + 1) + ", found " +
                                describe(m_cur));
            inner.second = {open.begin, m_cur.end};
            advance();
            return inner;
        }
        if (m_cur.kind != Tok::Ident) {
            fail(m_cur, "expected a mapping (spatial, repeat, auto_map, ...), found " + describe(m_cur));
        }
        const Token name = m_cur;
        const bool known = std::any_of(std::begin(kPrimitives), std::end(kPrimitives),
                                       [&](const char* p) { return name.text == p; });
        if (!known) {
            std::vector<std::string> notes;
            if (auto c = closest(name.text, kPrimitives); !c.empty()) notes.push_back("did you mean `" + c + "`?");
            else notes.push_back("primitives are spatial, repeat, row_spatial, col_spatial, row_repeat, col_repeat, auto_map");
            fail(name, "unknown primitive '" + printable(name.text) + "'", std::move(notes));
        }
        advance();
        return parseCall(name, depth);
    }

    struct Args {
        std::vector<int64_t> positional;
        std::vector<Range> positionalRanges;
        std::optional<std::vector<int>> ranks;
        Range ranksRange;
        std::optional<std::string> attrs;
        Range attrsRange;
        std::optional<int64_t> workers;
        Range workersRange;
    };

    Args parseArgs(const Token& name) {
        Args a;
        expect(Tok::LParen, ("'(' after " + printable(name.text)).c_str());
        bool sawKeyword = false;
        while (m_cur.kind != Tok::RParen) {
            if (m_cur.kind == Tok::Ident) {
                const Token kw = m_cur;
                advance();
                if (m_cur.kind != Tok::Equal) {
                    fail(kw, "expected an extent or keyword=value, found '" + printable(kw.text) + "'",
                         {"extents are integer literals"});
                }
                advance();
                sawKeyword = true;
                if (kw.text == "ranks") {
                    if (a.ranks) fail(kw, "ranks given twice");
                    const size_t b = m_cur.begin;
                    a.ranks = parseIntList();
                    a.ranksRange = {b, m_lastEnd};
                } else if (kw.text == "attrs") {
                    if (a.attrs) fail(kw, "attrs given twice");
                    const Token s = expect(Tok::String, "a string such as \"u2.\"");
                    a.attrs = s.text;
                    a.attrsRange = {s.begin, s.end};
                } else if (kw.text == "workers") {
                    if (a.workers) fail(kw, "workers given twice");
                    a.workers = parseInt("the number of workers");
                    a.workersRange = m_lastIntRange;
                } else {
                    std::vector<std::string> notes;
                    if (auto c = closest(kw.text, kKeywords); !c.empty()) notes.push_back("did you mean `" + c + "`?");
                    else notes.push_back("keywords are ranks=[...], attrs=\"...\" (repeat) and workers=N (auto_map)");
                    fail(kw, "unknown keyword '" + printable(kw.text) + "'", std::move(notes));
                }
            } else {
                if (sawKeyword) fail(m_cur, "positional extent after a keyword argument");
                const int64_t v = parseInt("an extent");
                if (a.positional.size() >= static_cast<size_t>(kMaxRank))
                    failRange(m_lastIntRange, printable(name.text) + " has more than " + std::to_string(kMaxRank) +
                                                  " extents");
                a.positional.push_back(v);
                a.positionalRanges.push_back(m_lastIntRange);
            }
            if (m_cur.kind == Tok::Comma) advance();
            else if (m_cur.kind != Tok::RParen) fail(m_cur, "expected ',' or ')', found " + describe(m_cur));
        }
        m_lastEnd = m_cur.end;
        advance();
        return a;
    }

    std::vector<int> parseIntList() {
        Tok close;
        if (m_cur.kind == Tok::LBracket) close = Tok::RBracket;
        else if (m_cur.kind == Tok::LParen) close = Tok::RParen;
        else fail(m_cur, "expected a list such as [1,0], found " + describe(m_cur));
        advance();
        std::vector<int> out;
        while (m_cur.kind != close) {
            const int64_t v = parseInt("a rank");
            if (v < 0 || v >= kMaxRank) failRange(m_lastIntRange, "rank " + std::to_string(v) + " is out of range");
            if (out.size() >= static_cast<size_t>(kMaxRank)) failRange(m_lastIntRange, "too many ranks");
            out.push_back(static_cast<int>(v));
            if (m_cur.kind == Tok::Comma) advance();
            else if (m_cur.kind != close) fail(m_cur, "expected ',' or the end of the list, found " + describe(m_cur));
        }
        m_lastEnd = m_cur.end;
        advance();
        return out;
    }

    Result parseCall(const Token& name, int /*depth*/) {
        Args a = parseArgs(name);
        const Range call{name.begin, m_lastEnd};
        const std::string& n = name.text;
        const bool isAuto = n == "auto_map";
        const bool isRepeat = n == "repeat" || n == "row_repeat" || n == "col_repeat";
        const bool rowCol = n.rfind("row_", 0) == 0 || n.rfind("col_", 0) == 0;
        if (a.positional.empty())
            failRange(call, n + "() needs at least one extent", {"e.g. " + n + (isAuto ? "(8,32, workers=64)" : "(2,5)")});
        for (size_t i = 0; i < a.positional.size(); ++i)
            if (a.positional[i] <= 0)
                failRange(a.positionalRanges[i],
                          "extent " + std::to_string(a.positional[i]) + " of dim " + std::to_string(i) + " must be positive",
                          {"every dimension of a task shape has at least one task"});
        if (a.attrs && !isRepeat)
            failRange(a.attrsRange, "attrs are only allowed on repeat", {"unroll attributes describe the loops of a repeat"});
        if (a.workers && !isAuto) failRange(a.workersRange, "workers= is only allowed on auto_map");
        if (a.ranks && rowCol)
            failRange(a.ranksRange, n + " fixes its ranks; use " + n.substr(4) + "(..., ranks=[...]) instead");
        if (a.ranks) {
            std::vector<bool> seen(a.positional.size(), false);
            bool ok = a.ranks->size() == a.positional.size();
            for (int r : *a.ranks) {
                if (!ok) break;
                if (r < 0 || static_cast<size_t>(r) >= seen.size() || seen[static_cast<size_t>(r)]) ok = false;
                else seen[static_cast<size_t>(r)] = true;
            }
            if (!ok)
                failRange(a.ranksRange,
                          "ranks must be a permutation of 0.." + std::to_string(a.positional.size() - 1) + " (one per dimension)",
                          {"e.g. ranks=[" + [&] {
                               std::string s;
                               for (size_t i = a.positional.size(); i-- > 0;) s += std::to_string(i) + (i ? "," : "");
                               return s;
                           }() + "] for column-major"});
        }
        std::vector<int> ranks = a.ranks.value_or(std::vector<int>{});
        if (n.rfind("col_", 0) == 0) {
            ranks.resize(a.positional.size());
            for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int>(ranks.size() - 1 - i);
        }
        if (isAuto) {
            if (!a.workers) failRange(call, "auto_map needs workers=N", {"e.g. auto_map(8,32, workers=64)"});
            if (*a.workers <= 0) failRange(a.workersRange, "workers must be positive");
            return {unwrap(TaskMapping::autoMap(a.positional, *a.workers, ranks), call), call};
        }
        if (isRepeat) {
            if (a.attrs) {
                auto parsed = parseLoopAttrs(*a.attrs, a.positional.size());
                if (!parsed) {
                    const Diagnostic* d = parsed.diagnostics().firstError();
                    failRange(a.attrsRange, d ? d->message : "invalid attrs", d ? d->notes : std::vector<std::string>{});
                }
            }
            std::optional<std::string_view> attrs;
            if (a.attrs) attrs = *a.attrs;
            return {unwrap(TaskMapping::repeat(a.positional, ranks, attrs), call), call};
        }
        return {unwrap(TaskMapping::spatial(a.positional, ranks), call), call};
    }

    std::string_view m_text;
    std::string_view m_file;
    size_t m_pos = 0;
    Token m_cur;
    Range m_lastIntRange;
    size_t m_lastEnd = 0;
};

}  // namespace

Expected<TaskMapping> parseMapping(std::string_view text, std::string_view file) {
    DiagnosticList diags;
    if (text.size() > kMaxExpressionLength) {
        Diagnostic d;
        d.file = std::string(file);
        d.begin = {1, 1};
        d.end = {1, 1};
        d.message = "mapping expression is " + std::to_string(text.size()) + " bytes long, over the limit of " +
                    std::to_string(kMaxExpressionLength);
        diags.add(std::move(d));
        return diags;
    }
    try {
        Parser p(text, file);
        return p.parseTop();
    } catch (ParseFailure& f) {
        diags.add(std::move(f.diag));
        return diags;
    }
}

}  // namespace tessera::schedule
