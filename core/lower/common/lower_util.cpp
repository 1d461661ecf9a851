#include "core/lower/detail/lower_util.h"

#include <algorithm>
#include <cctype>

#include "core/ir/op_registry.h"
#include "core/schedule/mapping_parser.h"

namespace tessera::lower::detail {

using schedule::Factor;
using schedule::LoopAttr;
using schedule::PrimitiveKind;
using schedule::TaskMapping;

support::DiagnosticList lowerError(const LowerContext& ctx, std::string message) {
    support::DiagnosticList list;
    support::Diagnostic d;
    d.severity = support::Severity::Error;
    d.where = ctx.where;
    d.message = std::move(message);
    list.add(std::move(d));
    return list;
}

support::DiagnosticList unsupportedForm(const LowerContext& ctx, std::string message) {
    support::DiagnosticList list = lowerError(ctx, std::move(message));
    list.items().back().notes.push_back(kUnsupportedFormNote);
    list.items().back().code = support::DiagnosticCode::NoCodeGenerator;
    return list;
}

std::optional<std::vector<std::int64_t>> concreteShape(const ir::Graph& g, ir::ValueId v) {
    if (v == ir::kNoValue || v < 0 || static_cast<std::size_t>(v) >= g.numValues()) return std::nullopt;
    const ir::Value& val = g.value(v);
    if (val.type.shape.rankKnown()) {
        if (auto dims = val.type.shape.knownDims()) return dims;
    }
    if (val.data) return val.data->dims;
    return std::nullopt;
}

namespace {

/// Where the unknown extents of `v` come from: the first node upstream whose inputs all have
/// known shapes but whose output does not (its output's extents depend on input values that are
/// not constants), or a graph input with symbolic dims. Empty when it cannot be told.
std::string unknownShapeOrigin(const ir::Graph& g, ir::ValueId v) {
    std::vector<bool> seen(g.numValues(), false);
    for (int depth = 0; depth < 100000 && v != ir::kNoValue && !seen[static_cast<std::size_t>(v)]; ++depth) {
        seen[static_cast<std::size_t>(v)] = true;
        const ir::NodeId p = g.producer(v);
        if (p == ir::kNoNode) {
            const ir::Value& in = g.value(v);
            if (!in.isGraphInput) return {};
            return "graph input '" + in.name + "' is " + in.type.str() +
                   ": feed it (--input " + in.name + "=FILE.npy) or declare its extents to bind them";
        }
        const ir::Node& n = g.node(p);
        ir::ValueId unknownIn = ir::kNoValue;
        std::string dataInputs;
        for (ir::ValueId x : n.inputs) {
            if (x == ir::kNoValue) continue;
            if (!concreteShape(g, x)) {
                unknownIn = x;
                break;
            }
            if (!g.value(x).data) dataInputs += (dataInputs.empty() ? "'" : ", '") + g.value(x).name + "'";
        }
        if (unknownIn != ir::kNoValue) {
            v = unknownIn;
            continue;
        }
        // An op Tessera has no shape rule for: its output extents are unknown for that reason
        // alone (they may well follow from its input shapes), not because of data.
        // Ops whose output extents follow from their input values (ONNX: NonZero's count ...).
        static const char* const kValueDependent[] = {"NonZero", "Unique", "Compress", "NonMaxSuppression",
                                                      "TopK", "Loop", "Scan", "If", "StringSplit"};
        const bool valueDependent =
            n.domain.empty() && std::find(std::begin(kValueDependent), std::end(kValueDependent), n.opType) !=
                                    std::end(kValueDependent);
        const ir::OpSchema* schema = ir::OpRegistry::instance().find(n.domain, n.opType);
        if (!valueDependent && (!schema || !schema->inferShapes))
            return "node '" + n.name + "' (" + n.opType + ") has no shape rule in Tessera" +
                   (schema ? std::string() : " (an op it does not know)") +
                   ", so its output's extents are unknown; declare them in the model (value_info) or "
                   "replace the op (e.g. onnx-simplifier, or an export without it)";
        return "the extents are decided at run time by node '" + n.name + "' (" + n.opType + ")" +
               (dataInputs.empty() ? std::string() : ", from the values of " + dataInputs);
    }
    return {};
}

}  // namespace

support::Expected<std::vector<std::int64_t>> shapeOf(const LowerContext& ctx, ir::ValueId v) {
    if (v == ir::kNoValue) return lowerError(ctx, "a required input is missing");
    auto s = concreteShape(ctx.g, v);
    if (!s) {
        const ir::Value& val = ctx.g.value(v);
        const std::string origin = unknownShapeOrigin(ctx.g, v);
        return lowerError(ctx, "value '" + val.name + "' has no concrete shape (" + val.type.shape.str() +
                                   "); lowering needs every extent known" + (origin.empty() ? "" : ": " + origin));
    }
    return *s;
}

DType dtypeOf(const ir::Graph& g, ir::ValueId v) {
    if (v == ir::kNoValue) return DType::Undefined;
    const ir::Value& val = g.value(v);
    if (val.type.dtype != DType::Undefined) return val.type.dtype;
    if (val.data) return val.data->dtype;
    return DType::Undefined;
}

namespace {

int addParam(const LowerContext& ctx, LoweredKernel& lk, ir::ValueId v, BufferRole role) {
    const ir::Value& val = ctx.g.value(v);
    BufferDecl b;
    b.name = val.name;
    b.dtype = dtypeOf(ctx.g, v);
    b.shape = concreteShape(ctx.g, v).value_or(std::vector<std::int64_t>{});
    b.scope = MemoryScope::Global;
    b.role = role;
    const int idx = lk.kernel.addBuffer(std::move(b));
    lk.kernel.params.push_back(idx);
    (role == BufferRole::Input ? lk.inputs : lk.outputs).push_back(v);
    return idx;
}

std::string sanitise(const std::string& s) {
    std::string r;
    for (unsigned char c : s) r += std::isalnum(c) ? static_cast<char>(c) : '_';
    if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "k_" + r;
    return r;
}

}  // namespace

int addInput(const LowerContext& ctx, LoweredKernel& lk, ir::ValueId v) {
    // A value read through several input slots (Mul(x, x)) is one parameter.
    for (std::size_t i = 0; i < lk.inputs.size(); ++i)
        if (lk.inputs[i] == v) return lk.kernel.params[i];
    return addParam(ctx, lk, v, BufferRole::Input);
}

int addOutput(const LowerContext& ctx, LoweredKernel& lk, ir::ValueId v) {
    return addParam(ctx, lk, v, BufferRole::Output);
}

bool hasUserMapping(const LowerContext& ctx) {
    const ir::KernelScheduleDecl* s = ctx.schedule;
    return s && (s->mapping("grid") || s->mapping("block") || s->mapping("warp") || s->mapping("thread"));
}

LoweredKernel beginKernel(const LowerContext& ctx) {
    LoweredKernel lk;
    lk.kernel.name = !ctx.options.kernelName.empty()
                         ? ctx.options.kernelName
                         : sanitise(ctx.node.name.empty() ? ctx.node.opType + "_" + std::to_string(ctx.id)
                                                          : ctx.node.name);
    lk.kernel.sourceOps = {ctx.node.name};
    lk.kernel.opType = ctx.node.opType;
    return lk;
}

// ---------------------------------------------------------------------------------------------
// Mappings

namespace {

std::string shapeText(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

}  // namespace

support::Expected<MappingPlan> resolveScheduled(const LowerContext& ctx, const std::vector<std::int64_t>& extents,
                                                const MappingPlan& fallback);

MappingPlan defaultGpuMapping(const std::vector<std::int64_t>& extentsIn, const MappingPlan& cpu) {
    const std::vector<std::int64_t> extents = extentsIn.empty() ? std::vector<std::int64_t>{1} : extentsIn;
    const std::size_t n = extents.size();
    std::vector<std::int64_t> tile(n, 1);
    if (cpu.tiled) {
        const TaskMapping& m = cpu.block ? *cpu.block : cpu.grid;
        const auto& fs = m.factors();
        if (!fs.empty() && fs.back().kind == PrimitiveKind::Repeat) {
            const auto ts = fs.back().taskShape();
            std::int64_t budget = kGpuMaxTileElements;
            for (std::size_t d = n; d-- > 0;) {
                const std::int64_t want = d < ts.size() ? ts[d] : 1;
                tile[d] = std::max<std::int64_t>(1, std::min({want, std::int64_t{4}, budget}));
                budget = std::max<std::int64_t>(1, budget / tile[d]);
            }
        }
    }
    // Small outputs (batch 1, 7x7 layers): shrink the tile until there are enough threads to
    // fill the device (kGpuMinThreads), halving the largest tile dim first.
    auto threadsFor = [&](const std::vector<std::int64_t>& t) {
        std::int64_t total = 1;
        for (std::size_t d = 0; d < n; ++d) total *= (std::max<std::int64_t>(1, extents[d]) + t[d] - 1) / t[d];
        return total;
    };
    while (threadsFor(tile) < kGpuMinThreads) {
        std::size_t big = n;
        for (std::size_t d = 0; d < n; ++d)
            if (tile[d] > 1 && (big == n || tile[d] > tile[big])) big = d;
        if (big == n) break;
        tile[big] = (tile[big] + 1) / 2;
    }
    std::vector<std::int64_t> counts(n), b(n, 1), g(n, 1);
    std::int64_t budget = kGpuDefaultBlockThreads;
    for (std::size_t d = n; d-- > 0;) {
        counts[d] = (std::max<std::int64_t>(1, extents[d]) + tile[d] - 1) / tile[d];
        b[d] = std::max<std::int64_t>(1, std::min(counts[d], budget));
        budget = std::max<std::int64_t>(1, budget / b[d]);
        g[d] = (counts[d] + b[d] - 1) / b[d];
    }
    MappingPlan plan;
    plan.target = Target::Cuda;
    plan.tiled = cpu.tiled;
    plan.grid = std::move(*TaskMapping::spatial(g));
    TaskMapping block = std::move(*TaskMapping::spatial(b));
    if (std::any_of(tile.begin(), tile.end(), [](std::int64_t t) { return t > 1; })) {
        auto rep = TaskMapping::repeat(tile);
        auto c = TaskMapping::compose(block, *rep);
        block = std::move(*c);
    }
    plan.block = std::move(block);
    return plan;
}

support::Expected<MappingPlan> resolveMappings(const LowerContext& ctx, const std::vector<std::int64_t>& extentsIn,
                                               const MappingPlan& fallbackIn) {
    const std::vector<std::int64_t> extents = extentsIn.empty() ? std::vector<std::int64_t>{1} : extentsIn;
    MappingPlan fallback = ctx.options.target == Target::Cuda ? defaultGpuMapping(extents, fallbackIn) : fallbackIn;
    fallback.target = ctx.options.target;
    auto withTarget = [&](support::Expected<MappingPlan> r) {
        if (r) r->target = ctx.options.target;
        return r;
    };
    if (!ctx.schedule) return fallback;
    return withTarget(resolveScheduled(ctx, extents, fallback));
}

support::Expected<MappingPlan> resolveScheduled(const LowerContext& ctx, const std::vector<std::int64_t>& extentsIn,
                                                const MappingPlan& fallback) {
    const std::vector<std::int64_t>& extents = extentsIn;
    const ir::KernelScheduleDecl& s = *ctx.schedule;
    const std::string kernelName = "'" + s.subject + "'";
    auto parseLevel = [&](const char* level, std::optional<TaskMapping>& out) -> support::DiagnosticList {
        const ir::ScheduleMappingDecl* d = s.mapping(level);
        if (!d) return {};
        auto m = schedule::parseMapping(d->text);
        if (!m) {
            const auto* e = m.diagnostics().firstError();
            return lowerError(ctx, std::string(level) + " mapping \"" + d->text + "\" of kernel " + kernelName +
                                       " does not parse: " + (e ? e->message : "syntax error"));
        }
        out = std::move(*m);
        return {};
    };
    std::optional<TaskMapping> grid, block, warp, thread;
    for (auto [name, slot] : {std::pair<const char*, std::optional<TaskMapping>*>{"grid", &grid},
                              {"block", &block}, {"warp", &warp}, {"thread", &thread}}) {
        auto errs = parseLevel(name, *slot);
        if (errs.hasErrors()) return errs;
    }
    if (!grid && !block && !warp && !thread) return fallback;

    // Inner levels compose into the block: block * warp * thread.
    std::optional<TaskMapping> inner;
    std::string innerText;
    for (auto [name, m] : {std::pair<const char*, std::optional<TaskMapping>*>{"block", &block},
                           {"warp", &warp}, {"thread", &thread}}) {
        if (!*m) continue;
        innerText += std::string(innerText.empty() ? "" : " * ") + name;
        if (!inner) {
            inner = **m;
            continue;
        }
        auto c = TaskMapping::compose(*inner, **m);
        if (!c) {
            const auto* e = c.diagnostics().firstError();
            return lowerError(ctx, "cannot compose the " + innerText + " mappings of kernel " + kernelName + ": " +
                                       (e ? e->message : "rank mismatch"));
        }
        inner = std::move(*c);
    }
    MappingPlan plan;
    if (grid) {
        plan.grid = *grid;
    } else {
        // Only inner levels: one grid worker runs the whole block.
        auto one = TaskMapping::spatial(std::vector<std::int64_t>(static_cast<std::size_t>(inner->rank()), 1));
        plan.grid = std::move(*one);
    }
    plan.block = inner;
    TaskMapping composed = plan.grid;
    std::string what = grid ? "grid" : innerText;
    if (grid && inner) {
        what = "grid * " + innerText;
        auto c = TaskMapping::compose(plan.grid, *inner);
        if (!c) {
            const auto* e = c.diagnostics().firstError();
            return lowerError(ctx, "the " + what + " mappings of kernel " + kernelName + " do not compose: " +
                                       (e ? e->message : "rank mismatch"));
        }
        composed = std::move(*c);
    }
    schedule::ValidationOptions vo;
    vo.tensorShape = extents;
    vo.maxWorkers = 0;  // the block's thread limit is checked on the block alone (CUDA only)
    const auto problems = schedule::validateMapping(composed, vo);
    if (problems.hasErrors()) {
        const auto* e = problems.firstError();
        auto list = lowerError(ctx, what + " mapping " + composed.str() + " of kernel " + kernelName +
                                        " does not fit the output " + shapeText(extentsIn) + ": " + e->message);
        list.items()[0].notes = e->notes;
        return list;
    }
    if (ctx.options.target == Target::Cuda && inner && inner->numWorkers() > 1024)
        return lowerError(ctx, "block mapping " + inner->str() + " of kernel " + kernelName + " has " +
                                   std::to_string(inner->numWorkers()) + " workers; a CUDA block holds at most 1024");
    return plan;
}

MappingPlan defaultCpuMapping(const std::vector<std::int64_t>& extentsIn, int workers) {
    const std::vector<std::int64_t> extents = extentsIn.empty() ? std::vector<std::int64_t>{1} : extentsIn;
    std::int64_t remaining = std::max<std::int64_t>(1, static_cast<std::int64_t>(workers)) * 4;
    std::vector<std::int64_t> sp(extents.size(), 1), rp(extents.size(), 1);
    for (std::size_t d = 0; d < extents.size(); ++d) {
        const std::int64_t e = std::max<std::int64_t>(1, extents[d]);
        std::int64_t s = 1;
        if (remaining > 1) {
            // Largest divisor of e that is <= remaining, so the mapping covers e exactly.
            for (std::int64_t c = std::min(e, remaining); c >= 1; --c)
                if (e % c == 0) {
                    s = c;
                    break;
                }
        }
        sp[d] = s;
        rp[d] = e / s;
        remaining = std::max<std::int64_t>(1, remaining / s);
    }
    MappingPlan plan;
    auto spatial = TaskMapping::spatial(sp);
    const bool anyRepeat = std::any_of(rp.begin(), rp.end(), [](std::int64_t v) { return v > 1; });
    if (!anyRepeat) {
        plan.grid = std::move(*spatial);
        return plan;
    }
    auto rep = TaskMapping::repeat(rp);
    auto composed = TaskMapping::compose(*spatial, *rep);
    plan.grid = std::move(*composed);
    return plan;
}

namespace {

struct LoopFrame {
    int dim = -1;  ///< dimension of a repeat loop; -1 for worker loops
    Var var;
    std::int64_t extent = 1;
    ForKind kind = ForKind::Serial;
    std::int64_t factor = 0;
    std::string annotation;
};

/// Appends the coordinate expressions (one per dim, per factor) of mapping m whose worker index
/// is `w` (null when the mapping has one worker) and the loops of its repeat factors.
void expandMapping(Kernel& k, const TaskMapping& m, const Expr& w, const std::string& levelName,
                   std::vector<std::vector<Expr>>& coords, std::vector<std::vector<std::int64_t>>& exts,
                   std::vector<LoopFrame>& loops) {
    const auto& factors = m.factors();
    const std::size_t n = static_cast<std::size_t>(m.rank());
    std::vector<std::int64_t> innerWorkers(factors.size(), 1);
    for (std::size_t f = factors.size(); f-- > 1;) innerWorkers[f - 1] = innerWorkers[f] * factors[f].numWorkers();
    bool outermost = true;
    for (std::size_t f = 0; f < factors.size(); ++f) {
        const Factor& fac = factors[f];
        std::vector<Expr> c(n, intImm(0));
        const auto ts = fac.taskShape();
        const auto strides = fac.strides();
        if (fac.kind == PrimitiveKind::Spatial) {
            const std::int64_t nw = fac.numWorkers();
            if (nw > 1 && w) {
                Expr lw = w;
                if (innerWorkers[f] != 1) lw = lw / intImm(innerWorkers[f]);
                if (!outermost) lw = lw % intImm(nw);
                outermost = false;
                for (std::size_t d = 0; d < n; ++d) {
                    if (fac.projected[d] || fac.shape[d] == 1) continue;
                    Expr e = lw;
                    if (strides[d] != 1) e = e / intImm(strides[d]);
                    // No mod on the dim with the largest stride among non-unit dims (lw < nw).
                    if (strides[d] * fac.shape[d] < nw) e = e % intImm(fac.shape[d]);
                    c[d] = e;
                }
            }
        } else {
            std::vector<std::size_t> dimOfRank(n, 0);
            for (std::size_t d = 0; d < n; ++d) dimOfRank[static_cast<std::size_t>(fac.ranks[d])] = d;
            bool first = true;
            for (std::size_t r = 0; r < n; ++r) {
                const std::size_t d = dimOfRank[r];
                if (fac.shape[d] == 1) continue;
                LoopFrame lf;
                lf.dim = static_cast<int>(d);
                lf.var = k.newVar(levelName.substr(0, 1) + "r" + std::to_string(f) + "_" + std::to_string(d));
                lf.extent = fac.shape[d];
                const LoopAttr& a = fac.attrs[d];
                switch (a.kind) {
                case LoopAttr::Kind::Default: lf.kind = ForKind::Serial; break;
                case LoopAttr::Kind::Unroll: lf.kind = ForKind::Unroll; lf.factor = a.factor; break;
                case LoopAttr::Kind::UnrollExplicit: lf.kind = ForKind::Unroll; lf.factor = 0; break;
                case LoopAttr::Kind::Parallel: lf.kind = ForKind::Parallel; lf.factor = a.factor; break;
                }
                if (first) lf.annotation = levelName + " " + fac.str();
                first = false;
                if (!fac.projected[d]) c[d] = varRef(lf.var);
                loops.push_back(std::move(lf));
            }
        }
        coords.push_back(std::move(c));
        exts.push_back(ts);
    }
}

}  // namespace

Stmt emitMappedLoops(Kernel& k, const MappingPlan& plan, const std::vector<std::int64_t>& extentsIn,
                     const std::function<Stmt(const std::vector<Expr>&)>& body) {
    return emitMappedLoops(k, plan, extentsIn, body, {}, nullptr);
}

Stmt emitMappedLoops(Kernel& k, const MappingPlan& plan, const std::vector<std::int64_t>& extentsIn,
                     const std::function<Stmt(const std::vector<Expr>&)>& body,
                     const std::vector<LoopOverride>& overrides, std::vector<int>* unapplied) {
    const bool scalar = extentsIn.empty();
    const std::vector<std::int64_t> extents = scalar ? std::vector<std::int64_t>{1} : extentsIn;
    const std::size_t n = extents.size();
    k.mappings.push_back("grid = " + plan.grid.str());
    if (plan.block) k.mappings.push_back("block = " + plan.block->str());

    std::vector<LoopFrame> loops;
    std::vector<std::vector<Expr>> coords;
    std::vector<std::vector<std::int64_t>> exts;
    Expr gw, bw;
    if (plan.grid.numWorkers() > 1) {
        LoopFrame lf;
        lf.var = k.newVar("w");
        lf.extent = plan.grid.numWorkers();
        lf.kind = plan.target == Target::Cuda ? ForKind::Blocks : ForKind::Parallel;
        lf.annotation = "grid = " + plan.grid.str();
        gw = varRef(lf.var);
        loops.push_back(std::move(lf));
    }
    if (plan.block && plan.block->numWorkers() > 1) {
        LoopFrame lf;
        lf.var = k.newVar("t");
        lf.extent = plan.block->numWorkers();
        lf.kind = plan.target == Target::Cuda ? ForKind::Threads : ForKind::Serial;
        lf.annotation = "block = " + plan.block->str();
        bw = varRef(lf.var);
        loops.push_back(std::move(lf));
    }
    expandMapping(k, plan.grid, gw, "grid", coords, exts, loops);
    if (plan.block) expandMapping(k, *plan.block, bw, "block", coords, exts, loops);

    for (const LoopOverride& o : overrides) {
        bool applied = false;
        for (std::size_t i = loops.size(); i-- > 0 && !applied;)
            if (loops[i].dim == o.dim) {
                loops[i].kind = o.kind;
                loops[i].factor = o.factor;
                applied = true;
            }
        if (!applied && unapplied) unapplied->push_back(o.dim);
    }

    // Task coordinate per dim: fold over levels, outer * inner extent + inner.
    std::vector<Expr> task(n);
    std::vector<std::int64_t> total(n, 1);
    for (std::size_t d = 0; d < n; ++d) {
        Expr t = intImm(0);
        for (std::size_t f = 0; f < coords.size(); ++f) {
            t = t * intImm(exts[f][d]) + coords[f][d];
            total[d] *= exts[f][d];
        }
        task[d] = t;
    }
    // Bind non-trivial coordinates to named variables (readable code, computed once).
    std::vector<std::pair<Var, Expr>> lets;
    for (std::size_t d = 0; d < n; ++d) {
        if (task[d]->kind == ExprKind::VarRef || task[d]->kind == ExprKind::IntImm) continue;
        Var v = k.newVar("i" + std::to_string(d));
        lets.emplace_back(v, task[d]);
        task[d] = varRef(v);
    }
    Expr pred;
    for (std::size_t d = 0; d < n; ++d) {
        if (total[d] <= extents[d]) continue;
        Expr c = task[d] < intImm(extents[d]);
        pred = pred ? (pred && c) : c;
    }
    Stmt inner = body(scalar ? std::vector<Expr>{} : task);
    if (pred) inner = ifThen(pred, inner);
    for (std::size_t i = lets.size(); i-- > 0;) inner = let(lets[i].first, lets[i].second, inner);
    for (std::size_t i = loops.size(); i-- > 0;) {
        const LoopFrame& lf = loops[i];
        inner = forLoop(lf.var, intImm(lf.extent), inner, lf.kind, lf.factor, lf.annotation);
    }
    return inner;
}

Stmt emitSerialLoops(Kernel& k, const std::vector<std::int64_t>& extents, const std::string& hint,
                     const std::function<Stmt(const std::vector<Expr>&)>& body) {
    std::vector<Expr> idx(extents.size());
    std::vector<Var> vars(extents.size());
    for (std::size_t d = 0; d < extents.size(); ++d) {
        if (extents[d] == 1) {
            idx[d] = intImm(0);
            continue;
        }
        vars[d] = k.newVar(hint + std::to_string(d));
        idx[d] = varRef(vars[d]);
    }
    Stmt s = body(idx);
    for (std::size_t d = extents.size(); d-- > 0;)
        if (extents[d] != 1) s = forLoop(vars[d], intImm(extents[d]), s);
    return s;
}

std::vector<Expr> broadcastIndex(const std::vector<Expr>& outIdx, const std::vector<std::int64_t>& inShape) {
    std::vector<Expr> r;
    const std::size_t off = outIdx.size() >= inShape.size() ? outIdx.size() - inShape.size() : 0;
    for (std::size_t d = 0; d < inShape.size(); ++d)
        r.push_back(inShape[d] == 1 || d + off >= outIdx.size() ? intImm(0) : outIdx[d + off]);
    return r;
}

std::optional<std::vector<std::int64_t>> constInts(const ir::Graph& g, ir::ValueId v) {
    if (v == ir::kNoValue) return std::nullopt;
    const ir::Value& val = g.value(v);
    if (!val.data || !val.data->sizeConsistent()) return std::nullopt;
    return val.data->toInts();
}

std::optional<std::vector<double>> constDoubles(const ir::Graph& g, ir::ValueId v) {
    if (v == ir::kNoValue) return std::nullopt;
    const ir::Value& val = g.value(v);
    if (!val.data || !val.data->sizeConsistent()) return std::nullopt;
    return val.data->toDoubles();
}

}  // namespace tessera::lower::detail
