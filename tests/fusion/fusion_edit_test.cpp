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
    note.plannerNote = "FusePlanner did not fuse dw-pw Conv_0 -> Conv_2 on h200: fused traffic 9.19 MB is not below separate 8.43 MB";
    EXPECT_EQ(edgeReasonText(note, "Ctrl+G"),
              "Clip_1 (g0) \u2192 Conv_2 (g1): not one kernel\nFusePlanner did not fuse dw-pw Conv_0 -> Conv_2 on h200: fused "
              "traffic 9.19 MB is not below separate 8.43 MB\nThe rules allow it: select both nodes and Fuse (Ctrl+G)");
}

}  // namespace
}  // namespace tessera::schedule
