#pragma once
/// @file
/// Memory-access analysis of one step of a task mapping, for the mapping visualizer's memory view
/// and `tessera-cli mapping --memory`: global-memory coalescing (32-byte sectors) and shared-memory
/// bank conflicts, per warp.
///
/// Model (what is counted, precisely):
/// - Task (i0..in-1) reads element (i0..in-1) of a tensor of `shape` (default: the task shape; same
///   rank required) stored row- or column-major from address 0, `elemBytes` bytes per element. A
///   task outside the tensor is predicated off (its lane is inactive).
/// - At step s, worker w issues the load of the s-th task of its ordered list (`worker2task(w)[s]`);
///   workers whose list is shorter are inactive. Warp k is workers [32k, 32k+32) (the last warp may be
///   partial); only active lanes count.
/// - Global memory: `sectors` = number of distinct 32-byte sectors (address / 32) covered by the
///   bytes [addr, addr + elemBytes) of all active lanes. `idealSectors` = ceil(U * elemBytes / 32)
///   where U is the number of distinct elements the warp reads: the fewest sectors that can hold the
///   requested bytes. Uncoalesced when sectors > idealSectors.
/// - Shared memory (same addresses, 32 banks of 4 bytes): the warp's accesses touch a set of distinct
///   4-byte words (address / 4); word x lives in bank x % 32. `wavefronts` = the largest number of
///   distinct words in any one bank = the number of serialized shared-memory wavefronts (lanes
///   reading the same word are a broadcast and cost nothing extra). `idealWavefronts` =
///   ceil(distinct words / 32), the minimum for that many words (2 for a warp of 8-byte loads, which
///   is therefore not a conflict). Bank-conflicted when wavefronts > idealWavefronts; the conflict
///   degree is wavefronts / idealWavefronts rounded up.
/// - Hand-worked: spatial(32) f32 row-major: 4 sectors (ideal 4), 1 wavefront. spatial(32,1) over a
///   32x32 f32 row-major tensor (column 0): 32 sectors (ideal 4), 32 wavefronts (32-way conflict);
///   over 32x33 (padded): 32 sectors, 1 wavefront. spatial(32) f64: 8 sectors, 2 wavefronts (ideal 2).
///
/// Errors: elemBytes < 1 or > 256, a shape of the wrong rank or with extents <= 0, step < 0,
/// or more than `maxWorkers` workers to analyse (default 2^20).
///
/// Thread rules: pure function; any thread.

#include <cstdint>
#include <vector>

#include "core/schedule/task_mapping.h"
#include "core/support/expected.h"

namespace tessera::schedule {

enum class MemoryLayout { RowMajor, ColumnMajor };

struct MemoryAccessSpec {
    std::vector<int64_t> shape;  ///< tensor shape; empty = the mapping's task shape
    MemoryLayout layout = MemoryLayout::RowMajor;
    int64_t elemBytes = 4;
    int64_t step = 0;             ///< which task of each worker's list
    int64_t warpSize = 32;
    int64_t sectorBytes = 32;
    int64_t numBanks = 32;
    int64_t bankBytes = 4;
    int64_t maxWorkers = int64_t{1} << 20;
};

struct WarpAccess {
    int64_t warp = 0;             ///< warp index k: workers [k*warpSize, (k+1)*warpSize)
    int64_t activeLanes = 0;
    int64_t distinctElements = 0;
    int64_t sectors = 0;
    int64_t idealSectors = 0;
    int64_t distinctWords = 0;
    int64_t wavefronts = 0;       ///< max distinct words in one bank
    int64_t idealWavefronts = 0;
    int64_t conflictDegree = 1;   ///< ceil(wavefronts / idealWavefronts); 1 = conflict-free
    bool uncoalesced = false;     ///< sectors > idealSectors
    bool bankConflict = false;    ///< wavefronts > idealWavefronts
};

struct MemoryReport {
    int64_t steps = 0;            ///< number of steps (length of every worker's list)
    int64_t step = 0;
    std::vector<WarpAccess> warps;
    int64_t badWarps = 0;         ///< warps uncoalesced or bank-conflicted
    int64_t totalSectors = 0;
    int64_t totalIdealSectors = 0;
};

support::Expected<MemoryReport> analyzeMemory(const TaskMapping& mapping, const MemoryAccessSpec& spec);

}  // namespace tessera::schedule
