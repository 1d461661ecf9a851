#include "core/lower/counts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace tessera::lower {

namespace {

/// Counts as doubles while walking (products of extents can be large).
struct Cnt {
    double flops = 0, gl = 0, gs = 0, sl = 0, ss = 0, ll = 0, ls = 0;

    Cnt& operator+=(const Cnt& o) {
        flops += o.flops;
        gl += o.gl;
        gs += o.gs;
        sl += o.sl;
        ss += o.ss;
        ll += o.ll;
        ls += o.ls;
        return *this;
    }
    Cnt& operator*=(double n) {
        flops *= n;
        gl *= n;
        gs *= n;
        sl *= n;
        ss *= n;
        ll *= n;
        ls *= n;
        return *this;
    }
    bool operator==(const Cnt& o) const {
        return flops == o.flops && gl == o.gl && gs == o.gs && sl == o.sl && ss == o.ss && ll == o.ll && ls == o.ls;
    }
    bool zero() const { return *this == Cnt{}; }
    static Cnt max(const Cnt& a, const Cnt& b) {
        return {std::max(a.flops, b.flops), std::max(a.gl, b.gl), std::max(a.gs, b.gs), std::max(a.sl, b.sl),
                std::max(a.ss, b.ss),       std::max(a.ll, b.ll), std::max(a.ls, b.ls)};
    }
};

/// Sorted set of loop-variable ids whose (non-single) ranges left a condition undecided.
using Blame = std::vector<int>;

void merge(Blame& into, const Blame& from) {
    if (from.empty()) return;
    Blame out;
    std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(out));
    into.swap(out);
}

/// Result of counting a statement or expression: counts, or "undecided" (some condition depends
/// on a variable range that must be split first; `blame` names those variables).
struct Res {
    Cnt c;
    bool undecided = false;
    Blame blame;
};

/// An integer value range. known = false: depends on data (opaque). A range wider than one value
/// always carries a non-empty blame (the loop variables it comes from).
struct Val {
    bool known = false;
    std::int64_t lo = 0, hi = 0;
    Blame blame;

    bool single() const { return known && lo == hi; }
    static Val exact(std::int64_t v) { return {true, v, v, {}}; }
    static Val opaque() { return {}; }
};

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

bool fits(__int128 v) { return v >= kMin && v <= kMax; }

std::int64_t floorDivI(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

/// Range from lo/hi candidates; opaque when any candidate overflows.
Val fromCandidates(std::initializer_list<__int128> cands, const Val& a, const Val& b) {
    __int128 lo = *cands.begin(), hi = lo;
    for (auto c : cands) {
        lo = std::min(lo, c);
        hi = std::max(hi, c);
    }
    if (!fits(lo) || !fits(hi)) return Val::opaque();
    Val r{true, static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi), a.blame};
    merge(r.blame, b.blame);
    if (r.lo == r.hi) r.blame.clear();
    return r;
}

Val boolVal(bool definite, bool value, const Val& a, const Val& b) {
    if (definite) return Val::exact(value ? 1 : 0);
    Val r{true, 0, 1, a.blame};
    merge(r.blame, b.blame);
    if (r.blame.empty()) return Val::opaque();
    return r;
}

class Counter {
public:
    explicit Counter(const Kernel& k) : m_k(k) {
        int maxId = -1;
        scan(k.body, maxId);
        m_env.resize(static_cast<std::size_t>(maxId + 1));
    }

