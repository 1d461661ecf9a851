#pragma once
/// @file
/// Syntax colours for Tessera DSL programs (`.tsr`, docs/dsl.md §2): reserved words (`input`,
/// `param`, `schedule`, `fuse`, ...), the contextual words of initializers, reductions and
/// schedules (`sum`, `random`, `target`, `tile`, `stage`, `spatial`, ...), dtype names, operator
/// and function names (an identifier directly followed by `(`), numbers, strings, backtick-quoted
/// names and `#` comments. The word lists are data: resources/syntax/tessera-dsl.words, compiled
/// in (resources/syntax.qrc) and read once, on the first wordKind call.
///
/// It scans each line left to right like the DSL lexer does, so a `#` inside a string or a quoted
/// name is not a comment and a reserved word inside backticks stays a name. Lexical colouring
/// only: whether a contextual word is used as one is not checked.
///
/// Thread rules: UI thread only (it belongs to a QTextDocument).

#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace tessera::views {

class DslHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    /// Kinds of token the highlighter colours.
    enum class Kind { Plain, Keyword, Contextual, Type, Op, Number, String, QuotedName, Comment };
    static constexpr int kKindCount = 9;

    explicit DslHighlighter(QTextDocument* document);

    /// The format used for a kind (Plain: the default format).
    QTextCharFormat format(Kind kind) const { return m_formats[static_cast<int>(kind)]; }
    /// The kind a word gets when it is not followed by `(` (Plain for ordinary names).
    static Kind wordKind(const QString& word);

protected:
    void highlightBlock(const QString& text) override;

private:
    QTextCharFormat m_formats[kKindCount];
};

}  // namespace tessera::views
