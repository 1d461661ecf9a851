// Importer unit tests on models built in memory with the ONNX protobuf classes: tensor
// validation, external-data path rules, naming, versions and scoping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

// The test target links tessera_onnx, whose libonnx dependency is private; the protobuf classes
// still link, but the compile definitions that libonnx's target carries must be given here.
#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#include <onnx/onnx_pb.h>

#include "core/frontend/onnx/onnx_importer.h"

namespace {

namespace fs = std::filesystem;
namespace ir = tessera::ir;
using tessera::frontend::onnx::ImportOptions;
using tessera::frontend::onnx::importModel;
using tessera::frontend::onnx::importModelFromBytes;

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

void setTensorType(onnx::ValueInfoProto* vi, const std::string& name, std::vector<std::int64_t> dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    auto* shape = tt->mutable_shape();
    for (auto d : dims) shape->add_dim()->set_dim_value(d);
}

/// x f32[2,3] -> Relu -> y, IR 8, opset 17.
onnx::ModelProto reluModel() {
    onnx::ModelProto m;
    m.set_ir_version(8);
    auto* op = m.add_opset_import();
    op->set_domain("");
    op->set_version(17);
    auto* g = m.mutable_graph();
    g->set_name("g");
    setTensorType(g->add_input(), "x", {2, 3});
    setTensorType(g->add_output(), "y", {2, 3});
    auto* n = g->add_node();
    n->set_op_type("Relu");
    n->set_name("relu");
    n->add_input("x");
    n->add_output("y");
    return m;
}

/// Adds `w` f32[2,3] as an initializer consumed by an Add after the Relu (y = relu(x) + w).
onnx::TensorProto* addWeight(onnx::ModelProto& m) {
    auto* g = m.mutable_graph();
    g->mutable_node(0)->set_output(0, "r");
    auto* add = g->add_node();
    add->set_op_type("Add");
    add->set_name("add");
    add->add_input("r");
    add->add_input("w");
    add->add_output("y");
    auto* t = g->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(2);
    t->add_dims(3);
    return t;
}

tessera::support::Expected<ir::Model> importProto(const onnx::ModelProto& m, const std::string& baseDir = {},
                                                  const ImportOptions& o = {}) {
    return importModelFromBytes(m.SerializeAsString(), "mem.onnx", baseDir, o);
}

std::string firstError(const tessera::support::Expected<ir::Model>& r) {
    const auto* e = r.diagnostics().firstError();
    return e ? e->format() : std::string("<no error>");
}

TEST(OnnxImporter, ImportsMinimalModel) {
    auto r = importProto(reluModel());
    ASSERT_TRUE(r.ok()) << firstError(r);
    EXPECT_EQ(r->graph.numNodes(), 1u);
    EXPECT_EQ(r->graph.value(r->graph.outputs()[0]).type.str(), "f32[2,3]");
}

TEST(OnnxImporter, EmptyAndLfsAndGarbage) {
    auto e = importModelFromBytes("", "a.onnx", "");
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(firstError(e), "a.onnx: error: empty file");
    auto l = importModelFromBytes("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 12\n", "b.onnx", "");
    ASSERT_FALSE(l.ok());
    EXPECT_NE(firstError(l).find("Git LFS pointer"), std::string::npos);
    auto g = importModelFromBytes(std::string("\xff\xff\xff\xff\xff\x01", 6), "c.onnx", "");
    ASSERT_FALSE(g.ok());
    EXPECT_NE(firstError(g).find("not a valid ONNX model"), std::string::npos);
}

TEST(OnnxImporter, VersionChecks) {
    auto m = reluModel();
    m.set_ir_version(99);
    auto r = importProto(m);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(firstError(r).find("unsupported IR version 99 (Tessera reads 3..10, and up to 14 with a warning)"),
              std::string::npos);
    // onnx 1.23 writes IR 14 by default: read, with a warning naming the version.
    m = reluModel();
    m.set_ir_version(14);
    r = importProto(m);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    EXPECT_NE(r.diagnostics().formatAll().find("IR version 14 is newer than 10"), std::string::npos)
        << r.diagnostics().formatAll();
    m = reluModel();
    m.mutable_opset_import(0)->set_version(22);
    r = importProto(m);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(lower(firstError(r)).find("opset 22"), std::string::npos);
    m = reluModel();
    m.set_ir_version(10);
    r = importProto(m);
    ASSERT_TRUE(r.ok()) << firstError(r);
    bool note = false;
    for (const auto& d : r.diagnostics().items()) note |= d.severity == tessera::support::Severity::Note;
    EXPECT_TRUE(note);
}

TEST(OnnxImporter, EmptyNodeNamesBecomeUnique) {
    auto m = reluModel();
    auto* g = m.mutable_graph();
    g->mutable_node(0)->set_name("");
    g->mutable_node(0)->set_output(0, "a");
    // A second Relu whose explicit name collides with the generated one of the first.
    auto* n = g->add_node();
    n->set_op_type("Relu");
    n->set_name("Relu_0");
    n->add_input("a");
    n->add_output("y");
    auto r = importProto(m);
    ASSERT_TRUE(r.ok()) << firstError(r);
    EXPECT_NE(r->graph.node(0).name, "");
    EXPECT_NE(r->graph.node(0).name, r->graph.node(1).name);
    EXPECT_EQ(r->graph.node(1).name, "Relu_0");
}

TEST(OnnxImporter, TypedFieldsArePacked) {
    auto m = reluModel();
    auto* t = addWeight(m);
    for (int i = 0; i < 6; ++i) t->add_float_data(static_cast<float>(i) * 0.5f);
    auto r = importProto(m);
    ASSERT_TRUE(r.ok()) << firstError(r);
    const auto& d = *r->graph.value(r->graph.findValue("w")).data;
    EXPECT_EQ(d.toDoubles(), (std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5}));

