#include "core/codegen/c_emitter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace tessera::codegen {

using lower::BinaryOp;
using lower::BufferDecl;
using lower::BufferRole;
using lower::Expr;
using lower::ExprKind;
using lower::ExprNode;
using lower::ForKind;
using lower::Intrinsic;
using lower::MemoryScope;
using lower::Stmt;
using lower::StmtKind;
using lower::StmtNode;
using lower::UnaryOp;

// ---------------------------------------------------------------------------------------------
// Names and comments
// ---------------------------------------------------------------------------------------------

std::string escapeCommentText(std::string_view text, std::size_t maxLength) {
    static const char* kHex = "0123456789abcdef";
    std::string out;
    out.reserve(std::min(text.size(), maxLength) + 8);
    auto hexByte = [&](unsigned char c) {
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (out.size() >= maxLength) {
            out += "...";
            break;
        }
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\\') {
            hexByte(c);  // never a backslash at the end of a line (line continuation)
        } else if (c == '?' && i > 0 && text[i - 1] == '?') {
            hexByte(c);  // no "??" pair: no trigraph
        } else if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            hexByte(c);  // control characters, newline, CR, NUL, every non-ASCII byte
        }
    }
    return out;
}

namespace {

const std::set<std::string, std::less<>>& reservedNames() {
    static const std::set<std::string, std::less<>> kNames = {
        // C and C++ keywords and alternative tokens
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
        "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
        "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
        "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "final", "float",
        "for", "friend", "goto", "if", "import", "inline", "int", "long", "module", "mutable", "namespace", "new",
        "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "override", "private", "protected",
        "public", "register", "reinterpret_cast", "requires", "restrict", "return", "short", "signed", "sizeof",
        "static", "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw",
        "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
        "wchar_t", "while", "xor", "xor_eq",
        // predefined lowercase macros (GNU modes) and common library macros
        "linux", "unix", "i386", "errno", "assert", "offsetof", "stdin", "stdout", "stderr",
        // names the generated code and its headers use
        "std", "args", "main", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "int8_t", "int16_t", "int32_t",
        "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "half", "nv_bfloat16", "omp", "memcpy",
        "exp", "expf", "exp2", "exp2f", "expm1", "log", "logf", "log2", "log10", "log1p", "sqrt", "sqrtf", "cbrt",
        "sin", "sinf", "cos", "cosf", "tan", "tanf", "tanh", "tanhf", "asin", "acos", "atan", "sinh", "cosh",
        "erf", "erff", "erfc", "abs", "fabs", "fabsf", "labs", "llabs", "floor", "floorf", "ceil", "ceilf",
        "round", "roundf", "nearbyint", "nearbyintf", "rint", "trunc", "pow", "powf", "atan2", "atan2f", "fma",
        "fmaf", "fmod", "fmodf", "fmin", "fmax", "min", "max", "isnan", "isinf", "isfinite", "signbit", "rsqrt",
        "rsqrtf", "ldexp", "frexp", "modf", "hypot",
        // CUDA built-in variables
        "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
    };
    return kNames;
}

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

bool isReservedIdentifier(std::string_view name) {
    if (reservedNames().count(name)) return true;
    if (startsWith(name, "tsr_") || startsWith(name, "tk_") || startsWith(name, "tessera") || startsWith(name, "omp_"))
        return true;
    if (startsWith(name, "_")) return true;  // reserved for the implementation
    return name.find("__") != std::string_view::npos;
}

std::string sanitizeIdentifier(std::string_view name, std::string_view prefix) {
    constexpr std::size_t kMaxBody = 40;
    std::string body;
    for (unsigned char c : name) {
        if (body.size() >= kMaxBody) break;
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        const char out = ok ? static_cast<char>(c) : '_';
        if (out == '_' && !body.empty() && body.back() == '_') continue;  // no "__" (reserved)
        body += out;
    }
    if (!prefix.empty() && prefix.back() == '_' && !body.empty() && body.front() == '_') body.erase(0, 1);
    if (body.empty() || body == "_") body = "x";
    std::string result = std::string(prefix) + body;
    if (result[0] >= '0' && result[0] <= '9') result = "n" + result;
    if (result[0] == '_') result = "x" + result;
    if (reservedNames().count(result)) result += "_";
    return result;
}

std::string IdentifierTable::unique(std::string_view name, std::string_view prefix) {
    const std::string base = sanitizeIdentifier(name, prefix);
    std::string candidate = base;
    const std::string stem = base.back() == '_' ? base : base + "_";  // never "__" (reserved)
    for (int n = 2; m_used.count(candidate); ++n) candidate = stem + std::to_string(n);
    m_used.insert(candidate);
    return candidate;
}

std::string IdentifierTable::uniqueVar(std::string_view hint) {
    bool plain = !hint.empty() && hint.size() <= 24 && hint[0] >= 'a' && hint[0] <= 'z';
    for (char c : hint)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) plain = false;
    if (plain && isReservedIdentifier(hint)) plain = false;
    if (plain) return unique(hint);
    return unique(hint, "v_");
}

