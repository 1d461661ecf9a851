// .tessera projects in the window (issue 8; Qt Test, offscreen): save and reopen with a fused
// plan, modified flag and title after a fuse and after a save, the unsaved-changes prompt on close
// and on opening another file, autosave and recovery, a corrupt project (error, file untouched,
// model stays), a newer-version project (read-only, Save disabled), a missing source, and a run
// recorded in the project's history and shown again when the project reopens.
#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "app/gui/document.h"
#include "app/gui/fusion_controller.h"
#include "app/gui/main_window.h"
#include "app/gui/plan_session.h"
#include "app/gui/program_controller.h"
#include "app/gui/project_controller.h"
#include "app/gui/session.h"
#include "core/project/project.h"
#include "core/schedule/fusion_plan.h"
#include "views/fusion/fusion_plan_panel.h"
#include "views/fusion/fusion_plan_table_model.h"
#include "views/roofline/roofline_view.h"
#include "views/timing/timing_panel.h"
#include "views/timing/timing_table_model.h"
#include "tests/app/gui/gui_test_util.h"

using namespace tessera;
using app::ProjectController;

namespace {

QString sample(const char* name) { return QStringLiteral(TESSERA_SAMPLES "/") + QLatin1String(name); }

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeAll(const QString& path, const QByteArray& bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(path));
    f.write(bytes);
}

/// Opens `path` (model or project) and waits until it is shown and its plan is ready.

bool fuseAll(app::MainWindow& w)
{
    return w.document()->plans()->fuse({QStringLiteral("dw_conv"), QStringLiteral("relu6"), QStringLiteral("pw_conv")});
}

/// A window whose dialogs are all replaced (a test must never block on a modal box).
struct Window {
    app::MainWindow w;
    QStringList errors;
    QStringList infos;
    int prompts = 0;
    ProjectController::UnsavedChoice answer = ProjectController::UnsavedChoice::Cancel;
    Window()
    {
        w.setErrorReporter([this](const QString&, const QStringList& lines) { errors += lines; });
        ProjectController* pc = w.projectController();
        pc->setUnsavedPrompt([this](const QString&) {
            ++prompts;
            return answer;
        });
        pc->setSavePathPrompt([](const QString&) { return QString(); });
        pc->setRecoverPrompt([](const QString&, const QString&) { return false; });
        pc->setInformer([this](const QString&, const QString& text) { infos << text; });
        w.show();
    }
    ~Window()
    {
        // Nothing may ask on the way out.
        answer = ProjectController::UnsavedChoice::Discard;
    }
};

}  // namespace

class ProjectTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void saveAndReopenKeepsThePlan();
    void modifiedAfterFuseClearedAfterSave();
    void unsavedPromptOnCloseCanCancel();
    void unsavedPromptOnOpeningAnotherFile();
    void saveOfASampleSuggestsDocuments();
    void autosaveIsOfferedForRecovery();
    void corruptProjectIsAnErrorAndLeavesTheFile();
    void newerVersionOpensReadOnly();
    void missingSourceNamesThePath();
    void plannerOnlyProjectPlansWithItsPlanner();
    void dslProjectKeepsItsProgramText();
    void runGoesIntoTheHistory();
    void reopenedRunKeepsItsUnreliableTimings();

private:
    QString m_dir;
    QString m_model;
    QTemporaryDir m_tmp;
};

void ProjectTest::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tessera_gui_project_tests"));
    QVERIFY(m_tmp.isValid());
}

void ProjectTest::init()
{
    QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).removeRecursively();
    QSettings().clear();
    m_dir = m_tmp.path() + QLatin1Char('/') + QString::fromLatin1(QTest::currentTestFunction());
    QDir(m_dir).removeRecursively();
    QVERIFY(QDir().mkpath(m_dir + QStringLiteral("/models")));
    QVERIFY(QDir().mkpath(m_dir + QStringLiteral("/projects")));
    m_model = m_dir + QStringLiteral("/models/dw_pw_block.onnx");
    QVERIFY(QFile::copy(sample("dw_pw_block.onnx"), m_model));
}

