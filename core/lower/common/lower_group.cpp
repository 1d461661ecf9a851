// lowerGroup (core/lower/lower.h): one kernel per fusion group.
//
// Hidet's post-scheduling fusion on the kernel IR: the anchor (or the fused conv chain) is lowered
// alone, then its kernel is rewritten.
// - Prologue P (output X, an input of the kernel): every Load X[idx] becomes P's scalar body
//   (elementwiseExpr) over loads of P's inputs at broadcastIndex(idx); P's inputs take X's place
//   among the params. Chains are handled by repeating this for the prologue whose output is an
//   input of the kernel at that moment.
// - Epilogue E reading Y (an output of the kernel) at the full shape: every Store to the Global
//   buffer Y[idx] = v becomes `let y = v; Z[idx] = E(y, other inputs at broadcastIndex(idx))` with
//   Z = E's output; Z takes Y's place among the outputs and E's other inputs are appended to the
//   inputs. Y stays an output (stored as well) only when it is used outside the group.
// - Index maps (Transpose, Reshape, Flatten, Squeeze, Unsqueeze: bijections between elements) are
//   not expressions but index rewrites. Epilogue: Y[idx] = v becomes Z[idx] = v for the Reshape
//   family (Z's buffer takes the anchor's view of Y: same flat offsets) and Z[perm(logical idx)]
//   = v for a Transpose (Z's buffer in Z's shape). Prologue: a Load X[idx] becomes a Load of P's
//   data input at the same flat offset / the inverse-permuted index. Their other inputs (shape,
//   axes) are compile-time data and never become params.
// Buffers that no longer are params are removed from the kernel (indices remapped).

#include <algorithm>
#include <functional>
#include <set>

#include "core/lower/lower.h"
#include "core/lower/detail/lower_fused.h"
#include "core/lower/detail/lower_util.h"

