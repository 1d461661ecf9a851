#include "core/runtime/host_jit.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "core/runtime/subprocess.h"
#include "core/support/atomic_file.h"
#include "core/support/hash.h"

namespace tessera::runtime {

namespace fs = std::filesystem;

namespace {

support::DiagnosticList errorList(const std::string& message, std::vector<std::string> notes = {}) {
    support::DiagnosticList d;
    support::Diagnostic e;
    e.message = message;
    e.notes = std::move(notes);
    d.add(std::move(e));
    return d;
}

std::string notFoundMessage(const std::string& compiler) {
    return "host compiler '" + compiler + "' not found: install g++ or set TESSERA_CXX / --cxx";
}

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(line);
    }
    return lines;
}

/// ": <message>" for a set error code, nothing when it holds no error.
std::string errorCodeSuffix(const std::error_code& ec) { return ec ? ": " + ec.message() : std::string(); }

/// One argument as a shell would need it to be typed: bare when it only holds safe characters,
/// else single-quoted. Only for showing command lines; nothing here goes through a shell.
std::string shellQuote(const std::string& arg) {
    const bool safe = !arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                            "0123456789_-+=/.,:@%") == std::string::npos;
    if (safe) return arg;
    std::string q = "'";
    for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string commandLine(const std::vector<std::string>& argv) {
    std::string line;
    for (const auto& a : argv) line += (line.empty() ? "" : " ") + shellQuote(a);
    return line;
}

/// One parsed "file:line:col: kind: message" line of compiler output.
struct CompilerMessage {
    std::string file;
    int line = 0;
    int column = 0;
    support::Severity severity = support::Severity::Error;
    std::string message;
};

bool parseCompilerLine(const std::string& text, CompilerMessage& out) {
    struct Kind {
        const char* tag;
        support::Severity severity;
    };
    static const Kind kKinds[] = {{": fatal error: ", support::Severity::Error},
                                  {": error: ", support::Severity::Error},
                                  {": warning: ", support::Severity::Warning}};
    for (const auto& k : kKinds) {
        const std::size_t at = text.find(k.tag);
        if (at == std::string::npos) continue;
        std::string prefix = text.substr(0, at);
        out.message = text.substr(at + std::strlen(k.tag));
        out.severity = k.severity;
        // prefix = file:line:col or file:line (file may itself contain ':').
        auto takeNumber = [&](int& value) {
            const std::size_t colon = prefix.rfind(':');
            if (colon == std::string::npos || colon + 1 >= prefix.size()) return false;
            const std::string digits = prefix.substr(colon + 1);
            for (char c : digits)
                if (c < '0' || c > '9') return false;
            value = std::atoi(digits.c_str());
            prefix.resize(colon);
            return true;
        };
        int a = 0, b = 0;
        if (!takeNumber(a)) {
            out.file = prefix;  // "cc1plus: error: ..." and the like
            out.line = out.column = 0;
            return true;
        }
        if (takeNumber(b)) {
            out.line = b;
            out.column = a;
        } else {
            out.line = a;
            out.column = 0;
        }
        out.file = prefix;
        return true;
    }
    return false;
}

/// At most this many `error:` lines of the compiler's output become diagnostics.
constexpr int kMaxCompilerErrors = 20;
/// Lines of the compiler's output quoted when no error has a source position.
constexpr std::size_t kCompilerTailLines = 12;

std::mutex g_versionMutex;
std::map<std::string, std::string> g_versions;

}  // namespace

std::string defaultHostCompiler() {
    const char* env = std::getenv("TESSERA_CXX");
    if (env && *env) return env;
    return "c++";
}

std::string defaultKernelCacheDir() {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "tessera" / "kernels").string();
    if (const char* home = std::getenv("HOME"); home && *home)
        return (fs::path(home) / ".cache" / "tessera" / "kernels").string();
    std::error_code ec;
    return (fs::temp_directory_path(ec) / "tessera-kernels").string();
}

