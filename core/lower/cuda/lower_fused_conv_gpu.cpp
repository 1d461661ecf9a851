// The GEMM form of a fused depthwise -> pointwise chain on CUDA (lower_fused_conv_gpu.h).
//
//   Y[n, k, p] = B2[k] + sum_c W2[k, c] * T[n, c, p],   T = between(B1[c] + sum_taps W1[c, tap] * X[n, c, tap(p)])
//
// as emitGpuGemm's GEMM: A = W2 viewed [K, Cm] (k-contiguous staging), B[c, j] = T[j / P, c, j % P]
// produced by the B-element hook (P = H2 * W2 output pixels per image), C = B2 viewed [K, 1]
// (broadcast along the columns), Y viewed [N, K, P]. In the B staging consecutive threads take
// consecutive columns (pixels), so each depthwise tap's X reads are coalesced along W, and a thread
// keeps one column for the whole reduction (its pixel decode and padding guards are invariant).

#include "core/lower/detail/lower_fused_conv_gpu.h"

#include "core/lower/detail/lower_fused_conv_common.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>
#include <string>

namespace tessera::lower::detail {

namespace {

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t pow2AtLeast(std::int64_t v) {
    std::int64_t p = 1;
    while (p < v) p *= 2;
    return p;
}

constexpr std::int64_t kSms = 132;                 // H200 SMs (the tile choice aims at 2 blocks per SM)
constexpr std::int64_t kSharedBudget = 40 * 1024;  // bytes of static shared memory per block

constexpr std::int64_t kSharedBudgetTall = 46 * 1024;  // tall tiles: one block per SM is the aim, up to the 48 KiB static limit

std::int64_t sharedBytes(const GpuGemmSpec::Tile& t) {
    const std::int64_t stages = t.splitK * t.bk * (t.rows() + t.pad() + t.cols() + t.pad());
    // A split's partial sums (every thread's accumulators, emitGpuGemm's Rs) get a buffer of their
    // own when they do not fit in As. With MMAs 4 per m16n8 tile of a computing warp, for all 256
    // threads: more than rows x cols when some warps only stage.
    const std::int64_t perThread = t.mma ? 4 * t.mmaRows() * t.mmaCols() : t.rm * t.rn;
    const std::int64_t partials = (t.splitK - 1) * perThread * 256;
    return 4 * (partials > t.splitK * t.bk * (t.rows() + t.pad()) ? stages + partials : stages);
}

constexpr std::int64_t kSharedBudgetSplit = 48 * 1024;  // split tiles: the static limit (one block per SM)

/// `t` with its reduction split over `split` groups, BK halved (down to 8) until the stages fit
/// the static shared memory; nullopt when none fits or the tile is invalid then.
std::optional<GpuGemmSpec::Tile> withSplit(GpuGemmSpec::Tile t, std::int64_t split) {
    if (split == 1) return t;
    t.splitK = split;
    for (; t.bk >= 8; t.bk /= 2)
        if (sharedBytes(t) <= kSharedBudgetSplit && (gpuGemmTileValid(t) || gpuGemmTallTileValid(t))) return t;
    return std::nullopt;
}

/// The environment's split (TESSERA_DWPW_SPLIT=1|2|4), 0 when unset or invalid.
std::int64_t envSplit() {
    const char* env = std::getenv("TESSERA_DWPW_SPLIT");
    if (!env || !*env) return 0;
    const std::string v(env);
    return v == "1" ? 1 : v == "2" ? 2 : v == "4" ? 4 : 0;
}

std::int64_t roundUp(std::int64_t v, std::int64_t m) { return ceilDiv(v, m) * m; }

}  // namespace

std::optional<GpuGemmSpec::Tile> gpuGemmTallTileOf(std::int64_t rows, std::int64_t cols, std::int64_t bk, std::int64_t rm) {
    if (rows < 1 || cols < 1) return std::nullopt;
    GpuGemmSpec::Tile t;
    if (rm <= 0) {
        t.tx = std::min<std::int64_t>(16, cols);
        t.ty = 256 / t.tx;
        if (t.ty < 1 || rows % t.ty != 0) return std::nullopt;
        t.rm = rows / t.ty;
    } else {
        if (rows % rm != 0) return std::nullopt;
        t.rm = rm;
        t.ty = rows / rm;
        if (t.ty < 1 || 256 % t.ty != 0) return std::nullopt;
        t.tx = 256 / t.ty;
    }
    if (cols % t.tx != 0) return std::nullopt;
    t.rn = cols / t.tx;
    t.bk = bk;
    if (t.rows() != rows || t.cols() != cols || !gpuGemmTallTileValid(t) || sharedBytes(t) > kSharedBudgetTall)
        return std::nullopt;
    return t;
}

bool dwPwWide(std::int64_t filters, std::int64_t channels) { return channels >= 384 && filters > 64 && filters <= 512; }

std::optional<GpuGemmSpec::Tile> gpuGemmTileOf(std::int64_t rows, std::int64_t cols, std::int64_t bk) {
    if (rows < 1 || cols < 1 || (rows * cols) % 256 != 0) return std::nullopt;
    const std::int64_t per = rows * cols / 256;
    std::int64_t rm = 1;
    while ((rm * 2) * (rm * 2) <= per && rows % (rm * 2) == 0) rm *= 2;
    GpuGemmSpec::Tile t;
    t.rm = rm;
    t.rn = per / rm;
    t.ty = rows / rm;
    if (t.ty < 1 || 256 % t.ty != 0) return std::nullopt;
    t.tx = 256 / t.ty;
    t.bk = bk;
    if (t.rows() != rows || t.cols() != cols || !gpuGemmTileValid(t)) return std::nullopt;
    return t;
}

namespace {

/// The tile TESSERA_DWPW_GEMM asks for, if valid.
std::optional<GpuGemmSpec::Tile> envTile() {
    if (const char* env = std::getenv("TESSERA_DWPW_GEMM"); env && *env) {
        std::istringstream in(env);
        std::int64_t r = 0, c = 0, b = 0, rm = 0, split = 1;
        char s1 = 0, s2 = 0, s3 = 0, s4 = 0;
        if (in >> r >> s1 >> c >> s2 >> b && s1 == ',' && s2 == ',') {
            const bool withRm = static_cast<bool>(in >> s3 >> rm) && s3 == ',' && rm >= 0;
            if (withRm && !(in >> s4 >> split && s4 == ',')) split = 1;
            std::optional<GpuGemmSpec::Tile> t;
            if (!withRm || rm == 0)
                if (auto u = gpuGemmTileOf(r, c, b); u && sharedBytes(*u) <= kSharedBudget) t = u;
            if (!t) t = gpuGemmTallTileOf(r, c, b, withRm ? rm : 0);
            if (t && split != 1) {
                t->splitK = split;
                if (sharedBytes(*t) > kSharedBudgetSplit || !(gpuGemmTileValid(*t) || gpuGemmTallTileValid(*t))) t.reset();
            }
            if (t) return *t;
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<GpuGemmSpec::Tile> withMma(GpuGemmSpec::Tile t, MmaPrecision precision, std::int64_t wy, std::int64_t wx) {
    t.mma = true;
    t.mmaPrecision = precision;
    const std::int64_t limit = t.splitK > 1 ? kSharedBudgetSplit : kSharedBudgetTall;
    auto ok = [&](std::int64_t y, std::int64_t x) {
        t.wy = y;
        t.wxSet = x;
        return gpuGemmMmaTileValid(t) && sharedBytes(t) <= limit;
    };
    if (wy > 0 && ok(wy, wx)) return t;
    // Every warp computing, the most warps along the rows first (the tall tiles' many filters);
    // then 7..1 warps.
    for (std::int64_t warps = 8; warps >= 1; --warps)
        for (std::int64_t y = warps; y >= 1; --y)
            if (warps % y == 0 && ok(y, warps / y)) return t;
    return std::nullopt;
}

namespace {

std::string layoutText(const GpuGemmSpec::Tile& t) { return std::to_string(t.wy) + " x " + std::to_string(t.wx()); }

}  // namespace

DwPwTileChoice dwPwGemmTileChoice(std::int64_t filters, std::int64_t columns, std::int64_t channels, std::int64_t runWidth) {
    DwPwTileChoice c;
    const GpuGemmSpec::Tile t = dwPwGemmTileSimt(filters, columns, channels, runWidth);
    c.tile = t;
    auto note = [&](const std::string& n) { c.mmaNote += (c.mmaNote.empty() ? "" : "; ") + n; };
    // TESSERA_DWPW_MMA: "" (the rule), tf32x3 / 1 / on, tf32, off / 0; anything else is ignored.
    std::string mode;
    if (const char* env = std::getenv("TESSERA_DWPW_MMA"); env && *env) {
        std::string v(env);
        std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        if (v == "tf32x3" || v == "1" || v == "on") mode = "tf32x3";
        else if (v == "tf32") mode = "tf32";
        else if (v == "off" || v == "0") mode = "off";
        else note("TESSERA_DWPW_MMA='" + std::string(env) + "' is not tf32x3, tf32 or off: ignored");
    }
    // TESSERA_DWPW_WARPS=wy[,wx] (wx 0 or absent: 8 / wy).
    std::int64_t wy = 0, wx = 0;
    std::string warpsText;
    if (const char* w = std::getenv("TESSERA_DWPW_WARPS"); w && *w) {
        warpsText = w;
        std::istringstream in(warpsText);
        char comma = 0;
        bool ok = static_cast<bool>(in >> wy) && wy >= 1;
        if (ok && in >> comma) ok = comma == ',' && static_cast<bool>(in >> wx) && wx >= 0 && (in >> std::ws).eof();
        if (!ok) {
            note("TESSERA_DWPW_WARPS='" + warpsText + "' is not wy or wy,wx: ignored");
            wy = wx = 0;
            warpsText.clear();
        }
    }
    auto mmaOf = [&](const GpuGemmSpec::Tile& u, MmaPrecision p) -> std::optional<GpuGemmSpec::Tile> {
        auto m = withMma(u, p, wy, wx);
        if (m && !warpsText.empty() && !(m->wy == wy && (wx == 0 ? m->wx() == 8 / wy : m->wx() == wx)))
            note("TESSERA_DWPW_WARPS=" + warpsText + " does not fit this tile: " + layoutText(*m) + " warps instead");
        return m;
    };
    const std::string warpsUnused = warpsText.empty() ? std::string() : "; TESSERA_DWPW_WARPS=" + warpsText + " has no effect";
    if (mode == "off") {
        note("tensor cores off (TESSERA_DWPW_MMA=off)" + warpsUnused);
        return c;
    }
    if (!mode.empty()) {
        // Asked for: the same tile shape and staging, its products by warp MMAs.
        if (auto m = mmaOf(t, mode == "tf32" ? MmaPrecision::Tf32 : MmaPrecision::Tf32x3)) {
            c.tile = *m;
        } else {
            note("TESSERA_DWPW_MMA=" + mode + " asked for tensor cores, but no warp layout fits this tile (m16 x n8 tiles over "
                 "at most 8 warps, with the shared memory of a split's partial sums): FMAs");
        }
        return c;
    }
    // The rule (H200, bench/RESULTS.md issue 6 run 7, batch 32): 3xTF32 MMAs on the unsplit tiles
    // of 17..160 filters (MobileNetV2's 24..160) ran 2-10% faster than the SIMT FMAs (C144 K24 -7%,
    // C192 K32 -10%, C384 K64 -8%, C576 s2 K160 -7%); the 96-filter tall tiles only with 16 columns
    // (96 x 32 with MMAs was 5-6% slower than SIMT, 96 x 16 4-6% faster); 16 filters (+3%) and the
    // 320-filter tiles (+9%) stay SIMT; split tiles (batch 1) were not measured with MMAs.
    if (envTile() || envSplit() != 0) {
        if (!warpsText.empty()) note("TESSERA_DWPW_WARPS applies with TESSERA_DWPW_MMA only under a TESSERA_DWPW_GEMM / _SPLIT tile");
        return c;
    }
    std::string why;
    if (t.splitK != 1) why = "the tile splits the reduction over " + std::to_string(t.splitK) + " thread groups";
    else if (filters <= 16) why = std::to_string(filters) + " filters";
    else if (filters > 160) why = std::to_string(filters) + " filters";
    if (!why.empty()) {
        note("tensor cores not used: " + why + " (measured slower or not measured with MMAs on the H200; "
             "TESSERA_DWPW_MMA=tf32x3 asks for them)" + warpsUnused);
        return c;
    }
    GpuGemmSpec::Tile u = t;
    if (!gpuGemmTileValid(t) && t.rows() == 96 && t.cols() == 32)
        if (auto n = gpuGemmTallTileOf(96, 16, 32, 0)) u = *n;
    if (auto m = mmaOf(u, MmaPrecision::Tf32x3)) c.tile = *m;
    else note("tensor cores not used: no warp layout fits this tile");
    return c;
}

GpuGemmSpec::Tile dwPwGemmTile(std::int64_t filters, std::int64_t columns, std::int64_t channels, std::int64_t runWidth) {
    return dwPwGemmTileChoice(filters, columns, channels, runWidth).tile;
}

GpuGemmSpec::Tile dwPwGemmTileSimt(std::int64_t filters, std::int64_t columns, std::int64_t channels, std::int64_t runWidth) {
    const std::optional<GpuGemmSpec::Tile> fromEnv = envTile();
    const GpuGemmSpec::Tile t = fromEnv ? *fromEnv : dwPwGemmTileUnsplit(filters, columns, channels, runWidth);
    std::int64_t split = envSplit();
    if (split == 0) {
        if (fromEnv) return t;  // as asked (its split field)
        // Measured on the H200 (bench/RESULTS.md, issue 6 run 4): small tiles making fewer
        // blocks than SMs (batch 1's blocks from 144 channels) run 1.4-2.2x faster with 4 groups
        // per block, and with fewer than 4 blocks per SM and short reductions (batch 1's first
        // three blocks, batch 32's 192-channel stride-2 block) 1.1-1.25x with 2 groups. The tall
        // tiles (batch 32's wide blocks) and the 384-channel 64-filter block at batch 32 ran
        // 1.0-1.7x slower split (2 or 4 groups; 2 groups of the 96-filter tiles need 119
        // registers, one block per SM), so they stay unsplit.
        const bool tall = !gpuGemmTileValid(t);
        // Run tiles (dwPwRunTile) were measured unsplit, with runs (which the split's raw taps exclude).
        const bool runTile = dwPwRunTile(filters, columns, runWidth).has_value();
        const std::int64_t blocks = ceilDiv(filters, t.rows()) * ceilDiv(columns, t.cols());
        split = tall || runTile ? 1 : blocks < kSms ? 4 : (blocks < 4 * kSms && channels < 384) ? 2 : 1;
    }
    // The largest split up to `split` whose stages fit the shared memory.
    for (std::int64_t s = split; s >= 2; s /= 2)
        if (auto st = withSplit(t, s)) return *st;
    GpuGemmSpec::Tile u = t;
    u.splitK = 1;
    return u;
}

std::optional<GpuGemmSpec::Tile> dwPwRunTile(std::int64_t filters, std::int64_t columns, std::int64_t runWidth) {
    // Measured on the H200 (bench/RESULTS.md, issue 6 run 6), batch 32, <= 32 filters: 128
    // columns where they still give 2 blocks per SM ran 6-43% faster than the plain rule's 32-64
    // (with runs of 4 on the stride-1 blocks: C32 K16, C144 K24; without runs on the stride-2
    // C96 K24: -11%); else 64 columns with runs of 4 (C192 K32: -20%; the stride-2 C144 K32 was
    // 13% slower at 64 columns without runs, so it keeps the plain rule).
    if (filters > 32) return std::nullopt;
    const std::int64_t rows = std::max<std::int64_t>(16, pow2AtLeast(filters));
    const bool runs = runWidth > 0 && runWidth % 4 == 0;
    for (std::int64_t cols = 128; cols >= 64; cols /= 2) {
        if (cols == 64 && !runs) break;
        if (ceilDiv(columns, cols) < 2 * kSms) continue;
        auto t = gpuGemmTileOf(rows, cols, 16);
        if (t && sharedBytes(*t) <= kSharedBudget && (!runs || gpuGemmBRunApplies(*t, columns, 4))) return t;
    }
    return std::nullopt;
}

GpuGemmSpec::Tile dwPwGemmTileUnsplit(std::int64_t filters, std::int64_t columns, std::int64_t channels, std::int64_t runWidth) {
    if (auto t = dwPwRunTile(filters, columns, runWidth)) return *t;
    if (dwPwWide(filters, channels) && ceilDiv(columns, 16) >= kSms / 2) {
        // Long reductions into a few hundred filters (MobileNetV2's 14x14 and 7x7 blocks): one
        // block covers every filter (rows = K rounded up to 32), so each depthwise value is
        // computed once, with 10-24 results per thread instead of 4. Only with enough column
        // tiles for the SMs (batch 32, not batch 1, where split filter tiles give the blocks).
        const std::int64_t rows = roundUp(filters, 32);
        std::int64_t cols = 16;
        while (cols < 64 && rows * cols * 2 / 256 <= 24 && ceilDiv(columns, cols * 2) >= kSms) cols *= 2;
        // Rows per thread (H200, run 6, 2-3 runs each): 160-row tiles of the 576-channel block
        // 5 (x 2 columns; -10%), of the 960-channel one 10 (x 1; 5 x 2 was +10%); 320-row tiles
        // 10 (x 2 columns; -5% against 20 x 1).
        const std::int64_t rm = cols == 16 && ((rows == 160 && channels < 768) || rows == 320) ? rows / 32 : 0;
        for (std::int64_t b = 32; b >= 8; b /= 2) {
            if (rm > 0)
                if (auto t = gpuGemmTallTileOf(rows, cols, b, rm)) return *t;
            if (auto t = gpuGemmTallTileOf(rows, cols, b, 0)) return *t;
        }
    }
    // Measured on the H200 (bench/RESULTS.md, issue 6 sweep): small tiles win. The step loop is
    // bound by issuing the staging work (depthwise taps, index arithmetic) and by latency, so
    // many blocks of 256 threads with 4-8 results per thread beat register-heavy tiles.
    const std::int64_t rows = filters <= 128 ? std::max<std::int64_t>(16, pow2AtLeast(filters)) : 64;
    const std::int64_t bk = channels >= 256 ? 32 : 16;
    const std::int64_t rowTiles = ceilDiv(filters, rows);
    std::int64_t cols = std::max<std::int64_t>(16, 1024 / rows);  // 4 results per thread (8 at 128 rows)
    while (cols > 16 && rowTiles * ceilDiv(columns, cols) < 2 * kSms) cols /= 2;
    for (std::int64_t b = bk; b >= 8; b /= 2)
        if (auto t = gpuGemmTileOf(rows, cols, b); t && sharedBytes(*t) <= kSharedBudget) return *t;
    return GpuGemmSpec::Tile{};  // 128 x 128 x 8 (always valid)
}

bool dwPwGemmRawPrefetch(std::int64_t channels, std::int64_t splitK) {
    const char* env = std::getenv("TESSERA_DWPW_RAW");
    if (env && *env) return std::string(env) != "0";
    (void)channels;
    // H200 (issue 6 run 4): with the split reduction, faster than prefetching finished values.
    return splitK > 1;
}

bool dwPwGemmPrefetch(std::int64_t channels, std::int64_t splitK) {
    const char* env = std::getenv("TESSERA_DWPW_PREFETCH");
    if (env && *env) return std::string(env) != "0";
    // H200 (bench/RESULTS.md, issue 6 run C): -6..-18% on the blocks with >= 384 channels (12+
    // steps of 32), neutral within noise on two; not measured on the short reductions without a
    // split. With a split (run 4) together with the raw taps.
    return channels >= 384 || splitK > 1;
}

std::int64_t dwPwGemmRun(std::int64_t outWidth, std::int64_t stride, const GpuGemmSpec::Tile& t, std::int64_t columns) {
    // Default: runs of 4 under the tiles dwPwRunTile chooses for them (stride 1, <= 32 filters,
    // >= 64 columns, no split), else none (H200, run 6: runs of 2 on 14-pixel rows measured
    // within 3%, runs on stride-2 blocks 4-38% slower).
    std::int64_t want = stride == 1 && outWidth % 4 == 0 && t.rows() <= 32 && t.cols() >= 64 && t.splitK == 1 ? 4 : 1;
    if (const char* env = std::getenv("TESSERA_DWPW_RUN"); env && *env) {
        const std::string v(env);
        want = v == "2" ? 2 : v == "4" ? 4 : 1;
    }
    // The largest run up to `want` that divides the output row and fits the tile.
    for (std::int64_t r = want; r >= 2; r /= 2)
        if (outWidth % r == 0 && gpuGemmBRunApplies(t, columns, r)) return r;
    return 1;
}

bool useDwPwGemm(const LowerOptions& options, const ConvChainSpec& chain) {
    if (options.target != Target::Cuda || chain.kind != schedule::FusionKind::DwPw) return false;
    const char* env = std::getenv("TESSERA_DWPW_GEMM");
    return !(env && std::string(env) == "off");
}

support::Expected<LoweredKernel> lowerDwPwGemm(const ir::Graph& g, const ConvChainSpec& chain, const ConvChainInfo& info,
                                               const LowerOptions& options, const std::string& where) {
    const ir::Node& nodeA = g.node(info.A.id);
    const ir::Node& nodeB = g.node(info.B.id);
    const std::int64_t N = info.N, Cm = info.Cm, H1 = info.H1, W1 = info.W1, K = info.K, H = info.H, W = info.W;
    const std::int64_t P = H1 * W1;
    const WindowGeom& ga = info.A.geom;
    auto begun = beginChainKernel(g, chain, info, options, where);
    if (!begun) return begun.diagnostics();
    ChainKernel& ck = *begun;
    const int X = ck.X, W1b = ck.W1b, B1b = ck.B1b, W2b = ck.W2b, B2b = ck.B2b, Yb = ck.Yb;
    Kernel& k = ck.lk.kernel;
    const DType f32 = DType::F32;
    const Expr zero = floatImm(0.0, f32);

    // GEMM views of the pointwise conv's operands, and flat-pixel views of the depthwise conv's
    // (same dense layouts): a tap's address is then (n*C + c)*H*W + (xh*W + xw), whose column part
    // a thread computes once for all its channels, where the 4-D form re-multiplies per tap.
    const std::int64_t taps = ga.k[0] * ga.k[1];
    k.buffers[static_cast<std::size_t>(X)].shape = {N, info.C, H * W};
    k.buffers[static_cast<std::size_t>(W1b)].shape = {Cm, taps};
    k.buffers[static_cast<std::size_t>(W2b)].shape = {K, Cm};
    if (B2b >= 0) k.buffers[static_cast<std::size_t>(B2b)].shape = {K, 1};
    k.buffers[static_cast<std::size_t>(Yb)].shape = {N, K, P};

    GpuGemmSpec gs;
    gs.a = W2b;
    gs.y = Yb;
    gs.M = K;
    gs.N = N * P;
    gs.K = Cm;
    gs.colGroup = P;
    if (B2b >= 0) {
        gs.c = B2b;
        gs.cShape = {K, 1};
    }
    // Runs of pixels (GpuGemmSpec::bRun) along output rows of a stride-1 depthwise conv.
    const std::int64_t runWidth = ga.s[1] == 1 ? W1 : 0;
    const DwPwTileChoice choice = dwPwGemmTileChoice(K, N * P, Cm, runWidth);
    gs.tile = choice.tile;
    gs.prefetch = dwPwGemmPrefetch(Cm, gs.tile.splitK);
    support::DiagnosticList betweenErrors;
    // Tap q = kh * kw_extent + kw of T[c, column j]: the input value under it (0 in the padding).
    auto tapValue = [&](const Expr& c, const Expr& j, std::int64_t q) -> Expr {
        const std::int64_t kh = q / ga.k[1], kw = q % ga.k[1];
        const Expr n = N == 1 ? intImm(0) : j / intImm(P);
        const Expr p = N == 1 ? j : j % intImm(P);
        const Expr oh = p / intImm(W1), ow = p % intImm(W1);
        const Expr xh = oh * intImm(ga.s[0]) + intImm(kh * ga.d[0] - ga.pb[0]);
        const Expr xw = ow * intImm(ga.s[1]) + intImm(kw * ga.d[1] - ga.pb[1]);
        // Guards only for taps that can leave the input (padding, a window past the end).
        const Expr inside = chainTapGuard(ga, kh, kw, xh, xw, H1, W1, H, W);
        Expr xv = load(X, f32, {n, c, xh * intImm(W) + xw});
        if (inside) xv = select(inside, xv, zero);
        return xv;
    };
    // T[c, j] = between(B1[c] + sum_q W1[c, q] * tap(q)), the taps given (and the weights and
    // bias, when given: a run's Lets).
    auto combineWith = [&](const Expr& c, const std::function<Expr(std::int64_t)>& tap,
                           const std::function<Expr(std::int64_t)>& weight, const Expr& bias) -> Expr {
        Expr sum = bias ? bias : B1b >= 0 ? load(B1b, f32, {c}) : Expr();
        for (std::int64_t q = 0; q < taps; ++q) {
            const Expr term = (weight ? weight(q) : load(W1b, f32, {c, intImm(q)})) * tap(q);
            sum = sum ? sum + term : term;
        }
        auto v = applyBetween(ck, info, sum ? sum : zero);
        if (!v) {
            betweenErrors.append(v.diagnostics());
            return zero;
        }
        return *v;
    };
    auto combine = [&](const Expr& c, const Expr&, const std::function<Expr(std::int64_t)>& tap) -> Expr {
        return combineWith(c, tap, {}, Expr());
    };
    gs.bElement = [&](const Expr& c, const Expr& j) -> Expr {
        return combine(c, j, [&](std::int64_t q) { return tapValue(c, j, q); });
    };
    if (gs.prefetch && dwPwGemmRawPrefetch(Cm, gs.tile.splitK)) {
        // The prefetch keeps the raw tap values (the input loads) and forms T at the store.
        gs.bRawCount = taps;
        gs.bRaw = tapValue;
        gs.bCombine = combine;
    }
    gs.bRun = dwPwGemmRun(W1, ga.s[1], gs.tile, N * P);
    if (gs.bRun > 1 && !(gs.prefetch && dwPwGemmRawPrefetch(Cm, gs.tile.splitK))) {
        // A run of R pixels of one output row (R divides the row, runs start at multiples of R):
        // the channel's weights and bias loaded once, and each input column under the run's
        // windows once per window row (R = 4, stride 1, 3x3: 18 tap loads instead of 36).
        gs.bRunElements = [&](const Expr& c, const Expr& j0, const std::function<Stmt(std::int64_t, const Expr&)>& sink) -> Stmt {
            const std::int64_t R = gs.bRun;
            std::vector<std::pair<Var, Expr>> binds;
            auto bind = [&](const std::string& hint, const Expr& e) {
                const Var v = k.newVar(hint, e.dtype());
                binds.emplace_back(v, e);
                return varRef(v);
            };
            const Expr n = N == 1 ? intImm(0) : bind("n", j0 / intImm(P));
            const Expr p = N == 1 ? j0 : j0 % intImm(P);
            const Expr oh = bind("oh", p / intImm(W1)), ow0 = bind("ow", p % intImm(W1));
            std::vector<Expr> w(static_cast<std::size_t>(taps));
            for (std::int64_t q = 0; q < taps; ++q) w[static_cast<std::size_t>(q)] = bind("w", load(W1b, f32, {c, intImm(q)}));
            const Expr bias = B1b >= 0 ? bind("bias", load(B1b, f32, {c})) : Expr();
            // Input column offset o = r * s + kw * d from ow0 * s - pad; row kh: its value.
            const std::int64_t span = (R - 1) * ga.s[1] + (ga.k[1] - 1) * ga.d[1] + 1;
            std::vector<Expr> x(static_cast<std::size_t>(ga.k[0] * span));
            for (std::int64_t kh = 0; kh < ga.k[0]; ++kh) {
                const Expr xh = oh * intImm(ga.s[0]) + intImm(kh * ga.d[0] - ga.pb[0]);
                for (std::int64_t o = 0; o < span; ++o) {
                    bool used = false;
                    for (std::int64_t r = 0; r < R && !used; ++r)
                        for (std::int64_t kw = 0; kw < ga.k[1]; ++kw)
                            if (r * ga.s[1] + kw * ga.d[1] == o) used = true;
                    if (!used) continue;
                    const Expr xw = ow0 * intImm(ga.s[1]) + intImm(o - ga.pb[1]);
                    // Guards only where the column or row can leave the input (ow0 in [0, W1 - R]).
                    Expr inside;
                    auto andI = [&](const Expr& e) { inside = inside ? (inside && e) : e; };
                    if (kh * ga.d[0] < ga.pb[0]) andI(xh >= intImm(0));
                    if ((H1 - 1) * ga.s[0] + kh * ga.d[0] - ga.pb[0] >= H) andI(xh < intImm(H));
                    if (o < ga.pb[1]) andI(xw >= intImm(0));
                    if ((W1 - R) * ga.s[1] + o - ga.pb[1] >= W) andI(xw < intImm(W));
                    Expr xv = load(X, f32, {n, c, xh * intImm(W) + xw});
                    if (inside) xv = select(inside, xv, zero);
                    x[static_cast<std::size_t>(kh * span + o)] = bind("x", xv);
                }
            }
            std::vector<Stmt> outs;
            for (std::int64_t r = 0; r < R; ++r) {
                const Expr v = combineWith(
                    c,
                    [&](std::int64_t q) {
                        const std::int64_t kh = q / ga.k[1], kw = q % ga.k[1];
                        return x[static_cast<std::size_t>(kh * span + r * ga.s[1] + kw * ga.d[1])];
                    },
                    [&](std::int64_t q) { return w[static_cast<std::size_t>(q)]; }, bias);
                outs.push_back(sink(r, v));
            }
            Stmt body = seq(outs);
            for (auto it = binds.rbegin(); it != binds.rend(); ++it) body = let(it->first, it->second, body);
            return body;
        };
    }
    k.body = emitGpuGemm(k, gs);
    if (betweenErrors.hasErrors()) return betweenErrors;
    const GpuGemmSpec::Tile& t = gs.tile;
    if (!choice.mmaNote.empty()) k.notes.push_back(choice.mmaNote);
    k.notes.push_back("fused dw-pw chain in GEMM form: " + nodeA.name + " -> " + nodeB.name + "; M = " + std::to_string(K) +
                      " filters, N = " + std::to_string(N) + " x " + std::to_string(P) + " pixels, reduction over " +
                      std::to_string(Cm) + " intermediate channels; the depthwise conv (+ between ops) computed in the "
                      "B-tile staging, never stored to global memory");
    k.notes.push_back("tile " + std::to_string(t.rows()) + " filters x " + std::to_string(t.cols()) + " pixels x " +
                      std::to_string(t.bk) + " channels" +
                      (t.splitK > 1 ? ", reduction split over " + std::to_string(t.splitK) + " thread groups" : std::string()) +
                      "; each intermediate value computed " + std::to_string(ceilDiv(K, t.rows())) + "x");
    return std::move(ck.lk);
}

}  // namespace tessera::lower::detail
