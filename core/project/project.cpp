#include "core/project/project.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/frontend/dsl/dsl.h"
#include "core/perf/gpu_microbench.h"
#include "core/perf/machine_profile.h"
#include "core/pipeline/host_profile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/user_schedule.h"
#include "core/support/atomic_file.h"
#include "core/support/hash.h"

namespace tessera::project {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

support::DiagnosticList oneError(const std::string& file, const std::string& message) {
    support::DiagnosticList d;
    d.error(file, "", message);
    return d;
}

bool readFile(const std::string& path, std::string& out, std::string& error) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        error = "no such file";
        return false;
    }
    if (fs::is_directory(path, ec)) {
        error = "is a folder, not a project file";
        return false;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot open the file";
        return false;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return true;
}

/// 1-based line and column of byte offset `offset` (0-based) in `text`.
support::SourceLocation locationOf(const std::string& text, std::size_t offset) {
    support::SourceLocation loc{1, 1};
    offset = std::min(offset, text.size());
    for (std::size_t i = 0; i < offset; ++i) {
        if (text[i] == '\n') {
            ++loc.line;
            loc.column = 1;
        } else {
            ++loc.column;
        }
    }
    return loc;
}

/// Reads typed keys of one JSON object, collecting errors that name the key by its dotted path.
class Reader {
public:
    Reader(const Json& obj, std::string prefix, support::DiagnosticList& diags, const std::string& file)
        : m_obj(obj), m_prefix(std::move(prefix)), m_diags(diags), m_file(file) {}

    bool has(const char* key) const { return m_obj.contains(key) && !m_obj.at(key).is_null(); }
    std::string keyName(const char* key) const { return m_prefix.empty() ? key : m_prefix + "." + key; }
    void error(const std::string& message) { m_diags.error(m_file, "", message); }

    void missing(const char* key) { error("missing required key '" + keyName(key) + "'"); }
    void wrongType(const char* key, const char* what) { error("key '" + keyName(key) + "' must be " + what); }

    bool str(const char* key, std::string& out, bool required = false) {
        if (!has(key)) {
            if (required) missing(key);
            return !required;
        }
        if (!m_obj.at(key).is_string()) {
            wrongType(key, "a string");
            return false;
        }
        out = m_obj.at(key).get<std::string>();
        return true;
    }
    bool boolean(const char* key, bool& out) {
        if (!has(key)) return true;
        if (!m_obj.at(key).is_boolean()) {
            wrongType(key, "true or false");
            return false;
        }
        out = m_obj.at(key).get<bool>();
        return true;
    }
    bool number(const char* key, double& out, bool required = false) {
        if (!has(key)) {
            if (required) missing(key);
            return !required;
        }
        const Json& v = m_obj.at(key);
        // JSON has no infinities: they are written as the strings "inf" / "-inf" (jsonNumber).
        if (v.is_string() && (v.get<std::string>() == "inf" || v.get<std::string>() == "-inf")) {
            out = (v.get<std::string>() == "inf" ? 1.0 : -1.0) * std::numeric_limits<double>::infinity();
            return true;
        }
        if (!v.is_number()) {
            wrongType(key, "a number");
            return false;
        }
        out = v.get<double>();
        return true;
    }
    bool integer(const char* key, std::int64_t& out) {
        if (!has(key)) return true;
        if (!m_obj.at(key).is_number_integer()) {
            wrongType(key, "an integer");
            return false;
        }
        out = m_obj.at(key).get<std::int64_t>();
        return true;
    }
    bool strings(const char* key, std::vector<std::string>& out) {
        if (!has(key)) return true;
        const Json& a = m_obj.at(key);
        if (!a.is_array() || !std::all_of(a.begin(), a.end(), [](const Json& e) { return e.is_string(); })) {
            wrongType(key, "an array of strings");
            return false;
        }
        out.clear();
        for (const auto& e : a) out.push_back(e.get<std::string>());
        return true;
    }
    /// The object at `key` or nullptr (an error when present but not an object, or when required and missing).
    const Json* object(const char* key, bool required = false) {
        if (!has(key)) {
            if (required) missing(key);
            return nullptr;
        }
        if (!m_obj.at(key).is_object()) {
            wrongType(key, "an object");
            return nullptr;
        }
        return &m_obj.at(key);
    }
    const Json* array(const char* key) {
        if (!has(key)) return nullptr;
        if (!m_obj.at(key).is_array()) {
            wrongType(key, "an array");
            return nullptr;
        }
        return &m_obj.at(key);
    }

private:
    const Json& m_obj;
    std::string m_prefix;
    support::DiagnosticList& m_diags;
    const std::string& m_file;
};

