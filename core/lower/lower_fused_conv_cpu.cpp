// Fused convolution chains on the CPU (lower_fused.h lowerConvChainCpu; FCM, Qararyah et al.
// 2024; semantics.md §2.5). The chain X [N,C,H,W] -> T [N,Cm,H1,W1] -> Y [N,K,H2,W2] is split
// like the CUDA kernel (lower_fused_conv.cpp): a worker (one iteration of a Parallel loop) owns
// one image n, one output tile of th x tw pixels of Y (whole rows, P about 256 pixels) and one
// chunk of output channels; the intermediate region under the tile lives in a Local tile Ts.
// Second pointwise: Ts[Cc][P] and acc[Kc][P], pixel loops innermost and vectorised
// (acc[k][p] += W2[k][c] * Ts[c][p]); second depthwise: Ts[Cc][Q] over the halo region, then each
// output from it. The output is only stored, never loaded, each element exactly once.

#include <algorithm>
#include <string>

#include "core/lower/lower_fused_conv_common.h"

namespace tessera::lower::detail {

namespace {

/// Accumulator elements per worker tile (Kc x P), about an L2-friendly 32 KiB.
constexpr std::int64_t kCpuAccBudget = 8192;

/// The tile plan of one fused CPU kernel.
struct CpuChainPlan {
    std::int64_t th = 1, tw = 1;          ///< output tile (pixels of Y)
    std::int64_t P = 1;                   ///< tile pixels
    std::int64_t rh = 1, rw = 1, Q = 1;   ///< region of T under the tile (rows, cols, pixels)
    std::int64_t Kc = 1;                  ///< output channels per worker (pw-dw: = Cc)
    std::int64_t Cc = 1;                  ///< intermediate channels per chunk
    std::int64_t tilesH = 1, tilesW = 1, kChunks = 1;
};

}  // namespace

support::Expected<LoweredKernel> lowerConvChainCpu(const ir::Graph& g, const ConvChainSpec& chain,
                                                   const ConvChainInfo& info, const LowerOptions& options,
                                                   const std::string& where) {
    const ChainConv& A = info.A;
    const ChainConv& B = info.B;
    const ir::Node& nodeA = g.node(A.id);
    const ir::Node& nodeB = g.node(B.id);
    const bool firstDw = info.firstDw;
    const bool secondDw = info.secondDw;
    const std::int64_t N = info.N, C = info.C, H = info.H, W = info.W;
    const std::int64_t Cm = info.Cm, H1 = info.H1, W1 = info.W1;
    const std::int64_t K = info.K, H2 = info.H2, W2 = info.W2;
    const std::int64_t s2h = B.geom.s[0], s2w = B.geom.s[1], k2h = B.geom.k[0], k2w = B.geom.k[1];
    const std::int64_t d2h = B.geom.d[0], d2w = B.geom.d[1], p2h = B.geom.pb[0], p2w = B.geom.pb[1];

    // ---- plan ----
    CpuChainPlan pl;
    const schedule::FusionTile& ft = chain.tile;
    if (ft.h > 0 && ft.w > 0) {
        pl.th = std::min(ft.h, H2);
        pl.tw = std::min(ft.w, W2);
    } else {
        pl.tw = std::min<std::int64_t>(W2, 128);
        pl.th = std::max<std::int64_t>(1, std::min(H2, 256 / pl.tw));
    }
    // Keep tiles within what a worker holds (a planner's tile that is too large is shrunk).
    while (pl.th * pl.tw > 256 && pl.th > 1) pl.th = (pl.th + 1) / 2;
    while (pl.th * pl.tw > 256 && pl.tw > 1) pl.tw = (pl.tw + 1) / 2;
    pl.Cc = std::min<std::int64_t>(Cm, ft.depth > 0 ? ft.depth : 16);
    if (secondDw)
        pl.Kc = pl.Cc;
    else
        pl.Kc = std::min<std::int64_t>(K, ft.filters > 0 ? std::min<std::int64_t>(ft.filters, 64) : K);
    auto refresh = [&] {
        pl.P = pl.th * pl.tw;
        pl.tilesH = chainCeilDiv(H2, pl.th);
        pl.tilesW = chainCeilDiv(W2, pl.tw);
        pl.kChunks = chainCeilDiv(secondDw ? Cm : K, pl.Kc);
        pl.rh = secondDw ? (pl.th - 1) * s2h + (k2h - 1) * d2h + 1 : pl.th;
        pl.rw = secondDw ? (pl.tw - 1) * s2w + (k2w - 1) * d2w + 1 : pl.tw;
        pl.Q = pl.rh * pl.rw;
    };
    refresh();
    if (!secondDw) pl.Kc = std::min(pl.Kc, std::max<std::int64_t>(8, kCpuAccBudget / pl.P));
    refresh();
    const std::int64_t Qt = secondDw ? pl.Q : pl.P;  // pixels of a Ts row

    // ---- kernel and parameters ----
    auto begun = beginChainKernel(g, chain, info, options, where);
    if (!begun) return begun.diagnostics();
    ChainKernel& ck = *begun;
    LoweredKernel& lk = ck.lk;
    const int X = ck.X, W1b = ck.W1b, B1b = ck.B1b, W2b = ck.W2b, B2b = ck.B2b, Yb = ck.Yb;
    Kernel& k = lk.kernel;
    const DType f32 = DType::F32;
    const Expr zero = floatImm(0.0, f32);
    support::DiagnosticList betweenErrors;

    auto addLocal = [&](const std::string& name, std::vector<std::int64_t> shape) {
        BufferDecl b;
        b.name = name;
        b.dtype = f32;
        b.scope = MemoryScope::Local;
        b.shape = std::move(shape);
        return k.addBuffer(std::move(b));
    };
    const int Ts = addLocal("Ts", {pl.Cc, Qt});

    // Let-bound worker coordinates.
    struct Worker {
        Expr n, oh0, ow0, k0;
    };

    // Ts[c][q] = between(first conv) at (channel c0 + c, region pixel q of the worker) for valid
    // pixels, 0 otherwise (the second conv's zero padding).
    auto fillItem = [&](const Worker& wk, const Expr& c0, const Expr& c, const Expr& q) -> Stmt {
        const Expr cg = c0 + c;
        const Expr r = q / intImm(pl.rw), col = q % intImm(pl.rw);
        const Expr ih = secondDw ? wk.oh0 * intImm(s2h) - intImm(p2h) + r : wk.oh0 + r;
        const Expr iw = secondDw ? wk.ow0 * intImm(s2w) - intImm(p2w) + col : wk.ow0 + col;
        Expr valid;
        auto andC = [&](const Expr& e) { valid = valid ? (valid && e) : e; };
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
            auto bv = applyBetween(ck, info, varRef(a));
            if (!bv) {
                betweenErrors.append(bv.diagnostics());
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
                    Expr inside;
                    auto andI = [&](const Expr& e) { inside = inside ? (inside && e) : e; };
                    if (kh * ga.d[0] < ga.pb[0]) andI(xh >= intImm(0));
                    if ((H1 - 1) * ga.s[0] + kh * ga.d[0] - ga.pb[0] >= H) andI(xh < intImm(H));
                    if (kw * ga.d[1] < ga.pb[1]) andI(xw >= intImm(0));
                    if ((W1 - 1) * ga.s[1] + kw * ga.d[1] - ga.pb[1] >= W) andI(xw < intImm(W));
                    Expr x = load(X, f32, {wk.n, cg, xh, xw});
                    if (inside) x = select(inside, x, zero);
                    const Expr term = load(W1b, f32, {cg, intImm(0), intImm(kh), intImm(kw)}) * x;
                    sum = sum ? sum + term : term;
                }
            }
            compute = finish(sum);
        } else {
            // Pointwise first conv: a serial reduction over the C input channels.
            const int accB = addLocal("t1", {1});
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
    };

