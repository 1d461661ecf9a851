#include "core/runtime/cuda/nvrtc.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include "core/runtime/subprocess.h"
#include "core/support/atomic_file.h"
#include "core/support/hash.h"

namespace tessera::runtime::cuda {

namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------
// The NVRTC C API, declared here (nvrtc.h is not included so that building needs no toolkit).
// nvrtcResult is a C enum (int-sized); nvrtcProgram is an opaque pointer.

using NvrtcResult = int;
constexpr NvrtcResult kNvrtcSuccess = 0;
constexpr NvrtcResult kNvrtcErrorCompilation = 6;
constexpr NvrtcResult kNvrtcErrorCancelled = 16;
struct NvrtcProgramImpl;
using NvrtcProgram = NvrtcProgramImpl*;

using FnGetErrorString = const char* (*)(NvrtcResult);
using FnVersion = NvrtcResult (*)(int*, int*);
using FnGetNumSupportedArchs = NvrtcResult (*)(int*);
using FnGetSupportedArchs = NvrtcResult (*)(int*);
using FnCreateProgram = NvrtcResult (*)(NvrtcProgram*, const char*, const char*, int, const char* const*,
                                        const char* const*);
using FnDestroyProgram = NvrtcResult (*)(NvrtcProgram*);
using FnCompileProgram = NvrtcResult (*)(NvrtcProgram, int, const char* const*);
using FnGetSize = NvrtcResult (*)(NvrtcProgram, std::size_t*);
using FnGetBytes = NvrtcResult (*)(NvrtcProgram, char*);
using FnSetFlowCallback = NvrtcResult (*)(NvrtcProgram, int (*)(void*, void*), void*);

/// The loaded library: function pointers and what it reported. Immutable once built; shared by
/// every compile (the handle is never closed).
struct Library {
    FnGetErrorString getErrorString = nullptr;
    FnVersion version = nullptr;
    FnGetNumSupportedArchs getNumSupportedArchs = nullptr;
    FnGetSupportedArchs getSupportedArchs = nullptr;
    FnCreateProgram createProgram = nullptr;
    FnDestroyProgram destroyProgram = nullptr;
    FnCompileProgram compileProgram = nullptr;
    FnGetSize getPtxSize = nullptr;
    FnGetBytes getPtx = nullptr;
    FnGetSize getCubinSize = nullptr;
    FnGetBytes getCubin = nullptr;
    FnGetSize getLogSize = nullptr;
    FnGetBytes getLog = nullptr;
    FnSetFlowCallback setFlowCallback = nullptr;  // optional (CUDA 12.8+)
    NvrtcInfo info;

    std::string errorName(NvrtcResult r) const {
        const char* s = getErrorString ? getErrorString(r) : nullptr;
        return s ? std::string(s) : "NVRTC error " + std::to_string(r);
    }
};

/// The outcome of the one load attempt: a library, or the diagnostics saying why there is none.
struct LoadResult {
    std::shared_ptr<const Library> library;
    support::DiagnosticList error;
};

support::DiagnosticList errorList(const std::string& message, std::vector<std::string> notes = {}) {
    support::DiagnosticList d;
    support::Diagnostic e;
    e.message = message;
    e.notes = std::move(notes);
    d.add(std::move(e));
    return d;
}

std::string envOr(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : std::string();
}

/// The default candidates, in the order documented in nvrtc.h.
std::vector<std::string> defaultCandidates() {
    std::vector<std::string> dirs;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
        const std::string root = envOr(var);
        if (root.empty()) continue;
        dirs.push_back((fs::path(root) / "lib64").string());
        dirs.push_back((fs::path(root) / "lib").string());
    }
    const std::vector<std::string> fallbackDirs = {"/usr/local/cuda/lib64", "/usr/local/cuda/lib"};
    std::vector<std::string> out;
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) {
        for (const auto& d : dirs) out.push_back((fs::path(d) / name).string());
        out.emplace_back(name);
        for (const auto& d : fallbackDirs) out.push_back((fs::path(d) / name).string());
    }
    // The same library reached twice (CUDA_HOME=/usr/local/cuda) is tried once.
    std::vector<std::string> unique;
    for (auto& c : out)
        if (std::find(unique.begin(), unique.end(), c) == unique.end()) unique.push_back(std::move(c));
    return unique;
}