void readKernel(const Json& j, const std::string& prefix, KernelMeasurement& k, support::DiagnosticList& d,
                const std::string& file) {
    if (!j.is_object()) {
        d.error(file, "", "'" + prefix + "' must be an object");
        return;
    }
    Reader r(j, prefix, d, file);
    r.str("name", k.name, true);
    r.str("op_type", k.opType);
    r.str("group", k.group);
    r.strings("nodes", k.nodes);
    r.number("median_s", k.medianSeconds, true);
    r.number("flops", k.flops);
    r.integer("bytes", k.bytes);
    r.boolean("checked", k.checked);
    r.number("max_rel_error", k.maxRelError);
}

void readRun(const Json& j, const std::string& prefix, RunRecord& run, support::DiagnosticList& d,
             const std::string& file) {
    if (!j.is_object()) {
        d.error(file, "", "'" + prefix + "' must be an object");
        return;
    }
    Reader r(j, prefix, d, file);
    r.str("time", run.time, true);
    r.str("fingerprint", run.fingerprint);
    r.str("target", run.target, true);
    r.str("device", run.device);
    r.str("planner", run.planner);
    r.str("plan_hash", run.planHash);
    std::int64_t threads = 0;
    r.integer("threads", threads);
    run.threads = static_cast<int>(threads);
    r.boolean("checked", run.checked);
    r.boolean("all_passed", run.allPassed);
    r.number("total_s", run.totalSeconds);
    r.str("timing_warning", run.timingWarning);  // absent (older files): the timings were reliable
    if (const Json* ks = r.array("kernels"))
        for (std::size_t i = 0; i < ks->size(); ++i) {
            KernelMeasurement k;
            readKernel((*ks)[i], prefix + ".kernels[" + std::to_string(i) + "]", k, d, file);
            run.kernels.push_back(std::move(k));
        }
}

OJson kernelJson(const KernelMeasurement& k) {
    OJson j;
    j["name"] = k.name;
    j["op_type"] = k.opType;
    j["group"] = k.group;
    j["nodes"] = k.nodes;
    j["median_s"] = k.medianSeconds;
    j["flops"] = k.flops;
    j["bytes"] = k.bytes;
    j["checked"] = k.checked;
    // A non-finite mismatch makes the error infinite (compare.h); JSON spells it as a string.
    if (std::isinf(k.maxRelError)) j["max_rel_error"] = k.maxRelError > 0 ? "inf" : "-inf";
    else j["max_rel_error"] = k.maxRelError;
    return j;
}

OJson runJson(const RunRecord& r) {
    OJson j;
    j["time"] = r.time;
    j["fingerprint"] = r.fingerprint;
    j["target"] = r.target;
    j["device"] = r.device;
    j["planner"] = r.planner;
    j["plan_hash"] = r.planHash;
    j["threads"] = r.threads;
    j["checked"] = r.checked;
    j["all_passed"] = r.allPassed;
    j["total_s"] = r.totalSeconds;
    if (!r.timingWarning.empty()) j["timing_warning"] = r.timingWarning;
    OJson ks = OJson::array();
    for (const auto& k : r.kernels) ks.push_back(kernelJson(k));
    j["kernels"] = std::move(ks);
    return j;
}

/// The version of an existing project file at `path`, or 0 when there is none or it is not a
/// readable project.
int existingVersion(const std::string& path) {
    std::string text, error;
    if (!readFile(path, text, error)) return 0;
    Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("version") || !j["version"].is_number_integer()) return 0;
    return j["version"].get<int>();
}

}  // namespace

const char* sourceKindName(SourceKind k) { return k == SourceKind::Dsl ? "dsl" : "onnx"; }

