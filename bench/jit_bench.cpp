// Host-JIT compile times (issue 4): each kernel of a model compiled as its own module with an
// empty cache (median and max seconds per kernel), the whole model as one module, and the cost of
// a cache hit (median ms).
// Usage: jit_bench MODEL [MAX_KERNELS]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "core/codegen/cpp/cpp_codegen.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/runtime/host_jit.h"

using namespace tessera;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: jit_bench MODEL [MAX_KERNELS]\n");
        return 2;
    }
    const int maxKernels = argc > 2 ? std::atoi(argv[2]) : 1 << 30;
    auto m = pipeline::loadModel(argv[1]);
    if (!m.ok()) return 2;
    const auto inputs = pipeline::defaultInputs(m->graph);
    auto cm = pipeline::compileModel(*m, inputs);
    if (!cm.ok()) {
        std::fprintf(stderr, "%s", cm.diagnostics().formatAll().c_str());
        return 2;
    }
    const auto cacheDir = std::filesystem::temp_directory_path() / ("tessera-jit-bench-" + std::to_string(::getpid()));
    runtime::HostCompilerOptions opts;
    opts.cacheDir = cacheDir.string();
    std::vector<double> perKernel;
    for (const auto& s : cm->steps) {
        if (s.kind != pipeline::StepKind::Kernel || static_cast<int>(perKernel.size()) >= maxKernels) continue;
        auto code = codegen::generateCpp({&s.kernel});
        auto lib = runtime::compileHostLibrary(code.source, opts);
        if (!lib.ok()) {
            std::fprintf(stderr, "%s", lib.diagnostics().formatAll().c_str());
            return 1;
        }
        perKernel.push_back(lib->compileSeconds);
    }
    std::sort(perKernel.begin(), perKernel.end());
    auto whole = runtime::compileHostLibrary(cm->code.source, opts);
    if (!whole.ok()) return 1;
    const auto hit = bench::timeIt([&] { (void)runtime::compileHostLibrary(cm->code.source, opts); }, 20, 200);
    std::printf("RESULT jit %s kernels=%zu per_kernel_median_s=%.3f per_kernel_max_s=%.3f module_s=%.2f hit_median_ms=%.3f\n",
                argv[1], perKernel.size(), perKernel[perKernel.size() / 2], perKernel.back(), whole->compileSeconds,
                hit.medianMs);
    std::filesystem::remove_all(cacheDir);
    return 0;
}
