#pragma once
/// @file
/// Tensor types and constant tensor data. Constant data (ONNX initializers, Constant node values,
/// DSL parameters) keeps its bytes: little-endian, row-major, dtypeSize(dtype) bytes per element.
/// String tensors keep their elements in `strings` instead.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/shape.h"

namespace tessera::ir {

struct TensorType {
    DType dtype = DType::Undefined;
    Shape shape = Shape::unknownRank();

    bool isDefined() const { return dtype != DType::Undefined || shape.rankKnown(); }
    /// "f32[1,3,224,224]".
    std::string str() const;
    bool operator==(const TensorType& o) const { return dtype == o.dtype && shape == o.shape; }
    bool operator!=(const TensorType& o) const { return !(*this == o); }
};

struct TensorData {
    DType dtype = DType::Undefined;
    std::vector<std::int64_t> dims;
    std::vector<std::uint8_t> bytes;     ///< raw little-endian elements (not for String)
    std::vector<std::string> strings;    ///< elements of a String tensor

    std::int64_t numElements() const;  ///< product of dims (1 for a scalar)
    /// Element i converted to double / int64 (any numeric dtype, f16 and bf16 included).
    double elementAsDouble(std::int64_t i) const;
    std::int64_t elementAsInt(std::int64_t i) const;
    std::vector<double> toDoubles() const;
    std::vector<std::int64_t> toInts() const;
    /// True when bytes.size() == numElements() * dtypeSize(dtype) (or strings.size() matches).
    bool sizeConsistent() const;
    /// A tensor that carries its type but none of its elements (no bytes, no strings, at least
    /// one element by its dims): what compile-only callers bind an input's shape with
    /// (pipeline::specialiseModel accepts it for inputs whose values decide no shape).
    bool isShapeOnly() const;
    TensorType type() const;

    static TensorData fromFloats(const std::vector<float>& v, std::vector<std::int64_t> dims);
    static TensorData fromInts(const std::vector<std::int64_t>& v, std::vector<std::int64_t> dims);
};

/// Summary statistics of a numeric constant (for the properties panel and `inspect`).
struct TensorStats {
    double min = 0, max = 0, mean = 0;
    std::int64_t count = 0;
    std::int64_t nonFinite = 0;        ///< NaN or Inf elements (excluded from min/max/mean)
    std::vector<std::int64_t> histogram;  ///< equal-width bins between min and max
};
TensorStats computeStats(const TensorData& t, int bins = 32);

}  // namespace tessera::ir
