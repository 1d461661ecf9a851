// DSL -> IR conversion (core/frontend/dsl/dsl.h): declarations, op nodes, attributes, subgraphs,
// compute nodes, schedules and fusion groups, and the type errors that name both sides.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/frontend/dsl/diagnostic_render.h"
#include "core/frontend/dsl/dsl.h"
#include "core/ir/compute.h"
#include "core/ir/json.h"
#include "core/ir/printer.h"
#include "core/ir/shape_inference.h"
#include "core/ir/verifier.h"

using namespace tessera;
using namespace tessera::frontend::dsl;

namespace {

ir::Model parseOk(const std::string& text, const ParseOptions& o = {}) {
    auto r = parseProgram(text, "t.tsr", o);
    EXPECT_TRUE(r.ok()) << renderDiagnostics(r.diagnostics(), text);
    if (!r.ok()) return {};
    return std::move(r.value());
}

support::DiagnosticList parseErrors(const std::string& text) {
    auto r = parseProgram(text, "t.tsr");
    EXPECT_FALSE(r.ok());
    return r.diagnostics();
}

const ir::Node& node(const ir::Model& m, const std::string& name) {
    const ir::NodeId id = m.graph.findNode(name);
    EXPECT_NE(id, ir::kNoNode) << name;
    return m.graph.node(id == ir::kNoNode ? 0 : id);
}

std::string typeOf(const ir::Model& m, const std::string& v) {
    const ir::ValueId id = m.graph.findValue(v);
    return id == ir::kNoValue ? "<none>" : m.graph.value(id).type.str();
}

bool hasError(const support::DiagnosticList& d, int line, int col, const std::string& msg,
              const std::string& note = {}) {
    for (const auto& x : d.items()) {
        if (x.severity != support::Severity::Error || x.begin.line != line || x.begin.column != col) continue;
        if (x.message.find(msg) == std::string::npos) continue;
        if (note.empty()) return true;
        for (const auto& n : x.notes)
            if (n.find(note) != std::string::npos) return true;
    }
    return false;
}

}  // namespace

TEST(DslSema, DeclarationsAndOpNodes) {
    auto m = parseOk(R"(tessera 0.1;
model name="net", ir_version=9, producer="me", producer_version="1", doc="d";
opset 18;
opset com.microsoft 1;
input x: f32[N, 32, 56, 56];
param w: f32[32, 1, 3, 3] = random(seed=7);
input b: f32[32] = zeros;
dw = Conv(x, w, b, pads=[1, 1, 1, 1], group=32, kernel_shape=[3, 3]);
r = relu(dw) as "act";
output r;
)");
    EXPECT_EQ(m.graph.name, "net");
    EXPECT_EQ(m.irVersion, 9);
    EXPECT_EQ(m.producerName, "me");
    EXPECT_EQ(m.graph.docString, "d");
    EXPECT_EQ(m.opsets.at(""), 18);
    EXPECT_EQ(m.opsets.at("com.microsoft"), 1);
    ASSERT_EQ(m.graph.numNodes(), 2u);
    ASSERT_EQ(m.graph.inputs().size(), 2u);  // x and b (b is an initializer and an input)
    ASSERT_EQ(m.graph.initializers().size(), 2u);
    EXPECT_EQ(m.graph.value(m.graph.initializers()[0]).name, "w");
    EXPECT_TRUE(m.graph.value(m.graph.findValue("b")).isGraphInput);
    EXPECT_FALSE(m.graph.value(m.graph.findValue("w")).isGraphInput);
    const ir::Node& conv = node(m, "dw");
    EXPECT_EQ(conv.opType, "Conv");
    EXPECT_EQ(conv.attrInt("group", 0), 32);
    EXPECT_EQ(conv.attrInts("pads"), (std::vector<std::int64_t>{1, 1, 1, 1}));
    EXPECT_EQ(conv.attributes[0].first, "pads");  // written order
    EXPECT_EQ(typeOf(m, "dw"), "f32[N,32,56,56]");
    const ir::Node& act = node(m, "act");
    EXPECT_EQ(act.opType, "Relu");
    ASSERT_EQ(m.graph.outputs().size(), 1u);
    EXPECT_EQ(m.graph.value(m.graph.outputs()[0]).name, "r");
    EXPECT_TRUE(ir::verify(m.graph).empty());
    // The random initializer is deterministic.
    auto m2 = parseOk("param w: f32[32, 1, 3, 3] = random(seed=7);");
    EXPECT_EQ(m.graph.value(m.graph.findValue("w")).data->bytes,
              m2.graph.value(m2.graph.findValue("w")).data->bytes);
}

