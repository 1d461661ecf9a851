// lowerGroup (core/lower/common/lower_group.cpp): Hidet's post-scheduling fusion on the kernel IR. Each
// fused kernel is run with the kernel-IR interpreter (lowered for the CPU and for CUDA) and its
// outputs compared with the reference interpreter's run of the original graph; the tests also
// check the exact params (names, ABI order), sourceOps, the refusals, and that the generated C++
// (host compiler) and CUDA (NVRTC, when loadable) of a fused kernel compile.

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <filesystem>
#include <string>
#include <vector>

#include "core/codegen/cpp/cpp_codegen.h"
#include "core/codegen/cuda/cuda_codegen.h"
#include "core/eval/compare.h"
#include "core/eval/reference_interpreter.h"
#include "core/ir/shape_inference.h"
#include "core/lower/detail/lower_fused.h"
#include "core/lower/lower.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/test_ir_helpers.h"
#include "lower/test_lower_basic_util.h"
#include "tests/codegen/compile_util.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::lower::test {
namespace {

using ir::Attribute;
using ir::test::Builder;
using schedule::FusionGroup;
using schedule::FusionKind;

ir::TensorData ramp(std::vector<std::int64_t> dims, float scale = 0.125f) {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 9) - 4) * scale;
    return ir::TensorData::fromFloats(v, std::move(dims));
}

ir::test::Attrs convAttrs(std::int64_t pad, std::int64_t group = 1) {
    return {{"pads", Attribute::ofInts({pad, pad, pad, pad})},
            {"strides", Attribute::ofInts({1, 1})},
            {"group", Attribute::ofInt(group)}};
}

void infer(ir::Graph& g) { ASSERT_FALSE(ir::inferShapes(g, "test").diagnostics.hasErrors()); }

FusionGroup group(FusionKind kind, std::vector<std::string> ops, std::string anchor, std::vector<std::string> prologue,
                  std::vector<std::string> epilogue) {
    FusionGroup gr;
    gr.name = "g0";
    gr.kind = kind;
    gr.ops = std::move(ops);
    gr.anchor = std::move(anchor);
    gr.prologue = std::move(prologue);
    gr.epilogue = std::move(epilogue);
    return gr;
}

std::vector<std::string> paramNames(const Kernel& k) {
    std::vector<std::string> r;
    for (int p : k.params) r.push_back(k.buffers[static_cast<std::size_t>(p)].name);
    return r;
}

std::vector<std::string> valueNames(const ir::Graph& g, const std::vector<ir::ValueId>& vs) {
    std::vector<std::string> r;
    for (ir::ValueId v : vs) r.push_back(g.value(v).name);
    return r;
}

const char* targetName(Target t) { return t == Target::Cpu ? "cpu" : "cuda"; }

/// Runs `lk` with the interpreter on the reference's values of its inputs and compares every
/// output with the reference run of the whole graph. "" when all match.
std::string runAgainstReference(const ir::Graph& g, const LoweredKernel& lk, std::uint32_t seed = 3) {
    const auto inputs = makeInputs(g, seed);
    auto ref = eval::evaluateAll(g, inputs);
    if (!ref) return "reference: " + ref.diagnostics().firstError()->format();
    std::vector<ir::TensorData> storage;
    for (ir::ValueId v : lk.inputs) {
        if (g.value(v).data) storage.push_back(*g.value(v).data);
        else if (const ir::TensorData* t = ref->value(v)) storage.push_back(*t);
        else return "no value for input '" + g.value(v).name + "'";
    }
    for (std::size_t o = 0; o < lk.outputs.size(); ++o) storage.emplace_back();
    std::vector<ir::TensorData*> params;
    for (auto& t : storage) params.push_back(&t);
    auto st = evalKernel(lk.kernel, params);
    if (!st) return "eval: " + st.diagnostics().firstError()->format();
    std::string problems;
    for (std::size_t o = 0; o < lk.outputs.size(); ++o) {
        const ir::TensorData* want = ref->value(lk.outputs[o]);
        if (!want) return "no reference value for output " + g.value(lk.outputs[o]).name;
        ir::TensorData got = storage[lk.inputs.size() + o];
        got.dims = want->dims;
        auto cmp = eval::compareTensors(got, *want);
        if (!cmp.ok) problems += g.value(lk.outputs[o]).name + ": " + cmp.summary() + "\n";
    }
    return problems;
}

