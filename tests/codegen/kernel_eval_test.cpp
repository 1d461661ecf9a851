// Kernel IR interpreter: results, dtype semantics and the errors it reports.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/codegen/test_kernels.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::test {
namespace {

using lower::evalKernel;

std::string firstError(const support::Expected<lower::EvalStats>& r) {
    if (r.ok() || r.diagnostics().items().empty()) return {};
    return r.diagnostics().items().front().message;
}

TEST(KernelEval, MatmulAgainstHandValues) {
    const Kernel k = matmulKernel(2, 2, 3);
    auto a = ir::TensorData::fromFloats({1, 2, 3, 4, 5, 6}, {2, 3});
    auto b = ir::TensorData::fromFloats({7, 8, 9, 10, 11, 12}, {3, 2});
    ir::TensorData c;  // sized by the interpreter
    auto r = evalKernel(k, {&a, &b, &c});
    ASSERT_TRUE(r.ok()) << firstError(r);
    EXPECT_EQ(c.dims, (std::vector<std::int64_t>{2, 2}));
    EXPECT_EQ(c.toDoubles(), (std::vector<double>{58, 64, 139, 154}));
}

TEST(KernelEval, MillionElementsInReasonableTime) {
    Kernel k;
    k.name = "big";
    const std::int64_t n = 1 << 20;
    const int x = addParam(k, "X", DType::F32, {n}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {n}, BufferRole::Output);
    auto i = k.newVar("i");
    Expr xv = lower::load(x, DType::F32, {lower::varRef(i)});
    k.body = lower::forLoop(i, lower::intImm(n),
                            lower::store(y, {lower::varRef(i)}, lower::maxOf(xv * lower::floatImm(2.0) + lower::floatImm(1.0), lower::floatImm(0.0))),
                            ForKind::Parallel);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::size_t j = 0; j < v.size(); ++j) v[j] = static_cast<float>(j % 7) - 3.0f;
    auto xt = ir::TensorData::fromFloats(v, {n});
    ir::TensorData yt;
    auto r = evalKernel(k, {&xt, &yt});
    ASSERT_TRUE(r.ok()) << firstError(r);
    EXPECT_EQ(r->steps, 2 * n);  // one loop iteration + one store each
    std::vector<float> out(static_cast<std::size_t>(n));
    std::memcpy(out.data(), yt.bytes.data(), out.size() * 4);
    for (std::size_t j = 0; j < out.size(); j += 4099) ASSERT_EQ(out[j], std::max(v[j] * 2 + 1, 0.0f)) << j;
}

TEST(KernelEval, IntegerAndCastSemantics) {
    Kernel k;
    k.name = "ints";
    const int x = addParam(k, "X", DType::I64, {4}, BufferRole::Input);
    const int f = addParam(k, "F", DType::F32, {4}, BufferRole::Input);
    const int y8 = addParam(k, "Y8", DType::I8, {4}, BufferRole::Output);
    const int yu = addParam(k, "YU", DType::U32, {4}, BufferRole::Output);
    const int yi = addParam(k, "YI", DType::I32, {4}, BufferRole::Output);
    const int yb = addParam(k, "YB", DType::Bool, {4}, BufferRole::Output);
    auto i = k.newVar("i");
    Expr ei = lower::varRef(i);
    Expr xv = lower::load(x, DType::I64, {ei});
    Expr u = lower::cast(xv, DType::U32);
    k.body = lower::forLoop(
        i, lower::intImm(4),
        lower::seq({lower::store(y8, {ei}, xv * lower::intImm(100)),                          // wraps to int8 at the store
                    lower::store(yu, {ei}, u - lower::intImm(5, DType::U32)),                 // u32 arithmetic wraps
                    lower::store(yi, {ei}, lower::cast(lower::load(f, DType::F32, {ei}), DType::I32)),  // trunc, sat, NaN -> 0
                    lower::store(yb, {ei}, lower::cast(lower::load(f, DType::F32, {ei}), DType::Bool))}));
    auto xt = ir::TensorData::fromInts({1, 2, 3, -7}, {4});
    auto ft = ir::TensorData::fromFloats({-2.75f, 1e20f, std::nanf(""), 0.0f}, {4});
    ir::TensorData o8, ou, oi, ob;
    auto r = evalKernel(k, {&xt, &ft, &o8, &ou, &oi, &ob});
    ASSERT_TRUE(r.ok()) << firstError(r);
    EXPECT_EQ(o8.toInts(), (std::vector<std::int64_t>{100, -56, 44, 68}));  // 200 -> -56, 300 -> 44, -700 -> 68
    EXPECT_EQ(ou.toInts(), (std::vector<std::int64_t>{4294967292LL, 4294967293LL, 4294967294LL, 4294967284LL}));
    EXPECT_EQ(oi.toInts(), (std::vector<std::int64_t>{-2, 2147483647, 0, 0}));
    EXPECT_EQ(ob.toInts(), (std::vector<std::int64_t>{1, 1, 1, 0}));
}

