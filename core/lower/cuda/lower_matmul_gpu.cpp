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

namespace {

/// The guarded global value of element r (tile row `row`, reduction index kk) of a thread's share
/// of a staged tile, given to a sink that stores it.
using GemmSink = std::function<Stmt(const Expr& r, const Expr& kk, const Expr& row, const Expr& v)>;

/// "ty*4 + {0,64} + 0..3": the rows (columns) of a thread's register tile, for the kernel notes.
std::string lanesText(const char* v, const DimSplit& d) {
    std::string r = std::string(v) + "*" + std::to_string(d.group);
    if (d.groups > 1) {
        r += " + {0";
        for (std::int64_t g = 1; g < d.groups; ++g) r += "," + std::to_string(g * d.stride);
        r += "}";
    }
    return r + (d.group > 1 ? " + 0.." + std::to_string(d.group - 1) : "");
}

/// One emitGpuGemm call: the constructor derives the tile geometry from the spec, declareBuffers
/// adds the kernel's buffers and each phase function below emits one part of a block's code (file
/// comment). Variables are numbered in creation order, so blockBody runs the phases in a fixed
/// order (that of the generated code).
class GpuGemmEmitter {
public:
    GpuGemmEmitter(Kernel& k, const GpuGemmSpec& s);
    /// The grid loop over the blocks, then the block mapping and the notes.
    Stmt emit();

private:
    using ThreadBody = std::function<Stmt(const Expr& tAll, const Expr& g, const Expr& t)>;

    void declareBuffers();
    Stmt blockBody(const std::vector<Expr>& g);
    Stmt zeroAccumulators();
    Stmt mainLoop();
    Stmt prefetchedMainLoop(Stmt* prologue);
    Stmt epilogue();
    void describe();

    // Building blocks of the phases.
    Stmt threads(const ThreadBody& body);
    Expr sRow(const Expr& g, const Expr& kk) const;
    Expr stepBase(const Expr& k0, const Expr& g) const;
    Stmt withYX(const Expr& t, const std::function<Stmt(const Expr&, const Expr&)>& body);
    Stmt unrolled(const std::string& hint, std::int64_t n, const std::function<Stmt(const Expr&)>& body);
    Expr aAt(const Expr& i, const Expr& kk) const;
    Expr bAt(const Expr& kk, const Expr& j) const;
    Expr groupOf(const Expr& j) const;
    Expr inGroup(const Expr& j) const;
    void coords(const Expr& t, const Expr& r, bool kContiguous, std::int64_t rows, Expr* row, Expr* kk) const;
    Expr guardOf(const Expr& gRow, const Expr& gK, std::int64_t rows, std::int64_t extent) const;
    Stmt stageWith(const Expr& t, const Expr& kBase, bool kContiguous, const Expr& base, std::int64_t rows,
                   std::int64_t extent, const std::function<Expr(const Expr& row, const Expr& kk)>& at, const GemmSink& sink);
    Stmt stage(const Expr& t, const Expr& g, const Expr& kBase, int dst, bool kContiguous, const Expr& base,
               std::int64_t rows, std::int64_t extent, const std::function<Expr(const Expr& row, const Expr& kk)>& at);
    void runCoords(const Expr& t, std::int64_t u, Expr* col0, Expr* kk) const;
    Stmt stageRuns(const Expr& t, const Expr& kBase, const GemmSink& sink);
    Stmt stageB(const Expr& t, const Expr& g, const Expr& kBase);
    Stmt inWarp(const Expr& t, const std::function<Stmt(const Expr&, const Expr&, const Expr&)>& body);
    Stmt mmaStep(const Expr& ta, const Expr& g, const Expr& t);
    Stmt computeStep(const Expr& ta, const Expr& g, const Expr& t);
    Stmt fetchGlobal(const Expr& ta, const Expr& t, const Expr& kB);
    Stmt toShared(const Expr& ta, const Expr& g, const Expr& t, int dst, int reg, bool kContiguous, std::int64_t rows);
    Stmt combineToShared(const Expr& ta, const Expr& g, const Expr& t, const Var& k1);
    Stmt result(const Expr& i, const Expr& j, const Expr& v) const;
    Stmt redStore(const Expr& f, const Expr& v) const;
    Expr redLoad(const Expr& f) const;
    Expr redIndex(const Expr& g1, const Expr& li, const Expr& lj, const Expr& t) const;
    Stmt storeElement(const Expr& ta, const Expr& t, const Expr& li, const Expr& lj, const Expr& row, const Expr& col) const;
    Stmt rowGuard(const Expr& row, Stmt st) const;
    Stmt mmaOut(const Expr& ta, const Expr& t);

