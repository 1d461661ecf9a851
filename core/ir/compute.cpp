#include "core/ir/compute.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

namespace tessera::ir {

const char* computeUnaryName(ComputeUnary op) {
    switch (op) {
        case ComputeUnary::Neg:
            return "neg";
        case ComputeUnary::Not:
            return "not";
        case ComputeUnary::Exp:
            return "exp";
        case ComputeUnary::Log:
            return "log";
        case ComputeUnary::Sqrt:
            return "sqrt";
        case ComputeUnary::Rsqrt:
            return "rsqrt";
        case ComputeUnary::Sin:
            return "sin";
        case ComputeUnary::Cos:
            return "cos";
        case ComputeUnary::Tan:
            return "tan";
        case ComputeUnary::Tanh:
            return "tanh";
        case ComputeUnary::Sigmoid:
            return "sigmoid";
        case ComputeUnary::Abs:
            return "abs";
        case ComputeUnary::Floor:
            return "floor";
        case ComputeUnary::Ceil:
            return "ceil";
        case ComputeUnary::Round:
            return "round";
        case ComputeUnary::Erf:
            return "erf";
    }
    return "?";
}

const char* computeBinaryName(ComputeBinary op) {
    switch (op) {
        case ComputeBinary::Add:
            return "+";
        case ComputeBinary::Sub:
            return "-";
        case ComputeBinary::Mul:
            return "*";
        case ComputeBinary::Div:
            return "/";
        case ComputeBinary::Mod:
            return "%";
        case ComputeBinary::Lt:
            return "<";
        case ComputeBinary::Le:
            return "<=";
        case ComputeBinary::Gt:
            return ">";
        case ComputeBinary::Ge:
            return ">=";
        case ComputeBinary::Eq:
            return "==";
        case ComputeBinary::Ne:
            return "!=";
        case ComputeBinary::And:
            return "&&";
        case ComputeBinary::Or:
            return "||";
        case ComputeBinary::Min:
            return "min";
        case ComputeBinary::Max:
            return "max";
        case ComputeBinary::Pow:
            return "pow";
        case ComputeBinary::Atan2:
            return "atan2";
    }
    return "?";
}

const char* reduceKindName(ReduceKind k) {
    switch (k) {
        case ReduceKind::Sum:
            return "sum";
        case ReduceKind::Prod:
            return "prod";
        case ReduceKind::Max:
            return "max";
        case ReduceKind::Min:
            return "min";
    }
    return "?";
}

std::optional<ComputeUnary> computeUnaryFromName(const std::string& fn) {
    for (int i = static_cast<int>(ComputeUnary::Exp); i <= static_cast<int>(ComputeUnary::Erf); ++i)
        if (fn == computeUnaryName(static_cast<ComputeUnary>(i))) return static_cast<ComputeUnary>(i);
    return std::nullopt;
}

std::optional<ComputeBinary> computeBinaryFromName(const std::string& fn) {
    for (int i = static_cast<int>(ComputeBinary::Min); i <= static_cast<int>(ComputeBinary::Atan2); ++i)
        if (fn == computeBinaryName(static_cast<ComputeBinary>(i))) return static_cast<ComputeBinary>(i);
    return std::nullopt;
}

ComputeExpr ComputeExpr::constant(double v, DType t) {
    ComputeExpr e;
    e.kind = ComputeKind::Const;
    e.value = v;
    e.constDType = t;
    e.weak = true;
    if (isInteger(t) || t == DType::Bool) e.intValue = static_cast<std::int64_t>(v);
    return e;
}
ComputeExpr ComputeExpr::integer(std::int64_t v) {
    ComputeExpr e;
    e.kind = ComputeKind::Const;
    e.intValue = v;
    e.value = static_cast<double>(v);
    e.constDType = DType::I64;
    e.weak = true;
    return e;
}
ComputeExpr ComputeExpr::index(int axis) {
    ComputeExpr e;
    e.kind = ComputeKind::Index;
    e.axis = axis;
    return e;
}
ComputeExpr ComputeExpr::access(int input, std::vector<ComputeExpr> subscripts) {
    ComputeExpr e;
    e.kind = ComputeKind::Access;
    e.input = input;
    e.args = std::move(subscripts);
    return e;
}
ComputeExpr ComputeExpr::unaryOp(ComputeUnary op, ComputeExpr a) {
    ComputeExpr e;
    e.kind = ComputeKind::Unary;
    e.unary = op;
    e.args.push_back(std::move(a));
    return e;
}
ComputeExpr ComputeExpr::binaryOp(ComputeBinary op, ComputeExpr a, ComputeExpr b) {
    ComputeExpr e;
    e.kind = ComputeKind::Binary;
    e.binary = op;
    e.args.push_back(std::move(a));
    e.args.push_back(std::move(b));
    return e;
}
ComputeExpr ComputeExpr::select(ComputeExpr c, ComputeExpr a, ComputeExpr b) {
    ComputeExpr e;
    e.kind = ComputeKind::Select;
    e.args.push_back(std::move(c));
    e.args.push_back(std::move(a));
    e.args.push_back(std::move(b));
    return e;
}
ComputeExpr ComputeExpr::cast(ComputeExpr a, DType to) {
    ComputeExpr e;
    e.kind = ComputeKind::Cast;
    e.castTo = to;
    e.args.push_back(std::move(a));
    return e;
}
ComputeExpr ComputeExpr::reduction(ReduceKind k, std::vector<int> axes, ComputeExpr body) {
    ComputeExpr e;
    e.kind = ComputeKind::Reduce;
    e.reduce = k;
    e.reduceAxes = std::move(axes);
    e.args.push_back(std::move(body));
    return e;
}

Shape ComputeDef::outputShape() const {
    std::vector<Dim> dims;
    for (std::size_t i = 0; i < numOutputAxes && i < axes.size(); ++i) dims.push_back(axes[i].extent);
    return Shape(std::move(dims));
}

// ---- printing ------------------------------------------------------------------------------

namespace {

std::string formatConst(const ComputeExpr& e) {
    if (e.constDType == DType::Bool) return e.intValue ? "true" : "false";
    if (isInteger(e.constDType)) return std::to_string(e.intValue);
    const double v = e.value;
    if (v == 3.14159265358979323846) return "pi";
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[40];
    for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
}

int binaryPrec(ComputeBinary op) {
    switch (op) {
        case ComputeBinary::Or:
            return 1;
        case ComputeBinary::And:
            return 2;
        case ComputeBinary::Lt:
        case ComputeBinary::Le:
        case ComputeBinary::Gt:
        case ComputeBinary::Ge:
        case ComputeBinary::Eq:
        case ComputeBinary::Ne:
            return 3;
        case ComputeBinary::Add:
        case ComputeBinary::Sub:
            return 4;
        case ComputeBinary::Mul:
        case ComputeBinary::Div:
        case ComputeBinary::Mod:
            return 5;
        default:
            return 7;  // written as a call
    }
}

constexpr int kPrecUnary = 6, kPrecPrimary = 7;

int exprPrec(const ComputeExpr& e) {
    switch (e.kind) {
        case ComputeKind::Binary:
            return binaryPrec(e.binary);
        case ComputeKind::Unary:
            return (e.unary == ComputeUnary::Neg || e.unary == ComputeUnary::Not) ? kPrecUnary : kPrecPrimary;
        case ComputeKind::Const:
            return (e.value < 0 || (std::signbit(e.value) && !isInteger(e.constDType)) || e.intValue < 0)
                       ? kPrecUnary
                       : kPrecPrimary;
        case ComputeKind::Reduce:
            return 0;
        default:
            return kPrecPrimary;
    }
}

std::string axisText(const ComputeAxis& a) {
    if (a.extent.isKnown()) return a.name + ": " + std::to_string(a.extent.value);
    if (a.extent.isSymbolic()) return a.name + ": " + a.extent.symbol;
    return a.name;
}

struct Printer {
    const ComputeDef& def;
    const std::function<std::string(int)>& tensorName;

