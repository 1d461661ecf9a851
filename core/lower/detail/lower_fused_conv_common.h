#pragma once
/// @file
/// Internal pieces shared by the fused convolution-chain lowerings (cuda/lower_fused_conv.cpp,
/// cpu/lower_fused_conv_cpu.cpp; lowerConvChain's dispatch is in lower_fused_conv_common.cpp).
/// Not a public API.
///
/// validateConvChain reads and checks both convolutions and the elementwise ops between them
/// once; beginChainKernel starts the kernel with the chain's parameters (first conv's data input,
/// its weights and bias, the second conv's weights and bias, then the second conv's output);
/// applyBetween inlines the between ops on a value of the intermediate.
///
/// Thread rules: pure functions (as lower.h).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/lower/detail/lower_fused.h"
#include "core/lower/detail/lower_heavy.h"

namespace tessera::lower::detail {

inline std::int64_t chainCeilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
inline std::int64_t chainRoundUp(std::int64_t a, std::int64_t m) { return chainCeilDiv(a, m) * m; }

/// "[1,32,56,56]".
std::string chainDimsText(const std::vector<std::int64_t>& s);

/// A diagnostic list holding one error at `where`.
support::DiagnosticList chainError(const std::string& where, std::string message);

/// One 2-D NCHW f32 convolution of a chain.
struct ChainConv {
    ir::NodeId id = ir::kNoNode;
    ir::ValueId x = ir::kNoValue, w = ir::kNoValue, b = ir::kNoValue, y = ir::kNoValue;
    std::vector<std::int64_t> xs, ws, ys;  ///< X, W, Y shapes
    WindowGeom geom;
    bool depthwise = false;  ///< group = channels, multiplier 1
    bool pointwise = false;  ///< 1x1, stride 1, no padding, group 1
};

/// A validated chain: X [N,C,H,W] -> T [N,Cm,H1,W1] (first conv + between ops) -> Y [N,K,H2,W2].
struct ConvChainInfo {
    ChainConv A, B;                         ///< first and second conv
    std::vector<std::size_t> betweenSlot;   ///< per between op: the input slot reading the chain
    bool firstDw = false;                   ///< dw-pw
    bool secondDw = false;                  ///< pw-dw
    std::int64_t N = 1, C = 1, H = 1, W = 1, Cm = 1, H1 = 1, W1 = 1, K = 1, H2 = 1, W2 = 1;
};

/// Checks `chain` (kinds of both convs, the between ops, shapes) and reads its geometry. Errors at
/// `where` as lower_fused.h lowerConvChain describes.
support::Expected<ConvChainInfo> validateConvChain(const ir::Graph& g, const ConvChainSpec& chain,
                                                   const LowerOptions& options, const std::string& where);

/// The kernel of a chain with its parameters added; buffer indices of the parameters (-1 for an
/// absent bias) and the contexts of the between ops (they refer to g and options: keep both alive).
struct ChainKernel {
    LoweredKernel lk;
    int X = -1, W1b = -1, B1b = -1, W2b = -1, B2b = -1, Yb = -1;
    std::vector<LowerContext> betweenCtx;
};

/// Starts the chain's kernel (name, params, sourceOps = first, between..., second; opType of the
/// first conv) and checks once that every between op inlines (its error otherwise).
support::Expected<ChainKernel> beginChainKernel(const ir::Graph& g, const ConvChainSpec& chain, const ConvChainInfo& info,
                                                const LowerOptions& options, const std::string& where);

/// `v` (a value of the first conv's output) through the between ops, in order.
support::Expected<Expr> applyBetween(const ChainKernel& ck, const ConvChainInfo& info, Expr v);

/// The guard of depthwise tap (kh, kw) of the first conv at input row xh and column xw, for an
/// output of H1 x W1 pixels over an input of H x W: the conjunction of only those bounds the tap
/// can cross somewhere in the output (padding before, a window past the end after); null when the
/// tap always lies inside the input. Geometry from `ga` (strides, dilations, leading pads).
Expr chainTapGuard(const WindowGeom& ga, std::int64_t kh, std::int64_t kw, const Expr& xh, const Expr& xw,
                   std::int64_t H1, std::int64_t W1, std::int64_t H, std::int64_t W);

/// Coordinates of one worker of a fused chain kernel: image, first output row and column of its
/// tile, first filter (or channel) of its chunk.
struct ChainWorker {
    Expr n, oh0, ow0, k0;
};

/// Binds worker index `w` of a grid spatial(N, tilesH, tilesW, kChunks) (chunk fastest) to Let
/// variables kc, tx, ty, n (in that order of creation) and calls `body` with the tile's origin
/// (rows of `th`, columns of `tw`, chunks of `kc`); null when body returns null.
Stmt withChainWorker(Kernel& k, const Expr& w, std::int64_t th, std::int64_t tw, std::int64_t kc, std::int64_t tilesH,
                     std::int64_t tilesW, std::int64_t kChunks, const std::function<Stmt(const ChainWorker&)>& body);

}  // namespace tessera::lower::detail
