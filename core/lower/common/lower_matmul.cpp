// MatMul (batched, broadcast, 1-D operands) and Gemm (alpha, beta, transA, transB, broadcast C),
// plus the tiling helpers shared by the heavy templates (core/lower/detail/lower_heavy.h).
//
// Loop structure (CPU default): the output [batch..., M, N] is cut into tiles of tm x tn
// (8 x 64, or the whole extent when smaller); grid = spatial(tile counts, M tiles fastest so that
// one worker keeps the same B panel hot) * repeat(1.., tm, tn). Inside a tile a Local accumulator
// acc[tm][tn] is zeroed, then `for k: for ii (unrolled): a = A[i0+ii, k]; for jj (vectorised):
// acc[ii][jj] += a * B[k, j0+jj]`, then stored with the epilogue (alpha, beta*C). When B is
// transposed (Gemm transB) or a vector (MatMul with 1-D B), both operands are contiguous in k and
// the dot form is used instead: acc[tm][tn][16] partial sums over k blocks of 16 (vectorised over
// the 16 lanes), summed at the end with the k tail.

#include <algorithm>
#include <limits>
#include <string>

#include "core/lower/detail/lower_heavy.h"

namespace tessera::lower::detail {

using schedule::Factor;
using schedule::PrimitiveKind;
using schedule::TaskMapping;

namespace {

std::string dimsText(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

DType accumulatorType(DType t) {
    if (t == DType::F16 || t == DType::BF16) return DType::F32;
    return t;
}

ForKind unrollKind(const Expr& extent, std::int64_t maxUnroll) {
    std::int64_t e = 0;
    if (extent.isIntImm(&e) && e > 1 && e <= maxUnroll) return ForKind::Unroll;
    return ForKind::Serial;
}

Stmt loopOver(Kernel& k, const std::string& hint, const Expr& extent, ForKind kind,
              const std::function<Stmt(const Expr&)>& body, std::int64_t factor) {
    std::int64_t e = 0;
    if (extent.isIntImm(&e) && e == 1) return body(intImm(0));
    const Var v = k.newVar(hint);
    Stmt b = body(varRef(v));
    return b ? forLoop(v, extent, b, kind, factor) : nullptr;
}

MappingPlan tiledMapping(const std::vector<std::int64_t>& extents, const std::vector<std::int64_t>& tile,
                         const std::vector<int>& ranks) {
    std::vector<std::int64_t> counts(extents.size());
    bool anyTile = false;
    for (std::size_t d = 0; d < extents.size(); ++d) {
        counts[d] = ceilDiv(extents[d], tile[d]);
        anyTile = anyTile || tile[d] > 1;
    }
    MappingPlan plan;
    plan.tiled = anyTile;
    auto sp = TaskMapping::spatial(counts, ranks);
    if (!sp) sp = TaskMapping::spatial(counts);
    plan.grid = std::move(*sp);
    if (anyTile) {
        auto rp = TaskMapping::repeat(tile);
        auto c = TaskMapping::compose(plan.grid, *rp);
        if (c) plan.grid = std::move(*c);
    }
    return plan;
}

Stmt emitTiledLoops(Kernel& k, const MappingPlan& plan, const std::vector<std::int64_t>& extentsIn,
                    const std::vector<std::int64_t>& maxTile, const std::function<Stmt(const TileView&)>& body) {
    const std::vector<std::int64_t> extents = extentsIn.empty() ? std::vector<std::int64_t>{1} : extentsIn;
    const std::size_t n = extents.size();
    std::vector<Factor> all = plan.grid.factors();
    const std::size_t nGrid = all.size();
    if (plan.block) all.insert(all.end(), plan.block->factors().begin(), plan.block->factors().end());
    std::size_t s = all.size();
    auto tileable = [](const Factor& f) {
        return f.kind == PrimitiveKind::Repeat && std::none_of(f.projected.begin(), f.projected.end(), [](bool p) { return p; });
    };
    while (s > 0 && tileable(all[s - 1])) --s;
    std::vector<std::int64_t> tile(n, 1);
    for (std::size_t f = s; f < all.size(); ++f) {
        const auto ts = all[f].taskShape();
        for (std::size_t d = 0; d < n && d < ts.size(); ++d) tile[d] *= ts[d];
    }
    MappingPlan outer;
    outer.target = plan.target;
    std::vector<Factor> gridPart(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(std::min(s, nGrid)));
    if (gridPart.empty()) {
        outer.grid = std::move(*TaskMapping::spatial(std::vector<std::int64_t>(n, 1)));
    } else {
        outer.grid = std::move(*TaskMapping::fromFactors(gridPart));
    }
    if (s > nGrid) {
        std::vector<Factor> blockPart(all.begin() + static_cast<std::ptrdiff_t>(nGrid),
                                      all.begin() + static_cast<std::ptrdiff_t>(s));
        outer.block = std::move(*TaskMapping::fromFactors(blockPart));
    }
    std::vector<std::int64_t> counts(n), sub(n), nSub(n);
    std::vector<bool> partialDim(n);
    bool anyPartial = false;
    for (std::size_t d = 0; d < n; ++d) {
        counts[d] = ceilDiv(extents[d], tile[d]);
        sub[d] = maxTile.size() > d && maxTile[d] > 0 ? std::min(tile[d], maxTile[d]) : tile[d];
        nSub[d] = ceilDiv(tile[d], sub[d]);
        partialDim[d] = !(extents[d] % tile[d] == 0 && tile[d] % sub[d] == 0);
        anyPartial = anyPartial || partialDim[d];
    }

    const std::size_t mark = k.mappings.size();
    Stmt st = emitMappedLoops(k, outer, counts, [&](const std::vector<Expr>& t) {
        std::vector<Var> subVars(n);
        TileView full, part;
        full.size = sub;
        full.full = true;
        part.size = sub;
        part.full = false;
        Expr fullCond, nonEmpty;
        for (std::size_t d = 0; d < n; ++d) {
            const Expr base = t[d] * intImm(tile[d]);
            Expr origin = base;
            if (nSub[d] > 1) {
                subVars[d] = k.newVar("s" + std::to_string(d));
                origin = base + varRef(subVars[d]) * intImm(sub[d]);
            }
            full.origin.push_back(origin);
            part.origin.push_back(origin);
            full.extent.push_back(intImm(sub[d]));
            if (!partialDim[d]) {
                part.extent.push_back(intImm(sub[d]));
                continue;
            }
            const Expr end = minOf(intImm(extents[d]), base + intImm(tile[d]));
            part.extent.push_back(minOf(intImm(sub[d]), end - origin));
            const Expr fc = origin + intImm(sub[d]) <= end;
            const Expr ne = origin < end;
            fullCond = fullCond ? (fullCond && fc) : fc;
            nonEmpty = nonEmpty ? (nonEmpty && ne) : ne;
        }
        Stmt inner = body(full);
        if (anyPartial) inner = ifThen(fullCond, inner, ifThen(nonEmpty, body(part)));
        for (std::size_t d = n; d-- > 0;)
            if (nSub[d] > 1) inner = forLoop(subVars[d], intImm(nSub[d]), inner, ForKind::Serial, 0, "sub-tile");
        return inner;
    });
    k.mappings.resize(mark);
    k.mappings.push_back("grid = " + plan.grid.str());
    if (plan.block) k.mappings.push_back("block = " + plan.block->str());
    std::string note = "tile " + dimsText(tile);
    if (sub != tile) note += " in sub-tiles of " + dimsText(sub);
    k.notes.push_back(note + " (Local accumulator per tile)");
    return st;
}

Stmt emitGemmTile(Kernel& k, const GemmTileSpec& s, const Expr& i0, const Expr& j0, const Expr& mExt,
                  const Expr& nExt, std::int64_t tm, std::int64_t tn) {
    const DType t = s.acc;
    const Expr zero = constant(0.0, t);
    if (s.dotForm && s.K >= s.lanes) {
        const std::int64_t L = s.lanes, KB = s.K / L, KT = s.K % L;
        BufferDecl ab;
        ab.name = "acc";
        ab.dtype = t;
        ab.shape = {tm, tn, L};
        ab.scope = MemoryScope::Local;
        const int acc = k.addBuffer(ab);
        BufferDecl rb = ab;
        rb.name = "sum";
        rb.shape = {1};
        const int red = k.addBuffer(rb);
        auto tileLoops = [&](const std::string&, const std::function<Stmt(const Expr&, const Expr&)>& f) {
            return loopOver(k, "ii", mExt, unrollKind(mExt, 8), [&](const Expr& i) {
                return loopOver(k, "jj", nExt, unrollKind(nExt, 8), [&](const Expr& j) { return f(i, j); });
            });
        };
        Stmt init = tileLoops("", [&](const Expr& i, const Expr& j) {
            const Var v = k.newVar("v");
            return forLoop(v, intImm(L), store(acc, {i, j, varRef(v)}, zero), ForKind::Vectorize, L);
        });
        const Var kb = k.newVar("kb");
        Stmt mainLoop = forLoop(kb, intImm(KB), tileLoops("", [&](const Expr& i, const Expr& j) {
            const Var v = k.newVar("v");
            const Expr kk = varRef(kb) * intImm(L) + varRef(v);
            const std::vector<Expr> idx{i, j, varRef(v)};
            return forLoop(v, intImm(L),
                           store(acc, idx, load(acc, t, idx) + s.a(i0 + i, kk) * s.b(kk, j0 + j)),
                           ForKind::Vectorize, L);
        }));
        Stmt out = tileLoops("", [&](const Expr& i, const Expr& j) {
            const Var v = k.newVar("v");
            std::vector<Stmt> body;
            body.push_back(store(red, {intImm(0)}, zero));
            body.push_back(forLoop(v, intImm(L),
                                   store(red, {intImm(0)}, load(red, t, {intImm(0)}) + load(acc, t, {i, j, varRef(v)}))));
            if (KT > 0) {
                const Var r = k.newVar("kt");
                const Expr kk = intImm(KB * L) + varRef(r);
                body.push_back(forLoop(r, intImm(KT),
                                       store(red, {intImm(0)}, load(red, t, {intImm(0)}) + s.a(i0 + i, kk) * s.b(kk, j0 + j))));
            }
            body.push_back(s.store(i0 + i, j0 + j, load(red, t, {intImm(0)})));
            return seq(std::move(body));
        });
        return allocate(acc, allocate(red, seq({init, mainLoop, out})));
    }

    BufferDecl ab;
    ab.name = "acc";
    ab.dtype = t;
    ab.shape = {tm, tn};
    ab.scope = MemoryScope::Local;
    const int acc = k.addBuffer(ab);
    auto rows = [&](const std::function<Stmt(const Expr&)>& f) { return loopOver(k, "ii", mExt, unrollKind(mExt), f); };
    auto cols = [&](const std::function<Stmt(const Expr&)>& f) {
        const Var jj = k.newVar("jj");
        return forLoop(jj, nExt, f(varRef(jj)), ForKind::Vectorize);
    };
    Stmt init = rows([&](const Expr& i) { return cols([&](const Expr& j) { return store(acc, {i, j}, zero); }); });
    const Var kv = k.newVar("k");
    Stmt mainLoop = forLoop(kv, intImm(s.K), rows([&](const Expr& i) {
        const Var av = k.newVar("a", t);
        return let(av, s.a(i0 + i, varRef(kv)), cols([&](const Expr& j) {
            return store(acc, {i, j}, load(acc, t, {i, j}) + varRef(av) * s.b(varRef(kv), j0 + j));
        }));
    }));
    Stmt out = rows([&](const Expr& i) {
        return cols([&](const Expr& j) { return s.store(i0 + i, j0 + j, load(acc, t, {i, j})); });
    });
    return allocate(acc, seq({init, mainLoop, out}));
}

namespace {

/// Default tile sizes of the two matmul forms.
std::pair<std::int64_t, std::int64_t> defaultGemmTile(std::int64_t M, std::int64_t N, bool dot) {
    if (dot) return {std::min<std::int64_t>(M, M == 1 ? 1 : 2), std::min<std::int64_t>(N, M == 1 ? 8 : 4)};
    return {std::min<std::int64_t>(M, 8), std::min<std::int64_t>(N, 64)};
}

/// Grid ranks putting the M-tile dimension (index nb) fastest: batch dims outer, then N tiles.
std::vector<int> mFastestRanks(std::size_t nb) {
    std::vector<int> r;
    for (std::size_t d = 0; d < nb; ++d) r.push_back(static_cast<int>(d));
    r.push_back(static_cast<int>(nb) + 1);
    r.push_back(static_cast<int>(nb));
    return r;
}

}  // namespace

support::Expected<LoweredKernel> lowerMatMul(const LowerContext& ctx) {
    const ir::Node& node = ctx.node;
    if (node.inputs.size() != 2 || node.outputs.empty() || node.outputs[0] == ir::kNoValue)
        return lowerError(ctx, "MatMul needs two inputs and one output");
    auto as = shapeOf(ctx, node.inputs[0]);
    if (!as) return as.diagnostics();
    auto bs = shapeOf(ctx, node.inputs[1]);
    if (!bs) return bs.diagnostics();
    auto ys = shapeOf(ctx, node.outputs[0]);
    if (!ys) return ys.diagnostics();
    std::vector<std::int64_t> a = *as, b = *bs;
    if (a.empty() || b.empty()) return lowerError(ctx, "MatMul operands must have rank >= 1");
    const bool aVec = a.size() == 1, bVec = b.size() == 1;
    if (aVec) a.insert(a.begin(), 1);
    if (bVec) b.push_back(1);
    const std::int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
    if (b[b.size() - 2] != K)
        return lowerError(ctx, "inner dimensions differ: " + dimsText(*as) + " x " + dimsText(*bs));
    const std::vector<std::int64_t> aBatch(a.begin(), a.end() - 2), bBatch(b.begin(), b.end() - 2);
    const std::size_t nb = std::max(aBatch.size(), bBatch.size());
    std::vector<std::int64_t> batch(nb, 1);
    for (const auto* src : {&aBatch, &bBatch}) {
        const std::size_t off = nb - src->size();
        for (std::size_t i = 0; i < src->size(); ++i) {
            const std::int64_t d = (*src)[i];
            auto& o = batch[off + i];
            if (d == o || d == 1) continue;
            if (o != 1) return lowerError(ctx, "batch dimensions of " + dimsText(*as) + " and " + dimsText(*bs) + " do not broadcast");
            o = d;
        }
    }
    std::vector<std::int64_t> expectOut = batch;
    if (!aVec) expectOut.push_back(M);
    if (!bVec) expectOut.push_back(N);
    if (expectOut != *ys)
        return lowerError(ctx, "output shape " + dimsText(*ys) + " differs from the product's " + dimsText(expectOut));

    const DType outT = dtypeOf(ctx.g, node.outputs[0]);
    const DType accT = accumulatorType(outT);
    LoweredKernel lk = beginKernel(ctx);
    const int A = addInput(ctx, lk, node.inputs[0]);
    const int B = addInput(ctx, lk, node.inputs[1]);
    const int Y = addOutput(ctx, lk, node.outputs[0]);
    Kernel& k = lk.kernel;
    const DType aT = k.buffers[static_cast<std::size_t>(A)].dtype, bT = k.buffers[static_cast<std::size_t>(B)].dtype;
    // CUDA: a batch of matrices times one matrix (a Linear layer on [.., rows, K], e.g. ConvNeXt's
    // [1, 56, 56, 96] x [96, 384]) is one GEMM with the batch folded into the rows: A and Y are
    // declared [batch x M, K] and [batch x M, N] (row-major, so the same memory), one grid of
    // 3136-row tiles instead of 56 GEMMs of 56 rows.
    std::int64_t folded = 1;
    for (std::int64_t d : batch) folded = folded <= std::numeric_limits<std::int64_t>::max() / std::max<std::int64_t>(d, 1) ? folded * d : 0;
    const bool bShared = std::all_of(bBatch.begin(), bBatch.end(), [](std::int64_t d) { return d == 1; });
    if (!aVec && !bVec && nb > 0 && bShared && folded > 1 && M <= std::numeric_limits<std::int64_t>::max() / folded &&
        useGpuGemm(ctx, {}, folded * M, N, {aT, bT, outT}, K)) {
        k.buffers[static_cast<std::size_t>(A)].shape = {folded * M, K};
        k.buffers[static_cast<std::size_t>(B)].shape = {K, N};
        k.buffers[static_cast<std::size_t>(Y)].shape = {folded * M, N};
        GpuGemmSpec g;
        g.a = A, g.b = B, g.y = Y, g.M = folded * M, g.N = N, g.K = K;
        g.tile = gpuGemmTileFor(ctx, {}, folded * M, N, K);
        k.body = emitGpuGemm(k, g);
        k.notes.push_back("batch of " + std::to_string(folded) + " matrices x one matrix folded into one GEMM of " +
                          std::to_string(folded * M) + " rows; A and Y declared [" + std::to_string(folded * M) + ", " +
                          std::to_string(K) + "] and [" + std::to_string(folded * M) + ", " + std::to_string(N) + "]");
        return lk;
    }
    if (!aVec && !bVec && useGpuGemm(ctx, batch, M, N, {aT, bT, outT}, K)) {  // CUDA: lower_matmul_gpu.cpp
        GpuGemmSpec g;
        g.a = A, g.b = B, g.y = Y, g.M = M, g.N = N, g.K = K;
        g.batch = batch, g.aBatch = aBatch, g.bBatch = bBatch;
        g.tile = gpuGemmTileFor(ctx, batch, M, N, K);
        k.body = emitGpuGemm(k, g);
        return lk;
    }

    std::vector<std::int64_t> extents = batch;
    extents.push_back(M);
    extents.push_back(N);
    const bool dot = bVec && K >= 16;
    const auto [tm, tn] = defaultGemmTile(M, N, dot);
    std::vector<std::int64_t> tile(nb, 1), maxTile(nb, 1);
    tile.push_back(tm);
    tile.push_back(tn);
    maxTile.push_back(dot ? 4 : 16);
    maxTile.push_back(dot ? 16 : 256);
    auto plan = resolveMappings(ctx, extents, tiledMapping(extents, tile, mFastestRanks(nb)));
    if (!plan) return plan.diagnostics();

    k.body = emitTiledLoops(k, *plan, extents, maxTile, [&](const TileView& tv) {
        const std::vector<Expr> bidx(tv.origin.begin(), tv.origin.begin() + static_cast<std::ptrdiff_t>(nb));
        const auto aB = broadcastIndex(bidx, aBatch), bB = broadcastIndex(bidx, bBatch);
        GemmTileSpec s;
        s.K = K;
        s.acc = accT;
        s.dotForm = dot;
        s.a = [&, aB](const Expr& i, const Expr& kk) {
            std::vector<Expr> idx = aB;
            if (!aVec) idx.push_back(i);
            idx.push_back(kk);
            return cast(load(A, aT, idx), accT);
        };
        s.b = [&, bB](const Expr& kk, const Expr& j) {
            std::vector<Expr> idx = bB;
            idx.push_back(kk);
            if (!bVec) idx.push_back(j);
            return cast(load(B, bT, idx), accT);
        };
        s.store = [&, bidx](const Expr& i, const Expr& j, const Expr& v) {
            std::vector<Expr> idx = bidx;
            if (!aVec) idx.push_back(i);
            if (!bVec) idx.push_back(j);
            return store(Y, idx, cast(v, outT));
        };
        return emitGemmTile(k, s, tv.origin[nb], tv.origin[nb + 1], tv.extent[nb], tv.extent[nb + 1], tv.size[nb],
                            tv.size[nb + 1]);
    });
    k.notes.push_back(dot ? "matmul dot form: k innermost in 16 partial sums" : "matmul axpy form: k outer, j vectorised");
    return lk;
}

support::Expected<LoweredKernel> lowerGemm(const LowerContext& ctx) {
    const ir::Node& node = ctx.node;
    if (node.inputs.size() < 2 || node.inputs.size() > 3 || node.outputs.empty() || node.outputs[0] == ir::kNoValue)
        return lowerError(ctx, "Gemm needs inputs A, B, optional C and one output");
    auto as = shapeOf(ctx, node.inputs[0]);
    if (!as) return as.diagnostics();
    auto bs = shapeOf(ctx, node.inputs[1]);
    if (!bs) return bs.diagnostics();
    if (as->size() != 2 || bs->size() != 2)
        return lowerError(ctx, "Gemm needs 2-D A and B, got " + dimsText(*as) + " and " + dimsText(*bs));
    const bool tA = node.attrInt("transA", 0) != 0, tB = node.attrInt("transB", 0) != 0;
    const double alpha = node.attrFloat("alpha", 1.0), beta = node.attrFloat("beta", 1.0);
    const std::int64_t M = tA ? (*as)[1] : (*as)[0], K = tA ? (*as)[0] : (*as)[1];
    const std::int64_t K2 = tB ? (*bs)[1] : (*bs)[0], N = tB ? (*bs)[0] : (*bs)[1];
    if (K != K2) return lowerError(ctx, "inner dimensions differ: " + dimsText(*as) + " x " + dimsText(*bs));
    const bool hasC = node.inputs.size() == 3 && node.inputs[2] != ir::kNoValue;
    std::vector<std::int64_t> cShape;
    if (hasC) {
        auto cs = shapeOf(ctx, node.inputs[2]);
        if (!cs) return cs.diagnostics();
        cShape = *cs;
        const std::vector<std::int64_t> target{M, N};
        bool ok = cShape.size() <= 2;
        for (std::size_t i = 0; ok && i < cShape.size(); ++i) {
            const std::int64_t t = target[2 - cShape.size() + i];
            ok = cShape[i] == t || cShape[i] == 1;
        }
        if (!ok) return lowerError(ctx, "C of shape " + dimsText(cShape) + " does not broadcast to " + dimsText(target));
    }
    auto ys = shapeOf(ctx, node.outputs[0]);
    if (!ys) return ys.diagnostics();
    if (*ys != std::vector<std::int64_t>{M, N})
        return lowerError(ctx, "output shape " + dimsText(*ys) + " differs from [" + std::to_string(M) + "," + std::to_string(N) + "]");

    const DType outT = dtypeOf(ctx.g, node.outputs[0]);
    const DType accT = accumulatorType(outT);
    LoweredKernel lk = beginKernel(ctx);
    const int A = addInput(ctx, lk, node.inputs[0]);
    const int B = addInput(ctx, lk, node.inputs[1]);
    const int C = hasC ? addInput(ctx, lk, node.inputs[2]) : -1;
    const int Y = addOutput(ctx, lk, node.outputs[0]);
    Kernel& k = lk.kernel;
    const DType aT = k.buffers[static_cast<std::size_t>(A)].dtype, bT = k.buffers[static_cast<std::size_t>(B)].dtype;
    const DType cT = hasC ? k.buffers[static_cast<std::size_t>(C)].dtype : outT;
    if (useGpuGemm(ctx, {}, M, N, {aT, bT, cT, outT}, K)) {  // CUDA: lower_matmul_gpu.cpp
        GpuGemmSpec g;
        g.a = A, g.b = B, g.c = C, g.y = Y, g.M = M, g.N = N, g.K = K;
        g.tile = gpuGemmTileFor(ctx, {}, M, N, K);
        g.transA = tA, g.transB = tB, g.alpha = alpha, g.beta = beta, g.cShape = cShape;
        k.body = emitGpuGemm(k, g);
        return lk;
    }

    const std::vector<std::int64_t> extents{M, N};
    const bool dot = tB && !tA && K >= 16;
    const auto [tm, tn] = defaultGemmTile(M, N, dot);
    const std::vector<std::int64_t> maxTile{dot ? 4 : 16, dot ? 16 : 256};
    auto plan = resolveMappings(ctx, extents, tiledMapping(extents, {tm, tn}, mFastestRanks(0)));
    if (!plan) return plan.diagnostics();

    k.body = emitTiledLoops(k, *plan, extents, maxTile, [&](const TileView& tv) {
        GemmTileSpec s;
        s.K = K;
        s.acc = accT;
        s.dotForm = dot;
        s.a = [&](const Expr& i, const Expr& kk) {
            return cast(load(A, aT, tA ? std::vector<Expr>{kk, i} : std::vector<Expr>{i, kk}), accT);
        };
        s.b = [&](const Expr& kk, const Expr& j) {
            return cast(load(B, bT, tB ? std::vector<Expr>{j, kk} : std::vector<Expr>{kk, j}), accT);
        };
        s.store = [&](const Expr& i, const Expr& j, const Expr& v) {
            Expr r = alpha == 1.0 ? v : v * constant(alpha, accT);
            if (hasC && beta != 0.0) {
                Expr c = cast(load(C, cT, broadcastIndex({i, j}, cShape)), accT);
                r = r + (beta == 1.0 ? c : c * constant(beta, accT));
            }
            return store(Y, {i, j}, cast(r, outT));
        };
        return emitGemmTile(k, s, tv.origin[0], tv.origin[1], tv.extent[0], tv.extent[1], tv.size[0], tv.size[1]);
    });
    k.notes.push_back(dot ? "gemm dot form (transB): k innermost in 16 partial sums" : "gemm axpy form: k outer, j vectorised");
    return lk;
}

}  // namespace tessera::lower::detail