void ProjectTest::saveAndReopenKeepsThePlan()
{
    const QString file = m_dir + QStringLiteral("/projects/block.tessera");
    std::string planJson;
    {
        Window a;
        // File > Save Project (Ctrl+S) and Save Project As (Ctrl+Shift+S), before Quit.
        const QList<QAction*> fileMenu = a.w.menuBar()->actions().constFirst()->menu()->actions();
        const qsizetype save = fileMenu.indexOf(a.w.projectController()->saveAction());
        QVERIFY(save > 0);
        QCOMPARE(fileMenu.value(save + 1), a.w.projectController()->saveAsAction());
        QCOMPARE(a.w.projectController()->saveAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_S));
        QCOMPARE(a.w.projectController()->saveAsAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
        QVERIFY(fileMenu.constLast()->shortcut() == QKeySequence(QKeySequence::Quit));
        QVERIFY(test::openAndWaitPlanned(a.w, m_model));
        QCOMPARE(a.w.windowTitle(), QStringLiteral("dw_pw_block.onnx[*] \u2014 Tessera"));
        QVERIFY(fuseAll(a.w));
        a.w.run()->checkAction()->setChecked(false);
        QVERIFY(a.w.projectController()->saveAs(file));
        QVERIFY(a.errors.isEmpty());
        planJson = schedule::planToJson(a.w.document()->plans()->plan());
        QCOMPARE(a.w.windowTitle(), QStringLiteral("block.tessera[*] \u2014 Tessera"));
        QVERIFY(!a.w.isWindowModified());
        QCOMPARE(a.w.recentFiles().value(0), file);
    }
    auto saved = project::loadProject(file.toStdString());
    QVERIFY(saved.ok());
    QCOMPARE(saved->project.source.path, m_model.toStdString());
    QVERIFY(saved->project.plan.has_value());
    QCOMPARE(saved->project.plan->groups.size(), std::size_t(1));
    QCOMPARE(saved->project.plan->groups[0].kind, schedule::FusionKind::DwPw);
    QCOMPARE(saved->project.options.check, false);
    QCOMPARE(saved->project.target, std::string("cpu"));

    Window b;
    QVERIFY(b.w.run()->checkAction()->isChecked());  // the default, before the project says otherwise
    QSignalSpy opened(b.w.projectController(), &ProjectController::projectOpened);
    QVERIFY(test::openAndWaitPlanned(b.w, file));
    QCOMPARE(opened.count(), 1);
    QCOMPARE(b.w.currentPath(), m_model);
    QCOMPARE(b.w.projectController()->projectPath(), file);
    QCOMPARE(schedule::planToJson(b.w.document()->plans()->plan()), planJson);
    QCOMPARE(b.w.document()->plans()->undoStack()->count(), 0);
    QVERIFY(!b.w.run()->checkAction()->isChecked());
    QVERIFY(!b.w.isWindowModified());
    QCOMPARE(b.w.windowTitle(), QStringLiteral("block.tessera[*] \u2014 Tessera"));
    QVERIFY(b.errors.isEmpty());
    QCOMPARE(b.prompts, 0);
}

void ProjectTest::modifiedAfterFuseClearedAfterSave()
{
    const QString file = m_dir + QStringLiteral("/projects/m.tessera");
    Window a;
    QVERIFY(test::openAndWaitPlanned(a.w, m_model));
    QVERIFY(!a.w.isWindowModified());
    QVERIFY(a.w.projectController()->saveAs(file));
    QVERIFY(!a.w.isWindowModified());
    QSignalSpy modified(a.w.projectController(), &ProjectController::modifiedChanged);
    QVERIFY(fuseAll(a.w));
    QVERIFY(a.w.isWindowModified());
    QVERIFY(a.w.projectController()->isModified());
    QCOMPARE(modified.count(), 1);
    QVERIFY(a.w.projectController()->save());
    QVERIFY(!a.w.isWindowModified());
    QCOMPARE(modified.count(), 2);
    // Undo goes back before the saved state: modified again; redo returns to it.
    a.w.document()->plans()->undoStack()->undo();
    QVERIFY(a.w.isWindowModified());
    a.w.document()->plans()->undoStack()->redo();
    QVERIFY(!a.w.isWindowModified());
    // A run option is project state too.
    a.w.run()->fallbackAction()->setChecked(!a.w.run()->fallbackAction()->isChecked());
    QVERIFY(a.w.isWindowModified());
    a.w.run()->fallbackAction()->setChecked(!a.w.run()->fallbackAction()->isChecked());
    QVERIFY(!a.w.isWindowModified());
}

