// Pointwise Conv on the CUDA target (core/lower/common/lower_conv.cpp): a 1x1, stride-1, unpadded,
// ungrouped conv with C_out >= 64 and batch x spatial >= 64 is lowered through the GEMM template
// (core/lower/cuda/lower_matmul_gpu.cpp) as Y[n] = W X[n] with the images flattened into the columns
// (GpuGemmSpec::colGroup); the kernels are run with the kernel-IR interpreter and compared with
// the reference interpreter, their structure and mappings checked, other convs keep the default
// path, and, where NVRTC loads, one kernel is compiled for sm_90.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "core/codegen/cuda/cuda_codegen.h"
#include "core/eval/compare.h"
#include "core/eval/reference_interpreter.h"
#include "core/lower/counts.h"
#include "core/lower/detail/lower_heavy.h"
#include "core/lower/lower.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/test_ir_helpers.h"
#include "lower/nvrtc_sm90_util.h"
#include "lower/test_lower_basic_util.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::lower::test {
namespace {

using ir::Attribute;
using ir::test::Attrs;
using ir::test::in;
using ir::test::runOne;

Attribute I(std::int64_t v) { return Attribute::ofInt(v); }
Attribute Is(std::vector<std::int64_t> v) { return Attribute::ofInts(std::move(v)); }

constexpr const char* kTemplateNote = "A/B tiles staged in shared memory, BK = 8";
constexpr const char* kPointwiseNote = "pointwise conv as GEMM: M = Co, N = batch x spatial, K = Ci";

bool usesTemplate(const Kernel& k) { return hasNote(k, kTemplateNote) && hasNote(k, kPointwiseNote); }

struct Lowered {
    ir::Graph g;
    LoweredKernel lk;
    std::string error;
};

/// A one-node Conv graph lowered for `target` (no schedule unless given).
Lowered lowerConv(const std::vector<ir::test::In>& ins, const Attrs& attrs = {}, Target target = Target::Cuda,
                  const ir::KernelScheduleDecl* schedule = nullptr, std::int64_t convGemmMinBlocks = 132) {
    Lowered r;
    auto one = runOne("Conv", ins, attrs);
    if (!one.error().empty()) {
        r.error = "shape inference: " + one.error();
        return r;
    }
    r.g = std::move(one.g);
    LowerOptions lo;
    lo.target = target;
    lo.convGemmMinBlocks = convGemmMinBlocks;
    auto lk = lowerNode(r.g, 0, schedule, lo);
    if (!lk) {
        r.error = "lowering: " + lk.diagnostics().firstError()->format();
        return r;
    }
    r.lk = std::move(*lk);
    return r;
}

enum class Path { Template, Default, Implicit };

constexpr const char* kImplicitNote = "conv as implicit GEMM: M = Co, N = batch x output pixels, K = Ci x taps";
bool usesImplicit(const Kernel& k) { return hasNote(k, kImplicitNote); }

/// Lowers the conv for CUDA, checks which path it took, runs the kernel with the interpreter and
/// compares with the reference interpreter. Returns "" when everything matches, else the problems.
/// *stats and *kernel receive the interpreter's counts and the kernel.
std::string convCheck(const std::vector<ir::test::In>& ins, const Attrs& attrs, Path path, EvalStats* stats = nullptr,
                      Kernel* kernel = nullptr) {
    // The implicit-GEMM cases are small (the interpreter's speed): any block count takes the form.
    Lowered l = lowerConv(ins, attrs, Target::Cuda, nullptr, path == Path::Implicit ? 0 : 132);
    if (!l.error.empty()) return l.error;
    if (usesImplicit(l.lk.kernel) != (path == Path::Implicit))
        return std::string(path == Path::Implicit ? "the implicit GEMM was not used" : "the implicit GEMM was used") +
               ":\n" + printKernel(l.lk.kernel);
    if (usesTemplate(l.lk.kernel) != (path == Path::Template))
        return std::string(path == Path::Template ? "the GEMM template was not used" : "the GEMM template was used") +
               ":\n" + printKernel(l.lk.kernel);
    const auto inputs = makeInputs(l.g, 5);
    auto ref = eval::evaluateAll(l.g, inputs, {});
    if (!ref) return "reference: " + ref.diagnostics().firstError()->format();
    std::vector<ir::TensorData> storage;
    for (ir::ValueId v : l.lk.inputs) {
        const ir::TensorData* t = ref->value(v);
        if (!t) return "no value for input " + l.g.value(v).name;
        storage.push_back(*t);
    }
    storage.emplace_back();
    std::vector<ir::TensorData*> params;
    for (auto& t : storage) params.push_back(&t);
    EvalOptions eo;
    eo.countOps = stats != nullptr;
    auto st = evalKernel(l.lk.kernel, params, eo);
    if (!st) return "eval: " + st.diagnostics().firstError()->format();
    if (stats) *stats = *st;
    if (kernel) *kernel = l.lk.kernel;
    const ir::TensorData* want = ref->value(l.lk.outputs[0]);
    ir::TensorData got = storage.back();
    got.dims = want->dims;  // the kernel declares Y flattened
    eval::CompareOptions co = eval::defaultCompareOptions(want->dtype);
    if (want->dtype == ir::DType::F32) {
        // f32 sums of K products of |w x| <= 4 in another order than the reference: the absolute
        // error grows with K (measured 1.2e-4 at K = 960 on an output of 0.15), the whole stays
        // within 1e-6 relative L2.
        const std::int64_t K = l.lk.kernel.buffers[1].shape.back();
        co = {1e-5, 1e-5 + 2.5e-7 * static_cast<double>(K)};
    }
    auto cmp = eval::compareTensors(got, *want, co);
    if (want->dtype == ir::DType::F32 && cmp.relL2 > 1e-6) return "relative L2 error too large: " + cmp.summary();
    return cmp.ok ? std::string() : cmp.summary();
}

TEST(LowerGpuConv, PointwiseThroughTheGemmTemplateAgainstReference) {
    // MobileNetV2-like layers (channel counts cut where the interpreter would be slow).
    EXPECT_EQ(convCheck({in("f32[2,960,7,7]"), in("f32[64,960,1,1]"), in("f32[64]")}, {}, Path::Template), "");   // 98 columns, K = 960
    EXPECT_EQ(convCheck({in("f32[4,40,7,7]"), in("f32[160,40,1,1]"), in("f32[160]")}, {}, Path::Template), "");   // 2 x 2 tiles
    EXPECT_EQ(convCheck({in("f32[4,96,7,7]"), in("f32[64,96,1,1]")}, {}, Path::Template), "");    // 196 columns over 4 images
    EXPECT_EQ(convCheck({in("f32[1,128,14,14]"), in("f32[128,128,1,1]"), in("f32[128]")}, {}, Path::Template), "");
    EXPECT_EQ(convCheck({in("f32[4,24,14,14]"), in("f32[144,24,1,1]"), in("f32[144]")}, {}, Path::Template), "");
    EXPECT_EQ(convCheck({in("f32[1,3,56,56]"), in("f32[96,3,1,1]")}, {}, Path::Template), "");    // K = 3 < BK
    EXPECT_EQ(convCheck({in("f32[1,16,56,56]"), in("f32[96,16,1,1]"), in("f32[96]")}, {}, Path::Template), "");
    // 1-D and 3-D spatial dims; explicit kernel_shape, dilations (irrelevant for 1x1) and VALID.
    EXPECT_EQ(convCheck({in("f32[4,32,50]"), in("f32[72,32,1]"), in("f32[72]")}, {}, Path::Template), "");
    EXPECT_EQ(convCheck({in("f32[2,17,4,5,6]"), in("f32[64,17,1,1,1]"), in("f32[64]")}, {}, Path::Template), "");
    EXPECT_EQ(convCheck({in("f32[4,20,7,7]"), in("f32[65,20,1,1]"), in("f32[65]")},
                        {{"kernel_shape", Is({1, 1})}, {"dilations", Is({2, 3})}, {"auto_pad", Attribute::ofString("VALID")}},
                        Path::Template), "");
    // Half types: staged and accumulated as f32, stored in the output's type.
    EXPECT_EQ(convCheck({in("f16[4,40,7,7]"), in("f16[64,40,1,1]"), in("f16[64]")}, {}, Path::Template), "");
    EXPECT_EQ(convCheck({in("bf16[2,24,8,8]"), in("bf16[64,24,1,1]")}, {}, Path::Template), "");
}

TEST(LowerGpuConv, OtherConvsKeepTheDefaultPath) {
    // 3x3, stride 2, groups, padding, too few output channels, too few columns (one 7x7 image).
    EXPECT_EQ(convCheck({in("f32[1,8,9,9]"), in("f32[64,8,3,3]"), in("f32[64]")}, {{"pads", Is({1, 1, 1, 1})}}, Path::Default), "");
    EXPECT_EQ(convCheck({in("f32[2,8,16,16]"), in("f32[64,8,1,1]")}, {{"strides", Is({2, 2})}}, Path::Default), "");
    EXPECT_EQ(convCheck({in("f32[2,8,10,10]"), in("f32[64,4,1,1]")}, {{"group", I(2)}}, Path::Default), "");
    EXPECT_EQ(convCheck({in("f32[2,8,10,10]"), in("f32[64,8,1,1]")}, {{"pads", Is({1, 0, 1, 0})}}, Path::Default), "");
    EXPECT_EQ(convCheck({in("f32[2,8,10,10]"), in("f32[63,8,1,1]")}, {}, Path::Default), "");
    EXPECT_EQ(convCheck({in("f32[1,16,7,7]"), in("f32[64,16,1,1]"), in("f32[64]")}, {}, Path::Default), "");
    // The CPU target keeps its pointwise matmul view.
    Lowered cpu = lowerConv({in("f32[4,16,7,7]"), in("f32[64,16,1,1]")}, {}, Target::Cpu);
    ASSERT_EQ(cpu.error, "");
    EXPECT_FALSE(hasNote(cpu.lk.kernel, kTemplateNote));
    EXPECT_TRUE(hasNote(cpu.lk.kernel, "pointwise conv as matmul over [N, C_out, H*W]"));
    // A user mapping over the matmul view keeps the default path on CUDA too.
    ir::KernelScheduleDecl s;
    s.subject = "n0";
    ir::ScheduleMappingDecl grid;
    grid.level = "grid";
    grid.text = "spatial(4, 8, 1) * repeat(1, 8, 49)";
    s.mappings.push_back(grid);
    Lowered user = lowerConv({in("f32[4,16,7,7]"), in("f32[64,16,1,1]")}, {}, Target::Cuda, &s);
    ASSERT_EQ(user.error, "");
    EXPECT_FALSE(usesTemplate(user.lk.kernel));
    EXPECT_EQ(user.lk.kernel.mappings.front(), "grid = spatial(4,8,1).repeat(1,8,49)");
}

TEST(LowerGpuConv, KernelStructureMappingsAndNotes) {
    Lowered l = lowerConv({in("f32[4,960,7,7]"), in("f32[160,960,1,1]"), in("f32[160]")});
    ASSERT_EQ(l.error, "");
    const Kernel& k = l.lk.kernel;
    const std::string text = printKernel(k);
    // M = 160 (2 row tiles), N = 4 x 49 = 196 (2 column tiles).
    EXPECT_EQ(k.mappings, (std::vector<std::string>{"grid = spatial(2,2)", "block = repeat(2,2).spatial(16,16).repeat(4,4)"}))
        << text;
    ASSERT_EQ(k.notes.size(), 3u) << text;
    EXPECT_EQ(k.notes[2], "pointwise conv as GEMM: M = Co, N = batch x spatial, K = Ci (160, 4 x 49, 960); X, W, Y "
                          "declared [N, Ci, P], [Co, Ci], [N, Co, P]");
    EXPECT_EQ(countOf(text, "blocks for "), 1u) << text;
    EXPECT_EQ(countOf(text, "threads for "), 4u) << text;
    EXPECT_EQ(countOf(text, "barrier\n"), 2u) << text;
    EXPECT_NE(text.find("alloc As: f32[8,132] shared\n"), std::string::npos) << text;
    EXPECT_NE(text.find("alloc Bs: f32[8,132] shared\n"), std::string::npos) << text;
    EXPECT_NE(text.find("alloc acc: f32[256,8,8] local per-thread\n"), std::string::npos) << text;
    // Parameters declared as the GEMM sees them: X [N, Ci, P], W [Co, Ci], bias [Co, 1], Y [N, Co, P].
    ASSERT_EQ(k.buffers.size() >= 4, true);
    EXPECT_EQ(k.buffers[0].shape, (std::vector<std::int64_t>{4, 960, 49}));
    EXPECT_EQ(k.buffers[1].shape, (std::vector<std::int64_t>{160, 960}));
    EXPECT_EQ(k.buffers[2].shape, (std::vector<std::int64_t>{160, 1}));
    EXPECT_EQ(k.buffers[3].shape, (std::vector<std::int64_t>{4, 160, 49}));
    // The flattened column is split into (image, pixel) with a constant divisor.
    EXPECT_NE(text.find(" / 49"), std::string::npos) << text;
    EXPECT_NE(text.find(" % 49"), std::string::npos) << text;

    // One image: no division at all.
    Lowered one = lowerConv({in("f32[1,32,14,14]"), in("f32[64,32,1,1]")});
    ASSERT_EQ(one.error, "");
    const std::string oneText = printKernel(one.lk.kernel);
    EXPECT_TRUE(usesTemplate(one.lk.kernel)) << oneText;
    EXPECT_EQ(one.lk.kernel.mappings.front(), "grid = spatial(1,2)");
    EXPECT_EQ(oneText.find(" / 196"), std::string::npos) << oneText;
    EXPECT_EQ(oneText.find(" % 196"), std::string::npos) << oneText;
}

TEST(LowerGpuConv, DefaultScheduleWrittenBackSelectsTheTemplateAgain) {
    const std::vector<ir::test::In> ins{in("f32[4,24,7,7]"), in("f32[96,24,1,1]"), in("f32[96]")};
    Lowered def = lowerConv(ins);
    ASSERT_EQ(def.error, "");
    LowerOptions cuda;
    cuda.target = Target::Cuda;
    ir::KernelScheduleDecl back;
    back.subject = "n0";
    back.mappings = defaultSchedule(def.g, 0, cuda);
    ASSERT_EQ(back.mappings.size(), 2u);
    EXPECT_EQ(back.mappings[0].text, "spatial(1,2)");
    Lowered again = lowerConv(ins, {}, Target::Cuda, &back);
    ASSERT_EQ(again.error, "");
    EXPECT_TRUE(usesTemplate(again.lk.kernel));
    EXPECT_EQ(printKernel(again.lk.kernel), printKernel(def.lk.kernel));
}

TEST(LowerGpuConv, StaticCountsMatchTheInterpreterAndFormulas) {
    // M = 96, N = 2 x 100 = 200, K = 20: 1 x 2 tiles, 3 k steps.
    EvalStats st;
    Kernel k;
    ASSERT_EQ(convCheck({in("f32[2,20,10,10]"), in("f32[96,20,1,1]"), in("f32[96]")}, {}, Path::Template, &st, &k), "");
    const KernelCounts kc = countKernel(k);
    EXPECT_TRUE(kc.exact);
    EXPECT_EQ(kc.flops, st.flops);
    EXPECT_EQ(kc.loadBytes, st.loadBytes);
    EXPECT_EQ(kc.storeBytes, st.storeBytes);
    EXPECT_EQ(kc.sharedLoadBytes, st.sharedLoadBytes);
    EXPECT_EQ(kc.sharedStoreBytes, st.sharedStoreBytes);
    const std::int64_t M = 96, N = 200, K = 20, blocks = 2, steps = 3;
    EXPECT_EQ(kc.sharedStoreBytes, blocks * steps * (1024 + 1024) * 4);
    // W read once per column tile, X once (one row tile), the bias once per stored element, Y written once.
    EXPECT_EQ(kc.loadBytes, (M * K * 2 + K * N * 1 + M * N) * 4);
    EXPECT_EQ(kc.storeBytes, M * N * 4);
}

// ---- implicit GEMM (lower_conv_gpu.cpp) ----------------------------------------------------

TEST(LowerGpuConv, ImplicitGemmAgainstReference) {
    const Attrs pad1{{"pads", Is({1, 1, 1, 1})}};
    // ResNet-like 3x3 (M = 64, 2 x 81 columns, K = 8 x 9 = 72: a ragged last k step).
    EXPECT_EQ(convCheck({in("f32[2,8,9,9]"), in("f32[64,8,3,3]"), in("f32[64]")}, pad1, Path::Implicit), "");
    // Stride 2 with padding; more filters than one row tile (M = 130: a ragged row tile).
    EXPECT_EQ(convCheck({in("f32[4,16,10,10]"), in("f32[130,16,3,3]")}, {{"pads", Is({1, 1, 1, 1})}, {"strides", Is({2, 2})}},
                        Path::Implicit), "");
    // The stem: 3 channels, 7x7, stride 2, pad 3 (K = 147).
    EXPECT_EQ(convCheck({in("f32[1,3,32,32]"), in("f32[64,3,7,7]"), in("f32[64]")},
                        {{"pads", Is({3, 3, 3, 3})}, {"strides", Is({2, 2})}}, Path::Implicit), "");
    // Dilation 2 with asymmetric pads; a 1x1 stride-2 projection (ResNet's downsample).
    EXPECT_EQ(convCheck({in("f32[2,8,12,12]"), in("f32[64,8,3,3]")}, {{"dilations", Is({2, 2})}, {"pads", Is({1, 0, 2, 1})}},
                        Path::Implicit), "");
    EXPECT_EQ(convCheck({in("f32[2,8,16,16]"), in("f32[64,8,1,1]"), in("f32[64]")}, {{"strides", Is({2, 2})}}, Path::Implicit), "");
    // SAME_UPPER, stride 2 on an odd size; a non-square kernel.
    EXPECT_EQ(convCheck({in("f32[2,6,11,11]"), in("f32[64,6,3,2]")}, {{"auto_pad", Attribute::ofString("SAME_UPPER")}, {"strides", Is({2, 2})}},
                        Path::Implicit), "");
    // 1-D and 3-D convs.
    EXPECT_EQ(convCheck({in("f32[4,8,40]"), in("f32[64,8,5]"), in("f32[64]")}, {{"pads", Is({2, 2})}}, Path::Implicit), "");
    EXPECT_EQ(convCheck({in("f32[2,4,6,6,6]"), in("f32[64,4,3,3,3]")}, {{"pads", Is({1, 1, 1, 1, 1, 1})}}, Path::Implicit), "");
    // Half types (staged and accumulated as f32).
    EXPECT_EQ(convCheck({in("f16[2,8,9,9]"), in("f16[64,8,3,3]"), in("f16[64]")}, pad1, Path::Implicit), "");
}

TEST(LowerGpuConv, ImplicitGemmTileRule) {
    // ResNet-50 at batch 32: 3x3 layers take the form with the largest tile giving >= 132 blocks.
    Lowered l = lowerConv({in("f32[32,64,56,56]"), in("f32[64,64,3,3]")}, {{"pads", Is({1, 1, 1, 1})}});
    ASSERT_EQ(l.error, "");
    ASSERT_TRUE(usesImplicit(l.lk.kernel)) << printKernel(l.lk.kernel);
    // 64 filters: rows capped at 64; 64 x 128 tiles: 1 x 784 blocks.
    EXPECT_EQ(l.lk.kernel.mappings.front(), "grid = spatial(1,784)");
    EXPECT_EQ(l.lk.kernel.buffers[0].shape, (std::vector<std::int64_t>{32, 64, 56 * 56}));
    EXPECT_EQ(l.lk.kernel.buffers[1].shape, (std::vector<std::int64_t>{64, 64 * 9}));
    Lowered deep = lowerConv({in("f32[32,512,7,7]"), in("f32[512,512,3,3]")}, {{"pads", Is({1, 1, 1, 1})}});
    ASSERT_EQ(deep.error, "");
    ASSERT_TRUE(usesImplicit(deep.lk.kernel));
    EXPECT_EQ(deep.lk.kernel.mappings.front(), "grid = spatial(8,25)");  // 64 x 64: 8 x 25 = 200 blocks
    // Batch 1's 7x7 layer: even 32 x 32 tiles give 16 x 2 blocks, so the direct form stays.
    Lowered small = lowerConv({in("f32[1,512,7,7]"), in("f32[512,512,3,3]")}, {{"pads", Is({1, 1, 1, 1})}});
    ASSERT_EQ(small.error, "");
    EXPECT_FALSE(usesImplicit(small.lk.kernel));
    // Groups and the CPU target never take it.
    Lowered grouped = lowerConv({in("f32[32,64,56,56]"), in("f32[64,32,3,3]")}, {{"pads", Is({1, 1, 1, 1})}, {"group", I(2)}});
    ASSERT_EQ(grouped.error, "");
    EXPECT_FALSE(usesImplicit(grouped.lk.kernel));
    Lowered cpu = lowerConv({in("f32[32,64,56,56]"), in("f32[64,64,3,3]")}, {{"pads", Is({1, 1, 1, 1})}}, Target::Cpu);
    ASSERT_EQ(cpu.error, "");
    EXPECT_FALSE(usesImplicit(cpu.lk.kernel));
    // The tile rule itself.
    auto tile = [](std::int64_t m, std::int64_t n, std::int64_t k) {
        auto t = detail::convGemmTile(m, n, k, 132);
        return t ? std::to_string(t->rows()) + "x" + std::to_string(t->cols()) + "x" + std::to_string(t->bk) : std::string("none");
    };
    EXPECT_EQ(tile(256, 32 * 196, 2304), "128x64x16");  // 128 x 128: 2 x 49 blocks only
    EXPECT_EQ(tile(64, 3136, 576), "32x32x16");  // batch 1, 56 x 56: 2 x 98 blocks
    EXPECT_EQ(tile(512, 49, 4608), "none");
    EXPECT_EQ(tile(32, 100000, 288), "none");    // fewer than 64 filters
}

TEST(LowerGpuConv, ImplicitGemmStaticCountsMatchTheInterpreter) {
    EvalStats st;
    Kernel k;
    ASSERT_EQ(convCheck({in("f32[2,8,9,9]"), in("f32[64,8,3,3]"), in("f32[64]")}, {{"pads", Is({1, 1, 1, 1})}}, Path::Implicit,
                        &st, &k), "");
    const KernelCounts kc = countKernel(k);
    EXPECT_EQ(kc.flops, st.flops);
    EXPECT_EQ(kc.loadBytes, st.loadBytes);
    EXPECT_EQ(kc.storeBytes, st.storeBytes);
    EXPECT_EQ(kc.sharedLoadBytes, st.sharedLoadBytes);
    EXPECT_EQ(kc.sharedStoreBytes, st.sharedStoreBytes);
}

TEST(LowerGpuConv, ImplicitGemmPtxForSm90) {
    auto info = runtime::cuda::nvrtcInfo();
    if (!info.ok()) GTEST_SKIP() << "NVRTC is not loadable: " << info.diagnostics().formatAll();
    Lowered l = lowerConv({in("f32[32,64,56,56]"), in("f32[64,64,3,3]"), in("f32[64]")}, {{"pads", Is({1, 1, 1, 1})}});
    ASSERT_EQ(l.error, "");
    ASSERT_TRUE(usesImplicit(l.lk.kernel));
    auto m = codegen::generateCuda({&l.lk.kernel});
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    const NvrtcSm90 r = compileForSm90(m->source.source, "gpu-conv-implicit");
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_NE(r.log.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << r.log;
    std::cout << "[ ptxas    ] implicit-GEMM conv 32x64x56x56 -> 64, 3x3: Used " << r.registers << " registers\n";
}

// ---- CUDA C and PTX ------------------------------------------------------------------------

TEST(LowerGpuConv, GeneratedCudaLaunchesTheTemplateGrid) {
    Lowered l = lowerConv({in("f32[32,960,7,7]"), in("f32[160,960,1,1]"), in("f32[160]")});
    ASSERT_EQ(l.error, "");
    ASSERT_TRUE(usesTemplate(l.lk.kernel));
    auto m = codegen::generateCuda({&l.lk.kernel});
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    ASSERT_EQ(m->launches.size(), 1u);
    EXPECT_EQ(m->launches[0].gridX, 2 * 13);  // ceil(160/128) x ceil(32*49/128)
    EXPECT_EQ(m->launches[0].blockX, 256);
    EXPECT_EQ(m->launches[0].sharedBytes, 2 * 8 * 132 * 4);
    if (const char* dump = std::getenv("TESSERA_GPU_CONV_DUMP")) {  // for benchmarking by hand
        std::ofstream(dump) << m->source.source;
    }
}

TEST(LowerGpuConv, PtxForSm90) {
    auto info = runtime::cuda::nvrtcInfo();
    if (!info.ok()) GTEST_SKIP() << "NVRTC is not loadable: " << info.diagnostics().formatAll();
    Lowered l = lowerConv({in("f32[32,960,7,7]"), in("f32[160,960,1,1]"), in("f32[160]")});
    ASSERT_EQ(l.error, "");
    auto m = codegen::generateCuda({&l.lk.kernel});
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    const NvrtcSm90 r = compileForSm90(m->source.source, "gpu-conv");
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_NE(r.ptx.find("ld.shared"), std::string::npos);
    EXPECT_NE(r.ptx.find("st.shared"), std::string::npos);
    EXPECT_NE(r.ptx.find("bar.sync"), std::string::npos);
    EXPECT_EQ(r.ptx.find("ld.local"), std::string::npos) << "accumulator in local memory";
    EXPECT_EQ(r.ptx.find("st.local"), std::string::npos) << "accumulator in local memory";
    EXPECT_NE(r.log.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << r.log;
    // As the plain GEMM: at most 128 registers (two 256-thread blocks per SM) despite the
    // (image, pixel) split of the columns.
    ASSERT_GE(r.registers, 0) << r.log;
    EXPECT_LE(r.registers, 128) << r.log;
    std::cout << "[ ptxas    ] pointwise conv 32x960x7x7 -> 160: Used " << r.registers << " registers\n";
}

}  // namespace
}  // namespace tessera::lower::test
