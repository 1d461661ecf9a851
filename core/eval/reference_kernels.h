#pragma once
/// @file
/// Internal to the reference interpreter (core/eval/reference_interpreter*.cpp): the double
/// buffer every value is held in, the per-node context, and the shared helpers (broadcasting,
/// windows). Not a public interface: nothing outside core/eval includes it.
///
/// Errors inside an op are reported by fail() (throws EvalError, which the interpreter turns into
/// a diagnostic naming the node); nothing escapes evaluate().

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/eval/reference_interpreter.h"
#include "core/ir/graph.h"

namespace tessera::eval::refimpl {

using ir::DType;
using ir::Node;

using Dims = std::vector<std::int64_t>;

/// Every tensor inside the interpreter: elements as double, row-major.
struct Buf {
    DType dtype = DType::F32;
    Dims dims;
    std::vector<double> v;
};
using BufPtr = std::shared_ptr<const Buf>;

/// Thrown inside node evaluation only; evaluate() turns it into a diagnostic naming the node.
struct EvalError {
    std::string message;
};
struct Cancelled {};

[[noreturn]] inline void fail(std::string msg) { throw EvalError{std::move(msg)}; }

inline std::string dimsStr(const Dims& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
}

/// The values of one graph being evaluated and its enclosing scopes (subgraph bodies of If, Loop
/// and Scan look names up here, innermost first, as ONNX scoping says).
struct Scope {
    const ir::Graph* graph = nullptr;
    const std::vector<BufPtr>* env = nullptr;  ///< indexed by the graph's ValueId
    const Scope* parent = nullptr;

    /// The value named `name` in this graph or an enclosing one; null when none holds it.
    BufPtr find(const std::string& name) const {
        for (const Scope* s = this; s; s = s->parent) {
            const ir::ValueId id = s->graph->findValue(name);
            if (id != ir::kNoValue && static_cast<std::size_t>(id) < s->env->size() && (*s->env)[id])
                return (*s->env)[static_cast<std::size_t>(id)];
        }
        return nullptr;
    }
};

struct Ctx {
    const ir::Graph& g;
    const Node& n;
    std::vector<BufPtr> in;  ///< null for omitted optional inputs
    const ReferenceOptions& opt;
    const support::CancelToken* cancel;
    /// The graph holding `n` with its values and enclosing scopes (null only for a Ctx built
    /// without one; control-flow ops then see no outer values).
    const Scope* scope = nullptr;

