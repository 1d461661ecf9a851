#include "core/runtime/timing.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

namespace tessera::runtime {

double sortedQuantile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0;
    p = std::clamp(p, 0.0, 1.0);
    const double pos = p * static_cast<double>(sorted.size() - 1);
    const auto k = static_cast<std::size_t>(std::floor(pos));
    const double f = pos - static_cast<double>(k);
    if (k + 1 >= sorted.size()) return sorted.back();
    return sorted[k] + f * (sorted[k + 1] - sorted[k]);
}

TimingStats computeTimingStats(std::vector<double> samples) {
    TimingStats s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    s.reps = static_cast<std::int64_t>(samples.size());
    s.min = samples.front();
    s.max = samples.back();
    s.median = sortedQuantile(samples, 0.5);
    s.q1 = sortedQuantile(samples, 0.25);
    s.q3 = sortedQuantile(samples, 0.75);
    s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
    return s;
}

std::vector<double> measureRepeated(const RepeatPolicy& policy, const std::function<void(std::int64_t rep)>& body) {
    using Clock = std::chrono::steady_clock;
    std::int64_t rep = 0;
    for (int i = 0; i < policy.warmup; ++i) body(rep++);
    const int minReps = std::max(1, policy.minReps);
    const int maxReps = std::max(minReps, policy.maxReps);
    std::vector<double> samples;
    samples.reserve(static_cast<std::size_t>(std::min(maxReps, 4096)));
    double total = 0;
    while (static_cast<int>(samples.size()) < maxReps) {
        const auto t0 = Clock::now();
        body(rep++);
        const auto t1 = Clock::now();
        const double dt = std::chrono::duration<double>(t1 - t0).count();
        samples.push_back(dt);
        total += dt;
        if (static_cast<int>(samples.size()) >= minReps && total >= policy.minSeconds) break;
    }
    return samples;
}

namespace {

/// "32768K", "1M", "512" -> bytes; 0 when unreadable.
std::int64_t parseCacheSize(std::string text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    if (text.empty()) return 0;
    std::int64_t mult = 1;
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
    if (unit == 'K') mult = 1024;
    if (unit == 'M') mult = 1024 * 1024;
    if (unit == 'G') mult = std::int64_t{1024} * 1024 * 1024;
    if (mult != 1) text.pop_back();
    try {
        return std::stoll(text) * mult;
    } catch (...) {
        return 0;
    }
}

std::int64_t readLastLevelCacheBytes() {
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (const long l3 = ::sysconf(_SC_LEVEL3_CACHE_SIZE); l3 > 0) return l3;
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
    const long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
#else
    const long l2 = 0;
#endif
    std::int64_t best = 0;
    std::error_code ec;
    const std::filesystem::path dir("/sys/devices/system/cpu/cpu0/cache");
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().filename().string().rfind("index", 0) != 0) continue;
        std::ifstream f(it->path() / "size");
        std::string text;
        if (f && std::getline(f, text)) best = std::max(best, parseCacheSize(text));
    }
    if (best > 0) return best;
    if (l2 > 0) return l2;
    return std::int64_t{32} << 20;
}

}  // namespace

std::int64_t lastLevelCacheBytes() {
    static const std::int64_t bytes = readLastLevelCacheBytes();
    return bytes;
}

int rotationCopies(std::int64_t launchBytes, std::int64_t rotateBytes, int maxCopies, std::int64_t memoryCapBytes) {
    if (launchBytes <= 0 || rotateBytes <= 0 || launchBytes >= rotateBytes || maxCopies <= 1) return 1;
    // Enough copies that together they exceed rotateBytes.
    std::int64_t copies = rotateBytes / launchBytes + 1;
    copies = std::min<std::int64_t>(copies, maxCopies);
    if (memoryCapBytes >= 0) copies = std::min<std::int64_t>(copies, 1 + memoryCapBytes / launchBytes);
    return static_cast<int>(std::max<std::int64_t>(copies, 1));
}

}  // namespace tessera::runtime