namespace tessera::lower {

namespace {

using detail::LowerContext;

support::DiagnosticList groupError(const std::string& where, std::string message) {
    support::DiagnosticList d;
    d.error("", where, std::move(message));
    return d;
}

// ---- kernel-IR rewriting (trees are immutable: rebuilt bottom-up) ----

using ExprFn = std::function<Expr(const Expr&)>;

/// Rebuilds `e` with its arguments mapped first, then applies `f` to the (re)built node.
Expr mapExpr(const Expr& e, const ExprFn& f) {
    if (!e) return e;
    bool changed = false;
    std::vector<Expr> args;
    args.reserve(e->args.size());
    for (const Expr& a : e->args) {
        Expr m = mapExpr(a, f);
        changed = changed || m.get() != a.get();
        args.push_back(std::move(m));
    }
    Expr cur = e;
    if (changed) {
        auto node = std::make_shared<ExprNode>(*e);
        node->args = std::move(args);
        cur = Expr(std::move(node));
    }
    return f(cur);
}

/// Rebuilds a statement tree: every expression through `f`, then every Store (with its mapped
/// indices and value) through `storeFn` when given (a null result keeps the store).
Stmt mapStmt(const Stmt& s, const ExprFn& f, const std::function<Stmt(const StmtNode&)>& storeFn) {
    if (!s) return s;
    auto n = std::make_shared<StmtNode>(*s);
    for (Stmt& b : n->body) b = mapStmt(b, f, storeFn);
    n->elseBody = mapStmt(n->elseBody, f, storeFn);
    n->extent = mapExpr(n->extent, f);
    n->value = mapExpr(n->value, f);
    for (Expr& i : n->indices) i = mapExpr(i, f);
    if (n->mma) {
        MmaInfo m = *n->mma;
        for (Expr& e : m.a.base) e = mapExpr(e, f);
        for (Expr& e : m.b.base) e = mapExpr(e, f);
        m.lane = mapExpr(m.lane, f);
        n->mma = std::make_shared<const MmaInfo>(std::move(m));
    }
    if (n->kind == StmtKind::Store && storeFn) {
        if (Stmt r = storeFn(*n)) return r;
    }
    return n;
}

Expr identityFn(const Expr& e) { return e; }

/// Buffers a statement tree loads from (`loads`) and stores to / allocates (`writes`).
void collectBuffers(const Stmt& s, std::set<int>& loads, std::set<int>& writes) {
    const ExprFn visit = [&](const Expr& e) {
        if (e->kind == ExprKind::Load) loads.insert(e->buffer);
        return e;
    };
    mapStmt(s, visit, [&](const StmtNode& st) -> Stmt {
        writes.insert(st.buffer);
        return nullptr;
    });
    std::function<void(const Stmt&)> allocs = [&](const Stmt& t) {
        if (!t) return;
        if (t->kind == StmtKind::Allocate) writes.insert(t->buffer);
        if (t->kind == StmtKind::Mma && t->mma) {
            writes.insert(t->buffer);
            loads.insert(t->mma->a.buffer);
            loads.insert(t->mma->b.buffer);
        }
        for (const Stmt& b : t->body) allocs(b);
        allocs(t->elseBody);
    };
    allocs(s);
}

/// The index into a value of logical shape `logical` of the element that index `idx` addresses
/// in a dense row-major buffer of shape `buf` holding the same elements (templates often view
/// their tensors flattened, e.g. Conv's output as [N, M, H*W]). Dims are matched in groups of equal
/// extent products, so a merged dim is split with / and % and identical dims pass through.
std::vector<Expr> logicalIndex(const std::vector<Expr>& idx, const std::vector<std::int64_t>& buf,
                               const std::vector<std::int64_t>& logical) {
    if (buf == logical) return idx;
    std::vector<Expr> out(logical.size(), intImm(0));
    std::vector<std::size_t> bd, ld;  // dims of extent > 1
    for (std::size_t i = 0; i < buf.size(); ++i)
        if (buf[i] > 1) bd.push_back(i);
    for (std::size_t j = 0; j < logical.size(); ++j)
        if (logical[j] > 1) ld.push_back(j);
    std::size_t i = 0, j = 0;
    while (i < bd.size() && j < ld.size()) {
        std::vector<std::size_t> gb{bd[i++]}, gl{ld[j++]};
        std::int64_t pb = buf[gb[0]], pl = logical[gl[0]];
        while (pb != pl) {
            if (pb < pl && i < bd.size()) {
                gb.push_back(bd[i++]);
                pb *= buf[gb.back()];
            } else if (pl < pb && j < ld.size()) {
                gl.push_back(ld[j++]);
                pl *= logical[gl.back()];
            } else {
                break;  // cannot happen for equal element counts
            }
        }
        Expr linear = intImm(0);
        std::int64_t stride = 1;
        for (auto it = gb.rbegin(); it != gb.rend(); ++it) {
            linear = idx[*it] * stride + linear;
            stride *= buf[*it];
        }
        if (gl.size() == 1) {
            out[gl[0]] = linear;
            continue;
        }
        stride = 1;
        for (std::size_t q = gl.size(); q-- > 0;) {
            Expr v = stride == 1 ? linear : linear / intImm(stride);
            if (q > 0) v = v % intImm(logical[gl[q]]);
            out[gl[q]] = v;
            stride *= logical[gl[q]];
        }
    }
    return out;
}

std::int64_t elementCount(const std::vector<std::int64_t>& s) {
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
}

/// Index-map ops (Hidet's invertible injective ops that are not elementwise): Transpose and the
/// Reshape family. Default domain only.
bool isReshapeLike(const ir::Node& n) {
    return n.domain.empty() &&
           (n.opType == "Reshape" || n.opType == "Flatten" || n.opType == "Squeeze" || n.opType == "Unsqueeze");
}
bool isIndexMap(const ir::Node& n) { return isReshapeLike(n) || (n.domain.empty() && n.opType == "Transpose"); }

/// Transpose's permutation for an input of rank `rank` (output dim d = input dim perm[d]); empty
/// when the attribute is malformed.
std::vector<std::int64_t> transposePerm(const ir::Node& n, std::size_t rank) {
    const auto r = static_cast<std::int64_t>(rank);
    std::vector<std::int64_t> perm = n.attrInts("perm");
    if (perm.empty())
        for (std::int64_t d = r; d-- > 0;) perm.push_back(d);
    if (perm.size() != rank) return {};
    std::vector<bool> seen(rank, false);
    for (auto& p : perm) {
        if (p < 0) p += r;
        if (p < 0 || p >= r || seen[static_cast<std::size_t>(p)]) return {};
        seen[static_cast<std::size_t>(p)] = true;
    }
    return perm;
}

/// A param of the kernel being rewritten: the graph value and its buffer.
struct Param {
    ir::ValueId value = ir::kNoValue;
    int buffer = -1;
    bool added = false;  ///< added by the fusion rewrite (dropped again when never referenced)
};

/// The rewrite state of one group kernel.
class GroupRewriter {
public:
    GroupRewriter(const ir::Graph& g, LoweredKernel lk, std::vector<ir::NodeId> members, const LowerOptions& options,
                  std::string where)
        : m_g(g), m_lk(std::move(lk)), m_members(std::move(members)), m_options(options), m_where(std::move(where)) {
        const std::size_t ni = m_lk.inputs.size();
        for (std::size_t i = 0; i < m_lk.kernel.params.size(); ++i) {
            Param p;
            p.buffer = m_lk.kernel.params[i];
            if (i < ni) {
                p.value = m_lk.inputs[i];
                m_ins.push_back(p);
            } else {
                p.value = m_lk.outputs[i - ni];
                m_outs.push_back(p);
            }
        }
    }

