// Views: the task-mapping visualizer (canvas colours, worker numbering, levels, slicing, inline
// errors, the memory view's sector and bank counts) and its dock in the main window (Qt Test, offscreen).
#include <memory>

#include <QAction>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>
#include <QComboBox>

#include "views/mapping/expression_edit.h"
#include "views/mapping/mapping_canvas.h"
#include "views/mapping/mapping_legend.h"
#include "views/mapping/mapping_palette.h"
#include "views/mapping/mapping_panel.h"
#include "views/mapping/memory_view.h"

#ifdef TESSERA_HAVE_APP
#include "app/gui/main_window.h"
#endif

using namespace tessera;
using views::MappingCanvas;
using views::MappingPanel;

namespace {

/// The colour actually painted near the top-left corner of cell (r, c), inside grid lines,
/// step outlines and the centred label.
QColor paintedColor(MappingCanvas* canvas, std::int64_t r, std::int64_t c)
{
    const QImage img = canvas->grab().toImage();
    const QRectF cell = canvas->cellRect(r, c);
    const qreal dpr = img.devicePixelRatio();
    const QPoint pt((cell.left() + 4) * dpr, (cell.bottom() - 4) * dpr);
    return img.pixelColor(pt);
}

std::unique_ptr<MappingPanel> shownPanel()
{
    auto panel = std::make_unique<MappingPanel>();
    panel->resize(1000, 800);
    panel->show();
    return panel;
}

}  // namespace

class MappingViewTest : public QObject {
    Q_OBJECT
private slots:
    void contiguousBlocksColouredByWorker()
    {
        auto panel = shownPanel();
        panel->setExpressions(QStringLiteral("spatial(2,5).repeat(3,4)"));
        QVERIFY(panel->errorText().isEmpty());
        QVERIFY(QTest::qWaitForWindowExposed(panel.get()));
        MappingCanvas* canvas = panel->canvas();
        QCOMPARE(canvas->rows(), 6);
        QCOMPARE(canvas->cols(), 20);
        QVERIFY2(canvas->cellSize() >= 12, "cells should be large enough to sample");
        const QColor w0 = views::categoricalColor(0), w6 = views::categoricalColor(6);
        QVERIFY(w0 != w6);
        QCOMPARE(canvas->fillColor(0, 0), w0);
        QCOMPARE(canvas->fillColor(2, 3), w0);
        QCOMPARE(canvas->fillColor(3, 4), w6);
        QCOMPARE(canvas->fillColor(5, 7), w6);
        QCOMPARE(canvas->fillColor(0, 4), views::categoricalColor(1));
        QCOMPARE(paintedColor(canvas, 0, 0), w0);
        QCOMPARE(paintedColor(canvas, 2, 3), w0);
        QCOMPARE(paintedColor(canvas, 3, 4), w6);
        QCOMPARE(panel->legend()->count(), 10);
        QCOMPARE(panel->legend()->shownKeys(), 10);
        QCOMPARE(panel->stepSlider()->maximum(), 12);
    }

    void stridedSetsColouredByWorker()
    {
        auto panel = shownPanel();
        panel->setExpressions(QStringLiteral("repeat(3,4).spatial(2,5)"));
        MappingCanvas* canvas = panel->canvas();
        // Worker w owns (2i + w/5, 5j + w%5).
        QCOMPARE(canvas->ownerAt(0, 0)->worker, 0);
        QCOMPARE(canvas->ownerAt(1, 0)->worker, 5);
        QCOMPARE(canvas->ownerAt(0, 1)->worker, 1);
        QCOMPARE(canvas->ownerAt(2, 5)->worker, 0);
        QCOMPARE(canvas->fillColor(1, 6), views::categoricalColor(6));
    }

    void focusWorkerNumbersItsTasksInOrder()
    {
        auto panel = shownPanel();
        panel->setExpressions(QStringLiteral("spatial(2,5).repeat(3,4)"));
        panel->setFocusWorker(6);
        MappingCanvas* canvas = panel->canvas();
        QCOMPARE(canvas->focusWorker(), 6);
        // Worker 6 owns rows 3..5, cols 4..7, numbered row by row.
        QCOMPARE(canvas->ownerAt(3, 4)->step, 0);
        QCOMPARE(canvas->ownerAt(3, 5)->step, 1);
        QCOMPARE(canvas->ownerAt(4, 4)->step, 4);
        QCOMPARE(canvas->ownerAt(5, 7)->step, 11);
        QCOMPARE(canvas->fillColor(4, 5), views::categoricalColor(6));
        QVERIFY(canvas->fillColor(0, 0) != views::categoricalColor(0));  // others faded
        QVERIFY(panel->selectionLabel()->text().contains(QStringLiteral("(3,4) (3,5) (3,6) (3,7) (4,4)")));
        // Clicking the same worker again drops the focus.
        emit canvas->cellClicked(6, 0);
        QCOMPARE(canvas->focusWorker(), -1);
        QCOMPARE(canvas->fillColor(0, 0), views::categoricalColor(0));
    }

