// C emitter: identifier sanitising, comment escaping, and hostile model names that must never
// become code in the generated module.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <sstream>

#include "core/codegen/c_emitter.h"
#include "core/codegen/cpp/cpp_codegen.h"
#include "tests/codegen/compile_util.h"
#include "tests/codegen/test_kernels.h"

namespace tessera::test {
namespace {

using codegen::escapeCommentText;
using codegen::IdentifierTable;
using codegen::sanitizeIdentifier;

TEST(CommentEscape, HostileText) {
    EXPECT_EQ(escapeCommentText("Conv_0 (ok) */ /* //"), "Conv_0 (ok) */ /* //");
    EXPECT_EQ(escapeCommentText("a\nint evil;"), "a\\x0aint evil;");
    EXPECT_EQ(escapeCommentText("b\\"), "b\\x5c");
    EXPECT_EQ(escapeCommentText("c\r\n"), "c\\x0d\\x0a");
    EXPECT_EQ(escapeCommentText("d?" "?/"), "d?\\x3f/");
    EXPECT_EQ(escapeCommentText("???"), "?\\x3f\\x3f");
    EXPECT_EQ(escapeCommentText(std::string("e\0f", 3)), "e\\x00f");
    EXPECT_EQ(escapeCommentText("\xe2\x80\xa8x\xe2\x80\xa9"), "\\xe2\\x80\\xa8x\\xe2\\x80\\xa9");
    EXPECT_EQ(escapeCommentText("caf\xc3\xa9 \xff"), "caf\\xc3\\xa9 \\xff");
    EXPECT_EQ(escapeCommentText("\t\x7f"), "\\x09\\x7f");
    EXPECT_EQ(escapeCommentText(std::string(50, 'a'), 10), "aaaaaaaaaa...");
}

TEST(CommentEscape, RandomBytesStayPrintableAndNeverEndInBackslash) {
    std::mt19937 rng(42);
    for (int n = 0; n < 2000; ++n) {
        std::string s(static_cast<std::size_t>(rng() % 40), '\0');
        for (auto& c : s) c = static_cast<char>(rng() % 256);
        const std::string e = escapeCommentText(s);
        for (unsigned char c : e) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << int(c);
        ASSERT_TRUE(e.empty() || e.back() != '\\');
        ASSERT_EQ(e.find("??"), std::string::npos);
    }
}

TEST(Identifiers, Sanitise) {
    EXPECT_EQ(sanitizeIdentifier("x */ int evil; /*", "tk_"), "tk_x_int_evil_");
    EXPECT_EQ(sanitizeIdentifier("conv.1/weight", "in_"), "in_conv_1_weight");
    EXPECT_EQ(sanitizeIdentifier("1abc"), "n1abc");
    EXPECT_EQ(sanitizeIdentifier("for"), "for_");
    EXPECT_EQ(sanitizeIdentifier("int"), "int_");
    EXPECT_EQ(sanitizeIdentifier(""), "x");
    EXPECT_EQ(sanitizeIdentifier("", "out_"), "out_x");
    EXPECT_EQ(sanitizeIdentifier("__init__"), "x_init_");
    EXPECT_EQ(sanitizeIdentifier("_x", "t_"), "t_x");
    EXPECT_EQ(sanitizeIdentifier("\xc3\xa9t\xc3\xa9", "in_"), "in_t_");
    EXPECT_EQ(sanitizeIdentifier(std::string(100, 'q'), "in_"), "in_" + std::string(40, 'q'));
    EXPECT_TRUE(codegen::isReservedIdentifier("linux"));
    EXPECT_TRUE(codegen::isReservedIdentifier("expf"));
    EXPECT_TRUE(codegen::isReservedIdentifier("tk_main"));
    EXPECT_TRUE(codegen::isReservedIdentifier("a__b"));
    EXPECT_FALSE(codegen::isReservedIdentifier("acc"));
}

TEST(Identifiers, UniqueInTable) {
    IdentifierTable t;
    EXPECT_EQ(t.unique("X-Y", "in_"), "in_X_Y");
    EXPECT_EQ(t.unique("X_Y", "in_"), "in_X_Y_2");
    EXPECT_EQ(t.unique("X Y", "in_"), "in_X_Y_3");
    EXPECT_EQ(t.unique("X_Y_2", "in_"), "in_X_Y_2_2");
    EXPECT_EQ(t.unique("for", ""), "for_");
    EXPECT_EQ(t.unique("for", ""), "for_2");
    EXPECT_EQ(t.uniqueVar("i"), "i");
    EXPECT_EQ(t.uniqueVar("i"), "i_2");
    EXPECT_EQ(t.uniqueVar("int"), "v_int");
    EXPECT_EQ(t.uniqueVar("linux"), "v_linux");
    EXPECT_EQ(t.uniqueVar("Upper"), "v_Upper");
    EXPECT_EQ(t.uniqueVar("i j"), "v_i_j");
    EXPECT_EQ(t.uniqueVar("tsr_min"), "v_tsr_min");
}

/// Y = A + B + C (+ exp(0 * a) - 1) over 6 elements, with hostile names everywhere.
Kernel hostileKernel(const std::string& name) {
    Kernel k;
    k.name = name;
    k.opType = "Conv\nint evil_op;";
    k.sourceOps = {"a\nint evil1;", "b\\", "c?" "?/", std::string("d\0int evil3;", 12), "e\r\nint evil4;",
                   "\xe2\x80\xa8int evil5;", "\xff\xfe\xfd", "// int evil6;", "*/ int evil7; /*"};
    k.mappings = {"grid = spatial(2)\\", "\nint evil8;"};
    k.notes = {"note\\\n#define evil9 1"};
    const int a = addParam(k, "int evil10; //", DType::F32, {6}, BufferRole::Input);
    const int b = addParam(k, "X-Y", DType::F32, {6}, BufferRole::Input);
    const int c = addParam(k, "X_Y", DType::F32, {6}, BufferRole::Input);
    const int y = addParam(k, "", DType::F32, {6}, BufferRole::Output);
    const int tmp = addTemp(k, "for", DType::F32, {});
    auto i = k.newVar("int"), j = k.newVar("linux"), e = k.newVar("expf", DType::F32), z = k.newVar("args");
    Expr ei = lower::varRef(i) * 3 + lower::varRef(j);
    Expr ev = lower::varRef(e);
    Stmt body = lower::let(
        e, lower::load(a, DType::F32, {ei}),
        lower::allocate(tmp, lower::seq({
                                 lower::comment("trailing backslash \\"),
                                 lower::comment("x\nint evil12;"),
                                 lower::store(tmp, {}, ev + lower::load(b, DType::F32, {ei})),
                                 lower::let(z, lower::intImm(0),
                                            lower::store(y, {ei}, lower::load(tmp, DType::F32, {}) + lower::load(c, DType::F32, {ei}) +
                                                                      (lower::call(lower::Intrinsic::Exp, {ev * lower::floatImm(0.0)}) -
                                                                       lower::floatImm(1.0)))),
                             })));
    k.body = lower::forLoop(i, lower::intImm(2), lower::forLoop(j, lower::intImm(3), body, ForKind::Serial, 0, "ok\nint evil11; \\"),
                            ForKind::Parallel, 0, "grid\\");
    return k;
}

TEST(HostileNames, NeverBecomeCode) {
    const Kernel k1 = hostileKernel("x */ int evil; /*"), k2 = hostileKernel("x */ int evil; /*"),
                 k3 = hostileKernel("tessera_set_num_threads"), k4 = hostileKernel("1st\n");
    const auto g = codegen::generateCpp({&k1, &k2, &k3, &k4});
    ASSERT_EQ(g.entryPoints.size(), 4u);
    EXPECT_EQ(g.entryPoints[0], "tk_x_int_evil_");
    EXPECT_EQ(g.entryPoints[1], "tk_x_int_evil_2");  // never "__"
    EXPECT_EQ(g.entryPoints[2], "tk_tessera_set_num_threads");
    EXPECT_EQ(g.entryPoints[3], "tk_1st_");
    EXPECT_EQ(std::set<std::string>(g.entryPoints.begin(), g.entryPoints.end()).size(), 4u);

    // Only printable ASCII and newlines; no line continuation; no line of injected code.
    for (unsigned char c : g.source) ASSERT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "byte " << int(c);
    std::istringstream in(g.source);
    const std::set<std::string> allowedDirectives = {"#include", "#ifdef", "#else", "#endif", "#pragma"};
    for (std::string line; std::getline(in, line);) {
        ASSERT_TRUE(line.empty() || line.back() != '\\') << line;
        const auto first = line.find_first_not_of(' ');
        if (first == std::string::npos) continue;
        const std::string t = line.substr(first);
        ASSERT_NE(t.rfind("int evil", 0), 0u) << line;
        if (t[0] == '#') {
            ASSERT_TRUE(allowedDirectives.count(t.substr(0, t.find(' ')))) << line;
        }
        // outside comments, "evil" appears only inside sanitised identifiers (after a '_')
        const std::string code = t.substr(0, t.find("//"));
        for (auto p = code.find("evil"); p != std::string::npos; p = code.find("evil", p + 1)) {
            ASSERT_TRUE(p > 0 && code[p - 1] == '_') << line;
        }
    }
    EXPECT_NE(g.source.find("// Kernel tk_x_int_evil_ (IR name \"x */ int evil; /*\")"), std::string::npos);
    EXPECT_NE(g.source.find("\"a\\x0aint evil1;\", \"b\\x5c\", \"c?\\x3f/\", \"d\\x00int evil3;\""), std::string::npos);
    EXPECT_NE(g.source.find("const float v_expf = in_int_evil10_["), std::string::npos);
    EXPECT_NE(g.source.find("float t_for;"), std::string::npos);
    EXPECT_NE(g.source.find("in_X_Y_2["), std::string::npos);
    EXPECT_NE(g.source.find("out_x["), std::string::npos);
    EXPECT_NE(g.source.find("expf(v_expf * 0.0f)"), std::string::npos);

    if (!haveCompiler()) GTEST_SKIP() << "no C++ compiler (c++) on PATH: hostile module not compiled";
    {
        TempDir dir;
        std::string log;
        EXPECT_EQ(runCompiler(dir, g.source, "-fsyntax-only -fopenmp -Wall -Wextra -Wcomment -Werror", "", &log), 0) << log;
        // trigraphs on (as -std=c++11 would): still nothing to replace
        EXPECT_EQ(runCompiler(dir, g.source, "-fsyntax-only -fopenmp -trigraphs -Wall -Wtrigraphs -Werror", "", &log), 0) << log;
    }
    CompiledModule m(g.source);
    ASSERT_TRUE(m.ok()) << m.log();
    for (const char* evil : {"evil", "evil1", "evil3", "evil4", "evil5", "evil6", "evil7", "evil8", "evil9", "evil11",
                             "evil12", "evil_op"})
        EXPECT_EQ(m.symbol(evil), nullptr) << evil;
    const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30, 40, 50, 60}, c = {100, 200, 300, 400, 500, 600};
    for (const auto& entry : g.entryPoints) {
        auto fn = m.entry(entry);
        ASSERT_NE(fn, nullptr) << entry;
        std::vector<float> y(6, -1.0f);
        void* args[] = {const_cast<float*>(a.data()), const_cast<float*>(b.data()), const_cast<float*>(c.data()), y.data()};
        fn(args);
        for (int i = 0; i < 6; ++i) EXPECT_EQ(y[static_cast<std::size_t>(i)], 111.0f * static_cast<float>(i + 1)) << entry;
    }
}

}  // namespace
}  // namespace tessera::test
