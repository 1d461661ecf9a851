#pragma once
/// @file
/// Shapes with symbolic dimensions. A dimension is either a known non-negative extent, a named
/// symbol (ONNX dim_param, e.g. "batch"), or unknown. A shape may also have unknown rank.
/// Layout convention: shapes are row-major, outermost first (NCHW for images, as in ONNX).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::ir {

struct Dim {
    std::int64_t value = -1;  ///< extent when known (>= 0), -1 otherwise
    std::string symbol;       ///< name when symbolic; empty otherwise

    static Dim known(std::int64_t v) { return Dim{v, {}}; }
    static Dim symbolic(std::string name) { return Dim{-1, std::move(name)}; }
    static Dim unknown() { return Dim{}; }
    bool isKnown() const { return value >= 0; }
    bool isSymbolic() const { return value < 0 && !symbol.empty(); }
    /// "7", "batch" or "?".
    std::string str() const;
    bool operator==(const Dim& o) const { return value == o.value && symbol == o.symbol; }
};

class Shape {
public:
    Shape() = default;  ///< rank 0 (scalar)
    explicit Shape(std::vector<Dim> dims) : m_dims(std::move(dims)) {}
    static Shape ofKnown(const std::vector<std::int64_t>& dims);
    static Shape unknownRank();

    bool rankKnown() const { return m_rankKnown; }
    std::size_t rank() const { return m_dims.size(); }  ///< 0 when the rank is unknown: check rankKnown()
    const std::vector<Dim>& dims() const { return m_dims; }
    std::vector<Dim>& dims() { return m_dims; }
    const Dim& operator[](std::size_t i) const { return m_dims[i]; }
    Dim& operator[](std::size_t i) { return m_dims[i]; }
    /// True when the rank and every extent are known.
    bool isStatic() const;
    /// Product of the extents; nullopt unless static or on int64 overflow.
    std::optional<std::int64_t> numElements() const;
    /// Known extents; nullopt unless static.
    std::optional<std::vector<std::int64_t>> knownDims() const;
    /// "[1,3,224,224]", "[batch,1000]", "[?,3]" or "[*]" for unknown rank; "[]" for scalars.
    std::string str() const;
    bool operator==(const Shape& o) const { return m_rankKnown == o.m_rankKnown && m_dims == o.m_dims; }
    bool operator!=(const Shape& o) const { return !(*this == o); }

private:
    std::vector<Dim> m_dims;
    bool m_rankKnown = true;
};

}  // namespace tessera::ir
