// Fused convolution chains (core/lower/cuda/lower_fused_conv.cpp, lower_fused.h lowerConvChain): small
// dw-pw / pw-dw / pw-pw chains built in code, lowered for the CPU and for CUDA, run with the
// kernel-IR interpreter and compared with the reference interpreter's unfused graph; parameter
// order, the structure of the CUDA kernel (Blocks/Threads loops, shared tile, barriers, output
// stored only), errors; the C++ of one kernel compiled and run with the host compiler, and where
// NVRTC loads the CUDA C of one kernel compiled for sm_90.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "codegen/compile_util.h"
#include "core/codegen/cpp/cpp_codegen.h"
#include "core/codegen/cuda/cuda_codegen.h"
#include "core/eval/compare.h"
#include "core/eval/reference_interpreter.h"
#include "core/ir/shape_inference.h"
#include "core/lower/detail/lower_fused.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/test_ir_helpers.h"
#include "lower/nvrtc_sm90_util.h"
#include "lower/test_lower_basic_util.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::lower::test {
namespace {

using ir::Attribute;
using schedule::FusionKind;

/// Selects the tile kernel for CUDA dw-pw chains (instead of the GEMM form,
/// lower_fused_conv_gpu.h) while alive.
struct TileKernelForDwPw {
    TileKernelForDwPw() { ::setenv("TESSERA_DWPW_GEMM", "off", 1); }
    ~TileKernelForDwPw() { ::unsetenv("TESSERA_DWPW_GEMM"); }
};

Attribute I(std::int64_t v) { return Attribute::ofInt(v); }
Attribute Is(std::vector<std::int64_t> v) { return Attribute::ofInts(std::move(v)); }

/// One chain: X [N, C, H, W] -> first conv -> optional Clip(0, 6) -> second conv -> Y.
struct ChainDesc {
    FusionKind kind = FusionKind::DwPw;
    std::int64_t N = 1, C = 4, H = 7, W = 7;
    std::int64_t Cm = 0;  ///< pointwise first: its output channels (dw first: = C)
    std::int64_t K = 8;   ///< pointwise second: its output channels (dw second: = Cm)
    std::int64_t kernel = 3, stride = 1, pad = 1;  ///< of the depthwise conv
    bool bias1 = true, bias2 = true, clip = false;
};

struct Built {
    ir::Graph g;
    detail::ConvChainSpec spec;
};

Built build(const ChainDesc& d) {
    ir::test::Builder b;
    b.input("X", "f32[" + std::to_string(d.N) + "," + std::to_string(d.C) + "," + std::to_string(d.H) + "," +
                     std::to_string(d.W) + "]");
    const bool firstDw = d.kind == FusionKind::DwPw, secondDw = d.kind == FusionKind::PwDw;
    const std::int64_t Cm = firstDw ? d.C : d.Cm;
    const std::int64_t K = secondDw ? Cm : d.K;
    std::uint32_t seed = 11;
    auto conv = [&](const std::string& name, const std::string& in, const std::string& out, std::int64_t ci,
                    std::int64_t co, bool dw, bool bias) {
        const std::int64_t kk = dw ? d.kernel : 1;
        b.init(name + "_W", makeData(ir::DType::F32, {co, dw ? 1 : ci, kk, kk}, seed++));
        std::vector<std::string> ins{in, name + "_W"};
        if (bias) {
            b.init(name + "_B", makeData(ir::DType::F32, {co}, seed++));
            ins.push_back(name + "_B");
        }
        ir::test::Attrs attrs{{"kernel_shape", Is({kk, kk})}};
        if (dw) {
            attrs.push_back({"group", I(ci)});
            attrs.push_back({"strides", Is({d.stride, d.stride})});
            attrs.push_back({"pads", Is({d.pad, d.pad, d.pad, d.pad})});
        }
        return b.node("Conv", name, ins, {out}, attrs);
    };
    Built r;
    r.spec.kind = d.kind;
    r.spec.first = conv("conv1", "X", "T", d.C, Cm, firstDw, d.bias1);
    std::string mid = "T";
    if (d.clip) {
        b.init("lo", ir::TensorData::fromFloats({0.0f}, {}));
        b.init("hi", ir::TensorData::fromFloats({6.0f}, {}));
        r.spec.between.push_back(b.node("Clip", "relu6", {"T", "lo", "hi"}, {"T6"}));
        mid = "T6";
    }
    r.spec.second = conv("conv2", mid, "Y", Cm, K, secondDw, d.bias2);
    b.output("Y");
    auto si = ir::inferShapes(b.g, "test");
    EXPECT_FALSE(si.diagnostics.hasErrors()) << si.diagnostics.formatAll();
    r.g = std::move(b.g);
    return r;
}

/// The input tensors of a lowered kernel: runtime inputs from the reference run, initializers'
/// data from the graph.
std::vector<ir::TensorData> kernelInputs(const ir::Graph& g, const LoweredKernel& lk, const eval::ReferenceValues& ref) {
    std::vector<ir::TensorData> r;
    for (ir::ValueId v : lk.inputs) {
        if (const ir::TensorData* t = ref.value(v)) r.push_back(*t);
        else if (g.value(v).data) r.push_back(*g.value(v).data);
        else ADD_FAILURE() << "no data for " << g.value(v).name;
    }
    return r;
}

/// Lowers the chain for `target` (tile as given), runs it with the interpreter and compares with
/// the reference interpreter. "" when it matches; *out receives the kernel.
std::string check(const ChainDesc& d, Target target, schedule::FusionTile tile = {}, LoweredKernel* out = nullptr) {
    Built bt = build(d);
    bt.spec.tile = tile;
    LowerOptions lo;
    lo.target = target;
    auto lk = detail::lowerConvChain(bt.g, bt.spec, lo, "group 'g0'");
    if (!lk) return "lowering: " + lk.diagnostics().formatAll();
    if (out) *out = *lk;
    const auto inputs = makeInputs(bt.g, 3);
    auto ref = eval::evaluateAll(bt.g, inputs, {});
    if (!ref) return "reference: " + ref.diagnostics().formatAll();
    std::vector<ir::TensorData> storage = kernelInputs(bt.g, *lk, *ref);
    storage.emplace_back();
    std::vector<ir::TensorData*> params;
    for (auto& t : storage) params.push_back(&t);
    auto st = evalKernel(lk->kernel, params);
    if (!st) return "eval: " + st.diagnostics().formatAll();
    const ir::TensorData* want = ref->value(lk->outputs[0]);
    if (!want) return "no reference output";
    eval::CompareOptions co{1e-5, 1e-4};
    storage.back().dims = want->dims;  // CUDA dw-pw (GEMM form) declares Y as its view [N, K, H*W]
    auto cmp = eval::compareTensors(storage.back(), *want, co);
    return cmp.ok ? std::string() : cmp.summary() + "\n" + printKernel(lk->kernel);
}

std::string bothTargets(const ChainDesc& d, schedule::FusionTile tile = {}) {
    std::string r;
    const std::string cpu = check(d, Target::Cpu, tile);
    if (!cpu.empty()) r += "[cpu] " + cpu + "\n";
    const std::string gpu = check(d, Target::Cuda, tile);
    if (!gpu.empty()) r += "[cuda] " + gpu + "\n";
    return r;
}

TEST(FusedConv, DwPwStride1AgainstReference) {
    ChainDesc d;
    d.N = 2, d.C = 6, d.H = 7, d.W = 7, d.K = 5;
    EXPECT_EQ(bothTargets(d), "");
    d.bias1 = false;
    EXPECT_EQ(bothTargets(d), "");
    d.bias2 = false;
    EXPECT_EQ(bothTargets(d), "");
}

TEST(FusedConv, DwPwStride2OddSizesAgainstReference) {
    ChainDesc d;
    d.N = 1, d.C = 5, d.H = 13, d.W = 13, d.K = 6, d.stride = 2;
    EXPECT_EQ(bothTargets(d), "");
    d.H = 12, d.W = 9, d.bias1 = false;
    EXPECT_EQ(bothTargets(d), "");
    // 5x5 window, pad 2, stride 1 on a 13x13 map with a 4x8 tile (edge tiles on both dims).
    d.kernel = 5, d.pad = 2, d.stride = 1, d.H = 13, d.W = 13;
    EXPECT_EQ(bothTargets(d, {4, 8, 0, 0}), "");
}

TEST(FusedConv, DwPwWithClipBetweenAgainstReference) {
    ChainDesc d;
    d.N = 2, d.C = 7, d.H = 9, d.W = 11, d.K = 12, d.clip = true;
    EXPECT_EQ(bothTargets(d), "");
    d.stride = 2;
    EXPECT_EQ(bothTargets(d), "");
}

TEST(FusedConv, ChannelChunksAndFilterChunksWithRaggedEnds) {
    // 40 intermediate channels in chunks of 16 (ragged), 20 filters in chunks of 8 (ragged).
    ChainDesc d;
    d.N = 1, d.C = 40, d.H = 6, d.W = 6, d.K = 20, d.clip = true;
    EXPECT_EQ(bothTargets(d, {3, 4, 16, 8}), "");
}

TEST(FusedConv, ThreadsNotAMultipleOfTheTile) {
    // 3 filters x 256 pixels: 384 threads of 1 filter x 2 pixels, so the tile fill spreads
    // (channel, pixel) items over the threads instead of keeping one pixel per thread.
    TileKernelForDwPw tileKernel;
    ChainDesc d;
    d.N = 1, d.C = 3, d.H = 16, d.W = 16, d.K = 3, d.clip = true;
    LoweredKernel lk;
    EXPECT_EQ(check(d, Target::Cuda, {16, 16, 0, 0}, &lk), "");
    EXPECT_EQ(lk.kernel.mappings.back(), "block = spatial(3,128) * repeat(1,2)");
}

TEST(FusedConv, PwDwAgainstReference) {
    ChainDesc d;
    d.kind = FusionKind::PwDw;
    d.N = 2, d.C = 5, d.Cm = 6, d.H = 7, d.W = 7;
    EXPECT_EQ(bothTargets(d), "");
    d.clip = true, d.stride = 2, d.H = 13, d.W = 13, d.bias1 = false;
    EXPECT_EQ(bothTargets(d), "");
    d.bias2 = false, d.stride = 1;
    EXPECT_EQ(bothTargets(d, {4, 4, 4, 0}), "");
}

TEST(FusedConv, PwPwAgainstReference) {
    ChainDesc d;
    d.kind = FusionKind::PwPw;
    d.N = 2, d.C = 5, d.Cm = 9, d.K = 7, d.H = 5, d.W = 7, d.clip = true;
    EXPECT_EQ(bothTargets(d), "");
    d.bias1 = d.bias2 = false;
    EXPECT_EQ(bothTargets(d, {2, 3, 4, 4}), "");
}

TEST(FusedConv, ParamsOrderSourceOpsAndMappings) {
    TileKernelForDwPw tileKernel;
    for (bool bias : {true, false}) {
        ChainDesc d;
        d.clip = true, d.bias1 = bias, d.bias2 = bias;
        Built bt = build(d);
        LowerOptions lo;
        lo.target = Target::Cuda;
        auto lk = detail::lowerConvChain(bt.g, bt.spec, lo, "group 'g0'");
        ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
        std::vector<std::string> names;
        for (int p : lk->kernel.params) names.push_back(lk->kernel.buffers[static_cast<std::size_t>(p)].name);
        const std::vector<std::string> want = bias ? std::vector<std::string>{"X", "conv1_W", "conv1_B", "conv2_W", "conv2_B", "Y"}
                                                   : std::vector<std::string>{"X", "conv1_W", "conv2_W", "Y"};
        EXPECT_EQ(names, want);
        EXPECT_EQ(lk->inputs.size(), want.size() - 1);
        ASSERT_EQ(lk->outputs.size(), 1u);
        EXPECT_EQ(bt.g.value(lk->outputs[0]).name, "Y");
        EXPECT_EQ(lk->kernel.sourceOps, (std::vector<std::string>{"conv1", "relu6", "conv2"}));
        EXPECT_EQ(lk->kernel.opType, "Conv");
        // 1 x 7x7 -> one 7x7 tile (64 padded pixels), 8 filters; too few blocks -> filters and
        // rows shrunk.
        ASSERT_EQ(lk->kernel.mappings.size(), 2u);
        EXPECT_EQ(lk->kernel.mappings[0].rfind("grid = spatial(1,", 0), 0u) << lk->kernel.mappings[0];
        EXPECT_EQ(lk->kernel.mappings[1].rfind("block = spatial(", 0), 0u) << lk->kernel.mappings[1];
    }
}

/// True when some expression or statement of `s` loads / stores buffer `buf`.
bool touches(const Stmt& s, int buf, bool stores) {
    std::function<bool(const Expr&)> inExpr = [&](const Expr& e) -> bool {
        if (!e) return false;
        if (!stores && e->kind == ExprKind::Load && e->buffer == buf) return true;
        for (const Expr& a : e->args)
            if (inExpr(a)) return true;
        return false;
    };
    std::function<bool(const Stmt&)> rec = [&](const Stmt& st) -> bool {
        if (!st) return false;
        if (stores && st->kind == StmtKind::Store && st->buffer == buf) return true;
        if (inExpr(st->value) || inExpr(st->extent)) return true;
        for (const Expr& i : st->indices)
            if (inExpr(i)) return true;
        for (const Stmt& b : st->body)
            if (rec(b)) return true;
        return rec(st->elseBody);
    };
    return rec(s);
}

TEST(FusedConv, CudaKernelStructureForMobileNetShapes) {
    // MobileNetV2 block 1: dw 3x3 over 32 x 112 x 112, ReLU6, pw 32 -> 16, batch 32 (not run);
    // the tile kernel (the GEMM form: fused_conv_gemm_test.cpp).
    TileKernelForDwPw tileKernel;
    ChainDesc d;
    d.N = 32, d.C = 32, d.H = 112, d.W = 112, d.K = 16, d.clip = true;
    Built bt = build(d);
    LowerOptions lo;
    lo.target = Target::Cuda;
    auto lk = detail::lowerConvChain(bt.g, bt.spec, lo, "group 'g0'");
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    const Kernel& k = lk->kernel;
    // 8x16 tiles: 14 x 7 per image, all 16 filters in one chunk; 128 pixels x 16 filters over 256
    // threads of 2 x 4.
    EXPECT_EQ(k.mappings, (std::vector<std::string>{"grid = spatial(32,14,7,1)", "block = spatial(4,64) * repeat(4,2)"}));
    const int Y = k.params.back();
    EXPECT_TRUE(touches(k.body, Y, true));
    EXPECT_FALSE(touches(k.body, Y, false)) << "the output is loaded";
    const std::string text = printKernel(k);
    EXPECT_NE(text.find("barrier"), std::string::npos);
    auto m = codegen::generateCuda({&k});
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    ASSERT_EQ(m->launches.size(), 1u);
    EXPECT_EQ(m->launches[0].gridX, 32 * 14 * 7);
    EXPECT_EQ(m->launches[0].blockX, 256);
    EXPECT_EQ(m->launches[0].sharedBytes, 4 * (32 * 128 + 32 * 16));

    // Batch 1, 7x7, 960 -> 320 (block 16's last layers): filters split until there are enough blocks.
    d = ChainDesc{};
    d.N = 1, d.C = 960, d.H = 7, d.W = 7, d.K = 320, d.clip = true;
    bt = build(d);
    lk = detail::lowerConvChain(bt.g, bt.spec, lo, "group 'g0'");
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    m = codegen::generateCuda({&lk->kernel});
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    EXPECT_GE(m->launches[0].gridX, 264) << lk->kernel.mappings[0];
}

TEST(FusedConv, Errors) {
    ChainDesc d;
    d.kind = FusionKind::PwDw;  // but the graph is dw-pw
    d.Cm = 4;
    Built bt = build(ChainDesc{});
    bt.spec.kind = FusionKind::PwDw;
    auto lk = detail::lowerConvChain(bt.g, bt.spec, {}, "group 'g0'");
    ASSERT_FALSE(lk.ok());
    EXPECT_NE(lk.diagnostics().formatAll().find("'conv1' is not a pointwise"), std::string::npos)
        << lk.diagnostics().formatAll();
    EXPECT_NE(lk.diagnostics().formatAll().find("group 'g0'"), std::string::npos);
    bt.spec.kind = FusionKind::Single;
    EXPECT_FALSE(detail::lowerConvChain(bt.g, bt.spec, {}, "group 'g0'").ok());
    // Skipping the Clip: the second conv does not read the first's output.
    ChainDesc c;
    c.clip = true;
    bt = build(c);
    bt.spec.between.clear();
    lk = detail::lowerConvChain(bt.g, bt.spec, {}, "group 'g0'");
    ASSERT_FALSE(lk.ok());
    EXPECT_NE(lk.diagnostics().formatAll().find("does not consume"), std::string::npos) << lk.diagnostics().formatAll();
}

TEST(FusedConv, HostCompiledCppMatchesInterpreter) {
    if (!tessera::test::haveCompiler()) GTEST_SKIP() << "no C++ compiler (c++) on PATH";
    ChainDesc d;
    d.N = 2, d.C = 12, d.H = 13, d.W = 13, d.K = 10, d.clip = true, d.stride = 2;
    Built bt = build(d);
    auto lk = detail::lowerConvChain(bt.g, bt.spec, {}, "group 'g0'");
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    auto src = codegen::generateCpp({&lk->kernel});
    tessera::test::CompiledModule mod(src.source, "-Wall -Wextra");
    ASSERT_TRUE(mod.ok()) << mod.log();
    auto fn = mod.entry(src.entryPoints[0]);
    ASSERT_NE(fn, nullptr);
    const auto inputs = makeInputs(bt.g, 3);
    auto ref = eval::evaluateAll(bt.g, inputs, {});
    ASSERT_TRUE(ref.ok()) << ref.diagnostics().formatAll();
    std::vector<ir::TensorData> storage = kernelInputs(bt.g, *lk, *ref);
    const BufferDecl& yb = lk->kernel.buffers[static_cast<std::size_t>(lk->kernel.params.back())];
    ir::TensorData y;
    y.dtype = yb.dtype;
    y.dims = yb.shape;
    y.bytes.assign(static_cast<std::size_t>(yb.bytes()), 0);
    storage.push_back(y);
    std::vector<void*> args;
    for (auto& t : storage) args.push_back(t.bytes.data());
    fn(args.data());
    auto cmp = eval::compareTensors(storage.back(), *ref->value(lk->outputs[0]), eval::CompareOptions{1e-5, 1e-4});
    EXPECT_TRUE(cmp.ok) << cmp.summary();
}

TEST(FusedConv, CudaSourceCompilesForSm90) {
    auto info = runtime::cuda::nvrtcInfo();
    if (!info.ok()) GTEST_SKIP() << "NVRTC is not loadable: " << info.diagnostics().formatAll();
    TileKernelForDwPw tileKernel;  // the GEMM form: fused_conv_gemm_test.cpp
    ChainDesc d;
    d.N = 32, d.C = 96, d.H = 112, d.W = 112, d.K = 24, d.clip = true, d.stride = 2;
    Built bt = build(d);
    LowerOptions lo;
    lo.target = Target::Cuda;
    auto lk = detail::lowerConvChain(bt.g, bt.spec, lo, "group 'g0'");
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    auto m = codegen::generateCuda({&lk->kernel});
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    if (const char* dump = std::getenv("TESSERA_FUSED_CONV_DUMP")) std::ofstream(dump) << m->source.source;  // by hand
    const NvrtcSm90 r = compileForSm90(m->source.source, "fused-conv");
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_NE(r.ptx.find("ld.shared"), std::string::npos);
    EXPECT_NE(r.ptx.find("bar.sync"), std::string::npos);
    EXPECT_EQ(r.ptx.find("st.local"), std::string::npos) << "accumulators in local memory";
    if (r.registers >= 0) {
        EXPECT_LE(r.registers, 128) << r.log;
        std::cout << "[ ptxas    ] fused dw-pw 32x96x112x112 s2 -> 24: Used " << r.registers << " registers\n";
    }
}

}  // namespace
}  // namespace tessera::lower::test
