// The .tessera project file (issue 8): every field survives a save and a load, source paths are
// stored relative to the project's folder, corrupt and foreign files are errors that name the
// line:column or the key and leave the file as it was, newer versions open read-only, and a run
// record is built from a real CPU run of a sample in tessera-runner.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/perf/machine_profile.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/run.h"
#include "core/project/project.h"
#include "core/support/hash.h"

namespace fs = std::filesystem;
namespace project = tessera::project;
namespace pipeline = tessera::pipeline;
namespace schedule = tessera::schedule;
namespace runtime = tessera::runtime;
namespace support = tessera::support;

namespace {

std::string sample(const std::string& name) { return std::string(TESSERA_SAMPLES) + "/" + name; }

std::string readAll(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void writeAll(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << text;
}

bool hasWarning(const support::DiagnosticList& d, const std::string& text) {
    for (const auto& x : d.items())
        if (x.severity == support::Severity::Warning && x.format().find(text) != std::string::npos) return true;
    return false;
}

class ProjectFile : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() /
                ("tessera_project_test_" + std::to_string(::getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    /// A project with every field set, for a DSL program at `source`.
    project::Project fullProject(const fs::path& source) {
        project::Project p;
        p.source.kind = project::SourceKind::Dsl;
        p.source.path = source.string();
        p.source.contentHash = project::hashFile(source.string());
        p.source.programText = "// edited in the window\n" + readAll(source);
        p.planner = "user";
        schedule::FusionPlan plan;
        plan.planner = "user";
        plan.hardware = "my-gpu";
        schedule::FusionGroup g;
        g.name = "g0";
        g.kind = schedule::FusionKind::PrologueEpilogue;
        g.ops = {"Conv_0", "Relu_1"};
        g.anchor = "Conv_0";
        g.epilogue = {"Relu_1"};
        g.predictedBytes = 4096;
        g.predictedBytesSaved = 1024;
        g.reason = "anchor Conv_0; epilogue Relu_1";
        plan.groups.push_back(g);
        p.plan = plan;
        p.hardware.name = "my-gpu";
        p.hardware.profileJson =
            R"({"format": "tessera-gpu-profile", "version": 1, "name": "my-gpu", "display_name": "My GPU",
                "sms": 10, "warp_size": 32, "l1_kib": 128, "shared_kib": 96, "l2_kib": 4096,
                "dram_gbs": 500, "fp32_gflops": 10000, "source": "test"})";
        p.target = "cuda:1";
        p.options.threads = 3;
        p.options.check = false;
        p.options.fallbackReference = false;
        p.options.tolerance = 2.5e-4;
        p.mappings.push_back({"MatMul_0", "spatial(4,4)", "repeat(2,2)"});
        p.mappings.push_back({"", "spatial(8)", ""});
        p.schedules.push_back({"C", "spatial(2,2)", "spatial(16,16) * repeat(8,8)"});
        p.schedules.push_back({"Relu_1", "spatial(8)", ""});
        project::RunRecord r;
        r.time = "2026-01-05T10:11:12Z";
        r.fingerprint = "Test CPU | 2 logical CPUs";
        r.target = "cpu";
        r.device = "Test CPU";
        r.planner = "user";
        r.planHash = project::planHash(plan);
        r.threads = 2;
        r.checked = true;
        r.allPassed = false;
        r.totalSeconds = 0.00125;
        r.kernels.push_back({"Conv_0", "Conv", "g0", {"Conv_0", "Relu_1"}, 1.5e-5, 4096, 8192, true, 3.25e-7});
        r.kernels.push_back({"Add_2", "Add", "Add_2", {"Add_2"}, 2e-6, 64, 768, false, -1});
        p.runs.push_back(r);
        r.time = "2026-01-06T00:00:00Z";
        r.totalSeconds = 0.001;
        r.timingWarning = "other processes used 41% of the CPUs' time while the kernels were timed: the times are "
                          "likely inflated; rerun on a quiet machine";
        p.runs.push_back(r);
        return p;
    }

    fs::path m_dir;
};

TEST_F(ProjectFile, EveryFieldSurvivesSaveAndLoad) {
    const fs::path src = m_dir / "models" / "prog.tsr";
    fs::create_directories(src.parent_path());
    fs::copy_file(sample("matmul_tiled.tsr"), src);
    const project::Project p = fullProject(src);
    const fs::path file = m_dir / "work" / "p.tessera";
    fs::create_directories(file.parent_path());
    auto saved = project::saveProject(p, file.string());
    ASSERT_TRUE(saved.ok()) << saved.diagnostics().formatAll();
    EXPECT_EQ(*saved, file.string());

    const auto raw = nlohmann::json::parse(readAll(file));
    EXPECT_EQ(raw["format"], "tessera-project");
    EXPECT_EQ(raw["version"], 2);
    EXPECT_EQ(raw["schedules"][0]["node"], "C");
    EXPECT_EQ(raw["schedules"][0]["block"], "spatial(16,16) * repeat(8,8)");
    EXPECT_EQ(raw["source"]["kind"], "dsl");
    EXPECT_EQ(raw["source"]["path"], "../models/prog.tsr");
    EXPECT_EQ(raw["source"]["content_hash"].get<std::string>().size(), 32u);
    EXPECT_EQ(raw["runs"][0]["kernels"][0]["median_s"], 1.5e-5);
    EXPECT_EQ(raw["hardware"]["profile"]["sms"], 10);
    // Only a run with unreliable timings has the key.
    EXPECT_FALSE(raw["runs"][0].contains("timing_warning"));
    EXPECT_EQ(raw["runs"][1]["timing_warning"], p.runs[1].timingWarning);

    auto loaded = project::loadProject(file.string());
    ASSERT_TRUE(loaded.ok()) << loaded.diagnostics().formatAll();
    EXPECT_TRUE(loaded.diagnostics().empty()) << loaded.diagnostics().formatAll();
    EXPECT_FALSE(loaded->readOnly);
    EXPECT_FALSE(loaded->sourceMissing);
    EXPECT_FALSE(loaded->sourceChanged);
    EXPECT_EQ(loaded->fileVersion, 2);
    const project::Project& q = loaded->project;
    EXPECT_EQ(q.source.kind, project::SourceKind::Dsl);
    EXPECT_EQ(q.source.path, src.lexically_normal().string());
    EXPECT_EQ(q.source.contentHash, p.source.contentHash);
    EXPECT_EQ(q.source.programText, p.source.programText);
    EXPECT_EQ(q.planner, "user");
    ASSERT_TRUE(q.plan.has_value());
    EXPECT_EQ(schedule::planToJson(*q.plan), schedule::planToJson(*p.plan));
    EXPECT_EQ(q.hardware.name, "my-gpu");
    auto hw = project::projectHardware(q);
    ASSERT_TRUE(hw.ok()) << hw.diagnostics().formatAll();
    EXPECT_EQ(hw->name, "my-gpu");
    EXPECT_EQ(hw->sms, 10);
    EXPECT_EQ(hw->sharedBytes, 96 * 1024);
    EXPECT_EQ(q.target, "cuda:1");
    EXPECT_EQ(q.options, p.options);
    EXPECT_EQ(q.mappings, p.mappings);
    EXPECT_EQ(q.schedules, p.schedules);
    EXPECT_EQ(q.runs, p.runs);
    ASSERT_EQ(q.runs.size(), 2u);
    EXPECT_EQ(q.runs[0].timingWarning, "");
    EXPECT_EQ(q.runs[1].timingWarning, p.runs[1].timingWarning);
    ASSERT_NE(project::lastRun(q), nullptr);
    EXPECT_EQ(project::lastRun(q)->time, "2026-01-06T00:00:00Z");
    EXPECT_EQ(project::lastRun(q, "cuda:0"), nullptr);
    ASSERT_NE(project::lastRun(q)->kernel("Add_2"), nullptr);
    EXPECT_EQ(project::lastRun(q)->kernel("Add_2")->bytes, 768);

    // Saved again unchanged, the bytes are the same (a stable format: diffs show real changes).
    const std::string first = readAll(file);
    ASSERT_TRUE(project::saveProject(q, file.string()).ok());
    EXPECT_EQ(readAll(file), first);
    // Derived options.
    auto co = project::compileOptionsFor(q);
    ASSERT_TRUE(co.ok()) << co.diagnostics().formatAll();
    EXPECT_EQ(co->target, tessera::lower::Target::Cuda);
    EXPECT_EQ(co->cpuThreads, 3);
    EXPECT_FALSE(co->fallbackReference);
    ASSERT_TRUE(co->plan.has_value());
    EXPECT_EQ(co->plan->groups.size(), 1u);
    EXPECT_EQ(project::runOptionsFor(q).cudaDevice, 1);
    EXPECT_DOUBLE_EQ(project::runOptionsFor(q).relTol, 2.5e-4);
}

TEST_F(ProjectFile, SourcePathIsRelativeToTheProjectFolderAndMovesWithIt) {
    const fs::path model = m_dir / "a" / "models" / "block.onnx";
    fs::create_directories(model.parent_path());
    fs::copy_file(sample("dw_pw_block.onnx"), model);
    auto p = project::newProject(model.string());
    ASSERT_TRUE(p.ok()) << p.diagnostics().formatAll();
    EXPECT_EQ(p->source.kind, project::SourceKind::Onnx);
    EXPECT_TRUE(p->source.programText.empty());
    EXPECT_EQ(p->source.contentHash, support::hashHex(readAll(model)));
    const fs::path file = m_dir / "a" / "projects" / "deep" / "block.tessera";
    fs::create_directories(file.parent_path());
    ASSERT_TRUE(project::saveProject(*p, file.string()).ok());
    EXPECT_EQ(nlohmann::json::parse(readAll(file))["source"]["path"], "../../models/block.onnx");
    EXPECT_EQ(project::relativeSourcePath(file.string(), model.string()), "../../models/block.onnx");
    EXPECT_EQ(project::resolveSourcePath(file.string(), "../../models/block.onnx"), model.lexically_normal().string());

    // Moving the whole tree keeps the project working.
    fs::rename(m_dir / "a", m_dir / "b");
    const fs::path moved = m_dir / "b" / "projects" / "deep" / "block.tessera";
    auto loaded = project::loadProject(moved.string());
    ASSERT_TRUE(loaded.ok()) << loaded.diagnostics().formatAll();
    EXPECT_EQ(loaded->project.source.path, (m_dir / "b" / "models" / "block.onnx").lexically_normal().string());
    EXPECT_FALSE(loaded->sourceMissing);
    auto model2 = project::loadProjectModel(loaded->project);
    ASSERT_TRUE(model2.ok()) << model2.diagnostics().formatAll();
    EXPECT_GT(model2->graph.numNodes(), 0u);
}

TEST_F(ProjectFile, CorruptJsonNamesLineAndColumnAndLeavesTheFile) {
    const fs::path file = m_dir / "bad.tessera";
    const std::string text = "{\n  \"format\": \"tessera-project\",\n  \"version\": 1,,\n}\n";
    writeAll(file, text);
    auto loaded = project::loadProject(file.string());
    ASSERT_FALSE(loaded.ok());
    const auto* e = loaded.diagnostics().firstError();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->file, file.string());
    EXPECT_EQ(e->begin.line, 3);
    EXPECT_EQ(e->begin.column, 16);
    EXPECT_NE(e->format().find(file.string() + ":3:16: error: not valid JSON"), std::string::npos) << e->format();
    EXPECT_EQ(readAll(file), text);

