#include "core/frontend/dsl/parser.h"

#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "core/frontend/dsl/lexer.h"
#include "core/frontend/dsl/suggest.h"

namespace tessera::frontend::dsl {

namespace {

using TK = TokenKind;

/// Thrown inside the parser only, to unwind to the statement loop; never escapes parseSource.
struct SyntaxError {};

const std::vector<std::string> kStatementWords{"tessera", "model", "opset",    "input",
                                               "output",  "param", "schedule", "fuse"};
const std::vector<std::string> kInitWords{"random", "zeros", "ones", "fill", "npy", "onnx"};
const std::vector<std::string> kReducers{"sum", "prod", "max", "min"};
const std::vector<std::string> kScheduleWords{"target", "grid",  "block",  "warp",      "thread",
                                              "tile",   "stage", "unroll", "vectorize", "parallel"};

class Parser {
public:
    Parser(std::string_view text, const std::string& file, support::DiagnosticList& diags)
        : m_text(text), m_file(file), m_diags(diags) {
        m_tokens = tokenize(text, file, diags);
        // Lexing errors were reported; drop Error tokens' effect by keeping them (they fail to
        // match anything, and recovery skips them).
    }

    ast::Program run() {
        ast::Program prog;
        if (isWord("tessera")) {
            const Token& kw = cur();
            try {
                advance();
                if (cur().kind == TK::Float || cur().kind == TK::Int) {
                    prog.version = cur().text;
                    if (cur().text != "0.1")
                        warning(
                            cur().range,
                            "this parser implements language version 0.1, the file asks for " + cur().text);
                    advance();
                } else {
                    errorHere("expected a version number after 'tessera', e.g. 'tessera 0.1;'");
                }
                expectSemi("the version line");
            } catch (const SyntaxError&) {
                (void)kw;
                sync();
            }
        }
        while (cur().kind != TK::End) {
            if (cur().kind == TK::RBrace) {
                error(cur().range, "unmatched '}'");
                advance();
                continue;
            }
            parseStatementInto(prog.statements, /*inGraph=*/false);
        }
        prog.poisoned = std::move(m_poisoned);
        return prog;
    }

private:
    std::string_view m_text;
    const std::string& m_file;
    support::DiagnosticList& m_diags;
    std::vector<Token> m_tokens;
    std::size_t m_pos = 0;
    int m_depth = 0;
    /// Names the statement being parsed defines so far; poisoned when the statement fails.
    std::vector<ast::Name> m_pendingDefs;
    std::vector<ast::Name> m_poisoned;

    /// Records a name the current statement defines, so that a syntax error later in the
    /// statement does not turn each later use of the name into an error of its own.
    const ast::Name& defines(const ast::Name& n) {
        m_pendingDefs.push_back(n);
        return n;
    }

    struct DepthGuard {
        Parser& p;
        explicit DepthGuard(Parser& parser) : p(parser) {
            if (++p.m_depth > kMaxNestingDepth) {
                --p.m_depth;
                p.error(p.cur().range, "nesting deeper than " + std::to_string(kMaxNestingDepth) +
                                           " parser levels (each parenthesis, call or subscript uses several)");
                throw SyntaxError{};
            }
        }
        ~DepthGuard() { --p.m_depth; }
        DepthGuard(const DepthGuard&) = delete;
        DepthGuard& operator=(const DepthGuard&) = delete;
    };

    // ---- token helpers ------------------------------------------------------------------
    const Token& cur() const { return m_tokens[m_pos]; }
    const Token& peekTok(std::size_t ahead = 1) const {
        const std::size_t i = std::min(m_pos + ahead, m_tokens.size() - 1);
        return m_tokens[i];
    }
    const Token& prevTok() const { return m_tokens[m_pos > 0 ? m_pos - 1 : 0]; }
    void advance() {
        if (m_pos + 1 < m_tokens.size()) ++m_pos;
    }
    bool at(TK k) const { return cur().kind == k; }
    bool isWord(std::string_view w) const { return cur().kind == TK::Ident && cur().text == w; }
    bool accept(TK k) {
        if (!at(k)) return false;
        advance();
        return true;
    }

    void report(support::Severity sev, const SourceRange& r, std::string msg,
                std::vector<std::string> notes = {}) {
        m_diags.add(makeDiagnostic(sev, m_file, r, std::move(msg), std::move(notes)));
    }
    void error(const SourceRange& r, std::string msg, std::vector<std::string> notes = {}) {
        report(support::Severity::Error, r, std::move(msg), std::move(notes));
    }
    void warning(const SourceRange& r, std::string msg) {
        report(support::Severity::Warning, r, std::move(msg));
    }

    std::string describe(const Token& t) const {
        switch (t.kind) {
            case TK::Ident:
                return "'" + t.text + "'";
            case TK::Int:
            case TK::Float:
                return "number " + t.text;
            case TK::String:
                return "a string";
            case TK::QIdent:
                return "quoted name";
            default:
                return tokenKindName(t.kind);
        }
    }

