// FusePlanner's cost model, tile search, decision rule and planner (issue 6). Element counts are
// worked out by hand in the comments (FP32, batch 1 unless said otherwise).
#include <gtest/gtest.h>

#include <sstream>

#include "core/pipeline/load_model.h"
#include "core/schedule/planners.h"

using namespace tessera;
using schedule::ConvLayer;
using schedule::ConvLayerKind;
using schedule::FusionKind;
using schedule::FusionTile;

namespace {

ConvLayer dwLayer(std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t k, std::int64_t s) {
    ConvLayer l;
    l.node = "dw";
    l.kind = ConvLayerKind::Depthwise;
    l.inC = c;
    l.inH = h;
    l.inW = w;
    l.outC = c;
    l.outH = (h + 2 * (k / 2) - k) / s + 1;
    l.outW = (w + 2 * (k / 2) - k) / s + 1;
    l.kernelH = l.kernelW = k;
    l.stride = s;
    return l;
}

ConvLayer pwLayer(std::int64_t cin, std::int64_t cout, std::int64_t h, std::int64_t w) {
    ConvLayer l;
    l.node = "pw";
    l.kind = ConvLayerKind::Pointwise;
    l.inC = cin;
    l.inH = l.outH = h;
    l.inW = l.outW = w;
    l.outC = cout;
    return l;
}

target::GpuProfile h200() { return *target::findGpuProfile("h200"); }

}  // namespace

// DW 3x3 stride 1 (pad 1) on 32x112x112, output tile 8x8:
//   IFM = OFM = 32*112*112 = 401408; weights = 32*9 = 288; spatial tiles = 14*14 = 196
//   halo per channel = (ceil(112/8)-1)*(3-1)*112 * 2 directions = 13*2*112*2 = 5824; x32 = 186368
//   GMA = IFM + OFM + 2*halo + weights*spatial = 401408 + 401408 + 372736 + 56448 = 1232000
TEST(FusePlannerCost, DepthwiseLayer) {
    const ConvLayer dw = dwLayer(32, 112, 112, 3, 1);
    EXPECT_EQ(dw.weights(), 288);
    const auto c = schedule::layerCost(dw, FusionTile{8, 8, 0, 0}, h200());
    EXPECT_TRUE(c.viable) << c.whyNot;
    EXPECT_EQ(c.gma, 1232000);
    EXPECT_EQ(c.redundantFlops, 0);
    EXPECT_EQ(c.tile, (FusionTile{8, 8, 1, 1}));
    // Batch 2 doubles every term.
    ConvLayer dw2 = dw;
    dw2.batch = 2;
    EXPECT_EQ(schedule::layerCost(dw2, FusionTile{8, 8, 0, 0}, h200()).gma, 2 * 1232000);
}

// PW 32->16 on 112x112, output tile 8x8:
//   IFM = 401408; OFM = 16*12544 = 200704; weights = 512; spatial tiles = 196
//   all 16 filters per tile: 1*IFM + OFM + 512*196 = 401408 + 200704 + 100352 = 702464
//   8 filters per tile (2 weight tiles): 2*401408 + 200704 + 100352 = 1103872
TEST(FusePlannerCost, PointwiseLayer) {
    const ConvLayer pw = pwLayer(32, 16, 112, 112);
    EXPECT_EQ(pw.weights(), 512);
    const auto all = schedule::layerCost(pw, FusionTile{8, 8, 0, 16}, h200());
    EXPECT_TRUE(all.viable) << all.whyNot;
    EXPECT_EQ(all.gma, 702464);
    const auto half = schedule::layerCost(pw, FusionTile{8, 8, 0, 8}, h200());
    EXPECT_EQ(half.gma, 1103872);
}

