#include "app/gui/check_controller.h"

#include <algorithm>

#include <QDockWidget>
#include <QMenu>

#include <QMainWindow>

#include "app/gui/document.h"
#include "app/gui/run_session.h"
#include "views/debug/error_heatmap_view.h"
#include "views/timing/timing_panel.h"

namespace tessera::app {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

CheckController::CheckController(Document* doc, QMainWindow* window, QDockWidget* timings,
                                 views::TimingPanel* timingPanel, QMenu* viewMenu)
    : QObject(window), m_doc(doc), m_window(window), m_dock(new QDockWidget(tr("Check"), window)),
      m_view(new views::ErrorHeatmapView(m_dock)), m_rerun(std::make_unique<JobChannel>())
{
    m_view->setObjectName(QStringLiteral("errorHeatmap"));
    m_dock->setObjectName(QStringLiteral("checkDock"));
    m_dock->setWidget(m_view);
    // Beside the Timings table: the failing row and its error map read together.
    window->addDockWidget(Qt::BottomDockWidgetArea, m_dock);
    if (timings != nullptr)
        window->splitDockWidget(timings, m_dock, Qt::Horizontal);
    m_dock->hide();
    QAction* toggle = m_dock->toggleViewAction();
    toggle->setText(tr("Chec&k"));
    toggle->setToolTip(tr("The error map of a kernel whose outputs differ from the reference interpreter"));
    if (viewMenu)
        viewMenu->addAction(toggle);

    connect(doc, &Document::runFinished, this, &CheckController::onRunFinished);
    connect(m_view, &views::ErrorHeatmapView::rerunRequested, this, &CheckController::onRerunRequested);
    if (timingPanel != nullptr)
        connect(timingPanel, &views::TimingPanel::checkDetailsRequested, this,
                [this](const QString& name) { showKernel(name); });
}

CheckController::~CheckController() = default;

views::ErrorHeatmapSnapshot CheckController::snapshotFor(const pipeline::KernelReport& k)
{
    views::ErrorHeatmapSnapshot s;
    s.kernel = k.name;
    s.opType = k.opType;
    s.note = k.keptNote;
    s.canRerun = !k.checkInputs.empty();
    std::vector<views::ErrorTensor> passing;
    for (const pipeline::OutputCheck& c : k.checks) {
        views::ErrorTensor t;
        t.name = c.tensor;
        t.got = c.actual;
        t.want = c.expected;
        t.tolerance = c.tolerance;
        if (!c.actual)
            t.note = c.comparison.ok ? "output '" + c.tensor + "' matches the reference: " + c.comparison.summary()
                                     : "output '" + c.tensor + "': " + c.comparison.summary() +
                                           (k.keptNote.empty() ? std::string() : " (" + k.keptNote + ")");
        (c.comparison.ok ? passing : s.outputs).push_back(std::move(t));
    }
    s.outputs.insert(s.outputs.end(), passing.begin(), passing.end());
    return s;
}

bool CheckController::showKernel(const QString& name)
{
    if (!m_report)
        return false;
    for (const pipeline::KernelReport& k : m_report->kernels) {
        if (fromStd(k.name) != name || !k.checked)
            continue;
        // A re-run of the kernel shown before is of no use any more.
        m_rerun->invalidate();
        m_busy = false;
        m_view->setSnapshot(snapshotFor(k));
        const bool wasHidden = m_dock->isHidden();
        m_dock->show();
        m_dock->raise();
        // A heatmap needs height; the user's own size is kept once the dock is open.
        if (wasHidden)
            m_window->resizeDocks({m_dock}, {std::max(m_dock->height(), m_window->height() * 2 / 5)}, Qt::Vertical);
        return true;
    }
    return false;
}

void CheckController::onRunFinished(bool ok)
{
    m_rerun->invalidate();
    m_busy = false;
    const RunOutcome& out = m_doc->runs()->lastOutcome();
    if (!ok || !out.report || !out.report->checked) {
        if (!out.compileOnly && (out.cancelled || !ok)) {
            m_report.reset();
            m_compiled.reset();
            m_view->clear(tr("The last run did not finish: no check to show."));
        }
        return;
    }
    m_report = out.report;
    m_compiled = out.compiled;
    // The first failing kernel is where an error starts; when every kernel matches but a graph
    // output does not (an expected tensor from elsewhere, or an error no single kernel shows),
    // the outputs themselves are shown.
    for (const pipeline::KernelReport& k : m_report->kernels) {
        if (k.checked && !k.passed) {
            showKernel(fromStd(k.name));
            return;
        }
    }
    const bool outputsFail = std::any_of(m_report->outputChecks.begin(), m_report->outputChecks.end(),
                                         [](const pipeline::OutputCheck& c) { return !c.comparison.ok; });
    if (outputsFail) {
        views::ErrorHeatmapSnapshot s;
        s.kernel = "graph outputs";
        s.opType = "end to end";
        std::vector<views::ErrorTensor> passing;
        for (const pipeline::OutputCheck& c : m_report->outputChecks) {
            views::ErrorTensor t;
            t.name = c.tensor + (c.against == "expected" ? " (vs expected)" : " (vs reference)");
            t.got = c.actual;
            t.want = c.expected;
            t.tolerance = c.tolerance;
            if (!c.actual) t.note = "output '" + c.tensor + "' matches the " + c.against + ": " + c.comparison.summary();
            (c.comparison.ok ? passing : s.outputs).push_back(std::move(t));
        }
        s.outputs.insert(s.outputs.end(), passing.begin(), passing.end());
        m_view->setSnapshot(s);
        m_dock->show();
        m_dock->raise();
        return;
    }
    m_view->clear(m_report->outputChecks.empty() ? tr("Every kernel matches the reference interpreter.")
                                                 : tr("The outputs and every kernel match."));
}

void CheckController::onRerunRequested(const QString& kernel)
{
    if (!m_report || !m_compiled)
        return;
    const pipeline::KernelReport* k = nullptr;
    for (const pipeline::KernelReport& r : m_report->kernels)
        if (fromStd(r.name) == kernel)
            k = &r;
    if (!k || k->checkInputs.empty())
        return;
    const JobChannel::Ticket ticket = m_rerun->begin();
    m_busy = true;
    m_view->setRerunBusy();
    // The job holds the report (and so the kept inputs) and the compiled model alive itself.
    auto report = m_report;
    auto compiled = m_compiled;
    const std::string name = k->name;
    const auto* inputs = &k->checkInputs;
    m_rerun->run(
        ticket,
        [report, compiled, name, inputs, cancel = ticket.cancel] {
            return pipeline::rerunInReference(*compiled, name, *inputs, &cancel);
        },
        [this](support::Expected<std::vector<std::pair<std::string, ir::TensorData>>> result) {
            m_busy = false;
            if (result.ok()) {
                m_view->setRerunResult(*result);
                emit rerunFinished(true);
            } else {
                QString message;
                for (const support::Diagnostic& d : result.diagnostics().items())
                    if (d.severity == support::Severity::Error && message.isEmpty())
                        message = fromStd(d.message);
                m_view->setRerunError(message);
                emit rerunFinished(false);
            }
        });
}

}  // namespace tessera::app
