// Views of issue 8 (Qt Test, offscreen): the Check dock's error heatmap (exact cells of 2x3 and
// 2x3x4 tensor pairs, first bad index, statistics, slice selection through the widgets, the
// re-run pane), the Timings table's "vs pinned" column (matching by name and node set, new/gone
// rows, QAbstractItemModelTester), the line diff and the diff view's colours, and the roofline's
// pinned markers and links.
#include <cmath>

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QHeaderView>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTest>

#include <qcustomplot.h>

#include "views/code/code_diff_view.h"
#include "views/code/code_panel.h"
#include "views/code/line_diff.h"
#include "views/debug/error_heatmap.h"
#include "views/debug/error_heatmap_view.h"
#include "views/roofline/roofline_view.h"
#include "views/timing/timing_panel.h"
#include "views/timing/timing_table_model.h"

using namespace tessera;
using views::ErrorMode;

namespace {

std::shared_ptr<const ir::TensorData> tensor(const std::vector<float>& v, std::vector<std::int64_t> dims)
{
    return std::make_shared<const ir::TensorData>(ir::TensorData::fromFloats(v, std::move(dims)));
}

/// got [[1,2,3],[4,5,6]], want [[1,2.5,3],[4,5,7]], rel 0.1, abs 0.01: (0,1) and (1,2) are bad.
views::ErrorTensor pair2x3()
{
    views::ErrorTensor t;
    t.name = "y";
    t.got = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
    t.want = tensor({1, 2.5f, 3, 4, 5, 7}, {2, 3});
    t.tolerance.relTol = 0.1;
    t.tolerance.absTol = 0.01;
    return t;
}

/// got[i] = i over [2,3,4]; want differs at flat 5 (5.5) and 17 (19); rel 0, abs 0.1.
views::ErrorTensor pair2x3x4()
{
    std::vector<float> got(24), want(24);
    for (int i = 0; i < 24; ++i)
        got[static_cast<std::size_t>(i)] = want[static_cast<std::size_t>(i)] = static_cast<float>(i);
    want[5] = 5.5f;
    want[17] = 19.0f;
    views::ErrorTensor t;
    t.name = "z";
    t.got = tensor(got, {2, 3, 4});
    t.want = tensor(want, {2, 3, 4});
    t.tolerance.relTol = 0;
    t.tolerance.absTol = 0.1;
    return t;
}

double cellAt(const views::ErrorSlice& s, std::int64_t r, std::int64_t c)
{
    return s.cells[static_cast<std::size_t>(r * s.cols + c)];
}

perf::KernelSample sample(const std::string& name, std::vector<std::string> ops, double seconds)
{
    perf::KernelSample s;
    s.name = name;
    s.opType = "Conv";
    s.ops = std::move(ops);
    s.flops = 1e9;
    s.seconds = seconds;
    s.issuedBytes = 1e8;
    s.compulsoryBytes = 1e8;
    return s;
}

views::TimingRow row(const std::string& name, std::vector<std::string> ops, double seconds)
{
    views::TimingRow r;
    r.kernel = name;
    r.opType = "Conv";
    r.ops = std::move(ops);
    r.medianSeconds = seconds;
    r.reps = 10;
    r.flops = 1000;
    r.bytes = 100;
    return r;
}

}  // namespace

