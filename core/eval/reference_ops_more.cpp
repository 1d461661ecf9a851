// Reference implementations of the ONNX ops beyond the core set in reference_interpreter.cpp:
// element-wise extras, slicing/padding/tiling, normalisations, ConvTranspose, index ops,
// quantisation and losses. Each follows its ONNX operator specification; arithmetic in double.

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "core/eval/reference_kernels.h"

namespace tessera::eval::refimpl {

namespace {

constexpr double kPi = 3.14159265358979323846;

/// "no reference implementation for <what>": sorted with missing ops by callers.
[[noreturn]] void unsupported(const std::string& what) {
    fail(std::string(kNoReferenceImplementation) + " for " + what);
}

std::int64_t opsetOf(const Ctx& c) { return c.opt.opset > 0 ? c.opt.opset : 1000; }

/// Coordinates of flat index `flat` in `dims`.
void unflatten(std::int64_t flat, const Dims& dims, Dims& idx) {
    idx.resize(dims.size());
    for (std::size_t i = dims.size(); i-- > 0;) {
        idx[i] = dims[i] ? flat % dims[i] : 0;
        flat = dims[i] ? flat / dims[i] : 0;
    }
}

std::int64_t flatten(const Dims& idx, const Dims& strides) {
    std::int64_t off = 0;
    for (std::size_t i = 0; i < idx.size(); ++i) off += idx[i] * strides[i];
    return off;
}

/// A buffer of dtype `t` holding `b`'s elements (shares nothing).
std::shared_ptr<Buf> copyAs(Ctx& c, const Buf& b, DType t) {
    auto r = c.make(b.dims, t);
    for (std::size_t i = 0; i < b.v.size(); ++i) r->v[i] = roundTo(t, b.v[i]);
    return r;
}

/// Integer value of an optional scalar input, or `dflt` when omitted.
std::int64_t scalarInput(Ctx& c, std::size_t i, std::int64_t dflt, const char* what) {
    return c.has(i) ? toInt64(scalarOf(c.input(i), what)) : dflt;
}

// ---- element-wise --------------------------------------------------------------------------

/// Integer remainder with the sign of the divisor (Mod, fmod = 0).
double floorMod(double a, double b) {
    if (b == 0) fail("integer modulo by zero");
    const auto x = toInt64(a), y = toInt64(b);
    std::int64_t m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) m += y;
    return static_cast<double>(m);
}

BufPtr bitShift(Ctx& c) {
    const std::string dir = c.n.attrString("direction", "");
    if (dir != "LEFT" && dir != "RIGHT") fail("direction must be LEFT or RIGHT, got '" + dir + "'");
    const DType t = c.outDType();
    const std::size_t bits = ir::dtypeSize(t) * 8;
    const bool left = dir == "LEFT";
    return elementwise(c, {&c.input(0), &c.input(1)}, t, [left, bits](const double* a) {
        const auto x = static_cast<std::uint64_t>(a[0]);
        const auto s = static_cast<std::uint64_t>(a[1]);
        if (s >= bits) return 0.0;
        std::uint64_t r = left ? x << s : x >> s;
        if (bits < 64) r &= (std::uint64_t{1} << bits) - 1;
        return static_cast<double>(r);
    });
}

// ---- shapes and data movement --------------------------------------------------------------

/// Shape `shape` broadcast with `x` both ways (Expand).
BufPtr expand(Ctx& c) {
    const Buf& X = c.input(0);
    Buf target;
    target.dims = intsOf(c.input(1));
    for (auto d : target.dims)
        if (d < 0) fail("shape " + dimsStr(target.dims) + " has a negative extent");
    const Dims out = broadcastDims({&X, &target});
    auto r = c.make(out, c.outDType());
    forEachBroadcast(out, {&X.dims}, [&](std::int64_t flat, const std::vector<std::int64_t>& offs) {
        r->v[static_cast<std::size_t>(flat)] = X.v[static_cast<std::size_t>(offs[0])];
    });
    return r;
}

BufPtr tile(Ctx& c) {
    const Buf& X = c.input(0);
    const Dims reps = intsOf(c.input(1));
    if (reps.size() != X.dims.size())
        fail("repeats has " + std::to_string(reps.size()) + " values for an input of rank " +
             std::to_string(X.dims.size()));
    Dims out(X.dims.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (reps[i] < 0) fail("repeats must be >= 0");
        out[i] = X.dims[i] * reps[i];
    }
    auto r = c.make(out, c.outDType());
    const Dims xs = stridesOf(X.dims);
    Dims idx;
    for (std::size_t flat = 0; flat < r->v.size(); ++flat) {
        unflatten(static_cast<std::int64_t>(flat), out, idx);
        for (std::size_t i = 0; i < idx.size(); ++i) idx[i] %= X.dims[i];
        r->v[flat] = X.v[static_cast<std::size_t>(flatten(idx, xs))];
    }
    return r;
}

BufPtr slice(Ctx& c) {
    const Buf& X = c.input(0);
    const std::size_t rank = X.dims.size();
    Dims starts, ends, axes, steps;
    if (opsetOf(c) < 10) {
        starts = c.n.attrInts("starts");
        ends = c.n.attrInts("ends");
        axes = c.n.attrInts("axes");
    } else {
        starts = intsOf(c.input(1));
        ends = intsOf(c.input(2));
        if (c.has(3)) axes = intsOf(c.input(3));
        if (c.has(4)) steps = intsOf(c.input(4));
    }
    if (starts.size() != ends.size()) fail("starts and ends differ in length");
    if (axes.empty())
        for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size())
        fail("starts, ends, axes and steps must have the same length");
    Dims begin(rank, 0), step(rank, 1), out = X.dims;
    std::vector<bool> seen(rank, false);
    for (std::size_t k = 0; k < starts.size(); ++k) {
        const auto a = static_cast<std::size_t>(normAxis(axes[k], rank));
        if (seen[a]) fail("axis " + std::to_string(axes[k]) + " is sliced twice");
        seen[a] = true;
        const std::int64_t dim = X.dims[a], s = steps[k];
        if (s == 0) fail("step must not be 0");
        std::int64_t b = starts[k], e = ends[k];
        if (b < 0) b += dim;
        if (e < 0) e += dim;
        if (s > 0) {
            b = std::clamp<std::int64_t>(b, 0, dim);
            e = std::clamp<std::int64_t>(e, 0, dim);
            out[a] = e > b ? (e - b + s - 1) / s : 0;
        } else {
            b = std::clamp<std::int64_t>(b, -1, dim - 1);
            e = std::clamp<std::int64_t>(e, -1, dim - 1);
            out[a] = b > e ? (b - e + (-s) - 1) / (-s) : 0;
        }
        begin[a] = b;
        step[a] = s;
    }
    auto r = c.make(out, c.outDType());
    const Dims xs = stridesOf(X.dims);
    Dims idx;
    for (std::size_t flat = 0; flat < r->v.size(); ++flat) {
        unflatten(static_cast<std::int64_t>(flat), out, idx);
        std::int64_t off = 0;
        for (std::size_t i = 0; i < rank; ++i) off += (begin[i] + idx[i] * step[i]) * xs[i];
        r->v[flat] = X.v[static_cast<std::size_t>(off)];
    }
    return r;
}

BufPtr pad(Ctx& c) {
    const Buf& X = c.input(0);
    const std::size_t rank = X.dims.size();
    Dims pads;
    double value = 0;
    if (opsetOf(c) < 11) {
        pads = c.n.attrInts("pads");
        value = c.n.attrFloat("value", 0.0);
    } else {
        pads = intsOf(c.input(1));
        if (c.has(2)) value = scalarOf(c.input(2), "constant_value");
    }
    Dims axes;
    if (c.has(3)) axes = intsOf(c.input(3));
    else
        for (std::size_t i = 0; i < rank; ++i) axes.push_back(static_cast<std::int64_t>(i));
    if (pads.size() != 2 * axes.size())
        fail("pads has " + std::to_string(pads.size()) + " values, expected " + std::to_string(2 * axes.size()));
    Dims pb(rank, 0), pe(rank, 0);
    for (std::size_t k = 0; k < axes.size(); ++k) {
        const auto a = static_cast<std::size_t>(normAxis(axes[k], rank));
        pb[a] = pads[k];
        pe[a] = pads[k + axes.size()];
    }
    const std::string mode = c.n.attrString("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
        fail("unknown mode '" + mode + "'");
    Dims out(rank);
    for (std::size_t i = 0; i < rank; ++i) {
        out[i] = X.dims[i] + pb[i] + pe[i];
        if (out[i] < 0) fail("pads remove more than the extent of axis " + std::to_string(i));
        if (mode != "constant" && X.dims[i] == 0 && out[i] > 0) fail("cannot " + mode + "-pad an empty axis");
    }
    auto r = c.make(out, c.outDType());
    const Dims xs = stridesOf(X.dims);
    Dims idx;
    for (std::size_t flat = 0; flat < r->v.size(); ++flat) {
        unflatten(static_cast<std::int64_t>(flat), out, idx);
        std::int64_t off = 0;
        bool inside = true;
        for (std::size_t i = 0; i < rank; ++i) {
            std::int64_t p = idx[i] - pb[i];
            const std::int64_t n = X.dims[i];
            if (p < 0 || p >= n) {
                if (mode == "constant") {
                    inside = false;
                    break;
                }
                if (mode == "edge") p = std::clamp<std::int64_t>(p, 0, n - 1);
                else if (mode == "wrap") p = ((p % n) + n) % n;
                else if (n == 1) p = 0;
                else {
                    const std::int64_t period = 2 * (n - 1);
                    p = ((p % period) + period) % period;
                    if (p >= n) p = period - p;
                }
            }
            off += p * xs[i];
        }
        r->v[flat] = inside ? X.v[static_cast<std::size_t>(off)] : value;
    }
    return r;
}

std::vector<BufPtr> split(Ctx& c) {
    const Buf& X = c.input(0);
    const auto axis = static_cast<std::size_t>(normAxis(c.n.attrInt("axis", 0), X.dims.size()));
    const std::size_t k = c.n.outputs.size();
    Dims parts;
    if (c.has(1)) parts = intsOf(c.input(1));
    else parts = c.n.attrInts("split");
    const std::int64_t dim = X.dims[axis];
    if (parts.empty()) {
        const auto n = static_cast<std::int64_t>(c.n.hasAttr("num_outputs") ? c.n.attrInt("num_outputs", 1) : k);
        if (n < 1) fail("Split needs at least one output");
        const std::int64_t chunk = (dim + n - 1) / n;
        for (std::int64_t i = 0; i < n; ++i) parts.push_back(std::max<std::int64_t>(0, std::min(chunk, dim - i * chunk)));
        if (!c.n.hasAttr("num_outputs") && dim % n != 0)
            fail("extent " + std::to_string(dim) + " does not split evenly into " + std::to_string(n) + " outputs");
    }
    if (parts.size() != k) fail("split has " + std::to_string(parts.size()) + " parts for " + std::to_string(k) + " outputs");
    if (std::accumulate(parts.begin(), parts.end(), std::int64_t{0}) != dim)
        fail("split sizes do not add up to the extent " + std::to_string(dim));
    const std::int64_t outer = product(X.dims, 0, axis), inner = product(X.dims, axis + 1, X.dims.size());
    std::vector<BufPtr> outs;
    std::int64_t pos = 0;
    for (std::size_t j = 0; j < k; ++j) {
        Dims d = X.dims;
        d[axis] = parts[j];
        auto r = c.make(d, c.outDType(j));
        for (std::int64_t o = 0; o < outer; ++o)
            std::copy_n(X.v.begin() + (o * dim + pos) * inner, parts[j] * inner, r->v.begin() + o * parts[j] * inner);
        pos += parts[j];
        outs.push_back(r);
    }
    return outs;
}

BufPtr depthToSpace(Ctx& c, bool toSpace) {
    const Buf& X = c.input(0);
    if (X.dims.size() != 4) fail("input must be 4-D, got " + dimsStr(X.dims));
    const std::int64_t b = c.n.attrInt("blocksize", 0);
    if (b < 1) fail("blocksize must be >= 1");
    const std::int64_t N = X.dims[0], C = X.dims[1], H = X.dims[2], W = X.dims[3];
    const bool crd = c.n.attrString("mode", "DCR") == "CRD";
    if (toSpace) {
        if (C % (b * b) != 0) fail("channels are not a multiple of blocksize^2");
        const std::int64_t Co = C / (b * b);
        auto r = c.make({N, Co, H * b, W * b}, c.outDType());
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t co = 0; co < Co; ++co)
                for (std::int64_t h = 0; h < H * b; ++h)
                    for (std::int64_t w = 0; w < W * b; ++w) {
                        const std::int64_t bh = h % b, bw = w % b;
                        const std::int64_t ci = crd ? co * b * b + bh * b + bw : (bh * b + bw) * Co + co;
                        r->v[((n * Co + co) * H * b + h) * W * b + w] = X.v[((n * C + ci) * H + h / b) * W + w / b];
                    }
        return r;
    }
    if (H % b != 0 || W % b != 0) fail("height and width must be multiples of blocksize");
    const std::int64_t Ho = H / b, Wo = W / b, Co = C * b * b;
    auto r = c.make({N, Co, Ho, Wo}, c.outDType());
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t ci = 0; ci < C; ++ci)
            for (std::int64_t h = 0; h < H; ++h)
                for (std::int64_t w = 0; w < W; ++w) {
                    const std::int64_t co = ((h % b) * b + (w % b)) * C + ci;
                    r->v[((n * Co + co) * Ho + h / b) * Wo + w / b] = X.v[((n * C + ci) * H + h) * W + w];
                }
    return r;
}

