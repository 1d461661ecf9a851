#pragma once
/// @file
/// The graph view: draws a laid-out GraphSnapshot in a QGraphicsScene (one NodeItem per drawn
/// node, one EdgeItem per edge), with pan (drag), zoom (wheel, Ctrl+=/Ctrl+-), fit (Ctrl+0, F),
/// selection (nodeSelected) and a find bar (Ctrl+F; Enter / Shift+Enter cycle through matches
/// of a node name or op type, case-insensitive substring).
///
/// Fusion plans (issue 6): setFusionClusters() draws each fused group as a coloured region
/// behind its members (fusion_clusters.h). Several nodes can be selected (Ctrl+click, or
/// Shift/Ctrl+drag on the background for a rubber band); Fuse (Ctrl+G, context menu) emits
/// fusionRequested() with the selected operators' names and Split (Ctrl+Shift+G) emits
/// splitRequested() with the cluster of the selected node. showNodeMessage() shows a short
/// balloon next to a node (e.g. why a fusion was refused); setEdgeFusionNotes() gives the
/// edges between groups a tooltip saying why their ends are not one kernel.
///
/// It never lays out or loads anything itself: the app measures with makeLayoutRequest() on the
/// UI thread, runs layoutGraph() on a worker, and hands the result to setGraph().
///
/// Thread rules: UI thread only.

#include <memory>
#include <unordered_map>
#include <vector>

#include <QGraphicsView>
#include <QList>

#include "views/graph/fusion_clusters.h"
#include "views/graph/graph_layout.h"
#include "views/graph/graph_snapshot.h"
#include "views/graph/kernel_status.h"

class QAction;
class QLabel;
class QLineEdit;
class QTimer;
class QWidget;

namespace tessera::views {

class NodeItem;
class EdgeItem;

class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(QWidget* parent = nullptr);
    ~GraphView() override;

    /// Box sizes from this view's fonts; cheap (text metrics only), call on the UI thread.
    LayoutRequest makeLayoutRequest(const GraphSnapshot& snapshot) const;

    /// Replaces the drawing. `layout` must come from makeLayoutRequest(*snapshot) (same ids).
    void setGraph(std::shared_ptr<const GraphSnapshot> snapshot, const LayoutResult& layout);
    void clearGraph();
    const GraphSnapshot* snapshot() const { return m_snapshot.get(); }

    /// Colours operators by the status of their kernel (kernel_status.h), matched by node name;
    /// operators not in `statuses` are drawn plain. A legend with the count per status appears
    /// in the bottom-left corner while any status is set. setGraph()/clearGraph() clear it.
    void setKernelStatuses(const KernelStatusMap& statuses);
    void clearKernelStatuses();
    /// Status of a drawn operator (None for unknown ids and graph inputs/outputs).
    KernelStatus kernelStatus(int id) const;
    /// Drawn id of the operator named `name`, or -1.
    int operatorIdByName(const std::string& name) const;
    /// The legend's text, e.g. "passed 3 · reference 1" (empty when hidden).
    QString statusLegendText() const;

    int nodeItemCount() const { return static_cast<int>(m_nodes.size()); }
    int edgeItemCount() const { return m_edgeCount; }
    NodeItem* nodeItem(int id) const;

    /// Selected drawn node id, or -1.
    int selectedNodeId() const;
    /// Selects a node (clearing others) and optionally centres on it.
    void selectNode(int id, bool center = true);
    /// Selects several nodes (clearing others); `primary` (one of them) is the one
    /// selectedNodeId() reports and nodeSelected() carries. Centres on the primary.
    void selectNodes(const QList<int>& ids, int primary, bool center = true);
    /// Every selected drawn id (primary first).
    QList<int> selectedNodeIds() const;
    /// Names of the selected operators (graph inputs/outputs left out), in drawing order.
    QStringList selectedOperatorNames() const;

