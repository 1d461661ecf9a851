#pragma once
/// @file
/// Fusion planners (issue 6): `none` (core/schedule/fusion_plan.h planNone), `hidet` (Hidet's
/// post-scheduling fusion rules applied automatically, semantics.md §2.3) and `fuseplanner`
/// (FusePlanner's global-memory-access cost model, tile search and decision rule over a
/// target::GpuProfile, semantics.md §2.5, Qararyah et al. ICPP-W 2024; then Hidet's rules for
/// the ops left over).
///
/// Preconditions: shapes are concrete for the convolutions the FusePlanner model reads (the
/// pipeline specialises from the fed inputs; with symbolic dims the conv pairs are left unfused
/// with reason "shapes not static").
/// Thread rules: pure functions.

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/schedule/fusion_plan.h"
#include "core/support/expected.h"
#include "core/target/gpu_profile.h"

namespace tessera::schedule {

/// Hidet's rules over the whole graph (anchors = non-injective ops, epilogue then prologue growth,
/// leftovers anchor themselves and absorb prologues). Groups in `seed` (e.g. FusePlanner's conv
/// pairs) are kept as they are and their nodes are not regrown. planner = "hidet".
FusionPlan planHidet(const ir::Graph& g, const FusionPlan* seed = nullptr);

// ---- FusePlanner's cost model (estimator_v2.py), in elements, FP32 = 4 bytes each ----

enum class ConvLayerKind { Standard, Depthwise, Pointwise };
const char* convLayerKindName(ConvLayerKind k);  ///< "s", "dw", "pw" (FusePlanner's names)

/// One convolution as FusePlanner sees it (per image: batch multiplies every count).
struct ConvLayer {
    std::string node;
    ConvLayerKind kind = ConvLayerKind::Standard;
    std::int64_t inC = 0, inH = 0, inW = 0;     ///< IFM [C,H,W]
    std::int64_t outC = 0, outH = 0, outW = 0;  ///< OFM [C,H,W]
    std::int64_t kernelH = 1, kernelW = 1, stride = 1;
    std::int64_t batch = 1;
    std::int64_t weights() const;  ///< weight elements
};

/// Classifies a Conv node (NCHW, 2-D); nullopt-like error when not a 2-D conv with static shapes.
support::Expected<ConvLayer> convLayerOf(const ir::Graph& g, ir::NodeId conv);

struct TileCost {
    FusionTile tile;
    std::int64_t gma = 0;             ///< global memory accesses, elements (whole batch)
    std::int64_t redundantFlops = 0;  ///< FLOPs recomputed (halos, first layer per weight tile)
    bool viable = false;
    std::string whyNot;               ///< when !viable: the first viability rule broken
};

/// GMA of one layer run alone with output tile `tile` (FusePlanner's formulas per kind).
TileCost layerCost(const ConvLayer& l, const FusionTile& tile, const target::GpuProfile& hw);
/// GMA of two layers fused (dw-pw, pw-dw, pw-pw) with output tile `tile` of the second layer.
TileCost fusedCost(const ConvLayer& first, const ConvLayer& second, FusionKind kind,
                   const FusionTile& tile, const target::GpuProfile& hw);
/// Tile search: smallest tile, doubling width and height alternately while viable (tiles >= SM
/// count, weights + IFM tile <= shared memory, all tiles <= L1, dims <= next power of two of the
/// feature map); for pointwise layers the filters per tile are swept as well. Returns the
/// GMA-minimal viable tile (viable = false with whyNot when none is).
TileCost bestLayerTile(const ConvLayer& l, const target::GpuProfile& hw);
TileCost bestFusedTile(const ConvLayer& first, const ConvLayer& second, FusionKind kind,
                       const target::GpuProfile& hw);

/// FusePlanner's decision rule: fuse when saved = GMA(first) + GMA(second) - GMA(fused) > 0 and
/// redundant FLOPs / saved < kRedundantToSavedRatio (COMP_TO_DM_ACCEPTED_RATIO).
inline constexpr double kRedundantToSavedRatio = 10.0;

/// Chooses conv pairs greedily in topological order (each conv in at most one pair), turns each
/// chosen pair (with the elementwise ops between them and the second conv's elementwise
/// epilogues) into a dw-pw / pw-dw / pw-pw group with its tile and predictions, then plans the
/// rest with planHidet. planner = "fuseplanner", hardware = hw.name.
FusionPlan planFusePlanner(const ir::Graph& g, const target::GpuProfile& hw);

/// "none" | "hidet" | "fuseplanner" -> the plan; errors name the unknown planner.
support::Expected<FusionPlan> makePlan(const ir::Graph& g, const std::string& planner,
                                       const target::GpuProfile& hw);

}  // namespace tessera::schedule
