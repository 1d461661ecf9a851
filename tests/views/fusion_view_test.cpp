// The fusion-plan views (Qt Test, offscreen): the plan table model's exact rows for the
// FusePlanner plan of samples/dw_pw_block.onnx on the h200 profile, QAbstractItemModelTester,
// measured times, the panel's combos and buttons, the what-if hardware dialog, and the graph's
// fusion clusters, multi-selection, Fuse/Split intents and node balloons.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTest>
#include <QToolButton>

#include <cstdio>

#include <QBrush>

#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/prepare.h"
#include "core/schedule/planners.h"
#include "views/fusion/fusion_plan_panel.h"
#include "views/fusion/fusion_plan_snapshot.h"
#include "views/fusion/fusion_plan_table_model.h"
#include "views/fusion/gpu_profile_dialog.h"
#include "views/graph/fusion_clusters.h"
#include "views/graph/graph_items.h"
#include "views/graph/graph_layout.h"
#include "views/graph/graph_snapshot.h"
#include "views/graph/graph_view.h"
#include "views/timing/timing_table_model.h"

using namespace tessera;
using views::FusionPlanTableModel;

namespace {

/// The model as compileModel plans it: specialised with the default inputs.
ir::Model specialised(const char* sample)
{
    auto m = pipeline::loadModel(std::string(TESSERA_SAMPLES) + "/" + sample);
    if (!m.ok())
        qFatal("cannot load %s", sample);
    auto s = pipeline::specialiseModel(m.value(), pipeline::defaultInputs(m->graph));
    if (!s.ok())
        qFatal("cannot specialise %s", sample);
    return s.value();
}

schedule::FusionPlan fusePlannerPlan(const ir::Graph& g)
{
    auto hw = target::findGpuProfile("h200");
    auto p = schedule::makePlan(g, "fuseplanner", hw.value());
    if (!p.ok())
        qFatal("planner failed");
    return p.value();
}

QString cell(const QAbstractItemModel& m, int row, int col, int role = Qt::DisplayRole)
{
    return m.data(m.index(row, col), role).toString();
}

/// One row as "group|kind|ops|anchor|tile|saved|redundant|measured|status".
QString rowText(const QAbstractItemModel& m, int row)
{
    QStringList parts;
    for (int c = 0; c < FusionPlanTableModel::ColumnCount; ++c)
        parts << cell(m, row, c);
    return parts.join(QLatin1Char('|'));
}

}  // namespace

class FusionViewTest : public QObject {
    Q_OBJECT
private slots:
    void tableRowsOfDwPwBlock();
    void modelTesterAndTimes();
    void brokenGroupStatus();
    void panelSignals();
    void longNamesElideAndNumbersStayInView();
    void hardwareDialog();
    void graphClustersAndIntents();
};

