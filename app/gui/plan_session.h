#pragma once
/// @file
/// The GUI's fusion-plan controller (issue 6): the current schedule::FusionPlan of the open
/// model, its undo history, the planner job channel and the plan's file.
///
/// Graph: plans are made and checked on the *specialised* graph (pipeline::prepare with the
/// default inputs: shapes bound, constants folded), exactly the graph compileModel plans on, so a
/// plan handed to a run (RunSettings::compile.plan) means the same groups there. The prepared
/// model is shared (prepared()) with the schedule checks.
///
/// Edits (each one QUndoCommand on undoStack(); the Edit menu's Undo/Redo):
/// - fuse(nodes): the groups of the named operators are merged into one new group "uN". Its kind
///   (fusedGroupFor): two convolutions (depthwise/pointwise, with elementwise ops between them and
///   after the second) make a dw-pw / pw-dw / pw-pw chain anchored at the first conv, with
///   FusePlanner's best tile and predictions on the current hardware; anything else is
///   prologue-epilogue anchored at the first non-injective member (the last member when all are
///   injective), earlier members prologue, later ones epilogue. The edit is then checked
///   (normalizePlan for cycles, checkPlan): when the new group breaks a rule the edit is REFUSED:
///   the plan and the undo stack stay as they were, editRefused() names the node and the reason
///   (the first violation's message, e.g. "Relu_12's input has 2 uses"), and the refusal is
///   added to diagnostics() as a warning.
/// - split(group): the group becomes one single group per member.
/// - choosePlanner / chooseHardware / replan: the planner runs on a worker (one-thread pool,
///   QtConcurrent); when its plan comes back one command is pushed. Every job and every edit
///   bumps a generation number, so a planner result that an edit or a newer job overtook is
///   dropped. With planner none or hidet a hardware change needs no planning and is pushed at once.
/// Undo and redo restore the whole state (plan, planner shown, hardware) exactly, except that a
/// state whose hardware was not chosen takes the current target's.
///
/// Persistence (besides .tessera projects, which restore a state through setInitialState): after
/// every change the state is written
/// as JSON to `<AppDataLocation>/fusion-plans/<sha1 of the model's absolute path>.json`
/// ({"format": "tessera-gui-plan", "version": 1, "model", "planner", "hardware": <profile JSON>,
/// "plan": <schedule::planToJson>}) and read back by setModel() when the same file is opened
/// again (a plan that no longer fits the model is dropped with a warning and the planner runs).
/// Custom what-if hardware profiles are kept in QSettings ("fusion/customProfiles"); the last
/// planner and the hardware the user chose in QSettings ("fusion/planner", "fusion/hardwareChoice").
///
/// Hardware: until the user picks a profile (chooseHardware) the plan is made for the run
/// target's hardware (setTargetHardware: this CPU as "host" for the CPU, "h200" for CUDA; the
/// rule pipeline::CompileOptions applies to an empty hardware name), and a change of target
/// changes it without an undo step (it is not the user's edit): a plan FusePlanner made is
/// planned again for the new hardware, any other plan (none, hidet, edited, restored) keeps its
/// groups. Once chosen, the profile stays whatever the target (PlanState::hardwareChosen; undoing
/// the choice gives the target's back).
///
/// Thread rules: all public functions and signals belong to the UI thread. Workers run only the
/// pure core functions (prepare, makePlan, ...) on data they own or share read-only.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QObject>
#include <QString>
#include <QStringList>
#include <QThreadPool>

#include "core/ir/graph.h"
#include "core/schedule/fusion_edit.h"
#include "core/schedule/fusion_plan.h"
#include "core/support/diagnostic.h"
#include "core/support/expected.h"
#include "core/target/gpu_profile.h"
#include "views/graph/fusion_clusters.h"

class QKeySequence;
class QUndoStack;

namespace tessera::pipeline {
struct PreparedModel;
}

