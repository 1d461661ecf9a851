#include "app/gui/main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
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
#include "app/gui/plan_session.h"
#include "app/gui/project_controller.h"
#include "app/gui/run_results.h"
#include "app/gui/run_session.h"
#include "app/gui/schedule_controller.h"
#include "app/gui/session.h"
#include "core/perf/gpu_microbench.h"
#include "core/perf/machine_profile.h"
#include "core/pipeline/roofline_points.h"
#include "views/code/code_panel.h"
#include "views/code/code_view.h"
#include "views/fusion/fusion_plan_panel.h"
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
    createRunDocks();
    createRooflineDock();
    createFusionDock();
    createProgramDock();
    createScheduleController();
    createStatusBar();
    createRoofMeasurement();
    m_check = new CheckController(m_doc, this, m_timingDock, m_timing, m_viewMenu);
    m_compare = new CompareController(m_doc, {m_view, m_code, m_timing, m_roofline}, m_runMenu);
    createConventions();
    m_project = new ProjectController(m_doc, this, menuBar()->actions().constFirst()->menu());  // File is the first menu
    createPolish();

    connect(m_doc->loader(), &Session::started, this, &MainWindow::onLoadStarted);
    connect(m_doc->loader(), &Session::stageChanged, this, &MainWindow::onStage);
    connect(m_doc->loader(), &Session::finished, this, &MainWindow::onLoadFinished);
    connect(m_view, &views::GraphView::nodeSelected, this, &MainWindow::onNodeSelected);
    connect(m_doc->runs(), &RunSession::started, this, &MainWindow::onRunStarted);
    connect(m_doc->runs(), &RunSession::progress, this, &MainWindow::onRunProgress);
    connect(m_doc->runs(), &RunSession::compiled, this, &MainWindow::onRunCompiled);
    connect(m_doc, &Document::runFinished, this, &MainWindow::onRunFinished);
    connect(m_doc->runs(), &RunSession::cudaCompiled, this, &MainWindow::onCudaCompiled);
    connect(m_doc, &Document::targetChanged, this, &MainWindow::onTargetChanged);
    connect(m_doc, &Document::problemsChanged, this, &MainWindow::showProblems);
    connect(m_doc, &Document::historyChanged, this, [this] { m_timing->setHistory(m_doc->runHistory().snapshot()); });
    connect(m_doc, &Document::recordShown, this, &MainWindow::showRecord);
    connect(m_doc->plans(), &PlanSession::planChanged, this, &MainWindow::showRecordPlanTimes);
    connect(m_doc, &Document::statusMessage, this, [this](const QString& text, int ms) { statusBar()->showMessage(text, ms); });
    connect(m_doc, &Document::recentFileUsed, this, &MainWindow::addRecent);
    connect(m_checkAction, &QAction::toggled, m_doc, &Document::setCheck);
    connect(m_fallbackAction, &QAction::toggled, m_doc, &Document::setFallbackReference);
    connect(m_doc, &Document::runOptionsChanged, this, [this] {
        m_checkAction->setChecked(m_doc->check());
        m_fallbackAction->setChecked(m_doc->fallbackReference());
    });
    onTargetChanged();
}

MainWindow::~MainWindow()
{
    // The document's jobs end (and its plan's undo stack emits its last signals) while every
    // dock and controller is still alive.
    delete m_doc;
}

