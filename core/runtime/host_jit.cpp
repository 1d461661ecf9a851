#include "core/runtime/host_jit.h"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

#include "core/runtime/subprocess.h"
#include "core/support/atomic_file.h"
#include "core/support/hash.h"

namespace tessera::runtime {

namespace fs = std::filesystem;

namespace {

support::DiagnosticList errorList(const std::string& message, std::vector<std::string> notes = {},
                                  support::DiagnosticCode code = support::DiagnosticCode::None) {
    support::DiagnosticList d;
    support::Diagnostic e;
    e.message = message;
    e.notes = std::move(notes);
    e.code = code;
    d.add(std::move(e));
    return d;
}

/// An error of the compiler itself (missing, cannot start, failed): DiagnosticCode::CompilerFailed.
support::DiagnosticList compilerError(const std::string& message, std::vector<std::string> notes = {}) {
    return errorList(message, std::move(notes), support::DiagnosticCode::CompilerFailed);
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
    if (compiler.empty()) return compilerError(notFoundMessage(compiler));
    SpawnSpec spec;
    spec.argv = {compiler, "--version"};
    spec.env = {{"LC_ALL", "C"}, {"LANG", "C"}};
    spec.killWithParent = true;
    ProcessOutput out;
    std::string error;
    const int rc = runProcess(spec, cancel, out, error);
    if (rc == ENOENT) return compilerError(notFoundMessage(compiler));
    if (rc != 0) return compilerError("host compiler '" + compiler + "' cannot be started: " + std::strerror(rc));
    if (out.cancelled) return errorList("compilation cancelled");
    const auto lines = splitLines(out.output);
    if (!out.status.exited || out.status.code != 0 || lines.empty() || lines.front().empty())
        return compilerError("host compiler '" + compiler + "' did not answer --version",
                         lines.empty() ? std::vector<std::string>{} : std::vector<std::string>{lines.front()});
    std::lock_guard<std::mutex> lock(g_versionMutex);
    g_versions[compiler] = lines.front();
    return lines.front();
}

namespace {

/// Start of every line of a text (offsets of line starts), for line numbers and quoted lines.
class LineIndex {
public:
    explicit LineIndex(const std::string& text) : m_text(text) {
        m_starts.push_back(0);
        for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1))
            if (at + 1 < text.size()) m_starts.push_back(at + 1);
    }
    /// 1-based line holding byte `offset`.
    int lineOf(std::size_t offset) const {
        return static_cast<int>(std::upper_bound(m_starts.begin(), m_starts.end(), offset) - m_starts.begin());
    }
    /// Text of 1-based line `n` without its newline, or nullopt when out of range.
    std::optional<std::string> line(int n) const {
        if (n < 1 || static_cast<std::size_t>(n) > m_starts.size()) return std::nullopt;
        const std::size_t b = m_starts[static_cast<std::size_t>(n - 1)];
        std::size_t e = m_text.find('\n', b);
        if (e == std::string::npos) e = m_text.size();
        if (e > b && m_text[e - 1] == '\r') --e;
        return m_text.substr(b, e - b);
    }

private:
    const std::string& m_text;
    std::vector<std::size_t> m_starts;
};

/// Which lines of a compiled file come from which lines of the module (identity when empty).
struct LineMap {
    struct Range {
        int fileFirst = 1;
        int moduleFirst = 1;
        int count = 0;
    };
    std::vector<Range> ranges;  ///< ascending fileFirst
    /// The module line of line `line` of the file, 0 when it is none of the module's.
    int toModule(int line) const {
        if (ranges.empty()) return line;
        for (const auto& r : ranges)
            if (line >= r.fileFirst && line < r.fileFirst + r.count) return r.moduleFirst + (line - r.fileFirst);
        return 0;
    }
};

/// One compiler run and what it should be reported as.
struct CompilerRun {
    std::vector<std::string> argv;
    std::string compiler;       ///< for messages (options.compiler)
    std::string generatedPath;  ///< the file whose messages are positions in the module
    const LineMap* lines = nullptr;
    const LineIndex* module = nullptr;
    std::string shownName;      ///< the module's name in diagnostics
    std::string failure;        ///< "compiling the kernel module" / "linking the kernel module"
    std::string product;        ///< "library" / "object file": what must exist afterwards
    std::string outputPath;     ///< the (temporary) file the compiler writes
};

struct CompilerOutcome {
    bool ok = false;
    bool cancelled = false;
    support::DiagnosticList diagnostics;  ///< warnings when ok, else the errors
};

/// Runs the compiler (guarded: see host_jit.h) and turns its output into diagnostics as the file
/// comment of host_jit.h describes. Removes `outputPath` unless it succeeded.
CompilerOutcome runCompiler(const CompilerRun& run, const support::CancelToken* cancel) {
    CompilerOutcome result;
    SpawnSpec spec;
    spec.argv = run.argv;
    spec.env = {{"LC_ALL", "C"}, {"LANG", "C"}};
    spec.killWithParent = true;
    ProcessOutput out;
    std::string error;
    std::error_code ec;
    const int rc = runProcess(spec, cancel, out, error);
    auto removeOutput = [&] { fs::remove(run.outputPath, ec); };
    if (rc == ENOENT) {
        result.diagnostics = compilerError(notFoundMessage(run.compiler));
        return result;
    }
    if (rc != 0) {
        result.diagnostics = compilerError("host compiler '" + run.compiler + "' cannot be started: " + std::strerror(rc));
        return result;
    }
    if (out.cancelled) {
        removeOutput();
        result.cancelled = true;
        result.diagnostics = errorList("compilation cancelled");
        return result;
    }

    // Map the compiler's messages onto the generated source.
    const bool succeeded = out.status.exited && out.status.code == 0;
    support::DiagnosticList diags;
    const std::vector<std::string> outputLines = splitLines(out.output);
    std::vector<bool> shown(outputLines.size(), false);  // lines that became a diagnostic
    int errorLines = 0;
    int errorsLeftOut = 0;
    bool sourceErrors = false;  // an error with a position (in the generated source or a header)
    for (std::size_t i = 0; i < outputLines.size(); ++i) {
        CompilerMessage m;
        if (!parseCompilerLine(outputLines[i], m)) continue;
        const bool generated = !run.generatedPath.empty() && m.file == run.generatedPath;
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
        int line = m.line;
        if (generated && run.lines) line = m.line > 0 ? run.lines->toModule(m.line) : 0;
        d.file = generated ? run.shownName : m.file;
        d.begin = {line, line > 0 ? m.column : 0};
        d.end = d.begin;
        d.message = m.message;
        if (d.severity == support::Severity::Error) d.code = support::DiagnosticCode::CompilerFailed;
        if (generated && line >= 1 && run.module)
            if (auto text = run.module->line(line)) d.notes.push_back("line " + std::to_string(line) + ": " + *text);
        diags.add(std::move(d));
    }

    if (!succeeded) {
        removeOutput();
        // The summary: how the compiler ended and the exact command, so that it can be rerun by
        // hand. Without an error at a source position (bad flags, a failed link) the errors alone
        // rarely say enough: the last lines of the output that are not already errors follow.
        const std::string how = out.status.exited ? "exited with status " + std::to_string(out.status.code)
                                                  : "was killed by " + describeSignal(out.status.signal);
        support::Diagnostic summary;
        summary.message = run.failure + " failed (" + run.compiler + " " + how + ")";
        summary.code = support::DiagnosticCode::CompilerFailed;
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
        if (sourceErrors) {
            result.diagnostics = std::move(diags);
            result.diagnostics.add(std::move(summary));
        } else {
            result.diagnostics.add(std::move(summary));
            result.diagnostics.append(diags);
        }
        return result;
    }
    // A "compiler" that succeeds without writing anything (e.g. --cxx /bin/true) is not one.
    struct stat built {};
    if (::stat(run.outputPath.c_str(), &built) != 0 || !S_ISREG(built.st_mode) || built.st_size == 0) {
        removeOutput();
        result.diagnostics = compilerError("the compiler '" + run.compiler + "' exited 0 but wrote no " + run.product +
                                               " (is it a C++ compiler?)",
                                           {"command: " + commandLine(spec.argv)});
        return result;
    }
    result.ok = true;
    result.diagnostics = std::move(diags);
    return result;
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

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
        lib.unitsCached = 1;
        return lib;
    }

    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return errorList("cannot create the kernel cache directory '" + dir.string() + "': " + ec.message());
    std::string error;
    if (!support::writeFileAtomically(lib.sourcePath, source, error)) return errorList(error);

