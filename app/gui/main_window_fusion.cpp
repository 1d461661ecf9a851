// The main window's fusion-plan wiring (issue 6): the Fusion Plan dock, the Edit menu's undo
// history, graph clusters, refusals and the plan's part in runs. See main_window.h.
#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QUndoStack>

#include <map>
#include <set>

#include "app/gui/main_window.h"

#include "app/gui/document.h"
#include "app/gui/plan_session.h"
#include "app/gui/project_controller.h"
#include "app/gui/run_results.h"
#include "app/gui/run_session.h"
#include "core/pipeline/run.h"
#include "views/code/code_panel.h"
#include "views/roofline/energy_view.h"
#include "views/roofline/roofline_view.h"
#include "views/timing/timing_panel.h"
#include "views/fusion/fusion_plan_panel.h"
#include "views/fusion/fusion_plan_snapshot.h"
#include "views/graph/graph_view.h"

namespace tessera::app {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

void MainWindow::createFusionDock()
{
    m_fusionPanel = new views::FusionPlanPanel(this);
    m_fusionPanel->setObjectName(QStringLiteral("fusionPanel"));
    m_fusionPanel->setProfiles(m_doc->plans()->profiles());
    m_fusionPanel->setState(m_doc->plans()->planner(), fromStd(m_doc->plans()->hardware().name));
    m_fusionDock = new QDockWidget(tr("Fusion Plan"), this);
    m_fusionDock->setObjectName(QStringLiteral("fusionDock"));
    m_fusionDock->setWidget(m_fusionPanel);
    addDockWidget(Qt::BottomDockWidgetArea, m_fusionDock);
    m_fusionDock->hide();
    QAction* toggle = m_fusionDock->toggleViewAction();
    toggle->setText(tr("&Fusion Plan"));
    toggle->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    m_viewMenu->addAction(toggle);

    // Edit, between File and View.
    auto* edit = new QMenu(tr("&Edit"), this);
    edit->setObjectName(QStringLiteral("editMenu"));
    menuBar()->insertMenu(m_viewMenu->menuAction(), edit);
    m_undoAction = m_doc->plans()->undoStack()->createUndoAction(this, tr("&Undo"));
    m_undoAction->setShortcut(QKeySequence::Undo);
    m_undoAction->setObjectName(QStringLiteral("undoAction"));
    m_redoAction = m_doc->plans()->undoStack()->createRedoAction(this, tr("&Redo"));
    m_redoAction->setShortcut(QKeySequence::Redo);
    m_redoAction->setObjectName(QStringLiteral("redoAction"));
    edit->addAction(m_undoAction);
    edit->addAction(m_redoAction);
    edit->addSeparator();
    edit->addAction(m_view->fuseAction());
    edit->addAction(m_view->splitAction());

    connect(m_doc->plans(), &PlanSession::planChanged, this, &MainWindow::onPlanChanged);
    connect(m_doc->plans(), &PlanSession::busyChanged, this, [this](bool busy) {
        m_fusionPanel->setBusy(busy, busy ? tr("Planning (%1 on %2)...").arg(m_fusionPanel->planner(),
                                                                               fromStd(m_doc->plans()->hardware().name))
                                          : QString());
    });
    connect(m_doc->plans(), &PlanSession::editRefused, this, &MainWindow::onPlanRefused);
    connect(m_doc->plans(), &PlanSession::warning, this, [this](const QString& message) {
        statusBar()->showMessage(tr("Fusion plan: %1").arg(message), 8000);
        showProblems();
    });
    connect(m_fusionPanel, &views::FusionPlanPanel::plannerChosen, m_doc->plans(), &PlanSession::choosePlanner);
    connect(m_fusionPanel, &views::FusionPlanPanel::hardwareChosen, m_doc->plans(), &PlanSession::chooseHardware);
    connect(m_fusionPanel, &views::FusionPlanPanel::replanClicked, m_doc->plans(), &PlanSession::replan);
    connect(m_fusionPanel, &views::FusionPlanPanel::fuseClicked, this, [this] { m_doc->plans()->fuse(m_view->selectedOperatorNames()); });
    connect(m_fusionPanel, &views::FusionPlanPanel::splitClicked, m_doc->plans(), &PlanSession::split);
    connect(m_fusionPanel, &views::FusionPlanPanel::groupSelected, this, &MainWindow::onPlanGroupSelected);
    connect(m_view, &views::GraphView::fusionRequested, this, [this](const QStringList& nodes) {
        showFusionPlan();
        m_doc->plans()->fuse(nodes);
    });
    connect(m_view, &views::GraphView::splitRequested, this, [this](const QString& group) {
        showFusionPlan();
        m_doc->plans()->split(group);
    });
}

void MainWindow::showFusionPlan()
{
    const bool first = m_fusionDock->isHidden();
    m_fusionDock->show();
    m_fusionDock->raise();
    if (first)
        resizeDocks({m_fusionDock}, {std::max(220, height() / 4)}, Qt::Vertical);
}

namespace {

/// True when both plans fuse the same sets of ops (singles and group names do not matter).
bool sameFusedGroups(const schedule::FusionPlan& a, const schedule::FusionPlan& b) {
    auto fused = [](const schedule::FusionPlan& p) {
        std::set<std::set<std::string>> r;
        for (const auto& g : p.groups)
            if (g.ops.size() > 1) r.insert(std::set<std::string>(g.ops.begin(), g.ops.end()));
        return r;
    };
    return fused(a) == fused(b);
}

}  // namespace

std::vector<views::EdgeFusionNote> edgeFusionNotes(const PlanSession& plans, const QKeySequence& fuseShortcut)
{
    const std::string keys = fuseShortcut.toString(QKeySequence::NativeText).toStdString();
    std::vector<views::EdgeFusionNote> notes;
    for (const schedule::EdgeReason& r : plans.crossingEdgeReasons())
        notes.push_back({fromStd(r.from), fromStd(r.to), fromStd(schedule::edgeReasonText(r, keys))});
    return notes;
}

void MainWindow::onPlanChanged()
{
    m_fusionPanel->setProfiles(m_doc->plans()->profiles());
    const bool programPlan = m_doc->plans()->ready() && m_doc->plans()->plan().planner == "program";
    m_fusionPanel->setState(programPlan ? QStringLiteral("program") : m_doc->plans()->planner(), fromStd(m_doc->plans()->hardware().name));
    if (!m_doc->plans()->ready()) {
        m_fusionPanel->setPlaceholder(m_doc->model() ? tr("Planning...") : tr("Open a model to plan its fusion."));
        m_fusionPanel->setMeasuredTimes({});
        m_view->setFusionClusters({});
        m_view->setEdgeFusionNotes({});
        return;
    }
    views::FusionPlanSnapshot snap =
        views::makeFusionPlanSnapshot(m_doc->plans()->plan(), m_doc->plans()->violations(), m_doc->plans()->plannerAdvice());
    std::vector<views::FusionCluster> clusters;
    for (const views::FusionPlanRow& r : snap.rows) {
        if (r.fused())
            clusters.push_back({r.group, r.kind, r.ops, r.colour});
    }
    m_fusionPanel->setSnapshot(std::move(snap));
    m_view->setFusionClusters(std::move(clusters));
    m_view->setEdgeFusionNotes(edgeFusionNotes(*m_doc->plans(), m_view->fuseAction()->shortcut()));
    selectPlanGroupOfNode(m_view->selectedNodeId());
    // Results of a run compiled with another plan describe kernels that no longer exist: drop them
    // (statuses, timings, roofline dots) rather than show them next to the new plan.
    // Compared with the plan the run was asked for (the compile may have split a group it could
    // not fuse; that is not a change of plan).
    const std::optional<schedule::FusionPlan>& asked = m_doc->runs()->lastOutcome().settings.compile.plan;
    if (m_compiled && !sameFusedGroups(asked ? *asked : m_compiled->plan, m_doc->plans()->plan())) {
        m_view->setKernelStatuses({});
        m_code->clear(tr("The fusion plan changed: run again (Ctrl+R) to generate the new kernels."));
        m_timing->clear(tr("The fusion plan changed: run again (Ctrl+R) to compile and time the new kernels."));
        m_roofline->clearPoints();
        m_energy->clearPoints();
        m_compiled.reset();
        statusBar()->showMessage(tr("Fusion plan changed: the last run's results were cleared; run again (Ctrl+R)"),
                                 8000);
    }
    if (m_doc->plans()->loadedFromFile() && m_doc->plans()->undoStack()->count() == 0) {
        // Name the model, not the cache file; where the plan came from is in the tooltip.
        const QString project = m_project ? m_project->projectPath() : QString();
        const QString from = project.isEmpty() ? PlanSession::planFilePath(m_doc->path()) : project;
        const QString message = tr("Restored your fusion plan edits for %1").arg(QFileInfo(m_doc->path()).fileName());
        statusBar()->showMessage(message, 6000);
        statusBar()->setToolTip(tr("Fusion plan restored from %1").arg(QDir::toNativeSeparators(from)));
        statusBar()->setProperty("tesseraTipFor", message);
    }
}

void MainWindow::onPlanRefused(const QString& node, const QString& message)
{
    showFusionPlan();
    m_view->showNodeMessage(node, message);
    statusBar()->showMessage(tr("Fusion refused: %1").arg(message), 10000);
    showProblems();
}

void MainWindow::onPlanGroupSelected(const QString& group, const QStringList& members)
{
    QList<int> ids;
    for (const QString& m : members) {
        const int id = m_view->operatorIdByName(m.toStdString());
        if (id >= 0)
            ids << id;
    }
    if (ids.isEmpty())
        return;
    // The primary node is the anchor of the row clicked last; members may span several groups.
    int primary = ids.first();
    for (const schedule::FusionGroup& g : m_doc->plans()->plan().groups) {
        if (fromStd(g.name) != group)
            continue;
        const int anchor = m_view->operatorIdByName(g.anchor);
        if (anchor >= 0 && ids.contains(anchor))
            primary = anchor;
    }
    m_view->selectNodes(ids, primary, true);
    selectPlanGroupOfNode(primary);
}

void MainWindow::selectPlanGroupOfNode(int nodeId)
{
    if (m_fusionPanel == nullptr)
        return;
    const views::GraphSnapshot* snap = m_view->snapshot();
    const views::SnapshotNode* n = snap ? snap->find(nodeId) : nullptr;
    if (n == nullptr || n->kind != views::SnapshotNodeKind::Operator) {
        m_fusionPanel->selectGroup(QString());
        return;
    }
    // The rows of every group with a selected node (Ctrl+click in the graph or the table), the
    // node's own group first.
    QStringList groups;
    auto add = [&](const std::string& node) {
        const int gi = m_doc->plans()->plan().groupOf(node);
        const QString name = gi >= 0 ? fromStd(m_doc->plans()->plan().groups[static_cast<std::size_t>(gi)].name) : QString();
        if (!name.isEmpty() && !groups.contains(name))
            groups << name;
    };
    add(n->name);
    for (const QString& op : m_view->selectedOperatorNames())
        add(op.toStdString());
    m_fusionPanel->selectGroups(groups);
}

void MainWindow::showPlanTimings(const pipeline::RunReport& report)
{
    std::map<QString, double> times;
    for (const pipeline::KernelReport& k : report.kernels)
        times[fromStd(k.group.empty() ? k.name : k.group)] = k.time.median;
    // The same reason, in the same words, as the Timings dock's "Timings unreliable" line.
    m_fusionPanel->setMeasuredTimes(times, fromStd(runTimingWarning(report)));
}

}  // namespace tessera::app