void FusionViewTest::tableRowsOfDwPwBlock()
{
    // dw_pw_block on the h200: FusePlanner's rule does not fuse the conv pair (it saves too
    // little), so Hidet's rules give the ReLU6 to the depthwise conv as an epilogue.
    const ir::Model m = specialised("dw_pw_block.onnx");
    const schedule::FusionPlan plan = fusePlannerPlan(m.graph);
    FusionPlanTableModel model;
    model.setSnapshot(views::makeFusionPlanSnapshot(plan, schedule::checkPlan(m.graph, plan)));
    QCOMPARE(model.columnCount(), 9);
    QCOMPARE(model.headerData(FusionPlanTableModel::Saved, Qt::Horizontal).toString(), QStringLiteral("Saved"));
    QCOMPARE(model.rowCount(), 2);
    // 784 KiB = the 1x32x56x56 f32 ReLU6 input, written and read once each less.
    QCOMPARE(rowText(model, 0), QStringLiteral("g0|prologue-epilogue|2|dw_conv||784.0 KiB|0|\u2014|ok"));
    QCOMPARE(rowText(model, 1), QStringLiteral("g1|single|1|pw_conv||0|0|\u2014|ok"));
    views::FusionPlanPanel onlyOthers;
    onlyOthers.setSnapshot(model.snapshot());
    QCOMPARE(onlyOthers.summaryLabel()->text(), QStringLiteral("fuseplanner plan \u00b7 2 kernel(s) \u00b7 1 fused group(s) "
                                                               "\u00b7 saves 784.0 KiB (tensor sizes)"));
    QCOMPARE(cell(model, 0, FusionPlanTableModel::Ops, Qt::ToolTipRole), QStringLiteral("dw_conv (anchor)\nrelu6 (epilogue)"));
    QCOMPARE(model.data(model.index(0, FusionPlanTableModel::Saved), FusionPlanTableModel::kSortRole).toLongLong(), 802816LL);
    QCOMPARE(model.data(model.index(1, 0), FusionPlanTableModel::kMembersRole).toStringList(), QStringList{"pw_conv"});
    QVERIFY(!model.data(model.index(0, 0), Qt::DecorationRole).isNull());  // fused: colour swatch
    QVERIFY(model.data(model.index(1, 0), Qt::DecorationRole).isNull());

    // MobileNetV2 on the h200: 51 kernels (the Flatten is the pool's epilogue); the first rows exactly.
    const ir::Model mb = specialised("mobilenet_v2.onnx");
    const schedule::FusionPlan mp = fusePlannerPlan(mb.graph);
    FusionPlanTableModel mm;
    mm.setSnapshot(views::makeFusionPlanSnapshot(mp, schedule::checkPlan(mb.graph, mp)));
    QCOMPARE(mm.rowCount(), 51);
    QCOMPARE(mm.snapshot().fusedGroupCount(), 44);
    QCOMPARE(rowText(mm, 0), QStringLiteral("g0|prologue-epilogue|2|/features/features.0/features.0.0/Conv||3.06 MiB|0|\u2014|ok"));
    QCOMPARE(rowText(mm, 1), QStringLiteral("g1|dw-pw|3|/features/features.1/conv/conv.0/conv.0.0/Conv|8\u00d78\u00d732 \u00b7 16 "
                                            "filters|1.65 MiB|0|\u2014|ok"));
    QCOMPARE(rowText(mm, 2), QStringLiteral("g2|pw-dw|4|/features/features.2/conv/conv.0/conv.0.0/Conv|4\u00d74\u00d796 \u00b7 96 "
                                            "filters|8.27 MiB|8.95 MFLOP|\u2014|ok"));
    QCOMPARE(rowText(mm, 3), QStringLiteral("g3|single|1|/features/features.2/conv/conv.2/Conv||0|0|\u2014|ok"));
    QCOMPARE(cell(mm, 2, FusionPlanTableModel::Ops, Qt::ToolTipRole),
             QStringLiteral("/features/features.2/conv/conv.0/conv.0.0/Conv (anchor)\n"
                            "/features/features.2/conv/conv.0/conv.0.2/Clip (in chain)\n"
                            "/features/features.2/conv/conv.1/conv.1.0/Conv (in chain)\n"
                            "/features/features.2/conv/conv.1/conv.1.2/Clip (epilogue)"));
}

