#pragma once
/// @file
/// Hardware profiles for fusion planning (issue 6): the GPU facts FusePlanner's cost model and
/// tile search read (Qararyah et al., ICPP-W 2024, arXiv 2404.19331, FusePlanner/hw_configs/*.cfg:
/// SM count, L1 KiB, shared-memory KiB, warp size), plus L2 size and the measured roofs when
/// known (used to turn predicted bytes into predicted time; not by the decision rule).
///
/// Built-in profiles (`builtinGpuProfiles`): h200 (measured on the lent machine, see
/// ../shared/reference/device-notes.md), h100, a100, rtx-a4000, gtx-1660, jetson-orin (vendor
/// data sheets / FusePlanner's configs; each profile's `source` says which). A user profile is a
/// JSON file (`gpuProfileToJson` / `gpuProfileFromJson`), e.g.
/// ```
/// {"format": "tessera-gpu-profile", "version": 1, "name": "my-gpu", "display_name": "...",
///  "sms": 132, "warp_size": 32, "l1_kib": 256, "shared_kib": 227, "l2_kib": 61440,
///  "dram_gbs": 4032, "fp32_gflops": 63200, "source": "..."}
/// ```
/// Units: sizes in bytes in the struct, KiB in JSON; bandwidth GB/s (1e9 bytes/s); compute
/// GFLOP/s. 0 means unknown for the roofs.
///
/// Errors: unknown profile names list the known ones; JSON errors name the file and the field.
/// Thread rules: plain values and pure functions.

#include <cstdint>
#include <string>
#include <vector>

#include "core/support/expected.h"

namespace tessera::target {

struct GpuProfile {
    std::string name;         ///< key: "h200", "a100", ... or the user's name
    std::string displayName;  ///< "NVIDIA H200 SXM (141 GB)"
    int sms = 0;              ///< streaming multiprocessors (FusePlanner: "SMs")
    int warpSize = 32;
    std::int64_t l1Bytes = 0;      ///< L1 data cache + shared memory per SM (FusePlanner: "L1 size")
    std::int64_t sharedBytes = 0;  ///< shared memory one block may use (FusePlanner: "shared memory")
    std::int64_t l2Bytes = 0;      ///< whole-chip L2 (not an input of FusePlanner's public code)
    double dramGBs = 0;       ///< DRAM/HBM bandwidth roof, GB/s (0 = unknown)
    double fp32Gflops = 0;    ///< FP32 CUDA-core roof, GFLOP/s (0 = unknown)
    std::string source;       ///< where the numbers come from ("measured on ...", "data sheet")
};

/// The built-in profiles in a fixed order (h200 first).
const std::vector<GpuProfile>& builtinGpuProfiles();
/// Names of the built-in profiles, in order.
std::vector<std::string> builtinGpuProfileNames();

/// A built-in profile by name (case-insensitive), or a JSON profile file when `nameOrFile` names
/// an existing file (or ends in .json). Errors: unknown name (lists the known ones), unreadable
/// or malformed file, a field out of range (sms < 1, shared > l1 ...).
support::Expected<GpuProfile> findGpuProfile(const std::string& nameOrFile);

std::string gpuProfileToJson(const GpuProfile& p);  ///< pretty JSON, the format above
/// Parses the format above; `file` only names the source in diagnostics.
support::Expected<GpuProfile> gpuProfileFromJson(const std::string& text, const std::string& file = {});

/// Checks the ranges (sms >= 1, warpSize >= 1, sharedBytes >= 1, l1Bytes >= sharedBytes);
/// empty string = fine, else the reason.
std::string validateGpuProfile(const GpuProfile& p);

}  // namespace tessera::target
