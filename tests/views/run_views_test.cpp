// Views of a run's results (Qt Test, offscreen): kernel-status colours and the graph legend, the
// code view's highlighted line range and scrolling, the C++ highlighter, the timing table model.
#include <QGraphicsScene>
#include <QMouseEvent>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextLayout>

#include "views/code/code_panel.h"
#include "views/code/code_view.h"
#include "views/code/cpp_highlighter.h"
#include "views/graph/graph_items.h"
#include "views/graph/graph_layout.h"
#include "views/graph/graph_snapshot.h"
#include "views/graph/graph_view.h"
#include "views/graph/kernel_status.h"
#include "views/timing/timing_panel.h"
#include "views/timing/timing_table_model.h"

using namespace tessera;
using views::KernelStatus;

namespace {

ir::ValueId addValue(ir::Graph& g, const std::string& name, std::vector<std::int64_t> dims)
{
    ir::Value v;
    v.name = name;
    v.type = ir::TensorType{ir::DType::F32, ir::Shape::ofKnown(dims)};
    return g.addValue(std::move(v));
}

/// x -> Relu "r1" -> Sigmoid "s1" -> Add "a1"(r, s) -> y
ir::Graph chainGraph()
{
    ir::Graph g;
    const auto x = addValue(g, "x", {2, 8});
    g.value(x).isGraphInput = true;
    g.inputs().push_back(x);
    const auto r = addValue(g, "r", {2, 8});
    const auto s = addValue(g, "s", {2, 8});
    const auto y = addValue(g, "y", {2, 8});
    g.value(y).isGraphOutput = true;
    g.outputs().push_back(y);
    ir::Node relu;
    relu.name = "r1";
    relu.opType = "Relu";
    relu.inputs = {x};
    relu.outputs = {r};
    g.addNode(std::move(relu));
    ir::Node sig;
    sig.name = "s1";
    sig.opType = "Sigmoid";
    sig.inputs = {r};
    sig.outputs = {s};
    g.addNode(std::move(sig));
    ir::Node add;
    add.name = "a1";
    add.opType = "Add";
    add.inputs = {r, s};
    add.outputs = {y};
    g.addNode(std::move(add));
    return g;
}

QString numberedLines(int n)
{
    QStringList lines;
    for (int i = 1; i <= n; ++i)
        lines << QStringLiteral("int line%1 = %1;  // line %1").arg(i);
    return lines.join(QLatin1Char('\n'));
}

views::TimingSnapshot sampleSnapshot()
{
    views::TimingSnapshot s;
    s.totalSeconds = 0.0015;
    s.totalReps = 40;
    s.threads = 2;
    s.checked = true;
    s.compileNote = "compile cache hit";
    views::TimingRow a;
    a.kernel = "conv_a";
    a.opType = "Conv";
    a.flops = 2.5e6;
    a.bytes = 1250000;
    a.medianSeconds = 250e-6;
    a.reps = 100;
    a.checked = true;
    a.relError = 1.234e-7;
    a.status = KernelStatus::Passed;
    views::TimingRow b;
    b.kernel = "relu_b";
    b.opType = "Relu";
    b.flops = 800;
    b.bytes = 6000;
    b.medianSeconds = 0.002;
    b.reps = 7;
    b.checked = true;
    b.relError = 0.5;
    b.checkSummary = "'r': 3 of 200 elements beyond tolerance";
    b.status = KernelStatus::Failed;
    views::TimingRow c;
    c.kernel = "topk_c";
    c.opType = "TopK";
    c.reference = true;
    c.flops = 0;
    c.bytes = 0;
    c.checked = true;
    c.status = KernelStatus::Reference;
    s.rows = {a, b, c};
    return s;
}

QString cell(const QAbstractItemModel& m, int row, int col, int role = Qt::DisplayRole)
{
    return m.data(m.index(row, col), role).toString();
}

}  // namespace

