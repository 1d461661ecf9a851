#pragma once
/// @file
/// The `.tessera` project file (issue 8): what a user opened (an ONNX model or a DSL program),
/// how it is scheduled (fusion plan, planner, hardware profile, target, run options, the task
/// mappings last looked at) and every measurement saved with it, so that a session can be closed,
/// reopened, shared, and its timings compared run after run.
///
/// JSON format (version 2, keys in snake_case; one object, UTF-8, written with 2-space indent):
/// @code
/// {
///   "format": "tessera-project", "version": 2,              // required
///   "source": {                                              // required
///     "kind": "onnx",                                        // required: "onnx" | "dsl"
///     "path": "../models/dw_pw_block.onnx",                  // required: relative to the project's folder
///     "content_hash": "9f0c...",                             // 32 hex digits (support::hashHex of the file bytes)
///     "program": "tensor x: f32[1, 8] ..."                   // DSL only: the program text, with editor edits
///   },
///   "planner": "fuseplanner",                                // none | hidet | fuseplanner | program | user | ""
///   "plan": { schedule::planToJson's object } | null,        // the plan on screen (user edits included)
///   "hardware": {"name": "host", "profile": {...}},          // profile: a user profile embedded (gpuProfileToJson)
///   "target": "cpu",                                         // "cpu", "cuda:0", "cuda-compile", ...
///   "options": {"threads": 2, "check": true, "fallback_reference": true, "tolerance": -1},
///   "mappings": [{"node": "MatMul_0", "grid": "spatial(4,4)", "block": "repeat(2,2)"}],
///   "schedules": [{"node": "Conv_3", "grid": "spatial(1,8,4,4)", "block": ""}],  // since version 2
///   "runs": [{
///     "time": "2026-01-05T10:11:12Z", "fingerprint": "<perf::cpuFingerprint or gpuFingerprint>",
///     "target": "cpu", "device": "Intel(R) Xeon(R) ...", "planner": "fuseplanner",
///     "plan_hash": "<16 hex digits>", "threads": 2, "checked": true, "all_passed": true,
///     "total_s": 0.00123,
///     "timing_warning": "<the run's timing warning>",     // only when its timings are unreliable
///     "kernels": [{"name": "Conv_0", "op_type": "Conv", "group": "g0", "nodes": ["Conv_0", "Relu_1"],
///                  "median_s": 1.2e-5, "flops": 4096, "bytes": 8192, "checked": true,
///                  "max_rel_error": 3.1e-7}]
///   }]
/// }
/// @endcode
/// Units: times in seconds (medians of the runner's repetitions), FLOPs as issued by the kernel IR
/// (the op registry's useful FLOPs when known, as `run` reports rates), bytes = global bytes
/// issued (CARM view, core/lower/counts.h), max_rel_error = worst relative L2 error of the
/// kernel's outputs against the reference interpreter (-1 when not checked).
///
/// Semantics
/// - In memory, Project::source.path is absolute (or as the caller gave it); on disk it is stored
///   relative to the folder of the project file, so that a project and its model can move
///   together (projects in a repository next to their models). loadProject resolves it back.
/// - A DSL project carries the program text itself: edits made in the window are saved with the
///   project even when the .tsr file was not saved; the file is only where it came from.
/// - The content hash lets a reopened project notice that its source file changed (a plan made
///   for the old graph may name nodes that are gone): loadProject warns, and the caller decides.
/// - Version 2 added "schedules" (the user schedules compiled with); a version-1 file has none and
///   opens as before. Version 1 Tessera opens a version-2 file read-only, so it cannot save the
///   schedules away.
/// - A run whose timings are unreliable (the runner's "timing" warning: other processes took the
///   CPUs while kernels were timed) keeps that warning in "timing_warning"; a run without the key
///   (every file written before it existed) had reliable timings. No version change: older
///   versions ignore the key.
/// - Unknown keys are ignored. A file whose version is newer than kProjectVersion is read as far
///   as this version understands it, marked readOnly, and saveProject refuses to overwrite it
///   (saving would drop what the newer version wrote).
///
/// Errors (support::Diagnostic, never exceptions): unreadable file; JSON syntax ("file:line:col:
/// error: ..."); "format" not "tessera-project" or a required key missing or of the wrong type
/// (the message names the key, e.g. "source.path"); a plan or profile that does not parse.
/// Thread rules: plain values and free functions; the file functions touch only the paths given
/// and may be called from any thread.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/run.h"
#include "core/schedule/fusion_plan.h"
#include "core/support/expected.h"

