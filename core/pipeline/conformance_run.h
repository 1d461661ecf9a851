#pragma once
/// @file
/// Running an ONNX backend node test (core/pipeline/conformance_cases.h) through Tessera's own
/// compiler: compile every node of model.onnx for the CPU (core/pipeline/compile.h), run it in
/// tessera-runner (core/pipeline/run.h, once, untimed) and compare each graph output with the
/// expected output_*.pb (core/eval/compare.h, default tolerances for the dtype).
///
/// Status: Skipped when the case has a known data issue, non-tensor data, does not import, or
/// uses an op without a code generator (message "no code generator for op 'X'"); Error when
/// lowering rejects the node's form or the run fails (a crash or a timeout in the runner: the
/// caller's RunnerClient restarts itself); Failed when an output is outside tolerance or of
/// the wrong shape; Passed otherwise.
/// Thread rules: blocks the calling thread; `runner` must not be used by another thread meanwhile.

#include "core/pipeline/conformance_cases.h"
#include "core/pipeline/run.h"

namespace tessera::pipeline {

ConformanceResult runConformanceCompiled(const ConformanceCase& c, int dataSet, runtime::RunnerClient& runner,
                                         const RunOptions& options, const support::CancelToken* cancel = nullptr);

}  // namespace tessera::pipeline
