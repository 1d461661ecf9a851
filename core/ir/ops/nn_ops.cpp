// Neural-network operators: Conv, ConvTranspose, Gemm, MatMul, BatchNormalization,
// LayerNormalization, Softmax, LogSoftmax, MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
// None is injective (each computes a reduction), per Hidet's classification.
//
// FLOP formulas (a multiply-add = 2 FLOPs):
//   Conv:          2 * N * M * prod(O) * (C/group) * prod(k)    (bias add not counted: it
//                  initialises the accumulator)   M = output channels, O = output spatial extents
//   ConvTranspose: 2 * N * C * prod(D) * (M/group) * prod(k)    D = input spatial extents
//   Gemm:          2 * M * N * K, plus M * N when C is given (the beta*C add)
//   MatMul:        2 * prod(batch) * M * N * K
//   BatchNormalization: 4 per element of X ((x-mean), /std, *scale, +B) + 2 per channel (var+eps, sqrt)
//   LayerNormalization: 7 per element of X (mean, x-mean, square, variance sum, *invstd, *scale,
//                  +B; 6 without B); per-row eps add and rsqrt not counted
//   Softmax, LogSoftmax: 5 per element (max, subtract, exp, sum, divide/log-subtract)
//   MaxPool, AveragePool: prod(kernel) per output element (one compare/add per window element;
//                  AveragePool's final divide is folded into that count)
//   GlobalAveragePool, GlobalMaxPool: 1 per input element
// Source: ONNX operator specs (https://onnx.ai/onnx/operators/), output-size formulas from the
// Conv/MaxPool "auto_pad" and "ceil_mode" sections.

#include <algorithm>

#include "core/ir/ops/op_helpers.h"

