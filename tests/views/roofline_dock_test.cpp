// The Roofline dock of the main window (Qt Test, offscreen): after a run of
// samples/dw_pw_block.onnx every kernel has a dot, the machine profile saved for this CPU gives
// the roofs, and selection is linked both ways with the graph and the Timings table.
// Needs tessera-runner (TESSERA_RUNNER, set by CMake) and `c++`.

#include <QDockWidget>
#include <QImage>
#include <QTabWidget>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/document.h"
#include "app/gui/main_window.h"
#include "app/gui/roofline_controller.h"
#include "app/gui/run_controller.h"
#include "app/gui/run_session.h"
#include "app/gui/session.h"
#include "core/perf/machine_profile.h"
#include "views/graph/graph_view.h"
#include "views/roofline/energy_view.h"
#include "views/roofline/roofline_view.h"
#include "views/timing/timing_panel.h"

using namespace tessera;

class RooflineDockTest : public QObject {
    Q_OBJECT
private slots:
    void runFeedsTheDockAndSelectionIsLinked();
    void energyTabWithSyntheticGpuKernels();
};

void RooflineDockTest::runFeedsTheDockAndSelectionIsLinked() {
    if (QStandardPaths::findExecutable(QStringLiteral("c++")).isEmpty())
        QSKIP("no C++ compiler (c++) on PATH: generated kernels cannot be compiled");
    // A profile for this very machine in a private config folder.
    QTemporaryDir config;
    QVERIFY(config.isValid());
    qputenv("XDG_CONFIG_HOME", config.path().toUtf8());
    perf::MachineProfile p;
    p.fingerprint = perf::cpuFingerprint();
    p.target = "cpu";
    p.measuredAt = "2026-01-01T00:00:00Z";
    p.roofs = {perf::bandwidthRoof("L1 load bandwidth", "L1", 1000.0, 2, "load 32 KiB"),
               perf::bandwidthRoof("DRAM triad bandwidth", "DRAM", 40.0, 2, "triad 256 MiB"),
               perf::computeRoof("FP32 FMA peak", "fp32", 500.0, 2, "fma avx2")};
    auto saved = perf::saveProfile(p, perf::defaultProfileDir());
    QVERIFY(saved.ok());

    app::MainWindow w;
    QStringList errors;
    w.setErrorReporter([&](const QString&, const QStringList& lines) { errors += lines; });
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.roofline()->dock() && w.roofline()->rooflineView());
    QVERIFY(!w.roofline()->dock()->isVisible());  // no run yet

    QSignalSpy loaded(w.session(), &app::Session::finished);
    w.openFile(QStringLiteral(TESSERA_SAMPLES "/dw_pw_block.onnx"));
    QVERIFY(loaded.wait(120000));
    QVERIFY2(loaded.first().at(1).toBool(), qPrintable(errors.join('\n')));

    QSignalSpy finished(&w, &app::MainWindow::runFinished);
    w.run()->startRun();
    QVERIFY(w.roofline()->dock()->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 600000);
    if (!finished.first().at(0).toBool()) {
        QStringList why;
        for (const auto& d : w.document()->runs()->lastOutcome().diagnostics.items()) why << QString::fromStdString(d.message);
        QFAIL(qPrintable("the run failed: " + why.join('\n') + errors.join('\n')));
    }
    views::RooflineView* roof = w.roofline()->rooflineView();
    QTRY_COMPARE_WITH_TIMEOUT(roof->pendingCount(), 0, 2000);  // drained by the 30 Hz timer

    const app::RunOutcome& out = w.document()->runs()->lastOutcome();
    QCOMPARE(out.report->kernels.size(), std::size_t(3));
    QStringList names;
    for (const auto& k : out.report->kernels) names << QString::fromStdString(k.name);
    QCOMPARE(roof->kernelNames(), names);
    QVERIFY2(roof->bannerText().isEmpty(), qPrintable(roof->bannerText()));
    QCOMPARE(roof->roofLines().size(), std::size_t(3));
    // Each dot sits at the run's own numbers: y = FLOPs / median time.
    for (const auto& k : out.report->kernels) {
        const auto dots = roof->dotPositions(QString::fromStdString(k.name));
        QCOMPARE(dots.size(), std::size_t(1));
        const double flops = k.usefulFlops >= 0 ? k.usefulFlops : k.flops;
        QVERIFY(qFuzzyCompare(dots[0].y(), flops / k.time.median / 1e9));
        QVERIFY(qFuzzyCompare(dots[0].x(), flops / static_cast<double>(k.bytes)));
    }

    // Graph -> roofline (and the table).
    views::GraphView* graph = w.graphView();
    const QString second = names[1];
    graph->selectNode(graph->operatorIdByName(second.toStdString()));
    QCOMPARE(roof->selectedKernel(), second);
    // Roofline click -> graph and table.
    const QString first = names[0];
    emit roof->kernelSelected(first);
    QCOMPARE(graph->selectedNodeId(), graph->operatorIdByName(first.toStdString()));
    QCOMPARE(QString::fromStdString(w.run()->timingPanel()->selectedKernel()), first);
    QCOMPARE(roof->selectedKernel(), first);

    // The Energy tab: a CPU run has no energy, so it shows the placeholder, with the same kernels;
    // its selection is linked like the roofline's.
    views::EnergyView* energy = w.roofline()->energyView();
    QVERIFY(energy);
    QCOMPARE(w.roofline()->tabs()->count(), 2);
    QCOMPARE(w.roofline()->tabs()->tabText(0), QString("Performance"));
    QCOMPARE(w.roofline()->tabs()->tabText(1), QString("Energy"));
    QTRY_COMPARE_WITH_TIMEOUT(energy->pendingCount(), 0, 2000);
    QCOMPARE(energy->kernelNames(), names);
    QCOMPARE(energy->placeholderText(), QString("Energy needs an NVIDIA GPU with NVML (run on a CUDA target)"));
    QCOMPARE(energy->selectedKernel(), first);
    const QString third = names[2];
    emit energy->kernelSelected(third);
    QCOMPARE(graph->selectedNodeId(), graph->operatorIdByName(third.toStdString()));
    QCOMPARE(roof->selectedKernel(), third);
    QCOMPARE(energy->selectedKernel(), third);
    // One chart mode for both tabs.
    roof->setMode(perf::RooflineMode::Dram);
    QCOMPARE(energy->mode(), perf::RooflineMode::Dram);
    energy->setMode(perf::RooflineMode::Carm);
    QCOMPARE(roof->mode(), perf::RooflineMode::Carm);

    // A second run adds no kernel: the same names, previous positions kept as trails when moved.
    finished.clear();
    w.run()->startRun();
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 600000);
    QTRY_COMPARE_WITH_TIMEOUT(roof->pendingCount(), 0, 2000);
    QCOMPARE(roof->kernelNames(), names);
}

