// compareTensors (core/eval/compare.h): tolerance rule, NaN/inf, exact integers, shape and
// dtype mismatches, first bad element, default tolerances.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/eval/compare.h"
#include "core/frontend/dsl/tensor_init.h"

using namespace tessera;
using ir::DType;
using ir::TensorData;
using eval::compareTensors;
using eval::CompareOptions;

namespace {

TensorData make(DType t, const std::vector<double>& v, std::vector<std::int64_t> dims) {
    std::string err;
    auto td = frontend::dsl::makeZeroTensor(t, dims, 1 << 20, err);
    EXPECT_TRUE(td.has_value()) << err;
    for (std::size_t i = 0; i < v.size(); ++i) frontend::dsl::storeElement(*td, static_cast<std::int64_t>(i), v[i]);
    return *td;
}

TensorData f64(const std::vector<double>& v, std::vector<std::int64_t> dims) { return make(DType::F64, v, std::move(dims)); }

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST(CompareTensors, IdenticalTensorsAreOk) {
    const TensorData a = TensorData::fromFloats({1, -2, 3.5f}, {3});
    const auto r = compareTensors(a, a);
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(r.relL2, 0);
    EXPECT_EQ(r.maxAbs, 0);
    EXPECT_EQ(r.beyondTolerance, 0);
    EXPECT_EQ(r.compared, 3);
    EXPECT_EQ(r.firstBadIndex, -1);
    EXPECT_TRUE(r.firstBadCoord.empty());
    EXPECT_EQ(r.summary(), "ok (relL2 0, maxAbs 0)");
}

TEST(CompareTensors, ToleranceIsAbsPlusRelTimesExpected) {
    const CompareOptions opt{1e-3, 1e-2};
    const TensorData e = f64({100, 100}, {2});
    // Allowed |a - e| = 0.01 + 0.1 = 0.11.
    EXPECT_TRUE(compareTensors(f64({100.109, 99.891}, {2}), e, opt).ok);
    const auto r = compareTensors(f64({100.109, 99.88}, {2}), e, opt);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.beyondTolerance, 1);
    EXPECT_EQ(r.firstBadIndex, 1);
    EXPECT_EQ(r.firstBadActual, 99.88);
    EXPECT_EQ(r.firstBadExpected, 100);
    EXPECT_NEAR(r.maxAbs, 0.12, 1e-12);
    EXPECT_NEAR(r.relL2, std::sqrt(0.109 * 0.109 + 0.12 * 0.12) / std::sqrt(2 * 100.0 * 100.0), 1e-12);
}

TEST(CompareTensors, FirstBadCoordinateIsRowMajor) {
    const TensorData e = f64({0, 0, 0, 0, 0, 0}, {2, 3});
    const auto r = compareTensors(f64({0, 0, 0, 0, 0.5, 7}, {2, 3}), e);
    EXPECT_EQ(r.beyondTolerance, 2);
    EXPECT_EQ(r.firstBadIndex, 4);
    EXPECT_EQ(r.firstBadCoord, (std::vector<std::int64_t>{1, 1}));
    EXPECT_EQ(r.summary(), "2 of 6 elements beyond tolerance, first at [1,1]: 0.5 vs 0 expected (relL2 7.01783442e+30, "
                           "maxAbs 7)");
}

