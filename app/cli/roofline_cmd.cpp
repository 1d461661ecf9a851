#include "app/cli/roofline_cmd.h"

#include <iomanip>
#include <ostream>

#include <nlohmann/json.hpp>

#include "app/cli/inspect.h"
#include "app/cli/run_cmd.h"
#include "core/perf/cpu_microbench.h"
#include "core/perf/machine_profile.h"

namespace tessera::cli {

namespace {

void printDiagnostics(const support::DiagnosticList& d, std::ostream& err) {
    for (const auto& x : d.items()) {
        err << x.format() << "\n";
        for (const auto& n : x.notes) err << "  note: " << n << "\n";
    }
}

bool isCompileProblem(const support::DiagnosticList& d) {
    for (const auto& x : d.items()) {
        if (x.severity != support::Severity::Error) continue;
        if (x.message.find("host compiler") != std::string::npos || x.message.find("compil") != std::string::npos ||
            x.message.find("not found") != std::string::npos)
            return true;
    }
    return false;
}

}  // namespace

int runRooflineMeasure(const RooflineMeasureOptions& options, std::ostream& out, std::ostream& err) {
    if (options.target.rfind("cuda", 0) == 0) {
        err << "tessera-cli: error: the CUDA target is not available yet: roofline measure supports --target cpu only\n";
        return kExitBadInput;
    }
    if (options.target != "cpu") {
        err << "tessera-cli: error: unknown target '" << options.target << "' (roofline measure supports --target cpu)\n";
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

    perf::MachineProfile profile;
    profile.fingerprint = perf::cpuFingerprint();
    profile.target = "cpu";
    profile.description = std::string("tessera-cli roofline measure") + (options.quick ? " --quick" : "") + ", ISA " +
                          perf::cpuIsaName(r->isa);
    profile.roofs = r->roofs;
    profile.measuredAt = perf::isoUtcNow();

    if (options.save) {
        const std::string dir = perf::defaultProfileDir();
        if (dir.empty()) {
            err << "tessera-cli: error: no profile folder (set HOME or XDG_CONFIG_HOME)\n";
            return kExitBadInput;
        }
        auto path = perf::saveProfile(profile, dir);
        if (!path) {
            printDiagnostics(path.diagnostics(), err);
            return kExitBadInput;
        }
        err << "saved profile: " << *path << "\n";
    }

    if (options.json) {
        nlohmann::json j = perf::profileToJson(profile);
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
        return 0;
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
    return 0;
}

}  // namespace tessera::cli
