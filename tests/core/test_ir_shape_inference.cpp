// Shape inference per op against hand-computed shapes, and FLOP counts against hand counts.
// Every expected value below was worked out by hand from the ONNX operator specs; the arithmetic
// is in the comment next to it.

#include <gtest/gtest.h>

#include <limits>

#include "tests/core/test_ir_helpers.h"

using namespace tessera::ir;
using namespace tessera::ir::test;

namespace {

Attribute I(std::int64_t v) { return Attribute::ofInt(v); }
Attribute Is(std::vector<std::int64_t> v) { return Attribute::ofInts(std::move(v)); }
Attribute S(std::string v) { return Attribute::ofString(std::move(v)); }
Attribute F(double v) { return Attribute::ofFloat(v); }

constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();

}  // namespace

// ------------------------------------------------------------------------------------ Conv

TEST(IrShapeConv, DepthwiseStride2) {
    // (112 + 1 + 1 - 3) / 2 + 1 = 56
    auto r = runOne("Conv", {in("f32[1,32,112,112]"), in("f32[32,1,3,3]")},
                    {{"group", I(32)}, {"pads", Is({1, 1, 1, 1})}, {"strides", Is({2, 2})}, {"kernel_shape", Is({3, 3})}});
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(), "f32[1,32,56,56]");
    // 2 * N * K * OH * OW * (C/group) * KH * KW = 2 * 1 * 32 * 56 * 56 * 1 * 3 * 3
    ASSERT_TRUE(r.flops);
    EXPECT_EQ(*r.flops, 2LL * 1 * 32 * 56 * 56 * 1 * 3 * 3);
    EXPECT_EQ(*r.flops, 1806336);
}

TEST(IrShapeConv, Stem7x7WithBias) {
    // (224 + 3 + 3 - 7) / 2 + 1 = 112
    auto r = runOne("Conv", {in("f32[1,3,224,224]"), in("f32[64,3,7,7]"), in("f32[64]")},
                    {{"pads", Is({3, 3, 3, 3})}, {"strides", Is({2, 2})}});
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(), "f32[1,64,112,112]");
    EXPECT_EQ(*r.flops, 2LL * 64 * 112 * 112 * 3 * 7 * 7);  // 236027904
}

TEST(IrShapeConv, AutoPadSameUpperStride2On7Gives4) {
    // ceil(7 / 2) = 4
    auto r = runOne("Conv", {in("f32[1,4,7,7]"), in("f32[8,4,3,3]")}, {{"auto_pad", S("SAME_UPPER")}, {"strides", Is({2, 2})}});
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(), "f32[1,8,4,4]");
    auto lower = runOne("Conv", {in("f32[1,4,7,7]"), in("f32[8,4,3,3]")}, {{"auto_pad", S("SAME_LOWER")}, {"strides", Is({2, 2})}});
    EXPECT_EQ(lower.out(), "f32[1,8,4,4]");
}

TEST(IrShapeConv, AutoPadValid) {
    // floor((7 - 3) / 2) + 1 = 3
    auto r = runOne("Conv", {in("f32[1,1,7,7]"), in("f32[1,1,3,3]")}, {{"auto_pad", S("VALID")}, {"strides", Is({2, 2})}});
    EXPECT_EQ(r.out(), "f32[1,1,3,3]");
}

TEST(IrShapeConv, OneDimensionalWithDilation) {
    // effective kernel 2*(3-1)+1 = 5; (10 - 5) / 1 + 1 = 6
    auto r = runOne("Conv", {in("f32[2,4,10]"), in("f32[6,4,3]")}, {{"dilations", Is({2})}});
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(), "f32[2,6,6]");
    EXPECT_EQ(*r.flops, 2LL * 2 * 6 * 6 * 4 * 3);
}

TEST(IrShapeConv, ThreeDimensional) {
    // (8 + 1 + 1 - 3) / 2 + 1 = 4 on each axis
    auto r = runOne("Conv", {in("f32[1,2,8,8,8]"), in("f32[4,2,3,3,3]")},
                    {{"pads", Is({1, 1, 1, 1, 1, 1})}, {"strides", Is({2, 2, 2})}});
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(), "f32[1,4,4,4,4]");
}

TEST(IrShapeConv, AsymmetricPads) {
    // H: (5 + 0 + 2 - 3)/1 + 1 = 5; W: (5 + 1 + 0 - 3)/1 + 1 = 4
    auto r = runOne("Conv", {in("f32[1,1,5,5]"), in("f32[2,1,3,3]")}, {{"pads", Is({0, 1, 2, 0})}});
    EXPECT_EQ(r.out(), "f32[1,2,5,4]");
}

TEST(IrShapeConv, SymbolicBatchAndSpatial) {
    auto r = runOne("Conv", {in("f32[N,3,32,32]"), in("f32[16,3,3,3]")});
    EXPECT_EQ(r.out(), "f32[N,16,30,30]");
    EXPECT_FALSE(r.flops.has_value());  // dynamic batch: FLOPs unknown
    auto s = runOne("Conv", {in("f32[1,3,H,W]"), in("f32[16,3,3,3]")});
    EXPECT_EQ(s.out(), "f32[1,16,?,?]");
}

