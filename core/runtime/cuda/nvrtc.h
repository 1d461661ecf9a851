#pragma once
/// @file
/// NVRTC JIT: generated CUDA C++ source -> PTX (and CUBIN) in-process, with a content-addressed
/// cache like the host JIT (core/runtime/host_jit.h).
///
/// Loading: NVRTC is never linked. The first call that needs it dlopen()s the library (once per
/// process, thread-safe) and looks up the few C functions used, so Tessera starts and runs its
/// CPU target where the CUDA toolkit is absent; every entry point then returns the "NVRTC not
/// found" error instead. Search order, newest soname first: for each of "libnvrtc.so.13",
/// "libnvrtc.so.12", "libnvrtc.so": `$CUDA_HOME/lib64/`, `$CUDA_HOME/lib/`, `$CUDA_PATH/lib64/`,
/// `$CUDA_PATH/lib/` (an explicit toolkit wins), then the bare name (the dynamic loader's own
/// search: LD_LIBRARY_PATH, ld.so.cache), then `/usr/local/cuda/lib64/`, `/usr/local/cuda/lib/`.
/// A library lacking one of the required functions (older than CUDA 11.2) is skipped.
///
/// Cache: the key is the 128-bit FNV-1a hash (core/support/hash.h) of the source, every option
/// handed to NVRTC (see compileCuda), the source name (it appears in -lineinfo PTX) and the NVRTC
/// version. The files are `<cacheDir>/<key>.cu` (the source), `<key>.cubin` (sm_XX only) and
/// `<key>.ptx`, each written under a temporary name and renamed into place, the .ptx last: a
/// present .ptx (plus .cubin for sm_XX) is a complete entry, so concurrent compiles (threads or
/// processes) of the same key never see a half-written one. A hit reads those files back and runs
/// no NVRTC call besides the version asked at load time (well under a millisecond for kernel-sized
/// files). NVRTC warnings are not cached: a hit has an empty log and no warnings.
///
/// Errors (diagnostics; never exceptions):
/// - NVRTC missing: "NVRTC not found (<dlerror of libnvrtc.so.13>): install the CUDA toolkit or
///   set CUDA_HOME", with a note listing every path tried;
/// - a bad arch: see parseCudaArch / validateCudaArch;
/// - compile errors: one diagnostic per `<sourceName>(LINE): error: MESSAGE` line of the NVRTC log
///   (also "catastrophic error"), in log order, at most 20 ("N more errors not shown" on the
///   summary). file = CudaCompileOptions::sourceName, begin = LINE and the column of NVRTC's caret
///   line (0 when it has none), notes: "line N: <that source line>" and NVRTC's context lines
///   ("detected during instantiation of ..."). Errors in other files (headers) keep their file.
///   Then a summary error "NVRTC compilation failed" with the options as a note ("options: ...");
///   it comes first instead when no error has a position (bad options), followed by the log lines
///   as notes;
/// - warnings (`(LINE): warning #177-D: ...`) come back as warnings next to the value, the
///   warning number appended to the message ("... [#177-D]");
/// - cache directory not writable: an error naming the file or directory.
/// NVRTC missing and the summary of a failed compile carry support::DiagnosticCode::CompilerFailed.
///
/// Cancellation: NVRTC runs in-process and cannot be killed like the host compiler. The token is
/// checked before and after the compile ("compilation cancelled"); when the loaded NVRTC has
/// nvrtcSetFlowCallback (CUDA 12.8+; NvrtcInfo::interruptible) the token is also polled during the
/// compile and NVRTC stops early. A compile that finished before the token was seen is still
/// stored in the cache (a retry is a hit) but is reported as cancelled. Callers that need an
/// immediate answer may run compiles on a worker thread and drop stale results.
///
/// Thread rules: every function may be called from any thread, concurrently; compiles of
/// different programs run in parallel (NVRTC programs are independent; the library is loaded once).

#include <cstdint>
#include <string>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::runtime::cuda {

/// The loaded NVRTC library.
struct NvrtcInfo {
    int major = 0;                    ///< nvrtcVersion(), e.g. 13
    int minor = 0;                    ///< e.g. 0
    std::string path;                 ///< the shared object actually loaded (absolute when known)
    std::vector<int> supportedArchs;  ///< nvrtcGetSupportedArchs(), ascending: 75, 80, 86, ... 121
    bool interruptible = false;       ///< nvrtcSetFlowCallback is available (see Cancellation)
};

/// Loads NVRTC (once per process; see the file comment for the search order) and returns what
/// it is, or the "NVRTC not found" error. Later calls return the cached answer at once.
support::Expected<NvrtcInfo> nvrtcInfo();

