#include "app/gui/main_window.h"

#include <QAction>
#include <QApplication>
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
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>
#include <QToolButton>

#include "app/gui/session.h"
#include "views/graph/graph_view.h"
#include "views/mapping/mapping_panel.h"
#include "views/properties/properties_panel.h"

namespace tessera::app {
namespace {

const char* const kRecentKey = "recentFiles";

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

bool isModelFile(const QString& path)
{
    return path.endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive) ||
           path.endsWith(QStringLiteral(".tsr"), Qt::CaseInsensitive);
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_view(new views::GraphView(this)), m_properties(new views::PropertiesPanel(this))
{
    setWindowTitle(QStringLiteral("Tessera"));
    setAcceptDrops(true);
    setCentralWidget(m_view);
    m_session = new Session([view = m_view](const views::GraphSnapshot& s) { return view->makeLayoutRequest(s); }, this);

    m_reportError = [this](const QString& title, const QStringList& lines) {
        QMessageBox box(QMessageBox::Critical, title, lines.value(0), QMessageBox::Ok, this);
        if (lines.size() > 1)
            box.setDetailedText(lines.join(QLatin1Char('\n')));
        box.exec();
    };

    createActions();
    createDocks();
    createStatusBar();

    connect(m_session, &Session::started, this, &MainWindow::onLoadStarted);
    connect(m_session, &Session::stageChanged, this, &MainWindow::onStage);
    connect(m_session, &Session::finished, this, &MainWindow::onLoadFinished);
    connect(m_view, &views::GraphView::nodeSelected, this, &MainWindow::onNodeSelected);
}

MainWindow::~MainWindow() = default;

void MainWindow::setErrorReporter(ErrorReporter reporter) { m_reportError = std::move(reporter); }

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
    m_problems->setWordWrap(true);
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
}

void MainWindow::showMapping(const QString& grid, const QString& block)
{
    m_mapping->setExpressions(grid, block);
    m_mappingDock->show();
    m_mappingDock->raise();
    // The canvas needs room: give the dock most of the width (the graph view keeps the rest).
    resizeDocks({m_mappingDock}, {width() * 3 / 5}, Qt::Horizontal);
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
    connect(m_cancelButton, &QToolButton::clicked, m_session, &Session::cancel);
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
    statusBar()->addPermanentWidget(m_nodesLabel);
    statusBar()->addPermanentWidget(m_timeLabel);
    statusBar()->addPermanentWidget(m_zoomLabel);
    statusBar()->addPermanentWidget(m_problemsButton);
    m_nodesLabel->setText(tr("No model"));
    m_problemsButton->hide();
    setBusy(false);
}

void MainWindow::setBusy(bool busy)
{
    m_progress->setVisible(busy);
    m_cancelButton->setVisible(busy);
}

void MainWindow::openDialog()
{
    const QString dir = m_path.isEmpty() ? QString() : QFileInfo(m_path).absolutePath();
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open Model or Program"), dir,
                                     tr("Models and programs (*.onnx *.tsr);;ONNX models (*.onnx);;Tessera programs (*.tsr);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::openFile(const QString& path) { m_session->load(path); }

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

void MainWindow::showProblems(const support::DiagnosticList& diagnostics)
{
    m_problems->clear();
    int warnings = 0, errors = 0, notes = 0;
    for (const support::Diagnostic& d : diagnostics.items()) {
        auto* item = new QListWidgetItem(fromStd(d.format()), m_problems);
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
    QStringList parts;
    if (errors > 0)
        parts << tr("%n error(s)", nullptr, errors);
    parts << tr("%n warning(s)", nullptr, warnings);
    if (notes > 0)
        parts << tr("%n note(s)", nullptr, notes);
    m_problemsButton->setText(parts.join(QStringLiteral(", ")));
    m_problemsButton->setIcon(style()->standardIcon(errors > 0     ? QStyle::SP_MessageBoxCritical
                                                    : warnings > 0 ? QStyle::SP_MessageBoxWarning
                                                                   : QStyle::SP_MessageBoxInformation));
    m_problemsButton->show();
}

void MainWindow::onLoadFinished(quint64, bool ok)
{
    setBusy(false);
    const LoadOutcome& out = m_session->lastOutcome();
    if (out.cancelled) {
        m_stageLabel->setText(tr("Loading cancelled"));
        return;
    }
    showProblems(out.diagnostics);
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
        if (m_reportError)
            m_reportError(tr("Could not open %1").arg(name), lines);
        emit loadFailed(out.path);
        return;
    }

    m_model = out.model;
    m_path = out.path;
    m_properties->setModel(m_model);
    m_view->setGraph(out.snapshot, out.layout);
    m_view->showStart();
    setWindowTitle(QStringLiteral("%1 \u2014 Tessera").arg(QFileInfo(m_path).fileName()));
    m_stageLabel->setText(out.layout.simplifiedSplines ? tr("Large graph: straight edges") : QString());
    const ir::Graph& g = m_model->graph;
    m_nodesLabel->setText(tr("%n node(s)", nullptr, static_cast<int>(g.numNodes())) +
                          tr(" \u00b7 %n input(s)", nullptr, static_cast<int>(g.runtimeInputs().size())) +
                          tr(" \u00b7 %n output(s)", nullptr, static_cast<int>(g.outputs().size())));
    m_timeLabel->setText(tr("import %1 ms \u00b7 layout %2 ms")
                             .arg(QString::number(out.importMs, 'f', 0), QString::number(out.layoutMs, 'f', 0)));
    addRecent(m_path);
    emit modelShown(m_path);
}

void MainWindow::onNodeSelected(int nodeId)
{
    const views::GraphSnapshot* snap = m_view->snapshot();
    const views::SnapshotNode* n = snap ? snap->find(nodeId) : nullptr;
    if (n == nullptr) {
        m_properties->clear();
        return;
    }
    if (n->kind == views::SnapshotNodeKind::Operator) {
        m_properties->showNode(n->irNode);
        showKernelSchedule(n->irNode);
    } else {
        m_properties->showValue(n->value);
    }
}

void MainWindow::showKernelSchedule(ir::NodeId node)
{
    // A kernel with a schedule written in the program: its task mappings go to the Task Mapping
    // dock (grid -> block -> thread levels), so picking a node shows who computes what.
    if (!m_model || node < 0 || static_cast<std::size_t>(node) >= m_model->graph.numNodes())
        return;
    const ir::KernelScheduleDecl* sched = m_model->program.scheduleFor(m_model->graph.node(node).name);
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
