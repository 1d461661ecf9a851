// The CUDA GEMM template (core/lower/cuda/lower_matmul_gpu.cpp): MatMul and Gemm lowered for the CUDA
// target take the shared-memory template when M, N >= 64; the kernels are run with the kernel-IR
// interpreter and compared with the reference interpreter; their structure, mappings, static
// counts (checked against the interpreter's dynamic counts and closed formulas), and, where NVRTC
// loads, the PTX of the generated CUDA for sm_90 (shared loads, barriers, no local-memory
// accumulator).

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "core/codegen/cuda/cuda_codegen.h"
#include "core/eval/compare.h"
#include "core/eval/reference_interpreter.h"
#include "core/lower/counts.h"
#include "core/lower/lower.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/test_ir_helpers.h"
#include "lower/test_lower_basic_util.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::lower::test {
namespace {

using ir::Attribute;
using ir::test::Attrs;
using ir::test::in;
using ir::test::runOne;

Attribute I(std::int64_t v) { return Attribute::ofInt(v); }
Attribute F(double v) { return Attribute::ofFloat(v); }

constexpr const char* kTemplateNote = "A/B tiles staged in shared memory, BK = 8";

bool usesTemplate(const Kernel& k) {
    for (const auto& n : k.notes)
        if (n.rfind(kTemplateNote, 0) == 0) return true;
    return false;
}

struct Lowered {
    ir::Graph g;
    LoweredKernel lk;
    std::string error;
};

/// A one-node graph of `op` lowered for `target` (no schedule unless given).
Lowered lowerOne(const std::string& op, const std::vector<ir::test::In>& ins, const Attrs& attrs = {},
                 Target target = Target::Cuda, const ir::KernelScheduleDecl* schedule = nullptr) {
    Lowered r;
    auto one = runOne(op, ins, attrs);
    if (!one.error().empty()) {
        r.error = "shape inference: " + one.error();
        return r;
    }
    r.g = std::move(one.g);
    LowerOptions lo;
    lo.target = target;
    auto lk = lowerNode(r.g, 0, schedule, lo);
    if (!lk) {
        r.error = "lowering: " + lk.diagnostics().firstError()->format();
        return r;
    }
    r.lk = std::move(*lk);
    return r;
}

/// Lowers `op` for CUDA, checks that the GEMM template was taken, runs the kernel with the
/// interpreter (dynamic counts on) and compares with the reference interpreter. Returns "" when
/// everything matches, else the problems. *stats receives the interpreter's counts.
std::string gemmCheck(const std::string& op, const std::vector<ir::test::In>& ins, const Attrs& attrs = {},
                      EvalStats* stats = nullptr, Kernel* kernel = nullptr) {
    Lowered l = lowerOne(op, ins, attrs);
    if (!l.error.empty()) return l.error;
    if (!usesTemplate(l.lk.kernel)) return "the GEMM template was not used:\n" + printKernel(l.lk.kernel);
    const auto inputs = makeInputs(l.g, 11);
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
    eo.countOps = true;
    auto st = evalKernel(l.lk.kernel, params, eo);
    if (!st) return "eval: " + st.diagnostics().firstError()->format();
    if (stats) *stats = *st;
    if (kernel) *kernel = l.lk.kernel;
    const ir::TensorData* want = ref->value(l.lk.outputs[0]);
    ir::TensorData got = storage.back();
    got.dims = want->dims;
    eval::CompareOptions co = eval::defaultCompareOptions(want->dtype);
    if (want->dtype == ir::DType::F32) co = {1e-5, 1e-5};
    auto cmp = eval::compareTensors(got, *want, co);
    return cmp.ok ? std::string() : cmp.summary();
}

TEST(LowerGpuGemm, MatMulAgainstReference) {
    EXPECT_EQ(gemmCheck("MatMul", {in("f32[128,64]"), in("f32[64,128]")}), "");   // one full block
    EXPECT_EQ(gemmCheck("MatMul", {in("f32[130,33]"), in("f32[33,67]")}), "");    // M, N, K edges
    EXPECT_EQ(gemmCheck("MatMul", {in("f32[64,5]"), in("f32[5,300]")}), "");      // K < BK, 3 column tiles
    EXPECT_EQ(gemmCheck("MatMul", {in("f32[2,64,24]"), in("f32[2,24,80]")}), ""); // batched
    EXPECT_EQ(gemmCheck("MatMul", {in("f32[3,1,70,9]"), in("f32[2,9,64]")}), ""); // batch broadcast both ways
    EXPECT_EQ(gemmCheck("MatMul", {in("f32[2,66,16]"), in("f32[16,65]")}), "");   // B broadcast over the batch
    EXPECT_EQ(gemmCheck("MatMul", {in("f16[64,16]"), in("f16[16,72]")}), "");     // f16 staged as f32
    EXPECT_EQ(gemmCheck("MatMul", {in("bf16[96,12]"), in("bf16[12,64]")}), "");
}

TEST(LowerGpuGemm, BatchTimesOneMatrixIsOneGemm) {
    // A Linear layer on a 4-D activation (ConvNeXt's [1, 56, 56, 96] x [96, 384], cut down): the
    // batch dims are folded into the rows, one grid over 2 x 3 x 20 = 120 rows.
    EXPECT_EQ(gemmCheck("MatMul", {in("f32[2,3,20,16]"), in("f32[16,72]")}), "");
    EXPECT_EQ(gemmCheck("MatMul", {in("f32[3,30,9]"), in("f32[1,9,64]")}), "");  // B's batch dims all 1
    Lowered l = lowerOne("MatMul", {in("f32[1,56,56,96]"), in("f32[96,384]")});
    ASSERT_EQ(l.error, "");
    const Kernel& k = l.lk.kernel;
    EXPECT_EQ(k.mappings.front(), "grid = spatial(25,3)") << printKernel(k);  // ceil(3136 / 128) x 384 / 128
    EXPECT_EQ(k.buffers[0].shape, (std::vector<std::int64_t>{3136, 96}));
    EXPECT_EQ(k.buffers[2].shape, (std::vector<std::int64_t>{3136, 384}));
    EXPECT_EQ(k.notes.back(), "batch of 56 matrices x one matrix folded into one GEMM of 3136 rows; A and Y declared "
                              "[3136, 96] and [3136, 384]");
    // A B with a real batch keeps the batched grid.
    Lowered b = lowerOne("MatMul", {in("f32[4,128,64]"), in("f32[4,64,128]")});
    ASSERT_EQ(b.error, "");
    EXPECT_EQ(b.lk.kernel.mappings.front(), "grid = spatial(4,1,1)") << printKernel(b.lk.kernel);
}

TEST(LowerGpuGemm, SmallProductsTakeTilesThatFillTheGpu) {
    LowerOptions fill;
    fill.target = Target::Cuda;
    fill.gpuGemmFillBlocks = 132;
    fill.gpuGemmMinBlocks = 16;
    auto lowered = [&](const std::string& op, const std::vector<ir::test::In>& ins, const Attrs& attrs = {}) {
        auto one = runOne(op, ins, attrs);
        EXPECT_EQ(one.error(), "");
        auto lk = lowerNode(one.g, 0, nullptr, fill);
        EXPECT_TRUE(lk.ok());
        return lk.ok() ? lk->kernel : Kernel{};
    };
    // ConvNeXt's last-stage Linear at batch 1: 49 rows (folded from [1, 7, 7, 768]) x 3072; the
    // default tile gives 24 blocks, 32 x 32 tiles 2 x 96.
    Kernel k = lowered("MatMul", {in("f32[1,7,7,768]"), in("f32[768,3072]")});
    EXPECT_EQ(k.mappings.front(), "grid = spatial(2,96)") << printKernel(k);
    // 196 rows x 1536: 64 x 64 tiles, 4 x 24 = 96 blocks, are too few; 64 x 32 give 4 x 48.
    k = lowered("MatMul", {in("f32[1,14,14,384]"), in("f32[384,1536]")});
    EXPECT_EQ(k.mappings.front(), "grid = spatial(4,48)") << printKernel(k);
    // A classifier at batch 32 (32 x 1280 x 1000, transB): 32 x 32 tiles, 32 blocks, the 1280-long
    // reduction split over 4 groups.
    k = lowered("Gemm", {in("f32[32,1280]"), in("f32[1000,1280]"), in("f32[1000]")}, {{"transB", I(1)}});
    EXPECT_EQ(k.mappings.front(), "grid = spatial(1,32)") << printKernel(k);
    EXPECT_NE(printKernel(k).find("reduction split over 4 groups"), std::string::npos) << printKernel(k);
    // Large products keep the 128 x 128 tile.
    k = lowered("MatMul", {in("f32[2048,1024]"), in("f32[1024,2048]")});
    EXPECT_EQ(k.mappings.front(), "grid = spatial(16,16)");
    // Values: the split reduction, a ragged 32-row tile, the folded batch, Gemm's C.
    for (const auto& [op, ins, attrs] : std::vector<std::tuple<std::string, std::vector<ir::test::In>, Attrs>>{
             {"MatMul", {in("f32[2,40,300]"), in("f32[300,64]")}, {}},
             {"MatMul", {in("f32[33,1100]"), in("f32[1100,40]")}, {}},
             {"Gemm", {in("f32[32,260]"), in("f32[70,260]"), in("f32[70]")}, {{"transB", I(1)}}}}) {
        auto one = runOne(op, ins, attrs);
        ASSERT_EQ(one.error(), "");
        // f32 sums of up to 1100 products of values in [-2, 2) in another order: absolute 2.5e-7 per term.
        EXPECT_EQ(checkAgainstReference(one.g, makeInputs(one.g, 7), nullptr, fill, eval::CompareOptions{1e-5, 3e-4}), "") << op;
    }
}

TEST(LowerGpuGemm, GemmAgainstReference) {
    EXPECT_EQ(gemmCheck("Gemm", {in("f32[128,16]"), in("f32[16,128]")}), "");
    EXPECT_EQ(gemmCheck("Gemm", {in("f32[130,33]"), in("f32[33,67]"), in("f32[67]")}, {{"alpha", F(0.5)}, {"beta", F(2.0)}}), "");
    EXPECT_EQ(gemmCheck("Gemm", {in("f32[21,70]"), in("f32[21,65]"), in("f32[70,1]")}, {{"transA", I(1)}}), "");
    EXPECT_EQ(gemmCheck("Gemm", {in("f32[64,19]"), in("f32[129,19]"), in("f32[1,129]")}, {{"transB", I(1)}}), "");
    EXPECT_EQ(gemmCheck("Gemm", {in("f32[9,66]"), in("f32[64,9]"), in("f32[66,64]")},
                        {{"transA", I(1)}, {"transB", I(1)}, {"beta", F(-1.5)}}), "");
    EXPECT_EQ(gemmCheck("Gemm", {in("f32[64,8]"), in("f32[8,64]"), in("f32[]")}, {{"alpha", F(-2.0)}, {"beta", F(0.0)}}), "");
    EXPECT_EQ(gemmCheck("Gemm", {in("f32[65,7]"), in("f32[7,64]"), in("f32[65,64]")}), "");
}

TEST(LowerGpuGemm, KernelStructureAndMappings) {
    Lowered l = lowerOne("MatMul", {in("f32[2,130,16]"), in("f32[2,16,200]")});
    ASSERT_EQ(l.error, "");
    const Kernel& k = l.lk.kernel;
    const std::string text = printKernel(k);
    EXPECT_EQ(k.mappings, (std::vector<std::string>{"grid = spatial(2,2,2)", "block = repeat(1,2,2).spatial(1,16,16).repeat(1,4,4)"}))
        << text;
    ASSERT_FALSE(k.notes.empty());
    EXPECT_EQ(k.notes[0], "A/B tiles staged in shared memory, BK = 8 (tiles 128x8 and 8x128, rows padded by 4)");
    EXPECT_EQ(countOf(text, "blocks for "), 1u) << text;
    EXPECT_EQ(countOf(text, "threads for "), 4u) << text;  // zero, stage, compute, store
    EXPECT_EQ(countOf(text, "barrier\n"), 2u) << text;
    EXPECT_NE(text.find("alloc As: f32[8,132] shared\n"), std::string::npos) << text;
    EXPECT_NE(text.find("alloc Bs: f32[8,132] shared\n"), std::string::npos) << text;
    EXPECT_NE(text.find("alloc acc: f32[256,8,8] local per-thread\n"), std::string::npos) << text;
    EXPECT_NE(text.find("alloc a: f32[8] local\n"), std::string::npos) << text;
    EXPECT_NE(text.find("for k0_"), std::string::npos) << text;
    // Every access of the per-thread accumulator indexes it with a Threads variable first.
    const std::regex accAccess(R"(acc\[([a-z0-9_]+),)");
    std::size_t accesses = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), accAccess); it != std::sregex_iterator(); ++it, ++accesses)
        EXPECT_EQ((*it)[1].str().rfind("t_", 0), 0u) << (*it)[0].str();
    EXPECT_EQ(accesses, 4u) << text;  // zero, load + store of the update, epilogue read
}

