// Elementwise operators: unary math/activations, numpy-broadcasting binary and variadic ops,
// comparisons, Where, Clip, Cast, Identity, Dropout. All injective (Hidet): each output element
// depends on the input elements at the same (broadcast) index.
//
// FLOP formulas (per output element, "N" = number of output elements):
//   Add, Sub, Mul, Div, Pow, Mod, Max, Min, comparisons, logic ops: 1*N
//   Sum, Mean, Max, Min with k inputs: (k-1)*N (Mean adds one division: k*N)
//   Where: 1*N (a select)        PRelu, LeakyRelu: 2*N (compare + multiply)
//   Relu, Abs, Neg, Floor, Ceil, Not: 1*N
//   Exp, Log, Sqrt, Erf, Tanh, Sigmoid, Sin, Cos, Tan, Sinh, Cosh, Reciprocal, Softplus: 1*N
//     (transcendental = 1)
//   Round, Sign, ThresholdedRelu (one compare-select): 1*N
//   IsNaN, IsInf: 1*N (one classification per element; output bool)
//   Softsign: 3*N (abs, add, divide)     Mish: 3*N (x * tanh(softplus(x)): softplus, tanh, mul)
//   Shrink: 3*N (two comparisons, one add or subtract)
//   Celu: 4*N (Elu's 3 plus the x/alpha divide)
//   Clip: 2*N (one comparison against each bound)
//   HardSigmoid: 3*N (mul, add, clamp)   HardSwish: 4*N (x*clamp(x/6+1/2, 0, 1): mul, add, clamp, mul)
//   Elu, Selu: 3*N                       Gelu: 5*N (x/sqrt2, erf, +1, *x, *0.5; tanh form counted the same)
//   Identity, Dropout (inference), Cast, CastLike: 0 (data movement / conversion)
// Source: ONNX operator specs (https://onnx.ai/onnx/operators/).

#include <algorithm>

#include "core/ir/ops/op_helpers.h"

