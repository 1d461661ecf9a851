// Views: graph layout, graph view items, find, and the properties panel (Qt Test, offscreen).
#include <memory>

#include <QGraphicsScene>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTest>
#include <QTreeWidget>

#include "core/frontend/dsl/dsl.h"
#include "core/ir/graph.h"
#include "views/graph/graph_items.h"
#include "core/support/dot_escape.h"
#include "views/graph/graph_layout.h"
#include "views/graph/graph_snapshot.h"
#include "views/graph/graph_view.h"
#include "views/properties/properties_panel.h"

#ifdef TESSERA_HAVE_ONNX_IMPORTER
#include "core/frontend/onnx/onnx_importer.h"
#endif

using namespace tessera;

namespace {

ir::ValueId addValue(ir::Graph& g, const std::string& name, std::vector<std::int64_t> dims)
{
    ir::Value v;
    v.name = name;
    v.type = ir::TensorType{ir::DType::F32, ir::Shape::ofKnown(dims)};
    return g.addValue(std::move(v));
}

/// x -> Conv(W) -> Relu -> Add(conv, relu) -> y
std::shared_ptr<ir::Model> smallModel(const std::string& convName = "conv1", const std::string& reluName = "relu1")
{
    auto m = std::make_shared<ir::Model>();
    ir::Graph& g = m->graph;
    const auto x = addValue(g, "x", {1, 3, 8, 8});
    g.value(x).isGraphInput = true;
    g.inputs().push_back(x);

    ir::Value w;
    w.name = "W";
    std::vector<float> wdata(4 * 3 * 3 * 3);
    for (std::size_t i = 0; i < wdata.size(); ++i)
        wdata[i] = static_cast<float>(i % 7) - 3.0f;
    w.data = std::make_shared<ir::TensorData>(ir::TensorData::fromFloats(wdata, {4, 3, 3, 3}));
    w.type = w.data->type();
    w.isInitializer = true;
    const auto wid = g.addValue(std::move(w));
    g.initializers().push_back(wid);

    const auto c = addValue(g, "c", {1, 4, 8, 8});
    const auto r = addValue(g, "r", {1, 4, 8, 8});
    const auto y = addValue(g, "y", {1, 4, 8, 8});
    g.value(y).isGraphOutput = true;
    g.outputs().push_back(y);

    ir::Node conv;
    conv.name = convName;
    conv.opType = "Conv";
    conv.inputs = {x, wid};
    conv.outputs = {c};
    conv.setAttr("kernel_shape", ir::Attribute::ofInts({3, 3}));
    conv.setAttr("pads", ir::Attribute::ofInts({1, 1, 1, 1}));
    conv.setAttr("group", ir::Attribute::ofInt(1));
    g.addNode(std::move(conv));

    ir::Node relu;
    relu.name = reluName;
    relu.opType = "Relu";
    relu.inputs = {c};
    relu.outputs = {r};
    g.addNode(std::move(relu));

    ir::Node add;
    add.name = "add1";
    add.opType = "Add";
    add.inputs = {c, r};
    add.outputs = {y};
    g.addNode(std::move(add));
    return m;
}

int countItems(const QGraphicsScene* scene, int type)
{
    int n = 0;
    for (QGraphicsItem* item : scene->items())
        n += item->type() == type ? 1 : 0;
    return n;
}

int countOperatorItems(const QGraphicsScene* scene)
{
    int n = 0;
    for (QGraphicsItem* item : scene->items()) {
        if (item->type() == views::NodeItem::Type &&
            static_cast<views::NodeItem*>(item)->kind() == views::SnapshotNodeKind::Operator)
            ++n;
    }
    return n;
}

/// Lays out and shows `g` in `view`; returns the snapshot.
std::shared_ptr<const views::GraphSnapshot> show(views::GraphView& view, const ir::Graph& g)
{
    auto snap = std::make_shared<const views::GraphSnapshot>(views::makeGraphSnapshot(g));
    const views::LayoutResult layout = views::layoutGraph(view.makeLayoutRequest(*snap));
    if (!layout.ok)
        qWarning("layout failed: %s", layout.error.c_str());
    view.setGraph(snap, layout);
    return snap;
}

}  // namespace

