// Lowering templates of the data-movement ops: Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Concat, Split, Slice, Gather, Pad, Expand, Tile, Shape, Size, ConstantOfShape, Range.
//
// Each is a loop nest over its output (Split: over its input, writing every output) under the
// node's schedule or defaultCpuMapping, whose body computes the input index of each output
// element. Compile-time inputs (Reshape's shape, Slice's starts/ends/axes/steps, Pad's pads and
// constant value, Split's sizes, Squeeze/Unsqueeze axes) must be constants and are folded into
// the code; they are not kernel parameters (Trilu's diagonal k too). Gather's indices are a parameter (constant or not).

#include <algorithm>

#include "core/lower/detail/lower_templates.h"

namespace tessera::lower::detail {

namespace {

std::vector<std::int64_t> rowMajorStrides(const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> s(shape.size(), 1);
    for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
    return s;
}

std::vector<std::int64_t> dropUnitDims(const std::vector<std::int64_t>& s) {
    std::vector<std::int64_t> r;
    for (auto e : s)
        if (e != 1) r.push_back(e);
    return r;
}

std::int64_t normAxis(std::int64_t a, std::int64_t rank) { return a < 0 ? a + rank : a; }

/// The kernel skeleton shared by the templates: inputs at `slots` added as parameters, output 0
/// added, and one loop nest over `outShape` whose body stores value(idx) converted to the output
/// type. `bufs` (given to value) are the parameter buffers of the slots, in order.
using ValueFn = std::function<Expr(Kernel& k, const std::vector<int>& bufs, const std::vector<Expr>& idx)>;

support::Expected<LoweredKernel> lowerMapped(const LowerContext& ctx, const std::vector<std::size_t>& slots,
                                             const ValueFn& value) {
    const ir::Node& n = ctx.node;
    if (n.outputs.empty() || n.outputs[0] == ir::kNoValue) return lowerError(ctx, "the node has no output");
    auto outShape = shapeOf(ctx, n.outputs[0]);
    if (!outShape) return outShape.diagnostics();
    LoweredKernel lk = beginKernel(ctx);
    std::vector<int> bufs;
    for (std::size_t s : slots) {
        if (s >= n.inputs.size() || n.inputs[s] == ir::kNoValue)
            return lowerError(ctx, "input " + std::to_string(s) + " is missing");
        auto sh = shapeOf(ctx, n.inputs[s]);
        if (!sh) return sh.diagnostics();
        const DType t = dtypeOf(ctx.g, n.inputs[s]);
        if (t == DType::String || t == DType::Undefined)
            return unsupportedForm(ctx, "input '" + ctx.g.value(n.inputs[s]).name + "' has no numeric element type");
        bufs.push_back(addInput(ctx, lk, n.inputs[s]));
    }
    const DType outT = dtypeOf(ctx.g, n.outputs[0]);
    if (outT == DType::String || outT == DType::Undefined)
        return lowerError(ctx, "output '" + ctx.g.value(n.outputs[0]).name + "' has no numeric element type");
    const int out = addOutput(ctx, lk, n.outputs[0]);
    auto plan = resolveMappings(ctx, *outShape, defaultCpuMapping(*outShape, ctx.options.cpuThreads));
    if (!plan) return plan.diagnostics();
    Kernel& k = lk.kernel;
    k.body = emitMappedLoops(k, *plan, *outShape, [&](const std::vector<Expr>& idx) {
        return store(out, idx, cast(value(k, bufs, idx), outT));
    });
    return lk;
}

Expr loadBuf(const Kernel& k, int b, std::vector<Expr> idx) {
    return load(b, k.buffers[static_cast<std::size_t>(b)].dtype, std::move(idx));
}

const std::vector<std::int64_t>& bufShape(const Kernel& k, int b) { return k.buffers[static_cast<std::size_t>(b)].shape; }

/// Reshape-like copy: the output element at flat position p is the input element at p.
support::Expected<LoweredKernel> lowerReshapeLike(const LowerContext& ctx) {
    const auto outShape =
        concreteShape(ctx.g, ctx.node.outputs.empty() ? ir::kNoValue : ctx.node.outputs[0]).value_or(std::vector<std::int64_t>{});
    return lowerMapped(ctx, {0}, [outShape](Kernel& k, const std::vector<int>& b, const std::vector<Expr>& idx) {
        const auto& inShape = bufShape(k, b[0]);
        if (dropUnitDims(inShape) == dropUnitDims(outShape)) {
            // Only unit dims differ (Squeeze, Unsqueeze, many Flattens): the non-unit dims match in order.
            std::vector<Expr> nonUnit;
            for (std::size_t d = 0; d < idx.size(); ++d)
                if (outShape[d] != 1) nonUnit.push_back(idx[d]);
            std::vector<Expr> in;
            std::size_t j = 0;
            for (auto e : inShape) in.push_back(e == 1 ? intImm(0) : nonUnit[j++]);
            return loadBuf(k, b[0], in);
        }
        const auto os = rowMajorStrides(outShape), is = rowMajorStrides(inShape);
        Expr flat = intImm(0);
        for (std::size_t d = 0; d < idx.size(); ++d) flat = flat + idx[d] * intImm(os[d]);
        std::vector<Expr> in;
        for (std::size_t d = 0; d < inShape.size(); ++d) {
            if (inShape[d] == 1) {
                in.push_back(intImm(0));
                continue;
            }
            Expr e = is[d] == 1 ? flat : flat / intImm(is[d]);
            if (d != 0) e = e % intImm(inShape[d]);
            in.push_back(e);
        }
        return loadBuf(k, b[0], in);
    });
}

support::Expected<LoweredKernel> lowerTranspose(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    auto inShape = shapeOf(ctx, n.inputs.empty() ? ir::kNoValue : n.inputs[0]);
    if (!inShape) return inShape.diagnostics();
    const auto r = static_cast<std::int64_t>(inShape->size());
    std::vector<std::int64_t> perm = n.attrInts("perm");
    if (perm.empty())
        for (std::int64_t d = r; d-- > 0;) perm.push_back(d);
    if (static_cast<std::int64_t>(perm.size()) != r) return lowerError(ctx, "perm does not have the input's rank");
    for (auto& p : perm) {
        p = normAxis(p, r);
        if (p < 0 || p >= r) return lowerError(ctx, "perm entry out of range");
    }
    return lowerMapped(ctx, {0}, [perm](Kernel& k, const std::vector<int>& b, const std::vector<Expr>& idx) {
        std::vector<Expr> in(idx.size());
        for (std::size_t d = 0; d < idx.size(); ++d) in[static_cast<std::size_t>(perm[d])] = idx[d];
        return loadBuf(k, b[0], in);
    });
}

support::Expected<LoweredKernel> lowerConcat(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    auto outShape = shapeOf(ctx, n.outputs.empty() ? ir::kNoValue : n.outputs[0]);
    if (!outShape) return outShape.diagnostics();
    const auto r = static_cast<std::int64_t>(outShape->size());
    const std::int64_t axis = normAxis(n.attrInt("axis", 0), r);
    if (axis < 0 || axis >= r) return lowerError(ctx, "axis is out of range");
    std::vector<std::size_t> slots;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        if (n.inputs[i] == ir::kNoValue) continue;
        auto s = shapeOf(ctx, n.inputs[i]);
        if (!s) return s.diagnostics();
        if (static_cast<std::int64_t>(s->size()) != r) return lowerError(ctx, "inputs must have the output's rank");
        if ((*s)[static_cast<std::size_t>(axis)] > 0) slots.push_back(i);
    }
    if (slots.empty()) return lowerError(ctx, "Concat has no non-empty input");
    const auto a = static_cast<std::size_t>(axis);
    return lowerMapped(ctx, slots, [a](Kernel& k, const std::vector<int>& b, const std::vector<Expr>& idx) {
        // select(i < off1, in0[i], select(i < off2, in1[i - off1], ...)): only the chosen load runs.
        std::vector<std::int64_t> offsets{0};
        for (int buf : b) offsets.push_back(offsets.back() + bufShape(k, buf)[a]);
        auto at = [&](std::size_t j) {
            std::vector<Expr> in = idx;
            in[a] = idx[a] - intImm(offsets[j]);
            return loadBuf(k, b[j], in);
        };
        Expr v = at(b.size() - 1);
        for (std::size_t j = b.size() - 1; j-- > 0;) v = select(idx[a] < intImm(offsets[j + 1]), at(j), v);
        return v;
    });
}

struct SliceAxis {
    std::int64_t start = 0, step = 1;
};

support::Expected<LoweredKernel> lowerSlice(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    auto inShape = shapeOf(ctx, n.inputs.empty() ? ir::kNoValue : n.inputs[0]);
    if (!inShape) return inShape.diagnostics();
    const auto r = static_cast<std::int64_t>(inShape->size());
    std::optional<std::vector<std::int64_t>> starts, ends, axes, steps;
    if (n.hasAttr("starts")) {
        starts = n.attrInts("starts");
        ends = n.attrInts("ends");
        if (n.hasAttr("axes")) axes = n.attrInts("axes");
    } else {
        auto need = [&](std::size_t i, const char* what, std::optional<std::vector<std::int64_t>>& out) -> bool {
            if (i >= n.inputs.size() || n.inputs[i] == ir::kNoValue) return true;
            out = constInts(ctx.g, n.inputs[i]);
            (void)what;
            return out.has_value();
        };
        if (!need(1, "starts", starts) || !need(2, "ends", ends) || !need(3, "axes", axes) || !need(4, "steps", steps))
            return lowerError(ctx, "starts, ends, axes and steps must be constants");
        if (!starts || !ends) return lowerError(ctx, "starts and ends are required");
    }
    const std::size_t cnt = starts->size();
    if (!axes) {
        axes = std::vector<std::int64_t>();
        for (std::size_t i = 0; i < cnt; ++i) axes->push_back(static_cast<std::int64_t>(i));
    }
    if (!steps) steps = std::vector<std::int64_t>(cnt, 1);
    if (ends->size() != cnt || axes->size() != cnt || steps->size() != cnt)
        return lowerError(ctx, "starts, ends, axes and steps differ in length");
    std::vector<SliceAxis> sa(static_cast<std::size_t>(r));
    for (std::size_t i = 0; i < cnt; ++i) {
        const std::int64_t ax = normAxis((*axes)[i], r);
        if (ax < 0 || ax >= r) return lowerError(ctx, "axis " + std::to_string((*axes)[i]) + " is out of range");
        const std::int64_t step = (*steps)[i], dim = (*inShape)[static_cast<std::size_t>(ax)];
        if (step == 0) return lowerError(ctx, "step 0");
        std::int64_t s = (*starts)[i];
        if (s < 0) s = s < -dim ? -1 : s + dim;
        s = step > 0 ? std::clamp<std::int64_t>(s, 0, dim) : std::clamp<std::int64_t>(s, 0, dim - 1);
        sa[static_cast<std::size_t>(ax)] = {s, step};
    }
    return lowerMapped(ctx, {0}, [sa](Kernel& k, const std::vector<int>& b, const std::vector<Expr>& idx) {
        std::vector<Expr> in;
        for (std::size_t d = 0; d < idx.size(); ++d) in.push_back(intImm(sa[d].start) + idx[d] * intImm(sa[d].step));
        return loadBuf(k, b[0], in);
    });
}

support::Expected<LoweredKernel> lowerGather(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    if (n.inputs.size() < 2) return lowerError(ctx, "Gather needs data and indices");
    auto dataShape = shapeOf(ctx, n.inputs[0]);
    if (!dataShape) return dataShape.diagnostics();
    auto idxShape = shapeOf(ctx, n.inputs[1]);
    if (!idxShape) return idxShape.diagnostics();
    const auto r = static_cast<std::int64_t>(dataShape->size());
    const std::int64_t axis = normAxis(n.attrInt("axis", 0), r);
    if (axis < 0 || axis >= r) return lowerError(ctx, "axis is out of range");
    const DType it = dtypeOf(ctx.g, n.inputs[1]);
    if (!ir::isInteger(it)) return lowerError(ctx, "indices must be integers");
    const auto a = static_cast<std::size_t>(axis);
    const std::size_t q = idxShape->size();
    const std::int64_t extent = (*dataShape)[a];
    return lowerMapped(ctx, {0, 1}, [a, q, extent](Kernel& k, const std::vector<int>& b, const std::vector<Expr>& idx) {
        std::vector<Expr> iidx(idx.begin() + static_cast<std::ptrdiff_t>(a),
                               idx.begin() + static_cast<std::ptrdiff_t>(a + q));
        Expr i = cast(loadBuf(k, b[1], iidx), DType::I64);
        // Negative indices count from the end.
        i = select(i < intImm(0), i + intImm(extent), i);
        std::vector<Expr> in(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(a));
        in.push_back(i);
        in.insert(in.end(), idx.begin() + static_cast<std::ptrdiff_t>(a + q), idx.end());
        return loadBuf(k, b[0], in);
    });
}

support::Expected<LoweredKernel> lowerPad(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    auto inShape = shapeOf(ctx, n.inputs.empty() ? ir::kNoValue : n.inputs[0]);
    if (!inShape) return inShape.diagnostics();
    const auto r = static_cast<std::int64_t>(inShape->size());
    const std::string mode = n.attrString("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
        return lowerError(ctx, "unknown pad mode '" + mode + "'");
    std::optional<std::vector<std::int64_t>> pads;
    if (n.hasAttr("pads")) pads = n.attrInts("pads");
    else if (n.inputs.size() > 1 && n.inputs[1] != ir::kNoValue) pads = constInts(ctx.g, n.inputs[1]);
    if (!pads) return lowerError(ctx, "pads must be a constant");
    double value = n.attrFloat("value", 0.0);
    if (n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue) {
        auto v = constDoubles(ctx.g, n.inputs[2]);
        if (!v || v->size() != 1) return lowerError(ctx, "constant_value must be a constant scalar");
        value = (*v)[0];
    }
    std::vector<std::int64_t> axes;
    if (n.inputs.size() > 3 && n.inputs[3] != ir::kNoValue) {
        auto a = constInts(ctx.g, n.inputs[3]);
        if (!a) return lowerError(ctx, "axes must be a constant");
        axes = *a;
    } else {
        for (std::int64_t d = 0; d < r; ++d) axes.push_back(d);
    }
    if (pads->size() != 2 * axes.size()) return lowerError(ctx, "pads has the wrong length");
    std::vector<std::int64_t> begin(static_cast<std::size_t>(r), 0);
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const std::int64_t ax = normAxis(axes[i], r);
        if (ax < 0 || ax >= r) return lowerError(ctx, "axis out of range");
        begin[static_cast<std::size_t>(ax)] = (*pads)[i];
        const std::int64_t dim = (*inShape)[static_cast<std::size_t>(ax)];
        if (mode == "reflect" && ((*pads)[i] >= dim || (*pads)[i + axes.size()] >= dim))
            return lowerError(ctx, "reflect padding needs pads smaller than the extent " + std::to_string(dim));
    }
    const auto shape = *inShape;
    return lowerMapped(ctx, {0}, [=](Kernel& k, const std::vector<int>& b, const std::vector<Expr>& idx) {
        std::vector<Expr> in;
        Expr inside;
        for (std::size_t d = 0; d < idx.size(); ++d) {
            const std::int64_t dim = shape[d];
            Expr c = idx[d] - intImm(begin[d]);
            if (mode == "constant") {
                if (begin[d] > 0) inside = inside ? (inside && (c >= intImm(0))) : (c >= intImm(0));
                Expr hiOk = c < intImm(dim);
                inside = inside ? (inside && hiOk) : hiOk;
            } else if (mode == "edge") {
                c = maxOf(minOf(c, intImm(dim - 1)), intImm(0));
            } else if (mode == "reflect") {
                if (dim == 1) c = intImm(0);
                else {
                    c = select(c < intImm(0), unary(UnaryOp::Neg, c), c);
                    c = select(c >= intImm(dim), intImm(2 * (dim - 1)) - c, c);
                }
            } else {  // wrap
                c = binary(BinaryOp::FloorMod, c, intImm(dim));
            }
            in.push_back(c);
        }
        const DType t = k.buffers[static_cast<std::size_t>(b[0])].dtype;
        Expr v = loadBuf(k, b[0], in);
        if (mode == "constant" && inside) v = select(inside, v, constant(value, t));
        return v;
    });
}

support::Expected<LoweredKernel> lowerExpand(const LowerContext& ctx) {
    return lowerMapped(ctx, {0}, [](Kernel& k, const std::vector<int>& b, const std::vector<Expr>& idx) {
        return loadBuf(k, b[0], broadcastIndex(idx, bufShape(k, b[0])));
    });
}

support::Expected<LoweredKernel> lowerTile(const LowerContext& ctx) {
    return lowerMapped(ctx, {0}, [](Kernel& k, const std::vector<int>& b, const std::vector<Expr>& idx) {
        const auto& s = bufShape(k, b[0]);
        std::vector<Expr> in;
        for (std::size_t d = 0; d < idx.size(); ++d) in.push_back(s[d] == 1 ? intImm(0) : idx[d] % intImm(s[d]));
        return loadBuf(k, b[0], in);
    });
}

support::Expected<LoweredKernel> lowerSplit(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    auto inShape = shapeOf(ctx, n.inputs.empty() ? ir::kNoValue : n.inputs[0]);
    if (!inShape) return inShape.diagnostics();
    const auto r = static_cast<std::int64_t>(inShape->size());
    const std::int64_t axis = normAxis(n.attrInt("axis", 0), r);
    if (axis < 0 || axis >= r) return lowerError(ctx, "axis is out of range");
    const auto a = static_cast<std::size_t>(axis);
    LoweredKernel lk = beginKernel(ctx);
    const int in = addInput(ctx, lk, n.inputs[0]);
    std::vector<int> outs;
    std::vector<std::int64_t> offsets{0};
    for (ir::ValueId o : n.outputs) {
        if (o == ir::kNoValue) return lowerError(ctx, "an omitted Split output is not supported");
        auto s = shapeOf(ctx, o);
        if (!s) return s.diagnostics();
        if (s->size() != inShape->size()) return lowerError(ctx, "outputs must have the input's rank");
        offsets.push_back(offsets.back() + (*s)[a]);
        outs.push_back(addOutput(ctx, lk, o));
    }
    if (offsets.back() != (*inShape)[a]) return lowerError(ctx, "the output extents do not add up to the input's");
    auto plan = resolveMappings(ctx, *inShape, defaultCpuMapping(*inShape, ctx.options.cpuThreads));
    if (!plan) return plan.diagnostics();
    Kernel& k = lk.kernel;
    const DType t = k.buffers[static_cast<std::size_t>(in)].dtype;
    // One loop nest over the input; each element goes to the output whose range holds it.
    k.body = emitMappedLoops(k, *plan, *inShape, [&](const std::vector<Expr>& idx) {
        Expr v = load(in, t, idx);
        auto put = [&](std::size_t j) {
            std::vector<Expr> o = idx;
            o[a] = idx[a] - intImm(offsets[j]);
            return store(outs[j], o, v);
        };
        Stmt s = put(outs.size() - 1);
        for (std::size_t j = outs.size() - 1; j-- > 0;) {
            if (offsets[j + 1] == offsets[j]) continue;  // empty output
            s = ifThen(idx[a] < intImm(offsets[j + 1]), put(j), s);
        }
        return s;
    });
    return lk;
}

/// A kernel writing constant i64 values (Shape, Size): the input is not read, so not a parameter.
support::Expected<LoweredKernel> lowerConstants(const LowerContext& ctx, const std::vector<std::int64_t>& values) {
    const ir::Node& n = ctx.node;
    if (n.outputs.empty() || n.outputs[0] == ir::kNoValue) return lowerError(ctx, "the node has no output");
    auto outShape = shapeOf(ctx, n.outputs[0]);
    if (!outShape) return outShape.diagnostics();
    LoweredKernel lk = beginKernel(ctx);
    const int out = addOutput(ctx, lk, n.outputs[0]);
    const DType t = dtypeOf(ctx.g, n.outputs[0]);
    std::vector<Stmt> stores;
    for (std::size_t i = 0; i < values.size(); ++i)
        stores.push_back(store(out, outShape->empty() ? std::vector<Expr>{} : std::vector<Expr>{intImm(static_cast<std::int64_t>(i))},
                               constant(static_cast<double>(values[i]), t)));
    lk.kernel.body = seq(std::move(stores));
    lk.kernel.notes.push_back("constant result (known at compile time)");
    return lk;
}

support::Expected<LoweredKernel> lowerShape(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    auto inShape = shapeOf(ctx, n.inputs.empty() ? ir::kNoValue : n.inputs[0]);
    if (!inShape) return inShape.diagnostics();
    const auto r = static_cast<std::int64_t>(inShape->size());
    std::int64_t s = n.attrInt("start", 0), e = n.attrInt("end", r);
    if (s < 0) s += r;
    if (e < 0) e += r;
    s = std::clamp<std::int64_t>(s, 0, r);
    e = std::clamp<std::int64_t>(e, 0, r);
    std::vector<std::int64_t> v;
    for (std::int64_t d = s; d < e; ++d) v.push_back((*inShape)[static_cast<std::size_t>(d)]);
    return lowerConstants(ctx, v);
}

support::Expected<LoweredKernel> lowerSize(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    auto inShape = shapeOf(ctx, n.inputs.empty() ? ir::kNoValue : n.inputs[0]);
    if (!inShape) return inShape.diagnostics();
    std::int64_t c = 1;
    for (auto e : *inShape) c *= e;
    return lowerConstants(ctx, {c});
}

support::Expected<LoweredKernel> lowerConstantOfShape(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    double value = 0.0;
    if (const ir::Attribute* a = n.attr("value"); a && a->t) {
        if (a->t->numElements() != 1) return lowerError(ctx, "value must hold one element");
        value = a->t->elementAsDouble(0);
    }
    return lowerMapped(ctx, {}, [value, &ctx](Kernel&, const std::vector<int>&, const std::vector<Expr>&) {
        return constant(value, dtypeOf(ctx.g, ctx.node.outputs[0]));
    });
}

support::Expected<LoweredKernel> lowerRange(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    if (n.inputs.size() < 3) return lowerError(ctx, "Range needs start, limit and delta");
    const DType t = dtypeOf(ctx.g, n.outputs.empty() ? ir::kNoValue : n.outputs[0]);
    auto start = constDoubles(ctx.g, n.inputs[0]);
    auto delta = constDoubles(ctx.g, n.inputs[2]);
    if (start && delta && start->size() == 1 && delta->size() == 1) {
        const double s0 = (*start)[0], d0 = (*delta)[0];
        return lowerMapped(ctx, {}, [s0, d0, t](Kernel&, const std::vector<int>&, const std::vector<Expr>& idx) {
            return constant(s0, t) + cast(idx[0], t) * constant(d0, t);
        });
    }
    // Runtime start/delta (the output extent is known): read them as scalar parameters.
    return lowerMapped(ctx, {0, 2}, [t](Kernel& k, const std::vector<int>& b, const std::vector<Expr>& idx) {
        auto scalarIdx = [&](int buf) { return std::vector<Expr>(bufShape(k, buf).size(), intImm(0)); };
        return cast(loadBuf(k, b[0], scalarIdx(b[0])), t) +
               cast(idx[0], t) * cast(loadBuf(k, b[1], scalarIdx(b[1])), t);
    });
}

}  // namespace

