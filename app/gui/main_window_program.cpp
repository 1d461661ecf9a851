// The main window's Program dock (the DSL editor linked with the graph) and Live mode (issue 8).
// See main_window.h.
#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSaveFile>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>

#include "app/gui/main_window.h"

#include "app/gui/document.h"
#include "app/gui/plan_session.h"
#include "app/gui/run_session.h"
#include "app/gui/schedule_controller.h"
#include "app/gui/session.h"
#include "core/frontend/dsl/dsl_printer.h"
#include "core/schedule/fusion_plan.h"
#include "views/code/code_panel.h"
#include "views/graph/graph_view.h"
#include "views/program/program_editor.h"
#include "views/program/program_panel.h"
#include "views/properties/properties_panel.h"
#include "views/roofline/energy_view.h"
#include "views/roofline/roofline_view.h"
#include "views/timing/timing_panel.h"

namespace tessera::app {
namespace {

/// Edits and changes settle this long before a re-parse or a live run.
constexpr int kDebounceMs = 250;

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

/// Asks before the window closes (an event filter, so the window's own closeEvent stays free).
class CloseGuard : public QObject {
public:
    CloseGuard(QObject* parent, std::function<bool()> allow) : QObject(parent), m_allow(std::move(allow)) {}
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (watched == parent() && event->type() == QEvent::Close && !m_allow()) {
            event->ignore();
            return true;
        }
        return false;
    }

private:
    std::function<bool()> m_allow;
};

QMenu* menuTitled(QMenuBar* bar, const QString& title)
{
    for (QAction* a : bar->actions()) {
        if (a->menu() != nullptr && a->menu()->title() == title)
            return a->menu();
    }
    return nullptr;
}

/// The action after `action` in `actions`, or null when it is the last (or absent).
QAction* actionAfter(const QList<QAction*>& actions, QAction* action)
{
    const qsizetype i = actions.indexOf(action);
    return i >= 0 && i + 1 < actions.size() ? actions[i + 1] : nullptr;
}

bool samePath(const QString& a, const QString& b)
{
    return !a.isEmpty() && !b.isEmpty() && QFileInfo(a).absoluteFilePath() == QFileInfo(b).absoluteFilePath();
}

}  // namespace

