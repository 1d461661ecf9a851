// The reference interpreter's If, Loop and Scan (core/eval/reference_control_flow.cpp): the
// control-flow sample against its recorded output, hand-built graphs with exact expected values
// (outer-scope names, nested bodies, scan axes and directions, runaway loops, errors inside a
// body), and the ONNX node tests of these ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/eval/compare.h"
#include "core/eval/reference_interpreter.h"
#include "core/frontend/onnx/onnx_importer.h"
#include "core/ir/npy.h"
#include "core/ir/shape_inference.h"
#include "core/pipeline/conformance_cases.h"
#include "core/test_ir_helpers.h"

using namespace tessera;
using ir::Attribute;
using ir::TensorData;
using Dims = std::vector<std::int64_t>;
namespace fs = std::filesystem;

namespace {

std::string firstError(const support::DiagnosticList& d) {
    const auto* e = d.firstError();
    return e ? e->where + ": " + e->message : std::string("<no error>");
}

TensorData f32(const std::vector<float>& v, Dims dims) { return TensorData::fromFloats(v, std::move(dims)); }
TensorData i64Scalar(std::int64_t v) { return TensorData::fromInts({v}, {}); }
TensorData boolScalar(bool v) {
    TensorData t;
    t.dtype = ir::DType::Bool;
    t.bytes = {static_cast<std::uint8_t>(v ? 1 : 0)};
    return t;
}

std::shared_ptr<ir::Graph> finish(ir::test::Builder& b, const std::string& name) {
    auto g = std::make_shared<ir::Graph>(std::move(b.g));
    g->name = name;
    return g;
}

/// then: y = x + k (both from the enclosing graph); else: a nested If on c2 whose branches read
/// x (two scopes up) and m (defined in the else branch itself).
ir::test::Builder ifGraph() {
    ir::test::Builder thenB;
    thenB.node("Add", "then_add", {"x", "k"}, {"then_y"});
    thenB.output("then_y");

    ir::test::Builder innerThen;
    innerThen.node("Mul", "inner_mul", {"x", "m"}, {"inner_then_y"});
    innerThen.output("inner_then_y");
    ir::test::Builder innerElse;
    innerElse.node("Sub", "inner_sub", {"m", "x"}, {"inner_else_y"});
    innerElse.output("inner_else_y");

    ir::test::Builder elseB;
    elseB.node("Neg", "else_neg", {"k"}, {"m"});
    elseB.node("If", "inner_if", {"c2"}, {"else_y"},
               {{"then_branch", Attribute::ofGraph(finish(innerThen, "inner_then"))},
                {"else_branch", Attribute::ofGraph(finish(innerElse, "inner_else"))}});
    elseB.output("else_y");

    ir::test::Builder b;
    b.input("c", "bool[]");
    b.input("c2", "bool[]");
    b.input("x", "f32[3]");
    b.init("k", f32({10, 20, 30}, {3}));
    b.node("If", "outer_if", {"c"}, {"y"},
           {{"then_branch", Attribute::ofGraph(finish(thenB, "then"))},
            {"else_branch", Attribute::ofGraph(finish(elseB, "else"))}});
    b.output("y");
    ir::inferShapes(b.g);
    return b;
}

/// Loop(M, cond, acc) whose body adds the iteration number to acc, scans acc * scale (scale
/// from the enclosing graph) and continues while iter < limit (also from the enclosing graph).
ir::test::Builder loopGraph(bool withM, bool withCond, bool condFromLimit = true) {
    ir::test::Builder body;
    body.input("iter", "i64[]");
    body.input("cond_in", "bool[]");
    body.input("acc_in", "f32[2]");
    body.node("Cast", "iter_f", {"iter"}, {"iter_f"}, {{"to", Attribute::ofInt(1)}});
    body.node("Add", "acc_add", {"acc_in", "iter_f"}, {"acc_out"});
    body.node("Mul", "scaled", {"acc_out", "scale"}, {"scan_out"});
    if (condFromLimit) body.node("Less", "go_on", {"iter", "limit"}, {"cond_out"});
    else body.node("Identity", "go_on", {"cond_in"}, {"cond_out"});
    body.output("cond_out");
    body.output("acc_out");
    body.output("scan_out");

    ir::test::Builder b;
    if (withM) b.input("M", "i64[]");
    if (withCond) b.input("cond", "bool[]");
    b.input("acc0", "f32[2]");
    b.input("limit", "i64[]");
    b.init("scale", f32({10}, {}));
    b.node("Loop", "loop", {withM ? "M" : "", withCond ? "cond" : "", "acc0"}, {"acc", "scans"},
           {{"body", Attribute::ofGraph(finish(body, "body"))}});
    b.output("acc");
    b.output("scans");
    ir::inferShapes(b.g);
    return b;
}

}  // namespace