    KernelCounts run() {
        KernelCounts out;
        Res r = count(m_k.body);
        if (r.undecided) {
            // Cannot happen for well-formed IR (every blamed variable is bound by a loop that
            // splits it); stay safe: report what was counted as inexact.
            m_exact = false;
        }
        auto toInt = [](double v) {
            if (!(v < 9.2e18)) return kMax;
            return static_cast<std::int64_t>(std::llround(v));
        };
        out.flops = r.c.flops;
        out.loadBytes = toInt(r.c.gl);
        out.storeBytes = toInt(r.c.gs);
        out.sharedLoadBytes = toInt(r.c.sl);
        out.sharedStoreBytes = toInt(r.c.ss);
        out.localLoadBytes = toInt(r.c.ll);
        out.localStoreBytes = toInt(r.c.ls);
        for (int p : m_k.params) {
            if (p < 0 || p >= static_cast<int>(m_k.buffers.size())) continue;
            const BufferDecl& b = m_k.buffers[static_cast<std::size_t>(p)];
            if (b.role == BufferRole::Input || b.role == BufferRole::Output) out.compulsoryBytes += b.bytes();
        }
        out.exact = m_exact;
        return out;
    }

private:
    void scanId(int id, int& maxId) {
        if (id >= 0 && id < (1 << 24)) maxId = std::max(maxId, id);
    }
    void scanExpr(const Expr& e, int& maxId) {
        if (!e) return;
        if (e->kind == ExprKind::VarRef) scanId(e->var.id, maxId);
        for (const auto& a : e->args) scanExpr(a, maxId);
    }
    void scan(const Stmt& s, int& maxId) {
        if (!s) return;
        if (s->kind == StmtKind::For || s->kind == StmtKind::Let) scanId(s->var.id, maxId);
        scanExpr(s->extent, maxId);
        scanExpr(s->value, maxId);
        for (const auto& i : s->indices) scanExpr(i, maxId);
        if (s->mma) forEachMmaExpr(*s->mma, [&](const Expr& e) { scanExpr(e, maxId); });
        for (const auto& b : s->body) scan(b, maxId);
        scan(s->elseBody, maxId);
    }

    std::optional<Val>* slot(int id) {
        if (id < 0 || id >= static_cast<int>(m_env.size())) return nullptr;
        return &m_env[static_cast<std::size_t>(id)];
    }

    // ---- range evaluation of integer / bool expressions ----

    static bool isDefinite(const Val& v, bool value) { return v.single() && (v.lo != 0) == value; }

    Val ev(const Expr& e) {
        if (!e) return Val::opaque();
        const ExprNode& n = *e;
        if (ir::isFloatingPoint(n.dtype)) return Val::opaque();
        switch (n.kind) {
        case ExprKind::IntImm: return Val::exact(n.intValue);
        case ExprKind::VarRef: {
            auto* s = slot(n.var.id);
            if (!s || !*s) return Val::opaque();
            return **s;
        }
        case ExprKind::Unary: {
            if (n.args.size() != 1) return Val::opaque();
            const Val a = ev(n.args[0]);
            if (!a.known) return a;
            if (n.unary == UnaryOp::Not) {
                if (a.single()) return Val::exact(a.lo == 0 ? 1 : 0);
                return boolVal(false, false, a, Val{});
            }
            return fromCandidates({-static_cast<__int128>(a.lo), -static_cast<__int128>(a.hi)}, a, Val{});
        }
        case ExprKind::Binary: return evBinary(n);
        case ExprKind::Select: {
            if (n.args.size() != 3) return Val::opaque();
            const Val c = ev(n.args[0]);
            if (c.single()) return ev(c.lo != 0 ? n.args[1] : n.args[2]);
            if (!c.known) return Val::opaque();
            const Val a = ev(n.args[1]), b = ev(n.args[2]);
            if (!a.known || !b.known) return Val::opaque();
            Val r = fromCandidates({a.lo, a.hi, b.lo, b.hi}, a, b);
            if (r.known && r.lo != r.hi) merge(r.blame, c.blame);
            return r;
        }
        case ExprKind::Cast: {
            if (n.args.size() != 1) return Val::opaque();
            if (ir::isFloatingPoint(n.args[0].dtype())) return Val::opaque();
            const Val a = ev(n.args[0]);
            if (!a.known) return a;
            if (n.dtype == DType::Bool) {
                if (a.lo > 0 || a.hi < 0) return Val::exact(1);
                if (a.single()) return Val::exact(0);
                return boolVal(false, false, a, Val{});
            }
            const int bits = static_cast<int>(ir::dtypeSize(n.dtype)) * 8;
            if (bits >= 64) return a;
            const bool isUnsigned = n.dtype == DType::U8 || n.dtype == DType::U16 || n.dtype == DType::U32;
            const __int128 lo = isUnsigned ? 0 : -(static_cast<__int128>(1) << (bits - 1));
            const __int128 hi = isUnsigned ? (static_cast<__int128>(1) << bits) - 1 : (static_cast<__int128>(1) << (bits - 1)) - 1;
            if (a.lo >= lo && a.hi <= hi) return a;
            return Val::opaque();  // wraps: not tracked
        }
        case ExprKind::Call:
            if (n.intrinsic == Intrinsic::Abs && n.args.size() == 1) {
                const Val a = ev(n.args[0]);
                if (!a.known) return a;
                if (a.lo >= 0) return a;
                if (a.hi <= 0) return fromCandidates({-static_cast<__int128>(a.lo), -static_cast<__int128>(a.hi)}, a, Val{});
                return fromCandidates({0, -static_cast<__int128>(a.lo), a.hi}, a, Val{});
            }
            if ((n.intrinsic == Intrinsic::Floor || n.intrinsic == Intrinsic::Ceil || n.intrinsic == Intrinsic::Round) &&
                n.args.size() == 1)
                return ev(n.args[0]);
            return Val::opaque();
        default: return Val::opaque();  // loads, float immediates
        }
    }

