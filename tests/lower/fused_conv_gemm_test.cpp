// The GEMM form of fused dw-pw chains on CUDA (core/lower/cuda/lower_fused_conv_gpu.cpp): the tile
// helpers (gpuGemmTileOf, dwPwGemmTile for MobileNetV2's shapes), small chains with K >= 64 and
// ragged sizes run with the kernel-IR interpreter against the reference interpreter's unfused
// graph (several tiles through the TESSERA_DWPW_GEMM override), the kernel's structure (params,
// output stored only, GEMM views), and where NVRTC loads, the CUDA C compiled for sm_90 with the
// accumulators in registers and no spills.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "core/codegen/cuda/cuda_codegen.h"
#include "core/eval/compare.h"
#include "core/eval/reference_interpreter.h"
#include "core/ir/shape_inference.h"
#include "core/lower/detail/lower_fused.h"
#include "core/lower/detail/lower_fused_conv_gpu.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/test_ir_helpers.h"
#include "lower/nvrtc_sm90_util.h"
#include "lower/test_lower_basic_util.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::lower::test {
namespace {

using ir::Attribute;
using detail::GpuGemmSpec;

/// Sets TESSERA_DWPW_GEMM for its lifetime (restores "unset" after).
struct EnvTile {
    explicit EnvTile(const char* v) { ::setenv("TESSERA_DWPW_GEMM", v, 1); }
    ~EnvTile() { ::unsetenv("TESSERA_DWPW_GEMM"); }
};

struct Dw {
    std::int64_t N = 1, C = 8, H = 7, W = 7, K = 64;
    std::int64_t kernel = 3, stride = 1, pad = 1;
    bool bias1 = true, bias2 = true, clip = true;
};

struct Built {
    ir::Graph g;
    detail::ConvChainSpec spec;
};

Built build(const Dw& d) {
    ir::test::Builder b;
    b.input("X", "f32[" + std::to_string(d.N) + "," + std::to_string(d.C) + "," + std::to_string(d.H) + "," +
                     std::to_string(d.W) + "]");
    b.init("dw_W", makeData(ir::DType::F32, {d.C, 1, d.kernel, d.kernel}, 21));
    std::vector<std::string> ins{"X", "dw_W"};
    if (d.bias1) {
        b.init("dw_B", makeData(ir::DType::F32, {d.C}, 22));
        ins.push_back("dw_B");
    }
    Built r;
    r.spec.kind = schedule::FusionKind::DwPw;
    r.spec.first = b.node("Conv", "dw", ins, {"T"},
                          {{"kernel_shape", Attribute::ofInts({d.kernel, d.kernel})},
                           {"group", Attribute::ofInt(d.C)},
                           {"strides", Attribute::ofInts({d.stride, d.stride})},
                           {"pads", Attribute::ofInts({d.pad, d.pad, d.pad, d.pad})}});
    std::string mid = "T";
    if (d.clip) {
        b.init("lo", ir::TensorData::fromFloats({0.0f}, {}));
        b.init("hi", ir::TensorData::fromFloats({6.0f}, {}));
        r.spec.between.push_back(b.node("Clip", "relu6", {"T", "lo", "hi"}, {"T6"}));
        mid = "T6";
    }
    b.init("pw_W", makeData(ir::DType::F32, {d.K, d.C, 1, 1}, 23));
    std::vector<std::string> ins2{mid, "pw_W"};
    if (d.bias2) {
        b.init("pw_B", makeData(ir::DType::F32, {d.K}, 24));
        ins2.push_back("pw_B");
    }
    r.spec.second = b.node("Conv", "pw", ins2, {"Y"}, {{"kernel_shape", Attribute::ofInts({1, 1})}});
    b.output("Y");
    auto si = ir::inferShapes(b.g, "test");
    EXPECT_FALSE(si.diagnostics.hasErrors()) << si.diagnostics.formatAll();
    r.g = std::move(b.g);
    return r;
}

LowerOptions cudaOptions() {
    LowerOptions lo;
    lo.target = Target::Cuda;
    return lo;
}

support::Expected<LoweredKernel> lowerIt(const Built& bt) {
    return detail::lowerConvChain(bt.g, bt.spec, cudaOptions(), "group 'g0'");
}

/// Lowers through lowerConvChain (CUDA), runs the kernel with the interpreter and compares with
/// the reference interpreter. "" when it matches; *out receives the kernel.
std::string check(const Dw& d, LoweredKernel* out = nullptr, eval::CompareOptions tol = {1e-5, 1e-4}) {
    Built bt = build(d);
    auto lk = lowerIt(bt);
    if (!lk) return "lowering: " + lk.diagnostics().formatAll();
    if (out) *out = *lk;
    const auto inputs = makeInputs(bt.g, 5);
    auto ref = eval::evaluateAll(bt.g, inputs, {});
    if (!ref) return "reference: " + ref.diagnostics().formatAll();
    std::vector<ir::TensorData> storage;
    for (ir::ValueId v : lk->inputs) {
        if (const ir::TensorData* t = ref->value(v)) storage.push_back(*t);
        else if (bt.g.value(v).data) storage.push_back(*bt.g.value(v).data);
        else return "no data for " + bt.g.value(v).name;
    }
    storage.emplace_back();
    std::vector<ir::TensorData*> params;
    for (auto& t : storage) params.push_back(&t);
    auto st = evalKernel(lk->kernel, params);
    if (!st) return "eval: " + st.diagnostics().formatAll();
    const ir::TensorData* want = ref->value(lk->outputs[0]);
    if (!want) return "no reference output";
    ir::TensorData got = storage.back();
    got.dims = want->dims;  // the kernel declares Y as its GEMM view [N, K, H*W]
    auto cmp = eval::compareTensors(got, *want, tol);
    return cmp.ok ? std::string() : cmp.summary();
}

std::string tileText(const GpuGemmSpec::Tile& t) {
    return std::to_string(t.ty) + "x" + std::to_string(t.tx) + " threads, " + std::to_string(t.rm) + "x" +
           std::to_string(t.rn) + " each, bk " + std::to_string(t.bk);
}

TEST(FusedConvGemm, TileOfSplitsResultsPerThread) {
    auto t = detail::gpuGemmTileOf(128, 128, 8);
    ASSERT_TRUE(t);
    EXPECT_EQ(tileText(*t), "16x16 threads, 8x8 each, bk 8");  // the template's default tile
    t = detail::gpuGemmTileOf(16, 256, 16);
    ASSERT_TRUE(t);
    EXPECT_EQ(tileText(*t), "4x64 threads, 4x4 each, bk 16");
    t = detail::gpuGemmTileOf(64, 32, 32);
    ASSERT_TRUE(t);
    EXPECT_EQ(tileText(*t), "32x8 threads, 2x4 each, bk 32");
    t = detail::gpuGemmTileOf(16, 16, 16);
    ASSERT_TRUE(t);
    EXPECT_EQ(tileText(*t), "16x16 threads, 1x1 each, bk 16");
    EXPECT_FALSE(detail::gpuGemmTileOf(16, 16, 8));   // 16 x 8 B elements: fewer than the 256 threads
    EXPECT_FALSE(detail::gpuGemmTileOf(48, 64, 16));  // rows not a power of two
    EXPECT_FALSE(detail::gpuGemmTileOf(512, 64, 8));  // rows above 256
    EXPECT_FALSE(detail::gpuGemmTileValid(GpuGemmSpec::Tile{16, 16, 3, 8, 8}));  // 3 rows per thread
}

TEST(FusedConvGemm, TallTilesCoverAllFilters) {
    auto t = detail::gpuGemmTallTileOf(320, 16, 16, 0);
    ASSERT_TRUE(t);
    EXPECT_EQ(tileText(*t), "16x16 threads, 20x1 each, bk 16");
    t = detail::gpuGemmTallTileOf(160, 16, 32, 0);
    ASSERT_TRUE(t);
    EXPECT_EQ(tileText(*t), "16x16 threads, 10x1 each, bk 32");
    t = detail::gpuGemmTallTileOf(160, 16, 32, 5);
    ASSERT_TRUE(t);
    EXPECT_EQ(tileText(*t), "32x8 threads, 5x2 each, bk 32");
    t = detail::gpuGemmTallTileOf(96, 32, 16, 0);
    ASSERT_TRUE(t);
    EXPECT_EQ(tileText(*t), "16x16 threads, 6x2 each, bk 16");
    t = detail::gpuGemmTallTileOf(320, 8, 32, 0);
    ASSERT_TRUE(t);
    EXPECT_EQ(tileText(*t), "32x8 threads, 10x1 each, bk 32");
    EXPECT_FALSE(detail::gpuGemmTallTileOf(100, 16, 16, 0));   // rows not a multiple of 32
    EXPECT_FALSE(detail::gpuGemmTallTileOf(320, 8, 16, 0));    // 8 x 16 B elements: fewer than the threads
    EXPECT_FALSE(detail::gpuGemmTallTileOf(512, 16, 64, 0));   // 130 KiB of shared memory
    EXPECT_FALSE(detail::gpuGemmTallTileOf(320, 64, 16, 0));   // 80 results per thread
    EXPECT_FALSE(detail::gpuGemmTallTileOf(160, 16, 16, 3));   // 3 does not divide 160
    EXPECT_TRUE(detail::dwPwWide(160, 960));
    EXPECT_FALSE(detail::dwPwWide(64, 384));
    EXPECT_FALSE(detail::dwPwWide(160, 192));
}

TEST(FusedConvGemm, TallTilesAgainstReference) {
    // 130 filters under 160-row tiles (the last 30 rows idle), 40 channels (ragged steps of 16
    // and 32), 3 images of 9x9 (columns straddle images); with and without register prefetch.
    Dw d;
    d.N = 3, d.C = 40, d.H = 9, d.W = 9, d.K = 130;
    for (const char* pf : {"0", "1"}) {
        ::setenv("TESSERA_DWPW_PREFETCH", pf, 1);
        for (const char* tile : {"160,16,16", "160,16,32,5", "160,32,8,10", "160,8,32"}) {
            EnvTile env(tile);
            LoweredKernel lk;
            EXPECT_EQ(check(d, &lk), "") << tile << " prefetch " << pf;
            EXPECT_NE(lk.kernel.notes.back().find("tile 160 filters"), std::string::npos) << lk.kernel.notes.back();
            EXPECT_NE(lk.kernel.notes.back().find("computed 1x"), std::string::npos) << lk.kernel.notes.back();
        }
    }
    ::unsetenv("TESSERA_DWPW_PREFETCH");
    // 96 filters in one 96-row tile, stride 2, no biases.
    d.K = 96, d.stride = 2, d.bias1 = d.bias2 = false;
    EnvTile env("96,32,16");
    EXPECT_EQ(check(d), "");
}

/// Sets an environment variable for its lifetime (unset after).
struct EnvVar {
    EnvVar(const char* name, const char* v) : m_name(name) { ::setenv(name, v, 1); }
    ~EnvVar() { ::unsetenv(m_name); }
    const char* m_name;
};

TEST(FusedConvGemm, SplitReductionAgainstReference) {
    // Tile::splitK: 2 or 4 groups of 256 threads, each every 2nd / 4th reduction step, partial
    // sums added in group order. 40 channels: 3 steps of 16 (the last ragged; with 2 groups the
    // 2nd group's last step lies past the channels, with 4 groups the 4th group has no step), 2
    // of 32; 130 filters; 3 images of 9x9 (columns straddle images and tiles); with and without
    // register prefetch, and prefetch with the raw taps combined at the store.
    Dw d;
    d.N = 3, d.C = 40, d.H = 9, d.W = 9, d.K = 130;
    struct Mode {
        const char* prefetch;
        const char* raw;
    };
    for (const Mode m : {Mode{"0", "0"}, Mode{"1", "0"}, Mode{"1", "1"}}) {
        EnvVar pf("TESSERA_DWPW_PREFETCH", m.prefetch), raw("TESSERA_DWPW_RAW", m.raw);
        for (const char* tile : {"160,16,16,0,2", "160,16,32,5,2", "160,16,16,0,4", "64,16,32,0,2", "32,32,16,0,4",
                                 "32,64,8,0,2"}) {
            EnvTile env(tile);
            LoweredKernel lk;
            EXPECT_EQ(check(d, &lk), "") << tile << " prefetch " << m.prefetch << " raw " << m.raw;
            const std::string split = std::string(tile).substr(std::string(tile).rfind(',') + 1);
            EXPECT_NE(lk.kernel.notes.back().find("reduction split over " + split + " thread groups"), std::string::npos)
                << tile << ": " << lk.kernel.notes.back();
            auto cm = codegen::generateCuda({&lk.kernel});
            ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
            EXPECT_EQ(cm->launches[0].blockX, 256 * std::stoi(split)) << tile;
            const std::string text = printKernel(lk.kernel);
            EXPECT_EQ(text.find("combined at the store") != std::string::npos, std::string(m.raw) == "1") << tile;
        }
    }
    // The partial sums in a buffer of their own when As is too small for them (32 x 64 x 8 tile:
    // 2048 partials of group 1, As holds 2 x 8 x 36 floats).
    {
        EnvTile env("32,64,8,0,2");
        LoweredKernel lk;
        ASSERT_EQ(check(d, &lk), "");
        bool hasRs = false;
        for (const auto& b : lk.kernel.buffers) hasRs = hasRs || (b.name == "Rs" && b.shape == std::vector<std::int64_t>{2048});
        EXPECT_TRUE(hasRs);
    }
    // TESSERA_DWPW_SPLIT on the default tile, BK halved until the stages fit 48 KiB: batch 32's
    // 960x7x7 -> 160 block (160 x 16 x 32) keeps BK 32 with 2 groups (46 KiB), 16 with 4; the
    // 320-filter block (320 x 16 x 32) gets BK 16 with 2 groups (2 x 32 x (324 + 20) floats: 86 KiB).
    for (const auto& [split, filters, want] : std::vector<std::tuple<const char*, std::int64_t, const char*>>{
             {"2", 160, "160x16x32"}, {"4", 160, "160x16x16"}, {"2", 320, "320x16x16"}}) {
        EnvVar sp("TESSERA_DWPW_SPLIT", split);
        const GpuGemmSpec::Tile t = detail::dwPwGemmTile(filters, 32 * 49, 960);
        EXPECT_EQ(t.splitK, std::stoi(split));
        EXPECT_EQ(std::to_string(t.rows()) + "x" + std::to_string(t.cols()) + "x" + std::to_string(t.bk), want);
    }
    // Raw taps with a 5x5 window, stride 2, no biases, ragged everything, without a split.
    d.kernel = 5, d.pad = 2, d.stride = 2, d.bias1 = d.bias2 = false, d.K = 17, d.H = 6, d.W = 11, d.C = 37;
    EnvVar pf("TESSERA_DWPW_PREFETCH", "1"), raw("TESSERA_DWPW_RAW", "1");
    EXPECT_EQ(check(d), "");
    EnvTile env("32,16,16,0,4");
    EXPECT_EQ(check(d), "");
}

TEST(FusedConvGemm, BRunsAgainstReference) {
    // GpuGemmSpec::bRun through TESSERA_DWPW_RUN: a thread produces 2 or 4 consecutive pixels of
    // one channel, sharing the weights and the input columns under their windows. Output rows of
    // 8 (runs of 4 and 2) and 6 (runs of 2 only), stride 1 and 2, 3x3 and 5x5 windows, padding at
    // every edge, ragged channels (37: steps past the end) and columns (3 images: the last tile
    // partly past N), with and without biases, with and without register prefetch.
    struct Case {
        Dw d;
        const char* run;
        const char* tile;
        std::int64_t want;  // run used
    };
    std::vector<Case> cases;
    Dw a;
    a.N = 3, a.C = 37, a.H = a.W = 8, a.K = 40;
    cases.push_back({a, "4", "64,64,16", 4});
    cases.push_back({a, "2", "64,32,16", 2});
    cases.push_back({a, "4", "64,32,16", 2});  // 32 x 16 / 256 = 2 elements per thread: runs of 2
    Dw b = a;
    b.H = 16, b.W = 15, b.stride = 2, b.bias1 = false;  // 8 x 8 outputs from odd-width input
    cases.push_back({b, "4", "64,64,16", 4});
    Dw c = a;
    c.H = c.W = 12, c.kernel = 5, c.pad = 2, c.stride = 2, c.bias2 = false, c.clip = false;  // 6 x 6 outputs
    cases.push_back({c, "4", "32,64,16", 2});
    Dw e = a;
    e.H = e.W = 7;  // 7-pixel rows: no run divides them
    cases.push_back({e, "4", "64,64,16", 1});
    for (const char* pf : {"0", "1"}) {
        EnvVar prefetch("TESSERA_DWPW_PREFETCH", pf), raw("TESSERA_DWPW_RAW", "0");
        for (const Case& cs : cases) {
            EnvVar run("TESSERA_DWPW_RUN", cs.run);
            EnvTile env(cs.tile);
            LoweredKernel lk;
            EXPECT_EQ(check(cs.d, &lk), "") << cs.tile << " run " << cs.run << " prefetch " << pf << " W " << cs.d.W;
            const std::string text = printKernel(lk.kernel);
            const std::string note = "B produced in runs of " + std::to_string(cs.want) + " ";
            EXPECT_EQ(text.find(note) != std::string::npos, cs.want > 1) << cs.tile << " run " << cs.run << " W " << cs.d.W;
            EXPECT_EQ(text.find("B produced in runs") != std::string::npos, cs.want > 1) << cs.tile;
        }
    }
    // Not with the raw-tap prefetch; the rule in detail.
    {
        EnvVar prefetch("TESSERA_DWPW_PREFETCH", "1"), raw("TESSERA_DWPW_RAW", "1"), run("TESSERA_DWPW_RUN", "4");
        EnvTile env("64,64,16");
        LoweredKernel lk;
        EXPECT_EQ(check(a, &lk), "");
        EXPECT_EQ(printKernel(lk.kernel).find("B produced in runs"), std::string::npos);
    }
    // The default: runs of 4 on stride-1 rows that 4 divides, under <= 32-row unsplit tiles of
    // >= 64 columns (dwPwRunTile's); otherwise none unless asked for.
    const GpuGemmSpec::Tile t = *detail::gpuGemmTileOf(32, 64, 16);  // 4 B elements per thread
    EXPECT_EQ(detail::dwPwGemmRun(56, 1, t, 32 * 56 * 56), 4);
    EXPECT_EQ(detail::dwPwGemmRun(56, 2, t, 32 * 56 * 56), 1);  // stride 2
    EXPECT_EQ(detail::dwPwGemmRun(14, 1, t, 32 * 14 * 14), 1);  // 4 does not divide the row
    EXPECT_EQ(detail::dwPwGemmRun(56, 1, *detail::gpuGemmTileOf(32, 32, 16), 32 * 56 * 56), 1);  // 32 columns
    EXPECT_EQ(detail::dwPwGemmRun(56, 1, *detail::gpuGemmTileOf(64, 64, 16), 32 * 56 * 56), 1);  // 64 rows
    {
        EnvVar off("TESSERA_DWPW_RUN", "1");
        EXPECT_EQ(detail::dwPwGemmRun(56, 1, t, 32 * 56 * 56), 1);
    }
    EnvVar run("TESSERA_DWPW_RUN", "4");
    EXPECT_EQ(detail::dwPwGemmRun(56, 2, t, 32 * 56 * 56), 4);
    EXPECT_EQ(detail::dwPwGemmRun(14, 1, t, 32 * 14 * 14), 2);
    EXPECT_EQ(detail::dwPwGemmRun(7, 1, t, 32 * 7 * 7), 1);
    EXPECT_EQ(detail::dwPwGemmRun(56, 1, *detail::gpuGemmTileOf(32, 32, 16), 32 * 56 * 56), 2);  // 2 per thread
}

TEST(FusedConvGemm, TensorCoreMmaAgainstReference) {
    // Tile::mma (TESSERA_DWPW_MMA): the products by warp MMAs m16n8k8 read from the shared stages,
    // evaluated per lane by the interpreter (kernel_ir.h, StmtKind::Mma). 3xTF32 within the f32
    // tolerance; plain TF32 (10-bit mantissas) only within 2e-2. Tiles: plain and tall, 1-8 warps
    // along the rows, 1-2 m16n8 tiles per warp each way, BK 8-32 (1-4 MMA steps), split
    // reductions, register prefetch (with raw taps), B runs; 130 filters, 40 channels (ragged
    // steps), 3 images of 9x9 (columns straddle images and tiles); a 5x5 stride-2 chain without biases.
    Dw d;
    d.N = 3, d.C = 40, d.H = 9, d.W = 9, d.K = 130;
    struct Case {
        const char* tile;
        const char* warps;  // TESSERA_DWPW_WARPS ("" = the rule's choice)
        const char* prefetch;
        const char* raw;
        const char* layout;  // the kernel note's warp layout
    };
    const std::vector<Case> cases{
        {"160,16,16", "", "0", "0", "5 x 1 warps (of 8; the others only stage), each 2 x 2"},  // tall: 10 m16 tiles
        {"160,16,32,5", "2,2", "1", "0", "2 x 2 warps (of 8; the others only stage), each 5 x 1"},
        {"160,32,16", "", "0", "0", "2 x 4 warps, each 5 x 1"},
        {"64,32,16", "2", "0", "0", "2 x 4 warps, each 2 x 1"},
        {"64,64,8", "4", "1", "0", "4 x 2 warps, each 1 x 4"},
        {"128,16,16", "8", "0", "0", "8 x 1 warps, each 1 x 2"},
        {"32,64,16", "1", "0", "0", "1 x 8 warps, each 2 x 1"},
        {"160,16,16,0,2", "", "1", "1", "5 x 1 warps (of 8; the others only stage), each 2 x 2"},  // split, raw taps
        {"32,32,16,0,4", "2", "0", "0", "2 x 4 warps, each 1 x 1"},  // split over 4 groups
    };
    for (const Case& c : cases) {
        EnvVar mma("TESSERA_DWPW_MMA", "tf32x3"), warps("TESSERA_DWPW_WARPS", c.warps);
        EnvVar pf("TESSERA_DWPW_PREFETCH", c.prefetch), raw("TESSERA_DWPW_RAW", c.raw);
        EnvTile env(c.tile);
        LoweredKernel lk;
        EXPECT_EQ(check(d, &lk), "") << c.tile << " warps " << c.warps;
        const std::string text = printKernel(lk.kernel);
        const std::string note = "tensor cores: " + std::string(c.layout) + " m16n8 tiles";
        EXPECT_NE(text.find(note), std::string::npos) << c.tile << "\n" << text.substr(0, 1500);
        EXPECT_NE(text.find("mma.m16n8k8.tf32x3 acc["), std::string::npos) << c.tile;
        auto cm = codegen::generateCuda({&lk.kernel});
        ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
        EXPECT_NE(cm->source.source.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);
    }
    {
        // Plain TF32: one MMA per tile instead of three, coarser.
        EnvVar mma("TESSERA_DWPW_MMA", "tf32"), warps("TESSERA_DWPW_WARPS", "");
        EnvTile env("160,16,16");
        LoweredKernel lk;
        EXPECT_EQ(check(d, &lk, eval::CompareOptions{2e-2, 2e-2}), "");
        EXPECT_NE(printKernel(lk.kernel).find("mma.m16n8k8.tf32 acc["), std::string::npos);
        // ... and it is coarser than f32: the f32 tolerance fails.
        EXPECT_NE(check(d, nullptr), "");
    }
    {
        // B runs of 4 under an MMA tile; a 5x5 stride-2 chain, no biases, ragged channels.
        Dw a;
        a.N = 3, a.C = 37, a.H = a.W = 8, a.K = 40;
        EnvVar mma("TESSERA_DWPW_MMA", "tf32x3"), run("TESSERA_DWPW_RUN", "4"), pf("TESSERA_DWPW_PREFETCH", "0");
        EnvTile env("64,64,16");
        LoweredKernel lk;
        EXPECT_EQ(check(a, &lk), "");
        EXPECT_NE(printKernel(lk.kernel).find("B produced in runs of 4"), std::string::npos);
        Dw b = a;
        b.H = b.W = 12, b.kernel = 5, b.pad = 2, b.stride = 2, b.bias1 = b.bias2 = false;
        EnvTile env2("64,32,16");
        EXPECT_EQ(check(b), "");
    }
    // Validity: rows a multiple of 16 x wy, columns of 8 x (8 / wy), at most 64 accumulators.
    GpuGemmSpec::Tile t = *detail::gpuGemmTileOf(64, 64, 16);
    t.mma = true;
    for (const auto& [wy, ok] : std::vector<std::pair<std::int64_t, bool>>{{1, true}, {2, true}, {4, true}, {8, false}, {3, false}}) {
        t.wy = wy;
        EXPECT_EQ(detail::gpuGemmMmaTileValid(t), ok) << wy;  // 8: 64 rows < 16 x 8; 3: 2 warps along 64 columns, 3 x 2 <= 8 but 64 % 48
    }
    const auto chosen = detail::withMma(t, MmaPrecision::Tf32x3, 8);  // 8 x 1 invalid: 8 warps, the most along the rows
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->wy, 4);
    EXPECT_EQ(chosen->wx(), 2);
}

