#include "core/support/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace tessera::support {

std::string temporaryNameFor(const std::string& target) {
    static std::atomic<std::uint64_t> counter{0};
    return target + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
}

bool writeFileAtomically(const std::string& path, const std::string& data, std::string& error) {
    namespace fs = std::filesystem;
    const std::string tmp = temporaryNameFor(path);
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) {
            const int err = errno;
            error = "cannot write '" + tmp + "'" + (err != 0 ? std::string(": ") + std::strerror(err) : std::string());
            return false;
        }
        f.write(data.data(), static_cast<std::streamsize>(data.size()));
        f.close();
        if (!f) {
            error = "cannot write '" + tmp + "' (disk full?)";
            std::error_code ec;
            fs::remove(tmp, ec);
            return false;
        }
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        error = "cannot rename '" + tmp + "' to '" + path + "': " + ec.message();
        fs::remove(tmp, ec);
        return false;
    }
    return true;
}

}  // namespace tessera::support
