// tessera-runner's GPU mode end to end through RunnerClient, on a real CUDA device: outputs checked
// exactly, timing, rotation, dynamic shared memory above 48 KiB, a kernel compiled from CUDA C by
// NVRTC, and the faults (a wild store is fatal and the next request gets a fresh runner; a refused
// launch is not; a hang is killed). Every test skips visibly where there is no driver or device.

#include <gtest/gtest.h>

#include <cstdlib>

#include <chrono>
#include <cstring>
#include <fstream>

#include "core/runtime/cuda/cuda_driver.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/runtime/runner_client.h"
#include "core/runtime/shared_arena.h"
#include "core/runtime/timing.h"
#include "runtime/runtime_test_util.h"

namespace tessera::runtime {
namespace {

// Hand-written PTX (ISA 7.0, sm_75: the driver JIT-compiles it for the device at hand).
const char* const kPtx = R"(.version 7.0
.target sm_75
.address_size 64

.extern .shared .align 16 .b8 smem[];

// out[i] = a[i] + b[i] for i < *n (n is an int64 in device memory)
.visible .entry vadd(.param .u64 pa, .param .u64 pb, .param .u64 pout, .param .u64 pn)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<12>;
    .reg .f32 %f<4>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pout];
    ld.param.u64 %rd4, [pn];
    ld.global.u64 %rd5, [%rd4];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd6, %r1, %r2;
    cvt.u64.u32 %rd7, %r3;
    add.u64 %rd6, %rd6, %rd7;
    setp.ge.s64 %p1, %rd6, %rd5;
    @%p1 bra DONE;
    shl.b64 %rd8, %rd6, 2;
    add.u64 %rd9, %rd1, %rd8;
    ld.global.f32 %f1, [%rd9];
    add.u64 %rd10, %rd2, %rd8;
    ld.global.f32 %f2, [%rd10];
    add.rn.f32 %f3, %f1, %f2;
    add.u64 %rd11, %rd3, %rd8;
    st.global.f32 [%rd11], %f3;
DONE:
    ret;
}

// x[tid] += 1 (int32), in place
.visible .entry bump(.param .u64 px)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [px];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    ld.global.u32 %r2, [%rd3];
    add.s32 %r2, %r2, 1;
    st.global.u32 [%rd3], %r2;
    ret;
}

// Stores through the address held in p[0] (the test puts a small, never mapped address there).
.visible .entry wild(.param .u64 pp)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [pp];
    ld.global.u64 %rd2, [%rd1];
    mov.u32 %r1, 42;
    st.global.u32 [%rd2], %r1;
    ret;
}

// Spins while p[0] == 0 (the test leaves it 0: a kernel that never ends).
.visible .entry spin(.param .u64 pp)
{
    .reg .pred %p<2>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [pp];
LOOP:
    ld.volatile.global.u32 %r1, [%rd1];
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra LOOP;
    ret;
}

// Each block reverses its ntid floats through the last 4*ntid bytes of its dynamic shared memory
// (beyond 48 KiB when the launch asks for more: the runner must opt the kernel in).
.visible .entry reverse(.param .u64 pin, .param .u64 pout)
{
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    .reg .f32 %f<3>;
    ld.param.u64 %rd1, [pin];
    ld.param.u64 %rd2, [pout];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %dynamic_smem_size;
    shl.b32 %r5, %r2, 2;
    sub.u32 %r6, %r4, %r5;
    mov.u32 %r7, smem;
    add.u32 %r6, %r6, %r7;
    mad.lo.u32 %r8, %r3, %r2, %r1;
    mul.wide.u32 %rd3, %r8, 4;
    add.u64 %rd4, %rd1, %rd3;
    ld.global.f32 %f1, [%rd4];
    shl.b32 %r9, %r1, 2;
    add.u32 %r10, %r6, %r9;
    st.shared.f32 [%r10], %f1;
    bar.sync 0;
    sub.u32 %r11, %r2, %r1;
    sub.u32 %r11, %r11, 1;
    shl.b32 %r11, %r11, 2;
    add.u32 %r11, %r6, %r11;
    ld.shared.f32 %f2, [%r11];
    add.u64 %rd5, %rd2, %rd3;
    st.global.f32 [%rd5], %f2;
    ret;
}
)";

// The same vector add in CUDA C, for NVRTC.
const char* const kCudaC = R"(
extern "C" __global__ void saxpy(const float* x, float* y, const long long* n) {
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < *n) y[i] = 2.0f * x[i] + y[i];
}
)";

constexpr std::int64_t kN = (1 << 20) + 3;  // not a multiple of the block: the bound check matters
constexpr std::int64_t kBlock = 256;
constexpr std::int64_t kGrid = (kN + kBlock - 1) / kBlock;

