// The fused attention kernel (lower_fused.h lowerAttention): the core of an `attention` fusion
// group (core/schedule/attention_pattern.h) as one FlashAttention-style kernel with an online
// softmax (Dao et al., "FlashAttention", NeurIPS 2022, Algorithm 1; Milakov and Gimelshein,
// "Online normalizer calculation for softmax", 2018). The scores and probabilities never reach
// global memory.
//
//   grid = spatial(batch..., ceil(Sq / Tq))      one worker per (batch..., tile of Tq query rows)
//   worker:
//     rows r of the tile: q[r][:] = Q[b, i0 + r, :]; m[r] = -inf; l[r] = 0; o[r][:] = 0
//     for each key block j0 = 0, Bk, 2 Bk ... (jn = min(Bk, Sk - j0) keys):
//       Ks[jj][:] = Kt[b, :, j0 + jj]; Vs[jj][:] = V[b, j0 + jj, :]             (staged)
//       rows r: s[jj] = score(q[r] . Ks[jj])      score = the group's elementwise ops (scale, mask)
//               mx = max(m[r], max_jj s[jj]);  ms = max(mx, -FLT_MAX)
//               alpha = exp(m[r] - ms); l[r] *= alpha; o[r][:] *= alpha
//               p = exp(s[jj] - ms); l[r] += p; o[r][:] += p * Vs[jj][:];  m[r] = mx
//     rows r: Y[b, i0 + r, :] = o[r][:] / l[r]
// ms = max(mx, -FLT_MAX) keeps a block whose scores are all -inf (a masked prefix) from making
// exp(-inf - (-inf)) = NaN: its probabilities are exp(-inf) = 0 and the running sums stay 0. A
// row masked everywhere therefore ends with 0 / 0 = NaN, which is what the unfused graph gives
// (Softmax of an all -inf row is NaN in ONNX semantics and in the reference interpreter).
//
// CUDA: one block per worker, one thread per query row (Tq = 32 or 64 threads); q, m, l and o
// are per-thread buffers, Ks and Vs shared tiles that every thread stages (consecutive threads on
// consecutive elements of a key row), with barriers around the compute phase. CPU: the rows are a
// serial loop inside the worker, Ks/Vs a Local tile (Tq = 16 rows share each staged block).
// Loads of Q, Kt, V and of the score ops' other inputs address the whole tensors, so lowerGroup's
// prologue rewrite (the scaling Muls, K's Transpose, head-split Reshapes) and epilogue rewrite
// (the head merge after the PV MatMul) apply to this kernel unchanged; the output is stored once
// per element and never loaded.
#include <algorithm>
#include <limits>

#include "core/lower/detail/lower_fused.h"
#include "core/lower/detail/lower_heavy.h"

