// The GUI's fusion-plan controller (Qt Test, offscreen): initial plan on the specialised graph,
// fuse -> undo -> redo restoring exact plans, a refused fusion (exact reason, undo stack
// unchanged), split, planner and hardware switches through the worker, the plan file round trip,
// and the main window's wiring (Edit menu, clusters, balloon, runs compile with the plan, the
// "why not one kernel" tooltips of the graph's edges between groups).
#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QSettings>
#include <QDockWidget>
#include <QFile>
#include <QGraphicsScene>
#include <QHelpEvent>
#include <QPainter>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QToolTip>
#include <QSignalSpy>
#include <QTableView>
#include <QStandardPaths>
#include <QTest>
#include <QUndoStack>

#include <algorithm>
#include <cstdio>

#include "views/roofline/roofline_view.h"
#include "views/timing/timing_panel.h"
#include "views/timing/timing_table_model.h"
#include "app/gui/document.h"
#include "app/gui/fusion_controller.h"
#include "app/gui/main_window.h"
#include "app/gui/roofline_controller.h"
#include "app/gui/run_controller.h"
#include "app/gui/plan_session.h"
#include "app/gui/run_results.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "core/pipeline/host_profile.h"
#include "core/schedule/fusion_plan.h"
#include "views/fusion/fusion_plan_panel.h"
#include "views/fusion/fusion_plan_table_model.h"
#include "views/graph/graph_items.h"
#include "views/graph/graph_view.h"

using namespace tessera;
using app::PlanSession;

namespace {

QString sample(const char* name) { return QStringLiteral(TESSERA_SAMPLES "/") + QLatin1String(name); }

std::shared_ptr<const ir::Model> load(const QString& path)
{
    auto m = pipeline::loadModel(path.toStdString());
    if (!m.ok())
        qFatal("cannot load %s", qPrintable(path));
    return std::make_shared<const ir::Model>(std::move(m.value()));
}

bool waitReady(PlanSession& s)
{
    return QTest::qWaitFor([&] { return s.ready() && !s.isBusy(); }, 60000);
}

std::string json(const schedule::FusionPlan& p) { return schedule::planToJson(p); }

std::vector<std::string> groupNames(const schedule::FusionPlan& p)
{
    std::vector<std::string> out;
    for (const auto& g : p.groups)
        out.push_back(g.name);
    return out;
}

const char* const kDw = "dw_conv";
const char* const kRelu = "relu6";
const char* const kPw = "pw_conv";

}  // namespace

class PlanSessionTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void initialPlanIsPlanner();
    void programsFuseStatementsAreTheFirstPlan();
    void fuseUndoRedo();
    void refusedFuse();
    void splitAndRefusals();
    void plannerSwitchChangesGroups();
    void hardwareChange();
    void planFileRoundTrip();
    void mainWindowWiring();
    void programPlanInThePlannerBox();
    void changedPlanClearsRunResults();
    void fusedMembersShareStatus();
    void edgeWhyNotTooltips();
    void plannerAdviceOnUserChain();
    void tableMultiSelectionFuses();
};

void PlanSessionTest::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
    QCoreApplication::setApplicationName(QStringLiteral("TesseraPlanTest"));
}

void PlanSessionTest::init()
{
    // Every test starts without saved plans or remembered choices.
    QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/fusion-plans")).removeRecursively();
    QSettings().clear();
}

void PlanSessionTest::initialPlanIsPlanner()
{
    PlanSession s;
    QCOMPARE(s.planner(), QStringLiteral("none"));
    // Until a target says otherwise, the CPU's hardware (the window sets the target's).
    QCOMPARE(s.hardware().name, std::string("host"));
    QVERIFY(!s.hardwareChosen());
    s.setModel(load(sample("dw_pw_block.onnx")), sample("dw_pw_block.onnx"));
    QVERIFY(!s.ready());
    QVERIFY(waitReady(s));
    QCOMPARE(groupNames(s.plan()), (std::vector<std::string>{kDw, kRelu, kPw}));
    QCOMPARE(s.plan().planner, std::string("none"));
    QVERIFY(s.violations().empty());
    QCOMPARE(s.undoStack()->count(), 0);
    QVERIFY(!s.loadedFromFile());
    // Nothing is saved until the user changes something.
    QVERIFY(!QFile::exists(PlanSession::planFilePath(sample("dw_pw_block.onnx"))));
}

