#include "app/gui/main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QTime>
#include <QSettings>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>

#include <algorithm>

#include "app/gui/check_controller.h"
#include "app/gui/compare_controller.h"
#include "app/gui/document.h"
#include "app/gui/fusion_controller.h"
#include "app/gui/help_controller.h"
#include "app/gui/plan_session.h"
#include "app/gui/program_controller.h"
#include "app/gui/project_controller.h"
#include "app/gui/roofline_controller.h"
#include "app/gui/run_controller.h"
#include "app/gui/run_session.h"
#include "app/gui/schedule_controller.h"
#include "app/gui/session.h"
#include "app/gui/status_widgets.h"
#include "app/gui/workspace_controller.h"
#include "core/perf/gpu_microbench.h"
#include "core/perf/machine_profile.h"
#include "core/pipeline/roofline_points.h"
#include "views/code/code_panel.h"
#include "views/code/code_view.h"
#include "views/graph/graph_view.h"
#include "views/mapping/mapping_panel.h"
#include "views/properties/properties_panel.h"
#include "views/roofline/energy_view.h"
#include "views/roofline/roofline_view.h"
#include "views/timing/timing_panel.h"

namespace tessera::app {
namespace {

const char* const kRecentKey = "recentFiles";
const char* const kTargetKey = "run/target";

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

bool isModelFile(const QString& path)
{
    return path.endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive) ||
           path.endsWith(QStringLiteral(".tsr"), Qt::CaseInsensitive) ||
           path.endsWith(QStringLiteral(".tessera"), Qt::CaseInsensitive);
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_view(new views::GraphView(this)), m_properties(new views::PropertiesPanel(this))
{
    setWindowTitle(QStringLiteral("Tessera"));
    setAcceptDrops(true);
    setCentralWidget(m_view);
    m_doc = new Document([view = m_view](const views::GraphSnapshot& s) { return view->makeLayoutRequest(s); }, this);
    m_doc->setErrorReporter([this](const QString& title, const QStringList& lines) {
        QMessageBox box(QMessageBox::Critical, title, lines.value(0), QMessageBox::Ok, this);
        if (lines.size() > 1)
            box.setDetailedText(lines.join(QLatin1Char('\n')));
        box.exec();
    });

    createActions();
    createDocks();
    createStatusBar();
    m_run = new RunController(m_doc, {this, m_view, m_propertiesDock, m_problemsDock, m_runMenu, m_viewMenu,
                                      findChild<QToolBar*>(QStringLiteral("mainToolBar"))});
    addPermanentStatusWidgets();
    m_roofline = new RooflineController(m_doc, m_run, this, m_viewMenu, m_runMenu);
    m_fusion = new FusionController(m_doc, {this, m_view, m_mapping, m_viewMenu});
    m_run->attachSchedules();
    ProgramShell programShell;
    programShell.window = this;
    programShell.graph = m_view;
    programShell.properties = m_properties;
    programShell.problems = m_problems;
    programShell.stageLabel = m_stageLabel;
    programShell.fileMenu = menuBar()->actions().constFirst()->menu();  // File is the first menu
    programShell.viewMenu = m_viewMenu;
    programShell.runMenu = m_runMenu;
    programShell.toolBar = findChild<QToolBar*>(QStringLiteral("mainToolBar"));
    programShell.stopAction = m_run->stopAction();
    m_program = new ProgramController(m_doc, programShell, this);
    m_fusion->setProgram(m_program);
    connect(m_program, &ProgramController::liveRunRequested, m_run, &RunController::startRun);
    connect(m_program, &ProgramController::programSavedAs, this,
            [this](const QString& path) { setWindowTitle(QStringLiteral("%1 \u2014 Tessera").arg(QFileInfo(path).fileName())); });
    connect(m_doc, &Document::modelUpdated, this, [this] { showModelStats(tr("parse %1 ms \u00b7 layout %2 ms")); });
    m_check = new CheckController(m_doc, this, m_run->timingDock(), m_run->timingPanel(), m_viewMenu);
    m_compare = new CompareController(
        m_doc, {m_view, m_run->codePanel(), m_run->timingPanel(), m_roofline->rooflineView()}, m_runMenu);
    m_project = new ProjectController(m_doc, this, menuBar()->actions().constFirst()->menu());  // File is the first menu
    m_fusion->setProject(m_project);
    m_workspace = new WorkspaceController(m_doc, {this, m_view, m_propertiesDock, m_mappingDock, m_viewMenu, m_run,
                                                  m_roofline, m_fusion, m_compare->pinAction()});
    connect(m_workspace, &WorkspaceController::openRequested, this, &MainWindow::openFile);
    m_program->setWelcomeDock(m_workspace->welcomeDock());
    m_help = new HelpController(this, m_fusion->editMenu(), m_workspace);
    // Temporary messages are drawn across the normal widgets' part of the status bar: while one
    // is up, the run's line, progress and Cancel wait (setStatusWidgetVisible) and come back after.
    followStatusMessages(statusBar());

    connect(m_doc->loader(), &Session::started, this, &MainWindow::onLoadStarted);
    connect(m_doc->loader(), &Session::stageChanged, this, &MainWindow::onStage);
    connect(m_doc->loader(), &Session::finished, this, &MainWindow::onLoadFinished);
    connect(m_view, &views::GraphView::nodeSelected, this, &MainWindow::onNodeSelected);
    connect(m_run, &RunController::kernelActivated, this, &MainWindow::onKernelRowSelected);
    connect(m_roofline, &RooflineController::kernelActivated, this, &MainWindow::onKernelRowSelected);
    connect(m_run, &RunController::reportShown, m_fusion, &FusionController::showPlanTimings);
    connect(m_run, &RunController::runFinished, this, &MainWindow::runFinished);
    connect(m_doc, &Document::targetChanged, this, &MainWindow::targetChanged);
    connect(m_doc, &Document::problemsChanged, this, &MainWindow::showProblems);
    // Refused plan edits and schedules, and the planner's warnings, are problems too.
    connect(m_doc->plans(), &PlanSession::editRefused, this, &MainWindow::showProblems);
    connect(m_doc->plans(), &PlanSession::warning, this, &MainWindow::showProblems);
    connect(m_doc->schedules(), &ScheduleController::applyRefused, this, &MainWindow::showProblems);
    connect(m_doc->schedules(), &ScheduleController::applied, this, &MainWindow::showProblems);
    connect(m_doc, &Document::statusMessage, this, [this](const QString& text, int ms) { statusBar()->showMessage(text, ms); });
    connect(m_doc, &Document::recentFileUsed, this, &MainWindow::addRecent);
}

MainWindow::~MainWindow()
{
    // The document's jobs end (and its plan's undo stack emits its last signals) while every
    // dock and controller is still alive.
    delete m_doc;
}

Session* MainWindow::session() const { return m_doc->loader(); }
std::shared_ptr<const ir::Model> MainWindow::model() const { return m_doc->model(); }
QString MainWindow::currentPath() const { return m_doc->path(); }

void MainWindow::setErrorReporter(ErrorReporter reporter) { m_doc->setErrorReporter(std::move(reporter)); }

void MainWindow::createActions()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open..."), this, &MainWindow::openDialog);
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    rebuildRecentMenu();
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_view->fitAction());
    view->addAction(m_view->zoomInAction());
    view->addAction(m_view->zoomOutAction());
    view->addSeparator();
    view->addAction(m_view->findAction());
    view->addSeparator();
    m_viewMenu = view;

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    m_runMenu = run;

