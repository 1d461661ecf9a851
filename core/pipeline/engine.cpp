#include "core/pipeline/engine.h"

namespace tessera::pipeline {

namespace {

bool isGiven(const std::vector<ir::TensorData>& given, std::size_t i) {
    return i < given.size() && given[i].dtype != ir::DType::Undefined;
}

bool sameTensor(const ir::TensorData& a, const ir::TensorData& b) {
    return a.dtype == b.dtype && a.dims == b.dims && a.bytes == b.bytes && a.strings == b.strings;
}

support::DiagnosticList cancelled(const std::string& file) {
    support::DiagnosticList d;
    d.error(file, "run", "cancelled");
    return d;
}

}  // namespace

std::shared_ptr<Runner> makeRunner(int threads) {
    runtime::RunnerClientOptions options;
    options.threads = threads;
    return std::make_shared<Runner>(options);
}

bool PreparedModel::matches(const std::shared_ptr<const ir::Model>& model, const std::vector<ir::TensorData>& given,
                            const PrepareOptions& other) const {
    if (model != source || other.seed != options.seed || other.shapesOnly != options.shapesOnly) return false;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (isGiven(given, i) == filled[i]) return false;
        if (!filled[i] && !sameTensor(given[i], inputs[i])) return false;
    }
    return true;
}

support::Expected<std::shared_ptr<const PreparedModel>> prepare(std::shared_ptr<const ir::Model> model,
                                                               const std::vector<ir::TensorData>& given,
                                                               const PrepareOptions& options,
                                                               const support::CancelToken* cancel,
                                                               const support::ProgressSink& progress) {
    if (!model) {
        support::DiagnosticList d;
        d.error("", "prepare", "no model is loaded");
        return d;
    }
    if (progress) progress(0.0, "specialising shapes");
    auto p = std::make_shared<PreparedModel>();
    p->source = model;
    p->options = options;
    const ir::Graph& g = model->graph;
    const auto rin = g.runtimeInputs();
    std::vector<ir::TensorData> kept(rin.size());
    for (std::size_t i = 0; i < rin.size(); ++i) {
        p->filled.push_back(!isGiven(given, i));
        if (!p->filled[i]) {
            kept[i] = given[i];
            continue;
        }
        // A shape-only stand-in (symbolic extents 1, as defaultInputs takes them) where no
        // element is needed; every other input is filled from the seed.
        if (!options.shapesOnly || feedsShapeOperand(g, rin[i])) continue;
        const ir::TensorType& t = g.value(rin[i]).type;
        if (!t.shape.rankKnown() || t.dtype == ir::DType::String) continue;
        ir::TensorData d;
        d.dtype = t.dtype == ir::DType::Undefined ? ir::DType::F32 : t.dtype;
        for (const auto& dim : t.shape.dims()) d.dims.push_back(dim.isKnown() ? dim.value : 1);
        if (d.isShapeOnly()) kept[i] = std::move(d);
    }
    p->inputs = defaultInputs(g, options.seed, kept);
    auto spec = specialiseModel(*model, p->inputs, &p->stats, cancel, &p->inputSlots);
    if (!spec.ok()) return spec.diagnostics();
    p->model = std::move(*spec);
    return std::shared_ptr<const PreparedModel>(std::move(p));
}

bool precompilesCuda(const RunRequest& request, const CompiledModel& compiled) {
    return request.precompileCuda && compiled.target == lower::Target::Cuda && compiled.kernelCount() > 0 &&
           !request.run.cudaArch.empty();
}

support::Expected<RunResult> compileAndRun(const RunRequest& request, const support::CancelToken* cancel,
                                           const RunEvents& events) {
    if (!request.prepared) {
        support::DiagnosticList d;
        d.error("", "run", "no model is loaded");
        return d;
    }
    const PreparedModel& prepared = *request.prepared;
    const std::string& file = prepared.model.sourcePath;
    RunResult result;

    auto cm = compileModel(prepared, request.compile, cancel, events.progress);
    if (cancel && cancel->isCancelled()) return cancelled(file);
    if (!cm.ok()) return cm.diagnostics();
    result.compiled = std::make_shared<const CompiledModel>(std::move(*cm));
    if (events.compiled && !events.compiled(result.compiled)) return result;

    if (precompilesCuda(request, *result.compiled)) {
        const KernelProgress& kp = request.run.kernelProgress;
        if (kp) kp(0, 1, kPhaseCompilingModule);
        auto mod = runtime::cuda::compileCuda(
            result.compiled->code.source, cudaCompileOptions(*result.compiled, request.run, request.run.cudaArch), cancel);
        if (mod.ok() && kp) kp(1, 1, kPhaseCompilingModule);
        if (cancel && cancel->isCancelled()) return cancelled(file);
        if (!mod.ok()) return mod.diagnostics();
        result.nvrtcWarnings = mod.diagnostics();
        result.cudaModule = std::make_shared<const runtime::cuda::CudaCompiled>(std::move(*mod));
        if (events.cudaCompiled) events.cudaCompiled(result.cudaModule);
    }
    if (request.compileOnly) return result;

    if (!request.runner) {
        support::DiagnosticList d;
        d.error(file, "run", "no runner to run the kernels in");
        return d;
    }
    auto report = runModel(*result.compiled, prepared.inputs, request.run, *request.runner, cancel);
    if (!report.ok()) return report.diagnostics();
    result.report = std::make_shared<const RunReport>(std::move(*report));
    return result;
}

}  // namespace tessera::pipeline
