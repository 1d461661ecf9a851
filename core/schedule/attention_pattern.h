#pragma once
/// @file
/// The attention pattern: the core of scaled dot-product attention as exporters write it, which
/// the hidet planner turns into one `attention` fusion group (fusion_plan.h) and the lowering
/// into one FlashAttention-style kernel (core/lower/common/lower_attention.cpp).
///
/// Semantics (ONNX MatMul, Softmax-13 and elementwise specs; Dao et al., "FlashAttention", NeurIPS
/// 2022, Algorithm 1; torch.onnx.export opset 17 of nn.MultiheadAttention and
/// scaled_dot_product_attention)
///   S0 = MatMul(Q, Kt)          Q [..., Sq, D], Kt [..., D, Sk] (numpy-broadcast batch dims)
///   S  = e_n(... e_1(S0))       0..8 elementwise ops, each reading the running score tensor once
///                               at its full shape (its output has S0's shape): Mul/Div by a
///                               scale, Add of a mask (additive -inf masks, ALiBi biases),
///                               Where(mask, -inf, s) ...; their other inputs come from outside
///   P  = Softmax(S, axis = last dim)
///   O  = MatMul(P, V)           V [..., Sk, Dv]; O [..., Sq, Dv]
/// The ops that prepare Q, Kt and V (Mul by sqrt(scale) on Q and on K^T, the Transpose that makes
/// K^T, Reshape/Transpose head splits) are not part of the core: the planner adds them as
/// prologues of the group (inlined into the kernel's loads), and the ops after O (the head merge
/// Transpose/Reshape) as epilogues, by Hidet's rules.
/// Every intermediate (S0, each S, P) has exactly one use and is not a graph output. An absent
/// Softmax `axis` is taken as opset >= 13's default (-1); the lowering refuses opset < 13 graphs
/// where that differs.
///
/// Thread rules: pure functions; the graph is only read.

#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace tessera::schedule {

/// At most this many elementwise ops between the QK^T MatMul and the Softmax.
inline constexpr std::size_t kMaxAttentionScoreOps = 8;

/// A matched attention core (node ids of the graph it was matched in).
struct AttentionPattern {
    ir::NodeId qk = ir::kNoNode;          ///< MatMul(Q, Kt): the group's anchor
    std::vector<ir::NodeId> scoreOps;     ///< elementwise ops on the scores, in order
    ir::NodeId softmax = ir::kNoNode;
    ir::NodeId pv = ir::kNoNode;          ///< MatMul(P, V)

    bool ok() const { return pv != ir::kNoNode; }
    /// qk, scoreOps..., softmax, pv (topological order).
    std::vector<ir::NodeId> core() const;
};

/// Matches the attention core whose first MatMul is `qk` (see the file comment). Returns a
/// pattern with ok() false when it does not match, and then sets *whyNot (when given) to why,
/// e.g. "MatMul_3's output 'S' has 2 uses", "Softmax_7 is not over the last axis".
AttentionPattern matchAttention(const ir::Graph& g, ir::NodeId qk, std::string* whyNot = nullptr);

}  // namespace tessera::schedule