TEST(ReferenceControlFlow, SampleMatchesRecordedOutput) {
    const std::string dir = TESSERA_SAMPLES;
    auto model = frontend::onnx::importModel(dir + "/control_flow_if.onnx");
    ASSERT_TRUE(model.ok()) << firstError(model.diagnostics());
    auto input = ir::readNpy(dir + "/control_flow_if_input.npy");
    auto expected = ir::readNpy(dir + "/control_flow_if_output.npy");
    ASSERT_TRUE(input.ok() && expected.ok());
    eval::ReferenceOptions opt;
    opt.opset = model->defaultOpset();
    auto out = eval::evaluate(model->graph, {*input}, opt);
    ASSERT_TRUE(out.ok()) << firstError(out.diagnostics());
    ASSERT_EQ(out->size(), 1u);
    const auto cmp = eval::compareTensors((*out)[0], *expected);
    EXPECT_TRUE(cmp.ok) << cmp.summary();
    EXPECT_EQ((*out)[0].dims, (Dims{2, 8}));
    // The recorded input sums below zero: else branch x - 1, then three loop trips adding x, Relu;
    // every step rounded to f32, so the result is exact.
    const auto x = input->toDoubles();
    const auto y = (*out)[0].toDoubles();
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float xf = static_cast<float>(x[i]);
        float acc = xf - 1.0f;
        for (int t = 0; t < 3; ++t) acc = acc + xf;
        EXPECT_EQ(y[i], static_cast<double>(acc > 0 ? acc : 0.0f)) << i;
        EXPECT_EQ(y[i], expected->elementAsDouble(static_cast<std::int64_t>(i))) << i;
    }

    // The negated input sums above zero: the then branch (2x) runs instead.
    std::vector<float> neg;
    for (double v : x) neg.push_back(-static_cast<float>(v));
    auto out2 = eval::evaluate(model->graph, {f32(neg, input->dims)}, opt);
    ASSERT_TRUE(out2.ok()) << firstError(out2.diagnostics());
    const auto y2 = (*out2)[0].toDoubles();
    for (std::size_t i = 0; i < neg.size(); ++i) {
        float acc = neg[i] * 2.0f;
        for (int t = 0; t < 3; ++t) acc = acc + neg[i];
        EXPECT_EQ(y2[i], static_cast<double>(acc > 0 ? acc : 0.0f)) << i;
    }
}

TEST(ReferenceControlFlow, IfPicksBranchAndSeesEveryEnclosingScope) {
    auto b = ifGraph();
    const TensorData x = f32({1, 2, 3}, {3});
    auto run = [&](bool c, bool c2) {
        auto r = eval::evaluate(b.g, {boolScalar(c), boolScalar(c2), x});
        EXPECT_TRUE(r.ok()) << firstError(r.diagnostics());
        return r.ok() ? (*r)[0].toDoubles() : std::vector<double>{};
    };
    EXPECT_EQ(run(true, false), (std::vector<double>{11, 22, 33}));    // x + k
    EXPECT_EQ(run(false, true), (std::vector<double>{-10, -40, -90}));  // x * -k
    EXPECT_EQ(run(false, false), (std::vector<double>{-11, -22, -33})); // -k - x

    // cond must hold one element.
    ir::test::Builder bad;
    bad.input("c", "bool[2]");
    ir::test::Builder t, e;
    t.node("Identity", "t", {"c"}, {"ty"});
    t.output("ty");
    e.node("Identity", "e", {"c"}, {"ey"});
    e.output("ey");
    bad.node("If", "if2", {"c"}, {"y"},
             {{"then_branch", Attribute::ofGraph(finish(t, "t"))}, {"else_branch", Attribute::ofGraph(finish(e, "e"))}});
    bad.output("y");
    TensorData two;
    two.dtype = ir::DType::Bool;
    two.dims = {2};
    two.bytes = {1, 0};
    auto r = eval::evaluate(bad.g, {two});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().firstError()->where, "node 'if2' (If)");
    EXPECT_EQ(r.diagnostics().firstError()->message, "cond must have one element, got shape [2]");
}

