#pragma once
/// @file
/// What every tessera-cli command prints the same way: diagnostics on stderr, and the test for a
/// failure of tessera-runner (the child process that runs kernels) among them.
/// Thread rules: call from the command's thread.

#include <ostream>

#include "core/support/diagnostic.h"

namespace tessera::cli {

/// Each diagnostic as "file: severity: where: message", then its notes indented as "  note: ...".
void printDiagnostics(const support::DiagnosticList& d, std::ostream& err);

/// True when an error came from tessera-runner (support::DiagnosticCode::RunnerFault: it crashed,
/// hung or was killed, or running the kernels in it failed), not from the model: such a run exits
/// 4, not 2.
bool isRunnerFault(const support::DiagnosticList& d);

}  // namespace tessera::cli
