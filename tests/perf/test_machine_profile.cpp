// Machine profiles: JSON format, round trip, every validation error, files and lookup, fingerprint.

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "core/perf/machine_profile.h"

using namespace tessera::perf;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

MachineProfile sampleProfile() {
    MachineProfile p;
    p.fingerprint = "Test CPU 9000 | 16 logical CPUs | L1d 48 KiB, L2 2048 KiB";
    p.target = "cpu";
    p.description = "lab box";
    p.measuredAt = "2026-11-30T03:34:19Z";
    p.roofs = {bandwidthRoof("L1 bandwidth", "L1", 1234.5, 16, "load/store sweep 24 KiB"),
               bandwidthRoof("DRAM bandwidth", "DRAM", 61.25, 16, "triad sweep 64 MiB"),
               computeRoof("FP32 FMA peak", "fp32", 2100.0, 16, "FMA chain")};
    return p;
}

json sampleJson() { return profileToJson(sampleProfile()); }

/// Messages of the errors only.
std::vector<std::string> errors(const tessera::support::DiagnosticList& d) {
    std::vector<std::string> out;
    for (const auto& i : d.items())
        if (i.severity == tessera::support::Severity::Error) out.push_back(i.where + ": " + i.message);
    return out;
}

std::vector<std::string> errorsOf(const json& j) {
    auto r = profileFromJson(j, "p.json");
    EXPECT_FALSE(r.ok());
    return errors(r.diagnostics());
}

/// A fresh empty directory under the build tree, removed at the end of the test.
struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& name) {
        path = fs::path(TESSERA_BINARY_DIR) / "tests_tmp" / (name + "-" + std::to_string(::getpid()));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

/// Sets or unsets an environment variable for the scope, restoring it afterwards.
struct EnvGuard {
    std::string name;
    std::optional<std::string> old;
    EnvGuard(std::string n, const char* value) : name(std::move(n)) {
        if (const char* v = std::getenv(name.c_str())) old = v;
        if (value) ::setenv(name.c_str(), value, 1);
        else ::unsetenv(name.c_str());
    }
    ~EnvGuard() {
        if (old) ::setenv(name.c_str(), old->c_str(), 1);
        else ::unsetenv(name.c_str());
    }
};

}  // namespace

TEST(MachineProfile, JsonLayout) {
    const json j = sampleJson();
    EXPECT_EQ(j["version"], 1);
    EXPECT_EQ(j["target"], "cpu");
    EXPECT_EQ(j["measured_at"], "2026-11-30T03:34:19Z");
    ASSERT_TRUE(j["roofs"].is_array());
    ASSERT_EQ(j["roofs"].size(), 3u);
    const json expectedBandwidth = {{"name", "L1 bandwidth"}, {"kind", "bandwidth"}, {"level", "L1"},
                                    {"value", 1234.5},        {"unit", "GB/s"},      {"threads", 16},
                                    {"method", "load/store sweep 24 KiB"}};
    EXPECT_EQ(j["roofs"][0], expectedBandwidth);
    const json expectedCompute = {{"name", "FP32 FMA peak"}, {"kind", "compute"}, {"precision", "fp32"},
                                  {"value", 2100.0},         {"unit", "GFLOP/s"}, {"threads", 16},
                                  {"method", "FMA chain"}};
    EXPECT_EQ(j["roofs"][2], expectedCompute);
}

