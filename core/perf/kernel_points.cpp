#include "core/perf/kernel_points.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <tuple>

namespace tessera::perf {

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// First word of a roof's method ("fma avx2" -> "fma").
std::string methodWord(const Roof& r) {
    const auto sp = r.method.find(' ');
    return lower(sp == std::string::npos ? r.method : r.method.substr(0, sp));
}

/// Grouping key of a roof for the thread-count choice.
std::string groupKey(const Roof& r) {
    if (r.kind == Roof::Kind::Bandwidth) return "b|" + lower(r.level);
    return "c|" + lower(r.precision) + "|" + methodWord(r);
}

bool hasLevel(const std::vector<Roof>& roofs, const char* level) {
    for (const Roof& r : roofs)
        if (r.kind == Roof::Kind::Bandwidth && lower(r.level) == lower(level)) return true;
    return false;
}

}  // namespace

KernelPoint kernelPoint(const KernelSample& sample, RooflineMode mode) {
    KernelPoint p;
    p.name = sample.name;
    p.flops = sample.flops;
    p.seconds = sample.seconds;
    p.bytes = mode == RooflineMode::Dram ? sample.compulsoryBytes : sample.issuedBytes;
    p.levelBytes = sample.levelBytes;
    return p;
}

double sampleGflops(const KernelSample& sample) {
    return sample.seconds > 0.0 ? sample.flops / sample.seconds / 1e9 : 0.0;
}

std::vector<SampleDot> sampleDots(const KernelSample& sample, RooflineMode mode) {
    auto ai = [&](double bytes) {
        if (bytes > 0.0) return sample.flops / bytes;
        return std::numeric_limits<double>::infinity();
    };
    std::vector<SampleDot> dots;
    switch (mode) {
    case RooflineMode::Carm: dots.push_back({ai(sample.issuedBytes), {}}); break;
    case RooflineMode::Dram: dots.push_back({ai(sample.compulsoryBytes), {}}); break;
    case RooflineMode::Hierarchical:
        for (const LevelBytes& lb : sample.levelBytes) dots.push_back({ai(lb.bytes), lb.level});
        break;
    }
    return dots;
}

std::vector<Roof> chartRoofs(const std::vector<Roof>& roofs, int threads, const std::string& precision) {
    // 1. Thread count per group.
    std::map<std::string, int> chosenThreads;
    for (const Roof& r : roofs) {
        const std::string key = groupKey(r);
        auto it = chosenThreads.find(key);
        if (it == chosenThreads.end()) {
            chosenThreads[key] = r.threads;
            continue;
        }
        const int cur = it->second;
        if (threads <= 0) {
            it->second = std::max(cur, r.threads);
            continue;
        }
        const int dNew = std::abs(r.threads - threads), dCur = std::abs(cur - threads);
        if (dNew < dCur || (dNew == dCur && r.threads > cur)) it->second = r.threads;
    }
    // 2. Precision filter.
    bool precisionPresent = false;
    for (const Roof& r : roofs)
        if (r.kind == Roof::Kind::Compute && !precision.empty() && lower(r.precision) == lower(precision))
            precisionPresent = true;
    // 3. Best roof per level / per precision+method.
    std::map<std::string, const Roof*> best;
    for (const Roof& r : roofs) {
        const std::string key = groupKey(r);
        if (r.threads != chosenThreads[key]) continue;
        if (r.kind == Roof::Kind::Compute && precisionPresent && lower(r.precision) != lower(precision)) continue;
        auto it = best.find(key);
        if (it == best.end() || r.value > it->second->value) best[key] = &r;
    }
    std::vector<Roof> bandwidth, compute;
    for (const auto& [key, r] : best) (r->kind == Roof::Kind::Bandwidth ? bandwidth : compute).push_back(*r);
    std::stable_sort(bandwidth.begin(), bandwidth.end(), [](const Roof& a, const Roof& b) {
        auto rank = [](const Roof& r) {
            const int k = memoryLevelRank(r.level);
            return k < 0 ? 1000 : k;
        };
        return std::make_tuple(rank(a), a.level) < std::make_tuple(rank(b), b.level);
    });
    std::stable_sort(compute.begin(), compute.end(), [](const Roof& a, const Roof& b) { return a.value > b.value; });
    bandwidth.insert(bandwidth.end(), compute.begin(), compute.end());
    return bandwidth;
}

