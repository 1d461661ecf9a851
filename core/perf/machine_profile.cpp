#include "core/perf/machine_profile.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/support/hash.h"

namespace tessera::perf {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* jsonTypeName(const json& j) { return j.type_name(); }

bool isIsoUtc(const std::string& s) {
    // YYYY-MM-DDTHH:MM:SSZ, digits where digits belong.
    static constexpr char kPattern[] = "dddd-dd-ddTdd:dd:ddZ";
    if (s.size() != sizeof kPattern - 1) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (kPattern[i] == 'd') {
            if (s[i] < '0' || s[i] > '9') return false;
        } else if (s[i] != kPattern[i]) {
            return false;
        }
    }
    return true;
}

bool knownPrecision(const std::string& p) {
    return p == "fp32" || p == "fp64" || p == "fp16" || p == "bf16" || p == "tf32";
}

/// Reads a required string field; reports missing/wrong type.
bool requireString(const json& obj, const char* key, std::string& out, support::DiagnosticList& diags,
                   const std::string& file, const std::string& where) {
    auto it = obj.find(key);
    if (it == obj.end()) {
        diags.error(file, where, std::string("missing field '") + key + "'");
        return false;
    }
    if (!it->is_string()) {
        diags.error(file, where, std::string("field '") + key + "' must be a string, not " + jsonTypeName(*it));
        return false;
    }
    out = it->get<std::string>();
    return true;
}

bool optionalString(const json& obj, const char* key, std::string& out, support::DiagnosticList& diags,
                    const std::string& file, const std::string& where) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return true;
    if (!it->is_string()) {
        diags.error(file, where, std::string("field '") + key + "' must be a string, not " + jsonTypeName(*it));
        return false;
    }
    out = it->get<std::string>();
    return true;
}

void readRoof(const json& j, std::size_t index, MachineProfile& profile, support::DiagnosticList& diags,
              const std::string& file) {
    std::string where = "roofs[" + std::to_string(index) + "]";
    if (!j.is_object()) {
        diags.error(file, where, std::string("a roof must be an object, not ") + jsonTypeName(j));
        return;
    }
    const std::size_t errorsBefore = diags.items().size();
    Roof r;
    if (requireString(j, "name", r.name, diags, file, where)) where += " '" + r.name + "'";

    std::string kind;
    bool kindOk = false;
    if (requireString(j, "kind", kind, diags, file, where)) {
        if (kind == "bandwidth") {
            r.kind = Roof::Kind::Bandwidth;
            kindOk = true;
        } else if (kind == "compute") {
            r.kind = Roof::Kind::Compute;
            kindOk = true;
        } else {
            diags.error(file, where, "unknown kind '" + kind + "' (expected \"bandwidth\" or \"compute\")");
        }
    }

    auto value = j.find("value");
    if (value == j.end()) {
        diags.error(file, where, "missing field 'value'");
    } else if (!value->is_number()) {
        diags.error(file, where, std::string("field 'value' must be a number, not ") + jsonTypeName(*value));
    } else {
        r.value = value->get<double>();
        if (!std::isfinite(r.value) || r.value <= 0.0)
            diags.error(file, where, "value must be a positive number");
    }

    if (requireString(j, "unit", r.unit, diags, file, where) && kindOk) {
        const char* expected = r.kind == Roof::Kind::Bandwidth ? kBandwidthUnit : kComputeUnit;
        if (r.unit != expected)
            diags.error(file, where, "unit '" + r.unit + "' is wrong for a " + roofKindName(r.kind) +
                                         " roof (expected " + expected + ")");
    }

    auto threads = j.find("threads");
    if (threads == j.end()) {
        diags.error(file, where, "missing field 'threads'");
    } else if (!threads->is_number_integer()) {
        diags.error(file, where, std::string("field 'threads' must be an integer, not ") + jsonTypeName(*threads));
    } else {
        const auto t = threads->get<long long>();
        if (t < 1 || t > 1 << 20) diags.error(file, where, "threads must be >= 1");
        else r.threads = static_cast<int>(t);
    }

    if (kindOk && r.kind == Roof::Kind::Bandwidth) {
        if (requireString(j, "level", r.level, diags, file, where) && memoryLevelRank(r.level) < 0)
            diags.warning(file, where, "unknown memory level '" + r.level +
                                           "' (known: L1, shared, L2, L3, DRAM, HBM); it is drawn after the known levels");
    } else if (kindOk) {
        if (requireString(j, "precision", r.precision, diags, file, where) && !knownPrecision(r.precision))
            diags.warning(file, where, "unknown precision '" + r.precision + "' (known: fp32, fp64, fp16, bf16, tf32)");
    }
    optionalString(j, "method", r.method, diags, file, where);

    bool failed = false;
    for (std::size_t i = errorsBefore; i < diags.items().size(); ++i)
        failed = failed || diags.items()[i].severity == support::Severity::Error;
    if (!failed) profile.roofs.push_back(std::move(r));
}

