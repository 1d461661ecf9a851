// Round trip ONNX -> IR -> DSL text -> IR (docs/dsl.md; core/frontend/dsl/dsl_printer.h):
// - every sample model and every valid-but-hostile file of the bad-input corpus
//   (tests/data/bad/manifest.json, "valid": true) imports, prints, parses back to a structurally
//   equal model, and prints again to byte-identical text (stability);
// - the same with every constant inlined (no onnx(...) references at all);
// - the golden files of tests/golden/dsl/*.tsr (written by test_dsl_roundtrip_printer.cpp) parse
//   with samples/ as their base folder (their onnx("<sample>.onnx", ...) references point there);
// - every DSL sample (samples/*.tsr) parses, prints, parses again to an equal model, and the
//   second print equals the first; the printed form is kept as a golden file,
//   tests/golden/dsl/tsr/<sample>.tsr.
// Golden files are regenerated with
//   TESSERA_UPDATE_GOLDEN=1 ./tests/tessera_core_tests --gtest_filter='*DslPrinterGolden*:DslRoundTrip.DslSamples*'
// from the build directory; review `git diff tests/golden/dsl` before committing.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/core/golden.h"
#include "core/frontend/dsl/dsl.h"
#include "core/frontend/dsl/dsl_printer.h"
#include "core/frontend/onnx/onnx_importer.h"

namespace {

namespace fs = std::filesystem;
namespace ir = tessera::ir;
namespace dsl = tessera::frontend::dsl;
namespace support = tessera::support;

std::string samplePath(const std::string& rel) { return std::string(TESSERA_SAMPLES) + "/" + rel; }

std::string diagnosticsText(const support::DiagnosticList& d) {
    std::string s;
    for (const auto& item : d.items()) {
        s += item.format() + "\n";
        for (const auto& n : item.notes) s += "    " + n + "\n";
    }
    return s;
}

/// The loader the app gives the parser: imports the ONNX file (ONNX shape inference off: only
/// the constants are used), once per path and parse.
dsl::ParseOptions parseOptions(const std::string& baseDir) {
    dsl::ParseOptions o;
    o.baseDir = baseDir;
    o.onnxLoader = [](const std::string& path) -> support::Expected<std::shared_ptr<const ir::Model>> {
        tessera::frontend::onnx::ImportOptions io;
        io.runOnnxShapeInference = false;
        io.runTesseraShapeInference = false;
        auto r = tessera::frontend::onnx::importModel(path, io);
        if (!r) return r.diagnostics();
        return std::shared_ptr<const ir::Model>(std::make_shared<ir::Model>(std::move(r.value())));
    };
    return o;
}

struct RoundTrip {
    std::string text, reprinted, why;
    bool parsed = false, equal = false;
    support::DiagnosticList diags;
};

/// Prints `m`, parses the text as a file in `baseDir`, compares, prints again.
RoundTrip roundTrip(const ir::Model& m, const dsl::PrintOptions& po, const std::string& baseDir, const std::string& name) {
    RoundTrip rt;
    rt.text = dsl::printDsl(m, po);
    auto parsed = dsl::parseProgram(rt.text, (fs::path(baseDir) / name).string(), parseOptions(baseDir));
    rt.diags = parsed.diagnostics();
    if (!parsed) return rt;
    rt.parsed = true;
    rt.equal = dsl::structurallyEqual(m, *parsed, &rt.why);
    // The parsed model does not remember which constants came from onnx(...): reprint with the
    // reference the first print used (by default the file name of the ONNX source).
    dsl::PrintOptions again = po;
    if (again.onnxReference.empty() && m.sourcePath.size() > 5 && m.sourcePath.substr(m.sourcePath.size() - 5) == ".onnx")
        again.onnxReference = fs::path(m.sourcePath).filename().string();
    rt.reprinted = dsl::printDsl(*parsed, again);
    return rt;
}

/// First differing line of two texts, for failure messages.
void expectRoundTrip(const ir::Model& m, const dsl::PrintOptions& po, const std::string& baseDir, const std::string& label) {
    const RoundTrip rt = roundTrip(m, po, baseDir, "roundtrip.tsr");
    ASSERT_TRUE(rt.parsed) << label << ": the printed program does not parse:\n"
                           << diagnosticsText(rt.diags) << "--- text (first 4000 bytes) ---\n"
                           << rt.text.substr(0, 4000);
    EXPECT_TRUE(rt.equal) << label << ": not structurally equal after the round trip: " << rt.why;
    EXPECT_TRUE(rt.text == rt.reprinted) << label << ": printing is not stable; " << tessera::test::firstDifferingLine(rt.text, rt.reprinted);
}

ir::Model importFile(const std::string& path) {
    auto r = tessera::frontend::onnx::importModel(path);
    EXPECT_TRUE(r.ok()) << diagnosticsText(r.diagnostics());
    return r.ok() ? std::move(r.value()) : ir::Model{};
}

// ---- every sample model ---------------------------------------------------------------------

std::vector<std::string> sampleModels() {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(TESSERA_SAMPLES))
        if (e.path().extension() == ".onnx") v.push_back(e.path().filename().string());
    v.push_back("external_data/model.onnx");
    std::sort(v.begin(), v.end());
    return v;
}

