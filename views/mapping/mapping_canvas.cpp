#include "views/mapping/mapping_canvas.h"

#include <algorithm>
#include <cmath>

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include "views/mapping/mapping_palette.h"

namespace tessera::views {
namespace {

constexpr int kLeftMargin = 38;
constexpr int kTopMargin = 18;
constexpr int kPad = 6;
// Beyond this many keys colours are computed on the fly instead of cached.
constexpr std::int64_t kMaxCachedKeys = 1 << 16;
// Fades (0 = full colour, 1 = white) for the highlight states.
constexpr double kFadeOther = 0.80;     // not the focus worker
constexpr double kFadeFocusStep = 0.35; // the focus worker, at another step
constexpr double kFadeDone = 0.50;      // before the current step
constexpr double kFadeLater = 0.84;     // after the current step
constexpr double kFadeOutside = 0.72;   // outside the region block
constexpr double kFadeInRegion = 0.62;  // the region block's other threads, while one is followed

QRgb fadeRgb(QRgb c, double amount)
{
    const auto mix = [amount](int v) { return static_cast<int>(v + (255 - v) * amount + 0.5); };
    return qRgb(mix(qRed(c)), mix(qGreen(c)), mix(qBlue(c)));
}

/// Label spacing (in cells) so that labels `labelPx` wide do not collide.
std::int64_t labelEvery(double cell, double labelPx)
{
    static constexpr std::int64_t kSteps[] = {1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 250, 256, 500, 512, 1000};
    for (const std::int64_t s : kSteps) {
        if (static_cast<double>(s) * cell >= labelPx)
            return s;
    }
    return 1024 * static_cast<std::int64_t>(std::ceil(labelPx / (1024.0 * cell)));
}

}  // namespace

MappingCanvas::MappingCanvas(QWidget* parent) : QWidget(parent)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setFocusPolicy(Qt::ClickFocus);
}

void MappingCanvas::setSnapshot(std::shared_ptr<const MappingSnapshot> snapshot)
{
    const bool sameShape = m_snapshot && snapshot && m_snapshot->shape() == snapshot->shape();
    m_snapshot = std::move(snapshot);
    m_keyColors.clear();
    m_hover = -1;
    if (m_snapshot) {
        if (m_focus >= m_snapshot->numWorkers())
            m_focus = -1;
        if (m_step >= m_snapshot->steps())
            m_step = -1;
        if (m_regionBlock >= m_snapshot->numBlocks() || !m_snapshot->twoLevel())
            m_regionBlock = -1;
    }
    m_flagged.clear();
    updateSliceGeometry();
    if (!sameShape)
        m_fitted = false;
    if (!m_fitted)
        fitToView();
    invalidateImage();
}

void MappingCanvas::setSlice(int rowDim, int colDim, std::vector<std::int64_t> fixed)
{
    const bool changed = rowDim != m_rowDim || colDim != m_colDim;
    m_rowDim = rowDim;
    m_colDim = colDim;
    m_fixed = std::move(fixed);
    updateSliceGeometry();
    if (changed)
        fitToView();
    invalidateImage();
}

void MappingCanvas::updateSliceGeometry()
{
    m_rows = m_cols = 0;
    if (!m_snapshot)
        return;
    const auto& shape = m_snapshot->shape();
    const int rank = static_cast<int>(shape.size());
    if (rank == 1) {
        m_rowDim = -1;
        m_colDim = 0;
    }
    if (m_colDim < 0 || m_colDim >= rank)
        m_colDim = rank - 1;
    if (m_rowDim >= rank || m_rowDim == m_colDim || (m_rowDim < 0 && rank > 1))
        m_rowDim = m_colDim == 0 ? 1 : 0;
    if (rank == 1)
        m_rowDim = -1;
    m_cols = shape[static_cast<std::size_t>(m_colDim)];
    m_colStride = m_snapshot->strides[static_cast<std::size_t>(m_colDim)];
    m_rows = m_rowDim < 0 ? 1 : shape[static_cast<std::size_t>(m_rowDim)];
    m_rowStride = m_rowDim < 0 ? 0 : m_snapshot->strides[static_cast<std::size_t>(m_rowDim)];
    m_base = 0;
    for (int d = 0; d < rank; ++d) {
        if (d == m_rowDim || d == m_colDim)
            continue;
        const std::int64_t v = d < static_cast<int>(m_fixed.size()) ? m_fixed[static_cast<std::size_t>(d)] : 0;
        m_base += std::clamp<std::int64_t>(v, 0, shape[static_cast<std::size_t>(d)] - 1) *
                  m_snapshot->strides[static_cast<std::size_t>(d)];
    }
}

