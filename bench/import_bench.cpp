// Import benchmark: time to read an ONNX file into Tessera's IR, verify it and infer shapes.
// Usage: import_bench MODEL.onnx [MODEL2.onnx ...]
// bench/run_import_layout.sh runs it next to the peer (the onnx Python package) and prints ratios.
#include <cstdio>
#include <string>

#include "bench/bench_util.h"
#include "core/frontend/onnx/onnx_importer.h"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s MODEL.onnx...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; ++i) {
        const std::string path = argv[i];
        std::size_t nodes = 0;
        bool ok = true;
        const auto t = tessera::bench::timeIt([&] {
            auto m = tessera::frontend::onnx::importModel(path);
            ok = m.ok();
            if (ok) nodes = m->graph.numNodes();
        });
        if (!ok) {
            std::fprintf(stderr, "import failed: %s\n", path.c_str());
            return 1;
        }
        tessera::bench::report("import " + path + " (" + std::to_string(nodes) + " nodes)", t);
        std::printf("RESULT import %s %.3f\n", path.c_str(), t.medianMs);
    }
    return 0;
}
