// GPU hardware profiles for fusion planning (issue 6): built-in table, JSON form, lookup, checks.
#include "core/target/gpu_profile.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace tessera::target {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr const char* kFormat = "tessera-gpu-profile";
constexpr int kVersion = 1;

GpuProfile make(std::string name, std::string display, int sms, std::int64_t l1KiB, std::int64_t sharedKiB,
                std::int64_t l2KiB, double dram, double fp32, std::string source) {
    GpuProfile p;
    p.name = std::move(name);
    p.displayName = std::move(display);
    p.sms = sms;
    p.warpSize = 32;
    p.l1Bytes = l1KiB * kKiB;
    p.sharedBytes = sharedKiB * kKiB;
    p.l2Bytes = l2KiB * kKiB;
    p.dramGBs = dram;
    p.fp32Gflops = fp32;
    p.source = std::move(source);
    return p;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

support::DiagnosticList oneError(const std::string& file, const std::string& where, const std::string& message) {
    support::DiagnosticList d;
    d.error(file, where, message);
    return d;
}

}  // namespace

const std::vector<GpuProfile>& builtinGpuProfiles() {
    static const std::vector<GpuProfile> kProfiles = {
        make("h200", "NVIDIA H200 SXM (141 GB)", 132, 256, 227, 60 * 1024, 4032, 63200,
             "SMs/L1/shared/L2: CUDA device properties of the lent H200 (device-notes.md); DRAM 4032 GB/s "
             "(HBM copy) and FP32 63200 GFLOP/s (FMA chains) measured by Tessera on that H200 "
             "(bench/RESULTS.md, issue 7); data sheet: 4.8 TB/s, ~67 TFLOP/s"),
        make("h100", "NVIDIA H100 SXM5 (80 GB)", 132, 256, 227, 50 * 1024, 3350, 67000,
             "NVIDIA H100 data sheet and Hopper tuning guide (SXM5: 132 SMs, 256 KiB L1/shared per SM, 227 KiB "
             "shared per block opt-in, 50 MiB L2, 3.35 TB/s HBM3, 67 TFLOP/s FP32)"),
        make("a100", "NVIDIA A100 SXM4 (80 GB)", 108, 192, 163, 40 * 1024, 2039, 19500,
             "NVIDIA A100 data sheet and Ampere tuning guide (SXM4 80 GB: 108 SMs, 192 KiB L1/shared per SM, "
             "163 KiB shared per block opt-in, 40 MiB L2, 2039 GB/s HBM2e (the 40 GB card has 1555 GB/s), "
             "19.5 TFLOP/s FP32)"),
        make("rtx-a4000", "NVIDIA RTX A4000 (16 GB)", 48, 128, 100, 4 * 1024, 448, 19200,
             "L1 128 KiB and shared 100 KiB from FusePlanner's hw_configs/rtxa4000.cfg; SMs 48 from the NVIDIA "
             "RTX A4000 data sheet (6144 CUDA cores / 128 per SM) - FusePlanner's config says 96 SMs, which "
             "does not match the card; L2 4 MiB, 448 GB/s GDDR6, 19.2 TFLOP/s FP32 (data sheet)"),
        make("gtx-1660", "NVIDIA GeForce GTX 1660 (6 GB)", 22, 96, 64, 1536, 192, 5000,
             "SMs 22, L1 96 KiB, shared 64 KiB from FusePlanner's hw_configs/gtx1660.cfg (agrees with the "
             "Turing TU116 data); L2 1.5 MiB, 192 GB/s GDDR5, ~5.0 TFLOP/s FP32 boost (data sheet)"),
        make("jetson-orin", "NVIDIA Jetson AGX Orin (64 GB)", 16, 192, 164, 4 * 1024, 204.8, 5300,
             "SMs 16, L1 192 KiB, shared 164 KiB from FusePlanner's hw_configs/orin.cfg (Ampere GA10B); L2 4 MiB, "
             "204.8 GB/s LPDDR5, ~5.3 TFLOP/s FP32 (Jetson AGX Orin 64 GB data sheet)"),
    };
    return kProfiles;
}

std::vector<std::string> builtinGpuProfileNames() {
    std::vector<std::string> names;
    for (const GpuProfile& p : builtinGpuProfiles()) names.push_back(p.name);
    return names;
}

std::string validateGpuProfile(const GpuProfile& p) {
    if (p.name.empty()) return "name is empty";
    if (p.sms < 1) return "sms must be >= 1 (got " + std::to_string(p.sms) + ")";
    if (p.warpSize < 1) return "warp_size must be >= 1 (got " + std::to_string(p.warpSize) + ")";
    if (p.sharedBytes < 1) return "shared_kib must be > 0";
    if (p.l1Bytes < p.sharedBytes)
        return "l1_kib (" + std::to_string(p.l1Bytes / kKiB) + ") must be >= shared_kib (" +
               std::to_string(p.sharedBytes / kKiB) + ")";
    if (p.l2Bytes < 0) return "l2_kib must be >= 0";
    if (p.dramGBs < 0) return "dram_gbs must be >= 0";
    if (p.fp32Gflops < 0) return "fp32_gflops must be >= 0";
    return {};
}

