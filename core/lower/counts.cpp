#include "core/lower/counts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>
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

/// Rewrites directly nested loops `for t in 0..T { for i in 0..I { body } }` whose body uses t and
/// i only as `t + i * T` (a cooperative loop: worker t takes the elements t, t + T, t + 2T ...)
/// into one loop `for x in 0..T*I { body[t + i * T := x] }`: the same iterations (a bijection),
/// but one variable whose guards (x < n, x / 81, x % 81 ...) split as one range, where the pair
/// of loops splits t down to single workers. Either loop may be the outer one.
class LoopCollapser {
public:
    explicit LoopCollapser(int nextId) : m_nextId(nextId) {}

    Stmt run(const Stmt& st) {
        if (!st) return st;
        const StmtNode& s = *st;
        if (s.kind == StmtKind::For)
            if (Stmt joined = collapsed(s)) return run(joined);
        StmtNode out = s;
        bool changed = false;
        for (auto& b : out.body) {
            Stmt nb = run(b);
            changed = changed || nb != b;
            b = std::move(nb);
        }
        if (out.elseBody) {
            Stmt ne = run(out.elseBody);
            changed = changed || ne != out.elseBody;
            out.elseBody = std::move(ne);
        }
        return changed ? std::make_shared<const StmtNode>(std::move(out)) : st;
    }

    int nextId() const { return m_nextId; }

private:
    /// The joined loop for `s` and its directly nested loop, or null.
    Stmt collapsed(const StmtNode& s) {
        if (s.body.size() != 1 || !s.body[0] || s.body[0]->kind != StmtKind::For) return nullptr;
        const StmtNode& inner = *s.body[0];
        std::int64_t outerExt = 0, innerExt = 0;
        if (!s.extent.isIntImm(&outerExt) || !inner.extent.isIntImm(&innerExt)) return nullptr;
        if (outerExt <= 0 || innerExt <= 0 || inner.body.size() != 1) return nullptr;
        if (outerExt > std::numeric_limits<std::int64_t>::max() / innerExt) return nullptr;
        // Which loop is the worker t (coefficient 1) is read off the first use.
        for (const bool outerIsWorker : {true, false}) {
            m_t = outerIsWorker ? s.var.id : inner.var.id;
            m_i = outerIsWorker ? inner.var.id : s.var.id;
            m_stride = outerIsWorker ? outerExt : innerExt;
            m_x = Var{m_nextId, "x", DType::I64};
            m_memo.clear();
            bool used = false;
            if (!onlyCombined(inner.body[0], used) || !used) continue;
            ++m_nextId;
            StmtNode joined;
            joined.kind = StmtKind::For;
            joined.var = m_x;
            joined.extent = intImm(outerExt * innerExt);
            joined.forKind = s.forKind;
            joined.body = {substitute(inner.body[0])};
            return std::make_shared<const StmtNode>(std::move(joined));
        }
        return nullptr;
    }

    bool isVar(const Expr& e, int id) const { return e && e->kind == ExprKind::VarRef && e->var.id == id; }

    /// e is t + i * T (in either order of the sum and of the product).
    bool isCombined(const Expr& e) const {
        if (!e || e->kind != ExprKind::Binary || e->binary != BinaryOp::Add || e->args.size() != 2) return false;
        for (int k = 0; k < 2; ++k) {
            const Expr& t = e->args[static_cast<std::size_t>(k)];
            const Expr& p = e->args[static_cast<std::size_t>(1 - k)];
            if (!isVar(t, m_t) || !p || p->kind != ExprKind::Binary || p->binary != BinaryOp::Mul || p->args.size() != 2) continue;
            std::int64_t c = 0;
            if ((isVar(p->args[0], m_i) && p->args[1].isIntImm(&c) && c == m_stride) ||
                (isVar(p->args[1], m_i) && p->args[0].isIntImm(&c) && c == m_stride))
                return true;
        }
        return false;
    }