TEST(KernelEval, FloatStoresRoundToTheBufferDtype) {
    Kernel k;
    k.name = "round";
    const int y = addParam(k, "Y", DType::F32, {1}, BufferRole::Output);
    const int h = addParam(k, "H", DType::F16, {1}, BufferRole::Output);
    const int d = addParam(k, "D", DType::F64, {1}, BufferRole::Output);
    Expr third = lower::floatImm(1.0, DType::F64) / lower::floatImm(3.0, DType::F64);
    k.body = lower::seq({lower::store(y, {lower::intImm(0)}, lower::cast(third, DType::F32)),
                         lower::store(h, {lower::intImm(0)}, lower::cast(third, DType::F16)),
                         lower::store(d, {lower::intImm(0)}, third)});
    ir::TensorData ty, th, td;
    auto r = evalKernel(k, {&ty, &th, &td});
    ASSERT_TRUE(r.ok()) << firstError(r);
    EXPECT_EQ(ty.toDoubles()[0], static_cast<double>(1.0f / 3.0f));
    EXPECT_EQ(th.toDoubles()[0], 0.333251953125);  // nearest f16
    EXPECT_EQ(td.toDoubles()[0], 1.0 / 3.0);
    EXPECT_EQ(lower::floatToHalfBits(65504.0f), 0x7bff);
    EXPECT_EQ(lower::floatToHalfBits(65520.0f), 0x7c00);
    EXPECT_EQ(lower::floatToHalfBits(5.9604644775390625e-8f), 0x0001);
    EXPECT_EQ(lower::floatToHalfBits(2.98023223876953125e-8f), 0x0000);  // tie -> even (0)
    EXPECT_EQ(lower::halfBitsToFloat(0x3555), 0.333251953125f);
    EXPECT_EQ(lower::floatToBf16Bits(1.00390625f), 0x3f80);  // tie -> even
    EXPECT_EQ(lower::bf16BitsToFloat(0x3f81), 1.0078125f);
}

TEST(KernelEval, TemporariesStartAsNaN) {
    Kernel k;
    k.name = "uninit";
    const int y = addParam(k, "Y", DType::F32, {1}, BufferRole::Output);
    const int t = addTemp(k, "acc", DType::F32, {});
    k.body = lower::allocate(t, lower::store(y, {lower::intImm(0)}, lower::load(t, DType::F32, {}) + lower::floatImm(1.0)));
    ir::TensorData ty;
    ASSERT_TRUE(evalKernel(k, {&ty}).ok());
    EXPECT_TRUE(std::isnan(ty.toDoubles()[0]));
}