TEST(FusedConvGemm, TensorCoreChoiceIsExplained) {
    // The kernel header says why a tile does not use tensor cores, and how the switches were read.
    auto choice = [](std::int64_t filters, std::int64_t columns, std::int64_t channels, std::int64_t run = 0) {
        return detail::dwPwGemmTileChoice(filters, columns, channels, run);
    };
    const std::string measured = " (measured slower or not measured with MMAs on the H200; TESSERA_DWPW_MMA=tf32x3 asks for them)";
    EXPECT_EQ(choice(320, 32 * 49, 960).mmaNote, "tensor cores not used: 320 filters" + measured);
    EXPECT_EQ(choice(16, 32 * 112 * 112, 32, 112).mmaNote, "tensor cores not used: 16 filters" + measured);
    EXPECT_EQ(choice(160, 49, 960).mmaNote, "tensor cores not used: the tile splits the reduction over 4 thread groups" + measured);
    EXPECT_EQ(choice(160, 32 * 49, 960).mmaNote, "");  // used: emitGpuGemm's note describes them
    EXPECT_TRUE(choice(160, 32 * 49, 960).tile.mma);
    {
        EnvVar mma("TESSERA_DWPW_MMA", "bogus");
        const auto c = choice(320, 32 * 49, 960);
        EXPECT_FALSE(c.tile.mma);  // the rule
        EXPECT_EQ(c.mmaNote, "TESSERA_DWPW_MMA='bogus' is not tf32x3, tf32 or off: ignored; tensor cores not used: 320 filters" +
                                 measured);
    }
    {
        EnvVar mma("TESSERA_DWPW_MMA", "OFF");
        const auto c = choice(160, 32 * 49, 960);
        EXPECT_FALSE(c.tile.mma);
        EXPECT_EQ(c.mmaNote, "tensor cores off (TESSERA_DWPW_MMA=off)");
    }
    {
        EnvVar mma("TESSERA_DWPW_MMA", "On");
        EXPECT_TRUE(choice(320, 32 * 49, 960).tile.mma);
    }
    {
        // A layout under the rule's own MMAs; one that does not fit; one that does not parse.
        EnvVar warps("TESSERA_DWPW_WARPS", "2,2");
        const auto c = choice(160, 32 * 49, 960);
        EXPECT_EQ(std::to_string(c.tile.wy) + "x" + std::to_string(c.tile.wx()), "2x2");
        EXPECT_EQ(c.mmaNote, "");
    }
    {
        EnvVar warps("TESSERA_DWPW_WARPS", "4,4");
        EXPECT_EQ(choice(160, 32 * 49, 960).mmaNote, "TESSERA_DWPW_WARPS=4,4 does not fit this tile: 5 x 1 warps instead");
    }
    {
        EnvVar warps("TESSERA_DWPW_WARPS", "4,2");
        EXPECT_EQ(choice(320, 32 * 49, 960).mmaNote,
                  "tensor cores not used: 320 filters" + measured + "; TESSERA_DWPW_WARPS=4,2 has no effect");
    }
    {
        EnvVar warps("TESSERA_DWPW_WARPS", "a,b");
        EXPECT_EQ(choice(160, 32 * 49, 960).mmaNote, "TESSERA_DWPW_WARPS='a,b' is not wy or wy,wx: ignored");
    }
    {
        // 4 reduction groups of the 160 x 16 x 16 tile: with 5 of 8 warps computing, the partial sums
        // of groups 1..3 (3 x 16 x 256 floats) alone exceed 48 KiB, and no other layout fits.
        EnvVar mma("TESSERA_DWPW_MMA", "tf32x3"), split("TESSERA_DWPW_SPLIT", "4");
        const auto c = choice(160, 32 * 49, 960);
        EXPECT_FALSE(c.tile.mma);
        EXPECT_EQ(c.tile.splitK, 4);
        EXPECT_NE(c.mmaNote.find("asked for tensor cores, but no warp layout fits this tile"), std::string::npos) << c.mmaNote;
    }
    // The note reaches the kernel header.
    Dw d;
    d.N = 32, d.C = 960, d.H = d.W = 7, d.K = 320;
    Built bt = build(d);
    auto lk = lowerIt(bt);
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    EXPECT_NE(printKernel(lk->kernel).find("// tensor cores not used: 320 filters"), std::string::npos);
}

