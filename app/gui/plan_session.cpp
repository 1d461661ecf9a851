#include "app/gui/plan_session.h"

#include <algorithm>
#include <set>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QSettings>
#include <QStandardPaths>
#include <QUndoCommand>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>

#include "core/ir/op_registry.h"
#include "core/pipeline/engine.h"
#include "core/pipeline/host_profile.h"
#include "core/schedule/fusion_edit.h"
#include "core/schedule/planners.h"

namespace tessera::app {
namespace {

const char* const kPlannerKey = "fusion/planner";
// Only a profile the user picked is remembered (an older key stored every default, "h200" even
// for CPU runs; it is ignored).
const char* const kHardwareKey = "fusion/hardwareChoice";
const char* const kCustomKey = "fusion/customProfiles";
const char* const kFileFormat = "tessera-gui-plan";

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

bool knownPlanner(const QString& p)
{
    return p == QLatin1String("none") || p == QLatin1String("hidet") || p == QLatin1String("fuseplanner");
}

std::optional<target::GpuProfile> profileNamed(const std::vector<target::GpuProfile>& profiles, const QString& name)
{
    for (const target::GpuProfile& p : profiles) {
        if (fromStd(p.name) == name)
            return p;
    }
    if (name == QLatin1String("host"))
        return pipeline::hostProfile();
    return std::nullopt;
}

}  // namespace

/// One undoable change: the whole state before and after.
class PlanCommand : public QUndoCommand {
public:
    PlanCommand(PlanSession* session, PlanState before, PlanState after, const QString& text)
        : QUndoCommand(text), m_session(session), m_before(std::move(before)), m_after(std::move(after))
    {
    }
    void undo() override { m_session->applyState(m_before, true); }
    void redo() override { m_session->applyState(m_after, true); }

private:
    PlanSession* m_session;
    PlanState m_before, m_after;
};

struct PlanSession::Job {
    bool initial = false;
    bool programPlan = true;  ///< initial: a program's fuse statements are the plan (see startJob)
    QString text;
    QString planner;
    target::GpuProfile hw;
    bool hwChosen = false;
    std::shared_ptr<const ir::Model> model;
    std::shared_ptr<const pipeline::PreparedModel> prepared;
    std::shared_ptr<const ir::Model> graph;  ///< prepared->model
    QByteArray savedText;  ///< the plan file's contents (initial jobs)
    bool ok = false;
    bool fromFile = false;
    PlanState result;
    QString error;
    QString dropped;  ///< why the saved plan was not used, or which of a program's fuse statements were repaired
};

PlanSession::PlanSession(QObject* parent) : QObject(parent), m_undo(new QUndoStack(this))
{
    m_pool.setMaxThreadCount(1);
    const QStringList custom = QSettings().value(QLatin1String(kCustomKey)).toStringList();
    for (const QString& json : custom) {
        support::Expected<target::GpuProfile> p = target::gpuProfileFromJson(json.toStdString(), "settings");
        if (p.ok())
            m_custom.push_back(p.value());
    }
    m_state.planner = QSettings().value(QLatin1String(kPlannerKey), QStringLiteral("none")).toString();
    if (!knownPlanner(m_state.planner))
        m_state.planner = QStringLiteral("none");
    m_targetHardware = defaultHardwareFor(false);
    const std::optional<target::GpuProfile> chosen =
        profileNamed(profiles(), QSettings().value(QLatin1String(kHardwareKey)).toString());
    m_state.hardware = chosen ? *chosen : m_targetHardware;
    m_state.hardwareChosen = chosen.has_value();
}

target::GpuProfile PlanSession::defaultHardwareFor(bool cuda)
{
    if (!cuda)
        return pipeline::hostProfile();
    support::Expected<target::GpuProfile> h200 = target::findGpuProfile("h200");
    return h200.ok() ? h200.value() : target::builtinGpuProfiles().front();
}

void PlanSession::setTargetHardware(const target::GpuProfile& hardware)
{
    m_targetHardware = hardware;
    if (m_state.hardwareChosen || m_state.hardware.name == hardware.name)
        return;
    if (!ready()) {
        // Jobs from now on plan for it; one in flight is reconciled when it returns (onJobDone).
        m_state.hardware = hardware;
        emit planChanged();
        return;
    }
    // Not an edit of the user's: no undo step (and an untitled model does not become modified).
    // A plan FusePlanner made as it is gets made again for the new hardware; any other plan (none,
    // hidet, edited by hand) keeps its groups.
    if (m_state.planner == QLatin1String("fuseplanner") && m_state.plan.planner == "fuseplanner") {
        startJob(m_state.planner, hardware, false, QString(), true, false);
        return;
    }
    PlanState after = m_state;
    after.hardware = hardware;
    applyState(after, true);
}

PlanSession::~PlanSession()
{
    ++m_generation;
    m_pool.clear();
    m_pool.waitForDone();
}

std::vector<target::GpuProfile> PlanSession::profiles() const
{
    std::vector<target::GpuProfile> all = target::builtinGpuProfiles();
    // This CPU in FusePlanner's terms (what `--hw host`, the CLI's default for --target cpu, plans for).
    all.push_back(pipeline::hostProfile());
    all.insert(all.end(), m_custom.begin(), m_custom.end());
    return all;
}

QString PlanSession::planFilePath(const QString& modelPath)
{
    const QString abs = QFileInfo(modelPath).absoluteFilePath();
    const QString key = QString::fromLatin1(QCryptographicHash::hash(abs.toUtf8(), QCryptographicHash::Sha1).toHex());
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/fusion-plans/") + key +
           QStringLiteral(".json");
}

void PlanSession::clear()
{
    ++m_generation;
    m_undo->clear();
    m_model.reset();
    m_graph.reset();
    m_prepared.reset();
    m_path.clear();
    m_state.plan = {};
    m_violations.clear();
    m_diagnostics = {};
    m_lastRefusal.clear();
    m_loadedFromFile = false;
    setBusy(false);
    emit planChanged();
}

void PlanSession::setModel(std::shared_ptr<const ir::Model> model, const QString& path)
{
    clear();
    if (!model)
        return;
    m_model = std::move(model);
    m_path = path;
    startJob(m_state.planner, m_state.hardware, m_state.hardwareChosen, QString(), true);
}

void PlanSession::startJob(const QString& planner, const target::GpuProfile& hw, bool hwChosen, const QString& text,
                           bool initial, bool readSaved, bool programPlan)
{
    if (!m_model)
        return;
    const quint64 gen = ++m_generation;
    auto job = std::make_shared<Job>();
    job->initial = initial;
    job->programPlan = programPlan;
    job->text = text;
    job->planner = planner;
    job->hw = hw;
    job->hwChosen = hwChosen;
    job->model = m_model;
    job->prepared = m_prepared;
    job->graph = m_graph;
    if (initial && m_initialState) {
        // A state without a plan names the planner and hardware to plan with (a project made
        // by `tessera-cli project new --plan hidet`).
        if (m_initialState->plan.groups.empty()) {
            job->planner = m_initialState->planner;
            job->hw = m_initialState->hardware;
            job->hwChosen = m_initialState->hardwareChosen;
        } else {
            job->savedText = stateJson(*m_initialState, m_path);
        }
        m_initialState.reset();
    } else if (initial && readSaved) {
        QFile f(planFilePath(m_path));
        if (f.open(QIODevice::ReadOnly))
            job->savedText = f.readAll();
    }
    setBusy(true);
    auto* watcher = new QFutureWatcher<std::shared_ptr<Job>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, gen] {
        std::shared_ptr<Job> done = watcher->result();
        watcher->deleteLater();
        onJobDone(gen, std::move(done));
    });
    watcher->setFuture(QtConcurrent::run(&m_pool, [job]() {
        if (!job->graph) {
            // What compileModel plans on: shapes bound from the default inputs, constants folded.
            support::Expected<std::shared_ptr<const pipeline::PreparedModel>> prepared =
                pipeline::prepare(job->model, {});
            if (!prepared.ok()) {
                job->error = QStringLiteral("cannot plan: ") + fromStd(prepared.diagnostics().formatAll()).trimmed();
                return job;
            }
            job->prepared = prepared.value();
            job->graph = std::shared_ptr<const ir::Model>(job->prepared, &job->prepared->model);
        }
        const ir::Graph& g = job->graph->graph;
        if (!job->savedText.isEmpty()) {
            const QJsonObject o = QJsonDocument::fromJson(job->savedText).object();
            const QByteArray planText = QJsonDocument(o.value(QStringLiteral("plan")).toObject()).toJson();
            const QByteArray hwText = QJsonDocument(o.value(QStringLiteral("hardware")).toObject()).toJson();
            support::Expected<schedule::FusionPlan> plan = schedule::planFromJson(planText.toStdString(), "saved plan");
            support::Expected<target::GpuProfile> hw = target::gpuProfileFromJson(hwText.toStdString(), "saved plan");
            if (o.value(QStringLiteral("format")).toString() != QLatin1String(kFileFormat) || !plan.ok() || !hw.ok()) {
                job->dropped = QStringLiteral("the saved fusion plan could not be read");
            } else {
                support::Expected<schedule::FusionPlan> norm = schedule::normalizePlan(g, plan.value());
                QString why = norm.ok() ? QString() : fromStd(norm.diagnostics().formatAll()).trimmed();
                if (norm.ok()) {
                    for (const schedule::FusionViolation& v : schedule::checkPlan(g, norm.value(), &hw.value())) {
                        if (v.rule == "coverage" || v.rule == "unknown-node" || v.rule == "cycle") {
                            why = fromStd(v.message);
                            break;
                        }
                    }
                }
                if (why.isEmpty()) {
                    job->result.plan = norm.value();
                    job->result.hardware = hw.value();
                    job->result.hardwareChosen = o.value(QStringLiteral("hardware_chosen")).toBool(false);
                    const QString p = o.value(QStringLiteral("planner")).toString();
                    job->result.planner = knownPlanner(p) ? p : job->planner;
                    job->fromFile = true;
                    job->ok = true;
                    return job;
                }
                job->dropped = QStringLiteral("the saved fusion plan no longer fits the model (%1)").arg(why);
            }
        }
        // The job's result: `plan` made for the job's planner and hardware.
        auto planned = [&job](schedule::FusionPlan plan) {
            job->result.plan = std::move(plan);
            job->result.planner = job->planner;
            job->result.hardware = job->hw;
            job->result.hardwareChosen = job->hwChosen;
            job->ok = true;
            return job;
        };
        if (job->initial && job->programPlan && !job->graph->program.fusions.empty()) {
            // A program's own fuse statements are its author's plan (as `tessera-cli run` uses
            // them): the first plan, whatever planner was last chosen; choosing one re-plans.
            pipeline::CompileOptions o;
            o.hardware = job->hw;
            support::DiagnosticList repairs;
            support::Expected<schedule::FusionPlan> plan = pipeline::resolvePlan(*job->graph, o, repairs);
            if (plan.ok()) {
                for (const support::Diagnostic& d : repairs.items())
                    job->dropped += (job->dropped.isEmpty() ? QString() : QStringLiteral("; ")) +
                                    fromStd(d.where.empty() ? d.message : d.where + ": " + d.message);
                return planned(std::move(plan.value()));
            }
        }
        support::Expected<schedule::FusionPlan> plan = schedule::makePlan(g, job->planner.toStdString(), job->hw);
        if (!plan.ok()) {
            job->error = fromStd(plan.diagnostics().formatAll()).trimmed();
            return job;
        }
        return planned(std::move(plan.value()));
    }));
}

