// Fused convolution chains on the CPU (lower_fused.h lowerConvChainCpu; FCM, Qararyah et al.
// 2024; semantics.md §2.5). The chain X [N,C,H,W] -> T [N,Cm,H1,W1] (first conv + between ops)
// -> Y [N,K,H2,W2] is computed by parallel workers, each owning one image n, a tile of whole
// output rows and one chunk of channels; the intermediate the tile needs lives in a Local panel.
// Every pointwise conv is the CPU MatMul template (emitGemmTile, axpy form) over such a panel:
//
// dw-pw (lowerDwPwGemmCpu): the depthwise conv + bias + between ops computed once per worker
//   into the B panel, then the GEMM Y = W2 x panel (+ B2).
// pw-dw (lowerPwDwGemmCpu): per block of 8 intermediate channels, the GEMM W1 x (the input rows
//   under the tile, halo included) + B1 + between ops into a panel with zero padding, then the
//   depthwise conv over the panel as whole-vector row loops.
// pw-pw (lowerPwPwGemmCpu): the GEMM W1 x (the tile's pixels) into a panel, then W2 x panel.
//
// The register-tiled path below them (emitRegGemm: acc[RK][PB] per block of RK filters and PB
// pixels, the intermediate in a Local tile Ts [channel][row][padded column], column tiles of 256)
// remains for pw-dw and pw-pw maps too wide for one row of a panel:
//   parallel for w in N x tilesH x tilesW x kChunks
//     Ts[Cm][th][colPad] = between(first conv)        (emitRegGemm over the C input channels)
//     pw-pw: for each RK block of filters, row, PB segment: Y = Wp x Ts + Bp (each element once)
//     pw-dw: Ts[Cc][rh][rwPad] holds the halo region (0 outside the image), then each output row
//            is a vectorised tap sum over Ts.
// The output is only stored, never loaded (lowerGroup's epilogue rewrite applies). The planner's
// tile (chosen for a GPU) is not used on the CPU.

#include <algorithm>
#include <string>

#include "core/lower/detail/lower_fused_conv_common.h"