TEST(IrShapeConv, MalformedNodesAreErrors) {
    auto chans = runOne("Conv", {in("f32[1,3,8,8]"), in("f32[4,2,3,3]")});
    EXPECT_EQ(chans.error(), "input channels 3 != weight channels 2 * group 1");
    auto zeroStride = runOne("Conv", {in("f32[1,1,8,8]"), in("f32[1,1,3,3]")}, {{"strides", Is({0, 1})}});
    EXPECT_NE(zeroStride.error().find("'strides'"), std::string::npos) << zeroStride.error();
    auto negPad = runOne("Conv", {in("f32[1,1,8,8]"), in("f32[1,1,3,3]")}, {{"pads", Is({-1, 0, 0, 0})}});
    EXPECT_NE(negPad.error().find("'pads'"), std::string::npos) << negPad.error();
    auto bigKernel = runOne("Conv", {in("f32[1,1,2,2]"), in("f32[1,1,5,5]")});
    EXPECT_NE(bigKernel.error().find("larger than the padded input extent 2"), std::string::npos) << bigKernel.error();
    auto rank2 = runOne("Conv", {in("f32[1,3]"), in("f32[4,3,3,3]")});
    EXPECT_NE(rank2.error().find("rank >= 3"), std::string::npos);
    auto huge = runOne("Conv", {in("f32[1,1,8,8]"), in("f32[1,1,3,3]")}, {{"dilations", Is({1LL << 39, 1})}});
    EXPECT_NE(huge.error(), "");
    auto hugeStride = runOne("Conv", {in("f32[1,1,8,8]"), in("f32[1,1,3,3]")}, {{"strides", Is({kI64Max, 1})}});
    EXPECT_NE(hugeStride.error().find("absurdly large"), std::string::npos);
    auto group0 = runOne("Conv", {in("f32[1,4,8,8]"), in("f32[4,4,3,3]")}, {{"group", I(0)}});
    EXPECT_NE(group0.error().find("'group'"), std::string::npos);
    auto missingW = runOne("Conv", {in("f32[1,4,8,8]")});
    EXPECT_EQ(missingW.error(), "inputs X and W are required");
    auto badPadCount = runOne("Conv", {in("f32[1,1,8,8]"), in("f32[1,1,3,3]")}, {{"pads", Is({1, 1})}});
    EXPECT_NE(badPadCount.error().find("expected 4"), std::string::npos);
    auto badAutoPad = runOne("Conv", {in("f32[1,1,8,8]"), in("f32[1,1,3,3]")}, {{"auto_pad", S("SAME")}});
    EXPECT_NE(badAutoPad.error().find("auto_pad"), std::string::npos);
    auto bias = runOne("Conv", {in("f32[1,1,8,8]"), in("f32[2,1,3,3]"), in("f32[3]")});
    EXPECT_NE(bias.error().find("bias"), std::string::npos);
}

TEST(IrShapeConv, ConvTranspose) {
    // 2 * (14 - 1) + 1 (output_padding) + (3 - 1) * 1 + 1 - (1 + 1) = 28
    auto r = runOne("ConvTranspose", {in("f32[1,16,14,14]"), in("f32[16,8,3,3]")},
                    {{"strides", Is({2, 2})}, {"pads", Is({1, 1, 1, 1})}, {"output_padding", Is({1, 1})}});
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(), "f32[1,8,28,28]");
    // 2 * N * C * H * W * (M/group) * KH * KW
    EXPECT_EQ(*r.flops, 2LL * 16 * 14 * 14 * 8 * 3 * 3);
    auto shaped = runOne("ConvTranspose", {in("f32[1,16,14,14]"), in("f32[16,4,3,3]")},
                         {{"group", I(2)}, {"strides", Is({2, 2})}, {"output_shape", Is({30, 30})}});
    EXPECT_EQ(shaped.out(), "f32[1,8,30,30]");
    auto same = runOne("ConvTranspose", {in("f32[1,16,7,7]"), in("f32[16,3,4,4]")}, {{"strides", Is({2, 2})}, {"auto_pad", S("SAME_UPPER")}});
    EXPECT_EQ(same.out(), "f32[1,3,14,14]");
    auto bad = runOne("ConvTranspose", {in("f32[1,16,7,7]"), in("f32[8,3,4,4]")});
    EXPECT_NE(bad.error().find("input channels 16"), std::string::npos);
}

// ---------------------------------------------------------------------------- Gemm / MatMul

TEST(IrShapeGemm, TransposesAndBias) {
    auto r = runOne("Gemm", {in("f32[4,8]"), in("f32[8,16]"), in("f32[16]")});
    EXPECT_EQ(r.out(), "f32[4,16]");
    EXPECT_EQ(*r.flops, 2LL * 4 * 16 * 8 + 4 * 16);  // 1088
    auto ta = runOne("Gemm", {in("f32[8,4]"), in("f32[8,16]")}, {{"transA", I(1)}});
    EXPECT_EQ(ta.out(), "f32[4,16]");
    EXPECT_EQ(*ta.flops, 2LL * 4 * 16 * 8);
    auto tb = runOne("Gemm", {in("f32[1,1280]"), in("f32[1000,1280]"), in("f32[1000]")}, {{"transB", I(1)}, {"alpha", F(1.0)}});
    EXPECT_EQ(tb.out(), "f32[1,1000]");
    EXPECT_EQ(*tb.flops, 2LL * 1000 * 1280 + 1000);
    auto sym = runOne("Gemm", {in("f32[N,8]"), in("f32[8,16]"), in("f32[1,16]")});
    EXPECT_EQ(sym.out(), "f32[N,16]");
    auto badC = runOne("Gemm", {in("f32[4,8]"), in("f32[8,16]"), in("f32[3,16]")});
    EXPECT_NE(badC.error().find("cannot broadcast"), std::string::npos);
    auto badK = runOne("Gemm", {in("f32[4,8]"), in("f32[9,16]")});
    EXPECT_NE(badK.error().find("inner dimensions differ"), std::string::npos);
    auto rank3 = runOne("Gemm", {in("f32[2,4,8]"), in("f32[8,16]")});
    EXPECT_NE(rank3.error().find("rank 2"), std::string::npos);
}

