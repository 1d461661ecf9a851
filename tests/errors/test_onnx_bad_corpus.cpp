// The bad-input corpus (tests/data/bad, described by tests/data/bad/manifest.json): every invalid
// file gets a one-line error that names the file and contains the expected words; every
// valid-but-hostile file imports. Every file of the folder is also imported with default options
// to show that nothing crashes, hangs or allocates without bound (run under ASan in the asan preset).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/frontend/onnx/onnx_importer.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tessera::frontend::onnx::importModel;

struct Case {
    std::string file;                 ///< relative to tests/data
    bool valid = false;
    std::vector<std::string> expectAny;  ///< lowercase substrings; one must occur in an error line
    std::string what;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.file; }

std::string dataPath(const std::string& rel) { return std::string(TESSERA_TEST_DATA) + "/" + rel; }

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::vector<Case> loadCases() {
    std::vector<Case> cases;
    std::ifstream in(dataPath("bad/manifest.json"));
    if (!in) return cases;
    json j = json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.contains("cases")) return cases;
    for (const auto& c : j["cases"]) {
        Case k;
        k.file = c.value("file", "");
        k.valid = c.value("valid", false);
        if (c.contains("expect") && c["expect"].is_string()) k.expectAny.push_back(lower(c["expect"].get<std::string>()));
        if (c.contains("expect_any") && c["expect_any"].is_array())
            for (const auto& e : c["expect_any"])
                if (e.is_string()) k.expectAny.push_back(lower(e.get<std::string>()));
        k.what = c.value("what", "");
        if (!k.file.empty()) cases.push_back(std::move(k));
    }
    return cases;
}

class BadCorpus : public ::testing::TestWithParam<Case> {};

TEST_P(BadCorpus, GivesTheExpectedOutcome) {
    const Case& c = GetParam();
    const std::string path = dataPath(c.file);
    auto r = importModel(path);
    std::string all;
    for (const auto& d : r.diagnostics().items()) all += d.format() + "\n";
    if (c.valid) {
        EXPECT_TRUE(r.ok()) << c.file << " (" << c.what << ") should import:\n" << all;
        return;
    }
    ASSERT_FALSE(r.ok()) << c.file << " (" << c.what << ") should be refused";
    ASSERT_TRUE(r.diagnostics().hasErrors());
    bool matched = c.expectAny.empty();
    for (const auto& d : r.diagnostics().items()) {
        if (d.severity != tessera::support::Severity::Error) continue;
        const std::string line = d.format();
        EXPECT_EQ(line.find('\n'), std::string::npos) << "not one line: " << line;
        EXPECT_EQ(line.find('\r'), std::string::npos) << "not one line: " << line;
        EXPECT_NE(line.find(path), std::string::npos) << "does not name the file: " << line;
        const std::string low = lower(line);
        for (const auto& e : c.expectAny)
            if (low.find(e) != std::string::npos) matched = true;
    }
    std::string want;
    for (const auto& e : c.expectAny) want += " '" + e + "'";
    EXPECT_TRUE(matched) << c.file << " (" << c.what << "): no error contains any of" << want << "; got:\n" << all;
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
    std::string n = fs::path(info.param.file).stem().string();
    for (char& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return n + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Manifest, BadCorpus, ::testing::ValuesIn(loadCases()), caseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BadCorpus);

TEST(BadCorpusSweep, ManifestIsPresent) {
    EXPECT_FALSE(loadCases().empty()) << "tests/data/bad/manifest.json missing or empty";
}

TEST(BadCorpusSweep, EveryFileImportsWithoutCrashing) {
    const fs::path dir = dataPath("bad");
    if (!fs::is_directory(dir)) GTEST_SKIP() << "no corpus";
    int files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        if (!entry.is_regular_file() || entry.path().extension() != ".onnx") continue;
        ++files;
        auto r = importModel(entry.path().string());
        // Whatever the outcome, failures explain themselves.
        if (!r.ok()) {
            EXPECT_TRUE(r.diagnostics().hasErrors()) << entry.path();
        }
    }
    EXPECT_GT(files, 0);
}

}  // namespace
