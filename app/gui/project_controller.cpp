#include "app/gui/project_controller.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTimer>
#include <QUndoStack>

#include "app/gui/app_settings.h"
#include "app/gui/document.h"
#include "app/gui/plan_session.h"
#include "app/gui/schedule_controller.h"
#include "app/gui/run_results.h"
#include "app/gui/run_session.h"
#include "app/gui/session.h"
#include "app/gui/welcome_panel.h"
#include "core/perf/kernel_points.h"
#include "core/perf/machine_profile.h"
#include "core/pipeline/host_profile.h"
#include "core/target/gpu_profile.h"
#include "views/fusion/fusion_plan_panel.h"
#include "views/mapping/mapping_panel.h"
#include "views/program/program_editor.h"
#include "views/roofline/roofline_view.h"
#include "views/timing/timing_panel.h"
#include "views/timing/timing_table_model.h"

namespace tessera::app {
namespace {

constexpr int kAutosaveMs = 60 * 1000;

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

bool isProjectFile(const QString& path)
{
    return path.endsWith(QLatin1String(project::kProjectExtension), Qt::CaseInsensitive);
}

bool samePath(const QString& a, const QString& b)
{
    return QFileInfo(a).absoluteFilePath() == QFileInfo(b).absoluteFilePath();
}

bool knownPlanner(const std::string& p) { return p == "none" || p == "hidet" || p == "fuseplanner"; }

/// Whether a profile is found by name (a built-in one or "host"), so a project need not embed it.
bool namedProfile(const std::string& name)
{
    if (name == "host")
        return true;
    for (const std::string& n : target::builtinGpuProfileNames()) {
        if (n == name)
            return true;
    }
    return false;
}

/// The pid in "autosave-<pid>.tessera", 0 when the name has none.
qint64 autosavePid(const QString& fileName)
{
    const QString stem = QFileInfo(fileName).completeBaseName();
    bool ok = false;
    const qint64 pid = stem.mid(QStringLiteral("autosave-").size()).toLongLong(&ok);
    return ok ? pid : 0;
}

bool processAlive(qint64 pid)
{
    if (pid <= 0 || pid > 0x7fffffff)
        return false;
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

QString metaPathFor(const QString& autosave)
{
    return autosave.left(autosave.size() - int(qstrlen(project::kProjectExtension))) + QStringLiteral(".json");
}

}  // namespace

ProjectController::ProjectController(Document* doc, QWidget* window, QMenu* fileMenu)
    : QObject(window), m_doc(doc), m_window(window), m_plans(doc->plans())
{
    m_saveAction = new QAction(tr("&Save Project"), this);
    m_saveAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_S));
    m_saveAction->setStatusTip(tr("Save the model's plan, target, options and measurements in a .tessera project"));
    connect(m_saveAction, &QAction::triggered, this, [this] { save(); });
    m_saveAsAction = new QAction(tr("Save Project &As..."), this);
    m_saveAsAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    connect(m_saveAsAction, &QAction::triggered, this, [this] { saveAs(); });
    if (fileMenu != nullptr) {
        // Before Quit's separator: Open, Open Recent, Save, Save As | Quit.
        QAction* before = nullptr;
        const QList<QAction*> actions = fileMenu->actions();
        for (auto it = actions.crbegin(); it != actions.crend(); ++it) {
            if ((*it)->isSeparator()) {
                before = *it;
                break;
            }
        }
        fileMenu->insertAction(before, m_saveAction);
        fileMenu->insertAction(before, m_saveAsAction);
    }
    window->addAction(m_saveAction);
    window->addAction(m_saveAsAction);

