#include "app/gui/program_controller.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>
#include <QTimer>
#include <QToolBar>

#include <algorithm>

#include "app/gui/document.h"
#include "app/gui/plan_session.h"
#include "app/gui/run_targets.h"
#include "app/gui/schedule_controller.h"
#include "app/gui/session.h"
#include "core/pipeline/dsl_text.h"
#include "core/schedule/fusion_plan.h"
#include "views/graph/graph_view.h"
#include "views/program/program_editor.h"
#include "views/program/program_panel.h"
#include "views/properties/properties_panel.h"

namespace tessera::app {
namespace {

/// Edits and changes settle this long before a re-parse or a live run.
constexpr int kDebounceMs = 250;

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

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

ProgramController::ProgramController(Document* doc, const ProgramShell& shell, QObject* parent)
    : QObject(parent), m_doc(doc), m_shell(shell)
{
    QMainWindow* window = m_shell.window;
    m_panel = new views::ProgramPanel(window);
    m_panel->setObjectName(QStringLiteral("programPanel"));
    m_dock = new QDockWidget(tr("Program"), window);
    m_dock->setObjectName(QStringLiteral("programDock"));
    m_dock->setWidget(m_panel);
    // The left column is free: the text keeps its height beside the graph.
    window->addDockWidget(Qt::LeftDockWidgetArea, m_dock);
    m_dock->hide();
    QAction* toggle = m_dock->toggleViewAction();
    toggle->setText(tr("&Program"));
    toggle->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    toggle->setToolTip(tr("The program as DSL text: edit a .tsr, read an ONNX model's print (Ctrl+E)"));
    m_shell.viewMenu->addAction(toggle);

    m_saveAction = new QAction(tr("Save &Program"), window);
    m_saveAction->setObjectName(QStringLiteral("saveProgramAction"));
    m_saveAction->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_S));
    m_saveAction->setToolTip(tr("Save the program text to its .tsr file (Ctrl+Alt+S)"));
    connect(m_saveAction, &QAction::triggered, this, [this] { saveProgram(); });
    m_saveAsAction = new QAction(tr("Save Program &As..."), window);
    m_saveAsAction->setObjectName(QStringLiteral("saveProgramAsAction"));
    m_saveAsAction->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::SHIFT | Qt::Key_S));
    m_saveAsAction->setToolTip(tr("Save the program text as a new .tsr file and edit it there"));
    connect(m_saveAsAction, &QAction::triggered, this, [this] { saveProgramAs(); });
    if (QMenu* file = m_shell.fileMenu) {
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
        file->insertAction(before, m_saveAction);
        file->insertAction(before, m_saveAsAction);
    }

    m_liveAction = new QAction(tr("&Live"), window);
    m_liveAction->setObjectName(QStringLiteral("liveAction"));
    m_liveAction->setCheckable(true);
    m_liveAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    m_liveAction->setToolTip(tr("Compile and run again after every change of the program, the fusion plan or the "
                                "target (Ctrl+L)"));
    if (QMenu* run = m_shell.runMenu)
        run->insertAction(actionAfter(run->actions(), m_shell.stopAction), m_liveAction);
    if (QToolBar* tools = m_shell.toolBar)
        tools->insertAction(actionAfter(tools->actions(), m_shell.stopAction), m_liveAction);

    m_parseTimer = new QTimer(this);
    m_parseTimer->setSingleShot(true);
    m_parseTimer->setInterval(kDebounceMs);
    connect(m_parseTimer, &QTimer::timeout, this, &ProgramController::parseProgramNow);
    m_liveTimer = new QTimer(this);
    m_liveTimer->setSingleShot(true);
    m_liveTimer->setInterval(kDebounceMs);
    connect(m_liveTimer, &QTimer::timeout, this, &ProgramController::runLive);

    views::ProgramEditor* editor = m_panel->editor();
    connect(editor, &views::ProgramEditor::programEdited, this, &ProgramController::onProgramEdited);
    connect(editor, &views::ProgramEditor::programEdited, m_doc, &Document::noteProgramEdited);
    m_doc->setProgramTextSource([this] { return programText(); });
    connect(m_doc, &Document::programTextReplaced, this, &ProgramController::setProgramText);
    connect(m_doc, &Document::programHeldChanged, this, &ProgramController::updateTitle);
    connect(editor, &views::ProgramEditor::statementActivated, this, &ProgramController::onStatementActivated);
    connect(editor->document(), &QTextDocument::modificationChanged, this, &ProgramController::updateTitle);
    connect(m_doc->loader(), &Session::textParsed, this, &ProgramController::onProgramParsed);
    // A file being opened supersedes edits of the old one that wait for their parse.
    connect(m_doc->loader(), &Session::started, m_parseTimer, &QTimer::stop);
    connect(m_doc, &Document::modelChanged, this, [this] { onProgramLoaded(true); });
    connect(m_doc, &Document::loadFailed, this, [this] { onProgramLoaded(false); });
    connect(m_shell.graph, &views::GraphView::nodeSelected, this, &ProgramController::highlightNode);
    auto jump = [this](QListWidgetItem* item) {
        jumpToProblem(item->data(Qt::UserRole).toString(), item->data(Qt::UserRole + 1).toInt(),
                      item->data(Qt::UserRole + 2).toInt());
    };
    connect(m_shell.problems, &QListWidget::itemClicked, this, jump);
    connect(m_shell.problems, &QListWidget::itemActivated, this, jump);

    connect(m_liveAction, &QAction::toggled, this, [this](bool on) {
        m_liveKey.clear();
        if (on)
            scheduleLive();
        else
            m_liveTimer->stop();
        m_doc->showMessage(on ? tr("Live: every change compiles and runs again (Ctrl+L to stop)") : tr("Live off"), 4000);
    });
    connect(m_doc->plans(), &PlanSession::planChanged, this, &ProgramController::scheduleLive);
    connect(m_doc, &Document::targetChanged, this, &ProgramController::scheduleLive);
    connect(m_doc, &Document::runOptionsChanged, this, &ProgramController::scheduleLive);
    if (m_doc->schedules() != nullptr)
        connect(m_doc->schedules(), &ScheduleController::schedulesChanged, this, &ProgramController::scheduleLive);

    // Closing the window asks about unsaved text (an event filter, so the window's own
    // closeEvent stays free).
    window->installEventFilter(this);
    updateTitle();
}

