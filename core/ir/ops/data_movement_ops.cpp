// Data-movement and shape operators: Flatten, Reshape, Transpose, Concat, Split, Slice, Gather,
// Squeeze, Unsqueeze, Pad, Expand, Tile, Trilu, Constant, ConstantOfShape, Shape, Size, and the
// generator Range.
//
// Trilu (opset 14): keeps the upper (upper = 1, default) or lower triangle of the last two dims
// of a rank >= 2 tensor, relative to diagonal k (input 1, an int64 scalar, default 0): element
// (..., i, j) is kept when j - i >= k (upper) or j - i <= k (lower), else 0. Same shape and type.
//
// FLOP formula: 0 for all of them (pure data movement or metadata), except Range: 2 per output
// element (start + i * delta, a multiply-add).
// Injective (Hidet): the data-movement ops are (each output element is one input element, or a
// pad constant); Constant, ConstantOfShape, Shape, Size and Range are not marked: they compute no
// tensor function of their inputs and are folded before fusion.
//
// Range: start, limit and delta are scalars of one numeric type T (a one-element 1-D tensor is
// accepted too); the output is T[n] with n = max(ceil((limit - start) / delta), 0) when all three
// are constants (exact integer arithmetic for integer T, double for floating-point T; delta 0 is
// an error), else T[?].
//
// Opset differences handled by looking at the node itself: Reshape's `shape`, Slice's
// starts/ends/axes/steps, Split's `split`, Squeeze/Unsqueeze's `axes` and Pad's `pads` are
// attributes in old opsets and (constant) inputs in new ones; whichever the node carries is used.
// Constant inputs are read through InferContext::constantInput (initializers, Constant nodes, and
// Shape of a static tensor). Where a needed input is not constant the affected extents become
// unknown (the rank is kept where it is still known).
// Source: ONNX operator specs (https://onnx.ai/onnx/operators/).

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/ir/ops/op_helpers.h"

