// Fusion plans end to end (issue 6): every sample compiled under each planner runs in
// tessera-runner, every fused kernel matches the reference interpreter run of its member ops, and
// the graph outputs equal those of the unfused compile. Explicit plans that break a rule are
// split with a warning naming the rule, and still run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/frontend/dsl/dsl.h"
#include "core/ir/npy.h"
#include "core/ir/shape_inference.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/host_profile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/run.h"
#include "core/schedule/planners.h"
#include "core/test_ir_helpers.h"

namespace pipeline = tessera::pipeline;
namespace runtime = tessera::runtime;
namespace schedule = tessera::schedule;
namespace ir = tessera::ir;

namespace {

bool haveCompiler() { return std::system("c++ --version > /dev/null 2>&1") == 0; }

runtime::RunnerClientOptions runnerOptions() {
    runtime::RunnerClientOptions o;
    o.runnerPath = std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    o.threads = 2;
    return o;
}

pipeline::RunOptions checkedOnce() {
    pipeline::RunOptions o;
    o.check = true;
    o.time = false;
    return o;
}

std::string sample(const std::string& name) { return std::string(TESSERA_SAMPLES) + "/" + name; }

double relL2(const ir::TensorData& a, const ir::TensorData& b) {
    double num = 0, den = 0;
    for (std::int64_t i = 0; i < a.numElements(); ++i) {
        const double d = a.elementAsDouble(i) - b.elementAsDouble(i);
        num += d * d;
        den += b.elementAsDouble(i) * b.elementAsDouble(i);
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

std::vector<std::string> allSamples() {
    std::vector<std::string> r;
    for (const auto& e : std::filesystem::directory_iterator(TESSERA_SAMPLES))
        if (e.path().extension() == ".tsr" || e.path().extension() == ".onnx") r.push_back(e.path().string());
    r.push_back(sample("external_data/model.onnx"));
    std::sort(r.begin(), r.end());
    return r;
}

struct Outcome {
    std::vector<std::pair<std::string, ir::TensorData>> outputs;
    int kernels = 0;
    int fused = 0;
};

/// Compiles `m` with `planner`, runs it checked; every kernel must pass.
Outcome runWith(const ir::Model& m, const std::vector<ir::TensorData>& inputs, const std::string& planner,
                runtime::RunnerClient& runner) {
    pipeline::CompileOptions co;
    co.fallbackReference = true;
    co.planner = planner;
    auto cm = pipeline::compileModel(m, inputs, co);
    EXPECT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    if (!cm.ok()) return {};
    auto rep = pipeline::runModel(*cm, inputs, checkedOnce(), runner);
    EXPECT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
    if (!rep.ok()) return {};
    EXPECT_TRUE(rep->allPassed);
    for (const auto& k : rep->kernels) EXPECT_TRUE(k.passed) << k.name << " rel.err " << k.maxRelError();
    Outcome o;
    o.outputs = rep->outputs;
    o.kernels = cm->kernelCount();
    for (const auto& s : cm->steps) o.fused += s.members.size() > 1;
    EXPECT_EQ(o.fused, cm->plan.fusedGroupCount());
    return o;
}

}  // namespace

TEST(FusionRun, EverySampleGivesTheSameNumbersUnderEveryPlanner) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    runtime::RunnerClient runner(runnerOptions());
    int fusedSomewhere = 0;
    for (const std::string& path : allSamples()) {
        SCOPED_TRACE(path);
        auto m = pipeline::loadModel(path);
        ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
        const auto inputs = pipeline::defaultInputs(m->graph);
        const Outcome base = runWith(*m, inputs, "none", runner);
        for (const char* planner : {"hidet", "fuseplanner"}) {
            SCOPED_TRACE(planner);
            const Outcome fused = runWith(*m, inputs, planner, runner);
            ASSERT_EQ(fused.outputs.size(), base.outputs.size());
            for (std::size_t i = 0; i < base.outputs.size(); ++i) {
                EXPECT_EQ(fused.outputs[i].first, base.outputs[i].first);
                ASSERT_EQ(fused.outputs[i].second.dims, base.outputs[i].second.dims);
                EXPECT_LT(relL2(fused.outputs[i].second, base.outputs[i].second), 1e-5) << base.outputs[i].first;
            }
            EXPECT_LE(fused.kernels, base.kernels);
            fusedSomewhere += fused.fused > 0;
        }
    }
    EXPECT_GE(fusedSomewhere, 4);
}

TEST(FusionRun, TransposeAndReshapeEpiloguesUnderHidetGiveTheUnfusedNumbers) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    // x [1,4,6,6] -> Conv_0 (w [5,4,3,3], pad 1) -> [1,5,6,6] -> Flatten_1 (axis 2) -> [5,36] ->
    // Transpose_2 -> [36,5] -> Add_3 (+ bias [5]) -> MatMul_4 (w2 [5,3]) -> [36,3] -> Transpose_5
    // -> [3,36] -> Reshape_6 ([1,3,6,6]) -> Sigmoid_7 -> y. Hidet's rules: two kernels, each anchor with its
    // index-map and elementwise epilogues.
    ir::test::Builder b;
    auto ramp = [](std::vector<std::int64_t> dims, float scale) {
        std::int64_t n = 1;
        for (auto d : dims) n *= d;
        std::vector<float> v(static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * scale;
        return ir::TensorData::fromFloats(v, std::move(dims));
    };
    b.input("x", "f32[1,4,6,6]");
    b.init("w", ramp({5, 4, 3, 3}, 0.125f));
    b.init("bias", ramp({5}, 0.25f));
    b.init("w2", ramp({5, 3}, 0.5f));
    b.init("shape", ir::TensorData::fromInts({1, 3, 6, 6}, {4}));
    b.node("Conv", "Conv_0", {"x", "w"}, {"c"},
           {{"pads", ir::Attribute::ofInts({1, 1, 1, 1})}, {"strides", ir::Attribute::ofInts({1, 1})}});
    b.node("Flatten", "Flatten_1", {"c"}, {"f"}, {{"axis", ir::Attribute::ofInt(2)}});
    b.node("Transpose", "Transpose_2", {"f"}, {"t"}, {{"perm", ir::Attribute::ofInts({1, 0})}});
    b.node("Add", "Add_3", {"t", "bias"}, {"s"});
    b.node("MatMul", "MatMul_4", {"s", "w2"}, {"m"});
    b.node("Transpose", "Transpose_5", {"m"}, {"mt"}, {{"perm", ir::Attribute::ofInts({1, 0})}});
    b.node("Reshape", "Reshape_6", {"mt", "shape"}, {"r"});
    b.node("Sigmoid", "Sigmoid_7", {"r"}, {"y"});
    b.output("y");
    ASSERT_FALSE(ir::inferShapes(b.g, "test").diagnostics.hasErrors());
    ir::Model m;
    m.opsets[""] = 17;
    m.graph = b.g;
    const auto inputs = pipeline::defaultInputs(m.graph);
    ASSERT_EQ(inputs.size(), 1u);

    pipeline::CompileOptions co;
    co.planner = "hidet";
    auto cm = pipeline::compileModel(m, inputs, co);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    EXPECT_TRUE(cm->warnings.items().empty()) << cm->warnings.formatAll();
    ASSERT_EQ(cm->plan.groups.size(), 2u);
    EXPECT_EQ(cm->plan.groups[0].ops, (std::vector<std::string>{"Conv_0", "Flatten_1", "Transpose_2", "Add_3"}));
    EXPECT_EQ(cm->plan.groups[1].ops, (std::vector<std::string>{"MatMul_4", "Transpose_5", "Reshape_6", "Sigmoid_7"}));
    EXPECT_EQ(cm->kernelCount(), 2);

    runtime::RunnerClient runner(runnerOptions());
    const Outcome base = runWith(m, inputs, "none", runner);
    const Outcome fused = runWith(m, inputs, "hidet", runner);
    EXPECT_EQ(base.kernels, 8);
    EXPECT_EQ(fused.kernels, 2);
    EXPECT_EQ(fused.fused, 2);
    ASSERT_EQ(fused.outputs.size(), 1u);
    ASSERT_EQ(base.outputs.size(), 1u);
    ASSERT_EQ(fused.outputs[0].second.dims, (std::vector<std::int64_t>{1, 3, 6, 6}));
    EXPECT_LT(relL2(fused.outputs[0].second, base.outputs[0].second), 1e-6);
}

TEST(FusionRun, ASliceAnchorsItsProloguesAndEpilogueUnderHidet) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    // x [4,6] -> Transpose_0 -> [6,4] -> Relu_1 -> Slice_2 (rows 1..5) -> [4,4] -> Neg_3 -> y.
    // A Slice is never a prologue, but it anchors a group: one kernel, the unfused numbers.
    ir::test::Builder b;
    std::vector<float> xs(24);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(static_cast<int>(i % 5) - 2) * 0.5f;
    b.input("x", "f32[4,6]");
    b.init("starts", ir::TensorData::fromInts({1}, {1}));
    b.init("ends", ir::TensorData::fromInts({5}, {1}));
    b.init("axes", ir::TensorData::fromInts({0}, {1}));
    b.node("Transpose", "Transpose_0", {"x"}, {"t"}, {{"perm", ir::Attribute::ofInts({1, 0})}});
    b.node("Relu", "Relu_1", {"t"}, {"r"});
    b.node("Slice", "Slice_2", {"r", "starts", "ends", "axes"}, {"s"});
    b.node("Neg", "Neg_3", {"s"}, {"y"});
    b.output("y");
    ASSERT_FALSE(ir::inferShapes(b.g, "test").diagnostics.hasErrors());
    ir::Model m;
    m.opsets[""] = 17;
    m.graph = b.g;
    const std::vector<ir::TensorData> inputs{ir::TensorData::fromFloats(xs, {4, 6})};

