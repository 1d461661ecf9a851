#pragma once
/// @file
/// Building constant tensors for DSL initializers (docs/dsl.md §4.2): element stores for every
/// numeric dtype and the portable `random(seed=...)` generator (`npy("...")` files are read by
/// ir::parseNpy, core/ir/npy.h).
///
/// Errors are returned as one-line messages (the caller attaches the source range).
/// Thread rules: pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/tensor.h"

namespace tessera::frontend::dsl {

/// A zero-filled tensor of `dtype` and `dims`, or an error when the size exceeds maxBytes or
/// the dtype has no fixed size (string tensors get empty strings).
std::optional<ir::TensorData> makeZeroTensor(ir::DType dtype, const std::vector<std::int64_t>& dims,
                                             std::int64_t maxBytes, std::string& error);

/// Stores element i: floats rounded to nearest (f16/bf16 round to nearest even), integers
/// truncated toward zero and clamped to the type's range, bool = (v != 0).
void storeElement(ir::TensorData& t, std::int64_t i, double v);
/// Exact for integer types (no round trip through double).
void storeIntElement(ir::TensorData& t, std::int64_t i, std::int64_t v);

/// splitmix64 stream: the same seed gives the same numbers on every machine.
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : m_state(seed) {}
    std::uint64_t next();
    /// Uniform in [0, 1) with 53 bits.
    double uniform();

private:
    std::uint64_t m_state;
};

/// Fills `t` as `random(seed, low, high)` specifies.
void fillRandom(ir::TensorData& t, std::uint64_t seed, double low, double high);

}  // namespace tessera::frontend::dsl