namespace tessera::project {

inline constexpr int kProjectVersion = 2;
inline constexpr const char* kProjectFormat = "tessera-project";
/// File name extension of project files, with the dot.
inline constexpr const char* kProjectExtension = ".tessera";

enum class SourceKind { Onnx, Dsl };
/// "onnx" / "dsl".
const char* sourceKindName(SourceKind k);

struct ProjectSource {
    SourceKind kind = SourceKind::Onnx;
    std::string path;         ///< in memory: absolute (see the file comment); on disk: relative
    std::string contentHash;  ///< hashHex of the source file's bytes when last saved ("" = unknown)
    std::string programText;  ///< DSL: the program as edited (saved with the project); ONNX: empty
};

struct ProjectHardware {
    std::string name;         ///< profile name ("host", "h200", ...); "" = the target's default
    std::string profileJson;  ///< a user profile embedded (target::gpuProfileToJson); "" = built-in by name
};

struct ProjectRunOptions {
    int threads = 2;                ///< OpenMP threads on the CPU target
    bool check = true;              ///< compare each kernel with the reference interpreter
    bool fallbackReference = true;  ///< ops without a code generator run in the reference interpreter
    double tolerance = -1;          ///< relative tolerance; < 0 = per-dtype defaults
    bool operator==(const ProjectRunOptions&) const = default;
};

/// A task mapping shown in the Task Mapping dock (its expressions, applied or not): restored into
/// the dock when the project reopens. Not compiled with; applied mappings are ScheduleOverride.
struct MappingEdit {
    std::string node;   ///< kernel / node name ("" = not tied to a node)
    std::string grid;   ///< e.g. "spatial(4,4)"
    std::string block;  ///< second level ("" = one level)
    bool operator==(const MappingEdit&) const = default;
};

/// A user schedule applied to a kernel (the Task Mapping dock's Apply, `--schedule`): unlike
/// MappingEdit it is compiled with (compileOptionsFor puts it in pipeline::CompileOptions::schedules, as
/// pipeline::mappingSchedule(node, grid, block)).
struct ScheduleOverride {
    std::string node;   ///< node name (required)
    std::string grid;   ///< grid mapping (required)
    std::string block;  ///< block mapping ("" = one level)
    bool operator==(const ScheduleOverride&) const = default;
};

/// One kernel of a recorded run.
struct KernelMeasurement {
    std::string name;                ///< kernel (node) name, the key runs are compared by
    std::string opType;
    std::string group;               ///< fusion group
    std::vector<std::string> nodes;  ///< nodes the kernel covers
    double medianSeconds = 0;        ///< median of the timed repetitions, seconds
    double flops = 0;                ///< useful FLOPs when known, else issued
    std::int64_t bytes = 0;          ///< global bytes issued
    bool checked = false;
    double maxRelError = -1;         ///< worst relative L2 error (-1 = not checked)
    bool operator==(const KernelMeasurement&) const = default;
};

/// One run saved in the project's history.
struct RunRecord {
    std::string time;          ///< ISO 8601 UTC "YYYY-MM-DDTHH:MM:SSZ"
    std::string fingerprint;   ///< perf::cpuFingerprint() or perf::gpuFingerprint(device)
    std::string target;        ///< "cpu", "cuda:0"
    std::string device;        ///< the CPU model or the GPU's name
    std::string planner;       ///< planner of the applied plan
    std::string planHash;      ///< planHash() of the applied plan
    int threads = 0;
    bool checked = false;
    bool allPassed = true;
    double totalSeconds = 0;   ///< end-to-end median, seconds
    /// The run's "timing" warning as the runner said it (CLI wording, e.g. "(--threads 1)"):
    /// its timings are unreliable. "" = reliable.
    std::string timingWarning;
    std::vector<KernelMeasurement> kernels;
    bool operator==(const RunRecord&) const = default;

