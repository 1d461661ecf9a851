#pragma once
/// @file
/// Host JIT: generated C++ source -> shared library (.so) through the system compiler, with a
/// content-addressed cache.
///
/// Cache: the key is the 128-bit FNV-1a hash (core/support/hash.h) of the source, every flag and
/// the compiler's version line (the first line of `<compiler> --version`, asked once per process
/// and compiler). The library is `<cacheDir>/<key>.so`, next to the source it was built from,
/// `<key>.cpp`. A lookup is a stat(): a hit costs well under a millisecond once the version is
/// known. Both files are written under temporary names and renamed into place, so concurrent
/// compiles (threads or processes) of the same key never see a half-written file.
///
/// The compiler runs through posix_spawnp with an argv vector (no shell: file names and flags
/// are data), LC_ALL=C (so its messages parse) and -fdiagnostics-color=never (not part of the key:
/// it does not change the code).
///
/// Errors (diagnostics; never exceptions):
/// - compiler not found: "host compiler 'c++' not found: install g++ or set TESSERA_CXX / --cxx";
/// - compile errors: one diagnostic per `file:line:col: error: message` line of the compiler's
///   output, in that order. For the generated source, file is HostCompilerOptions::sourceName (or
///   the cached .cpp path), begin is the line:column in the generated source, and a note quotes
///   that line ("line 12: float x = ..."). Errors in other files (headers) keep their file.
///   Every other `error:` line (cc1plus, collect2 ...) is a diagnostic too, at most 20 in all
///   ("N more error lines not shown"). A summary error "compiling the kernel module failed (c++
///   exited with status N)" with the full command line as a note comes first when no error has a
///   source position (then the last output lines follow as notes), last otherwise;
/// - a compiler that exits 0 but writes no library: "the compiler 'X' exited 0 but wrote no
///   library (is it a C++ compiler?)";
/// - cancellation: the compiler's process group is killed; error "compilation cancelled";
/// - cache directory not writable: an error naming the directory.
/// Errors of the compiler itself (not found, cannot be started, no answer to --version, its error
/// lines, the summary, no library written) carry support::DiagnosticCode::CompilerFailed.
/// Compiler warnings in the generated source come back as warnings next to the value.
///
/// Compile units (compileHostModule): a large module is split into several translation units,
/// each compiled to an object file (`-c`, the flags without -shared) cached under the hash of its
/// own source, flags and compiler version (`<unit key>.o`, next to `<unit key>.cpp`), at most
/// HostCompilerOptions::jobs compilers at a time, then linked (`<compiler> <flags> -o <key>.so
/// <objects>`, cached under the hash of the unit keys, flags and version). A re-run after an edit
/// of one kernel recompiles the unit that holds it and links again. How kernels are grouped:
/// see compileHostModule.
///
/// Child processes: every compiler runs under a guard (core/runtime/subprocess.h,
/// SpawnSpec::killWithParent) in its own process group: cancelling kills the group (cc1plus, as
/// and ld included), and so does the death of the calling thread or process, even by SIGKILL:
/// no compiler is left running.
///
/// Thread rules: every function may be called from any thread, concurrently (the per-process
/// version cache is locked). compileHostModule starts its own threads (one per running compiler)
/// and joins them before it returns.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::runtime {

/// The cores this process may run on (its affinity mask: taskset, cpusets), else
/// std::thread::hardware_concurrency(); at least 1. Thread rules: any thread.
int availableCores();

/// $TESSERA_CXX when set and non-empty, else "c++".
std::string defaultHostCompiler();

struct HostCompilerOptions {
    /// Program name (searched in PATH) or path. Defaults to $TESSERA_CXX, else "c++"; an explicit
    /// value (e.g. from --cxx) wins over the environment.
    std::string compiler = defaultHostCompiler();
    /// Every flag given to the compiler before `-o out.so source.cpp`; part of the cache key.
    std::vector<std::string> flags = {"-O3", "-march=native", "-fopenmp", "-shared", "-fPIC"};
    /// Empty: defaultKernelCacheDir(). Created when missing.
    std::string cacheDir;
    /// Name of the generated source in diagnostics (e.g. "mobilenet_v2.cpp"); empty = the path of
    /// the cached copy, `<cacheDir>/<key>.cpp`.
    std::string sourceName;
    /// compileHostModule: compilers run at once; 0 = the cores this process may run on (its CPU
    /// affinity, so taskset and cpusets count; else std::thread::hardware_concurrency()).
    int jobs = 0;
    /// compileHostModule: the source bytes a compile unit aims for (kernels, without the shared
    /// prelude); 0 = kDefaultUnitBytes. Part of what decides the grouping, hence of unit keys.
    std::size_t unitBytes = 0;
    /// compileHostModule: the optimisation flag of units made only of pieces marked
    /// ModulePiece::reducedOpt, replacing -O2 and -O3 in `flags` (other levels are kept); empty =
    /// no replacement. -Og (GCC's "optimise, but compile fast" level: the -O1 passes that cost
    /// little) compiles small OpenMP loop kernels about 5x faster than -O3 and 2x faster than
    /// -O1 (on 300 elementwise kernels of 64 elements, g++ 12: 6 ms a kernel, against 12 ms at
    /// -O1 and 34 ms at -O3) and runs them as fast (0.9-1.0 us a launch at all three levels);
    /// what it loses is vectorisation and loop optimisation, which is why the caller marks only
    /// kernels where that does not show (core/pipeline/run.h says which).
    std::string reducedOptFlag = "-Og";
};