TEST(FusedConvGemm, RunTilesByDefault) {
    // dwPwRunTile: stride-1 rows that 4 divides, <= 32 filters, >= 2 blocks per SM at 64 columns.
    auto text = [](const std::optional<GpuGemmSpec::Tile>& t) {
        return t ? std::to_string(t->rows()) + "x" + std::to_string(t->cols()) + "x" + std::to_string(t->bk) : std::string("-");
    };
    EXPECT_EQ(text(detail::dwPwRunTile(16, 32 * 112 * 112, 112)), "16x128x16");
    EXPECT_EQ(text(detail::dwPwRunTile(24, 32 * 56 * 56, 56)), "32x128x16");
    EXPECT_EQ(text(detail::dwPwRunTile(32, 32 * 28 * 28, 28)), "32x64x16");  // 196 blocks of 128 columns
    EXPECT_EQ(text(detail::dwPwRunTile(32, 28 * 28, 28)), "-");             // batch 1: 13 blocks of 64
    EXPECT_EQ(text(detail::dwPwRunTile(64, 32 * 14 * 14, 14)), "-");
    EXPECT_EQ(text(detail::dwPwRunTile(24, 32 * 56 * 56, 0)), "32x128x16");  // stride 2: no runs, 784 blocks
    EXPECT_EQ(text(detail::dwPwRunTile(32, 32 * 28 * 28, 0)), "-");          // stride 2, 196 blocks of 128
    EXPECT_EQ(text(detail::dwPwRunTile(64, 32 * 56 * 56, 56)), "-");  // 64 filters
    // Through lowering: a 56x56 stride-1 chain of 24 filters at batch 32 gets runs of 4 unsplit.
    const GpuGemmSpec::Tile t = detail::dwPwGemmTile(24, 32 * 56 * 56, 144, 56);
    EXPECT_EQ(t.splitK, 1);
    EXPECT_EQ(detail::dwPwGemmRun(56, 1, t, 32 * 56 * 56), 4);
}