class GpuRunner : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        auto devices = cuda::listCudaDevices();
        if (!devices) {
            s_skip = new std::string(devices.diagnostics().items().front().message);
            return;
        }
        s_device = new cuda::CudaDeviceInfo(devices->front());
        s_dir = new test::TempDir;
        s_ptx = s_dir->str() + "/kernels.ptx";
        std::ofstream(s_ptx) << kPtx;
    }
    static void TearDownTestSuite() {
        delete s_skip;
        delete s_device;
        delete s_dir;
        s_skip = nullptr;
        s_device = nullptr;
        s_dir = nullptr;
    }
    void SetUp() override {
        if (s_skip) GTEST_SKIP() << "no CUDA driver/device: " << *s_skip;
    }

    static RunnerClientOptions options() {
        RunnerClientOptions o;
        // $TESSERA_RUNNER wins (binaries carried to another machine), else the build tree's.
        const char* env = std::getenv("TESSERA_RUNNER");
        o.runnerPath = env && *env ? std::string(env) : std::string(TESSERA_BINARY_DIR "/app/runner/tessera-runner");
        return o;
    }

    /// Buffers: 0 a, 1 b, 2 out (kN floats), 3 n (int64), 4 x (256 int32), 5 p (8 bytes, zero).
    void prepare() {
        std::int64_t total = 0;
        m_buffers = layoutBuffers({kN * 4, kN * 4, kN * 4, 8, 1024, 8}, total);
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

    RunRequest request(std::vector<LaunchSpec> launches, bool time = false, const std::string& module = {}) const {
        RunRequest r;
        r.target = RunTarget::Cuda;
        r.modulePath = module.empty() ? s_ptx : module;
        m_arena.attach(r);
        r.buffers = m_buffers;
        r.launches = std::move(launches);
        r.timing.time = time;
        r.timing.minSeconds = 0.02;
        r.timeoutSeconds = 30;
        return r;
    }

    static LaunchSpec vaddLaunch(const std::string& label = "Add_0") {
        LaunchSpec l{"vadd", {0, 1, 2, 3}, label};
        l.grid = kGrid;
        l.block = kBlock;
        return l;
    }

    /// Clears out, runs vadd and checks every element exactly (a float add is exact IEEE on both sides).
    void expectVaddWorks(RunnerClient& client) {
        std::memset(m_arena.at(m_buffers[2].offset), 0, static_cast<std::size_t>(m_buffers[2].bytes));
        auto r = client.run(request({vaddLaunch()}));
        ASSERT_TRUE(r.ok()) << message(r.diagnostics());
        expectVaddOutput();
    }
    void expectVaddOutput() const {
        const float* out = m_arena.as<float>(m_buffers[2].offset);
        for (std::int64_t i = 0; i < kN; ++i) {
            const float want = static_cast<float>(i) * 0.5f + (1.0f - static_cast<float>(i) * 0.25f);
            ASSERT_EQ(out[i], want) << "element " << i;
        }
    }

    static std::string message(const support::DiagnosticList& d) {
        return d.firstError() ? d.firstError()->message : std::string("<no error>");
    }

    static std::string* s_skip;
    static cuda::CudaDeviceInfo* s_device;
    static test::TempDir* s_dir;
    static std::string s_ptx;
    SharedArena m_arena;
    std::vector<BufferSpec> m_buffers;
};

std::string* GpuRunner::s_skip = nullptr;
cuda::CudaDeviceInfo* GpuRunner::s_device = nullptr;
test::TempDir* GpuRunner::s_dir = nullptr;
std::string GpuRunner::s_ptx;

TEST_F(GpuRunner, DevicesThroughTheRunner) {
    RunnerClient client(options());
    auto devices = client.devices();
    ASSERT_TRUE(devices.ok()) << message(devices.diagnostics());
    ASSERT_FALSE(devices->empty());
    const cuda::CudaDeviceInfo& d = devices->front();
    EXPECT_EQ(d.ordinal, 0);
    EXPECT_FALSE(d.name.empty());
    EXPECT_EQ(d.name, s_device->name);
    EXPECT_GT(d.smCount, 0);
    EXPECT_GE(d.ccMajor, 7);
    EXPECT_EQ(d.arch(), "sm_" + std::to_string(d.ccMajor) + std::to_string(d.ccMinor));
    EXPECT_GT(d.totalMemoryBytes, std::int64_t{1} << 30);
    EXPECT_GT(d.l2Bytes, 0);
    EXPECT_GE(d.sharedPerBlockOptinBytes, 48 * 1024);
    EXPECT_GE(d.sharedPerSmBytes, d.sharedPerBlockOptinBytes);
    EXPECT_EQ(d.warpSize, 32);
    EXPECT_GT(d.clockKHz, 0);
    EXPECT_GT(d.memoryBusWidthBits, 0);
    std::printf("device 0: %s\n", nlohmann::json(cuda::cudaDeviceInfoToJson(d)).dump().c_str());
}

