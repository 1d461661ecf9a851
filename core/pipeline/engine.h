#pragma once
/// @file
/// The engine the GUI and the CLI share: prepare a model once (its inputs, shapes specialised
/// to them, constants folded), then compile, run, time and check it in one call. app/ reaches
/// the compiler and tessera-runner through this header and the pipeline headers it names
/// (compile.h, run.h), never through runtime/, lower/, codegen/ or frontend/ directly.
///
/// Semantics
/// - prepare(): every runtime input of the model gets a tensor: the one given, else one filled
///   from PrepareOptions::seed (pipeline::defaultInputs: symbolic extents taken as 1); with
///   PrepareOptions::shapesOnly, an input that is not given and whose values decide no shape
///   (feedsShapeOperand) is bound as a shape-only tensor instead (dims, no elements: a compile
///   that runs nothing needs no values). Then specialiseModel binds the shapes and folds the
///   constants. The result is immutable: the planner, schedule checks and compiles of the same
///   model and inputs share one (PreparedModel::matches says whether it is the one asked for).
/// - compileAndRun(): compileModel on the prepared model (no second specialisation), then
///   RunEvents::compiled; for the CUDA target with RunRequest::precompileCuda
///   (precompilesCuda()), NVRTC compiles the module with the options runModel uses
///   (cudaCompileOptions, run.h), so that runModel's own compile is a cache hit and the PTX
///   exists before (and even without) a run, then RunEvents::cudaCompiled; unless
///   RunRequest::compileOnly or RunEvents::compiled declined, runModel runs, times and checks
///   the kernels in the request's runner with the prepared inputs.
///
/// Errors: those of specialisation (prepare), of compileModel, NVRTC and runModel, each returned
/// as they are (runner failures carry support::DiagnosticCode::RunnerFault); cancellation
/// between the phases ("cancelled"); no prepared model, or no runner for a run.
/// Thread rules: prepare and compileAndRun block the calling thread (a worker in the GUI); the
/// events are called on that thread, synchronously; a Runner is used by one thread at a time.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/tensor.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/prepare.h"
#include "core/pipeline/run.h"
#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::pipeline {

/// The tessera-runner child process kernels run in (core/runtime/runner_client.h): started on
/// first use, kept for later runs, restarted after a fault.
using Runner = runtime::RunnerClient;

/// A runner whose kernels run with `threads` OpenMP threads (0: the environment's).
std::shared_ptr<Runner> makeRunner(int threads);

struct PrepareOptions {
    std::uint64_t seed = 42;  ///< inputs not given are filled from this seed
    /// Inputs not given whose values decide no shape are bound as shape-only tensors (for
    /// compiles that run nothing).
    bool shapesOnly = false;
};

/// A model with its inputs, specialised to them (see the file comment).
struct PreparedModel {
    std::shared_ptr<const ir::Model> source;  ///< the model as loaded
    PrepareOptions options;
    /// One tensor per runtime input of source->graph, in graph order: given, seeded or shape-only.
    std::vector<ir::TensorData> inputs;
    /// Per input: true when it was not given (seeded or shape-only).
    std::vector<bool> filled;
    /// source specialised to `inputs` and folded (specialiseModel): the graph plans and kernels
    /// refer to.
    ir::Model model;
    /// For each runtime input of model.graph, its index in `inputs` (inputs bound as shape
    /// operands are not runtime inputs any more).
    std::vector<std::size_t> inputSlots;
    SpecialiseStats stats;

    /// True when prepare(model, given, options) would give this: the same model object, the same
    /// given tensors (dtype, dims and elements; an Undefined dtype or a missing entry = not
    /// given) and the same options.
    bool matches(const std::shared_ptr<const ir::Model>& model, const std::vector<ir::TensorData>& given,
                 const PrepareOptions& options) const;
};

/// Prepares `model` for `given` inputs (one per runtime input in graph order; an Undefined dtype
/// or a missing entry = not given). Reports support::ProgressSink stage "specialising shapes".
/// Errors: those of specialiseModel (a fed tensor of the wrong shape or dtype, a shape-only
/// tensor fed as a shape operand, folding, shape inference), cancellation.
support::Expected<std::shared_ptr<const PreparedModel>> prepare(std::shared_ptr<const ir::Model> model,
                                                               const std::vector<ir::TensorData>& given,
                                                               const PrepareOptions& options = {},
                                                               const support::CancelToken* cancel = nullptr,
                                                               const support::ProgressSink& progress = {});

/// What compileAndRun compiles and runs, and how.
struct RunRequest {
    std::shared_ptr<const PreparedModel> prepared;
    CompileOptions compile;
    RunOptions run;
    /// CUDA target: compile the module with NVRTC right after the compile (see the file comment).
    bool precompileCuda = false;
    /// Stop after the compile (and the NVRTC compile): no run, no report; `runner` may be null.
    bool compileOnly = false;
    /// Where the kernels run; must not be used by another thread meanwhile.
    Runner* runner = nullptr;
};

/// What compileAndRun tells while it works; every member optional.
struct RunEvents {
    /// The compile's fraction and stage ("lowering", "generating code").
    support::ProgressSink progress;
    /// The compile finished. Returning false stops the job before any NVRTC compile or run: the
    /// result then holds the compiled model and no report.
    std::function<bool(const std::shared_ptr<const CompiledModel>&)> compiled;
    /// NVRTC compiled the module (RunRequest::precompileCuda).
    std::function<void(const std::shared_ptr<const runtime::cuda::CudaCompiled>&)> cudaCompiled;
};

struct RunResult {
    std::shared_ptr<const CompiledModel> compiled;
    /// NVRTC's module of the precompile (null when there was none) and its warnings.
    std::shared_ptr<const runtime::cuda::CudaCompiled> cudaModule;
    support::DiagnosticList nvrtcWarnings;
    /// Null when the job stopped before running (RunRequest::compileOnly, RunEvents::compiled).
    std::shared_ptr<const RunReport> report;
};

/// True when compileAndRun compiles `compiled` with NVRTC before running it: precompileCuda is
/// set, the target is CUDA, there is a kernel, and RunOptions::cudaArch names the architecture
/// (without it the architecture is the device's, which only the runner knows).
bool precompilesCuda(const RunRequest& request, const CompiledModel& compiled);

/// Compiles and runs request.prepared (see the file comment).
support::Expected<RunResult> compileAndRun(const RunRequest& request, const support::CancelToken* cancel = nullptr,
                                           const RunEvents& events = {});

}  // namespace tessera::pipeline
