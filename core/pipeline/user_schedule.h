#pragma once
/// @file
/// User schedules: task mappings a user sets for one kernel outside the program text (the GUI's
/// Task Mapping dock, `tessera-cli run/compile --schedule`, a project's "schedules"). They are
/// ir::KernelScheduleDecl values with mapping levels only ("grid" and optionally "block"), keyed by
/// node name, and replace the program's schedule of that node (or its default schedule) in
/// compileModel (CompileOptions::schedules).
///
/// Semantics
/// - A user schedule sets task mappings: where the program already schedules the node, the
///   program's tiles, unrolls and stages stay (applyUserSchedules).
/// - A user schedule of node N is used when N is compiled alone or as the anchor of a
///   prologue-epilogue group; fused convolution chains take their tile from the plan and ignore it
///   (compileModel warns), exactly as for program schedules.
/// - checkUserSchedule lowers the one node with the schedule, so it refuses exactly what the
///   compile would: a mapping that does not parse, a rank that differs from the output's, a task
///   shape that does not cover the output, a CUDA block of more than 1024 threads.
///
/// Thread rules: pure functions; safe on any thread.

#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/program_schedule.h"
#include "core/pipeline/compile.h"
#include "core/support/expected.h"

namespace tessera::pipeline {

/// A schedule of `subject` with a "grid" mapping `grid` and, when `block` is not blank, a "block"
/// mapping (texts trimmed, kept as given otherwise).
ir::KernelScheduleDecl mappingSchedule(const std::string& subject, const std::string& grid,
                                       const std::string& block = {});

/// The grid and block mapping texts of a schedule ("" for a level it does not set). A schedule
/// with inner levels only ("block", "warp", "thread") reports the first of them as `block`.
struct ScheduleMappings {
    std::string grid;
    std::string block;
};
ScheduleMappings scheduleMappings(const ir::KernelScheduleDecl& schedule);

/// Parses `NODE=GRID[;BLOCK]` (the `--schedule` option), e.g. "Conv_0=spatial(1,8,4,4);repeat(1,1,2,2)".
/// Only the split is checked here (the mapping texts are checked when the node is lowered).
/// Errors: no '=', an empty node name or grid expression.
support::Expected<ir::KernelScheduleDecl> parseScheduleSpec(const std::string& spec);

/// `program` with every schedule in `overrides` applied to the one of the same subject: its task
/// mappings (every level) are replaced, its other directives (target, tile, unroll, stage ...) are
/// kept unless the override sets them; a subject without a schedule gets the override as is.
/// Later overrides of the same subject win.
void applyUserSchedules(ir::ProgramSchedule& program, const std::vector<ir::KernelScheduleDecl>& overrides);

/// What checkUserSchedule found: the mappings the kernel is lowered with, as the kernel lists
/// them ("grid = spatial(1,4).repeat(1,8)"), and the node's op type.
struct ScheduleCheck {
    std::vector<std::string> mappings;
    std::string opType;
};

/// Lowers node `schedule.subject` of `specialised` (a graph with concrete shapes, as compileModel
/// lowers: pipeline::specialiseModel's result) with `schedule` for options.target /
/// options.cpuThreads. Errors (one diagnostic, where = the node): no node of that name ("no
/// operator 'X' in the compiled graph (folded into a constant, or misspelt)"), an op without a
/// code generator, and every lowering refusal of the schedule (see the file comment).
support::Expected<ScheduleCheck> checkUserSchedule(const ir::Model& specialised, const ir::KernelScheduleDecl& schedule,
                                                   const CompileOptions& options = {});

/// The task mappings compileModel lowers node `node` of `specialised` with when neither the
/// program nor the user schedules it (the lowering's default for options.target and
/// options.cpuThreads), as a schedule of that node; nullopt when `specialised` has no such node
/// or its op has no code generator.
std::optional<ir::KernelScheduleDecl> defaultSchedule(const ir::Model& specialised, const std::string& node,
                                                      const CompileOptions& options = {});

}  // namespace tessera::pipeline