    const std::string tmpLib = support::temporaryNameFor(lib.path);
    const LineIndex lines(source);
    CompilerRun run;
    run.argv.push_back(options.compiler);
    for (const auto& f : options.flags) run.argv.push_back(f);
    run.argv.push_back("-fdiagnostics-color=never");
    run.argv.insert(run.argv.end(), {"-o", tmpLib, lib.sourcePath});
    run.compiler = options.compiler;
    run.generatedPath = lib.sourcePath;
    run.module = &lines;
    run.shownName = options.sourceName.empty() ? lib.sourcePath : options.sourceName;
    run.failure = "compiling the kernel module";
    run.product = "library";
    run.outputPath = tmpLib;

    const auto t0 = std::chrono::steady_clock::now();
    CompilerOutcome outcome = runCompiler(run, cancel);
    lib.compileSeconds = secondsSince(t0);
    if (!outcome.ok) return std::move(outcome.diagnostics);
    fs::rename(tmpLib, lib.path, ec);
    if (ec) {
        fs::remove(tmpLib, ec);
        return errorList("cannot move the compiled library into '" + lib.path + "'" + errorCodeSuffix(ec));
    }
    lib.unitsCompiled = 1;
    if (outcome.diagnostics.empty()) return lib;
    return support::Expected<CompiledLibrary>(std::move(lib), std::move(outcome.diagnostics));
}