void PlanSession::onJobDone(quint64 generation, std::shared_ptr<Job> job)
{
    if (generation != m_generation)
        return;
    setBusy(false);
    if (job->graph) {
        m_graph = job->graph;
        m_prepared = job->prepared;
    }
    if (!job->dropped.isEmpty()) {
        m_diagnostics.warning(m_path.toStdString(), "fusion plan", job->dropped.toStdString());
        emit warning(job->dropped);
    }
    if (!job->ok) {
        m_diagnostics.warning(m_path.toStdString(), "fusion plan", job->error.toStdString());
        emit warning(job->error);
        if (job->initial && m_graph) {
            // Without a plan the model still runs one kernel per node.
            PlanState none = m_state;
            none.plan = schedule::planNone(m_graph->graph);
            none.planner = QStringLiteral("none");
            applyState(none, false);
        }
        return;
    }
    if (job->initial) {
        PlanState result = job->result;
        if (!result.hardwareChosen && result.hardware.name != m_targetHardware.name) {
            // The target changed while this job ran, or a restored plan was made on other
            // hardware without the user choosing it: the hardware follows the target. A fresh
            // FusePlanner plan is redone for it; a restored plan keeps its groups.
            if (!job->fromFile && result.planner == QLatin1String("fuseplanner")) {
                startJob(result.planner, m_targetHardware, false, QString(), true, false);
                return;
            }
            result.hardware = m_targetHardware;
        }
        m_loadedFromFile = job->fromFile;
        applyState(result, false);
        return;
    }
    pushState(job->result, job->text);
}