namespace tessera::ir::ops {

namespace {

using A = AttrType;

/// Largest rank a shape-producing constant may describe.
constexpr std::size_t kMaxRank = 1024;

FlopFn zeroFlops() {
    return [](const InferContext&, const std::vector<TensorType>&) -> std::optional<std::int64_t> { return 0; };
}

std::string listStr(const std::vector<std::int64_t>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
}

/// Product of extents as one Dim: known when all are known, the single non-1 symbolic extent
/// when everything else is 1, unknown otherwise.
Dim combineDims(const std::vector<Dim>& dims, std::size_t from, std::size_t to) {
    std::int64_t prod = 1;
    const Dim* lone = nullptr;
    int nonKnown = 0;
    for (std::size_t i = from; i < to; ++i) {
        if (dims[i].isKnown()) {
            if (__builtin_mul_overflow(prod, dims[i].value, &prod)) return Dim::unknown();
        } else {
            ++nonKnown;
            lone = &dims[i];
        }
    }
    if (nonKnown == 0) return Dim::known(prod);
    if (nonKnown == 1 && prod == 1) return *lone;
    return Dim::unknown();
}

/// Axes list from attribute `axes` or constant input `inputIndex`. `present` tells whether the
/// node has axes at all; nullopt result with present=true means "not constant".
std::optional<std::vector<std::int64_t>> axesOf(const InferContext& c, std::size_t inputIndex, bool& present) {
    if (const Attribute* a = c.node.attr("axes"); a && a->type == A::Ints) {
        present = true;
        return a->ints;
    }
    if (hasInput(c, inputIndex)) {
        present = true;
        return constantInts(c, inputIndex);
    }
    present = false;
    return std::nullopt;
}

// ------------------------------------------------------------------------- Flatten / Reshape

InferResult inferFlatten(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input 0 is missing");
    const TensorType& x = inputType(c, 0);
    const std::int64_t axisAttr = c.node.attrInt("axis", 1);
    if (!x.shape.rankKnown()) return single(makeType(x.dtype, Shape({Dim::unknown(), Dim::unknown()})));
    const auto r = static_cast<std::int64_t>(x.shape.rank());
    if (axisAttr < -r || axisAttr > r) return fail("axis " + std::to_string(axisAttr) + " is out of range for " + x.shape.str());
    const auto axis = static_cast<std::size_t>(axisAttr < 0 ? axisAttr + r : axisAttr);
    const auto& d = x.shape.dims();
    return single(makeType(x.dtype, Shape({combineDims(d, 0, axis), combineDims(d, axis, d.size())})));
}

InferResult inferReshape(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input data is missing");
    const TensorType& x = inputType(c, 0);
    std::optional<std::vector<std::int64_t>> target;
    if (const Attribute* a = c.node.attr("shape"); a && a->type == A::Ints) target = a->ints;
    else if (hasInput(c, 1)) {
        const Shape& st = inputType(c, 1).shape;
        if (st.rankKnown() && st.rank() != 1) return fail("input 'shape' must be 1-D, got " + inputType(c, 1).str());
        target = constantInts(c, 1);
    } else {
        return fail("input 'shape' is missing");
    }
    if (!target) {
        // Shape not constant: the rank is the length of the shape tensor when that is static.
        const Shape& st = inputType(c, 1).shape;
        if (st.rankKnown() && st.rank() == 1 && st[0].isKnown() && static_cast<std::size_t>(st[0].value) <= kMaxRank)
            return single(makeType(x.dtype, Shape(std::vector<Dim>(static_cast<std::size_t>(st[0].value), Dim::unknown()))));
        return single(makeType(x.dtype, Shape::unknownRank()));
    }
    if (target->size() > kMaxRank) return fail("shape has " + std::to_string(target->size()) + " entries");
    const bool allowZero = c.node.attrInt("allowzero", 0) != 0;
    std::vector<Dim> out;
    int inferAt = -1;
    bool hasZero = false;
    for (std::size_t i = 0; i < target->size(); ++i) {
        const std::int64_t v = (*target)[i];
        if (v == -1) {
            if (inferAt >= 0) return fail("shape " + listStr(*target) + " has more than one -1");
            inferAt = static_cast<int>(i);
            out.push_back(Dim::unknown());
        } else if (v < -1) {
            return fail("shape " + listStr(*target) + " has invalid entry " + std::to_string(v));
        } else if (v == 0 && !allowZero) {
            if (!x.shape.rankKnown()) {
                out.push_back(Dim::unknown());
            } else if (i >= x.shape.rank()) {
                return fail("shape " + listStr(*target) + ": entry " + std::to_string(i) + " is 0 (copy) but the input " +
                            x.shape.str() + " has rank " + std::to_string(x.shape.rank()));
            } else {
                out.push_back(x.shape[i]);
            }
        } else {
            if (v > kMaxExtent) return fail("shape " + listStr(*target) + " has an absurd extent " + std::to_string(v));
            if (v == 0) hasZero = true;
            out.push_back(Dim::known(v));
        }
    }
    if (allowZero && hasZero && inferAt >= 0) return fail("shape " + listStr(*target) + " has both 0 (allowzero) and -1");
    if (!x.shape.rankKnown()) return single(makeType(x.dtype, Shape(std::move(out))));

    // Element counts: known factors and symbols on both sides.
    auto tally = [](const std::vector<Dim>& dims, int skip, std::int64_t& known, std::multiset<std::string>& syms) {
        known = 1;
        for (std::size_t i = 0; i < dims.size(); ++i) {
            if (static_cast<int>(i) == skip) continue;
            if (dims[i].isKnown()) {
                if (__builtin_mul_overflow(known, dims[i].value, &known)) return false;
            } else if (dims[i].isSymbolic()) {
                syms.insert(dims[i].symbol);
            } else {
                return false;
            }
        }
        return true;
    };
    std::int64_t knownIn = 1, knownOut = 1;
    std::multiset<std::string> symsIn, symsOut;
    const bool inOk = tally(x.shape.dims(), -1, knownIn, symsIn);
    const bool outOk = tally(out, inferAt, knownOut, symsOut);
    if (!inOk || !outOk) return single(makeType(x.dtype, Shape(std::move(out))));
    bool symsMatch = true;
    for (const auto& s : symsOut) {
        auto it = symsIn.find(s);
        if (it == symsIn.end()) {
            symsMatch = false;
            break;
        }
        symsIn.erase(it);
    }
    if (inferAt >= 0) {
        if (symsMatch && symsIn.empty()) {
            if (knownOut == 0) {
                if (knownIn != 0) return fail("cannot reshape " + x.shape.str() + " to " + listStr(*target));
            } else {
                if (knownIn % knownOut != 0)
                    return fail("cannot reshape " + x.shape.str() + " (" + std::to_string(knownIn) + " elements) to " +
                                listStr(*target));
                out[static_cast<std::size_t>(inferAt)] = Dim::known(knownIn / knownOut);
            }
        } else if (symsMatch && symsIn.size() == 1 && knownIn == knownOut) {
            out[static_cast<std::size_t>(inferAt)] = Dim::symbolic(*symsIn.begin());
        }
    } else if (symsMatch && symsIn.empty() && knownIn != knownOut) {
        return fail("cannot reshape " + x.shape.str() + " (" + std::to_string(knownIn) + " elements) to " + listStr(*target) +
                    " (" + std::to_string(knownOut) + " elements)");
    }
    return single(makeType(x.dtype, Shape(std::move(out))));
}

// ----------------------------------------------------------------- Transpose / Concat / Split

InferResult inferTranspose(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input 0 is missing");
    const TensorType& x = inputType(c, 0);
    const Attribute* p = c.node.attr("perm");
    if (!x.shape.rankKnown()) {
        if (p && p->type == A::Ints && p->ints.size() <= kMaxRank)
            return single(makeType(x.dtype, Shape(std::vector<Dim>(p->ints.size(), Dim::unknown()))));
        return single(x);
    }
    const std::size_t r = x.shape.rank();
    std::vector<std::int64_t> perm;
    if (p && p->type == A::Ints) {
        perm = p->ints;
    } else {
        for (std::size_t i = 0; i < r; ++i) perm.push_back(static_cast<std::int64_t>(r - 1 - i));
    }
    if (perm.size() != r) return fail("perm " + listStr(perm) + " does not match rank " + std::to_string(r) + " of " + x.shape.str());
    std::vector<char> seen(r, 0);
    std::vector<Dim> out;
    for (auto v : perm) {
        if (v < 0 || static_cast<std::size_t>(v) >= r || seen[static_cast<std::size_t>(v)])
            return fail("perm " + listStr(perm) + " is not a permutation of 0.." + std::to_string(r == 0 ? 0 : r - 1));
        seen[static_cast<std::size_t>(v)] = 1;
        out.push_back(x.shape[static_cast<std::size_t>(v)]);
    }
    return single(makeType(x.dtype, Shape(std::move(out))));
}

InferResult inferConcat(const InferContext& c) {
    if (c.node.inputs.empty()) return fail("no inputs");
    const Attribute* ax = c.node.attr("axis");
    if (!ax || ax->type != A::Int) return fail("attribute 'axis' (int) is required");
    const Shape* ref = nullptr;
    bool allRanksKnown = true;
    for (std::size_t i = 0; i < c.node.inputs.size(); ++i) {
        if (!hasInput(c, i)) return fail("input " + std::to_string(i) + " is missing");
        const Shape& s = inputType(c, i).shape;
        if (!s.rankKnown()) allRanksKnown = false;
        else if (!ref) ref = &s;
    }
    const DType dt = inputType(c, 0).dtype;
    if (!ref) return single(makeType(dt, Shape::unknownRank()));
    const auto r = static_cast<std::int64_t>(ref->rank());
    if (r == 0) return fail("cannot concatenate scalars");
    const auto axis = normalizeAxis(ax->i, r);
    if (!axis) return fail("axis " + std::to_string(ax->i) + " is out of range for rank " + std::to_string(r));
    std::vector<Dim> out = ref->dims();
    std::int64_t sum = 0;
    bool sumKnown = allRanksKnown;
    int contributing = 0;
    for (std::size_t i = 0; i < c.node.inputs.size(); ++i) {
        const Shape& s = inputType(c, i).shape;
        if (!s.rankKnown()) continue;
        if (static_cast<std::int64_t>(s.rank()) != r)
            return fail("input " + std::to_string(i) + " " + s.str() + " has a different rank than " + ref->str());
        for (std::size_t k = 0; k < s.rank(); ++k) {
            if (static_cast<std::int64_t>(k) == *axis) continue;
            auto m = mergeEqualDims(out[k], s[k]);
            if (!m)
                return fail("input " + std::to_string(i) + " " + s.str() + " does not match " + ref->str() + " on axis " +
                            std::to_string(k));
            out[k] = *m;
        }
        const Dim& d = s[static_cast<std::size_t>(*axis)];
        ++contributing;
        if (d.isKnown()) {
            if (__builtin_add_overflow(sum, d.value, &sum)) sumKnown = false;
        } else {
            sumKnown = false;
        }
    }
    if (contributing == 1 && allRanksKnown) return single(makeType(dt, Shape(std::move(out))));
    out[static_cast<std::size_t>(*axis)] = sumKnown ? Dim::known(sum) : Dim::unknown();
    return single(makeType(dt, Shape(std::move(out))));
}

InferResult inferSplit(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input 0 is missing");
    const TensorType& x = inputType(c, 0);
    const std::size_t k = c.node.outputs.size();
    if (k == 0) return fail("no outputs");
    InferResult res;
    if (!x.shape.rankKnown()) {
        res.outputs.assign(k, makeType(x.dtype, Shape::unknownRank()));
        return res;
    }
    const std::int64_t axisAttr = c.node.attrInt("axis", 0);
    const auto axis = normalizeAxis(axisAttr, static_cast<std::int64_t>(x.shape.rank()));
    if (!axis) return fail("axis " + std::to_string(axisAttr) + " is out of range for " + x.shape.str());
    const Dim d = x.shape[static_cast<std::size_t>(*axis)];
    std::optional<std::vector<std::int64_t>> split;
    bool splitUnknown = false;
    if (const Attribute* a = c.node.attr("split"); a && a->type == A::Ints) split = a->ints;
    else if (hasInput(c, 1)) {
        split = constantInts(c, 1);
        splitUnknown = !split;
    }
    std::vector<Dim> parts(k, Dim::unknown());
    if (split) {
        if (split->size() != k)
            return fail("split " + listStr(*split) + " has " + std::to_string(split->size()) + " entries for " + std::to_string(k) +
                        " outputs");
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < k; ++i) {
            const std::int64_t v = (*split)[i];
            if (v < 0 || v > kMaxExtent) return fail("split " + listStr(*split) + " has an invalid entry");
            sum += v;  // at most k * 2^40: no overflow for any realistic output count
            parts[i] = Dim::known(v);
        }
        if (d.isKnown() && sum != d.value)
            return fail("split " + listStr(*split) + " sums to " + std::to_string(sum) + " but axis " + std::to_string(*axis) +
                        " of " + x.shape.str() + " has extent " + std::to_string(d.value));
    } else if (!splitUnknown) {
        const Attribute* no = c.node.attr("num_outputs");
        if (no && no->type == A::Int && no->i != static_cast<std::int64_t>(k))
            return fail("num_outputs " + std::to_string(no->i) + " does not match " + std::to_string(k) + " outputs");
        if (d.isKnown()) {
            const auto n = static_cast<std::int64_t>(k);
            if (d.value % n == 0) {
                parts.assign(k, Dim::known(d.value / n));
            } else if (no) {
                // opset 18: ceil-sized chunks, the last one smaller.
                const std::int64_t chunk = d.value / n + (d.value % n != 0 ? 1 : 0);
                const std::int64_t last = d.value - chunk * (n - 1);
                if (last <= 0)
                    return fail("cannot split extent " + std::to_string(d.value) + " into " + std::to_string(n) + " outputs");
                parts.assign(k, Dim::known(chunk));
                parts.back() = Dim::known(last);
            } else {
                return fail("extent " + std::to_string(d.value) + " of axis " + std::to_string(*axis) +
                            " cannot be split into " + std::to_string(n) + " equal parts");
            }
        } else if (k == 1) {
            parts[0] = d;
        }
    }
    for (std::size_t i = 0; i < k; ++i) {
        std::vector<Dim> dims = x.shape.dims();
        dims[static_cast<std::size_t>(*axis)] = parts[i];
        res.outputs.push_back(makeType(x.dtype, Shape(std::move(dims))));
    }
    return res;
}

// --------------------------------------------------------------------------- Slice / Gather

InferResult inferSlice(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input data is missing");
    const TensorType& x = inputType(c, 0);
    std::optional<std::vector<std::int64_t>> starts, ends, axes, steps;
    bool axesGiven = false, stepsGiven = false;
    if (const Attribute* s = c.node.attr("starts"); s && s->type == A::Ints) {
        starts = s->ints;
        ends = c.node.attrInts("ends");
        if (const Attribute* a = c.node.attr("axes"); a && a->type == A::Ints) {
            axes = a->ints;
            axesGiven = true;
        }
    } else {
        if (!hasInput(c, 1) || !hasInput(c, 2)) return fail("inputs starts and ends are required");
        starts = constantInts(c, 1);
        ends = constantInts(c, 2);
        if (hasInput(c, 3)) {
            axesGiven = true;
            axes = constantInts(c, 3);
        }
        if (hasInput(c, 4)) {
            stepsGiven = true;
            steps = constantInts(c, 4);
        }
    }
    if (!x.shape.rankKnown()) return single(x);
    const auto r = static_cast<std::int64_t>(x.shape.rank());
    std::vector<Dim> out = x.shape.dims();
    const bool axesKnown = !axesGiven || axes.has_value();
    if (!starts || !ends || !axesKnown || (stepsGiven && !steps)) {
        // Some parameter is not constant: the listed axes (or all when unknown) lose their extent.
        if (axesGiven && axes) {
            for (auto a : *axes)
                if (auto n = normalizeAxis(a, r)) out[static_cast<std::size_t>(*n)] = Dim::unknown();
        } else {
            for (auto& d : out) d = Dim::unknown();
        }
        return single(makeType(x.dtype, Shape(std::move(out))));
    }
    const std::size_t n = starts->size();
    if (ends->size() != n) return fail("starts " + listStr(*starts) + " and ends " + listStr(*ends) + " differ in length");
    if (!axesGiven) {
        if (static_cast<std::int64_t>(n) > r) return fail("starts has more entries than the rank of " + x.shape.str());
        axes = std::vector<std::int64_t>();
        for (std::size_t i = 0; i < n; ++i) axes->push_back(static_cast<std::int64_t>(i));
    }
    if (!stepsGiven) steps = std::vector<std::int64_t>(n, 1);
    if (axes->size() != n) return fail("axes " + listStr(*axes) + " and starts " + listStr(*starts) + " differ in length");
    if (steps->size() != n) return fail("steps " + listStr(*steps) + " and starts " + listStr(*starts) + " differ in length");
    std::vector<char> seen(static_cast<std::size_t>(r), 0);
    for (std::size_t i = 0; i < n; ++i) {
        const auto ax = normalizeAxis((*axes)[i], r);
        if (!ax) return fail("axis " + std::to_string((*axes)[i]) + " is out of range for " + x.shape.str());
        if (seen[static_cast<std::size_t>(*ax)]) return fail("axis " + std::to_string((*axes)[i]) + " is repeated");
        seen[static_cast<std::size_t>(*ax)] = 1;
        const std::int64_t step = (*steps)[i];
        if (step == 0) return fail("step 0 on axis " + std::to_string((*axes)[i]));
        if (step == std::numeric_limits<std::int64_t>::min()) return fail("step is out of range");
        std::int64_t s = (*starts)[i], e = (*ends)[i];
        Dim& od = out[static_cast<std::size_t>(*ax)];
        if (!od.isKnown()) {
            // Whole-axis slices keep a symbolic extent; anything else is unknown.
            const bool whole = step == 1 && s == 0 && e >= std::numeric_limits<std::int32_t>::max();
            if (!whole) od = Dim::unknown();
            continue;
        }
        const std::int64_t dim = od.value;
        if (s < 0) s = s < -dim ? -1 : s + dim;  // far below -dim: clamped below
        if (e < 0) e = e < -dim - 1 ? -1 : e + dim;
        std::int64_t len = 0;
        if (step > 0) {
            s = std::clamp<std::int64_t>(s, 0, dim);
            e = std::clamp<std::int64_t>(e, 0, dim);
            if (e > s) len = (e - s - 1) / step + 1;
        } else {
            s = std::clamp<std::int64_t>(s, 0, dim - 1);
            e = std::clamp<std::int64_t>(e, -1, dim - 1);
            if (s > e) len = (s - e - 1) / (-step) + 1;
        }
        od = Dim::known(len);
    }
    return single(makeType(x.dtype, Shape(std::move(out))));
}

InferResult inferGather(const InferContext& c) {
    if (!hasInput(c, 0) || !hasInput(c, 1)) return fail("inputs data and indices are required");
    const TensorType& x = inputType(c, 0);
    const TensorType& idx = inputType(c, 1);
    if (idx.dtype != DType::Undefined && idx.dtype != DType::I32 && idx.dtype != DType::I64)
        return fail("indices must be i32 or i64, got " + std::string(dtypeName(idx.dtype)));
    if (!x.shape.rankKnown()) return single(makeType(x.dtype, Shape::unknownRank()));
    const auto r = static_cast<std::int64_t>(x.shape.rank());
    if (r == 0) return fail("data must have rank >= 1");
    const std::int64_t axisAttr = c.node.attrInt("axis", 0);
    const auto axis = normalizeAxis(axisAttr, r);
    if (!axis) return fail("axis " + std::to_string(axisAttr) + " is out of range for " + x.shape.str());
    const Dim& d = x.shape[static_cast<std::size_t>(*axis)];
    if (d.isKnown()) {
        if (auto vals = constantInts(c, 1)) {
            for (auto v : *vals)
                if (v < -d.value || v >= d.value)
                    return fail("index " + std::to_string(v) + " is out of range for axis " + std::to_string(*axis) + " of extent " +
                                std::to_string(d.value));
        }
    }
    if (!idx.shape.rankKnown()) return single(makeType(x.dtype, Shape::unknownRank()));
    std::vector<Dim> out(x.shape.dims().begin(), x.shape.dims().begin() + *axis);
    out.insert(out.end(), idx.shape.dims().begin(), idx.shape.dims().end());
    out.insert(out.end(), x.shape.dims().begin() + *axis + 1, x.shape.dims().end());
    return single(makeType(x.dtype, Shape(std::move(out))));
}

// ------------------------------------------------------------------- Squeeze / Unsqueeze / Pad

InferResult inferSqueeze(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input 0 is missing");
    const TensorType& x = inputType(c, 0);
    bool present = false;
    auto axes = axesOf(c, 1, present);
    if (!x.shape.rankKnown() || (present && !axes)) return single(makeType(x.dtype, Shape::unknownRank()));
    const auto r = static_cast<std::int64_t>(x.shape.rank());
    std::vector<char> drop(static_cast<std::size_t>(r), 0);
    if (!present || axes->empty()) {
        for (std::size_t i = 0; i < x.shape.rank(); ++i) {
            const Dim& d = x.shape[i];
            if (!d.isKnown()) return single(makeType(x.dtype, Shape::unknownRank()));
            drop[i] = d.value == 1;
        }
    } else {
        for (auto a : *axes) {
            const auto n = normalizeAxis(a, r);
            if (!n) return fail("axis " + std::to_string(a) + " is out of range for " + x.shape.str());
            if (drop[static_cast<std::size_t>(*n)]) return fail("axis " + std::to_string(a) + " is repeated");
            const Dim& d = x.shape[static_cast<std::size_t>(*n)];
            if (d.isKnown() && d.value != 1)
                return fail("cannot squeeze axis " + std::to_string(a) + " of extent " + std::to_string(d.value) + " in " + x.shape.str());
            drop[static_cast<std::size_t>(*n)] = 1;
        }
    }
    std::vector<Dim> out;
    for (std::size_t i = 0; i < x.shape.rank(); ++i)
        if (!drop[i]) out.push_back(x.shape[i]);
    return single(makeType(x.dtype, Shape(std::move(out))));
}

InferResult inferUnsqueeze(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input 0 is missing");
    const TensorType& x = inputType(c, 0);
    bool present = false;
    auto axes = axesOf(c, 1, present);
    if (!present) return fail("axes are required (attribute before opset 13, input from 13)");
    if (!x.shape.rankKnown()) return single(makeType(x.dtype, Shape::unknownRank()));
    if (!axes) {
        const Shape& as = inputType(c, 1).shape;
        if (as.rankKnown() && as.rank() == 1 && as[0].isKnown() && static_cast<std::size_t>(as[0].value) <= kMaxRank)
            return single(makeType(x.dtype, Shape(std::vector<Dim>(x.shape.rank() + static_cast<std::size_t>(as[0].value), Dim::unknown()))));
        return single(makeType(x.dtype, Shape::unknownRank()));
    }
    if (axes->size() > kMaxRank) return fail("too many axes");
    const auto outRank = static_cast<std::int64_t>(x.shape.rank() + axes->size());
    std::vector<char> ins(static_cast<std::size_t>(outRank), 0);
    for (auto a : *axes) {
        const auto n = normalizeAxis(a, outRank);
        if (!n) return fail("axis " + std::to_string(a) + " is out of range for output rank " + std::to_string(outRank));
        if (ins[static_cast<std::size_t>(*n)]) return fail("axis " + std::to_string(a) + " is repeated");
        ins[static_cast<std::size_t>(*n)] = 1;
    }
    std::vector<Dim> out;
    std::size_t k = 0;
    for (std::int64_t i = 0; i < outRank; ++i) out.push_back(ins[static_cast<std::size_t>(i)] ? Dim::known(1) : x.shape[k++]);
    return single(makeType(x.dtype, Shape(std::move(out))));
}

InferResult inferPad(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input data is missing");
    const TensorType& x = inputType(c, 0);
    const std::string mode = c.node.attrString("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
        return fail("attribute 'mode' has unknown value \"" + mode + "\"");
    std::optional<std::vector<std::int64_t>> pads;
    if (const Attribute* a = c.node.attr("pads"); a && a->type == A::Ints) pads = a->ints;
    else if (hasInput(c, 1)) pads = constantInts(c, 1);
    else return fail("pads are required (attribute before opset 11, input from 11)");
    if (!x.shape.rankKnown()) return single(x);
    const auto r = static_cast<std::int64_t>(x.shape.rank());
    std::vector<std::int64_t> axes;
    if (hasInput(c, 3)) {
        auto a = constantInts(c, 3);
        if (!a) pads.reset();
        else axes = *a;
    } else {
        for (std::int64_t i = 0; i < r; ++i) axes.push_back(i);
    }
    std::vector<Dim> out = x.shape.dims();
    if (!pads) {
        for (auto& d : out) d = Dim::unknown();
        return single(makeType(x.dtype, Shape(std::move(out))));
    }
    if (pads->size() != 2 * axes.size())
        return fail("pads " + listStr(*pads) + " must have " + std::to_string(2 * axes.size()) + " entries for " + x.shape.str());
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const auto ax = normalizeAxis(axes[i], r);
        if (!ax) return fail("axis " + std::to_string(axes[i]) + " is out of range for " + x.shape.str());
        const std::int64_t pb = (*pads)[i], pe = (*pads)[i + axes.size()];
        if (pb > kMaxExtent || pe > kMaxExtent || pb < -kMaxExtent || pe < -kMaxExtent)
            return fail("pads " + listStr(*pads) + " has an absurd entry");
        Dim& d = out[static_cast<std::size_t>(*ax)];
        if (!d.isKnown()) {
            if (pb != 0 || pe != 0) d = Dim::unknown();
            continue;
        }
        const auto grown = addChecked(d.value, pb);
        const auto o = grown ? addChecked(*grown, pe) : std::nullopt;
        if (!o) return fail("padded extent of axis " + std::to_string(*ax) + " overflows");
        if (*o < 0) return fail("pads " + listStr(*pads) + " remove more than the extent " + std::to_string(d.value) + " of axis " +
                               std::to_string(*ax));
        d = Dim::known(*o);
    }
    return single(makeType(x.dtype, Shape(std::move(out))));
}

// -------------------------------------------------------------------- Expand / Tile / consts

InferResult inferExpand(const InferContext& c) {
    if (!hasInput(c, 0) || !hasInput(c, 1)) return fail("inputs input and shape are required");
    const TensorType& x = inputType(c, 0);
    auto target = constantInts(c, 1);
    if (!target) return single(makeType(x.dtype, Shape::unknownRank()));
    if (target->size() > kMaxRank) return fail("shape has too many entries");
    for (auto v : *target)
        if (v < 0 || v > kMaxExtent) return fail("shape " + listStr(*target) + " has an invalid entry");
    std::string error;
    auto s = broadcastShapes({x.shape, Shape::ofKnown(*target)}, error);
    if (!s) return fail(error);
    return single(makeType(x.dtype, std::move(*s)));
}

InferResult inferTile(const InferContext& c) {
    if (!hasInput(c, 0) || !hasInput(c, 1)) return fail("inputs input and repeats are required");
    const TensorType& x = inputType(c, 0);
    auto reps = constantInts(c, 1);
    if (!x.shape.rankKnown()) return single(x);
    std::vector<Dim> out = x.shape.dims();
    if (!reps) {
        for (auto& d : out) d = Dim::unknown();
        return single(makeType(x.dtype, Shape(std::move(out))));
    }
    if (reps->size() != out.size()) return fail("repeats " + listStr(*reps) + " must have one entry per axis of " + x.shape.str());
    for (std::size_t i = 0; i < out.size(); ++i) {
        const std::int64_t rp = (*reps)[i];
        if (rp < 0) return fail("repeats " + listStr(*reps) + " has a negative entry");
        if (rp == 1) continue;
        if (!out[i].isKnown()) {
            out[i] = rp == 0 ? Dim::known(0) : Dim::unknown();
            continue;
        }
        auto v = mulChecked(out[i].value, rp);
        if (!v || *v > kMaxExtent) return fail("tiled extent is absurdly large");
        out[i] = Dim::known(*v);
    }
    return single(makeType(x.dtype, Shape(std::move(out))));
}

InferResult inferConstant(const InferContext& c) {
    static const char* kKinds[] = {"value", "value_float", "value_floats", "value_int", "value_ints",
                                   "value_string", "value_strings", "sparse_value"};
    int count = 0;
    for (const char* k : kKinds) count += c.node.hasAttr(k) ? 1 : 0;
    if (count == 0) return fail("Constant has no value attribute");
    if (count > 1) return fail("Constant has more than one value attribute");
    const auto& [name, a] = *std::find_if(c.node.attributes.begin(), c.node.attributes.end(), [](const auto& kv) {
        for (const char* k : kKinds)
            if (kv.first == k) return true;
        return false;
    });
    auto vec = [](DType dt, std::size_t n) { return makeType(dt, Shape::ofKnown({static_cast<std::int64_t>(n)})); };
    if (name == "value" && a.type == A::Tensor && a.t) {
        for (auto d : a.t->dims)
            if (d < 0) return fail("value tensor has a negative dim");
        return single(a.t->type());
    }
    if (name == "value_float" && a.type == A::Float) return single(makeType(DType::F32, Shape()));
    if (name == "value_floats" && a.type == A::Floats) return single(vec(DType::F32, a.floats.size()));
    if (name == "value_int" && a.type == A::Int) return single(makeType(DType::I64, Shape()));
    if (name == "value_ints" && a.type == A::Ints) return single(vec(DType::I64, a.ints.size()));
    if (name == "value_string" && a.type == A::String) return single(makeType(DType::String, Shape()));
    if (name == "value_strings" && a.type == A::Strings) return single(vec(DType::String, a.strings.size()));
    if (name == "sparse_value") return single(TensorType{});
    return fail("attribute '" + name + "' has the wrong type " + attrTypeName(a.type));
}

InferResult inferConstantOfShape(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input shape is missing");
    DType dt = DType::F32;
    if (const Attribute* v = c.node.attr("value"); v && v->type == A::Tensor && v->t) dt = v->t->dtype;
    auto dims = constantInts(c, 0);
    if (!dims) {
        const Shape& s = inputType(c, 0).shape;
        if (s.rankKnown() && s.rank() == 1 && s[0].isKnown() && static_cast<std::size_t>(s[0].value) <= kMaxRank)
            return single(makeType(dt, Shape(std::vector<Dim>(static_cast<std::size_t>(s[0].value), Dim::unknown()))));
        return single(makeType(dt, Shape::unknownRank()));
    }
    if (dims->size() > kMaxRank) return fail("shape has too many entries");
    for (auto d : *dims)
        if (d < 0 || d > kMaxExtent) return fail("shape " + listStr(*dims) + " has an invalid entry");
    return single(makeType(dt, Shape::ofKnown(*dims)));
}

InferResult inferShape(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input 0 is missing");
    const Shape& s = inputType(c, 0).shape;
    if (!s.rankKnown()) return single(makeType(DType::I64, Shape({Dim::unknown()})));
    const auto r = static_cast<std::int64_t>(s.rank());
    std::int64_t start = c.node.attrInt("start", 0), end = c.node.attrInt("end", r);
    if (start < 0) start = start < -r ? 0 : start + r;
    if (end < 0) end = end < -r ? 0 : end + r;
    start = std::clamp<std::int64_t>(start, 0, r);
    end = std::clamp<std::int64_t>(end, 0, r);
    return single(makeType(DType::I64, Shape::ofKnown({std::max<std::int64_t>(end - start, 0)})));
}

/// ceil(num / den) for den != 0 without overflow; nullopt when the quotient does not fit.
std::optional<std::int64_t> ceilDiv(std::int64_t num, std::int64_t den) {
    if (num == std::numeric_limits<std::int64_t>::min() && den == -1) return std::nullopt;
    std::int64_t q = num / den;
    const std::int64_t r = num % den;
    if (r != 0 && ((r > 0) == (den > 0))) ++q;
    return q;
}

/// Number of Range elements from constant scalars (double path for floating-point T).
std::optional<std::string> rangeCount(DType t, const TensorData& start, const TensorData& limit,
                                      const TensorData& delta, std::int64_t& n) {
    if (isInteger(start.dtype) && isInteger(limit.dtype) && isInteger(delta.dtype) && isInteger(t)) {
        const std::int64_t s0 = start.elementAsInt(0), l0 = limit.elementAsInt(0), d0 = delta.elementAsInt(0);
        if (d0 == 0) return "delta must not be 0";
        std::int64_t diff = 0;
        if (__builtin_sub_overflow(l0, s0, &diff)) return "(limit - start) / delta is too large";
        const auto q = ceilDiv(diff, d0);
        if (!q || *q > kMaxExtent) return "(limit - start) / delta is too large";
        n = std::max<std::int64_t>(*q, 0);
        return std::nullopt;
    }
    const double s0 = start.elementAsDouble(0), l0 = limit.elementAsDouble(0), d0 = delta.elementAsDouble(0);
    if (d0 == 0) return "delta must not be 0";
    const double q = std::ceil((l0 - s0) / d0);
    if (std::isnan(q)) return "(limit - start) / delta is not a number";
    if (q > static_cast<double>(kMaxExtent)) return "(limit - start) / delta is too large";
    n = q > 0 ? static_cast<std::int64_t>(q) : 0;
    return std::nullopt;
}

InferResult inferRange(const InferContext& c) {
    static const char* kNames[] = {"start", "limit", "delta"};
    DType dt = DType::Undefined;
    for (std::size_t i = 0; i < 3; ++i) {
        if (!hasInput(c, i)) return fail(std::string("input '") + kNames[i] + "' is missing");
        const TensorType& t = inputType(c, i);
        const Shape& s = t.shape;
        const bool scalarLike = s.rankKnown() && (s.rank() == 0 || (s.rank() == 1 && s[0].isKnown() && s[0].value == 1));
        if (s.rankKnown() && !scalarLike) return fail(std::string(kNames[i]) + " must be a scalar, got shape " + s.str());
        if (dt == DType::Undefined) dt = t.dtype;
    }
    const TensorData* k[3] = {c.constantInput(0), c.constantInput(1), c.constantInput(2)};
    for (const TensorData* d : k)
        if (!d || d->numElements() != 1 || !(isInteger(d->dtype) || isFloatingPoint(d->dtype)))
            return single(makeType(dt, Shape({Dim::unknown()})));
    std::int64_t n = 0;
    if (auto e = rangeCount(dt, *k[0], *k[1], *k[2], n)) return fail(*e);
    return single(makeType(dt, Shape::ofKnown({n})));
}

InferResult inferTrilu(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input is required");
    const TensorType& x = inputType(c, 0);
    if (x.shape.rankKnown() && x.shape.rank() < 2) return fail("input must have rank >= 2, got " + x.shape.str());
    if (hasInput(c, 1)) {
        const TensorType& k = inputType(c, 1);
        if (k.dtype != DType::Undefined && k.dtype != DType::I64) return fail("k must be an int64 scalar");
        if (k.shape.rankKnown() && k.shape.rank() > 0) {
            const auto n = k.shape.numElements();
            if (n && *n != 1) return fail("k must be a scalar, got " + k.shape.str());
        }
    }
    return single(x);
}

OpSchema base(std::string op, OpCategory cat, int minIn, int maxIn, bool injective, std::string summary) {
    OpSchema s;
    s.opType = std::move(op);
    s.category = cat;
    s.minInputs = minIn;
    s.maxInputs = maxIn;
    s.injective = injective;
    s.summary = std::move(summary);
    s.flops = zeroFlops();
    return s;
}

}  // namespace