    /// Reports "expected X, found Y" at the current token (lexer errors already reported are not
    /// reported twice) and unwinds to the statement.
    [[noreturn]] void errorHere(const std::string& expected, std::vector<std::string> notes = {}) {
        if (!at(TK::Error)) error(cur().range, expected + ", found " + describe(cur()), std::move(notes));
        throw SyntaxError{};
    }
    void expect(TK k, const std::string& context) {
        if (accept(k)) return;
        errorHere(std::string("expected ") + tokenKindName(k) + " " + context);
    }
    /// A missing ';' at a line end is reported and assumed (the next line is not skipped).
    void expectSemi(const std::string& after) {
        if (accept(TK::Semi)) return;
        const Token& prev = prevTok();
        if (cur().kind == TK::End || cur().kind == TK::RBrace ||
            cur().range.begin.line > prev.range.end.line) {
            SourceRange r = prev.range;
            r.begin = r.end;
            r.begin.column = r.end.column + 1;
            r.end = r.begin;
            error(r, "expected ';' after " + after);
            return;
        }
        errorHere("expected ';' after " + after);
    }

    /// Skips to the end of the current statement: past the next ';' at depth 0, or up to a '}'
    /// at depth 0 (the end of the enclosing block), or the end of the file.
    void sync() {
        int depth = 0;
        while (!at(TK::End)) {
            const TK k = cur().kind;
            if (depth == 0 && k == TK::Semi) {
                advance();
                return;
            }
            if (depth == 0 && k == TK::RBrace) return;
            if (k == TK::LParen || k == TK::LBracket || k == TK::LBrace) ++depth;
            if ((k == TK::RParen || k == TK::RBracket || k == TK::RBrace) && depth > 0) {
                --depth;
                // A block closed at depth 0 ends a statement (schedule { ... } without ';').
                if (depth == 0 && k == TK::RBrace) {
                    advance();
                    if (at(TK::Semi)) advance();
                    return;
                }
            }
            advance();
        }
    }

    SourceRange rangeFrom(const SourceRange& start) const {
        return SourceRange::merge(start, prevTok().range);
    }

    // ---- names ----------------------------------------------------------------------------
    bool atName() const {
        return (cur().kind == TK::Ident && !isReserved(cur().text)) || cur().kind == TK::QIdent;
    }
    ast::Name parseName(const std::string& what) {
        if (atName()) {
            ast::Name n{cur().text, cur().range};
            advance();
            return n;
        }
        if (cur().kind == TK::Ident && isReserved(cur().text))
            errorHere("expected " + what, {"hint: '" + cur().text + "' is a reserved word; write `" +
                                           cur().text + "` in backticks to use it as a name"});
        errorHere("expected " + what);
    }
    ast::Name parseIdent(const std::string& what) {
        if (at(TK::Ident) && !isReserved(cur().text)) {
            ast::Name n{cur().text, cur().range};
            advance();
            return n;
        }
        errorHere("expected " + what);
    }

    // ---- statements -----------------------------------------------------------------------
    void parseStatementInto(std::vector<ast::Statement>& out, bool inGraph) {
        const std::size_t startPos = m_pos;
        // Graph bodies nest statements: the enclosing statement's names wait while the inner ones parse.
        std::vector<ast::Name> enclosingDefs = std::exchange(m_pendingDefs, {});
        try {
            ast::Statement s = parseStatement(inGraph);
            out.push_back(std::move(s));
        } catch (const SyntaxError&) {
            for (auto& n : m_pendingDefs) m_poisoned.push_back(std::move(n));
            sync();
        }
        m_pendingDefs = std::move(enclosingDefs);
        if (m_pos == startPos) advance();  // always make progress
    }

