// The GPU block reduction (lower_heavy.h: emitGpuBlockRowReduce): reductions with few outputs
// and long rows on the CUDA target use one block of 256 threads per output. The kernels are run
// with the kernel-IR interpreter (Threads loops serially, barriers between phases) against the
// reference interpreter, for every reduce kind, ragged and exact row lengths; the choice of form
// is checked on the notes.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/lower/lower.h"
#include "core/lower/detail/lower_heavy.h"
#include "core/test_ir_helpers.h"
#include "lower/test_lower_basic_util.h"

namespace tessera::lower::test {
namespace {

using ir::Attribute;
using ir::test::Attrs;
using ir::test::in;
using ir::test::runOne;

constexpr const char* kBlockNote = "GPU block reduction: one block of 256 threads per output";

/// "" when `op` on `ins` lowers for CUDA with (or without) the block form as `block` says and
/// matches the reference on both targets.
std::string check(const std::string& op, const std::vector<ir::test::In>& ins, const Attrs& attrs, bool block) {
    auto one = runOne(op, ins, attrs);
    if (!one.error().empty()) return "shape inference: " + one.error();
    LowerOptions cuda;
    cuda.target = Target::Cuda;
    auto lk = lowerNode(one.g, 0, nullptr, cuda);
    if (!lk) return "lowering: " + lk.diagnostics().firstError()->format();
    if (hasNote(lk->kernel, kBlockNote) != block)
        return std::string(block ? "block form not used" : "block form used") + ":\n" + printKernel(lk->kernel);
    return checkAgainstReference(one.g, makeInputs(one.g, 3));
}

Attribute Is(std::vector<std::int64_t> v) { return Attribute::ofInts(std::move(v)); }
Attribute I(std::int64_t v) { return Attribute::ofInt(v); }

TEST(GpuBlockReduce, GlobalPoolsOverLargeMapsAgainstReference) {
    // EfficientNet's squeeze-excite pool, cut down: 40 x 40 = 1600 values per channel (ragged:
    // 1600 = 6 x 256 + 64), and an exact multiple of 256 (32 x 32).
    EXPECT_EQ(check("GlobalAveragePool", {in("f32[2,3,40,40]")}, {}, true), "");
    EXPECT_EQ(check("GlobalAveragePool", {in("f32[1,4,32,32]")}, {}, true), "");
    EXPECT_EQ(check("GlobalMaxPool", {in("f32[2,3,40,40]")}, {}, true), "");
    // MobileNetV2's 7 x 7 pool keeps one output per thread.
    EXPECT_EQ(check("GlobalAveragePool", {in("f32[2,64,7,7]")}, {}, false), "");
}

TEST(GpuBlockReduce, ReduceKindsOverTrailingAxesAgainstReference) {
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2", "ReduceSumSquare",
                           "ReduceLogSumExp"}) {
        SCOPED_TRACE(op);
        // opset 18 form: axes as an input; trailing axes 1 and 2 of [3, 40, 30] (1200 per output).
        EXPECT_EQ(check(op, {in("f32[3,40,30]"), ir::test::ints({1, 2})}, {{"keepdims", I(0)}}, true), "");
    }
    // A single long row to a scalar, and keepdims.
    EXPECT_EQ(check("ReduceSum", {in("f32[5000]")}, {{"keepdims", I(0)}}, true), "");
    EXPECT_EQ(check("ReduceMean", {in("f32[2,2000]"), ir::test::ints({1})}, {}, true), "");
    // Not trailing (axis 0 of [2000, 3]) or short rows: the other forms.
    EXPECT_EQ(check("ReduceSum", {in("f32[2000,3]"), ir::test::ints({0})}, {}, false), "");
    EXPECT_EQ(check("ReduceSum", {in("f32[4,100]"), ir::test::ints({1})}, {}, false), "");
}

TEST(GpuBlockReduce, LayerNormOneBlockPerRowAgainstReference) {
    constexpr const char* kNote = "GPU form: one block of";
    auto lnCheck = [&](const std::vector<ir::test::In>& ins, const Attrs& attrs, int outputs, const std::string& threads) -> std::string {
        auto one = runOne("LayerNormalization", ins, attrs, outputs);
        if (!one.error().empty()) return "shape inference: " + one.error();
        LowerOptions cuda;
        cuda.target = Target::Cuda;
        auto lk = lowerNode(one.g, 0, nullptr, cuda);
        if (!lk) return "lowering: " + lk.diagnostics().firstError()->format();
        if (!hasNote(lk->kernel, std::string(kNote) + " " + threads + " threads per row"))
            return "not the block form of " + threads + " threads:\n" + printKernel(lk->kernel);
        return checkAgainstReference(one.g, makeInputs(one.g, 5));
    };
    // ConvNeXt's channels-last LayerNorm (96 channels: 32 threads, 3 values each), a ragged row,
    // BERT's 768 (128 threads) without B, a long row (256 threads), Mean and InvStdDev outputs.
    EXPECT_EQ(lnCheck({in("f32[2,3,4,96]"), in("f32[96]"), in("f32[96]")}, {{"epsilon", ir::Attribute::ofFloat(1e-6)}}, 1, "32"), "");
    EXPECT_EQ(lnCheck({in("f32[3,40]"), in("f32[40]"), in("f32[40]")}, {}, 1, "32"), "");
    EXPECT_EQ(lnCheck({in("f32[3,768]"), in("f32[768]")}, {}, 1, "128"), "");
    EXPECT_EQ(lnCheck({in("f32[2,3000]"), in("f32[3000]"), in("f32[3000]")}, {}, 1, "256"), "");
    EXPECT_EQ(lnCheck({in("f32[4,5,50]"), in("f32[5,50]"), in("f32[5,50]")}, {{"axis", I(1)}}, 3, "32"), "");
}

TEST(GpuBlockReduce, KernelShape) {
    auto one = runOne("GlobalAveragePool", {in("f32[32,32,112,112]")});
    ASSERT_EQ(one.error(), "");
    LowerOptions cuda;
    cuda.target = Target::Cuda;
    auto lk = lowerNode(one.g, 0, nullptr, cuda);
    ASSERT_TRUE(lk.ok());
    const std::string text = printKernel(lk->kernel);
    EXPECT_EQ(lk->kernel.buffers[0].shape, (std::vector<std::int64_t>{1024, 12544}));
    EXPECT_EQ(lk->kernel.buffers[1].shape, (std::vector<std::int64_t>{1024}));
    EXPECT_NE(text.find("alloc part: f32[256] shared"), std::string::npos) << text;
    // 8 halving steps + the gather, each followed by a barrier.
    std::size_t barriers = 0;
    for (auto p = text.find("barrier\n"); p != std::string::npos; p = text.find("barrier\n", p + 1)) ++barriers;
    EXPECT_EQ(barriers, 9u) << text;
}

}  // namespace
}  // namespace tessera::lower::test
