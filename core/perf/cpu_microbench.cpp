#include "core/perf/cpu_microbench.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/runtime/runner_client.h"
#include "core/runtime/shared_arena.h"

namespace tessera::perf {

namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * 1024;

// Work per call: enough that one call lasts milliseconds (call and fork-join overhead vanish)
// but not so much that minSeconds holds only a couple of samples.
constexpr double kPeakFlopsPerThreadCall = 4e8;
constexpr double kBandwidthBytesPerCall = 512.0 * kMiB;

struct Kernel {
    const char* method;
    int arrays;           // bandwidth: arrays per thread
    int bytesPerElement;  // bandwidth: bytes issued per element
};
// Floats between consecutive arrays of a thread: keeps a store and the loads of the same index
// off the same 4 KiB offset (4K aliasing would stall copy and triad in L1).
constexpr int kArrayPad = 80;

constexpr Kernel kBandwidthKernels[] = {{"load", 1, 4}, {"copy", 2, 8}, {"triad", 3, 12}};

void emitPeak(std::ostringstream& o, const std::string& method, const std::string& elem, const std::string& suffix,
              const std::string& vec, int chains) {
    o << "extern \"C\" void tsr_peak_" << method << "_" << suffix << "(void* const* args) {\n"
      << "    double* p = static_cast<double*>(args[0]);\n"
      << "    const long iters = static_cast<long>(p[" << kParamIterations << "]);\n"
      << "    const " << elem << " bs = static_cast<" << elem << ">(p[" << kParamB << "]);\n"
      << "    const " << elem << " cs = static_cast<" << elem << ">(p[" << kParamC << "]);\n"
      << "#pragma omp parallel\n"
      << "    {\n"
      << "        const int t = omp_get_thread_num();\n"
      << "        const " << vec << " b = " << vec << "{} + bs;\n"
      << "        const " << vec << " c = " << vec << "{} + cs;\n";
    for (int k = 0; k < chains; ++k)
        o << "        " << vec << " a" << k << " = " << vec << "{} + static_cast<" << elem << ">(0.5 + 0.01 * " << k
          << " + 0.001 * t);\n";
    o << "        for (long i = 0; i < iters; ++i) {\n";
    for (int k = 0; k < chains; ++k) {
        if (method == "fma") o << "            a" << k << " = a" << k << " * b + c;\n";
        else if (method == "add") o << "            a" << k << " = a" << k << " + c;\n";
        else o << "            a" << k << " = a" << k << " * b;\n";
    }
    o << "        }\n        " << vec << " s = a0";
    for (int k = 1; k < chains; ++k) o << " + a" << k;
    o << ";\n"
      << "        double sum = 0;\n"
      << "        for (unsigned l = 0; l < sizeof(s) / sizeof(" << elem << "); ++l) sum += tsr_lane(s, l);\n"
      << "        p[" << kParamSinkOut << " + t % 32] = sum;\n"
      << "        if (t == 0) p[" << kParamThreadsOut << "] = omp_get_num_threads();\n"
      << "    }\n}\n\n";
}

}  // namespace

const char* cpuIsaName(CpuIsa isa) {
    switch (isa) {
        case CpuIsa::Avx512: return "avx512";
        case CpuIsa::Avx2: return "avx2";
        case CpuIsa::Scalar: return "scalar";
    }
    return "scalar";
}

CpuIsa detectCpuIsa() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return CpuIsa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuIsa::Avx2;
#endif
    return CpuIsa::Scalar;
}

int cpuIsaVectorBytes(CpuIsa isa) {
    switch (isa) {
        case CpuIsa::Avx512: return 64;
        case CpuIsa::Avx2: return 32;
        case CpuIsa::Scalar: return 0;
    }
    return 0;
}

int peakChains(CpuIsa isa) {
    // Two FMA pipes x 4-5 cycles latency need >= 10 chains in flight; leave registers for b and c
    // (32 vector registers with AVX-512, 16 with AVX2).
    switch (isa) {
        case CpuIsa::Avx512: return 16;
        case CpuIsa::Avx2: return 12;
        case CpuIsa::Scalar: return 12;
    }
    return 12;
}