    m_unsavedPrompt = [this](const QString& name) {
        // Before the first Save Project there is no project yet: name the model, not a "project".
        const bool untitled = m_projectPath.isEmpty();
        QMessageBox box(QMessageBox::Warning, tr("Unsaved Changes"),
                        untitled ? tr("Your work on %1 (program, fusion plan, runs or settings) is not saved.").arg(name)
                                 : tr("The project %1 has unsaved changes (program, fusion plan, runs or settings).").arg(name),
                        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, m_window);
        box.setInformativeText(untitled ? tr("Save it as a project before going on?") : tr("Save them before going on?"));
        box.setDefaultButton(QMessageBox::Save);
        switch (box.exec()) {
        case QMessageBox::Save: return UnsavedChoice::Save;
        case QMessageBox::Discard: return UnsavedChoice::Discard;
        default: return UnsavedChoice::Cancel;
        }
    };
    m_savePathPrompt = [this](const QString& suggested) {
        return QFileDialog::getSaveFileName(m_window, tr("Save Project"), suggested,
                                            tr("Tessera projects (*.tessera);;All files (*)"));
    };
    m_recoverPrompt = [this](const QString& original, const QString& savedAt) {
        const QString what = original.isEmpty() ? tr("an unsaved project") : QFileInfo(original).fileName();
        return QMessageBox::question(m_window, tr("Recover Project"),
                                     tr("Tessera did not exit cleanly. An autosave of %1 from %2 was found.\n\n"
                                        "Recover it? (No deletes the autosave.)")
                                         .arg(what, savedAt),
                                     QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes) == QMessageBox::Yes;
    };
    m_programText = [doc] { return doc->programText(); };
    m_inform = [this](const QString& title, const QString& text) {
        QMessageBox::information(m_window, title, text);
    };

    connect(doc, &Document::modelChanged, this, &ProjectController::onModelShown);
    connect(doc, &Document::loadFailed, this, &ProjectController::onLoadFailed);
    connect(doc, &Document::runFinished, this, &ProjectController::onRunFinished);
    connect(doc, &Document::targetChanged, this, &ProjectController::updateTitle);
    connect(doc, &Document::runOptionsChanged, this, &ProjectController::updateTitle);
    connect(doc->undoStack(), &QUndoStack::cleanChanged, this, &ProjectController::updateTitle);
    connect(doc->plans(), &PlanSession::planChanged, this, &ProjectController::updateTitle);
    // A saved DSL project holds the program text: edits of it are the project's changes.
    connect(doc, &Document::programEdited, this, &ProjectController::updateTitle);
    window->installEventFilter(this);

    m_autosave = new QTimer(this);
    m_autosave->setInterval(kAutosaveMs);
    connect(m_autosave, &QTimer::timeout, this, [this] { autosaveNow(); });
    m_autosave->start();
}

ProjectController::~ProjectController() = default;

bool ProjectController::isModified() const
{
    return m_dirty || (m_plans && !m_plans->undoStack()->isClean()) || settingsChanged() || programChanged();
}

bool ProjectController::programChanged() const
{
    if (m_projectPath.isEmpty() || m_applying || m_project.source.kind != project::SourceKind::Dsl ||
        m_project.source.programText.empty() || !m_programText)
        return false;
    const QString text = m_programText();
    return !text.isEmpty() && text != fromStd(m_project.source.programText);
}

bool ProjectController::targetIsSaved() const
{
    const QString current = m_doc->currentTarget().id;
    if (!m_doc->targetsProbed() || current == QLatin1String("cuda-probing"))
        return true;
    // A target this machine lacks resolves as selectTarget resolves it (cuda:1 -> the first
    // CUDA entry or compile only): showing that is not a change.
    const std::vector<RunTarget>& targets = m_doc->targets();
    const int saved = targetIndexFor(targets, fromStd(m_project.target));
    return saved >= 0 && saved < static_cast<int>(targets.size()) && targets[static_cast<std::size_t>(saved)].id == current;
}

bool ProjectController::settingsChanged() const
{
    if (m_projectPath.isEmpty() || m_applying)
        return false;
    return m_doc->check() != m_project.options.check ||
           m_doc->fallbackReference() != m_project.options.fallbackReference || !targetIsSaved();
}

