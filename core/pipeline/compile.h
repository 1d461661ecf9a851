#pragma once
/// @file
/// Compiling a model or program for a target: specialise shapes and fold constants
/// (core/pipeline/prepare.h), lower every remaining node to a kernel (core/lower/lower.h), count
/// each kernel statically (core/lower/counts.h) and generate one source module for all of them
/// (core/codegen/cpp for the CPU, core/codegen/cuda for CUDA: one launch configuration per kernel). Running and checking the result is core/pipeline/run.h.
///
/// Semantics
/// - One kernel per fusion group (core/schedule/fusion_plan.h): the plan is CompileOptions::plan
///   when given (node names; nodes that folding removed are dropped from their group; nodes the
///   plan does not mention run alone, with a warning naming them), else the plan
///   CompileOptions::planner makes on the specialised graph, else the program's `fuse` groups
///   (DSL; the nodes they leave out run alone without a warning: the statements name only the
///   groups the program wants), else one kernel per node. A group that breaks a rule (checkPlan)
///   or that the lowering cannot fuse is split into single-op kernels with a warning giving the
///   reason; CompiledModel::plan is the plan actually applied.
///   Steps are in a topological order of the groups.
/// - A node whose op has no code generator stops the compile with an error naming it, unless
///   CompileOptions::fallbackReference is set: then it becomes a Reference step, run by the
///   reference interpreter between kernels and marked so in every report. The same holds for a
///   form of an op that has no generator by design (lower::kUnsupportedFormNote).
/// - Kernel names are the node names (data: the generator sanitises and uniquifies them into
///   entry-point symbols; `CompiledStep::entry`).
///
/// Errors: those of specialisation (fed input shapes), lowering (naming the node), an op without
/// a generator (naming the node and suggesting --fallback-reference; code
/// support::DiagnosticCode::NoCodeGenerator, as for a form of an op without one), cancellation.
/// Thread rules: pure; may run on any worker thread; `cancel` is polled between nodes, `progress`
/// is called from the calling thread.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/codegen/c_emitter.h"
#include "core/codegen/cuda/cuda_codegen.h"
#include "core/ir/graph.h"
#include "core/lower/counts.h"
#include "core/lower/lower.h"
#include "core/schedule/fusion_plan.h"
#include "core/target/gpu_profile.h"
#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::pipeline {

struct PreparedModel;

/// Per-kernel progress of a long job: `done` of `total` units of `phase` are finished (0 <= done
/// <= total, total >= 1). Within one phase, `done` never decreases; every phase that starts ends
/// with done == total unless the job fails or is cancelled. Phases and their units:
/// compileModel: kPhaseLowering (fusion groups lowered), kPhaseGenerating (1: the module's code);
/// runModel: kPhaseCompilingModule (CPU: the host JIT's compile units, finished or found in the
/// cache; the phase starts as 0/1 and its total becomes the unit count once the module is split;
/// CUDA: 1, NVRTC builds the whole module at once), kPhaseRunningKernels (steps run and timed, in execution
/// order, reference steps included), kPhaseChecking (steps checked against the reference).
/// Thread rules: called on the thread that runs the job (a worker in the GUI), synchronously;
/// it must return quickly and must not call back into the job.
using KernelProgress = std::function<void(int done, int total, const std::string& phase)>;

inline constexpr const char* kPhaseLowering = "lowering";
inline constexpr const char* kPhaseGenerating = "generating code";
inline constexpr const char* kPhaseCompilingModule = "compiling kernels";
inline constexpr const char* kPhaseRunningKernels = "running kernels";
inline constexpr const char* kPhaseChecking = "checking against the reference interpreter";

struct CompileOptions {
    lower::Target target = lower::Target::Cpu;
    int cpuThreads = 2;              ///< workers the default schedules aim for
    bool fallbackReference = false;  ///< run ops without a generator in the reference interpreter
    std::int64_t gpuGemmMinBlocks = 16;  ///< lower::LowerOptions::gpuGemmMinBlocks for the CUDA target
    std::int64_t gpuGemmFillBlocks = 132;  ///< lower::LowerOptions::gpuGemmFillBlocks for the CUDA target
    /// An explicit fusion plan (takes precedence over `planner`).
    std::optional<schedule::FusionPlan> plan;
    /// "none", "hidet" or "fuseplanner" (schedule::makePlan), run on the specialised graph; empty =
    /// the program's fuse groups, or none.
    std::string planner;
    /// Hardware profile for the planner and the plan's checks; empty name = the target's: this CPU
    /// (pipeline::hostProfile) for the CPU target, the built-in "h200" for CUDA.
    target::GpuProfile hardware;
    /// User schedules (core/pipeline/user_schedule.h: the GUI's applied task mappings, `--schedule`,
    /// a project's "schedules"), by node name: each replaces the program's schedule of that node or
    /// its default. A subject that names no node of the specialised graph, or a fused member that
    /// is not its group's anchor (the anchor's schedule makes the group's kernel), is a warning.
    std::vector<ir::KernelScheduleDecl> schedules;
    /// Per-kernel progress (see KernelProgress): lowering per fusion group, then code generation.
    KernelProgress kernelProgress;
};

enum class StepKind { Kernel, Reference };

