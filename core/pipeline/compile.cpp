#include "core/pipeline/compile.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "core/codegen/cpp/cpp_codegen.h"
#include "core/codegen/cuda/cuda_codegen.h"
#include "core/ir/shape_inference.h"
#include "core/pipeline/prepare.h"
#include "core/runtime/reference_interpreter.h"

namespace tessera::pipeline {

int CompiledModel::kernelCount() const {
    int n = 0;
    for (const auto& s : steps) n += s.kind == StepKind::Kernel;
    return n;
}

std::vector<ir::TensorData> CompiledModel::runtimeInputsOf(const std::vector<ir::TensorData>& callerInputs) const {
    std::vector<ir::TensorData> r;
    for (auto i : inputSlots)
        if (i < callerInputs.size()) r.push_back(callerInputs[i]);
    return r;
}

int CompiledModel::stepOfNode(const std::string& name) const {
    for (std::size_t i = 0; i < steps.size(); ++i)
        if (steps[i].name == name) return static_cast<int>(i);
    return -1;
}

std::vector<ir::TensorData> defaultInputs(const ir::Graph& g, std::uint64_t seed,
                                          const std::vector<ir::TensorData>& given) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uni(-1.0, 1.0);
    std::vector<ir::TensorData> out;
    const auto rin = g.runtimeInputs();
    for (std::size_t i = 0; i < rin.size(); ++i) {
        if (i < given.size() && given[i].dtype != ir::DType::Undefined) {
            out.push_back(given[i]);
            continue;
        }
        const ir::TensorType& t = g.value(rin[i]).type;
        ir::TensorData d;
        d.dtype = t.dtype == ir::DType::Undefined ? ir::DType::F32 : t.dtype;
        if (t.shape.rankKnown())
            for (const auto& dim : t.shape.dims()) d.dims.push_back(dim.isKnown() ? dim.value : 1);
        const std::int64_t n = d.numElements();
        const std::size_t es = ir::dtypeSize(d.dtype);
        d.bytes.resize(static_cast<std::size_t>(n) * es);
        for (std::int64_t e = 0; e < n; ++e) {
            std::uint8_t* p = d.bytes.data() + static_cast<std::size_t>(e) * es;
            switch (d.dtype) {
            case ir::DType::F32: {
                const float v = static_cast<float>(uni(rng));
                std::memcpy(p, &v, 4);
                break;
            }
            case ir::DType::F64: {
                const double v = uni(rng);
                std::memcpy(p, &v, 8);
                break;
            }
            case ir::DType::Bool: *p = static_cast<std::uint8_t>(e % 2); break;
            default:
                if (ir::isInteger(d.dtype)) {
                    const std::int64_t v = static_cast<std::int64_t>(rng() % 4);
                    std::memcpy(p, &v, es);  // little-endian: the low bytes hold the value
                } else {
                    // f16/bf16 and others: zeros are valid in every encoding.
                    std::memset(p, 0, es);
                }
            }
        }
        out.push_back(std::move(d));
    }
    return out;
}

namespace {

/// A step that runs node `id` in the reference interpreter: its inputs, plus the values its
/// If/Loop/Scan bodies read by name (they need arena slots too), and its outputs.
CompiledStep referenceStep(const ir::Graph& g, ir::NodeId id, CompiledStep step) {
    const ir::Node& n = g.node(id);
    step.kind = StepKind::Reference;
    for (auto v : n.inputs)
        if (v != ir::kNoValue) step.inputs.push_back(v);
    for (auto v : runtime::subgraphInputs(g, id))
        if (std::find(step.inputs.begin(), step.inputs.end(), v) == step.inputs.end()) step.inputs.push_back(v);
    for (auto v : n.outputs)
        if (v != ir::kNoValue) step.outputs.push_back(v);
    return step;
}

}  // namespace