const KernelMeasurement* RunRecord::kernel(const std::string& name) const {
    for (const auto& k : kernels)
        if (k.name == name) return &k;
    return nullptr;
}

std::string relativeSourcePath(const std::string& projectPath, const std::string& source) {
    if (source.empty()) return source;
    std::error_code ec;
    const fs::path folder = fs::absolute(projectPath, ec).lexically_normal().parent_path();
    const fs::path src = fs::absolute(source, ec).lexically_normal();
    fs::path rel = src.lexically_relative(folder);
    return rel.empty() ? src.generic_string() : rel.generic_string();
}

std::string resolveSourcePath(const std::string& projectPath, const std::string& stored) {
    if (stored.empty()) return stored;
    const fs::path p(stored);
    if (p.is_absolute()) return p.lexically_normal().string();
    std::error_code ec;
    const fs::path folder = fs::absolute(projectPath, ec).lexically_normal().parent_path();
    return (folder / p).lexically_normal().string();
}

std::string hashFile(const std::string& path) {
    std::string text, error;
    if (!readFile(path, text, error)) return {};
    return support::hashHex(text);
}

std::string planHash(const schedule::FusionPlan& plan) { return support::hashHex(schedule::planToJson(plan)).substr(0, 16); }

support::Expected<LoadedProject> parseProject(const std::string& text, const std::string& path) {
    Json root;
    try {
        root = Json::parse(text);
    } catch (const Json::parse_error& e) {
        support::Diagnostic d;
        d.file = path;
        // e.byte counts the characters read, so the offending one is at e.byte - 1.
        d.begin = locationOf(text, e.byte > 0 ? e.byte - 1 : 0);
        d.end = d.begin;
        std::string what = e.what();
        // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..."
        const auto colon = what.find("syntax error");
        d.message = "not valid JSON: " + (colon != std::string::npos ? what.substr(colon) : what);
        support::DiagnosticList list;
        list.add(std::move(d));
        return list;
    } catch (const Json::exception& e) {
        return oneError(path, std::string("not valid JSON: ") + e.what());
    }
    if (!root.is_object()) return oneError(path, "not a Tessera project: the top level must be a JSON object");

    support::DiagnosticList diags;
    Reader top(root, "", diags, path);
    std::string format;
    if (!top.has("format")) return oneError(path, "not a Tessera project: missing required key 'format'");
    if (!top.str("format", format)) return diags;
    if (format != kProjectFormat)
        return oneError(path, "not a Tessera project: key 'format' is \"" + format + "\", expected \"" +
                                  kProjectFormat + "\"");
    if (!top.has("version")) return oneError(path, "missing required key 'version'");
    if (!root["version"].is_number_integer() || root["version"].get<std::int64_t>() < 1)
        return oneError(path, "key 'version' must be an integer >= 1");

    LoadedProject lp;
    lp.path = path;
    lp.fileVersion = static_cast<int>(root["version"].get<std::int64_t>());
    lp.readOnly = lp.fileVersion > kProjectVersion;
    Project& p = lp.project;

    if (const Json* src = top.object("source", /*required=*/true)) {
        Reader r(*src, "source", diags, path);
        std::string kind;
        if (r.str("kind", kind, true)) {
            if (kind == "onnx")
                p.source.kind = SourceKind::Onnx;
            else if (kind == "dsl")
                p.source.kind = SourceKind::Dsl;
            else if (!kind.empty())
                r.error("key 'source.kind' is \"" + kind + "\", expected \"onnx\" or \"dsl\"");
        }
        std::string stored;
        if (r.str("path", stored, true) && stored.empty()) r.error("key 'source.path' is empty");
        p.source.path = resolveSourcePath(path, stored);
        r.str("content_hash", p.source.contentHash);
        r.str("program", p.source.programText);
    }
    top.str("planner", p.planner);
    if (const Json* plan = top.object("plan")) {
        auto parsed = schedule::planFromJson(plan->dump(), path);
        if (parsed.ok())
            p.plan = std::move(*parsed);
        else
            for (auto d : parsed.diagnostics().items()) {
                if (d.severity == support::Severity::Error) d.message = "key 'plan': " + d.message;
                diags.add(std::move(d));
            }
    }
    if (const Json* hw = top.object("hardware")) {
        Reader r(*hw, "hardware", diags, path);
        r.str("name", p.hardware.name);
        if (const Json* prof = r.object("profile")) {
            p.hardware.profileJson = prof->dump(2) + "\n";
            auto parsed = target::gpuProfileFromJson(p.hardware.profileJson, path);
            if (!parsed.ok())
                for (auto d : parsed.diagnostics().items()) {
                    d.message = "key 'hardware.profile': " + d.message;
                    diags.add(std::move(d));
                }
        }
    }
    top.str("target", p.target);
    if (p.target.empty()) p.target = "cpu";
    if (const Json* o = top.object("options")) {
        Reader r(*o, "options", diags, path);
        std::int64_t threads = p.options.threads;
        if (r.integer("threads", threads) && threads < 1) r.error("key 'options.threads' must be >= 1");
        p.options.threads = static_cast<int>(std::max<std::int64_t>(1, threads));
        r.boolean("check", p.options.check);
        r.boolean("fallback_reference", p.options.fallbackReference);
        r.number("tolerance", p.options.tolerance);
    }
    if (const Json* ms = top.array("mappings"))
        for (std::size_t i = 0; i < ms->size(); ++i) {
            const std::string prefix = "mappings[" + std::to_string(i) + "]";
            if (!(*ms)[i].is_object()) {
                diags.error(path, "", "'" + prefix + "' must be an object");
                continue;
            }
            Reader r((*ms)[i], prefix, diags, path);
            MappingEdit m;
            r.str("node", m.node);
            r.str("grid", m.grid, true);
            r.str("block", m.block);
            p.mappings.push_back(std::move(m));
        }
    if (const Json* ss = top.array("schedules"))
        for (std::size_t i = 0; i < ss->size(); ++i) {
            const std::string prefix = "schedules[" + std::to_string(i) + "]";
            if (!(*ss)[i].is_object()) {
                diags.error(path, "", "'" + prefix + "' must be an object");
                continue;
            }
            Reader r((*ss)[i], prefix, diags, path);
            ScheduleOverride o;
            r.str("node", o.node, true);
            r.str("grid", o.grid, true);
            r.str("block", o.block);
            p.schedules.push_back(std::move(o));
        }
    if (const Json* runs = top.array("runs"))
        for (std::size_t i = 0; i < runs->size(); ++i) {
            RunRecord run;
            readRun((*runs)[i], "runs[" + std::to_string(i) + "]", run, diags, path);
            p.runs.push_back(std::move(run));
        }
    if (diags.hasErrors()) return diags;

    if (lp.readOnly)
        diags.warning(path, "",
                      "project version " + std::to_string(lp.fileVersion) + " is newer than this Tessera's (" +
                          std::to_string(kProjectVersion) +
                          "): opened read-only, saving is disabled (what it understands is shown)");
    std::error_code ec;
    if (!p.source.path.empty() && !fs::is_regular_file(p.source.path, ec)) {
        lp.sourceMissing = true;
        diags.warning(path, "",
                      std::string("source ") + (p.source.kind == SourceKind::Dsl ? "program" : "model") + " '" +
                          p.source.path + "' not found" +
                          (p.source.kind == SourceKind::Dsl && !p.source.programText.empty()
                               ? " (the project holds the program text)"
                               : ""));
    } else if (!p.source.contentHash.empty()) {
        const std::string now = hashFile(p.source.path);
        if (!now.empty() && now != p.source.contentHash) {
            lp.sourceChanged = true;
            diags.warning(path, "",
                          "source '" + p.source.path +
                              "' changed since the project was saved (its plan and measurements may not fit it)");
        }
    }
    return support::Expected<LoadedProject>(std::move(lp), std::move(diags));
}

