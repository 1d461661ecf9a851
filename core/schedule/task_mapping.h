#pragma once
/// @file
/// Hidet task mappings: which worker (thread, warp, block) computes which task of an n-d task grid,
/// and in which order.
///
/// Source: hidet-org/hidet `python/hidet/ir/mapping.py` (SpatialTaskMapping, RepeatTaskMapping,
/// ComposedTaskMapping, ProjectedTaskMapping, auto_map), `python/hidet/ir/stmt.py` (ForStmtAttr) and
/// Ding et al., "Hidet: Task-Mapping Programming Paradigm for Deep Learning Tensor Programs",
/// ASPLOS 2023. The semantics below match Hidet
/// exactly; they are re-implemented here, not translated.
///
/// Semantics
/// - A mapping has `numWorkers()`, a `taskShape()` (rank n >= 1) and `worker2task(w)`, the *ordered*
///   list of n-d tasks worker w (0 <= w < numWorkers) executes. Without projection the union of all
///   lists covers the task grid exactly once.
/// - Ranks are a permutation of 0..n-1. The dimension with the highest rank has stride 1; each lower
///   ranked dimension has the product of the extents of the higher ranked ones (`stridesFromRanks`).
///   Row-major (`row_*`, the default) is ranks 0..n-1 (last dim fastest); column-major (`col_*`) is
///   ranks reversed (first dim fastest).
/// - spatial(d0..dn-1): numWorkers = prod(d); worker w gets the single task whose coordinate i is
///   (w / stride_i) % d_i.
/// - repeat(d0..dn-1): numWorkers = 1; the one worker gets all tasks, sorted by sum(idx_i * stride_i),
///   i.e. nested loops with the rank-0 dimension outermost. Each dimension carries a loop attribute
///   (`LoopAttr`), parsed from Hidet's attrs string; when omitted, extents < 4 get "u+" and others ".".
/// - A * B (chain form `A.spatial(...)`, `A.repeat(...)`): same rank required;
///   numWorkers = A.numWorkers * B.numWorkers, taskShape[i] = A.taskShape[i] * B.taskShape[i];
///   worker w runs wa = w / B.numWorkers in A and wb = w % B.numWorkers in B, and its list is every
///   (ta in A(wa), tb in B(wb)) pair, outer (A) order first, giving task ta[i] * B.taskShape[i] + tb[i].
///   Composition is associative, so a mapping is stored as a flat list of factors, outermost first.
/// - projection({dim: 0}): the dimension collapses to extent 1 (coordinate 0), the worker count and
///   list lengths are kept (tasks then repeat; used for broadcast loads). Projection distributes over
///   composition, so it is stored per factor.
///
/// Errors: constructors and `compose` return `support::Expected`; a rank mismatch, an extent <= 0,
/// ranks that are not a permutation, a bad attrs string, or sizes over the limits (total tasks or
/// workers > kMaxTasks, rank > kMaxRank, more than kMaxFactors factors) are diagnostics, never
/// exceptions or crashes. All arithmetic is int64 and checked.
///
/// Thread rules: TaskMapping is an immutable value; all functions are pure and may be called from
/// any thread concurrently.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/expected.h"

namespace tessera::schedule {

/// Largest number of tasks (and of workers) a mapping may have: 2^31.
constexpr int64_t kMaxTasks = int64_t{1} << 31;
/// Largest rank of a mapping.
constexpr int kMaxRank = 16;
/// Largest number of primitive factors in one composed mapping.
constexpr int kMaxFactors = 64;

/// A task index: one coordinate per dimension of the task shape.
using Task = std::vector<int64_t>;

/// Hidet's ForStmtAttr for one loop of a repeat mapping.
struct LoopAttr {
    enum class Kind {
        Default,         ///< "."
        Unroll,          ///< "u" (factor 0) or "uN" (factor N >= 1): unrolled by the back-end compiler
        UnrollExplicit,  ///< "u+": unrolled by the code generator itself
        Parallel,        ///< "p" (factor 0) or "pN" (N threads)
    };
    Kind kind = Kind::Default;
    int64_t factor = 0;  ///< unroll factor or parallel thread count; 0 = unspecified

