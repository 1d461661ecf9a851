// The fused attention kernel (core/lower/common/lower_attention.cpp through lowerGroup): the hidet
// planner's attention group of the torch-export pattern (tests/lower/attention_test_graphs.h),
// lowered for the CPU and for CUDA, run with the kernel-IR interpreter on the reference
// interpreter's inputs and compared with the unfused graph in the reference interpreter: several
// shapes (odd sequence lengths, a single query, query tiles with a ragged end, key blocks with a
// ragged end, head dims 8 and 64, K/V broadcast over the batch), no mask, a padding mask, an
// additive causal mask, a masked_fill Where, rows masked everywhere (NaN, as the unfused Softmax
// gives), the head-merge epilogue. The CUDA module compiles with NVRTC (skipped without it).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/codegen/cuda/cuda_codegen.h"
#include "core/eval/compare.h"
#include "core/eval/reference_interpreter.h"
#include "core/lower/lower.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/schedule/planners.h"
#include "lower/attention_test_graphs.h"
#include "lower/nvrtc_sm90_util.h"
#include "lower/test_lower_basic_util.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::lower::test {
namespace {

namespace at = attention_test;
using at::AttnSpec;
using at::Mask;

struct Lowered {
    ir::Graph g;
    schedule::FusionGroup group;
    support::Expected<LoweredKernel> lk = support::DiagnosticList{};
};

Lowered lowerSpec(const AttnSpec& s, Target target) {
    Lowered r;
    r.g = at::buildAttention(s);
    const schedule::FusionPlan p = schedule::planHidet(r.g);
    for (const auto& gr : p.groups)
        if (gr.kind == schedule::FusionKind::Attention) r.group = gr;
    EXPECT_EQ(r.group.kind, schedule::FusionKind::Attention) << schedule::planToJson(p);
    LowerOptions lo;
    lo.target = target;
    lo.opset = 17;
    r.lk = lowerGroup(r.g, r.group, nullptr, lo);
    return r;
}

bool loadsBuffer(const Stmt& s, int buf) {
    std::function<bool(const Expr&)> inExpr = [&](const Expr& e) -> bool {
        if (!e) return false;
        if (e->kind == ExprKind::Load && e->buffer == buf) return true;
        for (const Expr& a : e->args)
            if (inExpr(a)) return true;
        return false;
    };
    std::function<bool(const Stmt&)> rec = [&](const Stmt& st) -> bool {
        if (!st) return false;
        if (inExpr(st->value) || inExpr(st->extent)) return true;
        for (const Expr& i : st->indices)
            if (inExpr(i)) return true;
        for (const Stmt& b : st->body)
            if (rec(b)) return true;
        return rec(st->elseBody);
    };
    return rec(s);
}

/// Lowers the spec's attention group for `target`, runs it in the kernel-IR interpreter and
/// compares with the reference interpreter's unfused graph. "" when it matches; *nanRows gets
/// the number of NaN outputs the reference has (masked-everywhere rows).
std::string check(const AttnSpec& s, Target target, std::int64_t* nanOutputs = nullptr) {
    Lowered l = lowerSpec(s, target);
    if (!l.lk) return "lowering: " + l.lk.diagnostics().formatAll();
    const LoweredKernel& lk = *l.lk;
    if (lk.outputs.size() != 1) return "expected one output";
    const int Y = lk.kernel.params.back();
    if (loadsBuffer(lk.kernel.body, Y)) return "the kernel loads its output";
    const auto inputs = makeInputs(l.g, 3);
    auto ref = eval::evaluateAll(l.g, inputs, {});
    if (!ref) return "reference: " + ref.diagnostics().formatAll();
    std::vector<ir::TensorData> storage;
    for (ir::ValueId v : lk.inputs) {
        if (const ir::TensorData* t = ref->value(v)) storage.push_back(*t);
        else if (l.g.value(v).data) storage.push_back(*l.g.value(v).data);
        else return "no data for " + l.g.value(v).name;
    }
    storage.emplace_back();
    std::vector<ir::TensorData*> params;
    for (auto& t : storage) params.push_back(&t);
    auto st = evalKernel(lk.kernel, params);
    if (!st) return "eval: " + st.diagnostics().formatAll();
    const ir::TensorData& want = *ref->value(lk.outputs[0]);
    if (nanOutputs) {
        *nanOutputs = 0;
        for (std::int64_t i = 0; i < want.numElements(); ++i) *nanOutputs += std::isnan(want.elementAsDouble(i));
    }
    // The kernel's output buffer may be a view of the graph tensor (a Reshape epilogue stores
    // through the anchor's indices): the same elements in the same order.
    if (storage.back().numElements() != want.numElements()) return "the output has the wrong element count";
    storage.back().dims = want.dims;
    auto cmp = eval::compareTensors(storage.back(), want, eval::CompareOptions{1e-4, 1e-5});
    return cmp.ok ? std::string() : cmp.summary();
}

std::string label(const AttnSpec& s) {
    const char* masks[] = {"none", "padding", "causal", "causal-where"};
    return "B" + std::to_string(s.B) + " H" + std::to_string(s.H) + " Sq" + std::to_string(s.Sq) + " Sk" +
           std::to_string(s.Sk) + " D" + std::to_string(s.D) + " Dv" + std::to_string(s.Dv) + " mask " +
           masks[static_cast<int>(s.mask)] + (s.scale == at::Scale::DivScores ? " div" : " sqrt-both") +
           (s.headMerge ? " merge" : "") + (s.kBroadcast ? " kv-broadcast" : "");
}

std::vector<AttnSpec> cases() {
    std::vector<AttnSpec> r;
    auto add = [&](std::int64_t B, std::int64_t H, std::int64_t Sq, std::int64_t Sk, std::int64_t D, std::int64_t Dv,
                   Mask m) {
        AttnSpec s;
        s.B = B, s.H = H, s.Sq = Sq, s.Sk = Sk, s.D = D, s.Dv = Dv, s.mask = m;
        r.push_back(s);
    };
    add(2, 2, 5, 7, 8, 8, Mask::None);
    add(2, 2, 5, 7, 8, 8, Mask::Padding);
    add(2, 3, 17, 17, 8, 8, Mask::Causal);       // odd, one ragged query tile on the CPU
    add(1, 2, 33, 33, 64, 64, Mask::CausalWhere);
    add(2, 1, 1, 130, 64, 64, Mask::Padding);    // one query, key blocks 64 + 64 + 2
    add(1, 1, 70, 9, 8, 16, Mask::None);         // Dv != D, > 64 queries: two CUDA tiles
    add(1, 2, 19, 67, 8, 8, Mask::Causal);       // ragged last key block (64 + 3)
    return r;
}

TEST(AttentionLower, CpuKernelMatchesTheUnfusedReference) {
    for (AttnSpec s : cases()) {
        SCOPED_TRACE(label(s));
        EXPECT_EQ(check(s, Target::Cpu), "");
        s.scale = at::Scale::DivScores;
        s.headMerge = true;
        SCOPED_TRACE(label(s));
        EXPECT_EQ(check(s, Target::Cpu), "");
    }
}

TEST(AttentionLower, CudaKernelIrMatchesTheUnfusedReference) {
    // The CUDA kernel's IR in the interpreter (Blocks and Threads loops run serially, barriers
    // are no-ops, per-thread buffers are full arrays): the same numbers as the GPU gives.
    for (AttnSpec s : cases()) {
        SCOPED_TRACE(label(s));
        EXPECT_EQ(check(s, Target::Cuda), "");
    }
    AttnSpec s;
    s.kBroadcast = true;
    s.headMerge = true;
    s.mask = Mask::Padding;
    SCOPED_TRACE(label(s));
    EXPECT_EQ(check(s, Target::Cuda), "");
}

TEST(AttentionLower, KAndVBroadcastOverTheBatch) {
    AttnSpec s;
    s.B = 3, s.H = 2, s.Sq = 6, s.Sk = 11, s.D = 8, s.Dv = 8;
    s.kBroadcast = true;
    s.mask = Mask::Causal;
    EXPECT_EQ(check(s, Target::Cpu), "");
    EXPECT_EQ(check(s, Target::Cuda), "");
}

TEST(AttentionLower, RowsMaskedEverywhereGiveNaNLikeTheUnfusedSoftmax) {
    // Batch 0: every key padded -> its rows are NaN in the reference (Softmax of all -inf);
    // batch 1: keys 4.. padded, so its first key block is partly masked, never NaN.
    AttnSpec s;
    s.B = 2, s.H = 2, s.Sq = 5, s.Sk = 7;
    s.mask = Mask::Padding;
    s.padded = {7, 3};
    std::int64_t nan = 0;
    EXPECT_EQ(check(s, Target::Cpu, &nan), "");
    EXPECT_EQ(nan, 1 * 2 * 5 * 8);  // batch 0: H x Sq x Dv outputs
    EXPECT_EQ(check(s, Target::Cuda, &nan), "");
    // A causal mask with more queries than keys: the first Sq - Sk queries see no key.
    s = AttnSpec{};
    s.Sq = 9, s.Sk = 4;
    s.mask = Mask::Causal;
    EXPECT_EQ(check(s, Target::Cpu, &nan), "");
    EXPECT_EQ(nan, 2 * 2 * 5 * 8);
    EXPECT_EQ(check(s, Target::Cuda, &nan), "");
    // A masked prefix: keys 0..69 masked (the whole first key block of 64 and more), the rest
    // visible: exp(-inf - (-inf)) must not poison the running sums.
    s = AttnSpec{};
    s.B = 1, s.H = 1, s.Sq = 3, s.Sk = 80, s.D = 8, s.Dv = 8;
    s.mask = Mask::Padding;
    s.padded = {70};
    s.padFront = true;
    EXPECT_EQ(check(s, Target::Cpu, &nan), "");
    EXPECT_EQ(nan, 0);
    EXPECT_EQ(check(s, Target::Cuda, &nan), "");
}

TEST(AttentionLower, KernelShapeAndNotes) {
    AttnSpec s;
    s.B = 2, s.H = 4, s.Sq = 100, s.Sk = 100, s.D = 64, s.Dv = 64;
    s.mask = Mask::Causal;
    s.headMerge = true;
    Lowered cpu = lowerSpec(s, Target::Cpu);
    ASSERT_TRUE(cpu.lk.ok()) << cpu.lk.diagnostics().formatAll();
    const Kernel& k = cpu.lk->kernel;
    EXPECT_EQ(k.name, "MatMul_qk_fused");
    EXPECT_EQ(k.opType, "MatMul");
    EXPECT_EQ(k.sourceOps, cpu.group.ops);
    // grid over batch, heads and tiles of 16 queries.
    EXPECT_EQ(k.mappings, (std::vector<std::string>{"grid = spatial(2,4,7)"}));
    // Q, K, V and the causal mask in; the merged [2, 100, 256] output out.
    ASSERT_EQ(cpu.lk->inputs.size(), 6u);  // Q, c_q, K, c_k, causal, V
    ASSERT_EQ(cpu.lk->outputs.size(), 1u);
    EXPECT_EQ(cpu.g.value(cpu.lk->outputs[0]).name, "Y");
    bool noted = false;
    for (const auto& n : k.notes) noted = noted || n.find("online softmax") != std::string::npos;
    EXPECT_TRUE(noted);

    Lowered gpu = lowerSpec(s, Target::Cuda);
    ASSERT_TRUE(gpu.lk.ok()) << gpu.lk.diagnostics().formatAll();
    auto mod = codegen::generateCuda({&gpu.lk->kernel});
    ASSERT_TRUE(mod.ok()) << mod.diagnostics().formatAll();
    ASSERT_EQ(mod->launches.size(), 1u);
    EXPECT_EQ(mod->launches[0].blockX, 64);
    EXPECT_EQ(mod->launches[0].gridX, 2 * 4 * 2);
    EXPECT_EQ(mod->launches[0].sharedBytes, 2 * 64 * 64 * 4);  // Ks and Vs: 64 keys x 64 dims each
    EXPECT_NE(mod->source.source.find("__shared__"), std::string::npos);
}

TEST(AttentionLower, CudaModuleCompilesWithNvrtc) {
    auto info = runtime::cuda::nvrtcInfo();
    if (!info.ok()) GTEST_SKIP() << "NVRTC is not loadable: " << info.diagnostics().formatAll();
    std::vector<AttnSpec> specs = cases();
    specs[0].headMerge = true;
    specs[1].scale = at::Scale::DivScores;
    std::vector<Lowered> lowered;
    lowered.reserve(specs.size());
    std::vector<const Kernel*> kernels;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        lowered.push_back(lowerSpec(specs[i], Target::Cuda));
        ASSERT_TRUE(lowered.back().lk.ok()) << lowered.back().lk.diagnostics().formatAll();
        lowered.back().lk->kernel.name = "attention_" + std::to_string(i);
    }
    for (const auto& l : lowered) kernels.push_back(&l.lk->kernel);
    auto mod = codegen::generateCuda(kernels);
    ASSERT_TRUE(mod.ok()) << mod.diagnostics().formatAll();
    const NvrtcSm90 b = compileForSm90(mod->source.source, "attention");
    ASSERT_TRUE(b.ok) << b.error << "\n" << mod->source.source;
    EXPECT_NE(b.ptx.find(".entry"), std::string::npos);
    EXPECT_NE(b.ptx.find("bar.sync"), std::string::npos);
}

}  // namespace
}  // namespace tessera::lower::test