void ProjectTest::unsavedPromptOnCloseCanCancel()
{
    Window a;
    QVERIFY(test::openAndWaitPlanned(a.w, m_model));
    // Nothing changed: closing asks nothing.
    QVERIFY(fuseAll(a.w));
    a.answer = ProjectController::UnsavedChoice::Cancel;
    QVERIFY(!a.w.close());
    QCOMPARE(a.prompts, 1);
    QVERIFY(a.w.isVisible());
    QVERIFY(a.w.isWindowModified());
    // Save of an untitled project asks for a file; cancelling that cancels the close.
    a.answer = ProjectController::UnsavedChoice::Save;
    QVERIFY(!a.w.close());
    QCOMPARE(a.prompts, 2);
    // Save to a file: the close goes through.
    const QString file = m_dir + QStringLiteral("/projects/closing.tessera");
    a.w.projectController()->setSavePathPrompt([&](const QString& suggested) {
        [&] { QCOMPARE(suggested, m_dir + QStringLiteral("/models/dw_pw_block.tessera")); }();
        return file;
    });
    QVERIFY(a.w.close());
    QCOMPARE(a.prompts, 3);
    QVERIFY(QFile::exists(file));
    QVERIFY(!a.w.isVisible());
}

void ProjectTest::saveOfASampleSuggestsDocuments()
{
    // A shipped sample's project is suggested in Documents, not in the samples folder.
    qputenv("TESSERA_SAMPLES", QByteArray(TESSERA_SAMPLES));
    Window a;
    QVERIFY(test::openAndWaitPlanned(a.w, sample("dw_pw_block.onnx")));
    QString suggested;
    a.w.projectController()->setSavePathPrompt([&](const QString& s) {
        suggested = s;
        return QString();  // cancelled
    });
    QVERIFY(!a.w.projectController()->saveAs());
    const QString docs = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    QVERIFY(!docs.isEmpty());
    QCOMPARE(suggested, docs + QStringLiteral("/dw_pw_block.tessera"));
    qunsetenv("TESSERA_SAMPLES");
}

void ProjectTest::unsavedPromptOnOpeningAnotherFile()
{
    Window a;
    QVERIFY(test::openAndWaitPlanned(a.w, m_model));
    QVERIFY(fuseAll(a.w));
    a.answer = ProjectController::UnsavedChoice::Cancel;
    QSignalSpy started(a.w.session(), &app::Session::started);
    a.w.openFile(sample("softmax.tsr"));
    QCOMPARE(a.prompts, 1);
    QCOMPARE(started.count(), 0);
    QCOMPARE(a.w.currentPath(), m_model);
    a.answer = ProjectController::UnsavedChoice::Discard;
    QVERIFY(test::openAndWaitPlanned(a.w, sample("softmax.tsr")));
    QCOMPARE(a.prompts, 2);
    QCOMPARE(a.w.currentPath(), sample("softmax.tsr"));
    QVERIFY(!a.w.isWindowModified());
    QCOMPARE(a.w.windowTitle(), QStringLiteral("softmax.tsr[*] \u2014 Tessera"));
}

