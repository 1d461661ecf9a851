// core/pipeline/user_schedule.h: user task mappings per node, checked by lowering and used by the compile.
#include <gtest/gtest.h>

#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/prepare.h"
#include "core/pipeline/user_schedule.h"

namespace pipeline = tessera::pipeline;
namespace ir = tessera::ir;

namespace {

ir::Model dwPwBlock() {
    auto m = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/dw_pw_block.onnx");
    EXPECT_TRUE(m.ok()) << m.diagnostics().formatAll();
    return m.ok() ? std::move(*m) : ir::Model{};
}

/// The lines of the kernel named `name` in the generated module.
std::string kernelText(const pipeline::CompiledModel& cm, const std::string& name) {
    const int s = cm.stepOfNode(name);
    if (s < 0) return {};
    const auto& step = cm.steps[static_cast<std::size_t>(s)];
    std::string text;
    int line = 1;
    std::size_t pos = 0;
    const std::string& src = cm.code.source;
    // A kernel's comment block (with its mapping lines) sits just above its first line.
    while (pos < src.size()) {
        const std::size_t nl = src.find('\n', pos);
        const std::string l = src.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        if (line >= step.firstLine - 8 && line <= step.lastLine) text += l + "\n";
        if (nl == std::string::npos) break;
        pos = nl + 1;
        ++line;
    }
    return text;
}

}  // namespace

TEST(UserSchedule, ParseSpecSplitsNodeGridAndBlock) {
    auto s = pipeline::parseScheduleSpec("Conv_0 = spatial(1,8,4,4) ; repeat(1,1,2,2)");
    ASSERT_TRUE(s.ok()) << s.diagnostics().formatAll();
    EXPECT_EQ(s->subject, "Conv_0");
    ASSERT_EQ(s->mappings.size(), 2u);
    EXPECT_EQ(s->mappings[0].level, "grid");
    EXPECT_EQ(s->mappings[0].text, "spatial(1,8,4,4)");
    EXPECT_EQ(s->mappings[1].level, "block");
    EXPECT_EQ(s->mappings[1].text, "repeat(1,1,2,2)");
    auto one = pipeline::parseScheduleSpec("Relu=spatial(4)");
    ASSERT_TRUE(one.ok());
    EXPECT_EQ(one->mappings.size(), 1u);
    EXPECT_EQ(pipeline::scheduleMappings(*one).grid, "spatial(4)");
    EXPECT_EQ(pipeline::scheduleMappings(*one).block, "");

    auto noEq = pipeline::parseScheduleSpec("Conv_0");
    ASSERT_FALSE(noEq.ok());
    EXPECT_EQ(noEq.diagnostics().firstError()->message,
              "expected NODE=GRID[;BLOCK], e.g. Conv_0=spatial(1,8,4,4);repeat(1,1,2,2)");
    auto noGrid = pipeline::parseScheduleSpec("Conv_0=  ;repeat(2)");
    ASSERT_FALSE(noGrid.ok());
    EXPECT_EQ(noGrid.diagnostics().firstError()->message, "the grid mapping after '=' is empty");
}

TEST(UserSchedule, ApplyReplacesTheSubjectsScheduleAndAddsNewOnes) {
    ir::ProgramSchedule p;
    p.schedules.push_back(pipeline::mappingSchedule("C", "spatial(2,2)", "spatial(16,16)"));
    p.schedules[0].target = "cuda";
    p.schedules[0].tiles.push_back({"k", 8, {}, {}});
    pipeline::applyUserSchedules(p, {pipeline::mappingSchedule("C", "spatial(4,4)"),
                                     pipeline::mappingSchedule("D", "spatial(8)")});
    ASSERT_EQ(p.schedules.size(), 2u);
    EXPECT_EQ(pipeline::scheduleMappings(*p.scheduleFor("C")).grid, "spatial(4,4)");
    EXPECT_EQ(pipeline::scheduleMappings(*p.scheduleFor("C")).block, "");
    // The program's other directives stay.
    EXPECT_EQ(p.scheduleFor("C")->target, "cuda");
    ASSERT_EQ(p.scheduleFor("C")->tiles.size(), 1u);
    EXPECT_EQ(p.scheduleFor("C")->tiles[0].factor, 8);
    EXPECT_EQ(pipeline::scheduleMappings(*p.scheduleFor("D")).grid, "spatial(8)");
}

