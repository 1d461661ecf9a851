// The Program dock's editor (views/program, offscreen): DSL syntax colours, the gutter's width,
// diagnostics -> wavy underlines at their line:column (byte columns of UTF-8 text), gutter
// markers and tooltips, the statement highlight and click-to-node, and programEdited only for
// the user's edits.
#include <QSignalSpy>
#include <QTest>
#include <QTextBlock>
#include <QTextLayout>

#include "views/program/dsl_highlighter.h"
#include "views/program/program_editor.h"
#include "views/program/program_panel.h"

using namespace tessera;
using views::DslHighlighter;
using views::ProgramEditor;

namespace {

/// The highlighter's format at column `column` of line `line` (0-based), or an empty format.
QTextCharFormat formatAt(const QTextDocument& doc, int line, int column)
{
    const QTextBlock block = doc.findBlockByNumber(line);
    for (const QTextLayout::FormatRange& r : block.layout()->formats()) {
        if (column >= r.start && column < r.start + r.length)
            return r.format;
    }
    return {};
}

support::Diagnostic diagnostic(support::Severity s, int line, int column, int endLine, int endColumn,
                               const std::string& message)
{
    support::Diagnostic d;
    d.severity = s;
    d.file = "p.tsr";
    d.begin = {line, column};
    d.end = {endLine, endColumn};
    d.message = message;
    return d;
}

bool hasFullWidthLine(const ProgramEditor& e, int line, const QColor& color)
{
    for (const QTextEdit::ExtraSelection& s : e.extraSelections()) {
        if (s.format.property(QTextFormat::FullWidthSelection).toBool() && s.cursor.blockNumber() + 1 == line &&
            s.format.background().color() == color)
            return true;
    }
    return false;
}

}  // namespace

class ProgramEditorTest : public QObject {
    Q_OBJECT
private slots:
    void highlightsTokensByKind()
    {
        ProgramEditor e;
        e.setProgram(QStringLiteral("tessera 0.1;\n"
                                    "input x: f32[4, 10];  # rows\n"
                                    "m[i] = max(j) x[i, j];\n"
                                    "y = Relu(x) as \"a # b\";\n"
                                    "`output` = Softmax(y, axis=1);\n"
                                    "schedule m { target cuda; grid = spatial(4); }\n"));
        const QTextDocument& doc = *e.document();
        DslHighlighter h(nullptr);
        auto is = [&](int line, int col, DslHighlighter::Kind kind) {
            return formatAt(doc, line, col).foreground() == h.format(kind).foreground() &&
                   formatAt(doc, line, col).fontWeight() == h.format(kind).fontWeight();
        };
        QVERIFY(is(0, 0, DslHighlighter::Kind::Keyword));     // tessera
        QVERIFY(is(0, 8, DslHighlighter::Kind::Number));      // 0.1
        QVERIFY(is(1, 0, DslHighlighter::Kind::Keyword));     // input
        QVERIFY(is(1, 9, DslHighlighter::Kind::Type));        // f32
        QVERIFY(is(1, 13, DslHighlighter::Kind::Number));     // 4
        QVERIFY(is(1, 22, DslHighlighter::Kind::Comment));    // # rows
        QVERIFY(is(1, 27, DslHighlighter::Kind::Comment));
        QVERIFY(!formatAt(doc, 1, 6).foreground().style());   // x: plain
        QVERIFY(is(2, 7, DslHighlighter::Kind::Contextual));  // max
        QVERIFY(is(3, 4, DslHighlighter::Kind::Op));          // Relu
        QVERIFY(is(3, 12, DslHighlighter::Kind::Keyword));    // as
        // A '#' inside a string is part of the string, not a comment.
        QVERIFY(is(3, 15, DslHighlighter::Kind::String));
        QVERIFY(is(3, 18, DslHighlighter::Kind::String));
        // A reserved word in backticks is a name.
        QVERIFY(is(4, 1, DslHighlighter::Kind::QuotedName));
        QVERIFY(is(4, 11, DslHighlighter::Kind::Op));         // Softmax
        QVERIFY(is(5, 0, DslHighlighter::Kind::Keyword));     // schedule
        QVERIFY(is(5, 13, DslHighlighter::Kind::Contextual)); // target
        QVERIFY(is(5, 20, DslHighlighter::Kind::Contextual)); // cuda
        QVERIFY(is(5, 33, DslHighlighter::Kind::Contextual)); // spatial
        QCOMPARE(DslHighlighter::wordKind(QStringLiteral("fuse")), DslHighlighter::Kind::Keyword);
        QCOMPARE(DslHighlighter::wordKind(QStringLiteral("bf16")), DslHighlighter::Kind::Type);
        QCOMPARE(DslHighlighter::wordKind(QStringLiteral("Conv")), DslHighlighter::Kind::Plain);
        QVERIFY(h.format(DslHighlighter::Kind::Comment).fontItalic());
    }

