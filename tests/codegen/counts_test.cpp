// Static counts of kernels (core/lower/counts.h) against hand counts and against the interpreter's
// dynamic counts.
#include <gtest/gtest.h>

#include <chrono>

#include "core/lower/counts.h"
#include "core/lower/kernel_eval.h"
#include "tests/codegen/test_kernels.h"

namespace tessera::test {
namespace {

using lower::countKernel;
using lower::Intrinsic;
using lower::KernelCounts;

/// Runs the interpreter with op counting on zero inputs and checks it agrees with countKernel.
void expectMatchesInterpreter(const Kernel& k, const KernelCounts& c) {
    std::vector<ir::TensorData> tensors(k.params.size());
    std::vector<ir::TensorData*> ptrs;
    for (std::size_t i = 0; i < k.params.size(); ++i) {
        const auto& b = k.buffers[static_cast<std::size_t>(k.params[i])];
        tensors[i].dtype = b.dtype;
        tensors[i].dims = b.shape;
        tensors[i].bytes.assign(static_cast<std::size_t>(b.bytes()), 0);
        ptrs.push_back(&tensors[i]);
    }
    lower::EvalOptions o;
    o.countOps = true;
    auto r = lower::evalKernel(k, ptrs, o);
    ASSERT_TRUE(r.ok()) << r.diagnostics().items().front().message;
    EXPECT_EQ(r->flops, c.flops);
    EXPECT_EQ(r->loadBytes, c.loadBytes);
    EXPECT_EQ(r->storeBytes, c.storeBytes);
    EXPECT_EQ(r->sharedLoadBytes, c.sharedLoadBytes);
    EXPECT_EQ(r->sharedStoreBytes, c.sharedStoreBytes);
    EXPECT_EQ(r->localLoadBytes, c.localLoadBytes);
    EXPECT_EQ(r->localStoreBytes, c.localStoreBytes);
}

TEST(Counts, Matmul) {
    const std::int64_t m = 13, n = 7, k = 19;
    const Kernel kern = matmulKernel(m, n, k);
    const KernelCounts c = countKernel(kern);
    EXPECT_TRUE(c.exact);
    EXPECT_EQ(c.flops, 2.0 * m * n * k);
    EXPECT_EQ(c.loadBytes, 2 * m * n * k * 4);    // A and B once per multiply-add, as issued
    EXPECT_EQ(c.storeBytes, m * n * 4);
    EXPECT_EQ(c.localStoreBytes, m * n * (k + 1) * 4);  // acc = 0, then once per k
    EXPECT_EQ(c.localLoadBytes, m * n * (k + 1) * 4);   // once per k, then the final store
    EXPECT_EQ(c.sharedLoadBytes, 0);
    EXPECT_EQ(c.sharedStoreBytes, 0);
    EXPECT_EQ(c.compulsoryBytes, (m * k + k * n + m * n) * 4);
    expectMatchesInterpreter(kern, c);
}

TEST(Counts, BroadcastAdd) {
    const Kernel k = broadcastAddKernel();
    const KernelCounts c = countKernel(k);
    EXPECT_TRUE(c.exact);
    EXPECT_EQ(c.flops, 24.0);
    EXPECT_EQ(c.loadBytes, 2 * 24 * 4);  // B[j, 0] is re-read for every element
    EXPECT_EQ(c.storeBytes, 24 * 4);
    EXPECT_EQ(c.compulsoryBytes, (24 + 3 + 24) * 4);
    EXPECT_EQ(c.localLoadBytes + c.localStoreBytes, 0);
    expectMatchesInterpreter(k, c);
}

TEST(Counts, PaddedConvCountsOnlyTapsInside) {
    const std::int64_t ch = 3, oc = 4, h = 9, w = 6;
    const Kernel k = paddedConvKernel(ch, oc, h, w);
    const KernelCounts c = countKernel(k);
    // With padding 1 and a 3-tap window, the taps inside the image along one axis of length n are
    // (n - 1) + n + (n - 1) = 3n - 2 (over all output positions).
    const std::int64_t taps = oc * ch * (3 * h - 2) * (3 * w - 2);
    EXPECT_TRUE(c.exact);
    EXPECT_EQ(c.flops, 2.0 * taps);
    EXPECT_EQ(c.loadBytes, (2 * taps + oc * h * w) * 4);  // X and W per tap, the bias per output
    EXPECT_EQ(c.storeBytes, oc * h * w * 4);
    EXPECT_EQ(c.localStoreBytes, (taps + oc * h * w) * 4);
    EXPECT_EQ(c.localLoadBytes, (taps + oc * h * w) * 4);
    EXPECT_EQ(c.compulsoryBytes, (ch * h * w + oc * ch * 9 + oc + oc * h * w) * 4);
    expectMatchesInterpreter(k, c);
}

TEST(Counts, LargePaddedConvIsExactAndFast) {
    const std::int64_t ch = 64, oc = 64, h = 112, w = 112;
    const Kernel k = paddedConvKernel(ch, oc, h, w);
    const auto start = std::chrono::steady_clock::now();
    const KernelCounts c = countKernel(k);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(c.exact);
    EXPECT_EQ(c.flops, 2.0 * oc * ch * (3 * h - 2) * (3 * w - 2));
    EXPECT_LT(seconds, 5.0) << "range splitting should need few evaluations";
}

TEST(Counts, TriangularLoop) {
    Kernel k;
    k.name = "tri";
    const int x = addParam(k, "X", DType::F32, {100, 100}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {100, 100}, BufferRole::Output);
    auto i = k.newVar("i"), j = k.newVar("j");
    Expr ei = lower::varRef(i), ej = lower::varRef(j);
    k.body = lower::forLoop(i, lower::intImm(100),
                            lower::forLoop(j, ei + 1, lower::store(y, {ei, ej}, lower::load(x, DType::F32, {ei, ej}) * lower::floatImm(2.0))));
    const KernelCounts c = countKernel(k);
    EXPECT_TRUE(c.exact);
    EXPECT_EQ(c.flops, 5050.0);
    EXPECT_EQ(c.loadBytes, 5050 * 4);
    EXPECT_EQ(c.storeBytes, 5050 * 4);
    expectMatchesInterpreter(k, c);
}

/// 2-D tiles of 32 x 32 over m x n with a tail predicate.
Kernel tiledCopy(std::int64_t m, std::int64_t n) {
    Kernel k;
    k.name = "tiles";
    const int x = addParam(k, "X", DType::F32, {m, n}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {m, n}, BufferRole::Output);
    auto ti = k.newVar("ti"), tj = k.newVar("tj"), ii = k.newVar("ii"), jj = k.newVar("jj");
    Expr r = lower::varRef(ti) * 32 + lower::varRef(ii), c = lower::varRef(tj) * 32 + lower::varRef(jj);
    Stmt body = lower::ifThen(r < lower::intImm(m) && c < lower::intImm(n),
                              lower::store(y, {r, c}, lower::load(x, DType::F32, {r, c}) + lower::floatImm(1.0)));
    k.body = lower::forLoop(ti, lower::intImm((m + 31) / 32),
                            lower::forLoop(tj, lower::intImm((n + 31) / 32),
                                           lower::forLoop(ii, lower::intImm(32), lower::forLoop(jj, lower::intImm(32), body))),
                            ForKind::Parallel);
    return k;
}

TEST(Counts, TailPredicate) {
    const Kernel small = tiledCopy(70, 45);
    const KernelCounts c = countKernel(small);
    EXPECT_TRUE(c.exact);
    EXPECT_EQ(c.flops, 70.0 * 45);
    EXPECT_EQ(c.loadBytes, 70 * 45 * 4);
    expectMatchesInterpreter(small, c);

    const auto start = std::chrono::steady_clock::now();
    const KernelCounts big = countKernel(tiledCopy(4001, 3999));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(big.exact);
    EXPECT_EQ(big.flops, 4001.0 * 3999);
    EXPECT_EQ(big.storeBytes, 4001LL * 3999 * 4);
    EXPECT_LT(seconds, 5.0);
}

TEST(Counts, DataDependentBranchesAreBoundedAndInexact) {
    Kernel k;
    k.name = "relu_exp";
    const int x = addParam(k, "X", DType::F32, {10}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {10}, BufferRole::Output);
    const int z = addParam(k, "Z", DType::F32, {10}, BufferRole::Output);
    auto i = k.newVar("i");
    Expr ei = lower::varRef(i), xv = lower::load(x, DType::F32, {ei});
    // if (X[i] > 0) Y[i] = exp(X[i]) else Y[i] = 0;  Z[i] = X[i] > 0 ? X[i] * X[i] : 0
    k.body = lower::forLoop(
        i, lower::intImm(10),
        lower::seq({lower::ifThen(xv > lower::floatImm(0.0), lower::store(y, {ei}, lower::call(Intrinsic::Exp, {xv})),
                                  lower::store(y, {ei}, lower::floatImm(0.0))),
                    lower::store(z, {ei}, lower::select(xv > lower::floatImm(0.0), xv * xv, lower::floatImm(0.0)))}));
    const KernelCounts c = countKernel(k);
    EXPECT_FALSE(c.exact);
    EXPECT_EQ(c.flops, 10.0 + 10.0);                // exp (the costlier branch) + the multiply
    EXPECT_EQ(c.loadBytes, (10 + 10 + 10 + 20) * 4);  // if cond + exp arg + select cond + both loads of x*x
    EXPECT_EQ(c.storeBytes, 20 * 4);
}

TEST(Counts, IndexGuardsAndShortCircuit) {
    Kernel k;
    k.name = "guards";
    const int x = addParam(k, "X", DType::F32, {10}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {10}, BufferRole::Output);
    auto i = k.newVar("i");
    Expr ei = lower::varRef(i);
    // Y[i] = i >= 1 ? X[i - 1] : 0;  if (i < 4 && X[i] > 0) Y[i] = -X[i] (data decides the store)
    k.body = lower::forLoop(
        i, lower::intImm(10),
        lower::seq({lower::store(y, {ei}, lower::select(ei >= lower::intImm(1), lower::load(x, DType::F32, {ei + (-1)}), lower::floatImm(0.0))),
                    lower::ifThen(ei < lower::intImm(4) && lower::load(x, DType::F32, {ei}) > lower::floatImm(0.0),
                                  lower::store(y, {ei}, lower::unary(lower::UnaryOp::Neg, lower::load(x, DType::F32, {ei}))))}));
    const KernelCounts c = countKernel(k);
    EXPECT_FALSE(c.exact);               // the second condition reads data
    EXPECT_EQ(c.loadBytes, (9 + 4 + 4) * 4);  // select arm for i >= 1; X[i] in the && only for i < 4; -X[i] bound
    EXPECT_EQ(c.flops, 4.0);             // unary minus in the (bounded) store
    EXPECT_EQ(c.storeBytes, (10 + 4) * 4);
}

TEST(Counts, OpWeightsAndScopes) {
    Kernel k;
    k.name = "weights";
    const int x = addParam(k, "X", DType::F32, {8}, BufferRole::Input);
    const int n = addParam(k, "N", DType::I64, {8}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {8}, BufferRole::Output);
    const int sh = addTemp(k, "tile", DType::F32, {8}, MemoryScope::Shared);
    auto i = k.newVar("i"), j = k.newVar("j");
    Expr ei = lower::varRef(i), ej = lower::varRef(j), xv = lower::load(x, DType::F32, {ei});
    // tile[i] = fma(x, x, x) (2) ; Y[i] = sigmoid(tile[i]) (1) + max(tile[i], 0) (1) + float(N[i] * 3 + 1) (0) - (-x) (2)
    Stmt fill = lower::forLoop(i, lower::intImm(8), lower::store(sh, {ei}, lower::call(Intrinsic::Fma, {xv, xv, xv})));
    Expr t = lower::load(sh, DType::F32, {ej});
    Expr nv = lower::cast(lower::load(n, DType::I64, {ej}) * 3 + 1, DType::F32);
    Stmt use = lower::forLoop(j, lower::intImm(8),
                              lower::store(y, {ej}, lower::call(Intrinsic::Sigmoid, {t}) + lower::maxOf(t, lower::floatImm(0.0)) + nv -
                                                        lower::unary(lower::UnaryOp::Neg, lower::load(x, DType::F32, {ej}))));
    k.body = lower::allocate(sh, lower::seq({fill, lower::barrier(), use}));
    const KernelCounts c = countKernel(k);
    EXPECT_TRUE(c.exact);
    EXPECT_EQ(c.flops, 8.0 * (2 + 1 + 1 + 1 + 1 + 1 + 1));  // fma 2, sigmoid, max, two +, -, unary minus
    EXPECT_EQ(c.sharedStoreBytes, 8 * 4);
    EXPECT_EQ(c.sharedLoadBytes, 8 * 2 * 4);
    EXPECT_EQ(c.loadBytes, 8 * 3 * 4 + 8 * 8 + 8 * 4);  // x three times in fma, N (i64), x once more
    EXPECT_EQ(c.storeBytes, 8 * 4);
    EXPECT_EQ(c.compulsoryBytes, 8 * 4 + 8 * 8 + 8 * 4);
    expectMatchesInterpreter(k, c);
}

}  // namespace
}  // namespace tessera::test