namespace tessera::lower::detail {

namespace {

/// Floats of the Local intermediate tile Ts per worker (128 KiB: well inside a 1-2 MiB L2).
constexpr std::int64_t kTsBudget = 32768;
/// Output pixels per worker tile the plan aims for.
constexpr std::int64_t kTargetPixels = 256;
/// Vector registers (16 floats each) the accumulators of one register tile may take.
constexpr std::int64_t kAccVectors = 16;

/// Pixel block along a row of `cols` columns: 32, 16 or 8, the one needing the fewest vector
/// operations per row (padded columns / min(PB, 16)); ties: the larger block.
std::int64_t pixelBlock(std::int64_t cols) {
    std::int64_t best = 32;
    auto ops = [&](std::int64_t pb) { return chainRoundUp(cols, pb) / std::min<std::int64_t>(pb, 16); };
    for (std::int64_t pb : {16, 8})
        if (ops(pb) < ops(best)) best = pb;
    return best;
}

/// Filters per register tile for `m` rows with pixel block `pb`: as many as kAccVectors vectors
/// hold, halved (>= 4) while that pads m less.
std::int64_t rowBlock(std::int64_t m, std::int64_t pb) {
    std::int64_t best = kAccVectors / chainCeilDiv(pb, 16);
    for (std::int64_t rk = best / 2; rk >= 4; rk /= 2)
        if (chainRoundUp(m, rk) < chainRoundUp(m, best)) best = rk;
    return std::min(best, std::max<std::int64_t>(1, m));
}

/// A register-tiled GEMM over a row-segmented pixel tile:
///   out(m, r, col) = sum_c w(m, c) * b(c, r, col)   for m < M (in blocks of RK), r < rows,
///   col < colPad (in segments of PB).
struct RegGemm {
    std::int64_t M = 1, RK = 1, PB = 8, red = 1, rows = 1, colPad = 8;
    /// Weight of row m (m < roundUp(M, RK): the caller clamps rows past M) and channel c.
    std::function<Expr(const Expr& m, const Expr& c)> w;
    std::function<Expr(const Expr& c, const Expr& r, const Expr& col)> b;
    /// Condition for storing row m of pixel row r (null: always), evaluated outside the pixel loop.
    std::function<Expr(const Expr& m, const Expr& r)> rowGuard;
    /// The store of one result v (guarded by the callee where columns are ragged).
    std::function<Stmt(const Expr& m, const Expr& r, const Expr& col, const Expr& v)> store;
};

Stmt emitRegGemm(Kernel& k, const RegGemm& s) {
    BufferDecl ab;
    ab.name = "acc";
    ab.dtype = DType::F32;
    ab.shape = {s.RK, s.PB};
    ab.scope = MemoryScope::Local;
    const int acc = k.addBuffer(ab);
    const Expr zero = floatImm(0.0, DType::F32);
    return loopOver(k, "mb", intImm(chainCeilDiv(s.M, s.RK)), ForKind::Serial, [&](const Expr& mb) {
        return loopOver(k, "r", intImm(s.rows), ForKind::Serial, [&](const Expr& r) {
            return loopOver(k, "sb", intImm(s.colPad / s.PB), ForKind::Serial, [&](const Expr& sb) -> Stmt {
                auto tile = [&](const std::function<Stmt(const Expr& ii, const Expr& jj)>& f) {
                    return loopOver(k, "ii", intImm(s.RK), ForKind::Unroll, [&](const Expr& ii) {
                        return loopOver(k, "jj", intImm(s.PB), ForKind::Vectorize, [&](const Expr& jj) { return f(ii, jj); });
                    });
                };
                Stmt init = tile([&](const Expr& ii, const Expr& jj) { return store(acc, {ii, jj}, zero); });
                Stmt update = loopOver(k, "c", intImm(s.red), ForKind::Serial, [&](const Expr& c) {
                    return loopOver(k, "ii", intImm(s.RK), ForKind::Unroll, [&](const Expr& ii) {
                        const Var wt = k.newVar("wt", DType::F32);
                        Stmt row = loopOver(k, "jj", intImm(s.PB), ForKind::Vectorize, [&](const Expr& jj) {
                            return store(acc, {ii, jj},
                                         load(acc, DType::F32, {ii, jj}) + varRef(wt) * s.b(c, r, sb * s.PB + jj));
                        });
                        return let(wt, s.w(mb * s.RK + ii, c), row);
                    });
                });
                Stmt out = loopOver(k, "ii", intImm(s.RK), ForKind::Unroll, [&](const Expr& ii) -> Stmt {
                    const Expr m = mb * s.RK + ii;
                    Stmt row = loopOver(k, "jj", intImm(s.PB), ForKind::Vectorize, [&](const Expr& jj) {
                        return s.store(m, r, sb * s.PB + jj, load(acc, DType::F32, {ii, jj}));
                    });
                    const Expr g = s.rowGuard ? s.rowGuard(m, r) : Expr();
                    return g ? ifThen(g, row) : row;
                });
                return allocate(acc, seq({init, update, out}));
            });
        });
    });
}

/// The tile plan of one fused CPU kernel.
struct CpuChainPlan {
    std::int64_t th = 1, tw = 1;          ///< output tile (pixels of Y): th rows x tw columns
    std::int64_t PB = 8, colPad = 8;      ///< pixel block; tile columns padded to it
    std::int64_t rh = 1, rw = 1;          ///< region of T under the tile (rows, cols)
    std::int64_t rwPad = 8;               ///< region columns padded to PB
    std::int64_t Kc = 1;                  ///< output channels per worker (pw-dw: = Cc)
    std::int64_t Cc = 1;                  ///< pw-dw: intermediate channels per worker
    std::int64_t RK1 = 1, RK2 = 1;        ///< filters per register tile: first / second conv
    std::int64_t tilesH = 1, tilesW = 1, kChunks = 1;
};

/// Floats of the Local B panel of a dw-pw worker (128 KiB: inside a 1-2 MiB L2).
constexpr std::int64_t kPanelBudget = 32768;
/// GEMM tile of the dw-pw path: the CPU MatMul template's default (lower_matmul.cpp), tm filters x
/// tn pixels with acc[tm][tn] in registers.
constexpr std::int64_t kGemmTm = 8;
constexpr std::int64_t kGemmTn = 64;
/// Maps at least this wide run the GEMM per tile row (stores at affine indices); narrower ones
/// over the flattened pixels of whole-row tiles (fuller vectors; stores split j into row, column).
constexpr std::int64_t kMinRowPixels = 16;

/// put(between(value)) through a Let of the first conv's value (the between ops read it more
/// than once, e.g. Clip); a lowering error of the between ops goes to `errors` (null statement).
Stmt storeBetween(Kernel& k, const ChainKernel& ck, const ConvChainInfo& info, support::DiagnosticList& errors,
                  const Expr& value, const std::function<Stmt(const Expr&)>& put) {
    const Var a = k.newVar("a", DType::F32);
    auto bv = applyBetween(ck, info, varRef(a));
    if (!bv) {
        errors.append(bv.diagnostics());
        return nullptr;
    }
    return let(a, value, put(*bv));
}

/// dw-pw on the CPU through the MatMul/Gemm template (emitGemmTile, axpy form):
///   Y[n, k, p] = B2[k] + sum_c W2[k, c] * Bp[c, p - p0]   (A = W2 as [K, C], B = the panel)
/// Each worker owns one image n, a pixel tile (th whole rows of the map, or one segment of tw
/// columns of a wider row; p0 its first flattened pixel) and a chunk of Kc filters. The B operand
/// is the depthwise conv + bias + between ops at (channel c, pixel p), computed once per worker
/// into the Local panel Bp[Cm][th * cp] (cp: tw padded to 16 on maps at least kMinRowPixels wide; per channel: the zero-padded input rows under the tile in
/// Xs, then the taps as vectorised row sums), so the template's `for c: for ii: for jj` reads it
/// with unit stride and no recomputation across the filter blocks; each element of Y is stored
/// once.
support::Expected<LoweredKernel> lowerDwPwGemmCpu(const ir::Graph& g, const ConvChainSpec& chain,
                                                  const ConvChainInfo& info, const LowerOptions& options,
                                                  const std::string& where) {
    const ChainConv& A = info.A;
    const ir::Node& nodeA = g.node(A.id);
    const ir::Node& nodeB = g.node(info.B.id);
    const std::int64_t N = info.N, H = info.H, W = info.W, Cm = info.Cm;
    const std::int64_t K = info.K, H2 = info.H2, W2 = info.W2;
    const std::int64_t threads = std::max(1, options.cpuThreads);

    // ---- plan ----
    std::int64_t tw = std::min<std::int64_t>(W2, 256);
    // Row mode pads each panel row to cp columns (a multiple of 16: whole vectors, constant
    // extents); the padded columns are computed and never stored.
    const bool flat = W2 < kMinRowPixels;
    auto padOf = [&](std::int64_t cols) { return flat ? cols : chainRoundUp(cols, 16); };
    std::int64_t th = std::max<std::int64_t>(1, std::min(H2, kTargetPixels / padOf(tw)));
    while (Cm * th * padOf(tw) > kPanelBudget && th > 1) --th;
    while (Cm * th * padOf(tw) > kPanelBudget && tw > 16) tw = std::max<std::int64_t>(16, chainRoundUp(tw / 2, 16));
    if (tw < W2) th = 1;
    const std::int64_t tilesW = chainCeilDiv(W2, tw);
    std::int64_t Kc = K, kChunks = 1;
    auto workerCount = [&] { return N * chainCeilDiv(H2, th) * tilesW * kChunks; };
    // Enough workers for the threads: fewer rows per tile first, then chunks of filters (each
    // chunk recomputes the cheap depthwise panel).
    while (workerCount() < 2 * threads && th > 1) th = (th + 1) / 2;
    while (workerCount() < 2 * threads && Kc > kGemmTm) {
        Kc = chainRoundUp(chainCeilDiv(Kc, 2), kGemmTm);
        kChunks = chainCeilDiv(K, Kc);
    }
    const std::int64_t tilesH = chainCeilDiv(H2, th);
    const std::int64_t cp = padOf(tw);
    const std::int64_t PT = th * cp;  // panel columns
    const std::int64_t workers = N * tilesH * tilesW * kChunks;

    // ---- kernel and parameters ----
    auto begun = beginChainKernel(g, chain, info, options, where);
    if (!begun) return begun.diagnostics();
    ChainKernel& ck = *begun;
    LoweredKernel& lk = ck.lk;
    const int X = ck.X, W1b = ck.W1b, B1b = ck.B1b, W2b = ck.W2b, B2b = ck.B2b, Yb = ck.Yb;
    Kernel& k = lk.kernel;
    const DType f32 = DType::F32;
    const Expr zero = floatImm(0.0, f32);

    BufferDecl pd;
    pd.name = "Bp";
    pd.dtype = f32;
    pd.scope = MemoryScope::Local;
    pd.shape = {Cm, PT};
    const int Bp = k.addBuffer(pd);
    const WindowGeom& ga = A.geom;
    const std::int64_t xrh = (th - 1) * ga.s[0] + (ga.k[0] - 1) * ga.d[0] + 1;
    const std::int64_t xrw = (cp - 1) * ga.s[1] + (ga.k[1] - 1) * ga.d[1] + 1;
    const std::int64_t xhHi = (tilesH - 1) * th * ga.s[0] - ga.pb[0] + xrh - 1;
    const std::int64_t xwHi = (tilesW - 1) * tw * ga.s[1] - ga.pb[1] + xrw - 1;
    BufferDecl xd;
    xd.name = "Xs";
    xd.dtype = f32;
    xd.scope = MemoryScope::Local;
    xd.shape = {xrh, xrw};
    const int Xs = k.addBuffer(xd);

    auto andMaybe = [](const Expr& a, const Expr& b) -> Expr {
        if (!a) return b;
        if (!b) return a;
        return a && b;
    };
    support::DiagnosticList betweenErrors;

    const Var vkc = k.newVar("kc"), vtx = k.newVar("tx"), vty = k.newVar("ty"), vn = k.newVar("n");
    const Expr n = varRef(vn), oh0 = varRef(vty) * intImm(th), ow0 = varRef(vtx) * intImm(tw);
    const Expr k0 = varRef(vkc) * intImm(Kc);

    // Panel: per channel the zero-padded input region (rows and columns past the map get finite
    // values whose results are never stored), then the taps, bias and between ops.
    Stmt fill = loopOver(k, "c", intImm(Cm), ForKind::Serial, [&](const Expr& c) -> Stmt {
        Stmt copy = loopOver(k, "rr", intImm(xrh), ForKind::Serial, [&](const Expr& rr) {
            return loopOver(k, "cc", intImm(xrw), ForKind::Vectorize, [&](const Expr& cc) {
                const Expr xh = oh0 * intImm(ga.s[0]) - intImm(ga.pb[0]) + rr;
                const Expr xw = ow0 * intImm(ga.s[1]) - intImm(ga.pb[1]) + cc;
                Expr inside;
                if (ga.pb[0] > 0) inside = andMaybe(inside, xh >= intImm(0));
                if (xhHi > H - 1) inside = andMaybe(inside, xh < intImm(H));
                if (ga.pb[1] > 0) inside = andMaybe(inside, xw >= intImm(0));
                if (xwHi > W - 1) inside = andMaybe(inside, xw < intImm(W));
                Expr x = load(X, f32, {n, c, xh, xw});
                if (inside) x = select(inside, x, zero);
                return store(Xs, {rr, cc}, x);
            });
        });
        Stmt taps = loopOver(k, "r", intImm(th), ForKind::Serial, [&](const Expr& r) {
            return loopOver(k, "col", intImm(cp), ForKind::Vectorize, [&](const Expr& col) -> Stmt {
                Expr sum = B1b >= 0 ? load(B1b, f32, {c}) : Expr();
                for (std::int64_t kh = 0; kh < ga.k[0]; ++kh)
                    for (std::int64_t kw = 0; kw < ga.k[1]; ++kw) {
                        const Expr term = load(W1b, f32, {c, intImm(0), intImm(kh), intImm(kw)}) *
                                          load(Xs, f32, {r * intImm(ga.s[0]) + intImm(kh * ga.d[0]),
                                                         col * intImm(ga.s[1]) + intImm(kw * ga.d[1])});
                        sum = sum ? sum + term : term;
                    }
                return storeBetween(k, ck, info, betweenErrors, sum,
                                    [&](const Expr& t) { return store(Bp, {c, r * intImm(cp) + col}, t); });
            });
        });
        if (!taps) return nullptr;
        return seq({copy, taps});
    });
    if (!fill) return betweenErrors.hasErrors() ? betweenErrors : chainError(where, "conv chain: lowering failed");
    fill = allocate(Xs, fill);

    // The GEMM over the panel: full and ragged tiles with constant extents. Row mode (maps at
    // least kMinRowPixels wide): per tile row r, column blocks of that row, B[c, j] = Bp[c, r*tw + j]
    // and Y stored at (oh0 + r, ow0 + j). Flat mode (narrower maps, whole rows per tile): column
    // blocks over all th*W2 pixels of the tile, stored at (oh0 + j / W2, j % W2).
    const bool kClamp = K % Kc != 0;
    const std::int64_t cols = flat ? PT : cp;
    const std::int64_t tn = std::min(cols, kGemmTn), tm = std::min(Kc, kGemmTm);
    auto tile = [&](const Expr& r, const Expr& i0, std::int64_t mExt, const Expr& j0, std::int64_t nExt) {
        GemmTileSpec s;
        s.K = Cm;
        s.acc = f32;
        s.a = [&](const Expr& i, const Expr& c) {
            return load(W2b, f32, {kClamp ? minOf(i, intImm(K - 1)) : i, c, intImm(0), intImm(0)});
        };
        s.b = [&, r](const Expr& c, const Expr& j) { return load(Bp, f32, {c, r ? r * intImm(cp) + j : j}); };
        s.store = [&, r](const Expr& i, const Expr& j, const Expr& v) -> Stmt {
            Expr gd;
            if (kClamp) gd = andMaybe(gd, i < intImm(K));
            Expr oh = r ? oh0 + r : oh0, ow = ow0 + j;
            if (flat) {
                oh = oh0 + j / intImm(W2);
                ow = j % intImm(W2);
                if (H2 % th != 0) gd = andMaybe(gd, oh < intImm(H2));
            } else {
                if (cp > tw) gd = andMaybe(gd, j < intImm(tw));
                if (W2 % tw != 0) gd = andMaybe(gd, ow < intImm(W2));
            }
            Stmt st = store(Yb, {n, i, oh, ow}, B2b >= 0 ? v + load(B2b, f32, {i}) : v);
            return gd ? ifThen(gd, st) : st;
        };
        return emitGemmTile(k, s, i0, j0, intImm(mExt), intImm(nExt), mExt, nExt);
    };
    auto filterBlocks = [&](const Expr& r, const Expr& j0, std::int64_t nExt) -> Stmt {
        std::vector<Stmt> parts;
        if (Kc / tm > 0)
            parts.push_back(loopOver(k, "mb", intImm(Kc / tm), ForKind::Serial,
                                     [&](const Expr& mb) { return tile(r, k0 + mb * intImm(tm), tm, j0, nExt); }));
        if (Kc % tm) parts.push_back(tile(r, k0 + intImm(Kc / tm * tm), Kc % tm, j0, nExt));
        return seq(std::move(parts));
    };
    auto columnBlocks = [&](const Expr& r) -> Stmt {
        std::vector<Stmt> parts;
        if (cols / tn > 0)
            parts.push_back(loopOver(k, "jb", intImm(cols / tn), ForKind::Serial,
                                     [&](const Expr& jb) { return filterBlocks(r, jb * intImm(tn), tn); }));
        if (cols % tn) parts.push_back(filterBlocks(r, intImm(cols / tn * tn), cols % tn));
        return seq(std::move(parts));
    };
    Stmt gemm = flat ? columnBlocks(Expr())
                     : loopOver(k, "r", intImm(th), ForKind::Serial, [&](const Expr& r) -> Stmt {
                           Stmt row = columnBlocks(r);
                           return H2 % th != 0 ? ifThen(oh0 + r < intImm(H2), row) : row;
                       });

    Stmt body = allocate(Bp, seq({fill, gemm}));
    const Var wv = k.newVar("w");
    const Expr w = varRef(wv);
    const Expr rest1 = w / intImm(kChunks);
    const Expr rest2 = rest1 / intImm(tilesW);
    body = let(vkc, w % intImm(kChunks),
               let(vtx, rest1 % intImm(tilesW), let(vty, rest2 % intImm(tilesH), let(vn, rest2 / intImm(tilesH), body))));
    const std::string gridText = "spatial(" + std::to_string(N) + "," + std::to_string(tilesH) + "," +
                                 std::to_string(tilesW) + "," + std::to_string(kChunks) + ")";
    k.body = forLoop(wv, intImm(workers), body, ForKind::Parallel, 0, "grid = " + gridText);
    k.mappings.push_back("grid = " + gridText);
    k.notes.push_back("fused dw-pw chain: " + nodeA.name + " -> " + nodeB.name + ", intermediate " + chainDimsText(A.ys) +
                      " computed per tile into the GEMM's B panel");
    k.notes.push_back("tile " + std::to_string(th) + "x" + std::to_string(tw) + " output pixels, Kc = " + std::to_string(Kc) +
                      " output channels per worker; B panel [" + std::to_string(Cm) + "," + std::to_string(PT) +
                      "]; GEMM tiles " + std::to_string(tm) + " x " + std::to_string(tn) + " (MatMul template, axpy form)");
    return std::move(lk);
}

/// Floats of the Local panel of a pw-dw worker (128 KiB: inside the 1 MiB L2 of a core).
constexpr std::int64_t kPwDwPanelBudget = 32768;
/// GEMM tile width of the pw-dw panel fill: 8 x 32 accumulators (16 vector registers) leave
/// room for the B vectors (8 x 64 spilled them on a 32-register AVX-512 machine).
constexpr std::int64_t kPwDwTn = 32;

/// Column tiles (start, width) covering a row of W >= 16 columns with whole vectors only: the
/// row's vectors (W rounded up to 16) spread evenly over tiles of at most maxWidth columns; when
/// W is not a multiple of 16 the last tile is shifted left to end at W (it recomputes a few
/// columns instead of reading past the row). Only for stores that may repeat (Local panels).
std::vector<std::pair<std::int64_t, std::int64_t>> shiftedRowTiles(std::int64_t W, std::int64_t maxWidth) {
    const std::int64_t vecs = chainCeilDiv(W, 16), maxV = std::max<std::int64_t>(1, maxWidth / 16);
    const std::int64_t nt = chainCeilDiv(vecs, maxV);
    std::vector<std::int64_t> v(static_cast<std::size_t>(nt), vecs / nt);
    for (std::int64_t t = 0; t < vecs % nt; ++t) ++v[static_cast<std::size_t>(t)];
    if (vecs * 16 > W && nt == 1) v = {1, vecs - 1};
    std::vector<std::pair<std::int64_t, std::int64_t>> tiles;
    std::int64_t j = 0;
    for (std::int64_t vt : v) {
        tiles.push_back({std::min(j, W - 16 * vt), 16 * vt});
        j += 16 * vt;
    }
    return tiles;
}

using ColumnTiles = std::vector<std::pair<std::int64_t, std::int64_t>>;


/// Column tiles (start, width) of at most maxWidth over `cols` columns, the last one ragged.
ColumnTiles flatColumnTiles(std::int64_t cols, std::int64_t maxWidth) {
    ColumnTiles t;
    const std::int64_t tn = std::min(cols, maxWidth);
    for (std::int64_t j = 0; j < cols; j += tn) t.push_back({j, std::min(tn, cols - j)});
    return t;
}

/// f(j0, width) for each tile, runs of equal tiles at regular starts as one serial loop.
Stmt overColumnTiles(Kernel& k, const ColumnTiles& tiles, const std::function<Stmt(const Expr&, std::int64_t)>& f) {
    std::vector<Stmt> parts;
    for (std::size_t t = 0; t < tiles.size();) {
        std::size_t e = t + 1;
        while (e < tiles.size() && tiles[e].second == tiles[t].second &&
               tiles[e].first == tiles[t].first + static_cast<std::int64_t>(e - t) * tiles[t].second)
            ++e;
        const std::int64_t j0 = tiles[t].first, w = tiles[t].second;
        if (e - t > 1)
            parts.push_back(loopOver(k, "jb", intImm(static_cast<std::int64_t>(e - t)), ForKind::Serial,
                                     [&](const Expr& jb) { return f(intImm(j0) + jb * intImm(w), w); }));
        else
            parts.push_back(f(intImm(j0), w));
        t = e;
    }
    return seq(std::move(parts));
}

/// pw-dw on the CPU through the MatMul/Gemm template (emitGemmTile, axpy form). Each worker owns
/// one image n, a tile of th output rows (whole rows) and a block of CB (= the template's 8)
/// intermediate channels c0..c0+CB-1. The tile needs rows [oh0*s - p, oh0*s - p + rh) of T; the
/// panel holds the rhc = min(rh, H) image rows starting at a = clamp(oh0*s - p, 0, H - rhc), and
/// one zero row after them (the depthwise padding above and below the map), rows of PW columns:
///   Pn[i][r*PW + pl + col] = between(B1[c0 + i] + sum_c W1[c0 + i, c] * X[n, c, (a + r)*W + col])
/// computed by the template with A = W1 as [Cm, C], B = input rows (X viewed [N, C, H*W]) and the
/// bias added at its store; never a masked load. Row mode (maps >= kMinRowPixels wide): per panel
/// row, column tiles of kPwDwTn over the W columns (the last one ragged), the row padded by zero
/// columns (pl = the left padding, PW >= pl + W covers the right taps), so the depthwise conv
/// needs no guards. Flat mode (narrower maps): PW = W, pl = 0, the rhc rows are one contiguous
/// operand of rhc*W columns. Then the depthwise conv reads the panel: per channel and output row,
/// tap row kh maps to panel row ih - a (the zero row when ih is outside the image); the output
/// columns whose taps lie inside the panel row are one vectorised loop (all of them in row mode),
/// the border columns of flat mode a scalar loop with guarded taps; each element of Y is stored
/// once. Only the k - s halo
/// rows per tile are recomputed (the tile height minimises the computed rows within the panel
/// budget); channel blocks share no work, so they give the threads their parallelism.
support::Expected<LoweredKernel> lowerPwDwGemmCpu(const ir::Graph& g, const ConvChainSpec& chain,
                                                  const ConvChainInfo& info, const LowerOptions& options,
                                                  const std::string& where) {
    const ChainConv& A = info.A;
    const ChainConv& B = info.B;
    const ir::Node& nodeA = g.node(A.id);
    const ir::Node& nodeB = g.node(B.id);
    const std::int64_t N = info.N, C = info.C, H = info.H, W = info.W, Cm = info.Cm;
    const std::int64_t H2 = info.H2, W2 = info.W2;
    const WindowGeom& gb = B.geom;
    const std::int64_t s0 = gb.s[0], s1 = gb.s[1], d0 = gb.d[0], d1 = gb.d[1], p0 = gb.pb[0], p1 = gb.pb[1];
    const std::int64_t k0h = gb.k[0], k1w = gb.k[1];
    const std::int64_t threads = std::max(1, options.cpuThreads);

    // ---- plan ----
    const bool flat = W < kMinRowPixels;
    const std::int64_t pl = flat ? 0 : p1;
    const std::int64_t PW = flat ? W : std::max(pl + W, (W2 - 1) * s1 + (k1w - 1) * d1 + 1);
    const std::int64_t CB = std::min(Cm, kGemmTm);
    const std::int64_t cBlocks = chainCeilDiv(Cm, CB);
    auto regionRows = [&](std::int64_t th) { return std::min(H, (th - 1) * s0 + (k0h - 1) * d0 + 1); };
    auto panelFloats = [&](std::int64_t th) { return CB * (regionRows(th) + 1) * PW; };
    // The tile height computing the fewest panel rows over the map (plus one row per tile for its
    // fixed costs) with a panel inside the budget.
    std::int64_t th = 1, bestCost = -1;
    for (std::int64_t t = 1; t <= H2; ++t) {
        if (t > 1 && panelFloats(t) > kPwDwPanelBudget) break;
        const std::int64_t cost = chainCeilDiv(H2, t) * (regionRows(t) + 1);
        if (bestCost < 0 || cost < bestCost) bestCost = cost, th = t;
    }
    while (N * chainCeilDiv(H2, th) * cBlocks < 2 * threads && th > 1) th = (th + 1) / 2;
    const std::int64_t tilesH = chainCeilDiv(H2, th);
    const std::int64_t rhc = regionRows(th);
    const std::int64_t workers = N * tilesH * cBlocks;
    // Output columns whose taps all lie in the panel row: [owLo, owLo + nInner).
    const std::int64_t owLo = flat ? std::min(W2, chainCeilDiv(p1, s1)) : 0;
    const std::int64_t hiNum = W - 1 + p1 - (k1w - 1) * d1;
    const std::int64_t owHi = flat ? (hiNum < 0 ? -1 : std::min(W2 - 1, hiNum / s1)) : W2 - 1;
    const std::int64_t nInner = std::max<std::int64_t>(0, owHi - owLo + 1);
    // The vectorised loop runs whole vectors (of 8 on rows narrower than 16) into a row buffer
    // when nInner is not a multiple of them (GCC runs a remainder scalar). With a column stride > 1 GCC peels the last iteration of
    // the strided tap loads (peeling for gaps): one extra iteration keeps the vectors whole. The
    // panel is long enough for its reads (zero slack after the zero row).
    const std::int64_t nVec = chainRoundUp(nInner, nInner < 16 ? 8 : 16) + (s1 > 1 && nInner > 0 ? 1 : 0);
    const std::int64_t panelLen =
        std::max((rhc + 1) * PW, rhc * PW + (owLo + nVec - 1) * s1 + (k1w - 1) * d1 - p1 + pl + 1);

    // ---- kernel and parameters ----
    auto begun = beginChainKernel(g, chain, info, options, where);
    if (!begun) return begun.diagnostics();
    ChainKernel& ck = *begun;
    LoweredKernel& lk = ck.lk;
    const int X = ck.X, W1b = ck.W1b, B1b = ck.B1b, W2b = ck.W2b, B2b = ck.B2b, Yb = ck.Yb;
    Kernel& k = lk.kernel;
    const DType f32 = DType::F32;
    const Expr zero = floatImm(0.0, f32);
    // X viewed [N, C, H*W] (same dense layout): the region rows are one contiguous GEMM operand.
    // Conv chains take no prologue, so no rewrite indexes X by its logical shape.
    k.buffers[static_cast<std::size_t>(X)].shape = {N, C, H * W};

    BufferDecl pd;
    pd.name = "Pn";
    pd.dtype = f32;
    pd.scope = MemoryScope::Local;
    pd.shape = {CB, panelLen};
    const int Pn = k.addBuffer(pd);
    int Yr = -1;  // row buffer of the depthwise conv's vectorised loop (when nVec > nInner)
    if (nVec > nInner) {
        BufferDecl yd;
        yd.name = "Yr";
        yd.dtype = f32;
        yd.scope = MemoryScope::Local;
        yd.shape = {nVec};
        Yr = k.addBuffer(yd);
    }
    support::DiagnosticList betweenErrors;

    const Var vcb = k.newVar("cb"), vty = k.newVar("ty"), vn = k.newVar("n"), va = k.newVar("a");
    const Expr n = varRef(vn), oh0 = varRef(vty) * intImm(th), c0 = varRef(vcb) * intImm(CB), a = varRef(va);
    const bool cClamp = Cm % CB != 0;
    auto chan = [&](const Expr& i) { return cClamp ? minOf(i, intImm(Cm - 1)) : i; };

    // The GEMM into the panel: rows i = intermediate channels c0 + i (clamped past Cm: computed,
    // never stored to Y), columns j = the region's pixels.
    // Flat mode: r null, j over the rhc*W pixels; row mode: j over the columns of panel row r.
    auto tile = [&](const Expr& r, const Expr& j0, std::int64_t nExt) -> Stmt {
        GemmTileSpec s;
        s.K = C;
        s.acc = f32;
        s.a = [&](const Expr& i, const Expr& c) { return load(W1b, f32, {chan(c0 + i), c, intImm(0), intImm(0)}); };
        s.b = [&, r](const Expr& c, const Expr& j) { return load(X, f32, {n, c, (r ? a + r : a) * intImm(W) + j}); };
        s.store = [&, r](const Expr& i, const Expr& j, const Expr& v) -> Stmt {
            const Expr col = r ? r * intImm(PW) + intImm(pl) + j : j;
            return storeBetween(k, ck, info, betweenErrors, B1b >= 0 ? v + load(B1b, f32, {chan(c0 + i)}) : v,
                                [&](const Expr& t) { return store(Pn, {i, col}, t); });
        };
        return emitGemmTile(k, s, intImm(0), j0, intImm(CB), intImm(nExt), CB, nExt);
    };
    // Column tiles (start, width). Flat: kPwDwTn wide over the rhc*W pixels, the last one ragged.
    // Row mode: the row's whole vectors (W rounded up to 16) spread evenly over tiles of at most
    // kPwDwTn; when W is not a multiple of 16 the last tile is shifted left to end at W, so it
    // recomputes a few panel columns instead of reading past the row (no masked loads).
    const ColumnTiles tiles = flat ? flatColumnTiles(rhc * W, kPwDwTn) : shiftedRowTiles(W, kPwDwTn);
    const std::int64_t tn = tiles.front().second;
    auto columnTiles = [&](const Expr& r) -> Stmt {
        return overColumnTiles(k, tiles, [&](const Expr& j0, std::int64_t w) { return tile(r, j0, w); });
    };
    Stmt gemm = flat ? columnTiles(Expr()) : loopOver(k, "r", intImm(rhc), ForKind::Serial, columnTiles);
    if (betweenErrors.hasErrors()) return betweenErrors;
    // Zeros: the pad columns of every row (row mode) and the zero row rhc.
    Stmt zeroRow = loopOver(k, "i", intImm(CB), ForKind::Serial, [&](const Expr& i) -> Stmt {
        std::vector<Stmt> parts;
        if (PW > W)
            parts.push_back(loopOver(k, "r", intImm(rhc), ForKind::Serial, [&](const Expr& r) -> Stmt {
                std::vector<Stmt> cols;
                if (pl > 0)
                    cols.push_back(loopOver(k, "col", intImm(pl), ForKind::Serial,
                                            [&](const Expr& col) { return store(Pn, {i, r * intImm(PW) + col}, zero); }));
                if (PW > pl + W)
                    cols.push_back(loopOver(k, "col", intImm(PW - pl - W), ForKind::Serial, [&](const Expr& col) {
                        return store(Pn, {i, r * intImm(PW) + intImm(pl + W) + col}, zero);
                    }));
                return seq(std::move(cols));
            }));
        parts.push_back(loopOver(k, "col", intImm(panelLen - rhc * PW), ForKind::Vectorize,
                                 [&](const Expr& col) { return store(Pn, {i, intImm(rhc * PW) + col}, zero); }));
        return seq(std::move(parts));
    });

    // The depthwise conv over the panel, each output element stored once.
    Stmt dw = loopOver(k, "i", intImm(CB), ForKind::Serial, [&](const Expr& i) -> Stmt {
        const Expr cg = c0 + i;
        Stmt rows = loopOver(k, "r", intImm(th), ForKind::Serial, [&](const Expr& r) -> Stmt {
            const Expr oh = oh0 + r;
            std::vector<Var> rowBase;  // panel offset of tap row kh
            for (std::int64_t kh = 0; kh < k0h; ++kh) rowBase.push_back(k.newVar("rb"));
            // One output column; `guard`: taps may fall outside [0, W) (border columns).
            // `toRow`: into the row buffer Yr at index `ow - owLo` instead of Y.
            auto column = [&](const Expr& ow, bool guard, bool toRow = false) -> Stmt {
                Expr sum = B2b >= 0 ? load(B2b, f32, {cg}) : Expr();
                for (std::int64_t kh = 0; kh < k0h; ++kh)
                    for (std::int64_t kw = 0; kw < k1w; ++kw) {
                        const Expr iw = ow * intImm(s1) + intImm(kw * d1 - p1);
                        Expr term = load(W2b, f32, {cg, intImm(0), intImm(kh), intImm(kw)}) *
                                    load(Pn, f32, {i, varRef(rowBase[static_cast<std::size_t>(kh)]) + ow * intImm(s1) +
                                                          intImm(kw * d1 - p1 + pl)});
                        if (guard) term = select(iw >= intImm(0) && iw < intImm(W), term, zero);
                        sum = sum ? sum + term : term;
                    }
                return toRow ? store(Yr, {ow - intImm(owLo)}, sum) : store(Yb, {n, cg, oh, ow}, sum);
            };
            std::vector<Stmt> parts;
            if (owLo > 0)
                parts.push_back(loopOver(k, "col", intImm(owLo), ForKind::Serial, [&](const Expr& col) { return column(col, true); }));
            if (nInner > 0 && nVec == nInner)
                parts.push_back(loopOver(k, "col", intImm(nVec), ForKind::Vectorize,
                                         [&](const Expr& col) { return column(intImm(owLo) + col, false); }));
            if (nVec > nInner) {
                // Whole vectors into the row buffer, then its first nInner values to Y (a guarded
                // store in the tap loop made GCC split the loop and run the taps' tail scalar).
                parts.push_back(loopOver(k, "col", intImm(nVec), ForKind::Vectorize,
                                         [&](const Expr& col) { return column(intImm(owLo) + col, false, true); }));
                parts.push_back(loopOver(k, "col", intImm(nInner), ForKind::Vectorize, [&](const Expr& col) {
                    return store(Yb, {n, cg, oh, intImm(owLo) + col}, load(Yr, f32, {col}));
                }));
            }
            if (owLo + nInner < W2)
                parts.push_back(loopOver(k, "col", intImm(W2 - owLo - nInner), ForKind::Serial,
                                         [&](const Expr& col) { return column(intImm(owLo + nInner) + col, true); }));
            Stmt px = seq(std::move(parts));
            for (std::int64_t kh = k0h; kh-- > 0;) {
                const Expr ih = oh * intImm(s0) + intImm(kh * d0 - p0);
                px = let(rowBase[static_cast<std::size_t>(kh)],
                         select(ih >= intImm(0) && ih < intImm(H), ih - a, intImm(rhc)) * intImm(PW), px);
            }
            return H2 % th != 0 ? ifThen(oh < intImm(H2), px) : px;
        });
        return cClamp ? ifThen(cg < intImm(Cm), rows) : rows;
    });

    Stmt body = allocate(Pn, seq({gemm, zeroRow, nVec > nInner ? allocate(Yr, dw) : dw}));
    // a = clamp(oh0 * s - p, 0, H - rhc): the first image row of the panel.
    body = let(va, maxOf(minOf(oh0 * intImm(s0) - intImm(p0), intImm(H - rhc)), intImm(0)), body);
    const Var wv = k.newVar("w");
    const Expr w = varRef(wv);
    const Expr rest = w / intImm(cBlocks);
    body = let(vcb, w % intImm(cBlocks), let(vty, rest % intImm(tilesH), let(vn, rest / intImm(tilesH), body)));
    const std::string gridText =
        "spatial(" + std::to_string(N) + "," + std::to_string(tilesH) + "," + std::to_string(cBlocks) + ")";
    k.body = forLoop(wv, intImm(workers), body, ForKind::Parallel, 0, "grid = " + gridText);
    k.mappings.push_back("grid = " + gridText);
    k.notes.push_back("fused pw-dw chain: " + nodeA.name + " -> " + nodeB.name + ", intermediate " + chainDimsText(A.ys) +
                      " computed per tile and channel block into a panel by the GEMM template");
    k.notes.push_back("tile " + std::to_string(th) + "x" + std::to_string(W2) + " output pixels x " + std::to_string(CB) +
                      " channels; panel [" + std::to_string(CB) + "," + std::to_string(rhc + 1) + " x " + std::to_string(PW) +
                      "] (" + std::to_string(rhc) + " input rows + a zero row); GEMM " + (flat ? "over the flattened rows" : "per row") +
                      ", tiles " + std::to_string(CB) + " x " +
                      std::to_string(tn) + " (MatMul template, axpy form); " + std::to_string(nInner) +
                      " inner columns vectorised");
    return std::move(lk);
}


/// Floats of the Local panel of a pw-pw worker (128 KiB: inside the 1 MiB L2 of a core).
constexpr std::int64_t kPwPwPanelBudget = 32768;

/// pw-pw on the CPU through the MatMul/Gemm template, twice. Each worker owns one image n, a
/// tile of th whole output rows starting at oh0 and a chunk of Kc output filters. The panel holds
/// the th image rows starting at a = min(oh0, H - th) (the last tile of a ragged map is shifted
/// up, recomputing rows of the previous one instead of reading past the map):
///   Bp[i][q] = between(B1[i] + sum_c W1[i, c] * X[n, c, a*W + q])           (GEMM 1, q < th*W)
///   Y[n, k, oh, j] = B2[k] + sum_i W2[k, i] * Bp[i][(oh - a)*W + j]           (GEMM 2)
/// GEMM 1 runs over the tile's pixels as one contiguous operand (column tiles of kPwDwTn, the last
/// one ragged) and blocks of 8 intermediate channels (the last one clamped: the panel has Cm
/// rounded up to 8 rows). GEMM 2 runs over blocks of 8 filters and, on maps at least
/// kMinRowPixels wide, per output row over its columns rounded up to whole vectors (the padded
/// columns read the next row or a zeroed slack after the panel and are not stored); on narrower
/// maps over the flattened pixels (stores split into row and column). Each element of Y is
/// stored once; rows of a shifted tile that belong to the previous tile are not stored. Filter
/// chunks (kChunks > 1, which recompute GEMM 1) only when there are too few row tiles for the
/// threads.
support::Expected<LoweredKernel> lowerPwPwGemmCpu(const ir::Graph& g, const ConvChainSpec& chain,
                                                  const ConvChainInfo& info, const LowerOptions& options,
                                                  const std::string& where) {
    const ChainConv& A = info.A;
    const ir::Node& nodeA = g.node(A.id);
    const ir::Node& nodeB = g.node(info.B.id);
    const std::int64_t N = info.N, C = info.C, H = info.H, W = info.W, Cm = info.Cm, K = info.K;
    const std::int64_t threads = std::max(1, options.cpuThreads);

    // ---- plan ----
    const bool flat = W < kMinRowPixels;
    const std::int64_t tm1 = std::min(Cm, kGemmTm);
    const std::int64_t CmPad = chainRoundUp(Cm, tm1);
    const std::int64_t cp = flat ? W : chainRoundUp(W, 16);
    std::int64_t th = std::max<std::int64_t>(1, std::min(H, kPwPwPanelBudget / (CmPad * W)));
    std::int64_t Kc = K, kChunks = 1;
    auto workerCount = [&] { return N * chainCeilDiv(H, th) * kChunks; };
    while (workerCount() < 2 * threads && th > 1) th = (th + 1) / 2;
    while (workerCount() < 2 * threads && Kc > kGemmTm) {
        Kc = chainRoundUp(chainCeilDiv(Kc, 2), kGemmTm);
        kChunks = chainCeilDiv(K, Kc);
    }
    const std::int64_t tilesH = chainCeilDiv(H, th);
    const std::int64_t workers = N * tilesH * kChunks;
    const std::int64_t tm2 = std::min(Kc, kGemmTm);
    const std::int64_t P = th * W;                  // panel pixels
    const std::int64_t panelLen = P + (cp - W);     // + slack for the last row's padded columns
    const bool shifted = H % th != 0;               // the last tile starts at a = H - th < oh0

    // ---- kernel and parameters ----
    auto begun = beginChainKernel(g, chain, info, options, where);
    if (!begun) return begun.diagnostics();
    ChainKernel& ck = *begun;
    LoweredKernel& lk = ck.lk;
    const int X = ck.X, W1b = ck.W1b, B1b = ck.B1b, W2b = ck.W2b, B2b = ck.B2b, Yb = ck.Yb;
    Kernel& k = lk.kernel;
    const DType f32 = DType::F32;
    const Expr zero = floatImm(0.0, f32);
    // X viewed [N, C, H*W] (the tile's rows are one contiguous operand; no prologue on chains).
    k.buffers[static_cast<std::size_t>(X)].shape = {N, C, H * W};

    BufferDecl pd;
    pd.name = "Bp";
    pd.dtype = f32;
    pd.scope = MemoryScope::Local;
    pd.shape = {CmPad, panelLen};
    const int Bp = k.addBuffer(pd);
    support::DiagnosticList betweenErrors;

    const Var vkc = k.newVar("kc"), vty = k.newVar("ty"), vn = k.newVar("n"), va = k.newVar("a");
    const Expr n = varRef(vn), oh0 = varRef(vty) * intImm(th), k0 = varRef(vkc) * intImm(Kc);
    const Expr a = shifted ? varRef(va) : oh0;
    const bool mClamp = CmPad != Cm, kClamp = K % Kc != 0;

    const ColumnTiles tiles1 = flatColumnTiles(P, kPwDwTn);
    const ColumnTiles tiles2 = flatColumnTiles(flat ? P : cp, kPwDwTn);
    auto overTiles = [&](const ColumnTiles& tiles, const std::function<Stmt(const Expr&, std::int64_t)>& f) {
        return overColumnTiles(k, tiles, f);
    };

    // GEMM 1: blocks of tm1 channels innermost (the X tile stays hot across them).
    Stmt fill = overTiles(tiles1, [&](const Expr& j0, std::int64_t w) {
        return loopOver(k, "mb", intImm(CmPad / tm1), ForKind::Serial, [&](const Expr& mb) -> Stmt {
            GemmTileSpec s;
            s.K = C;
            s.acc = f32;
            auto chan = [&](const Expr& i) { return mClamp ? minOf(i, intImm(Cm - 1)) : i; };
            s.a = [&, chan](const Expr& i, const Expr& c) { return load(W1b, f32, {chan(i), c, intImm(0), intImm(0)}); };
            s.b = [&](const Expr& c, const Expr& j) { return load(X, f32, {n, c, a * intImm(W) + j}); };
            s.store = [&, chan](const Expr& i, const Expr& j, const Expr& v) -> Stmt {
                return storeBetween(k, ck, info, betweenErrors, B1b >= 0 ? v + load(B1b, f32, {chan(i)}) : v,
                                    [&](const Expr& t) { return store(Bp, {i, j}, t); });
            };
            return emitGemmTile(k, s, mb * intImm(tm1), j0, intImm(tm1), intImm(w), tm1, w);
        });
    });
    if (betweenErrors.hasErrors()) return betweenErrors;
    if (panelLen > P)
        fill = seq({fill, loopOver(k, "i", intImm(CmPad), ForKind::Serial, [&](const Expr& i) {
                        return loopOver(k, "col", intImm(panelLen - P), ForKind::Vectorize,
                                        [&](const Expr& col) { return store(Bp, {i, intImm(P) + col}, zero); });
                    })});

    // GEMM 2 for output row r (null: flat over the panel): blocks of tm2 filters innermost.
    auto gemm2 = [&](const Expr& r) -> Stmt {
        return overTiles(tiles2, [&](const Expr& j0, std::int64_t w) {
            auto block = [&](const Expr& i0, std::int64_t mExt) {
                GemmTileSpec s;
                s.K = Cm;
                s.acc = f32;
                s.a = [&](const Expr& i, const Expr& c) {
                    return load(W2b, f32, {kClamp ? minOf(i, intImm(K - 1)) : i, c, intImm(0), intImm(0)});
                };
                // Panel row of output row oh0 + r: oh0 - a + r.
                const Expr rowBase = r ? (shifted ? oh0 - a + r : r) * intImm(W) : Expr();
                s.b = [&, rowBase](const Expr& c, const Expr& j) { return load(Bp, f32, {c, rowBase ? rowBase + j : j}); };
                s.store = [&, r](const Expr& i, const Expr& j, const Expr& v) -> Stmt {
                    Expr gd;
                    auto andMaybe = [&](const Expr& c) { gd = gd ? (gd && c) : c; };
                    if (kClamp) andMaybe(i < intImm(K));
                    Expr oh = r ? oh0 + r : oh0, ow = j;
                    if (!r) {
                        oh = a + j / intImm(W);
                        ow = j % intImm(W);
                        if (shifted) andMaybe(oh >= oh0);
                    } else if (cp > W) {
                        andMaybe(j < intImm(W));
                    }
                    Stmt st = store(Yb, {n, i, oh, ow}, B2b >= 0 ? v + load(B2b, f32, {i}) : v);
                    return gd ? ifThen(gd, st) : st;
                };
                return emitGemmTile(k, s, i0, j0, intImm(mExt), intImm(w), mExt, w);
            };
            std::vector<Stmt> parts;
            if (Kc / tm2 > 0)
                parts.push_back(loopOver(k, "mb", intImm(Kc / tm2), ForKind::Serial,
                                         [&](const Expr& mb) { return block(k0 + mb * intImm(tm2), tm2); }));
            if (Kc % tm2) parts.push_back(block(k0 + intImm(Kc / tm2 * tm2), Kc % tm2));
            return seq(std::move(parts));
        });
    };
    Stmt out = flat ? gemm2(Expr()) : loopOver(k, "r", intImm(th), ForKind::Serial, [&](const Expr& r) {
        Stmt row = gemm2(r);
        return shifted ? ifThen(oh0 + r < intImm(H), row) : row;
    });
    if (!fill || !out) return chainError(where, "conv chain: lowering failed");

    Stmt body = allocate(Bp, seq({fill, out}));
    if (shifted) body = let(va, minOf(oh0, intImm(H - th)), body);
    const Var wv = k.newVar("w");
    const Expr w = varRef(wv);
    const Expr rest = w / intImm(kChunks);
    body = let(vkc, w % intImm(kChunks), let(vty, rest % intImm(tilesH), let(vn, rest / intImm(tilesH), body)));
    const std::string gridText =
        "spatial(" + std::to_string(N) + "," + std::to_string(tilesH) + "," + std::to_string(kChunks) + ")";
    k.body = forLoop(wv, intImm(workers), body, ForKind::Parallel, 0, "grid = " + gridText);
    k.mappings.push_back("grid = " + gridText);
    k.notes.push_back("fused pw-pw chain: " + nodeA.name + " -> " + nodeB.name + ", intermediate " + chainDimsText(A.ys) +
                      " computed per tile into a panel by the GEMM template, then the second GEMM over it");
    k.notes.push_back("tile " + std::to_string(th) + "x" + std::to_string(W) + " output pixels, Kc = " + std::to_string(Kc) +
                      " output channels per worker; panel [" + std::to_string(CmPad) + "," + std::to_string(panelLen) +
                      "]; GEMM tiles " + std::to_string(tm1) + " x " + std::to_string(tiles1.front().second) + " over the tile, then " +
                      std::to_string(tm2) + " x " + std::to_string(tiles2.front().second) + (flat ? " over the tile" : " per row") +
                      " (MatMul template, axpy form)");
    return std::move(lk);
}

/// a && b where either may be null (no condition).
Expr andMaybe(const Expr& a, const Expr& b) {
    if (!a) return b;
    if (!b) return a;
    return a && b;
}

Stmt guarded(const Expr& cond, Stmt s) { return cond ? ifThen(cond, std::move(s)) : s; }

/// The plan of the register-tiled kernel (pw-dw and pw-pw; file comment): column tiles of up to
/// 256, as many rows as keep Ts within kTsBudget (pw-dw: then fewer channels), then shorter tiles
/// until there are two workers per thread.
CpuChainPlan planRegisterTiles(const ConvChainInfo& info, std::int64_t threads) {
    const ChainConv& B = info.B;
    const bool secondDw = info.secondDw;
    const std::int64_t N = info.N, Cm = info.Cm, K = info.K, H2 = info.H2, W2 = info.W2;
    const std::int64_t s2h = B.geom.s[0], s2w = B.geom.s[1], k2h = B.geom.k[0], k2w = B.geom.k[1];
    const std::int64_t d2h = B.geom.d[0], d2w = B.geom.d[1];
    CpuChainPlan pl;
    pl.tw = std::min<std::int64_t>(W2, 256);
    pl.tilesW = chainCeilDiv(W2, pl.tw);
    auto regionRows = [&](std::int64_t th) { return (th - 1) * s2h + (k2h - 1) * d2h + 1; };
    auto tsFloats = [&] {
        return secondDw ? pl.Cc * regionRows(pl.th) * pl.rwPad : Cm * pl.th * pl.colPad;
    };
    if (secondDw) {
        pl.rw = (pl.tw - 1) * s2w + (k2w - 1) * d2w + 1;
        pl.PB = pixelBlock(pl.rw);
        pl.rwPad = chainRoundUp(pl.rw, pl.PB);
        pl.Cc = std::min<std::int64_t>(Cm, 64);
        pl.RK1 = rowBlock(pl.Cc, pl.PB);
        pl.th = std::max<std::int64_t>(1, std::min(H2, kTargetPixels / pl.tw));
        while (tsFloats() > kTsBudget && pl.th > 1) --pl.th;
        while (tsFloats() > kTsBudget && pl.Cc > pl.RK1) pl.Cc = chainRoundUp(pl.Cc / 2, pl.RK1);
        pl.Kc = pl.Cc;
        pl.kChunks = chainCeilDiv(Cm, pl.Cc);
    } else {
        pl.PB = pixelBlock(pl.tw);
        pl.colPad = chainRoundUp(pl.tw, pl.PB);
        pl.RK1 = rowBlock(Cm, pl.PB);
        pl.RK2 = rowBlock(K, pl.PB);
        pl.th = std::max<std::int64_t>(1, std::min(H2, kTargetPixels / pl.colPad));
        while (tsFloats() > kTsBudget && pl.th > 1) --pl.th;
        pl.Kc = K;
        pl.kChunks = 1;
    }
    // Enough workers for the threads: shorter tiles.
    auto workerCount = [&] { return N * chainCeilDiv(H2, pl.th) * pl.tilesW * pl.kChunks; };
    while (workerCount() < 2 * threads && pl.th > 1) pl.th = (pl.th + 1) / 2;
    pl.tilesH = chainCeilDiv(H2, pl.th);
    pl.rh = secondDw ? regionRows(pl.th) : pl.th;
    if (!secondDw) pl.rw = pl.tw;
    return pl;
}

/// The phases of one worker of the register-tiled kernel for plan `pl`, into the kernel `ck`
/// begun. Each function creates its variables as the generated code uses them, so they run in
/// that order.
class RegisterTileEmitter {
public:
    RegisterTileEmitter(const ConvChainInfo& info, const CpuChainPlan& pl, ChainKernel& ck);
    /// The Parallel loop over the workers; null when an op between the convs does not inline
    /// (errors() says why).
    Stmt emit(const std::string& gridText);
    const support::DiagnosticList& errors() const { return m_betweenErrors; }

private:
    Stmt storeT(const std::vector<Expr>& idx, const Expr& value, const Expr& valid = Expr());
    Stmt fillRegion(const ChainWorker& wk);
    Stmt depthwiseOut(const ChainWorker& wk);
    Stmt fillTile(const ChainWorker& wk);
    Stmt pointwiseOut(const ChainWorker& wk);

