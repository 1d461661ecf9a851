#include "core/pipeline/run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include <unistd.h>

#include "core/eval/reference_interpreter.h"
#include "core/pipeline/prepare.h"
#include "core/runtime/shared_arena.h"
#include "core/support/cpu_usage.h"

namespace tessera::pipeline {

double KernelReport::maxRelError() const {
    double m = 0;
    for (const auto& c : checks) m = std::max(m, c.comparison.relL2);
    return m;
}

namespace {

constexpr std::int64_t kAlign = 64;

std::vector<std::int64_t> valueDims(const ir::Graph& g, ir::ValueId v) {
    std::vector<std::int64_t> dims;
    const auto& s = g.value(v).type.shape;
    if (s.rankKnown())
        for (const auto& d : s.dims()) dims.push_back(d.isKnown() ? d.value : 0);
    return dims;
}

std::int64_t valueBytes(const ir::Graph& g, ir::ValueId v) {
    std::int64_t n = 1;
    for (auto d : valueDims(g, v)) n *= d;
    return n * static_cast<std::int64_t>(ir::dtypeSize(g.value(v).type.dtype));
}

struct Layout {
    std::map<ir::ValueId, int> slot;  ///< value -> buffer index
    std::vector<runtime::BufferSpec> buffers;
    std::int64_t total = 0;

    int add(const ir::Graph& g, ir::ValueId v) {
        auto it = slot.find(v);
        if (it != slot.end()) return it->second;
        runtime::BufferSpec b;
        b.offset = total;
        b.bytes = valueBytes(g, v);
        total += std::max<std::int64_t>((b.bytes + kAlign - 1) / kAlign * kAlign, kAlign);
        buffers.push_back(b);
        const int id = static_cast<int>(buffers.size()) - 1;
        slot[v] = id;
        return id;
    }
};

ir::TensorData readTensor(const runtime::SharedArena& arena, const runtime::BufferSpec& b, const ir::Graph& g,
                          ir::ValueId v) {
    ir::TensorData t;
    t.dtype = g.value(v).type.dtype;
    t.dims = valueDims(g, v);
    t.bytes = arena.read(b);
    return t;
}

/// The runtime inputs of `sub` (a singleNodeGraph of g) as they are in the arena now.
std::vector<ir::TensorData> nodeInputs(const ir::Graph& sub, const ir::Graph& g, const runtime::SharedArena& arena,
                                       Layout& layout) {
    std::vector<ir::TensorData> r;
    for (auto sv : sub.runtimeInputs()) {
        const ir::ValueId v = g.findValue(sub.value(sv).name);
        r.push_back(readTensor(arena, layout.buffers[static_cast<std::size_t>(layout.slot[v])], g, v));
    }
    return r;
}

double rmsOf(const ir::TensorData& t) {
    const std::int64_t n = t.numElements();
    if (n == 0) return 0;
    double sum = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const double v = t.elementAsDouble(i);
        if (std::isfinite(v)) sum += v * v;
    }
    return std::sqrt(sum / static_cast<double>(n));
}

/// The kernels TESSERA_DEBUG_CORRUPT_KERNEL names (comma-separated; empty when unset).
std::vector<std::string> corruptKernelNames() {
    std::vector<std::string> names;
    const char* env = std::getenv(kCorruptKernelEnv);
    if (!env) return names;
    std::string cur;
    for (const char* c = env;; ++c) {
        if (*c == ',' || *c == '\0') {
            if (!cur.empty()) names.push_back(cur);
            cur.clear();
            if (*c == '\0') break;
        } else {
            cur += *c;
        }
    }
    return names;
}

/// The testing hook (run.h): adds an error to a slice of a tensor's elements, in place.
void corruptTensor(ir::TensorData& t) {
    const std::int64_t n = t.numElements();
    if (n <= 0 || !t.sizeConsistent()) return;
    const std::int64_t first = n / 2, count = std::max<std::int64_t>(1, n / 8);
    for (std::int64_t i = first; i < std::min(n, first + count); ++i) {
        std::uint8_t* p = t.bytes.data() + i * static_cast<std::int64_t>(ir::dtypeSize(t.dtype));
        switch (t.dtype) {
        case ir::DType::F32: {
            float v;
            std::memcpy(&v, p, sizeof v);
            v += std::copysign(1.0f + std::fabs(v), v);
            std::memcpy(p, &v, sizeof v);
            break;
        }
        case ir::DType::F64: {
            double v;
            std::memcpy(&v, p, sizeof v);
            v += std::copysign(1.0 + std::fabs(v), v);
            std::memcpy(p, &v, sizeof v);
            break;
        }
        case ir::DType::I32: {
            std::int32_t v;
            std::memcpy(&v, p, sizeof v);
            v += 1;
            std::memcpy(p, &v, sizeof v);
            break;
        }
        case ir::DType::I64: {
            std::int64_t v;
            std::memcpy(&v, p, sizeof v);
            v += 1;
            std::memcpy(p, &v, sizeof v);
            break;
        }
        default: return;
        }
    }
}

std::string megabytes(std::int64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
    return buf;
}

/// See kReducedOptMaxElements (run.h).
bool reducedOptimisation(const CompiledStep& s, std::size_t sourceBytes) {
    if (!s.elementwise) return false;
    if (sourceBytes >= kReducedOptMinSourceBytes) return true;
    std::int64_t largest = 0;
    for (int p : s.kernel.params) {
        if (p < 0 || static_cast<std::size_t>(p) >= s.kernel.buffers.size()) continue;
        std::int64_t n = 1;
        for (std::int64_t d : s.kernel.buffers[static_cast<std::size_t>(p)].shape) n *= d;
        largest = std::max(largest, n);
    }
    return largest <= kReducedOptMaxElements;
}

std::string stemOf(const std::string& path) {
    if (path.empty()) return "model";
    return std::filesystem::path(path).stem().string();
}

/// A phase's outcome: nullopt to go on, or the diagnostics runModel returns.
using Stop = std::optional<support::DiagnosticList>;

Stop stopWith(const std::string& file, const std::string& where, const std::string& message) {
    support::DiagnosticList d;
    d.error(file, where, message);
    return d;
}

/// What the phases of one runModel call share.
struct Execution {
    const CompiledModel& cm;
    const ir::Graph& g;
    const std::string& file;
    const RunOptions& options;
    runtime::RunnerClient& runner;
    const support::CancelToken* cancel;
    const support::ProgressSink& progress;
    const std::vector<ir::TensorData> inputs;  ///< the runtime inputs of cm.model.graph
    const int stepCount;                       ///< progress units of the per-step phases
    const bool cuda;
    eval::ReferenceOptions reference;
    RunReport report;
    Layout layout;
    std::optional<runtime::SharedArena> arena;
    int stepsDone = 0;  ///< steps reported finished (run, and timed when timing)
    double loadTotalTicks = 0, loadOthersTicks = 0;  ///< CPU capacity and other processes' use while timing
    double totalMedian = 0, totalMin = 0;
    std::int64_t totalReps = 0;