/// What every successful fusion test checks, for one target: the group lowers, the kernel matches
/// the reference, its params (names in ABI order) and sourceOps are exactly as expected, and no
/// buffer of a value internal to the group remains.
void expectFused(const ir::Graph& g, const FusionGroup& gr, Target target, const std::vector<std::string>& params,
                 LoweredKernel* out = nullptr) {
    SCOPED_TRACE(targetName(target));
    LowerOptions o;
    o.target = target;
    auto lk = lowerGroup(g, gr, nullptr, o);
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    EXPECT_EQ(paramNames(lk->kernel), params) << printKernel(lk->kernel);
    std::vector<std::string> ioNames = valueNames(g, lk->inputs);
    for (const auto& n : valueNames(g, lk->outputs)) ioNames.push_back(n);
    EXPECT_EQ(ioNames, params);
    EXPECT_EQ(lk->kernel.sourceOps, gr.ops);
    EXPECT_EQ(lk->kernel.opType, g.node(g.findNode(gr.anchor)).opType);
    // Buffers: params plus Shared/Local temporaries only.
    for (std::size_t b = 0; b < lk->kernel.buffers.size(); ++b) {
        const bool isParam =
            std::find(lk->kernel.params.begin(), lk->kernel.params.end(), static_cast<int>(b)) != lk->kernel.params.end();
        if (!isParam) {
            EXPECT_NE(lk->kernel.buffers[b].scope, MemoryScope::Global) << lk->kernel.buffers[b].name;
        }
    }
    ASSERT_FALSE(lk->kernel.notes.empty());
    EXPECT_EQ(lk->kernel.notes[0].rfind("fused (", 0), 0u) << lk->kernel.notes[0];
    EXPECT_EQ(runAgainstReference(g, *lk), "") << printKernel(lk->kernel);
    if (std::getenv("TESSERA_GROUP_DUMP")) std::cout << printKernel(lk->kernel) << "\n";  // for reading by hand
    if (out) *out = std::move(*lk);
}

/// The error of lowering `gr` for `target` ("" when it lowered).
std::string refusal(const ir::Graph& g, const FusionGroup& gr, Target target) {
    LowerOptions o;
    o.target = target;
    auto lk = lowerGroup(g, gr, nullptr, o);
    if (lk.ok()) return "";
    return lk.diagnostics().firstError()->format();
}

constexpr Target kTargets[] = {Target::Cpu, Target::Cuda};

// ---- graphs ----

/// x f32[1,4,10,10] -> Conv_0 (w [8,4,3,3], pad 1) -> c -> Relu_1 -> y.
ir::Graph convRelu() {
    Builder b;
    b.input("x", "f32[1,4,10,10]");
    b.init("w", ramp({8, 4, 3, 3}));
    b.node("Conv", "Conv_0", {"x", "w"}, {"c"}, convAttrs(1));
    b.node("Relu", "Relu_1", {"c"}, {"y"});
    b.output("y");
    infer(b.g);
    return b.g;
}

/// x f32[1,3,9,9] -> Conv_0 (w [6,3,3,3], pad 1) -> c -> Add_1 (+ bias [6,1,1]) -> s ->
/// Clip_2 (constant bounds -0.5, 0.75) -> y.
ir::Graph convBiasClip() {
    Builder b;
    b.input("x", "f32[1,3,9,9]");
    b.init("w", ramp({6, 3, 3, 3}));
    b.init("bias", ramp({6, 1, 1}, 0.25f));
    b.init("lo", ir::TensorData::fromFloats({-0.5f}, {}));
    b.init("hi", ir::TensorData::fromFloats({0.75f}, {}));
    b.node("Conv", "Conv_0", {"x", "w"}, {"c"}, convAttrs(1));
    b.node("Add", "Add_1", {"c", "bias"}, {"s"});
    b.node("Clip", "Clip_2", {"s", "lo", "hi"}, {"y"});
    b.output("y");
    infer(b.g);
    return b.g;
}

/// a f32[M,K] x w [K,N] -> MatMul_0 -> m -> Add_1 (+ residual r f32[M,N], graph input) -> s -> Relu_2 -> y.
ir::Graph matmulResidualRelu(std::int64_t m, std::int64_t k, std::int64_t n) {
    Builder b;
    b.input("a", "f32[" + std::to_string(m) + "," + std::to_string(k) + "]");
    b.init("w", ramp({k, n}, 0.0625f));
    b.input("r", "f32[" + std::to_string(m) + "," + std::to_string(n) + "]");
    b.node("MatMul", "MatMul_0", {"a", "w"}, {"m"});
    b.node("Add", "Add_1", {"m", "r"}, {"s"});
    b.node("Relu", "Relu_2", {"s"}, {"y"});
    b.output("y");
    infer(b.g);
    return b.g;
}

/// x f32[M,K] -> Relu_0 -> xr -> MatMul_1 (w [K,N]) -> y.
ir::Graph reluMatmul(std::int64_t m, std::int64_t k, std::int64_t n) {
    Builder b;
    b.input("x", "f32[" + std::to_string(m) + "," + std::to_string(k) + "]");
    b.init("w", ramp({k, n}, 0.0625f));
    b.node("Relu", "Relu_0", {"x"}, {"xr"});
    b.node("MatMul", "MatMul_1", {"xr", "w"}, {"y"});
    b.output("y");
    infer(b.g);
    return b.g;
}

