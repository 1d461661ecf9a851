// NVRTC JIT (core/runtime/cuda/nvrtc.h): PTX and CUBIN for several archs, diagnostics mapped to
// the generated source, the cache, arch validation, cancellation, concurrency, the disassembler
// and a process where NVRTC cannot be loaded. Tests that compile skip visibly when NVRTC is absent.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "core/runtime/cuda/nvrtc.h"
#include "runtime_test_util.h"

namespace tessera::runtime::cuda {
namespace {

namespace fs = std::filesystem;

const char* const kScaleKernel = R"(extern "C" __global__ void scale(float* x, float factor, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= factor;
}
extern "C" __global__ void add_one(float* x, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
)";

#define SKIP_WITHOUT_NVRTC()                                                                              \
    do {                                                                                                  \
        auto info_ = nvrtcInfo();                                                                         \
        if (!info_) GTEST_SKIP() << "NVRTC is not available: " << info_.diagnostics().items().front().message; \
    } while (0)

CudaCompileOptions optionsIn(const test::TempDir& dir, const std::string& arch) {
    CudaCompileOptions o;
    o.arch = arch;
    o.cacheDir = dir.str();
    return o;
}

std::string firstMessage(const support::DiagnosticList& d) { return d.empty() ? "" : d.items().front().message; }

bool hasElfMagic(const std::string& bytes) { return bytes.size() > 4 && bytes.compare(0, 4, "\x7f" "ELF") == 0; }

TEST(Nvrtc, InfoReportsVersionPathAndArchs) {
    SKIP_WITHOUT_NVRTC();
    auto info = nvrtcInfo();
    EXPECT_GE(info->major, 12);
    EXPECT_TRUE(fs::exists(info->path)) << info->path;
    EXPECT_NE(info->path.find("libnvrtc"), std::string::npos) << info->path;
    ASSERT_FALSE(info->supportedArchs.empty());
    EXPECT_TRUE(std::is_sorted(info->supportedArchs.begin(), info->supportedArchs.end()));
    EXPECT_NE(std::find(info->supportedArchs.begin(), info->supportedArchs.end(), 80), info->supportedArchs.end());
    EXPECT_NE(std::find(info->supportedArchs.begin(), info->supportedArchs.end(), 90), info->supportedArchs.end());
    if (info->major >= 13) {
        EXPECT_EQ(info->supportedArchs.front(), 75);  // CUDA 13 dropped everything below sm_75
    }
}

TEST(Nvrtc, ComputeArchGivesPtxOnly) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    auto r = compileCuda(kScaleKernel, optionsIn(dir, "compute_90"));
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    EXPECT_TRUE(r.diagnostics().empty()) << r.diagnostics().formatAll();
    EXPECT_FALSE(r->cacheHit);
    EXPECT_GT(r->compileSeconds, 0.0);
    EXPECT_EQ(r->arch, "compute_90");
    EXPECT_EQ(r->key.size(), 32u);
    EXPECT_NE(r->ptx.find(".visible .entry scale("), std::string::npos) << r->ptx;
    EXPECT_NE(r->ptx.find(".visible .entry add_one("), std::string::npos);
    EXPECT_NE(r->ptx.find(".target sm_90"), std::string::npos);
    EXPECT_EQ(r->ptx.find('\0'), std::string::npos);
    EXPECT_TRUE(r->cubin.empty());
    EXPECT_TRUE(r->cubinPath.empty());
    EXPECT_EQ(r->ptxPath, (dir.path() / (r->key + ".ptx")).string());
    EXPECT_TRUE(fs::is_regular_file(dir.path() / (r->key + ".cu")));
    EXPECT_EQ(fs::file_size(r->ptxPath), r->ptx.size());
    const std::vector<std::string> expectedOptions = {"--gpu-architecture=compute_90", "-default-device", "--std=c++17"};
    EXPECT_EQ(r->options, expectedOptions);
}

TEST(Nvrtc, RealArchsGivePtxAndCubin) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    for (const std::string sm : {"90", "80"}) {
        auto r = compileCuda(kScaleKernel, optionsIn(dir, "sm_" + sm));
        ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
        EXPECT_NE(r->ptx.find(".visible .entry scale("), std::string::npos);
        EXPECT_NE(r->ptx.find(".target sm_" + sm), std::string::npos) << sm;
        EXPECT_TRUE(hasElfMagic(r->cubin)) << sm;
        EXPECT_EQ(r->cubinPath, (dir.path() / (r->key + ".cubin")).string());
        EXPECT_EQ(fs::file_size(r->cubinPath), r->cubin.size());
        // The entry names are in the CUBIN's symbol table.
        EXPECT_NE(r->cubin.find("add_one"), std::string::npos);
    }
}