TEST(LowerGpuGemm, OtherFormsKeepTheDefaultPath) {
    // Too small, CPU target, integers, f64, user mapping, 1-D operand.
    for (const auto& [op, ins] : std::vector<std::pair<std::string, std::vector<ir::test::In>>>{
             {"MatMul", {in("f32[63,8]"), in("f32[8,128]")}},
             {"MatMul", {in("f32[128,8]"), in("f32[8,63]")}},
             {"MatMul", {in("i32[64,8]"), in("i32[8,64]")}},
             {"MatMul", {in("f64[64,8]"), in("f64[8,64]")}},
             {"MatMul", {in("f32[64]"), in("f32[64,64]")}},
             {"Gemm", {in("f32[20,3]"), in("f32[3,70]")}}}) {
        Lowered l = lowerOne(op, ins);
        ASSERT_EQ(l.error, "");
        EXPECT_FALSE(usesTemplate(l.lk.kernel)) << printKernel(l.lk.kernel);
    }
    Lowered cpu = lowerOne("MatMul", {in("f32[128,64]"), in("f32[64,128]")}, {}, Target::Cpu);
    ASSERT_EQ(cpu.error, "");
    EXPECT_FALSE(usesTemplate(cpu.lk.kernel));
    ir::KernelScheduleDecl s;
    s.subject = "n0";
    s.mappings.push_back({"grid", "spatial(8, 8) * repeat(16, 16)", {}, {}});
    Lowered user = lowerOne("MatMul", {in("f32[128,64]"), in("f32[64,128]")}, {}, Target::Cuda, &s);
    ASSERT_EQ(user.error, "");
    EXPECT_FALSE(usesTemplate(user.lk.kernel));
    EXPECT_EQ(user.lk.kernel.mappings.front(), "grid = spatial(8,8).repeat(16,16)");
    // The template's default schedule written back selects the template again (same kernel);
    // the same grid with another block mapping does not.
    using Case = std::pair<std::vector<ir::test::In>, std::string>;  // inputs, another block mapping
    for (const auto& [ins, otherBlock] : std::vector<Case>{{{in("f32[2,130,16]"), in("f32[2,16,200]")}, "spatial(1,16,16).repeat(1,8,8)"},
                                                           {{in("f32[128,64]"), in("f32[64,128]")}, "spatial(16,16).repeat(8,8)"}}) {
        Lowered def = lowerOne("MatMul", ins);
        ASSERT_EQ(def.error, "");
        LowerOptions cuda;
        cuda.target = Target::Cuda;
        ir::KernelScheduleDecl back;
        back.subject = "n0";
        back.mappings = defaultSchedule(def.g, 0, cuda);
        ASSERT_EQ(back.mappings.size(), 2u);
        Lowered again = lowerOne("MatMul", ins, {}, Target::Cuda, &back);
        ASSERT_EQ(again.error, "");
        EXPECT_TRUE(usesTemplate(again.lk.kernel));
        EXPECT_EQ(printKernel(again.lk.kernel), printKernel(def.lk.kernel));
        back.mappings[1].text = otherBlock;
        Lowered other = lowerOne("MatMul", ins, {}, Target::Cuda, &back);
        ASSERT_EQ(other.error, "");
        EXPECT_FALSE(usesTemplate(other.lk.kernel));
        EXPECT_EQ(other.lk.kernel.mappings.back(), "block = " + otherBlock);
    }
    // A schedule without mappings (only loop requests) keeps the template.
    ir::KernelScheduleDecl noMap;
    noMap.subject = "n0";
    Lowered keep = lowerOne("MatMul", {in("f32[128,64]"), in("f32[64,128]")}, {}, Target::Cuda, &noMap);
    ASSERT_EQ(keep.error, "");
    EXPECT_TRUE(usesTemplate(keep.lk.kernel));
}