TEST(IrShapeMatMul, BroadcastAndVectors) {
    // batch [2,1] vs [5] -> [2,5]; then M=3, N=6
    auto r = runOne("MatMul", {in("f32[2,1,3,4]"), in("f32[5,4,6]")});
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(), "f32[2,5,3,6]");
    EXPECT_EQ(*r.flops, 2LL * 2 * 5 * 3 * 6 * 4);  // 1440
    EXPECT_EQ(runOne("MatMul", {in("f32[4]"), in("f32[4,6]")}).out(), "f32[6]");
    EXPECT_EQ(runOne("MatMul", {in("f32[3,4]"), in("f32[4]")}).out(), "f32[3]");
    EXPECT_EQ(runOne("MatMul", {in("f32[4]"), in("f32[4]")}).out(), "f32[]");
    EXPECT_EQ(runOne("MatMul", {in("f32[7,4]"), in("f32[2,4,5]")}).out(), "f32[2,7,5]");
    EXPECT_EQ(runOne("MatMul", {in("f32[B,S,64]"), in("f32[64,128]")}).out(), "f32[B,S,128]");
    auto bad = runOne("MatMul", {in("f32[3,4]"), in("f32[5,6]")});
    EXPECT_EQ(bad.error(), "inner dimensions differ: [3,4] x [5,6] (4 vs 5)");
    auto badBatch = runOne("MatMul", {in("f32[2,3,4]"), in("f32[3,4,5]")});
    EXPECT_NE(badBatch.error().find("[2,3,4]"), std::string::npos);
    auto scalar = runOne("MatMul", {in("f32[]"), in("f32[3]")});
    EXPECT_NE(scalar.error().find("rank >= 1"), std::string::npos);
}

// ------------------------------------------------------------------------------ elementwise

TEST(IrShapeElementwise, Broadcasting) {
    auto r = runOne("Add", {in("f32[2,3,4]"), in("f32[4]")});
    EXPECT_EQ(r.out(), "f32[2,3,4]");
    EXPECT_EQ(*r.flops, 24);
    EXPECT_EQ(runOne("Mul", {in("f32[N,1,4]"), in("f32[3,1]")}).out(), "f32[N,3,4]");
    EXPECT_EQ(runOne("Sub", {in("f32[N,3]"), in("f32[N,3]")}).out(), "f32[N,3]");
    EXPECT_EQ(runOne("Div", {in("f32[N,3]"), in("f32[M,3]")}).out(), "f32[?,3]");
    EXPECT_EQ(runOne("Div", {in("f32[N,3]"), in("f32[5,1]")}).out(), "f32[5,3]");
    EXPECT_EQ(runOne("Add", {in("f32[1,N]"), in("f32[1,1]")}).out(), "f32[1,N]");
    EXPECT_EQ(runOne("Add", {in("f32[*]"), in("f32[3]")}).out(), "f32[*]");
    EXPECT_EQ(runOne("Pow", {in("f32[3]"), in("i64[]")}).out(), "f32[3]");
    EXPECT_EQ(runOne("Equal", {in("i64[2,3]"), in("i64[3]")}).out(), "bool[2,3]");
    EXPECT_EQ(runOne("Where", {in("bool[2,1]"), in("f16[3]"), in("f16[]")}).out(), "f16[2,3]");
    EXPECT_EQ(runOne("Max", {in("f32[2,1]"), in("f32[1,3]"), in("f32[3]")}).out(), "f32[2,3]");
    auto bad = runOne("Add", {in("f32[2,3]"), in("f32[4,3]")});
    EXPECT_NE(bad.error().find("[2,3]"), std::string::npos) << bad.error();
    EXPECT_NE(bad.error().find("[4,3]"), std::string::npos) << bad.error();
    auto badPow = runOne("Pow", {in("f32[5]"), in("f32[2]")});
    EXPECT_EQ(badPow.error(), "cannot broadcast [5] and [2] (dim 5 vs 2)");
}

TEST(IrShapeElementwise, UnaryAndFlops) {
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Sqrt"}) {
        auto r = runOne(op, {in("f32[2,N,5]")});
        EXPECT_EQ(r.out(), "f32[2,N,5]") << op;
    }
    EXPECT_EQ(*runOne("Relu", {in("f32[2,3,5]")}).flops, 30);
    EXPECT_EQ(*runOne("Gelu", {in("f32[2,3,5]")}).flops, 150);       // 5 per element
    EXPECT_EQ(*runOne("HardSwish", {in("f32[2,3,5]")}).flops, 120);  // 4 per element
    EXPECT_EQ(*runOne("Identity", {in("f32[2,3,5]")}).flops, 0);
    auto clip = runOne("Clip", {in("f32[2,3]"), in("f32[]"), in("f32[]")});
    EXPECT_EQ(clip.out(), "f32[2,3]");
    EXPECT_EQ(*clip.flops, 12);
    EXPECT_EQ(runOne("Clip", {in("f32[2,3]"), absent(), in("f32[]")}).out(), "f32[2,3]");
    EXPECT_EQ(runOne("Clip", {in("f32[2,3]")}, {{"min", F(0.0)}, {"max", F(6.0)}}).out(), "f32[2,3]");
    auto badClip = runOne("Clip", {in("f32[2,3]"), in("f32[3]")});
    EXPECT_NE(badClip.error().find("min must be a scalar"), std::string::npos);
    auto drop = runOne("Dropout", {in("f32[4,5]")}, {}, 2);
    EXPECT_EQ(drop.out(0), "f32[4,5]");
    EXPECT_EQ(drop.out(1), "bool[4,5]");
}

