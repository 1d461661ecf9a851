// Conv (N-D, groups incl. depthwise, strides, dilations, pads, auto_pad, optional bias) and the
// sliding-window helpers shared with pooling (core/lower/detail/lower_heavy.h).
//
// Loop structure (CPU default):
// - Pointwise (1x1 kernel, stride 1, no padding, group 1): a matmul per image,
//   Y[n, co, p] = sum_ci W[co, ci] * X[n, ci, p] over the flattened spatial index p; X, W and Y are
//   declared with the flattened shapes [N, C, H*W], [M, C], [N, M, H*W]. Mapped over
//   [N, M, H*W]: grid = spatial(N, M/8, HW/64, M tiles fastest) * repeat(1, 8, 64); inside a tile
//   acc[8][64] (Local), `for ci: for co (unrolled): w = W[co, ci]; for p (vectorised): acc += w * X`;
//   for small images (H*W < kPointwiseChunkMaxPixels) `for ci in chunks of 8: for p (vectorised):
//   for co (unrolled): acc += sum of the chunk's 8 products` (one accumulator update per 8 ci).
// - Everything else (direct conv, depthwise): mapped over the output [N, M, O_1..O_r]; tile
//   (1, tco, .., th, tw) with tw the whole last output extent (<= 256) and th the rows that fit
//   about 1024 accumulators; tco = 1 for depthwise, else min(M, 8). Inside a tile acc (Local) is
//   zeroed, then `for ci: for rows: for kernel rows (guard: input row inside): for kw (copied per
//   tap): for co (unrolled): w = W[..]; for ow in the tap's valid range (vectorised): acc += w * X`,
//   then stored with the bias. The valid ow range of each tap is computed from the geometry, so
//   the inner loop has no padding guard.
// - 2-D convs with group 1, and depthwise convs of stride 1 up to 112 wide or whose output rows
//   (times the stride) are narrower than kStagedDepthwiseMaxWidth, when the tile spans whole output rows (the default does): per input
//   channel the tile's input rows are first copied into a Local buffer xs, zero-padded and split
//   into stride phases (xs[ph * sw + pw][i * Wq + j] = X[(oh0 + i) * sh + ph - pad_h, j * sw + pw - pad_w]),
//   so tap (kh, kw) of output pixel p = oh * Wq + ow reads xs[phase][offset(kh, kw) + p]: one
//   contiguous vectorised loop over all of the tile's pixels (junk columns ow >= OW included and
//   dropped at the store) instead of one short row per tap, e.g. 61 lanes instead of 7 on a 7x7 map.
// A schedule's grid/block mapping replaces the default over the same index space (a rank-3
// mapping for a pointwise conv selects the matmul view, a rank r+2 mapping the direct conv).
// CUDA, no user mapping: a pointwise conv (f32/f16/bf16, C_out >= 64, N*H*W >= 64) is the GEMM
// template's product Y[n] = W X[n] with the images flattened into its columns, j = n * HW + p
// (GpuGemmSpec::colGroup = HW), and the bias as a per-row C of shape [C_out, 1]; its own grid and
// block mappings written back as a schedule select it again. Other dense (group 1) convs are an
// implicit GEMM (lower_conv_gpu.cpp) when convGemmTile finds a tile giving enough blocks; the rest
// (groups, depthwise, small batch-1 layers) compute one output per thread with the taps unrolled.

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "core/lower/detail/lower_heavy.h"