    pipeline::CompileOptions co;
    co.planner = "hidet";
    auto cm = pipeline::compileModel(m, inputs, co);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    EXPECT_TRUE(cm->warnings.items().empty()) << cm->warnings.formatAll();
    ASSERT_EQ(cm->plan.groups.size(), 1u);
    EXPECT_EQ(cm->plan.groups[0].anchor, "Slice_2");
    EXPECT_EQ(cm->plan.groups[0].ops, (std::vector<std::string>{"Transpose_0", "Relu_1", "Slice_2", "Neg_3"}));
    EXPECT_EQ(cm->kernelCount(), 1);

    runtime::RunnerClient runner(runnerOptions());
    const Outcome base = runWith(m, inputs, "none", runner);
    const Outcome fused = runWith(m, inputs, "hidet", runner);
    EXPECT_EQ(base.kernels, 4);
    EXPECT_EQ(fused.kernels, 1);
    ASSERT_EQ(fused.outputs.size(), 1u);
    ASSERT_EQ(base.outputs.size(), 1u);
    ASSERT_EQ(fused.outputs[0].second.dims, (std::vector<std::int64_t>{4, 4}));
    EXPECT_EQ(relL2(fused.outputs[0].second, base.outputs[0].second), 0.0);
}

TEST(FusionRun, MobileNetV2UnderHidetFusesEveryClipIntoItsConv) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    auto m = pipeline::loadModel(sample("mobilenet_v2.onnx"));
    ASSERT_TRUE(m.ok());
    auto x = ir::readNpy(sample("mobilenet_v2_input.npy"));
    ASSERT_TRUE(x.ok());
    pipeline::CompileOptions co;
    co.planner = "hidet";
    auto cm = pipeline::compileModel(*m, {*x}, co);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    EXPECT_TRUE(cm->warnings.items().empty()) << cm->warnings.formatAll();
    // 52 Conv (35 followed by a Clip, 10 of the projections by a residual Add), Gemm, pool, Flatten.
    for (const auto& s : cm->steps) {
        if (s.opType != "Conv") continue;
        const ir::Graph& g = cm->model.graph;
        const ir::ValueId y = g.node(s.node).outputs[0];
        const auto& users = g.consumers(y);
        if (users.size() == 1 && g.node(users[0]).opType == "Clip") {
            EXPECT_EQ(s.members.size(), 2u) << s.name;
        }
    }
    EXPECT_EQ(cm->plan.planner, "hidet");
    runtime::RunnerClient runner(runnerOptions());
    auto rep = pipeline::runModel(*cm, {*x}, checkedOnce(), runner);
    ASSERT_TRUE(rep.ok()) << rep.diagnostics().formatAll();
    EXPECT_TRUE(rep->allPassed);
    auto torchOut = ir::readNpy(sample("mobilenet_v2_output.npy"));
    ASSERT_TRUE(torchOut.ok());
    ASSERT_EQ(rep->outputs.size(), 1u);
    EXPECT_LT(relL2(rep->outputs[0].second, *torchOut), 1e-3);
}

