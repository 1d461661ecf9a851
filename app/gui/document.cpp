#include "app/gui/document.h"

#include <QSettings>
#include <QUndoStack>

#include "app/gui/app_settings.h"
#include "app/gui/plan_session.h"
#include "app/gui/run_session.h"
#include "app/gui/schedule_controller.h"

namespace tessera::app {
namespace {

const char* const kTargetKey = "run/target";

}  // namespace

Document::Document(Session::MeasureFn measure, QObject* parent)
    : QObject(parent), m_loader(new Session(std::move(measure), this)), m_runs(new RunSession(this)),
      m_plans(new PlanSession(this))
{
    m_plans->setObjectName(QStringLiteral("planSession"));
    connect(m_runs, &RunSession::devicesProbed, this, &Document::onDevicesProbed);
    connect(m_runs, &RunSession::finished, this, [this](quint64, bool ok) {
        const RunOutcome& out = m_runs->lastOutcome();
        // The views show this run's results now (or cleared them), not a project's stored run.
        m_shownRecord.reset();
        // A run of a model that is no longer the document's (the load finished after the run
        // was queued) changes nothing.
        if (out.cancelled || out.model != m_model) {
            emit runFinished(false);
            return;
        }
        m_runProblems = out.diagnostics;
        emit problemsChanged();
        emit runFinished(ok);
    });
    connect(m_plans, &PlanSession::planChanged, this, &Document::problemsChanged);

    // Until the probe answers only the CPU is selectable; a stored CUDA choice waits for it.
    m_targets = runTargets(DeviceProbe{});
    const QString stored = AppSettings::load().startupTargetId(QSettings().value(QLatin1String(kTargetKey)).toString());
    if (stored.startsWith(QLatin1String("cuda")))
        m_pendingTarget = stored;
    m_target = 0;
    m_runs->probeDevices();
}

Document::~Document() = default;

void Document::attachSchedules(ScheduleController* schedules)
{
    m_schedules = schedules;
    if (m_model)
        m_schedules->setModel(m_model, m_path);
}

QUndoStack* Document::undoStack() const { return m_plans->undoStack(); }

void Document::setModel(std::shared_ptr<const ir::Model> model, const QString& path, support::DiagnosticList loadDiagnostics)
{
    // A new model: results of the old one no longer apply, and a run of it is moot.
    if (m_runs->isBusy())
        m_runs->cancel();
    if (m_path != path) {
        // Another file: the inputs chosen for the last one do not apply.
        m_inputFiles = {};
        m_inputData = {};
    }
    m_model = std::move(model);
    m_path = path;
    m_loadProblems = std::move(loadDiagnostics);
    m_runProblems = {};
    m_history.clear();
    m_shownRecord.reset();
    m_plans->setModel(m_model, m_path);
    if (m_schedules != nullptr)
        m_schedules->setModel(m_model, m_path);
    emit problemsChanged();
    emit historyChanged();
    emit modelChanged(m_path);
}

void Document::updateModel(std::shared_ptr<const ir::Model> model, const QString& path)
{
    if (m_runs->isBusy())
        m_runs->cancel();
    m_model = std::move(model);
    m_path = path;
    m_runProblems = {};
    m_plans->setModel(m_model, m_path);
    if (m_schedules != nullptr)
        m_schedules->setModel(m_model, m_path);
    emit problemsChanged();
    emit modelUpdated();
}

void Document::setLoadFailed(const QString& path, support::DiagnosticList diagnostics)
{
    // The model on screen stays; the failed file's problems are shown with it.
    m_loadProblems = std::move(diagnostics);
    emit problemsChanged();
    emit loadFailed(path);
}

void Document::setCheck(bool on)
{
    if (on == m_check)
        return;
    m_check = on;
    emit runOptionsChanged();
}

void Document::setFallbackReference(bool on)
{
    if (on == m_fallback)
        return;
    m_fallback = on;
    emit runOptionsChanged();
}

RunTarget Document::currentTarget() const
{
    return m_target >= 0 && m_target < static_cast<int>(m_targets.size()) ? m_targets[static_cast<std::size_t>(m_target)]
                                                                          : RunTarget{};
}

bool Document::targetsProbed() const { return m_runs->deviceProbe().answered; }

void Document::setCurrentTargetIndex(int index, bool remember)
{
    if (index < 0 || index >= static_cast<int>(m_targets.size()) || !m_targets[static_cast<std::size_t>(index)].selectable())
        index = 0;
    m_target = index;
    if (remember) {
        QSettings().setValue(QLatin1String(kTargetKey), m_targets[static_cast<std::size_t>(index)].id);
        m_pendingTarget.clear();
    }
    emit targetChanged();
}

bool Document::selectTarget(const QString& id, bool remember)
{
    const bool cuda = id == QLatin1String("cuda") || id == QLatin1String("cuda-compile") ||
                      (id.startsWith(QLatin1String("cuda:")) && id.mid(5).toInt() >= 0 && !id.mid(5).isEmpty());
    if (!cuda && id != QLatin1String("cpu"))
        return false;
    if (cuda && !targetsProbed()) {
        m_pendingTarget = id;
        if (remember)
            QSettings().setValue(QLatin1String(kTargetKey), id);
        return true;
    }
    m_pendingTarget.clear();
    setCurrentTargetIndex(targetIndexFor(m_targets, id), remember);
    return true;
}

void Document::onDevicesProbed()
{
    // Keep the selection the user made while the probe ran (the CPU), unless a CUDA target is
    // waiting for the answer.
    const QString wanted = m_pendingTarget.isEmpty() ? currentTarget().id : m_pendingTarget;
    m_pendingTarget.clear();
    m_targets = runTargets(m_runs->deviceProbe());
    setCurrentTargetIndex(targetIndexFor(m_targets, wanted), false);
}

void Document::setRunInputs(RunInputFiles files, RunInputData data)
{
    m_inputFiles = std::move(files);
    m_inputData = std::move(data);
}

std::vector<std::string> Document::setRunInputFiles(const RunInputFiles& files)
{
    if (!m_model)
        return {"no model is open"};
    auto [data, errors] = readRunInputs(m_model->graph, files);
    if (!errors.empty())
        return errors;
    setRunInputs(files, std::move(data));
    return {};
}

RunSettings Document::runSettings() const
{
    RunSettings settings;
    settings.run.check = m_check;
    settings.compile.fallbackReference = m_fallback;
    applyTarget(currentTarget(), settings);
    // The plan on screen (names of the specialised graph, which compileModel specialises alike).
    // Before the plan is ready the compile makes the same first plan itself: a program's fuse
    // statements (no planner given), else the planner's.
    if (m_plans->ready())
        settings.compile.plan = m_plans->plan();
    else if (!m_model || m_model->program.fusions.empty())
        settings.compile.planner = m_plans->planner().toStdString();
    settings.compile.hardware = m_plans->hardware();
    if (m_schedules != nullptr)
        settings.compile.schedules = m_schedules->schedules();  // the Task Mapping dock's applied mappings
    // Preferences (threads, compiler, flags, cache), read now so a change reaches this run.
    AppSettings::load().applyTo(settings);
    // Run > Inputs...: fed inputs and the outputs' expected tensors.
    settings.givenInputs = m_inputData.inputs;
    settings.run.expectedOutputs = m_inputData.expected;
    return settings;
}

void Document::setMapping(const QString& grid, const QString& block)
{
    if (grid == m_mappingGrid && block == m_mappingBlock)
        return;
    m_mappingGrid = grid;
    m_mappingBlock = block;
    emit mappingChanged();
}

void Document::replaceProgramText(const QString& text) { emit programTextReplaced(text); }

void Document::setProgramHeldByProject(const QString& text)
{
    m_programHeld = text;
    emit programHeldChanged();
}

void Document::addToHistory(const pipeline::RunReport& report, const RunSettings& settings, const std::string& time)
{
    m_history.add(report, settings, time);
    emit historyChanged();
}

void Document::seedRunHistory(const std::vector<views::TimingHistoryRun>& runs)
{
    m_history.clear();
    for (const views::TimingHistoryRun& r : runs)
        m_history.add(r);
    emit historyChanged();
}

void Document::showRecord(std::optional<project::RunRecord> record)
{
    m_shownRecord = std::move(record);
    if (m_shownRecord)
        emit recordShown();
}

void Document::setProblems(ProblemSource source, support::DiagnosticList diagnostics)
{
    switch (source) {
    case ProblemSource::Load: m_loadProblems = std::move(diagnostics); break;
    case ProblemSource::Run: m_runProblems = std::move(diagnostics); break;
    case ProblemSource::Roofs: m_roofProblems = std::move(diagnostics); break;
    }
    emit problemsChanged();
}

void Document::appendProblems(ProblemSource source, const support::DiagnosticList& diagnostics)
{
    switch (source) {
    case ProblemSource::Load: m_loadProblems.append(diagnostics); break;
    case ProblemSource::Run: m_runProblems.append(diagnostics); break;
    case ProblemSource::Roofs: m_roofProblems.append(diagnostics); break;
    }
    emit problemsChanged();
}

support::DiagnosticList Document::problems() const
{
    support::DiagnosticList all = m_loadProblems;
    all.append(m_runProblems);
    all.append(m_plans->diagnostics());
    if (m_schedules != nullptr)
        all.append(m_schedules->diagnostics());
    all.append(m_roofProblems);
    return all;
}

void Document::reportError(const QString& title, const QStringList& lines) const
{
    if (m_reportError)
        m_reportError(title, lines);
}

}  // namespace tessera::app
