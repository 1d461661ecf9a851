#include "core/frontend/dsl/lexer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace tessera::frontend::dsl {

SourceRange SourceRange::merge(const SourceRange& a, const SourceRange& b) {
    if (a.begin.line == 0) return b;
    if (b.begin.line == 0) return a;
    const SourceRange& first = a.offset <= b.offset ? a : b;
    const std::size_t endA = a.offset + a.length, endB = b.offset + b.length;
    const SourceRange& last = endA >= endB ? a : b;
    SourceRange r;
    r.begin = first.begin;
    r.offset = first.offset;
    r.end = last.end;
    r.length = std::max(endA, endB) - r.offset;
    return r;
}

const char* tokenKindName(TokenKind k) {
    switch (k) {
        case TokenKind::End:
            return "end of file";
        case TokenKind::Error:
            return "invalid token";
        case TokenKind::Ident:
            return "identifier";
        case TokenKind::QIdent:
            return "quoted identifier";
        case TokenKind::Int:
            return "integer";
        case TokenKind::Float:
            return "number";
        case TokenKind::String:
            return "string";
        case TokenKind::Semi:
            return "';'";
        case TokenKind::Comma:
            return "','";
        case TokenKind::Colon:
            return "':'";
        case TokenKind::Assign:
            return "'='";
        case TokenKind::LParen:
            return "'('";
        case TokenKind::RParen:
            return "')'";
        case TokenKind::LBracket:
            return "'['";
        case TokenKind::RBracket:
            return "']'";
        case TokenKind::LBrace:
            return "'{'";
        case TokenKind::RBrace:
            return "'}'";
        case TokenKind::Arrow:
            return "'->'";
        case TokenKind::ColonColon:
            return "'::'";
        case TokenKind::Dot:
            return "'.'";
        case TokenKind::Plus:
            return "'+'";
        case TokenKind::Minus:
            return "'-'";
        case TokenKind::Star:
            return "'*'";
        case TokenKind::Slash:
            return "'/'";
        case TokenKind::Percent:
            return "'%'";
        case TokenKind::Less:
            return "'<'";
        case TokenKind::LessEq:
            return "'<='";
        case TokenKind::Greater:
            return "'>'";
        case TokenKind::GreaterEq:
            return "'>='";
        case TokenKind::EqEq:
            return "'=='";
        case TokenKind::NotEq:
            return "'!='";
        case TokenKind::AndAnd:
            return "'&&'";
        case TokenKind::OrOr:
            return "'||'";
        case TokenKind::Bang:
            return "'!'";
        case TokenKind::Question:
            return "'?'";
    }
    return "token";
}

namespace {

constexpr std::array<std::string_view, 13> kReserved{"tessera", "model",    "opset", "input",  "output",
                                                     "param",   "schedule", "fuse",  "anchor", "as",
                                                     "graph",   "tensor",   "_"};

bool identStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool identChar(char c) { return identStart(c) || (c >= '0' && c <= '9'); }
bool digit(char c) { return c >= '0' && c <= '9'; }
int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

class Lexer {
public:
    Lexer(std::string_view text, const std::string& file, support::DiagnosticList& diags)
        : m_text(text), m_file(file), m_diags(diags) {}

    std::vector<Token> run() {
        std::vector<Token> out;
        for (;;) {
            skipSpace();
            Token t = next();
            const bool end = t.kind == TokenKind::End;
            if (!end && out.size() >= kMaxTokens) {
                error(t.range.begin, t.range.begin,
                      "more than " + std::to_string(kMaxTokens) + " tokens; the rest of the file is ignored");
                Token e;
                e.kind = TokenKind::End;
                e.range = t.range;
                e.range.length = 0;
                out.push_back(std::move(e));
                break;
            }
            out.push_back(std::move(t));
            if (end) break;
        }
        return out;
    }

private:
    std::string_view m_text;
    const std::string& m_file;
    support::DiagnosticList& m_diags;
    std::size_t m_pos = 0;
    int m_line = 1, m_col = 1;

    char peek(std::size_t ahead = 0) const {
        return m_pos + ahead < m_text.size() ? m_text[m_pos + ahead] : '\0';
    }
    bool atEnd() const { return m_pos >= m_text.size(); }
    void advance() {
        if (atEnd()) return;
        if (m_text[m_pos] == '\n') {
            ++m_line;
            m_col = 1;
        } else {
            ++m_col;
        }
        ++m_pos;
    }
    support::SourceLocation here() const { return {m_line, m_col}; }

    void skipSpace() {
        while (!atEnd()) {
            const char c = peek();
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
                advance();
            } else if (c == '#') {
                while (!atEnd() && peek() != '\n') advance();
            } else {
                break;
            }
        }
    }

    void finish(Token& t, std::size_t startPos, support::SourceLocation start, support::SourceLocation last) {
        t.range.begin = start;
        t.range.offset = startPos;
        t.range.length = m_pos - startPos;
        t.range.end = t.range.length > 0 ? last : start;
    }

