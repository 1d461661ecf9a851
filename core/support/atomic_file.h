#pragma once
/// @file
/// Writing a file so that readers never see it half-written: the data goes to a unique temporary
/// file next to the target (`<path>.tmp-<pid>-<n>`), which is then renamed over the target. Used
/// by the kernel caches of the host JIT and the NVRTC JIT, where several threads or processes may
/// write the same entry at once (the last rename wins; every version is complete).
///
/// Thread rules: safe from any thread (the temporary-name counter is atomic).

#include <string>

namespace tessera::support {

/// A unique temporary name next to `target` (this process and call).
std::string temporaryNameFor(const std::string& target);

/// Writes `data` to `path` through a temporary file and a rename. On failure returns false with
/// a one-line `error` ("cannot write '<tmp>': <strerror>", "... (disk full?)", "cannot rename
/// ...") and leaves no temporary file behind.
bool writeFileAtomically(const std::string& path, const std::string& data, std::string& error);

}  // namespace tessera::support
