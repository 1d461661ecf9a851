#pragma once
/// @file
/// Turns the results of a compile and a run (core/pipeline/compile.h, run.h) into what the views
/// draw: the graph's kernel-status map, the Timings table snapshot, and the Code dock's module
/// title and line ranges. Pure functions, shared by the main window and its tests.
///
/// Status rules (node name -> views::KernelStatus):
/// - after a compile: every Kernel step's node (and the members fused into it) is Compiled, every Reference step's node is
///   Reference; operators of the shown graph with no step (folded into constants while
///   specialising) are Folded;
/// - after a run: Reference steps stay Reference; checked kernels are Passed or Failed;
///   unchecked kernels are Ran.
/// - a runner fault naming a kernel ("kernel 'X' crashed: ...", "kernel 'X' did not finish ...")
///   marks X Failed on top of the compile statuses (faultKernel()).
///
/// Thread rules: pure; any thread.

#include <map>
#include <string>
#include <vector>

#include <QString>

#include "core/ir/graph.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/run.h"
#include "core/perf/kernel_points.h"
#include "core/project/project.h"
#include "core/schedule/fusion_plan.h"
#include "core/support/diagnostic.h"
#include "views/graph/kernel_status.h"
#include "views/timing/timing_table_model.h"

namespace tessera::app {

/// Statuses after a compile. `shown` is the graph on screen (the model before specialisation):
/// its operators without a step are Folded.
views::KernelStatusMap compileStatuses(const pipeline::CompiledModel& compiled, const ir::Graph& shown);

/// Statuses after a run: compileStatuses() overridden by the report (see file comment). The
/// tooltip detail names the median time and, when checked, the error ("0.123 ms · relL2 1.2e-07").
views::KernelStatusMap runStatuses(const pipeline::CompiledModel& compiled, const pipeline::RunReport& report,
                                   const ir::Graph& shown);

/// The Timings table for a report: one row per KernelReport in order, status as runStatuses().
/// `compileNote`: from the report's library ("compile cache hit" / "compile 1.23 s") or, for a CUDA
/// run, its NVRTC module ("NVRTC sm_90 cache hit" / "NVRTC sm_90 1.23 s").
views::TimingSnapshot timingSnapshot(const pipeline::RunReport& report, const pipeline::RunOptions& options);

/// The run's "timing" warning as the GUI shows it: the CLI's "(--threads 1)" becomes the
/// Preferences setting, and a run at `threads` == 1 is not told to use fewer threads.
std::string guiTimingWarning(const std::string& message, int threads);
/// guiTimingWarning of the report's first "timing" warning ("" when its timings are not suspect):
/// what the Timings dock and the Fusion Plan table say after "Timings unreliable:".
std::string runTimingWarning(const pipeline::RunReport& report);
/// The run's target as the Timings comparison names it: "CUDA" or "CPU".
std::string runTargetName(const pipeline::RunReport& report);

/// The kernel named in a runner fault message ("kernel 'X' crashed: ...", "kernel 'X' did not
/// finish ...", "kernel 'X' ended the runner ..."), empty when none.
std::string faultKernel(const std::string& message);

/// The node a run error is about: faultKernel(message), else the name in a `where` of the form
/// "node 'X' (Op)" (lowering and reference-interpreter errors); empty when neither.
std::string diagnosticNode(const support::Diagnostic& diagnostic);

/// "dw_pw_block.cpp · 3 kernels · 1 reference step · 212 lines" (".cu" for a CUDA module).
QString moduleTitle(const pipeline::CompiledModel& compiled);

/// The PTX pane's title: "PTX · sm_90 · 812 lines".
QString ptxTitle(const runtime::cuda::CudaCompiled& module);

/// How the PTX was made: "NVRTC 310.0 ms" or "NVRTC cache hit".
QString nvrtcNote(const runtime::cuda::CudaCompiled& module);

/// The step computing node `name`, null when none (folded or not compiled).
const pipeline::CompiledStep* stepForNode(const pipeline::CompiledModel& compiled, const std::string& name);

/// A project's stored run as the Timings dock shows it ("recorded <time> on <device> (from the
/// project)"; medians only; a timing warning recorded with it shown as after the run).
views::TimingSnapshot recordTimingSnapshot(const project::RunRecord& record);
/// The stored run's kernels as roofline dots (CARM: the record keeps the issued bytes); kernels
/// without a time or bytes are left out.
std::vector<perf::KernelSample> recordSamples(const project::RunRecord& record);
/// The stored run's median seconds per group of `plan` (kernels matched to groups as Timings
/// matches runs, views::matchKernels); groups without a kernel are absent.
std::map<QString, double> recordPlanTimes(const project::RunRecord& record, const schedule::FusionPlan& plan);

}  // namespace tessera::app