project::Project ProjectController::currentProject() const
{
    project::Project p = m_project;
    if (!p.source.path.empty()) {
        const std::string hash = project::hashFile(p.source.path);
        if (!hash.empty())
            p.source.contentHash = hash;
    }
    if (p.source.kind == project::SourceKind::Dsl) {
        if (m_programText) {
            p.source.programText = m_programText().toStdString();
        } else {
            QFile f(fromStd(p.source.path));
            if (f.open(QIODevice::ReadOnly))
                p.source.programText = f.readAll().toStdString();
        }
    }
    const PlanSession* plans = m_doc->plans();
    if (plans->ready())
        p.plan = plans->plan();
    p.planner = plans->planner().toStdString();
    // Hardware the user did not choose is the target's: stored as none, so the project follows
    // its target (in the window and in `tessera-cli project run`).
    const target::GpuProfile& hw = plans->hardware();
    p.hardware.name = plans->hardwareChosen() ? hw.name : std::string();
    p.hardware.profileJson =
        !plans->hardwareChosen() || namedProfile(hw.name) ? std::string() : target::gpuProfileToJson(hw);
    const QString target = m_doc->currentTarget().id;
    if (!targetIsSaved() && !target.isEmpty())
        p.target = target.toStdString();
    p.options.check = m_doc->check();
    p.options.fallbackReference = m_doc->fallbackReference();
    // The window's runs use the Preferences' thread count: the project keeps it so that
    // `tessera-cli project run` reproduces them with the same threads.
    p.options.threads = AppSettings::load().effectiveThreads();
    const QString grid = m_doc->mappingGrid().trimmed();
    if (!grid.isEmpty()) {
        // The dock previews one mapping at a time: the last one shown is what is kept.
        p.mappings = {project::MappingEdit{"", grid.toStdString(),
                                           m_doc->mappingBlock().trimmed().toStdString()}};
    }
    p.schedules = m_doc->schedules()->projectSchedules();
    return p;
}

bool ProjectController::interceptOpen(const QString& path)
{
    if (isProjectFile(path)) {
        openProject(path);
        return false;
    }
    if (!maybeSave())
        return false;
    return true;
}

bool ProjectController::maybeSave()
{
    if (!isModified())
        return true;
    const QString name = !m_projectPath.isEmpty() ? QFileInfo(m_projectPath).fileName()
                                                  : QFileInfo(m_doc->path()).fileName();
    switch (m_unsavedPrompt ? m_unsavedPrompt(name) : UnsavedChoice::Cancel) {
    case UnsavedChoice::Save: return save();
    case UnsavedChoice::Discard:
        // The changes are given up: an autosave of them must not come back as a recovery.
        removeAutosave();
        return true;
    case UnsavedChoice::Cancel: break;
    }
    return false;
}

bool ProjectController::openProject(const QString& path)
{
    if (!maybeSave())
        return false;
    support::Expected<project::LoadedProject> lp = project::loadProject(path.toStdString());
    const QString name = QFileInfo(path).fileName();
    if (!lp.ok()) {
        QStringList lines;
        for (const support::Diagnostic& d : lp.diagnostics().items()) {
            if (d.severity == support::Severity::Error)
                lines << fromStd(d.format());
        }
        reportError(tr("Could not open %1").arg(name), lines);
        return false;
    }
    const project::Project& p = lp->project;
    const bool hasText = p.source.kind == project::SourceKind::Dsl && !p.source.programText.empty();
    if (lp->sourceMissing) {
        QStringList lines;
        lines << tr("%1: the project's source '%2' was not found (moved or deleted?)").arg(path, fromStd(p.source.path));
        if (hasText)
            lines << tr("The program's text is saved in the project: tessera-cli project show %1 --json").arg(path);
        reportError(tr("Could not open %1").arg(name), lines);
        return false;
    }
    // The plan comes back through the plan session, checked against the model like a saved plan.
    PlanState state;
    if (p.plan)
        state.plan = *p.plan;
    state.planner = knownPlanner(p.planner) ? fromStd(p.planner) : m_doc->plans()->planner();
    support::Expected<target::GpuProfile> hw = project::projectHardware(p);
    state.hardwareChosen = hw.ok() && !hw->name.empty();
    state.hardware = state.hardwareChosen ? hw.value() : m_doc->plans()->targetHardware();
    if (!hw.ok())
        lp.diagnostics().append(hw.diagnostics());
    m_doc->plans()->setInitialState(state);
    m_pendingState = state;
    m_pendingWarnings = lp.diagnostics();
    m_pendingSource = fromStd(p.source.path);
    m_pending = std::move(lp.value());
    m_pending->path = QFileInfo(path).absoluteFilePath().toStdString();
    m_doc->loader()->load(m_pendingSource);
    return true;
}

