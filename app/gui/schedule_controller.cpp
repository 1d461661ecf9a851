#include "app/gui/schedule_controller.h"

#include <QEvent>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QUndoCommand>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>

#include "app/gui/plan_session.h"
#include "core/pipeline/engine.h"
#include "core/pipeline/user_schedule.h"
#include "core/schedule/fusion_plan.h"
#include "views/mapping/mapping_apply_bar.h"
#include "views/mapping/mapping_panel.h"

namespace tessera::app {

namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString mappingText(const ScheduleController::Mapping& m)
{
    return m.block.isEmpty() ? m.grid : m.grid + QStringLiteral(" / ") + m.block;
}

bool samePath(const QString& a, const QString& b)
{
    return QFileInfo(a).absoluteFilePath() == QFileInfo(b).absoluteFilePath();
}

}  // namespace

/// One apply or reset: the node's mapping before and after (nullopt = no user mapping).
class ScheduleCommand : public QUndoCommand {
public:
    ScheduleCommand(ScheduleController* controller, QString node, std::optional<ScheduleController::Mapping> before,
                    std::optional<ScheduleController::Mapping> after, const QString& text)
        : QUndoCommand(text),
          m_controller(controller),
          m_node(std::move(node)),
          m_before(std::move(before)),
          m_after(std::move(after))
    {
    }
    void undo() override { m_controller->setMapping(m_node, m_before); }
    void redo() override { m_controller->setMapping(m_node, m_after); }

private:
    ScheduleController* m_controller;
    QString m_node;
    std::optional<ScheduleController::Mapping> m_before, m_after;
};

struct ScheduleController::Check {
    QString node;
    Mapping mapping;
    std::shared_ptr<const ir::Model> model;
    std::shared_ptr<const pipeline::PreparedModel> prepared;
    ir::KernelScheduleDecl decl;
    pipeline::CompileOptions options;
    bool ok = false;
    std::string message;
    std::string where;
};

ScheduleController::ScheduleController(PlanSession* plans, views::MappingPanel* panel, QObject* parent)
    : QObject(parent), m_plans(plans), m_panel(panel)
{
    m_pool.setMaxThreadCount(1);
    views::MappingApplyBar* bar = m_panel->applyBar();
    connect(bar, &views::MappingApplyBar::applyRequested, this, [this](const QString& node) {
        apply(node, m_panel->gridExpression(), m_panel->blockExpression());
    });
    connect(bar, &views::MappingApplyBar::resetRequested, this, [this](const QString& node) { reset(node); });
    // A kernel selected before the first plan was ready learns its default mapping now (the
    // editors are left alone: the user may be typing).
    connect(m_plans, &PlanSession::planChanged, this, [this] {
        if (!m_current.isEmpty())
            showKernel(m_current, false);
    });
    m_panel->installEventFilter(this);
    // Expressions someone else put in the editors (View > Task Mapping on an expression, the
    // program's schedule) win over ones still waiting for the panel to show.
    connect(m_panel, &views::MappingPanel::mappingEdited, this, [this] {
        if (!m_settingExpressions)
            m_pendingExpressions.reset();
    });
}

bool ScheduleController::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_panel && event->type() == QEvent::Show && m_pendingExpressions) {
        const Mapping m = *m_pendingExpressions;
        m_pendingExpressions.reset();
        m_settingExpressions = true;
        m_panel->setExpressions(m.grid, m.block);
        m_settingExpressions = false;
    }
    return QObject::eventFilter(watched, event);
}

void ScheduleController::showExpressions(const QString& grid, const QString& block)
{
    if (!m_panel->isVisible()) {
        m_pendingExpressions = Mapping{grid, block};
        return;
    }
    m_pendingExpressions.reset();
    m_settingExpressions = true;
    m_panel->setExpressions(grid, block);
    m_settingExpressions = false;
}

ScheduleController::~ScheduleController() { m_pool.waitForDone(); }

pipeline::CompileOptions ScheduleController::options() const
{
    return m_options ? m_options() : pipeline::CompileOptions{};
}

void ScheduleController::setModel(std::shared_ptr<const ir::Model> model, const QString& path)
{
    ++m_generation;
    setBusy(false);
    const bool keep = model && !m_path.isEmpty() && samePath(path, m_path);
    const bool hadMappings = !m_mappings.empty();
    if (!keep)
        m_mappings.clear();
    m_model = std::move(model);
    m_path = m_model ? path : QString();
    m_prepared.reset();
    m_diagnostics = {};
    m_lastRefusal.clear();
    m_current.clear();
    m_pendingExpressions.reset();
    m_panel->applyBar()->clearKernel();
    if (hadMappings && !keep)
        emit schedulesChanged();
}

