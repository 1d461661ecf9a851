#include "app/gui/workspace_controller.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QHeaderView>
#include <QMainWindow>
#include <QMenu>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>

#include <algorithm>

#include "app/gui/document.h"
#include "app/gui/fusion_controller.h"
#include "app/gui/roofline_controller.h"
#include "app/gui/run_controller.h"
#include "app/gui/welcome_panel.h"
#include "views/fusion/fusion_plan_panel.h"
#include "views/graph/graph_view.h"
#include "views/roofline/roofline_view.h"

namespace tessera::app {
namespace {

const char* const kGeometryKey = "window/geometry";
const char* const kStateKey = "window/state";
/// Bumped when docks are added or renamed, so an old saved arrangement is not half-applied.
constexpr int kLayoutVersion = 1;
/// The Timings table needs its Kernel, Median and GFLOP/s columns side by side.
constexpr int kMinTimingWidth = 380;
/// Rows of the fusion plan visible without scrolling after the first run.
constexpr int kFusionRows = 6;

/// The Task Mapping tab shares the right area with Properties and Code, above the Roofline: at
/// that area's default height its canvas was a strip. Brought to the front it gets most of the
/// area's height and half the width, inside the window as it is (resizeDocks never grows it).
void giveMappingRoom(QMainWindow* window, QDockWidget* dock)
{
    if (dock->isFloating() || window->dockWidgetArea(dock) == Qt::NoDockWidgetArea)
        return;
    const int wantHeight = window->height() * 3 / 4;
    if (dock->height() < wantHeight)
        window->resizeDocks({dock}, {wantHeight}, Qt::Vertical);
    const int wantWidth = window->width() / 2;
    if (dock->width() < wantWidth)
        window->resizeDocks({dock}, {wantWidth}, Qt::Horizontal);
}

}  // namespace

WorkspaceController::WorkspaceController(Document* doc, const Placement& place)
    : QObject(place.window), m_doc(doc), m_window(place.window), m_graph(place.graph),
      m_propertiesDock(place.propertiesDock), m_mappingDock(place.mappingDock), m_runs(place.runs),
      m_roofline(place.roofline), m_fusion(place.fusion)
{
    createWelcome(place.viewMenu, place.pinAction);

    connect(m_fusion->dock(), &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible)
            QTimer::singleShot(0, this, &WorkspaceController::sizeBottomDocks);
    });
    connect(m_runs->timingDock(), &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible)
            QTimer::singleShot(0, this, &WorkspaceController::sizeBottomDocks);
    });

    for (QDockWidget* dock : m_window->findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly)) {
        QAction* toggle = dock->toggleViewAction();
        disconnect(toggle, &QAction::triggered, dock, nullptr);
        connect(toggle, &QAction::triggered, this, [this, dock] { toggleDock(dock); });
    }
}

void WorkspaceController::createWelcome(QMenu* viewMenu, QAction* pinAction)
{
    // Left of the graph, closed until the first run or Help > Welcome.
    m_welcome = new WelcomePanel(m_window);
    m_welcome->setRunShortcut(runKeys());
    m_welcome->setFusionPlanShortcuts(m_fusion->dock()->toggleViewAction()->shortcut().toString(QKeySequence::NativeText),
                                      pinAction->shortcut().toString(QKeySequence::NativeText));
    m_welcome->setDslSamples(dslSamples(samplesDirectory()));
    m_welcomeDock = new QDockWidget(tr("Welcome"), m_window);
    m_welcomeDock->setObjectName(QStringLiteral("welcomeDock"));
    m_welcomeDock->setWidget(m_welcome);
    m_window->addDockWidget(Qt::LeftDockWidgetArea, m_welcomeDock);
    m_welcomeDock->hide();
    // View lists it with the other docks (Help > Welcome also opens it).
    QAction* toggle = m_welcomeDock->toggleViewAction();
    toggle->setText(tr("&Welcome"));
    toggle->setObjectName(QStringLiteral("viewWelcomeAction"));
    viewMenu->addAction(toggle);
    connect(m_welcome, &WelcomePanel::closeRequested, m_welcomeDock, &QDockWidget::close);
    connect(m_welcome, &WelcomePanel::runRequested, this, &WorkspaceController::welcomeRun);
    connect(m_welcome, &WelcomePanel::rooflineRequested, this, &WorkspaceController::welcomeRoofline);
    connect(m_welcome, &WelcomePanel::fusionPlanRequested, this, &WorkspaceController::welcomeFusionPlan);
    connect(m_welcome, &WelcomePanel::selectNodeRequested, this, &WorkspaceController::welcomeSelectNode);
    connect(m_welcome, &WelcomePanel::dslSampleRequested, this, &WorkspaceController::openRequested);
}