// Fused DW->PW of the two layers above, tile 8x8 of the PW output:
//   all 16 filters (1 pw weight tile): dw IFM + 2*dw halo + dw weights*spatial + pw OFM + pw weights*spatial
//     = 401408 + 372736 + 56448 + 200704 + 100352 = 1131648; no redundant compute.
//     Layer by layer at the same tiles: 1232000 + 702464 = 1934464, so the fusion saves
//     802816 = the 32x112x112 intermediate written once and read once.
//   8 filters (2 pw weight tiles): the dw input, halo and dw weights are read per weight tile:
//     2*(401408 + 372736 + 56448) + 200704 + 100352 = 1962240, and the depthwise layer is computed
//     twice: redundant = 2*9*401408 = 7225344 FLOPs.
TEST(FusePlannerCost, FusedDwPw) {
    const ConvLayer dw = dwLayer(32, 112, 112, 3, 1);
    const ConvLayer pw = pwLayer(32, 16, 112, 112);
    const auto f = schedule::fusedCost(dw, pw, FusionKind::DwPw, FusionTile{8, 8, 0, 16}, h200());
    EXPECT_TRUE(f.viable) << f.whyNot;
    EXPECT_EQ(f.gma, 1131648);
    EXPECT_EQ(f.redundantFlops, 0);
    EXPECT_EQ(f.tile, (FusionTile{8, 8, 32, 16}));
    const std::int64_t separate = schedule::layerCost(dw, FusionTile{8, 8, 0, 0}, h200()).gma +
                                  schedule::layerCost(pw, FusionTile{8, 8, 0, 16}, h200()).gma;
    EXPECT_EQ(separate - f.gma, 802816);
    const auto f8 = schedule::fusedCost(dw, pw, FusionKind::DwPw, FusionTile{8, 8, 0, 8}, h200());
    EXPECT_EQ(f8.gma, 1962240);
    EXPECT_EQ(f8.redundantFlops, 7225344);
    // Wrong kinds are refused.
    EXPECT_FALSE(schedule::fusedCost(dw, pw, FusionKind::PwDw, FusionTile{8, 8, 0, 16}, h200()).viable);
}

// Fused PW->DW: PW 16->96 on 112x112, then DW 3x3 stride 2 -> 96x56x56; tile 4x4 of the DW output,
// all 96 channels per tile:
//   PW IFM = 16*12544 = 200704; DW OFM = 96*3136 = 301056; spatial tiles = 14*14 = 196
//   halo on the 112x112 intermediate with 8x8 input tiles: (14-1)*(3-2)*112*2 = 2912 per channel;
//   FusePlanner charges it on the PW input depth: 2*2912*16 = 93184
//   weights (96*16 + 96*9) * 196 = 2400*196 = 470400
//   GMA = 200704 + 93184 + 301056 + 470400 = 1065344
//   redundant: the 2912 halo positions x 96 channels recomputed by the PW (2*16 FLOPs each)
//     = 2912*96*32 = 8945664 FLOPs
TEST(FusePlannerCost, FusedPwDw) {
    const ConvLayer pw = pwLayer(16, 96, 112, 112);
    const ConvLayer dw = dwLayer(96, 112, 112, 3, 2);
    ASSERT_EQ(dw.outH, 56);
    const auto f = schedule::fusedCost(pw, dw, FusionKind::PwDw, FusionTile{4, 4, 0, 96}, h200());
    EXPECT_TRUE(f.viable) << f.whyNot;
    EXPECT_EQ(f.gma, 1065344);
    EXPECT_EQ(f.redundantFlops, 8945664);
}

