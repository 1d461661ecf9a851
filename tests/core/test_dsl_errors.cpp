// The DSL error corpus (tests/errors/dsl/*.tsr): every file's errors must be exactly the ones its
// `# expect: LINE:COL: MESSAGE [| HINT]` comments list (see tests/errors/dsl/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/frontend/dsl/diagnostic_render.h"
#include "core/frontend/dsl/dsl.h"

using namespace tessera;

namespace {

std::filesystem::path corpusDir() {
    return std::filesystem::path(TESSERA_TEST_DATA) / ".." / "errors" / "dsl";
}

struct Expectation {
    int line = 0, column = 0;
    std::string message, hint;
};

std::vector<Expectation> readExpectations(const std::string& text) {
    std::vector<Expectation> out;
    std::istringstream in(text);
    std::string l;
    const std::string tag = "# expect: ";
    while (std::getline(in, l)) {
        if (l.rfind(tag, 0) != 0) continue;
        std::string rest = l.substr(tag.size());
        Expectation e;
        const auto c1 = rest.find(':');
        const auto c2 = rest.find(':', c1 + 1);
        if (c1 == std::string::npos || c2 == std::string::npos) continue;
        e.line = std::stoi(rest.substr(0, c1));
        e.column = std::stoi(rest.substr(c1 + 1, c2 - c1 - 1));
        std::string msg = rest.substr(c2 + 1);
        const auto bar = msg.find(" | ");
        if (bar != std::string::npos) {
            e.hint = msg.substr(bar + 3);
            msg = msg.substr(0, bar);
        }
        e.message = msg.substr(msg.find_first_not_of(' '));
        out.push_back(e);
    }
    return out;
}

std::string slurp(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

}  // namespace

TEST(DslErrorCorpus, EveryFileReportsExactlyItsExpectedErrors) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(corpusDir()))
        if (e.path().extension() == ".tsr") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 6u);
    for (const auto& f : files) {
        SCOPED_TRACE(f.filename().string());
        const std::string text = slurp(f);
        const auto expected = readExpectations(text);
        frontend::dsl::ParseOptions o;
        o.allowFileAccess = false;
        auto r = frontend::dsl::parseProgram(text, f.filename().string(), o);
        std::vector<support::Diagnostic> errors;
        for (const auto& d : r.diagnostics().items())
            if (d.severity == support::Severity::Error) errors.push_back(d);
        const std::string rendered = frontend::dsl::renderDiagnostics(r.diagnostics(), text);
        if (expected.empty()) {
            EXPECT_TRUE(errors.empty()) << rendered;
            continue;
        }
        EXPECT_FALSE(r.ok());
        EXPECT_EQ(errors.size(), expected.size()) << rendered;
        for (const auto& e : expected) {
            bool found = false;
            for (const auto& d : errors) {
                if (d.begin.line != e.line || d.begin.column != e.column) continue;
                if (d.message.find(e.message) == std::string::npos) continue;
                bool hintOk = e.hint.empty();
                for (const auto& n : d.notes) hintOk = hintOk || n.find(e.hint) != std::string::npos;
                if (hintOk) found = true;
            }
            EXPECT_TRUE(found) << "missing " << e.line << ":" << e.column << ": " << e.message
                               << (e.hint.empty() ? "" : " | " + e.hint) << "\n"
                               << rendered;
        }
        // Every diagnostic renders with its source line and a caret.
        for (const auto& d : errors) {
            const std::string one = frontend::dsl::renderDiagnostic(d, text);
            EXPECT_NE(one.find(" | "), std::string::npos) << one;
            EXPECT_NE(one.find('^'), std::string::npos) << one;
        }
    }
}

TEST(DslErrorCorpus, RenderedOutputOfAFileWithThreeErrors) {
    const std::string text = slurp(corpusDir() / "multiple_errors.tsr");
    auto r = frontend::dsl::parseProgram(text, "multiple_errors.tsr");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(
        frontend::dsl::renderDiagnostics(r.diagnostics(), text),
        "multiple_errors.tsr:7:5: error: unknown op 'Covn'\n"
        "    7 | y = Covn(image, image);\n"
        "      |     ^~~~\n"
        "      = hint: did you mean 'Conv'?\n"
        "      = hint: ops Tessera does not know are written with their domain, e.g. ai.onnx::Covn(...)\n"
        "multiple_errors.tsr:8:10: error: input 'imgae' is not defined\n"
        "    8 | z = Relu(imgae);\n"
        "      |          ^~~~~\n"
        "      = hint: did you mean 'image'?\n"
        "multiple_errors.tsr:9:5: error: Add: cannot broadcast f32[1,3,8,8] (image) and f32[4] (bias)\n"
        "    9 | w = Add(image, bias);\n"
        "      |     ^~~~~~~~~~~~~~~~\n"
        "      = note: input 0 is 'image': f32[1,3,8,8]\n"
        "      = note: input 1 is 'bias': f32[4]\n");
}
