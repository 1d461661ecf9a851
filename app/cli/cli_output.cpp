#include "app/cli/cli_output.h"

#include "core/pipeline/run.h"

namespace tessera::cli {

void printDiagnostics(const support::DiagnosticList& d, std::ostream& err) {
    for (const auto& x : d.items()) {
        err << x.format() << "\n";
        for (const auto& n : x.notes) err << "  note: " << n << "\n";
    }
}

bool isRunnerFault(const support::DiagnosticList& d) {
    for (const auto& x : d.items())
        if (x.severity == support::Severity::Error && x.where == pipeline::kRunnerWhere) return true;
    return false;
}

}  // namespace tessera::cli
