// NVML loaded at run time, without a GPU: the loader's errors (missing library, a library lacking
// the symbols, nvmlInit failing), $TESSERA_NVML_LIBRARY, and EnergyMeter's two methods against a
// fake libnvidia-ml built here with the host compiler (a scripted energy counter and power
// reading); the power integration against hand values; the runner protocol's energy fields
// (round trip, absence, wrong types).

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/runtime/cuda/nvml.h"
#include "core/runtime/host_jit.h"
#include "core/runtime/runner_protocol.h"
#include "runtime_test_util.h"

namespace tessera::runtime {
namespace {

using cuda::EnergyMeter;
using cuda::EnergyMethod;
using cuda::EnergyReading;
using cuda::Nvml;
using cuda::PowerSample;

// A stand-in for libnvidia-ml.so.1: the entry points Tessera resolves, with state the test sets
// through fake_configure (reached by dlopen'ing the same file: one copy of the globals).
// FAKE_NO_ENERGY leaves nvmlDeviceGetTotalEnergyConsumption out.
const char* const kFakeNvml = R"(#include <atomic>
#include <cstring>
namespace {
std::atomic<int> g_initRc{0}, g_energyRc{0}, g_powerRc{0};
std::atomic<unsigned long long> g_energy{5000000}, g_energyStep{0};
std::atomic<unsigned> g_powerMw{250000};
std::atomic<int> g_powerCalls{0}, g_energyCalls{0};
}
extern "C" {
void fake_configure(int initRc, int energyRc, unsigned long long energyStep, int powerRc, unsigned powerMw) {
    g_initRc = initRc; g_energyRc = energyRc; g_energyStep = energyStep; g_powerRc = powerRc; g_powerMw = powerMw;
    g_powerCalls = 0; g_energyCalls = 0;
}
int fake_power_calls() { return g_powerCalls; }
int fake_energy_calls() { return g_energyCalls; }
int nvmlInit_v2() { return g_initRc; }
const char* nvmlErrorString(int rc) {
    switch (rc) {
        case 3: return "Not Supported";
        case 6: return "Not Found";
        case 9: return "Driver Not Loaded";
        default: return "Unknown Error";
    }
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* id, void** dev) {
    if (std::strcmp(id, "0000:3b:00.0") != 0) return 6;
    *dev = reinterpret_cast<void*>(0x3b);
    return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** dev) {
    if (index != 0) return 6;
    *dev = reinterpret_cast<void*>(0x3b);
    return 0;
}
int nvmlDeviceGetPowerUsage(void* dev, unsigned* mw) {
    if (dev != reinterpret_cast<void*>(0x3b)) return 2;
    ++g_powerCalls;
    if (g_powerRc) return g_powerRc;
    *mw = g_powerMw;
    return 0;
}
#ifndef FAKE_NO_ENERGY
// Each read advances the counter by the configured step (mJ).
int nvmlDeviceGetTotalEnergyConsumption(void* dev, unsigned long long* mj) {
    if (dev != reinterpret_cast<void*>(0x3b)) return 2;
    ++g_energyCalls;
    if (g_energyRc) return g_energyRc;
    *mj = g_energy += g_energyStep;
    return 0;
}
#endif
}
)";

using Configure = void (*)(int, int, unsigned long long, int, unsigned);
using Calls = int (*)();

class NvmlFake : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        s_dir = new test::TempDir;
        HostCompilerOptions o;
        o.cacheDir = s_dir->str();
        o.flags = {"-O1", "-shared", "-fPIC"};
        auto full = compileHostLibrary(kFakeNvml, o);
        if (!full.ok()) {
            s_error = new std::string(full.diagnostics().items().front().message);
            return;
        }
        s_full = new std::string(full->path);
        o.flags.push_back("-DFAKE_NO_ENERGY");
        auto noEnergy = compileHostLibrary(kFakeNvml, o);
        if (!noEnergy.ok()) {
            s_error = new std::string(noEnergy.diagnostics().items().front().message);
            return;
        }
        s_noEnergy = new std::string(noEnergy->path);
    }
    static void TearDownTestSuite() {
        delete s_full;
        delete s_noEnergy;
        delete s_error;
        delete s_dir;
        s_full = s_noEnergy = s_error = nullptr;
        s_dir = nullptr;
    }
    void SetUp() override { ASSERT_EQ(s_error, nullptr) << "the fake NVML did not build: " << *s_error; }

    /// Configures the fake at `path` (loaded for the rest of the process, like NVML itself).
    static void configure(const std::string& path, int initRc, int energyRc, unsigned long long energyStep, int powerRc,
                          unsigned powerMw) {
        void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(h, nullptr) << ::dlerror();
        auto fn = reinterpret_cast<Configure>(::dlsym(h, "fake_configure"));
        ASSERT_NE(fn, nullptr);
        fn(initRc, energyRc, energyStep, powerRc, powerMw);
    }
    static int calls(const std::string& path, const char* which) {
        void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        auto fn = h ? reinterpret_cast<Calls>(::dlsym(h, which)) : nullptr;
        return fn ? fn() : -1;
    }
    static std::string message(const support::DiagnosticList& d) {
        return d.firstError() ? d.firstError()->message : std::string("<no error>");
    }
    /// The fake's device handle, through the bus-id lookup.
    static cuda::NvmlDevice device(const Nvml& n) {
        auto d = n.deviceByPciBusId("0000:3b:00.0");
        EXPECT_TRUE(d.ok()) << message(d.diagnostics());
        return d.ok() ? *d : nullptr;
    }

    static test::TempDir* s_dir;
    static std::string* s_full;
    static std::string* s_noEnergy;
    static std::string* s_error;
};