TEST(DslSema, InitializersLiteralsAndDtypes) {
    auto m = parseOk(R"(param a: f32[2, 2] = [[1, 2], [3, 4.5]];
param b: i64[3] = [1, -2, 9007199254740993];
param c: f16[2] = fill(0.5);
param d: bool[2] = [1, 0];
param e: string[2] = ["x", "y"];
param f: f64[] = 2.5;
param g: u8[4] = ones;
param h: bf16[1] = [1.0];
)");
    auto data = [&](const char* n) { return m.graph.value(m.graph.findValue(n)).data; };
    EXPECT_EQ(data("a")->toDoubles(), (std::vector<double>{1, 2, 3, 4.5}));
    EXPECT_EQ(data("b")->toInts(), (std::vector<std::int64_t>{1, -2, 9007199254740993}));
    EXPECT_EQ(data("c")->toDoubles(), (std::vector<double>{0.5, 0.5}));
    EXPECT_EQ(data("d")->toInts(), (std::vector<std::int64_t>{1, 0}));
    EXPECT_EQ(data("e")->strings, (std::vector<std::string>{"x", "y"}));
    EXPECT_EQ(data("f")->toDoubles(), (std::vector<double>{2.5}));
    EXPECT_EQ(data("g")->toInts(), (std::vector<std::int64_t>{1, 1, 1, 1}));
    EXPECT_EQ(data("h")->toDoubles(), (std::vector<double>{1.0}));
    auto d = parseErrors(
        "param a: f32[2, 2] = [1, 2, 3];\nparam b: f32[N] = zeros;\nparam c: f32[2, 2] = [[1, 2, 3], [4]];");
    EXPECT_TRUE(hasError(d, 1, 22, "the literal has 3 elements but f32[2,2] needs 4"));
    EXPECT_TRUE(hasError(d, 2, 19, "needs a static shape"));
    EXPECT_TRUE(hasError(d, 3, 22, "dimension 1 has 3 elements in the literal but 2 in the type"));
}

TEST(DslSema, NpyInitializerAndPathRules) {
    const auto dir = std::filesystem::temp_directory_path() / "tessera_dsl_npy_test";
    std::filesystem::create_directories(dir);
    {
        // A v1 .npy of float32[2,3] = 0..5.
        std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
        while ((10 + header.size() + 1) % 64 != 0) header += ' ';
        header += '\n';
        std::ofstream f(dir / "w.npy", std::ios::binary);
        f.write("\x93NUMPY\x01\x00", 8);
        const char len[2] = {static_cast<char>(header.size() & 0xFF), static_cast<char>(header.size() >> 8)};
        f.write(len, 2);
        f << header;
        for (int i = 0; i < 6; ++i) {
            const float v = static_cast<float>(i);
            f.write(reinterpret_cast<const char*>(&v), 4);
        }
    }
    ParseOptions o;
    o.baseDir = dir.string();
    auto m = parseOk("param w: f32[2, 3] = npy(\"w.npy\");", o);
    EXPECT_EQ(m.graph.value(m.graph.findValue("w")).data->toDoubles(),
              (std::vector<double>{0, 1, 2, 3, 4, 5}));
    auto bad = parseProgram(
        "param w: f32[3, 2] = npy(\"w.npy\");\nparam v: f32[1] = npy(\"../x.npy\");\nparam u: f32[1] = "
        "npy(\"/etc/x.npy\");",
        "t.tsr", o);
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(hasError(bad.diagnostics(), 1, 22, "declared f32[3,2] but 'w.npy' holds f32[2,3]"));
    EXPECT_TRUE(hasError(bad.diagnostics(), 2, 19, "leaves the program's folder"));
    EXPECT_TRUE(hasError(bad.diagnostics(), 3, 19, "must be relative"));
    o.allowFileAccess = false;
    auto off = parseProgram("param w: f32[2, 3] = npy(\"w.npy\");", "t.tsr", o);
    EXPECT_FALSE(off.ok());
    std::filesystem::remove_all(dir);
}