class ViewsTest : public QObject {
    Q_OBJECT
private slots:
    void snapshotOfSmallGraph()
    {
        const auto m = smallModel();
        const views::GraphSnapshot s = views::makeGraphSnapshot(m->graph);
        QCOMPARE(s.operatorCount, 3);
        QCOMPARE(static_cast<int>(s.nodes.size()), 3 + 1 + 1);  // ops + input x + output y
        // x->conv, conv->relu, conv->add, relu->add, add->y; the weight W is not an edge.
        QCOMPARE(static_cast<int>(s.edges.size()), 5);
        QCOMPARE(QString::fromStdString(s.edges.front().label), QString::fromUtf8("1\u00d73\u00d78\u00d78"));
    }

    void layoutProducesGeometry()
    {
        const auto m = smallModel();
        const views::GraphSnapshot s = views::makeGraphSnapshot(m->graph);
        views::LayoutRequest req;
        for (const auto& n : s.nodes)
            req.nodes.push_back({n.id, QSizeF(120, 50), n.name});
        for (const auto& e : s.edges)
            req.edges.push_back({e.id, e.from, e.to});
        const views::LayoutResult r = views::layoutGraph(req);
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(r.nodes.size(), req.nodes.size());
        QCOMPARE(r.edges.size(), req.edges.size());
        QVERIFY(r.bounds.width() >= 120 && r.bounds.height() >= 4 * 50);
        for (const auto& e : r.edges)
            QVERIFY(e.points.size() >= 4);
        // Top to bottom: the input is above the Conv, the Conv above the output.
        const auto& nodes = r.nodes;
        auto yOf = [&](int id) {
            for (const auto& n : nodes)
                if (n.id == id)
                    return n.center.y();
            return -1.0;
        };
        const int inputId = 3, outputId = 4;
        QVERIFY(yOf(inputId) < yOf(0));
        QVERIFY(yOf(0) < yOf(2));
        QVERIFY(yOf(2) < yOf(outputId));
        QCOMPARE(nodes[0].size.width(), 120.0);
    }

    void layoutCancelled()
    {
        views::LayoutRequest req;
        req.nodes.push_back({0, QSizeF(10, 10), "a"});
        support::CancelToken token;
        token.cancel();
        const views::LayoutResult r = views::layoutGraph(req, &token);
        QVERIFY(r.cancelled);
        QVERIFY(!r.ok);
        QVERIFY(r.nodes.empty());
    }

    void dotEscapesNames()
    {
        QCOMPARE(support::escapeDotString("a\"b\\c\nd"), std::string("a\\\"b\\\\c\\nd"));
        QCOMPARE(support::escapeDotString("*/ &"), std::string("*/ &amp;"));
        QCOMPARE(support::escapeDotString("\xc3\xa9"), std::string("&#233;"));
        QCOMPARE(support::escapeDotString("\xff"), std::string("&#65533;"));

        // Hostile names lay out fine; DOT ids are node ids, never names.
        const auto m = smallModel("conv \"quoted\" \\ back\nslash */ \xe2\x9c\x93", "");
        views::GraphView view;
        view.resize(800, 600);
        const auto snap = show(view, m->graph);
        QCOMPARE(view.nodeItemCount(), static_cast<int>(snap->nodes.size()));
        const std::string dot = views::buildDot(view.makeLayoutRequest(*snap));
        QVERIFY(dot.find("conv \\\"quoted\\\" \\\\ back\\nslash */ &#10003;") != std::string::npos);
        QVERIFY(dot.find("n0 -> n1") != std::string::npos);
    }