test::TempDir* NvmlFake::s_dir = nullptr;
std::string* NvmlFake::s_full = nullptr;
std::string* NvmlFake::s_noEnergy = nullptr;
std::string* NvmlFake::s_error = nullptr;

TEST(Nvml, MissingLibraryIsReportedWithDlerror) {
    auto n = Nvml::load("/nonexistent-tessera-dir/libnvidia-ml.so.1");
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.diagnostics().items().front().message,
              "NVML not found (/nonexistent-tessera-dir/libnvidia-ml.so.1: cannot open shared object file: No such file or "
              "directory)");
}

TEST(Nvml, LibraryWithoutTheSymbolsIsRefused) {
    auto n = Nvml::load("libm.so.6");
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.diagnostics().items().front().message, "the NVML library 'libm.so.6' lacks nvmlInit_v2 (driver too old?)");
}

// get() caches its outcome per process, so each case runs in a fresh process (death-test
// "threadsafe" style re-executes the test binary) with $TESSERA_NVML_LIBRARY set there.
TEST(Nvml, GetHonoursTheEnvironmentVariable) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            ::setenv("TESSERA_NVML_LIBRARY", "/nonexistent-tessera-dir/libnvidia-ml.so.1", 1);
            auto n = Nvml::get();
            auto again = Nvml::get();
            if (n.ok() || again.ok()) std::exit(2);
            std::fprintf(stderr, "[%s]\n", n.diagnostics().items().front().message.c_str());
            std::exit(n.diagnostics().items().front().message == again.diagnostics().items().front().message ? 0 : 3);
        },
        ::testing::ExitedWithCode(0), "\\[NVML not found \\(/nonexistent-tessera-dir/libnvidia-ml\\.so\\.1: cannot open");
}

TEST_F(NvmlFake, GetLoadsTheNamedLibraryOnce) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const std::string path = *s_full;
    EXPECT_EXIT(
        {
            ::setenv("TESSERA_NVML_LIBRARY", path.c_str(), 1);
            auto n = Nvml::get();
            if (!n.ok()) std::exit(2);
            auto again = Nvml::get();
            if (!again.ok() || *again != *n) std::exit(3);
            std::exit((*n)->libraryName == path ? 0 : 4);
        },
        ::testing::ExitedWithCode(0), "");
}

TEST_F(NvmlFake, InitFailureNamesTheCode) {
    configure(*s_full, 9, 0, 0, 0, 250000);
    auto n = Nvml::load(*s_full);
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(message(n.diagnostics()), "NVML found but nvmlInit failed: NVML_ERROR_DRIVER_NOT_LOADED (Driver Not Loaded)");
    configure(*s_full, 0, 0, 0, 0, 250000);
    EXPECT_TRUE(Nvml::load(*s_full).ok());
}