void CodeWriter::line(std::string_view text) {
    if (!text.empty()) m_text.append(static_cast<std::size_t>(m_indent * m_width), ' ');
    rawLine(text);
}

void CodeWriter::rawLine(std::string_view text) {
    m_text.append(text);
    m_text += '\n';
    m_lines += 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// ---------------------------------------------------------------------------------------------
// Emitter
// ---------------------------------------------------------------------------------------------

namespace {

bool isHalf(DType t) { return t == DType::F16 || t == DType::BF16; }

bool exprUses(const Expr& e, int varId, int buffer) {
    if (!e) return false;
    if (varId >= 0 && e->kind == ExprKind::VarRef && e->var.id == varId) return true;
    if (buffer >= 0 && e->kind == ExprKind::Load && e->buffer == buffer) return true;
    for (const auto& a : e->args)
        if (exprUses(a, varId, buffer)) return true;
    return false;
}

/// True when statement s reads variable varId or reads/writes buffer `buffer` (-1: not asked).
bool stmtUses(const Stmt& s, int varId, int buffer) {
    if (!s) return false;
    if (buffer >= 0 && (s->kind == StmtKind::Store || s->kind == StmtKind::Mma) && s->buffer == buffer) return true;
    if (exprUses(s->extent, varId, buffer) || exprUses(s->value, varId, buffer)) return true;
    if (s->mma) {
        if (buffer >= 0 && (s->mma->a.buffer == buffer || s->mma->b.buffer == buffer)) return true;
        bool used = false;
        lower::forEachMmaExpr(*s->mma, [&](const Expr& e) { used = used || exprUses(e, varId, buffer); });
        if (used) return true;
    }
    for (const auto& i : s->indices)
        if (exprUses(i, varId, buffer)) return true;
    for (const auto& b : s->body)
        if (stmtUses(b, varId, buffer)) return true;
    return stmtUses(s->elseBody, varId, buffer);
}
/// Float dtypes computed in C `float`.
bool computesInFloat(DType t) { return t == DType::F32 || isHalf(t); }

std::string shapeText(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

}  // namespace

CEmitter::CEmitter() : CEmitter(Style{}) {}
CEmitter::CEmitter(Style style) : m_style(style), m_w(style.indentWidth) {}

std::string CEmitter::operand(const ExprText& t, int minPrec) const {
    const bool wrap = m_style.parens == Parens::Full ? t.prec < kPrecPrimary : t.prec < minPrec;
    return wrap ? "(" + t.text + ")" : t.text;
}

CEmitter::ExprText CEmitter::intLiteral(std::int64_t v, DType t) {
    if (t == DType::Bool) return {v ? "true" : "false", kPrecPrimary};
    const bool isUnsigned = t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64;
    if (isUnsigned) {
        const auto u = static_cast<std::uint64_t>(v);
        if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) return {std::to_string(u), kPrecPrimary};
        return {std::to_string(u) + (t == DType::U64 ? "ULL" : "U"), kPrecPrimary};
    }
    if (v == std::numeric_limits<std::int64_t>::min()) return {"INT64_MIN", kPrecPrimary};
    std::string s = std::to_string(v);
    if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) s += "LL";
    return {s, v < 0 ? kPrecUnary : kPrecPrimary};
}

