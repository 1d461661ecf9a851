#pragma once
/// @file
/// `tessera-cli run` and `tessera-cli compile`: compile every kernel of a model or program and
/// run, time and check it in tessera-runner (core/pipeline/engine.h).
///
/// run: prints a per-kernel table (kernel, ops, FLOPs, bytes issued, arithmetic intensity, median
/// time, GFLOP/s, GB/s, error) and the end-to-end time, or with `--json` one object
/// {"model", "target", "threads", "kernels": [{"name", "op_type", "ops", "reference", "flops"
/// (issued by the kernel IR), "useful_flops" (the op registry's count, -1 unknown; GFLOP/s, the
/// arithmetic intensity and the table's FLOPs column use it when known, as the roofline's dots
/// do), "bytes" (issued), "compulsory_bytes", "arithmetic_intensity", "time_s", "time_min_s", "time_q1_s",
/// "time_q3_s", "reps", "gflops", "gbps", ["max_rel_error", "max_abs_error", "passed",
/// "first_bad_index"]}], "total_time_s", ["checked", "all_passed"], "outputs": [{"name",
/// "dtype", "shape", "file"}], "compile": {"cache_hit", "seconds", "compiler", ["arch"]}, and for
/// `--target cuda` "device": {"name", "ordinal", "sms", "memory_bytes", "arch"}}.
/// When the run fails, `--json` prints {"ok": false, "exit_code", "errors": [lines]} (the errors
/// also go to stderr). Missing inputs are filled from a fixed seed; `--output-dir DIR` writes each graph output to
/// DIR/<output name>.npy (the output's name kept as UTF-8; only '/', NUL and control characters
/// replaced). `--expect NAME=FILE.npy` compares graph output NAME with the file (per-dtype
/// tolerances, or --tolerance) and `--check` compares every graph output with the reference
/// interpreter run on the whole model; their verdicts are printed first ("outputs: ...") and a
/// mismatch exits 3. JSON: "output_checks": [{"name", "against", "passed", "rel_l2", "max_abs",
/// "non_finite", "summary"}].
///
/// compile: `--emit cpp` prints the generated C++ module; `--emit ir` the kernel IR of every
/// kernel. `--target cuda`: `--emit cuda` the CUDA C module, `--emit ptx` its PTX (NVRTC, for
/// `--arch`, default sm_90), `--emit sass` the disassembly (cuobjdump/nvdisasm), `--emit ir`; with
/// `--output-dir DIR` one file per kernel (each kernel compiled as its own module), named after
/// the kernel, extension .cu, .ptx, .cubin, .sass or .ir (`--emit cubin` needs --output-dir).
///
/// Exit codes: 0 success, 2 bad input (model, inputs, unsupported op, compile errors of generated
/// code, missing compiler), 3 a kernel or a graph output outside tolerance (--check, --expect), 4 a kernel crashed or timed
/// out in the runner, 1 internal error.
/// Thread rules: none (runs on the caller's thread).

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace tessera::ir {
struct TensorData;
struct Model;
}
namespace tessera::lower {
enum class Target;
}
namespace tessera::pipeline {
struct CompileOptions;
struct PreparedModel;
}
namespace tessera::schedule {
struct FusionPlan;
}