    /// ".", "u", "uN", "u+", "p" or "pN".
    std::string str() const;
    /// Hidet's default for a loop of this extent: "u+" below 4, "." otherwise.
    static LoopAttr fromExtent(int64_t extent);
    bool operator==(const LoopAttr&) const = default;
};

/// Parses an attrs string such as "u2." for `numLoops` loops. Spaces are ignored; an empty string
/// gives "." for every loop; a single attribute is applied to every loop; otherwise the count must
/// equal numLoops. Factors must be >= 1 (and <= 2^31). Errors name the offending character offset.
support::Expected<std::vector<LoopAttr>> parseLoopAttrs(std::string_view attrs, size_t numLoops);

/// Strides of a shape under a rank permutation (see file comment). Precondition: ranks valid.
std::vector<int64_t> stridesFromRanks(const std::vector<int64_t>& shape, const std::vector<int>& ranks);

enum class PrimitiveKind { Spatial, Repeat };

/// One level of a composed mapping: a spatial or repeat primitive, possibly projected.
struct Factor {
    PrimitiveKind kind = PrimitiveKind::Spatial;
    std::vector<int64_t> shape;     ///< extents as written (before projection), all >= 1
    std::vector<int> ranks;         ///< permutation of 0..n-1
    std::vector<LoopAttr> attrs;    ///< repeat only: one per dimension (index = dimension, not rank)
    std::vector<bool> projected;    ///< per dimension: collapsed to coordinate 0 by projection

    int rank() const { return static_cast<int>(shape.size()); }
    /// prod(shape) for spatial (projection keeps it), 1 for repeat.
    int64_t numWorkers() const;
    /// shape with projected dimensions set to 1.
    std::vector<int64_t> taskShape() const;
    /// Tasks each worker gets from this factor: 1 for spatial, prod(shape) for repeat.
    int64_t tasksPerWorker() const;
    std::vector<int64_t> strides() const { return stridesFromRanks(shape, ranks); }
    bool rowMajor() const;     ///< ranks == 0..n-1
    bool columnMajor() const;  ///< ranks == n-1..0
    /// Canonical expression of this primitive alone, e.g. "spatial(2,5)", "repeat(3,4, attrs=\"u2.\")",
    /// "spatial(2,5, ranks=[1,0])" (projection not included).
    std::string str() const;
    bool operator==(const Factor&) const = default;
};

class TaskMapping {
public:
    /// spatial(shape) with ranks (empty = row-major).
    static support::Expected<TaskMapping> spatial(std::vector<int64_t> shape, std::vector<int> ranks = {});
    /// repeat(shape) with ranks (empty = row-major) and an attrs string (nullopt = Hidet's default
    /// from the extents; see parseLoopAttrs).
    static support::Expected<TaskMapping> repeat(std::vector<int64_t> shape, std::vector<int> ranks = {},
                                                 std::optional<std::string_view> attrs = std::nullopt);
    static support::Expected<TaskMapping> rowSpatial(std::vector<int64_t> shape);
    static support::Expected<TaskMapping> colSpatial(std::vector<int64_t> shape);
    static support::Expected<TaskMapping> rowRepeat(std::vector<int64_t> shape);
    static support::Expected<TaskMapping> colRepeat(std::vector<int64_t> shape);
    /// Hidet's auto_map: requires workers >= 1 dividing prod(shape). Walking dimensions from the
    /// highest rank down: spatial_d = gcd(remaining, d), repeat_d = d / spatial_d,
    /// remaining /= spatial_d. Result: repeat(repeat_shape, ranks) * spatial(spatial_shape, ranks).
    /// Example: autoMap({8,32}, 64) == repeat(4,1).spatial(2,32).
    static support::Expected<TaskMapping> autoMap(std::vector<int64_t> shape, int64_t workers,
                                                  std::vector<int> ranks = {});
    /// A * B; errors: "cannot compose rank-2 spatial(2,5) with rank-1 repeat(4)", size limits.
    static support::Expected<TaskMapping> compose(const TaskMapping& outer, const TaskMapping& inner);
    /// Builds a mapping from factors (validated as above).
    static support::Expected<TaskMapping> fromFactors(std::vector<Factor> factors);

