#include "core/lower/kernel_ir.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace tessera::lower {

const char* memoryScopeName(MemoryScope s) {
    switch (s) {
    case MemoryScope::Global: return "global";
    case MemoryScope::Shared: return "shared";
    case MemoryScope::Local: return "local";
    }
    return "?";
}

std::int64_t BufferDecl::numElements() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

std::int64_t BufferDecl::bytes() const {
    return numElements() * static_cast<std::int64_t>(ir::dtypeSize(dtype));
}

const char* unaryOpName(UnaryOp op) { return op == UnaryOp::Neg ? "-" : "!"; }

const char* binaryOpName(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
    case BinaryOp::FloorDiv: return "floordiv";
    case BinaryOp::FloorMod: return "floormod";
    case BinaryOp::Min: return "min";
    case BinaryOp::Max: return "max";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::And: return "&&";
    case BinaryOp::Or: return "||";
    }
    return "?";
}

const char* intrinsicName(Intrinsic f) {
    switch (f) {
    case Intrinsic::Exp: return "exp";
    case Intrinsic::Log: return "log";
    case Intrinsic::Sqrt: return "sqrt";
    case Intrinsic::Rsqrt: return "rsqrt";
    case Intrinsic::Sin: return "sin";
    case Intrinsic::Cos: return "cos";
    case Intrinsic::Tan: return "tan";
    case Intrinsic::Tanh: return "tanh";
    case Intrinsic::Sigmoid: return "sigmoid";
    case Intrinsic::Erf: return "erf";
    case Intrinsic::Abs: return "abs";
    case Intrinsic::Floor: return "floor";
    case Intrinsic::Ceil: return "ceil";
    case Intrinsic::Round: return "round";
    case Intrinsic::Pow: return "pow";
    case Intrinsic::Atan2: return "atan2";
    case Intrinsic::Fma: return "fma";
    }
    return "?";
}

int intrinsicArity(Intrinsic f) {
    switch (f) {
    case Intrinsic::Pow:
    case Intrinsic::Atan2: return 2;
    case Intrinsic::Fma: return 3;
    default: return 1;
    }
}

bool isComparison(BinaryOp op) { return op >= BinaryOp::Lt && op <= BinaryOp::Ne; }
bool isLogical(BinaryOp op) { return op == BinaryOp::And || op == BinaryOp::Or; }

DType Expr::dtype() const { return m_node ? m_node->dtype : DType::Undefined; }

bool Expr::isIntImm(std::int64_t* v) const {
    if (!m_node || m_node->kind != ExprKind::IntImm) return false;
    if (v) *v = m_node->intValue;
    return true;
}

namespace {

Expr make(ExprNode n) { return Expr(std::make_shared<const ExprNode>(std::move(n))); }

bool isFloatImm(const Expr& e, double* v = nullptr) {
    if (!e || e->kind != ExprKind::FloatImm) return false;
    if (v) *v = e->floatValue;
    return true;
}

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

}  // namespace

Expr intImm(std::int64_t v, DType t) {
    ExprNode n;
    n.kind = ExprKind::IntImm;
    n.dtype = t;
    n.intValue = v;
    return make(std::move(n));
}

Expr boolImm(bool v) { return intImm(v ? 1 : 0, DType::Bool); }

Expr floatImm(double v, DType t) {
    ExprNode n;
    n.kind = ExprKind::FloatImm;
    n.dtype = t;
    n.floatValue = v;
    return make(std::move(n));
}

Expr constant(double v, DType t) {
    if (ir::isFloatingPoint(t)) return floatImm(v, t);
    if (t == DType::Bool) return boolImm(v != 0.0);
    return intImm(static_cast<std::int64_t>(v), t);
}

Expr varRef(const Var& v) {
    ExprNode n;
    n.kind = ExprKind::VarRef;
    n.dtype = v.dtype;
    n.var = v;
    return make(std::move(n));
}

Expr unary(UnaryOp op, Expr a) {
    std::int64_t v = 0;
    if (a.isIntImm(&v) && a.dtype() != DType::Bool && op == UnaryOp::Neg) return intImm(-v, a.dtype());
    ExprNode n;
    n.kind = ExprKind::Unary;
    n.unary = op;
    n.dtype = op == UnaryOp::Not ? DType::Bool : a.dtype();
    n.args = {std::move(a)};
    return make(std::move(n));
}

