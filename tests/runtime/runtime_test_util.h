#pragma once
// Helpers for the runtime tests: a fresh temporary directory per test.

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

namespace tessera::runtime::test {

/// A new empty directory under the system temp dir, removed on destruction.
class TempDir {
public:
    TempDir() {
        static std::atomic<int> counter{0};
        m_path = std::filesystem::temp_directory_path() /
                 ("tessera_rt_" + std::to_string(::getpid()) + "_" + std::to_string(counter.fetch_add(1)));
        std::filesystem::remove_all(m_path);
        std::filesystem::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string str() const { return m_path.string(); }
    const std::filesystem::path& path() const { return m_path; }

private:
    std::filesystem::path m_path;
};

}  // namespace tessera::runtime::test
