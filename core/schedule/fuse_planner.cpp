// FusePlanner's cost model, tile search and pair selection (issue 6). Work in progress: stubs.
#include "core/schedule/planners.h"

namespace tessera::schedule {

const char* convLayerKindName(ConvLayerKind k) {
    switch (k) {
        case ConvLayerKind::Depthwise: return "dw";
        case ConvLayerKind::Pointwise: return "pw";
        case ConvLayerKind::Standard: break;
    }
    return "s";
}

std::int64_t ConvLayer::weights() const { return 0; }

support::Expected<ConvLayer> convLayerOf(const ir::Graph&, ir::NodeId) {
    support::DiagnosticList d;
    d.error("", "", "convLayerOf: not implemented yet");
    return d;
}

TileCost layerCost(const ConvLayer&, const FusionTile&, const target::GpuProfile&) { return {}; }
TileCost fusedCost(const ConvLayer&, const ConvLayer&, FusionKind, const FusionTile&, const target::GpuProfile&) {
    return {};
}
TileCost bestLayerTile(const ConvLayer&, const target::GpuProfile&) { return {}; }
TileCost bestFusedTile(const ConvLayer&, const ConvLayer&, FusionKind, const target::GpuProfile&) { return {}; }

FusionPlan planFusePlanner(const ir::Graph& g, const target::GpuProfile& hw) {
    FusionPlan p = planNone(g);
    p.planner = "fuseplanner";
    p.hardware = hw.name;
    return p;
}

support::Expected<FusionPlan> makePlan(const ir::Graph& g, const std::string& planner, const target::GpuProfile& hw) {
    if (planner == "none") return planNone(g);
    if (planner == "hidet") return planHidet(g);
    if (planner == "fuseplanner") return planFusePlanner(g, hw);
    support::DiagnosticList d;
    d.error("", "", "unknown fusion planner '" + planner + "' (known: none, hidet, fuseplanner)");
    return d;
}

}  // namespace tessera::schedule