TEST(ReferenceControlFlow, IfBranchReadsValueOfALaterListedNode) {
    // The If node is listed before the node producing the value its branch reads: the
    // interpreter orders nodes by implicit (by-name) inputs too.
    ir::test::Builder thenB;
    thenB.node("Identity", "t", {"late"}, {"ty"});
    thenB.output("ty");
    ir::test::Builder elseB;
    elseB.node("Neg", "e", {"late"}, {"ey"});
    elseB.output("ey");
    ir::test::Builder b;
    b.input("c", "bool[]");
    b.input("x", "f32[2]");
    b.node("If", "if", {"c"}, {"y"},
           {{"then_branch", Attribute::ofGraph(finish(thenB, "then"))},
            {"else_branch", Attribute::ofGraph(finish(elseB, "else"))}});
    b.node("Relu", "producer", {"x"}, {"late"});
    b.output("y");
    ir::inferShapes(b.g);
    auto r = eval::evaluate(b.g, {boolScalar(false), f32({-1, 4}, {2})});
    ASSERT_TRUE(r.ok()) << firstError(r.diagnostics());
    EXPECT_EQ((*r)[0].toDoubles(), (std::vector<double>{-0.0, -4}));
}

TEST(ReferenceControlFlow, LoopCarriesValuesStacksScansAndStopsOnCond) {
    {
        // M = 10, but cond_out = iter < 2 turns false after the third trip.
        auto b = loopGraph(true, true);
        auto r = eval::evaluate(b.g, {i64Scalar(10), boolScalar(true), f32({1, 2}, {2}), i64Scalar(2)});
        ASSERT_TRUE(r.ok()) << firstError(r.diagnostics());
        EXPECT_EQ((*r)[0].toDoubles(), (std::vector<double>{4, 5}));
        EXPECT_EQ((*r)[1].dims, (Dims{3, 2}));
        EXPECT_EQ((*r)[1].toDoubles(), (std::vector<double>{10, 20, 20, 30, 40, 50}));
        EXPECT_EQ((*r)[1].dtype, ir::DType::F32);
    }
    {
        // M = 2 ends it first.
        auto b = loopGraph(true, true);
        auto r = eval::evaluate(b.g, {i64Scalar(2), boolScalar(true), f32({1, 2}, {2}), i64Scalar(100)});
        ASSERT_TRUE(r.ok()) << firstError(r.diagnostics());
        EXPECT_EQ((*r)[0].toDoubles(), (std::vector<double>{2, 3}));
        EXPECT_EQ((*r)[1].toDoubles(), (std::vector<double>{10, 20, 20, 30}));
    }
    {
        // cond false at the start (or M = 0): no trip; the scan output is empty with the body's shape.
        auto b = loopGraph(true, true);
        auto r = eval::evaluate(b.g, {i64Scalar(5), boolScalar(false), f32({1, 2}, {2}), i64Scalar(100)});
        ASSERT_TRUE(r.ok()) << firstError(r.diagnostics());
        EXPECT_EQ((*r)[0].toDoubles(), (std::vector<double>{1, 2}));
        EXPECT_EQ((*r)[1].dims, (Dims{0, 2}));
        auto r0 = eval::evaluate(b.g, {i64Scalar(0), boolScalar(true), f32({1, 2}, {2}), i64Scalar(100)});
        ASSERT_TRUE(r0.ok()) << firstError(r0.diagnostics());
        EXPECT_EQ((*r0)[1].dims, (Dims{0, 2}));
    }
    {
        // Without a cond input the body's cond output is ignored: M trips.
        auto b = loopGraph(true, false);
        auto r = eval::evaluate(b.g, {i64Scalar(4), f32({0, 0}, {2}), i64Scalar(0)});
        ASSERT_TRUE(r.ok()) << firstError(r.diagnostics());
        EXPECT_EQ((*r)[0].toDoubles(), (std::vector<double>{6, 6}));
        EXPECT_EQ((*r)[1].toDoubles(), (std::vector<double>{0, 0, 10, 10, 30, 30, 60, 60}));
    }
    {
        // Without M: a while loop on cond.
        auto b = loopGraph(false, true);
        auto r = eval::evaluate(b.g, {boolScalar(true), f32({0, 1}, {2}), i64Scalar(3)});
        ASSERT_TRUE(r.ok()) << firstError(r.diagnostics());
        // Trips 0..3: cond_out = iter < 3 is false after trip 3.
        EXPECT_EQ((*r)[0].toDoubles(), (std::vector<double>{6, 7}));
        EXPECT_EQ((*r)[1].dims, (Dims{4, 2}));
    }
}