void ProjectController::onModelShown(const QString& path)
{
    if (m_pending && samePath(path, m_pendingSource)) {
        applyPending();
        return;
    }
    m_pending.reset();
    m_recoveredPath.reset();
    m_doc->setProgramHeldByProject(QString());
    // Any other model or program: a new, untitled project.
    support::Expected<project::Project> fresh = project::newProject(path.toStdString());
    m_project = fresh.ok() ? fresh.value() : project::Project{};
    m_projectPath.clear();
    m_readOnly = false;
    m_dirty = false;
    m_saveAction->setEnabled(true);
    updateTitle();
}

void ProjectController::onLoadFailed(const QString&)
{
    if (!m_pending)
        return;
    // The project's source did not load: the model (and project) on screen stay.
    m_pending.reset();
    m_recoveredPath.reset();
    m_doc->plans()->setInitialState(std::nullopt);
}

void ProjectController::applyPending()
{
    m_applying = true;
    project::LoadedProject lp = std::move(*m_pending);
    m_pending.reset();
    m_project = lp.project;
    m_projectPath = fromStd(lp.path);
    m_readOnly = lp.readOnly;
    m_doc->selectTarget(fromStd(m_project.target));
    m_doc->setCheck(m_project.options.check);
    m_doc->setFallbackReference(m_project.options.fallbackReference);
    if (!m_project.mappings.empty()) {
        const project::MappingEdit& m = m_project.mappings.back();
        m_doc->setMapping(fromStd(m.grid), fromStd(m.block));
    }
    m_doc->schedules()->restore(m_project.schedules);
    showLastRun();
    // A DSL project whose saved text differs from its file (edits saved with the project, not in
    // the .tsr): the Program dock gets the project's text, as unsaved edits of the file; its
    // re-parse sets the model again, so the plan is restored once more.
    if (m_project.source.kind == project::SourceKind::Dsl && !m_project.source.programText.empty()) {
        const QString text = fromStd(m_project.source.programText);
        if (m_doc->programText() != text) {
            m_doc->plans()->setInitialState(m_pendingState);
            m_doc->replaceProgramText(text);
        }
        // The project holds this text: it differing from the .tsr is no unsaved change.
        m_doc->setProgramHeldByProject(text);
    } else {
        m_doc->setProgramHeldByProject(QString());
    }
    m_doc->appendProblems(Document::ProblemSource::Load, m_pendingWarnings);
    m_pendingWarnings = {};
    m_dirty = false;
    if (m_recoveredPath) {
        // A recovered autosave is the project it belonged to, with changes not yet saved there.
        m_projectPath = *m_recoveredPath;
        m_recoveredPath.reset();
        m_readOnly = false;
        m_dirty = true;
    } else {
        m_doc->noteRecentFile(m_projectPath);
    }
    m_saveAction->setEnabled(!m_readOnly);
    m_saveAction->setToolTip(m_readOnly ? tr("The project is of a newer version: use Save Project As") : QString());
    m_applying = false;
    updateTitle();
    if (m_readOnly && m_inform)
        m_inform(tr("Read-Only Project"),
                 tr("%1 was written by a newer Tessera (project version %2; this one writes version %3).\n\n"
                    "It is open read-only: Save Project is disabled. Save Project As writes a copy in version %3, "
                    "without what the newer version added.")
                     .arg(QFileInfo(m_projectPath).fileName())
                     .arg(lp.fileVersion)
                     .arg(project::kProjectVersion));
    emit projectOpened(m_projectPath);
}

