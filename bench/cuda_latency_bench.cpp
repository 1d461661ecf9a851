// Edit-to-timing latency of the CUDA target (issue 5): with a warm runner in a running process, the
// time from "the kernel source changed" to "its timing is known" = NVRTC compile + module load,
// buffer setup, 10 timed launches and copy-back in tessera-runner. Goal: median under 250 ms.
//
// Steps: compile MODEL for CUDA once; one RunnerClient; one warm-up runModel (spawns the runner,
// cuInit, primary context, first NVRTC compile: reported as "cold start"). Then per rep the source
// gets a different trailing comment ("// edit N"), so the NVRTC cache misses exactly as after an
// edit, and we time compileCuda (nvrtc_s) and runModel (run_s; its own compileCuda is then a cache
// hit). Median and p95 (linear interpolation) of each column, as a table and one JSON line.
// Without a CUDA driver: the NVRTC column only (arch --arch or sm_90), then "no CUDA driver found
// ..." and exit 2.
//
// Usage: tessera_cuda_latency_bench [MODEL] [--reps N] [--runner PATH] [--arch sm_XX]
//   MODEL: a model file (anything tessera-cli loads); default: one depthwise 3x3 Conv,
//          1x32x112x112 f32 (MobileNetV2's first depthwise layer), built in code.
//   --runner: default $TESSERA_RUNNER, else tessera-runner next to this binary, else the build
//          tree's app/runner/tessera-runner.
// Exit: 0 measured, 1 error, 2 no CUDA driver/device (NVRTC numbers still printed).
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/run.h"
#include "core/runtime/cuda/nvrtc.h"
#include "core/runtime/runner_client.h"
#include "core/runtime/timing.h"

using namespace tessera;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// CPU seconds of this process (all threads): on a loaded machine the NVRTC wall time includes
/// waiting for a core, its CPU time does not.
double processCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// y = DepthwiseConv3x3(x, w, b), x: 1x32x112x112, pads 1, stride 1, group 32.
ir::Model depthwiseModel() {
    ir::Model m;
    m.opsets[""] = 17;
    ir::Graph& g = m.graph;
    const std::int64_t c = 32, h = 112, w = 112;
    auto addValue = [&](const std::string& name, std::vector<std::int64_t> dims) {
        ir::Value v;
        v.name = name;
        v.type = {ir::DType::F32, ir::Shape::ofKnown(dims)};
        return g.addValue(v);
    };
    const auto x = addValue("x", {1, c, h, w});
    g.value(x).isGraphInput = true;
    g.inputs().push_back(x);
    std::vector<float> wv(static_cast<std::size_t>(c * 9)), bv(static_cast<std::size_t>(c));
    for (std::size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.125f;
    for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i) * 0.01f;
    const auto wt = addValue("w", {c, 1, 3, 3});
    g.value(wt).data = std::make_shared<const ir::TensorData>(ir::TensorData::fromFloats(wv, {c, 1, 3, 3}));
    g.value(wt).isInitializer = true;
    g.initializers().push_back(wt);
    const auto bias = addValue("b", {c});
    g.value(bias).data = std::make_shared<const ir::TensorData>(ir::TensorData::fromFloats(bv, {c}));
    g.value(bias).isInitializer = true;
    g.initializers().push_back(bias);
    const auto y = addValue("y", {1, c, h, w});
    g.value(y).isGraphOutput = true;
    g.outputs().push_back(y);
    ir::Node conv;
    conv.name = "dwconv";
    conv.opType = "Conv";
    conv.inputs = {x, wt, bias};
    conv.outputs = {y};
    conv.setAttr("group", ir::Attribute::ofInt(c));
    conv.setAttr("kernel_shape", ir::Attribute::ofInts({3, 3}));
    conv.setAttr("pads", ir::Attribute::ofInts({1, 1, 1, 1}));
    conv.setAttr("strides", ir::Attribute::ofInts({1, 1}));
    g.addNode(conv);
    return m;
}

