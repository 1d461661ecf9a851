#include "views/properties/histogram_widget.h"

#include <algorithm>
#include <cmath>

#include <QPainter>

namespace tessera::views {

HistogramWidget::HistogramWidget(QWidget* parent) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void HistogramWidget::setData(std::vector<std::int64_t> bins, double min, double max)
{
    m_bins = std::move(bins);
    m_min = min;
    m_max = max;
    update();
}

void HistogramWidget::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, false);
    const QFontMetrics fm(font());
    const QRect plot = rect().adjusted(2, 2, -2, -(fm.height() + 4));
    p.fillRect(plot, QColor(0xfa, 0xfb, 0xfc));
    p.setPen(QColor(0xd0, 0xd4, 0xda));
    p.drawRect(plot.adjusted(0, 0, -1, -1));
    if (m_bins.empty() || plot.width() < 4)
        return;

    const std::int64_t peak = *std::max_element(m_bins.begin(), m_bins.end());
    const double bw = static_cast<double>(plot.width() - 2) / static_cast<double>(m_bins.size());
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(0x2f, 0x5f, 0xa8));
    for (std::size_t i = 0; i < m_bins.size(); ++i) {
        if (m_bins[i] == 0 || peak == 0)
            continue;
        const double h = (plot.height() - 3) * static_cast<double>(m_bins[i]) / static_cast<double>(peak);
        const QRectF bar(plot.left() + 1 + i * bw, plot.bottom() - 1 - std::max(1.0, h), std::max(1.0, bw - 1),
                         std::max(1.0, h));
        p.drawRect(bar);
    }

    // Zero marker, when zero is inside the range.
    if (m_min < 0 && m_max > 0) {
        const double x = plot.left() + 1 + (plot.width() - 2) * (-m_min) / (m_max - m_min);
        p.setPen(QPen(QColor(0xc6, 0x28, 0x28), 1, Qt::DotLine));
        p.drawLine(QPointF(x, plot.top() + 1), QPointF(x, plot.bottom() - 1));
    }

    p.setPen(palette().color(QPalette::WindowText));
    const QRect labels(plot.left(), plot.bottom() + 2, plot.width(), fm.height() + 2);
    p.drawText(labels, Qt::AlignLeft | Qt::AlignVCenter, QString::number(m_min, 'g', 4));
    p.drawText(labels, Qt::AlignRight | Qt::AlignVCenter, QString::number(m_max, 'g', 4));
}

}  // namespace tessera::views
