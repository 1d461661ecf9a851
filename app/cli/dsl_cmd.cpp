#include "app/cli/dsl_cmd.h"

#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "app/cli/inspect.h"
#include "core/frontend/dsl/diagnostic_render.h"
#include "core/frontend/dsl/lexer.h"
#include "core/ir/shape_inference.h"
#include "core/pipeline/load_model.h"

namespace tessera::cli {

int runCheck(const CheckOptions& options, std::ostream& out, std::ostream& err) {
    std::ifstream in(options.path, std::ios::binary);
    if (!in) {
        err << options.path << ": error: cannot open file\n";
        return kExitBadInput;
    }
    std::error_code ec;
    const auto size = std::filesystem::file_size(options.path, ec);
    if (!ec && size > frontend::dsl::kMaxSourceBytes) {
        err << options.path << ": error: file is too large\n";
        return kExitBadInput;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    auto result = frontend::dsl::parseProgram(text, options.path, pipeline::dslParseOptions());
    err << frontend::dsl::renderDiagnostics(result.diagnostics(), text);
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