/// --runner, else $TESSERA_RUNNER (findRunnerExecutable reads it), else next to this binary (the
/// device's .devcarry/bin), else <build>/app/runner/tessera-runner from <build>/bench/.
std::string runnerPath(const std::string& given) {
    if (!given.empty()) return given;
    if (const char* env = std::getenv("TESSERA_RUNNER"); env && *env) return env;
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    for (const auto& p : {exe.parent_path() / "tessera-runner", exe.parent_path() / ".." / "app" / "runner" / "tessera-runner"})
        if (std::filesystem::exists(p, ec)) return std::filesystem::weakly_canonical(p, ec).string();
    return {};
}

struct Column {
    std::vector<double> s;
    double quantile(double p) const {
        auto v = s;
        std::sort(v.begin(), v.end());
        return runtime::sortedQuantile(v, p);
    }
    double min() const { return s.empty() ? 0 : *std::min_element(s.begin(), s.end()); }
    double max() const { return s.empty() ? 0 : *std::max_element(s.begin(), s.end()); }
};

void printRow(const char* name, const Column& c) {
    std::printf("%-9s %10.1f %10.1f %10.1f %10.1f\n", name, c.quantile(0.5) * 1e3, c.quantile(0.95) * 1e3, c.min() * 1e3,
                c.max() * 1e3);
}

std::string jsonStats(const char* name, const Column& c) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "\"%s\":{\"median\":%.6f,\"p95\":%.6f,\"min\":%.6f,\"max\":%.6f}", name,
                  c.quantile(0.5), c.quantile(0.95), c.min(), c.max());
    return buf;
}

/// JSON string body: quotes, backslashes and control characters escaped.
std::string jsonEscape(const std::string& s) {
    std::string r;
    for (unsigned char ch : s) {
        if (ch == '"' || ch == '\\') {
            r += '\\';
            r += static_cast<char>(ch);
        } else if (ch < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", ch);
            r += buf;
        } else {
            r += static_cast<char>(ch);
        }
    }
    return r;
}

