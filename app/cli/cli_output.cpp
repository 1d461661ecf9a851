#include "app/cli/cli_output.h"

namespace tessera::cli {

void printDiagnostics(const support::DiagnosticList& d, std::ostream& err) {
    for (const auto& x : d.items()) {
        err << x.format() << "\n";
        for (const auto& n : x.notes) err << "  note: " << n << "\n";
    }
}

bool isRunnerFault(const support::DiagnosticList& d) { return d.hasCode(support::DiagnosticCode::RunnerFault); }

}  // namespace tessera::cli
