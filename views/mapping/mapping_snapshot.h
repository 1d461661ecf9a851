#pragma once
/// @file
/// What the mapping visualizer draws: a parsed mapping (one level, or a kernel's grid and block
/// mappings composed as grid * block) plus a per-cell owner table, computed once per expression so
/// that painting never enumerates the mapping again.
///
/// Levels: with a block mapping, the composed mapping's worker w is thread t = w % T of block
/// b = w / T, where T = block.numWorkers() (Hidet's composition: the outer factor is the coarse
/// level). So block b owns the cells whose owner lies in [b*T, (b+1)*T) and thread t of block b owns
/// exactly the composed worker b*T + t's tasks. All semantics come from core/schedule (parseMapping,
/// TaskMapping::compose, ownerGrid); this file only arranges them for drawing.
///
/// Thread rules: buildMappingSnapshot is a pure function (any thread); a snapshot is immutable.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/task_mapping.h"
#include "core/support/diagnostic.h"

namespace tessera::views {

/// Largest task grid the visualizer enumerates (cells and (worker, step) pairs).
constexpr std::int64_t kMaxVisualCells = std::int64_t{1} << 22;

struct MappingSnapshot {
    schedule::TaskMapping mapping;               ///< what is drawn: grid * block, or the single mapping
    std::optional<schedule::TaskMapping> block;  ///< the block (thread) level, when two-level
    std::string gridText, blockText;             ///< the expressions as typed
    std::vector<schedule::CellOwner> cells;      ///< owner per cell, row-major over taskShape()
    std::vector<std::int64_t> strides;           ///< row-major strides of taskShape()

    const std::vector<std::int64_t>& shape() const { return mapping.taskShape(); }
    int rank() const { return mapping.rank(); }
    std::int64_t numWorkers() const { return mapping.numWorkers(); }
    std::int64_t steps() const { return mapping.tasksPerWorker(); }
    bool twoLevel() const { return block.has_value(); }
    /// Threads per block (1 for a single-level mapping: every worker is its own "block").
    std::int64_t threadsPerBlock() const { return block ? block->numWorkers() : 1; }
    std::int64_t numBlocks() const { return numWorkers() / threadsPerBlock(); }
    /// Flat cell index of a full task index.
    std::int64_t flatIndex(const std::vector<std::int64_t>& task) const;
};

/// Which editor an error belongs to.
enum class MappingSource { None, Grid, Block };

struct MappingBuild {
    std::shared_ptr<const MappingSnapshot> snapshot;  ///< null on error
    support::Diagnostic error;                         ///< columns refer to the text of `source`
    MappingSource source = MappingSource::None;
};

/// Parses `gridText` (and `blockText` unless it is blank), composes them and fills the owner table.
MappingBuild buildMappingSnapshot(const std::string& gridText, const std::string& blockText,
                                  std::int64_t maxCells = kMaxVisualCells);

}  // namespace tessera::views