    std::string axisName(int a) const {
        if (a < 0 || static_cast<std::size_t>(a) >= def.axes.size())
            return "<axis " + std::to_string(a) + ">";
        return def.axes[static_cast<std::size_t>(a)].name;
    }

    /// `ctx` = the precedence the surrounding context requires; 0 = top (no parentheses needed,
    /// a reduction may extend to the end).
    std::string print(const ComputeExpr& e, int ctx, bool rightmost) const {
        std::string s = printBare(e);
        const int p = exprPrec(e);
        bool paren = p < ctx;
        if (e.kind == ComputeKind::Reduce && (ctx > 0 || !rightmost)) paren = true;
        return paren ? "(" + s + ")" : s;
    }

    std::string list(const std::vector<ComputeExpr>& args, std::size_t from = 0) const {
        std::string s;
        for (std::size_t i = from; i < args.size(); ++i)
            s += (i > from ? ", " : "") + print(args[i], 0, true);
        return s;
    }

    std::string printBare(const ComputeExpr& e) const {
        switch (e.kind) {
            case ComputeKind::Const:
                return formatConst(e);
            case ComputeKind::Index:
                return axisName(e.axis);
            case ComputeKind::Access:
                return tensorName(e.input) + "[" + list(e.args) + "]";
            case ComputeKind::Unary: {
                if (e.args.empty()) return "<bad unary>";
                if (e.unary == ComputeUnary::Neg) return "-" + print(e.args[0], kPrecUnary + 1, true);
                if (e.unary == ComputeUnary::Not) return "!" + print(e.args[0], kPrecUnary + 1, true);
                return std::string(computeUnaryName(e.unary)) + "(" + list(e.args) + ")";
            }
            case ComputeKind::Binary: {
                if (e.args.size() != 2) return "<bad binary>";
                const int p = binaryPrec(e.binary);
                if (p == kPrecPrimary)
                    return std::string(computeBinaryName(e.binary)) + "(" + list(e.args) + ")";
                // Left-associative; comparisons do not chain, so both sides need a higher precedence.
                const int leftCtx = p == 3 ? p + 1 : p;
                return print(e.args[0], leftCtx, false) + " " + computeBinaryName(e.binary) + " " +
                       print(e.args[1], p + 1, true);
            }
            case ComputeKind::Select:
                return "select(" + list(e.args) + ")";
            case ComputeKind::Cast:
                return "cast(" + (e.args.empty() ? std::string("?") : print(e.args[0], 0, true)) + ", " +
                       std::string(dtypeName(e.castTo)) + ")";
            case ComputeKind::Reduce: {
                std::string s = std::string(reduceKindName(e.reduce)) + "(";
                for (std::size_t i = 0; i < e.reduceAxes.size(); ++i) {
                    const int a = e.reduceAxes[i];
                    s += i ? ", " : "";
                    s += (a >= 0 && static_cast<std::size_t>(a) < def.axes.size())
                             ? axisText(def.axes[static_cast<std::size_t>(a)])
                             : axisName(a);
                }
                s += ") ";
                // A body starting with '-' after max(k)/min(k) would read as a binary minus.
                if (!e.args.empty()) {
                    std::string body = print(e.args[0], 0, true);
                    if (!body.empty() && body[0] == '-') body = "(" + body + ")";
                    s += body;
                }
                return s;
            }
        }
        return "?";
    }
};

}  // namespace

std::string printComputeExpr(const ComputeDef& def, const ComputeExpr& e,
                             const std::function<std::string(int slot)>& tensorName) {
    Printer p{def, tensorName};
    return p.print(e, 0, true);
}

std::string printCompute(const ComputeDef& def, const std::string& outputName,
                         const std::function<std::string(int slot)>& tensorName) {
    std::string s = outputName + "[";
    for (std::size_t i = 0; i < def.numOutputAxes && i < def.axes.size(); ++i)
        s += (i ? ", " : "") + axisText(def.axes[i]);
    s += "]";
    if (def.forcedDType != DType::Undefined) s += ": " + std::string(dtypeName(def.forcedDType));
    return s + " = " + printComputeExpr(def, def.body, tensorName);
}

// ---- checking ------------------------------------------------------------------------------

namespace {

struct Ty {
    DType t = DType::Undefined;
    bool weak = false;
};

bool isNumeric(DType t) { return isFloatingPoint(t) || isInteger(t); }

class Checker {
public:
    Checker(ComputeDef& def, const std::vector<TensorType>& inputs, const std::vector<std::string>& names,
            const std::string& file, support::DiagnosticList& diags)
        : m_def(def),
          m_inputs(inputs),
          m_names(names),
          m_file(file),
          m_diags(diags),
          m_extentFrom(def.axes.size()) {}

