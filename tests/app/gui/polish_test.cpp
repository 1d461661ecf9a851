// Fixes from a newcomer's first session (issue 8; Qt Test, offscreen): status-bar messages that
// do not draw over the run's line (and name the model, not the plan cache file), bottom docks
// that keep a few rows, View toggles that raise their dock without resizing the window, the fusion
// plan's hardware following the run target, Save Project of a .tsr program (no stale "unsaved
// program" afterwards, nor after reopening), and a reopened project's last run in the Fusion Plan
// table's Measured column. The default layout after a run needs tessera-runner and `c++`.
#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <QFontInfo>
#include <QTest>
#include <QComboBox>
#include <QUndoStack>

#include "app/gui/document.h"
#include "app/gui/fusion_controller.h"
#include "app/gui/help_windows.h"
#include "app/gui/main_window.h"
#include "app/gui/plan_session.h"
#include "app/gui/program_controller.h"
#include "app/gui/project_controller.h"
#include "app/gui/workspace_controller.h"
#include "core/pipeline/host_profile.h"
#include "core/pipeline/load_model.h"
#include "core/project/project.h"
#include "core/schedule/fusion_plan.h"
#include "core/schedule/planners.h"
#include "core/target/gpu_profile.h"
#include "views/fusion/fusion_plan_panel.h"
#include "views/fusion/fusion_plan_table_model.h"
#include "views/mapping/mapping_panel.h"
#include "views/timing/timing_panel.h"
#include "tests/app/gui/gui_test_util.h"

using namespace tessera;
using app::MainWindow;
using app::ProgramController;
using app::ProjectController;

namespace {

QString sample(const char* name) { return QStringLiteral(TESSERA_SAMPLES "/") + QLatin1String(name); }

/// Every modal question of the window answered by the test (and counted).
struct Prompts {
    int project = 0;
    int program = 0;
    explicit Prompts(MainWindow& w)
    {
        w.setErrorReporter([](const QString& title, const QStringList& lines) {
            QFAIL(qPrintable(title + QLatin1Char(':') + lines.join(QLatin1Char('\n'))));
        });
        w.projectController()->setUnsavedPrompt([this](const QString&) {
            ++project;
            return ProjectController::UnsavedChoice::Discard;
        });
        w.program()->setSavePrompt([this](const QString&) {
            ++program;
            return ProgramController::SaveChoice::Discard;
        });
        w.projectController()->setInformer([](const QString&, const QString&) {});
    }
};

/// Shown and not behind another tab (the window moves tabs that are not current out of sight).
bool inFront(const QDockWidget* dock) { return !dock->isHidden() && !dock->visibleRegion().isEmpty(); }

QLabel* runLabel(MainWindow& w) { return w.statusBar()->findChild<QLabel*>(QStringLiteral("runStatus")); }

int tableRowsHeight(const QTableView* table, int rows)
{
    return table->horizontalHeader()->sizeHint().height() + rows * table->verticalHeader()->defaultSectionSize();
}

QString measuredText(MainWindow& w, const QString& group)
{
    const QAbstractItemModel* m = w.fusion()->panel()->table()->model();
    for (int r = 0; r < m->rowCount(); ++r) {
        if (m->data(m->index(r, views::FusionPlanTableModel::Group)).toString() == group)
            return m->data(m->index(r, views::FusionPlanTableModel::Measured)).toString();
    }
    return QStringLiteral("(no row %1)").arg(group);
}

}  // namespace

class PolishTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tessera_gui_polish_tests"));
    }
    void init()
    {
        QSettings().clear();
        QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).removeRecursively();
    }

    void temporaryMessageHidesRunLine()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QLabel* label = runLabel(w);
        QVERIFY(label != nullptr);
        w.run()->startRun();  // no model: the run line says what to do
        QCOMPARE(w.run()->runStatusText(), QStringLiteral("Open a model first (File > Open)"));
        QVERIFY(label->isVisible());
        w.statusBar()->showMessage(QStringLiteral("Preferences saved"), 5000);
        QVERIFY(!label->isVisible());
        // A run line set while the message is up waits for it.
        w.run()->startRun();
        QVERIFY(!label->isVisible());
        w.statusBar()->clearMessage();
        QVERIFY(label->isVisible());
        QCOMPARE(label->text(), QStringLiteral("Open a model first (File > Open)"));
        // A message with a timeout gives the line back when it expires.
        w.statusBar()->showMessage(QStringLiteral("short"), 50);
        QVERIFY(!label->isVisible());
        QTRY_VERIFY(label->isVisible());
    }

    void restoredPlanMessageNamesTheModel()
    {
        const QString path = sample("dw_pw_block.onnx");
        {
            MainWindow w;
            Prompts prompts(w);
            QVERIFY(test::openAndWaitPlanned(w, path));
            QVERIFY(w.document()->plans()->fuse({QStringLiteral("dw_conv"), QStringLiteral("relu6")}));
            QVERIFY(QFile::exists(app::PlanSession::planFilePath(path)));
        }
        MainWindow w;
        Prompts prompts(w);
        w.resize(1280, 800);
        w.show();
        QVERIFY(test::openAndWaitPlanned(w, path));
        QTRY_COMPARE(w.statusBar()->currentMessage(), QStringLiteral("Restored your fusion plan edits for dw_pw_block.onnx"));
        QCOMPARE(w.statusBar()->toolTip(), QStringLiteral("Fusion plan restored from %1")
                                               .arg(QDir::toNativeSeparators(app::PlanSession::planFilePath(path))));
        QCOMPARE(w.document()->plans()->plan().groups.front().name, std::string("u1"));
        const QString shots = qEnvironmentVariable("TESSERA_SCREENSHOT_DIR");
        if (!shots.isEmpty())
            QVERIFY(w.grab().save(QDir(shots).filePath(QStringLiteral("restored_message.png")), "PNG"));
        // The tooltip goes with its message.
        w.statusBar()->showMessage(QStringLiteral("something else"));
        QCOMPARE(w.statusBar()->toolTip(), QString());
    }

    void bottomDocksKeepRows()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.run()->timingDock()->show();
        w.problemsList()->addItem(QStringLiteral("warning: one"));
        QDockWidget* problems = w.findChild<QDockWidget*>(QStringLiteral("problemsDock"));
        QVERIFY(problems != nullptr);
        problems->show();
        // Side by side, both squeezed as far as the window lets them.
        w.splitDockWidget(w.run()->timingDock(), problems, Qt::Horizontal);
        w.resizeDocks({w.run()->timingDock(), problems}, {40, 40}, Qt::Vertical);
        QTest::qWait(100);
        auto* table = w.run()->timingPanel()->findChild<QTableView*>(QStringLiteral("timingTable"));
        QVERIFY(table != nullptr);
        QVERIFY2(table->height() >= tableRowsHeight(table, 3), qPrintable(QString::number(table->height())));
        const int listRow = w.problemsList()->fontMetrics().height();
        QVERIFY2(w.problemsList()->height() >= 3 * listRow, qPrintable(QString::number(w.problemsList()->height())));
        // The chart gives way first; the table cannot be collapsed by its splitter.
        auto* splitter = w.run()->timingPanel()->findChild<QSplitter*>(QStringLiteral("timingSplitter"));
        QVERIFY(!splitter->isCollapsible(0));
        QVERIFY(splitter->isCollapsible(1));
        // The fusion plan's table too.
        QVERIFY(w.fusion()->panel()->table()->minimumHeight() >= tableRowsHeight(w.fusion()->panel()->table(), 3));
    }

    void firstRunGivesTimingsRoom_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1600x1000") << QSize(1600, 1000);
        QTest::newRow("1280x800") << QSize(1280, 800);
    }
    void firstRunGivesTimingsRoom()
    {
        QFETCH(QSize, size);
        MainWindow w;
        Prompts prompts(w);
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(test::openAndWaitPlanned(w, sample("dw_pw_block.onnx")));
        QSignalSpy finished(&w, &MainWindow::runFinished);
        w.run()->startRun();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QTest::qWait(100);
        QCOMPARE(w.size(), size);
        // About 2/5 of the window (less the tab bar it shares with Problems).
        QVERIFY2(w.run()->timingDock()->height() >= size.height() * 7 / 20, qPrintable(QString::number(w.run()->timingDock()->height())));
        auto* table = w.run()->timingPanel()->findChild<QTableView*>(QStringLiteral("timingTable"));
        // All three kernels of the block and the header, with room to spare.
        QVERIFY2(table->viewport()->height() >= 4 * table->verticalHeader()->defaultSectionSize(),
                 qPrintable(QString::number(table->viewport()->height())));
        QVERIFY(w.centralWidget()->height() >= 250);
    }

    void viewTogglesRaiseTheirDock()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        // The docks a first run opens: Code (tabbed with Properties) with the Roofline below it.
        w.run()->codeDock()->show();
        w.roofline()->dock()->show();
        w.findChild<QDockWidget*>(QStringLiteral("propertiesDock"))->raise();
        QTest::qWait(50);
        const QSize before = w.size();
        QDockWidget* mapping = w.mappingDock();
        QDockWidget* properties = w.findChild<QDockWidget*>(QStringLiteral("propertiesDock"));
        QDockWidget* code = w.run()->codeDock();
        QVERIFY(w.tabifiedDockWidgets(properties).contains(mapping));
        QAction* toggleMapping = mapping->toggleViewAction();
        QCOMPARE(toggleMapping->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_M));

        // Hidden: shown, in front of its tab group, the window keeps its size.
        toggleMapping->trigger();
        QTest::qWait(50);
        QVERIFY(inFront(mapping));
        QVERIFY(!inFront(properties));
        QVERIFY(!properties->isHidden());  // behind, not closed
        QVERIFY(toggleMapping->isChecked());
        QCOMPARE(w.size(), before);

        // Behind another tab: raised, not closed.
        properties->toggleViewAction()->trigger();
        QVERIFY(inFront(properties));
        QVERIFY(!inFront(mapping));
        QVERIFY(!mapping->isHidden());
        toggleMapping->trigger();
        QVERIFY(inFront(mapping));
        QVERIFY(!mapping->isHidden());
        QVERIFY(toggleMapping->isChecked());
        QCOMPARE(w.size(), before);

        // In front: closed.
        toggleMapping->trigger();
        QVERIFY(mapping->isHidden());
        QVERIFY(!toggleMapping->isChecked());
        // The tab bar shows another tab of the group after the close.
        QTRY_VERIFY(inFront(properties) || inFront(code));

        // The same for the others, e.g. Code (tabbed with Properties) and Program (Ctrl+E).
        properties->raise();
        QTRY_VERIFY(inFront(properties));
        code->toggleViewAction()->trigger();
        QVERIFY(inFront(code));
        QVERIFY(!inFront(properties));
        properties->toggleViewAction()->trigger();
        QVERIFY(inFront(properties));
        QVERIFY(!inFront(code));
        code->toggleViewAction()->trigger();
        QVERIFY(inFront(code));
        QVERIFY(!code->isHidden());
        QDockWidget* program = w.program()->programDock();
        w.workspace()->showWelcome();
        w.tabifyDockWidget(w.workspace()->welcomeDock(), program);
        program->show();
        w.workspace()->welcomeDock()->raise();
        QVERIFY(!inFront(program));
        program->toggleViewAction()->trigger();
        QVERIFY(inFront(program));
        QVERIFY(!inFront(w.workspace()->welcomeDock()));
        program->toggleViewAction()->trigger();
        QVERIFY(program->isHidden());
        QCOMPARE(w.size(), before);

        // A floating dock that was closed comes back.
        mapping->setFloating(true);
        toggleMapping->trigger();
        QVERIFY(inFront(mapping));
        QVERIFY(mapping->isFloating());
    }

    void hardwareFollowsTheTarget()
    {
        app::PlanSession s;
        QCOMPARE(s.hardware().name, std::string("host"));  // the CPU target's
        QVERIFY(!s.hardwareChosen());
        s.setTargetHardware(app::PlanSession::defaultHardwareFor(true));
        QCOMPARE(s.hardware().name, std::string("h200"));

        MainWindow w;
        Prompts prompts(w);
        QVERIFY(test::openAndWaitPlanned(w, sample("dw_pw_block.onnx")));
        app::PlanSession* plans = w.document()->plans();
        QCOMPARE(w.document()->currentTarget().id, QStringLiteral("cpu"));
        QCOMPARE(plans->hardware().name, std::string("host"));
        QCOMPARE(w.fusion()->panel()->hardwareCombo()->currentText(), QStringLiteral("host"));
        QCOMPARE(w.document()->runSettings().compile.hardware.name, std::string("host"));
        QTRY_VERIFY_WITH_TIMEOUT(w.document()->targetsProbed(), 30000);
        QVERIFY(w.document()->selectTarget(QStringLiteral("cuda-compile")));
        QCOMPARE(w.document()->currentTarget().id, QStringLiteral("cuda-compile"));
        QCOMPARE(plans->hardware().name, std::string("h200"));
        QCOMPARE(w.fusion()->panel()->hardwareCombo()->currentText(), QStringLiteral("h200"));
        QCOMPARE(plans->undoStack()->count(), 0);  // not an edit: an untitled model stays unmodified
        QVERIFY(!w.projectController()->isModified());
        QVERIFY(w.projectController()->currentProject().hardware.name.empty());  // stored as "the target's"
        QVERIFY(w.document()->selectTarget(QStringLiteral("cpu")));
        QCOMPARE(plans->hardware().name, std::string("host"));

        // The user's pick stays whatever the target, and a project stores it.
        plans->chooseHardware(target::findGpuProfile("a100").value());
        QCOMPARE(plans->hardware().name, std::string("a100"));
        QVERIFY(plans->hardwareChosen());
        QVERIFY(w.document()->selectTarget(QStringLiteral("cuda-compile")));
        QCOMPARE(plans->hardware().name, std::string("a100"));
        QCOMPARE(w.projectController()->currentProject().hardware.name, std::string("a100"));
        // Undoing the pick gives the target's back.
        plans->undoStack()->undo();
        QVERIFY(!plans->hardwareChosen());
        QCOMPARE(plans->hardware().name, std::string("h200"));
    }

    void fusePlannerReplansForTheTarget()
    {
        const QString path = sample("mobilenet_v2.onnx");
        app::PlanSession s;
        QSignalSpy changed(&s, &app::PlanSession::planChanged);
        s.choosePlanner(QStringLiteral("fuseplanner"));
        auto model = std::make_shared<const ir::Model>(pipeline::loadModel(path.toStdString()).value());
        s.setModel(model, path);
        QVERIFY(QTest::qWaitFor([&] { return s.ready() && !s.isBusy(); }, 60000));
        QCOMPARE(s.hardware().name, std::string("host"));
        QCOMPARE(s.plan().hardware, std::string("host"));
        const std::string hostPlan = schedule::planToJson(s.plan());
        // A FusePlanner plan is made again for CUDA's hardware (exactly FusePlanner's plan for an
        // H200), without an undo step.
        const target::GpuProfile h200 = app::PlanSession::defaultHardwareFor(true);
        s.setTargetHardware(h200);
        QVERIFY(s.isBusy());
        QVERIFY(QTest::qWaitFor([&] { return !s.isBusy(); }, 60000));
        QCOMPARE(s.hardware().name, std::string("h200"));
        QCOMPARE(s.plan().hardware, std::string("h200"));
        const support::Expected<schedule::FusionPlan> expected =
            schedule::makePlan(s.specialisedModel()->graph, "fuseplanner", h200);
        QVERIFY(expected.ok());
        QCOMPARE(schedule::planToJson(s.plan()), schedule::planToJson(expected.value()));
        QVERIFY(schedule::planToJson(s.plan()) != hostPlan);
        QCOMPARE(s.undoStack()->count(), 0);
    }

    void saveProjectHoldsTheProgram()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString tsr = dir.filePath(QStringLiteral("block.tsr"));
        QVERIFY(QFile::copy(sample("dw_pw_block.tsr"), tsr));
        const QString projectPath = dir.filePath(QStringLiteral("block.tessera"));
        QString edited;
        {
            MainWindow w;
            Prompts prompts(w);
            QVERIFY(test::openAndWaitPlanned(w, tsr));
            QVERIFY(!w.program()->programModified());
            QSignalSpy parsed(w.program(), &ProgramController::programParsed);
            edited = w.program()->programText() + QStringLiteral("# a note kept in the project\n");
            w.program()->setProgramText(edited);
            QVERIFY(w.program()->programModified());
            QTRY_COMPARE_WITH_TIMEOUT(parsed.count(), 1, 30000);
            QVERIFY(w.projectController()->saveAs(projectPath));
            // The project holds the text: nothing is unsaved, though the .tsr differs.
            QVERIFY(!w.program()->programModified());
            QVERIFY(w.program()->programDiffersFromFile());
            QVERIFY(!w.projectController()->isModified());
            QVERIFY2(w.program()->programDock()->windowTitle().endsWith(
                         QStringLiteral("(kept in the project; differs from the file)")),
                     qPrintable(w.program()->programDock()->windowTitle()));
            QVERIFY(!w.program()->programDock()->windowTitle().contains(QLatin1Char('*')));
            QVERIFY(w.close());
            QCOMPARE(prompts.program, 0);
            QCOMPARE(prompts.project, 0);
        }
        // The .tsr on disk is untouched.
        QFile original(sample("dw_pw_block.tsr"));
        QFile copy(tsr);
        QVERIFY(original.open(QIODevice::ReadOnly) && copy.open(QIODevice::ReadOnly));
        QCOMPARE(copy.readAll(), original.readAll());

        MainWindow w;
        Prompts prompts(w);
        QVERIFY(test::openAndWaitPlanned(w, projectPath));
        QTRY_COMPARE(w.program()->programText(), edited);
        QTRY_VERIFY(w.document()->plans()->ready() && !w.document()->plans()->isBusy());
        QVERIFY(!w.program()->programModified());
        QVERIFY(w.program()->programDiffersFromFile());
        QVERIFY(!w.projectController()->isModified());
        // An edit now is unsaved in the project: the project asks (once), the program does not.
        w.program()->setProgramText(edited + QStringLiteral("# another\n"));
        QVERIFY(w.projectController()->isModified());
        QVERIFY(!w.program()->programModified());
        QVERIFY(w.program()->programDock()->windowTitle().contains(QStringLiteral("block.tsr*")));
        QVERIFY(w.close());
        QCOMPARE(prompts.project, 1);
        QCOMPARE(prompts.program, 0);
    }

    void reopenedProjectFillsMeasuredColumn()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        support::Expected<project::Project> p = project::newProject(sample("dw_pw_block.onnx").toStdString());
        QVERIFY(p.ok());
        p->planner = "none";
        project::RunRecord run;
        run.time = "2026-11-30T10:00:00Z";
        run.target = "cpu";
        run.device = "some CPU";
        run.planner = "none";
        run.threads = 2;
        run.totalSeconds = 1e-3;
        // Matched by name (dw_conv), by the same nodes under another name (relu6), and pw_conv
        // has no kernel in the record.
        run.kernels = {project::KernelMeasurement{"dw_conv", "Conv", "dw_conv", {"dw_conv"}, 2.5e-5, 100, 100, true, 0},
                       project::KernelMeasurement{"old_name", "Clip", "", {"relu6"}, 4e-6, 10, 10, true, 0}};
        p->runs = {run};
        const QString path = dir.filePath(QStringLiteral("block.tessera"));
        QVERIFY(project::saveProject(p.value(), path.toStdString()).ok());

        MainWindow w;
        Prompts prompts(w);
        QVERIFY(test::openAndWaitPlanned(w, path));
        QTRY_COMPARE(measuredText(w, QStringLiteral("dw_conv")), QStringLiteral("25.0 us"));
        QCOMPARE(measuredText(w, QStringLiteral("relu6")), QStringLiteral("4.0 us"));
        QCOMPARE(measuredText(w, QStringLiteral("pw_conv")), QStringLiteral("\u2014"));
        const QString shots = qEnvironmentVariable("TESSERA_SCREENSHOT_DIR");
        if (!shots.isEmpty()) {
            w.resize(1280, 800);
            w.show();
            w.fusion()->showPlan();
            QTest::qWait(300);
            QVERIFY(w.grab().save(QDir(shots).filePath(QStringLiteral("project_measured.png")), "PNG"));
        }
    }

    void guideHeadingsUseTheAppFont()
    {
        app::DocWindow doc(QStringLiteral("dsl.md"));
        doc.resize(860, 700);
        doc.show();
        QVERIFY(QTest::qWaitForWindowExposed(&doc));
        const QString dir = qEnvironmentVariable("TESSERA_SCREENSHOT_DIR");
        if (!dir.isEmpty())
            QVERIFY(doc.grab().save(QDir(dir).filePath(QStringLiteral("dsl_guide.png")), "PNG"));
        const QTextDocument* text = doc.browser()->document();
        const QFont body = doc.browser()->font();
        const double base = QFontInfo(body).pointSizeF();
        QVERIFY(text->documentMargin() >= 10);
        // Every heading: one size per level (the title's `.tsr` code span too), bold, the window's
        // font for its words.
        int headings = 0;
        double h1 = 0, h2 = 0;
        for (QTextBlock block = text->begin(); block.isValid(); block = block.next()) {
            const int level = block.blockFormat().headingLevel();
            if (level <= 0)
                continue;
            ++headings;
            double size = -1;
            for (QTextBlock::iterator it = block.begin(); !it.atEnd(); ++it) {
                const QTextCharFormat cf = it.fragment().charFormat();
                if (size < 0)
                    size = cf.fontPointSize();
                QCOMPARE(cf.fontPointSize(), size);
                QCOMPARE(cf.fontWeight(), int(QFont::Bold));
                QCOMPARE(cf.font().pointSizeF(), size);  // what is drawn (a relative size would override it)
                if (!it.fragment().text().startsWith(QLatin1Char('.')))
                    QCOMPARE(cf.fontFamilies().toStringList().value(0), body.family());
            }
            if (level == 1)
                h1 = size;
            if (level == 2)
                h2 = size;
        }
        QVERIFY(headings > 10);
        QCOMPARE(text->begin().text(), QStringLiteral("The Tessera DSL (.tsr)"));
        QCOMPARE(h1, base * 1.6);
        QCOMPARE(h2, base * 1.35);
    }
};

QTEST_MAIN(PolishTest)
#include "polish_test.moc"
