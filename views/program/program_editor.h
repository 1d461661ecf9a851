#pragma once
/// @file
/// The Program dock's editor: a QPlainTextEdit for Tessera DSL text (docs/dsl.md) with syntax
/// colours (dsl_highlighter.h), a gutter with line numbers and diagnostic markers, a highlighted
/// current line, inline diagnostics and the statement <-> graph node link.
///
/// Diagnostics (setDiagnostics): each diagnostic with a line gets a wavy underline over its
/// line:column range (red for errors, orange for warnings, blue for notes; ExtraSelections), a
/// marker in the gutter on its first line, and its message (with its notes) as the tooltip of
/// the underlined text and of the marker. Positions are the DSL's: 1-based lines and 1-based byte
/// columns of the UTF-8 text, `end` inclusive; a diagnostic without an end underlines the word
/// at its start (or one character). The underlines are text cursors, so they move with edits made
/// after they were set, until the next setDiagnostics replaces them.
///
/// Statements (setStatements): the source range of each statement that defines something drawn
/// in the graph, with the drawn node's name and kind. highlightStatementOf() paints a statement's
/// lines (the node selected in the graph); a mouse click in the text emits statementActivated()
/// with the innermost statement under the cursor (the app selects its node).
///
/// The editor never starts work: every change the user makes is announced by programEdited()
/// (the app debounces and re-parses); setProgram() replaces the text without that signal and
/// marks the document unmodified. Read-only mode (an exported ONNX model) keeps the text
/// selectable and clickable.
///
/// Thread rules: UI thread only.

#include <string>
#include <vector>


#include "core/support/diagnostic.h"
#include "views/graph/graph_snapshot.h"
#include "views/code/gutter_text_edit.h"

namespace tessera::views {

class DslHighlighter;

/// One statement of the program and the graph node it defines (see the file comment).
struct ProgramStatement {
    int firstLine = 0;    ///< 1-based
    int firstColumn = 0;  ///< 1-based byte column
    int lastLine = 0;
    int lastColumn = 0;   ///< inclusive
    std::string node;     ///< the drawn node's name (operator name, or the value of a graph input/output)
    SnapshotNodeKind kind = SnapshotNodeKind::Operator;
};

class ProgramEditor : public GutterTextEdit {
    Q_OBJECT
public:
    explicit ProgramEditor(QWidget* parent = nullptr);

    /// Replaces the text (no programEdited()), clears diagnostics, statements and the statement
    /// highlight, puts the cursor at the start and marks the document unmodified.
    void setProgram(const QString& text);
    /// Whether the user changed the text since setProgram() or setUnmodified().
    bool isModified() const;
    void setUnmodified();

    /// Replaces the inline diagnostics; those without a line (begin.line == 0) are ignored.
    void setDiagnostics(const std::vector<support::Diagnostic>& diagnostics);
    void clearDiagnostics() { setDiagnostics({}); }
    /// The diagnostics shown (those with a line), in the order given.
    const std::vector<support::Diagnostic>& diagnostics() const { return m_diagnostics; }
    /// The wavy-underline selections, one per shown diagnostic, in the same order.
    QList<QTextEdit::ExtraSelection> diagnosticSelections() const;
    /// The messages (with notes) of the diagnostics whose underline covers document position
    /// `position`; empty when none.
    QString diagnosticTextAt(int position) const;
    /// The messages of the diagnostics whose marker is on `line` (1-based); empty when none.
    QString diagnosticTextOnLine(int line) const;
    /// The worst severity marked on `line`, or -1 when the line has no marker.
    int markerSeverity(int line) const;

    /// The document position of a DSL line (1-based) and byte column (1-based); columns past the
    /// end of the line give the line's end. -1 for a line outside the text.
    int positionOf(int line, int byteColumn) const;
    /// Moves the cursor to line:column (byte column), scrolls it into view and focuses the editor.
    void goTo(int line, int byteColumn);

    void setStatements(std::vector<ProgramStatement> statements);
    const std::vector<ProgramStatement>& statements() const { return m_statements; }
    /// Highlights the statement that defines `node` of `kind` and scrolls it into view (without
    /// moving the cursor when the cursor is inside it). Returns false (and clears the
    /// highlight) when no statement defines it.
    bool highlightStatementOf(const std::string& node, SnapshotNodeKind kind);
    void clearStatementHighlight();
    /// Index into statements() of the highlighted statement, or -1.
    int highlightedStatement() const { return m_highlighted; }
    /// Index of the innermost statement containing document position `position`, or -1.
    int statementAt(int position) const;

    /// Where the gutter marker of `line` (1-based) is drawn, in the editor's coordinates (whether
    /// or not the line has one); empty when the line is not in view.
    QRect markerRect(int line) const;

    /// Width of the gutter in pixels: the diagnostic marker column plus the line numbers (at
    /// least three digits).
    int gutterWidth() const override;

signals:
    /// The user changed the text (typing, paste, undo...): the whole new text.
    void programEdited(const QString& text);
    /// The user clicked into statement `index` of statements() (it defines a drawn node).
    void statementActivated(int index);

protected:
    void mouseReleaseEvent(QMouseEvent* event) override;
    bool viewportEvent(QEvent* event) override;
    void paintGutter(QPaintEvent* event) override;
    bool gutterEvent(QEvent* event) override;

private:
    struct Underline {
        QTextCursor cursor;
        support::Severity severity;
        QString text;
    };
    void applySelections();
    QTextCursor statementCursor(const ProgramStatement& s) const;

    DslHighlighter* m_highlighter;
    bool m_settingText = false;
    std::vector<support::Diagnostic> m_diagnostics;
    std::vector<Underline> m_underlines;
    std::vector<ProgramStatement> m_statements;
    int m_highlighted = -1;
};

}  // namespace tessera::views
