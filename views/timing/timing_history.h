#pragma once
/// @file
/// The Timings dock's history: the runs of this session (oldest first) as the app keeps them
/// (bounded, cleared when another model is loaded), and the series the history chart draws for
/// one kernel of the latest run.
///
/// A kernel is followed across runs with matchKernels() (timing_table_model.h): every earlier
/// run is matched against the latest run's kernels, by name, else by the set of nodes it covers
/// (a plan change that renames a fused kernel keeps its history). A run without a match is a gap.
///
/// Thread rules: plain values; build them anywhere, views read them on the UI thread.

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::views {

/// One kernel's time in one run (seconds; 0 and reps 0 when not timed).
struct TimingHistoryKernel {
    std::string kernel;
    std::vector<std::string> ops;  ///< nodes the kernel covers
    double medianSeconds = 0;
    double q1Seconds = 0;          ///< 25th percentile (0 unknown)
    double q3Seconds = 0;          ///< 75th percentile (0 unknown)
    std::int64_t reps = 0;
};

struct TimingHistoryRun {
    int number = 0;               ///< 1, 2, ... in this session (stays with the run when older ones drop out)
    std::string plan;             ///< planner and target, e.g. "planner hidet · CPU, 2 threads"
    std::string time;             ///< when it finished, "14:03:12"
    std::vector<TimingHistoryKernel> kernels;
    double totalSeconds = 0;      ///< end to end, median (0 not timed)
    double totalQ1Seconds = 0;
    double totalQ3Seconds = 0;
};

struct TimingHistory {
    std::vector<TimingHistoryRun> runs;  ///< oldest first
};

/// One run's point of a series.
struct TimingHistoryPoint {
    int run = 0;                  ///< TimingHistoryRun::number
    bool present = false;         ///< false: the kernel is missing from (or untimed in) the run: a gap
    double seconds = 0;           ///< median
    double q1Seconds = 0;
    double q3Seconds = 0;
    std::string kernel;           ///< the kernel's name in that run (differs when matched by nodes)
    std::string plan;             ///< the run's TimingHistoryRun::plan
    bool planDiffers = false;     ///< plan differs from the latest run's
};

/// The series of `kernel` (a kernel of the latest run) over `history`, one point per run; empty
/// when the history is empty or the latest run has no such kernel. An empty `kernel` gives the
/// end-to-end series (present where the run was timed).
std::vector<TimingHistoryPoint> historySeries(const TimingHistory& history, const std::string& kernel);

}  // namespace tessera::views
