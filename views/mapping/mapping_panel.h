#pragma once
/// @file
/// The task-mapping visualizer panel (the contents of the main window's "Task mapping" dock).
///
/// - Expression editors: "Mapping" (the grid level of a kernel, or a whole mapping) and an
///   optional "Block" mapping for the threads of each block; the two compose as grid * block
///   (Hidet semantics: the grid factor is the coarse level). Every edit re-parses at once; an
///   invalid expression is underlined at the diagnostic's columns, the compiler-style diagnostic
///   (source, caret, message, hint) is shown under the editors, and the last good drawing stays.
/// - The canvas (MappingCanvas) with its legend: colour by worker, or by block / thread when two
///   levels are given; pick a worker (click a cell or a swatch, or the spin boxes) to number its
///   tasks in execution order; with two levels, pick block b and thread t to outline the part of
///   the output block b owns and number thread t's tasks.
/// - A step slider and Play button: step s highlights the s-th task of every worker, i.e. what all
///   workers do together at that step of the repeat order.
/// - Ranks above 2: choose the dims drawn as rows and columns; the others get index spin boxes.
/// - The memory view: per-warp sectors and bank wavefronts of the selected step (step 0 while no
///   step is selected), from core/schedule/memory_analysis.h; bad warps are red there and their
///   cells are outlined red on the canvas while a step is selected.
///
/// - The kernel row (MappingApplyBar, issue 8): the kernel the expressions belong to, Apply
///   (Ctrl+Return anywhere in the panel) and Reset to Default; the app answers through it.
///
/// Parsing and analysis are pure and fast for the sizes the canvas accepts (kMaxVisualCells), so
/// they run synchronously on the UI thread; the panel starts no jobs and owns no threads.
/// mappingEdited reports each successfully parsed edit (intent for the app, e.g. to store the
/// schedule).
///
/// Thread rules: UI thread only.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <QString>
#include <QWidget>

#include "core/schedule/memory_analysis.h"
#include "views/mapping/mapping_canvas.h"
#include "views/mapping/mapping_snapshot.h"

class QComboBox;
class QLabel;
class QSlider;
class QSpinBox;
class QTimer;
class QToolButton;

namespace tessera::views {

class ExpressionEdit;
class MappingApplyBar;
class MappingLegend;
class MemoryView;

class MappingPanel : public QWidget {
    Q_OBJECT
public:
    static constexpr int kPlayIntervalMs = 600;

    explicit MappingPanel(QWidget* parent = nullptr);
    ~MappingPanel() override;

    /// Sets both editors (blank `block` = single level) and re-parses.
    void setExpressions(const QString& grid, const QString& block = QString());
    QString gridExpression() const;
    QString blockExpression() const;

    /// The drawing on screen (the last expression that parsed), or null.
    std::shared_ptr<const MappingSnapshot> snapshot() const { return m_snapshot; }
    /// The current parse error ("" when the expressions are valid).
    QString errorText() const { return m_errorText; }

    /// Step highlighted (-1: none) and the step the memory view analyses.
    void setStep(std::int64_t step);
    std::int64_t step() const;
    /// Single level: the worker whose tasks are numbered (-1: none).
    void setFocusWorker(std::int64_t worker);
    /// Two levels: block b (-1: none) and thread t within it (-1: none).
    void setBlockThread(std::int64_t block, std::int64_t thread);
    void setColorBy(MappingCanvas::ColorBy mode);
    void setPlaying(bool playing);
    bool isPlaying() const;
    /// CPU target: the memory view labels its warp analysis as a GPU view in neutral colours and
    /// the canvas outlines no cells (MemoryView::setCpuTarget).
    void setCpuTarget(bool cpu);

    /// The kernel row: which kernel Apply targets, its buttons and the outcome line.
    MappingApplyBar* applyBar() const { return m_applyBar; }
    ExpressionEdit* gridEdit() const { return m_gridEdit; }
    ExpressionEdit* blockEdit() const { return m_blockEdit; }
    MappingCanvas* canvas() const { return m_canvas; }
    MappingLegend* legend() const { return m_legend; }
    MemoryView* memoryView() const { return m_memory; }
    QSlider* stepSlider() const { return m_stepSlider; }
    QToolButton* playButton() const { return m_play; }
    QLabel* diagnosticLabel() const { return m_diagnostic; }
    QLabel* selectionLabel() const { return m_selection; }
    QLabel* infoLabel() const { return m_info; }

signals:
    /// The expressions parsed and are now drawn.
    void mappingEdited(const QString& grid, const QString& block);

private:
    void rebuild();
    void showError(const MappingBuild& build);
    void applySnapshot(std::shared_ptr<const MappingSnapshot> snapshot);
    void rebuildSliceControls();
    void applySlice();
    void applyFocus();
    void updateStepLabel();
    void updateSelectionText();
    void runMemoryAnalysis();
    void advancePlay();
    void onCellClicked(qint64 worker, qint64 step);
    void onLegendClicked(qint64 key);

    MappingApplyBar* m_applyBar;
    ExpressionEdit* m_gridEdit;
    ExpressionEdit* m_blockEdit;
    QLabel* m_gridLabel;
    QLabel* m_diagnostic;
    QLabel* m_info;
    QWidget* m_levelRow;
    QComboBox* m_colorBy;
    QSpinBox* m_blockSpin;
    QLabel* m_workerLabel;
    QSpinBox* m_workerSpin;
    QWidget* m_sliceRow;
    QComboBox* m_rowDim;
    QComboBox* m_colDim;
    std::vector<QSpinBox*> m_fixedSpins;
    std::vector<QLabel*> m_fixedLabels;
    QToolButton* m_play;
    QSlider* m_stepSlider;
    QLabel* m_stepLabel;
    QTimer* m_playTimer;
    MappingCanvas* m_canvas;
    MappingLegend* m_legend;
    QLabel* m_selection;
    MemoryView* m_memory;

    std::shared_ptr<const MappingSnapshot> m_snapshot;
    QString m_errorText;
    bool m_updatingControls = false;
};

}  // namespace tessera::views