namespace {

/// A MobileNetV2-like batch-1 run on an H200, with made-up times and energies (power 160-390 W,
/// the range bench/RESULTS.md saw through NVML), for the Energy tab's look and its wiring. The
/// numbers are synthetic: this machine has no GPU.
struct Synthetic {
    const char* name;
    const char* op;
    double flops, issued, compulsory, seconds, watts;
};
const Synthetic kSynthetic[] = {
    {"Conv_0", "Conv", 21.7e6, 7.9e6, 2.2e6, 8.0e-6, 185},
    {"Clip_1", "Clip", 0.8e6, 3.2e6, 3.2e6, 3.1e-6, 161},
    {"Conv_2 (dw)", "Conv", 7.2e6, 16.5e6, 3.2e6, 5.2e-6, 172},
    {"Conv_4", "Conv", 25.7e6, 5.0e6, 2.4e6, 6.1e-6, 196},
    {"Conv_7", "Conv", 38.5e6, 9.6e6, 4.2e6, 9.5e-6, 214},
    {"Conv_9 (dw)", "Conv", 10.8e6, 24.1e6, 4.8e6, 7.4e-6, 176},
    {"Add_15", "Add", 0.3e6, 3.6e6, 3.6e6, 3.4e-6, 160},
    {"Conv_30", "Conv", 19.3e6, 2.1e6, 0.9e6, 5.9e-6, 201},
    {"Conv_52 (dw)", "Conv", 1.7e6, 4.0e6, 0.8e6, 3.8e-6, 166},
    {"Conv_54", "Conv", 30.1e6, 1.8e6, 1.4e6, 8.8e-6, 208},
    {"Conv_97", "Conv", 15.1e6, 1.0e6, 0.8e6, 9.1e-6, 178},
    {"GlobalAveragePool_99", "GlobalAveragePool", 62.7e3, 0.26e6, 0.26e6, 4.2e-6, 158},
    {"Gemm_100", "Gemm", 2.56e6, 10.3e6, 5.1e6, 182e-6, 167},
};

}  // namespace

