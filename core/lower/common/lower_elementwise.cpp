// Lowering templates of the elementwise ops: unary math and activations, numpy-broadcasting
// binary and variadic ops, comparisons and logic, Where, Clip, Cast, Identity and Dropout.
//
// Every op becomes one loop nest over the output (the node's schedule or defaultCpuMapping) whose
// body loads each input at its broadcast index, computes in the "compute type" (the input's type;
// f32 for f16/bf16 inputs) and stores the result converted to the output type. Semantics follow
// the ONNX operator specification and core/eval/reference_interpreter.cpp: integer Div
// truncates, integer Mod (fmod=0) takes the divisor's sign, Round halves to even, Clip bounds
// absent = unbounded, Dropout is the identity with an all-true mask.

#include <cmath>
#include <limits>
#include <map>

#include "core/lower/detail/lower_fused.h"
#include "core/lower/detail/lower_templates.h"

namespace tessera::lower::detail {

namespace {

/// Type arithmetic is done in: f16/bf16 compute in f32, everything else in its own type.
DType computeTypeOf(DType t) { return t == DType::F16 || t == DType::BF16 ? DType::F32 : t; }

}  // namespace

support::Expected<LoweredKernel> lowerPointwise(const LowerContext& ctx, const std::vector<std::size_t>& slots,
                                                const PointwiseFn& fn) {
    const ir::Node& n = ctx.node;
    if (n.outputs.empty() || n.outputs[0] == ir::kNoValue) return lowerError(ctx, "the node has no output");
    auto outShape = shapeOf(ctx, n.outputs[0]);
    if (!outShape) return outShape.diagnostics();
    std::vector<std::vector<std::int64_t>> inShapes;
    LoweredKernel lk = beginKernel(ctx);
    std::vector<int> inBuf;
    for (std::size_t s : slots) {
        if (s >= n.inputs.size() || n.inputs[s] == ir::kNoValue)
            return lowerError(ctx, "input " + std::to_string(s) + " is missing");
        auto sh = shapeOf(ctx, n.inputs[s]);
        if (!sh) return sh.diagnostics();
        if (dtypeOf(ctx.g, n.inputs[s]) == DType::String || dtypeOf(ctx.g, n.inputs[s]) == DType::Undefined)
            return unsupportedForm(ctx, "input '" + ctx.g.value(n.inputs[s]).name + "' has no numeric element type");
        if (sh->size() > outShape->size())
            return lowerError(ctx, "input '" + ctx.g.value(n.inputs[s]).name + "' has a higher rank than the output");
        inShapes.push_back(*sh);
        inBuf.push_back(addInput(ctx, lk, n.inputs[s]));
    }
    std::vector<int> outBuf;
    std::vector<DType> outType;
    for (ir::ValueId o : n.outputs) {
        if (o == ir::kNoValue) {
            outBuf.push_back(-1);
            outType.push_back(DType::Undefined);
            continue;
        }
        auto sh = shapeOf(ctx, o);
        if (!sh) return sh.diagnostics();
        if (*sh != *outShape) return lowerError(ctx, "outputs of different shapes are not supported");
        const DType t = dtypeOf(ctx.g, o);
        if (t == DType::String || t == DType::Undefined)
            return unsupportedForm(ctx, "output '" + ctx.g.value(o).name + "' has no numeric element type");
        outType.push_back(t);
        outBuf.push_back(addOutput(ctx, lk, o));
    }
    auto plan = resolveMappings(ctx, *outShape, defaultCpuMapping(*outShape, ctx.options.cpuThreads));
    if (!plan) return plan.diagnostics();
    Kernel& k = lk.kernel;
    k.body = emitMappedLoops(k, *plan, *outShape, [&](const std::vector<Expr>& idx) {
        std::vector<Expr> loads;
        for (std::size_t i = 0; i < inBuf.size(); ++i)
            loads.push_back(load(inBuf[i], k.buffers[static_cast<std::size_t>(inBuf[i])].dtype,
                                 broadcastIndex(idx, inShapes[i])));
        const std::vector<Expr> values = fn(loads);
        std::vector<Stmt> stores;
        for (std::size_t o = 0; o < outBuf.size() && o < values.size(); ++o)
            if (outBuf[o] >= 0 && values[o]) stores.push_back(store(outBuf[o], idx, cast(values[o], outType[o])));
        return seq(std::move(stores));
    });
    return lk;
}

namespace {

Expr fimm(double v, DType t) { return constant(v, t); }
Expr operator==(Expr a, Expr b) { return binary(BinaryOp::Eq, std::move(a), std::move(b)); }
Expr operator!=(Expr a, Expr b) { return binary(BinaryOp::Ne, std::move(a), std::move(b)); }


/// max(lo, min(hi, x)) in the type of x.
Expr clamp01(const Expr& x) {
    const DType d = x.dtype();
    return maxOf(minOf(x, fimm(1.0, d)), fimm(0.0, d));
}

Expr exp(Expr x) { return call(Intrinsic::Exp, {std::move(x)}); }

/// Round half to even with floor only (independent of the back end's rounding function).
Expr roundHalfEven(const Expr& x) {
    const DType t = x.dtype();
    Expr r = call(Intrinsic::Floor, {x});
    Expr d = x - r;
    Expr half = fimm(0.5, t);
    Expr rIsEven = (r - call(Intrinsic::Floor, {r * fimm(0.5, t)}) * fimm(2.0, t)) == fimm(0.0, t);
    return select(d > half, r + fimm(1.0, t), select(d < half, r, select(rIsEven, r, r + fimm(1.0, t))));
}

/// The scalar body of one elementwise node: which input slots it loads (in the order the body
/// receives them) and the body itself. Shared by the loop-nest templates (lowerPointwise) and by
/// fused lowering (elementwiseExpr), so both compute exactly the same expression.
struct PointwiseBody {
    std::vector<std::size_t> slots;
    PointwiseFn fn;
};
/// Builds a node's body; errors (at ctx.where) for forms that are not generated.
using BodyFn = std::function<support::Expected<PointwiseBody>(const LowerContext&)>;
using BodyTable = std::map<std::string, BodyFn, std::less<>>;

using UnaryFn = std::function<Expr(const Expr& x, const ir::Node& n)>;

/// A unary op: input 0 converted to its compute type, one output.
void addUnary(BodyTable& t, const char* op, UnaryFn f) {
    t[op] = [f](const LowerContext& ctx) -> support::Expected<PointwiseBody> {
        const DType ct = computeTypeOf(dtypeOf(ctx.g, ctx.node.inputs.empty() ? ir::kNoValue : ctx.node.inputs[0]));
        const ir::Node* n = &ctx.node;
        return PointwiseBody{{0}, [f, ct, n](const std::vector<Expr>& a) {
                                 return std::vector<Expr>{f(cast(a[0], ct), *n)};
                             }};
    };
}

using BinaryFn = std::function<Expr(const Expr& a, const Expr& b, const ir::Node& n)>;

/// A binary broadcasting op computing in the compute type of input 0 (both operands converted).
void addBinary(BodyTable& t, const char* op, BinaryFn f) {
    t[op] = [f](const LowerContext& ctx) -> support::Expected<PointwiseBody> {
        const DType ct = computeTypeOf(dtypeOf(ctx.g, ctx.node.inputs.empty() ? ir::kNoValue : ctx.node.inputs[0]));
        const ir::Node* n = &ctx.node;
        return PointwiseBody{{0, 1}, [f, ct, n](const std::vector<Expr>& a) {
                                 return std::vector<Expr>{f(cast(a[0], ct), cast(a[1], ct), *n)};
                             }};
    };
}

/// A variadic broadcasting op folding all inputs with `f`; Mean divides by the count.
void addVariadic(BodyTable& t, const char* op, BinaryFn f, bool mean) {
    t[op] = [f, mean](const LowerContext& ctx) -> support::Expected<PointwiseBody> {
        const ir::Node& n = ctx.node;
        std::vector<std::size_t> slots;
        for (std::size_t i = 0; i < n.inputs.size(); ++i)
            if (n.inputs[i] != ir::kNoValue) slots.push_back(i);
        if (slots.empty()) return lowerError(ctx, n.opType + " needs at least one input");
        const DType ct = computeTypeOf(dtypeOf(ctx.g, n.inputs[slots[0]]));
        const ir::Node* np = &n;
        return PointwiseBody{slots, [f, mean, ct, np](const std::vector<Expr>& a) {
                                 Expr r = cast(a[0], ct);
                                 for (std::size_t i = 1; i < a.size(); ++i) r = f(r, cast(a[i], ct), *np);
                                 if (mean) r = r / fimm(static_cast<double>(a.size()), ct);
                                 return std::vector<Expr>{r};
                             }};
    };
}

support::Expected<PointwiseBody> clipBody(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    const DType ct = computeTypeOf(dtypeOf(ctx.g, n.inputs.empty() ? ir::kNoValue : n.inputs[0]));
    // Bounds: attributes (opset < 11) or optional scalar inputs 1 and 2, constant (folded) or
    // runtime (kernel parameters); absent = unbounded.
    std::optional<double> lo, hi;
    if (n.hasAttr("min")) lo = n.attrFloat("min", 0.0);
    if (n.hasAttr("max")) hi = n.attrFloat("max", 0.0);
    std::vector<std::size_t> slots{0};
    int loSlot = -1, hiSlot = -1;
    for (std::size_t i = 1; i < 3 && i < n.inputs.size(); ++i) {
        if (n.inputs[i] == ir::kNoValue) continue;
        auto c = constDoubles(ctx.g, n.inputs[i]);
        if (c && c->size() != 1)
            return lowerError(ctx, std::string(i == 1 ? "min" : "max") + " must be a scalar");
        if (c) {
            (i == 1 ? lo : hi) = (*c)[0];
        } else {
            (i == 1 ? loSlot : hiSlot) = static_cast<int>(slots.size());
            slots.push_back(i);
        }
    }
    return PointwiseBody{slots, [ct, lo, hi, loSlot, hiSlot](const std::vector<Expr>& a) {
        Expr x = cast(a[0], ct);
        if (loSlot >= 0) x = maxOf(x, cast(a[static_cast<std::size_t>(loSlot)], ct));
        else if (lo) x = maxOf(x, fimm(*lo, ct));
        if (hiSlot >= 0) x = minOf(x, cast(a[static_cast<std::size_t>(hiSlot)], ct));
        else if (hi) x = minOf(x, fimm(*hi, ct));
        return std::vector<Expr>{x};
    }};
}

support::Expected<PointwiseBody> dropoutBody(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    if (n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue) {
        auto mode = constInts(ctx.g, n.inputs[2]);
        if (!mode)
            return unsupportedForm(ctx, "training_mode must be a constant (only inference Dropout is generated)");
        if (!mode->empty() && (*mode)[0] != 0)
            return unsupportedForm(ctx, "training_mode is true: only inference Dropout (the identity) is generated");
    }
    return PointwiseBody{{0}, [](const std::vector<Expr>& a) {
        return std::vector<Expr>{a[0], boolImm(true)};
    }};
}

support::Expected<PointwiseBody> convertBody(const LowerContext& ctx) {
    // Cast / CastLike: the output value's type is the target; the store converts.
    const ir::Node& n = ctx.node;
    if (!n.outputs.empty() && n.outputs[0] != ir::kNoValue && dtypeOf(ctx.g, n.outputs[0]) == DType::String)
        return unsupportedForm(ctx, "Cast to string is not supported by the code generators");
    return PointwiseBody{{0}, [](const std::vector<Expr>& a) {
        // Float -> bool is x != 0 (C conversion); everything else the C conversion too.
        return std::vector<Expr>{a[0]};
    }};
}

support::Expected<PointwiseBody> whereBody(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    const DType ct = n.inputs.size() > 1 ? dtypeOf(ctx.g, n.inputs[1]) : DType::Undefined;
    return PointwiseBody{{0, 1, 2}, [ct](const std::vector<Expr>& a) {
        Expr c = a[0].dtype() == DType::Bool ? a[0] : (a[0] != constant(0, a[0].dtype()));
        return std::vector<Expr>{select(c, cast(a[1], ct), cast(a[2], ct))};
    }};
}

support::Expected<PointwiseBody> modBody(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    const DType ct = computeTypeOf(dtypeOf(ctx.g, n.inputs.empty() ? ir::kNoValue : n.inputs[0]));
    const bool fmod = n.attrInt("fmod", 0) != 0;
    return PointwiseBody{{0, 1}, [ct, fmod](const std::vector<Expr>& args) {
        Expr a = cast(args[0], ct), b = cast(args[1], ct);
        if (ir::isInteger(ct)) return std::vector<Expr>{fmod ? a % b : binary(BinaryOp::FloorMod, a, b)};
        if (fmod) return std::vector<Expr>{a % b};  // float Mod is C fmod
        // Python-style remainder for floats: the divisor's sign.
        return std::vector<Expr>{a - call(Intrinsic::Floor, {a / b}) * b};
    }};
}

support::Expected<PointwiseBody> powBody(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    const DType outT = n.outputs.empty() ? DType::Undefined : dtypeOf(ctx.g, n.outputs[0]);
    const DType ct = ir::isFloatingPoint(outT) ? computeTypeOf(outT) : DType::F64;
    return PointwiseBody{{0, 1}, [ct](const std::vector<Expr>& a) {
        return std::vector<Expr>{call(Intrinsic::Pow, {cast(a[0], ct), cast(a[1], ct)})};
    }};
}

support::Expected<PointwiseBody> divBody(const LowerContext& ctx) {
    const DType ct = computeTypeOf(dtypeOf(ctx.g, ctx.node.inputs.empty() ? ir::kNoValue : ctx.node.inputs[0]));
    // Kernel IR Div truncates on integers, as ONNX Div does.
    return PointwiseBody{{0, 1}, [ct](const std::vector<Expr>& a) {
        return std::vector<Expr>{cast(a[0], ct) / cast(a[1], ct)};
    }};
}

void registerAll(BodyTable& t) {
    using N = ir::Node;
    addUnary(t, "Relu", [](const Expr& x, const N&) { return maxOf(x, fimm(0, x.dtype())); });
    addUnary(t, "LeakyRelu", [](const Expr& x, const N& n) {
        return select(x >= fimm(0, x.dtype()), x, x * fimm(n.attrFloat("alpha", 0.01), x.dtype()));
    });
    addUnary(t, "ThresholdedRelu", [](const Expr& x, const N& n) {
        return select(x > fimm(n.attrFloat("alpha", 1.0), x.dtype()), x, fimm(0, x.dtype()));
    });
    addUnary(t, "Sigmoid", [](const Expr& x, const N&) { return call(Intrinsic::Sigmoid, {x}); });
    addUnary(t, "HardSigmoid", [](const Expr& x, const N& n) {
        const DType d = x.dtype();
        return clamp01(x * fimm(n.attrFloat("alpha", 0.2), d) + fimm(n.attrFloat("beta", 0.5), d));
    });
    addUnary(t, "HardSwish", [](const Expr& x, const N&) {
        const DType d = x.dtype();
        return x * clamp01(x / fimm(6.0, d) + fimm(0.5, d));
    });
    addUnary(t, "Tanh", [](const Expr& x, const N&) { return call(Intrinsic::Tanh, {x}); });
    addUnary(t, "Exp", [](const Expr& x, const N&) { return exp(x); });
    addUnary(t, "Log", [](const Expr& x, const N&) { return call(Intrinsic::Log, {x}); });
    addUnary(t, "Sqrt", [](const Expr& x, const N&) { return call(Intrinsic::Sqrt, {x}); });
    addUnary(t, "Abs", [](const Expr& x, const N&) {
        return ir::isFloatingPoint(x.dtype()) ? call(Intrinsic::Abs, {x})
                                              : select(x < constant(0, x.dtype()), unary(UnaryOp::Neg, x), x);
    });
    addUnary(t, "Neg", [](const Expr& x, const N&) { return unary(UnaryOp::Neg, x); });
    addUnary(t, "Reciprocal", [](const Expr& x, const N&) { return fimm(1.0, x.dtype()) / x; });
    addUnary(t, "Floor", [](const Expr& x, const N&) { return call(Intrinsic::Floor, {x}); });
    addUnary(t, "Ceil", [](const Expr& x, const N&) { return call(Intrinsic::Ceil, {x}); });
    addUnary(t, "Round", [](const Expr& x, const N&) { return roundHalfEven(x); });
    addUnary(t, "Erf", [](const Expr& x, const N&) { return call(Intrinsic::Erf, {x}); });
    addUnary(t, "Sin", [](const Expr& x, const N&) { return call(Intrinsic::Sin, {x}); });
    addUnary(t, "Cos", [](const Expr& x, const N&) { return call(Intrinsic::Cos, {x}); });
    addUnary(t, "Tan", [](const Expr& x, const N&) { return call(Intrinsic::Tan, {x}); });
    // sinh/cosh through e^(|x| - ln 2) = e^|x| / 2: finite up to the largest result the type holds
    // (f32 cosh(89) = 2.2e38; e^89 itself overflows).
    addUnary(t, "Sinh", [](const Expr& x, const N&) {
        const DType d = x.dtype();
        const Expr ax = call(Intrinsic::Abs, {x});
        const Expr mag = exp(ax - fimm(0.69314718055994530942, d)) - exp(unary(UnaryOp::Neg, ax)) * fimm(0.5, d);
        return select(x < fimm(0, d), unary(UnaryOp::Neg, mag), mag);
    });
    addUnary(t, "Cosh", [](const Expr& x, const N&) {
        const DType d = x.dtype();
        const Expr ax = call(Intrinsic::Abs, {x});
        return exp(ax - fimm(0.69314718055994530942, d)) + exp(unary(UnaryOp::Neg, ax)) * fimm(0.5, d);
    });
    addUnary(t, "Softplus", [](const Expr& x, const N&) {
        // log(1 + e^x) = max(x, 0) + log(1 + e^-|x|): no overflow for large x.
        const DType d = x.dtype();
        return maxOf(x, fimm(0, d)) +
               call(Intrinsic::Log, {fimm(1.0, d) + exp(unary(UnaryOp::Neg, call(Intrinsic::Abs, {x})))});
    });
    addUnary(t, "Softsign", [](const Expr& x, const N&) {
        return x / (fimm(1.0, x.dtype()) + call(Intrinsic::Abs, {x}));
    });
    addUnary(t, "Elu", [](const Expr& x, const N& n) {
        const DType d = x.dtype();
        return select(x >= fimm(0, d), x, fimm(n.attrFloat("alpha", 1.0), d) * (exp(x) - fimm(1.0, d)));
    });
    addUnary(t, "Celu", [](const Expr& x, const N& n) {
        const DType d = x.dtype();
        const double alpha = n.attrFloat("alpha", 1.0);
        return maxOf(x, fimm(0, d)) +
               minOf(fimm(0, d), fimm(alpha, d) * (exp(x / fimm(alpha, d)) - fimm(1.0, d)));
    });
    addUnary(t, "Selu", [](const Expr& x, const N& n) {
        const DType d = x.dtype();
        const double alpha = n.attrFloat("alpha", 1.67326319217681884765625);
        const double gamma = n.attrFloat("gamma", 1.05070102214813232421875);
        return fimm(gamma, d) * select(x > fimm(0, d), x, fimm(alpha, d) * (exp(x) - fimm(1.0, d)));
    });
    addUnary(t, "Mish", [](const Expr& x, const N&) {
        const DType d = x.dtype();
        Expr sp = maxOf(x, fimm(0, d)) +
                  call(Intrinsic::Log, {fimm(1.0, d) + exp(unary(UnaryOp::Neg, call(Intrinsic::Abs, {x})))});
        return x * call(Intrinsic::Tanh, {sp});
    });
    addUnary(t, "Shrink", [](const Expr& x, const N& n) {
        const DType d = x.dtype();
        const double lambd = n.attrFloat("lambd", 0.5), bias = n.attrFloat("bias", 0.0);
        return select(x < fimm(-lambd, d), x + fimm(bias, d),
                      select(x > fimm(lambd, d), x - fimm(bias, d), fimm(0, d)));
    });
    addUnary(t, "Gelu", [](const Expr& x, const N& n) {
        const DType d = x.dtype();
        if (n.attrString("approximate", "none") == "tanh") {
            const double k = std::sqrt(2.0 / 3.14159265358979323846);
            Expr inner = fimm(k, d) * (x + fimm(0.044715, d) * x * x * x);
            return fimm(0.5, d) * x * (fimm(1.0, d) + call(Intrinsic::Tanh, {inner}));
        }
        return fimm(0.5, d) * x * (fimm(1.0, d) + call(Intrinsic::Erf, {x * fimm(1.0 / std::sqrt(2.0), d)}));
    });
    addUnary(t, "Sign", [](const Expr& x, const N&) {
        const DType d = x.dtype();
        // NaN stays NaN (x != x), as in NumPy and ONNX Runtime.
        const Expr zeroOrNan = ir::isFloatingPoint(d) ? select(binary(BinaryOp::Ne, x, x), x, constant(0, d)) : constant(0, d);
        return select(x > constant(0, d), constant(1, d), select(x < constant(0, d), constant(-1, d), zeroOrNan));
    });
    addUnary(t, "Not", [](const Expr& x, const N&) { return unary(UnaryOp::Not, x); });
    addUnary(t, "IsNaN", [](const Expr& x, const N&) { return x != x; });
    addUnary(t, "IsInf", [](const Expr& x, const N& n) {
        const DType d = x.dtype();
        const bool neg = n.attrInt("detect_negative", 1) != 0, pos = n.attrInt("detect_positive", 1) != 0;
        Expr r = boolImm(false);
        const double inf = std::numeric_limits<double>::infinity();
        if (pos) r = x == fimm(inf, d);
        if (neg) r = pos ? (r || (x == fimm(-inf, d))) : (x == fimm(-inf, d));
        return r;
    });
    addUnary(t, "Identity", [](const Expr& x, const N&) { return x; });
    t["Clip"] = clipBody;
    t["Dropout"] = dropoutBody;
    t["Cast"] = convertBody;
    // CastLike: input 1 only supplies the type; it is not read.
    t["CastLike"] = convertBody;

    addBinary(t, "Add", [](const Expr& a, const Expr& b, const N&) { return a + b; });
    addBinary(t, "Sub", [](const Expr& a, const Expr& b, const N&) { return a - b; });
    addBinary(t, "Mul", [](const Expr& a, const Expr& b, const N&) { return a * b; });
    t["Div"] = divBody;
    t["Pow"] = powBody;
    t["Mod"] = modBody;
    addBinary(t, "PRelu", [](const Expr& x, const Expr& s, const N&) {
        return select(x < constant(0, x.dtype()), s * x, x);
    });
    addBinary(t, "Equal", [](const Expr& a, const Expr& b, const N&) { return a == b; });
    addBinary(t, "Less", [](const Expr& a, const Expr& b, const N&) { return a < b; });
    addBinary(t, "Greater", [](const Expr& a, const Expr& b, const N&) { return a > b; });
    addBinary(t, "LessOrEqual", [](const Expr& a, const Expr& b, const N&) { return a <= b; });
    addBinary(t, "GreaterOrEqual", [](const Expr& a, const Expr& b, const N&) { return a >= b; });
    addBinary(t, "And", [](const Expr& a, const Expr& b, const N&) { return a && b; });
    addBinary(t, "Or", [](const Expr& a, const Expr& b, const N&) { return a || b; });
    addBinary(t, "Xor", [](const Expr& a, const Expr& b, const N&) { return a != b; });
    addVariadic(t, "Sum", [](const Expr& a, const Expr& b, const N&) { return a + b; }, false);
    addVariadic(t, "Mean", [](const Expr& a, const Expr& b, const N&) { return a + b; }, true);
    addVariadic(t, "Min", [](const Expr& a, const Expr& b, const N&) { return minOf(a, b); }, false);
    addVariadic(t, "Max", [](const Expr& a, const Expr& b, const N&) { return maxOf(a, b); }, false);
    t["Where"] = whereBody;
}

/// Op type -> body builder, built once (thread-safe static initialisation), read-only after.
const BodyTable& bodyTable() {
    static const BodyTable table = [] {
        BodyTable t;
        registerAll(t);
        return t;
    }();
    return table;
}

}  // namespace

void registerElementwiseTemplates(TemplateTable& table) {
    for (const auto& [op, bodyFn] : bodyTable()) {
        table[op] = [bodyFn](const LowerContext& ctx) -> support::Expected<LoweredKernel> {
            auto body = bodyFn(ctx);
            if (!body) return body.diagnostics();
            return lowerPointwise(ctx, body->slots, body->fn);
        };
    }
}

bool isInlinableElementwise(const ir::Graph& g, ir::NodeId node) {
    if (node == ir::kNoNode || node < 0 || static_cast<std::size_t>(node) >= g.numNodes()) return false;
    const ir::Node& n = g.node(node);
    if (!n.domain.empty() && n.domain != "ai.onnx") return false;
    const auto it = bodyTable().find(n.opType);
    if (it == bodyTable().end()) return false;
    if (n.outputs.empty() || n.outputs[0] == ir::kNoValue) return false;
    // Only output 0 is computed by an inlined body: any other output (Dropout's mask) must be unused.
    for (std::size_t o = 1; o < n.outputs.size(); ++o) {
        const ir::ValueId v = n.outputs[o];
        if (v == ir::kNoValue) continue;
        if (!g.consumers(v).empty()) return false;
        for (ir::ValueId go : g.outputs())
            if (go == v) return false;
    }
    const DType outT = dtypeOf(g, n.outputs[0]);
    if (outT == DType::String || outT == DType::Undefined) return false;
    LowerOptions options;
    const LowerContext ctx{g, node, n, nullptr, options, "node '" + n.name + "' (" + n.opType + ")"};
    auto body = it->second(ctx);
    if (!body) return false;
    for (std::size_t s : body->slots) {
        if (s >= n.inputs.size() || n.inputs[s] == ir::kNoValue) return false;
        const DType t = dtypeOf(g, n.inputs[s]);
        if (t == DType::String || t == DType::Undefined) return false;
    }
    return true;
}

support::Expected<Expr> elementwiseExpr(const LowerContext& ctx, const std::vector<Expr>& inputs) {
    const ir::Node& n = ctx.node;
    if (!isInlinableElementwise(ctx.g, ctx.id))
        return lowerError(ctx, "'" + n.name + "' (" + n.opType + ") is not an elementwise op that can be inlined");
    auto body = bodyTable().find(n.opType)->second(ctx);
    if (!body) return body.diagnostics();
    std::vector<Expr> loads;
    for (std::size_t s : body->slots) {
        if (s >= inputs.size() || !inputs[s])
            return lowerError(ctx, "elementwiseExpr: no value given for input " + std::to_string(s) + " of '" +
                                       n.name + "'");
        loads.push_back(inputs[s]);
    }
    const std::vector<Expr> values = body->fn(loads);
    if (values.empty() || !values[0]) return lowerError(ctx, "'" + n.name + "' computes no value for output 0");
    return cast(values[0], dtypeOf(ctx.g, n.outputs[0]));
}

}  // namespace tessera::lower::detail