template <typename Fn>
bool lookUp(void* handle, const char* name, Fn& fn, std::vector<std::string>& missing) {
    fn = reinterpret_cast<Fn>(::dlsym(handle, name));
    if (!fn) missing.emplace_back(name);
    return fn != nullptr;
}

/// Opens one candidate and fills `lib`; false with `why` when it is not usable.
bool openCandidate(const std::string& candidate, Library& lib, std::string& why) {
    ::dlerror();
    void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* e = ::dlerror();
        why = e ? e : candidate + ": cannot be loaded";
        return false;
    }
    std::vector<std::string> missing;
    lookUp(handle, "nvrtcGetErrorString", lib.getErrorString, missing);
    lookUp(handle, "nvrtcVersion", lib.version, missing);
    lookUp(handle, "nvrtcGetNumSupportedArchs", lib.getNumSupportedArchs, missing);
    lookUp(handle, "nvrtcGetSupportedArchs", lib.getSupportedArchs, missing);
    lookUp(handle, "nvrtcCreateProgram", lib.createProgram, missing);
    lookUp(handle, "nvrtcDestroyProgram", lib.destroyProgram, missing);
    lookUp(handle, "nvrtcCompileProgram", lib.compileProgram, missing);
    lookUp(handle, "nvrtcGetPTXSize", lib.getPtxSize, missing);
    lookUp(handle, "nvrtcGetPTX", lib.getPtx, missing);
    lookUp(handle, "nvrtcGetCUBINSize", lib.getCubinSize, missing);
    lookUp(handle, "nvrtcGetCUBIN", lib.getCubin, missing);
    lookUp(handle, "nvrtcGetProgramLogSize", lib.getLogSize, missing);
    lookUp(handle, "nvrtcGetProgramLog", lib.getLog, missing);
    lib.setFlowCallback = reinterpret_cast<FnSetFlowCallback>(::dlsym(handle, "nvrtcSetFlowCallback"));
    if (!missing.empty()) {
        std::string names;
        for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
        why = candidate + ": lacks " + names + " (NVRTC from CUDA 11.2 or newer is needed)";
        // Left open: unloading a library that may have run initialisers is not worth the risk.
        return false;
    }
    int major = 0, minor = 0;
    if (lib.version(&major, &minor) != kNvrtcSuccess) {
        why = candidate + ": nvrtcVersion failed";
        return false;
    }
    lib.info.major = major;
    lib.info.minor = minor;
    int count = 0;
    if (lib.getNumSupportedArchs(&count) == kNvrtcSuccess && count > 0 && count < 4096) {
        lib.info.supportedArchs.resize(static_cast<std::size_t>(count));
        if (lib.getSupportedArchs(lib.info.supportedArchs.data()) != kNvrtcSuccess) lib.info.supportedArchs.clear();
        std::sort(lib.info.supportedArchs.begin(), lib.info.supportedArchs.end());
    }
    Dl_info where{};
    if (::dladdr(reinterpret_cast<void*>(lib.version), &where) != 0 && where.dli_fname && *where.dli_fname) {
        std::error_code ec;
        const fs::path p = fs::absolute(where.dli_fname, ec);
        lib.info.path = ec ? std::string(where.dli_fname) : p.lexically_normal().string();
    } else {
        lib.info.path = candidate;
    }
    lib.info.interruptible = lib.setFlowCallback != nullptr;
    return true;
}