    std::int64_t count(const Dims& d) const {
        std::int64_t c = 1;
        for (auto x : d) {
            if (x < 0) fail("negative extent in shape " + dimsStr(d));
            if (x != 0 && c > opt.maxElements / x)
                fail("tensor of shape " + dimsStr(d) + " exceeds the limit of " +
                     std::to_string(opt.maxElements) + " elements");
            c *= x;
        }
        if (c > opt.maxElements)
            fail("tensor of shape " + dimsStr(d) + " exceeds the limit of " + std::to_string(opt.maxElements) +
                 " elements");
        return c;
    }
    void poll() const {
        if (cancel && cancel->isCancelled()) throw Cancelled{};
    }
    bool has(std::size_t i) const { return i < in.size() && in[i] != nullptr; }
    const Buf& input(std::size_t i) const {
        if (!has(i)) fail("input " + std::to_string(i) + " is required");
        return *in[i];
    }
    DType outDType(std::size_t k = 0) const {
        if (k < n.outputs.size() && n.outputs[k] != ir::kNoValue) {
            DType t = g.value(n.outputs[k]).type.dtype;
            if (t != DType::Undefined) return t;
        }
        return has(0) ? in[0]->dtype : DType::F32;
    }
    std::shared_ptr<Buf> make(const Dims& d, DType t) const {
        auto b = std::make_shared<Buf>();
        b->dtype = t;
        b->dims = d;
        b->v.assign(static_cast<std::size_t>(count(d)), 0.0);
        return b;
    }
};

inline Dims stridesOf(const Dims& d) {
    Dims s(d.size(), 1);
    for (std::size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
    return s;
}

inline std::int64_t normAxis(std::int64_t a, std::size_t rank) {
    const auto r = static_cast<std::int64_t>(rank);
    if (a < -r || a >= r) fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(r));
    return a < 0 ? a + r : a;
}

inline std::int64_t product(const Dims& d, std::size_t from, std::size_t to) {
    std::int64_t p = 1;
    for (std::size_t i = from; i < to; ++i) p *= d[i];
    return p;
}

/// Value after a conversion to `t`: integers truncate toward zero, bool is 0/1, f32 rounds.
/// x rounded to nearest-even with `bits` significand bits (implicit bit included), normal
/// exponents from `minExp` (frexp's convention: values in [2^(minExp - 1), ...) are normal; below,
/// the quantum stays 2^(minExp - bits)), values whose magnitude rounds to `overflow` or beyond
/// becoming infinite: IEEE binary16 (11, -13, 65520) and bfloat16 (8, -125, 2^128).
inline double roundToFormat(double x, int bits, int minExp, double overflow) {
    if (!std::isfinite(x) || x == 0.0) return x;
    const double a = std::fabs(x);
    int e = 0;
    std::frexp(a, &e);
    const double quantum = std::ldexp(1.0, std::max(e, minExp) - bits);
    const double q = std::nearbyint(a / quantum) * quantum;  // the default rounding mode: to even
    if (q >= overflow) return std::copysign(std::numeric_limits<double>::infinity(), x);
    return std::copysign(q, x);
}

inline double roundTo(DType t, double x) {
    if (t == DType::Bool) return x != 0.0 ? 1.0 : 0.0;
    if (ir::isInteger(t)) return std::isfinite(x) ? std::trunc(x) : 0.0;
    if (t == DType::F32) return static_cast<double>(static_cast<float>(x));
    // f16 and bf16 hold fewer bits than float: a Cast to them (and every value stored in them)
    // loses what a kernel's conversion loses (1000.7 -> 1000.5 in f16).
    if (t == DType::F16) return roundToFormat(x, 11, -13, 65520.0);
    if (t == DType::BF16)
        return roundToFormat(x, 8, -125, std::ldexp(1.0, 128));
    return x;
}

// ---- broadcasting --------------------------------------------------------------------------

inline Dims broadcastDims(const std::vector<const Buf*>& ins) {
    std::size_t rank = 0;
    for (auto* b : ins) rank = std::max(rank, b->dims.size());
    Dims out(rank, 1);
    for (auto* b : ins) {
        const std::size_t off = rank - b->dims.size();
        for (std::size_t i = 0; i < b->dims.size(); ++i) {
            const auto d = b->dims[i];
            auto& o = out[off + i];
            if (d == o || d == 1) continue;
            if (o == 1) {
                o = d;
                continue;
            }
            std::string shapes;
            for (auto* x : ins) shapes += (shapes.empty() ? "" : " and ") + dimsStr(x->dims);
            fail("shapes " + shapes + " cannot be broadcast");
        }
    }
    return out;
}

/// Calls f(outFlat, offsets) for every element of `out`; offsets[j] indexes input j broadcast to it.
template <typename F>
void forEachBroadcast(const Dims& out, const std::vector<const Dims*>& inDims, F&& f) {
    const std::size_t rank = out.size();
    const std::size_t k = inDims.size();
    std::vector<Dims> bs(k, Dims(rank, 0));
    for (std::size_t j = 0; j < k; ++j) {
        const Dims& d = *inDims[j];
        const Dims s = stridesOf(d);
        const std::size_t off = rank - d.size();
        for (std::size_t i = 0; i < d.size(); ++i) bs[j][off + i] = d[i] == 1 ? 0 : s[i];
    }
    std::int64_t total = product(out, 0, rank);
    Dims idx(rank, 0);
    std::vector<std::int64_t> offs(k, 0);
    for (std::int64_t flat = 0; flat < total; ++flat) {
        f(flat, offs);
        for (std::size_t i = rank; i-- > 0;) {
            ++idx[i];
            for (std::size_t j = 0; j < k; ++j) offs[j] += bs[j][i];
            if (idx[i] < out[i]) break;
            for (std::size_t j = 0; j < k; ++j) offs[j] -= bs[j][i] * out[i];
            idx[i] = 0;
        }
    }
}

inline BufPtr elementwise(Ctx& c, const std::vector<const Buf*>& ins, DType outType,
                   const std::function<double(const double*)>& f) {
    const Dims out = broadcastDims(ins);
    auto r = c.make(out, outType);
    std::vector<const Dims*> dims;
    for (auto* b : ins) dims.push_back(&b->dims);
    std::vector<double> args(ins.size());
    forEachBroadcast(out, dims, [&](std::int64_t flat, const std::vector<std::int64_t>& offs) {
        for (std::size_t j = 0; j < ins.size(); ++j) args[j] = ins[j]->v[static_cast<std::size_t>(offs[j])];
        r->v[static_cast<std::size_t>(flat)] = f(args.data());
    });
    return r;
}

inline BufPtr unary(Ctx& c, const std::function<double(double)>& f) {
    const Buf& x = c.input(0);
    auto r = c.make(x.dims, c.outDType());
    for (std::size_t i = 0; i < x.v.size(); ++i) r->v[i] = f(x.v[i]);
    return r;
}

inline double scalarOf(const Buf& b, const char* what) {
    if (b.v.size() != 1) fail(std::string(what) + " must have one element, got shape " + dimsStr(b.dims));
    return b.v[0];
}

/// x as int64, saturating (INT64_MAX stored in a double is 2^63, which does not convert); NaN is 0.
inline std::int64_t toInt64(double x) {
    constexpr double kLimit = 9.2233720368547748e18;  // largest double below 2^63
    if (std::isnan(x)) return 0;
    if (x >= kLimit) return std::numeric_limits<std::int64_t>::max();
    if (x <= -kLimit) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(x);
}

inline std::vector<std::int64_t> intsOf(const Buf& b) {
    std::vector<std::int64_t> r;
    r.reserve(b.v.size());
    for (double x : b.v) r.push_back(toInt64(x));
    return r;
}

struct Window {
    Dims in, k, s, d, pb, pe, out;
};

inline Window makeWindow(const Ctx& c, const Dims& in, const Dims& kernel, bool ceilMode) {
    const std::size_t r = in.size();
    Window w;
    w.in = in;
    w.k = kernel;
    w.s = c.n.attrInts("strides", Dims(r, 1));
    w.d = c.n.attrInts("dilations", Dims(r, 1));
    Dims pads = c.n.attrInts("pads", Dims(2 * r, 0));
    if (w.s.size() != r || w.d.size() != r || pads.size() != 2 * r)
        fail("strides, dilations and pads must have " + std::to_string(r) + ", " + std::to_string(r) + " and " +
             std::to_string(2 * r) + " values");
    w.pb.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(r));
    w.pe.assign(pads.begin() + static_cast<std::ptrdiff_t>(r), pads.end());
    const std::string autoPad = c.n.attrString("auto_pad", "NOTSET");
    w.out.resize(r);
    for (std::size_t i = 0; i < r; ++i) {
        if (w.s[i] < 1 || w.d[i] < 1 || w.k[i] < 1) fail("strides, dilations and kernel extents must be >= 1");
        const std::int64_t span = (w.k[i] - 1) * w.d[i] + 1;
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            w.out[i] = (in[i] + w.s[i] - 1) / w.s[i];
            const std::int64_t total = std::max<std::int64_t>(0, (w.out[i] - 1) * w.s[i] + span - in[i]);
            w.pb[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
            w.pe[i] = total - w.pb[i];
            continue;
        }
        if (autoPad == "VALID") w.pb[i] = w.pe[i] = 0;
        else if (autoPad != "NOTSET") fail("unknown auto_pad '" + autoPad + "'");
        const std::int64_t avail = in[i] + w.pb[i] + w.pe[i] - span;
        if (avail < 0) fail("the window (extent " + std::to_string(span) + ") is larger than the padded input");
        w.out[i] = (ceilMode ? (avail + w.s[i] - 1) / w.s[i] : avail / w.s[i]) + 1;
        // With ceil_mode a window that would start in the end padding is dropped (ONNX, PyTorch).
        if (ceilMode && (w.out[i] - 1) * w.s[i] >= in[i] + w.pb[i]) --w.out[i];
    }
    return w;
}

