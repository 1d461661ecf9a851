#include "views/graph/graph_view.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <QAction>
#include <QContextMenuEvent>
#include <QEvent>
#include <QFrame>
#include <QGraphicsScene>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QTimer>
#include <QToolButton>
#include <QWheelEvent>

#include <map>
#include <vector>

#include "views/graph/graph_items.h"

namespace tessera::views {
namespace {

constexpr double kMinZoom = 0.02;
constexpr double kMaxZoom = 4.0;
constexpr double kStep = 1.2;
// Fitting below this scale makes labels unreadable, so the first view shows the top instead.
constexpr double kReadableZoom = 0.8;
constexpr double kSceneMargin = 40;

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

class FindKeyFilter : public QObject {
public:
    FindKeyFilter(GraphView* view, QLineEdit* edit) : QObject(edit), m_view(view), m_edit(edit) {}

protected:
    bool eventFilter(QObject* obj, QEvent* ev) override
    {
        if (obj == m_edit && ev->type() == QEvent::KeyPress) {
            auto* ke = static_cast<QKeyEvent*>(ev);
            if (ke->key() == Qt::Key_Escape) {
                m_view->hideFindBar();
                return true;
            }
            if (ke->key() == Qt::Key_Return || ke->key() == Qt::Key_Enter) {
                m_view->findNext(m_edit->text(), (ke->modifiers() & Qt::ShiftModifier) != 0);
                return true;
            }
        }
        return QObject::eventFilter(obj, ev);
    }

private:
    GraphView* m_view;
    QLineEdit* m_edit;
};

/// The status legend in the view's corner: one swatch (drawn like the node ring) and count per
/// status present.
class StatusLegend : public QWidget {
public:
    explicit StatusLegend(QWidget* parent) : QWidget(parent)
    {
        setAttribute(Qt::WA_TransparentForMouseEvents);
        setObjectName(QStringLiteral("statusLegend"));
    }

    void setCounts(std::vector<std::pair<KernelStatus, int>> counts)
    {
        m_counts = std::move(counts);
        QStringList tip;
        for (const auto& [st, n] : m_counts)
            tip << QStringLiteral("%1: %2").arg(kernelStatusLabel(st), kernelStatusDescription(st));
        setToolTip(tip.join(QLatin1Char('\n')));
        resize(sizeHint());
        update();
    }

    QString text() const
    {
        QStringList parts;
        for (const auto& [st, n] : m_counts)
            parts << QStringLiteral("%1 %2").arg(kernelStatusLabel(st)).arg(n);
        return parts.join(QStringLiteral(" \u00b7 "));
    }