TEST(Nvrtc, SourceNameAndLineInfoReachThePtx) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    auto o = optionsIn(dir, "compute_80");
    o.sourceName = "mobilenet_v2.cu";
    o.extraOptions = {"-lineinfo"};
    auto r = compileCuda(kScaleKernel, o);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    EXPECT_NE(r->ptx.find("mobilenet_v2.cu"), std::string::npos);
    EXPECT_NE(r->ptx.find(".loc"), std::string::npos);
    EXPECT_EQ(r->options.back(), "-lineinfo");
}

TEST(Nvrtc, SyntaxErrorMapsToTheSourceLine) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    const std::string source =
        "extern \"C\" __global__ void broken(float* x) {\n"  // 1
        "    float y = 2.0f\n"                                 // 2: missing ';'
        "    x[threadIdx.x] = y;\n"                            // 3: NVRTC reports it here
        "    x[0] = undefined_name;\n"                         // 4
        "}\n";
    auto r = compileCuda(source, optionsIn(dir, "compute_90"));
    ASSERT_FALSE(r.ok());
    const auto& items = r.diagnostics().items();
    // Two errors and a warning in log order, then the summary.
    ASSERT_EQ(items.size(), 4u) << r.diagnostics().formatAll();

    EXPECT_EQ(items[0].severity, support::Severity::Error);
    EXPECT_EQ(items[0].file, "tessera_kernels.cu");
    EXPECT_EQ(items[0].begin.line, 3);
    EXPECT_EQ(items[0].begin.column, 5);  // NVRTC's caret under 'x'
    EXPECT_EQ(items[0].message, "expected a \";\"");
    ASSERT_FALSE(items[0].notes.empty());
    EXPECT_EQ(items[0].notes[0], "line 3:     x[threadIdx.x] = y;");

    EXPECT_EQ(items[1].begin.line, 4);
    EXPECT_EQ(items[1].begin.column, 12);
    EXPECT_EQ(items[1].message, "identifier \"undefined_name\" is undefined");
    EXPECT_EQ(items[1].notes.at(0), "line 4:     x[0] = undefined_name;");

    EXPECT_EQ(items[2].severity, support::Severity::Warning);
    EXPECT_EQ(items[2].begin.line, 2);
    EXPECT_EQ(items[2].begin.column, 11);
    EXPECT_EQ(items[2].message, "variable \"y\" was declared but never referenced [#177-D]");

    EXPECT_EQ(items[3].severity, support::Severity::Error);
    EXPECT_EQ(items[3].message, "NVRTC compilation failed");
    EXPECT_EQ(items[3].notes.at(0), "options: --gpu-architecture=compute_90 -default-device --std=c++17");
    // Nothing was cached but the source.
    int ptxFiles = 0;
    for (const auto& e : fs::directory_iterator(dir.path())) ptxFiles += e.path().extension() == ".ptx";
    EXPECT_EQ(ptxFiles, 0);
}

TEST(Nvrtc, TemplateErrorKeepsTheInstantiationContext) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    const std::string source =
        "template <typename T> __device__ T twice(T a) { return a.twice(); }\n"
        "extern \"C\" __global__ void k(float* x) { x[0] = twice(x[0]); }\n";
    auto r = compileCuda(source, optionsIn(dir, "compute_90"));
    ASSERT_FALSE(r.ok());
    const auto& first = r.diagnostics().items().front();
    EXPECT_EQ(first.begin.line, 1);
    ASSERT_EQ(first.notes.size(), 2u) << r.diagnostics().formatAll();
    EXPECT_EQ(first.notes[0].rfind("line 1: template <typename T>", 0), 0u);
    EXPECT_NE(first.notes[1].find("detected during instantiation of"), std::string::npos) << first.notes[1];
}

