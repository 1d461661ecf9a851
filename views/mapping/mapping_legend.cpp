#include "views/mapping/mapping_legend.h"

#include <algorithm>

#include <QMouseEvent>
#include <QPainter>

#include "views/mapping/mapping_palette.h"

namespace tessera::views {
namespace {

constexpr int kSwatch = 12;
constexpr int kGap = 6;

}  // namespace

MappingLegend::MappingLegend(QWidget* parent) : QWidget(parent)
{
    QSizePolicy sp(QSizePolicy::Expanding, QSizePolicy::Preferred);
    sp.setHeightForWidth(true);
    setSizePolicy(sp);
}

void MappingLegend::setKeys(std::int64_t count, const QString& noun, std::int64_t highlighted)
{
    m_count = std::max<std::int64_t>(0, count);
    m_noun = noun;
    m_highlighted = highlighted;
    updateGeometry();
    update();
}

void MappingLegend::setHighlighted(std::int64_t key)
{
    if (key == m_highlighted)
        return;
    m_highlighted = key;
    update();
}

int MappingLegend::rowHeight() const { return std::max(kSwatch, fontMetrics().height()) + 4; }

int MappingLegend::itemWidth() const
{
    return kSwatch + 4 + fontMetrics().horizontalAdvance(QString::number(std::max<std::int64_t>(m_count - 1, 0))) + kGap;
}

MappingLegend::Layout MappingLegend::layoutFor(int width) const
{
    Layout out;
    const QFontMetrics fm = fontMetrics();
    const int rh = rowHeight();
    const QString title = tr("%1s (%2):").arg(m_noun).arg(m_count);
    out.title = QRect(2, 2, fm.horizontalAdvance(title) + kGap, rh);
    const int iw = itemWidth();
    const QString moreText = tr("+%1 more").arg(m_count);
    const int moreW = fm.horizontalAdvance(moreText) + kGap;
    int x = out.title.right() + 1;
    int row = 0;
    for (std::int64_t k = 0; k < m_count; ++k) {
        const bool lastRow = row == kMaxRows - 1;
        // On the last row keep room for "+N more" unless this is the final key.
        const int need = iw + (lastRow && k + 1 < m_count ? moreW : 0);
        if (x + need > width) {
            if (lastRow)
                break;
            ++row;
            x = 2;
        }
        out.items.emplace_back(x, 2 + row * rh, iw, rh);
        x += iw;
    }
    if (static_cast<std::int64_t>(out.items.size()) < m_count)
        out.more = QRect(x, 2 + row * rh, moreW, rh);
    out.height = 4 + (row + 1) * rh;
    return out;
}

std::int64_t MappingLegend::shownKeys() const
{
    return static_cast<std::int64_t>(layoutFor(width()).items.size());
}

int MappingLegend::heightForWidth(int width) const { return layoutFor(width).height; }

QSize MappingLegend::sizeHint() const { return {400, heightForWidth(std::max(width(), 400))}; }

void MappingLegend::resizeEvent(QResizeEvent*)
{
    updateGeometry();
}

void MappingLegend::paintEvent(QPaintEvent*)
{
    if (m_count == 0 || m_noun.isEmpty())
        return;
    QPainter p(this);
    const Layout lay = layoutFor(width());
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(lay.title, Qt::AlignLeft | Qt::AlignVCenter, tr("%1s (%2):").arg(m_noun).arg(m_count));
    for (std::size_t k = 0; k < lay.items.size(); ++k) {
        const QRect& it = lay.items[k];
        const QRect sw(it.left(), it.center().y() - kSwatch / 2, kSwatch, kSwatch);
        const bool hi = static_cast<std::int64_t>(k) == m_highlighted;
        p.setPen(hi ? QPen(QColor(0x10, 0x10, 0x10), 2) : QPen(QColor(0, 0, 0, 60), 1));
        p.setBrush(categoricalColor(static_cast<std::int64_t>(k)));
        p.drawRect(sw);
        QFont f = font();
        f.setBold(hi);
        p.setFont(f);
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QRect(sw.right() + 4, it.top(), it.width() - kSwatch - 4, it.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, QString::number(k));
    }
    if (!lay.more.isNull()) {
        p.setFont(font());
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(lay.more, Qt::AlignLeft | Qt::AlignVCenter,
                   tr("+%1 more").arg(m_count - static_cast<std::int64_t>(lay.items.size())));
    }
}

void MappingLegend::mousePressEvent(QMouseEvent* event)
{
    const Layout lay = layoutFor(width());
    for (std::size_t k = 0; k < lay.items.size(); ++k) {
        if (lay.items[k].contains(event->position().toPoint())) {
            emit keyClicked(static_cast<qint64>(k));
            return;
        }
    }
}

}  // namespace tessera::views