    QToolBar* tools = addToolBar(tr("Main"));
    tools->setObjectName(QStringLiteral("mainToolBar"));
    tools->setMovable(false);
    tools->setToolButtonStyle(Qt::ToolButtonTextOnly);
    tools->addAction(open);
    tools->addSeparator();
    tools->addAction(m_view->fitAction());
    tools->addAction(m_view->zoomInAction());
    tools->addAction(m_view->zoomOutAction());
    tools->addSeparator();
    tools->addAction(m_view->findAction());
    tools->addSeparator();
}

void MainWindow::createDocks()
{
    // The right dock area takes the full height, so the code keeps long columns of lines and
    // the Timings table spans the graph below it.
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);

    m_propertiesDock = new QDockWidget(tr("Properties"), this);
    m_propertiesDock->setObjectName(QStringLiteral("propertiesDock"));
    m_propertiesDock->setWidget(m_properties);
    m_propertiesDock->setAllowedAreas(Qt::LeftDockWidgetArea | Qt::RightDockWidgetArea);
    addDockWidget(Qt::RightDockWidgetArea, m_propertiesDock);
    m_properties->setMinimumWidth(340);

    m_problems = new QListWidget(this);
    m_problems->setObjectName(QStringLiteral("problems"));
    m_problems->setWordWrap(false);
    m_problems->setAlternatingRowColors(true);
    // One line each (the tooltip has the whole diagnostic and its notes); a few rows however
    // small the dock is made.
    m_problems->setTextElideMode(Qt::ElideNone);
    m_problems->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    const int problemRow = std::max(m_problems->fontMetrics().height(), m_problems->iconSize().height()) + 6;
    m_problems->setMinimumHeight(3 * problemRow + 2 * m_problems->frameWidth());
    m_problemsDock = new QDockWidget(tr("Problems"), this);
    m_problemsDock->setObjectName(QStringLiteral("problemsDock"));
    m_problemsDock->setWidget(m_problems);
    addDockWidget(Qt::BottomDockWidgetArea, m_problemsDock);
    m_problemsDock->hide();
    resizeDocks({m_problemsDock}, {110}, Qt::Vertical);
    resizeDocks({m_propertiesDock}, {380}, Qt::Horizontal);

    m_viewMenu->addAction(m_propertiesDock->toggleViewAction());
    m_viewMenu->addAction(m_problemsDock->toggleViewAction());

    m_mapping = new views::MappingPanel(this);
    m_mapping->setObjectName(QStringLiteral("mappingPanel"));
    // The canvas asks for a large minimum: beside the graph it must fit the window as it is
    // instead of widening it (the canvas scrolls and zooms).
    m_mapping->setMinimumSize(240, 200);
    m_mappingDock = new QDockWidget(tr("Task Mapping"), this);
    m_mappingDock->setObjectName(QStringLiteral("mappingDock"));
    m_mappingDock->setWidget(m_mapping);
    addDockWidget(Qt::RightDockWidgetArea, m_mappingDock);
    tabifyDockWidget(m_propertiesDock, m_mappingDock);
    m_mappingDock->hide();
    QAction* toggleMapping = m_mappingDock->toggleViewAction();
    toggleMapping->setText(tr("Task &Mapping"));
    toggleMapping->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_M));
    m_viewMenu->addAction(toggleMapping);
    // The expressions shown are the document's (a project keeps and restores them).
    connect(m_mapping, &views::MappingPanel::mappingEdited, m_doc, &Document::setMapping);
    connect(m_doc, &Document::mappingChanged, this, [this] {
        if (m_mapping->gridExpression() != m_doc->mappingGrid() || m_mapping->blockExpression() != m_doc->mappingBlock())
            m_mapping->setExpressions(m_doc->mappingGrid(), m_doc->mappingBlock());
    });
}