class DebugViewsTest : public QObject {
    Q_OBJECT
private slots:
    void heatmap2x3Cells()
    {
        const views::ErrorTensor t = pair2x3();
        const views::SliceSpec s = views::defaultSlice(t);
        QCOMPARE(s.rowAxis, 0);
        QCOMPARE(s.colAxis, 1);
        QCOMPARE(s.index, (std::vector<std::int64_t>{0, 1}));
        const views::ErrorSlice abs = views::errorSlice(t, s, ErrorMode::Absolute);
        QCOMPARE(abs.rows, std::int64_t(2));
        QCOMPARE(abs.cols, std::int64_t(3));
        QCOMPARE(abs.cells, (std::vector<double>{0, 0.5, 0, 0, 0, 1}));
        QCOMPARE(abs.flat, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
        // Relative: |d| / max(|want|, absTol/relTol = 0.1).
        const views::ErrorSlice rel = views::errorSlice(t, s, ErrorMode::Relative);
        QCOMPARE(rel.cells[1], 0.5 / 2.5);
        QCOMPARE(rel.cells[5], 1.0 / 7.0);
        QCOMPARE(rel.cells[0], 0.0);
        const views::ErrorStats st = views::errorStats(t, ErrorMode::Absolute);
        QCOMPARE(st.firstBad, std::int64_t(1));
        QCOMPARE(st.firstBadCoord, (std::vector<std::int64_t>{0, 1}));
        QCOMPARE(st.firstBadGot, 2.0);
        QCOMPARE(st.firstBadWant, 2.5);
        QCOMPARE(st.bad, std::int64_t(2));
        QCOMPARE(st.maxError, 1.0);
        QCOMPARE(st.meanError, 0.25);
        QCOMPARE(st.elements, std::int64_t(6));
        // Transposed: rows are axis 1.
        views::SliceSpec tr = s;
        tr.rowAxis = 1;
        tr.colAxis = 0;
        const views::ErrorSlice t2 = views::errorSlice(t, tr, ErrorMode::Absolute);
        QCOMPARE(t2.rows, std::int64_t(3));
        QCOMPARE(t2.cells, (std::vector<double>{0, 0, 0.5, 0, 0, 1}));
    }

    void heatmapSpecialValuesAndInvalidSlices()
    {
        eval::CompareOptions tol;
        QVERIFY(std::isnan(views::elementError(NAN, 1, ErrorMode::Absolute, tol)));
        QCOMPARE(views::elementError(NAN, NAN, ErrorMode::Absolute, tol), 0.0);
        QCOMPARE(views::elementError(INFINITY, INFINITY, ErrorMode::Relative, tol), 0.0);
        QVERIFY(std::isnan(views::elementError(INFINITY, 1, ErrorMode::Absolute, tol)));
        const views::ErrorTensor t = pair2x3x4();
        views::SliceSpec bad = views::defaultSlice(t);
        bad.colAxis = bad.rowAxis;
        QVERIFY(views::errorSlice(t, bad, ErrorMode::Absolute).cells.empty());
        views::SliceSpec out = views::defaultSlice(t);
        out.index[0] = 2;
        QVERIFY(views::errorSlice(t, out, ErrorMode::Absolute).cells.empty());
        views::ErrorTensor missing = t;
        missing.got = nullptr;
        QCOMPARE(views::errorStats(missing, ErrorMode::Absolute).firstBad, std::int64_t(-1));
        QCOMPARE(views::unflatten(17, {2, 3, 4}), (std::vector<std::int64_t>{1, 1, 1}));
        QCOMPARE(views::coordText({0, 1, 4}), std::string("[0, 1, 4]"));
    }

    void heatmap2x3x4Slices()
    {
        const views::ErrorTensor t = pair2x3x4();
        views::SliceSpec s = views::defaultSlice(t);
        QCOMPARE(s.rowAxis, 1);
        QCOMPARE(s.colAxis, 2);
        QCOMPARE(s.index, (std::vector<std::int64_t>{0, 1, 1}));  // through the first bad element, flat 5
        views::ErrorSlice a = views::errorSlice(t, s, ErrorMode::Absolute);
        QCOMPARE(a.rows, std::int64_t(3));
        QCOMPARE(a.cols, std::int64_t(4));
        std::vector<double> want(12, 0.0);
        want[5] = 0.5;
        QCOMPARE(a.cells, want);
        s.index[0] = 1;
        a = views::errorSlice(t, s, ErrorMode::Absolute);
        want[5] = 2.0;
        QCOMPARE(a.cells, want);
        QCOMPARE(a.flat.front(), std::int64_t(12));
        // Rows = axis 0, columns = axis 2, axis 1 at index 1: flats 4..7 and 16..19.
        s = {0, 2, {0, 1, 0}};
        a = views::errorSlice(t, s, ErrorMode::Absolute);
        QCOMPARE(a.rows, std::int64_t(2));
        QCOMPARE(a.flat, (std::vector<std::int64_t>{4, 5, 6, 7, 16, 17, 18, 19}));
        QCOMPARE(a.cells, (std::vector<double>{0, 0.5, 0, 0, 0, 2, 0, 0}));
        const views::ErrorStats st = views::errorStats(t, ErrorMode::Absolute);
        QCOMPARE(st.firstBadCoord, (std::vector<std::int64_t>{0, 1, 1}));
        QCOMPARE(st.bad, std::int64_t(2));
        QCOMPARE(st.maxError, 2.0);
        QCOMPARE(st.meanError, 2.5 / 24);
    }

    void heatmapViewWidgets()
    {
        views::ErrorHeatmapView view;
        view.resize(900, 500);
        views::ErrorHeatmapSnapshot snap;
        snap.kernel = "Conv_3";
        snap.opType = "Conv";
        snap.outputs = {pair2x3x4(), pair2x3()};
        snap.canRerun = true;
        view.setSnapshot(snap);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.titleText(), QStringLiteral("Kernel 'Conv_3' (Conv) \u00b7 output 'z' \u00b7 2 of 2 outputs outside tolerance"));
        QVERIFY2(view.infoText().startsWith(QStringLiteral("first bad index [0, 1, 1]: got 5, want 5.5 \u00b7 max abs error 2 "
                                                           "\u00b7 mean abs error 0.104167 \u00b7 2 of 24 elements beyond tolerance")),
                 qPrintable(view.infoText()));
        QCOMPARE(view.outputBox()->count(), 2);
        QCOMPARE(view.rowAxisBox()->currentIndex(), 1);
        QCOMPARE(view.colAxisBox()->currentIndex(), 2);
        QCOMPARE(view.indexBoxes().size(), std::size_t(1));
        QCOMPARE(view.indexBoxes()[0]->objectName(), QStringLiteral("checkIndex0"));
        QCOMPARE(view.indexBoxes()[0]->maximum(), 1);
        QCOMPARE(cellAt(view.currentSlice(), 1, 1), 0.5);
        // The colour map holds the same cells (key = column, value = row).
        QCOMPARE(view.colorMap()->data()->keySize(), 4);
        QCOMPARE(view.colorMap()->data()->valueSize(), 3);
        QCOMPARE(view.colorMap()->data()->cell(1, 1), 0.5);

        view.indexBoxes()[0]->setValue(1);
        QCOMPARE(view.slice().index[0], std::int64_t(1));
        QCOMPARE(cellAt(view.currentSlice(), 1, 1), 2.0);
        QCOMPARE(view.colorMap()->data()->cell(1, 1), 2.0);
        QVERIFY(view.cellToolTip(1, 1).startsWith(QStringLiteral("[1, 1, 1]\ngot 17\nwant 19\n|got \u2212 want| 2")));
        QVERIFY(view.cellToolTip(3, 0).isEmpty());

        // Rows = axis 0: the spin box is now axis 1's.
        view.rowAxisBox()->setCurrentIndex(0);
        QCOMPARE(view.slice().rowAxis, 0);
        QCOMPARE(view.slice().colAxis, 2);
        QCOMPARE(view.indexBoxes().size(), std::size_t(1));
        QCOMPARE(view.indexBoxes()[0]->objectName(), QStringLiteral("checkIndex1"));
        QCOMPARE(view.currentSlice().flat, (std::vector<std::int64_t>{4, 5, 6, 7, 16, 17, 18, 19}));
        // Choosing the column axis for the rows swaps the two.
        view.rowAxisBox()->setCurrentIndex(2);
        QCOMPARE(view.slice().rowAxis, 2);
        QCOMPARE(view.slice().colAxis, 0);

        view.relativeBox()->setChecked(true);
        QCOMPARE(view.mode(), ErrorMode::Relative);
        QVERIFY(view.infoText().contains(QStringLiteral("max rel error 0.105263")));

        view.outputBox()->setCurrentIndex(1);
        QCOMPARE(view.output(), 1);
        QCOMPARE(view.slice().index, (std::vector<std::int64_t>{0, 1}));
        QCOMPARE(view.currentSlice().cells[1], 0.2);
        QVERIFY(view.indexBoxes().empty());

        QSignalSpy rerun(&view, &views::ErrorHeatmapView::rerunRequested);
        QVERIFY(view.rerunButton()->isEnabled());
        QTest::mouseClick(view.rerunButton(), Qt::LeftButton);
        QCOMPARE(rerun.count(), 1);
        QCOMPARE(rerun.first().at(0).toString(), QStringLiteral("Conv_3"));
        view.setRerunBusy();
        QVERIFY(!view.rerunButton()->isEnabled());
        QVERIFY(view.rerunText().startsWith(QStringLiteral("Re-running 'Conv_3'")));
        view.setRerunResult({{"y", *pair2x3().want}, {"z", *pair2x3x4().want}});
        QVERIFY(view.rerunShown());
        QVERIFY2(view.rerunText().contains(QStringLiteral("max |re-run \u2212 want| = 0")), qPrintable(view.rerunText()));
        QCOMPARE(view.rerunSlice().cells, (std::vector<double>{1, 2.5, 3, 4, 5, 7}));
        QVERIFY(view.cellToolTip(0, 1).endsWith(QStringLiteral("re-run 2.5")));
        view.setRerunError(QStringLiteral("input 'x' was not kept"));
        QVERIFY(!view.rerunShown());
        QCOMPARE(view.rerunText(), QStringLiteral("Re-run failed: input 'x' was not kept"));

        // A kernel without kept inputs cannot be re-run; without data the note shows.
        views::ErrorHeatmapSnapshot none;
        none.kernel = "big";
        views::ErrorTensor t;
        t.name = "w";
        t.note = "output 'w': 9 of 9 elements beyond tolerance (tensors too big)";
        none.outputs = {t};
        view.setSnapshot(none);
        QVERIFY(!view.rerunButton()->isEnabled());
        QVERIFY(!view.hasData());
        QCOMPARE(view.infoText(), QStringLiteral("output 'w': 9 of 9 elements beyond tolerance (tensors too big)"));
    }

