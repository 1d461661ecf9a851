#include "core/pipeline/roofline_points.h"

namespace tessera::pipeline {

std::vector<perf::KernelSample> kernelSamples(const RunReport& report, const CompiledModel& cm) {
    std::vector<perf::KernelSample> out;
    const bool cuda = cm.target == lower::Target::Cuda;
    for (const KernelReport& k : report.kernels) {
        if (k.reference) continue;
        perf::KernelSample s;
        s.name = k.name;
        s.opType = k.opType;
        s.ops = k.ops;
        if (s.ops.size() > 1) s.group = k.name;
        s.flops = k.usefulFlops >= 0 ? k.usefulFlops : k.flops;
        s.seconds = k.time.median;
        s.issuedBytes = static_cast<double>(k.bytes);
        s.compulsoryBytes = static_cast<double>(k.compulsoryBytes);
        const int idx = cm.stepOfNode(k.name);
        if (idx >= 0 && s.ops.size() > 1) {
            const std::string& groupName = cm.steps[static_cast<std::size_t>(idx)].group;
            for (const schedule::FusionGroup& g : cm.plan.groups)
                if (g.name == groupName && g.kind != schedule::FusionKind::Single) s.fusionKind = schedule::fusionKindName(g.kind);
        }
        if (idx >= 0 && cm.steps[static_cast<std::size_t>(idx)].kind == StepKind::Kernel) {
            const lower::KernelCounts& c = cm.steps[static_cast<std::size_t>(idx)].counts;
            const double global = static_cast<double>(c.loadBytes + c.storeBytes);
            const double shared = static_cast<double>(c.sharedLoadBytes + c.sharedStoreBytes);
            s.exactCounts = c.exact;
            if (cuda) {
                if (shared > 0) s.levelBytes.push_back({"shared", shared});
                s.levelBytes.push_back({"L2", global});
                s.levelBytes.push_back({"HBM", static_cast<double>(c.compulsoryBytes)});
            } else {
                s.levelBytes.push_back({"L1", global + shared});
                s.levelBytes.push_back({"DRAM", static_cast<double>(c.compulsoryBytes)});
            }
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<perf::KernelPoint> kernelPoints(const RunReport& report, const CompiledModel& cm, perf::RooflineMode mode) {
    std::vector<perf::KernelPoint> out;
    for (const perf::KernelSample& s : kernelSamples(report, cm)) out.push_back(perf::kernelPoint(s, mode));
    return out;
}

std::vector<KernelRoofline> analyseKernels(const RunReport& report, const CompiledModel& cm,
                                           const std::vector<perf::Roof>& roofs, perf::RooflineMode mode,
                                           const perf::AnalysisOptions& options) {
    std::vector<KernelRoofline> out;
    for (perf::KernelSample& s : kernelSamples(report, cm)) {
        KernelRoofline k;
        k.point = perf::kernelPoint(s, mode);
        auto a = perf::analyseSample(s, roofs, mode, options);
        k.diagnostics = a.diagnostics();
        if (a) k.analysis = std::move(*a);
        k.sample = std::move(s);
        out.push_back(std::move(k));
    }
    return out;
}

}  // namespace tessera::pipeline
