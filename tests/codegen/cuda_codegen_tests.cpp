// CUDA C++ generator (core/codegen/cuda): golden text and exact launch configurations of
// hand-built kernels, the structural validation errors, hostile names, and kernels lowered for
// the CUDA target from graph nodes and the samples.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include "core/codegen/cuda/cuda_codegen.h"
#include "core/lower/lower.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/test_ir_helpers.h"
#include "tests/codegen/compile_util.h"
#include "tests/codegen/test_kernels.h"
#include "tests/core/golden.h"

namespace tessera::test {
namespace {

using codegen::CudaLaunch;
using codegen::CudaModule;
using codegen::CudaOptions;
using codegen::generateCuda;
using lower::BinaryOp;
using lower::Intrinsic;
using lower::varRef;

void expectLaunch(const CudaLaunch& l, std::int64_t grid, std::int64_t block, std::int64_t shared) {
    EXPECT_EQ(l.gridX, grid);
    EXPECT_EQ(l.blockX, block);
    EXPECT_EQ(l.sharedBytes, shared);
}

/// Generates one kernel; fails the test (and returns an empty module) on errors.
CudaModule generateOne(const Kernel& k, const CudaOptions& o = {}) {
    auto m = generateCuda({&k}, o);
    EXPECT_TRUE(m.ok()) << m.diagnostics().formatAll();
    return m.ok() ? *m : CudaModule{};
}

/// The message of the only error of generating `k`, or "<ok>" / "<N errors>".
std::string onlyError(const Kernel& k, const CudaOptions& o = {}) {
    auto m = generateCuda({&k}, o);
    if (m.ok()) return "<ok>";
    const auto& items = m.diagnostics().items();
    if (items.size() != 1) return "<" + std::to_string(items.size()) + " errors>: " + m.diagnostics().formatAll();
    return items[0].message;
}

/// Y[i] = X[i] > 0 ? X[i] : sigmoid(X[i]) - rsqrt(|X[i]| + 1), and Y[i] = -inf for X[i] == -inf;
/// i = w * 256 + t over 1000 elements: Blocks w in 0..4, Threads t in 0..256, predicate i < 1000.
Kernel elementwiseKernel() {
    Kernel k;
    k.name = "gated_act";
    k.opType = "Custom";
    k.sourceOps = {"Act_0"};
    k.mappings = {"grid = spatial(4)", "block = spatial(256)"};
    const int x = addParam(k, "X", DType::F32, {1000}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {1000}, BufferRole::Output);
    auto w = k.newVar("w"), t = k.newVar("t"), i = k.newVar("i");
    Expr ei = varRef(i);
    Expr xv = lower::load(x, DType::F32, {ei});
    Expr negInf = lower::floatImm(-std::numeric_limits<double>::infinity());
    Expr value = lower::select(
        lower::binary(BinaryOp::Eq, xv, negInf), negInf,
        lower::select(xv > lower::floatImm(0.0), xv,
                      lower::call(Intrinsic::Sigmoid, {xv}) -
                          lower::call(Intrinsic::Rsqrt, {lower::call(Intrinsic::Abs, {xv}) + lower::floatImm(1.0)})));
    Stmt body = lower::let(i, varRef(w) * 256 + varRef(t),
                           lower::ifThen(ei < lower::intImm(1000), lower::store(y, {ei}, value)));
    k.body = lower::forLoop(w, lower::intImm(4), lower::forLoop(t, lower::intImm(256), body, ForKind::Threads, 0, "block = spatial(256)"),
                            ForKind::Blocks, 0, "grid = spatial(4)");
    return k;
}

/// Y[r, c] = 2 * X[r, 99 - c] for X f32[8, 100], staged through a Shared row: Blocks r in 0..8 {
/// Threads t: tile[t] = X[r, t]; Barrier; Threads u: Y[r, u] = tile[99 - u] * 2 }.
Kernel stagedKernel() {
    Kernel k;
    k.name = "reverse_rows";
    k.opType = "ReverseSequence";
    k.sourceOps = {"Rev_1"};
    k.mappings = {"grid = spatial(8)", "block = spatial(100)"};
    k.notes = {"one row per block, staged in shared memory"};
    const int x = addParam(k, "X", DType::F32, {8, 100}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {8, 100}, BufferRole::Output);
    const int tile = addTemp(k, "tile", DType::F32, {100}, MemoryScope::Shared);
    auto r = k.newVar("r"), t = k.newVar("t"), u = k.newVar("t");
    Stmt fill = lower::forLoop(t, lower::intImm(100),
                               lower::store(tile, {varRef(t)}, lower::load(x, DType::F32, {varRef(r), varRef(t)})),
                               ForKind::Threads);
    Expr rev = lower::intImm(99) - varRef(u);
    Stmt use = lower::forLoop(u, lower::intImm(100),
                              lower::store(y, {varRef(r), varRef(u)}, lower::load(tile, DType::F32, {rev}) * lower::floatImm(2.0)),
                              ForKind::Threads);
    k.body = lower::forLoop(r, lower::intImm(8), lower::allocate(tile, lower::seq({fill, lower::barrier(), use})),
                            ForKind::Blocks, 0, "grid = spatial(8)");
    return k;
}

/// f16 and bf16 buffers, no Blocks loop: Threads t in 0..64 { Y[t] = X[t] * X[t] (f16);
/// Z[t] = B[t] + 1 (bf16) }.
Kernel halfKernel() {
    Kernel k;
    k.name = "half_ops";
    k.opType = "Mul";
    k.sourceOps = {"Sq_2", "Inc_3"};
    const int x = addParam(k, "X", DType::F16, {64}, BufferRole::Input);
    const int b = addParam(k, "B", DType::BF16, {64}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F16, {64}, BufferRole::Output);
    const int z = addParam(k, "Z", DType::BF16, {64}, BufferRole::Output);
    auto t = k.newVar("t");
    Expr et = varRef(t);
    Expr xv = lower::load(x, DType::F16, {et});
    k.body = lower::forLoop(t, lower::intImm(64),
                            lower::seq({lower::store(y, {et}, xv * xv),
                                        lower::store(z, {et}, lower::load(b, DType::BF16, {et}) + lower::floatImm(1.0, DType::BF16))}),
                            ForKind::Threads);
    return k;
}

/// No worker loops: a Local scalar sums X[0..16) (Unroll 4) into Y[0]; a Parallel loop writes
/// Q[j] = floordiv(j - 3, 2) and R[j] = floormod(j - 3, 2); a Vectorize(4) loop writes D[j] = j / 2.0
/// (f64) with D[0] = +inf.
Kernel serialKernel() {
    Kernel k;
    k.name = "serial_misc";
    k.opType = "ReduceSum";
    k.sourceOps = {"Sum_4"};
    const int x = addParam(k, "X", DType::F32, {16}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {1}, BufferRole::Output);
    const int q = addParam(k, "Q", DType::I64, {6}, BufferRole::Output);
    const int r = addParam(k, "R", DType::I32, {6}, BufferRole::Output);
    const int d = addParam(k, "D", DType::F64, {8}, BufferRole::Output);
    const int acc = addTemp(k, "acc", DType::F32, {});
    auto i = k.newVar("i"), j = k.newVar("j"), v = k.newVar("v");
    Stmt sum = lower::allocate(
        acc, lower::seq({lower::store(acc, {}, lower::floatImm(0.0)),
                         lower::forLoop(i, lower::intImm(16),
                                        lower::store(acc, {}, lower::load(acc, DType::F32, {}) + lower::load(x, DType::F32, {varRef(i)})),
                                        ForKind::Unroll, 4),
                         lower::store(y, {lower::intImm(0)}, lower::load(acc, DType::F32, {}))}));
    Expr jm3 = varRef(j) - lower::intImm(3);
    Stmt par = lower::forLoop(
        j, lower::intImm(6),
        lower::seq({lower::store(q, {varRef(j)}, lower::binary(BinaryOp::FloorDiv, jm3, lower::intImm(2))),
                    lower::store(r, {varRef(j)}, lower::cast(lower::binary(BinaryOp::FloorMod, lower::cast(jm3, DType::I32), lower::intImm(2, DType::I32)), DType::I32))}),
        ForKind::Parallel);
    Stmt vec = lower::forLoop(v, lower::intImm(8),
                              lower::store(d, {varRef(v)}, lower::cast(varRef(v), DType::F64) / lower::floatImm(2.0, DType::F64)),
                              ForKind::Vectorize, 4);
    Stmt inf = lower::store(d, {lower::intImm(0)}, lower::floatImm(std::numeric_limits<double>::infinity(), DType::F64));
    k.body = lower::seq({sum, par, vec, inf});
    return k;
}

/// Row sums of X f32[2, 256] in blocks of 4 with a per-thread accumulator acc f32[64, 4]:
/// Blocks w in 0..2 { alloc acc; Threads t: acc[t][i] = 0 (unrolled i); Barrier;
/// Threads t: acc[t][i] += X[w, t * 4 + i]; Threads t: Y[w, t * 4 + i] = acc[t][i] * 3 }.
Kernel perThreadKernel(std::int64_t rows = 64, std::int64_t threads = 64) {
    Kernel k;
    k.name = "phased";
    k.opType = "Mul";
    k.notes = {"per-thread accumulator across three phases"};
    const int x = addParam(k, "X", DType::F32, {2, 256}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {2, 256}, BufferRole::Output);
    lower::BufferDecl ab;
    ab.name = "acc";
    ab.dtype = DType::F32;
    ab.shape = {rows, 4};
    ab.scope = MemoryScope::Local;
    ab.perThread = true;
    const int acc = k.addBuffer(ab);
    auto w = k.newVar("w");
    auto phase = [&](const std::function<Stmt(Expr, Expr)>& body) {
        auto t = k.newVar("t"), i = k.newVar("i");
        return lower::forLoop(t, lower::intImm(threads),
                              lower::forLoop(i, lower::intImm(4), body(varRef(t), varRef(i)), ForKind::Unroll),
                              ForKind::Threads);
    };
    Stmt zero = phase([&](Expr t, Expr i) { return lower::store(acc, {t, i}, lower::floatImm(0.0)); });
    Stmt add = phase([&](Expr t, Expr i) {
        return lower::store(acc, {t, i}, lower::load(acc, DType::F32, {t, i}) + lower::load(x, DType::F32, {varRef(w), t * 4 + i}));
    });
    Stmt out = phase([&](Expr t, Expr i) {
        return lower::store(y, {varRef(w), t * 4 + i}, lower::load(acc, DType::F32, {t, i}) * lower::floatImm(3.0));
    });
    k.body = lower::forLoop(w, lower::intImm(2), lower::allocate(acc, lower::seq({zero, lower::barrier(), add, out})),
                            ForKind::Blocks);
    return k;
}

/// A kernel whose only loop is `kind` with `extent` (body: Y[0] = 1).
Kernel oneLoopKernel(ForKind kind, std::int64_t extent) {
    Kernel k;
    k.name = "one_loop";
    const int y = addParam(k, "Y", DType::F32, {1}, BufferRole::Output);
    auto v = k.newVar("v");
    k.body = lower::forLoop(v, lower::intImm(extent), lower::store(y, {lower::intImm(0)}, lower::floatImm(1.0)), kind);
    return k;
}

// ---------------------------------------------------------------------------------------------
// Golden text and launches
// ---------------------------------------------------------------------------------------------

TEST(CudaCodegen, GoldenElementwiseBlocksThreadsPredicate) {
    const auto k = elementwiseKernel();
    const CudaModule m = generateOne(k);
    ASSERT_EQ(m.source.entryPoints, std::vector<std::string>{"tk_gated_act"});
    ASSERT_EQ(m.launches.size(), 1u);
    expectLaunch(m.launches[0], 4, 256, 0);
    checkGolden("cuda/elementwise.cu.txt", m.source.source);
    const std::string& s = m.source.source;
    EXPECT_NE(s.find("for (int64_t w = blockIdx.x; w < 4; w += gridDim.x) {"), std::string::npos);
    EXPECT_NE(s.find("for (int64_t t = threadIdx.x; t < 256; t += blockDim.x) {"), std::string::npos);
    EXPECT_NE(s.find("extern \"C\" __global__ void __launch_bounds__(256) tk_gated_act(\n"
                     "    const float* __restrict__ in_X,\n    float* __restrict__ out_Y) {\n"),
              std::string::npos);
    EXPECT_NE(s.find("// launch: grid 4 x block 256\n"), std::string::npos);
    EXPECT_EQ(s.find("#include"), std::string::npos);
    EXPECT_EQ(s.find("std::"), std::string::npos);
}

TEST(CudaCodegen, GoldenSharedTileAndBarrier) {
    const auto k = stagedKernel();
    const CudaModule m = generateOne(k);
    ASSERT_EQ(m.launches.size(), 1u);
    expectLaunch(m.launches[0], 8, 128, 400);  // 100 threads rounded up to 4 warps
    checkGolden("cuda/staged.cu.txt", m.source.source);
    const std::string& s = m.source.source;
    EXPECT_NE(s.find("    __shared__ float t_tile[100];  // shared f32[100], 400 bytes\n"), std::string::npos) << s;
    EXPECT_NE(s.find("        __syncthreads();\n"), std::string::npos);
    EXPECT_NE(s.find("// launch: grid 8 x block 128, static shared 400 bytes\n"), std::string::npos);
    EXPECT_NE(s.find("rounded up to whole warps"), std::string::npos);
}

TEST(CudaCodegen, GoldenHalfBuffersWithoutBlocksLoop) {
    const auto k = halfKernel();
    const CudaModule m = generateOne(k);
    ASSERT_EQ(m.launches.size(), 1u);
    expectLaunch(m.launches[0], 1, 64, 0);
    checkGolden("cuda/half.cu.txt", m.source.source);
    const std::string& s = m.source.source;
    EXPECT_NE(s.find("    const uint16_t* __restrict__ in_X,\n    const uint16_t* __restrict__ in_B,\n"
                     "    uint16_t* __restrict__ out_Y,\n    uint16_t* __restrict__ out_Z) {\n"),
              std::string::npos);
    EXPECT_NE(s.find("tsr_f32_to_f16("), std::string::npos);
    EXPECT_NE(s.find("tsr_f32_to_bf16("), std::string::npos);
}

TEST(CudaCodegen, GoldenSerialKernelWithoutWorkerLoops) {
    const auto k = serialKernel();
    const CudaModule m = generateOne(k);
    ASSERT_EQ(m.launches.size(), 1u);
    expectLaunch(m.launches[0], 1, 1, 0);
    checkGolden("cuda/serial.cu.txt", m.source.source);
    const std::string& s = m.source.source;
    EXPECT_NE(s.find("__launch_bounds__(1) tk_serial_misc("), std::string::npos);
    EXPECT_NE(s.find("    #pragma unroll 4\n    for (int64_t i = 0; i < 16; ++i) {\n"), std::string::npos) << s;
    EXPECT_NE(s.find("    // parallel loop (a CPU kind): serial on the CUDA target, in each thread\n"
                     "    for (int64_t j = 0; j < 6; ++j) {\n"),
              std::string::npos);
    EXPECT_NE(s.find("    #pragma unroll 4\n    for (int64_t v = 0; v < 8; ++v) {\n"), std::string::npos);
    EXPECT_NE(s.find("out_D[0] = __longlong_as_double(0x7ff0000000000000LL);"), std::string::npos);
    EXPECT_NE(s.find("tsr_floordiv<int64_t>(j - 3, 2)"), std::string::npos);
}

TEST(CudaCodegen, GoldenPerThreadBufferKeepsOneRow) {
    const auto k = perThreadKernel();
    const CudaModule m = generateOne(k);
    ASSERT_EQ(m.launches.size(), 1u);
    expectLaunch(m.launches[0], 2, 64, 0);
    checkGolden("cuda/per_thread.cu.txt", m.source.source);
    const std::string& s = m.source.source;
    EXPECT_NE(s.find("        float t_acc[4];  // per-thread f32[64,4]: this thread's row\n"), std::string::npos) << s;
    EXPECT_NE(s.find("t_acc[i] = t_acc[i] + in_X[w * 256 + (t * 4 + i)];"), std::string::npos) << s;
    // a row of one element is a scalar
    Kernel one = perThreadKernel();
    one.buffers[2].shape = {64, 1};
    auto v = one.newVar("t");
    one.body = lower::allocate(2, lower::forLoop(v, lower::intImm(64),
                                                 lower::seq({lower::store(2, {varRef(v), lower::intImm(0)}, lower::floatImm(1.0)),
                                                             lower::store(1, {lower::intImm(0), varRef(v)}, lower::load(2, DType::F32, {varRef(v), lower::intImm(0)}))}),
                                                 ForKind::Threads));
    const std::string s1 = generateOne(one).source.source;
    EXPECT_NE(s1.find("    float t_acc;  // per-thread f32[64,1]: this thread's row\n"), std::string::npos) << s1;
    EXPECT_NE(s1.find("        t_acc = 1.0f;\n        out_Y[t] = t_acc;\n"), std::string::npos) << s1;
}

TEST(CudaCodegen, ModuleOfSeveralKernelsHasUniqueEntriesAndLaunchesInOrder) {
    const auto a = elementwiseKernel(), b = stagedKernel(), c = halfKernel();
    auto d = elementwiseKernel();  // same name: a unique entry point
    auto m = generateCuda({&a, nullptr, &b, &c, &d});
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    EXPECT_EQ(m->source.entryPoints,
              (std::vector<std::string>{"tk_gated_act", "", "tk_reverse_rows", "tk_half_ops", "tk_gated_act_2"}));
    ASSERT_EQ(m->launches.size(), 5u);
    expectLaunch(m->launches[0], 4, 256, 0);
    expectLaunch(m->launches[1], 1, 1, 0);
    expectLaunch(m->launches[2], 8, 128, 400);
    expectLaunch(m->launches[3], 1, 64, 0);
    expectLaunch(m->launches[4], 4, 256, 0);
    // the prelude once; one source-map entry per source op, ranges in order and disjoint
    const std::string& s = m->source.source;
    EXPECT_EQ(s.find("typedef long long int64_t;"), s.rfind("typedef long long int64_t;"));
    ASSERT_EQ(m->source.sourceMap.size(), 5u);  // Act_0, Rev_1, Sq_2, Inc_3, Act_0
    EXPECT_EQ(m->source.sourceMap[2].node, "Sq_2");
    EXPECT_EQ(m->source.sourceMap[3].node, "Inc_3");
    EXPECT_EQ(m->source.sourceMap[2].firstLine, m->source.sourceMap[3].firstLine);
    std::vector<std::string> lines;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (const auto& e : m->source.sourceMap) {
        ASSERT_GE(e.firstLine, 1);
        ASSERT_LE(e.lastLine, static_cast<int>(lines.size()));
        EXPECT_EQ(lines[static_cast<std::size_t>(e.firstLine - 1)].rfind("// ----", 0), 0u);
        EXPECT_EQ(lines[static_cast<std::size_t>(e.firstLine)],
                  "// Kernel " + m->source.entryPoints[static_cast<std::size_t>(e.kernel)] + " (IR name \"" +
                      (e.kernel == 2 ? "reverse_rows" : e.kernel == 3 ? "half_ops" : "gated_act") + "\")");
        EXPECT_EQ(lines[static_cast<std::size_t>(e.lastLine - 1)], "}");
    }
    EXPECT_LT(m->source.sourceMap[0].lastLine, m->source.sourceMap[1].firstLine);
    EXPECT_EQ(generateCuda({&a, nullptr, &b, &c, &d})->source.source, s);  // deterministic
}

TEST(CudaCodegen, FullParenthesesOption) {
    const auto k = elementwiseKernel();
    CudaOptions o;
    o.fullParens = true;
    const CudaModule m = generateOne(k, o);
    EXPECT_NE(m.source.source.find("const int64_t i = (w * 256) + t;"), std::string::npos) << m.source.source;
    EXPECT_NE(generateOne(k).source.source.find("const int64_t i = w * 256 + t;"), std::string::npos);
}

TEST(CudaCodegen, LaunchSizes) {
    // threads: capped at maxThreadsPerBlock, rounded up to whole warps (never above the cap)
    expectLaunch(*codegen::cudaLaunchFor(oneLoopKernel(ForKind::Threads, 2000)), 1, 1024, 0);
    expectLaunch(*codegen::cudaLaunchFor(oneLoopKernel(ForKind::Threads, 20)), 1, 32, 0);
    expectLaunch(*codegen::cudaLaunchFor(oneLoopKernel(ForKind::Threads, 1)), 1, 32, 0);
    expectLaunch(*codegen::cudaLaunchFor(oneLoopKernel(ForKind::Threads, 64)), 1, 64, 0);
    CudaOptions small;
    small.maxThreadsPerBlock = 100;
    small.maxGridX = 10;
    expectLaunch(*codegen::cudaLaunchFor(oneLoopKernel(ForKind::Threads, 99), small), 1, 100, 0);
    expectLaunch(*codegen::cudaLaunchFor(oneLoopKernel(ForKind::Threads, 70), small), 1, 96, 0);
    // blocks: min(extent, maxGridX), at least 1
    expectLaunch(*codegen::cudaLaunchFor(oneLoopKernel(ForKind::Blocks, 50), small), 10, 1, 0);
    expectLaunch(*codegen::cudaLaunchFor(oneLoopKernel(ForKind::Blocks, 50)), 50, 1, 0);
    expectLaunch(*codegen::cudaLaunchFor(oneLoopKernel(ForKind::Blocks, 0)), 1, 1, 0);
    expectLaunch(*codegen::cudaLaunchFor(oneLoopKernel(ForKind::Blocks, 3000000000LL)), 2147483647, 1, 0);
    // CPU kinds launch one thread
    expectLaunch(*codegen::cudaLaunchFor(oneLoopKernel(ForKind::Parallel, 50)), 1, 1, 0);
    // a strided Threads loop says so in the launch comment
    const auto big = oneLoopKernel(ForKind::Threads, 2000);
    const CudaModule m = generateOne(big);
    EXPECT_NE(m.source.source.find("// launch: grid 1 x block 1024\n//   (a Threads loop has 2000 iterations; each thread "
                                   "runs several, strided by the block size)\n"),
              std::string::npos)
        << m.source.source;
}

TEST(CudaCodegen, LargestThreadsExtentAndSharedBytesOverSeveralLoops) {
    // Blocks { Threads 40; Threads 300 } with two shared buffers (f16[300] and an f64 scalar) and
    // an unused shared buffer (not declared, not counted).
    Kernel k;
    k.name = "two_stage";
    const int y = addParam(k, "Y", DType::F32, {300}, BufferRole::Output);
    const int s1 = addTemp(k, "s1", DType::F16, {300}, MemoryScope::Shared);
    const int s2 = addTemp(k, "s2", DType::F64, {}, MemoryScope::Shared);
    const int unused = addTemp(k, "unused", DType::F32, {1000}, MemoryScope::Shared);
    auto w = k.newVar("w"), a = k.newVar("a"), b = k.newVar("b");
    Stmt l1 = lower::forLoop(a, lower::intImm(40), lower::store(s1, {varRef(a)}, lower::floatImm(1.0, DType::F16)), ForKind::Threads);
    Stmt l2 = lower::forLoop(b, lower::intImm(300),
                             lower::store(y, {varRef(b)}, lower::load(s1, DType::F16, {varRef(b)}) +
                                                              lower::cast(lower::load(s2, DType::F64, {}), DType::F16)),
                             ForKind::Threads);
    Stmt init = lower::store(s2, {}, lower::floatImm(0.5, DType::F64));
    k.body = lower::forLoop(
        w, lower::intImm(3),
        lower::allocate(s1, lower::allocate(s2, lower::allocate(unused, lower::seq({init, l1, lower::barrier(), l2})))),
        ForKind::Blocks);
    const CudaModule m = generateOne(k);
    ASSERT_EQ(m.launches.size(), 1u);
    expectLaunch(m.launches[0], 3, 320, 608);
    EXPECT_NE(m.source.source.find("__shared__ uint16_t t_s1[300];"), std::string::npos) << m.source.source;
    EXPECT_NE(m.source.source.find("__shared__ double t_s2;"), std::string::npos);
    EXPECT_EQ(m.source.source.find("t_unused"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

TEST(CudaCodegenErrors, NestedWorkerLoops) {
    auto make = [](ForKind outer, ForKind inner) {
        Kernel k;
        k.name = "nest";
        const int y = addParam(k, "Y", DType::F32, {4, 4}, BufferRole::Output);
        auto a = k.newVar("a"), b = k.newVar("b");
        k.body = lower::forLoop(
            a, lower::intImm(4),
            lower::forLoop(b, lower::intImm(4), lower::store(y, {varRef(a), varRef(b)}, lower::floatImm(0.0)), inner), outer);
        return k;
    };
    EXPECT_EQ(onlyError(make(ForKind::Blocks, ForKind::Blocks)),
              "Blocks loop 'b' of kernel 'nest' is inside Blocks loop 'a'; a kernel has one level of grid workers");
    EXPECT_EQ(onlyError(make(ForKind::Threads, ForKind::Blocks)),
              "Blocks loop 'b' of kernel 'nest' is inside Threads loop 'a'; grid workers cannot be nested in block workers");
    EXPECT_EQ(onlyError(make(ForKind::Threads, ForKind::Threads)),
              "Threads loop 'b' of kernel 'nest' is inside Threads loop 'a'; a block has one level of threads");
    EXPECT_EQ(onlyError(make(ForKind::Blocks, ForKind::Threads)), "<ok>");
    // nested through a serial loop and an If: still found
    Kernel k;
    k.name = "deep";
    const int y = addParam(k, "Y", DType::F32, {4}, BufferRole::Output);
    auto a = k.newVar("a"), s = k.newVar("s"), b = k.newVar("b");
    k.body = lower::forLoop(
        a, lower::intImm(4),
        lower::forLoop(s, lower::intImm(2),
                       lower::ifThen(varRef(s) < lower::intImm(1),
                                     lower::forLoop(b, lower::intImm(4), lower::store(y, {varRef(b)}, lower::floatImm(0.0)), ForKind::Threads))),
        ForKind::Threads);
    EXPECT_EQ(onlyError(k), "Threads loop 'b' of kernel 'deep' is inside Threads loop 'a'; a block has one level of threads");
}

TEST(CudaCodegenErrors, BarrierInsideThreadsLoop) {
    Kernel k;
    k.name = "bad_barrier";
    const int y = addParam(k, "Y", DType::F32, {4}, BufferRole::Output);
    auto t = k.newVar("t");
    k.body = lower::forLoop(t, lower::intImm(4),
                            lower::seq({lower::store(y, {varRef(t)}, lower::floatImm(0.0)), lower::barrier()}), ForKind::Threads);
    EXPECT_EQ(onlyError(k), "a Barrier of kernel 'bad_barrier' is inside Threads loop 't'; every thread of the block must "
                            "reach a barrier (put it between Threads loops)");
}

TEST(CudaCodegenErrors, WorkerLoopExtentMustBeConstant) {
    Kernel k;
    k.name = "dyn";
    const int y = addParam(k, "Y", DType::F32, {4, 4}, BufferRole::Output);
    auto a = k.newVar("a"), b = k.newVar("b");
    k.body = lower::forLoop(a, lower::intImm(4),
                            lower::forLoop(b, varRef(a) + 1, lower::store(y, {varRef(a), varRef(b)}, lower::floatImm(0.0)), ForKind::Threads));
    EXPECT_EQ(onlyError(k), "Threads loop 'b' of kernel 'dyn' has an extent that is not a constant (the launch needs it)");
}

TEST(CudaCodegenErrors, LocalAndSharedSizeLimits) {
    auto make = [](MemoryScope scope, std::int64_t n) {
        Kernel k;
        k.name = "big";
        const int y = addParam(k, "Y", DType::F32, {1}, BufferRole::Output);
        const int tmp = addTemp(k, "scratch", DType::F32, {n}, scope);
        k.body = lower::allocate(tmp, lower::seq({lower::store(tmp, {lower::intImm(0)}, lower::floatImm(1.0)),
                                                  lower::store(y, {lower::intImm(0)}, lower::load(tmp, DType::F32, {lower::intImm(0)}))}));
        return k;
    };
    EXPECT_EQ(onlyError(make(MemoryScope::Local, 16384)), "<ok>");  // exactly 64 KiB
    EXPECT_EQ(onlyError(make(MemoryScope::Local, 16385)),
              "local buffer 'scratch' of kernel 'big' needs 65540 bytes; the CUDA target keeps local buffers in "
              "registers/stack (max 65536)");
    EXPECT_EQ(onlyError(make(MemoryScope::Shared, 12288)), "<ok>");  // exactly 48 KiB
    EXPECT_EQ(onlyError(make(MemoryScope::Shared, 12289)),
              "shared buffers of kernel 'big' need 49156 bytes; static shared memory is limited to 49152 bytes");
    EXPECT_EQ(onlyError(make(MemoryScope::Global, 4)),
              "kernel 'big' allocates buffer 'scratch' in global memory; the CUDA target allocates only shared and local "
              "buffers");
}

TEST(CudaCodegenErrors, PerThreadBufferRules) {
    EXPECT_EQ(onlyError(perThreadKernel()), "<ok>");
    EXPECT_EQ(onlyError(perThreadKernel(32, 64)),
              "per-thread buffer 'acc' of kernel 'phased' has 32 rows but Threads loop 't' has 64 iterations");
    CudaOptions narrow;
    narrow.maxThreadsPerBlock = 32;
    const Kernel k = perThreadKernel();
    auto bad = generateCuda({&k}, narrow);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.diagnostics().items()[0].message,
              "per-thread buffer 'acc' of kernel 'phased' is used in Threads loop 't' of 64 iterations, more than the 32 "
              "threads of a block (each thread keeps one row: it must run at most one iteration)");
    // outside a Threads loop; indexed by something else first
    Kernel out = perThreadKernel();
    auto w = out.newVar("w"), t = out.newVar("t");
    out.body = lower::forLoop(w, lower::intImm(2),
                              lower::allocate(2, lower::store(2, {lower::intImm(0), lower::intImm(0)}, lower::floatImm(1.0))),
                              ForKind::Blocks);
    EXPECT_EQ(onlyError(out), "per-thread buffer 'acc' of kernel 'phased' is accessed outside a Threads loop");
    Kernel other = perThreadKernel();
    other.body = lower::allocate(
        2, lower::forLoop(t, lower::intImm(64),
                          lower::store(1, {lower::intImm(0), varRef(t)},
                                       lower::load(2, DType::F32, {lower::intImm(63) - varRef(t), lower::intImm(0)})),
                          ForKind::Threads));
    EXPECT_EQ(onlyError(other), "per-thread buffer 'acc' of kernel 'phased' is not indexed by the enclosing Threads loop "
                                "variable 't' first");
    Kernel shared = perThreadKernel();
    shared.buffers[2].scope = MemoryScope::Shared;
    EXPECT_EQ(onlyError(shared),
              "per-thread buffer 'acc' of kernel 'phased' must be a local buffer with a leading thread dimension");
    // the size limit applies to one thread's row
    Kernel big = perThreadKernel();
    big.buffers[2].shape = {64, 16384};  // 64 KiB per thread: still fine
    EXPECT_EQ(onlyError(big), "<ok>");
    big.buffers[2].shape = {64, 16385};
    EXPECT_EQ(onlyError(big), "local buffer 'acc' of kernel 'phased' needs 65540 bytes; the CUDA target keeps local "
                              "buffers in registers/stack (max 65536)");
}

TEST(CudaCodegenErrors, BadParameterIndexAndOptions) {
    Kernel k = oneLoopKernel(ForKind::Serial, 1);
    k.params.push_back(7);
    EXPECT_EQ(onlyError(k), "parameter 1 of kernel 'one_loop' refers to buffer 7, which the kernel does not have");
    const Kernel ok = oneLoopKernel(ForKind::Serial, 1);
    CudaOptions o;
    o.maxThreadsPerBlock = 0;
    EXPECT_EQ(onlyError(ok, o), "maxThreadsPerBlock must be at least 1 (got 0)");
    o.maxThreadsPerBlock = 1024;
    o.maxGridX = 0;
    EXPECT_EQ(onlyError(ok, o), "maxGridX must be at least 1 (got 0)");
}

TEST(CudaCodegenErrors, EveryKernelIsReported) {
    Kernel a = oneLoopKernel(ForKind::Serial, 1), b = oneLoopKernel(ForKind::Serial, 1);
    a.name = "first";
    b.name = "second";
    a.params.push_back(9);
    b.params.push_back(9);
    const Kernel good = elementwiseKernel();
    auto m = generateCuda({&a, &good, &b});
    ASSERT_FALSE(m.ok());
    ASSERT_EQ(m.diagnostics().items().size(), 2u);
    EXPECT_NE(m.diagnostics().items()[0].message.find("kernel 'first'"), std::string::npos);
    EXPECT_NE(m.diagnostics().items()[1].message.find("kernel 'second'"), std::string::npos);
}

TEST(CudaCodegen, HostileNamesStayInComments) {
    Kernel k = stagedKernel();
    k.name = "x\n#include <evil>\\";
    k.opType = "Op\r\n#define a b";
    k.sourceOps = {"a\nint evil1;", "b\\", "c?" "?/", std::string("d\0int evil3;", 12), "*/ int evil4; /*"};
    k.mappings = {"grid\n__global__ void evil5() {}"};
    k.notes = {"note\\", "\xe2\x80\xa8int evil6;"};
    k.buffers[0].name = "in\nint evil7;";
    k.buffers[2].name = "threadIdx";
    const CudaModule m = generateOne(k);
    const std::string& s = m.source.source;
    std::istringstream in(s);
    int lineNo = 0;
    for (std::string l; std::getline(in, l);) {
        ++lineNo;
        ASSERT_TRUE(l.empty() || l.back() != '\\') << "line " << lineNo << ": " << l;
        const auto first = l.find_first_not_of(' ');
        if (first != std::string::npos && l[first] == '#') {
            EXPECT_TRUE(l.rfind("#define INT64_MIN ", 0) == 0 || l.find("#pragma unroll") != std::string::npos) << l;
        }
        for (unsigned char c : l) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "line " << lineNo;
        // evil text appears only after a `//`
        for (const char* evil : {"int evil", "evil5", "#include <evil>", "#define a b"}) {
            const auto at = l.find(evil);
            if (at != std::string::npos) {
                const auto comment = l.find("//");
                EXPECT_TRUE(comment != std::string::npos && comment < at) << l;
            }
        }
    }
    EXPECT_EQ(m.source.entryPoints, std::vector<std::string>{"tk_x_include_evil_"});
    EXPECT_NE(s.find("const float* __restrict__ in_in_int_evil7_,"), std::string::npos) << s;
    EXPECT_NE(s.find("__shared__ float t_threadIdx[100];"), std::string::npos) << s;
}

// ---------------------------------------------------------------------------------------------
// Kernels lowered for the CUDA target
// ---------------------------------------------------------------------------------------------

lower::LowerOptions cudaLowering() {
    lower::LowerOptions o;
    o.target = lower::Target::Cuda;
    return o;
}

/// Extents of the Blocks and Threads loops of a kernel (for cross-checking the launch).
void workerExtents(const lower::Stmt& s, std::int64_t& blocks, std::int64_t& threads) {
    if (!s) return;
    std::int64_t e = 0;
    if (s->kind == lower::StmtKind::For && s->extent.isIntImm(&e)) {
        if (s->forKind == ForKind::Blocks) blocks = std::max(blocks, e);
        if (s->forKind == ForKind::Threads) threads = std::max(threads, e);
    }
    for (const auto& b : s->body) workerExtents(b, blocks, threads);
    workerExtents(s->elseBody, blocks, threads);
}

/// The launch a kernel must get according to the header's rules, from its loops.
CudaLaunch expectedLaunch(const Kernel& k) {
    std::int64_t blocks = 0, threads = 0;
    workerExtents(k.body, blocks, threads);
    CudaLaunch l;
    l.gridX = std::max<std::int64_t>(1, blocks);
    l.blockX = threads == 0 ? 1 : std::min<std::int64_t>(1024, (threads + 31) / 32 * 32);
    return l;
}

TEST(CudaCodegenLowered, ReluGetsBlocksAndThreads) {
    auto r = ir::test::runOne("Relu", {ir::test::in("f32[4,300]")});
    auto lk = lower::lowerNode(r.g, 0, nullptr, cudaLowering());
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
    const CudaModule m = generateOne(lk->kernel);
    ASSERT_EQ(m.launches.size(), 1u);
    // default GPU mapping of [4, 300]: block = spatial(1, 256), grid = spatial(4, 2)
    expectLaunch(m.launches[0], 8, 256, 0);
    checkGolden("cuda/lowered_relu.cu.txt", m.source.source);
}

TEST(CudaCodegenLowered, SeveralOpsGenerateWithConsistentLaunches) {
    struct Case {
        std::string op;
        std::vector<ir::test::In> inputs;
        ir::test::Attrs attrs;
    };
    const std::vector<Case> cases = {
        {"Add", {ir::test::in("f32[2,3,40]"), ir::test::in("f32[40]")}, {}},
        {"Softmax", {ir::test::in("f32[6,500]")}, {}},
        {"MatMul", {ir::test::in("f32[64,32]"), ir::test::in("f32[32,48]")}, {}},
        {"Conv", {ir::test::in("f32[1,3,16,16]"), ir::test::in("f32[8,3,3,3]")}, {{"pads", ir::Attribute::ofInts({1, 1, 1, 1})}}},
        {"MaxPool", {ir::test::in("f32[1,4,8,8]")}, {{"kernel_shape", ir::Attribute::ofInts({2, 2})}, {"strides", ir::Attribute::ofInts({2, 2})}}},
        {"ReduceMean", {ir::test::in("f32[3,7,9]")}, {{"axes", ir::Attribute::ofInts({2})}}},
        {"Cast", {ir::test::in("f16[33]")}, {{"to", ir::Attribute::ofInt(1)}}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.op);
        auto r = ir::test::runOne(c.op, c.inputs, c.attrs);
        ASSERT_EQ(r.error(), "");
        auto lk = lower::lowerNode(r.g, 0, nullptr, cudaLowering());
        ASSERT_TRUE(lk.ok()) << lk.diagnostics().formatAll();
        const CudaModule m = generateOne(lk->kernel);
        ASSERT_EQ(m.launches.size(), 1u);
        const CudaLaunch want = expectedLaunch(lk->kernel);
        EXPECT_EQ(m.launches[0].gridX, want.gridX);
        EXPECT_EQ(m.launches[0].blockX, want.blockX);
        EXPECT_GT(m.launches[0].gridX * m.launches[0].blockX, 1) << "a lowered kernel runs on more than one thread";
        EXPECT_NE(m.source.source.find("__launch_bounds__(" + std::to_string(want.blockX) + ") " + m.source.entryPoints[0] + "("),
                  std::string::npos);
        EXPECT_EQ(m.source.source.find("tsr_unbound"), std::string::npos);
        EXPECT_EQ(m.source.source.find("tsr_buffer_not_in_scope"), std::string::npos);
        EXPECT_EQ(m.source.source.find("#error"), std::string::npos);
    }
}

TEST(CudaCodegenLowered, EverySampleModelGenerates) {
    int models = 0, kernels = 0;
    for (const auto& e : std::filesystem::directory_iterator(TESSERA_SAMPLES)) {
        const auto ext = e.path().extension();
        if (ext != ".onnx" && ext != ".tsr") continue;
        SCOPED_TRACE(e.path().filename().string());
        auto model = pipeline::loadModel(e.path().string());
        ASSERT_TRUE(model.ok()) << model.diagnostics().formatAll();
        pipeline::CompileOptions co;
        co.target = lower::Target::Cuda;
        co.fallbackReference = true;
        auto cm = pipeline::compileModel(*model, pipeline::defaultInputs(model->graph), co);
        ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
        std::vector<const Kernel*> ks;
        for (const auto& st : cm->steps)
            if (st.kind == pipeline::StepKind::Kernel) ks.push_back(&st.kernel);
        auto m = generateCuda(ks);
        ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
        ASSERT_EQ(m->launches.size(), ks.size());
        for (std::size_t i = 0; i < ks.size(); ++i) {
            const CudaLaunch want = expectedLaunch(*ks[i]);
            EXPECT_EQ(m->launches[i].gridX, want.gridX) << ks[i]->name;
            EXPECT_EQ(m->launches[i].blockX, want.blockX) << ks[i]->name;
            EXPECT_NE(m->source.source.find(" " + m->source.entryPoints[i] + "("), std::string::npos);
        }
        EXPECT_EQ(m->source.source.find("#error"), std::string::npos);
        EXPECT_EQ(m->source.source.find("tsr_buffer_not_in_scope"), std::string::npos);
        ++models;
        kernels += static_cast<int>(ks.size());
    }
    EXPECT_GE(models, 12);
    EXPECT_GE(kernels, 100);
}

// ---------------------------------------------------------------------------------------------
// NVRTC: the generated modules compile to PTX and CUBIN for sm_90 (and every sample for sm_80)
// ---------------------------------------------------------------------------------------------

/// Compiles `source` for `arch` into a fresh cache directory; no warnings allowed. Returns the PTX.
std::string compileFor(const std::string& source, const std::string& arch) {
    TempDir cache;
    runtime::cuda::CudaCompileOptions o;
    o.arch = arch;
    o.cacheDir = cache.path().string();
    auto r = runtime::cuda::compileCuda(source, o);
    EXPECT_TRUE(r.ok()) << r.diagnostics().formatAll();
    if (!r.ok()) return {};
    EXPECT_TRUE(r.diagnostics().empty()) << r.diagnostics().formatAll();  // no warnings either
    EXPECT_FALSE(r->cubin.empty());
    EXPECT_NE(r->ptx.find(".target " + arch), std::string::npos);
    return r->ptx;
}

std::string compileForSm90(const std::string& source) { return compileFor(source, "sm_90"); }

void expectEntries(const std::string& ptx, const std::vector<std::string>& entries) {
    for (const auto& e : entries)
        if (!e.empty()) {
            EXPECT_NE(ptx.find(".entry " + e + "("), std::string::npos) << e;
        }
}

#define SKIP_WITHOUT_NVRTC()                                                                            \
    do {                                                                                              \
        auto info = runtime::cuda::nvrtcInfo();                                                       \
        if (!info.ok()) GTEST_SKIP() << "NVRTC is not loadable: " << info.diagnostics().formatAll(); \
    } while (0)

TEST(CudaCodegenNvrtc, HandBuiltKernelsCompile) {
    SKIP_WITHOUT_NVRTC();
    const auto a = elementwiseKernel(), b = stagedKernel(), c = halfKernel(), d = serialKernel(), e = perThreadKernel();
    auto m = generateCuda({&a, &b, &c, &d, &e});
    ASSERT_TRUE(m.ok());
    const std::string ptx = compileForSm90(m->source.source);
    expectEntries(ptx, m->source.entryPoints);
    // the staged kernel (and only it) reads shared memory and synchronises
    const std::string staged = compileForSm90(generateOne(b).source.source);
    EXPECT_NE(staged.find("ld.shared"), std::string::npos);
    EXPECT_NE(staged.find("st.shared"), std::string::npos);
    EXPECT_NE(staged.find("bar.sync"), std::string::npos);
    const std::string plain = compileForSm90(generateOne(a).source.source);
    EXPECT_EQ(plain.find("bar.sync"), std::string::npos);
    EXPECT_NE(plain.find(".maxntid 256, 1, 1"), std::string::npos);  // __launch_bounds__(256)
}

TEST(CudaCodegenNvrtc, EverySampleModelCompiles) {
    SKIP_WITHOUT_NVRTC();
    int models = 0;
    for (const auto& e : std::filesystem::directory_iterator(TESSERA_SAMPLES)) {
        const auto ext = e.path().extension();
        if (ext != ".onnx" && ext != ".tsr") continue;
        SCOPED_TRACE(e.path().filename().string());
        auto model = pipeline::loadModel(e.path().string());
        ASSERT_TRUE(model.ok()) << model.diagnostics().formatAll();
        pipeline::CompileOptions co;
        co.target = lower::Target::Cuda;
        co.fallbackReference = true;
        auto cm = pipeline::compileModel(*model, pipeline::defaultInputs(model->graph), co);
        ASSERT_TRUE(cm.ok()) << cm.diagnostics().formatAll();
        std::vector<const Kernel*> ks;
        for (const auto& st : cm->steps)
            if (st.kind == pipeline::StepKind::Kernel) ks.push_back(&st.kernel);
        auto m = generateCuda(ks);
        ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
        // The H100/H200's architecture and the A100's (the oldest the fusion profiles name).
        for (const char* arch : {"sm_90", "sm_80"}) {
            SCOPED_TRACE(arch);
            const std::string ptx = compileFor(m->source.source, arch);
            expectEntries(ptx, m->source.entryPoints);
        }
        ++models;
    }
    EXPECT_GE(models, 12);
}

}  // namespace
}  // namespace tessera::test
