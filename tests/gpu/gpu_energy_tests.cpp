// Energy through NVML on a real CUDA device, via tessera-runner: a compute-bound FMA kernel
// (CUDA C compiled by NVRTC) timed for 0.5 s reports joules per launch and an average power a
// GPU can draw, consistent with its time per launch; a tiny kernel whose timed phase ends early
// (max_reps) is measured over the runner's longer energy phase; a model run through the pipeline
// carries the energy into its KernelReports. Skips visibly without a CUDA
// device, NVRTC or NVML.

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/run.h"
#include "core/runtime/cuda/cuda_driver.h"
#include "core/runtime/cuda/nvml.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/runtime/runner_client.h"
#include "core/runtime/shared_arena.h"
#include "runtime/runtime_test_util.h"

namespace tessera::runtime {
namespace {

// Eight independent FMA chains per thread, *iters times: 16 FLOPs per iteration and thread.
const char* const kFmaC = R"(
extern "C" __global__ void fma_loop(float* out, const long long* iters) {
    const long long n = *iters;
    const float b = 0.9999f, c = 1e-4f;
    float x0 = threadIdx.x * 1e-3f, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;
    float x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
    for (long long i = 0; i < n; ++i) {
        x0 = fmaf(x0, b, c); x1 = fmaf(x1, b, c); x2 = fmaf(x2, b, c); x3 = fmaf(x3, b, c);
        x4 = fmaf(x4, b, c); x5 = fmaf(x5, b, c); x6 = fmaf(x6, b, c); x7 = fmaf(x7, b, c);
    }
    out[static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

extern "C" __global__ void touch(float* out) { out[threadIdx.x] += 1.0f; }
)";

constexpr std::int64_t kBlock = 256;
constexpr std::int64_t kIters = 4096;

std::string message(const support::DiagnosticList& d) { return d.firstError() ? d.firstError()->message : std::string("<no error>"); }

RunnerClientOptions runnerOptions() {
    RunnerClientOptions o;
    const char* env = std::getenv("TESSERA_RUNNER");
    o.runnerPath = env && *env ? std::string(env) : std::string(TESSERA_BINARY_DIR "/app/runner/tessera-runner");
    return o;
}

class GpuEnergy : public ::testing::Test {
protected:
    void SetUp() override {
        auto devices = cuda::listCudaDevices();
        if (!devices) GTEST_SKIP() << "no CUDA driver/device: " << message(devices.diagnostics());
        m_device = devices->front();
        if (auto info = cuda::nvrtcInfo(); !info) GTEST_SKIP() << "NVRTC not found: " << message(info.diagnostics());
        if (auto nvml = cuda::Nvml::get(); !nvml) GTEST_SKIP() << "NVML unavailable: " << message(nvml.diagnostics());
        cuda::CudaCompileOptions opts;
        opts.arch = cuda::cudaArchForComputeCapability(m_device.ccMajor, m_device.ccMinor);
        opts.cacheDir = m_cache.str();
        auto compiled = cuda::compileCuda(kFmaC, opts);
        ASSERT_TRUE(compiled.ok()) << message(compiled.diagnostics());
        m_cubin = compiled->cubinPath;
        m_grid = std::int64_t{m_device.smCount} * 8;
        std::int64_t total = 0;
        m_buffers = layoutBuffers({m_grid * kBlock * 4, 8}, total);
        auto arena = SharedArena::create(total);
        ASSERT_TRUE(arena.ok()) << message(arena.diagnostics());
        m_arena = std::move(*arena);
        std::memset(m_arena.at(0), 0, static_cast<std::size_t>(total));
        *m_arena.as<std::int64_t>(m_buffers[1].offset) = kIters;
    }

    RunRequest request(LaunchSpec launch) const {
        RunRequest r;
        r.target = RunTarget::Cuda;
        r.modulePath = m_cubin;
        m_arena.attach(r);
        r.buffers = m_buffers;
        r.launches = {std::move(launch)};
        r.rotateBytes = 0;
        r.timeoutSeconds = 60;
        return r;
    }

    test::TempDir m_cache;
    cuda::CudaDeviceInfo m_device;
    std::string m_cubin;
    std::int64_t m_grid = 0;
    SharedArena m_arena;
    std::vector<BufferSpec> m_buffers;
};

TEST_F(GpuEnergy, ComputeBoundKernelReportsJoulesAndPower) {
    LaunchSpec l{"fma_loop", {0, 1}, "Fma_0"};
    l.grid = m_grid;
    l.block = kBlock;
    RunRequest req = request(l);
    req.timing.minSeconds = 0.5;
    req.timing.maxReps = 1000000;
    RunnerClient client(runnerOptions());
    auto r = client.run(req);
    ASSERT_TRUE(r.ok()) << message(r.diagnostics());
    ASSERT_EQ(r->kernels.size(), 1u);
    const KernelTiming& k = r->kernels[0];
    ASSERT_TRUE(k.energy.has_value()) << "NVML loads in the test process, yet the runner reported no energy";
    const KernelEnergy& e = *k.energy;
    const double flops = 16.0 * static_cast<double>(m_grid * kBlock * kIters);
    std::printf("%s: fma_loop %.3f GFLOP, median %.1f us, %lld reps; %s: %.4f J/launch, %.1f W avg over %.3f s "
                "(%lld launches), %.1f GFLOP/J, %.1f GFLOP/s\n",
                m_device.name.c_str(), flops * 1e-9, k.stats.median * 1e6, static_cast<long long>(k.stats.reps),
                e.method.c_str(), e.joulesPerCall, e.avgPowerWatts, e.seconds, static_cast<long long>(e.calls),
                flops / e.joulesPerCall * 1e-9, flops / k.stats.median * 1e-9);
    EXPECT_TRUE(e.method == "nvml-energy-counter" || e.method == "nvml-power-samples") << e.method;
    if (m_device.ccMajor >= 7) {
        EXPECT_EQ(e.method, "nvml-energy-counter") << "Volta and newer have the energy counter";
    }
    EXPECT_TRUE(e.valid);
    EXPECT_GT(e.joulesPerCall, 0.0);
    EXPECT_GT(e.avgPowerWatts, 50.0);
    EXPECT_LT(e.avgPowerWatts, 1000.0);
    // The energy was measured over the timed phase itself (>= 0.5 s, so no extra phase).
    EXPECT_EQ(e.calls, k.stats.reps);
    EXPECT_GE(e.seconds, 0.5);
    EXPECT_LT(e.seconds, 5.0);
    // joules/launch divided by watts is the wall time per launch: the mean launch time plus the
    // small gaps between timed batches.
    const double perLaunch = e.joulesPerCall / e.avgPowerWatts;
    EXPECT_GT(perLaunch, 0.9 * k.stats.mean) << perLaunch << " s vs mean " << k.stats.mean << " s";
    EXPECT_LT(perLaunch, 1.3 * k.stats.mean) << perLaunch << " s vs mean " << k.stats.mean << " s";
}

TEST_F(GpuEnergy, ShortTimedPhaseIsMeasuredOverALongerEnergyPhase) {
    LaunchSpec l{"touch", {0}, "Touch_0"};
    l.grid = 1;
    l.block = kBlock;
    RunRequest req = request(l);
    req.timing.minSeconds = 0.01;
    req.timing.maxReps = 100;  // a few microseconds each: the timed phase lasts well under 50 ms
    RunnerClient client(runnerOptions());
    auto r = client.run(req);
    ASSERT_TRUE(r.ok()) << message(r.diagnostics());
    const KernelTiming& k = r->kernels.at(0);
    EXPECT_EQ(k.stats.reps, 100);
    ASSERT_TRUE(k.energy.has_value());
    const KernelEnergy& e = *k.energy;
    std::printf("touch: median %.2f us; energy over %lld launches in %.3f s: %.2f uJ/launch, %.1f W (%s)\n",
                k.stats.median * 1e6, static_cast<long long>(e.calls), e.seconds, e.joulesPerCall * 1e6, e.avgPowerWatts,
                e.valid ? "valid" : "not valid");
    EXPECT_GT(e.calls, k.stats.reps) << "the runner launched the kernel again for the energy phase";
    EXPECT_GE(e.seconds, 0.09);
    EXPECT_TRUE(e.valid);
    EXPECT_GT(e.joulesPerCall, 0.0);
    EXPECT_GT(e.avgPowerWatts, 20.0);
    EXPECT_LT(e.avgPowerWatts, 1000.0);
    // The checked pass ran once and timing ran on the same device buffer, so the arena holds the
    // checked result: 1.0 in each of the first kBlock floats.
    const float* out = m_arena.as<float>(m_buffers[0].offset);
    for (int i = 0; i < kBlock; ++i) ASSERT_EQ(out[i], 1.0f) << i;
}

TEST_F(GpuEnergy, PipelineReportsEnergyPerKernel) {
    // The build tree's samples, else ./samples (binaries carried to another machine run from a
    // copy of the repository).
    std::string path = std::string(TESSERA_SAMPLES) + "/dw_pw_block.onnx";
    if (!std::filesystem::exists(path)) path = "samples/dw_pw_block.onnx";
    auto model = pipeline::loadModel(path);
    ASSERT_TRUE(model.ok()) << message(model.diagnostics());
    const std::vector<ir::TensorData> inputs = pipeline::defaultInputs(model->graph);
    pipeline::CompileOptions copts;
    copts.target = lower::Target::Cuda;
    copts.fallbackReference = true;
    auto cm = pipeline::compileModel(*model, inputs, copts);
    ASSERT_TRUE(cm.ok()) << message(cm.diagnostics());
    pipeline::RunOptions ropts;
    ropts.cudaCacheDir = m_cache.str();
    ropts.minSeconds = 0.1;
    RunnerClient client(runnerOptions());
    auto rep = pipeline::runModel(*cm, inputs, ropts, client);
    ASSERT_TRUE(rep.ok()) << message(rep.diagnostics());
    int withEnergy = 0;
    for (const pipeline::KernelReport& k : rep->kernels) {
        std::printf("%-28s %-16s median %8.2f us  %10.3f uJ/run  %6.1f W\n", k.name.c_str(), k.opType.c_str(),
                    k.time.median * 1e6, k.energyJoules * 1e6, k.avgPowerWatts);
        if (k.reference) {
            EXPECT_EQ(k.energyJoules, -1.0) << k.name << ": reference steps run on the host";
            continue;
        }
        EXPECT_GT(k.energyJoules, 0.0) << k.name;
        EXPECT_GT(k.avgPowerWatts, 20.0) << k.name;
        EXPECT_LT(k.avgPowerWatts, 1000.0) << k.name;
        ++withEnergy;
    }
    EXPECT_GT(withEnergy, 0);
}

}  // namespace
}  // namespace tessera::runtime