TEST(Nvrtc, ErrorInAHeaderKeepsItsFile) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    const fs::path include = dir.path() / "include";
    fs::create_directories(include);
    std::ofstream(include / "helpers.cuh") << "// helpers\n__device__ float half_of(float x) { return x / two; }\n";
    auto o = optionsIn(dir, "compute_90");
    o.extraOptions = {"-I" + include.string()};
    auto r = compileCuda("#include \"helpers.cuh\"\nextern \"C\" __global__ void k(float* x) { x[0] = half_of(x[0]); }\n", o);
    ASSERT_FALSE(r.ok());
    const auto& items = r.diagnostics().items();
    ASSERT_EQ(items.size(), 2u) << r.diagnostics().formatAll();
    EXPECT_EQ(fs::path(items[0].file).filename(), "helpers.cuh") << items[0].file;
    EXPECT_EQ(items[0].begin.line, 2);
    EXPECT_EQ(items[0].begin.column, 48);  // "two"
    EXPECT_EQ(items[0].message, "identifier \"two\" is undefined");
    EXPECT_TRUE(items[0].notes.empty()) << items[0].notes.front();
    EXPECT_EQ(items[1].message, "NVRTC compilation failed");
}

TEST(Nvrtc, WarningsComeBackNextToTheValue) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    const std::string source =
        "extern \"C\" __global__ void k(float* x) {\n"
        "    int unused = 3;\n"
        "    x[0] = 1.0f;\n"
        "}\n";
    auto r = compileCuda(source, optionsIn(dir, "compute_90"));
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    ASSERT_EQ(r.diagnostics().items().size(), 1u) << r.diagnostics().formatAll();
    const auto& w = r.diagnostics().items().front();
    EXPECT_EQ(w.severity, support::Severity::Warning);
    EXPECT_EQ(w.begin.line, 2);
    EXPECT_EQ(w.begin.column, 9);
    EXPECT_EQ(w.message, "variable \"unused\" was declared but never referenced [#177-D]");
    EXPECT_FALSE(r->log.empty());
}

TEST(Nvrtc, BadOptionPutsTheSummaryFirstWithTheLog) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    auto o = optionsIn(dir, "compute_90");
    o.extraOptions = {"--no-such-nvrtc-option"};
    auto r = compileCuda(kScaleKernel, o);
    ASSERT_FALSE(r.ok());
    const auto& summary = r.diagnostics().items().front();
    EXPECT_EQ(summary.message.rfind("NVRTC compilation failed", 0), 0u) << summary.message;
    ASSERT_GE(summary.notes.size(), 1u);
    EXPECT_EQ(summary.notes[0],
              "options: --gpu-architecture=compute_90 -default-device --std=c++17 --no-such-nvrtc-option");
    bool logQuoted = false;
    for (const auto& n : summary.notes) logQuoted |= n.find("no-such-nvrtc-option") != std::string::npos && n.rfind("nvrtc log: ", 0) == 0;
    EXPECT_TRUE(logQuoted) << r.diagnostics().formatAll();
}

TEST(Nvrtc, SecondCompileHitsTheCache) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    const auto o = optionsIn(dir, "sm_90");
    auto first = compileCuda(kScaleKernel, o);
    ASSERT_TRUE(first.ok()) << first.diagnostics().formatAll();
    EXPECT_FALSE(first->cacheHit);

    const auto t0 = std::chrono::steady_clock::now();
    auto second = compileCuda(kScaleKernel, o);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(second.ok());
    EXPECT_TRUE(second->cacheHit);
    EXPECT_EQ(second->key, first->key);
    EXPECT_EQ(second->ptx, first->ptx);
    EXPECT_EQ(second->cubin, first->cubin);
    EXPECT_EQ(second->ptxPath, first->ptxPath);
    EXPECT_EQ(second->cubinPath, first->cubinPath);
    EXPECT_EQ(second->compileSeconds, 0.0);
    EXPECT_TRUE(second->log.empty());
    EXPECT_LT(seconds, 0.005) << "a hit reads two small files, it does not compile";
    double fastest = seconds;
    for (int i = 0; i < 5; ++i) {
        const auto t1 = std::chrono::steady_clock::now();
        auto hit = compileCuda(kScaleKernel, o);
        fastest = std::min(fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
        ASSERT_TRUE(hit.ok() && hit->cacheHit);
    }
    EXPECT_LT(fastest, 0.001);

    // Arch, options and source all take part in the key.
    auto otherArch = compileCuda(kScaleKernel, optionsIn(dir, "sm_80"));
    ASSERT_TRUE(otherArch.ok());
    EXPECT_FALSE(otherArch->cacheHit);
    EXPECT_NE(otherArch->key, first->key);
    auto o2 = o;
    o2.extraOptions = {"--use_fast_math"};
    auto otherOptions = compileCuda(kScaleKernel, o2);
    ASSERT_TRUE(otherOptions.ok());
    EXPECT_NE(otherOptions->key, first->key);
    auto otherSource = compileCuda(std::string(kScaleKernel) + "\n", o);
    ASSERT_TRUE(otherSource.ok());
    EXPECT_NE(otherSource->key, first->key);

    // No temporary files are left; a truncated entry (no .cubin) is recompiled, not returned.
    for (const auto& e : fs::directory_iterator(dir.path()))
        EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
    fs::remove(first->cubinPath);
    auto again = compileCuda(kScaleKernel, o);
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->cacheHit);
    EXPECT_EQ(again->cubin, first->cubin);
    EXPECT_TRUE(fs::is_regular_file(first->cubinPath));
}

