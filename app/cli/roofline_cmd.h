#pragma once
/// @file
/// `tessera-cli roofline measure --target cpu [--quick] [--json] [--threads N] [--sweep]
/// [--min-seconds S] [--isa I] [--cxx C] [--save]`: measures this machine's roofs with the CPU
/// micro-benchmarks (core/perf/cpu_microbench.h) and prints them.
/// - plain: the ISA, cache sizes, then one line per roof (name, threads, value and unit, method).
/// - `--json`: one object, a machine profile (core/perf/machine_profile.h: "version",
///   "fingerprint", "target", "measured_at", "roofs": [{"name", "kind": "bandwidth"|"compute",
///   "level" (bandwidth: L1, L2, L3, DRAM), "precision" (compute: fp32, fp64), "value", "unit":
///   "GB/s"|"GFLOP/s", "threads", "method"}]) plus "isa", "cache": {"l1d_bytes", "l2_bytes",
///   "l3_bytes", "cpus"}, "sweep": [{"method", "working_set_bytes", "threads", "gbps"}] and
///   "seconds".
/// - `--save`: also writes the profile into perf::defaultProfileDir() (path printed to stderr).
/// `--isa scalar|avx2|avx512` forces the kernels' ISA (one wider than the CPU has is refused, exit 2).
/// `--target cuda` (or cuda:N) is refused: the CUDA target is not available yet.
///
/// Exit codes: 0 success, 2 bad input (unknown or unavailable target, bad option, missing
/// compiler), 4 the runner crashed or timed out, 1 internal error.
/// Thread rules: none (runs on the caller's thread).

#include <iosfwd>
#include <string>

namespace tessera::cli {

struct RooflineMeasureOptions {
    std::string target = "cpu";
    bool quick = false;
    bool json = false;
    int threads = 0;         ///< > 0: measure thread counts 1..threads (quick: 1 and threads)
    bool sweep = false;      ///< also the working-set sweep
    double minSeconds = 0;   ///< 0 = the default (0.15 s; quick 0.05 s)
    std::string cxx;         ///< host compiler; empty = default
    bool save = false;
    std::string isa;         ///< "scalar", "avx2", "avx512"; empty = the widest this CPU has
};

int runRooflineMeasure(const RooflineMeasureOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
