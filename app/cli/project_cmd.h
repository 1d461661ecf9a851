#pragma once
/// @file
/// `tessera-cli project`: the command-line twin of the window's projects (core/project/project.h).
///
/// - `project new MODEL -o FILE [--plan PLANNER|FILE] [--hw PROFILE|FILE] [--target T] [--force]`
///   writes a project for a model or program: the source path relative to FILE's folder and its
///   content hash (a DSL program's text too), the planner (none, hidet, fuseplanner; or a plan
///   file's plan, stored in the project), the hardware profile (a name, or a JSON profile file
///   embedded), the target (cpu, cuda, cuda:N). An existing FILE is kept unless --force.
/// - `project show FILE [--json]` prints the source (and whether it is missing or changed), plan,
///   hardware, target, options, mappings and the run history with the last run's kernels;
///   `--json` prints the project object as saved plus "file", "file_version", "read_only",
///   "source_missing", "source_changed".
/// - `project run FILE [--json] [--save] [--reps N]` compiles and runs the project's source with its
///   plan, hardware, target and options (inputs from the fixed seed, as `run`), and prints each
///   kernel's median beside the last recorded run of the same target: last median and the ratio
///   this / last (< 1 = faster now); a note when that run came from another machine fingerprint
///   or another plan. `--save` appends the run to the project's history (refused, exit 2, before
///   running, for a project of a newer version: read-only). `--json` prints {"ok", "project",
///   "target", "kernels": [{"name", "op_type", "nodes", "time_s", "last_time_s", "ratio",
///   "max_rel_error", "passed"}], "total_time_s", "last_total_time_s", "last_run": {"time",
///   "fingerprint", "same_machine", "same_plan"} | null, "saved", "run": the record}.
///
/// Exit codes: 0 success, 2 bad input (project file, source, plan, profile, target; --save of a
/// read-only project; a save that fails), 3 a kernel outside tolerance (the run is still saved
/// with --save), 4 a kernel crashed or timed out, 1 internal error.
/// Thread rules: none (runs on the caller's thread).

#include <iosfwd>
#include <string>

namespace tessera::cli {

struct ProjectNewCmdOptions {
    std::string modelPath;
    std::string output;
    std::string plan;    ///< planner name or plan JSON file; empty = the default (a program's fuse statements, else none)
    std::string hw;      ///< profile name or JSON file; empty = the target's default
    std::string target = "cpu";
    bool force = false;  ///< overwrite an existing output file
};

struct ProjectShowCmdOptions {
    std::string file;
    bool json = false;
};

struct ProjectRunCmdOptions {
    std::string file;
    bool json = false;
    bool save = false;
    int reps = 0;  ///< 0 = until 0.1 s per kernel (at least 3), as `run`
};

int runProjectNew(const ProjectNewCmdOptions& options, std::ostream& out, std::ostream& err);
int runProjectShow(const ProjectShowCmdOptions& options, std::ostream& out, std::ostream& err);
int runProjectRun(const ProjectRunCmdOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
