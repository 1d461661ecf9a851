// The CUDA GEMM template (lower_heavy.h: useGpuGemm, emitGpuGemm): MatMul, Gemm and pointwise
// Conv on the CUDA target with no user mapping, M and N >= 64.
//
// Schedule, as task mappings (Hidet's matmul template):
//   grid  = spatial(batch..., ceil(M/128), ceil(N/128))       one block per 128 x 128 output tile
//   block = repeat(2,2) * spatial(16,16) * repeat(4,4)         256 threads, 8 x 8 results each
// Thread t = ty * 16 + tx owns rows g*64 + ty*4 + ii and columns h*64 + tx*4 + jj (g, h in {0,1},
// ii, jj in 0..3): its 8 a-values and 8 b-values are two groups of 4 contiguous floats 64 apart,
// so the 16 threads of a half warp read 64 consecutive floats of a shared row (no bank conflicts;
// 4-float groups can become 128-bit shared loads), where a plain tx*8 + j layout would make
// tx and tx+4 collide in the same banks.
//
// Kernel:
//   blocks for w in 0..tiles                                 (grid)
//     alloc As: f32[8, 132] shared; Bs: f32[8, 132] shared; acc: f32[256,8,8] local per-thread
//     threads for t: acc[t][*][*] = 0
//     for k0 in 0..ceil(K/8):
//       threads for t: 4 elements of the A tile -> As[kk][m], 4 of the B tile -> Bs[kk][n]
//                      (guarded: zero outside M, N, K; consecutive t read consecutive addresses
//                      of the operand's contiguous dimension)
//       barrier
//       threads for t: for kk (unrolled): a[0..8] = As[kk][..], b[0..8] = Bs[kk][..];
//                      acc[t][i][j] += a[i] * b[j]
//       barrier
//     threads for t: Y = epilogue(acc[t]) (alpha, beta * C), guarded at the M/N edges
// Column groups (GpuGemmSpec::colGroup, pointwise Conv: B = X [N, Ci, P], Y [N, Co, P]): column
// j of the product is (j / P, j % P), so a tile's columns may span several images; B and Y index
// [j / P, k, j % P] and [j / P, i, j % P] (constant divisor) and are otherwise staged and stored
// exactly like a plain B.
// Shared rows are padded by 4 floats (132 = 33 * 4, rows stay 16-byte aligned): the k-contiguous
// tile loads store 8 consecutive kk of 4 consecutive m per warp, which without padding would hit
// only 4 banks.

#include <algorithm>
#include <string>

#include "core/lower/detail/lower_fused_conv_gpu.h"
#include "core/lower/detail/lower_heavy.h"
#include "core/schedule/mapping_parser.h"

