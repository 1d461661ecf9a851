#pragma once
/// @file
/// Graphviz DOT text of a graph (`tessera-cli inspect --dot`; no Graphviz library needed). Node labels show op type, name
/// and output shape; edges are labelled with the tensor type they carry. Graph inputs and outputs
/// are drawn as ellipses; initializers are folded into their consumers' labels (count only).
/// Every user-provided string is escaped for DOT (quotes, backslashes, control characters); DOT
/// ids are synthetic (n0, in0, out0) so names never need to be valid identifiers.

#include <string>

#include "core/ir/graph.h"

namespace tessera::ir {

std::string graphToDot(const ir::Graph& g);

}  // namespace tessera::ir
