#include "app/cli/export_dsl_cmd.h"

#include <filesystem>
#include <fstream>
#include <ostream>
#include <system_error>

#include "app/cli/dsl_cmd.h"
#include "app/cli/inspect.h"
#include "core/frontend/dsl/dsl_printer.h"
#include "core/pipeline/load_model.h"
#include "core/frontend/onnx/onnx_importer.h"

namespace tessera::cli {

namespace {

namespace fs = std::filesystem;

/// The model's path as the DSL file at `outputPath` (or the current directory) should refer to it.
std::string referencePath(const std::string& modelPath, const std::string& outputPath) {
    std::error_code ec;
    const fs::path model = fs::absolute(modelPath, ec);
    if (ec) return modelPath;
    const fs::path base = outputPath.empty() ? fs::current_path(ec) : fs::absolute(outputPath, ec).parent_path();
    if (ec) return modelPath;
    const fs::path rel = model.lexically_normal().lexically_relative(base.lexically_normal());
    if (rel.empty()) return modelPath;
    return rel.generic_string();
}

}  // namespace

int runExportDsl(const ExportDslOptions& options, std::ostream& out, std::ostream& err) {
    // A .tsr program is parsed and printed back in canonical form (constants inline: the parsed
    // model does not remember where they came from).
    auto result = pipeline::loadModel(options.modelPath);
    if (!result) {
        for (const auto& d : result.diagnostics().items()) err << d.format() << "\n";
        if (!result.diagnostics().hasErrors()) err << options.modelPath << ": error: import failed\n";
        return kExitBadInput;
    }
    for (const auto& d : result.diagnostics().items()) err << d.format() << "\n";

    frontend::dsl::PrintOptions po;
    po.onnxReference = referencePath(options.modelPath, options.outputPath);
    po.maxInlineElements = options.maxInlineElements;
    const std::string text = frontend::dsl::printDsl(*result, po);
    if (text.find("onnx(\"") != std::string::npos) {
        const fs::path ref(po.onnxReference);
        bool leaves = ref.is_absolute();
        for (const auto& part : ref) leaves = leaves || part == "..";
        if (leaves)
            err << (options.outputPath.empty() ? std::string("<stdout>") : options.outputPath)
                << ": warning: weights are referenced as onnx(\"" << po.onnxReference
                << "\", ...), outside the program's folder, which the DSL parser refuses; save the program in "
                   "the model's folder or raise --inline-max\n";
    }

    if (options.outputPath.empty()) {
        out << text;
        out.flush();
        return out.good() ? kExitOk : kExitInternal;
    }
    std::ofstream file(options.outputPath, std::ios::binary | std::ios::trunc);
    if (!file) {
        err << options.outputPath << ": error: cannot open for writing\n";
        return kExitInternal;
    }
    file << text;
    file.close();
    if (!file) {
        err << options.outputPath << ": error: write failed\n";
        return kExitInternal;
    }
    return kExitOk;
}

}  // namespace tessera::cli