TEST(IrShapeElementwise, CastCodes) {
    const std::vector<std::pair<int, std::string>> codes = {
        {1, "f32"}, {2, "u8"}, {3, "i8"}, {4, "u16"}, {5, "i16"}, {6, "i32"}, {7, "i64"},
        {8, "string"}, {9, "bool"}, {10, "f16"}, {11, "f64"}, {12, "u32"}, {13, "u64"}, {16, "bf16"}};
    for (const auto& [code, name] : codes)
        EXPECT_EQ(runOne("Cast", {in("f32[2,3]")}, {{"to", I(code)}}).out(), name + "[2,3]") << code;
    auto bad = runOne("Cast", {in("f32[2]")}, {{"to", I(99)}});
    EXPECT_EQ(bad.error(), "unsupported Cast target type code 99");
}

// --------------------------------------------------------------------------- normalisation

TEST(IrShapeNorm, BatchNormalization) {
    auto r = runOne("BatchNormalization", {in("f32[1,16,8,8]"), in("f32[16]"), in("f32[16]"), in("f32[16]"), in("f32[16]")});
    EXPECT_EQ(r.out(), "f32[1,16,8,8]");
    EXPECT_EQ(*r.flops, 4LL * 1024 + 2 * 16);
    auto bad = runOne("BatchNormalization", {in("f32[1,16,8,8]"), in("f32[8]"), in("f32[16]"), in("f32[16]"), in("f32[16]")});
    EXPECT_NE(bad.error().find("scale [8] does not match 16 channels"), std::string::npos) << bad.error();
    auto missing = runOne("BatchNormalization", {in("f32[1,16,8,8]"), in("f32[16]")});
    EXPECT_NE(missing.error(), "");
}

TEST(IrShapeNorm, LayerNormalizationOutputs) {
    auto r = runOne("LayerNormalization", {in("f32[2,5,8]"), in("f32[8]"), in("f32[8]")}, {}, 3);
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(0), "f32[2,5,8]");
    EXPECT_EQ(r.out(1), "f32[2,5,1]");
    EXPECT_EQ(r.out(2), "f32[2,5,1]");
    EXPECT_EQ(*r.flops, 7LL * 80);
    auto ax1 = runOne("LayerNormalization", {in("f16[2,5,8]"), in("f16[5,8]")}, {{"axis", I(1)}}, 2);
    EXPECT_EQ(ax1.out(0), "f16[2,5,8]");
    EXPECT_EQ(ax1.out(1), "f32[2,1,1]");  // stash_type defaults to float
    auto bad = runOne("LayerNormalization", {in("f32[2,5,8]"), in("f32[8]")}, {{"axis", I(3)}});
    EXPECT_NE(bad.error().find("out of range"), std::string::npos);
}

TEST(IrShapeNorm, Softmax) {
    auto r = runOne("Softmax", {in("f32[2,10]")}, {{"axis", I(1)}});
    EXPECT_EQ(r.out(), "f32[2,10]");
    EXPECT_EQ(*r.flops, 100);
    EXPECT_NE(runOne("Softmax", {in("f32[2,10]")}, {{"axis", I(2)}}).error(), "");
}

// --------------------------------------------------------------------------------- pooling

TEST(IrShapePool, MaxPoolAndCeilMode) {
    // (112 + 2 - 3) / 2 + 1 = 56
    auto r = runOne("MaxPool", {in("f32[1,64,112,112]")},
                    {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}, {"pads", Is({1, 1, 1, 1})}});
    ASSERT_EQ(r.error(), "");
    EXPECT_EQ(r.out(), "f32[1,64,56,56]");
    EXPECT_EQ(*r.flops, 64LL * 56 * 56 * 9);
    // floor((6-3)/2)+1 = 2, ceil((6-3)/2)+1 = 3
    EXPECT_EQ(runOne("MaxPool", {in("f32[1,1,6,6]")}, {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}}).out(), "f32[1,1,2,2]");
    EXPECT_EQ(runOne("MaxPool", {in("f32[1,1,6,6]")}, {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}, {"ceil_mode", I(1)}}).out(),
              "f32[1,1,3,3]");
    // ceil((5+2-2)/2)+1 = 4, but the 4th window would start at 6 >= 5 + 1 (in the right pad): 3
    EXPECT_EQ(runOne("AveragePool", {in("f32[1,1,5]")},
                     {{"kernel_shape", Is({2})}, {"strides", Is({2})}, {"pads", Is({1, 1})}, {"ceil_mode", I(1)}})
                  .out(),
              "f32[1,1,3]");
    EXPECT_EQ(runOne("AveragePool", {in("f32[1,8,7,7]")}, {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}, {"auto_pad", S("SAME_UPPER")}})
                  .out(),
              "f32[1,8,4,4]");
    auto idx = runOne("MaxPool", {in("f32[1,2,4,4]")}, {{"kernel_shape", Is({2, 2})}, {"strides", Is({2, 2})}}, 2);
    EXPECT_EQ(idx.out(1), "i64[1,2,2,2]");
    EXPECT_EQ(runOne("MaxPool", {in("f32[1,2,4,4]")}).error(), "attribute 'kernel_shape' (ints) is required");
    EXPECT_NE(runOne("MaxPool", {in("f32[1,2,2,2]")}, {{"kernel_shape", Is({3, 3})}}).error().find("larger"), std::string::npos);
    EXPECT_NE(runOne("MaxPool", {in("f32[1,2,8]")}, {{"kernel_shape", Is({3, 3})}}).error().find("rank 4"), std::string::npos);
}

