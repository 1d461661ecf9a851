#pragma once
/// @file
/// Lowering: one graph node (a kernel group of one op; fused groups come with fusion plans) plus
/// its schedule -> a Kernel of the loop-level IR (core/lower/kernel_ir.h).
///
/// Semantics
/// - Preconditions: every value the node reads or writes has a concrete shape and dtype (the
///   pipeline specialises symbolic dims from the fed inputs before lowering). Inputs that carry
///   compile-time data (Reshape's shape, Clip's min/max given as inputs, Slice's starts, Pad's
///   pads ...) must be constants (Value::data); they are folded into the code and are not kernel
///   parameters. Every other input (constants included: weights are kernel parameters) is a
///   Global buffer.
/// - Loops come from task mappings, exactly as core/schedule/task_mapping.h defines them: a
///   kernel's `grid` mapping gives the parallel workers (one OpenMP iteration each on the CPU),
///   its `block` mapping the workers inside one grid worker (serial on the CPU), and each repeat
///   factor a loop nest in rank order with its LoopAttr (unroll). A worker's task index is
///   combined across composition levels as outer * inner extent + inner. When the task shape is
///   larger than the output, tasks outside are skipped by a predicate (`if (i < n)`).
/// - A node without a schedule gets the op's default CPU schedule (`defaultCpuSchedule`), so any
///   model made of ops with a generator runs with no user input. Schedules written in a DSL
///   program (ir::KernelScheduleDecl) are honoured on the CPU target too: `target cuda` only says
///   where the schedule was tuned for.
/// - Each Kernel's `mappings` lists the mappings used ("grid = spatial(8, 14)"), its `sourceOps`
///   the node name, `opType` the node's op type.
///
/// Errors (diagnostics with where = "node 'name' (Op)"): an op without a generator ("no code
/// generator for op 'X'"), an attribute or data form the generator does not handle, a shape
/// that is not concrete, a schedule whose mapping does not parse, whose rank differs from the
/// output, or whose task shape does not cover the output.
///
/// Thread rules: pure functions of their arguments; the graph is only read. Safe to call from
/// several threads at once on the same graph.

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/program_schedule.h"
#include "core/lower/kernel_ir.h"
#include "core/schedule/fusion_plan.h"
#include "core/support/expected.h"

