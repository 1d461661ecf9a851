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

}  // namespace

QFont FusionClusterItem::labelFont()
{
    QFont f(QStringLiteral("DejaVu Sans"), 7);
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
    for (const QRectF& r : memberRects) {
        QRectF padded = r.adjusted(-kPad, -kPad, kPad, kPad);
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
    for (const QPainterPath& p : edgePaths)
        region.addPath(stroker.createStroke(p));
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