void MainWindow::createProgramDock()
{
    m_programPanel = new views::ProgramPanel(this);
    m_programPanel->setObjectName(QStringLiteral("programPanel"));
    m_programDock = new QDockWidget(tr("Program"), this);
    m_programDock->setObjectName(QStringLiteral("programDock"));
    m_programDock->setWidget(m_programPanel);
    // The left column is free: the text keeps its height beside the graph.
    addDockWidget(Qt::LeftDockWidgetArea, m_programDock);
    m_programDock->hide();
    QAction* toggle = m_programDock->toggleViewAction();
    toggle->setText(tr("&Program"));
    toggle->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    toggle->setToolTip(tr("The program as DSL text: edit a .tsr, read an ONNX model's print (Ctrl+E)"));
    m_viewMenu->addAction(toggle);

    m_saveProgramAction = new QAction(tr("Save &Program"), this);
    m_saveProgramAction->setObjectName(QStringLiteral("saveProgramAction"));
    m_saveProgramAction->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_S));
    m_saveProgramAction->setToolTip(tr("Save the program text to its .tsr file (Ctrl+Alt+S)"));
    connect(m_saveProgramAction, &QAction::triggered, this, [this] { saveProgram(); });
    m_saveProgramAsAction = new QAction(tr("Save Program &As..."), this);
    m_saveProgramAsAction->setObjectName(QStringLiteral("saveProgramAsAction"));
    m_saveProgramAsAction->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::SHIFT | Qt::Key_S));
    m_saveProgramAsAction->setToolTip(tr("Save the program text as a new .tsr file and edit it there"));
    connect(m_saveProgramAsAction, &QAction::triggered, this, [this] { saveProgramAs(); });
    if (QMenu* file = menuTitled(menuBar(), tr("&File"))) {
        // Before the separator that precedes Quit.
        QAction* before = nullptr;
        const QList<QAction*> actions = file->actions();
        for (qsizetype i = actions.size() - 1; i >= 0; --i) {
            if (actions[i]->isSeparator()) {
                before = actions[i];
                break;
            }
        }
        file->insertSeparator(before);
        file->insertAction(before, m_saveProgramAction);
        file->insertAction(before, m_saveProgramAsAction);
    }

    m_liveAction = new QAction(tr("&Live"), this);
    m_liveAction->setObjectName(QStringLiteral("liveAction"));
    m_liveAction->setCheckable(true);
    m_liveAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    m_liveAction->setToolTip(tr("Compile and run again after every change of the program, the fusion plan or the "
                                "target (Ctrl+L)"));
    if (QMenu* run = menuTitled(menuBar(), tr("&Run")))
        run->insertAction(actionAfter(run->actions(), m_stopAction), m_liveAction);
    if (auto* tools = findChild<QToolBar*>(QStringLiteral("mainToolBar")))
        tools->insertAction(actionAfter(tools->actions(), m_stopAction), m_liveAction);

    m_programTimer = new QTimer(this);
    m_programTimer->setSingleShot(true);
    m_programTimer->setInterval(kDebounceMs);
    connect(m_programTimer, &QTimer::timeout, this, &MainWindow::parseProgramNow);
    m_liveTimer = new QTimer(this);
    m_liveTimer->setSingleShot(true);
    m_liveTimer->setInterval(kDebounceMs);
    connect(m_liveTimer, &QTimer::timeout, this, &MainWindow::runLive);

    views::ProgramEditor* editor = m_programPanel->editor();
    connect(editor, &views::ProgramEditor::programEdited, this, &MainWindow::onProgramEdited);
    connect(editor, &views::ProgramEditor::programEdited, m_doc, &Document::noteProgramEdited);
    m_doc->setProgramTextSource([this] { return programText(); });
    connect(m_doc, &Document::programTextReplaced, this, &MainWindow::setProgramText);
    connect(m_doc, &Document::programHeldChanged, this, &MainWindow::updateProgramTitle);
    connect(editor, &views::ProgramEditor::statementActivated, this, &MainWindow::onProgramStatementActivated);
    connect(editor->document(), &QTextDocument::modificationChanged, this, &MainWindow::updateProgramTitle);
    connect(m_doc->loader(), &Session::textParsed, this, &MainWindow::onProgramParsed);
    // A file being opened supersedes edits of the old one that wait for their parse.
    connect(m_doc->loader(), &Session::started, m_programTimer, &QTimer::stop);
    connect(this, &MainWindow::modelShown, this, [this] { onProgramLoaded(true); });
    connect(this, &MainWindow::loadFailed, this, [this] { onProgramLoaded(false); });
    connect(m_view, &views::GraphView::nodeSelected, this, &MainWindow::highlightProgramNode);
    auto jump = [this](QListWidgetItem* item) {
        jumpToProblem(item->data(Qt::UserRole).toString(), item->data(Qt::UserRole + 1).toInt(),
                      item->data(Qt::UserRole + 2).toInt());
    };
    connect(m_problems, &QListWidget::itemClicked, this, jump);
    connect(m_problems, &QListWidget::itemActivated, this, jump);

    connect(m_liveAction, &QAction::toggled, this, [this](bool on) {
        m_liveKey.clear();
        if (on)
            scheduleLive();
        else
            m_liveTimer->stop();
        statusBar()->showMessage(on ? tr("Live: every change compiles and runs again (Ctrl+L to stop)") : tr("Live off"),
                                 4000);
    });
    connect(m_doc->plans(), &PlanSession::planChanged, this, &MainWindow::scheduleLive);
    connect(this, &MainWindow::targetChanged, this, &MainWindow::scheduleLive);
    connect(m_checkAction, &QAction::toggled, this, &MainWindow::scheduleLive);
    connect(m_fallbackAction, &QAction::toggled, this, &MainWindow::scheduleLive);

    installEventFilter(new CloseGuard(this, [this] { return maybeSaveProgram(); }));
    updateProgramTitle();
}