void MappingCanvas::setColorBy(ColorBy mode)
{
    if (mode == m_colorBy)
        return;
    m_colorBy = mode;
    m_keyColors.clear();
    invalidateImage();
}

std::int64_t MappingCanvas::colorKey(std::int64_t worker) const
{
    if (worker < 0 || !m_snapshot)
        return -1;
    const std::int64_t tpb = m_snapshot->threadsPerBlock();
    switch (m_colorBy) {
    case ColorBy::Worker: return worker;
    case ColorBy::Block: return worker / tpb;
    case ColorBy::Thread: return worker % tpb;
    }
    return worker;
}

std::int64_t MappingCanvas::numColorKeys() const
{
    if (!m_snapshot)
        return 0;
    switch (m_colorBy) {
    case ColorBy::Worker: return m_snapshot->numWorkers();
    case ColorBy::Block: return m_snapshot->numBlocks();
    case ColorBy::Thread: return m_snapshot->threadsPerBlock();
    }
    return 0;
}

void MappingCanvas::setFocusWorker(std::int64_t worker)
{
    if (m_snapshot && worker >= m_snapshot->numWorkers())
        worker = -1;
    if (worker == m_focus)
        return;
    m_focus = worker;
    invalidateImage();
}

void MappingCanvas::setStep(std::int64_t step)
{
    if (m_snapshot && step >= m_snapshot->steps())
        step = -1;
    if (step == m_step)
        return;
    m_step = step;
    invalidateImage();
}

void MappingCanvas::setRegionBlock(std::int64_t block)
{
    if (!m_snapshot || !m_snapshot->twoLevel() || block >= m_snapshot->numBlocks())
        block = -1;
    if (block == m_regionBlock)
        return;
    m_regionBlock = block;
    invalidateImage();
}

void MappingCanvas::setFlaggedWorkers(std::vector<bool> flags)
{
    m_flagged = std::move(flags);
    update();
}

std::int64_t MappingCanvas::flatAt(std::int64_t r, std::int64_t c) const
{
    return m_base + r * m_rowStride + c * m_colStride;
}

const schedule::CellOwner* MappingCanvas::ownerAt(std::int64_t r, std::int64_t c) const
{
    if (!m_snapshot || r < 0 || c < 0 || r >= m_rows || c >= m_cols)
        return nullptr;
    return &m_snapshot->cells[static_cast<std::size_t>(flatAt(r, c))];
}

std::vector<std::int64_t> MappingCanvas::taskAt(std::int64_t r, std::int64_t c) const
{
    std::vector<std::int64_t> task;
    if (!m_snapshot)
        return task;
    std::int64_t flat = flatAt(r, c);
    for (const std::int64_t s : m_snapshot->strides) {
        task.push_back(flat / s);
        flat %= s;
    }
    return task;
}

QRgb MappingCanvas::baseRgb(std::int64_t key) const
{
    if (key < 0)
        return categoricalColor(-1).rgb();
    if (key >= kMaxCachedKeys)
        return categoricalColor(key).rgb();
    if (m_keyColors.empty())
        m_keyColors.assign(static_cast<std::size_t>(std::min(numColorKeys(), kMaxCachedKeys)), 0);
    if (key >= static_cast<std::int64_t>(m_keyColors.size()))
        return categoricalColor(key).rgb();
    QRgb& slot = m_keyColors[static_cast<std::size_t>(key)];
    if (slot == 0)
        slot = categoricalColor(key).rgb();
    return slot;
}