support::Expected<std::string> hostCompilerVersion(const std::string& compiler, const support::CancelToken* cancel) {
    {
        std::lock_guard<std::mutex> lock(g_versionMutex);
        auto it = g_versions.find(compiler);
        if (it != g_versions.end()) return it->second;
    }
    if (compiler.empty()) return errorList(notFoundMessage(compiler));
    SpawnSpec spec;
    spec.argv = {compiler, "--version"};
    spec.env = {{"LC_ALL", "C"}, {"LANG", "C"}};
    ProcessOutput out;
    std::string error;
    const int rc = runProcess(spec, cancel, out, error);
    if (rc == ENOENT) return errorList(notFoundMessage(compiler));
    if (rc != 0) return errorList("host compiler '" + compiler + "' cannot be started: " + std::strerror(rc));
    if (out.cancelled) return errorList("compilation cancelled");
    const auto lines = splitLines(out.output);
    if (!out.status.exited || out.status.code != 0 || lines.empty() || lines.front().empty())
        return errorList("host compiler '" + compiler + "' did not answer --version",
                         lines.empty() ? std::vector<std::string>{} : std::vector<std::string>{lines.front()});
    std::lock_guard<std::mutex> lock(g_versionMutex);
    g_versions[compiler] = lines.front();
    return lines.front();
}