TEST_F(GpuRunner, VectorAddOutputsAndTiming) {
    prepare();
    RunnerClient client(options());
    expectVaddWorks(client);

    std::memset(m_arena.at(m_buffers[2].offset), 0, static_cast<std::size_t>(m_buffers[2].bytes));
    auto req = request({vaddLaunch()}, true);
    req.rotateBytes = 64 << 20;
    auto r = client.run(req);
    ASSERT_TRUE(r.ok()) << message(r.diagnostics());
    expectVaddOutput();
    EXPECT_TRUE(r->timed);
    ASSERT_TRUE(r->device.has_value());
    EXPECT_EQ(r->device->name, s_device->name);
    EXPECT_GT(r->device->smCount, 0);
    ASSERT_EQ(r->kernels.size(), 1u);
    const KernelTiming& k = r->kernels[0];
    EXPECT_EQ(k.label, "Add_0");
    EXPECT_GT(k.stats.min, 0.0);
    EXPECT_LT(k.stats.median, 0.01) << "12 MB of traffic takes microseconds on a GPU";
    EXPECT_GE(k.stats.reps, 3);
    EXPECT_LE(k.stats.reps, 1000);
    EXPECT_LE(k.stats.min, k.stats.q1);
    EXPECT_LE(k.stats.q1, k.stats.median);
    EXPECT_LE(k.stats.median, k.stats.q3);
    EXPECT_LE(k.stats.q3, k.stats.max);
    const std::int64_t launchBytes = 3 * kN * 4 + 8;
    EXPECT_EQ(k.rotatedCopies, rotationCopies(launchBytes, 64 << 20)) << "rotation through device copies";
    EXPECT_GT(r->total.median, 0.0);
    EXPECT_GE(r->total.reps, 3);
    std::printf("vadd of %lld floats: median %.2f us (%lld reps, %d copies), total %.2f us\n",
                static_cast<long long>(kN), k.stats.median * 1e6, static_cast<long long>(k.stats.reps), k.rotatedCopies,
                r->total.median * 1e6);

    // The default (-1): 2 x the device's L2; 0: no rotation.
    req.rotateBytes = -1;
    auto byDefault = client.run(req);
    ASSERT_TRUE(byDefault.ok()) << message(byDefault.diagnostics());
    EXPECT_EQ(byDefault->kernels.at(0).rotatedCopies, rotationCopies(launchBytes, 2 * s_device->l2Bytes));
    req.rotateBytes = 0;
    auto norot = client.run(req);
    ASSERT_TRUE(norot.ok()) << message(norot.diagnostics());
    EXPECT_EQ(norot->kernels.at(0).rotatedCopies, 1);
}

TEST_F(GpuRunner, TimingLeavesTheCheckedResultsInTheArena) {
    prepare();
    std::int32_t* x = m_arena.as<std::int32_t>(m_buffers[4].offset);
    for (int i = 0; i < 256; ++i) x[i] = i;
    RunnerClient client(options());
    LaunchSpec bump{"bump", {4}, ""};
    bump.block = 256;
    auto req = request({bump}, true);
    req.timing.minReps = 50;
    auto r = client.run(req);
    ASSERT_TRUE(r.ok()) << message(r.diagnostics());
    EXPECT_EQ(r->kernels.at(0).label, "bump");
    EXPECT_GE(r->kernels.at(0).stats.reps, 50);
    for (int i = 0; i < 256; ++i) ASSERT_EQ(x[i], i + 1) << "timing reran bump on the arena";
}

TEST_F(GpuRunner, DynamicSharedMemoryAbove48KiB) {
    prepare();
    RunnerClient client(options());
    LaunchSpec rev{"reverse", {0, 2}, "Reverse_0"};
    rev.grid = 4;
    rev.block = 256;
    rev.sharedBytes = 100000;
    ASSERT_GE(s_device->sharedPerBlockOptinBytes, rev.sharedBytes);
    auto r = client.run(request({rev}));
    ASSERT_TRUE(r.ok()) << message(r.diagnostics());
    const float* a = m_arena.as<float>(m_buffers[0].offset);
    const float* out = m_arena.as<float>(m_buffers[2].offset);
    for (int blk = 0; blk < 4; ++blk)
        for (int t = 0; t < 256; ++t) ASSERT_EQ(out[blk * 256 + t], a[blk * 256 + 255 - t]) << blk << " " << t;

    // More than the device allows: refused, not fatal.
    const pid_t pid = client.pid();
    rev.sharedBytes = s_device->sharedPerBlockOptinBytes + 1024;
    auto tooMuch = client.run(request({rev}));
    ASSERT_FALSE(tooMuch.ok());
    EXPECT_EQ(message(tooMuch.diagnostics()).rfind("kernel 'Reverse_0' ", 0), 0u) << message(tooMuch.diagnostics());
    EXPECT_EQ(client.pid(), pid);
    expectVaddWorks(client);
}

