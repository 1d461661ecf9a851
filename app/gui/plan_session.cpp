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
#include "core/pipeline/compile.h"
#include "core/pipeline/host_profile.h"
#include "core/pipeline/prepare.h"
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

const ir::OpSchema* schemaOf(const ir::Graph& g, ir::NodeId n)
{
    const ir::Node& node = g.node(n);
    return ir::OpRegistry::instance().find(node.domain, node.opType);
}

bool injective(const ir::Graph& g, ir::NodeId n)
{
    const ir::OpSchema* s = schemaOf(g, n);
    return s != nullptr && s->injective;
}

std::int64_t valueBytes(const ir::Graph& g, ir::ValueId v)
{
    const ir::TensorType& t = g.value(v).type;
    const std::optional<std::int64_t> n = t.shape.numElements();
    return n ? *n * static_cast<std::int64_t>(ir::dtypeSize(t.dtype)) : 0;
}

/// Tensors produced and consumed only inside the group, not graph outputs: each saves a write and a read.
std::int64_t internalBytes(const ir::Graph& g, const std::set<ir::NodeId>& members)
{
    std::int64_t saved = 0;
    for (const ir::NodeId n : members) {
        for (const ir::ValueId v : g.node(n).outputs) {
            if (v == ir::kNoValue || g.value(v).isGraphOutput)
                continue;
            const std::vector<ir::NodeId>& uses = g.consumers(v);
            if (uses.empty())
                continue;
            const bool inside = std::all_of(uses.begin(), uses.end(), [&](ir::NodeId u) { return members.count(u) > 0; });
            if (inside)
                saved += 2 * valueBytes(g, v);
        }
    }
    return saved;
}

/// A profile of `profiles` by name (also "host"); nullopt when unknown.
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
    QString text;
    QString planner;
    target::GpuProfile hw;
    bool hwChosen = false;
    std::shared_ptr<const ir::Model> model;
    std::shared_ptr<const ir::Model> graph;
    QByteArray savedText;  ///< the plan file's contents (initial jobs)
    bool ok = false;
    bool fromFile = false;
    PlanState result;
    QString error;
    QString dropped;  ///< why the saved plan was not used
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
                           bool initial, bool readSaved)
{
    if (!m_model)
        return;
    const quint64 gen = ++m_generation;
    auto job = std::make_shared<Job>();
    job->initial = initial;
    job->text = text;
    job->planner = planner;
    job->hw = hw;
    job->hwChosen = hwChosen;
    job->model = m_model;
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
            support::Expected<ir::Model> spec =
                pipeline::specialiseModel(*job->model, pipeline::defaultInputs(job->model->graph));
            if (!spec.ok()) {
                job->error = QStringLiteral("cannot plan: ") + fromStd(spec.diagnostics().formatAll()).trimmed();
                return job;
            }
            job->graph = std::make_shared<const ir::Model>(std::move(spec.value()));
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
        support::Expected<schedule::FusionPlan> plan = schedule::makePlan(g, job->planner.toStdString(), job->hw);
        if (!plan.ok()) {
            job->error = fromStd(plan.diagnostics().formatAll()).trimmed();
            return job;
        }
        job->result.plan = std::move(plan.value());
        job->result.planner = job->planner;
        job->result.hardware = job->hw;
        job->result.hardwareChosen = job->hwChosen;
        job->ok = true;
        return job;
    }));
}