std::string readFirstLineValue(const std::string& path, const std::string& key) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string k = line.substr(0, colon);
        while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.pop_back();
        if (k != key) continue;
        std::string v = line.substr(colon + 1);
        const auto b = v.find_first_not_of(" \t");
        return b == std::string::npos ? std::string() : v.substr(b);
    }
    return {};
}

std::string readFileTrimmed(const std::string& path) {
    std::ifstream in(path);
    std::string s;
    std::getline(in, s);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
}

/// Cache size in KiB of cpu0's cache of `level` and type ("Data", "Unified"), from sysfs; 0 if unknown.
long sysfsCacheKiB(int level, bool dataOrUnified) {
    for (int i = 0; i < 16; ++i) {
        const std::string base = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
        const std::string lv = readFileTrimmed(base + "level");
        if (lv.empty()) break;
        if (lv != std::to_string(level)) continue;
        const std::string type = readFileTrimmed(base + "type");
        if (dataOrUnified && type != "Data" && type != "Unified") continue;
        const std::string size = readFileTrimmed(base + "size");  // e.g. "48K", "2048K", "32M"
        if (size.empty()) continue;
        char* end = nullptr;
        long v = std::strtol(size.c_str(), &end, 10);
        if (end && (*end == 'M' || *end == 'm')) v *= 1024;
        else if (end && (*end == 'G' || *end == 'g')) v *= 1024 * 1024;
        return v;
    }
    return 0;
}

long cacheKiB(int level) {
    // sysfs first: it gives the cache this CPU shares (32 MiB on the 2-vCPU EPYC guest), where
    // glibc's sysconf reported the whole host package's L3 (384 MiB).
    if (const long kib = sysfsCacheKiB(level, true); kib > 0) return kib;
#if defined(_SC_LEVEL1_DCACHE_SIZE)
    long bytes = 0;
    if (level == 1) bytes = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    else if (level == 2) bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
    else if (level == 3) bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (bytes > 0) return bytes / 1024;
#endif
    return 0;
}

}  // namespace

json profileToJson(const MachineProfile& profile) {
    json roofs = json::array();
    for (const Roof& r : profile.roofs) {
        json o;
        o["name"] = r.name;
        o["kind"] = roofKindName(r.kind);
        if (r.kind == Roof::Kind::Bandwidth) o["level"] = r.level;
        else o["precision"] = r.precision;
        o["value"] = r.value;
        o["unit"] = r.unit;
        o["threads"] = r.threads;
        if (!r.method.empty()) o["method"] = r.method;
        roofs.push_back(std::move(o));
    }
    json j;
    j["version"] = profile.version;
    j["fingerprint"] = profile.fingerprint;
    j["target"] = profile.target;
    j["description"] = profile.description;
    j["measured_at"] = profile.measuredAt;
    j["roofs"] = std::move(roofs);
    return j;
}