std::vector<std::string> cpuMicrobenchFlags() {
    std::vector<std::string> f = runtime::HostCompilerOptions{}.flags;
    f.push_back("-fno-tree-loop-distribute-patterns");
    return f;
}

std::string generateCpuMicrobenchSource(CpuIsa isa) {
    std::ostringstream o;
    const int vb = cpuIsaVectorBytes(isa);
    o << "// Tessera CPU micro-benchmarks (core/perf/cpu_microbench.cpp), ISA " << cpuIsaName(isa) << ".\n";
    if (isa == CpuIsa::Scalar) o << "#pragma GCC optimize(\"no-tree-vectorize\", \"no-tree-slp-vectorize\")\n";
    o << "#include <omp.h>\n#include <cstdlib>\n#include <cstring>\n\n";
    if (vb > 0) {
        o << "typedef float vf32 __attribute__((vector_size(" << vb << "), may_alias));\n"
          << "typedef double vf64 __attribute__((vector_size(" << vb << "), may_alias));\n"
          << "template <typename V> static inline double tsr_lane(const V& v, unsigned l) { return v[l]; }\n";
    } else {
        o << "typedef float vf32;\ntypedef double vf64;\n"
          << "template <typename V> static inline double tsr_lane(const V& v, unsigned) { return v; }\n";
    }
    o << "\nextern \"C\" void tessera_set_num_threads(int n) { omp_set_dynamic(0); if (n > 0) omp_set_num_threads(n); }\n"
      << "extern \"C\" int tessera_get_max_threads(void) { return omp_get_max_threads(); }\n\n";
    const int chains = peakChains(isa);
    for (const char* m : {"fma", "add", "mul"}) {
        emitPeak(o, m, "float", "f32", "vf32", chains);
        emitPeak(o, m, "double", "f64", "vf64", chains);
    }

    // Bandwidth: one buffer per slot, `stride` floats per thread, first touched by its thread.
    const int lanes = vb > 0 ? vb / 4 : 1;
    o << "static float* tsr_buf[" << kMaxSlots << "];\nstatic long tsr_len[" << kMaxSlots << "];\nstatic int tsr_thr[" << kMaxSlots << "];\n\n"
      << "static float* tsr_buffer(const double* p, int threads) {\n"
      << "    const int slot = static_cast<int>(p[" << kParamSlot << "]) % " << kMaxSlots << ";\n"
      << "    const long stride = static_cast<long>(p[" << kParamStride << "]);\n"
      << "    const long len = stride * threads;\n"
      << "    if (tsr_len[slot] != len || tsr_thr[slot] != threads) {\n"
      << "        tsr_thr[slot] = threads;\n"
      << "        std::free(tsr_buf[slot]);\n"
      << "        tsr_buf[slot] = static_cast<float*>(std::aligned_alloc(4096, (len * sizeof(float) + 4095) / 4096 * 4096));\n"
      << "        tsr_len[slot] = tsr_buf[slot] ? len : 0;\n"
      << "        if (!tsr_buf[slot]) std::abort();\n"
      << "        float* b = tsr_buf[slot];\n"
      << "#pragma omp parallel num_threads(threads)\n"
      << "        {\n"
      << "            float* x = b + omp_get_thread_num() * stride;\n"
      << "            for (long i = 0; i < stride; ++i) x[i] = 1.0f + 1e-3f * static_cast<float>(i & 255);\n"
      << "        }\n"
      << "    }\n"
      << "    return tsr_buf[slot];\n"
      << "}\n\n";
    auto head = [&](const char* name) {
        o << "extern \"C\" void tsr_bw_" << name << "(void* const* args) {\n"
          << "    double* p = static_cast<double*>(args[0]);\n"
          << "    const long n = static_cast<long>(p[" << kParamIterations << "]);\n"
          << "    const long passes = static_cast<long>(p[" << kParamPasses << "]);\n"
          << "    const long stride = static_cast<long>(p[" << kParamStride << "]);\n"
          << "    const float s = static_cast<float>(p[" << kParamB << "]);\n"
          << "    const int threads = omp_get_max_threads();\n"
          << "    float* base = tsr_buffer(p, threads);\n"
          << "#pragma omp parallel num_threads(threads)\n"
          << "    {\n"
          << "        const int t = omp_get_thread_num();\n"
          << "        float* x = base + t * stride;\n"
          << "        (void)s; (void)n;\n";
    };
    auto tail = [&](const char* sinkExpr) {
        o << "        p[" << kParamSinkOut << " + t % 32] = " << sinkExpr << ";\n"
          << "        if (t == 0) p[" << kParamThreadsOut << "] = omp_get_num_threads();\n"
          << "    }\n}\n\n";
    };
    // load: 8 independent vector sums so the FP add latency does not bound L1 reads.
    head("load");
    o << "        vf32 s0 = vf32{}, s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;\n"
      << "        for (long r = 0; r < passes; ++r) {\n"
      << "            for (long i = 0; i < n; i += " << 8 * lanes << ") {\n";
    for (int k = 0; k < 8; ++k)
        o << "                s" << k << " += *reinterpret_cast<const vf32*>(x + i + " << k * lanes << ");\n";
    o << "            }\n"
      << "            __asm__ volatile(\"\" : : : \"memory\");\n"
      << "        }\n"
      << "        vf32 sv = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;\n"
      << "        double sum = 0;\n"
      << "        for (unsigned l = 0; l < sizeof(sv) / sizeof(float); ++l) sum += tsr_lane(sv, l);\n";
    tail("sum");
    head("copy");
    o << "        float* a = x;\n        const float* b = x + n + " << kArrayPad << ";\n"
      << "        for (long r = 0; r < passes; ++r) {\n"
      << "            for (long i = 0; i < n; i += " << lanes << ")\n"
      << "                *reinterpret_cast<vf32*>(a + i) = *reinterpret_cast<const vf32*>(b + i);\n"
      << "            __asm__ volatile(\"\" : : : \"memory\");\n"
      << "        }\n";
    tail("a[t % n]");
    head("triad");
    o << "        float* a = x;\n        const float* b = x + n + " << kArrayPad << ";\n        const float* c = x + 2 * n + "
      << 2 * kArrayPad << ";\n"
      << "        const vf32 sv = vf32{} + s;\n"
      << "        for (long r = 0; r < passes; ++r) {\n"
      << "            for (long i = 0; i < n; i += " << lanes << ")\n"
      << "                *reinterpret_cast<vf32*>(a + i) = *reinterpret_cast<const vf32*>(b + i) + sv * *reinterpret_cast<const vf32*>(c + i);\n"
      << "            __asm__ volatile(\"\" : : : \"memory\");\n"
      << "        }\n";
    tail("a[t % n]");
    return o.str();
}

