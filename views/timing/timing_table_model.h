#pragma once
/// @file
/// The Timings dock's data: one row per kernel of a run (a TimingSnapshot the app builds from a
/// pipeline::RunReport), shown by TimingTableModel with these columns:
///
/// | column     | display                                  | sort value (Qt::UserRole)     |
/// |------------|------------------------------------------|-------------------------------|
/// | Kernel     | node name                                | name                          |
/// | Op         | op type, "(ref)" for reference steps      | op type                       |
/// | FLOPs      | "1.23 M" (SI prefixes)                   | FLOPs                         |
/// | Bytes      | "4.50 MB" (global bytes issued)          | bytes                         |
/// | AI         | FLOP/byte, 2 decimals                    | FLOP/byte                     |
/// | Median     | "12.3 us", "1.234 ms", "1.234 s"; "-" untimed | seconds                  |
/// | GFLOP/s    | 2 decimals                               | GFLOP/s                       |
/// | GB/s       | 2 decimals                               | GB/s                          |
/// | Rel. error | "1.2e-07"; "-" unchecked                 | relative L2 error (-1 unchecked) |
/// | Status     | kernelStatusLabel(), coloured            | status enum value             |
/// | vs pinned  | only while a run is pinned (setPinned): pinned median / this median, "1.25x" (>1: faster now, green; <1: slower, red); "new" for a kernel the pinned run lacks; "gone" on the extra rows; "-" untimed | the ratio; 0 new, -1 gone/untimed |
///
/// Comparison with a pinned run: a kernel is matched with the pinned run's kernel of the same
/// name, else with one covering the same set of nodes (TimingRow::ops, in any order); each pinned
/// kernel matches at most once. Pinned kernels no current kernel matches are listed after the
/// current rows as "gone" rows (kernel, op and, in the tooltip, the pinned time; the other
/// columns "-"). The extra column is VsPinned == ColumnCount: columnCount() is ColumnCount + 1
/// while pinned, ColumnCount otherwise.
///
/// Thread rules: UI thread only (a Qt item model); the snapshot is a plain value.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <QAbstractTableModel>

#include "views/graph/kernel_status.h"

namespace tessera::views {

struct TimingRow {
    std::string kernel;            ///< node name (the graph selection key)
    std::string opType;
    bool reference = false;        ///< ran in the reference interpreter
    double flops = 0;
    double usefulFlops = -1;  ///< op registry FLOPs (-1 unknown); GFLOP/s use it when known
    std::int64_t bytes = 0;        ///< global bytes issued
    double medianSeconds = 0;
    std::int64_t reps = 0;         ///< 0 = not timed
    bool checked = false;
    double relError = 0;           ///< worst relative L2 over outputs (when checked)
    double maxAbsError = 0;
    std::string checkSummary;      ///< one line per output, for the tooltip
    KernelStatus status = KernelStatus::None;
    std::vector<std::string> ops;  ///< nodes the kernel covers (for matching with a pinned run)
};

/// A kernel of the pinned run, as the comparison needs it.
struct PinnedKernel {
    std::string kernel;
    std::string opType;
    std::vector<std::string> ops;
    double medianSeconds = 0;
    std::int64_t reps = 0;  ///< 0 = not timed
};

/// The run the current one is compared with (Run > Pin Run).
struct PinnedRun {
    std::vector<PinnedKernel> kernels;
    double totalSeconds = 0;  ///< end to end, median (0 = not timed)
    std::string label;        ///< e.g. "pinned 14:03:12"
    /// The conditions of the pinned run, compared with the current run's in the summary.
    int threads = 0;          ///< OpenMP threads (0 = unknown)
    std::string target;       ///< "CPU" or "CUDA" (empty = unknown)
    std::string machine;      ///< the CUDA device's name; empty for the CPU or when unknown
};

struct TimingSnapshot {
    std::vector<TimingRow> rows;   ///< execution order
    double totalSeconds = 0;       ///< end to end, median
    std::int64_t totalReps = 0;
    int threads = 0;
    bool timed = true;
    bool checked = false;
    std::string compileNote;       ///< e.g. "compile 1.2 s" or "compile cache hit"
    /// Why the times may be inflated (the run's "timing" warning, e.g. other processes used 62% of
    /// the CPUs' time); empty when none. Shown in the summary, not only in Problems.
    std::string timingWarning;
    std::string target;            ///< "CPU" or "CUDA" (empty = unknown)
    std::string machine;           ///< the CUDA device's name; empty for the CPU or when unknown
};

/// A kernel as the cross-run matching sees it: its name and the nodes it covers.
struct KernelIdentity {
    const std::string* name = nullptr;              ///< never null
    const std::vector<std::string>* ops = nullptr;  ///< never null; may be empty
};

/// Matches the kernels of one run (`current`) with those of another (`other`): by equal name
/// first, then (for kernels left, with nodes) by the same set of nodes in any order; each `other`
/// kernel matches at most once. Returns, per current kernel, its index in `other` or -1.
/// Used by the pinned comparison and by the Timings history (timing_history.h).
std::vector<int> matchKernels(const std::vector<KernelIdentity>& current, const std::vector<KernelIdentity>& other);

class TimingTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Kernel, Op, Flops, Bytes, Intensity, Median, GFlops, GBps, RelError, Status, ColumnCount,
                  VsPinned = ColumnCount };

    explicit TimingTableModel(QObject* parent = nullptr);

    void setSnapshot(TimingSnapshot snapshot);
    const TimingSnapshot& snapshot() const { return m_snapshot; }
    /// Row of the kernel named `name`, -1 if none (gone rows included).
    int rowOfKernel(const std::string& name) const;
    /// The kernel of `row` (a current or a gone row), empty outside.
    std::string kernelAt(int row) const;
    /// Whether `row` is a pinned-only ("gone") row.
    bool isGoneRow(int row) const;

    /// Compares with `pinned` (see the file comment); nullptr ends the comparison.
    void setPinned(std::shared_ptr<const PinnedRun> pinned);
    const std::shared_ptr<const PinnedRun>& pinned() const { return m_pinned; }
    /// The pinned kernel matching current row `row`, null when none (or not pinned).
    const PinnedKernel* pinnedMatch(int row) const;
    /// "1.25x", "new", "gone", "-"; empty when not pinned.
    QString comparisonText(int row) const;

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// "0.8 us", "12.3 us", "1.234 ms", "1.234 s" (as tessera-cli run prints times).
    static QString formatSeconds(double seconds);
    /// A time ratio: "1.25x"; below 0.1 two significant digits ("0.0018x"), from 100 on whole ("250x").
    static QString formatRatio(double ratio);
    /// SI prefixes: "950", "1.23 K", "45.6 M", "1.20 G" (3 significant digits); `unit` appended.
    static QString formatCount(double value, const QString& unit = QString());

private:
    void match();
    QVariant comparisonData(int row, int role) const;
    QVariant goneData(int row, int col, int role) const;

    TimingSnapshot m_snapshot;
    std::shared_ptr<const PinnedRun> m_pinned;
    std::vector<int> m_match;  ///< per current row: index into m_pinned->kernels, -1 none
    std::vector<int> m_gone;   ///< pinned kernels no row matches, in pinned order
};

}  // namespace tessera::views
