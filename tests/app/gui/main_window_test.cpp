// MainWindow: loading samples through the session, failures, superseded and cancelled loads,
// recent files (Qt Test, offscreen).
#include <QDir>
#include <QFileInfo>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QListWidget>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/main_window.h"
#include "app/gui/program_controller.h"
#include "views/mapping/mapping_panel.h"
#include "app/gui/session.h"
#include "views/graph/graph_items.h"
#include "views/graph/graph_view.h"

using namespace tessera;

namespace {

const QString kSamples = QStringLiteral(TESSERA_SAMPLES);

int operatorItems(views::GraphView* view)
{
    int n = 0;
    for (QGraphicsItem* item : view->scene()->items()) {
        if (item->type() == views::NodeItem::Type &&
            static_cast<views::NodeItem*>(item)->kind() == views::SnapshotNodeKind::Operator)
            ++n;
    }
    return n;
}

/// Waits for the window's session to finish a load.
bool waitFinished(app::MainWindow&, QSignalSpy& spy, int timeoutMs = 120000)
{
    if (!spy.isEmpty())
        return true;
    return spy.wait(timeoutMs);
}

}  // namespace

class MainWindowTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tessera_gui_tests"));
        QSettings().clear();
    }

    void opensSampleAndBadFileKeepsIt()
    {
        app::MainWindow w;
        QStringList errors;
        w.setErrorReporter([&](const QString&, const QStringList& lines) { errors += lines; });
        w.resize(1400, 900);
        w.show();
        QSignalSpy finished(w.session(), &app::Session::finished);

        const QString sample = kSamples + QStringLiteral("/mobilenet_v2.onnx");
        w.openFile(sample);
        QVERIFY(waitFinished(w, finished));
        QCOMPARE(finished.count(), 1);
        QVERIFY2(finished.first().at(1).toBool(), qPrintable(errors.join('\n')));
        QVERIFY(w.model() != nullptr);
        const int nodes = static_cast<int>(w.model()->graph.numNodes());
        QVERIFY(nodes > 50);
        QCOMPARE(operatorItems(w.graphView()), nodes);
        QCOMPARE(w.graphView()->edgeItemCount(), static_cast<int>(w.graphView()->snapshot()->edges.size()));
        QVERIFY(w.recentFiles().contains(QFileInfo(sample).absoluteFilePath()));

        // Selecting a node fills the properties panel.
        QVERIFY(w.graphView()->findNext(QStringLiteral("Conv")));

        // A bad file: an error is reported, the previous model stays on screen.
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("garbage.onnx"));
        {
            QFile f(bad);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("this is not a protobuf \x01\x02\x03 at all");
        }
        const auto before = w.model();
        finished.clear();
        QSignalSpy failed(&w, &app::MainWindow::loadFailed);
        w.openFile(bad);
        QVERIFY(waitFinished(w, finished));
        QCOMPARE(finished.first().at(1).toBool(), false);
        QCOMPARE(failed.count(), 1);
        QVERIFY(!errors.isEmpty());
        QVERIFY2(errors.first().contains(QStringLiteral("garbage.onnx")), qPrintable(errors.first()));
        QCOMPARE(w.model(), before);
        QCOMPARE(operatorItems(w.graphView()), nodes);

        // A missing file likewise.
        errors.clear();
        finished.clear();
        w.openFile(dir.filePath(QStringLiteral("missing.onnx")));
        QVERIFY(waitFinished(w, finished));
        QVERIFY(!errors.isEmpty());
        QCOMPARE(w.model(), before);
    }

    void opensDslProgramAndReportsItsErrors()
    {
        app::MainWindow w;
        QStringList errors;
        w.setErrorReporter([&](const QString&, const QStringList& lines) { errors += lines; });
        w.resize(1200, 800);
        w.show();
        QSignalSpy finished(w.session(), &app::Session::finished);

        // fft_radix2.tsr: 2 twiddle tables, 2 bit-reversal gathers, 3 butterfly stages x (re, im).
        w.openFile(kSamples + QStringLiteral("/fft_radix2.tsr"));
        QVERIFY(waitFinished(w, finished));
        QVERIFY2(finished.first().at(1).toBool(), qPrintable(errors.join('\n')));
        QCOMPARE(static_cast<int>(w.model()->graph.numNodes()), 10);
        QCOMPARE(operatorItems(w.graphView()), 10);

        // Picking a scheduled kernel puts its grid and block mappings into the Task Mapping dock.
        finished.clear();
        w.openFile(kSamples + QStringLiteral("/matmul_tiled.tsr"));
        QVERIFY(waitFinished(w, finished));
        QVERIFY2(finished.first().at(1).toBool(), qPrintable(errors.join('\n')));
        QVERIFY(w.graphView()->findNext(QStringLiteral("C")));
        QCOMPARE(w.mappingPanel()->gridExpression(), QStringLiteral("spatial(2, 2)"));
        QCOMPARE(w.mappingPanel()->blockExpression(), QStringLiteral("spatial(16, 16) * repeat(8, 8)"));

        // A program with a misspelled op: the error names file:line:column in Problems (no modal
        // box: the text opens in the Program dock to be fixed there), the model stays.
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("typo.tsr"));
        {
            QFile f(bad);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("input x: f32[4];\ny = Rleu(x);\noutput y;\n");
        }
        const auto before = w.model();
        finished.clear();
        w.openFile(bad);
        QVERIFY(waitFinished(w, finished));
        QCOMPARE(finished.first().at(1).toBool(), false);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join('\n')));
        QStringList problems;
        for (int i = 0; i < w.problemsList()->count(); ++i)
            problems << w.problemsList()->item(i)->text();
        QVERIFY2(problems.join('\n').contains(QStringLiteral("typo.tsr:2:5")), qPrintable(problems.join('\n')));
        QVERIFY2(problems.join('\n').contains(QStringLiteral("Rleu")), qPrintable(problems.join('\n')));
        QCOMPARE(w.program()->programText(), QStringLiteral("input x: f32[4];\ny = Rleu(x);\noutput y;\n"));
        QCOMPARE(w.model(), before);
    }

    void newerLoadSupersedesOlder()
    {
        app::MainWindow w;
        QStringList errors;
        w.setErrorReporter([&](const QString&, const QStringList& lines) { errors += lines; });
        QSignalSpy finished(w.session(), &app::Session::finished);
        w.openFile(kSamples + QStringLiteral("/mobilenet_v2.onnx"));
        const QString small = kSamples + QStringLiteral("/dw_pw_block.onnx");
        w.openFile(small);
        QVERIFY(waitFinished(w, finished));
        // Give a stale result the chance to arrive: it must be dropped.
        QTest::qWait(1500);
        QCOMPARE(finished.count(), 1);
        QVERIFY2(finished.first().at(1).toBool(), qPrintable(errors.join('\n')));
        QCOMPARE(w.currentPath(), small);
        QCOMPARE(operatorItems(w.graphView()), static_cast<int>(w.model()->graph.numNodes()));
    }

    void cancelKeepsPreviousModel()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList&) {});
        QSignalSpy finished(w.session(), &app::Session::finished);
        const QString small = kSamples + QStringLiteral("/dw_pw_block.onnx");
        w.openFile(small);
        QVERIFY(waitFinished(w, finished));
        const auto before = w.model();
        QVERIFY(before != nullptr);
        finished.clear();
        w.openFile(kSamples + QStringLiteral("/mobilenet_v2.onnx"));
        QVERIFY(w.session()->isBusy());
        w.session()->cancel();
        QCOMPARE(finished.count(), 1);
        QVERIFY(w.session()->lastOutcome().cancelled);
        QTest::qWait(1500);
        QCOMPARE(finished.count(), 1);
        QCOMPARE(w.model(), before);
        QCOMPARE(w.currentPath(), small);
    }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