namespace tessera::lower::detail {

namespace {

support::DiagnosticList attentionError(const std::string& where, std::string message) {
    support::DiagnosticList d;
    d.error("", where, std::move(message));
    return d;
}

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool isFloatType(DType t) { return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64; }

std::string dimsText(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

/// Numpy broadcast of two batch shapes (right-aligned); nullopt when incompatible.
std::optional<std::vector<std::int64_t>> broadcastShapes(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
    std::vector<std::int64_t> r(std::max(a.size(), b.size()), 1);
    for (std::size_t i = 0; i < r.size(); ++i) {
        const std::int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
        const std::int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
        if (x != y && x != 1 && y != 1) return std::nullopt;
        r[r.size() - 1 - i] = x == 1 ? y : x;
    }
    return r;
}

/// The tensors of an attention core, read and checked (lowerAttention's first phase).
struct AttentionShape {
    ir::ValueId qV = ir::kNoValue, ktV = ir::kNoValue, vV = ir::kNoValue, yV = ir::kNoValue, sV = ir::kNoValue;
    std::int64_t Sq = 0, D = 0, Sk = 0, Dv = 0;  ///< query rows, head dim, keys, value dim
    std::vector<std::int64_t> batch;             ///< the output's batch dims
    DType yT = DType::F32, accT = DType::F32;
};

support::Expected<AttentionShape> readAttention(const ir::Graph& g, const schedule::AttentionPattern& p,
                                                const LowerOptions& options, const std::string& where) {
    const ir::Node& qkN = g.node(p.qk);
    const ir::Node& smN = g.node(p.softmax);
    const ir::Node& pvN = g.node(p.pv);
    AttentionShape a;
    a.qV = qkN.inputs[0], a.ktV = qkN.inputs[1], a.vV = pvN.inputs[1], a.yV = pvN.outputs[0];
    a.sV = qkN.outputs[0];
    auto shape = [&](ir::ValueId v) -> support::Expected<std::vector<std::int64_t>> {
        auto s = concreteShape(g, v);
        if (!s) return attentionError(where, "value '" + g.value(v).name + "' has no concrete shape");
        return *s;
    };
    auto qs = shape(a.qV), kts = shape(a.ktV), vs = shape(a.vV), ys = shape(a.yV), ss = shape(a.sV);
    for (const auto* s : {&qs, &kts, &vs, &ys, &ss})
        if (!s->ok()) return s->diagnostics();
    const std::vector<std::int64_t>& qShape = *qs;
    const std::vector<std::int64_t>& ktShape = *kts;
    const std::vector<std::int64_t>& vShape = *vs;
    const std::vector<std::int64_t>& yShape = *ys;
    if (qShape.size() < 2 || ktShape.size() < 2 || vShape.size() < 2 || yShape.size() < 2)
        return attentionError(where, "Q, K^T, V and the output must have rank >= 2");
    a.Sq = qShape[qShape.size() - 2], a.D = qShape.back();
    a.Sk = ktShape.back(), a.Dv = vShape.back();
    if (ktShape[ktShape.size() - 2] != a.D || vShape[vShape.size() - 2] != a.Sk || yShape[yShape.size() - 2] != a.Sq ||
        yShape.back() != a.Dv)
        return attentionError(where, "shapes do not chain: Q " + dimsText(qShape) + ", K^T " + dimsText(ktShape) + ", V " +
                                         dimsText(vShape) + " -> " + dimsText(yShape));
    a.batch.assign(yShape.begin(), yShape.end() - 2);
    {
        auto qb = broadcastShapes({qShape.begin(), qShape.end() - 2}, {ktShape.begin(), ktShape.end() - 2});
        auto ob = qb ? broadcastShapes(*qb, {vShape.begin(), vShape.end() - 2}) : std::nullopt;
        if (!ob || *ob != a.batch) return attentionError(where, "the batch dims of Q, K^T and V do not broadcast to the output's");
    }
    // Opset < 13 Softmax coerces its input to 2-D at `axis` (default 1): a per-row softmax only
    // when that axis is the last one.
    if (options.opset > 0 && options.opset < 13) {
        const auto rank = static_cast<std::int64_t>(ss->size());
        std::int64_t axis = smN.attrInt("axis", 1);
        if (axis < 0) axis += rank;
        if (axis != rank - 1)
            return attentionError(where, smN.name + " (opset " + std::to_string(options.opset) +
                                             ") normalises over more than the last axis");
    }
    const DType qT = dtypeOf(g, a.qV), kT = dtypeOf(g, a.ktV), vT = dtypeOf(g, a.vV);
    a.yT = dtypeOf(g, a.yV);
    for (DType t : {qT, kT, vT, a.yT, dtypeOf(g, a.sV)})
        if (!isFloatType(t)) return attentionError(where, "attention needs floating-point Q, K, V and scores");
    for (ir::NodeId op : p.scoreOps)
        if (!isInlinableElementwise(g, op))
            return attentionError(where, "'" + g.node(op).name + "' (" + g.node(op).opType +
                                             ") between the MatMul and the Softmax cannot be inlined");
    a.accT = accumulatorType(a.yT);
    return a;
}

/// Query rows per tile (Tq) and keys per staged block (Bk). CUDA: one thread per query row, 64
/// (or 32 for short queries) per block; the staged K/V block fits 40 KiB of static shared memory.
/// CPU: 16 rows share a staged block; the worker's Local tiles stay within 128 KiB.
support::Expected<std::pair<std::int64_t, std::int64_t>> attentionTiles(const AttentionShape& a, bool gpu,
                                                                        const std::string& where) {
    const std::int64_t Sq = a.Sq, D = a.D, Dv = a.Dv;
    const std::int64_t accBytes = static_cast<std::int64_t>(ir::dtypeSize(a.accT));
    std::int64_t Tq = 0, Bk = 0;
    if (gpu) {
        Tq = Sq > 32 ? 64 : 32;
        Bk = std::clamp<std::int64_t>(40 * 1024 / ((D + Dv) * accBytes), 1, 64);
        if (Bk * (D + Dv) * accBytes > 40 * 1024)
            return attentionError(where, "head dims " + std::to_string(D) + " + " + std::to_string(Dv) +
                                             " are too large for one staged key row in shared memory");
    } else {
        Tq = std::min<std::int64_t>(16, Sq);
        Bk = std::clamp<std::int64_t>(32768 / (D + Dv), 1, 64);
        while (Tq > 1 && Tq * (D + Dv + Bk) > 32768) Tq = (Tq + 1) / 2;
    }
    Bk = std::min(Bk, a.Sk);
    return std::make_pair(Tq, Bk);
}

/// The phases of one worker (CUDA block) of the attention kernel: its tile of Tq query rows,
/// visited key block by key block. Each function creates its variables as the generated code
/// uses them, so blockBody runs them in that order.
class AttentionEmitter {
public:
    AttentionEmitter(const ir::Graph& g, const schedule::AttentionPattern& p, const LowerOptions& lopts,
                     const std::string& where, const AttentionShape& a, bool gpu, std::int64_t Tq, std::int64_t Bk,
                     Kernel& k, const std::vector<std::vector<int>>& opBufs, int Q, int Kt, int V, int Y);
    /// Worker gi (batch indices, then the tile): the kernel body inside the grid loops.
    Stmt blockBody(const std::vector<Expr>& gi);
    /// Errors of the score ops (elementwiseExpr).
    const support::DiagnosticList& errors() const { return m_errors; }

private:
    int addTemp(const std::string& name, std::vector<std::int64_t> shape, MemoryScope scope, bool perThread = false);
    std::vector<Expr> at(const Expr& a, const Expr& b) const;
    Expr ld(int buf, const Expr& a, const Expr& b) const;
    Stmt rows(const std::function<Stmt(const Expr& t, const Expr& i)>& f);
    Stmt over(const std::string& hint, const Expr& extent, ForKind kind, const std::function<Stmt(const Expr&)>& f);
    Expr score(const Expr& dotValue, const Expr& i, const Expr& j);
    Stmt initRows();
    Stmt stageKeyBlock(const Expr& j0, const Expr& jn);
    Stmt updateRows(const Expr& j0, const Expr& jn);
    Stmt finishRows();

    const ir::Graph& g;
    const schedule::AttentionPattern& p;
    const LowerOptions& lopts;
    const std::string& where;
    const AttentionShape& a;
    const bool gpu;
    const std::int64_t Tq, Bk;
    Kernel& k;
    const std::vector<std::vector<int>>& opBufs;  // per score op and input slot: its buffer (-1: the score)
    const int Q, Kt, V, Y;
    const DType accT;
    int qL = -1, oL = -1, mL = -1, lL = -1, Ks = -1, Vs = -1, sL = -1, mx = -1, dot = -1;
    Expr negInf, lowest, zero;
    ForKind vecKind = ForKind::Serial;
    std::string blockText;
    support::DiagnosticList m_errors;
    // The worker being emitted (blockBody).
    std::vector<Expr> bIdx;
    Expr i0;
};

AttentionEmitter::AttentionEmitter(const ir::Graph& graph, const schedule::AttentionPattern& pattern,
                                   const LowerOptions& options, const std::string& w, const AttentionShape& shape, bool onGpu,
                                   std::int64_t tq, std::int64_t bk, Kernel& kernel,
                                   const std::vector<std::vector<int>>& scoreBufs, int q, int kt, int v, int y)
    : g(graph), p(pattern), lopts(options), where(w), a(shape), gpu(onGpu), Tq(tq), Bk(bk), k(kernel), opBufs(scoreBufs),
      Q(q), Kt(kt), V(v), Y(y), accT(shape.accT) {
    const MemoryScope stageScope = gpu ? MemoryScope::Shared : MemoryScope::Local;
    qL = addTemp("q", {Tq, a.D}, MemoryScope::Local, gpu);
    oL = addTemp("o", {Tq, a.Dv}, MemoryScope::Local, gpu);
    mL = addTemp("m", {Tq}, MemoryScope::Local, gpu);
    lL = addTemp("l", {Tq}, MemoryScope::Local, gpu);
    Ks = addTemp("Ks", {Bk, a.D}, stageScope);
    Vs = addTemp("Vs", {Bk, a.Dv}, stageScope);
    sL = addTemp("s", {Bk}, MemoryScope::Local);
    mx = addTemp("mx", {1}, MemoryScope::Local);
    dot = addTemp("dot", {1}, MemoryScope::Local);
    negInf = constant(-std::numeric_limits<double>::infinity(), accT);
    lowest = constant(accT == DType::F64 ? std::numeric_limits<double>::lowest()
                                         : static_cast<double>(std::numeric_limits<float>::lowest()),
                      accT);
    zero = constant(0.0, accT);
    vecKind = gpu ? ForKind::Serial : ForKind::Vectorize;
    blockText = "block = spatial(" + std::to_string(Tq) + "): one thread per query row";
}

int AttentionEmitter::addTemp(const std::string& name, std::vector<std::int64_t> shape, MemoryScope scope, bool perThread) {
    BufferDecl b;
    b.name = name;
    b.dtype = accT;
    b.shape = std::move(shape);
    b.scope = scope;
    b.perThread = perThread;
    return k.addBuffer(std::move(b));
}

std::vector<Expr> AttentionEmitter::at(const Expr& x, const Expr& y) const {
    std::vector<Expr> idx = bIdx;
    idx.push_back(x);
    idx.push_back(y);
    return idx;
}

Expr AttentionEmitter::ld(int buf, const Expr& x, const Expr& y) const {
    const BufferDecl& d = k.buffers[static_cast<std::size_t>(buf)];
    return cast(load(buf, d.dtype, broadcastIndex(at(x, y), d.shape)), accT);
}

// The rows of the tile: a Threads loop on CUDA (thread t = row t), a serial loop on the CPU;
// rows past Sq are skipped.
Stmt AttentionEmitter::rows(const std::function<Stmt(const Expr& t, const Expr& i)>& f) {
    const Var t = k.newVar("r");
    const Expr tv = varRef(t);
    const Expr i = i0 + tv;
    Stmt s = f(tv, i);
    if (a.Sq % Tq != 0) s = ifThen(i < intImm(a.Sq), s);
    return forLoop(t, intImm(Tq), s, gpu ? ForKind::Threads : ForKind::Serial, 0, gpu ? blockText : std::string());
}

Stmt AttentionEmitter::over(const std::string& hint, const Expr& extent, ForKind kind, const std::function<Stmt(const Expr&)>& f) {
    return loopOver(k, hint, extent, kind, f);
}

// The score of (i, j) from the dot product: the group's elementwise ops in order.
Expr AttentionEmitter::score(const Expr& dotValue, const Expr& i, const Expr& j) {
    Expr cur = cast(dotValue, dtypeOf(g, a.sV));
    ir::ValueId cv = a.sV;
    for (std::size_t o = 0; o < p.scoreOps.size(); ++o) {
        const ir::NodeId op = p.scoreOps[o];
        const ir::Node& n = g.node(op);
        std::vector<Expr> ins(n.inputs.size());
        for (std::size_t s = 0; s < n.inputs.size(); ++s) {
            if (n.inputs[s] == ir::kNoValue) continue;
            if (n.inputs[s] == cv) {
                ins[s] = cur;
                continue;
            }
            const int b = opBufs[o][s];
            const BufferDecl& d = k.buffers[static_cast<std::size_t>(b)];
            ins[s] = load(b, d.dtype, broadcastIndex(at(i, j), d.shape));
        }
        auto r = elementwiseExpr(LowerContext{g, op, n, nullptr, lopts, where}, ins);
        if (!r) {
            m_errors.append(r.diagnostics());
            return zero;
        }
        cur = *r;
        cv = n.outputs[0];
    }
    return cast(cur, accT);
}

// Each row: its query into q, m = -inf, l = 0, o = 0.
Stmt AttentionEmitter::initRows() {
    return rows([&](const Expr& t, const Expr& i) {
        return seq({over("d", intImm(a.D), vecKind, [&](const Expr& d) { return store(qL, {t, d}, ld(Q, i, d)); }),
                    store(mL, {t}, negInf), store(lL, {t}, zero),
                    over("e", intImm(a.Dv), vecKind, [&](const Expr& e) { return store(oL, {t, e}, zero); })});
    });
}

// Staging the key block from j0 (jn keys) into Ks (from K^T) and Vs.
Stmt AttentionEmitter::stageKeyBlock(const Expr& j0, const Expr& jn) {
    const std::int64_t Sk = a.Sk;
    if (gpu) {
        // Consecutive threads stage consecutive elements of a key row; keys past Sk are 0.
        auto stageTile = [&](int dst, std::int64_t width, const std::function<Expr(const Expr& jj, const Expr& c)>& src) {
            const std::int64_t total = Bk * width, reps = ceilDiv(total, Tq);
            const Var t = k.newVar("t");
            Stmt per = over("u", intImm(reps), reps <= 8 ? ForKind::Unroll : ForKind::Serial, [&](const Expr& u) {
                const Var e = k.newVar("x");
                const Expr ev = varRef(e);
                const Expr jj = ev / intImm(width), c = ev % intImm(width);
                Expr v = src(jj, c);
                if (Sk % Bk != 0) v = select(j0 + jj < intImm(Sk), v, zero);
                Stmt st = store(dst, {jj, c}, v);
                if (total % Tq != 0) st = ifThen(ev < intImm(total), st);
                return let(e, u * intImm(Tq) + varRef(t), st);
            });
            return forLoop(t, intImm(Tq), per, ForKind::Threads, 0, blockText);
        };
        return seq({stageTile(Ks, a.D, [&](const Expr& jj, const Expr& d) { return ld(Kt, d, j0 + jj); }),
                    stageTile(Vs, a.Dv, [&](const Expr& jj, const Expr& e) { return ld(V, j0 + jj, e); })});
    }
    return seq({over("jj", jn, ForKind::Serial,
                     [&](const Expr& jj) {
                         return over("d", intImm(a.D), ForKind::Serial,
                                     [&](const Expr& d) { return store(Ks, {jj, d}, ld(Kt, d, j0 + jj)); });
                     }),
                over("jj", jn, ForKind::Serial, [&](const Expr& jj) {
                    return over("e", intImm(a.Dv), vecKind, [&](const Expr& e) { return store(Vs, {jj, e}, ld(V, j0 + jj, e)); });
                })});
}

// Each row against the staged block: its scores s[jj] and their max, then the online softmax
// update (rescale l and o by exp(m - ms), add the block's probabilities and p * V).
Stmt AttentionEmitter::updateRows(const Expr& j0, const Expr& jn) {
    return rows([&](const Expr& t, const Expr& i) {
        const Expr mxv = load(mx, accT, {intImm(0)});
        Stmt scores = over("jj", jn, ForKind::Serial, [&](const Expr& jj) {
            const Expr dv = load(dot, accT, {intImm(0)});
            return seq({store(dot, {intImm(0)}, zero),
                        over("d", intImm(a.D), ForKind::Serial,
                             [&](const Expr& d) {
                                 return store(dot, {intImm(0)}, dv + load(qL, accT, {t, d}) * load(Ks, accT, {jj, d}));
                             }),
                        store(sL, {jj}, score(dv, i, j0 + jj)),
                        store(mx, {intImm(0)}, maxOf(mxv, load(sL, accT, {jj})))});
        });
        const Var ms = k.newVar("ms", accT), alpha = k.newVar("alpha", accT), pj = k.newVar("p", accT);
        const Expr msv = varRef(ms), av = varRef(alpha), pv = varRef(pj);
        const Expr lv = load(lL, accT, {t});
        Stmt rescale = seq({store(lL, {t}, lv * av), over("e", intImm(a.Dv), vecKind, [&](const Expr& e) {
                                return store(oL, {t, e}, load(oL, accT, {t, e}) * av);
                            })});
        Stmt accumulate = over("jj", jn, ForKind::Serial, [&](const Expr& jj) {
            return let(pj, call(Intrinsic::Exp, {load(sL, accT, {jj}) - msv}),
                       seq({store(lL, {t}, lv + pv), over("e", intImm(a.Dv), vecKind, [&](const Expr& e) {
                                return store(oL, {t, e}, load(oL, accT, {t, e}) + pv * load(Vs, accT, {jj, e}));
                            })}));
        });
        Stmt update = let(ms, maxOf(mxv, lowest),
                          let(alpha, call(Intrinsic::Exp, {load(mL, accT, {t}) - msv}),
                              seq({rescale, accumulate, store(mL, {t}, mxv)})));
        return allocate(sL, allocate(mx, allocate(dot, seq({store(mx, {intImm(0)}, load(mL, accT, {t})), scores, update}))));
    });
}

// Each row: Y = o / l.
Stmt AttentionEmitter::finishRows() {
    return rows([&](const Expr& t, const Expr& i) {
        return over("e", intImm(a.Dv), vecKind, [&](const Expr& e) {
            return store(Y, at(i, e), cast(load(oL, accT, {t, e}) / load(lL, accT, {t}), a.yT));
        });
    });
}

Stmt AttentionEmitter::blockBody(const std::vector<Expr>& gi) {
    bIdx.assign(gi.begin(), gi.end() - 1);
    i0 = gi.back() * intImm(Tq);
    Stmt init = initRows();
    const Var kb = k.newVar("kb");
    const Expr j0 = varRef(kb) * intImm(Bk);
    const Expr jn = a.Sk % Bk == 0 ? intImm(Bk) : minOf(intImm(Bk), intImm(a.Sk) - j0);
    Stmt stage = stageKeyBlock(j0, jn);
    Stmt compute = updateRows(j0, jn);
    Stmt keyLoop = forLoop(kb, intImm(ceilDiv(a.Sk, Bk)),
                           gpu ? seq({stage, barrier(), compute, barrier()}) : seq({stage, compute}), ForKind::Serial, 0,
                           "key blocks of " + std::to_string(Bk));
    Stmt finish = finishRows();
    return allocate(Ks, allocate(Vs, allocate(qL, allocate(oL, allocate(mL, allocate(lL, seq({init, keyLoop, finish})))))));
}

}  // namespace

support::Expected<LoweredKernel> lowerAttention(const ir::Graph& g, const schedule::AttentionPattern& p,
                                                const LowerOptions& options, const std::string& where) {
    if (!p.ok()) return attentionError(where, "not an attention pattern");
    const bool gpu = options.target == Target::Cuda;
    auto shape = readAttention(g, p, options, where);
    if (!shape) return shape.diagnostics();
    const AttentionShape& a = *shape;
    auto tiles = attentionTiles(a, gpu, where);
    if (!tiles) return tiles.diagnostics();
    const auto [Tq, Bk] = *tiles;
    const std::int64_t nTiles = ceilDiv(a.Sq, Tq);

    const ir::Node& qkN = g.node(p.qk);
    LowerOptions lopts = options;
    const LowerContext ctx{g, p.qk, qkN, nullptr, lopts, where};
    LoweredKernel lk = beginKernel(ctx);
    const int Q = addInput(ctx, lk, a.qV);
    const int Kt = addInput(ctx, lk, a.ktV);
    // The score ops' other inputs, per op and slot (-1: the running score, or absent).
    std::vector<std::vector<int>> opBufs;
    ir::ValueId chain = a.sV;
    for (ir::NodeId op : p.scoreOps) {
        const ir::Node& n = g.node(op);
        std::vector<int> bufs(n.inputs.size(), -1);
        for (std::size_t s = 0; s < n.inputs.size(); ++s) {
            const ir::ValueId v = n.inputs[s];
            if (v == ir::kNoValue || v == chain) continue;
            if (!concreteShape(g, v)) return attentionError(where, "value '" + g.value(v).name + "' has no concrete shape");
            bufs[s] = addInput(ctx, lk, v);
        }
        opBufs.push_back(std::move(bufs));
        chain = n.outputs[0];
    }
    const int V = addInput(ctx, lk, a.vV);
    const int Y = addOutput(ctx, lk, a.yV);
    Kernel& k = lk.kernel;
    k.sourceOps.clear();
    for (ir::NodeId n : p.core()) k.sourceOps.push_back(g.node(n).name);

    MappingPlan plan;
    plan.target = options.target;
    std::vector<std::int64_t> gridShape = a.batch;
    gridShape.push_back(nTiles);
    auto grid = schedule::TaskMapping::spatial(gridShape);
    if (!grid) return grid.diagnostics();
    plan.grid = std::move(*grid);

    AttentionEmitter emitter(g, p, lopts, where, a, gpu, Tq, Bk, k, opBufs, Q, Kt, V, Y);
    Stmt body = emitMappedLoops(k, plan, gridShape, [&](const std::vector<Expr>& gi) { return emitter.blockBody(gi); });
    if (emitter.errors().hasErrors()) return emitter.errors();
    k.body = std::move(body);
    k.opType = qkN.opType;
    k.notes.push_back("attention (FlashAttention-style online softmax): " + std::to_string(Tq) + " query rows per " +
                      (gpu ? "block (one thread each)" : "worker") + ", key blocks of " + std::to_string(Bk) + " staged in " +
                      (gpu ? "shared" : "local") + " memory; Q [" + std::to_string(a.Sq) + " x " + std::to_string(a.D) +
                      "], K [" + std::to_string(a.Sk) + " x " + std::to_string(a.D) + "], V [" + std::to_string(a.Sk) + " x " +
                      std::to_string(a.Dv) + "] per batch; the scores never reach global memory");
    return lk;
}

}  // namespace tessera::lower::detail