    // f16 is packed into int32_data: 0x3C00 = 1.0, 0xC000 = -2.0.
    auto m2 = reluModel();
    auto* g = m2.mutable_graph();
    auto* c = g->add_node();
    c->set_op_type("Constant");
    c->set_name("c");
    c->add_output("k");
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* ht = a->mutable_t();
    ht->set_data_type(onnx::TensorProto::FLOAT16);
    ht->add_dims(2);
    ht->add_int32_data(0x3C00);
    ht->add_int32_data(0xC000);
    auto r2 = importProto(m2);
    ASSERT_TRUE(r2.ok()) << firstError(r2);
    const auto* attr = r2->graph.node(r2->graph.findNode("c")).attr("value");
    ASSERT_TRUE(attr && attr->t);
    EXPECT_EQ(attr->t->toDoubles(), (std::vector<double>{1.0, -2.0}));
}

TEST(OnnxImporter, RawDataSizeMustMatch) {
    auto m = reluModel();
    auto* t = addWeight(m);
    t->set_raw_data(std::string(20, '\0'));  // 6 floats need 24 bytes
    auto r = importProto(m);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(firstError(r).find("initializer 'w'"), std::string::npos) << firstError(r);
    EXPECT_NE(firstError(r).find("raw_data has 20 bytes"), std::string::npos) << firstError(r);
}

TEST(OnnxImporter, AbsurdDimsAreRefusedBeforeAllocation) {
    auto m = reluModel();
    auto* t = addWeight(m);
    t->clear_dims();
    t->add_dims(std::int64_t{1} << 40);
    t->add_dims(std::int64_t{1} << 40);
    auto r = importProto(m);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(firstError(r).find("overflow"), std::string::npos) << firstError(r);

    t->clear_dims();
    t->add_dims(std::int64_t{1} << 33);  // 32 GiB of floats, above the 2 GiB tensor limit
    r = importProto(m);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(firstError(r).find("limit"), std::string::npos) << firstError(r);

    t->clear_dims();
    t->add_dims(-4);
    r = importProto(m);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(firstError(r).find("negative"), std::string::npos) << firstError(r);
}

TEST(OnnxImporter, UndefinedInputIsNamed) {
    auto m = reluModel();
    m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
    auto r = importProto(m);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(firstError(r).find("node 'relu' (Relu)"), std::string::npos) << firstError(r);
    EXPECT_NE(firstError(r).find("'nowhere'"), std::string::npos) << firstError(r);
}

TEST(OnnxImporter, HostileNamesAreQuotedOnOneLine) {
    auto m = reluModel();
    m.mutable_graph()->mutable_node(0)->set_input(0, "a'b\nc\\d");
    auto r = importProto(m);
    ASSERT_FALSE(r.ok());
    const std::string line = firstError(r);
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    EXPECT_NE(line.find("'a\\'b\\nc\\\\d'"), std::string::npos) << line;

    auto m2 = reluModel();
    m2.mutable_graph()->mutable_node(0)->set_name(std::string("bad\xff\xfe", 5));
    auto r2 = importProto(m2);
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(firstError(r2).find("UTF-8"), std::string::npos) << firstError(r2);
}

class ExternalDataTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_root = fs::temp_directory_path() /
                 ("tessera_ext_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(m_root);
        fs::create_directories(m_root / "model");
        std::ofstream(m_root / "model" / "w.bin", std::ios::binary).write(std::string(24 + 8, '\x01').data(), 32);
        std::ofstream(m_root / "secret.bin", std::ios::binary).write(std::string(24, '\x02').data(), 24);
    }
    void TearDown() override { fs::remove_all(m_root); }

    tessera::support::Expected<ir::Model> importWith(const std::string& location, const std::string& offset,
                                                     const std::string& length) {
        auto m = reluModel();
        auto* t = addWeight(m);
        t->set_data_location(onnx::TensorProto::EXTERNAL);
        auto add = [&](const char* k, const std::string& v) {
            if (v.empty()) return;
            auto* e = t->add_external_data();
            e->set_key(k);
            e->set_value(v);
        };
        add("location", location);
        add("offset", offset);
        add("length", length);
        const fs::path file = m_root / "model" / "m.onnx";
        std::ofstream(file, std::ios::binary) << m.SerializeAsString();
        return importModel(file.string());
    }

    fs::path m_root;
};

TEST_F(ExternalDataTest, ReadsInsideTheFolder) {
    auto r = importWith("w.bin", "8", "24");
    ASSERT_TRUE(r.ok()) << firstError(r);
    EXPECT_EQ(r->graph.value(r->graph.findValue("w")).data->bytes, std::vector<std::uint8_t>(24, 1));
}

TEST_F(ExternalDataTest, RefusesEscapesAndBadRanges) {
    auto expectError = [&](const std::string& loc, const std::string& off, const std::string& len,
                           const std::string& want) {
        auto r = importWith(loc, off, len);
        ASSERT_FALSE(r.ok()) << loc;
        EXPECT_NE(lower(firstError(r)).find(want), std::string::npos) << firstError(r);
        EXPECT_NE(firstError(r).find("m.onnx"), std::string::npos) << firstError(r);
        EXPECT_NE(firstError(r).find("initializer 'w'"), std::string::npos) << firstError(r);
    };
    expectError("../secret.bin", "", "24", "outside the model's folder");
    expectError("sub/../../secret.bin", "", "", "outside the model's folder");
    expectError((m_root / "secret.bin").string(), "", "24", "absolute");
    expectError("missing.bin", "", "", "not found");
    expectError("w.bin", "40", "24", "beyond the end");
    expectError("w.bin", "16", "24", "beyond the end");
    expectError("w.bin", "0", "28", "does not match");
    expectError("w.bin", "-8", "24", "offset");
    expectError(".", "", "", "not a regular file");
    std::error_code ec;
    fs::create_symlink(m_root / "secret.bin", m_root / "model" / "link.bin", ec);
    if (!ec) expectError("link.bin", "", "24", "outside the model's folder");
}

TEST(OnnxImporterExternal, RefusedForInMemoryModels) {
    auto m = reluModel();
    auto* t = addWeight(m);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value("w.bin");
    auto r = importProto(m, "");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(firstError(r).find("from memory"), std::string::npos) << firstError(r);
}

TEST(OnnxImporter, SubgraphSeesOuterNames) {
    auto m = reluModel();
    auto* g = m.mutable_graph();
    g->mutable_node(0)->set_output(0, "r");
    auto* cond = g->add_initializer();
    cond->set_name("cond");
    cond->set_data_type(onnx::TensorProto::BOOL);
    cond->add_int32_data(1);
    auto* ifn = g->add_node();
    ifn->set_op_type("If");
    ifn->set_name("if");
    ifn->add_input("cond");
    ifn->add_output("y");
    for (const char* branch : {"then_branch", "else_branch"}) {
        auto* a = ifn->add_attribute();
        a->set_name(branch);
        a->set_type(onnx::AttributeProto::GRAPH);
        auto* sg = a->mutable_g();
        sg->set_name(branch);
        auto* n = sg->add_node();
        n->set_op_type("Identity");
        n->add_input("r");  // from the outer graph
        n->add_output(std::string(branch) + "_out");
        setTensorType(sg->add_output(), std::string(branch) + "_out", {2, 3});
    }
    auto r = importProto(m);
    ASSERT_TRUE(r.ok()) << firstError(r);
    const auto* thenB = r->graph.node(r->graph.findNode("if")).attr("then_branch");
    ASSERT_TRUE(thenB && thenB->g);
    EXPECT_NE(thenB->g->findValue("r"), ir::kNoValue);
    EXPECT_EQ(thenB->g->node(0).name, "Identity_0");

    // An undefined name inside a subgraph is an error naming the subgraph and node.
    g->mutable_node(1)->mutable_attribute(0)->mutable_g()->mutable_node(0)->set_input(0, "ghost");
    r = importProto(m);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(firstError(r).find("then_branch"), std::string::npos) << firstError(r);
    EXPECT_NE(firstError(r).find("'ghost'"), std::string::npos) << firstError(r);
}

}  // namespace