TEST(UserSchedule, CheckAcceptsACoveringMappingAndRefusesWithTheLoweringsReason) {
    ir::Model m = dwPwBlock();
    auto spec = pipeline::specialiseModel(m, pipeline::defaultInputs(m.graph));
    ASSERT_TRUE(spec.ok()) << spec.diagnostics().formatAll();

    auto ok = pipeline::checkUserSchedule(*spec, pipeline::mappingSchedule("dw_conv", "spatial(1,4,2,2).repeat(1,8,28,28)"));
    ASSERT_TRUE(ok.ok()) << ok.diagnostics().formatAll();
    EXPECT_EQ(ok->opType, "Conv");
    ASSERT_EQ(ok->mappings.size(), 1u);
    EXPECT_EQ(ok->mappings[0], "grid = spatial(1,4,2,2).repeat(1,8,28,28)");

    auto rank = pipeline::checkUserSchedule(*spec, pipeline::mappingSchedule("dw_conv", "spatial(4,4)"));
    ASSERT_FALSE(rank.ok());
    const auto* e = rank.diagnostics().firstError();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->where, "node 'dw_conv' (Conv)");
    EXPECT_NE(e->message.find("grid mapping spatial(4,4) of kernel 'dw_conv' does not fit the output [1,32,56,56]"),
              std::string::npos)
        << e->message;

    auto uncovered = pipeline::checkUserSchedule(*spec, pipeline::mappingSchedule("dw_conv", "spatial(1,4,2,2)"));
    ASSERT_FALSE(uncovered.ok());
    EXPECT_NE(uncovered.diagnostics().firstError()->message.find("does not fit the output [1,32,56,56]"),
              std::string::npos);

    auto syntax = pipeline::checkUserSchedule(*spec, pipeline::mappingSchedule("dw_conv", "spatial(1,4"));
    ASSERT_FALSE(syntax.ok());
    EXPECT_NE(syntax.diagnostics().firstError()->message.find("grid mapping \"spatial(1,4\" of kernel 'dw_conv' does not parse"),
              std::string::npos)
        << syntax.diagnostics().firstError()->message;

    auto missing = pipeline::checkUserSchedule(*spec, pipeline::mappingSchedule("nope", "spatial(1)"));
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.diagnostics().firstError()->message,
              "no operator 'nope' in the compiled graph (folded into a constant, or misspelt)");
}

TEST(UserSchedule, CompileUsesTheUserScheduleInTheGeneratedCode) {
    ir::Model m = dwPwBlock();
    const auto inputs = pipeline::defaultInputs(m.graph);
    auto before = pipeline::compileModel(m, inputs);
    ASSERT_TRUE(before.ok()) << before.diagnostics().formatAll();
    EXPECT_NE(kernelText(*before, "dw_conv").find("//   mapping: grid = spatial(1,32,2,1).repeat(1,1,28,56)"),
              std::string::npos)
        << kernelText(*before, "dw_conv");

    pipeline::CompileOptions opts;
    opts.schedules = {pipeline::mappingSchedule("dw_conv", "spatial(1,4,2,2).repeat(1,8,28,28)"),
                      pipeline::mappingSchedule("gone", "spatial(1)")};
    auto after = pipeline::compileModel(m, inputs, opts);
    ASSERT_TRUE(after.ok()) << after.diagnostics().formatAll();
    const std::string text = kernelText(*after, "dw_conv");
    EXPECT_NE(text.find("//   mapping: grid = spatial(1,4,2,2).repeat(1,8,28,28)"), std::string::npos) << text;
    EXPECT_EQ(text.find("spatial(1,32,2,1)"), std::string::npos) << text;
    const int s = after->stepOfNode("dw_conv");
    ASSERT_GE(s, 0);
    EXPECT_EQ(after->steps[static_cast<std::size_t>(s)].kernel.mappings,
              std::vector<std::string>{"grid = spatial(1,4,2,2).repeat(1,8,28,28)"});
    // The other kernels keep their default schedules; the unknown subject is a warning.
    const int r0 = before->stepOfNode("relu6"), r1 = after->stepOfNode("relu6");
    ASSERT_GE(r0, 0);
    ASSERT_GE(r1, 0);
    EXPECT_EQ(after->steps[static_cast<std::size_t>(r1)].kernel.mappings,
              before->steps[static_cast<std::size_t>(r0)].kernel.mappings);
    ASSERT_EQ(after->warnings.items().size(), before->warnings.items().size() + 1);
    EXPECT_EQ(after->warnings.items().back().message, "not used: no operator of that name in the compiled graph");
    EXPECT_EQ(after->warnings.items().back().where, "schedule of 'gone'");
}

TEST(UserSchedule, AScheduleOfAFusedMemberThatIsNotTheAnchorIsAWarning) {
    ir::Model m = dwPwBlock();
    pipeline::CompileOptions opts;
    tessera::schedule::FusionPlan plan;
    plan.planner = "user";
    tessera::schedule::FusionGroup g;
    g.name = "u1";
    g.kind = tessera::schedule::FusionKind::PrologueEpilogue;
    g.ops = {"dw_conv", "relu6"};
    g.anchor = "dw_conv";
    g.epilogue = {"relu6"};
    plan.groups.push_back(g);
    opts.plan = plan;
    opts.schedules = {pipeline::mappingSchedule("relu6", "spatial(1,8,1,1).repeat(1,4,56,56)")};
    auto cm = pipeline::compileModel(m, pipeline::defaultInputs(m.graph), opts);
    ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
    bool found = false;
    for (const auto& w : cm->warnings.items())
        if (w.where == "schedule of 'relu6'") {
            found = true;
            EXPECT_EQ(w.message, "not used: 'relu6' is fused into group 'u1', whose kernel is scheduled by its anchor 'dw_conv'");
        }
    EXPECT_TRUE(found) << cm->warnings.formatAll();
}
