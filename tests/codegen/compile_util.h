#pragma once
// Compiling generated C++ with the system compiler in tests: write the source to a fresh temp
// directory, run `c++ <flags>`, dlopen the result. Tests skip (GTEST_SKIP) when no compiler.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace tessera::test {

/// True when `c++` runs (checked once).
inline bool haveCompiler() {
    static const bool ok = std::system("c++ --version > /dev/null 2>&1") == 0;
    return ok;
}

/// A temp directory removed on destruction.
class TempDir {
public:
    TempDir() {
        static std::atomic<int> counter{0};
        m_path = std::filesystem::temp_directory_path() /
                 ("tessera_codegen_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return m_path; }

private:
    std::filesystem::path m_path;
};

inline std::string readFile(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Runs `c++ <flags> <source file> [-o <out>]` on `source`; returns the compiler's exit status
/// and puts its output in *log.
inline int runCompiler(const TempDir& dir, const std::string& source, const std::string& flags,
                       const std::string& outputName, std::string* log) {
    const auto src = dir.path() / "module.cpp";
    {
        std::ofstream out(src, std::ios::binary);
        out << source;
    }
    const auto logPath = dir.path() / "compile.log";
    std::string cmd = "c++ " + flags + " '" + src.string() + "'";
    if (!outputName.empty()) cmd += " -o '" + (dir.path() / outputName).string() + "'";
    cmd += " > '" + logPath.string() + "' 2>&1";
    const int rc = std::system(cmd.c_str());
    if (log) *log = readFile(logPath);
    return rc;
}

/// A dlopen'ed shared object compiled from a source string.
class CompiledModule {
public:
    /// Compiles with `c++ -O2 -fopenmp -shared -fPIC <extraFlags>`. ok() false on failure (log()).
    explicit CompiledModule(const std::string& source, const std::string& extraFlags = {}) {
        const int rc = runCompiler(m_dir, source, "-O2 -fopenmp -shared -fPIC " + extraFlags, "module.so", &m_log);
        if (rc != 0) return;
        // RTLD_NODELETE: dlclose must not unload the module (and with it libgomp) while OpenMP's
        // idle worker threads still run its code: that crashes the process.
        m_handle = ::dlopen((m_dir.path() / "module.so").c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!m_handle) m_log += std::string("dlopen: ") + ::dlerror();
    }
    ~CompiledModule() {
        if (m_handle) ::dlclose(m_handle);
    }
    CompiledModule(const CompiledModule&) = delete;
    CompiledModule& operator=(const CompiledModule&) = delete;

    bool ok() const { return m_handle != nullptr; }
    const std::string& log() const { return m_log; }
    void* symbol(const std::string& name) const { return m_handle ? ::dlsym(m_handle, name.c_str()) : nullptr; }

    using Entry = void (*)(void* const*);
    Entry entry(const std::string& name) const { return reinterpret_cast<Entry>(symbol(name)); }

private:
    TempDir m_dir;
    std::string m_log;
    void* m_handle = nullptr;
};

}  // namespace tessera::test
