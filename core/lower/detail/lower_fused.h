#pragma once
/// @file
/// Internal interfaces of fused lowering (issue 6; not a public API: see lower.h lowerGroup).
///
/// - elementwiseExpr: the scalar body of an elementwise node (what lowerPointwise stores), so a
///   fused kernel can inline it: prologues into loads, epilogues into stores, the elementwise ops
///   between two fused convolutions into the intermediate tile. Implemented next to the
///   elementwise templates (lower_elementwise.cpp / lower_fuse_rewrite.cpp).
/// - lowerAttention: the fused attention kernel of an `attention` group's core
///   (lower_attention.cpp).
/// - lowerConvChain: the fused convolution-chain kernels (lower_fused_conv_common.cpp: the
///   checks and the dispatch; cuda/lower_fused_conv.cpp: lowerConvChainCuda;
///   cpu/lower_fused_conv_cpu.cpp: lowerConvChainCpu).
///
/// Thread rules: as lower.h (pure).

#include <vector>

#include "core/lower/detail/lower_util.h"
#include "core/schedule/attention_pattern.h"
#include "core/schedule/fusion_plan.h"

namespace tessera::lower::detail {

/// True when `node` is an elementwise op elementwiseExpr can inline (unary math/activations,
/// broadcasting binary/variadic, comparisons/logic, Where, Clip with constant or absent bounds,
/// Cast, Identity, Dropout in inference form).
bool isInlinableElementwise(const ir::Graph& g, ir::NodeId node);

/// The value of output 0 of elementwise node `ctx.node`, given `inputs[i]` = the value of input
/// slot i already loaded (native dtype of that input; a null Expr for an absent optional input,
/// and compile-time constant inputs such as Clip's bounds may be null: they are read from the
/// graph). The result has the output's dtype. Errors at ctx.where when the node is not
/// inlinable.
support::Expected<Expr> elementwiseExpr(const LowerContext& ctx, const std::vector<Expr>& inputs);

/// The rewrite half of lowerGroup (lower_group.cpp): inlines `prologue` ops (elementwise or index
/// maps, their output an input of `base`, nearest the anchor found first) into the loads of
/// `base` and `epilogue` ops (elementwise reading one output of the kernel at its full shape, or
/// index maps reading it as their data input; in topological order) into its Global stores; `members` are the group's nodes (to tell uses inside the
/// group from uses outside). Params become: inputs (a prologue's inputs take its output's place,
/// an epilogue's other inputs are appended), then outputs (an epilogue's output takes the place
/// of the value it reads, which stays as an output only when used outside the group); buffers that
/// stop being params are removed. Errors at `where` naming the member: not inlinable, a kernel that
/// loads the output an epilogue reads (accumulates in place), an epilogue that broadcasts it up.
support::Expected<LoweredKernel> fuseIntoKernel(const ir::Graph& g, LoweredKernel base,
                                                const std::vector<ir::NodeId>& members,
                                                const std::vector<ir::NodeId>& prologue,
                                                const std::vector<ir::NodeId>& epilogue, const LowerOptions& options,
                                                const std::string& where);

/// A convolution chain to fuse: `first` -> elementwise `between` ops (in order; each reads the
/// previous value as its only non-constant tensor input, e.g. ReLU6 = Clip(x, 0, 6)) -> `second`.
struct ConvChainSpec {
    ir::NodeId first = ir::kNoNode;
    std::vector<ir::NodeId> between;
    ir::NodeId second = ir::kNoNode;
    schedule::FusionKind kind = schedule::FusionKind::DwPw;
    schedule::FusionTile tile;  ///< output tile of `second` chosen by the planner; empty = template default
};

/// One kernel computing `second`'s output from `first`'s inputs without writing the intermediate
/// to global memory. Params: first's data input, first's weights (and bias), second's weights
/// (and bias), then second's output. Every output element is stored exactly once and the kernel
/// never loads its output (so lowerGroup's epilogue rewrite applies to it). CUDA: the
/// intermediate tile lives in Shared memory; CPU: in a Local cache-sized tile per worker.
/// Errors (where = "group ...") when a conv is not the kind `kind` says, shapes are not concrete,
/// or a `between` op is not inlinable.
support::Expected<LoweredKernel> lowerConvChain(const ir::Graph& g, const ConvChainSpec& chain,
                                                const LowerOptions& options, const std::string& where);

/// One kernel computing an attention core (core/schedule/attention_pattern.h: MatMul(Q, K^T) ->
/// elementwise score ops -> Softmax(last axis) -> MatMul(P, V)) with an online softmax
/// (FlashAttention, Dao et al. 2022, Algorithm 1): per (batch..., tile of query rows) the keys
/// are visited in blocks staged on chip (shared memory on CUDA, one thread per query row; a Local
/// tile on the CPU), keeping a running max, sum and output row per query. Params: Q, K^T, the
/// score ops' other inputs (in op and slot order), V, then the PV MatMul's output, each as the
/// whole graph tensor (so lowerGroup's prologue/epilogue rewrite applies); the output is stored
/// once per element and never loaded. A query row whose scores are all -inf gives NaN, as the
/// unfused Softmax does. Errors (at `where`): shapes not concrete or not chaining, non-float
/// tensors, a score op that cannot be inlined, an opset < 13 Softmax over more than the last
/// axis, head dims too large for shared memory (CUDA).
support::Expected<LoweredKernel> lowerAttention(const ir::Graph& g, const schedule::AttentionPattern& pattern,
                                                const LowerOptions& options, const std::string& where);

struct ConvChainInfo;  // lower_fused_conv_common.h: the validated chain (convs, between ops, shapes)

/// The CPU kernel of lowerConvChain (lower_fused_conv_cpu.cpp) for a chain that
/// validateConvChain (lower_fused_conv_common.h) accepted as `info`: a Parallel loop over workers
/// (image, output tile, output-channel chunk), the intermediate in Local tiles. Same params,
/// store rules and errors as lowerConvChain.
support::Expected<LoweredKernel> lowerConvChainCpu(const ir::Graph& g, const ConvChainSpec& chain,
                                                   const ConvChainInfo& info, const LowerOptions& options,
                                                   const std::string& where);

/// The CUDA kernel of lowerConvChain (cuda/lower_fused_conv.cpp) for a chain that
/// validateConvChain accepted as `info`: the GEMM form of a dw-pw chain where useDwPwGemm
/// (lower_fused_conv_gpu.h) says so, else the tile kernel (one block per image, output tile and
/// channel chunk; the intermediate in Shared memory). Same params, store rules and errors as
/// lowerConvChain, and an error when the tile does not fit one CUDA block.
support::Expected<LoweredKernel> lowerConvChainCuda(const ir::Graph& g, const ConvChainSpec& chain,
                                                    const ConvChainInfo& info, const LowerOptions& options,
                                                    const std::string& where);

}  // namespace tessera::lower::detail