/// A CUDA architecture option value, split.
struct CudaArch {
    std::string text;   ///< as given: "sm_90", "compute_90", "sm_90a", "sm_100f"
    int number = 0;     ///< 90 for sm_90 / compute_90 / sm_90a
    std::string suffix; ///< "", "a" (arch-specific) or "f" (family)
    bool real = false;  ///< true for sm_XX: NVRTC emits a CUBIN too; false for compute_XX: PTX only
};

/// Checks the syntax only (no NVRTC needed): "sm_<digits>" or "compute_<digits>", two or three
/// digits, optionally followed by 'a' or 'f'. Anything else is an error
/// "invalid CUDA architecture 'X': expected sm_XX (PTX and CUBIN) or compute_XX (PTX only), e.g. sm_90".
support::Expected<CudaArch> parseCudaArch(const std::string& arch);

/// parseCudaArch, then checks the number against NvrtcInfo::supportedArchs:
/// "CUDA architecture 'sm_60' is not supported by NVRTC 13.0" with a note
/// "supported: 75 80 86 ...". Also fails when NVRTC is not found.
support::Expected<CudaArch> validateCudaArch(const std::string& arch);

/// "sm_90" from compute capability 9.0, "sm_120" from 12.0, "sm_86" from 8.6. No validation.
std::string cudaArchForComputeCapability(int major, int minor);

struct CudaCompileOptions {
    /// "sm_XX" -> PTX + CUBIN; "compute_XX" -> PTX only (validated by validateCudaArch).
    std::string arch = "sm_90";
    /// Appended after the fixed options, e.g. "-lineinfo", "--use_fast_math", "-maxrregcount=64",
    /// "-I<dir>" (NVRTC 13 has no built-in cuda_fp16.h: pass the toolkit's include directory).
    std::vector<std::string> extraOptions;
    /// Empty: defaultCudaCacheDir(). Created when missing.
    std::string cacheDir;
    /// Name of the source in NVRTC's log, in diagnostics and in -lineinfo PTX.
    std::string sourceName = "tessera_kernels.cu";
};

struct CudaCompiled {
    std::string ptx;            ///< PTX text (NUL terminator removed)
    std::string cubin;          ///< ELF image for sm_XX; empty for compute_XX
    std::string ptxPath;        ///< `<cacheDir>/<key>.ptx`
    std::string cubinPath;      ///< `<cacheDir>/<key>.cubin`; empty for compute_XX
    std::string log;            ///< NVRTC's log of this compile (empty on a cache hit)
    bool cacheHit = false;      ///< true when NVRTC did not compile
    double compileSeconds = 0;  ///< wall-clock seconds of nvrtcCompileProgram (0 on a hit)
    std::string key;            ///< 32 hex digits
    std::string arch;           ///< CudaCompileOptions::arch
    std::vector<std::string> options;  ///< every option handed to NVRTC, in order
};

/// Compiles `source` (a whole translation unit; includes only through -I in extraOptions) with
/// `--gpu-architecture=<arch> -default-device --std=c++17 <extraOptions...>`, or returns the
/// cached result. See the file comment for the cache, errors and cancellation.
support::Expected<CudaCompiled> compileCuda(const std::string& source, const CudaCompileOptions& options,
                                            const support::CancelToken* cancel = nullptr);

/// $XDG_CACHE_HOME/tessera/cuda, else $HOME/.cache/tessera/cuda, else <temp dir>/tessera-cuda.
std::string defaultCudaCacheDir();

/// Removes the files this cache writes (`<32 hex>.cu`, `.ptx`, `.cubin` and left-over temporary
/// files) from `dir`, leaving anything else alone. Returns how many files were removed (0 when the
/// directory does not exist).
support::Expected<std::int64_t> clearCudaCache(const std::string& dir);

/// SASS listing of a CUBIN: `cuobjdump --dump-sass <cubin>` or else `nvdisasm <cubin>`, each
/// searched in PATH, then $CUDA_HOME/bin, $CUDA_PATH/bin and /usr/local/cuda/bin, run without a
/// shell (LC_ALL=C). Errors: "no CUDA disassembler found (cuobjdump, nvdisasm)" with the searched
/// directories as a note; "cannot read '<cubin>'"; the tool failing ("cuobjdump exited with status
/// N" and its last output lines as notes); "disassembly cancelled" (the tool is killed).
support::Expected<std::string> disassembleCubin(const std::string& cubinPath,
                                                const support::CancelToken* cancel = nullptr);

/// Test hook: forgets the loaded library (it stays mapped) and makes the next nvrtcInfo() try
/// exactly `candidates` (paths or bare sonames) instead of the default search; an empty vector
/// restores the default search. Compiles already running keep the library they started with.
void setNvrtcSearchPathsForTesting(std::vector<std::string> candidates);

}  // namespace tessera::runtime::cuda