    void error(support::SourceLocation b, support::SourceLocation e, std::string msg, std::string hint = {}) {
        support::Diagnostic d;
        d.file = m_file;
        d.begin = b;
        d.end = e;
        d.message = std::move(msg);
        if (!hint.empty()) d.notes.push_back("hint: " + hint);
        m_diags.add(std::move(d));
    }

    Token next() {
        Token t;
        const std::size_t startPos = m_pos;
        const support::SourceLocation start = here();
        support::SourceLocation last = start;
        auto take = [&](int n) {
            for (int i = 0; i < n; ++i) {
                last = here();
                advance();
            }
        };
        if (atEnd()) {
            t.kind = TokenKind::End;
            finish(t, startPos, start, start);
            return t;
        }
        const char c = peek();
        if (identStart(c)) {
            while (!atEnd() && identChar(peek())) take(1);
            t.kind = TokenKind::Ident;
            t.text = std::string(m_text.substr(startPos, m_pos - startPos));
            finish(t, startPos, start, last);
            if (t.text.size() > kMaxTokenBytes) {
                error(start, start, "identifier longer than " + std::to_string(kMaxTokenBytes) + " bytes");
                t.kind = TokenKind::Error;
            }
            return t;
        }
        if (digit(c)) return number(startPos, start);
        if (c == '`' || c == '"') return quoted(c, startPos, start);
        auto punct = [&](TokenKind k, int n) {
            take(n);
            t.kind = k;
            t.text = std::string(m_text.substr(startPos, m_pos - startPos));
            finish(t, startPos, start, last);
            return t;
        };
        const char d = peek(1);
        switch (c) {
            case ';':
                return punct(TokenKind::Semi, 1);
            case ',':
                return punct(TokenKind::Comma, 1);
            case ':':
                return d == ':' ? punct(TokenKind::ColonColon, 2) : punct(TokenKind::Colon, 1);
            case '=':
                return d == '=' ? punct(TokenKind::EqEq, 2) : punct(TokenKind::Assign, 1);
            case '(':
                return punct(TokenKind::LParen, 1);
            case ')':
                return punct(TokenKind::RParen, 1);
            case '[':
                return punct(TokenKind::LBracket, 1);
            case ']':
                return punct(TokenKind::RBracket, 1);
            case '{':
                return punct(TokenKind::LBrace, 1);
            case '}':
                return punct(TokenKind::RBrace, 1);
            case '-':
                return d == '>' ? punct(TokenKind::Arrow, 2) : punct(TokenKind::Minus, 1);
            case '.':
                return punct(TokenKind::Dot, 1);
            case '+':
                return punct(TokenKind::Plus, 1);
            case '*':
                return punct(TokenKind::Star, 1);
            case '/':
                return punct(TokenKind::Slash, 1);
            case '%':
                return punct(TokenKind::Percent, 1);
            case '<':
                return d == '=' ? punct(TokenKind::LessEq, 2) : punct(TokenKind::Less, 1);
            case '>':
                return d == '=' ? punct(TokenKind::GreaterEq, 2) : punct(TokenKind::Greater, 1);
            case '!':
                return d == '=' ? punct(TokenKind::NotEq, 2) : punct(TokenKind::Bang, 1);
            case '&':
                if (d == '&') return punct(TokenKind::AndAnd, 2);
                break;
            case '|':
                if (d == '|') return punct(TokenKind::OrOr, 2);
                break;
            case '?':
                return punct(TokenKind::Question, 1);
            default:
                break;
        }
        // A stray character (or a lone & or |): skip one UTF-8 sequence so the column stays sane.
        take(1);
        while (!atEnd() && (static_cast<unsigned char>(peek()) & 0xC0) == 0x80) take(1);
        t.kind = TokenKind::Error;
        finish(t, startPos, start, last);
        std::string shown;
        const unsigned char uc = static_cast<unsigned char>(c);
        if (uc >= 0x20 && uc < 0x7F)
            shown = std::string("'") + c + "'";
        else {
            static const char* hex = "0123456789abcdef";
            shown = std::string("byte 0x") + hex[uc >> 4] + hex[uc & 15];
        }
        std::string hint;
        if (c == '&')
            hint = "logical and is '&&'";
        else if (c == '|')
            hint = "logical or is '||'";
        else if (c == '\'')
            hint = "strings use double quotes; names with odd characters use backticks";
        error(start, last, "unexpected character " + shown, hint);
        return t;
    }