void PlanSessionTest::programsFuseStatementsAreTheFirstPlan()
{
    // samples/dw_pw_block.tsr fuses dw, relu6 and pw (`fuse block1 = [dw, relu6, pw] anchor dw`):
    // its first plan is that group, as `tessera-cli run` compiles it, even after another planner
    // was chosen last time; choosing a planner re-plans.
    QSettings().setValue(QStringLiteral("fusion/planner"), QStringLiteral("hidet"));
    PlanSession s;
    QCOMPARE(s.planner(), QStringLiteral("hidet"));
    const QString path = sample("dw_pw_block.tsr");
    s.setModel(load(path), path);
    QVERIFY(waitReady(s));
    QCOMPARE(groupNames(s.plan()), (std::vector<std::string>{"block1"}));
    QCOMPARE(s.plan().planner, std::string("program"));
    QCOMPARE(s.plan().groups[0].kind, schedule::FusionKind::DwPw);
    QCOMPARE(s.plan().groups[0].ops, (std::vector<std::string>{"dw", "relu6", "pw"}));
    QCOMPARE(s.plan().groups[0].reason, std::string("the program's fuse statement"));
    QVERIFY(s.violations().empty());
    QCOMPARE(s.undoStack()->count(), 0);
    s.choosePlanner(QStringLiteral("none"));
    QVERIFY(waitReady(s));
    QCOMPARE(groupNames(s.plan()), (std::vector<std::string>{"dw", "relu6", "pw"}));
    // ... undoable back to the program's plan.
    s.undoStack()->undo();
    QCOMPARE(groupNames(s.plan()), (std::vector<std::string>{"block1"}));
    // A program without fuse statements gets the planner's plan.
    PlanSession t;
    const QString plain = sample("softmax.tsr");
    t.setModel(load(plain), plain);
    QVERIFY(waitReady(t));
    QCOMPARE(t.plan().planner, std::string("hidet"));
    // A planner asked for before the first plan is ready (`tessera --planner none FILE`) wins.
    PlanSession u;
    u.setModel(load(path), path);
    u.choosePlanner(QStringLiteral("none"));
    QVERIFY(waitReady(u));
    QCOMPARE(groupNames(u.plan()), (std::vector<std::string>{"dw", "relu6", "pw"}));
}

void PlanSessionTest::fuseUndoRedo()
{
    PlanSession s;
    s.setTargetHardware(PlanSession::defaultHardwareFor(true));  // the tile below is the H200's
    s.setModel(load(sample("dw_pw_block.onnx")), sample("dw_pw_block.onnx"));
    QVERIFY(waitReady(s));
    const std::string before = json(s.plan());
    QSignalSpy changed(&s, &PlanSession::planChanged);
    QVERIFY(s.fuse({QString::fromLatin1(kPw), QString::fromLatin1(kDw), QString::fromLatin1(kRelu)}));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(s.plan().groups.size(), std::size_t(1));
    const schedule::FusionGroup& g = s.plan().groups[0];
    QCOMPARE(g.name, std::string("u1"));
    QCOMPARE(g.kind, schedule::FusionKind::DwPw);
    QCOMPARE(g.ops, (std::vector<std::string>{kDw, kRelu, kPw}));
    QCOMPARE(g.anchor, std::string(kDw));
    QVERIFY(g.epilogue.empty());
    QVERIFY(!g.tile.empty());  // FusePlanner's best tile on the h200
    QCOMPARE(s.plan().planner, std::string("user"));
    QCOMPARE(s.undoStack()->count(), 1);
    QCOMPARE(s.undoStack()->undoText(), QStringLiteral("Fuse u1"));
    const std::string after = json(s.plan());

    s.undoStack()->undo();
    QCOMPARE(json(s.plan()), before);
    QCOMPARE(s.planner(), QStringLiteral("none"));
    s.undoStack()->redo();
    QCOMPARE(json(s.plan()), after);
    s.undoStack()->undo();
    QCOMPARE(json(s.plan()), before);
    QCOMPARE(changed.count(), 4);
}

void PlanSessionTest::refusedFuse()
{
    // MobileNetV2's block 3 adds its input back (residual): the input of block 3's first conv has
    // two uses, so fusing the producing conv with it breaks Hidet's rules.
    const QString path = sample("mobilenet_v2.onnx");
    PlanSession s;
    s.setModel(load(path), path);
    QVERIFY(waitReady(s));
    const std::string before = json(s.plan());
    QSignalSpy refused(&s, &PlanSession::editRefused);
    const QString producer = QStringLiteral("/features/features.2/conv/conv.2/Conv");
    const QString consumer = QStringLiteral("/features/features.3/conv/conv.0/conv.0.0/Conv");
    QVERIFY(!s.fuse({producer, consumer}));
    QCOMPARE(refused.count(), 1);
    if (qEnvironmentVariableIsSet("TESSERA_DUMP"))
        std::printf("refused: node=%s message=%s\n", qPrintable(refused.at(0).at(0).toString()),
                    qPrintable(refused.at(0).at(1).toString()));
    QCOMPARE(refused.at(0).at(1).toString(), QStringLiteral("/features/features.2/conv/conv.2/Conv's output "
                                                           "'/features/features.2/conv/conv.2/Conv_output_0' has 2 uses: the "
                                                           "chain's intermediate must stay inside the group"));
    QCOMPARE(refused.at(0).at(0).toString(), producer);
    QCOMPARE(s.lastRefusal(), refused.at(0).at(1).toString());
    QCOMPARE(json(s.plan()), before);
    QCOMPARE(s.undoStack()->count(), 0);
    QVERIFY(!s.diagnostics().empty());
    QCOMPARE(QString::fromStdString(s.diagnostics().items().back().message),
             QStringLiteral("fusion refused: ") + refused.at(0).at(1).toString());
}