TEST(MachineProfile, RoundTripThroughText) {
    const MachineProfile p = sampleProfile();
    auto back = parseProfile(profileToString(p), "mem.json");
    ASSERT_TRUE(back.ok()) << back.diagnostics().formatAll();
    EXPECT_TRUE(back.diagnostics().empty());
    EXPECT_EQ(back->version, 1);
    EXPECT_EQ(back->fingerprint, p.fingerprint);
    EXPECT_EQ(back->target, p.target);
    EXPECT_EQ(back->description, p.description);
    EXPECT_EQ(back->measuredAt, p.measuredAt);
    ASSERT_EQ(back->roofs.size(), p.roofs.size());
    for (std::size_t i = 0; i < p.roofs.size(); ++i) {
        const Roof& a = p.roofs[i];
        const Roof& b = back->roofs[i];
        EXPECT_EQ(a.name, b.name);
        EXPECT_EQ(a.kind, b.kind);
        EXPECT_EQ(a.level, b.level);
        EXPECT_EQ(a.value, b.value);
        EXPECT_EQ(a.unit, b.unit);
        EXPECT_EQ(a.threads, b.threads);
        EXPECT_EQ(a.precision, b.precision);
        EXPECT_EQ(a.method, b.method);
    }
    // The text is stable: writing the read-back profile gives the same bytes.
    EXPECT_EQ(profileToString(*back), profileToString(p));
}

TEST(MachineProfile, VersionErrors) {
    json j = sampleJson();
    j.erase("version");
    EXPECT_EQ(errorsOf(j), std::vector<std::string>{"profile: missing field 'version'"});
    j["version"] = 2;
    EXPECT_EQ(errorsOf(j), std::vector<std::string>{"profile: unknown profile version 2 (this Tessera reads version 1)"});
    j["version"] = "1";
    EXPECT_EQ(errorsOf(j), std::vector<std::string>{"profile: field 'version' must be an integer, not string"});
}

TEST(MachineProfile, MissingAndMistypedTopLevelFields) {
    json j = sampleJson();
    j.erase("fingerprint");
    j.erase("roofs");
    j["target"] = 3;
    EXPECT_EQ(errorsOf(j), (std::vector<std::string>{"profile: missing field 'fingerprint'",
                                                     "profile: field 'target' must be a string, not number",
                                                     "profile: missing field 'roofs'"}));
    json k = sampleJson();
    k.erase("measured_at");
    k["roofs"] = json::object();
    EXPECT_EQ(errorsOf(k), (std::vector<std::string>{"profile: missing field 'measured_at'",
                                                     "profile: field 'roofs' must be an array, not object"}));
    json t = sampleJson();
    t["measured_at"] = "2026-11-30 03:34:19";
    EXPECT_EQ(errorsOf(t), std::vector<std::string>{
                               "profile: measured_at '2026-11-30 03:34:19' is not ISO 8601 UTC (YYYY-MM-DDTHH:MM:SSZ)"});
    EXPECT_EQ(errorsOf(json::array()), std::vector<std::string>{"profile: a machine profile must be a JSON object, not array"});
}

TEST(MachineProfile, RoofErrors) {
    json j = sampleJson();
    j["roofs"][0]["unit"] = "MB/s";
    j["roofs"][1]["kind"] = "memory";
    j["roofs"][2]["unit"] = "GB/s";
    EXPECT_EQ(errorsOf(j), (std::vector<std::string>{
                               "roofs[0] 'L1 bandwidth': unit 'MB/s' is wrong for a bandwidth roof (expected GB/s)",
                               "roofs[1] 'DRAM bandwidth': unknown kind 'memory' (expected \"bandwidth\" or \"compute\")",
                               "roofs[2] 'FP32 FMA peak': unit 'GB/s' is wrong for a compute roof (expected GFLOP/s)"}));

    json k = sampleJson();
    k["roofs"][0]["value"] = -1.0;
    k["roofs"][1]["threads"] = 0;
    k["roofs"][2].erase("precision");
    EXPECT_EQ(errorsOf(k), (std::vector<std::string>{"roofs[0] 'L1 bandwidth': value must be a positive number",
                                                     "roofs[1] 'DRAM bandwidth': threads must be >= 1",
                                                     "roofs[2] 'FP32 FMA peak': missing field 'precision'"}));

    json m = sampleJson();
    m["roofs"][0].erase("level");
    m["roofs"][1].erase("name");
    m["roofs"][1].erase("unit");
    m["roofs"][2]["value"] = "fast";
    m["roofs"].push_back(5);
    EXPECT_EQ(errorsOf(m), (std::vector<std::string>{"roofs[0] 'L1 bandwidth': missing field 'level'",
                                                     "roofs[1]: missing field 'name'",
                                                     "roofs[1]: missing field 'unit'",
                                                     "roofs[2] 'FP32 FMA peak': field 'value' must be a number, not string",
                                                     "roofs[3]: a roof must be an object, not number"}));
}