    const ConvChainInfo& m_info;
    const CpuChainPlan& pl;
    Kernel& k;
    const ChainKernel& m_ck;
    const DType f32 = DType::F32;
    const Expr zero = floatImm(0.0, f32);
    const int X, W1b, B1b, W2b, B2b, Yb;
    const bool secondDw;
    const std::int64_t C, Cm, H1, W1, K, H2, W2;
    const std::int64_t s2h, s2w, k2h, k2w, d2h, d2w, p2h, p2w;
    support::DiagnosticList m_betweenErrors;
    int Ts = -1;
};

RegisterTileEmitter::RegisterTileEmitter(const ConvChainInfo& info, const CpuChainPlan& plan, ChainKernel& ck)
    : m_info(info), pl(plan), k(ck.lk.kernel), m_ck(ck), X(ck.X), W1b(ck.W1b), B1b(ck.B1b), W2b(ck.W2b), B2b(ck.B2b),
      Yb(ck.Yb), secondDw(info.secondDw), C(info.C), Cm(info.Cm), H1(info.H1), W1(info.W1), K(info.K), H2(info.H2),
      W2(info.W2), s2h(info.B.geom.s[0]), s2w(info.B.geom.s[1]), k2h(info.B.geom.k[0]), k2w(info.B.geom.k[1]),
      d2h(info.B.geom.d[0]), d2w(info.B.geom.d[1]), p2h(info.B.geom.pb[0]), p2w(info.B.geom.pb[1]) {
    BufferDecl tsDecl;
    tsDecl.name = "Ts";
    tsDecl.dtype = f32;
    tsDecl.scope = MemoryScope::Local;
    tsDecl.shape = secondDw ? std::vector<std::int64_t>{pl.Cc, pl.rh, pl.rwPad} : std::vector<std::int64_t>{Cm, pl.th, pl.colPad};
    Ts = k.addBuffer(tsDecl);
}

// Ts[idx] = between(value) (through a let of the first conv's value).
// With `valid`: select(valid, between(value), 0).
Stmt RegisterTileEmitter::storeT(const std::vector<Expr>& idx, const Expr& value, const Expr& valid) {
    return storeBetween(k, m_ck, m_info, m_betweenErrors, value,
                        [&](const Expr& t) { return store(Ts, idx, valid ? select(valid, t, zero) : t); });
}

// pw-dw: the halo region of T for the worker's Cc channels, a register GEMM over C, 0 outside
// the image.
Stmt RegisterTileEmitter::fillRegion(const ChainWorker& wk) {
    const bool cClamp = Cm % pl.Cc != 0 || pl.Cc % pl.RK1 != 0;
    const std::int64_t ihLo = -p2h, ihHi = (pl.tilesH - 1) * pl.th * s2h - p2h + pl.rh - 1;
    const std::int64_t iwLo = -p2w, iwHi = (pl.tilesW - 1) * pl.tw * s2w - p2w + pl.rwPad - 1;
    RegGemm fillG;
    fillG.M = pl.Cc;
    fillG.RK = pl.RK1;
    fillG.PB = pl.PB;
    fillG.red = C;
    fillG.rows = pl.rh;
    fillG.colPad = pl.rwPad;
    auto chan = [&](const Expr& m) { return cClamp ? minOf(wk.k0 + m, intImm(Cm - 1)) : wk.k0 + m; };
    fillG.w = [&](const Expr& m, const Expr& c) { return load(W1b, f32, {chan(m), c, intImm(0), intImm(0)}); };
    fillG.b = [&](const Expr& c, const Expr& r, const Expr& col) {
        const Expr ih = wk.oh0 * intImm(s2h) - intImm(p2h) + r;
        const Expr iw = wk.ow0 * intImm(s2w) - intImm(p2w) + col;
        // Masked (not clamped) loads: the row segments stay contiguous; the values outside
        // the image are replaced by 0 at the store.
        Expr inside;
        if (ihLo < 0) inside = andMaybe(inside, ih >= intImm(0));
        if (ihHi > H1 - 1) inside = andMaybe(inside, ih < intImm(H1));
        if (iwLo < 0) inside = andMaybe(inside, iw >= intImm(0));
        if (iwHi > W1 - 1) inside = andMaybe(inside, iw < intImm(W1));
        const Expr x = load(X, f32, {wk.n, c, ih, iw});
        return inside ? select(inside, x, zero) : x;
    };
    if (cClamp) fillG.rowGuard = [&](const Expr& m, const Expr&) { return wk.k0 + m < intImm(Cm); };
    fillG.store = [&](const Expr& m, const Expr& r, const Expr& col, const Expr& v) -> Stmt {
        const Expr ih = wk.oh0 * intImm(s2h) - intImm(p2h) + r;
        const Expr iw = wk.ow0 * intImm(s2w) - intImm(p2w) + col;
        Expr valid;
        if (ihLo < 0) valid = andMaybe(valid, ih >= intImm(0));
        if (ihHi > H1 - 1) valid = andMaybe(valid, ih < intImm(H1));
        if (iwLo < 0) valid = andMaybe(valid, iw >= intImm(0));
        if (iwHi > W1 - 1) valid = andMaybe(valid, iw < intImm(W1));
        return storeT({m, r, col}, B1b >= 0 ? v + load(B1b, f32, {chan(m)}) : v, valid);
    };
    return emitRegGemm(k, fillG);
}

// pw-dw: each output row of the tile, a vectorised tap sum over Ts.
Stmt RegisterTileEmitter::depthwiseOut(const ChainWorker& wk) {
    return loopOver(k, "c", intImm(pl.Cc), ForKind::Serial, [&](const Expr& c) -> Stmt {
        const Expr cg = wk.k0 + c;
        return loopOver(k, "r", intImm(pl.th), ForKind::Serial, [&](const Expr& r) -> Stmt {
            const Expr oh = wk.oh0 + r;
            Stmt px = loopOver(k, "col", intImm(pl.tw), ForKind::Vectorize, [&](const Expr& col) -> Stmt {
                const Expr ow = wk.ow0 + col;
                Expr sum = B2b >= 0 ? load(B2b, f32, {cg}) : Expr();
                for (std::int64_t kh = 0; kh < k2h; ++kh)
                    for (std::int64_t kw = 0; kw < k2w; ++kw) {
                        const Expr term = load(W2b, f32, {cg, intImm(0), intImm(kh), intImm(kw)}) *
                                          load(Ts, f32, {c, r * intImm(s2h) + intImm(kh * d2h), col * intImm(s2w) + intImm(kw * d2w)});
                        sum = sum ? sum + term : term;
                    }
                return guarded(W2 % pl.tw != 0 ? ow < intImm(W2) : Expr(), store(Yb, {wk.n, cg, oh, ow}, sum));
            });
            Expr rowOk;
            if (Cm % pl.Cc != 0) rowOk = andMaybe(rowOk, cg < intImm(Cm));
            if (H2 % pl.th != 0) rowOk = andMaybe(rowOk, oh < intImm(H2));
            return guarded(rowOk, px);
        });
    });
}

// pw-pw: Ts[Cm][th][colPad] for the tile's rows, a register GEMM over C.
Stmt RegisterTileEmitter::fillTile(const ChainWorker& wk) {
    const bool colOut = (pl.tilesW - 1) * pl.tw + pl.colPad > W1;  // tile columns past the map
    RegGemm fillG;
    fillG.M = Cm;
    fillG.RK = pl.RK1;
    fillG.PB = pl.PB;
    fillG.red = C;
    fillG.rows = pl.th;
    fillG.colPad = pl.colPad;
    const bool mClamp = Cm % pl.RK1 != 0;
    auto chan = [&](const Expr& m) { return mClamp ? minOf(m, intImm(Cm - 1)) : m; };
    fillG.w = [&](const Expr& m, const Expr& c) { return load(W1b, f32, {chan(m), c, intImm(0), intImm(0)}); };
    fillG.b = [&](const Expr& c, const Expr& r, const Expr& col) {
        // Rows past the map read row H1 - 1 (uniform over the segment); columns past it are
        // masked loads (contiguous segments). Neither value is stored.
        Expr ih = wk.oh0 + r;
        const Expr iw = wk.ow0 + col;
        if (H1 % pl.th != 0) ih = minOf(ih, intImm(H1 - 1));
        const Expr x = load(X, f32, {wk.n, c, ih, iw});
        return colOut ? select(iw < intImm(W1), x, zero) : x;
    };
    if (mClamp) fillG.rowGuard = [&](const Expr& m, const Expr&) { return m < intImm(Cm); };
    fillG.store = [&](const Expr& m, const Expr& r, const Expr& col, const Expr& v) -> Stmt {
        return storeT({m, r, col}, B1b >= 0 ? v + load(B1b, f32, {m}) : v);
    };
    return emitRegGemm(k, fillG);
}

// pw-pw: for each block of filters, row and pixel segment, Y = W2 x Ts + B2 (each element once).
Stmt RegisterTileEmitter::pointwiseOut(const ChainWorker& wk) {
    RegGemm pw;
    pw.M = pl.Kc;
    pw.RK = pl.RK2;
    pw.PB = pl.PB;
    pw.red = Cm;
    pw.rows = pl.th;
    pw.colPad = pl.colPad;
    const bool kClamp = K % pl.Kc != 0 || pl.Kc % pl.RK2 != 0;
    auto filt = [&](const Expr& m) { return kClamp ? minOf(wk.k0 + m, intImm(K - 1)) : wk.k0 + m; };
    pw.w = [&](const Expr& m, const Expr& c) { return load(W2b, f32, {filt(m), c, intImm(0), intImm(0)}); };
    pw.b = [&](const Expr& c, const Expr& r, const Expr& col) { return load(Ts, f32, {c, r, col}); };
    if (kClamp || H2 % pl.th != 0)
        pw.rowGuard = [&](const Expr& m, const Expr& r) {
            Expr gd;
            if (kClamp) gd = andMaybe(gd, wk.k0 + m < intImm(K));
            if (H2 % pl.th != 0) gd = andMaybe(gd, wk.oh0 + r < intImm(H2));
            return gd;
        };
    pw.store = [&](const Expr& m, const Expr& r, const Expr& col, const Expr& v) -> Stmt {
        const Expr kg = wk.k0 + m, ow = wk.ow0 + col;
        Expr gd;
        if (pl.colPad > pl.tw) gd = andMaybe(gd, col < intImm(pl.tw));
        if (W2 % pl.tw != 0) gd = andMaybe(gd, ow < intImm(W2));
        return guarded(gd, store(Yb, {wk.n, kg, wk.oh0 + r, ow}, B2b >= 0 ? v + load(B2b, f32, {kg}) : v));
    };
    return emitRegGemm(k, pw);
}

Stmt RegisterTileEmitter::emit(const std::string& gridText) {
    const std::int64_t workers = m_info.N * pl.tilesH * pl.tilesW * pl.kChunks;
    const Var wv = k.newVar("w");
    Stmt perWorker = withChainWorker(k, varRef(wv), pl.th, pl.tw, pl.Kc, pl.tilesH, pl.tilesW, pl.kChunks,
                                     [&](const ChainWorker& wk) -> Stmt {
                                         Stmt fill = secondDw ? fillRegion(wk) : fillTile(wk);
                                         Stmt out = secondDw ? depthwiseOut(wk) : pointwiseOut(wk);
                                         if (!fill || !out) return nullptr;
                                         return allocate(Ts, seq({fill, out}));
                                     });
    if (!perWorker) return nullptr;
    return forLoop(wv, intImm(workers), perWorker, ForKind::Parallel, 0, "grid = " + gridText);
}

}  // namespace

support::Expected<LoweredKernel> lowerConvChainCpu(const ir::Graph& g, const ConvChainSpec& chain,
                                                   const ConvChainInfo& info, const LowerOptions& options,
                                                   const std::string& where) {
    const bool firstDw = info.firstDw;
    const bool secondDw = info.secondDw;
    const std::int64_t Cm = info.Cm, H = info.H, W = info.W;
    const std::int64_t k2h = info.B.geom.k[0], d2h = info.B.geom.d[0];
    if (firstDw) return lowerDwPwGemmCpu(g, chain, info, options, where);
    // pw-dw through the template while one channel block's panel for a single output row fits
    // (4x the budget); wider maps take the register-tiled path below (column tiles).
    if (secondDw && std::min(Cm, kGemmTm) * (std::min(H, (k2h - 1) * d2h + 1) + 1) * W <= 4 * kPwDwPanelBudget)
        return lowerPwDwGemmCpu(g, chain, info, options, where);
    // pw-pw through the template while the panel of one row fits (4x the budget).
    if (!secondDw && chainRoundUp(Cm, std::min(Cm, kGemmTm)) * (W + 16) <= 4 * kPwPwPanelBudget)
        return lowerPwPwGemmCpu(g, chain, info, options, where);

    const CpuChainPlan pl = planRegisterTiles(info, std::max(1, options.cpuThreads));
    auto begun = beginChainKernel(g, chain, info, options, where);
    if (!begun) return begun.diagnostics();
    ChainKernel& ck = *begun;
    Kernel& k = ck.lk.kernel;
    RegisterTileEmitter emitter(info, pl, ck);
    const std::string gridText = "spatial(" + std::to_string(info.N) + "," + std::to_string(pl.tilesH) + "," +
                                 std::to_string(pl.tilesW) + "," + std::to_string(pl.kChunks) + ")";
    Stmt body = emitter.emit(gridText);
    if (!body) return emitter.errors().hasErrors() ? emitter.errors() : chainError(where, "conv chain: lowering failed");
    k.body = body;
    k.mappings.push_back("grid = " + gridText);
    const std::string kindText = schedule::fusionKindName(chain.kind);
    k.notes.push_back("fused " + kindText + " chain: " + g.node(info.A.id).name + " -> " + g.node(info.B.id).name +
                      ", intermediate " + chainDimsText(info.A.ys) + " kept in a local tile");
    k.notes.push_back("tile " + std::to_string(pl.th) + "x" + std::to_string(pl.tw) + " output pixels" +
                      (secondDw ? " (intermediate region " + std::to_string(pl.rh) + "x" + std::to_string(pl.rw) + ", Cc = " +
                                      std::to_string(pl.Cc) + " channels per worker)"
                                : ", Kc = " + std::to_string(pl.Kc) + " output channels per worker") +
                      "; register tiles " + std::to_string(secondDw ? pl.RK1 : pl.RK2) + " x " + std::to_string(pl.PB) +
                      " (rows padded to " + std::to_string(secondDw ? pl.rwPad : pl.colPad) + ")");
    return std::move(ck.lk);
}

}  // namespace tessera::lower::detail
