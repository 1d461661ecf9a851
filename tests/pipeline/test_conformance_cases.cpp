// ONNX backend node tests (core/pipeline/conformance_cases.h): discovery and loading on a small
// hand-made case, and every node test of libonnx-testdata through the reference interpreter
// (skipped, visibly, where the data is not installed).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/eval/reference_interpreter.h"
#include "core/frontend/onnx/tensor_proto.h"
#include "core/pipeline/conformance_cases.h"

using namespace tessera;
namespace fs = std::filesystem;

namespace {

// ---- a tiny protobuf writer for TensorProto test files ----------------------------------------

void putVarint(std::string& s, std::uint64_t v) {
    while (v >= 0x80) {
        s += static_cast<char>((v & 0x7f) | 0x80);
        v >>= 7;
    }
    s += static_cast<char>(v);
}

void putKey(std::string& s, int field, int wire) { putVarint(s, static_cast<std::uint64_t>(field) << 3 | wire); }

/// TensorProto{dims, data_type = f32 (1), raw_data = values}.
std::string floatTensorProto(const std::vector<std::int64_t>& dims, const std::vector<float>& values) {
    std::string s;
    for (auto d : dims) {
        putKey(s, 1, 0);
        putVarint(s, static_cast<std::uint64_t>(d));
    }
    putKey(s, 2, 0);
    putVarint(s, 1);
    std::string raw(values.size() * 4, '\0');
    std::memcpy(raw.data(), values.data(), raw.size());
    putKey(s, 9, 2);
    putVarint(s, raw.size());
    s += raw;
    return s;
}

/// TensorProto{dims, data_type = i64 (7), int64_data packed = values}.
std::string int64TensorProto(const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& values) {
    std::string s;
    for (auto d : dims) {
        putKey(s, 1, 0);
        putVarint(s, static_cast<std::uint64_t>(d));
    }
    putKey(s, 2, 0);
    putVarint(s, 7);
    std::string packed;
    for (auto v : values) putVarint(packed, static_cast<std::uint64_t>(v));
    putKey(s, 7, 2);
    putVarint(s, packed.size());
    return s + packed;
}

/// SequenceProto{name = "seq", elem_type = TENSOR (1), tensor_values = [tensor]}.
std::string sequenceProto(const std::string& tensor) {
    std::string s;
    putKey(s, 1, 2);
    putVarint(s, 3);
    s += "seq";
    putKey(s, 2, 0);
    putVarint(s, 1);
    putKey(s, 3, 2);
    putVarint(s, tensor.size());
    return s + tensor;
}

void writeFile(const fs::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary);
    f << bytes;
}

std::string nodeTestRoot() {
    if (const char* e = std::getenv("TESSERA_ONNX_NODE_TESTS")) return e;
    return "/usr/share/libonnx-testdata/data/node";
}

}  // namespace