void ScheduleController::selectNode(ir::NodeId node)
{
    if (!m_model || node < 0 || static_cast<std::size_t>(node) >= m_model->graph.numNodes()) {
        m_current.clear();
        m_panel->applyBar()->clearKernel();
        return;
    }
    showKernel(fromStd(m_model->graph.node(node).name), true);
}

void ScheduleController::showKernel(const QString& node, bool setExpressions)
{
    views::MappingApplyBar* bar = m_panel->applyBar();
    const std::string name = node.toStdString();
    const ir::NodeId id = m_model ? m_model->graph.findNode(name) : ir::kNoNode;
    if (id == ir::kNoNode) {
        m_current.clear();
        bar->clearKernel();
        return;
    }
    m_current = node;
    const QString opType = fromStd(m_model->graph.node(id).opType);
    if (const auto user = userMapping(node)) {
        bar->setKernel(node, opType, views::ScheduleOrigin::User, mappingText(*user));
        if (setExpressions)
            showExpressions(user->grid, user->block);
        return;
    }
    if (const ir::KernelScheduleDecl* decl = m_model->program.scheduleFor(name)) {
        const pipeline::ScheduleMappings m = pipeline::scheduleMappings(*decl);
        if (!m.grid.empty() || !m.block.empty()) {
            bar->setKernel(node, opType, views::ScheduleOrigin::Program,
                           mappingText(Mapping{fromStd(m.grid.empty() ? m.block : m.grid),
                                               fromStd(m.grid.empty() ? std::string() : m.block)}));
            if (setExpressions)
                showExpressions(fromStd(m.grid.empty() ? m.block : m.grid),
                                fromStd(m.grid.empty() ? std::string() : m.block));
            return;
        }
    }
    // The default is shown on the graph the compile lowers (shapes bound, constants folded).
    const std::shared_ptr<const pipeline::PreparedModel> prepared = m_plans->prepared() ? m_plans->prepared() : m_prepared;
    const std::optional<ir::KernelScheduleDecl> decl =
        prepared ? pipeline::defaultSchedule(prepared->model, name, options()) : std::nullopt;
    if (!decl) {
        bar->setKernel(node, opType, views::ScheduleOrigin::Default);
        return;
    }
    const pipeline::ScheduleMappings m = pipeline::scheduleMappings(*decl);
    const Mapping def{fromStd(m.grid), fromStd(m.block)};
    bar->setKernel(node, opType, views::ScheduleOrigin::Default, def.grid.isEmpty() ? QString() : mappingText(def));
    if (setExpressions && !def.grid.isEmpty())
        showExpressions(def.grid, def.block);
}

QString ScheduleController::fusedReason(const std::string& node) const
{
    if (!m_plans->ready())
        return {};
    const schedule::FusionPlan& plan = m_plans->plan();
    const int gi = plan.groupOf(node);
    if (gi < 0)
        return {};
    const schedule::FusionGroup& g = plan.groups[static_cast<std::size_t>(gi)];
    if (g.kind == schedule::FusionKind::Single || g.ops.size() <= 1)
        return {};
    if (schedule::isConvChain(g.kind))
        return tr("%1 is in the %2 group '%3', whose fused kernel takes its tile from the fusion plan: split the "
                  "group (Ctrl+Shift+G) to set this kernel's mapping")
            .arg(fromStd(node), QString::fromLatin1(schedule::fusionKindName(g.kind)), fromStd(g.name));
    if (g.anchor != node)
        return tr("%1 is fused into group '%2', whose kernel is scheduled by its anchor %3: apply the mapping to %3")
            .arg(fromStd(node), fromStd(g.name), fromStd(g.anchor));
    return {};
}

bool ScheduleController::apply(const QString& node, const QString& gridIn, const QString& blockIn)
{
    const Mapping mapping{gridIn.trimmed(), blockIn.trimmed()};
    if (!m_model || m_model->graph.findNode(node.toStdString()) == ir::kNoNode) {
        refuse(node, tr("select an operator of the model first"));
        return false;
    }
    if (mapping.grid.isEmpty()) {
        refuse(node, tr("the mapping is empty"));
        return false;
    }
    if (userMapping(node) == mapping) {
        m_panel->applyBar()->setStatus(tr("%1 already compiles with %2").arg(node, mappingText(mapping)), false);
        return false;
    }
    if (const QString why = fusedReason(node.toStdString()); !why.isEmpty()) {
        refuse(node, why);
        return false;
    }
    auto check = std::make_shared<Check>();
    check->node = node;
    check->mapping = mapping;
    check->model = m_model;
    check->prepared = m_plans->prepared() ? m_plans->prepared() : m_prepared;
    check->decl = pipeline::mappingSchedule(node.toStdString(), mapping.grid.toStdString(), mapping.block.toStdString());
    check->options = options();
    const quint64 gen = ++m_generation;
    setBusy(true);
    auto* watcher = new QFutureWatcher<std::shared_ptr<Check>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, gen] {
        std::shared_ptr<Check> done = watcher->result();
        watcher->deleteLater();
        onCheckDone(gen, std::move(done));
    });
    watcher->setFuture(QtConcurrent::run(&m_pool, [check]() {
        if (!check->prepared) {
            // What compileModel lowers: shapes bound from the default inputs, constants folded.
            auto prepared = pipeline::prepare(check->model, {});
            if (!prepared.ok()) {
                const support::Diagnostic* e = prepared.diagnostics().firstError();
                check->message = e ? e->message : "the model cannot be specialised";
                return check;
            }
            check->prepared = *prepared;
        }
        auto r = pipeline::checkUserSchedule(check->prepared->model, check->decl, check->options);
        check->ok = r.ok();
        if (!r.ok()) {
            const support::Diagnostic* e = r.diagnostics().firstError();
            check->message = e ? e->message : "the lowering refused the mapping";
            check->where = e ? e->where : std::string();
        }
        return check;
    }));
    return true;
}

