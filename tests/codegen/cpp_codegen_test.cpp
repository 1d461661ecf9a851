// OpenMP C++ generator: golden text of hand-written kernels, and the generated code compiled with
// the system compiler, run, and compared with the kernel interpreter and hand-computed results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "core/codegen/cpp/cpp_codegen.h"
#include "tests/codegen/compile_util.h"
#include "tests/codegen/test_kernels.h"
#include "tests/core/golden.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::test {
namespace {

using codegen::CppOptions;
using codegen::GeneratedSource;
using codegen::generateCpp;
using lower::Intrinsic;

std::vector<float> randomFloats(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

ir::TensorData floats(const std::vector<float>& v, std::vector<std::int64_t> dims) {
    return ir::TensorData::fromFloats(v, std::move(dims));
}

std::vector<float> asFloats(const ir::TensorData& t) {
    std::vector<float> v(static_cast<std::size_t>(t.numElements()));
    std::memcpy(v.data(), t.bytes.data(), v.size() * sizeof(float));
    return v;
}

/// Runs entry point `fn` on tensors (in params order); outputs are sized from the kernel.
void runCompiled(CompiledModule::Entry fn, const lower::Kernel& k, std::vector<ir::TensorData*> params) {
    std::vector<void*> args;
    for (std::size_t i = 0; i < params.size(); ++i) {
        const auto& b = k.buffers[static_cast<std::size_t>(k.params[i])];
        if (b.role == lower::BufferRole::Output) {
            params[i]->dtype = b.dtype;
            params[i]->dims = b.shape;
            params[i]->bytes.assign(static_cast<std::size_t>(b.bytes()), 0);
        }
        args.push_back(params[i]->bytes.data());
    }
    fn(args.data());
}

// ---------------------------------------------------------------------------------------------
// Golden text
// ---------------------------------------------------------------------------------------------

TEST(CppCodegen, GoldenVectorAdd) {
    const auto k = vectorAddKernel();
    const GeneratedSource g = generateCpp({&k});
    ASSERT_EQ(g.entryPoints, std::vector<std::string>{"tk_vector_add"});
    checkGolden("codegen/vector_add.cpp.txt", g.source);
}

TEST(CppCodegen, GoldenTransposeCollapsesNestedParallelLoops) {
    const auto k = transposeKernel();
    const GeneratedSource g = generateCpp({&k});
    checkGolden("codegen/transpose.cpp.txt", g.source);
    EXPECT_NE(g.source.find("#pragma omp parallel for collapse(2)\n"), std::string::npos);
}

TEST(CppCodegen, GoldenMatmul) {
    const auto k = matmulKernel(4, 3, 8);
    const GeneratedSource g = generateCpp({&k});
    checkGolden("codegen/matmul.cpp.txt", g.source);
}

TEST(CppCodegen, GoldenPaddedConv) {
    const auto k = paddedConvKernel(2, 3, 5, 4);
    const GeneratedSource g = generateCpp({&k});
    checkGolden("codegen/conv3x3.cpp.txt", g.source);
}

TEST(CppCodegen, GoldenWithoutOpenMPAndFullParentheses) {
    const auto k = paddedConvKernel(2, 3, 5, 4);
    CppOptions o;
    o.openmp = false;
    o.fullParens = true;
    const GeneratedSource g = generateCpp({&k}, o);
    checkGolden("codegen/conv3x3_serial_full_parens.cpp.txt", g.source);
    EXPECT_EQ(g.source.find("#pragma omp"), std::string::npos);
}

TEST(CppCodegen, Deterministic) {
    const auto a = matmulKernel(4, 3, 8), b = paddedConvKernel(2, 3, 5, 4);
    EXPECT_EQ(generateCpp({&a, &b}).source, generateCpp({&a, &b}).source);
}

TEST(CppCodegen, SourceMapCoversEachKernelFunction) {
    const auto a = vectorAddKernel(), b = transposeKernel();
    const GeneratedSource g = generateCpp({&a, &b});
    ASSERT_EQ(g.sourceMap.size(), 2u);
    std::vector<std::string> lines;
    std::istringstream in(g.source);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (int i = 0; i < 2; ++i) {
        const auto& e = g.sourceMap[static_cast<std::size_t>(i)];
        EXPECT_EQ(e.kernel, i);
        EXPECT_EQ(e.node, i == 0 ? "Add_0" : "Transpose_1");
        ASSERT_GE(e.firstLine, 1);
        ASSERT_LE(e.lastLine, static_cast<int>(lines.size()));
        EXPECT_EQ(lines[static_cast<std::size_t>(e.firstLine - 1)].rfind("// ----", 0), 0u);
        EXPECT_EQ(lines[static_cast<std::size_t>(e.firstLine)], "// Kernel " + g.entryPoints[static_cast<std::size_t>(i)] +
                                                                  " (IR name \"" + (i == 0 ? "vector_add" : "transpose") + "\")");
        EXPECT_EQ(lines[static_cast<std::size_t>(e.lastLine - 1)], "}");
    }
    EXPECT_LT(g.sourceMap[0].lastLine, g.sourceMap[1].firstLine);
}

TEST(CppCodegen, FloatImmediatesRoundTripAndSpecialValues) {
    Kernel k;
    k.name = "imm";
    const int y = addParam(k, "Y", DType::F32, {6}, BufferRole::Output);
    const int z = addParam(k, "Z", DType::F64, {2}, BufferRole::Output);
    std::vector<Stmt> s;
    const double vals[] = {0.1, 1.0, -2.5, 16777217.0, std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()};
    for (int i = 0; i < 6; ++i) s.push_back(lower::store(y, {lower::intImm(i)}, lower::floatImm(vals[i])));
    s.push_back(lower::store(z, {lower::intImm(0)}, lower::floatImm(0.1, DType::F64)));
    s.push_back(lower::store(z, {lower::intImm(1)}, lower::floatImm(-std::numeric_limits<double>::infinity(), DType::F64)));
    k.body = lower::seq(s);
    const std::string src = generateCpp({&k}).source;
    EXPECT_NE(src.find("out_Y[0] = 0.1f;"), std::string::npos);
    EXPECT_NE(src.find("out_Y[1] = 1.0f;"), std::string::npos);
    EXPECT_NE(src.find("out_Y[2] = -2.5f;"), std::string::npos);
    EXPECT_NE(src.find("out_Y[3] = 16777216.0f;"), std::string::npos);  // the f32 value
    EXPECT_NE(src.find("out_Y[4] = std::numeric_limits<float>::infinity();"), std::string::npos);
    EXPECT_NE(src.find("out_Y[5] = std::numeric_limits<float>::quiet_NaN();"), std::string::npos);
    EXPECT_NE(src.find("out_Z[0] = 0.1;"), std::string::npos);
    EXPECT_NE(src.find("out_Z[1] = -std::numeric_limits<double>::infinity();"), std::string::npos);
}

TEST(CppCodegen, MinimalParenthesesKeepMeaning) {
    Kernel k;
    k.name = "parens";
    const int x = addParam(k, "X", DType::I64, {4}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::I64, {4}, BufferRole::Output);
    auto L = [&](int i) { return lower::load(x, DType::I64, {lower::intImm(i)}); };
    auto neg = [](Expr e) { return lower::unary(lower::UnaryOp::Neg, std::move(e)); };
    auto eq = [](Expr a, Expr b) { return lower::binary(lower::BinaryOp::Eq, std::move(a), std::move(b)); };
    std::vector<Stmt> s;
    s.push_back(lower::store(y, {lower::intImm(0)}, L(0) - (L(1) - L(2))));
    s.push_back(lower::store(y, {lower::intImm(1)}, (L(0) + L(1)) * L(2) - L(3) / (L(1) * L(2))));
    s.push_back(lower::store(y, {lower::intImm(2)},
                             lower::select((L(0) < L(1) && L(1) < L(2)) || L(3) > L(0), neg(L(1)), neg(neg(L(2))))));
    s.push_back(lower::store(y, {lower::intImm(3)}, lower::cast(lower::cast(eq(L(0), L(1)), DType::I64) < L(2), DType::I64)));
    k.body = lower::seq(s);
    const std::string src = generateCpp({&k}).source;
    EXPECT_NE(src.find("out_Y[0] = in_X[0] - (in_X[1] - in_X[2]);"), std::string::npos) << src;
    EXPECT_NE(src.find("out_Y[1] = (in_X[0] + in_X[1]) * in_X[2] - in_X[3] / (in_X[1] * in_X[2]);"), std::string::npos);
    EXPECT_NE(src.find("out_Y[2] = (in_X[0] < in_X[1] && in_X[1] < in_X[2]) || in_X[3] > in_X[0] ? -in_X[1] : -(-in_X[2]);"),
              std::string::npos);
    EXPECT_NE(src.find("out_Y[3] = (int64_t)((int64_t)(in_X[0] == in_X[1]) < in_X[2]);"), std::string::npos);
}

TEST(CppCodegen, LoopPragmas) {
    Kernel k;
    k.name = "pragmas";
    const int y = addParam(k, "Y", DType::F32, {4, 100, 8}, BufferRole::Output);
    auto a = k.newVar("a"), b = k.newVar("b"), c = k.newVar("c"), d = k.newVar("d");
    Stmt st = lower::store(y, {lower::varRef(a), lower::varRef(b), lower::varRef(c)}, lower::floatImm(1.0));
    // parallel a { unroll(0) b (extent 100 -> capped at 64) { unroll(3) c { parallel d (plain) } } }
    Stmt inner = lower::forLoop(d, lower::intImm(1), st, ForKind::Parallel);
    k.body = lower::forLoop(a, lower::intImm(4),
                            lower::forLoop(b, lower::intImm(100), lower::forLoop(c, lower::intImm(8), inner, ForKind::Unroll, 3),
                                           ForKind::Unroll, 0),
                            ForKind::Parallel);
    const std::string src = generateCpp({&k}).source;
    EXPECT_NE(src.find("    #pragma omp parallel for\n    for (int64_t a = 0; a < 4; ++a) {\n"
                       "        #pragma GCC unroll 64\n        for (int64_t b = 0; b < 100; ++b) {\n"
                       "            #pragma GCC unroll 3\n            for (int64_t c = 0; c < 8; ++c) {\n"
                       "                for (int64_t d = 0; d < 1; ++d) {\n"),
              std::string::npos)
        << src;
    EXPECT_EQ(src.find("collapse"), std::string::npos);
}

TEST(CppCodegen, CollapseStopsAtDependentExtent) {
    Kernel k;
    k.name = "triangle";
    const int y = addParam(k, "Y", DType::F32, {6, 6}, BufferRole::Output);
    auto i = k.newVar("i"), j = k.newVar("j");
    k.body = lower::forLoop(i, lower::intImm(6),
                            lower::forLoop(j, lower::varRef(i) + 1, lower::store(y, {lower::varRef(i), lower::varRef(j)}, lower::floatImm(1.0)),
                                           ForKind::Parallel),
                            ForKind::Parallel);
    const std::string src = generateCpp({&k}).source;
    EXPECT_NE(src.find("#pragma omp parallel for\n"), std::string::npos);
    EXPECT_EQ(src.find("collapse"), std::string::npos);
    EXPECT_NE(src.find("for (int64_t j = 0; j < i + 1; ++j) {"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Compiled and run
// ---------------------------------------------------------------------------------------------

/// f16 kernel: Y[i] = f16(X[i] * 1.5 + 0.25), BF16 copy Z[i] = bf16(X[i]), and an integer kernel.
Kernel halfKernel() {
    Kernel k;
    k.name = "half_ops";
    const int x = addParam(k, "X", DType::F16, {64}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F16, {64}, BufferRole::Output);
    const int z = addParam(k, "Z", DType::BF16, {64}, BufferRole::Output);
    const int w = addParam(k, "W", DType::F32, {64}, BufferRole::Output);
    auto i = k.newVar("i");
    Expr ei = lower::varRef(i);
    Expr xv = lower::load(x, DType::F16, {ei});
    k.body = lower::forLoop(
        i, lower::intImm(64),
        lower::seq({lower::store(y, {ei}, xv * lower::floatImm(1.5, DType::F16) + lower::floatImm(0.25, DType::F16)),
                    lower::store(z, {ei}, lower::cast(xv, DType::BF16)),
                    lower::store(w, {ei}, lower::cast(lower::cast(lower::cast(xv, DType::F32) * lower::floatImm(1000.0), DType::F16), DType::F32))}),
        ForKind::Parallel);
    return k;
}

Kernel integerKernel() {
    Kernel k;
    k.name = "int_ops";
    const int x = addParam(k, "X", DType::I64, {16}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::I64, {16, 6}, BufferRole::Output);
    const int b = addParam(k, "M", DType::Bool, {16}, BufferRole::Output);
    const int s = addParam(k, "S", DType::I32, {16}, BufferRole::Output);
    auto i = k.newVar("i");
    Expr ei = lower::varRef(i);
    Expr xv = lower::load(x, DType::I64, {ei});
    Expr three = lower::intImm(3), neg = lower::intImm(-4);
    auto at = [&](int c) { return std::vector<Expr>{ei, lower::intImm(c)}; };
    k.body = lower::forLoop(
        i, lower::intImm(16),
        lower::seq({
            lower::store(y, at(0), lower::binary(lower::BinaryOp::FloorDiv, xv, three)),
            lower::store(y, at(1), lower::binary(lower::BinaryOp::FloorMod, xv, neg)),
            lower::store(y, at(2), xv / three + xv % neg),
            lower::store(y, at(3), lower::minOf(xv, lower::intImm(2)) * lower::maxOf(xv, lower::intImm(-1))),
            lower::store(y, at(4), lower::select(xv < lower::intImm(0), lower::call(Intrinsic::Abs, {xv}), xv * lower::intImm(5000000000LL))),
            lower::store(y, at(5), lower::cast(lower::cast(xv, DType::F32) * lower::floatImm(2.75), DType::I64)),
            lower::store(b, {ei}, xv > lower::intImm(2) || lower::binary(lower::BinaryOp::Eq, xv, lower::intImm(-3))),
            lower::store(s, {ei}, lower::cast(xv * lower::intImm(1000000000), DType::I32)),
        }),
        ForKind::Vectorize);
    return k;
}

/// Every intrinsic on f32 (and a few on f64).
Kernel mathKernel() {
    Kernel k;
    k.name = "math";
    const int x = addParam(k, "X", DType::F32, {32}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {32, 17}, BufferRole::Output);
    const int z = addParam(k, "Z", DType::F64, {32, 3}, BufferRole::Output);
    auto i = k.newVar("i"), xv = k.newVar("x", DType::F32);
    Expr ei = lower::varRef(i), e = lower::varRef(xv);
    std::vector<Stmt> s;
    const Intrinsic unaryFns[] = {Intrinsic::Exp, Intrinsic::Log, Intrinsic::Sqrt, Intrinsic::Rsqrt, Intrinsic::Sin,
                                  Intrinsic::Cos, Intrinsic::Tan, Intrinsic::Tanh, Intrinsic::Sigmoid, Intrinsic::Erf,
                                  Intrinsic::Abs, Intrinsic::Floor, Intrinsic::Ceil, Intrinsic::Round};
    int c = 0;
    Expr pos = lower::call(Intrinsic::Abs, {e}) + lower::floatImm(0.5);
    for (auto f : unaryFns) {
        const bool needsPositive = f == Intrinsic::Log || f == Intrinsic::Sqrt || f == Intrinsic::Rsqrt;
        Expr arg = needsPositive ? pos : e * lower::floatImm(f == Intrinsic::Tan ? 0.5 : 3.0);  // tan: away from its poles
        s.push_back(lower::store(y, {ei, lower::intImm(c++)}, lower::call(f, {arg})));
    }
    s.push_back(lower::store(y, {ei, lower::intImm(c++)}, lower::call(Intrinsic::Pow, {pos, e})));
    s.push_back(lower::store(y, {ei, lower::intImm(c++)}, lower::call(Intrinsic::Atan2, {e, pos})));
    s.push_back(lower::store(y, {ei, lower::intImm(c++)}, lower::call(Intrinsic::Fma, {e, e, lower::unary(lower::UnaryOp::Neg, e)})));
    Expr d = lower::cast(e, DType::F64);
    s.push_back(lower::store(z, {ei, lower::intImm(0)}, lower::call(Intrinsic::Exp, {d})));
    s.push_back(lower::store(z, {ei, lower::intImm(1)}, lower::binary(lower::BinaryOp::FloorMod, d, lower::floatImm(0.3, DType::F64))));
    s.push_back(lower::store(z, {ei, lower::intImm(2)}, lower::binary(lower::BinaryOp::Mod, d, lower::floatImm(0.3, DType::F64))));
    k.body = lower::forLoop(i, lower::intImm(32), lower::let(xv, lower::load(x, DType::F32, {ei}), lower::seq(s)), ForKind::Parallel);
    return k;
}

/// Y[i, j] = X[i, n - 1 - j] through a Local row buffer of 20000 floats (80 KB: heap-allocated)
/// and a 4-element Shared scratch (stack array) holding the row's first values.
Kernel reverseRowsKernel() {
    Kernel k;
    k.name = "reverse_rows";
    const std::int64_t n = 20000;
    const int x = addParam(k, "X", DType::F32, {3, n}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {3, n}, BufferRole::Output);
    const int row = addTemp(k, "row", DType::F32, {n});
    const int head = addTemp(k, "head", DType::F32, {4}, MemoryScope::Shared);
    auto i = k.newVar("i"), j = k.newVar("j"), q = k.newVar("j");
    Expr ei = lower::varRef(i), ej = lower::varRef(j), eq = lower::varRef(q);
    Stmt fill = lower::forLoop(j, lower::intImm(n), lower::store(row, {ej}, lower::load(x, DType::F32, {ei, ej})));
    Stmt heads = lower::forLoop(j, lower::intImm(4), lower::store(head, {ej}, lower::load(row, DType::F32, {ej})));
    Expr rev = lower::load(row, DType::F32, {lower::intImm(n - 1) - eq});
    Stmt out = lower::forLoop(q, lower::intImm(n),
                              lower::store(y, {ei, eq}, lower::select(eq >= lower::intImm(n - 4),
                                                                      lower::load(head, DType::F32, {lower::intImm(n - 1) - eq}), rev)));
    k.body = lower::forLoop(i, lower::intImm(3), lower::allocate(row, lower::allocate(head, lower::seq({fill, heads, lower::barrier(), out}))),
                            ForKind::Parallel);
    return k;
}

TEST(CppCodegen, LocalArraysOnStackOrHeap) {
    const auto k = reverseRowsKernel();
    const std::string src = generateCpp({&k}).source;
    EXPECT_NE(src.find("        std::unique_ptr<float[]> t_row_heap(new float[20000]);  // local f32[20000]\n"
                       "        float* __restrict__ t_row = t_row_heap.get();\n"
                       "        float t_head[4];  // shared f32[4]\n"),
              std::string::npos)
        << src;
    EXPECT_NE(src.find("out_Y[i * 20000 + j] = j >= 19996 ? t_head[19999 - j] : t_row[19999 - j];"), std::string::npos) << src;
    EXPECT_EQ(src.find("j_2"), std::string::npos);  // sequential loops reuse the name
    EXPECT_NE(src.find("// barrier: no-op"), std::string::npos);
}

class CompiledKernels : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (!haveCompiler()) return;
        s_kernels = new std::vector<Kernel>{vectorAddKernel(), transposeKernel(), matmulKernel(13, 7, 19),
                                            paddedConvKernel(3, 4, 9, 6), broadcastAddKernel(), halfKernel(),
                                            integerKernel(), mathKernel(), reverseRowsKernel()};
        std::vector<const Kernel*> ptrs;
        for (const auto& k : *s_kernels) ptrs.push_back(&k);
        s_source = new GeneratedSource(generateCpp(ptrs));
        s_module = new CompiledModule(s_source->source, "-Wall -Wextra -Werror");
    }
    static void TearDownTestSuite() {
        delete s_module;
        delete s_source;
        delete s_kernels;
        s_module = nullptr;
        s_source = nullptr;
        s_kernels = nullptr;
    }
    void SetUp() override {
        if (!haveCompiler()) GTEST_SKIP() << "no C++ compiler (c++) on PATH: generated code not compiled";
        ASSERT_TRUE(s_module->ok()) << s_module->log();
    }
    static const Kernel& kernel(std::size_t i) { return (*s_kernels)[i]; }
    static CompiledModule::Entry entry(std::size_t i) {
        auto fn = s_module->entry(s_source->entryPoints[i]);
        EXPECT_NE(fn, nullptr) << s_source->entryPoints[i];
        return fn;
    }
    /// Runs kernel i compiled and interpreted; returns {compiled, interpreted} outputs.
    static void runBoth(std::size_t i, std::vector<ir::TensorData> inputs, std::vector<ir::TensorData>& compiled,
                        std::vector<ir::TensorData>& interpreted) {
        const Kernel& k = kernel(i);
        const std::size_t outputs = k.params.size() - inputs.size();
        compiled.assign(outputs, {});
        interpreted.assign(outputs, {});
        std::vector<ir::TensorData*> a, b;
        for (auto& t : inputs) a.push_back(&t), b.push_back(&t);
        for (std::size_t o = 0; o < outputs; ++o) a.push_back(&compiled[o]), b.push_back(&interpreted[o]);
        auto fn = entry(i);
        ASSERT_NE(fn, nullptr);
        runCompiled(fn, k, a);
        auto r = lower::evalKernel(k, b);
        ASSERT_TRUE(r.ok()) << r.diagnostics().items().front().message;
    }

    static std::vector<Kernel>* s_kernels;
    static GeneratedSource* s_source;
    static CompiledModule* s_module;
};
std::vector<Kernel>* CompiledKernels::s_kernels = nullptr;
GeneratedSource* CompiledKernels::s_source = nullptr;
CompiledModule* CompiledKernels::s_module = nullptr;

TEST_F(CompiledKernels, ThreadControlFunctions) {
    auto set = reinterpret_cast<void (*)(int)>(s_module->symbol("tessera_set_num_threads"));
    auto get = reinterpret_cast<int (*)(void)>(s_module->symbol("tessera_get_max_threads"));
    ASSERT_NE(set, nullptr);
    ASSERT_NE(get, nullptr);
    set(3);
    EXPECT_EQ(get(), 3);
    set(1);
    EXPECT_EQ(get(), 1);
    set(2);
}

TEST_F(CompiledKernels, VectorAdd) {
    const auto a = randomFloats(1000, 1), b = randomFloats(1000, 2);
    std::vector<ir::TensorData> c, e;
    runBoth(0, {floats(a, {1000}), floats(b, {1000})}, c, e);
    const auto got = asFloats(c[0]);
    for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ(got[i], a[i] + b[i]) << i;
    EXPECT_EQ(c[0].bytes, e[0].bytes);
}

TEST_F(CompiledKernels, Transpose) {
    std::vector<float> x(35);
    for (int i = 0; i < 35; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i);
    std::vector<ir::TensorData> c, e;
    runBoth(1, {floats(x, {5, 7})}, c, e);
    const auto y = asFloats(c[0]);
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 7; ++j) ASSERT_EQ(y[static_cast<std::size_t>(j * 5 + i)], static_cast<float>(i * 7 + j));
    EXPECT_EQ(c[0].bytes, e[0].bytes);
}

TEST_F(CompiledKernels, Matmul) {
    const int m = 13, n = 7, kk = 19;
    const auto a = randomFloats(m * kk, 3), b = randomFloats(kk * n, 4);
    std::vector<ir::TensorData> c, e;
    runBoth(2, {floats(a, {m, kk}), floats(b, {kk, n})}, c, e);
    const auto got = asFloats(c[0]), ref = asFloats(e[0]);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0;
            for (int r = 0; r < kk; ++r) s += static_cast<double>(a[static_cast<std::size_t>(i * kk + r)]) * b[static_cast<std::size_t>(r * n + j)];
            const auto idx = static_cast<std::size_t>(i * n + j);
            ASSERT_NEAR(got[idx], s, 1e-5) << i << "," << j;
            ASSERT_NEAR(ref[idx], s, 1e-6) << i << "," << j;
        }
}

TEST_F(CompiledKernels, PaddedConv) {
    const int c = 3, oc = 4, h = 9, w = 6;
    const auto x = randomFloats(c * h * w, 5), wt = randomFloats(oc * c * 9, 6), bias = randomFloats(oc, 7);
    std::vector<ir::TensorData> out, e;
    runBoth(3, {floats(x, {1, c, h, w}), floats(wt, {oc, c, 3, 3}), floats(bias, {oc})}, out, e);
    const auto got = asFloats(out[0]), ref = asFloats(e[0]);
    for (int o = 0; o < oc; ++o)
        for (int y = 0; y < h; ++y)
            for (int xx = 0; xx < w; ++xx) {
                double s = bias[static_cast<std::size_t>(o)];
                for (int ic = 0; ic < c; ++ic)
                    for (int kh = 0; kh < 3; ++kh)
                        for (int kw = 0; kw < 3; ++kw) {
                            const int ih = y + kh - 1, iw = xx + kw - 1;
                            if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                            s += static_cast<double>(x[static_cast<std::size_t>((ic * h + ih) * w + iw)]) *
                                 wt[static_cast<std::size_t>(((o * c + ic) * 3 + kh) * 3 + kw)];
                        }
                const auto idx = static_cast<std::size_t>((o * h + y) * w + xx);
                ASSERT_NEAR(got[idx], s, 1e-5);
                ASSERT_NEAR(ref[idx], s, 1e-6);
            }
}

TEST_F(CompiledKernels, BroadcastAdd) {
    const auto a = randomFloats(24, 8), b = std::vector<float>{10.0f, 20.0f, 30.0f};
    std::vector<ir::TensorData> c, e;
    runBoth(4, {floats(a, {2, 3, 4}), floats(b, {3, 1})}, c, e);
    const auto got = asFloats(c[0]);
    for (int i = 0; i < 24; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], a[static_cast<std::size_t>(i)] + b[static_cast<std::size_t>((i / 4) % 3)]);
    EXPECT_EQ(c[0].bytes, e[0].bytes);
}