QString WorkspaceController::runKeys() const { return m_runs->runAction()->shortcut().toString(QKeySequence::NativeText); }

void WorkspaceController::showWelcome()
{
    if (m_welcomeDock->isHidden()) {
        m_welcomeDock->show();
        // After the window's first layout (at start-up the window is not shown yet).
        QTimer::singleShot(0, this, [this] {
            m_window->resizeDocks({m_welcomeDock}, {std::clamp(m_window->width() / 4, 320, 380)}, Qt::Horizontal);
        });
    }
    m_welcomeDock->raise();
}

bool WorkspaceController::startFirstRun(bool openSample)
{
    QSettings s;
    const bool first = !s.value(QLatin1String(WelcomePanel::kFirstRunKey), false).toBool();
    s.setValue(QLatin1String(WelcomePanel::kFirstRunKey), true);
    bool opened = false;
    if (first && openSample) {
        const QString dir = samplesDirectory();
        if (!dir.isEmpty()) {
            emit openRequested(dir + QStringLiteral("/mobilenet_v2.onnx"));
            opened = true;
        }
    }
    // The README's run command names the sample: its first run still gets the Welcome panel.
    if (first || (openSample && !s.value(QLatin1String(WelcomePanel::kDontShowKey), false).toBool()))
        showWelcome();
    else
        m_welcomeDock->hide();  // also when a restored layout had it open
    return opened;
}

void WorkspaceController::welcomeRun()
{
    // "Run it on the CPU": the CPU whatever the selector says (not stored as the user's choice).
    m_doc->selectTarget(QStringLiteral("cpu"));
    if (m_doc->model()) {
        m_runs->runAction()->trigger();
        return;
    }
    const QString dir = samplesDirectory();
    if (dir.isEmpty()) {
        m_runs->setRunMessage(tr("Open a model first (File > Open)"), true);
        return;
    }
    // Once the window has shown the sample.
    connect(m_doc, &Document::modelChanged, m_runs->runAction(), &QAction::trigger,
            Qt::ConnectionType(Qt::QueuedConnection | Qt::SingleShotConnection));
    emit openRequested(dir + QStringLiteral("/mobilenet_v2.onnx"));
}

void WorkspaceController::welcomeRoofline()
{
    m_roofline->dock()->show();
    m_roofline->dock()->raise();
    if (m_runs->timingDock()->isHidden())
        m_runs->timingDock()->show();
    views::RooflineView* view = m_roofline->rooflineView();
    if (!view->bannerText().isEmpty() && view->measureButton()->isVisibleTo(view))
        m_window->statusBar()->showMessage(tr("No roofs for this machine yet: click Measure Roofs in the roofline's "
                                              "banner (a few seconds)"),
                                           8000);
    else if (!m_runs->compiled())
        m_window->statusBar()->showMessage(tr("The roofline fills in after a run: Run > Run (%1)").arg(runKeys()), 8000);
}

void WorkspaceController::welcomeFusionPlan()
{
    m_fusion->showPlan();
    m_fusion->panel()->plannerCombo()->setFocus();
    m_window->statusBar()->showMessage(tr("Choose a planner in the Fusion Plan dock, then run again (%1)").arg(runKeys()), 8000);
}