CEmitter::ExprText CEmitter::floatLiteral(double v, DType t) const {
    const bool asFloat = t != DType::F64;
    const std::string limits = asFloat ? "std::numeric_limits<float>" : "std::numeric_limits<double>";
    if (std::isnan(v)) return {limits + "::quiet_NaN()", kPrecPrimary};
    if (std::isinf(v)) return v > 0 ? ExprText{limits + "::infinity()", kPrecPrimary}
                                    : ExprText{"-" + limits + "::infinity()", kPrecUnary};
    char buf[64];
    std::to_chars_result r{};
    if (asFloat) {
        const float f = static_cast<float>(v);
        if (std::isinf(f)) return f > 0 ? ExprText{limits + "::infinity()", kPrecPrimary}
                                        : ExprText{"-" + limits + "::infinity()", kPrecUnary};
        r = std::to_chars(buf, buf + sizeof buf, f);  // shortest text that reads back as f
    } else {
        r = std::to_chars(buf, buf + sizeof buf, v);
    }
    std::string s(buf, r.ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    if (asFloat) s += "f";
    return {s, s[0] == '-' ? kPrecUnary : kPrecPrimary};
}

std::string CEmitter::storageType(DType t) const {
    switch (t) {
    case DType::F16:
    case DType::BF16: return "uint16_t";
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::I8: return "int8_t";
    case DType::I16: return "int16_t";
    case DType::I32: return "int32_t";
    case DType::I64: return "int64_t";
    case DType::U8: return "uint8_t";
    case DType::U16: return "uint16_t";
    case DType::U32: return "uint32_t";
    case DType::U64: return "uint64_t";
    case DType::Bool: return "uint8_t";
    default: return "tsr_unsupported_dtype";  // does not compile: the IR has no C form for it
    }
}

std::string CEmitter::computeType(DType t) const {
    if (isHalf(t)) return "float";
    if (t == DType::Bool) return "bool";
    return storageType(t);
}

std::string CEmitter::intrinsicSpelling(Intrinsic f, DType t) const {
    const bool f32 = t != DType::F64;
    auto pick = [&](const char* single, const char* dbl) { return std::string(f32 ? single : dbl); };
    switch (f) {
    case Intrinsic::Exp: return pick("expf", "exp");
    case Intrinsic::Log: return pick("logf", "log");
    case Intrinsic::Sqrt: return pick("sqrtf", "sqrt");
    case Intrinsic::Rsqrt: return pick("tsr_rsqrtf", "tsr_rsqrt");
    case Intrinsic::Sin: return pick("sinf", "sin");
    case Intrinsic::Cos: return pick("cosf", "cos");
    case Intrinsic::Tan: return pick("tanf", "tan");
    case Intrinsic::Tanh: return pick("tanhf", "tanh");
    case Intrinsic::Sigmoid: return pick("tsr_sigmoidf", "tsr_sigmoid");
    case Intrinsic::Erf: return pick("erff", "erf");
    case Intrinsic::Abs: return pick("fabsf", "fabs");
    case Intrinsic::Floor: return pick("floorf", "floor");
    case Intrinsic::Ceil: return pick("ceilf", "ceil");
    case Intrinsic::Round: return pick("nearbyintf", "nearbyint");  // half to even (ONNX Round)
    case Intrinsic::Pow: return pick("powf", "pow");
    case Intrinsic::Atan2: return pick("atan2f", "atan2");
    case Intrinsic::Fma: return pick("fmaf", "fma");
    }
    return "tsr_unknown_intrinsic";
}

std::string CEmitter::unrollPragma(std::int64_t n) const {
    if (n <= 0) return {};
    return "#pragma GCC unroll " + std::to_string(n);
}

std::string CEmitter::vectorizePragma(std::int64_t) const { return "#pragma GCC ivdep"; }

void CEmitter::commentLine(std::string_view text) { m_w.line("// " + escapeCommentText(text)); }

void CEmitter::errorLine(std::string_view fixedMessage) {
    m_w.rawLine("#error \"tessera: " + escapeCommentText(fixedMessage) + "\"");
}

bool CEmitter::validBuffer(int buffer) const {
    return m_kernel && buffer >= 0 && buffer < static_cast<int>(m_kernel->buffers.size());
}

const std::string& CEmitter::bufferName(int buffer) const {
    static const std::string kInvalid = "tsr_invalid_buffer";
    static const std::string kOutOfScope = "tsr_buffer_not_in_scope";
    if (!validBuffer(buffer)) return kInvalid;
    const std::string& n = m_bufferNames[static_cast<std::size_t>(buffer)];
    return n.empty() ? kOutOfScope : n;
}

bool CEmitter::isScalarTemp(int buffer) const {
    if (!validBuffer(buffer)) return false;
    const BufferDecl& b = m_kernel->buffers[static_cast<std::size_t>(buffer)];
    if (b.scope == MemoryScope::Global) return false;
    return b.shape.empty() || (b.shape.size() == 1 && b.shape[0] == 1);
}

std::string CEmitter::bindVar(const lower::Var& v) {
    std::string name = m_localIds.uniqueVar(v.name.empty() ? std::string_view("v") : std::string_view(v.name));
    m_varNames[v.id].push_back(name);
    return name;
}

void CEmitter::unbindVar(const lower::Var& v) {
    auto it = m_varNames.find(v.id);
    if (it != m_varNames.end() && !it->second.empty()) it->second.pop_back();
}

// ---- expressions ----

CEmitter::ExprText CEmitter::expr(const Expr& e) {
    if (!e) return {"tsr_null_expression", kPrecPrimary};
    const ExprNode& n = *e;
    switch (n.kind) {
    case ExprKind::IntImm: return intLiteral(n.intValue, n.dtype);
    case ExprKind::FloatImm: return floatLiteral(n.floatValue, n.dtype);
    case ExprKind::VarRef: {
        auto it = m_varNames.find(n.var.id);
        if (it == m_varNames.end() || it->second.empty())
            return {"tsr_unbound_variable_" + std::to_string(n.var.id), kPrecPrimary};
        return {it->second.back(), kPrecPrimary};
    }
    case ExprKind::Unary: {
        if (n.args.empty()) return {"tsr_malformed_expression", kPrecPrimary};
        const ExprText a = expr(n.args[0]);
        std::string inner = operand(a, kPrecUnary);
        if (n.unary == UnaryOp::Neg) {
            if (!inner.empty() && inner[0] == '-') inner = "(" + inner + ")";
            return {"-" + inner, kPrecUnary};
        }
        return {"!" + inner, kPrecUnary};
    }
    case ExprKind::Binary:
        if (n.args.size() != 2) return {"tsr_malformed_expression", kPrecPrimary};
        return binaryExpr(n);
    case ExprKind::Select: {
        if (n.args.size() != 3) return {"tsr_malformed_expression", kPrecPrimary};
        const ExprText c = expr(n.args[0]), a = expr(n.args[1]), b = expr(n.args[2]);
        return {operand(c, kPrecCond + 1) + " ? " + operand(a, kPrecCond + 1) + " : " + operand(b, kPrecCond + 1),
                kPrecCond};
    }
    case ExprKind::Cast:
        if (n.args.empty()) return {"tsr_malformed_expression", kPrecPrimary};
        return castText(expr(n.args[0]), n.args[0].dtype(), n.dtype);
    case ExprKind::Load: return loadExpr(n);
    case ExprKind::Call: return callExpr(n);
    }
    return {"tsr_malformed_expression", kPrecPrimary};
}

CEmitter::ExprText CEmitter::binaryExpr(const ExprNode& n) {
    const BinaryOp op = n.binary;
    const DType t = n.args[0].dtype();
    const ExprText a = expr(n.args[0]), b = expr(n.args[1]);
    const bool isFloat = ir::isFloatingPoint(t);
    auto call2 = [&](const std::string& fn) { return ExprText{fn + "(" + a.text + ", " + b.text + ")", kPrecPrimary}; };
    switch (op) {
    case BinaryOp::Min: return call2("tsr_min<" + computeType(t) + ">");
    case BinaryOp::Max: return call2("tsr_max<" + computeType(t) + ">");
    case BinaryOp::FloorDiv: return call2("tsr_floordiv<" + computeType(t) + ">");
    case BinaryOp::FloorMod: return call2("tsr_floormod<" + computeType(t) + ">");
    case BinaryOp::Mod:
        if (isFloat) return call2(t == DType::F64 ? "fmod" : "fmodf");
        break;
    default: break;
    }
    int prec = kPrecAdd;
    switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: prec = kPrecAdd; break;
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Mod: prec = kPrecMul; break;
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge: prec = kPrecRel; break;
    case BinaryOp::Eq:
    case BinaryOp::Ne: prec = kPrecEq; break;
    case BinaryOp::And: prec = kPrecAnd; break;
    case BinaryOp::Or: prec = kPrecOr; break;
    default: break;
    }
    // a + -c prints as a - c and a - -c as a + c (same value; integers: not for INT64_MIN)
    if ((op == BinaryOp::Add || op == BinaryOp::Sub) && n.args[1]) {
        const ExprNode& r = *n.args[1];
        const bool signedInt = r.dtype == DType::I8 || r.dtype == DType::I16 || r.dtype == DType::I32 || r.dtype == DType::I64;
        const bool negInt = r.kind == ExprKind::IntImm && signedInt && r.intValue < 0 &&
                            r.intValue != std::numeric_limits<std::int64_t>::min();
        const bool negFloat = r.kind == ExprKind::FloatImm && r.floatValue < 0;
        if (negInt || negFloat) {
            const ExprText mag = negInt ? intLiteral(-r.intValue, r.dtype) : floatLiteral(-r.floatValue, r.dtype);
            return {operand(a, kPrecAdd) + (op == BinaryOp::Add ? " - " : " + ") + operand(mag, kPrecAdd + 1), kPrecAdd};
        }
    }
    std::string left, right;
    if (lower::isComparison(op)) {
        // a comparison operand of a comparison is always parenthesised (compilers warn otherwise)
        left = operand(a, kPrecRel + 1);
        right = operand(b, kPrecRel + 1);
    } else if (op == BinaryOp::And) {
        left = operand(a, kPrecAnd);
        right = operand(b, kPrecAnd);
    } else if (op == BinaryOp::Or) {
        auto orOperand = [&](const ExprText& x) {
            return (x.prec == kPrecAnd && m_style.parens == Parens::Minimal) ? "(" + x.text + ")" : operand(x, kPrecOr);
        };
        left = orOperand(a);
        right = orOperand(b);
    } else {
        left = operand(a, prec);
        right = operand(b, prec + 1);  // left-associative: a - (b - c) keeps its parentheses
    }
    return {left + " " + lower::binaryOpName(op) + " " + right, prec};
}