void ProjectController::showLastRun()
{
    // The stored runs seed the Timings history chart (the newest RunHistory::kCapacity).
    std::vector<views::TimingHistoryRun> history;
    const std::size_t first = m_project.runs.size() > RunHistory::kCapacity ? m_project.runs.size() - RunHistory::kCapacity : 0;
    for (std::size_t i = first; i < m_project.runs.size(); ++i)
        history.push_back(RunHistory::fromRecord(m_project.runs[i]));
    m_doc->seedRunHistory(history);
    const project::RunRecord* r = project::lastRun(m_project, m_project.target);
    if (r == nullptr)
        r = project::lastRun(m_project);
    // The views show it (Timings, the plan table's Measured column, the roofline) until a run.
    m_doc->showRecord(r != nullptr ? std::optional<project::RunRecord>(*r) : std::nullopt);
}

void ProjectController::onRunFinished(bool ok)
{
    if (!ok)
        return;
    const RunOutcome& out = m_doc->runs()->lastOutcome();
    if (!out.report || !out.compiled)
        return;
    m_project.runs.push_back(
        project::makeRunRecord(*out.report, out.compiled->plan, m_doc->currentTarget().id.toStdString()));
    markDirty();
}

void ProjectController::markDirty()
{
    if (m_applying || m_projectPath.isEmpty())
        return;
    m_dirty = true;
    updateTitle();
}

bool ProjectController::save()
{
    if (m_projectPath.isEmpty() || m_readOnly)
        return saveAs();
    return saveAs(m_projectPath);
}

bool ProjectController::saveAs(const QString& given)
{
    if (!m_doc->model()) {
        reportError(tr("Nothing to Save"), {tr("Open a model or program first (File > Open)")});
        return false;
    }
    QString path = given;
    if (path.isEmpty()) {
        QString suggested = m_projectPath;
        if (suggested.isEmpty()) {
            const QFileInfo model(m_doc->path());
            // Beside the model, unless that is the shipped samples folder (or not writable): a
            // project is the user's work, not a change to the samples.
            QString dir = model.absolutePath();
            const QString samples = samplesDirectory();
            if (!QFileInfo(dir).isWritable() ||
                (!samples.isEmpty() && QFileInfo(dir).canonicalFilePath() == QFileInfo(samples).canonicalFilePath())) {
                const QString docs = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
                if (!docs.isEmpty())
                    dir = docs;
            }
            suggested = dir + QLatin1Char('/') + model.completeBaseName() + QLatin1String(project::kProjectExtension);
        }
        path = m_savePathPrompt ? m_savePathPrompt(suggested) : QString();
        if (path.isEmpty())
            return false;
        if (!isProjectFile(path))
            path += QLatin1String(project::kProjectExtension);
    }
    path = QFileInfo(path).absoluteFilePath();
    const project::Project p = currentProject();
    support::Expected<std::string> saved = project::saveProject(p, path.toStdString());
    if (!saved.ok()) {
        QStringList lines;
        for (const support::Diagnostic& d : saved.diagnostics().items())
            lines << fromStd(d.format());
        reportError(tr("Could not save %1").arg(QFileInfo(path).fileName()), lines);
        return false;
    }
    m_project = p;
    m_projectPath = path;
    m_readOnly = false;
    m_dirty = false;
    m_saveAction->setEnabled(true);
    m_saveAction->setToolTip(QString());
    m_doc->plans()->undoStack()->setClean();
    if (p.source.kind == project::SourceKind::Dsl && !p.source.programText.empty())
        m_doc->setProgramHeldByProject(fromStd(p.source.programText));
    removeAutosave();
    m_doc->noteRecentFile(path);
    updateTitle();
    m_doc->showMessage(tr("Saved project %1").arg(path), 5000);
    emit projectSaved(path);
    return true;
}