    Kernel& k;
    const GpuGemmSpec& s;
    const GpuGemmSpec::Tile& tl;
    const DType accT = DType::F32;
    const Expr zero = floatImm(0.0, accT);
    // Tile geometry (constructor).
    std::size_t nb = 0;
    DType aT = DType::F32, bT = DType::F32, yT = DType::F32, cT = DType::F32;
    std::int64_t kBM = 0, kBN = 0, kBK = 0, kTY = 0, kTX = 0, kTM = 0, kTN = 0;
    std::int64_t kPad = 0;  // floats of padding per shared row
    bool kMma = false;
    std::int64_t kMt = 0, kNt = 0, kA1 = 0, kA2 = 0;
    DimSplit dM, dN;
    std::int64_t kS = 1, kAll = 0, kSteps = 0, kStepsG = 0;
    bool rawB = false;
    std::int64_t kRaw = 1;
    bool kRuns = false;
    std::int64_t kRun = 1;
    bool kGuard = false;
    std::int64_t kBPer = 0;    // B elements per thread
    std::int64_t groups = 0;   // column groups (spec.colGroup)
    std::int64_t kRowW = 0;    // floats per padded As row
    std::string blockText, splitText;
    // Buffers (declareBuffers).
    int As = -1, Bs = -1, Rs = -1, acc = -1, aReg = -1, bReg = -1, preA = -1, preB = -1;
    // The block being emitted (blockBody).
    std::vector<Expr> bidx, aB, bB;
    Expr rowBase, colBase;
};

GpuGemmEmitter::GpuGemmEmitter(Kernel& kernel, const GpuGemmSpec& spec) : k(kernel), s(spec), tl(spec.tile) {
    nb = s.batch.size();
    const auto bufType = [&](int b) { return k.buffers[static_cast<std::size_t>(b)].dtype; };
    aT = bufType(s.a), bT = s.b >= 0 ? bufType(s.b) : accT, yT = bufType(s.y);
    cT = s.c >= 0 ? bufType(s.c) : accT;
    kBM = tl.rows(), kBN = tl.cols(), kBK = tl.bk, kTY = tl.ty, kTX = tl.tx;
    kTM = tl.rm, kTN = tl.rn;
    kPad = tl.pad();
    // Tensor cores (Tile::mma): mt x nt m16n8 tiles per warp; the accumulator is [.., mt * nt, 4]
    // (MMA tile, fragment element) instead of [.., rm, rn].
    kMma = tl.mma;
    kMt = kMma ? tl.mmaRows() : 0, kNt = kMma ? tl.mmaCols() : 0;
    kA1 = kMma ? kMt * kNt : kTM, kA2 = kMma ? 4 : kTN;
    dM = dimSplit(kTY, kTM), dN = dimSplit(kTX, kTN);
    // Split reduction (Tile::splitK): kS groups of kThreads threads, each with its own shared
    // stage (rows g * kBK .. of As and Bs) and every kS-th reduction step.
    kS = tl.splitK, kAll = kThreads * kS;
    kSteps = ceilDiv(s.K, kBK), kStepsG = ceilDiv(kSteps, kS);
    // Raw B prefetch (GpuGemmSpec::bRawCount): raw values per B element kept in registers.
    rawB = s.prefetch && s.bElement && s.bRawCount > 0 && s.bRaw && s.bCombine;
    kRaw = rawB ? s.bRawCount : 1;
    // B runs (GpuGemmSpec::bRun): a thread's B elements in runs of kRun columns of one k; runs of
    // 1 (bRun 1 with bRunElements) give each element through the producer's statement form.
    kRuns = s.bElement && s.bRunElements && !rawB &&
            (s.bRun == 1 ? (tl.cols() * tl.bk) % kThreads == 0 : gpuGemmBRunApplies(tl, s.N, s.bRun));
    kRun = kRuns ? s.bRun : 1;
    // Whether the staged reduction indices can pass K (ragged last step, or groups past the end).
    kGuard = kStepsG * kS * kBK > s.K;
    kBPer = kBN * kBK / kThreads;
    groups = s.colGroup > 0 ? s.N / s.colGroup : 0;
    kRowW = kBM + kPad;
    blockText = (kS > 1 ? std::to_string(kS) + " reduction groups x " : std::string()) +
                (kMma ? std::to_string(tl.wy) + "x" + std::to_string(tl.wx()) + " warps of tensor-core MMAs"
                      : "spatial(" + std::to_string(kTY) + "," + std::to_string(kTX) + ")");
    splitText = kS > 1 ? " per group, " + std::to_string(kS) + " groups interleaved" : "";
}

Stmt GpuGemmEmitter::emit() {
    MappingPlan plan;
    plan.target = Target::Cuda;
    plan.grid = gridMapping(s.batch, s.M, s.N, tl);
    const std::vector<std::int64_t> gridShape = plan.grid.taskShape();
    declareBuffers();
    Stmt body = emitMappedLoops(k, plan, gridShape, [&](const std::vector<Expr>& g) { return blockBody(g); });
    describe();
    return body;
}

void GpuGemmEmitter::declareBuffers() {
    BufferDecl tile;
    tile.dtype = accT;
    tile.scope = MemoryScope::Shared;
    tile.name = "As";
    tile.shape = {kS * kBK, kBM + kPad};
    As = k.addBuffer(tile);
    tile.name = "Bs";
    tile.shape = {kS * kBK, kBN + kPad};
    Bs = k.addBuffer(tile);
    // Partial sums of groups 1.. (split reduction): in As when it is large enough (the loop is
    // done with it by then), else a buffer of their own. Element (group g >= 1, i, j, thread t)
    // at ((g - 1) * kTM * kTN + i * kTN + j) * kThreads + t: consecutive threads, consecutive words.
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
    acc = k.addBuffer(accDecl);
    BufferDecl reg;
    reg.dtype = accT;
    reg.scope = MemoryScope::Local;
    reg.name = "a";
    reg.shape = {kTM};
    aReg = k.addBuffer(reg);
    reg.name = "b";
    reg.shape = {kTN};
    bReg = k.addBuffer(reg);
    if (s.prefetch) {
        BufferDecl pre = accDecl;
        pre.name = "pa";
        pre.shape = {kAll, kBM * kBK / kThreads};
        preA = k.addBuffer(pre);
        pre.name = "pb";
        pre.shape = {kAll, kBN * kBK / kThreads * kRaw};
        preB = k.addBuffer(pre);
    }
}

// A phase: every thread of the block runs body(tAll, g, t) (kernel_ir.h: Threads loops): tAll
// the block's thread (per-thread buffers' row), g its reduction group, t its thread in the
// group (without a split: g = 0, t = tAll).
Stmt GpuGemmEmitter::threads(const ThreadBody& body) {
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
}

// Shared row of reduction index kk of group g's stage.
Expr GpuGemmEmitter::sRow(const Expr& g, const Expr& kk) const { return kS == 1 ? kk : g * intImm(kBK) + kk; }

// First reduction index of step k0 of group g.
Expr GpuGemmEmitter::stepBase(const Expr& k0, const Expr& g) const {
    return (kS == 1 ? k0 : k0 * intImm(kS) + g) * intImm(kBK);
}

// body(ty, tx) with ty = t / 16 and tx = t % 16 bound by Lets.
Stmt GpuGemmEmitter::withYX(const Expr& t, const std::function<Stmt(const Expr&, const Expr&)>& body) {
    const Var ty = k.newVar("ty"), tx = k.newVar("tx");
    return let(ty, t / intImm(kTX), let(tx, t % intImm(kTX), body(varRef(ty), varRef(tx))));
}

Stmt GpuGemmEmitter::unrolled(const std::string& hint, std::int64_t n, const std::function<Stmt(const Expr&)>& body) {
    return loopOver(k, hint, intImm(n), ForKind::Unroll, body);
}

Expr GpuGemmEmitter::aAt(const Expr& i, const Expr& kk) const {
    std::vector<Expr> idx = aB;
    if (s.transA) {
        idx.push_back(kk);
        idx.push_back(i);
    } else {
        idx.push_back(i);
        idx.push_back(kk);
    }
    return cast(load(s.a, aT, idx), accT);
}

// Column j as (matrix, column within it) of a column-grouped B and Y (spec.colGroup).
Expr GpuGemmEmitter::groupOf(const Expr& j) const { return groups == 1 ? intImm(0) : j / intImm(s.colGroup); }
Expr GpuGemmEmitter::inGroup(const Expr& j) const { return groups == 1 ? j : j % intImm(s.colGroup); }

Expr GpuGemmEmitter::bAt(const Expr& kk, const Expr& j) const {
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
}

// Staging one operand tile of `rows` x kBK (rows = m or n) at k offset k0 into `dst`[kk][row].
// kContiguous: the operand's k dimension is contiguous in memory, so consecutive threads
// take consecutive kk (8 per row); otherwise consecutive rows.
// Element r of thread t's share of a tile: its (row, kk) in the tile.
void GpuGemmEmitter::coords(const Expr& t, const Expr& r, bool kContiguous, std::int64_t rows, Expr* row, Expr* kk) const {
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
}

// The staging guard of element (global row or column gRow, reduction index gK); null: none.
Expr GpuGemmEmitter::guardOf(const Expr& gRow, const Expr& gK, std::int64_t rows, std::int64_t extent) const {
    Expr cond;
    if (extent % rows != 0) cond = gRow < intImm(extent);
    if (kGuard) cond = andMaybe(cond, gK < intImm(s.K));
    return cond;
}

Stmt GpuGemmEmitter::stageWith(const Expr& t, const Expr& kBase, bool kContiguous, const Expr& base, std::int64_t rows,
                               std::int64_t extent, const std::function<Expr(const Expr& row, const Expr& kk)>& at,
                               const GemmSink& sink) {
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
}

Stmt GpuGemmEmitter::stage(const Expr& t, const Expr& g, const Expr& kBase, int dst, bool kContiguous, const Expr& base,
                           std::int64_t rows, std::int64_t extent,
                           const std::function<Expr(const Expr& row, const Expr& kk)>& at) {
    return stageWith(t, kBase, kContiguous, base, rows, extent, at,
                     [&](const Expr&, const Expr& kk, const Expr& row, const Expr& v) {
                         return store(dst, {sRow(g, kk), row}, v);
                     });
}

// B runs (kRun > 1): element e of thread t's share is column col0 + e % kRun of reduction
// index kk, run u = e / kRun being the block-wide run t + u * kThreads (kBN / kRun runs
// per tile row).
void GpuGemmEmitter::runCoords(const Expr& t, std::int64_t u, Expr* col0, Expr* kk) const {
    const Expr f = t + intImm(u * kThreads);
    *kk = f / intImm(kBN / kRun);
    *col0 = (f % intImm(kBN / kRun)) * intImm(kRun);
}

// Every element of thread t's runs at step base kBase, given to sink(e, kk, col, value).
Stmt GpuGemmEmitter::stageRuns(const Expr& t, const Expr& kBase, const GemmSink& sink) {
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
}

Stmt GpuGemmEmitter::stageB(const Expr& t, const Expr& g, const Expr& kBase) {
    if (kRuns)
        return stageRuns(t, kBase, [&](const Expr&, const Expr& kk, const Expr& col, const Expr& v) {
            return store(Bs, {sRow(g, kk), col}, v);
        });
    return stage(t, g, kBase, Bs, s.transB, colBase, kBN, s.N, [&](const Expr& j, const Expr& kk) { return bAt(kk, j); });
}

// Tensor cores: warp w = t / 32 (rows wr = w / wx, columns wc = w % wx) runs, per 8
// reduction indices, an m16n8k8 MMA for each of its mt x nt tiles, straight from the stages.
// Only the first wy * wx warps compute (a condition uniform within each warp).
// body(lane, wr, wc) for thread t of a computing warp (lane, warp row and column bound by Lets).
Stmt GpuGemmEmitter::inWarp(const Expr& t, const std::function<Stmt(const Expr&, const Expr&, const Expr&)>& body) {
    const Var lane = k.newVar("lane"), wr = k.newVar("wr"), wc = k.newVar("wc");
    const std::int64_t warps = tl.wy * tl.wx();
    Stmt st = body(varRef(lane), varRef(wr), varRef(wc));
    if (warps * 32 < kThreads) st = ifThen(t < intImm(warps * 32), st);
    return let(lane, t % intImm(32), let(wr, t / intImm(32) / intImm(tl.wx()), let(wc, t / intImm(32) % intImm(tl.wx()), st)));
}

// One reduction step of thread t with tensor cores: the warp's MMAs over the step's kBK indices.
Stmt GpuGemmEmitter::mmaStep(const Expr& ta, const Expr& g, const Expr& t) {
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
}

// One reduction step of thread t from the shared stages: per kk, its a- and b-values into
// registers, then the outer product into its accumulators (or the MMAs).
Stmt GpuGemmEmitter::computeStep(const Expr& ta, const Expr& g, const Expr& t) {
    if (kMma) return mmaStep(ta, g, t);
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
}

Stmt GpuGemmEmitter::zeroAccumulators() {
    return threads([&](const Expr& ta, const Expr&, const Expr&) {
        return unrolled("i", kA1, [&](const Expr& i) {
            return unrolled("j", kA2, [&](const Expr& j) { return store(acc, {ta, i, j}, zero); });
        });
    });
}

// The k-loop: stage the step's A and B tiles into shared memory, barrier, accumulate, barrier.
Stmt GpuGemmEmitter::mainLoop() {
    const Var k0 = k.newVar("k0");
    Stmt loadPhase = threads([&](const Expr&, const Expr& g, const Expr& t) {
        const Expr kBase = stepBase(varRef(k0), g);
        return seq({stage(t, g, kBase, As, !s.transA, rowBase, kBM, s.M, [&](const Expr& i, const Expr& kk) { return aAt(i, kk); }),
                    stageB(t, g, kBase)});
    });
    Stmt compute = threads([&](const Expr& ta, const Expr& g, const Expr& t) { return computeStep(ta, g, t); });
    return forLoop(k0, intImm(kStepsG), seq({loadPhase, barrier(), compute, barrier()}), ForKind::Serial, 0,
                   "k in steps of " + std::to_string(kBK) + splitText);
}

// Register prefetch: step k0 + 1's elements are loaded (and B produced) into per-thread
// registers in the same phase that computes step k0 from shared memory, so their latency
// overlaps the FMAs; the next iteration moves them to shared memory. Thread t's share of step
// base kB into its registers:
Stmt GpuGemmEmitter::fetchGlobal(const Expr& ta, const Expr& t, const Expr& kB) {
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
}

Stmt GpuGemmEmitter::toShared(const Expr& ta, const Expr& g, const Expr& t, int dst, int reg, bool kContiguous,
                              std::int64_t rows) {
    return unrolled("r", rows * kBK / kThreads, [&](const Expr& r) {
        Expr row, kk;
        coords(t, r, kContiguous, rows, &row, &kk);
        return store(dst, {sRow(g, kk), row}, load(reg, accT, {ta, r}));
    });
}

// The B elements from their raw values (rawB), at the put of step k1.
Stmt GpuGemmEmitter::combineToShared(const Expr& ta, const Expr& g, const Expr& t, const Var& k1) {
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
}

// The k-loop with register prefetch: put the registers into shared memory, barrier, fetch the
// next step while accumulating this one, barrier. *prologue fetches step 0.
Stmt GpuGemmEmitter::prefetchedMainLoop(Stmt* prologue) {
    const Var k1 = k.newVar("k0");
    *prologue = threads([&](const Expr& ta, const Expr& g, const Expr& t) { return fetchGlobal(ta, t, stepBase(intImm(0), g)); });
    Stmt put = threads([&](const Expr& ta, const Expr& g, const Expr& t) {
        Stmt bPut;
        if (rawB) {
            bPut = combineToShared(ta, g, t, k1);
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
        return seq({ifThen(varRef(k1) + 1 < intImm(kStepsG), fetchGlobal(ta, t, stepBase(varRef(k1) + 1, g))), computeStep(ta, g, t)});
    });
    return forLoop(k1, intImm(kStepsG), seq({put, barrier(), next, barrier()}), ForKind::Serial, 0,
                   "k in steps of " + std::to_string(kBK) + splitText + ", the next step prefetched into registers" +
                       (rawB ? " (B as raw loads, combined at the store to shared memory)" : ""));
}

// Output element (i, j) of value v: alpha, beta * C, stored in Y's type.
Stmt GpuGemmEmitter::result(const Expr& i, const Expr& j, const Expr& v) const {
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
}

// Partial sums of groups 1.. (split reduction), see Rs.
Stmt GpuGemmEmitter::redStore(const Expr& f, const Expr& v) const {
    return Rs >= 0 ? store(Rs, {f}, v) : store(As, {f / intImm(kRowW), f % intImm(kRowW)}, v);
}
Expr GpuGemmEmitter::redLoad(const Expr& f) const {
    return Rs >= 0 ? load(Rs, accT, {f}) : load(As, accT, {f / intImm(kRowW), f % intImm(kRowW)});
}
Expr GpuGemmEmitter::redIndex(const Expr& g1, const Expr& li, const Expr& lj, const Expr& t) const {
    return ((g1 * intImm(kA1 * kA2) + li * intImm(kA2) + lj) * intImm(kThreads)) + t;
}

// One accumulator element (li, lj) of thread t at output (row, col), added to the other
// groups' partial sums, stored (guarded at the N edge; the callers guard the rows).
Stmt GpuGemmEmitter::storeElement(const Expr& ta, const Expr& t, const Expr& li, const Expr& lj, const Expr& row,
                                  const Expr& col) const {
    Expr v = load(acc, accT, {ta, li, lj});
    for (std::int64_t g1 = 1; g1 < kS; ++g1) v = v + redLoad(redIndex(intImm(g1 - 1), li, lj, t));
    Stmt st = result(row, col, v);
    return s.N % kBN != 0 ? ifThen(col < intImm(s.N), st) : st;
}

Stmt GpuGemmEmitter::rowGuard(const Expr& row, Stmt st) const { return s.M % kBM != 0 ? ifThen(row < intImm(s.M), st) : st; }

// MMA tiles: element r of tile (mi, ni) of lane l = 4 g + q of warp (wr, wc) is row
// wr * 16 mt + 16 mi + g + 8 (r / 2), column wc * 8 nt + 8 ni + 2 q + r % 2.
Stmt GpuGemmEmitter::mmaOut(const Expr& ta, const Expr& t) {
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
}

// Epilogue: groups 1.. hand their partial sums to group 0 (split reduction), whose threads
// store their results (a thread's 8 x 8 by default).
Stmt GpuGemmEmitter::epilogue() {
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
    return out;
}

// One block (grid task g): zero the accumulators, the k-loop, the epilogue.
Stmt GpuGemmEmitter::blockBody(const std::vector<Expr>& g) {
    bidx.assign(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(nb));
    rowBase = g[nb] * intImm(kBM), colBase = g[nb + 1] * intImm(kBN);
    aB = broadcastIndex(bidx, s.aBatch), bB = broadcastIndex(bidx, s.bBatch);
    Stmt init = zeroAccumulators();
    // The plain loop is built even when the prefetched one replaces it: its variables are part
    // of the numbering the generated names follow.
    Stmt loop = mainLoop();
    Stmt prologue;
    if (s.prefetch) loop = prefetchedMainLoop(&prologue);
    Stmt out = epilogue();
    auto withRs = [&](Stmt st) { return Rs >= 0 ? allocate(Rs, std::move(st)) : st; };
    if (s.prefetch)
        return allocate(As, allocate(Bs, allocate(acc, allocate(preA, allocate(preB, withRs(seq({init, prologue, loop, out})))))));
    return allocate(As, allocate(Bs, allocate(acc, withRs(seq({init, loop, out})))));
}

void GpuGemmEmitter::describe() {
    // The block mapping in full rank (batch dims 1), as a schedule would write it.
    k.mappings.push_back("block = " + blockMapping(nb, tl).str());
    k.notes.push_back("A/B tiles staged in shared memory, BK = " + std::to_string(kBK) + " (tiles " +
                      std::to_string(kBM) + "x" + std::to_string(kBK) + " and " + std::to_string(kBK) + "x" +
                      std::to_string(kBN) + ", rows padded by " + std::to_string(kPad) + ")");
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
                          lanesText("ty", dM) + ", columns " + lanesText("tx", dN));
}

}  // namespace

Stmt emitGpuGemm(Kernel& k, const GpuGemmSpec& s) { return GpuGemmEmitter(k, s).emit(); }

}  // namespace tessera::lower::detail