namespace tessera::lower {

enum class Target { Cpu, Cuda };

struct LowerOptions {
    Target target = Target::Cpu;
    /// Parallel workers the default CPU schedules aim for (>= 1); the OpenMP team size is chosen
    /// at run time, this only shapes the grid mappings.
    int cpuThreads = 2;
    /// Name given to the kernel (made unique by the caller); empty = derived from the node name.
    std::string kernelName;
    /// Default-domain opset of the model (ir::Model::defaultOpset()); 0 = newest semantics. Only
    /// ops whose semantics changed read it: Softmax/LogSoftmax below 13 coerce the input to 2-D
    /// at `axis` (default 1), as eval::ReferenceOptions::opset does.
    std::int64_t opset = 0;
    /// CUDA: the shared-memory GEMM template (MatMul, Gemm, pointwise Conv) is used only when it
    /// launches at least this many 128x128 blocks; smaller products keep the default plan, which
    /// spreads one output per thread over many more SMs (batch-1 pointwise convs launched 2-10
    /// blocks on a 132-SM H200). 0 = always when the template applies. pipeline::CompileOptions
    /// sets 16.
    std::int64_t gpuGemmMinBlocks = 0;
    /// CUDA: a dense convolution that is not a plain pointwise one takes the implicit-GEMM form
    /// (lower_heavy.h: convGemmTile) when one of its tiles launches at least this many blocks (one
    /// per SM of a 132-SM H200); else it keeps the direct form (one output per thread), which
    /// fills the GPU better on small layers. 0 = the largest tile whenever the form applies.
    std::int64_t convGemmMinBlocks = 132;
    /// CUDA: a MatMul/Gemm whose default 128 x 128 tile launches fewer blocks than this takes
    /// smaller tiles (lower_heavy.h: gpuGemmTileFor) to reach it; 0 = always the default tile.
    /// pipeline::CompileOptions sets 132 (one block per SM of an H200).
    std::int64_t gpuGemmFillBlocks = 0;
};

/// A lowered kernel and which graph values its parameters are.
struct LoweredKernel {
    Kernel kernel;
    std::vector<ir::ValueId> inputs;   ///< kernel.params[0 .. inputs.size()) in this order
    std::vector<ir::ValueId> outputs;  ///< then kernel.params[inputs.size() ..)
};

/// Note attached to a lowering error for a form of an op that has no generator by design (the op
/// itself has one): training-mode BatchNormalization/Dropout, casts from or to strings, MaxPool's
/// Indices output, pooling of integers, LayerNormalization with broadcast Scale/B.
inline constexpr const char* kUnsupportedFormNote = "this form of the op has no code generator (not claimed)";
/// True when `diags` holds such an error (support::DiagnosticCode::NoCodeGenerator, set with the note).
bool isUnsupportedForm(const support::DiagnosticList& diags);

/// True when `op` (default ONNX domain, or tessera's Compute) has a code generator.
bool hasGenerator(const ir::Node& node);
/// Op types with a generator, sorted (for `tessera-cli` and the conformance run's claim list).
std::vector<std::string> opsWithGenerators();

/// The default CPU schedule of a node, as DSL mapping declarations (level "grid" and possibly
/// "block"), e.g. grid = "spatial(2, 28) * repeat(1, 4)". Empty when the op has no generator.
std::vector<ir::ScheduleMappingDecl> defaultCpuSchedule(const ir::Graph& g, ir::NodeId node,
                                                        const LowerOptions& options = {});

/// The default schedule of a node for options.target (CPU: defaultCpuSchedule; CUDA: the default
/// GPU plan, grid = "spatial(...)", block = "spatial(...) [* repeat(...)]", see
/// detail::defaultGpuMapping, or a template's own GPU schedule such as the staged GEMM).
std::vector<ir::ScheduleMappingDecl> defaultSchedule(const ir::Graph& g, ir::NodeId node,
                                                     const LowerOptions& options = {});

/// Lowers one node. `schedule` may be null (default schedule).
support::Expected<LoweredKernel> lowerNode(const ir::Graph& g, ir::NodeId node,
                                           const ir::KernelScheduleDecl* schedule,
                                           const LowerOptions& options = {});

/// Lowers a fusion group (core/schedule/fusion_plan.h) into one kernel (issue 6).
/// - `single`: lowerNode of its op.
/// - `prologue-epilogue` (Hidet's post-scheduling fusion, semantics.md §2.3 item 5): the anchor is
///   lowered alone with `schedule` (or its default), then every load of a prologue op's output is
///   replaced by the prologue's inlined expression at that index, and every store to the anchor's
///   output consumed by an epilogue becomes a store of the epilogue's expression into the
///   epilogue's output (the group's final tensor) at the same index. Index maps are inverted
///   instead of inlined: a Transpose epilogue stores the value at the permuted index of its
///   output, a Reshape/Flatten/Squeeze/Unsqueeze epilogue at the same flat row-major offset (the
///   anchor's own indices); as prologues they turn a load of their output into a load of their
///   input at the inverse-permuted index / the same flat offset. Chains mix both kinds in any order.
/// - `dw-pw`, `pw-dw`, `pw-pw`: a fused convolution-chain kernel (core/lower/cuda/lower_fused_conv.cpp,
///   core/lower/cpu/lower_fused_conv_cpu.cpp)
///   whose intermediate tile stays on chip (shared memory on CUDA, a cache-sized tile on the CPU),
///   with the elementwise ops between the convs applied to the tile and the epilogues applied on
///   the final store.
/// The kernel's params are the group's external inputs then its external outputs (tensors used
/// outside the group or graph outputs); sourceOps lists every member; opType is the anchor's.
/// Errors (where = "group 'g3'"): a member that is not in the graph, a form the rewrite cannot
/// inline (an anchor kernel that reads back its own output, an epilogue that is neither
/// elementwise at the full shape nor an index map, ...), with the member named; the caller may
/// fall back to splitting.
support::Expected<LoweredKernel> lowerGroup(const ir::Graph& g, const schedule::FusionGroup& group,
                                            const ir::KernelScheduleDecl* schedule,
                                            const LowerOptions& options = {});

}  // namespace tessera::lower
