// Trilu (ONNX Trilu-14; core/lower/common/lower_movement.cpp lowerTrilu): upper and lower triangles,
// positive and negative diagonals k (beyond the matrix too), batched and non-square inputs, an
// absent k, integer and bool tensors, against exact expected values and against the reference
// interpreter on the CPU and CUDA lowerings (the CUDA kernel IR in the interpreter).
#include <gtest/gtest.h>

#include "core/ir/op_registry.h"
#include "core/test_ir_helpers.h"
#include "lower/test_lower_basic_util.h"

namespace tessera::lower::test {
namespace {

using ir::Attribute;
using ir::test::Attrs;
using ir::test::in;
using ir::test::ints;
using ir::test::runOne;
using V = std::vector<std::int64_t>;

/// Trilu of x = 0, 1, 2 ... of `type`, output as ints.
V trilu(const std::string& type, std::optional<std::int64_t> k, bool upper) {
    std::vector<ir::test::In> ins{in(type)};
    if (k) ins.push_back(ints({*k}));
    auto r = runOne("Trilu", ins, Attrs{{"upper", Attribute::ofInt(upper ? 1 : 0)}});
    EXPECT_EQ(r.error(), "");
    auto lk = lowerNode(r.g, 0, nullptr);
    EXPECT_TRUE(lk.ok()) << (lk.ok() ? "" : lk.diagnostics().formatAll());
    if (!lk.ok()) return {};
    const auto dims = *r.g.value(r.g.node(0).inputs[0]).type.shape.knownDims();
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    std::vector<float> f;
    for (std::int64_t i = 0; i < n; ++i) f.push_back(static_cast<float>(i));
    std::vector<ir::TensorData> storage{ir::TensorData::fromFloats(f, dims)};
    storage.emplace_back();
    std::vector<ir::TensorData*> params{&storage[0], &storage[1]};
    auto st = evalKernel(lk->kernel, params);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.diagnostics().formatAll());
    return storage[1].toInts();
}

TEST(LowerTrilu, UpperAndLowerWithDiagonals) {
    // x = [[0,1,2,3],[4,5,6,7],[8,9,10,11]]
    EXPECT_EQ(trilu("f32[3,4]", std::nullopt, true), (V{0, 1, 2, 3, 0, 5, 6, 7, 0, 0, 10, 11}));
    EXPECT_EQ(trilu("f32[3,4]", std::nullopt, false), (V{0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0}));
    EXPECT_EQ(trilu("f32[3,4]", 1, true), (V{0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11}));
    EXPECT_EQ(trilu("f32[3,4]", -1, true), (V{0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11}));
    EXPECT_EQ(trilu("f32[3,4]", 2, false), (V{0, 1, 2, 0, 4, 5, 6, 7, 8, 9, 10, 11}));
    EXPECT_EQ(trilu("f32[3,4]", -1, false), (V{0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0}));
    // Diagonals beyond the matrix keep everything or nothing.
    EXPECT_EQ(trilu("f32[3,4]", 5, true), (V(12, 0)));
    EXPECT_EQ(trilu("f32[3,4]", -5, true), (V{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
    EXPECT_EQ(trilu("f32[3,4]", -3, false), (V(12, 0)));
}

TEST(LowerTrilu, BatchedPerMatrix) {
    // Two 2x3 matrices: the triangle restarts in each.
    EXPECT_EQ(trilu("f32[2,2,3]", std::nullopt, false), (V{0, 0, 0, 3, 4, 0, 6, 0, 0, 9, 10, 0}));
    EXPECT_EQ(trilu("f32[2,1,2,3]", 1, true), (V{0, 1, 2, 0, 0, 5, 0, 7, 8, 0, 0, 11}));
}

TEST(LowerTrilu, MatchesReferenceOnCpuAndCuda) {
    for (bool upper : {true, false})
        for (std::int64_t k : {-2, 0, 3}) {
            SCOPED_TRACE(std::string(upper ? "upper" : "lower") + " k " + std::to_string(k));
            const Attrs a{{"upper", Attribute::ofInt(upper ? 1 : 0)}};
            for (const char* type : {"f32[3,5,7]", "f32[9,4]", "i64[2,6,6]", "bool[4,4]", "f16[2,3,3]"}) {
                auto r = runOne("Trilu", {in(type), ints({k})}, a);
                ASSERT_EQ(r.error(), "");
                EXPECT_EQ(checkAgainstReference(r.g, makeInputs(r.g)), "") << type;
            }
        }
    auto r = runOne("Trilu", {in("f32[5,3]")});
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(checkAgainstReference(r.g, makeInputs(r.g)), "");
}

TEST(LowerTrilu, RegistryAndErrors) {
    const ir::OpSchema* s = ir::OpRegistry::instance().find("", "Trilu");
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->injective);
    EXPECT_TRUE(hasGenerator(runOne("Trilu", {in("f32[2,2]")}).g.node(0)));
    // Rank 1 is refused by shape inference.
    EXPECT_NE(runOne("Trilu", {in("f32[4]")}).error(), "");
    // A k that is not a constant cannot be folded into the kernel.
    auto r = runOne("Trilu", {in("f32[3,3]"), in("i64[]")});
    ASSERT_EQ(r.error(), "");
    auto lk = lowerNode(r.g, 0, nullptr);
    ASSERT_FALSE(lk.ok());
    EXPECT_NE(lk.diagnostics().formatAll().find("k must be a constant"), std::string::npos);
}

}  // namespace
}  // namespace tessera::lower::test
