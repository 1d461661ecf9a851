// Reductions and normalisations: ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp,
// GlobalAveragePool/GlobalMaxPool, ArgMax/ArgMin, Softmax/LogSoftmax, LayerNormalization,
// BatchNormalization (inference).
//
// Loop structure:
// - Reduce*: mapped over the output shape. When the innermost input dim is reduced, each output
//   element loops over its reduced elements; a contiguous innermost run of >= 32 elements is
//   split into 16 partial accumulators (vectorised), folded at the end. When the innermost dim is
//   kept, a tile of up to 256 outputs along it is reduced at once: the reduced dims are outer
//   loops, the kept innermost dim a vectorised loop over a Local accumulator row.
// - Softmax/LogSoftmax, ArgMax/ArgMin: the input is viewed as [outer, len, inner] (len = the
//   axis; opset < 13 Softmax: len = product of the dims from axis on) and mapped over
//   [outer, inner]. Softmax over a contiguous axis (inner = 1): max and sum in 16 partial lanes,
//   then a vectorised write loop; otherwise tiles of inner are processed with Local rows.
// - LayerNormalization: [outer, len] view, mapped over [outer]; mean and variance (two passes)
//   in 16 lanes, then a vectorised normalise loop. BatchNormalization: [N, C, spatial] view,
//   mapped over it with tiles of the spatial dim; per tile a = scale / sqrt(var + eps) and
//   b = bias - mean * a are computed once, then y = x * a + b vectorised.

#include <algorithm>
#include <limits>
#include <string>

#include "core/lower/detail/lower_heavy.h"