// Synthetic GPU kernels fed straight to the dock (no run): the Energy tab plots GFLOP/J per
// kernel. TESSERA_ENERGY_SHOT=/path/roofline-energy.png saves a picture of the dock with the
// Energy tab raised (docs/screenshots/roofline-energy.png comes from here).
void RooflineDockTest::energyTabWithSyntheticGpuKernels() {
    app::MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QDockWidget* dock = w.roofline()->dock();
    dock->setWindowTitle(QStringLiteral("Roofline \u2014 synthetic data (no GPU on this machine)"));
    dock->show();
    w.resizeDocks({dock}, {940}, Qt::Horizontal);
    w.resizeDocks({dock}, {700}, Qt::Vertical);

    perf::MachineProfile p;
    p.fingerprint = "NVIDIA H200 (synthetic) | 132 SMs | sm_90";
    p.target = "cuda:0";
    p.measuredAt = "2026-01-01T00:00:00Z";
    p.roofs = {perf::bandwidthRoof("shared load bandwidth", "shared", 32600.0, 1, "shared load"),
               perf::bandwidthRoof("L2 load bandwidth", "L2", 10700.0, 1, "load 16 MiB"),
               perf::bandwidthRoof("HBM copy bandwidth", "HBM", 4032.0, 1, "copy 1 GiB"),
               perf::computeRoof("FP32 FMA peak", "fp32", 63200.0, 1, "fma cuda-core")};
    std::vector<perf::KernelSample> samples;
    pipeline::RunReport report;
    for (const Synthetic& k : kSynthetic) {
        perf::KernelSample s;
        s.name = k.name;
        s.opType = k.op;
        s.ops = {k.name};
        s.flops = k.flops;
        s.seconds = k.seconds;
        s.issuedBytes = k.issued;
        s.compulsoryBytes = k.compulsory;
        s.levelBytes = {{"L2", k.issued}, {"HBM", k.compulsory}};
        samples.push_back(s);
        pipeline::KernelReport r;
        r.name = k.name;
        r.energyJoules = k.watts * k.seconds;
        r.avgPowerWatts = k.watts;
        report.kernels.push_back(r);
    }
    w.roofline()->rooflineView()->setProfile(p);
    w.roofline()->rooflineView()->addPoints(samples);
    views::EnergyView* energy = w.roofline()->energyView();
    energy->setProfile(p);
    energy->addPoints(views::kernelEnergies(samples, report));
    w.roofline()->rooflineView()->flush();
    energy->flush();
    w.roofline()->tabs()->setCurrentWidget(energy);
    QVERIFY(energy->isVisible());
    QVERIFY(energy->placeholderText().isEmpty());
    QCOMPARE(energy->kernelNames().size(), qsizetype(std::size(kSynthetic)));
    // Conv_54: 30.1 MFLOP at 208 W for 8.8 us = 1.83 mJ: 16.4 GFLOP/J, at CARM AI 30.1 / 1.8.
    const auto dots = energy->dotPositions("Conv_54");
    QCOMPARE(dots.size(), std::size_t(1));
    QVERIFY(qFuzzyCompare(dots[0].y(), 30.1e6 / 1e9 / (208 * 8.8e-6)));
    QVERIFY(qFuzzyCompare(dots[0].x(), 30.1e6 / 1.8e6));
    QCOMPARE(energy->bestLabel(), QString("best measured 21.5 GFLOP/J (Conv_4)"));  // 25.7 MFLOP / 1.2 mJ
    QVERIFY(energy->tooltipText("Gemm_100").contains("J/run: 30.4 mJ\npower: 167 W"));
    // Selecting in the dock highlights in both tabs (no model loaded: nothing else to select).
    w.roofline()->rooflineView()->setSelectedKernel("Conv_54");
    energy->setSelectedKernel("Conv_54");
    QCOMPARE(energy->selectedKernel(), QString("Conv_54"));

    QTest::qWait(100);
    if (qEnvironmentVariableIsSet("TESSERA_ENERGY_SHOT")) {
        const QImage shot = dock->grab().toImage();
        QVERIFY(shot.save(qEnvironmentVariable("TESSERA_ENERGY_SHOT")));
        w.roofline()->tabs()->setCurrentWidget(w.roofline()->rooflineView());
        QTest::qWait(50);
        QVERIFY(dock->grab().toImage().save(qEnvironmentVariable("TESSERA_ENERGY_SHOT") + ".performance.png"));
    }
}

QTEST_MAIN(RooflineDockTest)
#include "roofline_dock_test.moc"