    QSize sizeHint() const override
    {
        const QFontMetrics fm(font());
        int w = kPad;
        for (const auto& [st, n] : m_counts)
            w += kSwatch + 5 + fm.horizontalAdvance(entryText(st, n)) + kGap;
        return {w - kGap + kPad, fm.height() + 2 * kPad};
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(QColor(0xc8, 0xcc, 0xd2));
        p.setBrush(QColor(255, 255, 255, 230));
        p.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), 5, 5);
        const QFontMetrics fm(font());
        int x = kPad;
        const int cy = height() / 2;
        for (const auto& [st, n] : m_counts) {
            QPen pen(kernelStatusColor(st), 2.5, kernelStatusPenStyle(st));
            p.setPen(pen);
            p.setBrush(QColor(0xf4, 0xf5, 0xf7));
            p.drawRoundedRect(QRectF(x + 1.5, cy - kSwatch / 2.0 + 1.5, kSwatch - 3, kSwatch - 3), 3, 3);
            x += kSwatch + 5;
            const QString t = entryText(st, n);
            p.setPen(QColor(0x30, 0x33, 0x38));
            p.drawText(QRect(x, 0, fm.horizontalAdvance(t) + 2, height()), Qt::AlignVCenter | Qt::AlignLeft, t);
            x += fm.horizontalAdvance(t) + kGap;
        }
    }

private:
    static QString entryText(KernelStatus st, int n) { return QStringLiteral("%1 %2").arg(kernelStatusLabel(st)).arg(n); }
    static constexpr int kPad = 7;
    static constexpr int kGap = 12;
    static constexpr int kSwatch = 14;
    std::vector<std::pair<KernelStatus, int>> m_counts;
};

}  // namespace

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent), m_scene(new QGraphicsScene(this))
{
    m_scene->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    setScene(m_scene);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setOptimizationFlags(QGraphicsView::DontAdjustForAntialiasing);
    setFrameShape(QFrame::NoFrame);
    setFocusPolicy(Qt::StrongFocus);
    connect(m_scene, &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);

    auto makeAction = [this](const QString& text, const QList<QKeySequence>& keys, auto slot) {
        auto* a = new QAction(text, this);
        a->setShortcuts(keys);
        a->setShortcutContext(Qt::WindowShortcut);
        connect(a, &QAction::triggered, this, slot);
        addAction(a);
        return a;
    };
    m_zoomIn = makeAction(tr("Zoom &In"), {QKeySequence(Qt::CTRL | Qt::Key_Equal), QKeySequence(Qt::CTRL | Qt::Key_Plus)},
                          [this] { zoomBy(kStep); });
    m_zoomOut = makeAction(tr("Zoom &Out"), {QKeySequence(Qt::CTRL | Qt::Key_Minus)}, [this] { zoomBy(1 / kStep); });
    m_fit = makeAction(tr("&Fit to Window"), {QKeySequence(Qt::CTRL | Qt::Key_0), QKeySequence(Qt::Key_F)},
                       [this] { fitToWindow(); });
    m_find = makeAction(tr("&Find Node..."), {QKeySequence(Qt::CTRL | Qt::Key_F)}, [this] { showFindBar(); });
    m_fuseAction = makeAction(tr("F&use Selected Nodes"), {QKeySequence(Qt::CTRL | Qt::Key_G)}, [this] { requestFuse(); });
    m_fuseAction->setObjectName(QStringLiteral("fuseAction"));
    m_fuseAction->setToolTip(tr("Fuse the selected operators into one kernel (Ctrl+G; select with Ctrl+click or Shift+drag)"));
    m_splitAction = makeAction(tr("S&plit Fusion Group"), {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G)},
                               [this] { requestSplit(); });
    m_splitAction->setObjectName(QStringLiteral("splitAction"));
    m_splitAction->setToolTip(tr("Split the selected node's fusion group into one kernel per op (Ctrl+Shift+G)"));

    m_balloon = new QLabel(viewport());
    m_balloon->setObjectName(QStringLiteral("nodeBalloon"));
    m_balloon->setWordWrap(true);
    m_balloon->setMaximumWidth(380);
    m_balloon->setTextFormat(Qt::PlainText);
    m_balloon->setStyleSheet(QStringLiteral("QLabel { background: #fff8e1; color: #3e2723; border: 1px solid #c62828; "
                                            "border-radius: 5px; padding: 5px 8px; }"));
    m_balloon->setAttribute(Qt::WA_TransparentForMouseEvents);
    m_balloon->hide();
    m_balloonTimer = new QTimer(this);
    m_balloonTimer->setSingleShot(true);
    connect(m_balloonTimer, &QTimer::timeout, m_balloon, &QWidget::hide);

    m_legend = new StatusLegend(this);
    m_legend->hide();

    auto* bar = new QFrame(this);
    bar->setObjectName(QStringLiteral("findBar"));
    bar->setFrameShape(QFrame::StyledPanel);
    bar->setAutoFillBackground(true);
    auto* lay = new QHBoxLayout(bar);
    lay->setContentsMargins(6, 4, 4, 4);
    lay->setSpacing(4);
    m_findEdit = new QLineEdit(bar);
    m_findEdit->setObjectName(QStringLiteral("findEdit"));
    m_findEdit->setPlaceholderText(tr("Find node name or op type"));
    m_findEdit->setClearButtonEnabled(true);
    m_findEdit->setMinimumWidth(220);
    m_findStatus = new QLabel(bar);
    m_findStatus->setMinimumWidth(70);
    auto* prev = new QToolButton(bar);
    prev->setArrowType(Qt::UpArrow);
    prev->setToolTip(tr("Previous match (Shift+Enter)"));
    auto* next = new QToolButton(bar);
    next->setArrowType(Qt::DownArrow);
    next->setToolTip(tr("Next match (Enter)"));
    auto* close = new QToolButton(bar);
    close->setText(QStringLiteral("\u2715"));
    close->setToolTip(tr("Close (Esc)"));
    close->setAutoRaise(true);
    lay->addWidget(m_findEdit);
    lay->addWidget(m_findStatus);
    lay->addWidget(prev);
    lay->addWidget(next);
    lay->addWidget(close);
    m_findBar = bar;
    m_findBar->hide();
    m_findEdit->installEventFilter(new FindKeyFilter(this, m_findEdit));
    connect(m_findEdit, &QLineEdit::textChanged, this, [this](const QString& t) {
        m_findIndex = -1;
        updateFindStatus(t);
    });
    connect(prev, &QToolButton::clicked, this, [this] { findNext(m_findEdit->text(), true); });
    connect(next, &QToolButton::clicked, this, [this] { findNext(m_findEdit->text(), false); });
    connect(close, &QToolButton::clicked, this, &GraphView::hideFindBar);
}

