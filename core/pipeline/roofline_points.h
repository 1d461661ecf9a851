#pragma once
/// @file
/// Roofline points of a run: one perf::KernelSample per generated kernel of a RunReport, the
/// KernelPoint of each in a chart mode, and each kernel's analysis against a profile's roofs
/// (issue 7, item 2; semantics §2.4).
///
/// What is counted (from core/lower/counts.h, the kernel IR's static counts):
/// - FLOPs: the op's useful FLOPs (KernelReport::usefulFlops, the op registry's count) when known,
///   else the FLOPs the kernel IR issues. The same count is used for AI and for GFLOP/s, so a dot
///   lies on the line of the bandwidth it achieved. Time: the median of the timed repetitions.
/// - CARM bytes: every global byte the kernel loads or stores (KernelReport::bytes).
/// - DRAM bytes: compulsory bytes, each kernel input read once and each output written once
///   (KernelReport::compulsoryBytes).
/// - Hierarchical levels (LevelBytes, only levels the counts say something about; L2/L3 on the
///   CPU would need a cache model and are left out):
///   - CPU target: "L1" = global + shared load/store bytes (every access the kernel issues to
///     memory passes through L1; Local-scope scalars are registers and are not counted);
///     "DRAM" = compulsory bytes.
///   - CUDA target: "shared" = shared-memory load/store bytes (only when > 0); "L2" = global
///     load/store bytes (what the kernel issues to the memory system; an upper bound of the L2
///     traffic since L1 may serve some loads); "HBM" = compulsory bytes.
///   Levels are listed from the core outwards. perf::analyseSample renames DRAM/HBM to whichever
///   the profile has.
/// - Reference steps (nodes run by the reference interpreter) are not kernels Tessera generated:
///   they have no counts and get no point.
/// - Fusion group: a kernel that covers more than one node is its own group (named after the
///   kernel); a kernel of one node has none (views colour it by op type). fusionKind is the kind
///   of the plan group (CompiledModel::plan) the kernel's step computes, e.g. "dw-pw".
///
/// Thread rules: pure functions; safe from any thread.

#include <optional>
#include <vector>

#include "core/perf/kernel_points.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/run.h"

namespace tessera::pipeline {

/// One sample per generated kernel of `report`, in execution order. `cm` is the model the report
/// ran (its steps give the per-scope counts and the target). A kernel whose step cannot be found
/// in `cm` keeps issued/compulsory bytes and gets no hierarchical levels.
std::vector<perf::KernelSample> kernelSamples(const RunReport& report, const CompiledModel& cm);

/// perf::kernelPoint of every sample of kernelSamples(report, cm) in `mode`.
std::vector<perf::KernelPoint> kernelPoints(const RunReport& report, const CompiledModel& cm, perf::RooflineMode mode);

/// A kernel and its place on a chart.
struct KernelRoofline {
    perf::KernelSample sample;
    perf::KernelPoint point;                      ///< in the analysed mode
    std::optional<perf::PointAnalysis> analysis;  ///< empty when the analysis failed
    support::DiagnosticList diagnostics;          ///< why it failed, or its warnings
};

/// Every kernel of the run analysed against `roofs` (usually perf::chartRoofs of a profile) in
/// `mode` with perf::analyseSample. Never fails as a whole: a kernel that cannot be analysed (no
/// FLOPs and no bytes, no roof the mode needs) has an empty `analysis` and says why.
std::vector<KernelRoofline> analyseKernels(const RunReport& report, const CompiledModel& cm,
                                           const std::vector<perf::Roof>& roofs, perf::RooflineMode mode,
                                           const perf::AnalysisOptions& options = {});

}  // namespace tessera::pipeline