class RunViewsTest : public QObject {
    Q_OBJECT
private slots:
    void statusColoursAndLabels()
    {
        QVERIFY(!views::kernelStatusColor(KernelStatus::None).isValid());
        QCOMPARE(views::kernelStatusColor(KernelStatus::Compiled), QColor(0x1e, 0x63, 0xd6));
        QCOMPARE(views::kernelStatusColor(KernelStatus::Passed), QColor(0x1b, 0x9e, 0x3e));
        QCOMPARE(views::kernelStatusColor(KernelStatus::Failed), QColor(0xd3, 0x2f, 0x2f));
        QCOMPARE(views::kernelStatusColor(KernelStatus::Reference), QColor(0x7a, 0x7a, 0x7a));
        QCOMPARE(views::kernelStatusPenStyle(KernelStatus::Reference), Qt::DashLine);
        QCOMPARE(views::kernelStatusPenStyle(KernelStatus::Folded), Qt::DotLine);
        QCOMPARE(views::kernelStatusPenStyle(KernelStatus::Passed), Qt::SolidLine);
        QCOMPARE(views::kernelStatusLabel(KernelStatus::Passed), QStringLiteral("passed"));
        QCOMPARE(views::kernelStatusLabel(KernelStatus::Failed), QStringLiteral("failed"));
        QCOMPARE(views::kernelStatusLabel(KernelStatus::Reference), QStringLiteral("reference"));
        QCOMPARE(views::kernelStatusLabel(KernelStatus::None), QString());
        // Every status but None has a distinct colour.
        QSet<QRgb> colours;
        for (KernelStatus s : {KernelStatus::Compiled, KernelStatus::Ran, KernelStatus::Passed, KernelStatus::Failed,
                               KernelStatus::Reference, KernelStatus::Folded})
            colours.insert(views::kernelStatusColor(s).rgb());
        QCOMPARE(colours.size(), 6);
    }

    void graphViewAppliesStatusesByName()
    {
        const ir::Graph g = chainGraph();
        views::GraphView view;
        view.resize(600, 500);
        auto snap = std::make_shared<const views::GraphSnapshot>(views::makeGraphSnapshot(g));
        view.setGraph(snap, views::layoutGraph(view.makeLayoutRequest(*snap)));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const int r1 = view.operatorIdByName("r1"), s1 = view.operatorIdByName("s1"), a1 = view.operatorIdByName("a1");
        QCOMPARE(r1, 0);
        QCOMPARE(s1, 1);
        QCOMPARE(a1, 2);
        QCOMPARE(view.operatorIdByName("x"), -1);  // graph inputs are not operators
        QCOMPARE(view.statusLegendText(), QString());

        views::KernelStatusMap st;
        st["r1"] = {KernelStatus::Passed, QStringLiteral("0.1 ms")};
        st["s1"] = {KernelStatus::Failed, {}};
        st["a1"] = {KernelStatus::Passed, {}};
        st["not_in_graph"] = {KernelStatus::Failed, {}};
        view.setKernelStatuses(st);
        QCOMPARE(view.kernelStatus(r1), KernelStatus::Passed);
        QCOMPARE(view.kernelStatus(s1), KernelStatus::Failed);
        QCOMPARE(view.kernelStatus(a1), KernelStatus::Passed);
        // The legend counts what is drawn (unknown names do not count), in status order.
        QCOMPARE(view.statusLegendText(), QStringLiteral("passed 2 \u00b7 failed 1"));
        const QString tip = view.nodeItem(r1)->toolTip();
        QVERIFY2(tip.contains(QStringLiteral("Kernel: passed")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("0.1 ms")), qPrintable(tip));

        // A node missing from a later map goes back to plain; clearing hides the legend.
        st.erase("s1");
        view.setKernelStatuses(st);
        QCOMPARE(view.kernelStatus(s1), KernelStatus::None);
        QCOMPARE(view.statusLegendText(), QStringLiteral("passed 2"));
        view.clearKernelStatuses();
        QCOMPARE(view.kernelStatus(r1), KernelStatus::None);
        QCOMPARE(view.statusLegendText(), QString());
    }

    void codeViewHighlightsAndScrollsToRange()
    {
        views::CodeView code;
        code.resize(500, 300);
        code.show();
        QVERIFY(QTest::qWaitForWindowExposed(&code));
        code.setCode(numberedLines(200));
        QCOMPARE(code.blockCount(), 200);
        QCOMPARE(code.highlightFirst(), 0);

        code.highlightLines(120, 131);
        QCOMPARE(code.highlightFirst(), 120);
        QCOMPARE(code.highlightLast(), 131);
        const auto sel = code.extraSelections();
        QCOMPARE(sel.size(), 12);
        QCOMPARE(sel.first().cursor.blockNumber(), 119);
        QCOMPARE(sel.last().cursor.blockNumber(), 130);
        QVERIFY(sel.first().format.property(QTextFormat::FullWidthSelection).toBool());
        // Two lines of context above the range.
        QCOMPARE(code.firstVisibleLine(), 118);
        QCOMPARE(code.textCursor().blockNumber(), 119);
        QVERIFY(!code.textCursor().hasSelection());

        // Clamped to the text; an empty range clears.
        code.highlightLines(195, 400);
        QCOMPARE(code.highlightFirst(), 195);
        QCOMPARE(code.highlightLast(), 200);
        QCOMPARE(code.extraSelections().size(), 6);
        code.highlightLines(7, 3);
        QCOMPARE(code.highlightFirst(), 7);
        QCOMPARE(code.highlightLast(), 7);
        code.highlightLines(201, 205);
        QCOMPARE(code.highlightFirst(), 0);
        QCOMPARE(code.extraSelections().size(), 0);
        code.highlightLines(10, 12);
        code.setCode(numberedLines(5));
        QCOMPARE(code.highlightFirst(), 0);
        QVERIFY(code.gutterWidth() > 0);
    }

