#pragma once
// Attention graphs for the tests of the attention fusion (tests/fusion, tests/lower,
// tests/pipeline, tests/gpu): the pattern torch.onnx.export (opset 17, TorchScript exporter)
// writes for nn.MultiheadAttention / scaled_dot_product_attention on Q, K, V [B, H, S, D]:
//   Q*c -> MatMul(., Transpose(K)*c) -> [Div by sqrt(d)] -> [mask] -> Softmax(-1) -> MatMul(., V)
//   -> [Transpose(0,2,1,3) -> Reshape [B, Sq, H*Dv]]
// with c = sqrt(1/sqrt(D)) (torch's "Mul by sqrt(scale) on both Q and K^T") or the older
// Div(scores, sqrt(D)). Masks: an additive padding mask built as Where(padded, -inf, 0) of a
// [B, 1, 1, Sk] bool tensor, an additive causal mask [Sq, Sk] (0 / -inf), or a masked_fill-style
// Where(causal, -inf, scores).

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/shape_inference.h"
#include "core/test_ir_helpers.h"

namespace tessera::attention_test {

enum class Mask { None, Padding, Causal, CausalWhere };
enum class Scale { SqrtBoth, DivScores };

struct AttnSpec {
    std::int64_t B = 2, H = 2, Sq = 5, Sk = 7, D = 8, Dv = 8;
    Mask mask = Mask::None;
    Scale scale = Scale::SqrtBoth;
    bool headMerge = false;    ///< Transpose(0,2,1,3) + Reshape [B, Sq, H*Dv] after the PV MatMul
    bool kBroadcast = false;   ///< K and V of shape [1, H, Sk, D]: broadcast over the batch
    /// Padding mask: keys j >= Sk - padded[b] of batch b are masked (b beyond the list: none);
    /// padded[b] = Sk masks every key of batch b (rows of NaN, as the unfused Softmax gives).
    std::vector<std::int64_t> padded{2, 0};
    bool padFront = false;     ///< pad the first keys instead: j < padded[b] masked
};

inline std::string dims(std::initializer_list<std::int64_t> d) {
    std::string s = "[";
    bool first = true;
    for (auto v : d) {
        s += (first ? "" : ",") + std::to_string(v);
        first = false;
    }
    return s + "]";
}

/// The names of the nodes buildAttention makes, in topological order.
struct AttnNames {
    std::vector<std::string> all;
    std::vector<std::string> prologue, epilogue;
};

inline ir::Graph buildAttention(const AttnSpec& s, AttnNames* names = nullptr) {
    ir::test::Builder b;
    AttnNames n;
    const std::int64_t kb = s.kBroadcast ? 1 : s.B;
    b.input("Q", "f32" + dims({s.B, s.H, s.Sq, s.D}));
    b.input("K", "f32" + dims({kb, s.H, s.Sk, s.D}));
    b.input("V", "f32" + dims({kb, s.H, s.Sk, s.Dv}));
    const float inf = std::numeric_limits<float>::infinity();
    std::string q = "Q", kt = "Kt";
    // Nodes are created in topological order (the planner lists members in that order).
    if (s.mask == Mask::Padding) {
        ir::TensorData pad;
        pad.dtype = ir::DType::Bool;
        pad.dims = {s.B, 1, 1, s.Sk};
        pad.bytes.assign(static_cast<std::size_t>(s.B * s.Sk), 0);
        for (std::int64_t bb = 0; bb < s.B; ++bb) {
            const std::int64_t p = bb < static_cast<std::int64_t>(s.padded.size()) ? s.padded[static_cast<std::size_t>(bb)] : 0;
            for (std::int64_t j = s.padFront ? 0 : s.Sk - p; j < (s.padFront ? p : s.Sk); ++j)
                pad.bytes[static_cast<std::size_t>(bb * s.Sk + j)] = 1;
        }
        b.init("padded", std::move(pad));
        b.init("ninf", ir::TensorData::fromFloats({-inf}, {}));
        b.init("zero", ir::TensorData::fromFloats({0.0f}, {}));
        b.node("Where", "Where_pad", {"padded", "ninf", "zero"}, {"padmask"});
        n.all.push_back("Where_pad");
        n.prologue.push_back("Where_pad");
    }
    const float c = std::sqrt(1.0f / std::sqrt(static_cast<float>(s.D)));
    if (s.scale == Scale::SqrtBoth) {
        b.init("c_q", ir::TensorData::fromFloats({c}, {}));
        b.node("Mul", "Mul_q", {"Q", "c_q"}, {"Qs"});
        n.all.push_back("Mul_q");
        n.prologue.push_back("Mul_q");
        q = "Qs";
    }
    b.node("Transpose", "Transpose_k", {"K"}, {"Kt"}, {{"perm", ir::Attribute::ofInts({0, 1, 3, 2})}});
    n.all.push_back("Transpose_k");
    n.prologue.push_back("Transpose_k");
    if (s.scale == Scale::SqrtBoth) {
        b.init("c_k", ir::TensorData::fromFloats({c}, {}));
        b.node("Mul", "Mul_k", {"Kt", "c_k"}, {"Kts"});
        n.all.push_back("Mul_k");
        n.prologue.push_back("Mul_k");
        kt = "Kts";
    }
    b.node("MatMul", "MatMul_qk", {q, kt}, {"S0"});
    n.all.push_back("MatMul_qk");
    std::string sc = "S0";
    if (s.scale == Scale::DivScores) {
        b.init("sqrt_d", ir::TensorData::fromFloats({std::sqrt(static_cast<float>(s.D))}, {}));
        b.node("Div", "Div_s", {sc, "sqrt_d"}, {"S1"});
        n.all.push_back("Div_s");
        sc = "S1";
    }
    if (s.mask == Mask::Padding) {
        b.node("Add", "Add_mask", {sc, "padmask"}, {"S2"});
        n.all.push_back("Add_mask");
        sc = "S2";
    } else if (s.mask == Mask::Causal || s.mask == Mask::CausalWhere) {
        const bool where = s.mask == Mask::CausalWhere;
        ir::TensorData m;
        m.dtype = where ? ir::DType::Bool : ir::DType::F32;
        m.dims = {s.Sq, s.Sk};
        m.bytes.assign(static_cast<std::size_t>(s.Sq * s.Sk) * (where ? 1 : 4), 0);
        for (std::int64_t i = 0; i < s.Sq; ++i)
            for (std::int64_t j = 0; j < s.Sk; ++j) {
                // Query i sees keys j <= i + (Sk - Sq) (the last query sees every key).
                const bool masked = j > i + (s.Sk - s.Sq);
                const auto at = static_cast<std::size_t>(i * s.Sk + j);
                if (where) {
                    m.bytes[at] = masked ? 1 : 0;
                } else {
                    const float v = masked ? -inf : 0.0f;
                    std::memcpy(m.bytes.data() + at * 4, &v, 4);
                }
            }
        b.init("causal", std::move(m));
        if (where) {
            b.init("ninf", ir::TensorData::fromFloats({-inf}, {}));
            b.node("Where", "Where_causal", {"causal", "ninf", sc}, {"S2"});
            n.all.push_back("Where_causal");
        } else {
            b.node("Add", "Add_mask", {sc, "causal"}, {"S2"});
            n.all.push_back("Add_mask");
        }
        sc = "S2";
    }
    b.node("Softmax", "Softmax", {sc}, {"P"}, {{"axis", ir::Attribute::ofInt(-1)}});
    b.node("MatMul", "MatMul_pv", {"P", "V"}, {"O"});
    n.all.push_back("Softmax");
    n.all.push_back("MatMul_pv");
    if (s.headMerge) {
        b.node("Transpose", "Transpose_o", {"O"}, {"Ot"}, {{"perm", ir::Attribute::ofInts({0, 2, 1, 3})}});
        b.init("merged", ir::TensorData::fromInts({s.B, s.Sq, s.H * s.Dv}, {3}));
        b.node("Reshape", "Reshape_o", {"Ot", "merged"}, {"Y"});
        n.all.push_back("Transpose_o");
        n.all.push_back("Reshape_o");
        n.epilogue = {"Transpose_o", "Reshape_o"};
        b.output("Y");
    } else {
        b.output("O");
    }
    auto si = ir::inferShapes(b.g, "attention");
    if (names) *names = std::move(n);
    return std::move(b.g);
}

}  // namespace tessera::attention_test