    // Truncated at the end: the position is the end of the text.
    writeAll(file, "{\"format\": \"tessera-project\",\n\"version\"");
    loaded = project::loadProject(file.string());
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.diagnostics().firstError()->begin.line, 2);
}

TEST_F(ProjectFile, ForeignFilesAndMissingKeysAreNamed) {
    const fs::path file = m_dir / "x.tessera";
    auto errorOf = [&](const std::string& text) {
        writeAll(file, text);
        auto loaded = project::loadProject(file.string());
        EXPECT_FALSE(loaded.ok());
        EXPECT_EQ(readAll(file), text);
        return loaded.ok() ? std::string() : loaded.diagnostics().firstError()->format();
    };
    EXPECT_NE(errorOf(R"({"version": 1})").find("missing required key 'format'"), std::string::npos);
    EXPECT_NE(errorOf(R"({"format": "tessera-fusion-plan", "version": 1})")
                  .find("key 'format' is \"tessera-fusion-plan\", expected \"tessera-project\""),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"format": "tessera-project"})").find("missing required key 'version'"), std::string::npos);
    EXPECT_NE(errorOf(R"({"format": "tessera-project", "version": 1})").find("missing required key 'source'"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"format": "tessera-project", "version": 1, "source": {"kind": "onnx"}})")
                  .find("missing required key 'source.path'"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"format": "tessera-project", "version": 1, "source": {"kind": "tf", "path": "m"}})")
                  .find("key 'source.kind' is \"tf\""),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"format": "tessera-project", "version": 1, "source": {"kind": "onnx", "path": "m"},
                          "runs": [{"time": "2026-01-01T00:00:00Z", "target": "cpu", "kernels": [{"name": "k"}]}]})")
                  .find("missing required key 'runs[0].kernels[0].median_s'"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"format": "tessera-project", "version": 1, "source": {"kind": "onnx", "path": "m"},
                          "options": {"threads": "two"}})")
                  .find("key 'options.threads' must be an integer"),
              std::string::npos);
    EXPECT_NE(errorOf("[1, 2]").find("top level must be a JSON object"), std::string::npos);
    auto missing = project::loadProject((m_dir / "nope.tessera").string());
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.diagnostics().firstError()->format().find("nope.tessera"), std::string::npos);
}

