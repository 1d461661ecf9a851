#include "core/schedule/memory_analysis.h"

#include <algorithm>
#include <unordered_map>

namespace tessera::schedule {

using support::Diagnostic;
using support::DiagnosticList;
using support::Expected;

namespace {

DiagnosticList oneError(std::string message) {
    DiagnosticList list;
    Diagnostic d;
    d.message = std::move(message);
    list.add(std::move(d));
    return list;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Expected<MemoryReport> analyzeMemory(const TaskMapping& mapping, const MemoryAccessSpec& spec) {
    if (spec.elemBytes < 1 || spec.elemBytes > 256)
        return oneError("element size " + std::to_string(spec.elemBytes) + " bytes is out of range 1..256");
    if (spec.warpSize < 1 || spec.warpSize > 1024 || spec.sectorBytes < 1 || spec.sectorBytes > 4096 ||
        spec.numBanks < 1 || spec.numBanks > 1024 || spec.bankBytes < 1 || spec.bankBytes > 64)
        return oneError("warp size, sector size, bank count or bank width out of range");
    if (spec.step < 0) return oneError("step " + std::to_string(spec.step) + " must not be negative");
    if (spec.step >= mapping.tasksPerWorker())
        return oneError("step " + std::to_string(spec.step) + " is past the last step: each worker runs " +
                        std::to_string(mapping.tasksPerWorker()) + " task(s), steps 0.." +
                        std::to_string(mapping.tasksPerWorker() - 1));
    if (mapping.numWorkers() > spec.maxWorkers)
        return oneError("the mapping has " + std::to_string(mapping.numWorkers()) + " workers, over the analysis limit of " +
                        std::to_string(spec.maxWorkers));
    std::vector<int64_t> shape = spec.shape.empty() ? mapping.taskShape() : spec.shape;
    if (shape.size() != mapping.taskShape().size())
        return oneError("tensor rank " + std::to_string(shape.size()) + " differs from the mapping's rank " +
                        std::to_string(mapping.taskShape().size()));
    // Element strides of the layout; the byte size must fit in int64 (tensor elements <= 2^62 / elemBytes).
    const size_t n = shape.size();
    std::vector<int64_t> strides(n, 1);
    int64_t elements = 1;
    for (size_t k = 0; k < n; ++k) {
        const size_t d = spec.layout == MemoryLayout::RowMajor ? n - 1 - k : k;
        if (shape[d] <= 0) return oneError("tensor extent " + std::to_string(shape[d]) + " must be positive");
        strides[d] = elements;
        if (__builtin_mul_overflow(elements, shape[d], &elements) || elements > (int64_t{1} << 62) / spec.elemBytes)
            return oneError("tensor is too large to address");
    }

    MemoryReport report;
    report.steps = mapping.tasksPerWorker();
    report.step = spec.step;
    const int64_t numWarps = ceilDiv(mapping.numWorkers(), spec.warpSize);
    report.warps.reserve(static_cast<size_t>(numWarps));
    std::vector<int64_t> addrs;
    std::vector<int64_t> sectors, words;
    std::unordered_map<int64_t, int64_t> perBank;
    for (int64_t k = 0; k < numWarps; ++k) {
        WarpAccess wa;
        wa.warp = k;
        addrs.clear();
        const int64_t first = k * spec.warpSize;
        const int64_t last = std::min(mapping.numWorkers(), first + spec.warpSize);
        for (int64_t w = first; w < last; ++w) {
            const Task t = mapping.taskAt(w, spec.step);
            if (t.empty()) continue;  // step beyond this worker's list
            bool inside = true;
            int64_t linear = 0;
            for (size_t d = 0; d < n; ++d) {
                if (t[d] >= shape[d]) inside = false;
                linear += t[d] * strides[d];
            }
            if (!inside) continue;  // predicated off
            ++wa.activeLanes;
            addrs.push_back(linear * spec.elemBytes);
        }
        std::sort(addrs.begin(), addrs.end());
        addrs.erase(std::unique(addrs.begin(), addrs.end()), addrs.end());
        wa.distinctElements = static_cast<int64_t>(addrs.size());
        sectors.clear();
        words.clear();
        for (int64_t a : addrs) {
            const int64_t end = a + spec.elemBytes - 1;
            for (int64_t s = a / spec.sectorBytes; s <= end / spec.sectorBytes; ++s) sectors.push_back(s);
            for (int64_t x = a / spec.bankBytes; x <= end / spec.bankBytes; ++x) words.push_back(x);
        }
        std::sort(sectors.begin(), sectors.end());
        sectors.erase(std::unique(sectors.begin(), sectors.end()), sectors.end());
        std::sort(words.begin(), words.end());
        words.erase(std::unique(words.begin(), words.end()), words.end());
        wa.sectors = static_cast<int64_t>(sectors.size());
        wa.idealSectors = ceilDiv(wa.distinctElements * spec.elemBytes, spec.sectorBytes);
        wa.distinctWords = static_cast<int64_t>(words.size());
        perBank.clear();
        for (int64_t x : words) wa.wavefronts = std::max(wa.wavefronts, ++perBank[x % spec.numBanks]);
        wa.idealWavefronts = ceilDiv(wa.distinctWords, spec.numBanks);
        wa.conflictDegree = wa.idealWavefronts > 0 ? ceilDiv(wa.wavefronts, wa.idealWavefronts) : 1;
        wa.uncoalesced = wa.sectors > wa.idealSectors;
        wa.bankConflict = wa.wavefronts > wa.idealWavefronts;
        if (wa.uncoalesced || wa.bankConflict) ++report.badWarps;
        report.totalSectors += wa.sectors;
        report.totalIdealSectors += wa.idealSectors;
        report.warps.push_back(wa);
    }
    return report;
}

}  // namespace tessera::schedule