namespace tessera::cli {

constexpr int kExitCheckFailed = 3;
constexpr int kExitKernelFault = 4;

/// `--plan` and `--hw` of run, compile and report: a planner name (none, hidet, fuseplanner) or a
/// plan JSON file (`plan --output`), and a hardware profile name or JSON file (default h200).
/// `--schedule NODE=GRID[;BLOCK]` (run, compile; repeatable): a user schedule of that node
/// (core/pipeline/user_schedule.h), the CLI twin of the Task Mapping dock's Apply; a malformed
/// spec is bad input, a mapping that does not fit the node fails the compile naming the node.
struct FusionChoice {
    std::string plan;
    std::string hw;
    std::vector<std::string> schedules;
};

struct RunCmdOptions {
    std::string modelPath;
    std::string target = "cpu";
    std::vector<std::string> inputs;  ///< NAME=FILE.npy
    std::vector<std::string> expects; ///< NAME=FILE.npy: graph output NAME must match the file
    std::string outputDir;
    bool check = false;
    int reps = 0;                     ///< 0 = until 0.1 s per kernel (at least 3 reps)
    bool json = false;
    int threads = 2;
    bool fallbackReference = false;
    std::string cxx;                  ///< host compiler; empty = $TESSERA_CXX or c++
    std::string cxxFlags;             ///< replaces the default flags when set (space separated)
    double timeoutSeconds = 120;
    double tolerance = -1;            ///< relative tolerance; < 0 = per dtype defaults
    bool noTiming = false;
    std::string arch;                 ///< cuda: NVRTC architecture; empty = the device's own
    int device = -1;                  ///< cuda: device ordinal; -1 = not given (device 0)
    FusionChoice fusion;
    /// Print the run's per-kernel progress on stderr ("progress: running kernels 12/100"), the
    /// CLI twin of the GUI's progress bar (pipeline::RunOptions::kernelProgress).
    bool progress = false;
};

struct CompileCmdOptions {
    std::string modelPath;
    std::string target = "cpu";
    std::string emit;                 ///< cpu: cpp (default) | ir; cuda: cuda (default) | ptx | cubin | sass | ir
    std::string arch = "sm_90";       ///< cuda: NVRTC architecture (sm_XX: PTX + CUBIN; compute_XX: PTX); cpu: must stay the default
    std::string outputDir;            ///< cuda: one file per kernel (<kernel>.cu/.ptx/.cubin/.sass/.ir)
    std::vector<std::string> inputs;
    int threads = 2;
    bool fallbackReference = false;
    FusionChoice fusion;
};

int runRunCommand(const RunCmdOptions& options, std::ostream& out, std::ostream& err);

/// Runs `impl(out, err)`; with `json`, a failure (an exit code other than ok or check failed)
/// still prints one JSON object {"ok": false, "exit_code", "errors": [stderr lines]} on `out`
/// (scripts parse stdout), and the errors go to `err` as usual. Used by `run` and `project run`.
int withJsonFailureObject(bool json, std::ostream& out, std::ostream& err,
                          const std::function<int(std::ostream& out, std::ostream& err)>& impl);

/// `run`'s loading, shared with `compile`, `report` and `plan`: loads a model or program (DSL
/// errors shown with the source line and a caret, load warnings printed) and reads the inputs
/// given as NAME=FILE.npy specs into `given` (one per runtime input, an Undefined dtype where none
/// was given); an input Tessera would fill above 4 GiB is bad input, and the inputs it fills with
/// symbolic extents get a note (taken as 1). shapesOnly: for a compile that runs nothing, inputs
/// whose values decide no shape are read as shapes only (.npy headers), so a batch-32 input costs
/// no more than batch 1. Returns an exit code: 0 ok, 2 bad input (errors on `err`).
int loadModelAndInputs(const std::string& modelPath, const std::vector<std::string>& specs,
                       std::shared_ptr<const ir::Model>& model, std::vector<ir::TensorData>& given, std::ostream& err,
                       bool shapesOnly = false);

/// pipeline::prepare of `model` for `given` (shapesOnly: PrepareOptions::shapesOnly), its errors
/// on `err`. Returns an exit code: 0 ok (`prepared` set), 2 bad input.
int prepareModel(std::shared_ptr<const ir::Model> model, const std::vector<ir::TensorData>& given, bool shapesOnly,
                 std::shared_ptr<const pipeline::PreparedModel>& prepared, std::ostream& err);

/// What `run`, `compile` and `report` compile: loadModelAndInputs, the compile options for
/// `target` (`fusion` picks the fusion plan: an unknown planner, unreadable plan file or unknown
/// profile is bad input), then prepareModel. Returns an exit code: 0 ok (`prepared` and `copts`
/// set), 2 bad input (errors on `err`).
int loadForCompile(const std::string& modelPath, const std::vector<std::string>& inputSpecs, int threads,
                   bool fallbackReference, lower::Target target, const FusionChoice& fusion, bool shapesOnly,
                   std::shared_ptr<const pipeline::PreparedModel>& prepared, pipeline::CompileOptions& copts,
                   std::ostream& err);
int runCompileCommand(const CompileCmdOptions& options, std::ostream& out, std::ostream& err);

/// Bytes in binary units, as the GUI writes them: "512 B", "227.0 KiB", "1.65 MiB", "2.00 GiB"
/// (below 1024 whole bytes; KiB with one decimal; MiB and GiB with two); "-" for a negative count.
std::string bytesText(std::int64_t bytes);

/// The hardware profile a plan is made for and checked against when no --hw is given: "host"
/// (this CPU, pipeline::hostProfile) for the CPU target, "h200" for CUDA ("cuda", "cuda:N").
std::string defaultProfileName(const std::string& target);

/// What `run` says of the plan it compiled with (after "fusion plan: "): for a planner
/// "fuseplanner for host"; for a plan file its name, what it was made for and the profile it was
/// checked against: "plan.json (made by fuseplanner for h200), checked against host". The profile
/// is `fusion.hw`'s or the target's default (defaultProfileName).
std::string fusionPlanSource(const FusionChoice& fusion, const schedule::FusionPlan& plan, const std::string& target);

}  // namespace tessera::cli