namespace tessera::lower::detail {

using schedule::TaskMapping;

namespace {

constexpr std::int64_t kThreads = 256;                 // threads per block (spatial(ty, tx))

/// A thread's results along one dim: `groups` groups of `group` consecutive rows (columns), the
/// groups `stride` apart (default tile: 2 groups of 4, 64 apart).
struct DimSplit {
    std::int64_t group = 4, groups = 2, stride = 64;
};
DimSplit dimSplit(std::int64_t threads, std::int64_t per) {
    // Groups of 4 when they divide the results, else 2, else 1 (the tall tiles' 5, 10, 6 ...).
    DimSplit d;
    d.group = per % 4 == 0 ? 4 : per % 2 == 0 ? 2 : 1;
    d.groups = per / d.group;
    d.stride = threads * d.group;
    return d;
}
bool isPow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool isGemmFloat(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

/// A && b where either may be null (no condition).
Expr andMaybe(const Expr& a, const Expr& b) {
    if (!a) return b;
    if (!b) return a;
    return a && b;
}

TaskMapping mappingOf(support::Expected<TaskMapping> m) { return std::move(*m); }

/// grid = spatial(batch..., ceil(M/rows), ceil(N/cols)).
TaskMapping gridMapping(const std::vector<std::int64_t>& batch, std::int64_t M, std::int64_t N,
                        const GpuGemmSpec::Tile& t) {
    std::vector<std::int64_t> shape = batch;
    shape.push_back(ceilDiv(M, t.rows()));
    shape.push_back(ceilDiv(N, t.cols()));
    return mappingOf(TaskMapping::spatial(shape));
}

/// block = repeat(1.., 2, 2) * spatial(1.., 16, 16) * repeat(1.., 4, 4) (batch dims 1) for the
/// default tile; in general repeat(groups) * spatial(ty, tx) * repeat(group) per dim. MMA tiles:
/// spatial(wy, wx) * repeat(2 mt, nt) * spatial(8, 4) * repeat(1, 2) (Tile::mma).
TaskMapping blockMapping(std::size_t nb, const GpuGemmSpec::Tile& t) {
    if (t.mma) {
        auto dims = [&](std::int64_t r, std::int64_t c) {
            std::vector<std::int64_t> v(nb, 1);
            v.push_back(r);
            v.push_back(c);
            return v;
        };
        TaskMapping m = mappingOf(TaskMapping::compose(mappingOf(TaskMapping::spatial(dims(t.wy, t.wx()))),
                                                       mappingOf(TaskMapping::repeat(dims(2 * t.mmaRows(), t.mmaCols())))));
        m = mappingOf(TaskMapping::compose(m, mappingOf(TaskMapping::spatial(dims(8, 4)))));
        return mappingOf(TaskMapping::compose(m, mappingOf(TaskMapping::repeat(dims(1, 2)))));
    }
    const DimSplit dm = dimSplit(t.ty, t.rm), dn = dimSplit(t.tx, t.rn);
    std::vector<std::int64_t> groups(nb, 1), spatial(nb, 1), reps(nb, 1);
    groups.insert(groups.end(), {dm.groups, dn.groups});
    spatial.insert(spatial.end(), {t.ty, t.tx});
    reps.insert(reps.end(), {dm.group, dn.group});
    return mappingOf(TaskMapping::compose(
        mappingOf(TaskMapping::compose(mappingOf(TaskMapping::repeat(groups)), mappingOf(TaskMapping::spatial(spatial)))),
        mappingOf(TaskMapping::repeat(reps))));
}

/// True when the schedule's level `level` parses to exactly `want`.
bool levelIs(const ir::KernelScheduleDecl& s, const char* level, const TaskMapping& want) {
    const ir::ScheduleMappingDecl* d = s.mapping(level);
    if (!d) return false;
    auto m = schedule::parseMapping(d->text);
    return m.ok() && *m == want;
}

}  // namespace

static bool splitOk(const GpuGemmSpec::Tile& t) { return t.splitK == 1 || t.splitK == 2 || t.splitK == 4; }

bool gpuGemmTileValid(const GpuGemmSpec::Tile& t) {
    if (!splitOk(t)) return false;
    auto perOk = [](std::int64_t p) { return p == 1 || p == 2 || (p >= 4 && p % 4 == 0); };
    if (t.ty < 1 || t.tx < 1 || t.ty * t.tx != kThreads || !perOk(t.rm) || !perOk(t.rn)) return false;
    for (std::int64_t e : {t.rows(), t.cols()})
        if (!isPow2(e) || e < 16 || e > 256 || (e * t.bk) % kThreads != 0) return false;
    return isPow2(t.bk) && t.bk >= 4 && t.bk <= 64;
}

bool gpuGemmTallTileValid(const GpuGemmSpec::Tile& t) {
    if (!splitOk(t)) return false;
    if (t.ty < 1 || t.tx < 1 || t.ty * t.tx != kThreads || t.rm < 1 || t.rn < 1 || t.rm > 32 || t.rn > 32 ||
        t.rm * t.rn > 64)
        return false;
    if (!isPow2(t.bk) || t.bk < 8 || t.bk > 64) return false;
    // Rows: k-contiguous staging in warps of 8 k x 4 rows (any multiple of 32 rows);
    // columns: staged column-contiguous (t % cols), so a power of two dividing the block.
    if (t.rows() % 32 != 0 || t.rows() > 512) return false;
    return isPow2(t.cols()) && t.cols() >= 8 && t.cols() <= 256 && (t.cols() * t.bk) % kThreads == 0;
}

bool gpuGemmMmaTileValid(const GpuGemmSpec::Tile& t) {
    if (!t.mma || t.wy < 1 || t.wx() < 1 || t.wy * t.wx() > 8) return false;
    GpuGemmSpec::Tile plain = t;
    plain.mma = false;
    if (!gpuGemmTileValid(plain) && !gpuGemmTallTileValid(plain)) return false;
    if (t.rows() % (16 * t.wy) != 0 || t.cols() % (8 * t.wx()) != 0 || t.bk % 8 != 0) return false;
    return 4 * t.mmaRows() * t.mmaCols() <= 64;
}

bool gpuGemmBRunApplies(const GpuGemmSpec::Tile& t, std::int64_t N, std::int64_t run) {
    return run > 1 && t.cols() % run == 0 && (t.cols() * t.bk / kThreads) % run == 0 && N % run == 0;
}

GpuGemmSpec::Tile gpuGemmTileFor(const LowerContext& ctx, const std::vector<std::int64_t>& batch, std::int64_t M,
                                 std::int64_t N, std::int64_t K) {
    const GpuGemmSpec::Tile def;
    const std::int64_t want = ctx.options.gpuGemmFillBlocks;
    std::int64_t nb = 1;
    for (std::int64_t d : batch) nb *= std::max<std::int64_t>(d, 1);
    auto blocksOf = [&](std::int64_t r, std::int64_t c) { return nb * ceilDiv(M, r) * ceilDiv(N, c); };
    if (want <= 0 || blocksOf(def.rows(), def.cols()) >= want) return def;
    auto cap = [](std::int64_t v) {
        std::int64_t p = 32;
        while (p < v && p < 128) p *= 2;
        return p;
    };
    const std::int64_t rowCap = cap(M), colCap = cap(N);
    static const std::int64_t shapes[][2] = {{128, 64}, {64, 128}, {64, 64}, {64, 32}, {32, 64}, {32, 32}};
    for (const auto& sh : shapes) {
        if (sh[0] > rowCap || sh[1] > colCap || blocksOf(sh[0], sh[1]) < want) continue;
        if (auto t = gpuGemmTileOf(sh[0], sh[1], 16)) return *t;
    }
    GpuGemmSpec::Tile t = *gpuGemmTileOf(32, 32, 16);
    if (K >= 256) {
        t.splitK = K >= 1024 ? 4 : 2;
        if (!gpuGemmTileValid(t)) t.splitK = 1;
    }
    return t;
}

bool useGpuGemm(const LowerContext& ctx, const std::vector<std::int64_t>& batch, std::int64_t M, std::int64_t N,
                const std::vector<DType>& types, std::int64_t K) {
    if (ctx.options.target != Target::Cuda) return false;
    // With the fill rule (K known) 32-row and 32-column tiles exist, so extents from 32 fit.
    const bool fill = K > 0 && ctx.options.gpuGemmFillBlocks > 0;
    const std::int64_t minExtent = fill ? 32 : kGpuGemmMinExtent;
    if (M < minExtent || N < minExtent) return false;
    if (!std::all_of(types.begin(), types.end(), isGemmFloat)) return false;
    // Mapping limits (task_mapping.h); beyond them the generic path reports the error.
    if (batch.size() + 2 > static_cast<std::size_t>(schedule::kMaxRank)) return false;
    const GpuGemmSpec::Tile tile = K > 0 ? gpuGemmTileFor(ctx, batch, M, N, K) : GpuGemmSpec::Tile{};
    std::int64_t blocks = ceilDiv(M, tile.rows()) * ceilDiv(N, tile.cols());
    for (std::int64_t d : batch) {
        if (d < 1 || blocks > schedule::kMaxTasks / d) return false;
        blocks *= d;
    }
    const ir::KernelScheduleDecl* s = ctx.schedule;
    if (!s || (!s->mapping("grid") && !s->mapping("block") && !s->mapping("warp") && !s->mapping("thread")))
        return blocks * tile.splitK >= ctx.options.gpuGemmMinBlocks;
    // The template's own mappings written back as a schedule (defaultSchedule) select it again.
    return !s->mapping("warp") && !s->mapping("thread") && levelIs(*s, "grid", gridMapping(batch, M, N, tile)) &&
           levelIs(*s, "block", blockMapping(batch.size(), tile));
}

Stmt emitGpuGemm(Kernel& k, const GpuGemmSpec& s) {
    const DType accT = DType::F32;
    const Expr zero = floatImm(0.0, accT);
    const std::size_t nb = s.batch.size();
    const auto bufType = [&](int b) { return k.buffers[static_cast<std::size_t>(b)].dtype; };
    const DType aT = bufType(s.a), bT = s.b >= 0 ? bufType(s.b) : accT, yT = bufType(s.y);
    const DType cT = s.c >= 0 ? bufType(s.c) : accT;
    const GpuGemmSpec::Tile& tl = s.tile;
    const std::int64_t kBM = tl.rows(), kBN = tl.cols(), kBK = tl.bk, kTY = tl.ty, kTX = tl.tx;
    const std::int64_t kTM = tl.rm, kTN = tl.rn;
    const std::int64_t kPad = tl.pad();  // floats of padding per shared row
    // Tensor cores (Tile::mma): mt x nt m16n8 tiles per warp; the accumulator is [.., mt * nt, 4]
    // (MMA tile, fragment element) instead of [.., rm, rn].
    const bool kMma = tl.mma;
    const std::int64_t kMt = kMma ? tl.mmaRows() : 0, kNt = kMma ? tl.mmaCols() : 0;
    const std::int64_t kA1 = kMma ? kMt * kNt : kTM, kA2 = kMma ? 4 : kTN;
    const DimSplit dM = dimSplit(kTY, kTM), dN = dimSplit(kTX, kTN);
    // Split reduction (Tile::splitK): kS groups of kThreads threads, each with its own shared
    // stage (rows g * kBK .. of As and Bs) and every kS-th reduction step.
    const std::int64_t kS = tl.splitK, kAll = kThreads * kS;
    const std::int64_t kSteps = ceilDiv(s.K, kBK), kStepsG = ceilDiv(kSteps, kS);
    // Raw B prefetch (GpuGemmSpec::bRawCount): raw values per B element kept in registers.
    const bool rawB = s.prefetch && s.bElement && s.bRawCount > 0 && s.bRaw && s.bCombine;
    const std::int64_t kRaw = rawB ? s.bRawCount : 1;
    // B runs (GpuGemmSpec::bRun): a thread's B elements in runs of kRun columns of one k; runs of
    // 1 (bRun 1 with bRunElements) give each element through the producer's statement form.
    const bool kRuns = s.bElement && s.bRunElements && !rawB &&
                       (s.bRun == 1 ? (tl.cols() * tl.bk) % kThreads == 0 : gpuGemmBRunApplies(tl, s.N, s.bRun));
    const std::int64_t kRun = kRuns ? s.bRun : 1;

    MappingPlan plan;
    plan.target = Target::Cuda;
    plan.grid = gridMapping(s.batch, s.M, s.N, tl);
    const std::vector<std::int64_t> gridShape = plan.grid.taskShape();

    BufferDecl tile;
    tile.dtype = accT;
    tile.scope = MemoryScope::Shared;
    tile.name = "As";
    tile.shape = {kS * kBK, kBM + kPad};
    const int As = k.addBuffer(tile);
    tile.name = "Bs";
    tile.shape = {kS * kBK, kBN + kPad};
    const int Bs = k.addBuffer(tile);
    // Partial sums of groups 1.. (split reduction): in As when it is large enough (the loop is
    // done with it by then), else a buffer of their own. Element (group g >= 1, i, j, thread t)
    // at ((g - 1) * kTM * kTN + i * kTN + j) * kThreads + t: consecutive threads, consecutive words.
    int Rs = -1;
    const std::int64_t kRed = (kS - 1) * kA1 * kA2 * kThreads;
    if (kS > 1 && kRed > kS * kBK * (kBM + kPad)) {
        tile.name = "Rs";
        tile.shape = {kRed};
        Rs = k.addBuffer(tile);
    }
    BufferDecl accDecl;
    accDecl.name = "acc";
    accDecl.dtype = accT;
    accDecl.scope = MemoryScope::Local;
    accDecl.shape = {kAll, kA1, kA2};
    accDecl.perThread = true;
    const int acc = k.addBuffer(accDecl);
    BufferDecl reg;
    reg.dtype = accT;
    reg.scope = MemoryScope::Local;
    reg.name = "a";
    reg.shape = {kTM};
    const int aReg = k.addBuffer(reg);
    reg.name = "b";
    reg.shape = {kTN};
    const int bReg = k.addBuffer(reg);
    int preA = -1, preB = -1;
    if (s.prefetch) {
        BufferDecl pre = accDecl;
        pre.name = "pa";
        pre.shape = {kAll, kBM * kBK / kThreads};
        preA = k.addBuffer(pre);
        pre.name = "pb";
        pre.shape = {kAll, kBN * kBK / kThreads * kRaw};
        preB = k.addBuffer(pre);
    }

    const std::string blockText = (kS > 1 ? std::to_string(kS) + " reduction groups x " : std::string()) +
                                  (kMma ? std::to_string(tl.wy) + "x" + std::to_string(tl.wx()) + " warps of tensor-core MMAs"
                                        : "spatial(" + std::to_string(kTY) + "," + std::to_string(kTX) + ")");
    // A phase: every thread of the block runs body(tAll, g, t) (kernel_ir.h: Threads loops): tAll
    // the block's thread (per-thread buffers' row), g its reduction group, t its thread in the
    // group (without a split: g = 0, t = tAll).
    auto threads = [&](const std::function<Stmt(const Expr& tAll, const Expr& g, const Expr& t)>& body) {
        const Var ta = k.newVar("t");
        Stmt b;
        if (kS == 1) {
            b = body(varRef(ta), intImm(0), varRef(ta));
        } else {
            const Var gv = k.newVar("kg"), tv = k.newVar("tg");
            b = let(gv, varRef(ta) / intImm(kThreads),
                    let(tv, varRef(ta) % intImm(kThreads), body(varRef(ta), varRef(gv), varRef(tv))));
        }
        return forLoop(ta, intImm(kAll), b, ForKind::Threads, 0, "block = " + blockText);
    };
    // Shared row of reduction index kk of group g's stage.
    auto sRow = [&](const Expr& g, const Expr& kk) { return kS == 1 ? kk : g * intImm(kBK) + kk; };
    // First reduction index of step k0 of group g.
    auto stepBase = [&](const Expr& k0, const Expr& g) { return (kS == 1 ? k0 : k0 * intImm(kS) + g) * intImm(kBK); };
    // Whether the staged reduction indices can pass K (ragged last step, or groups past the end).
    const bool kGuard = kStepsG * kS * kBK > s.K;
    // body(ty, tx) with ty = t / 16 and tx = t % 16 bound by Lets.
    auto withYX = [&](const Expr& t, const std::function<Stmt(const Expr&, const Expr&)>& body) {
        const Var ty = k.newVar("ty"), tx = k.newVar("tx");
        return let(ty, t / intImm(kTX), let(tx, t % intImm(kTX), body(varRef(ty), varRef(tx))));
    };
    auto unrolled = [&](const std::string& hint, std::int64_t n, const std::function<Stmt(const Expr&)>& body) {
        return loopOver(k, hint, intImm(n), ForKind::Unroll, body);
    };

    Stmt body = emitMappedLoops(k, plan, gridShape, [&](const std::vector<Expr>& g) {
        const std::vector<Expr> bidx(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(nb));
        const Expr rowBase = g[nb] * intImm(kBM), colBase = g[nb + 1] * intImm(kBN);
        const std::vector<Expr> aB = broadcastIndex(bidx, s.aBatch), bB = broadcastIndex(bidx, s.bBatch);
        auto aAt = [&](const Expr& i, const Expr& kk) {
            std::vector<Expr> idx = aB;
            if (s.transA) {
                idx.push_back(kk);
                idx.push_back(i);
            } else {
                idx.push_back(i);
                idx.push_back(kk);
            }
            return cast(load(s.a, aT, idx), accT);
        };
        // Column j as (matrix, column within it) of a column-grouped B and Y (spec.colGroup).
        const std::int64_t groups = s.colGroup > 0 ? s.N / s.colGroup : 0;
        auto groupOf = [&](const Expr& j) { return groups == 1 ? intImm(0) : j / intImm(s.colGroup); };
        auto inGroup = [&](const Expr& j) { return groups == 1 ? j : j % intImm(s.colGroup); };
        auto bAt = [&](const Expr& kk, const Expr& j) {
            if (s.bElement) return cast(s.bElement(kk, j), accT);
            std::vector<Expr> idx = bB;
            if (s.colGroup > 0) {
                idx = {groupOf(j), kk, inGroup(j)};
            } else if (s.transB) {
                idx.push_back(j);
                idx.push_back(kk);
            } else {
                idx.push_back(kk);
                idx.push_back(j);
            }
            return cast(load(s.b, bT, idx), accT);
        };

        // Zero the accumulator.
        Stmt init = threads([&](const Expr& ta, const Expr&, const Expr&) {
            return unrolled("i", kA1, [&](const Expr& i) {
                return unrolled("j", kA2, [&](const Expr& j) { return store(acc, {ta, i, j}, zero); });
            });
        });

        // Stage one operand tile of `rows` x kBK (rows = m or n) at k offset k0 into `dst`[kk][row].
        // kContiguous: the operand's k dimension is contiguous in memory, so consecutive threads
        // take consecutive kk (8 per row); otherwise consecutive rows.
        // Element r of thread t's share of a tile: its (row, kk) in the tile.
        auto coords = [&](const Expr& t, const Expr& r, bool kContiguous, std::int64_t rows, Expr* row, Expr* kk) {
            if (kContiguous && kBK > 8 && rows % 32 == 0) {
                // A warp stores 8 consecutive kk of 4 consecutive rows (as with BK = 8): with 32
                // kk of one row the padded rows (stride = 4 mod 32 floats) would meet 4-way bank
                // conflicts. Element r: k chunk r % (BK/8), row group r / (BK/8).
                const std::int64_t chunks = kBK / 8;
                *kk = t % intImm(8) + (r % intImm(chunks)) * intImm(8);
                *row = t / intImm(8) + (r / intImm(chunks)) * intImm(32);
            } else if (kContiguous) {
                *kk = t % intImm(kBK);
                *row = t / intImm(kBK) + r * intImm(kThreads / kBK);
            } else {
                *row = t % intImm(rows);
                *kk = t / intImm(rows) + r * intImm(kThreads / rows);
            }
        };
        // The guarded global value of each element of thread t's share, given to `sink`.
        using Sink = std::function<Stmt(const Expr& r, const Expr& kk, const Expr& row, const Expr& v)>;
        // The staging guard of element (global row or column gRow, reduction index gK); null: none.
        auto guardOf = [&](const Expr& gRow, const Expr& gK, std::int64_t rows, std::int64_t extent) {
            Expr cond;
            if (extent % rows != 0) cond = gRow < intImm(extent);
            if (kGuard) cond = andMaybe(cond, gK < intImm(s.K));
            return cond;
        };
        auto stageWith = [&](const Expr& t, const Expr& kBase, bool kContiguous, const Expr& base, std::int64_t rows,
                             std::int64_t extent, const std::function<Expr(const Expr& row, const Expr& kk)>& at,
                             const Sink& sink) {
            const std::int64_t perThread = rows * kBK / kThreads;  // 4
            return unrolled("r", perThread, [&](const Expr& r) {
                Expr row, kk;
                coords(t, r, kContiguous, rows, &row, &kk);
                const Expr gRow = base + row, gK = kBase + kk;
                const Expr cond = guardOf(gRow, gK, rows, extent);
                Expr v = at(gRow, gK);
                if (cond) v = select(cond, v, zero);
                return sink(r, kk, row, v);
            });
        };
        auto stage = [&](const Expr& t, const Expr& g, const Expr& kBase, int dst, bool kContiguous, const Expr& base,
                         std::int64_t rows, std::int64_t extent,
                         const std::function<Expr(const Expr& row, const Expr& kk)>& at) {
            return stageWith(t, kBase, kContiguous, base, rows, extent, at,
                             [&](const Expr&, const Expr& kk, const Expr& row, const Expr& v) {
                                 return store(dst, {sRow(g, kk), row}, v);
                             });
        };

        // B runs (kRun > 1): element e of thread t's share is column col0 + e % kRun of reduction
        // index kk, run u = e / kRun being the block-wide run t + u * kThreads (kBN / kRun runs
        // per tile row).
        const std::int64_t kBPer = kBN * kBK / kThreads;  // B elements per thread
        auto runCoords = [&](const Expr& t, std::int64_t u, Expr* col0, Expr* kk) {
            const Expr f = t + intImm(u * kThreads);
            *kk = f / intImm(kBN / kRun);
            *col0 = (f % intImm(kBN / kRun)) * intImm(kRun);
        };
        // Every element of thread t's runs at step base kBase, given to sink(e, kk, col, value).
        auto stageRuns = [&](const Expr& t, const Expr& kBase, const Sink& sink) {
            std::vector<Stmt> st;
            for (std::int64_t u = 0; u < kBPer / kRun; ++u) {
                Expr col0, kk;
                runCoords(t, u, &col0, &kk);
                const Expr gCol = colBase + col0, gK = kBase + kk;
                const Expr cond = guardOf(gCol, gK, kBN, s.N);
                Stmt produce = s.bRunElements(gK, gCol, [&](std::int64_t r, const Expr& v) {
                    return sink(intImm(u * kRun + r), kk, col0 + intImm(r), cast(v, accT));
                });
                if (cond) {
                    std::vector<Stmt> zeros;
                    for (std::int64_t r = 0; r < kRun; ++r) zeros.push_back(sink(intImm(u * kRun + r), kk, col0 + intImm(r), zero));
                    produce = ifThen(cond, produce, seq(zeros));
                }
                st.push_back(produce);
            }
            return seq(st);
        };
        auto stageB = [&](const Expr& t, const Expr& g, const Expr& kBase) {
            if (kRuns)
                return stageRuns(t, kBase, [&](const Expr&, const Expr& kk, const Expr& col, const Expr& v) {
                    return store(Bs, {sRow(g, kk), col}, v);
                });
            return stage(t, g, kBase, Bs, s.transB, colBase, kBN, s.N, [&](const Expr& j, const Expr& kk) { return bAt(kk, j); });
        };

        const Var k0 = k.newVar("k0");
        Stmt loadPhase = threads([&](const Expr&, const Expr& g, const Expr& t) {
            const Expr kBase = stepBase(varRef(k0), g);
            return seq({stage(t, g, kBase, As, !s.transA, rowBase, kBM, s.M, [&](const Expr& i, const Expr& kk) { return aAt(i, kk); }),
                        stageB(t, g, kBase)});
        });
        // Tensor cores: warp w = t / 32 (rows wr = w / wx, columns wc = w % wx) runs, per 8
        // reduction indices, an m16n8k8 MMA for each of its mt x nt tiles, straight from the stages.
        // Only the first wy * wx warps compute (a condition uniform within each warp).
        // body(lane, wr, wc) for thread t of a computing warp (lane, warp row and column bound by Lets).
        auto inWarp = [&](const Expr& t, const std::function<Stmt(const Expr&, const Expr&, const Expr&)>& body) {
            const Var lane = k.newVar("lane"), wr = k.newVar("wr"), wc = k.newVar("wc");
            const std::int64_t warps = tl.wy * tl.wx();
            Stmt st = body(varRef(lane), varRef(wr), varRef(wc));
            if (warps * 32 < kThreads) st = ifThen(t < intImm(warps * 32), st);
            return let(lane, t % intImm(32), let(wr, t / intImm(32) / intImm(tl.wx()), let(wc, t / intImm(32) % intImm(tl.wx()), st)));
        };
        auto mmaBody = [&](const Expr& ta, const Expr& g, const Expr& t) {
            return inWarp(t, [&](const Expr& lane, const Expr& wr, const Expr& wc) {
                return unrolled("ks", kBK / 8, [&](const Expr& ks) {
                    return unrolled("mi", kMt, [&](const Expr& mi) {
                        return unrolled("ni", kNt, [&](const Expr& ni) {
                            MmaInfo m;
                            m.precision = tl.mmaPrecision;
                            m.lane = lane;
                            m.a.buffer = As;  // A(m, k) = As[k][m]
                            m.a.base = {sRow(g, ks * intImm(8)), wr * intImm(kMt * 16) + mi * intImm(16)};
                            m.a.stride = {{0, 1}, {1, 0}};
                            m.b.buffer = Bs;  // B(k, n) = Bs[k][n]
                            m.b.base = {sRow(g, ks * intImm(8)), wc * intImm(kNt * 8) + ni * intImm(8)};
                            m.b.stride = {{1, 0}, {0, 1}};
                            return mma(acc, {ta, mi * intImm(kNt) + ni, intImm(0)}, std::move(m));
                        });
                    });
                });
            });
        };
        auto computeBody = [&](const Expr& ta, const Expr& g, const Expr& t) {
            if (kMma) return mmaBody(ta, g, t);
            return withYX(t, [&](const Expr& ty, const Expr& tx) {
                Stmt steps = unrolled("kk", kBK, [&](const Expr& kk) {
                    auto fetch = [&](int reg, int tileBuf, const Expr& lane, const DimSplit& d) {
                        return unrolled("g", d.groups, [&](const Expr& gi) {
                            return unrolled("q", d.group, [&](const Expr& q) {
                                return store(reg, {gi * intImm(d.group) + q},
                                             load(tileBuf, accT, {sRow(g, kk), gi * intImm(d.stride) + lane * intImm(d.group) + q}));
                            });
                        });
                    };
                    Stmt fma = unrolled("i", kTM, [&](const Expr& i) {
                        return unrolled("j", kTN, [&](const Expr& j) {
                            const std::vector<Expr> idx{ta, i, j};
                            return store(acc, idx, load(acc, accT, idx) + load(aReg, accT, {i}) * load(bReg, accT, {j}));
                        });
                    });
                    return seq({fetch(aReg, As, ty, dM), fetch(bReg, Bs, tx, dN), fma});
                });
                return allocate(aReg, allocate(bReg, steps));
            });
        };
        Stmt compute = threads(computeBody);
        const std::string splitText = kS > 1 ? " per group, " + std::to_string(kS) + " groups interleaved" : "";
        Stmt mainLoop = forLoop(k0, intImm(kStepsG), seq({loadPhase, barrier(), compute, barrier()}), ForKind::Serial,
                                0, "k in steps of " + std::to_string(kBK) + splitText);
        Stmt prologue;
        if (s.prefetch) {
            // Register prefetch: step k0 + 1's elements are loaded (and B produced) into per-thread
            // registers in the same phase that computes step k0 from shared memory, so their
            // latency overlaps the FMAs; the next iteration moves them to shared memory.
            auto fetchGlobal = [&](const Expr& ta, const Expr& t, const Expr& kB) {
                Stmt bPart;
                if (rawB) {
                    // The raw values of each B element (guarded like the element), combined at the put.
                    bPart = unrolled("r", kBN * kBK / kThreads, [&](const Expr& r) {
                        Expr row, kk;
                        coords(t, r, s.transB, kBN, &row, &kk);
                        const Expr gCol = colBase + row, gK = kB + kk;
                        const Expr cond = guardOf(gCol, gK, kBN, s.N);
                        std::vector<Stmt> st;
                        for (std::int64_t q = 0; q < kRaw; ++q) {
                            Expr v = cast(s.bRaw(gK, gCol, q), accT);
                            if (cond) v = select(cond, v, zero);
                            st.push_back(store(preB, {ta, r * intImm(kRaw) + intImm(q)}, v));
                        }
                        return seq(st);
                    });
                } else if (kRuns) {
                    bPart = stageRuns(t, kB, [&](const Expr& e, const Expr&, const Expr&, const Expr& v) { return store(preB, {ta, e}, v); });
                } else {
                    bPart = stageWith(t, kB, s.transB, colBase, kBN, s.N, [&](const Expr& j, const Expr& kk) { return bAt(kk, j); },
                                      [&](const Expr& r, const Expr&, const Expr&, const Expr& v) { return store(preB, {ta, r}, v); });
                }
                return seq({stageWith(t, kB, !s.transA, rowBase, kBM, s.M, [&](const Expr& i, const Expr& kk) { return aAt(i, kk); },
                                      [&](const Expr& r, const Expr&, const Expr&, const Expr& v) { return store(preA, {ta, r}, v); }),
                            bPart});
            };
            auto toShared = [&](const Expr& ta, const Expr& g, const Expr& t, int dst, int reg, bool kContiguous, std::int64_t rows) {
                return unrolled("r", rows * kBK / kThreads, [&](const Expr& r) {
                    Expr row, kk;
                    coords(t, r, kContiguous, rows, &row, &kk);
                    return store(dst, {sRow(g, kk), row}, load(reg, accT, {ta, r}));
                });
            };
            const Var k1 = k.newVar("k0");
            // The B elements from their raw values (rawB), at the put of step k1.
            auto combineToShared = [&](const Expr& ta, const Expr& g, const Expr& t) {
                return unrolled("r", kBN * kBK / kThreads, [&](const Expr& r) {
                    Expr row, kk;
                    coords(t, r, s.transB, kBN, &row, &kk);
                    const Expr gCol = colBase + row, gK = stepBase(varRef(k1), g) + kk;
                    const Expr cond = guardOf(gCol, gK, kBN, s.N);
                    Expr v = cast(s.bCombine(gK, gCol, [&](std::int64_t q) { return load(preB, accT, {ta, r * intImm(kRaw) + intImm(q)}); }),
                                  accT);
                    if (cond) v = select(cond, v, zero);
                    return store(Bs, {sRow(g, kk), row}, v);
                });
            };
            prologue = threads([&](const Expr& ta, const Expr& g, const Expr& t) { return fetchGlobal(ta, t, stepBase(intImm(0), g)); });
            Stmt put = threads([&](const Expr& ta, const Expr& g, const Expr& t) {
                Stmt bPut;
                if (rawB) {
                    bPut = combineToShared(ta, g, t);
                } else if (kRuns) {
                    std::vector<Stmt> st;
                    for (std::int64_t e = 0; e < kBPer; ++e) {
                        Expr col0, kk;
                        runCoords(t, e / kRun, &col0, &kk);
                        st.push_back(store(Bs, {sRow(g, kk), col0 + intImm(e % kRun)}, load(preB, accT, {ta, intImm(e)})));
                    }
                    bPut = seq(st);
                } else {
                    bPut = toShared(ta, g, t, Bs, preB, s.transB, kBN);
                }
                return seq({toShared(ta, g, t, As, preA, !s.transA, kBM), bPut});
            });
            Stmt next = threads([&](const Expr& ta, const Expr& g, const Expr& t) {
                return seq({ifThen(varRef(k1) + 1 < intImm(kStepsG), fetchGlobal(ta, t, stepBase(varRef(k1) + 1, g))), computeBody(ta, g, t)});
            });
            mainLoop = forLoop(k1, intImm(kStepsG), seq({put, barrier(), next, barrier()}), ForKind::Serial, 0,
                               "k in steps of " + std::to_string(kBK) + splitText + ", the next step prefetched into registers" +
                                   (rawB ? " (B as raw loads, combined at the store to shared memory)" : ""));
        }

        // Epilogue: one thread's 8 x 8 results.
        auto result = [&](const Expr& i, const Expr& j, const Expr& v) {
            Expr r = s.alpha == 1.0 ? v : v * constant(s.alpha, accT);
            if (s.c >= 0 && s.beta != 0.0) {
                const Expr c = cast(load(s.c, cT, broadcastIndex({i, j}, s.cShape)), accT);
                r = r + (s.beta == 1.0 ? c : c * constant(s.beta, accT));
            }
            std::vector<Expr> idx = bidx;
            if (s.colGroup > 0) {
                idx = {groupOf(j), i, inGroup(j)};
            } else {
                idx.push_back(i);
                idx.push_back(j);
            }
            return store(s.y, idx, cast(r, yT));
        };
        // Partial sums of groups 1.. (split reduction), see Rs.
        const std::int64_t kRowW = kBM + kPad;
        auto redStore = [&](const Expr& f, const Expr& v) {
            return Rs >= 0 ? store(Rs, {f}, v) : store(As, {f / intImm(kRowW), f % intImm(kRowW)}, v);
        };
        auto redLoad = [&](const Expr& f) {
            return Rs >= 0 ? load(Rs, accT, {f}) : load(As, accT, {f / intImm(kRowW), f % intImm(kRowW)});
        };
        auto redIndex = [&](const Expr& g1, const Expr& li, const Expr& lj, const Expr& t) {
            return ((g1 * intImm(kA1 * kA2) + li * intImm(kA2) + lj) * intImm(kThreads)) + t;
        };
        Stmt partials;
        if (kS > 1) {
            partials = threads([&](const Expr& ta, const Expr& g, const Expr& t) {
                Stmt st = unrolled("i", kA1, [&](const Expr& i) {
                    return unrolled("j", kA2, [&](const Expr& j) {
                        return redStore(redIndex(g - intImm(1), i, j, t), load(acc, accT, {ta, i, j}));
                    });
                });
                return ifThen(g >= intImm(1), st);
            });
        }
        // One accumulator element (li, lj) of thread t at output (row, col), added to the other
        // groups' partial sums, stored (guarded at the N edge; the callers guard the rows).
        auto storeElement = [&](const Expr& ta, const Expr& t, const Expr& li, const Expr& lj, const Expr& row, const Expr& col) {
            Expr v = load(acc, accT, {ta, li, lj});
            for (std::int64_t g1 = 1; g1 < kS; ++g1) v = v + redLoad(redIndex(intImm(g1 - 1), li, lj, t));
            Stmt st = result(row, col, v);
            return s.N % kBN != 0 ? ifThen(col < intImm(s.N), st) : st;
        };
        auto rowGuard = [&](const Expr& row, Stmt st) { return s.M % kBM != 0 ? ifThen(row < intImm(s.M), st) : st; };
        // MMA tiles: element r of tile (mi, ni) of lane l = 4 g + q of warp (wr, wc) is row
        // wr * 16 mt + 16 mi + g + 8 (r / 2), column wc * 8 nt + 8 ni + 2 q + r % 2.
        auto mmaOut = [&](const Expr& ta, const Expr& t) {
            return inWarp(t, [&](const Expr& lane, const Expr& wr, const Expr& wc) {
                return unrolled("mi", kMt, [&](const Expr& mi) {
                    return unrolled("ni", kNt, [&](const Expr& ni) {
                        return unrolled("r", 4, [&](const Expr& r) {
                            const Expr row = rowBase + wr * intImm(kMt * 16) + mi * intImm(16) + lane / intImm(4) +
                                             (r / intImm(2)) * intImm(8);
                            const Expr col = colBase + wc * intImm(kNt * 8) + ni * intImm(8) + (lane % intImm(4)) * intImm(2) +
                                             r % intImm(2);
                            return rowGuard(row, storeElement(ta, t, mi * intImm(kNt) + ni, r, row, col));
                        });
                    });
                });
            });
        };
        Stmt out = threads([&](const Expr& ta, const Expr& g, const Expr& t) {
            if (kMma) return kS > 1 ? ifThen(g < intImm(1), mmaOut(ta, t)) : mmaOut(ta, t);
            Stmt o = withYX(t, [&](const Expr& ty, const Expr& tx) {
                return unrolled("g", dM.groups, [&](const Expr& gi) {
                    return unrolled("q", dM.group, [&](const Expr& q) {
                        const Expr li = gi * intImm(dM.group) + q;
                        const Expr row = rowBase + gi * intImm(dM.stride) + ty * intImm(dM.group) + q;
                        Stmt cols = unrolled("h", dN.groups, [&](const Expr& hi) {
                            return unrolled("p", dN.group, [&](const Expr& p) {
                                const Expr lj = hi * intImm(dN.group) + p;
                                const Expr col = colBase + hi * intImm(dN.stride) + tx * intImm(dN.group) + p;
                                return storeElement(ta, t, li, lj, row, col);
                            });
                        });
                        return rowGuard(row, cols);
                    });
                });
            });
            return kS > 1 ? ifThen(g < intImm(1), o) : o;
        });
        if (kS > 1) out = seq({partials, barrier(), out});
        auto withRs = [&](Stmt st) { return Rs >= 0 ? allocate(Rs, std::move(st)) : st; };
        if (s.prefetch)
            return allocate(As, allocate(Bs, allocate(acc, allocate(preA, allocate(preB, withRs(seq({init, prologue, mainLoop, out})))))));
        return allocate(As, allocate(Bs, allocate(acc, withRs(seq({init, mainLoop, out})))));
    });

    // The block mapping in full rank (batch dims 1), as a schedule would write it.
    k.mappings.push_back("block = " + blockMapping(nb, tl).str());
    k.notes.push_back("A/B tiles staged in shared memory, BK = " + std::to_string(kBK) + " (tiles " +
                      std::to_string(kBM) + "x" + std::to_string(kBK) + " and " + std::to_string(kBK) + "x" +
                      std::to_string(kBN) + ", rows padded by " + std::to_string(kPad) + ")");
    auto lanes = [](const char* v, const DimSplit& d) {
        std::string r = std::string(v) + "*" + std::to_string(d.group);
        if (d.groups > 1) {
            r += " + {0";
            for (std::int64_t g = 1; g < d.groups; ++g) r += "," + std::to_string(g * d.stride);
            r += "}";
        }
        return r + (d.group > 1 ? " + 0.." + std::to_string(d.group - 1) : "");
    };
    if (kRun > 1)
        k.notes.push_back("B produced in runs of " + std::to_string(kRun) + " consecutive columns of one reduction index per thread "
                          "(loads shared within a run)");
    if (kS > 1)
        k.notes.push_back("reduction split over " + std::to_string(kS) + " groups of " + std::to_string(kThreads) +
                          " threads (" + std::to_string(kAll) + " per block), each with its own shared stage and every " +
                          (kS == 2 ? std::string("2nd") : std::to_string(kS) + "th") + " step; partial sums added in group order at the end");
    if (kMma)
        k.notes.push_back(std::string("tensor cores: ") + std::to_string(tl.wy) + " x " + std::to_string(tl.wx()) +
                          " warps" + (tl.wy * tl.wx() < 8 ? " (of 8; the others only stage)" : std::string()) +
                          ", each " + std::to_string(kMt) + " x " + std::to_string(kNt) +
                          " m16n8 tiles updated by mma.sync m16n8k8 (" + mmaPrecisionName(tl.mmaPrecision) +
                          ") per 8 reduction indices, fragments read from the shared stages");
    else
        k.notes.push_back(std::string("each thread accumulates ") +
                          (kTM == 8 || kTM == 11 || kTM == 18 || (kTM >= 80 && kTM < 90) ? "an " : "a ") +
                          std::to_string(kTM) + "x" + std::to_string(kTN) + " register tile: rows " +
                          lanes("ty", dM) + ", columns " + lanes("tx", dN));
    return body;
}

}  // namespace tessera::lower::detail