void PlanSessionTest::splitAndRefusals()
{
    PlanSession s;
    s.setModel(load(sample("dw_pw_block.onnx")), sample("dw_pw_block.onnx"));
    QVERIFY(waitReady(s));
    QSignalSpy refused(&s, &PlanSession::editRefused);
    QVERIFY(!s.fuse({QString::fromLatin1(kDw)}));
    QCOMPARE(refused.at(0).at(1).toString(), QStringLiteral("select two or more operators to fuse (Ctrl+click or Shift+drag)"));
    QVERIFY(!s.split(QString::fromLatin1(kDw)));
    QCOMPARE(refused.at(1).at(1).toString(), QStringLiteral("dw_conv is a single op: nothing to split"));
    QVERIFY(!s.split(QStringLiteral("nope")));
    QCOMPARE(refused.at(2).at(1).toString(), QStringLiteral("there is no fusion group 'nope'"));
    QCOMPARE(s.undoStack()->count(), 0);

    QVERIFY(s.fuse({QString::fromLatin1(kDw), QString::fromLatin1(kRelu)}));
    QCOMPARE(s.plan().groups[0].kind, schedule::FusionKind::PrologueEpilogue);
    QCOMPARE(s.plan().groups[0].epilogue, std::vector<std::string>{kRelu});
    QVERIFY(!s.fuse({QString::fromLatin1(kDw), QString::fromLatin1(kRelu)}));
    QCOMPARE(refused.at(3).at(1).toString(), QStringLiteral("dw_conv, relu6 are already one group (u1)"));
    QVERIFY(s.split(QStringLiteral("u1")));
    QCOMPARE(groupNames(s.plan()), (std::vector<std::string>{kDw, kRelu, kPw}));
    QCOMPARE(s.undoStack()->count(), 2);
    QCOMPARE(s.undoStack()->undoText(), QStringLiteral("Split u1"));
}

void PlanSessionTest::plannerSwitchChangesGroups()
{
    const QString path = sample("mobilenet_v2.onnx");
    PlanSession s;
    // FusePlanner's 51 groups are those it makes for an H200 (a CUDA target's hardware); the
    // Flatten after GlobalAveragePool is the pool's epilogue (an index map).
    s.setTargetHardware(PlanSession::defaultHardwareFor(true));
    s.setModel(load(path), path);
    QVERIFY(waitReady(s));
    const std::size_t none = s.plan().groups.size();
    QCOMPARE(s.plan().fusedGroupCount(), 0);
    s.choosePlanner(QStringLiteral("fuseplanner"));
    QVERIFY(s.isBusy());
    QVERIFY(QTest::qWaitFor([&] { return !s.isBusy(); }, 60000));
    QCOMPARE(s.planner(), QStringLiteral("fuseplanner"));
    QCOMPARE(s.plan().groups.size(), std::size_t(51));
    QCOMPARE(s.plan().fusedGroupCount(), 44);
    QVERIFY(none > 51);
    QCOMPARE(s.undoStack()->count(), 1);
    QCOMPARE(s.undoStack()->undoText(), QStringLiteral("Planner: fuseplanner"));
    s.undoStack()->undo();
    QCOMPARE(s.plan().groups.size(), none);
    QCOMPARE(s.planner(), QStringLiteral("none"));

    // An edit made while the planner runs wins: the planner's late result is dropped.
    s.choosePlanner(QStringLiteral("hidet"));
    QVERIFY(s.isBusy());
    QVERIFY(s.fuse({QStringLiteral("/features/features.0/features.0.0/Conv"), QStringLiteral("/features/features.0/features.0.2/Clip")}));
    QVERIFY(!s.isBusy());
    QTest::qWait(300);
    QCOMPARE(s.planner(), QStringLiteral("none"));
    QCOMPARE(s.plan().fusedGroupCount(), 1);
}