GraphView::~GraphView()
{
    // The scene is deleted after this body with items still selected; it must not call back.
    disconnect(m_scene, nullptr, this, nullptr);
    m_highlighted.clear();
}

LayoutRequest GraphView::makeLayoutRequest(const GraphSnapshot& snapshot) const
{
    const GraphStyle& style = GraphStyle::instance();
    LayoutRequest req;
    req.nodes.reserve(snapshot.nodes.size());
    for (const SnapshotNode& n : snapshot.nodes)
        req.nodes.push_back(LayoutNodeIn{n.id, style.nodeSize(n), n.name});
    req.edges.reserve(snapshot.edges.size());
    for (const SnapshotEdge& e : snapshot.edges)
        req.edges.push_back(LayoutEdgeIn{e.id, e.from, e.to, e.weight});
    req.rankSep = 34;
    req.nodeSep = 28;
    return req;
}

void GraphView::clearGraph()
{
    m_highlighted.clear();
    m_edgesByNode.clear();
    m_nodes.clear();
    m_clusterItems.clear();
    m_edgeCount = 0;
    m_lastSelected = -1;
    m_primary = -1;
    m_balloon->hide();
    m_findIndex = -1;
    {
        const QSignalBlocker block(m_scene);
        m_scene->clear();
    }
    m_legend->hide();
    m_snapshot.reset();
    emit nodeSelected(-1);
}

void GraphView::setGraph(std::shared_ptr<const GraphSnapshot> snapshot, const LayoutResult& layout)
{
    clearGraph();
    m_snapshot = std::move(snapshot);
    if (!m_snapshot)
        return;

    // Building thousands of items with the index live costs a re-index per insert.
    m_scene->setItemIndexMethod(QGraphicsScene::NoIndex);
    for (const LayoutNodeOut& ln : layout.nodes) {
        const SnapshotNode* sn = m_snapshot->find(ln.id);
        if (sn == nullptr)
            continue;
        auto* item = new NodeItem(*sn, ln.size);
        item->setPos(ln.center);
        m_scene->addItem(item);
        m_nodes.emplace(ln.id, item);
    }
    std::unordered_map<int, const SnapshotEdge*> edgeById;
    for (const SnapshotEdge& e : m_snapshot->edges)
        edgeById.emplace(e.id, &e);
    for (const LayoutEdgeOut& le : layout.edges) {
        const auto it = edgeById.find(le.id);
        if (it == edgeById.end() || le.points.empty())
            continue;
        auto* item = new EdgeItem(le, fromStd(it->second->label));
        m_scene->addItem(item);
        m_edgesByNode.emplace(le.from, item);
        m_edgesByNode.emplace(le.to, item);
        ++m_edgeCount;
    }
    m_scene->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    m_scene->setSceneRect(layout.bounds.adjusted(-kSceneMargin, -kSceneMargin, kSceneMargin, kSceneMargin));
    rebuildClusters();
    applyEdgeNotes();
}

void GraphView::setEdgeFusionNotes(std::vector<EdgeFusionNote> notes)
{
    m_edgeNotes = std::move(notes);
    applyEdgeNotes();
}

