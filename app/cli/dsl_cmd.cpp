#include "app/cli/dsl_cmd.h"

#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "app/cli/inspect.h"
#include "core/ir/shape_inference.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/dsl_text.h"
#include "core/schedule/fusion_plan.h"

namespace tessera::cli {

namespace {

/// The broken fusion rules of the program's `fuse` groups, one warning each at its statement.
/// The groups are converted as `run` and `plan` convert them (pipeline::programFusionPlan); the
/// nodes no statement names run alone, so they are added as singles for the coverage and cycle
/// rules and only the declared groups' violations are reported.
support::DiagnosticList fusionWarnings(const ir::Model& m, const std::string& path) {
    support::DiagnosticList out;
    if (m.program.fusions.empty()) return out;
    schedule::FusionPlan plan = pipeline::programFusionPlan(m);
    const std::size_t declared = plan.groups.size();
    if (declared != m.program.fusions.size()) return out;  // no topological order: sema reported it
    for (const auto& single : schedule::planNone(m.graph).groups)
        if (plan.groupOf(single.ops.front()) < 0) plan.groups.push_back(single);
    for (const auto& v : schedule::checkPlan(m.graph, plan)) {
        if (v.group < 0 || static_cast<std::size_t>(v.group) >= declared) continue;
        const auto& decl = m.program.fusions[static_cast<std::size_t>(v.group)];
        support::Diagnostic d;
        d.severity = support::Severity::Warning;
        d.file = path;
        d.begin = decl.begin;
        d.end = decl.end;
        d.message = "fusion group '" + decl.name + "' breaks a rule: " + v.message + " [" + v.rule + "]";
        out.add(std::move(d));
    }
    if (!out.empty())
        out.items().back().notes.push_back("`run` compiles a group that breaks a rule as one kernel per node; "
                                           "`tessera-cli plan " + path + " --why-not` explains each edge");
    return out;
}

}  // namespace

int runCheck(const CheckOptions& options, std::ostream& out, std::ostream& err) {
    // Only regular files of bounded size: a directory, a FIFO or /dev/zero must not be read.
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(options.path, ec);
    if (ec || !fs::exists(st)) {
        err << options.path << ": error: cannot open file: no such file\n";
        return kExitBadInput;
    }
    if (fs::is_directory(st)) {
        err << options.path << ": error: is a directory, not a program\n";
        return kExitBadInput;
    }
    if (!fs::is_regular_file(st)) {
        err << options.path << ": error: not a regular file\n";
        return kExitBadInput;
    }
    const auto size = fs::file_size(options.path, ec);
    if (ec) {
        err << options.path << ": error: cannot read file: " << ec.message() << "\n";
        return kExitBadInput;
    }
    if (size > pipeline::kMaxDslSourceBytes) {
        err << options.path << ": error: file is " << size / (1024 * 1024) << " MiB, above the DSL's "
            << pipeline::kMaxDslSourceBytes / (1024 * 1024) << " MiB limit\n";
        return kExitBadInput;
    }
    std::ifstream in(options.path, std::ios::binary);
    if (!in) {
        err << options.path << ": error: cannot open file\n";
        return kExitBadInput;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    auto result = pipeline::parseDsl(text, options.path);
    err << pipeline::renderDslDiagnostics(result.diagnostics(), text);
    int errors = 0, warnings = 0;
    for (const auto& d : result.diagnostics().items()) {
        errors += d.severity == support::Severity::Error;
        warnings += d.severity == support::Severity::Warning;
    }
    if (!result.ok()) {
        err << options.path << ": " << errors << " error" << (errors == 1 ? "" : "s");
        if (warnings) err << ", " << warnings << " warning" << (warnings == 1 ? "" : "s");
        err << "\n";
        return kExitBadInput;
    }
    const ir::Model& m = result.value();
    const support::DiagnosticList fusion = fusionWarnings(m, options.path);
    err << pipeline::renderDslDiagnostics(fusion, text);
    warnings += static_cast<int>(fusion.items().size());
    int computes = 0, unknownFlops = 0;
    for (std::size_t i = 0; i < m.graph.numNodes(); ++i) {
        computes += m.graph.node(static_cast<ir::NodeId>(i)).compute ? 1 : 0;
        unknownFlops += ir::nodeFlops(m.graph, static_cast<ir::NodeId>(i)) ? 0 : 1;
    }
    out << options.path << ": ok: " << m.graph.numNodes() << " node" << (m.graph.numNodes() == 1 ? "" : "s")
        << " (" << computes << " compute), " << m.program.schedules.size() << " schedule"
        << (m.program.schedules.size() == 1 ? "" : "s") << ", " << m.program.fusions.size() << " fusion group"
        << (m.program.fusions.size() == 1 ? "" : "s") << ", " << (unknownFlops ? "at least " : "")
        << ir::totalFlops(m.graph) << " FLOPs" << (unknownFlops ? " (" + std::to_string(unknownFlops) + " nodes unknown)" : "");
    if (warnings) out << ", " << warnings << " warning" << (warnings == 1 ? "" : "s");
    out << "\n";
    return kExitOk;
}

}  // namespace tessera::cli