Session* MainWindow::session() const { return m_doc->loader(); }
RunSession* MainWindow::runSession() const { return m_doc->runs(); }
PlanSession* MainWindow::planSession() const { return m_doc->plans(); }
ScheduleController* MainWindow::scheduleController() const { return m_doc->schedules(); }
const RunInputFiles& MainWindow::runInputFiles() const { return m_doc->runInputFiles(); }
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
    m_runAction = run->addAction(tr("&Run (CPU)"), this, &MainWindow::startRun);
    m_runAction->setObjectName(QStringLiteral("runAction"));
    m_runAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_runAction->setToolTip(tr("Compile every kernel, run it on the CPU in tessera-runner and time it (Ctrl+R)"));
    m_runAction->setEnabled(false);
    m_stopAction = run->addAction(tr("&Stop"), this, &MainWindow::stopRun);
    m_stopAction->setObjectName(QStringLiteral("stopAction"));
    m_stopAction->setShortcut(QKeySequence(Qt::Key_Escape));
    m_stopAction->setToolTip(tr("Cancel the run (Esc)"));
    m_stopAction->setEnabled(false);
    run->addSeparator();
    m_checkAction = run->addAction(tr("&Check against Reference"));
    m_checkAction->setObjectName(QStringLiteral("checkAction"));
    m_checkAction->setCheckable(true);
    m_checkAction->setChecked(true);
    m_checkAction->setToolTip(tr("Compare every kernel's outputs with the reference interpreter"));
    m_fallbackAction = run->addAction(tr("Reference Interpreter for &Unsupported Ops"));
    m_fallbackAction->setCheckable(true);
    m_fallbackAction->setChecked(true);
    m_fallbackAction->setToolTip(tr("Ops without a code generator run in the reference interpreter "
                                    "(tessera-cli run --fallback-reference) instead of stopping the compile"));
    m_inputsAction = run->addAction(tr("&Inputs..."), this, &MainWindow::showRunInputs);
    m_inputsAction->setObjectName(QStringLiteral("inputsAction"));
    m_inputsAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_I));
    m_inputsAction->setToolTip(tr("Feed inputs from .npy files and compare the outputs with expected .npy files "
                                  "(tessera-cli run --input / --expect) (Ctrl+Shift+I)"));
    run->addSeparator();
    m_targetMenu = run->addMenu(tr("&Target"));
    m_targetMenu->setObjectName(QStringLiteral("targetMenu"));
    m_targetMenu->setToolTipsVisible(true);
    m_targetGroup = new QActionGroup(this);
    m_targetGroup->setExclusive(true);
    m_targetCombo = new QComboBox(this);
    m_targetCombo->setObjectName(QStringLiteral("targetCombo"));
    m_targetCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_targetCombo->setToolTip(tr("Where Run compiles and runs the model"));
    connect(m_targetCombo, &QComboBox::activated, m_doc, [this](int index) { m_doc->setCurrentTargetIndex(index, true); });

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
    auto* targetLabel = new QLabel(tr(" Target "), this);
    targetLabel->setBuddy(m_targetCombo);
    tools->addWidget(targetLabel);
    tools->addWidget(m_targetCombo);
    tools->addAction(m_runAction);
    tools->addAction(m_stopAction);
    tools->addAction(m_checkAction);
}

