#include "core/pipeline/host_profile.h"

#include <algorithm>

#include "core/perf/cpu_microbench.h"

namespace tessera::pipeline {

target::GpuProfile hostProfile() {
    const perf::CpuCacheInfo c = perf::readCpuCacheInfo();
    target::GpuProfile p;
    p.name = "host";
    p.sms = std::max(1, c.cpus);
    p.displayName = "this CPU (" + std::to_string(p.sms) + (p.sms == 1 ? " worker" : " workers") + ")";
    p.warpSize = 1;
    p.l1Bytes = c.l2 > 0 ? c.l2 : std::int64_t{1} << 20;
    p.sharedBytes = p.l1Bytes / 2;
    p.l2Bytes = c.l3 > 0 ? c.l3 : std::int64_t{32} << 20;
    p.source = "this machine's caches (sysfs): workers as SMs, the per-core L2 as FusePlanner's L1, half of it as "
               "shared memory, the L3 as L2";
    return p;
}

support::Expected<target::GpuProfile> findHardwareProfile(const std::string& nameOrFile) {
    if (nameOrFile == "host") return hostProfile();
    auto p = target::findGpuProfile(nameOrFile);
    if (!p.ok()) {
        support::DiagnosticList d = p.diagnostics();
        for (auto& x : d.items())
            if (auto at = x.message.find("(known: "); at != std::string::npos)
                x.message.insert(at + 8, "host (this CPU), ");
        return d;
    }
    return p;
}

}  // namespace tessera::pipeline