    void timingComparisonColumn()
    {
        views::TimingTableModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        views::TimingSnapshot s;
        s.rows = {row("a", {"a"}, 2e-6), row("b2", {"x", "y"}, 4e-6), row("c", {"c"}, 1e-6)};
        s.totalSeconds = 8e-6;
        s.totalReps = 5;
        m.setSnapshot(s);
        QCOMPARE(m.columnCount(), 10);
        QCOMPARE(m.rowCount(), 3);
        auto pinned = std::make_shared<views::PinnedRun>();
        pinned->kernels = {{"a", "Conv", {"a"}, 4e-6, 10}, {"d", "Relu", {"d"}, 3e-6, 10}, {"b", "Conv", {"y", "x"}, 1e-6, 10}};
        pinned->totalSeconds = 1e-5;
        m.setPinned(pinned);
        using M = views::TimingTableModel;
        QCOMPARE(m.columnCount(), 11);
        QCOMPARE(m.rowCount(), 4);
        QCOMPARE(m.headerData(M::VsPinned, Qt::Horizontal).toString(), QStringLiteral("vs pinned"));
        QCOMPARE(M::formatRatio(0.0018), QStringLiteral("0.0018x"));
        QCOMPARE(M::formatRatio(250), QStringLiteral("250x"));
        QCOMPARE(M::formatRatio(1.254), QStringLiteral("1.25x"));
        QCOMPARE(m.data(m.index(0, M::VsPinned)).toString(), QStringLiteral("2.00x"));
        QCOMPARE(m.data(m.index(0, M::VsPinned), Qt::UserRole).toDouble(), 2.0);
        QCOMPARE(m.data(m.index(1, M::VsPinned)).toString(), QStringLiteral("0.25x"));  // matched 'b' by node set
        QVERIFY(m.data(m.index(1, M::VsPinned), Qt::ToolTipRole).toString().contains(QStringLiteral("matched 'b'")));
        QCOMPARE(m.data(m.index(2, M::VsPinned)).toString(), QStringLiteral("new"));
        QCOMPARE(m.data(m.index(3, M::Kernel)).toString(), QStringLiteral("d"));
        QCOMPARE(m.data(m.index(3, M::VsPinned)).toString(), QStringLiteral("gone"));
        QCOMPARE(m.data(m.index(3, M::Median)).toString(), QStringLiteral("-"));
        QVERIFY(m.isGoneRow(3));
        QCOMPARE(m.kernelAt(3), std::string("d"));
        QCOMPARE(m.rowOfKernel("d"), 3);
        QCOMPARE(m.data(m.index(0, M::VsPinned), Qt::ForegroundRole).value<QBrush>().color(), QColor(0, 130, 60));
        QCOMPARE(m.data(m.index(1, M::VsPinned), Qt::ForegroundRole).value<QBrush>().color(), QColor(200, 40, 40));
        // A new snapshot keeps the comparison; unpinning removes the column and the gone row.
        m.setSnapshot(s);
        QCOMPARE(m.rowCount(), 4);
        m.setPinned(nullptr);
        QCOMPARE(m.columnCount(), 10);
        QCOMPARE(m.rowCount(), 3);
        QVERIFY(!m.data(m.index(0, M::VsPinned)).isValid());
    }