void MainWindow::createDocks()
{
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

void MainWindow::createRunDocks()
{
    // The right dock area takes the full height, so the code keeps long columns of lines and
    // the Timings table spans the graph below it.
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);

    m_code = new views::CodePanel(this);
    m_code->setObjectName(QStringLiteral("codePanel"));
    // A click on a generated line selects the kernel those lines belong to, everywhere.
    connect(m_code->codeView(), &views::CodeView::lineClicked, this, [this](int line) {
        if (!m_compiled)
            return;
        for (const pipeline::CompiledStep& step : m_compiled->steps) {
            if (step.kind != pipeline::StepKind::Reference && step.firstLine > 0 && line >= step.firstLine &&
                line <= step.lastLine) {
                onKernelRowSelected(fromStd(step.name));
                return;
            }
        }
    });
    m_codeDock = new QDockWidget(tr("Code"), this);
    m_codeDock->setObjectName(QStringLiteral("codeDock"));
    m_codeDock->setWidget(m_code);
    addDockWidget(Qt::RightDockWidgetArea, m_codeDock);
    tabifyDockWidget(m_propertiesDock, m_codeDock);
    m_codeDock->hide();

    m_timing = new views::TimingPanel(this);
    m_timing->setObjectName(QStringLiteral("timingPanel"));
    m_timingDock = new QDockWidget(tr("Timings"), this);
    m_timingDock->setObjectName(QStringLiteral("timingDock"));
    m_timingDock->setWidget(m_timing);
    addDockWidget(Qt::BottomDockWidgetArea, m_timingDock);
    tabifyDockWidget(m_problemsDock, m_timingDock);
    m_timingDock->hide();
    connect(m_timing, &views::TimingPanel::kernelSelected, this, &MainWindow::onKernelRowSelected);

    QAction* toggleCode = m_codeDock->toggleViewAction();
    toggleCode->setText(tr("&Code"));
    m_viewMenu->addAction(toggleCode);
    QAction* toggleTimings = m_timingDock->toggleViewAction();
    toggleTimings->setText(tr("&Timings"));
    m_viewMenu->addAction(toggleTimings);
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
    m_runLabel = new QLabel(this);
    m_runLabel->setObjectName(QStringLiteral("runStatus"));
    m_runLabel->setTextFormat(Qt::PlainText);
    m_runLabel->setMaximumWidth(620);
    m_runProgress = new QProgressBar(this);
    m_runProgress->setObjectName(QStringLiteral("runProgress"));
    m_runProgress->setRange(0, 1000);
    m_runProgress->setMaximumWidth(160);
    m_runProgress->setMaximumHeight(16);
    m_runProgress->setTextVisible(false);
    m_runCancel = new QToolButton(this);
    m_runCancel->setText(tr("Cancel"));
    m_runCancel->setObjectName(QStringLiteral("cancelRun"));
    m_runCancel->setToolTip(tr("Cancel the run (Esc)"));
    connect(m_runCancel, &QToolButton::clicked, this, &MainWindow::stopRun);
    statusBar()->addWidget(m_stageLabel);
    statusBar()->addWidget(m_progress);
    statusBar()->addWidget(m_cancelButton);
    statusBar()->addWidget(m_runLabel);
    statusBar()->addWidget(m_runProgress);
    statusBar()->addWidget(m_runCancel);
    m_targetLabel = new QLabel(this);
    m_targetLabel->setObjectName(QStringLiteral("targetStatus"));
    statusBar()->addPermanentWidget(m_targetLabel);
    statusBar()->addPermanentWidget(m_nodesLabel);
    statusBar()->addPermanentWidget(m_timeLabel);
    statusBar()->addPermanentWidget(m_zoomLabel);
    statusBar()->addPermanentWidget(m_problemsButton);
    m_nodesLabel->setText(tr("No model"));
    m_problemsButton->hide();
    m_targetLabel->setText(targetStatusText());
    setBusy(false);
    setRunBusy(false);
    m_runLabel->hide();
}

RunTarget MainWindow::currentTarget() const { return m_doc->currentTarget(); }

bool MainWindow::targetsProbed() const { return m_doc->targetsProbed(); }

QString MainWindow::targetStatusText() const { return tr("Target: %1").arg(currentTarget().label); }

bool MainWindow::selectTarget(const QString& id, bool remember) { return m_doc->selectTarget(id, remember); }

const std::vector<RunTarget>& MainWindow::targets() const { return m_doc->targets(); }

void MainWindow::onTargetChanged()
{
    const std::vector<RunTarget>& targets = m_doc->targets();
    const int index = m_doc->currentTargetIndex();
    // The list is rebuilt when the probe changed it; otherwise only the selection moves.
    bool sameList = m_targetCombo->count() == static_cast<int>(targets.size());
    for (int i = 0; sameList && i < m_targetCombo->count(); ++i)
        sameList = m_targetCombo->itemData(i).toString() == targets[static_cast<std::size_t>(i)].id &&
                   m_targetCombo->itemText(i) == targets[static_cast<std::size_t>(i)].label;
    if (!sameList) {
        const QSignalBlocker block(m_targetCombo);
        m_targetCombo->clear();
        m_targetMenu->clear();
        for (QAction* a : m_targetGroup->actions())
            m_targetGroup->removeAction(a);
        for (std::size_t i = 0; i < targets.size(); ++i) {
            const RunTarget& t = targets[i];
            const int row = static_cast<int>(i);
            m_targetCombo->addItem(t.label, t.id);
            m_targetCombo->setItemData(row, t.toolTip, Qt::ToolTipRole);
            QAction* a = m_targetMenu->addAction(t.label);
            a->setData(t.id);
            a->setToolTip(t.toolTip);
            a->setStatusTip(t.toolTip);
            a->setCheckable(true);
            a->setEnabled(t.selectable());
            m_targetGroup->addAction(a);
            connect(a, &QAction::triggered, m_doc, [this, row] { m_doc->setCurrentTargetIndex(row, true); });
            if (!t.selectable()) {
                // Listed (so the user sees CUDA is on its way) but not choosable.
                if (auto* model = qobject_cast<QStandardItemModel*>(m_targetCombo->model()))
                    model->item(row)->setEnabled(false);
            }
        }
    }
    const RunTarget t = m_doc->currentTarget();
    {
        const QSignalBlocker block(m_targetCombo);
        m_targetCombo->setCurrentIndex(index);
    }
    m_targetCombo->setToolTip(t.toolTip);
    const QList<QAction*> actions = m_targetGroup->actions();
    if (index >= 0 && index < actions.size())
        actions[index]->setChecked(true);
    m_runAction->setText(tr("&Run (%1)").arg(t.shortName));
    m_runAction->setToolTip(t.kind == RunTarget::Kind::CudaCompileOnly
                                ? tr("Compile every kernel to CUDA C and PTX (%1); nothing runs (Ctrl+R)").arg(t.arch)
                                : tr("Compile every kernel, run it on %1 in tessera-runner and time it (Ctrl+R)")
                                      .arg(t.kind == RunTarget::Kind::CudaDevice ? t.label : tr("the CPU")));
    if (m_targetLabel != nullptr) {
        m_targetLabel->setText(targetStatusText());
        m_targetLabel->setToolTip(t.toolTip);
    }
    emit targetChanged();
}