    Val evBinary(const ExprNode& n) {
        if (n.args.size() != 2) return Val::opaque();
        const BinaryOp op = n.binary;
        if (op == BinaryOp::And || op == BinaryOp::Or) {
            const bool shortValue = op == BinaryOp::Or;  // Or: true decides; And: false decides
            const Val a = ev(n.args[0]);
            if (isDefinite(a, shortValue)) return Val::exact(shortValue ? 1 : 0);
            const Val b = ev(n.args[1]);
            if (isDefinite(b, shortValue)) return Val::exact(shortValue ? 1 : 0);
            if (isDefinite(a, !shortValue) && isDefinite(b, !shortValue)) return Val::exact(shortValue ? 0 : 1);
            // undecided: blame whatever is a range; opaque when nothing is
            return boolVal(false, false, a.known ? a : Val{}, b.known ? b : Val{});
        }
        if (ir::isFloatingPoint(n.args[0].dtype()) || ir::isFloatingPoint(n.args[1].dtype())) return Val::opaque();
        const Val a = ev(n.args[0]);
        if (!a.known) return a;
        const Val b = ev(n.args[1]);
        if (!b.known) return b;
        const __int128 al = a.lo, ah = a.hi, bl = b.lo, bh = b.hi;
        switch (op) {
        case BinaryOp::Add: return fromCandidates({al + bl, ah + bh}, a, b);
        case BinaryOp::Sub: return fromCandidates({al - bh, ah - bl}, a, b);
        case BinaryOp::Mul: return fromCandidates({al * bl, al * bh, ah * bl, ah * bh}, a, b);
        case BinaryOp::Min: return fromCandidates({std::min(al, bl), std::min(ah, bh)}, a, b);
        case BinaryOp::Max: return fromCandidates({std::max(al, bl), std::max(ah, bh)}, a, b);
        case BinaryOp::Div:
        case BinaryOp::FloorDiv: {
            if (b.lo <= 0 && b.hi >= 0) return b.single() ? Val::opaque() : wide(a, b);
            // monotone in each argument where the divisor keeps its sign: the corners bound it
            auto d = [&](std::int64_t x, std::int64_t y) -> __int128 {
                if (x == kMin && y == -1) return -static_cast<__int128>(kMin);
                return op == BinaryOp::Div ? x / y : floorDivI(x, y);
            };
            return fromCandidates({d(a.lo, b.lo), d(a.lo, b.hi), d(a.hi, b.lo), d(a.hi, b.hi)}, a, b);
        }
        case BinaryOp::Mod:
        case BinaryOp::FloorMod: {
            if (b.lo <= 0 && b.hi >= 0) return b.single() ? Val::opaque() : wide(a, b);
            if (a.single() && b.single()) {
                if (a.lo == kMin && b.lo == -1) return Val::exact(0);
                const std::int64_t r = op == BinaryOp::Mod ? a.lo % b.lo : a.lo - floorDivI(a.lo, b.lo) * b.lo;
                return Val::exact(r);
            }
            if (b.single() && b.lo > 0 && (op == BinaryOp::FloorMod || a.lo >= 0) &&
                floorDivI(a.lo, b.lo) == floorDivI(a.hi, b.lo)) {
                // one period: the remainder grows with a
                const std::int64_t r0 = a.lo - floorDivI(a.lo, b.lo) * b.lo;
                return fromCandidates({r0, static_cast<__int128>(r0) + (ah - al)}, a, b);
            }
            const __int128 m = std::max(bl < 0 ? -bl : bl, bh < 0 ? -bh : bh) - 1;
            if (op == BinaryOp::FloorMod) return bl > 0 ? fromCandidates({0, m}, a, b) : fromCandidates({-m, 0}, a, b);
            return a.lo >= 0 ? fromCandidates({0, m}, a, b) : fromCandidates({-m, m}, a, b);
        }
        case BinaryOp::Lt: return boolVal(ah < bl || al >= bh, ah < bl, a, b);
        case BinaryOp::Le: return boolVal(ah <= bl || al > bh, ah <= bl, a, b);
        case BinaryOp::Gt: return boolVal(al > bh || ah <= bl, al > bh, a, b);
        case BinaryOp::Ge: return boolVal(al >= bh || ah < bl, al >= bh, a, b);
        case BinaryOp::Eq: return boolVal((a.single() && b.single()) || ah < bl || bh < al, a.single() && b.single() && al == bl, a, b);
        case BinaryOp::Ne: return boolVal((a.single() && b.single()) || ah < bl || bh < al, !(a.single() && b.single() && al == bl), a, b);
        default: return Val::opaque();
        }
    }

