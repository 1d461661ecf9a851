// libFuzzer target for the task-mapping expression parser (core/schedule/mapping_parser.h).
// Invariants checked on every input, beyond "no crash, no hang, no sanitizer report":
// - a failed parse yields exactly one error whose line/column lie inside the input (or just past it);
// - a successful parse prints a canonical text that parses back to an equal mapping;
// - small mappings enumerate without error, cover every cell (exactly once unless projected), and
//   the lowering preview and memory analysis run.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/schedule/mapping_parser.h"
#include "core/schedule/memory_analysis.h"
#include "core/schedule/task_mapping.h"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tessera::schedule;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto m = parseMapping(text);
    if (!m) {
        const auto& items = m.diagnostics().items();
        check(items.size() == 1);
        const auto& d = items[0];
        check(!d.message.empty());
        check(d.begin.line >= 1 && d.begin.column >= 1);
        check(static_cast<size_t>(d.begin.column) <= size + 1);
        return 0;
    }
    const std::string canonical = m->str();
    auto again = parseMapping(canonical);
    check(again.ok());
    check(*again == *m);
    check(again->str() == canonical);
    if (m->numWorkers() * m->tasksPerWorker() <= 4096) {
        auto grid = ownerGrid(*m);
        check(grid.ok());
        bool projected = false;
        for (const auto& f : m->factors())
            for (bool p : f.projected) projected = projected || p;
        for (const auto& cell : *grid) check(projected ? cell.count >= 1 : cell.count == 1);
        (void)loweringPreview(*m);
        MemoryAccessSpec spec;
        spec.step = m->tasksPerWorker() - 1;
        check(analyzeMemory(*m, spec).ok());
    }
    return 0;
}
