// Dense convolution on the CUDA target as an implicit GEMM (lower_heavy.h: convGemmTile,
// emitConvImplicitGemm): Y[n, co, p] = sum over k of W[co, k] * B[k, (n, p)] with the reduction
// index k = (ci, tap) in W's own order [C_out, C_in, K_1..K_r] (so W is read as its flat
// [C_out, C_in * taps] matrix) and B the im2col matrix, never stored: the GEMM template's B stage
// (GpuGemmSpec::bElement) computes each element from X when it stages it,
//   B[k, j] = X[n, ci, o_1 * s_1 + kd_1 * d_1 - pad_1, ...]   (0 where the tap falls in the padding)
// with n = j / P, p = j % P (P output pixels per image, colGroup = P), ci = k / taps and the tap's
// offsets from k % taps. This is cuDNN's and CUTLASS's "implicit GEMM" formulation; the products
// use the template's staged tiles (SIMT FMAs, or tensor-core MMAs when asked).

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/lower/detail/lower_fused_conv_gpu.h"
#include "core/lower/detail/lower_heavy.h"

namespace tessera::lower::detail {

namespace {

std::int64_t ceilDivI(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool stagesFit(const GpuGemmSpec::Tile& t) {
    return 4 * t.splitK * t.bk * (t.rows() + t.pad() + t.cols() + t.pad()) <= 40 * 1024;
}

/// TESSERA_CONV_GEMM: "off" / "0" forbids the form; "rows,cols,bk" or "rows,cols,bk,mma" (3xTF32
/// MMAs) forces a tile (ignored when invalid). Benchmarks sweep tiles with it.
struct EnvChoice {
    bool off = false;
    std::optional<GpuGemmSpec::Tile> tile;
};

EnvChoice envConvGemm() {
    EnvChoice c;
    const char* env = std::getenv("TESSERA_CONV_GEMM");
    if (!env || !*env) return c;
    const std::string s(env);
    if (s == "0" || s == "off") {
        c.off = true;
        return c;
    }
    std::istringstream in(s);
    std::int64_t r = 0, col = 0, bk = 0;
    char s1 = 0, s2 = 0, s3 = 0;
    std::string rest;
    if (in >> r >> s1 >> col >> s2 >> bk && s1 == ',' && s2 == ',') {
        auto t = gpuGemmTileOf(r, col, bk);
        if (t && in >> s3 >> rest && s3 == ',' && rest == "mma") t = withMma(*t, MmaPrecision::Tf32x3, 0);
        if (t && stagesFit(*t)) c.tile = t;
    }
    return c;
}

}  // namespace

std::optional<GpuGemmSpec::Tile> convGemmTile(std::int64_t filters, std::int64_t columns, std::int64_t reduction,
                                               std::int64_t minBlocks) {
    const EnvChoice env = envConvGemm();
    if (env.off) return std::nullopt;
    if (env.tile) return env.tile;
    if (filters < kGpuGemmMinExtent || columns < kGpuGemmMinExtent || reduction < 8) return std::nullopt;
    // The largest output tile that still gives one block per SM (operand reuse grows with the
    // tile; a grid smaller than the GPU leaves SMs idle). Rows no taller than the filters need.
    static const std::int64_t shapes[][2] = {{128, 128}, {128, 64}, {64, 128}, {64, 64}, {64, 32}, {32, 64}, {32, 32}};
    std::int64_t rowCap = 32;
    while (rowCap < filters && rowCap < 128) rowCap *= 2;
    for (const auto& sh : shapes) {
        if (sh[0] > rowCap) continue;
        if (ceilDivI(filters, sh[0]) * ceilDivI(columns, sh[1]) < minBlocks) continue;
        for (std::int64_t bk : {16, 8})
            if (auto t = gpuGemmTileOf(sh[0], sh[1], bk); t && stagesFit(*t)) return t;
    }
    return std::nullopt;  // too few blocks for any tile: the direct form keeps more threads busy
}

Stmt emitConvImplicitGemm(Kernel& k, const ConvGemmSpec& c) {
    const std::size_t r = c.geom.k.size();
    std::int64_t taps = 1, P = 1;
    for (std::size_t d = 0; d < r; ++d) {
        taps *= c.geom.k[d];
        P *= c.geom.out[d];
    }
    GpuGemmSpec g;
    g.a = c.w;
    g.b = -1;
    g.y = c.y;
    g.M = c.filters;
    g.N = c.batch * P;
    g.K = c.channels * taps;
    g.colGroup = P;
    g.tile = c.tile;
    if (c.bias >= 0) {
        g.c = c.bias;
        g.cShape = {c.filters, 1};
    }
    const WindowGeom& w = c.geom;
    const DType xT = k.buffers[static_cast<std::size_t>(c.x)].dtype;
    // Strides of the flattened input and output pixels, per spatial dim.
    std::vector<std::int64_t> inStride(r, 1), outStride(r, 1), tapStride(r, 1);
    for (std::size_t d = r; d-- > 1;) {
        inStride[d - 1] = inStride[d] * w.in[d];
        outStride[d - 1] = outStride[d] * w.out[d];
        tapStride[d - 1] = tapStride[d] * w.k[d];
    }
    const std::int64_t batch = c.batch;
    // Element (kk, j) of the im2col matrix: X[n, ci, flat] with `inside` false in the padding;
    // `clamped` is the same index with every coordinate clamped into the input (a load that is
    // always in bounds).
    struct Tap {
        Expr n, ci, flat, clamped, inside;
    };
    auto tapAt = [&](const Expr& kk, const Expr& j) {
        Tap a;
        a.n = batch == 1 ? intImm(0) : j / intImm(P);
        const Expr p = batch == 1 ? j : j % intImm(P);
        a.ci = taps == 1 ? kk : kk / intImm(taps);
        const Expr t = taps == 1 ? intImm(0) : kk % intImm(taps);
        for (std::size_t d = 0; d < r; ++d) {
            Expr od = outStride[d] == 1 ? p : p / intImm(outStride[d]);
            if (d > 0) od = od % intImm(w.out[d]);
            Expr xd = w.s[d] == 1 ? od : od * intImm(w.s[d]);
            if (w.k[d] > 1) {
                Expr kd = tapStride[d] == 1 ? t : t / intImm(tapStride[d]);
                if (d > 0) kd = kd % intImm(w.k[d]);
                xd = xd + (w.d[d] == 1 ? kd : kd * intImm(w.d[d]));
            }
            if (w.pb[d] != 0) xd = xd + intImm(-w.pb[d]);
            Expr xc = xd;
            if (w.pb[d] > 0 || w.pe[d] > 0) {
                const Expr cnd = xd >= intImm(0) && xd < intImm(w.in[d]);
                a.inside = a.inside ? (a.inside && cnd) : cnd;
                xc = minOf(maxOf(xd, intImm(0)), intImm(w.in[d] - 1));
            }
            const Expr term = inStride[d] == 1 ? xd : xd * intImm(inStride[d]);
            const Expr termC = inStride[d] == 1 ? xc : xc * intImm(inStride[d]);
            a.flat = a.flat ? a.flat + term : term;
            a.clamped = a.clamped ? a.clamped + termC : termC;
        }
        return a;
    };
    const Expr zero = floatImm(0.0, DType::F32);
    g.bElement = [&](const Expr& kk, const Expr& j) -> Expr {
        const Tap a = tapAt(kk, j);
        Expr v = cast(load(c.x, xT, {a.n, a.ci, a.flat}), DType::F32);
        return a.inside ? select(a.inside, v, zero) : v;
    };
    // The staging's form: the load always issued (at the clamped index) and bound to a Let, the
    // padding selected afterwards, so every staged element costs one load (static counts need
    // not decide the padding guard per element) and no branch diverges.
    g.bRun = 1;
    g.bRunElements = [&](const Expr& kk, const Expr& j0, const std::function<Stmt(std::int64_t, const Expr&)>& sink) -> Stmt {
        const Tap a = tapAt(kk, j0);
        if (!a.inside) return sink(0, cast(load(c.x, xT, {a.n, a.ci, a.flat}), DType::F32));
        const Var xv = k.newVar("xv", DType::F32);
        return let(xv, cast(load(c.x, xT, {a.n, a.ci, a.clamped}), DType::F32), sink(0, select(a.inside, varRef(xv), zero)));
    };
    return emitGpuGemm(k, g);
}

}  // namespace tessera::lower::detail
