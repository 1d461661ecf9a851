// libFuzzer target for the DSL frontend: arbitrary bytes -> lexer, parser (with recovery), sema
// and IR conversion; on success the IR printer, JSON, FLOP counts and the DSL printer run too, and
// every diagnostic is rendered with its caret. Nothing may crash, hang or leak. File access is off
// and constants are capped so that a declared f32[100000, 100000] cannot exhaust memory.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/frontend/dsl/diagnostic_render.h"
#include "core/frontend/dsl/dsl.h"
#include "core/frontend/dsl/dsl_printer.h"
#include "core/ir/json.h"
#include "core/ir/printer.h"
#include "core/ir/shape_inference.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 64 * 1024) return 0;
    const std::string text(reinterpret_cast<const char*>(data), size);
    tessera::frontend::dsl::ParseOptions o;
    o.allowFileAccess = false;
    o.maxTensorBytes = 1 << 20;
    o.maxTotalBytes = 4 << 20;
    auto r = tessera::frontend::dsl::parseProgram(text, "fuzz.tsr", o);
    const std::string rendered = tessera::frontend::dsl::renderDiagnostics(r.diagnostics(), text);
    if (r.ok()) {
        const auto& m = r.value();
        (void)tessera::ir::printModel(m);
        (void)tessera::ir::toJson(m, true).dump();
        (void)tessera::ir::totalFlops(m.graph);
        const std::string printed = tessera::frontend::dsl::printDsl(m);
        auto again = tessera::frontend::dsl::parseProgram(printed, "printed.tsr", o);
        (void)again.ok();
    }
    return rendered.empty() ? 0 : 0;
}
