// One mistake, one error: a misspelled reducer, function, op or tensor is reported once at the
// typo with a suggestion, and the statements that use the name it should have defined stay quiet
// (the name is poisoned) instead of each reporting "not defined".
#include <gtest/gtest.h>

#include <string>

#include "core/frontend/dsl/diagnostic_render.h"
#include "core/frontend/dsl/dsl.h"

using namespace tessera;
using namespace tessera::frontend::dsl;

namespace {

// A softmax like samples/softmax.tsr, without comments and with a fusion group and its
// schedule, so that a typo early on has every kind of later use to cascade into.
const std::string kSoftmax = R"(tessera 0.1;
input x: f32[4, 10];
m[i]    = max(j) x[i, j];
e[i, j] = exp(x[i, j] - m[i]);
s[i]    = sum(j) e[i, j];
y[i, j] = e[i, j] / s[i];
output y;
y_ref = Softmax(x, axis=1);
output y_ref;
fuse softmax_kernel = [m, e, s, y] anchor m;
schedule softmax_kernel {
  target cuda;
  grid = spatial(4);
  block = spatial(32);
}
)";

std::string replaceOnce(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

support::DiagnosticList diagnosticsOf(const std::string& text) {
    auto r = parseProgram(text, "t.tsr");
    return r.diagnostics();
}

std::vector<const support::Diagnostic*> errorsOf(const support::DiagnosticList& d) {
    std::vector<const support::Diagnostic*> out;
    for (const auto& x : d.items())
        if (x.severity == support::Severity::Error) out.push_back(&x);
    return out;
}

/// Exactly one error (and nothing else), at line:col with exactly this message.
void expectSingleError(const std::string& text, int line, int col, const std::string& message,
                       const std::vector<std::string>& notes = {}) {
    const auto d = diagnosticsOf(text);
    const auto errors = errorsOf(d);
    ASSERT_EQ(d.items().size(), 1u) << renderDiagnostics(d, text);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0]->begin.line, line);
    EXPECT_EQ(errors[0]->begin.column, col);
    EXPECT_EQ(errors[0]->message, message);
    EXPECT_EQ(errors[0]->notes, notes);
}

}  // namespace

TEST(DslTypoRecovery, TheUnmodifiedProgramParses) {
    auto r = parseProgram(kSoftmax, "t.tsr");
    ASSERT_TRUE(r.ok()) << renderDiagnostics(r.diagnostics(), kSoftmax);
    EXPECT_EQ(r.value().program.fusions.size(), 1u);
}

TEST(DslTypoRecovery, MisspelledReducerIsOneErrorWithASuggestion) {
    // Before: "expected ';'" at the body, then 's', 'y', both fusion members and the schedule.
    expectSingleError(replaceOnce(kSoftmax, "sum(j)", "sun(j)"), 5, 11, "unknown reducer 'sun'; did you mean 'sum'?");
    expectSingleError(replaceOnce(kSoftmax, "sum(j)", "summ(j)"), 5, 11,
                      "unknown reducer 'summ'; did you mean 'sum'?");
    expectSingleError(replaceOnce(kSoftmax, "max(j) x", "mux(j) x"), 3, 11,
                      "unknown reducer 'mux'; did you mean 'max'?");
    expectSingleError(replaceOnce(kSoftmax, "sum(j) e", "prd(j: 10) e"), 5, 11,
                      "unknown reducer 'prd'; did you mean 'prod'?");
}

TEST(DslTypoRecovery, ReducerWithoutACloseMatchListsTheReducers) {
    expectSingleError(replaceOnce(kSoftmax, "sum(j)", "total(j)"), 5, 11,
                      "unknown reducer 'total'; reducers are sum, prod, max and min");
}

TEST(DslTypoRecovery, MisspelledFunctionPoisonsItsTensor) {
    // 'e' fails, so 's', 'y', the outputs, the fusion group and its schedule stay quiet.
    expectSingleError(replaceOnce(kSoftmax, "exp(x", "exq(x"), 4, 11, "unknown function 'exq'",
                      {"hint: did you mean 'exp'?"});
}

TEST(DslTypoRecovery, ReducerWrittenAsAFunctionSuggestsTheReduction) {
    expectSingleError(replaceOnce(kSoftmax, "sum(j) e[i, j]", "sun(e[i, 0])"), 5, 11, "unknown function 'sun'",
                      {"hint: did you mean 'sum'? A reduction names its axes: sum(k) x[i, k]"});
}

TEST(DslTypoRecovery, TensorCalledLikeAFunctionSaysItIsATensor) {
    expectSingleError(replaceOnce(kSoftmax, "exp(x[i, j] - m[i])", "exp(x[i, j]) - m(i)"), 4, 26,
                      "unknown function 'm'", {"hint: 'm' is a tensor; read an element with m[...]"});
}

