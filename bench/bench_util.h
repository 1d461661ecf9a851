#pragma once
// Small timing harness for bench/: runs a callable repeatedly and reports the median.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace tessera::bench {

struct Timing {
    double medianMs = 0, minMs = 0, maxMs = 0;
    int reps = 0;
};

/// Runs `fn` at least `minReps` times and until `minTotalMs` has passed; returns median/min/max.
inline Timing timeIt(const std::function<void()>& fn, int minReps = 5, double minTotalMs = 500) {
    std::vector<double> ms;
    double total = 0;
    while (static_cast<int>(ms.size()) < minReps || total < minTotalMs) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        const double d = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        ms.push_back(d);
        total += d;
        if (ms.size() >= 200) break;
    }
    std::sort(ms.begin(), ms.end());
    return Timing{ms[ms.size() / 2], ms.front(), ms.back(), static_cast<int>(ms.size())};
}

inline void report(const std::string& name, const Timing& t) {
    std::printf("%-48s median %9.2f ms  (min %.2f, max %.2f, %d reps)\n", name.c_str(), t.medianMs, t.minMs, t.maxMs,
                t.reps);
}

}  // namespace tessera::bench
