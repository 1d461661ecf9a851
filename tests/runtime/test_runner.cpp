// tessera-runner end to end through RunnerClient: outputs, timing, rotation, the three faults
// (segfault, abort, hang) with recovery, error answers, cancellation.

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "core/runtime/host_jit.h"
#include "core/runtime/runner_client.h"
#include "core/runtime/shared_arena.h"
#include "runtime_test_util.h"

namespace tessera::runtime {
namespace {

// Kernels with the runner ABI. n comes in an int64 buffer so that nothing is a compile-time constant.
const char* const kKernels = R"(#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <omp.h>

extern "C" void tessera_set_num_threads(int n) { omp_set_num_threads(n); }
extern "C" int tessera_get_max_threads(void) { return omp_get_max_threads(); }

extern "C" void vadd(void* const* args) {
    const float* a = static_cast<const float*>(args[0]);
    const float* b = static_cast<const float*>(args[1]);
    float* out = static_cast<float*>(args[2]);
    const std::int64_t n = *static_cast<const std::int64_t*>(args[3]);
#pragma omp parallel for
    for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

extern "C" void bump(void* const* args) {  // in place: rerunning it would change the result
    std::int32_t* x = static_cast<std::int32_t*>(args[0]);
    for (int i = 0; i < 256; ++i) x[i] += 1;
}

extern "C" void segv(void* const*) {
    // Both volatile: the pointer's value is unknown to the optimiser and the store cannot be dropped.
    volatile int* volatile p = nullptr;
    *p = 42;
}

extern "C" void crash_abort(void* const*) {
    std::fprintf(stderr, "about to abort\n");
    std::abort();
}

static volatile int g_spin = 1;
extern "C" void hang(void* const*) {
    while (g_spin) {}
}

extern "C" void quit(void* const*) { std::exit(3); }

extern "C" void noisy(void* const*) {
    std::printf("noise on stdout\n");
    std::fflush(stdout);
}
)";

constexpr std::int64_t kN = 1 << 16;

class Runner : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        s_cache = new test::TempDir;
        HostCompilerOptions opts;  // default flags: -O3 -march=native -fopenmp -shared -fPIC
        opts.cacheDir = s_cache->str();
        auto lib = compileHostLibrary(kKernels, opts);
        ASSERT_TRUE(lib.ok()) << lib.diagnostics().items().front().format();
        s_library = lib->path;
    }
    static void TearDownTestSuite() {
        delete s_cache;
        s_cache = nullptr;
    }

    static RunnerClientOptions clientOptions() {
        RunnerClientOptions o;
        o.runnerPath = TESSERA_BINARY_DIR "/app/runner/tessera-runner";
        o.threads = 2;
        return o;
    }

    /// An arena with a, b, out, n for vadd; a[i] = i * 0.5, b[i] = 1 - i * 0.25.
    void prepareVadd() {
        std::int64_t total = 0;
        m_buffers = layoutBuffers({kN * 4, kN * 4, kN * 4, 8, 1024}, total);
        auto arena = SharedArena::create(total);
        ASSERT_TRUE(arena.ok());
        m_arena = std::move(*arena);
        float* a = m_arena.as<float>(m_buffers[0].offset);
        float* b = m_arena.as<float>(m_buffers[1].offset);
        for (std::int64_t i = 0; i < kN; ++i) {
            a[i] = static_cast<float>(i) * 0.5f;
            b[i] = 1.0f - static_cast<float>(i) * 0.25f;
        }
        *m_arena.as<std::int64_t>(m_buffers[3].offset) = kN;
    }

    RunRequest request(std::vector<LaunchSpec> launches, bool time = false) const {
        RunRequest r;
        r.libraryPath = s_library;
        m_arena.attach(r);
        r.buffers = m_buffers;
        r.launches = std::move(launches);
        r.timing.time = time;
        r.timing.minSeconds = 0.01;
        return r;
    }

    static LaunchSpec vaddLaunch() { return {"vadd", {0, 1, 2, 3}, "vadd"}; }

    /// Clears out, runs vadd alone and checks every element exactly.
    void expectVaddWorks(RunnerClient& client) {
        std::memset(m_arena.at(m_buffers[2].offset), 0, static_cast<std::size_t>(m_buffers[2].bytes));
        auto r = client.run(request({vaddLaunch()}));
        ASSERT_TRUE(r.ok()) << r.diagnostics().items().front().message;
        const float* out = m_arena.as<float>(m_buffers[2].offset);
        for (std::int64_t i = 0; i < kN; ++i) {
            const float want = static_cast<float>(i) * 0.5f + (1.0f - static_cast<float>(i) * 0.25f);
            ASSERT_EQ(out[i], want) << "element " << i;
        }
    }

    static std::string message(const support::DiagnosticList& d) {
        return d.firstError() ? d.firstError()->message : std::string("<no error>");
    }

    static test::TempDir* s_cache;
    static std::string s_library;
    SharedArena m_arena;
    std::vector<BufferSpec> m_buffers;
};

