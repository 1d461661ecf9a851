#include "views/mapping/mapping_snapshot.h"

#include <algorithm>
#include <cctype>

#include "core/schedule/mapping_parser.h"

namespace tessera::views {
namespace {

bool isBlank(const std::string& s)
{
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

support::Diagnostic firstError(const support::DiagnosticList& list)
{
    if (const support::Diagnostic* d = list.firstError())
        return *d;
    if (!list.empty())
        return list.items().front();
    support::Diagnostic d;
    d.message = "invalid mapping";
    return d;
}

support::Diagnostic wholeText(support::Diagnostic d, const std::string& text)
{
    if (d.begin.column == 0) {
        d.begin = {1, 1};
        d.end = {1, std::max(1, static_cast<int>(text.size()))};
    }
    return d;
}

}  // namespace

std::int64_t MappingSnapshot::flatIndex(const std::vector<std::int64_t>& task) const
{
    std::int64_t idx = 0;
    for (std::size_t d = 0; d < task.size() && d < strides.size(); ++d)
        idx += task[d] * strides[d];
    return idx;
}

MappingBuild buildMappingSnapshot(const std::string& gridText, const std::string& blockText, std::int64_t maxCells)
{
    MappingBuild out;
    if (isBlank(gridText)) {
        out.source = MappingSource::Grid;
        out.error.message = "enter a task mapping, e.g. spatial(2,5).repeat(3,4)";
        return out;
    }
    auto grid = schedule::parseMapping(gridText);
    if (!grid) {
        out.source = MappingSource::Grid;
        out.error = firstError(grid.diagnostics());
        return out;
    }
    auto snap = std::make_shared<MappingSnapshot>(MappingSnapshot{*grid, std::nullopt, gridText, blockText, {}, {}});
    if (!isBlank(blockText)) {
        auto block = schedule::parseMapping(blockText);
        if (!block) {
            out.source = MappingSource::Block;
            out.error = firstError(block.diagnostics());
            return out;
        }
        auto composed = schedule::TaskMapping::compose(*grid, *block);
        if (!composed) {
            out.source = MappingSource::Block;
            out.error = wholeText(firstError(composed.diagnostics()), blockText);
            return out;
        }
        snap->block = *block;
        snap->mapping = *composed;
    }
    auto cells = schedule::ownerGrid(snap->mapping, maxCells);
    if (!cells) {
        out.source = snap->block ? MappingSource::Block : MappingSource::Grid;
        out.error = wholeText(firstError(cells.diagnostics()), snap->block ? blockText : gridText);
        return out;
    }
    snap->cells = std::move(*cells);
    const auto& shape = snap->mapping.taskShape();
    snap->strides.assign(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
        snap->strides[static_cast<std::size_t>(d)] =
            snap->strides[static_cast<std::size_t>(d) + 1] * shape[static_cast<std::size_t>(d) + 1];
    out.snapshot = std::move(snap);
    return out;
}

}  // namespace tessera::views