void WorkspaceController::welcomeSelectNode()
{
    if (!m_doc->model()) {
        m_window->statusBar()->showMessage(tr("Open a model first (File > Open)"), 6000);
        return;
    }
    // The first operator with weights (a convolution in MobileNetV2): a kernel worth reading.
    const ir::Graph& g = m_doc->model()->graph;
    int pick = g.numNodes() > 0 ? 0 : -1;
    for (std::size_t n = 0; n < g.numNodes(); ++n) {
        bool weighted = false;
        for (const ir::ValueId v : g.node(static_cast<int>(n)).inputs)
            weighted = weighted || (v != ir::kNoValue && g.value(v).isInitializer);
        if (weighted) {
            pick = static_cast<int>(n);
            break;
        }
    }
    if (pick < 0)
        return;
    const int id = m_graph->operatorIdByName(g.node(pick).name);
    if (id >= 0)
        m_graph->selectNode(id, true);
    if (m_runs->compiled()) {
        m_runs->codeDock()->show();
        m_runs->codeDock()->raise();
    } else {
        m_propertiesDock->show();
        m_propertiesDock->raise();
        m_window->statusBar()->showMessage(tr("Run first (%1) to see this node's generated kernel in the Code dock").arg(runKeys()),
                                           8000);
    }
}

void WorkspaceController::sizeBottomDocks()
{
    QDockWidget* timing = m_runs->timingDock();
    QDockWidget* plan = m_fusion->dock();
    if (m_bottomSized || timing->isHidden() || plan->isHidden() || timing->isFloating() || plan->isFloating() ||
        m_window->dockWidgetArea(timing) != Qt::BottomDockWidgetArea ||
        m_window->dockWidgetArea(plan) != Qt::BottomDockWidgetArea || m_window->tabifiedDockWidgets(timing).contains(plan))
        return;
    m_bottomSized = true;
    // A dock just shown may not be laid out yet (width 0): the bottom area spans the graph too.
    const int bottomWidth = std::max(timing->width() + plan->width(), m_window->centralWidget()->width());
    // Half each: the Timings table shows its time columns beside the kernel names, the plan its
    // Group, Ops, Measured, Saved and Redundant columns.
    const int timingWidth = std::max(kMinTimingWidth, bottomWidth / 2);
    m_window->resizeDocks({timing, plan}, {timingWidth, std::max(200, bottomWidth - timingWidth)}, Qt::Horizontal);
    QTableView* table = m_fusion->panel()->table();
    const int rows = table->verticalHeader()->defaultSectionSize() * kFusionRows + table->horizontalHeader()->sizeHint().height();
    // The panel's tool row and the dock's title bar above the table.
    const int chrome = m_fusion->panel()->height() - table->height() + 28;
    const int wanted = std::min(m_window->height() / 2, rows + std::max(chrome, 60));
    if (plan->height() < wanted)
        m_window->resizeDocks({plan}, {wanted}, Qt::Vertical);
}

void WorkspaceController::toggleDock(QDockWidget* dock)
{
    // A dock counts as in front when it is shown and not behind another tab (the window moves
    // the widgets of tabs that are not current out of sight: they stay "visible" but nothing of
    // them can be seen). Without a shown window nothing can be seen: then this is a plain toggle.
    const bool inFront = !dock->isHidden() && (!dock->visibleRegion().isEmpty() || !m_window->isVisible());
    if (dock->isHidden()) {
        dock->show();
        dock->raise();
        if (dock == m_mappingDock)
            giveMappingRoom(m_window, dock);
    } else if (!inFront) {
        dock->raise();
        if (dock->isFloating())
            dock->activateWindow();
        if (dock == m_mappingDock)
            giveMappingRoom(m_window, dock);
    } else {
        dock->close();
    }
    // QAction flipped its check mark on the click; it shows whether the dock is open.
    dock->toggleViewAction()->setChecked(!dock->isHidden());
}

void WorkspaceController::restoreLayout()
{
    const QSettings s;
    const QByteArray geometry = s.value(QLatin1String(kGeometryKey)).toByteArray();
    const QByteArray state = s.value(QLatin1String(kStateKey)).toByteArray();
    if (!geometry.isEmpty())
        m_window->restoreGeometry(geometry);
    if (!state.isEmpty() && m_window->restoreState(state, kLayoutVersion) && !m_runs->timingDock()->isHidden()) {
        // The result docks are where the user left them: the first run does not resize them.
        m_runs->setResultDocksArranged(true);
        m_bottomSized = true;
    }
}

bool WorkspaceController::hasSavedLayout() const { return QSettings().contains(QLatin1String(kGeometryKey)); }

void WorkspaceController::saveLayout() const
{
    QSettings s;
    s.setValue(QLatin1String(kGeometryKey), m_window->saveGeometry());
    s.setValue(QLatin1String(kStateKey), m_window->saveState(kLayoutVersion));
}

}  // namespace tessera::app