TEST_F(ProjectFile, NewerVersionOpensReadOnlyAndIsNotOverwritten) {
    const fs::path model = m_dir / "m.onnx";
    fs::copy_file(sample("dw_pw_block.onnx"), model);
    const fs::path file = m_dir / "future.tessera";
    const std::string text = R"({"format": "tessera-project", "version": 7,
        "source": {"kind": "onnx", "path": "m.onnx", "shards": ["a"]},
        "target": "cpu", "options": {"threads": 1}, "hologram": {"x": 1},
        "runs": [{"time": "2030-01-01T00:00:00Z", "target": "cpu", "total_s": 0.5, "kernels": []}]})";
    writeAll(file, text);
    auto loaded = project::loadProject(file.string());
    ASSERT_TRUE(loaded.ok()) << loaded.diagnostics().formatAll();
    EXPECT_TRUE(loaded->readOnly);
    EXPECT_EQ(loaded->fileVersion, 7);
    EXPECT_TRUE(hasWarning(loaded.diagnostics(), "project version 7 is newer than this Tessera's (2)"));
    EXPECT_TRUE(hasWarning(loaded.diagnostics(), "saving is disabled"));
    EXPECT_EQ(loaded->project.options.threads, 1);
    ASSERT_EQ(loaded->project.runs.size(), 1u);
    EXPECT_DOUBLE_EQ(loaded->project.runs[0].totalSeconds, 0.5);

    auto saved = project::saveProject(loaded->project, file.string());
    ASSERT_FALSE(saved.ok());
    EXPECT_NE(saved.diagnostics().firstError()->message.find("version 7"), std::string::npos);
    EXPECT_EQ(readAll(file), text);
    // Saving elsewhere (Save As) writes a project of this version.
    const fs::path other = m_dir / "now.tessera";
    ASSERT_TRUE(project::saveProject(loaded->project, other.string()).ok());
    auto again = project::loadProject(other.string());
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->readOnly);
}

