// Mapping-expression parser: accepted forms, error columns/ranges, messages and hints, limits.
#include <gtest/gtest.h>

#include "core/schedule/mapping_parser.h"

namespace {

using tessera::schedule::parseMapping;
using tessera::schedule::TaskMapping;

struct Err {
    int begin = 0, end = 0;
    std::string message;
    std::string hint;
};

Err error(const std::string& text) {
    auto m = parseMapping(text, "expr");
    EXPECT_FALSE(m.ok()) << text << " parsed as " << (m.ok() ? m->str() : "");
    if (m.ok()) return {};
    const auto& d = m.diagnostics().items().at(0);
    EXPECT_EQ(d.severity, tessera::support::Severity::Error);
    EXPECT_EQ(d.file, "expr");
    EXPECT_EQ(d.begin.line, 1);
    return {d.begin.column, d.end.column, d.message, d.notes.empty() ? "" : d.notes[0]};
}

TEST(ScheduleParser, AcceptedForms) {
    const std::pair<const char*, const char*> cases[] = {
        {"spatial(2,5)", "spatial(2,5)"},
        {"  spatial ( 2 , 5 )  ", "spatial(2,5)"},
        {"row_spatial(2,5)", "spatial(2,5)"},
        {"col_spatial(2,5)", "spatial(2,5, ranks=[1,0])"},
        {"row_repeat(2,5)", "repeat(2,5)"},
        {"col_repeat(2,5)", "repeat(2,5, ranks=[1,0])"},
        {"spatial(2,5, ranks=[1,0])", "spatial(2,5, ranks=[1,0])"},
        {"spatial(2,5, ranks=(1,0),)", "spatial(2,5, ranks=[1,0])"},
        {"repeat(3,4, attrs=\"u2.\")", "repeat(3,4, attrs=\"u2.\")"},
        {"repeat(3,4, attrs=\"u+.\")", "repeat(3,4)"},
        {"repeat(3,4, ranks=[1,0], attrs='p4')", "repeat(3,4, ranks=[1,0], attrs=\"p4p4\")"},
        {"spatial(2,5).repeat(3,4)", "spatial(2,5).repeat(3,4)"},
        {"spatial(2,5) * repeat(3,4)", "spatial(2,5).repeat(3,4)"},
        {"(spatial(2,5))*(repeat(3,4))", "spatial(2,5).repeat(3,4)"},
        {"spatial(4,2).repeat(2,2).spatial(4,8, ranks=[1,0]).repeat(4,4)",
         "spatial(4,2).repeat(2,2).spatial(4,8, ranks=[1,0]).repeat(4,4)"},
        {"auto_map(8,32, workers=64)", "repeat(4,1).spatial(2,32)"},
        {"auto_map(8, 96, workers = 64, ranks = [1, 0])", "repeat(1,12, ranks=[1,0]).spatial(8,8, ranks=[1,0])"},
        {"spatial(2,5).projection({0: 0})", "spatial(2,5).projection({0: 0})"},
        {"spatial(7)", "spatial(7)"},
        {"spatial(2,5)\n.repeat(3,4)", "spatial(2,5).repeat(3,4)"},
    };
    for (const auto& [text, canonical] : cases) {
        auto m = parseMapping(text);
        ASSERT_TRUE(m.ok()) << text << ": " << m.diagnostics().items()[0].format();
        EXPECT_EQ(m->str(), canonical) << text;
        auto again = parseMapping(m->str());
        ASSERT_TRUE(again.ok()) << m->str();
        EXPECT_EQ(*again, *m);
    }
}

TEST(ScheduleParser, UnknownNamesWithHints) {
    auto e = error("repaet(3,4)");
    EXPECT_EQ(e.begin, 1);
    EXPECT_EQ(e.end, 6);
    EXPECT_EQ(e.message, "unknown primitive 'repaet'");
    EXPECT_EQ(e.hint, "did you mean `repeat`?");

    e = error("spatial(2,5).reapet(3,4)");
    EXPECT_EQ(e.begin, 14);
    EXPECT_EQ(e.end, 19);
    EXPECT_EQ(e.message, "unknown mapping method 'reapet'");
    EXPECT_EQ(e.hint, "did you mean `repeat`?");

    e = error("colspatial(2,5)");
    EXPECT_EQ(e.hint, "did you mean `col_spatial`?");

    e = error("spatial(2,5, rank=[1,0])");
    EXPECT_EQ(e.begin, 14);
    EXPECT_EQ(e.end, 17);
    EXPECT_EQ(e.message, "unknown keyword 'rank'");
    EXPECT_EQ(e.hint, "did you mean `ranks`?");

    e = error("automap(8,32, workers=64)");
    EXPECT_EQ(e.hint, "did you mean `auto_map`?");

    e = error("banana(2)");
    EXPECT_EQ(e.message, "unknown primitive 'banana'");
    EXPECT_NE(e.hint.find("primitives are"), std::string::npos);
}

TEST(ScheduleParser, SemanticErrorsPointAtTheCause) {
    auto e = error("spatial(2,5) * repeat(4)");
    EXPECT_EQ(e.begin, 14);
    EXPECT_EQ(e.end, 14);
    EXPECT_EQ(e.message, "cannot compose rank-2 spatial(2,5) with rank-1 repeat(4)");

    e = error("spatial(2,5).repeat(4)");
    EXPECT_EQ(e.begin, 14);
    EXPECT_EQ(e.end, 22);
    EXPECT_EQ(e.message, "cannot compose rank-2 spatial(2,5) with rank-1 repeat(4)");

    e = error("spatial(2,0)");
    EXPECT_EQ(e.begin, 11);
    EXPECT_EQ(e.end, 11);
    EXPECT_EQ(e.message, "extent 0 of dim 1 must be positive");

    e = error("repeat(-3)");
    EXPECT_EQ(e.begin, 8);
    EXPECT_EQ(e.end, 9);
    EXPECT_EQ(e.message, "extent -3 of dim 0 must be positive");

    e = error("spatial()");
    EXPECT_EQ(e.begin, 1);
    EXPECT_EQ(e.end, 9);
    EXPECT_EQ(e.message, "spatial() needs at least one extent");

    e = error("spatial(2,5, ranks=[0,0])");
    EXPECT_EQ(e.begin, 20);
    EXPECT_EQ(e.end, 24);
    EXPECT_EQ(e.message, "ranks must be a permutation of 0..1 (one per dimension)");

    e = error("repeat(3,4, attrs=\"u2x\")");
    EXPECT_EQ(e.begin, 19);
    EXPECT_EQ(e.end, 23);
    EXPECT_NE(e.message.find("unexpected character at offset 2"), std::string::npos);

    e = error("repeat(3,4,5, attrs=\"u2.\")");
    EXPECT_EQ(e.message, "attrs \"u2.\" has 2 attributes for 3 loops");

    e = error("spatial(3,4, attrs=\"u\")");
    EXPECT_EQ(e.message, "attrs are only allowed on repeat");

    e = error("auto_map(8,41, workers=64)");
    EXPECT_EQ(e.begin, 1);
    EXPECT_EQ(e.end, 26);
    EXPECT_NE(e.message.find("328"), std::string::npos);

    e = error("auto_map(8,32)");
    EXPECT_EQ(e.message, "auto_map needs workers=N");

    e = error("spatial(8, workers=2)");
    EXPECT_EQ(e.message, "workers= is only allowed on auto_map");

    e = error("col_spatial(2,5, ranks=[0,1])");
    EXPECT_NE(e.message.find("fixes its ranks"), std::string::npos);

    e = error("spatial(2,5).projection({2: 0})");
    EXPECT_EQ(e.message, "projection dim 2 is out of range for rank 2");
    e = error("spatial(2,5).projection({0: 1})");
    EXPECT_EQ(e.message, "projection value must be 0, got 1");

    e = error("spatial(65536).repeat(65536)");
    EXPECT_NE(e.message.find("2^31"), std::string::npos);
}

TEST(ScheduleParser, SyntaxErrors) {
    auto e = error("spatial(2,5");
    EXPECT_EQ(e.begin, 12);
    EXPECT_EQ(e.message, "expected ',' or ')', found end of input");

    e = error("spatial(2,5))");
    EXPECT_EQ(e.begin, 13);
    EXPECT_EQ(e.message, "unexpected ')' after the mapping expression");

    e = error("spatial(2,5) repeat(3,4)");
    EXPECT_EQ(e.begin, 14);

    e = error("spatial(2,,5)");
    EXPECT_EQ(e.begin, 11);
    EXPECT_EQ(e.message, "expected an extent, found ','");

    e = error("spatial(2,5) @ 3");
    EXPECT_EQ(e.begin, 14);
    EXPECT_EQ(e.message, "unexpected character '@'");

    e = error("repeat(3, attrs=\"u2");
    EXPECT_EQ(e.begin, 17);
    EXPECT_EQ(e.message, "unterminated string");

    e = error("spatial(99999999999999999999)");
    EXPECT_EQ(e.begin, 9);
    EXPECT_NE(e.message.find("too large"), std::string::npos);

    e = error("");
    EXPECT_EQ(e.begin, 1);
    EXPECT_NE(e.message.find("end of input"), std::string::npos);

    e = error("spatial(2, ranks=[1,0], 3)");
    EXPECT_EQ(e.message, "positional extent after a keyword argument");

    auto m = parseMapping("spatial(2,5)\n * repeat(4)");
    EXPECT_EQ(m.diagnostics().items()[0].begin.line, 2);
    EXPECT_EQ(m.diagnostics().items()[0].begin.column, 2);

    e = error("spatial(2,5) \xc3\xa9");
    EXPECT_EQ(e.begin, 14);
    EXPECT_EQ(e.end, 15);
    EXPECT_EQ(e.message, "unexpected character '\\xc3\\xa9'");
}

TEST(ScheduleParser, LimitsAreErrorsNotCrashes) {
    std::string deep(10000, '(');
    auto e = error(deep + "spatial(2)" + std::string(10000, ')'));
    EXPECT_NE(e.message.find("nested deeper than 64"), std::string::npos);
    EXPECT_EQ(e.begin, 65);

    std::string ok = std::string(64, '(') + "spatial(2)" + std::string(64, ')');
    EXPECT_TRUE(parseMapping(ok).ok());

    std::string longChain = "spatial(1)";
    for (int i = 0; i < 100; ++i) longChain += ".repeat(1)";
    e = error(longChain);
    EXPECT_NE(e.message.find("at most 64 levels"), std::string::npos);

    e = error(std::string(70000, ' '));
    EXPECT_NE(e.message.find("over the limit"), std::string::npos);


    e = error("spatial(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)");
    EXPECT_NE(e.message.find("more than 16 extents"), std::string::npos);
}

// Inputs the libFuzzer target found; each once crashed or tripped a sanitizer.
TEST(ScheduleParser, FuzzRegressions) {
    // Signed overflow while accumulating digits past 2^62 (UBSan).
    auto e = error("col_spatial(" + std::string(77, '7') + ",6)");
    EXPECT_EQ(e.begin, 13);
    EXPECT_NE(e.message.find("too large"), std::string::npos);
    e = error("spatial(4611686018427387904)");  // 2^62 itself is accepted by the lexer, refused as too many tasks
    EXPECT_NE(e.message.find("2^31"), std::string::npos);
    e = error("spatial(4611686018427387905)");
    EXPECT_NE(e.message.find("too large"), std::string::npos);
}

}  // namespace