TEST(DslSema, OnnxInitializerThroughLoader) {
    ParseOptions o;
    int loads = 0;
    o.onnxLoader = [&](const std::string& path) -> support::Expected<std::shared_ptr<const ir::Model>> {
        ++loads;
        EXPECT_NE(path.find("m.onnx"), std::string::npos);
        auto m = std::make_shared<ir::Model>();
        ir::Value v;
        v.name = "onnx::Conv_538";
        v.isInitializer = true;
        v.data = std::make_shared<ir::TensorData>(ir::TensorData::fromFloats({1, 2}, {2}));
        v.type = v.data->type();
        m->graph.initializers().push_back(m->graph.addValue(std::move(v)));
        return std::shared_ptr<const ir::Model>(m);
    };
    auto m = parseOk(
        "param a: f32[2] = onnx(\"m.onnx\", \"onnx::Conv_538\");\nparam b: f32[2] = onnx(\"m.onnx\", "
        "\"onnx::Conv_538\");",
        o);
    EXPECT_EQ(loads, 1);  // cached per parse
    EXPECT_EQ(m.graph.value(m.graph.findValue("b")).data->toDoubles(), (std::vector<double>{1, 2}));
    auto bad = parseProgram("param a: f32[2] = onnx(\"m.onnx\", \"onnx::Conv_583\");", "t.tsr", o);
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(hasError(bad.diagnostics(), 1, 19, "has no initializer or Constant named 'onnx::Conv_583'",
                         "did you mean 'onnx::Conv_538'?"));
    auto none = parseProgram("param a: f32[2] = onnx(\"m.onnx\", \"x\");", "t.tsr");
    EXPECT_TRUE(hasError(none.diagnostics(), 1, 19, "need the ONNX frontend"));
}

TEST(DslSema, MultipleOutputsOmittedInputsDomainsAndQuotedNames) {
    auto m = parseOk(R"(input `input.1`: f32[4, 6];
`a b`, _ = Split(`input.1`, axis=1, num_outputs=2) as "/split/Split";
c = Clip(`a b`, _, _);
d: f32[4, 3] = com.acme::Custom(c, alpha=0.5, names=strings[], k=ints[]);
e: f32[4, 3] = ai.onnx::Resizeish(d);
com.acme::Sink(e) as "sink";
output e;
)");
    ASSERT_EQ(m.graph.numNodes(), 5u);
    const ir::Node& split = node(m, "/split/Split");
    ASSERT_EQ(split.outputs.size(), 2u);
    EXPECT_EQ(split.outputs[1], ir::kNoValue);
    EXPECT_EQ(m.graph.value(split.outputs[0]).name, "a b");
    EXPECT_EQ(typeOf(m, "a b"), "f32[4,3]");
    const ir::Node& clip = node(m, "c");
    ASSERT_EQ(clip.inputs.size(), 3u);
    EXPECT_EQ(clip.inputs[1], ir::kNoValue);
    const ir::Node& custom = node(m, "d");
    EXPECT_EQ(custom.domain, "com.acme");
    EXPECT_EQ(custom.attr("alpha")->type, ir::AttrType::Float);
    EXPECT_EQ(custom.attr("names")->type, ir::AttrType::Strings);
    EXPECT_EQ(custom.attr("k")->type, ir::AttrType::Ints);
    EXPECT_EQ(typeOf(m, "d"), "f32[4,3]");  // from the annotation: the op is not in the registry
    EXPECT_EQ(node(m, "e").domain, "");     // ai.onnx is the default domain
    const ir::Node& sink = node(m, "sink");
    EXPECT_TRUE(sink.outputs.empty());
}

TEST(DslSema, AttributeTypesFollowTheSchema) {
    auto m = parseOk(R"(input x: f32[2, 3];
a = LeakyRelu(x, alpha=1);
c = Constant(value=tensor(f32[2], [1, 2]));
)");
    EXPECT_EQ(node(m, "a").attr("alpha")->type, ir::AttrType::Float);  // int literal converted
    const ir::Attribute* v = node(m, "c").attr("value");
    ASSERT_EQ(v->type, ir::AttrType::Tensor);
    EXPECT_EQ(v->t->toDoubles(), (std::vector<double>{1, 2}));
    EXPECT_EQ(typeOf(m, "c"), "f32[2]");
    auto d = parseErrors(
        "input x: f32[2, 3];\ny = Conv(x, x, group=1.5);\nz = Relu(x, alpah=1);\nw = Softmax(x, "
        "axis=\"1\");");
    EXPECT_TRUE(hasError(d, 2, 22, "attribute 'group' must be int, got a float"));
    EXPECT_TRUE(hasError(d, 4, 21, "attribute 'axis' must be int, got a string"));
}