namespace {

/// A stretch of the module source that goes into a unit.
struct Segment {
    std::size_t offset = 0;
    std::size_t size = 0;
};

struct UnitPlan {
    std::vector<Segment> segments;  ///< in module order
    bool reducedOpt = false;
    std::size_t bytes = 0;
};

std::uint64_t nameHash(const std::string& name) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bits
    for (unsigned char c : name) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

/// Checks the layout's rules; "" when it keeps them.
std::string layoutProblem(const std::string& source, const ModuleLayout& layout) {
    if (layout.sharedPreludeBytes > source.size()) return "the prelude ends after the source";
    if (layout.sharedPreludeBytes > 0 && source[layout.sharedPreludeBytes - 1] != '\n')
        return "the prelude does not end at a line end";
    std::size_t at = layout.sharedPreludeBytes;
    for (std::size_t i = 0; i < layout.pieces.size(); ++i) {
        const ModulePiece& p = layout.pieces[i];
        if (p.offset < at || p.offset > source.size() || p.size > source.size() - p.offset)
            return "piece " + std::to_string(i) + " ('" + p.name + "') overlaps another, the prelude or the end";
        if (p.offset > 0 && source[p.offset - 1] != '\n')
            return "piece " + std::to_string(i) + " ('" + p.name + "') does not start a line";
        at = p.offset + p.size;
    }
    return {};
}

/// Groups the pieces into units (see compileHostModule in host_jit.h). Module-level text (gaps
/// between pieces that hold more than white space) goes with the first unit of the reduced-opt
/// stream when there is one (it is a few trivial functions), else of the other.
std::vector<UnitPlan> planUnits(const std::string& source, const ModuleLayout& layout, std::size_t unitBytes) {
    std::size_t total = 0;
    for (const auto& p : layout.pieces) total += p.size;
    const std::size_t average = std::max<std::size_t>(1, total / std::max<std::size_t>(1, layout.pieces.size()));
    const std::size_t minBytes = unitBytes / 2;
    const std::size_t maxBytes = 3 * unitBytes;
    // One name in `period` ends a unit once it holds minBytes: a unit holds minBytes plus about
    // `period` pieces, about unitBytes. A power of two (the nearest), so that the small changes of
    // the average an edit makes do not move every boundary.
    const double want = static_cast<double>(unitBytes) / (2.0 * static_cast<double>(average));
    std::uint64_t period = 1;
    while (static_cast<double>(period * 2) <= want * 1.4142) period *= 2;

    std::vector<Segment> glue;
    std::size_t at = layout.sharedPreludeBytes;
    auto addGap = [&](std::size_t end) {
        if (end > at && source.find_first_not_of(" \t\r\n", at) < end) glue.push_back({at, end - at});
    };
    for (const auto& p : layout.pieces) {
        addGap(p.offset);
        at = p.offset + p.size;
    }
    addGap(source.size());

    std::vector<UnitPlan> units;
    for (const bool reduced : {true, false}) {
        UnitPlan open;
        open.reducedOpt = reduced;
        for (const auto& p : layout.pieces) {
            if (p.reducedOpt != reduced || p.size == 0) continue;
            open.segments.push_back({p.offset, p.size});
            open.bytes += p.size;
            const bool boundary = nameHash(p.name) % period == period - 1;
            if ((boundary && open.bytes >= minBytes) || open.bytes >= maxBytes) {
                units.push_back(std::move(open));
                open = UnitPlan{};
                open.reducedOpt = reduced;
            }
        }
        if (!open.segments.empty()) units.push_back(std::move(open));
    }
    if (units.empty()) units.push_back(UnitPlan{});
    if (!glue.empty()) {
        UnitPlan& first = units.front();  // the reduced-opt stream comes first
        for (const auto& g : glue) first.bytes += g.size;
        first.segments.insert(first.segments.end(), glue.begin(), glue.end());
        std::sort(first.segments.begin(), first.segments.end(),
                  [](const Segment& a, const Segment& b) { return a.offset < b.offset; });
        first.reducedOpt = first.reducedOpt && first.segments.size() > glue.size();
    }
    return units;
}

/// `flags` for compiling one unit to an object: without -shared, with -O2/-O3 replaced by
/// `optFlag` when given.
std::vector<std::string> objectFlags(const std::vector<std::string>& flags, const std::string& optFlag) {
    std::vector<std::string> out;
    for (const auto& f : flags) {
        if (f == "-shared") continue;
        out.push_back(!optFlag.empty() && (f == "-O2" || f == "-O3") ? optFlag : f);
    }
    return out;
}


/// One unit ready to compile.
struct UnitJob {
    std::string key;
    std::string text;
    LineMap lines;
    std::vector<std::string> flags;
    std::string sourcePath, objectPath;
    bool reducedOpt = false;
};

}  // namespace

