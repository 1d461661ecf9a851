#pragma once
/// @file
/// Kernel samples: everything a roofline chart needs about one measured kernel, in every chart
/// mode at once (so that a view can switch modes without going back to the run), and the roof
/// selection a chart draws.
///
/// A KernelSample is built from a run by core/pipeline/roofline_points.h (perf must not depend on
/// pipeline); this file holds the Qt-free value type and the pure functions over it, which the
/// roofline view (views/roofline) and the `report` command share.
///
/// Units: FLOPs and bytes are counts per execution of the kernel; seconds are the median time of
/// one execution; AI in FLOP/byte; performance in GFLOP/s; bandwidth in GB/s (1e9 bytes/s).
///
/// Thread rules: plain values and pure functions; safe from any thread.

#include <string>
#include <vector>

#include "core/perf/roofline.h"
#include "core/support/expected.h"

namespace tessera::perf {

/// One kernel of a run, with the byte counts of every chart mode.
struct KernelSample {
    std::string name;                ///< kernel (node) name; unique within a run
    std::string opType;              ///< op of the kernel's anchor node, e.g. "Conv"
    std::vector<std::string> ops;    ///< every node the kernel covers (one unless fused)
    /// Fusion group the kernel belongs to; empty when it has none (a view then colours it by
    /// opType).
    std::string group;
    /// Kind of that fusion group as schedule::fusionKindName spells it ("dw-pw",
    /// "prologue-epilogue", ...); empty for a kernel of one node or when the kind is unknown.
    /// Views colour fused kernels by it ("fused dw-pw") rather than by their own name.
    std::string fusionKind;
    double flops = 0.0;              ///< FLOPs of one execution (used for both AI and GFLOP/s)
    double seconds = 0.0;            ///< median time of one execution, > 0 for a plotted point
    double issuedBytes = 0.0;        ///< every global byte the kernel loads or stores (CARM)
    double compulsoryBytes = 0.0;    ///< each input read once + each output written once (DRAM view)
    /// Bytes per memory level for the hierarchical chart (level names as in Roof::level), from the
    /// outermost level counts exist for; see core/pipeline/roofline_points.h for the mapping.
    std::vector<LevelBytes> levelBytes;
    bool exactCounts = true;         ///< false when a static count had to be bounded
};

/// The KernelPoint of `sample` in `mode`: bytes = issuedBytes (Carm) or compulsoryBytes (Dram);
/// levelBytes copied (Hierarchical reads them, the others ignore them).
KernelPoint kernelPoint(const KernelSample& sample, RooflineMode mode);

/// flops / seconds / 1e9; 0 when seconds <= 0.
double sampleGflops(const KernelSample& sample);

/// The dots of `sample` in `mode`, as (AI, level) pairs: one dot (level empty) in Carm and Dram
/// mode, one per levelBytes entry in Hierarchical mode (in the order given). A dot whose bytes are
/// 0 has AI +infinity (a view leaves it out).
struct SampleDot {
    double ai = 0.0;
    std::string level;
};
std::vector<SampleDot> sampleDots(const KernelSample& sample, RooflineMode mode);

/// The roofs a chart draws and analyses against, chosen from a profile's roofs:
/// - threads: within each group of roofs (bandwidth: same level; compute: same precision and
///   method, the method being the first word of Roof::method, e.g. "fma"), the roofs measured
///   with exactly `threads` threads; when the group has none, those of the nearest thread count
///   (ties: the larger count). `threads` <= 0 keeps the largest count of each group.
/// - bandwidth: one roof per level (the highest value among the chosen ones: load, copy, triad).
/// - compute: only roofs of `precision` ("fp32", ...; case-insensitive), one per method (the
///   highest); when no roof has that precision, or `precision` is empty, every precision is kept.
/// Output order: bandwidth roofs from L1 outwards (memoryLevelRank; unknown levels last), then
/// compute roofs from the highest value down.
std::vector<Roof> chartRoofs(const std::vector<Roof>& roofs, int threads, const std::string& precision = "fp32");

/// The roofs a chart of `mode` draws: every bandwidth roof of `roofs` for Carm and Hierarchical;
/// for Dram only the DRAM roof (else HBM). Compute roofs always.
std::vector<Roof> roofsForMode(const std::vector<Roof>& roofs, RooflineMode mode);

/// analysePoint(kernelPoint(sample, mode), roofs, mode, options), after naming the sample's
/// main-memory level like the profile does: a "DRAM" count is analysed against an "HBM" roof when
/// the roofs have HBM but no DRAM, and the other way round. Errors as analysePoint.
support::Expected<PointAnalysis> analyseSample(const KernelSample& sample, const std::vector<Roof>& roofs,
                                               RooflineMode mode, const AnalysisOptions& options = {});

/// Short label of a roof for a chart: bandwidth "<level> <value> GB/s" (e.g. "DRAM 80 GB/s"),
/// compute the name without a trailing " peak" then "<value> GFLOP/s" (e.g. "FP32 FMA 539 GFLOP/s").
/// Values are printed with 3 significant digits, at least the integer part.
std::string roofLabel(const Roof& roof);

/// `value` with 3 significant digits and no exponent for 0.001 <= |v| < 1e7 (e.g. "539", "80.2",
/// "0.125", "12300"); otherwise in exponent form ("1.2e-05").
std::string formatSignificant(double value);

/// A sentence naming the AI definition of `mode`, for chart titles and reports:
/// Carm "CARM: AI = FLOPs / all bytes issued by loads and stores",
/// Dram "Classic (DRAM): AI = FLOPs / compulsory DRAM bytes",
/// Hierarchical "Hierarchical: AI per level = FLOPs / bytes at that level".
std::string modeDefinition(RooflineMode mode);

/// Parses "carm", "dram", "hierarchical" (case-insensitive); error otherwise.
support::Expected<RooflineMode> parseRooflineMode(const std::string& text);

}  // namespace tessera::perf
