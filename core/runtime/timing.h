#pragma once
/// @file
/// Timing statistics for kernel measurements, and the cache facts that decide input rotation.
///
/// Samples are wall-clock durations in seconds measured with std::chrono::steady_clock around one
/// call (one kernel launch or one pass over the whole launch sequence). Quartiles use linear
/// interpolation between order statistics (NumPy's default "linear" method): for sorted samples
/// x[0..n-1], quantile p is x[k] + f * (x[k+1] - x[k]) with k + f = p * (n - 1).
///
/// Thread rules: pure functions (lastLevelCacheBytes() reads the system once and caches the value;
/// safe from any thread).

#include <cstdint>
#include <functional>
#include <vector>

namespace tessera::runtime {

/// Summary of repeated measurements, all in seconds. With no samples every field is 0.
struct TimingStats {
    double median = 0;
    double min = 0;
    double max = 0;
    double q1 = 0;    ///< 25th percentile
    double q3 = 0;    ///< 75th percentile
    double mean = 0;
    std::int64_t reps = 0;  ///< number of samples
};

/// Statistics of `samples` (seconds; order does not matter).
TimingStats computeTimingStats(std::vector<double> samples);

/// Linear-interpolation quantile p in [0,1] of already sorted samples (0 when empty).
double sortedQuantile(const std::vector<double>& sorted, double p);

/// When to stop repeating a measurement.
struct RepeatPolicy {
    int warmup = 1;            ///< untimed calls first
    int minReps = 3;           ///< at least this many timed calls...
    int maxReps = 1000;        ///< ...and at most this many,
    double minSeconds = 0.1;   ///< repeating until the timed calls add up to this (after minReps)
};

/// Calls `body(rep)` policy.warmup times untimed (rep = 0, 1, ...) and then repeatedly, timing each
/// call, until at least minReps samples exist and their sum reaches minSeconds, or maxReps samples
/// exist. `rep` counts every call (warm-up included), so a caller can cycle rotated inputs with it.
std::vector<double> measureRepeated(const RepeatPolicy& policy, const std::function<void(std::int64_t rep)>& body);

/// Size in bytes of the last-level cache as the OS reports it: sysconf(_SC_LEVEL3_CACHE_SIZE)
/// (or level 2 when there is no level 3), else the largest cpu0 cache under
/// /sys/devices/system/cpu/cpu0/cache/index*/size. 32 MiB when nothing can be read.
std::int64_t lastLevelCacheBytes();

/// How many copies of a launch's buffers to cycle through so that the copies together exceed
/// `rotateBytes` (so each repetition reads its inputs from memory, not from cache).
/// 1 (no rotation) when launchBytes >= rotateBytes, rotateBytes <= 0 or launchBytes <= 0.
/// At most maxCopies, and the extra copies ((copies - 1) * launchBytes) stay within memoryCapBytes.
int rotationCopies(std::int64_t launchBytes, std::int64_t rotateBytes, int maxCopies = 64,
                   std::int64_t memoryCapBytes = std::int64_t{2} << 30);

}  // namespace tessera::runtime
