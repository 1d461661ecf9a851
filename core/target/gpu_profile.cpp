// GPU hardware profiles for fusion planning (issue 6). Work in progress: stubs.
#include "core/target/gpu_profile.h"

namespace tessera::target {

const std::vector<GpuProfile>& builtinGpuProfiles() {
    static const std::vector<GpuProfile> kProfiles;
    return kProfiles;
}
std::vector<std::string> builtinGpuProfileNames() { return {}; }
support::Expected<GpuProfile> findGpuProfile(const std::string& nameOrFile) {
    support::DiagnosticList d;
    d.error("", "", "unknown GPU profile '" + nameOrFile + "'");
    return d;
}
std::string gpuProfileToJson(const GpuProfile&) { return "{}"; }
support::Expected<GpuProfile> gpuProfileFromJson(const std::string&, const std::string& file) {
    support::DiagnosticList d;
    d.error(file, "", "not implemented yet");
    return d;
}
std::string validateGpuProfile(const GpuProfile&) { return {}; }

}  // namespace tessera::target
