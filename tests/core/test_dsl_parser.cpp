// DSL lexer, parser, diagnostics rendering and did-you-mean (core/frontend/dsl).
#include <gtest/gtest.h>

#include <string>

#include "core/frontend/dsl/diagnostic_render.h"
#include "core/frontend/dsl/lexer.h"
#include "core/frontend/dsl/parser.h"
#include "core/frontend/dsl/suggest.h"

using namespace tessera::frontend::dsl;
using tessera::support::DiagnosticList;

namespace {

std::vector<Token> lex(const std::string& text, DiagnosticList& d) { return tokenize(text, "t.tsr", d); }

ast::Program parse(const std::string& text, DiagnosticList& d) { return parseSource(text, "t.tsr", d); }

int errorCount(const DiagnosticList& d) {
    int n = 0;
    for (const auto& x : d.items()) n += x.severity == tessera::support::Severity::Error;
    return n;
}

}  // namespace

TEST(DslLexer, TokensWithPositions) {
    DiagnosticList d;
    auto t = lex("y = Conv(x, w, pads=[1, 1]);  # comment\n`onnx::Conv_538` 1.5e-3 -> :: <= && ||", d);
    ASSERT_TRUE(d.empty());
    ASSERT_GE(t.size(), 20u);
    EXPECT_EQ(t[0].kind, TokenKind::Ident);
    EXPECT_EQ(t[0].range.begin.line, 1);
    EXPECT_EQ(t[0].range.begin.column, 1);
    EXPECT_EQ(t[2].text, "Conv");
    EXPECT_EQ(t[2].range.begin.column, 5);
    EXPECT_EQ(t[2].range.end.column, 8);
    // Second line: quoted identifier decoded, float, punctuation.
    std::size_t i = 0;
    while (t[i].kind != TokenKind::QIdent) ++i;
    EXPECT_EQ(t[i].text, "onnx::Conv_538");
    EXPECT_EQ(t[i].range.begin.line, 2);
    EXPECT_EQ(t[i + 1].kind, TokenKind::Float);
    EXPECT_DOUBLE_EQ(t[i + 1].floatValue, 1.5e-3);
    EXPECT_EQ(t[i + 2].kind, TokenKind::Arrow);
    EXPECT_EQ(t[i + 3].kind, TokenKind::ColonColon);
    EXPECT_EQ(t[i + 4].kind, TokenKind::LessEq);
    EXPECT_EQ(t[i + 5].kind, TokenKind::AndAnd);
    EXPECT_EQ(t[i + 6].kind, TokenKind::OrOr);
    EXPECT_EQ(t.back().kind, TokenKind::End);
}

TEST(DslLexer, EscapesInQuotedNamesAndStrings) {
    DiagnosticList d;
    auto t = lex(R"(`a\`b\\c\n\x00\xff` "q\"s\t")", d);
    ASSERT_TRUE(d.empty());
    EXPECT_EQ(t[0].kind, TokenKind::QIdent);
    EXPECT_EQ(t[0].text, std::string("a`b\\c\n\0\xff", 8));
    EXPECT_EQ(t[1].kind, TokenKind::String);
    EXPECT_EQ(t[1].text, "q\"s\t");
}

TEST(DslLexer, ErrorsAreReportedAndLexingContinues) {
    DiagnosticList d;
    auto t = lex("a = 99999999999999999999; b = \"open\n c = 'x' & $ `bad\\q`", d);
    EXPECT_GE(errorCount(d), 5);
    bool sawOverflow = false, sawUnterminated = false, sawEscape = false;
    for (const auto& x : d.items()) {
        sawOverflow |= x.message.find("does not fit in 64 bits") != std::string::npos;
        sawUnterminated |= x.message.find("unterminated string") != std::string::npos;
        sawEscape |= x.message.find("unknown escape") != std::string::npos;
    }
    EXPECT_TRUE(sawOverflow);
    EXPECT_TRUE(sawUnterminated);
    EXPECT_TRUE(sawEscape);
    EXPECT_EQ(t.back().kind, TokenKind::End);
}

TEST(DslLexer, PlainIdentifiers) {
    EXPECT_TRUE(isPlainIdentifier("conv1"));
    EXPECT_TRUE(isPlainIdentifier("_x"));
    EXPECT_FALSE(isPlainIdentifier("input"));  // reserved
    EXPECT_FALSE(isPlainIdentifier("_"));
    EXPECT_FALSE(isPlainIdentifier("a.b"));
    EXPECT_FALSE(isPlainIdentifier("1a"));
    EXPECT_FALSE(isPlainIdentifier(""));
}

