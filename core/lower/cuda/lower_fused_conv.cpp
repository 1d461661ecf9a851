// Fused convolution-chain kernels on CUDA (issue 6; FCM, Qararyah et al. 2024; semantics.md §2.5):
// lower_fused.h lowerConvChainCuda, which lowerConvChain calls for the CUDA target. Two 2-D NCHW
// f32 convolutions, `first` -> elementwise `between` ops -> `second`, in one kernel whose
// intermediate tile never reaches global memory. dw-pw chains take the GEMM form
// (lower_fused_conv_gpu.h) where it applies; the others, and dw-pw otherwise, the tile kernel below.
//
// Kinds: dw-pw (depthwise k x k, any stride/pad/dilation, then 1x1), pw-dw (1x1, then depthwise
// with multiplier 1), pw-pw. Biases optional. Names below: X [N,C,H,W] -> T [N,Cm,H1,W1]
// (first conv + between ops) -> Y [N,K,H2,W2].
//
// Work split (both targets): a worker (CUDA block, CPU parallel iteration) owns one image n, one
// output tile of th x tw pixels of Y and one chunk of output channels. The intermediate it needs
// is the *region* of T under that tile: the tile itself when `second` is pointwise, the tile's
// halo ((th-1)*s+(kh-1)*d+1 rows ...) when it is depthwise; out-of-image region pixels are 0 (the
// second conv's zero padding).
//
// CUDA, second pointwise (dw-pw, pw-pw):
//   blocks for w in N x tilesH x tilesW x kChunks         (grid; the K chunk fastest: blocks on the
//                                                         same input tile run together, L2 reuse)
//     alloc Ts: f32[Cc, Ppad] shared, W2s: f32[Cc, Kc] shared, acc: f32[threads, Rk, Rp] per-thread
//     threads: acc = 0
//     for each chunk of Cc intermediate channels:
//       threads: Ts[c][q] = between(first conv at (c, region pixel q)) (0 outside; consecutive
//                threads take consecutive pixels: coalesced X reads along W), W2s[c][k] = W2[k, c]
//       barrier
//       threads t = tk * TP + tp: for c: a[i] = Ts[c][tp + i*TP], b[j] = W2s[c][tk*Rk + j];
//                acc[t][j][i] += b[j] * a[i]     (Rp pixels TP apart: conflict-free shared reads and
//                coalesced stores; the Rk filters are broadcast reads)
//       barrier
//     threads: Y[n, k, pixel] = acc + B2[k] (guarded at the edges), each element once
// CUDA, second depthwise (pw-dw): the chunk is Cc channels of T (= of Y); one phase fills
// Ts[c][region pixel] (the pointwise reduction over C per element), barrier, one phase computes
// each output of the tile from Ts and stores it.
// CPU: the same split with a Parallel loop over the workers and Local tiles, in
// core/lower/cpu/lower_fused_conv_cpu.cpp (lowerConvChainCpu; validation shared through
// lower_fused_conv_common.h).
// The output is only stored, never loaded, and each element exactly once (lowerGroup's epilogue
// rewrite applies).

#include <algorithm>
#include <string>

#include "core/lower/detail/lower_fused_conv_common.h"
#include "core/lower/detail/lower_fused_conv_gpu.h"