TEST_F(NvmlFake, DeviceByBusIdAndReadings) {
    configure(*s_full, 0, 0, 7, 0, 123456);
    auto n = Nvml::load(*s_full);
    ASSERT_TRUE(n.ok()) << message(n.diagnostics());
    const Nvml& nvml = **n;
    EXPECT_EQ(nvml.libraryName, *s_full);
    EXPECT_NE(nvml.deviceGetTotalEnergyConsumption, nullptr);
    EXPECT_EQ(nvml.deviceGetName, nullptr) << "optional and absent in the fake";
    cuda::NvmlDevice dev = device(nvml);
    ASSERT_NE(dev, nullptr);
    auto e1 = nvml.totalEnergyMillijoules(dev);
    auto e2 = nvml.totalEnergyMillijoules(dev);
    ASSERT_TRUE(e1.ok() && e2.ok());
    EXPECT_EQ(*e2 - *e1, 7u);
    auto p = nvml.powerMilliwatts(dev);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(*p, 123456u);

    auto missing = nvml.deviceByPciBusId("0000:99:00.0");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(message(missing.diagnostics()),
              "NVML cannot find the GPU at PCI bus id 0000:99:00.0: NVML_ERROR_NOT_FOUND (Not Found)");
    EXPECT_EQ(nvml.errorText(3), "NVML_ERROR_NOT_SUPPORTED (Not Supported)");
    EXPECT_EQ(nvml.errorText(12345), "NVML error 12345 (Unknown Error)");

    configure(*s_full, 0, 3, 0, 3, 0);
    auto unsupported = nvml.totalEnergyMillijoules(dev);
    ASSERT_FALSE(unsupported.ok());
    EXPECT_EQ(message(unsupported.diagnostics()),
              "NVML cannot read the total energy of the GPU: NVML_ERROR_NOT_SUPPORTED (Not Supported)");
    auto noPower = nvml.powerMilliwatts(dev);
    ASSERT_FALSE(noPower.ok());
    EXPECT_EQ(message(noPower.diagnostics()), "NVML cannot read the power of the GPU: NVML_ERROR_NOT_SUPPORTED (Not Supported)");
}

TEST_F(NvmlFake, CounterMethodDividesTheDeltaByThePhase) {
    configure(*s_full, 0, 0, 500, 0, 250000);  // every read adds 500 mJ
    auto n = Nvml::load(*s_full);
    ASSERT_TRUE(n.ok()) << message(n.diagnostics());
    EnergyMeter meter(**n, device(**n));
    ASSERT_EQ(meter.method(), EnergyMethod::Counter);
    meter.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
    const EnergyReading r = meter.stop();
    EXPECT_EQ(r.method, EnergyMethod::Counter);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_DOUBLE_EQ(r.joules, 0.5);
    EXPECT_GE(r.seconds, 0.08);
    EXPECT_LT(r.seconds, 5.0);
    EXPECT_DOUBLE_EQ(r.avgWatts, 0.5 / r.seconds);
    EXPECT_TRUE(r.valid);
    EXPECT_EQ(calls(*s_full, "fake_power_calls"), 0) << "no sampling when the counter works";

    // Shorter than kMinEnergyPhaseSeconds: measured, but not valid.
    meter.start();
    const EnergyReading brief = meter.stop();
    EXPECT_DOUBLE_EQ(brief.joules, 0.5);
    EXPECT_LT(brief.seconds, cuda::kMinEnergyPhaseSeconds);
    EXPECT_FALSE(brief.valid);

    // A counter that does not move: not valid either.
    configure(*s_full, 0, 0, 0, 0, 250000);
    meter.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    const EnergyReading still = meter.stop();
    EXPECT_EQ(still.method, EnergyMethod::Counter);
    EXPECT_EQ(still.joules, 0.0);
    EXPECT_FALSE(still.valid);

    // stop() without start(): an error, not a reading.
    const EnergyReading unstarted = meter.stop();
    EXPECT_EQ(unstarted.method, EnergyMethod::None);
    EXPECT_EQ(unstarted.error, "energy phase stopped without being started");
}