void PlanSession::onJobDone(quint64 generation, std::shared_ptr<Job> job)
{
    if (generation != m_generation)
        return;
    setBusy(false);
    if (job->graph)
        m_graph = job->graph;
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
    std::vector<ir::NodeId> ids;
    for (const std::string& m : members) {
        const ir::NodeId n = g.findNode(m);
        if (n == ir::kNoNode) {
            support::DiagnosticList d;
            d.error("", "node '" + m + "'", "'" + m + "' is not in the compiled graph (folded into a constant)");
            return d;
        }
        if (std::find(ids.begin(), ids.end(), n) == ids.end())
            ids.push_back(n);
    }
    // Topological order of the members.
    const std::optional<std::vector<ir::NodeId>> order = g.topologicalOrder();
    if (order) {
        std::vector<ir::NodeId> sorted;
        for (const ir::NodeId n : *order) {
            if (std::find(ids.begin(), ids.end(), n) != ids.end())
                sorted.push_back(n);
        }
        ids = std::move(sorted);
    }
    schedule::FusionGroup grp;
    grp.name = name;
    for (const ir::NodeId n : ids)
        grp.ops.push_back(g.node(n).name);
    const std::set<ir::NodeId> set(ids.begin(), ids.end());
    grp.predictedBytesSaved = internalBytes(g, set);
    grp.reason = "fused by hand";

    // A conv chain: exactly two convolutions, everything else elementwise.
    std::vector<ir::NodeId> convs;
    bool othersElementwise = true;
    for (const ir::NodeId n : ids) {
        const ir::OpSchema* s = schemaOf(g, n);
        if (g.node(n).opType == "Conv")
            convs.push_back(n);
        else if (s == nullptr || s->category != ir::OpCategory::Elementwise)
            othersElementwise = false;
    }
    if (convs.size() == 2 && othersElementwise) {
        support::Expected<schedule::ConvLayer> a = schedule::convLayerOf(g, convs[0]);
        support::Expected<schedule::ConvLayer> b = schedule::convLayerOf(g, convs[1]);
        if (a.ok() && b.ok()) {
            using K = schedule::ConvLayerKind;
            std::optional<schedule::FusionKind> kind;
            if (a->kind == K::Depthwise && b->kind == K::Pointwise)
                kind = schedule::FusionKind::DwPw;
            else if (a->kind == K::Pointwise && b->kind == K::Depthwise)
                kind = schedule::FusionKind::PwDw;
            else if (a->kind == K::Pointwise && b->kind == K::Pointwise)
                kind = schedule::FusionKind::PwPw;
            if (kind) {
                grp.kind = *kind;
                grp.anchor = g.node(convs[0]).name;
                bool after = false;
                for (const ir::NodeId n : ids) {
                    if (after)
                        grp.epilogue.push_back(g.node(n).name);
                    after = after || n == convs[1];
                }
                const schedule::TileCost fused = schedule::bestFusedTile(a.value(), b.value(), *kind, hw);
                const schedule::TileCost la = schedule::bestLayerTile(a.value(), hw);
                const schedule::TileCost lb = schedule::bestLayerTile(b.value(), hw);
                if (fused.viable) {
                    // FP32 elements, as FusePlanner counts.
                    grp.tile = fused.tile;
                    grp.predictedBytes = fused.gma * 4;
                    grp.redundantFlops = fused.redundantFlops;
                    if (la.viable && lb.viable)
                        grp.predictedBytesSaved = (la.gma + lb.gma - fused.gma) * 4;
                }
                return grp;
            }
        }
    }
    grp.kind = ids.size() == 1 ? schedule::FusionKind::Single : schedule::FusionKind::PrologueEpilogue;
    auto anchorIt = std::find_if(ids.begin(), ids.end(), [&](ir::NodeId n) { return !injective(g, n); });
    if (anchorIt == ids.end())
        anchorIt = ids.end() - 1;
    grp.anchor = g.node(*anchorIt).name;
    for (auto it = ids.begin(); it != ids.end(); ++it) {
        if (it < anchorIt)
            grp.prologue.push_back(g.node(*it).name);
        else if (it > anchorIt)
            grp.epilogue.push_back(g.node(*it).name);
    }
    return grp;
}