QColor MappingCanvas::fillColor(std::int64_t r, std::int64_t c) const
{
    const schedule::CellOwner* owner = ownerAt(r, c);
    if (owner == nullptr || owner->worker < 0)
        return categoricalColor(-1);
    double fade = 0;
    const std::int64_t focus = effectiveFocus();
    const bool outside = m_regionBlock >= 0 && owner->worker / m_snapshot->threadsPerBlock() != m_regionBlock;
    if (focus >= 0) {
        if (owner->worker != focus)
            fade = outside || m_regionBlock < 0 ? kFadeOther : kFadeInRegion;
        else if (m_step >= 0 && owner->step != m_step)
            fade = kFadeFocusStep;
    } else if (m_step >= 0 && owner->step != m_step) {
        fade = owner->step < m_step ? kFadeDone : kFadeLater;
    }
    if (outside)
        fade = std::max(fade, kFadeOutside);
    const QRgb base = baseRgb(colorKey(owner->worker));
    return QColor::fromRgb(fade > 0 ? fadeRgb(base, fade) : base);
}

void MappingCanvas::invalidateImage()
{
    m_imageDirty = true;
    update();
}

void MappingCanvas::rebuildImage()
{
    m_imageDirty = false;
    if (!m_snapshot || m_rows <= 0 || m_cols <= 0) {
        m_image = QImage();
        return;
    }
    if (m_image.width() != m_cols || m_image.height() != m_rows)
        m_image = QImage(static_cast<int>(m_cols), static_cast<int>(m_rows), QImage::Format_RGB32);
    for (std::int64_t r = 0; r < m_rows; ++r) {
        auto* line = reinterpret_cast<QRgb*>(m_image.scanLine(static_cast<int>(r)));
        for (std::int64_t c = 0; c < m_cols; ++c)
            line[c] = fillColor(r, c).rgb();
    }
}

QRect MappingCanvas::gridArea() const
{
    return rect().adjusted(kLeftMargin, kTopMargin, -kPad, -kPad);
}

void MappingCanvas::setCellSize(double pixels, QPointF anchor)
{
    pixels = std::clamp(pixels, kMinCell, kMaxCell);
    const QPointF g = (anchor - m_origin) / m_cell;
    m_cell = pixels;
    m_origin = anchor - g * m_cell;
    update();
}

void MappingCanvas::fitToView()
{
    m_fitted = true;
    if (!m_snapshot || m_rows <= 0 || m_cols <= 0)
        return;
    const QRect ga = gridArea();
    const double cell = std::min(ga.width() / static_cast<double>(m_cols), ga.height() / static_cast<double>(m_rows));
    m_cell = std::clamp(std::floor(cell * 8.0) / 8.0, kMinCell, kMaxCell);
    if (m_cell >= 2.0)
        m_cell = std::floor(m_cell);
    const double w = m_cell * static_cast<double>(m_cols);
    // Centred across, at the top: the axis labels stay next to the grid and the legend below.
    m_origin = QPointF(std::round(ga.left() + std::max(0.0, (ga.width() - w) / 2.0)), ga.top());
    update();
}

QRectF MappingCanvas::cellRect(std::int64_t r, std::int64_t c) const
{
    return QRectF(m_origin.x() + static_cast<double>(c) * m_cell, m_origin.y() + static_cast<double>(r) * m_cell,
                  m_cell, m_cell);
}

bool MappingCanvas::cellAt(QPointF pos, std::int64_t* r, std::int64_t* c) const
{
    if (!m_snapshot || !gridArea().contains(pos.toPoint()))
        return false;
    const double cx = std::floor((pos.x() - m_origin.x()) / m_cell);
    const double cy = std::floor((pos.y() - m_origin.y()) / m_cell);
    if (cx < 0 || cy < 0 || cx >= static_cast<double>(m_cols) || cy >= static_cast<double>(m_rows))
        return false;
    *r = static_cast<std::int64_t>(cy);
    *c = static_cast<std::int64_t>(cx);
    return true;
}

void MappingCanvas::paintEvent(QPaintEvent* event)
{
    QPainter p(this);
    paintCanvas(p, event->rect());
}

