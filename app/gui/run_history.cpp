#include "app/gui/run_history.h"

#include <set>
#include <utility>

namespace tessera::app {

std::string RunHistory::planLabel(const RunSettings& settings, const pipeline::RunReport& report)
{
    const pipeline::CompileOptions& c = settings.compile;
    std::string plan;
    // The window passes the planner's plan explicitly once planned: the same plan as the planner
    // setting alone, so only edited and loaded plans are named apart.
    const std::string by = c.plan ? c.plan->planner : c.planner;
    if (c.plan && (by == "user" || by == "file")) {
        plan = (by == "user" ? "edited plan (" : "plan from file (") + std::to_string(c.plan->groups.size()) +
               (c.plan->groups.size() == 1 ? " group)" : " groups)");
    } else {
        plan = "planner " + (by.empty() ? std::string("default") : by);
    }
    std::string target;
    if (c.target == lower::Target::Cuda) {
        target = "CUDA";  // no arch: a project's stored runs do not know it
    } else {
        const int threads = report.threads > 0 ? report.threads : settings.run.threads;
        target = "CPU, " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
    }
    return plan + " \u00b7 " + target;
}

views::TimingHistoryRun RunHistory::fromReport(const pipeline::RunReport& report, const RunSettings& settings)
{
    views::TimingHistoryRun run;
    run.plan = planLabel(settings, report);
    if (settings.run.time) {
        run.totalSeconds = report.total.median;
        run.totalQ1Seconds = report.total.q1;
        run.totalQ3Seconds = report.total.q3;
    }
    for (const pipeline::KernelReport& k : report.kernels) {
        views::TimingHistoryKernel h;
        h.kernel = k.name;
        h.ops = k.ops;
        h.medianSeconds = k.time.median;
        h.q1Seconds = k.time.q1;
        h.q3Seconds = k.time.q3;
        h.reps = k.time.reps;
        run.kernels.push_back(std::move(h));
    }
    return run;
}

views::TimingHistoryRun RunHistory::fromRecord(const project::RunRecord& record)
{
    views::TimingHistoryRun run;
    std::set<std::string> groups;
    for (const project::KernelMeasurement& k : record.kernels) {
        views::TimingHistoryKernel h;
        h.kernel = k.name;
        h.ops = k.nodes;
        h.medianSeconds = k.medianSeconds;
        h.reps = k.medianSeconds > 0 ? 1 : 0;
        run.kernels.push_back(std::move(h));
        groups.insert(k.group.empty() ? k.name : k.group);
    }
    const std::string& by = record.planner;
    if (by == "user" || by == "file")
        run.plan = (by == "user" ? "edited plan (" : "plan from file (") + std::to_string(groups.size()) +
                   (groups.size() == 1 ? " group)" : " groups)");
    else
        run.plan = "planner " + (by.empty() ? std::string("default") : by);
    if (record.target.rfind("cuda", 0) == 0)
        run.plan += " \u00b7 CUDA";
    else
        run.plan += " \u00b7 CPU, " + std::to_string(record.threads) + (record.threads == 1 ? " thread" : " threads");
    run.time = record.time;
    run.totalSeconds = record.totalSeconds;
    return run;
}

int RunHistory::add(const pipeline::RunReport& report, const RunSettings& settings, const std::string& time)
{
    views::TimingHistoryRun run = fromReport(report, settings);
    run.time = time;
    return add(std::move(run));
}

int RunHistory::add(views::TimingHistoryRun run)
{
    // Copy on write: a snapshot a view still holds stays as it was.
    auto next = std::make_shared<views::TimingHistory>(*m_history);
    run.number = m_next++;
    next->runs.push_back(std::move(run));
    if (next->runs.size() > kCapacity)
        next->runs.erase(next->runs.begin(), next->runs.begin() + static_cast<std::ptrdiff_t>(next->runs.size() - kCapacity));
    m_history = std::move(next);
    return m_history->runs.back().number;
}

void RunHistory::clear()
{
    m_history = std::make_shared<views::TimingHistory>();
    m_next = 1;
}

}  // namespace tessera::app
