#include "core/pipeline/cuda_code.h"

#include "core/codegen/cuda/cuda_codegen.h"

namespace tessera::pipeline {

support::Expected<bool> checkCudaArch(const std::string& arch, bool askNvrtc) {
    auto parsed = askNvrtc ? runtime::cuda::validateCudaArch(arch) : runtime::cuda::parseCudaArch(arch);
    if (!parsed.ok()) return parsed.diagnostics();
    return parsed->real;
}

support::Expected<std::string> kernelCudaModule(const CompiledStep& step) {
    auto mod = codegen::generateCuda({&step.kernel});
    if (!mod.ok()) return mod.diagnostics();
    return mod->source.source;
}

support::Expected<runtime::cuda::CudaCompiled> compileCudaModule(const std::string& source, const std::string& arch,
                                                                 const std::string& sourceName) {
    runtime::cuda::CudaCompileOptions options;
    options.arch = arch;
    options.sourceName = sourceName;
    return runtime::cuda::compileCuda(source, options);
}

support::Expected<std::string> disassembleCubin(const std::string& cubinPath) {
    return runtime::cuda::disassembleCubin(cubinPath);
}

}  // namespace tessera::pipeline
