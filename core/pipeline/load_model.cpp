#include "core/pipeline/load_model.h"

#include <algorithm>
#include <cctype>
#include <memory>

namespace tessera::pipeline {

SourceKind sourceKindOf(const std::string& path) {
    if (path.size() < 4) return SourceKind::Onnx;
    std::string ext = path.substr(path.size() - 4);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext == ".tsr" ? SourceKind::Dsl : SourceKind::Onnx;
}

frontend::dsl::ParseOptions dslParseOptions() {
    frontend::dsl::ParseOptions o;
    o.onnxLoader = [](const std::string& path) -> support::Expected<std::shared_ptr<const ir::Model>> {
        frontend::onnx::ImportOptions io;
        io.runOnnxShapeInference = false;  // only the constants are needed
        auto r = frontend::onnx::importModel(path, io);
        if (!r.ok()) return r.diagnostics();
        return std::shared_ptr<const ir::Model>(std::make_shared<ir::Model>(std::move(r.value())));
    };
    return o;
}

support::Expected<ir::Model> loadModel(const std::string& path, const LoadOptions& options,
                                       const support::CancelToken* cancel) {
    if (sourceKindOf(path) == SourceKind::Dsl) return frontend::dsl::parseProgramFile(path, dslParseOptions());
    return frontend::onnx::importModel(path, options.onnx, cancel);
}

}  // namespace tessera::pipeline
