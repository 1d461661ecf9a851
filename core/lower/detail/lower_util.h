#pragma once
/// @file
/// Shared pieces of the lowering templates (internal to core/lower; not a public API).
///
/// Every template function takes a LowerContext and returns a LoweredKernel whose kernel has
/// its params set (inputs first, then outputs), `sourceOps`, `opType` and `mappings` filled.
/// Thread rules: as core/lower/lower.h.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/lower/lower.h"
#include "core/schedule/task_mapping.h"

namespace tessera::lower::detail {

struct LowerContext {
    const ir::Graph& g;
    ir::NodeId id;
    const ir::Node& node;
    const ir::KernelScheduleDecl* schedule;  ///< may be null: use the template's default
    const LowerOptions& options;
    std::string where;                       ///< "node 'name' (Op)" for diagnostics
};

/// A diagnostic list holding one error at ctx.where.
support::DiagnosticList lowerError(const LowerContext& ctx, std::string message);

/// Like lowerError, for a form of the op that Tessera deliberately does not generate code for
/// (training mode, string casts, MaxPool's Indices output ...): the diagnostic carries the note
/// kUnsupportedFormNote (lower.h) and the code support::DiagnosticCode::NoCodeGenerator, so
/// callers can fall back to the reference interpreter and the conformance run can list the case
/// as not claimed rather than failed.
support::DiagnosticList unsupportedForm(const LowerContext& ctx, std::string message);

/// Concrete shape of value v (every dim known), or nullopt.
std::optional<std::vector<std::int64_t>> concreteShape(const ir::Graph& g, ir::ValueId v);

/// Concrete shape of value v, or an error at ctx.where naming the value ("value 'x' has no
/// concrete shape ([batch,3])") or saying that a required input is missing (v == kNoValue).
support::Expected<std::vector<std::int64_t>> shapeOf(const LowerContext& ctx, ir::ValueId v);

/// Element type of value v (its type's dtype, else its constant data's); Undefined when unknown.
DType dtypeOf(const ir::Graph& g, ir::ValueId v);

/// Adds value v of the node as a Global parameter buffer (Input or Output role) to lk.kernel and
/// records it in lk.inputs / lk.outputs. Call for every input first, then every output, so that
/// params keep ABI order. Returns the buffer index. A value added as an input before (read by
/// several input slots) is not added again: its existing buffer index is returned.
int addInput(const LowerContext& ctx, LoweredKernel& lk, ir::ValueId v);
int addOutput(const LowerContext& ctx, LoweredKernel& lk, ir::ValueId v);

/// Starts a kernel: name (options.kernelName or the sanitised node name), sourceOps, opType.
LoweredKernel beginKernel(const LowerContext& ctx);

/// True when the node's schedule maps any level (grid, block, warp or thread): the templates'
/// own GPU forms (GEMM tiles, block reductions) then give way to the user's mapping.
bool hasUserMapping(const LowerContext& ctx);

/// Task mappings of a kernel: the grid (parallel workers) and optional block level, parsed from
/// the schedule (levels "grid", "block"; "warp"/"thread" are treated as inner block levels and
/// composed) or given by the template's default.
struct MappingPlan {
    schedule::TaskMapping grid;
    std::optional<schedule::TaskMapping> block;
    /// Where the loops run: Cpu -> grid workers are a Parallel loop, block workers a Serial one;
    /// Cuda -> a Blocks and a Threads loop (kernel_ir.h). resolveMappings sets it from the options.
    Target target = Target::Cpu;
    /// Set by tiledMapping: the trailing repeat factor is a register tile the template chose
    /// (kept, capped to kGpuMaxTileElements, when the default is turned into a GPU plan).
    bool tiled = false;
};

/// Threads per block of the default GPU plans.
inline constexpr std::int64_t kGpuDefaultBlockThreads = 256;
/// Largest per-thread tile (elements, and per dim 4) the default GPU plans keep from a CPU tile.
inline constexpr std::int64_t kGpuMaxTileElements = 16;
/// Threads the default GPU plans aim for at least (about 2 x 256 per SM of a 132-SM H200): a
/// per-thread tile is shrunk while the output has fewer tiles than this.
inline constexpr std::int64_t kGpuMinThreads = 65536;

/// The default GPU plan over `extents`, made from a template's CPU default `cpu`: the per-thread
/// tile is cpu's trailing repeat factor capped to 4 per dim and kGpuMaxTileElements in all when
/// cpu.tiled (then halved, largest dim first, while the output has fewer than kGpuMinThreads
/// tiles), else 1 element; the tile counts ceil(extents / tile) are split into a block of at
/// most kGpuDefaultBlockThreads threads, taken innermost dim first (so neighbouring threads work
/// on neighbouring elements: coalesced accesses), and a grid covering the rest:
/// grid = spatial(g...), block = spatial(b...) [* repeat(tile...)]. E.g. [1,32,112,112] ->
/// grid = spatial(1,32,56,1), block = spatial(1,1,2,112).
MappingPlan defaultGpuMapping(const std::vector<std::int64_t>& extents, const MappingPlan& cpu);

/// Parses ctx.schedule's mappings, or returns `fallback` when there is no schedule. Checks that
/// grid * block has the rank of `extents` and covers it (errors otherwise, naming the mapping).
/// On the CUDA target a fallback (the template's CPU default) becomes defaultGpuMapping(extents,
/// fallback); the result's `target` is the options' target either way.
support::Expected<MappingPlan> resolveMappings(const LowerContext& ctx, const std::vector<std::int64_t>& extents,
                                               const MappingPlan& fallback);

/// The usual default CPU mapping over an output index space `extents`: the outer dims are split
/// into roughly `workers * 4` parallel tasks (spatial), the rest are repeat loops, e.g. for
/// [1, 32, 112, 112] and 2 threads: spatial(1, 8, 1, 1) * repeat(1, 4, 112, 112).
MappingPlan defaultCpuMapping(const std::vector<std::int64_t>& extents, int workers);

/// Emits the loop nest of `plan` over `extents` (Hidet lowering: grid workers -> one Parallel
/// loop, block workers -> a Serial loop, each repeat factor -> loops in rank order with its
/// unroll attribute, task coordinate = outer * inner extent + inner), a predicate when the task
/// shape exceeds `extents`, and calls `body(task)` for the innermost statement with one i64
/// index expression per dimension. Records the mapping text in k.mappings.
Stmt emitMappedLoops(Kernel& k, const MappingPlan& plan, const std::vector<std::int64_t>& extents,
                     const std::function<Stmt(const std::vector<Expr>&)>& body);

/// A loop-kind request for one output dimension (a schedule's `vectorize c by 8`, `parallel r`).
struct LoopOverride {
    int dim = 0;
    ForKind kind = ForKind::Serial;
    std::int64_t factor = 0;
};

/// emitMappedLoops where the innermost repeat loop over dimension `o.dim` gets `o.kind` and
/// `o.factor` instead of its LoopAttr's, for each override. Dims of `overrides` without a repeat
/// loop (mapped to workers only, or extent 1) are appended to *unapplied (when not null).
Stmt emitMappedLoops(Kernel& k, const MappingPlan& plan, const std::vector<std::int64_t>& extents,
                     const std::function<Stmt(const std::vector<Expr>&)>& body,
                     const std::vector<LoopOverride>& overrides, std::vector<int>* unapplied = nullptr);

/// Row-major nested Serial loops over `extents` (for inner loops that no mapping decides, e.g. a
/// reduction); body gets one index per dimension. Extents of 1 produce no loop (index 0).
Stmt emitSerialLoops(Kernel& k, const std::vector<std::int64_t>& extents, const std::string& hint,
                     const std::function<Stmt(const std::vector<Expr>&)>& body);

/// Indices into an input of shape `inShape` broadcast (numpy rules) to the output index `outIdx`
/// of rank >= inShape.size(): leading dims dropped, size-1 dims read at 0.
std::vector<Expr> broadcastIndex(const std::vector<Expr>& outIdx, const std::vector<std::int64_t>& inShape);

/// Value of a compile-time constant input (Value::data) as int64s / doubles; nullopt if the input
/// is absent or not constant.
std::optional<std::vector<std::int64_t>> constInts(const ir::Graph& g, ir::ValueId v);
std::optional<std::vector<double>> constDoubles(const ir::Graph& g, ir::ValueId v);

}  // namespace tessera::lower::detail