    void stepHighlightsEveryWorkersStepTask()
    {
        auto panel = shownPanel();
        panel->setExpressions(QStringLiteral("spatial(2,5).repeat(3,4)"));
        panel->setStep(5);  // task (1,1) of every worker's 3x4 block
        MappingCanvas* canvas = panel->canvas();
        QCOMPARE(canvas->step(), 5);
        QCOMPARE(canvas->fillColor(1, 1), views::categoricalColor(0));
        QCOMPARE(canvas->fillColor(4, 9), views::categoricalColor(7));
        QVERIFY(canvas->fillColor(0, 0) != views::categoricalColor(0));
        QCOMPARE(panel->memoryView()->report()->step, 5);
        panel->setStep(-1);
        QCOMPARE(canvas->fillColor(0, 0), views::categoricalColor(0));
        // Play advances the step on a timer and wraps.
        panel->setPlaying(true);
        QTRY_VERIFY_WITH_TIMEOUT(panel->step() >= 1, 5000);
        panel->setPlaying(false);
        QVERIFY(!panel->isPlaying());
    }

    void invalidExpressionShowsErrorAndKeepsDrawing()
    {
        auto panel = shownPanel();
        panel->setExpressions(QStringLiteral("spatial(2,5).repeat(3,4)"));
        const auto good = panel->snapshot();
        panel->gridEdit()->setText(QStringLiteral("spatial(2,5).repat(3,4)"));
        QVERIFY(!panel->errorText().isEmpty());
        QVERIFY(panel->diagnosticLabel()->isVisibleTo(panel.get()));
        QVERIFY(panel->gridEdit()->hasError());
        QCOMPARE(panel->gridEdit()->errorBegin(), 14);  // 'repat'
        QVERIFY(panel->diagnosticLabel()->text().contains(QStringLiteral("^")));
        QCOMPARE(panel->snapshot(), good);
        QCOMPARE(panel->canvas()->fillColor(3, 4), views::categoricalColor(6));
        // Unbalanced parenthesis and a bad extent also report, and fixing the text clears the error.
        panel->gridEdit()->setText(QStringLiteral("spatial(2,5"));
        QVERIFY(!panel->errorText().isEmpty());
        panel->gridEdit()->setText(QStringLiteral("spatial(0,5)"));
        QVERIFY(!panel->errorText().isEmpty());
        panel->gridEdit()->setText(QStringLiteral("repeat(3,4).spatial(2,5)"));
        QVERIFY(panel->errorText().isEmpty());
        QVERIFY(!panel->gridEdit()->hasError());
        QVERIFY(!panel->diagnosticLabel()->isVisibleTo(panel.get()));
        QCOMPARE(panel->canvas()->ownerAt(1, 0)->worker, 5);
        // A block mapping of another rank fails on the block editor.
        panel->blockEdit()->setText(QStringLiteral("spatial(4)"));
        QVERIFY(panel->blockEdit()->hasError());
        QVERIFY(!panel->gridEdit()->hasError());
    }

    void typingFixesAnErrorAndMousePicksAWorker()
    {
        auto panel = shownPanel();
        QVERIFY(QTest::qWaitForWindowExposed(panel.get()));
        panel->gridEdit()->setFocus();
        panel->gridEdit()->setText(QStringLiteral("spatial(2,5).repeat(3,4"));
        QVERIFY(panel->gridEdit()->hasError());
        // The error formatting must not disturb typing at the cursor.
        panel->gridEdit()->end(false);
        QTest::keyClicks(panel->gridEdit(), QStringLiteral(")"));
        QCOMPARE(panel->gridEdit()->text(), QStringLiteral("spatial(2,5).repeat(3,4)"));
        QVERIFY(!panel->gridEdit()->hasError());
        QVERIFY(panel->errorText().isEmpty());
        MappingCanvas* canvas = panel->canvas();
        const QPoint at = canvas->cellRect(4, 5).center().toPoint();
        QTest::mouseMove(canvas, at);
        QTRY_COMPARE(canvas->hoveredWorker(), 6);
        QTest::mouseClick(canvas, Qt::LeftButton, Qt::NoModifier, at);
        QCOMPARE(canvas->focusWorker(), 6);
        QCOMPARE(panel->legend()->count(), 10);
    }