    // Worker decomposition: w -> (n, tile row, tile col, chunk), chunk fastest.
    const std::int64_t workers = N * pl.tilesH * pl.tilesW * pl.kChunks;
    auto withWorker = [&](const Expr& w, const std::function<Stmt(const Worker&)>& body) -> Stmt {
        const Var vkc = k.newVar("kc"), vtx = k.newVar("tx"), vty = k.newVar("ty"), vn = k.newVar("n");
        Worker wk;
        wk.n = varRef(vn);
        wk.oh0 = varRef(vty) * intImm(pl.th);
        wk.ow0 = varRef(vtx) * intImm(pl.tw);
        wk.k0 = varRef(vkc) * intImm(pl.Kc);
        Stmt b = body(wk);
        if (!b) return nullptr;
        const Expr rest1 = w / intImm(pl.kChunks);
        const Expr rest2 = rest1 / intImm(pl.tilesW);
        return let(vkc, w % intImm(pl.kChunks),
                   let(vtx, rest1 % intImm(pl.tilesW), let(vty, rest2 % intImm(pl.tilesH), let(vn, rest2 / intImm(pl.tilesH), b))));
    };
    auto outPixel = [&](const Worker& wk, const Expr& p, Expr* oh, Expr* ow) {
        *oh = wk.oh0 + p / intImm(pl.tw);
        *ow = wk.ow0 + p % intImm(pl.tw);
    };
    auto pixelGuard = [&](const Expr&, const Expr& oh, const Expr& ow) {
        Expr g2;
        auto andG = [&](const Expr& e) { g2 = g2 ? (g2 && e) : e; };
        if (H2 % pl.th != 0) andG(oh < intImm(H2));
        if (W2 % pl.tw != 0) andG(ow < intImm(W2));
        return g2;
    };
    auto guarded = [](const Expr& cond, Stmt s) { return cond ? ifThen(cond, std::move(s)) : s; };
    // Depthwise second conv: output (channel cg, pixel p) from Ts.
    auto dwSecond = [&](const Expr& c, const Expr& cg, const Expr& p) -> Expr {
        const Expr pr = p / intImm(pl.tw), pc = p % intImm(pl.tw);
        Expr sum = B2b >= 0 ? load(B2b, f32, {cg}) : Expr();
        for (std::int64_t kh = 0; kh < k2h; ++kh)
            for (std::int64_t kw = 0; kw < k2w; ++kw) {
                const Expr q = (pr * intImm(s2h) + intImm(kh * d2h)) * intImm(pl.rw) + pc * intImm(s2w) + intImm(kw * d2w);
                const Expr term = load(W2b, f32, {cg, intImm(0), intImm(kh), intImm(kw)}) * load(Ts, f32, {c, q});
                sum = sum ? sum + term : term;
            }
        return sum;
    };