void FusionViewTest::modelTesterAndTimes()
{
    const ir::Model m = specialised("dw_pw_block.onnx");
    FusionPlanTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSnapshot(views::makeFusionPlanSnapshot(fusePlannerPlan(m.graph)));
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setMeasuredTimes({{QStringLiteral("g1"), 0.00125}, {QStringLiteral("nope"), 1.0}});
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).toModelIndex().column(), int(FusionPlanTableModel::Measured));
    QCOMPARE(cell(model, 0, FusionPlanTableModel::Measured), QStringLiteral("\u2014"));
    QCOMPARE(cell(model, 1, FusionPlanTableModel::Measured), views::TimingTableModel::formatSeconds(0.00125));
    QCOMPARE(model.data(model.index(1, FusionPlanTableModel::Measured), FusionPlanTableModel::kSortRole).toDouble(), 0.00125);
    QCOMPARE(cell(model, 1, FusionPlanTableModel::Measured, Qt::ToolTipRole),
             QStringLiteral("Median time of the group's kernel in the last run: ") + views::TimingTableModel::formatSeconds(0.00125));
    QVERIFY(model.data(model.index(1, FusionPlanTableModel::Measured), Qt::ForegroundRole).isNull());
    QVERIFY(model.timingWarning().isEmpty());

    // Timings under load (the run's "timing" warning): "≈", grey, the reason in the tooltip; the
    // sort value stays the number.
    const QString why = QStringLiteral("other processes used 65% of the CPUs' time while the kernels were timed: the "
                                       "times are likely inflated; rerun on a quiet machine, or with fewer threads "
                                       "than idle cores (Preferences > OpenMP threads)");
    model.setMeasuredTimes({{QStringLiteral("g0"), 0.008}, {QStringLiteral("g1"), 0.007999}}, why);
    QCOMPARE(changed.count(), 2);
    QCOMPARE(model.timingWarning(), why);
    QCOMPARE(cell(model, 0, FusionPlanTableModel::Measured), QStringLiteral("\u2248 ") + views::TimingTableModel::formatSeconds(0.008));
    QCOMPARE(cell(model, 0, FusionPlanTableModel::Measured), QStringLiteral("\u2248 8.000 ms"));
    QCOMPARE(cell(model, 1, FusionPlanTableModel::Measured, Qt::ToolTipRole),
             QStringLiteral("Median time of the group's kernel in the last run: 7.999 ms\nTimings unreliable: ") + why);
    QCOMPARE(model.data(model.index(0, FusionPlanTableModel::Measured), Qt::ForegroundRole).value<QBrush>().color(),
             QColor(0x9a, 0xa0, 0xa6));
    QCOMPARE(model.data(model.index(0, FusionPlanTableModel::Measured), FusionPlanTableModel::kSortRole).toDouble(), 0.008);
    // No times: nothing to distrust.
    model.setMeasuredTimes({}, why);
    QVERIFY(model.timingWarning().isEmpty());
    model.setMeasuredTimes({{QStringLiteral("g1"), 0.00125}, {QStringLiteral("nope"), 1.0}});
    QCOMPARE(cell(model, 1, FusionPlanTableModel::Measured), views::TimingTableModel::formatSeconds(0.00125));

    // A new snapshot keeps the times of groups that stay.
    model.setSnapshot(views::makeFusionPlanSnapshot(fusePlannerPlan(m.graph)));
    QCOMPARE(model.rowAt(1)->measuredSeconds, 0.00125);
    model.clearMeasuredTimes();
    QCOMPARE(model.rowAt(1)->measuredSeconds, -1.0);
    model.setSnapshot({});
    QCOMPARE(model.rowCount(), 0);
}

void FusionViewTest::brokenGroupStatus()
{
    // A hand-made group breaking Hidet's epilogue rule shows the checker's message in red.
    const ir::Model m = specialised("dw_pw_block.onnx");
    schedule::FusionPlan plan = schedule::planNone(m.graph);
    schedule::FusionPlan bad = plan;
    bad.groups.clear();
    schedule::FusionGroup all;
    all.name = "u1";
    all.kind = schedule::FusionKind::PrologueEpilogue;
    all.anchor = "dw_conv";
    for (const auto& gr : plan.groups)
        all.ops.push_back(gr.ops.front());
    for (const auto& op : all.ops)
        if (op != "dw_conv")
            all.epilogue.push_back(op);
    bad.groups.push_back(all);
    const auto violations = schedule::checkPlan(m.graph, bad);
    QVERIFY(!violations.empty());
    FusionPlanTableModel model;
    model.setSnapshot(views::makeFusionPlanSnapshot(bad, violations));
    QCOMPARE(model.rowCount(), 1);
    QString expected;
    for (const auto& v : violations)
        if (v.group == 0)
            expected += (expected.isEmpty() ? "" : "; ") + QString::fromStdString(v.message);
    QCOMPARE(cell(model, 0, FusionPlanTableModel::Status), expected);
    QCOMPARE(model.data(model.index(0, FusionPlanTableModel::Status), Qt::ForegroundRole).value<QBrush>().color(),
             QColor(0xc6, 0x28, 0x28));
    QVERIFY(cell(model, 0, FusionPlanTableModel::Status, Qt::ToolTipRole).startsWith(QString::fromStdString(violations.front().rule)));
}