/// x f32[1,3,8,8] -> Mul_0 (* s [3,1,1]) -> xm -> Add_1 (+ t [3,1,1]) -> xa -> Conv_2 (w [4,3,3,3],
/// pad 1) -> y. Padding reads 0 of xa (not Add(Mul(0))): the prologue is inlined under the guard.
ir::Graph mulAddConv() {
    Builder b;
    b.input("x", "f32[1,3,8,8]");
    b.init("s", ramp({3, 1, 1}, 0.5f));
    b.init("t", ramp({3, 1, 1}, 0.75f));
    b.init("w", ramp({4, 3, 3, 3}));
    b.node("Mul", "Mul_0", {"x", "s"}, {"xm"});
    b.node("Add", "Add_1", {"xm", "t"}, {"xa"});
    b.node("Conv", "Conv_2", {"xa", "w"}, {"y"}, convAttrs(1));
    b.output("y");
    infer(b.g);
    return b.g;
}

/// a f32[6,20] -> ReduceSum_0 over axis 1 (keepdims 0) -> r [6] -> Exp_1 -> y.
ir::Graph reduceExp() {
    Builder b;
    b.input("a", "f32[6,20]");
    b.init("axes", ir::TensorData::fromInts({1}, {1}));
    b.node("ReduceSum", "ReduceSum_0", {"a", "axes"}, {"r"}, {{"keepdims", Attribute::ofInt(0)}});
    b.node("Exp", "Exp_1", {"r"}, {"y"});
    b.output("y");
    infer(b.g);
    return b.g;
}

// ---- elementwiseExpr / isInlinableElementwise ----

TEST(LowerGroup, InlinableElementwise) {
    ir::Graph g = convBiasClip();
    EXPECT_FALSE(detail::isInlinableElementwise(g, g.findNode("Conv_0")));
    EXPECT_TRUE(detail::isInlinableElementwise(g, g.findNode("Add_1")));
    EXPECT_TRUE(detail::isInlinableElementwise(g, g.findNode("Clip_2")));
    EXPECT_FALSE(detail::isInlinableElementwise(g, ir::kNoNode));
    // Clip with constant bounds needs only its data input; the result is the clamped value in f32.
    const ir::NodeId clip = g.findNode("Clip_2");
    LowerOptions o;
    Kernel k;
    const Var v = k.newVar("v", DType::F32);
    const detail::LowerContext ctx{g, clip, g.node(clip), nullptr, o, "node 'Clip_2' (Clip)"};
    auto e = detail::elementwiseExpr(ctx, {varRef(v), Expr(), Expr()});
    ASSERT_TRUE(e.ok()) << e.diagnostics().formatAll();
    EXPECT_EQ(e->dtype(), DType::F32);
    EXPECT_EQ(printExpr(k, *e), "min(max(v_0, -0.5f), 0.75f)");
    // A missing operand is an error, not a crash.
    const ir::NodeId add = g.findNode("Add_1");
    const detail::LowerContext actx{g, add, g.node(add), nullptr, o, "node 'Add_1' (Add)"};
    EXPECT_FALSE(detail::elementwiseExpr(actx, {varRef(v), Expr()}).ok());
    EXPECT_FALSE(detail::elementwiseExpr(
                     detail::LowerContext{g, g.findNode("Conv_0"), g.node(g.findNode("Conv_0")), nullptr, o, "conv"},
                     {varRef(v), varRef(v)})
                     .ok());
}

// ---- epilogues ----

TEST(LowerGroup, SingleIsLowerNode) {
    ir::Graph g = convRelu();
    FusionGroup gr = group(FusionKind::Single, {"Relu_1"}, "Relu_1", {}, {});
    auto lk = lowerGroup(g, gr, nullptr);
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    auto ref = lowerNode(g, g.findNode("Relu_1"), nullptr);
    ASSERT_TRUE(ref.ok());
    EXPECT_EQ(printKernel(lk->kernel), printKernel(ref->kernel));
}

TEST(LowerGroup, ConvRelu) {
    ir::Graph g = convRelu();
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"Conv_0", "Relu_1"}, "Conv_0", {}, {"Relu_1"});
    for (Target t : kTargets) {
        LoweredKernel lk;
        expectFused(g, gr, t, {"x", "w", "y"}, &lk);
        EXPECT_EQ(lk.kernel.name, "Conv_0_fused");
        EXPECT_EQ(lk.kernel.notes[0], "fused (prologue-epilogue): anchor Conv_0; epilogue Relu_1");
    }
}

TEST(LowerGroup, ConvBiasClip) {
    ir::Graph g = convBiasClip();
    FusionGroup gr =
        group(FusionKind::PrologueEpilogue, {"Conv_0", "Add_1", "Clip_2"}, "Conv_0", {}, {"Add_1", "Clip_2"});
    // Clip's constant bounds are folded, not params.
    for (Target t : kTargets) expectFused(g, gr, t, {"x", "w", "bias", "y"});
}