    Token number(std::size_t startPos, support::SourceLocation start) {
        Token t;
        support::SourceLocation last = start;
        auto take = [&]() {
            last = here();
            advance();
        };
        bool isFloat = false;
        while (digit(peek())) take();
        if (peek() == '.' && !identStart(peek(1))) {
            // "1." and "1.5" are floats; "1.e" is not consumed as exponent without digits.
            isFloat = true;
            take();
            while (digit(peek())) take();
        }
        if ((peek() == 'e' || peek() == 'E') &&
            (digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && digit(peek(2))))) {
            isFloat = true;
            take();
            if (peek() == '+' || peek() == '-') take();
            while (digit(peek())) take();
        }
        t.text = std::string(m_text.substr(startPos, m_pos - startPos));
        finish(t, startPos, start, last);
        if (t.text.size() > 400) {
            t.kind = TokenKind::Error;
            error(start, last, "number literal too long");
            return t;
        }
        if (isFloat) {
            t.kind = TokenKind::Float;
            t.floatValue = std::strtod(t.text.c_str(), nullptr);
            if (!std::isfinite(t.floatValue)) {
                t.kind = TokenKind::Error;
                error(start, last, "number " + t.text + " is out of range of a 64-bit float",
                      "use inf for infinity");
            }
            return t;
        }
        t.kind = TokenKind::Int;
        std::int64_t v = 0;
        for (char ch : t.text) {
            const int dv = ch - '0';
            if (v > (std::numeric_limits<std::int64_t>::max() - dv) / 10) {
                t.kind = TokenKind::Error;
                error(start, last, "integer " + t.text + " does not fit in 64 bits");
                return t;
            }
            v = v * 10 + dv;
        }
        t.intValue = v;
        t.floatValue = static_cast<double>(v);
        return t;
    }

    Token quoted(char q, std::size_t startPos, support::SourceLocation start) {
        Token t;
        support::SourceLocation last = start;
        auto take = [&]() {
            last = here();
            advance();
        };
        take();  // opening quote
        std::string value;
        bool ok = true, closed = false, tooLong = false;
        while (!atEnd()) {
            const char c = peek();
            if (c == q) {
                take();
                closed = true;
                break;
            }
            if (c == '\n') break;
            if (c == '\\') {
                const support::SourceLocation escAt = here();
                take();
                if (atEnd()) break;
                const char e = peek();
                take();
                switch (e) {
                    case '\\':
                        value += '\\';
                        break;
                    case '`':
                        value += '`';
                        break;
                    case '"':
                        value += '"';
                        break;
                    case 'n':
                        value += '\n';
                        break;
                    case 't':
                        value += '\t';
                        break;
                    case 'r':
                        value += '\r';
                        break;
                    case '0':
                        value += '\0';
                        break;
                    case 'x': {
                        const int h1 = hexValue(peek()), h2 = h1 >= 0 ? hexValue(peek(1)) : -1;
                        if (h1 < 0 || h2 < 0) {
                            error(escAt, last, "'\\x' must be followed by two hex digits");
                            ok = false;
                        } else {
                            take();
                            take();
                            value += static_cast<char>(h1 * 16 + h2);
                        }
                        break;
                    }
                    default: {
                        std::string shown =
                            (static_cast<unsigned char>(e) >= 0x20 && static_cast<unsigned char>(e) < 0x7F)
                                ? std::string(1, e)
                                : std::string("?");
                        error(escAt, last, "unknown escape '\\" + shown + "'",
                              "escapes are \\\\ \\` \\\" \\n \\t \\r \\0 \\xHH");
                        ok = false;
                    }
                }
            } else {
                take();
                value += c;
            }
            if (value.size() > kMaxTokenBytes && !tooLong) {
                tooLong = true;
                ok = false;
                error(start, start,
                      std::string(q == '`' ? "quoted name" : "string") + " longer than " +
                          std::to_string(kMaxTokenBytes) + " bytes");
            }
        }
        finish(t, startPos, start, last);
        if (!closed) {
            error(start, last, std::string("unterminated ") + (q == '`' ? "quoted name" : "string"),
                  std::string("close it with ") + q + " on the same line");
            ok = false;
        }
        if (tooLong) value.clear();
        t.text = std::move(value);
        t.kind = !ok ? TokenKind::Error : q == '`' ? TokenKind::QIdent : TokenKind::String;
        if (t.kind == TokenKind::QIdent && t.text.empty()) {
            error(start, last, "empty quoted name");
            t.kind = TokenKind::Error;
        }
        return t;
    }
};

}  // namespace

bool isReserved(std::string_view word) {
    return std::find(kReserved.begin(), kReserved.end(), word) != kReserved.end();
}

bool isPlainIdentifier(std::string_view name) {
    if (name.empty() || !identStart(name[0])) return false;
    for (char c : name)
        if (!identChar(c)) return false;
    return !isReserved(name);
}

std::vector<Token> tokenize(std::string_view text, const std::string& file, support::DiagnosticList& diags) {
    if (text.size() > kMaxSourceBytes) {
        support::Diagnostic d;
        d.file = file;
        d.begin = {1, 1};
        d.end = {1, 1};
        d.message = "file is larger than " + std::to_string(kMaxSourceBytes / (1024 * 1024)) + " MiB";
        diags.add(std::move(d));
        Token end;
        end.range.begin = end.range.end = {1, 1};
        return {end};
    }
    return Lexer(text, file, diags).run();
}

}  // namespace tessera::frontend::dsl