test::TempDir* Runner::s_cache = nullptr;
std::string Runner::s_library;

TEST_F(Runner, VectorAddOutputsAndTiming) {
    prepareVadd();
    RunnerClient client(clientOptions());
    auto hello = client.hello(s_library);
    ASSERT_TRUE(hello.ok()) << message(hello.diagnostics());
    EXPECT_EQ(hello->protocol, kRunnerProtocolVersion);
    EXPECT_EQ(hello->pid, client.pid());
    EXPECT_EQ(hello->ompMaxThreads, 2) << "OMP_NUM_THREADS is set from RunnerClientOptions::threads";

    auto req = request({vaddLaunch()}, true);
    req.threads = 1;
    const std::int64_t launchBytes = 3 * kN * 4 + 8;
    req.rotateBytes = 8 << 20;
    auto r = client.run(req);
    ASSERT_TRUE(r.ok()) << message(r.diagnostics());
    const float* out = m_arena.as<float>(m_buffers[2].offset);
    for (std::int64_t i = 0; i < kN; ++i)
        ASSERT_EQ(out[i], static_cast<float>(i) * 0.5f + (1.0f - static_cast<float>(i) * 0.25f)) << i;
    EXPECT_TRUE(r->timed);
    EXPECT_EQ(r->threads, 1) << "tessera_set_num_threads(1) then tessera_get_max_threads()";
    ASSERT_EQ(r->kernels.size(), 1u);
    const KernelTiming& k = r->kernels[0];
    EXPECT_EQ(k.label, "vadd");
    EXPECT_GT(k.stats.median, 0.0);
    EXPECT_GE(k.stats.reps, 3);
    EXPECT_LE(k.stats.min, k.stats.q1);
    EXPECT_LE(k.stats.q1, k.stats.median);
    EXPECT_LE(k.stats.median, k.stats.q3);
    EXPECT_LE(k.stats.q3, k.stats.max);
    EXPECT_EQ(k.rotatedCopies, (8 << 20) / launchBytes + 1);
    EXPECT_GT(r->total.median, 0.0);
    EXPECT_GE(r->total.reps, 3);

    // rotate_bytes 0: no rotation.
    req.rotateBytes = 0;
    auto norot = client.run(req);
    ASSERT_TRUE(norot.ok());
    EXPECT_EQ(norot->kernels.at(0).rotatedCopies, 1);
}

TEST_F(Runner, TimingLeavesTheCheckedResultsInTheArena) {
    prepareVadd();
    std::int32_t* x = m_arena.as<std::int32_t>(m_buffers[4].offset);
    for (int i = 0; i < 256; ++i) x[i] = i;
    RunnerClient client(clientOptions());
    auto req = request({{"bump", {4}, ""}}, true);
    req.timing.minReps = 5;
    auto r = client.run(req);
    ASSERT_TRUE(r.ok()) << message(r.diagnostics());
    EXPECT_EQ(r->kernels.at(0).label, "bump") << "label defaults to the entry";
    EXPECT_GE(r->kernels.at(0).stats.reps, 5);
    for (int i = 0; i < 256; ++i) ASSERT_EQ(x[i], i + 1) << "timing reran bump on the arena";
}

TEST_F(Runner, SegfaultIsReportedAndTheClientRecovers) {
    prepareVadd();
    RunnerClient client(clientOptions());
    expectVaddWorks(client);
    const pid_t before = client.pid();
    auto r = client.run(request({vaddLaunch(), {"segv", {}, "Conv_3"}}));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(message(r.diagnostics()), "kernel 'Conv_3' crashed: SIGSEGV (segmentation fault)");
    EXPECT_FALSE(client.started());
    expectVaddWorks(client);
    EXPECT_NE(client.pid(), before) << "a fresh runner after the crash";
}

TEST_F(Runner, AbortIsReportedWithItsStderr) {
    prepareVadd();
    RunnerClient client(clientOptions());
    auto r = client.run(request({{"crash_abort", {}, "Softmax_1"}}));
    ASSERT_FALSE(r.ok());
    const auto& d = *r.diagnostics().firstError();
    EXPECT_EQ(d.message, "kernel 'Softmax_1' crashed: SIGABRT (aborted)");
    ASSERT_FALSE(d.notes.empty());
    EXPECT_EQ(d.notes.back(), "runner stderr: about to abort");
    expectVaddWorks(client);
}

TEST_F(Runner, HangIsKilledAfterTheTimeout) {
    prepareVadd();
    RunnerClient client(clientOptions());
    auto req = request({vaddLaunch(), {"hang", {}, "Loop_7"}});
    req.timeoutSeconds = 2;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = client.run(req);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(message(r.diagnostics()), "kernel 'Loop_7' did not finish within 2 s (killed)");
    EXPECT_GE(seconds, 1.9);
    EXPECT_LT(seconds, 5.0);
    EXPECT_FALSE(client.started());
    expectVaddWorks(client);
}

