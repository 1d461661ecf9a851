#pragma once
/// @file
/// Stable, human-readable text form of a graph (used by golden tests and `tessera-cli inspect --ir`).
/// Stable means: same graph -> byte-identical text; nodes in topological order (ties by node order),
/// attributes in import order, constants summarised (dtype, shape, first elements), not dumped.
///
/// Format (one item per line, two spaces of indent per nesting level):
/// @code
/// model ir_version=8 producer="pytorch 2.1" opsets=[""=17, "com.microsoft"=1]
/// graph "main" {
///   input  %x: f32[N,3,224,224]
///   init   %w: f32[32,3,3,3] = [0.1, -0.25, 0.5, 1, ... (864 total)]
///   init   %b: f32[32] = [0, 0, 0, 0, ... (32 total)] (also graph input)
///   %y: f32[N,32,112,112] = Conv "Conv_0" (%x, %w, %b) {pads=[1,1,1,1], strides=[2,2]}
///   %m: f32[N,1] (declared f32[N,2]) = ReduceMean "r" (%y, _) {keepdims=1}
///   %u = com.acme::Custom "c" (%m)  # unregistered op
///   %c: f32[4,8] = tessera::Compute "c" (%a, %b) compute %c[i: 4, j: 8] = sum(k: 16) %a[i, k] * %b[k, j]
///   %z: f32[2] = If "if0" (%cond) {then_branch=graph "then", else_branch=graph "else"}
///     then_branch: graph "then" {
///       ...
///     }
///   output %y: f32[N,32,112,112]
/// }
/// @endcode
/// - Values are `%name` when the name is made of [A-Za-z0-9_.:/-], else `%"escaped"`; node names
///   are always double-quoted; `_` is an omitted optional input; `()` a node without outputs.
/// - A value's type is Value::type; " (declared T)" follows when its onnxType differs.
/// - Constant data shows at most 4 elements (floats as %.6g), then the total count.
/// - Attributes use Attribute::str(), except tensors (`tensor f32[3] [1, 2, 3]`) and graphs
///   (`graph "name"`, whose bodies follow the node line, indented).
/// - With a cycle, nodes are printed in stored order after a `# cycle` comment line.

#include <string>

#include "core/ir/graph.h"

namespace tessera::ir {

std::string printGraph(const Graph& g);
std::string printModel(const Model& m);

}  // namespace tessera::ir