void MappingCanvas::paintCanvas(QPainter& p, const QRect& area)
{
    p.fillRect(area, palette().color(QPalette::Base));
    if (!m_snapshot || m_rows <= 0 || m_cols <= 0) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No mapping"));
        return;
    }
    if (m_imageDirty)
        rebuildImage();

    const QRect ga = gridArea();
    const QRect clip = ga & area;
    const auto firstVisible = [this](double lo, double origin, std::int64_t n) {
        return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor((lo - origin) / m_cell)), 0, n);
    };
    const auto endVisible = [this](double hi, double origin, std::int64_t n) {
        return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil((hi - origin) / m_cell)), 0, n);
    };
    const std::int64_t c0 = firstVisible(clip.left(), m_origin.x(), m_cols);
    const std::int64_t c1 = endVisible(clip.right() + 1, m_origin.x(), m_cols);
    const std::int64_t r0 = firstVisible(clip.top(), m_origin.y(), m_rows);
    const std::int64_t r1 = endVisible(clip.bottom() + 1, m_origin.y(), m_rows);
    drawAxes(p, r0, r1, c0, c1);
    if (c0 >= c1 || r0 >= r1)
        return;

    p.save();
    p.setClipRect(clip);
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    const QRectF target = cellRect(r0, c0).united(cellRect(r1 - 1, c1 - 1));
    p.drawImage(target, m_image, QRectF(static_cast<double>(c0), static_cast<double>(r0),
                                        static_cast<double>(c1 - c0), static_cast<double>(r1 - r0)));

    const double x0 = target.left(), y0 = target.top(), x1 = target.right(), y1 = target.bottom();
    if (m_cell >= kGridMinCell) {
        std::vector<QLineF> lines;
        lines.reserve(static_cast<std::size_t>((c1 - c0) + (r1 - r0) + 2));
        for (std::int64_t c = c0; c <= c1; ++c) {
            const double x = m_origin.x() + static_cast<double>(c) * m_cell;
            lines.emplace_back(x, y0, x, y1);
        }
        for (std::int64_t r = r0; r <= r1; ++r) {
            const double y = m_origin.y() + static_cast<double>(r) * m_cell;
            lines.emplace_back(x0, y, x1, y);
        }
        p.setPen(QPen(QColor(255, 255, 255, 200), 1));
        p.drawLines(lines.data(), static_cast<int>(lines.size()));
    }

    // Boundaries between cells whose `keyOf` differ (block boundaries, the region outline).
    const auto boundaries = [&](auto keyOf, bool onlyAroundRegion) {
        std::vector<QLineF> segs;
        for (std::int64_t r = r0; r < r1; ++r) {
            for (std::int64_t c = c0; c < c1; ++c) {
                const std::int64_t k = keyOf(r, c);
                if (onlyAroundRegion && k == 0)
                    continue;
                const QRectF cr = cellRect(r, c);
                if (c + 1 >= m_cols ? onlyAroundRegion : keyOf(r, c + 1) != k)
                    segs.emplace_back(cr.topRight(), cr.bottomRight());
                if (r + 1 >= m_rows ? onlyAroundRegion : keyOf(r + 1, c) != k)
                    segs.emplace_back(cr.bottomLeft(), cr.bottomRight());
                if (onlyAroundRegion) {
                    if (c == 0 || keyOf(r, c - 1) != k)
                        segs.emplace_back(cr.topLeft(), cr.bottomLeft());
                    if (r == 0 || keyOf(r - 1, c) != k)
                        segs.emplace_back(cr.topLeft(), cr.topRight());
                }
            }
        }
        return segs;
    };
    const std::int64_t tpb = m_snapshot->threadsPerBlock();
    const auto blockOf = [this, tpb](std::int64_t r, std::int64_t c) {
        const schedule::CellOwner& o = m_snapshot->cells[static_cast<std::size_t>(flatAt(r, c))];
        return o.worker < 0 ? std::int64_t{-1} : o.worker / tpb;
    };
    if (m_snapshot->twoLevel() && m_cell >= 2.0) {
        const auto segs = boundaries(blockOf, false);
        p.setPen(QPen(QColor(0x30, 0x34, 0x3a), m_cell >= 8 ? 1.5 : 1.0));
        p.drawLines(segs.data(), static_cast<int>(segs.size()));
    }
    if (m_regionBlock >= 0) {
        const auto inRegion = [&](std::int64_t r, std::int64_t c) {
            return std::int64_t{blockOf(r, c) == m_regionBlock};
        };
        const auto segs = boundaries(inRegion, true);
        p.setPen(QPen(QColor(0x10, 0x10, 0x10), m_cell >= 6 ? 3.0 : 2.0, Qt::SolidLine, Qt::SquareCap));
        p.drawLines(segs.data(), static_cast<int>(segs.size()));
    }

    // The followed worker's cells are outlined so they stand out among many similar colours.
    const std::int64_t focus = effectiveFocus();
    if (focus >= 0 && m_cell >= 4.0) {
        std::vector<QRectF> rects;
        for (std::int64_t r = r0; r < r1; ++r) {
            for (std::int64_t c = c0; c < c1; ++c) {
                if (m_snapshot->cells[static_cast<std::size_t>(flatAt(r, c))].worker == focus)
                    rects.push_back(cellRect(r, c).adjusted(0.5, 0.5, -0.5, -0.5));
            }
        }
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(QColor(0x20, 0x20, 0x20), 1.0));
        p.drawRects(rects.data(), static_cast<int>(rects.size()));
    }

    // Outlines: this step's cells (all workers, or the focus worker) and flagged (bad-warp) cells.
    if (m_cell >= 4.0 && m_step >= 0) {
        std::vector<QRectF> stepRects, flagRects;
        for (std::int64_t r = r0; r < r1; ++r) {
            for (std::int64_t c = c0; c < c1; ++c) {
                const schedule::CellOwner& o = m_snapshot->cells[static_cast<std::size_t>(flatAt(r, c))];
                if (o.worker < 0)
                    continue;
                if (o.step != m_step)
                    continue;
                const QRectF cr = cellRect(r, c).adjusted(1.5, 1.5, -1.5, -1.5);
                if (focus < 0 || o.worker == focus)
                    stepRects.push_back(cr);
                if (o.worker < static_cast<std::int64_t>(m_flagged.size()) && m_flagged[static_cast<std::size_t>(o.worker)])
                    flagRects.push_back(cr);
            }
        }
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(QColor(0x14, 0x14, 0x14), m_cell >= 10 ? 2.0 : 1.0));
        p.drawRects(stepRects.data(), static_cast<int>(stepRects.size()));
        // Bad-warp cells: a red corner mark, which stays readable when every warp is bad.
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(0xd3, 0x1f, 0x1f));
        const double t = std::max(3.0, m_cell * 0.4);
        for (const QRectF& cr : flagRects) {
            const QPointF tri[3] = {cr.topRight() + QPointF(1.5, -1.5), cr.topRight() + QPointF(1.5 - t, -1.5),
                                    cr.topRight() + QPointF(1.5, t - 1.5)};
            p.drawPolygon(tri, 3);
        }
    }

    // Text: worker (block, thread) ids, or the focus worker's execution order.
    if (m_cell >= kTextMinCell) {
        QFont f = font();
        f.setPixelSize(std::clamp(static_cast<int>(m_cell * 0.42), 8, 14));
        QFont bold = f;
        bold.setBold(true);
        const QFontMetrics fm(f), fmBold(bold);
        const double room = m_cell - 3.0;
        int lastWidthDigits = -1;
        double lastWidth = 0;
        for (std::int64_t r = r0; r < r1; ++r) {
            for (std::int64_t c = c0; c < c1; ++c) {
                const schedule::CellOwner& o = m_snapshot->cells[static_cast<std::size_t>(flatAt(r, c))];
                if (o.worker < 0)
                    continue;
                const bool isFocus = focus >= 0 && o.worker == focus;
                if (focus >= 0 && !isFocus)
                    continue;
                const QString label = QString::number(isFocus ? o.step : colorKey(o.worker));
                const int digits = static_cast<int>(label.size()) + (isFocus ? 100 : 0);
                if (digits != lastWidthDigits) {
                    lastWidthDigits = digits;
                    lastWidth = (isFocus ? fmBold : fm).horizontalAdvance(label);
                }
                if (lastWidth > room)
                    continue;
                p.setFont(isFocus ? bold : f);
                p.setPen(textColorOn(QColor::fromRgb(m_image.pixel(static_cast<int>(c), static_cast<int>(r)))));
                p.drawText(cellRect(r, c), Qt::AlignCenter, label);
            }
        }
    }
    p.restore();
}

