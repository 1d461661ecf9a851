// Reductions: ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum, ReduceLogSumExp, ArgMax, ArgMin.
// Not injective (Hidet: a reduction in the compute definition).
//
// Axes: an `axes` ints attribute (ReduceSum before opset 13, the others before opset 18) or an
// optional second input, a 1-D int64 tensor (ReduceSum >= 13, others >= 18). Both forms are
// accepted whatever the opset: the node itself says which one it uses. Empty or absent axes
// reduce every axis unless noop_with_empty_axes=1 (then the op is the identity).
//
// FLOP formula: 1 per input element (one add/compare/multiply per reduced element; ReduceMean's
// final divide, ReduceL1's abs, ReduceL2's and ReduceSumSquare's square, ReduceL2's sqrt and the
// log/exp of ReduceLogSum and ReduceLogSumExp are not counted separately); 0 for the identity case.
// Source: ONNX operator specs (https://onnx.ai/onnx/operators/).

#include <algorithm>

#include "core/ir/ops/op_helpers.h"

namespace tessera::ir::ops {

namespace {

using A = AttrType;

struct ReduceAxes {
    bool known = true;      // false when the axes input is not a constant
    bool identity = false;  // empty axes with noop_with_empty_axes
    std::vector<char> reduce;  // per input axis
};

std::optional<std::string> resolveAxes(const InferContext& c, std::size_t rank, ReduceAxes& r) {
    std::optional<std::vector<std::int64_t>> axes;
    if (const Attribute* a = c.node.attr("axes"); a && a->type == A::Ints) {
        axes = a->ints;
    } else if (hasInput(c, 1)) {
        axes = constantInts(c, 1);
        if (!axes) {
            r.known = false;
            return std::nullopt;
        }
    }
    if (!axes || axes->empty()) {
        if (c.node.attrInt("noop_with_empty_axes", 0) != 0) r.identity = true;
        r.reduce.assign(rank, r.identity ? 0 : 1);
        return std::nullopt;
    }
    r.reduce.assign(rank, 0);
    for (auto ax : *axes) {
        const auto n = normalizeAxis(ax, static_cast<std::int64_t>(rank));
        if (!n) return "axis " + std::to_string(ax) + " is out of range for rank " + std::to_string(rank);
        if (r.reduce[static_cast<std::size_t>(*n)]) return "axis " + std::to_string(ax) + " is repeated";
        r.reduce[static_cast<std::size_t>(*n)] = 1;
    }
    return std::nullopt;
}

InferResult inferReduce(const InferContext& c, std::optional<DType> outDtype) {
    if (!hasInput(c, 0)) return fail("input 0 is missing");
    const TensorType& x = inputType(c, 0);
    const DType dt = outDtype ? *outDtype : x.dtype;
    const bool keep = c.node.attrInt("keepdims", 1) != 0;
    if (!x.shape.rankKnown()) return single(makeType(dt, Shape::unknownRank()));
    ReduceAxes r;
    if (auto e = resolveAxes(c, x.shape.rank(), r)) return fail(*e);
    if (!r.known) {
        if (!keep) return single(makeType(dt, Shape::unknownRank()));
        std::vector<Dim> out = x.shape.dims();
        for (auto& d : out)
            if (!(d.isKnown() && d.value == 1)) d = Dim::unknown();
        return single(makeType(dt, Shape(std::move(out))));
    }
    std::vector<Dim> out;
    for (std::size_t i = 0; i < x.shape.rank(); ++i) {
        if (!r.reduce[i]) out.push_back(x.shape[i]);
        else if (keep) out.push_back(Dim::known(1));
    }
    return single(makeType(dt, Shape(std::move(out))));
}

std::optional<std::int64_t> reduceFlops(const InferContext& c, const std::vector<TensorType>&) {
    if (c.inputTypes.empty()) return std::nullopt;
    const TensorType& x = c.inputTypes[0];
    if (x.shape.rankKnown()) {
        ReduceAxes r;
        if (!resolveAxes(c, x.shape.rank(), r) && r.known && r.identity) return 0;
    }
    return numel(x);
}

InferResult inferArg(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input 0 is missing");
    const TensorType& x = inputType(c, 0);
    if (!x.shape.rankKnown()) return single(makeType(DType::I64, Shape::unknownRank()));
    const std::int64_t axis = c.node.attrInt("axis", 0);
    const auto n = normalizeAxis(axis, static_cast<std::int64_t>(x.shape.rank()));
    if (!n) return fail("axis " + std::to_string(axis) + " is out of range for " + x.shape.str());
    std::vector<Dim> out;
    for (std::size_t i = 0; i < x.shape.rank(); ++i) {
        if (static_cast<std::int64_t>(i) != *n) out.push_back(x.shape[i]);
        else if (c.node.attrInt("keepdims", 1) != 0) out.push_back(Dim::known(1));
    }
    return single(makeType(DType::I64, Shape(std::move(out))));
}

}  // namespace

void registerReductionOps(std::vector<OpSchema>& out) {
    for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
        OpSchema s;
        s.opType = op;
        s.category = OpCategory::Reduction;
        s.minInputs = 1;
        s.maxInputs = 2;
        s.attributes = {attr("axes", A::Ints), attrDefault("keepdims", Attribute::ofInt(1)),
                        attrDefault("noop_with_empty_axes", Attribute::ofInt(0))};
        s.inferShapes = [](const InferContext& c) { return inferReduce(c, std::nullopt); };
        s.flops = reduceFlops;
        s.summary = "reduce over axes (attribute or second input), keepdims";
        out.push_back(std::move(s));
    }
    for (const char* op : {"ArgMax", "ArgMin"}) {
        OpSchema s;
        s.opType = op;
        s.category = OpCategory::Reduction;
        s.minInputs = 1;
        s.maxInputs = 1;
        s.attributes = {attrDefault("axis", Attribute::ofInt(0)), attrDefault("keepdims", Attribute::ofInt(1)),
                        attrDefault("select_last_index", Attribute::ofInt(0))};
        s.inferShapes = inferArg;
        s.flops = [](const InferContext& c, const std::vector<TensorType>&) -> std::optional<std::int64_t> {
            if (c.inputTypes.empty()) return std::nullopt;
            return numel(c.inputTypes[0]);
        };
        s.summary = "index of the extreme value along axis (i64)";
        out.push_back(std::move(s));
    }
}

}  // namespace tessera::ir::ops