void ProjectTest::autosaveIsOfferedForRecovery()
{
    const QString file = m_dir + QStringLiteral("/projects/auto.tessera");
    const QString dir = ProjectController::autosaveDir();
    std::string planJson;
    {
        Window a;
        QCOMPARE(a.w.projectController()->autosaveInterval(), 60000);
        QVERIFY(test::openAndWaitPlanned(a.w, m_model));
        QVERIFY(a.w.projectController()->saveAs(file));
        QVERIFY(a.w.projectController()->autosaveNow().isEmpty());  // nothing to keep while saved
        QVERIFY(fuseAll(a.w));
        planJson = schedule::planToJson(a.w.document()->plans()->plan());
        // The timer writes it after a while; here at once.
        a.w.projectController()->setAutosaveInterval(50);
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(a.w.projectController()->autosavePath()), 5000);
        const QString written = a.w.projectController()->autosavePath();
        QCOMPARE(QFileInfo(written).absolutePath(), dir);
        // The file it belongs to is untouched (not fused).
        auto onDisk = project::loadProject(file.toStdString());
        QVERIFY(onDisk.ok());
        QCOMPARE(onDisk->project.plan->groups.size(), std::size_t(3));
        // As if this instance crashed: the autosave belongs to a process that is gone.
        a.w.projectController()->setAutosaveInterval(600000);
        QVERIFY(QFile::rename(written, dir + QStringLiteral("/autosave-99999999.tessera")));
        QVERIFY(QFile::rename(dir + QStringLiteral("/autosave-") + QString::number(QCoreApplication::applicationPid()) +
                                  QStringLiteral(".json"),
                              dir + QStringLiteral("/autosave-99999999.json")));
        a.w.projectController()->setUnsavedPrompt([](const QString&) { return ProjectController::UnsavedChoice::Discard; });
    }
    QVERIFY(QFile::exists(dir + QStringLiteral("/autosave-99999999.tessera")));

    Window b;
    QString offered;
    b.w.projectController()->setRecoverPrompt([&](const QString& original, const QString&) {
        offered = original;
        return true;
    });
    QSignalSpy opened(b.w.projectController(), &ProjectController::projectOpened);
    QVERIFY(b.w.projectController()->checkForRecovery());
    QCOMPARE(offered, file);
    QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 60000);
    QVERIFY(QTest::qWaitFor([&] { return b.w.document()->plans()->ready() && !b.w.document()->plans()->isBusy(); }, 60000));
    QCOMPARE(schedule::planToJson(b.w.document()->plans()->plan()), planJson);
    QCOMPARE(b.w.projectController()->projectPath(), file);
    QCOMPARE(b.w.currentPath(), m_model);
    QVERIFY(b.w.isWindowModified());
    QVERIFY(!QFile::exists(dir + QStringLiteral("/autosave-99999999.tessera")));
    QVERIFY(!QFile::exists(dir + QStringLiteral("/autosave-99999999.json")));
    // Saved, it is the project again.
    QVERIFY(b.w.projectController()->save());
    auto onDisk = project::loadProject(file.toStdString());
    QVERIFY(onDisk.ok());
    QCOMPARE(onDisk->project.plan->groups.size(), std::size_t(1));

    // A second start finds nothing; a declined offer deletes the autosave.
    Window c;
    QVERIFY(!c.w.projectController()->checkForRecovery());
    writeAll(dir + QStringLiteral("/autosave-99999998.tessera"), readAll(file));
    int asked = 0;
    c.w.projectController()->setRecoverPrompt([&](const QString&, const QString&) {
        ++asked;
        return false;
    });
    QVERIFY(!c.w.projectController()->checkForRecovery());
    QCOMPARE(asked, 1);
    QVERIFY(!QFile::exists(dir + QStringLiteral("/autosave-99999998.tessera")));
    QVERIFY(c.w.currentPath().isEmpty());
}

void ProjectTest::corruptProjectIsAnErrorAndLeavesTheFile()
{
    Window a;
    QVERIFY(test::openAndWaitPlanned(a.w, m_model));
    const QString bad = m_dir + QStringLiteral("/projects/bad.tessera");
    const QByteArray bytes("{\n  \"format\": \"tessera-project\",\n  \"version\": 1,,\n}\n");
    writeAll(bad, bytes);
    QSignalSpy started(a.w.session(), &app::Session::started);
    a.w.openFile(bad);
    QCOMPARE(a.errors.size(), 1);
    QVERIFY2(a.errors[0].startsWith(bad + QStringLiteral(":3:16: error: not valid JSON")), qPrintable(a.errors[0]));
    QCOMPARE(readAll(bad), bytes);
    QCOMPARE(started.count(), 0);
    QCOMPARE(a.w.currentPath(), m_model);
    QVERIFY(a.w.projectController()->projectPath().isEmpty());
    QCOMPARE(a.w.windowTitle(), QStringLiteral("dw_pw_block.onnx[*] \u2014 Tessera"));

    // Another tool's JSON: the key is named.
    writeAll(bad, QByteArray("{\"format\": \"tessera-fusion-plan\", \"version\": 1}"));
    a.w.openFile(bad);
    QCOMPARE(a.errors.size(), 2);
    QVERIFY2(a.errors[1].contains(QStringLiteral("key 'format' is \"tessera-fusion-plan\"")), qPrintable(a.errors[1]));
}