TEST_F(GpuRunner, CompiledFromCudaCByNvrtc) {
    if (!cuda::nvrtcInfo().ok()) GTEST_SKIP() << "NVRTC not found: " << message(cuda::nvrtcInfo().diagnostics());
    test::TempDir cache;
    cuda::CudaCompileOptions opts;
    opts.arch = cuda::cudaArchForComputeCapability(s_device->ccMajor, s_device->ccMinor);
    opts.cacheDir = cache.str();
    auto compiled = cuda::compileCuda(kCudaC, opts);
    ASSERT_TRUE(compiled.ok()) << message(compiled.diagnostics());
    ASSERT_FALSE(compiled->cubinPath.empty());
    prepare();
    RunnerClient client(options());
    for (const std::string& module : {compiled->cubinPath, compiled->ptxPath}) {
        float* y = m_arena.as<float>(m_buffers[2].offset);
        for (std::int64_t i = 0; i < kN; ++i) y[i] = 3.0f;
        LaunchSpec l{"saxpy", {0, 2, 3}, "Saxpy_0"};
        l.grid = kGrid;
        l.block = kBlock;
        auto r = client.run(request({l}, false, module));
        ASSERT_TRUE(r.ok()) << module << ": " << message(r.diagnostics());
        const float* x = m_arena.as<float>(m_buffers[0].offset);
        for (std::int64_t i = 0; i < kN; ++i) ASSERT_EQ(y[i], 2.0f * x[i] + 3.0f) << module << " element " << i;
    }
}

TEST_F(GpuRunner, WildStoreIsFatalAndTheNextRequestGetsAFreshRunner) {
    prepare();
    *m_arena.as<std::uint64_t>(m_buffers[5].offset) = 16;  // the wild address
    RunnerClient client(options());
    expectVaddWorks(client);
    const pid_t before = client.pid();
    auto r = client.run(request({vaddLaunch(), {"wild", {5}, "Bad_1"}}));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(message(r.diagnostics()),
              "kernel 'Bad_1' faulted on the GPU: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)");
    EXPECT_FALSE(client.started()) << "the runner exits after a fatal answer";
    expectVaddWorks(client);
    EXPECT_NE(client.pid(), before) << "a fresh runner after the fault";
}

TEST_F(GpuRunner, RefusedLaunchIsNotFatal) {
    prepare();
    RunnerClient client(options());
    expectVaddWorks(client);
    const pid_t pid = client.pid();
    LaunchSpec tooBig = vaddLaunch();
    tooBig.grid = 1;
    tooBig.block = 2048;
    auto r = client.run(request({tooBig}));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(message(r.diagnostics()),
              "kernel 'Add_0' could not be launched (grid 1, block 2048, shared 0 bytes): CUDA_ERROR_INVALID_VALUE "
              "(invalid argument)");
    EXPECT_EQ(client.pid(), pid) << "the context is still usable: same runner";

    auto missing = client.run(request({{"nope", {0}, ""}}));
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(message(missing.diagnostics()), "entry 'nope' not found in module '" + s_ptx + "'");

    const std::string badPtx = s_dir->str() + "/bad.ptx";
    std::ofstream(badPtx) << ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry broken( { ret; }\n";
    auto bad = client.run(request({vaddLaunch()}, false, badPtx));
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(message(bad.diagnostics()).rfind("cannot load module '" + badPtx + "': CUDA_ERROR_", 0), 0u)
        << message(bad.diagnostics());

    auto noFile = client.run(request({vaddLaunch()}, false, s_dir->str() + "/missing.cubin"));
    ASSERT_FALSE(noFile.ok());
    EXPECT_EQ(message(noFile.diagnostics()),
              "cannot read module '" + s_dir->str() + "/missing.cubin': No such file or directory");

    EXPECT_EQ(client.pid(), pid);
    expectVaddWorks(client);
    EXPECT_EQ(client.pid(), pid);
}

TEST_F(GpuRunner, HangingKernelIsKilledAfterTheTimeout) {
    prepare();
    RunnerClient client(options());
    expectVaddWorks(client);  // the context and the module are ready: the 3 s are the kernel's
    auto req = request({vaddLaunch(), {"spin", {5}, "Loop_7"}});
    req.timeoutSeconds = 3;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = client.run(req);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(message(r.diagnostics()), "kernel 'Loop_7' did not finish within 3 s (killed)");
    EXPECT_GE(seconds, 2.9);
    EXPECT_FALSE(client.started());
    expectVaddWorks(client);
}

}  // namespace
}  // namespace tessera::runtime