    void timingPanelComparison()
    {
        views::TimingPanel panel;
        views::TimingSnapshot s;
        s.rows = {row("a", {"a"}, 2e-6), row("c", {"c"}, 1e-6)};
        s.rows[1].status = views::KernelStatus::Failed;
        s.totalSeconds = 4e-6;
        s.totalReps = 5;
        panel.setSnapshot(s);
        auto pinned = std::make_shared<views::PinnedRun>();
        pinned->kernels = {{"a", "Conv", {"a"}, 4e-6, 10}, {"gone1", "Relu", {"g"}, 3e-6, 10}};
        pinned->totalSeconds = 5e-6;
        panel.setPinned(pinned);
        QVERIFY2(panel.summaryText().endsWith(QStringLiteral(" \u00b7 vs pinned: 1.25x end to end (pinned 5.0 us)")),
                 qPrintable(panel.summaryText()));
        // Shown right after Median.
        QHeaderView* h = panel.table()->horizontalHeader();
        QCOMPARE(h->visualIndex(views::TimingTableModel::VsPinned), h->visualIndex(views::TimingTableModel::Median) + 1);
        panel.selectKernel("gone1");
        QCOMPARE(panel.selectedKernel(), std::string("gone1"));
        QSignalSpy details(&panel, &views::TimingPanel::checkDetailsRequested);
        const QModelIndex failed = panel.proxy()->mapFromSource(panel.model()->index(1, 0));
        emit panel.table()->doubleClicked(failed);
        const QModelIndex passed = panel.proxy()->mapFromSource(panel.model()->index(0, 0));
        emit panel.table()->doubleClicked(passed);
        QCOMPARE(details.count(), 1);
        QCOMPARE(details.first().at(0).toString(), QStringLiteral("c"));
        panel.setPinned(nullptr);
        QVERIFY(!panel.summaryText().contains(QStringLiteral("pinned")));
    }