TEST(TensorProtoFiles, ReadsRawAndTypedDataAndRejectsOtherKinds) {
    const fs::path dir = fs::path(TESSERA_BINARY_DIR) / "tensor_proto_test";
    fs::remove_all(dir);
    fs::create_directories(dir);
    writeFile(dir / "f.pb", floatTensorProto({2, 2}, {1.5f, -2, 0, 8}));
    auto f = frontend::onnx::readTensorProtoFile((dir / "f.pb").string());
    ASSERT_TRUE(f.ok()) << f.diagnostics().firstError()->message;
    EXPECT_EQ(f->dtype, ir::DType::F32);
    EXPECT_EQ(f->dims, (std::vector<std::int64_t>{2, 2}));
    EXPECT_EQ(f->toDoubles(), (std::vector<double>{1.5, -2, 0, 8}));

    writeFile(dir / "i.pb", int64TensorProto({3}, {5, -1, 1ll << 40}));
    auto i = frontend::onnx::readTensorProtoFile((dir / "i.pb").string());
    ASSERT_TRUE(i.ok()) << i.diagnostics().firstError()->message;
    EXPECT_EQ(i->dtype, ir::DType::I64);
    EXPECT_EQ(i->toInts(), (std::vector<std::int64_t>{5, -1, 1ll << 40}));

    writeFile(dir / "seq.pb", sequenceProto(floatTensorProto({1}, {1})));
    auto q = frontend::onnx::readTensorProtoFile((dir / "seq.pb").string());
    ASSERT_FALSE(q.ok());
    EXPECT_EQ(q.diagnostics().firstError()->file, (dir / "seq.pb").string());
    EXPECT_EQ(q.diagnostics().firstError()->message.rfind("unsupported test data kind", 0), 0u)
        << q.diagnostics().firstError()->message;

    // raw_data shorter than the dims say.
    writeFile(dir / "short.pb", floatTensorProto({4}, {1, 2, 3}));
    auto sh = frontend::onnx::readTensorProtoFile((dir / "short.pb").string());
    ASSERT_FALSE(sh.ok());
    EXPECT_EQ(sh.diagnostics().firstError()->message, "raw_data has 12 bytes but f32 x 4 elements needs 16 bytes");

    auto missing = frontend::onnx::readTensorProtoFile((dir / "missing.pb").string());
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.diagnostics().firstError()->file, (dir / "missing.pb").string());
    EXPECT_EQ(missing.diagnostics().firstError()->message, "file not found");
    writeFile(dir / "empty.pb", "");
    EXPECT_EQ(frontend::onnx::readTensorProtoFile((dir / "empty.pb").string()).diagnostics().firstError()->message,
              "empty file");
    fs::remove_all(dir);
}