views::ProgramEditor* MainWindow::programEditor() const { return m_programPanel->editor(); }

QString MainWindow::programText() const
{
    return m_programPanel->hasProgram() ? m_programPanel->editor()->toPlainText() : QString();
}

bool MainWindow::programModified() const
{
    // A saved project that holds the program is where its edits are saved (the project asks about
    // them, ProjectController::isModified); the .tsr is written only by Save Program.
    return programDiffersFromFile() && m_doc->programHeldByProject().isNull();
}

void MainWindow::setProgramText(const QString& text)
{
    views::ProgramEditor* editor = m_programPanel->editor();
    if (!m_programPanel->hasProgram() || editor->isReadOnly())
        return;
    // Through a cursor, so the change is one undo step and marks the document modified.
    QTextCursor cursor(editor->document());
    cursor.select(QTextCursor::Document);
    cursor.insertText(text);
}

void MainWindow::onProgramLoaded(bool ok)
{
    const LoadOutcome& out = m_doc->loader()->lastOutcome();
    if (out.fromText)
        return;
    views::ProgramEditor* editor = m_programPanel->editor();
    const bool dsl = !out.programExported && out.path.endsWith(QLatin1String(".tsr"), Qt::CaseInsensitive);
    if (!ok && (!dsl || out.programText.isEmpty()))
        return;  // a model that failed to import: the program on screen stays with its model
    m_liveKey.clear();
    m_stageLabel->setStyleSheet(QString());
    if (out.programExported) {
        m_programPanel->showProgram(out.programText, true,
                                    tr("Exported from ONNX: File > Save Program As... to edit it as a program"));
        m_programPath.clear();
        m_programExported = true;
    } else {
        m_programPanel->showProgram(out.programText, false);
        m_programPath = out.path;
        m_programExported = false;
    }
    std::vector<support::Diagnostic> inline_;
    for (const support::Diagnostic& d : out.diagnostics.items()) {
        if (fromStd(d.file) == out.path)
            inline_.push_back(d);
    }
    editor->setDiagnostics(inline_);
    if (ok) {
        editor->setStatements(out.statements);
        m_programSignature = out.tokenSignature;
        highlightProgramNode(m_view->selectedNodeId());
    } else {
        // The file did not parse: it opens in the editor with its errors, to be fixed there; the
        // graph keeps the model shown before until the text parses.
        m_programSignature = 0;
    }
    if (!m_programExported && (!m_programShownOnce || !ok)) {
        m_programShownOnce = true;
        // Beside an open Welcome panel (same side) the two would split the height and leave the
        // editor a few lines tall: they share the area as tabs instead, the program in front.
        if (m_welcomeDock && m_welcomeDock->isVisible() && !m_welcomeDock->isFloating() &&
            dockWidgetArea(m_welcomeDock) == dockWidgetArea(m_programDock) &&
            !tabifiedDockWidgets(m_welcomeDock).contains(m_programDock))
            tabifyDockWidget(m_welcomeDock, m_programDock);
        m_programDock->show();
        m_programDock->raise();
        resizeDocks({m_programDock}, {std::max(420, width() * 3 / 8)}, Qt::Horizontal);
    }
    updateProgramTitle();
    if (ok)
        scheduleLive();
}

void MainWindow::onProgramEdited()
{
    if (m_programPanel->editor()->isReadOnly())
        return;
    m_liveTimer->stop();
    m_programTimer->start();
    updateProgramTitle();
}

void MainWindow::parseProgramNow()
{
    if (m_programPath.isEmpty() || m_programExported || m_programPanel->editor()->isReadOnly())
        return;
    if (m_doc->loader()->isBusy() && !m_doc->loader()->isTextLoad())
        return;  // a file is being opened: it replaces this text
    m_doc->loader()->loadText(m_programPanel->editor()->toPlainText(), m_programPath);
}

