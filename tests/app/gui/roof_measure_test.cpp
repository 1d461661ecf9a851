// Run > Measure Roofs: the GUI twin of `tessera-cli roofline measure --target cpu --save`
// (app/gui/roof_session.h, app/gui/main_window_roofs.cpp).

#include <algorithm>
#include <cmath>

#include <QDir>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QToolButton>

#include "app/gui/main_window.h"
#include "app/gui/roof_session.h"
#include "app/gui/run_session.h"
#include "app/gui/session.h"
#include "core/perf/cpu_profile.h"
#include "core/perf/cpu_microbench.h"
#include "core/perf/kernel_points.h"
#include "core/perf/machine_profile.h"
#include "views/roofline/roofline_view.h"

#include "gui_test_util.h"

using namespace tessera;

namespace {

/// Profiles written into the temporary profile folder.
QStringList savedProfiles(const QTemporaryDir& config)
{
    return QDir(config.path() + QStringLiteral("/tessera/profiles")).entryList({QStringLiteral("*.json")}, QDir::Files);
}

int countRoofLines(const views::RooflineView& v, bool bandwidth)
{
    int n = 0;
    for (const auto& line : v.roofLines())
        n += line.bandwidth == bandwidth ? 1 : 0;
    return n;
}

/// A measurement that looks disturbed: the 2-thread FMA peak is half the 1-thread one.
perf::CpuMicrobenchResult disturbedResult()
{
    perf::CpuMicrobenchResult r;
    r.isa = perf::CpuIsa::Scalar;
    r.roofs = {perf::computeRoof("FP32 FMA peak", "fp32", 100.0, 1, "fma scalar"),
               perf::computeRoof("FP32 FMA peak", "fp32", 50.0, 2, "fma scalar"),
               perf::bandwidthRoof("L1 bandwidth", "L1", 500.0, 2, "load"),
               perf::bandwidthRoof("DRAM bandwidth", "DRAM", 20.0, 2, "triad")};
    return r;
}

}  // namespace

class RoofMeasureTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tessera_gui_roof_tests"));
    }

    void init()
    {
        // Every test gets an empty profile folder (perf::defaultProfileDir reads XDG_CONFIG_HOME).
        m_config = std::make_unique<QTemporaryDir>();
        QVERIFY(m_config->isValid());
        qputenv("XDG_CONFIG_HOME", m_config->path().toLocal8Bit());
    }

    void measureSavesAndTheRooflineShowsTheRoofs()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("c++")).isEmpty())
            QSKIP("no C++ compiler (c++) on PATH: the micro-benchmarks cannot be compiled");
        app::MainWindow w;
        w.resize(1400, 900);
        w.show();
        int asked = 0;
        // The CI machine is busy: disturbed roofs are saved anyway here (the prompt has its own test).
        w.roofline()->setRoofSavePrompt([&](const QStringList&) {
            ++asked;
            return true;
        });
        perf::CpuMicrobenchOptions o = w.roofline()->roofSession()->options();
        QVERIFY(o.quick);  // the GUI measures in quick mode by default
        o.minSeconds = 0.005;
        w.roofline()->roofSession()->setOptions(o);

        views::RooflineView* view = w.roofline()->rooflineView();
        QVERIFY(view->bannerText().contains(QStringLiteral("Run > Measure Roofs")));
        QVERIFY(view->measureButton()->isVisibleTo(view));
        QCOMPARE(w.roofline()->measureRoofsAction()->text(), QStringLiteral("&Measure Roofs (CPU)"));

        QSignalSpy progress(w.roofline()->roofSession(), &app::RoofSession::progress);
        QSignalSpy done(w.roofline(), &app::RooflineController::roofMeasurementFinished);
        view->measureButton()->click();  // the banner's button asks the window, which measures
        QVERIFY(w.roofline()->roofSession()->isBusy());
        auto* bar = w.findChild<QProgressBar*>(QStringLiteral("roofProgress"));
        QVERIFY(bar && bar->isVisibleTo(&w));
        QVERIFY(w.findChild<QToolButton*>(QStringLiteral("cancelRoofs"))->isVisibleTo(&w));
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 180000);
        QVERIFY2(progress.count() >= 3, qPrintable(QString::number(progress.count())));  // starting, compile, measurements
        QVERIFY(progress.last().at(1).toDouble() > 0.5);
        QVERIFY(!bar->isVisibleTo(&w));

        const app::RoofOutcome& out = w.roofline()->roofSession()->lastOutcome();
        QVERIFY2(out.ok, out.diagnostics.formatAll().c_str());
        QCOMPARE(asked, out.problems.empty() ? 0 : 1);
        const QString path = done.first().at(0).toString();
        QVERIFY(!path.isEmpty());
        QCOMPARE(savedProfiles(*m_config).size(), 1);
        QVERIFY(path.startsWith(m_config->path()));
        QVERIFY(w.run()->runStatusText().startsWith(QStringLiteral("Roofs saved: ")));

        // The dock picked the profile up at once: the banner is gone and the roofs are the
        // chart's choice of the measured ones (perf::chartRoofs).
        QVERIFY(view->bannerText().isEmpty());
        const std::vector<perf::Roof> chart = perf::chartRoofs(out.result->roofs, 0, "fp32");
        const int bandwidth = static_cast<int>(
            std::count_if(chart.begin(), chart.end(), [](const perf::Roof& r) { return r.kind == perf::Roof::Kind::Bandwidth; }));
        // Compute ceilings within 3 % of each other (ADD and MUL, usually) share one drawn line.
        std::vector<double> ceilings;
        for (const perf::Roof& r : chart) {
            if (r.kind != perf::Roof::Kind::Compute)
                continue;
            auto same = std::find_if(ceilings.begin(), ceilings.end(),
                                     [&](double c) { return std::fabs(c - r.value) <= 0.03 * c; });
            if (same != ceilings.end())
                *same = std::max(*same, r.value);
            else
                ceilings.push_back(r.value);
        }
        const int compute = static_cast<int>(ceilings.size());
        QVERIFY(bandwidth >= 1 && compute >= 1);
        QCOMPARE(countRoofLines(*view, true), bandwidth);
        QCOMPARE(countRoofLines(*view, false), compute);
        auto saved = perf::loadProfile(path.toStdString());
        QVERIFY(saved.ok());
        QCOMPARE(saved->roofs.size(), out.result->roofs.size());
        QVERIFY(saved->description.rfind("tessera Run > Measure Roofs --quick, ISA ", 0) == 0);
    }

    void aSavedProfileIsShownBeforeAnyRun()
    {
        perf::CpuMicrobenchResult r;
        r.isa = perf::CpuIsa::Scalar;
        r.roofs = {perf::computeRoof("FP32 FMA peak", "fp32", 100.0, 1, "fma scalar"),
                   perf::computeRoof("FP32 FMA peak", "fp32", 190.0, 2, "fma scalar"),
                   perf::bandwidthRoof("L1 bandwidth", "L1", 500.0, 2, "load"),
                   perf::bandwidthRoof("DRAM bandwidth", "DRAM", 20.0, 2, "triad")};
        {
            // No profile yet: the banner says how to measure, with its button.
            app::MainWindow w;
            QVERIFY(test::loadSample(w, QStringLiteral("dw_pw_block.onnx")));
            views::RooflineView* view = w.roofline()->rooflineView();
            QVERIFY(view->bannerText().contains(QStringLiteral("No measured roofs")));
            QVERIFY(view->measureButton()->isVisibleTo(view));
            QVERIFY(view->roofLines().empty());

            // Roofs saved meanwhile (as `tessera-cli roofline measure --save` does) show with the
            // next model, without a run.
            QVERIFY(perf::saveProfileToDefaultDir(perf::cpuProfileFromMeasurement(r, "test", true)).ok());
            QCOMPARE(savedProfiles(*m_config).size(), 1);
            QVERIFY(test::loadSample(w, QStringLiteral("mobilenet_v2.onnx")));
            QCOMPARE(view->bannerText(), QString());
            QCOMPARE(countRoofLines(*view, true), 2);
            QVERIFY(countRoofLines(*view, false) >= 1);
        }
        {
            // A relaunch: the saved roofs are on the chart as soon as the model is shown.
            app::MainWindow w;
            w.resize(1400, 900);
            w.show();
            QVERIFY(test::loadSample(w, QStringLiteral("mobilenet_v2.onnx")));
            QVERIFY(!w.document()->runs()->lastOutcome().report);  // no run
            views::RooflineView* view = w.roofline()->rooflineView();
            QCOMPARE(view->bannerText(), QString());
            QVERIFY(!view->measureButton()->isVisibleTo(view));
            QCOMPARE(countRoofLines(*view, true), 2);
            QVERIFY(countRoofLines(*view, false) >= 1);
            QVERIFY2(view->title().contains(QStringLiteral("Roofs: cpu")), qPrintable(view->title()));
            QVERIFY(view->kernelNames().isEmpty());

            // Without a run the chart follows the target: a CUDA target has no CPU roofs.
            QTRY_VERIFY_WITH_TIMEOUT(w.document()->targetsProbed(), 60000);
            QVERIFY(w.document()->selectTarget(QStringLiteral("cuda")));
            if (w.document()->currentTarget().kind == app::RunTarget::Kind::CudaCompileOnly)
                QVERIFY2(view->bannerText().startsWith(QStringLiteral("CUDA compile only")), qPrintable(view->bannerText()));
            else
                QVERIFY2(view->bannerText().contains(QStringLiteral("CUDA device")), qPrintable(view->bannerText()));
            QVERIFY(!view->measureButton()->isVisibleTo(view));
            QVERIFY(w.document()->selectTarget(QStringLiteral("cpu")));
            QCOMPARE(view->bannerText(), QString());
            QCOMPARE(countRoofLines(*view, true), 2);
        }
    }

    void measuringAfterARunReplacesTheRunsDots()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("c++")).isEmpty())
            QSKIP("no C++ compiler (c++) on PATH: kernels cannot be compiled");
        app::MainWindow w;
        w.resize(1600, 1000);
        w.show();
        w.roofline()->setRoofSavePrompt([](const QStringList&) { return true; });
        perf::CpuMicrobenchOptions o = w.roofline()->roofSession()->options();
        o.minSeconds = 0.005;
        w.roofline()->roofSession()->setOptions(o);
        QSignalSpy loaded(w.session(), &app::Session::finished);
        w.openFile(QStringLiteral(TESSERA_SAMPLES "/dw_pw_block.onnx"));
        QVERIFY(loaded.wait(120000));
        QVERIFY(loaded.first().at(1).toBool());
        QSignalSpy ran(&w, &app::MainWindow::runFinished);
        w.run()->runAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(ran.count() == 1, 240000);
        views::RooflineView* view = w.roofline()->rooflineView();
        view->flush();
        const QStringList kernels = view->kernelNames();
        QVERIFY(!kernels.isEmpty());
        QVERIFY(!view->bannerText().isEmpty());
        QVERIFY(view->tooltipText(kernels.first()).contains(QStringLiteral("no measured roofs")));
        std::vector<QPointF> before;
        for (const QString& k : kernels)
            before.push_back(view->dotPositions(k).front());

        QSignalSpy done(w.roofline(), &app::RooflineController::roofMeasurementFinished);
        w.roofline()->measureRoofsAction()->trigger();
        // No run while measuring: the kernels and the micro-benchmarks would disturb each other.
        w.run()->runAction()->trigger();
        QVERIFY(!w.document()->runs()->isBusy());
        QVERIFY(w.run()->runStatusText().startsWith(QStringLiteral("Run once the roof measurement has finished")));
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 180000);
        QVERIFY(!done.first().at(0).toString().isEmpty());
        view->flush();
        // The run's kernels stay, at the same places, now measured against the new roofs.
        QVERIFY(view->bannerText().isEmpty());
        QCOMPARE(view->kernelNames(), kernels);
        for (int i = 0; i < kernels.size(); ++i)
            QCOMPARE(view->dotPositions(kernels[i]).front(), before[static_cast<std::size_t>(i)]);
        QVERIFY2(view->tooltipText(kernels.first()).contains(QStringLiteral("binding roof: ")),
                 qPrintable(view->tooltipText(kernels.first())));
        // TESSERA_TEST_SCREENSHOT=path.png: the window after the measurement (run under Xvfb).
        if (const QString shot = qEnvironmentVariable("TESSERA_TEST_SCREENSHOT"); !shot.isEmpty()) {
            QTest::qWait(500);
            QVERIFY(w.grab().save(shot));
        }
    }

    void cancelStopsTheMeasurementAndSavesNothing()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("c++")).isEmpty())
            QSKIP("no C++ compiler (c++) on PATH: the micro-benchmarks cannot be compiled");
        app::MainWindow w;
        w.show();
        QSignalSpy progress(w.roofline()->roofSession(), &app::RoofSession::progress);
        QSignalSpy finished(w.roofline()->roofSession(), &app::RoofSession::finished);
        QSignalSpy done(w.roofline(), &app::RooflineController::roofMeasurementFinished);
        w.roofline()->measureRoofsAction()->trigger();
        // Cancel once the worker reports (compiling or measuring), not before it began.
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 2, 60000);
        w.findChild<QToolButton*>(QStringLiteral("cancelRoofs"))->click();
        QCOMPARE(finished.count(), 1);
        QVERIFY(w.roofline()->roofSession()->lastOutcome().cancelled);
        QVERIFY(!w.roofline()->roofSession()->isBusy());
        QCOMPARE(done.count(), 1);
        QVERIFY(done.first().at(0).toString().isEmpty());
        QCOMPARE(w.run()->runStatusText(), QStringLiteral("Roof measurement cancelled: nothing was saved"));
        QVERIFY(!w.findChild<QProgressBar*>(QStringLiteral("roofProgress"))->isVisibleTo(&w));
        // The cancelled worker's late progress and result are dropped.
        const int progressSoFar = progress.count();
        QTest::qWait(1500);
        QCOMPARE(finished.count(), 1);
        QCOMPARE(progress.count(), progressSoFar);
        QVERIFY(savedProfiles(*m_config).isEmpty());
        QVERIFY(!w.roofline()->rooflineView()->bannerText().isEmpty());
    }

    void aSecondRequestSupersedesTheFirst()
    {
        app::RoofSession s;
        s.setMeasureFunction([](const perf::CpuMicrobenchOptions& o, const support::CancelToken* c)
                                 -> support::Expected<perf::CpuMicrobenchResult> {
            for (int i = 0; i < 20 && !c->isCancelled(); ++i) {
                o.progress(i / 20.0, "fake");
                QThread::msleep(10);
            }
            return disturbedResult();
        });
        QSignalSpy finished(&s, &app::RoofSession::finished);
        QSignalSpy progress(&s, &app::RoofSession::progress);
        QCOMPARE(s.start(), quint64(1));
        QCOMPARE(s.start(), quint64(2));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
        QTest::qWait(300);
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.first().at(0).toULongLong(), quint64(2));
        for (const QList<QVariant>& p : progress)
            QVERIFY(p.at(0).toULongLong() == 1 ? p.at(2).toString() == QStringLiteral("starting") : true);
        QVERIFY(s.lastOutcome().ok);
        QCOMPARE(s.lastOutcome().generation, quint64(2));
    }

    void disturbedRoofsAreSavedOnlyWhenTheUserAgrees()
    {
        app::MainWindow w;
        w.show();
        w.roofline()->roofSession()->setMeasureFunction(
            [](const perf::CpuMicrobenchOptions&, const support::CancelToken*) -> support::Expected<perf::CpuMicrobenchResult> {
                return disturbedResult();
            });
        const std::vector<std::string> expected = perf::roofConsistencyProblems(disturbedResult().roofs);
        QCOMPARE(expected.size(), std::size_t(1));
        QStringList askedWith;
        bool answer = false;
        w.roofline()->setRoofSavePrompt([&](const QStringList& problems) {
            askedWith = problems;
            return answer;
        });
        QSignalSpy done(w.roofline(), &app::RooflineController::roofMeasurementFinished);

        w.roofline()->measureRoofsAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
        QCOMPARE(askedWith, QStringList{QString::fromStdString(expected.front())});
        QVERIFY(done.first().at(0).toString().isEmpty());
        QVERIFY(savedProfiles(*m_config).isEmpty());
        QCOMPARE(w.run()->runStatusText(),
                 QStringLiteral("Roofs not saved: the measurement looks disturbed; measure again on a quiet machine"));
        QListWidget* problems = w.problemsList();
        QCOMPARE(problems->count(), 1);
        QVERIFY(problems->item(0)->text().contains(QStringLiteral("timings look disturbed")));
        QVERIFY(!w.roofline()->rooflineView()->bannerText().isEmpty());

        answer = true;
        askedWith.clear();
        w.roofline()->measureRoofsAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 10000);
        QCOMPARE(askedWith.size(), 1);
        QCOMPARE(savedProfiles(*m_config).size(), 1);
        QCOMPARE(w.run()->runStatusText().left(36), QStringLiteral("Roofs saved: 2 compute, 2 bandwidth "));
        QVERIFY(w.roofline()->rooflineView()->bannerText().isEmpty());
        // perf::chartRoofs keeps the 2-thread FMA roof and one roof per level.
        QCOMPARE(countRoofLines(*w.roofline()->rooflineView(), true), 2);
        QCOMPARE(countRoofLines(*w.roofline()->rooflineView(), false), 1);
        QCOMPARE(problems->count(), 1);  // the saved measurement's problem stays listed
    }

private:
    std::unique_ptr<QTemporaryDir> m_config;
};

QTEST_MAIN(RoofMeasureTest)
#include "roof_measure_test.moc"
