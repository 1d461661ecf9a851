#include "app/gui/run_controller.h"

#include <QAction>
#include <QActionGroup>
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QProgressBar>
#include <QSignalBlocker>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QTime>
#include <QToolBar>
#include <QToolButton>

#include <algorithm>
#include <set>

#include "app/gui/document.h"
#include "app/gui/plan_session.h"
#include "app/gui/run_results.h"
#include "app/gui/run_session.h"
#include "app/gui/run_targets.h"
#include "app/gui/schedule_controller.h"
#include "app/gui/status_widgets.h"
#include "core/pipeline/user_schedule.h"
#include "views/code/code_panel.h"
#include "views/code/code_view.h"
#include "views/graph/graph_view.h"
#include "views/timing/timing_panel.h"

namespace tessera::app {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

/// The applied kernel mappings as one comparable key.
std::string mappingsKey(const std::vector<ir::KernelScheduleDecl>& schedules)
{
    std::string k;
    for (const auto& s : schedules) {
        const pipeline::ScheduleMappings m = pipeline::scheduleMappings(s);
        k += s.subject + "=" + m.grid + ";" + m.block + "|";
    }
    return k;
}

/// True when both plans fuse the same sets of ops (singles and group names do not matter).
bool sameFusedGroups(const schedule::FusionPlan& a, const schedule::FusionPlan& b)
{
    auto fused = [](const schedule::FusionPlan& p) {
        std::set<std::set<std::string>> r;
        for (const auto& g : p.groups)
            if (g.ops.size() > 1)
                r.insert(std::set<std::string>(g.ops.begin(), g.ops.end()));
        return r;
    };
    return fused(a) == fused(b);
}

}  // namespace

RunController::RunController(Document* doc, const Placement& place)
    : QObject(place.window), m_doc(doc), m_window(place.window), m_graph(place.graph), m_bottomTab(place.bottomTab)
{
    createActions(place.runMenu, place.tools);
    createDocks(place.rightTab, place.viewMenu);
    createStatusWidgets();

    RunSession* runs = doc->runs();
    connect(runs, &RunSession::started, this, &RunController::onRunStarted);
    connect(runs, &RunSession::progress, this,
            [this](quint64, double fraction, const QString& stage) { onRunProgress(fraction, stage); });
    connect(runs, &RunSession::compiled, this, &RunController::onRunCompiled);
    connect(runs, &RunSession::cudaCompiled, this, &RunController::onCudaCompiled);
    connect(doc, &Document::runFinished, this, &RunController::onRunFinished);
    connect(doc, &Document::targetChanged, this, &RunController::onTargetChanged);
    connect(m_checkAction, &QAction::toggled, doc, &Document::setCheck);
    connect(m_fallbackAction, &QAction::toggled, doc, &Document::setFallbackReference);
    connect(doc, &Document::runOptionsChanged, this, [this] {
        m_checkAction->setChecked(m_doc->check());
        m_fallbackAction->setChecked(m_doc->fallbackReference());
    });
    connect(doc, &Document::modelChanged, this, [this] {
        m_runAction->setEnabled(true);
        clearResults(tr("No generated code yet: Run > Run (CPU) (Ctrl+R) compiles the model."),
                     tr("No run yet: Run > Run (CPU) (Ctrl+R) times every kernel."));
    });
    connect(doc, &Document::modelUpdated, this, [this] {
        m_runAction->setEnabled(true);
        clearResults(tr("The program changed: Run (Ctrl+R) compiles it, or turn on Run > Live (Ctrl+L)."),
                     tr("The program changed: Run (Ctrl+R) times it again."));
    });
    connect(doc, &Document::historyChanged, this, [this] { m_timing->setHistory(m_doc->runHistory().snapshot()); });
    connect(doc, &Document::recordShown, this, [this] {
        if (m_doc->shownRecord()) {
            m_timing->setSnapshot(recordTimingSnapshot(*m_doc->shownRecord()));
            m_timingDock->show();
        }
    });
    connect(doc->plans(), &PlanSession::planChanged, this, &RunController::onPlanChanged);
    onTargetChanged();
}