void PlanSessionTest::hardwareChange()
{
    PlanSession s;
    s.setModel(load(sample("dw_pw_block.onnx")), sample("dw_pw_block.onnx"));
    QVERIFY(waitReady(s));
    // With planner none the hardware change is pushed at once.
    target::GpuProfile a100 = target::findGpuProfile("a100").value();
    s.chooseHardware(a100);
    QCOMPARE(s.hardware().name, std::string("a100"));
    QCOMPARE(s.undoStack()->count(), 1);
    // A what-if copy is remembered among the profiles.
    target::GpuProfile custom = a100;
    custom.name = "a100-custom";
    custom.sms = 20;
    s.chooseHardware(custom);
    QCOMPARE(s.profiles().back().name, std::string("a100-custom"));
    QCOMPARE(s.profiles().back().sms, 20);
    QCOMPARE(PlanSession().profiles().back().name, std::string("a100-custom"));  // via QSettings
    s.undoStack()->undo();
    QCOMPARE(s.hardware().name, std::string("a100"));
    QVERIFY(s.hardwareChosen());
    s.undoStack()->undo();
    QCOMPARE(s.hardware().name, std::string("host"));  // the target's again
    QVERIFY(!s.hardwareChosen());
    QVERIFY(!PlanSession().hardwareChosen());  // nothing chosen is remembered
    // This CPU ("host", the CLI's default for --target cpu) is offered once and is not a custom profile.
    const auto hosts = [&] {
        const auto all = s.profiles();
        return std::count_if(all.begin(), all.end(), [](const target::GpuProfile& p) { return p.name == "host"; });
    };
    QCOMPARE(hosts(), 1);
    s.chooseHardware(pipeline::hostProfile());
    QCOMPARE(s.hardware().name, std::string("host"));
    QCOMPARE(s.hardware().sms, pipeline::hostProfile().sms);
    QCOMPARE(hosts(), 1);
    QVERIFY(s.hardwareChosen());
    // A chosen profile is remembered via QSettings, and a target change does not replace it.
    PlanSession next;
    QCOMPARE(next.hardware().name, std::string("host"));
    QVERIFY(next.hardwareChosen());
    next.setTargetHardware(PlanSession::defaultHardwareFor(true));
    QCOMPARE(next.hardware().name, std::string("host"));
}

void PlanSessionTest::planFileRoundTrip()
{
    const QString path = sample("dw_pw_block.onnx");
    std::string saved;
    {
        PlanSession s;
        s.setModel(load(path), path);
        QVERIFY(waitReady(s));
        QVERIFY(s.fuse({QString::fromLatin1(kDw), QString::fromLatin1(kRelu), QString::fromLatin1(kPw)}));
        saved = json(s.plan());
        QVERIFY(QFile::exists(PlanSession::planFilePath(path)));
    }
    PlanSession again;
    again.setModel(load(path), path);
    QVERIFY(waitReady(again));
    QVERIFY(again.loadedFromFile());
    QCOMPARE(json(again.plan()), saved);
    QCOMPARE(again.planner(), QStringLiteral("none"));
    QCOMPARE(again.undoStack()->count(), 0);
    QVERIFY(!again.hardwareChosen());  // the target's then, the target's now
    QCOMPARE(again.hardware().name, std::string("host"));

    // A file that no longer fits the model (another model's plan) is dropped with a warning.
    QFile::remove(PlanSession::planFilePath(sample("mobilenet_v2.onnx")));
    QVERIFY(QFile::copy(PlanSession::planFilePath(path), PlanSession::planFilePath(sample("mobilenet_v2.onnx"))));
    PlanSession other;
    QSignalSpy warned(&other, &PlanSession::warning);
    other.setModel(load(sample("mobilenet_v2.onnx")), sample("mobilenet_v2.onnx"));
    QVERIFY(waitReady(other));
    QVERIFY(!other.loadedFromFile());
    QCOMPARE(warned.count(), 1);
    QVERIFY(warned.at(0).at(0).toString().startsWith(QStringLiteral("the saved fusion plan no longer fits the model")));

    // A profile the user chose comes back from the file as chosen (not from QSettings here).
    {
        PlanSession s;
        s.setModel(load(path), path);
        QVERIFY(waitReady(s));
        s.chooseHardware(target::findGpuProfile("a100").value());
        QVERIFY(s.hardwareChosen());
    }
    QSettings().clear();
    PlanSession chosen;
    QVERIFY(!chosen.hardwareChosen());
    chosen.setModel(load(path), path);
    QVERIFY(waitReady(chosen));
    QVERIFY(chosen.loadedFromFile());
    QCOMPARE(chosen.hardware().name, std::string("a100"));
    QVERIFY(chosen.hardwareChosen());
}

