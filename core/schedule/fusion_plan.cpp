// Fusion plans: names, checks, the trivial plan, normalisation and JSON (first version: stubs).
#include "core/schedule/fusion_plan.h"

namespace tessera::schedule {

const char* fusionKindName(FusionKind k) {
    switch (k) {
        case FusionKind::Single: return "single";
        case FusionKind::PrologueEpilogue: return "prologue-epilogue";
        case FusionKind::DwPw: return "dw-pw";
        case FusionKind::PwDw: return "pw-dw";
        case FusionKind::PwPw: return "pw-pw";
    }
    return "single";
}

std::optional<FusionKind> parseFusionKind(std::string_view s) {
    for (FusionKind k : {FusionKind::Single, FusionKind::PrologueEpilogue, FusionKind::DwPw, FusionKind::PwDw,
                         FusionKind::PwPw})
        if (s == fusionKindName(k)) return k;
    return std::nullopt;
}

bool isConvChain(FusionKind k) { return k == FusionKind::DwPw || k == FusionKind::PwDw || k == FusionKind::PwPw; }

bool FusionGroup::contains(std::string_view node) const {
    for (const auto& o : ops)
        if (o == node) return true;
    return false;
}

int FusionPlan::groupOf(std::string_view node) const {
    for (std::size_t i = 0; i < groups.size(); ++i)
        if (groups[i].contains(node)) return static_cast<int>(i);
    return -1;
}

int FusionPlan::fusedGroupCount() const {
    int n = 0;
    for (const auto& gr : groups)
        if (gr.ops.size() > 1) ++n;
    return n;
}

std::string epilogueRefusal(const ir::Graph&, ir::ValueId, ir::NodeId, const std::vector<ir::NodeId>&) {
    return "not implemented yet";
}
std::string prologueRefusal(const ir::Graph&, ir::NodeId, const std::vector<ir::NodeId>&) { return "not implemented yet"; }
std::vector<FusionViolation> checkPlan(const ir::Graph&, const FusionPlan&, const target::GpuProfile*) { return {}; }
FusionPlan planNone(const ir::Graph&) {
    FusionPlan p;
    p.planner = "none";
    return p;
}
support::Expected<FusionPlan> normalizePlan(const ir::Graph&, FusionPlan plan) { return plan; }
std::string planToJson(const FusionPlan&) { return "{}"; }
support::Expected<FusionPlan> planFromJson(const std::string&, const std::string& file) {
    support::DiagnosticList d;
    d.error(file, "", "fusion plan JSON is not implemented yet");
    return d;
}

}  // namespace tessera::schedule