Expr binary(BinaryOp op, Expr a, Expr b) {
    // An integer immediate meeting a float operand becomes a float immediate of that type.
    std::int64_t ia = 0, ib = 0;
    if (ir::isFloatingPoint(a.dtype()) && b.isIntImm(&ib) && !isLogical(op))
        b = floatImm(static_cast<double>(ib), a.dtype());
    if (ir::isFloatingPoint(b.dtype()) && a.isIntImm(&ia) && !isLogical(op))
        a = floatImm(static_cast<double>(ia), b.dtype());
    const bool intA = a.isIntImm(&ia), intB = b.isIntImm(&ib);
    const bool integerType = ir::isInteger(a.dtype()) && ir::isInteger(b.dtype());
    DType result = a.dtype();
    if (isComparison(op) || isLogical(op)) result = DType::Bool;
    if (integerType && intA && intB) {
        switch (op) {
        case BinaryOp::Add: return intImm(ia + ib, result);
        case BinaryOp::Sub: return intImm(ia - ib, result);
        case BinaryOp::Mul: return intImm(ia * ib, result);
        case BinaryOp::Div:
            if (ib != 0) return intImm(ia / ib, result);
            break;
        case BinaryOp::Mod:
            if (ib != 0) return intImm(ia % ib, result);
            break;
        case BinaryOp::FloorDiv:
            if (ib != 0) return intImm(floorDiv(ia, ib), result);
            break;
        case BinaryOp::FloorMod:
            if (ib != 0) return intImm(ia - floorDiv(ia, ib) * ib, result);
            break;
        case BinaryOp::Min: return intImm(std::min(ia, ib), result);
        case BinaryOp::Max: return intImm(std::max(ia, ib), result);
        case BinaryOp::Lt: return boolImm(ia < ib);
        case BinaryOp::Le: return boolImm(ia <= ib);
        case BinaryOp::Gt: return boolImm(ia > ib);
        case BinaryOp::Ge: return boolImm(ia >= ib);
        case BinaryOp::Eq: return boolImm(ia == ib);
        case BinaryOp::Ne: return boolImm(ia != ib);
        default: break;
        }
    }
    if (integerType) {
        if (op == BinaryOp::Add && intB && ib == 0) return a;
        if (op == BinaryOp::Add && intA && ia == 0) return b;
        if (op == BinaryOp::Sub && intB && ib == 0) return a;
        if (op == BinaryOp::Mul && intB && ib == 1) return a;
        if (op == BinaryOp::Mul && intA && ia == 1) return b;
        if (op == BinaryOp::Mul && ((intB && ib == 0) || (intA && ia == 0))) return intImm(0, result);
        if ((op == BinaryOp::Div || op == BinaryOp::FloorDiv) && intB && ib == 1) return a;
        if ((op == BinaryOp::Mod || op == BinaryOp::FloorMod) && intB && ib == 1) return intImm(0, result);
    }
    if (op == BinaryOp::And && a.dtype() == DType::Bool && b.dtype() == DType::Bool) {
        if (intA) return ia ? b : boolImm(false);
        if (intB) return ib ? a : boolImm(false);
    }
    ExprNode n;
    n.kind = ExprKind::Binary;
    n.binary = op;
    n.dtype = result;
    n.args = {std::move(a), std::move(b)};
    return make(std::move(n));
}

Expr select(Expr cond, Expr a, Expr b) {
    std::int64_t c = 0;
    if (cond.isIntImm(&c)) return c ? a : b;
    ExprNode n;
    n.kind = ExprKind::Select;
    n.dtype = a.dtype();
    n.args = {std::move(cond), std::move(a), std::move(b)};
    return make(std::move(n));
}

Expr cast(Expr a, DType to) {
    if (a.dtype() == to) return a;
    std::int64_t iv = 0;
    double fv = 0;
    if (a.isIntImm(&iv) && ir::isInteger(to)) return intImm(iv, to);
    if (a.isIntImm(&iv) && ir::isFloatingPoint(to)) return floatImm(static_cast<double>(iv), to);
    if (isFloatImm(a, &fv) && ir::isFloatingPoint(to)) return floatImm(fv, to);
    ExprNode n;
    n.kind = ExprKind::Cast;
    n.dtype = to;
    n.args = {std::move(a)};
    return make(std::move(n));
}