CEmitter::ExprText CEmitter::castText(const ExprText& a, DType from, DType to) {
    if (from == to) return a;
    if (to == DType::Bool) return {operand(a, kPrecEq + 1) + " != 0", kPrecEq};
    if (isHalf(to)) {
        const std::string arg = computesInFloat(from) ? a.text : "(float)" + operand(a, kPrecUnary);
        return {std::string(to == DType::F16 ? "tsr_round_f16" : "tsr_round_bf16") + "(" + arg + ")", kPrecPrimary};
    }
    if (to == DType::F32 && isHalf(from)) return a;  // already a float in C
    return {"(" + computeType(to) + ")" + operand(a, kPrecUnary), kPrecUnary};
}

CEmitter::ExprText CEmitter::callExpr(const ExprNode& n) {
    if (static_cast<int>(n.args.size()) != lower::intrinsicArity(n.intrinsic))
        return {"tsr_malformed_expression", kPrecPrimary};
    const DType t = n.dtype;
    std::vector<ExprText> args;
    for (const auto& a : n.args) args.push_back(expr(a));
    auto join = [&](const std::string& fn, bool viaDouble) {
        std::string r = fn + "(";
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (i) r += ", ";
            r += viaDouble ? "(double)" + operand(args[i], kPrecUnary) : args[i].text;
        }
        return r + ")";
    };
    if (ir::isFloatingPoint(t)) return {join(intrinsicSpelling(n.intrinsic, t), false), kPrecPrimary};
    // integer (or bool) operands: exact where it makes sense, otherwise through double
    switch (n.intrinsic) {
    case Intrinsic::Abs: return {"tsr_abs<" + computeType(t) + ">(" + args[0].text + ")", kPrecPrimary};
    case Intrinsic::Floor:
    case Intrinsic::Ceil:
    case Intrinsic::Round: return args[0];
    case Intrinsic::Fma:
        return {operand(args[0], kPrecMul) + " * " + operand(args[1], kPrecMul + 1) + " + " +
                    operand(args[2], kPrecAdd + 1),
                kPrecAdd};
    default:
        return {"(" + computeType(t) + ")" + join(intrinsicSpelling(n.intrinsic, DType::F64), true), kPrecUnary};
    }
}

