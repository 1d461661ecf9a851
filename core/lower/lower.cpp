#include "core/lower/lower.h"

#include "core/lower/detail/lower_templates.h"

namespace tessera::lower {

namespace {

const detail::TemplateTable& templates() {
    static const detail::TemplateTable table = [] {
        detail::TemplateTable t;
        detail::registerElementwiseTemplates(t);
        detail::registerMovementTemplates(t);
        detail::registerComputeTemplates(t);
        detail::registerHeavyTemplates(t);
        return t;
    }();
    return table;
}

/// Table key of a node: its op type for the default ONNX domain, "Compute" for tessera compute
/// definitions, empty for anything else (other domains have no generator).
std::string keyOf(const ir::Node& node) {
    if (node.domain == ir::kTesseraDomain) return node.opType == ir::kComputeOpType && node.compute ? node.opType : "";
    if (node.domain.empty() || node.domain == "ai.onnx") return node.opType == ir::kComputeOpType ? "" : node.opType;
    return {};
}

const detail::TemplateFn* findTemplate(const ir::Node& node) {
    const std::string key = keyOf(node);
    if (key.empty()) return nullptr;
    const auto& t = templates();
    auto it = t.find(key);
    return it == t.end() ? nullptr : &it->second;
}

std::string whereOf(const ir::Node& n) { return "node '" + n.name + "' (" + n.opType + ")"; }

}  // namespace

bool hasGenerator(const ir::Node& node) { return findTemplate(node) != nullptr; }

std::vector<std::string> opsWithGenerators() {
    std::vector<std::string> out;
    for (const auto& [name, fn] : templates()) out.push_back(name);  // std::map: already sorted
    return out;
}

support::Expected<LoweredKernel> lowerNode(const ir::Graph& g, ir::NodeId id, const ir::KernelScheduleDecl* schedule,
                                           const LowerOptions& options) {
    if (id < 0 || static_cast<std::size_t>(id) >= g.numNodes()) {
        support::DiagnosticList d;
        d.error({}, {}, "node id " + std::to_string(id) + " is out of range");
        return d;
    }
    const ir::Node& node = g.node(id);
    detail::LowerContext ctx{g, id, node, schedule, options, whereOf(node)};
    const detail::TemplateFn* fn = findTemplate(node);
    if (!fn) {
        const std::string op = node.domain.empty() ? node.opType : node.domain + "::" + node.opType;
        return detail::lowerError(ctx, "no code generator for op '" + op + "'");
    }
    // Every output empty (a batch of 0, a slice of nothing): nothing to compute, and the templates'
    // task mappings need extents >= 1. The kernel takes the node's parameters and has no body.
    bool allEmpty = !node.outputs.empty();
    for (ir::ValueId v : node.outputs) {
        if (v == ir::kNoValue) continue;
        const ir::TensorType& t = g.value(v).type;
        bool empty = false;
        if (t.shape.rankKnown())
            for (const auto& d : t.shape.dims()) empty = empty || (d.isKnown() && d.value == 0);
        allEmpty = allEmpty && empty;
    }
    if (allEmpty) {
        LoweredKernel lk = detail::beginKernel(ctx);
        for (ir::ValueId v : node.inputs)
            if (v != ir::kNoValue) detail::addInput(ctx, lk, v);
        for (ir::ValueId v : node.outputs)
            if (v != ir::kNoValue) detail::addOutput(ctx, lk, v);
        lk.kernel.body = seq({});
        lk.kernel.notes.push_back("every output has no elements: nothing to compute");
        return lk;
    }
    return (*fn)(ctx);
}

std::vector<ir::ScheduleMappingDecl> defaultCpuSchedule(const ir::Graph& g, ir::NodeId id, const LowerOptions& options) {
    LowerOptions cpu = options;
    cpu.target = Target::Cpu;
    return defaultSchedule(g, id, cpu);
}

std::vector<ir::ScheduleMappingDecl> defaultSchedule(const ir::Graph& g, ir::NodeId id, const LowerOptions& options) {
    std::vector<ir::ScheduleMappingDecl> out;
    if (id < 0 || static_cast<std::size_t>(id) >= g.numNodes() || !hasGenerator(g.node(id))) return out;
    const LowerOptions& lo = options;
    // The default schedule is by construction what lowering without a schedule uses: lower once
    // and read back the mappings it recorded ("grid = ...", "block = ...").
    auto lk = lowerNode(g, id, nullptr, lo);
    if (!lk) return out;
    for (const std::string& m : lk->kernel.mappings) {
        const auto eq = m.find(" = ");
        if (eq == std::string::npos) continue;
        ir::ScheduleMappingDecl d;
        d.level = m.substr(0, eq);
        if (d.level != "grid" && d.level != "block") continue;
        d.text = m.substr(eq + 3);
        out.push_back(std::move(d));
    }
    return out;
}

bool isUnsupportedForm(const support::DiagnosticList& diags) {
    return diags.hasCode(support::DiagnosticCode::NoCodeGenerator);
}

}  // namespace tessera::lower