support::Expected<CompiledLibrary> compileHostLibrary(const std::string& source, const HostCompilerOptions& options,
                                                      const support::CancelToken* cancel) {
    auto version = hostCompilerVersion(options.compiler, cancel);
    if (!version) return version.diagnostics();

    CompiledLibrary lib;
    lib.compilerVersion = *version;
    support::Hasher h;
    h.field("tessera-host-jit-1").field(source).field(lib.compilerVersion);
    for (const auto& f : options.flags) h.field(f);
    lib.key = h.hex();

    const fs::path dir = options.cacheDir.empty() ? fs::path(defaultKernelCacheDir()) : fs::path(options.cacheDir);
    lib.path = (dir / (lib.key + ".so")).string();
    lib.sourcePath = (dir / (lib.key + ".cpp")).string();

    struct stat st {};
    if (::stat(lib.path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        lib.cacheHit = true;
        return lib;
    }

    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return errorList("cannot create the kernel cache directory '" + dir.string() + "': " + ec.message());
    std::string error;
    if (!support::writeFileAtomically(lib.sourcePath, source, error)) return errorList(error);

    const std::string tmpLib = support::temporaryNameFor(lib.path);
    SpawnSpec spec;
    spec.argv.push_back(options.compiler);
    for (const auto& f : options.flags) spec.argv.push_back(f);
    spec.argv.push_back("-fdiagnostics-color=never");
    spec.argv.insert(spec.argv.end(), {"-o", tmpLib, lib.sourcePath});
    spec.env = {{"LC_ALL", "C"}, {"LANG", "C"}};

    const auto t0 = std::chrono::steady_clock::now();
    ProcessOutput out;
    const int rc = runProcess(spec, cancel, out, error);
    lib.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto removeTemp = [&] { fs::remove(tmpLib, ec); };
    if (rc == ENOENT) return errorList(notFoundMessage(options.compiler));
    if (rc != 0) return errorList("host compiler '" + options.compiler + "' cannot be started: " + std::strerror(rc));
    if (out.cancelled) {
        removeTemp();
        return errorList("compilation cancelled");
    }

    // Map the compiler's messages onto the generated source.
    const bool succeeded = out.status.exited && out.status.code == 0;
    const std::vector<std::string> sourceLines = splitLines(source);
    const std::string shownName = options.sourceName.empty() ? lib.sourcePath : options.sourceName;
    support::DiagnosticList diags;
    const std::vector<std::string> outputLines = splitLines(out.output);
    std::vector<bool> shown(outputLines.size(), false);  // lines that became a diagnostic
    int errorLines = 0;
    int errorsLeftOut = 0;
    bool sourceErrors = false;  // an error with a position (in the generated source or a header)
    for (std::size_t i = 0; i < outputLines.size(); ++i) {
        CompilerMessage m;
        if (!parseCompilerLine(outputLines[i], m)) continue;
        const bool generated = m.file == lib.sourcePath;
        if (m.severity == support::Severity::Warning && !generated) continue;
        if (m.severity == support::Severity::Error) {
            if (errorLines >= kMaxCompilerErrors) {
                ++errorsLeftOut;
                continue;
            }
            ++errorLines;
            if (m.line > 0) sourceErrors = true;
        }
        shown[i] = true;
        support::Diagnostic d;
        d.severity = m.severity;
        d.file = generated ? shownName : m.file;
        d.begin = {m.line, m.column};
        d.end = d.begin;
        d.message = m.message;
        if (generated && m.line >= 1 && static_cast<std::size_t>(m.line) <= sourceLines.size())
            d.notes.push_back("line " + std::to_string(m.line) + ": " + sourceLines[static_cast<std::size_t>(m.line - 1)]);
        diags.add(std::move(d));
    }

    if (!succeeded) {
        removeTemp();
        // The summary: how the compiler ended and the exact command, so that it can be rerun by
        // hand. Without an error at a source position (bad flags, a failed link) the errors alone
        // rarely say enough: the last lines of the output that are not already errors follow.
        const std::string how = out.status.exited ? "exited with status " + std::to_string(out.status.code)
                                                  : "was killed by " + describeSignal(out.status.signal);
        support::Diagnostic summary;
        summary.message = "compiling the kernel module failed (" + options.compiler + " " + how + ")";
        summary.notes.push_back("command: " + commandLine(spec.argv));
        if (!sourceErrors) {
            std::vector<std::string> tail;
            for (std::size_t i = outputLines.size(); i-- > 0 && tail.size() < kCompilerTailLines;) {
                if (shown[i] || outputLines[i].find_first_not_of(" \t") == std::string::npos) continue;
                tail.insert(tail.begin(), outputLines[i]);
            }
            for (auto& t : tail) summary.notes.push_back("compiler output: " + t);
        }
        if (errorsLeftOut > 0)
            summary.notes.push_back(std::to_string(errorsLeftOut) + " more error line" + (errorsLeftOut == 1 ? "" : "s") +
                                    " not shown");
        // Errors at a position in the source come first (the IDE jumps to the first error); a
        // failure without one starts with the summary.
        support::DiagnosticList fail;
        if (sourceErrors) {
            fail = std::move(diags);
            fail.add(std::move(summary));
        } else {
            fail.add(std::move(summary));
            fail.append(diags);
        }
        return fail;
    }
    // A "compiler" that succeeds without writing anything (e.g. --cxx /bin/true) is not one.
    struct stat built {};
    if (::stat(tmpLib.c_str(), &built) != 0 || !S_ISREG(built.st_mode) || built.st_size == 0) {
        removeTemp();
        support::DiagnosticList fail =
            errorList("the compiler '" + options.compiler + "' exited 0 but wrote no library (is it a C++ compiler?)",
                      {"command: " + commandLine(spec.argv)});
        return fail;
    }
    fs::rename(tmpLib, lib.path, ec);
    if (ec) {
        removeTemp();
        return errorList("cannot move the compiled library into '" + lib.path + "'" + errorCodeSuffix(ec));
    }
    if (diags.empty()) return lib;
    return support::Expected<CompiledLibrary>(std::move(lib), std::move(diags));
}

support::Expected<std::int64_t> clearKernelCache(const std::string& dir) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) return std::int64_t{0};
    auto isKey = [](const std::string& s) {
        if (s.size() != 32) return false;
        for (char c : s)
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
        return true;
    };
    std::int64_t removed = 0;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        const std::string name = it->path().filename().string();
        const std::size_t dot = name.find('.');
        if (dot == std::string::npos || !isKey(name.substr(0, dot))) continue;
        const std::string rest = name.substr(dot);
        const bool ours = rest == ".so" || rest == ".cpp" || rest.rfind(".so.tmp-", 0) == 0 || rest.rfind(".cpp.tmp-", 0) == 0;
        if (!ours) continue;
        std::error_code rmEc;
        if (fs::remove(it->path(), rmEc)) ++removed;
    }
    if (ec) return errorList("cannot list the kernel cache directory '" + dir + "': " + ec.message());
    return removed;
}

}  // namespace tessera::runtime