TEST(LowerGpuGemm, StaticCountsMatchTheInterpreterAndFormulas) {
    struct Case {
        std::string a, b;
        std::int64_t M, N, K;
    };
    for (const Case& c : {Case{"f32[128,64]", "f32[64,128]", 128, 128, 64}, Case{"f32[130,33]", "f32[33,67]", 130, 67, 33}}) {
        SCOPED_TRACE(c.a + " x " + c.b);
        EvalStats st;
        Kernel k;
        ASSERT_EQ(gemmCheck("MatMul", {in(c.a), in(c.b)}, {}, &st, &k), "");
        const KernelCounts kc = countKernel(k);
        EXPECT_TRUE(kc.exact);
        EXPECT_EQ(kc.flops, st.flops);
        EXPECT_EQ(kc.loadBytes, st.loadBytes);
        EXPECT_EQ(kc.storeBytes, st.storeBytes);
        EXPECT_EQ(kc.sharedLoadBytes, st.sharedLoadBytes);
        EXPECT_EQ(kc.sharedStoreBytes, st.sharedStoreBytes);
        const std::int64_t tilesM = (c.M + 127) / 128, tilesN = (c.N + 127) / 128, steps = (c.K + 7) / 8;
        const std::int64_t blocks = tilesM * tilesN;
        // Every block multiplies whole 128 x 128 x 8 steps (zero-padded edges).
        EXPECT_EQ(kc.flops, static_cast<double>(blocks * steps * 2 * 128 * 128 * 8));
        // Each block stages 128x8 of A and 8x128 of B per step; each thread reads 8 + 8 floats per kk.
        EXPECT_EQ(kc.sharedStoreBytes, blocks * steps * (1024 + 1024) * 4);
        EXPECT_EQ(kc.sharedLoadBytes, blocks * steps * 256 * 8 * 16 * 4);
        // Global: A read once per column tile and B once per row tile (guarded loads outside skip),
        // Y written once.
        EXPECT_EQ(kc.loadBytes, (c.M * c.K * tilesN + c.K * c.N * tilesM) * 4);
        EXPECT_EQ(kc.storeBytes, c.M * c.N * 4);
    }
}

