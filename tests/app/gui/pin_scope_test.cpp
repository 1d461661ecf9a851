// A newcomer's findings on comparing runs and the mapping dock: a pin belongs to its model
// (opening another file clears it, with a note; reopening the same file keeps it); the Timings
// summary says when the pinned run's threads or target differ; the "Timings unreliable" advice
// names the Preferences setting in the GUI and offers no fewer threads at one thread; on the CPU
// target the mapping's memory view is a neutral "GPU view"; Ctrl+M gives the Task Mapping dock
// room without growing the window.
#include <QDockWidget>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTest>

#include "app/gui/compare_controller.h"
#include "app/gui/main_window.h"
#include "app/gui/run_results.h"
#include "app/gui/run_session.h"
#include "views/mapping/mapping_canvas.h"
#include "views/mapping/mapping_panel.h"
#include "views/mapping/memory_view.h"
#include "views/roofline/roofline_view.h"
#include "views/timing/timing_panel.h"
#include "views/timing/timing_table_model.h"
#include "tests/app/gui/gui_test_util.h"

using namespace tessera;

namespace {

using test::loadSample;

bool runOnce(app::MainWindow& w)
{
    QSignalSpy finished(&w, &app::MainWindow::runFinished);
    w.run()->startRun();
    return finished.wait(600000) && finished.first().at(0).toBool();
}

// The texts core's runModel writes (core/pipeline/run.cpp) at 2 and at 1 thread.
const std::string kCoreWarningThreads =
    "other processes used 62% of the CPUs' time while the kernels were timed: the times are likely inflated; "
    "rerun on a quiet machine, or with fewer threads than idle cores (--threads 1)";
const std::string kCoreWarningOneThread =
    "other processes used 62% of the CPUs' time while the kernels were timed: the times are likely inflated; "
    "rerun on a quiet machine";

}  // namespace

class PinScopeTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
    }

    void timingWarningNamesPreferences()
    {
        QCOMPARE(QString::fromStdString(app::guiTimingWarning(kCoreWarningThreads, 2)),
                 QStringLiteral("other processes used 62% of the CPUs' time while the kernels were timed: the times "
                                "are likely inflated; rerun on a quiet machine, or with fewer threads than idle cores "
                                "(Preferences > OpenMP threads)"));
        // Already at one thread: no fewer-threads advice (older core text included).
        QCOMPARE(QString::fromStdString(app::guiTimingWarning(kCoreWarningThreads, 1)),
                 QStringLiteral("other processes used 62% of the CPUs' time while the kernels were timed: the times "
                                "are likely inflated; rerun on a quiet machine"));
        QCOMPARE(app::guiTimingWarning(kCoreWarningOneThread, 1), kCoreWarningOneThread);

        // Through the Timings snapshot and summary.
        pipeline::RunReport report;
        report.threads = 1;
        report.total.median = 1e-3;
        report.total.reps = 10;
        report.warnings.warning("m.onnx", "timing", kCoreWarningThreads);
        pipeline::RunOptions options;
        const views::TimingSnapshot s = app::timingSnapshot(report, options);
        QCOMPARE(s.target, std::string("CPU"));
        views::TimingPanel panel;
        panel.setSnapshot(s);
        QVERIFY2(panel.summaryText().endsWith(QStringLiteral(
                     "\n\u26a0 Timings unreliable: other processes used 62% of the CPUs' time while the kernels were "
                     "timed: the times are likely inflated; rerun on a quiet machine")),
                 qPrintable(panel.summaryText()));
        QVERIFY(!panel.summaryText().contains(QStringLiteral("--threads")));
        // The Fusion Plan table's Measured column is flagged with the same words.
        QCOMPARE(app::runTimingWarning(report), s.timingWarning);
        report.threads = 2;
        QCOMPARE(QString::fromStdString(app::runTimingWarning(report)),
                 QStringLiteral("other processes used 62% of the CPUs' time while the kernels were timed: the times "
                                "are likely inflated; rerun on a quiet machine, or with fewer threads than idle cores "
                                "(Preferences > OpenMP threads)"));
        QCOMPARE(app::runTimingWarning(pipeline::RunReport{}), std::string());
    }

    void pinnedConditionsInSummary()
    {
        views::TimingPanel panel;
        views::TimingSnapshot s;
        views::TimingRow r;
        r.kernel = "k";
        r.medianSeconds = 1e-6;
        r.reps = 10;
        s.rows = {r};
        s.totalSeconds = 2e-6;
        s.totalReps = 10;
        s.threads = 1;
        s.target = "CPU";
        panel.setSnapshot(s);
        auto pinned = std::make_shared<views::PinnedRun>();
        pinned->kernels = {{"k", "MatMul", {}, 4e-6, 10}};
        pinned->totalSeconds = 4e-6;
        pinned->threads = 2;
        pinned->target = "CPU";
        panel.setPinned(pinned);
        QVERIFY2(panel.summaryText().endsWith(QStringLiteral(
                     " \u00b7 vs pinned: 2.00x end to end (pinned 4.0 us) \u2014 pinned with 2 threads, this run 1")),
                 qPrintable(panel.summaryText()));
        // Same conditions: nothing added.
        auto same = std::make_shared<views::PinnedRun>(*pinned);
        same->threads = 1;
        panel.setPinned(same);
        QVERIFY2(panel.summaryText().endsWith(QStringLiteral(" \u00b7 vs pinned: 2.00x end to end (pinned 4.0 us)")),
                 qPrintable(panel.summaryText()));
        // Another target (and threads).
        views::PinnedRun cuda = *pinned;
        cuda.target = "CUDA";
        cuda.machine = "NVIDIA H200";
        QCOMPARE(views::TimingPanel::conditionsNote(cuda, s),
                 QStringLiteral("pinned with 2 threads, this run 1; pinned on CUDA, this run on CPU"));
        views::PinnedRun one = *same;
        one.threads = 1;
        views::TimingSnapshot s4 = s;
        s4.threads = 4;
        QCOMPARE(views::TimingPanel::conditionsNote(one, s4), QStringLiteral("pinned with 1 thread, this run 4"));
    }

    void pinClearedByAnotherModel()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList& lines) { QFAIL(qPrintable(lines.join('\n'))); });
        w.resize(1400, 900);
        w.show();
        QVERIFY(loadSample(w, QStringLiteral("dw_pw_block.onnx")));
        QVERIFY(runOnce(w));
        app::CompareController* compare = w.compareController();
        QVERIFY(compare->pin());
        QVERIFY(w.run()->timingPanel()->model()->pinned());
        const auto report = w.document()->runs()->lastOutcome().report;
        QVERIFY(report);
        QString plotted;  // a kernel drawn on the roofline, pinned hollow dot included
        for (const pipeline::KernelReport& k : report->kernels)
            if (plotted.isEmpty() && !w.roofline()->rooflineView()->pinnedPositions(QString::fromStdString(k.name)).empty())
                plotted = QString::fromStdString(k.name);
        QVERIFY(!plotted.isEmpty());

        // The same file again (reload): the pin stays.
        QVERIFY(loadSample(w, QStringLiteral("dw_pw_block.onnx")));
        QVERIFY(QTest::qWaitFor([&] { return w.currentPath().endsWith(QStringLiteral("dw_pw_block.onnx")); }, 10000));
        QVERIFY(compare->isPinned());

        // Another model: the pin is cleared everywhere, and the status bar says whose it was.
        QSignalSpy shown(&w, &app::MainWindow::modelShown);
        QVERIFY(loadSample(w, QStringLiteral("opset21_mlp.onnx")));
        QVERIFY(QTest::qWaitFor([&] { return shown.count() > 0; }, 10000));
        QVERIFY(!compare->isPinned());
        QVERIFY(!compare->unpinAction()->isEnabled());
        QVERIFY(!w.run()->timingPanel()->model()->pinned());
        QVERIFY(w.roofline()->rooflineView()->pinnedPositions(plotted).empty());
        QCOMPARE(w.statusBar()->currentMessage(), QStringLiteral("Pin cleared: it was a run of dw_pw_block.onnx"));
        // A run of the new model is not compared with anything.
        QVERIFY(runOnce(w));
        QVERIFY2(!w.run()->timingPanel()->summaryText().contains(QStringLiteral("pinned")),
                 qPrintable(w.run()->timingPanel()->summaryText()));
        for (int r = 0; r < w.run()->timingPanel()->model()->rowCount(); ++r)
            QVERIFY(!w.run()->timingPanel()->model()->isGoneRow(r));
    }

    void mappingDockRoomAndCpuGpuView()
    {
        app::MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const QSize before = w.size();
        QDockWidget* dock = w.mappingDock();
        QVERIFY(dock->isHidden());
        dock->toggleViewAction()->trigger();  // View > Task Mapping / Ctrl+M
        QVERIFY(!dock->isHidden());
        QTest::qWait(50);
        QCOMPARE(w.size(), before);
        QVERIFY2(dock->height() >= w.height() / 2, qPrintable(QString::number(dock->height())));
        QVERIFY2(dock->width() >= w.width() * 2 / 5, qPrintable(QString::number(dock->width())));

        views::MappingPanel* mapping = w.findChild<views::MappingPanel*>(QStringLiteral("mappingPanel"));
        QVERIFY(mapping);
        mapping->setExpressions(QStringLiteral("spatial(1,20,1, ranks=[0,2,1]).repeat(1,8,49)"));
        QVERIFY(mapping->errorText().isEmpty());
        QTest::qWait(50);
        QVERIFY2(mapping->canvas()->height() >= 250, qPrintable(QString::number(mapping->canvas()->height())));

        // CPU target (the default here): the warp analysis is a neutral GPU view.
        QVERIFY(!w.document()->currentTarget().isCuda());
        QVERIFY(mapping->memoryView()->cpuTarget());
        const QString summary = mapping->memoryView()->summaryLabel()->text();
        QVERIFY2(summary.contains(QStringLiteral("GPU view: if these workers were CUDA threads")), qPrintable(summary));
        QVERIFY2(!summary.contains(QStringLiteral("b71c1c")) && !summary.contains(QStringLiteral("bad warp")),
                 qPrintable(summary));
        // As CUDA would see it: the red verdict comes back.
        mapping->setCpuTarget(false);
        QVERIFY2(mapping->memoryView()->summaryLabel()->text().contains(QStringLiteral("bad warp")),
                 qPrintable(mapping->memoryView()->summaryLabel()->text()));
    }
};

QTEST_MAIN(PinScopeTest)
#include "pin_scope_test.moc"