void MainWindow::showMapping(const QString& grid, const QString& block)
{
    m_mapping->setExpressions(grid, block);
    m_mappingDock->show();
    m_mappingDock->raise();
    // The canvas needs room: give the dock most of the width (the graph view keeps the rest).
    resizeDocks({m_mappingDock}, {width() * 3 / 5}, Qt::Horizontal);
    if (!m_mappingDock->isFloating() && m_mappingDock->height() < height() * 3 / 4)
        resizeDocks({m_mappingDock}, {height() * 3 / 4}, Qt::Vertical);
}

void MainWindow::createStatusBar()
{
    m_stageLabel = new QLabel(this);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 0);
    m_progress->setMaximumWidth(140);
    m_progress->setMaximumHeight(16);
    m_progress->setTextVisible(false);
    m_cancelButton = new QToolButton(this);
    m_cancelButton->setText(tr("Cancel"));
    m_cancelButton->setObjectName(QStringLiteral("cancelLoad"));
    connect(m_cancelButton, &QToolButton::clicked, m_doc->loader(), &Session::cancel);
    m_nodesLabel = new QLabel(this);
    m_timeLabel = new QLabel(this);
    m_zoomLabel = new QLabel(this);
    m_zoomLabel->setMinimumWidth(48);
    connect(m_view, &views::GraphView::zoomChanged, this,
            [this](double f) { m_zoomLabel->setText(QStringLiteral("%1%").arg(qRound(f * 100))); });
    m_problemsButton = new QToolButton(this);
    m_problemsButton->setAutoRaise(true);
    m_problemsButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    connect(m_problemsButton, &QToolButton::clicked, this, [this] {
        m_problemsDock->show();
        m_problemsDock->raise();
    });
    statusBar()->addWidget(m_stageLabel);
    statusBar()->addWidget(m_progress);
    statusBar()->addWidget(m_cancelButton);
    setBusy(false);
}

