// Shape inference for If / Loop / Scan (core/ir/ops/control_flow_ops.cpp): outputs come from the
// bodies' inferred outputs, as the ONNX operator specs define them.
#include <gtest/gtest.h>

#include "tests/core/test_ir_helpers.h"

namespace tessera::ir {
namespace {

using test::In;
using test::runOne;
using test::ty;

/// A body graph with typed inputs (name, type) and one Identity-like node per output:
/// output i is produced by `ops[i]` applied to input `from[i]`.
std::shared_ptr<Graph> body(const std::vector<std::pair<std::string, std::string>>& inputs,
                            const std::vector<std::tuple<std::string, std::string, std::string>>& outs) {
    auto g = std::make_shared<Graph>();
    g->name = "body";
    for (const auto& [name, type] : inputs) {
        Value v;
        v.name = name;
        v.type = ty(type);
        v.isGraphInput = true;
        g->inputs().push_back(g->addValue(v));
    }
    int i = 0;
    for (const auto& [op, from, outName] : outs) {
        Value o;
        o.name = outName;
        const ValueId oid = g->addValue(o);
        Node n;
        n.name = "b" + std::to_string(i++);
        n.opType = op;
        n.inputs = {g->findValue(from)};
        n.outputs = {oid};
        g->addNode(n);
        g->value(oid).isGraphOutput = true;
        g->outputs().push_back(oid);
    }
    return g;
}

TEST(IrControlFlow, IfMergesBranchShapes) {
    auto thenG = body({{"a", "f32[2,8]"}}, {{"Relu", "a", "t"}});
    auto elseG = body({{"b", "f32[2,5]"}}, {{"Relu", "b", "e"}});
    // Bodies read their own declared inputs here (enough for shape purposes).
    auto r = runOne("If", {test::in("bool[]")},
                    {{"then_branch", Attribute::ofGraph(thenG)}, {"else_branch", Attribute::ofGraph(elseG)}});
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(), "f32[2,?]");  // the branches disagree on dim 1
}

TEST(IrControlFlow, IfBranchDtypeMismatchNamesBoth) {
    auto thenG = body({{"a", "f32[2]"}}, {{"Relu", "a", "t"}});
    auto elseG = body({{"b", "i64[2]"}}, {{"Identity", "b", "e"}});
    auto r = runOne("If", {test::in("bool[]")},
                    {{"then_branch", Attribute::ofGraph(thenG)}, {"else_branch", Attribute::ofGraph(elseG)}});
    EXPECT_NE(r.error().find("then_branch gives f32[2] but else_branch gives i64[2]"), std::string::npos) << r.error();
}

TEST(IrControlFlow, IfConditionMustBeBool) {
    auto g = body({{"a", "f32[2]"}}, {{"Relu", "a", "t"}});
    auto r = runOne("If", {test::in("f32[]")}, {{"then_branch", Attribute::ofGraph(g)}, {"else_branch", Attribute::ofGraph(g)}});
    EXPECT_NE(r.error().find("condition must be bool"), std::string::npos) << r.error();
}

TEST(IrControlFlow, LoopCarriesAndStacksScanOutputs) {
    // body(iter, cond, acc) -> (cond, acc', scan): scan is per-iteration f32[4]
    auto g = body({{"iter", "i64[]"}, {"cond", "bool[]"}, {"acc", "f32[4]"}},
                  {{"Identity", "cond", "cond_out"}, {"Relu", "acc", "acc_out"}, {"Sigmoid", "acc", "scan"}});
    // M = 5 constant and no condition input: 5 iterations.
    auto r = runOne("Loop", {test::ints({5}), test::absent(), test::in("f32[4]")}, {{"body", Attribute::ofGraph(g)}}, 2);
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(0), "f32[4]");
    EXPECT_EQ(r.out(1), "f32[5,4]");
    EXPECT_FALSE(r.flops.has_value());  // trip count and branches are run-time facts
}

TEST(IrControlFlow, LoopWithConditionHasUnknownTripCount) {
    auto g = body({{"iter", "i64[]"}, {"cond", "bool[]"}, {"acc", "f32[4]"}},
                  {{"Identity", "cond", "cond_out"}, {"Relu", "acc", "acc_out"}, {"Sigmoid", "acc", "scan"}});
    auto r = runOne("Loop", {test::ints({5}), test::in("bool[]"), test::in("f32[4]")}, {{"body", Attribute::ofGraph(g)}}, 2);
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(1), "f32[?,4]");
}

TEST(IrControlFlow, LoopOutputCountMismatchIsAnError) {
    auto g = body({{"iter", "i64[]"}, {"cond", "bool[]"}, {"acc", "f32[4]"}},
                  {{"Identity", "cond", "cond_out"}, {"Relu", "acc", "acc_out"}});
    auto r = runOne("Loop", {test::ints({5}), test::absent(), test::in("f32[4]")}, {{"body", Attribute::ofGraph(g)}}, 3);
    EXPECT_NE(r.error().find("body gives 1 loop-carried + 0 scan outputs"), std::string::npos) << r.error();
}

TEST(IrControlFlow, ScanInsertsSequenceAxis) {
    // state s: f32[3]; scan input x: f32[7,3] along axis 0; body(s, x_t) -> (s', y_t: f32[3])
    auto g = body({{"s", "f32[3]"}, {"xt", "f32[3]"}}, {{"Relu", "s", "s_out"}, {"Sigmoid", "xt", "y"}});
    auto r = runOne("Scan", {test::in("f32[3]"), test::in("f32[7,3]")},
                    {{"body", Attribute::ofGraph(g)}, {"num_scan_inputs", Attribute::ofInt(1)},
                     {"scan_output_axes", Attribute::ofInts({1})}},
                    2);
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(0), "f32[3]");
    EXPECT_EQ(r.out(1), "f32[3,7]");  // sequence axis inserted at scan_output_axes[0] = 1
}

TEST(IrControlFlow, MissingBodyIsReported) {
    auto r = runOne("Loop", {test::ints({5}), test::absent(), test::in("f32[4]")}, {}, 1);
    EXPECT_NE(r.error(), "");
}

}  // namespace
}  // namespace tessera::ir