void ProjectTest::newerVersionOpensReadOnly()
{
    auto p = project::newProject(m_model.toStdString());
    QVERIFY(p.ok());
    p->options.check = false;
    const QString file = m_dir + QStringLiteral("/projects/future.tessera");
    QVERIFY(project::saveProject(*p, file.toStdString()).ok());
    QByteArray bytes = readAll(file);
    bytes.replace("\"version\": 2,", "\"version\": 3,");
    bytes.replace("\"runs\": []", "\"runs\": [], \"holograms\": {\"x\": 1}");
    writeAll(file, bytes);

    Window a;
    QVERIFY(test::openAndWaitPlanned(a.w, file));
    QVERIFY(a.w.projectController()->isReadOnly());
    QCOMPARE(a.infos.size(), 1);
    QVERIFY2(a.infos[0].contains(QStringLiteral("project version 3; this one writes version 2")), qPrintable(a.infos[0]));
    QVERIFY(!a.w.projectController()->saveAction()->isEnabled());
    QVERIFY(a.w.projectController()->saveAsAction()->isEnabled());
    QCOMPARE(a.w.windowTitle(), QStringLiteral("future.tessera[*] (read-only) \u2014 Tessera"));
    QVERIFY(!a.w.run()->checkAction()->isChecked());
    // The version warning is in the Problems list.
    bool listed = false;
    for (int i = 0; i < a.w.problemsList()->count(); ++i)
        listed = listed || a.w.problemsList()->item(i)->text().contains(QStringLiteral("saving is disabled"));
    QVERIFY(listed);
    // Save goes to Save As (cancelled here): the file stays as it was.
    QVERIFY(fuseAll(a.w));
    QVERIFY(!a.w.projectController()->save());
    QCOMPARE(readAll(file), bytes);
    // Save As writes a version-1 copy, which is a normal project.
    const QString copy = m_dir + QStringLiteral("/projects/copy.tessera");
    QVERIFY(a.w.projectController()->saveAs(copy));
    QVERIFY(!a.w.projectController()->isReadOnly());
    QVERIFY(a.w.projectController()->saveAction()->isEnabled());
    QCOMPARE(a.w.windowTitle(), QStringLiteral("copy.tessera[*] \u2014 Tessera"));
    QCOMPARE(readAll(file), bytes);
}

void ProjectTest::missingSourceNamesThePath()
{
    auto p = project::newProject(m_model.toStdString());
    QVERIFY(p.ok());
    const QString file = m_dir + QStringLiteral("/projects/gone.tessera");
    QVERIFY(project::saveProject(*p, file.toStdString()).ok());
    QVERIFY(QFile::remove(m_model));
    Window a;
    QVERIFY(test::openAndWaitPlanned(a.w, sample("softmax.tsr")));
    a.w.openFile(file);
    QCOMPARE(a.errors.size(), 1);
    QVERIFY2(a.errors[0].contains(QStringLiteral("the project's source '%1' was not found").arg(m_model)),
             qPrintable(a.errors[0]));
    QCOMPARE(a.w.currentPath(), sample("softmax.tsr"));
}

void ProjectTest::plannerOnlyProjectPlansWithItsPlanner()
{
    // As `tessera-cli project new MODEL --plan hidet --hw a100` writes it: no plan, a planner.
    auto p = project::newProject(m_model.toStdString());
    QVERIFY(p.ok());
    p->planner = "hidet";
    p->hardware.name = "a100";
    const QString file = m_dir + QStringLiteral("/projects/hidet.tessera");
    QVERIFY(project::saveProject(*p, file.toStdString()).ok());
    Window a;
    QVERIFY(test::openAndWaitPlanned(a.w, file));
    QCOMPARE(a.w.document()->plans()->planner(), QStringLiteral("hidet"));
    QCOMPARE(a.w.document()->plans()->hardware().name, std::string("a100"));
    const schedule::FusionPlan& plan = a.w.document()->plans()->plan();
    QCOMPARE(plan.groups.size(), std::size_t(2));
    QCOMPARE(plan.groups[0].ops, (std::vector<std::string>{"dw_conv", "relu6"}));
    QCOMPARE(a.w.problemsList()->count(), 0);
    QVERIFY(!a.w.isWindowModified());
    // Saved from the window, the plan itself is stored.
    QVERIFY(a.w.projectController()->save());
    auto onDisk = project::loadProject(file.toStdString());
    QVERIFY(onDisk.ok());
    QVERIFY(onDisk->project.plan.has_value());
    QCOMPARE(onDisk->project.plan->groups.size(), std::size_t(2));
    QCOMPARE(onDisk->project.hardware.name, std::string("a100"));
    QVERIFY(onDisk->project.hardware.profileJson.empty());
}