ProgramController::~ProgramController() = default;

views::ProgramEditor* ProgramController::programEditor() const { return m_panel->editor(); }

QString ProgramController::programText() const
{
    return m_panel->hasProgram() ? m_panel->editor()->toPlainText() : QString();
}

bool ProgramController::programModified() const
{
    // A saved project that holds the program is where its edits are saved (the project asks about
    // them, ProjectController::isModified); the .tsr is written only by Save Program.
    return programDiffersFromFile() && m_doc->programHeldByProject().isNull();
}

bool ProgramController::programDiffersFromFile() const
{
    return m_panel->hasProgram() && !m_exported && m_panel->editor()->isModified();
}

void ProgramController::setProgramText(const QString& text)
{
    views::ProgramEditor* editor = m_panel->editor();
    if (!m_panel->hasProgram() || editor->isReadOnly())
        return;
    // Through a cursor, so the change is one undo step and marks the document modified.
    QTextCursor cursor(editor->document());
    cursor.select(QTextCursor::Document);
    cursor.insertText(text);
}

void ProgramController::onProgramLoaded(bool ok)
{
    const LoadOutcome& out = m_doc->loader()->lastOutcome();
    if (out.fromText)
        return;
    views::ProgramEditor* editor = m_panel->editor();
    const bool dsl = !out.programExported && out.path.endsWith(QLatin1String(".tsr"), Qt::CaseInsensitive);
    if (!ok && (!dsl || out.programText.isEmpty()))
        return;  // a model that failed to import: the program on screen stays with its model
    m_liveKey.clear();
    m_shell.stageLabel->setStyleSheet(QString());
    if (out.programExported) {
        m_panel->showProgram(out.programText, true,
                             tr("Exported from ONNX: File > Save Program As... to edit it as a program"));
        m_path.clear();
        m_exported = true;
    } else {
        m_panel->showProgram(out.programText, false);
        m_path = out.path;
        m_exported = false;
    }
    std::vector<support::Diagnostic> inline_;
    for (const support::Diagnostic& d : out.diagnostics.items()) {
        if (fromStd(d.file) == out.path)
            inline_.push_back(d);
    }
    editor->setDiagnostics(inline_);
    if (ok) {
        editor->setStatements(out.statements);
        m_signature = out.tokenSignature;
        highlightNode(m_shell.graph->selectedNodeId());
    } else {
        // The file did not parse: it opens in the editor with its errors, to be fixed there; the
        // graph keeps the model shown before until the text parses.
        m_signature = 0;
    }
    if (!m_exported && (!m_shownOnce || !ok)) {
        m_shownOnce = true;
        QMainWindow* window = m_shell.window;
        // Beside an open Welcome panel (same side) the two would split the height and leave the
        // editor a few lines tall: they share the area as tabs instead, the program in front.
        if (m_welcomeDock && m_welcomeDock->isVisible() && !m_welcomeDock->isFloating() &&
            window->dockWidgetArea(m_welcomeDock) == window->dockWidgetArea(m_dock) &&
            !window->tabifiedDockWidgets(m_welcomeDock).contains(m_dock))
            window->tabifyDockWidget(m_welcomeDock, m_dock);
        m_dock->show();
        m_dock->raise();
        window->resizeDocks({m_dock}, {std::max(420, window->width() * 3 / 8)}, Qt::Horizontal);
    }
    updateTitle();
    if (ok)
        scheduleLive();
}

