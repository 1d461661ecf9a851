#pragma once
/// @file
/// Stable, human-readable text form of a graph (used by golden tests and `tessera-cli inspect --ir`).
/// Stable means: same graph -> byte-identical text; nodes in topological order (ties by node order),
/// attributes in import order, constants summarised (dtype, shape, first elements), not dumped.

#include <string>

#include "core/ir/graph.h"

namespace tessera::ir {

std::string printGraph(const Graph& g);
std::string printModel(const Model& m);

}  // namespace tessera::ir