void RunController::attachSchedules()
{
    connect(m_doc->schedules(), &ScheduleController::schedulesChanged, this, &RunController::onSchedulesChanged);
}

void RunController::createActions(QMenu* run, QToolBar* tools)
{
    m_runAction = run->addAction(tr("&Run (CPU)"), this, &RunController::startRun);
    m_runAction->setObjectName(QStringLiteral("runAction"));
    m_runAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_runAction->setToolTip(tr("Compile every kernel, run it on the CPU in tessera-runner and time it (Ctrl+R)"));
    m_runAction->setEnabled(false);
    m_stopAction = run->addAction(tr("&Stop"), this, &RunController::stopRun);
    m_stopAction->setObjectName(QStringLiteral("stopAction"));
    m_stopAction->setShortcut(QKeySequence(Qt::Key_Escape));
    m_stopAction->setToolTip(tr("Cancel the run (Esc)"));
    m_stopAction->setEnabled(false);
    run->addSeparator();
    m_checkAction = run->addAction(tr("&Check against Reference"));
    m_checkAction->setObjectName(QStringLiteral("checkAction"));
    m_checkAction->setCheckable(true);
    m_checkAction->setChecked(m_doc->check());
    m_checkAction->setToolTip(tr("Compare every kernel's outputs with the reference interpreter"));
    m_fallbackAction = run->addAction(tr("Reference Interpreter for &Unsupported Ops"));
    m_fallbackAction->setCheckable(true);
    m_fallbackAction->setChecked(m_doc->fallbackReference());
    m_fallbackAction->setToolTip(tr("Ops without a code generator run in the reference interpreter "
                                    "(tessera-cli run --fallback-reference) instead of stopping the compile"));
    m_inputsAction = run->addAction(tr("&Inputs..."), this, &RunController::showRunInputs);
    m_inputsAction->setObjectName(QStringLiteral("inputsAction"));
    m_inputsAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_I));
    m_inputsAction->setToolTip(tr("Feed inputs from .npy files and compare the outputs with expected .npy files "
                                  "(tessera-cli run --input / --expect) (Ctrl+Shift+I)"));
    run->addSeparator();
    m_targetMenu = run->addMenu(tr("&Target"));
    m_targetMenu->setObjectName(QStringLiteral("targetMenu"));
    m_targetMenu->setToolTipsVisible(true);
    m_targetGroup = new QActionGroup(this);
    m_targetGroup->setExclusive(true);
    m_targetCombo = new QComboBox(m_window);
    m_targetCombo->setObjectName(QStringLiteral("targetCombo"));
    m_targetCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_targetCombo->setToolTip(tr("Where Run compiles and runs the model"));
    connect(m_targetCombo, &QComboBox::activated, m_doc, [this](int index) { m_doc->setCurrentTargetIndex(index, true); });

    auto* targetLabel = new QLabel(tr(" Target "), m_window);
    targetLabel->setBuddy(m_targetCombo);
    tools->addWidget(targetLabel);
    tools->addWidget(m_targetCombo);
    tools->addAction(m_runAction);
    tools->addAction(m_stopAction);
    tools->addAction(m_checkAction);
}

void RunController::createStatusWidgets()
{
    m_runLabel = new QLabel(m_window);
    m_runLabel->setObjectName(QStringLiteral("runStatus"));
    m_runLabel->setTextFormat(Qt::PlainText);
    m_runLabel->setMaximumWidth(620);
    m_runProgress = new QProgressBar(m_window);
    m_runProgress->setObjectName(QStringLiteral("runProgress"));
    m_runProgress->setRange(0, 1000);
    m_runProgress->setMaximumWidth(160);
    m_runProgress->setMaximumHeight(16);
    m_runProgress->setTextVisible(false);
    m_runCancel = new QToolButton(m_window);
    m_runCancel->setText(tr("Cancel"));
    m_runCancel->setObjectName(QStringLiteral("cancelRun"));
    m_runCancel->setToolTip(tr("Cancel the run (Esc)"));
    connect(m_runCancel, &QToolButton::clicked, this, &RunController::stopRun);
    QStatusBar* bar = m_window->statusBar();
    bar->addWidget(m_runLabel);
    bar->addWidget(m_runProgress);
    bar->addWidget(m_runCancel);
    m_targetLabel = new QLabel(m_window);
    m_targetLabel->setObjectName(QStringLiteral("targetStatus"));
    bar->addPermanentWidget(m_targetLabel);
    m_targetLabel->setText(targetStatusText());
    setRunBusy(false);
    m_runLabel->hide();
}