namespace {

TEST(OnnxImporter, DeclaredTypeDisagreementIsAWarning) {
    auto m = reluModel();
    // The file claims y is [2,4]; Relu of [2,3] is [2,3].
    m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(4);
    auto r = importProto(m);
    ASSERT_TRUE(r.ok()) << firstError(r);
    bool warned = false;
    for (const auto& d : r.diagnostics().items())
        if (d.severity == tessera::support::Severity::Warning && d.format().find("'y'") != std::string::npos) warned = true;
    EXPECT_TRUE(warned);
    const auto& y = r->graph.value(r->graph.outputs()[0]);
    EXPECT_EQ(y.type.str(), "f32[2,3]");
    ASSERT_TRUE(y.onnxType.has_value());
    EXPECT_EQ(y.onnxType->str(), "f32[2,4]");
}

TEST(OnnxImporter, OnnxInferenceFillsIntermediateTypes) {
    auto m = reluModel();
    auto* t = addWeight(m);
    for (int i = 0; i < 6; ++i) t->add_float_data(1.0f);
    auto r = importProto(m);
    ASSERT_TRUE(r.ok()) << firstError(r);
    const auto& rv = r->graph.value(r->graph.findValue("r"));
    ASSERT_TRUE(rv.onnxType.has_value());  // from ONNX's shape inference (no value_info in the file)
    EXPECT_EQ(rv.onnxType->str(), "f32[2,3]");
    EXPECT_EQ(rv.type.str(), "f32[2,3]");

    ImportOptions noOnnx;
    noOnnx.runOnnxShapeInference = false;
    auto r2 = importProto(m, {}, noOnnx);
    ASSERT_TRUE(r2.ok()) << firstError(r2);
    EXPECT_FALSE(r2->graph.value(r2->graph.findValue("r")).onnxType.has_value());
}

TEST(OnnxImporter, TensorLimitIsConfigurable) {
    auto m = reluModel();
    auto* t = addWeight(m);
    for (int i = 0; i < 6; ++i) t->add_float_data(1.0f);
    ImportOptions tight;
    tight.maxTensorBytes = 16;
    auto r = importProto(m, {}, tight);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(firstError(r).find("above the limit of 16 bytes"), std::string::npos) << firstError(r);
}

TEST(OnnxImporter, TypeConstraintConflictNamesBothInputs) {
    auto m = reluModel();
    auto* t = addWeight(m);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int i = 0; i < 6; ++i) t->add_int64_data(1);
    auto r = importProto(m);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(firstError(r).find("node 'add' (Add)"), std::string::npos) << firstError(r);
    // Tessera's registry applies ONNX's type constraints itself (for every opset, not only <= 17).
    EXPECT_NE(firstError(r).find("input 0 ('r') is f32[2,3] but input 1 ('w') is i64[2,3]"), std::string::npos)
        << firstError(r);
}

}  // namespace

#include "core/ir/op_registry.h"

namespace {

TEST(OnnxImporter, OnnxInferenceSkippedForUnvettedConvLikeOps) {
    if (ir::OpRegistry::instance().find("", "ConvInteger")) GTEST_SKIP() << "ConvInteger is in Tessera's registry";
    auto m = reluModel();
    auto* g = m.mutable_graph();
    g->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::UINT8);
    g->mutable_node(0)->set_op_type("ConvInteger");
    g->mutable_node(0)->add_input("w");
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::UINT8);
    w->add_dims(3);
    w->set_raw_data(std::string(3, '\1'));
    auto r = importProto(m);
    ASSERT_TRUE(r.ok()) << firstError(r);
    bool skipped = false;
    for (const auto& d : r.diagnostics().items())
        skipped |= d.message.find("ONNX shape inference skipped: op ConvInteger") != std::string::npos;
    EXPECT_TRUE(skipped);
}

}  // namespace

