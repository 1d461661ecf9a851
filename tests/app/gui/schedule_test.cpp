// User schedules from the Task Mapping dock (issue 8; Qt Test, offscreen): selecting a kernel shows
// its default mapping, Apply (button / Ctrl+Return) changes the compiled kernel, an invalid mapping
// is refused with the lowering's exact reason (dock, Problems; nothing changes), apply/reset/fuse
// undo and redo in one order on the plan's stack, and projects save and restore the schedules.
#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "app/gui/document.h"
#include "app/gui/fusion_controller.h"
#include "app/gui/main_window.h"
#include "app/gui/program_controller.h"
#include "app/gui/roofline_controller.h"
#include "app/gui/run_controller.h"
#include "app/gui/plan_session.h"
#include "app/gui/project_controller.h"
#include "app/gui/run_session.h"
#include "app/gui/schedule_controller.h"
#include "core/pipeline/compile.h"
#include "core/pipeline/load_model.h"
#include "views/code/code_panel.h"
#include "views/code/code_view.h"
#include "views/graph/graph_view.h"
#include "views/mapping/expression_edit.h"
#include "views/mapping/mapping_apply_bar.h"
#include "views/mapping/mapping_panel.h"

using namespace tessera;
using app::ScheduleController;

namespace {

QString sample(const char* name) { return QStringLiteral(TESSERA_SAMPLES "/") + QLatin1String(name); }

const QString kDw = QStringLiteral("dw_conv");
const QString kRelu = QStringLiteral("relu6");
const QString kGood = QStringLiteral("spatial(1,4,2,2).repeat(1,8,28,28)");
const QString kOther = QStringLiteral("spatial(1,8,1,1).repeat(1,4,56,56)");

/// A window with every dialog replaced, showing dw_pw_block with its plan ready.
struct Window {
    app::MainWindow w;
    Window()
    {
        w.setErrorReporter([](const QString&, const QStringList&) {});
        app::ProjectController* pc = w.projectController();
        pc->setUnsavedPrompt([](const QString&) { return app::ProjectController::UnsavedChoice::Discard; });
        pc->setSavePathPrompt([](const QString&) { return QString(); });
        pc->setRecoverPrompt([](const QString&, const QString&) { return false; });
        pc->setInformer([](const QString&, const QString&) {});
        w.resize(1400, 900);
        w.show();
    }
    bool open(const QString& path)
    {
        QSignalSpy shown(&w, &app::MainWindow::modelShown);
        w.openFile(path);
        if (!QTest::qWaitFor([&] { return shown.count() > 0; }, 60000))
            return false;
        if (!QTest::qWaitFor([&] { return w.document()->plans()->ready() && !w.document()->plans()->isBusy(); }, 60000))
            return false;
        w.mappingDock()->show();
        w.mappingDock()->raise();
        return w.mappingPanel()->isVisible();
    }
    void select(const QString& node)
    {
        views::GraphView* v = w.graphView();
        v->selectNode(v->operatorIdByName(node.toStdString()), false);
    }
    views::MappingApplyBar* bar() const { return w.mappingPanel()->applyBar(); }
    /// Types the mappings into the dock and applies them with the button; waits for the answer.
    bool applyWithButton(const QString& grid, const QString& block = QString())
    {
        w.mappingPanel()->setExpressions(grid, block);
        QSignalSpy done(w.document()->schedules(), &ScheduleController::busyChanged);
        bar()->applyButton()->click();
        return QTest::qWaitFor([&] { return !w.document()->schedules()->isBusy(); }, 30000);
    }
    /// The generated code of a compile with the settings the next run uses.
    std::string compiledCode() const
    {
        auto m = pipeline::loadModel(sample("dw_pw_block.onnx").toStdString());
        if (!m.ok())
            return {};
        auto cm = pipeline::compileModel(*m, pipeline::defaultInputs(m->graph), w.document()->runSettings().compile);
        return cm.ok() ? cm->code.source : std::string("compile failed: ") + cm.diagnostics().formatAll();
    }
    QStringList undoTexts() const
    {
        QStringList out;
        const QUndoStack* u = w.document()->plans()->undoStack();
        for (int i = 0; i < u->count(); ++i)
            out << u->text(i);
        return out;
    }
};

bool has(const std::string& text, const QString& needle) { return text.find(needle.toStdString()) != std::string::npos; }

}  // namespace

class ScheduleTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void selectingAKernelShowsItsDefaultMapping();
    void applyChangesTheCompiledKernel();
    void invalidMappingIsRefusedWithTheReason();
    void fusedMemberIsRefused();
    void undoRedoInterleavesWithFusion();
    void resetIsUndoable();
    void projectKeepsTheSchedules();
    void programScheduleIsShownAndKeptAcrossEdits();
    void runShowsTheAppliedMappingInTheCode();
    void dockPictures();

private:
    QTemporaryDir m_tmp;
};

void ScheduleTest::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tessera_gui_schedule_tests"));
    QVERIFY(m_tmp.isValid());
}

void ScheduleTest::init()
{
    QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/fusion-plans"))
        .removeRecursively();
    QSettings().clear();
    // The default schedules aim for the Preferences' thread count (else this machine's cores):
    // fixed, so the default mappings asserted below are the same everywhere.
    QSettings().setValue(QStringLiteral("settings/threads"), 2);
}

void ScheduleTest::selectingAKernelShowsItsDefaultMapping()
{
    Window a;
    QVERIFY(a.open(sample("dw_pw_block.onnx")));
    QVERIFY(a.bar()->node().isEmpty());
    QVERIFY(!a.bar()->applyButton()->isEnabled());
    a.select(kDw);
    QCOMPARE(a.bar()->node(), kDw);
    QCOMPARE(a.bar()->origin(), views::ScheduleOrigin::Default);
    QCOMPARE(a.bar()->applyButton()->text(), QStringLiteral("Apply to dw_conv"));
    QVERIFY(a.bar()->applyButton()->isEnabled());
    QVERIFY(!a.bar()->resetButton()->isEnabled());
    QCOMPARE(a.bar()->kernelLabel()->text(),
             QStringLiteral("Kernel <b>dw_conv</b> (Conv) \u00b7 compiles with default schedule <code>%1</code>")
                 .arg(a.w.mappingPanel()->gridExpression()));
    // The editors hold the mapping the compile uses by default, exactly as the kernel lists it.
    const std::string code = a.compiledCode();
    const QString line = QStringLiteral("//   mapping: grid = ") + a.w.mappingPanel()->gridExpression() + QLatin1Char('\n');
    QVERIFY2(has(code, line), qPrintable(line));
    QVERIFY(a.w.mappingPanel()->blockExpression().isEmpty());
    // With the dock hidden the editors are filled when it is shown again (not on every click).
    a.w.mappingDock()->hide();
    a.select(kRelu);
    QCOMPARE(a.bar()->node(), kRelu);
    QVERIFY(a.w.mappingPanel()->gridExpression() != kOther);
    a.w.mappingDock()->show();
    QCOMPARE(a.w.mappingPanel()->gridExpression(), kOther);  // relu6's default
    // ... unless something else put expressions there meanwhile (View > Task Mapping on one).
    a.w.mappingDock()->hide();
    a.select(kDw);
    a.w.showMapping(QStringLiteral("spatial(2,5).repeat(3,4)"));
    QCOMPARE(a.w.mappingPanel()->gridExpression(), QStringLiteral("spatial(2,5).repeat(3,4)"));
    // An unparsable edit disables Apply.
    a.w.mappingPanel()->gridEdit()->setText(QStringLiteral("spatial(1,"));
    QVERIFY(!a.bar()->applyButton()->isEnabled());
}

