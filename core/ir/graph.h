#pragma once
/// @file
/// The graph IR: values (tensors flowing along edges) and nodes (operators).
///
/// Semantics
/// - Every value has a unique name and at most one producer: a node output, a graph input or an
///   initializer (constant with data). Graph outputs are values listed in outputs().
/// - Shapes follow ONNX: row-major, NCHW for images, numpy broadcasting for elementwise ops.
/// - `type` is Tessera's own inferred type (core/ir/shape_inference.h); `onnxType` is what the
///   model declared or ONNX shape inference produced, kept so the two can be compared.
/// - Who may mutate: the importer or parser building a graph, then passes on their own copy.
///   After construction a Graph is treated as immutable and may be read from any thread.
/// - Producer/consumer indices are rebuilt by rebuildIndex(); mutating helpers keep them valid.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ir/node.h"
#include "core/ir/program_schedule.h"
#include "core/ir/tensor.h"

namespace tessera::ir {

struct Value {
    std::string name;
    TensorType type;                          ///< Tessera's inferred (or declared) type
    std::optional<TensorType> onnxType;        ///< declared in the model / inferred by ONNX, if any
    std::shared_ptr<const TensorData> data;    ///< constant data for initializers
    bool isGraphInput = false;                 ///< listed as a graph input (initializers may also be)
    bool isInitializer = false;
    bool isGraphOutput = false;
};

class Graph {
public:
    std::string name;
    std::string docString;

    /// Adds a value; its name must be unique (returns kNoValue if taken).
    ValueId addValue(Value v);
    /// Adds a node whose inputs/outputs already exist; updates producer/consumer indices.
    NodeId addNode(Node n);
    ValueId findValue(std::string_view name) const;  ///< kNoValue if absent
    NodeId findNode(std::string_view name) const;    ///< kNoNode if absent

    std::size_t numValues() const { return m_values.size(); }
    std::size_t numNodes() const { return m_nodes.size(); }
    const Value& value(ValueId id) const { return m_values.at(static_cast<std::size_t>(id)); }
    Value& value(ValueId id) { return m_values.at(static_cast<std::size_t>(id)); }
    const Node& node(NodeId id) const { return m_nodes.at(static_cast<std::size_t>(id)); }
    Node& node(NodeId id) { return m_nodes.at(static_cast<std::size_t>(id)); }
    const std::vector<Value>& values() const { return m_values; }
    const std::vector<Node>& nodes() const { return m_nodes; }

    /// Graph inputs in declaration order (initializers also listed as inputs are included;
    /// use value(id).isInitializer to tell them apart).
    std::vector<ValueId>& inputs() { return m_inputs; }
    const std::vector<ValueId>& inputs() const { return m_inputs; }
    std::vector<ValueId>& outputs() { return m_outputs; }
    const std::vector<ValueId>& outputs() const { return m_outputs; }
    std::vector<ValueId>& initializers() { return m_initializers; }
    const std::vector<ValueId>& initializers() const { return m_initializers; }
    /// Graph inputs that are not initializers (what a user must feed).
    std::vector<ValueId> runtimeInputs() const;

    /// Node producing `v`, or kNoNode for graph inputs, initializers and dangling values.
    NodeId producer(ValueId v) const;
    /// Nodes reading `v` (each node once, in node order).
    const std::vector<NodeId>& consumers(ValueId v) const;
    void rebuildIndex();

    /// Nodes in a topological order (stable: ties keep node order); nullopt when there is a cycle.
    std::optional<std::vector<NodeId>> topologicalOrder() const;
    /// Nodes on some cycle (empty when acyclic); for error messages.
    std::vector<NodeId> nodesOnCycles() const;

private:
    std::vector<Value> m_values;
    std::vector<Node> m_nodes;
    std::vector<ValueId> m_inputs, m_outputs, m_initializers;
    std::unordered_map<std::string, ValueId> m_valueByName;
    std::unordered_map<std::string, NodeId> m_nodeByName;
    std::vector<NodeId> m_producer;
    std::vector<std::vector<NodeId>> m_consumers;
};

/// A model: a top-level graph plus the metadata of its file.
struct Model {
    Graph graph;
    std::int64_t irVersion = 0;
    std::map<std::string, std::int64_t> opsets;  ///< domain ("" = default ONNX domain) -> version
    std::string producerName, producerVersion;
    std::string sourcePath;                      ///< file it was loaded from, if any
    ProgramSchedule program;                     ///< schedules and fusion groups of a DSL program

    std::int64_t defaultOpset() const;  ///< opsets[""] or 0
};

}  // namespace tessera::ir
