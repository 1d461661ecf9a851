#pragma once
/// @file
/// The mapping visualizer's canvas: a 2-D slice of a task grid, each cell filled with the colour of
/// the worker (or block, or thread) that owns it, with pan (drag), zoom (wheel, anchored at the
/// cursor) and fit (double-click).
///
/// Highlights, all driven by the owner table of a MappingSnapshot:
/// - focus worker (picked, or hovered while the mouse is over the grid): its cells keep their
///   colour, are outlined and show their position in the worker's ordered list (0 = first
///   executed); other cells are faded;
/// - step s: the cells every worker executes at step s are full colour and outlined; earlier steps
///   are half faded, later ones nearly white;
/// - region block b (two-level snapshots): the cells block b owns are outlined with a thick line,
///   and block boundaries are always drawn between blocks;
/// - flagged workers: while a step is selected, their step-s cells get a red corner mark (bad
///   warps from the memory view).
///
/// Rendering: plain QPainter, chosen after measuring (bench/mapping_canvas_bench.cpp). Cell fills
/// are written once into a QImage with one pixel per cell (rebuilt only when the snapshot, slice or
/// a highlight changes), and each paint draws the visible part of that image scaled without
/// smoothing, plus grid lines, outlines and text for the visible cells only; text is skipped below
/// kTextMinCell pixels per cell and grid lines below kGridMinCell. Measured for
/// spatial(16,16).repeat(16,16) (256x256 = 65,536 cells) on a 1000x700 canvas, RelWithDebInfo, on a
/// loaded 2-core machine: median 0.24 ms per frame fitted (2 px cells), 0.4-0.6 ms at 4-8 px,
/// 4.0 ms at 16 px (the worst case: ~2,600 labels), 1.3 ms at 32 px; a highlight change (hover
/// over a new worker: image rebuild + frame) 1.4 ms; parse + owner table per edit 5 ms. All are far
/// under the 16.7 ms of a 60 Hz frame, so Dear ImGui in a QOpenGLWidget (which also cannot run
/// under the offscreen platform the GUI tests use) would buy nothing.
///
/// Thread rules: UI thread only.

#include <cstdint>
#include <memory>
#include <vector>

#include <QImage>
#include <QWidget>

#include "views/mapping/mapping_snapshot.h"

namespace tessera::views {

class MappingCanvas : public QWidget {
    Q_OBJECT
public:
    enum class ColorBy { Worker, Block, Thread };

    static constexpr double kTextMinCell = 14.0;
    static constexpr double kGridMinCell = 5.0;
    static constexpr double kMinCell = 0.05;
    static constexpr double kMaxCell = 160.0;

    explicit MappingCanvas(QWidget* parent = nullptr);

    /// Replaces the drawing; keeps the zoom when the task shape is unchanged, else fits.
    void setSnapshot(std::shared_ptr<const MappingSnapshot> snapshot);
    const MappingSnapshot* snapshot() const { return m_snapshot.get(); }

    /// Which dims are drawn as rows and columns (rowDim -1: a single row), and the index of every
    /// other dim (`fixed[d]` is ignored for the drawn dims). Clamped to the shape.
    void setSlice(int rowDim, int colDim, std::vector<std::int64_t> fixed);
    int rowDim() const { return m_rowDim; }
    int colDim() const { return m_colDim; }
    std::int64_t rows() const { return m_rows; }
    std::int64_t cols() const { return m_cols; }

    void setColorBy(ColorBy mode);
    ColorBy colorBy() const { return m_colorBy; }
    /// Id that picks the colour of a cell owned by `worker` under the current mode.
    std::int64_t colorKey(std::int64_t worker) const;
    std::int64_t numColorKeys() const;

    void setFocusWorker(std::int64_t worker);
    std::int64_t focusWorker() const { return m_focus; }
    std::int64_t hoveredWorker() const { return m_hover; }
    /// The hovered worker while there is one, else the focus worker.
    std::int64_t effectiveFocus() const { return m_hover >= 0 ? m_hover : m_focus; }
    void setStep(std::int64_t step);  ///< -1: no step highlight
    std::int64_t step() const { return m_step; }
    void setRegionBlock(std::int64_t block);  ///< -1: none
    std::int64_t regionBlock() const { return m_regionBlock; }
    /// Per worker: true when its access at the current step is in a bad warp. Empty = none.
    void setFlaggedWorkers(std::vector<bool> flags);

    /// Flat task index of a drawn cell (row r, column c of the slice).
    std::int64_t flatAt(std::int64_t r, std::int64_t c) const;
    /// Owner of a drawn cell, or nullptr out of range / without a snapshot.
    const schedule::CellOwner* ownerAt(std::int64_t r, std::int64_t c) const;
    /// The fill colour the cell is drawn with under the current highlights.
    QColor fillColor(std::int64_t r, std::int64_t c) const;
    /// Full task index of a drawn cell.
    std::vector<std::int64_t> taskAt(std::int64_t r, std::int64_t c) const;

    double cellSize() const { return m_cell; }
    /// Zooms so that cells are `pixels` wide, keeping the grid point under `anchor` fixed.
    void setCellSize(double pixels, QPointF anchor);
    void setCellSize(double pixels) { setCellSize(pixels, QPointF(width() / 2.0, height() / 2.0)); }
    void fitToView();
    /// Widget rectangle of a drawn cell.
    QRectF cellRect(std::int64_t r, std::int64_t c) const;
    bool cellAt(QPointF pos, std::int64_t* r, std::int64_t* c) const;

    /// Paints into any painter (the widget, or a QImage in the benchmark); `area` in widget coordinates.
    void paintCanvas(QPainter& p, const QRect& area);

    QSize sizeHint() const override { return {560, 360}; }
    QSize minimumSizeHint() const override { return {160, 120}; }

signals:
    /// The worker under the mouse changed (-1 when none).
    void workerHovered(qint64 worker);
    /// A cell was clicked (not dragged): its owner and the cell's step in that owner's list.
    void cellClicked(qint64 worker, qint64 step);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    void updateSliceGeometry();
    void invalidateImage();
    void rebuildImage();
    QRgb baseRgb(std::int64_t key) const;
    QRect gridArea() const;
    void setHover(std::int64_t worker);
    void drawAxes(QPainter& p, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1);

    std::shared_ptr<const MappingSnapshot> m_snapshot;
    int m_rowDim = -1;
    int m_colDim = 0;
    std::vector<std::int64_t> m_fixed;
    std::int64_t m_rows = 0, m_cols = 0;
    std::int64_t m_base = 0, m_rowStride = 0, m_colStride = 1;

    ColorBy m_colorBy = ColorBy::Worker;
    std::int64_t m_focus = -1, m_hover = -1, m_step = -1, m_regionBlock = -1;
    std::vector<bool> m_flagged;
    mutable std::vector<QRgb> m_keyColors;

    QImage m_image;
    bool m_imageDirty = true;
    double m_cell = 20.0;
    QPointF m_origin{40, 20};
    bool m_fitted = false;
    bool m_dragging = false;
    QPoint m_pressPos;
    QPointF m_pressOrigin;
};

}  // namespace tessera::views