TEST(DslSema, SubgraphAttributes) {
    auto m = parseOk(R"(input c: bool[];
input a: f32[3];
r = If(c, then_branch = graph t() -> (o) { o = Relu(a); },
          else_branch = graph e() -> (o: f32[3]) { o = Neg(a); });
output r;
)");
    const ir::Node& n = node(m, "r");
    ASSERT_EQ(n.attr("then_branch")->type, ir::AttrType::Graph);
    const ir::Graph& t = *n.attr("then_branch")->g;
    EXPECT_EQ(t.name, "t");
    ASSERT_EQ(t.numNodes(), 1u);
    EXPECT_EQ(t.node(0).opType, "Relu");
    ASSERT_EQ(t.outputs().size(), 1u);
    EXPECT_EQ(t.value(t.outputs()[0]).type.str(), "f32[3]");  // outer 'a' typed through scoping
    EXPECT_TRUE(ir::verify(m.graph).empty()) << ir::verify(m.graph).items()[0].format();
    auto d = parseErrors("input a: f32[3];\nr = If(a, then_branch = graph t() -> (o) { o = Relu(zz); });");
    EXPECT_TRUE(hasError(d, 2, 53, "input 'zz' is not defined"));
    EXPECT_EQ(d.items().size(), 1u);  // no follow-on error for the body's output
}

TEST(DslSema, ComputeNodes) {
    auto m = parseOk(R"(input A: f32[32, 64];
input B: f32[64, 16];
C[i, j] = sum(k) A[i, k] * B[k, j];
D[i: 32, j] = select(C[i, j] > 0.0, C[i, j], 0.0) as "relu_c";
output D;
)");
    ASSERT_EQ(m.graph.numNodes(), 2u);
    const ir::Node& c = node(m, "C");
    EXPECT_EQ(c.opType, "Compute");
    EXPECT_EQ(c.domain, "tessera");
    ASSERT_TRUE(c.compute);
    ASSERT_EQ(c.inputs.size(), 2u);
    EXPECT_EQ(m.graph.value(c.inputs[0]).name, "A");
    const ir::ComputeDef& def = *c.compute;
    ASSERT_EQ(def.axes.size(), 3u);
    EXPECT_EQ(def.numOutputAxes, 2u);
    EXPECT_EQ(def.axes[2].name, "k");
    EXPECT_TRUE(def.axes[2].reduction);
    EXPECT_EQ(def.axes[2].extent.value, 64);
    ASSERT_EQ(def.body.kind, ir::ComputeKind::Reduce);
    EXPECT_EQ(def.body.reduce, ir::ReduceKind::Sum);
    EXPECT_EQ(def.body.reduceAxes, (std::vector<int>{2}));
    const ir::ComputeExpr& mul = def.body.args[0];
    ASSERT_EQ(mul.kind, ir::ComputeKind::Binary);
    EXPECT_EQ(mul.binary, ir::ComputeBinary::Mul);
    EXPECT_EQ(mul.args[0].kind, ir::ComputeKind::Access);
    EXPECT_EQ(mul.args[0].input, 0);
    EXPECT_EQ(mul.args[0].args[1].kind, ir::ComputeKind::Index);
    EXPECT_EQ(mul.args[0].args[1].axis, 2);
    EXPECT_EQ(mul.args[1].input, 1);
    EXPECT_EQ(typeOf(m, "C"), "f32[32,16]");
    EXPECT_EQ(ir::nodeFlops(m.graph, m.graph.findNode("C")).value_or(-1), 32 * 16 * 64 * 2);
    const ir::Node& relu = node(m, "relu_c");
    EXPECT_EQ(relu.compute->body.kind, ir::ComputeKind::Select);
    EXPECT_EQ(relu.inputs.size(), 1u);  // C read twice, one input slot
    EXPECT_EQ(typeOf(m, "D"), "f32[32,16]");
    EXPECT_TRUE(ir::verify(m.graph).empty());
    // Printing and JSON keep the definition.
    EXPECT_NE(ir::printGraph(m.graph).find("compute %C[i: 32, j: 16] = sum(k: 64) %A[i, k] * %B[k, j]"),
              std::string::npos);
    auto back = ir::graphFromJson(ir::toJson(m.graph));
    ASSERT_TRUE(back.ok());
    const ir::Node& c2 = back->node(back->findNode("C"));
    ASSERT_TRUE(c2.compute);
    EXPECT_TRUE(ir::computeEqual(*c2.compute, def));
    // Whole-graph inference re-derives the compute types.
    ir::Graph g = m.graph;
    auto res = ir::inferShapes(g);
    EXPECT_FALSE(res.diagnostics.hasErrors());
    EXPECT_EQ(g.value(g.findValue("D")).type.str(), "f32[32,16]");
}

