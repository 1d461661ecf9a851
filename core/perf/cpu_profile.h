#pragma once
/// @file
/// Turning a CPU roof measurement into the machine profile that charts use, and saving it: the
/// part of `tessera-cli roofline measure --target cpu --save` that the GUI's Run > Measure Roofs
/// shares, so both save the same profile.
///
/// Thread rules: pure functions (saveProfileToDefaultDir writes one file); callable from any thread.

#include <string>

#include "core/perf/cpu_microbench.h"
#include "core/perf/machine_profile.h"
#include "core/support/diagnostic.h"
#include "core/support/expected.h"

namespace tessera::perf {

/// The profile of this CPU from a measurement: cpuFingerprint(), target "cpu", the measured roofs,
/// measuredAt = now (UTC), and description "<source>[ --quick], ISA <isa>", e.g.
/// "tessera-cli roofline measure --quick, ISA avx2".
MachineProfile cpuProfileFromMeasurement(const CpuMicrobenchResult& result, const std::string& source, bool quick);

/// True when `diagnostics` hold a consistency problem of the measurement (code
/// support::DiagnosticCode::MeasurementDisturbed, see roofConsistencyProblems): such roofs should
/// not be saved unasked.
bool measurementLooksDisturbed(const support::DiagnosticList& diagnostics);

/// Saves `profile` into defaultProfileDir(). Returns the file written. Errors: no profile folder
/// (neither HOME nor XDG_CONFIG_HOME set), and those of saveProfile.
support::Expected<std::string> saveProfileToDefaultDir(const MachineProfile& profile);

}  // namespace tessera::perf