namespace tessera::lower::detail {

namespace {

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t roundUp(std::int64_t a, std::int64_t m) { return ceilDiv(a, m) * m; }
std::int64_t pow2AtMost(std::int64_t v) {
    std::int64_t p = 1;
    while (p * 2 <= v) p *= 2;
    return p;
}

std::string dimsText(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

/// Blocks the CUDA plans aim for at least (2 per SM of a 132-SM H200).
constexpr std::int64_t kMinBlocks = 264;
/// Static shared memory the CUDA plans stay under (bytes; the generator's limit is 48 KiB).
constexpr std::int64_t kSharedBudget = 40 * 1024;

/// The tile plan of one fused kernel.
struct ChainPlan {
    std::int64_t th = 1, tw = 1;          ///< output tile (pixels of Y)
    std::int64_t P = 1, Ppad = 1;         ///< tile pixels, padded to a multiple of 32
    std::int64_t rh = 1, rw = 1, Q = 1;   ///< region of T under the tile (rows, cols, pixels)
    std::int64_t Qpad = 1;
    std::int64_t Kc = 1;                  ///< output channels per worker (pw-dw: = Cc)
    std::int64_t Cc = 1;                  ///< intermediate channels per chunk
    std::int64_t Rk = 1, Rp = 1;          ///< second pointwise: outputs per thread (filters x pixels)
    std::int64_t TP = 1, TK = 1;          ///< threads along pixels / filters
    std::int64_t threads = 1;             ///< threads per block
    std::int64_t tilesH = 1, tilesW = 1, kChunks = 1;
};

/// The static shared memory of a block: Ts, plus W2s for a pointwise second conv (bytes).
std::int64_t sharedBytes(const ChainPlan& pl, bool secondDw) { return 4 * (pl.Cc * pl.Qpad + (secondDw ? 0 : pl.Cc * pl.Kc)); }

/// a && b where either may be null (no condition).
Expr andMaybe(const Expr& a, const Expr& b) {
    if (!a) return b;
    if (!b) return a;
    return a && b;
}

Stmt guarded(const Expr& cond, Stmt s) { return cond ? ifThen(cond, std::move(s)) : s; }

/// The tile plan for `chain` (file comment): the output tile (the planner's, else the one that
/// wastes the fewest pixel slots), shrunk until the grid has kMinBlocks blocks; then the threads
/// and the chunk of intermediate channels that fits kSharedBudget. An error when the tile does
/// not fit one block.
support::Expected<ChainPlan> planChainTiles(const ConvChainSpec& chain, const ConvChainInfo& info, const std::string& where) {
    const ChainConv& A = info.A;
    const ChainConv& B = info.B;
    const bool firstDw = info.firstDw;
    const bool secondDw = info.secondDw;
    const std::int64_t N = info.N, Cm = info.Cm, K = info.K, H2 = info.H2, W2 = info.W2;
    const std::int64_t s2h = B.geom.s[0], s2w = B.geom.s[1], k2h = B.geom.k[0], k2w = B.geom.k[1];
    const std::int64_t d2h = B.geom.d[0], d2w = B.geom.d[1];
    ChainPlan pl;
    const schedule::FusionTile& ft = chain.tile;
    const bool userTile = ft.h > 0 && ft.w > 0;
    if (userTile) {
        pl.th = std::min(ft.h, H2);
        pl.tw = std::min(ft.w, W2);
    } else {
        // The tile minimising the pixel slots computed (tiles x P padded to 32: ragged edges and
        // padding are wasted work) plus a quarter of the input pixels read (halos, mostly L2 hits),
        // P <= 128; narrow tiles (< 8 wide: short coalesced rows) cost 10% more.
        const std::int64_t sh = firstDw ? A.geom.s[0] : s2h, sw = firstDw ? A.geom.s[1] : s2w;
        const std::int64_t kh = firstDw ? A.geom.k[0] : k2h, kw = firstDw ? A.geom.k[1] : k2w;
        double best = -1;
        for (std::int64_t tw = std::min<std::int64_t>(W2, 32); tw >= 1; --tw)  // ties: the widest
            for (std::int64_t th = 1; th <= H2 && th * tw <= 128; ++th) {
                if (th * tw < std::min<std::int64_t>(32, H2 * W2) && !(th == H2 && tw == W2)) continue;
                const double tiles = static_cast<double>(ceilDiv(H2, th) * ceilDiv(W2, tw));
                const double region = static_cast<double>(((th - 1) * sh + kh) * ((tw - 1) * sw + kw)) /
                                      static_cast<double>(sh * sw);
                double cost = tiles * (static_cast<double>(roundUp(th * tw, 32)) + 0.25 * region);
                if (tw < 8 && tw < W2) cost *= 1.1;
                if (best < 0 || cost < best - 1e-9) {
                    best = cost;
                    pl.th = th;
                    pl.tw = tw;
                }
            }
    }
    // Keep tiles within what the block can hold (a planner's tile that is too large is shrunk).
    while (pl.th * pl.tw > 256 && pl.th > 1) pl.th = (pl.th + 1) / 2;
    while (pl.th * pl.tw > 256 && pl.tw > 1) pl.tw = (pl.tw + 1) / 2;
    if (secondDw) {
        pl.Cc = std::min<std::int64_t>(Cm, ft.depth > 0 ? ft.depth : 32);
        pl.Kc = pl.Cc;
    } else {
        pl.Cc = std::min<std::int64_t>(Cm, ft.depth > 0 ? ft.depth : 32);
        pl.Kc = std::min<std::int64_t>(K, ft.filters > 0 ? std::min<std::int64_t>(ft.filters, 64) : 32);
    }
    auto refresh = [&] {
        pl.P = pl.th * pl.tw;
        pl.tilesH = ceilDiv(H2, pl.th);
        pl.tilesW = ceilDiv(W2, pl.tw);
        pl.kChunks = ceilDiv(secondDw ? Cm : K, pl.Kc);
        pl.rh = secondDw ? (pl.th - 1) * s2h + (k2h - 1) * d2h + 1 : pl.th;
        pl.rw = secondDw ? (pl.tw - 1) * s2w + (k2w - 1) * d2w + 1 : pl.tw;
        pl.Q = pl.rh * pl.rw;
    };
    refresh();
    if (!userTile) {
        // Enough blocks for the GPU: fewer filters per block first (recomputes the cheap first
        // conv), then shorter tiles.
        while (N * pl.tilesH * pl.tilesW * pl.kChunks < kMinBlocks) {
            if (!secondDw && pl.Kc > 8) pl.Kc = (pl.Kc + 1) / 2;
            else if (secondDw && pl.Cc > 8) pl.Kc = pl.Cc = (pl.Cc + 1) / 2;
            else if (pl.th > 1) pl.th = (pl.th + 1) / 2;
            else if (pl.tw > 8) pl.tw = (pl.tw + 1) / 2;
            else break;
            refresh();
        }
    }
    refresh();
    pl.Ppad = roundUp(pl.P, 32);
    pl.Qpad = secondDw ? pl.Q : pl.Ppad;
    if (!secondDw) {
        const std::int64_t outputs = pl.Ppad * pl.Kc;
        const std::int64_t R = std::min<std::int64_t>(16, pow2AtMost(std::max<std::int64_t>(1, outputs / 256)));
        pl.Rk = 1;
        for (std::int64_t r = std::min<std::int64_t>(4, R); r >= 1; r /= 2)
            if (pl.Kc % r == 0) {
                pl.Rk = r;
                break;
            }
        pl.Rp = std::max<std::int64_t>(1, R / pl.Rk);
        while (pl.Ppad % pl.Rp != 0) pl.Rp /= 2;
        pl.TP = pl.Ppad / pl.Rp;
        pl.TK = pl.Kc / pl.Rk;
        pl.threads = pl.TP * pl.TK;
    } else {
        pl.threads = std::min<std::int64_t>(256, roundUp(pl.Cc * pl.P, 32));
    }
    // Shared: Ts (+ W2s for a pointwise second conv) within the budget.
    while (sharedBytes(pl, secondDw) > kSharedBudget && pl.Cc > 1) {
        pl.Cc = (pl.Cc + 1) / 2;
        if (secondDw) pl.Kc = pl.Cc;
        refresh();
    }
    if (pl.threads > 1024 || sharedBytes(pl, secondDw) > kSharedBudget)
        return chainError(where, "conv chain: tile " + std::to_string(pl.th) + "x" + std::to_string(pl.tw) +
                                     " does not fit one CUDA block");
    return pl;
}

/// The phases of one block of the tile kernel for plan `pl`, into the kernel `ck` begun. Each
/// function creates its variables as the generated code uses them, so they run in that order.
class ChainTileEmitter {
public:
    ChainTileEmitter(const ConvChainInfo& info, const ChainPlan& pl, ChainKernel& ck);
    /// The grid loop over the workers (one block each); null when an op between the convs does
    /// not inline (errors() says why).
    Stmt emit(const std::string& gridText);
    const std::string& blockText() const { return m_blockText; }
    const support::DiagnosticList& errors() const { return m_betweenErrors; }

private:
    int addLocal(const std::string& name, std::vector<std::int64_t> shape, MemoryScope scope, bool perThread = false);
    Stmt fillItem(const ChainWorker& wk, const Expr& c0, const Expr& c, const Expr& q);
    Stmt threads(const std::function<Stmt(const Expr&)>& fn);
    Stmt spread(const Expr& t, std::int64_t total, const std::function<Stmt(const Expr&)>& fn);
    void outPixel(const ChainWorker& wk, const Expr& p, Expr* oh, Expr* ow) const;
    Expr pixelGuard(const Expr& p, const Expr& oh, const Expr& ow) const;
    Expr dwSecond(const Expr& c, const Expr& cg, const Expr& p) const;
    Stmt perOut(const std::function<Stmt(const Expr& j, const Expr& i)>& fn);
    Stmt depthwiseSecondBlock(const ChainWorker& wk);
    Stmt pointwiseSecondBlock(const ChainWorker& wk);
    Stmt stageChunk(const ChainWorker& wk, const Expr& c0, int W2s);
    Stmt accumulateChunk(int acc, int aReg, int bReg, int W2s);
    Stmt storeOutputs(const ChainWorker& wk, int acc);

    const ConvChainInfo& m_info;
    const ChainPlan& pl;
    Kernel& k;
    const ChainKernel& m_ck;
    const DType f32 = DType::F32;
    const Expr zero = floatImm(0.0, f32);
    const int X, W1b, B1b, W2b, B2b, Yb;
    const bool firstDw, secondDw;
    const std::int64_t C, H, W, Cm, H1, W1, K, H2, W2;
    const std::int64_t s2h, s2w, k2h, k2w, d2h, d2w, p2h, p2w;
    std::string m_blockText;
    support::DiagnosticList m_betweenErrors;
    int Ts = -1;
};

ChainTileEmitter::ChainTileEmitter(const ConvChainInfo& info, const ChainPlan& plan, ChainKernel& ck)
    : m_info(info), pl(plan), k(ck.lk.kernel), m_ck(ck), X(ck.X), W1b(ck.W1b), B1b(ck.B1b), W2b(ck.W2b), B2b(ck.B2b),
      Yb(ck.Yb), firstDw(info.firstDw), secondDw(info.secondDw), C(info.C), H(info.H), W(info.W), Cm(info.Cm),
      H1(info.H1), W1(info.W1), K(info.K), H2(info.H2), W2(info.W2), s2h(info.B.geom.s[0]), s2w(info.B.geom.s[1]),
      k2h(info.B.geom.k[0]), k2w(info.B.geom.k[1]), d2h(info.B.geom.d[0]), d2w(info.B.geom.d[1]),
      p2h(info.B.geom.pb[0]), p2w(info.B.geom.pb[1]) {
    m_blockText = secondDw ? "spatial(" + std::to_string(pl.threads) + ")"
                           : "spatial(" + std::to_string(pl.TK) + "," + std::to_string(pl.TP) + ") * repeat(" +
                                 std::to_string(pl.Rk) + "," + std::to_string(pl.Rp) + ")";
    Ts = addLocal("Ts", {pl.Cc, pl.Qpad}, MemoryScope::Shared);
}

int ChainTileEmitter::addLocal(const std::string& name, std::vector<std::int64_t> shape, MemoryScope scope, bool perThread) {
    BufferDecl b;
    b.name = name;
    b.dtype = f32;
    b.scope = scope;
    b.shape = std::move(shape);
    b.perThread = perThread;
    return k.addBuffer(std::move(b));
}

// Intermediate T at (channel c0 + c, region pixel q of the worker) into Ts[c][q]: between(first
// conv) for valid pixels, 0 otherwise.
Stmt ChainTileEmitter::fillItem(const ChainWorker& wk, const Expr& c0, const Expr& c, const Expr& q) {
    const ChainConv& A = m_info.A;
    const Expr cg = c0 + c;
    const Expr r = q / intImm(pl.rw), col = q % intImm(pl.rw);
    const Expr ih = secondDw ? wk.oh0 * intImm(s2h) - intImm(p2h) + r : wk.oh0 + r;
    const Expr iw = secondDw ? wk.ow0 * intImm(s2w) - intImm(p2w) + col : wk.ow0 + col;
    Expr valid;
    auto andC = [&](const Expr& e) { valid = valid ? (valid && e) : e; };
    if (pl.Qpad > pl.Q) andC(q < intImm(pl.Q));
    if (Cm % pl.Cc != 0) andC(cg < intImm(Cm));
    if (secondDw) {
        andC(ih >= intImm(0));
        andC(iw >= intImm(0));
    }
    if (secondDw || H1 % pl.th != 0) andC(ih < intImm(H1));
    if (secondDw || W1 % pl.tw != 0) andC(iw < intImm(W1));
    Stmt compute;
    const Var a = k.newVar("a", f32);
    auto finish = [&](const Expr& value) -> Stmt {
        auto bv = applyBetween(m_ck, m_info, varRef(a));
        if (!bv) {
            m_betweenErrors.append(bv.diagnostics());
            return nullptr;
        }
        return let(a, value, store(Ts, {c, q}, *bv));
    };
    if (firstDw) {
        const WindowGeom& ga = A.geom;
        Expr sum = B1b >= 0 ? load(B1b, f32, {cg}) : Expr();
        for (std::int64_t kh = 0; kh < ga.k[0]; ++kh) {
            for (std::int64_t kw = 0; kw < ga.k[1]; ++kw) {
                const Expr xh = ih * intImm(ga.s[0]) + intImm(kh * ga.d[0] - ga.pb[0]);
                const Expr xw = iw * intImm(ga.s[1]) + intImm(kw * ga.d[1] - ga.pb[1]);
                // Taps that can leave the input (padding, or a window past the end); the
                // intermediate pixel itself is inside T here (the `valid` branch).
                const Expr inside = chainTapGuard(ga, kh, kw, xh, xw, H1, W1, H, W);
                Expr x = load(X, f32, {wk.n, cg, xh, xw});
                if (inside) x = select(inside, x, zero);
                const Expr term = load(W1b, f32, {cg, intImm(0), intImm(kh), intImm(kw)}) * x;
                sum = sum ? sum + term : term;
            }
        }
        compute = finish(sum);
    } else {
        // Pointwise first conv: a serial reduction over the C input channels.
        const int accB = addLocal("t1", {1}, MemoryScope::Local);
        const Var ci = k.newVar("ci");
        Stmt red = forLoop(ci, intImm(C),
                           store(accB, {intImm(0)},
                                 load(accB, f32, {intImm(0)}) +
                                     load(W1b, f32, {cg, varRef(ci), intImm(0), intImm(0)}) *
                                         load(X, f32, {wk.n, varRef(ci), ih, iw})),
                           ForKind::Unroll, 4);
        Stmt done = finish(load(accB, f32, {intImm(0)}));
        if (!done) return nullptr;
        compute = allocate(accB, seq({store(accB, {intImm(0)}, B1b >= 0 ? load(B1b, f32, {cg}) : zero), red, done}));
    }
    if (!compute) return nullptr;
    return valid ? ifThen(valid, compute, store(Ts, {c, q}, zero)) : compute;
}

// A phase: every thread t of the block runs fn(t).
Stmt ChainTileEmitter::threads(const std::function<Stmt(const Expr&)>& fn) {
    const Var t = k.newVar("t");
    Stmt b = fn(varRef(t));
    if (!b) return nullptr;
    return forLoop(t, intImm(pl.threads), b, ForKind::Threads, 0, "block = " + m_blockText);
}

// items [0, total) spread over the threads: item = t + i * threads.
Stmt ChainTileEmitter::spread(const Expr& t, std::int64_t total, const std::function<Stmt(const Expr&)>& fn) {
    const std::int64_t per = ceilDiv(total, pl.threads);
    return loopOver(k, "i", intImm(per), per <= 8 ? ForKind::Unroll : ForKind::Serial, [&](const Expr& i) -> Stmt {
        const Expr item = t + i * intImm(pl.threads);
        Stmt s2 = fn(item);
        if (!s2) return nullptr;
        return total % pl.threads != 0 ? ifThen(item < intImm(total), s2) : s2;
    });
}

void ChainTileEmitter::outPixel(const ChainWorker& wk, const Expr& p, Expr* oh, Expr* ow) const {
    *oh = wk.oh0 + p / intImm(pl.tw);
    *ow = wk.ow0 + p % intImm(pl.tw);
}

Expr ChainTileEmitter::pixelGuard(const Expr& p, const Expr& oh, const Expr& ow) const {
    Expr g2;
    auto andG = [&](const Expr& e) { g2 = g2 ? (g2 && e) : e; };
    if (pl.Ppad > pl.P) andG(p < intImm(pl.P));
    if (H2 % pl.th != 0) andG(oh < intImm(H2));
    if (W2 % pl.tw != 0) andG(ow < intImm(W2));
    return g2;
}

// Depthwise second conv: output (channel cg, pixel p) from Ts.
Expr ChainTileEmitter::dwSecond(const Expr& c, const Expr& cg, const Expr& p) const {
    const Expr pr = p / intImm(pl.tw), pc = p % intImm(pl.tw);
    Expr sum = B2b >= 0 ? load(B2b, f32, {cg}) : Expr();
    for (std::int64_t kh = 0; kh < k2h; ++kh)
        for (std::int64_t kw = 0; kw < k2w; ++kw) {
            const Expr q = (pr * intImm(s2h) + intImm(kh * d2h)) * intImm(pl.rw) + pc * intImm(s2w) + intImm(kw * d2w);
            const Expr term = load(W2b, f32, {cg, intImm(0), intImm(kh), intImm(kw)}) * load(Ts, f32, {c, q});
            sum = sum ? sum + term : term;
        }
    return sum;
}

// A thread's Rk x Rp outputs (filters j, pixels i), unrolled.
Stmt ChainTileEmitter::perOut(const std::function<Stmt(const Expr& j, const Expr& i)>& fn) {
    return loopOver(k, "j", intImm(pl.Rk), ForKind::Unroll, [&](const Expr& j) {
        return loopOver(k, "i", intImm(pl.Rp), ForKind::Unroll, [&](const Expr& i) { return fn(j, i); });
    });
}

// pw-dw: one chunk of Cc channels of T (and Y) starting at k0: fill Ts over the region, barrier,
// each output of the tile from Ts.
Stmt ChainTileEmitter::depthwiseSecondBlock(const ChainWorker& wk) {
    Stmt fill = threads([&](const Expr& t) {
        return spread(t, pl.Cc * pl.Q, [&](const Expr& item) {
            return fillItem(wk, wk.k0, item / intImm(pl.Q), item % intImm(pl.Q));
        });
    });
    Stmt out = threads([&](const Expr& t) {
        return spread(t, pl.Cc * pl.P, [&](const Expr& item) -> Stmt {
            const Expr c = item / intImm(pl.P), p = item % intImm(pl.P);
            const Expr cg = wk.k0 + c;
            Expr oh, ow;
            outPixel(wk, p, &oh, &ow);
            Expr cond = pixelGuard(p, oh, ow);
            if (Cm % pl.Cc != 0) cond = andMaybe(cond, cg < intImm(Cm));
            return guarded(cond, store(Yb, {wk.n, cg, oh, ow}, dwSecond(c, cg, p)));
        });
    });
    if (!fill || !out) return nullptr;
    return allocate(Ts, seq({fill, barrier(), out}));
}

// Staging one chunk of Cc intermediate channels from c0: Ts over the tile and the chunk's
// pointwise weights W2s[c][k] = W2[k0 + k, c0 + c] (0 past Cm or K).
Stmt ChainTileEmitter::stageChunk(const ChainWorker& wk, const Expr& c0, int W2s) {
    return threads([&](const Expr& t) -> Stmt {
        Stmt tile;
        if (pl.threads % pl.Ppad == 0) {
            // Each thread keeps one pixel (its coordinates and guards are loop-invariant)
            // and takes every (threads / Ppad)-th channel.
            const std::int64_t step = pl.threads / pl.Ppad, per = ceilDiv(pl.Cc, step);
            const Var p = k.newVar("p"), cq = k.newVar("cq");
            Stmt chans = loopOver(k, "i", intImm(per), per <= 16 ? ForKind::Unroll : ForKind::Serial, [&](const Expr& i) -> Stmt {
                const Expr c = varRef(cq) + i * intImm(step);
                Stmt one = fillItem(wk, c0, c, varRef(p));
                if (!one) return nullptr;
                return pl.Cc % step != 0 ? ifThen(c < intImm(pl.Cc), one) : one;
            });
            if (chans) tile = let(p, t % intImm(pl.Ppad), let(cq, t / intImm(pl.Ppad), chans));
        } else {
            tile = spread(t, pl.Cc * pl.Ppad, [&](const Expr& item) {
                return fillItem(wk, c0, item / intImm(pl.Ppad), item % intImm(pl.Ppad));
            });
        }
        Stmt wts = spread(t, pl.Cc * pl.Kc, [&](const Expr& item) {
            const Expr c = item % intImm(pl.Cc), kk = item / intImm(pl.Cc);
            Expr cond;
            if (Cm % pl.Cc != 0) cond = c0 + c < intImm(Cm);
            if (K % pl.Kc != 0) cond = andMaybe(cond, wk.k0 + kk < intImm(K));
            Expr v = load(W2b, f32, {wk.k0 + kk, c0 + c, intImm(0), intImm(0)});
            if (cond) v = select(cond, v, zero);
            return store(W2s, {c, kk}, v);
        });
        if (!tile || !wts) return nullptr;
        return seq({tile, wts});
    });
}

// The chunk's products: thread t = tk * TP + tp, per channel c: a[i] = Ts[c][tp + i*TP],
// b[j] = W2s[c][tk*Rk + j], acc[t][j][i] += b[j] * a[i].
Stmt ChainTileEmitter::accumulateChunk(int acc, int aReg, int bReg, int W2s) {
    return threads([&](const Expr& t) {
        const Var tp = k.newVar("tp"), tk = k.newVar("tk");
        const Var c = k.newVar("c");
        Stmt step = seq({loopOver(k, "i", intImm(pl.Rp), ForKind::Unroll,
                                  [&](const Expr& i) {
                                      return store(aReg, {i}, load(Ts, f32, {varRef(c), varRef(tp) + i * intImm(pl.TP)}));
                                  }),
                         loopOver(k, "j", intImm(pl.Rk), ForKind::Unroll,
                                  [&](const Expr& j) {
                                      return store(bReg, {j}, load(W2s, f32, {varRef(c), varRef(tk) * intImm(pl.Rk) + j}));
                                  }),
                         perOut([&](const Expr& j, const Expr& i) {
                             const std::vector<Expr> idx{t, j, i};
                             return store(acc, idx, load(acc, f32, idx) + load(bReg, f32, {j}) * load(aReg, f32, {i}));
                         })});
        Stmt loop = forLoop(c, intImm(pl.Cc), step, ForKind::Unroll, std::min<std::int64_t>(pl.Cc, 8));
        return let(tp, t % intImm(pl.TP), let(tk, t / intImm(pl.TP), allocate(aReg, allocate(bReg, loop))));
    });
}

// Y[n, k, pixel] = acc + B2[k], guarded at the edges; each element once.
Stmt ChainTileEmitter::storeOutputs(const ChainWorker& wk, int acc) {
    return threads([&](const Expr& t) {
        const Var tp = k.newVar("tp"), tk = k.newVar("tk");
        Stmt st = perOut([&](const Expr& j, const Expr& i) {
            const Expr kg = wk.k0 + varRef(tk) * intImm(pl.Rk) + j;
            const Expr p = varRef(tp) + i * intImm(pl.TP);
            Expr oh, ow;
            outPixel(wk, p, &oh, &ow);
            Expr cond = pixelGuard(p, oh, ow);
            if (K % pl.Kc != 0) cond = andMaybe(cond, kg < intImm(K));
            Expr v = load(acc, f32, {t, j, i});
            if (B2b >= 0) v = v + load(B2b, f32, {kg});
            return guarded(cond, store(Yb, {wk.n, kg, oh, ow}, v));
        });
        return let(tp, t % intImm(pl.TP), let(tk, t / intImm(pl.TP), st));
    });
}

// dw-pw, pw-pw: zero the accumulators; per chunk of intermediate channels stage, barrier,
// accumulate, barrier; store.
Stmt ChainTileEmitter::pointwiseSecondBlock(const ChainWorker& wk) {
    const int W2s = addLocal("W2s", {pl.Cc, pl.Kc}, MemoryScope::Shared);
    const int acc = addLocal("acc", {pl.threads, pl.Rk, pl.Rp}, MemoryScope::Local, true);
    const int aReg = addLocal("a", {pl.Rp}, MemoryScope::Local);
    const int bReg = addLocal("b", {pl.Rk}, MemoryScope::Local);
    Stmt init = threads([&](const Expr& t) {
        return perOut([&](const Expr& j, const Expr& i) { return store(acc, {t, j, i}, zero); });
    });
    const Var cb = k.newVar("cb");
    Stmt fill = stageChunk(wk, varRef(cb) * intImm(pl.Cc), W2s);
    Stmt compute = accumulateChunk(acc, aReg, bReg, W2s);
    Stmt out = storeOutputs(wk, acc);
    if (!fill || !compute) return nullptr;
    Stmt loop = forLoop(cb, intImm(ceilDiv(Cm, pl.Cc)), seq({fill, barrier(), compute, barrier()}), ForKind::Serial, 0,
                        "intermediate channels in chunks of " + std::to_string(pl.Cc));
    return allocate(Ts, allocate(W2s, allocate(acc, seq({init, loop, out}))));
}

Stmt ChainTileEmitter::emit(const std::string& gridText) {
    // Worker decomposition: w -> (n, tile row, tile col, chunk), chunk fastest.
    const std::int64_t workers = m_info.N * pl.tilesH * pl.tilesW * pl.kChunks;
    const Var wv = k.newVar("w");
    Stmt perBlock = withChainWorker(k, varRef(wv), pl.th, pl.tw, pl.Kc, pl.tilesH, pl.tilesW, pl.kChunks,
                                    [&](const ChainWorker& wk) { return secondDw ? depthwiseSecondBlock(wk) : pointwiseSecondBlock(wk); });
    if (!perBlock) return nullptr;
    return forLoop(wv, intImm(workers), perBlock, ForKind::Blocks, 0, "grid = " + gridText);
}

}  // namespace

support::Expected<LoweredKernel> lowerConvChainCuda(const ir::Graph& g, const ConvChainSpec& chain,
                                                    const ConvChainInfo& info, const LowerOptions& options,
                                                    const std::string& where) {
    // dw-pw: the GEMM form (lower_fused_conv_gpu.h); the tile kernel below for the others.
    if (useDwPwGemm(options, chain)) return lowerDwPwGemm(g, chain, info, options, where);
    auto planned = planChainTiles(chain, info, where);
    if (!planned) return planned.diagnostics();
    const ChainPlan& pl = *planned;
    auto begun = beginChainKernel(g, chain, info, options, where);
    if (!begun) return begun.diagnostics();
    ChainKernel& ck = *begun;
    Kernel& k = ck.lk.kernel;
    const bool secondDw = info.secondDw;
    ChainTileEmitter emitter(info, pl, ck);
    const std::string gridText = "spatial(" + std::to_string(info.N) + "," + std::to_string(pl.tilesH) + "," +
                                 std::to_string(pl.tilesW) + "," + std::to_string(pl.kChunks) + ")";
    Stmt body = emitter.emit(gridText);
    if (!body) return emitter.errors().hasErrors() ? emitter.errors() : chainError(where, "conv chain: lowering failed");
    k.body = body;
    k.mappings.push_back("grid = " + gridText);
    k.mappings.push_back("block = " + emitter.blockText());
    const std::string kindText = schedule::fusionKindName(chain.kind);
    k.notes.push_back("fused " + kindText + " chain: " + g.node(info.A.id).name + " -> " + g.node(info.B.id).name +
                      ", intermediate " + dimsText(info.A.ys) + " kept in shared memory");
    k.notes.push_back("tile " + std::to_string(pl.th) + "x" + std::to_string(pl.tw) + " output pixels" +
                      (secondDw ? " (intermediate region " + std::to_string(pl.rh) + "x" + std::to_string(pl.rw) + ")" : "") +
                      ", Cc = " + std::to_string(pl.Cc) + " intermediate channels per chunk, Kc = " + std::to_string(pl.Kc) +
                      " output channels per worker");
    if (!secondDw)
        k.notes.push_back(std::to_string(pl.threads) + " threads, each " + std::to_string(pl.Rk) + " filters x " +
                          std::to_string(pl.Rp) + " pixels (" + std::to_string(pl.TP) + " apart)");
    k.notes.push_back("shared " + std::to_string(sharedBytes(pl, secondDw)) + " bytes per block");
    return std::move(ck.lk);
}

}  // namespace tessera::lower::detail
