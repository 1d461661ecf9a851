// Lowering preview: golden text for representative mappings (reviewed by hand against Hidet's
// lower_task_mapping expansion: spatial -> w / stride % extent, mod omitted on the rank-0 dim;
// repeat -> loops in rank order; composition -> w / inner workers, w % level workers).
#include <gtest/gtest.h>

#include "core/schedule/mapping_parser.h"
#include "core/schedule/task_mapping.h"

namespace {

std::string preview(const std::string& expr, const char* w = "w") {
    auto m = tessera::schedule::parseMapping(expr);
    EXPECT_TRUE(m.ok()) << expr;
    return m.ok() ? tessera::schedule::loweringPreview(*m, w) : std::string();
}

TEST(ScheduleLowering, SpatialThenRepeat) {
    EXPECT_EQ(preview("spatial(2,5).repeat(3,4)"),
              "// spatial(2,5).repeat(3,4)\n"
              "// 10 workers, task shape [6,20], 12 tasks per worker; bound check: w < 10\n"
              "// level 0: spatial(2,5) on w\n"
              "const int s0_i = w / 5;\n"
              "const int s0_j = w % 5;\n"
              "// level 1: repeat(3,4)\n"
              "// u+: unrolled explicitly by the code generator\n"
              "for (int r1_i = 0; r1_i < 3; ++r1_i) {\n"
              "  for (int r1_j = 0; r1_j < 4; ++r1_j) {\n"
              "    const int i = s0_i * 3 + r1_i;\n"
              "    const int j = s0_j * 4 + r1_j;\n"
              "    body(i, j);\n"
              "  }\n"
              "}\n");
}

TEST(ScheduleLowering, RepeatThenSpatial) {
    EXPECT_EQ(preview("repeat(3,4).spatial(2,5)"),
              "// repeat(3,4).spatial(2,5)\n"
              "// 10 workers, task shape [6,20], 12 tasks per worker; bound check: w < 10\n"
              "// level 1: spatial(2,5) on w\n"
              "const int s1_i = w / 5;\n"
              "const int s1_j = w % 5;\n"
              "// level 0: repeat(3,4)\n"
              "// u+: unrolled explicitly by the code generator\n"
              "for (int r0_i = 0; r0_i < 3; ++r0_i) {\n"
              "  for (int r0_j = 0; r0_j < 4; ++r0_j) {\n"
              "    const int i = r0_i * 2 + s1_i;\n"
              "    const int j = r0_j * 5 + s1_j;\n"
              "    body(i, j);\n"
              "  }\n"
              "}\n");
}

TEST(ScheduleLowering, ColumnMajorSpatial) {
    EXPECT_EQ(preview("col_spatial(2,5)"),
              "// spatial(2,5, ranks=[1,0])\n"
              "// 10 workers, task shape [2,5], 1 task per worker; bound check: w < 10\n"
              "// level 0: spatial(2,5, ranks=[1,0]) on w\n"
              "const int s0_i = w % 2;\n"
              "const int s0_j = w / 2;\n"
              "const int i = s0_i;\n"
              "const int j = s0_j;\n"
              "body(i, j);\n");
}

TEST(ScheduleLowering, MatmulLikeFourLevels) {
    EXPECT_EQ(preview("spatial(4,2).repeat(2,2, attrs=\"u2p\").spatial(4,8, ranks=[1,0]).repeat(4,4, attrs=\"u\")"),
              "// spatial(4,2).repeat(2,2, attrs=\"u2p\").spatial(4,8, ranks=[1,0]).repeat(4,4, attrs=\"uu\")\n"
              "// 256 workers, task shape [128,128], 64 tasks per worker; bound check: w < 256\n"
              "const int w0 = w / 32;  // worker in level 0: spatial(4,2)\n"
              "const int s0_i = w0 / 2;\n"
              "const int s0_j = w0 % 2;\n"
              "const int w2 = w % 32;  // worker in level 2: spatial(4,8, ranks=[1,0])\n"
              "const int s2_i = w2 % 4;\n"
              "const int s2_j = w2 / 4;\n"
              "// level 1: repeat(2,2, attrs=\"u2p\")\n"
              "#pragma unroll 2\n"
              "for (int r1_i = 0; r1_i < 2; ++r1_i) {\n"
              "  #pragma omp parallel for\n"
              "  for (int r1_j = 0; r1_j < 2; ++r1_j) {\n"
              "    // level 3: repeat(4,4, attrs=\"uu\")\n"
              "    #pragma unroll\n"
              "    for (int r3_i = 0; r3_i < 4; ++r3_i) {\n"
              "      #pragma unroll\n"
              "      for (int r3_j = 0; r3_j < 4; ++r3_j) {\n"
              "        const int i = s0_i * 32 + r1_i * 16 + s2_i * 4 + r3_i;\n"
              "        const int j = s0_j * 64 + r1_j * 32 + s2_j * 4 + r3_j;\n"
              "        body(i, j);\n"
              "      }\n"
              "    }\n"
              "  }\n"
              "}\n");
}

TEST(ScheduleLowering, AutoMapColumnRanks) {
    EXPECT_EQ(preview("auto_map(8,96, workers=64, ranks=[1,0])"),
              "// repeat(1,12, ranks=[1,0]).spatial(8,8, ranks=[1,0])\n"
              "// 64 workers, task shape [8,96], 12 tasks per worker; bound check: w < 64\n"
              "// level 1: spatial(8,8, ranks=[1,0]) on w\n"
              "const int s1_i = w % 8;\n"
              "const int s1_j = w / 8;\n"
              "// level 0: repeat(1,12, ranks=[1,0])\n"
              "for (int r0_j = 0; r0_j < 12; ++r0_j) {\n"
              "  // u+: unrolled explicitly by the code generator\n"
              "  for (int r0_i = 0; r0_i < 1; ++r0_i) {\n"
              "    const int i = s1_i;\n"
              "    const int j = r0_j * 8 + s1_j;\n"
              "    body(i, j);\n"
              "  }\n"
              "}\n");
}

TEST(ScheduleLowering, Projection) {
    EXPECT_EQ(preview("spatial(2,5).repeat(3,4).projection({1: 0})"),
              "// spatial(2,5).projection({1: 0}) * repeat(3,4).projection({1: 0})\n"
              "// 10 workers, task shape [6,1], 12 tasks per worker; bound check: w < 10\n"
              "// level 0: spatial(2,5) on w\n"
              "const int s0_i = w / 5;\n"
              "// level 1: repeat(3,4)\n"
              "// u+: unrolled explicitly by the code generator\n"
              "for (int r1_i = 0; r1_i < 3; ++r1_i) {\n"
              "  for (int r1_j = 0; r1_j < 4; ++r1_j) {\n"
              "    const int i = s0_i * 3 + r1_i;\n"
              "    const int j = 0;\n"
              "    body(i, j);\n"
              "  }\n"
              "}\n");
}

TEST(ScheduleLowering, RepeatRanksAndAttrs) {
    EXPECT_EQ(preview("repeat(2,3,4, ranks=[2,0,1], attrs=\"u4p.\")"),
              "// repeat(2,3,4, ranks=[2,0,1], attrs=\"u4p.\")\n"
              "// 1 worker, task shape [2,3,4], 24 tasks per worker; bound check: w < 1\n"
              "// level 0: repeat(2,3,4, ranks=[2,0,1], attrs=\"u4p.\")\n"
              "#pragma omp parallel for\n"
              "for (int r0_j = 0; r0_j < 3; ++r0_j) {\n"
              "  for (int r0_k = 0; r0_k < 4; ++r0_k) {\n"
              "    #pragma unroll 4\n"
              "    for (int r0_i = 0; r0_i < 2; ++r0_i) {\n"
              "      const int i = r0_i;\n"
              "      const int j = r0_j;\n"
              "      const int k = r0_k;\n"
              "      body(i, j, k);\n"
              "    }\n"
              "  }\n"
              "}\n");
}

TEST(ScheduleLowering, ExtentOneLevels) {
    EXPECT_EQ(preview("spatial(1,8) * spatial(2,1)"),
              "// spatial(1,8).spatial(2,1)\n"
              "// 16 workers, task shape [2,8], 1 task per worker; bound check: w < 16\n"
              "const int w0 = w / 2;  // worker in level 0: spatial(1,8)\n"
              "const int s0_j = w0 % 8;\n"
              "const int w1 = w % 2;  // worker in level 1: spatial(2,1)\n"
              "const int s1_i = w1;\n"
              "const int i = s1_i;\n"
              "const int j = s0_j;\n"
              "body(i, j);\n");
}

TEST(ScheduleLowering, WorkerVariableName) {
    const auto text = preview("spatial(4)", "threadIdx.x");
    EXPECT_NE(text.find("const int s0_i = threadIdx.x;"), std::string::npos) << text;
}

}  // namespace