TEST(ReferenceControlFlow, RunawayLoopIsStoppedByTheIterationLimitAndCancel) {
    auto b = loopGraph(false, true, false);  // cond_out = cond_in: never ends by itself
    eval::ReferenceOptions opt;
    opt.maxLoopIterations = 50;
    auto r = eval::evaluate(b.g, {boolScalar(true), f32({0, 0}, {2}), i64Scalar(0)}, opt);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().firstError()->where, "node 'loop' (Loop)");
    EXPECT_EQ(r.diagnostics().firstError()->message,
              "the loop did not end after 50 iterations (ReferenceOptions::maxLoopIterations)");

    // The stacked scan output reaches the element limit first.
    opt.maxLoopIterations = 1000;
    opt.maxElements = 64;
    auto big = eval::evaluate(b.g, {boolScalar(true), f32({0, 0}, {2}), i64Scalar(0)}, opt);
    ASSERT_FALSE(big.ok());
    EXPECT_EQ(big.diagnostics().firstError()->message,
              "scan output 0 exceeds the limit of 64 elements after 33 iterations");

    support::CancelToken cancel;
    cancel.cancel();
    auto c = eval::evaluate(b.g, {boolScalar(true), f32({0, 0}, {2}), i64Scalar(0)}, eval::ReferenceOptions{},
                               &cancel);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.diagnostics().firstError()->message, "cancelled");
}

TEST(ReferenceControlFlow, LoopBodyWithNestedIfSeesLoopAndTopLevelValues) {
    // body: d = (iter % 2 == 0) ? acc_in + step : acc_in - step, where step is a body value and
    // base (added once per trip) is a top-level value read two scopes down.
    ir::test::Builder thenB, elseB;
    thenB.node("Add", "t", {"acc_in", "step"}, {"t0"});
    thenB.node("Add", "t2", {"t0", "base"}, {"ty"});
    thenB.output("ty");
    elseB.node("Sub", "e", {"acc_in", "step"}, {"e0"});
    elseB.node("Add", "e2", {"e0", "base"}, {"ey"});
    elseB.output("ey");
    ir::test::Builder body;
    body.input("iter", "i64[]");
    body.input("cond_in", "bool[]");
    body.input("acc_in", "f32[]");
    body.init("two", TensorData::fromInts({2}, {}));
    body.init("zero", TensorData::fromInts({0}, {}));
    body.init("step", f32({100}, {}));
    body.node("Mod", "parity", {"iter", "two"}, {"par"});
    body.node("Equal", "even", {"par", "zero"}, {"is_even"});
    body.node("If", "branch", {"is_even"}, {"acc_out"},
              {{"then_branch", Attribute::ofGraph(finish(thenB, "then"))},
               {"else_branch", Attribute::ofGraph(finish(elseB, "else"))}});
    body.node("Identity", "keep", {"cond_in"}, {"cond_out"});
    body.output("cond_out");
    body.output("acc_out");
    ir::test::Builder b;
    b.input("M", "i64[]");
    b.input("acc0", "f32[]");
    b.input("base", "f32[]");
    b.node("Loop", "loop", {"M", "", "acc0"}, {"acc"}, {{"body", Attribute::ofGraph(finish(body, "body"))}});
    b.output("acc");
    ir::inferShapes(b.g);
    auto r = eval::evaluate(b.g, {i64Scalar(3), f32({0}, {}), f32({1}, {})});
    ASSERT_TRUE(r.ok()) << firstError(r.diagnostics());
    EXPECT_EQ((*r)[0].toDoubles(), (std::vector<double>{103}));  // +101, -99, +101
}