support::Expected<CompiledLibrary> compileHostModule(const std::string& source, const ModuleLayout& layout,
                                                     const HostCompilerOptions& options,
                                                     const support::CancelToken* cancel, const UnitProgress& progress) {
    if (const std::string problem = layoutProblem(source, layout); !problem.empty())
        return errorList("invalid module layout: " + problem);
    std::size_t total = 0;
    for (const auto& p : layout.pieces) total += p.size;
    const std::size_t unitBytes = options.unitBytes ? options.unitBytes : kDefaultUnitBytes;
    const std::vector<UnitPlan> plans =
        layout.pieces.empty() || total < unitBytes ? std::vector<UnitPlan>{} : planUnits(source, layout, unitBytes);
    if (plans.size() < 2) {
        auto one = compileHostLibrary(source, options, cancel);
        if (one.ok() && progress) progress(1, 1);
        return one;
    }

    const auto t0 = std::chrono::steady_clock::now();
    auto version = hostCompilerVersion(options.compiler, cancel);
    if (!version) return version.diagnostics();
    CompiledLibrary lib;
    lib.compilerVersion = *version;
    const fs::path dir = options.cacheDir.empty() ? fs::path(defaultKernelCacheDir()) : fs::path(options.cacheDir);

    // The units: the shared prelude, then their segments; keys from their own text and flags.
    const LineIndex moduleLines(source);
    const std::string prelude = source.substr(0, layout.sharedPreludeBytes);
    const int preludeLines = static_cast<int>(std::count(prelude.begin(), prelude.end(), '\n'));
    std::vector<UnitJob> jobs(plans.size());
    support::Hasher linkHash;
    linkHash.field("tessera-host-jit-link-1").field(lib.compilerVersion);
    for (const auto& f : options.flags) linkHash.field(f);
    for (std::size_t u = 0; u < plans.size(); ++u) {
        UnitJob& job = jobs[u];
        job.reducedOpt = plans[u].reducedOpt && !options.reducedOptFlag.empty();
        job.flags = objectFlags(options.flags, job.reducedOpt ? options.reducedOptFlag : std::string());
        job.reducedOpt = job.reducedOpt && job.flags != objectFlags(options.flags, {});
        job.text.reserve(prelude.size() + plans[u].bytes + plans[u].segments.size());
        job.text = prelude;
        if (preludeLines > 0) job.lines.ranges.push_back({1, 1, preludeLines});
        int fileLine = preludeLines + 1;
        for (const auto& seg : plans[u].segments) {
            job.text.append(source, seg.offset, seg.size);
            int count = static_cast<int>(std::count(source.begin() + static_cast<std::ptrdiff_t>(seg.offset),
                                                    source.begin() + static_cast<std::ptrdiff_t>(seg.offset + seg.size), '\n'));
            if (seg.size > 0 && source[seg.offset + seg.size - 1] != '\n') {
                job.text += '\n';
                ++count;
            }
            job.lines.ranges.push_back({fileLine, moduleLines.lineOf(seg.offset), count});
            fileLine += count;
        }
        support::Hasher h;
        h.field("tessera-host-jit-unit-1").field(job.text).field(lib.compilerVersion);
        for (const auto& f : job.flags) h.field(f);
        job.key = h.hex();
        job.sourcePath = (dir / (job.key + ".cpp")).string();
        job.objectPath = (dir / (job.key + ".o")).string();
        linkHash.field(job.key);
        if (job.reducedOpt) ++lib.unitsReducedOpt;
    }
    lib.units = static_cast<int>(jobs.size());
    lib.key = linkHash.hex();
    lib.path = (dir / (lib.key + ".so")).string();
    lib.sourcePath = (dir / (lib.key + ".cpp")).string();
    const int unitCount = lib.units;

    struct stat st {};
    if (::stat(lib.path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        lib.cacheHit = true;
        lib.unitsCached = unitCount;
        if (progress) progress(unitCount, unitCount);
        return lib;
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return errorList("cannot create the kernel cache directory '" + dir.string() + "': " + ec.message());
    std::string error;
    // The whole module, as diagnostics name it when no sourceName is given.
    if (!support::writeFileAtomically(lib.sourcePath, source, error)) return errorList(error);
    const std::string shownName = options.sourceName.empty() ? lib.sourcePath : options.sourceName;

    std::vector<std::size_t> pending;
    for (std::size_t u = 0; u < jobs.size(); ++u) {
        if (::stat(jobs[u].objectPath.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
            ++lib.unitsCached;
            continue;
        }
        if (!support::writeFileAtomically(jobs[u].sourcePath, jobs[u].text, error)) return errorList(error);
        pending.push_back(u);
    }
    // Largest first: the last unit to start is a small one, so the cores finish together.
    std::stable_sort(pending.begin(), pending.end(),
                     [&](std::size_t a, std::size_t b) { return jobs[a].text.size() > jobs[b].text.size(); });
    int done = lib.unitsCached;
    if (progress) progress(done, unitCount);

    // Workers, one per running compiler. `stop` kills every running compiler (cancel or a failed
    // unit); outcomes are reported to this thread, which relays progress and the caller's cancel.
    int workers = options.jobs > 0 ? options.jobs : availableCores();
    workers = std::clamp(workers, 1, std::max(1, static_cast<int>(pending.size())));
    support::CancelToken stop;
    std::mutex mutex;
    std::condition_variable changed;
    std::size_t next = 0;
    int finished = 0, running = workers;
    bool failed = false, cancelled = false;
    std::vector<support::DiagnosticList> unitDiagnostics(jobs.size());
    support::DiagnosticList failure;
    auto work = [&] {
        for (;;) {
            std::size_t u;
            {
                std::lock_guard<std::mutex> lock(mutex);
                if (next >= pending.size() || failed || stop.isCancelled()) break;
                u = pending[next++];
            }
            const UnitJob& job = jobs[u];
            const std::string tmpObject = support::temporaryNameFor(job.objectPath);
            CompilerRun run;
            run.argv.push_back(options.compiler);
            run.argv.insert(run.argv.end(), job.flags.begin(), job.flags.end());
            run.argv.push_back("-fdiagnostics-color=never");
            run.argv.insert(run.argv.end(), {"-c", "-o", tmpObject, job.sourcePath});
            run.compiler = options.compiler;
            run.generatedPath = job.sourcePath;
            run.lines = &job.lines;
            run.module = &moduleLines;
            run.shownName = shownName;
            run.failure = "compiling the kernel module";
            run.product = "object file";
            run.outputPath = tmpObject;
            CompilerOutcome outcome = runCompiler(run, &stop);
            std::error_code renameEc;
            if (outcome.ok) {
                fs::rename(tmpObject, job.objectPath, renameEc);
                if (renameEc) {
                    fs::remove(tmpObject, renameEc);
                    outcome.ok = false;
                    outcome.diagnostics =
                        errorList("cannot move the compiled object into '" + job.objectPath + "'" + errorCodeSuffix(renameEc));
                }
            }
            std::lock_guard<std::mutex> lock(mutex);
            ++finished;
            if (outcome.ok) {
                unitDiagnostics[u] = std::move(outcome.diagnostics);
            } else if (!outcome.cancelled && !failed) {
                failed = true;
                failure = std::move(outcome.diagnostics);
                stop.cancel();
            }
            changed.notify_all();
        }
        std::lock_guard<std::mutex> lock(mutex);
        --running;
        changed.notify_all();
    };
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(workers));
    for (int w = 0; w < workers; ++w) {
        try {
            threads.emplace_back(work);
        } catch (const std::system_error&) {  // no more threads: those started do the work
            std::lock_guard<std::mutex> lock(mutex);
            running -= workers - w;
            break;
        }
    }
    if (threads.empty()) {  // not even one: this thread compiles, without relaying progress
        running = 1;
        work();
    }
    {
        std::unique_lock<std::mutex> lock(mutex);
        int reported = 0;
        while (running > 0) {
            changed.wait_for(lock, std::chrono::milliseconds(50));
            if (cancel && cancel->isCancelled() && !stop.isCancelled()) {
                cancelled = true;
                stop.cancel();
            }
            if (progress && finished > reported && !failed && !cancelled) {
                reported = finished;
                const int now = done + finished;
                lock.unlock();
                progress(now, unitCount);  // without the lock: a slow sink must not stall the workers
                lock.lock();
            }
        }
    }
    for (auto& t : threads) t.join();
    if (cancelled) return errorList("compilation cancelled");
    if (failed) return failure;
    lib.unitsCompiled = static_cast<int>(pending.size());

    // Link the objects into the library.
    const std::string tmpLib = support::temporaryNameFor(lib.path);
    CompilerRun link;
    link.argv.push_back(options.compiler);
    link.argv.insert(link.argv.end(), options.flags.begin(), options.flags.end());
    link.argv.push_back("-fdiagnostics-color=never");
    link.argv.insert(link.argv.end(), {"-o", tmpLib});
    for (const auto& job : jobs) link.argv.push_back(job.objectPath);
    link.compiler = options.compiler;
    link.failure = "linking the kernel module";
    link.product = "library";
    link.outputPath = tmpLib;
    CompilerOutcome linked = runCompiler(link, cancel);
    if (!linked.ok) return std::move(linked.diagnostics);
    fs::rename(tmpLib, lib.path, ec);
    if (ec) {
        fs::remove(tmpLib, ec);
        return errorList("cannot move the compiled library into '" + lib.path + "'" + errorCodeSuffix(ec));
    }
    lib.linked = true;
    lib.compileSeconds = secondsSince(t0);
    support::DiagnosticList warnings;
    for (const auto& d : unitDiagnostics) warnings.append(d);
    warnings.append(linked.diagnostics);
    if (warnings.empty()) return lib;
    return support::Expected<CompiledLibrary>(std::move(lib), std::move(warnings));
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
        const bool ours = rest == ".so" || rest == ".cpp" || rest == ".o" || rest.rfind(".so.tmp-", 0) == 0 ||
                          rest.rfind(".cpp.tmp-", 0) == 0 || rest.rfind(".o.tmp-", 0) == 0;
        if (!ours) continue;
        std::error_code rmEc;
        if (fs::remove(it->path(), rmEc)) ++removed;
    }
    if (ec) return errorList("cannot list the kernel cache directory '" + dir + "': " + ec.message());
    return removed;
}

int availableCores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace tessera::runtime