void PlanSessionTest::mainWindowWiring()
{
    app::MainWindow w;
    w.setErrorReporter([](const QString&, const QStringList&) {});
    w.resize(1400, 900);
    w.show();
    QSignalSpy shown(&w, &app::MainWindow::modelShown);
    w.openFile(sample("dw_pw_block.onnx"));
    QVERIFY(shown.wait(60000));
    PlanSession* s = w.document()->plans();
    QVERIFY(waitReady(*s));
    QCOMPARE(w.fusion()->panel()->tableModel()->rowCount(), 3);
    // Ctrl+G on the selected nodes: one cluster, the dock shown, Edit > Undo enabled.
    views::GraphView* view = w.graphView();
    view->selectNodes({view->operatorIdByName(kDw), view->operatorIdByName(kRelu)}, view->operatorIdByName(kDw));
    view->fuseAction()->trigger();
    QCOMPARE(s->plan().fusedGroupCount(), 1);
    QCOMPARE(static_cast<int>(view->clusterItems().size()), 1);
    QVERIFY(w.fusion()->dock()->isVisible());
    QVERIFY(w.fusion()->undoAction()->isEnabled());
    QCOMPARE(w.fusion()->panel()->selectedGroup(), QStringLiteral("u1"));
    w.fusion()->undoAction()->trigger();
    QVERIFY(view->clusterItems().empty());
    QCOMPARE(w.fusion()->panel()->tableModel()->rowCount(), 3);
    // A refusal: the balloon names the reason, the undo stack is untouched.
    view->selectNode(view->operatorIdByName(kDw), false);
    view->fuseAction()->trigger();
    QCOMPARE(view->nodeMessage(), QStringLiteral("select two or more operators to fuse (Ctrl+click or Shift+drag)"));
    QCOMPARE(s->undoStack()->count(), 1);
    // A row click selects the group's nodes in the graph.
    QVERIFY(!w.fusion()->undoAction()->isEnabled());  // the fuse is undone already
    w.fusion()->redoAction()->trigger();
    QCOMPARE(s->plan().groups[0].name, std::string("u1"));
    w.fusion()->panel()->table()->clearSelection();
    w.fusion()->panel()->table()->selectRow(0);
    QCOMPARE(view->selectedOperatorNames(), (QStringList{QString::fromLatin1(kDw), QString::fromLatin1(kRelu)}));
    QCOMPARE(view->selectedNodeId(), view->operatorIdByName(kDw));
}

void PlanSessionTest::programPlanInThePlannerBox()
{
    // A program's own fuse statements: the Planner box says "program" until a planner is chosen.
    app::MainWindow w;
    w.setErrorReporter([](const QString&, const QStringList&) {});
    w.resize(1400, 900);
    w.show();
    QSignalSpy shown(&w, &app::MainWindow::modelShown);
    w.openFile(sample("dw_pw_block.tsr"));
    QVERIFY(shown.wait(60000));
    PlanSession* s = w.document()->plans();
    QVERIFY(waitReady(*s));
    QCOMPARE(s->plan().planner, std::string("program"));
    QCOMPARE(w.fusion()->panel()->plannerCombo()->currentIndex(), -1);
    QCOMPARE(w.fusion()->panel()->plannerCombo()->placeholderText(), QStringLiteral("program"));
    QCOMPARE(w.fusion()->panel()->tableModel()->rowCount(), 1);
    s->choosePlanner(QStringLiteral("none"));
    QVERIFY(QTest::qWaitFor([&] { return s->plan().planner == "none" && !s->isBusy(); }, 60000));
    QCOMPARE(w.fusion()->panel()->plannerCombo()->currentData().toString(), QStringLiteral("none"));
    QCOMPARE(w.fusion()->panel()->tableModel()->rowCount(), 3);
}