void MappingCanvas::drawAxes(QPainter& p, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1)
{
    const QRect ga = gridArea();
    QFont f = font();
    f.setPixelSize(10);
    p.setFont(f);
    const QFontMetrics fm(f);
    p.setPen(palette().color(QPalette::PlaceholderText));
    const double wide = fm.horizontalAdvance(QString::number(std::max(m_rows, m_cols))) + 8.0;
    p.save();
    p.setClipRect(QRect(ga.left(), 0, ga.width(), ga.top()));
    const std::int64_t everyC = labelEvery(m_cell, wide);
    for (std::int64_t c = (c0 / everyC) * everyC; c < c1; c += everyC) {
        const QRectF cr = cellRect(0, c);
        p.drawText(QRectF(cr.center().x() - wide, 0, 2 * wide, ga.top() - 2), Qt::AlignHCenter | Qt::AlignBottom,
                   QString::number(c));
    }
    p.restore();
    if (m_rowDim < 0)
        return;
    p.save();
    p.setClipRect(QRect(0, ga.top() - fm.height() / 2, ga.left(), ga.height() + fm.height()));
    const std::int64_t everyR = labelEvery(m_cell, fm.height() + 2.0);
    for (std::int64_t r = (r0 / everyR) * everyR; r < r1; r += everyR) {
        const QRectF cr = cellRect(r, 0);
        p.drawText(QRectF(0, cr.center().y() - fm.height(), ga.left() - 4, 2.0 * fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, QString::number(r));
    }
    p.restore();
}

void MappingCanvas::resizeEvent(QResizeEvent*)
{
    if (m_fitted)
        fitToView();
}

void MappingCanvas::wheelEvent(QWheelEvent* event)
{
    const double notches = event->angleDelta().y() / 120.0;
    if (notches == 0) {
        event->ignore();
        return;
    }
    m_fitted = false;
    setCellSize(m_cell * std::pow(1.25, notches), event->position());
    event->accept();
}

void MappingCanvas::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton) {
        QWidget::mousePressEvent(event);
        return;
    }
    m_dragging = false;
    m_pressPos = event->position().toPoint();
    m_pressOrigin = m_origin;
}

