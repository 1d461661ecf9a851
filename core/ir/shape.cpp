#include "core/ir/shape.h"

namespace tessera::ir {

std::string Dim::str() const {
    if (isKnown()) return std::to_string(value);
    if (!symbol.empty()) return symbol;
    return "?";
}

Shape Shape::ofKnown(const std::vector<std::int64_t>& dims) {
    std::vector<Dim> d;
    d.reserve(dims.size());
    for (auto v : dims) d.push_back(Dim::known(v));
    return Shape(std::move(d));
}

Shape Shape::unknownRank() {
    Shape s;
    s.m_rankKnown = false;
    return s;
}

bool Shape::isStatic() const {
    if (!m_rankKnown) return false;
    for (const auto& d : m_dims)
        if (!d.isKnown()) return false;
    return true;
}

std::optional<std::int64_t> Shape::numElements() const {
    if (!isStatic()) return std::nullopt;
    std::int64_t n = 1;
    for (const auto& d : m_dims) {
        if (__builtin_mul_overflow(n, d.value, &n)) return std::nullopt;
    }
    return n;
}

std::optional<std::vector<std::int64_t>> Shape::knownDims() const {
    if (!isStatic()) return std::nullopt;
    std::vector<std::int64_t> out;
    out.reserve(m_dims.size());
    for (const auto& d : m_dims) out.push_back(d.value);
    return out;
}

std::string Shape::str() const {
    if (!m_rankKnown) return "[*]";
    std::string s = "[";
    for (std::size_t i = 0; i < m_dims.size(); ++i) {
        if (i) s += ",";
        s += m_dims[i].str();
    }
    return s + "]";
}

}  // namespace tessera::ir
