#pragma once
/// @file
/// The memory view of the mapping visualizer: tensor layout, shape and element size controls, and a
/// per-warp table for one step of the mapping: distinct 32-byte sectors touched (global-memory
/// coalescing) and shared-memory wavefronts (32 banks of 4 bytes), from
/// core/schedule/memory_analysis.h. Warps that are uncoalesced or bank-conflicted are red.
///
/// It only displays a report it is given; the panel runs the (pure, fast) analysis and passes the
/// result. Thread rules: UI thread only.

#include <cstdint>
#include <optional>

#include <QWidget>

#include "core/schedule/memory_analysis.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QTableWidget;

namespace tessera::views {

class MemoryView : public QWidget {
    Q_OBJECT
public:
    enum Column { ColWarp, ColWorkers, ColLanes, ColSectors, ColWavefronts, ColVerdict, ColumnCount };

    explicit MemoryView(QWidget* parent = nullptr);

    /// Fills layout, shape and element size from the controls; false (with a message) when the
    /// shape text is not a comma-separated list of positive integers.
    bool readSpec(schedule::MemoryAccessSpec* spec, QString* error) const;
    /// The task shape shown as the default tensor shape (placeholder of the shape field).
    void setDefaultShape(const std::vector<std::int64_t>& shape);

    /// Shows a report (or an error) of a mapping with `numWorkers` workers, in warps of `warpSize`.
    /// `threadsPerBlock` > 1 labels warps with their block.
    void setReport(const schedule::MemoryReport& report, std::int64_t numWorkers, std::int64_t warpSize,
                   std::int64_t threadsPerBlock);
    void setError(const QString& message);
    /// CPU target (true): the warp analysis is what the mapping would do on a GPU, not a fault of
    /// this kernel; the summary says "GPU view: if these workers were CUDA threads ..." and the
    /// table uses neutral colours. Takes effect with the next setReport.
    void setCpuTarget(bool cpu) { m_cpuTarget = cpu; }
    bool cpuTarget() const { return m_cpuTarget; }
    const std::optional<schedule::MemoryReport>& report() const { return m_report; }

    QComboBox* layoutBox() const { return m_layout; }
    QComboBox* dtypeBox() const { return m_dtype; }
    QLineEdit* shapeEdit() const { return m_shape; }
    QTableWidget* table() const { return m_table; }
    QLabel* summaryLabel() const { return m_summary; }

signals:
    /// Layout, shape or element size changed.
    void specChanged();

private:
    QComboBox* m_layout;
    QComboBox* m_dtype;
    QLineEdit* m_shape;
    QLabel* m_summary;
    QTableWidget* m_table;
    std::optional<schedule::MemoryReport> m_report;
    bool m_cpuTarget = false;
};

}  // namespace tessera::views
