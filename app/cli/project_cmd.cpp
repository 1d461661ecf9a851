#include "app/cli/project_cmd.h"
#include "app/cli/cli_output.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/inspect.h"
#include "app/cli/run_cmd.h"
#include "core/pipeline/engine.h"
#include "core/pipeline/host_profile.h"
#include "core/project/project.h"
#include "core/target/gpu_profile.h"

namespace tessera::cli {

namespace {

namespace fs = std::filesystem;

/// "12.3 us", "4.560 ms", "1.200 s"; "-" for a missing value.
std::string seconds(double s) {
    if (s <= 0) return "-";
    char b[32];
    if (s < 1e-3)
        std::snprintf(b, sizeof b, "%.1f us", s * 1e6);
    else if (s < 1)
        std::snprintf(b, sizeof b, "%.3f ms", s * 1e3);
    else
        std::snprintf(b, sizeof b, "%.3f s", s);
    return b;
}

std::string shortName(const std::string& s, std::size_t width) {
    std::string r;
    for (unsigned char c : s) r += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
    if (r.size() <= width) return r;
    return "..." + r.substr(r.size() - (width - 3));
}

bool validTarget(const std::string& t) {
    if (t == "cpu" || t == "cuda") return true;
    if (t.rfind("cuda:", 0) != 0 || t.size() == 5) return false;
    for (std::size_t i = 5; i < t.size(); ++i)
        if (t[i] < '0' || t[i] > '9') return false;
    return t.size() < 12;
}

std::string planLine(const project::Project& p) {
    if (p.plan) {
        std::ostringstream os;
        os << (p.planner.empty() ? p.plan->planner : p.planner) << " (stored plan: " << p.plan->groups.size()
           << (p.plan->groups.size() == 1 ? " kernel, " : " kernels, ") << p.plan->fusedGroupCount() << " fused)";
        return os.str();
    }
    if (!p.planner.empty()) return p.planner + " (planned when run)";
    return p.source.kind == project::SourceKind::Dsl ? "the program's fuse statements" : "none (one kernel per op)";
}

}  // namespace

int runProjectNew(const ProjectNewCmdOptions& options, std::ostream& out, std::ostream& err) {
    if (options.output.empty()) {
        err << "error: project new: give the project file with -o FILE\n";
        return kExitBadInput;
    }
    if (!validTarget(options.target)) {
        err << "error: --target " << options.target << ": expected cpu, cuda or cuda:N\n";
        return kExitBadInput;
    }
    std::error_code ec;
    if (fs::exists(options.output, ec) && !options.force) {
        err << options.output << ": error: the file exists (give --force to replace it)\n";
        return kExitBadInput;
    }
    auto p = project::newProject(options.modelPath);
    if (!p.ok()) {
        printDiagnostics(p.diagnostics(), err);
        return kExitBadInput;
    }
    p->target = options.target;
    if (!options.hw.empty()) {
        auto hw = pipeline::findHardwareProfile(options.hw);
        if (!hw.ok()) {
            printDiagnostics(hw.diagnostics(), err);
            return kExitBadInput;
        }
        p->hardware.name = hw->name.empty() ? options.hw : hw->name;
        // A profile file is embedded: the project must not depend on a file elsewhere.
        if (fs::is_regular_file(options.hw, ec)) p->hardware.profileJson = target::gpuProfileToJson(*hw);
    }
    if (!options.plan.empty()) {
        if (options.plan == "none" || options.plan == "hidet" || options.plan == "fuseplanner") {
            p->planner = options.plan;
        } else if (fs::is_regular_file(options.plan, ec)) {
            std::ifstream in(options.plan, std::ios::binary);
            std::ostringstream ss;
            ss << in.rdbuf();
            auto plan = schedule::planFromJson(ss.str(), options.plan);
            if (!plan.ok()) {
                printDiagnostics(plan.diagnostics(), err);
                return kExitBadInput;
            }
            p->planner = plan->planner.empty() ? "file" : plan->planner;
            p->plan = std::move(*plan);
        } else {
            err << "error: --plan " << options.plan
                << ": neither a planner (none, hidet, fuseplanner) nor a plan file (tessera-cli plan ... --output FILE)\n";
            return kExitBadInput;
        }
    }
    auto saved = project::saveProject(*p, options.output);
    if (!saved.ok()) {
        printDiagnostics(saved.diagnostics(), err);
        return kExitBadInput;
    }
    out << "wrote " << options.output << ": " << project::sourceKindName(p->source.kind) << " source "
        << project::relativeSourcePath(options.output, p->source.path) << ", plan " << planLine(*p) << ", target "
        << p->target << (p->hardware.name.empty() ? std::string() : ", hardware " + p->hardware.name) << "\n";
    return kExitOk;
}

int runProjectShow(const ProjectShowCmdOptions& options, std::ostream& out, std::ostream& err) {
    auto lp = project::loadProject(options.file);
    if (!lp.ok()) {
        printDiagnostics(lp.diagnostics(), err);
        return kExitBadInput;
    }
    printDiagnostics(lp.diagnostics(), err);  // read-only, missing or changed source
    const project::Project& p = lp->project;
    if (options.json) {
        nlohmann::ordered_json j = nlohmann::ordered_json::parse(project::projectToJson(p, options.file));
        j["version"] = lp->fileVersion;  // what the file says, even where only version-1 keys are shown
        j["file"] = options.file;
        j["file_version"] = lp->fileVersion;
        j["read_only"] = lp->readOnly;
        j["source_missing"] = lp->sourceMissing;
        j["source_changed"] = lp->sourceChanged;
        out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
        return kExitOk;
    }
    out << "project: " << options.file << " (version " << lp->fileVersion
        << (lp->readOnly ? ", newer than this Tessera: read-only" : "") << ")\n";
    out << "source: " << project::sourceKindName(p.source.kind) << " " << p.source.path
        << (lp->sourceMissing ? "  [missing]" : lp->sourceChanged ? "  [changed since saved]" : "") << "\n";
    out << "plan: " << planLine(p) << "\n";
    out << "hardware: " << (p.hardware.name.empty() ? "the target's default" : p.hardware.name)
        << (p.hardware.profileJson.empty() ? "" : " (profile embedded)") << "\n";
    out << "target: " << p.target << "\n";
    out << "options: " << p.options.threads << (p.options.threads == 1 ? " thread" : " threads") << ", check "
        << (p.options.check ? "on" : "off") << ", reference fallback " << (p.options.fallbackReference ? "on" : "off")
        << ", tolerance " << (p.options.tolerance < 0 ? std::string("per dtype") : std::to_string(p.options.tolerance))
        << "\n";
    for (const auto& m : p.mappings)
        out << "mapping" << (m.node.empty() ? std::string() : " " + m.node) << ": " << m.grid
            << (m.block.empty() ? std::string() : " / " + m.block) << "\n";
    for (const auto& sch : p.schedules)
        out << "schedule " << sch.node << ": grid " << sch.grid
            << (sch.block.empty() ? std::string() : ", block " + sch.block) << "\n";
    out << "runs: " << p.runs.size() << "\n";
    if (p.runs.empty()) return kExitOk;
    out << std::left << std::setw(4) << "#" << std::setw(22) << "time" << std::setw(9) << "target" << std::setw(28)
        << "device" << std::setw(13) << "planner" << std::setw(18) << "plan" << std::right << std::setw(8) << "kernels"
        << std::setw(13) << "end to end" << "\n";
    for (std::size_t i = 0; i < p.runs.size(); ++i) {
        const auto& r = p.runs[i];
        out << std::left << std::setw(4) << i + 1 << std::setw(22) << r.time << std::setw(9) << r.target
            << std::setw(28) << shortName(r.device, 27) << std::setw(13) << shortName(r.planner, 12) << std::setw(18)
            << r.planHash << std::right << std::setw(8) << r.kernels.size() << std::setw(13) << seconds(r.totalSeconds)
            << "\n";
    }
    const auto& last = p.runs.back();
    out << "last run (" << last.time << ", " << last.threads << (last.threads == 1 ? " thread" : " threads") << "):\n";
    out << std::left << std::setw(30) << "  kernel" << std::setw(18) << "op" << std::right << std::setw(7) << "nodes"
        << std::setw(12) << "median" << std::setw(11) << "rel.err" << "\n";
    for (const auto& k : last.kernels) {
        char re[32];
        if (k.checked)
            std::snprintf(re, sizeof re, "%.1e", k.maxRelError);
        else
            std::snprintf(re, sizeof re, "-");
        out << "  " << std::left << std::setw(28) << shortName(k.name, 27) << std::setw(18) << shortName(k.opType, 17)
            << std::right << std::setw(7) << k.nodes.size() << std::setw(12) << seconds(k.medianSeconds) << std::setw(11)
            << re << "\n";
    }
    return kExitOk;
}

namespace {

int runProjectRunImpl(const ProjectRunCmdOptions& options, std::ostream& out, std::ostream& err) {
    auto lp = project::loadProject(options.file);
    if (!lp.ok()) {
        printDiagnostics(lp.diagnostics(), err);
        return kExitBadInput;
    }
    if (options.save && lp->readOnly) {
        printDiagnostics(lp.diagnostics(), err);
        err << options.file << ": error: --save refused: the project is of version " << lp->fileVersion
            << ", newer than this Tessera's (" << project::kProjectVersion
            << "); it is read-only (run without --save, or save a copy from the window with Save As)\n";
        return kExitBadInput;
    }
    printDiagnostics(lp.diagnostics(), err);  // a changed source, a DSL file gone (its text is in the project)
    project::Project& p = lp->project;
    if (p.target == "cuda-compile") {
        err << options.file << ": error: the project's target is cuda-compile (compile only): nothing to run\n";
        return kExitBadInput;
    }
    auto model = project::loadProjectModel(p);
    if (!model.ok()) {
        printDiagnostics(model.diagnostics(), err);
        return kExitBadInput;
    }
    auto copts = project::compileOptionsFor(p);
    if (!copts.ok()) {
        for (auto d : copts.diagnostics().items()) {
            if (d.file.empty()) d.file = options.file;
            err << d.format() << "\n";
        }
        return kExitBadInput;
    }
    // The inputs are the seeded defaults, as the window runs a project without fed inputs.
    auto prepared = pipeline::prepare(std::make_shared<const ir::Model>(std::move(*model)), {});
    if (!prepared.ok()) {
        printDiagnostics(prepared.diagnostics(), err);
        return kExitBadInput;
    }
    pipeline::RunRequest request;
    request.prepared = *prepared;
    request.compile = *copts;
    request.run = project::runOptionsFor(p);
    if (options.reps > 0) {
        request.run.minReps = request.run.maxReps = options.reps;
        request.run.minSeconds = 0;
    }
    const std::shared_ptr<pipeline::Runner> runner = pipeline::makeRunner(request.run.threads);
    request.runner = runner.get();
    pipeline::RunEvents events;
    events.compiled = [&err](const std::shared_ptr<const pipeline::CompiledModel>& compiled) {
        printDiagnostics(compiled->warnings, err);
        return true;
    };
    auto result = pipeline::compileAndRun(request, nullptr, events);
    if (!result.ok()) {
        printDiagnostics(result.diagnostics(), err);
        return isRunnerFault(result.diagnostics()) ? kExitKernelFault : kExitBadInput;
    }
    const std::shared_ptr<const pipeline::CompiledModel>& cm = result->compiled;
    const std::shared_ptr<const pipeline::RunReport>& rep = result->report;
    printDiagnostics(rep->warnings, err);
    const std::string target = p.target == "cuda" ? "cuda:0" : p.target;
    const project::RunRecord record = project::makeRunRecord(*rep, cm->plan, target);
    const project::RunRecord* last = project::lastRun(p, target);
    if (!last && target == "cuda:0") last = project::lastRun(p, "cuda");
    const bool sameMachine = last && last->fingerprint == record.fingerprint;
    const bool samePlan = last && last->planHash == record.planHash;

    bool saved = false;
    if (options.save) {
        p.runs.push_back(record);
        auto s = project::saveProject(p, options.file);
        if (!s.ok()) {
            printDiagnostics(s.diagnostics(), err);
            return kExitBadInput;
        }
        saved = true;
    }

    if (options.json) {
        nlohmann::ordered_json j;
        j["ok"] = true;
        j["project"] = options.file;
        j["target"] = target;
        nlohmann::ordered_json ks = nlohmann::ordered_json::array();
        for (const auto& k : record.kernels) {
            const auto* before = last ? last->kernel(k.name) : nullptr;
            const auto* kr = &rep->kernels[static_cast<std::size_t>(&k - record.kernels.data())];
            nlohmann::ordered_json e;
            e["name"] = k.name;
            e["op_type"] = k.opType;
            e["nodes"] = k.nodes;
            e["time_s"] = k.medianSeconds;
            e["last_time_s"] = before ? nlohmann::ordered_json(before->medianSeconds) : nlohmann::ordered_json();
            e["ratio"] = before && before->medianSeconds > 0
                             ? nlohmann::ordered_json(k.medianSeconds / before->medianSeconds)
                             : nlohmann::ordered_json();
            e["max_rel_error"] = k.maxRelError;
            e["passed"] = kr->passed;
            ks.push_back(std::move(e));
        }
        j["kernels"] = std::move(ks);
        j["total_time_s"] = record.totalSeconds;
        j["last_total_time_s"] = last ? nlohmann::ordered_json(last->totalSeconds) : nlohmann::ordered_json();
        if (last)
            j["last_run"] = {{"time", last->time},
                             {"fingerprint", last->fingerprint},
                             {"same_machine", sameMachine},
                             {"same_plan", samePlan}};
        else
            j["last_run"] = nullptr;
        j["saved"] = saved;
        j["run"] = nlohmann::ordered_json::parse(project::runRecordToJson(record));
        out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    } else {
        out << options.file << ": " << record.kernels.size() << (record.kernels.size() == 1 ? " kernel" : " kernels")
            << " on " << target << " (" << record.device << ", " << record.threads
            << (record.threads == 1 ? " thread" : " threads") << "), plan " << record.planner << " " << record.planHash
            << "\n";
        if (last)
            out << "compared with the last recorded run of " << last->target << " (" << last->time << ")\n";
        else
            out << "no earlier run of " << target << " in the project\n";
        out << std::left << std::setw(30) << "kernel" << std::setw(18) << "op" << std::right << std::setw(12) << "median"
            << std::setw(12) << "last" << std::setw(9) << "ratio" << std::setw(11) << "rel.err" << "\n";
        for (std::size_t i = 0; i < record.kernels.size(); ++i) {
            const auto& k = record.kernels[i];
            const auto* before = last ? last->kernel(k.name) : nullptr;
            char ratio[32] = "-", re[32] = "-";
            if (before && before->medianSeconds > 0)
                std::snprintf(ratio, sizeof ratio, "%.2fx", k.medianSeconds / before->medianSeconds);
            if (k.checked) std::snprintf(re, sizeof re, "%.1e", k.maxRelError);
            out << std::left << std::setw(30) << shortName(k.name, 29) << std::setw(18) << shortName(k.opType, 17)
                << std::right << std::setw(12) << seconds(k.medianSeconds) << std::setw(12)
                << (before ? seconds(before->medianSeconds) : "-") << std::setw(9) << ratio << std::setw(11) << re
                << (rep->kernels[i].passed ? "" : "  FAILED") << "\n";
        }
        out << "end to end: " << seconds(record.totalSeconds);
        if (last && last->totalSeconds > 0) {
            char ratio[32];
            std::snprintf(ratio, sizeof ratio, "%.2fx", record.totalSeconds / last->totalSeconds);
            out << " (last " << seconds(last->totalSeconds) << ", " << ratio << ")";
        }
        out << "\n";
        if (last) out << "ratio = this run / the last recorded one (below 1: faster now)\n";
        if (last && !sameMachine)
            out << "note: the last recorded run came from another machine (" << last->fingerprint
                << "); this one is " << record.fingerprint << ": the ratios compare machines, not schedules\n";
        if (last && !samePlan)
            out << "note: the plan changed since the last recorded run (" << last->planner << " " << last->planHash
                << "): kernels may differ\n";
        if (saved)
            out << "saved as run " << p.runs.size() << " of " << options.file << "\n";
    }
    if (rep->checked && !rep->allPassed) return kExitCheckFailed;
    return kExitOk;
}

}  // namespace

int runProjectRun(const ProjectRunCmdOptions& options, std::ostream& out, std::ostream& err) {
    // As `run --json`: a failed run still prints one JSON object; the errors also go to stderr.
    return withJsonFailureObject(options.json, out, err,
                                 [&](std::ostream& o, std::ostream& e) { return runProjectRunImpl(options, o, e); });
}

}  // namespace tessera::cli