void MainWindow::onProgramParsed(quint64, bool ok)
{
    const LoadOutcome& out = m_doc->loader()->lastOutcome();
    if (out.cancelled || out.path != m_programPath)
        return;
    views::ProgramEditor* editor = m_programPanel->editor();
    std::vector<support::Diagnostic> inline_;
    const support::Diagnostic* firstError = nullptr;
    int errors = 0;
    for (const support::Diagnostic& d : out.diagnostics.items()) {
        if (fromStd(d.file) == out.path)
            inline_.push_back(d);
        if (d.severity == support::Severity::Error) {
            ++errors;
            if (firstError == nullptr)
                firstError = &d;
        }
    }
    editor->setDiagnostics(inline_);
    m_doc->setProblems(Document::ProblemSource::Load, out.diagnostics);
    if (!ok) {
        // The graph keeps the last model that parsed; the text stays as typed.
        showProblems();
        const QString where =
            firstError != nullptr && firstError->begin.line > 0
                ? tr("line %1:%2: ").arg(firstError->begin.line).arg(firstError->begin.column)
                : QString();
        m_stageLabel->setText(tr("Program: %n error(s), %1%2", nullptr, errors)
                                  .arg(where, firstError != nullptr ? fromStd(firstError->message) : QString()));
        m_stageLabel->setStyleSheet(QStringLiteral("color: #c62828;"));
        emit programParsed(false);
        return;
    }
    m_stageLabel->clear();
    m_stageLabel->setStyleSheet(QString());
    editor->setStatements(out.statements);
    if (m_doc->model() && out.tokenSignature == m_programSignature && samePath(m_doc->path(), m_programPath)) {
        // Comments, spacing or line breaks only: the model, its plan and its results stay.
        showProblems();
        highlightProgramNode(m_view->selectedNodeId());
        emit programParsed(true);
        return;
    }
    showProgramModel(out);
    emit programParsed(true);
}

void MainWindow::showProgramModel(const LoadOutcome& out)
{
    // The view keeps its zoom and centre, and the selected node when it still exists.
    const bool hadGraph = m_view->snapshot() != nullptr;
    const double zoom = m_view->zoom();
    const QPointF centre = m_view->mapToScene(m_view->viewport()->rect().center());
    std::string selectedName;
    views::SnapshotNodeKind selectedKind = views::SnapshotNodeKind::Operator;
    if (const views::GraphSnapshot* snap = m_view->snapshot()) {
        if (const views::SnapshotNode* n = snap->find(m_view->selectedNodeId())) {
            selectedName = n->name;
            selectedKind = n->kind;
        }
    }

    // Results of the previous model no longer apply (the document cancels a run of it).
    m_liveKey.clear();
    m_compiled.reset();
    m_cudaModule.reset();
    m_code->clear(tr("The program changed: Run (Ctrl+R) compiles it, or turn on Run > Live (Ctrl+L)."));
    m_timing->clear(tr("The program changed: Run (Ctrl+R) times it again."));
    m_roofline->clearPoints();
    m_energy->clearPoints();
    m_runLabel->clear();
    m_runLabel->hide();
    showProblems();

    const bool newPath = !samePath(m_doc->path(), out.path);
    m_programSignature = out.tokenSignature;
    m_properties->setModel(out.model);
    m_view->setFusionClusters({});
    m_view->setGraph(out.snapshot, out.layout);
    if (hadGraph) {
        m_view->setZoom(zoom);
        m_view->centerOn(centre);
    } else {
        m_view->showStart();
    }
    if (!selectedName.empty()) {
        for (const views::SnapshotNode& n : out.snapshot->nodes) {
            if (n.name == selectedName && n.kind == selectedKind) {
                m_view->selectNode(n.id, false);
                break;
            }
        }
    }
    m_doc->updateModel(out.model, out.path);
    const ir::Graph& g = m_doc->model()->graph;
    m_nodesLabel->setText(tr("%n node(s)", nullptr, static_cast<int>(g.numNodes())) +
                          tr(" \u00b7 %n input(s)", nullptr, static_cast<int>(g.runtimeInputs().size())) +
                          tr(" \u00b7 %n output(s)", nullptr, static_cast<int>(g.outputs().size())));
    m_timeLabel->setText(tr("parse %1 ms \u00b7 layout %2 ms")
                             .arg(QString::number(out.importMs, 'f', 0), QString::number(out.layoutMs, 'f', 0)));
    m_runAction->setEnabled(true);
    if (newPath) {
        setWindowTitle(QStringLiteral("%1 \u2014 Tessera").arg(QFileInfo(m_doc->path()).fileName()));
        addRecent(m_doc->path());
    }
    scheduleLive();
}

