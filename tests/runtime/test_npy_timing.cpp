// .npy reading/writing (core/ir/npy.h), timing statistics, rotation counts and the 128-bit hash.

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/ir/npy.h"
#include "core/runtime/timing.h"
#include "core/support/hash.h"

namespace tessera::runtime {
namespace {

using ir::DType;
using ir::encodeNpy;
using ir::parseNpy;
using ir::readNpy;
using ir::readNpyShape;
using ir::writeNpy;

std::string fileBytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/// A .npy file with the given header dict and data bytes (version 1.0, no padding rules).
std::string npyWith(const std::string& dict, const std::string& data, int major = 1) {
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += '\0';
    const std::size_t n = dict.size();
    if (major == 1) {
        out += static_cast<char>(n & 0xFF);
        out += static_cast<char>(n >> 8);
    } else {
        for (int k = 0; k < 4; ++k) out += static_cast<char>((n >> (8 * k)) & 0xFF);
    }
    return out + dict + data;
}

std::string firstError(const support::DiagnosticList& d) {
    const auto* e = d.firstError();
    return e ? e->message : std::string("<no error>");
}

TEST(Npy, RoundTripEveryDtype) {
    const std::vector<std::pair<DType, std::string>> cases = {
        {DType::F16, "<f2"}, {DType::F32, "<f4"}, {DType::F64, "<f8"}, {DType::I8, "|i1"},
        {DType::I16, "<i2"}, {DType::I32, "<i4"}, {DType::I64, "<i8"}, {DType::U8, "|u1"},
        {DType::U16, "<u2"}, {DType::U32, "<u4"}, {DType::U64, "<u8"}, {DType::Bool, "|b1"},
    };
    for (const auto& [dtype, descr] : cases) {
        SCOPED_TRACE(descr);
        ir::TensorData t;
        t.dtype = dtype;
        t.dims = {2, 3};
        const std::size_t size = ir::dtypeSize(dtype);
        t.bytes.resize(6 * size);
        for (std::size_t i = 0; i < t.bytes.size(); ++i)
            t.bytes[i] = dtype == DType::Bool ? static_cast<std::uint8_t>(i % 2) : static_cast<std::uint8_t>(i * 37 + 11);
        auto enc = encodeNpy(t);
        ASSERT_TRUE(enc.ok()) << firstError(enc.diagnostics());
        EXPECT_NE(enc->find("'descr': '" + descr + "'"), std::string::npos);
        EXPECT_NE(enc->find("'shape': (2, 3)"), std::string::npos);
        EXPECT_EQ((enc->size() - t.bytes.size()) % 64, 0u) << "data must start at a multiple of 64";
        auto back = parseNpy(*enc, "mem.npy");
        ASSERT_TRUE(back.ok()) << firstError(back.diagnostics());
        EXPECT_EQ(back->dtype, dtype);
        EXPECT_EQ(back->dims, (std::vector<std::int64_t>{2, 3}));
        EXPECT_EQ(back->bytes, t.bytes);
    }
}

TEST(Npy, ScalarOneDimAndFileRoundTrip) {
    const auto dir = std::filesystem::temp_directory_path() / ("tessera_npy_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const ir::TensorData vec = ir::TensorData::fromFloats({1.5f, -2.0f, 3.25f}, {3});
    const std::string path = (dir / "v.npy").string();
    auto written = writeNpy(path, vec);
    ASSERT_TRUE(written.ok()) << firstError(written.diagnostics());
    EXPECT_EQ(*written, static_cast<std::int64_t>(std::filesystem::file_size(path)));
    EXPECT_NE(fileBytes(path).find("'shape': (3,)"), std::string::npos);
    auto back = readNpy(path);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->toDoubles(), (std::vector<double>{1.5, -2.0, 3.25}));

    const ir::TensorData scalar = ir::TensorData::fromInts({-7}, {});
    auto enc = encodeNpy(scalar);
    ASSERT_TRUE(enc.ok());
    EXPECT_NE(enc->find("'shape': ()"), std::string::npos);
    auto s = parseNpy(*enc, "s.npy");
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(s->dims.empty());
    EXPECT_EQ(s->toInts(), (std::vector<std::int64_t>{-7}));
    std::filesystem::remove_all(dir);
}

TEST(Npy, ReadsMobilenetSampleAndWritesItBackIdentically) {
    const std::string path = std::string(TESSERA_SAMPLES) + "/mobilenet_v2_input.npy";
    auto t = readNpy(path);
    ASSERT_TRUE(t.ok()) << firstError(t.diagnostics());
    EXPECT_EQ(t->dtype, DType::F32);
    EXPECT_EQ(t->dims, (std::vector<std::int64_t>{1, 3, 224, 224}));
    EXPECT_EQ(t->bytes.size(), 1u * 3 * 224 * 224 * 4);
    // NumPy writes the same header layout (64-byte aligned, same dict text): the bytes match.
    auto enc = encodeNpy(*t);
    ASSERT_TRUE(enc.ok());
    EXPECT_TRUE(*enc == fileBytes(path));
}

TEST(Npy, ShapeOnlyReadsTheHeader) {
    const auto dir = std::filesystem::temp_directory_path() / ("tessera_npy_shape_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    // The sample input: dims and dtype, no elements, the same type readNpy gives.
    const std::string sample = std::string(TESSERA_SAMPLES) + "/mobilenet_v2_input.npy";
    auto t = readNpyShape(sample);
    ASSERT_TRUE(t.ok()) << firstError(t.diagnostics());
    EXPECT_EQ(t->dtype, DType::F32);
    EXPECT_EQ(t->dims, (std::vector<std::int64_t>{1, 3, 224, 224}));
    EXPECT_TRUE(t->bytes.empty());
    EXPECT_TRUE(t->isShapeOnly());
    EXPECT_FALSE(t->sizeConsistent());
    EXPECT_FALSE(readNpy(sample)->isShapeOnly());
    // Version 2 headers; a truncated or overlong file is refused as readNpy refuses it.
    struct Case {
        std::string bytes, error;
    };
    const std::vector<Case> cases = {
        {npyWith("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 5), }\n", std::string(80, '\0'), 2), ""},
        {npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", std::string(4, '\0')),
         "truncated data: f32[2,2] needs 16 bytes but the file has 4"},
        {npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", std::string(6, '\0')),
         "2 unexpected bytes after the f32[1] data"},
        {"PK\x03\x04 not npy at all", "not a .npy file (bad magic: expected \\x93NUMPY)"},
    };
    for (const auto& c : cases) {
        const std::string path = (dir / "c.npy").string();
        std::ofstream(path, std::ios::binary) << c.bytes;
        auto r = readNpyShape(path);
        if (c.error.empty()) {
            ASSERT_TRUE(r.ok()) << firstError(r.diagnostics());
            EXPECT_EQ(r->dtype, DType::I64);
            EXPECT_EQ(r->dims, (std::vector<std::int64_t>{2, 5}));
            EXPECT_TRUE(r->isShapeOnly());
        } else {
            ASSERT_FALSE(r.ok());
            EXPECT_EQ(firstError(r.diagnostics()), c.error);
        }
    }
    EXPECT_FALSE(readNpyShape((dir / "missing.npy").string()).ok());
    std::filesystem::remove_all(dir);
}

TEST(Npy, Versions2And3) {
    const std::string data(8, '\x01');
    for (int major : {2, 3}) {
        auto t = parseNpy(npyWith("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n", data, major), "v.npy");
        ASSERT_TRUE(t.ok()) << firstError(t.diagnostics());
        EXPECT_EQ(t->toInts(), (std::vector<std::int64_t>{0x01010101, 0x01010101}));
    }
}

TEST(Npy, ClearErrors) {
    const std::string four(4, '\0');
    struct Case {
        std::string bytes;
        std::string message;
    };
    const std::vector<Case> cases = {
        {"PK\x03\x04 not npy at all", "not a .npy file (bad magic: expected \\x93NUMPY)"},
        {npyWith("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", four),
         "fortran_order True is not supported; save it with np.ascontiguousarray(arr)"},
        {npyWith("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", four),
         "big-endian data ('>f4') is not supported; save it with arr.astype('<f4')"},
        {npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", four),
         "truncated data: f32[2,2] needs 16 bytes but the file has 4"},
        {npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", four + "xx"),
         "2 unexpected bytes after the f32[] data"},
        {npyWith("{'descr': '<U5', 'fortran_order': False, 'shape': (1,), }", four),
         "unsupported .npy dtype '<U5' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1 c8 c16)"},
        {npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", four, 4),
         ".npy format version 4.0 is not supported (1.0, 2.0 and 3.0 are)"},
        {npyWith("{'descr': '<f4', 'fortran_order': False }", four), "the .npy header has no 'shape'"},
    };
    for (const auto& c : cases) {
        auto r = parseNpy(c.bytes, "bad.npy");
        ASSERT_FALSE(r.ok()) << c.message;
        const auto* e = r.diagnostics().firstError();
        ASSERT_NE(e, nullptr);
        EXPECT_EQ(e->message, c.message);
        EXPECT_EQ(e->file, "bad.npy");
    }
    auto header = parseNpy(npyWith("{'descr': '<f4', 'shape': (1, x), }", four), "h.npy");
    ASSERT_FALSE(header.ok());
    EXPECT_EQ(firstError(header.diagnostics()).rfind("cannot read the .npy header: 'shape' holds a non-integer", 0), 0u);

    auto missing = readNpy("/nonexistent-dir/none.npy");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.diagnostics().firstError()->file, "/nonexistent-dir/none.npy");
    EXPECT_EQ(firstError(missing.diagnostics()).rfind("cannot open", 0), 0u);

    ir::TensorData bf;
    bf.dtype = DType::BF16;
    bf.dims = {1};
    bf.bytes = {0, 0};
    auto enc = encodeNpy(bf, "out.npy");
    ASSERT_FALSE(enc.ok());
    EXPECT_EQ(firstError(enc.diagnostics()), "dtype bf16 has no .npy equivalent");
}

TEST(Timing, StatsOfKnownSamples) {
    const TimingStats s = computeTimingStats({5, 1, 4, 2, 3});
    EXPECT_EQ(s.reps, 5);
    EXPECT_DOUBLE_EQ(s.median, 3);
    EXPECT_DOUBLE_EQ(s.min, 1);
    EXPECT_DOUBLE_EQ(s.max, 5);
    EXPECT_DOUBLE_EQ(s.q1, 2);
    EXPECT_DOUBLE_EQ(s.q3, 4);
    EXPECT_DOUBLE_EQ(s.mean, 3);
    // Even count: NumPy's linear interpolation gives 2.5, 1.75 and 3.25.
    const TimingStats e = computeTimingStats({4, 1, 3, 2});
    EXPECT_DOUBLE_EQ(e.median, 2.5);
    EXPECT_DOUBLE_EQ(e.q1, 1.75);
    EXPECT_DOUBLE_EQ(e.q3, 3.25);
    const TimingStats one = computeTimingStats({0.5});
    EXPECT_DOUBLE_EQ(one.q1, 0.5);
    EXPECT_DOUBLE_EQ(one.q3, 0.5);
    const TimingStats none = computeTimingStats({});
    EXPECT_EQ(none.reps, 0);
    EXPECT_EQ(none.median, 0);
}

TEST(Timing, RepeatPolicy) {
    std::vector<std::int64_t> seen;
    auto samples = measureRepeated({2, 3, 100, 0.0}, [&](std::int64_t rep) { seen.push_back(rep); });
    EXPECT_EQ(samples.size(), 3u);
    EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
    seen.clear();
    samples = measureRepeated({0, 1, 7, 1e9}, [&](std::int64_t rep) { seen.push_back(rep); });
    EXPECT_EQ(samples.size(), 7u) << "maxReps bounds a measurement that never reaches minSeconds";
    EXPECT_EQ(seen.size(), 7u);
    for (double s : samples) EXPECT_GE(s, 0.0);
}

TEST(Timing, RotationCopies) {
    const std::int64_t mib = 1 << 20;
    EXPECT_EQ(rotationCopies(16 * mib, 64 * mib), 5);    // 5 x 16 MiB > 64 MiB
    EXPECT_EQ(rotationCopies(10 * mib, 64 * mib), 7);    // 70 > 64
    EXPECT_EQ(rotationCopies(mib, 64 * mib), 64);        // 65 wanted, 64 at most
    EXPECT_EQ(rotationCopies(64 * mib, 64 * mib), 1);    // already as large as the cache
    EXPECT_EQ(rotationCopies(mib, 0), 1);                // rotation off
    EXPECT_EQ(rotationCopies(0, 64 * mib), 1);           // nothing to rotate
    EXPECT_EQ(rotationCopies(mib, 64 * mib, 64, 10 * mib), 11);  // extra copies within 10 MiB
}

TEST(Hash, Fnv1a128KnownValues) {
    EXPECT_EQ(support::hashHex(""), "6c62272e07bb014262b821756295c58d");
    EXPECT_EQ(support::hashHex("a"), "d228cb696f1a8caf78912b704e4a8964");
    EXPECT_EQ(support::hashHex("foobar"), "343e1662793c64bf6f0d3597ba446f18");
    EXPECT_NE(support::Hasher().field("ab").field("c").hex(), support::Hasher().field("a").field("bc").hex());
}

}  // namespace
}  // namespace tessera::runtime
