#pragma once
/// @file
/// The GEMM form of a fused depthwise -> pointwise chain on CUDA (issue 6; internal to
/// core/lower, called by lowerConvChainCuda in cuda/lower_fused_conv.cpp).
///
/// The pointwise conv is a GEMM with M = K filters, N = images x output pixels (the images laid
/// end to end along the columns, GpuGemmSpec::colGroup) and a reduction over the Cm intermediate
/// channels; its B operand, the intermediate T[n, c, pixel] = between(depthwise conv + bias), is
/// produced inside the GEMM's B-tile staging (GpuGemmSpec::bElement, Hidet's prologue fusion)
/// instead of being loaded, so T never reaches global memory. The pointwise bias is the GEMM's C
/// operand broadcast per row. Each T element is computed once per block row of filters
/// (ceil(K / tile rows) times; once when the tile covers all K filters).
///
/// Thread rules: pure functions (as lower.h).

#include <cstdint>
#include <optional>
#include <string>

#include "core/lower/detail/lower_fused.h"
#include "core/lower/detail/lower_heavy.h"

namespace tessera::lower::detail {

struct ConvChainInfo;

/// The GEMM tile for a dw-pw chain whose pointwise conv has `filters` (M) outputs per pixel,
/// `columns` (N = images x output pixels) and `channels` (the reduction) intermediate channels,
/// and whose output rows are `runWidth` pixels when the depthwise conv has stride 1 (0 else):
/// dwPwRunTile's tile when it gives one; otherwise the rows cover the filters in one block row up to 128 (a power of two >= filters, at least 16;
/// above 128, 64-row tiles), the columns give 4 results per thread (16 columns at 128 rows: 8),
/// halved (down to 16) while there are fewer than 2 blocks per SM of a 132-SM H200, and BK is 32
/// for long reductions (>= 256 channels), else 16. Wide chains (dwPwWide) instead get a tall tile
/// (gpuGemmTallTileOf) of K rounded up to 32 rows x 16 columns (doubled up to 64 while a
/// thread keeps <= 24 results and >= 132 column tiles remain) x the largest BK <= 32 that fits,
/// when there are at least 66 column tiles of 16 (half the SMs; else the rule above); 16-column
/// tall tiles of 320 rows, and of 160 rows under < 768 channels, take rows / 32 rows per thread
/// (x 2 columns), other tall tiles 16 threads along the columns.
/// The environment variable TESSERA_DWPW_GEMM="rows,cols,bk[,rm[,split]]" overrides it (a tuning
/// aid for benchmarks; rm picks a tall tile's rows per thread, 0 = the default split; split the
/// tile's splitK; an invalid override is ignored), and TESSERA_DWPW_SPLIT=1|2|4 then sets the
/// splitK of the tile chosen (BK halved until the stages fit 48 KiB; ignored when none fits).
/// Without either variable a (non-tall) tile above gets a split reduction (Tile::splitK) when it
/// makes few blocks: 4 groups below 132 blocks (one per SM of an H200), 2 below 4 x 132 blocks
/// when the reduction is shorter than 384 channels, else none (the largest split up to that whose
/// stages fit 48 KiB of shared memory, BK halved down to 8 for it); tall tiles and run tiles stay unsplit.
/// Always gpuGemmTileValid or gpuGemmTallTileValid.
GpuGemmSpec::Tile dwPwGemmTile(std::int64_t filters, std::int64_t columns, std::int64_t channels, std::int64_t runWidth = 0);

/// dwPwGemmTile's tile with a note on its tensor-core choice for the kernel header ("" when MMAs
/// are used as the rule says: emitGpuGemm's own note describes them): why not ("tensor cores not
/// used: 320 filters ..."), or how the environment was read (an unknown TESSERA_DWPW_MMA value,
/// a TESSERA_DWPW_WARPS layout that does not fit, tensor cores asked for that no layout fits).
/// Tensor cores (TESSERA_DWPW_MMA unset): 3xTF32 MMAs (GpuGemmSpec::Tile::mma) on unsplit tiles of
/// 17..160 filters, the 96-row tall tiles then 16 columns wide, the warp layout with the most
/// computing warps (TESSERA_DWPW_WARPS=wy[,wx] asks for another). TESSERA_DWPW_MMA=tf32x3 (or 1,
/// on) / tf32 asks for MMAs on the tile the rule gives, off (or 0) forbids them.
struct DwPwTileChoice {
    GpuGemmSpec::Tile tile;
    std::string mmaNote;
};
DwPwTileChoice dwPwGemmTileChoice(std::int64_t filters, std::int64_t columns, std::int64_t channels, std::int64_t runWidth = 0);

/// dwPwGemmTile's SIMT tile (before the tensor-core choice); the rule above.
GpuGemmSpec::Tile dwPwGemmTileSimt(std::int64_t filters, std::int64_t columns, std::int64_t channels, std::int64_t runWidth = 0);

/// `t` computed by warp MMAs of `precision` (Tile::mma) with `wy` x `wx` warps (wx 0: 8 / wy), or
/// when that is not valid (or wy is 0) the valid layout with the most computing warps, the most
/// of them along the rows; within the shared-memory budget of its kind. nullopt when none is valid.
std::optional<GpuGemmSpec::Tile> withMma(GpuGemmSpec::Tile t, MmaPrecision precision, std::int64_t wy, std::int64_t wx = 0);

/// The rows x cols x bk part of dwPwGemmTile's rule, before the split (splitK 1; the environment
/// not read).
GpuGemmSpec::Tile dwPwGemmTileUnsplit(std::int64_t filters, std::int64_t columns, std::int64_t channels,
                                      std::int64_t runWidth = 0);

/// The wide-column tile for chains of <= 32 filters: rows = filters rounded up to a power of two
/// (>= 16) x 128 columns x BK 16 while that gives >= 2 blocks per SM of a 132-SM H200; else, when
/// `runWidth` (the output row width of a stride-1 depthwise conv; 0 for other strides) is a
/// multiple of 4 (runs of 4 pixels, dwPwGemmRun), 64 columns under the same condition; nullopt
/// otherwise (batch 1's blocks, more filters).
std::optional<GpuGemmSpec::Tile> dwPwRunTile(std::int64_t filters, std::int64_t columns, std::int64_t runWidth);

/// The tile for `rows` x `cols` output tiles and reduction step `bk`, with the results per
/// thread split as evenly as a power of two allows (rows per thread <= cols per thread); nullopt
/// when no valid tile (gpuGemmTileValid) has that shape.
std::optional<GpuGemmSpec::Tile> gpuGemmTileOf(std::int64_t rows, std::int64_t cols, std::int64_t bk);

/// A tall tile (gpuGemmTallTileValid) of `rows` x `cols` x `bk` with `rm` rows per thread (0: 16
/// threads along the columns, or all of them when cols < 16, and the rows split over the rest),
/// within 46 KiB of shared memory; nullopt when there is none.
std::optional<GpuGemmSpec::Tile> gpuGemmTallTileOf(std::int64_t rows, std::int64_t cols, std::int64_t bk, std::int64_t rm);

/// True for the chains dwPwGemmTile gives a tall tile covering all filters: >= 384 channels and
/// 65..512 filters (MobileNetV2's 14x14 and 7x7 blocks with K >= 96).
bool dwPwWide(std::int64_t filters, std::int64_t channels);

/// Whether the GEMM form of a chain with `channels` intermediate channels (the reduction) and a
/// tile of `splitK` groups prefetches the next step into registers (GpuGemmSpec::prefetch): for
/// long reductions (>= 384 channels, where it measured faster on the H200) and split tiles. The
/// environment variable TESSERA_DWPW_PREFETCH overrides it ("0": off, anything else: on; a
/// benchmarking switch).
bool dwPwGemmPrefetch(std::int64_t channels, std::int64_t splitK = 1);

/// Whether the register prefetch of a chain with `channels` intermediate channels keeps the raw
/// depthwise tap values (GpuGemmSpec::bRawCount: the input loads of the next step in registers,
/// the depthwise sum and between ops computed when storing to shared memory) instead of the
/// finished intermediate value: with split tiles (splitK > 1). Only used with prefetch. The
/// environment variable TESSERA_DWPW_RAW overrides it ("0": off, anything else: on).
bool dwPwGemmRawPrefetch(std::int64_t channels, std::int64_t splitK = 1);

/// The B run (GpuGemmSpec::bRun) of a chain whose output rows are `outWidth` pixels and whose
/// depthwise conv has `stride` along W, under tile `t` with `columns` GEMM columns: 4 for the
/// tiles dwPwGemmTile picks for runs (stride 1, <= 32 rows, >= 64 columns, no split), else 1;
/// the environment variable TESSERA_DWPW_RUN=1|2|4 asks for another (any stride). The run is the
/// largest of 4, 2 up to that which divides the row (so a run never crosses a row or an image) and
/// gpuGemmBRunApplies; 1 otherwise. A run shares the depthwise weights, bias and overlapping input
/// taps of its pixels. Not used with the raw-tap prefetch (lowerDwPwGemm).
std::int64_t dwPwGemmRun(std::int64_t outWidth, std::int64_t stride, const GpuGemmSpec::Tile& t, std::int64_t columns);

/// True when lowerConvChain should use the GEMM form for this chain: CUDA target, kind dw-pw
/// (already validated by the caller) and the environment variable TESSERA_DWPW_GEMM is not
/// "off" (benchmarks compare with the tile kernel that way).
bool useDwPwGemm(const LowerOptions& options, const ConvChainSpec& chain);

/// The fused dw-pw kernel in GEMM form, for a chain validateConvChain accepted (kind dw-pw).
/// Params as beginChainKernel adds them (lowerConvChain's order); second's W, B and Y are
/// declared as the GEMM views [K, Cm], [K, 1] and [N, K, H2*W2] (same dense layout). Every
/// element of Y is stored once; Y is never loaded.
support::Expected<LoweredKernel> lowerDwPwGemm(const ir::Graph& g, const ConvChainSpec& chain, const ConvChainInfo& info,
                                               const LowerOptions& options, const std::string& where);

}  // namespace tessera::lower::detail
