// Lowering of tessera Compute nodes (ir::ComputeDef, docs/dsl.md §4.4-4.5).
//
// The output axes run under the kernel's mapping plan (its schedule's grid/block, else
// `parallel` axes as grid workers with the rest as loops, else defaultCpuMapping). Each Reduce is
// a Local scalar accumulator (sum 0, prod 1, max -inf, min +inf; integer max/min start at the
// type's limits) in the reduction body's type (f32 for f16/bf16) with serial loops over its axes
// in written order. Integer `/` and `%` are floor division and remainder; float `%` is
// a - floor(a/b)*b, as in the reference interpreter. Select evaluates only the chosen branch (a
// branch holding a reduction becomes an if/else statement).
//
// Schedule items honoured: grid/block (warp/thread) mappings; `tile k by F` splits reduction
// axis k into (k / F, k % F) loops with a predicate when F does not divide the extent;
// `unroll k by F` marks k's (inner) loop Unroll(F) (F = 0: fully); `vectorize a by F` marks
// a's innermost loop Vectorize(F) (output or reduction axis); `parallel a` on an output axis
// without grid/block mappings makes that axis the grid's workers. `stage X in shared|local` has
// no effect on the CPU target and is recorded in the kernel's notes.

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

#include "core/ir/compute.h"
#include "core/lower/detail/lower_templates.h"

namespace tessera::lower::detail {

namespace {

using ir::ComputeBinary;
using ir::ComputeExpr;
using ir::ComputeKind;
using ir::ComputeUnary;

/// Lowest (max = false) or highest value of integer type t, as an int64 (u64's top is clamped).
std::int64_t intLimit(DType t, bool max) {
    switch (t) {
    case DType::I8: return max ? INT8_MAX : INT8_MIN;
    case DType::I16: return max ? INT16_MAX : INT16_MIN;
    case DType::I32: return max ? INT32_MAX : INT32_MIN;
    case DType::U8: return max ? UINT8_MAX : 0;
    case DType::U16: return max ? UINT16_MAX : 0;
    case DType::U32: return max ? static_cast<std::int64_t>(UINT32_MAX) : 0;
    case DType::U64: return max ? INT64_MAX : 0;
    default: return max ? INT64_MAX : INT64_MIN;
    }
}

DType accType(DType t) { return t == DType::F16 || t == DType::BF16 ? DType::F32 : t; }

bool containsReduce(const ComputeExpr& e) {
    if (e.kind == ComputeKind::Reduce) return true;
    for (const auto& a : e.args)
        if (containsReduce(a)) return true;
    return false;
}

Expr asBool(Expr e) {
    if (e.dtype() == DType::Bool) return e;
    return binary(BinaryOp::Ne, e, constant(0, e.dtype()));
}

/// Per reduction axis: what the schedule asks for.
struct AxisSchedule {
    std::int64_t tile = 0;    ///< tile factor (0 = not tiled)
    bool unroll = false;
    std::int64_t unrollFactor = 0;
    bool vectorize = false;
    std::int64_t vectorFactor = 0;
};

/// Statement list under construction, with the Local buffers allocated in it (wrapped around
/// the list when it is closed).
struct Frame {
    std::vector<Stmt> stmts;
    std::vector<int> allocs;
};

class ComputeLowering {
public:
    ComputeLowering(const ir::ComputeDef& def, Kernel& k, std::vector<int> inBufs,
                    std::vector<std::int64_t> axisExtent, std::map<int, AxisSchedule> sched)
        : m_def(def), m_k(k), m_in(std::move(inBufs)), m_ext(std::move(axisExtent)),
          m_sched(std::move(sched)), m_env(def.axes.size()) {}

    /// Statements computing the body for output index `idx` and storing into `out`.
    Stmt outputStmt(int out, DType outT, const std::vector<Expr>& idx) {
        for (std::size_t a = 0; a < idx.size() && a < m_env.size(); ++a) m_env[a] = idx[a];
        m_frames.emplace_back();
        Expr v = lower(m_def.body);
        emit(store(out, idx, cast(v, outT)));
        return closeFrame();
    }

private:
    void emit(Stmt s) { m_frames.back().stmts.push_back(std::move(s)); }