TEST(LowerGroup, MatMulResidualReluSmall) {
    ir::Graph g = matmulResidualRelu(5, 7, 9);
    FusionGroup gr =
        group(FusionKind::PrologueEpilogue, {"MatMul_0", "Add_1", "Relu_2"}, "MatMul_0", {}, {"Add_1", "Relu_2"});
    for (Target t : kTargets) expectFused(g, gr, t, {"a", "w", "r", "y"});
}

TEST(LowerGroup, MatMulResidualReluThroughTheSharedMemoryGemm) {
    // 130 x 72: the CUDA GEMM template (M, N >= 64) with edge tiles, staged through Shared tiles.
    ir::Graph g = matmulResidualRelu(130, 24, 72);
    FusionGroup gr =
        group(FusionKind::PrologueEpilogue, {"MatMul_0", "Add_1", "Relu_2"}, "MatMul_0", {}, {"Add_1", "Relu_2"});
    LoweredKernel lk;
    expectFused(g, gr, Target::Cuda, {"a", "w", "r", "y"}, &lk);
    bool gemm = false, shared = false;
    for (const auto& n : lk.kernel.notes) gemm = gemm || n.rfind("A/B tiles staged in shared memory", 0) == 0;
    for (const auto& b : lk.kernel.buffers) shared = shared || b.scope == MemoryScope::Shared;
    EXPECT_TRUE(gemm) << printKernel(lk.kernel);
    EXPECT_TRUE(shared);
    expectFused(g, gr, Target::Cpu, {"a", "w", "r", "y"});
}

TEST(LowerGroup, EpilogueAfterAReduction) {
    ir::Graph g = reduceExp();
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"ReduceSum_0", "Exp_1"}, "ReduceSum_0", {}, {"Exp_1"});
    for (Target t : kTargets) expectFused(g, gr, t, {"a", "y"});
}

TEST(LowerGroup, IntermediateUsedOutsideTheGroupStaysAnOutput) {
    // c is also read by Sigmoid_2 outside the group: the kernel stores both c and y.
    Builder b;
    b.input("x", "f32[1,4,6,6]");
    b.init("w", ramp({5, 4, 3, 3}));
    b.node("Conv", "Conv_0", {"x", "w"}, {"c"}, convAttrs(1));
    b.node("Relu", "Relu_1", {"c"}, {"y"});
    b.node("Sigmoid", "Sigmoid_2", {"c"}, {"z"});
    b.output("y");
    b.output("z");
    infer(b.g);
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"Conv_0", "Relu_1"}, "Conv_0", {}, {"Relu_1"});
    for (Target t : kTargets) expectFused(b.g, gr, t, {"x", "w", "c", "y"});
}

// ---- prologues ----

TEST(LowerGroup, PrologueReluMatMul) {
    ir::Graph g = reluMatmul(6, 10, 7);
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"Relu_0", "MatMul_1"}, "MatMul_1", {"Relu_0"}, {});
    for (Target t : kTargets) {
        LoweredKernel lk;
        expectFused(g, gr, t, {"x", "w", "y"}, &lk);
        EXPECT_EQ(lk.kernel.notes[0], "fused (prologue-epilogue): anchor MatMul_1; prologue Relu_0");
    }
}

TEST(LowerGroup, PrologueReluMatMulThroughTheSharedMemoryGemm) {
    ir::Graph g = reluMatmul(64, 16, 96);
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"Relu_0", "MatMul_1"}, "MatMul_1", {"Relu_0"}, {});
    for (Target t : kTargets) expectFused(g, gr, t, {"x", "w", "y"});
}

TEST(LowerGroup, PrologueChainMulAddConv) {
    ir::Graph g = mulAddConv();
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"Mul_0", "Add_1", "Conv_2"}, "Conv_2",
                           {"Mul_0", "Add_1"}, {});
    // P's inputs take the place of its output among the params: x, s (Mul), t (Add), then w.
    for (Target t : kTargets) expectFused(g, gr, t, {"x", "s", "t", "w", "y"});
}

TEST(LowerGroup, PrologueAndEpilogueTogether) {
    Builder b;
    b.input("x", "f32[1,3,8,8]");
    b.init("w", ramp({4, 3, 3, 3}));
    b.node("Relu", "Relu_0", {"x"}, {"xr"});
    b.node("Conv", "Conv_1", {"xr", "w"}, {"c"}, convAttrs(1));
    b.node("Sigmoid", "Sigmoid_2", {"c"}, {"y"});
    b.output("y");
    infer(b.g);
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"Relu_0", "Conv_1", "Sigmoid_2"}, "Conv_1", {"Relu_0"},
                           {"Sigmoid_2"});
    for (Target t : kTargets) {
        LoweredKernel lk;
        expectFused(b.g, gr, t, {"x", "w", "y"}, &lk);
        EXPECT_EQ(lk.kernel.notes[0], "fused (prologue-epilogue): anchor Conv_1; prologue Relu_0; epilogue Sigmoid_2");
    }
}

// ---- refusals ----