BufPtr trilu(Ctx& c) {
    const Buf& X = c.input(0);
    if (X.dims.size() < 2) fail("input must have rank >= 2");
    const std::int64_t k = scalarInput(c, 1, 0, "k");
    const bool upper = c.n.attrInt("upper", 1) != 0;
    const std::int64_t R = X.dims[X.dims.size() - 2], C = X.dims.back();
    auto r = c.make(X.dims, c.outDType());
    for (std::size_t flat = 0; flat < X.v.size(); ++flat) {
        const auto f = static_cast<std::int64_t>(flat);
        const std::int64_t j = f % C, i = (f / C) % R;
        const bool keep = upper ? j - i >= k : j - i <= k;
        r->v[flat] = keep ? X.v[flat] : 0.0;
    }
    return r;
}

BufPtr gatherElements(Ctx& c) {
    const Buf& D = c.input(0);
    const Buf& I = c.input(1);
    if (D.dims.size() != I.dims.size()) fail("data and indices must have the same rank");
    const auto axis = static_cast<std::size_t>(normAxis(c.n.attrInt("axis", 0), D.dims.size()));
    auto r = c.make(I.dims, c.outDType());
    const Dims ds = stridesOf(D.dims);
    Dims idx;
    for (std::size_t flat = 0; flat < I.v.size(); ++flat) {
        unflatten(static_cast<std::int64_t>(flat), I.dims, idx);
        std::int64_t k = toInt64(I.v[flat]);
        const std::int64_t len = D.dims[axis];
        if (k < -len || k >= len) fail("index " + std::to_string(k) + " is out of range for extent " + std::to_string(len));
        idx[axis] = k < 0 ? k + len : k;
        r->v[flat] = D.v[static_cast<std::size_t>(flatten(idx, ds))];
    }
    return r;
}

/// Applies a Scatter reduction.
double scatterCombine(const std::string& red, double old, double x) {
    if (red == "add") return old + x;
    if (red == "mul") return old * x;
    if (red == "max") return std::max(old, x);
    if (red == "min") return std::min(old, x);
    return x;
}

BufPtr scatterElements(Ctx& c) {
    const Buf& D = c.input(0);
    const Buf& I = c.input(1);
    const Buf& U = c.input(2);
    if (I.dims != U.dims || I.dims.size() != D.dims.size()) fail("indices and updates must match and have data's rank");
    const auto axis = static_cast<std::size_t>(normAxis(c.n.attrInt("axis", 0), D.dims.size()));
    const std::string red = c.n.attrString("reduction", "none");
    auto r = c.make(D.dims, c.outDType());
    r->v = D.v;
    const Dims ds = stridesOf(D.dims);
    Dims idx;
    for (std::size_t flat = 0; flat < I.v.size(); ++flat) {
        unflatten(static_cast<std::int64_t>(flat), I.dims, idx);
        std::int64_t k = toInt64(I.v[flat]);
        const std::int64_t len = D.dims[axis];
        if (k < -len || k >= len) fail("index " + std::to_string(k) + " is out of range for extent " + std::to_string(len));
        idx[axis] = k < 0 ? k + len : k;
        double& o = r->v[static_cast<std::size_t>(flatten(idx, ds))];
        o = scatterCombine(red, o, U.v[flat]);
    }
    return r;
}

/// Offset into `D` of the index tuple at `tuple` (q entries) under `batchOffset`; checks ranges.
std::int64_t ndOffset(const Buf& D, const Dims& ds, std::size_t batchDims, const double* tuple, std::size_t q,
                      std::int64_t batchOffset) {
    std::int64_t off = batchOffset;
    for (std::size_t j = 0; j < q; ++j) {
        const std::size_t a = batchDims + j;
        std::int64_t k = toInt64(tuple[j]);
        if (k < -D.dims[a] || k >= D.dims[a])
            fail("index " + std::to_string(k) + " is out of range for extent " + std::to_string(D.dims[a]));
        if (k < 0) k += D.dims[a];
        off += k * ds[a];
    }
    return off;
}

BufPtr gatherND(Ctx& c) {
    const Buf& D = c.input(0);
    const Buf& I = c.input(1);
    const auto b = static_cast<std::size_t>(c.n.attrInt("batch_dims", 0));
    if (I.dims.empty() || b >= I.dims.size() || b >= D.dims.size()) fail("batch_dims does not fit the ranks");
    const auto q = static_cast<std::size_t>(I.dims.back());
    if (b + q > D.dims.size()) fail("index tuples are longer than data's rank");
    Dims out(I.dims.begin(), I.dims.end() - 1);
    out.insert(out.end(), D.dims.begin() + static_cast<std::ptrdiff_t>(b + q), D.dims.end());
    auto r = c.make(out, c.outDType());
    const Dims ds = stridesOf(D.dims);
    const std::int64_t slice = product(D.dims, b + q, D.dims.size());
    const std::int64_t batch = product(I.dims, 0, b), perBatch = product(I.dims, b, I.dims.size() - 1);
    const std::int64_t dBatchStride = b ? ds[b - 1] : 0;
    for (std::int64_t bi = 0; bi < batch; ++bi)
        for (std::int64_t t = 0; t < perBatch; ++t) {
            const std::int64_t tupleIndex = bi * perBatch + t;
            const std::int64_t off = ndOffset(D, ds, b, I.v.data() + tupleIndex * static_cast<std::int64_t>(q), q,
                                              bi * dBatchStride);
            std::copy_n(D.v.begin() + off, slice, r->v.begin() + tupleIndex * slice);
        }
    return r;
}

BufPtr scatterND(Ctx& c) {
    const Buf& D = c.input(0);
    const Buf& I = c.input(1);
    const Buf& U = c.input(2);
    if (I.dims.empty()) fail("indices must have rank >= 1");
    const auto q = static_cast<std::size_t>(I.dims.back());
    if (q > D.dims.size()) fail("index tuples are longer than data's rank");
    const std::string red = c.n.attrString("reduction", "none");
    auto r = c.make(D.dims, c.outDType());
    r->v = D.v;
    const Dims ds = stridesOf(D.dims);
    const std::int64_t slice = product(D.dims, q, D.dims.size());
    const std::int64_t tuples = product(I.dims, 0, I.dims.size() - 1);
    if (static_cast<std::int64_t>(U.v.size()) != tuples * slice) fail("updates have the wrong shape " + dimsStr(U.dims));
    for (std::int64_t t = 0; t < tuples; ++t) {
        const std::int64_t off = ndOffset(D, ds, 0, I.v.data() + t * static_cast<std::int64_t>(q), q, 0);
        for (std::int64_t e = 0; e < slice; ++e) {
            double& o = r->v[static_cast<std::size_t>(off + e)];
            o = scatterCombine(red, o, U.v[static_cast<std::size_t>(t * slice + e)]);
        }
    }
    return r;
}

BufPtr cumSum(Ctx& c) {
    const Buf& X = c.input(0);
    const auto axis = static_cast<std::size_t>(normAxis(toInt64(scalarOf(c.input(1), "axis")), X.dims.size()));
    const bool exclusive = c.n.attrInt("exclusive", 0) != 0, reverse = c.n.attrInt("reverse", 0) != 0;
    auto r = c.make(X.dims, c.outDType());
    const std::int64_t outer = product(X.dims, 0, axis), len = X.dims[axis], inner = product(X.dims, axis + 1, X.dims.size());
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            double acc = 0;
            for (std::int64_t s = 0; s < len; ++s) {
                const std::int64_t k = reverse ? len - 1 - s : s;
                const std::size_t off = static_cast<std::size_t>((o * len + k) * inner + i);
                if (exclusive) {
                    r->v[off] = acc;
                    acc += X.v[off];
                } else {
                    acc += X.v[off];
                    r->v[off] = acc;
                }
            }
        }
    return r;
}