// Tile search on PW 8->8 on 4x4 with a 2-SM GPU and plenty of memory:
//   IFM = OFM = 128, weights = 64; GMA = wt*128 + 128 + 64*spatial, tiles = spatial*wt >= 2.
//   8 filters (wt 1): walk 1x1 (16 tiles), 1x2 (8), 2x2 (4), 2x4 (2), 4x4 (1 < 2 SMs: stop);
//     best 2x4: 128 + 128 + 64*2 = 384.
//   4 filters (wt 2): best 4x4: 256 + 128 + 64 = 448; 2 filters: 512+128+64 = 704; 1: 1024+...
//   -> tile h=2, w=4, 8 filters, GMA 384.
TEST(FusePlannerCost, TileSearchSmallCase) {
    target::GpuProfile hw;
    hw.name = "tiny";
    hw.sms = 2;
    hw.l1Bytes = 128 * 1024;
    hw.sharedBytes = 64 * 1024;
    const auto best = schedule::bestLayerTile(pwLayer(8, 8, 4, 4), hw);
    ASSERT_TRUE(best.viable) << best.whyNot;
    EXPECT_EQ(best.tile, (FusionTile{2, 4, 8, 8}));
    EXPECT_EQ(best.gma, 384);
    hw.sms = 200;  // ... but 200 SMs cannot be fed by 16 positions x 8 filters = 128 tiles.
    const auto none = schedule::bestLayerTile(pwLayer(8, 8, 4, 4), hw);
    EXPECT_FALSE(none.viable);
    EXPECT_EQ(none.whyNot, "128 tiles < 200 SMs");  // first tried: 1 filter, 1x1: 16 positions x 8 weight tiles
}

// Decision rule refusal: PW 128->128 -> PW 128->128 on 14x14 on the H200 (132 SMs).
//   Layer by layer, the best tile is 16 filters, 2x4 (7*4 = 28 spatial tiles, 8 weight tiles = 224
//   tiles): 8*25088 + 25088 + 16384*28 = 684544 each (hand enumeration: 8 filters/4x4 688640,
//   32/2x2 928256, 4/4x8 958976 ...).
//   Fused, the first layer's 16384 weights are read per tile of the second: with >= 132 tiles that
//   alone is >= 132*16384 = 2162688 > 2*684544, so saved < 0 and FusePlanner does not fuse.
TEST(FusePlannerCost, DecisionRuleRefusesPwPw) {
    const ConvLayer a = pwLayer(128, 128, 14, 14), b = pwLayer(128, 128, 14, 14);
    const auto la = schedule::bestLayerTile(a, h200());
    ASSERT_TRUE(la.viable);
    EXPECT_EQ(la.gma, 684544);
    EXPECT_EQ(la.tile, (FusionTile{2, 4, 128, 16}));
    const auto f = schedule::bestFusedTile(a, b, FusionKind::PwPw, h200());
    ASSERT_TRUE(f.viable) << f.whyNot;
    EXPECT_GE(f.gma, 132 * 16384);
    EXPECT_LE(2 * la.gma - f.gma, 0);
}

TEST(FusePlanner, MakePlanNames) {
    ir::Graph g;
    EXPECT_TRUE(schedule::makePlan(g, "none", h200()).ok());
    auto bad = schedule::makePlan(g, "tvm", h200());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.diagnostics().formatAll().find("unknown fusion planner 'tvm' (known: none, hidet, fuseplanner)"),
              std::string::npos);
}

namespace {

std::string chainSummary(const schedule::FusionPlan& plan) {
    std::ostringstream os;
    for (const auto& gr : plan.groups) {
        if (!schedule::isConvChain(gr.kind)) continue;
        os << schedule::fusionKindName(gr.kind) << ":";
        for (const auto& o : gr.ops) os << " " << o;
        os << " | tile " << gr.tile.h << "x" << gr.tile.w << "x" << gr.tile.filters << " | epilogue";
        if (gr.epilogue.empty()) os << " -";
        for (const auto& e : gr.epilogue) os << " " << e;
        os << "\n";
    }
    return os.str();
}

}  // namespace

