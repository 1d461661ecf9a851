#pragma once
/// @file
/// `tessera-cli check FILE.tsr`: parses and type-checks a DSL program and prints every diagnostic
/// with its source line and a caret (docs/dsl.md §6), then a one-line summary on success. A valid
/// program's `fuse` groups are checked against the fusion rules (schedule::checkPlan, on the plan
/// `run` and `plan` make of them): each broken rule is a warning at its `fuse` statement.
///
/// Exit codes: 0 no errors (warnings may be printed), 2 errors in the program, 1 internal error.
/// Thread rules: none (runs on the caller's thread).

#include <iosfwd>
#include <string>

namespace tessera::cli {

struct CheckOptions {
    std::string path;
};

int runCheck(const CheckOptions& options, std::ostream& out, std::ostream& err);


}  // namespace tessera::cli
