#pragma once
/// @file
/// Fusion clusters in the graph view (issue 6): each fused group of the current plan (more than
/// one op) is drawn as a coloured rounded region behind its member nodes, following the edges
/// between them, with a label "name · kind" above its topmost member.
///
/// The app hands GraphView::setFusionClusters() a list of FusionCluster values (a snapshot of
/// the plan); members are node names, matched against the drawn operators (unknown names, e.g.
/// nodes folded away, are skipped).
///
/// Thread rules: UI thread only (QGraphicsItem).

#include <vector>

#include <QColor>
#include <QFont>
#include <QGraphicsItem>
#include <QPainterPath>
#include <QString>
#include <QStringList>

namespace tessera::views {

struct FusionCluster {
    QString name;         ///< group name
    QString kind;         ///< "dw-pw", "prologue-epilogue", ...
    QStringList members;  ///< node names
    QColor colour;        ///< fill colour (views::fusionGroupColour)
};

/// Why the two ends of a graph edge are not in one kernel under the current plan (issue 6's
/// "why not" at an edge): the app computes `text` (a rule's refusal, the planner's recorded
/// reason, or that fusing is allowed) for edges between two different groups; the view shows it
/// as the edge's tooltip. `from` and `to` are operator names.
struct EdgeFusionNote {
    QString from;
    QString to;
    QString text;
};

class FusionClusterItem : public QGraphicsItem {
public:
    enum { Type = UserType + 3 };

    /// `memberRects`: the member boxes in scene coordinates (topmost first is not required);
    /// `edgePaths`: the paths of edges between two members, in scene coordinates.
    FusionClusterItem(const FusionCluster& cluster, const std::vector<QRectF>& memberRects,
                      const std::vector<QPainterPath>& edgePaths);
    int type() const override { return Type; }
    QString name() const { return m_name; }
    QString label() const { return m_label; }
    QColor colour() const { return m_colour; }
    /// Where the label is drawn (scene coordinates).
    QRectF labelRect() const { return m_labelRect; }

    QRectF boundingRect() const override { return m_bounds; }
    QPainterPath shape() const override { return m_region; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    static QFont labelFont();

private:
    QString m_name, m_label;
    QColor m_colour;
    QPainterPath m_region;
    QRectF m_labelRect;
    QRectF m_bounds;
};

}  // namespace tessera::views
