#pragma once
/// @file
/// Structural verifier: unique value and node names, every node input defined (produced, a graph
/// input or an initializer), each value produced at most once, no cycles, graph outputs defined,
/// constant data consistent with its dtype and dims, attributes matching the op schema.
/// Every problem is an Error naming the node or value. Recurses into subgraphs, where values of
/// enclosing graphs are visible (ONNX scoping).

#include <string>

#include "core/ir/graph.h"
#include "core/support/diagnostic.h"

namespace tessera::ir {

support::DiagnosticList verify(const Graph& g, const std::string& file = {});

}  // namespace tessera::ir