support::Expected<LoadedProject> loadProject(const std::string& path) {
    std::string text, error;
    if (!readFile(path, text, error)) return oneError(path, "cannot read the project: " + error);
    return parseProject(text, path);
}

std::string projectToJson(const Project& p, const std::string& path) {
    OJson root;
    root["format"] = kProjectFormat;
    root["version"] = kProjectVersion;
    OJson src;
    src["kind"] = sourceKindName(p.source.kind);
    src["path"] = relativeSourcePath(path, p.source.path);
    src["content_hash"] = p.source.contentHash;
    if (p.source.kind == SourceKind::Dsl) src["program"] = p.source.programText;
    root["source"] = std::move(src);
    root["planner"] = p.planner;
    root["plan"] = p.plan ? OJson::parse(schedule::planToJson(*p.plan)) : OJson();
    OJson hw;
    hw["name"] = p.hardware.name;
    if (!p.hardware.profileJson.empty()) {
        // Keys sorted (as a loaded profile holds them), so that saving a loaded project again
        // writes the same bytes.
        const Json prof = Json::parse(p.hardware.profileJson, nullptr, /*allow_exceptions=*/false);
        if (!prof.is_discarded()) hw["profile"] = OJson::parse(prof.dump());
    }
    root["hardware"] = std::move(hw);
    root["target"] = p.target;
    root["options"] = {{"threads", p.options.threads},
                       {"check", p.options.check},
                       {"fallback_reference", p.options.fallbackReference},
                       {"tolerance", p.options.tolerance}};
    OJson maps = OJson::array();
    for (const auto& m : p.mappings) maps.push_back({{"node", m.node}, {"grid", m.grid}, {"block", m.block}});
    root["mappings"] = std::move(maps);
    OJson scheds = OJson::array();
    for (const auto& o : p.schedules) scheds.push_back({{"node", o.node}, {"grid", o.grid}, {"block", o.block}});
    root["schedules"] = std::move(scheds);
    OJson runs = OJson::array();
    for (const auto& r : p.runs) runs.push_back(runJson(r));
    root["runs"] = std::move(runs);
    // Program text from an editor may hold invalid UTF-8: replaced rather than thrown on.
    return root.dump(2, ' ', false, OJson::error_handler_t::replace) + "\n";
}