BufPtr constantOfShape(Ctx& c) {
    const Dims shape = intsOf(c.input(0));
    double value = 0;
    DType t = DType::F32;
    if (const auto* a = c.n.attr("value"); a && a->t) {
        if (a->t->numElements() != 1 || !a->t->sizeConsistent()) fail("value must hold one element");
        value = a->t->elementAsDouble(0);
        t = a->t->dtype;
    }
    auto r = c.make(shape, t);
    std::fill(r->v.begin(), r->v.end(), value);
    return r;
}

BufPtr range(Ctx& c) {
    const double start = scalarOf(c.input(0), "start"), limit = scalarOf(c.input(1), "limit"),
                 delta = scalarOf(c.input(2), "delta");
    if (delta == 0) fail("delta must not be 0");
    const DType t = c.outDType();
    const auto n = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::ceil((limit - start) / delta)));
    auto r = c.make({n}, t);
    // Accumulating in the output type matches numpy.arange/onnx for f32 (start + i*delta rounded).
    for (std::int64_t i = 0; i < n; ++i) r->v[static_cast<std::size_t>(i)] = roundTo(t, start + static_cast<double>(i) * delta);
    return r;
}

BufPtr eyeLike(Ctx& c) {
    const Buf& X = c.input(0);
    if (X.dims.size() != 2) fail("input must be 2-D");
    DType t = c.n.hasAttr("dtype") ? onnxCodeToDType(c.n.attrInt("dtype", 1)) : X.dtype;
    if (t == DType::Undefined) t = c.outDType();
    const std::int64_t k = c.n.attrInt("k", 0);
    auto r = c.make(X.dims, t);
    for (std::int64_t i = 0; i < X.dims[0]; ++i) {
        const std::int64_t j = i + k;
        if (j >= 0 && j < X.dims[1]) r->v[static_cast<std::size_t>(i * X.dims[1] + j)] = 1.0;
    }
    return r;
}

BufPtr oneHot(Ctx& c) {
    const Buf& I = c.input(0);
    const auto depth = toInt64(scalarOf(c.input(1), "depth"));
    const Buf& V = c.input(2);
    if (V.v.size() != 2) fail("values must hold [off, on]");
    if (depth < 1) fail("depth must be >= 1");
    const std::size_t rank = I.dims.size() + 1;
    const auto axis = static_cast<std::size_t>(normAxis(c.n.attrInt("axis", -1), rank));
    Dims out = I.dims;
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(axis), depth);
    auto r = c.make(out, c.outDType());
    std::fill(r->v.begin(), r->v.end(), V.v[0]);
    const std::int64_t outer = product(I.dims, 0, axis), inner = product(I.dims, axis, I.dims.size());
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            std::int64_t k = toInt64(I.v[static_cast<std::size_t>(o * inner + i)]);
            if (k < 0) k += depth;
            if (k < 0 || k >= depth) continue;
            r->v[static_cast<std::size_t>((o * depth + k) * inner + i)] = V.v[1];
        }
    return r;
}

BufPtr compress(Ctx& c) {
    const Buf& X = c.input(0);
    const Buf& C = c.input(1);
    if (!c.n.hasAttr("axis")) {
        std::vector<double> kept;
        for (std::size_t i = 0; i < X.v.size() && i < C.v.size(); ++i)
            if (C.v[i] != 0) kept.push_back(X.v[i]);
        auto r = c.make({static_cast<std::int64_t>(kept.size())}, c.outDType());
        r->v = kept;
        return r;
    }
    const auto axis = static_cast<std::size_t>(normAxis(c.n.attrInt("axis", 0), X.dims.size()));
    std::vector<std::int64_t> sel;
    for (std::int64_t i = 0; i < X.dims[axis] && i < static_cast<std::int64_t>(C.v.size()); ++i)
        if (C.v[static_cast<std::size_t>(i)] != 0) sel.push_back(i);
    Dims out = X.dims;
    out[axis] = static_cast<std::int64_t>(sel.size());
    auto r = c.make(out, c.outDType());
    const std::int64_t outer = product(X.dims, 0, axis), inner = product(X.dims, axis + 1, X.dims.size());
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::size_t j = 0; j < sel.size(); ++j)
            std::copy_n(X.v.begin() + (o * X.dims[axis] + sel[j]) * inner, inner,
                        r->v.begin() + (o * out[axis] + static_cast<std::int64_t>(j)) * inner);
    return r;
}

BufPtr nonZero(Ctx& c) {
    const Buf& X = c.input(0);
    std::vector<std::int64_t> hits;
    for (std::size_t i = 0; i < X.v.size(); ++i)
        if (X.v[i] != 0) hits.push_back(static_cast<std::int64_t>(i));
    const auto rank = static_cast<std::int64_t>(X.dims.size());
    const auto n = static_cast<std::int64_t>(hits.size());
    auto r = c.make({rank, n}, DType::I64);
    Dims idx;
    for (std::int64_t j = 0; j < n; ++j) {
        unflatten(hits[static_cast<std::size_t>(j)], X.dims, idx);
        for (std::int64_t a = 0; a < rank; ++a) r->v[static_cast<std::size_t>(a * n + j)] = static_cast<double>(idx[a]);
    }
    return r;
}

std::vector<BufPtr> topK(Ctx& c) {
    const Buf& X = c.input(0);
    const std::int64_t k = opsetOf(c) < 10 ? c.n.attrInt("k", 0) : toInt64(scalarOf(c.input(1), "K"));
    const auto axis = static_cast<std::size_t>(normAxis(c.n.attrInt("axis", -1), X.dims.size()));
    const bool largest = c.n.attrInt("largest", 1) != 0;
    const std::int64_t len = X.dims[axis];
    if (k < 0 || k > len) fail("K = " + std::to_string(k) + " is out of range for extent " + std::to_string(len));
    Dims out = X.dims;
    out[axis] = k;
    auto vals = c.make(out, c.outDType(0));
    auto idxs = c.make(out, DType::I64);
    const std::int64_t outer = product(X.dims, 0, axis), inner = product(X.dims, axis + 1, X.dims.size());
    std::vector<std::int64_t> order(static_cast<std::size_t>(len));
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            auto at = [&](std::int64_t j) { return X.v[static_cast<std::size_t>((o * len + j) * inner + i)]; };
            std::iota(order.begin(), order.end(), 0);
            // Ties keep the lower index first (ONNX).
            std::stable_sort(order.begin(), order.end(),
                             [&](std::int64_t a, std::int64_t b) { return largest ? at(a) > at(b) : at(a) < at(b); });
            for (std::int64_t j = 0; j < k; ++j) {
                const auto off = static_cast<std::size_t>((o * k + j) * inner + i);
                vals->v[off] = at(order[static_cast<std::size_t>(j)]);
                idxs->v[off] = static_cast<double>(order[static_cast<std::size_t>(j)]);
            }
        }
    return {vals, idxs};
}

BufPtr reverseSequence(Ctx& c) {
    const Buf& X = c.input(0);
    const Buf& L = c.input(1);
    if (X.dims.size() < 2) fail("input must have rank >= 2");
    const auto bAxis = static_cast<std::size_t>(normAxis(c.n.attrInt("batch_axis", 1), X.dims.size()));
    const auto tAxis = static_cast<std::size_t>(normAxis(c.n.attrInt("time_axis", 0), X.dims.size()));
    auto r = c.make(X.dims, c.outDType());
    const Dims xs = stridesOf(X.dims);
    Dims idx;
    for (std::size_t flat = 0; flat < X.v.size(); ++flat) {
        unflatten(static_cast<std::int64_t>(flat), X.dims, idx);
        const std::int64_t len = toInt64(L.v.at(static_cast<std::size_t>(idx[bAxis])));
        if (idx[tAxis] < len) idx[tAxis] = len - 1 - idx[tAxis];
        r->v[flat] = X.v[static_cast<std::size_t>(flatten(idx, xs))];
    }
    return r;
}

// ---- reductions ----------------------------------------------------------------------------

/// Reduced axes of a Reduce* node (attribute, or input 1 from opset 13/18), `keep` = keepdims.
/// Returns false for the noop_with_empty_axes identity.
bool reduceAxes(Ctx& c, const Buf& X, std::vector<bool>& red, Dims& keptDims, Dims& outDims) {
    Dims axes = c.has(1) ? intsOf(c.input(1)) : c.n.attrInts("axes");
    const bool keep = c.n.attrInt("keepdims", 1) != 0;
    red.assign(X.dims.size(), axes.empty());
    if (axes.empty() && c.n.attrInt("noop_with_empty_axes", 0) != 0) return false;
    for (auto a : axes) red[static_cast<std::size_t>(normAxis(a, X.dims.size()))] = true;
    keptDims.clear();
    outDims.clear();
    for (std::size_t i = 0; i < X.dims.size(); ++i) {
        keptDims.push_back(red[i] ? 1 : X.dims[i]);
        if (!red[i] || keep) outDims.push_back(red[i] ? 1 : X.dims[i]);
    }
    return true;
}

enum class MoreRed { L1, L2, SumSquare, LogSum, LogSumExp };