void registerDataMovementOps(std::vector<OpSchema>& out) {
    const auto DM = OpCategory::DataMovement;
    {
        OpSchema s = base("Flatten", DM, 1, 1, true, "-> [prod(d[:axis]), prod(d[axis:])]");
        s.attributes = {attrDefault("axis", Attribute::ofInt(1))};
        s.inferShapes = inferFlatten;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Reshape", DM, 1, 2, true, "new shape from a constant; 0 copies, -1 infers");
        s.attributes = {attrDefault("allowzero", Attribute::ofInt(0)), attr("shape", A::Ints)};
        s.inferShapes = inferReshape;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Transpose", DM, 1, 1, true, "permute axes (default: reverse)");
        s.attributes = {attr("perm", A::Ints)};
        s.inferShapes = inferTranspose;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Concat", DM, 1, -1, true, "join along axis");
        s.attributes = {attr("axis", A::Int, true)};
        s.inferShapes = inferConcat;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Split", DM, 1, 2, true, "split along axis (split sizes or equal parts)");
        s.maxOutputs = -1;
        s.attributes = {attrDefault("axis", Attribute::ofInt(0)), attr("split", A::Ints), attr("num_outputs", A::Int)};
        s.inferShapes = inferSplit;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Slice", DM, 1, 5, true, "strided slice; starts/ends/axes/steps constant inputs (attrs before opset 10)");
        s.attributes = {attr("starts", A::Ints), attr("ends", A::Ints), attr("axes", A::Ints)};
        s.inferShapes = inferSlice;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Gather", DM, 2, 2, true, "take indices along axis");
        s.attributes = {attrDefault("axis", Attribute::ofInt(0))};
        s.inferShapes = inferGather;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Squeeze", DM, 1, 2, true, "remove axes of extent 1");
        s.attributes = {attr("axes", A::Ints)};
        s.inferShapes = inferSqueeze;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Unsqueeze", DM, 1, 2, true, "insert axes of extent 1");
        s.attributes = {attr("axes", A::Ints)};
        s.inferShapes = inferUnsqueeze;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Pad", DM, 1, 4, true, "pad (or crop with negative pads) each axis");
        s.attributes = {attrDefault("mode", Attribute::ofString("constant")), attr("pads", A::Ints), attr("value", A::Float)};
        s.inferShapes = inferPad;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Expand", DM, 2, 2, true, "broadcast to a constant shape");
        s.inferShapes = inferExpand;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Tile", DM, 2, 2, true, "repeat along each axis");
        s.inferShapes = inferTile;
        out.push_back(std::move(s));
    }
    {
        // Injective like Pad: each output element is its input element or the constant 0.
        OpSchema s = base("Trilu", DM, 1, 2, true, "upper/lower triangle of the last two dims (diagonal k)");
        s.attributes = {attrDefault("upper", Attribute::ofInt(1))};
        s.inferShapes = inferTrilu;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Constant", OpCategory::Constant, 0, 0, false, "a constant tensor from an attribute");
        s.attributes = {attr("value", A::Tensor),       attr("value_float", A::Float), attr("value_floats", A::Floats),
                        attr("value_int", A::Int),      attr("value_ints", A::Ints),   attr("value_string", A::String),
                        attr("value_strings", A::Strings), attr("sparse_value", A::Undefined)};
        s.inferShapes = inferConstant;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("ConstantOfShape", OpCategory::Constant, 1, 1, false, "tensor of a constant shape filled with value");
        s.attributes = {attr("value", A::Tensor)};
        s.inferShapes = inferConstantOfShape;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Shape", OpCategory::Other, 1, 1, false, "i64 extents of the input (start/end slice)");
        s.attributes = {attr("start", A::Int), attr("end", A::Int)};
        s.inferShapes = inferShape;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Range", OpCategory::Constant, 3, 3, false, "start, start + delta, ... up to (excluding) limit");
        s.inferShapes = inferRange;
        s.flops = [](const InferContext&, const std::vector<TensorType>& outs) -> std::optional<std::int64_t> {
            if (outs.empty()) return std::nullopt;
            return product({numel(outs[0]), 2});
        };
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Size", OpCategory::Other, 1, 1, false, "number of elements (i64 scalar)");
        s.inferShapes = [](const InferContext& c) -> InferResult {
            if (!hasInput(c, 0)) return fail("input 0 is missing");
            return single(makeType(DType::I64, Shape()));
        };
        out.push_back(std::move(s));
    }
}

}  // namespace tessera::ir::ops