void GraphView::applyEdgeNotes()
{
    std::unordered_map<std::string, QString> byEnds;  // "from\nto" -> text
    for (const EdgeFusionNote& n : m_edgeNotes)
        byEnds[(n.from + QLatin1Char('\n') + n.to).toStdString()] = n.text;
    std::set<EdgeItem*> done;
    for (const auto& [id, edge] : m_edgesByNode) {
        if (!done.insert(edge).second)
            continue;
        const SnapshotNode* a = m_snapshot ? m_snapshot->find(edge->fromId()) : nullptr;
        const SnapshotNode* b = m_snapshot ? m_snapshot->find(edge->toId()) : nullptr;
        QString text;
        if (a != nullptr && b != nullptr && a->kind == SnapshotNodeKind::Operator && b->kind == SnapshotNodeKind::Operator) {
            const auto it = byEnds.find(a->name + "\n" + b->name);
            if (it != byEnds.end())
                text = it->second;
        }
        edge->setFusionNote(text);
    }
}

QString GraphView::edgeFusionNote(const QString& from, const QString& to) const
{
    const int a = operatorIdByName(from.toStdString());
    const int b = operatorIdByName(to.toStdString());
    const auto range = m_edgesByNode.equal_range(a);
    for (auto it = range.first; it != range.second; ++it) {
        if (it->second->fromId() == a && it->second->toId() == b)
            return it->second->fusionNote();
    }
    return QString();
}

void GraphView::setFusionClusters(std::vector<FusionCluster> clusters)
{
    m_clusters = std::move(clusters);
    rebuildClusters();
}

const FusionCluster* GraphView::clusterOfNode(const QString& name) const
{
    for (const FusionCluster& c : m_clusters) {
        if (c.members.contains(name))
            return &c;
    }
    return nullptr;
}

void GraphView::rebuildClusters()
{
    for (FusionClusterItem* item : m_clusterItems) {
        m_scene->removeItem(item);
        delete item;
    }
    m_clusterItems.clear();
    if (!m_snapshot || m_clusters.empty())
        return;
    std::unordered_map<std::string, NodeItem*> byName;
    for (const SnapshotNode& n : m_snapshot->nodes) {
        if (n.kind == SnapshotNodeKind::Operator) {
            if (NodeItem* item = nodeItem(n.id))
                byName.emplace(n.name, item);
        }
    }
    for (const FusionCluster& c : m_clusters) {
        std::vector<QRectF> rects;
        std::vector<int> ids;
        for (const QString& m : c.members) {
            const auto it = byName.find(m.toStdString());
            if (it == byName.end())
                continue;
            rects.push_back(it->second->mapRectToScene(it->second->shape().boundingRect()));
            ids.push_back(it->second->nodeId());
        }
        if (rects.empty())
            continue;
        std::vector<QPainterPath> paths;
        std::vector<const EdgeItem*> seen;
        for (const int id : ids) {
            const auto range = m_edgesByNode.equal_range(id);
            for (auto it = range.first; it != range.second; ++it) {
                const EdgeItem* e = it->second;
                if (e->fromId() != id || std::find(ids.begin(), ids.end(), e->toId()) == ids.end())
                    continue;
                if (std::find(seen.begin(), seen.end(), e) != seen.end())
                    continue;
                seen.push_back(e);
                paths.push_back(e->mapToScene(e->path()));
            }
        }
        auto* item = new FusionClusterItem(c, rects, paths);
        m_scene->addItem(item);
        m_clusterItems.push_back(item);
    }
}

QList<int> GraphView::selectedNodeIds() const
{
    QList<int> ids;
    const int primary = selectedNodeId();
    if (primary >= 0)
        ids << primary;
    for (QGraphicsItem* item : m_scene->selectedItems()) {
        if (item->type() == NodeItem::Type) {
            const int id = static_cast<NodeItem*>(item)->nodeId();
            if (id != primary)
                ids << id;
        }
    }
    return ids;
}

QStringList GraphView::selectedOperatorNames() const
{
    QStringList names;
    if (!m_snapshot)
        return names;
    const QList<int> ids = selectedNodeIds();
    for (const SnapshotNode& n : m_snapshot->nodes) {
        if (n.kind == SnapshotNodeKind::Operator && ids.contains(n.id))
            names << fromStd(n.name);
    }
    return names;
}