TEST(Nvrtc, ArchTextIsValidated) {
    for (const char* bad : {"sm90", "gfx90a", "sm_9", "sm_", "compute_", "sm_90x", "sm_0900", "SM_90", "sm_09", ""}) {
        auto a = parseCudaArch(bad);
        ASSERT_FALSE(a.ok()) << bad;
        EXPECT_EQ(firstMessage(a.diagnostics()),
                  "invalid CUDA architecture '" + std::string(bad) +
                      "': expected sm_XX (PTX and CUBIN) or compute_XX (PTX only), e.g. sm_90");
    }
    auto sm = parseCudaArch("sm_90a");
    ASSERT_TRUE(sm.ok());
    EXPECT_EQ(sm->number, 90);
    EXPECT_EQ(sm->suffix, "a");
    EXPECT_TRUE(sm->real);
    auto compute = parseCudaArch("compute_120");
    ASSERT_TRUE(compute.ok());
    EXPECT_EQ(compute->number, 120);
    EXPECT_FALSE(compute->real);
    EXPECT_EQ(cudaArchForComputeCapability(9, 0), "sm_90");
    EXPECT_EQ(cudaArchForComputeCapability(8, 6), "sm_86");
    EXPECT_EQ(cudaArchForComputeCapability(12, 0), "sm_120");
}

