// Limits of the DSL frontend that keep broken input cheap: the number of diagnostics returned.
#include <gtest/gtest.h>

#include <string>

#include "core/frontend/dsl/dsl.h"

namespace dsl = tessera::frontend::dsl;

TEST(DslLimits, DiagnosticsAreCapped) {
    std::string text = "input x: f32[4];\n";
    for (int i = 0; i < 150; ++i) text += "y" + std::to_string(i) + " = Rleu(x);\n";
    auto r = dsl::parseProgram(text, "many.tsr");
    ASSERT_FALSE(r.ok());
    const auto& items = r.diagnostics().items();
    ASSERT_EQ(items.size(), dsl::kMaxReportedDiagnostics + 1);
    EXPECT_EQ(items[0].begin.line, 2);  // the first errors are kept, in source order
    EXPECT_EQ(items.back().message, "stopped after 100 problems (50 more not shown); fix these first");
}

TEST(DslLimits, FewErrorsAreAllReported) {
    std::string text = "input x: f32[4];\n";
    for (int i = 0; i < 7; ++i) text += "y" + std::to_string(i) + " = Rleu(x);\n";
    auto r = dsl::parseProgram(text, "few.tsr");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().items().size(), 7u);
}
