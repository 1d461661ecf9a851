#pragma once
/// @file
/// Operator nodes. Inputs and outputs are ValueIds into the owning Graph; an omitted optional
/// input (ONNX empty name) is kNoValue. Attributes keep their import order.
/// A node of op type "Compute" in domain "tessera" carries its definition in `compute`
/// (core/ir/compute.h); other nodes leave it null.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/attribute.h"

namespace tessera::ir {

using ValueId = std::int32_t;
using NodeId = std::int32_t;
constexpr ValueId kNoValue = -1;
constexpr NodeId kNoNode = -1;

struct ComputeDef;
/// Op type and domain of compute-definition nodes.
inline constexpr const char* kComputeOpType = "Compute";
inline constexpr const char* kTesseraDomain = "tessera";

struct Node {
    std::string name;    ///< unique within a graph after import (empty ONNX names are made unique)
    std::string opType;  ///< e.g. "Conv"
    std::string domain;  ///< "" for the default ONNX domain
    std::vector<ValueId> inputs;
    std::vector<ValueId> outputs;
    std::vector<std::pair<std::string, Attribute>> attributes;
    std::shared_ptr<const ComputeDef> compute;  ///< set for "tessera::Compute" nodes only

    const Attribute* attr(std::string_view name) const;
    bool hasAttr(std::string_view name) const { return attr(name) != nullptr; }
    /// Typed accessors with defaults; return the default when absent or of another type.
    std::int64_t attrInt(std::string_view name, std::int64_t dflt) const;
    double attrFloat(std::string_view name, double dflt) const;
    std::string attrString(std::string_view name, std::string dflt) const;
    std::vector<std::int64_t> attrInts(std::string_view name, std::vector<std::int64_t> dflt = {}) const;
    std::vector<double> attrFloats(std::string_view name, std::vector<double> dflt = {}) const;
    void setAttr(std::string name, Attribute a);  ///< replaces an existing attribute of that name
};

}  // namespace tessera::ir