void MainWindow::setBusy(bool busy)
{
    setStatusWidgetVisible(m_progress, busy);
    setStatusWidgetVisible(m_cancelButton, busy);
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
    if (!maybeSaveProgram())
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
        // Where the problem is, for a click that jumps there (main_window_program.cpp).
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

    // A new model: results of the old one no longer apply.
    m_compiled.reset();
    m_cudaModule.reset();
    m_code->clear(tr("No generated code yet: Run > Run (CPU) (Ctrl+R) compiles the model."));
    m_timing->clear(tr("No run yet: Run > Run (CPU) (Ctrl+R) times every kernel."));
    m_roofline->clearPoints();
    m_energy->clearPoints();
    m_runLabel->clear();
    m_runLabel->hide();
    m_properties->setModel(out.model);
    m_view->setFusionClusters({});
    m_view->setGraph(out.snapshot, out.layout);
    m_view->showStart();
    // The document's model from here on: plan, schedules, history and problems follow it.
    m_doc->setModel(out.model, out.path, out.diagnostics);
    showTargetRoofs();  // this machine's saved roofs, before any run
    setWindowTitle(QStringLiteral("%1 \u2014 Tessera").arg(QFileInfo(out.path).fileName()));
    m_stageLabel->setText(out.layout.simplifiedSplines ? tr("Large graph: straight edges") : QString());
    const ir::Graph& g = out.model->graph;
    m_nodesLabel->setText(tr("%n node(s)", nullptr, static_cast<int>(g.numNodes())) +
                          tr(" \u00b7 %n input(s)", nullptr, static_cast<int>(g.runtimeInputs().size())) +
                          tr(" \u00b7 %n output(s)", nullptr, static_cast<int>(g.outputs().size())));
    m_timeLabel->setText(tr("import %1 ms \u00b7 layout %2 ms")
                             .arg(QString::number(out.importMs, 'f', 0), QString::number(out.layoutMs, 'f', 0)));
    m_runAction->setEnabled(true);
    addRecent(out.path);
    emit modelShown(out.path);
}