std::string CEmitter::accessText(int buffer, const std::vector<Expr>& indices) {
    if (!validBuffer(buffer)) return bufferName(buffer);
    if (isScalarTemp(buffer)) return bufferName(buffer);
    const BufferDecl& b = m_kernel->buffers[static_cast<std::size_t>(buffer)];
    if (indices.size() != b.shape.size() && !(b.shape.empty() && indices.size() <= 1))
        return "tsr_wrong_index_count[0]";
    std::vector<std::int64_t> strides(b.shape.size(), 1);
    for (std::size_t d = b.shape.size(); d-- > 1;) strides[d - 1] = strides[d] * b.shape[d];
    Expr flat;  // i * s0 + j * s1 + k: left to right, so no parentheses are needed
    for (std::size_t d = 0; d < b.shape.size(); ++d) {
        Expr term = indices[d] * strides[d];
        flat = flat ? flat + term : term;
    }
    if (!flat) flat = lower::intImm(0);
    return bufferName(buffer) + "[" + expr(flat).text + "]";
}

CEmitter::ExprText CEmitter::loadExpr(const ExprNode& n) {
    if (!validBuffer(n.buffer)) return {bufferName(n.buffer), kPrecPrimary};
    const DType bt = m_kernel->buffers[static_cast<std::size_t>(n.buffer)].dtype;
    const std::string access = accessText(n.buffer, n.args);
    ExprText value{access, kPrecPrimary};
    if (bt == DType::F16) value = {"tsr_f16_to_f32(" + access + ")", kPrecPrimary};
    if (bt == DType::BF16) value = {"tsr_bf16_to_f32(" + access + ")", kPrecPrimary};
    if (bt == DType::Bool) value = {access + " != 0", kPrecEq};
    return castText(value, bt, n.dtype);
}

std::string CEmitter::storeValueText(const ExprText& v, DType valueType, DType bufferType) {
    if (isHalf(bufferType)) {
        const std::string arg = computesInFloat(valueType) ? v.text : "(float)" + operand(v, kPrecUnary);
        return std::string(bufferType == DType::F16 ? "tsr_f32_to_f16" : "tsr_f32_to_bf16") + "(" + arg + ")";
    }
    return castText(v, valueType, bufferType).text;
}

// ---- statements ----

void CEmitter::emitStmt(const Stmt& s) {
    if (!s) return;
    const StmtNode& n = *s;
    switch (n.kind) {
    case StmtKind::Seq:
        for (const auto& c : n.body) emitStmt(c);
        break;
    case StmtKind::For: emitFor(n); break;
    case StmtKind::If: emitIf(n, false); break;
    case StmtKind::Let: {
        if (n.body.empty() || !stmtUses(n.body[0], n.var.id, -1)) {  // unused: no declaration
            if (!n.body.empty()) emitStmt(n.body[0]);
            break;
        }
        const ExprText v = expr(n.value);
        const std::string name = bindVar(n.var);
        m_w.line("const " + computeType(n.var.dtype) + " " + name + " = " + v.text + ";");
        if (!n.body.empty()) emitStmt(n.body[0]);
        unbindVar(n.var);
        break;
    }
    case StmtKind::Store: {
        if (!validBuffer(n.buffer)) {
            errorLine("store to a buffer index the kernel does not have");
            break;
        }
        const DType bt = m_kernel->buffers[static_cast<std::size_t>(n.buffer)].dtype;
        const std::string target = accessText(n.buffer, n.indices);
        m_w.line(target + " = " + storeValueText(expr(n.value), n.value.dtype(), bt) + ";");
        break;
    }
    case StmtKind::Allocate: {
        if (!validBuffer(n.buffer)) {
            errorLine("allocation of a buffer index the kernel does not have");
            break;
        }
        if (n.body.empty() || !stmtUses(n.body[0], -1, n.buffer)) {  // unused: no declaration
            if (!n.body.empty()) emitStmt(n.body[0]);
            break;
        }
        const auto idx = static_cast<std::size_t>(n.buffer);
        const std::string saved = m_bufferNames[idx];
        const std::string name = m_localIds.unique(m_kernel->buffers[idx].name, "t_");
        m_bufferNames[idx] = name;
        emitAllocateDecl(n.buffer, name);
        if (!n.body.empty()) emitStmt(n.body[0]);
        m_bufferNames[idx] = saved;
        break;
    }
    case StmtKind::Barrier: emitBarrier(); break;
    case StmtKind::Evaluate: m_w.line("(void)" + operand(expr(n.value), kPrecUnary) + ";"); break;
    case StmtKind::Comment: commentLine(n.text); break;
    case StmtKind::Mma: emitMma(n); break;
    }
}

