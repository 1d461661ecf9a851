// Registers the compute-heavy templates (core/lower/detail/lower_heavy.h) in the template table.
#include "core/lower/detail/lower_heavy.h"
#include "core/lower/detail/lower_templates.h"

namespace tessera::lower::detail {

void registerHeavyTemplates(TemplateTable& table) {
    table["MatMul"] = lowerMatMul;
    table["Gemm"] = lowerGemm;
    table["Conv"] = lowerConv;
    table["MaxPool"] = lowerMaxPool;
    table["AveragePool"] = lowerAveragePool;
    table["GlobalAveragePool"] = lowerGlobalAveragePool;
    table["GlobalMaxPool"] = lowerGlobalMaxPool;
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
        table[op] = lowerReduce;
    table["ArgMax"] = lowerArgMinMax;
    table["ArgMin"] = lowerArgMinMax;
    table["Softmax"] = lowerSoftmax;
    table["LogSoftmax"] = lowerSoftmax;
    table["LayerNormalization"] = lowerLayerNorm;
    table["BatchNormalization"] = lowerBatchNorm;
}

}  // namespace tessera::lower::detail
