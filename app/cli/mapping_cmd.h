#pragma once
/// @file
/// `tessera-cli mapping EXPR`: parses a Hidet task-mapping expression (core/schedule/mapping_parser.h)
/// and prints it.
/// - plain: a header (canonical expression, workers, task shape, tasks per worker) and the task grid
///   with the worker id of each cell; 1-D as one row, 2-D directly, higher ranks as 2-D slices over
///   the last two dimensions.
/// - `--json`: exactly one object {"num_workers": N, "task_shape": [...], "workers": [[[i, j], ...], ...]}
///   where workers[w] is worker w's ordered task list.
/// - `--loops`: the lowering preview (index expressions and loop nest).
/// - `--memory`: per-warp sectors and bank wavefronts at `--step` for a tensor of `--tensor` shape
///   (default: the task shape), `--elem-bytes` bytes per element, row-major or `--col-major`.
/// - `--tensor` / `--max-workers`: validation against a tensor shape and a block's thread limit.
///
/// Exit codes: 0 success, 2 bad input (the expression echoed with a caret under the error column,
/// the message and a hint go to `err`), 1 internal error. Grids over kMaxPrintedPairs (worker, task)
/// pairs are refused with exit 2.
/// Thread rules: none (runs on the caller's thread).

#include <cstdint>
#include <iosfwd>
#include <string>

namespace tessera::cli {

struct MappingOptions {
    std::string expression;
    bool json = false;
    bool loops = false;
    bool memory = false;
    std::string tensorShape;     ///< "32,33"; empty = the task shape / no coverage check
    int64_t elemBytes = 4;
    int64_t step = 0;
    bool columnMajor = false;
    int64_t maxWorkers = 0;      ///< > 0: check the worker count against this thread limit
};

/// Largest number of (worker, task) pairs `--json` or the grid prints.
constexpr int64_t kMaxPrintedPairs = int64_t{1} << 22;

int runMapping(const MappingOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
