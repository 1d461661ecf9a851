#pragma once
/// @file
/// Test helper: CUDA C compiled for sm_90 (or another `arch`) by NVRTC with `ptxas -v` (registers, spills), in a
/// cache directory of its own that is removed afterwards. Callers skip first when NVRTC is not
/// loadable (runtime::cuda::nvrtcInfo()).

#include <filesystem>
#include <functional>
#include <regex>
#include <string>
#include <system_error>

#include "core/runtime/cuda/nvrtc.h"

namespace tessera::lower::test {

struct NvrtcSm90 {
    bool ok = false;
    std::string error;  ///< the diagnostics when !ok
    std::string ptx, log;
    int registers = -1;        ///< "Used N registers" of ptxas, -1 when absent
    int spillStoreBytes = -1;  ///< "N bytes spill stores", -1 when absent
};

inline NvrtcSm90 compileForSm90(const std::string& source, const std::string& tag, const std::string& arch = "sm_90") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("tessera-" + tag + "-" + std::to_string(std::hash<std::string>{}(source)));
    runtime::cuda::CudaCompileOptions o;
    o.arch = arch;
    o.cacheDir = dir.string();
    o.extraOptions = {"--ptxas-options=-v"};
    auto r = runtime::cuda::compileCuda(source, o);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    NvrtcSm90 b;
    if (!r.ok()) {
        b.error = r.diagnostics().formatAll();
        return b;
    }
    b.ok = true;
    b.ptx = r->ptx;
    b.log = r->log;
    std::smatch m;
    if (std::regex_search(b.log, m, std::regex(R"(Used (\d+) registers)"))) b.registers = std::stoi(m[1].str());
    if (std::regex_search(b.log, m, std::regex(R"((\d+) bytes spill stores)"))) b.spillStoreBytes = std::stoi(m[1].str());
    return b;
}

}  // namespace tessera::lower::test