TEST(FusedConvGemm, UsedForDwPwOnCudaOnly) {
    detail::ConvChainSpec spec;
    EXPECT_TRUE(detail::useDwPwGemm(cudaOptions(), spec));
    EXPECT_FALSE(detail::useDwPwGemm(LowerOptions{}, spec));
    spec.kind = schedule::FusionKind::PwDw;
    EXPECT_FALSE(detail::useDwPwGemm(cudaOptions(), spec));
    spec.kind = schedule::FusionKind::DwPw;
    EnvTile off("off");
    EXPECT_FALSE(detail::useDwPwGemm(cudaOptions(), spec));
}

TEST(FusedConvGemm, LargeKAgainstReference) {
    Dw d;
    d.N = 2, d.C = 24, d.H = 9, d.W = 9, d.K = 64;
    EXPECT_EQ(check(d), "");
    d.K = 96, d.stride = 2, d.bias1 = false;
    EXPECT_EQ(check(d), "");
}

TEST(FusedConvGemm, RaggedSizesAndTilesAgainstReference) {
    // Ragged everything: 33 channels (not a multiple of BK), 3 images of 7x7 -> 4x4 (stride 2,
    // columns straddle images and tiles), 130 filters (> 128: 64-row tiles, the last ragged).
    Dw d;
    d.N = 3, d.C = 33, d.H = 7, d.W = 7, d.K = 130, d.stride = 2, d.bias2 = false;
    EXPECT_EQ(check(d), "");
    d.K = 20, d.stride = 1, d.clip = false, d.bias2 = true;
    for (const char* tile : {"16,16,16", "32,64,8", "16,256,16", "64,32,32", "128,128,8"}) {
        EnvTile env(tile);
        LoweredKernel lk;
        EXPECT_EQ(check(d, &lk), "") << tile;
        EXPECT_NE(lk.kernel.notes.back().find("tile " + std::string(tile).substr(0, std::string(tile).find(',')) + " filters"),
                  std::string::npos)
            << lk.kernel.notes.back();
    }
    // 5x5 window, pad 2, no bias anywhere.
    d.kernel = 5, d.pad = 2, d.bias1 = d.bias2 = false, d.K = 17, d.H = 6, d.W = 11;
    EXPECT_EQ(check(d), "");
}