void FusionViewTest::panelSignals()
{
    const ir::Model m = specialised("mobilenet_v2.onnx");
    views::FusionPlanPanel panel;
    panel.resize(900, 300);
    panel.setProfiles(target::builtinGpuProfiles());
    panel.setState(QStringLiteral("fuseplanner"), QStringLiteral("a100"));
    QCOMPARE(panel.planner(), QStringLiteral("fuseplanner"));
    QCOMPARE(panel.currentProfile()->name, std::string("a100"));
    // Profiles, a separator and "Edit...".
    QCOMPARE(panel.hardwareCombo()->count(), static_cast<int>(target::builtinGpuProfiles().size()) + 2);
    QCOMPARE(panel.hardwareCombo()->itemText(panel.hardwareCombo()->count() - 1), QStringLiteral("Edit..."));
    QVERIFY(!panel.replanButton()->isEnabled());  // no plan yet

    const schedule::FusionPlan fp = fusePlannerPlan(m.graph);
    panel.setSnapshot(views::makeFusionPlanSnapshot(fp));
    // Saved bytes in two parts: conv chains (FusePlanner's access model) and the other groups
    // (tensor sizes), summed here from the plan's groups.
    qint64 chains = 0, others = 0;
    for (const schedule::FusionGroup& g : fp.groups) {
        const bool chain = g.kind == schedule::FusionKind::DwPw || g.kind == schedule::FusionKind::PwDw ||
                           g.kind == schedule::FusionKind::PwPw;
        (chain ? chains : others) += std::max<std::int64_t>(0, g.predictedBytesSaved);
    }
    QVERIFY(chains > 0 && others > 0);
    QCOMPARE(panel.tableModel()->snapshot().convChainBytesSaved(), chains);
    QCOMPARE(panel.summaryLabel()->text(),
             QStringLiteral("fuseplanner plan \u00b7 51 kernel(s) \u00b7 44 fused group(s) \u00b7 saves %1 (conv chains %2 by "
                            "FusePlanner's access model, other groups %3 by tensor sizes)")
                 .arg(views::formatBytes(chains + others), views::formatBytes(chains), views::formatBytes(others)));
    QVERIFY(panel.summaryLabel()->toolTip().contains(QStringLiteral("The two are different models")));
    QVERIFY(panel.replanButton()->isEnabled());
    QVERIFY(!panel.splitButton()->isEnabled());

    QSignalSpy selected(&panel, &views::FusionPlanPanel::groupSelected);
    QSignalSpy split(&panel, &views::FusionPlanPanel::splitClicked);
    QSignalSpy planner(&panel, &views::FusionPlanPanel::plannerChosen);
    QSignalSpy hardware(&panel, &views::FusionPlanPanel::hardwareChosen);
    panel.selectGroup(QStringLiteral("g1"));  // programmatic: no signal
    QCOMPARE(selected.count(), 0);
    QCOMPARE(panel.selectedGroup(), QStringLiteral("g1"));
    QVERIFY(panel.splitButton()->isEnabled());
    QTest::mouseClick(panel.splitButton(), Qt::LeftButton);
    QCOMPARE(split.count(), 1);
    QCOMPARE(split.at(0).at(0).toString(), QStringLiteral("g1"));

    // Several groups (no signal): plan order, the first named current; Split needs one.
    panel.selectGroups({QStringLiteral("g2"), QStringLiteral("g1")});
    QCOMPARE(selected.count(), 0);
    QCOMPARE(panel.selectedGroups(), (QStringList{QStringLiteral("g1"), QStringLiteral("g2")}));
    QCOMPARE(panel.selectedGroup(), QStringLiteral("g2"));
    QVERIFY(!panel.splitButton()->isEnabled());
    panel.selectGroup(QString());
    QVERIFY(panel.selectedGroups().isEmpty());

    // A click on a row: group and members.
    panel.table()->selectRow(2);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.at(0).at(0).toString(), QStringLiteral("g2"));
    QCOMPARE(selected.at(0).at(1).toStringList().size(), 4);

    panel.plannerCombo()->activated(1);
    QCOMPARE(planner.count(), 1);
    QCOMPARE(planner.at(0).at(0).toString(), QStringLiteral("hidet"));
    panel.hardwareCombo()->activated(0);
    QCOMPARE(hardware.count(), 1);
    QCOMPARE(hardware.at(0).at(0).value<target::GpuProfile>().name, std::string("h200"));
    // Unreliable timings: a warning line under the table, in the Timings dock's words.
    QVERIFY(!panel.timingWarningLabel()->isVisibleTo(&panel));
    const QString why = QStringLiteral("other processes used 40% of the CPUs' time while the kernels were timed");
    panel.setMeasuredTimes({{QStringLiteral("g1"), 0.008}}, why);
    QVERIFY(panel.timingWarningLabel()->isVisibleTo(&panel));
    QCOMPARE(panel.timingWarningLabel()->text(), QStringLiteral("\u26a0 Measured times unreliable: ") + why);
    QCOMPARE(cell(*panel.tableModel(), 1, FusionPlanTableModel::Measured), QStringLiteral("\u2248 8.000 ms"));
    panel.setMeasuredTimes({{QStringLiteral("g1"), 0.008}});
    QVERIFY(!panel.timingWarningLabel()->isVisibleTo(&panel));
    QCOMPARE(cell(*panel.tableModel(), 1, FusionPlanTableModel::Measured), QStringLiteral("8.000 ms"));

    panel.setBusy(true, QStringLiteral("Planning (hidet on h200)..."));
    QCOMPARE(panel.summaryLabel()->text(), QStringLiteral("Planning (hidet on h200)..."));
    QVERIFY(!panel.replanButton()->isEnabled());
}