TEST(DslSema, ComputeErrorsNameBothSides) {
    auto d = parseErrors(R"(input A: f32[32, 64];
input B: f32[48, 16];
input H: f16[32];
C[i, j] = sum(k) A[i, k] * B[k, j];
E[i] = A[i, 0] + H[i];
F[i, j] = A[i, j, 0];
G[n] = A[2 * n, 0];
K[i] = A[i, 0.5];
)");
    EXPECT_TRUE(hasError(
        d, 4, 28,
        "extent of 'k' is 64 from A[i, k] (dim 1 of f32[32,64]) but 48 from B[k, j] (dim 0 of f32[48,16])"));
    EXPECT_TRUE(hasError(d, 5, 8, "'+' mixes f32 (A[i, 0]) and f16 (H[i])", "cast("));
    EXPECT_TRUE(hasError(d, 6, 11, "'A' has rank 2 (f32[32,64]) but is indexed with 3 subscripts"));
    EXPECT_TRUE(hasError(d, 7, 8, "cannot infer the extent of index 'n'", "n: 8"));
    EXPECT_TRUE(hasError(d, 8, 13, "subscript 0.5 of 'A' is f32; subscripts must be integers"));
}

TEST(DslSema, OpShapeErrorsNameBothSides) {
    auto d = parseErrors("input x: f32[2, 3];\ninput b: f32[4];\ny = Add(x, b);\nz = MatMul(x, x);\n");
    EXPECT_TRUE(
        hasError(d, 3, 5, "Add: cannot broadcast f32[2,3] (x) and f32[4] (b)", "input 1 is 'b': f32[4]"));
    EXPECT_TRUE(hasError(d, 4, 5, "MatMul: "));
    auto d2 = parseErrors("input x: f32[2, 3];\ny: f32[2, 4] = Relu(x);\n");
    EXPECT_TRUE(hasError(d2, 2, 4, "declared type f32[2,4] of 'y' does not match the inferred f32[2,3]"));
}

TEST(DslSema, NamesAndDidYouMean) {
    auto d = parseErrors(R"(input image: f32[2, 3];
y = Relu(imgae);
z = Covn(image);
w = relu(image);
w = Relu(image);
q = Relu(image) as "w";
v[i, j] = exp(image[i, j]) + epx(image[i, j]);
u[i, j] = image[i, jj];
input t: flaot32[2];
)");
    EXPECT_TRUE(hasError(d, 2, 10, "input 'imgae' is not defined", "did you mean 'image'?"));
    EXPECT_TRUE(hasError(d, 3, 5, "unknown op 'Covn'", "did you mean 'Conv'?"));
    EXPECT_TRUE(hasError(d, 5, 1, "'w' is already defined", "first defined at 4:1"));
    EXPECT_TRUE(hasError(d, 6, 20, "node name 'w' is already used"));
    EXPECT_TRUE(hasError(d, 7, 30, "unknown function 'epx'", "did you mean 'exp'?"));
    EXPECT_TRUE(hasError(d, 8, 20, "unknown index variable 'jj'", "did you mean 'j'?"));
    EXPECT_TRUE(hasError(d, 9, 10, "unknown element type 'flaot32'", "did you mean 'float32'?") ||
                hasError(d, 9, 10, "unknown element type 'flaot32'"));
}

TEST(DslSema, ImplicitNodeNamesAvoidCollisions) {
    auto m = parseOk("input x: f32[2];\na = Relu(x) as \"b\";\nb = Relu(a);\ncom.acme::Sink(b);\n");
    EXPECT_NE(m.graph.findNode("b"), ir::kNoNode);
    EXPECT_NE(m.graph.findNode("b_1"), ir::kNoNode);
    EXPECT_NE(m.graph.findNode("Sink_2"), ir::kNoNode);
}