TEST(FusedConvGemm, RegisterPrefetchAgainstReference) {
    // Several steps (40 channels: 3 steps of 16, the last ragged), 2 steps of 32, one step.
    ::setenv("TESSERA_DWPW_PREFETCH", "1", 1);
    Dw d;
    d.N = 3, d.C = 40, d.H = 7, d.W = 7, d.K = 20, d.stride = 2;
    LoweredKernel lk;
    EXPECT_EQ(check(d, &lk), "");
    EXPECT_NE(printKernel(lk.kernel).find("the next step prefetched into registers"), std::string::npos);
    d.C = 64, d.K = 130, d.stride = 1;
    {
        EnvTile env("64,16,32");
        EXPECT_EQ(check(d), "");
    }
    d.C = 9;
    EXPECT_EQ(check(d), "");
    ::unsetenv("TESSERA_DWPW_PREFETCH");
    {
        EnvVar sp("TESSERA_DWPW_SPLIT", "1");  // (this small chain gets a split by default)
        EXPECT_EQ(check(d, &lk), "");
        EXPECT_EQ(printKernel(lk.kernel).find("prefetched"), std::string::npos);
    }
    // Default: prefetch from 384 channels on, and with a split; the raw taps with a split.
    EXPECT_FALSE(detail::dwPwGemmPrefetch(192));
    EXPECT_TRUE(detail::dwPwGemmPrefetch(384));
    EXPECT_TRUE(detail::dwPwGemmPrefetch(192, 2));
    EXPECT_FALSE(detail::dwPwGemmRawPrefetch(960));
    EXPECT_TRUE(detail::dwPwGemmRawPrefetch(192, 4));
    ::setenv("TESSERA_DWPW_PREFETCH", "0", 1);
    EXPECT_FALSE(detail::dwPwGemmPrefetch(960));
    ::unsetenv("TESSERA_DWPW_PREFETCH");
}