TEST_F(CompiledKernels, HalfAndBfloat16) {
    std::vector<std::uint16_t> bits = {0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x7c00,
                                       0xfc00, 0x3555, 0x0200, 0x4000, 0x5a3c, 0x1234};
    for (std::uint16_t v = 0x2000; bits.size() < 64; v = static_cast<std::uint16_t>(v + 0x0377)) bits.push_back(v);
    ir::TensorData x;
    x.dtype = DType::F16;
    x.dims = {64};
    x.bytes.resize(128);
    std::memcpy(x.bytes.data(), bits.data(), 128);
    std::vector<ir::TensorData> c, e;
    runBoth(5, {x}, c, e);
    for (std::size_t i = 0; i < 64; ++i) {
        const float xf = lower::halfBitsToFloat(bits[i]);
        std::uint16_t y, z, ye, ze;
        std::memcpy(&y, c[0].bytes.data() + 2 * i, 2);
        std::memcpy(&z, c[1].bytes.data() + 2 * i, 2);
        std::memcpy(&ye, e[0].bytes.data() + 2 * i, 2);
        std::memcpy(&ze, e[1].bytes.data() + 2 * i, 2);
        EXPECT_EQ(y, lower::floatToHalfBits(xf * 1.5f + 0.25f)) << i;
        EXPECT_EQ(y, ye) << i;  // f32 arithmetic (C) and double arithmetic (interpreter) round alike here
        EXPECT_EQ(z, lower::floatToBf16Bits(xf)) << i;
        EXPECT_EQ(z, ze) << i;
        float w, we;
        std::memcpy(&w, c[2].bytes.data() + 4 * i, 4);
        std::memcpy(&we, e[2].bytes.data() + 4 * i, 4);
        EXPECT_EQ(std::isnan(w), std::isnan(we)) << i;
        if (!std::isnan(w)) {
            EXPECT_EQ(w, we) << i;
        }
    }
    // spot values: 1.0 * 1.5 + 0.25 = 1.75 (0x3f00); 65504 * 1000 overflows f16 to +inf
    std::uint16_t y5;
    std::memcpy(&y5, c[0].bytes.data() + 2 * 5, 2);
    EXPECT_EQ(y5, 0x3f00);
    float w7;
    std::memcpy(&w7, c[2].bytes.data() + 4 * 7, 4);
    EXPECT_TRUE(std::isinf(w7) && w7 > 0);
}

