// GPU roofs measured on a real CUDA device (issue 7): a quick measureGpuRoofs gives the FP32 and
// FP16 FMA peaks, the tensor-core peaks (sm_80+), and the shared, L1, L2 and HBM bandwidths, each
// positive and within [10%, 110%] of the device's theoretical peak (gpuTheoreticalPeaks), in the
// order of the memory hierarchy, and a machine profile that round-trips. Skips visibly without a
// driver or device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <iostream>
#include <string>

#include "core/perf/gpu_microbench.h"
#include "core/perf/machine_profile.h"
#include "core/runtime/runner_client.h"

namespace tessera::perf {
namespace {

const Roof* findRoof(const std::vector<Roof>& roofs, const std::string& name) {
    for (const auto& r : roofs)
        if (r.name == name) return &r;
    return nullptr;
}

TEST(GpuRoofline, QuickMeasureGivesPlausibleRoofs) {
    runtime::RunnerClientOptions ro;
    // $TESSERA_RUNNER wins (binaries carried to another machine), else the build tree's.
    const char* env = std::getenv("TESSERA_RUNNER");
    ro.runnerPath = env && *env ? std::string(env) : std::string(TESSERA_BINARY_DIR) + "/app/runner/tessera-runner";
    runtime::RunnerClient runner(ro);
    auto devices = runner.devices();
    if (!devices) GTEST_SKIP() << "no CUDA driver/device: " << devices.diagnostics().items().front().message;
    if (devices->empty()) GTEST_SKIP() << "no CUDA device";

    GpuMicrobenchOptions o;
    o.quick = true;
    o.cacheDir = (std::filesystem::temp_directory_path() / "tessera-gpu-test-cuda").string();
    auto r = measureGpuRoofs(o, runner);
    ASSERT_TRUE(r.ok()) << r.diagnostics().formatAll();
    // The numbers, for the log of the device run.
    for (const auto& w : r.diagnostics().items()) std::cout << "warning: " << w.message << "\n";
    for (std::size_t i = 0; i < r->roofs.size(); ++i)
        std::cout << r->roofs[i].name << ": " << r->roofs[i].value << " " << r->roofs[i].unit << " ("
                  << 100 * r->checks[i].ratio << "% of " << r->checks[i].theoretical << "; " << r->roofs[i].method
                  << ")\n";
    for (const auto& p : r->sweep) std::cout << "sweep " << p.method << " " << p.workingSetBytes << " B: " << p.gbPerSecond << " GB/s\n";

    const GpuTheoreticalPeaks& pk = r->peaks;
    ASSERT_GT(pk.fp32, 0) << "the device reports no clock";
    ASSERT_GT(pk.hbm, 0) << "the device reports no memory clock or bus width";
    auto expectPlausible = [&](const std::string& name, double theoretical) -> const Roof* {
        const Roof* roof = findRoof(r->roofs, name);
        EXPECT_NE(roof, nullptr) << "missing roof '" << name << "'";
        if (!roof) return nullptr;
        EXPECT_GT(roof->value, 0) << name;
        EXPECT_GE(roof->value, 0.1 * theoretical) << name << " below 10% of the theoretical " << theoretical;
        EXPECT_LE(roof->value, 1.1 * theoretical) << name << " above 110% of the theoretical " << theoretical;
        return roof;
    };
    const Roof* fp32 = expectPlausible("FP32 FMA peak", pk.fp32);
    expectPlausible("FP16 FMA peak", pk.fp16);
    const Roof* shared = expectPlausible("shared load bandwidth", pk.shared);
    expectPlausible("L1 load bandwidth", pk.shared);
    const Roof* l2 = expectPlausible("L2 load bandwidth", pk.l2);
    expectPlausible("L2 copy bandwidth", pk.l2);
    const Roof* hbm = expectPlausible("HBM load bandwidth", pk.hbm);
    expectPlausible("HBM copy bandwidth", pk.hbm);
    if (r->device.ccMajor >= 8) {
        const Roof* f16 = expectPlausible("FP16 tensor-core peak", pk.tensorF16);
        expectPlausible("BF16 tensor-core peak", pk.tensorF16);
        expectPlausible("TF32 tensor-core peak", pk.tensorTf32);
        if (f16 && fp32) {
            EXPECT_GT(f16->value, 2 * fp32->value) << "tensor cores no faster than the FP32 lanes";
        }
    } else {
        EXPECT_EQ(findRoof(r->roofs, "FP16 tensor-core peak"), nullptr);
        EXPECT_FALSE(r->notes.empty());
    }
    // The hierarchy: shared memory above L2 above HBM.
    if (shared && l2) {
        EXPECT_GT(shared->value, l2->value);
    }
    if (l2 && hbm) {
        EXPECT_GT(l2->value, hbm->value);
    }
    for (const auto& roof : r->roofs) {
        EXPECT_EQ(roof.threads, 1) << roof.name;
        EXPECT_FALSE(roof.method.empty()) << roof.name;
        if (roof.kind == Roof::Kind::Bandwidth) {
            EXPECT_GE(memoryLevelRank(roof.level), 0) << roof.level;
        }
    }
    EXPECT_FALSE(r->sweep.empty());

    // The profile: keyed by the GPU fingerprint, valid, and it round-trips.
    EXPECT_EQ(r->profile.fingerprint, gpuFingerprint(r->device));
    EXPECT_EQ(r->profile.target, "cuda:" + std::to_string(r->device.ordinal));
    auto back = parseProfile(profileToString(r->profile));
    ASSERT_TRUE(back.ok()) << back.diagnostics().formatAll();
    EXPECT_EQ(back->roofs.size(), r->roofs.size());
}

}  // namespace
}  // namespace tessera::perf