void GraphView::selectNodes(const QList<int>& ids, int primary, bool center)
{
    {
        const QSignalBlocker block(m_scene);
        m_scene->clearSelection();
        for (const int id : ids) {
            if (NodeItem* item = nodeItem(id))
                item->setSelected(true);
        }
    }
    m_primary = primary;
    onSelectionChanged();
    if (NodeItem* item = nodeItem(primary); item != nullptr && center)
        centerOn(item);
}

void GraphView::requestFuse() { emit fusionRequested(selectedOperatorNames()); }

void GraphView::requestSplit()
{
    const views::SnapshotNode* n = m_snapshot ? m_snapshot->find(selectedNodeId()) : nullptr;
    if (n == nullptr)
        return;
    if (const FusionCluster* c = clusterOfNode(fromStd(n->name)))
        emit splitRequested(c->name);
}

void GraphView::showNodeMessage(const QString& nodeName, const QString& text, int ms)
{
    m_balloon->setText(text);
    m_balloon->adjustSize();
    QPoint at(12, 12);
    const int id = operatorIdByName(nodeName.toStdString());
    if (NodeItem* item = nodeItem(id)) {
        if (!mapToScene(viewport()->rect()).boundingRect().contains(item->sceneBoundingRect()))
            centerOn(item);
        const QRectF r = item->mapRectToScene(item->shape().boundingRect());
        at = mapFromScene(QPointF(r.right() + 10, r.top()));
        // Keep it inside the viewport: to the left of the node when there is no room on the right.
        if (at.x() + m_balloon->width() > viewport()->width() - 4)
            at.setX(std::max(4, mapFromScene(QPointF(r.left() - 10, r.top())).x() - m_balloon->width()));
        at.setY(std::clamp(at.y(), 4, std::max(4, viewport()->height() - m_balloon->height() - 4)));
    }
    m_balloon->move(at);
    m_balloon->show();
    m_balloon->raise();
    m_balloonTimer->start(ms);
}

QString GraphView::nodeMessage() const { return m_balloon->isVisibleTo(this) ? m_balloon->text() : QString(); }

void GraphView::mousePressEvent(QMouseEvent* event)
{
    // Shift or Ctrl on the background: a rubber band selects nodes instead of panning.
    const bool modifier = (event->modifiers() & (Qt::ShiftModifier | Qt::ControlModifier)) != 0;
    QGraphicsItem* under = itemAt(event->position().toPoint());
    const bool onNode = under != nullptr && under->type() == NodeItem::Type;
    if (event->button() == Qt::LeftButton && modifier && !onNode)
        setDragMode(QGraphicsView::RubberBandDrag);
    QGraphicsView::mousePressEvent(event);
}

void GraphView::mouseReleaseEvent(QMouseEvent* event)
{
    QGraphicsView::mouseReleaseEvent(event);
    if (dragMode() == QGraphicsView::RubberBandDrag)
        setDragMode(QGraphicsView::ScrollHandDrag);
}

void GraphView::contextMenuEvent(QContextMenuEvent* event)
{
    QGraphicsItem* under = itemAt(event->pos());
    if (under != nullptr && under->type() == NodeItem::Type && !under->isSelected())
        selectNode(static_cast<NodeItem*>(under)->nodeId(), false);
    QMenu menu(this);
    const QStringList names = selectedOperatorNames();
    QAction* fuse = menu.addAction(m_fuseAction->text(), this, &GraphView::requestFuse);
    fuse->setShortcut(m_fuseAction->shortcut());
    fuse->setEnabled(names.size() >= 2);
    const views::SnapshotNode* n = m_snapshot ? m_snapshot->find(selectedNodeId()) : nullptr;
    const FusionCluster* c = n ? clusterOfNode(fromStd(n->name)) : nullptr;
    QAction* split = menu.addAction(c ? tr("S&plit Group %1").arg(c->name) : m_splitAction->text(), this, &GraphView::requestSplit);
    split->setShortcut(m_splitAction->shortcut());
    split->setEnabled(c != nullptr);
    menu.addSeparator();
    menu.addAction(m_fit);
    menu.addAction(m_find);
    menu.exec(event->globalPos());
}