support::Expected<MachineProfile> profileFromJson(const json& j, const std::string& file) {
    support::DiagnosticList diags;
    const std::string where = "profile";
    if (!j.is_object()) {
        diags.error(file, where, std::string("a machine profile must be a JSON object, not ") + jsonTypeName(j));
        return diags;
    }
    MachineProfile p;
    auto version = j.find("version");
    if (version == j.end()) {
        diags.error(file, where, "missing field 'version'");
        return diags;
    }
    if (!version->is_number_integer()) {
        diags.error(file, where, std::string("field 'version' must be an integer, not ") + jsonTypeName(*version));
        return diags;
    }
    if (version->get<long long>() != kProfileVersion) {
        diags.error(file, where, "unknown profile version " + std::to_string(version->get<long long>()) +
                                     " (this Tessera reads version " + std::to_string(kProfileVersion) + ")");
        return diags;  // the other fields may mean something else in another version
    }
    p.version = kProfileVersion;

    requireString(j, "fingerprint", p.fingerprint, diags, file, where);
    if (requireString(j, "target", p.target, diags, file, where) && p.target.empty())
        diags.error(file, where, "field 'target' is empty (expected \"cpu\" or \"cuda:<n>\")");
    optionalString(j, "description", p.description, diags, file, where);
    if (requireString(j, "measured_at", p.measuredAt, diags, file, where) && !isIsoUtc(p.measuredAt))
        diags.error(file, where, "measured_at '" + p.measuredAt + "' is not ISO 8601 UTC (YYYY-MM-DDTHH:MM:SSZ)");

    auto roofs = j.find("roofs");
    if (roofs == j.end()) {
        diags.error(file, where, "missing field 'roofs'");
    } else if (!roofs->is_array()) {
        diags.error(file, where, std::string("field 'roofs' must be an array, not ") + jsonTypeName(*roofs));
    } else {
        for (std::size_t i = 0; i < roofs->size(); ++i) readRoof((*roofs)[i], i, p, diags, file);
    }
    if (diags.hasErrors()) return diags;
    return support::Expected<MachineProfile>(std::move(p), std::move(diags));
}

std::string profileToString(const MachineProfile& profile) { return profileToJson(profile).dump(2) + "\n"; }

support::Expected<MachineProfile> parseProfile(const std::string& text, const std::string& file) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        support::DiagnosticList diags;
        diags.error(file, "byte " + std::to_string(e.byte), std::string("not valid JSON: ") + e.what());
        return diags;
    }
    return profileFromJson(j, file);
}

std::string cpuFingerprint() {
    std::string model = readFirstLineValue("/proc/cpuinfo", "model name");
    if (model.empty()) model = readFirstLineValue("/proc/cpuinfo", "Hardware");
    if (model.empty()) {
        // Arm without a model name: implementer + part identify the core design.
        const std::string impl = readFirstLineValue("/proc/cpuinfo", "CPU implementer");
        const std::string part = readFirstLineValue("/proc/cpuinfo", "CPU part");
        if (!impl.empty() || !part.empty()) model = "CPU implementer " + impl + " part " + part;
    }
    // Collapse runs of spaces (some model names pad with them).
    std::string compact;
    for (char c : model) {
        if (c == ' ' && (compact.empty() || compact.back() == ' ')) continue;
        compact += c;
    }
    while (!compact.empty() && compact.back() == ' ') compact.pop_back();
    std::string out = compact.empty() ? "unknown CPU" : compact;

    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    if (cpus > 0) out += " | " + std::to_string(cpus) + " logical CPUs";

    std::string caches;
    const char* names[] = {"L1d", "L2", "L3"};
    for (int level = 1; level <= 3; ++level) {
        const long kib = cacheKiB(level);
        if (kib <= 0) continue;
        if (!caches.empty()) caches += ", ";
        caches += std::string(names[level - 1]) + " " + std::to_string(kib) + " KiB";
    }
    if (!caches.empty()) out += " | " + caches;
    return out;
}

std::string isoUtcNow() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string defaultProfileDir() {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    if (xdg && xdg[0] == '/') return (fs::path(xdg) / "tessera" / "profiles").string();
    const char* home = std::getenv("HOME");
    if (home && home[0] != '\0') return (fs::path(home) / ".config" / "tessera" / "profiles").string();
    return {};
}