    ast::Statement parseStatement(bool inGraph) {
        ast::Statement s;
        const SourceRange start = cur().range;
        if (cur().kind == TK::Ident) {
            const std::string& w = cur().text;
            auto notInGraph = [&](const char* what) {
                if (inGraph) {
                    error(cur().range, std::string(what) + " statements are not allowed inside a graph body");
                    throw SyntaxError{};
                }
            };
            if (w == "tessera") {
                error(cur().range, "the version line must be the first statement");
                throw SyntaxError{};
            }
            if (w == "model") {
                notInGraph("'model'");
                advance();
                s.kind = ast::Statement::Kind::Model;
                s.model.kwargs.push_back(parseKwArg());
                while (accept(TK::Comma)) s.model.kwargs.push_back(parseKwArg());
                expectSemi("the model statement");
                s.model.range = rangeFrom(start);
                return s;
            }
            if (w == "opset") {
                notInGraph("'opset'");
                advance();
                s.kind = ast::Statement::Kind::Opset;
                if (!at(TK::Int)) s.opset.domain = parseDomain();
                if (!at(TK::Int)) errorHere("expected the opset version (an integer)");
                s.opset.version = cur().intValue;
                advance();
                expectSemi("the opset statement");
                s.opset.range = rangeFrom(start);
                return s;
            }
            if (w == "input") {
                notInGraph("'input'");
                advance();
                s.kind = ast::Statement::Kind::Input;
                s.input.name = defines(parseName("an input name"));
                expect(TK::Colon, "and a type after the input name (input x: f32[1, 3]);");
                s.input.type = parseType();
                if (accept(TK::Assign)) s.input.init = parseInitializer();
                expectSemi("the input declaration");
                s.input.range = rangeFrom(start);
                return s;
            }
            if (w == "output") {
                notInGraph("'output'");
                advance();
                s.kind = ast::Statement::Kind::Output;
                do {
                    ast::Name n = parseName("an output name");
                    std::optional<ast::Type> t;
                    if (accept(TK::Colon)) t = parseType();
                    s.output.items.emplace_back(std::move(n), std::move(t));
                } while (accept(TK::Comma));
                expectSemi("the output declaration");
                s.output.range = rangeFrom(start);
                return s;
            }
            if (w == "param") {
                advance();
                s.kind = ast::Statement::Kind::Param;
                s.param.name = defines(parseName("a parameter name"));
                expect(TK::Colon, "and a type after the parameter name (param w: f32[3, 3] = zeros;)");
                s.param.type = parseType();
                if (!at(TK::Assign))
                    errorHere(
                        "expected '=' and an initializer (random(seed=1), zeros, npy(\"w.npy\"), [1, 2], "
                        "...)");
                advance();
                s.param.init = parseInitializer();
                expectSemi("the parameter declaration");
                s.param.range = rangeFrom(start);
                return s;
            }
            if (w == "schedule") {
                notInGraph("'schedule'");
                s.kind = ast::Statement::Kind::Schedule;
                s.schedule = parseSchedule();
                return s;
            }
            if (w == "fuse") {
                notInGraph("'fuse'");
                advance();
                s.kind = ast::Statement::Kind::Fuse;
                s.fuse.group = defines(parseName("a fusion group name"));
                expect(TK::Assign, "after the fusion group name (fuse g = [a, b] anchor a;)");
                expect(TK::LBracket, "to start the member list");
                s.fuse.members.push_back(parseName("a node name"));
                while (accept(TK::Comma)) s.fuse.members.push_back(parseName("a node name"));
                expect(TK::RBracket, "to close the member list");
                if (isWord("anchor")) {
                    advance();
                    s.fuse.anchor = parseName("the anchor node name");
                }
                expectSemi("the fuse statement");
                s.fuse.range = rangeFrom(start);
                return s;
            }
        }
        if (!atName() && !(cur().kind == TK::Ident && cur().text == "_")) {
            if (cur().kind == TK::Ident && isReserved(cur().text))
                errorHere("expected a statement", {"hint: '" + cur().text + "' is a reserved word"});
            errorHere(
                "expected a statement (input, output, param, an op call, a compute definition, schedule or "
                "fuse)");
        }
        // name '[' -> compute definition
        if (atName() && peekTok().kind == TK::LBracket) {
            s.kind = ast::Statement::Kind::Compute;
            s.compute = parseCompute();
            return s;
        }
        s.kind = ast::Statement::Kind::Op;
        s.op = parseOpStatement();
        return s;
    }

    ast::Name parseDomain() {
        if (at(TK::String) || at(TK::QIdent)) {
            ast::Name n{cur().text, cur().range};
            advance();
            return n;
        }
        ast::Name n = parseIdent("a domain (e.g. com.microsoft)");
        while (at(TK::Dot)) {
            advance();
            ast::Name part = parseIdent("a domain component after '.'");
            n.text += "." + part.text;
            n.range = SourceRange::merge(n.range, part.range);
        }
        return n;
    }

    ast::OpStmt parseOpStatement() {
        ast::OpStmt op;
        const SourceRange start = cur().range;
        // A call without targets: name '(' or domain '::' / '.' ...
        const TK next = peekTok().kind;
        const bool directCall =
            next == TK::LParen || next == TK::ColonColon || (next == TK::Dot && at(TK::Ident));
        if (!directCall) {
            for (;;) {
                ast::Target t;
                const SourceRange ts = cur().range;
                if (cur().kind == TK::Ident && cur().text == "_") {
                    t.omitted = true;
                    t.name = {"_", cur().range};
                    advance();
                } else {
                    t.name = defines(parseName("an output name"));
                    if (accept(TK::Colon)) t.type = parseType();
                }
                t.range = rangeFrom(ts);
                op.targets.push_back(std::move(t));
                if (!accept(TK::Comma)) break;
            }
            if (!at(TK::Assign)) {
                std::vector<std::string> notes;
                if (op.targets.size() == 1 && !op.targets[0].type && atName()) {
                    if (auto m = closestMatch(op.targets[0].name.text, kStatementWords))
                        notes.push_back("hint: did you mean '" + *m + "'?");
                }
                errorHere("expected '=' after the output name(s)", std::move(notes));
            }
            advance();
        }
        const SourceRange callStart = cur().range;
        // op_ref = [ domain '::' ] name
        if (at(TK::String) || at(TK::QIdent) || (at(TK::Ident) && peekTok().kind == TK::Dot)) {
            if (at(TK::QIdent) && peekTok().kind != TK::ColonColon) {
                op.op = parseName("an op name");
            } else {
                op.domain = parseDomain();
                expect(TK::ColonColon, "after the op domain");
                op.op = parseName("an op name");
            }
        } else {
            ast::Name first = parseName("an op name (e.g. Conv, MatMul, relu)");
            if (accept(TK::ColonColon)) {
                op.domain = first;
                op.op = parseName("an op name");
            } else {
                op.op = first;
            }
        }
        if (!at(TK::LParen)) {
            if (at(TK::LBracket) || at(TK::Plus) || at(TK::Minus) || at(TK::Star) || at(TK::Slash))
                errorHere(
                    "expected '(' after the op name",
                    {"hint: expressions in index notation need an index list on the left: y[i] = x[i] + 1;"});
            errorHere("expected '(' after the op name");
        }
        advance();
        if (!at(TK::RParen)) {
            for (;;) {
                op.args.push_back(parseArg());
                if (!accept(TK::Comma)) break;
            }
        }
        expect(TK::RParen, "to close the argument list");
        op.callRange = rangeFrom(callStart);
        if (isWord("as")) {
            advance();
            if (at(TK::String)) {
                op.nodeName = ast::Name{cur().text, cur().range};
                advance();
            } else {
                op.nodeName = parseName("a node name after 'as'");
            }
        }
        expectSemi("the op call");
        op.range = rangeFrom(start);
        return op;
    }