    void gridBlockThreadLevels()
    {
        auto panel = shownPanel();
        panel->setExpressions(QStringLiteral("spatial(2,2)"), QStringLiteral("spatial(2,2).repeat(2,2)"));
        QVERIFY(panel->errorText().isEmpty());
        const auto snap = panel->snapshot();
        QVERIFY(snap->twoLevel());
        QCOMPARE(snap->numBlocks(), 4);
        QCOMPARE(snap->threadsPerBlock(), 4);
        MappingCanvas* canvas = panel->canvas();
        QCOMPARE(canvas->colorBy(), MappingCanvas::ColorBy::Block);
        QCOMPARE(canvas->fillColor(0, 5), views::categoricalColor(1));  // block 1 = top right 4x4
        QCOMPARE(canvas->fillColor(5, 2), views::categoricalColor(2));
        panel->setColorBy(MappingCanvas::ColorBy::Thread);
        QCOMPARE(panel->legend()->count(), 4);
        panel->setBlockThread(1, 3);
        QCOMPARE(canvas->regionBlock(), 1);
        QCOMPARE(canvas->focusWorker(), 7);
        // Thread 3 of block 1 owns rows 2..3, cols 6..7, in row-major order.
        QCOMPARE(canvas->fillColor(2, 6), views::categoricalColor(3));
        QCOMPARE(canvas->ownerAt(2, 6)->step, 0);
        QCOMPARE(canvas->ownerAt(3, 7)->step, 3);
        const QString sel = panel->selectionLabel()->text();
        QVERIFY2(sel.contains(QStringLiteral("Block 1</b> owns [0:4, 4:8]")), qPrintable(sel));
        QVERIFY2(sel.contains(QStringLiteral("(2,6) (2,7) (3,6) (3,7)")), qPrintable(sel));
    }

    void higherRanksSliceAndRankOneIsARow()
    {
        auto panel = shownPanel();
        panel->setExpressions(QStringLiteral("spatial(2,3,4)"));
        MappingCanvas* canvas = panel->canvas();
        QCOMPARE(canvas->rowDim(), 1);
        QCOMPARE(canvas->colDim(), 2);
        QCOMPARE(canvas->ownerAt(2, 3)->worker, 11);
        auto* dim0 = panel->findChild<QSpinBox*>(QStringLiteral("sliceDim0"));
        QVERIFY(dim0 != nullptr);
        dim0->setValue(1);
        QCOMPARE(canvas->ownerAt(2, 3)->worker, 23);
        // Transposed view: rows = dim 2, columns = dim 1.
        panel->findChild<QComboBox*>(QStringLiteral("rowDim"))->setCurrentIndex(2);
        QCOMPARE(canvas->rowDim(), 2);
        QCOMPARE(canvas->colDim(), 1);
        panel->setExpressions(QStringLiteral("spatial(8)"));
        QCOMPARE(canvas->rows(), 1);
        QCOMPARE(canvas->cols(), 8);
        QCOMPARE(canvas->fillColor(0, 5), views::categoricalColor(5));
    }

