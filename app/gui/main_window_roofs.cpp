// Run > Measure Roofs: the GUI twin of `tessera-cli roofline measure --target cpu --save`.
// RoofSession measures on its worker; the window shows progress with Cancel in the status bar,
// puts the measurement's problems in Problems, asks before saving disturbed roofs, saves the
// profile as the CLI does (perf::cpuProfileFromMeasurement + saveProfileToDefaultDir) and shows
// the new roofs at once.

#include <QAction>
#include <QDockWidget>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QStatusBar>
#include <QToolButton>

#include <algorithm>

#include "app/gui/main_window.h"

#include "app/gui/document.h"
#include "app/gui/roof_session.h"
#include "app/gui/run_session.h"
#include "app/gui/run_targets.h"
#include "core/perf/cpu_profile.h"
#include "core/perf/gpu_microbench.h"
#include "core/perf/kernel_points.h"
#include "core/perf/machine_profile.h"
#include "views/roofline/energy_view.h"
#include "views/roofline/roofline_view.h"

namespace tessera::app {

namespace {

QString fromStd(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

void MainWindow::createRoofMeasurement()
{
    m_roofSession = new RoofSession(this);

    m_runMenu->addSeparator();
    m_measureRoofsAction = m_runMenu->addAction(tr("&Measure Roofs (CPU)"), this, &MainWindow::measureRoofs);
    m_measureRoofsAction->setObjectName(QStringLiteral("measureRoofsAction"));
    m_measureRoofsAction->setToolTip(tr("Measure this CPU's compute peaks and memory bandwidths for the Roofline chart "
                                        "(quick mode, well under a minute; tessera-cli roofline measure --target cpu "
                                        "--save)"));

    m_roofProgress = new QProgressBar(this);
    m_roofProgress->setObjectName(QStringLiteral("roofProgress"));
    m_roofProgress->setRange(0, 1000);
    m_roofProgress->setMaximumWidth(160);
    m_roofProgress->setMaximumHeight(16);
    m_roofProgress->setTextVisible(false);
    m_roofCancel = new QToolButton(this);
    m_roofCancel->setText(tr("Cancel"));
    m_roofCancel->setObjectName(QStringLiteral("cancelRoofs"));
    m_roofCancel->setToolTip(tr("Cancel the roof measurement (nothing is saved)"));
    statusBar()->addWidget(m_roofProgress);
    statusBar()->addWidget(m_roofCancel);
    m_roofProgress->hide();
    m_roofCancel->hide();

    connect(m_roofCancel, &QToolButton::clicked, this, &MainWindow::cancelRoofMeasurement);
    connect(m_roofline, &views::RooflineView::measureRoofsRequested, this, &MainWindow::measureRoofs);
    connect(m_roofSession, &RoofSession::progress, this, &MainWindow::onRoofProgress);
    connect(m_roofSession, &RoofSession::finished, this, &MainWindow::onRoofFinished);
    connect(this, &MainWindow::targetChanged, this, &MainWindow::onTargetChangedForRoofs);
    // This machine's saved roofs from the start: the chart (and its banner) is right before any run.
    showTargetRoofs();
}

void MainWindow::measureRoofs()
{
    // Kernels running next to the micro-benchmarks would make both sets of numbers wrong.
    if (m_doc->runs()->isBusy()) {
        setRunMessage(tr("Measure roofs once the run has finished (a busy CPU measures low roofs)"), true);
        return;
    }
    m_doc->setProblems(Document::ProblemSource::Roofs, {});
    showProblems();
    m_roofProgress->setRange(0, 1000);
    m_roofProgress->setValue(0);
    setStatusWidgetVisible(m_roofProgress, true);
    setStatusWidgetVisible(m_roofCancel, true);
    setRunMessage(tr("Measuring roofs: starting..."), false);
    m_roofSession->start();
}

void MainWindow::cancelRoofMeasurement()
{
    if (m_roofSession->isBusy())
        m_roofSession->cancel();
}

void MainWindow::onRoofProgress(quint64, double fraction, const QString& phase)
{
    const double f = std::clamp(fraction, 0.0, 1.0);
    m_roofProgress->setValue(static_cast<int>(f * 1000));
    setRunMessage(tr("Measuring roofs: %1 (%2%)...").arg(phase).arg(static_cast<int>(f * 100 + 0.5)), false);
}

void MainWindow::onRoofFinished(quint64, bool)
{
    setStatusWidgetVisible(m_roofProgress, false);
    setStatusWidgetVisible(m_roofCancel, false);
    const RoofOutcome& out = m_roofSession->lastOutcome();
    if (out.cancelled) {
        setRunMessage(tr("Roof measurement cancelled: nothing was saved"), false);
        emit roofMeasurementFinished({});
        return;
    }
    m_doc->setProblems(Document::ProblemSource::Roofs, out.diagnostics);
    showProblems();
    if (!out.ok || !out.result) {
        const support::Diagnostic* e = out.diagnostics.firstError();
        setRunMessage(tr("Roof measurement failed: %1").arg(e ? fromStd(e->message) : tr("unknown error")), true);
        emit roofMeasurementFinished({});
        return;
    }
    if (!out.problems.empty()) {
        // Disturbed roofs would mislead every later chart of this machine: never saved unasked.
        QStringList problems;
        for (const std::string& p : out.problems)
            problems << fromStd(p);
        setRunMessage(tr("The roofs look disturbed (%n problem(s), see Problems): the CPU was probably busy", nullptr,
                         problems.size()),
                      true);
        const bool save = m_roofSavePrompt ? m_roofSavePrompt(problems) : [&] {
            QMessageBox box(QMessageBox::Warning, tr("Save Disturbed Roofs?"),
                            tr("The measurement looks disturbed, probably by other work on this machine:"),
                            QMessageBox::Save | QMessageBox::Discard, this);
            box.setInformativeText(problems.join(QLatin1Char('\n')) +
                                   tr("\n\nSave these roofs anyway? Every roofline chart of this machine will use "
                                      "them. Measuring again on a quiet machine gives better roofs."));
            box.setDefaultButton(QMessageBox::Discard);
            return box.exec() == QMessageBox::Save;
        }();
        if (!save) {
            setRunMessage(tr("Roofs not saved: the measurement looks disturbed; measure again on a quiet machine"),
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
        showProblems();
        const support::Diagnostic* e = path.diagnostics().firstError();
        setRunMessage(tr("The roofs could not be saved: %1").arg(e ? fromStd(e->message) : tr("unknown error")), true);
        emit roofMeasurementFinished({});
        return;
    }
    reloadRoofProfile();
    m_rooflineDock->show();
    m_rooflineDock->raise();
    const int compute = static_cast<int>(std::count_if(profile.roofs.begin(), profile.roofs.end(), [](const perf::Roof& r) {
        return r.kind == perf::Roof::Kind::Compute;
    }));
    const int bandwidth = static_cast<int>(profile.roofs.size()) - compute;
    setRunMessage(tr("Roofs saved: %1 compute, %2 bandwidth (%3)")
                      .arg(compute)
                      .arg(bandwidth)
                      .arg(QFileInfo(fromStd(*path)).fileName()),
                  false);
    m_runLabel->setToolTip(fromStd(*path));
    emit roofMeasurementFinished(fromStd(*path));
}

bool MainWindow::roofMeasurementBlocksRun()
{
    if (!m_roofSession || !m_roofSession->isBusy())
        return false;
    setRunMessage(tr("Run once the roof measurement has finished, or cancel it (a busy CPU measures low roofs)"), true);
    return true;
}

void MainWindow::reloadRoofProfile()
{
    const RunOutcome& last = m_doc->runs()->lastOutcome();
    if (last.report && m_compiled) {
        if (last.report->device)
            return;  // the chart shows a CUDA run's roofs; new CPU roofs do not belong there
        showRoofline(*last.report);  // looks the profile up and re-places the run's dots
        return;
    }
    showTargetRoofs();
}

void MainWindow::showTargetRoofs()
{
    // Looked up again each time (a few small files), so that roofs saved meanwhile by
    // `tessera-cli roofline measure --save` show too.
    const RunTarget target = currentTarget();
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

void MainWindow::onTargetChangedForRoofs()
{
    // With a run's dots on screen the chart keeps that run's roofs; otherwise it shows the roofs
    // of the machine the next run goes to.
    if (!m_compiled && m_roofline->kernelNames().isEmpty())
        showTargetRoofs();
}

}  // namespace tessera::app