void ScheduleTest::applyChangesTheCompiledKernel()
{
    Window a;
    QVERIFY(a.open(sample("dw_pw_block.onnx")));
    a.select(kDw);
    const std::string before = a.compiledCode();
    QVERIFY(!has(before, kGood));
    QSignalSpy applied(a.w.document()->schedules(), &ScheduleController::applied);
    QSignalSpy changed(a.w.document()->schedules(), &ScheduleController::schedulesChanged);
    QVERIFY(a.applyWithButton(kGood));
    QCOMPARE(applied.count(), 1);
    QCOMPARE(applied.at(0).at(0).toString(), kDw);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(a.undoTexts(), QStringList{QStringLiteral("Set mapping of dw_conv: ") + kGood});
    QVERIFY(a.w.fusion()->undoAction()->isEnabled());
    QCOMPARE(a.bar()->origin(), views::ScheduleOrigin::User);
    QCOMPARE(a.bar()->kernelLabel()->text(),
             QStringLiteral("Kernel <b>dw_conv</b> (Conv) \u00b7 compiles with your mapping <code>%1</code>").arg(kGood));
    QVERIFY(a.bar()->resetButton()->isEnabled());
    QVERIFY(!a.bar()->statusIsError());
    QCOMPARE(a.bar()->statusText(),
             QStringLiteral("Applied: dw_conv compiles with %1 from the next run on (Ctrl+Z undoes it)").arg(kGood));
    const auto user = a.w.document()->schedules()->userMapping(kDw);
    QVERIFY(user.has_value());
    QCOMPARE(user->grid, kGood);
    // The next run compiles with it: the kernel's mapping line and loops change, nothing else's.
    const app::RunSettings settings = a.w.document()->runSettings();
    QCOMPARE(settings.compile.schedules.size(), std::size_t(1));
    QCOMPARE(settings.compile.schedules[0].subject, std::string("dw_conv"));
    const std::string after = a.compiledCode();
    QVERIFY2(has(after, QStringLiteral("//   mapping: grid = ") + kGood), after.c_str());
    QVERIFY(has(after, QStringLiteral("for (int64_t w = 0; w < 16; ++w) {  // grid = spatial(1,4,2,2)\n")));
    QVERIFY(has(after, QStringLiteral("//   mapping: grid = ") + kOther));  // relu6 keeps its default

    // Applying the same mapping again changes nothing.
    QVERIFY(!a.w.document()->schedules()->apply(kDw, kGood, QString()));
    QCOMPARE(a.w.document()->plans()->undoStack()->count(), 1);

    // Ctrl+Return in the expression editor applies too.
    a.w.mappingPanel()->setExpressions(kOther);
    a.w.mappingDock()->show();
    a.w.activateWindow();
    a.w.mappingPanel()->gridEdit()->setFocus();
    QTest::keyClick(a.w.mappingPanel()->gridEdit(), Qt::Key_Return, Qt::ControlModifier);
    QVERIFY(QTest::qWaitFor([&] { return a.w.document()->plans()->undoStack()->count() == 2; }, 30000));
    QCOMPARE(a.undoTexts().last(), QStringLiteral("Set mapping of dw_conv: ") + kOther);
    QCOMPARE(a.w.document()->schedules()->userMapping(kDw)->grid, kOther);
}

void ScheduleTest::invalidMappingIsRefusedWithTheReason()
{
    Window a;
    QVERIFY(a.open(sample("dw_pw_block.onnx")));
    a.select(kDw);
    QVERIFY(a.applyWithButton(kGood));
    QSignalSpy refused(a.w.document()->schedules(), &ScheduleController::applyRefused);
    QSignalSpy changed(a.w.document()->schedules(), &ScheduleController::schedulesChanged);
    // Parses, but has rank 2 for a rank-4 output: the lowering's reason, word for word.
    QVERIFY(a.applyWithButton(QStringLiteral("spatial(4,4)")));
    QCOMPARE(refused.count(), 1);
    const QString reason = QStringLiteral(
        "grid mapping spatial(4,4) of kernel 'dw_conv' does not fit the output [1,32,56,56]: mapping spatial(4,4) has "
        "rank 2 but the tensor [1,32,56,56] has rank 4");
    QCOMPARE(refused.at(0).at(0).toString(), kDw);
    QCOMPARE(refused.at(0).at(1).toString(), reason);
    QCOMPARE(a.w.document()->schedules()->lastRefusal(), reason);
    QVERIFY(a.bar()->statusIsError());
    QCOMPARE(a.bar()->statusText(), QStringLiteral("Not applied: ") + reason);
    // Nothing changed: the schedule, the undo stack, what the next run compiles.
    QCOMPARE(changed.count(), 0);
    QCOMPARE(a.w.document()->plans()->undoStack()->count(), 1);
    QCOMPARE(a.w.document()->schedules()->userMapping(kDw)->grid, kGood);
    QVERIFY(has(a.compiledCode(), QStringLiteral("//   mapping: grid = ") + kGood));
    // Problems lists it as a warning on the node.
    QStringList problems;
    for (int i = 0; i < a.w.problemsList()->count(); ++i)
        problems << a.w.problemsList()->item(i)->text();
    QVERIFY2(problems.contains(QStringLiteral("warning: node 'dw_conv' (Conv): mapping not applied: ") + reason),
             qPrintable(problems.join(QLatin1Char('\n'))));

    // A mapping that does not cover the output.
    QVERIFY(a.applyWithButton(QStringLiteral("spatial(1,4,2,2)")));
    QCOMPARE(refused.count(), 2);
    QVERIFY(a.w.document()->schedules()->lastRefusal().startsWith(
        QStringLiteral("grid mapping spatial(1,4,2,2) of kernel 'dw_conv' does not fit the output [1,32,56,56]: ")));
    QCOMPARE(a.w.document()->plans()->undoStack()->count(), 1);

    // The next accepted apply takes the refusal out of Problems.
    QVERIFY(a.applyWithButton(kOther));
    QVERIFY(a.w.document()->schedules()->diagnostics().empty());
    for (int i = 0; i < a.w.problemsList()->count(); ++i)
        QVERIFY(!a.w.problemsList()->item(i)->text().contains(QStringLiteral("mapping not applied")));
}