    void memoryViewCountsSectorsAndBankConflicts()
    {
        auto panel = shownPanel();
        views::MemoryView* mem = panel->memoryView();
        // One warp reading column 0 of a 32x32 f32 row-major tensor: 32 sectors, 32-way conflict.
        panel->setExpressions(QStringLiteral("spatial(32,1)"));
        mem->shapeEdit()->setText(QStringLiteral("32, 32"));
        QVERIFY(mem->report().has_value());
        QCOMPARE(mem->report()->warps.size(), std::size_t{1});
        QCOMPARE(mem->table()->item(0, views::MemoryView::ColSectors)->text(), QStringLiteral("32 (4)"));
        QCOMPARE(mem->table()->item(0, views::MemoryView::ColWavefronts)->text(), QStringLiteral("32 (1)"));
        QVERIFY(mem->table()->item(0, views::MemoryView::ColVerdict)->text().contains(QStringLiteral("32-way")));
        QVERIFY(mem->table()->item(0, 0)->background().color() != QColor(Qt::white));
        QVERIFY(mem->summaryLabel()->text().contains(QStringLiteral("1 bad warp")));
        // Padding the rows to 33 removes the bank conflict, not the uncoalescing.
        mem->shapeEdit()->setText(QStringLiteral("32, 33"));
        QCOMPARE(mem->table()->item(0, views::MemoryView::ColWavefronts)->text(), QStringLiteral("1 (1)"));
        QCOMPARE(mem->table()->item(0, views::MemoryView::ColSectors)->text(), QStringLiteral("32 (4)"));
        // Column-major storage of the same tensor makes the warp coalesced and conflict-free.
        mem->shapeEdit()->setText(QStringLiteral("32, 32"));
        mem->layoutBox()->setCurrentIndex(1);
        QCOMPARE(mem->table()->item(0, views::MemoryView::ColSectors)->text(), QStringLiteral("4 (4)"));
        QCOMPARE(mem->report()->badWarps, 0);
        mem->layoutBox()->setCurrentIndex(0);
        mem->shapeEdit()->clear();

        // spatial(2,5).repeat(3,4), f32 6x20 row-major, step 0: lanes read (0|3, 0,4,8,12,16):
        // bytes 0..79 and 240..319 -> sectors {0,1,2,7,8,9}; words 0,4,..,16 and 60,..,76 put
        // words 0 and 64 in bank 0 -> 2 wavefronts where 1 would do.
        panel->setExpressions(QStringLiteral("spatial(2,5).repeat(3,4)"));
        panel->setStep(0);
        QCOMPARE(mem->report()->warps.size(), std::size_t{1});
        const auto& w = mem->report()->warps[0];
        QCOMPARE(w.activeLanes, 10);
        QCOMPARE(w.sectors, 6);
        QCOMPARE(w.idealSectors, 2);
        QCOMPARE(w.wavefronts, 2);
        QCOMPARE(w.idealWavefronts, 1);
        QCOMPARE(mem->table()->item(0, views::MemoryView::ColSectors)->text(), QStringLiteral("6 (2)"));
        // 8-byte elements: 2 wavefronts are the minimum for 32 lanes, not a conflict.
        panel->setExpressions(QStringLiteral("spatial(32)"));
        mem->dtypeBox()->setCurrentIndex(3);
        QCOMPARE(mem->table()->item(0, views::MemoryView::ColSectors)->text(), QStringLiteral("8 (8)"));
        QCOMPARE(mem->table()->item(0, views::MemoryView::ColWavefronts)->text(), QStringLiteral("2 (2)"));
        QCOMPARE(mem->report()->badWarps, 0);
        // A bad shape is reported in the view, not crashed on.
        mem->shapeEdit()->setText(QStringLiteral("32, x"));
        QVERIFY(!mem->report().has_value());
    }

    void largeGridStaysResponsive()
    {
        auto panel = shownPanel();
        QElapsedTimer t;
        t.start();
        panel->setExpressions(QStringLiteral("spatial(16,16).repeat(16,16)"));
        QCOMPARE(panel->canvas()->rows(), 256);
        QCOMPARE(panel->canvas()->fillColor(255, 255), views::categoricalColor(255));
        const QImage img = panel->canvas()->grab().toImage();
        QVERIFY(!img.isNull());
        // Generous bound (debug and sanitizer builds): the point is "no freeze", the benchmark measures.
        QVERIFY2(t.elapsed() < 5000, qPrintable(QString::number(t.elapsed())));
        QVERIFY(panel->legend()->shownKeys() < 256);
    }

#ifdef TESSERA_HAVE_APP
    void mainWindowDockToggles()
    {
        app::MainWindow w;
        w.resize(1400, 900);
        w.show();
        QDockWidget* dock = w.mappingDock();
        QVERIFY(dock != nullptr);
        QVERIFY(!dock->isVisible());
        QAction* toggle = dock->toggleViewAction();
        QCOMPARE(toggle->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_M));
        toggle->trigger();
        QVERIFY(dock->isVisible());
        toggle->trigger();
        QVERIFY(!dock->isVisible());
        w.showMapping(QStringLiteral("spatial(2,5).repeat(3,4)"));
        QVERIFY(dock->isVisible());
        QCOMPARE(w.mappingPanel()->canvas()->fillColor(3, 4), views::categoricalColor(6));
    }
#endif
};

QTEST_MAIN(MappingViewTest)
#include "mapping_view_test.moc"