BufPtr reduceMore(Ctx& c, MoreRed kind) {
    const Buf& X = c.input(0);
    std::vector<bool> red;
    Dims kept, outDims;
    if (!reduceAxes(c, X, red, kept, outDims)) {
        auto r = c.make(X.dims, c.outDType());
        for (std::size_t i = 0; i < X.v.size(); ++i) {
            const double x = X.v[i];
            r->v[i] = kind == MoreRed::L1          ? std::fabs(x)
                      : kind == MoreRed::L2        ? std::fabs(x)
                      : kind == MoreRed::SumSquare ? x * x
                      : kind == MoreRed::LogSum    ? std::log(x)
                                                   : x;
        }
        return r;
    }
    auto r = c.make(outDims, c.outDType());
    std::vector<double> shift(r->v.size(), 0.0);
    if (kind == MoreRed::LogSumExp) {
        std::fill(shift.begin(), shift.end(), -std::numeric_limits<double>::infinity());
        forEachBroadcast(X.dims, {&kept}, [&](std::int64_t flat, const std::vector<std::int64_t>& offs) {
            double& m = shift[static_cast<std::size_t>(offs[0])];
            m = std::max(m, X.v[static_cast<std::size_t>(flat)]);
        });
        for (auto& m : shift)
            if (!std::isfinite(m)) m = 0;
    }
    forEachBroadcast(X.dims, {&kept}, [&](std::int64_t flat, const std::vector<std::int64_t>& offs) {
        const auto o = static_cast<std::size_t>(offs[0]);
        const double x = X.v[static_cast<std::size_t>(flat)];
        switch (kind) {
        case MoreRed::L1: r->v[o] += std::fabs(x); break;
        case MoreRed::L2:
        case MoreRed::SumSquare: r->v[o] += x * x; break;
        case MoreRed::LogSum: r->v[o] += x; break;
        case MoreRed::LogSumExp: r->v[o] += std::exp(x - shift[o]); break;
        }
    });
    for (std::size_t o = 0; o < r->v.size(); ++o) {
        double& y = r->v[o];
        if (kind == MoreRed::L2) y = std::sqrt(y);
        else if (kind == MoreRed::LogSum) y = std::log(y);
        else if (kind == MoreRed::LogSumExp) y = std::log(y) + shift[o];
        y = roundTo(r->dtype == DType::F32 ? DType::F64 : r->dtype, y);
    }
    return r;
}

BufPtr argExtreme(Ctx& c, bool isMax) {
    const Buf& X = c.input(0);
    const auto axis = static_cast<std::size_t>(normAxis(c.n.attrInt("axis", 0), X.dims.size()));
    const bool keep = c.n.attrInt("keepdims", 1) != 0, last = c.n.attrInt("select_last_index", 0) != 0;
    Dims out = X.dims;
    if (keep) out[axis] = 1;
    else out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
    auto r = c.make(out, DType::I64);
    const std::int64_t outer = product(X.dims, 0, axis), len = X.dims[axis], inner = product(X.dims, axis + 1, X.dims.size());
    if (len == 0) fail("cannot take the arg of an empty axis");
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            std::int64_t best = 0;
            double bv = X.v[static_cast<std::size_t>(o * len * inner + i)];
            for (std::int64_t k = 1; k < len; ++k) {
                const double x = X.v[static_cast<std::size_t>((o * len + k) * inner + i)];
                const bool better = isMax ? (last ? x >= bv : x > bv) : (last ? x <= bv : x < bv);
                if (better) {
                    bv = x;
                    best = k;
                }
            }
            r->v[static_cast<std::size_t>(o * inner + i)] = static_cast<double>(best);
        }
    return r;
}

BufPtr hardmax(Ctx& c) {
    const Buf& X = c.input(0);
    const bool legacy = opsetOf(c) < 13;
    const std::int64_t axis = X.dims.empty() ? 0 : normAxis(c.n.attrInt("axis", legacy ? 1 : -1), X.dims.size());
    std::int64_t outer = product(X.dims, 0, static_cast<std::size_t>(axis)), len, inner;
    if (legacy) {
        len = product(X.dims, static_cast<std::size_t>(axis), X.dims.size());
        inner = 1;
    } else {
        len = X.dims.empty() ? 1 : X.dims[static_cast<std::size_t>(axis)];
        inner = product(X.dims, static_cast<std::size_t>(axis) + 1, X.dims.size());
    }
    auto r = c.make(X.dims, c.outDType());
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            std::int64_t best = 0;
            for (std::int64_t k = 1; k < len; ++k)
                if (X.v[static_cast<std::size_t>((o * len + k) * inner + i)] >
                    X.v[static_cast<std::size_t>((o * len + best) * inner + i)])
                    best = k;
            if (len > 0) r->v[static_cast<std::size_t>((o * len + best) * inner + i)] = 1.0;
        }
    return r;
}

// ---- normalisations ------------------------------------------------------------------------

std::vector<BufPtr> layerNorm(Ctx& c) {
    const Buf& X = c.input(0);
    const Buf& S = c.input(1);
    const std::size_t rank = X.dims.size();
    const auto axis = static_cast<std::size_t>(normAxis(c.n.attrInt("axis", -1), rank));
    const double eps = c.n.attrFloat("epsilon", 1e-5);
    const Dims normDims(X.dims.begin() + static_cast<std::ptrdiff_t>(axis), X.dims.end());
    const std::int64_t outer = product(X.dims, 0, axis), len = product(X.dims, axis, rank);
    // Scale and bias broadcast to the normalised shape.
    auto spread = [&](const Buf& p) {
        std::vector<double> v(static_cast<std::size_t>(len));
        Buf target;
        target.dims = normDims;
        if (broadcastDims({&p, &target}) != normDims)
            fail("scale/bias of shape " + dimsStr(p.dims) + " does not broadcast to " + dimsStr(normDims));
        forEachBroadcast(normDims, {&p.dims}, [&](std::int64_t flat, const std::vector<std::int64_t>& offs) {
            v[static_cast<std::size_t>(flat)] = p.v[static_cast<std::size_t>(offs[0])];
        });
        return v;
    };
    const std::vector<double> scale = spread(S);
    const std::vector<double> bias = c.has(2) ? spread(c.input(2)) : std::vector<double>(static_cast<std::size_t>(len), 0.0);
    auto y = c.make(X.dims, c.outDType(0));
    Dims statDims(X.dims.begin(), X.dims.begin() + static_cast<std::ptrdiff_t>(axis));
    statDims.resize(rank, 1);
    auto mean = c.make(statDims, c.outDType(1) == DType::Undefined ? DType::F32 : c.outDType(1));
    auto inv = c.make(statDims, c.outDType(2) == DType::Undefined ? DType::F32 : c.outDType(2));
    for (std::int64_t o = 0; o < outer; ++o) {
        const double* px = X.v.data() + o * len;
        double m = 0;
        for (std::int64_t i = 0; i < len; ++i) m += px[i];
        m /= static_cast<double>(len);
        double var = 0;
        for (std::int64_t i = 0; i < len; ++i) var += (px[i] - m) * (px[i] - m);
        var /= static_cast<double>(len);
        const double is = 1.0 / std::sqrt(var + eps);
        for (std::int64_t i = 0; i < len; ++i)
            y->v[static_cast<std::size_t>(o * len + i)] = (px[i] - m) * is * scale[static_cast<std::size_t>(i)] +
                                                          bias[static_cast<std::size_t>(i)];
        mean->v[static_cast<std::size_t>(o)] = m;
        inv->v[static_cast<std::size_t>(o)] = is;
    }
    return {y, mean, inv};
}

BufPtr instanceNorm(Ctx& c) {
    const Buf& X = c.input(0);
    if (X.dims.size() < 3) fail("input must have rank >= 3");
    const std::int64_t N = X.dims[0], C = X.dims[1], plane = product(X.dims, 2, X.dims.size());
    const Buf& S = c.input(1);
    const Buf& B = c.input(2);
    if (S.v.size() != static_cast<std::size_t>(C) || B.v.size() != static_cast<std::size_t>(C))
        fail("scale and B must have " + std::to_string(C) + " elements");
    const double eps = c.n.attrFloat("epsilon", 1e-5);
    auto r = c.make(X.dims, c.outDType());
    for (std::int64_t p = 0; p < N * C; ++p) {
        const std::int64_t ch = p % C;
        const double* px = X.v.data() + p * plane;
        double m = 0, var = 0;
        for (std::int64_t i = 0; i < plane; ++i) m += px[i];
        m /= static_cast<double>(plane);
        for (std::int64_t i = 0; i < plane; ++i) var += (px[i] - m) * (px[i] - m);
        var /= static_cast<double>(plane);
        const double a = S.v[static_cast<std::size_t>(ch)] / std::sqrt(var + eps);
        for (std::int64_t i = 0; i < plane; ++i)
            r->v[static_cast<std::size_t>(p * plane + i)] = a * (px[i] - m) + B.v[static_cast<std::size_t>(ch)];
    }
    return r;
}

BufPtr meanVarianceNorm(Ctx& c) {
    const Buf& X = c.input(0);
    const Dims axes = c.n.attrInts("axes", {0, 2, 3});
    std::vector<bool> red(X.dims.size(), false);
    for (auto a : axes) red[static_cast<std::size_t>(normAxis(a, X.dims.size()))] = true;
    Dims kept;
    for (std::size_t i = 0; i < X.dims.size(); ++i) kept.push_back(red[i] ? 1 : X.dims[i]);
    const std::int64_t groups = product(kept, 0, kept.size());
    const double n = static_cast<double>(X.v.size()) / static_cast<double>(std::max<std::int64_t>(groups, 1));
    std::vector<double> sum(static_cast<std::size_t>(groups), 0.0), sq(static_cast<std::size_t>(groups), 0.0);
    forEachBroadcast(X.dims, {&kept}, [&](std::int64_t flat, const std::vector<std::int64_t>& offs) {
        const double x = X.v[static_cast<std::size_t>(flat)];
        sum[static_cast<std::size_t>(offs[0])] += x;
        sq[static_cast<std::size_t>(offs[0])] += x * x;
    });
    auto r = c.make(X.dims, c.outDType());
    // The ONNX function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9).
    forEachBroadcast(X.dims, {&kept}, [&](std::int64_t flat, const std::vector<std::int64_t>& offs) {
        const auto g = static_cast<std::size_t>(offs[0]);
        const double m = sum[g] / n, var = std::max(0.0, sq[g] / n - m * m);
        r->v[static_cast<std::size_t>(flat)] = (X.v[static_cast<std::size_t>(flat)] - m) / (std::sqrt(var) + 1e-9);
    });
    return r;
}

BufPtr lrn(Ctx& c) {
    const Buf& X = c.input(0);
    if (X.dims.size() < 3) fail("input must have rank >= 3");
    const double alpha = c.n.attrFloat("alpha", 1e-4), beta = c.n.attrFloat("beta", 0.75), bias = c.n.attrFloat("bias", 1.0);
    const std::int64_t size = c.n.attrInt("size", 0);
    if (size < 1) fail("size must be >= 1");
    const std::int64_t N = X.dims[0], C = X.dims[1], plane = product(X.dims, 2, X.dims.size());
    const std::int64_t lo = (size - 1) / 2, hi = (size - 1) - lo;  // floor and ceil of (size-1)/2
    auto r = c.make(X.dims, c.outDType());
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t ch = 0; ch < C; ++ch)
            for (std::int64_t i = 0; i < plane; ++i) {
                double sq = 0;
                for (std::int64_t k = std::max<std::int64_t>(0, ch - lo); k <= std::min(C - 1, ch + hi); ++k) {
                    const double x = X.v[static_cast<std::size_t>((n * C + k) * plane + i)];
                    sq += x * x;
                }
                const auto off = static_cast<std::size_t>((n * C + ch) * plane + i);
                r->v[off] = X.v[off] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
            }
    return r;
}