TEST(ConformanceCases, DiscoversLoadsAndRunsAHandMadeCase) {
    const fs::path root = fs::path(TESSERA_BINARY_DIR) / "conformance_cases_test";
    fs::remove_all(root);
    const fs::path tc = root / "test_symbolic_batch";  // Gemm [N,64]x[64,32] + Softmax
    for (int k : {0, 1, 2, 10}) fs::create_directories(tc / ("test_data_set_" + std::to_string(k)));
    fs::create_directories(root / "not_a_test");
    fs::copy_file(fs::path(TESSERA_SAMPLES) / "symbolic_batch.onnx", tc / "model.onnx");
    std::vector<float> x(2 * 64);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
    const std::string in = floatTensorProto({2, 64}, x);
    const fs::path s0 = tc / "test_data_set_0", s1 = tc / "test_data_set_1", s2 = tc / "test_data_set_2",
                   s10 = tc / "test_data_set_10";
    writeFile(s0 / "input_0.pb", in);
    for (const char* f : {"input_0.pb", "input_1.pb", "input_10.pb", "input_2.pb", "input_x.pb", "notes.txt"})
        writeFile(s1 / f, in);
    writeFile(s2 / "input_0.pb", in);
    writeFile(s2 / "output_0.pb", floatTensorProto({2, 32}, std::vector<float>(64, 1.0f / 32)));
    writeFile(s10 / "input_0.pb", in);
    writeFile(s10 / "output_0.pb", floatTensorProto({2, 5}, std::vector<float>(10, 0.0f)));

    auto cases = pipeline::discoverConformanceCases(root.string());
    ASSERT_TRUE(cases.ok());
    ASSERT_EQ(cases->size(), 1u);
    const auto& c = cases->front();
    EXPECT_EQ(c.name, "test_symbolic_batch");
    EXPECT_EQ(c.dir, tc.string());
    EXPECT_EQ(c.opType, "");  // two nodes
    EXPECT_EQ(c.opset, 17);
    EXPECT_FALSE(c.nonTensorData);
    ASSERT_EQ(c.dataSets.size(), 4u);
    EXPECT_EQ(c.dataSets[3].dir, s10.string());  // numeric order: 0 1 2 10
    EXPECT_EQ(c.dataSets[0].inputs, std::vector<std::string>{(s0 / "input_0.pb").string()});
    EXPECT_TRUE(c.dataSets[0].outputs.empty());
    EXPECT_EQ(c.dataSets[1].inputs, (std::vector<std::string>{(s1 / "input_0.pb").string(), (s1 / "input_1.pb").string(),
                                                              (s1 / "input_2.pb").string(), (s1 / "input_10.pb").string()}));

    // A single test folder is a case too.
    auto one = pipeline::discoverConformanceCases(tc.string());
    ASSERT_TRUE(one.ok());
    ASSERT_EQ(one->size(), 1u);
    EXPECT_EQ(one->front().name, "test_symbolic_batch");

    auto d0 = pipeline::loadConformanceData(c, 0);
    ASSERT_FALSE(d0.ok());
    EXPECT_EQ(d0.diagnostics().firstError()->message, "the graph has 1 outputs but the data set 0 output files");
    auto d1 = pipeline::loadConformanceData(c, 1);
    ASSERT_FALSE(d1.ok());
    EXPECT_EQ(d1.diagnostics().firstError()->message, "the graph has 1 runtime inputs but the data set 4 input files");
    EXPECT_FALSE(pipeline::loadConformanceData(c, 4).ok());
    EXPECT_FALSE(pipeline::loadConformanceData(c, -1).ok());

    auto d2 = pipeline::loadConformanceData(c, 2);
    ASSERT_TRUE(d2.ok()) << d2.diagnostics().firstError()->message;
    ASSERT_EQ(d2->inputs.size(), 1u);
    EXPECT_EQ(d2->inputs[0].dims, (std::vector<std::int64_t>{2, 64}));
    EXPECT_EQ(d2->inputs[0].elementAsDouble(3), -0.0);
    EXPECT_EQ(d2->inputs[0].elementAsDouble(6), 0.75);
    ASSERT_EQ(d2->expected.size(), 1u);
    EXPECT_EQ(d2->expected[0].dims, (std::vector<std::int64_t>{2, 32}));
    EXPECT_EQ(d2->model.graph.nodes().size(), 2u);

    // The uniform expected output is wrong (the softmax of a Gemm is not uniform): Failed.
    auto r2 = pipeline::runConformanceWithReference(c, 2);
    EXPECT_EQ(r2.status, pipeline::ConformanceStatus::Failed);
    ASSERT_EQ(r2.outputs.size(), 1u);
    EXPECT_GT(r2.outputs[0].beyondTolerance, 0);
    EXPECT_GT(r2.outputs[0].relL2, 0.01);
    EXPECT_EQ(r2.message.rfind("output 'output': ", 0), 0u) << r2.message;
    auto r10 = pipeline::runConformanceWithReference(c, 3);
    EXPECT_EQ(r10.status, pipeline::ConformanceStatus::Failed);
    EXPECT_EQ(r10.message, "output 'output': shape [2,32] vs [2,5] expected");
    auto r0 = pipeline::runConformanceWithReference(c, 0);
    EXPECT_EQ(r0.status, pipeline::ConformanceStatus::Skipped);
    EXPECT_STREQ(pipeline::conformanceStatusName(r0.status), "skipped");

    EXPECT_FALSE(pipeline::discoverConformanceCases((root / "missing").string()).ok());
    EXPECT_FALSE(pipeline::discoverConformanceCases((root / "not_a_test").string()).ok());
    fs::remove_all(root);
}

