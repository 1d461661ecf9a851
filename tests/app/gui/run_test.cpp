// The run channel of the main window (Qt Test, offscreen): RunReport -> timing table and kernel
// statuses (exact values), runner-fault parsing, and end to end: load samples/dw_pw_block.onnx,
// Run (CPU), cancel, supersede, wait for a checked run while the event loop keeps turning, and a
// run whose compiler is missing. Needs tessera-runner (TESSERA_RUNNER, set by CMake) and `c++`.
#include <QDockWidget>
#include <QElapsedTimer>
#include <QListWidget>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTest>
#include <QTimer>

#include "app/gui/main_window.h"
#include "app/gui/run_results.h"
#include "app/gui/run_session.h"
#include "app/gui/session.h"
#include "views/code/code_panel.h"
#include "views/code/code_view.h"
#include "views/graph/graph_view.h"
#include "views/timing/timing_panel.h"
#include "views/timing/timing_table_model.h"
#include "tests/app/gui/gui_test_util.h"

using namespace tessera;
using views::KernelStatus;

namespace {

const QString kSamples = QStringLiteral(TESSERA_SAMPLES);

ir::Graph namedGraph(const std::vector<std::string>& names)
{
    ir::Graph g;
    for (const std::string& n : names) {
        ir::Node node;
        node.name = n;
        node.opType = "Relu";
        g.addNode(std::move(node));
    }
    return g;
}

pipeline::CompiledStep step(const std::string& name, const std::string& op, pipeline::StepKind kind, int first = 0,
                            int last = 0)
{
    pipeline::CompiledStep s;
    s.name = name;
    s.opType = op;
    s.kind = kind;
    s.entry = kind == pipeline::StepKind::Kernel ? "k_" + name : std::string();
    s.firstLine = first;
    s.lastLine = last;
    return s;
}

pipeline::CompiledModel compiledSample()
{
    pipeline::CompiledModel cm;
    cm.model.sourcePath = "/data/models/dw.onnx";
    cm.steps = {step("c0", "Conv", pipeline::StepKind::Kernel, 5, 20),
                step("k1", "Relu", pipeline::StepKind::Kernel, 22, 30),
                step("topk", "TopK", pipeline::StepKind::Reference)};
    cm.code.source = "// module\n#include <cstdint>\nint x;\n";
    return cm;
}

pipeline::KernelReport kernel(const std::string& name, const std::string& op, double flops, std::int64_t bytes,
                              double median, std::int64_t reps)
{
    pipeline::KernelReport k;
    k.name = name;
    k.opType = op;
    k.flops = flops;
    k.bytes = bytes;
    k.time.median = median;
    k.time.reps = reps;
    return k;
}

pipeline::OutputCheck check(const std::string& tensor, double relL2, double maxAbs, bool ok)
{
    pipeline::OutputCheck c;
    c.tensor = tensor;
    c.comparison.relL2 = relL2;
    c.comparison.maxAbs = maxAbs;
    c.comparison.ok = ok;
    c.comparison.compared = 64;
    if (!ok) {
        c.comparison.beyondTolerance = 3;
        c.comparison.firstBadIndex = 7;
        c.comparison.firstBadCoord = {0, 7};
        c.comparison.firstBadActual = 1.5;
        c.comparison.firstBadExpected = 0.5;
    }
    return c;
}

pipeline::RunReport reportSample()
{
    pipeline::RunReport r;
    r.threads = 2;
    r.checked = true;
    r.allPassed = false;
    r.total.median = 5e-6;
    r.total.reps = 20;
    r.library.path = "/cache/x.so";
    r.library.cacheHit = false;
    r.library.compileSeconds = 1.5;
    pipeline::KernelReport a = kernel("c0", "Conv", 4000, 2000, 2e-6, 100);
    a.checked = true;
    a.checks = {check("y0", 2e-8, 1e-7, true)};
    pipeline::KernelReport b = kernel("k1", "Relu", 64, 500, 1e-6, 50);
    b.checked = true;
    b.passed = false;
    b.checks = {check("y1", 0.3, 2.0, false), check("y1b", 0.01, 0.5, true)};
    pipeline::KernelReport c = kernel("topk", "TopK", 0, 256, 4e-4, 3);
    c.reference = true;
    c.checked = true;
    c.checks = {check("y2", 0, 0, true)};
    r.kernels = {a, b, c};
    return r;
}

QString cell(const views::TimingTableModel& m, int row, int col)
{
    return m.data(m.index(row, col)).toString();
}

int countStatus(views::GraphView* view, KernelStatus status)
{
    int n = 0;
    for (const views::SnapshotNode& sn : view->snapshot()->nodes)
        n += view->kernelStatus(sn.id) == status ? 1 : 0;
    return n;
}

/// Counts timer ticks and the longest gap between two, to show the UI thread kept turning.
struct TickCounter {
    QTimer timer;
    QElapsedTimer clock;
    int ticks = 0;
    qint64 last = 0;
    qint64 maxGap = 0;
    TickCounter()
    {
        timer.setInterval(20);
        QObject::connect(&timer, &QTimer::timeout, [this] {
            const qint64 now = clock.elapsed();
            maxGap = std::max(maxGap, now - last);
            last = now;
            ++ticks;
        });
        clock.start();
        timer.start();
    }
};

using test::loadSample;

}  // namespace

class RunTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tessera_gui_run_tests"));
    }

    void timingSnapshotFromReport()
    {
        const pipeline::RunReport report = reportSample();
        pipeline::RunOptions options;
        const views::TimingSnapshot s = app::timingSnapshot(report, options);
        QCOMPARE(s.rows.size(), std::size_t(3));
        QCOMPARE(s.threads, 2);
        QCOMPARE(s.totalSeconds, 5e-6);
        QCOMPARE(s.totalReps, std::int64_t(20));
        QVERIFY(s.checked);
        QCOMPARE(s.compileNote, std::string("compile 1.500 s"));
        QCOMPARE(s.rows[0].status, KernelStatus::Passed);
        QCOMPARE(s.rows[1].status, KernelStatus::Failed);
        QCOMPARE(s.rows[2].status, KernelStatus::Reference);
        QCOMPARE(s.rows[1].relError, 0.3);
        QCOMPARE(s.rows[1].maxAbsError, 2.0);
        QVERIFY2(s.rows[1].checkSummary.find("'y1': 3 of 64 elements beyond tolerance") == 0, s.rows[1].checkSummary.c_str());

        views::TimingTableModel m;
        m.setSnapshot(s);
        using M = views::TimingTableModel;
        const QStringList expected[3] = {
            {"c0", "Conv", "4 K", "2 KB", "2.00", "2.0 us", "2.00", "1.00", "2.0e-08", "passed"},
            {"k1", "Relu", "64", "500 B", "0.13", "1.0 us", "0.06", "0.50", "3.0e-01", "failed"},
            {"topk", "TopK (ref)", "0", "256 B", "0.00", "400.0 us", "0.00", "0.00", "0.0e+00", "reference"}};
        QCOMPARE(m.rowCount(), 3);
        QCOMPARE(m.columnCount(), int(M::ColumnCount));
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < M::ColumnCount; ++c)
                QCOMPARE(cell(m, r, c), expected[r][c]);
        }
        // Cache hits say so; untimed runs show dashes.
        pipeline::RunReport hit = report;
        hit.library.cacheHit = true;
        options.time = false;
        for (auto& k : hit.kernels)
            k.time = {};
        const views::TimingSnapshot s2 = app::timingSnapshot(hit, options);
        QCOMPARE(s2.compileNote, std::string("compile cache hit"));
        m.setSnapshot(s2);
        QCOMPARE(cell(m, 0, M::Median), QStringLiteral("-"));
        QCOMPARE(cell(m, 0, M::GFlops), QStringLiteral("-"));
        QCOMPARE(views::TimingPanel::summaryFor(s2),
                 QStringLiteral("3 kernels \u00b7 2 threads \u00b7 compile cache hit \u00b7 check: 1 of 3 outside "
                                "tolerance (first: 'k1')"));

        // A run disturbed by other processes says so in the Timings summary, not only in Problems.
        QCOMPARE(s.timingWarning, std::string());
        pipeline::RunReport busy = report;
        busy.warnings.warning("m.onnx", "stage", "not about timing");
        busy.warnings.warning("m.onnx", "timing", "other processes used 62% of the CPUs' time");
        options.time = true;
        const views::TimingSnapshot s3 = app::timingSnapshot(busy, options);
        QCOMPARE(s3.timingWarning, std::string("other processes used 62% of the CPUs' time"));
        views::TimingPanel panel;
        panel.setSnapshot(s3);
        QVERIFY2(panel.summaryText().endsWith(
                     QStringLiteral("\n\u26a0 Timings unreliable: other processes used 62% of the CPUs' time")),
                 qPrintable(panel.summaryText()));
        panel.setSnapshot(s);
        QVERIFY(!panel.summaryText().contains(QStringLiteral("unreliable")));
    }

    void kernelStatusMapping()
    {
        const pipeline::CompiledModel cm = compiledSample();
        const ir::Graph shown = namedGraph({"c0", "k1", "topk", "shape_folded"});
        const views::KernelStatusMap compiled = app::compileStatuses(cm, shown);
        QCOMPARE(compiled.size(), std::size_t(4));
        QCOMPARE(compiled.at("c0").status, KernelStatus::Compiled);
        QCOMPARE(compiled.at("c0").detail, QStringLiteral("entry k_c0, lines 5\u201320"));
        QCOMPARE(compiled.at("k1").status, KernelStatus::Compiled);
        QCOMPARE(compiled.at("topk").status, KernelStatus::Reference);
        QCOMPARE(compiled.at("shape_folded").status, KernelStatus::Folded);

        const views::KernelStatusMap ran = app::runStatuses(cm, reportSample(), shown);
        QCOMPARE(ran.at("c0").status, KernelStatus::Passed);
        QCOMPARE(ran.at("c0").detail, QStringLiteral("2.0 us \u00b7 relL2 2.0e-08"));
        QCOMPARE(ran.at("k1").status, KernelStatus::Failed);
        QVERIFY2(ran.at("k1").detail.startsWith(QStringLiteral("1.0 us \u00b7 relL2 3.0e-01\n'y1': 3 of 64")),
                 qPrintable(ran.at("k1").detail));
        QCOMPARE(ran.at("topk").status, KernelStatus::Reference);
        QCOMPARE(ran.at("topk").detail, QStringLiteral("400.0 us"));
        QCOMPARE(ran.at("shape_folded").status, KernelStatus::Folded);

        // Unchecked runs: Ran.
        pipeline::RunReport unchecked = reportSample();
        for (auto& k : unchecked.kernels) {
            k.checked = false;
            k.passed = true;
            k.checks.clear();
        }
        const views::KernelStatusMap ran2 = app::runStatuses(cm, unchecked, shown);
        QCOMPARE(ran2.at("c0").status, KernelStatus::Ran);
        QCOMPARE(ran2.at("k1").status, KernelStatus::Ran);
        QCOMPARE(ran2.at("topk").status, KernelStatus::Reference);

        QCOMPARE(app::moduleTitle(cm), QStringLiteral("dw.cpp \u00b7 2 kernels \u00b7 1 reference step \u00b7 3 lines"));
        QCOMPARE(app::stepForNode(cm, "k1")->firstLine, 22);
        QVERIFY(app::stepForNode(cm, "shape_folded") == nullptr);
    }

    void runnerFaultNamesKernel()
    {
        QCOMPARE(app::faultKernel("kernel 'conv 1' crashed: SIGSEGV (segmentation fault)"), std::string("conv 1"));
        QCOMPARE(app::faultKernel("kernel 'a' did not finish within 5 s (killed)"), std::string("a"));
        QCOMPARE(app::faultKernel("kernel 'it's' ended the runner with exit status 3"), std::string("it's"));
        QCOMPARE(app::faultKernel("runner crashed: SIGKILL"), std::string());
        QCOMPARE(app::faultKernel("end-to-end timing crashed: SIGSEGV"), std::string());
        support::Diagnostic d;
        d.where = "node 'branch' (If)";
        d.message = "no reference implementation";
        QCOMPARE(app::diagnosticNode(d), std::string("branch"));
        d.where = "runner";
        d.message = "kernel 'k 2' crashed: SIGABRT (aborted)";
        QCOMPARE(app::diagnosticNode(d), std::string("k 2"));
        d.where = "compile";
        d.message = "cancelled";
        QCOMPARE(app::diagnosticNode(d), std::string());
        QCOMPARE(app::RunSession::stageText("running kernels"), QStringLiteral("Running kernels"));
        QCOMPARE(app::RunSession::stageText("checking against the reference interpreter"),
                 QStringLiteral("Checking against the reference"));
    }

    void runChecksDwPwBlockWhileTheWindowKeepsTurning()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("c++")).isEmpty())
            QSKIP("no C++ compiler (c++) on PATH: generated kernels cannot be compiled");
        app::MainWindow w;
        QStringList errors;
        w.setErrorReporter([&](const QString&, const QStringList& lines) { errors += lines; });
        w.resize(1400, 900);
        w.show();
        QVERIFY(!w.run()->runAction()->isEnabled());  // nothing to run yet
        QVERIFY2(loadSample(w, QStringLiteral("dw_pw_block.onnx")), qPrintable(errors.join('\n')));
        QVERIFY(w.run()->runAction()->isEnabled());
        QVERIFY(w.run()->checkAction()->isChecked());
        QCOMPARE(w.run()->runAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_R));

        QSignalSpy finished(w.document()->runs(), &app::RunSession::finished);
        QSignalSpy shown(&w, &app::MainWindow::runFinished);

        // Cancel at once: reported synchronously, nothing else arrives later.
        w.run()->runAction()->trigger();
        QVERIFY(w.document()->runs()->isBusy());
        QVERIFY(w.run()->stopAction()->isEnabled());
        w.run()->stopAction()->trigger();
        QCOMPARE(finished.count(), 1);
        QVERIFY(w.document()->runs()->lastOutcome().cancelled);
        QCOMPARE(w.run()->runStatusText(), QStringLiteral("Run cancelled"));
        QVERIFY(!w.run()->stopAction()->isEnabled());

        // Two runs in a row: the first is superseded, only the second finishes.
        finished.clear();
        shown.clear();
        TickCounter ticks;
        QElapsedTimer clock;
        clock.start();
        w.run()->runAction()->trigger();
        w.run()->runAction()->trigger();
        const quint64 gen = w.document()->runs()->generation();
        QVERIFY(w.run()->codeDock()->isVisible());
        QVERIFY(w.run()->timingDock()->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 600000);
        const qint64 runMs = clock.elapsed();
        QTest::qWait(300);  // a stale result would arrive now: it must be dropped
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.first().at(0).toULongLong(), gen);
        const app::RunOutcome& out = w.document()->runs()->lastOutcome();
        QStringList problems;
        for (const auto& d : out.diagnostics.items())
            problems << QString::fromStdString(d.format());
        QVERIFY2(out.ok, qPrintable(problems.join('\n')));
        QCOMPARE(shown.count(), 1);
        QCOMPARE(shown.first().at(0).toBool(), true);

        // The event loop kept turning: ticks all along, never a long freeze.
        QVERIFY2(ticks.ticks >= std::max<qint64>(5, runMs / 20 / 4),
                 qPrintable(QStringLiteral("%1 ticks in %2 ms").arg(ticks.ticks).arg(runMs)));
        QVERIFY2(ticks.maxGap < 3000, qPrintable(QStringLiteral("longest gap %1 ms").arg(ticks.maxGap)));

        // Three kernels, all passed, in the graph and in the table.
        views::GraphView* view = w.graphView();
        QCOMPARE(out.report->kernels.size(), std::size_t(3));
        QCOMPARE(countStatus(view, KernelStatus::Passed), 3);
        QCOMPARE(countStatus(view, KernelStatus::Failed), 0);
        QCOMPARE(view->statusLegendText(), QStringLiteral("passed 3"));
        const views::TimingTableModel* table = w.run()->timingPanel()->model();
        QCOMPARE(table->rowCount(), 3);
        for (int r = 0; r < 3; ++r) {
            QCOMPARE(cell(*table, r, views::TimingTableModel::Status), QStringLiteral("passed"));
            QCOMPARE(cell(*table, r, views::TimingTableModel::Kernel),
                     QString::fromStdString(out.report->kernels[static_cast<std::size_t>(r)].name));
        }
        QVERIFY2(w.run()->runStatusText().startsWith(QStringLiteral("Ran 3 kernels")), qPrintable(w.run()->runStatusText()));
        QVERIFY2(w.run()->runStatusText().endsWith(QStringLiteral("all match the reference")), qPrintable(w.run()->runStatusText()));
        QVERIFY2(w.run()->timingPanel()->summaryText().startsWith(QStringLiteral("End to end ")),
                 qPrintable(w.run()->timingPanel()->summaryText()));

        // The code dock holds the module; selecting a node highlights its kernel's lines and its row.
        QVERIFY(w.run()->codePanel()->hasModule());
        QCOMPARE(w.run()->codePanel()->codeView()->toPlainText(), QString::fromStdString(out.compiled->code.source));
        const pipeline::CompiledStep& second = out.compiled->steps[1];
        QVERIFY(second.firstLine > 0 && second.lastLine > second.firstLine);
        const int id = view->operatorIdByName(second.name);
        QVERIFY(id >= 0);
        view->selectNode(id);
        QCOMPARE(w.run()->codePanel()->codeView()->highlightFirst(), second.firstLine);
        QCOMPARE(w.run()->codePanel()->codeView()->highlightLast(), second.lastLine);
        QCOMPARE(w.run()->timingPanel()->selectedKernel(), second.name);
        QVERIFY2(w.run()->codePanel()->headerText().contains(QStringLiteral("lines %1").arg(second.firstLine)),
                 qPrintable(w.run()->codePanel()->headerText()));

        // Selecting a row selects the node (and moves the highlight).
        const pipeline::CompiledStep& first = out.compiled->steps[0];
        w.run()->timingPanel()->table()->selectRow(w.run()->timingPanel()->proxy()->mapFromSource(table->index(0, 0)).row());
        QCOMPARE(view->selectedNodeId(), view->operatorIdByName(first.name));
        QCOMPARE(w.run()->codePanel()->codeView()->highlightFirst(), first.firstLine);

        // A click on a generated line selects its kernel's node (and its row); a line outside
        // every kernel (the module's preamble) changes nothing.
        emit w.run()->codePanel()->codeView()->lineClicked(second.firstLine + 1);
        QCOMPARE(view->selectedNodeId(), view->operatorIdByName(second.name));
        QCOMPARE(w.run()->timingPanel()->selectedKernel(), second.name);
        QCOMPARE(w.run()->codePanel()->codeView()->highlightFirst(), second.firstLine);
        emit w.run()->codePanel()->codeView()->lineClicked(1);
        QCOMPARE(view->selectedNodeId(), view->operatorIdByName(second.name));

        // A graph input has no kernel: no highlight, no row.
        for (const views::SnapshotNode& sn : view->snapshot()->nodes) {
            if (sn.kind == views::SnapshotNodeKind::GraphInput) {
                view->selectNode(sn.id);
                break;
            }
        }
        QCOMPARE(w.run()->codePanel()->codeView()->highlightFirst(), 0);
        QCOMPARE(w.run()->timingPanel()->selectedKernel(), std::string());
    }

    void runInputsFeedAndCompareOutputs()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("c++")).isEmpty())
            QSKIP("no C++ compiler (c++) on PATH: generated kernels cannot be compiled");
        app::MainWindow w;
        QStringList errors;
        w.setErrorReporter([&](const QString&, const QStringList& lines) { errors += lines; });
        w.resize(1400, 900);
        w.show();
        QVERIFY2(loadSample(w, QStringLiteral("dw_pw_block.onnx")), qPrintable(errors.join('\n')));
        QCOMPARE(w.findChild<QAction*>(QStringLiteral("inputsAction"))->shortcut(),
                 QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_I));
        const std::string in = (kSamples + QStringLiteral("/dw_pw_block_input.npy")).toStdString();
        const std::string want = (kSamples + QStringLiteral("/dw_pw_block_output.npy")).toStdString();
        // Bad rows are refused with the row named, and nothing changes.
        app::RunInputFiles bad;
        bad.inputs = {{"input", want}};  // the output's shape, not the input's
        bad.expected = {{"nope", want}};
        const std::vector<std::string> refused = w.document()->setRunInputFiles(bad);
        QCOMPARE(refused.size(), std::size_t(2));
        QVERIFY2(refused[0].rfind("input 'input': expected f32[", 0) == 0, refused[0].c_str());
        QCOMPARE(refused[1], std::string("output 'nope': the model has no graph output of that name"));
        QVERIFY(w.document()->runInputFiles().empty());

        // torch's output for the sample input: the outputs' verdict leads the summary.
        app::RunInputFiles files;
        files.inputs = {{"input", in}};
        files.expected = {{"output", want}};
        QVERIFY(w.document()->setRunInputFiles(files).empty());
        QSignalSpy shown(&w, &app::MainWindow::runFinished);
        w.run()->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 600000);
        QVERIFY2(shown.first().at(0).toBool(), qPrintable(w.run()->runStatusText()));
        QVERIFY2(w.run()->runStatusText().contains(QStringLiteral("outputs match \u00b7 all match the reference")),
                 qPrintable(w.run()->runStatusText()));
        const app::RunOutcome& out = w.document()->runs()->lastOutcome();
        QCOMPARE(out.report->outputChecks.size(), std::size_t(2));  // vs the reference, vs the file
        QCOMPARE(out.report->outputChecks[1].against, std::string("expected"));
        QVERIFY(out.report->outputChecks[1].comparison.ok);

        // An expected tensor the model does not produce: the output is named as differing and the
        // Check dock shows the graph outputs (every kernel matches its reference).
        files.expected = {{"output", in}};
        QVERIFY(w.document()->setRunInputFiles(files).empty());
        shown.clear();
        w.run()->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 600000);
        QVERIFY2(w.run()->runStatusText().contains(QStringLiteral("output 'output' differs from the expected tensor")),
                 qPrintable(w.run()->runStatusText()));
        QVERIFY(w.findChild<QDockWidget*>(QStringLiteral("checkDock"))->isVisible());
    }

    void missingCompilerIsReportedNotFatal()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList&) {});
        w.resize(1200, 800);
        w.show();
        QVERIFY(loadSample(w, QStringLiteral("dw_pw_block.onnx")));
        const QByteArray old = qgetenv("TESSERA_CXX");
        qputenv("TESSERA_CXX", "tessera-no-such-compiler");
        QSignalSpy finished(w.document()->runs(), &app::RunSession::finished);
        w.run()->startRun();
        const bool done = finished.wait(300000);
        if (old.isEmpty())
            qunsetenv("TESSERA_CXX");
        else
            qputenv("TESSERA_CXX", old);
        QVERIFY(done);
        QCOMPARE(finished.first().at(1).toBool(), false);
        const app::RunOutcome& out = w.document()->runs()->lastOutcome();
        QVERIFY(out.diagnostics.hasErrors());
        QVERIFY(out.compiled != nullptr);  // the compile itself worked
        QVERIFY(!out.runnerFault);
        QVERIFY2(w.run()->runStatusText().startsWith(QStringLiteral("Run failed: ")), qPrintable(w.run()->runStatusText()));
        QVERIFY2(w.run()->runStatusText().contains(QStringLiteral("not found")), qPrintable(w.run()->runStatusText()));
        QVERIFY(w.problemsList()->count() >= 1);
        QVERIFY2(w.problemsList()->item(0)->text().contains(QStringLiteral("tessera-no-such-compiler")),
                 qPrintable(w.problemsList()->item(0)->text()));
        // The kernels stay marked compiled and their code is on screen.
        QCOMPARE(countStatus(w.graphView(), KernelStatus::Compiled), 3);
        QVERIFY(w.run()->codePanel()->hasModule());
    }

    void newModelCancelsRun()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList&) {});
        // mobilenet_v2 takes seconds to compile and time, the small block a fraction to load.
        QVERIFY(loadSample(w, QStringLiteral("mobilenet_v2.onnx")));
        QSignalSpy finished(w.document()->runs(), &app::RunSession::finished);
        w.run()->startRun();
        QVERIFY(w.document()->runs()->isBusy());
        QVERIFY(loadSample(w, QStringLiteral("dw_pw_block.onnx")));
        QVERIFY(!w.document()->runs()->isBusy());
        QCOMPARE(finished.count(), 1);
        QVERIFY(w.document()->runs()->lastOutcome().cancelled);
        QCOMPARE(countStatus(w.graphView(), KernelStatus::None), static_cast<int>(w.graphView()->snapshot()->nodes.size()));
        QVERIFY(!w.run()->codePanel()->hasModule());
        QTest::qWait(500);
        QCOMPARE(finished.count(), 1);
    }
};

QTEST_MAIN(RunTest)
#include "run_test.moc"