    Execution(const CompiledModel& model, const std::vector<ir::TensorData>& callerInputs, const RunOptions& opts,
              runtime::RunnerClient& client, const support::CancelToken* token, const support::ProgressSink& sink)
        : cm(model),
          g(model.model.graph),
          file(model.model.sourcePath),
          options(opts),
          runner(client),
          cancel(token),
          progress(sink),
          inputs(model.runtimeInputsOf(callerInputs)),
          stepCount(std::max(1, static_cast<int>(model.steps.size()))),
          cuda(model.target == lower::Target::Cuda) {
        reference.opset = cm.model.defaultOpset();
        reference.file = file;
    }

    void kernelProgress(int done, int total, const char* phase) const {
        if (options.kernelProgress) options.kernelProgress(done, total, phase);
    }
    /// Reports the first `n` steps finished, when that is more than before.
    void stepsFinished(std::size_t n) {
        const int d = std::min(stepCount, static_cast<int>(n));
        if (d <= stepsDone) return;
        stepsDone = d;
        kernelProgress(stepsDone, stepCount, kPhaseRunningKernels);
    }
    const runtime::BufferSpec& buffer(ir::ValueId v) { return layout.buffers[static_cast<std::size_t>(layout.slot[v])]; }
    ir::TensorData read(ir::ValueId v) { return readTensor(*arena, buffer(v), g, v); }
    void write(ir::ValueId v, const ir::TensorData& t) {
        const runtime::BufferSpec& b = buffer(v);
        arena->write(b, t.bytes.data(), std::min<std::int64_t>(b.bytes, static_cast<std::int64_t>(t.bytes.size())));
    }
};

/// 1. The module: NVRTC for the device the runner finds (CUDA), else the host JIT in compile
/// units (one piece per kernel, named by its entry point: stable across edits).
Stop compileModule(Execution& x) {
    if (x.progress) x.progress(0.0, "compiling kernels");
    x.kernelProgress(0, 1, kPhaseCompilingModule);
    const bool anyKernel = x.cm.kernelCount() > 0;
    if (anyKernel && x.cuda) {
        auto devs = x.runner.devices(x.cancel);
        if (!devs.ok()) {  // "no CUDA driver found ...": not a kernel fault
            support::DiagnosticList d = devs.diagnostics();
            if (!d.items().empty())
                d.items()[0].notes.push_back(
                    "a GPU run needs the NVIDIA driver; without one, `tessera-cli compile MODEL --target cuda "
                    "[--emit ptx]` shows the generated code");
            return d;
        }
        const auto it = std::find_if(devs->begin(), devs->end(), [&](const runtime::cuda::CudaDeviceInfo& dv) {
            return dv.ordinal == x.options.cudaDevice;
        });
        if (it == devs->end())
            return stopWith(x.file, "cuda",
                            "no CUDA device " + std::to_string(x.options.cudaDevice) + " (" +
                                std::to_string(devs->size()) + " found)");
        x.report.device = *it;
        const runtime::cuda::CudaCompileOptions nopts =
            cudaCompileOptions(x.cm, x.options, x.options.cudaArch.empty() ? it->arch() : x.options.cudaArch);
        if (x.progress) x.progress(0.0, "compiling kernels (NVRTC " + nopts.arch + ")");
        auto mod = runtime::cuda::compileCuda(x.cm.code.source, nopts, x.cancel);
        if (!mod.ok()) return mod.diagnostics();
        x.report.cudaModule = *mod;
    } else if (anyKernel) {
        runtime::HostCompilerOptions copts = x.options.compiler;
        if (copts.sourceName.empty()) copts.sourceName = stemOf(x.file) + ".cpp";
        runtime::ModuleLayout layout;
        layout.sharedPreludeBytes = x.cm.code.sharedPreludeBytes;
        std::size_t k = 0;
        for (const auto& s : x.cm.steps) {
            if (s.kind != StepKind::Kernel) continue;
            if (k < x.cm.code.kernelSpans.size() && x.cm.code.kernelSpans[k].size > 0) {
                const codegen::TextSpan& span = x.cm.code.kernelSpans[k];
                layout.pieces.push_back({span.offset, span.size, s.entry, reducedOptimisation(s, span.size)});
            }
            ++k;
        }
        runtime::UnitProgress unitProgress;
        if (x.options.kernelProgress)
            unitProgress = [&x](int done, int total) { x.kernelProgress(done, total, kPhaseCompilingModule); };
        auto lib = runtime::compileHostModule(x.cm.code.source, layout, copts, x.cancel, unitProgress);
        if (!lib.ok()) return lib.diagnostics();
        x.report.library = *lib;
    }
    if (x.cuda || !anyKernel) x.kernelProgress(1, 1, kPhaseCompilingModule);
    return std::nullopt;
}

/// 2. The arena: a slot for every tensor a step touches and every graph output, holding the
/// constants and the runtime inputs.
Stop fillArena(Execution& x) {
    const auto rin = x.g.runtimeInputs();
    if (rin.size() != x.inputs.size())
        return stopWith(x.file, "graph inputs",
                        "expected " + std::to_string(rin.size()) + " inputs, got " + std::to_string(x.inputs.size()));
    for (auto v : rin) x.layout.add(x.g, v);
    for (const auto& s : x.cm.steps) {
        for (auto v : s.inputs) x.layout.add(x.g, v);
        for (auto v : s.outputs) x.layout.add(x.g, v);
    }
    for (auto v : x.g.outputs()) x.layout.add(x.g, v);
    const double phys = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
    if (phys > 0 && static_cast<double>(x.layout.total) > 0.8 * phys)
        return stopWith(x.file, "memory",
                        "the model's tensors need " + std::to_string(static_cast<double>(x.layout.total) / (1 << 30)) +
                            " GiB; this machine has " + std::to_string(phys / (1 << 30)) + " GiB of memory");
    auto arena = runtime::SharedArena::create(std::max<std::int64_t>(x.layout.total, kAlign));
    if (!arena.ok()) return arena.diagnostics();
    x.arena.emplace(std::move(*arena));
    for (const auto& [v, id] : x.layout.slot) {
        const auto& val = x.g.value(v);
        if (val.data)
            x.arena->write(x.layout.buffers[static_cast<std::size_t>(id)], val.data->bytes.data(),
                           static_cast<std::int64_t>(val.data->bytes.size()));
    }
    for (std::size_t i = 0; i < rin.size(); ++i) {
        const auto& b = x.buffer(rin[i]);
        if (static_cast<std::int64_t>(x.inputs[i].bytes.size()) != b.bytes)
            return stopWith(x.file, "input '" + x.g.value(rin[i]).name + "'",
                            "expected " + x.g.value(rin[i]).type.str() + " (" + std::to_string(b.bytes) +
                                " bytes), got " + std::to_string(x.inputs[i].bytes.size()) + " bytes");
        x.arena->write(b, x.inputs[i].bytes.data(), b.bytes);
    }
    return std::nullopt;
}

/// What each step's report says before anything runs: names, ops, static counts.
void describeSteps(Execution& x) {
    x.report.kernels.resize(x.cm.steps.size());
    for (std::size_t i = 0; i < x.cm.steps.size(); ++i) {
        const CompiledStep& s = x.cm.steps[i];
        KernelReport& k = x.report.kernels[i];
        k.name = s.name;
        k.opType = s.opType;
        k.ops = s.kind == StepKind::Kernel && !s.kernel.sourceOps.empty() ? s.kernel.sourceOps
                                                                           : std::vector<std::string>{s.name};
        k.reference = s.kind == StepKind::Reference;
        k.group = s.group;
        k.usefulFlops = s.nodeFlops >= 0 ? static_cast<double>(s.nodeFlops) : -1.0;
        if (s.kind == StepKind::Kernel) {
            k.flops = s.counts.flops;
            k.bytes = s.counts.loadBytes + s.counts.storeBytes;
            k.compulsoryBytes = s.counts.compulsoryBytes;
        } else {
            k.flops = s.nodeFlops > 0 ? static_cast<double>(s.nodeFlops) : 0.0;
            for (auto v : s.inputs) k.compulsoryBytes += valueBytes(x.g, v);
            for (auto v : s.outputs) k.compulsoryBytes += valueBytes(x.g, v);
            k.bytes = k.compulsoryBytes;
        }
    }
}

/// Other processes' CPU time while a segment runs (CPU target, timed runs): kernels timed on busy
/// cores look plausible and are wrong, so the report says so (warnAboutDisturbedTimings).
class LoadWatch {
public:
    LoadWatch(Execution& x) : m_x(x), m_on(x.options.time && !x.cuda) {
        if (!m_on) return;
        m_sys = support::systemCpuTimes();
        m_runnerPid = x.runner.pid();
        m_runner = support::processCpuTicks(m_runnerPid);
        m_self = support::processCpuTicks(getpid());
    }
    /// Adds the segment's CPU capacity and other processes' share of it to the execution.
    void stop() {
        if (!m_on || !m_sys) return;
        const auto sysAfter = support::systemCpuTimes();
        const auto runnerAfter = support::processCpuTicks(m_x.runner.pid());
        const auto selfAfter = support::processCpuTicks(getpid());
        if (!sysAfter || !runnerAfter || !selfAfter || !m_self) return;
        const std::uint64_t runnerTicks =
            *runnerAfter -
            (m_x.runner.pid() == m_runnerPid && m_runner ? std::min(*m_runner, *runnerAfter) : 0);
        const std::uint64_t ours = runnerTicks + (*selfAfter - std::min(*m_self, *selfAfter));
        const double share = support::othersShare(*m_sys, *sysAfter, ours);
        m_x.loadTotalTicks += static_cast<double>(sysAfter->total - m_sys->total);
        m_x.loadOthersTicks += share * static_cast<double>(sysAfter->total - m_sys->total);
    }

private:
    Execution& m_x;
    bool m_on;
    std::optional<support::SystemCpuTimes> m_sys;
    pid_t m_runnerPid = 0;
    std::optional<std::uint64_t> m_runner, m_self;
};

/// 3a. The kernel steps from `first` up to the next reference step (or the end, or right after a
/// kernel the testing hook corrupts) as one request to the runner. Returns the step after the
/// segment in `next`.
Stop runKernelSegment(Execution& x, std::size_t first, const std::vector<std::string>& corrupt, std::size_t& next) {
    runtime::RunRequest req;
    req.libraryPath = x.report.library.path;
    if (x.cuda) {
        req.target = runtime::RunTarget::Cuda;
        req.libraryPath.clear();
        req.modulePath = x.report.cudaModule ? x.report.cudaModule->cubinPath : std::string();
        if (req.modulePath.empty() && x.report.cudaModule) req.modulePath = x.report.cudaModule->ptxPath;
        req.device = x.options.cudaDevice;
    }
    x.arena->attach(req);
    req.buffers = x.layout.buffers;
    req.threads = x.options.threads;
    req.timing.time = x.options.time;
    req.timing.warmup = x.options.warmup;
    req.timing.minReps = x.options.minReps;
    req.timing.maxReps = x.options.maxReps;
    req.timing.minSeconds = x.options.minSeconds;
    req.timeoutSeconds = x.options.timeoutSeconds;
    std::vector<std::size_t> stepOfLaunch;
    std::size_t i = first;
    for (; i < x.cm.steps.size() && x.cm.steps[i].kind == StepKind::Kernel; ++i) {
        const CompiledStep& s = x.cm.steps[i];
        runtime::LaunchSpec l;
        l.entry = s.entry;
        l.label = s.name;
        l.grid = s.launch.gridX;
        l.block = s.launch.blockX;
        for (auto v : s.inputs) l.args.push_back(x.layout.slot[v]);
        for (auto v : s.outputs) l.args.push_back(x.layout.slot[v]);
        req.launches.push_back(std::move(l));
        stepOfLaunch.push_back(i);
        // The testing hook corrupts a kernel's output between segments: ending the segment after
        // it lets the kernels after it read the corrupted values.
        if (std::find(corrupt.begin(), corrupt.end(), s.name) != corrupt.end()) {
            ++i;
            break;
        }
    }
    next = i;
    LoadWatch load(x);
    // Launch i's event means the steps before it are finished: run (untimed runs) or run and
    // timed (the runner times after the checked pass of the whole segment).
    auto onEvent = [&](const runtime::RunnerEvent& ev) {
        using K = runtime::RunnerEvent::Kind;
        if (ev.index >= stepOfLaunch.size()) return;
        if ((x.options.time && ev.kind == K::Time) || (!x.options.time && ev.kind == K::Launch))
            x.stepsFinished(stepOfLaunch[ev.index]);
        else if (ev.kind == K::TimeTotal)
            x.stepsFinished(stepOfLaunch.back() + 1);
    };
    auto r = x.runner.run(req, x.cancel, onEvent);
    load.stop();
    if (!r.ok()) {
        // Errors of running kernels in the runner (a crash, an abort, a timeout, an error answer)
        // are marked so callers can tell them from the model's.
        support::DiagnosticList d = r.diagnostics();
        for (auto& e : d.items())
            if (e.where.empty()) {
                e.where = kRunnerWhere;
                e.code = support::DiagnosticCode::RunnerFault;
            }
        return d;
    }
    for (std::size_t l : stepOfLaunch) {  // the testing hook (run.h)
        const CompiledStep& cs = x.cm.steps[l];
        if (cs.outputs.empty() || std::find(corrupt.begin(), corrupt.end(), cs.name) == corrupt.end()) continue;
        ir::TensorData t = x.read(cs.outputs[0]);
        corruptTensor(t);
        x.write(cs.outputs[0], t);
    }
    x.report.threads = r->threads;
    for (std::size_t l = 0; l < r->kernels.size() && l < stepOfLaunch.size(); ++l) {
        KernelReport& k = x.report.kernels[stepOfLaunch[l]];
        k.time = r->kernels[l].stats;
        k.rotatedCopies = r->kernels[l].rotatedCopies;
        if (const auto& e = r->kernels[l].energy; e && e->valid) {
            k.energyJoules = e->joulesPerCall;
            k.avgPowerWatts = e->avgPowerWatts;
        }
    }
    x.totalMedian += r->total.median;
    x.totalMin += r->total.min;
    x.totalReps = x.totalReps == 0 ? r->total.reps : std::min(x.totalReps, r->total.reps);
    x.stepsFinished(next);
    return std::nullopt;
}

/// 3b. A reference step: its node runs in the reference interpreter on the arena's current
/// values (timed like a kernel, with fewer repetitions), and its outputs go back to the arena.
Stop runReferenceStep(Execution& x, std::size_t i) {
    const CompiledStep& s = x.cm.steps[i];
    const ir::Graph sub = singleNodeGraph(x.g, s.node);
    const std::vector<ir::TensorData> subInputs = nodeInputs(sub, x.g, *x.arena, x.layout);
    support::Expected<std::vector<ir::TensorData>> outs = eval::evaluate(sub, subInputs, x.reference, x.cancel);
    if (!outs.ok()) return outs.diagnostics();
    if (x.options.time) {
        runtime::RepeatPolicy policy;
        policy.warmup = 0;
        policy.minReps = std::max(1, std::min(x.options.minReps, 3));
        policy.maxReps = std::max(policy.minReps, std::min(x.options.maxReps, 20));
        policy.minSeconds = x.options.minSeconds;
        const std::vector<double> samples = runtime::measureRepeated(
            policy, [&](std::int64_t) { (void)eval::evaluate(sub, subInputs, x.reference); });
        KernelReport& k = x.report.kernels[i];
        k.time = runtime::computeTimingStats(samples);
        x.totalMedian += k.time.median;
        x.totalMin += k.time.min;
    }
    for (std::size_t o = 0; o < s.outputs.size() && o < outs->size(); ++o) x.write(s.outputs[o], (*outs)[o]);
    x.stepsFinished(i + 1);
    return std::nullopt;
}

/// 3. Every step in order: segments of kernel launches separated by reference steps; then the
/// end-to-end time (the sum over segments) and the graph outputs.
Stop runSteps(Execution& x) {
    const std::vector<std::string> corrupt = corruptKernelNames();
    x.kernelProgress(0, x.stepCount, kPhaseRunningKernels);
    std::size_t i = 0;
    while (i < x.cm.steps.size()) {
        if (x.cancel && x.cancel->isCancelled()) return stopWith(x.file, "run", "cancelled");
        if (x.progress)
            x.progress(0.1 + 0.7 * static_cast<double>(i) / static_cast<double>(x.cm.steps.size()), "running kernels");
        if (x.cm.steps[i].kind == StepKind::Kernel) {
            if (Stop stop = runKernelSegment(x, i, corrupt, i)) return stop;
        } else {
            if (Stop stop = runReferenceStep(x, i)) return stop;
            ++i;
        }
    }
    x.stepsFinished(x.cm.steps.size());
    x.report.total.median = x.totalMedian;
    x.report.total.min = x.totalMin;
    x.report.total.reps = x.totalReps;
    if (x.report.threads == 0) x.report.threads = x.options.threads;
    for (auto v : x.g.outputs()) x.report.outputs.emplace_back(x.g.value(v).name, x.read(v));
    return std::nullopt;
}

/// The tolerances a tensor is judged with (run.h): per dtype, widened by the RMS of the expected
/// tensor, unless RunOptions::relTol replaces both.
eval::CompareOptions tolerancesFor(const RunOptions& options, const ir::TensorData& expected, ir::DType dtype) {
    eval::CompareOptions co = eval::defaultCompareOptions(dtype);
    // An element is judged against the tensor's scale as well as its own magnitude: fp32 sums
    // that cancel to near zero carry absolute errors of the order of the terms, not of the result
    // (absTol = relTol * RMS of the expected tensor).
    const double scale = ir::isFloatingPoint(expected.dtype) ? rmsOf(expected) : 0.0;
    if (options.relTol >= 0) {
        co.relTol = options.relTol;
        co.absTol = options.relTol * scale;
    } else {
        co.absTol = std::max(co.absTol, co.relTol * scale);
    }
    return co;
}

/// 4. Each kernel against the reference interpreter run on the very inputs the kernel read (its
/// arena slots), so that a kernel's error is its own, not inherited from upstream; failing
/// kernels keep their data within RunOptions::keepFailingBytes.
Stop checkKernels(Execution& x) {
    x.report.checked = true;
    std::int64_t keptBytes = 0;
    x.kernelProgress(0, x.stepCount, kPhaseChecking);
    for (std::size_t s = 0; s < x.cm.steps.size(); ++s) {
        const CompiledStep& step = x.cm.steps[s];
        if (s > 0) x.kernelProgress(static_cast<int>(s), x.stepCount, kPhaseChecking);
        if (step.kind != StepKind::Kernel) continue;  // reference steps are the reference
        if (x.cancel && x.cancel->isCancelled()) return stopWith(x.file, "check", "cancelled");
        if (x.progress)
            x.progress(0.85 + 0.15 * static_cast<double>(s) / static_cast<double>(x.cm.steps.size()),
                       "checking against the reference interpreter");
        KernelReport& k = x.report.kernels[s];
        // A fused kernel is checked against its members run in the reference interpreter from the
        // kernel's own inputs.
        const ir::Graph sub =
            step.members.size() > 1 ? groupGraph(x.g, step.members, step.outputs) : singleNodeGraph(x.g, step.node);
        const std::vector<ir::TensorData> subInputs = nodeInputs(sub, x.g, *x.arena, x.layout);
        auto ref = eval::evaluate(sub, subInputs, x.reference, x.cancel);
        if (!ref.ok()) return ref.diagnostics();
        k.checked = true;
        for (std::size_t o = 0; o < sub.outputs().size() && o < ref->size(); ++o) {
            const ir::ValueId v = x.g.findValue(sub.value(sub.outputs()[o]).name);
            if (v == ir::kNoValue || !x.layout.slot.count(v)) continue;
            const ir::TensorData& expected = (*ref)[o];
            const ir::TensorData actual = x.read(v);
            const eval::CompareOptions co = tolerancesFor(x.options, expected, actual.dtype);
            OutputCheck c{x.g.value(v).name, eval::compareTensors(actual, expected, co), co, nullptr, nullptr, {}};
            if (!c.comparison.ok) {
                k.passed = false;
                c.actual = std::make_shared<const ir::TensorData>(actual);
                c.expected = std::make_shared<const ir::TensorData>(expected);
            }
            k.checks.push_back(std::move(c));
        }
        if (k.passed) continue;
        x.report.allPassed = false;
        // Whole tensors or nothing: a heatmap of part of a tensor would hide where it fails.
        std::int64_t need = 0;
        for (const auto& t : subInputs) need += static_cast<std::int64_t>(t.bytes.size());
        for (const auto& c : k.checks)
            if (c.actual) need += static_cast<std::int64_t>(c.actual->bytes.size() + c.expected->bytes.size());
        if (keptBytes + need <= x.options.keepFailingBytes) {
            keptBytes += need;
            const auto rin = sub.runtimeInputs();
            for (std::size_t i = 0; i < rin.size() && i < subInputs.size(); ++i)
                k.checkInputs.emplace_back(sub.value(rin[i]).name, std::make_shared<const ir::TensorData>(subInputs[i]));
        } else {
            for (auto& c : k.checks) c.actual = c.expected = nullptr;
            k.keptNote = "tensors of " + megabytes(need) + " exceed the " +
                         megabytes(std::max<std::int64_t>(0, x.options.keepFailingBytes - keptBytes)) +
                         " left for failing kernels' data (RunOptions::keepFailingBytes)";
        }
    }
    x.kernelProgress(x.stepCount, x.stepCount, kPhaseChecking);
    return std::nullopt;
}

/// Judges graph output `name` against `expected`; a failure clears allPassed and keeps both tensors.
void judgeOutput(Execution& x, const std::string& name, const ir::TensorData& actual, const ir::TensorData& expected,
                 const std::string& against) {
    const eval::CompareOptions co = tolerancesFor(x.options, expected, expected.dtype);
    OutputCheck c{name, eval::compareTensors(actual, expected, co), co, nullptr, nullptr, against};
    if (!c.comparison.ok) {
        x.report.allPassed = false;
        c.actual = std::make_shared<const ir::TensorData>(actual);
        c.expected = std::make_shared<const ir::TensorData>(expected);
    }
    x.report.outputChecks.push_back(std::move(c));
}

/// 5. The graph outputs end to end: against the reference interpreter run on the model's inputs
/// (with RunOptions::check; per-kernel checks feed each kernel what the upstream kernels wrote,
/// so they cannot see an error every later kernel inherits), and against expected tensors.
Stop checkGraphOutputs(Execution& x) {
    if (x.options.check) {
        if (x.progress) x.progress(0.99, "checking the graph outputs against the reference interpreter");
        auto whole = eval::evaluate(x.g, x.inputs, x.reference, x.cancel);
        if (!whole.ok()) return whole.diagnostics();
        for (std::size_t o = 0; o < x.g.outputs().size() && o < whole->size(); ++o)
            judgeOutput(x, x.report.outputs[o].first, x.report.outputs[o].second, (*whole)[o], "reference interpreter");
    }
    for (const auto& [name, expected] : x.options.expectedOutputs) {
        const auto& outputs = x.report.outputs;
        auto it = std::find_if(outputs.begin(), outputs.end(), [&](const auto& o) { return o.first == name; });
        if (it == outputs.end()) {
            std::string names;
            for (const auto& o : outputs) names += (names.empty() ? "'" : ", '") + o.first + "'";
            return stopWith(x.file, "expected outputs",
                            "the model has no output '" + name + "' (its outputs: " + names + ")");
        }
        x.report.checked = true;
        judgeOutput(x, name, it->second, expected, "expected");
    }
    return std::nullopt;
}

/// 6. Timings disturbed by other processes (run.h): their share of the CPUs while the kernels were
/// timed, or, without /proc, kernels' medians that add up to much more than the end-to-end median
/// of the same sequence (which they cannot unless threads waited for a time slice).
void warnAboutDisturbedTimings(Execution& x) {
    RunReport& report = x.report;
    const bool loadMeasured = x.loadTotalTicks > 0;
    if (loadMeasured && x.loadOthersTicks > 0.2 * x.loadTotalTicks) {
        char pct[16];
        std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * x.loadOthersTicks / x.loadTotalTicks);
        report.warnings.warning(x.file, "timing",
                                std::string("other processes used ") + pct +
                                    " of the CPUs' time while the kernels were timed: the times are likely inflated; " +
                                    // At one thread already, fewer threads is no advice.
                                    (report.threads == 1
                                         ? std::string("rerun on a quiet machine")
                                         : std::string("rerun on a quiet machine, or with fewer threads than idle "
                                                       "cores (--threads 1)")));
    }
    bool rotated = false;
    for (const auto& k : report.kernels) rotated = rotated || k.rotatedCopies > 1;
    // Without /proc, the kernels' medians against the end-to-end median (warm, not rotated: only
    // comparable when no kernel's inputs were rotated).
    if (!loadMeasured && !rotated && x.options.time && report.total.median > 0) {
        double sum = 0;
        for (const auto& k : report.kernels) sum += k.time.median;
        if (sum > 1.5 * report.total.median)
            report.warnings.warning(x.file, "timing",
                                    "per-kernel medians add up to " + std::to_string(sum * 1e3) +
                                        " ms, more than 1.5x the end-to-end median (" +
                                        std::to_string(report.total.median * 1e3) +
                                        " ms): other processes competed for the cores; rerun on a quiet machine");
    }
}

}  // namespace