int usage() {
    std::fprintf(stderr, "usage: tessera_cuda_latency_bench [MODEL] [--reps N] [--runner PATH] [--arch sm_XX]\n");
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::string modelPath, runnerArg, archArg;
    int reps = 20;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if ((a == "--reps" || a == "--runner" || a == "--arch") && i + 1 < argc) {
            const std::string v = argv[++i];
            if (a == "--reps") reps = std::atoi(v.c_str());
            else if (a == "--runner") runnerArg = v;
            else archArg = v;
        } else if (a == "-h" || a == "--help" || (!a.empty() && a[0] == '-') || !modelPath.empty()) {
            return usage();
        } else {
            modelPath = a;
        }
    }
    if (reps < 1) return usage();

    // 1. The model, compiled for CUDA once.
    ir::Model model;
    if (modelPath.empty()) {
        model = depthwiseModel();
    } else {
        auto m = pipeline::loadModel(modelPath);
        if (!m.ok()) {
            std::fprintf(stderr, "%s", m.diagnostics().formatAll().c_str());
            return 1;
        }
        model = std::move(*m);
    }
    const std::string modelName = modelPath.empty() ? "builtin:dwconv3x3_1x32x112x112" : modelPath;
    const auto inputs = pipeline::defaultInputs(model.graph);
    pipeline::CompileOptions co;
    co.target = lower::Target::Cuda;
    auto cmOr = pipeline::compileModel(model, inputs, co);
    if (!cmOr.ok()) {
        std::fprintf(stderr, "%s", cmOr.diagnostics().formatAll().c_str());
        return 1;
    }
    pipeline::CompiledModel cm = std::move(*cmOr);
    const std::string baseSource = cm.code.source;

    const auto cacheDir = std::filesystem::temp_directory_path() /
                          ("tessera-cuda-latency-bench-" + std::to_string(::getpid()));
    std::filesystem::remove_all(cacheDir);
    struct Cleanup {
        std::filesystem::path dir;
        ~Cleanup() {
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
        }
    } cleanup{cacheDir};

    pipeline::RunOptions ro;
    ro.time = true;
    ro.minReps = ro.maxReps = 10;
    ro.minSeconds = 0;
    ro.check = false;
    ro.cudaCacheDir = cacheDir.string();
    ro.cudaArch = archArg;

    runtime::RunnerClientOptions rco;
    rco.runnerPath = runnerPath(runnerArg);
    runtime::RunnerClient runner(rco);

    std::printf("tessera_cuda_latency_bench: %s, %d kernel(s), %zu bytes of CUDA C, %d reps\n", modelName.c_str(),
                cm.kernelCount(), baseSource.size(), reps);
    std::printf("runner: %s\n", rco.runnerPath.empty() ? "(not found: findRunnerExecutable decides)" : rco.runnerPath.c_str());

    // 2. Cold start: the first runModel (runner spawn, cuInit, primary context, NVRTC load + first compile).
    std::string noDevice;  // the runner's "no CUDA driver found ..." (or no device) message
    std::string arch = archArg;
    std::string deviceName;
    double coldS = 0, coldNvrtcS = 0;
    {
        const auto t0 = Clock::now();
        auto rep = pipeline::runModel(cm, inputs, ro, runner);
        coldS = secondsSince(t0);
        if (!rep.ok()) {
            const std::string msg = rep.diagnostics().formatAll();
            if (msg.find("no CUDA driver found") == std::string::npos && msg.find("no CUDA device") == std::string::npos) {
                std::fprintf(stderr, "%s", msg.c_str());
                return 1;
            }
            noDevice = msg;
        } else {
            if (rep->device) {
                deviceName = rep->device->name;
                if (arch.empty()) arch = rep->device->arch();
            }
            if (rep->cudaModule) {
                coldNvrtcS = rep->cudaModule->compileSeconds;
                if (arch.empty()) arch = rep->cudaModule->arch;
            }
        }
    }
    if (arch.empty()) arch = "sm_90";

    // Exactly the NVRTC options runModel uses, so its compileCuda hits what we compiled.
    runtime::cuda::CudaCompileOptions nopts;
    nopts.arch = arch;
    nopts.extraOptions = ro.nvrtcOptions;
    nopts.cacheDir = ro.cudaCacheDir;
    nopts.sourceName = (cm.model.sourcePath.empty() ? std::string("model")
                                                    : std::filesystem::path(cm.model.sourcePath).stem().string()) +
                       ".cu";
    if (!noDevice.empty()) {
        // No warm-up run happened: warm NVRTC itself (dlopen, first compile) untimed.
        const auto t0 = Clock::now();
        auto first = runtime::cuda::compileCuda(baseSource, nopts);
        coldNvrtcS = secondsSince(t0);
        if (!first.ok()) {
            std::fprintf(stderr, "%s", first.diagnostics().formatAll().c_str());
            return 1;
        }
        std::printf("device: none (NVRTC only, arch %s)\n", arch.c_str());
        std::printf("first NVRTC compile (library load + compile): %.1f ms\n", coldNvrtcS * 1e3);
    } else {
        std::printf("device: %s (%s)\n", deviceName.c_str(), arch.c_str());
        std::printf("cold start (runner spawn + cuInit + context + NVRTC load/compile + run): %.1f ms (NVRTC %.1f ms)\n",
                    coldS * 1e3, coldNvrtcS * 1e3);
    }

    // 3. Edits.
    Column nvrtc, nvrtcCpu, run, total, kernel;
    int missesInRun = 0;
    std::printf("\n%4s %10s %10s %10s %10s %12s\n", "rep", "nvrtc_ms", "nvrtc_cpu", "run_ms", "total_ms", "kernel_us");
    for (int i = 1; i <= reps; ++i) {
        cm.code.source = baseSource + "// edit " + std::to_string(i) + "\n";
        const double c0 = processCpuSeconds();
        const auto t0 = Clock::now();
        auto mod = runtime::cuda::compileCuda(cm.code.source, nopts);
        const double nv = secondsSince(t0);
        const double nvCpu = processCpuSeconds() - c0;
        if (!mod.ok()) {
            std::fprintf(stderr, "%s", mod.diagnostics().formatAll().c_str());
            return 1;
        }
        if (mod->cacheHit) std::fprintf(stderr, "warning: rep %d: NVRTC cache hit (expected a miss)\n", i);
        nvrtc.s.push_back(nv);
        nvrtcCpu.s.push_back(nvCpu);
        if (!noDevice.empty()) {
            std::printf("%4d %10.1f %10.1f %10s %10s %12s\n", i, nv * 1e3, nvCpu * 1e3, "-", "-", "-");
            continue;
        }
        const auto t1 = Clock::now();
        auto rep = pipeline::runModel(cm, inputs, ro, runner);
        const double rs = secondsSince(t1);
        if (!rep.ok()) {
            std::fprintf(stderr, "%s", rep.diagnostics().formatAll().c_str());
            return 1;
        }
        if (rep->cudaModule && !rep->cudaModule->cacheHit) ++missesInRun;
        double kSum = 0;
        for (const auto& k : rep->kernels) kSum += k.time.median;
        run.s.push_back(rs);
        total.s.push_back(nv + rs);
        kernel.s.push_back(kSum);
        std::printf("%4d %10.1f %10.1f %10.1f %10.1f %12.1f\n", i, nv * 1e3, nvCpu * 1e3, rs * 1e3, (nv + rs) * 1e3,
                    kSum * 1e6);
    }
    if (missesInRun > 0)
        std::fprintf(stderr, "warning: runModel recompiled %d time(s): its NVRTC options differ from the bench's\n",
                     missesInRun);

    // 4. Summary.
    std::printf("\n%-9s %10s %10s %10s %10s   (ms)\n", "", "median", "p95", "min", "max");
    printRow("nvrtc", nvrtc);
    printRow("nvrtc_cpu", nvrtcCpu);
    if (noDevice.empty()) {
        printRow("run", run);
        printRow("total", total);
        const double med = total.quantile(0.5);
        std::printf("goal: total median < 250 ms: %s (%.1f ms)\n", med < 0.25 ? "met" : "NOT met", med * 1e3);
    }
    std::string json = "{\"bench\":\"cuda_latency\",\"model\":\"" + jsonEscape(modelName) +
                       "\",\"kernels\":" + std::to_string(cm.kernelCount()) + ",\"arch\":\"" + jsonEscape(arch) +
                       "\",\"device\":" + (noDevice.empty() ? "\"" + jsonEscape(deviceName) + "\"" : std::string("null")) +
                       ",\"reps\":" + std::to_string(reps) + ",";
    char buf[128];
    std::snprintf(buf, sizeof buf, "\"cold_start_s\":%.6f,\"cold_nvrtc_s\":%.6f,", noDevice.empty() ? coldS : 0.0,
                  coldNvrtcS);
    json += buf;
    json += jsonStats("nvrtc_s", nvrtc) + "," + jsonStats("nvrtc_cpu_s", nvrtcCpu);
    if (noDevice.empty()) {
        json += "," + jsonStats("run_s", run) + "," + jsonStats("total_s", total) + "," + jsonStats("kernel_s", kernel);
        std::snprintf(buf, sizeof buf, ",\"run_recompiles\":%d", missesInRun);
        json += buf;
    }
    json += "}";
    std::printf("JSON %s\n", json.c_str());
    std::fflush(stdout);
    if (!noDevice.empty()) {
        std::fprintf(stderr, "%s", noDevice.c_str());
        if (noDevice.find("no CUDA driver found") == std::string::npos)
            std::fprintf(stderr, "no CUDA driver found or no device: run/total not measured\n");
        return 2;
    }
    return 0;
}