LoadResult loadFrom(const std::vector<std::string>& candidates) {
    LoadResult result;
    std::vector<std::string> tried;
    std::string headline;  // dlerror of the bare "libnvrtc.so.13", else of the first candidate
    for (const auto& c : candidates) {
        auto lib = std::make_shared<Library>();
        std::string why;
        if (openCandidate(c, *lib, why)) {
            result.library = std::move(lib);
            return result;
        }
        tried.push_back(why);
        if (c == "libnvrtc.so.13" || headline.empty()) headline = why;
    }
    if (headline.empty()) headline = "no candidate library";
    std::string triedNote = "tried:";
    for (const auto& t : tried) triedNote += "\n  " + t;
    result.error = errorList("NVRTC not found (" + headline + "): install the CUDA toolkit or set CUDA_HOME",
                             {triedNote});
    result.error.items().front().code = support::DiagnosticCode::CompilerFailed;
    return result;
}

std::mutex g_loadMutex;
std::shared_ptr<const LoadResult> g_load;       // null until the first attempt
std::vector<std::string> g_testCandidates;      // empty: the default search

std::shared_ptr<const LoadResult> loaded() {
    std::lock_guard<std::mutex> lock(g_loadMutex);
    if (!g_load)
        g_load = std::make_shared<const LoadResult>(
            loadFrom(g_testCandidates.empty() ? defaultCandidates() : g_testCandidates));
    return g_load;
}

// ---------------------------------------------------------------------------------------------
// Files

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(line);
    }
    return lines;
}

std::string errnoSuffix(int err) { return err != 0 ? std::string(": ") + std::strerror(err) : std::string(); }

bool readFile(const std::string& path, std::string& out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    std::ostringstream s;
    s << f.rdbuf();
    if (f.bad()) return false;
    out = s.str();
    return true;
}