void MainWindow::onNodeSelected(int nodeId)
{
    const views::GraphSnapshot* snap = m_view->snapshot();
    const views::SnapshotNode* n = snap ? snap->find(nodeId) : nullptr;
    showNodeResults(nodeId);
    selectPlanGroupOfNode(nodeId);
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

void MainWindow::startRun()
{
    if (!m_doc->model()) {
        setRunMessage(tr("Open a model first (File > Open)"), true);
        return;
    }
    if (roofMeasurementBlocksRun())
        return;
    m_doc->runs()->start(m_doc->model(), m_doc->runSettings());
}

void MainWindow::stopRun()
{
    if (m_doc->runs()->isBusy())
        m_doc->runs()->cancel();
}

QString MainWindow::runStatusText() const { return m_runLabel->text(); }

void MainWindow::setRunBusy(bool busy)
{
    setStatusWidgetVisible(m_runProgress, busy);
    setStatusWidgetVisible(m_runCancel, busy);
    m_stopAction->setEnabled(busy);
}

void MainWindow::setRunMessage(const QString& text, bool error)
{
    m_runLabel->setStyleSheet(error ? QStringLiteral("color: #c62828;") : QString());
    const QString firstLine = text.section(QLatin1Char('\n'), 0, 0);
    m_runLabel->setText(QFontMetrics(m_runLabel->font()).elidedText(firstLine, Qt::ElideRight, m_runLabel->maximumWidth()));
    m_runLabel->setToolTip(text);
    setStatusWidgetVisible(m_runLabel, true);
}

void MainWindow::onRunStarted(quint64)
{
    if (!m_runDocksShown) {
        // The first run opens the result docks; later the user's arrangement stays.
        m_runDocksShown = true;
        m_codeDock->show();
        m_codeDock->raise();
        m_timingDock->show();
        m_timingDock->raise();
        m_rooflineDock->show();
        // CUDA C and PTX side by side want more room than one module.
        const int share = currentTarget().isCuda() ? width() / 2 : width() * 2 / 5;
        resizeDocks({m_codeDock}, {std::max(480, share)}, Qt::Horizontal);
        // Room for the summary, several table rows and the history chart (at 1280x800 too).
        resizeDocks({m_timingDock}, {std::max(m_timingDock->minimumSizeHint().height() + 100, height() * 2 / 5)},
                    Qt::Vertical);
        // The Roofline chart takes the lower part of the right column.
        resizeDocks({m_rooflineDock}, {std::max(300, height() * 9 / 20)}, Qt::Vertical);
    }
    m_doc->setProblems(Document::ProblemSource::Run, {});
    showProblems();
    m_view->clearKernelStatuses();
    m_timing->clear(tr("Running..."));
    m_runProgress->setRange(0, 1000);
    m_runProgress->setValue(0);
    m_runEta.start();
    setRunMessage(tr("Run: starting..."), false);
    setRunBusy(true);
}

void MainWindow::onRunProgress(quint64, double fraction, const QString& stage)
{
    // RunSession's fraction is in time and moves per kernel (and with the clock while the
    // compiler runs), so the bar and the estimate are meaningful in every phase.
    m_runProgress->setRange(0, 1000);
    m_runProgress->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
    setRunMessage(tr("Run: %1...").arg(stage) + m_runEta.suffix(fraction), false);
}

void MainWindow::showCompiledCode()
{
    m_cudaModule.reset();
    if (m_compiled->target == lower::Target::Cuda) {
        const QString placeholder = m_compiled->kernelCount() == 0 ? tr("No kernels: nothing to compile to PTX.")
                                                                   : tr("Compiling to PTX with NVRTC...");
        m_code->setCudaModule(fromStd(m_compiled->code.source), moduleTitle(*m_compiled), placeholder);
    } else {
        m_code->setModule(fromStd(m_compiled->code.source), moduleTitle(*m_compiled));
    }
}

void MainWindow::showPtx()
{
    if (!m_cudaModule || !m_code->isCuda())
        return;
    m_code->setPtx(fromStd(m_cudaModule->ptx), ptxTitle(*m_cudaModule));
}

void MainWindow::onRunCompiled(quint64)
{
    m_compiled = m_doc->runs()->currentCompiled();
    if (!m_compiled || !m_doc->model())
        return;
    showCompiledCode();
    m_view->setKernelStatuses(compileStatuses(*m_compiled, m_doc->model()->graph));
    showNodeResults(m_view->selectedNodeId());
}

void MainWindow::onCudaCompiled(quint64)
{
    if (!m_compiled)
        return;
    m_cudaModule = m_doc->runs()->currentCudaModule();
    showPtx();
}

void MainWindow::onRunFinished(bool ok)
{
    setRunBusy(false);
    const RunOutcome& out = m_doc->runs()->lastOutcome();
    if (out.cancelled) {
        setRunMessage(tr("Run cancelled"), false);
        m_timing->clear(tr("Run cancelled."));
        emit runFinished(false);
        return;
    }
    // A result for a model that is no longer on screen (the load finished after the run) is
    // dropped: a new model cancels the run, so this only guards the order of queued events.
    if (out.model != m_doc->model()) {
        emit runFinished(false);
        return;
    }
    if (out.compiled && out.compiled != m_compiled) {
        m_compiled = out.compiled;
        showCompiledCode();
    }
    if (out.cudaModule && out.cudaModule != m_cudaModule) {
        m_cudaModule = out.cudaModule;
        showPtx();
    }
    showProblems();
    if (!ok) {
        QString message;
        for (const support::Diagnostic& d : out.diagnostics.items()) {
            if (d.severity == support::Severity::Error) {
                // "node 'X' (Op): ..." says where; runner and compiler messages name it already.
                const bool node = d.where.rfind("node '", 0) == 0;
                message = node ? fromStd(d.where + ": " + d.message) : fromStd(d.message);
                break;
            }
        }
        // The core's advice names the CLI flag; say where the same switch is in the window.
        if (!out.compiled && !out.settings.compile.fallbackReference &&
            message.contains(QLatin1String("no code generator")))
            message += tr(" (in the window: Run > Reference Interpreter for Unsupported Ops)");
        const QString stage = !out.compiled    ? tr("Compile failed")
                              : out.nvrtcFailed ? tr("CUDA compile failed")
                                                : tr("Run failed");
        if (out.nvrtcFailed)
            m_code->clearPtx(tr("NVRTC could not compile the module: %1").arg(message));
        setRunMessage(QStringLiteral("%1: %2").arg(stage, message), true);
        m_timing->clear(QStringLiteral("%1: %2").arg(stage, message));
        if (m_compiled) {
            views::KernelStatusMap statuses = compileStatuses(*m_compiled, m_doc->model()->graph);
            // A kernel that crashed or hung in the runner, or the node the error names, is the
            // one to look at.
            for (const support::Diagnostic& d : out.diagnostics.items()) {
                const std::string culprit = diagnosticNode(d);
                if (!culprit.empty() && statuses.count(culprit)) {
                    statuses[culprit] = {views::KernelStatus::Failed, fromStd(d.message)};
                    const int id = m_view->operatorIdByName(culprit);
                    if (id >= 0)
                        m_view->selectNode(id, true);
                    break;
                }
            }
            m_view->setKernelStatuses(statuses);
        }
        m_problemsDock->show();
        m_problemsDock->raise();
        emit runFinished(false);
        return;
    }

    if (out.compileOnly) {
        // Nothing ran: the kernels are compiled, not failed.
        m_view->setKernelStatuses(compileStatuses(*m_compiled, m_doc->model()->graph));
        const QString arch = fromStd(out.settings.run.cudaArch);
        const int n = m_compiled->kernelCount();
        const QString text = tr("compiled %1 CUDA %2 to PTX (%3); %4: not run")
                                 .arg(n)
                                 .arg(n == 1 ? tr("kernel") : tr("kernels"), arch, compileOnlyReason(m_doc->runs()->deviceProbe()));
        setRunMessage(text, false);
        QString tip = text;
        if (out.cudaModule)
            tip += QStringLiteral(" (%1)").arg(nvrtcNote(*out.cudaModule));
        m_runLabel->setToolTip(tip + QLatin1Char('\n') + currentTarget().toolTip);
        m_timing->clear(text.left(1).toUpper() + text.mid(1) + QLatin1Char('.'));
        showNodeResults(m_view->selectedNodeId());
        emit runFinished(true);
        return;
    }

    const pipeline::RunReport& report = *out.report;
    m_view->setKernelStatuses(runStatuses(*m_compiled, report, m_doc->model()->graph));
    if (out.settings.run.time) {
        m_doc->addToHistory(report, out.settings, QTime::currentTime().toString(QStringLiteral("HH:mm:ss")).toStdString());
    }
    m_timing->setSnapshot(timingSnapshot(report, out.settings.run));
    showRoofline(report);
    showPlanTimings(report);
    QStringList summary;
    summary << (report.kernels.size() == 1 ? tr("Ran 1 kernel") : tr("Ran %1 kernels").arg(report.kernels.size()));
    if (report.device)
        summary.last() += tr(" on CUDA %1 (%2)").arg(report.device->ordinal).arg(fromStd(report.device->name));
    if (out.settings.run.time)
        summary << tr("end to end %1").arg(views::TimingTableModel::formatSeconds(report.total.median));
    bool failed = false;
    // The outputs' verdict first: it is what the user compares.
    if (!report.outputChecks.empty()) {
        int badOut = 0;
        QString firstBad;
        for (const pipeline::OutputCheck& c : report.outputChecks)
            if (!c.comparison.ok && badOut++ == 0)
                firstBad = tr("output '%1' differs from the %2")
                               .arg(fromStd(c.tensor), c.against == "expected" ? tr("expected tensor") : fromStd(c.against));
        failed = badOut > 0;
        summary << (badOut == 0 ? tr("outputs match") : firstBad);
    }
    const bool kernelsChecked = std::any_of(report.kernels.begin(), report.kernels.end(),
                                            [](const pipeline::KernelReport& k) { return k.checked; });
    if (kernelsChecked) {
        int bad = 0;
        for (const pipeline::KernelReport& k : report.kernels)
            bad += k.passed ? 0 : 1;
        failed = failed || bad > 0;
        summary << (bad == 0 ? tr("all match the reference")
                             : tr("%1 of %2 outside tolerance").arg(bad).arg(report.kernels.size()));
    }
    setRunMessage(summary.join(QStringLiteral(" \u00b7 ")), failed);
    showNodeResults(m_view->selectedNodeId());
    emit runFinished(true);
}

void MainWindow::showRunInputs()
{
    if (!m_doc->model()) {
        statusBar()->showMessage(tr("Open a model first: its inputs and outputs are listed here"), 4000);
        return;
    }
    RunInputsDialog dialog(m_doc->model()->graph, m_doc->runInputFiles(), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    m_doc->setRunInputs(dialog.files(), dialog.data());
    statusBar()->showMessage(m_doc->runInputFiles().empty() ? tr("Inputs seeded; no expected outputs")
                                                     : tr("Run inputs set: the next run feeds and compares them"),
                             4000);
}

std::vector<std::string> MainWindow::setRunInputFiles(const RunInputFiles& files) { return m_doc->setRunInputFiles(files); }

void MainWindow::showNodeResults(int nodeId)
{
    const views::GraphSnapshot* snap = m_view->snapshot();
    const views::SnapshotNode* n = snap ? snap->find(nodeId) : nullptr;
    const bool op = n != nullptr && n->kind == views::SnapshotNodeKind::Operator;
    m_timing->selectKernel(op ? n->name : std::string());
    m_roofline->setSelectedKernel(op ? fromStd(n->name) : QString());
    m_energy->setSelectedKernel(op ? fromStd(n->name) : QString());
    if (!m_compiled || !m_code->hasModule())
        return;
    if (!op) {
        m_code->showNote(tr("select an operator to see its kernel"));
        return;
    }
    const QString name = fromStd(n->name);
    const pipeline::CompiledStep* step = stepForNode(*m_compiled, n->name);
    if (step == nullptr)
        m_code->showNote(tr("'%1' was folded into a constant at compile time: no kernel").arg(name));
    else if (step->kind == pipeline::StepKind::Reference)
        m_code->showNote(tr("'%1' (%2) has no code generator: it runs in the reference interpreter")
                             .arg(name, fromStd(step->opType)));
    else
        m_code->showKernel(name, step->firstLine, step->lastLine, fromStd(step->entry));
}

void MainWindow::createRooflineDock()
{
    m_roofline = new views::RooflineView(this);
    m_roofline->setObjectName(QStringLiteral("rooflineView"));
    m_energy = new views::EnergyView(this);
    m_energy->setObjectName(QStringLiteral("energyView"));
    m_rooflineTabs = new QTabWidget(this);
    m_rooflineTabs->setObjectName(QStringLiteral("rooflineTabs"));
    m_rooflineTabs->setDocumentMode(true);
    m_rooflineTabs->addTab(m_roofline, tr("Performance"));
    m_rooflineTabs->addTab(m_energy, tr("Energy"));
    m_rooflineDock = new QDockWidget(tr("Roofline"), this);
    m_rooflineDock->setObjectName(QStringLiteral("rooflineDock"));
    m_rooflineDock->setWidget(m_rooflineTabs);
    // Below the Code dock in the right column (not tabbed with anything): the chart, the table
    // and the kernel's code read together.
    addDockWidget(Qt::RightDockWidgetArea, m_rooflineDock, Qt::Vertical);
    m_rooflineDock->hide();
    connect(m_roofline, &views::RooflineView::kernelSelected, this, &MainWindow::onKernelRowSelected);
    connect(m_energy, &views::EnergyView::kernelSelected, this, &MainWindow::onKernelRowSelected);
    // One chart mode for both tabs (setMode emits only on a change, so this does not loop).
    connect(m_roofline, &views::RooflineView::modeChanged, m_energy, &views::EnergyView::setMode);
    connect(m_energy, &views::EnergyView::modeChanged, m_roofline, &views::RooflineView::setMode);
    // The Performance tab's precision box chooses the roofs of both (the energy roof's peak).
    connect(m_roofline, &views::RooflineView::precisionChanged, m_energy, &views::EnergyView::setPrecision);
    QAction* toggle = m_rooflineDock->toggleViewAction();
    toggle->setText(tr("&Roofline"));
    m_viewMenu->addAction(toggle);
}

void MainWindow::showRoofline(const pipeline::RunReport& report)
{
    // The profile is looked up after every run, so that roofs measured meanwhile
    // (`tessera-cli roofline measure --save`) show without a restart.
    std::optional<perf::MachineProfile> profile;
    if (report.device) {
        profile = perf::findProfileForMachine(perf::gpuFingerprint(*report.device), perf::defaultProfileDir(),
                                              "cuda:" + std::to_string(report.device->ordinal));
        m_roofline->setProfile(profile, tr("No measured roofs for CUDA device %1: run `tessera-cli roofline measure "
                                           "--target cuda:%1 --save`")
                                            .arg(report.device->ordinal));
    } else {
        // A profile of the same CPU model is taken when only the fingerprint's cache field differs.
        profile = perf::findProfileForMachine(perf::cpuFingerprint(), perf::defaultProfileDir(), "cpu");
        m_roofline->setProfile(profile);
    }
    m_roofline->setThreads(report.threads);
    m_energy->setProfile(std::move(profile));
    m_energy->setThreads(report.threads);
    if (m_compiled) {
        const std::vector<perf::KernelSample> samples = pipeline::kernelSamples(report, *m_compiled);
        m_roofline->addPoints(samples);
        m_energy->addPoints(views::kernelEnergies(samples, report));
    }
}

void MainWindow::showRecord()
{
    const std::optional<project::RunRecord>& r = m_doc->shownRecord();
    if (!r)
        return;
    showRecordPlanTimes();
    m_timing->setSnapshot(recordTimingSnapshot(*r));
    m_timingDock->show();
    // Its dots on the roofline too, against this CPU's roofs when the run was recorded on this
    // machine's CPU; otherwise without roofs.
    m_roofline->clearPoints();
    if (r->target == "cpu" && r->fingerprint == perf::cpuFingerprint())
        m_roofline->setProfile(perf::findProfileForMachine(perf::cpuFingerprint(), perf::defaultProfileDir(), "cpu"));
    else
        m_roofline->setProfile(std::nullopt, tr("The recorded run is from %1: no roofs of that machine here")
                                                 .arg(fromStd(r->device.empty() ? r->target : r->device)));
    m_roofline->setThreads(r->threads);
    m_roofline->addPoints(recordSamples(*r));
}

void MainWindow::showRecordPlanTimes()
{
    // The Fusion Plan table's Measured column from the shown record, until a run replaces it.
    const std::optional<project::RunRecord>& r = m_doc->shownRecord();
    if (r && m_doc->plans()->ready())
        m_fusionPanel->setMeasuredTimes(recordPlanTimes(*r, m_doc->plans()->plan()),
                                        fromStd(guiTimingWarning(r->timingWarning, r->threads)));
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
