#include "app/cli/run_cmd.h"
#include "app/cli/cli_output.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <set>
#include <optional>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/inspect.h"
#include "core/ir/npy.h"
#include "core/pipeline/cuda_code.h"
#include "core/pipeline/dsl_text.h"
#include "core/pipeline/engine.h"
#include "core/pipeline/host_profile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/user_schedule.h"

namespace tessera::cli {

namespace {

std::string dimsStr(const std::vector<std::int64_t>& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
}

/// Largest input `run` and `compile` fill from a seed.
constexpr double kMaxGeneratedInputBytes = 4.0 * (1 << 30);

}  // namespace

int loadModelAndInputs(const std::string& modelPath, const std::vector<std::string>& specs,
                       std::shared_ptr<const ir::Model>& model, std::vector<ir::TensorData>& given, std::ostream& err,
                       bool shapesOnly) {
    auto m = pipeline::loadModel(modelPath);
    if (!m.ok()) {
        // A DSL program's errors are shown with the source line and a caret, as `check` does.
        std::string source;
        if (pipeline::sourceKindOf(modelPath) == pipeline::SourceKind::Dsl) {
            std::error_code ec;
            if (std::filesystem::is_regular_file(modelPath, ec) &&
                std::filesystem::file_size(modelPath, ec) <= pipeline::kMaxDslSourceBytes) {
                std::ifstream in(modelPath, std::ios::binary);
                std::ostringstream ss;
                ss << in.rdbuf();
                source = ss.str();
            }
        }
        if (!source.empty())
            err << pipeline::renderDslDiagnostics(m.diagnostics(), source);
        else
            printDiagnostics(m.diagnostics(), err);
        return kExitBadInput;
    }
    // What loading did not like but could read (a declared shape that disagrees with inference,
    // a newer IR version ...): shown as `inspect` shows it, once, before anything runs.
    printDiagnostics(m.diagnostics(), err);
    model = std::make_shared<const ir::Model>(std::move(*m));
    const ir::Graph& g = model->graph;
    const auto rin = g.runtimeInputs();
    given.assign(rin.size(), ir::TensorData{});
    // With shapesOnly, inputs whose values decide no shape are needed for their shapes only.
    std::vector<bool> shapeOnly(rin.size(), false);
    for (std::size_t i = 0; shapesOnly && i < rin.size(); ++i) shapeOnly[i] = !pipeline::feedsShapeOperand(g, rin[i]);
    for (const auto& spec : specs) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
            err << "error: --input '" << spec << "': expected NAME=FILE.npy\n";
            return kExitBadInput;
        }
        const std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
        std::size_t idx = rin.size();
        for (std::size_t i = 0; i < rin.size(); ++i)
            if (g.value(rin[i]).name == name) idx = i;
        if (idx < rin.size() && given[idx].dtype != ir::DType::Undefined) {
            err << "error: --input '" << name << "' is given twice\n";
            return kExitBadInput;
        }
        if (idx == rin.size()) {
            err << "error: --input '" << name << "': the model has no runtime input of that name (inputs:";
            for (auto v : rin) err << " '" << g.value(v).name << "'";
            err << ")\n";
            return kExitBadInput;
        }
        auto t = shapeOnly[idx] ? ir::readNpyShape(path) : ir::readNpy(path);
        if (!t.ok()) {
            printDiagnostics(t.diagnostics(), err);
            return kExitBadInput;
        }
        given[idx] = std::move(*t);
    }
    // Inputs Tessera must fill itself: refuse sizes no machine of ours holds before allocating.
    for (std::size_t i = 0; i < rin.size(); ++i) {
        if (given[i].dtype != ir::DType::Undefined || shapeOnly[i]) continue;
        const ir::TensorType& t = g.value(rin[i]).type;
        double bytes = static_cast<double>(ir::dtypeSize(t.dtype == ir::DType::Undefined ? ir::DType::F32 : t.dtype));
        if (t.shape.rankKnown())
            for (const auto& d : t.shape.dims()) bytes *= d.isKnown() ? static_cast<double>(d.value) : 1.0;
        if (bytes > kMaxGeneratedInputBytes) {
            err << modelPath << ": error: input '" << g.value(rin[i]).name << "' " << t.str() << " needs "
                << bytes / (1 << 30) << " GiB, more than the " << kMaxGeneratedInputBytes / (1 << 30)
                << " GiB Tessera fills from a seed; give a smaller model\n";
            return kExitBadInput;
        }
    }
    // Symbolic extents of inputs Tessera fills itself are taken as 1: say so, once per input.
    for (std::size_t i = 0; i < rin.size(); ++i) {
        if (given[i].dtype != ir::DType::Undefined) continue;
        const ir::TensorType& t = g.value(rin[i]).type;
        if (!t.shape.rankKnown()) continue;
        bool symbolic = false;
        for (const auto& d : t.shape.dims()) symbolic = symbolic || !d.isKnown();
        if (!symbolic) continue;
        const std::string& name = g.value(rin[i]).name;
        std::string arg = name + "=FILE.npy";
        if (arg.find_first_of(" \t'\"$`\\*?[]()<>|&;#~") != std::string::npos) {  // quoted for a shell
            std::string q = "'";
            for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
            arg = q + "'";
        }
        err << "note: input '" << name << "' " << t.str() << ": its symbolic extents are taken as 1; --input " << arg
            << " runs other sizes\n";
    }
    return kExitOk;
}