void ScheduleTest::fusedMemberIsRefused()
{
    Window a;
    QVERIFY(a.open(sample("dw_pw_block.onnx")));
    QVERIFY(a.w.document()->plans()->fuse({kDw, kRelu}));
    const QString group = QString::fromStdString(a.w.document()->plans()->plan().groups[0].name);
    a.select(kRelu);
    QSignalSpy refused(a.w.document()->schedules(), &ScheduleController::applyRefused);
    a.w.mappingPanel()->setExpressions(kOther);
    a.bar()->applyButton()->click();
    QCOMPARE(refused.count(), 1);  // refused at once, no check needed
    QCOMPARE(refused.at(0).at(1).toString(),
             QStringLiteral("relu6 is fused into group '%1', whose kernel is scheduled by its anchor dw_conv: apply the "
                            "mapping to dw_conv")
                 .arg(group));
    QCOMPARE(a.w.document()->plans()->undoStack()->count(), 1);  // just the fuse
}

void ScheduleTest::undoRedoInterleavesWithFusion()
{
    Window a;
    QVERIFY(a.open(sample("dw_pw_block.onnx")));
    app::PlanSession* plans = a.w.document()->plans();
    ScheduleController* sc = a.w.document()->schedules();
    a.select(kDw);
    const QString defaultGrid = a.w.mappingPanel()->gridExpression();
    QVERIFY(a.applyWithButton(kGood));                 // 1: mapping A
    QVERIFY(plans->fuse({kDw, kRelu}));                // 2: fuse
    const std::string fused = schedule::planToJson(plans->plan());
    a.select(kDw);
    QVERIFY(a.applyWithButton(kOther));                // 3: mapping B on the group's anchor
    QCOMPARE(a.undoTexts().size(), 3);
    QCOMPARE(a.undoTexts().at(0), QStringLiteral("Set mapping of dw_conv: ") + kGood);
    QCOMPARE(a.undoTexts().at(2), QStringLiteral("Set mapping of dw_conv: ") + kOther);
    QCOMPARE(a.w.fusion()->undoAction()->text(), QStringLiteral("&Undo Set mapping of dw_conv: ") + kOther);

    a.w.fusion()->undoAction()->trigger();  // undoes 3: mapping A again, still fused
    QCOMPARE(sc->userMapping(kDw)->grid, kGood);
    QCOMPARE(a.w.mappingPanel()->gridExpression(), kGood);
    QCOMPARE(plans->plan().fusedGroupCount(), 1);
    a.w.fusion()->undoAction()->trigger();  // undoes 2: the fuse; mapping A stays
    QCOMPARE(plans->plan().fusedGroupCount(), 0);
    QCOMPARE(sc->userMapping(kDw)->grid, kGood);
    a.w.fusion()->undoAction()->trigger();  // undoes 1: the default schedule and its expressions
    QVERIFY(!sc->userMapping(kDw).has_value());
    QCOMPARE(a.w.mappingPanel()->gridExpression(), defaultGrid);
    QCOMPARE(a.bar()->origin(), views::ScheduleOrigin::Default);
    QVERIFY(a.w.document()->runSettings().compile.schedules.empty());
    QVERIFY(!a.w.fusion()->undoAction()->isEnabled());

    a.w.fusion()->redoAction()->trigger();
    QCOMPARE(sc->userMapping(kDw)->grid, kGood);
    QCOMPARE(plans->plan().fusedGroupCount(), 0);
    a.w.fusion()->redoAction()->trigger();
    QCOMPARE(schedule::planToJson(plans->plan()), fused);
    QCOMPARE(sc->userMapping(kDw)->grid, kGood);
    a.w.fusion()->redoAction()->trigger();
    QCOMPARE(sc->userMapping(kDw)->grid, kOther);
    QCOMPARE(a.w.mappingPanel()->gridExpression(), kOther);
    QVERIFY(!a.w.fusion()->redoAction()->isEnabled());
}

