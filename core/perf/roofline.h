#pragma once
/// @file
/// Roofline maths: roofs (measured bandwidth and compute ceilings), the three chart modes of
/// semantics §2.4 (CARM, classic DRAM, hierarchical), and the analysis of one kernel dot against
/// a set of roofs.
///
/// Units everywhere: arithmetic intensity (AI) in FLOP/byte, bandwidth in GB/s (1e9 bytes/s),
/// compute in GFLOP/s (1e9 FLOP/s), time in seconds. Bandwidth x AI = GB/s x FLOP/byte = GFLOP/s.
///
/// Thread rules: plain values and pure functions; safe from any thread.

#include <string>
#include <vector>

#include "core/support/expected.h"

namespace tessera::perf {

/// One measured ceiling of a roofline chart.
struct Roof {
    enum class Kind { Bandwidth, Compute };

    std::string name;             ///< label shown on the chart, e.g. "L1 bandwidth", "FP32 FMA peak"
    Kind kind = Kind::Bandwidth;  ///< slanted (bandwidth) or flat (compute) roof
    std::string level;            ///< bandwidth roofs: "L1", "shared", "L2", "L3", "DRAM" or "HBM"; empty for compute roofs
    double value = 0.0;           ///< GB/s for bandwidth roofs, GFLOP/s for compute roofs; > 0
    std::string unit;             ///< "GB/s" (bandwidth) or "GFLOP/s" (compute)
    int threads = 1;              ///< CPU threads that ran the measurement (GPU roofs: 1 = the whole device); >= 1
    std::string precision;        ///< compute roofs: "fp32", "fp64", "fp16", "bf16", "tf32"; empty for bandwidth roofs
    std::string method;           ///< how it was measured, e.g. "triad sweep 64 MiB" (free text, may be empty)
};

inline constexpr const char* kBandwidthUnit = "GB/s";
inline constexpr const char* kComputeUnit = "GFLOP/s";

/// A bandwidth roof with unit "GB/s".
Roof bandwidthRoof(std::string name, std::string level, double gbPerSecond, int threads = 1, std::string method = {});
/// A compute roof with unit "GFLOP/s".
Roof computeRoof(std::string name, std::string precision, double gflopPerSecond, int threads = 1,
                 std::string method = {});

/// "bandwidth" / "compute" (the JSON spelling).
const char* roofKindName(Roof::Kind kind);

/// Position of a memory level from the core outwards: L1 0, shared 1, L2 2, L3 3, DRAM 4, HBM 5
/// (case-insensitive); -1 for an unknown level. Used to order levels and to find the slowest one.
int memoryLevelRank(const std::string& level);

/// Which arithmetic intensity a chart uses (semantics §2.4). The three are different charts; a dot
/// must always be labelled with its mode.
enum class RooflineMode {
    /// Cache-aware roofline (Ilic et al. 2014; Intel Advisor): AI = FLOPs / all bytes issued by
    /// loads and stores, whichever level served them. One dot, one slanted roof per level.
    Carm,
    /// Classic roofline (Williams et al. 2009): AI = FLOPs / DRAM (compulsory) bytes. One dot, the
    /// DRAM (or HBM) roof.
    Dram,
    /// Hierarchical / memory-level roofline (Nsight Compute): AI_m = FLOPs / bytes at level m, one
    /// dot per level that has a count.
    Hierarchical,
};

/// "carm", "dram", "hierarchical".
const char* rooflineModeName(RooflineMode mode);

/// min(ai * bandwidth, compute): the performance (GFLOP/s) attainable at intensity `ai` (FLOP/byte)
/// under a bandwidth roof (GB/s) and a compute roof (GFLOP/s). An infinite `ai` (no bytes) gives
/// `compute`; `ai` 0 gives 0. Arguments are expected to be >= 0.
double attainable(double ai, double bandwidthGBs, double computeGFlops);

/// compute / bandwidth: the AI (FLOP/byte) where the slanted roof meets the flat one. Below it a
/// kernel is bandwidth-bound, at or above it compute-bound. Bandwidth 0 gives +infinity.
double ridgePoint(double bandwidthGBs, double computeGFlops);

/// Bytes counted at one memory level (hierarchical mode).
struct LevelBytes {
    std::string level;  ///< as in Roof::level
    double bytes = 0.0;
};

/// One kernel's measured or counted work.
struct KernelPoint {
    std::string name;
    double flops = 0.0;    ///< floating-point operations executed
    /// Bytes matching the mode the point is analysed under: all bytes issued at loads/stores (Carm),
    /// DRAM/compulsory bytes (Dram). Unused in Hierarchical mode.
    double bytes = 0.0;
    double seconds = 0.0;  ///< wall time of one execution; > 0
    std::vector<LevelBytes> levelBytes;  ///< per-level counts for Hierarchical mode (others ignore it)
};

/// The point against one bandwidth roof.
struct LevelAnalysis {
    std::string level;        ///< the roof's level
    std::string roofName;     ///< the bandwidth roof used for this level
    double ai = 0.0;          ///< FLOP/byte used against this roof (the same for every level in Carm)
    double bound = 0.0;       ///< P_m = min(B_m * ai, F_peak), GFLOP/s
    std::string bindingRoof;  ///< roofName when B_m * ai < F_peak, else the compute roof's name
    double percentOfBound = 0.0;  ///< 100 * gflops / bound (may exceed 100); 0 when bound is 0
};

/// The point against all roofs of a chart.
///
/// Rules per mode (F_peak is the selected compute roof, see AnalysisOptions):
/// - Dram: ai = flops / bytes; the bandwidth roof is the slowest main-memory level present (DRAM,
///   else HBM); bound = min(B * ai, F_peak). `levels` holds that one level.
/// - Carm: ai = flops / bytes (all bytes issued); for every bandwidth level m,
///   P_m = min(B_m * ai, F_peak), listed in `levels` from L1 outwards. `bound` is the top of the
///   chart: P of the fastest bandwidth roof (the L1 roof whenever one is measured), the ceiling
///   Intel Advisor reports; bindingRoof/percentOfBound refer to it. The per-level list tells which
///   levels the dot is above (percentOfBound > 100 there means the data must come from a faster level).
/// - Hierarchical: for every level with both a count in levelBytes and a bandwidth roof,
///   ai_m = flops / bytes_m and P_m = min(B_m * ai_m, F_peak). `bound` is the smallest P_m (the
///   tightest level limits the kernel); `ai`, bindingRoof and percentOfBound are that level's.
/// In every mode a roof binds as bandwidth only when B * ai < F_peak strictly; at the ridge point
/// the compute roof is reported.
struct PointAnalysis {
    RooflineMode mode = RooflineMode::Carm;
    double ai = 0.0;       ///< FLOP/byte; +infinity when the bytes are 0
    double gflops = 0.0;   ///< flops / seconds / 1e9
    double bound = 0.0;    ///< GFLOP/s, see above
    std::string bindingRoof;  ///< name of the roof that limits `bound`
    double percentOfBound = 0.0;  ///< 100 * gflops / bound; 0 when bound is 0
    std::string computeRoof;  ///< name of the compute roof used as F_peak
    std::vector<LevelAnalysis> levels;
};

/// Which roofs of a profile apply to a point.
struct AnalysisOptions {
    /// Compute roofs considered: those of this precision ("fp32", ...); empty = every compute roof.
    /// F_peak is the highest value among the considered compute roofs (lower ones are ceilings
    /// under the peak, e.g. "no FMA").
    std::string precision;
    /// Roofs considered: those measured with this many threads; 0 = any thread count. When several
    /// bandwidth roofs share a level, the highest value is used.
    int threads = 0;
};

/// Analyses `point` against `roofs` in `mode` (rules at PointAnalysis).
/// Errors: negative or non-finite flops/bytes, seconds <= 0, no FLOPs and no bytes, no compute roof
/// (after filtering), no bandwidth roof the mode needs (Dram: no DRAM/HBM roof; Carm: none at all;
/// Hierarchical: no level with both a count and a roof), a roof with value <= 0.
/// Warnings (result still ok): hierarchical level counts without a matching roof.
support::Expected<PointAnalysis> analysePoint(const KernelPoint& point, const std::vector<Roof>& roofs,
                                              RooflineMode mode, const AnalysisOptions& options = {});

}  // namespace tessera::perf
