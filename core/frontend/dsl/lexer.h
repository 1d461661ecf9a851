#pragma once
/// @file
/// The DSL lexer: text -> tokens with source ranges (docs/dsl.md §2).
///
/// Never throws and never reads out of bounds. Malformed input (an unterminated string, a bad
/// escape, an integer that does not fit in int64, a stray character) yields an Error diagnostic
/// and a Token of kind Error, and lexing continues. Names and strings longer than
/// kMaxTokenBytes are errors. Quoted identifiers and strings are decoded (escapes resolved).
///
/// Thread rules: a Lexer is used by one thread; different lexers are independent.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/frontend/dsl/source_range.h"
#include "core/support/diagnostic.h"

namespace tessera::frontend::dsl {

enum class TokenKind {
    End,
    Error,
    Ident,   ///< plain identifier (reserved words too: see isReserved)
    QIdent,  ///< backtick-quoted identifier; `text` is the decoded name
    Int,
    Float,
    String,  ///< `text` is the decoded string
    Semi,
    Comma,
    Colon,
    Assign,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Arrow,
    ColonColon,
    Dot,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Less,
    LessEq,
    Greater,
    GreaterEq,
    EqEq,
    NotEq,
    AndAnd,
    OrOr,
    Bang,
    Question,
};

/// Human-readable token kind for messages: "';'", "identifier", "end of file".
const char* tokenKindName(TokenKind k);

struct Token {
    TokenKind kind = TokenKind::End;
    std::string text;  ///< identifier / decoded string / spelling of a number
    std::int64_t intValue = 0;
    double floatValue = 0.0;
    SourceRange range;
};

constexpr std::size_t kMaxTokenBytes = 64 * 1024;
constexpr std::size_t kMaxSourceBytes = 16 * 1024 * 1024;
constexpr std::size_t kMaxTokens = 2 * 1024 * 1024;  ///< more is an error (bounds memory use)

/// Reserved words (docs/dsl.md §2): tessera model opset input output param schedule fuse
/// anchor as graph tensor.
bool isReserved(std::string_view word);
/// True when `name` can be written without backticks (identifier syntax, not reserved).
bool isPlainIdentifier(std::string_view name);

/// Tokenizes all of `text`; the last token is End. Diagnostics go to `diags` with `file`.
std::vector<Token> tokenize(std::string_view text, const std::string& file, support::DiagnosticList& diags);

}  // namespace tessera::frontend::dsl