    void codeViewClickNamesTheLine()
    {
        views::CodeView code;
        code.resize(500, 300);
        code.show();
        QVERIFY(QTest::qWaitForWindowExposed(&code));
        code.setCode(numberedLines(50));
        QSignalSpy clicked(&code, &views::CodeView::lineClicked);
        // The middle of line 4 (block 3).
        QTextCursor c(code.document()->findBlockByNumber(3));
        const QPoint p4 = code.cursorRect(c).center() + QPoint(10, 0);
        QTest::mouseClick(code.viewport(), Qt::LeftButton, Qt::NoModifier, p4);
        QCOMPARE(clicked.size(), 1);
        QCOMPARE(clicked.first().first().toInt(), 4);
        // Selecting text (a drag) is not a click on a line.
        clicked.clear();
        QTextCursor sel(code.document()->findBlockByNumber(6));
        sel.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
        code.setTextCursor(sel);
        QMouseEvent release(QEvent::MouseButtonRelease, QPointF(p4), code.viewport()->mapToGlobal(QPointF(p4)),
                            Qt::LeftButton, Qt::NoButton, Qt::NoModifier);
        QCoreApplication::sendEvent(code.viewport(), &release);
        QVERIFY(code.textCursor().hasSelection());
        QCOMPARE(clicked.size(), 0);
    }

    void codePanelHeader()
    {
        views::CodePanel panel;
        QVERIFY(!panel.hasModule());
        panel.setModule(numberedLines(50), QStringLiteral("m.cpp \u00b7 2 kernels"));
        QVERIFY(panel.hasModule());
        QCOMPARE(panel.headerText(), QStringLiteral("m.cpp \u00b7 2 kernels"));
        panel.showKernel(QStringLiteral("conv"), 10, 20);
        QCOMPARE(panel.codeView()->highlightFirst(), 10);
        QCOMPARE(panel.headerText(), QStringLiteral("m.cpp \u00b7 2 kernels  \u2014  kernel 'conv', lines 10\u201320"));
        panel.showNote(QStringLiteral("folded"));
        QCOMPARE(panel.codeView()->highlightFirst(), 0);
        QCOMPARE(panel.headerText(), QStringLiteral("m.cpp \u00b7 2 kernels  \u2014  folded"));
        panel.clear(QStringLiteral("nothing"));
        QVERIFY(!panel.hasModule());
        QCOMPARE(panel.codeView()->blockCount(), 1);
    }

    void highlighterColoursTokens()
    {
        QTextDocument doc;
        views::CppHighlighter hl(&doc);
        doc.setPlainText(QStringLiteral("#pragma omp parallel for\n"
                                        "for (int i = 0; i < 16; ++i) {  // loop\n"
                                        "/* a\n"
                                        "   b */ x = 1.5f;\n"
                                        "s = \"for\";"));
        // The first highlight of a fresh document is queued to the event loop; run it now.
        hl.rehighlight();
        auto colourAt = [&](int line, int column) {
            const QTextBlock b = doc.findBlockByNumber(line);
            for (const QTextLayout::FormatRange& r : b.layout()->formats()) {
                if (column >= r.start && column < r.start + r.length)
                    return r.format.foreground().color();
            }
            return QColor();
        };
        using K = views::CppHighlighter::Kind;
        auto colour = [&](K k) { return hl.format(k).foreground().color(); };
        QCOMPARE(colourAt(0, 3), colour(K::Preprocessor));
        QCOMPARE(colourAt(1, 0), colour(K::Keyword));      // for
        QCOMPARE(colourAt(1, 5), colour(K::Type));         // int
        QCOMPARE(colourAt(1, 13), colour(K::Number));      // 0
        QCOMPARE(colourAt(1, 34), colour(K::Comment));     // // loop
        QCOMPARE(colourAt(1, 9), QColor());                // i: plain
        QCOMPARE(colourAt(2, 0), colour(K::Comment));      // /* a
        QCOMPARE(colourAt(3, 3), colour(K::Comment));      //    b */
        QCOMPARE(colourAt(3, 8), QColor());                // x after the comment
        QCOMPARE(colourAt(3, 12), colour(K::Number));      // 1.5f
        QCOMPARE(colourAt(4, 6), colour(K::String));       // "for" is a string, not a keyword
    }

