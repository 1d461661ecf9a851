#include "core/ir/graph.h"

#include <algorithm>
#include <queue>

namespace tessera::ir {

ValueId Graph::addValue(Value v) {
    if (m_valueByName.count(v.name)) return kNoValue;
    const auto id = static_cast<ValueId>(m_values.size());
    m_valueByName.emplace(v.name, id);
    m_values.push_back(std::move(v));
    m_producer.push_back(kNoNode);
    m_consumers.emplace_back();
    return id;
}

NodeId Graph::addNode(Node n) {
    const auto id = static_cast<NodeId>(m_nodes.size());
    if (!n.name.empty()) m_nodeByName.emplace(n.name, id);
    for (ValueId in : n.inputs) {
        if (in < 0 || static_cast<std::size_t>(in) >= m_values.size()) continue;
        auto& c = m_consumers[static_cast<std::size_t>(in)];
        if (c.empty() || c.back() != id) c.push_back(id);
    }
    for (ValueId out : n.outputs) {
        if (out < 0 || static_cast<std::size_t>(out) >= m_values.size()) continue;
        auto& p = m_producer[static_cast<std::size_t>(out)];
        if (p == kNoNode) p = id;
    }
    m_nodes.push_back(std::move(n));
    return id;
}

ValueId Graph::findValue(std::string_view name) const {
    auto it = m_valueByName.find(std::string(name));
    return it == m_valueByName.end() ? kNoValue : it->second;
}

NodeId Graph::findNode(std::string_view name) const {
    auto it = m_nodeByName.find(std::string(name));
    return it == m_nodeByName.end() ? kNoNode : it->second;
}

std::vector<ValueId> Graph::runtimeInputs() const {
    std::vector<ValueId> out;
    for (ValueId v : m_inputs)
        if (!value(v).isInitializer) out.push_back(v);
    return out;
}

NodeId Graph::producer(ValueId v) const {
    if (v < 0 || static_cast<std::size_t>(v) >= m_producer.size()) return kNoNode;
    return m_producer[static_cast<std::size_t>(v)];
}

const std::vector<NodeId>& Graph::consumers(ValueId v) const {
    static const std::vector<NodeId> kEmpty;
    if (v < 0 || static_cast<std::size_t>(v) >= m_consumers.size()) return kEmpty;
    return m_consumers[static_cast<std::size_t>(v)];
}

void Graph::rebuildIndex() {
    m_valueByName.clear();
    m_nodeByName.clear();
    for (std::size_t i = 0; i < m_values.size(); ++i) m_valueByName.emplace(m_values[i].name, static_cast<ValueId>(i));
    m_producer.assign(m_values.size(), kNoNode);
    m_consumers.assign(m_values.size(), {});
    std::vector<Node> nodes = std::move(m_nodes);
    m_nodes.clear();
    for (auto& n : nodes) addNode(std::move(n));
}

std::optional<std::vector<NodeId>> Graph::topologicalOrder() const {
    const std::size_t n = m_nodes.size();
    std::vector<int> indegree(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        for (ValueId in : m_nodes[i].inputs) {
            const NodeId p = producer(in);
            if (p != kNoNode) ++indegree[i];
        }
    }
    // Min-heap on node id keeps the order stable: ties go to the earlier node.
    std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
    for (std::size_t i = 0; i < n; ++i)
        if (indegree[i] == 0) ready.push(static_cast<NodeId>(i));
    std::vector<NodeId> order;
    order.reserve(n);
    while (!ready.empty()) {
        const NodeId id = ready.top();
        ready.pop();
        order.push_back(id);
        for (ValueId out : m_nodes[static_cast<std::size_t>(id)].outputs) {
            if (producer(out) != id) continue;
            for (NodeId c : consumers(out)) {
                // A consumer may read the same value through several inputs.
                for (ValueId in : m_nodes[static_cast<std::size_t>(c)].inputs)
                    if (in == out && --indegree[static_cast<std::size_t>(c)] == 0) ready.push(c);
            }
        }
    }
    if (order.size() != n) return std::nullopt;
    return order;
}

std::vector<NodeId> Graph::nodesOnCycles() const {
    // Nodes left after peeling zero-indegree nodes (forward) and zero-outdegree nodes (backward).
    const std::size_t n = m_nodes.size();
    std::vector<char> alive(n, 1);
    bool changed = true;
    while (changed) {
        changed = false;
        for (std::size_t i = 0; i < n; ++i) {
            if (!alive[i]) continue;
            bool hasLivePred = false, hasLiveSucc = false;
            for (ValueId in : m_nodes[i].inputs) {
                const NodeId p = producer(in);
                if (p != kNoNode && alive[static_cast<std::size_t>(p)]) hasLivePred = true;
            }
            for (ValueId out : m_nodes[i].outputs)
                for (NodeId c : consumers(out))
                    if (alive[static_cast<std::size_t>(c)]) hasLiveSucc = true;
            if (!hasLivePred || !hasLiveSucc) {
                alive[i] = 0;
                changed = true;
            }
        }
    }
    std::vector<NodeId> out;
    for (std::size_t i = 0; i < n; ++i)
        if (alive[i]) out.push_back(static_cast<NodeId>(i));
    return out;
}

std::int64_t Model::defaultOpset() const {
    auto it = opsets.find("");
    return it == opsets.end() ? 0 : it->second;
}

}  // namespace tessera::ir
