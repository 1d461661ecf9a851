#include "app/gui/run_results.h"

#include <algorithm>
#include <filesystem>

#include <QCoreApplication>
#include <QStringList>

namespace tessera::app {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString counted(qsizetype n, const char* one, const char* many)
{
    return QStringLiteral("%1 %2").arg(n).arg(QCoreApplication::translate("RunResults", n == 1 ? one : many));
}

views::KernelStatus reportStatus(const pipeline::KernelReport& k)
{
    if (k.reference)
        return views::KernelStatus::Reference;
    if (!k.checked)
        return views::KernelStatus::Ran;
    return k.passed ? views::KernelStatus::Passed : views::KernelStatus::Failed;
}

std::string checkSummary(const pipeline::KernelReport& k)
{
    std::string text;
    for (const pipeline::OutputCheck& c : k.checks) {
        if (!text.empty())
            text += "\n";
        text += "'" + c.tensor + "': " + c.comparison.summary();
    }
    return text;
}

}  // namespace

views::KernelStatusMap compileStatuses(const pipeline::CompiledModel& compiled, const ir::Graph& shown)
{
    views::KernelStatusMap out;
    for (std::size_t n = 0; n < shown.numNodes(); ++n)
        out[shown.node(static_cast<ir::NodeId>(n)).name] = {views::KernelStatus::Folded, {}};
    for (const pipeline::CompiledStep& s : compiled.steps) {
        if (s.kind == pipeline::StepKind::Reference) {
            out[s.name] = {views::KernelStatus::Reference, {}};
        } else {
            out[s.name] = {views::KernelStatus::Compiled,
                           QStringLiteral("entry %1, lines %2\u2013%3")
                               .arg(fromStd(s.entry))
                               .arg(s.firstLine)
                               .arg(s.lastLine)};
        }
        // Members of a fused group share their kernel's status.
        for (const ir::NodeId m : s.members) {
            const std::string& member = compiled.model.graph.node(m).name;
            if (member != s.name)
                out[member] = {out[s.name].status, QStringLiteral("fused into group %1 (kernel of %2)")
                                                       .arg(fromStd(s.group), fromStd(s.name))};
        }
    }
    return out;
}

views::KernelStatusMap runStatuses(const pipeline::CompiledModel& compiled, const pipeline::RunReport& report,
                                   const ir::Graph& shown)
{
    views::KernelStatusMap out = compileStatuses(compiled, shown);
    for (const pipeline::KernelReport& k : report.kernels) {
        QStringList detail;
        if (k.time.reps > 0)
            detail << views::TimingTableModel::formatSeconds(k.time.median);
        if (k.checked && !k.reference)
            detail << QStringLiteral("relL2 %1").arg(k.maxRelError(), 0, 'e', 1);
        QString text = detail.join(QStringLiteral(" \u00b7 "));
        if (k.checked && !k.passed)
            text += QLatin1Char('\n') + fromStd(checkSummary(k));
        out[k.name] = {reportStatus(k), text};
        for (const std::string& op : k.ops) {
            if (op != k.name)
                out[op] = {reportStatus(k), QStringLiteral("fused into group %1 (kernel of %2)\n%3")
                                                .arg(fromStd(k.group), fromStd(k.name), text)};
        }
    }
    return out;
}

std::string guiTimingWarning(const std::string& message, int threads)
{
    std::string out = message;
    auto replace = [&out](const std::string& from, const std::string& to) {
        const std::size_t at = out.find(from);
        if (at != std::string::npos)
            out.replace(at, from.size(), to);
    };
    if (threads == 1)
        replace(", or with fewer threads than idle cores (--threads 1)", "");
    replace("(--threads 1)", "(Preferences > OpenMP threads)");
    return out;
}

std::string runTimingWarning(const pipeline::RunReport& report)
{
    for (const support::Diagnostic& d : report.warnings.items()) {
        if (d.where == "timing")
            return guiTimingWarning(d.message, report.threads);
    }
    return {};
}