TEST_F(ProjectFile, MissingAndChangedSourcesAreNoticed) {
    const fs::path model = m_dir / "models" / "m.onnx";
    fs::create_directories(model.parent_path());
    fs::copy_file(sample("dw_pw_block.onnx"), model);
    auto p = project::newProject(model.string());
    ASSERT_TRUE(p.ok());
    const fs::path file = m_dir / "p.tessera";
    ASSERT_TRUE(project::saveProject(*p, file.string()).ok());

    // Changed bytes: a warning, the project still loads.
    {
        std::ofstream out(model, std::ios::binary | std::ios::app);
        out << "x";
    }
    auto loaded = project::loadProject(file.string());
    ASSERT_TRUE(loaded.ok());
    EXPECT_TRUE(loaded->sourceChanged);
    EXPECT_TRUE(hasWarning(loaded.diagnostics(), "changed since the project was saved"));

    // Gone: a warning naming the path on load, an error naming it when the model is needed.
    fs::remove(model);
    loaded = project::loadProject(file.string());
    ASSERT_TRUE(loaded.ok());
    EXPECT_TRUE(loaded->sourceMissing);
    EXPECT_TRUE(hasWarning(loaded.diagnostics(), "source model '" + model.lexically_normal().string() + "' not found"));
    auto m = project::loadProjectModel(loaded->project);
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.diagnostics().firstError()->message.find("'" + model.lexically_normal().string() + "' not found"),
              std::string::npos)
        << m.diagnostics().formatAll();
    auto fresh = project::newProject(model.string());
    ASSERT_FALSE(fresh.ok());
    EXPECT_NE(fresh.diagnostics().firstError()->format().find(model.string()), std::string::npos);
}

