// The runner protocol's CUDA fields without a GPU: JSON round trips, defaults and rejected values;
// the driver loader's errors through a real tessera-runner (no driver here: the runner answers
// ok:false and keeps serving); a fatal answer handled like a crash (through a fake runner script).

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>

#include "core/runtime/cuda/cuda_driver.h"
#include "core/runtime/runner_client.h"
#include "core/runtime/runner_protocol.h"
#include "core/runtime/shared_arena.h"
#include "runtime_test_util.h"

namespace tessera::runtime {
namespace {

using nlohmann::json;

std::string firstError(const support::DiagnosticList& d) {
    return d.firstError() ? d.firstError()->message : std::string("<no error>");
}

RunRequest cudaRequest() {
    RunRequest r;
    r.target = RunTarget::Cuda;
    r.modulePath = "/cache/k.cubin";
    r.device = 1;
    r.arenaPath = "/dev/shm/tessera-arena-x";
    r.arenaBytes = 4096;
    r.buffers = {{0, 1024}, {1024, 1024}, {2048, 8}};
    LaunchSpec l{"vadd", {0, 1, 2}, "Add_0"};
    l.grid = 1000;
    l.block = 256;
    l.sharedBytes = 65536;
    r.launches = {l, {"k1", {2}, ""}};
    r.rotateBytes = -1;
    return r;
}

/// A cuda request JSON that parses, for the rejection tests to spoil one field of.
json validCudaJson() {
    return json::parse(R"({"request":"run","target":"cuda","module":"/m.ptx","arena":{"path":"/a","bytes":64},
        "buffers":[{"offset":0,"bytes":64}],"launches":[{"entry":"k","args":[0],"grid":2,"block":32}]})");
}

TEST(RunnerGpuProtocol, CudaRequestRoundTrip) {
    const RunRequest r = cudaRequest();
    const json j = runRequestToJson(r);
    EXPECT_EQ(j["target"], "cuda");
    EXPECT_EQ(j["module"], "/cache/k.cubin");
    EXPECT_EQ(j["device"], 1);
    EXPECT_EQ(j["rotate_bytes"], -1) << "cuda keeps -1: the runner's default (2 x L2)";
    EXPECT_EQ(j["launches"][0]["grid"], 1000);
    EXPECT_EQ(j["launches"][0]["block"], 256);
    EXPECT_EQ(j["launches"][0]["shared_bytes"], 65536);

    auto back = runRequestFromJson(j);
    ASSERT_TRUE(back.ok()) << firstError(back.diagnostics());
    EXPECT_EQ(back->target, RunTarget::Cuda);
    EXPECT_EQ(back->modulePath, "/cache/k.cubin");
    EXPECT_EQ(back->device, 1);
    EXPECT_EQ(back->rotateBytes, -1);
    ASSERT_EQ(back->launches.size(), 2u);
    EXPECT_EQ(back->launches[0].entry, "vadd");
    EXPECT_EQ(back->launches[0].label, "Add_0");
    EXPECT_EQ(back->launches[0].args, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(back->launches[0].grid, 1000);
    EXPECT_EQ(back->launches[0].block, 256);
    EXPECT_EQ(back->launches[0].sharedBytes, 65536);
    EXPECT_EQ(back->launches[1].grid, 1);
    EXPECT_EQ(back->launches[1].block, 1);
    EXPECT_EQ(back->launches[1].sharedBytes, 0);
    EXPECT_EQ(back->launches[1].label, "k1");
    EXPECT_EQ(back->buffers.size(), 3u);
    EXPECT_EQ(back->buffers[2].offset, 2048);
    // Written again, the same JSON.
    EXPECT_EQ(runRequestToJson(*back), j);
}

TEST(RunnerGpuProtocol, Defaults) {
    // No target: a CPU run (the protocol as it was), which needs a library but no module.
    auto cpu = runRequestFromJson(json::parse(R"({"request":"run","library":"/k.so","launches":[{"entry":"k"}]})"));
    ASSERT_TRUE(cpu.ok()) << firstError(cpu.diagnostics());
    EXPECT_EQ(cpu->target, RunTarget::Cpu);
    EXPECT_EQ(cpu->modulePath, "");
    EXPECT_EQ(cpu->launches.at(0).grid, 1);
    EXPECT_EQ(cpu->launches.at(0).block, 1);
    EXPECT_EQ(cpu->launches.at(0).sharedBytes, 0);
    EXPECT_EQ(cpu->rotateBytes, 0);
    const json cpuJson = runRequestToJson(*cpu);
    EXPECT_EQ(cpuJson["target"], "cpu");
    EXPECT_FALSE(cpuJson.contains("module"));
    EXPECT_FALSE(cpuJson.contains("device"));

    // A cuda run needs no library; device defaults to 0, launch dimensions to 1.
    auto gpu = runRequestFromJson(json::parse(R"({"request":"run","target":"cuda","module":"/k.ptx","launches":[{"entry":"k"}]})"));
    ASSERT_TRUE(gpu.ok()) << firstError(gpu.diagnostics());
    EXPECT_EQ(gpu->target, RunTarget::Cuda);
    EXPECT_EQ(gpu->libraryPath, "");
    EXPECT_EQ(gpu->device, 0);
    EXPECT_EQ(gpu->launches.at(0).grid, 1);
    EXPECT_EQ(gpu->launches.at(0).block, 1);
    EXPECT_EQ(gpu->launches.at(0).sharedBytes, 0);

    // A CPU request written by this build and the RunRequest defaults.
    RunRequest plain;
    plain.libraryPath = "/k.so";
    plain.rotateBytes = -1;
    const json pj = runRequestToJson(plain);
    EXPECT_EQ(pj["rotate_bytes"], 0) << "a CPU request never carries -1 (the client fills in the cache size)";
    EXPECT_STREQ(runTargetName(RunTarget::Cpu), "cpu");
    EXPECT_STREQ(runTargetName(RunTarget::Cuda), "cuda");
}

TEST(RunnerGpuProtocol, BadValuesAreRejectedWithTheFieldNamed) {
    ASSERT_TRUE(runRequestFromJson(validCudaJson()).ok());
    struct Case {
        std::function<void(json&)> spoil;
        std::string error;
    };
    const std::vector<Case> cases = {
        {[](json& j) { j["target"] = "gpu"; }, "field 'target' must be \"cpu\" or \"cuda\", not 'gpu'"},
        {[](json& j) { j["target"] = 3; }, "field 'target' has the wrong type"},
        {[](json& j) { j.erase("module"); }, "missing field 'module'"},
        {[](json& j) { j["module"] = ""; }, "field 'module' is empty (a cuda run needs a .cubin or .ptx file)"},
        {[](json& j) { j["module"] = 7; }, "field 'module' has the wrong type"},
        {[](json& j) { j["device"] = -1; }, "field 'device' is negative"},
        {[](json& j) { j["device"] = "0"; }, "field 'device' has the wrong type"},
        {[](json& j) { j["launches"][0]["grid"] = 0; }, "launch 'k': field 'grid' is 0, must be between 1 and 2147483647"},
        {[](json& j) { j["launches"][0]["grid"] = 2147483648LL; },
         "launch 'k': field 'grid' is 2147483648, must be between 1 and 2147483647"},
        {[](json& j) { j["launches"][0]["block"] = -32; }, "launch 'k': field 'block' is -32, must be between 1 and 2147483647"},
        {[](json& j) { j["launches"][0]["block"] = "32"; }, "field 'block' has the wrong type"},
        {[](json& j) { j["launches"][0]["shared_bytes"] = -1; },
         "launch 'k': field 'shared_bytes' is -1, must be between 0 and 2147483647"},
        {[](json& j) { j["launches"][0]["shared_bytes"] = 1.5; }, "field 'shared_bytes' has the wrong type"},
        {[](json& j) { j["rotate_bytes"] = -2; }, "field 'rotate_bytes' is negative (-1 = the device default)"},
    };
    for (const Case& c : cases) {
        json j = validCudaJson();
        c.spoil(j);
        auto r = runRequestFromJson(j);
        ASSERT_FALSE(r.ok()) << j.dump();
        EXPECT_EQ(firstError(r.diagnostics()), c.error) << j.dump();
    }
    // A CPU request still needs its library, and -1 is no CPU rotate_bytes.
    auto noLib = runRequestFromJson(json::parse(R"({"request":"run","target":"cpu","module":"/m.ptx"})"));
    ASSERT_FALSE(noLib.ok());
    EXPECT_EQ(firstError(noLib.diagnostics()), "missing field 'library'");
    auto cpuRotate = runRequestFromJson(json::parse(R"({"request":"run","library":"/k.so","rotate_bytes":-1})"));
    ASSERT_FALSE(cpuRotate.ok());
    EXPECT_EQ(firstError(cpuRotate.diagnostics()), "field 'rotate_bytes' is negative");
}

cuda::CudaDeviceInfo h200Like() {
    cuda::CudaDeviceInfo d;
    d.ordinal = 0;
    d.name = "NVIDIA H200";
    d.ccMajor = 9;
    d.ccMinor = 0;
    d.smCount = 132;
    d.totalMemoryBytes = 150754820096;
    d.l2Bytes = 62914560;
    d.sharedPerBlockOptinBytes = 232448;
    d.sharedPerSmBytes = 233472;
    d.warpSize = 32;
    d.clockKHz = 1980000;
    d.memoryClockKHz = 3201000;
    d.memoryBusWidthBits = 6144;
    return d;
}

TEST(RunnerGpuProtocol, DeviceInfoJson) {
    const cuda::CudaDeviceInfo d = h200Like();
    EXPECT_EQ(d.arch(), "sm_90");
    EXPECT_DOUBLE_EQ(d.peakDramBytesPerSecond(), 2.0 * 3201000e3 * 6144 / 8);
    const json j = cuda::cudaDeviceInfoToJson(d);
    EXPECT_EQ(j, json::parse(R"({"ordinal":0,"name":"NVIDIA H200","arch":"sm_90","cc_major":9,"cc_minor":0,"sm_count":132,
        "total_memory_bytes":150754820096,"l2_bytes":62914560,"shared_per_block_optin_bytes":232448,
        "shared_per_sm_bytes":233472,"warp_size":32,"clock_khz":1980000,"memory_clock_khz":3201000,
        "memory_bus_width_bits":6144})"));
    auto back = cuda::cudaDeviceInfoFromJson(j);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(cuda::cudaDeviceInfoToJson(*back), j);

    json bad = j;
    bad["sm_count"] = "132";
    auto r = cuda::cudaDeviceInfoFromJson(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(firstError(r.diagnostics()), "device field 'sm_count' has the wrong type");
    EXPECT_FALSE(cuda::cudaDeviceInfoFromJson(json::array()).ok());

    cuda::CudaDeviceInfo blackwell;
    blackwell.ccMajor = 12;
    blackwell.ccMinor = 0;
    EXPECT_EQ(blackwell.arch(), "sm_120");
    EXPECT_EQ(blackwell.peakDramBytesPerSecond(), 0.0);
}

TEST(RunnerGpuProtocol, ResultCarriesTheDevice) {
    RunResult r;
    r.timed = true;
    r.kernels.push_back({"Add_0", {1e-5, 9e-6, 2e-5, 9.5e-6, 1.1e-5, 1.05e-5, 40}, 3});
    r.total = {2e-5, 1.9e-5, 3e-5, 1.95e-5, 2.1e-5, 2.05e-5, 20};
    r.device = h200Like();
    const json j = runResultToJson(r);
    EXPECT_EQ(j["device"]["name"], "NVIDIA H200");
    EXPECT_EQ(j["device"]["arch"], "sm_90");
    auto back = runResultFromJson(j);
    ASSERT_TRUE(back.ok()) << firstError(back.diagnostics());
    ASSERT_TRUE(back->device.has_value());
    EXPECT_EQ(back->device->smCount, 132);
    EXPECT_EQ(back->device->l2Bytes, 62914560);
    EXPECT_EQ(back->kernels.at(0).rotatedCopies, 3);
    EXPECT_EQ(back->kernels.at(0).stats.reps, 40);
    EXPECT_EQ(back->total.median, 2e-5);

    RunResult cpu;
    const json cj = runResultToJson(cpu);
    EXPECT_FALSE(cj.contains("device")) << "CPU results carry no device";
    auto cpuBack = runResultFromJson(cj);
    ASSERT_TRUE(cpuBack.ok());
    EXPECT_FALSE(cpuBack->device.has_value());

    json badDevice = j;
    badDevice["device"]["warp_size"] = "32";
    auto bad = runResultFromJson(badDevice);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(firstError(bad.diagnostics()), "device field 'warp_size' has the wrong type");
}

TEST(RunnerGpuProtocol, ErrorTextsAndStickyCodes) {
    EXPECT_TRUE(cuda::isStickyCudaError(cuda::kCudaErrorIllegalAddress));
    EXPECT_TRUE(cuda::isStickyCudaError(716));  // misaligned address
    EXPECT_TRUE(cuda::isStickyCudaError(719));  // launch failed
    EXPECT_FALSE(cuda::isStickyCudaError(cuda::kCudaErrorInvalidValue));
    EXPECT_FALSE(cuda::isStickyCudaError(701)) << "too many resources requested: the context stays usable";
    EXPECT_FALSE(cuda::isStickyCudaError(cuda::kCudaErrorOutOfMemory));
    if (!cuda::CudaDriver::get().ok()) {
        // Without a driver, Tessera's own names.
        EXPECT_EQ(cuda::cudaErrorText(cuda::kCudaErrorNoDevice), "CUDA_ERROR_NO_DEVICE");
        EXPECT_EQ(cuda::cudaErrorText(12345), "CUDA error 12345");
    } else {
        EXPECT_EQ(cuda::cudaErrorText(cuda::kCudaErrorIllegalAddress).rfind("CUDA_ERROR_ILLEGAL_ADDRESS (", 0), 0u);
    }
}

class RunnerGpuNoDriver : public ::testing::Test {
protected:
    static RunnerClientOptions options() {
        RunnerClientOptions o;
        o.runnerPath = TESSERA_BINARY_DIR "/app/runner/tessera-runner";
        return o;
    }
};

TEST_F(RunnerGpuNoDriver, DevicesAnswerMatchesTheDriverInProcess) {
    RunnerClient client(options());
    auto remote = client.devices();
    auto local = cuda::listCudaDevices();
    ASSERT_EQ(remote.ok(), local.ok());
    if (!local.ok()) {
        EXPECT_EQ(firstError(remote.diagnostics()), firstError(local.diagnostics()));
        EXPECT_TRUE(client.started()) << "an error answer keeps the runner";
    } else {
        ASSERT_EQ(remote->size(), local->size());
        EXPECT_EQ(remote->at(0).name, local->at(0).name);
        EXPECT_EQ(remote->at(0).smCount, local->at(0).smCount);
    }
}

TEST_F(RunnerGpuNoDriver, CudaRunWithoutADriverIsAnErrorAndTheRunnerKeepsServing) {
    if (cuda::CudaDriver::get().ok()) GTEST_SKIP() << "a CUDA driver is present: tessera_gpu_tests cover CUDA runs";
    const std::string driverError = firstError(cuda::CudaDriver::get().diagnostics());
    EXPECT_EQ(driverError.rfind("no CUDA driver found (libcuda.so.1: ", 0), 0u) << driverError;

    auto arena = SharedArena::create(256);
    ASSERT_TRUE(arena.ok());
    RunRequest req;
    req.target = RunTarget::Cuda;
    req.modulePath = "/nonexistent/k.ptx";
    arena->attach(req);
    req.buffers = {{0, 256}};
    req.launches = {{"k", {0}, "K_0"}};
    RunnerClient client(options());
    auto first = client.run(req);
    ASSERT_FALSE(first.ok());
    EXPECT_EQ(firstError(first.diagnostics()), driverError);
    ASSERT_TRUE(client.started()) << "not fatal: the runner keeps serving";
    const pid_t pid = client.pid();
    auto devices = client.devices();
    ASSERT_FALSE(devices.ok());
    EXPECT_EQ(firstError(devices.diagnostics()), driverError);
    auto again = client.run(req);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(firstError(again.diagnostics()), driverError);
    auto hello = client.hello();
    ASSERT_TRUE(hello.ok());
    EXPECT_EQ(client.pid(), pid);
}

TEST_F(RunnerGpuNoDriver, DriverLoaderErrorsThroughTheRunner) {
    // TESSERA_CUDA_DRIVER replaces libcuda.so.1 in the runner.
    {
        RunnerClientOptions o = options();
        o.env.emplace_back("TESSERA_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
        RunnerClient client(o);
        auto r = client.devices();
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(firstError(r.diagnostics()),
                  "no CUDA driver found (/nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory)");
    }
    {
        // A library that is not the driver: the first entry point it lacks is named.
        RunnerClientOptions o = options();
        o.env.emplace_back("TESSERA_CUDA_DRIVER", "libm.so.6");
        RunnerClient client(o);
        auto r = client.devices();
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(firstError(r.diagnostics()), "the CUDA driver 'libm.so.6' lacks cuInit (driver too old?)");
        EXPECT_TRUE(client.started());
    }
}

TEST(RunnerGpuFatal, FatalAnswerEndsTheRunnerAndTheNextCallStartsAFreshOne) {
    // A stand-in runner that answers hello, then a run with the fatal answer a GPU fault produces.
    test::TempDir dir;
    const std::string script = dir.str() + "/fake-runner.sh";
    {
        std::ofstream out(script);
        out << "#!/bin/sh\n"
               "read line\n"
               "echo '{\"ok\":true,\"protocol\":1,\"pid\":'$$',\"omp_max_threads\":null}'\n"
               "read line\n"
               "echo '{\"event\":\"launch\",\"index\":0}'\n"
               "echo 'CUDA fault detail' >&2\n"
               "echo '{\"ok\":false,\"error\":\"kernel K_0 faulted on the GPU: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory "
               "access was encountered)\",\"fatal\":true}'\n"
               "exit "
            << kRunnerFatalExitStatus << "\n";
    }
    ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
    RunnerClientOptions o;
    o.runnerPath = script;
    RunnerClient client(o);
    RunRequest req;
    req.target = RunTarget::Cuda;
    req.modulePath = "/m.ptx";
    req.launches = {{"k", {}, "K_0"}};
    auto r = client.run(req);
    ASSERT_FALSE(r.ok());
    const auto& d = *r.diagnostics().firstError();
    EXPECT_EQ(d.message, "kernel K_0 faulted on the GPU: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)");
    ASSERT_FALSE(d.notes.empty());
    EXPECT_EQ(d.notes.back(), "runner stderr: CUDA fault detail");
    EXPECT_FALSE(client.started()) << "the fatal answer ends the runner; the client reaped it";
    auto again = client.run(req);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(firstError(again.diagnostics()), d.message) << "a fresh runner served the next request";
}

}  // namespace
}  // namespace tessera::runtime