std::vector<BufPtr> batchNormTraining(Ctx& c) {
    const Buf& X = c.input(0);
    if (X.dims.size() < 2) fail("input must have rank >= 2");
    const std::int64_t N = X.dims[0], C = X.dims[1], plane = product(X.dims, 2, X.dims.size());
    const double eps = c.n.attrFloat("epsilon", 1e-5), mom = c.n.attrFloat("momentum", 0.9);
    const auto &sc = c.input(1).v, &bi = c.input(2).v, &mu = c.input(3).v, &var = c.input(4).v;
    for (std::size_t i = 1; i <= 4; ++i)
        if (c.input(i).v.size() != static_cast<std::size_t>(C)) fail("input " + std::to_string(i) + " must have C elements");
    auto y = c.make(X.dims, c.outDType(0));
    auto runMean = c.make({C}, c.outDType(1));
    auto runVar = c.make({C}, c.outDType(2));
    const double cnt = static_cast<double>(N * plane);
    for (std::int64_t ch = 0; ch < C; ++ch) {
        double m = 0, v = 0;
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t i = 0; i < plane; ++i) m += X.v[static_cast<std::size_t>((n * C + ch) * plane + i)];
        m /= cnt;
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t i = 0; i < plane; ++i) {
                const double d = X.v[static_cast<std::size_t>((n * C + ch) * plane + i)] - m;
                v += d * d;
            }
        v /= cnt;  // population variance (ONNX)
        const auto k = static_cast<std::size_t>(ch);
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t i = 0; i < plane; ++i) {
                const auto off = static_cast<std::size_t>((n * C + ch) * plane + i);
                y->v[off] = (X.v[off] - m) / std::sqrt(v + eps) * sc[k] + bi[k];
            }
        runMean->v[k] = mu[k] * mom + m * (1 - mom);
        runVar->v[k] = var[k] * mom + v * (1 - mom);
    }
    return {y, runMean, runVar};
}

// ---- ConvTranspose -------------------------------------------------------------------------

BufPtr convTranspose(Ctx& c) {
    const Buf& X = c.input(0);
    const Buf& W = c.input(1);
    if (X.dims.size() < 3 || W.dims.size() != X.dims.size())
        fail("ConvTranspose needs X and W of the same rank >= 3, got " + dimsStr(X.dims) + " and " + dimsStr(W.dims));
    const std::size_t r = X.dims.size() - 2;
    const std::int64_t N = X.dims[0], C = X.dims[1], G = c.n.attrInt("group", 1);
    if (G < 1 || C % G != 0 || W.dims[0] != C)
        fail("group " + std::to_string(G) + " does not fit X " + dimsStr(X.dims) + " and W " + dimsStr(W.dims));
    const std::int64_t mg = W.dims[1], M = mg * G, cg = C / G;
    const Dims in(X.dims.begin() + 2, X.dims.end());
    const Dims kernel = c.n.attrInts("kernel_shape", Dims(W.dims.begin() + 2, W.dims.end()));
    const Dims s = c.n.attrInts("strides", Dims(r, 1)), d = c.n.attrInts("dilations", Dims(r, 1));
    const Dims outPad = c.n.attrInts("output_padding", Dims(r, 0));
    Dims pads = c.n.attrInts("pads", Dims(2 * r, 0));
    const Dims outShape = c.n.attrInts("output_shape");
    const std::string autoPad = c.n.attrString("auto_pad", "NOTSET");
    if (kernel.size() != r || s.size() != r || d.size() != r || outPad.size() != r || pads.size() != 2 * r)
        fail("kernel_shape, strides, dilations, output_padding and pads must match the spatial rank");
    Dims out(r);
    for (std::size_t i = 0; i < r; ++i) {
        const std::int64_t full = s[i] * (in[i] - 1) + outPad[i] + (kernel[i] - 1) * d[i] + 1;
        if (!outShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            const std::int64_t target = !outShape.empty() ? outShape[outShape.size() - r + i] : in[i] * s[i];
            // A requested extent beyond the full result is zero (bias) at the end, as in onnxruntime.
            const std::int64_t total = std::max<std::int64_t>(0, full - target);
            // ONNX: SAME_UPPER puts the extra padding at the end; otherwise at the beginning.
            if (autoPad == "SAME_UPPER") {
                pads[i] = total / 2;
                pads[i + r] = total - total / 2;
            } else {
                pads[i] = total - total / 2;
                pads[i + r] = total / 2;
            }
            out[i] = target;
        } else {
            if (autoPad == "VALID") pads[i] = pads[i + r] = 0;
            out[i] = full - pads[i] - pads[i + r];
        }
        if (out[i] < 0) fail("the output extent is negative");
    }
    const Buf* B = c.has(2) ? &c.input(2) : nullptr;
    if (B && B->v.size() != static_cast<std::size_t>(M)) fail("bias must have " + std::to_string(M) + " elements");
    Dims outDims{N, M};
    outDims.insert(outDims.end(), out.begin(), out.end());
    auto res = c.make(outDims, c.outDType());
    const std::int64_t inPlane = product(in, 0, r), outPlane = product(out, 0, r), kElems = product(kernel, 0, r);
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t m = 0; m < M; ++m) {
            double* po = res->v.data() + (n * M + m) * outPlane;
            std::fill(po, po + outPlane, B ? B->v[static_cast<std::size_t>(m)] : 0.0);
        }
    Dims ip(r), kp(r);
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t ci = 0; ci < C; ++ci) {
            c.poll();
            const std::int64_t g = ci / cg;
            for (std::int64_t p = 0; p < inPlane; ++p) {
                unflatten(p, in, ip);
                const double x = X.v[static_cast<std::size_t>((n * C + ci) * inPlane + p)];
                for (std::int64_t e = 0; e < kElems; ++e) {
                    unflatten(e, kernel, kp);
                    std::int64_t off = 0;
                    bool inside = true;
                    for (std::size_t i = 0; i < r && inside; ++i) {
                        const std::int64_t q = ip[i] * s[i] - pads[i] + kp[i] * d[i];
                        inside = q >= 0 && q < out[i];
                        off = off * out[i] + q;
                    }
                    if (!inside) continue;
                    for (std::int64_t mo = 0; mo < mg; ++mo) {
                        const double w = W.v[static_cast<std::size_t>((ci * mg + mo) * kElems + e)];
                        res->v[static_cast<std::size_t>((n * M + g * mg + mo) * outPlane + off)] += x * w;
                    }
                }
            }
        }
    return res;
}

BufPtr maxUnpool(Ctx& c) {
    const Buf& X = c.input(0);
    const Buf& I = c.input(1);
    if (X.dims.size() < 3 || I.dims != X.dims) fail("X and I must have the same shape of rank >= 3");
    const std::size_t r = X.dims.size() - 2;
    const Dims kernel = c.n.attrInts("kernel_shape");
    const Dims s = c.n.attrInts("strides", Dims(r, 1));
    const Dims pads = c.n.attrInts("pads", Dims(2 * r, 0));
    if (kernel.size() != r || s.size() != r || pads.size() != 2 * r) fail("kernel_shape, strides and pads must match the rank");
    Dims inferred = {X.dims[0], X.dims[1]};
    for (std::size_t i = 0; i < r; ++i) inferred.push_back((X.dims[i + 2] - 1) * s[i] + kernel[i] - pads[i] - pads[i + r]);
    const Dims out = c.has(2) ? intsOf(c.input(2)) : inferred;
    if (out.size() != inferred.size()) fail("output_shape must have rank " + std::to_string(inferred.size()));
    auto res = c.make(out, c.outDType());
    // Indices address the inferred shape (that of the MaxPool input); with a larger output_shape the
    // same coordinates are placed in it.
    const Dims os = stridesOf(out);
    Dims coord;
    for (std::size_t i = 0; i < X.v.size(); ++i) {
        const std::int64_t k = toInt64(I.v[i]);
        if (k < 0 || k >= product(inferred, 0, inferred.size())) fail("index " + std::to_string(k) + " is out of range");
        unflatten(k, inferred, coord);
        for (std::size_t a = 0; a < coord.size(); ++a)
            if (coord[a] >= out[a]) fail("index " + std::to_string(k) + " falls outside output_shape");
        res->v[static_cast<std::size_t>(flatten(coord, os))] = X.v[i];
    }
    return res;
}

// ---- linear algebra ------------------------------------------------------------------------

BufPtr det(Ctx& c) {
    const Buf& X = c.input(0);
    if (X.dims.size() < 2 || X.dims.back() != X.dims[X.dims.size() - 2]) fail("input must be [..., n, n]");
    const std::int64_t n = X.dims.back();
    const Dims out(X.dims.begin(), X.dims.end() - 2);
    auto r = c.make(out, c.outDType());
    std::vector<double> a(static_cast<std::size_t>(n * n));
    for (std::size_t b = 0; b < r->v.size(); ++b) {
        std::copy_n(X.v.begin() + static_cast<std::ptrdiff_t>(b * a.size()), a.size(), a.begin());
        double d = 1;
        for (std::int64_t k = 0; k < n; ++k) {
            std::int64_t piv = k;
            for (std::int64_t i = k + 1; i < n; ++i)
                if (std::fabs(a[i * n + k]) > std::fabs(a[piv * n + k])) piv = i;
            if (a[piv * n + k] == 0) {
                d = 0;
                break;
            }
            if (piv != k) {
                for (std::int64_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[piv * n + j]);
                d = -d;
            }
            d *= a[k * n + k];
            for (std::int64_t i = k + 1; i < n; ++i) {
                const double f = a[i * n + k] / a[k * n + k];
                for (std::int64_t j = k; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
            }
        }
        r->v[b] = d;
    }
    return r;
}

BufPtr matMulInteger(Ctx& c) {
    // (A - a_zero_point) x (B - b_zero_point) with int32 accumulation; zero points per tensor or
    // per row of A / per column of B.
    Buf A = c.input(0), B = c.input(1);
    if (c.has(2)) {
        const Buf& z = c.input(2);
        const std::int64_t K = A.dims.back();
        for (std::size_t i = 0; i < A.v.size(); ++i)
            A.v[i] -= z.v.size() == 1 ? z.v[0] : z.v[(i / static_cast<std::size_t>(K)) % z.v.size()];
    }
    if (c.has(3)) {
        const Buf& z = c.input(3);
        const std::int64_t N = B.dims.back();
        for (std::size_t i = 0; i < B.v.size(); ++i) B.v[i] -= z.v.size() == 1 ? z.v[0] : z.v[i % static_cast<std::size_t>(N)];
    }
    if (A.dims.size() != 2 || B.dims.size() != 2 || A.dims[1] != B.dims[0])
        unsupported("MatMulInteger beyond 2-D operands");
    const std::int64_t M = A.dims[0], K = A.dims[1], N = B.dims[1];
    auto r = c.make({M, N}, DType::I32);
    for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (std::int64_t k = 0; k < K; ++k) acc += A.v[i * K + k] * B.v[k * N + j];
            r->v[static_cast<std::size_t>(i * N + j)] = acc;
        }
    return r;
}