QString RunController::targetStatusText() const { return tr("Target: %1").arg(m_doc->currentTarget().label); }

QString RunController::runStatusText() const { return m_runLabel->text(); }

void RunController::setRunToolTip(const QString& tip) { m_runLabel->setToolTip(tip); }

void RunController::clearResults(const QString& code, const QString& timings)
{
    m_compiled.reset();
    m_cudaModule.reset();
    m_code->clear(code);
    m_timing->clear(timings);
    m_runLabel->clear();
    m_runLabel->hide();
    emit resultsCleared();
}

void RunController::onPlanChanged()
{
    PlanSession* plans = m_doc->plans();
    if (!plans->ready())
        return;
    // Results of a run compiled with another plan describe kernels that no longer exist: drop them
    // (statuses, timings, roofline dots) rather than show them next to the new plan.
    // Compared with the plan the run was asked for (the compile may have split a group it could
    // not fuse; that is not a change of plan).
    const std::optional<schedule::FusionPlan>& asked = m_doc->runs()->lastOutcome().settings.compile.plan;
    if (m_compiled && !sameFusedGroups(asked ? *asked : m_compiled->plan, plans->plan())) {
        m_graph->setKernelStatuses({});
        m_code->clear(tr("The fusion plan changed: run again (Ctrl+R) to generate the new kernels."));
        m_timing->clear(tr("The fusion plan changed: run again (Ctrl+R) to compile and time the new kernels."));
        m_compiled.reset();
        emit resultsCleared();
        m_doc->showMessage(tr("Fusion plan changed: the last run's results were cleared; run again (Ctrl+R)"), 8000);
    }
}

void RunController::onSchedulesChanged()
{
    // The code on screen was generated with other mappings: say so until the next run.
    if (m_compiled && m_code->hasModule() &&
        mappingsKey(m_doc->runs()->lastOutcome().settings.compile.schedules) != mappingsKey(m_doc->schedules()->schedules()))
        m_code->showNote(tr("kernel mappings changed since this code was generated: run again (Ctrl+R)"));
}

