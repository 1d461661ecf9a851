#include "app/gui/compare_controller.h"

#include <QAction>
#include <QDateTime>
#include <QFileInfo>
#include <QMenu>
#include <QStatusBar>

#include "app/gui/document.h"
#include "app/gui/run_results.h"
#include "core/pipeline/roofline_points.h"
#include "views/code/code_panel.h"
#include "views/code/line_diff.h"
#include "views/graph/graph_view.h"
#include "views/roofline/roofline_view.h"
#include "views/timing/timing_panel.h"

namespace tessera::app {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

/// Lines first..last (1-based, inclusive) of `text`, each ending in '\n'.
std::string linesOf(const std::string& text, int first, int last)
{
    std::string out;
    int line = 1;
    std::size_t start = 0;
    while (start <= text.size() && line <= last) {
        std::size_t nl = text.find('\n', start);
        if (nl == std::string::npos)
            nl = text.size();
        if (line >= first)
            out.append(text, start, nl - start).push_back('\n');
        start = nl + 1;
        ++line;
    }
    return out;
}

}  // namespace

CompareController::CompareController(Document* doc, CompareViews views, QMenu* runMenu)
    : QObject(doc), m_doc(doc), m_views(views), m_pinAction(new QAction(tr("&Pin Run"), this)),
      m_unpinAction(new QAction(tr("U&npin"), this))
{
    m_pinAction->setObjectName(QStringLiteral("pinRunAction"));
    m_pinAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_B));
    m_pinAction->setToolTip(tr("Make the last run the baseline: Timings, Roofline and Code compare later runs "
                               "with it (Ctrl+Shift+B)"));
    m_unpinAction->setObjectName(QStringLiteral("unpinRunAction"));
    m_unpinAction->setToolTip(tr("End the comparison with the pinned run"));
    connect(m_pinAction, &QAction::triggered, this, [this] { pin(); });
    connect(m_unpinAction, &QAction::triggered, this, &CompareController::unpin);
    if (runMenu) {
        runMenu->addSeparator();
        runMenu->addAction(m_pinAction);
        runMenu->addAction(m_unpinAction);
    }
    connect(doc, &Document::runFinished, this, &CompareController::onRunFinished);
    connect(doc, &Document::modelChanged, this, &CompareController::onModelShown);
    connect(m_views.code, &views::CodePanel::diffToggled, this, [this](bool on) {
        if (on)
            refreshDiff();
    });
    connect(m_views.graph, &views::GraphView::nodeSelected, this, [this] {
        if (m_views.code->isDiffShown())
            refreshDiff();
    });
    updateActions();
}

void CompareController::updateActions()
{
    const RunOutcome& last = m_doc->runs()->lastOutcome();
    m_pinAction->setEnabled(last.ok && last.report != nullptr);
    m_unpinAction->setEnabled(m_pinned != nullptr);
}

views::PinnedRun CompareController::pinnedRunOf(const pipeline::RunReport& report, const QString& label)
{
    views::PinnedRun p;
    p.label = label.toStdString();
    p.totalSeconds = report.total.reps > 0 ? report.total.median : 0.0;
    for (const pipeline::KernelReport& k : report.kernels)
        p.kernels.push_back({k.name, k.opType, k.ops, k.time.median, k.time.reps});
    p.threads = report.threads;
    p.target = runTargetName(report);
    if (report.device)
        p.machine = report.device->name;
    return p;
}