TEST(FusedConvGemm, KernelStructure) {
    Dw d;
    d.N = 2, d.C = 24, d.H = 9, d.W = 9, d.K = 64;
    LoweredKernel lk;
    ASSERT_EQ(check(d, &lk), "");
    std::vector<std::string> names;
    std::vector<std::vector<std::int64_t>> shapes;
    for (int p : lk.kernel.params) {
        names.push_back(lk.kernel.buffers[static_cast<std::size_t>(p)].name);
        shapes.push_back(lk.kernel.buffers[static_cast<std::size_t>(p)].shape);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"X", "dw_W", "dw_B", "pw_W", "pw_B", "Y"}));
    EXPECT_EQ(shapes, (std::vector<std::vector<std::int64_t>>{{2, 24, 81}, {24, 9}, {24}, {64, 24}, {64, 1}, {2, 64, 81}}));
    EXPECT_EQ(lk.kernel.sourceOps, (std::vector<std::string>{"dw", "relu6", "pw"}));
    // 64 filters x 162 columns: 64-row tiles of 16 columns (4 results per thread), 11 blocks,
    // so the reduction is split over 4 groups of 256 threads with a stage each (BK 16).
    EXPECT_EQ(lk.kernel.mappings, (std::vector<std::string>{"grid = spatial(1,11)", "block = repeat(1,1).spatial(32,8).repeat(2,2)"}));
    auto m = codegen::generateCuda({&lk.kernel});
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    EXPECT_EQ(m->launches[0].gridX, 11);
    EXPECT_EQ(m->launches[0].blockX, 1024);
    EXPECT_EQ(m->launches[0].sharedBytes, 4 * 4 * 16 * (64 + 4 + 16 + 4));
}