std::string profileFileName(const MachineProfile& profile) {
    std::string target = profile.target.empty() ? "unknown" : profile.target;
    for (char& c : target) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) c = '_';
    }
    support::Hasher h;
    h.field(profile.fingerprint);
    return target + "-" + h.hex().substr(0, 16) + ".json";
}

support::Expected<std::string> saveProfile(const MachineProfile& profile, const std::string& dir) {
    // Validate through the reader so that only loadable files are ever written.
    auto check = profileFromJson(profileToJson(profile));
    if (!check) return check.diagnostics();

    support::DiagnosticList diags;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        diags.error(dir, "profile directory", "cannot create the directory: " + ec.message());
        return diags;
    }
    const fs::path path = fs::path(dir) / profileFileName(profile);
    const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) {
            diags.error(tmp.string(), "profile", "cannot open the file for writing");
            return diags;
        }
        f << profileToString(profile);
        f.close();
        if (!f) {
            diags.error(tmp.string(), "profile", "writing the file failed");
            fs::remove(tmp, ec);
            return diags;
        }
    }
    fs::rename(tmp, path, ec);
    if (ec) {
        diags.error(path.string(), "profile", "cannot move the written file into place: " + ec.message());
        fs::remove(tmp, ec);
        return diags;
    }
    return path.string();
}

support::Expected<MachineProfile> loadProfile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        support::DiagnosticList diags;
        diags.error(path, "profile", "cannot open the file");
        return diags;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return parseProfile(ss.str(), path);
}

std::optional<MachineProfile> findProfileFor(const std::string& fingerprint, const std::string& dir,
                                             const std::string& target, support::DiagnosticList* skipped) {
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return std::nullopt;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".json") files.push_back(it->path());
    std::sort(files.begin(), files.end());  // deterministic choice among equal timestamps

    std::optional<MachineProfile> best;
    for (const fs::path& f : files) {
        auto p = loadProfile(f.string());
        if (!p) {
            if (skipped) {
                for (const support::Diagnostic& d : p.diagnostics().items()) {
                    support::Diagnostic w = d;
                    if (w.severity == support::Severity::Error) w.severity = support::Severity::Warning;
                    skipped->add(std::move(w));
                }
            }
            continue;
        }
        if (p->fingerprint != fingerprint) continue;
        if (!target.empty() && p->target != target) continue;
        // ISO 8601 UTC strings of one fixed format order the same as the times they name.
        if (!best || p->measuredAt > best->measuredAt) best = std::move(p.value());
    }
    return best;
}

namespace {

/// The first two " | "-separated fields of a fingerprint (the machine model).
std::string modelPart(const std::string& fingerprint) {
    const std::size_t first = fingerprint.find(" | ");
    if (first == std::string::npos) return fingerprint;
    const std::size_t second = fingerprint.find(" | ", first + 3);
    return second == std::string::npos ? fingerprint : fingerprint.substr(0, second);
}

}  // namespace

std::optional<MachineProfile> findProfileForMachine(const std::string& fingerprint, const std::string& dir,
                                                    const std::string& target, bool* approximate,
                                                    support::DiagnosticList* skipped) {
    if (approximate) *approximate = false;
    if (auto exact = findProfileFor(fingerprint, dir, target, skipped)) return exact;
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return std::nullopt;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".json") files.push_back(it->path());
    std::sort(files.begin(), files.end());
    const std::string model = modelPart(fingerprint);
    std::optional<MachineProfile> best;
    for (const fs::path& f : files) {
        auto p = loadProfile(f.string());
        if (!p || modelPart(p->fingerprint) != model) continue;
        if (!target.empty() && p->target != target) continue;
        if (!best || p->measuredAt > best->measuredAt) best = std::move(p.value());
    }
    if (best && approximate) *approximate = true;
    return best;
}

}  // namespace tessera::perf
