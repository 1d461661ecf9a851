#include "views/graph/graph_items.h"

#include <algorithm>
#include <cmath>

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

namespace tessera::views {
namespace {

constexpr double kHeaderHeight = 20;
constexpr double kLineHeight = 15;
constexpr double kPadX = 10;
constexpr double kMinWidth = 130;
constexpr double kMaxWidth = 260;
constexpr double kRadius = 6;
// The kernel-status ring sits outside the box so the op colours stay readable.
constexpr double kStatusRingOffset = 3.5;
constexpr double kStatusRingWidth = 3;
constexpr double kBadgeRadius = 7;
// Below these zoom levels the items drop detail; text is unreadable there anyway.
constexpr double kLodNoText = 0.32;
constexpr double kLodTitleOnly = 0.55;
constexpr double kLodEdgeLabels = 0.6;

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// Names are data: show control characters as visible escapes instead of laying them out.
QString displayable(const std::string& s)
{
    QString out = fromStd(s);
    for (QChar& c : out) {
        if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            c = QChar(0x2423);
    }
    return out.isEmpty() ? QStringLiteral("(unnamed)") : out;
}

// A small disc on the top-right corner with a symbol, so the status reads without colour too.
void paintStatusBadge(QPainter* painter, const QRectF& rect, KernelStatus status)
{
    QString symbol;
    switch (status) {
    case KernelStatus::Passed: symbol = QStringLiteral("\u2713"); break;
    case KernelStatus::Failed: symbol = QStringLiteral("\u2717"); break;
    case KernelStatus::Reference: symbol = QStringLiteral("R"); break;
    default: return;
    }
    const QPointF c(rect.right() - 2, rect.top() + 2);
    const QRectF disc(c.x() - kBadgeRadius, c.y() - kBadgeRadius, 2 * kBadgeRadius, 2 * kBadgeRadius);
    painter->setPen(QPen(Qt::white, 1.5));
    painter->setBrush(kernelStatusColor(status));
    painter->drawEllipse(disc);
    QFont f = GraphStyle::instance().titleFont;
    f.setPointSizeF(7.5);
    painter->setFont(f);
    painter->setPen(Qt::white);
    painter->drawText(disc, Qt::AlignCenter, symbol);
}

}  // namespace

const GraphStyle& GraphStyle::instance()
{
    static const GraphStyle style = [] {
        GraphStyle s;
        s.titleFont = QFont(QStringLiteral("DejaVu Sans"), 9);
        s.titleFont.setBold(true);
        s.textFont = QFont(QStringLiteral("DejaVu Sans"), 8);
        s.monoFont = QFont(QStringLiteral("DejaVu Sans Mono"), 8);
        s.monoFont.setStyleHint(QFont::Monospace);
        s.edgeFont = QFont(QStringLiteral("DejaVu Sans"), 7);
        return s;
    }();
    return style;
}

QColor GraphStyle::accentColor(const SnapshotNode& n)
{
    switch (n.kind) {
    case SnapshotNodeKind::GraphInput: return QColor(0x2e, 0x7d, 0x32);
    case SnapshotNodeKind::GraphOutput: return QColor(0x37, 0x47, 0x4f);
    case SnapshotNodeKind::Operator: break;
    }
    if (!n.knownOp)
        return QColor(0x9e, 0x3a, 0x3a);
    switch (n.category) {
    case ir::OpCategory::Convolution: return QColor(0x2f, 0x5f, 0xa8);
    case ir::OpCategory::MatMul: return QColor(0x5c, 0x3f, 0xa8);
    case ir::OpCategory::Elementwise: return QColor(0xb8, 0x6b, 0x12);
    case ir::OpCategory::Normalization: return QColor(0x2e, 0x8b, 0x57);
    case ir::OpCategory::Pooling: return QColor(0x00, 0x83, 0x8f);
    case ir::OpCategory::Reduction: return QColor(0xad, 0x3b, 0x77);
    case ir::OpCategory::DataMovement: return QColor(0x60, 0x6b, 0x78);
    case ir::OpCategory::Constant: return QColor(0x8d, 0x8d, 0x8d);
    case ir::OpCategory::ControlFlow: return QColor(0x8e, 0x44, 0xad);
    case ir::OpCategory::Compute: return QColor(0x1f, 0x7a, 0x6d);
    case ir::OpCategory::Other: break;
    }
    return QColor(0x75, 0x6a, 0x5c);
}

QColor GraphStyle::fillColor(const SnapshotNode& n)
{
    const QColor a = accentColor(n);
    // A light tint of the accent keeps boxes readable with dark text.
    return QColor::fromRgbF(0.86 + 0.14 * a.redF() * 0.5, 0.86 + 0.14 * a.greenF() * 0.5,
                            0.86 + 0.14 * a.blueF() * 0.5)
        .lighter(104);
}

QSizeF GraphStyle::nodeSize(const SnapshotNode& n) const
{
    const QFontMetricsF title(titleFont), text(textFont), mono(monoFont);
    if (n.compact) {
        const double w = title.horizontalAdvance(QStringLiteral("Const  ")) +
                         mono.horizontalAdvance(fromStd(n.shapeText)) + 2 * kPadX;
        return {std::ceil(std::clamp(w, 60.0, kMaxWidth)), kHeaderHeight};
    }
    double w = title.horizontalAdvance(fromStd(n.opType)) + 2 * kPadX;
    if (n.kind != SnapshotNodeKind::Operator)
        w = title.horizontalAdvance(fromStd(n.opType) + QStringLiteral("  ")) + text.horizontalAdvance(displayable(n.name)) + 2 * kPadX;
    w = std::max(w, text.horizontalAdvance(displayable(n.name)) + 2 * kPadX);
    w = std::max(w, mono.horizontalAdvance(fromStd(n.shapeText)) + 2 * kPadX);
    w = std::clamp(w, kMinWidth, kMaxWidth);
    double h = kHeaderHeight + 2 * kLineHeight + 6;
    if (n.kind != SnapshotNodeKind::Operator)
        h = kHeaderHeight + kLineHeight + 6;
    return {std::ceil(w), h};
}

NodeItem::NodeItem(const SnapshotNode& node, const QSizeF& size)
    : m_id(node.id), m_kind(node.kind), m_opType(fromStd(node.opType)), m_name(displayable(node.name)),
      m_shape(fromStd(node.shapeText)), m_fill(GraphStyle::fillColor(node)), m_accent(GraphStyle::accentColor(node)),
      m_knownOp(node.knownOp || node.kind != SnapshotNodeKind::Operator), m_compact(node.compact),
      m_rect(-size.width() / 2, -size.height() / 2, size.width(), size.height())
{
    setFlag(ItemIsSelectable);
    setAcceptHoverEvents(false);
    setZValue(1);
    updateToolTip();
}

void NodeItem::setStatus(KernelStatus status, const QString& detail)
{
    if (status == m_status && detail == m_statusDetail)
        return;
    m_status = status;
    m_statusDetail = detail;
    updateToolTip();
    update();
}

void NodeItem::updateToolTip()
{
    QString tip = QStringLiteral("%1 — %2\n%3").arg(m_opType, m_name, m_shape);
    if (m_status != KernelStatus::None) {
        tip += QStringLiteral("\nKernel: %1 (%2)").arg(kernelStatusLabel(m_status), kernelStatusDescription(m_status));
        if (!m_statusDetail.isEmpty())
            tip += QLatin1Char('\n') + m_statusDetail;
    }
    setToolTip(tip);
}

QRectF NodeItem::boundingRect() const { return m_rect.adjusted(-kStatusRingOffset - 3, -kStatusRingOffset - 3, kStatusRingOffset + 3, kStatusRingOffset + 3); }

QPainterPath NodeItem::shape() const
{
    QPainterPath p;
    p.addRoundedRect(m_rect, kRadius, kRadius);
    return p;
}

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*)
{
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const bool selected = isSelected();
    const bool io = m_kind != SnapshotNodeKind::Operator;
    const double radius = io || m_compact ? m_rect.height() / 2 : kRadius;

    const QColor statusColor = kernelStatusColor(m_status);
    if (lod < kLodNoText) {
        if (statusColor.isValid() && m_status != KernelStatus::Folded) {
            // Far out the ring would vanish: fill the box with the status colour instead.
            painter->setPen(selected ? QPen(QColor(0xff, 0x8f, 0x00), 3 / lod) : Qt::NoPen);
            painter->setBrush(statusColor);
            painter->drawRect(m_rect);
            return;
        }
        painter->setPen(selected ? QPen(QColor(0xff, 0x8f, 0x00), 3 / lod) : Qt::NoPen);
        painter->setBrush(m_accent);
        painter->drawRect(m_rect);
        return;
    }

    QPainterPath outline;
    outline.addRoundedRect(m_rect, radius, radius);
    if (statusColor.isValid()) {
        const double o = kStatusRingOffset;
        QPen ring(statusColor, kStatusRingWidth, kernelStatusPenStyle(m_status));
        if (m_status == KernelStatus::Folded)
            ring.setWidthF(1.5);
        painter->setPen(ring);
        painter->setBrush(Qt::NoBrush);
        painter->drawRoundedRect(m_rect.adjusted(-o, -o, o, o), radius + o, radius + o);
    }
    QPen border(selected ? QColor(0xff, 0x8f, 0x00) : m_accent.darker(115), selected ? 3 : 1);
    if (!m_knownOp)
        border.setStyle(Qt::DashLine);
    painter->setPen(border);
    painter->setBrush(m_fill);
    painter->drawPath(outline);

    // Header band in the accent colour with the op type.
    const QRectF header(m_rect.left(), m_rect.top(), m_rect.width(), kHeaderHeight);
    painter->save();
    painter->setClipPath(outline);
    painter->fillRect(header, m_accent);
    painter->restore();

    const GraphStyle& st = GraphStyle::instance();
    painter->setPen(Qt::white);
    painter->setFont(st.titleFont);
    const QRectF headerText = header.adjusted(kPadX, 0, -kPadX, 0);
    if (m_compact) {
        const QFontMetricsF fm(st.titleFont);
        const QString tag = m_opType == QLatin1String("Constant") ? QStringLiteral("Const") : m_opType;
        painter->drawText(headerText, Qt::AlignVCenter | Qt::AlignLeft, tag);
        painter->setFont(st.monoFont);
        const QRectF valueRect = headerText.adjusted(fm.horizontalAdvance(tag + QStringLiteral(" ")), 0, 0, 0);
        painter->drawText(valueRect, Qt::AlignVCenter | Qt::AlignRight,
                          QFontMetricsF(st.monoFont).elidedText(m_shape, Qt::ElideRight, valueRect.width()));
        paintStatusBadge(painter, m_rect, m_status);
        return;
    }
    if (io) {
        const QFontMetricsF fm(st.titleFont);
        const QString tag = m_opType;
        painter->drawText(headerText, Qt::AlignVCenter | Qt::AlignLeft, tag);
        painter->setFont(st.textFont);
        const double off = fm.horizontalAdvance(tag + QStringLiteral("  "));
        const QRectF nameRect = headerText.adjusted(off, 0, 0, 0);
        painter->drawText(nameRect, Qt::AlignVCenter | Qt::AlignLeft,
                          QFontMetricsF(st.textFont).elidedText(m_name, Qt::ElideMiddle, nameRect.width()));
    } else {
        painter->drawText(headerText, Qt::AlignVCenter | Qt::AlignHCenter, m_opType);
    }
    if (lod < kLodTitleOnly) {
        paintStatusBadge(painter, m_rect, m_status);
        return;
    }

    double y = header.bottom() + 2;
    const QRectF body(m_rect.left() + kPadX, y, m_rect.width() - 2 * kPadX, kLineHeight);
    if (!io) {
        painter->setFont(st.textFont);
        painter->setPen(QColor(0x21, 0x21, 0x21));
        painter->drawText(body, Qt::AlignVCenter | Qt::AlignHCenter,
                          QFontMetricsF(st.textFont).elidedText(m_name, Qt::ElideMiddle, body.width()));
        y += kLineHeight;
    }
    painter->setFont(st.monoFont);
    painter->setPen(QColor(0x45, 0x4f, 0x5a));
    const QRectF shapeRect(body.left(), y, body.width(), kLineHeight);
    painter->drawText(shapeRect, Qt::AlignVCenter | Qt::AlignHCenter,
                      QFontMetricsF(st.monoFont).elidedText(m_shape, Qt::ElideRight, shapeRect.width()));
    paintStatusBadge(painter, m_rect, m_status);
}