namespace {

std::int64_t parseCacheSize(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    if (s.empty()) return 0;
    std::int64_t mult = 1;
    const char u = s.back();
    if (u == 'K' || u == 'k') mult = kKiB;
    else if (u == 'M' || u == 'm') mult = kMiB;
    else if (u == 'G' || u == 'g') mult = kMiB * 1024;
    if (mult != 1) s.pop_back();
    try {
        return std::stoll(s) * mult;
    } catch (...) {
        return 0;
    }
}

std::string readLine(const std::string& path) {
    std::ifstream f(path);
    std::string line;
    if (f) std::getline(f, line);
    return line;
}

}  // namespace

CpuCacheInfo readCpuCacheInfo() {
    CpuCacheInfo info;
    for (int i = 0; i < 16; ++i) {
        const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
        const std::string level = readLine(dir + "level");
        if (level.empty()) break;
        const std::string type = readLine(dir + "type");
        if (type == "Instruction") continue;
        const std::int64_t size = parseCacheSize(readLine(dir + "size"));
        if (level == "1") info.l1d = size;
        else if (level == "2") info.l2 = size;
        else if (level == "3") info.l3 = size;
    }
#ifdef _SC_LEVEL1_DCACHE_SIZE
    if (info.l1d <= 0) info.l1d = std::max<long>(0, ::sysconf(_SC_LEVEL1_DCACHE_SIZE));
    if (info.l2 <= 0) info.l2 = std::max<long>(0, ::sysconf(_SC_LEVEL2_CACHE_SIZE));
    if (info.l3 <= 0) info.l3 = std::max<long>(0, ::sysconf(_SC_LEVEL3_CACHE_SIZE));
#endif
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof(set), &set) == 0) info.cpus = std::max(1, CPU_COUNT(&set));
    else info.cpus = std::max<long>(1, ::sysconf(_SC_NPROCESSORS_ONLN));
    return info;
}