void ProgramController::onProgramEdited()
{
    if (m_panel->editor()->isReadOnly())
        return;
    m_liveTimer->stop();
    m_parseTimer->start();
    updateTitle();
}

void ProgramController::parseProgramNow()
{
    if (m_path.isEmpty() || m_exported || m_panel->editor()->isReadOnly())
        return;
    if (m_doc->loader()->isBusy() && !m_doc->loader()->isTextLoad())
        return;  // a file is being opened: it replaces this text
    m_doc->loader()->loadText(m_panel->editor()->toPlainText(), m_path);
}

void ProgramController::onProgramParsed(quint64, bool ok)
{
    const LoadOutcome& out = m_doc->loader()->lastOutcome();
    if (out.cancelled || out.path != m_path)
        return;
    views::ProgramEditor* editor = m_panel->editor();
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
    // Problems follow (Document::problemsChanged).
    m_doc->setProblems(Document::ProblemSource::Load, out.diagnostics);
    QLabel* stage = m_shell.stageLabel;
    if (!ok) {
        // The graph keeps the last model that parsed; the text stays as typed.
        const QString where =
            firstError != nullptr && firstError->begin.line > 0
                ? tr("line %1:%2: ").arg(firstError->begin.line).arg(firstError->begin.column)
                : QString();
        stage->setText(tr("Program: %n error(s), %1%2", nullptr, errors)
                           .arg(where, firstError != nullptr ? fromStd(firstError->message) : QString()));
        stage->setStyleSheet(QStringLiteral("color: #c62828;"));
        emit programParsed(false);
        return;
    }
    stage->clear();
    stage->setStyleSheet(QString());
    editor->setStatements(out.statements);
    if (m_doc->model() && out.tokenSignature == m_signature && samePath(m_doc->path(), m_path)) {
        // Comments, spacing or line breaks only: the model, its plan and its results stay.
        highlightNode(m_shell.graph->selectedNodeId());
        emit programParsed(true);
        return;
    }
    showProgramModel(out);
    emit programParsed(true);
}