int prepareModel(std::shared_ptr<const ir::Model> model, const std::vector<ir::TensorData>& given, bool shapesOnly,
                 std::shared_ptr<const pipeline::PreparedModel>& prepared, std::ostream& err) {
    pipeline::PrepareOptions options;
    options.shapesOnly = shapesOnly;
    auto p = pipeline::prepare(std::move(model), given, options);
    if (!p.ok()) {
        printDiagnostics(p.diagnostics(), err);
        return kExitBadInput;
    }
    prepared = std::move(*p);
    return kExitOk;
}

namespace {

/// Applies --plan/--hw to the compile options. Returns an exit code (0 = ok).
int applyFusionChoice(const FusionChoice& fusion, pipeline::CompileOptions& copts, std::ostream& err) {
    for (const auto& spec : fusion.schedules) {
        auto s = pipeline::parseScheduleSpec(spec);
        if (!s.ok()) {
            printDiagnostics(s.diagnostics(), err);
            return kExitBadInput;
        }
        copts.schedules.push_back(std::move(*s));
    }
    if (!fusion.hw.empty()) {
        auto hw = pipeline::findHardwareProfile(fusion.hw);
        if (!hw.ok()) {
            printDiagnostics(hw.diagnostics(), err);
            return kExitBadInput;
        }
        copts.hardware = std::move(*hw);
    }
    if (fusion.plan.empty()) return kExitOk;
    if (fusion.plan == "none" || fusion.plan == "hidet" || fusion.plan == "fuseplanner") {
        copts.planner = fusion.plan;
        return kExitOk;
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(fusion.plan, ec)) {
        err << "error: --plan " << fusion.plan
            << ": neither a planner (none, hidet, fuseplanner) nor a plan file (tessera-cli plan ... --output FILE)\n";
        return kExitBadInput;
    }
    std::ifstream in(fusion.plan, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    auto plan = schedule::planFromJson(ss.str(), fusion.plan);
    if (!plan.ok()) {
        printDiagnostics(plan.diagnostics(), err);
        return kExitBadInput;
    }
    copts.plan = std::move(*plan);
    return kExitOk;
}

}  // namespace

int loadForCompile(const std::string& modelPath, const std::vector<std::string>& inputSpecs, int threads,
                   bool fallbackReference, lower::Target target, const FusionChoice& fusion, bool shapesOnly,
                   std::shared_ptr<const pipeline::PreparedModel>& prepared, pipeline::CompileOptions& copts,
                   std::ostream& err) {
    std::shared_ptr<const ir::Model> model;
    std::vector<ir::TensorData> given;
    if (int rc = loadModelAndInputs(modelPath, inputSpecs, model, given, err, shapesOnly); rc != kExitOk) return rc;
    copts = {};
    if (int rc = applyFusionChoice(fusion, copts, err); rc != kExitOk) return rc;
    copts.target = target;
    copts.cpuThreads = std::max(1, threads);
    copts.fallbackReference = fallbackReference;
    return prepareModel(std::move(model), given, shapesOnly, prepared, err);
}

namespace {

/// `compile`'s loading and compiling: inputs read as shapes where values are not needed, compile
/// warnings on `err`. Returns an exit code (0 = ok, `compiled` set).
int loadAndCompile(const CompileCmdOptions& options, lower::Target target,
                   std::optional<pipeline::CompiledModel>& compiled, std::ostream& err) {
    std::shared_ptr<const pipeline::PreparedModel> prepared;
    pipeline::CompileOptions copts;
    if (int rc = loadForCompile(options.modelPath, options.inputs, options.threads, options.fallbackReference, target,
                                options.fusion, /*shapesOnly=*/true, prepared, copts, err);
        rc != kExitOk)
        return rc;
    auto cm = pipeline::compileModel(*prepared, copts);
    if (!cm.ok()) {
        printDiagnostics(cm.diagnostics(), err);
        return kExitBadInput;
    }
    printDiagnostics(cm->warnings, err);  // what the compile did not honour (stage on CUDA, fusion groups)
    compiled = std::move(*cm);
    return kExitOk;
}

std::string fileNameFor(const std::string& tensor) {
    std::string r;
    // Names keep their UTF-8 (an output 'выход 😀' is written as 'выход 😀.npy'); only what no
    // file name may hold, or what a terminal would act on, is replaced.
    for (unsigned char c : tensor) r += (c == '/' || c == '\0' || c < 0x20 || c == 0x7f) ? '_' : static_cast<char>(c);
    if (r.empty() || r == "." || r == "..") r = "output";
    return r;
}

/// FLOPs a rate is computed from: the op's useful FLOPs when the registry knows them (a tiled
/// kernel may issue extra lanes it discards), else the FLOPs the kernel issues.
double rateFlops(const pipeline::KernelReport& k) { return k.usefulFlops >= 0 ? k.usefulFlops : k.flops; }

/// A node name for one table cell: control characters become '?'.
std::string printableName(const std::string& s) {
    std::string r;
    for (unsigned char c : s) r += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
    return r;
}

}  // namespace

std::string bytesText(std::int64_t bytes) {
    char b[32];
    if (bytes < 0) return "-";
    if (bytes < 1024)
        std::snprintf(b, sizeof b, "%lld B", static_cast<long long>(bytes));
    else if (bytes < 1024 * 1024)
        std::snprintf(b, sizeof b, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
    else if (bytes < 1024LL * 1024 * 1024)
        std::snprintf(b, sizeof b, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    else
        std::snprintf(b, sizeof b, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
    return b;
}

std::string defaultProfileName(const std::string& target) { return target.rfind("cuda", 0) == 0 ? "h200" : "host"; }

std::string fusionPlanSource(const FusionChoice& fusion, const schedule::FusionPlan& plan, const std::string& target) {
    std::string profile = defaultProfileName(target);
    if (!fusion.hw.empty()) {
        auto hw = pipeline::findHardwareProfile(fusion.hw);
        profile = hw.ok() ? hw->name : fusion.hw;
    }
    const bool planner = fusion.plan.empty() || fusion.plan == "none" || fusion.plan == "hidet" || fusion.plan == "fuseplanner";
    if (planner) return (plan.planner.empty() ? std::string("plan") : plan.planner) + " for " + profile;
    std::string made;
    if (!plan.planner.empty()) made = "made by " + plan.planner;
    if (!plan.hardware.empty()) made += (made.empty() ? "made " : " ") + std::string("for ") + plan.hardware;
    return std::filesystem::path(fusion.plan).filename().string() + (made.empty() ? std::string() : " (" + made + ")") +
           ", checked against " + profile;
}

namespace {

std::string human(double v, const char* unit) {
    const char* prefixes[] = {"", "K", "M", "G", "T"};
    int p = 0;
    while (std::fabs(v) >= 1000 && p < 4) {
        v /= 1000;
        ++p;
    }
    std::ostringstream os;
    os << std::setprecision(v < 10 ? 3 : 4) << v << " " << prefixes[p] << unit;
    return os.str();
}

std::string seconds(double s) {
    std::ostringstream os;
    os << std::fixed;
    if (s < 1e-3)
        os << std::setprecision(1) << s * 1e6 << " us";
    else if (s < 1)
        os << std::setprecision(3) << s * 1e3 << " ms";
    else
        os << std::setprecision(3) << s << " s";
    return os.str();
}

/// ", 40 units: 1 compiled, 39 cached; 38 at -Og" for a module built as several compile units
/// (`reducedFlag`: the flag of the units of tiny elementwise kernels); empty for one unit.
std::string unitsNote(const runtime::CompiledLibrary& lib, const std::string& reducedFlag) {
    if (lib.units <= 1) return {};
    std::string note = ", " + std::to_string(lib.units) + " units";
    if (!lib.cacheHit)
        note += ": " + std::to_string(lib.unitsCompiled) + " compiled, " + std::to_string(lib.unitsCached) + " cached";
    if (lib.unitsReducedOpt > 0) note += "; " + std::to_string(lib.unitsReducedOpt) + " at " + reducedFlag;
    return note;
}

/// "12.3 uJ", "4.560 mJ", "1.200 J".
std::string joules(double j) {
    std::ostringstream os;
    os << std::fixed;
    if (j < 1e-3)
        os << std::setprecision(1) << j * 1e6 << " uJ";
    else if (j < 1)
        os << std::setprecision(3) << j * 1e3 << " mJ";
    else
        os << std::setprecision(3) << j << " J";
    return os.str();
}

}  // namespace

namespace {
int runRunImpl(const RunCmdOptions& options, std::ostream& out, std::ostream& err);
}  // namespace

int runRunCommand(const RunCmdOptions& options, std::ostream& out, std::ostream& err) {
    return withJsonFailureObject(options.json, out, err,
                                 [&](std::ostream& o, std::ostream& e) { return runRunImpl(options, o, e); });
}

int withJsonFailureObject(bool json, std::ostream& out, std::ostream& err,
                          const std::function<int(std::ostream& out, std::ostream& err)>& impl) {
    if (!json) return impl(out, err);
    std::ostringstream captured;
    const int rc = impl(out, captured);
    err << captured.str();
    if (rc != kExitOk && rc != kExitCheckFailed) {
        nlohmann::json j{{"ok", false}, {"exit_code", rc}, {"errors", nlohmann::json::array()}};
        std::istringstream lines(captured.str());
        for (std::string line; std::getline(lines, line);)
            if (!line.empty()) j["errors"].push_back(line);
        out << j.dump(2) << "\n";
    }
    return rc;
}

namespace {
int runRunImpl(const RunCmdOptions& options, std::ostream& out, std::ostream& err) {
    if (std::isnan(options.tolerance)) {
        err << "error: --tolerance: expected a number >= 0, got nan\n";
        return kExitBadInput;
    }
    int device = options.device;
    std::string target = options.target;
    if (target.rfind("cuda:", 0) == 0) {  // cuda:N, as the GUI spells it
        try {
            std::size_t used = 0;
            device = std::stoi(target.substr(5), &used);
            if (used != target.size() - 5 || device < 0) throw std::invalid_argument("device");
        } catch (const std::exception&) {
            err << "error: --target " << target << ": expected cuda:N with a device ordinal N >= 0\n";
            return kExitBadInput;
        }
        target = "cuda";
    }
    if (target != "cpu" && target != "cuda") {
        err << "error: --target " << options.target << ": expected cpu, cuda or cuda:N (or --target cuda --device N)\n";
        return kExitBadInput;
    }
    const bool cuda = target == "cuda";
    if (!cuda && (!options.arch.empty() || options.device >= 0)) {
        err << "error: --arch and --device are for --target cuda\n";
        return kExitBadInput;
    }
    if (cuda && !options.arch.empty()) {  // a bad --arch is reported before looking for a driver
        auto arch = pipeline::checkCudaArch(options.arch, /*askNvrtc=*/false);
        if (!arch) {
            printDiagnostics(arch.diagnostics(), err);
            return kExitBadInput;
        }
    }
    pipeline::RunRequest request;
    if (int rc = loadForCompile(options.modelPath, options.inputs, options.threads, options.fallbackReference,
                                cuda ? lower::Target::Cuda : lower::Target::Cpu, options.fusion, /*shapesOnly=*/false,
                                request.prepared, request.compile, err);
        rc != kExitOk)
        return rc;
    // What is said about the run's options comes after the compile's warnings, and a bad --expect
    // stops the job once the model compiled.
    std::ostringstream afterCompile;
    bool badExpect = false;
    pipeline::RunOptions& ropts = request.run;
    ropts.cudaArch = options.arch;
    ropts.cudaDevice = std::max(0, device);
    ropts.check = options.check;
    ropts.relTol = options.tolerance;
    ropts.threads = std::max(1, options.threads);
    ropts.timeoutSeconds = options.timeoutSeconds;
    ropts.time = !options.noTiming;
    if (options.progress)
        ropts.kernelProgress = [&err](int done, int total, const std::string& phase) {
            err << "progress: " << phase << " " << done << "/" << total << "\n" << std::flush;
        };
    if (options.reps > 0) {
        ropts.minReps = ropts.maxReps = options.reps;
        ropts.minSeconds = 0;
    }
    if (!options.cxx.empty()) ropts.compiler.compiler = options.cxx;
    if (!options.cxxFlags.empty()) {
        ropts.compiler.flags.clear();
        std::istringstream fs(options.cxxFlags);
        for (std::string f; fs >> f;) ropts.compiler.flags.push_back(f);
        // The flags replace the defaults: without these the compiler links a program, not a library.
        for (const char* needed : {"-shared", "-fPIC"})
            if (std::find(ropts.compiler.flags.begin(), ropts.compiler.flags.end(), needed) == ropts.compiler.flags.end())
                afterCompile << "warning: --cxx-flags replaces the default flags and lacks " << needed
                             << " (kernels are built as a shared library: add \"-shared -fPIC\")\n";
    }
    for (const auto& spec : options.expects) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
            afterCompile << "error: --expect '" << spec << "': expected NAME=FILE.npy\n";
            badExpect = true;
            break;
        }
        auto t = ir::readNpy(spec.substr(eq + 1));
        if (!t.ok()) {
            printDiagnostics(t.diagnostics(), afterCompile);
            badExpect = true;
            break;
        }
        ropts.expectedOutputs.emplace_back(spec.substr(0, eq), std::move(*t));
    }
    const std::shared_ptr<pipeline::Runner> runner = pipeline::makeRunner(ropts.threads);
    request.runner = runner.get();
    pipeline::RunEvents events;
    events.compiled = [&](const std::shared_ptr<const pipeline::CompiledModel>& compiled) {
        printDiagnostics(compiled->warnings, err);  // what the compile did not honour (stage on CUDA, fusion groups)
        err << afterCompile.str();
        return !badExpect;
    };
    auto result = pipeline::compileAndRun(request, nullptr, events);
    if (!result.ok()) {
        printDiagnostics(result.diagnostics(), err);
        return isRunnerFault(result.diagnostics()) ? kExitKernelFault : kExitBadInput;
    }
    if (!result->report) return kExitBadInput;  // a bad --expect, said above
    const std::shared_ptr<const pipeline::CompiledModel>& cm = result->compiled;
    const std::shared_ptr<const pipeline::RunReport>& rep = result->report;

    // Outputs to .npy.
    nlohmann::json outs = nlohmann::json::array();
    if (!options.outputDir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(options.outputDir, ec);
        if (ec) {
            err << "error: --output-dir '" << options.outputDir << "': " << ec.message() << "\n";
            return kExitBadInput;
        }
    }
    std::set<std::string> usedFiles;
    for (const auto& [name, t] : rep->outputs) {
        nlohmann::json o{{"name", name}, {"dtype", std::string(ir::dtypeName(t.dtype))}, {"shape", t.dims}};
        if (!options.outputDir.empty()) {
            // Distinct outputs whose names sanitise alike get distinct files (a_b.npy, a_b_2.npy).
            std::string stem = fileNameFor(name), unique = stem;
            for (int n = 2; usedFiles.count(unique); ++n) unique = stem + "_" + std::to_string(n);
            usedFiles.insert(unique);
            const std::string path = (std::filesystem::path(options.outputDir) / (unique + ".npy")).string();
            auto w = ir::writeNpy(path, t);
            if (!w.ok()) {
                printDiagnostics(w.diagnostics(), err);
                return kExitBadInput;
            }
            o["file"] = path;
        }
        outs.push_back(std::move(o));
    }
    // The CLI twin of the GUI's Check dock: what each failing kernel computed and what the
    // reference computed, as DIR/check/<kernel>.<output>.got.npy and .want.npy.
    if (!options.outputDir.empty() && rep->checked && !rep->allPassed) {
        const std::filesystem::path dir = std::filesystem::path(options.outputDir) / "check";
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        int written = 0;
        for (const auto& k : rep->kernels)
            for (const auto& c : k.checks) {
                if (!c.actual || !c.expected) continue;
                const std::string stem = fileNameFor(k.name) + "." + fileNameFor(c.tensor);
                if (ir::writeNpy((dir / (stem + ".got.npy")).string(), *c.actual).ok() &&
                    ir::writeNpy((dir / (stem + ".want.npy")).string(), *c.expected).ok())
                    ++written;
            }
        if (written > 0)
            err << "note: wrote got/want of " << written << " failing output(s) to " << dir.string() << "\n";
    }

    const auto& r = *rep;
    for (const auto& w : r.warnings.items()) err << w.format() << "\n";
    if (options.json) {
        nlohmann::json j;
        j["ok"] = true;
        j["model"] = options.modelPath;
        j["target"] = cuda ? "cuda" : "cpu";
        j["threads"] = r.threads;
        j["kernels"] = nlohmann::json::array();
        for (const auto& k : r.kernels) {
            const double t = k.time.median;
            nlohmann::json e{{"name", k.name},
                             {"op_type", k.opType},
                             {"ops", k.ops},
                             {"group", k.group},
                             {"reference", k.reference},
                             {"flops", k.flops},
                             {"bytes", k.bytes},
                             {"compulsory_bytes", k.compulsoryBytes},
                             {"arithmetic_intensity", k.bytes > 0 ? rateFlops(k) / static_cast<double>(k.bytes) : 0.0},
                             {"time_s", t},
                             {"time_min_s", k.time.min},
                             {"time_q1_s", k.time.q1},
                             {"time_q3_s", k.time.q3},
                             {"reps", k.time.reps},
                             {"rotated_copies", k.rotatedCopies},
                             {"useful_flops", k.usefulFlops},
                             {"gflops", t > 0 ? rateFlops(k) / t * 1e-9 : 0.0},
                             {"gbps", t > 0 ? static_cast<double>(k.bytes) / t * 1e-9 : 0.0}};
            if (k.energyJoules >= 0) {
                e["energy_j"] = k.energyJoules;
                e["avg_power_w"] = k.avgPowerWatts;
                e["gflop_per_j"] = k.energyJoules > 0 ? rateFlops(k) / k.energyJoules * 1e-9 : 0.0;
            }
            if (k.checked) {
                double maxAbs = 0;
                std::int64_t firstBad = -1;
                for (const auto& c : k.checks) {
                    maxAbs = std::max(maxAbs, c.comparison.maxAbs);
                    if (firstBad < 0 && c.comparison.firstBadIndex >= 0) firstBad = c.comparison.firstBadIndex;
                }
                e["max_rel_error"] = k.maxRelError();
                e["max_abs_error"] = maxAbs;
                e["passed"] = k.passed;
                e["first_bad_index"] = firstBad;
            }
            j["kernels"].push_back(std::move(e));
        }
        j["total_time_s"] = r.total.median;
        j["plan"] = {{"planner", cm->plan.planner},
                     {"hardware", cm->plan.hardware},
                     {"groups", cm->plan.groups.size()},
                     {"fused_groups", cm->plan.fusedGroupCount()},
                     {"source", fusionPlanSource(options.fusion, cm->plan, cuda ? "cuda" : "cpu")}};
        if (r.checked) {
            j["checked"] = true;
            j["all_passed"] = r.allPassed;
        }
        if (!r.outputChecks.empty()) {
            j["output_checks"] = nlohmann::json::array();
            for (const auto& c : r.outputChecks) {
                // JSON has no infinities: a non-finite mismatch's unbounded error is written as null.
                auto finiteOrNull = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); };
                j["output_checks"].push_back({{"name", c.tensor},
                                              {"against", c.against},
                                              {"passed", c.comparison.ok},
                                              {"rel_l2", finiteOrNull(c.comparison.relL2)},
                                              {"max_abs", finiteOrNull(c.comparison.maxAbs)},
                                              {"non_finite", c.comparison.nonFiniteMismatches},
                                              {"summary", c.comparison.summary()}});
            }
        }
        j["outputs"] = outs;
        if (r.cudaModule) {
            j["compile"] = {{"cache_hit", r.cudaModule->cacheHit},
                            {"seconds", r.cudaModule->compileSeconds},
                            {"compiler", "NVRTC"},
                            {"arch", r.cudaModule->arch}};
        } else {
            j["compile"] = {{"cache_hit", r.library.cacheHit},
                            {"seconds", r.library.compileSeconds},
                            {"compiler", r.library.compilerVersion},
                            {"units", r.library.units},
                            {"units_compiled", r.library.unitsCompiled},
                            {"units_cached", r.library.unitsCached},
                            {"units_reduced_opt", r.library.unitsReducedOpt}};
        }
        if (r.device)
            j["device"] = {{"name", r.device->name},
                           {"ordinal", r.device->ordinal},
                           {"sms", r.device->smCount},
                           {"memory_bytes", r.device->totalMemoryBytes},
                           {"arch", r.device->arch()}};
        out << j.dump(2) << "\n";
    } else {
        if (r.device && r.cudaModule) {
            out << options.modelPath << ": " << r.kernels.size() << (r.kernels.size() == 1 ? " kernel" : " kernels")
                << " on " << r.device->name << " (" << r.device->smCount << " SMs, " << r.cudaModule->arch << "; "
                << cm->foldedNodes << " constant nodes folded; NVRTC "
                << (r.cudaModule->cacheHit ? "cache hit" : seconds(r.cudaModule->compileSeconds)) << ")\n";
        } else {
            out << options.modelPath << ": " << r.kernels.size() << (r.kernels.size() == 1 ? " kernel" : " kernels") << " on " << r.threads << " thread"
                << (r.threads == 1 ? "" : "s") << " (" << cm->foldedNodes << " constant nodes folded; compile "
                << (r.library.cacheHit ? "cache hit" : seconds(r.library.compileSeconds)) << unitsNote(r.library, ropts.compiler.reducedOptFlag) << ")\n";
        }
        out << std::left << std::setw(28) << "kernel" << std::setw(20) << "op" << std::right << std::setw(12) << "FLOPs"
            << std::setw(12) << "bytes" << std::setw(8) << "AI" << std::setw(12) << "median" << std::setw(14)
            << "GFLOP/s" << std::setw(10) << "GB/s";
        const bool anyEnergy = std::any_of(r.kernels.begin(), r.kernels.end(),
                                           [](const pipeline::KernelReport& k) { return k.energyJoules >= 0; });
        if (anyEnergy) out << std::setw(11) << "J/run";
        if (r.checked) out << std::setw(11) << "rel.err";
        out << "\n";
        for (const auto& k : r.kernels) {
            const double t = k.time.median;
            // The end of a node name is its most distinctive part (".../conv.2/Conv").
            std::string name = printableName(k.name);
            if (name.size() > 27) name = "..." + name.substr(name.size() - 24);
            std::string op = k.opType + (k.ops.size() > 1 ? "+" + std::to_string(k.ops.size() - 1) : std::string()) +
                             (k.reference ? " (ref)" : "");
            char ai[32], gf[32], gb[32], re[32];
            std::snprintf(ai, sizeof ai, "%.2f", k.bytes > 0 ? rateFlops(k) / static_cast<double>(k.bytes) : 0.0);
            std::snprintf(gf, sizeof gf, "%.2f", t > 0 ? rateFlops(k) / t * 1e-9 : 0.0);
            std::snprintf(gb, sizeof gb, "%.2f", t > 0 ? static_cast<double>(k.bytes) / t * 1e-9 : 0.0);
            std::snprintf(re, sizeof re, "%.1e", k.maxRelError());
            // A NaN or inf where the reference has a number makes the error infinite.
            if (!k.passed && std::isinf(k.maxRelError())) std::snprintf(re, sizeof re, "non-fin.");
            out << std::left << std::setw(28) << name << std::setw(20) << op << std::right << std::setw(12)
                << human(rateFlops(k), "") << std::setw(12) << bytesText(k.bytes) << std::setw(8) << ai
                << std::setw(12) << (ropts.time ? seconds(t) : "-") << std::setw(14) << (ropts.time ? gf : "-")
                << std::setw(10) << (ropts.time ? gb : "-");
            if (anyEnergy) out << std::setw(11) << (k.energyJoules >= 0 ? joules(k.energyJoules) : "-");
            if (r.checked) out << std::setw(11) << (k.checked ? re : k.reference ? "ref" : "-") << (k.passed ? "" : "  FAILED");
            out << "\n";
        }
        if (cm->plan.fusedGroupCount() > 0)
            out << "fusion plan: " << fusionPlanSource(options.fusion, cm->plan, cuda ? "cuda" : "cpu") << ", "
                << cm->plan.fusedGroupCount() << (cm->plan.fusedGroupCount() == 1 ? " fused kernel" : " fused kernels")
                << " (op \"X+N\": op X with N more ops fused into its kernel)\n";
        if (ropts.time && std::any_of(r.kernels.begin(), r.kernels.end(),
                                      [](const pipeline::KernelReport& k) { return k.rotatedCopies > 1; }))
            out << "per-kernel medians read inputs rotated between copies (cold caches); end to end runs the "
                   "sequence once per repetition, warm, so it can be less than their sum\n";
        if (ropts.time && r.total.reps > 0) out << "end to end: " << seconds(r.total.median) << " (median of " << r.total.reps << ")\n";
        for (const auto& o : outs)
            out << "output '" << o["name"].get<std::string>() << "': " << o["dtype"].get<std::string>()
                << dimsStr(o["shape"].get<std::vector<std::int64_t>>())
                << (o.contains("file") ? " -> " + o["file"].get<std::string>() : std::string()) << "\n";
        // The verdict a user wants first: the model's outputs, end to end.
        for (const auto& c : r.outputChecks)
            out << "output '" << printableName(c.tensor) << "' "
                << (c.comparison.ok ? "matches " : "DIFFERS from ")
                << (c.against == "expected" ? std::string("the expected tensor") : "the " + c.against) << ": "
                << c.comparison.summary() << "\n";
        if (r.checked) {
            int failed = 0, checked = 0;
            for (const auto& k : r.kernels) {
                failed += !k.passed;
                checked += k.checked;
            }
            if (failed == 0 && checked > 0)
                out << "check: all " << checked << (checked == 1 ? " kernel matches" : " kernels match")
                    << " the reference interpreter\n";
            else if (failed > 0)
                out << "check: " << failed << " of " << checked << " kernels outside tolerance\n";
        }
    }
    if (r.checked && !r.allPassed) {
        for (const auto& c : r.outputChecks)
            if (!c.comparison.ok)
                err << "output '" << c.tensor << "' differs from "
                    << (c.against == "expected" ? std::string("the expected tensor") : "the " + c.against) << ": "
                    << c.comparison.summary() << "\n";
        for (const auto& k : r.kernels)
            if (!k.passed) {
                for (const auto& c : k.checks)
                    if (!c.comparison.ok)
                        err << "kernel '" << k.name << "' (" << k.opType << ") output '" << c.tensor
                            << "': " << c.comparison.summary() << "\n";
                break;  // the first failing kernel is the culprit; later ones inherit its error
            }
        return kExitCheckFailed;
    }
    return kExitOk;
}

/// Writes `data` to `path` (binary); false with a message on err when that fails.
bool writeFile(const std::filesystem::path& path, const std::string& data, std::ostream& err) {
    std::ofstream f(path, std::ios::binary);
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    const int saved = errno;
    f.close();
    if (!f) {
        err << "error: cannot write '" << path.string() << "': " << std::strerror(saved ? saved : errno) << "\n";
        return false;
    }
    return true;
}

/// `compile --target cuda`: --emit cuda (CUDA C), ptx, cubin (NVRTC, for --arch) or ir.
int runCompileCuda(const CompileCmdOptions& options, std::ostream& out, std::ostream& err) {
    const std::string emit = options.emit.empty() ? std::string("cuda") : options.emit;
    if (emit != "cuda" && emit != "ptx" && emit != "cubin" && emit != "ir" && emit != "sass") {
        err << "error: --emit " << emit << ": expected cuda, ptx, cubin, sass or ir for --target cuda\n";
        return kExitBadInput;
    }
    const bool needNvrtc = emit == "ptx" || emit == "cubin" || emit == "sass";
    if (needNvrtc) {
        auto real = pipeline::checkCudaArch(options.arch, /*askNvrtc=*/true);
        if (!real) {
            printDiagnostics(real.diagnostics(), err);
            return kExitBadInput;
        }
        if ((emit == "cubin" || emit == "sass") && !*real) {
            err << "error: --arch " << options.arch << " gives PTX only; --emit " << emit << " needs a real architecture such as sm_90\n";
            return kExitBadInput;
        }
    }
    if (emit == "cubin" && options.outputDir.empty()) {
        err << "error: --emit cubin writes binary files: give --output-dir DIR\n";
        return kExitBadInput;
    }
    std::optional<pipeline::CompiledModel> cm;
    if (int rc = loadAndCompile(options, lower::Target::Cuda, cm, err); rc != kExitOk) return rc;
    // What to compile: the whole module (stdout), or one module per kernel (--output-dir).
    struct Unit {
        std::string name;  ///< file stem
        std::string source;
        const pipeline::CompiledStep* step = nullptr;
    };
    std::vector<Unit> units;
    if (options.outputDir.empty()) {
        units.push_back({"", cm->code.source, nullptr});
    } else {
        std::set<std::string> used;
        for (const auto& s : cm->steps) {
            if (s.kind != pipeline::StepKind::Kernel) continue;
            auto mod = pipeline::kernelCudaModule(s);
            if (!mod) {
                printDiagnostics(mod.diagnostics(), err);
                return kExitBadInput;
            }
            std::string stem = s.entry.rfind("tk_", 0) == 0 ? s.entry.substr(3) : s.entry;
            if (stem.empty()) stem = "kernel";
            std::string unique = stem;
            for (int i = 2; used.count(unique); ++i) unique = stem + "_" + std::to_string(i);
            used.insert(unique);
            units.push_back({unique, std::move(*mod), &s});
        }
    }
    std::error_code ec;
    if (!options.outputDir.empty()) {
        std::filesystem::create_directories(options.outputDir, ec);
        if (ec) {
            err << "error: cannot create '" << options.outputDir << "': " << ec.message() << "\n";
            return kExitBadInput;
        }
    }
    int written = 0;
    for (const Unit& u : units) {
        std::string text, ext;
        if (emit == "cuda") {
            text = u.source;
            ext = ".cu";
        } else if (emit == "ir") {
            if (u.step) {
                text = lower::printKernel(u.step->kernel);
            } else {
                for (const auto& s : cm->steps)
                    text += s.kind == pipeline::StepKind::Kernel
                                ? lower::printKernel(s.kernel) + "\n"
                                : "// node '" + s.name + "' (" + s.opType + ") runs in the reference interpreter\n\n";
            }
            ext = ".ir";
        } else {
            auto c = pipeline::compileCudaModule(
                u.source, options.arch, (u.name.empty() ? std::string("tessera_kernels") : u.name) + ".cu");
            if (!c) {
                printDiagnostics(c.diagnostics(), err);
                return kExitBadInput;
            }
            if (emit == "ptx") {
                text = c->ptx;
                ext = ".ptx";
            } else if (emit == "cubin") {
                text = c->cubin;
                ext = ".cubin";
            } else {
                auto sass = pipeline::disassembleCubin(c->cubinPath);
                if (!sass) {
                    printDiagnostics(sass.diagnostics(), err);
                    return kExitBadInput;
                }
                text = *sass;
                ext = ".sass";
            }
        }
        if (options.outputDir.empty()) {
            out << text;
            continue;
        }
        if (!writeFile(std::filesystem::path(options.outputDir) / (u.name + ext), text, err)) return kExitBadInput;
        ++written;
    }
    if (!options.outputDir.empty())
        out << "wrote " << written << " file" << (written == 1 ? "" : "s") << " to " << options.outputDir << "\n";
    return kExitOk;
}

}  // namespace

