#include "core/pipeline/conformance_run.h"

#include "core/eval/compare.h"
#include "core/lower/lower.h"

namespace tessera::pipeline {

namespace {
ConformanceResult result(ConformanceStatus s, std::string message) {
    ConformanceResult r;
    r.status = s;
    r.message = std::move(message);
    return r;
}

std::string firstMessage(const support::DiagnosticList& d) {
    const auto* e = d.firstError();
    if (!e && !d.items().empty()) e = &d.items().front();
    if (!e) return "unknown error";
    return e->where.empty() ? e->message : e->where + ": " + e->message;
}
}  // namespace

ConformanceResult runConformanceCompiled(const ConformanceCase& c, int dataSet, runtime::RunnerClient& runner,
                                         const RunOptions& options, const support::CancelToken* cancel) {
    if (auto why = knownTestDataIssue(c.name); !why.empty()) return result(ConformanceStatus::Skipped, why);
    if (c.nonTensorData) return result(ConformanceStatus::Skipped, "sequence, optional or map data");
    auto data = loadConformanceData(c, dataSet);
    if (!data.ok()) return result(ConformanceStatus::Skipped, firstMessage(data.diagnostics()));
    for (const auto& n : data->model.graph.nodes())
        if (!lower::hasGenerator(n))
            return result(ConformanceStatus::Skipped, "no code generator for op '" + n.opType + "'");
    CompileOptions copts;
    auto cm = compileModel(data->model, data->inputs, copts, cancel);
    if (!cm.ok() && lower::isUnsupportedForm(cm.diagnostics()))
        return result(ConformanceStatus::Skipped, "form not claimed: " + firstMessage(cm.diagnostics()));
    if (!cm.ok()) return result(ConformanceStatus::Error, firstMessage(cm.diagnostics()));
    RunOptions ropts = options;
    ropts.check = false;
    ropts.time = false;
    auto rep = runModel(*cm, data->inputs, ropts, runner, cancel);
    if (!rep.ok()) return result(ConformanceStatus::Error, firstMessage(rep.diagnostics()));
    ConformanceResult r;
    r.status = ConformanceStatus::Passed;
    if (rep->outputs.size() != data->expected.size())
        return result(ConformanceStatus::Failed, "expected " + std::to_string(data->expected.size()) + " outputs, got " +
                                                     std::to_string(rep->outputs.size()));
    for (std::size_t i = 0; i < data->expected.size(); ++i) {
        const auto& actual = rep->outputs[i].second;
        auto cmp = eval::compareTensors(actual, data->expected[i]);
        if (!cmp.ok && r.status == ConformanceStatus::Passed) {
            r.status = ConformanceStatus::Failed;
            r.message = "output '" + rep->outputs[i].first + "': " + cmp.summary();
        }
        r.outputs.push_back(std::move(cmp));
    }
    return r;
}

}  // namespace tessera::pipeline