void PlanSession::applyState(const PlanState& state, bool persist)
{
    // Whatever the planner was doing was for the state before this one.
    ++m_generation;
    setBusy(false);
    m_state = state;
    // A state whose hardware the user did not choose (undo back to one) has the target's now.
    if (!m_state.hardwareChosen)
        m_state.hardware = m_targetHardware;
    m_violations = m_graph ? schedule::checkPlan(m_graph->graph, m_state.plan, &m_state.hardware)
                           : std::vector<schedule::FusionViolation>{};
    QSettings().setValue(QLatin1String(kPlannerKey), m_state.planner);
    if (m_state.hardwareChosen)
        QSettings().setValue(QLatin1String(kHardwareKey), fromStd(m_state.hardware.name));
    else
        QSettings().remove(QLatin1String(kHardwareKey));
    if (persist)
        save();
    emit planChanged();
}

void PlanSession::pushState(PlanState after, const QString& text)
{
    m_lastRefusal.clear();
    m_undo->push(new PlanCommand(this, m_state, std::move(after), text));
}

void PlanSession::save() const
{
    if (m_path.isEmpty() || !m_graph)
        return;
    const QString file = planFilePath(m_path);
    QDir().mkpath(QFileInfo(file).absolutePath());
    QSaveFile out(file);
    if (out.open(QIODevice::WriteOnly)) {
        out.write(stateJson(m_state, m_path));
        out.commit();
    }
}

