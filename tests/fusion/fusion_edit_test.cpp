// Hand edits of fusion plans (core/schedule/fusion_edit.h): merging the groups of two nodes, the
// refusals, and the "why not one kernel" of every edge between groups (the GUI's edge tooltips,
// `tessera-cli plan --why-not`), with exact texts.
#include <gtest/gtest.h>

#include "core/schedule/fusion_edit.h"
#include "core/schedule/planners.h"
#include "fusion/fusion_test_graphs.h"

namespace tessera::schedule {
namespace {

namespace ft = fusion_test;
using Names = std::vector<std::string>;

target::GpuProfile h200() { return target::findGpuProfile("h200").value(); }

TEST(FusionEdit, FuseNodesMergesTheirGroupsOrRefuses) {
    const ir::Graph g = ft::matmulTranspose();
    const FusionPlan none = planNone(g);
    EXPECT_EQ(freshGroupName(g, none), "u1");
    const FuseAttempt a = fuseNodes(g, none, {"Transpose_1", "MatMul_0"}, h200(), checkPlan(g, none), "u1");
    ASSERT_TRUE(a.ok) << a.message;
    EXPECT_EQ(a.group, "u1");
    EXPECT_EQ(a.plan.planner, "user");
    ASSERT_EQ(a.plan.groups.size(), 2u);
    EXPECT_EQ(a.plan.groups[0].name, "u1");
    EXPECT_EQ(a.plan.groups[0].kind, FusionKind::PrologueEpilogue);
    EXPECT_EQ(a.plan.groups[0].anchor, "MatMul_0");
    EXPECT_EQ(a.plan.groups[0].epilogue, Names{"Transpose_1"});

    const ir::Graph g2 = ft::convRelu(2);
    const FusionPlan none2 = planNone(g2);
    const FuseAttempt r = fuseNodes(g2, none2, {"Conv_0", "Relu_1"}, h200(), {}, "u1");
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.node, "Relu_1");
    EXPECT_EQ(r.message, "Relu_1's input 'c' has 2 uses");
    const FuseAttempt same = fuseNodes(g2, planHidet(g2), {"Relu_1", "Relu_1"}, h200(), {}, "u1");
    EXPECT_FALSE(same.ok);
    EXPECT_EQ(same.message, "Relu_1, Relu_1 are already one group (g1)");
}

TEST(FusionEdit, CrossingEdgeReasonsAndTheirText) {
    const ir::Graph g = ft::convRelu(2);
    const auto reasons = crossingEdgeReasons(g, planNone(g), h200());
    ASSERT_EQ(reasons.size(), 2u);
    EXPECT_EQ(reasons[0].from, "Conv_0");
    EXPECT_EQ(reasons[0].to, "Relu_1");
    EXPECT_FALSE(reasons[0].fusible);
    EXPECT_EQ(edgeReasonText(reasons[0], "Ctrl+G"), "Conv_0 \u2192 Relu_1: not one kernel\nRelu_1's input 'c' has 2 uses");
    EXPECT_EQ(edgeReasonText(reasons[1], "Ctrl+G"),
              "Conv_0 \u2192 Sigmoid_2: not one kernel\nSigmoid_2's input 'c' has 2 uses");

    // Under hidet the index maps and the elementwise ops around MatMul_2 are one kernel; t has
    // two uses, so Transpose_0 stays alone: a prologue of either consumer would escape the group.
    const ir::Graph g2 = ft::indexMapsAroundMatmul(true);
    const FusionPlan hidet = planHidet(g2);
    const auto r2 = crossingEdgeReasons(g2, hidet, h200());
    ASSERT_EQ(r2.size(), 2u);
    EXPECT_EQ(edgeReasonText(r2[0], "Ctrl+G"), "Transpose_0 (g0) \u2192 Reshape_1 (g1): not one kernel\nTranspose_0's "
                                               "output 't' is also read by Abs_5 outside the group");
    EXPECT_EQ(edgeReasonText(r2[1], "Ctrl+G"), "Transpose_0 (g0) \u2192 Abs_5 (g2): not one kernel\nTranspose_0's output "
                                               "'t' is also read by Reshape_1 outside the group");
    // Without the second use every edge of the graph is inside one kernel.
    const ir::Graph g3 = ft::indexMapsAroundMatmul();
    EXPECT_TRUE(crossingEdgeReasons(g3, planHidet(g3), h200()).empty());
    // Under planner none, an index-map edge is fusible.
    const auto r3 = crossingEdgeReasons(g3, planNone(g3), h200());
    ASSERT_EQ(r3.size(), 4u);
    EXPECT_TRUE(r3[2].fusible);
    EXPECT_EQ(edgeReasonText(r3[2], "Ctrl+G"),
              "MatMul_2 \u2192 Flatten_3: not one kernel\nfusible: select both nodes and Fuse (Ctrl+G)");

    // A FusePlanner pair it refused on cost: its recorded reason, and the rules allow it.
    EdgeReason note;
    note.from = "Clip_1";
    note.to = "Conv_2";
    note.fromGroup = "g0";
    note.toGroup = "g1";
    note.fusible = true;
    note.plannerNote = "FusePlanner did not fuse dw-pw Conv_0 -> Conv_2 on h200: fused traffic 8.76 MiB is not below separate 8.04 MiB";
    EXPECT_EQ(edgeReasonText(note, "Ctrl+G"),
              "Clip_1 (g0) \u2192 Conv_2 (g1): not one kernel\nFusePlanner did not fuse dw-pw Conv_0 -> Conv_2 on h200: fused "
              "traffic 8.76 MiB is not below separate 8.04 MiB\nThe rules allow it: select both nodes and Fuse (Ctrl+G)");
}

TEST(FusionEdit, ACycleRefusalNamesTheMergeNotTheNewGroup) {
    // Exp_0 -> Add_1 -> Neg_2: merging the ends leaves Add_1 between them.
    const ir::Graph g = ft::elementwiseChain();
    const FusionPlan none = planNone(g);
    const FuseAttempt a = fuseNodes(g, none, {"Exp_0", "Neg_2"}, h200(), checkPlan(g, none), "u1");
    EXPECT_FALSE(a.ok);
    EXPECT_EQ(a.node, "Neg_2");
    EXPECT_EQ(a.message, "merging Exp_0 and Neg_2 would form a cycle through Add_1");
    // The edge texts (--why-not, the GUI's tooltips) use the same words.
    const ir::Graph d = ft::dwPwBlock();
    const FusionPlan dn = planNone(d);
    const FuseAttempt c = fuseNodes(d, dn, {"Conv_0", "Conv_2"}, h200(), checkPlan(d, dn), "u1");
    EXPECT_FALSE(c.ok);
    EXPECT_EQ(c.message, "merging Conv_0 and Conv_2 would form a cycle through Clip_1");
    // A plan file that really has such groups keeps checkPlan's wording.
    FusionPlan bad = dn;
    bad.groups.clear();
    auto group = [](std::string name, FusionKind kind, std::vector<std::string> ops, std::string anchor,
                    std::vector<std::string> epilogue = {}) {
        FusionGroup g;
        g.name = std::move(name);
        g.kind = kind;
        g.ops = std::move(ops);
        g.anchor = std::move(anchor);
        g.epilogue = std::move(epilogue);
        return g;
    };
    bad.groups.push_back(group("g0", FusionKind::PrologueEpilogue, {"Conv_0", "Conv_2"}, "Conv_0", {"Conv_2"}));
    bad.groups.push_back(group("g1", FusionKind::Single, {"Clip_1"}, "Clip_1"));
    bad.groups.push_back(group("g2", FusionKind::Single, {"Clip_3"}, "Clip_3"));
    bool cycle = false;
    for (const FusionViolation& v : checkPlan(d, bad, nullptr)) {
        if (v.rule == "cycle") {
            EXPECT_EQ(v.message, "groups g0 and g1 form a cycle: they cannot run in any order");
            cycle = true;
        }
    }
    EXPECT_TRUE(cycle);
}

TEST(FusionEdit, MergingConvChainsGivesTheConvChainReason) {
    const ir::Graph g = ft::fourConvs();
    const FusionPlan none = planNone(g);
    const FuseAttempt first = fuseNodes(g, none, {"Conv_0", "Conv_1"}, h200(), checkPlan(g, none), "u1");
    ASSERT_TRUE(first.ok) << first.message;
    EXPECT_EQ(first.plan.groups[0].kind, FusionKind::DwPw);
    const FuseAttempt second =
        fuseNodes(g, first.plan, {"Conv_2", "Conv_3"}, h200(), checkPlan(g, first.plan), "u2");
    ASSERT_TRUE(second.ok) << second.message;
    EXPECT_EQ(second.plan.groups[1].kind, FusionKind::PwDw);
    const FuseAttempt both = fuseNodes(g, second.plan, {"Conv_1", "Conv_2"}, h200(), checkPlan(g, second.plan), "u3");
    EXPECT_FALSE(both.ok);
    EXPECT_EQ(both.node, "Conv_2");
    EXPECT_EQ(both.message, "merging u1 and u2 would give a group with 4 convolutions; a conv chain has 2");
    const auto edges = crossingEdgeReasons(g, second.plan, h200());
    ASSERT_EQ(edges.size(), 1u);
    EXPECT_EQ(edgeReasonText(edges[0], "Ctrl+G"), "Conv_1 (u1) \u2192 Conv_2 (u2): not one kernel\nmerging u1 and u2 "
                                                  "would give a group with 4 convolutions; a conv chain has 2");

    // Two convolutions of kinds that make no chain: the chain rule they break, not "not injective".
    const ir::Graph s = ft::standardThenDepthwise();
    const FusionPlan sn = planNone(s);
    const FuseAttempt r = fuseNodes(s, sn, {"Conv_0", "Conv_1"}, h200(), checkPlan(s, sn), "u1");
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.node, "Conv_0");
    EXPECT_EQ(r.message, "Conv_0 is not pointwise (kernel 3x3, group 1, strides [1,1], pads [1,1,1,1])");
}

