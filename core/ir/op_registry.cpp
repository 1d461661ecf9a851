#include "core/ir/op_registry.h"

#include <algorithm>
#include <cstring>

#include "core/ir/ops/op_helpers.h"

namespace tessera::ir {

namespace {

std::shared_ptr<const TensorData> materializeConstantAttr(const Node& n) {
    if (const Attribute* a = n.attr("value"); a && a->type == AttrType::Tensor && a->t) return a->t;
    if (const Attribute* a = n.attr("value_float"); a && a->type == AttrType::Float)
        return std::make_shared<TensorData>(TensorData::fromFloats({static_cast<float>(a->f)}, {}));
    if (const Attribute* a = n.attr("value_floats"); a && a->type == AttrType::Floats) {
        std::vector<float> v(a->floats.begin(), a->floats.end());
        const auto count = static_cast<std::int64_t>(v.size());
        return std::make_shared<TensorData>(TensorData::fromFloats(v, {count}));
    }
    if (const Attribute* a = n.attr("value_int"); a && a->type == AttrType::Int)
        return std::make_shared<TensorData>(TensorData::fromInts({a->i}, {}));
    if (const Attribute* a = n.attr("value_ints"); a && a->type == AttrType::Ints)
        return std::make_shared<TensorData>(
            TensorData::fromInts(a->ints, {static_cast<std::int64_t>(a->ints.size())}));
    return nullptr;
}

std::string nodeWhere(const Node& n) { return "node '" + n.name + "' (" + n.opType + ")"; }

}  // namespace

const TensorData* InferContext::constantInput(std::size_t i) const {
    if (i >= node.inputs.size()) return nullptr;
    const ValueId v = node.inputs[i];
    if (v < 0 || static_cast<std::size_t>(v) >= graph.numValues()) return nullptr;
    const Value& val = graph.value(v);
    if (val.data) return val.data->sizeConsistent() ? val.data.get() : nullptr;
    const NodeId p = graph.producer(v);
    if (p == kNoNode) return nullptr;
    const Node& prod = graph.node(p);
    if (prod.domain.empty() || prod.domain == "ai.onnx") {
        if (prod.opType == "Constant") {
            auto t = materializeConstantAttr(prod);
            if (!t || !t->sizeConsistent()) return nullptr;
            scratch.push_back(t);
            return t.get();
        }
        if (prod.opType == "Shape" && !prod.inputs.empty() && prod.inputs[0] >= 0 &&
            static_cast<std::size_t>(prod.inputs[0]) < graph.numValues()) {
            const auto dims = graph.value(prod.inputs[0]).type.shape.knownDims();
            if (!dims) return nullptr;
            const auto r = static_cast<std::int64_t>(dims->size());
            std::int64_t start = prod.attrInt("start", 0), end = prod.attrInt("end", r);
            if (start < 0) start += r;
            if (end < 0) end += r;
            start = std::clamp<std::int64_t>(start, 0, r);
            end = std::clamp<std::int64_t>(end, 0, r);
            std::vector<std::int64_t> out;
            for (std::int64_t k = start; k < end; ++k) out.push_back((*dims)[static_cast<std::size_t>(k)]);
            auto t = std::make_shared<TensorData>(
                TensorData::fromInts(out, {static_cast<std::int64_t>(out.size())}));
            scratch.push_back(t);
            return t.get();
        }
    }
    return nullptr;
}

const char* opCategoryName(OpCategory c) {
    switch (c) {
        case OpCategory::Elementwise: return "elementwise";
        case OpCategory::Reduction: return "reduction";
        case OpCategory::Normalization: return "normalization";
        case OpCategory::Convolution: return "convolution";
        case OpCategory::MatMul: return "matmul";
        case OpCategory::Pooling: return "pooling";
        case OpCategory::DataMovement: return "data-movement";
        case OpCategory::Constant: return "constant";
        case OpCategory::ControlFlow: return "control-flow";
        case OpCategory::Compute: return "compute definition";
        case OpCategory::Other: return "other";
    }
    return "other";
}

const AttrSchema* OpSchema::findAttr(std::string_view name) const {
    for (const auto& a : attributes)
        if (a.name == name) return &a;
    return nullptr;
}

OpRegistry::OpRegistry() {
    ops::registerElementwiseOps(m_schemas);
    ops::registerNnOps(m_schemas);
    ops::registerReductionOps(m_schemas);
    ops::registerDataMovementOps(m_schemas);
    ops::registerControlFlowOps(m_schemas);
    ops::registerComputeOps(m_schemas);
    ops::applyDtypeRules(m_schemas);
    std::sort(m_schemas.begin(), m_schemas.end(), [](const OpSchema& a, const OpSchema& b) {
        return a.domain != b.domain ? a.domain < b.domain : a.opType < b.opType;
    });
}

const OpRegistry& OpRegistry::instance() {
    static const OpRegistry registry;
    return registry;
}

const OpSchema* OpRegistry::find(std::string_view domain, std::string_view opType) const {
    if (domain == "ai.onnx") domain = "";
    auto it = std::lower_bound(m_schemas.begin(), m_schemas.end(), std::pair{domain, opType},
                               [](const OpSchema& s, const std::pair<std::string_view, std::string_view>& key) {
                                   const std::string_view d = s.domain, o = s.opType;
                                   return d != key.first ? d < key.first : o < key.second;
                               });
    if (it == m_schemas.end() || it->domain != domain || it->opType != opType) return nullptr;
    return &*it;
}

std::vector<const OpSchema*> OpRegistry::all() const {
    std::vector<const OpSchema*> out;
    out.reserve(m_schemas.size());
    for (const auto& s : m_schemas) out.push_back(&s);
    return out;
}

bool checkNodeAgainstSchema(const Graph& g, NodeId id, const std::string& file, support::DiagnosticList& out) {
    if (id < 0 || static_cast<std::size_t>(id) >= g.numNodes()) return false;
    const Node& n = g.node(id);
    const OpSchema* s = OpRegistry::instance().find(n.domain, n.opType);
    if (!s) return true;
    const std::string where = nodeWhere(n);
    bool ok = true;
    auto err = [&](std::string msg) {
        out.error(file, where, std::move(msg));
        ok = false;
    };
    const auto nin = static_cast<int>(n.inputs.size());
    const auto nout = static_cast<int>(n.outputs.size());
    auto range = [](int lo, int hi) {
        if (hi < 0) return "at least " + std::to_string(lo);
        if (lo == hi) return std::to_string(lo);
        return std::to_string(lo) + ".." + std::to_string(hi);
    };
    if (nin < s->minInputs || (s->maxInputs >= 0 && nin > s->maxInputs))
        err("expects " + range(s->minInputs, s->maxInputs) + " inputs, got " + std::to_string(nin));
    for (int i = 0; i < std::min(nin, s->minInputs); ++i)
        if (n.inputs[static_cast<std::size_t>(i)] == kNoValue) err("required input #" + std::to_string(i) + " is missing");
    if (nout < s->minOutputs || (s->maxOutputs >= 0 && nout > s->maxOutputs))
        err("expects " + range(s->minOutputs, s->maxOutputs) + " outputs, got " + std::to_string(nout));
    for (int i = 0; i < std::min(nout, s->minOutputs); ++i)
        if (n.outputs[static_cast<std::size_t>(i)] == kNoValue) err("required output #" + std::to_string(i) + " is missing");
    for (const auto& a : s->attributes)
        if (a.required && !n.hasAttr(a.name)) err("missing required attribute '" + a.name + "'");
    for (const auto& [name, a] : n.attributes) {
        const AttrSchema* as = s->findAttr(name);
        if (!as) {
            out.warning(file, where, "unknown attribute '" + name + "' (ignored)");
            continue;
        }
        if (as->type != AttrType::Undefined && a.type != as->type)
            err("attribute '" + name + "' must be " + attrTypeName(as->type) + ", got " + attrTypeName(a.type));
    }
    return ok;
}

// ---------------------------------------------------------------------------------------------
// Shared helpers for the ops files.

namespace ops {

InferResult fail(std::string message) {
    InferResult r;
    r.error = std::move(message);
    if (r.error.empty()) r.error = "shape inference failed";
    return r;
}

InferResult single(TensorType t) {
    InferResult r;
    r.outputs.push_back(std::move(t));
    return r;
}

TensorType makeType(DType dt, Shape s) {
    TensorType t;
    t.dtype = dt;
    t.shape = std::move(s);
    return t;
}

std::optional<std::int64_t> mulChecked(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

std::optional<std::int64_t> addChecked(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}

std::optional<std::int64_t> numel(const TensorType& t) { return t.shape.numElements(); }

std::optional<std::int64_t> product(std::initializer_list<std::optional<std::int64_t>> factors) {
    std::int64_t r = 1;
    for (const auto& f : factors) {
        if (!f) return std::nullopt;
        if (__builtin_mul_overflow(r, *f, &r)) return std::nullopt;
    }
    return r;
}

const TensorType& inputType(const InferContext& c, std::size_t i) {
    static const TensorType kAbsent;
    if (i >= c.inputTypes.size()) return kAbsent;
    return c.inputTypes[i];
}

bool hasInput(const InferContext& c, std::size_t i) {
    return i < c.node.inputs.size() && c.node.inputs[i] != kNoValue;
}

std::optional<std::int64_t> normalizeAxis(std::int64_t axis, std::int64_t rank) {
    if (axis < -rank || axis >= rank) return std::nullopt;
    return axis < 0 ? axis + rank : axis;
}

std::optional<Shape> broadcastShapes(const std::vector<Shape>& shapes, std::string& error) {
    std::size_t rank = 0;
    for (const auto& s : shapes) {
        if (!s.rankKnown()) return Shape::unknownRank();
        rank = std::max(rank, s.rank());
    }
    std::vector<Dim> out(rank, Dim::known(1));
    std::vector<const Shape*> contributor(rank, nullptr);
    for (const auto& s : shapes) {
        const std::size_t off = rank - s.rank();
        for (std::size_t i = 0; i < s.rank(); ++i) {
            Dim& o = out[off + i];
            const Dim& d = s[i];
            if (d.isKnown() && d.value == 1) continue;
            if (o.isKnown() && o.value == 1) {
                o = d;
                contributor[off + i] = &s;
                continue;
            }
            if (o.isKnown() && d.isKnown()) {
                if (o.value != d.value) {
                    error = "cannot broadcast " + (contributor[off + i] ? contributor[off + i]->str() : std::string("?")) +
                            " and " + s.str() + " (dim " + o.str() + " vs " + d.str() + ")";
                    return std::nullopt;
                }
                continue;
            }
            // A known extent other than 1 decides; the non-known side must equal it or be 1.
            if (o.isKnown()) continue;
            if (d.isKnown()) {
                o = d;
                contributor[off + i] = &s;
                continue;
            }
            if (o.isSymbolic() && d.isSymbolic() && o.symbol == d.symbol) continue;
            o = Dim::unknown();
        }
    }
    return Shape(std::move(out));
}

std::optional<Dim> mergeEqualDims(const Dim& a, const Dim& b) {
    if (a.isKnown() && b.isKnown()) {
        if (a.value != b.value) return std::nullopt;
        return a;
    }
    if (a.isKnown()) return a;
    if (b.isKnown()) return b;
    if (a.isSymbolic()) return a;
    return b;
}

std::optional<std::vector<std::int64_t>> constantInts(const InferContext& c, std::size_t i) {
    if (!hasInput(c, i)) return std::nullopt;
    const TensorData* t = c.constantInput(i);
    if (!t || !isInteger(t->dtype)) return std::nullopt;
    if (t->numElements() > (std::int64_t{1} << 20)) return std::nullopt;
    return t->toInts();
}

const Attribute* attrOf(const InferContext& c, const char* name, AttrType type) {
    const Attribute* a = c.node.attr(name);
    return a && a->type == type ? a : nullptr;
}

DType dtypeFromOnnxCode(std::int64_t code) {
    switch (code) {
        case 1: return DType::F32;
        case 2: return DType::U8;
        case 3: return DType::I8;
        case 4: return DType::U16;
        case 5: return DType::I16;
        case 6: return DType::I32;
        case 7: return DType::I64;
        case 8: return DType::String;
        case 9: return DType::Bool;
        case 10: return DType::F16;
        case 11: return DType::F64;
        case 12: return DType::U32;
        case 13: return DType::U64;
        case 14: return DType::Complex64;
        case 15: return DType::Complex128;
        case 16: return DType::BF16;
        default: return DType::Undefined;
    }
}

AttrSchema attr(std::string name, AttrType type, bool required) {
    AttrSchema a;
    a.name = std::move(name);
    a.type = type;
    a.required = required;
    return a;
}

AttrSchema attrDefault(std::string name, Attribute dflt) {
    AttrSchema a;
    a.name = std::move(name);
    a.type = dflt.type;
    a.defaultValue = std::move(dflt);
    return a;
}

}  // namespace ops

}  // namespace tessera::ir