QByteArray PlanSession::stateJson(const PlanState& state, const QString& modelPath)
{
    QJsonObject o;
    o.insert(QStringLiteral("format"), QLatin1String(kFileFormat));
    o.insert(QStringLiteral("version"), 1);
    o.insert(QStringLiteral("model"), QFileInfo(modelPath).absoluteFilePath());
    o.insert(QStringLiteral("planner"), state.planner);
    o.insert(QStringLiteral("hardware"),
             QJsonDocument::fromJson(QByteArray::fromStdString(target::gpuProfileToJson(state.hardware))).object());
    o.insert(QStringLiteral("hardware_chosen"), state.hardwareChosen);
    o.insert(QStringLiteral("plan"),
             QJsonDocument::fromJson(QByteArray::fromStdString(schedule::planToJson(state.plan))).object());
    return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

void PlanSession::setBusy(bool busy)
{
    if (busy == m_busy)
        return;
    m_busy = busy;
    emit busyChanged(busy);
}

void PlanSession::refuse(const QString& node, const QString& message)
{
    m_lastRefusal = message;
    m_diagnostics.warning(m_path.toStdString(), node.isEmpty() ? std::string("fusion plan") : "node '" + node.toStdString() + "'",
                          "fusion refused: " + message.toStdString());
    emit editRefused(node, message);
}

support::Expected<schedule::FusionGroup> PlanSession::fusedGroupFor(const ir::Graph& g, const std::vector<std::string>& members,
                                                                     const target::GpuProfile& hw, const std::string& name)
{
    return schedule::fusedGroupFor(g, members, hw, name);
}

PlanSession::FuseOutcome PlanSession::tryFuse(const QStringList& nodes) const
{
    FuseOutcome out;
    const auto refused = [&out](const QString& node, const QString& message) {
        out.node = node;
        out.message = message;
        return out;
    };
    if (!ready()) {
        return refused(QString(), tr("no fusion plan yet: wait for the model to be planned"));
    }
    QStringList names = nodes;
    names.removeDuplicates();
    if (names.size() < 2) {
        return refused(names.value(0), tr("select two or more operators to fuse (Ctrl+click or Shift+drag)"));
    }
    const ir::Graph& g = m_graph->graph;
    const schedule::FusionPlan& old = m_state.plan;
    for (const QString& n : names) {
        if (g.findNode(n.toStdString()) == ir::kNoNode) {
            return refused(n, tr("%1 is folded into a constant before compiling: there is no kernel to fuse").arg(n));
        }
    }
    std::vector<std::string> list;
    for (const QString& n : names)
        list.push_back(n.toStdString());
    schedule::FuseAttempt a = schedule::fuseNodes(g, old, list, m_state.hardware, m_violations, schedule::freshGroupName(g, old));
    if (!a.ok)
        return refused(fromStd(a.node), fromStd(a.message));
    out.ok = true;
    out.plan = std::move(a.plan);
    out.group = a.group;
    return out;
}

bool PlanSession::fuse(const QStringList& nodes)
{
    FuseOutcome o = tryFuse(nodes);
    if (!o.ok) {
        refuse(o.node, o.message);
        return false;
    }
    PlanState after = m_state;
    after.plan = std::move(o.plan);
    pushState(std::move(after), tr("Fuse %1").arg(fromStd(o.group)));
    return true;
}

std::vector<schedule::EdgeReason> PlanSession::crossingEdgeReasons() const
{
    if (!ready())
        return {};
    return schedule::crossingEdgeReasons(m_graph->graph, m_state.plan, m_state.hardware);
}

std::map<std::string, std::string> PlanSession::plannerAdvice() const
{
    std::map<std::string, std::string> advice;
    if (!ready())
        return advice;
    const ir::Graph& g = m_graph->graph;
    std::vector<const schedule::FusionGroup*> chains;
    for (const schedule::FusionGroup& grp : m_state.plan.groups) {
        if (grp.kind == schedule::FusionKind::DwPw || grp.kind == schedule::FusionKind::PwDw ||
            grp.kind == schedule::FusionKind::PwPw)
            chains.push_back(&grp);
    }
    if (chains.empty())
        return advice;
    const std::string hardware = target::gpuProfileToJson(m_state.hardware);
    if (m_advisorGraph.lock() != m_graph || m_advisorHardware != hardware) {
        m_advisorPlan = schedule::planFusePlanner(g, m_state.hardware);
        m_advisorGraph = m_graph;
        m_advisorHardware = hardware;
    }
    for (const schedule::FusionGroup* grp : chains) {
        std::vector<std::string> convs;
        for (const std::string& op : grp->ops) {
            const ir::NodeId id = g.findNode(op);
            if (id != ir::kNoNode && g.node(id).opType == "Conv")
                convs.push_back(op);
        }
        if (convs.size() != 2)
            continue;
        // FusePlanner records a pair it looked at and refused in the reason of the group its first
        // conv ends up in: "FusePlanner did not fuse pw-dw A -> B on h200: WHY" (parts joined by "; ").
        const std::string pair = std::string("FusePlanner did not fuse ") + schedule::fusionKindName(grp->kind) + " " +
                                 convs[0] + " -> " + convs[1];
        for (const schedule::FusionGroup& other : m_advisorPlan.groups) {
            const std::size_t at = other.reason.find(pair);
            const std::size_t after = at + pair.size();
            if (at == std::string::npos || after >= other.reason.size() ||
                (other.reason[after] != ' ' && other.reason[after] != ':'))
                continue;
            const std::size_t end = other.reason.find("; ", after);
            const std::string rest = other.reason.substr(after, end == std::string::npos ? std::string::npos : end - after);
            const std::size_t colon = rest.find(": ");
            advice[grp->name] = colon == std::string::npos ? rest : rest.substr(colon + 2);
            break;
        }
    }
    return advice;
}

bool PlanSession::split(const QString& group)
{
    const schedule::FusionPlan& old = m_state.plan;
    int at = -1;
    for (std::size_t i = 0; i < old.groups.size(); ++i) {
        if (fromStd(old.groups[i].name) == group)
            at = static_cast<int>(i);
    }
    if (!ready() || at < 0) {
        refuse(QString(), tr("there is no fusion group '%1'").arg(group));
        return false;
    }
    const schedule::FusionGroup& gr = old.groups[static_cast<std::size_t>(at)];
    if (gr.ops.size() < 2) {
        refuse(fromStd(gr.anchor), tr("%1 is a single op: nothing to split").arg(group));
        return false;
    }
    schedule::FusionPlan next = old;
    next.planner = "user";
    std::vector<schedule::FusionGroup> singles;
    for (const std::string& op : gr.ops) {
        schedule::FusionGroup s;
        s.name = op;
        s.kind = schedule::FusionKind::Single;
        s.ops = {op};
        s.anchor = op;
        s.reason = "split by hand";
        singles.push_back(std::move(s));
    }
    next.groups.erase(next.groups.begin() + at);
    next.groups.insert(next.groups.begin() + at, singles.begin(), singles.end());
    support::Expected<schedule::FusionPlan> norm = schedule::normalizePlan(m_graph->graph, next);
    PlanState after = m_state;
    after.plan = norm.ok() ? std::move(norm.value()) : std::move(next);
    pushState(std::move(after), tr("Split %1").arg(group));
    return true;
}

void PlanSession::choosePlanner(const QString& planner)
{
    if (!knownPlanner(planner))
        return;
    if (!ready()) {
        m_state.planner = planner;
        if (m_model)
            startJob(planner, m_state.hardware, m_state.hardwareChosen, QString(), true, false, false);
        return;
    }
    startJob(planner, m_state.hardware, m_state.hardwareChosen, tr("Planner: %1").arg(planner), false);
}

void PlanSession::chooseHardware(const target::GpuProfile& hardware)
{
    bool known = false;
    for (const target::GpuProfile& p : profiles())
        known = known || p.name == hardware.name;
    const bool host = hardware.name == "host";
    if (!host && (!known || std::none_of(target::builtinGpuProfiles().begin(), target::builtinGpuProfiles().end(),
                                         [&](const target::GpuProfile& p) { return p.name == hardware.name; }))) {
        // A custom profile, new or edited again: remember it.
        auto it = std::find_if(m_custom.begin(), m_custom.end(), [&](const target::GpuProfile& p) { return p.name == hardware.name; });
        if (it != m_custom.end())
            *it = hardware;
        else
            m_custom.push_back(hardware);
        QStringList list;
        for (const target::GpuProfile& p : m_custom)
            list << fromStd(target::gpuProfileToJson(p));
        QSettings().setValue(QLatin1String(kCustomKey), list);
    }
    if (!ready()) {
        // Before the first plan: the choice is what the model is planned with.
        m_state.hardware = hardware;
        m_state.hardwareChosen = true;
        QSettings().setValue(QLatin1String(kHardwareKey), fromStd(hardware.name));
        if (m_model)
            startJob(m_state.planner, hardware, true, QString(), true, false);
        else
            emit planChanged();
        return;
    }
    if (m_state.planner == QLatin1String("fuseplanner")) {
        startJob(m_state.planner, hardware, true, tr("Hardware: %1").arg(fromStd(hardware.name)), false);
        return;
    }
    PlanState after = m_state;
    after.hardware = hardware;
    after.hardwareChosen = true;
    pushState(std::move(after), tr("Hardware: %1").arg(fromStd(hardware.name)));
}

void PlanSession::replan()
{
    if (!m_model)
        return;
    startJob(m_state.planner, m_state.hardware, m_state.hardwareChosen, tr("Re-plan (%1)").arg(m_state.planner), false);
}

}  // namespace tessera::app
