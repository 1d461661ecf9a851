#include "app/cli/roofline_cmd.h"
#include "app/cli/cli_output.h"

#include <algorithm>

#include <iomanip>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/inspect.h"
#include "app/cli/run_cmd.h"
#include "core/perf/cpu_microbench.h"
#include "core/perf/cpu_profile.h"
#include "core/perf/gpu_microbench.h"
#include "core/perf/machine_profile.h"
#include "core/pipeline/engine.h"

namespace tessera::cli {

namespace {

/// A missing or failing tool (the host compiler, tessera-runner): a setup problem (exit 2).
bool isCompileProblem(const support::DiagnosticList& d) {
    return d.hasCode(support::DiagnosticCode::CompilerFailed) || d.hasCode(support::DiagnosticCode::RunnerNotFound);
}

/// A failure of the run itself (exit 4) rather than of the setup (exit 2).
bool isRunFault(const support::DiagnosticList& d) {
    return d.hasCode(support::DiagnosticCode::RunnerFault) || d.hasCode(support::DiagnosticCode::KernelLaunchFailed);
}

bool saveIfAsked(const RooflineMeasureOptions& options, const perf::MachineProfile& profile, std::ostream& err,
                 const support::DiagnosticList& warnings = {}) {
    if (!options.save) return true;
    // Roofs the measurement itself found inconsistent would mislead every later chart.
    if (perf::measurementLooksDisturbed(warnings) && !options.force) {
        err << "tessera-cli: error: the profile was not saved: the measurement looks disturbed (see the warnings "
               "above); measure again on a quiet machine, or with fewer threads than the idle cores "
               "(--threads 1), or add --force to save it anyway\n";
        return false;
    }
    auto path = perf::saveProfileToDefaultDir(profile);
    if (!path) {
        printDiagnostics(path.diagnostics(), err);
        return false;
    }
    err << "saved profile: " << *path << "\n";
    if (options.quick)
        err << "tessera-cli: warning: these are --quick roofs (short measurements, some at one thread count only) and "
               "every chart of this machine will use them; for charts, measure without --quick on a quiet machine\n";
    return true;
}

std::string mib(std::int64_t bytes) { return std::to_string(bytes / (1024 * 1024)) + " MiB"; }

int runRooflineCuda(const RooflineMeasureOptions& options, int device, std::ostream& out, std::ostream& err) {
    if (options.threads > 0 || options.sweep || !options.isa.empty() || !options.cxx.empty()) {
        err << "tessera-cli: error: --threads, --sweep, --isa and --cxx are for --target cpu (the CUDA measurement always "
               "sweeps the working set)\n";
        return kExitBadInput;
    }
    perf::GpuMicrobenchOptions o;
    o.device = device;
    o.arch = options.arch;
    o.quick = options.quick;
    o.minSeconds = options.minSeconds;
    support::ProgressSink progress;
    if (!options.json)
        progress = [&err](double f, const std::string& phase) {
            err << "[" << std::setw(3) << static_cast<int>(f * 100 + 0.5) << "%] " << phase << "\n";
        };
    const std::shared_ptr<pipeline::Runner> runner = pipeline::makeRunner(0);
    auto r = perf::measureGpuRoofs(o, *runner, nullptr, progress);
    if (!r) {
        printDiagnostics(r.diagnostics(), err);
        return isRunFault(r.diagnostics()) ? kExitKernelFault : kExitBadInput;
    }
    printDiagnostics(r.diagnostics(), err);  // warnings
    perf::MachineProfile profile = r->profile;
    profile.description = std::string("tessera-cli roofline measure --target cuda") + (options.quick ? " --quick" : "") +
                          ", " + r->arch;
    // A refused --save still prints the table below: the measurement is not lost.
    const bool saved = saveIfAsked(options, profile, err, r.diagnostics());
    const int rc = saved ? 0 : kExitBadInput;

    const perf::GpuTheoreticalPeaks& pk = r->peaks;
    if (options.json) {
        nlohmann::json j = perf::profileToJson(profile);
        j["device"] = runtime::cuda::cudaDeviceInfoToJson(r->device);
        j["arch"] = r->arch;
        j["theoretical"] = {{"fp32", pk.fp32}, {"fp16", pk.fp16}, {"tensor_f16", pk.tensorF16},
                            {"tensor_tf32", pk.tensorTf32}, {"hbm", pk.hbm}, {"l2", pk.l2}, {"shared", pk.shared}};
        nlohmann::json checks = nlohmann::json::array();
        for (const auto& c : r->checks)
            checks.push_back({{"roof", c.roof}, {"value", c.value}, {"theoretical", c.theoretical}, {"ratio", c.ratio},
                              {"plausible", c.plausible}});
        j["checks"] = std::move(checks);
        nlohmann::json sweep = nlohmann::json::array();
        for (const auto& p : r->sweep)
            sweep.push_back({{"method", p.method}, {"working_set_bytes", p.workingSetBytes}, {"gbps", p.gbPerSecond}});
        j["sweep"] = std::move(sweep);
        j["notes"] = r->notes;
        j["compile_seconds"] = r->compileSeconds;
        j["seconds"] = r->seconds;
        out << j.dump(2) << "\n";
        return rc;
    }

    const auto& d = r->device;
    out << "device " << d.ordinal << ": " << d.name << " (" << d.arch() << ", " << d.smCount << " SMs at "
        << d.clockKHz / 1000 << " MHz, L2 " << mib(d.l2Bytes) << ", " << mib(d.totalMemoryBytes) << ", "
        << d.memoryBusWidthBits << "-bit memory at " << d.memoryClockKHz / 1000 << " MHz)\n";
    out << "compiled for " << r->arch << "\n";
    out << std::left << std::setw(26) << "roof" << std::right << std::setw(12) << "value" << "  " << std::left
        << std::setw(8) << "unit" << std::right << std::setw(9) << "of peak" << "  method\n";
    for (std::size_t i = 0; i < r->roofs.size(); ++i) {
        const auto& roof = r->roofs[i];
        const auto& c = r->checks[i];
        std::ostringstream pct;
        if (c.theoretical > 0) pct << std::fixed << std::setprecision(0) << 100 * c.ratio << "%";
        else pct << "-";
        out << std::left << std::setw(26) << roof.name << std::right << std::setw(12) << std::fixed
            << std::setprecision(1) << roof.value << "  " << std::left << std::setw(8) << roof.unit << std::right
            << std::setw(9) << pct.str() << "  " << roof.method << "\n";
    }
    out << std::fixed << std::setprecision(0) << "theoretical: FP32 " << pk.fp32 << ", FP16 " << pk.fp16
        << ", tensor FP16/BF16 " << pk.tensorF16 << ", TF32 " << pk.tensorTf32 << " GFLOP/s; HBM " << pk.hbm
        << ", L2 (nominal) " << pk.l2 << ", shared " << pk.shared << " GB/s\n";
    if (!r->sweep.empty()) {
        out << "working-set sweep (GB/s):\n";
        for (const auto& p : r->sweep)
            out << "  " << std::left << std::setw(6) << p.method << std::right << std::setw(12)
                << p.workingSetBytes / 1024 << " KiB  " << std::fixed << std::setprecision(1) << p.gbPerSecond << "\n";
    }
    for (const auto& n : r->notes) out << "note: " << n << "\n";
    out << std::defaultfloat << "measured in " << std::setprecision(3) << r->seconds << " s\n";
    return rc;
}

}  // namespace

int runRooflineMeasure(const RooflineMeasureOptions& options, std::ostream& out, std::ostream& err) {
    if (options.target == "cuda" || options.target.rfind("cuda:", 0) == 0) {
        int device = options.device >= 0 ? options.device : 0;
        if (options.target.size() > 5) {
            const std::string n = options.target.substr(5);
            if (n.empty() || n.size() > 4 || n.find_first_not_of("0123456789") != std::string::npos) {
                err << "tessera-cli: error: --target " << options.target << ": expected cuda or cuda:N\n";
                return kExitBadInput;
            }
            const int fromTarget = std::stoi(n);
            if (options.device >= 0 && options.device != fromTarget) {
                err << "tessera-cli: error: --target " << options.target << " and --device " << options.device
                    << " name different devices\n";
                return kExitBadInput;
            }
            device = fromTarget;
        }
        return runRooflineCuda(options, device, out, err);
    }
    if (options.target != "cpu") {
        err << "tessera-cli: error: unknown target '" << options.target << "' (roofline measure supports --target cpu or cuda)\n";
        return kExitBadInput;
    }
    if (options.device >= 0 || !options.arch.empty()) {
        err << "tessera-cli: error: --device and --arch are for --target cuda\n";
        return kExitBadInput;
    }
    perf::CpuMicrobenchOptions o;
    o.quick = options.quick;
    o.sweep = options.sweep;
    o.minSeconds = options.minSeconds;
    if (options.threads > 0)
        for (int t = 1; t <= options.threads; ++t) o.threadCounts.push_back(t);
    if (!options.cxx.empty()) o.compiler.compiler = options.cxx;
    if (!options.isa.empty()) {
        const perf::CpuIsa native = perf::detectCpuIsa();
        const perf::CpuIsa all[] = {perf::CpuIsa::Scalar, perf::CpuIsa::Avx2, perf::CpuIsa::Avx512};
        bool known = false;
        for (perf::CpuIsa isa : all) {
            if (options.isa != perf::cpuIsaName(isa)) continue;
            known = true;
            if (static_cast<int>(isa) > static_cast<int>(native)) {
                err << "tessera-cli: error: this CPU does not support " << options.isa << " (widest: "
                    << perf::cpuIsaName(native) << ")\n";
                return kExitBadInput;
            }
            o.forceIsa = true;
            o.isa = isa;
        }
        if (!known) {
            err << "tessera-cli: error: unknown ISA '" << options.isa << "' (scalar, avx2 or avx512)\n";
            return kExitBadInput;
        }
    }
    if (!options.json)
        o.progress = [&err](double f, const std::string& phase) {
            err << "[" << std::setw(3) << static_cast<int>(f * 100 + 0.5) << "%] " << phase << "\n";
        };
    auto r = perf::measureCpuRoofs(o);
    if (!r) {
        printDiagnostics(r.diagnostics(), err);
        return isCompileProblem(r.diagnostics()) ? kExitBadInput : kExitKernelFault;
    }
    printDiagnostics(r.diagnostics(), err);  // warnings

    const perf::MachineProfile profile = perf::cpuProfileFromMeasurement(*r, "tessera-cli roofline measure", options.quick);

    // The table (or JSON) first: a refused --save must not lose the measurement.
    const bool saved = saveIfAsked(options, profile, err, r.diagnostics());
    const int rc = saved ? 0 : kExitBadInput;

    if (options.json) {
        nlohmann::json j = perf::profileToJson(profile);
        nlohmann::json warnings = nlohmann::json::array();
        for (const auto& w : r.diagnostics().items()) warnings.push_back(w.message);
        j["warnings"] = std::move(warnings);
        j["disturbed"] = perf::measurementLooksDisturbed(r.diagnostics());
        j["saved"] = options.save && saved;
        j["isa"] = perf::cpuIsaName(r->isa);
        j["cache"] = {{"l1d_bytes", r->cache.l1d}, {"l2_bytes", r->cache.l2}, {"l3_bytes", r->cache.l3},
                      {"cpus", r->cache.cpus}};
        nlohmann::json sweep = nlohmann::json::array();
        for (const auto& p : r->sweep)
            sweep.push_back({{"method", p.method}, {"working_set_bytes", p.workingSetBytes}, {"threads", p.threads},
                             {"gbps", p.gbPerSecond}});
        j["sweep"] = std::move(sweep);
        j["seconds"] = r->seconds;
        out << j.dump(2) << "\n";
        return rc;
    }

    out << "machine: " << profile.fingerprint << "\n";
    out << "ISA: " << perf::cpuIsaName(r->isa) << ", caches per core: L1d " << r->cache.l1d / 1024 << " KiB, L2 "
        << r->cache.l2 / 1024 << " KiB, L3 " << r->cache.l3 / 1024 << " KiB, " << r->cache.cpus << " CPUs\n";
    out << std::left << std::setw(28) << "roof" << std::right << std::setw(8) << "threads" << std::setw(12) << "value"
        << "  " << std::left << std::setw(8) << "unit" << "method\n";
    for (const auto& roof : r->roofs) {
        out << std::left << std::setw(28) << roof.name << std::right << std::setw(8) << roof.threads << std::setw(12)
            << std::fixed << std::setprecision(1) << roof.value << "  " << std::left << std::setw(8) << roof.unit
            << roof.method << "\n";
    }
    if (!r->sweep.empty()) {
        out << "working-set sweep (GB/s):\n";
        for (const auto& p : r->sweep)
            out << "  " << std::left << std::setw(6) << p.method << std::right << std::setw(12) << p.workingSetBytes / 1024
                << " KiB  " << std::setw(3) << p.threads << " threads  " << std::fixed << std::setprecision(1)
                << p.gbPerSecond << "\n";
    }
    out << std::defaultfloat << "measured in " << std::setprecision(3) << r->seconds << " s\n";
    return rc;
}

}  // namespace tessera::cli
