#include "app/gui/run_targets.h"

#include "app/gui/run_session.h"

namespace tessera::app {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

std::vector<RunTarget> runTargets(const DeviceProbe& probe)
{
    std::vector<RunTarget> out;
    RunTarget cpu;
    cpu.kind = RunTarget::Kind::Cpu;
    cpu.id = QStringLiteral("cpu");
    cpu.label = QStringLiteral("CPU");
    cpu.shortName = QStringLiteral("CPU");
    cpu.toolTip = QStringLiteral("Compile every kernel to OpenMP C++ with the host compiler and run it on the CPU "
                                 "in tessera-runner");
    out.push_back(cpu);

    if (!probe.answered) {
        RunTarget probing;
        probing.kind = RunTarget::Kind::Probing;
        probing.id = QStringLiteral("cuda-probing");
        probing.label = QStringLiteral("CUDA: looking for devices...");
        probing.shortName = QStringLiteral("CUDA");
        probing.toolTip = QStringLiteral("Asking tessera-runner which CUDA devices there are");
        out.push_back(probing);
        return out;
    }
    for (const runtime::cuda::CudaDeviceInfo& d : probe.devices) {
        RunTarget t;
        t.kind = RunTarget::Kind::CudaDevice;
        t.device = d.ordinal;
        t.arch = fromStd(d.arch());
        t.id = QStringLiteral("cuda:%1").arg(d.ordinal);
        t.label = QStringLiteral("CUDA %1: %2 (%3)").arg(d.ordinal).arg(fromStd(d.name), t.arch);
        t.shortName = QStringLiteral("CUDA %1").arg(d.ordinal);
        t.toolTip = QStringLiteral("Compile every kernel to CUDA C, JIT it with NVRTC for %1 and run it on %2 "
                                   "(%3 SMs, %4 GiB) in tessera-runner")
                        .arg(t.arch, fromStd(d.name))
                        .arg(d.smCount)
                        .arg(static_cast<double>(d.totalMemoryBytes) / (1024.0 * 1024.0 * 1024.0), 0, 'f', 0);
        out.push_back(t);
    }
    if (probe.devices.empty()) {
        RunTarget t;
        t.kind = RunTarget::Kind::CudaCompileOnly;
        t.arch = QString::fromLatin1(kCompileOnlyArch);
        t.id = QStringLiteral("cuda-compile");
        t.label = QStringLiteral("CUDA (compile only, %1)").arg(t.arch);
        t.shortName = QStringLiteral("CUDA, compile only");
        const QString why = probe.error.isEmpty() ? QStringLiteral("no CUDA device found") : probe.error;
        t.toolTip = QStringLiteral("Compile every kernel to CUDA C and with NVRTC to PTX for %1; nothing runs: %2")
                        .arg(t.arch, why);
        out.push_back(t);
    }
    return out;
}

int targetIndexFor(const std::vector<RunTarget>& targets, const QString& id)
{
    for (std::size_t i = 0; i < targets.size(); ++i) {
        if (targets[i].selectable() && targets[i].id == id)
            return static_cast<int>(i);
    }
    if (id.startsWith(QLatin1String("cuda"))) {
        for (std::size_t i = 0; i < targets.size(); ++i) {
            if (targets[i].selectable() && targets[i].isCuda())
                return static_cast<int>(i);
        }
    }
    return 0;
}

QString compileOnlyReason(const DeviceProbe& probe)
{
    if (probe.error.contains(QLatin1String("no CUDA driver found")))
        return QStringLiteral("no CUDA driver found");
    if (probe.error.isEmpty())
        return QStringLiteral("no CUDA device found");
    return QStringLiteral("CUDA devices unavailable");
}

void applyTarget(const RunTarget& target, RunSettings& settings)
{
    settings.cudaCompileOnly = false;
    switch (target.kind) {
    case RunTarget::Kind::CudaDevice:
        settings.compile.target = lower::Target::Cuda;
        settings.run.cudaDevice = target.device;
        settings.run.cudaArch = target.arch.toStdString();
        break;
    case RunTarget::Kind::CudaCompileOnly:
        settings.compile.target = lower::Target::Cuda;
        settings.run.cudaArch = target.arch.toStdString();
        settings.cudaCompileOnly = true;
        break;
    case RunTarget::Kind::Cpu:
    case RunTarget::Kind::Probing:
        settings.compile.target = lower::Target::Cpu;
        break;
    }
}

}  // namespace tessera::app