TEST(KernelEval, ReportsOutOfBoundsAccess) {
    Kernel k;
    k.name = "oob";
    const int x = addParam(k, "X", DType::F32, {2, 3}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {2, 3}, BufferRole::Output);
    auto i = k.newVar("i"), j = k.newVar("j");
    Expr ei = lower::varRef(i), ej = lower::varRef(j);
    k.body = lower::forLoop(i, lower::intImm(2),
                            lower::forLoop(j, lower::intImm(3), lower::store(y, {ei, ej}, lower::load(x, DType::F32, {ei, ej + 1}))));
    auto xt = ir::TensorData::fromFloats({1, 2, 3, 4, 5, 6}, {2, 3});
    ir::TensorData yt;
    auto r = evalKernel(k, {&xt, &yt});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(firstError(r), "load of 'X' at index [., 3] (dimension 1) outside shape [2, 3]");
    EXPECT_EQ(r.diagnostics().items().front().where, "kernel 'oob'");
}

TEST(KernelEval, ReportsMisuse) {
    // parameter count and dtype
    const Kernel mm = matmulKernel(2, 2, 2);
    auto a = ir::TensorData::fromFloats({1, 2, 3, 4}, {2, 2});
    auto ai = ir::TensorData::fromInts({1, 2, 3, 4}, {2, 2});
    ir::TensorData c;
    EXPECT_EQ(firstError(evalKernel(mm, {&a, &a})), "expected 3 parameters, got 2");
    EXPECT_EQ(firstError(evalKernel(mm, {&a, &ai, &c})), "input 'B' must be f32[2, 2], got i64[2, 2]");
    EXPECT_EQ(firstError(evalKernel(mm, {&a, nullptr, &c})), "parameter 1 ('B') is null");

    // store to an input, division by zero, unbound variable, temp outside its Allocate, step limit
    Kernel k;
    k.name = "bad";
    const int x = addParam(k, "X", DType::I64, {1}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::I64, {1}, BufferRole::Output);
    const int t = addTemp(k, "tmp", DType::I64, {});
    auto i = k.newVar("i"), free = k.newVar("free");
    auto xt = ir::TensorData::fromInts({0}, {1});
    ir::TensorData yt;
    auto run = [&](Stmt body, lower::EvalOptions o = {}) {
        k.body = std::move(body);
        return firstError(evalKernel(k, {&xt, &yt}, o));
    };
    Expr zero = lower::intImm(0);
    EXPECT_EQ(run(lower::store(x, {zero}, zero)), "store to input parameter 'X'");
    EXPECT_EQ(run(lower::store(y, {zero}, lower::intImm(7) / lower::load(x, DType::I64, {zero}))), "integer division by zero");
    EXPECT_EQ(run(lower::store(y, {zero}, lower::varRef(free))), "variable 'free' (id 1) is read outside its binding");
    EXPECT_EQ(run(lower::store(t, {}, zero)), "store of temporary 'tmp' outside its Allocate");
    lower::EvalOptions limited;
    limited.maxSteps = 100;
    EXPECT_EQ(run(lower::forLoop(i, lower::intImm(1000), lower::store(y, {zero}, lower::varRef(i))), limited),
              "more than 100 statements executed (EvalOptions::maxSteps)");
    EXPECT_EQ(run(lower::forLoop(i, lower::intImm(1000), lower::store(y, {zero}, lower::varRef(i)))), "");
    EXPECT_EQ(yt.toInts(), std::vector<std::int64_t>{999});
}

TEST(KernelEval, ShortCircuitGuardsLoads) {
    Kernel k;
    k.name = "guard";
    const int x = addParam(k, "X", DType::F32, {4}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {6}, BufferRole::Output);
    auto i = k.newVar("i");
    Expr ei = lower::varRef(i);
    Expr inside = ei < lower::intImm(4) && lower::load(x, DType::F32, {ei}) > lower::floatImm(0.0);
    k.body = lower::forLoop(i, lower::intImm(6),
                            lower::store(y, {ei}, lower::select(inside, lower::load(x, DType::F32, {ei}), lower::floatImm(-1.0))));
    auto xt = ir::TensorData::fromFloats({1, -2, 3, -4}, {4});
    ir::TensorData yt;
    auto r = evalKernel(k, {&xt, &yt});
    ASSERT_TRUE(r.ok()) << firstError(r);
    EXPECT_EQ(yt.toDoubles(), (std::vector<double>{1, -1, 3, -1, -1, -1}));
}

}  // namespace
}  // namespace tessera::test