void GraphView::setKernelStatuses(const KernelStatusMap& statuses)
{
    std::map<KernelStatus, int> counts;
    if (m_snapshot) {
        for (const SnapshotNode& n : m_snapshot->nodes) {
            if (n.kind != SnapshotNodeKind::Operator)
                continue;
            NodeItem* item = nodeItem(n.id);
            if (item == nullptr)
                continue;
            const auto it = statuses.find(n.name);
            if (it == statuses.end()) {
                item->setStatus(KernelStatus::None);
                continue;
            }
            item->setStatus(it->second.status, it->second.detail);
            if (it->second.status != KernelStatus::None)
                ++counts[it->second.status];
        }
    }
    auto* legend = static_cast<StatusLegend*>(m_legend);
    legend->setCounts({counts.begin(), counts.end()});
    legend->setVisible(!counts.empty());
    placeLegend();
}

void GraphView::clearKernelStatuses() { setKernelStatuses({}); }

KernelStatus GraphView::kernelStatus(int id) const
{
    const NodeItem* item = nodeItem(id);
    return item ? item->status() : KernelStatus::None;
}

int GraphView::operatorIdByName(const std::string& name) const
{
    if (!m_snapshot)
        return -1;
    for (const SnapshotNode& n : m_snapshot->nodes) {
        if (n.kind == SnapshotNodeKind::Operator && n.name == name)
            return n.id;
    }
    return -1;
}

QString GraphView::statusLegendText() const
{
    return m_legend->isVisibleTo(this) ? static_cast<StatusLegend*>(m_legend)->text() : QString();
}

void GraphView::placeLegend()
{
    m_legend->resize(m_legend->sizeHint());
    const QRect vp = viewport()->geometry();
    m_legend->move(vp.left() + 10, std::max(vp.top() + 4, vp.bottom() - m_legend->height() - 10));
    m_legend->raise();
}

NodeItem* GraphView::nodeItem(int id) const
{
    const auto it = m_nodes.find(id);
    return it == m_nodes.end() ? nullptr : it->second;
}

int GraphView::selectedNodeId() const
{
    if (const NodeItem* p = nodeItem(m_primary); p != nullptr && p->isSelected())
        return m_primary;
    for (QGraphicsItem* item : m_scene->selectedItems()) {
        if (item->type() == NodeItem::Type)
            return static_cast<NodeItem*>(item)->nodeId();
    }
    return -1;
}

void GraphView::selectNode(int id, bool center)
{
    NodeItem* item = nodeItem(id);
    {
        const QSignalBlocker block(m_scene);
        m_scene->clearSelection();
        if (item != nullptr)
            item->setSelected(true);
    }
    m_primary = id;
    onSelectionChanged();
    if (item != nullptr && center)
        centerOn(item);
}

void GraphView::onSelectionChanged()
{
    const int id = selectedNodeId();
    if (id == m_lastSelected)
        return;
    m_lastSelected = id;
    highlightEdges(id);
    emit nodeSelected(id);
}

void GraphView::highlightEdges(int nodeId)
{
    for (EdgeItem* e : m_highlighted)
        e->setHighlighted(false);
    m_highlighted.clear();
    if (nodeId < 0)
        return;
    const auto range = m_edgesByNode.equal_range(nodeId);
    for (auto it = range.first; it != range.second; ++it) {
        it->second->setHighlighted(true);
        m_highlighted.push_back(it->second);
    }
}

QList<int> GraphView::findNodes(const QString& text) const
{
    QList<int> out;
    const QString needle = text.trimmed();
    if (needle.isEmpty() || !m_snapshot)
        return out;
    for (const SnapshotNode& n : m_snapshot->nodes) {
        if (fromStd(n.name).contains(needle, Qt::CaseInsensitive) ||
            fromStd(n.opType).contains(needle, Qt::CaseInsensitive))
            out.push_back(n.id);
    }
    return out;
}

bool GraphView::findNext(const QString& text, bool backwards)
{
    const QList<int> matches = findNodes(text);
    if (text != m_findText) {
        m_findText = text;
        m_findIndex = -1;
    }
    if (matches.isEmpty()) {
        updateFindStatus(text);
        return false;
    }
    const int n = static_cast<int>(matches.size());
    if (m_findIndex < 0)
        m_findIndex = backwards ? n - 1 : 0;
    else
        m_findIndex = ((m_findIndex + (backwards ? -1 : 1)) % n + n) % n;
    selectNode(matches[m_findIndex], true);
    m_findStatus->setText(tr("%1 of %2").arg(m_findIndex + 1).arg(n));
    return true;
}