TEST(FusedConvGemm, TilesForMobileNetV2Blocks) {
    // (C, H, stride, K) of MobileNetV2's DW -> PW blocks at batch 1 and 32: rows x cols x bk
    // (/ split groups when split; "mma wy x wx" with tensor-core MMAs: batch 32's unsplit tiles of
    // 24..160 filters, the 96-filter tall tiles then 16 columns wide).
    struct Case {
        std::int64_t n, c, h, s, k;
        const char* want;
    };
    const std::vector<Case> cases = {
        {32, 32, 112, 1, 16, "16x128x16"},           {32, 144, 56, 1, 24, "32x128x16 mma 2x4"},
        {32, 192, 28, 1, 32, "32x64x16 mma 2x4"},    {32, 96, 112, 2, 24, "32x128x16 mma 2x4"},
        {32, 144, 56, 2, 32, "32x32x16 mma 2x4"},    {32, 192, 28, 2, 64, "64x16x16/2"},
        {32, 384, 14, 1, 64, "64x16x32 mma 4x2"},    {32, 384, 14, 1, 96, "96x16x32 mma 6x1"},
        {32, 576, 14, 1, 96, "96x16x32 mma 6x1"},    {32, 960, 7, 1, 160, "160x16x32 mma 5x1"},
        {32, 960, 7, 1, 320, "320x16x32"},           {32, 576, 14, 2, 160, "160x16x32 mma 5x1"},
        {1, 32, 112, 1, 16, "16x32x16/2"},           {1, 96, 112, 2, 24, "32x16x16/2"},
        {1, 960, 7, 1, 160, "64x16x32/4"},           {1, 576, 14, 1, 96, "128x16x16/4"},
        {1, 144, 56, 2, 32, "32x16x16/4"},           {1, 144, 56, 1, 24, "32x16x16/2"},
        {1, 192, 28, 1, 32, "32x16x16/4"},                    {1, 192, 28, 2, 64, "64x16x16/4"},
        {1, 384, 14, 1, 64, "64x16x32/4"},                    {1, 384, 14, 1, 96, "128x16x16/4"},
        {1, 576, 14, 2, 160, "64x16x32/4"},                   {1, 960, 7, 1, 320, "64x16x32/4"},
    };
    for (const Case& c : cases) {
        const std::int64_t ho = (c.h + 2 - 3) / c.s + 1;
        const GpuGemmSpec::Tile t = detail::dwPwGemmTile(c.k, c.n * ho * ho, c.c, c.s == 1 ? ho : 0);
        EXPECT_EQ(std::to_string(t.rows()) + "x" + std::to_string(t.cols()) + "x" + std::to_string(t.bk) +
                      (t.splitK > 1 ? "/" + std::to_string(t.splitK) : std::string()) +
                      (t.mma ? " mma " + std::to_string(t.wy) + "x" + std::to_string(t.wx()) : std::string()),
                  c.want)
            << "b" << c.n << " c" << c.c << " h" << c.h << " k" << c.k;
    }
    // Rows x columns per thread of the 16-column tall tiles: 5 x 2 for 160 filters under 576
    // channels, 10 x 1 under 960; 10 x 2 for 320 filters.
    auto perThread = [](const GpuGemmSpec::Tile& t) { return std::to_string(t.rm) + "x" + std::to_string(t.rn); };
    EXPECT_EQ(perThread(detail::dwPwGemmTile(160, 32 * 49, 576)), "5x2");
    EXPECT_EQ(perThread(detail::dwPwGemmTile(160, 32 * 49, 960)), "10x1");
    EXPECT_EQ(perThread(detail::dwPwGemmTile(320, 32 * 49, 960)), "10x2");
}