    Stmt closeFrame() {
        Frame f = std::move(m_frames.back());
        m_frames.pop_back();
        Stmt s = seq(std::move(f.stmts));
        for (std::size_t i = f.allocs.size(); i-- > 0;) s = allocate(f.allocs[i], s);
        return s;
    }

    int newLocal(DType t, const std::string& hint) {
        BufferDecl b;
        b.name = hint + std::to_string(m_k.buffers.size());
        b.dtype = t;
        b.shape = {};
        b.scope = MemoryScope::Local;
        b.role = BufferRole::Temp;
        const int id = m_k.addBuffer(std::move(b));
        m_frames.back().allocs.push_back(id);
        return id;
    }

    DType typeOf(const ComputeExpr& e) const {
        if (e.dtype != DType::Undefined) return e.dtype;
        if (e.kind == ComputeKind::Const) return e.constDType;
        if (e.kind == ComputeKind::Index) return DType::I64;
        return DType::F32;
    }

    Expr lower(const ComputeExpr& e) {
        const DType t = typeOf(e);
        switch (e.kind) {
        case ComputeKind::Const:
            if (ir::isInteger(e.constDType) && !ir::isFloatingPoint(t)) return intImm(e.intValue, t);
            if (t == DType::Bool) return boolImm(e.value != 0.0 || e.intValue != 0);
            return constant(ir::isInteger(e.constDType) ? static_cast<double>(e.intValue) : e.value, t);
        case ComputeKind::Index: return cast(m_env.at(static_cast<std::size_t>(e.axis)), t);
        case ComputeKind::Access: {
            const int b = m_in.at(static_cast<std::size_t>(e.input));
            std::vector<Expr> idx;
            for (const auto& s : e.args) idx.push_back(cast(lower(s), DType::I64));
            return load(b, m_k.buffers[static_cast<std::size_t>(b)].dtype, std::move(idx));
        }
        case ComputeKind::Unary: return lowerUnary(e, t);
        case ComputeKind::Binary: return lowerBinary(e, t);
        case ComputeKind::Select: return lowerSelect(e, t);
        case ComputeKind::Cast: return cast(lower(e.args[0]), e.castTo);
        case ComputeKind::Reduce: return lowerReduce(e);
        }
        return Expr();
    }

    Expr lowerUnary(const ComputeExpr& e, DType t) {
        Expr a = lower(e.args[0]);
        auto fn = [&](Intrinsic f) {
            const DType ft = ir::isFloatingPoint(t) ? t : DType::F64;
            return cast(call(f, {cast(a, ft)}), t);
        };
        switch (e.unary) {
        case ComputeUnary::Neg: return unary(UnaryOp::Neg, cast(a, t));
        case ComputeUnary::Not: return unary(UnaryOp::Not, asBool(a));
        case ComputeUnary::Exp: return fn(Intrinsic::Exp);
        case ComputeUnary::Log: return fn(Intrinsic::Log);
        case ComputeUnary::Sqrt: return fn(Intrinsic::Sqrt);
        case ComputeUnary::Rsqrt: return fn(Intrinsic::Rsqrt);
        case ComputeUnary::Sin: return fn(Intrinsic::Sin);
        case ComputeUnary::Cos: return fn(Intrinsic::Cos);
        case ComputeUnary::Tan: return fn(Intrinsic::Tan);
        case ComputeUnary::Tanh: return fn(Intrinsic::Tanh);
        case ComputeUnary::Sigmoid: return fn(Intrinsic::Sigmoid);
        case ComputeUnary::Abs:
            if (ir::isFloatingPoint(t)) return fn(Intrinsic::Abs);
            a = cast(a, t);
            return select(a < constant(0, t), unary(UnaryOp::Neg, a), a);
        case ComputeUnary::Floor: return ir::isFloatingPoint(t) ? fn(Intrinsic::Floor) : cast(a, t);
        case ComputeUnary::Ceil: return ir::isFloatingPoint(t) ? fn(Intrinsic::Ceil) : cast(a, t);
        case ComputeUnary::Round: return ir::isFloatingPoint(t) ? fn(Intrinsic::Round) : cast(a, t);
        case ComputeUnary::Erf: return fn(Intrinsic::Erf);
        }
        return a;
    }

