#include "tests/test_support/kernel_eval.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace tessera::lower {

std::uint16_t floatToHalfBits(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t a = x & 0x7fffffffu;
    if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);
    if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
    if (a < 0x38800000u) {
        float m;
        std::memcpy(&m, &a, sizeof m);
        return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(m * 16777216.0f)));
    }
    std::uint32_t h = (((a >> 23) - 112u) << 10) | ((a >> 13) & 0x3ffu);
    const std::uint32_t rest = a & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
}

float halfBitsToFloat(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu;
    const std::uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0) {
        const float v = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    const std::uint32_t bits = exponent == 31 ? (sign | 0x7f800000u | (mantissa << 13))
                                              : (sign | ((exponent + 112u) << 23) | (mantissa << 13));
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

std::uint16_t floatToBf16Bits(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return static_cast<std::uint16_t>(x >> 16);
}

float bf16BitsToFloat(std::uint16_t b) {
    const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

namespace {

/// A comparison operator applied to two values of one C++ type (double, int64 or uint64).
template <typename T>
bool compareAs(BinaryOp op, T x, T y) {
    switch (op) {
    case BinaryOp::Lt: return x < y;
    case BinaryOp::Le: return x <= y;
    case BinaryOp::Gt: return x > y;
    case BinaryOp::Ge: return x >= y;
    case BinaryOp::Eq: return x == y;
    default: return x != y;
    }
}

constexpr int kMaxVarId = 1 << 24;

bool isF(DType t) { return ir::isFloatingPoint(t); }

bool supported(DType t) {
    switch (t) {
    case DType::F16: case DType::BF16: case DType::F32: case DType::F64:
    case DType::I8: case DType::I16: case DType::I32: case DType::I64:
    case DType::U8: case DType::U16: case DType::U32: case DType::U64:
    case DType::Bool: return true;
    default: return false;
    }
}

/// Integer value v converted to the width of dtype t (two's complement wrap; bool -> 0/1).
std::int64_t wrapInt(std::int64_t v, DType t) {
    switch (t) {
    case DType::I8: return static_cast<std::int8_t>(v);
    case DType::I16: return static_cast<std::int16_t>(v);
    case DType::I32: return static_cast<std::int32_t>(v);
    case DType::U8: return static_cast<std::uint8_t>(v);
    case DType::U16: return static_cast<std::uint16_t>(v);
    case DType::U32: return static_cast<std::uint32_t>(v);
    case DType::Bool: return v != 0;
    default: return v;
    }
}

/// Float value rounded to what dtype t holds.
double roundFloat(double v, DType t) {
    switch (t) {
    case DType::F32: return static_cast<double>(static_cast<float>(v));
    case DType::F16: return halfBitsToFloat(floatToHalfBits(static_cast<float>(v)));
    case DType::BF16: return bf16BitsToFloat(floatToBf16Bits(static_cast<float>(v)));
    default: return v;
    }
}

/// Float -> integer of dtype t: truncation, NaN -> 0, saturating where C is undefined.
std::int64_t floatToInt(double v, DType t) {
    if (t == DType::Bool) return v != 0.0;
    if (std::isnan(v)) return 0;
    v = std::trunc(v);
    if (t == DType::U64) {
        if (v <= 0) return 0;
        if (v >= 18446744073709551615.0) return static_cast<std::int64_t>(std::numeric_limits<std::uint64_t>::max());
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(v));
    }
    if (v <= -9223372036854775808.0) v = -9223372036854775808.0;
    const int bits = static_cast<int>(ir::dtypeSize(t)) * 8;
    const bool isUnsigned = t == DType::U8 || t == DType::U16 || t == DType::U32;
    if (bits < 64) {  // saturate to the target's range
        const double lo = isUnsigned ? 0.0 : -std::ldexp(1.0, bits - 1);
        const double hi = isUnsigned ? std::ldexp(1.0, bits) - 1 : std::ldexp(1.0, bits - 1) - 1;
        return static_cast<std::int64_t>(std::min(std::max(v, lo), hi));
    }
    if (v >= 9223372036854775807.0) return std::numeric_limits<std::int64_t>::max();
    return static_cast<std::int64_t>(v);
}

double intToFloat(std::int64_t v, DType from) {
    if (from == DType::U64) return static_cast<double>(static_cast<std::uint64_t>(v));
    return static_cast<double>(v);
}

std::string shapeText(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}

class Evaluator {
public:
    Evaluator(const Kernel& k, const EvalOptions& o) : m_k(k), m_opt(o), m_count(o.countOps) {}

    support::Expected<EvalStats> run(const std::vector<ir::TensorData*>& params) {
        if (!setup(params)) return diag();
        exec(m_k.body);
        if (m_failed) return diag();
        return m_stats;
    }

private:
    struct Buf {
        std::uint8_t* data = nullptr;
        DType dtype = DType::F32;
        std::size_t elemSize = 4;
        std::vector<std::int64_t> shape, strides;
        MemoryScope scope = MemoryScope::Global;
        bool live = false;
        bool writable = true;
        bool scalar = false;  ///< temp of shape {} or {1}
        std::vector<std::uint8_t> own;
    };

    support::DiagnosticList diag() const {
        support::DiagnosticList d;
        d.error("", "kernel '" + m_k.name + "'", m_error);
        return d;
    }

    void fail(std::string msg) {
        if (!m_failed) m_error = std::move(msg);
        m_failed = true;
    }

    std::string bufName(int b) const { return m_k.buffers[static_cast<std::size_t>(b)].name; }

    bool setup(const std::vector<ir::TensorData*>& params) {
        if (params.size() != m_k.params.size()) {
            fail("expected " + std::to_string(m_k.params.size()) + " parameters, got " + std::to_string(params.size()));
            return false;
        }
        m_bufs.resize(m_k.buffers.size());
        for (std::size_t i = 0; i < m_k.buffers.size(); ++i) {
            const BufferDecl& d = m_k.buffers[i];
            Buf& b = m_bufs[i];
            b.dtype = d.dtype;
            b.elemSize = ir::dtypeSize(d.dtype);
            b.shape = d.shape;
            b.scope = d.scope;
            b.strides.assign(d.shape.size(), 1);
            for (std::size_t j = d.shape.size(); j-- > 1;) b.strides[j - 1] = b.strides[j] * d.shape[j];
            b.scalar = d.scope != MemoryScope::Global && d.numElements() == 1 && d.shape.size() <= 1;
            if (!supported(d.dtype)) {
                fail("buffer '" + d.name + "' has dtype " + std::string(ir::dtypeName(d.dtype)) +
                     ", which kernels do not support");
                return false;
            }
        }
        for (std::size_t i = 0; i < params.size(); ++i) {
            const int bi = m_k.params[i];
            if (bi < 0 || bi >= static_cast<int>(m_bufs.size())) {
                fail("parameter " + std::to_string(i) + " refers to buffer " + std::to_string(bi) + ", which does not exist");
                return false;
            }
            ir::TensorData* t = params[i];
            const BufferDecl& d = m_k.buffers[static_cast<std::size_t>(bi)];
            Buf& b = m_bufs[static_cast<std::size_t>(bi)];
            if (!t) {
                fail("parameter " + std::to_string(i) + " ('" + d.name + "') is null");
                return false;
            }
            const auto bytes = static_cast<std::size_t>(d.bytes());
            if (d.role == BufferRole::Input) {
                if (t->dtype != d.dtype || t->numElements() != d.numElements() || t->bytes.size() != bytes) {
                    fail("input '" + d.name + "' must be " + std::string(ir::dtypeName(d.dtype)) + shapeText(d.shape) +
                         ", got " + std::string(ir::dtypeName(t->dtype)) + shapeText(t->dims));
                    return false;
                }
                b.writable = false;
            } else if (t->dtype != d.dtype || t->bytes.size() != bytes) {
                t->dtype = d.dtype;
                t->dims = d.shape;
                t->strings.clear();
                t->bytes.assign(bytes, 0);
            }
            b.data = t->bytes.data();
            b.live = true;
        }
        std::int64_t maxId = -1;
        scanVars(m_k.body, maxId);
        if (m_failed) return false;
        m_fslot.assign(static_cast<std::size_t>(maxId + 1), 0.0);
        m_islot.assign(static_cast<std::size_t>(maxId + 1), 0);
        m_bound.assign(static_cast<std::size_t>(maxId + 1), 0);
        return true;
    }

    void scanVarId(int id, std::int64_t& maxId) {
        if (id < 0 || id >= kMaxVarId) {
            fail("variable id " + std::to_string(id) + " is outside [0, 2^24)");
            return;
        }
        maxId = std::max<std::int64_t>(maxId, id);
    }

    void scanExpr(const Expr& e, std::int64_t& maxId) {
        if (!e) return;
        if (e->kind == ExprKind::VarRef) scanVarId(e->var.id, maxId);
        for (const auto& a : e->args) scanExpr(a, maxId);
    }

    void scanVars(const Stmt& s, std::int64_t& maxId) {
        if (!s) return;
        if (s->kind == StmtKind::For || s->kind == StmtKind::Let) scanVarId(s->var.id, maxId);
        scanExpr(s->extent, maxId);
        scanExpr(s->value, maxId);
        for (const auto& i : s->indices) scanExpr(i, maxId);
        if (s->mma) forEachMmaExpr(*s->mma, [&](const Expr& e) { scanExpr(e, maxId); });
        for (const auto& b : s->body) scanVars(b, maxId);
        scanVars(s->elseBody, maxId);
    }

    // ---- memory ----

    /// Flat element offset of an access, or -1 after fail().
    std::int64_t offset(int bi, const std::vector<Expr>& idx, const char* what) {
        if (bi < 0 || bi >= static_cast<int>(m_bufs.size())) {
            fail(std::string(what) + " of buffer " + std::to_string(bi) + ", which does not exist");
            return -1;
        }
        Buf& b = m_bufs[static_cast<std::size_t>(bi)];
        if (!b.live) {
            fail(std::string(what) + " of temporary '" + bufName(bi) + "' outside its Allocate");
            return -1;
        }
        if (b.scalar || b.shape.empty()) {
            if (idx.size() > 1) {
                fail(std::string(what) + " of '" + bufName(bi) + "' with " + std::to_string(idx.size()) + " indices, shape " +
                     shapeText(b.shape));
                return -1;
            }
            if (idx.size() == 1) {
                const std::int64_t i = evalI(*idx[0]);
                if (i != 0 && !m_failed) {
                    fail(std::string(what) + " of '" + bufName(bi) + "' at index [" + std::to_string(i) + "] outside shape " +
                         shapeText(b.shape));
                    return -1;
                }
            }
            return 0;
        }
        if (idx.size() != b.shape.size()) {
            fail(std::string(what) + " of '" + bufName(bi) + "' with " + std::to_string(idx.size()) + " indices, shape " +
                 shapeText(b.shape));
            return -1;
        }
        std::int64_t flat = 0;
        for (std::size_t d = 0; d < idx.size(); ++d) {
            const std::int64_t i = evalI(*idx[d]);
            if (i < 0 || i >= b.shape[d]) {
                if (m_failed) return -1;
                std::string list = "[";
                for (std::size_t j = 0; j < idx.size(); ++j) {
                    if (j) list += ", ";
                    list += j < d ? "." : j == d ? std::to_string(i) : "?";
                }
                fail(std::string(what) + " of '" + bufName(bi) + "' at index " + list + "] (dimension " + std::to_string(d) +
                     ") outside shape " + shapeText(b.shape));
                return -1;
            }
            flat += i * b.strides[d];
        }
        return flat;
    }

    template <typename T>
    static T rd(const std::uint8_t* p) {
        T v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    template <typename T>
    static void wr(std::uint8_t* p, T v) {
        std::memcpy(p, &v, sizeof v);
    }

    double readF(const Buf& b, std::int64_t i) const {
        const std::uint8_t* p = b.data + static_cast<std::size_t>(i) * b.elemSize;
        switch (b.dtype) {
        case DType::F32: return rd<float>(p);
        case DType::F64: return rd<double>(p);
        case DType::F16: return halfBitsToFloat(rd<std::uint16_t>(p));
        case DType::BF16: return bf16BitsToFloat(rd<std::uint16_t>(p));
        default: return intToFloat(readI(b, i), b.dtype);
        }
    }

    std::int64_t readI(const Buf& b, std::int64_t i) const {
        const std::uint8_t* p = b.data + static_cast<std::size_t>(i) * b.elemSize;
        switch (b.dtype) {
        case DType::I8: return rd<std::int8_t>(p);
        case DType::I16: return rd<std::int16_t>(p);
        case DType::I32: return rd<std::int32_t>(p);
        case DType::I64: return rd<std::int64_t>(p);
        case DType::U8: return rd<std::uint8_t>(p);
        case DType::U16: return rd<std::uint16_t>(p);
        case DType::U32: return rd<std::uint32_t>(p);
        case DType::U64: return static_cast<std::int64_t>(rd<std::uint64_t>(p));
        case DType::Bool: return rd<std::uint8_t>(p) != 0;
        default: return floatToInt(readF(b, i), DType::I64);
        }
    }

    void writeF(Buf& b, std::int64_t i, double v) {
        std::uint8_t* p = b.data + static_cast<std::size_t>(i) * b.elemSize;
        switch (b.dtype) {
        case DType::F32: wr<float>(p, static_cast<float>(v)); break;
        case DType::F64: wr<double>(p, v); break;
        case DType::F16: wr<std::uint16_t>(p, floatToHalfBits(static_cast<float>(v))); break;
        case DType::BF16: wr<std::uint16_t>(p, floatToBf16Bits(static_cast<float>(v))); break;
        default: writeI(b, i, floatToInt(v, b.dtype)); break;
        }
    }

    void writeI(Buf& b, std::int64_t i, std::int64_t v) {
        std::uint8_t* p = b.data + static_cast<std::size_t>(i) * b.elemSize;
        switch (b.dtype) {
        case DType::I8: wr<std::int8_t>(p, static_cast<std::int8_t>(v)); break;
        case DType::I16: wr<std::int16_t>(p, static_cast<std::int16_t>(v)); break;
        case DType::I32: wr<std::int32_t>(p, static_cast<std::int32_t>(v)); break;
        case DType::I64: wr<std::int64_t>(p, v); break;
        case DType::U8: wr<std::uint8_t>(p, static_cast<std::uint8_t>(v)); break;
        case DType::U16: wr<std::uint16_t>(p, static_cast<std::uint16_t>(v)); break;
        case DType::U32: wr<std::uint32_t>(p, static_cast<std::uint32_t>(v)); break;
        case DType::U64: wr<std::uint64_t>(p, static_cast<std::uint64_t>(v)); break;
        case DType::Bool: wr<std::uint8_t>(p, v != 0 ? 1 : 0); break;
        default: writeF(b, i, intToFloat(v, DType::I64)); break;
        }
    }

    void countAccess(const Buf& b, bool store) {
        const auto n = static_cast<std::int64_t>(b.elemSize);
        switch (b.scope) {
        case MemoryScope::Global: (store ? m_stats.storeBytes : m_stats.loadBytes) += n; break;
        case MemoryScope::Shared: (store ? m_stats.sharedStoreBytes : m_stats.sharedLoadBytes) += n; break;
        case MemoryScope::Local: (store ? m_stats.localStoreBytes : m_stats.localLoadBytes) += n; break;
        }
    }

    // ---- expressions ----

    bool truth(const ExprNode& n) { return isF(n.dtype) ? evalF(n) != 0.0 : evalI(n) != 0; }

    bool checkVar(const Var& v) {
        if (v.id < 0 || v.id >= static_cast<int>(m_bound.size()) || !m_bound[static_cast<std::size_t>(v.id)]) {
            fail("variable '" + v.name + "' (id " + std::to_string(v.id) + ") is read outside its binding");
            return false;
        }
        return true;
    }

    bool arity(const ExprNode& n, std::size_t k) {
        if (n.args.size() == k) {
            for (const auto& a : n.args)
                if (!a) {
                    fail("malformed expression: a null operand");
                    return false;
                }
            return true;
        }
        fail("malformed expression: " + std::to_string(n.args.size()) + " operands where " + std::to_string(k) + " are needed");
        return false;
    }

    std::int64_t evalI(const ExprNode& n) {
        if (m_failed) return 0;
        switch (n.kind) {
        case ExprKind::IntImm: return n.intValue;
        case ExprKind::FloatImm: return floatToInt(n.floatValue, n.dtype);
        case ExprKind::VarRef:
            if (!checkVar(n.var)) return 0;
            if (isF(n.var.dtype)) return floatToInt(m_fslot[static_cast<std::size_t>(n.var.id)], n.dtype);
            return m_islot[static_cast<std::size_t>(n.var.id)];
        case ExprKind::Unary:
            if (!arity(n, 1)) return 0;
            if (n.unary == UnaryOp::Not) return truth(*n.args[0]) ? 0 : 1;
            if (isF(n.args[0].dtype())) return floatToInt(-evalF(*n.args[0]), n.dtype);
            return wrapArith(static_cast<std::int64_t>(0ull - static_cast<std::uint64_t>(evalI(*n.args[0]))), n.dtype);
        case ExprKind::Binary: return binaryI(n);
        case ExprKind::Select:
            if (!arity(n, 3)) return 0;
            return truth(*n.args[0]) ? evalI(*n.args[1]) : evalI(*n.args[2]);
        case ExprKind::Cast: {
            if (!arity(n, 1)) return 0;
            const ExprNode& a = *n.args[0];
            if (isF(a.dtype)) return floatToInt(evalF(a), n.dtype);
            return wrapInt(evalI(a), n.dtype);
        }
        case ExprKind::Load: {
            const std::int64_t off = offset(n.buffer, n.args, "load");
            if (off < 0) return 0;
            const Buf& b = m_bufs[static_cast<std::size_t>(n.buffer)];
            if (m_count) countAccess(b, false);
            if (isF(b.dtype)) return floatToInt(readF(b, off), n.dtype);
            return readI(b, off);
        }
        case ExprKind::Call: {
            if (!arity(n, static_cast<std::size_t>(intrinsicArity(n.intrinsic)))) return 0;
            switch (n.intrinsic) {
            case Intrinsic::Abs: {
                const std::int64_t v = evalI(*n.args[0]);
                return v < 0 ? wrapArith(static_cast<std::int64_t>(0ull - static_cast<std::uint64_t>(v)), n.dtype) : v;
            }
            case Intrinsic::Floor:
            case Intrinsic::Ceil:
            case Intrinsic::Round: return evalI(*n.args[0]);
            case Intrinsic::Fma: {
                const std::int64_t a = evalI(*n.args[0]), b = evalI(*n.args[1]), c = evalI(*n.args[2]);
                return wrapArith(static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b) +
                                                           static_cast<std::uint64_t>(c)),
                                 n.dtype);
            }
            default: return floatToInt(callF(n), n.dtype);
            }
        }
        }
        return 0;
    }

    /// Results of i32/u32 arithmetic wrap at 32 bits as C's do; narrower types promote to int.
    static std::int64_t wrapArith(std::int64_t v, DType t) {
        if (t == DType::I32 || t == DType::U32) return wrapInt(v, t);
        return v;
    }

    std::int64_t binaryI(const ExprNode& n) {
        if (!arity(n, 2)) return 0;
        const ExprNode& a = *n.args[0];
        const ExprNode& b = *n.args[1];
        const BinaryOp op = n.binary;
        if (op == BinaryOp::And) return truth(a) && truth(b);
        if (op == BinaryOp::Or) return truth(a) || truth(b);
        if (isComparison(op)) {
            if (isF(a.dtype) || isF(b.dtype)) {
                const double x = isF(a.dtype) ? evalF(a) : intToFloat(evalI(a), a.dtype);
                const double y = isF(b.dtype) ? evalF(b) : intToFloat(evalI(b), b.dtype);
                return compareAs(op, x, y);
            }
            const std::int64_t x = evalI(a), y = evalI(b);
            if (a.dtype == DType::U64) return compareAs(op, static_cast<std::uint64_t>(x), static_cast<std::uint64_t>(y));
            return compareAs(op, x, y);
        }
        if (isF(a.dtype)) return floatToInt(binaryF(n), n.dtype);
        const std::int64_t x = evalI(a), y = evalI(b);
        if (m_failed) return 0;
        const auto ux = static_cast<std::uint64_t>(x), uy = static_cast<std::uint64_t>(y);
        const bool u64 = n.dtype == DType::U64;
        switch (op) {
        case BinaryOp::Add: return wrapArith(static_cast<std::int64_t>(ux + uy), n.dtype);
        case BinaryOp::Sub: return wrapArith(static_cast<std::int64_t>(ux - uy), n.dtype);
        case BinaryOp::Mul: return wrapArith(static_cast<std::int64_t>(ux * uy), n.dtype);
        case BinaryOp::Min:
            if (u64) return uy < ux ? y : x;
            return y < x ? y : x;
        case BinaryOp::Max:
            if (u64) return ux < uy ? y : x;
            return x < y ? y : x;
        default: break;
        }
        // division family
        if (y == 0) {
            fail("integer division by zero");
            return 0;
        }
        if (u64) {
            switch (op) {
            case BinaryOp::Div:
            case BinaryOp::FloorDiv: return static_cast<std::int64_t>(ux / uy);
            default: return static_cast<std::int64_t>(ux % uy);
            }
        }
        if (x == std::numeric_limits<std::int64_t>::min() && y == -1) {
            // the one overflowing quotient: wrap as two's complement would
            return (op == BinaryOp::Div || op == BinaryOp::FloorDiv) ? x : 0;
        }
        std::int64_t q = x / y, r = x % y;
        switch (op) {
        case BinaryOp::Div: return wrapArith(q, n.dtype);
        case BinaryOp::Mod: return wrapArith(r, n.dtype);
        case BinaryOp::FloorDiv:
            if (r != 0 && ((r < 0) != (y < 0))) --q;
            return wrapArith(q, n.dtype);
        case BinaryOp::FloorMod:
            if (r != 0 && ((r < 0) != (y < 0))) r += y;
            return wrapArith(r, n.dtype);
        default: break;
        }
        fail("malformed expression: operator " + std::string(binaryOpName(op)) + " on integers");
        return 0;
    }

    double evalF(const ExprNode& n) {
        if (m_failed) return 0;
        switch (n.kind) {
        case ExprKind::IntImm: return static_cast<double>(n.intValue);
        case ExprKind::FloatImm: return roundFloat(n.floatValue, n.dtype == DType::F64 ? DType::F64 : DType::F32);
        case ExprKind::VarRef:
            if (!checkVar(n.var)) return 0;
            if (!isF(n.var.dtype)) return intToFloat(m_islot[static_cast<std::size_t>(n.var.id)], n.var.dtype);
            return m_fslot[static_cast<std::size_t>(n.var.id)];
        case ExprKind::Unary:
            if (!arity(n, 1)) return 0;
            if (n.unary == UnaryOp::Not) return truth(*n.args[0]) ? 0.0 : 1.0;
            if (m_count) m_stats.flops += 1;
            return -evalF(*n.args[0]);
        case ExprKind::Binary:
            if (!arity(n, 2)) return 0;
            if (isComparison(n.binary) || isLogical(n.binary)) return static_cast<double>(binaryI(n));
            if (!isF(n.args[0].dtype())) return intToFloat(binaryI(n), n.dtype);
            return binaryF(n);
        case ExprKind::Select:
            if (!arity(n, 3)) return 0;
            return truth(*n.args[0]) ? evalF(*n.args[1]) : evalF(*n.args[2]);
        case ExprKind::Cast: {
            if (!arity(n, 1)) return 0;
            const ExprNode& a = *n.args[0];
            const double v = isF(a.dtype) ? evalF(a) : intToFloat(evalI(a), a.dtype);
            return roundFloat(v, n.dtype);
        }
        case ExprKind::Load: {
            const std::int64_t off = offset(n.buffer, n.args, "load");
            if (off < 0) return 0;
            const Buf& b = m_bufs[static_cast<std::size_t>(n.buffer)];
            if (m_count) countAccess(b, false);
            return readF(b, off);
        }
        case ExprKind::Call:
            if (!arity(n, static_cast<std::size_t>(intrinsicArity(n.intrinsic)))) return 0;
            if (!isF(n.args[0].dtype())) return intToFloat(evalI(n), n.dtype);
            if (m_count) m_stats.flops += n.intrinsic == Intrinsic::Fma ? 2 : 1;
            return callF(n);
        }
        return 0;
    }

    double binaryF(const ExprNode& n) {
        const double x = evalF(*n.args[0]);
        const double y = evalF(*n.args[1]);
        if (m_count) m_stats.flops += 1;
        switch (n.binary) {
        case BinaryOp::Add: return x + y;
        case BinaryOp::Sub: return x - y;
        case BinaryOp::Mul: return x * y;
        case BinaryOp::Div: return x / y;
        case BinaryOp::Mod: return std::fmod(x, y);
        case BinaryOp::FloorDiv: return std::floor(x / y);
        case BinaryOp::FloorMod: return x - std::floor(x / y) * y;
        case BinaryOp::Min: return y < x ? y : x;
        case BinaryOp::Max: return x < y ? y : x;
        default: break;
        }
        fail("malformed expression: operator " + std::string(binaryOpName(n.binary)) + " on floats");
        return 0;
    }

    /// Intrinsic in double (the operands are converted to double first).
    double callF(const ExprNode& n) {
        auto arg = [&](std::size_t i) {
            const ExprNode& a = *n.args[i];
            return isF(a.dtype) ? evalF(a) : intToFloat(evalI(a), a.dtype);
        };
        const double x = arg(0);
        switch (n.intrinsic) {
        case Intrinsic::Exp: return std::exp(x);
        case Intrinsic::Log: return std::log(x);
        case Intrinsic::Sqrt: return std::sqrt(x);
        case Intrinsic::Rsqrt: return 1.0 / std::sqrt(x);
        case Intrinsic::Sin: return std::sin(x);
        case Intrinsic::Cos: return std::cos(x);
        case Intrinsic::Tan: return std::tan(x);
        case Intrinsic::Tanh: return std::tanh(x);
        case Intrinsic::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
        case Intrinsic::Erf: return std::erf(x);
        case Intrinsic::Abs: return std::fabs(x);
        case Intrinsic::Floor: return std::floor(x);
        case Intrinsic::Ceil: return std::ceil(x);
        case Intrinsic::Round: return std::nearbyint(x);
        case Intrinsic::Pow: return std::pow(x, arg(1));
        case Intrinsic::Atan2: return std::atan2(x, arg(1));
        case Intrinsic::Fma: {
            const double y = arg(1);
            return std::fma(x, y, arg(2));
        }
        }
        return 0;
    }

    // ---- statements ----

    bool step() {
        ++m_stats.steps;
        if (m_opt.maxSteps > 0 && m_stats.steps > m_opt.maxSteps) {
            fail("more than " + std::to_string(m_opt.maxSteps) + " statements executed (EvalOptions::maxSteps)");
            return false;
        }
        return true;
    }

    void exec(const Stmt& s) {
        if (!s || m_failed) return;
        const StmtNode& n = *s;
        switch (n.kind) {
        case StmtKind::Seq:
            for (const auto& c : n.body) {
                exec(c);
                if (m_failed) return;
            }
            return;
        case StmtKind::For: {
            if (!n.extent) {
                fail("malformed loop: no extent");
                return;
            }
            const std::int64_t extent = evalI(*n.extent);
            const auto id = static_cast<std::size_t>(n.var.id);
            const char wasBound = m_bound[id];
            const std::int64_t old = m_islot[id];
            m_bound[id] = 1;
            const Stmt body = n.body.empty() ? nullptr : n.body[0];
            for (std::int64_t i = 0; i < extent && !m_failed; ++i) {
                if (!step()) break;
                m_islot[id] = i;
                exec(body);
            }
            m_islot[id] = old;
            m_bound[id] = wasBound;
            return;
        }
        case StmtKind::If:
            if (!step()) return;
            if (!n.value) {
                fail("malformed if: no condition");
                return;
            }
            if (truth(*n.value)) {
                if (!n.body.empty()) exec(n.body[0]);
            } else {
                exec(n.elseBody);
            }
            return;
        case StmtKind::Let: {
            if (!step()) return;
            if (!n.value) {
                fail("malformed let: no value");
                return;
            }
            const auto id = static_cast<std::size_t>(n.var.id);
            const char wasBound = m_bound[id];
            const double oldF = m_fslot[id];
            const std::int64_t oldI = m_islot[id];
            if (isF(n.var.dtype)) {
                const ExprNode& v = *n.value;
                const double x = isF(v.dtype) ? evalF(v) : intToFloat(evalI(v), v.dtype);
                m_fslot[id] = roundFloat(x, n.var.dtype == DType::F64 ? DType::F64 : DType::F32);
            } else {
                const ExprNode& v = *n.value;
                m_islot[id] = isF(v.dtype) ? floatToInt(evalF(v), n.var.dtype) : evalI(v);
            }
            m_bound[id] = 1;
            if (!n.body.empty()) exec(n.body[0]);
            m_bound[id] = wasBound;
            m_fslot[id] = oldF;
            m_islot[id] = oldI;
            return;
        }
        case StmtKind::Store: {
            if (!step()) return;
            if (!n.value) {
                fail("malformed store: no value");
                return;
            }
            if (n.buffer >= 0 && n.buffer < static_cast<int>(m_bufs.size()) && !m_bufs[static_cast<std::size_t>(n.buffer)].writable) {
                fail("store to input parameter '" + bufName(n.buffer) + "'");
                return;
            }
            const ExprNode& v = *n.value;
            // value first, then the address (the C statement's order does not matter: no side effects)
            if (isF(v.dtype)) {
                const double x = evalF(v);
                const std::int64_t off = offset(n.buffer, n.indices, "store");
                if (off < 0) return;
                Buf& b = m_bufs[static_cast<std::size_t>(n.buffer)];
                if (m_count) countAccess(b, true);
                writeF(b, off, x);
            } else {
                const std::int64_t x = evalI(v);
                const std::int64_t off = offset(n.buffer, n.indices, "store");
                if (off < 0) return;
                Buf& b = m_bufs[static_cast<std::size_t>(n.buffer)];
                if (m_count) countAccess(b, true);
                if (isF(b.dtype))
                    writeF(b, off, intToFloat(x, v.dtype));
                else
                    writeI(b, off, x);
            }
            return;
        }
        case StmtKind::Allocate: {
            if (n.buffer < 0 || n.buffer >= static_cast<int>(m_bufs.size())) {
                fail("allocate of buffer " + std::to_string(n.buffer) + ", which does not exist");
                return;
            }
            Buf& b = m_bufs[static_cast<std::size_t>(n.buffer)];
            const BufferDecl& d = m_k.buffers[static_cast<std::size_t>(n.buffer)];
            if (d.scope == MemoryScope::Global || d.role != BufferRole::Temp) {
                fail("allocate of '" + d.name + "', which is not a Shared or Local temporary");
                return;
            }
            std::vector<std::uint8_t> saved;
            saved.swap(b.own);
            const bool wasLive = b.live;
            std::uint8_t* oldData = b.data;
            b.own.assign(static_cast<std::size_t>(d.bytes()), 0);
            b.data = b.own.data();
            b.live = true;
            if (isF(d.dtype)) {
                const std::int64_t count = d.numElements();
                for (std::int64_t i = 0; i < count; ++i) writeF(b, i, std::numeric_limits<double>::quiet_NaN());
            }
            if (!n.body.empty()) exec(n.body[0]);
            b.own.swap(saved);
            b.data = oldData;
            b.live = wasLive;
            return;
        }
        case StmtKind::Evaluate:
            if (!step()) return;
            if (n.value) (void)(isF(n.value->dtype) ? evalF(*n.value) : static_cast<double>(evalI(*n.value)));
            return;
        case StmtKind::Barrier:
        case StmtKind::Comment: return;
        case StmtKind::Mma: execMma(n); return;
        }
    }

    /// TF32 value of x (cvt.rna.tf32.f32: 10-bit mantissa, round to nearest, ties away from zero).
    static double tf32(double x) {
        const float f = static_cast<float>(x);
        if (!std::isfinite(f)) return f;
        std::uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        u = (u + 0x1000u) & 0xffffe000u;
        float r;
        std::memcpy(&r, &u, sizeof r);
        return r;
    }

    /// One thread's part of a warp MMA (kernel_ir.h, MmaInfo).
    void execMma(const StmtNode& n) {
        if (!step()) return;
        if (!n.mma) {
            fail("malformed mma: no operands");
            return;
        }
        const MmaInfo& m = *n.mma;
        if (!m.lane || n.indices.empty()) {
            fail("malformed mma: no lane or accumulator index");
            return;
        }
        const std::int64_t lane = evalI(*m.lane);
        if (m_failed) return;
        if (lane < 0 || lane >= 32) {
            fail("mma lane " + std::to_string(lane) + " outside [0, 32)");
            return;
        }
        // Operand base indices, evaluated once.
        auto bases = [&](const MmaOperand& o, std::vector<std::int64_t>& out) {
            if (o.base.size() != o.stride.size()) {
                fail("malformed mma operand of '" + bufName(o.buffer) + "': " + std::to_string(o.base.size()) +
                     " base indices, " + std::to_string(o.stride.size()) + " strides");
                return false;
            }
            for (const Expr& e : o.base) out.push_back(evalI(*e));
            return !m_failed;
        };
        std::vector<std::int64_t> aB, bB;
        if (!bases(m.a, aB) || !bases(m.b, bB)) return;
        auto element = [&](const MmaOperand& o, const std::vector<std::int64_t>& base, std::int64_t row, std::int64_t col) {
            std::vector<Expr> idx;
            for (std::size_t d = 0; d < base.size(); ++d)
                idx.push_back(intImm(base[d] + row * o.stride[d].row + col * o.stride[d].col));
            const std::int64_t off = offset(o.buffer, idx, "mma operand load");
            if (off < 0) return 0.0;
            const Buf& b = m_bufs[static_cast<std::size_t>(o.buffer)];
            if (m_count) countAccess(b, false);
            return readF(b, off);
        };
        const std::int64_t g = lane / 4, q = lane % 4;
        // This lane's operand loads (4 of A, 2 of B), for the counts only: the products below read
        // the rows and columns that other lanes load.
        if (m_count) {
            const bool was = m_count;
            for (std::int64_t r = 0; r < 4; ++r) (void)element(m.a, aB, g + 8 * (r % 2), q + 4 * (r / 2));
            for (std::int64_t r = 0; r < 2; ++r) (void)element(m.b, bB, q + 4 * r, g);
            if (n.buffer >= 0 && n.buffer < static_cast<int>(m_bufs.size()))
                for (int r = 0; r < 4; ++r) {
                    countAccess(m_bufs[static_cast<std::size_t>(n.buffer)], false);
                    countAccess(m_bufs[static_cast<std::size_t>(n.buffer)], true);
                }
            m_count = false;
            execMmaProducts(n, m, aB, bB, g, q, element);
            m_count = was;
            if (!m_failed) m_stats.flops += 64;
            return;
        }
        execMmaProducts(n, m, aB, bB, g, q, element);
    }

    template <typename ElementFn>
    void execMmaProducts(const StmtNode& n, const MmaInfo& m, const std::vector<std::int64_t>& aB,
                         const std::vector<std::int64_t>& bB, std::int64_t g, std::int64_t q, ElementFn& element) {
        const bool x3 = m.precision == MmaPrecision::Tf32x3;
        for (std::int64_t r = 0; r < 4 && !m_failed; ++r) {
            const std::int64_t row = g + 8 * (r / 2), col = 2 * q + r % 2;
            double big = 0, small = 0;
            for (std::int64_t kk = 0; kk < 8 && !m_failed; ++kk) {
                const double a = element(m.a, aB, row, kk), b = element(m.b, bB, kk, col);
                const double ab = tf32(a), bb = tf32(b);
                big += ab * bb;
                if (x3) small += tf32(a - ab) * bb + ab * tf32(b - bb);
            }
            std::vector<Expr> idx = n.indices;
            idx.back() = idx.back() + intImm(r);
            const std::int64_t off = offset(n.buffer, idx, "mma accumulator");
            if (off < 0) return;
            Buf& acc = m_bufs[static_cast<std::size_t>(n.buffer)];
            // The small terms first (as the generated code orders its three MMAs), in f32.
            const double sum = static_cast<float>(static_cast<float>(readF(acc, off) + small) + big);
            writeF(acc, off, sum);
        }
    }

    const Kernel& m_k;
    EvalOptions m_opt;
    bool m_count = false;
    std::vector<Buf> m_bufs;
    std::vector<double> m_fslot;
    std::vector<std::int64_t> m_islot;
    std::vector<char> m_bound;
    EvalStats m_stats;
    bool m_failed = false;
    std::string m_error;
};

}  // namespace

support::Expected<EvalStats> evalKernel(const Kernel& k, const std::vector<ir::TensorData*>& params,
                                        const EvalOptions& options) {
    Evaluator e(k, options);
    return e.run(params);
}

}  // namespace tessera::lower