void RunController::onTargetChanged()
{
    const std::vector<RunTarget>& targets = m_doc->targets();
    const int index = m_doc->currentTargetIndex();
    // The list is rebuilt when the probe changed it; otherwise only the selection moves.
    bool sameList = m_targetCombo->count() == static_cast<int>(targets.size());
    for (int i = 0; sameList && i < m_targetCombo->count(); ++i)
        sameList = m_targetCombo->itemData(i).toString() == targets[static_cast<std::size_t>(i)].id &&
                   m_targetCombo->itemText(i) == targets[static_cast<std::size_t>(i)].label;
    if (!sameList) {
        const QSignalBlocker block(m_targetCombo);
        m_targetCombo->clear();
        m_targetMenu->clear();
        for (QAction* a : m_targetGroup->actions())
            m_targetGroup->removeAction(a);
        for (std::size_t i = 0; i < targets.size(); ++i) {
            const RunTarget& t = targets[i];
            const int row = static_cast<int>(i);
            m_targetCombo->addItem(t.label, t.id);
            m_targetCombo->setItemData(row, t.toolTip, Qt::ToolTipRole);
            QAction* a = m_targetMenu->addAction(t.label);
            a->setData(t.id);
            a->setToolTip(t.toolTip);
            a->setStatusTip(t.toolTip);
            a->setCheckable(true);
            a->setEnabled(t.selectable());
            m_targetGroup->addAction(a);
            connect(a, &QAction::triggered, m_doc, [this, row] { m_doc->setCurrentTargetIndex(row, true); });
            if (!t.selectable()) {
                // Listed (so the user sees CUDA is on its way) but not choosable.
                if (auto* model = qobject_cast<QStandardItemModel*>(m_targetCombo->model()))
                    model->item(row)->setEnabled(false);
            }
        }
    }
    const RunTarget t = m_doc->currentTarget();
    {
        const QSignalBlocker block(m_targetCombo);
        m_targetCombo->setCurrentIndex(index);
    }
    m_targetCombo->setToolTip(t.toolTip);
    const QList<QAction*> actions = m_targetGroup->actions();
    if (index >= 0 && index < actions.size())
        actions[index]->setChecked(true);
    m_runAction->setText(tr("&Run (%1)").arg(t.shortName));
    m_runAction->setToolTip(t.kind == RunTarget::Kind::CudaCompileOnly
                                ? tr("Compile every kernel to CUDA C and PTX (%1); nothing runs (Ctrl+R)").arg(t.arch)
                                : tr("Compile every kernel, run it on %1 in tessera-runner and time it (Ctrl+R)")
                                      .arg(t.kind == RunTarget::Kind::CudaDevice ? t.label : tr("the CPU")));
    if (m_targetLabel != nullptr) {
        m_targetLabel->setText(targetStatusText());
        m_targetLabel->setToolTip(t.toolTip);
    }
    }

void RunController::startRun()
{
    if (!m_doc->model()) {
        setRunMessage(tr("Open a model first (File > Open)"), true);
        return;
    }
    if (m_runBlocked && m_runBlocked())
        return;
    m_doc->runs()->start(m_doc->model(), m_doc->runSettings());
}

void RunController::stopRun()
{
    if (m_doc->runs()->isBusy())
        m_doc->runs()->cancel();
}

void RunController::setRunBusy(bool busy)
{
    setStatusWidgetVisible(m_window->statusBar(), m_runProgress, busy);
    setStatusWidgetVisible(m_window->statusBar(), m_runCancel, busy);
    m_stopAction->setEnabled(busy);
}

void RunController::setRunMessage(const QString& text, bool error)
{
    m_runLabel->setStyleSheet(error ? QStringLiteral("color: #c62828;") : QString());
    const QString firstLine = text.section(QLatin1Char('\n'), 0, 0);
    m_runLabel->setText(QFontMetrics(m_runLabel->font()).elidedText(firstLine, Qt::ElideRight, m_runLabel->maximumWidth()));
    m_runLabel->setToolTip(text);
    setStatusWidgetVisible(m_window->statusBar(), m_runLabel, true);
}

void RunController::onRunStarted()
{
    if (!m_runDocksShown) {
        // The first run opens the result docks; later the user's arrangement stays.
        m_runDocksShown = true;
        m_codeDock->show();
        m_codeDock->raise();
        m_timingDock->show();
        m_timingDock->raise();
        if (m_rooflineDock != nullptr)
            m_rooflineDock->show();
        // CUDA C and PTX side by side want more room than one module.
        const int share = m_doc->currentTarget().isCuda() ? m_window->width() / 2 : m_window->width() * 2 / 5;
        m_window->resizeDocks({m_codeDock}, {std::max(480, share)}, Qt::Horizontal);
        // Room for the summary, several table rows and the history chart (at 1280x800 too).
        m_window->resizeDocks({m_timingDock},
                              {std::max(m_timingDock->minimumSizeHint().height() + 100, m_window->height() * 2 / 5)},
                              Qt::Vertical);
        // The Roofline chart takes the lower part of the right column.
        if (m_rooflineDock != nullptr)
            m_window->resizeDocks({m_rooflineDock}, {std::max(300, m_window->height() * 9 / 20)}, Qt::Vertical);
    }
    m_doc->setProblems(Document::ProblemSource::Run, {});
    m_graph->clearKernelStatuses();
    m_timing->clear(tr("Running..."));
    m_runProgress->setRange(0, 1000);
    m_runProgress->setValue(0);
    m_runEta.start();
    setRunMessage(tr("Run: starting..."), false);
    setRunBusy(true);
}