    /// The kernel of that name, or nullptr.
    const KernelMeasurement* kernel(const std::string& name) const;
};

struct Project {
    ProjectSource source;
    std::string planner;                     ///< what made the plan, or what to plan with when plan is empty
    std::optional<schedule::FusionPlan> plan; ///< the plan to compile with (nullopt: planner's / the program's)
    ProjectHardware hardware;
    std::string target = "cpu";
    ProjectRunOptions options;
    std::vector<MappingEdit> mappings;
    std::vector<ScheduleOverride> schedules; ///< user schedules, one per node at most
    std::vector<RunRecord> runs;             ///< oldest first
};

/// A project read from disk.
struct LoadedProject {
    Project project;          ///< source.path resolved to an absolute path
    std::string path;         ///< the project file as given
    int fileVersion = kProjectVersion;
    /// The file is of a newer version than this Tessera writes: shown, not saved over.
    bool readOnly = false;
    bool sourceMissing = false;  ///< the source file does not exist
    bool sourceChanged = false;  ///< it exists but its bytes differ from content_hash
};

/// Reads a project file; never writes. Warnings (in the Expected's diagnostics): a newer version
/// ("... version 2 is newer than this Tessera's (1): opened read-only, saving is disabled"), a
/// missing source file (a DSL project still has its program), a changed source file.
support::Expected<LoadedProject> loadProject(const std::string& path);

/// Parses project text; `path` names the file in diagnostics and is the folder relative source
/// paths are resolved against (its parent directory).
support::Expected<LoadedProject> parseProject(const std::string& text, const std::string& path);

/// The JSON text of `project` as it is saved at `path` (source path relative to path's folder).
std::string projectToJson(const Project& project, const std::string& path);

/// Writes the project atomically (a temporary file in the same folder, then a rename). Returns
/// the path written. Errors: the existing file at `path` is a project of a newer version ("saving
/// would drop what Tessera version N wrote"), the folder is missing or not writable. The file is
/// unchanged on error.
support::Expected<std::string> saveProject(const Project& project, const std::string& path);

/// `source` as stored in a project at `projectPath`: relative to the project's folder (both made
/// absolute first; lexical, symlinks are not followed).
std::string relativeSourcePath(const std::string& projectPath, const std::string& source);
/// A stored (relative or absolute) source path resolved against the folder of `projectPath`,
/// lexically normalised.
std::string resolveSourcePath(const std::string& projectPath, const std::string& stored);

/// hashHex of a file's bytes; "" when it cannot be read.
std::string hashFile(const std::string& path);
/// The first 16 hex digits of the hash of planToJson(plan) (two runs with equal hashes ran the
/// same partition).
std::string planHash(const schedule::FusionPlan& plan);

/// A new project for a model or program file: kind by extension (.tsr = DSL, anything else
/// ONNX), path made absolute, content hash of the file, a DSL program's text read in. Errors: the
/// file cannot be read.
support::Expected<Project> newProject(const std::string& sourcePath);

/// Loads the project's model: an ONNX source from its file; a DSL source from its program text
/// (parsed as if it were the file, so relative `onnx(...)` references resolve next to it), or
/// from the file when the text is empty. Errors: a missing ONNX file ("source model '<path>' not
/// found"), import or parse errors.
support::Expected<ir::Model> loadProjectModel(const Project& project, const support::CancelToken* cancel = nullptr);

/// The hardware profile a compile uses: the embedded profile, else the named one
/// (pipeline::findHardwareProfile), else an empty profile (the target's default). Errors: an
/// unknown name, a malformed embedded profile.
support::Expected<target::GpuProfile> projectHardware(const Project& project);

/// Compile options for the project (target, threads, fallback, hardware, plan or planner, the
/// user schedules).
/// Errors: a target that is not "cpu", "cuda", "cuda:N" or "cuda-compile"; hardware errors.
support::Expected<pipeline::CompileOptions> compileOptionsFor(const Project& project);
/// Run options for the project (check, tolerance, threads, CUDA device from "cuda:N").
pipeline::RunOptions runOptionsFor(const Project& project);

/// The measurement record of a finished run: time now, this machine's fingerprint (the GPU's for
/// a CUDA run), `target` as given, the applied plan's planner and hash, each kernel's median,
/// FLOPs (useful when known), bytes and worst relative error, and the report's first "timing"
/// warning (RunRecord::timingWarning).
RunRecord makeRunRecord(const pipeline::RunReport& report, const schedule::FusionPlan& appliedPlan,
                        const std::string& target);

/// One run as the object saved in "runs" (JSON text, 2-space indent), for `project run --json`.
std::string runRecordToJson(const RunRecord& run);

/// The fingerprint makeRunRecord would record for `target` on this machine without a device
/// report (CPU targets): perf::cpuFingerprint(). For CUDA targets the GPU's is known only after a
/// run; "" then.
std::string currentFingerprint(const std::string& target);

/// The latest recorded run of `target` ("" = of any target), or nullptr.
const RunRecord* lastRun(const Project& project, const std::string& target = {});

}  // namespace tessera::project