TEST(FusionRun, AnExplicitGroupThatBreaksARuleIsSplitWithTheReason) {
    if (!haveCompiler()) GTEST_SKIP() << "no host C++ compiler (c++) on this machine";
    auto m = pipeline::loadModel(sample("mobilenet_v2.onnx"));
    ASSERT_TRUE(m.ok());
    const auto inputs = pipeline::defaultInputs(m->graph);
    // features.3's projection conv output feeds the residual Add and nothing else, but its input
    // (the block's input) has two uses: fusing the producing conv of the block input as a
    // prologue of the Add is not injective, so name a pair that breaks Hidet's epilogue rule:
    // the conv that makes features.2's output (used by features.3's first conv and its Add).
    schedule::FusionPlan plan;
    plan.planner = "user";
    schedule::FusionGroup grp;
    grp.name = "bad";
    grp.kind = schedule::FusionKind::PrologueEpilogue;
    grp.ops = {"/features/features.2/conv/conv.2/Conv", "/features/features.3/Add"};
    grp.anchor = grp.ops[0];
    grp.epilogue = {grp.ops[1]};
    plan.groups.push_back(grp);
    pipeline::CompileOptions co;
    co.plan = plan;
    auto cm = pipeline::compileModel(*m, inputs, co);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    const std::string w = cm->warnings.formatAll();
    EXPECT_NE(w.find("group 'bad'"), std::string::npos) << w;
    EXPECT_NE(w.find("not fused"), std::string::npos) << w;
    EXPECT_NE(w.find("2 uses"), std::string::npos) << w;
    EXPECT_EQ(cm->kernelCount(), 100);
    EXPECT_EQ(cm->plan.fusedGroupCount(), 0);
}