Expr load(int buffer, DType dtype, std::vector<Expr> indices) {
    ExprNode n;
    n.kind = ExprKind::Load;
    n.dtype = dtype;
    n.buffer = buffer;
    n.args = std::move(indices);
    return make(std::move(n));
}

Expr call(Intrinsic f, std::vector<Expr> args) {
    if (static_cast<int>(args.size()) != intrinsicArity(f))
        throw std::invalid_argument(std::string("kernel IR: wrong number of arguments to ") + intrinsicName(f));
    ExprNode n;
    n.kind = ExprKind::Call;
    n.intrinsic = f;
    n.dtype = args.front().dtype();
    n.args = std::move(args);
    return make(std::move(n));
}

Expr operator+(Expr a, Expr b) { return binary(BinaryOp::Add, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return binary(BinaryOp::Sub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return binary(BinaryOp::Mul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return binary(BinaryOp::Div, std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return binary(BinaryOp::Mod, std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return binary(BinaryOp::Lt, std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return binary(BinaryOp::Le, std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return binary(BinaryOp::Gt, std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return binary(BinaryOp::Ge, std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return binary(BinaryOp::And, std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return binary(BinaryOp::Or, std::move(a), std::move(b)); }
Expr operator+(Expr a, std::int64_t b) { return std::move(a) + intImm(b); }
Expr operator*(Expr a, std::int64_t b) { return std::move(a) * intImm(b); }
Expr minOf(Expr a, Expr b) { return binary(BinaryOp::Min, std::move(a), std::move(b)); }
Expr maxOf(Expr a, Expr b) { return binary(BinaryOp::Max, std::move(a), std::move(b)); }

const char* forKindName(ForKind k) {
    switch (k) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Unroll: return "unroll";
    case ForKind::Vectorize: return "vectorize";
    case ForKind::Blocks: return "blocks";
    case ForKind::Threads: return "threads";
    }
    return "?";
}

namespace {
Stmt makeStmt(StmtNode n) { return std::make_shared<const StmtNode>(std::move(n)); }
}  // namespace

Stmt seq(std::vector<Stmt> stmts) {
    StmtNode n;
    n.kind = StmtKind::Seq;
    for (auto& s : stmts) {
        if (!s) continue;
        if (s->kind == StmtKind::Seq)
            n.body.insert(n.body.end(), s->body.begin(), s->body.end());
        else
            n.body.push_back(std::move(s));
    }
    return makeStmt(std::move(n));
}

Stmt forLoop(Var v, Expr extent, Stmt body, ForKind kind, std::int64_t factor, std::string annotation) {
    StmtNode n;
    n.kind = StmtKind::For;
    n.var = std::move(v);
    n.extent = std::move(extent);
    n.body = {std::move(body)};
    n.forKind = kind;
    n.factor = factor;
    n.text = std::move(annotation);
    return makeStmt(std::move(n));
}

Stmt ifThen(Expr cond, Stmt thenBody, Stmt elseBody) {
    StmtNode n;
    n.kind = StmtKind::If;
    n.value = std::move(cond);
    n.body = {std::move(thenBody)};
    n.elseBody = std::move(elseBody);
    return makeStmt(std::move(n));
}

Stmt let(Var v, Expr value, Stmt body) {
    StmtNode n;
    n.kind = StmtKind::Let;
    n.var = std::move(v);
    n.value = std::move(value);
    n.body = {std::move(body)};
    return makeStmt(std::move(n));
}

Stmt store(int buffer, std::vector<Expr> indices, Expr value) {
    StmtNode n;
    n.kind = StmtKind::Store;
    n.buffer = buffer;
    n.indices = std::move(indices);
    n.value = std::move(value);
    return makeStmt(std::move(n));
}

Stmt allocate(int buffer, Stmt body) {
    StmtNode n;
    n.kind = StmtKind::Allocate;
    n.buffer = buffer;
    n.body = {std::move(body)};
    return makeStmt(std::move(n));
}

Stmt barrier() {
    StmtNode n;
    n.kind = StmtKind::Barrier;
    return makeStmt(std::move(n));
}

Stmt evaluate(Expr e) {
    StmtNode n;
    n.kind = StmtKind::Evaluate;
    n.value = std::move(e);
    return makeStmt(std::move(n));
}

Stmt comment(std::string text) {
    StmtNode n;
    n.kind = StmtKind::Comment;
    n.text = std::move(text);
    return makeStmt(std::move(n));
}

Stmt mma(int acc, std::vector<Expr> accIndices, MmaInfo info) {
    StmtNode n;
    n.kind = StmtKind::Mma;
    n.buffer = acc;
    n.indices = std::move(accIndices);
    n.mma = std::make_shared<const MmaInfo>(std::move(info));
    return makeStmt(std::move(n));
}

const char* mmaPrecisionName(MmaPrecision p) { return p == MmaPrecision::Tf32 ? "tf32" : "tf32x3"; }

void forEachMmaExpr(const MmaInfo& m, const std::function<void(const Expr&)>& f) {
    for (const Expr& e : m.a.base) f(e);
    for (const Expr& e : m.b.base) f(e);
    f(m.lane);
}

int Kernel::addBuffer(BufferDecl b) {
    buffers.push_back(std::move(b));
    return static_cast<int>(buffers.size()) - 1;
}

Var Kernel::newVar(std::string name, DType t) {
    Var v;
    v.id = nextVarId++;
    v.name = std::move(name);
    v.dtype = t;
    return v;
}

// ---------------------------------------------------------------------------------------------
// Printer
// ---------------------------------------------------------------------------------------------

namespace {

std::string fmtDouble(double v, DType t) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    std::ostringstream os;
    os.precision(17);
    os << v;
    std::string s = os.str();
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    if (t == DType::F32) s += "f";
    return s;
}

std::string varName(const Var& v) { return (v.name.empty() ? std::string("v") : v.name) + "_" + std::to_string(v.id); }

std::string shapeStr(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

/// Buffer names in the printer are the source names made printable (no newlines or control chars).
std::string printable(const std::string& s) {
    std::string r;
    for (unsigned char c : s) r += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
    return r;
}

class Printer {
public:
    explicit Printer(const Kernel& k) : m_k(k) {}

    std::string expr(const Expr& e) const {
        if (!e) return "<null>";
        switch (e->kind) {
        case ExprKind::IntImm:
            if (e->dtype == DType::Bool) return e->intValue ? "true" : "false";
            return std::to_string(e->intValue);
        case ExprKind::FloatImm: return fmtDouble(e->floatValue, e->dtype);
        case ExprKind::VarRef: return varName(e->var);
        case ExprKind::Unary: return std::string(unaryOpName(e->unary)) + "(" + expr(e->args[0]) + ")";
        case ExprKind::Binary: {
            const auto op = e->binary;
            if (op == BinaryOp::Min || op == BinaryOp::Max || op == BinaryOp::FloorDiv || op == BinaryOp::FloorMod)
                return std::string(binaryOpName(op)) + "(" + expr(e->args[0]) + ", " + expr(e->args[1]) + ")";
            return "(" + expr(e->args[0]) + " " + binaryOpName(op) + " " + expr(e->args[1]) + ")";
        }
        case ExprKind::Select:
            return "select(" + expr(e->args[0]) + ", " + expr(e->args[1]) + ", " + expr(e->args[2]) + ")";
        case ExprKind::Cast: return std::string(ir::dtypeName(e->dtype)) + "(" + expr(e->args[0]) + ")";
        case ExprKind::Load: return bufName(e->buffer) + indexList(e->args);
        case ExprKind::Call: {
            std::string r = std::string(intrinsicName(e->intrinsic)) + "(";
            for (std::size_t i = 0; i < e->args.size(); ++i) r += (i ? ", " : "") + expr(e->args[i]);
            return r + ")";
        }
        }
        return "?";
    }

    void stmt(const Stmt& s, int indent, std::ostringstream& os) const {
        if (!s) return;
        const std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
        switch (s->kind) {
        case StmtKind::Seq:
            for (const auto& c : s->body) stmt(c, indent, os);
            break;
        case StmtKind::For: {
            os << pad;
            if (s->forKind != ForKind::Serial) os << forKindName(s->forKind) << (s->factor ? "(" + std::to_string(s->factor) + ")" : "") << " ";
            os << "for " << varName(s->var) << " in 0.." << expr(s->extent) << " {";
            if (!s->text.empty()) os << "  // " << printable(s->text);
            os << "\n";
            stmt(s->body[0], indent + 1, os);
            os << pad << "}\n";
            break;
        }
        case StmtKind::If:
            os << pad << "if " << expr(s->value) << " {\n";
            stmt(s->body[0], indent + 1, os);
            if (s->elseBody) {
                os << pad << "} else {\n";
                stmt(s->elseBody, indent + 1, os);
            }
            os << pad << "}\n";
            break;
        case StmtKind::Let:
            os << pad << "let " << varName(s->var) << ": " << ir::dtypeName(s->var.dtype) << " = " << expr(s->value) << "\n";
            stmt(s->body[0], indent, os);
            break;
        case StmtKind::Store:
            os << pad << bufName(s->buffer) << indexList(s->indices) << " = " << expr(s->value) << "\n";
            break;
        case StmtKind::Allocate: {
            const auto& b = m_k.buffers.at(static_cast<std::size_t>(s->buffer));
            os << pad << "alloc " << bufName(s->buffer) << ": " << ir::dtypeName(b.dtype) << shapeStr(b.shape) << " "
               << memoryScopeName(b.scope) << (b.perThread ? " per-thread" : "") << "\n";
            stmt(s->body[0], indent, os);
            break;
        }
        case StmtKind::Barrier: os << pad << "barrier\n"; break;
        case StmtKind::Evaluate: os << pad << expr(s->value) << "\n"; break;
        case StmtKind::Comment: os << pad << "// " << printable(s->text) << "\n"; break;
        case StmtKind::Mma: {
            // The four accumulator elements from the last index on; each operand's element (0, 0)
            // and its index step per tile row and column in each dim.
            std::string acc = indexList(s->indices);
            if (!s->indices.empty()) acc = acc.substr(0, acc.size() - 1) + " +0..3]";
            os << pad << "mma.m16n8k8." << (s->mma ? mmaPrecisionName(s->mma->precision) : "?") << " " << bufName(s->buffer)
               << acc << " += ";
            if (s->mma) {
                os << "A(" << operand(s->mma->a) << ") * B(" << operand(s->mma->b) << ") lane " << expr(s->mma->lane);
            }
            os << "\n";
            break;
        }
        }
    }

    std::string operand(const MmaOperand& o) const {
        std::string r = bufName(o.buffer) + indexList(o.base) + " step per row (";
        for (std::size_t i = 0; i < o.stride.size(); ++i) r += (i ? ", " : "") + std::to_string(o.stride[i].row);
        r += ") per column (";
        for (std::size_t i = 0; i < o.stride.size(); ++i) r += (i ? ", " : "") + std::to_string(o.stride[i].col);
        return r + ")";
    }

    std::string bufName(int b) const {
        if (b < 0 || b >= static_cast<int>(m_k.buffers.size())) return "<buffer " + std::to_string(b) + ">";
        return printable(m_k.buffers[static_cast<std::size_t>(b)].name);
    }

private:
    std::string indexList(const std::vector<Expr>& idx) const {
        std::string r = "[";
        for (std::size_t i = 0; i < idx.size(); ++i) r += (i ? ", " : "") + expr(idx[i]);
        return r + "]";
    }
    const Kernel& m_k;
};

}  // namespace

std::string printExpr(const Kernel& k, const Expr& e) { return Printer(k).expr(e); }

std::string printKernel(const Kernel& k) {
    Printer p(k);
    std::ostringstream os;
    os << "kernel " << printable(k.name) << "(";
    for (std::size_t i = 0; i < k.params.size(); ++i) {
        const auto& b = k.buffers.at(static_cast<std::size_t>(k.params[i]));
        os << (i ? ", " : "") << (b.role == BufferRole::Input ? "in " : b.role == BufferRole::Output ? "out " : "")
           << p.bufName(k.params[i]) << ": " << ir::dtypeName(b.dtype) << shapeStr(b.shape);
    }
    os << ")\n";
    if (!k.sourceOps.empty()) {
        os << "  // ops:";
        for (const auto& o : k.sourceOps) os << " " << printable(o);
        if (!k.opType.empty()) os << " (" << k.opType << ")";
        os << "\n";
    }
    for (const auto& m : k.mappings) os << "  // " << printable(m) << "\n";
    for (const auto& n : k.notes) os << "  // " << printable(n) << "\n";
    p.stmt(k.body, 1, os);
    return os.str();
}

}  // namespace tessera::lower