bool isRegularFile(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// ---------------------------------------------------------------------------------------------
// The NVRTC log

/// One `file(LINE): kind: message` header line of the log.
struct LogMessage {
    std::string file;
    int line = 0;
    support::Severity severity = support::Severity::Error;
    std::string message;
};

bool parseLogLine(const std::string& text, LogMessage& out) {
    // Find "(<digits>): " — the file name itself may contain parentheses, so take the first match
    // that is followed by a known kind.
    for (std::size_t open = text.find('('); open != std::string::npos; open = text.find('(', open + 1)) {
        std::size_t i = open + 1;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
        if (i == open + 1 || text.compare(i, 3, "): ") != 0) continue;
        const std::string rest = text.substr(i + 3);
        struct Kind {
            const char* word;
            support::Severity severity;
        };
        static const Kind kKinds[] = {{"catastrophic error", support::Severity::Error},
                                      {"fatal error", support::Severity::Error},
                                      {"error", support::Severity::Error},
                                      {"warning", support::Severity::Warning}};
        for (const auto& k : kKinds) {
            const std::size_t n = std::strlen(k.word);
            if (rest.compare(0, n, k.word) != 0) continue;
            // Optional " #177-D" before the colon.
            std::size_t colon = rest.find(": ", n);
            if (colon == std::string::npos) continue;
            std::string tag = rest.substr(n, colon - n);
            if (!tag.empty() && (tag.size() < 2 || tag[0] != ' ' || tag[1] != '#')) continue;
            out.file = text.substr(0, open);
            out.line = std::atoi(text.substr(open + 1, i - open - 1).c_str());
            out.severity = k.severity;
            out.message = rest.substr(colon + 2);
            if (!tag.empty()) out.message += " [" + tag.substr(1) + "]";
            return true;
        }
    }
    return false;
}

std::string trim(const std::string& s) {
    const std::size_t b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return {};
    const std::size_t e = s.find_last_not_of(" \t");
    return s.substr(b, e - b + 1);
}

/// A caret line: blanks and exactly one '^'. Returns the caret's index, or npos.
std::size_t caretIndex(const std::string& s) {
    const std::size_t at = s.find('^');
    if (at == std::string::npos || s.find('^', at + 1) != std::string::npos) return std::string::npos;
    for (std::size_t i = 0; i < s.size(); ++i)
        if (i != at && s[i] != ' ' && s[i] != '\t') return std::string::npos;
    return at;
}

constexpr int kMaxErrors = 20;
constexpr std::size_t kLogTailLines = 12;
/// NVRTC indents the quoted source line and the caret line by this many spaces.
constexpr std::size_t kQuoteIndent = 2;

struct ParsedLog {
    support::DiagnosticList diags;  // errors (at most kMaxErrors) and warnings, in log order
    bool positionedErrors = false;
    int errorsLeftOut = 0;
    std::vector<std::string> unparsed;  // non-empty lines that belong to no message
};

ParsedLog parseLog(const std::string& log, const std::string& sourceName, const std::vector<std::string>& sourceLines) {
    ParsedLog out;
    const auto lines = splitLines(log);
    int errors = 0;
    for (std::size_t i = 0; i < lines.size();) {
        LogMessage m;
        if (!parseLogLine(lines[i], m)) {
            if (!trim(lines[i]).empty()) out.unparsed.push_back(lines[i]);
            ++i;
            continue;
        }
        support::Diagnostic d;
        d.severity = m.severity;
        d.file = m.file;
        d.begin = {m.line, 0};
        d.message = m.message;
        const bool generated = m.file == sourceName;
        const bool haveSourceLine = generated && m.line >= 1 && static_cast<std::size_t>(m.line) <= sourceLines.size();
        const std::string quoted =
            haveSourceLine ? std::string(kQuoteIndent, ' ') + sourceLines[static_cast<std::size_t>(m.line - 1)] : "";
        if (haveSourceLine) d.notes.push_back("line " + std::to_string(m.line) + ": " + quoted.substr(kQuoteIndent));
        // The message's body: indented lines up to a blank line or the next message.
        std::size_t j = i + 1;
        for (; j < lines.size(); ++j) {
            const std::string& l = lines[j];
            LogMessage next;
            if (trim(l).empty() || parseLogLine(l, next)) break;
            if (haveSourceLine && l == quoted) continue;
            const std::size_t caret = caretIndex(l);
            if (caret != std::string::npos) {
                if (caret >= kQuoteIndent) d.begin.column = static_cast<int>(caret - kQuoteIndent) + 1;
                continue;
            }
            // A line with a caret line under it is NVRTC's quote of the source (a header's, or a
            // generated line it shortened): the "line N:" note already quotes ours.
            if (j + 1 < lines.size() && caretIndex(lines[j + 1]) != std::string::npos) continue;
            d.notes.push_back(trim(l));
        }
        i = j;
        d.end = d.begin;
        if (m.severity == support::Severity::Error) {
            if (errors >= kMaxErrors) {
                ++out.errorsLeftOut;
                continue;
            }
            ++errors;
            if (m.line > 0) out.positionedErrors = true;
        }
        out.diags.add(std::move(d));
    }
    return out;
}

std::string joinOptions(const std::vector<std::string>& options) {
    std::string s;
    for (const auto& o : options) s += (s.empty() ? "" : " ") + o;
    return s;
}

/// Polled by NVRTC during a compile (nvrtcSetFlowCallback); 1 stops the compile.
int flowCallback(void* payload, void* /*reserved*/) {
    const auto* token = static_cast<const support::CancelToken*>(payload);
    return token && token->isCancelled() ? 1 : 0;
}

/// Destroys the program on every path.
struct ProgramGuard {
    const Library& lib;
    NvrtcProgram program = nullptr;
    ~ProgramGuard() {
        if (program) lib.destroyProgram(&program);
    }
};

bool isKey(const std::string& s) {
    if (s.size() != 32) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

std::string archListText(const std::vector<int>& archs) {
    std::string s;
    for (int a : archs) s += (s.empty() ? "" : " ") + std::to_string(a);
    return s;
}

}  // namespace

// -------------------------------------------------------------------------------------------------

support::Expected<NvrtcInfo> nvrtcInfo() {
    const auto l = loaded();
    if (!l->library) return l->error;
    return l->library->info;
}

void setNvrtcSearchPathsForTesting(std::vector<std::string> candidates) {
    std::lock_guard<std::mutex> lock(g_loadMutex);
    g_testCandidates = std::move(candidates);
    g_load.reset();
}

support::Expected<CudaArch> parseCudaArch(const std::string& arch) {
    auto invalid = [&] {
        return errorList("invalid CUDA architecture '" + arch +
                         "': expected sm_XX (PTX and CUBIN) or compute_XX (PTX only), e.g. sm_90");
    };
    CudaArch a;
    a.text = arch;
    std::string rest;
    if (arch.rfind("sm_", 0) == 0) {
        a.real = true;
        rest = arch.substr(3);
    } else if (arch.rfind("compute_", 0) == 0) {
        rest = arch.substr(8);
    } else {
        return invalid();
    }
    if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
        a.suffix = rest.substr(rest.size() - 1);
        rest.pop_back();
    }
    if (rest.size() < 2 || rest.size() > 3 || rest[0] == '0') return invalid();
    for (char c : rest)
        if (c < '0' || c > '9') return invalid();
    a.number = std::atoi(rest.c_str());
    return a;
}