std::string gpuProfileToJson(const GpuProfile& p) {
    nlohmann::ordered_json j;
    j["format"] = kFormat;
    j["version"] = kVersion;
    j["name"] = p.name;
    j["display_name"] = p.displayName;
    j["sms"] = p.sms;
    j["warp_size"] = p.warpSize;
    j["l1_kib"] = static_cast<double>(p.l1Bytes) / kKiB;
    j["shared_kib"] = static_cast<double>(p.sharedBytes) / kKiB;
    j["l2_kib"] = static_cast<double>(p.l2Bytes) / kKiB;
    // Whole KiB print as integers.
    for (const char* key : {"l1_kib", "shared_kib", "l2_kib"}) {
        double v = j[key].get<double>();
        if (v == static_cast<double>(static_cast<std::int64_t>(v))) j[key] = static_cast<std::int64_t>(v);
    }
    j["dram_gbs"] = p.dramGBs;
    j["fp32_gflops"] = p.fp32Gflops;
    j["source"] = p.source;
    return j.dump(2) + "\n";
}

support::Expected<GpuProfile> gpuProfileFromJson(const std::string& text, const std::string& file) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return oneError(file, "", "GPU profile: not valid JSON");
    if (!j.is_object()) return oneError(file, "", "GPU profile: the top level must be a JSON object");
    if (j.contains("format") && (!j["format"].is_string() || j["format"].get<std::string>() != kFormat))
        return oneError(file, "field 'format'", std::string("GPU profile: format must be \"") + kFormat + "\"");
    if (j.contains("version")) {
        if (!j["version"].is_number_integer()) return oneError(file, "field 'version'", "GPU profile: version must be an integer");
        if (j["version"].get<int>() > kVersion)
            return oneError(file, "field 'version'",
                            "GPU profile: version " + std::to_string(j["version"].get<int>()) +
                                " is newer than this Tessera reads (" + std::to_string(kVersion) + ")");
    }
    GpuProfile p;
    auto str = [&](const char* key, std::string& out, bool required) -> std::string {
        if (!j.contains(key)) return required ? std::string("missing field '") + key + "'" : std::string();
        if (!j[key].is_string()) return std::string("field '") + key + "' must be a string";
        out = j[key].get<std::string>();
        return {};
    };
    auto num = [&](const char* key, double& out, bool required) -> std::string {
        if (!j.contains(key)) return required ? std::string("missing field '") + key + "'" : std::string();
        if (!j[key].is_number()) return std::string("field '") + key + "' must be a number";
        out = j[key].get<double>();
        return {};
    };
    double sms = 0, warp = 32, l1 = 0, shared = 0, l2 = 0;
    std::string err;
    struct Field {
        const char* key;
        std::string err;
    };
    for (const Field& f : {Field{"name", str("name", p.name, true)}, Field{"display_name", str("display_name", p.displayName, false)},
                           Field{"sms", num("sms", sms, true)}, Field{"warp_size", num("warp_size", warp, false)},
                           Field{"l1_kib", num("l1_kib", l1, true)}, Field{"shared_kib", num("shared_kib", shared, true)},
                           Field{"l2_kib", num("l2_kib", l2, false)}, Field{"dram_gbs", num("dram_gbs", p.dramGBs, false)},
                           Field{"fp32_gflops", num("fp32_gflops", p.fp32Gflops, false)},
                           Field{"source", str("source", p.source, false)}}) {
        if (!f.err.empty()) return oneError(file, std::string("field '") + f.key + "'", "GPU profile: " + f.err);
    }
    if (sms != static_cast<double>(static_cast<int>(sms)))
        return oneError(file, "field 'sms'", "GPU profile: field 'sms' must be a whole number");
    if (warp != static_cast<double>(static_cast<int>(warp)))
        return oneError(file, "field 'warp_size'", "GPU profile: field 'warp_size' must be a whole number");
    p.sms = static_cast<int>(sms);
    p.warpSize = static_cast<int>(warp);
    p.l1Bytes = static_cast<std::int64_t>(l1 * kKiB);
    p.sharedBytes = static_cast<std::int64_t>(shared * kKiB);
    p.l2Bytes = static_cast<std::int64_t>(l2 * kKiB);
    if (std::string why = validateGpuProfile(p); !why.empty()) return oneError(file, "profile '" + p.name + "'", "GPU profile: " + why);
    return p;
}

support::Expected<GpuProfile> findGpuProfile(const std::string& nameOrFile) {
    std::error_code ec;
    const bool looksLikeFile = (nameOrFile.size() > 5 && lower(nameOrFile.substr(nameOrFile.size() - 5)) == ".json") ||
                               std::filesystem::is_regular_file(nameOrFile, ec);
    if (!looksLikeFile) {
        const std::string key = lower(nameOrFile);
        for (const GpuProfile& p : builtinGpuProfiles())
            if (p.name == key) return p;
        std::string known;
        for (const std::string& n : builtinGpuProfileNames()) known += (known.empty() ? "" : ", ") + n;
        return oneError("", "", "unknown GPU profile '" + nameOrFile + "' (known: " + known + "; or a .json profile file)");
    }
    std::ifstream in(nameOrFile, std::ios::binary);
    if (!in) return oneError(nameOrFile, "", "cannot read GPU profile file");
    std::ostringstream ss;
    ss << in.rdbuf();
    return gpuProfileFromJson(ss.str(), nameOrFile);
}

}  // namespace tessera::target