TEST(FusedConvGemm, CudaSourceCompilesForSm90WithoutSpills) {
    auto info = runtime::cuda::nvrtcInfo();
    if (!info.ok()) GTEST_SKIP() << "NVRTC is not loadable: " << info.diagnostics().formatAll();
    struct Case {
        Dw d;
        const char* what;
    };
    std::vector<Case> cases(8);
    cases[0].d.N = 32, cases[0].d.C = 32, cases[0].d.H = cases[0].d.W = 112, cases[0].d.K = 16;
    cases[0].what = "b32 32x112x112 -> 16";
    cases[1].d.N = 32, cases[1].d.C = 960, cases[1].d.H = cases[1].d.W = 7, cases[1].d.K = 160;
    cases[1].what = "b32 960x7x7 -> 160";
    cases[2].d.N = 32, cases[2].d.C = 96, cases[2].d.H = cases[2].d.W = 112, cases[2].d.K = 24, cases[2].d.stride = 2;
    cases[2].what = "b32 96x112x112 s2 -> 24 (register prefetch)";
    // The tall tiles with prefetch (the default from 384 channels): 320 x 16 x 32, 96 x 32 x 32.
    cases[3].d.N = 32, cases[3].d.C = 960, cases[3].d.H = cases[3].d.W = 7, cases[3].d.K = 320;
    cases[3].what = "b32 960x7x7 -> 320 (tall tile)";
    cases[4].d.N = 32, cases[4].d.C = 576, cases[4].d.H = cases[4].d.W = 14, cases[4].d.K = 96;
    cases[4].what = "b32 576x14x14 -> 96 (tall tile)";
    // Batch 1's split tiles: 4 groups of 256 threads (64 registers at most), the raw taps prefetched.
    cases[5].d.N = 1, cases[5].d.C = 960, cases[5].d.H = cases[5].d.W = 7, cases[5].d.K = 320;
    cases[5].what = "b1 960x7x7 -> 320 (split over 4 groups, raw taps)";
    // B runs (GpuGemmSpec::bRun): 4 pixels of 56-pixel rows per thread under a 32 x 64 x 16 tile;
    // 2 of 14-pixel rows under the 96-filter tall tile with register prefetch.
    cases[6].d.N = 32, cases[6].d.C = 144, cases[6].d.H = cases[6].d.W = 56, cases[6].d.K = 24;
    cases[6].what = "b32 144x56x56 -> 24 (runs of 4, 32x64x16)";
    cases[7].d.N = 32, cases[7].d.C = 576, cases[7].d.H = cases[7].d.W = 14, cases[7].d.K = 96;
    cases[7].what = "b32 576x14x14 -> 96 (tall tile, runs of 2)";
    for (const Case& c : cases) {
        // The third case with register prefetch (GpuGemmSpec::prefetch).
        if (&c == &cases[2]) ::setenv("TESSERA_DWPW_PREFETCH", "1", 1);
        std::optional<EnvVar> run;
        std::optional<EnvTile> tile;
        if (&c == &cases[6]) {
            run.emplace("TESSERA_DWPW_RUN", "4");
            tile.emplace("32,64,16");
        }
        if (&c == &cases[7]) run.emplace("TESSERA_DWPW_RUN", "2");
        Built bt = build(c.d);
        auto lk = lowerIt(bt);
        ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
        if (run) {
            EXPECT_NE(printKernel(lk->kernel).find("B produced in runs"), std::string::npos) << c.what;
        }
        auto m = codegen::generateCuda({&lk->kernel});
        ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
        if (const char* dump = std::getenv("TESSERA_FUSED_GEMM_DUMP"))  // by hand
            std::ofstream(std::string(dump) + "." + std::to_string(&c - cases.data()) + ".cu") << m->source.source;
        const NvrtcSm90 r = compileForSm90(m->source.source, "fused-gemm");
        ::unsetenv("TESSERA_DWPW_PREFETCH");
        ASSERT_TRUE(r.ok) << c.what << ": " << r.error;
        EXPECT_NE(r.ptx.find("ld.shared"), std::string::npos) << c.what;
        EXPECT_NE(r.ptx.find("bar.sync"), std::string::npos) << c.what;
        EXPECT_EQ(r.ptx.find("st.local"), std::string::npos) << c.what << ": accumulators in local memory";
        EXPECT_EQ(r.spillStoreBytes, 0) << c.what << "\n" << r.log;
        std::cout << "[ ptxas    ] fused dw-pw GEMM form " << c.what << ": Used " << r.registers << " registers\n";
    }
}

TEST(FusedConvGemm, TensorCoreCudaSourceCompilesForSm90WithoutSpills) {
    // Tile::mma kernels (3xTF32) of MobileNetV2's wide batch-32 blocks: mma.sync in the PTX, the
    // accumulators in registers, no spills.
    auto info = runtime::cuda::nvrtcInfo();
    if (!info.ok()) GTEST_SKIP() << "NVRTC is not loadable: " << info.diagnostics().formatAll();
    struct Case {
        std::int64_t C, HW, K;
        const char* tile;
        const char* warps;
    };
    const std::vector<Case> cases{Case{960, 7, 320, "320,16,32,10", "4"}, Case{960, 7, 320, "320,32,16", "4"},
                                  Case{576, 14, 96, "96,32,32", "2"}, Case{960, 7, 160, "160,16,32", ""}};
    for (const Case& c : cases) {
        EnvVar mma("TESSERA_DWPW_MMA", "tf32x3"), warps("TESSERA_DWPW_WARPS", c.warps);
        EnvTile tile(c.tile);
        Dw d;
        d.N = 32, d.C = c.C, d.H = d.W = c.HW, d.K = c.K;
        Built bt = build(d);
        auto lk = lowerIt(bt);
        ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
        ASSERT_NE(printKernel(lk->kernel).find("tensor cores:"), std::string::npos) << c.tile;
        auto m = codegen::generateCuda({&lk->kernel});
        ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
        if (const char* dump = std::getenv("TESSERA_FUSED_GEMM_DUMP"))  // by hand
            std::ofstream(std::string(dump) + ".mma." + c.tile + ".cu") << m->source.source;
        const NvrtcSm90 r = compileForSm90(m->source.source, "fused-gemm");
        ASSERT_TRUE(r.ok) << c.tile << ": " << r.error;
        EXPECT_NE(r.ptx.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos) << c.tile;
        EXPECT_EQ(r.ptx.find("st.local"), std::string::npos) << c.tile << ": accumulators in local memory";
        EXPECT_EQ(r.spillStoreBytes, 0) << c.tile << "\n" << r.log;
        std::cout << "[ ptxas    ] fused dw-pw GEMM form, tensor cores, " << c.tile << ": Used " << r.registers << " registers\n";
        if (&c == &cases[0]) {
            // Before sm_80 (no TF32 MMA) the same source compiles to f32 FMAs.
            const NvrtcSm90 old = compileForSm90(m->source.source, "fused-gemm", "sm_75");
            ASSERT_TRUE(old.ok) << old.error;
            EXPECT_EQ(old.ptx.find("mma.sync"), std::string::npos);
            EXPECT_NE(old.ptx.find("fma.rn.f32"), std::string::npos);
        }
        if (std::getenv("TESSERA_FUSED_GEMM_DUMP")) {
            auto count = [&](const std::string& what) {
                std::size_t n = 0;
                for (std::size_t at = r.ptx.find(what); at != std::string::npos; at = r.ptx.find(what, at + 1)) ++n;
                return n;
            };
            std::cout << "  ptx: " << count("ld.shared") << " ld.shared, " << count("mma.sync") << " mma.sync, "
                      << count("cvt.rna.tf32") << " cvt.rna.tf32\n";
        }
    }
}

}  // namespace
}  // namespace tessera::lower::test