void FusionViewTest::longNamesElideAndNumbersStayInView()
{
    // One kernel per op: the groups are named after their nodes. In a dock about half a 1600 px
    // window wide, the names are elided in the middle and the numbers stay in view.
    const ir::Model m = specialised("mobilenet_v2.onnx");
    views::FusionPlanPanel panel;
    panel.resize(560, 300);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setSnapshot(views::makeFusionPlanSnapshot(schedule::planNone(m.graph)));
    QTableView* table = panel.table();
    QCOMPARE(table->textElideMode(), Qt::ElideMiddle);
    QHeaderView* h = table->horizontalHeader();
    QStringList order;
    for (int v = 0; v < h->count(); ++v)
        order << panel.tableModel()->headerData(h->logicalIndex(v), Qt::Horizontal).toString();
    QCOMPARE(order.join(QLatin1Char(',')), QStringLiteral("Group,Ops,Measured,Saved,Redundant,Kind,Anchor,Tile,Status"));
    const int chars = table->fontMetrics().averageCharWidth();
    QVERIFY(table->columnWidth(FusionPlanTableModel::Group) <= 32 * chars);
    QVERIFY(table->columnWidth(FusionPlanTableModel::Anchor) <= 32 * chars);
    const int redundantRight = table->columnViewportPosition(FusionPlanTableModel::Redundant) +
                               table->columnWidth(FusionPlanTableModel::Redundant);
    QVERIFY2(redundantRight <= table->viewport()->width(),
             qPrintable(QStringLiteral("%1 > %2").arg(redundantRight).arg(table->viewport()->width())));
    // The whole name in the tooltip.
    const QString name = QStringLiteral("/features/features.3/conv/conv.0/conv.0.0/Conv");
    const int row = panel.tableModel()->snapshot().rowOf(name);
    QVERIFY(row >= 0);
    QCOMPARE(cell(*panel.tableModel(), row, FusionPlanTableModel::Group, Qt::ToolTipRole), name + QStringLiteral(": one kernel per op"));
    QCOMPARE(cell(*panel.tableModel(), row, FusionPlanTableModel::Anchor, Qt::ToolTipRole), name);
    // Drawn compactly: the path parts that repeat the next one's start go.
    QCOMPARE(views::compactNodeName(name), QStringLiteral("features.3/conv.0.0/Conv"));
    QCOMPARE(views::compactNodeName(QStringLiteral("/features/features.3/Add")), QStringLiteral("features.3/Add"));
    QCOMPARE(views::compactNodeName(QStringLiteral("/classifier/classifier.1/Gemm")), QStringLiteral("classifier.1/Gemm"));
    QCOMPARE(views::compactNodeName(QStringLiteral("g12")), QStringLiteral("g12"));
    QCOMPARE(views::compactNodeName(QStringLiteral("dw_conv")), QStringLiteral("dw_conv"));
    QCOMPARE(cell(*panel.tableModel(), row, FusionPlanTableModel::Group), name);  // the model's text stays whole
    QVERIFY(table->itemDelegateForColumn(FusionPlanTableModel::Group) != nullptr);
    QCOMPARE(table->itemDelegateForColumn(FusionPlanTableModel::Anchor), table->itemDelegateForColumn(FusionPlanTableModel::Group));
    QCOMPARE(table->itemDelegateForColumn(FusionPlanTableModel::Kind), nullptr);
}