TEST(MachineProfile, UnknownLevelAndPrecisionAreWarnings) {
    json j = sampleJson();
    j["roofs"][0]["level"] = "L4";
    j["roofs"][2]["precision"] = "fp8";
    auto r = profileFromJson(j);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    ASSERT_EQ(r.diagnostics().items().size(), 2u);
    EXPECT_EQ(r.diagnostics().items()[0].severity, tessera::support::Severity::Warning);
    EXPECT_EQ(r.diagnostics().items()[1].message, "unknown precision 'fp8' (known: fp32, fp64, fp16, bf16, tf32)");
    EXPECT_EQ(r->roofs.size(), 3u);
}

TEST(MachineProfile, SyntaxErrorIsADiagnostic) {
    auto r = parseProfile("{\"version\": 1,", "broken.json");
    ASSERT_FALSE(r.ok());
    const auto* e = r.diagnostics().firstError();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->file, "broken.json");
    EXPECT_EQ(e->message.rfind("not valid JSON: ", 0), 0u) << e->message;
}

TEST(MachineProfile, SaveLoadAndFind) {
    TempDir dir("perf-profiles");
    const MachineProfile cpu = sampleProfile();
    MachineProfile gpu = sampleProfile();
    gpu.target = "cuda:0";
    gpu.roofs = {bandwidthRoof("HBM", "HBM", 4000.0), computeRoof("FP16 tensor", "fp16", 900000.0)};

    auto cpuPath = saveProfile(cpu, dir.path.string());
    ASSERT_TRUE(cpuPath.ok()) << cpuPath.diagnostics().formatAll();
    auto gpuPath = saveProfile(gpu, dir.path.string());
    ASSERT_TRUE(gpuPath.ok()) << gpuPath.diagnostics().formatAll();
    EXPECT_EQ(fs::path(*cpuPath).filename().string(), profileFileName(cpu));
    EXPECT_EQ(profileFileName(cpu).rfind("cpu-", 0), 0u);
    EXPECT_EQ(profileFileName(gpu).rfind("cuda_0-", 0), 0u);
    EXPECT_EQ(profileFileName(cpu).size(), std::string("cpu-").size() + 16 + std::string(".json").size());

    auto loaded = loadProfile(*cpuPath);
    ASSERT_TRUE(loaded.ok()) << loaded.diagnostics().formatAll();
    EXPECT_EQ(profileToString(*loaded), profileToString(cpu));

    // A newer profile of the same machine and target under another name wins; a broken file is skipped.
    MachineProfile newer = cpu;
    newer.measuredAt = "2026-12-01T00:00:00Z";
    newer.description = "newer";
    { std::ofstream(dir.path / "manual.json") << profileToString(newer); }
    { std::ofstream(dir.path / "broken.json") << "{ not json"; }
    { std::ofstream(dir.path / "notes.txt") << "ignored"; }

    tessera::support::DiagnosticList skipped;
    auto found = findProfileFor(cpu.fingerprint, dir.path.string(), "cpu", &skipped);
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->description, "newer");
    ASSERT_EQ(skipped.items().size(), 1u);
    EXPECT_EQ(skipped.items()[0].severity, tessera::support::Severity::Warning);
    EXPECT_EQ(fs::path(skipped.items()[0].file).filename().string(), "broken.json");

    auto foundGpu = findProfileFor(cpu.fingerprint, dir.path.string(), "cuda:0");
    ASSERT_TRUE(foundGpu.has_value());
    EXPECT_EQ(foundGpu->roofs.size(), 2u);
    EXPECT_FALSE(findProfileFor("another machine", dir.path.string()).has_value());
    EXPECT_FALSE(findProfileFor(cpu.fingerprint, (dir.path / "missing").string()).has_value());

    auto missing = loadProfile((dir.path / "missing.json").string());
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.diagnostics().firstError()->message, "cannot open the file");
}