TEST_F(CompiledKernels, IntegerSemantics) {
    std::vector<std::int64_t> xs;
    for (int i = -8; i < 8; ++i) xs.push_back(i);
    std::vector<ir::TensorData> c, e;
    runBoth(6, {ir::TensorData::fromInts(xs, {16})}, c, e);
    EXPECT_EQ(c[0].bytes, e[0].bytes);
    EXPECT_EQ(c[1].bytes, e[1].bytes);
    EXPECT_EQ(c[2].bytes, e[2].bytes);
    const auto y = c[0].toInts();
    for (std::size_t i = 0; i < 16; ++i) {
        const std::int64_t x = xs[i];
        const std::int64_t fd = x >= 0 ? x / 3 : -((-x + 2) / 3);
        EXPECT_EQ(y[i * 6 + 0], fd) << x;
        std::int64_t fm = x % -4;
        if (fm > 0) fm -= 4;
        EXPECT_EQ(y[i * 6 + 1], fm) << x;
        EXPECT_EQ(y[i * 6 + 2], x / 3 + x % -4) << x;
        EXPECT_EQ(y[i * 6 + 3], std::min<std::int64_t>(x, 2) * std::max<std::int64_t>(x, -1)) << x;
        EXPECT_EQ(y[i * 6 + 4], x < 0 ? -x : x * 5000000000LL) << x;
        EXPECT_EQ(y[i * 6 + 5], static_cast<std::int64_t>(static_cast<float>(x) * 2.75f)) << x;
        EXPECT_EQ(c[1].bytes[i], (x > 2 || x == -3) ? 1 : 0) << x;
    }
}