// ---- quantisation --------------------------------------------------------------------------

/// Saturating round-half-to-even into the range of `t` (u8 or i8, also u16/i16/i32).
double saturate(DType t, double x) {
    double lo = 0, hi = 255;
    switch (t) {
    case DType::I8: lo = -128, hi = 127; break;
    case DType::U8: break;
    case DType::I16: lo = -32768, hi = 32767; break;
    case DType::U16: hi = 65535; break;
    case DType::I32: lo = -2147483648.0, hi = 2147483647.0; break;
    default: fail("unsupported quantised type " + std::string(ir::dtypeName(t)));
    }
    return std::clamp(std::nearbyint(x), lo, hi);
}

/// Per-tensor or per-axis parameter of element `flat` of X.
double perAxis(const Buf& p, const Buf& X, std::size_t axis, std::size_t flat) {
    if (p.v.size() == 1) return p.v[0];
    const std::int64_t inner = product(X.dims, axis + 1, X.dims.size());
    return p.v[(flat / static_cast<std::size_t>(inner)) % static_cast<std::size_t>(X.dims[axis])];
}

BufPtr quantizeLinear(Ctx& c, bool dequantize) {
    const Buf& X = c.input(0);
    const Buf& S = c.input(1);
    const Buf* Z = c.has(2) ? &c.input(2) : nullptr;
    // The axis matters only for per-axis (1-D) scales.
    const std::size_t axis =
        S.v.size() <= 1 ? 0 : static_cast<std::size_t>(normAxis(c.n.attrInt("axis", 1), X.dims.size()));
    const DType t = dequantize ? c.outDType() : (Z ? Z->dtype : DType::U8);
    auto r = c.make(X.dims, t);
    for (std::size_t i = 0; i < X.v.size(); ++i) {
        const double s = perAxis(S, X, axis, i), z = Z ? perAxis(*Z, X, axis, i) : 0.0;
        // x / y_scale is a float operation in the spec (numpy float32 in the tests).
        r->v[i] = dequantize ? (X.v[i] - z) * s : saturate(t, std::nearbyint(roundTo(X.dtype, X.v[i] / s)) + z);
    }
    return r;
}

std::vector<BufPtr> dynamicQuantizeLinear(Ctx& c) {
    const Buf& X = c.input(0);
    double lo = 0, hi = 0;
    for (double x : X.v) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
    }
    // The spec computes in float: scale and the pre-rounded zero point are f32 values.
    const double scale = roundTo(DType::F32, (hi - lo) / 255.0);
    const double zp = scale == 0 ? 0.0 : saturate(DType::U8, roundTo(DType::F32, -lo / scale));
    auto y = c.make(X.dims, DType::U8);
    for (std::size_t i = 0; i < X.v.size(); ++i)
        y->v[i] = scale == 0 ? zp : saturate(DType::U8, std::nearbyint(roundTo(DType::F32, X.v[i] / scale)) + zp);
    auto s = c.make({}, DType::F32);
    s->v[0] = scale;
    auto z = c.make({}, DType::U8);
    z->v[0] = zp;
    return {y, s, z};
}

// ---- Resize / Upsample ---------------------------------------------------------------------