void PlanSessionTest::changedPlanClearsRunResults()
{
    if (qEnvironmentVariableIsEmpty("TESSERA_RUNNER")) QSKIP("TESSERA_RUNNER not set (CMake sets it)");
    app::MainWindow w;
    w.setErrorReporter([](const QString&, const QStringList&) {});
    w.resize(1400, 900);
    w.show();
    QSignalSpy shown(&w, &app::MainWindow::modelShown);
    w.openFile(sample("dw_pw_block.onnx"));
    QVERIFY(shown.wait(60000));
    PlanSession* s = w.document()->plans();
    QVERIFY(waitReady(*s));
    if (s->planner() != QStringLiteral("none")) {  // the last planner chosen is remembered
        s->choosePlanner(QStringLiteral("none"));
        QVERIFY(waitReady(*s));
    }
    QSignalSpy finished(&w, &app::MainWindow::runFinished);
    w.run()->runAction()->trigger();
    QVERIFY(finished.wait(240000));
    QVERIFY(finished.at(0).at(0).toBool());
    QCOMPARE(w.run()->timingPanel()->model()->rowCount(), static_cast<int>(s->plan().groups.size()));
    QCOMPARE(s->plan().fusedGroupCount(), 0);
    // Fuse the dw conv and its ReLU6: the run's three kernels no longer exist.
    views::GraphView* view = w.graphView();
    view->selectNodes({view->operatorIdByName(kDw), view->operatorIdByName(kRelu)}, view->operatorIdByName(kDw));
    view->fuseAction()->trigger();
    QCOMPARE(s->plan().fusedGroupCount(), 1);
    QCOMPARE(w.run()->timingPanel()->model()->rowCount(), 0);
    QVERIFY(w.run()->timingPanel()->summaryText().contains(QStringLiteral("fusion plan changed")));
    QVERIFY(w.roofline()->rooflineView()->kernelNames().isEmpty());
    // Undo brings back the plan that ran, but its results stay cleared until the next run.
    w.fusion()->undoAction()->trigger();
    QCOMPARE(s->plan().fusedGroupCount(), 0);
    QCOMPARE(w.run()->timingPanel()->model()->rowCount(), 0);
}

void PlanSessionTest::fusedMembersShareStatus()
{
    // The plan the session made, compiled as a run compiles it: the ReLU6 fused into the
    // depthwise conv's kernel shows that kernel's status in the graph.
    const auto model = load(sample("dw_pw_block.onnx"));
    PlanSession s;
    s.setModel(model, sample("dw_pw_block.onnx"));
    QVERIFY(waitReady(s));
    QVERIFY(s.fuse({QString::fromLatin1(kDw), QString::fromLatin1(kRelu)}));
    pipeline::CompileOptions options;
    options.plan = s.plan();
    auto cm = pipeline::compileModel(*model, pipeline::defaultInputs(model->graph), options);
    QVERIFY(cm.ok());
    QCOMPARE(cm->kernelCount(), 2);
    const views::KernelStatusMap st = app::compileStatuses(cm.value(), model->graph);
    QCOMPARE(st.at(kRelu).status, views::KernelStatus::Compiled);
    QCOMPARE(st.at(kRelu).detail, QStringLiteral("fused into group u1 (kernel of dw_conv)"));
    QCOMPARE(st.at(kDw).status, views::KernelStatus::Compiled);
}

