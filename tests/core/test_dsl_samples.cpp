// Every samples/*.tsr parses and type-checks with the node counts, types and FLOPs below.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "core/frontend/dsl/diagnostic_render.h"
#include "core/frontend/dsl/dsl.h"
#include "core/ir/compute.h"
#include "core/ir/shape_inference.h"
#include "core/ir/verifier.h"

using namespace tessera;

namespace {

struct SampleFacts {
    std::size_t nodes, computes, schedules, fusions;
    std::map<std::string, std::string> types;  ///< value -> type
};

ir::Model load(const std::string& name) {
    const auto path = std::filesystem::path(TESSERA_SAMPLES) / name;
    auto r = frontend::dsl::parseProgramFile(path.string());
    EXPECT_TRUE(r.ok()) << name << "\n" << frontend::dsl::renderDiagnostics(r.diagnostics(), "");
    if (!r.ok()) return {};
    for (const auto& d : r.diagnostics().items())
        ADD_FAILURE() << name << ": unexpected diagnostic " << d.format();
    return std::move(r.value());
}

}  // namespace

TEST(DslSamples, EachParsesAndTypeChecks) {
    const std::map<std::string, SampleFacts> samples{
        {"matmul_tiled.tsr", {1, 1, 1, 0, {{"C", "f32[256,256]"}}}},
        {"dw_pw_block.tsr", {3, 0, 1, 1, {{"dw", "f32[1,32,56,56]"}, {"pw", "f32[1,64,56,56]"}}}},
        {"softmax.tsr", {5, 4, 1, 0, {{"m", "f32[4]"}, {"y", "f32[4,10]"}, {"y_ref", "f32[4,10]"}}}},
        {"layernorm.tsr", {5, 4, 1, 0, {{"mean", "f32[8]"}, {"y", "f32[8,256]"}}}},
        {"fft_radix2.tsr", {10, 10, 0, 0, {{"wr", "f32[4]"}, {"Xr", "f32[8]"}, {"Xi", "f32[8]"}}}},
        {"glcm_contrast.tsr",
         {5,
          5,
          1,
          0,
          {{"lo", "f32[]"}, {"q", "i32[32,32]"}, {"cnt", "f32[26,26,16,16]"}, {"contrast", "f32[26,26]"}}}},
        {"hilbert_envelope.tsr", {6, 6, 0, 0, {{"Xr", "f32[64]"}, {"h", "f32[64]"}, {"env", "f32[64]"}}}},
    };
    std::size_t found = 0;
    for (const auto& e : std::filesystem::directory_iterator(TESSERA_SAMPLES))
        if (e.path().extension() == ".tsr") ++found;
    EXPECT_EQ(found, samples.size()) << "a new sample needs facts here";
    for (const auto& [name, facts] : samples) {
        SCOPED_TRACE(name);
        ir::Model m = load(name);
        EXPECT_EQ(m.graph.numNodes(), facts.nodes);
        std::size_t computes = 0;
        for (const auto& n : m.graph.nodes()) computes += n.compute ? 1 : 0;
        EXPECT_EQ(computes, facts.computes);
        EXPECT_EQ(m.program.schedules.size(), facts.schedules);
        EXPECT_EQ(m.program.fusions.size(), facts.fusions);
        for (const auto& [v, t] : facts.types) {
            const ir::ValueId id = m.graph.findValue(v);
            ASSERT_NE(id, ir::kNoValue) << v;
            EXPECT_EQ(m.graph.value(id).type.str(), t) << v;
        }
        EXPECT_TRUE(ir::verify(m.graph).empty());
        ir::Graph g = m.graph;
        EXPECT_FALSE(ir::inferShapes(g).diagnostics.hasErrors());
        // Every node has a FLOP count (static shapes everywhere).
        for (std::size_t i = 0; i < m.graph.numNodes(); ++i)
            EXPECT_TRUE(ir::nodeFlops(m.graph, static_cast<ir::NodeId>(i)).has_value())
                << m.graph.node(i).name;
    }
}

TEST(DslSamples, MatmulFlopsAndSchedule) {
    ir::Model m = load("matmul_tiled.tsr");
    EXPECT_EQ(ir::totalFlops(m.graph), 2LL * 256 * 256 * 128);
    const auto* s = m.program.scheduleFor("C");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->target, "cuda");
    ASSERT_NE(s->mapping("grid"), nullptr);
    EXPECT_EQ(s->mapping("block")->text, "spatial(16, 16) * repeat(8, 8)");
    ASSERT_EQ(s->tiles.size(), 1u);
    EXPECT_EQ(s->tiles[0].axis, "k");
    EXPECT_EQ(s->stages.at(0).memory, "shared");
}

TEST(DslSamples, GlcmCountStructure) {
    ir::Model m = load("glcm_contrast.tsr");
    const ir::Node& cnt = m.graph.node(m.graph.findNode("cnt"));
    const ir::ComputeDef& d = *cnt.compute;
    ASSERT_EQ(d.axes.size(), 6u);  // p s a b + dr dc
    EXPECT_EQ(d.numOutputAxes, 4u);
    EXPECT_EQ(d.axes[4].extent.value, 6);
    EXPECT_EQ(d.axes[5].extent.value, 7);
    ASSERT_EQ(d.body.kind, ir::ComputeKind::Reduce);
    EXPECT_EQ(d.body.args[0].kind, ir::ComputeKind::Binary);
    EXPECT_EQ(d.body.args[0].args[0].kind, ir::ComputeKind::Select);
    // Per element: 2 selects * (2 compares + &&) + select + '+' = 2*4 + 1 = 9, plus the sum's
    // combine, times 42 window pairs.
    EXPECT_EQ(ir::computeFlopsPerElement(d).value_or(-1), (9 + 1) * 42);
}

TEST(DslSamples, ComputePrintReparsesEqual) {
    // printCompute text is DSL: reparsing each compute statement gives an equal definition.
    for (const char* name :
         {"softmax.tsr", "layernorm.tsr", "fft_radix2.tsr", "glcm_contrast.tsr", "hilbert_envelope.tsr"}) {
        SCOPED_TRACE(name);
        ir::Model m = load(name);
        std::string program;
        for (const auto& v : m.graph.values())
            if (v.isGraphInput || v.isInitializer) program += "input " + v.name + ": " + v.type.str() + ";\n";
        for (const auto& n : m.graph.nodes()) {
            if (!n.compute) continue;
            program += ir::printCompute(
                           *n.compute, m.graph.value(n.outputs[0]).name,
                           [&](int s) { return m.graph.value(n.inputs[static_cast<std::size_t>(s)]).name; }) +
                       ";\n";
        }
        auto r = frontend::dsl::parseProgram(program, "printed.tsr");
        ASSERT_TRUE(r.ok()) << program << frontend::dsl::renderDiagnostics(r.diagnostics(), program);
        for (const auto& n : m.graph.nodes()) {
            if (!n.compute) continue;
            const ir::NodeId id = r->graph.findNode(n.name);
            ASSERT_NE(id, ir::kNoNode);
            EXPECT_TRUE(ir::computeEqual(*r->graph.node(id).compute, *n.compute)) << n.name;
        }
    }
}