    void timingFormats()
    {
        QCOMPARE(views::TimingTableModel::formatSeconds(8e-7), QStringLiteral("0.8 us"));
        QCOMPARE(views::TimingTableModel::formatSeconds(250e-6), QStringLiteral("250.0 us"));
        QCOMPARE(views::TimingTableModel::formatSeconds(0.0012344), QStringLiteral("1.234 ms"));
        QCOMPARE(views::TimingTableModel::formatSeconds(2.5), QStringLiteral("2.500 s"));
        QCOMPARE(views::TimingTableModel::formatCount(950), QStringLiteral("950"));
        QCOMPARE(views::TimingTableModel::formatCount(2.5e6), QStringLiteral("2.5 M"));
        QCOMPARE(views::TimingTableModel::formatCount(1250000, QStringLiteral("B")), QStringLiteral("1.25 MB"));
        QCOMPARE(views::TimingTableModel::formatCount(45678, QStringLiteral("B")), QStringLiteral("45.68 KB"));
        QCOMPARE(views::TimingTableModel::formatCount(0, QStringLiteral("B")), QStringLiteral("0 B"));
    }

    void timingModelRowsAndSorting()
    {
        views::TimingPanel panel;
        panel.setSnapshot(sampleSnapshot());
        const views::TimingTableModel& m = *panel.model();
        QCOMPARE(m.rowCount(), 3);
        QCOMPARE(m.columnCount(), 10);
        QCOMPARE(m.headerData(views::TimingTableModel::Intensity, Qt::Horizontal).toString(), QStringLiteral("AI"));
        const QStringList row0 = {QStringLiteral("conv_a"),   QStringLiteral("Conv"),   QStringLiteral("2.5 M"),
                                  QStringLiteral("1.25 MB"),  QStringLiteral("2.00"),   QStringLiteral("250.0 us"),
                                  QStringLiteral("10.00"),    QStringLiteral("5.00"),   QStringLiteral("1.2e-07"),
                                  QStringLiteral("passed")};
        const QStringList row1 = {QStringLiteral("relu_b"), QStringLiteral("Relu"),  QStringLiteral("800"),
                                  QStringLiteral("6 KB"),   QStringLiteral("0.13"),  QStringLiteral("2.000 ms"),
                                  QStringLiteral("0.00"),   QStringLiteral("0.00"),  QStringLiteral("5.0e-01"),
                                  QStringLiteral("failed")};
        const QStringList row2 = {QStringLiteral("topk_c"), QStringLiteral("TopK (ref)"), QStringLiteral("0"),
                                  QStringLiteral("0 B"),    QStringLiteral("0.00"),       QStringLiteral("-"),
                                  QStringLiteral("-"),      QStringLiteral("-"),          QStringLiteral("0.0e+00"),
                                  QStringLiteral("reference")};
        for (int c = 0; c < 10; ++c) {
            QCOMPARE(cell(m, 0, c), row0[c]);
            QCOMPARE(cell(m, 1, c), row1[c]);
            QCOMPARE(cell(m, 2, c), row2[c]);
        }
        QCOMPARE(m.data(m.index(0, views::TimingTableModel::Median), Qt::UserRole).toDouble(), 250e-6);
        QCOMPARE(m.data(m.index(0, views::TimingTableModel::GFlops), Qt::UserRole).toDouble(), 10.0);
        QVERIFY(cell(m, 1, views::TimingTableModel::RelError, Qt::ToolTipRole).contains(QStringLiteral("3 of 200")));
        QCOMPARE(m.rowOfKernel("relu_b"), 1);
        QCOMPARE(m.rowOfKernel("nope"), -1);
        QCOMPARE(panel.summaryText(),
                 QStringLiteral("End to end 1.500 ms (median of 40) \u00b7 3 kernels \u00b7 2 threads \u00b7 "
                                "compile cache hit \u00b7 check: 1 of 3 outside tolerance (first: 'relu_b')"));

        // Sorting by the median (numbers, not text): descending puts 2 ms first.
        panel.table()->sortByColumn(views::TimingTableModel::Median, Qt::DescendingOrder);
        const QAbstractItemModel* proxy = panel.proxy();
        QCOMPARE(cell(*proxy, 0, 0), QStringLiteral("relu_b"));
        QCOMPARE(cell(*proxy, 1, 0), QStringLiteral("conv_a"));
        QCOMPARE(cell(*proxy, 2, 0), QStringLiteral("topk_c"));

        // Selecting from outside does not emit; a user selection does.
        QSignalSpy spy(&panel, &views::TimingPanel::kernelSelected);
        panel.selectKernel("conv_a");
        QCOMPARE(panel.selectedKernel(), std::string("conv_a"));
        QCOMPARE(spy.count(), 0);
        panel.table()->selectRow(2);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.first().first().toString(), QStringLiteral("topk_c"));
        panel.selectKernel("nope");
        QCOMPARE(panel.selectedKernel(), std::string());
    }
};

QTEST_MAIN(RunViewsTest)
#include "run_views_test.moc"