TEST(Nvrtc, UnsupportedArchListsTheSupportedOnes) {
    SKIP_WITHOUT_NVRTC();
    auto info = nvrtcInfo();
    std::string list;
    for (int a : info->supportedArchs) list += (list.empty() ? "" : " ") + std::to_string(a);
    auto v = validateCudaArch("sm_35");
    ASSERT_FALSE(v.ok());
    const auto& d = v.diagnostics().items().front();
    EXPECT_EQ(d.message, "CUDA architecture 'sm_35' is not supported by NVRTC " + std::to_string(info->major) + "." +
                             std::to_string(info->minor));
    EXPECT_EQ(d.notes, std::vector<std::string>{"supported: " + list});
    EXPECT_TRUE(validateCudaArch("compute_90").ok());

    test::TempDir dir;
    auto r = compileCuda(kScaleKernel, optionsIn(dir, "sm_35"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(firstMessage(r.diagnostics()), d.message);
    auto bad = compileCuda(kScaleKernel, optionsIn(dir, "ampere"));
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(firstMessage(bad.diagnostics()).rfind("invalid CUDA architecture 'ampere'", 0), 0u);
    EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(Nvrtc, CancelledTokenStopsBeforeCompiling) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    support::CancelToken token;
    token.cancel();
    auto r = compileCuda(kScaleKernel, optionsIn(dir, "sm_90"), &token);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(firstMessage(r.diagnostics()), "compilation cancelled");
    EXPECT_TRUE(fs::is_empty(dir.path()));
}

/// A kernel NVRTC needs a while for: many unrolled, distinct device functions.
std::string slowKernel() {
    std::string s;
    for (int f = 0; f < 24; ++f) {
        s += "__device__ __noinline__ float f" + std::to_string(f) + "(float x) {\n";
        s += "    #pragma unroll\n    for (int i = 0; i < 64; ++i) x = x * " + std::to_string(f + 1) +
             ".5f + __sinf(x * i);\n    return x;\n}\n";
    }
    s += "extern \"C\" __global__ void slow(float* x) {\n    float v = x[threadIdx.x];\n";
    for (int f = 0; f < 24; ++f) s += "    v = f" + std::to_string(f) + "(v);\n";
    s += "    x[threadIdx.x] = v;\n}\n";
    return s;
}

TEST(Nvrtc, CancelDuringTheCompile) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    support::CancelToken token;
    // Cancel once the compile has started (its source is in the cache folder), plus 30 ms: a fixed
    // delay alone raced with a descheduled main thread on a loaded machine (cancelled before start).
    std::thread canceller([&] {
        const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (std::chrono::steady_clock::now() < giveUp) {
            std::error_code ec;
            if (fs::directory_iterator(dir.path(), ec) != fs::directory_iterator()) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        token.cancel();
    });
    const auto t0 = std::chrono::steady_clock::now();
    auto r = compileCuda(slowKernel(), optionsIn(dir, "sm_90"), &token);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    canceller.join();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(firstMessage(r.diagnostics()), "compilation cancelled");
    if (nvrtcInfo()->interruptible) {
        // NVRTC polled the token and stopped: nothing but the source reached the cache.
        int files = 0;
        for (const auto& e : fs::directory_iterator(dir.path())) {
            ++files;
            EXPECT_EQ(e.path().extension(), ".cu");
        }
        EXPECT_EQ(files, 1);
        std::cout << "cancelled after " << seconds << " s\n";
    }
}

TEST(Nvrtc, ConcurrentCompilesOfDifferentKernels) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    constexpr int kThreads = 4;
    std::vector<support::Expected<CudaCompiled>> results(kThreads, support::DiagnosticList{});
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            const std::string src = "extern \"C\" __global__ void kernel_" + std::to_string(t) +
                                    "(float* x) { x[threadIdx.x] *= " + std::to_string(t + 2) + ".0f; }\n";
            results[static_cast<std::size_t>(t)] = compileCuda(src, optionsIn(dir, t % 2 ? "sm_80" : "sm_90"));
        });
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
        const auto& r = results[static_cast<std::size_t>(t)];
        ASSERT_TRUE(r.ok()) << t << ": " << r.diagnostics().formatAll();
        EXPECT_NE(r->ptx.find(".entry kernel_" + std::to_string(t) + "("), std::string::npos) << t;
        EXPECT_NE(r->ptx.find(std::string(".target ") + (t % 2 ? "sm_80" : "sm_90")), std::string::npos) << t;
        EXPECT_TRUE(hasElfMagic(r->cubin)) << t;
    }
}

TEST(Nvrtc, ClearCacheRemovesOnlyItsFiles) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    ASSERT_TRUE(compileCuda(kScaleKernel, optionsIn(dir, "sm_90")).ok());      // .cu .cubin .ptx
    ASSERT_TRUE(compileCuda(kScaleKernel, optionsIn(dir, "compute_90")).ok()); // .cu .ptx
    std::ofstream(dir.path() / "notes.txt") << "keep";
    std::ofstream(dir.path() / "0123456789abcdef0123456789abcdef.so") << "host JIT's";
    auto removed = clearCudaCache(dir.str());
    ASSERT_TRUE(removed.ok());
    EXPECT_EQ(*removed, 5);
    EXPECT_TRUE(fs::exists(dir.path() / "notes.txt"));
    EXPECT_TRUE(fs::exists(dir.path() / "0123456789abcdef0123456789abcdef.so"));
    auto none = clearCudaCache((dir.path() / "missing").string());
    ASSERT_TRUE(none.ok());
    EXPECT_EQ(*none, 0);
}

TEST(Nvrtc, DisassembleCubinOrSayWhyNot) {
    SKIP_WITHOUT_NVRTC();
    test::TempDir dir;
    auto r = compileCuda(kScaleKernel, optionsIn(dir, "sm_90"));
    ASSERT_TRUE(r.ok());
    auto sass = disassembleCubin(r->cubinPath);
    if (sass.ok()) {
        EXPECT_NE(sass->find("scale"), std::string::npos) << *sass;
        EXPECT_NE(sass->find("EXIT"), std::string::npos) << *sass;
    } else {
        // This toolkit install ships neither tool (no cuobjdump/nvdisasm in /usr/local/cuda/bin).
        EXPECT_EQ(firstMessage(sass.diagnostics()), "no CUDA disassembler found (cuobjdump, nvdisasm)");
        EXPECT_EQ(sass.diagnostics().items().front().notes.at(0).rfind("searched: ", 0), 0u);
    }
    auto missing = disassembleCubin((dir.path() / "missing.cubin").string());
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(firstMessage(missing.diagnostics()).rfind("cannot read '", 0), 0u);
}

