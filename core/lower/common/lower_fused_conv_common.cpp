// Shared parts of the fused convolution-chain lowerings (lower_fused_conv_common.h): reading and
// checking the two convolutions and the elementwise ops between them, the chain kernel's
// parameters, and lowerConvChain, which hands a checked chain to the target's lowering.

#include "core/lower/detail/lower_fused_conv_common.h"

#include <optional>

namespace tessera::lower::detail {

namespace {

using schedule::FusionKind;

support::Expected<ChainConv> readConv(const ir::Graph& g, ir::NodeId id, const LowerOptions& options,
                                      const std::string& where) {
    if (id == ir::kNoNode || id < 0 || static_cast<std::size_t>(id) >= g.numNodes())
        return chainError(where, "conv chain: a member node is missing");
    const ir::Node& n = g.node(id);
    const LowerContext ctx{g, id, n, nullptr, options, where};
    if (n.opType != "Conv" || !(n.domain.empty() || n.domain == "ai.onnx"))
        return lowerError(ctx, "conv chain: '" + n.name + "' is a " + n.opType + ", not a Conv");
    if (n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.empty() || n.outputs[0] == ir::kNoValue)
        return lowerError(ctx, "conv chain: '" + n.name + "' needs inputs X, W, optional B and one output");
    ChainConv c;
    c.id = id;
    c.x = n.inputs[0];
    c.w = n.inputs[1];
    c.b = n.inputs.size() == 3 ? n.inputs[2] : ir::kNoValue;
    c.y = n.outputs[0];
    for (ir::ValueId v : {c.x, c.w, c.b, c.y}) {
        if (v == ir::kNoValue) continue;
        if (dtypeOf(g, v) != DType::F32)
            return lowerError(ctx, "conv chain: '" + n.name + "': only f32 tensors are fused (value '" + g.value(v).name +
                                       "' is " + std::string(ir::dtypeName(dtypeOf(g, v))) + ")");
    }
    auto xs = shapeOf(ctx, c.x);
    if (!xs) return xs.diagnostics();
    auto ws = shapeOf(ctx, c.w);
    if (!ws) return ws.diagnostics();
    auto ys = shapeOf(ctx, c.y);
    if (!ys) return ys.diagnostics();
    c.xs = *xs;
    c.ws = *ws;
    c.ys = *ys;
    if (c.xs.size() != 4 || c.ws.size() != 4 || c.ys.size() != 4)
        return lowerError(ctx, "conv chain: '" + n.name + "' is not a 2-D NCHW conv (X " + chainDimsText(c.xs) + ")");
    if (c.b != ir::kNoValue) {
        auto bs = shapeOf(ctx, c.b);
        if (!bs) return bs.diagnostics();
        if (*bs != std::vector<std::int64_t>{c.ws[0]})
            return lowerError(ctx, "conv chain: '" + n.name + "': bias must have shape [" + std::to_string(c.ws[0]) + "]");
    }
    const std::vector<std::int64_t> kernel{c.ws[2], c.ws[3]};
    if (n.attrInts("kernel_shape", kernel) != kernel)
        return lowerError(ctx, "conv chain: '" + n.name + "': kernel_shape differs from W's " + chainDimsText(kernel));
    auto geom = windowGeometry(ctx, {c.xs[2], c.xs[3]}, kernel, false);
    if (!geom) return geom.diagnostics();
    c.geom = *geom;
    const std::int64_t G = n.attrInt("group", 1), C = c.xs[1], M = c.ws[0];
    if (c.ys != std::vector<std::int64_t>{c.xs[0], M, c.geom.out[0], c.geom.out[1]})
        return lowerError(ctx, "conv chain: '" + n.name + "': output shape " + chainDimsText(c.ys) + " does not match");
    c.depthwise = G == C && M == C && c.ws[1] == 1 && C > 1;
    c.pointwise = G == 1 && c.ws[1] == C && kernel == std::vector<std::int64_t>{1, 1};
    for (int i = 0; i < 2; ++i)
        c.pointwise = c.pointwise && c.geom.s[i] == 1 && c.geom.pb[i] == 0 && c.geom.pe[i] == 0;
    return c;
}

}  // namespace

std::string chainDimsText(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

support::DiagnosticList chainError(const std::string& where, std::string message) {
    support::DiagnosticList d;
    d.error("", where, std::move(message));
    return d;
}

support::Expected<ConvChainInfo> validateConvChain(const ir::Graph& g, const ConvChainSpec& chain,
                                                   const LowerOptions& options, const std::string& where) {
    if (!schedule::isConvChain(chain.kind))
        return chainError(where, std::string("conv chain: kind '") + schedule::fusionKindName(chain.kind) +
                                     "' is not a convolution chain");
    auto f = readConv(g, chain.first, options, where);
    if (!f) return f.diagnostics();
    auto s = readConv(g, chain.second, options, where);
    if (!s) return s.diagnostics();
    ConvChainInfo info;
    info.A = std::move(*f);
    info.B = std::move(*s);
    const ChainConv& A = info.A;
    const ChainConv& B = info.B;
    const ir::Node& nodeA = g.node(A.id);
    const ir::Node& nodeB = g.node(B.id);
    const bool firstDw = chain.kind == FusionKind::DwPw;
    const bool secondDw = chain.kind == FusionKind::PwDw;
    info.firstDw = firstDw;
    info.secondDw = secondDw;
    if (firstDw ? !A.depthwise : !A.pointwise)
        return chainError(where, "conv chain (" + std::string(schedule::fusionKindName(chain.kind)) + "): '" + nodeA.name +
                                     "' is not a " + (firstDw ? "depthwise (group = channels, multiplier 1)" : "pointwise (1x1, stride 1, no padding, group 1)") +
                                     " conv");
    if (secondDw ? !B.depthwise : !B.pointwise)
        return chainError(where, "conv chain (" + std::string(schedule::fusionKindName(chain.kind)) + "): '" + nodeB.name +
                                     "' is not a " + (secondDw ? "depthwise (group = channels, multiplier 1)" : "pointwise (1x1, stride 1, no padding, group 1)") +
                                     " conv");

    // The between ops: each reads the previous value through exactly one slot.
    ir::ValueId cur = A.y;
    for (ir::NodeId b : chain.between) {
        if (b == ir::kNoNode || b < 0 || static_cast<std::size_t>(b) >= g.numNodes())
            return chainError(where, "conv chain: a between node is missing");
        const ir::Node& bn = g.node(b);
        if (!isInlinableElementwise(g, b))
            return chainError(where, "conv chain: '" + bn.name + "' (" + bn.opType + ") between the convs is not an inlinable elementwise op");
        int slot = -1;
        for (std::size_t i = 0; i < bn.inputs.size(); ++i) {
            if (bn.inputs[i] == cur) {
                if (slot >= 0)
                    return chainError(where, "conv chain: '" + bn.name + "' reads the intermediate through several inputs");
                slot = static_cast<int>(i);
            } else if (bn.inputs[i] != ir::kNoValue && !g.value(bn.inputs[i]).data) {
                return chainError(where, "conv chain: '" + bn.name + "' reads another tensor ('" + g.value(bn.inputs[i]).name +
                                             "') besides the intermediate");
            }
        }
        if (slot < 0) return chainError(where, "conv chain: '" + bn.name + "' does not read the previous value of the chain");
        if (bn.outputs.empty() || concreteShape(g, bn.outputs[0]) != std::optional<std::vector<std::int64_t>>(A.ys))
            return chainError(where, "conv chain: '" + bn.name + "' does not keep the intermediate's shape " + chainDimsText(A.ys));
        if (dtypeOf(g, bn.outputs[0]) != DType::F32)
            return chainError(where, "conv chain: '" + bn.name + "': only f32 intermediates are fused");
        info.betweenSlot.push_back(static_cast<std::size_t>(slot));
        cur = bn.outputs[0];
    }
    if (B.x != cur)
        return chainError(where, "conv chain: '" + nodeB.name + "' does not consume the output of '" +
                                     (chain.between.empty() ? nodeA.name : g.node(chain.between.back()).name) + "'");

    info.N = A.xs[0];
    info.C = A.xs[1];
    info.H = A.xs[2];
    info.W = A.xs[3];
    info.Cm = A.ys[1];
    info.H1 = A.ys[2];
    info.W1 = A.ys[3];
    info.K = B.ys[1];
    info.H2 = B.ys[2];
    info.W2 = B.ys[3];
    if (B.xs[0] != info.N || B.xs[1] != info.Cm || B.xs[2] != info.H1 || B.xs[3] != info.W1)
        return chainError(where, "conv chain: the second conv's input " + chainDimsText(B.xs) + " differs from " + chainDimsText(A.ys));
    return info;
}

support::Expected<ChainKernel> beginChainKernel(const ir::Graph& g, const ConvChainSpec& chain, const ConvChainInfo& info,
                                                const LowerOptions& options, const std::string& where) {
    const ChainConv& A = info.A;
    const ChainConv& B = info.B;
    const ir::Node& nodeA = g.node(A.id);
    const ir::Node& nodeB = g.node(B.id);
    const LowerContext ctxA{g, A.id, nodeA, nullptr, options, where};
    ChainKernel ck;
    ck.lk = beginKernel(ctxA);
    ck.X = addInput(ctxA, ck.lk, A.x);
    ck.W1b = addInput(ctxA, ck.lk, A.w);
    ck.B1b = A.b != ir::kNoValue ? addInput(ctxA, ck.lk, A.b) : -1;
    ck.W2b = addInput(ctxA, ck.lk, B.w);
    ck.B2b = B.b != ir::kNoValue ? addInput(ctxA, ck.lk, B.b) : -1;
    ck.Yb = addOutput(ctxA, ck.lk, B.y);
    Kernel& k = ck.lk.kernel;
    k.sourceOps.clear();
    k.sourceOps.push_back(nodeA.name);
    for (ir::NodeId b : chain.between) k.sourceOps.push_back(g.node(b).name);
    k.sourceOps.push_back(nodeB.name);
    k.opType = nodeA.opType;
    for (ir::NodeId b : chain.between)
        ck.betweenCtx.push_back(LowerContext{g, b, g.node(b), nullptr, options, where});
    // Fail early (and once) when an op cannot be inlined.
    auto probe = applyBetween(ck, info, floatImm(1.0, DType::F32));
    if (!probe) return probe.diagnostics();
    return ck;
}

support::Expected<Expr> applyBetween(const ChainKernel& ck, const ConvChainInfo& info, Expr v) {
    for (std::size_t i = 0; i < ck.betweenCtx.size(); ++i) {
        std::vector<Expr> ins(ck.betweenCtx[i].node.inputs.size());
        ins[info.betweenSlot[i]] = v;
        auto e = elementwiseExpr(ck.betweenCtx[i], ins);
        if (!e) return e.diagnostics();
        v = *e;
    }
    return v;
}

Stmt withChainWorker(Kernel& k, const Expr& w, std::int64_t th, std::int64_t tw, std::int64_t kc, std::int64_t tilesH,
                     std::int64_t tilesW, std::int64_t kChunks, const std::function<Stmt(const ChainWorker&)>& body) {
    const Var vkc = k.newVar("kc"), vtx = k.newVar("tx"), vty = k.newVar("ty"), vn = k.newVar("n");
    ChainWorker wk;
    wk.n = varRef(vn);
    wk.oh0 = varRef(vty) * intImm(th);
    wk.ow0 = varRef(vtx) * intImm(tw);
    wk.k0 = varRef(vkc) * intImm(kc);
    Stmt b = body(wk);
    if (!b) return nullptr;
    const Expr rest1 = w / intImm(kChunks);
    const Expr rest2 = rest1 / intImm(tilesW);
    return let(vkc, w % intImm(kChunks),
               let(vtx, rest1 % intImm(tilesW), let(vty, rest2 % intImm(tilesH), let(vn, rest2 / intImm(tilesH), b))));
}

Expr chainTapGuard(const WindowGeom& ga, std::int64_t kh, std::int64_t kw, const Expr& xh, const Expr& xw,
                   std::int64_t H1, std::int64_t W1, std::int64_t H, std::int64_t W) {
    Expr inside;
    auto andI = [&](const Expr& e) { inside = inside ? (inside && e) : e; };
    if (kh * ga.d[0] < ga.pb[0]) andI(xh >= intImm(0));
    if ((H1 - 1) * ga.s[0] + kh * ga.d[0] - ga.pb[0] >= H) andI(xh < intImm(H));
    if (kw * ga.d[1] < ga.pb[1]) andI(xw >= intImm(0));
    if ((W1 - 1) * ga.s[1] + kw * ga.d[1] - ga.pb[1] >= W) andI(xw < intImm(W));
    return inside;
}

support::Expected<LoweredKernel> lowerConvChain(const ir::Graph& g, const ConvChainSpec& chain,
                                                const LowerOptions& options, const std::string& where) {
    auto validated = validateConvChain(g, chain, options, where);
    if (!validated) return validated.diagnostics();
    if (options.target == Target::Cuda) return lowerConvChainCuda(g, chain, *validated, options, where);
    return lowerConvChainCpu(g, chain, *validated, options, where);
}

}  // namespace tessera::lower::detail