    bool onlyCombined(const Expr& e, bool& used) const {
        if (!e) return true;
        if (isCombined(e)) {
            used = true;
            return true;
        }
        if (isVar(e, m_t) || isVar(e, m_i)) return false;
        for (const auto& a : e->args)
            if (!onlyCombined(a, used)) return false;
        return true;
    }

    bool onlyCombined(const Stmt& st, bool& used) const {
        if (!st) return true;
        const StmtNode& s = *st;
        if (!onlyCombined(s.extent, used) || !onlyCombined(s.value, used)) return false;
        for (const auto& i : s.indices)
            if (!onlyCombined(i, used)) return false;
        if (s.mma) {
            bool ok = true;
            forEachMmaExpr(*s.mma, [&](const Expr& e) { ok = ok && onlyCombined(e, used); });
            if (!ok) return false;
        }
        for (const auto& b : s.body)
            if (!onlyCombined(b, used)) return false;
        return onlyCombined(s.elseBody, used);
    }

    Expr substitute(const Expr& e) {
        if (!e) return e;
        if (isCombined(e)) return varRef(m_x);
        if (e->args.empty()) return e;
        if (auto it = m_memo.find(e.get()); it != m_memo.end()) return it->second;
        ExprNode out = *e;
        bool changed = false;
        for (auto& a : out.args) {
            Expr na = substitute(a);
            changed = changed || na.get() != a.get();
            a = std::move(na);
        }
        Expr r = changed ? Expr(std::make_shared<const ExprNode>(std::move(out))) : e;
        m_memo.emplace(e.get(), r);
        return r;
    }

    Stmt substitute(const Stmt& st) {
        if (!st) return st;
        StmtNode out = *st;
        out.extent = substitute(out.extent);
        out.value = substitute(out.value);
        for (auto& i : out.indices) i = substitute(i);
        if (out.mma) {
            MmaInfo m = *out.mma;
            for (auto& b : m.a.base) b = substitute(b);
            for (auto& b : m.b.base) b = substitute(b);
            m.lane = substitute(m.lane);
            out.mma = std::make_shared<const MmaInfo>(std::move(m));
        }
        for (auto& b : out.body) b = substitute(b);
        out.elseBody = substitute(out.elseBody);
        return std::make_shared<const StmtNode>(std::move(out));
    }

    int m_nextId;
    int m_t = -1, m_i = -1;
    std::int64_t m_stride = 0;
    Var m_x;
    std::unordered_map<const ExprNode*, Expr> m_memo;
};

class Counter {
public:
    Counter(const Kernel& k, CountMethod method) : m_k(k), m_method(method) {
        int maxId = -1;
        scan(k.body, maxId);
        m_body = k.body;
        int ids = maxId + 1;
        if (method == CountMethod::ClosedForm) {
            LoopCollapser collapser(ids);
            m_body = collapser.run(k.body);
            ids = collapser.nextId();
        }
        m_env.resize(static_cast<std::size_t>(ids));
        m_probe.resize(m_env.size());
    }