TEST_F(NvmlFake, PowerSamplesWhenTheCounterIsUnsupported) {
    configure(*s_full, 0, 3, 0, 0, 250000);  // counter: NOT_SUPPORTED; 250 W
    auto n = Nvml::load(*s_full);
    ASSERT_TRUE(n.ok()) << message(n.diagnostics());
    EnergyMeter meter(**n, device(**n));
    ASSERT_EQ(meter.method(), EnergyMethod::PowerSamples);
    const int before = calls(*s_full, "fake_power_calls");
    meter.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    const EnergyReading r = meter.stop();
    const int samples = calls(*s_full, "fake_power_calls") - before;
    EXPECT_EQ(r.method, EnergyMethod::PowerSamples);
    EXPECT_TRUE(r.valid);
    EXPECT_GE(r.seconds, 0.12);
    // A constant 250 W integrates to exactly 250 x the phase.
    EXPECT_NEAR(r.joules, 250.0 * r.seconds, 1e-9);
    EXPECT_NEAR(r.avgWatts, 250.0, 1e-9);
    // Every 5 ms for 120 ms: ~24 readings (fewer on a loaded machine, never a handful).
    EXPECT_GE(samples, 8);
    EXPECT_LE(samples, 40);

    // The library without the energy symbol also falls back.
    configure(*s_noEnergy, 0, 0, 0, 0, 100000);
    auto old = Nvml::load(*s_noEnergy);
    ASSERT_TRUE(old.ok()) << message(old.diagnostics());
    EXPECT_EQ((*old)->deviceGetTotalEnergyConsumption, nullptr);
    auto e = (*old)->totalEnergyMillijoules(device(**old));
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(message(e.diagnostics()), "NVML cannot read the total energy of the GPU: the library '" + *s_noEnergy +
                                            "' lacks nvmlDeviceGetTotalEnergyConsumption");
    EnergyMeter oldMeter(**old, device(**old));
    EXPECT_EQ(oldMeter.method(), EnergyMethod::PowerSamples);
    oldMeter.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    const EnergyReading o = oldMeter.stop();
    EXPECT_NEAR(o.avgWatts, 100.0, 1e-9);
    EXPECT_TRUE(o.valid);
}

TEST_F(NvmlFake, NoMethodWhenNeitherReadingWorks) {
    configure(*s_full, 0, 3, 0, 3, 0);
    auto n = Nvml::load(*s_full);
    ASSERT_TRUE(n.ok()) << message(n.diagnostics());
    EnergyMeter meter(**n, device(**n));
    EXPECT_EQ(meter.method(), EnergyMethod::None);
    meter.start();
    const EnergyReading r = meter.stop();
    EXPECT_EQ(r.method, EnergyMethod::None);
    EXPECT_FALSE(r.valid);
    EXPECT_EQ(r.error, "NVML cannot read the power of the GPU: NVML_ERROR_NOT_SUPPORTED (Not Supported)");
    configure(*s_full, 0, 0, 0, 0, 250000);
}

TEST(Nvml, PowerIntegrationMatchesHandValues) {
    const std::vector<PowerSample> s{{0, 100}, {1, 200}, {2, 200}};
    EXPECT_DOUBLE_EQ(cuda::integratePowerSamples(s, 0, 2), 350.0);      // 150 + 200
    EXPECT_DOUBLE_EQ(cuda::integratePowerSamples(s, 0.5, 1.5), 187.5);  // (150+200)/2*0.5 + 200*0.5
    EXPECT_DOUBLE_EQ(cuda::integratePowerSamples(s, -1, 3), 650.0);     // held 100 before, 200 after
    EXPECT_DOUBLE_EQ(cuda::integratePowerSamples({{5, 50}}, 0, 2), 100.0);
    EXPECT_EQ(cuda::integratePowerSamples({}, 0, 2), 0.0);
    EXPECT_EQ(cuda::integratePowerSamples(s, 2, 2), 0.0);
    EXPECT_EQ(cuda::integratePowerSamples(s, 2, 1), 0.0);
}

TEST(Nvml, EnergyMethodNames) {
    EXPECT_STREQ(cuda::energyMethodName(EnergyMethod::Counter), "nvml-energy-counter");
    EXPECT_STREQ(cuda::energyMethodName(EnergyMethod::PowerSamples), "nvml-power-samples");
    EXPECT_STREQ(cuda::energyMethodName(EnergyMethod::None), "");
    EXPECT_EQ(cuda::energyMethodFromName("nvml-energy-counter"), EnergyMethod::Counter);
    EXPECT_EQ(cuda::energyMethodFromName("nvml-power-samples"), EnergyMethod::PowerSamples);
    EXPECT_EQ(cuda::energyMethodFromName("rapl"), EnergyMethod::None);
}

