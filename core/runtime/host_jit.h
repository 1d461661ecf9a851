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
/// Compiler warnings in the generated source come back as warnings next to the value.
///
/// Thread rules: every function may be called from any thread, concurrently (the per-process
/// version cache is locked).

#include <cstdint>
#include <string>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::runtime {

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
};

struct CompiledLibrary {
    std::string path;            ///< the .so (absolute when cacheDir is)
    std::string sourcePath;      ///< the cached copy of the source it was built from
    bool cacheHit = false;       ///< true when no compiler ran
    double compileSeconds = 0;   ///< wall-clock seconds the compiler ran (0 on a hit)
    std::string compilerVersion; ///< first line of `<compiler> --version`
    std::string key;             ///< 32 hex digits
};

/// Compiles `source` into a shared library, or returns the cached one. See the file comment for
/// the cache, the errors and cancellation.
support::Expected<CompiledLibrary> compileHostLibrary(const std::string& source, const HostCompilerOptions& options,
                                                      const support::CancelToken* cancel = nullptr);

/// First line of `<compiler> --version` (cached per process after the first success), or the
/// "not found" error described above.
support::Expected<std::string> hostCompilerVersion(const std::string& compiler,
                                                   const support::CancelToken* cancel = nullptr);

/// $XDG_CACHE_HOME/tessera/kernels, else $HOME/.cache/tessera/kernels, else
/// <temp dir>/tessera-kernels.
std::string defaultKernelCacheDir();

/// Removes the files this cache writes (`<32 hex>.so`, `<32 hex>.cpp` and left-over temporary
/// files) from `dir`, leaving anything else alone. Returns how many files were removed (0 when
/// the directory does not exist).
support::Expected<std::int64_t> clearKernelCache(const std::string& dir);

}  // namespace tessera::runtime