void ProjectController::updateTitle()
{
    if (!m_plans)
        return;  // the window is being destroyed
    QString name;
    if (!m_projectPath.isEmpty())
        name = QFileInfo(m_projectPath).fileName();
    else if (m_doc->model())
        name = QFileInfo(m_doc->path()).fileName();
    if (name.isEmpty()) {
        m_window->setWindowTitle(QStringLiteral("Tessera"));
        m_window->setWindowModified(false);
        return;
    }
    m_window->setWindowTitle(QStringLiteral("%1[*]%2 \u2014 Tessera").arg(name, m_readOnly ? tr(" (read-only)") : QString()));
    const bool modified = isModified();
    if (modified != m_window->isWindowModified()) {
        m_window->setWindowModified(modified);
        emit modifiedChanged(modified);
    }
}

QString ProjectController::autosaveDir()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/autosave");
}

QString ProjectController::autosavePath() const
{
    return autosaveDir() + QStringLiteral("/autosave-%1").arg(QCoreApplication::applicationPid()) +
           QLatin1String(project::kProjectExtension);
}

int ProjectController::autosaveInterval() const { return m_autosave->interval(); }

void ProjectController::setAutosaveInterval(int ms) { m_autosave->setInterval(ms); }

QString ProjectController::autosaveNow()
{
    if (!isModified() || !m_doc->model())
        return {};
    QDir().mkpath(autosaveDir());
    const QString file = autosavePath();
    if (!project::saveProject(currentProject(), file.toStdString()).ok())
        return {};
    QJsonObject meta;
    meta.insert(QStringLiteral("project"), m_projectPath);
    meta.insert(QStringLiteral("pid"), QCoreApplication::applicationPid());
    QSaveFile out(metaPathFor(file));
    if (out.open(QIODevice::WriteOnly)) {
        out.write(QJsonDocument(meta).toJson());
        out.commit();
    }
    return file;
}

void ProjectController::removeAutosave()
{
    const QString file = autosavePath();
    QFile::remove(file);
    QFile::remove(metaPathFor(file));
}

bool ProjectController::checkForRecovery()
{
    QDir dir(autosaveDir());
    const QFileInfoList files = dir.entryInfoList({QStringLiteral("autosave-*") + QLatin1String(project::kProjectExtension)},
                                                  QDir::Files, QDir::Time);
    QFileInfoList stale;
    for (const QFileInfo& f : files) {
        const qint64 pid = autosavePid(f.fileName());
        // Another instance that is still running owns its autosave.
        if (pid == QCoreApplication::applicationPid() || processAlive(pid))
            continue;
        stale << f;
    }
    if (stale.isEmpty())
        return false;
    const QFileInfo newest = stale.first();
    QFile metaFile(metaPathFor(newest.absoluteFilePath()));
    QString original;
    if (metaFile.open(QIODevice::ReadOnly))
        original = QJsonDocument::fromJson(metaFile.readAll()).object().value(QStringLiteral("project")).toString();
    const bool recover =
        m_recoverPrompt && m_recoverPrompt(original, newest.lastModified().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    bool recovered = false;
    if (recover) {
        m_recoveredPath = original;
        // Nothing on screen is modified yet at start-up, so no prompt comes in between.
        recovered = openProject(newest.absoluteFilePath());
        if (!recovered)
            m_recoveredPath.reset();
    }
    // Read (or declined): the old autosaves go; this instance writes its own from now on.
    for (const QFileInfo& f : stale) {
        QFile::remove(f.absoluteFilePath());
        QFile::remove(metaPathFor(f.absoluteFilePath()));
    }
    return recovered;
}

bool ProjectController::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_window && event->type() == QEvent::Close) {
        if (!maybeSave()) {
            event->ignore();
            return true;
        }
        removeAutosave();
    }
    return QObject::eventFilter(watched, event);
}

void ProjectController::reportError(const QString& title, const QStringList& lines)
{
    m_doc->reportError(title, lines);
}

}  // namespace tessera::app
