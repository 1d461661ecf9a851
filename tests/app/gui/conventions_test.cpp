// Desktop conventions of the main window (issue 8; Qt Test, offscreen): Preferences persist and
// reach the run settings (and a real run: threads, extra flags and the cache folder), the compiler
// check, clearing the JIT cache, the Keyboard Shortcuts dialog, the About lines, the embedded
// guides, the first run (sample + Welcome) and the second, the Welcome's Run step, the saved
// layout and the initial dock sizes. Needs tessera-runner (TESSERA_RUNNER) and `c++` for the run.
//
// With TESSERA_SCREENSHOT_DIR set, the Preferences and About dialogs are also saved there as PNGs
// (run under xvfb-run with QT_QPA_PLATFORM=xcb for real fonts).
#include <QAction>
#include <QCheckBox>
#include <QCommandLinkButton>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QThread>
#include <QToolButton>
#include <QRegularExpression>
#include <QFileInfo>

#include "app/gui/app_settings.h"
#include "app/gui/fusion_controller.h"
#include "app/gui/help_controller.h"
#include "app/gui/help_windows.h"
#include "app/gui/document.h"
#include "app/gui/main_window.h"
#include "app/gui/roofline_controller.h"
#include "app/gui/run_controller.h"
#include "app/gui/run_session.h"
#include "app/gui/settings_dialog.h"
#include "app/gui/welcome_panel.h"
#include "app/gui/workspace_controller.h"
#include "core/runtime/host_jit.h"
#include "views/fusion/fusion_plan_panel.h"
#include "views/fusion/fusion_plan_table_model.h"

using namespace tessera;
using app::AppSettings;
using app::MainWindow;

namespace {

const QString kSamples = QStringLiteral(TESSERA_SAMPLES);

void writeFile(const QString& path, int bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray(bytes, 'x'));
}

void grabIfAsked(QWidget* w, const QString& name)
{
    const QString dir = qEnvironmentVariable("TESSERA_SCREENSHOT_DIR");
    if (dir.isEmpty())
        return;
    QTest::qWait(300);
    QVERIFY(w->grab().save(QDir(dir).filePath(name), "PNG"));
}

}  // namespace

class ConventionsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tessera_gui_conventions_tests"));
        qputenv("TESSERA_SAMPLES", kSamples.toUtf8());
    }
    void init() { QSettings().clear(); }

    void settingsPersist()
    {
        AppSettings a;
        QCOMPARE(a.threads, 0);  // every core, as the CLI's default
        QCOMPARE(a.effectiveThreads(), std::max(1, QThread::idealThreadCount()));
        a.compiler = QStringLiteral("g++");
        a.extraFlags = QStringLiteral("-ffast-math -DNAME=\"a b\"");
        a.threads = 1;
        a.cacheDir = QStringLiteral("/tmp/somewhere");
        a.defaultTarget = AppSettings::DefaultTarget::Cpu;
        a.theme = AppSettings::Theme::Dark;
        a.save();
        QCOMPARE(QSettings().value(QStringLiteral("settings/threads")).toInt(), 1);
        const AppSettings b = AppSettings::load();
        QCOMPARE(b.compiler, QStringLiteral("g++"));
        QCOMPARE(b.extraFlagList(), (QStringList{QStringLiteral("-ffast-math"), QStringLiteral("-DNAME=a b")}));
        QCOMPARE(b.threads, 1);
        QCOMPARE(b.kernelCacheDir(), QStringLiteral("/tmp/somewhere/kernels"));
        QCOMPARE(b.cudaCacheDir(), QStringLiteral("/tmp/somewhere/cuda"));
        QCOMPARE(b.defaultTarget, AppSettings::DefaultTarget::Cpu);
        QCOMPARE(b.theme, AppSettings::Theme::Dark);
        QCOMPARE(b.startupTargetId(QStringLiteral("cuda:0")), QStringLiteral("cpu"));
        QCOMPARE(AppSettings().startupTargetId(QStringLiteral("cuda:0")), QStringLiteral("cuda:0"));
        // 0 = every core.
        AppSettings all;
        all.threads = 0;
        QCOMPARE(all.effectiveThreads(), std::max(1, QThread::idealThreadCount()));
        QCOMPARE(app::formatBytes(0), QStringLiteral("0 bytes"));
        QCOMPARE(app::formatBytes(3584), QStringLiteral("4 KiB"));
        QCOMPARE(app::formatBytes(45200000), QStringLiteral("43.1 MiB"));
        // A bad stored value falls back to the default.
        QSettings().setValue(QStringLiteral("settings/threads"), -4);
        QCOMPARE(AppSettings::load().threads, 0);
    }

    void preferencesReachRunSettings()
    {
        MainWindow w;
        app::RunSettings before = w.document()->runSettings();
        QCOMPARE(before.run.threads, std::max(1, QThread::idealThreadCount()));
        const std::vector<std::string> defaults = runtime::HostCompilerOptions().flags;
        QCOMPARE(before.run.compiler.flags, defaults);

        QVERIFY(w.help()->preferencesAction() != nullptr);
        QVERIFY(!w.help()->preferencesAction()->shortcut().isEmpty());
        w.help()->preferencesAction()->trigger();
        app::SettingsDialog* dlg = w.help()->preferencesDialog();
        QVERIFY(dlg != nullptr);
        QVERIFY(dlg->isVisible());
        dlg->threadsSpin()->setValue(1);
        dlg->flagsEdit()->setText(QStringLiteral("-DTESSERA_PREFS_TEST=1 -fno-math-errno"));
        dlg->compilerEdit()->setText(QStringLiteral("c++"));
        dlg->accept();
        QCOMPARE(QSettings().value(QStringLiteral("settings/threads")).toInt(), 1);

        const app::RunSettings s = w.document()->runSettings();
        QCOMPARE(s.run.threads, 1);
        QCOMPARE(s.compile.cpuThreads, 1);
        QCOMPARE(s.run.compiler.compiler, std::string("c++"));
        std::vector<std::string> expected = defaults;
        expected.push_back("-DTESSERA_PREFS_TEST=1");
        expected.push_back("-fno-math-errno");
        QCOMPARE(s.run.compiler.flags, expected);
        // The Run menu's switches are still honoured next to the preferences.
        QVERIFY(s.run.check);
    }

    void preferencesReachARealRun()
    {
        QTemporaryDir cache;
        QVERIFY(cache.isValid());
        AppSettings a;
        a.threads = 1;
        a.extraFlags = QStringLiteral("-DTESSERA_PREFS_RUN=1");
        a.cacheDir = cache.path();
        a.save();

        MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList&) {});
        QSignalSpy shown(&w, &MainWindow::modelShown);
        w.openFile(kSamples + QStringLiteral("/dw_pw_block.onnx"));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
        QSignalSpy finished(&w, &MainWindow::runFinished);
        w.run()->startRun();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 300000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(w.run()->runStatusText()));
        const app::RunOutcome& out = w.document()->runs()->lastOutcome();
        QVERIFY(out.report != nullptr);
        QCOMPARE(out.report->threads, 1);
        QCOMPARE(out.settings.run.threads, 1);
        QCOMPARE(out.settings.run.compiler.flags.back(), std::string("-DTESSERA_PREFS_RUN=1"));
        // The library was built into the chosen cache folder, from a source compiled with the flag.
        const QStringList libs = QDir(cache.filePath(QStringLiteral("kernels"))).entryList({QStringLiteral("*.so")});
        QCOMPARE(libs.size(), 1);
        QCOMPARE(QString::fromStdString(out.report->library.path),
                 QDir(cache.filePath(QStringLiteral("kernels"))).filePath(libs.first()));
    }

    void compilerCheck()
    {
        AppSettings a;
        a.compiler = QStringLiteral("c++");
        app::SettingsDialog dlg(a);
        QSignalSpy checked(&dlg, &app::SettingsDialog::compilerChecked);
        QTRY_COMPARE_WITH_TIMEOUT(checked.count(), 1, 20000);
        QVERIFY(checked.at(0).at(0).toBool());
        const support::Expected<std::string> version = runtime::hostCompilerVersion("c++");
        QVERIFY(version.ok());
        QCOMPARE(checked.at(0).at(1).toString(), QString::fromStdString(*version));
        QCOMPARE(dlg.compilerStatus(), QString::fromStdString(*version));

        dlg.compilerEdit()->setText(QStringLiteral("/nonexistent/tessera-cc"));
        dlg.checkCompiler();
        QTRY_COMPARE_WITH_TIMEOUT(checked.count(), 2, 20000);
        QVERIFY(!checked.at(1).at(0).toBool());
        QCOMPARE(checked.at(1).at(1).toString(),
                 QStringLiteral("'/nonexistent/tessera-cc' not found: install g++ or choose a compiler"));
    }

    void clearCacheAsksFirst()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("kernels")));
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("cuda")));
        const QString key = QStringLiteral("0123456789abcdef0123456789abcdef");
        writeFile(dir.filePath(QStringLiteral("kernels/%1.so").arg(key)), 2048);
        writeFile(dir.filePath(QStringLiteral("kernels/%1.cpp").arg(key)), 1024);
        writeFile(dir.filePath(QStringLiteral("cuda/%1.ptx").arg(key)), 512);
        writeFile(dir.filePath(QStringLiteral("kernels/notes.txt")), 10);
        AppSettings a;
        a.cacheDir = dir.path();
        app::SettingsDialog dlg(a);
        QVERIFY2(dlg.cacheUsageText().startsWith(QStringLiteral("Host kernels: 3 KiB (3 files) in ")),
                 qPrintable(dlg.cacheUsageText()));
        QVERIFY(dlg.cacheUsageText().contains(QStringLiteral("CUDA kernels: 512 bytes (1 file) in ")));
        QString asked;
        dlg.setConfirm([&asked](const QString&, const QString& text) {
            asked = text;
            return false;
        });
        QCOMPARE(dlg.clearCache(), -1);
        QCOMPARE(asked, QStringLiteral("Delete 4 KiB of compiled kernels? The next run of each model compiles them again."));
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("kernels/%1.so").arg(key))));
        dlg.setConfirm([](const QString&, const QString&) { return true; });
        QCOMPARE(dlg.clearCache(), 3);
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("kernels/%1.so").arg(key))));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("cuda/%1.ptx").arg(key))));
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("kernels/notes.txt"))));  // not the cache's
        QVERIFY(dlg.cacheUsageText().startsWith(QStringLiteral("Host kernels: 10 bytes (1 file)")));
    }

    void settingsDialogRoundTrip()
    {
        AppSettings a;
        a.threads = 0;
        a.theme = AppSettings::Theme::Light;
        a.defaultTarget = AppSettings::DefaultTarget::FirstCuda;
        app::SettingsDialog dlg(a);
        QCOMPARE(dlg.threadsSpin()->text(), QStringLiteral("All cores (%1)").arg(std::max(1, QThread::idealThreadCount())));
        QCOMPARE(dlg.themeCombo()->currentText(), QStringLiteral("Light"));
        const AppSettings b = dlg.settings();
        QCOMPARE(b.threads, 0);
        QCOMPARE(b.theme, AppSettings::Theme::Light);
        QCOMPARE(b.defaultTarget, AppSettings::DefaultTarget::FirstCuda);
        dlg.show();
        grabIfAsked(&dlg, QStringLiteral("settings.png"));
    }

    void shortcutsDialogListsRun()
    {
        MainWindow w;
        QVERIFY(w.help()->shortcutsDialog() == nullptr);
        w.help()->showShortcuts();
        app::ShortcutsDialog* dlg = w.help()->shortcutsDialog();
        QVERIFY(dlg != nullptr);
        const QString ctrlR = QKeySequence(Qt::CTRL | Qt::Key_R).toString(QKeySequence::NativeText);
        bool run = false, dsl = false, prefs = false;
        for (int r = 0; r < dlg->visibleRows(); ++r) {
            const QStringList row = dlg->rowText(r);
            run = run || row == QStringList{QStringLiteral("Run"), QStringLiteral("Run (CPU)"), ctrlR};
            dsl = dsl || (row.at(0) == QStringLiteral("Help") && row.at(1) == QStringLiteral("DSL Guide"));
            prefs = prefs || (row.at(0) == QStringLiteral("Edit") && row.at(1) == QStringLiteral("Preferences..."));
            QVERIFY(!row.at(2).isEmpty());
        }
        QVERIFY(run);
        QVERIFY(dsl);
        QVERIFY(prefs);
        const int all = dlg->visibleRows();
        dlg->filterEdit()->setText(QStringLiteral("run (c"));
        QCOMPARE(dlg->visibleRows(), 1);
        QCOMPARE(dlg->rowText(0).at(2), ctrlR);
        dlg->filterEdit()->clear();
        QCOMPARE(dlg->visibleRows(), all);
        // Every action of the window with a shortcut is listed once.
        int withKeys = 0;
        for (const app::ShortcutEntry& e : app::shortcutEntries(&w))
            withKeys += e.shortcut.isEmpty() ? 0 : 1;
        QCOMPARE(withKeys, all);
    }

    void aboutNamesVersions()
    {
        const QStringList lines = app::aboutLines(QStringLiteral("c++"));
        QCOMPARE(lines.at(0), QStringLiteral("Tessera: %1").arg(app::tesseraVersion()));
        QVERIFY(app::tesseraVersion() != QStringLiteral("unknown"));
        QVERIFY(lines.at(1).startsWith(QStringLiteral("Qt: %1 (built with ").arg(QString::fromLatin1(qVersion()))));
        QVERIFY(lines.at(2).startsWith(QStringLiteral("CUDA toolkit (build): ")));
        QVERIFY(lines.at(3).startsWith(QStringLiteral("NVRTC: ")));
        QVERIFY(lines.at(4).startsWith(QStringLiteral("CUDA driver: ")));
        // Found ("CUDA driver: 13.0") or not, with the reason.
        QVERIFY2(QRegularExpression(QStringLiteral("^CUDA driver: (\\d+\\.\\d+|not found: .+)$")).match(lines.at(4)).hasMatch(),
                 qPrintable(lines.at(4)));
        QCOMPARE(lines.at(5), QStringLiteral("C++ compiler: %1 (c++)")
                                  .arg(QString::fromStdString(*runtime::hostCompilerVersion("c++"))));
        MainWindow w;
        w.help()->showAbout();
        QVERIFY(w.help()->aboutDialog() != nullptr);
        QVERIFY(w.help()->aboutDialog()->text().contains(QString::fromLatin1(qVersion())));
        QVERIFY(w.help()->aboutDialog()->text().contains(QStringLiteral("CUDA driver: ")));
        grabIfAsked(w.help()->aboutDialog(), QStringLiteral("about.png"));
    }

    void guidesAreEmbedded()
    {
        QVERIFY(QFile::exists(QStringLiteral(":/docs/dsl.md")));
        QVERIFY(QFile::exists(QStringLiteral(":/docs/fusion.md")));
        MainWindow w;
        QAction* f1 = w.findChild<QAction*>(QStringLiteral("dslGuideAction"));
        QVERIFY(f1 != nullptr);
        QCOMPARE(f1->shortcut(), QKeySequence(Qt::Key_F1));
        f1->trigger();
        app::DocWindow* doc = w.help()->docWindow();
        QVERIFY(doc != nullptr);
        QVERIFY(doc->isVisible());
        QVERIFY(!doc->isModal());
        QCOMPARE(doc->fileName(), QStringLiteral("dsl.md"));
        QVERIFY(doc->browser()->toPlainText().startsWith(QStringLiteral("The Tessera DSL (.tsr)")));
        QCOMPARE(doc->windowTitle(), QStringLiteral("The Tessera DSL (.tsr) \u2014 Tessera"));
        w.findChild<QAction*>(QStringLiteral("fusionGuideAction"))->trigger();
        QCOMPARE(w.help()->docWindow(), doc);  // one guide window
        QVERIFY(doc->browser()->toPlainText().startsWith(QStringLiteral("Fusion plans")));
    }

    void menusInOrder()
    {
        MainWindow w;
        QStringList titles;
        for (QAction* a : w.menuBar()->actions())
            titles << a->text().remove(QLatin1Char('&'));
        QCOMPARE(titles.count(QStringLiteral("Edit")), 1);
        QCOMPARE(titles.last(), QStringLiteral("Help"));
    }

    void firstRunOpensSampleAndWelcome()
    {
        {
            MainWindow w;
            w.setErrorReporter([](const QString&, const QStringList&) {});
            w.show();
            QSignalSpy shown(&w, &MainWindow::modelShown);
            QVERIFY(w.workspace()->startFirstRun());
            QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
            QCOMPARE(QFileInfo(w.currentPath()).fileName(), QStringLiteral("mobilenet_v2.onnx"));
            QVERIFY(w.workspace()->welcomeDock()->isVisible());
            QCOMPARE(w.dockWidgetArea(w.workspace()->welcomeDock()), Qt::LeftDockWidgetArea);
            // The Run step names the Run action's key.
            const QString ctrlR = w.run()->runAction()->shortcut().toString(QKeySequence::NativeText);
            QVERIFY(w.workspace()->welcomePanel()->stepButton(app::WelcomePanel::Step::Run)->text().endsWith(QStringLiteral("(%1)").arg(ctrlR)));
            QVERIFY(w.workspace()->welcomePanel()->dslButton()->menu()->actions().size() >= 3);
        }
        {
            // The second start: no sample; the Welcome shows again until "Don't show" is ticked.
            MainWindow w;
            w.show();
            QSignalSpy shown(&w, &MainWindow::modelShown);
            QVERIFY(!w.workspace()->startFirstRun());
            QTest::qWait(200);
            QCOMPARE(shown.count(), 0);
            QVERIFY(w.model() == nullptr);
            QVERIFY(w.workspace()->welcomeDock()->isVisible());
            w.workspace()->welcomePanel()->findChild<QCheckBox*>(QStringLiteral("welcomeDontShow"))->setChecked(true);
        }
        {
            MainWindow w;
            w.show();
            QVERIFY(!w.workspace()->startFirstRun());
            QVERIFY(!w.workspace()->welcomeDock()->isVisible());
            QVERIFY(w.model() == nullptr);
            // Help > Welcome brings it back.
            w.findChild<QAction*>(QStringLiteral("welcomeAction"))->trigger();
            QVERIFY(w.workspace()->welcomeDock()->isVisible());
        }
    }

    void welcomeSaysWhereThingsAre()
    {
        MainWindow w;
        app::WelcomePanel* welcome = w.workspace()->welcomePanel();
        // The roofline step says how to get this machine's roofs (the roofline's banner button).
        const QString roofStep = welcome->stepButton(app::WelcomePanel::Step::Roofline)->description();
        QVERIFY2(roofStep.contains(QStringLiteral("Click Measure Roofs in the roofline's banner")), qPrintable(roofStep));
        // The fusion step names where the planner is chosen, with the dock action's real key.
        const QString planKeys = w.fusion()->dock()->toggleViewAction()->shortcut().toString(QKeySequence::NativeText);
        QCOMPARE(planKeys, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P).toString(QKeySequence::NativeText));
        const QString planStep = welcome->stepButton(app::WelcomePanel::Step::FusionPlan)->description();
        QVERIFY2(planStep.startsWith(QStringLiteral("View > Fusion Plan (%1): choose the planner").arg(planKeys)),
                 qPrintable(planStep));
        // View lists the Welcome dock with the other docks; its toggle opens and closes it.
        QMenu* view = nullptr;
        for (QAction* a : w.menuBar()->actions())
            if (a->text().remove(QLatin1Char('&')) == QStringLiteral("View"))
                view = a->menu();
        QVERIFY(view != nullptr);
        QAction* toggle = w.workspace()->welcomeDock()->toggleViewAction();
        QVERIFY(view->actions().contains(toggle));
        QCOMPARE(toggle->text(), QStringLiteral("&Welcome"));
        QVERIFY(w.workspace()->welcomeDock()->isHidden());
        toggle->trigger();
        QVERIFY(!w.workspace()->welcomeDock()->isHidden());
        toggle->trigger();
        QVERIFY(w.workspace()->welcomeDock()->isHidden());
    }

    void firstRunWithAFileShowsWelcomeOnly()
    {
        QSettings().remove(QStringLiteral("welcome"));
        {
            // The README's run command names the sample: the first run still shows the Welcome.
            MainWindow w;
            w.show();
            QSignalSpy shown(&w, &MainWindow::modelShown);
            QVERIFY(!w.workspace()->startFirstRun(false));
            QVERIFY(w.workspace()->welcomeDock()->isVisible());
            QTest::qWait(100);
            QCOMPARE(shown.count(), 0);
        }
        {
            // Later starts with a file: the plain window.
            MainWindow w;
            w.show();
            QVERIFY(!w.workspace()->startFirstRun(false));
            QVERIFY(!w.workspace()->welcomeDock()->isVisible());
        }
    }

    void welcomeRunStepRuns()
    {
        MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList&) {});
        w.show();
        QSignalSpy shown(&w, &MainWindow::modelShown);
        w.openFile(kSamples + QStringLiteral("/dw_pw_block.onnx"));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
        w.workspace()->showWelcome();
        QSignalSpy triggered(w.run()->runAction(), &QAction::triggered);
        QSignalSpy finished(&w, &MainWindow::runFinished);
        QTest::mouseClick(w.workspace()->welcomePanel()->stepButton(app::WelcomePanel::Step::Run), Qt::LeftButton);
        QCOMPARE(triggered.count(), 1);
        QVERIFY(w.document()->runs()->isBusy());
        QCOMPARE(w.document()->currentTarget().id, QStringLiteral("cpu"));
        w.run()->stopRun();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);

        // Step 4 selects the first operator with weights.
        w.workspace()->welcomePanel()->stepButton(app::WelcomePanel::Step::SelectNode)->click();
        QVERIFY(w.graphView() != nullptr);
    }

    void welcomeRunStepOpensTheSampleFirst()
    {
        MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList&) {});
        w.show();
        w.workspace()->showWelcome();
        QSignalSpy triggered(w.run()->runAction(), &QAction::triggered);
        QSignalSpy finished(&w, &MainWindow::runFinished);
        w.workspace()->welcomePanel()->stepButton(app::WelcomePanel::Step::Run)->click();
        QTRY_COMPARE_WITH_TIMEOUT(triggered.count(), 1, 60000);
        QCOMPARE(QFileInfo(w.currentPath()).fileName(), QStringLiteral("mobilenet_v2.onnx"));
        w.run()->stopRun();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    }

    void problemsDoNotWrap()
    {
        MainWindow w;
        QVERIFY(!w.problemsList()->wordWrap());
        QCOMPARE(w.problemsList()->textElideMode(), Qt::ElideNone);
    }

    void layoutIsSavedAndRestored()
    {
        QVERIFY(!MainWindow().workspace()->hasSavedLayout());
        {
            MainWindow w;
            w.resize(1500, 950);
            w.show();
            w.run()->timingDock()->show();
            w.workspace()->welcomeDock()->show();
            QTest::qWait(50);
            w.close();  // saves
        }
        MainWindow w;
        QVERIFY(w.workspace()->hasSavedLayout());
        QVERIFY(w.run()->timingDock()->isHidden());
        w.workspace()->restoreLayout();
        QVERIFY(!w.run()->timingDock()->isHidden());
        QVERIFY(!w.workspace()->welcomeDock()->isHidden());
        // A layout of another version is ignored (the default arrangement stays).
        QSettings().setValue(QStringLiteral("window/state"), QByteArray("garbage"));
        MainWindow other;
        other.workspace()->restoreLayout();
        QVERIFY(other.run()->timingDock()->isHidden());
    }

    void bottomDocksGetRoom()
    {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.fusion()->showPlan();
        w.run()->timingDock()->show();
        QTRY_VERIFY(w.run()->timingDock()->width() >= 380);
        QVERIFY(w.fusion()->dock()->width() >= 300);
        // About half each.
        const double share = double(w.run()->timingDock()->width()) / (w.run()->timingDock()->width() + w.fusion()->dock()->width());
        QVERIFY2(share > 0.4 && share < 0.6, qPrintable(QString::number(share)));
        QTableView* table = w.fusion()->panel()->table();
        const int rows = table->verticalHeader()->defaultSectionSize() * 6;
        QTRY_VERIFY(table->viewport()->height() >= rows);
        // The Measured column comes right after Ops.
        QHeaderView* h = table->horizontalHeader();
        QCOMPARE(h->visualIndex(views::FusionPlanTableModel::Measured), h->visualIndex(views::FusionPlanTableModel::Ops) + 1);
    }
};

QTEST_MAIN(ConventionsTest)
#include "conventions_test.moc"