    void lineDiff()
    {
        QCOMPARE(views::splitLines("a\nb\n"), (std::vector<std::string>{"a", "b"}));
        QCOMPARE(views::splitLines("a\n\nb"), (std::vector<std::string>{"a", "", "b"}));
        QCOMPARE(views::unifiedDiff("a\nb\nc\nd\n", "a\nc\nd\ne\n", "x", "y", 1),
                 std::string("--- x\n+++ y\n@@ -1,4 +1,4 @@\n a\n-b\n c\n d\n+e\n"));
        QCOMPARE(views::unifiedDiff("a\nb\nc\nd\n", "a\nc\nd\ne\n", "x", "y", 0),
                 std::string("--- x\n+++ y\n@@ -2,1 +1,0 @@\n-b\n@@ -4,0 +4,1 @@\n+e\n"));
        QCOMPARE(views::unifiedDiff("same\n", "same", "x", "y"), std::string());
        QCOMPARE(views::unifiedDiff("x\n", "y\n", "p", "c"), std::string("--- p\n+++ c\n@@ -1,1 +1,1 @@\n-x\n+y\n"));
        QCOMPARE(views::unifiedDiff("", "a\n", "p", "c"), std::string("--- p\n+++ c\n@@ -0,0 +1,1 @@\n+a\n"));
        // Far-apart changes make two hunks with 3 lines of context each.
        std::string before, after;
        for (int i = 1; i <= 20; ++i) {
            before += "l" + std::to_string(i) + "\n";
            after += (i == 2 ? std::string("L2") : i == 18 ? std::string("L18") : "l" + std::to_string(i)) + "\n";
        }
        QCOMPARE(views::unifiedDiff(before, after, "p", "c"),
                 std::string("--- p\n+++ c\n@@ -1,5 +1,5 @@\n l1\n-l2\n+L2\n l3\n l4\n l5\n"
                             "@@ -15,6 +15,6 @@\n l15\n l16\n l17\n-l18\n+L18\n l19\n l20\n"));
        const auto script = views::diffLines({"a", "b", "c"}, {"b", "c", "d"});
        QCOMPARE(script.size(), std::size_t(4));
        QCOMPARE(script[0].kind, views::DiffLine::Kind::Removed);
        QCOMPARE(script[0].beforeLine, 1);
        QCOMPARE(script[3].kind, views::DiffLine::Kind::Added);
        QCOMPARE(script[3].afterLine, 3);
    }

