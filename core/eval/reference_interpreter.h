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
/// - Arithmetic: every element is held and computed in **double** inside an op, whatever the
///   tensor's dtype (integers are exact up to 2^53; reductions, dot products and normalisation
///   statistics accumulate in double). Each node output is then *stored as its dtype* (the graph's
///   Value::type, else the dtype the op produces): f32, f16 and bf16 values are rounded to float,
///   as a framework holding the tensor would, so the next op sees what a generated kernel sees;
///   integer and bool values are already exact. Other roundings follow the semantics: a Cast (or a
///   Compute cast) to an integer type truncates toward zero, to bool gives 0/1; integer Div
///   truncates (ONNX). Graph outputs (and evaluateAll's values) are converted to their dtype, so an
///   f32 model gives f32 outputs; f16/bf16 round to nearest even at that point.
/// - Shapes come from the runtime inputs, not from the declared types: symbolic dims (e.g. a
///   batch "N") take the size of the fed tensor. A declared known extent that disagrees with the
///   fed tensor is an error. auto_pad (SAME_UPPER, SAME_LOWER, VALID) and ceil_mode are computed
///   as the ONNX spec says.
/// - Supported ops (default domain; attribute and input forms of every opset the importer accepts,
///   e.g. Reduce*/Squeeze/Unsqueeze axes as attribute or input, Clip min/max as attributes or
///   inputs, Slice/Pad/Split/TopK/Resize before and after their inputs became tensors):
///   * element-wise: Add Sub Mul Div Pow Mod Min Max Sum Mean (numpy broadcasting), PRelu, Equal
///     Less Greater LessOrEqual GreaterOrEqual, And Or Xor Not, BitShift, Where, Relu Clip Sigmoid
///     Tanh Erf Exp Log Sqrt Neg Abs Reciprocal Floor Ceil Round Sign, Sin Cos Tan Asin Acos Atan
///     Sinh Cosh Asinh Acosh Atanh, Softplus Softsign Mish Gelu HardSwish HardSigmoid LeakyRelu Elu
///     Selu Celu ThresholdedRelu Shrink, IsNaN IsInf, Cast CastLike;
///   * linear algebra: MatMul, Gemm, Einsum, Det, MatMulInteger, QLinearMatMul;
///   * windows: Conv ConvTranspose ConvInteger QLinearConv (N-D, groups, output_padding,
///     output_shape), MaxPool (with Indices, storage_order) AveragePool, GlobalAveragePool
///     GlobalMaxPool, MaxUnpool, LRN;
///   * normalisation: BatchNormalization (inference, and training_mode with running statistics),
///     LayerNormalization (Mean and InvStdDev outputs), InstanceNormalization,
///     MeanVarianceNormalization, Softmax LogSoftmax Hardmax;
///   * reductions: ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2
///     ReduceSumSquare ReduceLogSum ReduceLogSumExp, ArgMax ArgMin (select_last_index), CumSum,
///     TopK;
///   * data movement: Flatten Reshape Transpose Concat Split Slice Pad (constant, reflect, edge,
///     wrap) Expand Tile Squeeze Unsqueeze Gather GatherElements GatherND ScatterElements Scatter
///     ScatterND DepthToSpace SpaceToDepth Trilu Compress NonZero OneHot ReverseSequence EyeLike,
///     Resize (nearest/linear/cubic, every coordinate_transformation_mode) Upsample;
///   * sources: Identity Dropout (inference, or training with ratio 0) Constant ConstantOfShape
///     Shape Size Range, HannWindow HammingWindow BlackmanWindow;
///   * quantisation: QuantizeLinear DequantizeLinear DynamicQuantizeLinear;
///   * losses: NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss;
///   * control flow: If, Loop (opset 1-13 tensor form: optional M and cond, loop-carried values,
///     scan outputs stacked along a new axis 0; without cond the body's cond output is ignored),
///     Scan (opset 9+ with scan_input/output axes and directions; the opset-8 form, recognised by
///     its extra first input sequence_lens, with its batch axis and `directions`, sequence_lens
///     absent or equal to the full length). Subgraph bodies see every enclosing graph's values
///     by name (ONNX scoping, innermost first); each iteration's outputs are stored as their dtype
///     like any node output. An error inside a body is reported on the control-flow node, its
///     message naming the subgraph and inner node ("in subgraph 'body' > node 'x' (Add): ...").
///     Every iteration polls `cancel`; Loop stops with an error after
///     ReferenceOptions::maxLoopIterations iterations, and a stacked scan output over
///     maxElements fails as soon as it exceeds it;
///   * and `tessera::Compute`.
///   Softmax/LogSoftmax/Hardmax use opset-13 semantics (one axis, default -1) unless
///   ReferenceOptions::opset is below 13 (coerce to 2-D at axis, default 1).
///   Not implemented (the ONNX 1.12 node tests that need them are skipped): sequences/optionals
///   (also as If/Loop values), RNN/GRU/LSTM, GridSample, RoiAlign, NonMaxSuppression, DFT/
///   STFT/MelWeightMatrix, Unique, TfIdfVectorizer, string ops, and random ops (Bernoulli,
///   RandomUniform..., training-mode Dropout).
///
/// Errors (diagnostics with `where` = "node 'name' (Op)", never exceptions): an op or an op feature
/// without a reference implementation (message kNoReferenceImplementation, or that text followed by
/// " for <feature>"), a missing or mis-shaped runtime
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

namespace tessera::eval {

struct ReferenceOptions {
    /// Largest tensor (elements) any value may have; 2^26 elements = 512 MiB of doubles.
    std::int64_t maxElements = std::int64_t{1} << 26;
    /// Most iterations one Loop node may run (a runaway loop fails with an error naming the node;
    /// `cancel` is also polled every iteration). Scan is bounded by its input's length.
    std::int64_t maxLoopIterations = std::int64_t{1} << 20;
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

/// Message of the diagnostic for a node whose op has no reference implementation; an unsupported
/// feature of a supported op gives this text followed by " for <feature>". Callers that sort
/// failures (the conformance runner) test for it as a prefix.
inline constexpr const char* kNoReferenceImplementation = "no reference implementation";

/// Values of `g` that the subgraphs of node `id` (If/Loop/Scan bodies, nested bodies included)
/// read by name rather than as node inputs (ONNX outer-scope references), sorted by id. A caller
/// that runs the node on its own (a single-node graph, an arena slot per input) must provide
/// these too. Empty for nodes without subgraphs or an id out of range.
std::vector<ir::ValueId> subgraphInputs(const ir::Graph& g, ir::NodeId id);

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

}  // namespace tessera::eval
