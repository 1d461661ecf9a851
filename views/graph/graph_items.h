#pragma once
/// @file
/// Scene items of the graph view: one NodeItem per drawn node, one EdgeItem per edge.
/// Both paint with level of detail: text is skipped when zoomed far out, so graphs with
/// thousands of nodes stay fast. Thread rules: UI thread only (they are QGraphicsItems).

#include <QFont>
#include <QGraphicsItem>
#include <QPainterPath>

#include "views/graph/graph_layout.h"
#include "views/graph/graph_snapshot.h"
#include "views/graph/kernel_status.h"

namespace tessera::views {

/// Fonts and colours shared by all items of one view.
struct GraphStyle {
    QFont titleFont;
    QFont textFont;
    QFont monoFont;
    QFont edgeFont;

    static const GraphStyle& instance();
    /// Fill (light) and accent (strong) colours for a node.
    static QColor fillColor(const SnapshotNode& n);
    static QColor accentColor(const SnapshotNode& n);
    /// Box size for a node from its label text.
    QSizeF nodeSize(const SnapshotNode& n) const;
};

class NodeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 1 };

    NodeItem(const SnapshotNode& node, const QSizeF& size);
    int type() const override { return Type; }
    int nodeId() const { return m_id; }
    QString name() const { return m_name; }
    QString opType() const { return m_opType; }
    SnapshotNodeKind kind() const { return m_kind; }

    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    /// Kernel status ring around the box (see kernel_status.h); `detail` is appended to the
    /// tooltip (e.g. the measured time and error). None removes the ring.
    void setStatus(KernelStatus status, const QString& detail = QString());
    KernelStatus status() const { return m_status; }

private:
    void updateToolTip();

    int m_id;
    SnapshotNodeKind m_kind;
    QString m_opType, m_name, m_shape;
    QColor m_fill, m_accent;
    bool m_knownOp;
    bool m_compact;
    QRectF m_rect;
    KernelStatus m_status = KernelStatus::None;
    QString m_statusDetail;
};

class EdgeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 2 };

    EdgeItem(const LayoutEdgeOut& edge, const QString& label);
    int type() const override { return Type; }
    int fromId() const { return m_from; }
    int toId() const { return m_to; }
    /// The edge's curve in scene coordinates (without the arrow head).
    const QPainterPath& path() const { return m_path; }

    QRectF boundingRect() const override { return m_bounds; }
    /// The curve widened to a few pixels plus the arrow and label, so hovering (tooltips) hits
    /// only near the drawn edge.
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    void setHighlighted(bool on);
    /// The fusion "why not" text shown as this edge's tooltip (empty: no tooltip).
    void setFusionNote(const QString& text);
    QString fusionNote() const { return m_note; }

private:
    int m_from, m_to;
    QPainterPath m_path;
    QPolygonF m_arrow;
    QString m_label;
    QPointF m_labelPos;
    QRectF m_labelRect;
    QRectF m_bounds;
    QPainterPath m_shape;
    QString m_note;
    bool m_highlighted = false;
};

}  // namespace tessera::views