    Expr lowerBinary(const ComputeExpr& e, DType t) {
        const ComputeBinary op = e.binary;
        if (op == ComputeBinary::And || op == ComputeBinary::Or) {
            Expr a = asBool(lower(e.args[0])), b = asBool(lower(e.args[1]));
            return op == ComputeBinary::And ? (a && b) : (a || b);
        }
        Expr a = lower(e.args[0]), b = lower(e.args[1]);
        const bool cmp = op == ComputeBinary::Lt || op == ComputeBinary::Le || op == ComputeBinary::Gt ||
                         op == ComputeBinary::Ge || op == ComputeBinary::Eq || op == ComputeBinary::Ne;
        if (cmp) {
            // Common operand type: the float one, else the wider integer (i64), else bool.
            DType ct = DType::I64;
            if (ir::isFloatingPoint(a.dtype())) ct = a.dtype();
            else if (ir::isFloatingPoint(b.dtype())) ct = b.dtype();
            else if (a.dtype() == DType::Bool && b.dtype() == DType::Bool) ct = DType::Bool;
            a = cast(a, ct);
            b = cast(b, ct);
            switch (op) {
            case ComputeBinary::Lt: return binary(BinaryOp::Lt, a, b);
            case ComputeBinary::Le: return binary(BinaryOp::Le, a, b);
            case ComputeBinary::Gt: return binary(BinaryOp::Gt, a, b);
            case ComputeBinary::Ge: return binary(BinaryOp::Ge, a, b);
            case ComputeBinary::Eq: return binary(BinaryOp::Eq, a, b);
            default: return binary(BinaryOp::Ne, a, b);
            }
        }
        if (op == ComputeBinary::Pow || op == ComputeBinary::Atan2) {
            const DType ft = ir::isFloatingPoint(t) ? t : DType::F64;
            return cast(call(op == ComputeBinary::Pow ? Intrinsic::Pow : Intrinsic::Atan2, {cast(a, ft), cast(b, ft)}), t);
        }
        a = cast(a, t);
        b = cast(b, t);
        const bool isInt = ir::isInteger(t);
        switch (op) {
        case ComputeBinary::Add: return a + b;
        case ComputeBinary::Sub: return a - b;
        case ComputeBinary::Mul: return a * b;
        case ComputeBinary::Div: return isInt ? binary(BinaryOp::FloorDiv, a, b) : a / b;
        case ComputeBinary::Mod:
            if (isInt) return binary(BinaryOp::FloorMod, a, b);
            return a - call(Intrinsic::Floor, {a / b}) * b;
        case ComputeBinary::Min: return minOf(a, b);
        case ComputeBinary::Max: return maxOf(a, b);
        default: break;
        }
        return a;
    }

    Expr lowerSelect(const ComputeExpr& e, DType t) {
        Expr c = asBool(lower(e.args[0]));
        if (!containsReduce(e.args[1]) && !containsReduce(e.args[2]))
            return select(c, cast(lower(e.args[1]), t), cast(lower(e.args[2]), t));
        // A branch with a reduction computes statements: evaluate only the chosen one.
        const int tmp = newLocal(t, "sel");
        auto branch = [&](const ComputeExpr& x) {
            m_frames.emplace_back();
            Expr v = lower(x);
            emit(store(tmp, {}, cast(v, t)));
            return closeFrame();
        };
        Stmt thenS = branch(e.args[1]);
        Stmt elseS = branch(e.args[2]);
        emit(ifThen(c, thenS, elseS));
        return load(tmp, t, {});
    }

