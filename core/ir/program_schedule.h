#pragma once
/// @file
/// Schedules and fusion groups written in a DSL program (docs/dsl.md §4.5, §4.6), kept on the
/// Model next to the graph. This is the *declaration* as the user wrote it: names are node names
/// (or fusion group names), task mappings are kept as text with their source position. core/schedule
/// interprets them (TaskMapping, Schedule, FusionPlan); this struct depends on nothing above ir.
/// Source positions are 1-based line:column (0:0 when the schedule did not come from text).
///
/// Thread rules: plain values.

#include <cstdint>
#include <string>
#include <vector>

#include "core/support/diagnostic.h"

namespace tessera::ir {

struct ScheduleMappingDecl {
    std::string level;  ///< "grid", "block", "warp" or "thread"
    std::string text;   ///< the task-mapping expression, e.g. "spatial(16, 16) * repeat(4, 4)"
    support::SourceLocation begin, end;
};

struct ScheduleAxisDecl {
    std::string axis;
    std::int64_t factor = 0;  ///< tile/unroll/vectorize factor; 0 = none given (unroll fully / parallel)
    support::SourceLocation begin, end;
};

struct ScheduleStageDecl {
    std::vector<std::string> tensors;
    std::string memory;  ///< "shared", "local" or "register"
    support::SourceLocation begin, end;
};

struct KernelScheduleDecl {
    std::string subject;                        ///< node name or fusion group name
    std::string target;                         ///< "cuda", "cpu" or empty
    std::string arch;                           ///< e.g. "sm_90"; empty when not given
    std::vector<ScheduleMappingDecl> mappings;  ///< in written order
    std::vector<ScheduleAxisDecl> tiles, unrolls, vectorizes, parallels;
    std::vector<ScheduleStageDecl> stages;
    support::SourceLocation begin, end;

    const ScheduleMappingDecl* mapping(const std::string& level) const {
        for (const auto& m : mappings)
            if (m.level == level) return &m;
        return nullptr;
    }
};

struct FusionGroupDecl {
    std::string name;
    std::vector<std::string> members;  ///< node names, in written order
    std::string anchor;                ///< a member (the first one unless given)
    support::SourceLocation begin, end;
};

struct ProgramSchedule {
    std::vector<KernelScheduleDecl> schedules;
    std::vector<FusionGroupDecl> fusions;

    bool empty() const { return schedules.empty() && fusions.empty(); }
    const KernelScheduleDecl* scheduleFor(const std::string& subject) const {
        for (const auto& s : schedules)
            if (s.subject == subject) return &s;
        return nullptr;
    }
    const FusionGroupDecl* fusion(const std::string& name) const {
        for (const auto& f : fusions)
            if (f.name == name) return &f;
        return nullptr;
    }
};

}  // namespace tessera::ir
