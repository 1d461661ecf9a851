// The Program dock and Live mode of the main window (Qt Test, offscreen): a .tsr opens editable,
// an edit re-parses after the debounce and the graph follows (keeping its zoom), a syntax or
// semantic error keeps the last good model and the text and shows the error inline and in
// Problems (a click jumps to it), fixing it clears it; an ONNX model shows as read-only DSL and
// Save Program As turns it into a program; linked selection; unsaved-text prompts; Live mode
// re-runs after edits and plan changes and reports failures without a dialog. Live runs need
// tessera-runner (TESSERA_RUNNER, set by CMake) and `c++`.
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QListWidget>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QToolBar>
#include <QUndoStack>

#include "app/gui/document.h"
#include "app/gui/fusion_controller.h"
#include "app/gui/main_window.h"
#include "app/gui/plan_session.h"
#include "app/gui/program_controller.h"
#include "app/gui/run_session.h"
#include "app/gui/session.h"
#include "app/gui/workspace_controller.h"
#include "views/graph/graph_view.h"
#include "views/program/program_editor.h"
#include "views/program/program_panel.h"
#include "tests/app/gui/gui_test_util.h"

using namespace tessera;

namespace {

const QString kSamples = QStringLiteral(TESSERA_SAMPLES);

QString readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

/// A copy of samples/<name> in `dir` (edits and saves must not touch the samples).
QString copySample(const QTemporaryDir& dir, const QString& name)
{
    const QString to = dir.filePath(name);
    QFile::remove(to);
    QFile::copy(kSamples + QLatin1Char('/') + name, to);
    QFile(to).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
    return to;
}

int operatorCount(const app::MainWindow& w)
{
    const views::GraphSnapshot* s = w.graphView()->snapshot();
    return s != nullptr ? s->operatorCount : -1;
}

/// 1-based line of the first line of `text` that starts with `prefix`, 0 when none.
int lineStartingWith(const QString& text, const QString& prefix)
{
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (int i = 0; i < lines.size(); ++i) {
        if (lines[i].startsWith(prefix))
            return i + 1;
    }
    return 0;
}

QListWidgetItem* problemContaining(const app::MainWindow& w, const QString& part)
{
    for (int i = 0; i < w.problemsList()->count(); ++i) {
        if (w.problemsList()->item(i)->text().contains(part))
            return w.problemsList()->item(i);
    }
    return nullptr;
}

int errorCount(const app::MainWindow& w)
{
    int n = 0;
    for (int i = 0; i < w.problemsList()->count(); ++i)
        n += w.problemsList()->item(i)->text().contains(QLatin1String(": error: ")) ? 1 : 0;
    return n;
}

void clickAt(views::ProgramEditor* editor, int line, int column)
{
    QTextCursor at(editor->document());
    at.setPosition(editor->positionOf(line, column));
    QTest::mouseClick(editor->viewport(), Qt::LeftButton, {}, editor->cursorRect(at).center());
}

const char* const kAddRelu = "z = Relu(y);\noutput z;\n";

}  // namespace

class ProgramTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("TesseraTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tessera_gui_program_tests"));
        QVERIFY(m_dir.isValid());
    }

    void tsrOpensEditableInTheDock()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList& lines) { QFAIL(qPrintable(lines.join('\n'))); });
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.program()->programDock()->isHidden());
        const QString path = copySample(m_dir, QStringLiteral("softmax.tsr"));
        QVERIFY(test::openAndWaitLoaded(w, path));

        QVERIFY(w.program()->programDock()->isVisible());
        QCOMPARE(w.program()->programText(), readFile(path));
        QCOMPARE(w.program()->programPath(), path);
        QVERIFY(!w.program()->programModified());
        QVERIFY(!w.program()->programEditor()->isReadOnly());
        QVERIFY(!w.program()->programPanel()->bannerVisible());
        QCOMPARE(w.program()->programDock()->windowTitle(), QStringLiteral("Program \u2014 softmax.tsr"));
        QVERIFY(w.program()->saveProgramAction()->isEnabled());

        // One statement per drawn node: 5 operators, the input x, the outputs y and y_ref, plus
        // the schedule statement (of node y).
        const std::vector<views::ProgramStatement>& st = w.program()->programEditor()->statements();
        QCOMPARE(st.size(), std::size_t(9));
        const int sLine = lineStartingWith(w.program()->programText(), QStringLiteral("s[i]"));
        QVERIFY(sLine > 0);
        bool found = false;
        for (const views::ProgramStatement& s : st) {
            if (s.node == "s") {
                QCOMPARE(s.kind, views::SnapshotNodeKind::Operator);
                QCOMPARE(s.firstLine, sLine);
                QCOMPARE(s.firstColumn, 1);
                found = true;
            }
        }
        QVERIFY(found);

        QCOMPARE(w.program()->programDock()->toggleViewAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_E));
        QCOMPARE(w.program()->saveProgramAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_S));
        QCOMPARE(w.program()->liveAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_L));
    }

    void programBesideWelcomeSharesTheArea()
    {
        // A program opened while the Welcome panel is up: the two become tabs (the editor in
        // front, full height) instead of splitting the left side into a few lines each.
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList& lines) { QFAIL(qPrintable(lines.join('\n'))); });
        w.resize(1400, 900);
        w.show();
        w.findChild<QAction*>(QStringLiteral("welcomeAction"))->trigger();
        QVERIFY(w.workspace()->welcomeDock()->isVisible());
        QVERIFY(test::openAndWaitLoaded(w, copySample(m_dir, QStringLiteral("softmax.tsr"))));
        QVERIFY(w.program()->programDock()->isVisible());
        QVERIFY(w.tabifiedDockWidgets(w.workspace()->welcomeDock()).contains(w.program()->programDock()));
        QTRY_VERIFY(w.program()->programDock()->height() > w.height() / 2);
    }

    void editReparsesAndTheGraphFollows()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList& lines) { QFAIL(qPrintable(lines.join('\n'))); });
        w.resize(1400, 900);
        w.show();
        const QString path = copySample(m_dir, QStringLiteral("softmax.tsr"));
        QVERIFY(test::openAndWaitLoaded(w, path));
        QCOMPARE(operatorCount(w), 5);
        w.graphView()->setZoom(0.7);

        QSignalSpy parsed(w.program(), &app::ProgramController::programParsed);
        const QString original = w.program()->programText();
        // Three edits in a row: one parse, of the last text.
        w.program()->setProgramText(original + QStringLiteral("# one\n"));
        w.program()->setProgramText(original + QStringLiteral("# two\n"));
        const QString edited = original + QLatin1String(kAddRelu);
        w.program()->setProgramText(edited);
        QVERIFY(w.program()->programModified());
        QCOMPARE(w.program()->programDock()->windowTitle(), QStringLiteral("Program \u2014 softmax.tsr*"));
        QCOMPARE(parsed.count(), 0);  // debounced
        QTRY_COMPARE_WITH_TIMEOUT(operatorCount(w), 6, 30000);
        QCOMPARE(parsed.count(), 1);
        QCOMPARE(parsed.first().at(0).toBool(), true);
        QVERIFY(w.model()->graph.findNode("z") != ir::kNoNode);
        QCOMPARE(qRound(w.graphView()->zoom() * 100), 70);
        QCOMPARE(w.program()->programText(), edited);
        QVERIFY(w.program()->programModified());
        QCOMPARE(w.currentPath(), path);

        // A comment-only edit keeps the model (and everything computed for it).
        const std::shared_ptr<const ir::Model> model = w.model();
        w.program()->setProgramText(edited + QStringLiteral("# just a comment\n"));
        QTRY_COMPARE_WITH_TIMEOUT(parsed.count(), 2, 30000);
        QCOMPARE(w.model(), model);
    }

    void undoInTheEditorUndoesText()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList& lines) { QFAIL(qPrintable(lines.join('\n'))); });
        w.show();
        QVERIFY(test::openAndWaitLoaded(w, copySample(m_dir, QStringLiteral("softmax.tsr"))));
        app::PlanSession* plans = w.document()->plans();
        QTRY_VERIFY_WITH_TIMEOUT(plans->ready() && !plans->isBusy(), 60000);
        plans->choosePlanner(plans->planner() == QLatin1String("none") ? QStringLiteral("hidet") : QStringLiteral("none"));
        QTRY_VERIFY_WITH_TIMEOUT(!plans->isBusy() && plans->undoStack()->count() == 1, 60000);
        QVERIFY(w.fusion()->undoAction()->isEnabled());  // Edit > Undo (Ctrl+Z) would undo the plan

        // With the editor focused, Ctrl+Z undoes typing, not the plan.
        QApplication::setActiveWindow(&w);
        views::ProgramEditor* editor = w.program()->programEditor();
        editor->setFocus();
        const QString original = w.program()->programText();
        editor->moveCursor(QTextCursor::End);
        QTest::keyClicks(editor, QStringLiteral("#x"));
        QCOMPARE(w.program()->programText(), original + QStringLiteral("#x"));
        QTest::keyClick(editor, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(w.program()->programText(), original);
        QCOMPARE(plans->undoStack()->index(), 1);
    }

    void errorsKeepTheLastGoodModelAndTheText()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList& lines) { QFAIL(qPrintable(lines.join('\n'))); });
        w.resize(1400, 900);
        w.show();
        const QString path = copySample(m_dir, QStringLiteral("softmax.tsr"));
        QVERIFY(test::openAndWaitLoaded(w, path));
        const std::shared_ptr<const ir::Model> good = w.model();
        const views::GraphSnapshot* snapshot = w.graphView()->snapshot();
        const QString original = w.program()->programText();
        const int yLine = lineStartingWith(original, QStringLiteral("y[i, j]"));
        QVERIFY(yLine > 0);
        QSignalSpy parsed(w.program(), &app::ProgramController::programParsed);

        // A syntax error: the ';' after y's definition is missing (reported one past the end).
        QStringList lines = original.split(QLatin1Char('\n'));
        const QString yText = lines[yLine - 1].trimmed();
        QVERIFY(yText.endsWith(QLatin1Char(';')));
        lines[yLine - 1] = yText.chopped(1);
        const QString broken = lines.join(QLatin1Char('\n'));
        w.program()->setProgramText(broken);
        QTRY_COMPARE_WITH_TIMEOUT(parsed.count(), 1, 30000);
        QCOMPARE(parsed.first().at(0).toBool(), false);
        QCOMPARE(w.model(), good);
        QCOMPARE(w.graphView()->snapshot(), snapshot);
        QCOMPARE(operatorCount(w), 5);
        QCOMPARE(w.program()->programText(), broken);
        QVERIFY(w.program()->programModified());
        const int column = static_cast<int>(yText.size());  // one past the last character
        const QString where = QStringLiteral("softmax.tsr:%1:%2: error: expected ';'").arg(yLine).arg(column);
        QListWidgetItem* item = problemContaining(w, where);
        QVERIFY2(item != nullptr, qPrintable(where));
        QCOMPARE(item->data(Qt::UserRole + 1).toInt(), yLine);
        QCOMPARE(item->data(Qt::UserRole + 2).toInt(), column);
        views::ProgramEditor* editor = w.program()->programEditor();
        QCOMPARE(editor->diagnostics().size(), std::size_t(1));
        QCOMPARE(editor->markerSeverity(yLine), static_cast<int>(support::Severity::Error));
        // The underline sits on the line's last character (']').
        QCOMPARE(editor->diagnosticSelections().at(0).cursor.selectionStart(), editor->positionOf(yLine, column - 1));
        QCOMPARE(editor->diagnosticSelections().at(0).cursor.selectedText(), QStringLiteral("]"));

        // A click on the problem puts the cursor there.
        editor->moveCursor(QTextCursor::Start);
        QVERIFY(w.problemsList()->isVisible());
        QTest::mouseClick(w.problemsList()->viewport(), Qt::LeftButton, {},
                          w.problemsList()->visualItemRect(item).center());
        QCOMPARE(editor->textCursor().blockNumber() + 1, yLine);
        QCOMPARE(editor->textCursor().positionInBlock(), column - 1);

        // A semantic error: an undefined input, at its line and column.
        const QString undefined = original + QStringLiteral("w = Relu(q);\n");
        const int wLine = lineStartingWith(undefined, QStringLiteral("w = Relu"));
        w.program()->setProgramText(undefined);
        QTRY_COMPARE_WITH_TIMEOUT(parsed.count(), 2, 30000);
        QCOMPARE(parsed.last().at(0).toBool(), false);
        QVERIFY(problemContaining(w, QStringLiteral("softmax.tsr:%1:10: error: input 'q' is not defined").arg(wLine)));
        QCOMPARE(errorCount(w), 1);
        QCOMPARE(editor->diagnosticSelections().at(0).cursor.selectedText(), QStringLiteral("q"));
        QCOMPARE(w.model(), good);
        QCOMPARE(w.program()->programText(), undefined);

        // Fixed: the error goes; the same tokens as the model on screen, so the model stays.
        w.program()->setProgramText(original);
        QTRY_COMPARE_WITH_TIMEOUT(parsed.count(), 3, 30000);
        QCOMPARE(parsed.last().at(0).toBool(), true);
        QCOMPARE(errorCount(w), 0);
        QCOMPARE(editor->diagnostics().size(), std::size_t(0));
        QCOMPARE(editor->markerSeverity(yLine), -1);
        QCOMPARE(w.model(), good);
    }

    void selectionIsLinked()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList& lines) { QFAIL(qPrintable(lines.join('\n'))); });
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(test::openAndWaitLoaded(w, copySample(m_dir, QStringLiteral("softmax.tsr"))));
        views::ProgramEditor* editor = w.program()->programEditor();
        views::GraphView* view = w.graphView();
        const QString text = w.program()->programText();

        view->selectNode(view->operatorIdByName("s"));
        QVERIFY(editor->highlightedStatement() >= 0);
        const views::ProgramStatement& s = editor->statements()[static_cast<std::size_t>(editor->highlightedStatement())];
        QCOMPARE(s.node, std::string("s"));
        QCOMPARE(s.firstLine, lineStartingWith(text, QStringLiteral("s[i]")));
        for (const views::SnapshotNode& n : view->snapshot()->nodes) {
            if (n.kind == views::SnapshotNodeKind::GraphInput)
                view->selectNode(n.id);
        }
        QCOMPARE(editor->statements()[static_cast<std::size_t>(editor->highlightedStatement())].firstLine,
                 lineStartingWith(text, QStringLiteral("input x")));

        // A click into e's definition selects e; into Softmax's call selects y_ref.
        clickAt(editor, lineStartingWith(text, QStringLiteral("e[i, j]")), 12);
        QCOMPARE(view->selectedNodeId(), view->operatorIdByName("e"));
        clickAt(editor, lineStartingWith(text, QStringLiteral("y_ref =")), 10);
        QCOMPARE(view->selectedNodeId(), view->operatorIdByName("y_ref"));
        QCOMPARE(editor->statements()[static_cast<std::size_t>(editor->highlightedStatement())].node, std::string("y_ref"));
    }

    void onnxShowsReadOnlyDslUntilSavedAsProgram()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList& lines) { QFAIL(qPrintable(lines.join('\n'))); });
        w.resize(1400, 900);
        w.show();
        QVERIFY(test::openAndWaitLoaded(w, kSamples + QStringLiteral("/dw_pw_block.onnx")));
        const int ops = operatorCount(w);
        QVERIFY(ops > 2);
        QVERIFY(w.program()->programDock()->isHidden());  // not opened for a model
        w.program()->programDock()->toggleViewAction()->trigger();
        QVERIFY(w.program()->programDock()->isVisible());
        QVERIFY(w.program()->programEditor()->isReadOnly());
        QVERIFY(w.program()->programPanel()->bannerVisible());
        QCOMPARE(w.program()->programPanel()->bannerText(),
                 QStringLiteral("Exported from ONNX: File > Save Program As... to edit it as a program"));
        QVERIFY2(w.program()->programText().startsWith(QStringLiteral("tessera 0.1;\n")),
                 qPrintable(w.program()->programText().left(200)));
        QVERIFY(w.program()->programText().contains(QStringLiteral("onnx(\"dw_pw_block.onnx\", ")));
        QVERIFY(!w.program()->programModified());
        QVERIFY(!w.program()->saveProgramAction()->isEnabled());
        QVERIFY(w.program()->saveProgramAsAction()->isEnabled());
        QCOMPARE(w.program()->programPath(), QString());
        const QString before = w.program()->programText();
        w.program()->setProgramText(QStringLiteral("nothing"));
        QCOMPARE(w.program()->programText(), before);
        // Linked selection works on the print too.
        const views::SnapshotNode* conv = nullptr;
        for (const views::SnapshotNode& n : w.graphView()->snapshot()->nodes) {
            if (n.kind == views::SnapshotNodeKind::Operator && n.opType == "Conv" && conv == nullptr)
                conv = &n;
        }
        QVERIFY(conv != nullptr);
        w.graphView()->selectNode(conv->id);
        QVERIFY(w.program()->programEditor()->highlightedStatement() >= 0);

        // Not below the model's folder: refused (a program reads files in its folder or below).
        QStringList refused;
        w.setErrorReporter([&](const QString&, const QStringList& lines) { refused += lines; });
        QVERIFY(!w.program()->saveProgramAs(m_dir.filePath(QStringLiteral("elsewhere.tsr"))));
        QCOMPARE(refused.size(), 1);
        QVERIFY2(refused.first().contains(QStringLiteral("dw_pw_block.onnx")), qPrintable(refused.first()));
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("elsewhere.tsr"))));
        QVERIFY(w.program()->programEditor()->isReadOnly());
    }

    void savedAsProgramReferencesTheModelsWeights()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList& lines) { QFAIL(qPrintable(lines.join('\n'))); });
        w.show();
        QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("models"))));
        const QString onnx = m_dir.filePath(QStringLiteral("models/dw_pw_block.onnx"));
        QFile::remove(onnx);
        QVERIFY(QFile::copy(kSamples + QStringLiteral("/dw_pw_block.onnx"), onnx));
        QVERIFY(test::openAndWaitLoaded(w, onnx));
        const int ops = operatorCount(w);

        // Saved as a program in the folder above: editable, weights referenced from there.
        const QString saved = m_dir.filePath(QStringLiteral("dw.tsr"));
        QSignalSpy finished(w.session(), &app::Session::finished);
        QVERIFY(w.program()->saveProgramAs(saved));
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.first().at(1).toBool(), true);
        QCOMPARE(w.program()->programPath(), saved);
        QCOMPARE(w.currentPath(), saved);
        QVERIFY(!w.program()->programEditor()->isReadOnly());
        QVERIFY(!w.program()->programPanel()->bannerVisible());
        QCOMPARE(operatorCount(w), ops);
        QVERIFY(readFile(saved).contains(QStringLiteral("onnx(\"models/dw_pw_block.onnx\", ")));
        QVERIFY(!w.program()->programModified());
        QCOMPARE(w.program()->programText(), readFile(saved));
    }

    void unsavedEditsAreAskedAbout()
    {
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList& lines) { QFAIL(qPrintable(lines.join('\n'))); });
        w.show();
        const QString path = copySample(m_dir, QStringLiteral("softmax.tsr"));
        const QString other = copySample(m_dir, QStringLiteral("matmul_tiled.tsr"));
        QVERIFY(test::openAndWaitLoaded(w, path));
        const QString original = readFile(path);
        QStringList asked;
        app::ProgramController::SaveChoice answer = app::ProgramController::SaveChoice::Cancel;
        w.program()->setSavePrompt([&](const QString& name) {
            asked << name;
            return answer;
        });

        // Nothing modified: no question.
        QVERIFY(w.program()->maybeSaveProgram());
        QVERIFY(asked.isEmpty());

        const QString edited = original + QStringLiteral("# edited\n");
        w.program()->setProgramText(edited);
        const quint64 gen = w.session()->generation();
        w.openFile(other);  // cancelled
        QCOMPARE(asked, QStringList{QStringLiteral("softmax.tsr")});
        QCOMPARE(w.session()->generation(), gen);
        QVERIFY(w.program()->programModified());
        QVERIFY(!w.close());
        QVERIFY(w.isVisible());

        // Save: written, then the other file opens.
        answer = app::ProgramController::SaveChoice::Save;
        QVERIFY(test::openAndWaitLoaded(w, other));
        QCOMPARE(readFile(path), edited);
        QCOMPARE(w.program()->programPath(), other);
        QVERIFY(!w.program()->programModified());

        // Discard: the file stays as it was.
        const QString otherText = readFile(other);
        w.program()->setProgramText(otherText + QStringLiteral("# discarded\n"));
        answer = app::ProgramController::SaveChoice::Discard;
        QVERIFY(test::openAndWaitLoaded(w, path));
        QCOMPARE(readFile(other), otherText);

        // File > Save Program writes the text and clears the mark.
        w.program()->setProgramText(edited + QStringLiteral("# saved\n"));
        QVERIFY(w.program()->programDock()->windowTitle().endsWith(QLatin1Char('*')));
        w.program()->saveProgramAction()->trigger();
        QCOMPARE(readFile(path), edited + QStringLiteral("# saved\n"));
        QVERIFY(!w.program()->programModified());
        QVERIFY(!w.program()->programDock()->windowTitle().endsWith(QLatin1Char('*')));
        const int questions = static_cast<int>(asked.size());
        QVERIFY(w.close());  // nothing to ask
        QCOMPARE(asked.size(), questions);
    }

    void dockDrawsErrorsAndExportedModels()
    {
        // With TESSERA_SCREENSHOT_DIR set (best under Xvfb with QT_QPA_PLATFORM=xcb), the window
        // is saved there as program-error.png and program-onnx.png.
        const QString shots = qEnvironmentVariable("TESSERA_SCREENSHOT_DIR");
        app::MainWindow w;
        w.setErrorReporter([](const QString&, const QStringList&) {});
        w.program()->setSavePrompt([](const QString&) { return app::ProgramController::SaveChoice::Discard; });
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(test::openAndWaitLoaded(w, copySample(m_dir, QStringLiteral("dw_pw_block.tsr"))));
        w.resizeDocks({w.program()->programDock()}, {660}, Qt::Horizontal);
        w.graphView()->selectNode(w.graphView()->operatorIdByName("pw"), true);
        QSignalSpy parsed(w.program(), &app::ProgramController::programParsed);
        QString text = w.program()->programText();
        QVERIFY(text.contains(QStringLiteral("pads=[1, 1, 1, 1]")));
        QVERIFY(text.contains(QStringLiteral("conv2d(r, wp, _)")));
        text.replace(QStringLiteral("pads=[1, 1, 1, 1]"), QStringLiteral("pads=[1, 1, 1]"));
        text.replace(QStringLiteral("conv2d(r, wp, _)"), QStringLiteral("conv2d(r, wp, _, dilation=[1, 1])"));
        w.program()->setProgramText(text);
        QTRY_COMPARE_WITH_TIMEOUT(parsed.count(), 1, 30000);
        // One error (3 pads for 2 spatial axes) and one warning (an attribute Conv does not have).
        QCOMPARE(errorCount(w), 1);
        QVERIFY(problemContaining(w, QStringLiteral(": warning: Conv has no attribute 'dilation'")));
        views::ProgramEditor* editor = w.program()->programEditor();
        const int line = lineStartingWith(text, QStringLiteral("dw = Conv"));
        const int warnLine = lineStartingWith(text, QStringLiteral("pw = conv2d"));
        QCOMPARE(editor->markerSeverity(line), static_cast<int>(support::Severity::Error));
        QCOMPARE(editor->markerSeverity(warnLine), static_cast<int>(support::Severity::Warning));
        QVERIFY(editor->diagnosticSelections().at(0).cursor.selectedText().startsWith(QStringLiteral("Conv(x, wd")));
        QVERIFY(editor->diagnosticTextAt(editor->positionOf(warnLine, 25)).contains(QStringLiteral("did you mean 'dilations'?")));
        // The statement of the node selected before the edit stays highlighted.
        QCOMPARE(editor->statements()[static_cast<std::size_t>(editor->highlightedStatement())].node, std::string("pw"));
        editor->goTo(line, 44);
        QTest::qWait(100);
        const QRect marker = editor->markerRect(line);
        QVERIFY(!marker.isEmpty());
        const QColor c = editor->grab().toImage().pixelColor(marker.center().x(), marker.top() + 2);
        QVERIFY2(c.red() > 180 && c.green() < 90, qPrintable(c.name()));
        if (!shots.isEmpty())
            QVERIFY(w.grab().save(shots + QStringLiteral("/program-error.png")));

        QVERIFY(test::openAndWaitLoaded(w, kSamples + QStringLiteral("/mobilenet_v2.onnx")));
        w.program()->programDock()->show();
        w.resizeDocks({w.program()->programDock()}, {560}, Qt::Horizontal);
        const views::GraphSnapshot* snap = w.graphView()->snapshot();
        int depthwise = -1;
        for (const views::SnapshotNode& n : snap->nodes) {
            if (n.kind != views::SnapshotNodeKind::Operator || n.opType != "Conv" || depthwise >= 0)
                continue;
            const ir::Attribute* group = w.model()->graph.node(n.irNode).attr("group");
            if (group != nullptr && group->i > 1)
                depthwise = n.id;
        }
        QVERIFY(depthwise >= 0);
        w.graphView()->selectNode(depthwise, true);
        QVERIFY(editor->highlightedStatement() >= 0);
        const views::ProgramStatement& st = editor->statements()[static_cast<std::size_t>(editor->highlightedStatement())];
        QVERIFY(!editor->markerRect(st.firstLine).isEmpty());  // scrolled into view
        QVERIFY(editor->isReadOnly());
        QTest::qWait(200);
        if (!shots.isEmpty())
            QVERIFY(w.grab().save(shots + QStringLiteral("/program-onnx.png")));
    }

    void liveRunsAgainAfterEditsAndPlanChanges()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("c++")).isEmpty())
            QSKIP("no C++ compiler (c++) on PATH: generated kernels cannot be compiled");
        app::MainWindow w;
        QStringList dialogs;
        w.setErrorReporter([&](const QString&, const QStringList& lines) { dialogs += lines; });
        w.resize(1400, 900);
        w.show();
        const QString path = copySample(m_dir, QStringLiteral("softmax.tsr"));
        QVERIFY(test::openAndWaitLoaded(w, path));
        auto* tools = w.findChild<QToolBar*>(QStringLiteral("mainToolBar"));
        QVERIFY(tools != nullptr && tools->actions().contains(w.program()->liveAction()));
        QVERIFY(w.program()->liveAction()->isCheckable());

        QSignalSpy started(w.document()->runs(), &app::RunSession::started);
        QSignalSpy shown(&w, &app::MainWindow::runFinished);
        w.program()->setLive(true);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 600000);
        QCOMPARE(shown.last().at(0).toBool(), true);
        QCOMPARE(started.count(), 1);
        const app::RunOutcome& first = w.document()->runs()->lastOutcome();
        QVERIFY(first.ok && first.report != nullptr);
        QCOMPARE(first.model, w.model());

        // An edit: parsed, then compiled and run again.
        const QString original = w.program()->programText();
        w.program()->setProgramText(original + QLatin1String(kAddRelu));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, 600000);
        QCOMPARE(shown.last().at(0).toBool(), true);
        QCOMPARE(started.count(), 2);
        const app::RunOutcome& second = w.document()->runs()->lastOutcome();
        QCOMPARE(second.model, w.model());
        bool ranZ = false;
        for (const pipeline::KernelReport& k : second.report->kernels)
            ranZ = ranZ || k.name == "z";
        QVERIFY(ranZ);

        // A broken edit starts nothing; a comment edit neither.
        w.program()->setProgramText(original + QStringLiteral("z = Relu(y)\n"));
        QSignalSpy parsed(w.program(), &app::ProgramController::programParsed);
        QTRY_COMPARE_WITH_TIMEOUT(parsed.count(), 1, 30000);
        QTest::qWait(600);
        QCOMPARE(started.count(), 2);

        // Another plan: run again.
        w.program()->setProgramText(original + QLatin1String(kAddRelu));
        QTRY_COMPARE_WITH_TIMEOUT(parsed.count(), 2, 30000);
        QTest::qWait(600);
        QCOMPARE(started.count(), 2);  // the same program as the last run
        const QString planner = w.document()->plans()->planner() == QLatin1String("none") ? QStringLiteral("hidet")
                                                                                     : QStringLiteral("none");
        w.document()->plans()->choosePlanner(planner);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 3, 600000);
        QCOMPARE(started.count(), 3);
        QCOMPARE(w.document()->runs()->lastOutcome().settings.compile.plan.has_value(), true);

        // A compile that fails: reported in the status bar and Problems, no dialog, Live stays on.
        const QByteArray old = qgetenv("TESSERA_CXX");
        qputenv("TESSERA_CXX", "tessera-no-such-compiler");
        w.program()->setProgramText(original + QStringLiteral("z2 = Exp(y);\noutput z2;\n"));
        const bool done = QTest::qWaitFor([&] { return shown.count() == 4; }, 600000);
        if (old.isEmpty())
            qunsetenv("TESSERA_CXX");
        else
            qputenv("TESSERA_CXX", old);
        QVERIFY(done);
        QCOMPARE(shown.last().at(0).toBool(), false);
        QVERIFY2(w.run()->runStatusText().startsWith(QStringLiteral("Run failed: ")), qPrintable(w.run()->runStatusText()));
        QVERIFY(problemContaining(w, QStringLiteral("tessera-no-such-compiler")) != nullptr);
        QVERIFY(dialogs.isEmpty());
        QVERIFY(w.program()->liveAction()->isChecked());

        // Off: edits no longer run.
        w.program()->setLive(false);
        w.program()->setProgramText(original);
        QTRY_COMPARE_WITH_TIMEOUT(parsed.count(), 4, 30000);
        QTest::qWait(600);
        QCOMPARE(started.count(), 4);
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(ProgramTest)
#include "program_test.moc"
