#include "views/program/dsl_highlighter.h"

#include <QColor>
#include <QFont>
#include <QSet>

namespace tessera::views {
namespace {

QTextCharFormat makeFormat(const QColor& color, bool bold = false, bool italic = false)
{
    QTextCharFormat f;
    f.setForeground(color);
    if (bold)
        f.setFontWeight(QFont::DemiBold);
    f.setFontItalic(italic);
    return f;
}

bool isIdentStart(QChar c) { return c.isLetter() || c == QLatin1Char('_'); }
bool isIdentChar(QChar c) { return c.isLetterOrNumber() || c == QLatin1Char('_'); }

/// Index of the closing `quote` of a literal opened at `start`, honouring backslash escapes; the
/// line's length when it is not closed on this line (the lexer reports that; we colour to the end).
int closingQuote(const QString& text, int start, QChar quote)
{
    const int n = static_cast<int>(text.size());
    for (int i = start + 1; i < n; ++i) {
        if (text[i] == QLatin1Char('\\'))
            ++i;
        else if (text[i] == quote)
            return i;
    }
    return n - 1;
}

}  // namespace

DslHighlighter::DslHighlighter(QTextDocument* document) : QSyntaxHighlighter(document)
{
    // The colours of the C++ highlighter (views/code), so generated code and programs read alike.
    m_formats[static_cast<int>(Kind::Keyword)] = makeFormat(QColor(0x00, 0x33, 0xb3), true);
    m_formats[static_cast<int>(Kind::Contextual)] = makeFormat(QColor(0x87, 0x10, 0x94));
    m_formats[static_cast<int>(Kind::Type)] = makeFormat(QColor(0x00, 0x6e, 0x7a));
    m_formats[static_cast<int>(Kind::Op)] = makeFormat(QColor(0x00, 0x62, 0x7a), true);
    m_formats[static_cast<int>(Kind::Number)] = makeFormat(QColor(0x17, 0x50, 0xeb));
    m_formats[static_cast<int>(Kind::String)] = makeFormat(QColor(0x06, 0x7d, 0x17));
    m_formats[static_cast<int>(Kind::QuotedName)] = makeFormat(QColor(0x6b, 0x4a, 0x00));
    m_formats[static_cast<int>(Kind::Comment)] = makeFormat(QColor(0x8c, 0x8c, 0x8c), false, true);
}

DslHighlighter::Kind DslHighlighter::wordKind(const QString& word)
{
    static const QSet<QString> reserved = {
        QStringLiteral("tessera"), QStringLiteral("model"),    QStringLiteral("opset"),  QStringLiteral("input"),
        QStringLiteral("output"),  QStringLiteral("param"),    QStringLiteral("schedule"), QStringLiteral("fuse"),
        QStringLiteral("anchor"),  QStringLiteral("as"),       QStringLiteral("graph"),  QStringLiteral("tensor")};
    // docs/dsl.md §3: words recognised only in some positions, plus the schedule's levels,
    // targets, memories and the task-mapping functions.
    static const QSet<QString> contextual = {
        QStringLiteral("ints"),     QStringLiteral("floats"),  QStringLiteral("strings"),  QStringLiteral("tensors"),
        QStringLiteral("graphs"),   QStringLiteral("zeros"),   QStringLiteral("ones"),     QStringLiteral("random"),
        QStringLiteral("fill"),     QStringLiteral("npy"),     QStringLiteral("onnx"),     QStringLiteral("sum"),
        QStringLiteral("prod"),     QStringLiteral("max"),     QStringLiteral("min"),      QStringLiteral("cast"),
        QStringLiteral("pi"),       QStringLiteral("true"),    QStringLiteral("false"),    QStringLiteral("target"),
        QStringLiteral("tile"),     QStringLiteral("by"),      QStringLiteral("stage"),    QStringLiteral("in"),
        QStringLiteral("unroll"),   QStringLiteral("vectorize"), QStringLiteral("parallel"), QStringLiteral("inf"),
        QStringLiteral("nan"),      QStringLiteral("shared"),  QStringLiteral("local"),    QStringLiteral("register"),
        QStringLiteral("grid"),     QStringLiteral("block"),   QStringLiteral("warp"),     QStringLiteral("thread"),
        QStringLiteral("cuda"),     QStringLiteral("cpu"),     QStringLiteral("spatial"),  QStringLiteral("repeat"),
        QStringLiteral("auto_map"), QStringLiteral("select")};
    static const QSet<QString> dtypes = {
        QStringLiteral("f16"), QStringLiteral("bf16"), QStringLiteral("f32"),  QStringLiteral("f64"),
        QStringLiteral("i8"),  QStringLiteral("i16"),  QStringLiteral("i32"),  QStringLiteral("i64"),
        QStringLiteral("u8"),  QStringLiteral("u16"),  QStringLiteral("u32"),  QStringLiteral("u64"),
        QStringLiteral("bool"), QStringLiteral("string"), QStringLiteral("c64"), QStringLiteral("c128")};
    if (reserved.contains(word))
        return Kind::Keyword;
    if (dtypes.contains(word))
        return Kind::Type;
    if (contextual.contains(word))
        return Kind::Contextual;
    return Kind::Plain;
}

void DslHighlighter::highlightBlock(const QString& text)
{
    const int n = static_cast<int>(text.size());
    int i = 0;
    while (i < n) {
        const QChar c = text[i];
        if (c == QLatin1Char('#')) {
            setFormat(i, n - i, format(Kind::Comment));
            return;
        }
        if (c == QLatin1Char('"') || c == QLatin1Char('`')) {
            const int end = closingQuote(text, i, c);
            setFormat(i, end - i + 1, format(c == QLatin1Char('"') ? Kind::String : Kind::QuotedName));
            i = end + 1;
            continue;
        }
        if (isIdentStart(c)) {
            int j = i + 1;
            while (j < n && isIdentChar(text[j]))
                ++j;
            Kind kind = wordKind(text.mid(i, j - i));
            if (kind == Kind::Plain) {
                int k = j;
                while (k < n && text[k].isSpace())
                    ++k;
                if (k < n && text[k] == QLatin1Char('('))
                    kind = Kind::Op;
            }
            if (kind != Kind::Plain)
                setFormat(i, j - i, format(kind));
            i = j;
            continue;
        }
        if (c.isDigit()) {
            int j = i;
            while (j < n && text[j].isDigit())
                ++j;
            if (j < n && text[j] == QLatin1Char('.')) {
                ++j;
                while (j < n && text[j].isDigit())
                    ++j;
            }
            if (j < n && (text[j] == QLatin1Char('e') || text[j] == QLatin1Char('E'))) {
                int k = j + 1;
                if (k < n && (text[k] == QLatin1Char('+') || text[k] == QLatin1Char('-')))
                    ++k;
                if (k < n && text[k].isDigit()) {
                    while (k < n && text[k].isDigit())
                        ++k;
                    j = k;
                }
            }
            setFormat(i, j - i, format(Kind::Number));
            i = j;
            continue;
        }
        ++i;
    }
}

}  // namespace tessera::views
