// The kernel IR's warp MMA statement (StmtKind::Mma, core/lower/kernel_ir.h): one warp's
// m16n8k8 product evaluated per lane by the interpreter (exact values, TF32 rounding against
// 3xTF32), its printed form, static counts, the CUDA text (fragment loads, cvt.rna.tf32, three
// mma.sync for 3xTF32, the f32 FMA fallback before sm_80), the CUDA checks (whole warps, no
// lane-dependent condition) and the C++ generator's refusal. The interpreter's values are the
// IR's semantics (products summed in double, rounded to f32 once per Mma); tensor cores round
// after each of 3xTF32's MMAs, so the hardware agrees to f32-level accuracy, not bit for bit
// (checked on the H200 against PyTorch: bench/RESULTS.md issue 6 run 7).

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/codegen/cpp/cpp_codegen.h"
#include "core/codegen/cuda/cuda_codegen.h"
#include "core/lower/counts.h"
#include "core/lower/kernel_ir.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::lower {
namespace {

/// Y[16, 8] = A * B with A stored k-major as At[8][16] (At[k][m] = A(m, k)) and B as B[8][8]:
/// one warp, one Mma statement, the accumulator stored at each lane's fragment coordinates.
Kernel warpProduct(MmaPrecision precision) {
    Kernel k;
    k.name = "mma_warp";
    auto param = [&](const char* name, std::vector<std::int64_t> shape, BufferRole role) {
        BufferDecl b;
        b.name = name;
        b.shape = std::move(shape);
        b.role = role;
        const int i = k.addBuffer(b);
        k.params.push_back(i);
        return i;
    };
    const int at = param("At", {8, 16}, BufferRole::Input);
    const int bm = param("B", {8, 8}, BufferRole::Input);
    const int y = param("Y", {16, 8}, BufferRole::Output);
    BufferDecl acc;
    acc.name = "acc";
    acc.scope = MemoryScope::Local;
    acc.shape = {32, 1, 4};
    acc.perThread = true;
    const int ac = k.addBuffer(acc);
    const Var t = k.newVar("t"), r = k.newVar("r"), r2 = k.newVar("r");
    MmaInfo m;
    m.precision = precision;
    m.lane = varRef(t) % intImm(32);
    m.a = {at, {intImm(0), intImm(0)}, {{0, 1}, {1, 0}}};
    m.b = {bm, {intImm(0), intImm(0)}, {{1, 0}, {0, 1}}};
    const Expr T = varRef(t), R = varRef(r2);
    Stmt body = seq({
        forLoop(r, intImm(4), store(ac, {T, intImm(0), varRef(r)}, floatImm(0.0))),
        mma(ac, {T, intImm(0), intImm(0)}, m),
        forLoop(r2, intImm(4),
                store(y, {T / intImm(4) + (R / intImm(2)) * intImm(8), (T % intImm(4)) * intImm(2) + R % intImm(2)},
                      load(ac, DType::F32, {T, intImm(0), R}))),
    });
    k.body = allocate(ac, forLoop(t, intImm(32), body, ForKind::Threads));
    return k;
}

std::vector<float> run(const Kernel& k, const std::vector<float>& a, const std::vector<float>& b) {
    ir::TensorData A = ir::TensorData::fromFloats(a, {8, 16}), B = ir::TensorData::fromFloats(b, {8, 8}), Y;
    auto st = evalKernel(k, {&A, &B, &Y});
    EXPECT_TRUE(st.ok()) << st.diagnostics().formatAll();
    std::vector<float> out;
    for (double v : Y.toDoubles()) out.push_back(static_cast<float>(v));
    return out;
}

TEST(MmaStmt, InterpreterComputesTheWarpProductAtEachLanesFragment) {
    // Small integers and halves: exact in TF32, so both precisions give the exact product.
    std::vector<float> a(8 * 16), b(8 * 8);
    for (int m = 0; m < 16; ++m)
        for (int kk = 0; kk < 8; ++kk) a[kk * 16 + m] = static_cast<float>(m) - 0.5f * static_cast<float>(kk);
    for (int kk = 0; kk < 8; ++kk)
        for (int n = 0; n < 8; ++n) b[kk * 8 + n] = static_cast<float>(kk) + 0.25f * static_cast<float>(n);
    for (MmaPrecision p : {MmaPrecision::Tf32, MmaPrecision::Tf32x3}) {
        const std::vector<float> y = run(warpProduct(p), a, b);
        ASSERT_EQ(y.size(), 128u);
        for (int m = 0; m < 16; ++m)
            for (int n = 0; n < 8; ++n) {
                double want = 0;
                for (int kk = 0; kk < 8; ++kk) want += static_cast<double>(a[kk * 16 + m]) * b[kk * 8 + n];
                EXPECT_EQ(y[static_cast<std::size_t>(m * 8 + n)], static_cast<float>(want)) << m << "," << n << " " << mmaPrecisionName(p);
            }
    }
}

TEST(MmaStmt, Tf32RoundsOperandsAnd3xTf32KeepsF32Products) {
    // A = 1 + 2^-15 (below TF32's 10-bit mantissa), B = 1: TF32 gives 8, 3xTF32 8 (1 + 2^-15).
    const float x = 1.0f + std::ldexp(1.0f, -15);
    const std::vector<float> a(8 * 16, x), b(8 * 8, 1.0f);
    EXPECT_EQ(run(warpProduct(MmaPrecision::Tf32), a, b)[0], 8.0f);
    EXPECT_EQ(run(warpProduct(MmaPrecision::Tf32x3), a, b)[0], 8.0f * x);
    // Round to nearest, ties away from zero: 1 + 2^-11 (half a TF32 unit) rounds up to 1 + 2^-10.
    const std::vector<float> tie(8 * 16, 1.0f + std::ldexp(1.0f, -11));
    EXPECT_EQ(run(warpProduct(MmaPrecision::Tf32), tie, b)[5], 8.0f * (1.0f + std::ldexp(1.0f, -10)));
}

TEST(MmaStmt, PrintCountsAndGenerators) {
    const Kernel k = warpProduct(MmaPrecision::Tf32x3);
    const std::string text = printKernel(k);
    EXPECT_NE(text.find("mma.m16n8k8.tf32x3 acc[t_0, 0, 0 +0..3] += A(At[0, 0] step per row (0, 1) per column (1, 0)) * "
                        "B(B[0, 0] step per row (1, 0) per column (0, 1)) lane (t_0 % 32)"),
              std::string::npos)
        << text;
    // Per lane: 64 FLOPs, 4 + 2 operand loads (global here), 4 accumulator loads and stores in the
    // mma, plus the zeroing (4 local stores) and the stores of Y (4 local loads, 4 global stores).
    const KernelCounts c = countKernel(k);
    EXPECT_EQ(c.flops, 32 * 64);
    EXPECT_EQ(c.loadBytes, 32 * 6 * 4);
    EXPECT_EQ(c.storeBytes, 32 * 4 * 4);
    EXPECT_EQ(c.localLoadBytes, 32 * 8 * 4);
    EXPECT_EQ(c.localStoreBytes, 32 * 8 * 4);
    EXPECT_TRUE(c.exact);
    // The interpreter's counts agree.
    std::vector<float> zeros(128, 0.0f);
    ir::TensorData A = ir::TensorData::fromFloats(zeros, {8, 16}), B = ir::TensorData::fromFloats(std::vector<float>(64, 0.0f), {8, 8}), Y;
    EvalOptions o;
    o.countOps = true;
    auto st = evalKernel(k, {&A, &B, &Y}, o);
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(st->flops, c.flops);
    EXPECT_EQ(st->loadBytes, c.loadBytes);
    EXPECT_EQ(st->localLoadBytes, c.localLoadBytes);
    EXPECT_EQ(st->localStoreBytes, c.localStoreBytes);

    auto cu = codegen::generateCuda({&k});
    ASSERT_TRUE(cu.ok()) << cu.diagnostics().formatAll();
    const std::string& src = cu->source.source;
    EXPECT_NE(src.find("const int64_t mg = t % 32 >> 2;"), std::string::npos) << src;
    EXPECT_NE(src.find("asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(tsr_a0l) : \"f\"(tsr_x - __uint_as_float(tsr_a0h)));"),
              std::string::npos);
    std::size_t mmas = 0;
    for (std::size_t at = src.find("mma.sync.aligned.m16n8k8"); at != std::string::npos; at = src.find("mma.sync.aligned.m16n8k8", at + 1))
        ++mmas;
    EXPECT_EQ(mmas, 3u);  // small x big, big x small, big x big
    EXPECT_NE(src.find("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800"), std::string::npos);  // the FMA fallback
    EXPECT_NE(src.find("t_acc[0] = fmaf("), std::string::npos) << src;
    EXPECT_NE(src.find("\"+f\"(t_acc[0]), \"+f\"(t_acc[1]), \"+f\"(t_acc[2]), \"+f\"(t_acc[3])"), std::string::npos) << src;
    EXPECT_NE(src.find("\"r\"(tsr_a0h), \"r\"(tsr_a1h), \"r\"(tsr_a2h), \"r\"(tsr_a3h), \"r\"(tsr_b0h), \"r\"(tsr_b1h)"), std::string::npos);

    // The C++ target has no tensor cores: an #error line names it.
    const codegen::GeneratedSource cpp = codegen::generateCpp({&k});
    EXPECT_NE(cpp.source.find("#error \"tessera: a warp MMA (tensor cores) is a CUDA statement; this target has none\""),
              std::string::npos);
}

TEST(MmaStmt, CudaGeneratorRejectsAnMmaOutsideWholeWarps) {
    Kernel k = warpProduct(MmaPrecision::Tf32x3);
    // The same body under a Threads loop of 48 iterations (not a multiple of 32).
    Stmt threads = k.body->body[0];
    auto n = std::make_shared<StmtNode>(*threads);
    n->extent = intImm(48);
    auto alloc = std::make_shared<StmtNode>(*k.body);
    alloc->body[0] = n;
    k.body = alloc;
    auto cu = codegen::generateCuda({&k});
    ASSERT_FALSE(cu.ok());
    EXPECT_NE(cu.diagnostics().formatAll().find("a warp MMA needs whole warps (a multiple of 32)"), std::string::npos)
        << cu.diagnostics().formatAll();
}

TEST(MmaStmt, CudaGeneratorRejectsAnMmaUnderALaneDependentCondition) {
    // The warp product's Mma under `if t < 16` (half a warp) is refused; under `if t < 32` (whole
    // warps) or a condition on a warp-uniform value (t / 32) it is accepted.
    auto guarded = [](Expr (*cond)(const Expr& t)) {
        Kernel k = warpProduct(MmaPrecision::Tf32x3);
        auto threads = std::make_shared<StmtNode>(*k.body->body[0]);
        auto seqNode = std::make_shared<StmtNode>(*threads->body[0]);
        const Expr t = varRef(threads->var);
        seqNode->body[1] = ifThen(cond(t), seqNode->body[1]);
        threads->body[0] = seqNode;
        auto alloc = std::make_shared<StmtNode>(*k.body);
        alloc->body[0] = threads;
        k.body = alloc;
        return codegen::generateCuda({&k});
    };
    auto half = guarded([](const Expr& t) { return t < intImm(16); });
    ASSERT_FALSE(half.ok());
    EXPECT_NE(half.diagnostics().formatAll().find("is under a condition that may differ between the lanes of a warp"),
              std::string::npos)
        << half.diagnostics().formatAll();
    EXPECT_TRUE(guarded([](const Expr& t) { return t < intImm(32); }).ok());
    EXPECT_TRUE(guarded([](const Expr& t) { return t / intImm(32) < intImm(1); }).ok());
    EXPECT_FALSE(guarded([](const Expr& t) { return t % intImm(2) < intImm(1); }).ok());
}

}  // namespace
}  // namespace tessera::lower