TEST(FusePlanner, MobileNetV2) {
    auto model = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/mobilenet_v2.onnx");
    ASSERT_TRUE(model.ok()) << model.diagnostics().formatAll();
    const ir::Graph& g = model->graph;
    int dw = 0, pw = 0, s = 0;
    for (ir::NodeId n = 0; n < static_cast<ir::NodeId>(g.numNodes()); ++n) {
        if (g.node(n).opType != "Conv") continue;
        auto l = schedule::convLayerOf(g, n);
        ASSERT_TRUE(l.ok()) << l.diagnostics().formatAll();
        (l->kind == ConvLayerKind::Depthwise ? dw : l->kind == ConvLayerKind::Pointwise ? pw : s)++;
    }
    // 17 depthwise, 34 pointwise and the 3x3 stride-2 stem.
    EXPECT_EQ(dw, 17);
    EXPECT_EQ(pw, 34);
    EXPECT_EQ(s, 1);

    // H200 (132 SMs): only three pairs pass the decision rule (see docs/fusion.md): the
    // first block's DW -> ReLU6 -> PW, and the expansion PW -> ReLU6 -> DW of blocks 2 and 4 (both
    // stride 2), each with the DW's ReLU6 as epilogue. The other candidates either save nothing
    // (14x14 and 7x7 maps: >= 132 tiles force small tiles that re-read weights) or recompute too
    // much (redundant FLOPs >= 10x the elements saved, e.g. block 3: 9289728 / 647424 = 14.3).
    const std::string p = "/features/features.";
    const std::string expected =
        "dw-pw: " + p + "1/conv/conv.0/conv.0.0/Conv " + p + "1/conv/conv.0/conv.0.2/Clip " + p +
        "1/conv/conv.1/Conv | tile 8x8x16 | epilogue -\n"
        "pw-dw: " + p + "2/conv/conv.0/conv.0.0/Conv " + p + "2/conv/conv.0/conv.0.2/Clip " + p +
        "2/conv/conv.1/conv.1.0/Conv " + p + "2/conv/conv.1/conv.1.2/Clip | tile 4x4x96 | epilogue " + p +
        "2/conv/conv.1/conv.1.2/Clip\n"
        "pw-dw: " + p + "4/conv/conv.0/conv.0.0/Conv " + p + "4/conv/conv.0/conv.0.2/Clip " + p +
        "4/conv/conv.1/conv.1.0/Conv " + p + "4/conv/conv.1/conv.1.2/Clip | tile 4x4x64 | epilogue " + p +
        "4/conv/conv.1/conv.1.2/Clip\n";
    const auto plan = schedule::planFusePlanner(g, h200());
    EXPECT_EQ(plan.planner, "fuseplanner");
    EXPECT_EQ(plan.hardware, "h200");
    EXPECT_EQ(chainSummary(plan), expected);
    const int first = plan.groupOf(p + "1/conv/conv.0/conv.0.0/Conv");
    ASSERT_GE(first, 0);
    const auto& g0 = plan.groups[static_cast<std::size_t>(first)];
    // DW 32x112x112 alone: best tile 32x64 -> 862464; PW 32->16: 8x8, 16 filters -> 702464;
    // fused 8x8 x 16 filters -> 1131648 (FusedDwPw above); saved 433280 elements = 1733120 B (28%).
    EXPECT_EQ(g0.predictedBytes, 1131648 * 4);
    EXPECT_EQ(g0.predictedBytesSaved, 433280 * 4);
    EXPECT_EQ(g0.redundantFlops, 0);
    EXPECT_EQ(g0.reason, "FusePlanner dw-pw on h200: saves 1.65 MiB (28%), redundant 0.00 MFLOP, tile 8x8 x 16 filters");
    const auto violations = schedule::checkPlan(g, plan, nullptr);
    for (const auto& v : violations) ADD_FAILURE() << v.rule << ": " << v.message;

    // GTX 1660 (22 SMs, 64 KiB shared): the same three pairs with larger tiles.
    const auto gtx = schedule::planFusePlanner(g, *target::findGpuProfile("gtx-1660"));
    std::string gtxExpected = expected;
    gtxExpected.replace(gtxExpected.find("tile 8x8x16"), 11, "tile 8x16x16");
    gtxExpected.replace(gtxExpected.find("tile 4x4x64"), 11, "tile 4x8x64");
    EXPECT_EQ(chainSummary(gtx), gtxExpected);
    EXPECT_EQ(gtx.hardware, "gtx-1660");
}