    TensorType run() {
        for (std::size_t a = 0; a < m_def.axes.size(); ++a) {
            const Dim& d = m_def.axes[a].extent;
            if (d.isKnown() || d.isSymbolic()) m_extentFrom[a] = "declared '" + axisText(m_def.axes[a]) + "'";
            if (d.isKnown() && d.value == 0)
                errorAt(m_def.body, "extent of '" + m_def.axes[a].name + "' is 0");
        }
        inferExtents(m_def.body, 0);
        for (std::size_t a = 0; a < m_def.axes.size(); ++a) {
            const ComputeAxis& ax = m_def.axes[a];
            if (!ax.extent.isKnown() && !ax.extent.isSymbolic() && !m_unknownDimSeen && !m_failed) {
                errorAt(m_def.body,
                        "cannot infer the extent of " +
                            std::string(ax.reduction ? "reduction axis '" : "index '") + ax.name +
                            "': it is never used directly as a subscript of a tensor",
                        {"hint: declare it, e.g. " + ax.name + ": 8"});
            }
        }
        Ty body = type(m_def.body, 0);
        TensorType out;
        if (m_failed) return out;
        DType dt = body.t;
        if (dt == DType::Undefined && m_unknownInputType) dt = DType::Undefined;
        if (m_def.forcedDType != DType::Undefined) dt = m_def.forcedDType;
        out.dtype = dt;
        out.shape = m_def.outputShape();
        return out;
    }