void GraphView::updateFindStatus(const QString& text)
{
    if (text.trimmed().isEmpty()) {
        m_findStatus->clear();
        return;
    }
    const auto n = findNodes(text).size();
    m_findStatus->setText(n == 0 ? tr("no matches") : tr("%n match(es)", nullptr, static_cast<int>(n)));
}

void GraphView::showFindBar()
{
    m_findBar->show();
    m_findBar->raise();
    placeFindBar();
    m_findEdit->setFocus(Qt::ShortcutFocusReason);
    m_findEdit->selectAll();
}

void GraphView::hideFindBar()
{
    m_findBar->hide();
    setFocus();
}

void GraphView::placeFindBar()
{
    m_findBar->adjustSize();
    const int x = std::max(4, viewport()->width() - m_findBar->width() - 12);
    m_findBar->move(x, 8);
}

double GraphView::zoom() const { return transform().m11(); }

void GraphView::setZoom(double factor)
{
    factor = std::clamp(factor, kMinZoom, kMaxZoom);
    setTransform(QTransform::fromScale(factor, factor));
    emit zoomChanged(factor);
}

void GraphView::zoomBy(double factor)
{
    const double target = std::clamp(zoom() * factor, kMinZoom, kMaxZoom);
    const double f = target / zoom();
    scale(f, f);
    emit zoomChanged(zoom());
}

void GraphView::fitToWindow()
{
    if (m_scene->items().isEmpty())
        return;
    fitInView(m_scene->sceneRect(), Qt::KeepAspectRatio);
    if (zoom() > 1.0)
        setZoom(1.0);
    else
        emit zoomChanged(zoom());
}

void GraphView::showStart()
{
    const QRectF r = m_scene->sceneRect();
    if (r.isEmpty())
        return;
    const double fit = std::min(viewport()->width() / r.width(), viewport()->height() / r.height());
    if (fit >= kReadableZoom) {
        fitToWindow();
        return;
    }
    const double z = std::clamp(viewport()->width() / r.width(), kReadableZoom, 1.0);
    setZoom(z);
    // Centre horizontally on the topmost drawn nodes (the graph inputs), top edge in view.
    double topY = r.bottom();
    double x = r.center().x();
    for (const auto& [id, item] : m_nodes) {
        const double y = item->sceneBoundingRect().top();
        if (y < topY - 0.5) {
            topY = y;
            x = item->pos().x();
        }
    }
    const double halfH = viewport()->height() / (2 * z);
    centerOn(QPointF(x, std::max(r.top(), topY - kSceneMargin / 2) + halfH));
}

void GraphView::wheelEvent(QWheelEvent* event)
{
    const int delta = event->angleDelta().y();
    if (delta == 0 || (event->modifiers() & Qt::ShiftModifier)) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    zoomBy(std::pow(kStep, delta / 120.0));
    event->accept();
}

void GraphView::resizeEvent(QResizeEvent* event)
{
    QGraphicsView::resizeEvent(event);
    if (m_findBar->isVisible())
        placeFindBar();
    if (!m_legend->isHidden())
        placeLegend();
}

void GraphView::drawBackground(QPainter* painter, const QRectF& rect)
{
    painter->fillRect(rect, QColor(0xf7, 0xf8, 0xfa));
    // A faint dot grid gives a sense of scale and motion while panning; skipped when far out.
    if (zoom() < 0.4)
        return;
    const double step = 24;
    painter->setPen(QPen(QColor(0xdd, 0xe1, 0xe6), 0));
    const double x0 = std::floor(rect.left() / step) * step;
    const double y0 = std::floor(rect.top() / step) * step;
    QVector<QPointF> pts;
    for (double y = y0; y < rect.bottom(); y += step)
        for (double x = x0; x < rect.right(); x += step)
            pts.push_back(QPointF(x, y));
    painter->drawPoints(pts.data(), static_cast<int>(pts.size()));
}

}  // namespace tessera::views