// ---- CUDA C and PTX ------------------------------------------------------------------------

TEST(LowerGpuGemm, GeneratedCudaKeepsOneRowOfTheAccumulator) {
    Lowered l = lowerOne("MatMul", {in("f32[4096,4096]"), in("f32[4096,4096]")});
    ASSERT_EQ(l.error, "");
    auto m = codegen::generateCuda({&l.lk.kernel});
    ASSERT_TRUE(m.ok()) << m.diagnostics().formatAll();
    ASSERT_EQ(m->launches.size(), 1u);
    EXPECT_EQ(m->launches[0].gridX, 1024);
    EXPECT_EQ(m->launches[0].blockX, 256);
    EXPECT_EQ(m->launches[0].sharedBytes, 2 * 8 * 132 * 4);
    const std::string& src = m->source.source;
    EXPECT_NE(src.find("float t_acc[64];"), std::string::npos) << src;
    EXPECT_EQ(countOf(src, "__syncthreads();"), 3u) << src;  // two barriers + the grid-stride loop's
    // 4096 is a multiple of every tile: no guards at all.
    EXPECT_EQ(src.find(" ? ", src.find("__global__ void")), std::string::npos) << src;
    if (const char* dump = std::getenv("TESSERA_GPU_GEMM_DUMP")) {  // for benchmarking by hand
        std::ofstream(dump) << src;
    }
}