TEST(IrShapePool, GlobalAveragePool) {
    auto r = runOne("GlobalAveragePool", {in("f32[1,1280,7,7]")});
    EXPECT_EQ(r.out(), "f32[1,1280,1,1]");
    EXPECT_EQ(*r.flops, 1280LL * 49);
    EXPECT_EQ(runOne("GlobalAveragePool", {in("f32[N,C,H,W]")}).out(), "f32[N,C,1,1]");
}

// ------------------------------------------------------------------------------ reductions

TEST(IrShapeReduce, AxesAttributeAndInput) {
    auto r = runOne("ReduceMean", {in("f32[1,64,7,7]")}, {{"axes", Is({2, 3})}});
    EXPECT_EQ(r.out(), "f32[1,64,1,1]");
    EXPECT_EQ(*r.flops, 64LL * 49);
    EXPECT_EQ(runOne("ReduceMean", {in("f32[1,64,7,7]")}, {{"axes", Is({-1, -2})}, {"keepdims", I(0)}}).out(), "f32[1,64]");
    EXPECT_EQ(runOne("ReduceSum", {in("f32[2,3,4]"), ints({1})}).out(), "f32[2,1,4]");
    EXPECT_EQ(runOne("ReduceMax", {in("f32[2,3,4]"), ints({0, 2})}, {{"keepdims", I(0)}}).out(), "f32[3]");
    EXPECT_EQ(runOne("ReduceSum", {in("f32[2,3,4]")}).out(), "f32[1,1,1]");
    EXPECT_EQ(runOne("ReduceSum", {in("f32[2,3,4]")}, {{"keepdims", I(0)}}).out(), "f32[]");
    auto noop = runOne("ReduceSum", {in("f32[2,3,4]"), ints({})}, {{"noop_with_empty_axes", I(1)}});
    EXPECT_EQ(noop.out(), "f32[2,3,4]");
    EXPECT_EQ(*noop.flops, 0);
    // Axes from a non-constant input: the rank stays, extents other than 1 become unknown.
    EXPECT_EQ(runOne("ReduceMax", {in("f32[2,1,4]"), in("i64[1]")}).out(), "f32[?,1,?]");
    EXPECT_EQ(runOne("ReduceMax", {in("f32[2,1,4]"), in("i64[1]")}, {{"keepdims", I(0)}}).out(), "f32[*]");
    EXPECT_NE(runOne("ReduceMean", {in("f32[2,3]")}, {{"axes", Is({2})}}).error().find("out of range"), std::string::npos);
    EXPECT_NE(runOne("ReduceMean", {in("f32[2,3]")}, {{"axes", Is({1, -1})}}).error().find("repeated"), std::string::npos);
}

// --------------------------------------------------------------------------- data movement

TEST(IrShapeData, Flatten) {
    EXPECT_EQ(runOne("Flatten", {in("f32[2,3,4,5]")}).out(), "f32[2,60]");
    EXPECT_EQ(runOne("Flatten", {in("f32[2,3,4,5]")}, {{"axis", I(0)}}).out(), "f32[1,120]");
    EXPECT_EQ(runOne("Flatten", {in("f32[2,3,4,5]")}, {{"axis", I(-1)}}).out(), "f32[24,5]");
    EXPECT_EQ(runOne("Flatten", {in("f32[2,3,4,5]")}, {{"axis", I(4)}}).out(), "f32[120,1]");
    EXPECT_EQ(runOne("Flatten", {in("f32[N,3,4]")}).out(), "f32[N,12]");
    EXPECT_EQ(runOne("Flatten", {in("f32[N,1280,1,1]")}).out(), "f32[N,1280]");
    EXPECT_NE(runOne("Flatten", {in("f32[2,3]")}, {{"axis", I(5)}}).error(), "");
}

TEST(IrShapeData, ReshapeZeroAndMinusOne) {
    EXPECT_EQ(runOne("Reshape", {in("f32[2,3,4]"), ints({0, -1})}).out(), "f32[2,12]");
    EXPECT_EQ(runOne("Reshape", {in("f32[2,3,4]"), ints({-1})}).out(), "f32[24]");
    EXPECT_EQ(runOne("Reshape", {in("f32[2,3,4]"), ints({4, 0, -1})}).out(), "f32[4,3,2]");
    EXPECT_EQ(runOne("Reshape", {in("f32[N,3,4]"), ints({0, -1})}).out(), "f32[N,12]");
    EXPECT_EQ(runOne("Reshape", {in("f32[N,12]"), ints({0, 3, 4})}).out(), "f32[N,3,4]");
    EXPECT_EQ(runOne("Reshape", {in("f32[N,12]"), ints({-1, 12})}).out(), "f32[N,12]");
    EXPECT_EQ(runOne("Reshape", {in("f32[N,3,4]"), ints({-1, 4})}).out(), "f32[?,4]");
    EXPECT_EQ(runOne("Reshape", {in("f32[0,3]"), ints({0, 3})}, {{"allowzero", I(1)}}).out(), "f32[0,3]");
    EXPECT_EQ(runOne("Reshape", {in("f32[2,3]"), in("i64[3]")}).out(), "f32[?,?,?]");  // shape not constant
    EXPECT_EQ(runOne("Reshape", {in("f32[2,3,4]"), ints({-1, -1})}).error(), "shape [-1,-1] has more than one -1");
    EXPECT_NE(runOne("Reshape", {in("f32[2,3,4]"), ints({5, 5})}).error().find("cannot reshape [2,3,4] (24 elements)"),
              std::string::npos);
    EXPECT_NE(runOne("Reshape", {in("f32[2,3,4]"), ints({-1, 5})}).error().find("cannot reshape"), std::string::npos);
    EXPECT_NE(runOne("Reshape", {in("f32[2,3]"), ints({0, 0, 0})}).error().find("rank 2"), std::string::npos);
    EXPECT_NE(runOne("Reshape", {in("f32[2,3]"), ints({-2, 3})}).error().find("invalid entry"), std::string::npos);
    EXPECT_EQ(runOne("Reshape", {in("f32[2,3]"), in("i64[2,1]")}).error(), "input 'shape' must be 1-D, got i64[2,1]");
}