runtime::cuda::CudaCompileOptions cudaCompileOptions(const CompiledModel& cm, const RunOptions& options,
                                                      const std::string& arch) {
    runtime::cuda::CudaCompileOptions nopts;
    nopts.arch = arch;
    nopts.extraOptions = options.nvrtcOptions;
    nopts.cacheDir = options.cudaCacheDir;
    nopts.sourceName = stemOf(cm.model.sourcePath) + ".cu";
    return nopts;
}

support::Expected<RunReport> runModel(const CompiledModel& cm, const std::vector<ir::TensorData>& inputs,
                                      const RunOptions& options, runtime::RunnerClient& runner,
                                      const support::CancelToken* cancel, const support::ProgressSink& progress) {
    Execution x(cm, inputs, options, runner, cancel, progress);
    if (Stop stop = compileModule(x)) return *stop;
    if (Stop stop = fillArena(x)) return *stop;
    describeSteps(x);
    if (Stop stop = runSteps(x)) return *stop;
    if (options.check)
        if (Stop stop = checkKernels(x)) return *stop;
    if (Stop stop = checkGraphOutputs(x)) return *stop;
    warnAboutDisturbedTimings(x);
    if (progress) progress(1.0, "done");
    return std::move(x.report);
}

support::Expected<std::vector<std::pair<std::string, ir::TensorData>>> rerunInReference(
    const CompiledModel& cm, const std::string& kernel,
    const std::vector<std::pair<std::string, std::shared_ptr<const ir::TensorData>>>& inputs,
    const support::CancelToken* cancel) {
    support::DiagnosticList diags;
    const ir::Graph& g = cm.model.graph;
    const std::string& file = cm.model.sourcePath;
    const auto it = std::find_if(cm.steps.begin(), cm.steps.end(),
                                 [&](const CompiledStep& s) { return s.name == kernel; });
    if (it == cm.steps.end()) {
        diags.error(file, "kernel '" + kernel + "'", "no such kernel in the compiled model");
        return diags;
    }
    const CompiledStep& step = *it;
    ir::Graph sub = step.members.size() > 1 ? groupGraph(g, step.members, step.outputs) : singleNodeGraph(g, step.node);
    std::vector<ir::TensorData> subInputs;
    for (auto sv : sub.runtimeInputs()) {
        const ir::Value& val = sub.value(sv);
        const auto in = std::find_if(inputs.begin(), inputs.end(), [&](const auto& p) { return p.first == val.name; });
        if (in == inputs.end() || !in->second) {
            diags.error(file, "kernel '" + kernel + "'", "input '" + val.name + "' was not kept");
            return diags;
        }
        if (in->second->dtype != val.type.dtype ||
            static_cast<std::int64_t>(in->second->bytes.size()) != valueBytes(sub, sv)) {
            diags.error(file, "kernel '" + kernel + "'", "input '" + val.name + "' does not have the type " + val.type.str());
            return diags;
        }
        subInputs.push_back(*in->second);
    }
    eval::ReferenceOptions ropts;
    ropts.opset = cm.model.defaultOpset();
    ropts.file = file;
    auto outs = eval::evaluate(sub, subInputs, ropts, cancel);
    if (!outs.ok()) return outs.diagnostics();
    std::vector<std::pair<std::string, ir::TensorData>> result;
    for (std::size_t o = 0; o < sub.outputs().size() && o < outs->size(); ++o)
        result.emplace_back(sub.value(sub.outputs()[o]).name, std::move((*outs)[o]));
    return result;
}

}  // namespace tessera::pipeline