TEST(LowerGroup, RefusesABroadcastUpEpilogue) {
    Builder b;
    b.input("a", "f32[4,16]");
    b.input("big", "f32[4,16]");
    b.init("axes", ir::TensorData::fromInts({0}, {1}));
    b.node("ReduceSum", "ReduceSum_0", {"a", "axes"}, {"r"}, {{"keepdims", Attribute::ofInt(1)}});
    b.node("Add", "Add_1", {"r", "big"}, {"y"});
    b.output("y");
    infer(b.g);
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"ReduceSum_0", "Add_1"}, "ReduceSum_0", {}, {"Add_1"});
    for (Target t : kTargets) {
        SCOPED_TRACE(targetName(t));
        const std::string e = refusal(b.g, gr, t);
        EXPECT_NE(e.find("group 'g0'"), std::string::npos) << e;
        EXPECT_NE(e.find("epilogue 'Add_1' (Add) broadcasts 'r' to a larger shape"), std::string::npos) << e;
    }
}

TEST(LowerGroup, RefusesAnAnchorThatReadsBackItsOutput) {
    // No template accumulates in its output buffer today, so the anchor's kernel is made to: the
    // Relu kernel gets a second pass c[i] = c[i] + 1 (a read-modify-write of its output).
    Builder b;
    b.input("x", "f32[8]");
    b.node("Relu", "Relu_0", {"x"}, {"c"});
    b.node("Sigmoid", "Sigmoid_1", {"c"}, {"y"});
    b.output("y");
    infer(b.g);
    for (Target t : kTargets) {
        SCOPED_TRACE(targetName(t));
        LowerOptions o;
        o.target = t;
        auto lk = lowerNode(b.g, b.g.findNode("Relu_0"), nullptr, o);
        ASSERT_TRUE(lk.ok());
        Kernel& k = lk->kernel;
        const int c = k.params.back();
        const Var i = k.newVar("i");
        k.body = seq({k.body, forLoop(i, intImm(8),
                                      store(c, {varRef(i)}, load(c, DType::F32, {varRef(i)}) + floatImm(1.0)))});
        const std::vector<ir::NodeId> members{b.g.findNode("Relu_0"), b.g.findNode("Sigmoid_1")};
        auto fused = detail::fuseIntoKernel(b.g, *lk, members, {}, {members[1]}, o, "group 'g0'");
        ASSERT_FALSE(fused.ok());
        const std::string e = fused.diagnostics().firstError()->format();
        EXPECT_NE(e.find("group 'g0'"), std::string::npos) << e;
        EXPECT_NE(e.find("epilogue 'Sigmoid_1' (Sigmoid): the kernel reads back its output 'c'"), std::string::npos)
            << e;
        // Without the second pass the same rewrite succeeds.
        auto plain = lowerNode(b.g, b.g.findNode("Relu_0"), nullptr, o);
        ASSERT_TRUE(plain.ok());
        auto ok = detail::fuseIntoKernel(b.g, *plain, members, {}, {members[1]}, o, "group 'g0'");
        ASSERT_TRUE(ok.ok()) << ok.diagnostics().formatAll();
        EXPECT_EQ(paramNames(ok->kernel), (std::vector<std::string>{"x", "y"}));
        EXPECT_EQ(runAgainstReference(b.g, *ok), "");
    }
}

TEST(LowerGroup, RefusesANonElementwiseEpilogueAndUnknownMembers) {
    Builder b;
    b.input("x", "f32[1,4,6,6]");
    b.init("w", ramp({5, 4, 3, 3}));
    b.node("Conv", "Conv_0", {"x", "w"}, {"c"}, convAttrs(1));
    b.node("Softmax", "Softmax_1", {"c"}, {"y"});
    b.output("y");
    infer(b.g);
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"Conv_0", "Softmax_1"}, "Conv_0", {}, {"Softmax_1"});
    EXPECT_NE(refusal(b.g, gr, Target::Cpu)
                  .find("epilogue 'Softmax_1' (Softmax) is neither an elementwise op that can be inlined nor an index "
                        "map (Transpose, Reshape family)"),
              std::string::npos);
    FusionGroup bad = group(FusionKind::PrologueEpilogue, {"Conv_0", "Nope_9"}, "Conv_0", {}, {"Nope_9"});
    EXPECT_NE(refusal(b.g, bad, Target::Cpu).find("member 'Nope_9' is not in the graph"), std::string::npos);
}

// ---- index maps (Transpose, Reshape family) as epilogues and prologues ----

