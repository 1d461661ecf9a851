// Static counts of kernels (core/lower/counts.h) against hand counts, against the interpreter's
// dynamic counts, and the closed form against its oracles (splitting in halves only, every
// iteration visited) on guards that take flattened indices apart with / and %, thread, lane and
// warp guards, Mma statements, min/max bounds and data-dependent branches.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <string>

#include "core/lower/counts.h"
#include "tests/codegen/test_kernels.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::test {
namespace {

using lower::CountMethod;
using lower::countKernel;
using lower::Intrinsic;
using lower::KernelCounts;
using lower::Var;

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

void expectSameCounts(const KernelCounts& a, const KernelCounts& b, const char* what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(a.flops, b.flops);
    EXPECT_EQ(a.loadBytes, b.loadBytes);
    EXPECT_EQ(a.storeBytes, b.storeBytes);
    EXPECT_EQ(a.sharedLoadBytes, b.sharedLoadBytes);
    EXPECT_EQ(a.sharedStoreBytes, b.sharedStoreBytes);
    EXPECT_EQ(a.localLoadBytes, b.localLoadBytes);
    EXPECT_EQ(a.localStoreBytes, b.localStoreBytes);
    EXPECT_EQ(a.compulsoryBytes, b.compulsoryBytes);
    EXPECT_EQ(a.exact, b.exact);
}

/// The closed form equals splitting in halves and visiting every iteration; returns it.
KernelCounts expectMatchesOracles(const Kernel& k) {
    const KernelCounts c = countKernel(k);
    expectSameCounts(c, countKernel(k, CountMethod::Splitting), "closed form vs splitting");
    expectSameCounts(c, countKernel(k, CountMethod::Enumerate), "closed form vs every iteration");
    return c;
}

double secondsOf(const std::function<void()>& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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

// ---- the closed form against its oracles ----

using lower::allocate;
using lower::floatImm;
using lower::forLoop;
using lower::ifThen;
using lower::intImm;
using lower::let;
using lower::load;
using lower::select;
using lower::seq;
using lower::store;
using lower::varRef;

/// Depthwise 3x3 conv, padding 1, over one flattened index i of N x C x H x W (what a spatial
/// task mapping makes of a 4-D grid): n, c, h, w taken apart with / and %, the taps guarded at
/// the borders. gpu: blocks of 256 threads over i with a tail predicate.
Kernel flatDepthwiseKernel(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, bool gpu) {
    Kernel k;
    k.name = "flat_dw";
    const int x = addParam(k, "X", DType::F32, {n, c, h, w}, BufferRole::Input);
    const int wt = addParam(k, "W", DType::F32, {c, 1, 3, 3}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {n, c, h, w}, BufferRole::Output);
    const int acc = addTemp(k, "acc", DType::F32, {});
    const std::int64_t total = n * c * h * w;
    const Var i = k.newVar("i"), vn = k.newVar("n"), vc = k.newVar("c"), vh = k.newVar("h"), vw = k.newVar("w"),
              kh = k.newVar("kh"), kw = k.newVar("kw");
    const Expr I = varRef(i), N = varRef(vn), C = varRef(vc), H = varRef(vh), W = varRef(vw), KH = varRef(kh), KW = varRef(kw);
    const Expr iy = H + KH - intImm(1), ix = W + KW - intImm(1);
    const Expr inside = iy >= intImm(0) && iy < intImm(h) && ix >= intImm(0) && ix < intImm(w);
    const Stmt tap = ifThen(inside, store(acc, {}, load(acc, DType::F32, {}) + load(x, DType::F32, {N, C, iy, ix}) *
                                                                                 load(wt, DType::F32, {C, intImm(0), KH, KW})));
    const Stmt point = allocate(acc, seq({store(acc, {}, floatImm(0.0)), forLoop(kh, intImm(3), forLoop(kw, intImm(3), tap)),
                                          store(y, {N, C, H, W}, load(acc, DType::F32, {}))}));
    const Stmt taken = let(vn, I / intImm(c * h * w),
                           let(vc, (I / intImm(h * w)) % intImm(c),
                               let(vh, (I / intImm(w)) % intImm(h), let(vw, I % intImm(w), point))));
    if (!gpu) {
        k.body = forLoop(i, intImm(total), taken, ForKind::Parallel);
        return k;
    }
    const Var b = k.newVar("b"), t = k.newVar("t");
    k.body = forLoop(b, intImm((total + 255) / 256),
                     forLoop(t, intImm(256), let(i, varRef(b) * intImm(256) + varRef(t), ifThen(I < intImm(total), taken)),
                             ForKind::Threads),
                     ForKind::Blocks);
    return k;
}

TEST(CountsClosedForm, FlattenedConvBordersMatchOraclesAndFormula) {
    for (const bool gpu : {false, true})
        for (const auto& [n, c, h, w] : {std::array<std::int64_t, 4>{2, 3, 5, 7}, {3, 2, 4, 4}, {1, 5, 7, 3}, {5, 1, 6, 9}}) {
            SCOPED_TRACE(std::string(gpu ? "gpu " : "cpu ") + std::to_string(n) + "x" + std::to_string(c) + "x" +
                         std::to_string(h) + "x" + std::to_string(w));
            const Kernel k = flatDepthwiseKernel(n, c, h, w, gpu);
            const KernelCounts cnt = expectMatchesOracles(k);
            const std::int64_t taps = n * c * (3 * h - 2) * (3 * w - 2), points = n * c * h * w;
            EXPECT_TRUE(cnt.exact);
            EXPECT_EQ(cnt.flops, 2.0 * static_cast<double>(taps));
            EXPECT_EQ(cnt.loadBytes, 2 * taps * 4);
            EXPECT_EQ(cnt.storeBytes, points * 4);
            EXPECT_EQ(cnt.localLoadBytes, (taps + points) * 4);
            expectMatchesInterpreter(k, cnt);
        }
}

TEST(CountsClosedForm, FlattenedConvCountingTimeDoesNotGrowWithTheBatch) {
    // MobileNetV2's first depthwise layer at batch 1 and 32: 0.4 M and 12.8 M output points.
    for (const bool gpu : {false, true}) {
        SCOPED_TRACE(gpu ? "gpu" : "cpu");
        KernelCounts one, many;
        const double t1 = secondsOf([&] { one = countKernel(flatDepthwiseKernel(1, 32, 112, 112, gpu)); });
        const double t32 = secondsOf([&] { many = countKernel(flatDepthwiseKernel(32, 32, 112, 112, gpu)); });
        EXPECT_TRUE(many.exact);
        EXPECT_EQ(one.flops, 2.0 * 32 * (3 * 112 - 2) * (3 * 112 - 2));
        EXPECT_EQ(many.flops, 32 * one.flops);
        EXPECT_EQ(many.loadBytes, 32 * one.loadBytes);
        EXPECT_LT(t32, 0.5) << "batch 1 took " << t1 << " s";
    }
}

/// The GEMM template's MMA path in miniature: blocks over tiles of 48 rows of an m x 8 output,
/// 128 threads = 4 warps of which 3 work (idle-warp guard), one Mma per working lane, then each
/// lane stores its 4 accumulator elements where row < m and column < 7 (lane-dependent guards).
Kernel warpTileKernel(std::int64_t m) {
    Kernel k;
    k.name = "warp_tiles";
    const std::int64_t tiles = (m + 47) / 48;
    const int a = addParam(k, "A", DType::F32, {tiles * 48, 8}, BufferRole::Input);
    const int bm = addParam(k, "B", DType::F32, {8, 8}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {m, 8}, BufferRole::Output);
    BufferDecl accDecl;
    accDecl.name = "acc";
    accDecl.scope = MemoryScope::Local;
    accDecl.shape = {128, 1, 4};
    accDecl.perThread = true;
    const int acc = k.addBuffer(accDecl);
    const Var b = k.newVar("b"), t = k.newVar("t"), t2 = k.newVar("t"), r = k.newVar("r"), r2 = k.newVar("r"),
              warp = k.newVar("warp"), lane = k.newVar("lane"), row = k.newVar("row");
    const Expr B = varRef(b), T = varRef(t), T2 = varRef(t2), R = varRef(r), R2 = varRef(r2), WARP = varRef(warp),
               LANE = varRef(lane), ROW = varRef(row);
    lower::MmaInfo info;
    info.precision = lower::MmaPrecision::Tf32x3;
    info.lane = LANE;
    info.a = {a, {B * intImm(48) + WARP * intImm(16), intImm(0)}, {{1, 0}, {0, 1}}};
    info.b = {bm, {intImm(0), intImm(0)}, {{1, 0}, {0, 1}}};
    const Expr col = (LANE % intImm(4)) * intImm(2) + R2 % intImm(2);
    const Stmt storeOut = forLoop(
        r2, intImm(4),
        let(row, B * intImm(48) + WARP * intImm(16) + LANE / intImm(4) + (R2 / intImm(2)) * intImm(8),
            ifThen(ROW < intImm(m) && col < intImm(7), store(y, {ROW, col}, load(acc, DType::F32, {T2, intImm(0), R2})))));
    const Stmt work = let(warp, T2 / intImm(32),
                          let(lane, T2 % intImm(32),
                              ifThen(WARP < intImm(3), seq({lower::mma(acc, {T2, intImm(0), intImm(0)}, info), storeOut}))));
    k.body = allocate(acc, forLoop(b, intImm(tiles),
                                   seq({forLoop(t, intImm(128), forLoop(r, intImm(4), store(acc, {T, intImm(0), R}, floatImm(0.0))),
                                                ForKind::Threads),
                                        forLoop(t2, intImm(128), work, ForKind::Threads)}),
                                   ForKind::Blocks));
    return k;
}

TEST(CountsClosedForm, WarpLaneGuardsAndMmaMatchOracles) {
    for (const std::int64_t m : {48, 50, 61, 100, 143}) {
        SCOPED_TRACE(m);
        const Kernel k = warpTileKernel(m);
        const KernelCounts c = expectMatchesOracles(k);
        const std::int64_t tiles = (m + 47) / 48;
        EXPECT_TRUE(c.exact);
        EXPECT_EQ(c.flops, static_cast<double>(tiles * 96 * 64));
        EXPECT_EQ(c.storeBytes, m * 7 * 4);  // every element of the first 7 columns once
        expectMatchesInterpreter(k, c);
    }
    const KernelCounts big = countKernel(warpTileKernel(32 * 112 * 112 + 5));
    EXPECT_EQ(big.storeBytes, (32 * 112 * 112 + 5) * 7 * 4);
}

TEST(CountsClosedForm, MinMaxBoundsDivisionsAndPeriodicExtentsMatchOracles) {
    for (const std::int64_t n : {1, 2, 9, 40, 97}) {
        SCOPED_TRACE(n);
        Kernel k;
        k.name = "band";
        const int x = addParam(k, "X", DType::F32, {n + 4}, BufferRole::Input);
        const int y = addParam(k, "Y", DType::F32, {n}, BufferRole::Output);
        const int z = addParam(k, "Z", DType::F32, {n}, BufferRole::Output);
        const int acc = addTemp(k, "acc", DType::F32, {});
        const Var i = k.newVar("i"), lo = k.newVar("lo"), hi = k.newVar("hi"), j = k.newVar("j"), q = k.newVar("q"), e = k.newVar("e");
        const Expr I = varRef(i), LO = varRef(lo), HI = varRef(hi), J = varRef(j), Q = varRef(q);
        const Expr sum = load(acc, DType::F32, {});
        // a band of width 5 clipped by min/max; a Select on (i / 7) % 3; a truncating division
        // of a negative-going numerator and a floor modulo; an extent with period 5
        const Stmt band = let(lo, lower::maxOf(I - intImm(2), intImm(0)),
                              let(hi, lower::minOf(I + intImm(2), intImm(n - 1)),
                                  forLoop(j, HI - LO + intImm(1), store(acc, {}, sum + load(x, DType::F32, {LO + J})))));
        const Expr periodicArm = select(lower::binary(lower::BinaryOp::Eq, (I / intImm(7)) % intImm(3), intImm(0)),
                                        sum * floatImm(2.0), sum);
        const Expr cond = lower::binary(lower::BinaryOp::Eq, Q % intImm(4), intImm(1)) ||
                          lower::binary(lower::BinaryOp::FloorMod, I - intImm(13), intImm(5)) < intImm(2);
        const Stmt guarded = let(q, (I - intImm(20)) / intImm(6), ifThen(cond, store(z, {I}, load(x, DType::F32, {I}) + floatImm(1.0))));
        const Stmt periodicLoop = forLoop(e, I % intImm(5) + intImm(1), store(z, {I}, load(x, DType::F32, {I + varRef(e)}) * floatImm(3.0)));
        k.body = forLoop(i, intImm(n),
                         allocate(acc, seq({store(acc, {}, floatImm(0.0)), band, store(y, {I}, periodicArm), guarded, periodicLoop})));
        const KernelCounts c = expectMatchesOracles(k);
        EXPECT_TRUE(c.exact);
        expectMatchesInterpreter(k, c);
    }
}

TEST(CountsClosedForm, DataDependentBranchesUnderPeriodicGuardsMatchOracles) {
    for (const std::int64_t n : {5, 24, 121}) {
        SCOPED_TRACE(n);
        Kernel k;
        k.name = "mixed";
        const int x = addParam(k, "X", DType::F32, {n}, BufferRole::Input);
        const int y = addParam(k, "Y", DType::F32, {n}, BufferRole::Output);
        const Var i = k.newVar("i");
        const Expr I = varRef(i), xv = load(x, DType::F32, {I});
        // i % 6 < 4 decides whether the load in the condition runs; the load decides the branch
        k.body = forLoop(i, intImm(n),
                         ifThen(I % intImm(6) < intImm(4) && xv > floatImm(0.0), store(y, {I}, lower::call(Intrinsic::Exp, {xv})),
                                store(y, {I}, select(I % intImm(3) < intImm(1), xv * floatImm(2.0) + floatImm(1.0), xv))));
        const KernelCounts c = expectMatchesOracles(k);
        EXPECT_FALSE(c.exact);
        // i % 6 < 4: the load in the condition, then the larger branch; else the else branch
        std::int64_t loads = 0;
        double flops = 0;
        for (std::int64_t v = 0; v < n; ++v) {
            const double elseFlops = v % 3 < 1 ? 2 : 0;
            if (v % 6 < 4) {
                loads += 2;
                flops += std::max(1.0, elseFlops);
            } else {
                loads += 1;
                flops += elseFlops;
            }
        }
        EXPECT_EQ(c.loadBytes, loads * 4);
        EXPECT_EQ(c.flops, flops);
    }
}

}  // namespace
}  // namespace tessera::test