namespace tessera::app {

/// What an undoable plan edit restores.
struct PlanState {
    schedule::FusionPlan plan;
    QString planner;  ///< the planner shown: "none", "hidet" or "fuseplanner"
    target::GpuProfile hardware;
    /// The user picked `hardware` (chooseHardware, a project or plan file that names one); false:
    /// it is the run target's (setTargetHardware) and follows the target.
    bool hardwareChosen = false;
};

class PlanSession : public QObject {
    Q_OBJECT
public:
    explicit PlanSession(QObject* parent = nullptr);
    /// Waits for a running planner job.
    ~PlanSession() override;

    /// A newly opened model: forgets the history, specialises the graph and plans it (or loads
    /// the plan saved for `path`) on the worker; planChanged() follows. A null model clears.
    void setModel(std::shared_ptr<const ir::Model> model, const QString& path);
    void clear();
    /// The state the next setModel() starts from instead of the plan saved for its path (a
    /// project's plan, issue 8): checked against the model as a saved plan is (dropped with a
    /// warning when it no longer fits, and the planner runs); a state with an empty plan only names the
    /// planner and hardware to plan with. Used once; nullopt forgets it.
    void setInitialState(std::optional<PlanState> state) { m_initialState = std::move(state); }

    /// A plan is available (the first job after setModel finished).
    bool ready() const { return m_graph != nullptr; }
    bool isBusy() const { return m_busy; }
    quint64 generation() const { return m_generation; }
    const PlanState& state() const { return m_state; }
    const schedule::FusionPlan& plan() const { return m_state.plan; }
    QString planner() const { return m_state.planner; }
    const target::GpuProfile& hardware() const { return m_state.hardware; }
    /// The specialised model the plan refers to (null until ready()): prepared()->model.
    std::shared_ptr<const ir::Model> specialisedModel() const { return m_graph; }
    /// The model with its default inputs, specialised (null until ready()).
    std::shared_ptr<const pipeline::PreparedModel> prepared() const { return m_prepared; }
    /// checkPlan of the current plan on the current hardware.
    const std::vector<schedule::FusionViolation>& violations() const { return m_violations; }
    /// Whether the current plan was read from the plan file (setModel).
    bool loadedFromFile() const { return m_loadedFromFile; }
    /// Warnings about plans: refusals, a saved plan that no longer fits, planner errors.
    const support::DiagnosticList& diagnostics() const { return m_diagnostics; }
    /// The last refusal's message (empty when the last edit was accepted).
    QString lastRefusal() const { return m_lastRefusal; }
    QUndoStack* undoStack() const { return m_undo; }

    /// Built-in profiles, then the custom ones.
    std::vector<target::GpuProfile> profiles() const;
    /// Whether the user picked the current hardware (see the file comment).
    bool hardwareChosen() const { return m_state.hardwareChosen; }
    /// The run target's hardware, used while none is chosen (pipeline::hostProfile() until set).
    void setTargetHardware(const target::GpuProfile& hardware);
    const target::GpuProfile& targetHardware() const { return m_targetHardware; }
    /// The profile pipeline::CompileOptions uses for a target when no hardware is named.
    static target::GpuProfile defaultHardwareFor(bool cuda);

    /// See the file comment. Return false when refused or nothing to do (then editRefused()).
    bool fuse(const QStringList& nodes);
    /// What fuse(nodes) would do, changing nothing: ok with the new plan and group name, or the
    /// node and message it would refuse with.
    struct FuseOutcome {
        bool ok = false;
        QString node;
        QString message;
        schedule::FusionPlan plan;
        std::string group;
    };
    FuseOutcome tryFuse(const QStringList& nodes) const;
    /// Why the two ends of a graph edge are in different kernels (issue 6's "why not" at an
    /// edge): schedule::crossingEdgeReasons of the specialised graph and the current plan on the
    /// current hardware (fuse({from, to}) accepted, or its refusal; FusePlanner's recorded reason
    /// for a conv pair across the edge). Computed on the UI thread (one fuse check per crossing
    /// edge: about 12 ms for MobileNetV2's 60 crossing edges under fuseplanner). Empty before
    /// ready().
    std::vector<schedule::EdgeReason> crossingEdgeReasons() const;
    /// FusePlanner's advice against the plan's conv chains (dw-pw, pw-dw, pw-pw groups) that it
    /// would not make itself: group name -> the reason its own plan on the same graph and
    /// hardware records for that conv pair ("redundant 9.29 MFLOP per 647424 elements saved =
    /// 14.3 >= 10"). A chain FusePlanner makes too, and any other group, has no entry. Computed on
    /// the UI thread; FusePlanner's plan is kept until the graph or the hardware changes (a few ms
    /// for MobileNetV2). Empty before ready().
    std::map<std::string, std::string> plannerAdvice() const;
    bool split(const QString& group);
    /// Before the first plan is ready (or without a model) this sets the planner the model is
    /// planned with, ignoring a saved plan; not undoable then.
    void choosePlanner(const QString& planner);
    /// A built-in or custom profile; a new custom profile (name not known) is remembered.
    void chooseHardware(const target::GpuProfile& hardware);
    void replan();