namespace tessera::lower::detail {

namespace {

std::string dimsText(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

Expr floorDivE(const Expr& a, std::int64_t b) { return b == 1 ? a : binary(BinaryOp::FloorDiv, a, intImm(b)); }
Expr ceilDivE(const Expr& a, std::int64_t b) {
    return b == 1 ? a : unary(UnaryOp::Neg, binary(BinaryOp::FloorDiv, unary(UnaryOp::Neg, a), intImm(b)));
}

/// Strided depthwise convs with an output row at least this wide (times the stride: staging copies
/// every stride phase) keep the row-vectorised form (their rows already fill the vectors, and
/// staging costs about as much as the taps); stride-1 ones up to kStagedDepthwiseMaxWidthStride1
/// wide are staged (measured on MobileNetV2: 112 and 56 wide 1.2x and 1.45x faster staged).
constexpr std::int64_t kStagedDepthwiseMaxWidth = 32;
constexpr std::int64_t kStagedDepthwiseMaxWidthStride1 = 112;
/// The staged form's pixel loops run over a multiple of this many lanes (one AVX-512 f32 vector).
constexpr std::int64_t kStagedLanes = 16;

/// Pointwise convs with at least this many input channels and fewer than kPointwiseChunkMaxPixels
/// pixels per image (measured: 2x on MobileNetV2's 7x7 layers, slightly slower from 14x14 on)
/// sum this many input channels per accumulator update, pixels outermost.
constexpr std::int64_t kPointwiseChunk = 8;
constexpr std::int64_t kPointwiseChunkMaxPixels = 64;

/// Staged-form convs with a stride > 1 or output rows at least kStagedWideRow wide take tiles of
/// kStagedWideCoTile output channels and about kStagedWideTileBudget accumulators (measured on
/// ResNet-18: 10-35% faster there; 8 channels stay faster on 14x14 and 7x7 stride-1 maps).
constexpr std::int64_t kStagedWideRow = 28;
constexpr std::int64_t kStagedWideCoTile = 16;
constexpr std::int64_t kStagedWideTileBudget = 2048;

std::int64_t roundUp(std::int64_t v, std::int64_t m) { return (v + m - 1) / m * m; }

/// Largest divisor of n that is <= cap (>= 1).
std::int64_t divisorAtMost(std::int64_t n, std::int64_t cap) {
    for (std::int64_t c = std::min(n, std::max<std::int64_t>(cap, 1)); c >= 1; --c)
        if (n % c == 0) return c;
    return 1;
}

}  // namespace

support::Expected<WindowGeom> windowGeometry(const LowerContext& ctx, const std::vector<std::int64_t>& in,
                                             const std::vector<std::int64_t>& kernel, bool ceilMode) {
    const ir::Node& n = ctx.node;
    const std::size_t r = in.size();
    WindowGeom w;
    w.in = in;
    w.k = kernel;
    w.s = n.attrInts("strides", std::vector<std::int64_t>(r, 1));
    w.d = n.attrInts("dilations", std::vector<std::int64_t>(r, 1));
    const std::vector<std::int64_t> pads = n.attrInts("pads", std::vector<std::int64_t>(2 * r, 0));
    if (w.s.size() != r || w.d.size() != r || pads.size() != 2 * r || kernel.size() != r)
        return lowerError(ctx, "strides, dilations, kernel_shape and pads must have " + std::to_string(r) + ", " +
                                   std::to_string(r) + ", " + std::to_string(r) + " and " + std::to_string(2 * r) +
                                   " values");
    w.pb.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(r));
    w.pe.assign(pads.begin() + static_cast<std::ptrdiff_t>(r), pads.end());
    const std::string autoPad = n.attrString("auto_pad", "NOTSET");
    w.out.resize(r);
    for (std::size_t i = 0; i < r; ++i) {
        if (w.s[i] < 1 || w.d[i] < 1 || w.k[i] < 1 || w.pb[i] < 0 || w.pe[i] < 0)
            return lowerError(ctx, "strides, dilations and kernel extents must be >= 1 and pads >= 0");
        const std::int64_t span = (w.k[i] - 1) * w.d[i] + 1;
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            w.out[i] = (in[i] + w.s[i] - 1) / w.s[i];
            const std::int64_t total = std::max<std::int64_t>(0, (w.out[i] - 1) * w.s[i] + span - in[i]);
            w.pb[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
            w.pe[i] = total - w.pb[i];
            continue;
        }
        if (autoPad == "VALID") w.pb[i] = w.pe[i] = 0;
        else if (autoPad != "NOTSET") return lowerError(ctx, "unknown auto_pad '" + autoPad + "'");
        const std::int64_t avail = in[i] + w.pb[i] + w.pe[i] - span;
        if (avail < 0) return lowerError(ctx, "the window (extent " + std::to_string(span) + ") is larger than the padded input");
        w.out[i] = (ceilMode ? (avail + w.s[i] - 1) / w.s[i] : avail / w.s[i]) + 1;
        if (ceilMode && (w.out[i] - 1) * w.s[i] >= in[i] + w.pb[i]) --w.out[i];
    }
    return w;
}

Stmt emitWindowNest(Kernel& k, const WindowGeom& w, const std::vector<Expr>& origin, const std::vector<Expr>& extent,
                    const TapFn& tap) {
    const std::size_t r = w.out.size();
    const std::size_t L = r - 1;
    std::vector<Expr> kIdx(r), localOuter, inOuter;

    auto lastDim = [&]() -> Stmt {
        auto perTap = [&](const Expr& kw) -> Stmt {
            const Expr a = intImm(w.pb[L]) - kw * intImm(w.d[L]);  // first valid ow = ceil(a / s)
            const Expr lo = maxOf(origin[L], ceilDivE(a, w.s[L]));
            const Expr hi = minOf(origin[L] + extent[L],
                                  floorDivE(intImm(w.in[L] - 1 + w.pb[L]) - kw * intImm(w.d[L]), w.s[L]) + intImm(1));
            const Expr cnt = maxOf(intImm(0), hi - lo);
            std::int64_t c = 0;
            if (cnt.isIntImm(&c) && c <= 0) return nullptr;
            kIdx[L] = kw;
            RowBuilder row = [&k, &w, L, lo, cnt, kw, o0 = origin[L]](
                                 const std::function<Stmt(const Expr&, const Expr&)>& f) {
                const Var q = k.newVar("q");
                const Expr ow = lo + varRef(q);
                const Expr iw = ow * intImm(w.s[L]) - intImm(w.pb[L]) + kw * intImm(w.d[L]);
                return forLoop(q, cnt, f(ow - o0, iw), ForKind::Vectorize);
            };
            return tap(kIdx, localOuter, inOuter, row);
        };
        if (w.k[L] <= 16) {
            std::vector<Stmt> taps;
            for (std::int64_t j = 0; j < w.k[L]; ++j) taps.push_back(perTap(intImm(j)));
            return seq(std::move(taps));
        }
        const Var kv = k.newVar("kw");
        Stmt body = perTap(varRef(kv));
        return body ? forLoop(kv, intImm(w.k[L]), body) : nullptr;
    };

    std::function<Stmt(std::size_t)> rec = [&](std::size_t d) -> Stmt {
        if (d == L) return lastDim();
        const Var t = k.newVar("o" + std::to_string(d));
        const Var kv = k.newVar("k" + std::to_string(d));
        const Expr o = origin[d] + varRef(t);
        const Expr in = o * intImm(w.s[d]) - intImm(w.pb[d]) + varRef(kv) * intImm(w.d[d]);
        localOuter.push_back(varRef(t));
        inOuter.push_back(in);
        kIdx[d] = varRef(kv);
        Stmt body = rec(d + 1);
        localOuter.pop_back();
        inOuter.pop_back();
        if (!body) return nullptr;
        const bool needGuard = w.pb[d] > 0 || w.pe[d] > 0 || (w.out[d] - 1) * w.s[d] + (w.k[d] - 1) * w.d[d] >= w.in[d];
        if (needGuard) body = ifThen(in >= intImm(0) && in < intImm(w.in[d]), body);
        return forLoop(t, extent[d], forLoop(kv, intImm(w.k[d]), body, unrollKind(intImm(w.k[d]), 4)));
    };
    return rec(0);
}

namespace {

/// Nested loops over `ext` (one per dim, extents may be expressions), the last one vectorised;
/// dims of constant extent 1 get no loop.
Stmt tileLoops(Kernel& k, const std::vector<Expr>& ext, const std::string& hint,
               const std::function<Stmt(const std::vector<Expr>&)>& body, std::size_t unrollFirst = 0) {
    std::vector<Expr> idx;
    std::function<Stmt(std::size_t)> rec = [&](std::size_t d) -> Stmt {
        if (d == ext.size()) return body(idx);
        ForKind kind = d + 1 == ext.size() ? ForKind::Vectorize : ForKind::Serial;
        if (d < unrollFirst && d + 1 != ext.size()) kind = unrollKind(ext[d], 16);
        return loopOver(k, hint + std::to_string(d), ext[d], kind, [&](const Expr& i) {
            idx.push_back(i);
            Stmt s = rec(d + 1);
            idx.pop_back();
            return s;
        });
    };
    return rec(0);
}

}  // namespace

namespace {

/// A Conv node read and checked (lowerConv's first phase): X [N, C, in...], W [M, C / G,
/// kernel...], optional bias [M], Y [N, M, w.out...].
struct ConvShape {
    std::size_t r = 0;  ///< spatial rank
    std::int64_t N = 0, C = 0, M = 0, G = 1;
    std::vector<std::int64_t> in, kernel;  ///< spatial extents of X and W
    WindowGeom w;
    std::vector<std::int64_t> outShape;  ///< Y's shape
    bool hasBias = false;
};

support::Expected<ConvShape> readConvShape(const LowerContext& ctx) {
    const ir::Node& node = ctx.node;
    if (node.inputs.size() < 2 || node.inputs.size() > 3 || node.outputs.empty() || node.outputs[0] == ir::kNoValue)
        return lowerError(ctx, "Conv needs inputs X, W, optional B and one output");
    auto xs = shapeOf(ctx, node.inputs[0]);
    if (!xs) return xs.diagnostics();
    auto ws = shapeOf(ctx, node.inputs[1]);
    if (!ws) return ws.diagnostics();
    auto ys = shapeOf(ctx, node.outputs[0]);
    if (!ys) return ys.diagnostics();
    if (xs->size() < 3 || ws->size() != xs->size())
        return lowerError(ctx, "Conv needs X and W of the same rank >= 3, got " + dimsText(*xs) + " and " + dimsText(*ws));
    ConvShape cs;
    cs.r = xs->size() - 2;
    cs.N = (*xs)[0], cs.C = (*xs)[1], cs.M = (*ws)[0], cs.G = node.attrInt("group", 1);
    const std::int64_t C = cs.C, M = cs.M, G = cs.G;
    if (G < 1 || C % G != 0 || M % G != 0 || (*ws)[1] != C / G)
        return lowerError(ctx, "group " + std::to_string(G) + " does not fit X " + dimsText(*xs) + " and W " + dimsText(*ws));
    cs.in.assign(xs->begin() + 2, xs->end());
    cs.kernel.assign(ws->begin() + 2, ws->end());
    if (node.attrInts("kernel_shape", cs.kernel) != cs.kernel)
        return lowerError(ctx, "kernel_shape differs from W's " + dimsText(cs.kernel));
    auto geom = windowGeometry(ctx, cs.in, cs.kernel, false);
    if (!geom) return geom.diagnostics();
    cs.w = *geom;
    cs.outShape = {cs.N, M};
    cs.outShape.insert(cs.outShape.end(), cs.w.out.begin(), cs.w.out.end());
    if (*ys != cs.outShape) return lowerError(ctx, "output shape " + dimsText(*ys) + " differs from " + dimsText(cs.outShape));
    cs.hasBias = node.inputs.size() == 3 && node.inputs[2] != ir::kNoValue;
    if (cs.hasBias) {
        auto bsh = shapeOf(ctx, node.inputs[2]);
        if (!bsh) return bsh.diagnostics();
        if (*bsh != std::vector<std::int64_t>{M}) return lowerError(ctx, "bias must have shape [" + std::to_string(M) + "]");
    }
    return cs;
}

/// The loop forms of a checked Conv (file comment), over the kernel that the constructor begins
/// with the parameters X, W, optional bias, Y. lowerConv tries them in order; the one that
/// applies sets the kernel's body and notes.
class ConvForms {
public:
    ConvForms(const LowerContext& ctx, const ConvShape& cs);
    /// 1x1, stride 1, no padding, group 1.
    bool pointwise() const;
    /// CUDA: the GEMM template with the images flattened into the columns; false when it does not apply.
    bool pointwiseAsGpuGemm();
    /// The matmul view over [N, C_out, H*W]; false when the mapping does not resolve.
    bool pointwiseAsMatmul();
    /// CUDA, group 1: the implicit GEMM when convGemmTile finds a tile; false otherwise.
    bool denseAsImplicitGemm();
    /// CUDA without a user mapping: one output per thread, taps unrolled with guards.
    support::Expected<LoweredKernel> oneOutputPerThread();
    /// The direct conv (general, grouped, depthwise): staged rows or per-row window nests.
    support::Expected<LoweredKernel> direct();
    /// The kernel, once a form has set its body.
    LoweredKernel take() { return std::move(lk); }

private:
    Expr biasOf(const Expr& co) const;
    Stmt stagedTile(const TileView& tv);
    Stmt windowTile(const TileView& tv);

