// lowerGroup (core/lower/lower.h): one kernel per fusion group.

#include "core/lower/lower.h"
#include "core/lower/lower_fused.h"

namespace tessera::lower {

support::Expected<LoweredKernel> lowerGroup(const ir::Graph& g, const schedule::FusionGroup& group,
                                            const ir::KernelScheduleDecl* schedule, const LowerOptions& options) {
    (void)g;
    (void)schedule;
    (void)options;
    support::DiagnosticList d;
    d.error("", "group '" + group.name + "'", "fused lowering is not implemented yet");
    return d;
}

}  // namespace tessera::lower