void CEmitter::emitMma(const StmtNode&) {
    errorLine("a warp MMA (tensor cores) is a CUDA statement; this target has none");
}

void CEmitter::emitIf(const StmtNode& s, bool) {
    m_w.line("if (" + expr(s.value).text + ") {");
    m_w.indent();
    if (!s.body.empty()) emitStmt(s.body[0]);
    m_w.dedent();
    Stmt rest = s.elseBody;
    while (rest) {
        Stmt r = rest;
        if (r->kind == StmtKind::Seq && r->body.size() == 1 && r->body[0]) r = r->body[0];
        if (r->kind == StmtKind::If) {  // else if chain
            m_w.line("} else if (" + expr(r->value).text + ") {");
            m_w.indent();
            if (!r->body.empty()) emitStmt(r->body[0]);
            m_w.dedent();
            rest = r->elseBody;
        } else {
            m_w.line("} else {");
            m_w.indent();
            emitStmt(rest);
            m_w.dedent();
            rest = nullptr;
        }
    }
    m_w.line("}");
}

void CEmitter::beginLoop(const StmtNode& s, const std::vector<std::string>& pragmas) {
    const ExprText extent = expr(s.extent);
    for (const auto& p : pragmas)
        if (!p.empty()) m_w.line(p);
    const std::string v = bindVar(s.var);
    std::string header = "for (int64_t " + v + " = 0; " + v + " < " + operand(extent, kPrecRel + 1) + "; ++" + v + ") {";
    if (!s.text.empty()) header += "  // " + escapeCommentText(s.text);
    m_w.line(header);
    m_w.indent();
}

void CEmitter::endLoop(const StmtNode& s) {
    m_w.dedent();
    m_w.line("}");
    // the loop variable's C scope ends with the loop: its name may be used again by a later loop
    auto it = m_varNames.find(s.var.id);
    if (it != m_varNames.end() && !it->second.empty()) m_localIds.release(it->second.back());
    unbindVar(s.var);
}

void CEmitter::emitLoop(const StmtNode& s, const std::vector<std::string>& pragmas) {
    beginLoop(s, pragmas);
    if (!s.body.empty()) emitStmt(s.body[0]);
    endLoop(s);
}

void CEmitter::emitFor(const StmtNode& s) {
    std::vector<std::string> pragmas;
    if (s.forKind == ForKind::Unroll) {
        std::int64_t n = s.factor;
        std::int64_t extent = 0;
        if (n <= 0 && s.extent.isIntImm(&extent)) n = extent;
        pragmas.push_back(unrollPragma(std::min<std::int64_t>(n, 64)));
    } else if (s.forKind == ForKind::Vectorize) {
        pragmas.push_back(vectorizePragma(s.factor));
    }
    emitLoop(s, pragmas);
}

void CEmitter::emitBarrier() { m_w.line("// barrier: no-op (the workers of a block run one after another)"); }

void CEmitter::emitAllocateDecl(int buffer, const std::string& name) {
    const BufferDecl& b = m_kernel->buffers[static_cast<std::size_t>(buffer)];
    const std::string comment = "  // " + std::string(lower::memoryScopeName(b.scope)) + " " +
                                std::string(ir::dtypeName(b.dtype)) + shapeText(b.shape);
    if (isScalarTemp(buffer)) {
        m_w.line(storageType(b.dtype) + " " + name + ";" + comment);
    } else if (b.bytes() > kHeapThresholdBytes) {
        const std::string heap = m_localIds.unique(name + "_heap");
        m_w.line("std::unique_ptr<" + storageType(b.dtype) + "[]> " + heap + "(new " + storageType(b.dtype) + "[" +
                 std::to_string(b.numElements()) + "]);" + comment);
        m_w.line(storageType(b.dtype) + "* " + restrictQualifier() + " " + name + " = " + heap + ".get();");
    } else {
        m_w.line(storageType(b.dtype) + " " + name + "[" + std::to_string(b.numElements()) + "];" + comment);
    }
}

