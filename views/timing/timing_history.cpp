#include "views/timing/timing_history.h"

#include "views/timing/timing_table_model.h"

namespace tessera::views {
namespace {

std::vector<KernelIdentity> identities(const TimingHistoryRun& run)
{
    std::vector<KernelIdentity> out;
    out.reserve(run.kernels.size());
    for (const TimingHistoryKernel& k : run.kernels)
        out.push_back({&k.kernel, &k.ops});
    return out;
}

}  // namespace

std::vector<TimingHistoryPoint> historySeries(const TimingHistory& history, const std::string& kernel)
{
    std::vector<TimingHistoryPoint> out;
    if (history.runs.empty())
        return out;
    const TimingHistoryRun& latest = history.runs.back();
    int row = -1;
    if (!kernel.empty()) {
        for (std::size_t i = 0; i < latest.kernels.size(); ++i)
            if (latest.kernels[i].kernel == kernel)
                row = static_cast<int>(i);
        if (row < 0)
            return out;
    }
    const std::vector<KernelIdentity> current = identities(latest);
    for (const TimingHistoryRun& run : history.runs) {
        TimingHistoryPoint p;
        p.run = run.number;
        p.plan = run.plan;
        p.planDiffers = run.plan != latest.plan;
        if (row < 0) {
            p.present = run.totalSeconds > 0;
            p.seconds = run.totalSeconds;
            p.q1Seconds = run.totalQ1Seconds;
            p.q3Seconds = run.totalQ3Seconds;
        } else {
            const int m = matchKernels(current, identities(run))[static_cast<std::size_t>(row)];
            if (m >= 0) {
                const TimingHistoryKernel& k = run.kernels[static_cast<std::size_t>(m)];
                p.kernel = k.kernel;
                p.present = k.reps > 0;
                p.seconds = k.medianSeconds;
                p.q1Seconds = k.q1Seconds;
                p.q3Seconds = k.q3Seconds;
            }
        }
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace tessera::views