// Issue 6's "why not" at graph edges: an edge between two groups has a tooltip with the
// refusal fusing them would give, or that they can be fused (with the real Fuse shortcut).
void PlanSessionTest::edgeWhyNotTooltips()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("edges.tsr"));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        // c has two uses (Relu_1 and Sigmoid_2); Sigmoid_2 -> Neg_3 may be fused.
        f.write("input x: f32[1, 4, 6, 6];\n"
                "param w: f32[5, 4, 3, 3] = random(seed=1);\n"
                "c = Conv(x, w, pads=[1, 1, 1, 1]) as \"Conv_0\";\n"
                "y = Relu(c) as \"Relu_1\";\n"
                "s = Sigmoid(c) as \"Sigmoid_2\";\n"
                "z = Neg(s) as \"Neg_3\";\n"
                "output y;\n"
                "output z;\n");
    }
    app::MainWindow w;
    w.setErrorReporter([](const QString&, const QStringList&) {});
    w.resize(1200, 800);
    w.show();
    QSignalSpy shown(&w, &app::MainWindow::modelShown);
    w.openFile(path);
    QVERIFY(shown.wait(60000));
    PlanSession* s = w.document()->plans();
    QVERIFY(waitReady(*s));
    QCOMPARE(s->planner(), QStringLiteral("none"));
    views::GraphView* view = w.graphView();
    QCOMPARE(view->fuseAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_G));
    QCOMPARE(view->edgeFusionNote(QStringLiteral("Conv_0"), QStringLiteral("Relu_1")),
             QStringLiteral("Conv_0 \u2192 Relu_1: not one kernel\nRelu_1's input 'c' has 2 uses"));
    QCOMPARE(view->edgeFusionNote(QStringLiteral("Conv_0"), QStringLiteral("Sigmoid_2")),
             QStringLiteral("Conv_0 \u2192 Sigmoid_2: not one kernel\nSigmoid_2's input 'c' has 2 uses"));
    QCOMPARE(view->edgeFusionNote(QStringLiteral("Sigmoid_2"), QStringLiteral("Neg_3")),
             QStringLiteral("Sigmoid_2 \u2192 Neg_3: not one kernel\nfusible: select both nodes and Fuse (Ctrl+G)"));
    const auto reasons = s->crossingEdgeReasons();
    QCOMPARE(reasons.size(), std::size_t(3));

    // Hovering the edge shows its note (the edge's hit shape is its stroke, not its bounding box).
    auto hover = [&](const QString& from, const QString& to) -> QString {
        const int a = view->operatorIdByName(from.toStdString()), b = view->operatorIdByName(to.toStdString());
        for (QGraphicsItem* item : view->scene()->items()) {
            if (item->type() != views::EdgeItem::Type)
                continue;
            auto* e = static_cast<views::EdgeItem*>(item);
            if (e->fromId() != a || e->toId() != b)
                continue;
            view->centerOn(e);
            const QPoint at = view->mapFromScene(e->mapToScene(e->path().pointAtPercent(0.5)));
            QHelpEvent help(QEvent::ToolTip, at, view->viewport()->mapToGlobal(at));
            QCoreApplication::sendEvent(view->viewport(), &help);
            return QToolTip::isVisible() ? QToolTip::text() : QString();
        }
        return QStringLiteral("no such edge");
    };
    QCOMPARE(hover(QStringLiteral("Sigmoid_2"), QStringLiteral("Neg_3")),
             QStringLiteral("Sigmoid_2 \u2192 Neg_3: not one kernel\nfusible: select both nodes and Fuse (Ctrl+G)"));
    QCOMPARE(hover(QStringLiteral("Conv_0"), QStringLiteral("Relu_1")),
             QStringLiteral("Conv_0 \u2192 Relu_1: not one kernel\nRelu_1's input 'c' has 2 uses"));
    if (const QString png = qEnvironmentVariable("TESSERA_EDGE_TOOLTIP_PNG"); !png.isEmpty()) {
        // For looking at it: the view with the tooltip drawn where it pops up.
        QPixmap shot = view->grab();
        for (QWidget* top : QApplication::topLevelWidgets()) {
            if (top->inherits("QTipLabel") && top->isVisible()) {
                QPainter p(&shot);
                const QPoint at = view->mapFromGlobal(top->pos());
                p.drawPixmap(QPoint(std::clamp(at.x(), 0, std::max(0, shot.width() - top->width())), at.y()), top->grab());
            }
        }
        QVERIFY(shot.save(png));
    }
    QToolTip::hideText();

    // Fusing Sigmoid_2 and Neg_3: their edge is inside one kernel (no note); the edge into the
    // group names it.
    view->selectNodes({view->operatorIdByName("Sigmoid_2"), view->operatorIdByName("Neg_3")},
                      view->operatorIdByName("Sigmoid_2"));
    view->fuseAction()->trigger();
    QCOMPARE(s->plan().fusedGroupCount(), 1);
    QCOMPARE(view->edgeFusionNote(QStringLiteral("Sigmoid_2"), QStringLiteral("Neg_3")), QString());
    QCOMPARE(view->edgeFusionNote(QStringLiteral("Conv_0"), QStringLiteral("Sigmoid_2")),
             QStringLiteral("Conv_0 \u2192 Sigmoid_2 (u1): not one kernel\nSigmoid_2's input 'c' has 2 uses"));
}