TEST(CompareTensors, NaNAndInfinities) {
    EXPECT_TRUE(compareTensors(f64({kNaN, kInf, -kInf}, {3}), f64({kNaN, kInf, -kInf}, {3})).ok);
    const auto r = compareTensors(f64({1, kInf, 2}, {3}), f64({kNaN, -kInf, 2}, {3}));
    EXPECT_EQ(r.beyondTolerance, 2);
    EXPECT_EQ(r.firstBadIndex, 0);
    EXPECT_TRUE(std::isnan(r.firstBadExpected));
    // A NaN or inf against anything else is an unbounded error: counted, and the norms say so
    // (the finite pairs alone would give 0 and read as a match).
    EXPECT_EQ(r.nonFiniteMismatches, 2);
    EXPECT_TRUE(std::isinf(r.maxAbs));
    EXPECT_TRUE(std::isinf(r.relL2));
    EXPECT_NE(r.summary().find("2 of 3 elements beyond tolerance (2 non-finite)"), std::string::npos) << r.summary();
    // The same non-finite value at the same index is a match and no error.
    const auto same = compareTensors(f64({kNaN, kInf, 1}, {3}), f64({kNaN, kInf, 1}, {3}));
    EXPECT_TRUE(same.ok);
    EXPECT_EQ(same.nonFiniteMismatches, 0);
    EXPECT_EQ(same.relL2, 0);
    EXPECT_FALSE(compareTensors(f64({kNaN}, {1}), f64({0}, {1})).ok);
}

TEST(CompareTensors, IntegersAndBoolsAreExact) {
    const TensorData e = TensorData::fromInts({1, 2, 1000000}, {3});
    EXPECT_TRUE(compareTensors(TensorData::fromInts({1, 2, 1000000}, {3}), e, CompareOptions{0.5, 10}).ok);
    const auto r = compareTensors(TensorData::fromInts({1, 2, 1000001}, {3}), e, CompareOptions{0.5, 10});
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.firstBadIndex, 2);
    const TensorData b0 = make(DType::Bool, {1, 0}, {2}), b1 = make(DType::Bool, {1, 1}, {2});
    EXPECT_EQ(compareTensors(b0, b1).beyondTolerance, 1);
}

TEST(CompareTensors, ShapeAndDtypeMismatches) {
    const TensorData a = TensorData::fromFloats({1, 2, 3, 4, 5, 6}, {2, 3});
    const TensorData b = TensorData::fromFloats({1, 2, 3, 4, 5, 6}, {3, 2});
    const auto s = compareTensors(a, b);
    EXPECT_TRUE(s.shapeMismatch);
    EXPECT_FALSE(s.ok);
    EXPECT_EQ(s.compared, 0);
    EXPECT_EQ(s.summary(), "shape [2,3] vs [3,2] expected");
    // A scalar differs from [1].
    EXPECT_TRUE(compareTensors(TensorData::fromFloats({1}, {}), TensorData::fromFloats({1}, {1})).shapeMismatch);
    const auto d = compareTensors(f64({1, 2, 3, 4, 5, 6}, {2, 3}), a);
    EXPECT_TRUE(d.dtypeMismatch);
    EXPECT_FALSE(d.ok);
    EXPECT_EQ(d.beyondTolerance, 0);
    EXPECT_EQ(d.summary(), "dtype mismatch; values within tolerance (relL2 0, maxAbs 0)");
    TensorData broken = a;
    broken.bytes.pop_back();
    EXPECT_EQ(compareTensors(broken, a).summary(), "unreadable tensor data");
}

TEST(CompareTensors, DefaultTolerancesPerDtype) {
    EXPECT_EQ(eval::defaultCompareOptions(DType::F32).relTol, 1e-4);
    EXPECT_EQ(eval::defaultCompareOptions(DType::F32).absTol, 1e-6);
    EXPECT_EQ(eval::defaultCompareOptions(DType::F64).relTol, 1e-7);
    EXPECT_EQ(eval::defaultCompareOptions(DType::F16).relTol, 1e-2);
    EXPECT_EQ(eval::defaultCompareOptions(DType::BF16).relTol, 2e-2);
    EXPECT_EQ(eval::defaultCompareOptions(DType::I32).relTol, 0);
    // f16: 1.0 vs 1.005 passes (rel 1e-2), f32 does not.
    EXPECT_TRUE(compareTensors(make(DType::F16, {1.005}, {1}), make(DType::F16, {1}, {1})).ok);
    EXPECT_FALSE(compareTensors(make(DType::F32, {1.005}, {1}), make(DType::F32, {1}, {1})).ok);
}