void CEmitter::emitKernelSignature(const lower::Kernel& k, const std::string& entry) {
    m_w.line(kernelQualifiers() + " void " + entry + "(void* const* args) {");
    m_w.indent();
    for (std::size_t i = 0; i < k.params.size(); ++i) {
        const int p = k.params[i];
        if (!validBuffer(p)) {
            errorLine("kernel parameter refers to a buffer index the kernel does not have");
            continue;
        }
        const BufferDecl& b = k.buffers[static_cast<std::size_t>(p)];
        const std::string cq = b.role == BufferRole::Input ? "const " : "";
        const std::string type = cq + storageType(b.dtype) + "*";
        m_w.line(type + " " + restrictQualifier() + " " + paramName(i) + " = static_cast<" + type + ">(args[" +
                 std::to_string(i) + "]);");
        if (!stmtUses(k.body, -1, p)) m_w.line("(void)" + paramName(i) + ";  // not used by this kernel");
    }
}

void CEmitter::emitHeaderComment(const lower::Kernel& k, const std::string& entry) {
    m_w.rawLine("// " + std::string(76, '-'));
    m_w.rawLine("// Kernel " + entry + " (IR name \"" + escapeCommentText(k.name) + "\")");
    if (!k.sourceOps.empty() || !k.opType.empty()) {
        std::string ops;
        for (std::size_t i = 0; i < k.sourceOps.size(); ++i)
            ops += (i ? ", \"" : "\"") + escapeCommentText(k.sourceOps[i]) + "\"";
        if (!k.opType.empty()) ops += (ops.empty() ? "" : " ") + std::string("(op type ") + escapeCommentText(k.opType) + ")";
        m_w.rawLine("//   source ops: " + ops);
    }
    for (const auto& m : k.mappings) m_w.rawLine("//   mapping: " + escapeCommentText(m));
    for (const auto& n : k.notes) m_w.rawLine("//   note: " + escapeCommentText(n, 1000));  // notes whole (the tile rule's reasons run long)
    for (std::size_t i = 0; i < k.params.size(); ++i) {
        const int p = k.params[i];
        if (!validBuffer(p)) continue;
        const BufferDecl& b = k.buffers[static_cast<std::size_t>(p)];
        const char* role = b.role == BufferRole::Input ? "input" : b.role == BufferRole::Output ? "output" : "temp";
        m_w.rawLine("//   args[" + std::to_string(i) + "] " + paramName(i) + ": " + std::string(ir::dtypeName(b.dtype)) +
                    shapeText(b.shape) + " " + role + " \"" + escapeCommentText(b.name) + "\"");
    }
    m_w.rawLine("// " + std::string(76, '-'));
}

void CEmitter::emitKernel(int index, const lower::Kernel& k, const std::string& entry, GeneratedSource& out) {
    m_kernel = &k;
    m_localIds.clear();
    m_varNames.clear();
    m_bufferNames.assign(k.buffers.size(), std::string());
    m_paramNames.clear();
    for (int p : k.params) {
        if (!validBuffer(p)) {
            m_paramNames.push_back("tsr_invalid_buffer");
            continue;
        }
        const BufferDecl& b = k.buffers[static_cast<std::size_t>(p)];
        const std::string name = m_localIds.unique(b.name, b.role == BufferRole::Output ? "out_" : "in_");
        m_bufferNames[static_cast<std::size_t>(p)] = name;
        m_paramNames.push_back(name);
    }
    const int first = m_w.lines() + 1;
    emitHeaderComment(k, entry);
    emitKernelSignature(k, entry);
    emitStmt(k.body);
    m_w.dedent();
    m_w.line("}");
    const int last = m_w.lines();
    m_w.blank();
    if (k.sourceOps.empty()) {
        out.sourceMap.push_back({index, first, last, k.name});
    } else {
        for (const auto& op : k.sourceOps) out.sourceMap.push_back({index, first, last, op});
    }
    m_kernel = nullptr;
}

GeneratedSource CEmitter::emitModule(const std::vector<const lower::Kernel*>& kernels) {
    GeneratedSource out;
    m_w.clear();
    m_moduleIds.clear();
    m_sharedPreludeBytes = std::string::npos;
    emitPrelude();
    out.sharedPreludeBytes = m_sharedPreludeBytes == std::string::npos ? m_w.text().size() : m_sharedPreludeBytes;
    for (std::size_t i = 0; i < kernels.size(); ++i) {
        if (!kernels[i]) {
            out.entryPoints.emplace_back();
            out.kernelSpans.push_back({m_w.text().size(), 0});
            continue;
        }
        const std::string entry = m_moduleIds.unique(kernels[i]->name, "tk_");
        out.entryPoints.push_back(entry);
        const std::size_t begin = m_w.text().size();
        emitKernel(static_cast<int>(i), *kernels[i], entry, out);
        out.kernelSpans.push_back({begin, m_w.text().size() - begin});
    }
    emitEpilogue();
    out.source = m_w.text();
    return out;
}