/// a f32[M,K] x w [K,N] -> MatMul_0 -> m [M,N] -> Transpose_1 -> t [N,M] -> Add_2 (+ bias [M],
/// broadcast over the rows) -> s -> Reshape_3 (shape [rows, N*M/rows]) -> r -> Mul_4 (* scale
/// [N*M/rows]) -> y.
ir::Graph matmulTransposeAddReshapeMul(std::int64_t m, std::int64_t k, std::int64_t n, std::int64_t rows) {
    const std::int64_t cols = n * m / rows;
    Builder b;
    b.input("a", "f32[" + std::to_string(m) + "," + std::to_string(k) + "]");
    b.init("w", ramp({k, n}, 0.0625f));
    b.init("bias", ramp({m}, 0.25f));
    b.init("shape", ir::TensorData::fromInts({rows, cols}, {2}));
    b.init("scale", ramp({cols}, 0.5f));
    b.node("MatMul", "MatMul_0", {"a", "w"}, {"m"});
    b.node("Transpose", "Transpose_1", {"m"}, {"t"}, {{"perm", Attribute::ofInts({1, 0})}});
    b.node("Add", "Add_2", {"t", "bias"}, {"s"});
    b.node("Reshape", "Reshape_3", {"s", "shape"}, {"r"});
    b.node("Mul", "Mul_4", {"r", "scale"}, {"y"});
    b.output("y");
    infer(b.g);
    return b.g;
}

TEST(LowerGroup, MatMulWithTransposeAddReshapeMulEpilogues) {
    ir::Graph g = matmulTransposeAddReshapeMul(5, 7, 6, 3);
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"MatMul_0", "Transpose_1", "Add_2", "Reshape_3", "Mul_4"},
                           "MatMul_0", {}, {"Transpose_1", "Add_2", "Reshape_3", "Mul_4"});
    // Reshape's shape is compile-time data, not a param.
    for (Target t : kTargets) {
        LoweredKernel lk;
        expectFused(g, gr, t, {"a", "w", "bias", "scale", "y"}, &lk);
        EXPECT_EQ(lk.kernel.notes[0],
                  "fused (prologue-epilogue): anchor MatMul_0; epilogue Transpose_1, Add_2, Reshape_3, Mul_4");
        // The Transpose stores in its output's shape [6,5]; the Reshape keeps that view (same
        // flat offset), so y is stored as [6,5] too, not [3,10].
        const int y = lk.kernel.params.back();
        EXPECT_EQ(lk.kernel.buffers[static_cast<std::size_t>(y)].shape, (std::vector<std::int64_t>{6, 5}));
    }
}

TEST(LowerGroup, TransposeEpilogueThroughTheSharedMemoryGemm) {
    // 130 x 72: the CUDA GEMM template stores from its staged tiles; the transpose permutes them.
    ir::Graph g = matmulTransposeAddReshapeMul(130, 24, 72, 72);
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"MatMul_0", "Transpose_1", "Add_2", "Reshape_3", "Mul_4"},
                           "MatMul_0", {}, {"Transpose_1", "Add_2", "Reshape_3", "Mul_4"});
    LoweredKernel lk;
    expectFused(g, gr, Target::Cuda, {"a", "w", "bias", "scale", "y"}, &lk);
    bool gemm = false;
    for (const auto& n : lk.kernel.notes) gemm = gemm || n.rfind("A/B tiles staged in shared memory", 0) == 0;
    EXPECT_TRUE(gemm) << printKernel(lk.kernel);
    expectFused(g, gr, Target::Cpu, {"a", "w", "bias", "scale", "y"});
}

TEST(LowerGroup, ConvWithReshapeTransposeAddEpilogues) {
    // x [1,4,6,6] -> Conv_0 (w [5,4,3,3], pad 1) -> c [1,5,6,6] -> Flatten_1 (axis 2) -> f [5,36]
    // -> Transpose_2 -> t [36,5] -> Add_3 (+ bias [5]) -> s -> Unsqueeze_4 (axes [0]) -> u [1,36,5]
    // -> Sigmoid_5 -> y.
    Builder b;
    b.input("x", "f32[1,4,6,6]");
    b.init("w", ramp({5, 4, 3, 3}));
    b.init("bias", ramp({5}, 0.25f));
    b.init("axes", ir::TensorData::fromInts({0}, {1}));
    b.node("Conv", "Conv_0", {"x", "w"}, {"c"}, convAttrs(1));
    b.node("Flatten", "Flatten_1", {"c"}, {"f"}, {{"axis", Attribute::ofInt(2)}});
    b.node("Transpose", "Transpose_2", {"f"}, {"t"}, {{"perm", Attribute::ofInts({1, 0})}});
    b.node("Add", "Add_3", {"t", "bias"}, {"s"});
    b.node("Unsqueeze", "Unsqueeze_4", {"s", "axes"}, {"u"});
    b.node("Sigmoid", "Sigmoid_5", {"u"}, {"y"});
    b.output("y");
    infer(b.g);
    ASSERT_EQ(b.g.value(b.g.findValue("y")).type.str(), "f32[1,36,5]");
    FusionGroup gr = group(FusionKind::PrologueEpilogue,
                           {"Conv_0", "Flatten_1", "Transpose_2", "Add_3", "Unsqueeze_4", "Sigmoid_5"}, "Conv_0", {},
                           {"Flatten_1", "Transpose_2", "Add_3", "Unsqueeze_4", "Sigmoid_5"});
    for (Target t : kTargets) expectFused(b.g, gr, t, {"x", "w", "bias", "y"});
}