TEST(DslParser, StatementsAndStructure) {
    DiagnosticList d;
    auto p = parse(R"(tessera 0.1;
model name="net", ir_version=9;
opset 17;
opset com.microsoft 1;
input x: f32[N, 3, 224, 224];
param w: f32[8, 3, 3, 3] = random(seed=7);
input w2: f32[2] = [1.0, 2.0];
a, _ = Split(x, axis=1) as "split node";
y: f32[?, 8, 222, 222] = Conv(x, w, _, pads=[0, 0, 0, 0]);
com.microsoft::Fused(y, alpha=0.5);
C[i, j: 4] = sum(k) A[i, k] * B[k, j];
output y, a: f32[*];
schedule C { target cuda "sm_90"; grid = spatial(2,5).repeat(3,4); tile k by 8, j by 2; stage A in shared; unroll k; }
fuse g = [y, C] anchor y;
)",
                   d);
    EXPECT_TRUE(d.empty()) << renderDiagnostics(d, "");
    ASSERT_EQ(p.statements.size(), 13u);
    EXPECT_EQ(p.version.value_or(""), "0.1");
    using K = ast::Statement::Kind;
    EXPECT_EQ(p.statements[0].kind, K::Model);
    EXPECT_EQ(p.statements[2].opset.domain->text, "com.microsoft");
    const auto& in = p.statements[3].input;
    EXPECT_EQ(in.name.text, "x");
    ASSERT_EQ(in.type.dims.size(), 4u);
    EXPECT_EQ(in.type.dims[0].kind, ast::Dim::Kind::Symbol);
    EXPECT_EQ(p.statements[4].param.init.kind, ast::Initializer::Kind::Random);
    EXPECT_EQ(p.statements[5].input.init->kind, ast::Initializer::Kind::Literal);
    const auto& split = p.statements[6].op;
    ASSERT_EQ(split.targets.size(), 2u);
    EXPECT_TRUE(split.targets[1].omitted);
    EXPECT_EQ(split.nodeName->text, "split node");
    const auto& conv = p.statements[7].op;
    ASSERT_EQ(conv.args.size(), 4u);
    EXPECT_EQ(conv.args[2].kind, ast::Arg::Kind::Omitted);
    EXPECT_EQ(conv.args[3].kind, ast::Arg::Kind::Attr);
    EXPECT_TRUE(conv.targets[0].type.has_value());
    const auto& fused = p.statements[8].op;
    EXPECT_TRUE(fused.targets.empty());
    EXPECT_EQ(fused.domain->text, "com.microsoft");
    const auto& c = p.statements[9].compute;
    ASSERT_EQ(c.indices.size(), 2u);
    EXPECT_TRUE(c.indices[1].extent.has_value());
    EXPECT_EQ(c.expr.kind, ast::Expr::Kind::Reduce);
    EXPECT_EQ(c.expr.op, "sum");
    EXPECT_EQ(c.expr.args[0].kind, ast::Expr::Kind::Binary);
    EXPECT_EQ(p.statements[10].output.items.size(), 2u);
    const auto& s = p.statements[11].schedule;
    ASSERT_EQ(s.items.size(), 5u);
    EXPECT_EQ(s.items[0].arch, "sm_90");
    EXPECT_EQ(s.items[1].mappingText, "spatial(2,5).repeat(3,4)");
    EXPECT_EQ(s.items[1].mappingRange.begin.column, 42);
    EXPECT_EQ(s.items[2].axes.size(), 2u);
    EXPECT_EQ(s.items[4].axes[0].second, 0);
    EXPECT_EQ(p.statements[12].fuse.members.size(), 2u);
    EXPECT_EQ(p.statements[12].fuse.anchor->text, "y");
}

TEST(DslParser, ReductionVersusBinaryMinMax) {
    DiagnosticList d;
    auto p = parse("a[i] = max(i, 3) + 1;\nb[i] = max(j) x[i, j] - 1;\nc[i] = (sum(j) x[i, j]) + 1;\n", d);
    ASSERT_TRUE(d.empty());
    EXPECT_EQ(p.statements[0].compute.expr.kind, ast::Expr::Kind::Binary);
    EXPECT_EQ(p.statements[0].compute.expr.args[0].kind, ast::Expr::Kind::Call);
    // The reduction's body extends to the end: max(j) (x[i,j] - 1).
    EXPECT_EQ(p.statements[1].compute.expr.kind, ast::Expr::Kind::Reduce);
    EXPECT_EQ(p.statements[1].compute.expr.args[0].kind, ast::Expr::Kind::Binary);
    EXPECT_EQ(p.statements[2].compute.expr.kind, ast::Expr::Kind::Binary);
    EXPECT_EQ(p.statements[2].compute.expr.args[0].kind, ast::Expr::Kind::Reduce);
}