    /// Draws the fused groups (replacing the previous ones); an empty list removes them.
    void setFusionClusters(std::vector<FusionCluster> clusters);
    const std::vector<FusionCluster>& fusionClusters() const { return m_clusters; }
    /// The drawn cluster items (one per cluster with at least one drawn member).
    std::vector<FusionClusterItem*> clusterItems() const { return m_clusterItems; }
    /// The cluster holding operator `name`, or nullptr.
    const FusionCluster* clusterOfNode(const QString& name) const;
    /// "Why not one kernel" texts for edges between two fusion groups (or two single kernels),
    /// shown as the edges' tooltips; replaces the previous notes (kept across setGraph(): applied
    /// to the edges whose ends have these operator names). An empty list removes them.
    void setEdgeFusionNotes(std::vector<EdgeFusionNote> notes);
    /// The note on the drawn edge from operator `from` to operator `to` (names), else empty.
    QString edgeFusionNote(const QString& from, const QString& to) const;
    /// A balloon next to operator `nodeName` for `ms` milliseconds (centred on it first), e.g.
    /// "Relu_12's input has 2 uses". Unknown names show it at the top of the view.
    void showNodeMessage(const QString& nodeName, const QString& text, int ms = 5000);
    /// The balloon's text while it is shown, else empty.
    QString nodeMessage() const;

    /// Drawn ids whose name or op type contains `text` (case-insensitive), in drawing order.
    QList<int> findNodes(const QString& text) const;
    /// Selects and centres the next (or previous) match after the current one; false when none.
    bool findNext(const QString& text, bool backwards = false);

    double zoom() const;
    void setZoom(double factor);
    void zoomBy(double factor);
    void fitToWindow();
    /// Initial view of a fresh graph: fit when that is readable, else the top of the graph at a
    /// readable zoom (the user can press F to fit everything).
    void showStart();

    QAction* zoomInAction() const { return m_zoomIn; }
    QAction* zoomOutAction() const { return m_zoomOut; }
    QAction* fitAction() const { return m_fit; }
    QAction* findAction() const { return m_find; }
    /// Ctrl+G: fusionRequested(selectedOperatorNames()).
    QAction* fuseAction() const { return m_fuseAction; }
    /// Ctrl+Shift+G: splitRequested(cluster of the selected node) when it is in one.
    QAction* splitAction() const { return m_splitAction; }

public slots:
    void showFindBar();
    void hideFindBar();

signals:
    /// A node was selected (drawn id) or the selection cleared (-1).
    void nodeSelected(int nodeId);
    void zoomChanged(double factor);
    /// The user asked to fuse these operators (node names) into one group.
    void fusionRequested(const QStringList& nodes);
    /// The user asked to split fusion group `group` into single ops.
    void splitRequested(const QString& group);

protected:
    void wheelEvent(QWheelEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void drawBackground(QPainter* painter, const QRectF& rect) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;

private:
    void onSelectionChanged();
    void placeFindBar();
    void updateFindStatus(const QString& text);
    void highlightEdges(int nodeId);
    void placeLegend();
    void rebuildClusters();
    void applyEdgeNotes();
    void requestFuse();
    void requestSplit();

    QGraphicsScene* m_scene;
    std::shared_ptr<const GraphSnapshot> m_snapshot;
    std::unordered_map<int, NodeItem*> m_nodes;
    std::unordered_multimap<int, EdgeItem*> m_edgesByNode;
    std::vector<EdgeItem*> m_highlighted;
    int m_edgeCount = 0;
    int m_lastSelected = -1;
    int m_primary = -1;
    std::vector<FusionCluster> m_clusters;
    std::vector<FusionClusterItem*> m_clusterItems;
    std::vector<EdgeFusionNote> m_edgeNotes;
    QLabel* m_balloon;
    QTimer* m_balloonTimer;
    QAction* m_fuseAction;
    QAction* m_splitAction;
    int m_findIndex = -1;
    QString m_findText;

    QWidget* m_legend;
    QWidget* m_findBar;
    QLineEdit* m_findEdit;
    QLabel* m_findStatus;
    QAction* m_zoomIn;
    QAction* m_zoomOut;
    QAction* m_fit;
    QAction* m_find;
};

}  // namespace tessera::views
