// The Timings history chart and the run ETA (Qt Test, offscreen): the series of a kernel over
// three synthetic runs (renamed by a plan change, missing from one run), the bounded RunHistory,
// the chart's points and tooltips, the ETA estimator's exact strings, and end to end: two runs of
// samples/dw_pw_block.onnx give two points for a selected kernel. Needs tessera-runner
// (TESSERA_RUNNER, set by CMake) and `c++` for the end-to-end case.
#include <cmath>

#include <QDockWidget>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/eta_estimator.h"
#include "app/gui/main_window.h"
#include "app/gui/project_controller.h"
#include "app/gui/run_history.h"
#include "app/gui/run_session.h"
#include "app/gui/session.h"
#include "core/project/project.h"
#include "views/timing/timing_history.h"
#include "views/timing/timing_history_chart.h"
#include "views/timing/timing_panel.h"
#include "tests/app/gui/gui_test_util.h"

using namespace tessera;

namespace {

const QString kSamples = QStringLiteral(TESSERA_SAMPLES);

views::TimingHistoryKernel kernel(const std::string& name, std::vector<std::string> ops, double median,
                                  double q1 = 0, double q3 = 0)
{
    views::TimingHistoryKernel k;
    k.kernel = name;
    k.ops = std::move(ops);
    k.medianSeconds = median;
    k.q1Seconds = q1;
    k.q3Seconds = q3;
    k.reps = 10;
    return k;
}

/// Run 1: conv+relu fused as "conv_relu"; run 2 (another plan): "conv" missing, "fused_0"
/// covers {relu, conv}; run 3 (plan as run 1): "conv_relu" again but "pool" missing.
app::RunHistory threeRuns()
{
    app::RunHistory h;
    views::TimingHistoryRun r1;
    r1.plan = "planner hidet \u00b7 CPU, 2 threads";
    r1.totalSeconds = 3e-3;
    r1.kernels = {kernel("conv_relu", {"conv", "relu"}, 1e-3, 0.9e-3, 1.2e-3), kernel("pool", {"pool"}, 2e-4)};
    views::TimingHistoryRun r2;
    r2.plan = "edited plan (2 groups) \u00b7 CPU, 2 threads";
    r2.totalSeconds = 2.5e-3;
    r2.kernels = {kernel("fused_0", {"relu", "conv"}, 0.8e-3), kernel("pool", {"pool"}, 2.5e-4)};
    views::TimingHistoryRun r3;
    r3.plan = "planner hidet \u00b7 CPU, 2 threads";
    r3.totalSeconds = 2e-3;
    r3.kernels = {kernel("pool_gone", {"other"}, 1e-4), kernel("conv_relu", {"conv", "relu"}, 0.7e-3)};
    h.add(r1);
    h.add(r2);
    h.add(r3);
    return h;
}

using test::loadSample;

}  // namespace

class TimingHistoryTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tessera_gui_timing_history_tests"));
    }

    void seriesFollowsRenamedKernelAndLeavesGaps()
    {
        const app::RunHistory h = threeRuns();
        const auto snap = h.snapshot();
        QCOMPARE(snap->runs.size(), std::size_t(3));
        const auto conv = views::historySeries(*snap, "conv_relu");
        QCOMPARE(conv.size(), std::size_t(3));
        QCOMPARE(conv[0].run, 1);
        QVERIFY(conv[0].present);
        QCOMPARE(conv[0].seconds, 1e-3);
        QCOMPARE(conv[0].q1Seconds, 0.9e-3);
        QCOMPARE(conv[0].q3Seconds, 1.2e-3);
        QCOMPARE(conv[0].kernel, std::string("conv_relu"));
        QVERIFY(!conv[0].planDiffers);
        // Renamed by the plan change: matched by its nodes (in another order).
        QCOMPARE(conv[1].run, 2);
        QVERIFY(conv[1].present);
        QCOMPARE(conv[1].seconds, 0.8e-3);
        QCOMPARE(conv[1].kernel, std::string("fused_0"));
        QVERIFY(conv[1].planDiffers);
        QCOMPARE(conv[1].plan, std::string("edited plan (2 groups) \u00b7 CPU, 2 threads"));
        QCOMPARE(conv[2].seconds, 0.7e-3);
        QVERIFY(!conv[2].planDiffers);

        // "pool_gone" (run 3 only) has no match in runs 1 and 2: gaps there.
        const auto other = views::historySeries(*snap, "pool_gone");
        QCOMPARE(other.size(), std::size_t(3));
        QVERIFY(!other[0].present);
        QVERIFY(!other[1].present);
        QVERIFY(other[2].present);
        QCOMPARE(other[2].seconds, 1e-4);

        // No kernel: end to end.
        const auto total = views::historySeries(*snap, "");
        QCOMPARE(total.size(), std::size_t(3));
        QCOMPARE(total[0].seconds, 3e-3);
        QCOMPARE(total[1].seconds, 2.5e-3);
        QCOMPARE(total[2].seconds, 2e-3);
        // A kernel the latest run lacks ("pool" is gone from run 3) has no series.
        QVERIFY(views::historySeries(*snap, "pool").empty());
    }

    void historyIsBoundedAndClears()
    {
        app::RunHistory h;
        const auto before = h.snapshot();
        for (int i = 0; i < 55; ++i) {
            views::TimingHistoryRun r;
            r.totalSeconds = 1e-3 * (i + 1);
            QCOMPARE(h.add(r), i + 1);
        }
        QCOMPARE(h.size(), app::RunHistory::kCapacity);
        QCOMPARE(h.snapshot()->runs.front().number, 6);
        QCOMPARE(h.snapshot()->runs.back().number, 55);
        QVERIFY(before->runs.empty());  // a snapshot taken earlier is unchanged
        h.clear();
        QCOMPARE(h.size(), std::size_t(0));
        QCOMPARE(h.add(views::TimingHistoryRun{}), 1);
    }

    void chartDrawsPointsAndTooltips()
    {
        const app::RunHistory h = threeRuns();
        views::TimingHistoryChart chart;
        chart.resize(500, 200);
        chart.setSeries(views::historySeries(*h.snapshot(), "pool_gone"), QStringLiteral("pool_gone"));
        QCOMPARE(chart.pointCount(), 1);
        QCOMPARE(chart.title(), QStringLiteral("'pool_gone' over 3 runs (median, us)"));
        QCOMPARE(chart.toolTipFor(0), QStringLiteral("Run 1: kernel missing or not timed\nplanner hidet \u00b7 CPU, 2 threads"));
        chart.setSeries(views::historySeries(*h.snapshot(), "conv_relu"), QStringLiteral("conv_relu"));
        QCOMPARE(chart.pointCount(), 3);
        QCOMPARE(chart.title(), QStringLiteral("'conv_relu' over 3 runs (median, ms)"));
        QCOMPARE(chart.toolTipFor(0),
                 QStringLiteral("Run 1: 1.000 ms (q1-q3 900.0 us - 1.200 ms)\nplanner hidet \u00b7 CPU, 2 threads"));
        QCOMPARE(chart.toolTipFor(1), QStringLiteral("Run 2: 800.0 us\nas 'fused_0' (matched by its nodes)\nedited plan "
                                                     "(2 groups) \u00b7 CPU, 2 threads (differs from the latest run)"));
        QCOMPARE(chart.toolTipFor(3), QString());
        chart.setSeries(views::historySeries(*h.snapshot(), ""), QString());
        QCOMPARE(chart.title(), QStringLiteral("End to end over 3 runs (median, ms); select a kernel for its history"));
        QCOMPARE(views::TimingHistoryChart::unitFor(2.0).first, QStringLiteral("s"));
    }

    void projectRunsSeedTheHistory()
    {
        project::RunRecord a;
        a.time = "2026-11-30T10:00:00Z";
        a.target = "cpu";
        a.planner = "hidet";
        a.threads = 2;
        a.totalSeconds = 4e-5;
        project::KernelMeasurement k;
        k.name = "dw_conv";
        k.group = "g0";
        k.nodes = {"dw_conv", "relu6"};
        k.medianSeconds = 3e-5;
        a.kernels = {k};
        const views::TimingHistoryRun r = app::RunHistory::fromRecord(a);
        QCOMPARE(r.plan, std::string("planner hidet \u00b7 CPU, 2 threads"));
        QCOMPARE(r.totalSeconds, 4e-5);
        QCOMPARE(r.kernels.size(), std::size_t(1));
        QCOMPARE(r.kernels[0].ops, (std::vector<std::string>{"dw_conv", "relu6"}));
        QCOMPARE(r.kernels[0].reps, std::int64_t(1));
        project::RunRecord b = a;
        b.planner = "user";
        b.kernels[0].name = "fused";
        b.kernels[0].medianSeconds = 2e-5;
        QCOMPARE(app::RunHistory::fromRecord(b).plan, std::string("edited plan (1 group) \u00b7 CPU, 2 threads"));

        // Opened in the window, the project's stored runs are the chart's first points.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto p = project::newProject((kSamples + QStringLiteral("/dw_pw_block.onnx")).toStdString());
        QVERIFY(p.ok());
        p->runs = {a, b};
        const QString file = dir.filePath(QStringLiteral("h.tessera"));
        QVERIFY(project::saveProject(*p, file.toStdString()).ok());
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList&) {});
        w.projectController()->setUnsavedPrompt([](const QString&) { return app::ProjectController::UnsavedChoice::Discard; });
        w.projectController()->setRecoverPrompt([](const QString&, const QString&) { return false; });
        w.projectController()->setInformer([](const QString&, const QString&) {});
        QSignalSpy shown(&w, &app::MainWindow::modelShown);
        w.openFile(file);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() > 0, 60000);
        auto* panel = w.findChild<views::TimingPanel*>(QStringLiteral("timingPanel"));
        QVERIFY(panel && panel->history());
        QCOMPARE(panel->history()->runs.size(), std::size_t(2));
        // The newest run's kernel "fused" is "dw_conv" of the first run, by its nodes.
        const auto series = views::historySeries(*panel->history(), "fused");
        QCOMPARE(series.size(), std::size_t(2));
        QCOMPARE(series[0].kernel, std::string("dw_conv"));
        QCOMPARE(series[0].seconds, 3e-5);
        QVERIFY(series[0].planDiffers);
        QCOMPARE(series[1].seconds, 2e-5);
    }

    void etaStrings()
    {
        QCOMPARE(app::EtaEstimator::formatRemaining(1.0), QStringLiteral("almost done"));
        QCOMPARE(app::EtaEstimator::formatRemaining(7.4), QStringLiteral("about 7 s left"));
        QCOMPARE(app::EtaEstimator::formatRemaining(21.0), QStringLiteral("about 20 s left"));
        QCOMPARE(app::EtaEstimator::formatRemaining(95.0), QStringLiteral("about 95 s left"));
        QCOMPARE(app::EtaEstimator::formatRemaining(200.0), QStringLiteral("about 3 min left"));
        QCOMPARE(app::EtaEstimator::formatRemaining(3600.0), QStringLiteral("about 1 h left"));
        QCOMPARE(app::EtaEstimator::formatRemaining(4800.0), QStringLiteral("about 1 h 20 min left"));

        app::EtaEstimator eta;
        eta.start();
        QVERIFY(!eta.update(0.05, 1.0));  // too early, too little
        QVERIFY(!eta.update(0.5, 1.5));   // before 2 s
        QVERIFY(!eta.update(0.05, 2.5));  // below 10%
        // 20% after 5 s: raw 20 s left.
        auto left = eta.update(0.2, 5.0);
        QVERIFY(left);
        QCOMPARE(*left, 20.0);
        QCOMPARE(app::EtaEstimator::formatRemaining(*left), QStringLiteral("about 20 s left"));
        // 50% after 10 s: raw 10; carried 20 - 5 = 15; blended 12.5.
        left = eta.update(0.5, 10.0);
        QVERIFY(left);
        QCOMPARE(*left, 12.5);
        // 90% after 12 s: raw 12 x 0.1 / 0.9 = 1.333; carried 10.5; blended 5.9167.
        left = eta.update(0.9, 12.0);
        QVERIFY(left);
        QVERIFY(std::abs(*left - (12.0 * 0.1 / 0.9 + 10.5) / 2) < 1e-12);
        QCOMPARE(app::EtaEstimator::formatRemaining(*left), QStringLiteral("about 6 s left"));
        QVERIFY(!eta.update(1.0, 13.0));  // done: nothing

        // A short job (2.2 s elapsed at 80%: about 2.75 s in all) shows none.
        eta.start();
        QVERIFY(!eta.update(0.8, 2.2));
    }

    void twoRunsGiveTwoPoints()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("c++")).isEmpty())
            QSKIP("no C++ compiler (c++) on PATH: generated kernels cannot be compiled");
        app::MainWindow w;
        QStringList errors;
        w.setErrorReporter([&](const QString&, const QStringList& lines) { errors += lines; });
        w.resize(1400, 900);
        w.show();
        QVERIFY2(loadSample(w, QStringLiteral("dw_pw_block.onnx")), qPrintable(errors.join('\n')));
        auto* panel = w.findChild<views::TimingPanel*>(QStringLiteral("timingPanel"));
        QVERIFY(panel);
        QSignalSpy shown(&w, &app::MainWindow::runFinished);
        for (int i = 0; i < 2; ++i) {
            shown.clear();
            w.run()->runAction()->trigger();
            QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 600000);
            QVERIFY2(shown.first().at(0).toBool(), qPrintable(w.run()->runStatusText()));
        }
        QVERIFY(panel->history());
        QCOMPARE(panel->history()->runs.size(), std::size_t(2));
        QCOMPARE(panel->historyChart()->pointCount(), 2);  // end to end, nothing selected
        // The first run goes before the plan is made, the second with the planner's plan: same plan.
        QCOMPARE(panel->history()->runs[0].plan, panel->history()->runs[1].plan);
        QVERIFY(panel->history()->runs[1].plan.rfind("planner ", 0) == 0);
        const std::string first = panel->model()->kernelAt(0);
        QVERIFY(!first.empty());
        panel->selectKernel(first);
        QCOMPARE(panel->selectedKernel(), first);
        QCOMPARE(panel->historyChart()->series().size(), std::size_t(2));
        QCOMPARE(panel->historyChart()->pointCount(), 2);
        QCOMPARE(panel->historyChart()->series()[1].run, 2);
        QVERIFY(panel->historyChart()->title().startsWith(QStringLiteral("'%1' over 2 runs").arg(QString::fromStdString(first))));
        // TESSERA_TEST_SCREENSHOT=path.png: the window with the chart, for the docs (run under Xvfb).
        if (const QString shot = qEnvironmentVariable("TESSERA_TEST_SCREENSHOT"); !shot.isEmpty()) {
            w.resizeDocks({w.run()->timingDock()}, {380}, Qt::Vertical);
            QTest::qWait(500);
            QVERIFY(w.grab().save(shot));
        }

        // Another model clears the history.
        QVERIFY2(loadSample(w, QStringLiteral("dw_pw_block.onnx")), qPrintable(errors.join('\n')));
        QCOMPARE(panel->history()->runs.size(), std::size_t(0));
        QCOMPARE(panel->historyChart()->pointCount(), 0);
    }
};

QTEST_MAIN(TimingHistoryTest)
#include "timing_history_test.moc"