TEST(ReferenceControlFlow, ScanAxesAndDirections) {
    // state s; scan inputs X [3,2] (axis 0) and Y [2,3] (axis 1, reversed); outputs
    // s*y_t stacked on axis 1 and x_t stacked in reverse.
    ir::test::Builder body;
    body.input("s_in", "f32[2]");
    body.input("x_t", "f32[2]");
    body.input("y_t", "f32[2]");
    body.node("Add", "acc", {"s_in", "x_t"}, {"s_out"});
    body.node("Mul", "prod", {"s_out", "y_t"}, {"p"});
    body.node("Identity", "copy", {"x_t"}, {"xc"});
    body.output("s_out");
    body.output("p");
    body.output("xc");
    ir::test::Builder b;
    b.input("s0", "f32[2]");
    b.input("X", "f32[3,2]");
    b.input("Y", "f32[2,?]");
    b.node("Scan", "scan", {"s0", "X", "Y"}, {"s", "P", "XR"},
           {{"body", Attribute::ofGraph(finish(body, "body"))},
            {"num_scan_inputs", Attribute::ofInt(2)},
            {"scan_input_axes", Attribute::ofInts({0, -1})},
            {"scan_input_directions", Attribute::ofInts({0, 1})},
            {"scan_output_axes", Attribute::ofInts({1, 0})},
            {"scan_output_directions", Attribute::ofInts({0, 1})}});
    b.output("s");
    b.output("P");
    b.output("XR");
    ir::inferShapes(b.g);
    auto r = eval::evaluate(b.g, {f32({0, 0}, {2}), f32({1, 2, 3, 4, 5, 6}, {3, 2}), f32({1, 2, 3, 4, 5, 6}, {2, 3})});
    ASSERT_TRUE(r.ok()) << firstError(r.diagnostics());
    EXPECT_EQ((*r)[0].toDoubles(), (std::vector<double>{9, 12}));
    EXPECT_EQ((*r)[1].dims, (Dims{2, 3}));
    EXPECT_EQ((*r)[1].toDoubles(), (std::vector<double>{3, 8, 9, 12, 30, 48}));
    EXPECT_EQ((*r)[2].dims, (Dims{3, 2}));
    EXPECT_EQ((*r)[2].toDoubles(), (std::vector<double>{5, 6, 3, 4, 1, 2}));

    // Scan inputs of different lengths.
    auto bad = eval::evaluate(b.g, {f32({0, 0}, {2}), f32({1, 2, 3, 4, 5, 6}, {3, 2}), f32({1, 2, 3, 4}, {2, 2})});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.diagnostics().firstError()->message, "scan input 1 has sequence length 2 but input 0 has 3");
}

TEST(ReferenceControlFlow, Scan8BatchForm) {
    ir::test::Builder body;
    body.input("s_in", "f32[2]");
    body.input("x_t", "f32[2]");
    body.node("Add", "acc", {"s_in", "x_t"}, {"s_out"});
    body.node("Identity", "copy", {"s_out"}, {"z"});
    body.output("s_out");
    body.output("z");
    ir::test::Builder b;
    b.input("s0", "f32[2,2]");
    b.input("X", "f32[2,3,2]");
    b.node("Scan", "scan", {"", "s0", "X"}, {"s", "Z"},
           {{"body", Attribute::ofGraph(finish(body, "body"))},
            {"num_scan_inputs", Attribute::ofInt(1)},
            {"directions", Attribute::ofInts({1})}});
    b.output("s");
    b.output("Z");
    const auto result = ir::inferShapes(b.g);
    EXPECT_FALSE(result.diagnostics.hasErrors());
    EXPECT_EQ(b.type("Z").str(), "f32[2,3,2]");
    EXPECT_EQ(b.type("s").str(), "f32[2,2]");
    auto r = eval::evaluate(
        b.g, {f32({0, 0, 100, 100}, {2, 2}), f32({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 3, 2})});
    ASSERT_TRUE(r.ok()) << firstError(r.diagnostics());
    EXPECT_EQ((*r)[0].toDoubles(), (std::vector<double>{9, 12, 127, 130}));
    EXPECT_EQ((*r)[1].dims, (Dims{2, 3, 2}));
    // Reversed input: batch 0 visits [5,6], [3,4], [1,2].
    EXPECT_EQ((*r)[1].toDoubles(), (std::vector<double>{5, 6, 8, 10, 9, 12, 111, 112, 120, 122, 127, 130}));
}

