// core/schedule/fusion_plan.h: kind names, planNone, checkPlan's rules (one test per violation
// kind, exact messages), normalizePlan and the JSON round trip.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/schedule/fusion_plan.h"
#include "core/schedule/planners.h"
#include "fusion/fusion_test_graphs.h"

namespace tessera::schedule {
namespace {

using Names = std::vector<std::string>;
namespace ft = fusion_test;

FusionGroup group(std::string name, FusionKind kind, Names ops, std::string anchor, Names prologue = {},
                  Names epilogue = {}) {
    FusionGroup g;
    g.name = std::move(name);
    g.kind = kind;
    g.ops = std::move(ops);
    g.anchor = std::move(anchor);
    g.prologue = std::move(prologue);
    g.epilogue = std::move(epilogue);
    return g;
}

FusionGroup single(const std::string& name, const std::string& op) { return group(name, FusionKind::Single, {op}, op); }

FusionPlan planOf(std::vector<FusionGroup> groups) {
    FusionPlan p;
    p.planner = "user";
    p.groups = std::move(groups);
    return p;
}

/// "rule|group|node|message" per violation.
std::vector<std::string> described(const std::vector<FusionViolation>& vs) {
    std::vector<std::string> out;
    for (const auto& v : vs) out.push_back(v.rule + "|" + std::to_string(v.group) + "|" + v.node + "|" + v.message);
    return out;
}

TEST(FusionPlan, KindNamesRoundTrip) {
    for (FusionKind k : {FusionKind::Single, FusionKind::PrologueEpilogue, FusionKind::DwPw, FusionKind::PwDw, FusionKind::PwPw})
        EXPECT_EQ(parseFusionKind(fusionKindName(k)), k);
    EXPECT_STREQ(fusionKindName(FusionKind::DwPw), "dw-pw");
    EXPECT_STREQ(fusionKindName(FusionKind::PrologueEpilogue), "prologue-epilogue");
    EXPECT_EQ(parseFusionKind("fused"), std::nullopt);
    EXPECT_TRUE(isConvChain(FusionKind::PwPw));
    EXPECT_TRUE(isConvChain(FusionKind::PwDw));
    EXPECT_FALSE(isConvChain(FusionKind::PrologueEpilogue));
    EXPECT_FALSE(isConvChain(FusionKind::Single));
}

TEST(FusionPlan, GroupLookup) {
    const FusionPlan p = planOf({group("a", FusionKind::PrologueEpilogue, {"X", "Y"}, "X", {}, {"Y"}), single("b", "Z")});
    EXPECT_TRUE(p.groups[0].contains("Y"));
    EXPECT_FALSE(p.groups[0].contains("Z"));
    EXPECT_EQ(p.groupOf("Z"), 1);
    EXPECT_EQ(p.groupOf("W"), -1);
    EXPECT_EQ(p.fusedGroupCount(), 1);
}

TEST(FusionPlan, PlanNoneIsOneGroupPerNonConstantNode) {
    const ir::Graph g = ft::dwPwBlock();
    const FusionPlan p = planNone(g);
    EXPECT_EQ(p.planner, "none");
    ASSERT_EQ(p.groups.size(), 4u);
    Names names;
    for (const auto& gr : p.groups) {
        names.push_back(gr.name);
        EXPECT_EQ(gr.kind, FusionKind::Single);
        EXPECT_EQ(gr.ops, Names{gr.name});
        EXPECT_EQ(gr.anchor, gr.name);
        EXPECT_EQ(gr.predictedBytesSaved, 0);
    }
    EXPECT_EQ(names, (Names{"Conv_0", "Clip_1", "Conv_2", "Clip_3"}));
    // Conv_0: x 1*32*16*16*4 + w1 32*9*4 + d 32*16*16*4.
    EXPECT_EQ(p.groups[0].predictedBytes, 32768 + 1152 + 32768);
    // Clip_1: d, the two scalar bounds, dc.
    EXPECT_EQ(p.groups[1].predictedBytes, 32768 + 4 + 4 + 32768);
    EXPECT_TRUE(checkPlan(g, p).empty());
}

TEST(FusionPlan, PlannersProduceLegalPlansOnTheTestGraphs) {
    for (const ir::Graph& g : {ft::convRelu(), ft::convRelu(2), ft::convRelu(1, true), ft::matmulBiasRelu(),
                               ft::reduceBroadcastAdd(), ft::reluMatmul(), ft::reluMatmul(true), ft::matmulTranspose(),
                               ft::elementwiseChain(), ft::dwPwBlock(), ft::matmulSlice(), ft::matmulReshapeSymbolic(),
                               ft::indexMapsAroundMatmul(), ft::indexMapsAroundMatmul(true)}) {
        EXPECT_TRUE(checkPlan(g, planNone(g)).empty());
        EXPECT_TRUE(checkPlan(g, planHidet(g)).empty());
    }
}

TEST(FusionPlanCheck, Coverage) {
    const ir::Graph g = ft::convRelu();
    EXPECT_EQ(described(checkPlan(g, planOf({single("g0", "Conv_0")}))),
              Names{"coverage|-1|Relu_1|node 'Relu_1' is in no group"});
    EXPECT_EQ(described(checkPlan(g, planOf({single("g1", "Conv_0"), single("g2", "Relu_1"), single("g4", "Relu_1")}))),
              Names{"coverage|2|Relu_1|node 'Relu_1' is in groups g2 and g4"});
    EXPECT_EQ(described(checkPlan(g, planOf({single("g0", "Conv_0"), single("g1", "Relu_1"), single("g2", "Zed")}))),
              Names{"unknown-node|2|Zed|unknown node 'Zed' in group g2"});
}

TEST(FusionPlanCheck, MultiUseAndGraphOutput) {
    {
        const ir::Graph g = ft::convRelu(2);
        const auto p = planOf({group("g0", FusionKind::PrologueEpilogue, {"Conv_0", "Relu_1"}, "Conv_0", {}, {"Relu_1"}),
                               single("g1", "Sigmoid_2")});
        EXPECT_EQ(described(checkPlan(g, p)), Names{"multi-use|0|Relu_1|Relu_1's input 'c' has 2 uses"});
    }
    {
        const ir::Graph g = ft::convRelu(1, true);
        const auto p = planOf({group("g0", FusionKind::PrologueEpilogue, {"Conv_0", "Relu_1"}, "Conv_0", {}, {"Relu_1"})});
        EXPECT_EQ(described(checkPlan(g, p)),
                  Names{"graph-output|0|Relu_1|'c' is a graph output, so Relu_1 cannot be an epilogue"});
    }
}

TEST(FusionPlanCheck, NotInvertible) {
    {
        // Transpose is an index permutation: invertible, a legal epilogue (also before Relu_2).
        const ir::Graph g = ft::matmulTranspose();
        const auto p = planOf({group("g0", FusionKind::PrologueEpilogue, {"MatMul_0", "Transpose_1"}, "MatMul_0", {},
                                     {"Transpose_1"}),
                               single("g1", "Relu_2")});
        EXPECT_EQ(described(checkPlan(g, p)), Names{});
        const auto all = planOf({group("g0", FusionKind::PrologueEpilogue, {"MatMul_0", "Transpose_1", "Relu_2"},
                                       "MatMul_0", {}, {"Transpose_1", "Relu_2"})});
        EXPECT_EQ(described(checkPlan(g, all)), Names{});
    }
    {
        const ir::Graph g = ft::matmulSlice();
        const auto p = planOf({group("g0", FusionKind::PrologueEpilogue, {"MatMul_0", "Slice_1"}, "MatMul_0", {}, {"Slice_1"}),
                               single("g1", "Relu_2")});
        EXPECT_EQ(described(checkPlan(g, p)),
                  Names{"not-invertible|0|Slice_1|Slice_1 is not invertible for 'm': Slice keeps only part of its input"});
        // Nor is it a prologue of Relu_2: the fused lowering does not inline a Slice into loads.
        const auto q = planOf({single("g0", "MatMul_0"), group("g1", FusionKind::PrologueEpilogue, {"Slice_1", "Relu_2"},
                                                               "Relu_2", {"Slice_1"}, {})});
        EXPECT_EQ(described(checkPlan(g, q)),
                  Names{"not-fusible|1|Slice_1|Slice_1 (Slice) is not inlined into loads: only elementwise ops, Transpose "
                        "and the Reshape family are"});
    }
    {
        const ir::Graph g = ft::matmulReshapeSymbolic();
        const auto p = planOf({group("g0", FusionKind::PrologueEpilogue, {"MatMul_0", "Reshape_1"}, "MatMul_0", {},
                                     {"Reshape_1"}),
                               single("g1", "Relu_2")});
        EXPECT_EQ(described(checkPlan(g, p)),
                  Names{"not-invertible|0|Reshape_1|Reshape_1's shapes are not static ([N,16] -> [?]): cannot map 'm''s "
                        "elements to its output"});
    }
    {
        // Reshape and Transpose prologues, Flatten and an elementwise op as epilogues.
        const ir::Graph g = ft::indexMapsAroundMatmul();
        const auto p = planOf({group("g0", FusionKind::PrologueEpilogue,
                                     {"Transpose_0", "Reshape_1", "MatMul_2", "Flatten_3", "Sigmoid_4"}, "MatMul_2",
                                     {"Transpose_0", "Reshape_1"}, {"Flatten_3", "Sigmoid_4"})});
        EXPECT_EQ(described(checkPlan(g, p)), Names{});
    }
    {
        const ir::Graph g = ft::reduceBroadcastAdd();
        const auto p = planOf({group("g0", FusionKind::PrologueEpilogue, {"ReduceSum_0", "Add_1"}, "ReduceSum_0", {}, {"Add_1"})});
        EXPECT_EQ(described(checkPlan(g, p)),
                  Names{"not-invertible|0|Add_1|Add_1 is not invertible for 'r': it broadcasts [1,16] up to [4,16]"});
    }
}

TEST(FusionPlanCheck, PrologueRules) {
    {
        const ir::Graph g = ft::dwPwBlock();
        const auto p = planOf({group("g0", FusionKind::PrologueEpilogue, {"Conv_0", "Clip_1", "Conv_2"}, "Conv_2",
                                     {"Conv_0", "Clip_1"}),
                               single("g1", "Clip_3")});
        EXPECT_EQ(described(checkPlan(g, p)), Names{"not-injective|0|Conv_0|Conv_0 is not injective: it cannot be a prologue"});
    }
    {
        const ir::Graph g = ft::reluMatmul(true);
        const auto p = planOf({group("g0", FusionKind::PrologueEpilogue, {"Relu_0", "MatMul_1"}, "MatMul_1", {"Relu_0"}),
                               single("g1", "Tanh_2")});
        EXPECT_EQ(described(checkPlan(g, p)),
                  Names{"prologue-escapes|0|Relu_0|Relu_0's output 'r' is also read by Tanh_2 outside the group"});
    }
}

TEST(FusionPlanCheck, KindShapeRules) {
    const ir::Graph g = ft::convRelu();
    EXPECT_EQ(described(checkPlan(g, planOf({group("g0", FusionKind::Single, {"Conv_0", "Relu_1"}, "Conv_0")}))),
              Names{"kind|0||group g0 is 'single' but has 2 ops"});
    EXPECT_EQ(described(checkPlan(g, planOf({group("g0", FusionKind::PrologueEpilogue, {"Conv_0", "Relu_1"}, "Relu_9", {},
                                                   {"Relu_1"})}))),
              Names{"kind|0|Relu_9|group g0's anchor 'Relu_9' is not one of its ops"});
    EXPECT_EQ(described(checkPlan(g, planOf({group("g0", FusionKind::PrologueEpilogue, {"Conv_0", "Relu_1"}, "Conv_0")}))),
              Names{"kind|0|Relu_1|group g0: 'Relu_1' is neither its anchor, a prologue nor an epilogue"});
}

TEST(FusionPlanCheck, NotConnectedAndCycle) {
    const ir::Graph g = ft::elementwiseChain();
    // g0 = {Exp_0, Neg_2} reads s from g1 = {Add_1}, which reads e from g0.
    const auto p = planOf({group("g0", FusionKind::PrologueEpilogue, {"Exp_0", "Neg_2"}, "Exp_0", {}, {"Neg_2"}),
                           single("g1", "Add_1"), single("g2", "Sigmoid_3"), single("g3", "Abs_4")});
    EXPECT_EQ(described(checkPlan(g, p)),
              (Names{"not-connected|0|Neg_2|Neg_2 does not read the output of the group's compute or of an earlier epilogue",
                     "cycle|0||groups g0 and g1 form a cycle: they cannot run in any order"}));
    auto n = normalizePlan(g, p);
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.diagnostics().firstError()->message, "groups g0 and g1 form a cycle: they cannot run in any order");
}

TEST(FusionPlanCheck, ReadsGroupOutput) {
    ir::test::Builder b;
    b.input("a", "f32[4,8]");
    b.init("w", ft::ramp({8, 8}));
    b.node("MatMul", "MatMul_0", {"a", "w"}, {"m"});
    b.node("Relu", "Relu_1", {"m"}, {"r"});
    b.node("Neg", "Neg_2", {"r"}, {"n"});
    b.node("Add", "Add_3", {"n", "r"}, {"y"});
    b.output("y");
    ASSERT_TRUE(ft::ok(b.g));
    const auto p = planOf({group("g0", FusionKind::PrologueEpilogue, {"MatMul_0", "Relu_1", "Neg_2", "Add_3"}, "MatMul_0", {},
                                 {"Relu_1", "Neg_2", "Add_3"})});
    EXPECT_EQ(described(checkPlan(b.g, p)),
              (Names{"multi-use|0|Neg_2|Neg_2's input 'r' has 2 uses",
                     "reads-group-output|0|Add_3|Add_3's other input 'r' is an output of the group"}));
}

FusionPlan dwPwPlan(FusionKind kind, FusionTile tile = {}) {
    FusionGroup chain = group("g0", kind, {"Conv_0", "Clip_1", "Conv_2", "Clip_3"}, "Conv_0", {}, {"Clip_1", "Clip_3"});
    chain.tile = tile;
    return planOf({chain});
}

TEST(FusionPlanCheck, ConvChains) {
    const ir::Graph g = ft::dwPwBlock();
    EXPECT_TRUE(checkPlan(g, dwPwPlan(FusionKind::DwPw)).empty());
    EXPECT_EQ(described(checkPlan(g, dwPwPlan(FusionKind::PwDw))),
              (Names{"kind|0|Conv_0|Conv_0 is not pointwise (kernel 3x3, group 32, strides [1,1], pads [1,1,1,1])",
                     "kind|0|Conv_2|Conv_2 is not depthwise (group 1, input channels 32, weights [64,32,1,1])"}));
    EXPECT_EQ(described(checkPlan(g, dwPwPlan(FusionKind::PwPw))),
              (Names{"kind|0|Conv_0|Conv_0 is not pointwise (kernel 3x3, group 32, strides [1,1], pads [1,1,1,1])"}));
    const auto oneConv = planOf({group("g0", FusionKind::DwPw, {"Conv_0", "Clip_1"}, "Conv_0", {}, {"Clip_1"}),
                                 single("g1", "Conv_2"), single("g2", "Clip_3")});
    EXPECT_EQ(described(checkPlan(g, oneConv)), Names{"not-a-chain|0||group g0 (dw-pw) has 1 convolution; a conv chain has 2"});
}

TEST(FusionPlanCheck, ConvChainIntermediateMustStayInside) {
    ir::test::Builder b;
    b.input("x", "f32[1,8,8,8]");
    b.init("w1", ft::ramp({8, 1, 3, 3}));
    b.init("w2", ft::ramp({16, 8, 1, 1}));
    b.node("Conv", "Conv_0", {"x", "w1"}, {"d"}, ft::convAttrs(1, 1, 8));
    b.node("Conv", "Conv_1", {"d", "w2"}, {"y"}, ft::convAttrs(0));
    b.node("Relu", "Relu_2", {"d"}, {"z"});
    b.output("y");
    b.output("z");
    ASSERT_TRUE(ft::ok(b.g));
    const auto p = planOf({group("g0", FusionKind::DwPw, {"Conv_0", "Conv_1"}, "Conv_0"), single("g1", "Relu_2")});
    EXPECT_EQ(described(checkPlan(b.g, p)),
              Names{"multi-use|0|Conv_0|Conv_0's output 'd' has 2 uses: the chain's intermediate must stay inside the group"});
}

TEST(FusionPlanCheck, SharedMemory) {
    const ir::Graph g = ft::dwPwBlock();
    target::GpuProfile hw;
    hw.name = "small";
    hw.sharedBytes = 16 * 1024;
    // Tile 8x8, 32 channels, 64 filters: input patch 10x10x32 = 3200, dw weights 32*9 = 288,
    // pw weights 64*32 = 2048: 5536 floats = 22144 bytes = 21.6 KiB.
    const FusionTile tile{8, 8, 32, 64};
    EXPECT_TRUE(checkPlan(g, dwPwPlan(FusionKind::DwPw, tile)).empty());  // no profile: not checked
    EXPECT_EQ(described(checkPlan(g, dwPwPlan(FusionKind::DwPw, tile), &hw)),
              Names{"shared-memory|0||tile does not fit shared memory: 22 KiB > 16 KiB"});
    hw.sharedBytes = 22144;
    EXPECT_TRUE(checkPlan(g, dwPwPlan(FusionKind::DwPw, tile), &hw).empty());
    hw.sharedBytes = 22143;
    EXPECT_EQ(checkPlan(g, dwPwPlan(FusionKind::DwPw, tile), &hw).size(), 1u);
}

TEST(FusionPlan, NormalizeOrdersGroupsAndMembers) {
    const ir::Graph g = ft::elementwiseChain();
    const auto p = planOf({single("last", "Abs_4"), group("b", FusionKind::PrologueEpilogue, {"Sigmoid_3", "Neg_2"}, "Sigmoid_3", {"Neg_2"}),
                           group("a", FusionKind::PrologueEpilogue, {"Add_1", "Exp_0"}, "Add_1", {"Exp_0"})});
    auto n = normalizePlan(g, p);
    ASSERT_TRUE(n.ok());
    ASSERT_EQ(n->groups.size(), 3u);
    EXPECT_EQ(n->groups[0].name, "a");
    EXPECT_EQ(n->groups[0].ops, (Names{"Exp_0", "Add_1"}));
    EXPECT_EQ(n->groups[1].name, "b");
    EXPECT_EQ(n->groups[1].ops, (Names{"Neg_2", "Sigmoid_3"}));
    EXPECT_EQ(n->groups[2].name, "last");
    EXPECT_TRUE(checkPlan(g, *n).empty());
}

TEST(FusionPlanJson, RoundTripIsExact) {
    const ir::Graph g = ft::dwPwBlock();
    FusionPlan p = planHidet(g);
    p.hardware = "h200";
    FusionGroup chain = dwPwPlan(FusionKind::DwPw, FusionTile{8, 4, 32, 64}).groups[0];
    chain.name = "pair \"1\"";
    chain.predictedBytes = 123456789012;
    chain.predictedBytesSaved = 42;
    chain.redundantFlops = 7;
    chain.reason = "FusePlanner dw-pw: saves 1.65 MiB";
    p.groups.push_back(chain);
    const std::string text = planToJson(p);
    auto back = planFromJson(text, "plan.json");
    ASSERT_TRUE(back.ok()) << back.diagnostics().formatAll();
    EXPECT_EQ(planToJson(*back), text);
    EXPECT_EQ(back->planner, "hidet");
    EXPECT_EQ(back->hardware, "h200");
    ASSERT_EQ(back->groups.size(), 3u);
    const FusionGroup& c = back->groups[2];
    EXPECT_EQ(c.name, "pair \"1\"");
    EXPECT_EQ(c.kind, FusionKind::DwPw);
    EXPECT_EQ(c.ops, chain.ops);
    EXPECT_EQ(c.epilogue, chain.epilogue);
    EXPECT_EQ(c.tile, (FusionTile{8, 4, 32, 64}));
    EXPECT_EQ(c.predictedBytes, 123456789012);
    EXPECT_EQ(c.predictedBytesSaved, 42);
    EXPECT_EQ(c.redundantFlops, 7);
    EXPECT_EQ(c.reason, chain.reason);
    EXPECT_EQ(back->groups[0].reason, p.groups[0].reason);
    EXPECT_NE(text.find("\"format\": \"tessera-fusion-plan\""), std::string::npos);
}

std::string firstError(const std::string& text) {
    auto r = planFromJson(text, "p.json");
    return r.ok() ? std::string("<ok>") : r.diagnostics().firstError()->message;
}

TEST(FusionPlanJson, Errors) {
    const std::string head = R"({"format": "tessera-fusion-plan", "version": 1, "planner": "user", "groups": )";
    EXPECT_EQ(firstError(head + R"([{"name": "g0", "kind": "fused", "ops": ["A"], "anchor": "A"}]})"),
              "groups[0].kind 'fused' is unknown (single, prologue-epilogue, dw-pw, pw-dw, pw-pw, attention)");
    EXPECT_EQ(firstError(head + R"([{"name": "g0", "kind": "single", "anchor": "A"}]})"), "groups[0].ops is missing");
    EXPECT_EQ(firstError(head + R"([{"name": "g0", "kind": "single", "ops": [1], "anchor": "A"}]})"),
              "groups[0].ops must be an array of node names");
    EXPECT_EQ(firstError(head + R"([{"name": "g0", "kind": "single", "ops": ["A"], "anchor": "A", "tile": {"h": "8"}}]})"),
              "groups[0].tile.h must be an integer");
    EXPECT_EQ(firstError(R"({"format": "tessera-fusion-plan", "version": 2, "planner": "user", "groups": []})"),
              "plan version 2 is newer than this Tessera reads (1)");
    EXPECT_EQ(firstError(R"({"format": "something-else", "version": 1, "planner": "user", "groups": []})"),
              "not a fusion plan: format is 'something-else', expected 'tessera-fusion-plan'");
    EXPECT_EQ(firstError(R"({"format": "tessera-fusion-plan", "version": 1, "groups": []})"), "plan.planner is missing");
    EXPECT_EQ(firstError(head + "[]}"), "<ok>");
    EXPECT_EQ(firstError("{oops").rfind("not valid JSON: ", 0), 0u);
    auto r = planFromJson("[1]", "p.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().firstError()->file, "p.json");
}

}  // namespace
}  // namespace tessera::schedule
