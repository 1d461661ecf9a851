#pragma once
/// @file
/// `tessera-cli conformance DIR`: runs ONNX backend node tests (folders with model.onnx and
/// test_data_set_*/input_*.pb, output_*.pb; Debian's libonnx-testdata installs them under
/// /usr/share/libonnx-testdata/data/node) through Tessera's compiler and runner
/// (core/pipeline/conformance_run.h) and prints passed / failed / error / skipped per op.
/// An op is *claimed* when it has a code generator (pipeline::hasCodeGenerator).
///
/// Options: `--ops A,B` only cases whose op is listed; `--claimed` only claimed ops;
/// `--strict` exit 3 when a case of a claimed op failed or errored; `--verbose` one line per case;
/// `--json` one object {"ops": {"Relu": {"passed", "failed", "error", "skipped", "claimed"}},
/// "cases": [{"name", "op", "status", "message"}], "totals": {...}}; `--cxx-flags` compiler flags
/// (default "-O1 -fopenmp -shared -fPIC": the cases are tiny, compile time dominates).
///
/// Exit codes: 0 done (and, with --strict, no claimed op failed), 2 bad input (DIR missing or
/// without tests), 3 with --strict when a claimed op failed, 1 internal error.
/// Thread rules: none (runs on the caller's thread).

#include <iosfwd>
#include <string>

namespace tessera::cli {

struct ConformanceCmdOptions {
    std::string dir;
    std::string ops;  ///< comma separated filter; empty = all
    bool claimedOnly = false;
    bool strict = false;
    bool verbose = false;
    bool json = false;
    std::string cxxFlags = "-O1 -fopenmp -shared -fPIC";
};

int runConformanceCommand(const ConformanceCmdOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
