#include "app/gui/fusion_controller.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QHeaderView>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QTableView>
#include <QUndoStack>

#include <algorithm>
#include <map>

#include "app/gui/document.h"
#include "app/gui/plan_session.h"
#include "app/gui/program_controller.h"
#include "app/gui/project_controller.h"
#include "app/gui/run_results.h"
#include "app/gui/run_session.h"
#include "app/gui/schedule_controller.h"
#include "core/pipeline/run.h"
#include "views/fusion/fusion_plan_panel.h"
#include "views/fusion/fusion_plan_snapshot.h"
#include "views/graph/graph_view.h"
#include "views/mapping/mapping_panel.h"

namespace tessera::app {
namespace {

/// Rows the plan table keeps however small its dock is made.
constexpr int kMinimumRows = 3;

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

/// A table's height for its header and `rows` rows (frame included).
int tableHeightFor(const QTableView* table, int rows)
{
    const int header = table->horizontalHeader()->isHidden() ? 0 : table->horizontalHeader()->sizeHint().height();
    return header + rows * table->verticalHeader()->defaultSectionSize() + 2 * table->frameWidth();
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

FusionController::FusionController(Document* doc, const Placement& place)
    : QObject(place.window), m_doc(doc), m_window(place.window), m_graph(place.graph)
{
    createDock(place.viewMenu);
    createEditMenu(place.viewMenu);
    createSchedules(place.mapping);
    followTarget(place.mapping);
}

void FusionController::createDock(QMenu* viewMenu)
{
    PlanSession* plans = m_doc->plans();
    m_panel = new views::FusionPlanPanel(m_window);
    m_panel->setObjectName(QStringLiteral("fusionPanel"));
    m_panel->setProfiles(plans->profiles());
    m_panel->setState(plans->planner(), fromStd(plans->hardware().name));
    // Bottom docks keep a header and a few rows when made small.
    m_panel->table()->setMinimumHeight(tableHeightFor(m_panel->table(), kMinimumRows));
    m_dock = new QDockWidget(tr("Fusion Plan"), m_window);
    m_dock->setObjectName(QStringLiteral("fusionDock"));
    m_dock->setWidget(m_panel);
    m_window->addDockWidget(Qt::BottomDockWidgetArea, m_dock);
    m_dock->hide();
    QAction* toggle = m_dock->toggleViewAction();
    toggle->setText(tr("&Fusion Plan"));
    toggle->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    viewMenu->addAction(toggle);

    connect(plans, &PlanSession::planChanged, this, &FusionController::onPlanChanged);
    connect(plans, &PlanSession::busyChanged, this, [this](bool busy) {
        m_panel->setBusy(busy, busy ? tr("Planning (%1 on %2)...").arg(m_panel->planner(), fromStd(m_doc->plans()->hardware().name))
                                    : QString());
    });
    connect(plans, &PlanSession::editRefused, this, &FusionController::onRefused);
    connect(plans, &PlanSession::warning, this, [this](const QString& message) {
        m_window->statusBar()->showMessage(tr("Fusion plan: %1").arg(message), 8000);
    });
    connect(m_panel, &views::FusionPlanPanel::plannerChosen, plans, &PlanSession::choosePlanner);
    connect(m_panel, &views::FusionPlanPanel::hardwareChosen, plans, &PlanSession::chooseHardware);
    connect(m_panel, &views::FusionPlanPanel::replanClicked, plans, &PlanSession::replan);
    connect(m_panel, &views::FusionPlanPanel::fuseClicked, this, [this] { m_doc->plans()->fuse(m_graph->selectedOperatorNames()); });
    connect(m_panel, &views::FusionPlanPanel::splitClicked, plans, &PlanSession::split);
    connect(m_panel, &views::FusionPlanPanel::groupSelected, this, &FusionController::onGroupSelected);
    connect(m_graph, &views::GraphView::fusionRequested, this, [this](const QStringList& nodes) {
        showPlan();
        m_doc->plans()->fuse(nodes);
    });
    connect(m_graph, &views::GraphView::splitRequested, this, [this](const QString& group) {
        showPlan();
        m_doc->plans()->split(group);
    });
    connect(m_doc, &Document::recordShown, this, &FusionController::showRecordPlanTimes);
    connect(plans, &PlanSession::planChanged, this, &FusionController::showRecordPlanTimes);
}

void FusionController::createEditMenu(QMenu* viewMenu)
{
    // Edit, between File and View.
    m_editMenu = new QMenu(tr("&Edit"), m_window);
    m_editMenu->setObjectName(QStringLiteral("editMenu"));
    m_window->menuBar()->insertMenu(viewMenu->menuAction(), m_editMenu);
    m_undoAction = m_doc->undoStack()->createUndoAction(m_window, tr("&Undo"));
    m_undoAction->setShortcut(QKeySequence::Undo);
    m_undoAction->setObjectName(QStringLiteral("undoAction"));
    m_redoAction = m_doc->undoStack()->createRedoAction(m_window, tr("&Redo"));
    m_redoAction->setShortcut(QKeySequence::Redo);
    m_redoAction->setObjectName(QStringLiteral("redoAction"));
    m_editMenu->addAction(m_undoAction);
    m_editMenu->addAction(m_redoAction);
    m_editMenu->addSeparator();
    m_editMenu->addAction(m_graph->fuseAction());
    m_editMenu->addAction(m_graph->splitAction());
}

void FusionController::createSchedules(views::MappingPanel* mapping)
{
    // The Task Mapping dock's Apply / Reset become schedule edits on the plan's undo stack; the
    // next run (and Live) compiles with them.
    m_doc->attachSchedules(new ScheduleController(m_doc->plans(), mapping, m_doc));
    ScheduleController* schedules = m_doc->schedules();
    schedules->setObjectName(QStringLiteral("scheduleController"));
    // A check lowers the kernel as the next run will compile it (target, threads, preferences).
    schedules->setOptionsProvider([this] { return m_doc->runSettings().compile; });
    connect(schedules, &ScheduleController::applyRefused, this, [this](const QString& node, const QString& message) {
        m_window->statusBar()->showMessage(tr("Mapping of %1 not applied: %2").arg(node, message), 10000);
    });
    connect(schedules, &ScheduleController::applied, this, [this](const QString& node) {
        const bool live = m_program != nullptr && m_program->isLive();
        m_window->statusBar()->showMessage(live ? tr("Mapping of %1 applied: running again (Live)").arg(node)
                                                : tr("Mapping of %1 applied: Run (Ctrl+R) compiles it").arg(node),
                                           8000);
    });
}

void FusionController::followTarget(views::MappingPanel* mapping)
{
    auto hardware = [this] { m_doc->plans()->setTargetHardware(PlanSession::defaultHardwareFor(m_doc->currentTarget().isCuda())); };
    connect(m_doc, &Document::targetChanged, this, hardware);
    hardware();
    // Warps and banks are GPU concepts: on the CPU target the mapping's memory view is a GPU view.
    auto mappingTarget = [this, mapping] { mapping->setCpuTarget(!m_doc->currentTarget().isCuda()); };
    connect(m_doc, &Document::targetChanged, this, mappingTarget);
    mappingTarget();
    m_panel->hardwareCombo()->setToolTip(
        tr("Hardware the plan is made for. Until you pick one it follows the run target: \"host\" (this CPU) "
           "for the CPU, \"h200\" for CUDA."));
}

void FusionController::showPlan()
{
    const bool first = m_dock->isHidden();
    m_dock->show();
    m_dock->raise();
    if (first)
        m_window->resizeDocks({m_dock}, {std::max(220, m_window->height() / 4)}, Qt::Vertical);
}

void FusionController::onPlanChanged()
{
    const PlanSession* plans = m_doc->plans();
    m_panel->setProfiles(plans->profiles());
    const bool programPlan = plans->ready() && plans->plan().planner == "program";
    m_panel->setState(programPlan ? QStringLiteral("program") : plans->planner(), fromStd(plans->hardware().name));
    if (!plans->ready()) {
        m_panel->setPlaceholder(m_doc->model() ? tr("Planning...") : tr("Open a model to plan its fusion."));
        m_panel->setMeasuredTimes({});
        m_graph->setFusionClusters({});
        m_graph->setEdgeFusionNotes({});
        return;
    }
    views::FusionPlanSnapshot snap = views::makeFusionPlanSnapshot(plans->plan(), plans->violations(), plans->plannerAdvice());
    std::vector<views::FusionCluster> clusters;
    for (const views::FusionPlanRow& r : snap.rows) {
        if (r.fused())
            clusters.push_back({r.group, r.kind, r.ops, r.colour});
    }
    m_panel->setSnapshot(std::move(snap));
    m_graph->setFusionClusters(std::move(clusters));
    m_graph->setEdgeFusionNotes(edgeFusionNotes(*plans, m_graph->fuseAction()->shortcut()));
    selectGroupOfNode(m_graph->selectedNodeId());
    if (plans->loadedFromFile() && plans->undoStack()->count() == 0) {
        // Name the model, not the cache file; where the plan came from is in the tooltip.
        const QString project = m_project ? m_project->projectPath() : QString();
        const QString from = project.isEmpty() ? PlanSession::planFilePath(m_doc->path()) : project;
        const QString message = tr("Restored your fusion plan edits for %1").arg(QFileInfo(m_doc->path()).fileName());
        QStatusBar* bar = m_window->statusBar();
        bar->showMessage(message, 6000);
        bar->setToolTip(tr("Fusion plan restored from %1").arg(QDir::toNativeSeparators(from)));
        bar->setProperty("tesseraTipFor", message);
    }
}

void FusionController::onRefused(const QString& node, const QString& message)
{
    showPlan();
    m_graph->showNodeMessage(node, message);
    m_window->statusBar()->showMessage(tr("Fusion refused: %1").arg(message), 10000);
}

void FusionController::onGroupSelected(const QString& group, const QStringList& members)
{
    QList<int> ids;
    for (const QString& m : members) {
        const int id = m_graph->operatorIdByName(m.toStdString());
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
        const int anchor = m_graph->operatorIdByName(g.anchor);
        if (anchor >= 0 && ids.contains(anchor))
            primary = anchor;
    }
    m_graph->selectNodes(ids, primary, true);
    selectGroupOfNode(primary);
}

void FusionController::selectGroupOfNode(int nodeId)
{
    const views::GraphSnapshot* snap = m_graph->snapshot();
    const views::SnapshotNode* n = snap ? snap->find(nodeId) : nullptr;
    if (n == nullptr || n->kind != views::SnapshotNodeKind::Operator) {
        m_panel->selectGroup(QString());
        return;
    }
    // The rows of every group with a selected node (Ctrl+click in the graph or the table), the
    // node's own group first.
    const schedule::FusionPlan& plan = m_doc->plans()->plan();
    QStringList groups;
    auto add = [&](const std::string& node) {
        const int gi = plan.groupOf(node);
        const QString name = gi >= 0 ? fromStd(plan.groups[static_cast<std::size_t>(gi)].name) : QString();
        if (!name.isEmpty() && !groups.contains(name))
            groups << name;
    };
    add(n->name);
    for (const QString& op : m_graph->selectedOperatorNames())
        add(op.toStdString());
    m_panel->selectGroups(groups);
}

void FusionController::showPlanTimings(const pipeline::RunReport& report)
{
    std::map<QString, double> times;
    for (const pipeline::KernelReport& k : report.kernels)
        times[fromStd(k.group.empty() ? k.name : k.group)] = k.time.median;
    // The same reason, in the same words, as the Timings dock's "Timings unreliable" line.
    m_panel->setMeasuredTimes(times, fromStd(runTimingWarning(report)));
}

void FusionController::showRecordPlanTimes()
{
    // The table's Measured column from the shown record, until a run replaces it.
    const std::optional<project::RunRecord>& r = m_doc->shownRecord();
    if (r && m_doc->plans()->ready())
        m_panel->setMeasuredTimes(recordPlanTimes(*r, m_doc->plans()->plan()),
                                  fromStd(guiTimingWarning(r->timingWarning, r->threads)));
}

}  // namespace tessera::app
