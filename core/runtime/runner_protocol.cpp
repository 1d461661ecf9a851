#include "core/runtime/runner_protocol.h"

namespace tessera::runtime {

using nlohmann::json;

namespace {

support::DiagnosticList errorList(const std::string& message) {
    support::DiagnosticList d;
    d.error("", "", message);
    return d;
}

/// Reads optional field `key` of object `j` into `out` when present; throws a std::runtime_error
/// naming the field when it has the wrong type (caught by the callers below).
template <typename T>
void optionalField(const json& j, const char* key, T& out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return;
    try {
        out = it->get<T>();
    } catch (const json::exception&) {
        throw std::runtime_error(std::string("field '") + key + "' has the wrong type");
    }
}

/// optionalField for integers that refuses non-integral numbers (1.5 is not a block size).
template <typename T>
void optionalIntField(const json& j, const char* key, T& out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return;
    if (!it->is_number_integer()) throw std::runtime_error(std::string("field '") + key + "' has the wrong type");
    optionalField(j, key, out);
}

template <typename T>
void requiredField(const json& j, const char* key, T& out) {
    if (!j.contains(key)) throw std::runtime_error(std::string("missing field '") + key + "'");
    optionalField(j, key, out);
}

void requireObject(const json& j, const std::string& what) {
    if (!j.is_object()) throw std::runtime_error(what + " is not a JSON object");
}

TimingStats statsFromJson(const json& j) {
    requireObject(j, "timing statistics");
    TimingStats s;
    optionalField(j, "median_s", s.median);
    optionalField(j, "min_s", s.min);
    optionalField(j, "max_s", s.max);
    optionalField(j, "q1_s", s.q1);
    optionalField(j, "q3_s", s.q3);
    optionalField(j, "mean_s", s.mean);
    optionalField(j, "reps", s.reps);
    return s;
}

}  // namespace

std::string launchLabel(const LaunchSpec& launch) { return launch.label.empty() ? launch.entry : launch.label; }

const char* runTargetName(RunTarget t) { return t == RunTarget::Cuda ? "cuda" : "cpu"; }

json runRequestToJson(const RunRequest& r) {
    json buffers = json::array();
    for (const auto& b : r.buffers) buffers.push_back({{"offset", b.offset}, {"bytes", b.bytes}});
    json launches = json::array();
    for (const auto& l : r.launches)
        launches.push_back({{"entry", l.entry},
                            {"args", l.args},
                            {"label", launchLabel(l)},
                            {"grid", l.grid},
                            {"block", l.block},
                            {"shared_bytes", l.sharedBytes}});
    json j = {
        {"request", "run"},
        {"target", runTargetName(r.target)},
        {"library", r.libraryPath},
        {"arena", {{"path", r.arenaPath}, {"bytes", r.arenaBytes}}},
        {"buffers", std::move(buffers)},
        {"launches", std::move(launches)},
        {"threads", r.threads},
        {"timing",
         {{"time", r.timing.time},
          {"warmup", r.timing.warmup},
          {"min_reps", r.timing.minReps},
          {"max_reps", r.timing.maxReps},
          {"min_seconds", r.timing.minSeconds}}},
        {"rotate_bytes", std::max<std::int64_t>(r.rotateBytes, 0)},
    };
    if (r.target == RunTarget::Cuda) {
        j["module"] = r.modulePath;
        j["device"] = r.device;
        // -1 asks the runner for its default (2 x the device's L2).
        j["rotate_bytes"] = r.rotateBytes < 0 ? std::int64_t{-1} : r.rotateBytes;
    }
    return j;
}

support::Expected<RunRequest> runRequestFromJson(const json& j) {
    try {
        requireObject(j, "request");
        RunRequest r;
        std::string target = "cpu";
        optionalField(j, "target", target);
        if (target == "cuda")
            r.target = RunTarget::Cuda;
        else if (target != "cpu")
            return errorList("field 'target' must be \"cpu\" or \"cuda\", not '" + target + "'");
        if (r.target == RunTarget::Cpu) {
            requiredField(j, "library", r.libraryPath);
            if (r.libraryPath.empty()) return errorList("field 'library' is empty");
        } else {
            optionalField(j, "library", r.libraryPath);
            requiredField(j, "module", r.modulePath);
            if (r.modulePath.empty()) return errorList("field 'module' is empty (a cuda run needs a .cubin or .ptx file)");
            optionalIntField(j, "device", r.device);
            if (r.device < 0) return errorList("field 'device' is negative");
        }
        if (auto it = j.find("arena"); it != j.end() && !it->is_null()) {
            requireObject(*it, "field 'arena'");
            requiredField(*it, "path", r.arenaPath);
            requiredField(*it, "bytes", r.arenaBytes);
            if (r.arenaBytes < 0) return errorList("arena size is negative");
        }
        if (auto it = j.find("buffers"); it != j.end() && !it->is_null()) {
            if (!it->is_array()) return errorList("field 'buffers' is not an array");
            for (const auto& b : *it) {
                requireObject(b, "a buffer");
                BufferSpec s;
                requiredField(b, "offset", s.offset);
                requiredField(b, "bytes", s.bytes);
                if (s.offset < 0 || s.bytes < 0 || s.offset > r.arenaBytes || s.bytes > r.arenaBytes - s.offset)
                    return errorList("buffer " + std::to_string(r.buffers.size()) + " (offset " + std::to_string(s.offset) +
                                     ", " + std::to_string(s.bytes) + " bytes) lies outside the arena of " +
                                     std::to_string(r.arenaBytes) + " bytes");
                r.buffers.push_back(s);
            }
        }
        if (!r.buffers.empty() && r.arenaPath.empty()) return errorList("buffers given without an arena");
        if (auto it = j.find("launches"); it != j.end() && !it->is_null()) {
            if (!it->is_array()) return errorList("field 'launches' is not an array");
            for (const auto& l : *it) {
                requireObject(l, "a launch");
                LaunchSpec s;
                requiredField(l, "entry", s.entry);
                optionalField(l, "args", s.args);
                optionalField(l, "label", s.label);
                optionalIntField(l, "grid", s.grid);
                optionalIntField(l, "block", s.block);
                optionalIntField(l, "shared_bytes", s.sharedBytes);
                if (s.entry.empty()) return errorList("launch " + std::to_string(r.launches.size()) + " has no entry");
                constexpr std::int64_t kMaxDim = 2147483647;
                auto inRange = [&](const char* key, std::int64_t v, std::int64_t lo) -> std::string {
                    if (v >= lo && v <= kMaxDim) return {};
                    return "launch '" + launchLabel(s) + "': field '" + key + "' is " + std::to_string(v) +
                           ", must be between " + std::to_string(lo) + " and " + std::to_string(kMaxDim);
                };
                for (const std::string& e : {inRange("grid", s.grid, 1), inRange("block", s.block, 1),
                                             inRange("shared_bytes", s.sharedBytes, 0)})
                    if (!e.empty()) return errorList(e);
                for (int a : s.args)
                    if (a < 0 || static_cast<std::size_t>(a) >= r.buffers.size())
                        return errorList("launch '" + launchLabel(s) + "' names buffer " + std::to_string(a) + " but there are " +
                                         std::to_string(r.buffers.size()));
                r.launches.push_back(std::move(s));
            }
        }
        optionalField(j, "threads", r.threads);
        if (auto it = j.find("timing"); it != j.end() && !it->is_null()) {
            requireObject(*it, "field 'timing'");
            optionalField(*it, "time", r.timing.time);
            optionalField(*it, "warmup", r.timing.warmup);
            optionalField(*it, "min_reps", r.timing.minReps);
            optionalField(*it, "max_reps", r.timing.maxReps);
            optionalField(*it, "min_seconds", r.timing.minSeconds);
            if (r.timing.warmup < 0 || r.timing.minReps < 1 || r.timing.maxReps < r.timing.minReps || r.timing.minSeconds < 0)
                return errorList("timing needs warmup >= 0, 1 <= min_reps <= max_reps and min_seconds >= 0");
        }
        r.rotateBytes = 0;
        optionalField(j, "rotate_bytes", r.rotateBytes);
        if (r.rotateBytes < -1 || (r.rotateBytes < 0 && r.target == RunTarget::Cpu))
            return errorList("field 'rotate_bytes' is negative" +
                             std::string(r.target == RunTarget::Cuda ? " (-1 = the device default)" : ""));
        return r;
    } catch (const std::exception& e) {
        return errorList(e.what());
    }
}

json timingStatsToJson(const TimingStats& s) {
    return {{"median_s", s.median}, {"min_s", s.min}, {"max_s", s.max}, {"q1_s", s.q1},
            {"q3_s", s.q3},         {"mean_s", s.mean}, {"reps", s.reps}};
}

json runResultToJson(const RunResult& r) {
    json kernels = json::array();
    for (const auto& k : r.kernels) {
        json e = timingStatsToJson(k.stats);
        e["label"] = k.label;
        e["rotated_copies"] = k.rotatedCopies;
        if (k.energy) {
            e["energy_j"] = k.energy->joulesPerCall;
            e["avg_power_w"] = k.energy->avgPowerWatts;
            e["energy_method"] = k.energy->method;
            e["energy_valid"] = k.energy->valid;
            e["energy_reps"] = k.energy->calls;
            e["energy_s"] = k.energy->seconds;
        }
        kernels.push_back(std::move(e));
    }
    json j = {{"ok", true}, {"timed", r.timed}, {"threads", r.threads}, {"kernels", std::move(kernels)},
              {"total", timingStatsToJson(r.total)}};
    if (r.device) j["device"] = cuda::cudaDeviceInfoToJson(*r.device);
    return j;
}

support::Expected<RunResult> runResultFromJson(const json& j) {
    try {
        requireObject(j, "answer");
        RunResult r;
        optionalField(j, "timed", r.timed);
        optionalField(j, "threads", r.threads);
        if (auto it = j.find("kernels"); it != j.end() && !it->is_null()) {
            if (!it->is_array()) return errorList("field 'kernels' is not an array");
            for (const auto& k : *it) {
                KernelTiming t;
                t.stats = statsFromJson(k);
                optionalField(k, "label", t.label);
                optionalField(k, "rotated_copies", t.rotatedCopies);
                if (auto e = k.find("energy_j"); e != k.end() && !e->is_null()) {
                    KernelEnergy energy;
                    optionalField(k, "energy_j", energy.joulesPerCall);
                    optionalField(k, "avg_power_w", energy.avgPowerWatts);
                    optionalField(k, "energy_method", energy.method);
                    optionalField(k, "energy_valid", energy.valid);
                    optionalIntField(k, "energy_reps", energy.calls);
                    optionalField(k, "energy_s", energy.seconds);
                    t.energy = std::move(energy);
                }
                r.kernels.push_back(std::move(t));
            }
        }
        if (auto it = j.find("total"); it != j.end() && !it->is_null()) r.total = statsFromJson(*it);
        if (auto it = j.find("device"); it != j.end() && !it->is_null()) {
            auto device = cuda::cudaDeviceInfoFromJson(*it);
            if (!device) return device.diagnostics();
            r.device = std::move(*device);
        }
        return r;
    } catch (const std::exception& e) {
        return errorList(e.what());
    }
}

std::string dumpLine(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace tessera::runtime