void ProgramController::showProgramModel(const LoadOutcome& out)
{
    views::GraphView* view = m_shell.graph;
    // The view keeps its zoom and centre, and the selected node when it still exists.
    const bool hadGraph = view->snapshot() != nullptr;
    const double zoom = view->zoom();
    const QPointF centre = view->mapToScene(view->viewport()->rect().center());
    std::string selectedName;
    views::SnapshotNodeKind selectedKind = views::SnapshotNodeKind::Operator;
    if (const views::GraphSnapshot* snap = view->snapshot()) {
        if (const views::SnapshotNode* n = snap->find(view->selectedNodeId())) {
            selectedName = n->name;
            selectedKind = n->kind;
        }
    }

    m_liveKey.clear();
    const bool newPath = !samePath(m_doc->path(), out.path);
    m_signature = out.tokenSignature;
    m_shell.properties->setModel(out.model);
    view->setFusionClusters({});
    view->setGraph(out.snapshot, out.layout);
    if (hadGraph) {
        view->setZoom(zoom);
        view->centerOn(centre);
    } else {
        view->showStart();
    }
    if (!selectedName.empty()) {
        for (const views::SnapshotNode& n : out.snapshot->nodes) {
            if (n.name == selectedName && n.kind == selectedKind) {
                view->selectNode(n.id, false);
                break;
            }
        }
    }
    // Results of runs of the previous model no longer apply (Document::modelUpdated).
    m_doc->updateModel(out.model, out.path);
    if (newPath) {
        m_doc->noteRecentFile(m_doc->path());
        emit programSavedAs(m_doc->path());
    }
    scheduleLive();
}

void ProgramController::onStatementActivated(int index)
{
    const std::vector<views::ProgramStatement>& statements = m_panel->editor()->statements();
    views::GraphView* view = m_shell.graph;
    const views::GraphSnapshot* snap = view->snapshot();
    if (snap == nullptr || index < 0 || index >= static_cast<int>(statements.size()))
        return;
    const views::ProgramStatement& s = statements[static_cast<std::size_t>(index)];
    for (const views::SnapshotNode& n : snap->nodes) {
        if (n.kind == s.kind && n.name == s.node) {
            if (n.id != view->selectedNodeId())
                view->selectNode(n.id, true);
            return;
        }
    }
}

void ProgramController::highlightNode(int nodeId)
{
    views::ProgramEditor* editor = m_panel->editor();
    const views::GraphSnapshot* snap = m_shell.graph->snapshot();
    const views::SnapshotNode* n = snap != nullptr ? snap->find(nodeId) : nullptr;
    if (n == nullptr || !m_panel->hasProgram()) {
        editor->clearStatementHighlight();
        return;
    }
    editor->highlightStatementOf(n->name, n->kind);
}

void ProgramController::jumpToProblem(const QString& file, int line, int column)
{
    if (line <= 0 || !m_panel->hasProgram() || !samePath(file, m_path))
        return;
    m_dock->show();
    m_dock->raise();
    m_panel->editor()->goTo(line, std::max(1, column));
}

void ProgramController::updateTitle()
{
    const bool has = m_panel->hasProgram();
    QString title = tr("Program");
    if (has) {
        const QString name =
            m_exported ? tr("%1 as DSL").arg(QFileInfo(m_doc->path()).fileName()) : QFileInfo(m_path).fileName();
        const bool held = !m_doc->programHeldByProject().isNull();
        const bool unsaved =
            programModified() || (held && m_panel->editor()->toPlainText() != m_doc->programHeldByProject());
        title += QStringLiteral(" \u2014 %1%2").arg(name, unsaved ? QStringLiteral("*") : QString());
        if (held && programDiffersFromFile())
            title += tr(" (kept in the project; differs from the file)");
    }
    m_dock->setWindowTitle(title);
    m_saveAction->setEnabled(has && !m_exported);
    m_saveAsAction->setEnabled(has);
}

bool ProgramController::saveProgram()
{
    if (!m_panel->hasProgram())
        return false;
    if (m_exported || m_path.isEmpty())
        return saveProgramAs();
    QSaveFile f(m_path);
    const QByteArray bytes = m_panel->editor()->toPlainText().toUtf8();
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit()) {
        m_doc->reportError(tr("Could not save %1").arg(QFileInfo(m_path).fileName()),
                           {tr("%1: %2").arg(m_path, f.errorString())});
        return false;
    }
    m_panel->editor()->setUnmodified();
    m_doc->showMessage(tr("Saved %1").arg(m_path), 4000);
    return true;
}

