#include "core/perf/roofline.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

namespace tessera::perf {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string fmt(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

double intensity(double flops, double bytes) {
    if (bytes == 0.0) return flops == 0.0 ? 0.0 : kInf;
    return flops / bytes;
}

double percent(double gflops, double bound) { return bound > 0.0 ? 100.0 * gflops / bound : 0.0; }

LevelAnalysis levelAgainst(const Roof& bw, const Roof& compute, double ai, double gflops) {
    LevelAnalysis l;
    l.level = bw.level;
    l.roofName = bw.name;
    l.ai = ai;
    l.bound = attainable(ai, bw.value, compute.value);
    const bool bandwidthBound = std::isfinite(ai) && bw.value * ai < compute.value;
    l.bindingRoof = bandwidthBound ? bw.name : compute.name;
    l.percentOfBound = percent(gflops, l.bound);
    return l;
}

}  // namespace

Roof bandwidthRoof(std::string name, std::string level, double gbPerSecond, int threads, std::string method) {
    Roof r;
    r.name = std::move(name);
    r.kind = Roof::Kind::Bandwidth;
    r.level = std::move(level);
    r.value = gbPerSecond;
    r.unit = kBandwidthUnit;
    r.threads = threads;
    r.method = std::move(method);
    return r;
}

Roof computeRoof(std::string name, std::string precision, double gflopPerSecond, int threads, std::string method) {
    Roof r;
    r.name = std::move(name);
    r.kind = Roof::Kind::Compute;
    r.value = gflopPerSecond;
    r.unit = kComputeUnit;
    r.threads = threads;
    r.precision = std::move(precision);
    r.method = std::move(method);
    return r;
}

const char* roofKindName(Roof::Kind kind) { return kind == Roof::Kind::Bandwidth ? "bandwidth" : "compute"; }

int memoryLevelRank(const std::string& level) {
    const std::string l = lower(level);
    if (l == "l1") return 0;
    if (l == "shared") return 1;
    if (l == "l2") return 2;
    if (l == "l3") return 3;
    if (l == "dram") return 4;
    if (l == "hbm") return 5;
    return -1;
}

const char* rooflineModeName(RooflineMode mode) {
    switch (mode) {
    case RooflineMode::Carm: return "carm";
    case RooflineMode::Dram: return "dram";
    case RooflineMode::Hierarchical: return "hierarchical";
    }
    return "?";
}

double attainable(double ai, double bandwidthGBs, double computeGFlops) {
    if (std::isinf(ai)) return computeGFlops;
    return std::min(ai * bandwidthGBs, computeGFlops);
}

double ridgePoint(double bandwidthGBs, double computeGFlops) {
    if (bandwidthGBs == 0.0) return kInf;
    return computeGFlops / bandwidthGBs;
}

support::Expected<PointAnalysis> analysePoint(const KernelPoint& point, const std::vector<Roof>& roofs,
                                              RooflineMode mode, const AnalysisOptions& options) {
    support::DiagnosticList diags;
    const std::string where = "kernel '" + point.name + "'";
    auto bad = [](double v) { return !std::isfinite(v) || v < 0.0; };
    if (bad(point.flops)) diags.error({}, where, "FLOP count " + fmt(point.flops) + " is not a finite number >= 0");
    if (!std::isfinite(point.seconds) || point.seconds <= 0.0)
        diags.error({}, where, "time " + fmt(point.seconds) + " s is not a positive number");
    if (mode != RooflineMode::Hierarchical) {
        if (bad(point.bytes)) diags.error({}, where, "byte count " + fmt(point.bytes) + " is not a finite number >= 0");
        else if (point.bytes == 0.0 && point.flops == 0.0)
            diags.error({}, where, "the kernel has neither FLOPs nor bytes: it has no place on a roofline");
    } else {
        for (const LevelBytes& lb : point.levelBytes)
            if (bad(lb.bytes))
                diags.error({}, where, "byte count " + fmt(lb.bytes) + " at level '" + lb.level +
                                           "' is not a finite number >= 0");
    }

    // Select the roofs that apply: compute peak F and the best bandwidth roof per level.
    const Roof* compute = nullptr;
    std::map<int, const Roof*> byRank;           // known levels, ordered from L1 outwards
    std::vector<const Roof*> unknownLevels;       // bandwidth roofs of unknown levels, kept last
    for (const Roof& r : roofs) {
        if (options.threads > 0 && r.threads != options.threads) continue;
        if (!std::isfinite(r.value) || r.value <= 0.0) {
            diags.error({}, "roof '" + r.name + "'", "value " + fmt(r.value) + " is not a positive number");
            continue;
        }
        if (r.kind == Roof::Kind::Compute) {
            if (!options.precision.empty() && lower(r.precision) != lower(options.precision)) continue;
            if (!compute || r.value > compute->value) compute = &r;
        } else {
            const int rank = memoryLevelRank(r.level);
            if (rank < 0) {
                unknownLevels.push_back(&r);
                continue;
            }
            auto it = byRank.find(rank);
            if (it == byRank.end() || r.value > it->second->value) byRank[rank] = &r;
        }
    }
    std::string filter;
    if (!options.precision.empty()) filter += " of precision " + options.precision;
    if (options.threads > 0) filter += (filter.empty() ? " with " : " and ") + std::to_string(options.threads) + " threads";
    if (!compute) diags.error({}, where, "no compute roof" + filter + " in the profile");

    std::vector<const Roof*> bandwidth;
    for (const auto& [rank, r] : byRank) bandwidth.push_back(r);
    bandwidth.insert(bandwidth.end(), unknownLevels.begin(), unknownLevels.end());

    if (diags.hasErrors()) return diags;

    PointAnalysis out;
    out.mode = mode;
    out.gflops = point.flops / point.seconds / 1e9;
    out.computeRoof = compute->name;

    auto adopt = [&out](const LevelAnalysis& l) {
        out.ai = l.ai;
        out.bound = l.bound;
        out.bindingRoof = l.bindingRoof;
        out.percentOfBound = l.percentOfBound;
    };

    switch (mode) {
    case RooflineMode::Dram: {
        const Roof* mem = nullptr;
        if (auto it = byRank.find(memoryLevelRank("DRAM")); it != byRank.end()) mem = it->second;
        else if (auto jt = byRank.find(memoryLevelRank("HBM")); jt != byRank.end()) mem = jt->second;
        if (!mem) {
            diags.error({}, where, "no DRAM or HBM bandwidth roof" + filter + " in the profile (the classic roofline needs one)");
            return diags;
        }
        out.levels.push_back(levelAgainst(*mem, *compute, intensity(point.flops, point.bytes), out.gflops));
        adopt(out.levels.back());
        break;
    }
    case RooflineMode::Carm: {
        if (bandwidth.empty()) {
            diags.error({}, where, "no bandwidth roof" + filter + " in the profile");
            return diags;
        }
        const double ai = intensity(point.flops, point.bytes);
        const Roof* fastest = nullptr;
        for (const Roof* r : bandwidth) {
            out.levels.push_back(levelAgainst(*r, *compute, ai, out.gflops));
            if (!fastest || r->value > fastest->value) fastest = r;
        }
        adopt(levelAgainst(*fastest, *compute, ai, out.gflops));
        break;
    }
    case RooflineMode::Hierarchical: {
        support::DiagnosticList warnings;
        std::vector<bool> used(point.levelBytes.size(), false);
        for (const Roof* r : bandwidth) {
            for (std::size_t i = 0; i < point.levelBytes.size(); ++i) {
                const LevelBytes& lb = point.levelBytes[i];
                if (used[i] || lower(lb.level) != lower(r->level)) continue;
                used[i] = true;
                if (lb.bytes == 0.0 && point.flops == 0.0) continue;  // no place on the chart
                out.levels.push_back(levelAgainst(*r, *compute, intensity(point.flops, lb.bytes), out.gflops));
                break;
            }
        }
        for (std::size_t i = 0; i < point.levelBytes.size(); ++i)
            if (!used[i])
                warnings.warning({}, where, "bytes at level '" + point.levelBytes[i].level +
                                                "' have no bandwidth roof" + filter + " in the profile; level skipped");
        if (out.levels.empty()) {
            diags.append(warnings);
            diags.error({}, where, "no memory level has both a byte count and a bandwidth roof" + filter);
            return diags;
        }
        const LevelAnalysis* tightest = &out.levels.front();
        for (const LevelAnalysis& l : out.levels)
            if (l.bound < tightest->bound) tightest = &l;
        adopt(*tightest);
        return support::Expected<PointAnalysis>(std::move(out), std::move(warnings));
    }
    }
    return out;
}

}  // namespace tessera::perf
