// The run's progress bar and ETA (issue 8): RunProgress turns the pipeline's per-kernel reports
// into a fraction in time (exact values on a controlled clock), and a real run moves the bar
// through intermediate values, kernel by kernel, with the stage naming the kernel count; a
// MobileNetV2 CPU run shows an estimate of the time left in the status bar. Offscreen; the runs
// need tessera-runner (TESSERA_RUNNER, set by CMake) and `c++`.
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/document.h"
#include "app/gui/main_window.h"
#include "app/gui/roofline_controller.h"
#include "app/gui/run_controller.h"
#include "app/gui/run_progress.h"
#include "app/gui/run_session.h"
#include "app/gui/session.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"

using namespace tessera;
using app::RunProgress;

namespace {

const QString kSamples = QStringLiteral(TESSERA_SAMPLES);

bool near(double a, double b) { return std::abs(a - b) < 1e-9; }

}  // namespace

class RunProgressTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tessera_gui_run_progress_tests"));
    }

    void fractionIsElapsedOverElapsedPlusRemaining()
    {
        RunProgress p;
        // 100 nodes, timed for 0.1 s per kernel, checked; default rates (30 kB/s, 0.02 s per check).
        p.start(0.0, 100, true, 0.1, true, {});
        p.compileProgress(0.5, 0.5, "lowering");
        QCOMPARE(p.stage(), QStringLiteral("Lowering"));
        // compile: 1 s expected (0.5 s for half), 0.5 left; module: 100 x 2800 B / 30000 B/s;
        // running: 100 x (0.1 + 0.03) + 0.1; checking: 100 x 0.02.
        const double rest0 = 0.5 + 280000.0 / 30000.0 + 13.1 + 2.0;
        QVERIFY(near(p.remaining(0.5), rest0));
        QVERIFY(near(p.fraction(0.5), 0.5 / (0.5 + rest0)));

        p.compiled(1.0, 300000, 100);
        QCOMPARE(p.phase(), RunProgress::Phase::Module);
        QCOMPARE(p.stage(), QStringLiteral("Compiling kernels"));
        // Three seconds into a compile expected to take ten: the clock alone moves the bar.
        QVERIFY(near(p.remaining(4.0), 7.0 + 13.1 + 2.0));
        const double atFour = p.fraction(4.0);
        QVERIFY(near(atFour, 4.0 / 26.1));
        QVERIFY(p.fraction(6.0) > atFour);

        p.report(11.0, 0, 1, pipeline::kPhaseCompilingModule);
        p.report(11.0, 1, 1, pipeline::kPhaseCompilingModule);
        QCOMPARE(p.phase(), RunProgress::Phase::Running);
        QCOMPARE(p.stage(), QStringLiteral("Running and timing kernels (0 of 100)"));

        p.report(11.0, 0, 100, pipeline::kPhaseRunningKernels);
        p.report(21.0, 50, 100, pipeline::kPhaseRunningKernels);
        QCOMPARE(p.stage(), QStringLiteral("Running and timing kernels (50 of 100)"));
        // 0.2 s per kernel so far: 50 x 0.2 + the end-to-end timing + the check.
        QVERIFY(near(p.remaining(21.0), 10.0 + 0.1 + 2.0));
        QVERIFY(near(p.fraction(21.0), 21.0 / 33.1));

        p.report(31.0, 100, 100, pipeline::kPhaseRunningKernels);
        p.report(31.0, 0, 100, pipeline::kPhaseChecking);
        p.report(32.0, 50, 100, pipeline::kPhaseChecking);
        QCOMPARE(p.stage(), QStringLiteral("Checking against the reference (50 of 100)"));
        QVERIFY(near(p.remaining(32.0), 1.0));
        QVERIFY(near(p.fraction(32.0), 32.0 / 33.0));
        p.report(33.0, 100, 100, pipeline::kPhaseChecking);

        // What the job measured: the compiler's 30000 B/s (300000 B in 10 s), 0.02 s per check.
        QVERIFY(near(p.learnedRates().compileBytesPerSecond, 30000.0));
        QVERIFY(near(p.learnedRates().checkSecondsPerStep, 0.02));
        p.finish(33.0);
        QCOMPARE(p.fraction(33.0), 1.0);
    }

    void neverGoesBackAndACacheHitTeachesNothing()
    {
        RunProgress p;
        RunProgress::Rates rates;
        rates.compileBytesPerSecond = 50000;
        p.start(0.0, 10, false, 0.1, false, rates);
        p.compiled(0.2, 100000, 10);
        // A cache hit: the module phase ends at once and says nothing about the compiler.
        p.report(0.2, 0, 1, pipeline::kPhaseCompilingModule);
        p.report(0.21, 1, 1, pipeline::kPhaseCompilingModule);
        QVERIFY(near(p.learnedRates().compileBytesPerSecond, 50000.0));
        p.report(0.3, 3, 10, pipeline::kPhaseRunningKernels);
        QCOMPARE(p.stage(), QStringLiteral("Running kernels (3 of 10)"));
        const double before = p.fraction(0.3);
        // Kernels suddenly slow (0.5 s for the next one): the estimate grows, the bar stays put.
        p.report(0.8, 4, 10, pipeline::kPhaseRunningKernels);
        QVERIFY(p.remaining(0.8) > p.remaining(0.3));
        QCOMPARE(p.fraction(0.8), before);
        // Nothing left to estimate still is not 100%: that belongs to the end of the job.
        p.report(1.0, 10, 10, pipeline::kPhaseRunningKernels);
        QCOMPARE(p.remaining(1.0), 0.0);
        QCOMPARE(p.fraction(1.0), 0.99);
    }

    void barMovesKernelByKernelDuringARun()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("c++")).isEmpty())
            QSKIP("no C++ compiler (c++) on PATH: generated kernels cannot be compiled");
        auto loaded = pipeline::loadModel((kSamples + QStringLiteral("/dw_pw_block.onnx")).toStdString());
        QVERIFY(loaded.ok());
        auto model = std::make_shared<const ir::Model>(std::move(*loaded));
        QSettings().remove(QStringLiteral("run"));
        app::RunSession session;
        app::RunSettings settings;
        settings.compile.planner = "none";  // three kernels: dw_conv, relu6, pw_conv
        settings.run.minSeconds = 0.05;
        // An empty JIT cache and a compiler that takes at least a second: the run teaches the
        // estimate the compiler's speed.
        QTemporaryDir cache;
        QVERIFY(cache.isValid());
        settings.run.compiler.cacheDir = cache.path().toStdString();
        const QString slowCxx = cache.filePath(QStringLiteral("slow-c++"));
        {
            QFile f(slowCxx);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("#!/bin/sh\nsleep 1\nexec c++ \"$@\"\n");
        }
        QVERIFY(QFile::setPermissions(slowCxx, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
        settings.run.compiler.compiler = slowCxx.toStdString();
        QSignalSpy progress(&session, &app::RunSession::progress);
        QSignalSpy finished(&session, &app::RunSession::finished);
        session.start(model, settings);
        QVERIFY(finished.wait(180000));
        QVERIFY2(finished.first().at(1).toBool(),
                 qPrintable(QString::fromStdString(session.lastOutcome().diagnostics.formatAll())));

        QStringList stages;
        QList<double> fractions;
        for (const QList<QVariant>& p : progress) {
            fractions << p.at(1).toDouble();
            if (stages.isEmpty() || stages.last() != p.at(2).toString())
                stages << p.at(2).toString();
        }
        // Every kernel is its own step of the bar, in order, then every check.
        for (const QString& s : {QStringLiteral("Running and timing kernels (1 of 3)"),
                                 QStringLiteral("Running and timing kernels (2 of 3)"),
                                 QStringLiteral("Running and timing kernels (3 of 3)"),
                                 QStringLiteral("Checking against the reference (1 of 3)"),
                                 QStringLiteral("Checking against the reference (3 of 3)")})
            QVERIFY2(stages.contains(s), qPrintable(stages.join(QLatin1String(" | "))));
        QVERIFY(stages.indexOf(QStringLiteral("Running and timing kernels (1 of 3)")) <
                stages.indexOf(QStringLiteral("Running and timing kernels (2 of 3)")));
        // The bar never goes back and passes through values strictly between start and end.
        int intermediate = 0;
        for (int i = 0; i < fractions.size(); ++i) {
            if (i > 0)
                QVERIFY2(fractions[i] >= fractions[i - 1], qPrintable(QString::number(i)));
            if (fractions[i] > 0.0 && fractions[i] < 1.0)
                ++intermediate;
        }
        QVERIFY2(intermediate >= 5, qPrintable(QString::number(intermediate)));
        QVERIFY(fractions.last() < 1.0);  // the last report precedes finished(); the window fills the bar

        // The compile (over a second) taught the compiler's speed, kept for the next session:
        // the module's bytes over the phase's length, so at most its bytes per second.
        const auto& report = session.lastOutcome().report;
        QVERIFY(report && !report->library.cacheHit);
        QVERIFY(report->library.compileSeconds >= 1.0);
        const double learned = session.progressRates().compileBytesPerSecond;
        const double bytes = static_cast<double>(session.lastOutcome().compiled->code.source.size());
        QVERIFY2(learned > 0 && learned <= bytes, qPrintable(QStringLiteral("%1 B/s for %2 B").arg(learned).arg(bytes)));
        QCOMPARE(QSettings().value(QStringLiteral("run/progressCompileBytesPerSecond")).toDouble(), learned);
    }

    void ratesAreReadBackInTheNextSession()
    {
        QSettings().setValue(QStringLiteral("run/progressCompileBytesPerSecond"), 12345.0);
        QSettings().setValue(QStringLiteral("run/progressCheckSecondsPerStep"), 0.5);
        {
            app::RunSession session;
            QCOMPARE(session.progressRates().compileBytesPerSecond, 12345.0);
            QCOMPARE(session.progressRates().checkSecondsPerStep, 0.5);
        }
        // Nonsense in the settings falls back to the defaults.
        QSettings().setValue(QStringLiteral("run/progressCompileBytesPerSecond"), -3.0);
        app::RunSession session;
        QCOMPARE(session.progressRates().compileBytesPerSecond, RunProgress::kDefaultCompileBytesPerSecond);
        QCOMPARE(session.progressRates().checkSecondsPerStep, RunProgress::kDefaultCheckSecondsPerStep);
        QSettings().remove(QStringLiteral("run"));
    }

    void mobileNetRunShowsTheTimeLeft()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("c++")).isEmpty())
            QSKIP("no C++ compiler (c++) on PATH: generated kernels cannot be compiled");
        app::MainWindow w;
        w.resize(1400, 900);
        w.show();
        QSignalSpy loaded(w.session(), &app::Session::finished);
        w.openFile(kSamples + QStringLiteral("/mobilenet_v2.onnx"));
        QVERIFY(loaded.wait(120000));
        QVERIFY(loaded.first().at(1).toBool());

        QSignalSpy finished(w.document()->runs(), &app::RunSession::finished);
        QStringList texts;
        connect(w.document()->runs(), &app::RunSession::progress, this, [&] { texts << w.run()->runStatusText(); });
        w.run()->runAction()->trigger();
        QVERIFY(finished.wait(300000));
        QVERIFY(finished.first().at(1).toBool());
        // About 100 kernels timed for 0.1 s each: the status bar counts them and says how long is left.
        bool counted = false, eta = false;
        for (const QString& t : texts) {
            counted = counted || t.contains(QLatin1String("Running and timing kernels ("));
            eta = eta || (t.contains(QLatin1String("kernels (")) && t.contains(QLatin1String(" left")));
        }
        QVERIFY2(counted, qPrintable(texts.join(QLatin1Char('\n'))));
        QVERIFY2(eta, qPrintable(texts.mid(0, 40).join(QLatin1Char('\n'))));
    }
};

QTEST_MAIN(RunProgressTest)
#include "run_progress_test.moc"