support::Expected<CompiledModel> compileModel(const ir::Model& model, const std::vector<ir::TensorData>& inputs,
                                              const CompileOptions& options, const support::CancelToken* cancel,
                                              const support::ProgressSink& progress) {
    support::DiagnosticList diags;
    const std::string& file = model.sourcePath;
    if (progress) progress(0.0, "specialising shapes");
    SpecialiseStats stats;
    std::vector<std::size_t> kept;
    auto spec = specialiseModel(model, inputs, &stats, cancel, &kept);
    if (!spec.ok()) return spec.diagnostics();

    CompiledModel cm;
    cm.inputSlots = std::move(kept);
    cm.model = std::move(*spec);
    cm.foldedNodes = stats.foldedNodes;
    cm.target = options.target;
    const ir::Graph& g = cm.model.graph;
    const auto order = g.topologicalOrder();
    if (!order) {
        diags.error(file, "graph", "the graph has a cycle");
        return diags;
    }
    for (const ir::FusionGroupDecl& f : cm.model.program.fusions) {
        std::string members;
        for (const auto& m : f.members) members += (members.empty() ? "" : ", ") + m;
        cm.warnings.warning(file, "fusion group '" + f.name + "'",
                            "not applied yet: " + members +
                                " run as separate kernels with their own schedules" +
                                (cm.model.program.scheduleFor(f.name) ? " (the group's schedule is unused)" : ""));
    }
    lower::LowerOptions lopts;
    lopts.target = options.target;
    lopts.cpuThreads = options.cpuThreads;
    lopts.gpuGemmMinBlocks = options.gpuGemmMinBlocks;
    lopts.opset = cm.model.defaultOpset();
    std::size_t done = 0;
    for (ir::NodeId id : *order) {
        if (cancel && cancel->isCancelled()) {
            diags.error(file, "compile", "cancelled");
            return diags;
        }
        if (progress) progress(0.8 * static_cast<double>(done++) / static_cast<double>(order->size()), "lowering");
        const ir::Node& n = g.node(id);
        CompiledStep step;
        step.node = id;
        step.name = n.name;
        step.opType = n.opType;
        if (auto f = ir::nodeFlops(g, id)) step.nodeFlops = *f;
        if (!lower::hasGenerator(n)) {
            if (!options.fallbackReference) {
                diags.error(file, "node '" + n.name + "' (" + n.opType + ")",
                            "no code generator for op '" + n.opType +
                                "'; run with --fallback-reference to run this node in the reference interpreter");
                continue;
            }
            cm.steps.push_back(referenceStep(g, id, std::move(step)));
            continue;
        }
        lopts.kernelName = n.name;
        auto lk = lower::lowerNode(g, id, cm.model.program.scheduleFor(n.name), lopts);
        if (!lk.ok() && options.fallbackReference && lower::isUnsupportedForm(lk.diagnostics())) {
            cm.steps.push_back(referenceStep(g, id, std::move(step)));
            continue;
        }
        if (!lk.ok()) {
            diags.append(lk.diagnostics());
            if (lower::isUnsupportedForm(lk.diagnostics()))
                diags.items().back().notes.push_back(
                    "run with --fallback-reference to run this node in the reference interpreter");
            continue;
        }
        if (options.target == lower::Target::Cuda)
            for (const std::string& note : lk->kernel.notes)
                if (note.find("not implemented") != std::string::npos)
                    cm.warnings.warning(file, "node '" + n.name + "' (" + n.opType + ")", "CUDA target: " + note);
        step.kernel = std::move(lk->kernel);
        step.inputs = std::move(lk->inputs);
        step.outputs = std::move(lk->outputs);
        step.counts = lower::countKernel(step.kernel);
        cm.steps.push_back(std::move(step));
    }
    if (diags.hasErrors()) return diags;

    if (progress) progress(0.85, "generating code");
    std::vector<const lower::Kernel*> kernels;
    std::vector<std::size_t> kernelStep;
    for (std::size_t i = 0; i < cm.steps.size(); ++i)
        if (cm.steps[i].kind == StepKind::Kernel) {
            kernels.push_back(&cm.steps[i].kernel);
            kernelStep.push_back(i);
        }
    if (options.target == lower::Target::Cuda) {
        auto mod = codegen::generateCuda(kernels);
        if (!mod) return mod.diagnostics();
        cm.code = std::move(mod->source);
        for (std::size_t k = 0; k < kernels.size() && k < mod->launches.size(); ++k)
            cm.steps[kernelStep[k]].launch = mod->launches[k];
    } else {
        codegen::CppOptions copts;
        cm.code = codegen::generateCpp(kernels, copts);
    }
    for (std::size_t k = 0; k < kernels.size(); ++k) {
        CompiledStep& s = cm.steps[kernelStep[k]];
        s.entry = k < cm.code.entryPoints.size() ? cm.code.entryPoints[k] : std::string();
    }
    for (const auto& e : cm.code.sourceMap) {
        if (e.kernel < 0 || static_cast<std::size_t>(e.kernel) >= kernelStep.size()) continue;
        CompiledStep& s = cm.steps[kernelStep[static_cast<std::size_t>(e.kernel)]];
        if (s.firstLine == 0 || e.firstLine < s.firstLine) s.firstLine = e.firstLine;
        s.lastLine = std::max(s.lastLine, e.lastLine);
    }
    if (progress) progress(1.0, "compiled");
    return cm;
}

}  // namespace tessera::pipeline