    KernelCounts run() {
        KernelCounts out;
        Res r = count(m_body);
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
    /// the body depends on where in the range it is; else, when the body's counts repeat with a
    /// period L that fits twice in the range, one period times the number of whole periods plus
    /// the rest; else split in halves.
    Res countRange(const StmtNode& s, std::int64_t lo, std::int64_t hi) {
        if (m_method == CountMethod::Enumerate && lo != hi) {
            Res sum;
            for (std::int64_t v = lo;; ++v) {
                if (!add(sum, countRange(s, v, v))) return sum;
                if (v == hi) return sum;
            }
        }
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
        std::int64_t mid = lo + (hi - lo) / 2;
        if (m_method == CountMethod::ClosedForm) {
            const Period period = findPeriod(s, lo, hi);
            if (const std::int64_t len = period.length; len > 0) {
                const std::int64_t n = hi - lo + 1, whole = n / len;
                Res a = countRange(s, lo, lo + len - 1);
                if (a.undecided) return a;
                a.c *= static_cast<double>(whole);
                if (n % len != 0) {
                    Res b = countRange(s, lo + whole * len, hi);
                    if (b.undecided) return b;
                    a.c += b.c;
                }
                return a;
            }
            // split at the multiple of the alignment nearest the middle, if one is inside
            if (const std::int64_t al = period.align; al > 1) {
                const std::int64_t below = floorDivI(mid + 1, al) * al, above = below + al;
                const std::int64_t at = (mid + 1 - below <= above - (mid + 1)) ? below : above;
                if (at > lo && at <= hi) mid = at - 1;
                else if (below > lo && below <= hi) mid = below - 1;
                else if (above > lo && above <= hi) mid = above - 1;
            }
        }
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

    // ---- periodicity: counting a loop range by whole periods ----
    //
    // A loop range [lo, hi] of variable v that the conditions split finely (index maths such as
    // (v / W) % H, lanes t % 32, a block index b * 256 + t taken apart by / and %) is often
    // periodic: the body executes the same way at v and at v + L for every v of the range, so
    // the range counts as whole periods times one period, plus the rest. The probe below proves
    // that for a candidate L by walking the body once, with every loop variable inside bound to
    // its range (as counting binds it) and every expression that decides counts (If and Select
    // conditions, the left operand of a costly && / ||, inner loop extents) shown to have the
    // same value, or no value, at v and at v + L.

    /// How an integer or bool expression changes when v moves by L: at every pair of points (v,
    /// v + L) of the range, either ev has no value at both or values at both that differ by
    /// `delta`. Not ok: not shown.
    struct Shift {
        bool ok = false;
        std::int64_t delta = 0;
        static Shift by(__int128 d) {
            if (!fits(d)) return {};
            return {true, static_cast<std::int64_t>(d)};
        }
        static Shift fail() { return {}; }
    };

    /// Per variable during a probe: inner loop variables (delta 0) and Lets (their value's
    /// shift, worked out when first used: a Let that only feeds load indices asks nothing of L).
    struct ProbeSlot {
        bool bound = false;
        bool done = false;
        Shift shift;
        Expr value;
    };

    /// Binds a variable for the probe's walk (its interval in m_env, its shift in m_probe).
    class ProbeBinding {
    public:
        ProbeBinding(Counter& c, int id, std::optional<Val> v, ProbeSlot p)
            : m_counter(c), m_bind(c, id, std::move(v)), m_id(id) {
            if (ProbeSlot* s = c.probeSlot(id)) {
                m_old = std::move(*s);
                *s = std::move(p);
            }
        }
        ~ProbeBinding() {
            if (ProbeSlot* s = m_counter.probeSlot(m_id)) *s = std::move(m_old);
        }
        ProbeBinding(const ProbeBinding&) = delete;
        ProbeBinding& operator=(const ProbeBinding&) = delete;

    private:
        Counter& m_counter;
        Binding m_bind;
        int m_id;
        ProbeSlot m_old;
    };

    ProbeSlot* probeSlot(int id) {
        if (id < 0 || id >= static_cast<int>(m_probe.size())) return nullptr;
        return &m_probe[static_cast<std::size_t>(id)];
    }

    struct Period {
        std::int64_t length = 0;  ///< 0: none proved that fits twice in the range
        std::int64_t align = 1;   ///< else: the last candidate, whose multiples make good split points
    };

    /// A period the probe proves for loop `s` over [lo, hi]. Divisions ask for L to be a
    /// multiple of their divisor's share, so the candidate grows from 1 by those factors (a few
    /// steps). When a candidate fails only because some guard is not uniform over the range,
    /// splitting the range at multiples of it keeps the periodic part whole.
    Period findPeriod(const StmtNode& s, std::int64_t lo, std::int64_t hi) {
        Period p;
        if (s.body.empty()) return p;
        const std::int64_t n = hi - lo + 1;
        Val range{true, lo, hi, {s.var.id}};
        Binding bind(*this, s.var.id, range);
        std::int64_t period = 1;
        for (;;) {
            m_probeVar = s.var.id;
            m_probePeriod = period;
            m_probeNeed = 1;
            const bool ok = periodic(s.body[0]);
            m_probeVar = -1;
            if (ok) {
                p.length = period;
                return p;
            }
            p.align = period;
            if (m_probeNeed == 1 || period > n / 2 / m_probeNeed) return p;
            period *= m_probeNeed;
        }
    }

    /// Asks the probe to retry with L times a multiple of `factor`.
    void needFactor(std::int64_t factor) {
        if (factor <= 1) return;
        const __int128 l = static_cast<__int128>(m_probeNeed / std::gcd(m_probeNeed, factor)) * factor;
        m_probeNeed = l > kMax / 4 ? kMax / 4 : static_cast<std::int64_t>(l);  // too long for any range
    }

    /// Every point of the range gives e the same value: the interval says so.
    Shift fallback(const Expr& e) { return ev(e).single() ? Shift::by(0) : Shift::fail(); }

    /// Shift d for the result of integer arithmetic whose operands shift consistently; the
    /// interval of the result must exist so that no point overflows.
    Shift arith(const Expr& e, __int128 d) {
        if (d == 0) return Shift::by(0);
        return ev(e).known ? Shift::by(d) : Shift::fail();
    }

    Shift shiftOf(const Expr& e) {
        if (!e) return Shift::by(0);
        const ExprNode& n = *e;
        if (ir::isFloatingPoint(n.dtype)) return Shift::by(0);  // ev has no value for floats anywhere
        switch (n.kind) {
        case ExprKind::IntImm:
        case ExprKind::FloatImm:
        case ExprKind::Load: return Shift::by(0);
        case ExprKind::VarRef: {
            if (n.var.id == m_probeVar) return Shift::by(m_probePeriod);
            ProbeSlot* p = probeSlot(n.var.id);
            if (!p || !p->bound) return Shift::by(0);  // bound outside the loop: the same at v and v + L
            if (!p->done) {
                p->done = true;  // a Let's value never refers to the Let itself
                p->shift = shiftOf(p->value);
            }
            return p->shift;
        }
        case ExprKind::Unary: {
            if (n.args.size() != 1) return Shift::by(0);
            const Shift a = shiftOf(n.args[0]);
            if (!a.ok) return fallback(e);
            if (n.unary == UnaryOp::Not) return a.delta == 0 ? a : fallback(e);
            return arith(e, -static_cast<__int128>(a.delta));
        }
        case ExprKind::Binary: return shiftBinary(e);
        case ExprKind::Select: {
            if (n.args.size() != 3) return Shift::by(0);
            const Val c = ev(n.args[0]);
            if (c.single()) {
                const Shift arm = shiftOf(n.args[c.lo != 0 ? 1 : 2]);
                return arm.ok ? arm : fallback(e);
            }
            const Shift sc = shiftOf(n.args[0]), a = shiftOf(n.args[1]), b = shiftOf(n.args[2]);
            if (sc.ok && sc.delta == 0 && a.ok && b.ok && a.delta == b.delta) return a;
            return fallback(e);
        }
        case ExprKind::Cast: {
            if (n.args.size() != 1) return Shift::by(0);
            if (ir::isFloatingPoint(n.args[0].dtype())) return Shift::by(0);
            const Shift a = shiftOf(n.args[0]);
            if (!a.ok) return fallback(e);
            if (a.delta == 0) return a;
            if (n.dtype == DType::Bool) return fallback(e);
            // a narrowing cast keeps the shift only where no point wraps: ev has a value then
            return ev(e).known ? a : fallback(e);
        }
        case ExprKind::Call: {
            if (n.args.size() != 1) return Shift::by(0);
            const bool passes = n.intrinsic == Intrinsic::Floor || n.intrinsic == Intrinsic::Ceil ||
                                n.intrinsic == Intrinsic::Round;
            if (n.intrinsic != Intrinsic::Abs && !passes) return Shift::by(0);
            const Shift a = shiftOf(n.args[0]);
            if (!a.ok) return fallback(e);
            if (a.delta == 0 || passes) return a;
            const Val v = ev(n.args[0]);
            if (v.known && v.lo >= 0) return a;
            if (v.known && v.hi <= 0) return Shift::by(-static_cast<__int128>(a.delta));
            return fallback(e);
        }
        }
        return Shift::fail();
    }

    Shift shiftBinary(const Expr& e) {
        const ExprNode& n = *e;
        if (n.args.size() != 2) return Shift::by(0);
        const BinaryOp op = n.binary;
        const Shift a = shiftOf(n.args[0]);
        const Shift b = shiftOf(n.args[1]);
        if (!a.ok || !b.ok) return fallback(e);
        // operands equal (or equally valueless) at v and v + L: so is the result
        if (a.delta == 0 && b.delta == 0) return Shift::by(0);
        if (isLogical(op) || isComparison(op)) {
            // a comparison of operands that move together keeps its value
            if (isComparison(op) && a.delta == b.delta) return Shift::by(0);
            return fallback(e);
        }
        if (ir::isFloatingPoint(n.args[0].dtype()) || ir::isFloatingPoint(n.args[1].dtype())) return Shift::by(0);
        switch (op) {
        case BinaryOp::Add: return arith(e, static_cast<__int128>(a.delta) + b.delta);
        case BinaryOp::Sub: return arith(e, static_cast<__int128>(a.delta) - b.delta);
        case BinaryOp::Mul: {
            const Val va = ev(n.args[0]), vb = ev(n.args[1]);
            if (b.delta == 0 && vb.single()) return arith(e, static_cast<__int128>(a.delta) * vb.lo);
            if (a.delta == 0 && va.single()) return arith(e, static_cast<__int128>(b.delta) * va.lo);
            return fallback(e);
        }
        case BinaryOp::Min:
        case BinaryOp::Max: {
            if (a.delta == b.delta) return arith(e, a.delta);
            // one operand is the smaller (larger) one at every point: its shift
            const Val va = ev(n.args[0]), vb = ev(n.args[1]);
            if (!va.known || !vb.known) return fallback(e);
            const bool aSmaller = va.hi <= vb.lo, bSmaller = vb.hi <= va.lo;
            if (op == BinaryOp::Min ? aSmaller : bSmaller) return arith(e, a.delta);
            if (op == BinaryOp::Min ? bSmaller : aSmaller) return arith(e, b.delta);
            return fallback(e);
        }
        case BinaryOp::Div:
        case BinaryOp::FloorDiv:
        case BinaryOp::Mod:
        case BinaryOp::FloorMod: {
            // (x + d) / c = x / c + d / c and (x + d) % c = x % c when c divides d; C's
            // truncation agrees with the floor where x >= 0
            const Val vb = ev(n.args[1]);
            if (b.delta != 0 || !vb.single() || vb.lo <= 0) return fallback(e);
            const std::int64_t c = vb.lo;
            if (op == BinaryOp::Div || op == BinaryOp::Mod) {
                const Val va = ev(n.args[0]);
                if (!va.known || va.lo < 0) return fallback(e);
            }
            if (a.delta % c != 0) {
                const Shift f = fallback(e);
                if (!f.ok) {
                    const std::int64_t d = a.delta < 0 ? -a.delta : a.delta;
                    needFactor(c / std::gcd(d, c));
                }
                return f;
            }
            if (op == BinaryOp::Mod || op == BinaryOp::FloorMod) return Shift::by(0);
            return arith(e, a.delta / c);
        }
        default: return fallback(e);
        }
    }

    /// True when e decides its value the same way at v and v + L (delta 0).
    bool steady(const Expr& e) {
        const Shift s = shiftOf(e);
        return s.ok && s.delta == 0;
    }

    /// Whether counting e can add anything (a load or a float operation somewhere in it).
    static bool costly(const Expr& e) {
        if (!e) return false;
        const ExprNode& n = *e;
        if (n.kind == ExprKind::Load) return true;
        if (ir::isFloatingPoint(n.dtype) &&
            (n.kind == ExprKind::Unary || n.kind == ExprKind::Binary || n.kind == ExprKind::Call))
            return true;
        for (const auto& a : n.args)
            if (costly(a)) return true;
        return false;
    }

    // The walks below visit everything even after a failure, so that every division can ask
    // for its factor of the period in one walk and the splitting learns the alignment.

    /// countExpr's decisions in e (Select conditions, the left operand of && / ||) are the same
    /// at v and v + L wherever they matter.
    bool periodicExpr(const Expr& e) {
        if (!e) return true;
        const ExprNode& n = *e;
        bool ok = true;
        if (n.kind == ExprKind::Binary && isLogical(n.binary) && n.args.size() == 2) {
            if (costly(n.args[1])) ok = steady(n.args[0]);
        } else if (n.kind == ExprKind::Select && n.args.size() == 3) {
            if (costly(n.args[1]) || costly(n.args[2])) ok = steady(n.args[0]);
        }
        for (const auto& a : n.args) ok = periodicExpr(a) && ok;
        return ok;
    }

    /// Statement st executes (in count's sense) the same way at v and v + L.
    bool periodic(const Stmt& st) {
        if (!st) return true;
        const StmtNode& s = *st;
        switch (s.kind) {
        case StmtKind::Seq: {
            bool ok = true;
            for (const auto& c : s.body) ok = periodic(c) && ok;
            return ok;
        }
        case StmtKind::For: {
            bool ok = periodicExpr(s.extent);
            ok = steady(s.extent) && ok;
            if (s.body.empty()) return ok;
            const Val ext = ev(s.extent);
            std::optional<Val> v;  // no value: a data-dependent extent (counted once)
            if (ext.known) {
                const std::int64_t top = std::max<std::int64_t>(ext.hi - 1, 0);
                v = Val{true, 0, top, top > 0 ? Blame{s.var.id} : Blame{}};
            }
            ProbeBinding bind(*this, s.var.id, v, ProbeSlot{true, true, Shift::by(0), {}});
            return periodic(s.body[0]) && ok;
        }
        case StmtKind::If: {
            bool ok = periodicExpr(s.value);
            ok = steady(s.value) && ok;
            if (!s.body.empty()) ok = periodic(s.body[0]) && ok;
            return periodic(s.elseBody) && ok;
        }
        case StmtKind::Let: {
            const bool ok = periodicExpr(s.value);
            std::optional<Val> v;
            if (!ir::isFloatingPoint(s.var.dtype)) v = ev(s.value);
            ProbeBinding bind(*this, s.var.id, v, ProbeSlot{true, false, {}, s.value});
            return (s.body.empty() || periodic(s.body[0])) && ok;
        }
        case StmtKind::Store: {
            bool ok = periodicExpr(s.value);
            for (const auto& i : s.indices) ok = periodicExpr(i) && ok;
            return ok;
        }
        case StmtKind::Allocate: return s.body.empty() || periodic(s.body[0]);
        case StmtKind::Evaluate: return periodicExpr(s.value);
        case StmtKind::Mma: {
            bool ok = true;
            for (const auto& i : s.indices) ok = periodicExpr(i) && ok;
            if (s.mma) forEachMmaExpr(*s.mma, [&](const Expr& e) { ok = periodicExpr(e) && ok; });
            return ok;
        }
        case StmtKind::Barrier:
        case StmtKind::Comment: return true;
        }
        return false;
    }

    const Kernel& m_k;
    CountMethod m_method;
    Stmt m_body;  ///< the kernel's body, cooperative loops collapsed (ClosedForm)
    std::vector<std::optional<Val>> m_env;
    std::vector<ProbeSlot> m_probe;
    int m_probeVar = -1;              ///< the loop variable a probe moves by m_probePeriod
    std::int64_t m_probePeriod = 1;
    std::int64_t m_probeNeed = 1;     ///< factor a division asked the next candidate period for
    bool m_exact = true;
};

}  // namespace

KernelCounts countKernel(const Kernel& k, CountMethod method) {
    Counter c(k, method);
    return c.run();
}

}  // namespace tessera::lower
