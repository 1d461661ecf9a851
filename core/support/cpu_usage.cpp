#include "core/support/cpu_usage.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tessera::support {

std::optional<SystemCpuTimes> systemCpuTimes() {
    std::ifstream in("/proc/stat");
    std::string line;
    if (!in || !std::getline(in, line) || line.rfind("cpu ", 0) != 0) return std::nullopt;
    std::istringstream fields(line.substr(4));
    std::vector<std::uint64_t> v;
    for (std::uint64_t x; fields >> x;) v.push_back(x);
    // user nice system idle iowait irq softirq steal [guest guest_nice: already inside user/nice]
    if (v.size() < 4) return std::nullopt;
    SystemCpuTimes t;
    for (std::size_t i = 0; i < v.size() && i < 8; ++i) t.total += v[i];
    const std::uint64_t idle = v[3] + (v.size() > 4 ? v[4] : 0);
    t.busy = t.total >= idle ? t.total - idle : 0;
    return t;
}

std::optional<std::uint64_t> processCpuTicks(pid_t pid) {
    if (pid <= 0) return std::nullopt;
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!in || !std::getline(in, text)) return std::nullopt;
    // The command name (field 2) is in parentheses and may hold spaces: fields follow the last ')'.
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream fields(text.substr(close + 1));
    std::string f;
    // After ')': state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15)
    std::uint64_t utime = 0, stime = 0;
    for (int field = 3; field <= 15 && fields >> f; ++field) {
        if (field == 14) utime = std::stoull(f);
        if (field == 15) stime = std::stoull(f);
    }
    return utime + stime;
}

double othersShare(const SystemCpuTimes& before, const SystemCpuTimes& after, std::uint64_t ourTicks) {
    if (after.total <= before.total) return 0.0;
    const double total = static_cast<double>(after.total - before.total);
    const double busy = after.busy >= before.busy ? static_cast<double>(after.busy - before.busy) : 0.0;
    const double others = busy - static_cast<double>(ourTicks);
    if (others <= 0) return 0.0;
    return others >= total ? 1.0 : others / total;
}

}  // namespace tessera::support
