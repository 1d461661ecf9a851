#pragma once
/// @file
/// `tessera-cli roofline measure --target cpu [--quick] [--json] [--threads N] [--sweep]
/// [--min-seconds S] [--isa I] [--cxx C] [--save]`: measures this machine's roofs with the CPU
/// micro-benchmarks (core/perf/cpu_microbench.h) and prints them. `--target cuda`: see below.
/// - plain: the ISA, cache sizes, then one line per roof (name, threads, value and unit, method).
/// - `--json`: one object, a machine profile (core/perf/machine_profile.h: "version",
///   "fingerprint", "target", "measured_at", "roofs": [{"name", "kind": "bandwidth"|"compute",
///   "level" (bandwidth: L1, L2, L3, DRAM), "precision" (compute: fp32, fp64), "value", "unit":
///   "GB/s"|"GFLOP/s", "threads", "method"}]) plus "isa", "cache": {"l1d_bytes", "l2_bytes",
///   "l3_bytes", "cpus"}, "sweep": [{"method", "working_set_bytes", "threads", "gbps"}] and
///   "seconds".
/// - `--save`: also writes the profile into perf::defaultProfileDir() (path printed to stderr),
///   unless the measurement warned that its timings look disturbed (a roof below the same roof
///   with fewer threads, ADD/MUL far from half the FMA peak): then exit 2, or `--force` to save.
/// `--isa scalar|avx2|avx512` forces the kernels' ISA (one wider than the CPU has is refused, exit 2).
///
/// `--target cuda [--device N] [--arch sm_XX] [--quick] [--min-seconds S] [--json] [--save]` (or
/// `--target cuda:N`): the GPU micro-benchmarks (core/perf/gpu_microbench.h) compiled by NVRTC and
/// run in tessera-runner on device N (default 0).
/// - plain: the device (name, arch, SMs, L2, memory), one line per roof (name, value and unit,
///   percent of the theoretical peak, method), the sweep (GB/s per working set) and notes.
/// - `--json`: the machine profile (fingerprint gpuFingerprint, target "cuda:N", roofs with levels
///   shared, L1, L2, HBM and precisions fp32, fp16, bf16, tf32, threads 1) plus "device" (the
///   CudaDeviceInfo JSON), "arch", "theoretical" ({"fp32", "fp16", "tensor_f16", "tensor_tf32",
///   "hbm", "l2", "shared"}), "checks": [{"roof", "value", "theoretical", "ratio", "plausible"}],
///   "sweep": [{"method", "working_set_bytes", "gbps"}], "notes" and "seconds".
/// - Without a CUDA driver: "no CUDA driver found (...)" and exit 2; no such device: exit 2.
///   CPU-only options (--threads, --sweep, --isa, --cxx) are refused with --target cuda (exit 2),
///   --device and --arch with --target cpu.
///
/// Exit codes: 0 success, 2 bad input (unknown or unavailable target, no CUDA driver or device,
/// bad option, missing compiler or NVRTC, a compile error), 4 the runner crashed, faulted or timed
/// out, 1 internal error.
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
    bool force = false;  ///< --save even when the measurement warned that timings look disturbed
    std::string isa;         ///< "scalar", "avx2", "avx512"; empty = the widest this CPU has
    int device = -1;         ///< cuda: device ordinal; -1 = not given (0, or N of --target cuda:N)
    std::string arch;        ///< cuda: NVRTC architecture; empty = the device's
};

int runRooflineMeasure(const RooflineMeasureOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
