#pragma once
/// @file
/// The "host" hardware profile: this machine's CPU described in FusePlanner's terms (issue 6), so
/// that `--plan fuseplanner` on the CPU target plans for the CPU rather than for a GPU.
///
/// Mapping (a CPU worker plays the role of an SM): sms = logical CPUs this process may use,
/// warpSize = 1, FusePlanner's "L1" = the per-core L2 (the cache a worker's tiles live in),
/// shared memory = half of it (room for the intermediate tile and the weights), l2Bytes = one L3
/// instance. Sizes come from perf::readCpuCacheInfo (sysfs); unknown sizes fall back to 1 MiB L2
/// and 32 MiB L3. Roofs are left unknown (0).
///
/// Thread rules: reads sysfs; safe from any thread.

#include <string>

#include "core/support/expected.h"
#include "core/target/gpu_profile.h"

namespace tessera::pipeline {

target::GpuProfile hostProfile();

/// "host" -> hostProfile(); anything else -> target::findGpuProfile (built-in name or JSON file).
support::Expected<target::GpuProfile> findHardwareProfile(const std::string& nameOrFile);

}  // namespace tessera::pipeline