    /// Collapses the given dimensions (coordinate 0, extent 1); errors on a dimension out of range.
    support::Expected<TaskMapping> projection(const std::vector<int>& dims) const;

    int rank() const { return static_cast<int>(m_taskShape.size()); }
    int64_t numWorkers() const { return m_numWorkers; }
    const std::vector<int64_t>& taskShape() const { return m_taskShape; }
    /// prod(taskShape()).
    int64_t numTasks() const { return m_numTasks; }
    /// Length of every worker's list (the same for all workers): the number of steps.
    int64_t tasksPerWorker() const { return m_tasksPerWorker; }
    /// Levels, outermost first (A of A*B first).
    const std::vector<Factor>& factors() const { return m_factors; }

    /// Worker w's ordered task list (Hidet order). Allocates tasksPerWorker() tasks: check that first
    /// for huge repeats. Precondition: 0 <= w < numWorkers() (otherwise an empty list).
    std::vector<Task> worker2task(int64_t w) const;
    /// Same order, streamed; `fn(step, task)` returns false to stop early.
    void forEachTask(int64_t w, const std::function<bool(int64_t step, const Task& task)>& fn) const;
    /// The `step`-th task of worker w (0-based), without building the list. Empty Task when out of range.
    Task taskAt(int64_t w, int64_t step) const;

    /// Canonical expression, parseable by `parseMapping` and equal after the round trip:
    /// chain form "spatial(2,5).repeat(3,4)"; ranks printed only when not row-major; attrs only when
    /// they differ from the extent defaults; a projected factor is printed as
    /// "... * spatial(2,5).projection({0: 0})".
    std::string str() const;

    bool operator==(const TaskMapping& other) const { return m_factors == other.m_factors; }

private:
    std::vector<Factor> m_factors;
    std::vector<int64_t> m_taskShape;
    int64_t m_numWorkers = 1;
    int64_t m_numTasks = 1;
    int64_t m_tasksPerWorker = 1;
};

/// Who owns a cell of the task grid.
struct CellOwner {
    int64_t worker = -1;  ///< first worker whose list holds the cell; -1 if none
    int64_t step = -1;    ///< position of the cell in that worker's list
    int32_t count = 0;    ///< how many (worker, step) pairs hold it (1 for a valid unprojected mapping)
};

/// For every cell of the task grid (row-major over taskShape()), its owner. Errors when the grid or
/// the total number of (worker, step) pairs exceeds `maxCells`.
support::Expected<std::vector<CellOwner>> ownerGrid(const TaskMapping& mapping, int64_t maxCells = int64_t{1} << 24);

/// Options for `validateMapping`.
struct ValidationOptions {
    std::vector<int64_t> tensorShape;  ///< shape the mapping is applied to; empty = not checked
    int64_t maxWorkers = 1024;         ///< thread limit of one block; <= 0 = not checked
};

/// Checks a built mapping against a tensor and a worker limit. Errors: rank differs from the tensor;
/// task shape smaller than the tensor in some dimension ("task shape [8,16] does not cover [10,16]:
/// dim 0 needs 2 blocks of 8 (ceil(10/8)) and the predicate i < 10"); workers over the limit.
/// Warnings: task shape larger than the tensor (predicate needed, idle tasks), projected mapping
/// (tasks repeat). Empty list = valid.
support::DiagnosticList validateMapping(const TaskMapping& mapping, const ValidationOptions& options);

/// C-like text of the index expressions and loop nest the mapping expands to, as Hidet's
/// lower_task_mapping pass does: the worker index `workerVar` is split per level (w / inner workers,
/// % level workers; the outermost split needs no mod), spatial levels become index expressions (mod
/// omitted on the rank-0 dimension), repeat levels become `for` loops in rank order with their
/// attrs as pragmas/comments, and each task coordinate is combined as outer * inner extent + inner.
/// The loop body is written `body(i, j, ...)`. Deterministic (golden-tested).
std::string loweringPreview(const TaskMapping& mapping, std::string_view workerVar = "w");

}  // namespace tessera::schedule