    void viewHasOneItemPerNode()
    {
        const auto m = smallModel();
        views::GraphView view;
        view.resize(900, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const auto snap = show(view, m->graph);
        QCOMPARE(countOperatorItems(view.scene()), static_cast<int>(m->graph.numNodes()));
        QCOMPARE(countItems(view.scene(), views::NodeItem::Type), static_cast<int>(snap->nodes.size()));
        QCOMPARE(countItems(view.scene(), views::EdgeItem::Type), static_cast<int>(snap->edges.size()));
        QCOMPARE(view.edgeItemCount(), 5);
        view.showStart();
        view.fitToWindow();
        QVERIFY(view.zoom() > 0.0 && view.zoom() <= 1.0);
        const double z = view.zoom();
        view.zoomInAction()->trigger();
        QVERIFY(view.zoom() > z);
        view.zoomOutAction()->trigger();
        QVERIFY(qAbs(view.zoom() - z) < 1e-9);
        // Painting at several zoom levels must not crash (level of detail paths).
        for (double f : {0.1, 0.4, 1.0, 2.0}) {
            view.setZoom(f);
            view.viewport()->repaint();
        }
    }

    void findSelectsByNameAndOpType()
    {
        const auto m = smallModel();
        views::GraphView view;
        view.resize(900, 700);
        show(view, m->graph);
        QSignalSpy spy(&view, &views::GraphView::nodeSelected);

        QVERIFY(view.findNext(QStringLiteral("RELU1")));
        QCOMPARE(view.selectedNodeId(), 1);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.takeFirst().at(0).toInt(), 1);

        // By op type; Enter in the find bar cycles through matches.
        QCOMPARE(view.findNodes(QStringLiteral("conv")), QList<int>{0});
        view.showFindBar();
        auto* edit = view.findChild<QLineEdit*>(QStringLiteral("findEdit"));
        QVERIFY(edit != nullptr);
        edit->setText(QStringLiteral("1"));  // conv1, relu1, add1
        QTest::keyClick(edit, Qt::Key_Return);
        QCOMPARE(view.selectedNodeId(), 0);
        QTest::keyClick(edit, Qt::Key_Return);
        QCOMPARE(view.selectedNodeId(), 1);
        QTest::keyClick(edit, Qt::Key_Return);
        QCOMPARE(view.selectedNodeId(), 2);
        QTest::keyClick(edit, Qt::Key_Return);
        QCOMPARE(view.selectedNodeId(), 0);
        QTest::keyClick(edit, Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(view.selectedNodeId(), 2);
        QVERIFY(!view.findNext(QStringLiteral("no such node")));
    }

    void propertiesShowConvAttributesAndWeights()
    {
        const auto m = smallModel();
        views::PropertiesPanel panel;
        panel.resize(400, 800);
        panel.setModel(m);
        panel.showNode(0);
        QCOMPARE(panel.fieldText(QStringLiteral("op")), QStringLiteral("Conv"));
        QCOMPARE(panel.fieldText(QStringLiteral("name")), QStringLiteral("conv1"));
        QCOMPARE(panel.fieldText(QStringLiteral("codegen")), QStringLiteral("available (CPU and CUDA)"));
        QTreeWidget* attrs = panel.attributesTree();
        QVERIFY(attrs != nullptr);
        QMap<QString, QString> values;
        QMap<QString, QString> types;
        for (int i = 0; i < attrs->topLevelItemCount(); ++i) {
            values[attrs->topLevelItem(i)->text(0)] = attrs->topLevelItem(i)->text(2);
            types[attrs->topLevelItem(i)->text(0)] = attrs->topLevelItem(i)->text(1);
        }
        QCOMPARE(values.value(QStringLiteral("kernel_shape")), QStringLiteral("[3,3]"));
        QCOMPARE(types.value(QStringLiteral("kernel_shape")), QStringLiteral("ints"));
        QCOMPARE(values.value(QStringLiteral("pads")), QStringLiteral("[1,1,1,1]"));
        QCOMPARE(values.value(QStringLiteral("group")), QStringLiteral("1"));
        QCOMPARE(types.value(QStringLiteral("group")), QStringLiteral("int"));
        QCOMPARE(panel.weightCount(), 1);
        QCOMPARE(panel.inputsTree()->topLevelItemCount(), 2);
        QCOMPARE(panel.inputsTree()->topLevelItem(0)->text(1), QStringLiteral("f32[1,3,8,8]"));

        // A declared ONNX type that differs is shown next to ours.
        m->graph.value(m->graph.findValue("c")).onnxType = ir::TensorType{ir::DType::F32, ir::Shape::ofKnown({1, 4, 6, 6})};
        panel.showNode(0);
        QCOMPARE(panel.outputsTree()->topLevelItem(0)->text(2), QStringLiteral("f32[1,4,6,6]"));

        panel.showNode(1);
        QCOMPARE(panel.fieldText(QStringLiteral("op")), QStringLiteral("Relu"));
        QCOMPARE(panel.weightCount(), 0);
        panel.showValue(m->graph.findValue("x"));
        QCOMPARE(panel.fieldText(QStringLiteral("type")), QStringLiteral("f32[1,3,8,8]"));
    }

    void propertiesShowComputeDefinitionAndSchedule()
    {
        const char* program =
            "input A: f32[8, 4];\n"
            "input B: f32[4, 6];\n"
            "C[i, j] = sum(k) A[i, k] * B[k, j];\n"
            "output C;\n"
            "schedule C { target cuda; block = spatial(8, 6); tile k by 2; }\n";
        auto parsed = frontend::dsl::parseProgram(program, "mm.tsr");
        QVERIFY(parsed.ok());
        views::PropertiesPanel panel;
        panel.resize(400, 800);
        panel.setModel(std::make_shared<const ir::Model>(std::move(parsed.value())));
        panel.showNode(0);
        QCOMPARE(panel.fieldText(QStringLiteral("op")), QStringLiteral("Compute"));
        QCOMPARE(panel.fieldText(QStringLiteral("category")), QStringLiteral("compute definition"));
        QCOMPARE(panel.fieldText(QStringLiteral("definition")),
                 QStringLiteral("C[i: 8, j: 6] = sum(k: 4) A[i, k] * B[k, j]"));
        QCOMPARE(panel.fieldText(QStringLiteral("schedule")),
                 QStringLiteral("target cuda\nblock = spatial(8, 6)\ntile k by 2"));
        // 2 FLOPs (multiply-add) per reduction step: 8 * 6 * 4 * 2.
        QVERIFY2(panel.fieldText(QStringLiteral("flops")).contains(QStringLiteral("(384)")),
                 qPrintable(panel.fieldText(QStringLiteral("flops"))));
    }

    void largeChainLaysOut()
    {
        // Above kLargeGraphNodes the layout switches to its fast settings.
        views::LayoutRequest req;
        const int n = 1500;
        for (int i = 0; i < n; ++i)
            req.nodes.push_back({i, QSizeF(130, 56), "node" + std::to_string(i)});
        for (int i = 0; i + 1 < n; ++i)
            req.edges.push_back({i, i, i + 1});
        // A few skip connections, as in residual networks.
        for (int i = 0; i + 3 < n; i += 10)
            req.edges.push_back({n + i, i, i + 3});
        const views::LayoutResult r = views::layoutGraph(req);
        QVERIFY2(r.ok, r.error.c_str());
        QVERIFY(r.simplifiedSplines);
        QCOMPARE(static_cast<int>(r.nodes.size()), n);
        qInfo("1500-node chain laid out in %.0f ms", r.milliseconds);
    }

#ifdef TESSERA_HAVE_ONNX_IMPORTER
    void mobileNetSample()
    {
        auto result = frontend::onnx::importModel(TESSERA_SAMPLES "/mobilenet_v2.onnx");
        QVERIFY2(result.ok(), result.diagnostics().empty() ? "import failed"
                                                           : result.diagnostics().items().front().format().c_str());
        const ir::Graph& g = result->graph;
        views::GraphView view;
        view.resize(1200, 900);
        const auto snap = show(view, g);
        QCOMPARE(countOperatorItems(view.scene()), static_cast<int>(g.numNodes()));
        QCOMPARE(view.edgeItemCount(), static_cast<int>(snap->edges.size()));
        QVERIFY(view.findNext(QStringLiteral("Conv")));
        const int sel = view.selectedNodeId();
        QCOMPARE(QString::fromStdString(g.node(sel).opType), QStringLiteral("Conv"));

        views::PropertiesPanel panel;
        panel.setModel(std::make_shared<const ir::Model>(std::move(result.value())));
        panel.showNode(sel);
        QVERIFY(panel.attributesTree()->topLevelItemCount() > 0);
        QVERIFY(panel.weightCount() >= 1);
    }
#endif
};

QTEST_MAIN(ViewsTest)
#include "views_test.moc"