void ScheduleTest::resetIsUndoable()
{
    Window a;
    QVERIFY(a.open(sample("dw_pw_block.onnx")));
    a.select(kDw);
    const QString defaultGrid = a.w.mappingPanel()->gridExpression();
    QVERIFY(a.applyWithButton(kGood));
    a.bar()->resetButton()->click();
    QCOMPARE(a.undoTexts().last(), QStringLiteral("Reset mapping of dw_conv"));
    QVERIFY(!a.w.document()->schedules()->userMapping(kDw).has_value());
    QCOMPARE(a.w.mappingPanel()->gridExpression(), defaultGrid);
    QVERIFY(!a.bar()->resetButton()->isEnabled());
    QCOMPARE(a.bar()->statusText(), QStringLiteral("dw_conv compiles with its default schedule again"));
    a.w.fusion()->undoAction()->trigger();
    QCOMPARE(a.w.document()->schedules()->userMapping(kDw)->grid, kGood);
    QCOMPARE(a.w.mappingPanel()->gridExpression(), kGood);
    QVERIFY(a.bar()->resetButton()->isEnabled());
}

void ScheduleTest::projectKeepsTheSchedules()
{
    const QString file = m_tmp.path() + QStringLiteral("/sched.tessera");
    {
        Window a;
        QVERIFY(a.open(sample("dw_pw_block.onnx")));
        a.select(kDw);
        QVERIFY(a.applyWithButton(kGood));
        QVERIFY(a.w.projectController()->saveAs(file));
        auto saved = project::loadProject(file.toStdString());
        QVERIFY(saved.ok());
        QCOMPARE(saved->project.schedules.size(), std::size_t(1));
        QCOMPARE(saved->project.schedules[0],
                 (project::ScheduleOverride{"dw_conv", kGood.toStdString(), std::string()}));
    }
    Window b;
    QVERIFY(b.open(file));
    QVERIFY(QTest::qWaitFor([&] { return b.w.document()->schedules()->userMapping(kDw).has_value(); }, 10000));
    QCOMPARE(b.w.document()->schedules()->userMapping(kDw)->grid, kGood);
    QVERIFY(has(b.compiledCode(), QStringLiteral("//   mapping: grid = ") + kGood));
    // Reopened, the restored schedule is not an edit: nothing to undo, nothing unsaved.
    QCOMPARE(b.w.document()->plans()->undoStack()->count(), 0);
    b.select(kDw);
    QCOMPARE(b.bar()->origin(), views::ScheduleOrigin::User);
    QCOMPARE(b.w.mappingPanel()->gridExpression(), kGood);

    // Another model forgets them.
    QVERIFY(b.open(sample("opset21_mlp.onnx")));
    QVERIFY(b.w.document()->schedules()->schedules().empty());
}