    ast::Arg parseArg() {
        ast::Arg a;
        const SourceRange start = cur().range;
        if (cur().kind == TK::Ident && cur().text == "_") {
            a.kind = ast::Arg::Kind::Omitted;
            a.name = {"_", cur().range};
            advance();
        } else if (atName() && peekTok().kind == TK::Assign) {
            a.kind = ast::Arg::Kind::Attr;
            a.kwarg = parseKwArg();
            a.name = a.kwarg.name;
        } else if (atName()) {
            a.kind = ast::Arg::Kind::Value;
            a.name = parseName("an input name");
            if (at(TK::LBracket) || at(TK::LParen))
                errorHere(
                    "expected ',' or ')' after an input",
                    {"hint: op inputs are tensor names; index expressions belong in compute definitions"});
        } else {
            errorHere("expected an input name, '_' or name=value");
        }
        a.range = rangeFrom(start);
        return a;
    }

    ast::KwArg parseKwArg() {
        ast::KwArg k;
        const SourceRange start = cur().range;
        k.name = parseName("an attribute name");
        expect(TK::Assign, "after the attribute name");
        k.value = std::make_shared<ast::AttrValue>(parseAttrValue());
        k.range = rangeFrom(start);
        return k;
    }

    // ---- literals, attribute values, types, initializers ------------------------------------
    /// number = [ '-' ] ( INT | FLOAT | inf | nan ).
    bool atNumberStart() const {
        if (at(TK::Int) || at(TK::Float)) return true;
        if (at(TK::Ident) && (cur().text == "inf" || cur().text == "nan")) return true;
        if (at(TK::Minus)) {
            const Token& n = peekTok();
            return n.kind == TK::Int || n.kind == TK::Float ||
                   (n.kind == TK::Ident && (n.text == "inf" || n.text == "nan"));
        }
        return false;
    }
    ast::Literal parseNumber() {
        ast::Literal l;
        const SourceRange start = cur().range;
        bool neg = false;
        if (accept(TK::Minus)) neg = true;
        if (at(TK::Int)) {
            l.kind = ast::Literal::Kind::Int;
            l.i = neg ? -cur().intValue : cur().intValue;
            l.f = static_cast<double>(l.i);
        } else if (at(TK::Float)) {
            l.kind = ast::Literal::Kind::Float;
            l.f = neg ? -cur().floatValue : cur().floatValue;
        } else if (isWord("inf")) {
            l.kind = ast::Literal::Kind::Float;
            l.f = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
        } else if (isWord("nan")) {
            l.kind = ast::Literal::Kind::Float;
            l.f = std::numeric_limits<double>::quiet_NaN();
        } else {
            errorHere("expected a number");
        }
        advance();
        l.range = rangeFrom(start);
        return l;
    }

    ast::Literal parseLiteral() {
        DepthGuard guard(*this);
        if (atNumberStart()) return parseNumber();
        ast::Literal l;
        const SourceRange start = cur().range;
        if (at(TK::String)) {
            l.kind = ast::Literal::Kind::String;
            l.s = cur().text;
            advance();
        } else if (accept(TK::LBracket)) {
            l.kind = ast::Literal::Kind::List;
            if (!at(TK::RBracket)) {
                for (;;) {
                    l.items.push_back(parseLiteral());
                    if (!accept(TK::Comma)) break;
                    if (at(TK::RBracket)) break;  // trailing comma
                }
            }
            expect(TK::RBracket, "to close the list");
        } else {
            errorHere("expected a number, a string or a list");
        }
        l.range = rangeFrom(start);
        return l;
    }

    ast::AttrValue parseAttrValue() {
        DepthGuard guard(*this);
        ast::AttrValue v;
        const SourceRange start = cur().range;
        if (atNumberStart()) {
            ast::Literal l = parseNumber();
            v.kind =
                l.kind == ast::Literal::Kind::Int ? ast::AttrValue::Kind::Int : ast::AttrValue::Kind::Float;
            v.i = l.i;
            v.f = l.f;
        } else if (at(TK::String)) {
            v.kind = ast::AttrValue::Kind::String;
            v.s = cur().text;
            advance();
        } else if (at(TK::LBracket) ||
                   (at(TK::Ident) && peekTok().kind == TK::LBracket &&
                    (cur().text == "ints" || cur().text == "floats" || cur().text == "strings" ||
                     cur().text == "tensors" || cur().text == "graphs"))) {
            v.kind = ast::AttrValue::Kind::List;
            if (at(TK::Ident)) {
                v.listType = cur().text;
                advance();
            }
            advance();  // '['
            if (!at(TK::RBracket)) {
                for (;;) {
                    v.items.push_back(parseAttrValue());
                    if (!accept(TK::Comma)) break;
                    if (at(TK::RBracket)) break;
                }
            }
            expect(TK::RBracket, "to close the list");
        } else if (isWord("tensor")) {
            v.kind = ast::AttrValue::Kind::Tensor;
            advance();
            expect(TK::LParen, "after 'tensor' (tensor(f32[2], [1, 2]))");
            v.tensorType = parseType();
            expect(TK::Comma, "between the tensor type and its value");
            v.tensorInit = parseInitializer();
            expect(TK::RParen, "to close tensor(...)");
        } else if (isWord("graph")) {
            v.kind = ast::AttrValue::Kind::Graph;
            v.graph = std::make_shared<ast::GraphLit>(parseGraphLit());
        } else {
            errorHere("expected an attribute value (number, string, list, tensor(...) or graph ...)");
        }
        v.range = rangeFrom(start);
        return v;
    }