bool CompareController::pin()
{
    const RunOutcome& last = m_doc->runs()->lastOutcome();
    if (!last.ok || !last.report || !last.compiled) {
        m_doc->showMessage(tr("Nothing to pin: run the model first (Ctrl+R)"), 5000);
        return false;
    }
    m_pinned = std::make_unique<RunOutcome>(last);
    m_pinnedPath = m_doc->path();
    const QString label = tr("pinned %1").arg(QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")));
    m_views.timings->setPinned(std::make_shared<const views::PinnedRun>(pinnedRunOf(*last.report, label)));
    m_views.roofline->setPinnedPoints(pipeline::kernelSamples(*last.report, *last.compiled));
    m_views.code->setDiffAvailable(true);
    m_doc->showMessage(
        tr("Pinned the last run (%1 %2): the next runs are compared with it")
            .arg(last.report->kernels.size())
            .arg(last.report->kernels.size() == 1 ? tr("kernel") : tr("kernels")), 5000);
    updateActions();
    return true;
}

void CompareController::unpin()
{
    m_pinned.reset();
    m_views.timings->setPinned(nullptr);
    m_views.roofline->setPinnedPoints({});
    m_views.code->setDiffAvailable(false);
    updateActions();
}

void CompareController::onModelShown(const QString& path)
{
    if (!m_pinned)
        return;
    auto canonical = [](const QString& p) {
        const QFileInfo info(p);
        const QString c = info.canonicalFilePath();
        return c.isEmpty() ? (p.isEmpty() ? p : info.absoluteFilePath()) : c;
    };
    if (canonical(path) == canonical(m_pinnedPath))
        return;
    // Kernels of another model are not the pinned run's: every row would be new or gone and the
    // end-to-end ratio would compare two different models.
    const QString name = m_pinnedPath.isEmpty() ? tr("an unsaved program") : QFileInfo(m_pinnedPath).fileName();
    unpin();
    m_doc->showMessage(tr("Pin cleared: it was a run of %1").arg(name), 8000);
}

void CompareController::onRunFinished(bool)
{
    updateActions();
    if (m_pinned && m_views.code->isDiffShown())
        refreshDiff();
}

CompareController::KernelDiff CompareController::kernelDiff(const pipeline::CompiledModel& pinned,
                                                            const pipeline::CompiledModel& current,
                                                            const std::string& node)
{
    KernelDiff d;
    if (node.empty()) {
        d.diff = fromStd(views::unifiedDiff(pinned.code.source, current.code.source, "pinned", "current"));
        d.title = tr("Whole module: pinned run \u2192 this run (select an operator for its kernel)");
        d.note = tr("The generated module is the same in both runs.");
        return d;
    }
    const int now = current.stepOfNode(node), then = pinned.stepOfNode(node);
    const QString name = fromStd(node);
    auto code = [](const pipeline::CompiledModel& cm, int step) {
        const pipeline::CompiledStep& s = cm.steps[static_cast<std::size_t>(step)];
        return s.kind == pipeline::StepKind::Kernel && s.firstLine > 0 ? linesOf(cm.code.source, s.firstLine, s.lastLine)
                                                                        : std::string();
    };
    const std::string before = then >= 0 ? code(pinned, then) : std::string();
    const std::string after = now >= 0 ? code(current, now) : std::string();
    if (before.empty() && after.empty()) {
        d.title = tr("Kernel of '%1'").arg(name);
        d.note = tr("'%1' has no generated kernel in either run (folded, or run in the reference interpreter).").arg(name);
        return d;
    }
    auto describe = [](const pipeline::CompiledModel& cm, int step) {
        if (step < 0)
            return tr("no kernel");
        const pipeline::CompiledStep& s = cm.steps[static_cast<std::size_t>(step)];
        if (s.kind != pipeline::StepKind::Kernel)
            return tr("reference interpreter");
        return tr("'%1', lines %2\u2013%3").arg(fromStd(s.name)).arg(s.firstLine).arg(s.lastLine);
    };
    const std::string beforeName = "pinned/" + (then >= 0 ? pinned.steps[static_cast<std::size_t>(then)].name : node);
    const std::string afterName = "current/" + (now >= 0 ? current.steps[static_cast<std::size_t>(now)].name : node);
    d.diff = fromStd(views::unifiedDiff(before, after, beforeName, afterName));
    int added = 0, removed = 0;
    for (const views::DiffLine& l : views::diffLines(views::splitLines(before), views::splitLines(after))) {
        added += l.kind == views::DiffLine::Kind::Added ? 1 : 0;
        removed += l.kind == views::DiffLine::Kind::Removed ? 1 : 0;
    }
    d.title = tr("Kernel of '%1': pinned (%2) \u2192 current (%3) \u00b7 +%4 \u2212%5 lines")
                  .arg(name, describe(pinned, then), describe(current, now))
                  .arg(added)
                  .arg(removed);
    d.note = tr("The kernel's code is the same in both runs.");
    return d;
}

void CompareController::refreshDiff()
{
    views::CodePanel* code = m_views.code;
    const RunOutcome& last = m_doc->runs()->lastOutcome();
    if (!m_pinned || !m_pinned->compiled) {
        code->showCode();
        return;
    }
    const auto current = last.compiled ? last.compiled : m_doc->runs()->currentCompiled();
    if (!current) {
        code->showDiff(QString(), tr("Diff vs pinned"), tr("Run the model (Ctrl+R) to compare its code with the pinned run."));
        return;
    }
    std::string node;
    const views::GraphSnapshot* snap = m_views.graph->snapshot();
    const views::SnapshotNode* n = snap ? snap->find(m_views.graph->selectedNodeId()) : nullptr;
    if (n && n->kind == views::SnapshotNodeKind::Operator)
        node = n->name;
    const KernelDiff d = kernelDiff(*m_pinned->compiled, *current, node);
    code->showDiff(d.diff, d.title, d.note);
}

}  // namespace tessera::app