TEST_F(ProjectFile, DslProjectRunsItsOwnProgramText) {
    const fs::path src = m_dir / "prog.tsr";
    fs::copy_file(sample("matmul_tiled.tsr"), src);
    auto p = project::newProject(src.string());
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->source.kind, project::SourceKind::Dsl);
    EXPECT_EQ(p->source.programText, readAll(src));
    // The file is broken afterwards; the project's text is what loads.
    writeAll(src, "this is not a program");
    auto m = project::loadProjectModel(*p);
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    EXPECT_EQ(m->sourcePath, src.string());
    p->source.programText = "tensor x: f32[4]\nbroken(";
    m = project::loadProjectModel(*p);
    EXPECT_FALSE(m.ok());
}

TEST_F(ProjectFile, BadTargetAndHardwareAreErrors) {
    project::Project p;
    p.target = "tpu";
    auto co = project::compileOptionsFor(p);
    ASSERT_FALSE(co.ok());
    EXPECT_NE(co.diagnostics().firstError()->message.find("target 'tpu'"), std::string::npos);
    p.target = "cpu";
    p.hardware.name = "no-such-gpu";
    EXPECT_FALSE(project::compileOptionsFor(p).ok());
    p.hardware.name = "host";
    co = project::compileOptionsFor(p);
    ASSERT_TRUE(co.ok()) << co.diagnostics().formatAll();
    EXPECT_EQ(co->hardware.name, "host");
    p.planner = "hidet";
    EXPECT_EQ(project::compileOptionsFor(p)->planner, "hidet");
}

