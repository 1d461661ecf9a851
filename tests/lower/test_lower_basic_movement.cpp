// Data-movement lowering templates against the reference interpreter (where it implements the
// op) and against exact expected values.

#include <gtest/gtest.h>

#include "core/test_ir_helpers.h"
#include "lower/test_lower_basic_util.h"

namespace tessera::lower::test {
namespace {

using ir::Attribute;
using ir::test::Attrs;
using ir::test::in;
using ir::test::ints;
using ir::test::runOne;

std::string refCheck(const std::string& op, const std::vector<ir::test::In>& ins, const Attrs& attrs = {},
                     int outputs = 1) {
    auto r = runOne(op, ins, attrs, outputs);
    if (!r.error().empty()) return "shape inference: " + r.error();
    return checkAgainstReference(r.g, makeInputs(r.g));
}

/// Runs a one-node graph on x = 0, 1, 2, ... (as the input's dtype) and returns output `o` as ints.
std::vector<std::int64_t> runIota(const std::string& op, const std::vector<ir::test::In>& ins, const Attrs& attrs = {},
                                  int outputs = 1, std::size_t o = 0) {
    auto r = runOne(op, ins, attrs, outputs);
    EXPECT_EQ(r.error(), "");
    auto lk = lowerNode(r.g, 0, nullptr);
    EXPECT_TRUE(lk.ok()) << (lk.ok() ? "" : lk.diagnostics().firstError()->format());
    if (!lk.ok()) return {};
    std::vector<ir::TensorData> storage;
    for (ir::ValueId v : lk->inputs) {
        const ir::Value& val = r.g.value(v);
        if (val.data) {
            storage.push_back(*val.data);
            continue;
        }
        const auto dims = *val.type.shape.knownDims();
        std::int64_t n = 1;
        for (auto d : dims) n *= d;
        std::vector<float> f;
        std::vector<std::int64_t> k;
        for (std::int64_t i = 0; i < n; ++i) {
            f.push_back(static_cast<float>(i));
            k.push_back(i);
        }
        storage.push_back(val.type.dtype == ir::DType::I64 ? ir::TensorData::fromInts(k, dims)
                                                            : ir::TensorData::fromFloats(f, dims));
    }
    const std::size_t nin = storage.size();
    for (std::size_t i = 0; i < lk->outputs.size(); ++i) storage.emplace_back();
    std::vector<ir::TensorData*> params;
    for (auto& t : storage) params.push_back(&t);
    auto st = evalKernel(lk->kernel, params);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.diagnostics().firstError()->format());
    return storage.at(nin + o).toInts();
}

using V = std::vector<std::int64_t>;

TEST(LowerMovement, ReshapeLikeOpsMatchReference) {
    EXPECT_EQ(refCheck("Reshape", {in("f32[2,3,4]"), ints({4, 6})}), "");
    EXPECT_EQ(refCheck("Reshape", {in("f32[2,3,4]"), ints({3, -1, 2})}), "");
    EXPECT_EQ(refCheck("Flatten", {in("f32[2,3,4]")}, {{"axis", Attribute::ofInt(2)}}), "");
    EXPECT_EQ(refCheck("Squeeze", {in("f32[1,3,1,4]"), ints({0, 2})}), "");
    EXPECT_EQ(refCheck("Unsqueeze", {in("f32[3,4]"), ints({0, 3})}), "");
    EXPECT_EQ(refCheck("Transpose", {in("f32[2,3,4]")}, {{"perm", Attribute::ofInts({1, 2, 0})}}), "");
    EXPECT_EQ(refCheck("Transpose", {in("f32[2,3,4]")}), "");
    EXPECT_EQ(refCheck("Concat", {in("f32[2,3]"), in("f32[2,1]"), in("f32[2,4]")}, {{"axis", Attribute::ofInt(-1)}}), "");
    EXPECT_EQ(refCheck("Concat", {in("f32[1,3]"), in("f32[2,3]")}, {{"axis", Attribute::ofInt(0)}}), "");
    EXPECT_EQ(refCheck("Gather", {in("f32[5,3]"), ints({4, -1, 0})}, {{"axis", Attribute::ofInt(0)}}), "");
    EXPECT_EQ(refCheck("Gather", {in("f32[5,3]"), ints({2, 0})}, {{"axis", Attribute::ofInt(1)}}), "");
    EXPECT_EQ(refCheck("Gather", {in("f32[11,3]"), in("i64[2,2]")}, {{"axis", Attribute::ofInt(0)}}), "");
}

TEST(LowerMovement, ReshapeCodeUsesFlatIndexOnlyWhenNeeded) {
    auto r = runOne("Unsqueeze", {in("f32[3,4]"), ints({0})});
    auto lk = lowerNode(r.g, 0, nullptr);
    ASSERT_TRUE(lk.ok());
    const std::string text = printKernel(lk->kernel);
    // Only unit dims differ: the input is read at the output's own coordinates, no flat index.
    EXPECT_NE(text.find("y0[0, i1_2, i2_3] = x0[i1_2, i2_3]"), std::string::npos) << text;
    EXPECT_EQ(runIota("Reshape", {in("f32[2,3]"), ints({3, 2})}), (V{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(runIota("Transpose", {in("f32[2,3]")}), (V{0, 3, 1, 4, 2, 5}));
}

TEST(LowerMovement, SliceNegativeClampedAndStepped) {
    // x = 0..9
    EXPECT_EQ(runIota("Slice", {in("f32[10]"), ints({2}), ints({8})}), (V{2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(runIota("Slice", {in("f32[10]"), ints({-3}), ints({1000})}), (V{7, 8, 9}));
    EXPECT_EQ(runIota("Slice", {in("f32[10]"), ints({-1}), ints({-1000}), ints({0}), ints({-3})}), (V{9, 6, 3, 0}));
    EXPECT_EQ(runIota("Slice", {in("f32[10]"), ints({1}), ints({9}), ints({0}), ints({3})}), (V{1, 4, 7}));
    // 2-d, second axis only: x = [[0..4],[5..9]]
    EXPECT_EQ(runIota("Slice", {in("f32[2,5]"), ints({1}), ints({3}), ints({1})}), (V{1, 2, 6, 7}));
}

TEST(LowerMovement, PadModes) {
    // x = [0,1,2]
    EXPECT_EQ(runIota("Pad", {in("f32[3]"), ints({2, 1})}), (V{0, 0, 0, 1, 2, 0}));
    EXPECT_EQ(runIota("Pad", {in("f32[3]"), ints({2, 1}), ir::test::floats({7.0f}, {})}), (V{7, 7, 0, 1, 2, 7}));
    EXPECT_EQ(runIota("Pad", {in("f32[3]"), ints({2, 2})}, {{"mode", Attribute::ofString("reflect")}}),
              (V{2, 1, 0, 1, 2, 1, 0}));
    EXPECT_EQ(runIota("Pad", {in("f32[3]"), ints({2, 2})}, {{"mode", Attribute::ofString("edge")}}),
              (V{0, 0, 0, 1, 2, 2, 2}));
    EXPECT_EQ(runIota("Pad", {in("f32[3]"), ints({2, 1})}, {{"mode", Attribute::ofString("wrap")}}),
              (V{1, 2, 0, 1, 2, 0}));
    // 2-d: x = [[0,1],[2,3]], pad one row on top only.
    EXPECT_EQ(runIota("Pad", {in("f32[2,2]"), ints({1, 0, 0, 0})}), (V{0, 0, 0, 1, 2, 3}));
    // Negative pads crop.
    EXPECT_EQ(runIota("Pad", {in("f32[4]"), ints({-1, 1})}), (V{1, 2, 3, 0}));
}

TEST(LowerMovement, ExpandTileSplit) {
    EXPECT_EQ(runIota("Expand", {in("f32[3,1]"), ints({2, 3, 2})}), (V{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
    EXPECT_EQ(runIota("Tile", {in("f32[2,2]"), ints({1, 2})}), (V{0, 1, 0, 1, 2, 3, 2, 3}));
    // Split [0..6] into [2, 3, 1]: one kernel writes every output.
    const Attrs axis0{{"axis", Attribute::ofInt(0)}};
    EXPECT_EQ(runIota("Split", {in("f32[6]"), ints({2, 3, 1})}, axis0, 3, 0), (V{0, 1}));
    EXPECT_EQ(runIota("Split", {in("f32[6]"), ints({2, 3, 1})}, axis0, 3, 1), (V{2, 3, 4}));
    EXPECT_EQ(runIota("Split", {in("f32[6]"), ints({2, 3, 1})}, axis0, 3, 2), (V{5}));
    // Equal split along axis 1 of [[0,1,2,3],[4,5,6,7]].
    EXPECT_EQ(runIota("Split", {in("f32[2,4]")}, {{"axis", Attribute::ofInt(1)}}, 2, 1), (V{2, 3, 6, 7}));
}

TEST(LowerMovement, ShapeSizeConstantOfShapeRange) {
    EXPECT_EQ(runIota("Shape", {in("f32[2,3,5]")}), (V{2, 3, 5}));
    EXPECT_EQ(runIota("Shape", {in("f32[2,3,5]")}, {{"start", Attribute::ofInt(-2)}}), (V{3, 5}));
    EXPECT_EQ(runIota("Size", {in("f32[2,3,5]")}), (V{30}));
    Attribute v;
    v.type = ir::AttrType::Tensor;
    v.t = std::make_shared<ir::TensorData>(ir::TensorData::fromInts({4}, {1}));
    EXPECT_EQ(runIota("ConstantOfShape", {ints({2, 2})}, {{"value", v}}), (V{4, 4, 4, 4}));
    auto r = runOne("Range", {ints({3}), ints({12}), ints({4})});
    // Scalars: rebuild the inputs as rank-0 constants.
    for (int i = 0; i < 3; ++i) {
        ir::Value& val = r.g.value(r.g.node(0).inputs[static_cast<std::size_t>(i)]);
        auto d = std::make_shared<ir::TensorData>(ir::TensorData::fromInts({i == 0 ? 3 : i == 1 ? 12 : 4}, {}));
        val.data = d;
        val.type = d->type();
    }
    // Range has no registry schema: give its output type here.
    r.g.value(r.g.node(0).outputs[0]).type = ir::test::ty("i64[3]");
    auto lk = lowerNode(r.g, 0, nullptr);
    ASSERT_TRUE(lk.ok()) << lk.diagnostics().firstError()->format();
    ir::TensorData out;
    ASSERT_TRUE(evalKernel(lk->kernel, {&out}).ok());
    EXPECT_EQ(out.toInts(), (V{3, 7, 11}));
}

TEST(LowerMovement, ConstantInputsAreFoldedNotParameters) {
    auto r = runOne("Reshape", {in("f32[2,3]"), ints({6})});
    auto lk = lowerNode(r.g, 0, nullptr);
    ASSERT_TRUE(lk.ok());
    EXPECT_EQ(lk->inputs.size(), 1u);
    EXPECT_EQ(lk->kernel.params.size(), 2u);
    auto s = runOne("Slice", {in("f32[10]"), in("i64[1]"), ints({8})});
    auto e = lowerNode(s.g, 0, nullptr);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.diagnostics().firstError()->message, "starts, ends, axes and steps must be constants");
}

}  // namespace
}  // namespace tessera::lower::test