/// Interpolation weights of the n neighbours of a point at fractional offset `ratio` in (0, 1]
/// after the left neighbour (ONNX resize test helpers: nearest n=2, linear n=2, cubic n=4).
std::vector<double> resizeCoeffs(const std::string& mode, const std::string& nearestMode, double ratio, double A) {
    if (mode == "nearest") {
        if (ratio == 1.0) return {0, 1};
        bool right = false;
        if (nearestMode == "round_prefer_floor") right = ratio > 0.5;
        else if (nearestMode == "round_prefer_ceil") right = ratio >= 0.5;
        else if (nearestMode == "floor") right = false;
        else if (nearestMode == "ceil") right = true;
        else fail("unknown nearest_mode '" + nearestMode + "'");
        return {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
    }
    if (mode == "linear") return {1 - ratio, ratio};
    if (mode == "cubic") {
        const double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
        return {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A, ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
                ((A + 2) * q - (A + 3)) * q * q + 1, ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A};
    }
    fail("unknown mode '" + mode + "'");
}

BufPtr resize(Ctx& c) {
    const Buf& X = c.input(0);
    const std::size_t rank = X.dims.size();
    const bool legacy = c.n.opType == "Upsample" || opsetOf(c) < 11;  // Upsample-9 and Resize-10: X, scales
    std::vector<double> scales, roi;
    Dims out(rank);
    const Buf* scalesIn = legacy ? (c.has(1) ? &c.input(1) : nullptr) : (c.has(2) ? &c.input(2) : nullptr);
    if (!legacy && c.has(1)) roi = c.input(1).v;
    if (!legacy && c.has(3) && !c.input(3).v.empty()) {
        const Dims sizes = intsOf(c.input(3));
        if (sizes.size() != rank) fail("sizes must have " + std::to_string(rank) + " values");
        for (std::size_t i = 0; i < rank; ++i) {
            out[i] = sizes[i];
            scales.push_back(X.dims[i] ? static_cast<double>(sizes[i]) / static_cast<double>(X.dims[i]) : 1.0);
        }
    } else if (scalesIn && !scalesIn->v.empty()) {
        scales = scalesIn->v;
        if (scales.size() != rank) fail("scales must have " + std::to_string(rank) + " values");
        for (std::size_t i = 0; i < rank; ++i) {
            if (scales[i] <= 0) fail("scales must be positive");
            out[i] = static_cast<std::int64_t>(std::floor(static_cast<double>(X.dims[i]) * scales[i]));
        }
    } else if (c.n.opType == "Upsample" && c.n.hasAttr("scales")) {
        scales = c.n.attrFloats("scales");
        if (scales.size() != rank) fail("scales must have " + std::to_string(rank) + " values");
        for (std::size_t i = 0; i < rank; ++i)
            out[i] = static_cast<std::int64_t>(std::floor(static_cast<double>(X.dims[i]) * scales[i]));
    } else {
        fail("Resize needs scales or sizes");
    }
    std::string mode = c.n.attrString("mode", "nearest");
    if (mode == "bilinear" || mode == "trilinear") mode = "linear";
    const std::string ctm = legacy ? "asymmetric" : c.n.attrString("coordinate_transformation_mode", "half_pixel");
    const std::string nearestMode = legacy ? "floor" : c.n.attrString("nearest_mode", "round_prefer_floor");
    const double A = c.n.attrFloat("cubic_coeff_a", -0.75), extrap = c.n.attrFloat("extrapolation_value", 0.0);
    const bool excludeOutside = c.n.attrInt("exclude_outside", 0) != 0;
    if (ctm == "tf_crop_and_resize" && roi.size() != 2 * rank) fail("tf_crop_and_resize needs roi of 2 * rank values");

    // Per axis and output position: neighbour indices (clamped, edge padding) and weights; or an
    // empty list when the position lies outside the crop (extrapolation_value).
    struct Tap {
        std::vector<std::int64_t> idx;
        std::vector<double> w;
    };
    std::vector<std::vector<Tap>> taps(rank);
    for (std::size_t a = 0; a < rank; ++a) {
        const auto in = static_cast<double>(X.dims[a]);
        const double scale = scales[a], outW = scale * in;
        taps[a].resize(static_cast<std::size_t>(out[a]));
        for (std::int64_t o = 0; o < out[a]; ++o) {
            const auto x = static_cast<double>(o);
            double xo = 0;
            if (ctm == "half_pixel") xo = (x + 0.5) / scale - 0.5;
            else if (ctm == "pytorch_half_pixel") xo = outW == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
            else if (ctm == "align_corners") xo = outW == 1 ? 0.0 : x * (in - 1) / (outW - 1);
            else if (ctm == "asymmetric") xo = x / scale;
            else if (ctm == "tf_half_pixel_for_nn") xo = (x + 0.5) / scale;
            else if (ctm == "tf_crop_and_resize") {
                const double b = roi[a], e = roi[a + rank];
                xo = outW == 1 ? (e - b) * (in - 1) / 2 : x * (e - b) * (in - 1) / (outW - 1);
                xo += b * (in - 1);
                if (xo < 0 || xo > in - 1) continue;  // extrapolated
            } else fail("unknown coordinate_transformation_mode '" + ctm + "'");
            const double fl = std::floor(xo);
            const double ratio = xo == fl ? 1.0 : xo - fl;
            std::vector<double> w = resizeCoeffs(mode, nearestMode, ratio, A);
            const auto n = static_cast<std::int64_t>(w.size());
            // The n neighbours nearest to xo, ties to the lower index: for an integral xo the window
            // ends at xo (ratio 1), otherwise it is centred on [floor, floor + 1].
            const std::int64_t start =
                xo == fl ? static_cast<std::int64_t>(fl) - n / 2 : static_cast<std::int64_t>(fl) - (n / 2 - 1);
            Tap t;
            double sum = 0;
            for (std::int64_t k = 0; k < n; ++k) {
                const std::int64_t i = start + k;
                if (excludeOutside && (i < 0 || i >= X.dims[a])) w[static_cast<std::size_t>(k)] = 0;
                sum += w[static_cast<std::size_t>(k)];
                t.idx.push_back(std::clamp<std::int64_t>(i, 0, X.dims[a] - 1));
            }
            if (excludeOutside && sum != 0)
                for (auto& v : w) v /= sum;
            t.w = w;
            taps[a][static_cast<std::size_t>(o)] = std::move(t);
        }
    }
    auto r = c.make(out, c.outDType());
    const Dims xs = stridesOf(X.dims);
    Dims idx;
    for (std::size_t flat = 0; flat < r->v.size(); ++flat) {
        if ((flat & 0xffff) == 0) c.poll();
        unflatten(static_cast<std::int64_t>(flat), out, idx);
        std::vector<const Tap*> ts(rank);
        bool outside = false;
        for (std::size_t a = 0; a < rank; ++a) {
            ts[a] = &taps[a][static_cast<std::size_t>(idx[a])];
            if (ts[a]->w.empty()) outside = true;
        }
        if (outside) {
            r->v[flat] = extrap;
            continue;
        }
        // Sum over every combination of neighbours (tensor product of the per-axis weights).
        double acc = 0;
        std::vector<std::size_t> k(rank, 0);
        while (true) {
            double w = 1;
            std::int64_t off = 0;
            for (std::size_t a = 0; a < rank; ++a) {
                w *= ts[a]->w[k[a]];
                off += ts[a]->idx[k[a]] * xs[a];
            }
            if (w != 0) acc += w * X.v[static_cast<std::size_t>(off)];
            std::size_t a = rank;
            while (a-- > 0) {
                if (++k[a] < ts[a]->w.size()) break;
                k[a] = 0;
            }
            if (a == static_cast<std::size_t>(-1)) break;
        }
        r->v[flat] = acc;
    }
    return r;
}

// ---- Einsum --------------------------------------------------------------------------------

BufPtr einsum(Ctx& c) {
    std::string eq;
    for (char ch : c.n.attrString("equation", ""))
        if (ch != ' ') eq += ch;
    const auto arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    for (std::size_t p = 0;;) {
        const auto q = lhs.find(',', p);
        terms.push_back(lhs.substr(p, q == std::string::npos ? std::string::npos : q - p));
        if (q == std::string::npos) break;
        p = q + 1;
    }
    if (terms.size() != c.in.size())
        fail("equation has " + std::to_string(terms.size()) + " operands for " + std::to_string(c.in.size()) + " inputs");
    // Labels: letters are 0..51; the axes under "..." are 100 + k, aligned from the right.
    auto letter = [](char ch) -> int {
        if (ch >= 'a' && ch <= 'z') return ch - 'a';
        if (ch >= 'A' && ch <= 'Z') return 26 + ch - 'A';
        fail(std::string("invalid equation character '") + ch + "'");
    };
    std::map<int, std::int64_t> extent;
    std::vector<std::vector<int>> labels(terms.size());
    std::size_t ellipsisRank = 0;
    std::map<int, int> count;
    for (std::size_t j = 0; j < terms.size(); ++j) {
        const Buf& b = c.input(j);
        const std::string& t = terms[j];
        const auto dots = t.find("...");
        std::size_t letters = t.size() - (dots == std::string::npos ? 0 : 3);
        if (letters > b.dims.size()) fail("operand " + std::to_string(j) + " has fewer axes than its subscripts");
        const std::size_t er = dots == std::string::npos ? 0 : b.dims.size() - letters;
        if (dots == std::string::npos && letters != b.dims.size())
            fail("operand " + std::to_string(j) + " has rank " + std::to_string(b.dims.size()) + " but " +
                 std::to_string(letters) + " subscripts");
        ellipsisRank = std::max(ellipsisRank, er);
        for (std::size_t p = 0; p < t.size();) {
            if (t.compare(p, 3, "...") == 0) {
                for (std::size_t k = 0; k < er; ++k) labels[j].push_back(100 + static_cast<int>(er - 1 - k));
                p += 3;
            } else {
                labels[j].push_back(letter(t[p]));
                ++count[letter(t[p])];
                ++p;
            }
        }
        for (std::size_t a = 0; a < labels[j].size(); ++a) {
            const int l = labels[j][a];
            const std::int64_t d = b.dims[a];
            auto it = extent.find(l);
            if (it == extent.end() || it->second == 1) extent[l] = d;
            else if (d != it->second && !(l >= 100 && d == 1))
                fail("subscript extents disagree (" + std::to_string(d) + " vs " + std::to_string(it->second) + ")");
        }
    }
    std::vector<int> outLabels;
    if (arrow != std::string::npos) {
        const std::string rhs = eq.substr(arrow + 2);
        for (std::size_t p = 0; p < rhs.size();) {
            if (rhs.compare(p, 3, "...") == 0) {
                for (std::size_t k = 0; k < ellipsisRank; ++k) outLabels.push_back(100 + static_cast<int>(ellipsisRank - 1 - k));
                p += 3;
            } else {
                outLabels.push_back(letter(rhs[p++]));
            }
        }
    } else {
        for (std::size_t k = 0; k < ellipsisRank; ++k) outLabels.push_back(100 + static_cast<int>(ellipsisRank - 1 - k));
        for (const auto& [l, n] : count)
            if (n == 1) outLabels.push_back(l);
    }
    std::vector<int> all;
    for (const auto& [l, e] : extent) all.push_back(l);
    Dims outDims;
    for (int l : outLabels) {
        if (!extent.count(l)) fail("output subscript does not appear in the inputs");
        outDims.push_back(extent[l]);
    }
    auto r = c.make(outDims, c.outDType());
    // Strides per label for every operand (0 where the operand lacks the label or broadcasts it).
    auto pos = [&](int l) { return static_cast<std::size_t>(std::find(all.begin(), all.end(), l) - all.begin()); };
    std::vector<Dims> inStride(terms.size(), Dims(all.size(), 0));
    for (std::size_t j = 0; j < terms.size(); ++j) {
        const Dims s = stridesOf(c.input(j).dims);
        for (std::size_t a = 0; a < labels[j].size(); ++a)
            if (c.input(j).dims[a] != 1 || extent[labels[j][a]] == 1) inStride[j][pos(labels[j][a])] += s[a];
    }
    Dims outStride(all.size(), 0);
    const Dims os = stridesOf(outDims);
    for (std::size_t a = 0; a < outLabels.size(); ++a) outStride[pos(outLabels[a])] += os[a];
    Dims ext;
    for (int l : all) ext.push_back(extent[l]);
    const std::int64_t total = product(ext, 0, ext.size());
    if (total > c.opt.maxElements * 16) fail("einsum iteration space is too large");
    Dims idx;
    for (std::int64_t flat = 0; flat < total; ++flat) {
        if ((flat & 0xffff) == 0) c.poll();
        unflatten(flat, ext, idx);
        double prod = 1;
        for (std::size_t j = 0; j < terms.size(); ++j) prod *= c.input(j).v[static_cast<std::size_t>(flatten(idx, inStride[j]))];
        r->v[static_cast<std::size_t>(flatten(idx, outStride))] += prod;
    }
    return r;
}

// ---- quantised linear algebra --------------------------------------------------------------

/// `b` minus a zero point that is per tensor or per slice along `axis`.
std::shared_ptr<Buf> minusZeroPoint(Ctx& c, const Buf& b, const Buf* zp, std::size_t axis) {
    auto r = std::make_shared<Buf>(b);
    r->dtype = DType::I32;
    if (!zp) return r;
    for (std::size_t i = 0; i < r->v.size(); ++i) r->v[i] -= perAxis(*zp, b, axis, i);
    (void)c;
    return r;
}

BufPtr convInteger(Ctx& c) {
    const Buf& X = c.input(0);
    const Buf& W = c.input(1);
    Ctx inner{c.g, c.n, {minusZeroPoint(c, X, c.has(2) ? &c.input(2) : nullptr, 1),
                         minusZeroPoint(c, W, c.has(3) ? &c.input(3) : nullptr, 0)},
              c.opt, c.cancel};
    auto r = std::make_shared<Buf>(*convOp(inner));
    r->dtype = DType::I32;
    return r;
}

BufPtr qlinear(Ctx& c, bool isConv) {
    // Inputs: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B] (B: QLinearConv only).
    const Buf& X = c.input(0);
    const Buf& W = c.input(3);
    const std::size_t wAxis = isConv ? 0 : (W.dims.size() >= 2 ? W.dims.size() - 1 : 0);
    std::vector<BufPtr> ins = {minusZeroPoint(c, X, &c.input(2), 0), minusZeroPoint(c, W, &c.input(5), wAxis)};
    if (isConv && c.has(8)) ins.push_back(c.in[8]);
    Ctx inner{c.g, c.n, ins, c.opt, c.cancel};
    BufPtr acc = isConv ? convOp(inner) : matmulOp(inner);
    const Buf& xs = c.input(1);
    const Buf& ws = c.input(4);
    const double ys = scalarOf(c.input(6), "y_scale");
    const Buf& yzp = c.input(7);
    const DType t = yzp.dtype;
    auto r = c.make(acc->dims, t);
    // Per-channel weight scales index the output channel (axis 1 of Conv's output, the last axis of MatMul's).
    const std::size_t outAxis = isConv ? 1 : acc->dims.size() - 1;
    for (std::size_t i = 0; i < acc->v.size(); ++i) {
        const double scale = scalarOf(xs, "x_scale") * perAxis(ws, *acc, outAxis, i) / ys;
        r->v[i] = saturate(t, std::nearbyint(acc->v[i] * scale) + yzp.v[0]);
    }
    return r;
}

// ---- losses --------------------------------------------------------------------------------

/// NegativeLogLikelihoodLoss over log-probabilities `P` [N, C, d...] and targets [N, d...].
BufPtr nllLoss(Ctx& c, const Buf& P, const Buf& T, const Buf* Wt, DType outType) {
    if (P.dims.size() < 2 || T.dims.size() != P.dims.size() - 1) fail("input must be [N,C,...] and target [N,...]");
    const std::int64_t N = P.dims[0], C = P.dims[1], inner = product(P.dims, 2, P.dims.size());
    const std::string red = c.n.attrString("reduction", "mean");
    const bool hasIgnore = c.n.hasAttr("ignore_index");
    const std::int64_t ignore = c.n.attrInt("ignore_index", 0);
    std::vector<double> loss(static_cast<std::size_t>(N * inner)), wsum(loss.size());
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t i = 0; i < inner; ++i) {
            const auto k = static_cast<std::size_t>(n * inner + i);
            const std::int64_t t = toInt64(T.v[k]);
            if (hasIgnore && t == ignore) continue;
            if (t < 0 || t >= C) fail("target " + std::to_string(t) + " is out of range for " + std::to_string(C) + " classes");
            const double w = Wt ? Wt->v.at(static_cast<std::size_t>(t)) : 1.0;
            loss[k] = -P.v[static_cast<std::size_t>((n * C + t) * inner + i)] * w;
            wsum[k] = w;
        }
    if (red == "none") {
        auto r = c.make(T.dims, outType);
        r->v = loss;
        return r;
    }
    auto r = c.make({}, outType);
    const double total = std::accumulate(loss.begin(), loss.end(), 0.0);
    if (red == "sum") r->v[0] = total;
    else if (red == "mean") r->v[0] = total / std::accumulate(wsum.begin(), wsum.end(), 0.0);
    else fail("unknown reduction '" + red + "'");
    return r;
}