TEST_F(ProjectFile, RunRecordFromARealCpuRun) {
    if (std::system("c++ --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no host C++ compiler (c++)";
    auto p = project::newProject(sample("dw_pw_block.onnx"));
    ASSERT_TRUE(p.ok());
    p->planner = "hidet";
    p->options.threads = 1;
    auto model = project::loadProjectModel(*p);
    ASSERT_TRUE(model.ok()) << model.diagnostics().formatAll();
    auto co = project::compileOptionsFor(*p);
    ASSERT_TRUE(co.ok());
    const auto inputs = pipeline::defaultInputs(model->graph);
    auto cm = pipeline::compileModel(*model, inputs, *co);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    runtime::RunnerClientOptions ro;
    ro.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    ro.threads = 1;
    runtime::RunnerClient runner(ro);
    auto opts = project::runOptionsFor(*p);
    opts.minReps = opts.maxReps = 3;
    opts.minSeconds = 0;
    auto rep = pipeline::runModel(*cm, inputs, opts, runner);
    ASSERT_TRUE(rep.ok()) << rep.diagnostics().formatAll();

    const project::RunRecord r = project::makeRunRecord(*rep, cm->plan, p->target);
    EXPECT_EQ(r.target, "cpu");
    EXPECT_EQ(r.fingerprint, tessera::perf::cpuFingerprint());
    EXPECT_EQ(r.fingerprint, project::currentFingerprint("cpu"));
    EXPECT_EQ(r.fingerprint.rfind(r.device, 0), 0u);
    EXPECT_FALSE(r.device.empty());
    EXPECT_EQ(r.planner, "hidet");
    EXPECT_EQ(r.planHash, project::planHash(cm->plan));
    EXPECT_EQ(r.planHash.size(), 16u);
    EXPECT_EQ(r.time.size(), 20u);
    EXPECT_EQ(r.time.back(), 'Z');
    EXPECT_EQ(r.threads, 1);
    EXPECT_TRUE(r.checked);
    EXPECT_TRUE(r.allPassed);
    EXPECT_GT(r.totalSeconds, 0);
    ASSERT_EQ(r.kernels.size(), rep->kernels.size());
    ASSERT_GE(r.kernels.size(), 2u);
    for (std::size_t i = 0; i < r.kernels.size(); ++i) {
        const auto& k = r.kernels[i];
        const auto& kr = rep->kernels[i];
        EXPECT_EQ(k.name, kr.name);
        EXPECT_EQ(k.nodes, kr.ops);
        EXPECT_EQ(k.medianSeconds, kr.time.median);
        EXPECT_GT(k.medianSeconds, 0);
        EXPECT_EQ(k.bytes, kr.bytes);
        EXPECT_GT(k.flops, 0);
        if (kr.reference) continue;
        EXPECT_TRUE(k.checked) << k.name;
        EXPECT_GE(k.maxRelError, 0);
        EXPECT_LT(k.maxRelError, 1e-4) << k.name;
    }
    // Hidet fuses each Conv with its Clip: a kernel covers two nodes.
    EXPECT_TRUE(std::any_of(r.kernels.begin(), r.kernels.end(), [](const auto& k) { return k.nodes.size() == 2; }));

    p->runs.push_back(r);
    const fs::path file = m_dir / "run.tessera";
    ASSERT_TRUE(project::saveProject(*p, file.string()).ok());
    auto loaded = project::loadProject(file.string());
    ASSERT_TRUE(loaded.ok()) << loaded.diagnostics().formatAll();
    ASSERT_EQ(loaded->project.runs.size(), 1u);
    EXPECT_EQ(loaded->project.runs[0], r);
}

}  // namespace

TEST_F(ProjectFile, VersionOneProjectWithoutSchedulesStillOpens) {
    const fs::path model = m_dir / "m.onnx";
    fs::copy_file(sample("dw_pw_block.onnx"), model);
    const fs::path file = m_dir / "old.tessera";
    writeAll(file, R"J({"format": "tessera-project", "version": 1,
        "source": {"kind": "onnx", "path": "m.onnx"}, "planner": "none", "plan": null, "target": "cpu",
        "options": {"threads": 1}, "mappings": [{"node": "", "grid": "spatial(4)", "block": ""}], "runs": []})J");
    auto loaded = project::loadProject(file.string());
    ASSERT_TRUE(loaded.ok()) << loaded.diagnostics().formatAll();
    EXPECT_TRUE(loaded.diagnostics().empty()) << loaded.diagnostics().formatAll();
    EXPECT_FALSE(loaded->readOnly);
    EXPECT_EQ(loaded->fileVersion, 1);
    EXPECT_TRUE(loaded->project.schedules.empty());
    ASSERT_EQ(loaded->project.mappings.size(), 1u);
    auto opts = project::compileOptionsFor(loaded->project);
    ASSERT_TRUE(opts.ok());
    EXPECT_TRUE(opts->schedules.empty());
    // Saved again it becomes a version-2 project with an empty "schedules".
    ASSERT_TRUE(project::saveProject(loaded->project, file.string()).ok());
    const auto raw = nlohmann::json::parse(readAll(file));
    EXPECT_EQ(raw["version"], 2);
    EXPECT_EQ(raw["schedules"], nlohmann::json::array());
}