void RunController::onRunProgress(double fraction, const QString& stage)
{
    // RunSession's fraction is in time and moves per kernel (and with the clock while the
    // compiler runs), so the bar and the estimate are meaningful in every phase.
    m_runProgress->setRange(0, 1000);
    m_runProgress->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
    setRunMessage(tr("Run: %1...").arg(stage) + m_runEta.suffix(fraction), false);
}

void RunController::showCompiledCode()
{
    m_cudaModule.reset();
    if (m_compiled->target == lower::Target::Cuda) {
        const QString placeholder = m_compiled->kernelCount() == 0 ? tr("No kernels: nothing to compile to PTX.")
                                                                   : tr("Compiling to PTX with NVRTC...");
        m_code->setCudaModule(fromStd(m_compiled->code.source), moduleTitle(*m_compiled), placeholder);
    } else {
        m_code->setModule(fromStd(m_compiled->code.source), moduleTitle(*m_compiled));
    }
}

void RunController::showPtx()
{
    if (!m_cudaModule || !m_code->isCuda())
        return;
    m_code->setPtx(fromStd(m_cudaModule->ptx), ptxTitle(*m_cudaModule));
}

void RunController::onRunCompiled()
{
    m_compiled = m_doc->runs()->currentCompiled();
    if (!m_compiled || !m_doc->model())
        return;
    showCompiledCode();
    m_graph->setKernelStatuses(compileStatuses(*m_compiled, m_doc->model()->graph));
    showNodeResults(m_graph->selectedNodeId());
}

void RunController::onCudaCompiled()
{
    if (!m_compiled)
        return;
    m_cudaModule = m_doc->runs()->currentCudaModule();
    showPtx();
}