    ast::GraphLit parseGraphLit() {
        DepthGuard guard(*this);
        ast::GraphLit g;
        const SourceRange start = cur().range;
        advance();  // 'graph'
        if (atName()) g.name = parseName("a graph name");
        expect(TK::LParen, "to start the graph's inputs (graph body(x: f32[3]) -> (y) { ... })");
        if (!at(TK::RParen)) {
            for (;;) {
                ast::Name n = parseName("a graph input name");
                expect(TK::Colon, "and a type after the graph input name");
                ast::Type t = parseType();
                g.params.emplace_back(std::move(n), std::move(t));
                if (!accept(TK::Comma)) break;
            }
        }
        expect(TK::RParen, "to close the graph's inputs");
        expect(TK::Arrow, "after the graph's inputs");
        expect(TK::LParen, "to start the graph's outputs");
        if (!at(TK::RParen)) {
            for (;;) {
                ast::Name n = parseName("a graph output name");
                std::optional<ast::Type> t;
                if (accept(TK::Colon)) t = parseType();
                g.results.emplace_back(std::move(n), std::move(t));
                if (!accept(TK::Comma)) break;
            }
        }
        expect(TK::RParen, "to close the graph's outputs");
        expect(TK::LBrace, "to start the graph body");
        while (!at(TK::RBrace) && !at(TK::End)) parseStatementInto(g.body, /*inGraph=*/true);
        expect(TK::RBrace, "to close the graph body");
        g.range = rangeFrom(start);
        return g;
    }

    ast::Type parseType() {
        ast::Type t;
        const SourceRange start = cur().range;
        if (at(TK::Question)) {
            t.dtype = {"?", cur().range};
            advance();
        } else if (at(TK::Ident)) {
            t.dtype = {cur().text, cur().range};
            advance();
        } else {
            errorHere("expected an element type (f32, i64, bool, ...)");
        }
        if (accept(TK::LBracket)) {
            if (at(TK::Star) && peekTok().kind == TK::RBracket) {
                t.unknownRank = true;
                advance();
            } else if (!at(TK::RBracket)) {
                for (;;) {
                    if (t.dims.size() >= 4096) errorHere("too many dimensions");
                    ast::Dim d;
                    d.range = cur().range;
                    if (at(TK::Int)) {
                        d.kind = ast::Dim::Kind::Known;
                        d.value = cur().intValue;
                        advance();
                    } else if (at(TK::Question)) {
                        d.kind = ast::Dim::Kind::Unknown;
                        advance();
                    } else if (atName()) {
                        d.kind = ast::Dim::Kind::Symbol;
                        d.symbol = cur().text;
                        advance();
                    } else if (at(TK::Minus)) {
                        errorHere("expected a dimension",
                                  {"hint: extents cannot be negative; write ? for an unknown extent"});
                    } else {
                        errorHere("expected a dimension (an integer, a symbol such as N, or ?)");
                    }
                    t.dims.push_back(std::move(d));
                    if (!accept(TK::Comma)) break;
                }
            }
            expect(TK::RBracket, "to close the shape");
        }
        t.range = rangeFrom(start);
        return t;
    }

    ast::Initializer parseInitializer() {
        ast::Initializer init;
        const SourceRange start = cur().range;
        if (at(TK::Ident) && !atNumberStart()) {
            const std::string w = cur().text;
            if (w == "random") {
                advance();
                init.kind = ast::Initializer::Kind::Random;
                expect(TK::LParen, "after 'random' (random(seed=7))");
                if (!at(TK::RParen)) {
                    for (;;) {
                        init.kwargs.push_back(parseKwArg());
                        if (!accept(TK::Comma)) break;
                    }
                }
                expect(TK::RParen, "to close random(...)");
            } else if (w == "zeros" || w == "ones") {
                advance();
                init.kind = w == "zeros" ? ast::Initializer::Kind::Zeros : ast::Initializer::Kind::Ones;
                if (at(TK::LParen) && peekTok().kind == TK::RParen) {
                    advance();
                    advance();
                }
            } else if (w == "fill") {
                advance();
                init.kind = ast::Initializer::Kind::Fill;
                expect(TK::LParen, "after 'fill' (fill(0.5))");
                init.literal = parseNumber();
                expect(TK::RParen, "to close fill(...)");
            } else if (w == "npy") {
                advance();
                init.kind = ast::Initializer::Kind::Npy;
                expect(TK::LParen, "after 'npy' (npy(\"w.npy\"))");
                if (!at(TK::String)) errorHere("expected the .npy file name as a string");
                init.path = cur().text;
                advance();
                expect(TK::RParen, "to close npy(...)");
            } else if (w == "onnx") {
                advance();
                init.kind = ast::Initializer::Kind::Onnx;
                expect(TK::LParen, "after 'onnx' (onnx(\"model.onnx\", \"tensor name\"))");
                if (!at(TK::String)) errorHere("expected the ONNX file name as a string");
                init.path = cur().text;
                advance();
                expect(TK::Comma, "between the file name and the tensor name");
                if (!at(TK::String)) errorHere("expected the tensor name as a string");
                init.tensorName = cur().text;
                advance();
                expect(TK::RParen, "to close onnx(...)");
            } else {
                std::vector<std::string> notes;
                if (auto m = closestMatch(w, kInitWords)) notes.push_back("hint: did you mean '" + *m + "'?");
                error(cur().range, "unknown initializer '" + w + "'",
                      notes.empty()
                          ? std::vector<
                                std::string>{"hint: initializers are random(seed=N), zeros, ones, fill(v), "
                                             "npy(\"f.npy\"), onnx(\"m.onnx\", \"name\") or a literal"}
                          : notes);
                throw SyntaxError{};
            }
        } else {
            init.kind = ast::Initializer::Kind::Literal;
            init.literal = parseLiteral();
        }
        init.range = rangeFrom(start);
        return init;
    }