    bool failed() const { return m_failed; }

private:
    ComputeDef& m_def;
    const std::vector<TensorType>& m_inputs;
    const std::vector<std::string>& m_names;
    const std::string& m_file;
    support::DiagnosticList& m_diags;
    std::vector<std::string> m_extentFrom;
    bool m_failed = false;
    bool m_unknownDimSeen = false;
    bool m_unknownInputType = false;

    std::string inputName(int slot) const {
        if (slot >= 0 && static_cast<std::size_t>(slot) < m_names.size())
            return m_names[static_cast<std::size_t>(slot)];
        return "<input " + std::to_string(slot) + ">";
    }
    std::string text(const ComputeExpr& e) const {
        return printComputeExpr(m_def, e, [this](int s) { return inputName(s); });
    }

    void errorAt(const ComputeExpr& e, std::string msg, std::vector<std::string> notes = {}) {
        m_failed = true;
        support::Diagnostic d;
        d.file = m_file;
        d.begin = e.begin;
        d.end = e.end;
        d.message = std::move(msg);
        d.notes = std::move(notes);
        m_diags.add(std::move(d));
    }

    void inferExtents(ComputeExpr& e, int depth) {
        if (depth > 1000) return;
        if (e.kind == ComputeKind::Index &&
            (e.axis < 0 || static_cast<std::size_t>(e.axis) >= m_def.axes.size())) {
            errorAt(e, "index refers to axis " + std::to_string(e.axis) + " of a definition with " +
                           std::to_string(m_def.axes.size()) + " axes");
            return;
        }
        if (e.kind == ComputeKind::Reduce) {
            for (int a : e.reduceAxes)
                if (a < 0 || static_cast<std::size_t>(a) >= m_def.axes.size()) {
                    errorAt(e, "reduction refers to a missing axis " + std::to_string(a));
                    return;
                }
        }
        if (e.kind == ComputeKind::Access) {
            if (e.input < 0 || static_cast<std::size_t>(e.input) >= m_inputs.size()) {
                errorAt(e, "access refers to input slot " + std::to_string(e.input) + " but the node has " +
                               std::to_string(m_inputs.size()) + " inputs");
                return;
            }
            const TensorType& t = m_inputs[static_cast<std::size_t>(e.input)];
            if (!t.shape.rankKnown()) {
                m_unknownDimSeen = true;
            } else if (t.shape.rank() != e.args.size()) {
                errorAt(e, "'" + inputName(e.input) + "' has rank " + std::to_string(t.shape.rank()) + " (" +
                               t.str() + ") but is indexed with " + std::to_string(e.args.size()) +
                               " subscript" + (e.args.size() == 1 ? "" : "s") + " in " + text(e));
            } else {
                for (std::size_t d = 0; d < e.args.size(); ++d) {
                    const ComputeExpr& sub = e.args[d];
                    if (sub.kind != ComputeKind::Index || sub.axis < 0 ||
                        static_cast<std::size_t>(sub.axis) >= m_def.axes.size())
                        continue;
                    const Dim& dim = t.shape[d];
                    ComputeAxis& ax = m_def.axes[static_cast<std::size_t>(sub.axis)];
                    const std::string here = text(e) + " (dim " + std::to_string(d) + " of " + t.str() + ")";
                    if (!dim.isKnown() && !dim.isSymbolic()) {
                        m_unknownDimSeen = true;
                        continue;
                    }
                    if (!ax.extent.isKnown() && !ax.extent.isSymbolic()) {
                        ax.extent = dim;
                        m_extentFrom[static_cast<std::size_t>(sub.axis)] = here;
                    } else if (ax.extent.isKnown() && dim.isKnown() && ax.extent.value != dim.value) {
                        const std::string& from = m_extentFrom[static_cast<std::size_t>(sub.axis)];
                        errorAt(e, "extent of '" + ax.name + "' is " + std::to_string(ax.extent.value) +
                                       " from " + from + " but " + std::to_string(dim.value) + " from " +
                                       here);
                    } else if (ax.extent.isSymbolic() && dim.isSymbolic() && ax.extent.symbol != dim.symbol) {
                        const std::string& from = m_extentFrom[static_cast<std::size_t>(sub.axis)];
                        errorAt(e, "extent of '" + ax.name + "' is " + ax.extent.symbol + " from " + from +
                                       " but " + dim.symbol + " from " + here);
                    } else if (ax.extent.isSymbolic() && dim.isKnown()) {
                        // A known extent is more precise than a symbol the user declared loosely.
                        ax.extent = dim;
                        m_extentFrom[static_cast<std::size_t>(sub.axis)] = here;
                    }
                }
            }
        }
        for (auto& a : e.args) inferExtents(a, depth + 1);
    }

