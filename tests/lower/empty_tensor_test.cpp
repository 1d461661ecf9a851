// Nodes whose outputs have no elements (a batch of 0): lowering gives a kernel with the node's
// parameters and no body on both targets, instead of task mappings over zero extents (which
// divided by zero in MatMul's tile arithmetic and crashed Conv's mapping composition).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/lower/lower.h"
#include "core/test_ir_helpers.h"
#include "lower/test_lower_basic_util.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::lower::test {
namespace {

using ir::test::Attrs;
using ir::test::in;
using ir::test::runOne;

TEST(EmptyTensors, NodesWithEmptyOutputsLowerToKernelsWithoutWork) {
    struct Case {
        std::string op;
        std::vector<ir::test::In> ins;
        Attrs attrs;
    };
    const std::vector<Case> cases{
        {"MatMul", {in("f32[0,4]"), in("f32[4,3]")}, {}},
        {"Conv", {in("f32[0,1,10]"), in("f32[6,1,3]")}, {}},
        {"Conv", {in("f32[0,3,8,8]"), in("f32[16,3,3,3]"), in("f32[16]")}, {{"pads", ir::Attribute::ofInts({1, 1, 1, 1})}}},
        {"Gemm", {in("f32[0,8]"), in("f32[8,5]")}, {}},
        {"Relu", {in("f32[2,0,3]")}, {}},
    };
    for (const auto& c : cases) {
        for (Target target : {Target::Cpu, Target::Cuda}) {
            SCOPED_TRACE(c.op + (target == Target::Cpu ? " cpu" : " cuda"));
            auto one = runOne(c.op, c.ins, c.attrs);
            ASSERT_EQ(one.error(), "");
            LowerOptions lo;
            lo.target = target;
            auto lk = lowerNode(one.g, 0, nullptr, lo);
            ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
            EXPECT_EQ(lk->inputs.size(), c.ins.size());
            EXPECT_EQ(lk->outputs.size(), 1u);
            EXPECT_EQ(lk->kernel.notes.back(), "every output has no elements: nothing to compute");
            // The interpreter runs it (nothing happens) and the reference agrees on the empty output.
            EXPECT_EQ(checkAgainstReference(one.g, makeInputs(one.g, 2), nullptr, lo), "");
        }
    }
}

}  // namespace
}  // namespace tessera::lower::test