namespace {

// Host C++ definitions of the helpers whose text differs by target (emitCommonHelpers).
const char* const kHostConversions[] = {
    "@ float tsr_f16_to_f32(uint16_t h) {",
    "    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;",
    "    const uint32_t exponent = (h >> 10) & 0x1fu;",
    "    const uint32_t mantissa = h & 0x3ffu;",
    "    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24",
    "        const float v = static_cast<float>(mantissa) * 5.9604644775390625e-8f;",
    "        return sign ? -v : v;",
    "    }",
    "    const uint32_t bits = exponent == 31 ? (sign | 0x7f800000u | (mantissa << 13))",
    "                                         : (sign | ((exponent + 112u) << 23) | (mantissa << 13));",
    "    float f;",
    "    std::memcpy(&f, &bits, sizeof f);",
    "    return f;",
    "}",
    "@ uint16_t tsr_f32_to_f16(float f) {  // round to nearest even",
    "    uint32_t x;",
    "    std::memcpy(&x, &f, sizeof x);",
    "    const uint32_t sign = (x >> 16) & 0x8000u;",
    "    const uint32_t a = x & 0x7fffffffu;",
    "    if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN",
    "    if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: infinity",
    "    if (a < 0x38800000u) {  // below 2^-14: subnormal half (or zero)",
    "        float m;",
    "        std::memcpy(&m, &a, sizeof m);",
    "        return static_cast<uint16_t>(sign | static_cast<uint32_t>(nearbyintf(m * 16777216.0f)));",
    "    }",
    "    uint32_t h = (((a >> 23) - 112u) << 10) | ((a >> 13) & 0x3ffu);",
    "    const uint32_t rest = a & 0x1fffu;",
    "    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;",
    "    return static_cast<uint16_t>(sign | h);",
    "}",
    "@ float tsr_bf16_to_f32(uint16_t b) {",
    "    const uint32_t bits = static_cast<uint32_t>(b) << 16;",
    "    float f;",
    "    std::memcpy(&f, &bits, sizeof f);",
    "    return f;",
    "}",
    "@ uint16_t tsr_f32_to_bf16(float f) {  // round to nearest even",
    "    uint32_t x;",
    "    std::memcpy(&x, &f, sizeof x);",
    "    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN",
    "    x += 0x7fffu + ((x >> 16) & 1u);",
    "    return static_cast<uint16_t>(x >> 16);",
    "}",
};
const char* const kHostFloorOps[] = {
    "template <typename T> @ T tsr_floordiv(T a, T b) {",
    "    if constexpr (std::is_floating_point<T>::value) {",
    "        return std::floor(a / b);",
    "    } else {",
    "        T q = static_cast<T>(a / b);",
    "        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;",
    "        return q;",
    "    }",
    "}",
    "template <typename T> @ T tsr_floormod(T a, T b) {",
    "    if constexpr (std::is_floating_point<T>::value) {",
    "        return a - std::floor(a / b) * b;",
    "    } else {",
    "        T r = static_cast<T>(a % b);",
    "        if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);",
    "        return r;",
    "    }",
    "}",
};
const char* const kHostRsqrt[] = {
    "@ float tsr_rsqrtf(float x) { return 1.0f / sqrtf(x); }",
    "@ double tsr_rsqrt(double x) { return 1.0 / sqrt(x); }",
};

}  // namespace

void CEmitter::emitCommonHelpers() { emitHelpers(kHostConversions, kHostFloorOps, kHostRsqrt); }

void CEmitter::emitHelpers(HelperLines conversions, HelperLines floorOps, HelperLines more) {
    // Between the conversions and floorOps: rounding through the conversions, min/max/abs, and
    // the comment that introduces floorOps.
    static const char* const roundingMinMax[] = {
        "@ float tsr_round_f16(float f) { return tsr_f16_to_f32(tsr_f32_to_f16(f)); }",
        "@ float tsr_round_bf16(float f) { return tsr_bf16_to_f32(tsr_f32_to_bf16(f)); }",
        "// min/max: b < a ? b : a and a < b ? b : a (a NaN first operand propagates; NaN handling is",
        "// otherwise unspecified, as ONNX leaves it)",
        "template <typename T> @ T tsr_min(T a, T b) { return b < a ? b : a; }",
        "template <typename T> @ T tsr_max(T a, T b) { return a < b ? b : a; }",
        "template <typename T> @ T tsr_abs(T a) { return a < 0 ? static_cast<T>(-a) : a; }",
        "// floordiv/floormod round toward negative infinity (integers); floor(a / b) for floats",
    };
    static const char* const sigmoid[] = {
        "@ float tsr_sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }",
        "@ double tsr_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }",
    };
    m_w.rawLine("// ---- helpers: f16/bf16 values are uint16_t in memory and float in arithmetic ----");
    const std::string q = helperQualifiers();
    for (HelperLines part : {conversions, HelperLines(roundingMinMax), floorOps, HelperLines(sigmoid), more}) {
        for (const char* l : part) {
            std::string s(l);
            const auto at = s.find('@');
            if (at != std::string::npos && s.find("//") > at) s.replace(at, 1, q);
            m_w.rawLine(s);
        }
    }
}

}  // namespace tessera::codegen
