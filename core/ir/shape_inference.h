#pragma once
/// @file
/// Whole-graph shape inference with the op registry, in topological order.
/// Sets Value::type for node outputs. Where a value also has an onnxType (declared or inferred by
/// ONNX) and it disagrees with ours, a Warning names the value and both types.
/// Subgraph bodies (If/Loop/Scan attributes) are inferred too, before their node: values a body
/// uses from an enclosing graph take that graph's types (ONNX scoping). Diagnostics inside a body
/// are prefixed with the path "node 'If_0' (If) / then_branch: ". The control-flow nodes
/// themselves are not in the registry: their outputs keep their declared types.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/ir/graph.h"
#include "core/support/diagnostic.h"

namespace tessera::ir {

struct ShapeInferenceResult {
    support::DiagnosticList diagnostics;  ///< errors (node named) and disagreement warnings
    int disagreements = 0;                ///< values where our type != onnxType
    int inferredNodes = 0;                ///< nodes whose outputs we inferred
    int unknownOps = 0;                   ///< nodes whose op is not in the registry
};

/// Called after each top-level node's outputs were typed, in topological order. It may give the
/// node's outputs constant data (Value::data, as constant folding does): later nodes' inference
/// then sees those constants (a Reshape whose shape operand was folded gets a concrete shape).
/// It must not add or remove nodes or values.
using NodeHook = std::function<void(Graph&, NodeId)>;

/// Infers types of every node output. `file` is used in diagnostics. Never throws (unless the
/// hook does). Precondition: the graph is acyclic (run the verifier first); on a cycle it
/// reports an error.
ShapeInferenceResult inferShapes(Graph& g, const std::string& file = {}, const NodeHook& afterNode = {});

/// FLOPs of node n with the current value types; nullopt when unknown (unknown op or dynamic shape).
std::optional<std::int64_t> nodeFlops(const Graph& g, NodeId n);
/// Sum of nodeFlops over the graph (unknown nodes count 0).
std::int64_t totalFlops(const Graph& g);

}  // namespace tessera::ir
