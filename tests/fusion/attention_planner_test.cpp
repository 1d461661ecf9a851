// The attention fusion in the hidet planner (core/schedule/attention_pattern.h, hidet_planner.cpp):
// on the pattern torch.onnx.export writes for scaled dot-product attention the planner forms one
// `attention` group with exactly the core (QK^T MatMul, score ops, Softmax, PV MatMul), the Q/K
// scaling and K's Transpose (and a padding mask's Where) as prologues and the head merge as
// epilogues; intermediates with other uses, a Softmax over another axis or a non-MatMul consumer
// keep the ordinary Hidet groups. checkPlan accepts the planner's groups and names what is wrong
// with broken ones; the kind survives the JSON form.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/schedule/attention_pattern.h"
#include "core/schedule/fusion_plan.h"
#include "core/schedule/planners.h"
#include "lower/attention_test_graphs.h"

namespace tessera::schedule {
namespace {

using Names = std::vector<std::string>;
namespace at = attention_test;

const FusionGroup* attentionGroup(const FusionPlan& p) {
    const FusionGroup* found = nullptr;
    for (const auto& gr : p.groups)
        if (gr.kind == FusionKind::Attention) {
            EXPECT_EQ(found, nullptr) << "two attention groups";
            found = &gr;
        }
    return found;
}

TEST(AttentionPlanner, TorchExportPatternFormsOneGroupWithExactMembers) {
    at::AttnSpec s;
    s.mask = at::Mask::Padding;
    s.headMerge = true;
    at::AttnNames names;
    const ir::Graph g = at::buildAttention(s, &names);
    const FusionPlan p = planHidet(g);
    ASSERT_EQ(p.groups.size(), 1u) << planToJson(p);
    const FusionGroup& gr = p.groups[0];
    EXPECT_EQ(gr.kind, FusionKind::Attention);
    EXPECT_EQ(gr.ops, (Names{"Where_pad", "Mul_q", "Transpose_k", "Mul_k", "MatMul_qk", "Add_mask", "Softmax",
                             "MatMul_pv", "Transpose_o", "Reshape_o"}));
    EXPECT_EQ(gr.ops, names.all);
    EXPECT_EQ(gr.anchor, "MatMul_qk");
    EXPECT_EQ(gr.prologue, (Names{"Where_pad", "Mul_q", "Transpose_k", "Mul_k"}));
    EXPECT_EQ(gr.epilogue, (Names{"Transpose_o", "Reshape_o"}));
    EXPECT_EQ(gr.reason,
              "attention: QK^T MatMul_qk -> Add_mask, Softmax, MatMul_pv (online softmax, one kernel); prologue Where_pad, "
              "Mul_q, Transpose_k, Mul_k; epilogue Transpose_o, Reshape_o");
    // The scores [2,2,5,7] and probabilities never leave the kernel: S0, S2 and P (2 x 280 bytes
    // each) plus the prologue and epilogue intermediates.
    EXPECT_GT(gr.predictedBytesSaved, 3 * 2 * 2 * 2 * 5 * 7 * 4);
    EXPECT_TRUE(checkPlan(g, p).empty());
    auto back = planFromJson(planToJson(p));
    ASSERT_TRUE(back.ok()) << back.diagnostics().formatAll();
    EXPECT_EQ(back->groups[0].kind, FusionKind::Attention);
    EXPECT_EQ(back->groups[0].ops, gr.ops);
    EXPECT_TRUE(checkPlan(g, *back).empty());
}

TEST(AttentionPlanner, DivScoresAndMaskedFillWhere) {
    at::AttnSpec s;
    s.scale = at::Scale::DivScores;
    s.mask = at::Mask::CausalWhere;
    at::AttnNames names;
    const ir::Graph g = at::buildAttention(s, &names);
    const FusionPlan p = planHidet(g);
    ASSERT_EQ(p.groups.size(), 1u) << planToJson(p);
    EXPECT_EQ(p.groups[0].kind, FusionKind::Attention);
    EXPECT_EQ(p.groups[0].ops, (Names{"Transpose_k", "MatMul_qk", "Div_s", "Where_causal", "Softmax", "MatMul_pv"}));
    EXPECT_EQ(p.groups[0].prologue, Names{"Transpose_k"});
    EXPECT_EQ(p.groups[0].epilogue, Names{});
    EXPECT_TRUE(checkPlan(g, p).empty());
    std::string why;
    const AttentionPattern m = matchAttention(g, g.findNode("MatMul_qk"), &why);
    ASSERT_TRUE(m.ok()) << why;
    EXPECT_EQ(m.scoreOps, (std::vector<ir::NodeId>{g.findNode("Div_s"), g.findNode("Where_causal")}));
    EXPECT_EQ(m.softmax, g.findNode("Softmax"));
    EXPECT_EQ(m.pv, g.findNode("MatMul_pv"));
}

TEST(AttentionPlanner, ProbabilitiesReadElsewhereKeepHidetGroups) {
    // need_weights=True: the attention weights are a graph output too.
    at::AttnSpec s;
    ir::Graph g = at::buildAttention(s);
    const ir::ValueId probs = g.findValue("P");
    g.value(probs).isGraphOutput = true;
    g.outputs().push_back(probs);
    std::string why;
    EXPECT_FALSE(matchAttention(g, g.findNode("MatMul_qk"), &why).ok());
    EXPECT_EQ(why, "Softmax's output 'P' is a graph output");
    const FusionPlan p = planHidet(g);
    EXPECT_EQ(attentionGroup(p), nullptr);
    for (const auto& gr : p.groups) EXPECT_NE(gr.kind, FusionKind::Attention);
    EXPECT_EQ(p.groupOf("MatMul_qk") == p.groupOf("Softmax"), false);
    EXPECT_TRUE(checkPlan(g, p).empty());
}

TEST(AttentionPlanner, SoftmaxOverAnotherAxisIsNotAttention) {
    at::AttnSpec s;
    ir::Graph g = at::buildAttention(s);
    g.node(g.findNode("Softmax")).attributes = {{"axis", ir::Attribute::ofInt(2)}};
    std::string why;
    EXPECT_FALSE(matchAttention(g, g.findNode("MatMul_qk"), &why).ok());
    EXPECT_EQ(why, "Softmax is not over the last axis");
    EXPECT_EQ(attentionGroup(planHidet(g)), nullptr);
}

TEST(AttentionPlanner, ScoresWithTwoUsesAreNotAttention) {
    at::AttnSpec s;
    s.scale = at::Scale::DivScores;
    ir::Graph g = at::buildAttention(s);
    // A second reader of the raw scores.
    ir::Node extra;
    extra.opType = "Relu";
    extra.name = "Relu_x";
    extra.inputs = {g.findValue("S0")};
    ir::Value out;
    out.name = "relu_out";
    out.type = g.value(g.findValue("S0")).type;
    out.isGraphOutput = true;
    const ir::ValueId o = g.addValue(out);
    extra.outputs = {o};
    g.addNode(extra);
    g.outputs().push_back(o);
    std::string why;
    EXPECT_FALSE(matchAttention(g, g.findNode("MatMul_qk"), &why).ok());
    EXPECT_EQ(why, "MatMul_qk's output 'S0' has 2 uses");
    EXPECT_EQ(attentionGroup(planHidet(g)), nullptr);
}

TEST(AttentionPlanner, CheckPlanNamesABrokenAttentionGroup) {
    at::AttnSpec s;
    s.mask = at::Mask::Causal;
    const ir::Graph g = at::buildAttention(s);
    FusionPlan p = planHidet(g);
    ASSERT_EQ(p.groups.size(), 1u);
    ASSERT_EQ(p.groups[0].kind, FusionKind::Attention);
    // The PV MatMul moved to a group of its own: the core is incomplete.
    FusionPlan broken = p;
    FusionGroup& gr = broken.groups[0];
    gr.ops.erase(std::find(gr.ops.begin(), gr.ops.end(), "MatMul_pv"));
    FusionGroup pv;
    pv.name = "g1";
    pv.ops = {"MatMul_pv"};
    pv.anchor = "MatMul_pv";
    broken.groups.push_back(pv);
    const auto v = checkPlan(g, broken);
    ASSERT_FALSE(v.empty());
    EXPECT_EQ(v[0].rule, "not-attention");
    EXPECT_EQ(v[0].node, "MatMul_pv");
    EXPECT_EQ(v[0].message, "group g0: the attention core's 'MatMul_pv' is missing");
    // An anchor that is no attention core at all.
    FusionPlan wrong = p;
    wrong.groups[0].anchor = "Softmax";
    const auto w = checkPlan(g, wrong);
    ASSERT_FALSE(w.empty());
    EXPECT_EQ(w[0].rule, "not-attention");
    EXPECT_EQ(w[0].message, "group g0 is not attention at Softmax: Softmax is not a MatMul");
}

TEST(AttentionPlanner, FusePlannerKeepsTheAttentionGroup) {
    at::AttnSpec s;
    s.mask = at::Mask::Causal;
    s.headMerge = true;
    const ir::Graph g = at::buildAttention(s);
    auto hw = target::findGpuProfile("h200");
    ASSERT_TRUE(hw.ok());
    const FusionPlan p = planFusePlanner(g, *hw);
    const FusionGroup* gr = attentionGroup(p);
    ASSERT_NE(gr, nullptr) << planToJson(p);
    EXPECT_EQ(gr->anchor, "MatMul_qk");
    EXPECT_TRUE(checkPlan(g, p).empty());
}

}  // namespace
}  // namespace tessera::schedule