std::vector<Roof> roofsForMode(const std::vector<Roof>& roofs, RooflineMode mode) {
    if (mode != RooflineMode::Dram) return roofs;
    const char* mainLevel = hasLevel(roofs, "DRAM") ? "DRAM" : "HBM";
    std::vector<Roof> out;
    for (const Roof& r : roofs)
        if (r.kind == Roof::Kind::Compute || lower(r.level) == lower(mainLevel)) out.push_back(r);
    return out;
}

support::Expected<PointAnalysis> analyseSample(const KernelSample& sample, const std::vector<Roof>& roofs,
                                               RooflineMode mode, const AnalysisOptions& options) {
    KernelPoint p = kernelPoint(sample, mode);
    const bool dram = hasLevel(roofs, "DRAM"), hbm = hasLevel(roofs, "HBM");
    for (LevelBytes& lb : p.levelBytes) {
        const std::string l = lower(lb.level);
        if (l == "dram" && !dram && hbm) lb.level = "HBM";
        else if (l == "hbm" && !hbm && dram) lb.level = "DRAM";
    }
    return analysePoint(p, roofs, mode, options);
}

std::string formatSignificant(double value) {
    char buf[64];
    const double a = std::fabs(value);
    if (value == 0.0) return "0";
    if (!std::isfinite(value)) return value > 0 ? "inf" : (value < 0 ? "-inf" : "nan");
    if (a >= 1e-3 && a < 1e7) {
        // Decimals for 3 significant digits; whole numbers of 3+ digits print without decimals.
        const int magnitude = static_cast<int>(std::floor(std::log10(a)));
        const int decimals = std::max(0, 2 - magnitude);
        std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
        std::string s = buf;
        if (decimals > 0 && s.find('.') != std::string::npos) {
            while (s.back() == '0') s.pop_back();
            if (s.back() == '.') s.pop_back();
        }
        if (magnitude >= 3) {
            // Keep 3 significant digits: 12345 -> 12300.
            const double scale = std::pow(10.0, magnitude - 2);
            std::snprintf(buf, sizeof buf, "%.0f", std::round(value / scale) * scale);
            s = buf;
        }
        return s;
    }
    std::snprintf(buf, sizeof buf, "%.2g", value);
    return buf;
}

std::string roofLabel(const Roof& roof) {
    if (roof.kind == Roof::Kind::Bandwidth)
        return (roof.level.empty() ? roof.name : roof.level) + " " + formatSignificant(roof.value) + " GB/s";
    std::string name = roof.name;
    const std::string suffix = " peak";
    if (name.size() > suffix.size() && lower(name.substr(name.size() - suffix.size())) == suffix)
        name.resize(name.size() - suffix.size());
    return name + " " + formatSignificant(roof.value) + " GFLOP/s";
}

std::string modeDefinition(RooflineMode mode) {
    switch (mode) {
    case RooflineMode::Carm: return "CARM: AI = FLOPs / all bytes issued by loads and stores";
    case RooflineMode::Dram: return "Classic (DRAM): AI = FLOPs / compulsory DRAM bytes";
    case RooflineMode::Hierarchical: return "Hierarchical: AI per level = FLOPs / bytes at that level";
    }
    return {};
}

support::Expected<RooflineMode> parseRooflineMode(const std::string& text) {
    const std::string t = lower(text);
    if (t == "carm") return RooflineMode::Carm;
    if (t == "dram" || t == "classic") return RooflineMode::Dram;
    if (t == "hierarchical") return RooflineMode::Hierarchical;
    support::DiagnosticList d;
    d.error({}, "roofline mode", "unknown mode '" + text + "': expected carm, dram or hierarchical");
    return d;
}

}  // namespace tessera::perf