    void gutterWidthFollowsTheLineCount()
    {
        ProgramEditor e;
        e.resize(600, 400);
        e.setProgram(QStringLiteral("x"));
        const int one = e.gutterWidth();
        const int digit = e.fontMetrics().horizontalAdvance(QLatin1Char('9'));
        QVERIFY(one > 3 * digit);
        QStringList lines;
        for (int i = 0; i < 999; ++i)
            lines << QStringLiteral("x");
        e.setProgram(lines.join(QLatin1Char('\n')));
        QCOMPARE(e.blockCount(), 999);
        QCOMPARE(e.gutterWidth(), one);  // at least three digits
        lines << QStringLiteral("x");
        e.setProgram(lines.join(QLatin1Char('\n')));
        QCOMPARE(e.gutterWidth(), one + digit);
        QCOMPARE(e.viewport()->geometry().left() - e.contentsRect().left(), e.gutterWidth());
    }

    void positionsCountUtf8Bytes()
    {
        ProgramEditor e;
        e.setProgram(QStringLiteral("# \u00e9t\u00e9\nx = y;"));
        QCOMPARE(e.positionOf(1, 1), 0);
        QCOMPARE(e.positionOf(1, 3), 2);   // 'é' (2 bytes) starts at byte column 3
        QCOMPARE(e.positionOf(1, 5), 3);   // 't'
        QCOMPARE(e.positionOf(1, 99), 5);  // past the end: the line's end
        QCOMPARE(e.positionOf(2, 5), 6 + 4);
        QCOMPARE(e.positionOf(3, 1), -1);
        QCOMPARE(e.positionOf(0, 1), -1);
    }