support::Expected<std::string> saveProject(const Project& project, const std::string& path) {
    if (const int v = existingVersion(path); v > kProjectVersion)
        return oneError(path, "not saved: the file is a project of version " + std::to_string(v) +
                                  ", newer than this Tessera's (" + std::to_string(kProjectVersion) +
                                  "); saving would drop what that version wrote (use Save As)");
    std::error_code ec;
    const fs::path folder = fs::absolute(path, ec).parent_path();
    if (!fs::is_directory(folder, ec)) return oneError(path, "cannot save: folder '" + folder.string() + "' does not exist");
    std::string error;
    if (!support::writeFileAtomically(path, projectToJson(project, path), error))
        return oneError(path, "cannot save the project: " + error);
    return path;
}

support::Expected<Project> newProject(const std::string& sourcePath) {
    std::string text, error;
    if (!readFile(sourcePath, text, error)) return oneError(sourcePath, "cannot read the source: " + error);
    Project p;
    std::error_code ec;
    p.source.path = fs::absolute(sourcePath, ec).lexically_normal().string();
    p.source.kind = pipeline::sourceKindOf(sourcePath) == pipeline::SourceKind::Dsl ? SourceKind::Dsl : SourceKind::Onnx;
    p.source.contentHash = support::hashHex(text);
    if (p.source.kind == SourceKind::Dsl) p.source.programText = text;
    return p;
}

support::Expected<ir::Model> loadProjectModel(const Project& project, const support::CancelToken* cancel) {
    std::error_code ec;
    const bool exists = fs::is_regular_file(project.source.path, ec);
    if (project.source.kind == SourceKind::Dsl && !project.source.programText.empty()) {
        auto m = frontend::dsl::parseProgram(project.source.programText, project.source.path, pipeline::dslParseOptions());
        if (m.ok()) m->sourcePath = project.source.path;
        return m;
    }
    if (!exists)
        return oneError(project.source.path, std::string("source ") +
                                                 (project.source.kind == SourceKind::Dsl ? "program" : "model") + " '" +
                                                 project.source.path + "' not found (moved or deleted?)");
    return pipeline::loadModel(project.source.path, {}, cancel);
}

