#pragma once
/// @file
/// Machine profiles: the measured roofs of one machine and target, stored as JSON so that a chart
/// can be drawn without re-measuring and compared across machines.
///
/// JSON format (version 1), keys in snake_case:
/// @code
/// {
///   "version": 1,
///   "fingerprint": "Intel(R) Xeon(R) ... | 16 logical CPUs | L1d 48 KiB, L2 2048 KiB, L3 107520 KiB",
///   "target": "cpu",                      // or "cuda:0"
///   "description": "free text",           // optional, default ""
///   "measured_at": "2026-11-30T03:34:19Z", // ISO 8601 UTC, 'Z' suffix
///   "roofs": [
///     {"name": "L1 bandwidth", "kind": "bandwidth", "level": "L1", "value": 1234.5, "unit": "GB/s",
///      "threads": 16, "method": "load/store sweep 24 KiB"},
///     {"name": "FP32 FMA peak", "kind": "compute", "precision": "fp32", "value": 2100.0,
///      "unit": "GFLOP/s", "threads": 16, "method": "AVX-512 FMA chain"}
///   ]
/// }
/// @endcode
/// Roof fields: name, kind, value, unit and threads are required; level is required for
/// bandwidth roofs and precision for compute roofs (each is omitted for the other kind); method is
/// optional. Unknown keys are ignored.
///
/// Thread rules: plain values and free functions; the file functions touch only the paths given and
/// may be called from any thread (two threads saving the same profile race benignly: each write is
/// a rename of a complete temporary file).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/perf/roofline.h"
#include "core/support/expected.h"

namespace tessera::perf {

inline constexpr int kProfileVersion = 1;

struct MachineProfile {
    /// Identifies the machine: CPU model, logical CPU count and cache sizes (cpuFingerprint()), or
    /// a GPU's name and properties for GPU targets. Profiles are looked up by exact equality.
    std::string fingerprint;
    std::string target;       ///< "cpu" or "cuda:<ordinal>"
    std::string description;  ///< free text
    std::vector<Roof> roofs;
    std::string measuredAt;   ///< ISO 8601 UTC, "YYYY-MM-DDTHH:MM:SSZ"
    int version = kProfileVersion;
};

/// The JSON object of the format above. Never fails.
nlohmann::json profileToJson(const MachineProfile& profile);

/// Reads and validates a profile object. Errors (all collected, `file` names the source): not an
/// object; version missing, not an integer or not kProfileVersion ("unknown profile version");
/// a required field missing or of the wrong type; a roof whose kind is not "bandwidth"/"compute",
/// whose unit does not match its kind (GB/s vs GFLOP/s), whose value is not a positive number or
/// whose threads is < 1; a bandwidth roof without level or a compute roof without precision;
/// measured_at not "YYYY-MM-DDTHH:MM:SSZ". Warnings: a level or precision Tessera does not know.
support::Expected<MachineProfile> profileFromJson(const nlohmann::json& json, const std::string& file = {});

/// profileToJson(...).dump(2) plus a trailing newline.
std::string profileToString(const MachineProfile& profile);
/// Parses JSON text (a syntax error is a diagnostic with the byte offset) then profileFromJson.
support::Expected<MachineProfile> parseProfile(const std::string& text, const std::string& file = {});

/// A stable description of this CPU: "<model name> | <N> logical CPUs | L1d <a> KiB, L2 <b> KiB,
/// L3 <c> KiB" from /proc/cpuinfo and sysconf (sysfs cache sizes as a fallback). Parts that cannot
/// be read are left out; never empty ("unknown CPU" at worst). Does not include clock speeds, so it
/// stays the same across calls and boots.
std::string cpuFingerprint();

/// The current time as ISO 8601 UTC "YYYY-MM-DDTHH:MM:SSZ".
std::string isoUtcNow();

/// $XDG_CONFIG_HOME/tessera/profiles when XDG_CONFIG_HOME is set and absolute, else
/// $HOME/.config/tessera/profiles; empty when neither variable is usable. Not created.
std::string defaultProfileDir();

/// File name a profile is saved under: "<target>-<first 16 hex digits of the fingerprint hash>.json",
/// with characters other than [A-Za-z0-9_-] in the target replaced by '_' (e.g. "cuda_0-...").
std::string profileFileName(const MachineProfile& profile);

/// Writes `profile` to dir/profileFileName(profile) (creating dir), atomically (temporary file +
/// rename), replacing an older profile of the same machine and target. Returns the path written.
/// Errors: the profile fails validation (as profileFromJson), dir cannot be created, the file
/// cannot be written.
support::Expected<std::string> saveProfile(const MachineProfile& profile, const std::string& dir);

/// Reads and validates a profile file. Errors: cannot open, JSON syntax, validation (as above).
support::Expected<MachineProfile> loadProfile(const std::string& path);

/// The profile in `dir` (every *.json file) whose fingerprint equals `fingerprint` exactly and, when
/// `target` is not empty, whose target equals it; when several match, the one with the latest
/// measured_at. nullopt when none matches or dir does not exist. Files that fail to load are
/// skipped and reported as warnings in `skipped` when given.
std::optional<MachineProfile> findProfileFor(const std::string& fingerprint, const std::string& dir,
                                             const std::string& target = {},
                                             support::DiagnosticList* skipped = nullptr);

/// findProfileFor, else the latest profile (same target) of the same machine model: the
/// fingerprints agree on their first two " | "-separated fields (CPU: model name and logical CPU
/// count; GPU: name and architecture) and differ only after them (e.g. cache sizes, which Tessera
/// read from sysconf before it read sysfs). `*approximate` (when given) says whether the fallback
/// was used, so callers can say which profile they chose.
std::optional<MachineProfile> findProfileForMachine(const std::string& fingerprint, const std::string& dir,
                                                    const std::string& target = {}, bool* approximate = nullptr,
                                                    support::DiagnosticList* skipped = nullptr);

}  // namespace tessera::perf
