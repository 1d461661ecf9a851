#include "core/perf/cpu_profile.h"

namespace tessera::perf {

MachineProfile cpuProfileFromMeasurement(const CpuMicrobenchResult& result, const std::string& source, bool quick) {
    MachineProfile profile;
    profile.fingerprint = cpuFingerprint();
    profile.target = "cpu";
    profile.description = source + (quick ? " --quick" : "") + ", ISA " + cpuIsaName(result.isa);
    profile.roofs = result.roofs;
    profile.measuredAt = isoUtcNow();
    return profile;
}

bool measurementLooksDisturbed(const support::DiagnosticList& diagnostics) {
    return diagnostics.hasCode(support::DiagnosticCode::MeasurementDisturbed);
}

support::Expected<std::string> saveProfileToDefaultDir(const MachineProfile& profile) {
    const std::string dir = defaultProfileDir();
    if (dir.empty()) {
        support::DiagnosticList diags;
        diags.error({}, "profile directory", "no profile folder (set HOME or XDG_CONFIG_HOME)");
        return diags;
    }
    return saveProfile(profile, dir);
}

}  // namespace tessera::perf
