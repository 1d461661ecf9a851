#pragma once
/// @file
/// JSON form of a graph (nlohmann-json): values, nodes, attributes, inputs/outputs; constant data
/// is summarised by dtype/dims/byte count unless `withData` (then base64 bytes).
/// graphFromJson(toJson(g, true)) gives a structurally equal graph.

#include <nlohmann/json.hpp>

#include "core/ir/graph.h"
#include "core/support/expected.h"

namespace tessera::ir {

nlohmann::json toJson(const Graph& g, bool withData = false);
nlohmann::json toJson(const Model& m, bool withData = false);
support::Expected<Graph> graphFromJson(const nlohmann::json& j);

}  // namespace tessera::ir