void PlanSessionTest::plannerAdviceOnUserChain()
{
    // dw_pw_block on the h200: FusePlanner does not fuse the pair (fused traffic is not below
    // separate). Fused by hand the chain is legal, and the table says FusePlanner would not.
    PlanSession s;
    s.setTargetHardware(PlanSession::defaultHardwareFor(true));
    s.setModel(load(sample("dw_pw_block.onnx")), sample("dw_pw_block.onnx"));
    QVERIFY(waitReady(s));
    QVERIFY(s.plannerAdvice().empty());  // no chain
    QVERIFY(s.fuse({QString::fromLatin1(kDw), QString::fromLatin1(kRelu), QString::fromLatin1(kPw)}));
    QCOMPARE(s.plan().groups.at(0).kind, schedule::FusionKind::DwPw);
    QVERIFY(s.violations().empty());
    // FusePlanner's words ("fused traffic 1.97 MB is not below separate 1.93 MB"; the unit is the
    // core's to choose).
    const std::map<std::string, std::string> advice = s.plannerAdvice();
    QCOMPARE(advice.size(), std::size_t(1));
    QCOMPARE(advice.begin()->first, std::string("u1"));
    const std::string why = advice.begin()->second;
    QVERIFY2(QRegularExpression(QStringLiteral("^fused traffic 1\\.\\d\\d Mi?B is not below separate 1\\.\\d\\d Mi?B$"))
                 .match(QString::fromStdString(why))
                 .hasMatch(),
             why.c_str());

    views::FusionPlanTableModel model;
    model.setSnapshot(views::makeFusionPlanSnapshot(s.plan(), s.violations(), s.plannerAdvice()));
    const QModelIndex status = model.index(0, views::FusionPlanTableModel::Status);
    QCOMPARE(status.data().toString(), QStringLiteral("legal; FusePlanner would not fuse: ") + QString::fromStdString(why));
    QCOMPARE(status.data(Qt::ToolTipRole).toString(),
             QStringLiteral("The group follows every fusion rule, but FusePlanner's cost model would not fuse this pair on "
                            "h200: ") + QString::fromStdString(why));
    QCOMPARE(status.data(Qt::ForegroundRole).value<QBrush>().color(), QColor(0xb3, 0x5c, 0x00));

    // Only the dw conv and its ReLU6: not a conv chain, no advice.
    s.undoStack()->undo();
    QVERIFY(s.fuse({QString::fromLatin1(kDw), QString::fromLatin1(kRelu)}));
    QVERIFY(s.plannerAdvice().empty());
    model.setSnapshot(views::makeFusionPlanSnapshot(s.plan(), s.violations(), s.plannerAdvice()));
    QCOMPARE(model.index(0, views::FusionPlanTableModel::Status).data().toString(), QStringLiteral("ok"));

    // On this CPU FusePlanner makes the same chain itself: no advice against it.
    PlanSession host;
    host.setModel(load(sample("dw_pw_block.onnx")), sample("dw_pw_block.onnx"));
    QVERIFY(waitReady(host));
    QCOMPARE(host.hardware().name, std::string("host"));
    QVERIFY(host.fuse({QString::fromLatin1(kDw), QString::fromLatin1(kRelu), QString::fromLatin1(kPw)}));
    QCOMPARE(host.plan().groups.at(0).kind, schedule::FusionKind::DwPw);
    QVERIFY(host.plannerAdvice().empty());
}

void PlanSessionTest::tableMultiSelectionFuses()
{
    // Ctrl+click and Shift+click in the plan table select several groups (and their nodes in the
    // graph), so Fuse merges them.
    app::MainWindow w;
    w.setErrorReporter([](const QString&, const QStringList&) {});
    w.resize(1400, 900);
    w.show();
    QSignalSpy shown(&w, &app::MainWindow::modelShown);
    w.openFile(sample("dw_pw_block.onnx"));
    QVERIFY(shown.wait(60000));
    PlanSession* s = w.document()->plans();
    QVERIFY(waitReady(*s));
    QCOMPARE(s->planner(), QStringLiteral("none"));
    views::FusionPlanPanel* panel = w.fusion()->panel();
    QTableView* table = panel->table();
    QCOMPARE(table->selectionMode(), QAbstractItemView::ExtendedSelection);
    QVERIFY(QTest::qWaitForWindowExposed(table->window()));
    auto click = [&](int row, Qt::KeyboardModifiers mods) {
        const QRect r = table->visualRect(table->model()->index(row, 0));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, mods, r.center());
    };
    views::GraphView* view = w.graphView();
    click(0, Qt::NoModifier);
    QCOMPARE(panel->selectedGroups(), QStringList{QString::fromLatin1(kDw)});
    click(1, Qt::ControlModifier);
    QCOMPARE(panel->selectedGroups(), (QStringList{QString::fromLatin1(kDw), QString::fromLatin1(kRelu)}));
    QCOMPARE(panel->selectedGroup(), QString::fromLatin1(kRelu));  // the row clicked last
    QCOMPARE(view->selectedOperatorNames(), (QStringList{QString::fromLatin1(kDw), QString::fromLatin1(kRelu)}));
    QCOMPARE(view->selectedNodeId(), view->operatorIdByName(kRelu));
    QVERIFY(!panel->splitButton()->isEnabled());
    // Shift+click: the range from the first row.
    click(0, Qt::NoModifier);
    click(2, Qt::ShiftModifier);
    QCOMPARE(panel->selectedGroups(),
             (QStringList{QString::fromLatin1(kDw), QString::fromLatin1(kRelu), QString::fromLatin1(kPw)}));
    QCOMPARE(view->selectedOperatorNames().size(), 3);
    // Ctrl+click takes one out again; Fuse merges the two left.
    click(2, Qt::ControlModifier);
    QCOMPARE(panel->selectedGroups(), (QStringList{QString::fromLatin1(kDw), QString::fromLatin1(kRelu)}));
    QTest::mouseClick(panel->fuseButton(), Qt::LeftButton);
    QCOMPARE(s->plan().groups.size(), std::size_t(2));
    QCOMPARE(s->plan().groups[0].ops, (std::vector<std::string>{kDw, kRelu}));
    QCOMPARE(panel->selectedGroups(), QStringList{QStringLiteral("u1")});
}

QTEST_MAIN(PlanSessionTest)
#include "plan_session_test.moc"
