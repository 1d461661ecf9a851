#pragma once
/// @file
/// Preparing a model for code generation: shape specialisation and constant folding.
///
/// Semantics
/// - `specialiseModel` binds every runtime input to the shape of the tensor fed for it (symbolic
///   dims such as a batch "N" take that extent; the same symbol must get the same extent
///   everywhere), re-runs shape inference, then folds constants: every node whose inputs are all
///   constants (initializers, Constant nodes, earlier folded values; absent optional inputs are
///   fine) and that has no subgraph attribute is evaluated once by the reference interpreter and
///   removed; its outputs become initializers holding the result. Shape computations such as
///   Shape -> Gather -> Concat -> Reshape thereby disappear before lowering. Folding runs during
///   shape inference, node by node in topological order, and Shape/Size fold as soon as their
///   input's shape is known (whatever its values), so shapes computed from shapes become concrete
///   (as onnx-simplifier and ONNX Runtime's constant folding do). An If whose condition folds to
///   a constant is replaced by the branch it takes (its nodes named "<If>/<node>"), and folding
///   runs again. Shape inference runs again at the end, so every remaining value has the
///   concrete type the kernels are built for; a value whose extent depends on data (NonZero,
///   a Reshape fed by a runtime tensor) stays unknown and lowering names the node that decides it.
/// - Shape operands: a runtime input consumed at an operand that decides shapes or indexing
///   (Reshape's shape, Expand's shape, Tile's repeats, Slice's starts/ends/axes/steps, Pad's pads
///   and constant_value, Squeeze/Unsqueeze/Reduce* axes, Split's split, ConstantOfShape's shape,
///   Range's operands, TopK's k, Dropout's ratio/training_mode, Resize's roi/scales/sizes) is bound
///   to the value fed for it: it becomes an initializer, and the compiled kernels are specialised
///   to that value (as they are to the fed shapes). `keptInputs` receives, for each runtime input
///   of the result, its index in `runtimeInputs`.
/// - A fed tensor may be shape-only (ir::TensorData::isShapeOnly: dims, no elements) when only
///   the compile needs it: it binds the shape; as a shape operand it is an error (its values are
///   needed). Running the compiled model needs every input's elements.
/// - Value ids are preserved (the result's graph has the same values in the same order); node
///   ids are not (folded nodes are gone). Node names are preserved.
/// - `singleNodeGraph` makes a graph of one node of `g`: its non-constant inputs become runtime
///   inputs (in the node's input order), constant inputs initializers, its outputs graph outputs.
///   Values its If/Loop/Scan bodies read by name (eval::subgraphInputs) follow as further
///   inputs/initializers. Used to fold constants and to run one node in the reference interpreter.
///
/// Errors: a fed tensor of the wrong rank, extent or dtype (naming the input and both shapes),
/// too few or too many inputs, a folding failure (naming the node), shape-inference errors.
/// Thread rules: pure functions; may run on any thread.

#include <vector>

#include "core/ir/graph.h"
#include "core/ir/tensor.h"
#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::pipeline {

struct SpecialiseStats {
    int foldedNodes = 0;
    int boundInputs = 0;  ///< runtime inputs bound as shape operands
};

support::Expected<ir::Model> specialiseModel(const ir::Model& model, const std::vector<ir::TensorData>& runtimeInputs,
                                             SpecialiseStats* stats = nullptr,
                                             const support::CancelToken* cancel = nullptr,
                                             std::vector<std::size_t>* keptInputs = nullptr);

/// True when input slot `slot` of an op of type `opType` decides shapes or indexing (see above).
bool isShapeOperand(const std::string& opType, std::size_t slot);

/// True when value `v` is read by some node at a shape operand (isShapeOperand): its values, not
/// only its shape, decide the compiled kernels.
bool feedsShapeOperand(const ir::Graph& g, ir::ValueId v);

/// Checks a fed tensor against the declared type of graph input `v` (dtype and every known
/// extent; symbolic extents are bound in `bindings`). Error text names the input and both shapes,
/// e.g. "input 'x': expected f32[1,3,224,224], got f32[1,3,32,32]".
support::DiagnosticList checkFedInput(const ir::Graph& g, ir::ValueId v, const ir::TensorData& fed,
                                      std::vector<std::pair<std::string, std::int64_t>>& bindings,
                                      const std::string& file = {});

ir::Graph singleNodeGraph(const ir::Graph& g, ir::NodeId n);

/// A graph of several nodes of `g` (a fusion group, in the order given, which must be
/// topological): values the nodes read that none of them produces become runtime inputs (in
/// first-use order) or initializers (constants); `outputs` (values produced by the nodes) become
/// its graph outputs, in that order. Used to run a fused kernel's reference.
ir::Graph groupGraph(const ir::Graph& g, const std::vector<ir::NodeId>& nodes, const std::vector<ir::ValueId>& outputs);

/// A graph with the same values as `g` and only the nodes for which keep(node id) is true (in
/// their original order); producer/consumer indices rebuilt.
ir::Graph filterNodes(const ir::Graph& g, const std::vector<bool>& keep);

}  // namespace tessera::pipeline
