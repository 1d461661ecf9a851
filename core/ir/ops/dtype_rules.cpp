// Element-type rules from the ONNX operator specs' type constraints, checked before each op's
// shape function: inputs bound to the same type parameter T must have one element type
// (Add(f16, f32) is an error, as in ONNX), and some ops only accept floating-point, numeric or
// bool inputs (Exp on i32, Relu on strings and And on f32 are errors). Undefined (not yet
// known) element types are never reported.
#include <algorithm>
#include <string>
#include <vector>

#include "core/ir/ops/op_helpers.h"

namespace tessera::ir::ops {

namespace {

enum class TypeClass { Any, Float, Numeric, Bool };

struct DtypeRule {
    std::vector<std::string> ops;
    std::vector<int> sameT;       ///< input indices bound to one T; {-1} = every input
    TypeClass firstClass = TypeClass::Any;  ///< class of the first input of sameT (or input 0)
    int classInput = -1;          ///< input checked for `firstClass` when it is not in sameT (-1: sameT's first)
};

const std::vector<DtypeRule>& rules() {
    static const std::vector<DtypeRule> kRules = {
        {{"Add", "Sub", "Mul", "Div", "Mod", "PRelu", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "MatMul"},
         {0, 1}, TypeClass::Numeric},
        {{"Equal"}, {0, 1}, TypeClass::Any},
        {{"Gemm"}, {0, 1, 2}, TypeClass::Numeric},
        {{"Max", "Min", "Sum", "Mean"}, {-1}, TypeClass::Numeric},
        {{"Concat"}, {-1}, TypeClass::Any},
        {{"And", "Or", "Xor"}, {0, 1}, TypeClass::Bool},
        {{"Not"}, {0}, TypeClass::Bool},
        {{"Where"}, {1, 2}, TypeClass::Bool, 0},
        {{"Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Sin", "Cos", "Softplus", "Gelu", "HardSwish",
          "HardSigmoid", "Elu", "Selu", "Floor", "Ceil", "Softmax", "LogSoftmax", "Tan", "Sinh", "Cosh", "Round",
          "Softsign", "Mish", "ThresholdedRelu", "Celu", "IsNaN", "IsInf"},
         {0}, TypeClass::Float},
        {{"Relu", "LeakyRelu", "Neg", "Abs", "Sign", "Shrink"}, {0}, TypeClass::Numeric},
        {{"Range"}, {0, 1, 2}, TypeClass::Numeric},
    };
    return kRules;
}

bool inClass(DType t, TypeClass c) {
    switch (c) {
        case TypeClass::Any: return true;
        case TypeClass::Float: return isFloatingPoint(t);
        case TypeClass::Numeric: return isFloatingPoint(t) || isInteger(t);
        case TypeClass::Bool: return t == DType::Bool;
    }
    return true;
}

const char* className(TypeClass c) {
    switch (c) {
        case TypeClass::Any: return "any";
        case TypeClass::Float: return "a floating-point";
        case TypeClass::Numeric: return "a numeric";
        case TypeClass::Bool: return "a bool";
    }
    return "any";
}

std::string describe(const InferContext& c, std::size_t i) {
    std::string s = "input " + std::to_string(i);
    const ValueId v = c.node.inputs[i];
    if (v >= 0 && static_cast<std::size_t>(v) < c.graph.numValues()) s += " ('" + c.graph.value(v).name + "')";
    return s + " is " + inputType(c, i).str();
}

/// Empty when the node's inputs satisfy `r`, else a one-line error.
std::string check(const DtypeRule& r, const InferContext& c) {
    std::vector<std::size_t> same;
    if (r.sameT.size() == 1 && r.sameT[0] == -1) {
        for (std::size_t i = 0; i < c.node.inputs.size(); ++i) same.push_back(i);
    } else {
        for (int i : r.sameT) same.push_back(static_cast<std::size_t>(i));
    }
    const std::size_t classIdx = r.classInput >= 0 ? static_cast<std::size_t>(r.classInput) : (same.empty() ? 0 : same[0]);
    if (hasInput(c, classIdx)) {
        const DType t = inputType(c, classIdx).dtype;
        if (t != DType::Undefined && !inClass(t, r.firstClass))
            return describe(c, classIdx) + ": " + className(r.firstClass) + " element type is required";
    }
    std::size_t first = same.size();
    for (std::size_t k = 0; k < same.size(); ++k) {
        const std::size_t i = same[k];
        if (!hasInput(c, i) || inputType(c, i).dtype == DType::Undefined) continue;
        if (first == same.size()) {
            first = i;
            continue;
        }
        if (inputType(c, i).dtype != inputType(c, first).dtype)
            return describe(c, first) + " but " + describe(c, i) + ": they must have one element type (insert a Cast)";
    }
    return {};
}

}  // namespace

void applyDtypeRules(std::vector<OpSchema>& schemas) {
    for (OpSchema& s : schemas) {
        if (!s.domain.empty() || !s.inferShapes) continue;
        for (const DtypeRule& r : rules()) {
            if (std::find(r.ops.begin(), r.ops.end(), s.opType) == r.ops.end()) continue;
            ShapeFn inner = s.inferShapes;
            s.inferShapes = [inner, r](const InferContext& c) -> InferResult {
                if (std::string e = check(r, c); !e.empty()) return fail(e);
                return inner(c);
            };
        }
    }
}

}  // namespace tessera::ir::ops