std::vector<LevelWorkingSet> levelWorkingSets(const CpuCacheInfo& cache, int threads) {
    const std::int64_t t = std::max(1, threads);
    const std::int64_t l1 = cache.l1d > 0 ? cache.l1d : 32 * kKiB;
    const std::int64_t l2 = cache.l2 > 0 ? cache.l2 : kMiB;
    const std::int64_t l3 = cache.l3 > 0 ? cache.l3 : 32 * kMiB;
    std::vector<LevelWorkingSet> out;
    out.push_back({"L1", t * l1 / 2});
    out.push_back({"L2", t * l2 / 2});
    if (l3 > t * l2) out.push_back({"L3", (t * l2 + l3) / 2});
    out.push_back({"DRAM", std::max(4 * l3, 256 * kMiB)});
    return out;
}

const Roof* bestRoof(const std::vector<Roof>& roofs, Roof::Kind kind, const std::string& levelOrPrecision,
                     int threads) {
    const Roof* best = nullptr;
    for (const Roof& r : roofs) {
        if (r.kind != kind) continue;
        if (threads > 0 && r.threads != threads) continue;
        const std::string& key = kind == Roof::Kind::Bandwidth ? r.level : r.precision;
        if (!levelOrPrecision.empty() && key != levelOrPrecision) continue;
        if (!best || r.value > best->value) best = &r;
    }
    return best;
}

namespace {

std::string sizeText(std::int64_t bytes) {
    std::ostringstream o;
    if (bytes >= kMiB && bytes % kMiB == 0) o << bytes / kMiB << " MiB";
    else if (bytes >= kMiB) o << std::round(10.0 * static_cast<double>(bytes) / kMiB) / 10 << " MiB";
    else o << (bytes + kKiB / 2) / kKiB << " KiB";
    return o.str();
}

/// One launch to time: its parameter block and how to turn its median time into a rate.
struct Job {
    std::string entry;
    double params[kParamCount] = {};
    double workPerThread = 0;  // FLOPs or bytes per call per thread
    // Result description.
    bool compute = true;
    std::string precision, method, level;
    std::int64_t workingSet = 0;
    bool sweepPoint = false;
};

std::vector<int> defaultThreadCounts(int cpus) {
    std::vector<int> t;
    if (cpus <= 16) {
        for (int i = 1; i <= cpus; ++i) t.push_back(i);
    } else {
        for (int i = 1; i < cpus; i *= 2) t.push_back(i);
        t.push_back(cpus);
    }
    return t;
}

}  // namespace