void ScheduleController::onCheckDone(quint64 generation, std::shared_ptr<Check> check)
{
    if (generation != m_generation || !check || check->model != m_model)
        return;
    setBusy(false);
    if (!m_plans->prepared() && check->prepared)
        m_prepared = check->prepared;
    if (!check->ok) {
        refuse(check->node, fromStd(check->message), check->where);
        return;
    }
    m_diagnostics = {};
    m_lastRefusal.clear();
    const std::optional<Mapping> before = userMapping(check->node);
    m_plans->undoStack()->push(new ScheduleCommand(this, check->node, before, check->mapping,
                                                   tr("Set mapping of %1: %2").arg(check->node, mappingText(check->mapping))));
    m_panel->applyBar()->setStatus(
        tr("Applied: %1 compiles with %2 from the next run on (Ctrl+Z undoes it)").arg(check->node, mappingText(check->mapping)),
        false);
    emit applied(check->node);
}

bool ScheduleController::reset(const QString& node)
{
    const std::optional<Mapping> before = userMapping(node);
    if (!before)
        return false;
    ++m_generation;  // a check in flight would otherwise re-apply after the reset
    setBusy(false);
    m_plans->undoStack()->push(new ScheduleCommand(this, node, before, std::nullopt, tr("Reset mapping of %1").arg(node)));
    m_panel->applyBar()->setStatus(tr("%1 compiles with its default schedule again").arg(node), false);
    return true;
}

void ScheduleController::setMapping(const QString& node, const std::optional<Mapping>& mapping)
{
    if (mapping)
        m_mappings[node.toStdString()] = *mapping;
    else
        m_mappings.erase(node.toStdString());
    showKernel(node, true);
    emit schedulesChanged();
}

void ScheduleController::refuse(const QString& node, const QString& message, const std::string& where)
{
    m_lastRefusal = message;
    m_diagnostics = {};
    m_diagnostics.warning("", where.empty() ? "node '" + node.toStdString() + "'" : where,
                          "mapping not applied: " + message.toStdString());
    m_panel->applyBar()->setStatus(tr("Not applied: %1").arg(message), true);
    emit applyRefused(node, message);
}

void ScheduleController::setBusy(bool busy)
{
    if (busy == m_busy)
        return;
    m_busy = busy;
    m_panel->applyBar()->setBusy(busy);
    emit busyChanged(busy);
}

std::optional<ScheduleController::Mapping> ScheduleController::userMapping(const QString& node) const
{
    const auto it = m_mappings.find(node.toStdString());
    if (it == m_mappings.end())
        return std::nullopt;
    return it->second;
}

std::vector<ir::KernelScheduleDecl> ScheduleController::schedules() const
{
    std::vector<ir::KernelScheduleDecl> out;
    for (const auto& [node, m] : m_mappings)
        out.push_back(pipeline::mappingSchedule(node, m.grid.toStdString(), m.block.toStdString()));
    return out;
}

std::vector<project::ScheduleOverride> ScheduleController::projectSchedules() const
{
    std::vector<project::ScheduleOverride> out;
    for (const auto& [node, m] : m_mappings)
        out.push_back({node, m.grid.toStdString(), m.block.toStdString()});
    return out;
}

void ScheduleController::restore(const std::vector<project::ScheduleOverride>& schedules)
{
    ++m_generation;
    setBusy(false);
    m_mappings.clear();
    for (const auto& s : schedules)
        m_mappings[s.node] = Mapping{fromStd(s.grid), fromStd(s.block)};
    if (!m_current.isEmpty())
        showKernel(m_current, true);
    emit schedulesChanged();
}

QString ScheduleController::key() const
{
    QString k;
    for (const auto& [node, m] : m_mappings)
        k += fromStd(node) + QLatin1Char('=') + m.grid + QLatin1Char(';') + m.block + QLatin1Char('|');
    return k;
}

}  // namespace tessera::app
