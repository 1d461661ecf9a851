// planHidet (core/schedule/planners.h): Hidet's anchor / epilogue / prologue / leftover rules on
// small graphs built in code (tests/fusion/fusion_test_graphs.h) and on the MobileNetV2 sample.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/pipeline/load_model.h"
#include "core/schedule/fusion_plan.h"
#include "core/schedule/planners.h"
#include "fusion/fusion_test_graphs.h"

namespace tessera::schedule {
namespace {

using Names = std::vector<std::string>;
namespace ft = fusion_test;

/// "name:kind:op1,op2 | ..." for compact exact comparisons.
std::string summary(const FusionPlan& p) {
    std::string s;
    for (const auto& gr : p.groups) {
        if (!s.empty()) s += " | ";
        s += gr.name + ":" + fusionKindName(gr.kind) + ":";
        for (std::size_t i = 0; i < gr.ops.size(); ++i) s += (i ? "," : "") + gr.ops[i];
    }
    return s;
}

std::vector<ir::NodeId> ids(const ir::Graph& g, const Names& names) {
    std::vector<ir::NodeId> out;
    for (const auto& n : names) out.push_back(g.findNode(n));
    return out;
}

TEST(HidetPlanner, ConvReluEpilogueFuses) {
    const ir::Graph g = ft::convRelu();
    const FusionPlan p = planHidet(g);
    EXPECT_EQ(p.planner, "hidet");
    ASSERT_EQ(p.groups.size(), 1u);
    const FusionGroup& gr = p.groups[0];
    EXPECT_EQ(gr.name, "g0");
    EXPECT_EQ(gr.kind, FusionKind::PrologueEpilogue);
    EXPECT_EQ(gr.ops, (Names{"Conv_0", "Relu_1"}));
    EXPECT_EQ(gr.anchor, "Conv_0");
    EXPECT_EQ(gr.prologue, Names{});
    EXPECT_EQ(gr.epilogue, Names{"Relu_1"});
    EXPECT_EQ(gr.reason, "anchor Conv_0; epilogue Relu_1");
    // x 1*8*16*16*4 + w 16*8*3*3*4 + y 1*16*16*16*4; c stays inside: written and read once less.
    EXPECT_EQ(gr.predictedBytes, 8192 + 4608 + 16384);
    EXPECT_EQ(gr.predictedBytesSaved, 2 * 16384);
    EXPECT_EQ(gr.redundantFlops, 0);
    EXPECT_EQ(p.fusedGroupCount(), 1);
    EXPECT_TRUE(checkPlan(g, p).empty());
}

TEST(HidetPlanner, ConvOutputWithTwoUsesIsNotFused) {
    const ir::Graph g = ft::convRelu(2);
    const FusionPlan p = planHidet(g);
    EXPECT_EQ(summary(p), "g0:single:Conv_0 | g1:single:Relu_1 | g2:single:Sigmoid_2");
    EXPECT_EQ(p.groups[0].reason, "anchor Conv_0; no epilogue: Relu_1's input 'c' has 2 uses");
    EXPECT_EQ(p.groups[1].reason, "leftover Relu_1");
    EXPECT_EQ(epilogueRefusal(g, g.findValue("c"), g.findNode("Relu_1"), ids(g, {"Conv_0"})),
              "Relu_1's input 'c' has 2 uses");
    EXPECT_EQ(p.fusedGroupCount(), 0);
    EXPECT_TRUE(checkPlan(g, p).empty());
}

TEST(HidetPlanner, ConvOutputThatIsAGraphOutputIsNotFused) {
    const ir::Graph g = ft::convRelu(1, true);
    const FusionPlan p = planHidet(g);
    EXPECT_EQ(summary(p), "g0:single:Conv_0 | g1:single:Relu_1");
    EXPECT_EQ(epilogueRefusal(g, g.findValue("c"), g.findNode("Relu_1"), ids(g, {"Conv_0"})),
              "'c' is a graph output, so Relu_1 cannot be an epilogue");
    EXPECT_EQ(p.groups[0].reason, "anchor Conv_0; no epilogue: 'c' is a graph output");
}

TEST(HidetPlanner, MatmulBiasBroadcastReluFuses) {
    const ir::Graph g = ft::matmulBiasRelu();
    const FusionPlan p = planHidet(g);
    ASSERT_EQ(p.groups.size(), 1u);
    EXPECT_EQ(p.groups[0].ops, (Names{"MatMul_0", "Add_1", "Relu_2"}));
    EXPECT_EQ(p.groups[0].epilogue, (Names{"Add_1", "Relu_2"}));
    EXPECT_EQ(p.groups[0].reason, "anchor MatMul_0; epilogue Add_1, Relu_2");
    // a 512 + w 2048 + bias 64 + y 256; m and s (256 bytes each) stay inside.
    EXPECT_EQ(p.groups[0].predictedBytes, 512 + 2048 + 64 + 256);
    EXPECT_EQ(p.groups[0].predictedBytesSaved, 2 * (256 + 256));
    EXPECT_TRUE(checkPlan(g, p).empty());
}

TEST(HidetPlanner, BroadcastUpOfTheGroupOutputIsNotInvertible) {
    const ir::Graph g = ft::reduceBroadcastAdd();
    EXPECT_EQ(g.value(g.findValue("r")).type.str(), "f32[1,16]");
    const FusionPlan p = planHidet(g);
    EXPECT_EQ(summary(p), "g0:single:ReduceSum_0 | g1:single:Add_1");
    EXPECT_EQ(epilogueRefusal(g, g.findValue("r"), g.findNode("Add_1"), ids(g, {"ReduceSum_0"})),
              "Add_1 is not invertible for 'r': it broadcasts [1,16] up to [4,16]");
}

TEST(HidetPlanner, TransposeIsAnEpilogueAndAPrologue) {
    // Hidet's epilogue rule: a Transpose is invertible (an index permutation), so MatMul_0 grows
    // Transpose_1 and then Relu_2.
    const ir::Graph g = ft::matmulTranspose();
    const FusionPlan p = planHidet(g);
    EXPECT_EQ(summary(p), "g0:prologue-epilogue:MatMul_0,Transpose_1,Relu_2");
    EXPECT_EQ(p.groups[0].epilogue, (Names{"Transpose_1", "Relu_2"}));
    EXPECT_EQ(p.groups[0].reason, "anchor MatMul_0; epilogue Transpose_1, Relu_2");
    EXPECT_EQ(epilogueRefusal(g, g.findValue("m"), g.findNode("Transpose_1"), ids(g, {"MatMul_0"})), "");
    EXPECT_EQ(prologueRefusal(g, g.findNode("Transpose_1"), ids(g, {"Relu_2"})), "");
    EXPECT_TRUE(checkPlan(g, p).empty());
}

TEST(HidetPlanner, IndexMapsOnBothSidesOfAnAnchor) {
    const ir::Graph g = ft::indexMapsAroundMatmul();
    const FusionPlan p = planHidet(g);
    EXPECT_EQ(summary(p), "g0:prologue-epilogue:Transpose_0,Reshape_1,MatMul_2,Flatten_3,Sigmoid_4");
    EXPECT_EQ(p.groups[0].prologue, (Names{"Transpose_0", "Reshape_1"}));
    EXPECT_EQ(p.groups[0].epilogue, (Names{"Flatten_3", "Sigmoid_4"}));
    EXPECT_TRUE(checkPlan(g, p).empty());
    // t has a second use (Abs_5): Transpose_0 cannot be a prologue of MatMul_2's group, and a
    // multi-use tensor is no epilogue input either.
    const ir::Graph g2 = ft::indexMapsAroundMatmul(true);
    EXPECT_EQ(prologueRefusal(g2, g2.findNode("Transpose_0"), ids(g2, {"Reshape_1", "MatMul_2"})),
              "Transpose_0's output 't' is also read by Abs_5 outside the group");
    EXPECT_EQ(epilogueRefusal(g2, g2.findValue("t"), g2.findNode("Reshape_1"), ids(g2, {"Transpose_0"})),
              "Reshape_1's input 't' has 2 uses");
    const FusionPlan p2 = planHidet(g2);
    EXPECT_EQ(summary(p2),
              "g0:single:Transpose_0 | g1:prologue-epilogue:Reshape_1,MatMul_2,Flatten_3,Sigmoid_4 | g2:single:Abs_5");
    EXPECT_TRUE(checkPlan(g2, p2).empty());
}

TEST(HidetPlanner, SliceIsNotAnEpilogueButAnchorsItsOwn) {
    const ir::Graph g = ft::matmulSlice();
    const FusionPlan p = planHidet(g);
    // The Slice is neither MatMul_0's epilogue nor Relu_2's prologue, but anchors Relu_2 as epilogue.
    EXPECT_EQ(summary(p), "g0:single:MatMul_0 | g1:prologue-epilogue:Slice_1,Relu_2");
    EXPECT_EQ(p.groups[0].reason, "anchor MatMul_0; no epilogue: Slice_1 is not invertible for 'm': Slice keeps only part of its input");
    EXPECT_EQ(p.groups[1].anchor, "Slice_1");
    EXPECT_EQ(p.groups[1].epilogue, Names{"Relu_2"});
    EXPECT_EQ(p.groups[1].reason, "anchor Slice_1; epilogue Relu_2");
    EXPECT_TRUE(checkPlan(g, p).empty());
    EXPECT_EQ(prologueRefusal(g, g.findNode("Slice_1"), ids(g, {"Relu_2"})),
              "Slice_1 (Slice) is not inlined into loads: only elementwise ops, Transpose and the Reshape family are");
    const ir::Graph s = ft::sliceRelu();
    EXPECT_EQ(summary(planHidet(s)), "g0:prologue-epilogue:Slice_0,Relu_1");
}

TEST(HidetPlanner, PrologueOfAGraphInputFuses) {
    const ir::Graph g = ft::reluMatmul();
    const FusionPlan p = planHidet(g);
    ASSERT_EQ(p.groups.size(), 1u);
    EXPECT_EQ(p.groups[0].ops, (Names{"Relu_0", "MatMul_1"}));
    EXPECT_EQ(p.groups[0].anchor, "MatMul_1");
    EXPECT_EQ(p.groups[0].prologue, Names{"Relu_0"});
    EXPECT_EQ(p.groups[0].epilogue, Names{});
    EXPECT_EQ(p.groups[0].reason, "anchor MatMul_1; prologue Relu_0; no epilogue: 'y' is a graph output");
    EXPECT_EQ(prologueRefusal(g, g.findNode("Relu_0"), ids(g, {"MatMul_1"})), "");
    EXPECT_TRUE(checkPlan(g, p).empty());
}

TEST(HidetPlanner, ExpensivePrologueOfAGemmGetsItsOwnKernel) {
    // The GELU's Erf would run once per column tile of MatMul_7 as its prologue: the chain is a
    // kernel of its own (computed once per element); MatMul_0 keeps its bias epilogue.
    const ir::Graph g = ft::mlpGelu();
    const FusionPlan p = planHidet(g);
    EXPECT_EQ(summary(p), "g0:prologue-epilogue:MatMul_0,Add_1 | g1:prologue-epilogue:Div_2,Erf_3,Add_4,Mul_5,Mul_6 | "
                          "g2:single:MatMul_7");
    EXPECT_EQ(p.groups[0].reason, "anchor MatMul_0; epilogue Add_1");
    EXPECT_EQ(p.groups[1].reason, "leftover Mul_6; prologue Div_2, Erf_3, Add_4, Mul_5");
    EXPECT_EQ(p.groups[2].reason,
              "anchor MatMul_7; prologue Erf_3 (Erf) left to its own kernel: MatMul would recompute it for every "
              "column tile; no epilogue: 'y' is a graph output");
    // The rule is the planner's preference, not a legality rule: a user may still fuse it.
    EXPECT_EQ(prologueRefusal(g, g.findNode("Mul_6"), ids(g, {"MatMul_7"})), "");
    EXPECT_TRUE(checkPlan(g, p).empty());
    // Cheap prologues still fuse into a GEMM (Relu above; a Tanh would not).
    EXPECT_EQ(summary(planHidet(ft::reluMatmul())), "g0:prologue-epilogue:Relu_0,MatMul_1");
}

TEST(HidetPlanner, NoPrologueFeedsAnEpilogue) {
    // x f32[4,8] -> Slice_0 -> s [4,4] -> Where_2(nb, s, z) -> y, nb = Not_1(b): Where is the
    // Slice's epilogue; the Not feeds only that epilogue, so it is no prologue (its output would
    // be an epilogue's other input computed inside the group) but a group of its own.
    ir::test::Builder b;
    b.input("x", "f32[4,8]");
    b.input("b", "bool[4,4]");
    b.init("st", ir::TensorData::fromInts({0}, {1}));
    b.init("en", ir::TensorData::fromInts({4}, {1}));
    b.init("ax", ir::TensorData::fromInts({1}, {1}));
    b.init("z", ft::ramp({4, 4}));
    b.node("Slice", "Slice_0", {"x", "st", "en", "ax"}, {"s"});
    b.node("Not", "Not_1", {"b"}, {"nb"});
    b.node("Where", "Where_2", {"nb", "s", "z"}, {"y"});
    b.output("y");
    ASSERT_TRUE(ft::ok(b.g));
    const FusionPlan p = planHidet(b.g);
    EXPECT_EQ(summary(p), "g0:single:Not_1 | g1:prologue-epilogue:Slice_0,Where_2");
    EXPECT_TRUE(checkPlan(b.g, p).empty());
}

TEST(HidetPlanner, PrologueWhoseOutputEscapesIsNotFused) {
    const ir::Graph g = ft::reluMatmul(true);
    const FusionPlan p = planHidet(g);
    EXPECT_EQ(summary(p), "g0:single:Relu_0 | g1:single:MatMul_1 | g2:single:Tanh_2");
    EXPECT_EQ(prologueRefusal(g, g.findNode("Relu_0"), ids(g, {"MatMul_1"})),
              "Relu_0's output 'r' is also read by Tanh_2 outside the group");
    EXPECT_EQ(prologueRefusal(g, g.findNode("MatMul_1"), ids(g, {"Tanh_2"})), "MatMul_1 does not feed the group");
}

TEST(HidetPlanner, LeftoverElementwiseChainsAnchorThemselvesBackwards) {
    const ir::Graph g = ft::elementwiseChain();
    const FusionPlan p = planHidet(g);
    EXPECT_EQ(summary(p),
              "g0:prologue-epilogue:Exp_0,Add_1 | g1:prologue-epilogue:Neg_2,Sigmoid_3 | g2:single:Abs_4");
    EXPECT_EQ(p.groups[0].anchor, "Add_1");
    EXPECT_EQ(p.groups[0].prologue, Names{"Exp_0"});
    EXPECT_EQ(p.groups[0].reason, "leftover Add_1; prologue Exp_0");
    EXPECT_EQ(p.groups[1].reason, "leftover Sigmoid_3; prologue Neg_2");
    // Exp_0: x and z in (256 bytes each), s out; e stays inside.
    EXPECT_EQ(p.groups[0].predictedBytes, 3 * 256);
    EXPECT_EQ(p.groups[0].predictedBytesSaved, 2 * 256);
    EXPECT_TRUE(checkPlan(g, p).empty());
}

TEST(HidetPlanner, ConstantsStayOutAndClipFusesAsEpilogue) {
    const ir::Graph g = ft::dwPwBlock();
    const FusionPlan p = planHidet(g);
    EXPECT_EQ(summary(p), "g0:prologue-epilogue:Conv_0,Clip_1 | g1:prologue-epilogue:Conv_2,Clip_3");
    EXPECT_EQ(p.groupOf("Constant_a"), -1);
    EXPECT_TRUE(checkPlan(g, p).empty());
}

TEST(HidetPlanner, SeedGroupsAreKept) {
    const ir::Graph g = ft::dwPwBlock();
    FusionPlan seed;
    seed.planner = "fuseplanner";
    seed.hardware = "h200";
    FusionGroup chain;
    chain.name = "pair";
    chain.kind = FusionKind::DwPw;
    chain.ops = {"Conv_0", "Clip_1", "Conv_2"};
    chain.anchor = "Conv_0";
    chain.tile = FusionTile{4, 4, 32, 64};
    chain.predictedBytes = 1000;
    chain.reason = "seeded";
    seed.groups.push_back(chain);
    const FusionPlan p = planHidet(g, &seed);
    EXPECT_EQ(summary(p), "g0:dw-pw:Conv_0,Clip_1,Conv_2 | g1:single:Clip_3");
    EXPECT_EQ(p.groups[0].tile, (FusionTile{4, 4, 32, 64}));
    EXPECT_EQ(p.groups[0].reason, "seeded");
    EXPECT_EQ(p.groups[0].predictedBytes, 1000);
    EXPECT_EQ(p.groups[1].reason, "leftover Clip_3");
    EXPECT_EQ(p.hardware, "h200");
}

TEST(HidetPlanner, UnknownOpsAreSingleAndNotFusible) {
    ir::test::Builder b;
    b.input("x", "f32[4]");
    b.node("Relu", "Relu_0", {"x"}, {"r"});
    b.node("Mystery", "Mystery_1", {"r"}, {"m"}, {}, "com.example");
    b.node("Relu", "Relu_2", {"m"}, {"y"});
    b.output("y");
    ir::inferShapes(b.g, "t");
    const FusionPlan p = planHidet(b.g);
    EXPECT_EQ(summary(p), "g0:single:Relu_0 | g1:single:Mystery_1 | g2:single:Relu_2");
    EXPECT_EQ(p.groups[1].reason, "Mystery_1 (Mystery) is not fusible: unknown op");
    EXPECT_EQ(prologueRefusal(b.g, b.g.findNode("Mystery_1"), ids(b.g, {"Relu_2"})),
              "Mystery_1 (Mystery) is not fusible: unknown op");
}

TEST(HidetPlanner, OtherInputReadingTheGroupIsRefused) {
    ir::test::Builder b;
    b.input("a", "f32[4,8]");
    b.init("w", ft::ramp({8, 8}));
    b.node("MatMul", "MatMul_0", {"a", "w"}, {"m"});
    b.node("Relu", "Relu_1", {"m"}, {"r"});
    b.node("Neg", "Neg_2", {"r"}, {"n"});
    b.node("Add", "Add_3", {"n", "r"}, {"y"});
    b.output("y");
    ASSERT_TRUE(ft::ok(b.g));
    EXPECT_EQ(epilogueRefusal(b.g, b.g.findValue("n"), b.g.findNode("Add_3"), ids(b.g, {"MatMul_0", "Relu_1", "Neg_2"})),
              "Add_3's other input 'r' is an output of the group");
    const FusionPlan p = planHidet(b.g);
    EXPECT_EQ(summary(p), "g0:prologue-epilogue:MatMul_0,Relu_1 | g1:prologue-epilogue:Neg_2,Add_3");
    EXPECT_TRUE(checkPlan(b.g, p).empty());
}

// MobileNetV2 (samples/mobilenet_v2.onnx): 52 convolutions, 35 Clip (ReLU6), 10 residual Adds,
// GlobalAveragePool, Flatten, Gemm.
TEST(HidetPlanner, MobileNetV2) {
    auto m = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/mobilenet_v2.onnx");
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    const ir::Graph& g = m->graph;
    const FusionPlan p = planHidet(g);
    // 54 kernels: the Flatten after GlobalAveragePool is its epilogue (an index map).
    EXPECT_EQ(p.groups.size(), 54u);
    EXPECT_EQ(p.fusedGroupCount(), 46);
    int convs = 0, clips = 0, adds = 0;
    for (std::size_t n = 0; n < g.numNodes(); ++n) {
        const ir::Node& node = g.node(static_cast<ir::NodeId>(n));
        const int gi = p.groupOf(node.name);
        if (node.opType == "Constant") {
            EXPECT_EQ(gi, -1) << node.name;
            continue;
        }
        ASSERT_GE(gi, 0) << node.name;
        const FusionGroup& gr = p.groups[static_cast<std::size_t>(gi)];
        if (node.opType == "Conv") {
            ++convs;
            EXPECT_EQ(gr.anchor, node.name);
            const auto& cons = g.consumers(node.outputs[0]);
            if (cons.size() == 1 && g.node(cons[0]).opType == "Clip") {
                EXPECT_EQ(gr.ops, (Names{node.name, g.node(cons[0]).name}));
                EXPECT_EQ(gr.epilogue, Names{g.node(cons[0]).name});
            }
        }
        if (node.opType == "Clip") {
            ++clips;
            EXPECT_EQ(g.node(g.producer(node.inputs[0])).opType, "Conv");
            EXPECT_EQ(gr.epilogue, Names{node.name});
        }
        if (node.opType == "Add") {
            ++adds;
            EXPECT_EQ(g.node(g.findNode(gr.anchor)).opType, "Conv");
            EXPECT_EQ(gr.epilogue, Names{node.name});
        }
    }
    EXPECT_EQ(convs, 52);
    std::string gap, flatten;
    for (std::size_t n = 0; n < g.numNodes(); ++n) {
        const ir::Node& node = g.node(static_cast<ir::NodeId>(n));
        if (node.opType == "GlobalAveragePool") gap = node.name;
        if (node.opType == "Flatten") flatten = node.name;
    }
    ASSERT_GE(p.groupOf(flatten), 0);
    const FusionGroup& head = p.groups[static_cast<std::size_t>(p.groupOf(flatten))];
    EXPECT_EQ(head.ops, (Names{gap, flatten}));
    EXPECT_EQ(head.anchor, gap);
    EXPECT_EQ(head.epilogue, Names{flatten});
    EXPECT_EQ(clips, 35);
    EXPECT_EQ(adds, 10);
    const auto violations = checkPlan(g, p);
    EXPECT_TRUE(violations.empty()) << (violations.empty() ? "" : violations[0].message);
    EXPECT_EQ(p.groups.back().ops, Names{"/classifier/classifier.1/Gemm"});
    EXPECT_EQ(p.groups.back().reason, "anchor /classifier/classifier.1/Gemm; no epilogue: 'output' is a graph output");
    // Groups are named in order and ordered topologically (normalizePlan keeps the order).
    for (std::size_t i = 0; i < p.groups.size(); ++i) EXPECT_EQ(p.groups[i].name, "g" + std::to_string(i));
    auto again = normalizePlan(g, p);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(summary(*again), summary(p));

    const FusionPlan none = planNone(g);
    EXPECT_EQ(none.groups.size(), 52u + 35u + 10u + 3u);
    EXPECT_TRUE(checkPlan(g, none).empty());
}

}  // namespace
}  // namespace tessera::schedule