    // ---- compute definitions --------------------------------------------------------------
    std::optional<ast::Extent> parseOptExtent() {
        if (!accept(TK::Colon)) return std::nullopt;
        ast::Extent e;
        e.range = cur().range;
        if (at(TK::Int)) {
            e.value = cur().intValue;
            advance();
        } else if (atName()) {
            e.symbolic = true;
            e.symbol = cur().text;
            advance();
        } else {
            errorHere("expected an extent (an integer or a symbolic dimension)");
        }
        return e;
    }

    ast::ComputeStmt parseCompute() {
        ast::ComputeStmt c;
        const SourceRange start = cur().range;
        c.output = defines(parseName("the output tensor name"));
        expect(TK::LBracket, "");
        if (!at(TK::RBracket)) {
            for (;;) {
                if (c.indices.size() >= 4096) errorHere("too many indices");
                ast::IndexDecl d;
                if (!(at(TK::Ident) && !isReserved(cur().text)))
                    errorHere("expected an index variable name",
                              {"hint: the left-hand side of a compute definition lists index variables, e.g. "
                               "C[i, j] = ..."});
                d.name = parseIdent("an index variable");
                d.extent = parseOptExtent();
                c.indices.push_back(std::move(d));
                if (!accept(TK::Comma)) break;
            }
        }
        expect(TK::RBracket, "to close the index list");
        if (accept(TK::Colon)) {
            if (!at(TK::Ident)) errorHere("expected the result element type (f32, i64, ...)");
            c.dtype = ast::Name{cur().text, cur().range};
            advance();
        }
        if (!at(TK::Assign)) errorHere("expected '=' after the index list");
        advance();
        c.expr = parseExpr();
        if (isWord("as")) {
            advance();
            if (at(TK::String)) {
                c.nodeName = ast::Name{cur().text, cur().range};
                advance();
            } else {
                c.nodeName = parseName("a node name after 'as'");
            }
        }
        expectSemi("the compute definition");
        c.range = rangeFrom(start);
        return c;
    }

    /// After `max(`/`min(`: is this a reduction (axis list followed by the start of an operand)?
    bool looksLikeReduction() const {
        // cur() is the function name, peekTok() is '('.
        std::size_t i = m_pos + 2;
        bool axesOnly = true;
        int depth = 1;
        while (i < m_tokens.size()) {
            const TK k = m_tokens[i].kind;
            if (k == TK::End) return false;
            if (k == TK::LParen || k == TK::LBracket)
                ++depth, axesOnly = false;
            else if (k == TK::RParen || k == TK::RBracket) {
                if (--depth == 0) break;
            } else if (!(k == TK::Ident || k == TK::Comma || k == TK::Colon || k == TK::Int ||
                         k == TK::QIdent))
                axesOnly = false;
            ++i;
        }
        if (!axesOnly || i + 1 >= m_tokens.size()) return false;
        const TK after = m_tokens[i + 1].kind;
        // `as` names the node; it is not the start of a reduction body.
        if (after == TK::Ident && m_tokens[i + 1].text == "as") return false;
        return after == TK::Ident || after == TK::QIdent || after == TK::Int || after == TK::Float ||
               after == TK::LParen || after == TK::Bang;
    }

    /// `sun(k) x[k]`: a call that can only be a reduction with a misspelled reducer (nothing else
    /// may follow a call directly). Reported once at the name; the statement is then abandoned.
    [[noreturn]] void unknownReducer() {
        const Token& name = cur();
        std::string msg = "unknown reducer '" + name.text + "'";
        if (auto m = closestMatch(name.text, kReducers))
            msg += "; did you mean '" + *m + "'?";
        else
            msg += "; reducers are sum, prod, max and min";
        error(name.range, std::move(msg));
        throw SyntaxError{};
    }

    ast::Expr parseExpr() {
        DepthGuard guard(*this);
        ast::Expr cond = parseBinary(0);
        if (at(TK::Question)) {
            advance();
            ast::Expr e;
            e.kind = ast::Expr::Kind::Ternary;
            e.args.push_back(std::move(cond));
            e.args.push_back(parseExpr());
            expect(TK::Colon, "in a conditional expression (c ? a : b)");
            e.args.push_back(parseExpr());
            e.range = SourceRange::merge(e.args.front().range, e.args.back().range);
            return e;
        }
        return cond;
    }

    static int precedence(TK k) {
        switch (k) {
            case TK::OrOr:
                return 1;
            case TK::AndAnd:
                return 2;
            case TK::Less:
            case TK::LessEq:
            case TK::Greater:
            case TK::GreaterEq:
            case TK::EqEq:
            case TK::NotEq:
                return 3;
            case TK::Plus:
            case TK::Minus:
                return 4;
            case TK::Star:
            case TK::Slash:
            case TK::Percent:
                return 5;
            default:
                return 0;
        }
    }

