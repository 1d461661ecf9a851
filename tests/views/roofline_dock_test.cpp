// The Roofline dock of the main window (Qt Test, offscreen): after a run of
// samples/dw_pw_block.onnx every kernel has a dot, the machine profile saved for this CPU gives
// the roofs, and selection is linked both ways with the graph and the Timings table.
// Needs tessera-runner (TESSERA_RUNNER, set by CMake) and `c++`.

#include <QDockWidget>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/main_window.h"
#include "app/gui/run_session.h"
#include "app/gui/session.h"
#include "core/perf/machine_profile.h"
#include "views/graph/graph_view.h"
#include "views/roofline/roofline_view.h"
#include "views/timing/timing_panel.h"

using namespace tessera;

class RooflineDockTest : public QObject {
    Q_OBJECT
private slots:
    void runFeedsTheDockAndSelectionIsLinked();
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
    QVERIFY(w.rooflineDock() && w.rooflineView());
    QVERIFY(!w.rooflineDock()->isVisible());  // no run yet

    QSignalSpy loaded(w.session(), &app::Session::finished);
    w.openFile(QStringLiteral(TESSERA_SAMPLES "/dw_pw_block.onnx"));
    QVERIFY(loaded.wait(120000));
    QVERIFY2(loaded.first().at(1).toBool(), qPrintable(errors.join('\n')));

    QSignalSpy finished(&w, &app::MainWindow::runFinished);
    w.startRun();
    QVERIFY(w.rooflineDock()->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 600000);
    QVERIFY(finished.first().at(0).toBool());
    views::RooflineView* roof = w.rooflineView();
    QTRY_COMPARE_WITH_TIMEOUT(roof->pendingCount(), 0, 2000);  // drained by the 30 Hz timer

    const app::RunOutcome& out = w.runSession()->lastOutcome();
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
    QCOMPARE(QString::fromStdString(w.timingPanel()->selectedKernel()), first);
    QCOMPARE(roof->selectedKernel(), first);

    // A second run adds no kernel: the same names, previous positions kept as trails when moved.
    finished.clear();
    w.startRun();
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 600000);
    QTRY_COMPARE_WITH_TIMEOUT(roof->pendingCount(), 0, 2000);
    QCOMPARE(roof->kernelNames(), names);
}

QTEST_MAIN(RooflineDockTest)
#include "roofline_dock_test.moc"