TEST(IrShapeData, Transpose) {
    EXPECT_EQ(runOne("Transpose", {in("f32[1,2,3]")}).out(), "f32[3,2,1]");
    EXPECT_EQ(runOne("Transpose", {in("f32[N,2,3]")}, {{"perm", Is({0, 2, 1})}}).out(), "f32[N,3,2]");
    EXPECT_NE(runOne("Transpose", {in("f32[1,2,3]")}, {{"perm", Is({0, 0, 1})}}).error().find("not a permutation"), std::string::npos);
    EXPECT_NE(runOne("Transpose", {in("f32[1,2,3]")}, {{"perm", Is({1, 0})}}).error().find("rank 3"), std::string::npos);
}

TEST(IrShapeData, Concat) {
    EXPECT_EQ(runOne("Concat", {in("f32[2,3]"), in("f32[2,5]")}, {{"axis", I(1)}}).out(), "f32[2,8]");
    EXPECT_EQ(runOne("Concat", {in("f32[2,3]"), in("f32[2,5]"), in("f32[2,1]")}, {{"axis", I(-1)}}).out(), "f32[2,9]");
    EXPECT_EQ(runOne("Concat", {in("f32[N,3]"), in("f32[N,4]")}, {{"axis", I(1)}}).out(), "f32[N,7]");
    EXPECT_EQ(runOne("Concat", {in("f32[N,3]"), in("f32[M,3]")}, {{"axis", I(0)}}).out(), "f32[?,3]");
    EXPECT_NE(runOne("Concat", {in("f32[2,3]"), in("f32[3,5]")}, {{"axis", I(1)}}).error().find("does not match"), std::string::npos);
    EXPECT_NE(runOne("Concat", {in("f32[2,3]"), in("f32[2,5]")}, {{"axis", I(2)}}).error().find("out of range"), std::string::npos);
    EXPECT_EQ(runOne("Concat", {in("f32[2,3]")}).error(), "attribute 'axis' (int) is required");
}

TEST(IrShapeData, Split) {
    auto a = runOne("Split", {in("f32[6,4]")}, {{"split", Is({2, 4})}}, 2);
    EXPECT_EQ(a.out(0), "f32[2,4]");
    EXPECT_EQ(a.out(1), "f32[4,4]");
    auto b = runOne("Split", {in("f32[4,6]"), ints({1, 2, 3})}, {{"axis", I(1)}}, 3);
    EXPECT_EQ(b.out(0), "f32[4,1]");
    EXPECT_EQ(b.out(2), "f32[4,3]");
    auto eq = runOne("Split", {in("f32[6,4]")}, {}, 3);
    EXPECT_EQ(eq.out(2), "f32[2,4]");
    // opset 18 num_outputs: 7 into 3 -> ceil(7/3)=3, 3, 1
    auto n = runOne("Split", {in("f32[7,2]")}, {{"num_outputs", I(3)}}, 3);
    EXPECT_EQ(n.out(0), "f32[3,2]");
    EXPECT_EQ(n.out(2), "f32[1,2]");
    EXPECT_NE(runOne("Split", {in("f32[6,4]")}, {{"split", Is({2, 3})}}, 2).error().find("sums to 5"), std::string::npos);
    EXPECT_NE(runOne("Split", {in("f32[7,4]")}, {}, 2).error().find("equal parts"), std::string::npos);
}

TEST(IrShapeData, SliceClampingAndNegativeSteps) {
    // axis 0: [1,8) -> 7; axis 1: start -5 -> 15, end 1000 clamps to 20 -> 5
    EXPECT_EQ(runOne("Slice", {in("f32[10,20]"), ints({1, -5}), ints({8, 1000}), ints({0, 1})}).out(), "f32[7,5]");
    // full reverse: start -1 -> 9, end INT64_MIN clamps to -1, step -1 -> 10 elements
    EXPECT_EQ(runOne("Slice", {in("f32[10]"), ints({-1}), ints({kI64Min}), ints({0}), ints({-1})}).out(), "f32[10]");
    // 8, 6, 4, 2 -> 4 elements
    EXPECT_EQ(runOne("Slice", {in("f32[10]"), ints({8}), ints({1}), ints({0}), ints({-2})}).out(), "f32[4]");
    // 0, 3, 6, 9 -> 4 elements
    EXPECT_EQ(runOne("Slice", {in("f32[10]"), ints({0}), ints({10}), ints({0}), ints({3})}).out(), "f32[4]");
    // start past the end: empty
    EXPECT_EQ(runOne("Slice", {in("f32[10]"), ints({12}), ints({20})}).out(), "f32[0]");
    EXPECT_EQ(runOne("Slice", {in("f32[N,20]"), ints({0}), ints({10}), ints({1})}).out(), "f32[N,10]");
    EXPECT_EQ(runOne("Slice", {in("f32[N,20]"), ints({0}), ints({kI64Max}), ints({0})}).out(), "f32[N,20]");
    EXPECT_EQ(runOne("Slice", {in("f32[3,4]")}, {{"starts", Is({0})}, {"ends", Is({2})}, {"axes", Is({1})}}).out(), "f32[3,2]");
    EXPECT_EQ(runOne("Slice", {in("f32[3,4]"), in("i64[1]"), ints({2}), ints({1})}).out(), "f32[3,?]");
    EXPECT_EQ(runOne("Slice", {in("f32[10]"), ints({0}), ints({5}), ints({0}), ints({0})}).error(), "step 0 on axis 0");
    EXPECT_NE(runOne("Slice", {in("f32[10]"), ints({0}), ints({5}), ints({3})}).error().find("out of range"), std::string::npos);
}