#define SKIP_WITHOUT_NVRTC()                                                                             \
    do {                                                                                               \
        auto info = runtime::cuda::nvrtcInfo();                                                        \
        if (!info.ok()) GTEST_SKIP() << "NVRTC is not loadable: " << info.diagnostics().formatAll(); \
    } while (0)

struct Sm90Build {
    std::string ptx, log;
    std::string sass;  ///< empty when no disassembler (cuobjdump, nvdisasm) is found
};

/// Compiles the CUDA of one lowered kernel for sm_90 with ptxas's report (-v), and disassembles
/// the CUBIN where a disassembler is available.
Sm90Build compileSm90(const Kernel& k) {
    auto m = codegen::generateCuda({&k});
    EXPECT_TRUE(m.ok()) << m.diagnostics().formatAll();
    if (!m.ok()) return {};
    const auto dir = std::filesystem::temp_directory_path() /
                     ("tessera-gpu-gemm-" + std::to_string(std::hash<std::string>{}(m->source.source)));
    runtime::cuda::CudaCompileOptions o;
    o.arch = "sm_90";
    o.cacheDir = dir.string();
    o.extraOptions = {"--ptxas-options=-v"};
    auto r = runtime::cuda::compileCuda(m->source.source, o);
    Sm90Build b;
    if (r.ok()) {
        b.ptx = r->ptx;
        b.log = r->log;
        if (auto sass = runtime::cuda::disassembleCubin(r->cubinPath)) b.sass = *sass;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    EXPECT_TRUE(r.ok()) << r.diagnostics().formatAll();
    return b;
}

TEST(LowerGpuGemm, PtxStagesInSharedMemoryAndKeepsTheAccumulatorInRegisters) {
    SKIP_WITHOUT_NVRTC();
    for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{{"f32[4096,4096]", "f32[4096,4096]"},
                                                                              {"f32[130,33]", "f32[33,67]"},
                                                                              {"f16[256,64]", "f16[64,256]"}}) {
        SCOPED_TRACE(a + " x " + b);
        Lowered l = lowerOne("MatMul", {in(a), in(b)});
        ASSERT_EQ(l.error, "");
        const Sm90Build build = compileSm90(l.lk.kernel);
        const std::string& ptx = build.ptx;
        ASSERT_FALSE(ptx.empty());
        EXPECT_NE(ptx.find("ld.shared"), std::string::npos);
        EXPECT_NE(ptx.find("st.shared"), std::string::npos);
        EXPECT_NE(ptx.find("bar.sync"), std::string::npos);
        EXPECT_EQ(ptx.find("ld.local"), std::string::npos) << "accumulator in local memory";
        EXPECT_EQ(ptx.find("st.local"), std::string::npos) << "accumulator in local memory";
        // ptxas -v: registers used, and no spills. f32: at most 128 registers, so two 256-thread
        // blocks fit on an SM (65536 registers).
        std::smatch regs;
        ASSERT_TRUE(std::regex_search(build.log, regs, std::regex(R"(Used (\d+) registers)"))) << build.log;
        EXPECT_LE(std::stoi(regs[1].str()), a[0] == 'f' && a[1] == '3' ? 128 : 255) << build.log;
        EXPECT_NE(build.log.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << build.log;
        std::string sassNote = "no disassembler";
        if (!build.sass.empty()) {
            // ptxas merges each thread's two groups of 4 consecutive shared floats into 128-bit
            // loads: 2 for a + 2 for b per kk, 8 kk per step (the PTX has scalar ld.shared).
            const std::size_t lds128 = countOf(build.sass, "LDS.128");
            EXPECT_GE(lds128, 32u) << build.sass;
            sassNote = std::to_string(lds128) + " LDS.128, " + std::to_string(countOf(build.sass, "FFMA")) + " FFMA in SASS";
        }
        std::cout << "[ ptxas    ] " << a << " x " << b << ": " << regs[0].str() << "; " << sassNote << "\n";
    }
}

}  // namespace
}  // namespace tessera::lower::test