void MappingCanvas::mouseMoveEvent(QMouseEvent* event)
{
    if (event->buttons() & Qt::LeftButton) {
        const QPoint delta = event->position().toPoint() - m_pressPos;
        if (m_dragging || delta.manhattanLength() > 3) {
            m_dragging = true;
            m_fitted = false;
            m_origin = m_pressOrigin + QPointF(delta);
            setCursor(Qt::ClosedHandCursor);
            update();
        }
        return;
    }
    std::int64_t r = 0, c = 0;
    if (!cellAt(event->position(), &r, &c)) {
        setHover(-1);
        QToolTip::hideText();
        return;
    }
    const schedule::CellOwner* o = ownerAt(r, c);
    setHover(o ? o->worker : -1);
    if (o == nullptr)
        return;
    QStringList idx;
    for (const std::int64_t v : taskAt(r, c))
        idx << QString::number(v);
    QString tip = tr("task (%1)").arg(idx.join(QStringLiteral(", ")));
    if (m_snapshot->twoLevel()) {
        const std::int64_t tpb = m_snapshot->threadsPerBlock();
        tip += tr(" \u00b7 block %1 \u00b7 thread %2").arg(o->worker / tpb).arg(o->worker % tpb);
    } else {
        tip += tr(" \u00b7 worker %1").arg(o->worker);
    }
    tip += tr(" \u00b7 step %1 of %2").arg(o->step).arg(m_snapshot->steps());
    QToolTip::showText(event->globalPosition().toPoint(), tip, this);
}

void MappingCanvas::mouseReleaseEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton)
        return;
    unsetCursor();
    if (m_dragging) {
        m_dragging = false;
        return;
    }
    std::int64_t r = 0, c = 0;
    if (cellAt(event->position(), &r, &c)) {
        if (const schedule::CellOwner* o = ownerAt(r, c))
            emit cellClicked(o->worker, o->step);
    }
}

void MappingCanvas::mouseDoubleClickEvent(QMouseEvent*)
{
    fitToView();
}

void MappingCanvas::leaveEvent(QEvent*)
{
    setHover(-1);
}

void MappingCanvas::setHover(std::int64_t worker)
{
    if (worker == m_hover)
        return;
    m_hover = worker;
    invalidateImage();
    emit workerHovered(worker);
}

}  // namespace tessera::views