    Ty concrete(Ty t) const {
        if (!t.weak) return t;
        return t;
    }

    /// Common type of two operands of an arithmetic or comparison operator; errors name both sides.
    Ty promote(const ComputeExpr& at, const std::string& op, const ComputeExpr& ea, Ty a,
               const ComputeExpr& eb, Ty b, bool allowBool) {
        if (a.t == DType::Undefined || b.t == DType::Undefined) return {DType::Undefined, false};
        if (a.t == DType::Bool || b.t == DType::Bool) {
            if (allowBool && a.t == DType::Bool && b.t == DType::Bool) return {DType::Bool, a.weak && b.weak};
            const ComputeExpr& bad = a.t == DType::Bool ? ea : eb;
            errorAt(at, "'" + op + "' cannot take a bool operand: " + text(bad) + " is bool",
                    {"hint: use select(cond, 1.0, 0.0) to turn a condition into a number"});
            return {DType::Undefined, false};
        }
        if (a.weak && b.weak) {
            if (isFloatingPoint(a.t) || isFloatingPoint(b.t)) return {DType::F32, true};
            return {DType::I64, true};
        }
        if (a.weak || b.weak) {
            const Ty strong = a.weak ? b : a;
            const Ty weak = a.weak ? a : b;
            if (isInteger(strong.t) && isFloatingPoint(weak.t)) return {DType::F32, false};
            return strong;
        }
        if (a.t == b.t) return a;
        const bool fa = isFloatingPoint(a.t), fb = isFloatingPoint(b.t);
        if (fa && fb) {
            errorAt(at,
                    "'" + op + "' mixes " + std::string(dtypeName(a.t)) + " (" + text(ea) + ") and " +
                        std::string(dtypeName(b.t)) + " (" + text(eb) + ")",
                    {"hint: convert one side with cast(..., " + std::string(dtypeName(a.t)) + ")"});
            return {DType::Undefined, false};
        }
        if (fa) return a;
        if (fb) return b;
        // Two integer types: the wider one.
        return dtypeSize(a.t) >= dtypeSize(b.t) ? a : b;
    }

