#include "app/gui/roofline_controller.h"

#include <QAction>
#include <QDockWidget>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolButton>

#include <algorithm>

#include "app/gui/document.h"
#include "app/gui/roof_session.h"
#include "app/gui/run_controller.h"
#include "app/gui/run_results.h"
#include "app/gui/run_session.h"
#include "app/gui/run_targets.h"
#include "app/gui/status_widgets.h"
#include "core/perf/cpu_profile.h"
#include "core/perf/gpu_microbench.h"
#include "core/perf/kernel_points.h"
#include "core/perf/machine_profile.h"
#include "core/pipeline/roofline_points.h"
#include "views/roofline/energy_view.h"
#include "views/roofline/roofline_view.h"

namespace tessera::app {
namespace {

QString fromStd(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

RooflineController::RooflineController(Document* doc, RunController* runs, QMainWindow* window, QMenu* viewMenu,
                                       QMenu* runMenu)
    : QObject(window), m_doc(doc), m_runs(runs), m_window(window)
{
    createDock(viewMenu);
    createMeasurement(runMenu);
    runs->setRooflineDock(m_rooflineDock);
    runs->setRunGate([this] { return blocksRun(); });
    connect(runs, &RunController::reportShown, this, &RooflineController::showRun);
    connect(runs, &RunController::resultsCleared, this, [this] {
        m_roofline->clearPoints();
        m_energy->clearPoints();
    });
    // A new model: this machine's saved roofs, before any run.
    connect(doc, &Document::modelChanged, this, &RooflineController::showTargetRoofs);
    connect(doc, &Document::recordShown, this, [this] {
        if (m_doc->shownRecord())
            showRecord(*m_doc->shownRecord());
    });
}

void RooflineController::selectKernel(const QString& name)
{
    m_roofline->setSelectedKernel(name);
    m_energy->setSelectedKernel(name);
}

void RooflineController::showRecord(const project::RunRecord& r)
{
    m_roofline->clearPoints();
    if (r.target == "cpu" && r.fingerprint == perf::cpuFingerprint())
        m_roofline->setProfile(perf::findProfileForMachine(perf::cpuFingerprint(), perf::defaultProfileDir(), "cpu"));
    else
        m_roofline->setProfile(std::nullopt, tr("The recorded run is from %1: no roofs of that machine here")
                                                 .arg(fromStd(r.device.empty() ? r.target : r.device)));
    m_roofline->setThreads(r.threads);
    m_roofline->addPoints(recordSamples(r));
}

void RooflineController::createDock(QMenu* viewMenu)
{
    m_roofline = new views::RooflineView(m_window);
    m_roofline->setObjectName(QStringLiteral("rooflineView"));
    m_energy = new views::EnergyView(m_window);
    m_energy->setObjectName(QStringLiteral("energyView"));
    m_rooflineTabs = new QTabWidget(m_window);
    m_rooflineTabs->setObjectName(QStringLiteral("rooflineTabs"));
    m_rooflineTabs->setDocumentMode(true);
    m_rooflineTabs->addTab(m_roofline, tr("Performance"));
    m_rooflineTabs->addTab(m_energy, tr("Energy"));
    m_rooflineDock = new QDockWidget(tr("Roofline"), m_window);
    m_rooflineDock->setObjectName(QStringLiteral("rooflineDock"));
    m_rooflineDock->setWidget(m_rooflineTabs);
    // Below the Code dock in the right column (not tabbed with anything): the chart, the table
    // and the kernel's code read together.
    m_window->addDockWidget(Qt::RightDockWidgetArea, m_rooflineDock, Qt::Vertical);
    m_rooflineDock->hide();
    connect(m_roofline, &views::RooflineView::kernelSelected, this, &RooflineController::kernelActivated);
    connect(m_energy, &views::EnergyView::kernelSelected, this, &RooflineController::kernelActivated);
    // One chart mode for both tabs (setMode emits only on a change, so this does not loop).
    connect(m_roofline, &views::RooflineView::modeChanged, m_energy, &views::EnergyView::setMode);
    connect(m_energy, &views::EnergyView::modeChanged, m_roofline, &views::RooflineView::setMode);
    // The Performance tab's precision box chooses the roofs of both (the energy roof's peak).
    connect(m_roofline, &views::RooflineView::precisionChanged, m_energy, &views::EnergyView::setPrecision);
    QAction* toggle = m_rooflineDock->toggleViewAction();
    toggle->setText(tr("&Roofline"));
    viewMenu->addAction(toggle);
}

void RooflineController::showRun(const pipeline::RunReport& report)
{
    // The profile is looked up after every run, so that roofs measured meanwhile
    // (`tessera-cli roofline measure --save`) show without a restart.
    std::optional<perf::MachineProfile> profile;
    if (report.device) {
        profile = perf::findProfileForMachine(perf::gpuFingerprint(*report.device), perf::defaultProfileDir(),
                                              "cuda:" + std::to_string(report.device->ordinal));
        m_roofline->setProfile(profile, tr("No measured roofs for CUDA device %1: run `tessera-cli roofline measure "
                                           "--target cuda:%1 --save`")
                                            .arg(report.device->ordinal));
    } else {
        // A profile of the same CPU model is taken when only the fingerprint's cache field differs.
        profile = perf::findProfileForMachine(perf::cpuFingerprint(), perf::defaultProfileDir(), "cpu");
        m_roofline->setProfile(profile);
    }
    m_roofline->setThreads(report.threads);
    m_energy->setProfile(std::move(profile));
    m_energy->setThreads(report.threads);
    if (m_runs->compiled()) {
        const std::vector<perf::KernelSample> samples = pipeline::kernelSamples(report, *m_runs->compiled());
        m_roofline->addPoints(samples);
        m_energy->addPoints(views::kernelEnergies(samples, report));
    }
}

void RooflineController::createMeasurement(QMenu* runMenu)
{
    m_roofSession = new RoofSession(this);

    runMenu->addSeparator();
    m_measureRoofsAction = runMenu->addAction(tr("&Measure Roofs (CPU)"), this, &RooflineController::measureRoofs);
    m_measureRoofsAction->setObjectName(QStringLiteral("measureRoofsAction"));
    m_measureRoofsAction->setToolTip(tr("Measure this CPU's compute peaks and memory bandwidths for the Roofline chart "
                                        "(quick mode, well under a minute; tessera-cli roofline measure --target cpu "
                                        "--save)"));

    m_roofProgress = new QProgressBar(m_window);
    m_roofProgress->setObjectName(QStringLiteral("roofProgress"));
    m_roofProgress->setRange(0, 1000);
    m_roofProgress->setMaximumWidth(160);
    m_roofProgress->setMaximumHeight(16);
    m_roofProgress->setTextVisible(false);
    m_roofCancel = new QToolButton(m_window);
    m_roofCancel->setText(tr("Cancel"));
    m_roofCancel->setObjectName(QStringLiteral("cancelRoofs"));
    m_roofCancel->setToolTip(tr("Cancel the roof measurement (nothing is saved)"));
    m_window->statusBar()->addWidget(m_roofProgress);
    m_window->statusBar()->addWidget(m_roofCancel);
    m_roofProgress->hide();
    m_roofCancel->hide();

    connect(m_roofCancel, &QToolButton::clicked, this, &RooflineController::cancelMeasurement);
    connect(m_roofline, &views::RooflineView::measureRoofsRequested, this, &RooflineController::measureRoofs);
    connect(m_roofSession, &RoofSession::progress, this,
            [this](quint64, double fraction, const QString& phase) { onProgress(fraction, phase); });
    connect(m_roofSession, &RoofSession::finished, this, [this] { onFinished(); });
    connect(m_doc, &Document::targetChanged, this, &RooflineController::onTargetChanged);
    // This machine's saved roofs from the start: the chart (and its banner) is right before any run.
    showTargetRoofs();
}

void RooflineController::measureRoofs()
{
    // Kernels running next to the micro-benchmarks would make both sets of numbers wrong.
    if (m_doc->runs()->isBusy()) {
        m_runs->setRunMessage(tr("Measure roofs once the run has finished (a busy CPU measures low roofs)"), true);
        return;
    }
    m_doc->setProblems(Document::ProblemSource::Roofs, {});
    m_roofProgress->setRange(0, 1000);
    m_roofProgress->setValue(0);
    setStatusWidgetVisible(m_window->statusBar(), m_roofProgress, true);
    setStatusWidgetVisible(m_window->statusBar(), m_roofCancel, true);
    m_runs->setRunMessage(tr("Measuring roofs: starting..."), false);
    m_roofSession->start();
}

void RooflineController::cancelMeasurement()
{
    if (m_roofSession->isBusy())
        m_roofSession->cancel();
}

void RooflineController::onProgress(double fraction, const QString& phase)
{
    const double f = std::clamp(fraction, 0.0, 1.0);
    m_roofProgress->setValue(static_cast<int>(f * 1000));
    m_runs->setRunMessage(tr("Measuring roofs: %1 (%2%)...").arg(phase).arg(static_cast<int>(f * 100 + 0.5)), false);
}

void RooflineController::onFinished()
{
    setStatusWidgetVisible(m_window->statusBar(), m_roofProgress, false);
    setStatusWidgetVisible(m_window->statusBar(), m_roofCancel, false);
    const RoofOutcome& out = m_roofSession->lastOutcome();
    if (out.cancelled) {
        m_runs->setRunMessage(tr("Roof measurement cancelled: nothing was saved"), false);
        emit roofMeasurementFinished({});
        return;
    }
    m_doc->setProblems(Document::ProblemSource::Roofs, out.diagnostics);
    if (!out.ok || !out.result) {
        const support::Diagnostic* e = out.diagnostics.firstError();
        m_runs->setRunMessage(tr("Roof measurement failed: %1").arg(e ? fromStd(e->message) : tr("unknown error")), true);
        emit roofMeasurementFinished({});
        return;
    }
    if (!out.problems.empty()) {
        // Disturbed roofs would mislead every later chart of this machine: never saved unasked.
        QStringList problems;
        for (const std::string& p : out.problems)
            problems << fromStd(p);
        m_runs->setRunMessage(tr("The roofs look disturbed (%n problem(s), see Problems): the CPU was probably busy", nullptr,
                         problems.size()),
                      true);
        const bool save = m_roofSavePrompt ? m_roofSavePrompt(problems) : [&] {
            QMessageBox box(QMessageBox::Warning, tr("Save Disturbed Roofs?"),
                            tr("The measurement looks disturbed, probably by other work on this machine:"),
                            QMessageBox::Save | QMessageBox::Discard, m_window);
            box.setInformativeText(problems.join(QLatin1Char('\n')) +
                                   tr("\n\nSave these roofs anyway? Every roofline chart of this machine will use "
                                      "them. Measuring again on a quiet machine gives better roofs."));
            box.setDefaultButton(QMessageBox::Discard);
            return box.exec() == QMessageBox::Save;
        }();
        if (!save) {
            m_runs->setRunMessage(tr("Roofs not saved: the measurement looks disturbed; measure again on a quiet machine"),
                          true);
            emit roofMeasurementFinished({});
            return;
        }
    }
    const perf::MachineProfile profile =
        perf::cpuProfileFromMeasurement(*out.result, "tessera Run > Measure Roofs", out.quick);
    auto path = perf::saveProfileToDefaultDir(profile);
    if (!path) {
        m_doc->appendProblems(Document::ProblemSource::Roofs, path.diagnostics());
            const support::Diagnostic* e = path.diagnostics().firstError();
        m_runs->setRunMessage(tr("The roofs could not be saved: %1").arg(e ? fromStd(e->message) : tr("unknown error")), true);
        emit roofMeasurementFinished({});
        return;
    }
    reloadProfile();
    m_runs->setRunToolTip(fromStd(*path));
    m_rooflineDock->show();
    m_rooflineDock->raise();
    const int compute = static_cast<int>(std::count_if(profile.roofs.begin(), profile.roofs.end(), [](const perf::Roof& r) {
        return r.kind == perf::Roof::Kind::Compute;
    }));
    const int bandwidth = static_cast<int>(profile.roofs.size()) - compute;
    m_runs->setRunMessage(tr("Roofs saved: %1 compute, %2 bandwidth (%3)")
                      .arg(compute)
                      .arg(bandwidth)
                      .arg(QFileInfo(fromStd(*path)).fileName()),
                  false);
    emit roofMeasurementFinished(fromStd(*path));
}

bool RooflineController::blocksRun()
{
    if (!m_roofSession || !m_roofSession->isBusy())
        return false;
    m_runs->setRunMessage(tr("Run once the roof measurement has finished, or cancel it (a busy CPU measures low roofs)"), true);
    return true;
}

void RooflineController::reloadProfile()
{
    const RunOutcome& last = m_doc->runs()->lastOutcome();
    if (last.report && m_runs->compiled()) {
        if (last.report->device)
            return;  // the chart shows a CUDA run's roofs; new CPU roofs do not belong there
        showRun(*last.report);  // looks the profile up and re-places the run's dots
        return;
    }
    showTargetRoofs();
}

void RooflineController::showTargetRoofs()
{
    // Looked up again each time (a few small files), so that roofs saved meanwhile by
    // `tessera-cli roofline measure --save` show too.
    const RunTarget target = m_doc->currentTarget();
    std::optional<perf::MachineProfile> profile;
    if (target.kind == RunTarget::Kind::CudaDevice) {
        const DeviceProbe& probe = m_doc->runs()->deviceProbe();
        const auto device = std::find_if(probe.devices.begin(), probe.devices.end(),
                                         [&](const runtime::cuda::CudaDeviceInfo& d) { return d.ordinal == target.device; });
        if (device != probe.devices.end())
            profile = perf::findProfileForMachine(perf::gpuFingerprint(*device), perf::defaultProfileDir(),
                                                  "cuda:" + std::to_string(target.device));
        m_roofline->setProfile(profile, tr("No measured roofs for CUDA device %1: run `tessera-cli roofline measure "
                                           "--target cuda:%1 --save`")
                                            .arg(target.device));
    } else if (target.kind == RunTarget::Kind::CudaCompileOnly) {
        m_roofline->setProfile(std::nullopt, tr("CUDA compile only: no device runs the kernels, so there are no "
                                                "roofs or dots to draw"));
    } else {
        // A profile of the same CPU model is taken when only the fingerprint's cache field differs.
        profile = perf::findProfileForMachine(perf::cpuFingerprint(), perf::defaultProfileDir(), "cpu");
        m_roofline->setProfile(profile);
    }
    m_energy->setProfile(std::move(profile));
}

void RooflineController::onTargetChanged()
{
    // With a run's dots on screen the chart keeps that run's roofs; otherwise it shows the roofs
    // of the machine the next run goes to.
    if (!m_runs->compiled() && m_roofline->kernelNames().isEmpty())
        showTargetRoofs();
}

}  // namespace tessera::app