    ast::Expr parseBinary(int minPrec) {
        DepthGuard guard(*this);
        ast::Expr lhs = parseUnary();
        for (;;) {
            const int p = precedence(cur().kind);
            if (p == 0 || p <= minPrec) break;
            const std::string op = cur().text;
            advance();
            ast::Expr rhs = parseBinary(p);
            if (p == 3 && precedence(cur().kind) == 3)
                error(cur().range, "comparisons do not chain", {"hint: write (a < b) && (b < c)"});
            ast::Expr e;
            e.kind = ast::Expr::Kind::Binary;
            e.op = op;
            e.range = SourceRange::merge(lhs.range, rhs.range);
            e.args.push_back(std::move(lhs));
            e.args.push_back(std::move(rhs));
            lhs = std::move(e);
        }
        return lhs;
    }

    ast::Expr parseUnary() {
        DepthGuard guard(*this);
        if (at(TK::Minus) || at(TK::Bang)) {
            const SourceRange start = cur().range;
            const std::string op = cur().text;
            advance();
            ast::Expr operand = parseUnary();
            // Fold '-' into a numeric literal so that -1 is a constant.
            if (op == "-" && operand.kind == ast::Expr::Kind::Int &&
                operand.i != std::numeric_limits<std::int64_t>::min()) {
                operand.i = -operand.i;
                operand.range = SourceRange::merge(start, operand.range);
                return operand;
            }
            if (op == "-" && operand.kind == ast::Expr::Kind::Float) {
                operand.f = -operand.f;
                operand.range = SourceRange::merge(start, operand.range);
                return operand;
            }
            ast::Expr e;
            e.kind = ast::Expr::Kind::Unary;
            e.op = op;
            e.range = SourceRange::merge(start, operand.range);
            e.args.push_back(std::move(operand));
            return e;
        }
        return parsePrimary();
    }

    ast::Expr parsePrimary() {
        DepthGuard guard(*this);
        ast::Expr e;
        const SourceRange start = cur().range;
        if (at(TK::Int)) {
            e.kind = ast::Expr::Kind::Int;
            e.i = cur().intValue;
            advance();
        } else if (at(TK::Float)) {
            e.kind = ast::Expr::Kind::Float;
            e.f = cur().floatValue;
            advance();
        } else if (accept(TK::LParen)) {
            e = parseExpr();
            expect(TK::RParen, "to close the parenthesis");
            e.range = rangeFrom(start);
            return e;
        } else if (at(TK::Ident) && !isReserved(cur().text) && peekTok().kind == TK::LParen) {
            const std::string fn = cur().text;
            if (fn == "sum" || fn == "prod" || ((fn == "max" || fn == "min") && looksLikeReduction())) {
                e.kind = ast::Expr::Kind::Reduce;
                e.op = fn;
                advance();
                advance();  // '('
                for (;;) {
                    ast::IndexDecl d;
                    d.name = parseIdent("a reduction axis name");
                    d.extent = parseOptExtent();
                    e.axes.push_back(std::move(d));
                    if (!accept(TK::Comma)) break;
                }
                expect(TK::RParen, "to close the reduction axes");
                e.args.push_back(parseExpr());
            } else if (fn == "cast") {
                e.kind = ast::Expr::Kind::Cast;
                advance();
                advance();
                e.args.push_back(parseExpr());
                expect(TK::Comma, "between the value and the type in cast(value, dtype)");
                if (!at(TK::Ident)) errorHere("expected an element type in cast(value, dtype)");
                e.name = {cur().text, cur().range};
                advance();
                expect(TK::RParen, "to close cast(...)");
            } else if (looksLikeReduction()) {
                unknownReducer();
            } else {
                e.kind = ast::Expr::Kind::Call;
                e.name = {fn, cur().range};
                e.op = fn;
                advance();
                advance();
                if (!at(TK::RParen)) {
                    for (;;) {
                        if (e.args.size() > 16) errorHere("too many arguments");
                        e.args.push_back(parseExpr());
                        if (!accept(TK::Comma)) break;
                    }
                }
                expect(TK::RParen, "to close the argument list");
            }
        } else if (atName()) {
            ast::Name n = parseName("a name");
            if (n.text == "pi" && !at(TK::LBracket)) {
                e.kind = ast::Expr::Kind::Pi;
            } else if ((n.text == "true" || n.text == "false") && !at(TK::LBracket)) {
                e.kind = ast::Expr::Kind::Bool;
                e.b = n.text == "true";
            } else if ((n.text == "inf" || n.text == "nan") && !at(TK::LBracket)) {
                e.kind = ast::Expr::Kind::Float;
                e.f = n.text == "inf" ? std::numeric_limits<double>::infinity()
                                      : std::numeric_limits<double>::quiet_NaN();
            } else if (accept(TK::LBracket)) {
                e.kind = ast::Expr::Kind::Access;
                e.name = n;
                if (!at(TK::RBracket)) {
                    for (;;) {
                        if (e.args.size() >= 4096) errorHere("too many subscripts");
                        e.args.push_back(parseExpr());
                        if (!accept(TK::Comma)) break;
                    }
                }
                expect(TK::RBracket, "to close the subscripts");
            } else {
                e.kind = ast::Expr::Kind::Var;
                e.name = n;
            }
        } else {
            errorHere("expected an expression");
        }
        e.range = rangeFrom(start);
        return e;
    }

