#pragma once
/// @file
/// A small C++ syntax highlighter for generated code: keywords, types, numbers, string and char
/// literals, preprocessor lines (#pragma omp, #include) and // and /* */ comments (block comments
/// may span lines). It is a lexical colouring only, good enough for the code generator's output.
///
/// Thread rules: UI thread only (it belongs to a QTextDocument).

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

namespace tessera::views {

class CppHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    /// Kinds of token the highlighter colours.
    enum class Kind { Plain, Keyword, Type, Number, String, Preprocessor, Comment };

    explicit CppHighlighter(QTextDocument* document);

    /// The format used for a kind (Plain: default format).
    QTextCharFormat format(Kind kind) const;

protected:
    void highlightBlock(const QString& text) override;

private:
    struct Rule {
        QRegularExpression pattern;
        Kind kind;
    };
    std::vector<Rule> m_rules;
    QTextCharFormat m_formats[7];
};

}  // namespace tessera::views
