#include "core/pipeline/user_schedule.h"

#include <algorithm>
#include <cctype>

#include "core/lower/lower.h"

namespace tessera::pipeline {

namespace {

std::string trimmed(const std::string& s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

/// The lowering options compileModel uses for `specialised` under `options`.
lower::LowerOptions lowerOptionsFor(const ir::Model& specialised, const CompileOptions& options) {
    lower::LowerOptions lopts;
    lopts.target = options.target;
    lopts.cpuThreads = options.cpuThreads;
    lopts.gpuGemmMinBlocks = options.gpuGemmMinBlocks;
    lopts.gpuGemmFillBlocks = options.gpuGemmFillBlocks;
    lopts.opset = specialised.defaultOpset();
    return lopts;
}

support::DiagnosticList oneError(const std::string& where, const std::string& message) {
    support::DiagnosticList d;
    d.error("", where, message);
    return d;
}

}  // namespace

ir::KernelScheduleDecl mappingSchedule(const std::string& subject, const std::string& grid, const std::string& block) {
    ir::KernelScheduleDecl s;
    s.subject = subject;
    const std::string g = trimmed(grid), b = trimmed(block);
    if (!g.empty()) s.mappings.push_back(ir::ScheduleMappingDecl{"grid", g, {}, {}});
    if (!b.empty()) s.mappings.push_back(ir::ScheduleMappingDecl{"block", b, {}, {}});
    return s;
}

ScheduleMappings scheduleMappings(const ir::KernelScheduleDecl& schedule) {
    ScheduleMappings m;
    if (const auto* g = schedule.mapping("grid")) m.grid = g->text;
    for (const char* level : {"block", "warp", "thread"})
        if (const auto* b = schedule.mapping(level)) {
            m.block = b->text;
            break;
        }
    return m;
}

support::Expected<ir::KernelScheduleDecl> parseScheduleSpec(const std::string& spec) {
    const std::size_t eq = spec.find('=');
    const std::string where = "--schedule '" + spec + "'";
    if (eq == std::string::npos)
        return oneError(where, "expected NODE=GRID[;BLOCK], e.g. Conv_0=spatial(1,8,4,4);repeat(1,1,2,2)");
    const std::string node = trimmed(spec.substr(0, eq));
    const std::string rest = spec.substr(eq + 1);
    const std::size_t semi = rest.find(';');
    const std::string grid = trimmed(rest.substr(0, semi));
    const std::string block = semi == std::string::npos ? std::string() : trimmed(rest.substr(semi + 1));
    if (node.empty()) return oneError(where, "the node name before '=' is empty");
    if (grid.empty()) return oneError(where, "the grid mapping after '=' is empty");
    return mappingSchedule(node, grid, block);
}

void applyUserSchedules(ir::ProgramSchedule& program, const std::vector<ir::KernelScheduleDecl>& overrides) {
    for (const auto& o : overrides) {
        auto it = std::find_if(program.schedules.begin(), program.schedules.end(),
                               [&](const ir::KernelScheduleDecl& s) { return s.subject == o.subject; });
        if (it != program.schedules.end()) {
            // The program's other directives (target, tile, unroll, stage ...) stay: the user
            // sets the task mappings only.
            it->mappings = o.mappings;
            if (!o.target.empty()) it->target = o.target;
            if (!o.arch.empty()) it->arch = o.arch;
            for (auto [dst, src] : {std::pair{&it->tiles, &o.tiles}, {&it->unrolls, &o.unrolls},
                                    {&it->vectorizes, &o.vectorizes}, {&it->parallels, &o.parallels}})
                if (!src->empty()) *dst = *src;
            if (!o.stages.empty()) it->stages = o.stages;
        } else
            program.schedules.push_back(o);
    }
}

support::Expected<ScheduleCheck> checkUserSchedule(const ir::Model& specialised, const ir::KernelScheduleDecl& schedule,
                                                   const CompileOptions& options) {
    const ir::Graph& g = specialised.graph;
    const ir::NodeId id = g.findNode(schedule.subject);
    if (id == ir::kNoNode)
        return oneError("node '" + schedule.subject + "'",
                        "no operator '" + schedule.subject + "' in the compiled graph (folded into a constant, or misspelt)");
    const ir::Node& n = g.node(id);
    if (!lower::hasGenerator(n))
        return oneError("node '" + n.name + "' (" + n.opType + ")",
                        "op '" + n.opType + "' has no code generator, so it has no schedule to set");
    lower::LowerOptions lopts = lowerOptionsFor(specialised, options);
    lopts.kernelName = n.name;
    // Checked as the compile will use it: merged into the program's schedule of the node.
    ir::ProgramSchedule merged = specialised.program;
    applyUserSchedules(merged, {schedule});
    auto lk = lower::lowerNode(g, id, merged.scheduleFor(schedule.subject), lopts);
    if (!lk.ok()) return lk.diagnostics();
    ScheduleCheck check;
    check.mappings = lk->kernel.mappings;
    check.opType = n.opType;
    return check;
}

std::optional<ir::KernelScheduleDecl> defaultSchedule(const ir::Model& specialised, const std::string& node,
                                                      const CompileOptions& options) {
    const ir::NodeId id = specialised.graph.findNode(node);
    if (id == ir::kNoNode || !lower::hasGenerator(specialised.graph.node(id))) return std::nullopt;
    ir::KernelScheduleDecl decl;
    decl.subject = node;
    decl.mappings = lower::defaultSchedule(specialised.graph, id, lowerOptionsFor(specialised, options));
    return decl;
}

}  // namespace tessera::pipeline