void ProjectTest::dslProjectKeepsItsProgramText()
{
    const QString tsr = m_dir + QStringLiteral("/models/softmax.tsr");
    QVERIFY(QFile::copy(sample("softmax.tsr"), tsr));
    auto p = project::newProject(tsr.toStdString());
    QVERIFY(p.ok());
    QCOMPARE(p->source.programText, readAll(tsr).toStdString());
    // Edited in the window and saved with the project only: the .tsr still has the old text.
    p->source.programText += "\n# edited in the project\n";
    const QString file = m_dir + QStringLiteral("/projects/prog.tessera");
    QVERIFY(project::saveProject(*p, file.toStdString()).ok());
    Window a;
    QVERIFY(test::openAndWaitPlanned(a.w, file));
    QTRY_COMPARE_WITH_TIMEOUT(a.w.program()->programText(), QString::fromStdString(p->source.programText), 10000);
    // The project holds the text: it differs from the .tsr (said in the dock's title) but is not
    // an unsaved change.
    QVERIFY(!a.w.program()->programModified());
    QVERIFY(a.w.program()->programDiffersFromFile());
    QVERIFY(!a.w.projectController()->isModified());
    QVERIFY(QTest::qWaitFor([&] { return a.w.document()->plans()->ready() && !a.w.document()->plans()->isBusy(); }, 60000));
    QCOMPARE(a.w.projectController()->projectPath(), file);
    // Saving the project keeps the edited text (the .tsr is the Program dock's to save).
    a.w.program()->setProgramText(a.w.program()->programText() + QStringLiteral("# and once more\n"));
    QVERIFY(a.w.projectController()->isModified());
    QVERIFY(a.w.projectController()->save());
    QVERIFY(!a.w.projectController()->isModified());
    QVERIFY(!a.w.program()->programModified());
    auto onDisk = project::loadProject(file.toStdString());
    QVERIFY(onDisk.ok());
    QCOMPARE(onDisk->project.source.programText, p->source.programText + "# and once more\n");
    QCOMPARE(readAll(tsr), readAll(sample("softmax.tsr")));
    a.w.program()->setSavePrompt([](const QString&) { return app::ProgramController::SaveChoice::Discard; });
}

void ProjectTest::runGoesIntoTheHistory()
{
    const QString file = m_dir + QStringLiteral("/projects/runs.tessera");
    {
        Window a;
        QVERIFY(test::openAndWaitPlanned(a.w, m_model));
        QVERIFY(a.w.projectController()->saveAs(file));
        QSignalSpy finished(&a.w, &app::MainWindow::runFinished);
        a.w.run()->startRun();
        QVERIFY(QTest::qWaitFor([&] { return finished.count() > 0; }, 300000));
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        const project::Project& p = a.w.projectController()->project();
        QCOMPARE(p.runs.size(), std::size_t(1));
        QCOMPARE(p.runs[0].target, std::string("cpu"));
        QCOMPARE(p.runs[0].kernels.size(), std::size_t(3));
        QCOMPARE(p.runs[0].kernels[0].name, std::string("dw_conv"));
        QVERIFY(p.runs[0].kernels[0].medianSeconds > 0);
        QVERIFY(p.runs[0].checked);
        QVERIFY(a.w.isWindowModified());
        QVERIFY(a.w.projectController()->save());
        QVERIFY(!a.w.isWindowModified());
    }
    auto onDisk = project::loadProject(file.toStdString());
    QVERIFY(onDisk.ok());
    QCOMPARE(onDisk->project.runs.size(), std::size_t(1));
    const double median = onDisk->project.runs[0].kernels[1].medianSeconds;

    // Reopened, the last run fills the Timings dock until the next run.
    Window b;
    QVERIFY(test::openAndWaitPlanned(b.w, file));
    const views::TimingSnapshot& s = b.w.run()->timingPanel()->model()->snapshot();
    QCOMPARE(s.rows.size(), std::size_t(3));
    QCOMPARE(s.rows[1].kernel, onDisk->project.runs[0].kernels[1].name);
    QCOMPARE(s.rows[1].medianSeconds, median);
    QVERIFY2(b.w.run()->timingPanel()->summaryText().contains(QStringLiteral("(from the project)")),
             qPrintable(b.w.run()->timingPanel()->summaryText()));
    QVERIFY(b.w.run()->timingDock()->isVisible());
    // ... and puts its kernels on the roofline (same machine: this CPU's roofs, if any).
    b.w.roofline()->rooflineView()->flush();
    QStringList expected;
    for (const project::KernelMeasurement& k : onDisk->project.runs[0].kernels)
        expected << QString::fromStdString(k.name);
    QStringList drawn = b.w.roofline()->rooflineView()->kernelNames();
    drawn.sort();
    expected.sort();
    QCOMPARE(drawn, expected);
}

