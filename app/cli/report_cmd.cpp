#include "app/cli/report_cmd.h"
#include "app/cli/cli_output.h"

// Before any Qt header: Qt defines `emit` as a macro, and RunCmdOptions has a member of that name.
#include "app/cli/run_cmd.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>

#include <QApplication>
#include <QFileInfo>

#include <nlohmann/json.hpp>

#include "app/cli/inspect.h"
#include "core/perf/gpu_microbench.h"
#include "core/perf/kernel_points.h"
#include "core/perf/machine_profile.h"
#include "core/pipeline/engine.h"
#include "core/pipeline/roofline_points.h"
#include "views/roofline/roofline_view.h"

namespace tessera::cli {

namespace {

/// A QApplication for drawing when there is none yet (destroyed by the caller before exit: a
/// static one would outlive the platform plugin). Offscreen when there is no display (CI, ssh).
std::unique_ptr<QApplication> makeGuiApp() {
    if (QApplication::instance()) return nullptr;
    static int argc = 1;
    static char name[] = "tessera-cli";
    static char* argv[] = {name, nullptr};
    const bool display = std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY");
    if (!display && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    return std::make_unique<QApplication>(argc, argv);
}

std::string cell(const std::string& s, std::size_t width) {
    std::string r;
    for (unsigned char c : s) r += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
    // The end of a node name is its most distinctive part (".../conv.2/Conv").
    if (r.size() > width - 1) r = "..." + r.substr(r.size() - (width - 4));
    return r;
}

nlohmann::json roofJson(const perf::Roof& r) {
    nlohmann::json j{{"name", r.name}, {"kind", perf::roofKindName(r.kind)}, {"value", r.value}, {"unit", r.unit},
                     {"threads", r.threads}};
    if (r.kind == perf::Roof::Kind::Bandwidth) j["level"] = r.level;
    else j["precision"] = r.precision;
    return j;
}

}  // namespace

int runReportCommand(const ReportCmdOptions& options, std::ostream& out, std::ostream& err) {
    auto mode = perf::parseRooflineMode(options.mode);
    if (!mode) {
        err << "error: --mode " << options.mode << ": expected carm, dram or hierarchical\n";
        return kExitBadInput;
    }
    if (!options.roofline.empty()) {
        const std::string ext = QFileInfo(QString::fromStdString(options.roofline)).suffix().toLower().toStdString();
        if (ext != "png" && ext != "svg" && ext != "pdf") {
            err << "error: --roofline " << options.roofline << ": the chart format is the extension: .png, .svg or .pdf\n";
            return kExitBadInput;
        }
        // Checked before the model runs (a run can take a while): the chart's folder must exist
        // and be writable.
        const QFileInfo dirInfo(QFileInfo(QString::fromStdString(options.roofline)).absolutePath());
        if (!dirInfo.isDir()) {
            err << "error: --roofline " << options.roofline << ": the folder " << dirInfo.absoluteFilePath().toStdString()
                << " does not exist\n";
            return kExitBadInput;
        }
        if (!dirInfo.isWritable()) {
            err << "error: --roofline " << options.roofline << ": the folder " << dirInfo.absoluteFilePath().toStdString()
                << " is not writable\n";
            return kExitBadInput;
        }
    }
    int device = 0;
    std::string target = options.target;
    if (target.rfind("cuda:", 0) == 0) {
        char* end = nullptr;
        const long n = std::strtol(target.c_str() + 5, &end, 10);
        if (end == target.c_str() + 5 || *end != '\0' || n < 0 || n > 1024) {
            err << "error: --target " << target << ": expected cuda:N with a device ordinal N >= 0\n";
            return kExitBadInput;
        }
        device = static_cast<int>(n);
        target = "cuda";
    }
    if (target != "cpu" && target != "cuda") {
        err << "error: --target " << options.target << ": expected cpu, cuda or cuda:N\n";
        return kExitBadInput;
    }
    const bool cuda = target == "cuda";

    std::optional<perf::MachineProfile> profile;
    std::string profileFile = options.profile;
    if (!options.profile.empty()) {
        auto p = perf::loadProfile(options.profile);
        if (!p) {
            printDiagnostics(p.diagnostics(), err);
            return kExitBadInput;
        }
        profile = std::move(*p);
    }

    // Load, compile and run exactly as `tessera-cli run` does (timed, not checked).
    pipeline::RunRequest request;
    if (int rc = loadForCompile(options.modelPath, options.inputs, options.threads, options.fallbackReference,
                                cuda ? lower::Target::Cuda : lower::Target::Cpu,
                                FusionChoice{options.plan, options.hw, {}}, /*shapesOnly=*/false, request.prepared,
                                request.compile, err);
        rc != kExitOk)
        return rc;
    request.run.cudaDevice = device;
    request.run.threads = std::max(1, options.threads);
    if (options.reps > 0) {
        request.run.minReps = request.run.maxReps = options.reps;
        request.run.minSeconds = 0;
    }
    const std::shared_ptr<pipeline::Runner> runner = pipeline::makeRunner(request.run.threads);
    request.runner = runner.get();
    pipeline::RunEvents events;
    events.compiled = [&err](const std::shared_ptr<const pipeline::CompiledModel>& compiled) {
        printDiagnostics(compiled->warnings, err);  // what the compile did not honour
        return true;
    };
    auto result = pipeline::compileAndRun(request, nullptr, events);
    if (!result.ok()) {
        printDiagnostics(result.diagnostics(), err);
        return isRunnerFault(result.diagnostics()) ? kExitKernelFault : kExitBadInput;
    }
    const std::shared_ptr<const pipeline::CompiledModel>& cm = result->compiled;
    const std::shared_ptr<const pipeline::RunReport>& rep = result->report;
    for (const auto& w : rep->warnings.items()) err << w.format() << "\n";

    std::string missingHint;
    if (!profile) {
        const std::string dir = perf::defaultProfileDir();
        bool approximate = false;
        const std::string fingerprint = rep->device ? perf::gpuFingerprint(*rep->device) : perf::cpuFingerprint();
        if (rep->device) {
            profile = perf::findProfileForMachine(fingerprint, dir, "cuda:" + std::to_string(rep->device->ordinal), &approximate);
            missingHint = "No measured roofs for this GPU: run `tessera-cli roofline measure --target cuda --save`";
        } else {
            profile = perf::findProfileForMachine(fingerprint, dir, "cpu", &approximate);
            missingHint = "No measured roofs for this machine: run `tessera-cli roofline measure --target cpu --save`";
        }
        if (profile) {
            profileFile = (std::filesystem::path(dir) / perf::profileFileName(*profile)).string();
            if (approximate)
                err << "note: using the roofs measured " << profile->measuredAt << " on '" << profile->fingerprint
                    << "' (same model; this machine reads '" << fingerprint
                    << "'); run `tessera-cli roofline measure --save` to refresh them\n";
        } else {
            err << "note: " << missingHint << "\n";
        }
    }
    if (profile && !options.profile.empty()) {
        // A profile given by hand: say when it does not describe this run's machine or target.
        const std::string here = rep->device ? perf::gpuFingerprint(*rep->device) : perf::cpuFingerprint();
        const bool cudaProfile = profile->target.rfind("cuda", 0) == 0;
        if (cudaProfile != static_cast<bool>(rep->device))
            err << "note: --profile " << options.profile << " holds roofs for target '" << profile->target
                << "' but the model ran on " << (rep->device ? "a CUDA device" : "the CPU") << "\n";
        else if (profile->fingerprint != here)
            err << "note: --profile " << options.profile << " was measured on '" << profile->fingerprint
                << "', not on this machine ('" << here << "')\n";
        if (profile->roofs.empty()) err << "note: --profile " << options.profile << " has no roofs\n";
    }
    const auto samples = pipeline::kernelSamples(*rep, *cm);
    const std::vector<perf::Roof> roofs =
        profile ? perf::chartRoofs(profile->roofs, rep->threads, "fp32") : std::vector<perf::Roof>{};

    struct Row {
        const perf::KernelSample* sample;
        std::optional<perf::PointAnalysis> analysis;
        std::string error;
    };
    std::vector<Row> rows;
    for (const auto& s : samples) {
        Row r{&s, std::nullopt, {}};
        if (!roofs.empty()) {
            auto a = perf::analyseSample(s, roofs, *mode);
            if (a) r.analysis = std::move(*a);
            else if (const auto* e = a.diagnostics().firstError()) r.error = e->message;
        }
        rows.push_back(std::move(r));
    }
    auto aiOf = [&](const Row& r) {
        if (r.analysis) return r.analysis->ai;
        const auto dots = perf::sampleDots(*r.sample, *mode);
        return dots.empty() ? 0.0 : dots.front().ai;
    };

    // The chart, headless.
    if (!options.roofline.empty()) {
        const auto app = makeGuiApp();
        views::RooflineView view;
        view.setMode(*mode);
        view.setThreads(rep->threads);
        view.setProfile(profile, QString::fromStdString(missingHint));
        view.addPoints(samples);
        QString error;
        if (!view.exportTo(QString::fromStdString(options.roofline), options.width, options.height, &error)) {
            err << "error: " << error.toStdString() << "\n";
            return kExitBadInput;
        }
    }

    if (options.json) {
        nlohmann::json j;
        j["ok"] = true;
        j["model"] = options.modelPath;
        j["target"] = cuda ? "cuda" : "cpu";
        j["mode"] = perf::rooflineModeName(*mode);
        j["ai_definition"] = perf::modeDefinition(*mode);
        j["threads"] = rep->threads;
        if (profile)
            j["profile"] = {{"fingerprint", profile->fingerprint},
                            {"target", profile->target},
                            {"measured_at", profile->measuredAt},
                            {"file", profileFile}};
        else
            j["profile"] = nullptr;
        j["roofs"] = nlohmann::json::array();
        for (const auto& r : roofs) j["roofs"].push_back(roofJson(r));
        j["kernels"] = nlohmann::json::array();
        for (const Row& r : rows) {
            const perf::KernelSample& s = *r.sample;
            nlohmann::json k{{"name", s.name},        {"op_type", s.opType},
                             {"ops", s.ops},          {"group", s.group},
                             {"flops", s.flops},      {"seconds", s.seconds},
                             {"gflops", perf::sampleGflops(s)},
                             {"issued_bytes", s.issuedBytes},
                             {"compulsory_bytes", s.compulsoryBytes}};
            nlohmann::json levels = nlohmann::json::object();
            for (const auto& lb : s.levelBytes) levels[lb.level] = lb.bytes;
            k["level_bytes"] = levels;
            const double ai = aiOf(r);
            k["ai"] = std::isfinite(ai) ? nlohmann::json(ai) : nlohmann::json(nullptr);
            if (r.analysis) {
                k["bound"] = r.analysis->bound;
                k["percent_of_bound"] = r.analysis->percentOfBound;
                k["binding_roof"] = r.analysis->bindingRoof;
                k["levels"] = nlohmann::json::array();
                for (const auto& l : r.analysis->levels)
                    k["levels"].push_back({{"level", l.level},
                                           {"ai", std::isfinite(l.ai) ? nlohmann::json(l.ai) : nlohmann::json(nullptr)},
                                           {"bound", l.bound},
                                           {"binding_roof", l.bindingRoof},
                                           {"percent_of_bound", l.percentOfBound}});
            } else {
                k["error"] = roofs.empty() ? std::string("no measured roofs") : r.error;
            }
            j["kernels"].push_back(std::move(k));
        }
        j["chart"] = options.roofline.empty() ? nlohmann::json(nullptr) : nlohmann::json(options.roofline);
        out << j.dump(2) << "\n";
        return kExitOk;
    }

    out << options.modelPath << ": " << samples.size() << (samples.size() == 1 ? " kernel" : " kernels");
    if (rep->device) out << " on " << rep->device->name;
    else out << " on " << rep->threads << (rep->threads == 1 ? " thread" : " threads");
    out << "\n" << perf::modeDefinition(*mode) << "\n";
    if (profile) {
        std::string machine = profile->fingerprint;
        if (auto bar = machine.find(" | "); bar != std::string::npos) machine.resize(bar);
        out << "roofs (" << profile->target << ", " << machine << ", measured " << profile->measuredAt << "):";
        for (std::size_t i = 0; i < roofs.size(); ++i) out << (i ? ", " : " ") << perf::roofLabel(roofs[i]);
        out << "\n";
        // CPU roofs are per thread count: say which roofs come from another count than the run's
        // (the profile had none measured with exactly that many threads).
        if (!rep->device) {
            std::string other;
            for (const auto& r : roofs)
                if (r.threads != rep->threads)
                    other += (other.empty() ? "" : ", ") + r.name + " (" + std::to_string(r.threads) + " threads)";
            if (!other.empty())
                out << "note: no roof measured with " << rep->threads << (rep->threads == 1 ? " thread" : " threads")
                    << " for: " << other << "; the nearest thread count is drawn\n";
        }
    } else {
        out << "roofs: none measured\n";
    }
    out << std::left << std::setw(32) << "kernel" << std::setw(18) << "op" << std::right << std::setw(10) << "AI"
        << std::setw(11) << "GFLOP/s" << std::setw(11) << "bound" << std::setw(9) << "% bound" << "  " << std::left
        << "binding roof" << "\n";
    for (const Row& r : rows) {
        const perf::KernelSample& s = *r.sample;
        const double ai = aiOf(r);
        out << std::left << std::setw(32) << cell(s.name, 32) << std::setw(18) << cell(s.opType, 18) << std::right
            << std::setw(10) << (std::isfinite(ai) ? perf::formatSignificant(ai) : std::string("inf")) << std::setw(11)
            << perf::formatSignificant(perf::sampleGflops(s));
        if (r.analysis) {
            char pct[32];
            std::snprintf(pct, sizeof pct, "%.1f", r.analysis->percentOfBound);
            out << std::setw(11) << perf::formatSignificant(r.analysis->bound) << std::setw(9) << pct << "  "
                << std::left << r.analysis->bindingRoof;
            if (*mode == perf::RooflineMode::Hierarchical && !r.analysis->levels.empty()) {
                out << " (";
                for (std::size_t i = 0; i < r.analysis->levels.size(); ++i)
                    out << (i ? ", " : "") << r.analysis->levels[i].level << " AI "
                        << perf::formatSignificant(r.analysis->levels[i].ai);
                out << ")";
            }
        } else {
            out << std::setw(11) << "-" << std::setw(9) << "-" << "  " << std::left
                << (roofs.empty() ? std::string("-") : r.error);
        }
        out << "\n";
    }
    if (*mode == perf::RooflineMode::Dram) {
        int above = 0;
        for (const Row& r : rows)
            if (r.analysis && r.analysis->percentOfBound > 100.0) ++above;
        if (above > 0)
            out << "note: " << above << (above == 1 ? " kernel runs" : " kernels run")
                << " above its DRAM bound: its data stayed in the caches between repetitions (inputs smaller than "
                   "the rotation threshold), so compulsory DRAM bytes overstate its traffic; --mode carm places "
                   "it by the bytes it issues\n";
    }
    if (!options.roofline.empty()) out << "chart: " << options.roofline << "\n";
    return kExitOk;
}

}  // namespace tessera::cli
