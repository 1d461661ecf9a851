#pragma once
/// @file
/// The op registry: for each operator Tessera knows, its attribute schema, input/output arity,
/// shape inference and FLOP count. Semantics follow the ONNX operator specs
/// (https://onnx.ai/onnx/operators/), for default-domain opsets up to 21.
///
/// FLOP convention (used by `inspect`, the planners and the roofline): a multiply-add counts as
/// 2 FLOPs; elementwise arithmetic and comparisons 1 FLOP per output element; transcendental
/// functions (exp, erf, tanh, sigmoid, sqrt, pow) 1 FLOP per element; reductions 1 FLOP per
/// reduced input element; pure data movement (Reshape, Transpose, Concat, Gather ...) 0 FLOPs.
/// Each op's entry documents its own formula.
///
/// Ops not in the registry are still imported, shown and round-tripped; they report
/// "no code generator yet" and get no inferred shapes (declared shapes are kept).
///
/// Thread rules: the registry is built once on first use and is immutable afterwards; lookups
/// are safe from any thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/graph.h"
#include "core/support/diagnostic.h"

namespace tessera::ir {

struct AttrSchema {
    std::string name;
    AttrType type = AttrType::Undefined;
    bool required = false;
    std::optional<Attribute> defaultValue;
};

/// What shape inference and FLOP counting see for one node.
struct InferContext {
    const Graph& graph;
    const Node& node;
    std::vector<TensorType> inputTypes;  ///< one per node input; Undefined type for omitted inputs
    /// Constant data of input i or nullptr: an initializer's data, a Constant node's value
    /// (value, value_float(s), value_int(s)), or the output of a Shape node whose input shape is
    /// static (so Shape -> Reshape chains infer). Never reads past malformed data.
    const TensorData* constantInput(std::size_t i) const;
    /// Storage for constants materialised by constantInput (kept alive as long as the context).
    mutable std::vector<std::shared_ptr<const TensorData>> scratch = {};
};

/// Result of shape inference for one node: one type per output, or an error message.
struct InferResult {
    std::vector<TensorType> outputs;
    std::string error;  ///< non-empty on failure, one line, e.g. "input channels 32 != weight channels 16 * group 1"
    bool ok() const { return error.empty(); }
};

using ShapeFn = std::function<InferResult(const InferContext&)>;
/// FLOPs for one execution of the node given the inferred output types; nullopt when shapes are not static.
using FlopFn = std::function<std::optional<std::int64_t>(const InferContext&, const std::vector<TensorType>& outputs)>;

/// Compute: a Tessera DSL compute definition in index notation (node.compute, core/ir/compute.h).
enum class OpCategory { Elementwise, Reduction, Normalization, Convolution, MatMul, Pooling, DataMovement, Constant, ControlFlow, Compute, Other };
const char* opCategoryName(OpCategory c);

struct OpSchema {
    std::string opType;
    std::string domain;  ///< "" = default ONNX domain
    OpCategory category = OpCategory::Other;
    int minInputs = 0, maxInputs = 0;    ///< maxInputs -1 = variadic
    int minOutputs = 1, maxOutputs = 1;
    std::vector<AttrSchema> attributes;
    ShapeFn inferShapes;
    FlopFn flops;
    bool injective = false;     ///< Hidet's notion: no reduction in the compute definition (Hidet's fuse_operator pass, ASPLOS 2023)
    bool hasCodegen = false;    ///< unused: whether a node has a code generator is lower::hasGenerator(node)
    std::string summary;        ///< one line

    const AttrSchema* findAttr(std::string_view name) const;
};

class OpRegistry {
public:
    static const OpRegistry& instance();
    /// Schema for (domain, opType); "ai.onnx" is treated as "". nullptr when unknown.
    const OpSchema* find(std::string_view domain, std::string_view opType) const;
    std::vector<const OpSchema*> all() const;

private:
    OpRegistry();
    std::vector<OpSchema> m_schemas;
};

/// Checks a node's arity and attributes (required present, types right) against its schema.
/// Appends errors naming the node and attribute; returns false on error. Unknown ops pass.
bool checkNodeAgainstSchema(const Graph& g, NodeId n, const std::string& file, support::DiagnosticList& out);

}  // namespace tessera::ir
