// DOT escaping of hostile names (core/support/dot_escape.h) and the DOT export that uses it.
#include <gtest/gtest.h>

#include "core/ir/dot_export.h"
#include "core/support/dot_escape.h"

using tessera::support::escapeDotString;

TEST(DotEscape, QuotesBackslashesNewlines) {
    EXPECT_EQ(escapeDotString("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    EXPECT_EQ(escapeDotString("*/ &"), "*/ &amp;");
    EXPECT_EQ(escapeDotString("tab\there\x01"), "tab here ");
}

TEST(DotEscape, UnicodeBecomesEntities) {
    EXPECT_EQ(escapeDotString("\xc3\xa9"), "&#233;");
    EXPECT_EQ(escapeDotString("\xf0\x9f\x98\x80"), "&#128512;");  // emoji, 4-byte UTF-8
}

TEST(DotEscape, InvalidUtf8BecomesReplacement) {
    EXPECT_EQ(escapeDotString("\xff"), "&#65533;");
    EXPECT_EQ(escapeDotString("\xc3"), "&#65533;");            // truncated sequence
    EXPECT_EQ(escapeDotString("\xc0\xaf"), "&#65533;&#65533;");  // overlong '/'
    EXPECT_EQ(escapeDotString("\xed\xa0\x80x"), "&#65533;&#65533;&#65533;x");  // surrogate
}

TEST(DotExport, HostileNamesStayInsideStrings) {
    tessera::ir::Graph g;
    g.name = "g\"]; evil [";
    tessera::ir::Value x;
    x.name = "in\"put\n*/";
    x.isGraphInput = true;
    x.type.dtype = tessera::ir::DType::F32;
    x.type.shape = tessera::ir::Shape::ofKnown({2});
    const auto xi = g.addValue(x);
    g.inputs().push_back(xi);
    tessera::ir::Value y;
    y.name = "out";
    y.isGraphOutput = true;
    const auto yi = g.addValue(y);
    g.outputs().push_back(yi);
    tessera::ir::Node n;
    n.name = "relu\"\\";
    n.opType = "Relu";
    n.inputs = {xi};
    n.outputs = {yi};
    g.addNode(n);
    const std::string dot = tessera::ir::graphToDot(g);
    EXPECT_NE(dot.find("digraph \"g\\\"]; evil [\""), std::string::npos) << dot;
    EXPECT_NE(dot.find("in\\\"put\\n*/"), std::string::npos) << dot;
    EXPECT_NE(dot.find("relu\\\"\\\\"), std::string::npos) << dot;
    EXPECT_EQ(dot.find("relu\"\\"), std::string::npos) << dot;  // never raw
}
