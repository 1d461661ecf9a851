#pragma once
/// @file
/// What the graph view draws: a flat, immutable description of an ir::Graph's nodes and edges.
///
/// Drawn nodes are the graph's operators plus one node per runtime graph input and per graph
/// output. Initializers (weights) are not drawn; the properties panel shows them with the node
/// that reads them. Edges carry the tensor that flows along them (one edge per producer ->
/// consumer pair and value).
///
/// Ids: an operator's drawn id is its ir::NodeId; graph inputs and outputs get ids after the
/// last operator (see GraphSnapshot::nodes[i].kind).
///
/// Thread rules: makeGraphSnapshot only reads the graph and may run on any thread; a snapshot is
/// a value and may be shared read-only between threads.

#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/op_registry.h"

namespace tessera::views {

enum class SnapshotNodeKind { Operator, GraphInput, GraphOutput };

struct SnapshotNode {
    int id = 0;
    SnapshotNodeKind kind = SnapshotNodeKind::Operator;
    ir::NodeId irNode = ir::kNoNode;     ///< for operators
    ir::ValueId value = ir::kNoValue;    ///< for graph inputs/outputs: the value
    std::string opType;                  ///< op type; "Input" / "Output" for graph I/O
    std::string name;                    ///< node or value name (any bytes: treat as data)
    std::string shapeText;               ///< first output's type, e.g. "f32[1,32,112,112]" (+N more)
    ir::OpCategory category = ir::OpCategory::Other;
    bool knownOp = false;                ///< the op is in Tessera's registry
    bool compact = false;                ///< a Constant without inputs: drawn as a small tag
};

struct SnapshotEdge {
    int id = 0;
    int from = 0, to = 0;                ///< drawn node ids
    ir::ValueId value = ir::kNoValue;
    std::string label;                   ///< tensor shape, e.g. "1×32×112×112"
    /// Layout weight: 1 for edges from compact constants, higher for the data path, so the
    /// main chain stays straight instead of being pushed sideways by constant operands.
    int weight = 1;
};

struct GraphSnapshot {
    std::vector<SnapshotNode> nodes;
    std::vector<SnapshotEdge> edges;
    int operatorCount = 0;

    /// Index into nodes for a drawn id, or -1.
    int indexOf(int id) const;
    const SnapshotNode* find(int id) const;

private:
    friend GraphSnapshot makeGraphSnapshot(const ir::Graph& g);
    std::unordered_map<int, int> m_index;
};

GraphSnapshot makeGraphSnapshot(const ir::Graph& g);

/// Compact shape text for edge labels: "1×32×112×112", "batch×1000", "scalar", "?".
std::string compactShape(const ir::TensorType& t);

}  // namespace tessera::views