// A program's fuse statements name only the groups it wants: the other nodes are single kernels by
// design, with no warning. A plan file is meant to cover the graph: the nodes it leaves out are
// named in a warning.
constexpr const char* kPartialFuseProgram = R"(tessera 0.1;
input  x: f32[1, 8, 12, 12];
param  wd: f32[8, 1, 3, 3] = random(seed=1, low=-0.5, high=0.5);
param  lo: f32[] = 0.0;
param  hi: f32[] = 6.0;
param  wp: f32[16, 8, 1, 1] = random(seed=2, low=-0.2, high=0.2);
dw = Conv(x, wd, _, kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8);
r  = Clip(dw, lo, hi) as "relu6";
pw = conv2d(r, wp, _);
output pw;
fuse block1 = [dw, relu6] anchor dw;
)";

TEST(FusionRun, AProgramsPartialFuseStatementsLeaveTheOtherNodesAloneWithoutAWarning) {
    auto m = tessera::frontend::dsl::parseProgram(kPartialFuseProgram, "partial.tsr", pipeline::dslParseOptions());
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    const auto inputs = pipeline::defaultInputs(m->graph);
    auto cm = pipeline::compileModel(*m, inputs, {});
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    const std::string w = cm->warnings.formatAll();
    EXPECT_EQ(w.find("does not mention"), std::string::npos) << w;
    EXPECT_EQ(w.find("run alone"), std::string::npos) << w;
    EXPECT_TRUE(cm->warnings.items().empty()) << w;
    EXPECT_EQ(cm->kernelCount(), 2);
    EXPECT_EQ(cm->plan.fusedGroupCount(), 1);
}

TEST(FusionRun, APlanFileThatLeavesNodesOutWarnsThatTheyRunAlone) {
    auto m = tessera::frontend::dsl::parseProgram(kPartialFuseProgram, "partial.tsr", pipeline::dslParseOptions());
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    const auto inputs = pipeline::defaultInputs(m->graph);
    schedule::FusionPlan plan;
    plan.planner = "user";
    schedule::FusionGroup grp;
    grp.name = "g1";
    grp.kind = schedule::FusionKind::PrologueEpilogue;
    grp.ops = {"dw", "relu6"};
    grp.anchor = "dw";
    grp.epilogue = {"relu6"};
    plan.groups.push_back(grp);
    pipeline::CompileOptions co;
    co.plan = plan;
    auto cm = pipeline::compileModel(*m, inputs, co);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    const std::string w = cm->warnings.formatAll();
    EXPECT_NE(w.find("node(s) the plan does not mention run alone: pw"), std::string::npos) << w;
    EXPECT_EQ(cm->kernelCount(), 2);
}