TEST(DslRoundTrip, SampleListIsComplete) {
    // The parameterised tests below are listed by hand (gtest needs them at load time); this
    // catches a new sample that was not added there.
    const std::vector<std::string> listed = {"control_flow_if.onnx", "dw_pw_block.onnx", "external_data/model.onnx",
                                             "mobilenet_v2.onnx", "opset21_mlp.onnx", "symbolic_batch.onnx"};
    EXPECT_EQ(sampleModels(), listed);
}

class DslRoundTripSample : public ::testing::TestWithParam<const char*> {};

std::string testName(const ::testing::TestParamInfo<const char*>& info) {
    std::string s = info.param;
    for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return s;
}

TEST_P(DslRoundTripSample, ByReference) {
    const std::string path = samplePath(GetParam());
    const ir::Model m = importFile(path);
    // The program is "written" next to the model, so the default reference (its file name) resolves.
    expectRoundTrip(m, {}, fs::path(path).parent_path().string(), GetParam());
}

TEST_P(DslRoundTripSample, AllInline) {
    // MobileNetV2's 3.5 M weights print as ~40 MB of literals, over the parser's file size limit.
    if (std::string(GetParam()) == "mobilenet_v2.onnx") GTEST_SKIP() << "inline text is over the parser's size limit";
    const std::string path = samplePath(GetParam());
    const ir::Model m = importFile(path);
    dsl::PrintOptions po;
    po.maxInlineElements = std::int64_t{1} << 24;
    const std::string text = dsl::printDsl(m, po);
    EXPECT_EQ(text.find("onnx(\""), std::string::npos);
    // A folder without the model: nothing may be loaded from a file.
    expectRoundTrip(m, po, ::testing::TempDir(), std::string(GetParam()) + " (inline)");
}

INSTANTIATE_TEST_SUITE_P(Samples, DslRoundTripSample,
                         ::testing::Values("control_flow_if.onnx", "dw_pw_block.onnx", "external_data/model.onnx",
                                           "mobilenet_v2.onnx", "opset21_mlp.onnx", "symbolic_batch.onnx"),
                         testName);

// ---- valid-but-hostile corpus files -----------------------------------------------------------

TEST(DslRoundTrip, ValidHostileCorpusFiles) {
    std::ifstream in(std::string(TESSERA_TEST_DATA) + "/bad/manifest.json");
    ASSERT_TRUE(in.good());
    nlohmann::json manifest;
    in >> manifest;
    int count = 0;
    for (const auto& c : manifest["cases"]) {
        if (!c.value("valid", false)) continue;
        const std::string file = c["file"].get<std::string>();
        SCOPED_TRACE(file);
        const std::string path = std::string(TESSERA_TEST_DATA) + "/" + file;
        const ir::Model m = importFile(path);
        expectRoundTrip(m, {}, fs::path(path).parent_path().string(), file);
        ++count;
    }
    EXPECT_GE(count, 9);
}

// ---- golden files parse where they are ----------------------------------------------------------

TEST(DslRoundTrip, GoldenFilesParseAndEqualTheirModels) {
    const std::map<std::string, std::string> goldens = {{"dw_pw_block", "dw_pw_block.onnx"},
                                                        {"opset21_mlp", "opset21_mlp.onnx"},
                                                        {"control_flow_if", "control_flow_if.onnx"},
                                                        {"symbolic_batch", "symbolic_batch.onnx"},
                                                        {"mobilenet_v2", "mobilenet_v2.onnx"}};
    for (const auto& [golden, sample] : goldens) {
        SCOPED_TRACE(golden);
        const std::string path = std::string(TESSERA_GOLDEN) + "/dsl/" + golden + ".tsr";
        auto parsed = dsl::parseProgramFile(path, parseOptions(TESSERA_SAMPLES));
        ASSERT_TRUE(parsed.ok()) << diagnosticsText(parsed.diagnostics());
        const ir::Model m = importFile(samplePath(sample));
        std::string why;
        EXPECT_TRUE(dsl::structurallyEqual(m, *parsed, &why)) << why;
    }
}

// ---- DSL samples: parse -> print -> parse -> equal ---------------------------------------------

TEST(DslRoundTrip, DslSamplesPrintAndReparse) {
    std::vector<fs::path> programs;
    for (const auto& e : fs::directory_iterator(TESSERA_SAMPLES))
        if (e.path().extension() == ".tsr") programs.push_back(e.path());
    std::sort(programs.begin(), programs.end());
    if (programs.empty()) GTEST_SKIP() << "no samples/*.tsr yet";
    for (const auto& p : programs) {
        SCOPED_TRACE(p.filename().string());
        auto first = dsl::parseProgramFile(p.string(), parseOptions(""));
        ASSERT_TRUE(first.ok()) << diagnosticsText(first.diagnostics());
        // Printed programs keep every constant inline (a DSL source has no ONNX file to point at).
        const RoundTrip rt = roundTrip(*first, {}, p.parent_path().string(), p.filename().string());
        ASSERT_TRUE(rt.parsed) << "the printed program does not parse:\n"
                               << diagnosticsText(rt.diags) << "--- text (first 4000 bytes) ---\n"
                               << rt.text.substr(0, 4000);
        EXPECT_TRUE(rt.equal) << rt.why;
        EXPECT_TRUE(rt.text == rt.reprinted) << "printing is not stable; " << tessera::test::firstDifferingLine(rt.text, rt.reprinted);
        tessera::test::checkGolden("dsl/tsr/" + p.filename().string(), rt.text);
    }
    EXPECT_GE(programs.size(), 7u);
}

}  // namespace