    support::DiagnosticList applyPrologues(const std::vector<ir::NodeId>& prologues);
    support::DiagnosticList applyEpilogue(ir::NodeId e);
    support::Expected<LoweredKernel> finish();

private:
    support::DiagnosticList applyIndexMapPrologue(ir::NodeId p);
    support::DiagnosticList applyIndexMapEpilogue(ir::NodeId e);

private:
    bool isMember(ir::NodeId n) const { return std::find(m_members.begin(), m_members.end(), n) != m_members.end(); }
    /// True when v is read by a node outside the group or is a graph output.
    /// Why epilogue `eid` cannot rewrite the anchor's stores of `y` (kept in buffer `yBuf`, of
    /// logical shape `yShape`); empty when it can: the buffer holds the whole tensor, the kernel
    /// never reads it back, and no other member of the group uses it.
    support::DiagnosticList storeRewritable(ir::NodeId eid, ir::ValueId y, int yBuf,
                                            const std::vector<std::int64_t>& yShape) const;
    /// The concrete shapes of index-map node `nid`'s data input `in` and output `out` and, for a
    /// Transpose, its permutation (empty for the Reshape family); an error naming the node in its
    /// `role` ("prologue", "epilogue") when a shape is not concrete, the element count changes or
    /// the perm is malformed.
    support::DiagnosticList indexMapShapes(ir::NodeId nid, const char* role, ir::ValueId in, ir::ValueId out,
                                           std::vector<std::int64_t>& inShape, std::vector<std::int64_t>& outShape,
                                           std::vector<std::int64_t>& perm) const;
    bool usedOutside(ir::ValueId v) const {
        if (m_g.value(v).isGraphOutput) return true;
        for (ir::ValueId o : m_g.outputs())
            if (o == v) return true;
        for (ir::NodeId c : m_g.consumers(v))
            if (!isMember(c)) return true;
        return false;
    }
    std::string nodeLabel(ir::NodeId n) const { return "'" + m_g.node(n).name + "' (" + m_g.node(n).opType + ")"; }
    LowerContext contextOf(ir::NodeId n) const {
        return LowerContext{m_g, n, m_g.node(n), nullptr, m_options, m_where};
    }
    /// Buffer of input value v, added as a new Global input param at ins position `pos` (or at the
    /// end when pos < 0) unless it already is an input.
    support::Expected<int> inputBuffer(ir::ValueId v, int pos = -1) {
        for (const Param& p : m_ins)
            if (p.value == v) return p.buffer;
        const auto shape = detail::concreteShape(m_g, v);
        if (!shape) return groupError(m_where, "value '" + m_g.value(v).name + "' has no concrete shape");
        BufferDecl b;
        b.name = m_g.value(v).name;
        b.dtype = detail::dtypeOf(m_g, v);
        b.shape = *shape;
        b.scope = MemoryScope::Global;
        b.role = BufferRole::Input;
        Param p{v, m_lk.kernel.addBuffer(std::move(b)), true};
        if (pos < 0 || static_cast<std::size_t>(pos) > m_ins.size()) m_ins.push_back(p);
        else m_ins.insert(m_ins.begin() + pos, p);
        return p.buffer;
    }
    /// The index of operand buffer `buffer` (of logical shape `shape`) for the element at logical
    /// index `at` of the fused value, broadcast to the operand's shape. An operand that already
    /// is a param of the kernel (the anchor's own input read again by a residual Add) keeps the
    /// anchor's view of it (e.g. [N, C, H*W] of [N, C, H, W]): the index is mapped to that view.
    std::vector<Expr> operandIndex(const std::vector<Expr>& at, int buffer, const std::vector<std::int64_t>& shape) const {
        std::vector<Expr> idx = detail::broadcastIndex(at, shape);
        const std::vector<std::int64_t>& view = m_lk.kernel.buffers[static_cast<std::size_t>(buffer)].shape;
        return view == shape ? idx : logicalIndex(idx, shape, view);
    }
    int findIn(const std::vector<Param>& ps, ir::ValueId v) const {
        for (std::size_t i = 0; i < ps.size(); ++i)
            if (ps[i].value == v) return static_cast<int>(i);
        return -1;
    }