void ProjectTest::reopenedRunKeepsItsUnreliableTimings()
{
    // A run recorded with unreliable timings (runs[].timing_warning, the runner's words) says so
    // again when the project is reopened, in the Timings dock and under the Fusion Plan table; a
    // run without the key (older files, quiet runs) does not.
    const QByteArray head = R"J({"format": "tessera-project", "version": 2,
        "source": {"kind": "onnx", "path": "../models/dw_pw_block.onnx"}, "planner": "none", "plan": null,
        "target": "cpu", "options": {"threads": 4},
        "runs": [{"time": "2026-01-05T10:11:12Z", "target": "cpu", "device": "Test CPU", "threads": 4,
                  "checked": false, "total_s": 0.001,)J";
    const QByteArray kernels = R"J("kernels": [
            {"name": "dw_conv", "op_type": "Conv", "nodes": ["dw_conv"], "median_s": 1e-5},
            {"name": "relu6", "op_type": "Clip", "nodes": ["relu6"], "median_s": 2e-6},
            {"name": "pw_conv", "op_type": "Conv", "nodes": ["pw_conv"], "median_s": 3e-5}]}]})J";
    const QByteArray warning = R"J("timing_warning": "other processes used 37% of the CPUs' time while the kernels were timed: the times are likely inflated; rerun on a quiet machine, or with fewer threads than idle cores (--threads 1)",)J";
    const QString expected = QStringLiteral(
        "other processes used 37% of the CPUs' time while the kernels were timed: the times are likely inflated; "
        "rerun on a quiet machine, or with fewer threads than idle cores (Preferences > OpenMP threads)");

    const QString unreliable = m_dir + QStringLiteral("/projects/unreliable.tessera");
    writeAll(unreliable, head + warning + kernels);
    {
        Window a;
        QVERIFY(test::openAndWaitPlanned(a.w, unreliable));
        QVERIFY(a.errors.isEmpty());
        QCOMPARE(a.w.projectController()->project().runs.size(), std::size_t(1));
        QCOMPARE(a.w.run()->timingPanel()->model()->snapshot().timingWarning, expected.toStdString());
        QVERIFY2(a.w.run()->timingPanel()->summaryText().contains(QStringLiteral("Timings unreliable: ") + expected),
                 qPrintable(a.w.run()->timingPanel()->summaryText()));
        QTRY_COMPARE(a.w.fusion()->panel()->tableModel()->timingWarning(), expected);
        QCOMPARE(a.w.fusion()->panel()->timingWarningLabel()->text(),
                 QStringLiteral("\u26a0 Measured times unreliable: ") + expected);
    }

    const QString reliable = m_dir + QStringLiteral("/projects/reliable.tessera");
    writeAll(reliable, head + kernels);
    Window b;
    QVERIFY(test::openAndWaitPlanned(b.w, reliable));
    QVERIFY(b.errors.isEmpty());
    QCOMPARE(b.w.run()->timingPanel()->model()->snapshot().rows.size(), std::size_t(3));
    QCOMPARE(b.w.run()->timingPanel()->model()->snapshot().timingWarning, std::string());
    QVERIFY2(!b.w.run()->timingPanel()->summaryText().contains(QStringLiteral("unreliable")),
             qPrintable(b.w.run()->timingPanel()->summaryText()));
    QVERIFY(b.w.fusion()->panel()->tableModel()->timingWarning().isEmpty());
}

QTEST_MAIN(ProjectTest)
#include "project_test.moc"