TEST(DslSema, SchedulesAndFusion) {
    auto m = parseOk(R"(input A: f32[64, 64];
input B: f32[64, 64];
C[i, j] = sum(k) A[i, k] * B[k, j];
D = Relu(C);
fuse g = [C, D] anchor C;
schedule C { target cuda "sm_90"; grid = spatial(4, 4); block = spatial(16, 16) * repeat(1, 1); tile k by 8; stage A, B in shared; unroll k by 4; }
schedule D { target cpu; parallel x; }
)");
    ASSERT_EQ(m.program.fusions.size(), 1u);
    EXPECT_EQ(m.program.fusions[0].members, (std::vector<std::string>{"C", "D"}));
    EXPECT_EQ(m.program.fusions[0].anchor, "C");
    ASSERT_EQ(m.program.schedules.size(), 2u);
    const auto* s = m.program.scheduleFor("C");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->target, "cuda");
    EXPECT_EQ(s->arch, "sm_90");
    ASSERT_NE(s->mapping("block"), nullptr);
    EXPECT_EQ(s->mapping("block")->text, "spatial(16, 16) * repeat(1, 1)");
    EXPECT_EQ(s->mapping("block")->begin.line, 6);
    ASSERT_EQ(s->tiles.size(), 1u);
    EXPECT_EQ(s->tiles[0].factor, 8);
    ASSERT_EQ(s->stages.size(), 1u);
    EXPECT_EQ(s->stages[0].tensors, (std::vector<std::string>{"A", "B"}));
    EXPECT_EQ(s->unrolls[0].factor, 4);
    // Errors: unknown subject, axis, tensor, mapping problems mapped onto the file's columns.
    auto d = parseErrors(R"(input A: f32[64, 64];
C[i, j] = sum(k) A[i, k] * A[k, j];
E = Relu(A);
schedule Cc { target cuda; }
schedule C { target gpu; tile kk by 8; stage Z in shared; block = spatial(16, 16) * repaet(2, 2); }
schedule C { grid = spatial(64, 64); }
fuse f = [C, E];
fuse h = [C, nope] anchor E;
)");
    EXPECT_TRUE(hasError(d, 4, 10, "no node or fusion group of that name", "did you mean 'C'?"));
    EXPECT_TRUE(hasError(d, 5, 21, "unknown target 'gpu'"));
    EXPECT_TRUE(hasError(d, 5, 31, "kernel 'C' has no axis 'kk'", "did you mean 'k'?"));
    EXPECT_TRUE(hasError(d, 5, 46, "kernel 'C' does not read 'Z'"));
    bool mapErr = false;
    for (const auto& x : d.items())
        if (x.message.find("block mapping:") != std::string::npos) {
            mapErr = true;
            EXPECT_EQ(x.begin.line, 5);
            EXPECT_EQ(x.begin.column, 85);  // 'repaet' in the file
            ASSERT_FALSE(x.notes.empty());
            EXPECT_EQ(x.notes[0], "hint: did you mean `repeat`?");
        }
    EXPECT_TRUE(mapErr);
    EXPECT_TRUE(hasError(d, 6, 10, "'C' is scheduled twice"));
    EXPECT_TRUE(hasError(d, 7, 14, "fusion group 'f' is not connected"));
    EXPECT_TRUE(hasError(d, 8, 14, "fusion member 'nope' is not a node"));
}

TEST(DslSema, BlockMappingOverThreadLimit) {
    auto d = parseErrors("input A: f32[64];\nB[i] = A[i];\nschedule B { block = spatial(64, 32); }\n");
    EXPECT_TRUE(hasError(d, 3, 22, "block mapping has 2048 workers"));
}

TEST(DslSema, ResolveOpAlias) {
    EXPECT_EQ(resolveOpAlias("conv2d"), "Conv");
    EXPECT_EQ(resolveOpAlias("relu"), "Relu");
    EXPECT_EQ(resolveOpAlias("matmul"), "MatMul");
    EXPECT_EQ(resolveOpAlias("batchnormalization"), "BatchNormalization");
    EXPECT_EQ(resolveOpAlias("Conv"), "Conv");
    EXPECT_EQ(resolveOpAlias("CONV"), "");
    EXPECT_EQ(resolveOpAlias("nonsense"), "");
}