namespace {

/// A graph for level `level` of a chain of nested Ifs: If(c) { then: level+1 ... } { else: Identity(x) }.
/// The innermost then_branch is Relu(x), or Add(x, int64 1) when `innerTypeError`.
void buildNestedIf(onnx::GraphProto* g, int level, int depth, bool innerTypeError) {
    const std::string k = std::to_string(level);
    g->set_name("level" + k);
    if (level == depth) {
        auto* n = g->add_node();
        n->set_name("inner");
        n->add_input("x");
        n->add_output("y" + k);
        if (innerTypeError) {
            n->set_op_type("Add");
            n->add_input("one");
            auto* t = g->add_initializer();
            t->set_name("one");
            t->set_data_type(onnx::TensorProto::INT64);
            t->add_int64_data(1);
        } else {
            n->set_op_type("Relu");
        }
    } else {
        auto* n = g->add_node();
        n->set_op_type("If");
        n->set_name("if" + k);
        n->add_input("c");
        n->add_output("y" + k);
        auto* thenA = n->add_attribute();
        thenA->set_name("then_branch");
        thenA->set_type(onnx::AttributeProto::GRAPH);
        buildNestedIf(thenA->mutable_g(), level + 1, depth, innerTypeError);
        auto* elseA = n->add_attribute();
        elseA->set_name("else_branch");
        elseA->set_type(onnx::AttributeProto::GRAPH);
        auto* eg = elseA->mutable_g();
        eg->set_name("else" + k);
        auto* id = eg->add_node();
        id->set_op_type("Identity");
        id->set_name("else_id" + k);
        id->add_input("x");
        id->add_output("e" + k);
        setTensorType(eg->add_output(), "e" + k, {2, 3});
    }
    setTensorType(g->add_output(), "y" + k, {2, 3});
}

onnx::ModelProto nestedIfModel(int depth, bool innerTypeError) {
    onnx::ModelProto m = reluModel();
    auto* g = m.mutable_graph();
    g->clear_node();
    g->clear_output();
    auto* c = g->add_input();
    c->set_name("c");
    c->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
    c->mutable_type()->mutable_tensor_type()->mutable_shape();
    buildNestedIf(g, 0, depth, innerTypeError);
    return m;
}

std::size_t count(const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
    return n;
}

}  // namespace

// Regression: nested subgraph contexts used to double at every level (exponential memory: 26
// nested Ifs took over 11 GB). 30 levels (protobuf allows about 33) must import quickly.
TEST(OnnxImporter, DeeplyNestedIfImportsInLinearSpace) {
    auto r = importProto(nestedIfModel(30, false));
    ASSERT_TRUE(r.ok()) << firstError(r);
    EXPECT_EQ(r->graph.numNodes(), 1u);
    EXPECT_EQ(r->graph.value(r->graph.outputs()[0]).type.str(), "f32[2,3]");
}

TEST(OnnxImporter, NestedErrorNamesEachLevelOnce) {
    auto r = importProto(nestedIfModel(5, true));
    ASSERT_FALSE(r.ok());
    const std::string e = firstError(r);
    EXPECT_NE(e.find("'inner' (Add)"), std::string::npos) << e;
    for (int k = 0; k < 5; ++k) EXPECT_EQ(count(e, "'if" + std::to_string(k) + "' (If)"), 1u) << e;
    EXPECT_LT(e.size(), 600u) << e;
}

TEST(OnnxImporter, UnknownOpsGetOneNoteEach) {
    onnx::ModelProto m = reluModel();
    auto* g = m.mutable_graph();
    g->mutable_node(0)->set_op_type("FooBar");
    auto r = importProto(m);
    ASSERT_TRUE(r.ok()) << firstError(r);
    int notes = 0;
    for (const auto& d : r.diagnostics().items()) {
        if (d.severity != tessera::support::Severity::Note) continue;
        if (d.message.find("'FooBar' (1 node) is not in Tessera's op registry") != std::string::npos) ++notes;
    }
    EXPECT_EQ(notes, 1);
    // Registered ops, control flow included, get no such note.
    auto nested = importProto(nestedIfModel(3, false));
    ASSERT_TRUE(nested.ok()) << firstError(nested);
    for (const auto& d : nested.diagnostics().items())
        EXPECT_EQ(d.message.find("not in Tessera's op registry"), std::string::npos) << d.format();
}
