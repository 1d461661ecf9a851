#include "views/graph/fusion_clusters.h"

#include <algorithm>

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

namespace tessera::views {
namespace {

constexpr double kPad = 9;
constexpr double kRadius = 10;
// Room above the topmost member for the label (the layout leaves 34 px between ranks).
constexpr double kLabelGap = 17;
constexpr double kEdgeBand = 22;
constexpr double kLodNoText = 0.32;

double cross(const QPointF& o, const QPointF& a, const QPointF& b)
{
    return (a.x() - o.x()) * (b.y() - o.y()) - (a.y() - o.y()) * (b.x() - o.x());
}

/// Convex hull of two rectangles (Andrew's monotone chain over their corners).
QPolygonF hullOf(const QRectF& a, const QRectF& b)
{
    std::vector<QPointF> pts = {a.topLeft(), a.topRight(), a.bottomLeft(), a.bottomRight(),
                                b.topLeft(), b.topRight(), b.bottomLeft(), b.bottomRight()};
    std::sort(pts.begin(), pts.end(), [](const QPointF& p, const QPointF& q) {
        return p.x() < q.x() || (p.x() == q.x() && p.y() < q.y());
    });
    std::vector<QPointF> hull(2 * pts.size());
    std::size_t k = 0;
    for (const QPointF& p : pts) {
        while (k >= 2 && cross(hull[k - 2], hull[k - 1], p) <= 0)
            --k;
        hull[k++] = p;
    }
    for (std::size_t i = pts.size() - 1, t = k + 1; i-- > 0;) {
        while (k >= t && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0)
            --k;
        hull[k++] = pts[i];
    }
    hull.resize(k > 0 ? k - 1 : 0);
    return QPolygonF(QList<QPointF>(hull.begin(), hull.end()));
}

/// Index of the rect whose border (with some slack) holds `p`, -1 if none.
int rectAt(const std::vector<QRectF>& rects, const QPointF& p)
{
    for (std::size_t i = 0; i < rects.size(); ++i) {
        if (rects[i].adjusted(-16, -16, 16, 16).contains(p))
            return static_cast<int>(i);
    }
    return -1;
}

}  // namespace

QFont FusionClusterItem::labelFont()
{
    QFont f(QStringLiteral("DejaVu Sans"), 8);
    f.setBold(true);
    return f;
}

FusionClusterItem::FusionClusterItem(const FusionCluster& cluster, const std::vector<QRectF>& memberRects,
                                     const std::vector<QPainterPath>& edgePaths)
    : m_name(cluster.name), m_label(QStringLiteral("%1 \u00b7 %2").arg(cluster.name, cluster.kind)), m_colour(cluster.colour)
{
    setZValue(-1);
    setAcceptedMouseButtons(Qt::NoButton);
    if (memberRects.empty())
        return;
    const auto top = std::min_element(memberRects.begin(), memberRects.end(),
                                      [](const QRectF& a, const QRectF& b) { return a.top() < b.top(); });
    const QFontMetricsF fm(labelFont());
    const double labelW = fm.horizontalAdvance(m_label) + 10;
    QPainterPath region;
    region.setFillRule(Qt::WindingFill);
    std::vector<QRectF> paddedRects;
    for (const QRectF& r : memberRects) {
        QRectF padded = r.adjusted(-kPad, -kPad, kPad, kPad);
        paddedRects.push_back(padded);
        if (&r == &*top) {
            padded.setTop(padded.top() - kLabelGap + kPad - 2);
            // A label wider than the box widens the region to the right, so it stays inside.
            padded.setRight(std::max(padded.right(), padded.left() + labelW + 4));
            m_labelRect = QRectF(padded.left() + 6, padded.top() + 2, labelW, kLabelGap - 4);
        }
        region.addRoundedRect(padded, kRadius, kRadius);
    }
    QPainterPathStroker stroker;
    stroker.setWidth(kEdgeBand);
    stroker.setCapStyle(Qt::RoundCap);
    stroker.setJoinStyle(Qt::RoundJoin);
    for (const QPainterPath& p : edgePaths) {
        // Members joined by an edge merge into one smooth region (the hull of their boxes) when
        // they sit close, one above the other, as in a chain; else a band follows the edge.
        const int from = rectAt(memberRects, p.pointAtPercent(0));
        const int to = rectAt(memberRects, p.pointAtPercent(1));
        if (from >= 0 && to >= 0 && from != to) {
            const QRectF& a = paddedRects[static_cast<std::size_t>(from)];
            const QRectF& b = paddedRects[static_cast<std::size_t>(to)];
            const double overlapX = std::min(a.right(), b.right()) - std::max(a.left(), b.left());
            if (overlapX > 0.5 * std::min(a.width(), b.width())) {
                QPainterPath hull;
                hull.addPolygon(hullOf(a.adjusted(0, kRadius, 0, -kRadius), b.adjusted(0, kRadius, 0, -kRadius)));
                hull.closeSubpath();
                region.addPath(hull);
                continue;
            }
        }
        region.addPath(stroker.createStroke(p));
    }
    m_region = region.simplified();
    m_bounds = m_region.boundingRect().adjusted(-2, -2, 2, 2);
    setToolTip(QObject::tr("Fusion group %1 (%2): %n op(s), one kernel", nullptr, static_cast<int>(cluster.members.size()))
                   .arg(cluster.name, cluster.kind) +
               QLatin1Char('\n') + cluster.members.join(QStringLiteral(", ")));
}

void FusionClusterItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*)
{
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    QColor fill = m_colour;
    fill.setAlpha(95);
    QColor border = m_colour.darker(135);
    painter->setPen(QPen(border, std::max(1.2, 1.2 / std::max(lod, 0.05))));
    painter->setBrush(fill);
    painter->drawPath(m_region);
    if (lod < kLodNoText || m_labelRect.isEmpty())
        return;
    painter->setFont(labelFont());
    painter->setPen(m_colour.darker(260));
    painter->drawText(m_labelRect, Qt::AlignLeft | Qt::AlignVCenter, m_label);
}

}  // namespace tessera::views