TEST(MachineProfile, SaveRefusesAnInvalidProfile) {
    TempDir dir("perf-invalid");
    MachineProfile p = sampleProfile();
    p.roofs[0].unit = "MB/s";
    auto r = saveProfile(p, dir.path.string());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().firstError()->message, "unit 'MB/s' is wrong for a bandwidth roof (expected GB/s)");
    EXPECT_TRUE(fs::is_empty(dir.path));
}

TEST(MachineProfile, DefaultProfileDir) {
    {
        EnvGuard xdg("XDG_CONFIG_HOME", "/x/cfg");
        EnvGuard home("HOME", "/home/u");
        EXPECT_EQ(defaultProfileDir(), "/x/cfg/tessera/profiles");
    }
    {
        EnvGuard xdg("XDG_CONFIG_HOME", "relative/cfg");  // not absolute: ignored per the XDG spec
        EnvGuard home("HOME", "/home/u");
        EXPECT_EQ(defaultProfileDir(), "/home/u/.config/tessera/profiles");
    }
    {
        EnvGuard xdg("XDG_CONFIG_HOME", nullptr);
        EnvGuard home("HOME", nullptr);
        EXPECT_EQ(defaultProfileDir(), "");
    }
}

TEST(MachineProfile, FingerprintAndTimestamp) {
    const std::string a = cpuFingerprint();
    const std::string b = cpuFingerprint();
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, b);
    EXPECT_NE(a.find(" logical CPUs"), std::string::npos) << a;
    EXPECT_EQ(a.find("MHz"), std::string::npos) << a;

    MachineProfile p = sampleProfile();
    p.measuredAt = isoUtcNow();
    EXPECT_EQ(p.measuredAt.size(), 20u);
    auto r = profileFromJson(profileToJson(p));
    EXPECT_TRUE(r.ok()) << r.diagnostics().formatAll();
}

TEST(MachineProfile, FindForMachineFallsBackToTheSameModelOnly) {
    TempDir dir("perf-profiles-model");
    MachineProfile old = sampleProfile();
    old.fingerprint = "Intel(R) Xeon(R) Test CPU | 2 logical CPUs | L1d 48 KiB, L2 2048 KiB, L3 393216 KiB";
    old.measuredAt = "2026-11-29T10:00:00Z";
    ASSERT_TRUE(saveProfile(old, dir.path.string()).ok());
    MachineProfile other = old;
    other.fingerprint = "AMD Test CPU | 2 logical CPUs | L1d 32 KiB";
    other.measuredAt = "2026-11-30T10:00:00Z";
    ASSERT_TRUE(saveProfile(other, dir.path.string()).ok());

    // The cache field changed (sysfs instead of sysconf): the same model and CPU count still match.
    const std::string now = "Intel(R) Xeon(R) Test CPU | 2 logical CPUs | L1d 48 KiB, L2 2048 KiB, L3 107520 KiB";
    bool approximate = false;
    auto found = findProfileForMachine(now, dir.path.string(), "cpu", &approximate);
    ASSERT_TRUE(found.has_value());
    EXPECT_TRUE(approximate);
    EXPECT_EQ(found->fingerprint, old.fingerprint);
    // An exact match is not approximate.
    found = findProfileForMachine(old.fingerprint, dir.path.string(), "cpu", &approximate);
    ASSERT_TRUE(found.has_value());
    EXPECT_FALSE(approximate);
    // Another CPU count or another model does not match.
    EXPECT_FALSE(findProfileForMachine("Intel(R) Xeon(R) Test CPU | 4 logical CPUs | L1d 48 KiB", dir.path.string(),
                                       "cpu", &approximate)
                     .has_value());
    EXPECT_FALSE(findProfileForMachine("Intel(R) Xeon(R) Test CPU | 2 logical CPUs", dir.path.string(), "cuda:0",
                                       &approximate)
                     .has_value());
}
