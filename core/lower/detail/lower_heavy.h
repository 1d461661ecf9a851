#pragma once
/// @file
/// Compute-heavy lowering templates (internal to core/lower; not a public API): MatMul, Gemm,
/// Conv, pooling, reductions, Softmax/LogSoftmax, LayerNormalization, BatchNormalization,
/// ArgMax/ArgMin. lower_heavy_registry.cpp puts them in the template table.
///
/// Tiled templates (MatMul, Gemm, Conv, pooling) read their task mapping as "outer factors x tile":
/// the longest run of unprojected `repeat` factors at the end of grid * block is the *tile* (its
/// task shape, one Local accumulator per tile, loops chosen by the template); the factors before
/// it map tiles to workers exactly as emitMappedLoops does (the outermost worker loop is the
/// Parallel one). A schedule that ends in a spatial factor gives 1-element tiles (still correct).
/// Tiles larger than the template's register/stack budget are split into sub-tiles by serial
/// loops. Edge tiles (extent not divisible by the tile) take a guarded copy of the tile code
/// with `min()` extents, so full tiles keep constant trip counts.
///
/// Thread rules: as core/lower/lower.h (pure functions).

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/lower/detail/lower_util.h"

namespace tessera::lower::detail {

/// One (sub-)tile as the tile body sees it.
struct TileView {
    std::vector<Expr> origin;        ///< per dim: first index of the tile
    std::vector<Expr> extent;        ///< per dim: IntImm(size) for a full tile, else an expression <= size
    std::vector<std::int64_t> size;  ///< per dim: the tile's allocated extent (upper bound of extent)
    bool full = true;                ///< every extent is its constant size
};

/// Splits `plan` into outer factors and tile (see file comment) and emits: the outer loops over
/// tile counts ceil(extents / tile) (emitMappedLoops), serial sub-tile loops where the tile exceeds
/// `maxTile` (a value <= 0 = no limit), and per sub-tile `body` (twice when edges are possible: a
/// full-tile copy and a guarded partial copy). Records "grid = ..." / "block = ..." with the whole
/// plan (so a default mapping read back as a schedule reproduces the kernel) and a note on the tile.
Stmt emitTiledLoops(Kernel& k, const MappingPlan& plan, const std::vector<std::int64_t>& extents,
                    const std::vector<std::int64_t>& maxTile, const std::function<Stmt(const TileView&)>& body);

/// The default tiled mapping: spatial over tile counts (ranks as given, empty = row-major) times
/// repeat(tile) (attrs "." so the text stays short).
MappingPlan tiledMapping(const std::vector<std::int64_t>& extents, const std::vector<std::int64_t>& tile,
                         const std::vector<int>& ranks = {});

/// Accumulator type for an element type: f32 for f16/bf16, the type itself otherwise.
DType accumulatorType(DType t);

/// A loop over [0, extent) whose body gets the index expression; no loop at all (index 0) when
/// the extent is the constant 1.
Stmt loopOver(Kernel& k, const std::string& hint, const Expr& extent, ForKind kind,
              const std::function<Stmt(const Expr&)>& body, std::int64_t factor = 0);

/// Loop kind for a tile loop of extent e: Unroll (full) when constant and small, Serial otherwise.
ForKind unrollKind(const Expr& extent, std::int64_t maxUnroll = 16);

/// Matmul micro-kernel over one tile: out(i, j) = sum_k a(i, k) * b(k, j) for i in
/// [i0, i0 + mExt), j in [j0, j0 + nExt). `a`, `b` return loads already in the accumulator type.
struct GemmTileSpec {
    std::int64_t K = 1;
    DType acc = DType::F32;
    std::function<Expr(const Expr& i, const Expr& k)> a;
    std::function<Expr(const Expr& k, const Expr& j)> b;
    /// Epilogue: the store of one result (accumulator value `v`, in acc type) at (i, j).
    std::function<Stmt(const Expr& i, const Expr& j, const Expr& v)> store;
    /// Dot form: both a and b contiguous in k (k innermost, split into `lanes` partial sums);
    /// otherwise the axpy form (k outer, j innermost and vectorised).
    bool dotForm = false;
    std::int64_t lanes = 16;
};
Stmt emitGemmTile(Kernel& k, const GemmTileSpec& s, const Expr& i0, const Expr& j0, const Expr& mExt,
                  const Expr& nExt, std::int64_t tm, std::int64_t tn);

/// The CUDA GEMM template (lower_matmul_gpu.cpp), the GPU default of MatMul, Gemm and pointwise
/// Conv (lower_conv.cpp, with GpuGemmSpec::colGroup): 128 x 128
/// output tiles per block (grid = spatial(batch..., ceil(M/128), ceil(N/128))), 256 threads per
/// block each computing an 8 x 8 register tile (block = repeat(2,2) * spatial(16,16) *
/// repeat(4,4): a thread's rows are ty*4 + {0, 64} + 0..3 and its columns tx*4 + {0, 64} + 0..3,
/// so the 16 threads of a half warp read 64 consecutive floats of a shared row), K stepped by 8
/// with the A tile (transposed, k-major) and the B tile staged in shared memory, and a per-thread
/// f32 accumulator (BufferDecl::perThread). Operands are f32/f16/bf16 (converted to f32 when
/// staged); the result is stored in the output's dtype.
inline constexpr std::int64_t kGpuGemmMinExtent = 64;  ///< M and N below this keep the default path

/// What emitGpuGemm reads and writes: the operands as buffers of the kernel and their layout.
struct GpuGemmSpec {
    int a = -1, b = -1, y = -1;
    int c = -1;                                ///< Gemm's C (broadcast to [M, N]); -1 without
    std::vector<std::int64_t> batch;           ///< output batch dims (MatMul); empty for Gemm
    std::vector<std::int64_t> aBatch, bBatch;  ///< A's and B's batch dims (numpy-broadcast to batch)
    std::int64_t M = 1, N = 1, K = 1;
    bool transA = false;                       ///< A stored [K, M] (else [.., M, K])
    bool transB = false;                       ///< B stored [N, K] (else [.., K, N])
    double alpha = 1.0, beta = 1.0;            ///< Y = alpha * A B + beta * C
    std::vector<std::int64_t> cShape;          ///< C's shape (rank <= 2)
    /// Column groups (pointwise Conv as a GEMM): when > 0, the N columns are N / colGroup matrices
    /// of colGroup columns each, column j being column j % colGroup of matrix j / colGroup; B is
    /// then stored [N / colGroup, K, colGroup] and Y [N / colGroup, M, colGroup] (a batch of images
    /// flattened into the columns, so small images still fill 128-column tiles). N must be a
    /// multiple of colGroup, batch empty and transB false. 0: B and Y are plain [.., K, N] and
    /// [.., M, N].
    std::int64_t colGroup = 0;
    /// Block tile; the default is the 128 x 128 x 8 template described above.
    struct Tile {
        std::int64_t ty = 16, tx = 16;  ///< threads per block along rows / columns (ty * tx = 256)
        std::int64_t rm = 8, rn = 8;    ///< results per thread along rows / columns
        std::int64_t bk = 8;            ///< reduction step staged in shared memory per iteration
        /// Split reduction (1, 2 or 4): the block has splitK groups of ty * tx = 256 threads, each
        /// with its own shared A/B stage (splitK x the shared memory of one) and accumulators for
        /// the whole output tile; group g takes the reduction steps g, g + splitK, g + 2 splitK ...
        /// and at the end groups 1.. write their partial sums to shared memory, where group 0
        /// adds them to its own in the fixed order 1, 2, 3 (deterministic) and stores the result.
        /// More warps per SM for GEMMs with few output tiles and long reductions.
        std::int64_t splitK = 1;
        /// Tensor-core compute (gpuGemmMmaTileValid): instead of each thread's rm x rn FMAs, the
        /// first wy * wx() <= 8 warps of a group, `wy` along the rows by wx() along the columns,
        /// each own a rows() / wy x cols() / wx() part of the tile (warps past wy * wx() only
        /// stage operands) as m16n8 tiles and update it with warp
        /// MMAs (kernel_ir.h, StmtKind::Mma, m16n8k8) of this precision, reading A and B straight
        /// from the shared stages (rows padded by 8 floats then: conflict-free fragment loads).
        /// ty, tx, rm, rn then only give the tile's shape (rows(), cols()) and the staging.
        /// Block mapping: spatial(wy, 8 / wy) * repeat(2 * mt, nt) * spatial(8, 4) * repeat(1, 2)
        /// (mt, nt: m16n8 tiles per warp along rows / columns), the MMA's accumulator layout.
        bool mma = false;
        MmaPrecision mmaPrecision = MmaPrecision::Tf32x3;
        std::int64_t wy = 4;
        std::int64_t wxSet = 0;  ///< warps along the columns; 0: 8 / wy (wy * wx <= 8; the other warps only stage)
        std::int64_t wx() const { return wxSet > 0 ? wxSet : 8 / wy; }
        std::int64_t mmaRows() const { return rows() / (16 * wy); }  ///< mt: m16 tiles per warp along rows
        std::int64_t mmaCols() const { return cols() / (8 * wx()); } ///< nt: n8 tiles per warp along columns
        /// Floats of padding per shared row: 8 with MMA (fragment loads conflict-free), else 4.
        std::int64_t pad() const { return mma ? 8 : 4; }
        std::int64_t rows() const { return ty * rm; }
        std::int64_t cols() const { return tx * rn; }
        std::int64_t threads() const { return ty * tx * splitK; }  ///< threads per block
    } tile;
    /// Optional B producer (prologue fusion, Hidet-style): when set, the B tile's element at
    /// reduction index `k` and column `j` (global indices, both inside [0, K) x [0, N): the
    /// staging guards them) is this expression instead of a load of `b` (which may then be -1;
    /// colGroup still decides Y's layout). The expression may read any buffer of the kernel; it
    /// is evaluated once per (k, j) per block row of M tiles, i.e. ceil(M / tile.rows()) times.
    std::function<Expr(const Expr& k, const Expr& j)> bElement;
    /// Register prefetch: step k0 + 1's tile elements are loaded (and B produced) into per-thread
    /// registers while step k0 is computed from shared memory, then stored to shared memory at the
    /// top of the next step (one extra register per staged element). Off: the plain
    /// load-barrier-compute-barrier loop described above.
    bool prefetch = false;
    /// Split B producer for register prefetch (used only with prefetch and bElement): when
    /// bRawCount > 0, the prefetch keeps bRawCount raw values per B element in registers,
    /// bRaw(k, j, q) for q in [0, bRawCount) (typically the global loads of the producer, each
    /// already guarded so that it reads only valid addresses), and the element is formed from
    /// them by bCombine(k, j, raw) only when it is stored to shared memory at the top of the next
    /// step, so no warp waits for those loads inside the step that issued them. bCombine(k, j,
    /// q -> bRaw(k, j, q)) must equal bElement(k, j). Costs bRawCount - 1 extra registers per
    /// staged B element.
    std::int64_t bRawCount = 0;
    std::function<Expr(const Expr& k, const Expr& j, std::int64_t q)> bRaw;
    std::function<Expr(const Expr& k, const Expr& j, const std::function<Expr(std::int64_t q)>& raw)> bCombine;
    /// Runs of B elements (with bElement, not with the raw prefetch): when bRun > 1 and
    /// bRunElements is set and gpuGemmBRunApplies(tile, N, bRun), each thread produces its B
    /// elements in runs of bRun consecutive columns of one reduction index (a run starts at a
    /// column that is a multiple of bRun; consecutive threads take consecutive runs), instead of
    /// one column for all its reduction indices, so a producer can share loads between the run's
    /// elements (a depthwise conv's weights, and the input taps that neighbouring pixels share).
    /// bRunElements(k, j0, sink) is a statement that calls sink(r, value) once for each r in
    /// [0, bRun) with the value of element (k, j0 + r), which must equal bElement(k, j0 + r); the
    /// template runs it only for runs inside [0, K) x [0, N) (zero elsewhere), so it may load
    /// unguarded (e.g. bind loads to Lets). bRun 1 with bRunElements set: every element through
    /// bRunElements (its statement form, e.g. a load bound to a Let and then selected, which
    /// static counts need not decide), consecutive threads taking consecutive columns. Otherwise
    /// (bRunElements unset, or the run does not apply) bElement.
    std::int64_t bRun = 1;
    std::function<Stmt(const Expr& k, const Expr& j0, const std::function<Stmt(std::int64_t r, const Expr& v)>& sink)>
        bRunElements;
};

/// True when B runs of `run` columns (GpuGemmSpec::bRun) fit tile `t` for N columns: run > 1
/// divides the tile's columns, each thread's share of the B tile (cols * bk / threads elements
/// per group) and N (so a run is either inside [0, N) or past it).
bool gpuGemmBRunApplies(const GpuGemmSpec::Tile& t, std::int64_t N, std::int64_t run);

/// True when a MatMul/Gemm of output extents batch x M x N with element types `types` (operands
/// and output) takes the CUDA GEMM template: the target is Cuda, M and N are >= kGpuGemmMinExtent,
/// every type is f32, f16 or bf16, and the node has no user mapping (grid, block, warp or thread
/// level) or exactly the template's grid and block mappings (its default schedule written back).
/// K > 0 (MatMul, Gemm): the tile compared with a written-back schedule is gpuGemmTileFor's.
bool useGpuGemm(const LowerContext& ctx, const std::vector<std::int64_t>& batch, std::int64_t M, std::int64_t N,
                const std::vector<DType>& types, std::int64_t K = 0);

/// The tile of a MatMul/Gemm of batch x M x N outputs and reduction K: the default 128 x 128 x 8
/// tile when it launches at least LowerOptions::gpuGemmFillBlocks blocks (or that option is 0);
/// otherwise the largest of 128x64, 64x128, 64x64, 64x32, 32x64, 32x32 (rows / columns at most
/// M / N rounded up to a power of two, >= 32) that does, BK 16, and when none does the 32 x 32
/// tile with its reduction split over 2 or 4 groups (GpuGemmSpec::Tile::splitK) for K >= 256 /
/// 1024 - small products (a Linear layer on 49 or 196 rows at batch 1) then still spread over
/// the SMs instead of 24 blocks of mostly empty 128-row tiles.
GpuGemmSpec::Tile gpuGemmTileFor(const LowerContext& ctx, const std::vector<std::int64_t>& batch, std::int64_t M,
                                 std::int64_t N, std::int64_t K);

/// True when `t` is a tile emitGpuGemm supports: splitK 1, 2 or 4; ty * tx = 256; rm and rn each 1, 2, 4 or a
/// multiple of 4 (a thread's results come in groups of up to 4 consecutive rows / columns, the
/// groups ty * 4 apart); rows() and cols() powers of two in [16, 256]; bk a power of two in [4, 64]
/// with rows() * bk and cols() * bk multiples of 256 (each thread stages whole elements).
bool gpuGemmTileValid(const GpuGemmSpec::Tile& t);

/// True when `t` is a "tall" tile emitGpuGemm supports for an A operand staged k-contiguously
/// (transA false; the dw-pw GEMM form's filters x channels weights), so that one block can cover
/// all M rows of a small-M GEMM: splitK 1, 2 or 4; ty * tx = 256; rm and rn in [1, 32] with rm * rn <= 64 (a
/// thread's results come in groups of 4, 2 or 1 consecutive rows / columns, whichever divides
/// rm / rn); rows() any multiple of 32 up to 512; cols() a power of two in [8, 256]; bk a power
/// of two in [8, 64] with cols() * bk a multiple of 256.
bool gpuGemmTallTileValid(const GpuGemmSpec::Tile& t);

/// The kernel body of the CUDA GEMM template; adds its temporaries to k and records the grid and
/// block mappings and notes. The caller has added the parameters (spec's buffers). spec.tile must
/// be valid (gpuGemmTileValid, or gpuGemmTallTileValid with transA false); the default tile
/// generates exactly the code described above. With BK > 8 and rows() a multiple of 32 the A tile
/// of a k-contiguous A is staged by warps of 8 k x 4 rows (bank-conflict free), as BK = 8 does.
Stmt emitGpuGemm(Kernel& k, const GpuGemmSpec& spec);

/// True when `t` is a tensor-core tile (Tile::mma) emitGpuGemm supports: the shape and staging of
/// a valid tile (gpuGemmTileValid, or gpuGemmTallTileValid for a k-contiguous A), wy and wx()
/// >= 1 with wy * wx() <= 8, rows() a multiple of 16 * wy, cols() of 8 * wx(), bk a multiple of
/// 8, and at most 64 accumulators per thread (4 * mt * nt).
bool gpuGemmMmaTileValid(const GpuGemmSpec::Tile& t);

/// Geometry of a sliding window (Conv, pooling) over the spatial dims, as ONNX defines it.
struct WindowGeom {
    std::vector<std::int64_t> in, k, s, d, pb, pe, out;  ///< per spatial dim
};
/// Reads strides, dilations, pads and auto_pad (NOTSET, SAME_UPPER, SAME_LOWER, VALID) of the
/// node; ceilMode as pooling's ceil_mode (a window starting in the end padding is dropped).
/// Errors: wrong attribute lengths, extents < 1, unknown auto_pad, window larger than the input.
support::Expected<WindowGeom> windowGeometry(const LowerContext& ctx, const std::vector<std::int64_t>& in,
                                             const std::vector<std::int64_t>& kernel, bool ceilMode);

/// A dense (group 1) N-D convolution as an implicit GEMM on the CUDA target (lower_conv_gpu.cpp):
/// M = filters (C_out), N = batch x output pixels (images flattened into the columns,
/// GpuGemmSpec::colGroup = pixels), K = C_in x taps. Buffers as the kernel declares them:
/// x [batch, C_in, input pixels] (spatial dims flattened), w [C_out, C_in x taps] (W's own
/// layout), y [batch, C_out, output pixels], bias [C_out, 1] or -1. The im2col matrix is never
/// stored: B's elements are read from x while the template stages them, 0 in the padding.
struct ConvGemmSpec {
    int x = -1, w = -1, y = -1, bias = -1;
    std::int64_t batch = 1, channels = 1, filters = 1;
    WindowGeom geom;
    GpuGemmSpec::Tile tile;
};

/// The tile of the implicit-GEMM convolution for `filters` x `columns` outputs and a reduction
/// of `reduction` (C_in x taps), or nullopt when the direct GPU form should be kept: the largest
/// of 128x128, 128x64, 64x128, 64x64, 64x32, 32x64, 32x32 (rows at most the filters rounded up
/// to a power of two, >= 32) whose grid has at least `minBlocks` blocks, BK 16 (8 when 16 does
/// not fit); nullopt when even 32x32 gives fewer blocks, when filters or columns
/// are below kGpuGemmMinExtent or the reduction below 8. TESSERA_CONV_GEMM=off forbids the form,
/// TESSERA_CONV_GEMM=rows,cols,bk[,mma] forces a tile (3xTF32 tensor-core MMAs with ",mma";
/// ignored when invalid) - for benchmarks.
std::optional<GpuGemmSpec::Tile> convGemmTile(std::int64_t filters, std::int64_t columns, std::int64_t reduction,
                                               std::int64_t minBlocks);

/// The kernel body of the implicit-GEMM convolution (the caller added the parameters with the
/// shapes ConvGemmSpec describes); emitGpuGemm's notes and mappings.
Stmt emitConvImplicitGemm(Kernel& k, const ConvGemmSpec& spec);

/// GPU block reduction (lower_reduce.cpp): `rows` rows of `len` elements each reduced by one
/// block of kGpuBlockReduceThreads threads per row (grid = spatial(rows)): thread t combines
/// elem(row, j) for j = t, t + T, t + 2T ... < len into a register starting from `init`, the T
/// partial results go through a tree in shared memory (log2 T halving steps, barriers between),
/// and thread 0 runs finish(row, total). For reductions with few outputs and long rows (a
/// GlobalAveragePool over 112 x 112 of 1024 channels: 1024 threads each summing 12544 values
/// took 1.7 ms on the H200), where one output per thread leaves the GPU idle.
inline constexpr std::int64_t kGpuBlockReduceThreads = 256;
/// The block form is used for reductions of at least this many elements per output ...
inline constexpr std::int64_t kGpuBlockReduceMinLength = 1024;
/// ... and at most this many outputs (beyond, one output per thread already fills the GPU).
inline constexpr std::int64_t kGpuBlockReduceMaxOutputs = 32768;
Stmt emitGpuBlockRowReduce(Kernel& k, std::int64_t rows, std::int64_t len, DType accT, const Expr& init,
                           const std::function<Expr(const Expr& row, const Expr& j)>& elem,
                           const std::function<Expr(const Expr&, const Expr&)>& comb,
                           const std::function<Stmt(const Expr& row, const Expr& total)>& finish);

/// Callback of emitWindowNest for one kernel tap: `kIdx` the kernel offsets (one per spatial dim),
/// `localOuter` the tile-local output coordinates of the spatial dims before the last, `inOuter`
/// their input coordinates, and `row(f)` builds the vectorised loop over the last dim's valid
/// outputs, calling f(tile-local output coordinate, input coordinate).
using RowBuilder = std::function<Stmt(const std::function<Stmt(const Expr& localLast, const Expr& inLast)>&)>;
using TapFn = std::function<Stmt(const std::vector<Expr>& kIdx, const std::vector<Expr>& localOuter,
                                 const std::vector<Expr>& inOuter, const RowBuilder& row)>;
/// Loops over the window of every output in a tile's spatial part (origin/extent per spatial dim):
/// outer output coordinates, then the kernel taps of the outer dims (guarded: input inside), then
/// the last kernel dim (copies per tap when it has <= 16 taps), each tap's row loop covering only
/// outputs whose input is inside (ranges computed from the geometry: no guard in the inner loop).
Stmt emitWindowNest(Kernel& k, const WindowGeom& w, const std::vector<Expr>& origin, const std::vector<Expr>& extent,
                    const TapFn& tap);

// ---- templates (one node -> one kernel) ----
support::Expected<LoweredKernel> lowerMatMul(const LowerContext& ctx);
support::Expected<LoweredKernel> lowerGemm(const LowerContext& ctx);
support::Expected<LoweredKernel> lowerConv(const LowerContext& ctx);
support::Expected<LoweredKernel> lowerMaxPool(const LowerContext& ctx);
support::Expected<LoweredKernel> lowerAveragePool(const LowerContext& ctx);
support::Expected<LoweredKernel> lowerGlobalAveragePool(const LowerContext& ctx);
support::Expected<LoweredKernel> lowerGlobalMaxPool(const LowerContext& ctx);
/// ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSumExp (op type read from the node).
support::Expected<LoweredKernel> lowerReduce(const LowerContext& ctx);
support::Expected<LoweredKernel> lowerArgMinMax(const LowerContext& ctx);
support::Expected<LoweredKernel> lowerSoftmax(const LowerContext& ctx);  ///< Softmax and LogSoftmax
support::Expected<LoweredKernel> lowerLayerNorm(const LowerContext& ctx);
support::Expected<LoweredKernel> lowerBatchNorm(const LowerContext& ctx);

}  // namespace tessera::lower::detail