    const std::string gridText = "spatial(" + std::to_string(N) + "," + std::to_string(pl.tilesH) + "," +
                                 std::to_string(pl.tilesW) + "," + std::to_string(pl.kChunks) + ")";
    const std::int64_t chunks = chainCeilDiv(Cm, pl.Cc);
    // Local tiles per parallel worker, pixel loops vectorised.
    const Var wv = k.newVar("w");
    Stmt perWorker = withWorker(varRef(wv), [&](const Worker& wk) -> Stmt {
        if (secondDw) {
            Stmt fill = loopOver(k, "c", intImm(pl.Cc), ForKind::Serial, [&](const Expr& c) {
                return loopOver(k, "q", intImm(pl.Q), ForKind::Vectorize, [&](const Expr& q) { return fillItem(wk, wk.k0, c, q); });
            });
            Stmt out = loopOver(k, "c", intImm(pl.Cc), ForKind::Serial, [&](const Expr& c) -> Stmt {
                const Expr cg = wk.k0 + c;
                Stmt px = loopOver(k, "p", intImm(pl.P), ForKind::Vectorize, [&](const Expr& p) -> Stmt {
                    Expr oh, ow;
                    outPixel(wk, p, &oh, &ow);
                    return guarded(pixelGuard(p, oh, ow), store(Yb, {wk.n, cg, oh, ow}, dwSecond(c, cg, p)));
                });
                return Cm % pl.Cc != 0 ? ifThen(cg < intImm(Cm), px) : px;
            });
            if (!fill || !out) return nullptr;
            return allocate(Ts, seq({fill, out}));
        }
        const int acc = addLocal("acc", {pl.Kc, pl.P});
        const Expr kExt = K % pl.Kc != 0 ? minOf(intImm(pl.Kc), intImm(K) - wk.k0) : intImm(pl.Kc);
        Stmt init = loopOver(k, "k", kExt, ForKind::Serial, [&](const Expr& kk) {
            return loopOver(k, "p", intImm(pl.P), ForKind::Vectorize, [&](const Expr& p) { return store(acc, {kk, p}, zero); });
        });
        const Var cb = k.newVar("cb");
        const Expr c0 = varRef(cb) * intImm(pl.Cc);
        const Expr cExt = Cm % pl.Cc != 0 ? minOf(intImm(pl.Cc), intImm(Cm) - c0) : intImm(pl.Cc);
        Stmt fill = loopOver(k, "c", cExt, ForKind::Serial, [&](const Expr& c) {
            return loopOver(k, "q", intImm(pl.P), ForKind::Vectorize, [&](const Expr& q) { return fillItem(wk, c0, c, q); });
        });
        Stmt update = loopOver(k, "c", cExt, ForKind::Serial, [&](const Expr& c) {
            return loopOver(k, "k", kExt, ForKind::Serial, [&](const Expr& kk) {
                const Var wvar = k.newVar("wt", f32);
                return let(wvar, load(W2b, f32, {wk.k0 + kk, c0 + c, intImm(0), intImm(0)}),
                           loopOver(k, "p", intImm(pl.P), ForKind::Vectorize, [&](const Expr& p) {
                               return store(acc, {kk, p}, load(acc, f32, {kk, p}) + varRef(wvar) * load(Ts, f32, {c, p}));
                           }));
            });
        });
        Stmt out = loopOver(k, "k", kExt, ForKind::Serial, [&](const Expr& kk) {
            const Expr kg = wk.k0 + kk;
            return loopOver(k, "p", intImm(pl.P), ForKind::Vectorize, [&](const Expr& p) -> Stmt {
                Expr oh, ow;
                outPixel(wk, p, &oh, &ow);
                Expr v = load(acc, f32, {kk, p});
                if (B2b >= 0) v = v + load(B2b, f32, {kg});
                return guarded(pixelGuard(p, oh, ow), store(Yb, {wk.n, kg, oh, ow}, v));
            });
        });
        if (!fill) return nullptr;
        Stmt loop = forLoop(cb, intImm(chunks), seq({fill, update}), ForKind::Serial, 0,
                            "intermediate channels in chunks of " + std::to_string(pl.Cc));
        return allocate(Ts, allocate(acc, seq({init, loop, out})));
    });
    if (!perWorker) return betweenErrors.hasErrors() ? betweenErrors : chainError(where, "conv chain: lowering failed");
    k.body = forLoop(wv, intImm(workers), perWorker, ForKind::Parallel, 0, "grid = " + gridText);
    k.mappings.push_back("grid = " + gridText);
    const std::string kindText = schedule::fusionKindName(chain.kind);
    k.notes.push_back("fused " + kindText + " chain: " + nodeA.name + " -> " + nodeB.name + ", intermediate " +
                      chainDimsText(A.ys) + " kept in a local tile");
    k.notes.push_back("tile " + std::to_string(pl.th) + "x" + std::to_string(pl.tw) + " output pixels" +
                      (secondDw ? " (intermediate region " + std::to_string(pl.rh) + "x" + std::to_string(pl.rw) + ")" : "") +
                      ", Cc = " + std::to_string(pl.Cc) + " intermediate channels per chunk, Kc = " + std::to_string(pl.Kc) +
                      " output channels per worker");
    return std::move(lk);
}

}  // namespace tessera::lower::detail
