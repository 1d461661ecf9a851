#include "app/cli/mapping_cmd.h"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <vector>

#include "core/schedule/mapping_parser.h"
#include "core/schedule/memory_analysis.h"
#include "core/schedule/task_mapping.h"

namespace tessera::cli {

namespace {

using schedule::TaskMapping;

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;

std::string shapeStr(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

/// The expression as one printable line (tabs and newlines become spaces so the caret lines up).
std::string echoLine(const std::string& expr) {
    std::string s;
    for (unsigned char c : expr) s += (c < 0x20 || c == 0x7f) ? ' ' : static_cast<char>(c);
    return s;
}

void printDiagnostic(const support::Diagnostic& d, const std::string& expr, std::ostream& err) {
    err << d.format() << "\n";
    // Caret under the range, for single-line expressions of printable length.
    if (d.begin.line == 1 && d.begin.column > 0 && expr.size() <= 4096 && expr.find('\n') == std::string::npos) {
        err << "  " << echoLine(expr) << "\n  ";
        const int begin = d.begin.column;
        const int end = d.end.line == 1 && d.end.column >= begin ? d.end.column : begin;
        err << std::string(static_cast<size_t>(begin - 1), ' ') << '^'
            << std::string(static_cast<size_t>(end - begin), '~') << "\n";
    } else if (expr.size() <= 4096) {
        err << "  " << echoLine(expr) << "\n";
    }
    for (const auto& note : d.notes) err << "  hint: " << note << "\n";
}

/// "32,33" or "32x33" -> {32, 33}; false on anything else.
bool parseShape(const std::string& text, std::vector<int64_t>& out) {
    out.clear();
    std::string item;
    auto flush = [&]() {
        if (item.empty() || item.size() > 12) return false;
        out.push_back(std::stoll(item));
        item.clear();
        return out.back() > 0;
    };
    for (char c : text) {
        if (c == ' ') continue;
        if (c == ',' || c == 'x') {
            if (!flush()) return false;
        } else if (c >= '0' && c <= '9') {
            item += c;
        } else {
            return false;
        }
    }
    return flush() && out.size() <= static_cast<size_t>(schedule::kMaxRank);
}

void printJson(const TaskMapping& m, std::ostream& out) {
    out << "{\"num_workers\": " << m.numWorkers() << ", \"task_shape\": " << shapeStr(m.taskShape())
        << ", \"workers\": [";
    for (int64_t w = 0; w < m.numWorkers(); ++w) {
        out << (w ? ", [" : "[");
        m.forEachTask(w, [&](int64_t step, const schedule::Task& t) {
            out << (step ? ", " : "") << shapeStr(t);
            return true;
        });
        out << "]";
    }
    out << "]}\n";
}

void printGrid(const TaskMapping& m, std::ostream& out) {
    auto owners = schedule::ownerGrid(m, kMaxPrintedPairs);
    if (!owners) return;  // callers check the size first
    const auto& shape = m.taskShape();
    const size_t n = shape.size();
    const int64_t rows = n >= 2 ? shape[n - 2] : 1;
    const int64_t cols = shape[n - 1];
    const int64_t sliceCount = m.numTasks() / (rows * cols);
    const int width = static_cast<int>(std::to_string(std::max<int64_t>(m.numWorkers() - 1, cols - 1)).size());
    const int rowWidth = static_cast<int>(std::to_string(rows - 1).size());
    bool shared = false;
    auto pad = [](const std::string& s, int w) { return std::string(static_cast<size_t>(std::max<int>(0, w - static_cast<int>(s.size()))), ' ') + s; };
    for (int64_t slice = 0; slice < sliceCount; ++slice) {
        if (n > 2) {
            // Coordinates of the leading dimensions of this slice.
            std::vector<int64_t> lead(n - 2);
            int64_t rem = slice;
            for (size_t d = n - 2; d-- > 0;) {
                lead[d] = rem % shape[d];
                rem /= shape[d];
            }
            out << (slice ? "\n" : "") << "slice [";
            for (size_t d = 0; d < n - 2; ++d) out << lead[d] << ", ";
            out << ":, :]\n";
        }
        auto flush = [&](std::string line) {
            line.erase(line.find_last_not_of(' ') + 1);
            out << line << "\n";
        };
        std::string header(static_cast<size_t>(rowWidth) + 2, ' ');
        for (int64_t c = 0; c < cols; ++c) header += ' ' + pad(std::to_string(c), width) + ' ';
        flush(header);
        for (int64_t r = 0; r < rows; ++r) {
            std::string line = pad(std::to_string(r), rowWidth) + " |";
            for (int64_t c = 0; c < cols; ++c) {
                const auto& cell = (*owners)[static_cast<size_t>((slice * rows + r) * cols + c)];
                const std::string id = cell.worker < 0 ? "." : std::to_string(cell.worker);
                line += ' ' + pad(id, width) + (cell.count > 1 ? '+' : ' ');
                shared = shared || cell.count > 1;
            }
            flush(line);
        }
    }
    if (shared) out << "(+ = cell held by several workers or steps; the first owner is shown)\n";
}

}  // namespace

int runMapping(const MappingOptions& options, std::ostream& out, std::ostream& err) {
    auto parsed = schedule::parseMapping(options.expression, "expression");
    if (!parsed) {
        for (const auto& d : parsed.diagnostics().items()) printDiagnostic(d, options.expression, err);
        return kExitBadInput;
    }
    const TaskMapping& m = *parsed;

    std::vector<int64_t> tensor;
    if (!options.tensorShape.empty() && !parseShape(options.tensorShape, tensor)) {
        err << "tessera-cli mapping: error: --tensor '" << echoLine(options.tensorShape)
            << "' is not a list of positive extents such as 32,33\n";
        return kExitBadInput;
    }
    // In --memory the tensor is what the warps read (often larger than the tasks), not a coverage target.
    if ((!tensor.empty() && !options.memory) || options.maxWorkers > 0) {
        schedule::ValidationOptions vo;
        if (!options.memory) vo.tensorShape = tensor;
        vo.maxWorkers = options.maxWorkers;
        auto diags = schedule::validateMapping(m, vo);
        for (const auto& d : diags.items()) {
            err << "tessera-cli mapping: " << d.format() << "\n";
            for (const auto& note : d.notes) err << "  hint: " << note << "\n";
        }
        if (diags.hasErrors() && !options.memory) return kExitBadInput;
    }

    if (options.loops) {
        out << schedule::loweringPreview(m);
        return kExitOk;
    }
    if (options.memory) {
        schedule::MemoryAccessSpec spec;
        spec.shape = tensor;
        spec.elemBytes = options.elemBytes;
        spec.step = options.step;
        spec.layout = options.columnMajor ? schedule::MemoryLayout::ColumnMajor : schedule::MemoryLayout::RowMajor;
        auto report = schedule::analyzeMemory(m, spec);
        if (!report) {
            for (const auto& d : report.diagnostics().items()) err << "tessera-cli mapping: " << d.format() << "\n";
            return kExitBadInput;
        }
        out << m.str() << "\n";
        out << "step " << report->step << " of " << report->steps << ", tensor "
            << shapeStr(tensor.empty() ? m.taskShape() : tensor) << (options.columnMajor ? " column-major" : " row-major")
            << ", " << options.elemBytes << "-byte elements\n";
        out << "warp  lanes  sectors  ideal  wavefronts  ideal  flags\n";
        for (const auto& w : report->warps) {
            std::string flags;
            if (w.uncoalesced) flags += "UNCOALESCED";
            if (w.bankConflict) flags += (flags.empty() ? "" : " ") + std::to_string(w.conflictDegree) + "-WAY-CONFLICT";
            out << std::setw(4) << w.warp << std::setw(7) << w.activeLanes << std::setw(9) << w.sectors << std::setw(7)
                << w.idealSectors << std::setw(12) << w.wavefronts << std::setw(7) << w.idealWavefronts << "  "
                << (flags.empty() ? "ok" : flags) << "\n";
        }
        out << "bad warps: " << report->badWarps << " of " << report->warps.size() << "\n";
        return kExitOk;
    }
    if (m.numWorkers() * m.tasksPerWorker() > kMaxPrintedPairs) {
        err << "tessera-cli mapping: error: " << m.str() << " has " << m.numWorkers() * m.tasksPerWorker()
            << " (worker, task) pairs, too many to print (limit " << kMaxPrintedPairs << ")\n";
        return kExitBadInput;
    }
    if (options.json) {
        printJson(m, out);
        return kExitOk;
    }
    out << m.str() << "\n";
    out << "workers: " << m.numWorkers() << "  task shape: " << shapeStr(m.taskShape())
        << "  tasks per worker: " << m.tasksPerWorker() << "\n";
    printGrid(m, out);
    return kExitOk;
}

}  // namespace tessera::cli