void RunController::onRunFinished(bool ok)
{
    setRunBusy(false);
    const RunOutcome& out = m_doc->runs()->lastOutcome();
    if (out.cancelled) {
        setRunMessage(tr("Run cancelled"), false);
        m_timing->clear(tr("Run cancelled."));
        emit runFinished(false);
        return;
    }
    // A result for a model that is no longer on screen (the load finished after the run) is
    // dropped: a new model cancels the run, so this only guards the order of queued events.
    if (out.model != m_doc->model()) {
        emit runFinished(false);
        return;
    }
    if (out.compiled && out.compiled != m_compiled) {
        m_compiled = out.compiled;
        showCompiledCode();
    }
    if (out.cudaModule && out.cudaModule != m_cudaModule) {
        m_cudaModule = out.cudaModule;
        showPtx();
    }
    if (!ok) {
        QString message;
        for (const support::Diagnostic& d : out.diagnostics.items()) {
            if (d.severity == support::Severity::Error) {
                // "node 'X' (Op): ..." says where; runner and compiler messages name it already.
                const bool node = d.where.rfind("node '", 0) == 0;
                message = node ? fromStd(d.where + ": " + d.message) : fromStd(d.message);
                break;
            }
        }
        // The core's advice names the CLI flag; say where the same switch is in the window.
        if (!out.compiled && !out.settings.compile.fallbackReference &&
            out.diagnostics.hasCode(support::DiagnosticCode::NoCodeGenerator))
            message += tr(" (in the window: Run > Reference Interpreter for Unsupported Ops)");
        const QString stage = !out.compiled    ? tr("Compile failed")
                              : out.nvrtcFailed ? tr("CUDA compile failed")
                                                : tr("Run failed");
        if (out.nvrtcFailed)
            m_code->clearPtx(tr("NVRTC could not compile the module: %1").arg(message));
        setRunMessage(QStringLiteral("%1: %2").arg(stage, message), true);
        m_timing->clear(QStringLiteral("%1: %2").arg(stage, message));
        if (m_compiled) {
            views::KernelStatusMap statuses = compileStatuses(*m_compiled, m_doc->model()->graph);
            // A kernel that crashed or hung in the runner, or the node the error names, is the
            // one to look at.
            for (const support::Diagnostic& d : out.diagnostics.items()) {
                const std::string culprit = diagnosticNode(d);
                if (!culprit.empty() && statuses.count(culprit)) {
                    statuses[culprit] = {views::KernelStatus::Failed, fromStd(d.message)};
                    const int id = m_graph->operatorIdByName(culprit);
                    if (id >= 0)
                        m_graph->selectNode(id, true);
                    break;
                }
            }
            m_graph->setKernelStatuses(statuses);
        }
        m_bottomTab->show();
        m_bottomTab->raise();
        emit runFinished(false);
        return;
    }

    if (out.compileOnly) {
        // Nothing ran: the kernels are compiled, not failed.
        m_graph->setKernelStatuses(compileStatuses(*m_compiled, m_doc->model()->graph));
        const QString arch = fromStd(out.settings.run.cudaArch);
        const int n = m_compiled->kernelCount();
        const QString text = tr("compiled %1 CUDA %2 to PTX (%3); %4: not run")
                                 .arg(n)
                                 .arg(n == 1 ? tr("kernel") : tr("kernels"), arch, compileOnlyReason(m_doc->runs()->deviceProbe()));
        setRunMessage(text, false);
        QString tip = text;
        if (out.cudaModule)
            tip += QStringLiteral(" (%1)").arg(nvrtcNote(*out.cudaModule));
        m_runLabel->setToolTip(tip + QLatin1Char('\n') + m_doc->currentTarget().toolTip);
        m_timing->clear(text.left(1).toUpper() + text.mid(1) + QLatin1Char('.'));
        showNodeResults(m_graph->selectedNodeId());
        emit runFinished(true);
        return;
    }

    const pipeline::RunReport& report = *out.report;
    m_graph->setKernelStatuses(runStatuses(*m_compiled, report, m_doc->model()->graph));
    if (out.settings.run.time) {
        m_doc->addToHistory(report, out.settings, QTime::currentTime().toString(QStringLiteral("HH:mm:ss")).toStdString());
    }
    m_timing->setSnapshot(timingSnapshot(report, out.settings.run));
    emit reportShown(report);
    QStringList summary;
    summary << (report.kernels.size() == 1 ? tr("Ran 1 kernel") : tr("Ran %1 kernels").arg(report.kernels.size()));
    if (report.device)
        summary.last() += tr(" on CUDA %1 (%2)").arg(report.device->ordinal).arg(fromStd(report.device->name));
    if (out.settings.run.time)
        summary << tr("end to end %1").arg(views::TimingTableModel::formatSeconds(report.total.median));
    bool failed = false;
    // The outputs' verdict first: it is what the user compares.
    if (!report.outputChecks.empty()) {
        int badOut = 0;
        QString firstBad;
        for (const pipeline::OutputCheck& c : report.outputChecks)
            if (!c.comparison.ok && badOut++ == 0)
                firstBad = tr("output '%1' differs from the %2")
                               .arg(fromStd(c.tensor), c.against == "expected" ? tr("expected tensor") : fromStd(c.against));
        failed = badOut > 0;
        summary << (badOut == 0 ? tr("outputs match") : firstBad);
    }
    const bool kernelsChecked = std::any_of(report.kernels.begin(), report.kernels.end(),
                                            [](const pipeline::KernelReport& k) { return k.checked; });
    if (kernelsChecked) {
        int bad = 0;
        for (const pipeline::KernelReport& k : report.kernels)
            bad += k.passed ? 0 : 1;
        failed = failed || bad > 0;
        summary << (bad == 0 ? tr("all match the reference")
                             : tr("%1 of %2 outside tolerance").arg(bad).arg(report.kernels.size()));
    }
    setRunMessage(summary.join(QStringLiteral(" \u00b7 ")), failed);
    showNodeResults(m_graph->selectedNodeId());
    emit runFinished(true);
}

