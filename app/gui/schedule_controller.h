#pragma once
/// @file
/// User schedules in the GUI (issue 8, "undo/redo for every plan, mapping and schedule edit"):
/// the task mappings the user applied to kernels from the Task Mapping dock, which the next
/// compile uses (RunSettings::compile.schedules, core/pipeline/user_schedule.h).
///
/// - Selection: selectNode() (the linked graph selection) puts the kernel in the dock's kernel row
///   (views::MappingApplyBar) and its current mappings in the editors: the user's, else the
///   program's `schedule` block, else the op's default schedule for the current target. While
///   the panel is hidden the editors are filled when it is next shown (drawing a large task grid
///   takes ~0.1 s, too long for every click in the graph).
/// - apply(node, grid, block): refused at once when the node's kernel ignores schedules (a member
///   of a fused group that is not its anchor, a fused convolution chain). Otherwise node is
///   lowered with the mapping on a worker (pipeline::checkUserSchedule on the specialised graph
///   PlanSession plans on, options as the next run's), so a mapping that the compile would
///   refuse (does not parse, wrong rank, does not cover the output, a CUDA block over 1024
///   threads) is refused with the lowering's reason: shown red in the dock, added to
///   diagnostics() (Problems), applyRefused() emitted, nothing changed. An accepted mapping
///   becomes one QUndoCommand "Set mapping of <node>: <grid>[ / <block>]" on PlanSession's undo
///   stack, so Edit > Undo/Redo walk plan and mapping edits in one order.
/// - reset(node): one command "Reset mapping of <node>" back to the default/program schedule.
/// - Undo and redo restore the node's previous schedule and show that node's kernel and mappings
///   in the dock.
/// - setModel(): a new model path forgets every schedule; the same path (a re-parsed program, a
///   reloaded model) keeps them, by node name. restore() sets them from a project (not undoable).
///
/// Thread rules: UI thread only; the worker runs only checkUserSchedule on data it shares
/// read-only. A check that a newer apply, a model change or a reset overtook is dropped.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QObject>
#include <QString>
#include <QThreadPool>

#include "core/ir/graph.h"
#include "core/pipeline/compile.h"
#include "core/project/project.h"
#include "core/support/diagnostic.h"

namespace tessera::pipeline {
struct PreparedModel;
}

namespace tessera::views {
class MappingPanel;
}

namespace tessera::app {

class PlanSession;

class ScheduleController : public QObject {
    Q_OBJECT
public:
    /// A user's mappings of one kernel (block empty = one level).
    struct Mapping {
        QString grid;
        QString block;
        bool operator==(const Mapping&) const = default;
    };
    /// The compile options a check uses (target, threads): the next run's.
    using OptionsProvider = std::function<pipeline::CompileOptions()>;

    ScheduleController(PlanSession* plans, views::MappingPanel* panel, QObject* parent = nullptr);
    /// Waits for a running check.
    ~ScheduleController() override;

    bool eventFilter(QObject* watched, QEvent* event) override;

    void setOptionsProvider(OptionsProvider provider) { m_options = std::move(provider); }

    /// The model on screen (see the file comment for what is kept).
    void setModel(std::shared_ptr<const ir::Model> model, const QString& path);
    /// The operator selected in the graph (an id of the model given to setModel; ir::kNoNode or a
    /// value: none, the dock becomes a preview).
    void selectNode(ir::NodeId node);
    /// The kernel the dock's row names ("" = none).
    QString currentNode() const { return m_current; }

    /// See the file comment. Return false when refused at once or nothing to do.
    bool apply(const QString& node, const QString& grid, const QString& block);
    bool reset(const QString& node);
    /// A check is running.
    bool isBusy() const { return m_busy; }

    /// The user's mappings of `node`, if any.
    std::optional<Mapping> userMapping(const QString& node) const;
    /// Every user schedule, by node name (for RunSettings::compile.schedules).
    std::vector<ir::KernelScheduleDecl> schedules() const;
    /// The same as stored in a project.
    std::vector<project::ScheduleOverride> projectSchedules() const;
    /// Replaces every user schedule with a project's (not undoable; the dock follows).
    void restore(const std::vector<project::ScheduleOverride>& schedules);
    /// A text that changes whenever the schedules do (Live mode's "same as last run" key).
    QString key() const;

    /// The last refusal as a warning (empty after an accepted edit or a new model).
    const support::DiagnosticList& diagnostics() const { return m_diagnostics; }
    QString lastRefusal() const { return m_lastRefusal; }

signals:
    /// The schedules changed (apply, reset, undo, redo, restore, a new model).
    void schedulesChanged();
    /// An apply was accepted and pushed (`node`'s kernel now compiles with it).
    void applied(const QString& node);
    /// An apply was refused: the node and the reason.
    void applyRefused(const QString& node, const QString& message);
    void busyChanged(bool busy);

private:
    friend class ScheduleCommand;
    struct Check;
    /// Sets or clears (nullopt) the node's user mapping and shows that kernel in the dock.
    void setMapping(const QString& node, const std::optional<Mapping>& mapping);
    void showKernel(const QString& node, bool setExpressions);
    /// Puts mappings in the editors now, or when the panel is next shown.
    void showExpressions(const QString& grid, const QString& block);
    void onCheckDone(quint64 generation, std::shared_ptr<Check> check);
    void refuse(const QString& node, const QString& message, const std::string& where = {});
    void setBusy(bool busy);
    /// Why `node`'s kernel would not use a schedule under the plan on screen ("" = it would).
    QString fusedReason(const std::string& node) const;
    pipeline::CompileOptions options() const;

    PlanSession* m_plans;
    views::MappingPanel* m_panel;
    OptionsProvider m_options;
    QThreadPool m_pool;
    quint64 m_generation = 0;
    bool m_busy = false;
    std::shared_ptr<const ir::Model> m_model;
    QString m_path;
    QString m_current;
    std::optional<Mapping> m_pendingExpressions;
    bool m_settingExpressions = false;
    std::map<std::string, Mapping> m_mappings;
    support::DiagnosticList m_diagnostics;
    QString m_lastRefusal;
    /// m_model prepared with its default inputs by a check when PlanSession had none yet.
    std::shared_ptr<const pipeline::PreparedModel> m_prepared;
};

}  // namespace tessera::app