namespace {

/// The part of `a`'s reason in which FusePlanner says it did not fuse a pair whose second conv
/// is a member of `b` ("FusePlanner did not fuse dw-pw C1 -> C2 on h200: ..."), else "".
std::string plannerRefusalBetween(const schedule::FusionGroup& a, const schedule::FusionGroup& b)
{
    static const std::string kPrefix = "FusePlanner did not fuse ";
    std::size_t at = a.reason.find(kPrefix);
    while (at != std::string::npos) {
        const std::size_t end = a.reason.find("; ", at);
        const std::string part = a.reason.substr(at, end == std::string::npos ? std::string::npos : end - at);
        for (const std::string& m : b.ops) {
            if (part.find(" -> " + m + " on ") != std::string::npos || part.find(" -> " + m + ":") != std::string::npos)
                return part;
        }
        at = end == std::string::npos ? end : a.reason.find(kPrefix, end);
    }
    return {};
}

}  // namespace

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
    // Every group touched by the selection is merged whole.
    std::set<int> touched;
    std::vector<std::string> members;
    for (const QString& n : names) {
        const int gi = old.groupOf(n.toStdString());
        if (gi >= 0)
            touched.insert(gi);
        else
            members.push_back(n.toStdString());
    }
    for (const int gi : touched) {
        const auto& ops = old.groups[static_cast<std::size_t>(gi)].ops;
        members.insert(members.end(), ops.begin(), ops.end());
    }
    if (touched.size() == 1 && members.size() == old.groups[static_cast<std::size_t>(*touched.begin())].ops.size()) {
        return refused(names.first(), tr("%1 are already one group (%2)")
                                          .arg(names.join(QStringLiteral(", ")),
                                               fromStd(old.groups[static_cast<std::size_t>(*touched.begin())].name)));
    }
    std::set<std::string> used;
    for (const schedule::FusionGroup& gr : old.groups)
        used.insert(gr.name);
    int k = 1;
    while (used.count("u" + std::to_string(k)) > 0 || g.findNode("u" + std::to_string(k)) != ir::kNoNode)
        ++k;
    support::Expected<schedule::FusionGroup> grp = fusedGroupFor(g, members, m_state.hardware, "u" + std::to_string(k));
    if (!grp.ok()) {
        return refused(names.first(), fromStd(grp.diagnostics().items().front().message));
    }
    schedule::FusionPlan next;
    next.planner = "user";
    next.hardware = old.hardware.empty() ? m_state.hardware.name : old.hardware;
    bool placed = false;
    for (std::size_t i = 0; i < old.groups.size(); ++i) {
        if (touched.count(static_cast<int>(i)) == 0) {
            next.groups.push_back(old.groups[i]);
        } else if (!placed) {
            next.groups.push_back(grp.value());
            placed = true;
        }
    }
    if (!placed)
        next.groups.push_back(grp.value());
    support::Expected<schedule::FusionPlan> norm = schedule::normalizePlan(g, next);
    if (!norm.ok()) {
        const auto& items = norm.diagnostics().items();
        return refused(QString::fromStdString(grp->anchor), items.empty()
                                                                ? tr("the groups would depend on each other in a cycle")
                                                                : fromStd(items.front().message));
    }
    next = std::move(norm.value());
    const int at = next.groupOf(grp->anchor);
    // Only what this edit breaks refuses it (an older broken group, e.g. after a hardware
    // change, does not block other edits).
    std::set<std::string> before;
    for (const schedule::FusionViolation& v : m_violations)
        before.insert(v.message);
    for (const schedule::FusionViolation& v : schedule::checkPlan(g, next, &m_state.hardware)) {
        if (v.group == at || (v.group < 0 && before.count(v.message) == 0)) {
            return refused(fromStd(v.node.empty() ? grp->anchor : v.node), fromStd(v.message));
        }
    }
    out.ok = true;
    out.plan = std::move(next);
    out.group = grp->name;
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

std::vector<PlanSession::EdgeReason> PlanSession::crossingEdgeReasons() const
{
    std::vector<EdgeReason> out;
    if (!ready())
        return out;
    const ir::Graph& g = m_graph->graph;
    const schedule::FusionPlan& plan = m_state.plan;
    std::set<std::pair<ir::NodeId, ir::NodeId>> seen;
    for (std::size_t c = 0; c < g.numNodes(); ++c) {
        const ir::NodeId to = static_cast<ir::NodeId>(c);
        for (const ir::ValueId v : g.node(to).inputs) {
            if (v == ir::kNoValue)
                continue;
            const ir::NodeId from = g.producer(v);
            if (from == ir::kNoNode || !seen.insert({from, to}).second)
                continue;
            const int ga = plan.groupOf(g.node(from).name);
            const int gb = plan.groupOf(g.node(to).name);
            if (ga < 0 || gb < 0 || ga == gb)
                continue;
            EdgeReason r;
            r.from = g.node(from).name;
            r.to = g.node(to).name;
            r.fromGroup = plan.groups[static_cast<std::size_t>(ga)].name;
            r.toGroup = plan.groups[static_cast<std::size_t>(gb)].name;
            const FuseOutcome o = tryFuse({fromStd(r.from), fromStd(r.to)});
            r.fusible = o.ok;
            r.refusal = o.message;
            r.plannerNote = fromStd(plannerRefusalBetween(plan.groups[static_cast<std::size_t>(ga)], plan.groups[static_cast<std::size_t>(gb)]));
            out.push_back(std::move(r));
        }
    }
    return out;
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
            startJob(planner, m_state.hardware, m_state.hardwareChosen, QString(), true, false);
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