/// Calls f(outFlat, base) for every output position; base[i] = o_i * s_i - pb_i.
template <typename F>
void forEachWindow(const Window& w, F&& f) {
    const std::size_t r = w.out.size();
    const std::int64_t total = product(w.out, 0, r);
    Dims o(r, 0), base(r);
    for (std::size_t i = 0; i < r; ++i) base[i] = -w.pb[i];
    for (std::int64_t flat = 0; flat < total; ++flat) {
        f(flat, base);
        for (std::size_t i = r; i-- > 0;) {
            ++o[i];
            base[i] += w.s[i];
            if (o[i] < w.out[i]) break;
            o[i] = 0;
            base[i] = -w.pb[i];
        }
    }
}

/// Per kernel element its per-dimension offsets (k_i * d_i), flattened [kernelElems][rank].
inline Dims kernelOffsets(const Window& w) {
    const std::size_t r = w.k.size();
    const std::int64_t total = product(w.k, 0, r);
    Dims offs(static_cast<std::size_t>(total) * r);
    Dims k(r, 0);
    for (std::int64_t e = 0; e < total; ++e) {
        for (std::size_t i = 0; i < r; ++i) offs[e * r + i] = k[i] * w.d[i];
        for (std::size_t i = r; i-- > 0;) {
            if (++k[i] < w.k[i]) break;
            k[i] = 0;
        }
    }
    return offs;
}