TEST_F(CompiledKernels, MathIntrinsics) {
    const auto x = randomFloats(32, 9, -2.0f, 2.0f);
    std::vector<ir::TensorData> c, e;
    runBoth(7, {floats(x, {32})}, c, e);
    const auto got = asFloats(c[0]), ref = asFloats(e[0]);
    for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], ref[i], 2e-5 * std::max(1.0f, std::fabs(ref[i]))) << "column " << i % 17 << " row " << i / 17;
    // hand-checked columns: 0 exp(3x), 8 sigmoid(3x), 13 round(3x) half-to-even, 16 fma(x, x, -x)
    for (std::size_t r = 0; r < 32; ++r) {
        const double xv = x[r];
        EXPECT_NEAR(got[r * 17 + 0], std::exp(3 * xv), 1e-5 * std::exp(3 * xv));
        EXPECT_NEAR(got[r * 17 + 8], 1 / (1 + std::exp(-3 * xv)), 1e-6);
        EXPECT_EQ(got[r * 17 + 13], std::nearbyint(static_cast<float>(xv) * 3.0f));
        EXPECT_NEAR(got[r * 17 + 16], xv * xv - xv, 1e-6);
    }
    std::vector<double> z(96), ze(96);
    std::memcpy(z.data(), c[1].bytes.data(), 96 * 8);
    std::memcpy(ze.data(), e[1].bytes.data(), 96 * 8);
    for (std::size_t i = 0; i < 96; ++i) ASSERT_NEAR(z[i], ze[i], 1e-12) << i;
    for (std::size_t r = 0; r < 32; ++r) {
        EXPECT_GE(z[r * 3 + 1], 0.0);  // floormod by a positive divisor is never negative
        EXPECT_LT(z[r * 3 + 1], 0.3);
    }
}

TEST_F(CompiledKernels, LocalAndSharedArrays) {
    const auto x = randomFloats(3 * 20000, 10);
    std::vector<ir::TensorData> c, e;
    runBoth(8, {floats(x, {3, 20000})}, c, e);
    const auto got = asFloats(c[0]);
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 20000; ++j) ASSERT_EQ(got[i * 20000 + j], x[i * 20000 + 19999 - j]) << i << "," << j;
    EXPECT_EQ(c[0].bytes, e[0].bytes);
}

}  // namespace
}  // namespace tessera::test