    Ty type(ComputeExpr& e, int depth) {
        if (depth > 1000) {
            errorAt(e, "expression nested too deeply (more than 1000 levels; split long chains into partial results)");
            return {};
        }
        Ty r;
        switch (e.kind) {
            case ComputeKind::Const:
                r = {e.constDType, true};
                break;
            case ComputeKind::Index:
                r = {DType::I64, false};
                break;
            case ComputeKind::Access: {
                for (auto& s : e.args) {
                    Ty st = type(s, depth + 1);
                    if (st.t != DType::Undefined && !isInteger(st.t))
                        errorAt(s,
                                "subscript " + text(s) + " of '" + inputName(e.input) + "' is " +
                                    std::string(dtypeName(st.t)) + "; subscripts must be integers",
                                {"hint: convert with cast(..., i64)"});
                }
                if (e.input < 0 || static_cast<std::size_t>(e.input) >= m_inputs.size()) return {};
                const DType t = m_inputs[static_cast<std::size_t>(e.input)].dtype;
                if (t == DType::Undefined)
                    m_unknownInputType = true;
                else if (!isNumeric(t) && t != DType::Bool)
                    errorAt(e,
                            "'" + inputName(e.input) + "' is " + std::string(dtypeName(t)) +
                                "; compute definitions read numeric or bool tensors",
                            {"hint: complex data can be kept as separate real and imaginary tensors"});
                r = {t, false};
                break;
            }
            case ComputeKind::Unary: {
                if (e.args.size() != 1) {
                    errorAt(e, "unary operator needs one operand");
                    return {};
                }
                Ty a = type(e.args[0], depth + 1);
                if (a.t == DType::Undefined) return e.dtype = DType::Undefined, Ty{};
                if (e.unary == ComputeUnary::Not) {
                    if (a.t != DType::Bool)
                        errorAt(e, "'!' needs a bool operand, got " + std::string(dtypeName(a.t)) + " (" +
                                       text(e.args[0]) + ")");
                    r = {DType::Bool, a.weak};
                } else if (e.unary == ComputeUnary::Neg || e.unary == ComputeUnary::Abs ||
                           e.unary == ComputeUnary::Floor || e.unary == ComputeUnary::Ceil ||
                           e.unary == ComputeUnary::Round) {
                    if (a.t == DType::Bool)
                        errorAt(e, std::string("'") + computeUnaryName(e.unary) +
                                       "' cannot take a bool operand (" + text(e.args[0]) + ")");
                    r = a;
                } else {
                    if (a.t == DType::Bool)
                        errorAt(e, std::string("'") + computeUnaryName(e.unary) +
                                       "' cannot take a bool operand (" + text(e.args[0]) + ")");
                    r = isFloatingPoint(a.t) ? a : Ty{DType::F32, a.weak};
                }
                break;
            }
            case ComputeKind::Binary: {
                if (e.args.size() != 2) {
                    errorAt(e, "binary operator needs two operands");
                    return {};
                }
                Ty a = type(e.args[0], depth + 1);
                Ty b = type(e.args[1], depth + 1);
                const std::string op = computeBinaryName(e.binary);
                if (e.binary == ComputeBinary::And || e.binary == ComputeBinary::Or) {
                    for (int i = 0; i < 2; ++i) {
                        const Ty t = i ? b : a;
                        if (t.t != DType::Undefined && t.t != DType::Bool)
                            errorAt(e.args[static_cast<std::size_t>(i)],
                                    "'" + op + "' needs bool operands, got " + std::string(dtypeName(t.t)) +
                                        " (" + text(e.args[static_cast<std::size_t>(i)]) + ")");
                    }
                    r = {DType::Bool, a.weak && b.weak};
                    break;
                }
                const bool cmp = binaryPrec(e.binary) == 3;
                const bool eqne = e.binary == ComputeBinary::Eq || e.binary == ComputeBinary::Ne;
                Ty p = promote(e, op, e.args[0], a, e.args[1], b, eqne);
                if (p.t == DType::Undefined) return {};
                if (cmp)
                    r = {DType::Bool, p.weak};
                else if ((e.binary == ComputeBinary::Pow || e.binary == ComputeBinary::Atan2) &&
                         !isFloatingPoint(p.t))
                    r = {DType::F32, p.weak};
                else
                    r = p;
                if ((e.binary == ComputeBinary::Div || e.binary == ComputeBinary::Mod) && isInteger(p.t) &&
                    e.args[1].kind == ComputeKind::Const && isInteger(e.args[1].constDType) &&
                    e.args[1].intValue == 0)
                    errorAt(e, "integer division by zero in " + text(e));
                break;
            }
            case ComputeKind::Select: {
                if (e.args.size() != 3) {
                    errorAt(e, "select needs three operands (condition, then, else)");
                    return {};
                }
                Ty c = type(e.args[0], depth + 1);
                Ty a = type(e.args[1], depth + 1);
                Ty b = type(e.args[2], depth + 1);
                if (c.t != DType::Undefined && c.t != DType::Bool)
                    errorAt(e.args[0],
                            "the condition of select is " + std::string(dtypeName(c.t)) + " (" +
                                text(e.args[0]) + "); it must be bool",
                            {"hint: compare it, e.g. " + text(e.args[0]) + " != 0"});
                r = promote(e, "select", e.args[1], a, e.args[2], b, true);
                break;
            }
            case ComputeKind::Cast: {
                if (e.args.size() != 1) {
                    errorAt(e, "cast needs one operand");
                    return {};
                }
                type(e.args[0], depth + 1);
                if (e.castTo == DType::Undefined || e.castTo == DType::String ||
                    e.castTo == DType::Complex64 || e.castTo == DType::Complex128)
                    errorAt(e, "cannot cast to " + std::string(dtypeName(e.castTo)));
                r = {e.castTo, false};
                break;
            }
            case ComputeKind::Reduce: {
                if (e.args.size() != 1) {
                    errorAt(e, "reduction needs a body");
                    return {};
                }
                Ty b = type(e.args[0], depth + 1);
                if (b.t == DType::Bool) {
                    errorAt(e,
                            std::string("'") + reduceKindName(e.reduce) + "' over a bool expression (" +
                                text(e.args[0]) + ")",
                            {"hint: count with sum(k) select(cond, 1, 0)"});
                    return {};
                }
                r = {b.t, false};
                if (b.weak) r.t = isFloatingPoint(b.t) ? DType::F32 : DType::I64;
                break;
            }
        }
        e.dtype = r.t;
        e.weak = r.weak;
        return r;
    }
};

std::optional<std::int64_t> mulChecked(std::int64_t a, std::int64_t b) {
    if (a < 0 || b < 0) return std::nullopt;
    if (a != 0 && b > std::numeric_limits<std::int64_t>::max() / a) return std::nullopt;
    return a * b;
}
std::optional<std::int64_t> addChecked(std::int64_t a, std::int64_t b) {
    if (a < 0 || b < 0 || a > std::numeric_limits<std::int64_t>::max() - b) return std::nullopt;
    return a + b;
}

std::optional<std::int64_t> flopsOf(const ComputeDef& def, const ComputeExpr& e, bool inSubscript,
                                    int depth) {
    if (depth > 1000) return std::nullopt;
    std::int64_t own = 0;
    switch (e.kind) {
        case ComputeKind::Const:
        case ComputeKind::Index:
            return 0;
        case ComputeKind::Access:
            return 0;  // subscript arithmetic is address computation
        case ComputeKind::Cast:
            own = 0;
            break;
        case ComputeKind::Unary:
        case ComputeKind::Binary:
        case ComputeKind::Select:
            own = inSubscript ? 0 : 1;
            break;
        case ComputeKind::Reduce: {
            auto body = e.args.empty() ? std::optional<std::int64_t>(0)
                                       : flopsOf(def, e.args[0], inSubscript, depth + 1);
            if (!body) return std::nullopt;
            std::int64_t n = 1;
            for (int a : e.reduceAxes) {
                if (a < 0 || static_cast<std::size_t>(a) >= def.axes.size()) return std::nullopt;
                const Dim& d = def.axes[static_cast<std::size_t>(a)].extent;
                if (!d.isKnown()) return std::nullopt;
                auto m = mulChecked(n, d.value);
                if (!m) return std::nullopt;
                n = *m;
            }
            auto perElem = addChecked(*body, 1);
            if (!perElem) return std::nullopt;
            return mulChecked(*perElem, n);
        }
    }
    std::int64_t total = own;
    for (const auto& a : e.args) {
        auto f = flopsOf(def, a, inSubscript, depth + 1);
        if (!f) return std::nullopt;
        auto s = addChecked(total, *f);
        if (!s) return std::nullopt;
        total = *s;
    }
    return total;
}

bool exprEqual(const ComputeExpr& a, const ComputeExpr& b, int depth) {
    if (depth > 1000) return false;
    if (a.kind != b.kind || a.args.size() != b.args.size()) return false;
    switch (a.kind) {
        case ComputeKind::Const:
            if (a.constDType != b.constDType) return false;
            if (isInteger(a.constDType) || a.constDType == DType::Bool) {
                if (a.intValue != b.intValue) return false;
            } else if (!(a.value == b.value || (std::isnan(a.value) && std::isnan(b.value)))) {
                return false;
            }
            break;
        case ComputeKind::Index:
            if (a.axis != b.axis) return false;
            break;
        case ComputeKind::Access:
            if (a.input != b.input) return false;
            break;
        case ComputeKind::Unary:
            if (a.unary != b.unary) return false;
            break;
        case ComputeKind::Binary:
            if (a.binary != b.binary) return false;
            break;
        case ComputeKind::Select:
            break;
        case ComputeKind::Cast:
            if (a.castTo != b.castTo) return false;
            break;
        case ComputeKind::Reduce:
            if (a.reduce != b.reduce || a.reduceAxes != b.reduceAxes) return false;
            break;
    }
    for (std::size_t i = 0; i < a.args.size(); ++i)
        if (!exprEqual(a.args[i], b.args[i], depth + 1)) return false;
    return true;
}

}  // namespace

TensorType checkCompute(ComputeDef& def, const std::vector<TensorType>& inputs,
                        const std::vector<std::string>& inputNames, const std::string& file,
                        support::DiagnosticList& diags) {
    if (def.numOutputAxes > def.axes.size()) {
        support::Diagnostic d;
        d.file = file;
        d.message = "compute definition declares more output axes than axes";
        diags.add(std::move(d));
        return {};
    }
    Checker c(def, inputs, inputNames, file, diags);
    TensorType t = c.run();
    if (c.failed()) return {};
    return t;
}

ComputeTypeResult inferComputeType(const ComputeDef& def, const std::vector<TensorType>& inputs,
                                   const std::vector<std::string>& inputNames) {
    ComputeDef copy = def;
    support::DiagnosticList diags;
    ComputeTypeResult r;
    r.output = checkCompute(copy, inputs, inputNames, {}, diags);
    if (const auto* e = diags.firstError()) r.error = e->message;
    return r;
}

std::optional<std::int64_t> computeFlopsPerElement(const ComputeDef& def) {
    return flopsOf(def, def.body, false, 0);
}

std::optional<std::int64_t> computeFlops(const ComputeDef& def) {
    auto per = computeFlopsPerElement(def);
    if (!per) return std::nullopt;
    auto n = def.outputShape().numElements();
    if (!n) return std::nullopt;
    return mulChecked(*per, *n);
}

namespace {
std::string structureProblem(const ComputeDef& def, const ComputeExpr& e, std::size_t numInputs, int depth) {
    if (depth > 1000) return "expression nested more than 1000 levels";
    auto axisOk = [&](int a) { return a >= 0 && static_cast<std::size_t>(a) < def.axes.size(); };
    std::size_t want = 0;
    bool fixed = true;
    switch (e.kind) {
        case ComputeKind::Const:
            want = 0;
            break;
        case ComputeKind::Index:
            if (!axisOk(e.axis)) return "index refers to missing axis " + std::to_string(e.axis);
            want = 0;
            break;
        case ComputeKind::Access:
            if (e.input < 0 || static_cast<std::size_t>(e.input) >= numInputs)
                return "access refers to missing input slot " + std::to_string(e.input);
            fixed = false;
            break;
        case ComputeKind::Unary:
        case ComputeKind::Cast:
            want = 1;
            break;
        case ComputeKind::Binary:
            want = 2;
            break;
        case ComputeKind::Select:
            want = 3;
            break;
        case ComputeKind::Reduce:
            want = 1;
            if (e.reduceAxes.empty()) return "reduction without axes";
            for (int a : e.reduceAxes) {
                if (!axisOk(a)) return "reduction refers to missing axis " + std::to_string(a);
                if (!def.axes[static_cast<std::size_t>(a)].reduction)
                    return "reduction over output axis '" + def.axes[static_cast<std::size_t>(a)].name + "'";
            }
            break;
    }
    if (fixed && e.args.size() != want)
        return "operator has " + std::to_string(e.args.size()) + " operands, expected " +
               std::to_string(want);
    for (const auto& a : e.args)
        if (auto p = structureProblem(def, a, numInputs, depth + 1); !p.empty()) return p;
    return {};
}
}  // namespace

std::string computeStructureProblem(const ComputeDef& def, std::size_t numInputs) {
    if (def.numOutputAxes > def.axes.size()) return "more output axes than axes";
    for (std::size_t i = 0; i < def.axes.size(); ++i)
        if (def.axes[i].reduction != (i >= def.numOutputAxes))
            return "axis '" + def.axes[i].name +
                   (i < def.numOutputAxes ? "' is an output axis marked as a reduction"
                                          : "' follows the output axes but is not a reduction");
    return structureProblem(def, def.body, numInputs, 0);
}

bool computeEqual(const ComputeDef& a, const ComputeDef& b) {
    if (a.numOutputAxes != b.numOutputAxes || a.forcedDType != b.forcedDType ||
        a.axes.size() != b.axes.size())
        return false;
    for (std::size_t i = 0; i < a.axes.size(); ++i)
        if (a.axes[i].name != b.axes[i].name || !(a.axes[i].extent == b.axes[i].extent) ||
            a.axes[i].reduction != b.axes[i].reduction)
            return false;
    return exprEqual(a.body, b.body, 0);
}

}  // namespace tessera::ir