std::vector<std::string> roofConsistencyProblems(const std::vector<Roof>& roofs) {
    std::vector<std::string> problems;
    // Sanity: a roof measured with more threads should not be clearly below the same roof with
    // fewer threads (seen under load with --quick: the other threads waited for a time slice).
    for (const Roof& more : roofs)
        for (const Roof& fewer : roofs)
            if (more.name == fewer.name && more.threads > fewer.threads && more.value < 0.9 * fewer.value)
                problems.push_back("timings look disturbed: '" + more.name + "' with " +
                                   std::to_string(more.threads) + " threads (" +
                                   std::to_string(static_cast<long long>(more.value)) + " " + more.unit +
                                   ") is below its " + std::to_string(fewer.threads) + "-thread value (" +
                                   std::to_string(static_cast<long long>(fewer.value)) + " " + fewer.unit +
                                   "); measure again on a quiet machine");
    // Sanity: an add or a multiply issues where an FMA does and counts one FLOP instead of two, so
    // the ADD and MUL peaks are about half the FMA peak of the same precision and thread count on
    // every x86 core we know; far off means the measurement was disturbed.
    for (const Roof& fma : roofs) {
        if (fma.kind != Roof::Kind::Compute || fma.name.find("FMA") == std::string::npos) continue;
        for (const Roof& other : roofs) {
            if (other.kind != Roof::Kind::Compute || other.threads != fma.threads ||
                other.precision != fma.precision || &other == &fma ||
                other.name.find("FMA") != std::string::npos)
                continue;
            const double ratio = other.value / fma.value;
            if (ratio >= 0.35 && ratio <= 1.2) continue;
            char text[64];
            std::snprintf(text, sizeof text, "%.2f", ratio);
            problems.push_back("timings look disturbed: '" + other.name + "' (" +
                               std::to_string(static_cast<long long>(other.value)) + " " + other.unit +
                               ") is " + text + "x the '" + fma.name + "' (" +
                               std::to_string(static_cast<long long>(fma.value)) + ") with " +
                               std::to_string(fma.threads) + (fma.threads == 1 ? " thread" : " threads") +
                               ", where about 0.5x is expected; measure again on a quiet machine");
        }
    }
    // Sanity: for one method and thread count, a faster (closer) level cannot be clearly slower than
    // a level further out (seen under load: L1 copy below L3 copy).
    const char* order[] = {"L1", "L2", "L3", "DRAM"};
    auto rank = [&](const std::string& level) {
        for (int i = 0; i < 4; ++i)
            if (level == order[i]) return i;
        return -1;
    };
    auto methodOf = [](const Roof& r) { return r.method.substr(0, r.method.find(' ')); };
    for (const Roof& near : roofs)
        for (const Roof& far : roofs) {
            if (near.kind != Roof::Kind::Bandwidth || far.kind != Roof::Kind::Bandwidth) continue;
            if (near.threads != far.threads || methodOf(near) != methodOf(far)) continue;
            const int rn = rank(near.level), rf = rank(far.level);
            if (rn < 0 || rf < 0 || rn >= rf || near.value >= 0.9 * far.value) continue;
            problems.push_back("timings look disturbed: '" + near.name + "' (" +
                               std::to_string(static_cast<long long>(near.value)) + " GB/s) is below '" + far.name +
                               "' (" + std::to_string(static_cast<long long>(far.value)) + " GB/s) with " +
                               std::to_string(near.threads) + (near.threads == 1 ? " thread" : " threads") +
                               "; a closer cache level cannot be slower; measure again on a quiet machine");
        }
    return problems;
}