/// Every node test through the reference interpreter, with a per-op table on stdout.
TEST(ConformanceNodeTests, ReferenceInterpreterPassesCoreOps) {
    const std::string root = nodeTestRoot();
    if (!fs::is_directory(root))
        GTEST_SKIP() << "ONNX node tests not found at " << root
                     << " (install libonnx-testdata or set TESSERA_ONNX_NODE_TESTS)";
    auto cases = pipeline::discoverConformanceCases(root);
    ASSERT_TRUE(cases.ok());
    EXPECT_GT(cases->size(), 100u);

    struct Counts {
        int passed = 0, failed = 0, skipped = 0, error = 0;
        int noImplementation = 0;  ///< skipped because the reference has no implementation
        std::vector<std::string> bad;  ///< "test_x: message" for failed and errored data sets
    };
    std::map<std::string, Counts> perOp;
    Counts total;
    const bool verbose = std::getenv("TESSERA_CONFORMANCE_VERBOSE") != nullptr;
    for (const auto& c : *cases) {
        const std::string key = c.opType.empty() ? "(multi-node)" : c.opType;
        for (std::size_t k = 0; k < c.dataSets.size(); ++k) {
            const auto r = pipeline::runConformanceWithReference(c, static_cast<int>(k));
            Counts& o = perOp[key];
            switch (r.status) {
            case pipeline::ConformanceStatus::Passed: ++o.passed, ++total.passed; break;
            case pipeline::ConformanceStatus::Failed: ++o.failed, ++total.failed; break;
            case pipeline::ConformanceStatus::Skipped:
                ++o.skipped, ++total.skipped;
                if (r.message.find(eval::kNoReferenceImplementation) != std::string::npos) ++o.noImplementation;
                break;
            case pipeline::ConformanceStatus::Error: ++o.error, ++total.error; break;
            }
            if (r.status == pipeline::ConformanceStatus::Failed || r.status == pipeline::ConformanceStatus::Error ||
                (verbose && r.status == pipeline::ConformanceStatus::Skipped))
                o.bad.push_back(c.name + " [" + pipeline::conformanceStatusName(r.status) + "]: " + r.message);
        }
    }
    std::cout << "op,passed,failed,skipped,error\n";
    for (const auto& [op, o] : perOp)
        std::cout << op << "," << o.passed << "," << o.failed << "," << o.skipped << "," << o.error << "\n";
    std::cout << "TOTAL," << total.passed << "," << total.failed << "," << total.skipped << "," << total.error << "\n";
    for (const auto& [op, o] : perOp)
        for (const auto& b : o.bad) std::cout << "  " << op << ": " << b << "\n";

    // Ops whose every node test must pass in the reference interpreter (skips allowed only for data
    // the runner cannot feed: strings, sequences, known-bad ONNX 1.12 data).
    static const std::vector<std::string> kCoreOps = {
        "Abs", "Add", "AveragePool", "BatchNormalization", "Cast", "Ceil", "Clip", "Concat", "Conv",
        "ConvTranspose", "Cos", "Div", "Elu", "Equal", "Erf", "Exp", "Expand", "Flatten", "Floor", "Gather",
        "Gemm", "GlobalAveragePool", "GlobalMaxPool", "Greater", "HardSigmoid", "HardSwish", "Identity",
        "InstanceNormalization", "LayerNormalization", "LeakyRelu", "Less", "Log", "LogSoftmax", "MatMul", "Max",
        "MaxPool", "Mean", "Min", "Mul", "Neg", "Pad", "Pow", "PRelu", "Reciprocal", "ReduceL1", "ReduceL2",
        "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum",
        "ReduceSumSquare", "Relu", "Reshape", "Selu", "Shape", "Sigmoid", "Sign", "Sin", "Slice", "Softmax",
        "Softplus", "Softsign", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tanh", "Tile", "Transpose",
        "Unsqueeze", "Where", "And", "ArgMax", "ArgMin", "ConstantOfShape", "CumSum", "DepthToSpace", "Einsum",
        "GatherElements", "GatherND", "Hardmax", "Mod", "Not", "Or", "Range", "Resize", "Round", "ScatterElements",
        "ScatterND", "Size", "SpaceToDepth", "Tan", "TopK", "Trilu", "Xor",
        // Control flow: test_if, test_loop11, test_scan_sum (Scan-8) and test_scan9_sum; the
        // sequence/optional variants are skipped as non-tensor data, not as unimplemented.
        "If", "Loop", "Scan"};
    for (const std::string& op : kCoreOps) {
        SCOPED_TRACE(op);
        const auto it = perOp.find(op);
        ASSERT_NE(it, perOp.end()) << "no node test for " << op;
        const Counts& o = it->second;
        EXPECT_GT(o.passed, 0);
        EXPECT_EQ(o.failed + o.error + o.noImplementation, 0) << (o.bad.empty() ? std::string() : o.bad.front());
    }
}
