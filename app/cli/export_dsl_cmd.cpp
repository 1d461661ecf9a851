#include "app/cli/export_dsl_cmd.h"

#include <filesystem>
#include <limits>
#include <fstream>
#include <ostream>
#include <system_error>

#include "app/cli/dsl_cmd.h"
#include "app/cli/inspect.h"
#include "core/pipeline/dsl_text.h"
#include "core/pipeline/load_model.h"

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

    pipeline::DslPrintOptions po;
    const bool fromDsl = pipeline::sourceKindOf(options.modelPath) == pipeline::SourceKind::Dsl;
    po.onnxReference = referencePath(options.modelPath, options.outputPath);
    // A parsed program does not remember where its constants came from (random, npy, onnx ...),
    // and onnx("prog.tsr", ...) would be wrong: its constants are always written inline.
    po.maxInlineElements = fromDsl ? std::numeric_limits<std::int64_t>::max() : options.maxInlineElements;
    const std::string text = pipeline::printDsl(*result, po);
    const std::string where = options.outputPath.empty() ? std::string("<stdout>") : options.outputPath;
    // Refuse to write a program that would not parse back.
    if (!fromDsl && text.find("onnx(\"") != std::string::npos) {
        const fs::path ref(po.onnxReference);
        bool leaves = ref.is_absolute();
        for (const auto& part : ref) leaves = leaves || part == "..";
        if (leaves && !options.outputPath.empty()) {
            err << where << ": error: the weights would be referenced as onnx(\"" << po.onnxReference
                << "\", ...), outside the program's folder, which the DSL refuses: write the program into the "
                   "model's folder or a folder above it, or inline the weights with --inline-max\n";
            return kExitBadInput;
        }
        // On stdout the program's final folder is unknown: say what it needs.
        if (leaves)
            err << where << ": warning: the weights are referenced as onnx(\"" << po.onnxReference
                << "\", ...), relative to the current folder; the DSL accepts only paths inside the program's "
                   "folder, so save the output where that path has no '..' (or use --inline-max)\n";
    }
    if (text.size() > pipeline::kMaxDslSourceBytes) {
        err << where << ": error: the program would be " << text.size() / (1024 * 1024) << " MiB, above the DSL's "
            << pipeline::kMaxDslSourceBytes / (1024 * 1024) << " MiB file limit"
            << (fromDsl ? "" : ": lower --inline-max so that large weights stay references to the model") << "\n";
        return kExitBadInput;
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