    /// Any value (a divisor range that contains zero): undecided while the ranges are wide.
    static Val wide(const Val& a, const Val& b) {
        Val r{true, kMin, kMax, a.blame};
        merge(r.blame, b.blame);
        if (r.blame.empty()) return Val::opaque();
        return r;
    }

    // ---- counting ----

    void addAccess(Cnt& c, int buffer, bool store) {
        if (buffer < 0 || buffer >= static_cast<int>(m_k.buffers.size())) {
            m_exact = false;
            return;
        }
        const BufferDecl& b = m_k.buffers[static_cast<std::size_t>(buffer)];
        const auto bytes = static_cast<double>(ir::dtypeSize(b.dtype));
        switch (b.scope) {
        case MemoryScope::Global: (store ? c.gs : c.gl) += bytes; break;
        case MemoryScope::Shared: (store ? c.ss : c.sl) += bytes; break;
        case MemoryScope::Local: (store ? c.ls : c.ll) += bytes; break;
        }
    }

    static Res undecided(const Val& v) { return Res{Cnt{}, true, v.blame}; }

    /// Adds to r the cost of one of two alternatives (Select arms, If branches) whose condition
    /// c is not a single value: nothing to decide when both cost the same; undecided when c
    /// depends on loop variables still to be split; otherwise the data decides, so the costlier
    /// one counts and the counts are no longer exact.
    Res addEither(Res& r, const Val& c, const Res& a, const Res& b) {
        if (!a.undecided && !b.undecided && a.c == b.c) {
            r.c += a.c;
            return r;
        }
        if (c.known) {
            merge(r.blame, c.blame);
            r.undecided = true;
            return r;
        }
        m_exact = false;  // data decides: the costlier alternative
        if (a.undecided || b.undecided) {
            add(r, a.undecided ? a : b);
            return r;
        }
        r.c += Cnt::max(a.c, b.c);
        return r;
    }