TEST(NvmlProtocol, EnergyFieldsRoundTripAndAreAbsentWithoutEnergy) {
    RunResult r;
    r.timed = true;
    KernelTiming a;
    a.label = "Conv_0";
    a.stats.median = 2e-5;
    a.stats.reps = 1000;
    a.energy = KernelEnergy{0.0125, 412.5, "nvml-energy-counter", true, 6000, 0.1234};
    KernelTiming b;
    b.label = "Relu_1";
    b.stats.median = 1e-6;
    r.kernels = {a, b};
    const nlohmann::json j = runResultToJson(r);
    const nlohmann::json& ka = j.at("kernels").at(0);
    EXPECT_EQ(ka.at("energy_j").get<double>(), 0.0125);
    EXPECT_EQ(ka.at("avg_power_w").get<double>(), 412.5);
    EXPECT_EQ(ka.at("energy_method").get<std::string>(), "nvml-energy-counter");
    EXPECT_EQ(ka.at("energy_valid").get<bool>(), true);
    EXPECT_EQ(ka.at("energy_reps").get<std::int64_t>(), 6000);
    EXPECT_EQ(ka.at("energy_s").get<double>(), 0.1234);
    const nlohmann::json& kb = j.at("kernels").at(1);
    for (const char* key : {"energy_j", "avg_power_w", "energy_method", "energy_valid", "energy_reps", "energy_s"})
        EXPECT_FALSE(kb.contains(key)) << key;

    // Through the wire (one line) and back.
    auto back = runResultFromJson(nlohmann::json::parse(dumpLine(j)));
    ASSERT_TRUE(back.ok()) << back.diagnostics().items().front().message;
    ASSERT_EQ(back->kernels.size(), 2u);
    ASSERT_TRUE(back->kernels[0].energy.has_value());
    const KernelEnergy& e = *back->kernels[0].energy;
    EXPECT_EQ(e.joulesPerCall, 0.0125);
    EXPECT_EQ(e.avgPowerWatts, 412.5);
    EXPECT_EQ(e.method, "nvml-energy-counter");
    EXPECT_TRUE(e.valid);
    EXPECT_EQ(e.calls, 6000);
    EXPECT_EQ(e.seconds, 0.1234);
    EXPECT_FALSE(back->kernels[1].energy.has_value());
    EXPECT_EQ(back->kernels[1].label, "Relu_1");

    // An answer from a runner that reports only the required energy field keeps the defaults.
    nlohmann::json minimal = j;
    minimal["kernels"][0] = {{"label", "Conv_0"}, {"median_s", 2e-5}, {"energy_j", 0.5}};
    auto m = runResultFromJson(minimal);
    ASSERT_TRUE(m.ok());
    ASSERT_TRUE(m->kernels[0].energy.has_value());
    EXPECT_EQ(m->kernels[0].energy->joulesPerCall, 0.5);
    EXPECT_FALSE(m->kernels[0].energy->valid);
    EXPECT_EQ(m->kernels[0].energy->method, "");
}

TEST(NvmlProtocol, EnergyFieldsOfTheWrongTypeAreErrors) {
    nlohmann::json j = {{"ok", true}, {"timed", true}, {"kernels", {{{"label", "K"}, {"energy_j", 0.5}, {"energy_method", 5}}}}};
    auto r = runResultFromJson(j);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().items().front().message, "field 'energy_method' has the wrong type");
    j["kernels"][0]["energy_method"] = "nvml-energy-counter";
    j["kernels"][0]["energy_reps"] = 1.5;
    auto r2 = runResultFromJson(j);
    ASSERT_FALSE(r2.ok());
    EXPECT_EQ(r2.diagnostics().items().front().message, "field 'energy_reps' has the wrong type");
    j["kernels"][0]["energy_j"] = "a lot";
    auto r3 = runResultFromJson(j);
    ASSERT_FALSE(r3.ok());
    EXPECT_EQ(r3.diagnostics().items().front().message, "field 'energy_j' has the wrong type");
}

}  // namespace
}  // namespace tessera::runtime