/// Flat offset of base + koff in a plane of extents `in`, or -1 when outside.
inline std::int64_t windowOffset(const Dims& base, const std::int64_t* koff, const Dims& in) {
    std::int64_t off = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::int64_t p = base[i] + koff[i];
        if (p < 0 || p >= in[i]) return -1;
        off = off * in[i] + p;
    }
    return off;
}


inline BufPtr fromTensorData(const ir::TensorData& t) {
    auto b = std::make_shared<Buf>();
    b->dtype = t.dtype;
    b->dims = t.dims;
    b->v = t.toDoubles();
    return b;
}

/// ONNX TensorProto.DataType code -> DType; Undefined for codes without one.
inline DType onnxCodeToDType(std::int64_t code) {
    switch (code) {
    case 1: return DType::F32;
    case 2: return DType::U8;
    case 3: return DType::I8;
    case 4: return DType::U16;
    case 5: return DType::I16;
    case 6: return DType::I32;
    case 7: return DType::I64;
    case 9: return DType::Bool;
    case 10: return DType::F16;
    case 11: return DType::F64;
    case 12: return DType::U32;
    case 13: return DType::U64;
    case 16: return DType::BF16;
    default: return DType::Undefined;
    }
}

/// Conv and MatMul of reference_interpreter.cpp on the inputs of `c` (for the integer variants).
BufPtr convOp(Ctx& c);
BufPtr matmulOp(Ctx& c);

/// Ops implemented in reference_ops_more.cpp; returns false when `c.n.opType` is not one of them.
bool evalMoreOps(Ctx& c, std::vector<BufPtr>& outs);

/// Runs subgraph `body` (an attribute of c.n named `label`) on `inputs`, given in
/// body.runtimeInputs() order; values the body does not define are looked up by name in c.scope.
/// Returns body.outputs() in order. Errors inside the body become an EvalError of c.n whose
/// message names the subgraph and the inner node; cancellation propagates. Defined in
/// reference_interpreter.cpp.
std::vector<BufPtr> runSubgraph(Ctx& c, const ir::Graph& body, const std::string& label,
                                const std::vector<BufPtr>& inputs);

/// If, Loop and Scan (reference_control_flow.cpp); returns false for any other op.
bool evalControlFlow(Ctx& c, std::vector<BufPtr>& outs);

}  // namespace tessera::eval::refimpl