void MainWindow::addPermanentStatusWidgets()
{
    // After the run's target line (RunController): the model's size, load times, zoom, problems.
    statusBar()->addPermanentWidget(m_nodesLabel);
    statusBar()->addPermanentWidget(m_timeLabel);
    statusBar()->addPermanentWidget(m_zoomLabel);
    statusBar()->addPermanentWidget(m_problemsButton);
    m_nodesLabel->setText(tr("No model"));
    m_problemsButton->hide();
}

void MainWindow::setBusy(bool busy)
{
    setStatusWidgetVisible(statusBar(), m_progress, busy);
    setStatusWidgetVisible(statusBar(), m_cancelButton, busy);
}

void MainWindow::openDialog()
{
    const QString dir = m_doc->path().isEmpty() ? QString() : QFileInfo(m_doc->path()).absolutePath();
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open Model or Program"), dir,
                                     tr("Models, programs and projects (*.onnx *.tsr *.tessera);;ONNX models (*.onnx);;"
                                        "Tessera programs (*.tsr);;Tessera projects (*.tessera);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::openFile(const QString& path)
{
    if (!m_program->maybeSaveProgram())
        return;
    // Projects open through the project controller, which also asks about unsaved changes.
    if (m_project && !m_project->interceptOpen(path))
        return;
    m_doc->loader()->load(path);
}

void MainWindow::onLoadStarted(quint64, const QString& path)
{
    m_loadingPath = path;
    m_stageLabel->setText(tr("Opening %1...").arg(QFileInfo(path).fileName()));
    setBusy(true);
}

void MainWindow::onStage(quint64, const QString& stage)
{
    m_stageLabel->setText(QStringLiteral("%1: %2...").arg(QFileInfo(m_loadingPath).fileName(), stage));
}

void MainWindow::showProblems()
{
    const support::DiagnosticList diagnostics = m_doc->problems();
    m_problems->clear();
    int warnings = 0, errors = 0, notes = 0;
    for (const support::Diagnostic& d : diagnostics.items()) {
        auto* item = new QListWidgetItem(fromStd(d.format()), m_problems);
        // Where the problem is, for a click that jumps there (ProgramController).
        item->setData(Qt::UserRole, fromStd(d.file));
        item->setData(Qt::UserRole + 1, d.begin.line);
        item->setData(Qt::UserRole + 2, d.begin.column);
        QStyle::StandardPixmap icon = QStyle::SP_MessageBoxInformation;
        switch (d.severity) {
        case support::Severity::Error: icon = QStyle::SP_MessageBoxCritical; ++errors; break;
        case support::Severity::Warning: icon = QStyle::SP_MessageBoxWarning; ++warnings; break;
        case support::Severity::Note: ++notes; break;
        }
        item->setIcon(style()->standardIcon(icon));
        QString tip = fromStd(d.format());
        for (const std::string& n : d.notes)
            tip += QLatin1Char('\n') + fromStd(n);
        item->setToolTip(tip);
    }
    if (diagnostics.empty()) {
        m_problemsButton->hide();
        m_problemsDock->hide();
        return;
    }
    m_problemsDock->show();
    // Plain English plurals (no translation catalogue is loaded, so "%n warning(s)" would show as is).
    auto counted = [](int n, const QString& one, const QString& many) {
        return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
    };
    QStringList parts;
    if (errors > 0)
        parts << counted(errors, tr("error"), tr("errors"));
    if (warnings > 0 || errors == 0)
        parts << counted(warnings, tr("warning"), tr("warnings"));
    if (notes > 0)
        parts << counted(notes, tr("note"), tr("notes"));
    m_problemsButton->setText(parts.join(QStringLiteral(", ")));
    m_problemsButton->setIcon(style()->standardIcon(errors > 0     ? QStyle::SP_MessageBoxCritical
                                                    : warnings > 0 ? QStyle::SP_MessageBoxWarning
                                                                   : QStyle::SP_MessageBoxInformation));
    m_problemsButton->show();
}

void MainWindow::onLoadFinished(quint64, bool ok)
{
    setBusy(false);
    const LoadOutcome& out = m_doc->loader()->lastOutcome();
    if (out.cancelled) {
        m_stageLabel->setText(tr("Loading cancelled"));
        return;
    }
    if (!ok) {
        const QString name = QFileInfo(out.path).fileName();
        m_stageLabel->setText(tr("Could not open %1").arg(name));
        QStringList lines;
        for (const support::Diagnostic& d : out.diagnostics.items()) {
            if (d.severity == support::Severity::Error)
                lines << fromStd(d.format());
        }
        if (lines.isEmpty())
            lines << tr("%1: the model could not be loaded").arg(out.path);
        // The model on screen stays; the failed file's problems are shown with it.
        m_doc->setLoadFailed(out.path, out.diagnostics);
        // A program that was read but does not parse opens in the Program dock with its errors
        // underlined there and listed in Problems (to be fixed in place): no modal box for it.
        const bool editableProgram = !out.programText.isEmpty() && !out.programExported &&
                                     out.path.endsWith(QLatin1String(".tsr"), Qt::CaseInsensitive);
        if (!editableProgram)
            m_doc->reportError(tr("Could not open %1").arg(name), lines);
        emit loadFailed(out.path);
        return;
    }

    m_properties->setModel(out.model);
    m_view->setFusionClusters({});
    m_view->setGraph(out.snapshot, out.layout);
    m_view->showStart();
    // The document's model from here on: plan, schedules, history, problems and the run docks
    // (their results of the old model go) follow it.
    m_doc->setModel(out.model, out.path, out.diagnostics);
    setWindowTitle(QStringLiteral("%1 \u2014 Tessera").arg(QFileInfo(out.path).fileName()));
    m_stageLabel->setText(out.layout.simplifiedSplines ? tr("Large graph: straight edges") : QString());
    showModelStats(tr("import %1 ms \u00b7 layout %2 ms"));
    addRecent(out.path);
    emit modelShown(out.path);
}

void MainWindow::showModelStats(const QString& times)
{
    const LoadOutcome& out = m_doc->loader()->lastOutcome();
    const ir::Graph& g = m_doc->model()->graph;
    m_nodesLabel->setText(tr("%n node(s)", nullptr, static_cast<int>(g.numNodes())) +
                          tr(" \u00b7 %n input(s)", nullptr, static_cast<int>(g.runtimeInputs().size())) +
                          tr(" \u00b7 %n output(s)", nullptr, static_cast<int>(g.outputs().size())));
    m_timeLabel->setText(times.arg(QString::number(out.importMs, 'f', 0), QString::number(out.layoutMs, 'f', 0)));
}

void MainWindow::onNodeSelected(int nodeId)
{
    const views::GraphSnapshot* snap = m_view->snapshot();
    const views::SnapshotNode* n = snap ? snap->find(nodeId) : nullptr;
    m_run->showNodeResults(nodeId);
    m_roofline->selectKernel(n != nullptr && n->kind == views::SnapshotNodeKind::Operator ? fromStd(n->name) : QString());
    m_fusion->selectGroupOfNode(nodeId);
    if (n == nullptr || n->kind != views::SnapshotNodeKind::Operator)
        m_doc->schedules()->selectNode(ir::kNoNode);
    if (n == nullptr) {
        m_properties->clear();
        return;
    }
    if (n->kind == views::SnapshotNodeKind::Operator) {
        m_properties->showNode(n->irNode);
        showKernelSchedule(n->irNode);
        m_doc->schedules()->selectNode(n->irNode);
    } else {
        m_properties->showValue(n->value);
    }
}

void MainWindow::showKernelSchedule(ir::NodeId node)
{
    // A kernel with a schedule written in the program: its task mappings go to the Task Mapping
    // dock (grid -> block -> thread levels), so picking a node shows who computes what.
    if (!m_doc->model() || node < 0 || static_cast<std::size_t>(node) >= m_doc->model()->graph.numNodes())
        return;
    const ir::KernelScheduleDecl* sched = m_doc->model()->program.scheduleFor(m_doc->model()->graph.node(node).name);
    if (sched == nullptr)
        return;
    const ir::ScheduleMappingDecl* grid = sched->mapping("grid");
    const ir::ScheduleMappingDecl* block = sched->mapping("block");
    if (block == nullptr)
        block = sched->mapping("thread");
    if (grid == nullptr && block == nullptr)
        return;
    const QString gridText = grid ? QString::fromStdString(grid->text) : QString::fromStdString(block->text);
    const QString blockText = grid && block ? QString::fromStdString(block->text) : QString();
    m_mapping->setExpressions(gridText, blockText);
    statusBar()->showMessage(tr("Schedule of '%1' is in the Task Mapping dock (Ctrl+M)")
                                 .arg(QString::fromStdString(sched->subject)),
                             5000);
}

void MainWindow::onKernelRowSelected(const QString& name)
{
    const int id = m_view->operatorIdByName(name.toStdString());
    if (id >= 0)
        m_view->selectNode(id, true);
}

QStringList MainWindow::recentFiles() const { return QSettings().value(QLatin1String(kRecentKey)).toStringList(); }

void MainWindow::addRecent(const QString& path)
{
    const QString abs = QFileInfo(path).absoluteFilePath();
    QStringList list = recentFiles();
    list.removeAll(abs);
    list.prepend(abs);
    while (list.size() > kMaxRecent)
        list.removeLast();
    QSettings().setValue(QLatin1String(kRecentKey), list);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    QStringList list = recentFiles();
    QStringList existing;
    for (const QString& p : list) {
        if (QFileInfo::exists(p))
            existing << p;
    }
    if (existing != list)
        QSettings().setValue(QLatin1String(kRecentKey), existing);
    m_recentMenu->clear();
    int i = 0;
    for (const QString& p : existing) {
        ++i;
        QAction* a = m_recentMenu->addAction(QStringLiteral("&%1 %2").arg(i % 10).arg(QFileInfo(p).fileName()));
        a->setToolTip(p);
        a->setStatusTip(p);
        connect(a, &QAction::triggered, this, [this, p] { openFile(p); });
    }
    if (existing.isEmpty())
        m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
    else {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear Recent"), this, [this] {
            QSettings().remove(QLatin1String(kRecentKey));
            rebuildRecentMenu();
        });
    }
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    m_workspace->saveLayout();
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    const QMimeData* mime = event->mimeData();
    if (mime->hasUrls()) {
        for (const QUrl& url : mime->urls()) {
            if (url.isLocalFile() && isModelFile(url.toLocalFile())) {
                event->acceptProposedAction();
                return;
            }
        }
    }
    event->ignore();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    for (const QUrl& url : event->mimeData()->urls()) {
        if (url.isLocalFile() && isModelFile(url.toLocalFile())) {
            openFile(url.toLocalFile());
            event->acceptProposedAction();
            return;
        }
    }
}

}  // namespace tessera::app