int runCompileCommand(const CompileCmdOptions& options, std::ostream& out, std::ostream& err) {
    if (options.target == "cuda") return runCompileCuda(options, out, err);
    if (options.target != "cpu") {
        err << "error: --target " << options.target << ": expected cpu or cuda\n";
        return kExitBadInput;
    }
    if (options.arch != "sm_90") {
        err << "error: --arch is for --target cuda\n";
        return kExitBadInput;
    }
    if (!options.outputDir.empty()) {
        err << "error: --output-dir is for --target cuda (one file per kernel); the cpu target prints one module\n";
        return kExitBadInput;
    }
    const std::string emit = options.emit.empty() ? std::string("cpp") : options.emit;
    if (emit != "cpp" && emit != "ir") {
        err << "error: --emit " << emit << ": expected cpp or ir (cuda, ptx, cubin, sass are for --target cuda)\n";
        return kExitBadInput;
    }
    std::optional<pipeline::CompiledModel> cm;
    if (int rc = loadAndCompile(options, lower::Target::Cpu, cm, err); rc != kExitOk) return rc;
    if (emit == "cpp") {
        out << cm->code.source;
    } else {
        for (const auto& s : cm->steps) {
            if (s.kind == pipeline::StepKind::Kernel)
                out << lower::printKernel(s.kernel) << "\n";
            else
                out << "// node '" << s.name << "' (" << s.opType << ") runs in the reference interpreter\n\n";
        }
    }
    return kExitOk;
}

}  // namespace tessera::cli