    // ---- schedules ------------------------------------------------------------------------
    ast::ScheduleStmt parseSchedule() {
        ast::ScheduleStmt s;
        const SourceRange start = cur().range;
        advance();  // 'schedule'
        s.subject = parseName("the name of the kernel to schedule");
        expect(TK::LBrace, "to start the schedule");
        while (!at(TK::RBrace) && !at(TK::End)) {
            const std::size_t before = m_pos;
            try {
                s.items.push_back(parseScheduleItem());
            } catch (const SyntaxError&) {
                sync();
            }
            if (m_pos == before) advance();
        }
        expect(TK::RBrace, "to close the schedule");
        accept(TK::Semi);
        s.range = rangeFrom(start);
        return s;
    }

    ast::ScheduleItem parseScheduleItem() {
        ast::ScheduleItem it;
        const SourceRange start = cur().range;
        if (!at(TK::Ident))
            errorHere("expected a schedule item (target, grid, block, tile, stage, unroll, ...)");
        const std::string w = cur().text;
        it.word = {w, cur().range};
        auto parseFactor = [&]() -> std::int64_t {
            if (!isWord("by")) errorHere("expected 'by' and a factor");
            advance();
            if (!at(TK::Int)) errorHere("expected an integer factor after 'by'");
            const std::int64_t f = cur().intValue;
            advance();
            return f;
        };
        if (w == "target") {
            it.kind = ast::ScheduleItem::Kind::Target;
            advance();
            it.word = parseIdent("a target (cuda or cpu)");
            if (at(TK::String)) {
                it.arch = cur().text;
                advance();
            }
        } else if ((w == "grid" || w == "block" || w == "warp" || w == "thread") &&
                   peekTok().kind == TK::Assign) {
            it.kind = ast::ScheduleItem::Kind::Mapping;
            advance();
            advance();
            if (at(TK::Semi) || at(TK::RBrace) || at(TK::End))
                errorHere("expected a task mapping (e.g. spatial(16, 16))");
            const std::size_t first = m_pos;
            int depth = 0;
            while (!at(TK::End)) {
                const TK k = cur().kind;
                if (depth == 0 && (k == TK::Semi || k == TK::RBrace)) break;
                if (k == TK::LParen || k == TK::LBracket || k == TK::LBrace) ++depth;
                if ((k == TK::RParen || k == TK::RBracket || k == TK::RBrace) && depth > 0) --depth;
                advance();
            }
            it.mappingRange = SourceRange::merge(m_tokens[first].range, prevTok().range);
            if (it.mappingRange.offset + it.mappingRange.length <= m_text.size())
                it.mappingText = std::string(m_text.substr(it.mappingRange.offset, it.mappingRange.length));
        } else if (w == "tile") {
            it.kind = ast::ScheduleItem::Kind::Tile;
            advance();
            for (;;) {
                ast::Name axis = parseName("an axis name");
                const std::int64_t f = parseFactor();
                it.axes.emplace_back(std::move(axis), f);
                if (!accept(TK::Comma)) break;
            }
        } else if (w == "stage") {
            it.kind = ast::ScheduleItem::Kind::Stage;
            advance();
            for (;;) {
                it.names.push_back(parseName("a tensor name"));
                if (!accept(TK::Comma)) break;
            }
            if (!isWord("in")) errorHere("expected 'in' and a memory (shared, local or register)");
            advance();
            it.memory = parseIdent("a memory (shared, local or register)");
        } else if (w == "unroll" || w == "vectorize" || w == "parallel") {
            it.kind = w == "unroll"      ? ast::ScheduleItem::Kind::Unroll
                      : w == "vectorize" ? ast::ScheduleItem::Kind::Vectorize
                                         : ast::ScheduleItem::Kind::Parallel;
            advance();
            ast::Name axis = parseName("an axis name");
            std::int64_t f = 0;
            if (w == "vectorize" || (w == "unroll" && isWord("by"))) {
                const SourceRange byAt = cur().range;
                f = parseFactor();
                // 0 is how the AST says "no factor" (unroll fully); an explicit `by 0` is a mistake.
                if (w == "unroll" && f == 0)
                    error(byAt, "unroll factor must be positive", {"hint: write `unroll " + axis.text + "` to unroll fully"});
            }
            it.axes.emplace_back(std::move(axis), f);
        } else {
            std::vector<std::string> notes;
            if (auto m = closestMatch(w, kScheduleWords))
                notes.push_back("hint: did you mean '" + *m + "'?");
            else
                notes.push_back(
                    "hint: schedule items are target, grid/block/warp/thread = mapping, tile, stage, unroll, "
                    "vectorize, parallel");
            error(cur().range, "unknown schedule item '" + w + "'", notes);
            throw SyntaxError{};
        }
        expectSemi("the schedule item");
        it.range = rangeFrom(start);
        return it;
    }
};

}  // namespace

ast::Program parseSource(std::string_view text, const std::string& file, support::DiagnosticList& diags) {
    try {
        Parser p(text, file, diags);
        return p.run();
    } catch (const std::exception& e) {
        support::Diagnostic d;
        d.file = file;
        d.message = std::string("internal parser error: ") + e.what();
        diags.add(std::move(d));
        return {};
    }
}

}  // namespace tessera::frontend::dsl