support::Expected<CudaArch> validateCudaArch(const std::string& arch) {
    auto parsed = parseCudaArch(arch);
    if (!parsed) return parsed;
    const auto l = loaded();
    if (!l->library) return l->error;
    const NvrtcInfo& info = l->library->info;
    if (!info.supportedArchs.empty() &&
        std::find(info.supportedArchs.begin(), info.supportedArchs.end(), parsed->number) == info.supportedArchs.end())
        return errorList("CUDA architecture '" + arch + "' is not supported by NVRTC " + std::to_string(info.major) +
                             "." + std::to_string(info.minor),
                         {"supported: " + archListText(info.supportedArchs)});
    return parsed;
}

std::string cudaArchForComputeCapability(int major, int minor) {
    return "sm_" + std::to_string(major * 10 + minor);
}

std::string defaultCudaCacheDir() {
    if (const std::string xdg = envOr("XDG_CACHE_HOME"); !xdg.empty()) return (fs::path(xdg) / "tessera" / "cuda").string();
    if (const std::string home = envOr("HOME"); !home.empty())
        return (fs::path(home) / ".cache" / "tessera" / "cuda").string();
    std::error_code ec;
    return (fs::temp_directory_path(ec) / "tessera-cuda").string();
}

support::Expected<CudaCompiled> compileCuda(const std::string& source, const CudaCompileOptions& options,
                                            const support::CancelToken* cancel) {
    if (cancel && cancel->isCancelled()) return errorList("compilation cancelled");
    const auto l = loaded();
    if (!l->library) return l->error;
    const Library& lib = *l->library;
    auto arch = validateCudaArch(options.arch);
    if (!arch) return arch.diagnostics();

    CudaCompiled out;
    out.arch = options.arch;
    out.options = {"--gpu-architecture=" + options.arch, "-default-device", "--std=c++17"};
    out.options.insert(out.options.end(), options.extraOptions.begin(), options.extraOptions.end());

    support::Hasher h;
    h.field("tessera-nvrtc-1").field(source).field(options.sourceName);
    h.field(std::to_string(lib.info.major) + "." + std::to_string(lib.info.minor));
    for (const auto& o : out.options) h.field(o);
    out.key = h.hex();

    const fs::path dir = options.cacheDir.empty() ? fs::path(defaultCudaCacheDir()) : fs::path(options.cacheDir);
    out.ptxPath = (dir / (out.key + ".ptx")).string();
    out.cubinPath = arch->real ? (dir / (out.key + ".cubin")).string() : std::string();
    const std::string sourcePath = (dir / (out.key + ".cu")).string();

    // A hit: the .ptx is written last, so with it (and the .cubin for sm_XX) the entry is complete.
    if (isRegularFile(out.ptxPath) && (!arch->real || isRegularFile(out.cubinPath))) {
        if (readFile(out.ptxPath, out.ptx) && (!arch->real || readFile(out.cubinPath, out.cubin))) {
            out.cacheHit = true;
            return out;
        }
        out.ptx.clear();
        out.cubin.clear();  // unreadable: compile again and replace the files
    }

    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return errorList("cannot create the CUDA kernel cache directory '" + dir.string() + "': " + ec.message());
    std::string error;
    if (!support::writeFileAtomically(sourcePath, source, error)) return errorList(error);

    ProgramGuard program{lib};
    NvrtcResult rc = lib.createProgram(&program.program, source.c_str(), options.sourceName.c_str(), 0, nullptr, nullptr);
    if (rc != kNvrtcSuccess) return errorList("nvrtcCreateProgram failed: " + lib.errorName(rc));
    if (cancel && lib.setFlowCallback)
        lib.setFlowCallback(program.program, &flowCallback, const_cast<support::CancelToken*>(cancel));

    std::vector<const char*> argv;
    argv.reserve(out.options.size());
    for (const auto& o : out.options) argv.push_back(o.c_str());
    const auto t0 = std::chrono::steady_clock::now();
    rc = lib.compileProgram(program.program, static_cast<int>(argv.size()), argv.data());
    out.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    std::size_t logSize = 0;
    if (lib.getLogSize(program.program, &logSize) == kNvrtcSuccess && logSize > 1) {
        out.log.assign(logSize, '\0');
        if (lib.getLog(program.program, out.log.data()) != kNvrtcSuccess) out.log.clear();
        while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
    }
    if (rc == kNvrtcErrorCancelled || (rc != kNvrtcSuccess && cancel && cancel->isCancelled()))
        return errorList("compilation cancelled");

    const ParsedLog parsed = parseLog(out.log, options.sourceName, splitLines(source));
    if (rc != kNvrtcSuccess) {
        support::Diagnostic summary;
        summary.message = "NVRTC compilation failed";
        summary.code = support::DiagnosticCode::CompilerFailed;
        if (rc != kNvrtcErrorCompilation) summary.message += " (" + lib.errorName(rc) + ")";
        summary.notes.push_back("options: " + joinOptions(out.options));
        if (!parsed.positionedErrors) {
            std::vector<std::string> tail = parsed.unparsed;
            if (tail.size() > kLogTailLines) tail.erase(tail.begin(), tail.end() - static_cast<std::ptrdiff_t>(kLogTailLines));
            for (const auto& t : tail) summary.notes.push_back("nvrtc log: " + t);
        }
        if (parsed.errorsLeftOut > 0)
            summary.notes.push_back(std::to_string(parsed.errorsLeftOut) + " more error" +
                                    (parsed.errorsLeftOut == 1 ? "" : "s") + " not shown");
        support::DiagnosticList fail;
        if (parsed.positionedErrors) {
            fail = parsed.diags;
            fail.add(std::move(summary));
        } else {
            fail.add(std::move(summary));
            fail.append(parsed.diags);
        }
        return fail;
    }

    std::size_t ptxSize = 0;
    rc = lib.getPtxSize(program.program, &ptxSize);
    if (rc == kNvrtcSuccess) {
        out.ptx.assign(ptxSize, '\0');
        rc = lib.getPtx(program.program, out.ptx.data());
    }
    if (rc != kNvrtcSuccess) return errorList("nvrtcGetPTX failed: " + lib.errorName(rc));
    while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
    if (arch->real) {
        std::size_t cubinSize = 0;
        rc = lib.getCubinSize(program.program, &cubinSize);
        if (rc == kNvrtcSuccess) {
            out.cubin.assign(cubinSize, '\0');
            rc = lib.getCubin(program.program, out.cubin.data());
        }
        if (rc != kNvrtcSuccess) return errorList("nvrtcGetCUBIN failed: " + lib.errorName(rc));
        if (out.cubin.empty()) return errorList("NVRTC returned no CUBIN for " + options.arch);
        if (!support::writeFileAtomically(out.cubinPath, out.cubin, error)) return errorList(error);
    }
    if (!support::writeFileAtomically(out.ptxPath, out.ptx, error)) return errorList(error);

    // The result is in the cache now; a token that fired during the compile still wins.
    if (cancel && cancel->isCancelled()) return errorList("compilation cancelled");
    support::DiagnosticList warnings = parsed.diags;
    if (warnings.empty()) return out;
    return support::Expected<CudaCompiled>(std::move(out), std::move(warnings));
}