    Expr lowerReduce(const ComputeExpr& e) {
        const DType at = accType(typeOf(e));
        const int acc = newLocal(at, "acc");
        double init = 0.0;
        switch (e.reduce) {
        case ir::ReduceKind::Sum: init = 0.0; break;
        case ir::ReduceKind::Prod: init = 1.0; break;
        case ir::ReduceKind::Max:
            init = ir::isFloatingPoint(at) ? -std::numeric_limits<double>::infinity()
                                           : static_cast<double>(std::numeric_limits<std::int64_t>::min());
            break;
        case ir::ReduceKind::Min:
            init = ir::isFloatingPoint(at) ? std::numeric_limits<double>::infinity()
                                           : static_cast<double>(std::numeric_limits<std::int64_t>::max());
            break;
        }
        Expr initE = constant(init, at);
        if (ir::isInteger(at) && (e.reduce == ir::ReduceKind::Max || e.reduce == ir::ReduceKind::Min))
            initE = intImm(intLimit(at, e.reduce == ir::ReduceKind::Min), at);
        emit(store(acc, {}, initE));

        // Loops over the reduction axes (outermost first), with tiling, unroll, vectorize.
        struct LoopSpec {
            Var var;
            std::int64_t extent;
            ForKind kind;
            std::int64_t factor;
            std::string note;
        };
        std::vector<LoopSpec> loops;
        std::vector<std::pair<Var, Expr>> tileLets;  // k = k_o * F + k_i of tiled axes
        Expr guard;
        for (int ax : e.reduceAxes) {
            const auto a = static_cast<std::size_t>(ax);
            const std::int64_t n = m_ext.at(a);
            const AxisSchedule s = m_sched.count(ax) ? m_sched.at(ax) : AxisSchedule{};
            const std::string name = m_def.axes[a].name;
            ForKind innerKind = ForKind::Serial;
            std::int64_t innerFactor = 0;
            if (s.unroll) {
                innerKind = ForKind::Unroll;
                innerFactor = s.unrollFactor;
            }
            if (s.vectorize) {
                innerKind = ForKind::Vectorize;
                innerFactor = s.vectorFactor;
            }
            if (s.tile > 1 && s.tile < n) {
                const std::int64_t outer = (n + s.tile - 1) / s.tile;
                Var vo = m_k.newVar(name + "_o"), vi = m_k.newVar(name + "_i");
                loops.push_back({vo, outer, ForKind::Serial, 0, "tile " + name + " by " + std::to_string(s.tile)});
                loops.push_back({vi, s.tile, innerKind, innerFactor, {}});
                Var vk = m_k.newVar(name);
                tileLets.emplace_back(vk, varRef(vo) * intImm(s.tile) + varRef(vi));
                Expr idx = varRef(vk);
                if (n % s.tile != 0) {
                    Expr c = idx < intImm(n);
                    guard = guard ? (guard && c) : c;
                }
                m_env[a] = idx;
            } else if (n == 1) {
                m_env[a] = intImm(0);
            } else {
                Var v = m_k.newVar(name);
                loops.push_back({v, n, innerKind, innerFactor, {}});
                m_env[a] = varRef(v);
            }
        }
        m_frames.emplace_back();
        Expr x = cast(lower(e.args[0]), at);
        Expr cur = load(acc, at, {});
        Expr next;
        switch (e.reduce) {
        case ir::ReduceKind::Sum: next = cur + x; break;
        case ir::ReduceKind::Prod: next = cur * x; break;
        case ir::ReduceKind::Max: next = maxOf(cur, x); break;
        case ir::ReduceKind::Min: next = minOf(cur, x); break;
        }
        emit(store(acc, {}, next));
        Stmt body = closeFrame();
        if (guard) body = ifThen(guard, body);
        for (std::size_t i = tileLets.size(); i-- > 0;) body = let(tileLets[i].first, tileLets[i].second, body);
        for (std::size_t i = loops.size(); i-- > 0;)
            body = forLoop(loops[i].var, intImm(loops[i].extent), body, loops[i].kind, loops[i].factor, loops[i].note);
        emit(body);
        return load(acc, at, {});
    }

