// CPU fused convolution chains (core/lower/cpu/lower_fused_conv_cpu.cpp, lowerConvChainCpu through
// lower_fused.h lowerConvChain): dw-pw / pw-dw / pw-pw chains with ragged sizes (rows, columns,
// channels and filters that are not multiples of the tiles and register blocks, strides, padding,
// a ReLU6 between) run with the kernel-IR interpreter against the reference interpreter's unfused
// graph; the output is stored and never loaded; the generated C++ compiled with the host compiler
// and run against the reference.

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "codegen/compile_util.h"
#include "core/codegen/cpp/cpp_codegen.h"
#include "core/eval/compare.h"
#include "core/eval/reference_interpreter.h"
#include "core/ir/shape_inference.h"
#include "core/lower/detail/lower_fused.h"
#include "core/test_ir_helpers.h"
#include "lower/test_lower_basic_util.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::lower::test {
namespace {

using ir::Attribute;
using schedule::FusionKind;

/// X [N, C, H, W] -> conv1 -> optional Clip(0, 6) -> conv2 -> Y; the depthwise conv has a
/// k x k window with the given stride and padding.
struct CpuChain {
    FusionKind kind = FusionKind::DwPw;
    std::int64_t N = 1, C = 4, H = 7, W = 7;
    std::int64_t Cm = 0;  ///< pw first: its output channels
    std::int64_t K = 8;   ///< pw second: its output channels
    std::int64_t kernel = 3, stride = 1, pad = 1;
    bool bias1 = true, bias2 = true, clip = true;
};

struct CpuBuilt {
    ir::Graph g;
    detail::ConvChainSpec spec;
};

CpuBuilt buildChain(const CpuChain& d) {
    ir::test::Builder b;
    b.input("X", "f32[" + std::to_string(d.N) + "," + std::to_string(d.C) + "," + std::to_string(d.H) + "," +
                     std::to_string(d.W) + "]");
    const bool firstDw = d.kind == FusionKind::DwPw, secondDw = d.kind == FusionKind::PwDw;
    const std::int64_t Cm = firstDw ? d.C : d.Cm;
    const std::int64_t K = secondDw ? Cm : d.K;
    std::uint32_t seed = 21;
    auto conv = [&](const std::string& name, const std::string& in, const std::string& out, std::int64_t ci,
                    std::int64_t co, bool dw, bool bias) {
        const std::int64_t kk = dw ? d.kernel : 1;
        b.init(name + "_W", makeData(ir::DType::F32, {co, dw ? 1 : ci, kk, kk}, seed++));
        std::vector<std::string> ins{in, name + "_W"};
        if (bias) {
            b.init(name + "_B", makeData(ir::DType::F32, {co}, seed++));
            ins.push_back(name + "_B");
        }
        ir::test::Attrs attrs{{"kernel_shape", Attribute::ofInts({kk, kk})}};
        if (dw) {
            attrs.push_back({"group", Attribute::ofInt(ci)});
            attrs.push_back({"strides", Attribute::ofInts({d.stride, d.stride})});
            attrs.push_back({"pads", Attribute::ofInts({d.pad, d.pad, d.pad, d.pad})});
        }
        return b.node("Conv", name, ins, {out}, attrs);
    };
    CpuBuilt r;
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

std::vector<ir::TensorData> inputsOf(const ir::Graph& g, const LoweredKernel& lk, const eval::ReferenceValues& ref) {
    std::vector<ir::TensorData> r;
    for (ir::ValueId v : lk.inputs) {
        if (const ir::TensorData* t = ref.value(v)) r.push_back(*t);
        else if (g.value(v).data) r.push_back(*g.value(v).data);
        else ADD_FAILURE() << "no data for " << g.value(v).name;
    }
    return r;
}

/// True when some statement or expression of `s` stores (loads) buffer `buf`.
bool touchesBuffer(const Stmt& s, int buf, bool stores) {
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

/// Lowers for the CPU with `threads` workers, runs the kernel IR and compares with the reference.
/// "" when it matches.
std::string checkCpu(const CpuChain& d, int threads = 2) {
    CpuBuilt bt = buildChain(d);
    LowerOptions lo;
    lo.cpuThreads = threads;
    auto lk = detail::lowerConvChain(bt.g, bt.spec, lo, "group 'g0'");
    if (!lk) return "lowering: " + lk.diagnostics().formatAll();
    const int Y = lk->kernel.params.back();
    if (!touchesBuffer(lk->kernel.body, Y, true)) return "the output is never stored";
    if (touchesBuffer(lk->kernel.body, Y, false)) return "the output is loaded";
    const auto inputs = makeInputs(bt.g, 5);
    auto ref = eval::evaluateAll(bt.g, inputs, {});
    if (!ref) return "reference: " + ref.diagnostics().formatAll();
    std::vector<ir::TensorData> storage = inputsOf(bt.g, *lk, *ref);
    storage.emplace_back();
    std::vector<ir::TensorData*> params;
    for (auto& t : storage) params.push_back(&t);
    auto st = evalKernel(lk->kernel, params);
    if (!st) return "eval: " + st.diagnostics().formatAll();
    auto cmp = eval::compareTensors(storage.back(), *ref->value(lk->outputs[0]), eval::CompareOptions{1e-5, 1e-4});
    return cmp.ok ? std::string() : cmp.summary() + "\n" + printKernel(lk->kernel);
}

TEST(FusedConvCpu, DwPwRaggedAgainstReference) {
    CpuChain d;
    // 13 columns (pixel block 16, 3 padded columns), 11 rows (ragged last row tile), 20 filters
    // (register blocks of 16: a ragged filter block), 6 channels.
    d.N = 2, d.C = 6, d.H = 11, d.W = 13, d.K = 20;
    EXPECT_EQ(checkCpu(d), "");
    d.bias1 = d.bias2 = false, d.clip = false;
    EXPECT_EQ(checkCpu(d, 1), "");
    // Stride 2, 5x5 window with padding 2, wide rows (37 -> 19 columns).
    d = CpuChain{};
    d.N = 1, d.C = 9, d.H = 15, d.W = 37, d.K = 7, d.kernel = 5, d.pad = 2, d.stride = 2;
    EXPECT_EQ(checkCpu(d), "");
    // A map wider than 256 columns: two column tiles, the last one ragged.
    d = CpuChain{};
    d.N = 1, d.C = 3, d.H = 2, d.W = 300, d.K = 5;
    EXPECT_EQ(checkCpu(d), "");
}

TEST(FusedConvCpu, DwPwFilterChunksWhenFewWorkers) {
    // 1 x 3x3 output: one row tile, so the 40 filters are split into chunks for 4 threads.
    CpuChain d;
    d.N = 1, d.C = 5, d.H = 3, d.W = 3, d.K = 40;
    CpuBuilt bt = buildChain(d);
    LowerOptions lo;
    lo.cpuThreads = 4;
    auto lk = detail::lowerConvChain(bt.g, bt.spec, lo, "group 'g0'");
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    // 3 columns: pixel block 8, register tiles of 8 filters (40 = 5 x 8); rows halved to 1 (3
    // tiles, < 2 x 4 workers), then filters 40 -> chunks of 24 (6 workers) -> 16 (3 chunks, 9).
    EXPECT_EQ(lk->kernel.mappings, (std::vector<std::string>{"grid = spatial(1,3,1,3)"}));
    EXPECT_EQ(checkCpu(d, 4), "");
}

TEST(FusedConvCpu, DwPwGemmPathRowAndFlatModes) {
    // The dw-pw path is the MatMul template over a B panel (lowerDwPwGemmCpu): row mode (maps
    // >= 16 wide, rows padded to 16), flat mode (narrower maps), ragged filter blocks (K % 8),
    // ragged column blocks (rows wider than 64), stride 2, batch 2, with and without biases/Clip.
    CpuChain d;
    d.N = 2, d.C = 7, d.H = 9, d.W = 18, d.K = 13;  // row mode: 18 -> 32 padded columns
    EXPECT_EQ(checkCpu(d, 1), "");
    d.bias1 = false, d.clip = false;
    EXPECT_EQ(checkCpu(d, 2), "");
    d = CpuChain{};
    d.N = 2, d.C = 11, d.H = 7, d.W = 7, d.K = 19, d.bias2 = false;  // flat mode, 49 pixels per image
    EXPECT_EQ(checkCpu(d, 1), "");
    d.stride = 2;  // 4x4 output
    EXPECT_EQ(checkCpu(d, 2), "");
    d = CpuChain{};
    d.N = 1, d.C = 4, d.H = 5, d.W = 150, d.K = 9, d.stride = 2;  // 75 columns: blocks of 64 + 16
    EXPECT_EQ(checkCpu(d, 1), "");
}

TEST(FusedConvCpu, DwPwGemmPathPlanAndTemplate) {
    // MobileNetV2-like block (32 channels, 56x56, 64 filters) on one thread: 4-row tiles, the B
    // panel [32, 4 x 64], the template's 8 x 64 tiles; the kernel names the path in its notes.
    CpuChain d;
    d.N = 1, d.C = 32, d.H = 56, d.W = 56, d.K = 64;
    CpuBuilt bt = buildChain(d);
    LowerOptions lo;
    lo.cpuThreads = 1;
    auto lk = detail::lowerConvChain(bt.g, bt.spec, lo, "group 'g0'");
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    EXPECT_EQ(lk->kernel.mappings, (std::vector<std::string>{"grid = spatial(1,14,1,1)"}));
    ASSERT_FALSE(lk->kernel.notes.empty());
    EXPECT_EQ(lk->kernel.notes.back(),
              "tile 4x56 output pixels, Kc = 64 output channels per worker; B panel [32,256]; GEMM tiles 8 x 64 "
              "(MatMul template, axpy form)");
    // The output keeps its logical shape (lowerGroup appends epilogues at Y's indices).
    const BufferDecl& yb = lk->kernel.buffers[static_cast<std::size_t>(lk->kernel.params.back())];
    EXPECT_EQ(yb.shape, (std::vector<std::int64_t>{1, 64, 56, 56}));
    // The generated C++ reads the panel through a __restrict__ view (accumulators kept in registers).
    auto src = codegen::generateCpp({&lk->kernel});
    EXPECT_NE(src.source.find("float* __restrict__ t_Bp = t_Bp_arr;"), std::string::npos);
}

TEST(FusedConvCpu, PwDwRaggedAgainstReference) {
    CpuChain d;
    d.kind = FusionKind::PwDw;
    // 70 intermediate channels (blocks of 8: a ragged block of 6), 9x10 map (flat mode), stride 1.
    d.N = 2, d.C = 5, d.Cm = 70, d.H = 9, d.W = 10;
    EXPECT_EQ(checkCpu(d), "");
    // Stride 2 on odd sizes, no biases, no ReLU6.
    d.N = 1, d.C = 7, d.Cm = 12, d.H = 13, d.W = 17, d.stride = 2, d.bias1 = d.bias2 = false, d.clip = false;
    EXPECT_EQ(checkCpu(d, 1), "");
    // 5x5 window, padding 2.
    d.kernel = 5, d.pad = 2, d.stride = 1, d.clip = true;
    EXPECT_EQ(checkCpu(d), "");
}

/// The kernel of chain `d` lowered for `threads` CPU workers (fails the test on an error).
LoweredKernel lowerCpu(const CpuChain& d, int threads) {
    CpuBuilt bt = buildChain(d);
    LowerOptions lo;
    lo.cpuThreads = threads;
    auto lk = detail::lowerConvChain(bt.g, bt.spec, lo, "group 'g0'");
    EXPECT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    return lk ? std::move(*lk) : LoweredKernel{};
}

TEST(FusedConvCpu, PwDwGemmPathAgainstReference) {
    // The pw-dw path is the MatMul template into a per-tile panel (lowerPwDwGemmCpu): ragged
    // channel blocks (Cm % 8), row mode with a shifted last column tile (W % 16 != 0), flat mode
    // (W < 16), stride 2 on odd sizes, 5x5 windows, batch 2, with and without biases and Clip,
    // several row tiles (clamped panel rows at the top and bottom of the map).
    CpuChain d;
    d.kind = FusionKind::PwDw;
    d.N = 2, d.C = 5, d.Cm = 21, d.H = 19, d.W = 19, d.stride = 2;  // row mode: tiles at 0 and 3
    EXPECT_EQ(checkCpu(d, 1), "");
    EXPECT_EQ(checkCpu(d, 2), "");
    d.bias1 = d.bias2 = false, d.clip = false;
    EXPECT_EQ(checkCpu(d, 1), "");
    d = CpuChain{};
    d.kind = FusionKind::PwDw;
    d.C = 3, d.Cm = 8, d.H = 17, d.W = 23, d.kernel = 5, d.pad = 2;  // 5x5, stride 1
    EXPECT_EQ(checkCpu(d, 1), "");
    d.stride = 2, d.bias2 = false;  // 5x5, stride 2: 9x12 output
    EXPECT_EQ(checkCpu(d, 2), "");
    d = CpuChain{};
    d.kind = FusionKind::PwDw;
    d.N = 2, d.C = 6, d.Cm = 13, d.H = 9, d.W = 7, d.stride = 2;  // flat mode, border columns
    EXPECT_EQ(checkCpu(d, 1), "");
    d.kernel = 5, d.pad = 2, d.stride = 1, d.bias1 = false;  // flat, 5x5: two border columns each side
    EXPECT_EQ(checkCpu(d, 2), "");
    // A tall map: several row tiles (the plan's height from the panel budget), ragged last tile.
    d = CpuChain{};
    d.kind = FusionKind::PwDw;
    d.C = 4, d.Cm = 9, d.H = 101, d.W = 130;
    const LoweredKernel lk = lowerCpu(d, 1);
    ASSERT_EQ(lk.kernel.mappings.size(), 1u);
    EXPECT_EQ(lk.kernel.mappings[0], "grid = spatial(1,4,2)");
    EXPECT_EQ(checkCpu(d, 1), "");
    // Few channels and rows for 4 threads: rows halved until there are 8 workers.
    d = CpuChain{};
    d.kind = FusionKind::PwDw;
    d.C = 3, d.Cm = 6, d.H = 8, d.W = 16;
    const LoweredKernel lk4 = lowerCpu(d, 4);
    EXPECT_EQ(lk4.kernel.mappings, (std::vector<std::string>{"grid = spatial(1,8,1)"}));
    EXPECT_EQ(checkCpu(d, 4), "");
}

TEST(FusedConvCpu, PwDwGemmPathPlanAndTemplate) {
    // MobileNetV2's features.4 expansion (24 -> 144 channels at 56x56, ReLU6, 3x3 stride 2) on
    // one thread: the whole map is one row tile (57 rows needed, 56 in the image: one panel row
    // spared), 18 blocks of 8 channels, row mode with 2 GEMM tiles of 32 per row (the second
    // shifted to end at column 56), 28 output columns vectorised (into a row buffer).
    CpuChain d;
    d.kind = FusionKind::PwDw;
    d.C = 24, d.Cm = 144, d.H = 56, d.W = 56, d.stride = 2;
    const LoweredKernel lk = lowerCpu(d, 1);
    EXPECT_EQ(lk.kernel.mappings, (std::vector<std::string>{"grid = spatial(1,1,18)"}));
    ASSERT_FALSE(lk.kernel.notes.empty());
    EXPECT_EQ(lk.kernel.notes.back(),
              "tile 28x28 output pixels x 8 channels; panel [8,57 x 57] (56 input rows + a zero row); GEMM per row, "
              "tiles 8 x 32 (MatMul template, axpy form); 28 inner columns vectorised");
    // X is viewed [N, C, H*W]; the output keeps its logical shape (lowerGroup's epilogues).
    const auto& params = lk.kernel.params;
    EXPECT_EQ(lk.kernel.buffers[static_cast<std::size_t>(params.front())].shape, (std::vector<std::int64_t>{1, 24, 3136}));
    EXPECT_EQ(lk.kernel.buffers[static_cast<std::size_t>(params.back())].shape, (std::vector<std::int64_t>{1, 144, 28, 28}));
    auto src = codegen::generateCpp({&lk.kernel});
    EXPECT_NE(src.source.find("float* __restrict__ t_Pn = "), std::string::npos);
    // features.2 (16 -> 96 at 112x112, stride 2): 14-row tiles (29 input rows for 28: one halo
    // row per tile), 12 channel blocks; the 7 vectors of a row in GEMM tiles of 32, 32, 32, 16.
    d.C = 16, d.Cm = 96, d.H = 112, d.W = 112;
    const LoweredKernel lk2 = lowerCpu(d, 1);
    EXPECT_EQ(lk2.kernel.mappings, (std::vector<std::string>{"grid = spatial(1,4,12)"}));
    ASSERT_FALSE(lk2.kernel.notes.empty());
    EXPECT_EQ(lk2.kernel.notes.back(),
              "tile 14x56 output pixels x 8 channels; panel [8,30 x 113] (29 input rows + a zero row); GEMM per row, "
              "tiles 8 x 32 (MatMul template, axpy form); 56 inner columns vectorised");
}

TEST(FusedConvCpu, PwPwRaggedAgainstReference) {
    CpuChain d;
    d.kind = FusionKind::PwPw;
    d.N = 2, d.C = 5, d.Cm = 19, d.K = 11, d.H = 5, d.W = 7;
    EXPECT_EQ(checkCpu(d), "");
    d.C = 33, d.Cm = 8, d.K = 3, d.H = 9, d.W = 18, d.bias1 = false;
    EXPECT_EQ(checkCpu(d, 1), "");
}

TEST(FusedConvCpu, PwPwGemmPathAgainstReference) {
    // The pw-pw path is the MatMul template twice (lowerPwPwGemmCpu): the first pointwise conv
    // into a panel over the tile's pixels, the second over the panel. Ragged channel blocks
    // (Cm % 8), ragged filter blocks, a shifted last row tile (H % th != 0) in row and flat mode,
    // filter chunks with a clamped last chunk, batch 2, with and without biases and Clip.
    CpuChain d;
    d.kind = FusionKind::PwPw;
    d.N = 2, d.C = 6, d.Cm = 100, d.K = 13, d.H = 17, d.W = 40;  // th = 7: tiles at rows 0, 7, 10
    const LoweredKernel lk = lowerCpu(d, 1);
    EXPECT_EQ(lk.kernel.mappings, (std::vector<std::string>{"grid = spatial(2,3,1)"}));
    ASSERT_FALSE(lk.kernel.notes.empty());
    EXPECT_EQ(lk.kernel.notes.back(),
              "tile 7x40 output pixels, Kc = 13 output channels per worker; panel [104,288]; GEMM tiles 8 x 32 over the "
              "tile, then 8 x 32 per row (MatMul template, axpy form)");
    EXPECT_EQ(checkCpu(d, 1), "");
    d.bias1 = d.bias2 = false, d.clip = false;
    EXPECT_EQ(checkCpu(d, 2), "");
    d = CpuChain{};
    d.kind = FusionKind::PwPw;
    d.C = 9, d.Cm = 300, d.K = 5, d.H = 20, d.W = 7, d.bias2 = false;  // flat, th = 15: tiles at rows 0 and 5
    const LoweredKernel lkFlat = lowerCpu(d, 1);
    EXPECT_EQ(lkFlat.kernel.mappings, (std::vector<std::string>{"grid = spatial(1,2,1)"}));
    EXPECT_EQ(checkCpu(d, 1), "");
    // 2 x 20 pixels for 4 threads: one row per tile, then filter chunks 37 -> 24 -> 16 -> 8 (5
    // chunks, the last one clamped to 37).
    d = CpuChain{};
    d.kind = FusionKind::PwPw;
    d.C = 4, d.Cm = 12, d.K = 37, d.H = 2, d.W = 20;
    const LoweredKernel lk4 = lowerCpu(d, 4);
    EXPECT_EQ(lk4.kernel.mappings, (std::vector<std::string>{"grid = spatial(1,2,5)"}));
    EXPECT_EQ(checkCpu(d, 4), "");
}

TEST(FusedConvCpu, HostCompiledCppMatchesReference) {
    if (!tessera::test::haveCompiler()) GTEST_SKIP() << "no C++ compiler (c++) on PATH";
    std::vector<CpuChain> chains(5);
    chains[0].N = 2, chains[0].C = 10, chains[0].H = 11, chains[0].W = 13, chains[0].K = 21, chains[0].stride = 2;
    // dw-pw GEMM path: row mode (40 columns padded to 48) with ragged filter blocks, no biases.
    chains[3].N = 2, chains[3].C = 12, chains[3].H = 10, chains[3].W = 40, chains[3].K = 27;
    chains[3].bias1 = chains[3].bias2 = false;
    // flat mode, stride 2 (15x15 -> 8x8), Clip between.
    chains[4].N = 1, chains[4].C = 20, chains[4].H = 15, chains[4].W = 15, chains[4].K = 16, chains[4].stride = 2;
    chains[1].kind = FusionKind::PwDw, chains[1].C = 6, chains[1].Cm = 18, chains[1].H = 9, chains[1].W = 12;
    chains[2].kind = FusionKind::PwPw, chains[2].C = 7, chains[2].Cm = 13, chains[2].K = 9, chains[2].H = 6, chains[2].W = 20;
    // pw-dw template path: row mode with ragged channel blocks and stride 2 (row buffer), flat
    // mode with a 5x5 window (border columns).
    CpuChain rowMode;
    rowMode.kind = FusionKind::PwDw, rowMode.N = 2, rowMode.C = 5, rowMode.Cm = 21, rowMode.H = 19, rowMode.W = 37;
    rowMode.stride = 2;
    chains.push_back(rowMode);
    CpuChain flatMode;
    flatMode.kind = FusionKind::PwDw, flatMode.C = 6, flatMode.Cm = 16, flatMode.H = 11, flatMode.W = 9;
    flatMode.kernel = 5, flatMode.pad = 2, flatMode.bias2 = false;
    chains.push_back(flatMode);
    // pw-pw template path: shifted last row tile, padded row columns, ragged channel blocks.
    CpuChain pwpw;
    pwpw.kind = FusionKind::PwPw, pwpw.N = 2, pwpw.C = 6, pwpw.Cm = 100, pwpw.K = 13, pwpw.H = 17, pwpw.W = 40;
    chains.push_back(pwpw);
    for (const CpuChain& d : chains) {
        CpuBuilt bt = buildChain(d);
        auto lk = detail::lowerConvChain(bt.g, bt.spec, {}, "group 'g0'");
        ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
        auto src = codegen::generateCpp({&lk->kernel});
        tessera::test::CompiledModule mod(src.source, "-Wall -Wextra");
        ASSERT_TRUE(mod.ok()) << mod.log();
        auto fn = mod.entry(src.entryPoints[0]);
        ASSERT_NE(fn, nullptr);
        const auto inputs = makeInputs(bt.g, 7);
        auto ref = eval::evaluateAll(bt.g, inputs, {});
        ASSERT_TRUE(ref.ok()) << ref.diagnostics().formatAll();
        std::vector<ir::TensorData> storage = inputsOf(bt.g, *lk, *ref);
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
        EXPECT_TRUE(cmp.ok) << schedule::fusionKindName(d.kind) << ": " << cmp.summary();
    }
}

}  // namespace
}  // namespace tessera::lower::test
