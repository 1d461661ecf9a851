#include "core/pipeline/run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

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

}  // namespace

support::Expected<RunReport> runModel(const CompiledModel& cm, const std::vector<ir::TensorData>& callerInputs,
                                      const RunOptions& options, runtime::RunnerClient& runner,
                                      const support::CancelToken* cancel, const support::ProgressSink& progress) {
    support::DiagnosticList diags;
    const std::vector<ir::TensorData> inputs = cm.runtimeInputsOf(callerInputs);
    const ir::Graph& g = cm.model.graph;
    const std::string& file = cm.model.sourcePath;
    RunReport report;

    // 1. Compile the module.
    if (progress) progress(0.0, "compiling kernels");
    const KernelProgress& kp = options.kernelProgress;
    const int stepCount = std::max(1, static_cast<int>(cm.steps.size()));
    if (kp) kp(0, 1, kPhaseCompilingModule);
    runtime::HostCompilerOptions copts = options.compiler;
    if (copts.sourceName.empty()) copts.sourceName = stemOf(file) + ".cpp";
    const bool anyKernel = cm.kernelCount() > 0;
    const bool cuda = cm.target == lower::Target::Cuda;
    if (anyKernel && cuda) {
        auto devs = runner.devices(cancel);
        if (!devs.ok()) {  // "no CUDA driver found ...": not a kernel fault
            support::DiagnosticList d = devs.diagnostics();
            if (!d.items().empty())
                d.items()[0].notes.push_back(
                    "a GPU run needs the NVIDIA driver; without one, `tessera-cli compile MODEL --target cuda "
                    "[--emit ptx]` shows the generated code");
            return d;
        }
        const auto it = std::find_if(devs->begin(), devs->end(),
                                     [&](const runtime::cuda::CudaDeviceInfo& dv) { return dv.ordinal == options.cudaDevice; });
        if (it == devs->end()) {
            diags.error(file, "cuda",
                        "no CUDA device " + std::to_string(options.cudaDevice) + " (" + std::to_string(devs->size()) +
                            " found)");
            return diags;
        }
        report.device = *it;
        runtime::cuda::CudaCompileOptions nopts;
        nopts.arch = options.cudaArch.empty() ? it->arch() : options.cudaArch;
        nopts.extraOptions = options.nvrtcOptions;
        nopts.cacheDir = options.cudaCacheDir;
        nopts.sourceName = stemOf(file) + ".cu";
        if (progress) progress(0.0, "compiling kernels (NVRTC " + nopts.arch + ")");
        auto mod = runtime::cuda::compileCuda(cm.code.source, nopts, cancel);
        if (!mod.ok()) return mod.diagnostics();
        report.cudaModule = *mod;
    } else if (anyKernel) {
        // Compile units: one piece per kernel, named by its entry point (stable across edits).
        runtime::ModuleLayout layout;
        layout.sharedPreludeBytes = cm.code.sharedPreludeBytes;
        std::size_t k = 0;
        for (const auto& s : cm.steps) {
            if (s.kind != StepKind::Kernel) continue;
            if (k < cm.code.kernelSpans.size() && cm.code.kernelSpans[k].size > 0) {
                const codegen::TextSpan& span = cm.code.kernelSpans[k];
                layout.pieces.push_back({span.offset, span.size, s.entry, reducedOptimisation(s, span.size)});
            }
            ++k;
        }
        runtime::UnitProgress unitProgress;
        if (kp) unitProgress = [&kp](int done, int total) { kp(done, total, kPhaseCompilingModule); };
        auto lib = runtime::compileHostModule(cm.code.source, layout, copts, cancel, unitProgress);
        if (!lib.ok()) return lib.diagnostics();
        report.library = *lib;
    }
    if (kp && (cuda || !anyKernel)) kp(1, 1, kPhaseCompilingModule);

    // 2. Arena layout: every tensor a step touches, plus the graph outputs.
    Layout layout;
    const auto rin = g.runtimeInputs();
    if (rin.size() != inputs.size()) {
        diags.error(file, "graph inputs",
                    "expected " + std::to_string(rin.size()) + " inputs, got " + std::to_string(inputs.size()));
        return diags;
    }
    for (auto v : rin) layout.add(g, v);
    for (const auto& s : cm.steps) {
        for (auto v : s.inputs) layout.add(g, v);
        for (auto v : s.outputs) layout.add(g, v);
    }
    for (auto v : g.outputs()) layout.add(g, v);
    {
        const double phys = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
        if (phys > 0 && static_cast<double>(layout.total) > 0.8 * phys) {
            diags.error(file, "memory",
                        "the model's tensors need " + std::to_string(static_cast<double>(layout.total) / (1 << 30)) +
                            " GiB; this machine has " + std::to_string(phys / (1 << 30)) + " GiB of memory");
            return diags;
        }
    }
    auto arenaOr = runtime::SharedArena::create(std::max<std::int64_t>(layout.total, kAlign));
    if (!arenaOr.ok()) return arenaOr.diagnostics();
    runtime::SharedArena arena = std::move(*arenaOr);
    for (const auto& [v, id] : layout.slot) {
        const auto& val = g.value(v);
        if (val.data) arena.write(layout.buffers[static_cast<std::size_t>(id)], val.data->bytes.data(),
                                  static_cast<std::int64_t>(val.data->bytes.size()));
    }
    for (std::size_t i = 0; i < rin.size(); ++i) {
        const auto& b = layout.buffers[static_cast<std::size_t>(layout.slot[rin[i]])];
        if (static_cast<std::int64_t>(inputs[i].bytes.size()) != b.bytes) {
            diags.error(file, "input '" + g.value(rin[i]).name + "'",
                        "expected " + g.value(rin[i]).type.str() + " (" + std::to_string(b.bytes) + " bytes), got " +
                            std::to_string(inputs[i].bytes.size()) + " bytes");
            return diags;
        }
        arena.write(b, inputs[i].bytes.data(), b.bytes);
    }

    // 3. Segments of kernel launches separated by reference steps.
    report.kernels.resize(cm.steps.size());
    for (std::size_t i = 0; i < cm.steps.size(); ++i) {
        const CompiledStep& s = cm.steps[i];
        KernelReport& k = report.kernels[i];
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
            for (auto v : s.inputs) k.compulsoryBytes += valueBytes(g, v);
            for (auto v : s.outputs) k.compulsoryBytes += valueBytes(g, v);
            k.bytes = k.compulsoryBytes;
        }
    }
    eval::ReferenceOptions ropts;
    ropts.opset = cm.model.defaultOpset();
    ropts.file = file;
    const std::vector<std::string> corrupt = corruptKernelNames();
    std::size_t i = 0;
    double loadTotalTicks = 0, loadOthersTicks = 0;  // CPU capacity and other processes' use while timing
    double totalMedian = 0, totalMin = 0;
    std::int64_t totalReps = 0;
    // Steps finished so far (run, and timed when timing), reported only when it grows.
    int stepsDone = 0;
    auto stepsFinished = [&](std::size_t n) {
        const int d = std::min(stepCount, static_cast<int>(n));
        if (d <= stepsDone) return;
        stepsDone = d;
        if (kp) kp(stepsDone, stepCount, kPhaseRunningKernels);
    };
    if (kp) kp(0, stepCount, kPhaseRunningKernels);
    while (i < cm.steps.size()) {
        if (cancel && cancel->isCancelled()) {
            diags.error(file, "run", "cancelled");
            return diags;
        }
        if (progress)
            progress(0.1 + 0.7 * static_cast<double>(i) / static_cast<double>(cm.steps.size()), "running kernels");
        if (cm.steps[i].kind == StepKind::Kernel) {
            runtime::RunRequest req;
            req.libraryPath = report.library.path;
            if (cuda) {
                req.target = runtime::RunTarget::Cuda;
                req.libraryPath.clear();
                req.modulePath = report.cudaModule ? report.cudaModule->cubinPath : std::string();
                if (req.modulePath.empty() && report.cudaModule) req.modulePath = report.cudaModule->ptxPath;
                req.device = options.cudaDevice;
            }
            arena.attach(req);
            req.buffers = layout.buffers;
            req.threads = options.threads;
            req.timing.time = options.time;
            req.timing.warmup = options.warmup;
            req.timing.minReps = options.minReps;
            req.timing.maxReps = options.maxReps;
            req.timing.minSeconds = options.minSeconds;
            req.timeoutSeconds = options.timeoutSeconds;
            std::vector<std::size_t> stepOfLaunch;
            for (; i < cm.steps.size() && cm.steps[i].kind == StepKind::Kernel; ++i) {
                const CompiledStep& s = cm.steps[i];
                runtime::LaunchSpec l;
                l.entry = s.entry;
                l.label = s.name;
                l.grid = s.launch.gridX;
                l.block = s.launch.blockX;
                for (auto v : s.inputs) l.args.push_back(layout.slot[v]);
                for (auto v : s.outputs) l.args.push_back(layout.slot[v]);
                req.launches.push_back(std::move(l));
                stepOfLaunch.push_back(i);
                // The testing hook corrupts a kernel's output between segments: ending the
                // segment after it lets the kernels after it read the corrupted values.
                if (std::find(corrupt.begin(), corrupt.end(), s.name) != corrupt.end()) {
                    ++i;
                    break;
                }
            }
            // Other processes' CPU time while this segment ran (CPU target, timed runs): kernels
            // timed on busy cores look plausible and are wrong, so the report says so.
            const bool watchLoad = options.time && !cuda;
            const auto sysBefore = watchLoad ? support::systemCpuTimes() : std::nullopt;
            const pid_t runnerPidBefore = runner.pid();
            const auto runnerBefore = watchLoad ? support::processCpuTicks(runnerPidBefore) : std::nullopt;
            const auto selfBefore = watchLoad ? support::processCpuTicks(getpid()) : std::nullopt;
            // Launch i's event means the steps before it are finished: run (untimed runs) or run
            // and timed (the runner times after the checked pass of the whole segment).
            auto onEvent = [&](const runtime::RunnerEvent& ev) {
                using K = runtime::RunnerEvent::Kind;
                if (ev.index >= stepOfLaunch.size()) return;
                if ((options.time && ev.kind == K::Time) || (!options.time && ev.kind == K::Launch))
                    stepsFinished(stepOfLaunch[ev.index]);
                else if (ev.kind == K::TimeTotal)
                    stepsFinished(stepOfLaunch.back() + 1);
            };
            auto r = runner.run(req, cancel, onEvent);
            if (watchLoad && sysBefore) {
                const auto sysAfter = support::systemCpuTimes();
                const auto runnerAfter = support::processCpuTicks(runner.pid());
                const auto selfAfter = support::processCpuTicks(getpid());
                if (sysAfter && runnerAfter && selfAfter && selfBefore) {
                    const std::uint64_t runnerTicks =
                        *runnerAfter - (runner.pid() == runnerPidBefore && runnerBefore ? std::min(*runnerBefore, *runnerAfter) : 0);
                    const std::uint64_t ours = runnerTicks + (*selfAfter - std::min(*selfBefore, *selfAfter));
                    const double share = support::othersShare(*sysBefore, *sysAfter, ours);
                    loadTotalTicks += static_cast<double>(sysAfter->total - sysBefore->total);
                    loadOthersTicks += share * static_cast<double>(sysAfter->total - sysBefore->total);
                }
            }
            if (!r.ok()) {
                // Faults of the runner (crash, abort, timeout) are marked so callers can tell them apart.
                support::DiagnosticList d = r.diagnostics();
                for (auto& x : d.items())
                    if (x.where.empty()) x.where = kRunnerWhere;
                return d;
            }
            for (std::size_t l : stepOfLaunch) {  // the testing hook (run.h)
                const CompiledStep& cs = cm.steps[l];
                if (cs.outputs.empty() ||
                    std::find(corrupt.begin(), corrupt.end(), cs.name) == corrupt.end())
                    continue;
                const auto& b = layout.buffers[static_cast<std::size_t>(layout.slot[cs.outputs[0]])];
                ir::TensorData t = readTensor(arena, b, g, cs.outputs[0]);
                corruptTensor(t);
                arena.write(b, t.bytes.data(), std::min<std::int64_t>(b.bytes, static_cast<std::int64_t>(t.bytes.size())));
            }
            report.threads = r->threads;
            for (std::size_t l = 0; l < r->kernels.size() && l < stepOfLaunch.size(); ++l) {
                report.kernels[stepOfLaunch[l]].time = r->kernels[l].stats;
                report.kernels[stepOfLaunch[l]].rotatedCopies = r->kernels[l].rotatedCopies;
                if (const auto& e = r->kernels[l].energy; e && e->valid) {
                    report.kernels[stepOfLaunch[l]].energyJoules = e->joulesPerCall;
                    report.kernels[stepOfLaunch[l]].avgPowerWatts = e->avgPowerWatts;
                }
            }
            totalMedian += r->total.median;
            totalMin += r->total.min;
            totalReps = totalReps == 0 ? r->total.reps : std::min(totalReps, r->total.reps);
            stepsFinished(i);
            continue;
        }
        // A reference step: run the node on the arena's current values.
        const CompiledStep& s = cm.steps[i];
        ir::Graph sub = singleNodeGraph(g, s.node);
        const std::vector<ir::TensorData> subInputs = nodeInputs(sub, g, arena, layout);
        support::Expected<std::vector<ir::TensorData>> outs = eval::evaluate(sub, subInputs, ropts, cancel);
        if (!outs.ok()) return outs.diagnostics();
        std::vector<double> samples;
        if (options.time) {
            runtime::RepeatPolicy policy;
            policy.warmup = 0;
            policy.minReps = std::max(1, std::min(options.minReps, 3));
            policy.maxReps = std::max(policy.minReps, std::min(options.maxReps, 20));
            policy.minSeconds = options.minSeconds;
            samples = runtime::measureRepeated(policy, [&](std::int64_t) { (void)eval::evaluate(sub, subInputs, ropts); });
            report.kernels[i].time = runtime::computeTimingStats(samples);
            totalMedian += report.kernels[i].time.median;
            totalMin += report.kernels[i].time.min;
        }
        for (std::size_t o = 0; o < s.outputs.size() && o < outs->size(); ++o) {
            const ir::TensorData& t = (*outs)[o];
            const auto& b = layout.buffers[static_cast<std::size_t>(layout.slot[s.outputs[o]])];
            arena.write(b, t.bytes.data(), std::min<std::int64_t>(b.bytes, static_cast<std::int64_t>(t.bytes.size())));
        }
        ++i;
        stepsFinished(i);
    }
    stepsFinished(cm.steps.size());
    report.total.median = totalMedian;
    report.total.min = totalMin;
    report.total.reps = totalReps;
    if (report.threads == 0) report.threads = options.threads;

    // 4. Graph outputs.
    for (auto v : g.outputs()) {
        const auto& val = g.value(v);
        report.outputs.emplace_back(val.name, readTensor(arena, layout.buffers[static_cast<std::size_t>(layout.slot[v])], g, v));
    }

    // 5. Checks: each kernel against the reference interpreter run on the very inputs the kernel
    // read (its arena slots), so that a kernel's error is its own, not inherited from upstream.
    if (options.check) {
        report.checked = true;
        std::int64_t keptBytes = 0;
        if (kp) kp(0, stepCount, kPhaseChecking);
        for (std::size_t s = 0; s < cm.steps.size(); ++s) {
            const CompiledStep& step = cm.steps[s];
            if (kp && s > 0) kp(static_cast<int>(s), stepCount, kPhaseChecking);
            if (step.kind != StepKind::Kernel) continue;  // reference steps are the reference
            if (cancel && cancel->isCancelled()) {
                diags.error(file, "check", "cancelled");
                return diags;
            }
            if (progress)
                progress(0.85 + 0.15 * static_cast<double>(s) / static_cast<double>(cm.steps.size()),
                         "checking against the reference interpreter");
            KernelReport& k = report.kernels[s];
            // A fused kernel is checked against its members run in the reference interpreter
            // from the kernel's own inputs.
            ir::Graph sub = step.members.size() > 1 ? groupGraph(g, step.members, step.outputs)
                                                    : singleNodeGraph(g, step.node);
            const std::vector<ir::TensorData> subInputs = nodeInputs(sub, g, arena, layout);
            auto ref = eval::evaluate(sub, subInputs, ropts, cancel);
            if (!ref.ok()) return ref.diagnostics();
            k.checked = true;
            for (std::size_t o = 0; o < sub.outputs().size() && o < ref->size(); ++o) {
                const ir::ValueId v = g.findValue(sub.value(sub.outputs()[o]).name);
                if (v == ir::kNoValue || !layout.slot.count(v)) continue;
                const ir::TensorData& expected = (*ref)[o];
                const ir::TensorData actual =
                    readTensor(arena, layout.buffers[static_cast<std::size_t>(layout.slot[v])], g, v);
                eval::CompareOptions co = eval::defaultCompareOptions(actual.dtype);
                // An element is judged against the tensor's scale as well as its own magnitude:
                // fp32 sums that cancel to near zero carry absolute errors of the order of the
                // terms, not of the result (absTol = relTol * RMS of the expected tensor). A
                // tolerance given by the caller replaces both.
                const double scale = ir::isFloatingPoint(expected.dtype) ? rmsOf(expected) : 0.0;
                if (options.relTol >= 0) {
                    co.relTol = options.relTol;
                    co.absTol = options.relTol * scale;
                } else {
                    co.absTol = std::max(co.absTol, co.relTol * scale);
                }
                OutputCheck c{g.value(v).name, eval::compareTensors(actual, expected, co), co, nullptr, nullptr, {}};
                if (!c.comparison.ok) {
                    k.passed = false;
                    c.actual = std::make_shared<const ir::TensorData>(actual);
                    c.expected = std::make_shared<const ir::TensorData>(expected);
                }
                k.checks.push_back(std::move(c));
            }
            if (!k.passed) {
                report.allPassed = false;
                // Whole tensors or nothing: a heatmap of part of a tensor would hide where it fails.
                std::int64_t need = 0;
                for (const auto& t : subInputs) need += static_cast<std::int64_t>(t.bytes.size());
                for (const auto& c : k.checks)
                    if (c.actual) need += static_cast<std::int64_t>(c.actual->bytes.size() + c.expected->bytes.size());
                if (keptBytes + need <= options.keepFailingBytes) {
                    keptBytes += need;
                    const auto rin = sub.runtimeInputs();
                    for (std::size_t x = 0; x < rin.size() && x < subInputs.size(); ++x)
                        k.checkInputs.emplace_back(sub.value(rin[x]).name,
                                                   std::make_shared<const ir::TensorData>(subInputs[x]));
                } else {
                    for (auto& c : k.checks) c.actual = c.expected = nullptr;
                    k.keptNote = "tensors of " + megabytes(need) + " exceed the " +
                                 megabytes(std::max<std::int64_t>(0, options.keepFailingBytes - keptBytes)) +
                                 " left for failing kernels' data (RunOptions::keepFailingBytes)";
                }
            }
        }
        if (kp) kp(stepCount, stepCount, kPhaseChecking);
    }

    // 5b. The graph outputs end to end: against the reference interpreter run on the model's
    // inputs (with --check; per-kernel checks feed each kernel what the upstream kernels wrote,
    // so they cannot see an error every later kernel inherits), and against expected tensors.
    auto judge = [&](const std::string& name, const ir::TensorData& actual, const ir::TensorData& expected,
                     const std::string& against) {
        eval::CompareOptions co = eval::defaultCompareOptions(expected.dtype);
        const double scale = ir::isFloatingPoint(expected.dtype) ? rmsOf(expected) : 0.0;
        if (options.relTol >= 0) {
            co.relTol = options.relTol;
            co.absTol = options.relTol * scale;
        } else {
            co.absTol = std::max(co.absTol, co.relTol * scale);
        }
        OutputCheck c{name, eval::compareTensors(actual, expected, co), co, nullptr, nullptr, against};
        if (!c.comparison.ok) {
            report.allPassed = false;
            c.actual = std::make_shared<const ir::TensorData>(actual);
            c.expected = std::make_shared<const ir::TensorData>(expected);
        }
        report.outputChecks.push_back(std::move(c));
    };
    if (options.check) {
        if (progress) progress(0.99, "checking the graph outputs against the reference interpreter");
        auto whole = eval::evaluate(g, inputs, ropts, cancel);
        if (!whole.ok()) return whole.diagnostics();
        for (std::size_t o = 0; o < g.outputs().size() && o < whole->size(); ++o)
            judge(report.outputs[o].first, report.outputs[o].second, (*whole)[o], "reference interpreter");
    }
    for (const auto& [name, expected] : options.expectedOutputs) {
        auto it = std::find_if(report.outputs.begin(), report.outputs.end(),
                               [&](const auto& o) { return o.first == name; });
        if (it == report.outputs.end()) {
            std::string names;
            for (const auto& o : report.outputs) names += (names.empty() ? "'" : ", '") + o.first + "'";
            diags.error(file, "expected outputs", "the model has no output '" + name + "' (its outputs: " + names + ")");
            return diags;
        }
        report.checked = true;
        judge(name, it->second, expected, "expected");
    }

    // 6. Timings disturbed by other processes: the kernels' medians cannot add up to much more
    // than the end-to-end median of the same sequence unless threads waited for a time slice.
    const bool loadMeasured = loadTotalTicks > 0;
    if (loadMeasured && loadOthersTicks > 0.2 * loadTotalTicks) {
        char pct[16];
        std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * loadOthersTicks / loadTotalTicks);
        report.warnings.warning(file, "timing",
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
    if (!loadMeasured && !rotated && options.time && report.total.median > 0) {
        double sum = 0;
        for (const auto& k : report.kernels) sum += k.time.median;
        if (sum > 1.5 * report.total.median)
            report.warnings.warning(file, "timing",
                                    "per-kernel medians add up to " + std::to_string(sum * 1e3) +
                                        " ms, more than 1.5x the end-to-end median (" +
                                        std::to_string(report.total.median * 1e3) +
                                        " ms): other processes competed for the cores; rerun on a quiet machine");
    }
    if (progress) progress(1.0, "done");
    return report;
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