std::string runTargetName(const pipeline::RunReport& report)
{
    return report.cudaModule || report.device ? "CUDA" : "CPU";
}

views::TimingSnapshot timingSnapshot(const pipeline::RunReport& report, const pipeline::RunOptions& options)
{
    views::TimingSnapshot s;
    s.timed = options.time;
    s.checked = report.checked;
    s.threads = report.threads;
    s.target = runTargetName(report);
    if (report.device)
        s.machine = report.device->name;
    s.totalSeconds = report.total.median;
    s.totalReps = report.total.reps;
    if (!report.library.path.empty()) {
        s.compileNote = report.library.cacheHit
                            ? std::string("compile cache hit")
                            : "compile " + views::TimingTableModel::formatSeconds(report.library.compileSeconds).toStdString();
    }
    if (report.cudaModule) {
        // The GUI compiles the module before the run, so the run's own compile is usually a hit.
        s.compileNote = report.cudaModule->cacheHit
                            ? "NVRTC " + report.cudaModule->arch + " cache hit"
                            : "NVRTC " + report.cudaModule->arch + " " +
                                  views::TimingTableModel::formatSeconds(report.cudaModule->compileSeconds).toStdString();
    }
    s.timingWarning = runTimingWarning(report);
    for (const pipeline::KernelReport& k : report.kernels) {
        views::TimingRow r;
        r.kernel = k.name;
        r.opType = k.opType;
        r.reference = k.reference;
        r.flops = k.flops;
        r.usefulFlops = k.usefulFlops;
        r.bytes = k.bytes;
        r.medianSeconds = k.time.median;
        r.reps = k.time.reps;
        r.checked = k.checked;
        r.relError = k.maxRelError();
        for (const pipeline::OutputCheck& c : k.checks)
            r.maxAbsError = std::max(r.maxAbsError, c.comparison.maxAbs);
        r.checkSummary = checkSummary(k);
        r.status = reportStatus(k);
        r.ops = k.ops;
        s.rows.push_back(std::move(r));
    }
    return s;
}

std::string faultKernel(const std::string& message)
{
    static const std::string kPrefix = "kernel '";
    if (message.rfind(kPrefix, 0) != 0)
        return {};
    // Kernel labels are node names and may contain quotes: the name ends at the last "' " that
    // is followed by one of the runner's verbs.
    for (const char* tail : {"' crashed", "' did not finish", "' ended the runner"}) {
        const std::size_t at = message.rfind(tail);
        if (at != std::string::npos && at >= kPrefix.size())
            return message.substr(kPrefix.size(), at - kPrefix.size());
    }
    return {};
}

std::string diagnosticNode(const support::Diagnostic& diagnostic)
{
    if (std::string k = faultKernel(diagnostic.message); !k.empty())
        return k;
    static const std::string kPrefix = "node '";
    const std::string& where = diagnostic.where;
    if (where.rfind(kPrefix, 0) != 0)
        return {};
    const std::size_t end = where.rfind("' (");
    if (end == std::string::npos || end < kPrefix.size())
        return where.back() == '\'' ? where.substr(kPrefix.size(), where.size() - kPrefix.size() - 1) : std::string();
    return where.substr(kPrefix.size(), end - kPrefix.size());
}

QString moduleTitle(const pipeline::CompiledModel& compiled)
{
    std::string stem = std::filesystem::path(compiled.model.sourcePath).stem().string();
    if (stem.empty())
        stem = "model";
    int references = 0;
    for (const pipeline::CompiledStep& s : compiled.steps)
        references += s.kind == pipeline::StepKind::Reference ? 1 : 0;
    const auto lines = std::count(compiled.code.source.begin(), compiled.code.source.end(), '\n');
    const QString ext = compiled.target == lower::Target::Cuda ? QStringLiteral("cu") : QStringLiteral("cpp");
    QString title = QStringLiteral("%1.%2 \u00b7 %3").arg(fromStd(stem), ext, counted(compiled.kernelCount(), "kernel", "kernels"));
    if (references > 0)
        title += QStringLiteral(" \u00b7 ") + counted(references, "reference step", "reference steps");
    title += QStringLiteral(" \u00b7 ") + counted(static_cast<qsizetype>(lines), "line", "lines");
    return title;
}

