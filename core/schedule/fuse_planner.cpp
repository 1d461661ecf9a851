// FusePlanner's cost model, tile search and pair selection (issue 6; semantics.md §2.5).
//
// Written from the description of FusePlanner (Qararyah et al., ICPP-W 2024) and a reading of its
// estimator_v2.py / builder.py; deliberate differences (documented in docs/fusion.md):
// - tile sizes are compared with the memories in bytes (FP32: 4 bytes per element); the halo of an
//   input tile is counted in its size;
// - a depthwise layer's halo re-reads are counted per channel (x C);
// - when a fused pair tiles the second layer's filters, the first layer's weights, input halo and
//   (dw-pw) depthwise weights are re-read per filter tile, and the first layer is recomputed per
//   filter tile (redundant FLOPs);
// - every tile the search records is viable (FusePlanner records one step past the last viable
//   tile), and the filters per tile include "all filters";
// - redundant compute is in FLOPs (multiply + add = 2), and tiles are counted over the batch.
#include "core/schedule/planners.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "core/ir/op_registry.h"

namespace tessera::schedule {
namespace {

constexpr std::int64_t kElementBytes = 4;  // FP32

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

std::int64_t nextPow2(std::int64_t x) {
    std::int64_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

/// FusePlanner's halo overlap on an H x W plane cut into input tiles th x tw by a k x k, stride s
/// window: (ceil(H/th)-1)(k-s)W + (ceil(W/tw)-1)(k-s)H elements per channel; 0 when k <= s.
std::int64_t haloOverlap(std::int64_t h, std::int64_t w, std::int64_t k, std::int64_t s, std::int64_t th,
                         std::int64_t tw) {
    if (k <= s) return 0;
    return (ceilDiv(h, th) - 1) * (k - s) * w + (ceilDiv(w, tw) - 1) * (k - s) * h;
}

std::int64_t ifmSize(const ConvLayer& l) { return l.inC * l.inH * l.inW; }
std::int64_t ofmSize(const ConvLayer& l) { return l.outC * l.outH * l.outW; }

/// FLOPs of one layer over the batch (multiply + add = 2).
std::int64_t layerFlops(const ConvLayer& l) {
    std::int64_t perOut = 2 * l.kernelH * l.kernelW;
    if (l.kind != ConvLayerKind::Depthwise) perOut *= l.inC;
    return perOut * ofmSize(l) * l.batch;
}

/// Input extent an output extent `t` needs through a k / s window.
std::int64_t inputExtent(std::int64_t t, std::int64_t k, std::int64_t s) { return (t - 1) * s + k; }

/// The viability rules in FusePlanner's order; "" = viable. Sizes in elements.
std::string viability(std::int64_t th, std::int64_t tw, std::int64_t outH, std::int64_t outW, std::int64_t tiles,
                      std::int64_t weightsTile, std::int64_t inputTile, std::int64_t outputTile,
                      const target::GpuProfile& hw) {
    char buf[200];
    if (th < 1 || tw < 1) return "empty tile";
    if (th > nextPow2(outH) || tw > nextPow2(outW)) {
        std::snprintf(buf, sizeof buf, "tile %lldx%lld exceeds the feature map %lldx%lld rounded up to powers of two",
                      (long long)th, (long long)tw, (long long)outH, (long long)outW);
        return buf;
    }
    if (tiles < hw.sms) {
        std::snprintf(buf, sizeof buf, "%lld tiles < %d SMs", (long long)tiles, hw.sms);
        return buf;
    }
    const std::int64_t smem = (weightsTile + inputTile) * kElementBytes;
    if (smem > hw.sharedBytes) {
        std::snprintf(buf, sizeof buf, "weights + input tile %lld B > shared memory %lld B", (long long)smem,
                      (long long)hw.sharedBytes);
        return buf;
    }
    const std::int64_t l1 = smem + outputTile * kElementBytes;
    if (l1 > hw.l1Bytes) {
        std::snprintf(buf, sizeof buf, "weights + input + output tiles %lld B > L1 %lld B", (long long)l1,
                      (long long)hw.l1Bytes);
        return buf;
    }
    return {};
}

TileCost finish(TileCost c, std::string why) {
    c.viable = why.empty();
    c.whyNot = std::move(why);
    return c;
}

/// Filters-per-tile candidates: 1, 2, 4, ... below n, then n.
std::vector<std::int64_t> filterCandidates(std::int64_t n) {
    std::vector<std::int64_t> out;
    for (std::int64_t f = 1; f < n; f *= 2) out.push_back(f);
    out.push_back(std::max<std::int64_t>(n, 1));
    return out;
}

/// The doubling walk: 1x1, then width and height doubled alternately while the tile is viable.
template <typename CostFn>
TileCost searchTiles(const std::vector<std::int64_t>& filters, std::int64_t depth, CostFn cost) {
    TileCost best;
    TileCost firstTried;
    bool tried = false;
    for (std::int64_t f : filters) {
        FusionTile t{1, 1, depth, f};
        for (int iter = 0; iter < 64; ++iter) {
            TileCost c = cost(t);
            if (!tried) {
                firstTried = c;
                tried = true;
            }
            if (!c.viable) break;
            if (!best.viable || c.gma < best.gma) best = c;
            if (iter % 2 == 0)
                t.w *= 2;
            else
                t.h *= 2;
        }
    }
    return best.viable ? best : firstTried;
}

bool layerCheck(const ConvLayer& l, ConvLayerKind kind) { return l.kind == kind; }

}  // namespace

const char* convLayerKindName(ConvLayerKind k) {
    switch (k) {
        case ConvLayerKind::Depthwise: return "dw";
        case ConvLayerKind::Pointwise: return "pw";
        case ConvLayerKind::Standard: break;
    }
    return "s";
}

std::int64_t ConvLayer::weights() const {
    if (kind == ConvLayerKind::Depthwise) return outC * kernelH * kernelW;
    return outC * inC * kernelH * kernelW;
}

support::Expected<ConvLayer> convLayerOf(const ir::Graph& g, ir::NodeId conv) {
    support::DiagnosticList d;
    const ir::Node& n = g.node(conv);
    const std::string where = "node '" + n.name + "' (" + n.opType + ")";
    if (n.opType != "Conv" || n.inputs.size() < 2 || n.outputs.empty()) {
        d.error("", where, "not a Conv node");
        return d;
    }
    auto dims = [&](ir::ValueId v) -> std::optional<std::vector<std::int64_t>> {
        if (v == ir::kNoValue) return std::nullopt;
        return g.value(v).type.shape.knownDims();
    };
    auto x = dims(n.inputs[0]), w = dims(n.inputs[1]), y = dims(n.outputs[0]);
    if (!x || !w || !y) {
        d.error("", where, "shapes not static");
        return d;
    }
    if (x->size() != 4 || w->size() != 4 || y->size() != 4) {
        d.error("", where, "not a 2-D (NCHW) convolution");
        return d;
    }
    ConvLayer l;
    l.node = n.name;
    l.batch = (*x)[0];
    l.inC = (*x)[1];
    l.inH = (*x)[2];
    l.inW = (*x)[3];
    l.outC = (*y)[1];
    l.outH = (*y)[2];
    l.outW = (*y)[3];
    l.kernelH = (*w)[2];
    l.kernelW = (*w)[3];
    const auto strides = n.attrInts("strides", {1, 1});
    const auto pads = n.attrInts("pads", {0, 0, 0, 0});
    const auto dil = n.attrInts("dilations", {1, 1});
    const std::int64_t group = n.attrInt("group", 1);
    l.stride = strides.empty() ? 1 : strides[0];
    const bool squareStride = strides.size() == 2 && strides[0] == strides[1];
    const bool noDilation = std::all_of(dil.begin(), dil.end(), [](std::int64_t v) { return v == 1; });
    const bool noPads = std::all_of(pads.begin(), pads.end(), [](std::int64_t v) { return v == 0; });
    if (group == l.inC && group > 1 && (*w)[1] == 1 && l.outC % l.inC == 0 && (*w)[0] == l.outC && squareStride &&
        noDilation && l.kernelH == l.kernelW)
        l.kind = ConvLayerKind::Depthwise;
    else if (l.kernelH == 1 && l.kernelW == 1 && group == 1 && l.stride == 1 && squareStride && noPads && noDilation)
        l.kind = ConvLayerKind::Pointwise;
    else
        l.kind = ConvLayerKind::Standard;
    return l;
}

TileCost layerCost(const ConvLayer& l, const FusionTile& tile, const target::GpuProfile& hw) {
    TileCost c;
    c.tile = tile;
    const std::int64_t th = tile.h, tw = tile.w;
    if (th < 1 || tw < 1) return finish(c, "empty tile");
    const std::int64_t spatial = ceilDiv(l.outH, th) * ceilDiv(l.outW, tw);
    const std::int64_t s = l.stride;
    const std::int64_t ith = inputExtent(th, l.kernelH, s), itw = inputExtent(tw, l.kernelW, s);
    if (l.kind == ConvLayerKind::Depthwise) {
        // One channel per tile, weights read once per tile (weight_tiles = 1, output-stationary).
        c.tile.depth = 1;
        c.tile.filters = 1;
        const std::int64_t overlap = haloOverlap(l.inH, l.inW, l.kernelH, s, th * s, tw * s) * l.inC;
        c.gma = l.batch * (ifmSize(l) + ofmSize(l) + 2 * overlap + l.weights() * spatial);
        return finish(c, viability(th, tw, l.outH, l.outW, l.batch * spatial * l.outC, l.kernelH * l.kernelW,
                                   ith * itw, th * tw, hw));
    }
    // Pointwise (and, for information, standard convolutions: the same form plus the halo).
    const std::int64_t f = tile.filters > 0 ? std::min(tile.filters, l.outC) : l.outC;
    c.tile.filters = f;
    c.tile.depth = l.inC;
    const std::int64_t weightTiles = ceilDiv(l.outC, f);
    std::int64_t overlap = 0;
    if (l.kind == ConvLayerKind::Standard)
        overlap = haloOverlap(l.inH, l.inW, l.kernelH, s, th * s, tw * s) * l.inC * weightTiles;
    c.gma = l.batch * (weightTiles * ifmSize(l) + ofmSize(l) + 2 * overlap + l.weights() * spatial);
    return finish(c, viability(th, tw, l.outH, l.outW, l.batch * spatial * weightTiles, f * l.inC * l.kernelH * l.kernelW,
                               l.inC * ith * itw, f * th * tw, hw));
}

TileCost fusedCost(const ConvLayer& first, const ConvLayer& second, FusionKind kind, const FusionTile& tile,
                   const target::GpuProfile& hw) {
    TileCost c;
    c.tile = tile;
    const std::int64_t th = tile.h, tw = tile.w;
    if (th < 1 || tw < 1) return finish(c, "empty tile");
    if (second.inC != first.outC || second.inH != first.outH || second.inW != first.outW || second.batch != first.batch)
        return finish(c, "the second layer does not read the first's output shape");
    const std::int64_t batch = second.batch;
    const std::int64_t spatial = ceilDiv(second.outH, th) * ceilDiv(second.outW, tw);
    switch (kind) {
        case FusionKind::DwPw: {
            if (!layerCheck(first, ConvLayerKind::Depthwise) || !layerCheck(second, ConvLayerKind::Pointwise))
                return finish(c, "dw-pw needs a depthwise then a pointwise convolution");
            const ConvLayer& dw = first;
            const ConvLayer& pw = second;
            const std::int64_t f = tile.filters > 0 ? std::min(tile.filters, pw.outC) : pw.outC;
            c.tile.filters = f;
            c.tile.depth = dw.outC;
            const std::int64_t pwTiles = ceilDiv(pw.outC, f);
            const std::int64_t s = dw.stride, k = dw.kernelH;
            const std::int64_t overlap = haloOverlap(dw.inH, dw.inW, k, s, th * s, tw * s) * dw.inC;
            // Per filter tile of the pw: the dw input (with halo) and the dw weights are read again.
            c.gma = batch * (pwTiles * (ifmSize(dw) + 2 * overlap + dw.weights() * spatial) + ofmSize(pw) +
                             pw.weights() * spatial);
            c.redundantFlops = (pwTiles - 1) * layerFlops(dw);
            const std::int64_t inTile = dw.inC * inputExtent(th, k, s) * inputExtent(tw, k, s);
            const std::int64_t midTile = dw.outC * th * tw;
            return finish(c, viability(th, tw, pw.outH, pw.outW, batch * spatial * pwTiles, f * pw.inC + dw.weights(),
                                       inTile + midTile, f * th * tw, hw));
        }
        case FusionKind::PwDw: {
            if (!layerCheck(first, ConvLayerKind::Pointwise) || !layerCheck(second, ConvLayerKind::Depthwise))
                return finish(c, "pw-dw needs a pointwise then a depthwise convolution");
            const ConvLayer& pw = first;
            const ConvLayer& dw = second;
            // Channels of the intermediate per tile = pw filters per tile = dw channels per tile.
            const std::int64_t d = tile.filters > 0 ? std::min(tile.filters, pw.outC) : pw.outC;
            c.tile.filters = d;
            c.tile.depth = d;
            const std::int64_t tiles = ceilDiv(pw.outC, d);
            const std::int64_t s = dw.stride, k = dw.kernelH;
            const std::int64_t overlap = haloOverlap(dw.inH, dw.inW, k, s, th * s, tw * s);  // per channel
            c.gma = batch * (tiles * (ifmSize(pw) + 2 * overlap * pw.inC) + ofmSize(dw) +
                             (pw.weights() + dw.weights()) * spatial);
            // The pw outputs in the halo are computed by both neighbouring tiles.
            c.redundantFlops = batch * overlap * pw.outC * 2 * pw.inC;
            const std::int64_t mh = inputExtent(th, k, s), mw = inputExtent(tw, k, s);
            return finish(c, viability(th, tw, dw.outH, dw.outW, batch * spatial * tiles, d * pw.inC + d * k * k,
                                       pw.inC * mh * mw + d * mh * mw, d * th * tw, hw));
        }
        case FusionKind::PwPw: {
            if (!layerCheck(first, ConvLayerKind::Pointwise) || !layerCheck(second, ConvLayerKind::Pointwise))
                return finish(c, "pw-pw needs two pointwise convolutions");
            const ConvLayer& a = first;
            const ConvLayer& b = second;
            const std::int64_t f = tile.filters > 0 ? std::min(tile.filters, b.outC) : b.outC;
            c.tile.filters = f;
            c.tile.depth = a.outC;
            const std::int64_t tiles = ceilDiv(b.outC, f);
            c.gma = batch * (tiles * ifmSize(a) + ofmSize(b) + (a.weights() * tiles + b.weights()) * spatial);
            c.redundantFlops = (tiles - 1) * layerFlops(a);
            return finish(c, viability(th, tw, b.outH, b.outW, batch * spatial * tiles, a.weights() + f * b.inC,
                                       a.inC * th * tw + a.outC * th * tw, f * th * tw, hw));
        }
        default: break;
    }
    return finish(c, std::string("not a convolution chain kind: ") + fusionKindName(kind));
}

TileCost bestLayerTile(const ConvLayer& l, const target::GpuProfile& hw) {
    const std::vector<std::int64_t> filters =
        l.kind == ConvLayerKind::Depthwise ? std::vector<std::int64_t>{1} : filterCandidates(l.outC);
    return searchTiles(filters, l.kind == ConvLayerKind::Depthwise ? 1 : l.inC,
                       [&](const FusionTile& t) { return layerCost(l, t, hw); });
}

TileCost bestFusedTile(const ConvLayer& first, const ConvLayer& second, FusionKind kind, const target::GpuProfile& hw) {
    const std::int64_t n = kind == FusionKind::PwDw ? first.outC : second.outC;
    return searchTiles(filterCandidates(n), first.outC,
                       [&](const FusionTile& t) { return fusedCost(first, second, kind, t, hw); });
}

namespace {

bool isConstantInput(const ir::Graph& g, ir::ValueId v) {
    if (v == ir::kNoValue) return true;
    if (g.value(v).data) return true;
    const ir::NodeId p = g.producer(v);
    if (p == ir::kNoNode) return false;
    const ir::OpSchema* s = ir::OpRegistry::instance().find(g.node(p).domain, g.node(p).opType);
    return s && s->category == ir::OpCategory::Constant;
}

bool isGraphOutput(const ir::Graph& g, ir::ValueId v) {
    return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

/// An injective elementwise op whose output has `data`'s shape.
bool isElementwiseOn(const ir::Graph& g, ir::NodeId n, ir::ValueId data) {
    const ir::Node& node = g.node(n);
    const ir::OpSchema* s = ir::OpRegistry::instance().find(node.domain, node.opType);
    if (!s || s->category != ir::OpCategory::Elementwise || !s->injective) return false;
    if (node.outputs.size() != 1) return false;
    return g.value(node.outputs[0]).type.shape == g.value(data).type.shape;
}

/// The single use of `v` when it has exactly one and is not a graph output.
ir::NodeId singleUse(const ir::Graph& g, ir::ValueId v) {
    if (isGraphOutput(g, v)) return ir::kNoNode;
    const auto& cs = g.consumers(v);
    if (cs.size() != 1) return ir::kNoNode;
    // The consumer must read v through one slot only.
    const ir::Node& c = g.node(cs[0]);
    if (std::count(c.inputs.begin(), c.inputs.end(), v) != 1) return ir::kNoNode;
    return cs[0];
}

struct Candidate {
    ir::NodeId first = ir::kNoNode, second = ir::kNoNode;
    std::vector<ir::NodeId> between;
    FusionKind kind = FusionKind::DwPw;
    ConvLayer a, b;
    TileCost fused;
    std::int64_t separate = 0;  ///< GMA of the two layers run alone
    std::int64_t saved = 0;
};

/// Binary units, as the CLI and the GUI write bytes: "1.65 MiB", "588.0 KiB".
std::string humanBytes(double b) {
    char buf[64];
    constexpr double kKiB = 1024.0, kMiB = kKiB * 1024.0, kGiB = kMiB * 1024.0;
    if (b >= kGiB) std::snprintf(buf, sizeof buf, "%.2f GiB", b / kGiB);
    else if (b >= kMiB) std::snprintf(buf, sizeof buf, "%.2f MiB", b / kMiB);
    else if (b >= kKiB) std::snprintf(buf, sizeof buf, "%.1f KiB", b / kKiB);
    else std::snprintf(buf, sizeof buf, "%.0f B", b);
    return buf;
}

std::string humanFlops(double f) {
    char buf[64];
    if (f >= 1e9) std::snprintf(buf, sizeof buf, "%.2f GFLOP", f / 1e9);
    else std::snprintf(buf, sizeof buf, "%.2f MFLOP", f / 1e6);
    return buf;
}

}  // namespace

FusionPlan planFusePlanner(const ir::Graph& g, const target::GpuProfile& hw) {
    FusionPlan seed;
    std::map<ir::NodeId, std::string> refusedPairs;
    seed.planner = "fuseplanner";
    seed.hardware = hw.name;
    const auto order = g.topologicalOrder();
    if (order && validateGpuProfile(hw).empty()) {
        std::map<ir::NodeId, ConvLayer> layers;
        for (ir::NodeId n : *order) {
            if (g.node(n).opType != "Conv") continue;
            auto l = convLayerOf(g, n);
            if (l.ok()) layers.emplace(n, *l);
        }
        // Candidate pairs: conv -> [single-use elementwise ops] -> conv, intermediates single-use.
        std::vector<Candidate> accepted;
        // Pairs FusePlanner looked at and did not fuse, keyed by the first conv: the reason is
        // appended to the reason of the group that conv ends up in, so a plan says why not.
        std::map<ir::NodeId, std::string> refused;
        for (ir::NodeId n : *order) {
            auto it = layers.find(n);
            if (it == layers.end() || it->second.kind == ConvLayerKind::Standard) continue;
            Candidate cand;
            cand.first = n;
            cand.a = it->second;
            ir::ValueId v = g.node(n).outputs[0];
            ir::NodeId next = singleUse(g, v);
            while (next != ir::kNoNode && g.node(next).opType != "Conv") {
                const ir::Node& e = g.node(next);
                bool ok = isElementwiseOn(g, next, v);
                for (ir::ValueId in : e.inputs)
                    if (in != v && !isConstantInput(g, in)) ok = false;
                if (!ok) {
                    next = ir::kNoNode;
                    break;
                }
                cand.between.push_back(next);
                v = e.outputs[0];
                next = singleUse(g, v);
            }
            if (next == ir::kNoNode || g.node(next).inputs.empty() || g.node(next).inputs[0] != v) continue;
            auto jt = layers.find(next);
            if (jt == layers.end()) continue;
            cand.second = next;
            cand.b = jt->second;
            const ConvLayerKind ka = cand.a.kind, kb = cand.b.kind;
            if (ka == ConvLayerKind::Depthwise && kb == ConvLayerKind::Pointwise) cand.kind = FusionKind::DwPw;
            else if (ka == ConvLayerKind::Pointwise && kb == ConvLayerKind::Depthwise) cand.kind = FusionKind::PwDw;
            else if (ka == ConvLayerKind::Pointwise && kb == ConvLayerKind::Pointwise) cand.kind = FusionKind::PwPw;
            else continue;
            const TileCost la = bestLayerTile(cand.a, hw), lb = bestLayerTile(cand.b, hw);
            cand.fused = bestFusedTile(cand.a, cand.b, cand.kind, hw);
            const std::string pairText = std::string("FusePlanner did not fuse ") + fusionKindName(cand.kind) + " " +
                                         g.node(cand.first).name + " -> " + g.node(cand.second).name + " on " + hw.name + ": ";
            if (!la.viable || !lb.viable || !cand.fused.viable) {
                refused[cand.first] = pairText + "no viable tile (" +
                                      (!cand.fused.viable ? cand.fused.whyNot : !la.viable ? la.whyNot : lb.whyNot) + ")";
                continue;
            }
            cand.separate = la.gma + lb.gma;
            cand.saved = cand.separate - cand.fused.gma;
            // FusePlanner's decision rule.
            if (cand.saved <= 0) {
                refused[cand.first] = pairText + "fused traffic " + humanBytes(static_cast<double>(cand.fused.gma * kElementBytes)) +
                                      " is not below separate " + humanBytes(static_cast<double>(cand.separate * kElementBytes));
                continue;
            }
            if (static_cast<double>(cand.fused.redundantFlops) / static_cast<double>(cand.saved) >= kRedundantToSavedRatio) {
                char ratio[32];
                std::snprintf(ratio, sizeof ratio, "%.1f", static_cast<double>(cand.fused.redundantFlops) /
                                                             static_cast<double>(cand.saved));
                refused[cand.first] = pairText + "redundant " + humanFlops(static_cast<double>(cand.fused.redundantFlops)) +
                                      " per " + std::to_string(cand.saved) + " elements saved = " + ratio + " >= 10";
                continue;
            }
            accepted.push_back(std::move(cand));
        }
        // FusePlanner's builder takes pw-dw pairs first, then dw-pw, then pw-pw, each in model
        // order; here a conv joins at most one pair, so a later kind cannot reuse a fused conv.
        std::set<ir::NodeId> used;
        std::vector<const Candidate*> chosen;
        for (FusionKind kind : {FusionKind::PwDw, FusionKind::DwPw, FusionKind::PwPw})
            for (const Candidate& c : accepted) {
                if (c.kind != kind || used.count(c.first) || used.count(c.second)) {
                    if (c.kind == kind)
                        refused[c.first] = std::string("FusePlanner did not fuse ") + fusionKindName(c.kind) + " " +
                                           g.node(c.first).name + " -> " + g.node(c.second).name +
                                           ": a conv of the pair is already in another pair";
                    continue;
                }
                used.insert(c.first);
                used.insert(c.second);
                chosen.push_back(&c);
            }
        std::set<ir::NodeId> assigned;
        for (const Candidate* c : chosen) {
            assigned.insert(c->first);
            assigned.insert(c->second);
            assigned.insert(c->between.begin(), c->between.end());
        }
        std::map<ir::NodeId, FusionGroup> groups;  // keyed by the first conv, for topological order
        for (const Candidate* c : chosen) {
            FusionGroup grp;
            grp.kind = c->kind;
            std::vector<ir::NodeId> members{c->first};
            members.insert(members.end(), c->between.begin(), c->between.end());
            members.push_back(c->second);
            // The second conv's elementwise epilogues (Hidet's epilogue rule).
            ir::ValueId v = g.node(c->second).outputs[0];
            for (;;) {
                const ir::NodeId e = singleUse(g, v);
                if (e == ir::kNoNode || assigned.count(e) || !isElementwiseOn(g, e, v)) break;
                if (!epilogueRefusal(g, v, e, members).empty()) break;
                members.push_back(e);
                grp.epilogue.push_back(g.node(e).name);
                assigned.insert(e);
                v = g.node(e).outputs[0];
            }
            for (ir::NodeId m : members) grp.ops.push_back(g.node(m).name);
            grp.anchor = g.node(c->first).name;
            grp.tile = c->fused.tile;
            grp.predictedBytes = c->fused.gma * kElementBytes;
            grp.predictedBytesSaved = c->saved * kElementBytes;
            grp.redundantFlops = c->fused.redundantFlops;
            char pct[32];
            std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * static_cast<double>(c->saved) / static_cast<double>(c->separate));
            grp.reason = std::string("FusePlanner ") + fusionKindName(c->kind) + " on " + hw.name + ": saves " +
                         humanBytes(static_cast<double>(c->saved * kElementBytes)) + " (" + pct + "), redundant " +
                         humanFlops(static_cast<double>(c->fused.redundantFlops)) + ", tile " + std::to_string(grp.tile.h) +
                         "x" + std::to_string(grp.tile.w) + " x " + std::to_string(grp.tile.filters) + " filters";
            groups.emplace(c->first, std::move(grp));
        }
        for (auto& [first, grp] : groups) {
            grp.name = "g" + std::to_string(seed.groups.size());
            seed.groups.push_back(std::move(grp));
        }
        for (auto& [first, why] : refused)
            if (!assigned.count(first)) refusedPairs[first] = why;
    }
    FusionPlan plan = planHidet(g, &seed);
    // planHidet keeps the seed groups; make sure of it (a group it split or regrew is put back,
    // its members taken out of the other groups), so the conv pairs always survive.
    for (const FusionGroup& sg : seed.groups) {
        const int at = plan.groupOf(sg.anchor);
        if (at >= 0 && plan.groups[static_cast<std::size_t>(at)].ops == sg.ops &&
            plan.groups[static_cast<std::size_t>(at)].kind == sg.kind)
            continue;
        std::size_t insertAt = plan.groups.size();
        for (std::size_t i = 0; i < plan.groups.size(); ++i) {
            auto& ops = plan.groups[i].ops;
            const bool hit = std::any_of(ops.begin(), ops.end(), [&](const std::string& o) { return sg.contains(o); });
            if (!hit) continue;
            insertAt = std::min(insertAt, i);
            auto strip = [&](std::vector<std::string>& v) {
                v.erase(std::remove_if(v.begin(), v.end(), [&](const std::string& o) { return sg.contains(o); }), v.end());
            };
            strip(ops);
            strip(plan.groups[i].prologue);
            strip(plan.groups[i].epilogue);
            if (!ops.empty() && sg.contains(plan.groups[i].anchor)) plan.groups[i].anchor = ops.front();
        }
        plan.groups.insert(plan.groups.begin() + static_cast<std::ptrdiff_t>(insertAt), sg);
        plan.groups.erase(std::remove_if(plan.groups.begin(), plan.groups.end(),
                                         [](const FusionGroup& gr) { return gr.ops.empty(); }),
                          plan.groups.end());
    }
    for (const auto& [first, why] : refusedPairs) {
        const int at = plan.groupOf(g.node(first).name);
        if (at < 0) continue;
        std::string& r = plan.groups[static_cast<std::size_t>(at)].reason;
        r += (r.empty() ? "" : "; ") + why;
    }
    plan.planner = "fuseplanner";
    plan.hardware = hw.name;
    return plan;
}

support::Expected<FusionPlan> makePlan(const ir::Graph& g, const std::string& planner, const target::GpuProfile& hw) {
    if (planner == "none") return planNone(g);
    if (planner == "hidet") return planHidet(g);
    if (planner == "fuseplanner") return planFusePlanner(g, hw);
    support::DiagnosticList d;
    d.error("", "", "unknown fusion planner '" + planner + "' (known: none, hidet, fuseplanner)");
    return d;
}

}  // namespace tessera::schedule