void MainWindow::onProgramStatementActivated(int index)
{
    const std::vector<views::ProgramStatement>& statements = m_programPanel->editor()->statements();
    const views::GraphSnapshot* snap = m_view->snapshot();
    if (snap == nullptr || index < 0 || index >= static_cast<int>(statements.size()))
        return;
    const views::ProgramStatement& s = statements[static_cast<std::size_t>(index)];
    for (const views::SnapshotNode& n : snap->nodes) {
        if (n.kind == s.kind && n.name == s.node) {
            if (n.id != m_view->selectedNodeId())
                m_view->selectNode(n.id, true);
            return;
        }
    }
}

void MainWindow::highlightProgramNode(int nodeId)
{
    views::ProgramEditor* editor = m_programPanel->editor();
    const views::GraphSnapshot* snap = m_view->snapshot();
    const views::SnapshotNode* n = snap != nullptr ? snap->find(nodeId) : nullptr;
    if (n == nullptr || !m_programPanel->hasProgram()) {
        editor->clearStatementHighlight();
        return;
    }
    editor->highlightStatementOf(n->name, n->kind);
}

void MainWindow::jumpToProblem(const QString& file, int line, int column)
{
    if (line <= 0 || !m_programPanel->hasProgram() || !samePath(file, m_programPath))
        return;
    m_programDock->show();
    m_programDock->raise();
    m_programPanel->editor()->goTo(line, std::max(1, column));
}

void MainWindow::updateProgramTitle()
{
    const bool has = m_programPanel->hasProgram();
    QString title = tr("Program");
    if (has) {
        const QString name = m_programExported ? tr("%1 as DSL").arg(QFileInfo(m_doc->path()).fileName())
                                               : QFileInfo(m_programPath).fileName();
        const bool held = !m_doc->programHeldByProject().isNull();
        const bool unsaved = programModified() || (held && m_programPanel->editor()->toPlainText() != m_doc->programHeldByProject());
        title += QStringLiteral(" \u2014 %1%2").arg(name, unsaved ? QStringLiteral("*") : QString());
        if (held && programDiffersFromFile())
            title += tr(" (kept in the project; differs from the file)");
    }
    m_programDock->setWindowTitle(title);
    m_saveProgramAction->setEnabled(has && !m_programExported);
    m_saveProgramAsAction->setEnabled(has);
}

bool MainWindow::saveProgram()
{
    if (!m_programPanel->hasProgram())
        return false;
    if (m_programExported || m_programPath.isEmpty())
        return saveProgramAs();
    QSaveFile f(m_programPath);
    const QByteArray bytes = m_programPanel->editor()->toPlainText().toUtf8();
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit()) {
        m_doc->reportError(tr("Could not save %1").arg(QFileInfo(m_programPath).fileName()),
                           {tr("%1: %2").arg(m_programPath, f.errorString())});
        return false;
    }
    m_programPanel->editor()->setUnmodified();
    statusBar()->showMessage(tr("Saved %1").arg(m_programPath), 4000);
    return true;
}