EdgeItem::EdgeItem(const LayoutEdgeOut& edge, const QString& label)
    : m_from(edge.from), m_to(edge.to), m_label(label)
{
    setZValue(0);
    const auto& pts = edge.points;
    if (pts.size() >= 2) {
        m_path.moveTo(pts[0]);
        std::size_t i = 1;
        for (; i + 2 < pts.size(); i += 3)
            m_path.cubicTo(pts[i], pts[i + 1], pts[i + 2]);
        for (; i < pts.size(); ++i)
            m_path.lineTo(pts[i]);
    }
    QPointF base = m_path.currentPosition();
    QPointF tip = edge.hasArrow ? edge.arrowTip : base;
    if (!edge.hasArrow && m_path.elementCount() > 1) {
        // No arrow point from Graphviz: draw the head over the last stretch of the path.
        const double len = m_path.length();
        base = m_path.pointAtPercent(m_path.percentAtLength(std::max(0.0, len - 7)));
    }
    const QPointF d = tip - base;
    const double len = std::hypot(d.x(), d.y());
    if (len > 0.01) {
        const QPointF u = d / len;
        const QPointF n(-u.y(), u.x());
        m_arrow << tip << base + n * 3.5 << base - n * 3.5;
    }

    if (!m_label.isEmpty() && m_path.elementCount() > 1) {
        const QFontMetricsF fm(GraphStyle::instance().edgeFont);
        const QPointF mid = m_path.pointAtPercent(0.5);
        const QSizeF sz(fm.horizontalAdvance(m_label) + 6, fm.height() + 2);
        m_labelRect = QRectF(mid + QPointF(5, -sz.height() / 2), sz);
    }
    m_bounds = m_path.boundingRect().united(m_arrow.boundingRect()).adjusted(-2, -2, 2, 2);
    if (!m_labelRect.isNull())
        m_bounds = m_bounds.united(m_labelRect);
    QPainterPathStroker stroker;
    stroker.setWidth(8);
    m_shape = stroker.createStroke(m_path);
    m_shape.addPolygon(m_arrow);
    if (!m_labelRect.isNull())
        m_shape.addRect(m_labelRect);
}

QPainterPath EdgeItem::shape() const
{
    return m_shape;
}

void EdgeItem::setFusionNote(const QString& text)
{
    m_note = text;
    setToolTip(text);
}

void EdgeItem::setHighlighted(bool on)
{
    if (m_highlighted == on)
        return;
    m_highlighted = on;
    update();
}

void EdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*)
{
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const QColor color = m_highlighted ? QColor(0xff, 0x8f, 0x00) : QColor(0x6b, 0x73, 0x80);
    QPen pen(color, m_highlighted ? 2.2 : 1.2);
    if (lod < kLodNoText)
        pen.setCosmetic(true);
    painter->setPen(pen);
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(m_path);
    if (!m_arrow.isEmpty()) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(color);
        painter->drawPolygon(m_arrow);
    }
    if (lod >= kLodEdgeLabels && !m_labelRect.isNull()) {
        painter->setFont(GraphStyle::instance().edgeFont);
        painter->setPen(QColor(0x50, 0x57, 0x60));
        painter->drawText(m_labelRect, Qt::AlignVCenter | Qt::AlignLeft, m_label);
    }
}

}  // namespace tessera::views
