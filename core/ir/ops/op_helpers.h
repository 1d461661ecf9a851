#pragma once
/// @file
/// Private helpers shared by the op registry's definition files (core/ir/ops/*.cpp). Not a public
/// header: only op_registry.cpp and the ops files include it.
///
/// Conventions used by every shape function here:
/// - never throw and never index out of range: every rank, attribute and constant is checked
///   before use; a malformed node yields InferResult::error (one line, no node name: the caller
///   prefixes "node 'X' (Op)");
/// - unknown or symbolic extents propagate: a symbol survives where the op keeps that extent
///   unchanged, arithmetic on a non-known extent gives an unknown extent, and an unknown rank
///   gives an unknown-rank output;
/// - integer arithmetic on extents is overflow-checked (absurd dims give an error, not UB).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/op_registry.h"

namespace tessera::ir::ops {

/// Largest extent a shape function accepts for a single dimension (2^40); larger is "absurd".
constexpr std::int64_t kMaxExtent = std::int64_t{1} << 40;

InferResult fail(std::string message);
InferResult single(TensorType t);
TensorType makeType(DType dt, Shape s);

/// Checked helpers: nullopt on overflow.
std::optional<std::int64_t> mulChecked(std::int64_t a, std::int64_t b);
std::optional<std::int64_t> addChecked(std::int64_t a, std::int64_t b);
/// Product of all extents of t.shape; nullopt unless static or on overflow.
std::optional<std::int64_t> numel(const TensorType& t);
/// Product of a list of factors with overflow check.
std::optional<std::int64_t> product(std::initializer_list<std::optional<std::int64_t>> factors);

/// Type of input i or an Undefined/unknown-rank type if the input is absent.
const TensorType& inputType(const InferContext& c, std::size_t i);
bool hasInput(const InferContext& c, std::size_t i);

/// Normalises axis into [0, rank); nullopt when out of [-rank, rank).
std::optional<std::int64_t> normalizeAxis(std::int64_t axis, std::int64_t rank);

/// Numpy-style multidirectional broadcast of several shapes. On incompatible known extents sets
/// `error` to "cannot broadcast [a] and [b]" (naming both shapes).
std::optional<Shape> broadcastShapes(const std::vector<Shape>& shapes, std::string& error);

/// Merges two extents that must be equal (Concat's non-axis dims, MatMul's K...): known wins over
/// symbolic/unknown; nullopt when both are known and differ.
std::optional<Dim> mergeEqualDims(const Dim& a, const Dim& b);

/// Integer list from constant input i (any integer dtype); nullopt when not constant or not integral.
std::optional<std::vector<std::int64_t>> constantInts(const InferContext& c, std::size_t i);

/// Attribute helpers that see whether an attribute is present at all.
const Attribute* attrOf(const InferContext& c, const char* name, AttrType type);

/// ONNX TensorProto.DataType code -> DType (Undefined for unknown codes).
DType dtypeFromOnnxCode(std::int64_t code);

// Registration entry points, one per definition file.
void registerElementwiseOps(std::vector<OpSchema>& out);
void registerNnOps(std::vector<OpSchema>& out);
void registerReductionOps(std::vector<OpSchema>& out);
void registerDataMovementOps(std::vector<OpSchema>& out);
void registerControlFlowOps(std::vector<OpSchema>& out);
void registerComputeOps(std::vector<OpSchema>& out);
/// Wraps the shape functions of ops with ONNX type constraints (same T, float-only ...); dtype_rules.cpp.
void applyDtypeRules(std::vector<OpSchema>& schemas);

/// Shorthand for building attribute schemas.
AttrSchema attr(std::string name, AttrType type, bool required = false);
AttrSchema attrDefault(std::string name, Attribute dflt);

}  // namespace tessera::ir::ops