    /// The file the state of the model at `modelPath` is saved in.
    static QString planFilePath(const QString& modelPath);
    /// The group fuse() builds for `members` (node names of `g`, any order), named `name`; errors
    /// for unknown names (schedule::fusedGroupFor).
    static support::Expected<schedule::FusionGroup> fusedGroupFor(const ir::Graph& g, const std::vector<std::string>& members,
                                                                  const target::GpuProfile& hw, const std::string& name);

signals:
    /// The plan, the planner shown or the hardware changed (also after undo/redo and loads).
    void planChanged();
    void busyChanged(bool busy);
    /// An edit was refused: the node it is about ("" when none) and why.
    void editRefused(const QString& node, const QString& message);
    /// A planner job failed or a saved plan was dropped (also in diagnostics()).
    void warning(const QString& message);

private:
    friend class PlanCommand;
    struct Job;
    void applyState(const PlanState& state, bool save);
    /// programPlan: an initial job of a program with fuse statements takes them as the plan (false
    /// when a planner was asked for before the first plan was ready, e.g. `tessera --planner`).
    void startJob(const QString& planner, const target::GpuProfile& hw, bool hwChosen, const QString& text,
                  bool initial, bool readSaved = true, bool programPlan = true);
    void onJobDone(quint64 generation, std::shared_ptr<Job> job);
    void refuse(const QString& node, const QString& message);
    void pushState(PlanState after, const QString& text);
    void save() const;
    /// The plan file's JSON for `state` (what save() writes and an initial job reads).
    static QByteArray stateJson(const PlanState& state, const QString& modelPath);
    void setBusy(bool busy);

    QThreadPool m_pool;
    QUndoStack* m_undo;
    quint64 m_generation = 0;
    bool m_busy = false;
    std::shared_ptr<const ir::Model> m_model;
    std::shared_ptr<const ir::Model> m_graph;
    std::shared_ptr<const pipeline::PreparedModel> m_prepared;
    QString m_path;
    PlanState m_state;
    std::vector<schedule::FusionViolation> m_violations;
    support::DiagnosticList m_diagnostics;
    QString m_lastRefusal;
    bool m_loadedFromFile = false;
    std::vector<target::GpuProfile> m_custom;
    std::optional<PlanState> m_initialState;
    target::GpuProfile m_targetHardware;
    // plannerAdvice()'s FusePlanner plan, for this graph and the hardware of this JSON.
    mutable std::weak_ptr<const ir::Model> m_advisorGraph;
    mutable std::string m_advisorHardware;
    mutable schedule::FusionPlan m_advisorPlan;
};

/// The Graph view's edge tooltips for `plans`' current plan (MainWindow's fusion wiring): per
/// crossing edge schedule::edgeReasonText with `fuseShortcut` as text, e.g. "A (g1) → B (g2): not
/// one kernel" and the refusal, or "fusible: select both nodes and Fuse (Ctrl+G)".
std::vector<views::EdgeFusionNote> edgeFusionNotes(const PlanSession& plans, const QKeySequence& fuseShortcut);

}  // namespace tessera::app