TEST(DslParser, PrecedenceAndTernary) {
    DiagnosticList d;
    auto p = parse("y[i] = a[i] + b[i] * c[i] < 3 && !(d[i] == 1) ? -1 : 2 % 3;", d);
    ASSERT_TRUE(d.empty());
    const auto& e = p.statements[0].compute.expr;
    ASSERT_EQ(e.kind, ast::Expr::Kind::Ternary);
    const auto& cond = e.args[0];
    EXPECT_EQ(cond.op, "&&");
    EXPECT_EQ(cond.args[0].op, "<");
    EXPECT_EQ(cond.args[0].args[0].op, "+");
    EXPECT_EQ(cond.args[0].args[0].args[1].op, "*");
    EXPECT_EQ(cond.args[1].kind, ast::Expr::Kind::Unary);
    EXPECT_EQ(e.args[1].kind, ast::Expr::Kind::Int);
    EXPECT_EQ(e.args[1].i, -1);
}

TEST(DslParser, RecoversAndReportsEveryError) {
    DiagnosticList d;
    auto p = parse(R"(input x: f32[2, 3];
y = Relu(x;
z = Relu(x);
w = (x);
input q: f32[2, 3]
v = Relu(q);
schedule z { tile k 8; blok = spatial(4); unroll k by 2; }
u = Relu(v);
)",
                   d);
    // Errors on lines 2, 4, 5 (missing ';' at the line end), 7 (twice); valid statements survive.
    EXPECT_EQ(errorCount(d), 5) << renderDiagnostics(d, "");
    int valid = 0;
    for (const auto& s : p.statements) valid += s.kind == ast::Statement::Kind::Op;
    EXPECT_EQ(valid, 3);  // z, v, u
    bool missingSemi = false;
    for (const auto& x : d.items())
        if (x.message.find("expected ';' after the input declaration") != std::string::npos) {
            missingSemi = true;
            EXPECT_EQ(x.begin.line, 5);
            EXPECT_EQ(x.begin.column, 19);
        }
    EXPECT_TRUE(missingSemi);
}

TEST(DslParser, DepthLimitIsAnErrorNotACrash) {
    DiagnosticList d;
    std::string deep = "y[i] = " + std::string(5000, '(') + "1" + std::string(5000, ')') + ";";
    parse(deep, d);
    ASSERT_GE(errorCount(d), 1);
    EXPECT_NE(d.items()[0].message.find("nesting deeper"), std::string::npos);
    DiagnosticList d2;
    parse("a = F(k=" + std::string(3000, '[') + ");", d2);
    EXPECT_GE(errorCount(d2), 1);
}

TEST(DslSuggest, EditDistanceAndClosest) {
    EXPECT_EQ(editDistance("repaet", "repeat"), 1u);  // transposition
    EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
    EXPECT_EQ(closestMatch("Covn", {"Conv", "ConvTranspose", "Cos"}).value_or(""), "Conv");
    EXPECT_EQ(closestMatch("RELU", {"Relu", "Elu"}).value_or(""), "Relu");
    EXPECT_FALSE(closestMatch("zzzzzz", {"Conv", "Relu"}).has_value());
    EXPECT_FALSE(closestMatch("q", {"x", "y"}).has_value());  // one letter: no guessing
}

TEST(DslRender, CaretUnderTheRange) {
    tessera::support::Diagnostic d;
    d.file = "p.tsr";
    d.begin = {2, 5};
    d.end = {2, 8};
    d.message = "unknown op 'Covn'";
    d.notes = {"hint: did you mean 'Conv'?"};
    const std::string out = renderDiagnostic(d, "input x: f32[1];\ny = Covn(x);\n");
    EXPECT_EQ(out,
              "p.tsr:2:5: error: unknown op 'Covn'\n"
              "    2 | y = Covn(x);\n"
              "      |     ^~~~\n"
              "      = hint: did you mean 'Conv'?\n");
}

TEST(DslRender, TabsKeepAlignmentAndMissingLinesAreSafe) {
    tessera::support::Diagnostic d;
    d.file = "p.tsr";
    d.begin = {1, 3};
    d.end = {1, 3};
    d.message = "m";
    EXPECT_EQ(renderDiagnostic(d, "\tab"), "p.tsr:1:3: error: m\n    1 | \tab\n      | \t ^\n");
    d.begin = {40, 1};
    EXPECT_EQ(renderDiagnostic(d, "x"), "p.tsr:40:1: error: m\n    40 | \n       | ^\n");
}