namespace tessera::ir::ops {

namespace {

FlopFn perElement(std::int64_t k) {
    return [k](const InferContext&, const std::vector<TensorType>& outs) -> std::optional<std::int64_t> {
        if (outs.empty()) return std::nullopt;
        return product({numel(outs[0]), k});
    };
}

FlopFn zeroFlops() {
    return [](const InferContext&, const std::vector<TensorType>&) -> std::optional<std::int64_t> { return 0; };
}

InferResult sameAsInput0(const InferContext& c) {
    if (!hasInput(c, 0)) return fail("input 0 is missing");
    return single(inputType(c, 0));
}

/// Broadcast of every present input; dtype from input `dtypeFrom` unless `outDtype` is set.
InferResult broadcastInputs(const InferContext& c, std::size_t first, std::size_t dtypeFrom,
                            std::optional<DType> outDtype) {
    std::vector<Shape> shapes;
    for (std::size_t i = first; i < c.node.inputs.size(); ++i) {
        if (!hasInput(c, i)) return fail("input " + std::to_string(i) + " is missing");
        shapes.push_back(inputType(c, i).shape);
    }
    if (shapes.empty()) return fail("no inputs");
    std::string error;
    auto s = broadcastShapes(shapes, error);
    if (!s) return fail(error);
    DType dt = outDtype ? *outDtype : inputType(c, dtypeFrom).dtype;
    return single(makeType(dt, std::move(*s)));
}

OpSchema base(std::string op, OpCategory cat, int minIn, int maxIn, std::string summary) {
    OpSchema s;
    s.opType = std::move(op);
    s.category = cat;
    s.minInputs = minIn;
    s.maxInputs = maxIn;
    s.injective = true;
    s.summary = std::move(summary);
    return s;
}

void unary(std::vector<OpSchema>& out, const char* op, std::int64_t flopsPerElem, std::vector<AttrSchema> attrs,
           const char* summary) {
    OpSchema s = base(op, OpCategory::Elementwise, 1, 1, summary);
    s.attributes = std::move(attrs);
    s.inferShapes = sameAsInput0;
    s.flops = perElement(flopsPerElem);
    out.push_back(std::move(s));
}

/// Unary op whose output has the input's shape and the fixed element type `outDtype` (IsNaN, IsInf).
void unaryTo(std::vector<OpSchema>& out, const char* op, DType outDtype, std::int64_t flopsPerElem,
             std::vector<AttrSchema> attrs, const char* summary) {
    OpSchema s = base(op, OpCategory::Elementwise, 1, 1, summary);
    s.attributes = std::move(attrs);
    s.inferShapes = [outDtype](const InferContext& c) -> InferResult {
        if (!hasInput(c, 0)) return fail("input 0 is missing");
        return single(makeType(outDtype, inputType(c, 0).shape));
    };
    s.flops = perElement(flopsPerElem);
    out.push_back(std::move(s));
}

void binary(std::vector<OpSchema>& out, const char* op, std::optional<DType> outDtype, std::vector<AttrSchema> attrs,
            const char* summary) {
    OpSchema s = base(op, OpCategory::Elementwise, 2, 2, summary);
    s.attributes = std::move(attrs);
    s.inferShapes = [outDtype](const InferContext& c) { return broadcastInputs(c, 0, 0, outDtype); };
    s.flops = perElement(1);
    out.push_back(std::move(s));
}

void variadic(std::vector<OpSchema>& out, const char* op, bool mean, const char* summary) {
    OpSchema s = base(op, OpCategory::Elementwise, 1, -1, summary);
    s.inferShapes = [](const InferContext& c) { return broadcastInputs(c, 0, 0, std::nullopt); };
    s.flops = [mean](const InferContext& c, const std::vector<TensorType>& outs) -> std::optional<std::int64_t> {
        if (outs.empty()) return std::nullopt;
        const auto k = static_cast<std::int64_t>(c.node.inputs.size());
        return product({numel(outs[0]), mean ? k : std::max<std::int64_t>(k - 1, 0)});
    };
    out.push_back(std::move(s));
}

}  // namespace

void registerElementwiseOps(std::vector<OpSchema>& out) {
    using A = AttrType;
    unary(out, "Relu", 1, {}, "max(x, 0)");
    unary(out, "Sigmoid", 1, {}, "1 / (1 + exp(-x))");
    unary(out, "Tanh", 1, {}, "hyperbolic tangent");
    unary(out, "Erf", 1, {}, "error function");
    unary(out, "Exp", 1, {}, "e^x");
    unary(out, "Log", 1, {}, "natural logarithm");
    unary(out, "Sqrt", 1, {}, "square root");
    unary(out, "Reciprocal", 1, {}, "1 / x");
    unary(out, "Neg", 1, {}, "-x");
    unary(out, "Abs", 1, {}, "|x|");
    unary(out, "Floor", 1, {}, "floor(x)");
    unary(out, "Ceil", 1, {}, "ceil(x)");
    unary(out, "Sin", 1, {}, "sine");
    unary(out, "Cos", 1, {}, "cosine");
    unary(out, "Softplus", 1, {}, "log(1 + exp(x))");
    unary(out, "Tan", 1, {}, "tangent");
    unary(out, "Sinh", 1, {}, "hyperbolic sine");
    unary(out, "Cosh", 1, {}, "hyperbolic cosine");
    unary(out, "Round", 1, {}, "round to nearest, ties to even");
    unary(out, "Sign", 1, {}, "-1, 0 or 1 by the sign of x");
    unary(out, "Softsign", 3, {}, "x / (1 + |x|)");
    unary(out, "Mish", 3, {}, "x * tanh(softplus(x))");
    unary(out, "ThresholdedRelu", 1, {attrDefault("alpha", Attribute::ofFloat(1.0))}, "x > alpha ? x : 0");
    unary(out, "Shrink", 3,
          {attrDefault("bias", Attribute::ofFloat(0.0)), attrDefault("lambd", Attribute::ofFloat(0.5))},
          "x < -lambd ? x + bias : x > lambd ? x - bias : 0");
    unary(out, "Celu", 4, {attrDefault("alpha", Attribute::ofFloat(1.0))},
          "max(0, x) + min(0, alpha * (exp(x / alpha) - 1))");
    unaryTo(out, "IsNaN", DType::Bool, 1, {}, "x is NaN (bool)");
    unaryTo(out, "IsInf", DType::Bool, 1,
            {attrDefault("detect_negative", Attribute::ofInt(1)), attrDefault("detect_positive", Attribute::ofInt(1))},
            "x is +inf / -inf, as selected by detect_positive / detect_negative (bool)");
    unary(out, "Not", 1, {}, "logical not");
    unary(out, "Gelu", 5, {attrDefault("approximate", Attribute::ofString("none"))},
          "x * 0.5 * (1 + erf(x / sqrt(2))) (opset 20; tanh approximation optional)");
    unary(out, "HardSwish", 4, {}, "x * max(0, min(1, x/6 + 1/2))");
    unary(out, "HardSigmoid", 3,
          {attrDefault("alpha", Attribute::ofFloat(0.2)), attrDefault("beta", Attribute::ofFloat(0.5))},
          "max(0, min(1, alpha*x + beta))");
    unary(out, "LeakyRelu", 2, {attrDefault("alpha", Attribute::ofFloat(0.01))}, "x < 0 ? alpha*x : x");
    unary(out, "Elu", 3, {attrDefault("alpha", Attribute::ofFloat(1.0))}, "x < 0 ? alpha*(exp(x)-1) : x");
    unary(out, "Selu", 3,
          {attr("alpha", A::Float), attr("gamma", A::Float)}, "gamma * (x < 0 ? alpha*(exp(x)-1) : x)");

    binary(out, "Add", std::nullopt, {}, "a + b (numpy broadcasting)");
    binary(out, "Sub", std::nullopt, {}, "a - b (numpy broadcasting)");
    binary(out, "Mul", std::nullopt, {}, "a * b (numpy broadcasting)");
    binary(out, "Div", std::nullopt, {}, "a / b (numpy broadcasting)");
    binary(out, "Pow", std::nullopt, {}, "a ^ b (numpy broadcasting; result has a's dtype)");
    binary(out, "Mod", std::nullopt, {attrDefault("fmod", Attribute::ofInt(0))}, "a mod b (numpy broadcasting)");
    binary(out, "PRelu", std::nullopt, {}, "x < 0 ? slope*x : x (slope broadcast to x)");
    out.back().flops = perElement(2);
    binary(out, "Equal", DType::Bool, {}, "a == b");
    binary(out, "Less", DType::Bool, {}, "a < b");
    binary(out, "Greater", DType::Bool, {}, "a > b");
    binary(out, "LessOrEqual", DType::Bool, {}, "a <= b");
    binary(out, "GreaterOrEqual", DType::Bool, {}, "a >= b");
    binary(out, "And", DType::Bool, {}, "logical and");
    binary(out, "Or", DType::Bool, {}, "logical or");
    binary(out, "Xor", DType::Bool, {}, "logical xor");

    variadic(out, "Max", false, "elementwise maximum of all inputs (broadcasting)");
    variadic(out, "Min", false, "elementwise minimum of all inputs (broadcasting)");
    variadic(out, "Sum", false, "elementwise sum of all inputs (broadcasting)");
    variadic(out, "Mean", true, "elementwise mean of all inputs (broadcasting)");

    {
        OpSchema s = base("Where", OpCategory::Elementwise, 3, 3, "cond ? x : y (broadcasting)");
        s.inferShapes = [](const InferContext& c) { return broadcastInputs(c, 0, 1, std::nullopt); };
        s.flops = perElement(1);
        out.push_back(std::move(s));
    }
    {
        // Clip: bounds are attributes up to opset 6 and optional inputs 1 and 2 from opset 11.
        OpSchema s = base("Clip", OpCategory::Elementwise, 1, 3, "min(max(x, lo), hi)");
        s.attributes = {attr("min", A::Float), attr("max", A::Float)};
        s.inferShapes = [](const InferContext& c) -> InferResult {
            if (!hasInput(c, 0)) return fail("input 0 is missing");
            for (std::size_t i = 1; i < 3; ++i) {
                if (!hasInput(c, i)) continue;
                const Shape& b = inputType(c, i).shape;
                const bool scalarLike = b.rankKnown() && (b.rank() == 0 || (b.rank() == 1 && b[0].isKnown() && b[0].value == 1));
                if (b.rankKnown() && !scalarLike)
                    return fail(std::string(i == 1 ? "min" : "max") + " must be a scalar, got shape " + b.str());
            }
            return single(inputType(c, 0));
        };
        s.flops = perElement(2);
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Identity", OpCategory::DataMovement, 1, 1, "y = x");
        s.inferShapes = sameAsInput0;
        s.flops = zeroFlops();
        out.push_back(std::move(s));
    }
    {
        // Dropout: inference is the identity; optional ratio/training_mode inputs (opset 12) and
        // an optional bool mask output.
        OpSchema s = base("Dropout", OpCategory::DataMovement, 1, 3, "identity at inference; optional mask");
        s.maxOutputs = 2;
        s.attributes = {attr("ratio", A::Float), attr("seed", A::Int), attr("is_test", A::Int)};
        s.inferShapes = [](const InferContext& c) -> InferResult {
            if (!hasInput(c, 0)) return fail("input 0 is missing");
            InferResult r;
            r.outputs.push_back(inputType(c, 0));
            if (c.node.outputs.size() > 1) r.outputs.push_back(makeType(DType::Bool, inputType(c, 0).shape));
            return r;
        };
        s.flops = zeroFlops();
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("Cast", OpCategory::Elementwise, 1, 1, "element type conversion (to = TensorProto code)");
        s.attributes = {attr("to", A::Int, true), attr("saturate", A::Int)};
        s.inferShapes = [](const InferContext& c) -> InferResult {
            if (!hasInput(c, 0)) return fail("input 0 is missing");
            const Attribute* to = attrOf(c, "to", A::Int);
            if (!to) return fail("attribute 'to' is missing");
            const DType dt = dtypeFromOnnxCode(to->i);
            if (dt == DType::Undefined) return fail("unsupported Cast target type code " + std::to_string(to->i));
            return single(makeType(dt, inputType(c, 0).shape));
        };
        s.flops = zeroFlops();
        out.push_back(std::move(s));
    }
    {
        OpSchema s = base("CastLike", OpCategory::Elementwise, 2, 2, "convert to the dtype of the second input");
        s.attributes = {attr("saturate", A::Int)};
        s.inferShapes = [](const InferContext& c) -> InferResult {
            if (!hasInput(c, 0) || !hasInput(c, 1)) return fail("inputs 0 and 1 are required");
            return single(makeType(inputType(c, 1).dtype, inputType(c, 0).shape));
        };
        s.flops = zeroFlops();
        out.push_back(std::move(s));
    }
}

}  // namespace tessera::ir::ops