void RunController::showRunInputs()
{
    if (!m_doc->model()) {
        m_doc->showMessage(tr("Open a model first: its inputs and outputs are listed here"), 4000);
        return;
    }
    RunInputsDialog dialog(m_doc->model()->graph, m_doc->runInputFiles(), m_window);
    if (dialog.exec() != QDialog::Accepted)
        return;
    m_doc->setRunInputs(dialog.files(), dialog.data());
    m_doc->showMessage(m_doc->runInputFiles().empty() ? tr("Inputs seeded; no expected outputs")
                                                     : tr("Run inputs set: the next run feeds and compares them"),
                             4000);
}

void RunController::showNodeResults(int nodeId)
{
    const views::GraphSnapshot* snap = m_graph->snapshot();
    const views::SnapshotNode* n = snap ? snap->find(nodeId) : nullptr;
    const bool op = n != nullptr && n->kind == views::SnapshotNodeKind::Operator;
    m_timing->selectKernel(op ? n->name : std::string());
    if (!m_compiled || !m_code->hasModule())
        return;
    if (!op) {
        m_code->showNote(tr("select an operator to see its kernel"));
        return;
    }
    const QString name = fromStd(n->name);
    const pipeline::CompiledStep* step = stepForNode(*m_compiled, n->name);
    if (step == nullptr)
        m_code->showNote(tr("'%1' was folded into a constant at compile time: no kernel").arg(name));
    else if (step->kind == pipeline::StepKind::Reference)
        m_code->showNote(tr("'%1' (%2) has no code generator: it runs in the reference interpreter")
                             .arg(name, fromStd(step->opType)));
    else
        m_code->showKernel(name, step->firstLine, step->lastLine, fromStd(step->entry));
}

void RunController::createDocks(QDockWidget* rightTab, QMenu* viewMenu)
{
    m_code = new views::CodePanel(m_window);
    m_code->setObjectName(QStringLiteral("codePanel"));
    // A click on a generated line selects the kernel those lines belong to, everywhere.
    connect(m_code->codeView(), &views::CodeView::lineClicked, this, [this](int line) {
        if (!m_compiled)
            return;
        for (const pipeline::CompiledStep& step : m_compiled->steps) {
            if (step.kind != pipeline::StepKind::Reference && step.firstLine > 0 && line >= step.firstLine &&
                line <= step.lastLine) {
                emit kernelActivated(fromStd(step.name));
                return;
            }
        }
    });
    m_codeDock = new QDockWidget(tr("Code"), m_window);
    m_codeDock->setObjectName(QStringLiteral("codeDock"));
    m_codeDock->setWidget(m_code);
    m_window->addDockWidget(Qt::RightDockWidgetArea, m_codeDock);
    m_window->tabifyDockWidget(rightTab, m_codeDock);
    m_codeDock->hide();

    m_timing = new views::TimingPanel(m_window);
    m_timing->setObjectName(QStringLiteral("timingPanel"));
    m_timingDock = new QDockWidget(tr("Timings"), m_window);
    m_timingDock->setObjectName(QStringLiteral("timingDock"));
    m_timingDock->setWidget(m_timing);
    m_window->addDockWidget(Qt::BottomDockWidgetArea, m_timingDock);
    m_window->tabifyDockWidget(m_bottomTab, m_timingDock);
    m_timingDock->hide();
    connect(m_timing, &views::TimingPanel::kernelSelected, this, &RunController::kernelActivated);

    QAction* toggleCode = m_codeDock->toggleViewAction();
    toggleCode->setText(tr("&Code"));
    viewMenu->addAction(toggleCode);
    QAction* toggleTimings = m_timingDock->toggleViewAction();
    toggleTimings->setText(tr("&Timings"));
    viewMenu->addAction(toggleTimings);
}

}  // namespace tessera::app