    const ir::Graph& m_g;
    LoweredKernel m_lk;
    std::vector<ir::NodeId> m_members;
    const LowerOptions& m_options;
    std::string m_where;
    std::vector<Param> m_ins, m_outs;
    std::vector<int> m_removed;  ///< buffers that stopped being params
};

support::DiagnosticList GroupRewriter::applyPrologues(const std::vector<ir::NodeId>& prologues) {
    std::vector<ir::NodeId> todo = prologues;
    while (!todo.empty()) {
        // The prologue whose output is an input of the kernel now (the one nearest the anchor).
        auto it = std::find_if(todo.begin(), todo.end(), [&](ir::NodeId p) {
            const ir::Node& n = m_g.node(p);
            return !n.outputs.empty() && n.outputs[0] != ir::kNoValue && findIn(m_ins, n.outputs[0]) >= 0;
        });
        if (it == todo.end())
            return groupError(m_where, "prologue " + nodeLabel(todo.front()) +
                                           " does not produce an input of the anchor's kernel (or of another prologue)");
        const ir::NodeId pid = *it;
        todo.erase(it);
        const ir::Node& pn = m_g.node(pid);
        if (isIndexMap(pn)) {
            if (auto d = applyIndexMapPrologue(pid); d.hasErrors()) return d;
            continue;
        }
        if (!detail::isInlinableElementwise(m_g, pid))
            return groupError(m_where, "prologue " + nodeLabel(pid) +
                                           " is neither an elementwise op that can be inlined nor an index map (Transpose, Reshape family)");
        const ir::ValueId x = pn.outputs[0];
        if (usedOutside(x))
            return groupError(m_where, "prologue " + nodeLabel(pid) + ": its output '" + m_g.value(x).name +
                                           "' is used outside the group");
        const int pos = findIn(m_ins, x);
        const int xBuf = m_ins[static_cast<std::size_t>(pos)].buffer;
        const auto xShape = detail::concreteShape(m_g, x);
        if (!xShape) return groupError(m_where, "value '" + m_g.value(x).name + "' has no concrete shape");
        const std::vector<std::int64_t> xBufShape = m_lk.kernel.buffers[static_cast<std::size_t>(xBuf)].shape;
        if (elementCount(xBufShape) != elementCount(*xShape))
            return groupError(m_where, "prologue " + nodeLabel(pid) + ": the kernel's buffer of '" + m_g.value(x).name +
                                           "' does not hold the whole tensor");
        m_removed.push_back(xBuf);
        m_ins.erase(m_ins.begin() + pos);
        // P's inputs take X's place (in slot order).
        struct Operand {
            int buffer = -1;
            DType dtype = DType::Undefined;
            std::vector<std::int64_t> shape;
        };
        std::vector<Operand> operands(pn.inputs.size());
        int insertAt = pos;
        for (std::size_t s = 0; s < pn.inputs.size(); ++s) {
            const ir::ValueId v = pn.inputs[s];
            if (v == ir::kNoValue) continue;
            const auto sh = detail::concreteShape(m_g, v);
            if (!sh) return groupError(m_where, "value '" + m_g.value(v).name + "' has no concrete shape");
            if (sh->size() > xShape->size())
                return groupError(m_where, "prologue " + nodeLabel(pid) + ": input '" + m_g.value(v).name +
                                               "' has a higher rank than its output");
            const bool existed = findIn(m_ins, v) >= 0;
            auto b = inputBuffer(v, insertAt);
            if (!b) return b.diagnostics();
            if (!existed) ++insertAt;
            operands[s] = Operand{*b, detail::dtypeOf(m_g, v), *sh};
        }
        const LowerContext ctx = contextOf(pid);
        support::DiagnosticList errors;
        m_lk.kernel.body = mapStmt(
            m_lk.kernel.body,
            [&](const Expr& e) -> Expr {
                if (e->kind != ExprKind::Load || e->buffer != xBuf) return e;
                std::vector<Expr> ins(pn.inputs.size());
                const std::vector<Expr> at = logicalIndex(e->args, xBufShape, *xShape);
                for (std::size_t s = 0; s < operands.size(); ++s)
                    if (operands[s].buffer >= 0)
                        ins[s] = load(operands[s].buffer, operands[s].dtype, operandIndex(at, operands[s].buffer, operands[s].shape));
                auto r = detail::elementwiseExpr(ctx, ins);
                if (!r) {
                    errors.append(r.diagnostics());
                    return e;
                }
                return cast(*r, e->dtype);
            },
            nullptr);
        if (errors.hasErrors()) return errors;
        m_lk.kernel.notes.push_back("fused: prologue " + pn.name + " (" + pn.opType + ") inlined into the loads of '" +
                                    m_g.value(x).name + "'");
    }
    return {};
}

support::DiagnosticList GroupRewriter::applyIndexMapPrologue(ir::NodeId pid) {
    const ir::Node& pn = m_g.node(pid);
    const ir::ValueId x = pn.outputs[0];
    const ir::ValueId a = pn.inputs.empty() ? ir::kNoValue : pn.inputs[0];
    if (a == ir::kNoValue) return groupError(m_where, "prologue " + nodeLabel(pid) + " has no data input");
    if (usedOutside(x))
        return groupError(m_where, "prologue " + nodeLabel(pid) + ": its output '" + m_g.value(x).name +
                                       "' is used outside the group");
    std::vector<std::int64_t> aShape, xShape, perm;
    if (auto bad = indexMapShapes(pid, "prologue", a, x, aShape, xShape, perm); !bad.empty()) return bad;
    const int pos = findIn(m_ins, x);
    const int xBuf = m_ins[static_cast<std::size_t>(pos)].buffer;
    const std::vector<std::int64_t> xBufShape = m_lk.kernel.buffers[static_cast<std::size_t>(xBuf)].shape;
    if (elementCount(xBufShape) != elementCount(xShape))
        return groupError(m_where, "prologue " + nodeLabel(pid) + ": the kernel's buffer of '" + m_g.value(x).name +
                                       "' does not hold the whole tensor");
    m_removed.push_back(xBuf);
    m_ins.erase(m_ins.begin() + pos);
    // Only the data input becomes a param: Reshape's shape and Squeeze's axes are compile-time data.
    auto aBuf = inputBuffer(a, pos);
    if (!aBuf) return aBuf.diagnostics();
    const DType aType = detail::dtypeOf(m_g, a);
    m_lk.kernel.body = mapStmt(
        m_lk.kernel.body,
        [&](const Expr& e) -> Expr {
            if (e->kind != ExprKind::Load || e->buffer != xBuf) return e;
            std::vector<Expr> at;
            if (perm.empty()) {
                // Same flat row-major offset in A's shape.
                at = logicalIndex(e->args, xBufShape, aShape);
            } else {
                const std::vector<Expr> xi = logicalIndex(e->args, xBufShape, xShape);
                at.assign(xi.size(), intImm(0));
                for (std::size_t d = 0; d < xi.size(); ++d) at[static_cast<std::size_t>(perm[d])] = xi[d];
            }
            return cast(load(*aBuf, aType, at), e->dtype);
        },
        nullptr);
    m_lk.kernel.notes.push_back("fused: prologue " + pn.name + " (" + pn.opType + ") folded into the load indices of '" +
                                m_g.value(x).name + "'");
    return {};
}

support::DiagnosticList GroupRewriter::indexMapShapes(ir::NodeId nid, const char* role, ir::ValueId in, ir::ValueId out,
                                                     std::vector<std::int64_t>& inShape, std::vector<std::int64_t>& outShape,
                                                     std::vector<std::int64_t>& perm) const {
    const std::string who = std::string(role) + " " + nodeLabel(nid);
    const auto is = detail::concreteShape(m_g, in);
    const auto os = detail::concreteShape(m_g, out);
    if (!is || !os) return groupError(m_where, who + ": shapes are not concrete");
    if (elementCount(*is) != elementCount(*os)) return groupError(m_where, who + " changes the element count: it is not an index map");
    inShape = *is;
    outShape = *os;
    perm.clear();
    if (!isReshapeLike(m_g.node(nid))) {
        perm = transposePerm(m_g.node(nid), inShape.size());
        if (perm.empty()) return groupError(m_where, who + ": perm is not a permutation of the input's axes");
    }
    return {};
}

support::DiagnosticList GroupRewriter::storeRewritable(ir::NodeId eid, ir::ValueId y, int yBuf,
                                                      const std::vector<std::int64_t>& yShape) const {
    const std::vector<std::int64_t>& yBufShape = m_lk.kernel.buffers[static_cast<std::size_t>(yBuf)].shape;
    if (elementCount(yBufShape) != elementCount(yShape))
        return groupError(m_where, "epilogue " + nodeLabel(eid) + ": the kernel's buffer of '" + m_g.value(y).name +
                                       "' does not hold the whole tensor");
    std::set<int> loads, writes;
    collectBuffers(m_lk.kernel.body, loads, writes);
    if (loads.count(yBuf))
        return groupError(m_where, "epilogue " + nodeLabel(eid) + ": the kernel reads back its output '" +
                                       m_g.value(y).name + "' (accumulates in place), so the store cannot be rewritten");
    for (ir::NodeId c : m_g.consumers(y))
        if (c != eid && isMember(c))
            return groupError(m_where, "epilogue " + nodeLabel(eid) + ": '" + m_g.value(y).name +
                                           "' has another use inside the group (" + nodeLabel(c) + ")");
    return {};
}

support::DiagnosticList GroupRewriter::applyIndexMapEpilogue(ir::NodeId eid) {
    const ir::Node& en = m_g.node(eid);
    const ir::ValueId y = en.inputs.empty() ? ir::kNoValue : en.inputs[0];
    const int yPos = y == ir::kNoValue ? -1 : findIn(m_outs, y);
    if (yPos < 0) return groupError(m_where, "epilogue " + nodeLabel(eid) + " reads no output of the anchor's kernel as its data input");
    for (std::size_t s = 1; s < en.inputs.size(); ++s) {
        const ir::ValueId v = en.inputs[s];
        if (v != ir::kNoValue && !m_g.value(v).data)
            return groupError(m_where, "epilogue " + nodeLabel(eid) + ": input '" + m_g.value(v).name + "' is not a constant");
    }
    const ir::ValueId z = en.outputs[0];
    std::vector<std::int64_t> yShape, zShape, perm;
    if (auto bad = indexMapShapes(eid, "epilogue", y, z, yShape, zShape, perm); !bad.empty()) return bad;
    const int yBuf = m_outs[static_cast<std::size_t>(yPos)].buffer;
    if (auto refused = storeRewritable(eid, y, yBuf, yShape); !refused.empty()) return refused;
    // A copy: adding the output's buffer below may reallocate the buffer list.
    const std::vector<std::int64_t> yBufShape = m_lk.kernel.buffers[static_cast<std::size_t>(yBuf)].shape;
    const bool keepY = usedOutside(y);
    // The Reshape family keeps every element at its flat offset, so Z is stored through the
    // anchor's own view (same indices, no index arithmetic); a Transpose stores Z in its own shape
    // at the permuted logical index.
    BufferDecl zb;
    zb.name = m_g.value(z).name;
    zb.dtype = detail::dtypeOf(m_g, z);
    zb.shape = perm.empty() ? yBufShape : zShape;
    zb.scope = MemoryScope::Global;
    zb.role = BufferRole::Output;
    const DType zType = zb.dtype;
    const int zBuf = m_lk.kernel.addBuffer(std::move(zb));
    if (keepY) {
        m_outs.insert(m_outs.begin() + yPos + 1, Param{z, zBuf, false});
    } else {
        m_removed.push_back(yBuf);
        m_outs[static_cast<std::size_t>(yPos)] = Param{z, zBuf, false};
    }
    const DType yType = m_lk.kernel.buffers[static_cast<std::size_t>(yBuf)].dtype;
    Kernel& k = m_lk.kernel;
    k.body = mapStmt(k.body, identityFn, [&](const StmtNode& st) -> Stmt {
        if (st.buffer != yBuf) return nullptr;
        std::vector<Expr> zi = st.indices;
        if (!perm.empty()) {
            // The logical index may have more dims than the kernel's view of Y (a [B*H, M, N]
            // view of a [B, H, M, N] tensor): Z's index is built at the logical rank.
            const std::vector<Expr> yi = logicalIndex(st.indices, yBufShape, yShape);
            zi.assign(yi.size(), intImm(0));
            for (std::size_t d = 0; d < yi.size(); ++d) zi[d] = yi[static_cast<std::size_t>(perm[d])];
        }
        if (!keepY) return store(zBuf, zi, cast(st.value, zType));
        const Var t = k.newVar("y", yType);
        const Expr tv = varRef(t);
        return let(t, cast(st.value, yType), seq({store(yBuf, st.indices, tv), store(zBuf, zi, cast(tv, zType))}));
    });
    k.notes.push_back("fused: epilogue " + en.name + " (" + en.opType + ") maps the stores of '" + m_g.value(y).name +
                      "' to '" + m_g.value(z).name + "'" + (perm.empty() ? " (same flat offset)" : " (permuted indices)"));
    return {};
}

support::DiagnosticList GroupRewriter::applyEpilogue(ir::NodeId eid) {
    const ir::Node& en = m_g.node(eid);
    if (isIndexMap(en)) return applyIndexMapEpilogue(eid);
    if (!detail::isInlinableElementwise(m_g, eid))
        return groupError(m_where, "epilogue " + nodeLabel(eid) +
                                       " is neither an elementwise op that can be inlined nor an index map (Transpose, Reshape family)");
    // The kernel output it reads.
    ir::ValueId y = ir::kNoValue;
    for (ir::ValueId v : en.inputs) {
        if (v == ir::kNoValue || findIn(m_outs, v) < 0) continue;
        if (y != ir::kNoValue && y != v)
            return groupError(m_where, "epilogue " + nodeLabel(eid) + " reads two outputs of the kernel");
        y = v;
    }
    if (y == ir::kNoValue)
        return groupError(m_where, "epilogue " + nodeLabel(eid) + " reads no output of the anchor's kernel");
    const ir::ValueId z = en.outputs[0];
    const auto yShape = detail::concreteShape(m_g, y);
    const auto zShape = detail::concreteShape(m_g, z);
    if (!yShape || !zShape) return groupError(m_where, "epilogue " + nodeLabel(eid) + ": shapes are not concrete");
    if (*yShape != *zShape)
        return groupError(m_where, "epilogue " + nodeLabel(eid) + " broadcasts '" + m_g.value(y).name +
                                       "' to a larger shape: it does not read it at its full shape");
    const int yPos = findIn(m_outs, y);
    const int yBuf = m_outs[static_cast<std::size_t>(yPos)].buffer;
    if (auto refused = storeRewritable(eid, y, yBuf, *yShape); !refused.empty()) return refused;
    // A copy: adding the output's buffer below may reallocate the buffer list.
    const std::vector<std::int64_t> yBufShape = m_lk.kernel.buffers[static_cast<std::size_t>(yBuf)].shape;
    const bool keepY = usedOutside(y);
    // The other operands, at the store's index broadcast.
    struct Operand {
        int buffer = -1;  ///< -1: absent; -2: the stored value
        DType dtype = DType::Undefined;
        std::vector<std::int64_t> shape;
    };
    std::vector<Operand> operands(en.inputs.size());
    for (std::size_t s = 0; s < en.inputs.size(); ++s) {
        const ir::ValueId v = en.inputs[s];
        if (v == ir::kNoValue) continue;
        if (v == y) {
            operands[s].buffer = -2;
            continue;
        }
        const ir::NodeId prod = m_g.producer(v);
        if (prod != ir::kNoNode && isMember(prod))
            return groupError(m_where, "epilogue " + nodeLabel(eid) + ": input '" + m_g.value(v).name +
                                           "' is computed inside the group");
        const auto sh = detail::concreteShape(m_g, v);
        if (!sh) return groupError(m_where, "value '" + m_g.value(v).name + "' has no concrete shape");
        if (sh->size() > zShape->size())
            return groupError(m_where, "epilogue " + nodeLabel(eid) + ": input '" + m_g.value(v).name +
                                           "' has a higher rank than its output");
        auto b = inputBuffer(v);
        if (!b) return b.diagnostics();
        operands[s] = Operand{*b, detail::dtypeOf(m_g, v), *sh};
    }
    // Z replaces Y among the outputs (Y stays before it when it is used outside the group).
    BufferDecl zb;
    zb.name = m_g.value(z).name;
    zb.dtype = detail::dtypeOf(m_g, z);
    zb.shape = yBufShape;  // stored with the anchor's indices (its view of Y)
    zb.scope = MemoryScope::Global;
    zb.role = BufferRole::Output;
    const DType yType = m_lk.kernel.buffers[static_cast<std::size_t>(yBuf)].dtype;
    const int zBuf = m_lk.kernel.addBuffer(std::move(zb));
    if (keepY) {
        m_outs.insert(m_outs.begin() + yPos + 1, Param{z, zBuf, false});
    } else {
        m_removed.push_back(yBuf);
        m_outs[static_cast<std::size_t>(yPos)] = Param{z, zBuf, false};
    }
    const LowerContext ctx = contextOf(eid);
    const DType zType = detail::dtypeOf(m_g, z);
    support::DiagnosticList errors;
    Kernel& k = m_lk.kernel;
    k.body = mapStmt(k.body, identityFn, [&](const StmtNode& st) -> Stmt {
        if (st.buffer != yBuf) return nullptr;
        const Var t = k.newVar("y", yType);
        const Expr tv = varRef(t);
        std::vector<Expr> ins(en.inputs.size());
        std::vector<Expr> at;
        for (std::size_t s = 0; s < operands.size(); ++s) {
            if (operands[s].buffer == -2) {
                ins[s] = tv;
            } else if (operands[s].buffer >= 0) {
                if (at.empty()) at = logicalIndex(st.indices, yBufShape, *zShape);
                ins[s] = load(operands[s].buffer, operands[s].dtype, operandIndex(at, operands[s].buffer, operands[s].shape));
            }
        }
        auto r = detail::elementwiseExpr(ctx, ins);
        if (!r) {
            errors.append(r.diagnostics());
            return nullptr;
        }
        std::vector<Stmt> body;
        if (keepY) body.push_back(store(yBuf, st.indices, tv));
        body.push_back(store(zBuf, st.indices, cast(*r, zType)));
        return let(t, cast(st.value, yType), seq(std::move(body)));
    });
    if (errors.hasErrors()) return errors;
    k.notes.push_back("fused: epilogue " + en.name + " (" + en.opType + ") inlined into the stores of '" +
                      m_g.value(y).name + "'");
    return {};
}

support::Expected<LoweredKernel> GroupRewriter::finish() {
    Kernel& k = m_lk.kernel;
    std::set<int> loads, writes;
    collectBuffers(k.body, loads, writes);
    auto referenced = [&](int b) { return loads.count(b) > 0 || writes.count(b) > 0; };
    std::vector<int> drop = m_removed;
    std::erase_if(m_ins, [&](const Param& p) {
        if (p.added && !referenced(p.buffer)) {
            drop.push_back(p.buffer);
            return true;
        }
        return false;
    });
    for (int b : drop)
        if (referenced(b))
            return groupError(m_where, "internal error: buffer '" + k.buffers[static_cast<std::size_t>(b)].name +
                                           "' is still used after the fusion rewrite");
    // Compact the buffer list.
    std::vector<int> remap(k.buffers.size(), -1);
    std::vector<BufferDecl> kept;
    for (std::size_t b = 0; b < k.buffers.size(); ++b) {
        if (std::find(drop.begin(), drop.end(), static_cast<int>(b)) != drop.end()) continue;
        remap[b] = static_cast<int>(kept.size());
        kept.push_back(k.buffers[b]);
    }
    k.buffers = std::move(kept);
    auto re = [&](int b) { return b >= 0 ? remap[static_cast<std::size_t>(b)] : b; };
    k.body = mapStmt(
        k.body,
        [&](const Expr& e) -> Expr {
            if (e->kind != ExprKind::Load || re(e->buffer) == e->buffer) return e;
            auto n = std::make_shared<ExprNode>(*e);
            n->buffer = re(e->buffer);
            return Expr(std::move(n));
        },
        [&](const StmtNode& st) -> Stmt {
            if (re(st.buffer) == st.buffer) return nullptr;
            auto n = std::make_shared<StmtNode>(st);
            n->buffer = re(st.buffer);
            return n;
        });
    // Allocate statements are not Stores: remap them separately.
    std::function<Stmt(const Stmt&)> allocs = [&](const Stmt& s) -> Stmt {
        if (!s) return s;
        auto n = std::make_shared<StmtNode>(*s);
        for (Stmt& b : n->body) b = allocs(b);
        n->elseBody = allocs(n->elseBody);
        if (n->kind == StmtKind::Allocate) n->buffer = re(n->buffer);
        return n;
    };
    k.body = allocs(k.body);
    k.params.clear();
    m_lk.inputs.clear();
    m_lk.outputs.clear();
    for (const Param& p : m_ins) {
        k.params.push_back(re(p.buffer));
        m_lk.inputs.push_back(p.value);
    }
    for (const Param& p : m_outs) {
        k.params.push_back(re(p.buffer));
        m_lk.outputs.push_back(p.value);
    }
    return std::move(m_lk);
}

std::string joinNames(const ir::Graph& g, const std::vector<ir::NodeId>& ids) {
    std::string s;
    for (ir::NodeId id : ids) s += (s.empty() ? "" : ", ") + g.node(id).name;
    return s;
}

}  // namespace

namespace detail {

support::Expected<LoweredKernel> fuseIntoKernel(const ir::Graph& g, LoweredKernel base,
                                                const std::vector<ir::NodeId>& members,
                                                const std::vector<ir::NodeId>& prologue,
                                                const std::vector<ir::NodeId>& epilogue, const LowerOptions& options,
                                                const std::string& where) {
    GroupRewriter rw(g, std::move(base), members, options, where);
    if (auto d = rw.applyPrologues(prologue); d.hasErrors()) return d;
    for (ir::NodeId e : epilogue)
        if (auto d = rw.applyEpilogue(e); d.hasErrors()) return d;
    return rw.finish();
}

}  // namespace detail

support::Expected<LoweredKernel> lowerGroup(const ir::Graph& g, const schedule::FusionGroup& group,
                                            const ir::KernelScheduleDecl* schedule, const LowerOptions& options) {
    const std::string where = "group '" + group.name + "'";
    if (group.ops.empty()) return groupError(where, "the group has no ops");
    auto find = [&](const std::string& name) -> support::Expected<ir::NodeId> {
        const ir::NodeId id = g.findNode(name);
        if (id == ir::kNoNode) return groupError(where, "member '" + name + "' is not in the graph");
        return id;
    };
    std::vector<ir::NodeId> members;
    for (const std::string& name : group.ops) {
        auto id = find(name);
        if (!id) return id.diagnostics();
        members.push_back(*id);
    }
    auto findList = [&](const std::vector<std::string>& names) -> support::Expected<std::vector<ir::NodeId>> {
        std::vector<ir::NodeId> r;
        for (const std::string& name : names) {
            if (!group.contains(name)) return groupError(where, "'" + name + "' is not a member of the group");
            auto id = find(name);
            if (!id) return id.diagnostics();
            r.push_back(*id);
        }
        return r;
    };
    auto prologues = findList(group.prologue);
    if (!prologues) return prologues.diagnostics();
    // Epilogues in the group's (topological) order.
    std::vector<ir::NodeId> epilogues;
    for (ir::NodeId m : members)
        if (std::find(group.epilogue.begin(), group.epilogue.end(), g.node(m).name) != group.epilogue.end())
            epilogues.push_back(m);
    if (epilogues.size() != group.epilogue.size())
        return groupError(where, "an epilogue op is not a member of the group");

    const std::string anchorName = group.anchor.empty() ? group.ops.front() : group.anchor;
    if (!group.contains(anchorName)) return groupError(where, "the anchor '" + anchorName + "' is not a member");
    auto anchor = find(anchorName);
    if (!anchor) return anchor.diagnostics();

    if (group.kind == schedule::FusionKind::Single) {
        if (members.size() != 1) return groupError(where, "a single group must have exactly one op");
        return lowerNode(g, *anchor, schedule, options);
    }

    support::Expected<LoweredKernel> base = groupError(where, "unreachable");
    if (group.kind == schedule::FusionKind::PrologueEpilogue) {
        for (ir::NodeId m : members) {
            const std::string& nm = g.node(m).name;
            const bool isPro = std::find(group.prologue.begin(), group.prologue.end(), nm) != group.prologue.end();
            const bool isEpi = std::find(group.epilogue.begin(), group.epilogue.end(), nm) != group.epilogue.end();
            if (m != *anchor && !isPro && !isEpi)
                return groupError(where, "member '" + nm + "' is neither the anchor, a prologue nor an epilogue");
        }
        base = lowerNode(g, *anchor, schedule, options);
        if (!base) {
            support::DiagnosticList d = groupError(where, "lowering the anchor '" + anchorName + "' failed");
            d.append(base.diagnostics());
            return d;
        }
    } else if (group.kind == schedule::FusionKind::Attention) {
        // The core is every member that is neither a prologue nor an epilogue; it must be the
        // attention pattern at the anchor exactly.
        std::string why;
        const schedule::AttentionPattern pattern = schedule::matchAttention(g, *anchor, &why);
        if (!pattern.ok()) return groupError(where, "not an attention pattern at '" + anchorName + "': " + why);
        std::vector<ir::NodeId> core;
        for (ir::NodeId m : members) {
            const std::string& nm = g.node(m).name;
            if (std::find(group.prologue.begin(), group.prologue.end(), nm) == group.prologue.end() &&
                std::find(group.epilogue.begin(), group.epilogue.end(), nm) == group.epilogue.end())
                core.push_back(m);
        }
        std::vector<ir::NodeId> want = pattern.core();
        std::sort(core.begin(), core.end());
        std::sort(want.begin(), want.end());
        if (core != want)
            return groupError(where, "the members that are neither prologue nor epilogue are not the attention core at '" +
                                         anchorName + "'");
        base = detail::lowerAttention(g, pattern, options, where);
        if (!base) return base.diagnostics();
    } else {
        // Conv chain: first conv (the anchor), the elementwise ops between, the second conv.
        detail::ConvChainSpec spec;
        spec.kind = group.kind;
        spec.tile = group.tile;
        spec.first = *anchor;
        for (ir::NodeId m : members) {
            if (m == *anchor) continue;
            const std::string& nm = g.node(m).name;
            if (std::find(group.epilogue.begin(), group.epilogue.end(), nm) != group.epilogue.end()) continue;
            if (std::find(group.prologue.begin(), group.prologue.end(), nm) != group.prologue.end())
                return groupError(where, "conv-chain groups take no prologue ('" + nm + "')");
            if (g.node(m).opType == "Conv") {
                if (spec.second != ir::kNoNode)
                    return groupError(where, "conv chain with more than two convolutions ('" + nm + "')");
                spec.second = m;
            } else {
                if (spec.second != ir::kNoNode)
                    return groupError(where, "'" + nm + "' follows the second convolution but is not an epilogue");
                spec.between.push_back(m);
            }
        }
        if (g.node(*anchor).opType != "Conv" || spec.second == ir::kNoNode)
            return groupError(where, "a conv-chain group needs two convolutions (the anchor first)");
        base = detail::lowerConvChain(g, spec, options, where);
        if (!base) return base.diagnostics();
    }

    auto lk = detail::fuseIntoKernel(g, std::move(*base), members, *prologues, epilogues, options, where);
    if (!lk) return lk.diagnostics();
    Kernel& k = lk->kernel;
    if (options.kernelName.empty()) k.name += "_fused";
    k.sourceOps = group.ops;
    k.opType = g.node(*anchor).opType;
    std::string summary = "fused (" + std::string(schedule::fusionKindName(group.kind)) + "): anchor " + anchorName;
    if (!prologues->empty()) summary += "; prologue " + joinNames(g, *prologues);
    if (!epilogues.empty()) summary += "; epilogue " + joinNames(g, epilogues);
    k.notes.insert(k.notes.begin(), summary);
    return lk;
}

}  // namespace tessera::lower