support::Expected<std::int64_t> clearCudaCache(const std::string& dir) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) return std::int64_t{0};
    std::int64_t removed = 0;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        const std::string name = it->path().filename().string();
        const std::size_t dot = name.find('.');
        if (dot == std::string::npos || !isKey(name.substr(0, dot))) continue;
        const std::string rest = name.substr(dot);
        bool ours = false;
        for (const char* ext : {".cu", ".ptx", ".cubin"})
            if (rest == ext || rest.rfind(std::string(ext) + ".tmp-", 0) == 0) ours = true;
        if (!ours) continue;
        std::error_code rmEc;
        if (fs::remove(it->path(), rmEc)) ++removed;
    }
    if (ec) return errorList("cannot list the CUDA kernel cache directory '" + dir + "': " + ec.message());
    return removed;
}

support::Expected<std::string> disassembleCubin(const std::string& cubinPath, const support::CancelToken* cancel) {
    if (!isRegularFile(cubinPath) || ::access(cubinPath.c_str(), R_OK) != 0)
        return errorList("cannot read '" + cubinPath + "'" + errnoSuffix(errno));

    std::vector<std::string> dirs;
    {
        const std::string path = envOr("PATH");
        std::size_t b = 0;
        while (b <= path.size()) {
            const std::size_t e = std::min(path.find(':', b), path.size());
            if (e > b) dirs.push_back(path.substr(b, e - b));
            b = e + 1;
        }
    }
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (const std::string root = envOr(var); !root.empty()) dirs.push_back((fs::path(root) / "bin").string());
    dirs.emplace_back("/usr/local/cuda/bin");

    struct Tool {
        const char* name;
        std::vector<std::string> args;
    };
    const Tool tools[] = {{"cuobjdump", {"--dump-sass"}}, {"nvdisasm", {}}};
    for (const auto& tool : tools) {
        std::string exe;
        for (const auto& d : dirs) {
            const std::string candidate = (fs::path(d) / tool.name).string();
            if (isRegularFile(candidate) && ::access(candidate.c_str(), X_OK) == 0) {
                exe = candidate;
                break;
            }
        }
        if (exe.empty()) continue;
        SpawnSpec spec;
        spec.argv.push_back(exe);
        spec.argv.insert(spec.argv.end(), tool.args.begin(), tool.args.end());
        spec.argv.push_back(cubinPath);
        spec.env = {{"LC_ALL", "C"}, {"LANG", "C"}};
        ProcessOutput result;
        std::string error;
        const int rc = runProcess(spec, cancel, result, error);
        if (rc != 0) return errorList("cannot start '" + exe + "': " + std::strerror(rc));
        if (result.cancelled) return errorList("disassembly cancelled");
        if (!result.status.exited || result.status.code != 0) {
            const std::string how = result.status.exited ? "exited with status " + std::to_string(result.status.code)
                                                         : "was killed by " + describeSignal(result.status.signal);
            std::vector<std::string> notes;
            auto lines = splitLines(result.output);
            if (lines.size() > kLogTailLines) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(kLogTailLines));
            for (const auto& line : lines)
                if (!trim(line).empty()) notes.push_back(std::string(tool.name) + ": " + line);
            return errorList(std::string(tool.name) + " " + how, std::move(notes));
        }
        return result.output;
    }
    std::string searched;
    for (const auto& d : dirs) searched += (searched.empty() ? "" : ":") + d;
    return errorList("no CUDA disassembler found (cuobjdump, nvdisasm)", {"searched: " + searched});
}

}  // namespace tessera::runtime::cuda