TEST(IrShapeData, Gather) {
    EXPECT_EQ(runOne("Gather", {in("f32[5,4,3]"), in("i64[2,6]")}, {{"axis", I(1)}}).out(), "f32[5,2,6,3]");
    EXPECT_EQ(runOne("Gather", {in("f32[5,4,3]"), in("i64[]")}).out(), "f32[4,3]");
    EXPECT_EQ(runOne("Gather", {in("f32[5,4]"), ints({1, 4})}).out(), "f32[2,4]");
    EXPECT_NE(runOne("Gather", {in("f32[5,4]"), ints({7})}).error().find("index 7 is out of range"), std::string::npos);
    EXPECT_NE(runOne("Gather", {in("f32[5,4]"), in("i64[2]")}, {{"axis", I(3)}}).error().find("out of range"), std::string::npos);
    EXPECT_NE(runOne("Gather", {in("f32[5,4]"), in("f32[2]")}).error().find("i32 or i64"), std::string::npos);
}

TEST(IrShapeData, SqueezeUnsqueeze) {
    EXPECT_EQ(runOne("Squeeze", {in("f32[1,3,1,5]")}, {{"axes", Is({0, 2})}}).out(), "f32[3,5]");
    EXPECT_EQ(runOne("Squeeze", {in("f32[1,3,1,5]"), ints({-2})}).out(), "f32[1,3,5]");
    EXPECT_EQ(runOne("Squeeze", {in("f32[1,3,1,5]")}).out(), "f32[3,5]");
    EXPECT_EQ(runOne("Squeeze", {in("f32[N,3,1]")}).out(), "f32[*]");
    EXPECT_NE(runOne("Squeeze", {in("f32[1,3]")}, {{"axes", Is({1})}}).error().find("extent 3"), std::string::npos);
    EXPECT_EQ(runOne("Unsqueeze", {in("f32[3,5]")}, {{"axes", Is({0, 3})}}).out(), "f32[1,3,5,1]");
    EXPECT_EQ(runOne("Unsqueeze", {in("f32[N,5]"), ints({-1})}).out(), "f32[N,5,1]");
    EXPECT_EQ(runOne("Unsqueeze", {in("f32[]"), ints({0})}).out(), "f32[1]");
    EXPECT_NE(runOne("Unsqueeze", {in("f32[3]")}, {{"axes", Is({0, 0})}}).error().find("repeated"), std::string::npos);
    EXPECT_NE(runOne("Unsqueeze", {in("f32[3]")}).error().find("axes are required"), std::string::npos);
}

TEST(IrShapeData, Pad) {
    EXPECT_EQ(runOne("Pad", {in("f32[1,3,4,4]"), ints({0, 0, 1, 1, 0, 0, 1, 1})}).out(), "f32[1,3,6,6]");
    EXPECT_EQ(runOne("Pad", {in("f32[1,3,4,4]")}, {{"pads", Is({0, 0, 2, 0, 0, 0, 0, 3})}}).out(), "f32[1,3,6,7]");
    EXPECT_EQ(runOne("Pad", {in("f32[5]"), ints({-1, -2})}).out(), "f32[2]");
    EXPECT_EQ(runOne("Pad", {in("f32[2,4]"), ints({1, 1}), absent(), ints({1})}).out(), "f32[2,6]");
    EXPECT_NE(runOne("Pad", {in("f32[2]"), ints({-2, -2})}).error().find("remove more"), std::string::npos);
    EXPECT_NE(runOne("Pad", {in("f32[2,2]"), ints({1, 1})}).error().find("must have 4 entries"), std::string::npos);
}

TEST(IrShapeData, ConstantCastShape) {
    auto t = std::make_shared<TensorData>(TensorData::fromFloats({1, 2, 3, 4, 5, 6}, {2, 3}));
    EXPECT_EQ(runOne("Constant", {}, {{"value", Attribute::ofTensor(t)}}).out(), "f32[2,3]");
    EXPECT_EQ(runOne("Constant", {}, {{"value_ints", Is({1, 2, 3})}}).out(), "i64[3]");
    EXPECT_EQ(runOne("Constant", {}, {{"value_float", F(0.5)}}).out(), "f32[]");
    EXPECT_EQ(runOne("Constant", {}).error(), "Constant has no value attribute");
    EXPECT_EQ(runOne("Shape", {in("f32[2,3,4]")}).out(), "i64[3]");
    EXPECT_EQ(runOne("Shape", {in("f32[2,3,4]")}, {{"start", I(1)}}).out(), "i64[2]");
    EXPECT_EQ(runOne("Shape", {in("f32[2,3,4]")}, {{"start", I(-1)}}).out(), "i64[1]");
    EXPECT_EQ(runOne("Shape", {in("f32[2,3,4]")}, {{"end", I(-1)}}).out(), "i64[2]");
    EXPECT_EQ(runOne("Shape", {in("f32[*]")}).out(), "i64[?]");
    EXPECT_EQ(runOne("Expand", {in("f32[3,1]"), ints({2, 1, 6})}).out(), "f32[2,3,6]");
    EXPECT_EQ(runOne("Tile", {in("f32[3,2]"), ints({2, 3})}).out(), "f32[6,6]");
}