namespace tessera::ir::ops {

namespace {

using A = AttrType;

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

struct WindowAttrs {
    std::size_t n = 0;  // spatial rank
    std::vector<std::int64_t> kernel;  // -1 where unknown
    std::vector<std::int64_t> strides, dilations, pads;
    AutoPad autoPad = AutoPad::NotSet;
    bool ceilMode = false;
};

std::string listStr(const std::vector<std::int64_t>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
}

/// Reads and validates strides, dilations, pads, auto_pad and ceil_mode for n spatial axes.
std::optional<std::string> readWindowAttrs(const InferContext& c, std::size_t n, WindowAttrs& w) {
    w.n = n;
    auto readList = [&](const char* name, std::int64_t dflt, std::size_t len, std::int64_t minValue,
                        std::vector<std::int64_t>& outList) -> std::optional<std::string> {
        const Attribute* a = c.node.attr(name);
        if (!a) {
            outList.assign(len, dflt);
            return std::nullopt;
        }
        if (a->type != A::Ints) return std::string("attribute '") + name + "' must be ints";
        if (a->ints.size() != len)
            return std::string("attribute '") + name + "' has " + std::to_string(a->ints.size()) +
                   " values, expected " + std::to_string(len) + " for " + std::to_string(n) + " spatial axes";
        for (auto v : a->ints) {
            if (v < minValue) return std::string("attribute '") + name + "' value " + std::to_string(v) + " must be >= " +
                                     std::to_string(minValue) + " (got " + listStr(a->ints) + ")";
            if (v > kMaxExtent) return std::string("attribute '") + name + "' value " + std::to_string(v) + " is absurdly large";
        }
        outList = a->ints;
        return std::nullopt;
    };
    if (auto e = readList("strides", 1, n, 1, w.strides)) return e;
    if (auto e = readList("dilations", 1, n, 1, w.dilations)) return e;
    if (auto e = readList("pads", 0, 2 * n, 0, w.pads)) return e;
    const std::string ap = c.node.attrString("auto_pad", "NOTSET");
    if (ap == "NOTSET" || ap.empty()) w.autoPad = AutoPad::NotSet;
    else if (ap == "SAME_UPPER") w.autoPad = AutoPad::SameUpper;
    else if (ap == "SAME_LOWER") w.autoPad = AutoPad::SameLower;
    else if (ap == "VALID") w.autoPad = AutoPad::Valid;
    else return "attribute 'auto_pad' has unknown value \"" + ap + "\"";
    const std::int64_t cm = c.node.attrInt("ceil_mode", 0);
    if (cm != 0 && cm != 1) return "attribute 'ceil_mode' must be 0 or 1, got " + std::to_string(cm);
    w.ceilMode = cm == 1;
    return std::nullopt;
}

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/// Output extent of one sliding-window axis (Conv, pools). Extents are <= kMaxExtent, so the
/// arithmetic below cannot overflow.
std::optional<std::string> windowOutput(const Dim& in, std::size_t axis, const WindowAttrs& w, Dim& out) {
    const std::int64_t s = w.strides[axis], d = w.dilations[axis], k = w.kernel[axis];
    if (!in.isKnown()) {
        out = Dim::unknown();
        return std::nullopt;
    }
    const std::int64_t x = in.value;
    if (x > kMaxExtent) return "input extent " + std::to_string(x) + " is absurdly large";
    if (w.autoPad == AutoPad::SameUpper || w.autoPad == AutoPad::SameLower) {
        out = Dim::known(ceilDiv(x, s));
        return std::nullopt;
    }
    if (k < 0) {
        out = Dim::unknown();
        return std::nullopt;
    }
    // Attributes are each <= kMaxExtent (2^40), so d*(k-1) may exceed int64: use 128 bits.
    const __int128 eff128 = static_cast<__int128>(d) * (k - 1) + 1;
    if (eff128 > kMaxExtent) return "effective kernel extent (dilation " + std::to_string(d) + ", kernel " + std::to_string(k) + ") is absurdly large";
    const std::int64_t eff = static_cast<std::int64_t>(eff128);
    const std::int64_t padded = w.autoPad == AutoPad::Valid ? x : x + w.pads[axis] + w.pads[axis + w.n];
    const std::int64_t num = padded - eff;
    if (num < 0)
        return "kernel extent " + std::to_string(eff) + " (kernel " + std::to_string(k) + ", dilation " +
               std::to_string(d) + ") is larger than the padded input extent " + std::to_string(padded) +
               " on spatial axis " + std::to_string(axis);
    std::int64_t o = (w.ceilMode ? ceilDiv(num, s) : num / s) + 1;
    // ONNX (and PyTorch): with ceil_mode the last window must start inside the input or left pad.
    if (w.ceilMode && w.autoPad == AutoPad::NotSet && static_cast<__int128>(o - 1) * s >= x + w.pads[axis]) --o;
    out = Dim::known(o);
    return std::nullopt;
}

const Dim& dimOr(const Shape& s, std::size_t i) {
    static const Dim kUnknown;
    return s.rankKnown() && i < s.rank() ? s[i] : kUnknown;
}

// ------------------------------------------------------------------------------------ Conv

/// Checks shared by Conv and ConvTranspose: X and W present, positive group, ranks >= 3 and equal.
/// Sets `n` (spatial dims) and reads the window attributes into `w` (kernel unset: -1).
/// Returns a result to return at once (an error, or an unknown-rank output), or nullopt to go on.
std::optional<InferResult> convPrelude(const InferContext& c, std::size_t& n, WindowAttrs& w) {
    if (!hasInput(c, 0) || !hasInput(c, 1)) return fail("inputs X and W are required");
    const TensorType& x = inputType(c, 0);
    const TensorType& wt = inputType(c, 1);
    const std::int64_t group = c.node.attrInt("group", 1);
    if (group <= 0 || group > kMaxExtent) return fail("attribute 'group' must be positive, got " + std::to_string(group));
    if (x.shape.rankKnown() && x.shape.rank() < 3)
        return fail("input X must have rank >= 3 (N, C, spatial...), got " + x.shape.str());
    if (wt.shape.rankKnown() && wt.shape.rank() < 3)
        return fail("weight W must have rank >= 3 (M, C/group, kernel...), got " + wt.shape.str());
    if (x.shape.rankKnown() && wt.shape.rankKnown() && x.shape.rank() != wt.shape.rank())
        return fail("input X " + x.shape.str() + " and weight W " + wt.shape.str() + " have different ranks");
    if (!x.shape.rankKnown() && !wt.shape.rankKnown()) return single(makeType(x.dtype, Shape::unknownRank()));
    n = (x.shape.rankKnown() ? x.shape.rank() : wt.shape.rank()) - 2;
    if (auto e = readWindowAttrs(c, n, w)) return fail(*e);
    w.kernel.assign(n, -1);
    return std::nullopt;
}

InferResult inferConv(const InferContext& c) {
    std::size_t n = 0;
    WindowAttrs w;
    if (auto early = convPrelude(c, n, w)) return *early;
    const TensorType& x = inputType(c, 0);
    const TensorType& wt = inputType(c, 1);
    const std::int64_t group = c.node.attrInt("group", 1);
    if (const Attribute* ks = c.node.attr("kernel_shape"); ks && ks->type == A::Ints) {
        if (ks->ints.size() != n)
            return fail("attribute 'kernel_shape' has " + std::to_string(ks->ints.size()) + " values, expected " +
                        std::to_string(n));
        for (auto v : ks->ints)
            if (v <= 0 || v > kMaxExtent) return fail("attribute 'kernel_shape' value " + std::to_string(v) + " is invalid");
        w.kernel = ks->ints;
    }
    for (std::size_t i = 0; i < n; ++i) {
        const Dim& kd = dimOr(wt.shape, i + 2);
        if (!kd.isKnown()) continue;
        if (kd.value <= 0) return fail("weight W " + wt.shape.str() + " has an empty kernel");
        if (w.kernel[i] >= 0 && w.kernel[i] != kd.value)
            return fail("attribute 'kernel_shape' " + listStr(w.kernel) + " does not match weight W " + wt.shape.str());
        w.kernel[i] = kd.value;
    }
    const Dim& cin = dimOr(x.shape, 1);
    const Dim& wc = dimOr(wt.shape, 1);
    if (cin.isKnown() && wc.isKnown()) {
        const auto expect = mulChecked(wc.value, group);
        if (!expect || *expect != cin.value)
            return fail("input channels " + std::to_string(cin.value) + " != weight channels " + std::to_string(wc.value) +
                        " * group " + std::to_string(group));
    }
    const Dim& m = dimOr(wt.shape, 0);
    if (m.isKnown() && m.value % group != 0)
        return fail("output channels " + std::to_string(m.value) + " are not divisible by group " + std::to_string(group));
    if (hasInput(c, 2)) {
        const Shape& b = inputType(c, 2).shape;
        if (b.rankKnown()) {
            if (b.rank() != 1) return fail("bias B must have rank 1, got " + b.str());
            if (b[0].isKnown() && m.isKnown() && b[0].value != m.value)
                return fail("bias B " + b.str() + " does not match " + std::to_string(m.value) + " output channels");
        }
    }
    std::vector<Dim> out{dimOr(x.shape, 0), m};
    for (std::size_t i = 0; i < n; ++i) {
        Dim o;
        if (auto e = windowOutput(dimOr(x.shape, i + 2), i, w, o)) return fail(*e);
        out.push_back(o);
    }
    return single(makeType(x.dtype, Shape(std::move(out))));
}

std::optional<std::int64_t> convFlops(const InferContext& c, const std::vector<TensorType>& outs) {
    if (outs.empty() || c.inputTypes.size() < 2) return std::nullopt;
    const auto wdims = c.inputTypes[1].shape.knownDims();
    if (!wdims || wdims->size() < 2) return std::nullopt;
    std::optional<std::int64_t> macs = numel(outs[0]);
    for (std::size_t i = 1; i < wdims->size() && macs; ++i) macs = mulChecked(*macs, (*wdims)[i]);
    return product({macs, 2});
}

InferResult inferConvTranspose(const InferContext& c) {
    std::size_t n = 0;
    WindowAttrs w;
    if (auto early = convPrelude(c, n, w)) return *early;
    const TensorType& x = inputType(c, 0);
    const TensorType& wt = inputType(c, 1);
    const std::int64_t group = c.node.attrInt("group", 1);
    if (const Attribute* ks = c.node.attr("kernel_shape"); ks && ks->type == A::Ints && ks->ints.size() == n) {
        for (auto v : ks->ints)
            if (v <= 0 || v > kMaxExtent) return fail("attribute 'kernel_shape' value " + std::to_string(v) + " is invalid");
        w.kernel = ks->ints;
    }
    for (std::size_t i = 0; i < n; ++i)
        if (const Dim& kd = dimOr(wt.shape, i + 2); kd.isKnown()) w.kernel[i] = kd.value;
    std::vector<std::int64_t> outPad(n, 0);
    if (const Attribute* op = c.node.attr("output_padding"); op && op->type == A::Ints) {
        if (op->ints.size() != n) return fail("attribute 'output_padding' must have " + std::to_string(n) + " values");
        for (auto v : op->ints)
            if (v < 0 || v > kMaxExtent) return fail("attribute 'output_padding' value " + std::to_string(v) + " is invalid");
        outPad = op->ints;
    }
    const Dim& cin = dimOr(x.shape, 1);
    const Dim& wc = dimOr(wt.shape, 0);
    if (cin.isKnown() && wc.isKnown() && cin.value != wc.value)
        return fail("input channels " + std::to_string(cin.value) + " != weight input channels " + std::to_string(wc.value));
    Dim m = Dim::unknown();
    if (const Dim& wm = dimOr(wt.shape, 1); wm.isKnown()) {
        const auto mv = mulChecked(wm.value, group);
        if (!mv) return fail("output channels overflow");
        m = Dim::known(*mv);
    }
    std::vector<Dim> out{dimOr(x.shape, 0), m};
    const Attribute* os = c.node.attr("output_shape");
    if (os && os->type == A::Ints) {
        std::vector<std::int64_t> spatial = os->ints;
        if (spatial.size() == n + 2) spatial.erase(spatial.begin(), spatial.begin() + 2);
        if (spatial.size() != n) return fail("attribute 'output_shape' must have " + std::to_string(n) + " values");
        for (auto v : spatial) {
            if (v <= 0 || v > kMaxExtent) return fail("attribute 'output_shape' value " + std::to_string(v) + " is invalid");
            out.push_back(Dim::known(v));
        }
        return single(makeType(x.dtype, Shape(std::move(out))));
    }
    for (std::size_t i = 0; i < n; ++i) {
        const Dim& d = dimOr(x.shape, i + 2);
        if (!d.isKnown() || d.value > kMaxExtent) {
            out.push_back(Dim::unknown());
            continue;
        }
        if (w.autoPad == AutoPad::SameUpper || w.autoPad == AutoPad::SameLower) {
            const auto o = mulChecked(d.value, w.strides[i]);
            if (!o || *o > kMaxExtent) return fail("output extent on spatial axis " + std::to_string(i) + " is absurdly large");
            out.push_back(Dim::known(*o));
            continue;
        }
        if (w.kernel[i] < 0) {
            out.push_back(Dim::unknown());
            continue;
        }
        const std::int64_t pads = w.autoPad == AutoPad::Valid ? 0 : w.pads[i] + w.pads[i + n];
        const __int128 o128 = static_cast<__int128>(w.strides[i]) * (d.value - 1) + outPad[i] +
                              static_cast<__int128>(w.kernel[i] - 1) * w.dilations[i] + 1 - pads;
        if (o128 > kMaxExtent) return fail("output extent on spatial axis " + std::to_string(i) + " is absurdly large");
        const auto o = static_cast<std::int64_t>(o128);
        if (o <= 0) return fail("output extent " + std::to_string(o) + " on spatial axis " + std::to_string(i) + " is not positive");
        out.push_back(Dim::known(o));
    }
    return single(makeType(x.dtype, Shape(std::move(out))));
}

std::optional<std::int64_t> convTransposeFlops(const InferContext& c, const std::vector<TensorType>&) {
    if (c.inputTypes.size() < 2) return std::nullopt;
    const auto wdims = c.inputTypes[1].shape.knownDims();
    if (!wdims || wdims->size() < 2) return std::nullopt;
    std::optional<std::int64_t> macs = numel(c.inputTypes[0]);
    for (std::size_t i = 1; i < wdims->size() && macs; ++i) macs = mulChecked(*macs, (*wdims)[i]);
    return product({macs, 2});
}

// ------------------------------------------------------------------------------- Gemm / MatMul

InferResult inferGemm(const InferContext& c) {
    if (!hasInput(c, 0) || !hasInput(c, 1)) return fail("inputs A and B are required");
    const TensorType& a = inputType(c, 0);
    const TensorType& b = inputType(c, 1);
    if (a.shape.rankKnown() && a.shape.rank() != 2) return fail("input A must have rank 2, got " + a.shape.str());
    if (b.shape.rankKnown() && b.shape.rank() != 2) return fail("input B must have rank 2, got " + b.shape.str());
    const bool ta = c.node.attrInt("transA", 0) != 0, tb = c.node.attrInt("transB", 0) != 0;
    const Dim m = dimOr(a.shape, ta ? 1 : 0), ka = dimOr(a.shape, ta ? 0 : 1);
    const Dim kb = dimOr(b.shape, tb ? 1 : 0), nn = dimOr(b.shape, tb ? 0 : 1);
    if (!mergeEqualDims(ka, kb))
        return fail("inner dimensions differ: A " + a.shape.str() + (ta ? " (transposed)" : "") + " and B " + b.shape.str() +
                    (tb ? " (transposed)" : "") + " give K " + ka.str() + " vs " + kb.str());
    if (hasInput(c, 2)) {
        const Shape& cs = inputType(c, 2).shape;
        if (cs.rankKnown()) {
            if (cs.rank() > 2) return fail("C " + cs.str() + " cannot broadcast to [M,N]");
            const Dim* target[2] = {&m, &nn};
            for (std::size_t i = 0; i < cs.rank(); ++i) {
                const Dim& d = cs[i];
                const Dim& t = *target[2 - cs.rank() + i];
                if (d.isKnown() && d.value != 1 && t.isKnown() && d.value != t.value)
                    return fail("C " + cs.str() + " cannot broadcast to [" + m.str() + "," + nn.str() + "]");
            }
        }
    }
    return single(makeType(a.dtype, Shape({m, nn})));
}

std::optional<std::int64_t> gemmFlops(const InferContext& c, const std::vector<TensorType>& outs) {
    if (outs.empty() || c.inputTypes.size() < 2) return std::nullopt;
    const auto ad = c.inputTypes[0].shape.knownDims();
    if (!ad || ad->size() != 2) return std::nullopt;
    const std::int64_t k = c.node.attrInt("transA", 0) ? (*ad)[0] : (*ad)[1];
    const auto mn = numel(outs[0]);
    auto f = product({mn, k, 2});
    if (f && hasInput(c, 2)) f = addChecked(*f, *mn);
    return f;
}

InferResult inferMatMul(const InferContext& c) {
    if (!hasInput(c, 0) || !hasInput(c, 1)) return fail("inputs A and B are required");
    const TensorType& a = inputType(c, 0);
    const TensorType& b = inputType(c, 1);
    if ((a.shape.rankKnown() && a.shape.rank() == 0) || (b.shape.rankKnown() && b.shape.rank() == 0))
        return fail("MatMul operands must have rank >= 1, got " + a.shape.str() + " and " + b.shape.str());
    if (!a.shape.rankKnown() || !b.shape.rankKnown()) return single(makeType(a.dtype, Shape::unknownRank()));
    std::vector<Dim> ad = a.shape.dims(), bd = b.shape.dims();
    const bool vecA = ad.size() == 1, vecB = bd.size() == 1;
    if (vecA) ad.insert(ad.begin(), Dim::known(1));
    if (vecB) bd.push_back(Dim::known(1));
    const Dim& ka = ad[ad.size() - 1];
    const Dim& kb = bd[bd.size() - 2];
    if (!mergeEqualDims(ka, kb))
        return fail("inner dimensions differ: " + a.shape.str() + " x " + b.shape.str() + " (" + ka.str() + " vs " +
                    kb.str() + ")");
    std::string error;
    auto batch = broadcastShapes({Shape(std::vector<Dim>(ad.begin(), ad.end() - 2)), Shape(std::vector<Dim>(bd.begin(), bd.end() - 2))},
                                 error);
    if (!batch) return fail("batch dimensions of " + a.shape.str() + " and " + b.shape.str() + " do not broadcast: " + error);
    std::vector<Dim> out = batch->dims();
    if (!vecA) out.push_back(ad[ad.size() - 2]);
    if (!vecB) out.push_back(bd[bd.size() - 1]);
    return single(makeType(a.dtype, Shape(std::move(out))));
}

std::optional<std::int64_t> matmulFlops(const InferContext& c, const std::vector<TensorType>& outs) {
    if (outs.empty() || c.inputTypes.empty()) return std::nullopt;
    const auto ad = c.inputTypes[0].shape.knownDims();
    if (!ad || ad->empty()) return std::nullopt;
    return product({numel(outs[0]), ad->back(), 2});
}

// --------------------------------------------------------------------------- normalisations

InferResult inferBatchNorm(const InferContext& c) {
    for (std::size_t i = 0; i < 5; ++i)
        if (!hasInput(c, i)) return fail("input " + std::to_string(i) + " is required (X, scale, B, mean, var)");
    const TensorType& x = inputType(c, 0);
    if (x.shape.rankKnown() && x.shape.rank() < 2) return fail("input X must have rank >= 2 (N, C, ...), got " + x.shape.str());
    const Dim ch = dimOr(x.shape, 1);
    static const char* kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
    for (std::size_t i = 1; i < 5; ++i) {
        const Shape& s = inputType(c, i).shape;
        if (!s.rankKnown()) continue;
        if (s.rank() != 1) return fail(std::string(kNames[i]) + " must have rank 1, got " + s.str());
        if (s[0].isKnown() && ch.isKnown() && s[0].value != ch.value)
            return fail(std::string(kNames[i]) + " " + s.str() + " does not match " + std::to_string(ch.value) + " channels of X " +
                        x.shape.str());
    }
    InferResult r;
    r.outputs.push_back(x);
    for (std::size_t i = 1; i < c.node.outputs.size(); ++i) r.outputs.push_back(makeType(inputType(c, 1).dtype, Shape({ch})));
    return r;
}

std::optional<std::int64_t> batchNormFlops(const InferContext& c, const std::vector<TensorType>&) {
    if (c.inputTypes.empty()) return std::nullopt;
    const auto d = c.inputTypes[0].shape.knownDims();
    if (!d || d->size() < 2) return std::nullopt;
    auto f = product({numel(c.inputTypes[0]), 4});
    if (!f) return std::nullopt;
    return addChecked(*f, 2 * (*d)[1]);
}

InferResult inferLayerNorm(const InferContext& c) {
    if (!hasInput(c, 0) || !hasInput(c, 1)) return fail("inputs X and Scale are required");
    const TensorType& x = inputType(c, 0);
    const DType stash = dtypeFromOnnxCode(c.node.attrInt("stash_type", 1));
    if (stash == DType::Undefined) return fail("attribute 'stash_type' is not a valid type code");
    InferResult r;
    r.outputs.push_back(x);
    if (!x.shape.rankKnown()) {
        for (std::size_t i = 1; i < c.node.outputs.size(); ++i) r.outputs.push_back(makeType(stash, Shape::unknownRank()));
        return r;
    }
    const auto rank = static_cast<std::int64_t>(x.shape.rank());
    const auto axis = normalizeAxis(c.node.attrInt("axis", -1), rank);
    if (!axis) return fail("axis " + std::to_string(c.node.attrInt("axis", -1)) + " is out of range for " + x.shape.str());
    std::vector<Dim> stat(x.shape.dims().begin(), x.shape.dims().begin() + *axis);
    stat.resize(x.shape.rank(), Dim::known(1));
    for (std::size_t i = 1; i < c.node.outputs.size(); ++i) r.outputs.push_back(makeType(stash, Shape(stat)));
    return r;
}

std::optional<std::int64_t> layerNormFlops(const InferContext& c, const std::vector<TensorType>&) {
    if (c.inputTypes.empty()) return std::nullopt;
    return product({numel(c.inputTypes[0]), hasInput(c, 2) ? 7 : 6});
}

InferResult inferSoftmax(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input 0 is missing");
    const TensorType& x = inputType(c, 0);
    if (x.shape.rankKnown()) {
        const std::int64_t axis = c.node.attrInt("axis", -1);
        if (!normalizeAxis(axis, static_cast<std::int64_t>(x.shape.rank())) && !(x.shape.rank() == 0 && (axis == 0 || axis == -1)))
            return fail("axis " + std::to_string(axis) + " is out of range for " + x.shape.str());
    }
    return single(x);
}

// ----------------------------------------------------------------------------------- pooling

InferResult inferPool(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input X is required");
    const TensorType& x = inputType(c, 0);
    const Attribute* ks = c.node.attr("kernel_shape");
    if (!ks || ks->type != A::Ints) return fail("attribute 'kernel_shape' (ints) is required");
    const std::size_t n = ks->ints.size();
    if (n == 0) return fail("attribute 'kernel_shape' is empty");
    for (auto v : ks->ints)
        if (v <= 0 || v > kMaxExtent) return fail("attribute 'kernel_shape' value " + std::to_string(v) + " is invalid");
    if (x.shape.rankKnown() && x.shape.rank() != n + 2)
        return fail("input X " + x.shape.str() + " must have rank " + std::to_string(n + 2) + " for kernel_shape " +
                    listStr(ks->ints));
    WindowAttrs w;
    if (auto e = readWindowAttrs(c, n, w)) return fail(*e);
    w.kernel = ks->ints;
    std::vector<Dim> out{dimOr(x.shape, 0), dimOr(x.shape, 1)};
    for (std::size_t i = 0; i < n; ++i) {
        Dim o;
        if (auto e = windowOutput(dimOr(x.shape, i + 2), i, w, o)) return fail(*e);
        out.push_back(o);
    }
    InferResult r;
    r.outputs.push_back(makeType(x.dtype, Shape(out)));
    if (c.node.outputs.size() > 1) r.outputs.push_back(makeType(DType::I64, Shape(out)));
    return r;
}

std::optional<std::int64_t> poolFlops(const InferContext& c, const std::vector<TensorType>& outs) {
    if (outs.empty()) return std::nullopt;
    std::optional<std::int64_t> f = numel(outs[0]);
    for (auto k : c.node.attrInts("kernel_shape"))
        if (f) f = mulChecked(*f, k);
    return f;
}

InferResult inferGlobalPool(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input X is required");
    const TensorType& x = inputType(c, 0);
    if (!x.shape.rankKnown()) return single(x);
    if (x.shape.rank() < 3) return fail("input X must have rank >= 3 (N, C, spatial...), got " + x.shape.str());
    std::vector<Dim> out = x.shape.dims();
    for (std::size_t i = 2; i < out.size(); ++i) out[i] = Dim::known(1);
    return single(makeType(x.dtype, Shape(std::move(out))));
}

OpSchema base(std::string op, OpCategory cat, int minIn, int maxIn, std::string summary) {
    OpSchema s;
    s.opType = std::move(op);
    s.category = cat;
    s.minInputs = minIn;
    s.maxInputs = maxIn;
    s.summary = std::move(summary);
    return s;
}

std::vector<AttrSchema> windowSchema() {
    return {attrDefault("auto_pad", Attribute::ofString("NOTSET")), attr("dilations", A::Ints), attr("kernel_shape", A::Ints),
            attr("pads", A::Ints), attr("strides", A::Ints)};
}

}  // namespace

void registerNnOps(std::vector<OpSchema>& out) {
    {
        OpSchema s = base("Conv", OpCategory::Convolution, 2, 3, "N-d convolution, NCHW; W is [M, C/group, k...]");
        s.attributes = windowSchema();
        s.attributes.push_back(attrDefault("group", Attribute::ofInt(1)));
        s.inferShapes = inferConv;
        s.flops = convFlops;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("ConvTranspose", OpCategory::Convolution, 2, 3, "transposed convolution; W is [C, M/group, k...]");
        s.attributes = windowSchema();
        s.attributes.push_back(attrDefault("group", Attribute::ofInt(1)));
        s.attributes.push_back(attr("output_padding", A::Ints));
        s.attributes.push_back(attr("output_shape", A::Ints));
        s.inferShapes = inferConvTranspose;
        s.flops = convTransposeFlops;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Gemm", OpCategory::MatMul, 2, 3, "alpha * A' B' + beta * C");
        s.attributes = {attrDefault("alpha", Attribute::ofFloat(1.0)), attrDefault("beta", Attribute::ofFloat(1.0)),
                        attrDefault("transA", Attribute::ofInt(0)), attrDefault("transB", Attribute::ofInt(0)),
                        attr("broadcast", A::Int)};
        s.inferShapes = inferGemm;
        s.flops = gemmFlops;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("MatMul", OpCategory::MatMul, 2, 2, "numpy matmul (batch broadcasting, 1-D operands)");
        s.inferShapes = inferMatMul;
        s.flops = matmulFlops;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("BatchNormalization", OpCategory::Normalization, 5, 5, "per-channel normalisation with running stats");
        s.maxOutputs = 5;
        s.attributes = {attrDefault("epsilon", Attribute::ofFloat(1e-5)), attrDefault("momentum", Attribute::ofFloat(0.9)),
                        attrDefault("training_mode", Attribute::ofInt(0)), attr("spatial", A::Int), attr("is_test", A::Int),
                        attr("consumed_inputs", A::Ints)};
        s.inferShapes = inferBatchNorm;
        s.flops = batchNormFlops;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("LayerNormalization", OpCategory::Normalization, 2, 3, "normalise over axes [axis, rank)");
        s.maxOutputs = 3;
        s.attributes = {attrDefault("axis", Attribute::ofInt(-1)), attrDefault("epsilon", Attribute::ofFloat(1e-5)),
                        attrDefault("stash_type", Attribute::ofInt(1))};
        s.inferShapes = inferLayerNorm;
        s.flops = layerNormFlops;
        out.push_back(std::move(s));
    }
    for (const char* op : {"Softmax", "LogSoftmax"}) {
        OpSchema s = base(op, OpCategory::Normalization, 1, 1, "normalised exponential along axis (default -1; 1 before opset 13)");
        s.attributes = {attr("axis", A::Int)};
        s.inferShapes = inferSoftmax;
        s.flops = [](const InferContext&, const std::vector<TensorType>& outs) -> std::optional<std::int64_t> {
            if (outs.empty()) return std::nullopt;
            return product({numel(outs[0]), 5});
        };
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("MaxPool", OpCategory::Pooling, 1, 1, "sliding-window maximum; optional i64 indices");
        s.maxOutputs = 2;
        s.attributes = windowSchema();
        s.attributes[2].required = true;  // kernel_shape
        s.attributes.push_back(attrDefault("ceil_mode", Attribute::ofInt(0)));
        s.attributes.push_back(attrDefault("storage_order", Attribute::ofInt(0)));
        s.inferShapes = inferPool;
        s.flops = poolFlops;
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("AveragePool", OpCategory::Pooling, 1, 1, "sliding-window mean");
        s.attributes = windowSchema();
        s.attributes[2].required = true;
        s.attributes.push_back(attrDefault("ceil_mode", Attribute::ofInt(0)));
        s.attributes.push_back(attrDefault("count_include_pad", Attribute::ofInt(0)));
        s.inferShapes = inferPool;
        s.flops = poolFlops;
        out.push_back(std::move(s));
    }
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
        OpSchema s = base(op, OpCategory::Pooling, 1, 1, "pool over all spatial axes -> [N, C, 1, ...]");
        s.inferShapes = inferGlobalPool;
        s.flops = [](const InferContext& c, const std::vector<TensorType>&) -> std::optional<std::int64_t> {
            if (c.inputTypes.empty()) return std::nullopt;
            return numel(c.inputTypes[0]);
        };
        out.push_back(std::move(s));
    }
}

}  // namespace tessera::ir::ops