void FusionViewTest::hardwareDialog()
{
    const target::GpuProfile h200 = target::findGpuProfile("h200").value();
    views::GpuProfileDialog dialog(h200);
    QCOMPARE(dialog.nameEdit()->text(), QStringLiteral("h200-custom"));
    QCOMPARE(dialog.smsBox()->value(), h200.sms);
    QCOMPARE(dialog.sharedBox()->value(), static_cast<int>(h200.sharedBytes / 1024));
    dialog.smsBox()->setValue(66);
    dialog.sharedBox()->setValue(48);
    target::GpuProfile p = dialog.profile();
    QCOMPARE(p.name, std::string("h200-custom"));
    QCOMPARE(p.sms, 66);
    QCOMPARE(p.sharedBytes, 48LL * 1024);
    QCOMPARE(p.l1Bytes, h200.l1Bytes);
    QCOMPARE(p.warpSize, h200.warpSize);
    auto* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    QVERIFY(ok->isEnabled());
    // Shared memory above L1 is refused with validateGpuProfile's reason.
    dialog.sharedBox()->setValue(static_cast<int>(h200.l1Bytes / 1024) + 1);
    QVERIFY(!ok->isEnabled());
    QVERIFY(!target::validateGpuProfile(dialog.profile()).empty());
}

void FusionViewTest::graphClustersAndIntents()
{
    const ir::Model m = specialised("mobilenet_v2.onnx");
    views::GraphView view;
    view.resize(900, 700);
    auto snap = std::make_shared<const views::GraphSnapshot>(views::makeGraphSnapshot(m.graph));
    view.setGraph(snap, views::layoutGraph(view.makeLayoutRequest(*snap)));
    const views::FusionPlanSnapshot plan = views::makeFusionPlanSnapshot(fusePlannerPlan(m.graph));
    std::vector<views::FusionCluster> clusters;
    for (const auto& r : plan.rows)
        if (r.fused())
            clusters.push_back({r.group, r.kind, r.ops, r.colour});
    view.setFusionClusters(clusters);
    QCOMPARE(static_cast<int>(view.clusterItems().size()), 44);  // 44 fused groups on the h200
    const views::FusionClusterItem* g2 = view.clusterItems()[2];
    QCOMPARE(g2->name(), QStringLiteral("g2"));
    QCOMPARE(g2->label(), QStringLiteral("g2 \u00b7 pw-dw"));
    QCOMPARE(g2->colour(), views::fusionGroupColour(2));
    QVERIFY(g2->zValue() < 0);  // behind the nodes and edges
    // The region covers every member box.
    for (const QString& member : plan.rows[2].ops) {
        const views::NodeItem* n = view.nodeItem(view.operatorIdByName(member.toStdString()));
        QVERIFY(n != nullptr);
        QVERIFY(g2->shape().contains(n->pos()));
    }
    // A node of another group is outside it.
    const views::NodeItem* other = view.nodeItem(view.operatorIdByName(plan.rows[3].ops.front().toStdString()));
    QVERIFY(!g2->shape().contains(other->pos()));

    // Multi-selection, Fuse and Split intents.
    const int a = view.operatorIdByName(plan.rows[3].ops.front().toStdString());
    const int b = view.operatorIdByName(plan.rows[4].ops.front().toStdString());
    view.selectNodes({a, b}, b);
    QCOMPARE(view.selectedNodeId(), b);
    QCOMPARE(view.selectedOperatorNames(), (QStringList{plan.rows[3].ops.front(), plan.rows[4].ops.front()}));
    QSignalSpy fuse(&view, &views::GraphView::fusionRequested);
    QSignalSpy split(&view, &views::GraphView::splitRequested);
    view.fuseAction()->trigger();
    QCOMPARE(fuse.count(), 1);
    QCOMPARE(fuse.at(0).at(0).toStringList().size(), 2);
    QCOMPARE(view.fuseAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_G));
    QCOMPARE(view.splitAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G));
    view.selectNode(view.operatorIdByName(plan.rows[2].ops.back().toStdString()), false);
    view.splitAction()->trigger();
    QCOMPARE(split.count(), 1);
    QCOMPARE(split.at(0).at(0).toString(), QStringLiteral("g2"));
    // A single's node has no group to split.
    view.selectNode(a, false);
    view.splitAction()->trigger();
    QCOMPARE(split.count(), 1);

    view.showNodeMessage(plan.rows[3].ops.front(), QStringLiteral("it has 2 uses"), 60000);
    QCOMPARE(view.nodeMessage(), QStringLiteral("it has 2 uses"));
    view.setFusionClusters({});
    QVERIFY(view.clusterItems().empty());
}

QTEST_MAIN(FusionViewTest)
#include "fusion_view_test.moc"