namespace tessera::lower::detail {

namespace {

constexpr std::int64_t kLanes = 16;

std::string dimsText(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

std::int64_t prod(const std::vector<std::int64_t>& d, std::size_t from, std::size_t to) {
    std::int64_t p = 1;
    for (std::size_t i = from; i < to; ++i) p *= d[i];
    return p;
}

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

double initOf(Red k) {
    switch (k) {
    case Red::Max:
    case Red::LogSumExp: return -std::numeric_limits<double>::infinity();
    case Red::Min: return std::numeric_limits<double>::infinity();
    case Red::Prod: return 1.0;
    default: return 0.0;
    }
}
/// Element transform before combining.
Expr mapOf(Red k, const Expr& x) {
    switch (k) {
    case Red::L1: return call(Intrinsic::Abs, {x});
    case Red::L2:
    case Red::SumSquare: return x * x;
    default: return x;
    }
}
Expr combine(Red k, const Expr& a, const Expr& b) {
    switch (k) {
    case Red::LogSumExp: {
        // The accumulator is itself a log-sum-exp: log(e^a + e^b) = m + log(1 + e^(n - m)) with
        // m = max, n = min, so no exp overflows (log(sum(exp(x))) gave inf for any x > 88.7 in
        // f32). Associative, so lanes and block trees combine in any order. n = -inf (the
        // initial value, or -inf elements): m. m = n (both +inf too): m + log 2.
        const DType d = a.dtype();
        const Expr m = maxOf(a, b), n = minOf(a, b);
        return select(binary(BinaryOp::Eq, n, constant(-std::numeric_limits<double>::infinity(), d)), m,
                      select(binary(BinaryOp::Eq, m, n), m + constant(0.69314718055994530942, d),
                             m + call(Intrinsic::Log, {constant(1.0, d) + call(Intrinsic::Exp, {n - m})})));
    }
    case Red::Max: return maxOf(a, b);
    case Red::Min: return minOf(a, b);
    case Red::Prod: return a * b;
    default: return a + b;
    }
}
Expr finish(Red k, const Expr& a, std::int64_t count) {
    switch (k) {
    case Red::Mean: return a / constant(static_cast<double>(count), a.dtype());
    case Red::L2: return call(Intrinsic::Sqrt, {a});
    case Red::LogSum: return call(Intrinsic::Log, {a});
    default: return a;
    }
}

int localBuffer(Kernel& k, const std::string& name, DType t, std::vector<std::int64_t> shape) {
    BufferDecl b;
    b.name = name;
    b.dtype = t;
    b.shape = std::move(shape);
    b.scope = MemoryScope::Local;
    return k.addBuffer(b);
}

/// Reduces a contiguous run of `len` elements given by elem(j) into the scalar Local `dst[0]`
/// (which holds the value to combine with: the initial value, or the running result of earlier
/// rows): 16 vectorised partial accumulators when len >= 32. Each lane starts from its own first
/// element, not from dst, so that dst is combined exactly once whatever the combine is (seeding
/// every lane with a running sum would add it 16 times).
Stmt laneReduce(Kernel& k, std::int64_t len, DType t, const std::function<Expr(const Expr&)>& elem,
                const std::function<Expr(const Expr&, const Expr&)>& comb, int dst) {
    const Expr d0 = load(dst, t, {intImm(0)});
    if (len < 2 * kLanes) {
        const Var j = k.newVar("j");
        return forLoop(j, intImm(len), store(dst, {intImm(0)}, comb(load(dst, t, {intImm(0)}), elem(varRef(j)))));
    }
    const int lanes = localBuffer(k, "lanes", t, {kLanes});
    const std::int64_t nb = len / kLanes, tail = len % kLanes;
    const Var v0 = k.newVar("v"), b = k.newVar("b"), v1 = k.newVar("v"), v2 = k.newVar("v");
    std::vector<Stmt> body;
    body.push_back(forLoop(v0, intImm(kLanes), store(lanes, {varRef(v0)}, elem(varRef(v0))), ForKind::Vectorize, kLanes));
    body.push_back(forLoop(b, intImm(nb - 1),
                           forLoop(v1, intImm(kLanes),
                                   store(lanes, {varRef(v1)},
                                         comb(load(lanes, t, {varRef(v1)}),
                                              elem((varRef(b) + intImm(1)) * intImm(kLanes) + varRef(v1)))),
                                   ForKind::Vectorize, kLanes)));
    if (tail > 0) {
        const Var j = k.newVar("j");
        body.push_back(forLoop(j, intImm(tail),
                               store(lanes, {varRef(j)},
                                     comb(load(lanes, t, {varRef(j)}), elem(intImm(nb * kLanes) + varRef(j))))));
    }
    body.push_back(forLoop(v2, intImm(kLanes), store(dst, {intImm(0)}, comb(d0, load(lanes, t, {varRef(v2)})))));
    return allocate(lanes, seq(std::move(body)));
}

std::vector<std::int64_t> nonEmpty(std::vector<std::int64_t> v) { return v.empty() ? std::vector<std::int64_t>{1} : v; }

/// A Threads loop of T threads (one phase of a block) running body(t).
Stmt blockPhase(Kernel& k, std::int64_t T, const std::function<Stmt(const Expr&)>& body) {
    const Var t = k.newVar("t");
    return forLoop(t, intImm(T), body(varRef(t)), ForKind::Threads, 0, "block = spatial(" + std::to_string(T) + ")");
}

/// Phase: thread t combines elem(j) for j = t, t + T, ... < len (from init) and stores it to part[t].
Stmt blockGather(Kernel& k, std::int64_t T, std::int64_t len, DType accT, const Expr& init,
                 const std::function<Expr(const Expr& j)>& elem, const std::function<Expr(const Expr&, const Expr&)>& comb,
                 int part) {
    return blockPhase(k, T, [&](const Expr& t) {
        const Var i = k.newVar("i");
        const int acc = localBuffer(k, "acc", accT, {1});
        const Expr j = t + varRef(i) * intImm(T);
        Stmt step = store(acc, {intImm(0)}, comb(load(acc, accT, {intImm(0)}), elem(j)));
        if (len % T != 0) step = ifThen(j < intImm(len), step);
        return allocate(acc, seq({store(acc, {intImm(0)}, init), forLoop(i, intImm((len + T - 1) / T), step),
                                  store(part, {t}, load(acc, accT, {intImm(0)}))}));
    });
}

/// The halving tree over part[0..T) (T a power of two), each step followed by a barrier: part[0]
/// then holds the combination of all T values.
std::vector<Stmt> blockTree(Kernel& k, std::int64_t T, DType accT, const std::function<Expr(const Expr&, const Expr&)>& comb,
                            int part) {
    std::vector<Stmt> st;
    for (std::int64_t h = T / 2; h >= 1; h /= 2) {
        st.push_back(blockPhase(k, T, [&](const Expr& u) {
            return ifThen(u < intImm(h), store(part, {u}, comb(load(part, accT, {u}), load(part, accT, {u + intImm(h)}))));
        }));
        st.push_back(barrier());
    }
    return st;
}

int sharedBuffer(Kernel& k, const std::string& name, DType t, std::int64_t n) {
    BufferDecl b;
    b.name = name;
    b.dtype = t;
    b.scope = MemoryScope::Shared;
    b.shape = {n};
    return k.addBuffer(b);
}

MappingPlan rowGrid(std::int64_t rows) {
    MappingPlan plan;
    plan.target = Target::Cuda;
    plan.grid = std::move(*schedule::TaskMapping::spatial({rows}));
    return plan;
}

/// Threads per row of the GPU LayerNorm: a warp for rows up to 256 values, else 128 or 256.
std::int64_t gpuLayerNormThreads(std::int64_t len) { return len <= 256 ? 32 : len <= 2048 ? 128 : 256; }

}  // namespace

Stmt emitGpuBlockRowReduce(Kernel& k, std::int64_t rows, std::int64_t len, DType accT, const Expr& init,
                           const std::function<Expr(const Expr& row, const Expr& j)>& elem,
                           const std::function<Expr(const Expr&, const Expr&)>& comb,
                           const std::function<Stmt(const Expr& row, const Expr& total)>& finish) {
    constexpr std::int64_t T = kGpuBlockReduceThreads;
    return emitMappedLoops(k, rowGrid(rows), {rows}, [&](const std::vector<Expr>& o) {
        const Expr row = o[0];
        const int part = sharedBuffer(k, "part", accT, T);
        std::vector<Stmt> body{blockGather(k, T, len, accT, init, [&](const Expr& j) { return elem(row, j); }, comb, part),
                               barrier()};
        for (auto& st : blockTree(k, T, accT, comb, part)) body.push_back(std::move(st));
        body.push_back(blockPhase(k, T, [&](const Expr& t) { return ifThen(t < intImm(1), finish(row, load(part, accT, {intImm(0)}))); }));
        return allocate(part, seq(std::move(body)));
    });
}

namespace {

/// Core of every Reduce* and the global pools. `red[d]`: input dim d is reduced.
support::Expected<LoweredKernel> reduceCore(const LowerContext& ctx, Red kind, const std::vector<bool>& red, bool keep) {
    const ir::Node& node = ctx.node;
    auto xs = shapeOf(ctx, node.inputs[0]);
    if (!xs) return xs.diagnostics();
    auto ys = shapeOf(ctx, node.outputs[0]);
    if (!ys) return ys.diagnostics();
    const std::size_t R = xs->size();
    std::vector<std::int64_t> expect;
    std::vector<int> outPos(R, -1);
    std::int64_t count = 1;
    for (std::size_t d = 0; d < R; ++d) {
        if (red[d]) count *= (*xs)[d];
        if (!red[d] || keep) {
            if (!red[d]) outPos[d] = static_cast<int>(expect.size());
            expect.push_back(red[d] ? 1 : (*xs)[d]);
        }
    }
    if (*ys != expect) return lowerError(ctx, "output shape " + dimsText(*ys) + " differs from " + dimsText(expect));
    const DType outT = dtypeOf(ctx.g, node.outputs[0]);
    const DType accT = accumulatorType(outT);
    LoweredKernel lk = beginKernel(ctx);
    const int X = addInput(ctx, lk, node.inputs[0]);
    for (std::size_t i = 1; i < node.inputs.size(); ++i)
        if (node.inputs[i] != ir::kNoValue && !ctx.g.value(node.inputs[i]).data) addInput(ctx, lk, node.inputs[i]);
    const int Y = addOutput(ctx, lk, node.outputs[0]);
    Kernel& k = lk.kernel;
    const DType xT = k.buffers[static_cast<std::size_t>(X)].dtype;
    const std::vector<std::int64_t> outExt = nonEmpty(*ys);
    const bool scalarOut = ys->empty();
    auto yIndex = [&](const std::vector<Expr>& o) { return scalarOut ? std::vector<Expr>{} : o; };
    std::vector<std::size_t> redDims;
    for (std::size_t d = 0; d < R; ++d)
        if (red[d]) redDims.push_back(d);
    auto xload = [&](const std::vector<Expr>& o, const std::vector<Expr>& rIdx) {
        std::vector<Expr> idx(R);
        std::size_t ri = 0;
        for (std::size_t d = 0; d < R; ++d) idx[d] = red[d] ? rIdx[ri++] : o[static_cast<std::size_t>(outPos[d])];
        return mapOf(kind, cast(load(X, xT, idx), accT));
    };
    auto comb = [&](const Expr& a, const Expr& b) { return combine(kind, a, b); };
    const Expr init = constant(initOf(kind), accT);

    // CUDA, few long rows (a global pool of a large feature map, a mean over a long axis): one block
    // per output element instead of one thread, so that 256 threads share each row.
    bool trailing = !redDims.empty();
    for (std::size_t i = 0; i < redDims.size(); ++i) trailing = trailing && redDims[i] == R - redDims.size() + i;
    std::int64_t outputs = 1;
    for (auto e : outExt) outputs *= e;
    const bool userMapping = hasUserMapping(ctx);
    if (ctx.options.target == Target::Cuda && !userMapping && trailing && count >= kGpuBlockReduceMinLength &&
        outputs <= kGpuBlockReduceMaxOutputs) {
        k.buffers[static_cast<std::size_t>(X)].shape = {outputs, count};
        k.buffers[static_cast<std::size_t>(Y)].shape = {outputs};
        k.body = emitGpuBlockRowReduce(k, outputs, count, accT, init,
                                       [&](const Expr& row, const Expr& j) { return mapOf(kind, cast(load(X, xT, {row, j}), accT)); },
                                       comb, [&](const Expr& row, const Expr& total) {
                                           return store(Y, {row}, cast(finish(kind, total, count), outT));
                                       });
        k.notes.push_back("GPU block reduction: one block of " + std::to_string(kGpuBlockReduceThreads) +
                          " threads per output, each thread combining every " + std::to_string(kGpuBlockReduceThreads) +
                          "th element of the row, then a tree in shared memory; X and Y declared [" +
                          std::to_string(outputs) + ", " + std::to_string(count) + "] and [" + std::to_string(outputs) + "]");
        return lk;
    }

    if (R == 0 || red[R - 1]) {
        // Innermost dim reduced: one output element per task.
        auto plan = resolveMappings(ctx, outExt, defaultCpuMapping(outExt, ctx.options.cpuThreads));
        if (!plan) return plan.diagnostics();
        const std::int64_t inner = R == 0 ? 1 : (*xs)[R - 1];
        k.body = emitMappedLoops(k, *plan, outExt, [&](const std::vector<Expr>& o) {
            const int acc = localBuffer(k, "acc", accT, {1});
            std::vector<std::int64_t> outerRed;
            for (std::size_t i = 0; i + 1 < redDims.size(); ++i) outerRed.push_back((*xs)[redDims[i]]);
            Stmt loop = emitSerialLoops(k, outerRed, "r", [&](const std::vector<Expr>& ro) {
                return laneReduce(k, inner, accT, [&](const Expr& j) {
                    std::vector<Expr> ri = ro;
                    ri.push_back(j);
                    return xload(o, ri);
                }, comb, acc);
            });
            if (R == 0) loop = store(acc, {intImm(0)}, comb(load(acc, accT, {intImm(0)}), xload(o, {})));
            return allocate(acc, seq({store(acc, {intImm(0)}, init), loop,
                                      store(Y, yIndex(o), cast(finish(kind, load(acc, accT, {intImm(0)}), count), outT))}));
        });
        k.notes.push_back("reduction over a contiguous innermost run (16 partial lanes when long)");
        return lk;
    }

    // Innermost dim kept: tiles along it, reduced dims as outer loops.
    std::vector<std::int64_t> tile(outExt.size(), 1), maxTile(outExt.size(), 1);
    tile.back() = std::min<std::int64_t>(outExt.back(), 256);
    maxTile.back() = 1024;
    auto plan = resolveMappings(ctx, outExt, tiledMapping(outExt, tile));
    if (!plan) return plan.diagnostics();
    k.body = emitTiledLoops(k, *plan, outExt, maxTile, [&](const TileView& tv) {
        const std::int64_t tw = tv.size.back();
        const int acc = localBuffer(k, "acc", accT, {tw});
        auto row = [&](const std::function<Stmt(const Expr&)>& f) {
            const Var j = k.newVar("j");
            return forLoop(j, tv.extent.back(), f(varRef(j)), ForKind::Vectorize);
        };
        // Outer tile dims other than the last: serial loops (tile 1 by default).
        std::vector<Expr> lead(tv.origin.begin(), tv.origin.end() - 1);
        std::vector<Stmt> body;
        std::vector<Var> leadVars;
        std::vector<Expr> o;
        std::vector<std::size_t> leadDims;
        for (std::size_t d = 0; d + 1 < tv.origin.size(); ++d) {
            std::int64_t e = 0;
            if (tv.extent[d].isIntImm(&e) && e == 1) {
                o.push_back(tv.origin[d]);
                continue;
            }
            leadVars.push_back(k.newVar("t" + std::to_string(d)));
            leadDims.push_back(d);
            o.push_back(tv.origin[d] + varRef(leadVars.back()));
        }
        body.push_back(row([&](const Expr& j) { return store(acc, {j}, init); }));
        std::vector<std::int64_t> redExt;
        for (auto d : redDims) redExt.push_back((*xs)[d]);
        body.push_back(emitSerialLoops(k, redExt, "r", [&](const std::vector<Expr>& ri) {
            return row([&](const Expr& j) {
                std::vector<Expr> oo = o;
                oo.push_back(tv.origin.back() + j);
                return store(acc, {j}, comb(load(acc, accT, {j}), xload(oo, ri)));
            });
        }));
        body.push_back(row([&](const Expr& j) {
            std::vector<Expr> oo = o;
            oo.push_back(tv.origin.back() + j);
            return store(Y, yIndex(oo), cast(finish(kind, load(acc, accT, {j}), count), outT));
        }));
        Stmt s = allocate(acc, seq(std::move(body)));
        for (std::size_t d = leadVars.size(); d-- > 0;) s = forLoop(leadVars[d], tv.extent[leadDims[d]], s);
        return s;
    });
    k.notes.push_back("reduction with the innermost dim kept: reduced dims outer, kept dim vectorised");
    return lk;
}

std::int64_t normAxis(std::int64_t a, std::size_t rank) { return a < 0 ? a + static_cast<std::int64_t>(rank) : a; }

}  // namespace

support::Expected<LoweredKernel> lowerReduce(const LowerContext& ctx) {
    const ir::Node& node = ctx.node;
    const std::string& op = node.opType;
    Red kind;
    if (op == "ReduceSum") kind = Red::Sum;
    else if (op == "ReduceMean") kind = Red::Mean;
    else if (op == "ReduceMax") kind = Red::Max;
    else if (op == "ReduceMin") kind = Red::Min;
    else if (op == "ReduceProd") kind = Red::Prod;
    else if (op == "ReduceL1") kind = Red::L1;
    else if (op == "ReduceL2") kind = Red::L2;
    else if (op == "ReduceSumSquare") kind = Red::SumSquare;
    else if (op == "ReduceLogSum") kind = Red::LogSum;
    else if (op == "ReduceLogSumExp") kind = Red::LogSumExp;
    else return lowerError(ctx, "not a reduction: " + op);
    if (node.inputs.empty() || node.outputs.empty() || node.outputs[0] == ir::kNoValue)
        return lowerError(ctx, op + " needs an input and an output");
    auto xs = shapeOf(ctx, node.inputs[0]);
    if (!xs) return xs.diagnostics();
    std::vector<std::int64_t> axes;
    if (node.inputs.size() > 1 && node.inputs[1] != ir::kNoValue) {
        auto c = constInts(ctx.g, node.inputs[1]);
        if (!c) return lowerError(ctx, "axes must be a constant input");
        axes = *c;
    } else {
        axes = node.attrInts("axes");
    }
    const bool keep = node.attrInt("keepdims", 1) != 0;
    const std::size_t R = xs->size();
    std::vector<bool> red(R, false);
    if (axes.empty()) {
        if (node.attrInt("noop_with_empty_axes", 0) != 0) {
            // Identity: copy (the reduction of single elements, with the element transform).
            auto ys = shapeOf(ctx, node.outputs[0]);
            if (!ys) return ys.diagnostics();
            if (*ys != *xs) return lowerError(ctx, "output shape " + dimsText(*ys) + " differs from " + dimsText(*xs));
            const DType outT = dtypeOf(ctx.g, node.outputs[0]);
            LoweredKernel lk = beginKernel(ctx);
            const int X = addInput(ctx, lk, node.inputs[0]);
            const int Y = addOutput(ctx, lk, node.outputs[0]);
            Kernel& k = lk.kernel;
            const DType xT = k.buffers[static_cast<std::size_t>(X)].dtype;
            const auto ext = nonEmpty(*xs);
            auto plan = resolveMappings(ctx, ext, defaultCpuMapping(ext, ctx.options.cpuThreads));
            if (!plan) return plan.diagnostics();
            k.body = emitMappedLoops(k, *plan, ext, [&](const std::vector<Expr>& o) {
                const std::vector<Expr> idx = xs->empty() ? std::vector<Expr>{} : o;
                const Expr x = cast(load(X, xT, idx), accumulatorType(outT));
                return store(Y, idx, cast(finish(kind == Red::Mean ? Red::Sum : kind, mapOf(kind, x), 1), outT));
            });
            return lk;
        }
        red.assign(R, true);
    }
    for (auto a : axes) {
        const std::int64_t n = normAxis(a, R);
        if (n < 0 || n >= static_cast<std::int64_t>(R))
            return lowerError(ctx, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(R));
        red[static_cast<std::size_t>(n)] = true;
    }
    return reduceCore(ctx, kind, red, keep);
}

support::Expected<LoweredKernel> lowerGlobalAveragePool(const LowerContext& ctx) {
    auto xs = shapeOf(ctx, ctx.node.inputs.empty() ? ir::kNoValue : ctx.node.inputs[0]);
    if (!xs) return xs.diagnostics();
    if (xs->size() < 3 || ctx.node.outputs.empty()) return lowerError(ctx, "global pooling needs an input of rank >= 3");
    std::vector<bool> red(xs->size(), true);
    red[0] = red[1] = false;
    return reduceCore(ctx, Red::Mean, red, true);
}

support::Expected<LoweredKernel> lowerGlobalMaxPool(const LowerContext& ctx) {
    auto xs = shapeOf(ctx, ctx.node.inputs.empty() ? ir::kNoValue : ctx.node.inputs[0]);
    if (!xs) return xs.diagnostics();
    if (xs->size() < 3 || ctx.node.outputs.empty()) return lowerError(ctx, "global pooling needs an input of rank >= 3");
    std::vector<bool> red(xs->size(), true);
    red[0] = red[1] = false;
    return reduceCore(ctx, Red::Max, red, true);
}

support::Expected<LoweredKernel> lowerArgMinMax(const LowerContext& ctx) {
    const ir::Node& node = ctx.node;
    const bool isMax = node.opType == "ArgMax";
    if (node.inputs.size() != 1 || node.outputs.empty() || node.outputs[0] == ir::kNoValue)
        return lowerError(ctx, node.opType + " needs one input and one output");
    auto xs = shapeOf(ctx, node.inputs[0]);
    if (!xs) return xs.diagnostics();
    auto ys = shapeOf(ctx, node.outputs[0]);
    if (!ys) return ys.diagnostics();
    const std::size_t R = xs->size();
    if (R == 0) return lowerError(ctx, node.opType + " needs an input of rank >= 1");
    const std::int64_t axis = normAxis(node.attrInt("axis", 0), R);
    if (axis < 0 || axis >= static_cast<std::int64_t>(R)) return lowerError(ctx, "axis is out of range");
    const bool keep = node.attrInt("keepdims", 1) != 0, last = node.attrInt("select_last_index", 0) != 0;
    std::vector<std::int64_t> expect;
    for (std::size_t d = 0; d < R; ++d)
        if (static_cast<std::int64_t>(d) != axis || keep) expect.push_back(static_cast<std::int64_t>(d) == axis ? 1 : (*xs)[d]);
    if (*ys != expect) return lowerError(ctx, "output shape " + dimsText(*ys) + " differs from " + dimsText(expect));
    const auto ax = static_cast<std::size_t>(axis);
    const std::int64_t outer = prod(*xs, 0, ax), len = (*xs)[ax], inner = prod(*xs, ax + 1, R);
    LoweredKernel lk = beginKernel(ctx);
    const int X = addInput(ctx, lk, node.inputs[0]);
    const int Y = addOutput(ctx, lk, node.outputs[0]);
    Kernel& k = lk.kernel;
    k.buffers[static_cast<std::size_t>(X)].shape = {outer, len, inner};
    k.buffers[static_cast<std::size_t>(Y)].shape = {outer, inner};
    const DType xT = k.buffers[static_cast<std::size_t>(X)].dtype, yT = k.buffers[static_cast<std::size_t>(Y)].dtype;
    const std::vector<std::int64_t> ext{outer, inner};
    auto plan = resolveMappings(ctx, ext, defaultCpuMapping(ext, ctx.options.cpuThreads));
    if (!plan) return plan.diagnostics();
    k.body = emitMappedLoops(k, *plan, ext, [&](const std::vector<Expr>& o) {
        const int best = localBuffer(k, "best", xT, {1});
        const int idx = localBuffer(k, "idx", DType::I64, {1});
        const Var j = k.newVar("j");
        const Expr pos = varRef(j) + intImm(1);
        const Expr x = load(X, xT, {o[0], pos, o[1]});
        const Expr b = load(best, xT, {intImm(0)});
        const Expr better = isMax ? (last ? x >= b : x > b) : (last ? x <= b : x < b);
        Stmt loop = forLoop(j, intImm(len - 1),
                            ifThen(better, seq({store(best, {intImm(0)}, x), store(idx, {intImm(0)}, pos)})));
        return allocate(best, allocate(idx, seq({store(best, {intImm(0)}, load(X, xT, {o[0], intImm(0), o[1]})),
                                                 store(idx, {intImm(0)}, intImm(0)), len > 1 ? loop : nullptr,
                                                 store(Y, {o[0], o[1]}, cast(load(idx, DType::I64, {intImm(0)}), yT))})));
    });
    k.notes.push_back("mapped over [outer, inner] of the [outer, axis, inner] view");
    return lk;
}

support::Expected<LoweredKernel> lowerSoftmax(const LowerContext& ctx) {
    const ir::Node& node = ctx.node;
    const bool logSm = node.opType == "LogSoftmax";
    if (node.inputs.size() != 1 || node.outputs.empty() || node.outputs[0] == ir::kNoValue)
        return lowerError(ctx, node.opType + " needs one input and one output");
    auto xs = shapeOf(ctx, node.inputs[0]);
    if (!xs) return xs.diagnostics();
    const std::size_t R = xs->size();
    const bool legacy = ctx.options.opset > 0 && ctx.options.opset < 13;
    std::int64_t axis = R == 0 ? 0 : normAxis(node.attrInt("axis", legacy ? 1 : -1), R);
    if (R > 0 && (axis < 0 || axis >= static_cast<std::int64_t>(R))) return lowerError(ctx, "axis is out of range");
    const auto ax = static_cast<std::size_t>(axis);
    std::int64_t outer = 1, len = 1, inner = 1;
    if (R > 0) {
        outer = prod(*xs, 0, ax);
        len = legacy ? prod(*xs, ax, R) : (*xs)[ax];
        inner = legacy ? 1 : prod(*xs, ax + 1, R);
    }
    const DType outT = dtypeOf(ctx.g, node.outputs[0]);
    const DType accT = accumulatorType(outT);
    LoweredKernel lk = beginKernel(ctx);
    const int X = addInput(ctx, lk, node.inputs[0]);
    const int Y = addOutput(ctx, lk, node.outputs[0]);
    Kernel& k = lk.kernel;
    k.buffers[static_cast<std::size_t>(X)].shape = {outer, len, inner};
    k.buffers[static_cast<std::size_t>(Y)].shape = {outer, len, inner};
    const DType xT = k.buffers[static_cast<std::size_t>(X)].dtype;
    const std::vector<std::int64_t> ext{outer, inner};
    const Expr negInf = constant(-std::numeric_limits<double>::infinity(), accT);
    auto result = [&](const Expr& x, const Expr& mx, const Expr& sum) {
        const Expr z = x - mx;
        return logSm ? z - call(Intrinsic::Log, {sum}) : call(Intrinsic::Exp, {z}) / sum;
    };

    if (inner == 1) {
        auto plan = resolveMappings(ctx, ext, defaultCpuMapping(ext, ctx.options.cpuThreads));
        if (!plan) return plan.diagnostics();
        k.body = emitMappedLoops(k, *plan, ext, [&](const std::vector<Expr>& o) {
            const int mx = localBuffer(k, "mx", accT, {1}), sm = localBuffer(k, "sum", accT, {1});
            auto xat = [&, o](const Expr& j) { return cast(load(X, xT, {o[0], j, o[1]}), accT); };
            const Expr m = load(mx, accT, {intImm(0)});
            Stmt s1 = laneReduce(k, len, accT, xat, [](const Expr& a, const Expr& b) { return maxOf(a, b); }, mx);
            Stmt s2 = laneReduce(k, len, accT, [&](const Expr& j) { return call(Intrinsic::Exp, {xat(j) - m}); },
                                 [](const Expr& a, const Expr& b) { return a + b; }, sm);
            const Var j = k.newVar("j");
            Stmt s3 = forLoop(j, intImm(len),
                              store(Y, {o[0], varRef(j), o[1]}, cast(result(xat(varRef(j)), m, load(sm, accT, {intImm(0)})), outT)),
                              ForKind::Vectorize);
            return allocate(mx, allocate(sm, seq({store(mx, {intImm(0)}, negInf), s1,
                                                  store(sm, {intImm(0)}, constant(0.0, accT)), s2, s3})));
        });
    } else {
        const std::vector<std::int64_t> tile{1, std::min<std::int64_t>(inner, 256)};
        auto plan = resolveMappings(ctx, ext, tiledMapping(ext, tile));
        if (!plan) return plan.diagnostics();
        k.body = emitTiledLoops(k, *plan, ext, {1, 1024}, [&](const TileView& tv) {
            const std::int64_t tw = tv.size[1];
            const int mx = localBuffer(k, "mx", accT, {tw}), sm = localBuffer(k, "sum", accT, {tw});
            const Expr o0 = tv.origin[0];
            auto row = [&](const std::function<Stmt(const Expr&)>& f) {
                const Var i = k.newVar("i");
                return forLoop(i, tv.extent[1], f(varRef(i)), ForKind::Vectorize);
            };
            auto overLen = [&](const std::function<Stmt(const Expr&, const Expr&)>& f) {
                const Var j = k.newVar("j");
                return forLoop(j, intImm(len), row([&](const Expr& i) { return f(varRef(j), i); }));
            };
            auto xat = [&](const Expr& j, const Expr& i) { return cast(load(X, xT, {o0, j, tv.origin[1] + i}), accT); };
            return allocate(mx, allocate(sm, seq({
                row([&](const Expr& i) { return seq({store(mx, {i}, negInf), store(sm, {i}, constant(0.0, accT))}); }),
                overLen([&](const Expr& j, const Expr& i) { return store(mx, {i}, maxOf(load(mx, accT, {i}), xat(j, i))); }),
                overLen([&](const Expr& j, const Expr& i) {
                    return store(sm, {i}, load(sm, accT, {i}) + call(Intrinsic::Exp, {xat(j, i) - load(mx, accT, {i})}));
                }),
                overLen([&](const Expr& j, const Expr& i) {
                    return store(Y, {o0, j, tv.origin[1] + i},
                                 cast(result(xat(j, i), load(mx, accT, {i}), load(sm, accT, {i})), outT));
                }),
            })));
        });
    }
    k.notes.push_back(std::string("mapped over [outer, inner] of the [outer, len, inner] view") +
                      (legacy ? " (opset < 13: coerced to 2-D at axis)" : ""));
    return lk;
}

support::Expected<LoweredKernel> lowerLayerNorm(const LowerContext& ctx) {
    const ir::Node& node = ctx.node;
    if (node.inputs.size() < 2 || node.outputs.empty() || node.outputs[0] == ir::kNoValue)
        return lowerError(ctx, "LayerNormalization needs X, Scale, optional B and output Y");
    auto xs = shapeOf(ctx, node.inputs[0]);
    if (!xs) return xs.diagnostics();
    const std::size_t R = xs->size();
    const std::int64_t axis = normAxis(node.attrInt("axis", -1), R);
    if (axis < 0 || axis >= static_cast<std::int64_t>(R)) return lowerError(ctx, "axis is out of range");
    const double eps = node.attrFloat("epsilon", 1e-5);
    const auto ax = static_cast<std::size_t>(axis);
    const std::int64_t outer = prod(*xs, 0, ax), len = prod(*xs, ax, R);
    const bool hasB = node.inputs.size() > 2 && node.inputs[2] != ir::kNoValue;
    for (std::size_t i = 1; i < (hasB ? 3u : 2u); ++i) {
        auto s = shapeOf(ctx, node.inputs[i]);
        if (!s) return s.diagnostics();
        if (prod(*s, 0, s->size()) != len)
            return unsupportedForm(ctx, "input " + std::to_string(i) + " of shape " + dimsText(*s) +
                                       " must have the normalised shape (broadcast Scale/B is not supported)");
    }
    const DType outT = dtypeOf(ctx.g, node.outputs[0]);
    const DType accT = accumulatorType(outT) == DType::F64 ? DType::F64 : DType::F32;
    LoweredKernel lk = beginKernel(ctx);
    const int X = addInput(ctx, lk, node.inputs[0]);
    const int S = addInput(ctx, lk, node.inputs[1]);
    const int B = hasB ? addInput(ctx, lk, node.inputs[2]) : -1;
    const int Y = addOutput(ctx, lk, node.outputs[0]);
    const bool hasMean = node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue;
    const bool hasInv = node.outputs.size() > 2 && node.outputs[2] != ir::kNoValue;
    const int Mo = hasMean ? addOutput(ctx, lk, node.outputs[1]) : -1;
    const int Io = hasInv ? addOutput(ctx, lk, node.outputs[2]) : -1;
    Kernel& k = lk.kernel;
    auto& bufs = k.buffers;
    bufs[static_cast<std::size_t>(X)].shape = {outer, len};
    bufs[static_cast<std::size_t>(Y)].shape = {outer, len};
    bufs[static_cast<std::size_t>(S)].shape = {len};
    if (hasB) bufs[static_cast<std::size_t>(B)].shape = {len};
    if (hasMean) bufs[static_cast<std::size_t>(Mo)].shape = {outer};
    if (hasInv) bufs[static_cast<std::size_t>(Io)].shape = {outer};
    const DType xT = bufs[static_cast<std::size_t>(X)].dtype, sT = bufs[static_cast<std::size_t>(S)].dtype;
    const DType bT = hasB ? bufs[static_cast<std::size_t>(B)].dtype : outT;
    const std::vector<std::int64_t> ext{outer};
    const bool userMapping = hasUserMapping(ctx);
    if (ctx.options.target == Target::Cuda && !userMapping && len >= 32) {
        // One block per row: the sums of the two passes over the block's threads (a tree in shared
        // memory), mean and 1/sigma in shared memory, then every thread writes its elements.
        const std::int64_t T = gpuLayerNormThreads(len);
        auto add = [](const Expr& a, const Expr& b) { return a + b; };
        const Expr n = constant(static_cast<double>(len), accT);
        k.body = emitMappedLoops(k, rowGrid(outer), ext, [&](const std::vector<Expr>& o) {
            const Expr row = o[0];
            auto xat = [&](const Expr& j) { return cast(load(X, xT, {row, j}), accT); };
            const int part = sharedBuffer(k, "part", accT, T), stat = sharedBuffer(k, "stat", accT, 2);
            const Expr mu = load(stat, accT, {intImm(0)}), inv = load(stat, accT, {intImm(1)});
            std::vector<Stmt> body{blockGather(k, T, len, accT, constant(0.0, accT), xat, add, part), barrier()};
            for (auto& st : blockTree(k, T, accT, add, part)) body.push_back(std::move(st));
            body.push_back(blockPhase(k, T, [&](const Expr& t) {
                return ifThen(t < intImm(1), store(stat, {intImm(0)}, load(part, accT, {intImm(0)}) / n));
            }));
            body.push_back(barrier());
            body.push_back(blockGather(k, T, len, accT, constant(0.0, accT), [&](const Expr& j) {
                const Expr d = xat(j) - mu;
                return d * d;
            }, add, part));
            body.push_back(barrier());
            for (auto& st : blockTree(k, T, accT, add, part)) body.push_back(std::move(st));
            body.push_back(blockPhase(k, T, [&](const Expr& t) {
                std::vector<Stmt> st{store(stat, {intImm(1)}, constant(1.0, accT) /
                                                                   call(Intrinsic::Sqrt, {load(part, accT, {intImm(0)}) / n +
                                                                                          constant(eps, accT)}))};
                return ifThen(t < intImm(1), seq(std::move(st)));
            }));
            body.push_back(barrier());
            body.push_back(blockPhase(k, T, [&](const Expr& t) {
                const Var i = k.newVar("i");
                const Expr j = t + varRef(i) * intImm(T);
                Expr y = (xat(j) - mu) * inv * cast(load(S, sT, {j}), accT);
                if (hasB) y = y + cast(load(B, bT, {j}), accT);
                Stmt w = store(Y, {row, j}, cast(y, outT));
                if (len % T != 0) w = ifThen(j < intImm(len), w);
                std::vector<Stmt> st{forLoop(i, intImm((len + T - 1) / T), w)};
                std::vector<Stmt> first;
                if (hasMean) first.push_back(store(Mo, {row}, cast(mu, bufs[static_cast<std::size_t>(Mo)].dtype)));
                if (hasInv) first.push_back(store(Io, {row}, cast(inv, bufs[static_cast<std::size_t>(Io)].dtype)));
                if (!first.empty()) st.push_back(ifThen(t < intImm(1), seq(std::move(first))));
                return seq(std::move(st));
            }));
            return allocate(part, allocate(stat, seq(std::move(body))));
        });
        k.notes.push_back("GPU form: one block of " + std::to_string(T) +
                          " threads per row of the [outer, normalised] view; two-pass mean and variance as block "
                          "reductions in shared memory");
        return lk;
    }
    auto plan = resolveMappings(ctx, ext, defaultCpuMapping(ext, ctx.options.cpuThreads));
    if (!plan) return plan.diagnostics();
    k.body = emitMappedLoops(k, *plan, ext, [&](const std::vector<Expr>& o) {
        const int mean = localBuffer(k, "mean", accT, {1}), var = localBuffer(k, "var", accT, {1});
        auto xat = [&](const Expr& j) { return cast(load(X, xT, {o[0], j}), accT); };
        const Expr m = load(mean, accT, {intImm(0)}) / constant(static_cast<double>(len), accT);
        const Var mv = k.newVar("mu", accT), iv = k.newVar("inv", accT);
        auto add = [](const Expr& a, const Expr& b) { return a + b; };
        Stmt s2 = laneReduce(k, len, accT, [&](const Expr& j) {
            const Expr d = xat(j) - varRef(mv);
            return d * d;
        }, add, var);
        const Var j = k.newVar("j");
        Expr y = (xat(varRef(j)) - varRef(mv)) * varRef(iv) * cast(load(S, sT, {varRef(j)}), accT);
        if (hasB) y = y + cast(load(B, bT, {varRef(j)}), accT);
        std::vector<Stmt> tail;
        tail.push_back(forLoop(j, intImm(len), store(Y, {o[0], varRef(j)}, cast(y, outT)), ForKind::Vectorize));
        if (hasMean) tail.push_back(store(Mo, {o[0]}, cast(varRef(mv), bufs[static_cast<std::size_t>(Mo)].dtype)));
        if (hasInv) tail.push_back(store(Io, {o[0]}, cast(varRef(iv), bufs[static_cast<std::size_t>(Io)].dtype)));
        const Expr inv = constant(1.0, accT) /
                         call(Intrinsic::Sqrt, {load(var, accT, {intImm(0)}) / constant(static_cast<double>(len), accT) +
                                                constant(eps, accT)});
        return allocate(mean, allocate(var, seq({
            store(mean, {intImm(0)}, constant(0.0, accT)), laneReduce(k, len, accT, xat, add, mean),
            let(mv, m, seq({store(var, {intImm(0)}, constant(0.0, accT)), s2, let(iv, inv, seq(std::move(tail)))})),
        })));
    });
    k.notes.push_back("mapped over [outer] of the [outer, normalised] view; two-pass mean and variance");
    return lk;
}

namespace {

/// BatchNormalization with training_mode = 1 (ONNX opset 14+): the batch's own statistics per
/// channel (mean, population variance over N and the spatial dims) normalise X, and the optional
/// outputs running_mean / running_var are input_mean * momentum + batch_mean * (1 - momentum) and
/// likewise for the variance. Mapped over the channels; per channel two lane-reduced passes.
support::Expected<LoweredKernel> lowerBatchNormTraining(const LowerContext& ctx, std::int64_t N, std::int64_t C,
                                                        std::int64_t HW) {
    const ir::Node& node = ctx.node;
    const double eps = node.attrFloat("epsilon", 1e-5), mom = node.attrFloat("momentum", 0.9);
    const DType outT = dtypeOf(ctx.g, node.outputs[0]);
    const DType accT = accumulatorType(outT);
    LoweredKernel lk = beginKernel(ctx);
    std::vector<int> in;
    for (std::size_t i = 0; i < 5; ++i) in.push_back(addInput(ctx, lk, node.inputs[i]));
    const int Y = addOutput(ctx, lk, node.outputs[0]);
    const bool hasRm = node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue;
    const bool hasRv = node.outputs.size() > 2 && node.outputs[2] != ir::kNoValue;
    const int RM = hasRm ? addOutput(ctx, lk, node.outputs[1]) : -1;
    const int RV = hasRv ? addOutput(ctx, lk, node.outputs[2]) : -1;
    Kernel& k = lk.kernel;
    k.buffers[static_cast<std::size_t>(in[0])].shape = {N, C, HW};
    k.buffers[static_cast<std::size_t>(Y)].shape = {N, C, HW};
    for (std::size_t i = 1; i < 5; ++i) k.buffers[static_cast<std::size_t>(in[i])].shape = {C};
    if (RM >= 0) k.buffers[static_cast<std::size_t>(RM)].shape = {C};
    if (RV >= 0) k.buffers[static_cast<std::size_t>(RV)].shape = {C};
    auto ld = [&](std::size_t i, std::vector<Expr> idx) {
        return cast(load(in[i], k.buffers[static_cast<std::size_t>(in[i])].dtype, std::move(idx)), accT);
    };
    const std::vector<std::int64_t> ext{C};
    auto plan = resolveMappings(ctx, ext, defaultCpuMapping(ext, ctx.options.cpuThreads));
    if (!plan) return plan.diagnostics();
    const Expr count = constant(static_cast<double>(N * HW), accT);
    auto add = [](const Expr& a, const Expr& b) { return a + b; };
    k.body = emitMappedLoops(k, *plan, ext, [&](const std::vector<Expr>& o) {
        const Expr c = o[0];
        const int sum = localBuffer(k, "sum", accT, {1}), sq = localBuffer(k, "sq", accT, {1});
        const Var mv = k.newVar("mu", accT), vv = k.newVar("var", accT), iv = k.newVar("inv", accT);
        Stmt sumPass = loopOver(k, "n", intImm(N), ForKind::Serial, [&](const Expr& n) {
            return laneReduce(k, HW, accT, [&](const Expr& j) { return ld(0, {n, c, j}); }, add, sum);
        });
        Stmt sqPass = loopOver(k, "n", intImm(N), ForKind::Serial, [&](const Expr& n) {
            return laneReduce(k, HW, accT, [&](const Expr& j) {
                const Expr d = ld(0, {n, c, j}) - varRef(mv);
                return d * d;
            }, add, sq);
        });
        Stmt write = loopOver(k, "n", intImm(N), ForKind::Serial, [&](const Expr& n) {
            return loopOver(k, "j", intImm(HW), ForKind::Vectorize, [&](const Expr& j) {
                const Expr y = (ld(0, {n, c, j}) - varRef(mv)) * varRef(iv) * ld(1, {c}) + ld(2, {c});
                return store(Y, {n, c, j}, cast(y, outT));
            });
        });
        std::vector<Stmt> tail{write};
        const Expr keep = constant(mom, accT), take = constant(1.0 - mom, accT);
        if (RM >= 0)
            tail.push_back(store(RM, {c}, cast(ld(3, {c}) * keep + varRef(mv) * take,
                                               k.buffers[static_cast<std::size_t>(RM)].dtype)));
        if (RV >= 0)
            tail.push_back(store(RV, {c}, cast(ld(4, {c}) * keep + varRef(vv) * take,
                                               k.buffers[static_cast<std::size_t>(RV)].dtype)));
        const Expr inv = constant(1.0, accT) / call(Intrinsic::Sqrt, {varRef(vv) + constant(eps, accT)});
        return allocate(sum, allocate(sq, seq({
            store(sum, {intImm(0)}, constant(0.0, accT)), sumPass,
            let(mv, load(sum, accT, {intImm(0)}) / count,
                seq({store(sq, {intImm(0)}, constant(0.0, accT)), sqPass,
                     let(vv, load(sq, accT, {intImm(0)}) / count, let(iv, inv, seq(std::move(tail))))})),
        })));
    });
    k.notes.push_back("training mode: mapped over channels; batch mean and population variance in two passes");
    return lk;
}

}  // namespace

support::Expected<LoweredKernel> lowerBatchNorm(const LowerContext& ctx) {
    const ir::Node& node = ctx.node;
    const bool training = node.attrInt("training_mode", 0) != 0;
    if (node.inputs.size() != 5 || node.outputs.empty() || node.outputs[0] == ir::kNoValue)
        return lowerError(ctx, "BatchNormalization needs X, scale, B, mean, var and output Y");
    if (!training)
        for (std::size_t i = 1; i < node.outputs.size(); ++i)
            if (node.outputs[i] != ir::kNoValue)
                return unsupportedForm(ctx, "running_mean/running_var outputs need training_mode = 1");
    auto xs = shapeOf(ctx, node.inputs[0]);
    if (!xs) return xs.diagnostics();
    if (xs->size() < 2) return lowerError(ctx, "input must have rank >= 2, got " + dimsText(*xs));
    const std::int64_t N = (*xs)[0], C = (*xs)[1], HW = prod(*xs, 2, xs->size());
    for (std::size_t i = 1; i < 5; ++i) {
        auto s = shapeOf(ctx, node.inputs[i]);
        if (!s) return s.diagnostics();
        if (prod(*s, 0, s->size()) != C) return lowerError(ctx, "input " + std::to_string(i) + " must have " + std::to_string(C) + " elements");
    }
    if (training) return lowerBatchNormTraining(ctx, N, C, HW);
    const double eps = node.attrFloat("epsilon", 1e-5);
    const DType outT = dtypeOf(ctx.g, node.outputs[0]);
    const DType accT = accumulatorType(outT);
    LoweredKernel lk = beginKernel(ctx);
    std::vector<int> in;
    for (std::size_t i = 0; i < 5; ++i) in.push_back(addInput(ctx, lk, node.inputs[i]));
    const int Y = addOutput(ctx, lk, node.outputs[0]);
    Kernel& k = lk.kernel;
    k.buffers[static_cast<std::size_t>(in[0])].shape = {N, C, HW};
    k.buffers[static_cast<std::size_t>(Y)].shape = {N, C, HW};
    for (std::size_t i = 1; i < 5; ++i) k.buffers[static_cast<std::size_t>(in[i])].shape = {C};
    auto ld = [&](std::size_t i, std::vector<Expr> idx) {
        return cast(load(in[i], k.buffers[static_cast<std::size_t>(in[i])].dtype, std::move(idx)), accT);
    };
    const std::vector<std::int64_t> ext{N, C, HW};
    const std::vector<std::int64_t> tile{1, 1, std::min<std::int64_t>(HW, 4096)};
    auto plan = resolveMappings(ctx, ext, tiledMapping(ext, tile));
    if (!plan) return plan.diagnostics();
    k.body = emitTiledLoops(k, *plan, ext, {1, 1, 0}, [&](const TileView& tv) {
        return loopOver(k, "c", tv.extent[1], ForKind::Serial, [&](const Expr& cIdx) {
            const Expr c = tv.origin[1] + cIdx;
            const Var a = k.newVar("a", accT), b = k.newVar("b", accT);
            Stmt rows = loopOver(k, "n", tv.extent[0], ForKind::Serial, [&](const Expr& nIdx) {
                const Expr n = tv.origin[0] + nIdx;
                return loopOver(k, "j", tv.extent[2], ForKind::Vectorize, [&](const Expr& j) {
                    const Expr x = ld(0, {n, c, tv.origin[2] + j});
                    return store(Y, {n, c, tv.origin[2] + j}, cast(x * varRef(a) + varRef(b), outT));
                });
            });
            const Expr av = ld(1, {c}) / call(Intrinsic::Sqrt, {ld(4, {c}) + constant(eps, accT)});
            return let(a, av, let(b, ld(2, {c}) - ld(3, {c}) * varRef(a), rows));
        });
    });
    k.notes.push_back("[N, C, spatial] view; per channel a = scale/sqrt(var+eps), b = B - mean*a; y = x*a + b");
    return lk;
}

}  // namespace tessera::lower::detail