    /// Adds r into acc; returns false (and turns acc undecided) when r is undecided.
    static bool add(Res& acc, const Res& r) {
        if (r.undecided) {
            acc.undecided = true;
            merge(acc.blame, r.blame);
            return false;
        }
        acc.c += r.c;
        return true;
    }

    Res countExpr(const Expr& e) {
        Res r;
        if (!e) return r;
        const ExprNode& n = *e;
        const bool isFloat = ir::isFloatingPoint(n.dtype);
        switch (n.kind) {
        case ExprKind::IntImm:
        case ExprKind::FloatImm:
        case ExprKind::VarRef: return r;
        case ExprKind::Unary:
            for (const auto& a : n.args)
                if (!add(r, countExpr(a))) return r;
            if (n.unary == UnaryOp::Neg && isFloat) r.c.flops += 1;
            return r;
        case ExprKind::Binary: {
            if (n.args.size() != 2) return r;
            if (isLogical(n.binary)) {
                if (!add(r, countExpr(n.args[0]))) return r;
                const Res right = countExpr(n.args[1]);
                if (!right.undecided && right.c.zero()) return r;
                const Val a = ev(n.args[0]);
                const bool skipValue = n.binary == BinaryOp::Or;  // Or skips on true, And on false
                if (isDefinite(a, skipValue)) return r;
                if (isDefinite(a, !skipValue)) {
                    add(r, right);
                    return r;
                }
                if (a.known) {
                    merge(r.blame, a.blame);
                    r.undecided = true;
                    return r;
                }
                m_exact = false;  // data decides: count the right operand (the larger case)
                add(r, right);
                return r;
            }
            if (!add(r, countExpr(n.args[0]))) return r;
            if (!add(r, countExpr(n.args[1]))) return r;
            if (isFloat && !isComparison(n.binary)) r.c.flops += 1;
            return r;
        }
        case ExprKind::Select: {
            if (n.args.size() != 3) return r;
            if (!add(r, countExpr(n.args[0]))) return r;
            const Res a = countExpr(n.args[1]), b = countExpr(n.args[2]);
            const Val c = ev(n.args[0]);
            if (c.single()) {
                add(r, c.lo != 0 ? a : b);
                return r;
            }
            return addEither(r, c, a, b);
        }
        case ExprKind::Cast:
            for (const auto& a : n.args)
                if (!add(r, countExpr(a))) return r;
            return r;
        case ExprKind::Load:
            for (const auto& a : n.args)
                if (!add(r, countExpr(a))) return r;
            addAccess(r.c, n.buffer, false);
            return r;
        case ExprKind::Call:
            for (const auto& a : n.args)
                if (!add(r, countExpr(a))) return r;
            if (isFloat) r.c.flops += n.intrinsic == Intrinsic::Fma ? 2 : 1;
            return r;
        }
        return r;
    }

    /// Binds a variable for a scope and restores the previous binding on destruction.
    class Binding {
    public:
        Binding(Counter& c, int id, std::optional<Val> v) : m_slot(c.slot(id)) {
            if (!m_slot) return;
            m_old = std::move(*m_slot);
            *m_slot = std::move(v);
        }
        ~Binding() {
            if (m_slot) *m_slot = std::move(m_old);
        }
        Binding(const Binding&) = delete;
        Binding& operator=(const Binding&) = delete;

    private:
        std::optional<Val>* m_slot;
        std::optional<Val> m_old;
    };

