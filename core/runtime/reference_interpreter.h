#pragma once
/// @file
/// Reference interpreter: a plain, obviously-correct evaluation of a graph on the host, used to
/// check generated kernels (issue 4) and as the fallback that shows the right answer.
///
/// Semantics
/// - Nodes run in topological order. Every operator follows its ONNX operator specification
///   (https://onnx.ai/onnx/operators/); `tessera::Compute` nodes follow core/ir/compute.h (index
///   notation evaluated by looping over the output axes and, inside each Reduce, its axes;
///   integer `/` and `%` are floor division and the matching remainder).
/// - Arithmetic: every element is held and computed in **double**, whatever the tensor's dtype
///   (integers are exact up to 2^53). Values are rounded only where the semantics require it: a
///   Cast (or a Compute cast) to an integer type truncates toward zero, to bool gives 0/1, to f32
///   or f16/bf16 rounds through float; integer Div truncates (ONNX). Graph outputs are converted
///   to the dtype the graph gives them (Value::type, else the dtype of the producing node's first
///   input), so an f32 model gives f32 outputs that are the double result rounded once.
/// - Shapes come from the runtime inputs, not from the declared types: symbolic dims (e.g. a
///   batch "N") take the size of the fed tensor. A declared known extent that disagrees with the
///   fed tensor is an error. auto_pad (SAME_UPPER, SAME_LOWER, VALID) and ceil_mode are computed
///   as the ONNX spec says.
/// - Supported ops: Add Sub Mul Div Pow Min Max Sum Mean (numpy broadcasting), Equal Less
///   Greater LessOrEqual GreaterOrEqual Where, Relu Clip Sigmoid Tanh Erf Exp Log Sqrt Neg Abs
///   Reciprocal Floor Ceil Sin Cos Softplus Gelu HardSwish HardSigmoid LeakyRelu Elu, MatMul,
///   Gemm, Conv (N-D, groups), MaxPool AveragePool (N-D), GlobalAveragePool GlobalMaxPool,
///   BatchNormalization (inference), Softmax LogSoftmax, ReduceMean ReduceSum ReduceMax
///   ReduceMin ReduceProd, Flatten Reshape Transpose Concat Identity Dropout Constant Shape
///   Squeeze Unsqueeze Gather Cast, and Compute. Softmax/LogSoftmax use opset-13 semantics
///   (one axis, default -1) unless ReferenceOptions::opset is below 13 (coerce to 2-D at axis,
///   default 1).
///
/// Errors (diagnostics with `where` = "node 'name' (Op)", never exceptions): an op without a
/// reference implementation ("no reference implementation"), a missing or mis-shaped runtime
/// input (naming the input and both shapes), a shape the op cannot accept, a tensor of more
/// than ReferenceOptions::maxElements elements, a Compute read out of range or an extent that is
/// neither known nor bound by an input, cancellation.
///
/// Thread rules: reentrant; the graph is only read, so several evaluations of one graph may run
/// on different threads. `cancel` is polled between nodes and inside long loops.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/tensor.h"
#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::runtime {

struct ReferenceOptions {
    /// Largest tensor (elements) any value may have; 2^26 elements = 512 MiB of doubles.
    std::int64_t maxElements = std::int64_t{1} << 26;
    /// Default-domain opset of the model (ir::Model::defaultOpset()); 0 = newest semantics.
    std::int64_t opset = 0;
    /// File name used in diagnostics.
    std::string file;
};

/// Evaluates `g` on `runtimeInputs`, given in g.runtimeInputs() order (graph inputs that are not
/// initializers). Returns the graph outputs in g.outputs() order, each with its graph dtype and
/// the shape computed from the inputs.
support::Expected<std::vector<ir::TensorData>> evaluate(const ir::Graph& g,
                                                        const std::vector<ir::TensorData>& runtimeInputs,
                                                        const support::CancelToken* cancel = nullptr);
support::Expected<std::vector<ir::TensorData>> evaluate(const ir::Graph& g,
                                                        const std::vector<ir::TensorData>& runtimeInputs,
                                                        const ReferenceOptions& options,
                                                        const support::CancelToken* cancel = nullptr);

/// Message of the diagnostic for a node whose op has no reference implementation (callers that
/// sort failures, such as the conformance runner, compare against it).
inline constexpr const char* kNoReferenceImplementation = "no reference implementation";

/// Every value one evaluation computed, so that a kernel's outputs can be checked against the
/// reference value of the same tensor.
struct ReferenceValues {
    /// Indexed by ir::ValueId (size g.numValues()): the runtime inputs as fed and every node output,
    /// each converted to its graph dtype (Value::type.dtype, else the dtype the op produced) and
    /// rounded once from double. nullopt for initializers (their data is in the graph), for values
    /// no node produced, and for values of string type.
    std::vector<std::optional<ir::TensorData>> values;
    /// The graph outputs in g.outputs() order (same tensors as evaluate() returns).
    std::vector<ir::TensorData> outputs;

    /// values[id] when set, else nullptr (also for ids out of range or kNoValue).
    const ir::TensorData* value(ir::ValueId id) const;
};

/// Like evaluate(), but keeps every intermediate value (memory: all of them at once, converted to
/// their dtype). Errors are those of evaluate().
support::Expected<ReferenceValues> evaluateAll(const ir::Graph& g, const std::vector<ir::TensorData>& runtimeInputs,
                                               const ReferenceOptions& options = {},
                                               const support::CancelToken* cancel = nullptr);

}  // namespace tessera::runtime