struct CompiledStep {
    StepKind kind = StepKind::Kernel;
    ir::NodeId node = ir::kNoNode;    ///< in CompiledModel::model.graph
    std::string name;                 ///< node name (the anchor's for a fused group)
    std::string group;                ///< fusion group name (the node's name when nothing is fused)
    std::vector<ir::NodeId> members;  ///< every node the step computes (node first for singles)
    std::string opType;
    std::vector<ir::ValueId> inputs;  ///< kernel params (inputs), or the node's present inputs
    std::vector<ir::ValueId> outputs; ///< kernel params (outputs), or the node's present outputs
    lower::Kernel kernel;             ///< Kernel steps only
    lower::KernelCounts counts;       ///< Kernel steps only
    /// Kernel steps whose every member is elementwise (the fusion rules' isElementwiseNode):
    /// straight-line loop bodies, some of which the host JIT compiles at a lower optimisation
    /// level (kReducedOptMaxElements, run.h).
    bool elementwise = false;
    std::int64_t nodeFlops = -1;      ///< FLOPs of the node(s) by the op registry (-1 unknown)
    std::string entry;                ///< exported symbol (Kernel steps)
    codegen::CudaLaunch launch;       ///< grid and block of the kernel (CUDA target, Kernel steps)
    int firstLine = 0, lastLine = 0;  ///< lines of the kernel in CompiledModel::source (1-based)
};

struct CompiledModel {
    ir::Model model;                  ///< specialised and folded: the graph the steps refer to
    std::vector<CompiledStep> steps;  ///< execution order
    codegen::GeneratedSource code;    ///< one module holding every kernel (C++ or CUDA C)
    int foldedNodes = 0;
    /// For each runtime input of model.graph, its index in the inputs given to compileModel
    /// (shape operands bound at compile time are not runtime inputs any more).
    std::vector<std::size_t> inputSlots;
    lower::Target target = lower::Target::Cpu;
    /// What the compile did not honour, as warnings (where = the node or group): a DSL `stage`
    /// the CUDA target does not implement yet, fusion groups split because they break a rule or
    /// the lowering cannot fuse them (with the reason), plan nodes missing from the graph.
    support::DiagnosticList warnings;
    /// The fusion plan applied (groups as compiled, after splitting refused ones; names of the
    /// specialised graph). planner "none" with one group per node when no fusion was asked for.
    schedule::FusionPlan plan;

    int kernelCount() const;
    /// The subset of the caller's inputs (given to compileModel) that model.graph still takes.
    std::vector<ir::TensorData> runtimeInputsOf(const std::vector<ir::TensorData>& callerInputs) const;
    /// Index of the step computing node `name` (alone or as a member of a fused group), -1 if none.
    int stepOfNode(const std::string& name) const;
};

/// Inputs for a model whose user gave none: every runtime input filled from a fixed seed
/// (floats uniform in [-1, 1), integers in [0, 4), bools alternating), symbolic dims set to 1.
/// Inputs named in `given` (by graph input order; empty TensorData = not given) are kept.
std::vector<ir::TensorData> defaultInputs(const ir::Graph& g, std::uint64_t seed = 42,
                                          const std::vector<ir::TensorData>& given = {});

/// A DSL program's `fuse` statements (model.program.fusions) as a plan on model.graph, as
/// compileModel applies them when no plan or planner is given: a group with exactly two
/// convolutions of kinds FusePlanner pairs becomes a dw-pw / pw-dw / pw-pw chain, any other an
/// anchor (the declared one) with prologue and epilogue. planner = "program"; empty when the
/// program declares no fusion.
schedule::FusionPlan programFusionPlan(const ir::Model& model);

/// The plan compileModel compiles `specialised` (a model specialiseModel returned) with under
/// `options` (its plan, else its planner, else the program's fuse statements, else one kernel per
/// node), resolved onto the graph: names not in it dropped, nodes it does not mention added as
/// single groups, groups that break a rule split into singles, groups in a topological order.
/// Each such repair is a warning in `warnings` (as compileModel reports them). Errors: an unknown
/// planner. Thread rules: a pure function; any thread.
support::Expected<schedule::FusionPlan> resolvePlan(const ir::Model& specialised, const CompileOptions& options,
                                                    support::DiagnosticList& warnings);

support::Expected<CompiledModel> compileModel(const ir::Model& model, const std::vector<ir::TensorData>& inputs,
                                              const CompileOptions& options = {},
                                              const support::CancelToken* cancel = nullptr,
                                              const support::ProgressSink& progress = {});

/// compileModel of a model already specialised to its inputs (pipeline::prepare, engine.h): the
/// same result, without specialising it again. CompiledModel::inputSlots index
/// PreparedModel::inputs.
support::Expected<CompiledModel> compileModel(const PreparedModel& prepared, const CompileOptions& options = {},
                                              const support::CancelToken* cancel = nullptr,
                                              const support::ProgressSink& progress = {});

/// True when ops of type `opType` (default ONNX domain) have a code generator; the others run in
/// the reference interpreter with CompileOptions::fallbackReference, or stop the compile. Some
/// forms of an op with a generator have none (lower::kUnsupportedFormNote).
bool hasCodeGenerator(const std::string& opType);

}  // namespace tessera::pipeline
