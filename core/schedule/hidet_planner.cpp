// Hidet's post-scheduling fusion rules as a planner (first version: the trivial plan).
#include "core/schedule/planners.h"

namespace tessera::schedule {

FusionPlan planHidet(const ir::Graph& g, const FusionPlan*) {
    FusionPlan p = planNone(g);
    p.planner = "hidet";
    return p;
}

}  // namespace tessera::schedule