support::Expected<CpuMicrobenchResult> measureCpuRoofs(const CpuMicrobenchOptions& options,
                                                       const support::CancelToken* cancel) {
    const auto start = std::chrono::steady_clock::now();
    CpuMicrobenchResult result;
    result.isa = options.forceIsa ? options.isa : detectCpuIsa();
    result.cache = readCpuCacheInfo();
    support::DiagnosticList warnings;
    const std::string where = "roofline measure";
    auto fail = [&](const std::string& message) {
        support::DiagnosticList d;
        d.error({}, where, message);
        return d;
    };
    auto progress = [&](double f, const std::string& phase) {
        if (options.progress) options.progress(f, phase);
    };

    // Compile.
    progress(0.0, "compiling micro-benchmarks");
    runtime::HostCompilerOptions copts = options.compiler;
    copts.flags = cpuMicrobenchFlags();
    copts.sourceName = std::string("cpu_microbench_") + cpuIsaName(result.isa) + ".cpp";
    auto lib = runtime::compileHostLibrary(generateCpuMicrobenchSource(result.isa), copts, cancel);
    if (!lib) return lib.diagnostics();
    result.compilerVersion = lib->compilerVersion;
    result.compileSeconds = lib->compileSeconds;

    const int cpus = result.cache.cpus;
    std::vector<int> threadCounts = options.threadCounts.empty() ? defaultThreadCounts(cpus) : options.threadCounts;
    for (int t : threadCounts)
        if (t < 1) return fail("thread count " + std::to_string(t) + " is not positive");
    const int maxThreads = *std::max_element(threadCounts.begin(), threadCounts.end());
    if (options.quick && threadCounts.size() > 2) threadCounts = {1, maxThreads};
    const double minSeconds = options.minSeconds > 0 ? options.minSeconds : (options.quick ? 0.05 : 0.15);
    const double workScale = options.quick ? 0.5 : 1.0;

    const int vb = cpuIsaVectorBytes(result.isa);
    const int chains = peakChains(result.isa);
    const std::string isaName = cpuIsaName(result.isa);

    runtime::RunnerClientOptions ropts;
    ropts.runnerPath = options.runnerPath;
    ropts.threads = maxThreads;
    ropts.env = {{"OMP_PROC_BIND", "close"}, {"OMP_PLACES", "cores"}, {"OMP_DYNAMIC", "false"}};
    runtime::RunnerClient runner(ropts);

    // Batches of jobs, each run in one request at one thread count.
    struct Batch {
        int threads;
        std::vector<Job> jobs;
    };
    std::vector<Batch> batches;
    for (int t : threadCounts) {
        Batch b{t, {}};
        for (const char* method : {"fma", "add", "mul"}) {
            const bool fma = std::strcmp(method, "fma") == 0;
            if (!fma && options.quick && t != maxThreads) continue;
            for (int f64 = 0; f64 < 2; ++f64) {
                Job j;
                j.entry = std::string("tsr_peak_") + method + (f64 ? "_f64" : "_f32");
                const int elem = f64 ? 8 : 4;
                const int lanes = vb > 0 ? vb / elem : 1;
                const double flopsPerStep = (fma ? 2.0 : 1.0) * lanes * chains;
                const double iters = std::max(1000.0, std::floor(kPeakFlopsPerThreadCall * workScale / flopsPerStep));
                j.params[kParamIterations] = iters;
                j.params[kParamB] = fma ? 0.999999 : 1.0;
                j.params[kParamC] = fma ? 1e-7 : 1e-7;
                j.workPerThread = iters * flopsPerStep;
                j.compute = true;
                j.precision = f64 ? "fp64" : "fp32";
                j.method = method;
                b.jobs.push_back(j);
            }
        }
        batches.push_back(std::move(b));
    }
    for (int t : threadCounts) {
        if (options.quick && t != maxThreads) continue;
        if (!options.quick && t != 1 && t != maxThreads) continue;
        Batch b{t, {}};
        int slot = 0;  // slots are per batch: a buffer is reallocated when its size changes
        std::vector<std::pair<LevelWorkingSet, bool>> sets;
        for (const auto& w : levelWorkingSets(result.cache, t)) sets.push_back({w, false});
        if (options.sweep) {
            const std::int64_t top = sets.back().first.bytes;
            for (std::int64_t ws = 16 * kKiB * t; ws <= top; ws *= 2) sets.push_back({{"", ws}, true});
        }
        for (const auto& [w, sweepPoint] : sets) {
            if (slot >= kMaxSlots) break;
            const int mySlot = slot++;
            const std::int64_t floatsPerThread = w.bytes / 4 / t;
            const std::int64_t lanes = vb > 0 ? vb / 4 : 1;
            const std::int64_t block = 8 * lanes;
            for (const Kernel& k : kBandwidthKernels) {
                Job j;
                j.entry = std::string("tsr_bw_") + k.method;
                std::int64_t n = (floatsPerThread - 2 * kArrayPad) / k.arrays / block * block;
                n = std::max<std::int64_t>(n, block);
                const double bytesPerPass = static_cast<double>(n) * k.bytesPerElement;
                const double passes =
                    std::max(1.0, std::round(kBandwidthBytesPerCall * workScale / (bytesPerPass * t)));
                j.params[kParamIterations] = static_cast<double>(n);
                j.params[kParamPasses] = passes;
                j.params[kParamB] = 0.5;
                j.params[kParamSlot] = mySlot;
                j.params[kParamStride] = static_cast<double>(std::max<std::int64_t>(floatsPerThread, 3 * block + 2 * kArrayPad));
                j.workPerThread = passes * bytesPerPass;
                j.compute = false;
                j.method = k.method;
                j.level = w.level;
                j.workingSet = static_cast<std::int64_t>(n) * k.arrays * 4 * t;
                j.sweepPoint = sweepPoint;
                b.jobs.push_back(j);
            }
        }
        batches.push_back(std::move(b));
    }

    std::size_t totalJobs = 0, doneJobs = 0;
    for (const auto& b : batches) totalJobs += b.jobs.size();
    for (const Batch& b : batches) {
        if (cancel && cancel->isCancelled()) return fail("measurement cancelled");
        progress(static_cast<double>(doneJobs) / static_cast<double>(totalJobs),
                 (b.jobs.front().compute ? "compute peaks, " : "bandwidth, ") + std::to_string(b.threads) +
                     (b.threads == 1 ? " thread" : " threads"));
        std::vector<std::int64_t> sizes(b.jobs.size(), kParamCount * static_cast<std::int64_t>(sizeof(double)));
        std::int64_t total = 0;
        auto specs = runtime::layoutBuffers(sizes, total, 64);
        auto arena = runtime::SharedArena::create(total);
        if (!arena) return arena.diagnostics();
        runtime::RunRequest req;
        req.libraryPath = lib->path;
        arena->attach(req);
        req.buffers = specs;
        for (std::size_t i = 0; i < b.jobs.size(); ++i) {
            arena->write(specs[i], b.jobs[i].params, sizeof(b.jobs[i].params));
            req.launches.push_back({b.jobs[i].entry, {static_cast<int>(i)}, {}});
        }
        req.threads = b.threads;
        req.timing.time = true;
        req.timing.warmup = 1;
        req.timing.minReps = 5;
        req.timing.maxReps = 100000;
        req.timing.minSeconds = minSeconds;
        req.rotateBytes = 0;
        req.timeoutSeconds = 120;
        auto r = runner.run(req, cancel);
        if (!r) return r.diagnostics();
        if (r->kernels.size() != b.jobs.size()) return fail("runner returned no timing for every kernel");
        for (std::size_t i = 0; i < b.jobs.size(); ++i) {
            const Job& j = b.jobs[i];
            const double seconds = r->kernels[i].stats.median;
            if (!(seconds > 0)) return fail("kernel '" + j.entry + "' measured a time of 0 s");
            const auto* p = arena->as<double>(specs[i].offset);
            int threads = static_cast<int>(p[kParamThreadsOut]);
            if (threads != b.threads) {
                warnings.warning({}, where,
                                 "kernel '" + j.entry + "' ran " + std::to_string(threads) + " threads instead of " +
                                     std::to_string(b.threads));
                if (threads < 1) threads = b.threads;
            }
            const double rate = j.workPerThread * threads / seconds / 1e9;
            if (j.compute) {
                std::string name = (j.precision == "fp32" ? "FP32 " : "FP64 ");
                std::string m = j.method;
                for (auto& ch : m) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
                name += m + " peak";
                result.roofs.push_back(computeRoof(name, j.precision, rate, threads, j.method + " " + isaName));
            } else if (j.sweepPoint) {
                result.sweep.push_back({j.method, j.workingSet, threads, rate});
            } else {
                result.roofs.push_back(bandwidthRoof(j.level + " " + j.method + " bandwidth", j.level, rate, threads,
                                                     j.method + " " + sizeText(j.workingSet)));
            }
            ++doneJobs;
        }
    }
    progress(1.0, "done");
    for (std::string& problem : roofConsistencyProblems(result.roofs))
        warnings.warning({}, where, std::move(problem), support::DiagnosticCode::MeasurementDisturbed);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return {std::move(result), std::move(warnings)};
}

}  // namespace tessera::perf