std::vector<BufPtr> softmaxCrossEntropy(Ctx& c) {
    const Buf& X = c.input(0);
    if (X.dims.size() < 2) fail("scores must be [N, C, ...]");
    const std::int64_t N = X.dims[0], C = X.dims[1], inner = product(X.dims, 2, X.dims.size());
    auto logp = c.make(X.dims, c.outDType(1) == DType::Undefined ? X.dtype : c.outDType(1));
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t i = 0; i < inner; ++i) {
            double mx = -std::numeric_limits<double>::infinity();
            for (std::int64_t k = 0; k < C; ++k) mx = std::max(mx, X.v[static_cast<std::size_t>((n * C + k) * inner + i)]);
            double sum = 0;
            for (std::int64_t k = 0; k < C; ++k) sum += std::exp(X.v[static_cast<std::size_t>((n * C + k) * inner + i)] - mx);
            for (std::int64_t k = 0; k < C; ++k) {
                const auto off = static_cast<std::size_t>((n * C + k) * inner + i);
                logp->v[off] = X.v[off] - mx - std::log(sum);
            }
        }
    auto loss = nllLoss(c, *logp, c.input(1), c.has(2) ? &c.input(2) : nullptr, c.outDType(0));
    return {loss, logp};
}

// ---- windows (signal) ----------------------------------------------------------------------

BufPtr window(Ctx& c, char kind) {
    const std::int64_t size = toInt64(scalarOf(c.input(0), "size"));
    if (size < 0) fail("size must be >= 0");
    const bool periodic = c.n.attrInt("periodic", 1) != 0;
    DType t = onnxCodeToDType(c.n.attrInt("output_datatype", 1));
    if (t == DType::Undefined) t = DType::F32;
    auto r = c.make({size}, t);
    const double N = static_cast<double>(periodic ? size : size - 1);
    for (std::int64_t i = 0; i < size; ++i) {
        const double x = 2 * kPi * static_cast<double>(i) / N;
        double w = 0;
        if (kind == 'n') w = 0.5 - 0.5 * std::cos(x);
        else if (kind == 'm') w = 25.0 / 46.0 - (1 - 25.0 / 46.0) * std::cos(x);
        else w = 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
        r->v[static_cast<std::size_t>(i)] = roundTo(t, w);
    }
    return r;
}

}  // namespace

bool evalMoreOps(Ctx& c, std::vector<BufPtr>& outs) {
    const std::string& op = c.n.opType;
    const Node& n = c.n;
    const DType out = c.outDType();
    auto un = [&](auto f) {
        outs = {unary(c, f)};
        return true;
    };
    auto unBool = [&](auto f) {
        const Buf& x = c.input(0);
        auto r = c.make(x.dims, DType::Bool);
        for (std::size_t i = 0; i < x.v.size(); ++i) r->v[i] = f(x.v[i]) ? 1.0 : 0.0;
        outs = {r};
        return true;
    };
    auto bin = [&](DType t, auto f) {
        outs = {elementwise(c, {&c.input(0), &c.input(1)}, t, [f](const double* a) { return f(a[0], a[1]); })};
        return true;
    };

    if (op == "Acos") return un([](double x) { return std::acos(x); });
    if (op == "Acosh") return un([](double x) { return std::acosh(x); });
    if (op == "Asin") return un([](double x) { return std::asin(x); });
    if (op == "Asinh") return un([](double x) { return std::asinh(x); });
    if (op == "Atan") return un([](double x) { return std::atan(x); });
    if (op == "Atanh") return un([](double x) { return std::atanh(x); });
    if (op == "Cosh") return un([](double x) { return std::cosh(x); });
    if (op == "Sinh") return un([](double x) { return std::sinh(x); });
    if (op == "Tan") return un([](double x) { return std::tan(x); });
    if (op == "Softsign") return un([](double x) { return x / (1.0 + std::fabs(x)); });
    if (op == "Sign") return un([](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : std::isnan(x) ? x : 0.0; });
    if (op == "Round") return un([](double x) { return std::nearbyint(x); });  // half to even
    if (op == "Mish") return un([](double x) { return x * std::tanh(std::log1p(std::exp(x))); });
    if (op == "Selu") {
        const double a = n.attrFloat("alpha", 1.67326319217681884765625), g = n.attrFloat("gamma", 1.05070102214050292969);
        return un([a, g](double x) { return x > 0 ? g * x : g * a * (std::exp(x) - 1.0); });
    }
    if (op == "Celu") {
        const double a = n.attrFloat("alpha", 1.0);
        return un([a](double x) {
            if (std::isnan(x)) return x;  // NaN stays NaN (std::max/min would drop it)
            return std::max(0.0, x) + std::min(0.0, a * (std::exp(x / a) - 1.0));
        });
    }
    if (op == "ThresholdedRelu") {
        const double a = n.attrFloat("alpha", 1.0);
        return un([a](double x) { return x > a ? x : 0.0; });
    }
    if (op == "Shrink") {
        const double l = n.attrFloat("lambd", 0.5), b = n.attrFloat("bias", 0.0);
        return un([l, b](double x) { return x < -l ? x + b : x > l ? x - b : 0.0; });
    }
    if (op == "IsNaN") return unBool([](double x) { return std::isnan(x); });
    if (op == "IsInf") {
        const bool neg = n.attrInt("detect_negative", 1) != 0, pos = n.attrInt("detect_positive", 1) != 0;
        return unBool([neg, pos](double x) { return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg)); });
    }
    if (op == "Not") return unBool([](double x) { return x == 0.0; });
    if (op == "And") return bin(DType::Bool, [](double a, double b) { return (a != 0 && b != 0) ? 1.0 : 0.0; });
    if (op == "Or") return bin(DType::Bool, [](double a, double b) { return (a != 0 || b != 0) ? 1.0 : 0.0; });
    if (op == "Xor") return bin(DType::Bool, [](double a, double b) { return ((a != 0) != (b != 0)) ? 1.0 : 0.0; });
    if (op == "BitShift") {
        outs = {bitShift(c)};
        return true;
    }
    if (op == "Mod") {
        if (n.attrInt("fmod", 0) != 0) return bin(out, [](double a, double b) { return std::fmod(a, b); });
        if (!ir::isInteger(out)) fail("Mod with fmod = 0 needs integer inputs");
        return bin(out, floorMod);
    }
    if (op == "PRelu") return bin(out, [](double x, double s) { return x < 0 ? s * x : x; });
    if (op == "CastLike") {
        outs = {copyAs(c, c.input(0), c.input(1).dtype)};
        return true;
    }
    if (op == "Size") {
        auto r = c.make({}, DType::I64);
        r->v[0] = static_cast<double>(c.input(0).v.size());
        outs = {r};
        return true;
    }
    using One = BufPtr (*)(Ctx&);
    static const std::pair<const char*, One> kOne[] = {
        {"Expand", expand},
        {"Tile", tile},
        {"Slice", slice},
        {"Pad", pad},
        {"Trilu", trilu},
        {"GatherElements", gatherElements},
        {"ScatterElements", scatterElements},
        {"Scatter", scatterElements},
        {"GatherND", gatherND},
        {"ScatterND", scatterND},
        {"CumSum", cumSum},
        {"ConstantOfShape", constantOfShape},
        {"Range", range},
        {"EyeLike", eyeLike},
        {"OneHot", oneHot},
        {"Compress", compress},
        {"NonZero", nonZero},
        {"ReverseSequence", reverseSequence},
        {"Hardmax", hardmax},
        {"InstanceNormalization", instanceNorm},
        {"MeanVarianceNormalization", meanVarianceNorm},
        {"LRN", lrn},
        {"ConvTranspose", convTranspose},
        {"MaxUnpool", maxUnpool},
        {"Det", det},
        {"MatMulInteger", matMulInteger},
        {"Resize", resize},
        {"Upsample", resize},
        {"Einsum", einsum},
        {"ConvInteger", convInteger},
    };
    for (const auto& [name, f] : kOne)
        if (op == name) {
            outs = {f(c)};
            return true;
        }
    if (op == "DepthToSpace" || op == "SpaceToDepth") {
        outs = {depthToSpace(c, op == "DepthToSpace")};
        return true;
    }
    if (op == "Split") {
        outs = split(c);
        return true;
    }
    if (op == "TopK") {
        outs = topK(c);
        return true;
    }
    if (op == "ArgMax" || op == "ArgMin") {
        outs = {argExtreme(c, op == "ArgMax")};
        return true;
    }
    if (op == "ReduceL1" || op == "ReduceL2" || op == "ReduceSumSquare" || op == "ReduceLogSum" ||
        op == "ReduceLogSumExp") {
        const MoreRed k = op == "ReduceL1"          ? MoreRed::L1
                          : op == "ReduceL2"        ? MoreRed::L2
                          : op == "ReduceSumSquare" ? MoreRed::SumSquare
                          : op == "ReduceLogSum"    ? MoreRed::LogSum
                                                    : MoreRed::LogSumExp;
        outs = {reduceMore(c, k)};
        return true;
    }
    if (op == "LayerNormalization") {
        outs = layerNorm(c);
        return true;
    }
    if (op == "BatchNormalization") {  // reached only in training mode (see reference_interpreter.cpp)
        outs = batchNormTraining(c);
        return true;
    }
    if (op == "QuantizeLinear" || op == "DequantizeLinear") {
        outs = {quantizeLinear(c, op == "DequantizeLinear")};
        return true;
    }
    if (op == "QLinearConv" || op == "QLinearMatMul") {
        outs = {qlinear(c, op == "QLinearConv")};
        return true;
    }
    if (op == "DynamicQuantizeLinear") {
        outs = dynamicQuantizeLinear(c);
        return true;
    }
    if (op == "NegativeLogLikelihoodLoss") {
        outs = {nllLoss(c, c.input(0), c.input(1), c.has(2) ? &c.input(2) : nullptr, out)};
        return true;
    }
    if (op == "SoftmaxCrossEntropyLoss") {
        outs = softmaxCrossEntropy(c);
        return true;
    }
    if (op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow") {
        outs = {window(c, op == "HannWindow" ? 'n' : op == "HammingWindow" ? 'm' : 'b')};
        return true;
    }
    return false;
}

}  // namespace tessera::eval::refimpl