/// Trilu (ONNX Trilu-14): output (..., i, j) = input (..., i, j) where j - i >= k (upper) or
/// j - i <= k (lower), else 0; k (input 1, default 0) is folded into the code.
support::Expected<LoweredKernel> lowerTrilu(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    std::int64_t diag = 0;
    if (n.inputs.size() > 1 && n.inputs[1] != ir::kNoValue) {
        const auto kv = constInts(ctx.g, n.inputs[1]);
        if (!kv || kv->size() != 1)
            return lowerError(ctx, "k must be a constant int64 scalar (it is folded into the code)");
        diag = (*kv)[0];
    }
    if (n.inputs.empty() || n.inputs[0] == ir::kNoValue) return lowerError(ctx, "input 0 is missing");
    auto xs = shapeOf(ctx, n.inputs[0]);
    if (!xs) return xs.diagnostics();
    if (xs->size() < 2) return lowerError(ctx, "the input must have rank >= 2");
    const bool upper = n.attrInt("upper", 1) != 0;
    return lowerMapped(ctx, {0}, [upper, diag](Kernel& k, const std::vector<int>& b, const std::vector<Expr>& idx) {
        const std::size_t r = idx.size();
        const Expr offset = idx[r - 1] - idx[r - 2];  // j - i
        const Expr keep = upper ? offset >= intImm(diag) : offset <= intImm(diag);
        const DType t = k.buffers[static_cast<std::size_t>(b[0])].dtype;
        return select(keep, loadBuf(k, b[0], idx), constant(0.0, t));
    });
}

void registerMovementTemplates(TemplateTable& t) {
    for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) t[op] = lowerReshapeLike;
    t["Transpose"] = lowerTranspose;
    t["Concat"] = lowerConcat;
    t["Slice"] = lowerSlice;
    t["Gather"] = lowerGather;
    t["Pad"] = lowerPad;
    t["Expand"] = lowerExpand;
    t["Tile"] = lowerTile;
    t["Trilu"] = lowerTrilu;
    t["Split"] = lowerSplit;
    t["Shape"] = lowerShape;
    t["Size"] = lowerSize;
    t["ConstantOfShape"] = lowerConstantOfShape;
    t["Range"] = lowerRange;
}

}  // namespace tessera::lower::detail