QString ptxTitle(const runtime::cuda::CudaCompiled& module)
{
    const auto lines = std::count(module.ptx.begin(), module.ptx.end(), '\n');
    return QStringLiteral("PTX \u00b7 %1 \u00b7 %2").arg(fromStd(module.arch), counted(static_cast<qsizetype>(lines), "line", "lines"));
}

QString nvrtcNote(const runtime::cuda::CudaCompiled& module)
{
    return module.cacheHit ? QStringLiteral("NVRTC cache hit")
                           : QStringLiteral("NVRTC %1").arg(views::TimingTableModel::formatSeconds(module.compileSeconds));
}

const pipeline::CompiledStep* stepForNode(const pipeline::CompiledModel& compiled, const std::string& name)
{
    const int i = compiled.stepOfNode(name);
    return i < 0 ? nullptr : &compiled.steps[static_cast<std::size_t>(i)];
}

views::TimingSnapshot recordTimingSnapshot(const project::RunRecord& record)
{
    views::TimingSnapshot s;
    s.totalSeconds = record.totalSeconds;
    s.threads = record.threads;
    s.checked = record.checked;
    s.timed = true;
    s.compileNote =
        "recorded " + record.time + " on " + (record.device.empty() ? record.target : record.device) + " (from the project)";
    // Timings that were unreliable when recorded still are (the same words as after the run).
    s.timingWarning = guiTimingWarning(record.timingWarning, record.threads);
    for (const project::KernelMeasurement& k : record.kernels) {
        views::TimingRow row;
        row.kernel = k.name;
        row.opType = k.opType;
        row.flops = k.flops;
        row.usefulFlops = k.flops;
        row.bytes = k.bytes;
        row.medianSeconds = k.medianSeconds;
        row.reps = 1;
        row.checked = k.checked;
        row.relError = k.checked ? k.maxRelError : 0;
        s.rows.push_back(std::move(row));
    }
    return s;
}

std::vector<perf::KernelSample> recordSamples(const project::RunRecord& record)
{
    std::vector<perf::KernelSample> samples;
    for (const project::KernelMeasurement& k : record.kernels) {
        if (k.medianSeconds <= 0 || k.bytes <= 0)
            continue;
        perf::KernelSample ks;
        ks.name = k.name;
        ks.opType = k.opType;
        ks.ops = k.nodes;
        ks.group = k.group;
        ks.flops = k.flops;
        ks.seconds = k.medianSeconds;
        ks.issuedBytes = static_cast<double>(k.bytes);
        samples.push_back(std::move(ks));
    }
    return samples;
}

std::map<QString, double> recordPlanTimes(const project::RunRecord& record, const schedule::FusionPlan& plan)
{
    // Kernels are named after their group (a single node's kernel after the node).
    std::vector<std::string> kernelNames;
    for (const project::KernelMeasurement& k : record.kernels)
        kernelNames.push_back(k.group.empty() ? k.name : k.group);
    std::vector<views::KernelIdentity> groups, kernels;
    for (const schedule::FusionGroup& g : plan.groups)
        groups.push_back({&g.name, &g.ops});
    for (std::size_t i = 0; i < kernelNames.size(); ++i)
        kernels.push_back({&kernelNames[i], &record.kernels[i].nodes});
    const std::vector<int> match = views::matchKernels(groups, kernels);
    std::map<QString, double> times;
    for (std::size_t g = 0; g < match.size(); ++g) {
        if (match[g] >= 0)
            times[QString::fromStdString(plan.groups[g].name)] =
                record.kernels[static_cast<std::size_t>(match[g])].medianSeconds;
    }
    return times;
}

}  // namespace tessera::app