    void diagnosticsBecomeUnderlinesMarkersAndTooltips()
    {
        ProgramEditor e;
        e.resize(600, 400);
        e.setProgram(QStringLiteral("input x: f32[4];\n"   // 0..16
                                    "y = Relu(qq);\n"      // 17..30
                                    "output y\n"));        // 31..
        support::Diagnostic err = diagnostic(support::Severity::Error, 2, 10, 2, 11, "unknown name 'qq'");
        err.notes = {"hint: did you mean 'x'?"};
        const support::Diagnostic warn = diagnostic(support::Severity::Warning, 1, 7, 0, 0, "unused input");
        // "expected ';'" one column past the end of the line.
        const support::Diagnostic eol = diagnostic(support::Severity::Error, 3, 9, 0, 0, "expected ';'");
        const support::Diagnostic noLine = diagnostic(support::Severity::Error, 0, 0, 0, 0, "not textual");
        e.setDiagnostics({err, warn, eol, noLine});
        QCOMPARE(e.diagnostics().size(), std::size_t(3));

        const QList<QTextEdit::ExtraSelection> sel = e.diagnosticSelections();
        QCOMPARE(sel.size(), 3);
        QCOMPARE(sel[0].cursor.selectionStart(), 17 + 9);
        QCOMPARE(sel[0].cursor.selectionEnd(), 17 + 11);
        QCOMPARE(sel[0].cursor.selectedText(), QStringLiteral("qq"));
        QCOMPARE(sel[0].format.underlineStyle(), QTextCharFormat::WaveUnderline);
        QCOMPARE(sel[0].format.underlineColor(), QColor(0xd3, 0x2f, 0x2f));
        // Without an end: the word at the start.
        QCOMPARE(sel[1].cursor.selectedText(), QStringLiteral("x"));
        QCOMPARE(sel[1].format.underlineColor(), QColor(0xe0, 0x8a, 0x00));
        // Past the end of the line: its last character.
        QCOMPARE(sel[2].cursor.selectionStart(), 31 + 7);
        QCOMPARE(sel[2].cursor.selectedText(), QStringLiteral("y"));
        // The editor shows them (after the current-line highlight).
        int wavy = 0;
        for (const QTextEdit::ExtraSelection& s : e.extraSelections())
            wavy += s.format.underlineStyle() == QTextCharFormat::WaveUnderline ? 1 : 0;
        QCOMPARE(wavy, 3);

        QCOMPARE(e.markerSeverity(1), static_cast<int>(support::Severity::Warning));
        QCOMPARE(e.markerSeverity(2), static_cast<int>(support::Severity::Error));
        QCOMPARE(e.markerSeverity(4), -1);
        QCOMPARE(e.diagnosticTextAt(17 + 10),
                 QStringLiteral("error: unknown name 'qq'\nhint: did you mean 'x'?"));
        QCOMPARE(e.diagnosticTextAt(17 + 2), QString());
        QCOMPARE(e.diagnosticTextOnLine(3), QStringLiteral("error: expected ';'"));

        // Underlines follow edits made before the next parse.
        QTextCursor c(e.document());
        c.insertText(QStringLiteral("# head\n"));
        QCOMPARE(e.diagnosticSelections()[0].cursor.selectedText(), QStringLiteral("qq"));
        QCOMPARE(e.markerSeverity(3), static_cast<int>(support::Severity::Error));

        e.clearDiagnostics();
        QCOMPARE(e.diagnosticSelections().size(), 0);
        QCOMPARE(e.markerSeverity(3), -1);
    }

    void gutterPaintsMarkers()
    {
        ProgramEditor e;
        e.resize(500, 300);
        e.show();
        QVERIFY(QTest::qWaitForWindowExposed(&e));
        e.setProgram(QStringLiteral("input x: f32[4];\ny = Relu(q);\nz = Exp(y);\noutput z;\n"));
        e.setDiagnostics({diagnostic(support::Severity::Error, 2, 10, 2, 10, "input 'q' is not defined"),
                          diagnostic(support::Severity::Warning, 3, 1, 3, 1, "unused")});
        const QImage img = e.grab().toImage();
        auto colourAt = [&](int line) {
            const QRect r = e.markerRect(line);
            // Above the error marker's white bar, on the vertical axis of the disc.
            return img.pixelColor(r.center().x(), r.top() + 2);
        };
        QVERIFY(!e.markerRect(2).isEmpty());
        QVERIFY(e.markerRect(2).right() < e.gutterWidth());
        QCOMPARE(e.markerRect(3).top() - e.markerRect(2).top(), e.markerRect(2).top() - e.markerRect(1).top());
        const QColor red = colourAt(2), orange = colourAt(3), none = colourAt(1);
        QVERIFY2(red.red() > 180 && red.green() < 90 && red.blue() < 90, qPrintable(red.name()));
        QVERIFY2(orange.red() > 180 && orange.green() > 100 && orange.blue() < 60, qPrintable(orange.name()));
        QVERIFY2(none.red() > 230 && none.green() > 230 && none.blue() > 230, qPrintable(none.name()));
        QCOMPARE(e.markerRect(99), QRect());
    }