    void diffViewAndCodePanel()
    {
        QCOMPARE(views::CodeDiffView::lineBackground(QStringLiteral("-x")), QColor(255, 225, 225));
        QCOMPARE(views::CodeDiffView::lineBackground(QStringLiteral("+x")), QColor(220, 250, 220));
        QVERIFY(!views::CodeDiffView::lineBackground(QStringLiteral(" x")).isValid());
        QVERIFY(!views::CodeDiffView::lineBackground(QStringLiteral("+++ c")).isValid());

        views::CodePanel panel;
        panel.setModule(QStringLiteral("int a;\n"), QStringLiteral("m.cpp"));
        QVERIFY(!panel.diffButton()->isVisibleTo(&panel));
        panel.setDiffAvailable(true);
        QVERIFY(panel.diffButton()->isVisibleTo(&panel));
        QSignalSpy toggled(&panel, &views::CodePanel::diffToggled);
        panel.diffButton()->click();
        QCOMPARE(toggled.count(), 1);
        QCOMPARE(toggled.first().at(0).toBool(), true);
        const QString diff = QString::fromStdString(views::unifiedDiff("x\n", "y\n", "p", "c"));
        panel.showDiff(diff, QStringLiteral("Kernel of 'k'"));
        QVERIFY(panel.isDiffShown());
        QCOMPARE(panel.diffView()->diffText(), diff);
        QCOMPARE(panel.diffView()->headerText(), QStringLiteral("Kernel of 'k'"));
        // The '-' line of the diff (block 3) is on a red background.
        const QTextBlock minus = panel.diffView()->editor()->document()->findBlockByNumber(3);
        QCOMPARE(minus.text(), QStringLiteral("-x"));
        const auto formats = minus.layout()->formats();
        QVERIFY(!formats.isEmpty());
        QCOMPARE(formats.first().format.background().color(), QColor(255, 225, 225));
        panel.setDiffAvailable(false);
        QVERIFY(!panel.isDiffShown());
        QVERIFY(!panel.diffButton()->isChecked());
    }

    void rooflinePinned()
    {
        views::RooflineView view;
        view.resize(800, 600);
        view.setProfile(std::nullopt);
        view.addPoints({sample("k1", {"k1"}, 1e-3), sample("k2", {"n5"}, 1e-3)});
        view.flush();
        view.setPinnedPoints({sample("k1", {"k1"}, 2e-3), sample("k_old", {"n5"}, 4e-3), sample("gone1", {"g"}, 1e-3)});
        const auto at = view.pinnedPositions(QStringLiteral("k1"));
        QCOMPARE(at.size(), std::size_t(1));
        QCOMPARE(at[0].x(), 10.0);
        QCOMPARE(at[0].y(), 500.0);
        QCOMPARE(view.pinnedLink(QStringLiteral("k1")), QStringLiteral("k1"));
        QCOMPARE(view.pinnedLink(QStringLiteral("k_old")), QStringLiteral("k2"));
        QCOMPARE(view.pinnedLink(QStringLiteral("gone1")), QString());
        int markers = 0, links = 0;
        for (int i = 0; i < view.plot()->plottableCount(); ++i) {
            auto* c = qobject_cast<QCPCurve*>(view.plot()->plottable(i));
            if (!c || c->layer()->name() != QLatin1String("pinned"))
                continue;
            if (c->scatterStyle().shape() == QCPScatterStyle::ssCircle && c->lineStyle() == QCPCurve::lsNone) {
                ++markers;
                QCOMPARE(c->scatterStyle().brush().color().alpha(), 0);  // hollow
            } else {
                ++links;
                QCOMPARE(c->dataCount(), 2);
            }
        }
        QCOMPARE(markers, 3);
        QCOMPARE(links, 2);
        // Pinned dots are not kernels: clicking finds none and the legend does not list them twice.
        QCOMPARE(view.kernelNames(), (QStringList{QStringLiteral("k1"), QStringLiteral("k2")}));
        // The legend explains the hollow markers with one entry after the kernels' keys.
        const QStringList legend = view.legendEntries();
        QCOMPARE(legend.count(QStringLiteral("pinned run")), 1);
        QCOMPARE(legend.last(), QStringLiteral("pinned run"));
        auto* entry = qobject_cast<QCPPlottableLegendItem*>(view.plot()->legend->item(view.plot()->legend->itemCount() - 1));
        QVERIFY(entry != nullptr);
        auto* key = qobject_cast<QCPGraph*>(entry->plottable());
        QVERIFY(key != nullptr);
        QCOMPARE(key->scatterStyle().shape(), QCPScatterStyle::ssCircle);
        QCOMPARE(key->scatterStyle().brush().color().alpha(), 0);
        view.setPinnedPoints({});
        QVERIFY(view.pinnedPositions(QStringLiteral("k1")).empty());
        QVERIFY(!view.legendEntries().contains(QStringLiteral("pinned run")));
    }
};

QTEST_MAIN(DebugViewsTest)
#include "debug_views_test.moc"