TEST(ReferenceControlFlow, ErrorsInsideABodyNameTheSubgraphAndNode) {
    ir::test::Builder thenB, elseB;
    thenB.node("Add", "bad_add", {"x", "y"}, {"ty"});
    thenB.output("ty");
    elseB.node("NoSuchOp", "mystery", {"x"}, {"ey"});
    elseB.output("ey");
    ir::test::Builder b;
    b.input("c", "bool[]");
    b.input("x", "f32[2]");
    b.input("y", "f32[3]");
    b.node("If", "the_if", {"c"}, {"out"},
           {{"then_branch", Attribute::ofGraph(finish(thenB, "then"))},
            {"else_branch", Attribute::ofGraph(finish(elseB, "else"))}});
    b.output("out");
    auto r = eval::evaluate(b.g, {boolScalar(true), f32({1, 2}, {2}), f32({1, 2, 3}, {3})});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().firstError()->where, "node 'the_if' (If)");
    EXPECT_EQ(r.diagnostics().firstError()->message,
              "in subgraph 'then_branch' > node 'bad_add' (Add): shapes [2] and [3] cannot be broadcast");
    auto r2 = eval::evaluate(b.g, {boolScalar(false), f32({1, 2}, {2}), f32({1, 2, 3}, {3})});
    ASSERT_FALSE(r2.ok());
    EXPECT_EQ(r2.diagnostics().firstError()->message,
              std::string(eval::kNoReferenceImplementation) +
                  " (in subgraph 'else_branch' > node 'mystery' (NoSuchOp))");
}

TEST(ReferenceControlFlow, OnnxNodeTests) {
    const char* env = std::getenv("TESSERA_ONNX_NODE_TESTS");
    const std::string root = env ? env : "/usr/share/libonnx-testdata/data/node";
    if (!fs::is_directory(root))
        GTEST_SKIP() << "ONNX node tests not found at " << root
                     << " (install libonnx-testdata or set TESSERA_ONNX_NODE_TESTS)";
    auto cases = pipeline::discoverConformanceCases(root);
    ASSERT_TRUE(cases.ok());
    std::vector<std::string> passed, skipped;
    for (const auto& c : *cases) {
        if (c.name.rfind("test_if", 0) != 0 && c.name.rfind("test_loop", 0) != 0 && c.name.rfind("test_scan", 0) != 0)
            continue;
        for (std::size_t k = 0; k < c.dataSets.size(); ++k) {
            SCOPED_TRACE(c.name);
            const auto r = pipeline::runConformanceWithReference(c, static_cast<int>(k));
            if (r.status == pipeline::ConformanceStatus::Skipped) {
                // Only the sequence/optional variants may be skipped, for that reason.
                EXPECT_TRUE(c.nonTensorData) << r.message;
                EXPECT_FALSE(r.message.empty());
                skipped.push_back(c.name + ": " + r.message);
                continue;
            }
            EXPECT_EQ(r.status, pipeline::ConformanceStatus::Passed) << r.message;
            if (r.status == pipeline::ConformanceStatus::Passed) passed.push_back(c.name);
        }
    }
    for (const auto& s : skipped) std::cout << "  skipped " << s << "\n";
    // ONNX 1.12: test_if, test_loop11, test_scan_sum (Scan-8) and test_scan9_sum hold tensors only.
    for (const char* name : {"test_if", "test_loop11", "test_scan_sum", "test_scan9_sum"})
        EXPECT_NE(std::find(passed.begin(), passed.end(), name), passed.end()) << name;
}