    void editsAreAnnouncedButSetProgramIsNot()
    {
        ProgramEditor e;
        e.show();
        QSignalSpy edited(&e, &ProgramEditor::programEdited);
        e.setProgram(QStringLiteral("input x: f32;\n"));
        QCOMPARE(edited.count(), 0);
        QVERIFY(!e.isModified());
        e.moveCursor(QTextCursor::End);
        QTest::keyClicks(&e, QStringLiteral("y"));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).toString(), QStringLiteral("input x: f32;\ny"));
        QVERIFY(e.isModified());
        e.setUnmodified();
        QVERIFY(!e.isModified());
        // The cursor's line is highlighted across the full width.
        QVERIFY(hasFullWidthLine(e, 2, QColor(0xff, 0xe0, 0x66, 60)));
    }

    void statementsLinkToNodes()
    {
        ProgramEditor e;
        e.resize(600, 300);
        e.show();
        QVERIFY(QTest::qWaitForWindowExposed(&e));
        e.setProgram(QStringLiteral("input x: f32[4];\n"
                                    "y = Relu(x);\n"
                                    "z = Exp(y,\n"
                                    "        );\n"
                                    "output z;\n"));
        std::vector<views::ProgramStatement> st(4);
        st[0] = {1, 1, 1, 16, "x", views::SnapshotNodeKind::GraphInput};
        st[1] = {2, 1, 2, 12, "y", views::SnapshotNodeKind::Operator};
        st[2] = {3, 1, 4, 10, "z", views::SnapshotNodeKind::Operator};
        st[3] = {5, 1, 5, 9, "z", views::SnapshotNodeKind::GraphOutput};
        e.setStatements(st);
        QCOMPARE(e.highlightedStatement(), -1);

        QVERIFY(e.highlightStatementOf("z", views::SnapshotNodeKind::Operator));
        QCOMPARE(e.highlightedStatement(), 2);
        QVERIFY(hasFullWidthLine(e, 3, QColor(0xd2, 0xe3, 0xfc)));
        QVERIFY(hasFullWidthLine(e, 4, QColor(0xd2, 0xe3, 0xfc)));
        QVERIFY(!hasFullWidthLine(e, 2, QColor(0xd2, 0xe3, 0xfc)));
        QVERIFY(e.highlightStatementOf("z", views::SnapshotNodeKind::GraphOutput));
        QCOMPARE(e.highlightedStatement(), 3);
        QVERIFY(!e.highlightStatementOf("w", views::SnapshotNodeKind::Operator));
        QCOMPARE(e.highlightedStatement(), -1);

        QCOMPARE(e.statementAt(e.positionOf(2, 5)), 1);
        QCOMPARE(e.statementAt(e.positionOf(4, 9)), 2);
        QCOMPARE(e.statementAt(e.positionOf(6, 1)), -1);

        QSignalSpy activated(&e, &ProgramEditor::statementActivated);
        QTextCursor at(e.document());
        at.setPosition(e.positionOf(2, 6));
        const QPoint p = e.cursorRect(at).center();
        QTest::mouseClick(e.viewport(), Qt::LeftButton, {}, p);
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.first().at(0).toInt(), 1);
        // A drag that selects text is not a click on a statement.
        at.setPosition(e.positionOf(3, 2));
        QTest::mousePress(e.viewport(), Qt::LeftButton, {}, p);
        QTest::mouseMove(e.viewport(), e.cursorRect(at).center());
        QTest::mouseRelease(e.viewport(), Qt::LeftButton, {}, e.cursorRect(at).center());
        QCOMPARE(activated.count(), 1);
    }

    void panelShowsBannerForReadOnlyText()
    {
        views::ProgramPanel panel;
        QVERIFY(!panel.hasProgram());
        panel.showProgram(QStringLiteral("input x: f32;\n"), true, QStringLiteral("Exported from ONNX"));
        QVERIFY(panel.hasProgram());
        QVERIFY(panel.bannerVisible());
        QCOMPARE(panel.bannerText(), QStringLiteral("Exported from ONNX"));
        QVERIFY(panel.editor()->isReadOnly());
        panel.showProgram(QStringLiteral("input x: f32;\n"), false);
        QVERIFY(!panel.bannerVisible());
        QVERIFY(!panel.editor()->isReadOnly());
        panel.showPlaceholder(QStringLiteral("nothing"));
        QVERIFY(!panel.hasProgram());
        QCOMPARE(panel.placeholderText(), QStringLiteral("nothing"));
    }
};

QTEST_MAIN(ProgramEditorTest)
#include "program_editor_test.moc"
