#pragma once
/// @file
/// `tessera-cli report MODEL --target cpu|cuda [--roofline FILE.png|.svg|.pdf]
/// [--mode carm|dram|hierarchical] [--profile FILE] [--threads N] [--reps N] [--json]`:
/// runs the model as `tessera-cli run` does (same loading, compiling and runner; kernels timed,
/// not checked), places every generated kernel on a roofline (core/pipeline/roofline_points.h)
/// and prints the per-kernel table: kernel, op, AI (FLOP/byte, in the chosen mode), GFLOP/s,
/// bound (GFLOP/s), % of bound and the binding roof. With --roofline it also draws the chart
/// (views/roofline) into the file, headless: without a display the Qt platform is "offscreen".
///
/// Roofs: --profile FILE (a machine profile, core/perf/machine_profile.h), else for the CPU the
/// profile saved for this machine (`tessera-cli roofline measure --target cpu --save`), else none:
/// the table then has no bounds and the chart a banner, and a note goes to stderr. The roofs drawn
/// are perf::chartRoofs of the profile for the run's thread count and fp32.
///
/// `--json` prints one object: {"ok": true, "model", "target", "mode", "ai_definition", "threads",
/// "profile": {"fingerprint", "target", "measured_at", "file"} | null, "roofs": [{"name", "kind",
/// "level" | "precision", "value", "unit", "threads"}], "kernels": [{"name", "op_type", "ops",
/// "group", "flops", "seconds", "gflops", "issued_bytes", "compulsory_bytes", "level_bytes":
/// {level: bytes}, "ai" (the mode's, or the binding level's in hierarchical mode), and when
/// analysed "bound", "percent_of_bound", "binding_roof", "levels": [{"level", "ai", "bound",
/// "binding_roof", "percent_of_bound"}], else "error"}], "chart": FILE | null}.
///
/// Built only with the GUI libraries (-DTESSERA_GUI=ON); otherwise `report` says so and exits 2.
///
/// Exit codes: 0 success, 2 bad input (model, options, profile, unknown chart format, a chart that
/// cannot be written), 4 a kernel crashed or timed out in the runner, 1 internal error.
/// Thread rules: main thread only (it creates the QApplication when none exists).

#include <iosfwd>
#include <string>
#include <vector>

namespace tessera::cli {

struct ReportCmdOptions {
    std::string modelPath;
    std::string target = "cpu";     ///< cpu or cuda (cuda:N)
    std::string roofline;           ///< chart file (.png, .svg, .pdf); empty = table only
    std::string mode = "carm";      ///< carm, dram (classic) or hierarchical
    std::string profile;            ///< machine profile JSON; empty = this machine's saved one
    bool json = false;
    int threads = 2;
    int reps = 0;                   ///< 0 = until 0.1 s per kernel (at least 3 reps)
    bool fallbackReference = false;
    int width = 1200, height = 750; ///< chart size in pixels (PDF/SVG: points)
    std::vector<std::string> inputs;  ///< NAME=FILE.npy, as `run --input`
    std::string plan;                 ///< as `run --plan`: planner name or plan file
    std::string hw;                   ///< as `run --hw`: hardware profile for the planner
};

/// The message `report` prints in a build without the GUI libraries.
inline constexpr const char* kReportNeedsGui =
    "this build has no GUI libraries (configure with -DTESSERA_GUI=ON)";

int runReportCommand(const ReportCmdOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
