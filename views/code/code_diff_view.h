#pragma once
/// @file
/// CodeDiffView: a unified diff (views/code/line_diff.h) in a read-only, monospaced editor under a
/// header line: removed lines ('-') on a red background, added lines ('+') on a green one, hunk
/// headers ("@@ ... @@") in blue and file headers ("---", "+++") in bold. The Code dock shows it
/// for "Diff vs pinned". It only draws. Thread rules: UI thread only.

#include <QPlainTextEdit>
#include <QWidget>

class QLabel;

namespace tessera::views {

class CodeDiffView : public QWidget {
    Q_OBJECT
public:
    explicit CodeDiffView(QWidget* parent = nullptr);

    /// Shows `diff` (unified diff text) under `title`; an empty diff shows `title` and
    /// `emptyNote` in the editor's place.
    void setDiff(const QString& diff, const QString& title, const QString& emptyNote = QString());
    QString headerText() const;
    QString diffText() const;
    QPlainTextEdit* editor() const { return m_editor; }

    /// The background of a line of a unified diff: red-ish for '-', green-ish for '+', none
    /// (invalid colour) for context and headers ("---", "+++" are headers, not changes).
    static QColor lineBackground(const QString& line);

private:
    QLabel* m_header;
    QPlainTextEdit* m_editor;
};

}  // namespace tessera::views