// A run's "unreliable timings" warning is recorded from the report, saved and read back; a run
// written before the key existed reads as reliable.
TEST_F(ProjectFile, UnreliableTimingsSurviveSaveAndLoadAndOldRunsAreReliable) {
    pipeline::RunReport rep;
    rep.threads = 4;
    rep.warnings.warning("m.onnx", "fusion plan", "not about timing");
    const std::string why = "other processes used 37% of the CPUs' time while the kernels were timed: the times are "
                            "likely inflated; rerun on a quiet machine, or with fewer threads than idle cores "
                            "(--threads 1)";
    rep.warnings.warning("m.onnx", "timing", why);
    const project::RunRecord r = project::makeRunRecord(rep, schedule::FusionPlan{}, "cpu");
    EXPECT_EQ(r.timingWarning, why);
    pipeline::RunReport quiet;
    quiet.warnings.warning("m.onnx", "fusion plan", "not about timing");
    EXPECT_EQ(project::makeRunRecord(quiet, schedule::FusionPlan{}, "cpu").timingWarning, "");
    EXPECT_EQ(nlohmann::json::parse(project::runRecordToJson(r))["timing_warning"], why);
    EXPECT_FALSE(nlohmann::json::parse(project::runRecordToJson(project::makeRunRecord(quiet, {}, "cpu")))
                     .contains("timing_warning"));

    const fs::path model = m_dir / "m.onnx";
    fs::copy_file(sample("dw_pw_block.onnx"), model);
    auto p = project::newProject(model.string());
    ASSERT_TRUE(p.ok());
    p->runs.push_back(r);
    const fs::path file = m_dir / "t.tessera";
    ASSERT_TRUE(project::saveProject(*p, file.string()).ok());
    auto loaded = project::loadProject(file.string());
    ASSERT_TRUE(loaded.ok()) << loaded.diagnostics().formatAll();
    ASSERT_EQ(loaded->project.runs.size(), 1u);
    EXPECT_EQ(loaded->project.runs[0].timingWarning, why);
    EXPECT_EQ(loaded->project.runs[0], r);

    // A run saved before "timing_warning" existed.
    const fs::path old = m_dir / "old.tessera";
    writeAll(old, R"J({"format": "tessera-project", "version": 2,
        "source": {"kind": "onnx", "path": "m.onnx"}, "planner": "none", "plan": null, "target": "cpu",
        "runs": [{"time": "2026-01-05T10:11:12Z", "target": "cpu", "threads": 2, "total_s": 0.001,
                  "kernels": [{"name": "Conv_0", "median_s": 1e-5}]}]})J");
    auto before = project::loadProject(old.string());
    ASSERT_TRUE(before.ok()) << before.diagnostics().formatAll();
    ASSERT_EQ(before->project.runs.size(), 1u);
    EXPECT_EQ(before->project.runs[0].timingWarning, "");
}

TEST_F(ProjectFile, SchedulesReachTheCompileAndTheGeneratedCode) {
    const fs::path model = m_dir / "m.onnx";
    fs::copy_file(sample("dw_pw_block.onnx"), model);
    auto p = project::newProject(model.string());
    ASSERT_TRUE(p.ok());
    p->planner = "none";
    p->schedules.push_back({"dw_conv", "spatial(1,4,2,2).repeat(1,8,28,28)", ""});
    const fs::path file = m_dir / "s.tessera";
    ASSERT_TRUE(project::saveProject(*p, file.string()).ok());
    auto loaded = project::loadProject(file.string());
    ASSERT_TRUE(loaded.ok()) << loaded.diagnostics().formatAll();
    ASSERT_EQ(loaded->project.schedules.size(), 1u);
    auto opts = project::compileOptionsFor(loaded->project);
    ASSERT_TRUE(opts.ok()) << opts.diagnostics().formatAll();
    ASSERT_EQ(opts->schedules.size(), 1u);
    EXPECT_EQ(opts->schedules[0].subject, "dw_conv");
    auto m = project::loadProjectModel(loaded->project);
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    auto cm = pipeline::compileModel(*m, pipeline::defaultInputs(m->graph), *opts);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    EXPECT_NE(cm->code.source.find("//   mapping: grid = spatial(1,4,2,2).repeat(1,8,28,28)"), std::string::npos);

    // A schedule entry without its node is an error naming the key.
    writeAll(file, R"J({"format": "tessera-project", "version": 2, "source": {"kind": "onnx", "path": "m.onnx"},
        "schedules": [{"grid": "spatial(4)"}]})J");
    auto bad = project::loadProject(file.string());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.diagnostics().formatAll().find("schedules[0]"), std::string::npos) << bad.diagnostics().formatAll();
}
