// Issue 8 in the main window (Qt Test, offscreen; needs tessera-runner via TESSERA_RUNNER and
// `c++`): a run of samples/dw_pw_block.onnx whose kernels are corrupted by the testing hook
// (TESSERA_DEBUG_CORRUPT_KERNEL, core/pipeline/run.h) opens the Check dock on the first failing
// kernel with the hook's first bad index, the Timings row reopens it, and "Re-run in Reference
// Interpreter" reproduces want; Run > Pin Run, run again: the Timings "vs pinned" column, the
// roofline's pinned links and the Code dock's diff are filled.
#include <cmath>

#include <QDockWidget>
#include <QSpinBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTest>

#include "app/gui/check_controller.h"
#include "app/gui/compare_controller.h"
#include "app/gui/main_window.h"
#include "app/gui/run_session.h"
#include "app/gui/session.h"
#include "views/code/code_diff_view.h"
#include "views/code/code_panel.h"
#include "views/debug/error_heatmap_view.h"
#include "views/graph/graph_view.h"
#include "views/roofline/roofline_view.h"
#include "views/timing/timing_panel.h"
#include "views/timing/timing_table_model.h"
#include "tests/app/gui/gui_test_util.h"

using namespace tessera;

namespace {

const QString kSamples = QStringLiteral(TESSERA_SAMPLES);

using test::loadSample;

bool runOnce(app::MainWindow& w)
{
    QSignalSpy finished(&w, &app::MainWindow::runFinished);
    w.run()->startRun();
    return finished.wait(600000) && finished.first().at(0).toBool();
}

}  // namespace

class CheckCompareTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tessera_gui_check_tests"));
    }

    void cleanup() { qunsetenv(pipeline::kCorruptKernelEnv); }

    void corruptedKernelOpensCheckDock()
    {
        // Whichever of the two convolutions is a kernel under the plan on screen gets corrupted.
        qputenv(pipeline::kCorruptKernelEnv, "dw_conv,pw_conv");
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList& lines) { QFAIL(qPrintable(lines.join('\n'))); });
        w.resize(1400, 900);
        w.show();
        QVERIFY(loadSample(w, QStringLiteral("dw_pw_block.onnx")));
        app::CheckController* check = w.checkController();
        QVERIFY(check->dock()->isHidden());
        QVERIFY(runOnce(w));

        const auto report = w.document()->runs()->lastOutcome().report;
        QVERIFY(report && report->checked && !report->allPassed);
        const pipeline::KernelReport* failing = nullptr;
        for (const pipeline::KernelReport& k : report->kernels)
            if (!failing && k.checked && !k.passed)
                failing = &k;
        QVERIFY(failing);
        QVERIFY(failing->name == "dw_conv" || failing->name == "pw_conv");
        QVERIFY(!failing->checkInputs.empty());

        QVERIFY(!check->dock()->isHidden());
        views::ErrorHeatmapView* view = check->view();
        QCOMPARE(view->snapshot().kernel, failing->name);
        QVERIFY(view->hasData());
        // The hook corrupts flat indices from n/2 on: that is the first bad element.
        const std::vector<std::int64_t> dims = view->snapshot().outputs[0].want->dims;
        QCOMPARE(dims.size(), std::size_t(4));
        const std::int64_t n = view->snapshot().outputs[0].want->numElements();
        const std::vector<std::int64_t> first = views::unflatten(n / 2, dims);
        QCOMPARE(view->stats().firstBad, n / 2);
        QCOMPARE(view->stats().firstBadCoord, first);
        QCOMPARE(failing->checks[0].comparison.firstBadCoord, first);
        const QString coord = QString::fromStdString(views::coordText(first));
        QVERIFY2(view->infoText().startsWith(QStringLiteral("first bad index ") + coord), qPrintable(view->infoText()));
        // The slice goes through it: rows/columns are H and W, the spin boxes N and C at its index.
        QCOMPARE(view->slice().rowAxis, 2);
        QCOMPARE(view->slice().colAxis, 3);
        QCOMPARE(view->indexBoxes().size(), std::size_t(2));
        QCOMPARE(view->indexBoxes()[1]->value(), int(first[1]));
        const double got = view->stats().firstBadGot, want = view->stats().firstBadWant;
        const float w32 = static_cast<float>(want);
        QCOMPARE(got, static_cast<double>(w32 + std::copysign(1.0f + std::fabs(w32), w32)));

        // The re-run in the reference interpreter reproduces want.
        QSignalSpy rerun(check, &app::CheckController::rerunFinished);
        QTest::mouseClick(view->rerunButton(), Qt::LeftButton);
        QVERIFY(rerun.wait(120000));
        QCOMPARE(rerun.first().at(0).toBool(), true);
        QVERIFY(view->rerunShown());
        QVERIFY2(view->rerunText().contains(QStringLiteral("max |re-run \u2212 want| = 0")), qPrintable(view->rerunText()));

        // Closing the dock and double-clicking the failing row in the Timings table reopens it.
        check->dock()->hide();
        views::TimingPanel* timing = w.run()->timingPanel();
        const int row = timing->model()->rowOfKernel(failing->name);
        QVERIFY(row >= 0);
        QCOMPARE(timing->model()->data(timing->model()->index(row, views::TimingTableModel::Status)).toString(),
                 QStringLiteral("failed"));
        emit timing->table()->doubleClicked(timing->proxy()->mapFromSource(timing->model()->index(row, 0)));
        QVERIFY(!check->dock()->isHidden());
        QCOMPARE(view->snapshot().kernel, failing->name);
        QVERIFY(!view->rerunShown());  // a new snapshot drops the old re-run
    }

    void pinRunThenCompare()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList& lines) { QFAIL(qPrintable(lines.join('\n'))); });
        w.resize(1400, 900);
        w.show();
        QVERIFY(loadSample(w, QStringLiteral("dw_pw_block.onnx")));
        app::CompareController* compare = w.compareController();
        QVERIFY(!compare->pinAction()->isEnabled());
        QVERIFY(runOnce(w));
        QVERIFY(w.checkController()->dock()->isHidden());  // every kernel passed: no Check dock
        QVERIFY(compare->pinAction()->isEnabled());
        QVERIFY(!compare->unpinAction()->isEnabled());
        compare->pinAction()->trigger();
        QVERIFY(compare->isPinned());
        QVERIFY(compare->unpinAction()->isEnabled());
        views::TimingTableModel* m = w.run()->timingPanel()->model();
        QCOMPARE(m->columnCount(), int(views::TimingTableModel::ColumnCount) + 1);

        QVERIFY(runOnce(w));
        const auto report = w.document()->runs()->lastOutcome().report;
        QVERIFY(report);
        QCOMPARE(m->rowCount(), int(report->kernels.size()));  // same plan: nothing new, nothing gone
        for (int r = 0; r < m->rowCount(); ++r) {
            const QString ratio = m->data(m->index(r, views::TimingTableModel::VsPinned)).toString();
            QVERIFY2(ratio.endsWith(QLatin1Char('x')), qPrintable(ratio));
            QVERIFY(m->data(m->index(r, views::TimingTableModel::VsPinned), Qt::UserRole).toDouble() > 0);
        }
        QVERIFY(w.run()->timingPanel()->summaryText().contains(QStringLiteral("vs pinned: ")));
        // Every pinned dot is linked to the current dot of its kernel.
        for (const pipeline::KernelReport& k : report->kernels) {
            if (k.reference || k.flops <= 0)
                continue;
            const QString name = QString::fromStdString(k.name);
            QCOMPARE(w.roofline()->rooflineView()->pinnedLink(name), name);
        }
        // Code dock: the same plan generates the same code; select a kernel and ask for the diff.
        views::CodePanel* code = w.run()->codePanel();
        QVERIFY(code->diffButton()->isVisibleTo(code));
        const int id = w.graphView()->operatorIdByName(report->kernels.front().name);
        QVERIFY(id >= 0);
        w.graphView()->selectNode(id, true);
        code->diffButton()->click();
        QVERIFY(code->isDiffShown());
        QVERIFY2(code->diffView()->headerText().startsWith(
                     QStringLiteral("Kernel of '%1': pinned ('").arg(QString::fromStdString(report->kernels.front().name))),
                 qPrintable(code->diffView()->headerText()));
        QVERIFY(code->diffView()->diffText().isEmpty());
        QCOMPARE(code->diffView()->editor()->placeholderText(), QStringLiteral("The kernel's code is the same in both runs."));

        compare->unpinAction()->trigger();
        QVERIFY(!compare->isPinned());
        QCOMPARE(m->columnCount(), int(views::TimingTableModel::ColumnCount));
        QVERIFY(!code->isDiffShown());
        QVERIFY(w.roofline()->rooflineView()->pinnedPositions(QString::fromStdString(report->kernels.front().name)).empty());
    }

    void kernelDiffOfTwoCompiles()
    {
        pipeline::CompiledModel a, b;
        pipeline::CompiledStep s;
        s.kind = pipeline::StepKind::Kernel;
        s.name = "k";
        s.firstLine = 2;
        s.lastLine = 3;
        a.steps = {s};
        b.steps = {s};
        a.code.source = "// head\nvoid k() {\n  x = 1;\n}\n";
        b.code.source = "// head\nvoid k() {\n  x = 2;\n}\n";
        const auto d = app::CompareController::kernelDiff(a, b, "k");
        QCOMPARE(d.diff, QStringLiteral("--- pinned/k\n+++ current/k\n@@ -1,2 +1,2 @@\n void k() {\n-  x = 1;\n+  x = 2;\n"));
        QCOMPARE(d.title, QStringLiteral("Kernel of 'k': pinned ('k', lines 2\u20133) \u2192 current ('k', lines 2\u20133) \u00b7 +1 \u22121 lines"));
        const auto whole = app::CompareController::kernelDiff(a, b, "");
        QVERIFY(whole.diff.contains(QStringLiteral("@@ -1,4 +1,4 @@")));
    }
};

QTEST_MAIN(CheckCompareTest)
#include "check_compare_test.moc"