void ScheduleTest::programScheduleIsShownAndKeptAcrossEdits()
{
    Window a;
    QVERIFY(a.open(sample("matmul_tiled.tsr")));
    a.select(QStringLiteral("C"));
    QCOMPARE(a.bar()->origin(), views::ScheduleOrigin::Program);
    QCOMPARE(a.w.mappingPanel()->gridExpression(), QStringLiteral("spatial(2, 2)"));
    QCOMPARE(a.w.mappingPanel()->blockExpression(), QStringLiteral("spatial(16, 16) * repeat(8, 8)"));
    QVERIFY(a.applyWithButton(QStringLiteral("spatial(4,4)"), QStringLiteral("spatial(16,16) * repeat(4,4)")));
    QCOMPARE(a.undoTexts(), QStringList{QStringLiteral("Set mapping of C: spatial(4,4) / spatial(16,16) * repeat(4,4)")});
    // The program's tile and stage directives stay; the mappings are the user's.
    const app::RunSettings settings = a.w.document()->runSettings();
    QCOMPARE(settings.compile.schedules.size(), std::size_t(1));
    auto m = pipeline::loadModel(sample("matmul_tiled.tsr").toStdString());
    QVERIFY(m.ok());
    auto cm = pipeline::compileModel(*m, pipeline::defaultInputs(m->graph), settings.compile);
    QVERIFY(cm.ok());
    QVERIFY(has(cm->code.source, QStringLiteral("//   mapping: grid = spatial(4,4)\n")));
    QVERIFY(has(cm->code.source, QStringLiteral("//   mapping: block = spatial(16,16).repeat(4,4)\n")));
    // An edit of the program re-parses it: the same program keeps the user's mapping.
    QSignalSpy parsed(a.w.program(), &app::ProgramController::programParsed);
    a.w.program()->setProgramText(a.w.program()->programText() + QStringLiteral("\n# a comment\n"));
    QVERIFY(parsed.wait(30000));
    QVERIFY(parsed.at(0).at(0).toBool());
    QCOMPARE(a.w.document()->schedules()->userMapping(QStringLiteral("C"))->grid, QStringLiteral("spatial(4,4)"));
    QCOMPARE(a.w.document()->runSettings().compile.schedules.size(), std::size_t(1));
}

void ScheduleTest::runShowsTheAppliedMappingInTheCode()
{
    if (qEnvironmentVariableIsEmpty("TESSERA_RUNNER"))
        QSKIP("TESSERA_RUNNER not set (CMake sets it)");
    Window a;
    QVERIFY(a.open(sample("dw_pw_block.onnx")));
    a.select(kDw);
    QVERIFY(a.applyWithButton(kGood));
    QSignalSpy finished(&a.w, &app::MainWindow::runFinished);
    a.w.run()->runAction()->trigger();
    QVERIFY(finished.wait(240000));
    QVERIFY(finished.at(0).at(0).toBool());
    const QString code = a.w.run()->codePanel()->codeView()->toPlainText();
    QVERIFY(code.contains(QStringLiteral("//   mapping: grid = ") + kGood));
    QVERIFY(!a.w.run()->codePanel()->headerText().contains(QStringLiteral("mappings changed")));
    // Another mapping: the code on screen is marked as generated with the old one.
    QVERIFY(a.applyWithButton(kOther));
    QVERIFY2(a.w.run()->codePanel()->headerText().endsWith(
                 QStringLiteral("kernel mappings changed since this code was generated: run again (Ctrl+R)")),
             qPrintable(a.w.run()->codePanel()->headerText()));
}

void ScheduleTest::dockPictures()
{
    // Pictures of the dock for review (run under xvfb-run with QT_QPA_PLATFORM=xcb to see the
    // real style): TESSERA_SCHEDULE_SHOTS=DIR writes applied.png and refused.png there.
    const QString dir = qEnvironmentVariable("TESSERA_SCHEDULE_SHOTS");
    if (dir.isEmpty())
        QSKIP("TESSERA_SCHEDULE_SHOTS not set");
    Window a;
    a.w.resize(1600, 1000);
    QVERIFY(a.open(sample("dw_pw_block.onnx")));
    a.w.showMapping(QString());
    a.select(kDw);
    QVERIFY(a.applyWithButton(kGood));
    QTest::qWait(300);
    QVERIFY(a.w.grab().save(dir + QStringLiteral("/applied.png")));
    QVERIFY(a.applyWithButton(QStringLiteral("spatial(4,4)")));
    QTest::qWait(300);
    QVERIFY(a.w.grab().save(dir + QStringLiteral("/refused.png")));
    QVERIFY(a.w.mappingDock()->grab().save(dir + QStringLiteral("/refused_dock.png")));
}

QTEST_MAIN(ScheduleTest)
#include "schedule_test.moc"