    const LowerContext& ctx;
    const WindowGeom& w;
    const std::size_t r;
    const std::int64_t N, C, M, G;
    const std::vector<std::int64_t>& in;
    const std::vector<std::int64_t>& outShape;
    const bool hasBias;
    const std::int64_t cg, mg;  // input and output channels per group
    std::int64_t HW = 1;        // pixels per image
    DType outT = DType::F32, accT = DType::F32, xT = DType::F32, wT = DType::F32, bT = DType::F32;
    LoweredKernel lk;
    int X = -1, W = -1, Bi = -1, Y = -1;
};

ConvForms::ConvForms(const LowerContext& c, const ConvShape& s)
    : ctx(c), w(s.w), r(s.r), N(s.N), C(s.C), M(s.M), G(s.G), in(s.in), outShape(s.outShape), hasBias(s.hasBias),
      cg(s.C / s.G), mg(s.M / s.G) {
    const ir::Node& node = ctx.node;
    outT = dtypeOf(ctx.g, node.outputs[0]);
    accT = accumulatorType(outT);
    lk = beginKernel(ctx);
    X = addInput(ctx, lk, node.inputs[0]);
    W = addInput(ctx, lk, node.inputs[1]);
    Bi = hasBias ? addInput(ctx, lk, node.inputs[2]) : -1;
    Y = addOutput(ctx, lk, node.outputs[0]);
    const Kernel& k = lk.kernel;
    xT = k.buffers[static_cast<std::size_t>(X)].dtype, wT = k.buffers[static_cast<std::size_t>(W)].dtype;
    bT = hasBias ? k.buffers[static_cast<std::size_t>(Bi)].dtype : outT;
    for (auto v : in) HW *= v;
}

Expr ConvForms::biasOf(const Expr& co) const { return hasBias ? cast(load(Bi, bT, {co}), accT) : constant(0.0, accT); }

bool ConvForms::pointwise() const {
    bool p = G == 1 && X != W;
    for (std::size_t i = 0; i < r; ++i) p = p && w.k[i] == 1 && w.s[i] == 1 && w.pb[i] == 0 && w.pe[i] == 0;
    return p;
}

bool ConvForms::pointwiseAsGpuGemm() {
    Kernel& k = lk.kernel;
    // CUDA: the GEMM template (lower_matmul_gpu.cpp) with the images flattened into the columns.
    std::vector<DType> types{xT, wT, outT};
    if (hasBias) types.push_back(bT);
    if (!(HW > 0 && N <= std::numeric_limits<std::int64_t>::max() / HW && useGpuGemm(ctx, {}, M, N * HW, types))) return false;
    k.buffers[static_cast<std::size_t>(X)].shape = {N, C, HW};
    k.buffers[static_cast<std::size_t>(W)].shape = {M, C};
    k.buffers[static_cast<std::size_t>(Y)].shape = {N, M, HW};
    GpuGemmSpec g;
    g.a = W, g.b = X, g.y = Y, g.M = M, g.N = N * HW, g.K = C, g.colGroup = HW;
    if (hasBias) {
        // Gemm's C of shape [M, 1]: one value per row, broadcast along the columns.
        k.buffers[static_cast<std::size_t>(Bi)].shape = {M, 1};
        g.c = Bi;
        g.cShape = {M, 1};
    }
    k.body = emitGpuGemm(k, g);
    k.notes.push_back("pointwise conv as GEMM: M = Co, N = batch x spatial, K = Ci (" + std::to_string(M) + ", " +
                      std::to_string(N) + " x " + std::to_string(HW) + ", " + std::to_string(C) +
                      "); X, W, Y declared [N, Ci, P], [Co, Ci], [N, Co, P]");
    return true;
}

bool ConvForms::pointwiseAsMatmul() {
    Kernel& k = lk.kernel;
    const std::vector<std::int64_t> ext{N, M, HW};
    const std::vector<std::int64_t> tile{1, std::min<std::int64_t>(M, 8), std::min<std::int64_t>(HW, 64)};
    auto plan = resolveMappings(ctx, ext, tiledMapping(ext, tile, {0, 2, 1}));
    if (!plan) return false;
    k.buffers[static_cast<std::size_t>(X)].shape = {N, C, HW};
    k.buffers[static_cast<std::size_t>(W)].shape = {M, C};
    k.buffers[static_cast<std::size_t>(Y)].shape = {N, M, HW};
    k.body = emitTiledLoops(k, *plan, ext, {1, 16, 256}, [&](const TileView& tv) {
        const Expr n = tv.origin[0];
        if (C >= kPointwiseChunk && HW < kPointwiseChunkMaxPixels) {
            // Pixels outermost, input channels summed in chunks of kPointwiseChunk per
            // accumulator update: acc[cc, p] += sum over u of W[co, ci + u] * X[n, ci + u, p].
            const Expr co0 = tv.origin[1], p0 = tv.origin[2];
            BufferDecl ab;
            ab.name = "acc";
            ab.dtype = accT;
            ab.scope = MemoryScope::Local;
            ab.shape = {tv.size[1], tv.size[2]};
            const int acc = k.addBuffer(ab);
            auto update = [&](const Expr& ciBase, std::int64_t terms) {
                return loopOver(k, "p", tv.extent[2], ForKind::Vectorize, [&](const Expr& p) {
                    return loopOver(k, "cc", tv.extent[1], unrollKind(tv.extent[1], 16), [&](const Expr& cc) {
                        Expr v = load(acc, accT, {cc, p});
                        for (std::int64_t u = 0; u < terms; ++u)
                            v = v + cast(load(W, wT, {co0 + cc, ciBase + intImm(u)}), accT) *
                                        cast(load(X, xT, {n, ciBase + intImm(u), p0 + p}), accT);
                        return store(acc, {cc, p}, v);
                    });
                });
            };
            const Var cb = k.newVar("cb");
            std::vector<Stmt> body{
                tileLoops(k, {tv.extent[1], tv.extent[2]}, "z",
                          [&](const std::vector<Expr>& i) { return store(acc, i, constant(0.0, accT)); }, 1),
                forLoop(cb, intImm(C / kPointwiseChunk), update(varRef(cb) * intImm(kPointwiseChunk), kPointwiseChunk))};
            if (C % kPointwiseChunk) body.push_back(update(intImm(C / kPointwiseChunk * kPointwiseChunk), C % kPointwiseChunk));
            body.push_back(tileLoops(k, {tv.extent[1], tv.extent[2]}, "y", [&](const std::vector<Expr>& i) {
                const Expr co = co0 + i[0];
                const Expr v = load(acc, accT, i);
                return store(Y, {n, co, p0 + i[1]}, cast(hasBias ? v + biasOf(co) : v, outT));
            }, 1));
            return allocate(acc, seq(std::move(body)));
        }
        GemmTileSpec s;
        s.K = C;
        s.acc = accT;
        s.a = [&](const Expr& co, const Expr& ci) { return cast(load(W, wT, {co, ci}), accT); };
        s.b = [&, n](const Expr& ci, const Expr& p) { return cast(load(X, xT, {n, ci, p}), accT); };
        s.store = [&, n](const Expr& co, const Expr& p, const Expr& v) {
            return store(Y, {n, co, p}, cast(hasBias ? v + biasOf(co) : v, outT));
        };
        return emitGemmTile(k, s, tv.origin[1], tv.origin[2], tv.extent[1], tv.extent[2], tv.size[1], tv.size[2]);
    });
    k.notes.push_back("pointwise conv as matmul over [N, C_out, H*W]; X, W, Y declared flattened");
    return true;
}

bool ConvForms::denseAsImplicitGemm() {
    Kernel& k = lk.kernel;
    // Dense conv as an implicit GEMM (lower_conv_gpu.cpp) when a tile gives the GPU enough blocks.
    std::int64_t taps = 1, P = 1, Pin = 1;
    for (std::size_t d = 0; d < r; ++d) {
        taps *= w.k[d];
        P *= w.out[d];
        Pin *= w.in[d];
    }
    std::vector<DType> types{xT, wT, outT};
    if (hasBias) types.push_back(bT);
    const bool fits = P > 0 && N <= std::numeric_limits<std::int32_t>::max() / P &&
                      C <= std::numeric_limits<std::int32_t>::max() / taps;
    std::optional<GpuGemmSpec::Tile> tile;
    if (fits && useGpuGemm(ctx, {}, M, N * P, types)) tile = convGemmTile(M, N * P, C * taps, ctx.options.convGemmMinBlocks);
    if (!tile) return false;
    k.buffers[static_cast<std::size_t>(X)].shape = {N, C, Pin};
    k.buffers[static_cast<std::size_t>(W)].shape = {M, C * taps};
    k.buffers[static_cast<std::size_t>(Y)].shape = {N, M, P};
    if (hasBias) k.buffers[static_cast<std::size_t>(Bi)].shape = {M, 1};
    ConvGemmSpec gs;
    gs.x = X, gs.w = W, gs.y = Y, gs.bias = hasBias ? Bi : -1;
    gs.batch = N, gs.channels = C, gs.filters = M;
    gs.geom = w;
    gs.tile = *tile;
    k.body = emitConvImplicitGemm(k, gs);
    k.notes.push_back("conv as implicit GEMM: M = Co, N = batch x output pixels, K = Ci x taps (" +
                      std::to_string(M) + ", " + std::to_string(N) + " x " + std::to_string(P) + ", " +
                      std::to_string(C) + " x " + std::to_string(taps) +
                      "); B's im2col elements read from X as they are staged, 0 in the padding; X, W, Y "
                      "declared [N, Ci, pixels], [Co, Ci x taps], [N, Co, pixels]");
    return true;
}

// The CPU forms vectorise along output rows with a Local accumulator row per tile; on the GPU
// neighbouring threads take neighbouring outputs instead, so input loads coalesce, the weights of
// one co are a broadcast within a warp and the accumulator is one register.
support::Expected<LoweredKernel> ConvForms::oneOutputPerThread() {
    Kernel& k = lk.kernel;
    auto gplan = resolveMappings(ctx, outShape, defaultCpuMapping(outShape, 1));  // untiled: one output per thread
    if (!gplan) return gplan.diagnostics();
    std::int64_t taps = 1;
    for (std::size_t d = 0; d < r; ++d) taps *= w.k[d];
    const bool unrollTaps = taps <= 64;
    k.body = emitMappedLoops(k, *gplan, outShape, [&](const std::vector<Expr>& o) {
        BufferDecl ab;
        ab.name = "acc";
        ab.dtype = accT;
        ab.scope = MemoryScope::Local;
        ab.shape = {};
        const int acc = k.addBuffer(ab);
        const Expr n = o[0], co = o[1];
        const Expr chBase = G == 1 ? intImm(0) : (mg == 1 ? co : co / intImm(mg)) * intImm(cg);
        // One tap: kIdx per spatial dim (constants when unrolled, loop variables otherwise).
        auto tap = [&](const Expr& ci, const std::vector<Expr>& kIdx) -> Stmt {
            std::vector<Expr> xi{n, cg == 1 ? chBase : chBase + ci}, wi{co, ci};
            Expr inside;
            for (std::size_t d = 0; d < r; ++d) {
                const Expr id = o[d + 2] * intImm(w.s[d]) + intImm(-w.pb[d]) + kIdx[d] * intImm(w.d[d]);
                xi.push_back(id);
                wi.push_back(kIdx[d]);
                // Guards only where padding can put the tap outside the input.
                if (w.pb[d] > 0 || w.pe[d] > 0) {
                    const Expr c = id >= intImm(0) && id < intImm(w.in[d]);
                    inside = inside ? (inside && c) : c;
                }
            }
            const Expr prod = cast(load(W, wT, wi), accT) * cast(load(X, xT, xi), accT);
            Stmt st = store(acc, {}, load(acc, accT, {}) + prod);
            return inside ? ifThen(inside, st) : st;
        };
        auto allTaps = [&](const Expr& ci) -> Stmt {
            if (unrollTaps) {
                std::vector<Stmt> body;
                std::vector<std::int64_t> kv(r, 0);
                for (std::int64_t t = 0; t < taps; ++t) {
                    std::int64_t rem = t;
                    for (std::size_t d = r; d-- > 0;) {
                        kv[d] = rem % w.k[d];
                        rem /= w.k[d];
                    }
                    std::vector<Expr> kIdx;
                    for (auto v : kv) kIdx.push_back(intImm(v));
                    body.push_back(tap(ci, kIdx));
                }
                return seq(std::move(body));
            }
            return emitSerialLoops(k, w.k, "k", [&](const std::vector<Expr>& kIdx) { return tap(ci, kIdx); });
        };
        Stmt accumulate = loopOver(k, "ci", intImm(cg), ForKind::Serial, allTaps);
        Stmt body = seq({store(acc, {}, biasOf(co)), accumulate, store(Y, o, cast(load(acc, accT, {}), outT))});
        return allocate(acc, body);
    });
    k.notes.push_back(std::string(cg == 1 && mg == 1 ? "depthwise" : "direct") +
                      " conv, GPU form: one output per thread, ci serial, " +
                      (unrollTaps ? std::to_string(taps) + " taps unrolled" : std::string("tap loops")) +
                      ", guards only where padding reaches");
    return take();
}

// 2-D conv on a staged, phase-split input (see file comment). Output pixels of a tile are
// flattened as p = oh * Wq + ow (Wq >= OW: the phase width), so the vectorised loop runs over
// whole rows of the tile instead of one short output row.
Stmt ConvForms::stagedTile(const TileView& tv) {
    Kernel& k = lk.kernel;
    const Expr n = tv.origin[0], co0 = tv.origin[1], oh0 = tv.origin[2];
    const std::int64_t sh = w.s[0], sw = w.s[1], dh = w.d[0], dw = w.d[1], OW = w.out[1];
    const std::int64_t th = tv.size[2], tcoS = tv.size[1];
    const std::int64_t Wq = OW - 1 + (w.k[1] - 1) * dw / sw + 1;
    const std::int64_t Rq = th - 1 + (w.k[0] - 1) * dh / sh + 1;
    // Pixel loops run over a multiple of kStagedLanes (no scalar remainder); the extra lanes
    // compute junk from the zeroed tail of xs and are never stored.
    const std::int64_t Pv = roundUp((th - 1) * Wq + OW, kStagedLanes);
    const std::int64_t maxOff = ((w.k[0] - 1) * dh / sh) * Wq + (w.k[1] - 1) * dw / sw;
    const std::int64_t xsLen = std::max(Rq * Wq, maxOff + Pv);
    BufferDecl ab;
    ab.name = "acc";
    ab.dtype = accT;
    ab.scope = MemoryScope::Local;
    ab.shape = {tcoS, Pv};
    const int acc = k.addBuffer(ab);
    BufferDecl xb;
    xb.name = "xs";
    xb.dtype = accT;
    xb.scope = MemoryScope::Local;
    xb.shape = {sh * sw, xsLen};
    const int xs = k.addBuffer(xb);
    // (rows - 1) * Wq + OW rounded up to kStagedLanes (<= Pv)
    const Expr pExt = tv.full ? intImm(Pv)
                              : floorDivE(tv.extent[2] * intImm(Wq) + intImm(OW - Wq + kStagedLanes - 1), kStagedLanes) *
                                    intImm(kStagedLanes);
    Stmt init = tileLoops(k, {tv.extent[1], intImm(Pv)}, "z",
                          [&](const std::vector<Expr>& i) { return store(acc, i, constant(0.0, accT)); }, 1);
    if (xsLen > Rq * Wq)
        init = seq({init, tileLoops(k, {intImm(sh * sw), intImm(xsLen - Rq * Wq)}, "t", [&](const std::vector<Expr>& i) {
                        return store(xs, {i[0], i[1] + intImm(Rq * Wq)}, constant(0.0, accT));
                    })});
    Var ciVar;
    Expr ci = intImm(0);
    if (cg > 1) {
        ciVar = k.newVar("ci");
        ci = varRef(ciVar);
    }
    const Expr ch = G == 1 ? ci : co0;
    // Stage: xs[ph * sw + pw, i * Wq + j] = X[n, ch, (oh0 + i) * sh + ph - pb_h, j * sw + pw - pb_w] (0 outside).
    std::vector<Stmt> fill;
    for (std::int64_t ph = 0; ph < sh; ++ph)
        for (std::int64_t pw = 0; pw < sw; ++pw)
            fill.push_back(tileLoops(k, {intImm(Rq), intImm(Wq)}, "s", [&](const std::vector<Expr>& i) {
                const Expr ir = (oh0 + i[0]) * intImm(sh) + intImm(ph - w.pb[0]);
                const Expr ic = i[1] * intImm(sw) + intImm(pw - w.pb[1]);
                const Expr inside = ir >= intImm(0) && ir < intImm(w.in[0]) && ic >= intImm(0) && ic < intImm(w.in[1]);
                // Load unconditionally at an index clamped into the image, then select: GCC
                // vectorises `inside ? X[ir, ic] : 0` under omp simd into an unmasked vector
                // load + blend (even with the index clamped inside the select, which it
                // simplifies under the condition), and X[-1] of a tensor at the start of a
                // mapping faulted (SIGSEGV in the runner).
                const Expr cr = minOf(maxOf(ir, intImm(0)), intImm(w.in[0] - 1));
                const Expr cc = minOf(maxOf(ic, intImm(0)), intImm(w.in[1] - 1));
                const Var xv = k.newVar("xv", accT);
                return let(xv, cast(load(X, xT, {n, ch, cr, cc}), accT),
                           store(xs, {intImm(ph * sw + pw), i[0] * intImm(Wq) + i[1]},
                                 select(inside, varRef(xv), constant(0.0, accT))));
            }));
    // Taps, pixels outermost so that each accumulator is loaded and stored once per input
    // channel: acc[cc, p] += sum over (kh, kw) of W[co, ci, kh, kw] * xs[phase(kh, kw), offset(kh, kw) + p].
    Stmt taps = loopOver(k, "p", pExt, ForKind::Vectorize, [&](const Expr& p) {
        return loopOver(k, "cc", tv.extent[1], unrollKind(tv.extent[1], 16), [&](const Expr& cc) {
            Expr v = load(acc, accT, {cc, p});
            for (std::int64_t kh = 0; kh < w.k[0]; ++kh)
                for (std::int64_t kw = 0; kw < w.k[1]; ++kw) {
                    const std::int64_t plane = (kh * dh % sh) * sw + kw * dw % sw;
                    const std::int64_t off = (kh * dh / sh) * Wq + kw * dw / sw;
                    v = v + cast(load(W, wT, {co0 + cc, ci, intImm(kh), intImm(kw)}), accT) *
                                load(xs, accT, {intImm(plane), p + intImm(off)});
                }
            return store(acc, {cc, p}, v);
        });
    });
    Stmt nest = seq({seq(std::move(fill)), taps});
    if (cg > 1) nest = forLoop(ciVar, intImm(cg), nest);
    Stmt out = tileLoops(k, {tv.extent[1], tv.extent[2], intImm(OW)}, "y", [&](const std::vector<Expr>& i) {
        const Expr co = co0 + i[0];
        const Expr v = load(acc, accT, {i[0], i[1] * intImm(Wq) + i[2]});
        return store(Y, {n, co, oh0 + i[1], i[2]}, cast(hasBias ? v + biasOf(co) : v, outT));
    }, 1);
    return allocate(acc, allocate(xs, seq({init, nest, out})));
}

// One tile of the direct conv without staging: per input channel the window nest
// (emitWindowNest), co unrolled, each tap's valid output range vectorised.
Stmt ConvForms::windowTile(const TileView& tv) {
    Kernel& k = lk.kernel;
    const Expr n = tv.origin[0], co0 = tv.origin[1];
    BufferDecl ab;
    ab.name = "acc";
    ab.dtype = accT;
    ab.scope = MemoryScope::Local;
    ab.shape.assign(tv.size.begin() + 1, tv.size.end());
    const int acc = k.addBuffer(ab);
    const std::vector<Expr> accExt(tv.extent.begin() + 1, tv.extent.end());
    const std::vector<Expr> sOrigin(tv.origin.begin() + 2, tv.origin.end()), sExt(tv.extent.begin() + 2, tv.extent.end());
    Stmt init = tileLoops(k, accExt, "z", [&](const std::vector<Expr>& i) { return store(acc, i, constant(0.0, accT)); }, 1);
    Var ciVar;
    Expr ci = intImm(0);
    if (cg > 1) {
        ciVar = k.newVar("ci");
        ci = varRef(ciVar);
    }
    Stmt nest = emitWindowNest(k, w, sOrigin, sExt, [&](const std::vector<Expr>& kIdx, const std::vector<Expr>& localOuter,
                                                        const std::vector<Expr>& inOuter, const RowBuilder& row) {
        return loopOver(k, "cc", tv.extent[1], unrollKind(tv.extent[1], 16), [&](const Expr& cc) {
            const Expr co = co0 + cc;
            const Expr ch = G == 1 ? ci : (mg == 1 ? co : co / intImm(mg)) * intImm(cg) + ci;
            std::vector<Expr> widx{co, ci};
            widx.insert(widx.end(), kIdx.begin(), kIdx.end());
            const Var wv = k.newVar("w", accT);
            Stmt body = row([&](const Expr& ol, const Expr& il) {
                std::vector<Expr> aidx{cc};
                aidx.insert(aidx.end(), localOuter.begin(), localOuter.end());
                aidx.push_back(ol);
                std::vector<Expr> xidx{n, ch};
                xidx.insert(xidx.end(), inOuter.begin(), inOuter.end());
                xidx.push_back(il);
                return store(acc, aidx, load(acc, accT, aidx) + varRef(wv) * cast(load(X, xT, xidx), accT));
            });
            return let(wv, cast(load(W, wT, widx), accT), body);
        });
    });
    if (cg > 1) nest = forLoop(ciVar, intImm(cg), nest);
    Stmt out = tileLoops(k, accExt, "y", [&](const std::vector<Expr>& i) {
        std::vector<Expr> yidx{n};
        for (std::size_t d = 0; d < i.size(); ++d) yidx.push_back(tv.origin[d + 1] + i[d]);
        const Expr v = load(acc, accT, i);
        return store(Y, yidx, cast(hasBias ? v + biasOf(yidx[1]) : v, outT));
    }, 1);
    return allocate(acc, seq({init, nest, out}));
}

support::Expected<LoweredKernel> ConvForms::direct() {
    Kernel& k = lk.kernel;
    const bool depthwise = cg == 1 && mg == 1;
    const bool stagedForm = r == 2 && (G == 1 || depthwise) && w.k[0] * w.k[1] <= 64 &&
                            (!depthwise || w.out[1] * std::max(w.s[0], w.s[1]) < kStagedDepthwiseMaxWidth ||
                             (w.s[0] == 1 && w.s[1] == 1 && w.out[1] <= kStagedDepthwiseMaxWidthStride1));
    const bool wideStaged = stagedForm && (w.s[0] > 1 || w.s[1] > 1 || w.out[1] >= kStagedWideRow);
    const std::int64_t tco = depthwise ? 1 : std::min<std::int64_t>(M, wideStaged ? kStagedWideCoTile : 8);
    const std::int64_t tw = std::min<std::int64_t>(w.out[r - 1], 256);
    std::vector<std::int64_t> tile{1, tco}, maxTile{1, 16};
    for (std::size_t d = 0; d < r; ++d) {
        tile.push_back(1);
        maxTile.push_back(1);
    }
    tile[r + 1] = tw;
    maxTile[r + 1] = 256;
    if (r >= 2) {
        tile[r] = divisorAtMost(w.out[r - 2], (wideStaged ? kStagedWideTileBudget : 1024) / (tco * tw));
        maxTile[r] = 16;
    }
    auto plan = resolveMappings(ctx, outShape, tiledMapping(outShape, tile));
    if (!plan) return plan.diagnostics();
    bool usedStaged = false;
    k.body = emitTiledLoops(k, *plan, outShape, maxTile, [&](const TileView& tv) {
        if (stagedForm && tv.size[r + 1] == w.out[r - 1]) {
            usedStaged = true;
            return stagedTile(tv);
        }
        return windowTile(tv);
    });
    if (usedStaged)
        k.notes.push_back(std::string(depthwise ? "depthwise" : "direct") +
                          " conv on a staged input: per ci the tile's input rows are copied (zero-padded, split "
                          "into stride phases), taps unrolled, co unrolled, the tile's pixels (oh * Wq + ow) vectorised");
    else
        k.notes.push_back(depthwise ? "depthwise conv: rows of one channel per tile, taps unrolled, ow vectorised"
                                    : "direct conv: ci outer, taps, co unrolled, ow vectorised");
    return take();
}

}  // namespace

support::Expected<LoweredKernel> lowerConv(const LowerContext& ctx) {
    auto shape = readConvShape(ctx);
    if (!shape) return shape.diagnostics();
    ConvForms forms(ctx, *shape);
    if (forms.pointwise() && (forms.pointwiseAsGpuGemm() || forms.pointwiseAsMatmul())) return forms.take();
    // CUDA without a user mapping: the implicit GEMM for dense convs where it fills the GPU, else
    // one output per thread (groups, depthwise, small batch-1 layers).
    const bool gpuDefault = ctx.options.target == Target::Cuda && !hasUserMapping(ctx);
    if (gpuDefault && shape->G == 1 && forms.denseAsImplicitGemm()) return forms.take();
    return gpuDefault ? forms.oneOutputPerThread() : forms.direct();
}

}  // namespace tessera::lower::detail