support::Expected<target::GpuProfile> projectHardware(const Project& project) {
    if (!project.hardware.profileJson.empty())
        return target::gpuProfileFromJson(project.hardware.profileJson, "hardware.profile");
    if (project.hardware.name.empty()) return target::GpuProfile{};
    return pipeline::findHardwareProfile(project.hardware.name);
}

namespace {

/// CUDA device ordinal of "cuda:N" (0 for "cuda"), -1 for the CPU, -2 for a malformed target.
int cudaOrdinal(const std::string& t) {
    if (t == "cpu") return -1;
    if (t == "cuda" || t == "cuda-compile") return 0;
    if (t.rfind("cuda:", 0) != 0 || t.size() == 5) return -2;
    int n = 0;
    for (std::size_t i = 5; i < t.size(); ++i) {
        if (t[i] < '0' || t[i] > '9' || n > 100000) return -2;
        n = n * 10 + (t[i] - '0');
    }
    return n;
}

}  // namespace

support::Expected<pipeline::CompileOptions> compileOptionsFor(const Project& project) {
    const int ordinal = cudaOrdinal(project.target);
    if (ordinal == -2)
        return oneError("", "target '" + project.target + "': expected cpu, cuda, cuda:N or cuda-compile");
    pipeline::CompileOptions o;
    o.target = ordinal >= 0 ? lower::Target::Cuda : lower::Target::Cpu;
    o.cpuThreads = std::max(1, project.options.threads);
    o.fallbackReference = project.options.fallbackReference;
    auto hw = projectHardware(project);
    if (!hw.ok()) return hw.diagnostics();
    o.hardware = std::move(*hw);
    if (project.plan)
        o.plan = project.plan;
    else if (project.planner == "none" || project.planner == "hidet" || project.planner == "fuseplanner")
        o.planner = project.planner;
    for (const auto& s : project.schedules) o.schedules.push_back(pipeline::mappingSchedule(s.node, s.grid, s.block));
    return o;
}

pipeline::RunOptions runOptionsFor(const Project& project) {
    pipeline::RunOptions o;
    o.check = project.options.check;
    o.relTol = project.options.tolerance;
    o.threads = std::max(1, project.options.threads);
    o.cudaDevice = std::max(0, cudaOrdinal(project.target));
    return o;
}

std::string currentFingerprint(const std::string& target) {
    return target == "cpu" ? perf::cpuFingerprint() : std::string();
}

RunRecord makeRunRecord(const pipeline::RunReport& report, const schedule::FusionPlan& appliedPlan,
                        const std::string& target) {
    RunRecord r;
    r.time = perf::isoUtcNow();
    if (report.device) {
        r.fingerprint = perf::gpuFingerprint(*report.device);
        r.device = report.device->name;
    } else {
        r.fingerprint = perf::cpuFingerprint();
        // The fingerprint's first field is the CPU's model name.
        r.device = r.fingerprint.substr(0, r.fingerprint.find(" | "));
    }
    r.target = target;
    r.planner = appliedPlan.planner;
    r.planHash = planHash(appliedPlan);
    r.threads = report.threads;
    r.checked = report.checked;
    r.allPassed = report.allPassed;
    r.totalSeconds = report.total.median;
    for (const support::Diagnostic& d : report.warnings.items())
        if (d.where == "timing") {
            r.timingWarning = d.message;
            break;
        }
    for (const auto& k : report.kernels) {
        KernelMeasurement m;
        m.name = k.name;
        m.opType = k.opType;
        m.group = k.group;
        m.nodes = k.ops;
        m.medianSeconds = k.time.median;
        m.flops = k.usefulFlops >= 0 ? k.usefulFlops : k.flops;
        m.bytes = k.bytes;
        m.checked = k.checked;
        m.maxRelError = k.checked ? k.maxRelError() : -1;
        r.kernels.push_back(std::move(m));
    }
    return r;
}

std::string runRecordToJson(const RunRecord& run) {
    return runJson(run).dump(2, ' ', false, OJson::error_handler_t::replace);
}

const RunRecord* lastRun(const Project& project, const std::string& target) {
    for (auto it = project.runs.rbegin(); it != project.runs.rend(); ++it)
        if (target.empty() || it->target == target) return &*it;
    return nullptr;
}

}  // namespace tessera::project