// A node in two groups of a hand plan stays in the first; when the second then breaks a rule, its
// split reason says which member the first group took.
TEST(FusionRun, AGroupThatLostADuplicateNodeSaysWhichGroupHasIt) {
    auto m = tessera::frontend::dsl::parseProgram(R"(tessera 0.1;
input  x: f32[1, 8, 12, 12];
param  w1: f32[16, 8, 1, 1] = random(seed=1, low=-0.2, high=0.2);
param  w2: f32[16, 1, 3, 3] = random(seed=2, low=-0.5, high=0.5);
param  w3: f32[8, 16, 1, 1] = random(seed=3, low=-0.2, high=0.2);
param  lo: f32[] = 0.0;
param  hi: f32[] = 6.0;
c1 = Conv(x, w1, _);
r1 = Clip(c1, lo, hi) as "r1";
c2 = Conv(r1, w2, _, kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16);
r2 = Clip(c2, lo, hi) as "r2";
c3 = Conv(r2, w3, _);
output c3;
)", "three.tsr", pipeline::dslParseOptions());
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    const auto inputs = pipeline::defaultInputs(m->graph);
    schedule::FusionPlan plan;
    plan.planner = "user";
    schedule::FusionGroup g1;
    g1.name = "g1";
    g1.kind = schedule::FusionKind::PwDw;
    g1.ops = {"c1", "r1", "c2"};
    g1.anchor = "c1";
    schedule::FusionGroup g2;
    g2.name = "g2";
    g2.kind = schedule::FusionKind::DwPw;
    g2.ops = {"c2", "r2", "c3"};
    g2.anchor = "c2";
    plan.groups = {g1, g2};
    pipeline::CompileOptions co;
    co.plan = plan;
    auto cm = pipeline::compileModel(*m, inputs, co);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    const std::string w = cm->warnings.formatAll();
    EXPECT_NE(w.find("node(s) in more than one group (kept in the first): c2"), std::string::npos) << w;
    EXPECT_NE(w.find("group 'g2': not fused (c2 is already in group g1; group g2 (dw-pw) has 1 convolution; a conv "
                     "chain has 2): its ops run as separate kernels"),
              std::string::npos)
        << w;
    const int r2 = cm->plan.groupOf("r2");
    ASSERT_GE(r2, 0);
    EXPECT_EQ(cm->plan.groups[static_cast<std::size_t>(r2)].reason,
              "split: c2 is already in group g1; group g2 (dw-pw) has 1 convolution; a conv chain has 2");
    EXPECT_EQ(cm->kernelCount(), 3);
    EXPECT_EQ(cm->plan.fusedGroupCount(), 1);
}

TEST(FusionRun, HostProfileDescribesThisCpuAndIsTheCpuDefault) {
    const auto host = pipeline::hostProfile();
    EXPECT_EQ(host.name, "host");
    EXPECT_GE(host.sms, 1);
    EXPECT_EQ(host.warpSize, 1);
    EXPECT_EQ(host.sharedBytes * 2, host.l1Bytes);
    EXPECT_EQ(tessera::target::validateGpuProfile(host), "");
    auto found = pipeline::findHardwareProfile("host");
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(found->sms, host.sms);
    auto unknown = pipeline::findHardwareProfile("h900");
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.diagnostics().firstError()->message.find("known: host (this CPU), h200"), std::string::npos);

    // A CPU compile under fuseplanner without a profile plans for the host.
    auto m = pipeline::loadModel(sample("dw_pw_block.onnx"));
    ASSERT_TRUE(m.ok());
    pipeline::CompileOptions co;
    co.planner = "fuseplanner";
    auto cm = pipeline::compileModel(*m, pipeline::defaultInputs(m->graph), co);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    EXPECT_EQ(cm->plan.hardware, "host");
    co.target = tessera::lower::Target::Cuda;
    auto gpu = pipeline::compileModel(*m, pipeline::defaultInputs(m->graph), co);
    ASSERT_TRUE(gpu.ok()) << gpu.diagnostics().formatAll();
    EXPECT_EQ(gpu->plan.hardware, "h200");
}