/// Sets an environment variable for the scope; restores the old value (or its absence).
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : m_name(name) {
        if (const char* old = std::getenv(name)) {
            m_old = old;
            m_had = true;
        }
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (m_had)
            ::setenv(m_name.c_str(), m_old.c_str(), 1);
        else
            ::unsetenv(m_name.c_str());
    }

private:
    std::string m_name, m_old;
    bool m_had = false;
};

TEST(Nvrtc, DisassemblerIsFoundInPathAndRunWithoutAShell) {
    // Stand-in tools: the first in PATH wins; cuobjdump gets --dump-sass and the CUBIN path.
    test::TempDir dir;
    const fs::path cubin = dir.path() / "k ernel's.cubin";  // a name a shell would mangle
    std::ofstream(cubin) << "not really ELF";
    const fs::path bin = dir.path() / "bin";
    fs::create_directories(bin);
    {
        std::ofstream tool(bin / "cuobjdump");
        tool << "#!/bin/sh\necho \"args: $1 | $2\"\necho '        /*0000*/  EXIT ;'\n";
    }
    fs::permissions(bin / "cuobjdump", fs::perms::owner_all);
    ScopedEnv path("PATH", bin.string() + ":" + (std::getenv("PATH") ? std::getenv("PATH") : ""));
    auto sass = disassembleCubin(cubin.string());
    ASSERT_TRUE(sass.ok()) << sass.diagnostics().formatAll();
    EXPECT_EQ(*sass, "args: --dump-sass | " + cubin.string() + "\n        /*0000*/  EXIT ;\n");

    {
        std::ofstream tool(bin / "cuobjdump", std::ios::trunc);
        tool << "#!/bin/sh\necho 'cuobjdump fatal   : Could not open input file'\nexit 3\n";
    }
    auto failed = disassembleCubin(cubin.string());
    ASSERT_FALSE(failed.ok());
    const auto& d = failed.diagnostics().items().front();
    EXPECT_EQ(d.message, "cuobjdump exited with status 3");
    EXPECT_EQ(d.notes, std::vector<std::string>{"cuobjdump: cuobjdump fatal   : Could not open input file"});
}

TEST(Nvrtc, WithoutNvrtcEverythingFailsCleanly) {
    // Not a real library, then a real library that is not NVRTC.
    setNvrtcSearchPathsForTesting({"libtessera_no_such_nvrtc.so.13", "libm.so.6"});
    auto info = nvrtcInfo();
    ASSERT_FALSE(info.ok());
    const auto& d = info.diagnostics().items().front();
    EXPECT_EQ(d.message.rfind("NVRTC not found (libtessera_no_such_nvrtc.so.13: cannot open shared object file", 0), 0u)
        << d.message;
    EXPECT_NE(d.message.find("): install the CUDA toolkit or set CUDA_HOME"), std::string::npos) << d.message;
    ASSERT_EQ(d.notes.size(), 1u);
    EXPECT_NE(d.notes[0].find("libm.so.6: lacks nvrtcGetErrorString"), std::string::npos) << d.notes[0];

    test::TempDir dir;
    auto r = compileCuda(kScaleKernel, optionsIn(dir, "sm_90"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(firstMessage(r.diagnostics()), d.message);
    EXPECT_FALSE(validateCudaArch("sm_90").ok());
    EXPECT_TRUE(parseCudaArch("sm_90").ok());  // syntax needs no NVRTC
    EXPECT_TRUE(fs::is_empty(dir.path()));

    setNvrtcSearchPathsForTesting({});
    auto restored = nvrtcInfo();
    // Back to the default search: the same answer as before the test (available or not).
    if (restored.ok()) {
        EXPECT_TRUE(compileCuda(kScaleKernel, optionsIn(dir, "compute_90")).ok());
    }
}

}  // namespace
}  // namespace tessera::runtime::cuda