bool ProgramController::saveProgramAs(const QString& chosen)
{
    if (!m_panel->hasProgram())
        return false;
    QString path = chosen;
    if (path.isEmpty()) {
        const QFileInfo base(m_exported ? m_doc->path() : m_path);
        const QString suggestion = base.absolutePath() + QLatin1Char('/') + base.completeBaseName() + QStringLiteral(".tsr");
        path = QFileDialog::getSaveFileName(m_shell.window, tr("Save Program As"), suggestion,
                                            tr("Tessera programs (*.tsr)"));
        if (path.isEmpty())
            return false;
    }
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".tsr");
    QByteArray bytes;
    if (m_exported && m_doc->model()) {
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
        pipeline::DslPrintOptions po;
        po.onnxReference = reference.toStdString();
        bytes = QByteArray::fromStdString(pipeline::printDsl(*m_doc->model(), po));
    } else {
        bytes = m_panel->editor()->toPlainText().toUtf8();
    }
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit()) {
        m_doc->reportError(tr("Could not save %1").arg(QFileInfo(path).fileName()), {tr("%1: %2").arg(path, f.errorString())});
        return false;
    }
    m_doc->showMessage(tr("Saved %1").arg(path), 4000);
    if (m_exported) {
        // From now on it is a program: open it as one.
        m_doc->loader()->load(path);
        return true;
    }
    m_path = path;
    m_panel->editor()->setUnmodified();
    updateTitle();
    // Parsed under its new name (relative files resolve there); the model follows the file.
    m_parseTimer->stop();
    parseProgramNow();
    return true;
}

bool ProgramController::maybeSaveProgram()
{
    if (!programModified())
        return true;
    const QString name = QFileInfo(m_path).fileName();
    SaveChoice choice = SaveChoice::Cancel;
    if (m_savePrompt) {
        choice = m_savePrompt(name);
    } else {
        const QMessageBox::StandardButton b = QMessageBox::question(
            m_shell.window, tr("Unsaved program"), tr("The program %1 has changes that are not saved. Save them?").arg(name),
            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
        choice = b == QMessageBox::Save ? SaveChoice::Save : b == QMessageBox::Discard ? SaveChoice::Discard : SaveChoice::Cancel;
    }
    switch (choice) {
    case SaveChoice::Save: return saveProgram();
    case SaveChoice::Discard:
        // Asked once: a second check (the project's, then the window's) does not ask again.
        m_panel->editor()->setUnmodified();
        return true;
    case SaveChoice::Cancel: break;
    }
    return false;
}

bool ProgramController::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_shell.window && event->type() == QEvent::Close && !maybeSaveProgram()) {
        event->ignore();
        return true;
    }
    return QObject::eventFilter(watched, event);
}

bool ProgramController::isLive() const { return m_liveAction->isChecked(); }

void ProgramController::setLive(bool on) { m_liveAction->setChecked(on); }

void ProgramController::scheduleLive()
{
    if (!isLive())
        return;
    m_liveTimer->start();
}

void ProgramController::runLive()
{
    if (!isLive() || !m_doc->model())
        return;
    // Whatever is still settling schedules the run again when it is done: an edit waiting for its
    // parse, a load or parse in flight, the first plan of a new model.
    PlanSession* plans = m_doc->plans();
    if (m_parseTimer->isActive() || m_doc->loader()->isBusy() || (!plans->ready() && plans->isBusy()))
        return;
    const QString plan = plans->ready() ? fromStd(schedule::planToJson(plans->plan())) : plans->planner();
    const QString key = QStringLiteral("%1|%2|%3|%4|%5|%6")
                            .arg(reinterpret_cast<quintptr>(m_doc->model().get()))
                            .arg(plan, fromStd(plans->hardware().name), m_doc->currentTarget().id)
                            .arg(m_doc->check())
                            .arg(m_doc->fallbackReference()) +
                        (m_doc->schedules() != nullptr ? m_doc->schedules()->key() : QString());
    // The same model, plan, target and options as the last live run: nothing to do (also after
    // the user stopped that run).
    if (key == m_liveKey)
        return;
    m_liveKey = key;
    emit liveRunRequested();
}

}  // namespace tessera::app