    const ir::ComputeDef& m_def;
    Kernel& m_k;
    std::vector<int> m_in;
    std::vector<std::int64_t> m_ext;
    std::map<int, AxisSchedule> m_sched;
    std::vector<Expr> m_env;
    std::vector<Frame> m_frames;
};

/// Extent of axis a: known, else the output's dim (output axes), else a symbol matched against
/// the inputs' declared dims, else the dim of an input it subscripts directly.
std::optional<std::int64_t> axisExtent(const LowerContext& ctx, const ir::ComputeDef& def, std::size_t a,
                                       const std::vector<std::int64_t>& outShape) {
    const ir::ComputeAxis& ax = def.axes[a];
    if (ax.extent.isKnown()) return ax.extent.value;
    if (a < def.numOutputAxes && a < outShape.size()) return outShape[a];
    const ir::Node& n = ctx.node;
    if (ax.extent.isSymbolic())
        for (ir::ValueId v : n.inputs) {
            if (v == ir::kNoValue) continue;
            const ir::Shape& s = ctx.g.value(v).type.shape;
            auto cs = concreteShape(ctx.g, v);
            for (std::size_t d = 0; s.rankKnown() && d < s.rank(); ++d)
                if (s[d].symbol == ax.extent.symbol && cs && d < cs->size()) return (*cs)[d];
        }
    std::optional<std::int64_t> found;
    std::function<void(const ComputeExpr&)> walk = [&](const ComputeExpr& e) {
        if (found) return;
        if (e.kind == ComputeKind::Access && e.input >= 0 && static_cast<std::size_t>(e.input) < n.inputs.size()) {
            auto cs = concreteShape(ctx.g, n.inputs[static_cast<std::size_t>(e.input)]);
            for (std::size_t d = 0; cs && d < e.args.size() && d < cs->size(); ++d)
                if (e.args[d].kind == ComputeKind::Index && static_cast<std::size_t>(e.args[d].axis) == a) {
                    found = (*cs)[d];
                    return;
                }
        }
        for (const auto& c : e.args) walk(c);
    };
    walk(def.body);
    return found;
}

support::Expected<LoweredKernel> lowerCompute(const LowerContext& ctx) {
    const ir::Node& n = ctx.node;
    if (!n.compute) return lowerError(ctx, "Compute node without a definition");
    const ir::ComputeDef& def = *n.compute;
    if (auto p = ir::computeStructureProblem(def, n.inputs.size()); !p.empty()) return lowerError(ctx, p);
    if (n.outputs.size() != 1 || n.outputs[0] == ir::kNoValue) return lowerError(ctx, "a Compute node has one output");
    auto outShape = shapeOf(ctx, n.outputs[0]);
    if (!outShape) return outShape.diagnostics();
    if (outShape->size() != def.numOutputAxes)
        return lowerError(ctx, "the output has rank " + std::to_string(outShape->size()) + " but the definition " +
                                   std::to_string(def.numOutputAxes) + " output axes");
    std::vector<std::int64_t> ext(def.axes.size());
    for (std::size_t a = 0; a < def.axes.size(); ++a) {
        auto e = axisExtent(ctx, def, a, *outShape);
        if (!e || *e < 0)
            return lowerError(ctx, "the extent of index '" + def.axes[a].name + "' (" + def.axes[a].extent.str() +
                                       ") is not known");
        ext[a] = *e;
    }
    LoweredKernel lk = beginKernel(ctx);
    std::vector<int> inBufs;
    for (ir::ValueId v : n.inputs) {
        if (v == ir::kNoValue) return lowerError(ctx, "a Compute input is missing");
        auto s = shapeOf(ctx, v);
        if (!s) return s.diagnostics();
        inBufs.push_back(addInput(ctx, lk, v));
    }
    const DType outT = dtypeOf(ctx.g, n.outputs[0]);
    if (outT == DType::Undefined || outT == DType::String) return lowerError(ctx, "the output has no numeric type");
    const int out = addOutput(ctx, lk, n.outputs[0]);
    Kernel& k = lk.kernel;

    // Schedule items by axis name.
    auto axisOf = [&](const std::string& name) -> int {
        for (std::size_t a = 0; a < def.axes.size(); ++a)
            if (def.axes[a].name == name) return static_cast<int>(a);
        return -1;
    };
    std::map<int, AxisSchedule> sched;
    std::vector<LoopOverride> overrides;
    std::vector<int> parallelAxes;
    if (const ir::KernelScheduleDecl* s = ctx.schedule) {
        auto find = [&](const ir::ScheduleAxisDecl& d) -> support::Expected<int> {
            const int a = axisOf(d.axis);
            if (a < 0) return lowerError(ctx, "schedule of '" + s->subject + "' names unknown axis '" + d.axis + "'");
            return a;
        };
        for (const auto& t : s->tiles) {
            auto a = find(t);
            if (!a) return a.diagnostics();
            if (static_cast<std::size_t>(*a) < def.numOutputAxes)
                k.notes.push_back("tile " + t.axis + ": output axes are tiled by the grid/block mappings; ignored");
            else
                sched[*a].tile = t.factor;
        }
        for (const auto& u : s->unrolls) {
            auto a = find(u);
            if (!a) return a.diagnostics();
            if (static_cast<std::size_t>(*a) < def.numOutputAxes) {
                overrides.push_back({*a, ForKind::Unroll, u.factor});
            } else {
                sched[*a].unroll = true;
                sched[*a].unrollFactor = u.factor;
            }
        }
        for (const auto& v : s->vectorizes) {
            auto a = find(v);
            if (!a) return a.diagnostics();
            if (static_cast<std::size_t>(*a) < def.numOutputAxes) {
                overrides.push_back({*a, ForKind::Vectorize, v.factor});
            } else {
                sched[*a].vectorize = true;
                sched[*a].vectorFactor = v.factor;
            }
        }
        for (const auto& p : s->parallels) {
            auto a = find(p);
            if (!a) return a.diagnostics();
            if (static_cast<std::size_t>(*a) < def.numOutputAxes)
                parallelAxes.push_back(*a);
            else
                k.notes.push_back("parallel " + p.axis + ": a reduction axis runs serially (no parallel reduction)");
        }
        for (const auto& st : s->stages) {
            std::string names;
            for (const auto& t : st.tensors) names += (names.empty() ? "" : ", ") + t;
            k.notes.push_back("stage " + names + " in " + st.memory +
                              (ctx.options.target == Target::Cpu ? ": no effect on the CPU target (caches do this)"
                                                                 : ": not implemented; reads go to global memory"));
        }
    }
    // Default plan: `parallel` output axes as grid workers (rest as loops), else the usual.
    MappingPlan fallback = defaultCpuMapping(*outShape, ctx.options.cpuThreads);
    if (!parallelAxes.empty() && !outShape->empty()) {
        std::vector<std::int64_t> sp(outShape->size(), 1), rp = *outShape;
        for (int a : parallelAxes) {
            sp[static_cast<std::size_t>(a)] = (*outShape)[static_cast<std::size_t>(a)];
            rp[static_cast<std::size_t>(a)] = 1;
        }
        auto spm = schedule::TaskMapping::spatial(sp);
        auto rpm = schedule::TaskMapping::repeat(rp);
        if (spm && rpm) {
            auto c = schedule::TaskMapping::compose(*spm, *rpm);
            if (c) fallback.grid = *c;
        }
    }
    auto plan = resolveMappings(ctx, *outShape, fallback);
    if (!plan) return plan.diagnostics();

    ComputeLowering cl(def, k, inBufs, ext, sched);
    std::vector<int> unapplied;
    k.body = emitMappedLoops(
        k, *plan, *outShape, [&](const std::vector<Expr>& idx) { return cl.outputStmt(out, outT, idx); }, overrides,
        &unapplied);
    for (int a : unapplied)
        k.notes.push_back("loop request on axis " + def.axes[static_cast<std::size_t>(a)].name +
                          " ignored: the mapping gives it no loop");
    return lk;
}

}  // namespace

void registerComputeTemplates(TemplateTable& table) { table[ir::kComputeOpType] = lowerCompute; }

}  // namespace tessera::lower::detail