TEST(DslTypoRecovery, MisspelledTensorOpAndOutput) {
    expectSingleError(replaceOnce(kSoftmax, "/ s[i]", "/ ss[i]"), 6, 21, "tensor 'ss' is not defined",
                      {"hint: did you mean 's'?"});
    // An unknown op poisons its output: 'output y_ref' says nothing more.
    const auto d = diagnosticsOf(replaceOnce(kSoftmax, "Softmax(x", "Sofmax(x"));
    ASSERT_EQ(errorsOf(d).size(), 1u) << renderDiagnostics(d, kSoftmax);
    EXPECT_EQ(errorsOf(d)[0]->begin.line, 8);
    EXPECT_EQ(errorsOf(d)[0]->begin.column, 9);
    EXPECT_EQ(errorsOf(d)[0]->message, "unknown op 'Sofmax'");
    ASSERT_FALSE(errorsOf(d)[0]->notes.empty());
    EXPECT_EQ(errorsOf(d)[0]->notes[0], "hint: did you mean 'Softmax'?");
}

TEST(DslTypoRecovery, SyntaxErrorPoisonsTheNameItsStatementDefines) {
    const std::string text = "input x: f32[4];\n"
                             "y[i] = x[i] + ;\n"
                             "z = Relu(y);\n"
                             "w[i] = y[i] * z[i];\n"
                             "output w;\n";
    const auto d = diagnosticsOf(text);
    const auto errors = errorsOf(d);
    ASSERT_EQ(errors.size(), 1u) << renderDiagnostics(d, text);
    EXPECT_EQ(errors[0]->begin.line, 2);
    EXPECT_EQ(errors[0]->begin.column, 15);
}

TEST(DslTypoRecovery, IndependentMistakesAreStillAllReported) {
    // Two typos in unrelated statements: two errors, each at its own typo.
    std::string text = replaceOnce(kSoftmax, "sum(j)", "sun(j)");
    text = replaceOnce(text, "Softmax(x", "Softmax(xx");
    const auto d = diagnosticsOf(text);
    const auto errors = errorsOf(d);
    ASSERT_EQ(errors.size(), 2u) << renderDiagnostics(d, text);
    EXPECT_EQ(errors[0]->begin.line, 5);
    EXPECT_EQ(errors[0]->message, "unknown reducer 'sun'; did you mean 'sum'?");
    EXPECT_EQ(errors[1]->begin.line, 8);
    EXPECT_EQ(errors[1]->begin.column, 17);
    EXPECT_EQ(errors[1]->message, "input 'xx' is not defined");
}

TEST(DslTypoRecovery, PoisoningSilencesOnlyThePoisonedName) {
    // The failed 'y' is poisoned; 'q', defined nowhere, is a mistake of its own and is reported.
    const std::string text = "input x: f32[4];\n"
                             "y[i] = sun(k) x[i];\n"
                             "z[i] = y[i] + q[i];\n"
                             "output z;\n";
    const auto d = diagnosticsOf(text);
    const auto errors = errorsOf(d);
    ASSERT_EQ(errors.size(), 2u) << renderDiagnostics(d, text);
    EXPECT_EQ(errors[0]->message, "unknown reducer 'sun'; did you mean 'sum'?");
    EXPECT_EQ(errors[1]->begin.line, 3);
    EXPECT_EQ(errors[1]->begin.column, 15);
    EXPECT_EQ(errors[1]->message, "tensor 'q' is not defined");
}

TEST(DslTypoRecovery, CallFollowedByAsIsNotAReduction) {
    // `max(i, 1) as n`: the word after the call names the node; it is not a reduction body.
    const std::string text = "input x: f32[4];\n"
                             "y[i] = x[i] * max(i, 1) as scaled;\n"
                             "output y;\n";
    auto r = parseProgram(text, "t.tsr");
    ASSERT_TRUE(r.ok()) << renderDiagnostics(r.diagnostics(), text);
    EXPECT_NE(r.value().graph.findNode("scaled"), ir::kNoNode);
}

TEST(DslTypoRecovery, MisspelledReducerBeforeAMinusIsStillOneError) {
    // `sun(k) - x[i, k]` parses as a call minus a tensor; the call's "argument" k is the
    // reducer's axis, not another unknown name.
    const std::string text = "input x: f32[4, 8];\n"
                             "y[i] = sun(k) - x[i, k];\n"
                             "output y;\n";
    const auto d = diagnosticsOf(text);
    const auto errors = errorsOf(d);
    ASSERT_EQ(errors.size(), 1u) << renderDiagnostics(d, text);
    EXPECT_EQ(errors[0]->begin.line, 2);
    EXPECT_EQ(errors[0]->begin.column, 8);
    EXPECT_EQ(errors[0]->message, "unknown function 'sun'");
    EXPECT_EQ(errors[0]->notes,
              std::vector<std::string>{"hint: did you mean 'sum'? A reduction names its axes: sum(k) x[i, k]"});
}