TEST(LowerGroup, GlobalAveragePoolWithFlattenEpilogue) {
    // MobileNetV2's head under the hidet planner: GlobalAveragePool_0 -> p [1,8,1,1] -> Flatten_1.
    Builder b;
    b.input("x", "f32[1,8,5,5]");
    b.node("GlobalAveragePool", "GlobalAveragePool_0", {"x"}, {"p"});
    b.node("Flatten", "Flatten_1", {"p"}, {"y"});
    b.output("y");
    infer(b.g);
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"GlobalAveragePool_0", "Flatten_1"}, "GlobalAveragePool_0", {},
                           {"Flatten_1"});
    for (Target t : kTargets) expectFused(b.g, gr, t, {"x", "y"});
}

TEST(LowerGroup, TransposeAndReshapeProloguesFlattenEpilogue) {
    // x [2,3,4] -> Transpose_0 (0,2,1) -> t [2,4,3] -> Reshape_1 [8,3] -> r -> Relu_2 -> MatMul_3
    // (w [3,5]) -> m [8,5] -> Flatten_4 (axis 0) -> f [1,40] -> Sigmoid_5 -> y.
    Builder b;
    b.input("x", "f32[2,3,4]");
    b.init("shape", ir::TensorData::fromInts({8, 3}, {2}));
    b.init("w", ramp({3, 5}));
    b.node("Transpose", "Transpose_0", {"x"}, {"t"}, {{"perm", Attribute::ofInts({0, 2, 1})}});
    b.node("Reshape", "Reshape_1", {"t", "shape"}, {"r"});
    b.node("Relu", "Relu_2", {"r"}, {"rr"});
    b.node("MatMul", "MatMul_3", {"rr", "w"}, {"m"});
    b.node("Flatten", "Flatten_4", {"m"}, {"f"}, {{"axis", Attribute::ofInt(0)}});
    b.node("Sigmoid", "Sigmoid_5", {"f"}, {"y"});
    b.output("y");
    infer(b.g);
    FusionGroup gr = group(FusionKind::PrologueEpilogue,
                           {"Transpose_0", "Reshape_1", "Relu_2", "MatMul_3", "Flatten_4", "Sigmoid_5"}, "MatMul_3",
                           {"Transpose_0", "Reshape_1", "Relu_2"}, {"Flatten_4", "Sigmoid_5"});
    for (Target t : kTargets) {
        LoweredKernel lk;
        expectFused(b.g, gr, t, {"x", "w", "y"}, &lk);
        EXPECT_EQ(lk.kernel.notes[0], "fused (prologue-epilogue): anchor MatMul_3; prologue Transpose_0, Reshape_1, "
                                      "Relu_2; epilogue Flatten_4, Sigmoid_5");
    }
}

TEST(LowerGroup, RefusesASliceEpilogue) {
    Builder b;
    b.input("a", "f32[4,6]");
    b.init("w", ramp({6, 8}));
    b.init("starts", ir::TensorData::fromInts({0}, {1}));
    b.init("ends", ir::TensorData::fromInts({4}, {1}));
    b.init("axes", ir::TensorData::fromInts({1}, {1}));
    b.node("MatMul", "MatMul_0", {"a", "w"}, {"m"});
    b.node("Slice", "Slice_1", {"m", "starts", "ends", "axes"}, {"y"});
    b.output("y");
    infer(b.g);
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"MatMul_0", "Slice_1"}, "MatMul_0", {}, {"Slice_1"});
    for (Target t : kTargets)
        EXPECT_EQ(refusal(b.g, gr, t),
                  "error: group 'g0': epilogue 'Slice_1' (Slice) is neither an elementwise op that can be inlined nor "
                  "an index map (Transpose, Reshape family)");
}

// ---- conv chains ----

TEST(LowerGroup, DwPwChainWithEpilogue) {
    // x [1,8,10,10] -> depthwise Conv_0 (pad 1) -> Clip_1 (ReLU6) -> pointwise Conv_2 (16 filters)
    // -> Add_3 (+ residual r) -> y.
    Builder b;
    b.input("x", "f32[1,8,10,10]");
    b.init("wd", ramp({8, 1, 3, 3}));
    b.init("wp", ramp({16, 8, 1, 1}));
    b.init("lo", ir::TensorData::fromFloats({0.0f}, {}));
    b.init("hi", ir::TensorData::fromFloats({6.0f}, {}));
    b.input("r", "f32[1,16,10,10]");
    b.node("Conv", "Conv_0", {"x", "wd"}, {"d"}, convAttrs(1, 8));
    b.node("Clip", "Clip_1", {"d", "lo", "hi"}, {"dc"});
    b.node("Conv", "Conv_2", {"dc", "wp"}, {"p"}, convAttrs(0));
    b.node("Add", "Add_3", {"p", "r"}, {"y"});
    b.output("y");
    infer(b.g);
    FusionGroup gr = group(FusionKind::DwPw, {"Conv_0", "Clip_1", "Conv_2", "Add_3"}, "Conv_0", {}, {"Add_3"});
    for (Target t : kTargets) expectFused(b.g, gr, t, {"x", "wd", "wp", "r", "y"});
}