bool MainWindow::saveProgramAs(const QString& chosen)
{
    if (!m_programPanel->hasProgram())
        return false;
    QString path = chosen;
    if (path.isEmpty()) {
        const QFileInfo base(m_programExported ? m_doc->path() : m_programPath);
        const QString suggestion = base.absolutePath() + QLatin1Char('/') + base.completeBaseName() + QStringLiteral(".tsr");
        path = QFileDialog::getSaveFileName(this, tr("Save Program As"), suggestion, tr("Tessera programs (*.tsr)"));
        if (path.isEmpty())
            return false;
    }
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".tsr");
    QByteArray bytes;
    if (m_programExported && m_doc->model()) {
        // Weights stay in the ONNX file, referenced from the folder the program goes to; a
        // program may only read files inside its folder (docs/dsl.md §4.2).
        const QString reference =
            QDir(QFileInfo(path).absolutePath()).relativeFilePath(QFileInfo(m_doc->path()).absoluteFilePath());
        if (reference.startsWith(QLatin1String("../")) || QDir::isAbsolutePath(reference)) {
            m_doc->reportError(tr("Could not save %1").arg(QFileInfo(path).fileName()),
                               {tr("The program reads its weights from %1, and a program may only read files in "
                                   "its own folder or below: save it in %2 or a folder above it.")
                                    .arg(QFileInfo(m_doc->path()).fileName(), QFileInfo(m_doc->path()).absolutePath())});
            return false;
        }
        frontend::dsl::PrintOptions po;
        po.onnxReference = reference.toStdString();
        bytes = QByteArray::fromStdString(frontend::dsl::printDsl(*m_doc->model(), po));
    } else {
        bytes = m_programPanel->editor()->toPlainText().toUtf8();
    }
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit()) {
        m_doc->reportError(tr("Could not save %1").arg(QFileInfo(path).fileName()), {tr("%1: %2").arg(path, f.errorString())});
        return false;
    }
    statusBar()->showMessage(tr("Saved %1").arg(path), 4000);
    if (m_programExported) {
        // From now on it is a program: open it as one.
        m_doc->loader()->load(path);
        return true;
    }
    m_programPath = path;
    m_programPanel->editor()->setUnmodified();
    updateProgramTitle();
    // Parsed under its new name (relative files resolve there); the model follows the file.
    m_programTimer->stop();
    parseProgramNow();
    return true;
}

bool MainWindow::maybeSaveProgram()
{
    if (!programModified())
        return true;
    const QString name = QFileInfo(m_programPath).fileName();
    SaveChoice choice = SaveChoice::Cancel;
    if (m_savePrompt) {
        choice = m_savePrompt(name);
    } else {
        const QMessageBox::StandardButton b = QMessageBox::question(
            this, tr("Unsaved program"), tr("The program %1 has changes that are not saved. Save them?").arg(name),
            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
        choice = b == QMessageBox::Save ? SaveChoice::Save : b == QMessageBox::Discard ? SaveChoice::Discard : SaveChoice::Cancel;
    }
    switch (choice) {
    case SaveChoice::Save: return saveProgram();
    case SaveChoice::Discard:
        // Asked once: a second check (the project's, then the window's) does not ask again.
        m_programPanel->editor()->setUnmodified();
        return true;
    case SaveChoice::Cancel: break;
    }
    return false;
}

void MainWindow::setSavePrompt(SavePrompt prompt) { m_savePrompt = std::move(prompt); }

bool MainWindow::isLive() const { return m_liveAction->isChecked(); }

void MainWindow::setLive(bool on) { m_liveAction->setChecked(on); }

void MainWindow::scheduleLive()
{
    if (m_liveAction == nullptr || !isLive())
        return;
    m_liveTimer->start();
}

void MainWindow::runLive()
{
    if (!isLive() || !m_doc->model())
        return;
    // Whatever is still settling schedules the run again when it is done: an edit waiting for its
    // parse, a load or parse in flight, the first plan of a new model.
    if (m_programTimer->isActive() || m_doc->loader()->isBusy() || (!m_doc->plans()->ready() && m_doc->plans()->isBusy()))
        return;
    const QString plan = m_doc->plans()->ready() ? fromStd(schedule::planToJson(m_doc->plans()->plan())) : m_doc->plans()->planner();
    const QString key = QStringLiteral("%1|%2|%3|%4|%5|%6")
                            .arg(reinterpret_cast<quintptr>(m_doc->model().get()))
                            .arg(plan, fromStd(m_doc->plans()->hardware().name), currentTarget().id)
                            .arg(m_checkAction->isChecked())
                            .arg(m_fallbackAction->isChecked()) +
                        m_doc->schedules()->key();
    // The same model, plan, target and options as the last live run: nothing to do (also after
    // the user stopped that run).
    if (key == m_liveKey)
        return;
    m_liveKey = key;
    startRun();
}

}  // namespace tessera::app
