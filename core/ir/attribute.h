#pragma once
/// @file
/// Typed node attributes, mirroring ONNX AttributeProto (int, float, string, tensor, graph and
/// their list forms). Subgraphs (If/Loop/Scan bodies) are kept as Graph attributes, not lowered.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/tensor.h"

namespace tessera::ir {

class Graph;

enum class AttrType { Undefined, Int, Float, String, Tensor, Graph, Ints, Floats, Strings, Tensors, Graphs };

/// "int", "float", "string", "tensor", "graph", "ints", "floats", "strings", "tensors", "graphs".
const char* attrTypeName(AttrType t);

struct Attribute {
    AttrType type = AttrType::Undefined;
    std::int64_t i = 0;
    double f = 0.0;
    std::string s;
    std::vector<std::int64_t> ints;
    std::vector<double> floats;
    std::vector<std::string> strings;
    std::shared_ptr<const TensorData> t;
    std::vector<std::shared_ptr<const TensorData>> tensors;
    std::shared_ptr<Graph> g;
    std::vector<std::shared_ptr<Graph>> graphs;

    static Attribute ofInt(std::int64_t v);
    static Attribute ofFloat(double v);
    static Attribute ofString(std::string v);
    static Attribute ofInts(std::vector<std::int64_t> v);
    static Attribute ofFloats(std::vector<double> v);
    static Attribute ofStrings(std::vector<std::string> v);
    static Attribute ofTensor(std::shared_ptr<const TensorData> v);
    static Attribute ofGraph(std::shared_ptr<Graph> v);

    /// Short stable text: "3", "1.5", "\"SAME_UPPER\"", "[1,1,1,1]", "<tensor f32[3]>", "<graph body: 4 nodes>".
    std::string str() const;
};

}  // namespace tessera::ir