// ---- generated code of a fused kernel ----

TEST(LowerGroup, FusedCppCompilesAndMatches) {
    if (!tessera::test::haveCompiler()) GTEST_SKIP() << "no C++ compiler";
    ir::Graph g = convBiasClip();
    FusionGroup gr =
        group(FusionKind::PrologueEpilogue, {"Conv_0", "Add_1", "Clip_2"}, "Conv_0", {}, {"Add_1", "Clip_2"});
    auto lk = lowerGroup(g, gr, nullptr);
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    const auto src = codegen::generateCpp({&lk->kernel});
    ASSERT_EQ(src.entryPoints.size(), 1u);
    tessera::test::CompiledModule mod(src.source);
    ASSERT_TRUE(mod.ok()) << mod.log() << "\n" << src.source;
    auto fn = mod.entry(src.entryPoints[0]);
    ASSERT_NE(fn, nullptr);

    const auto inputs = makeInputs(g, 5);
    auto ref = eval::evaluateAll(g, inputs);
    ASSERT_TRUE(ref.ok());
    std::vector<ir::TensorData> storage;
    for (ir::ValueId v : lk->inputs) storage.push_back(g.value(v).data ? *g.value(v).data : *ref->value(v));
    const BufferDecl& out = lk->kernel.buffers[static_cast<std::size_t>(lk->kernel.params.back())];
    ir::TensorData y;
    y.dtype = out.dtype;
    y.dims = out.shape;
    y.bytes.assign(static_cast<std::size_t>(out.bytes()), 0);
    storage.push_back(y);
    std::vector<void*> args;
    for (auto& t : storage) args.push_back(t.bytes.data());
    fn(args.data());
    const ir::TensorData* want = ref->value(lk->outputs[0]);
    ir::TensorData got = storage.back();
    got.dims = want->dims;
    auto cmp = eval::compareTensors(got, *want);
    EXPECT_TRUE(cmp.ok) << cmp.summary();
}

TEST(LowerGroup, FusedCudaCompilesWithNvrtc) {
    auto info = runtime::cuda::nvrtcInfo();
    if (!info.ok()) GTEST_SKIP() << "NVRTC is not loadable: " << info.diagnostics().formatAll();
    ir::Graph g = matmulResidualRelu(130, 24, 72);
    FusionGroup gr =
        group(FusionKind::PrologueEpilogue, {"MatMul_0", "Add_1", "Relu_2"}, "MatMul_0", {}, {"Add_1", "Relu_2"});
    LowerOptions o;
    o.target = Target::Cuda;
    auto lk = lowerGroup(g, gr, nullptr, o);
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    auto m = codegen::generateCuda({&lk->kernel});
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    runtime::cuda::CudaCompileOptions co;
    co.arch = "sm_90";
    const auto dir = std::filesystem::temp_directory_path() /
                     ("tessera-lower-group-" + std::to_string(std::hash<std::string>{}(m->source.source)));
    co.cacheDir = dir.string();
    auto r = runtime::cuda::compileCuda(m->source.source, co);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll() << "\n" << m->source.source;
    EXPECT_NE(r->ptx.find("ld.shared"), std::string::npos);
}

TEST(LowerGroup, IndexMapEpiloguesCompileWithNvrtc) {
    auto info = runtime::cuda::nvrtcInfo();
    if (!info.ok()) GTEST_SKIP() << "NVRTC is not loadable: " << info.diagnostics().formatAll();
    // The shared-memory GEMM's stores through Transpose, Add, Reshape and Mul epilogues.
    ir::Graph g = matmulTransposeAddReshapeMul(130, 24, 72, 72);
    FusionGroup gr = group(FusionKind::PrologueEpilogue, {"MatMul_0", "Transpose_1", "Add_2", "Reshape_3", "Mul_4"},
                           "MatMul_0", {}, {"Transpose_1", "Add_2", "Reshape_3", "Mul_4"});
    LowerOptions o;
    o.target = Target::Cuda;
    auto lk = lowerGroup(g, gr, nullptr, o);
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    auto m = codegen::generateCuda({&lk->kernel});
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    runtime::cuda::CudaCompileOptions co;
    co.arch = "sm_90";
    const auto dir = std::filesystem::temp_directory_path() /
                     ("tessera-lower-group-" + std::to_string(std::hash<std::string>{}(m->source.source)));
    co.cacheDir = dir.string();
    auto r = runtime::cuda::compileCuda(m->source.source, co);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll() << "\n" << m->source.source;
    EXPECT_NE(r->ptx.find(".entry"), std::string::npos);
}

}  // namespace
}  // namespace tessera::lower::test