TEST(FusionEdit, AnInjectiveIndexOpAnchorsItsElementwiseConsumer) {
    // Slice_0 cannot be a prologue of Relu_1, but Relu_1 can be Slice_0's epilogue.
    const ir::Graph g = ft::sliceRelu();
    const FusionPlan none = planNone(g);
    const FuseAttempt a = fuseNodes(g, none, {"Slice_0", "Relu_1"}, h200(), checkPlan(g, none), "u1");
    ASSERT_TRUE(a.ok) << a.message;
    ASSERT_EQ(a.plan.groups.size(), 1u);
    EXPECT_EQ(a.plan.groups[0].anchor, "Slice_0");
    EXPECT_TRUE(a.plan.groups[0].prologue.empty());
    EXPECT_EQ(a.plan.groups[0].epilogue, Names{"Relu_1"});
    EXPECT_TRUE(checkPlan(g, a.plan, nullptr).empty());
    const auto edges = crossingEdgeReasons(g, none, h200());
    ASSERT_EQ(edges.size(), 1u);
    EXPECT_EQ(edgeReasonText(edges[0], "Ctrl+G"), "Slice_0 \u2192 Relu_1: not one kernel\nfusible: select both nodes and Fuse (Ctrl+G)");
}

}  // namespace
}  // namespace tessera::schedule