/// Default HostCompilerOptions::unitBytes.
inline constexpr std::size_t kDefaultUnitBytes = 256 * 1024;

/// One piece of a module's source that may go into any compile unit: a kernel's text (header
/// comment and function), which defines nothing another piece uses.
struct ModulePiece {
    std::size_t offset = 0;  ///< first byte in the module source
    std::size_t size = 0;    ///< bytes; the piece ends at a line end
    /// A name that survives edits of the piece's text (the entry point): unit boundaries are
    /// chosen from the names, so that an edit changes only the unit that holds the piece.
    std::string name;
    /// Compiling it at HostCompilerOptions::reducedOptFlag costs no run time worth the compile
    /// time -O3 takes: such pieces are grouped into units of their own.
    bool reducedOpt = false;
};

/// How a module's source divides into compile units (codegen::GeneratedSource holds the same).
struct ModuleLayout {
    /// source[0, sharedPreludeBytes) goes at the top of every unit (includes, static inline
    /// helpers); it must define nothing with external linkage.
    std::size_t sharedPreludeBytes = 0;
    /// In ascending order, disjoint, inside [sharedPreludeBytes, source size). Text outside the
    /// prelude and the pieces (module-level definitions) goes into exactly one unit.
    std::vector<ModulePiece> pieces;
};

struct CompiledLibrary {
    std::string path;            ///< the .so (absolute when cacheDir is)
    std::string sourcePath;      ///< the cached copy of the source it was built from
    bool cacheHit = false;       ///< true when no compiler ran
    double compileSeconds = 0;   ///< wall-clock seconds the compiler(s) and the link ran (0 on a hit)
    std::string compilerVersion; ///< first line of `<compiler> --version`
    std::string key;             ///< 32 hex digits
    // Compile units (compileHostModule; compileHostLibrary reports its one unit):
    int units = 1;               ///< translation units the module was split into
    int unitsCompiled = 0;       ///< units the compiler ran for (object not in the cache)
    int unitsCached = 0;         ///< units whose object file came from the cache
    int unitsReducedOpt = 0;     ///< units compiled (or cached) with reducedOptFlag
    bool linked = false;         ///< a link step ran (several units, library not cached)
};

/// Progress of compileHostModule: `done` of `total` units finished (compiled or found in the
/// cache); called on the thread that called compileHostModule, `done` never decreasing, and
/// last with done == total unless the compile fails or is cancelled.
using UnitProgress = std::function<void(int done, int total)>;

/// Compiles `source` into a shared library, or returns the cached one. See the file comment for
/// the cache, the errors and cancellation.
support::Expected<CompiledLibrary> compileHostLibrary(const std::string& source, const HostCompilerOptions& options,
                                                      const support::CancelToken* cancel = nullptr);

/// Compiles a module laid out by `layout` as compile units (see the file comment), or returns the
/// cached library. Grouping: pieces are taken in order, reducedOpt pieces and the others in two
/// separate streams (so that whole units can use reducedOptFlag); a unit ends after a piece
/// whose name hashes to a boundary (about one piece in unitBytes / (2 x the average piece size),
/// rounded to a power of two) once it holds at least unitBytes / 2, or when it reaches
/// 3 x unitBytes. Boundaries depend on names, not on the sizes of earlier units, so an edit of
/// one piece that keeps its name and about its size changes one unit (a few more when its new
/// size moves where its unit reaches unitBytes / 2). An empty layout, or pieces adding up to less
/// than unitBytes, compile as one unit exactly as compileHostLibrary does (one process, no link
/// step, the same cache key). Diagnostics are those of compileHostLibrary, with positions in the
/// whole module's source (HostCompilerOptions::sourceName, else `<key>.cpp`, the whole module
/// as cached next to the library); a failing unit stops the others (their compilers are killed).
/// Errors also: a layout that breaks its rules ("invalid module layout: ...").
support::Expected<CompiledLibrary> compileHostModule(const std::string& source, const ModuleLayout& layout,
                                                     const HostCompilerOptions& options,
                                                     const support::CancelToken* cancel = nullptr,
                                                     const UnitProgress& progress = {});

/// First line of `<compiler> --version` (cached per process after the first success), or the
/// "not found" error described above.
support::Expected<std::string> hostCompilerVersion(const std::string& compiler,
                                                   const support::CancelToken* cancel = nullptr);

/// $XDG_CACHE_HOME/tessera/kernels, else $HOME/.cache/tessera/kernels, else
/// <temp dir>/tessera-kernels.
std::string defaultKernelCacheDir();

/// Removes the files this cache writes (`<32 hex>.so`, `.o`, `.cpp` and left-over temporary
/// files) from `dir`, leaving anything else alone. Returns how many files were removed (0 when
/// the directory does not exist).
support::Expected<std::int64_t> clearKernelCache(const std::string& dir);

}  // namespace tessera::runtime
