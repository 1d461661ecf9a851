#pragma once
/// @file
/// CPU time used by the whole machine and by one process, from Linux's /proc (proc(5)): for telling
/// whether other processes competed for the cores while kernels were timed (issue 7: timings taken
/// under load look plausible and are wrong).
///
/// Units: clock ticks (sysconf(_SC_CLK_TCK) per second) summed over every CPU.
/// Errors: nullopt where /proc is missing or unreadable (not Linux, a process that has exited).
/// Thread rules: reentrant; reads files only.

#include <cstdint>
#include <optional>
#include <sys/types.h>

namespace tessera::support {

struct SystemCpuTimes {
    std::uint64_t total = 0;  ///< every state of every CPU (the first "cpu" line of /proc/stat)
    std::uint64_t busy = 0;   ///< total minus idle and iowait
};

std::optional<SystemCpuTimes> systemCpuTimes();
/// utime + stime of process `pid` (all its threads), from /proc/PID/stat.
std::optional<std::uint64_t> processCpuTicks(pid_t pid);

/// Share of the machine's CPU capacity (0..1) that processes other than `ours` used between two
/// readings: (busy delta - our ticks) / total delta, clamped to [0, 1]; 0 when total delta is 0.
double othersShare(const SystemCpuTimes& before, const SystemCpuTimes& after, std::uint64_t ourTicks);

}  // namespace tessera::support
