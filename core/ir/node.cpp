#include "core/ir/node.h"

namespace tessera::ir {

const Attribute* Node::attr(std::string_view name) const {
    for (const auto& [n, a] : attributes)
        if (n == name) return &a;
    return nullptr;
}

std::int64_t Node::attrInt(std::string_view name, std::int64_t dflt) const {
    const Attribute* a = attr(name);
    return a && a->type == AttrType::Int ? a->i : dflt;
}

double Node::attrFloat(std::string_view name, double dflt) const {
    const Attribute* a = attr(name);
    return a && a->type == AttrType::Float ? a->f : dflt;
}

std::string Node::attrString(std::string_view name, std::string dflt) const {
    const Attribute* a = attr(name);
    return a && a->type == AttrType::String ? a->s : dflt;
}

std::vector<std::int64_t> Node::attrInts(std::string_view name, std::vector<std::int64_t> dflt) const {
    const Attribute* a = attr(name);
    return a && a->type == AttrType::Ints ? a->ints : dflt;
}

std::vector<double> Node::attrFloats(std::string_view name, std::vector<double> dflt) const {
    const Attribute* a = attr(name);
    return a && a->type == AttrType::Floats ? a->floats : dflt;
}

void Node::setAttr(std::string name, Attribute a) {
    for (auto& [n, existing] : attributes) {
        if (n == name) {
            existing = std::move(a);
            return;
        }
    }
    attributes.emplace_back(std::move(name), std::move(a));
}

}  // namespace tessera::ir