    /// Counts loop `s` for its variable in [lo, hi]: once for the whole range when nothing in
    /// the body depends on where in the range it is, else split in halves.
    Res countRange(const StmtNode& s, std::int64_t lo, std::int64_t hi) {
        Res r;
        {
            Val v{true, lo, hi, {}};
            if (lo != hi) v.blame = {s.var.id};
            Binding bind(*this, s.var.id, v);
            r = s.body.empty() ? Res{} : count(s.body[0]);
        }
        if (!r.undecided) {
            r.c *= static_cast<double>(hi - lo + 1);
            return r;
        }
        const bool onlyThis = r.blame.size() == 1 && r.blame[0] == s.var.id;
        if (!onlyThis || lo == hi) {
            // an enclosing loop's range decides: let it split first
            r.blame.erase(std::remove(r.blame.begin(), r.blame.end(), s.var.id), r.blame.end());
            if (r.blame.empty()) {  // cannot happen; be safe
                m_exact = false;
                r.undecided = false;
            }
            return r;
        }
        const std::int64_t mid = lo + (hi - lo) / 2;
        Res a = countRange(s, lo, mid);
        if (a.undecided) return a;
        Res b = countRange(s, mid + 1, hi);
        if (b.undecided) return b;
        a.c += b.c;
        return a;
    }

    Res count(const Stmt& st) {
        Res r;
        if (!st) return r;
        const StmtNode& s = *st;
        switch (s.kind) {
        case StmtKind::Seq:
            for (const auto& c : s.body)
                if (!add(r, count(c))) return r;
            return r;
        case StmtKind::For: {
            const Val ext = ev(s.extent);
            if (!ext.known) {
                m_exact = false;  // data-dependent trip count: one iteration
                Binding bind(*this, s.var.id, std::nullopt);
                return s.body.empty() ? r : count(s.body[0]);
            }
            if (!ext.single()) return undecided(ext);
            if (ext.lo <= 0) return r;
            return countRange(s, 0, ext.lo - 1);
        }
        case StmtKind::If: {
            if (!add(r, countExpr(s.value))) return r;
            const Val c = ev(s.value);
            if (c.single()) {
                add(r, c.lo != 0 ? (s.body.empty() ? Res{} : count(s.body[0])) : count(s.elseBody));
                return r;
            }
            const Res t = s.body.empty() ? Res{} : count(s.body[0]);
            return addEither(r, c, t, count(s.elseBody));
        }
        case StmtKind::Let: {
            if (!add(r, countExpr(s.value))) return r;
            std::optional<Val> v;
            if (!ir::isFloatingPoint(s.var.dtype)) v = ev(s.value);
            Binding bind(*this, s.var.id, v);
            if (!s.body.empty()) add(r, count(s.body[0]));
            return r;
        }
        case StmtKind::Store:
            if (!add(r, countExpr(s.value))) return r;
            for (const auto& i : s.indices)
                if (!add(r, countExpr(i))) return r;
            addAccess(r.c, s.buffer, true);
            return r;
        case StmtKind::Allocate:
            if (!s.body.empty()) add(r, count(s.body[0]));
            return r;
        case StmtKind::Evaluate: add(r, countExpr(s.value)); return r;
        case StmtKind::Mma: {
            // Per thread: the warp's 2 * 16 * 8 * 8 useful FLOPs / 32 lanes (whatever the
            // precision), 4 A and 2 B operand loads, 4 accumulator loads and stores.
            for (const auto& i : s.indices)
                if (!add(r, countExpr(i))) return r;
            if (s.mma) {
                bool ok = true;
                forEachMmaExpr(*s.mma, [&](const Expr& e) { ok = ok && add(r, countExpr(e)); });
                if (!ok) return r;
                r.c.flops += 64;
                for (int q = 0; q < 4; ++q) addAccess(r.c, s.mma->a.buffer, false);
                for (int q = 0; q < 2; ++q) addAccess(r.c, s.mma->b.buffer, false);
            }
            for (int q = 0; q < 4; ++q) {
                addAccess(r.c, s.buffer, false);
                addAccess(r.c, s.buffer, true);
            }
            return r;
        }
        case StmtKind::Barrier:
        case StmtKind::Comment: return r;
        }
        return r;
    }

    const Kernel& m_k;
    std::vector<std::optional<Val>> m_env;
    bool m_exact = true;
};

}  // namespace

KernelCounts countKernel(const Kernel& k) {
    Counter c(k);
    return c.run();
}

}  // namespace tessera::lower