// ---------------------------------------------------------------------- robustness sweep

TEST(IrShapeRobustness, EveryOpSurvivesMalformedNodes) {
    // Every registered op against absent inputs, scalars, unknown ranks, huge dims and absurd
    // attributes: shape inference must return (error or not), never crash or throw.
    const std::vector<std::vector<In>> inputSets = {
        {},
        {absent(), absent()},
        {in("f32[]")},
        {in("f32[]"), in("f32[]"), in("f32[]")},
        {in("f32[*]"), in("f32[*]"), in("f32[*]"), in("f32[*]"), in("f32[*]")},
        {in("f32[1099511627776,1099511627776]"), in("i64[2]")},
        {in("f32[9223372036854775807,3,9223372036854775807]"), ints({1, 1, 1, 1, 1, 1}), in("f32[9223372036854775807,3,1]")},
        {in("f32[1,2,9223372036854775807,5]"), in("f32[9223372036854775807,2,3,3]"), ints({0, -1})},
        {in("f32[2,3,4,5]"), ints({kI64Max, kI64Min, 0, -1}), ints({kI64Min}), ints({kI64Max}), ints({kI64Min})},
        {in("f32[1,1,1]"), in("f32[1,1,1]"), in("f32[1]"), in("f32[1]"), in("f32[1]")},
    };
    const std::vector<Attrs> attrSets = {
        {},
        {{"strides", Is({0, 0})}, {"pads", Is({-5, -5, -5, -5})}, {"kernel_shape", Is({kI64Max, 0})}, {"group", I(-3)}},
        {{"axis", I(kI64Min)}, {"axes", Is({kI64Max})}, {"perm", Is({5, 5})}, {"split", Is({-1})}, {"to", I(-1)}},
        {{"kernel_shape", Is({})}, {"dilations", Is({kI64Max})}, {"strides", F(1.0)}, {"num_outputs", I(0)}},
        {{"starts", Is({kI64Min})}, {"ends", Is({kI64Max})}, {"shape", Is({kI64Max, kI64Max})}, {"output_shape", Is({-1})}},
    };
    int ran = 0;
    for (const OpSchema* s : OpRegistry::instance().all()) {
        for (const auto& ins : inputSets) {
            for (const auto& attrs : attrSets) {
                for (int outs : {0, 1, 3}) {
                    EXPECT_NO_THROW(runOne(s->opType, ins, attrs, outs)) << s->opType;
                    ++ran;
                }
            }
        }
    }
    EXPECT_GT(ran, 1000);
}

// ONNX type constraints applied by the registry (core/ir/ops/dtype_rules.cpp).
TEST(IrDtypeRules, SameTypeAndTypeClasses) {
    using tessera::ir::test::in;
    using tessera::ir::test::runOne;
    auto add = runOne("Add", {in("f16[4,4]"), in("f32[4,4]")});
    EXPECT_EQ(add.error(), "input 0 ('x0') is f16[4,4] but input 1 ('x1') is f32[4,4]: they must have one element "
                           "type (insert a Cast)");
    auto mm = runOne("MatMul", {in("f16[4,4]"), in("f32[4,4]")});
    EXPECT_NE(mm.error().find("they must have one element type"), std::string::npos) << mm.error();
    auto exp = runOne("Exp", {in("i32[4]")});
    EXPECT_EQ(exp.error(), "input 0 ('x0') is i32[4]: a floating-point element type is required");
    auto relu = runOne("Relu", {in("string[4]")});
    EXPECT_NE(relu.error().find("is string[4]: a numeric element type is required"), std::string::npos) << relu.error();
    auto where = runOne("Where", {in("f32[4]"), in("f32[4]"), in("f32[4]")});
    EXPECT_NE(where.error().find("input 0 ('x0') is f32[4]: a bool element type is required"), std::string::npos)
        << where.error();
    auto where2 = runOne("Where", {in("bool[4]"), in("f16[4]"), in("f32[4]")});
    EXPECT_NE(where2.error().find("input 1 ('x1') is f16[4] but input 2 ('x2') is f32[4]"), std::string::npos)
        << where2.error();
    auto concat = runOne("Concat", {in("f32[2]"), in("f32[3]"), in("i64[1]")}, {{"axis", tessera::ir::Attribute::ofInt(0)}});
    EXPECT_NE(concat.error().find("input 2 ('x2') is i64[1]"), std::string::npos) << concat.error();
    // Valid mixes stay valid: Pow's exponent has its own type parameter; integer Relu is allowed.
    EXPECT_EQ(runOne("Pow", {in("f32[4]"), in("i64[]")}).error(), "");
    EXPECT_EQ(runOne("Relu", {in("i32[4]")}).error(), "");
    EXPECT_EQ(runOne("Add", {in("i64[4]"), in("i64[1]")}).out(), "i64[4]");
}