TEST_F(Runner, ExitInAKernelIsReported) {
    prepareVadd();
    RunnerClient client(clientOptions());
    auto r = client.run(request({{"quit", {}, "Exit_0"}}));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(message(r.diagnostics()), "kernel 'Exit_0' ended the runner with exit status 3");
    expectVaddWorks(client);
}

TEST_F(Runner, CancellationKillsTheRunner) {
    prepareVadd();
    RunnerClient client(clientOptions());
    support::CancelToken cancel;
    std::thread canceller([cancel]() mutable {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        cancel.cancel();
    });
    auto req = request({{"hang", {}, "Loop_7"}});
    const auto t0 = std::chrono::steady_clock::now();
    auto r = client.run(req, &cancel);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    canceller.join();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(message(r.diagnostics()), "run cancelled");
    EXPECT_LT(seconds, 2.0);
    expectVaddWorks(client);
}

TEST_F(Runner, ErrorAnswersKeepTheRunner) {
    prepareVadd();
    RunnerClient client(clientOptions());
    expectVaddWorks(client);
    const pid_t pid = client.pid();

    auto missingEntry = client.run(request({{"nope", {0}, ""}}));
    ASSERT_FALSE(missingEntry.ok());
    EXPECT_EQ(message(missingEntry.diagnostics()).rfind("entry 'nope' not found in '" + s_library + "': ", 0), 0u)
        << message(missingEntry.diagnostics());

    auto badLib = request({vaddLaunch()});
    badLib.libraryPath = s_cache->str() + "/missing.so";
    auto missingLib = client.run(badLib);
    ASSERT_FALSE(missingLib.ok());
    EXPECT_EQ(message(missingLib.diagnostics()).rfind("cannot load library '" + badLib.libraryPath + "': ", 0), 0u);

    auto outside = request({vaddLaunch()});
    outside.buffers[2].offset = m_arena.size() - 16;
    auto bad = client.run(outside);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(message(bad.diagnostics()).find("buffer 2 (offset"), std::string::npos) << message(bad.diagnostics());
    EXPECT_NE(message(bad.diagnostics()).find("lies outside the arena"), std::string::npos);

    EXPECT_EQ(client.pid(), pid);
    expectVaddWorks(client);
    EXPECT_EQ(client.pid(), pid);
}

TEST_F(Runner, KernelStdoutDoesNotBreakTheProtocol) {
    prepareVadd();
    RunnerClient client(clientOptions());
    auto r = client.run(request({{"noisy", {}, ""}, vaddLaunch()}));
    ASSERT_TRUE(r.ok()) << message(r.diagnostics());
    EXPECT_EQ(client.stderrTail(), "noise on stdout\n");
}

TEST(RunnerClientStart, MissingExecutable) {
    RunnerClientOptions o;
    o.runnerPath = "/nonexistent/tessera-runner";
    RunnerClient client(o);
    auto r = client.hello();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().firstError()->message,
              "tessera-runner not found at '/nonexistent/tessera-runner': set TESSERA_RUNNER to its path");
}

TEST(SharedArenaTest, LayoutAndMapping) {
    std::int64_t total = 0;
    const auto specs = layoutBuffers({10, 64, 1, 0, 3}, total);
    ASSERT_EQ(specs.size(), 5u);
    EXPECT_EQ(specs[0].offset, 0);
    EXPECT_EQ(specs[1].offset, 64);
    EXPECT_EQ(specs[2].offset, 128);
    EXPECT_EQ(specs[3].offset, 192);
    EXPECT_EQ(specs[4].offset, 192);
    EXPECT_EQ(total, 195);
    test::TempDir dir;
    std::string path;
    {
        auto a = SharedArena::create(total, dir.str());
        ASSERT_TRUE(a.ok());
        path = a->path();
        EXPECT_EQ(path.rfind(dir.str() + "/tessera-arena-", 0), 0u);
        EXPECT_EQ(a->size(), 195);
        EXPECT_EQ(a->data()[100], 0);
        EXPECT_TRUE(a->writeTensor(specs[1], ir::TensorData::fromFloats({1.5f, 2.5f}, {2})));
        EXPECT_FALSE(a->writeTensor(specs[0], ir::TensorData::fromFloats({1, 2, 3}, {3}))) << "12 bytes into 10";
        EXPECT_EQ(a->readTensor(specs[1], ir::DType::F32, {2}).toDoubles(), (std::vector<double>{1.5, 2.5}));
        const char msg[] = "abc";
        a->write(specs[4], msg, 3);
        EXPECT_EQ(a->read(specs[4]), (std::vector<std::uint8_t>{'a', 'b', 'c'}));
        SharedArena moved = std::move(*a);
        EXPECT_FALSE(a->valid());
        EXPECT_TRUE(moved.valid());
        EXPECT_TRUE(std::filesystem::exists(path));
    }
    EXPECT_FALSE(std::filesystem::exists(path)) << "unlinked on destruction";
}

}  // namespace
}  // namespace tessera::runtime
