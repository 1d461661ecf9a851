#include "views/program/dsl_highlighter.h"

#include <QColor>
#include <QFile>
#include <QFont>
#include <QSet>
#include <QStringList>
#include <QtGlobal>

// The word lists live in resources/syntax/tessera-dsl.words, compiled into this static library
// (resources/syntax.qrc); initialising the resource here keeps the linker from dropping it.
// Q_INIT_RESOURCE declares a function, so it is called outside any namespace.
static void initSyntaxResource() { Q_INIT_RESOURCE(syntax); }

namespace tessera::views {
namespace {

/// The reserved words, dtype names and contextual words (docs/dsl.md §2-3).
struct WordKinds {
    QSet<QString> reserved;
    QSet<QString> dtypes;
    QSet<QString> contextual;
};

/// Reads the `[keyword]`, `[type]` and `[contextual]` sections of the rules file (format: the
/// file's header comment). A missing or unreadable file leaves every set empty (no word colours)
/// and says so once on the console.
WordKinds loadWordKinds()
{
    initSyntaxResource();
    WordKinds kinds;
    QFile file(QStringLiteral(":/syntax/tessera-dsl.words"));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        qWarning("DSL highlighter: cannot read %s", qPrintable(file.fileName()));
        return kinds;
    }
    QSet<QString>* section = nullptr;
    const QStringList lines = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'));
    for (const QString& raw : lines) {
        const QString line = raw.section(QLatin1Char('#'), 0, 0).trimmed();
        if (line.isEmpty())
            continue;
        if (line.startsWith(QLatin1Char('[')) && line.endsWith(QLatin1Char(']'))) {
            const QString name = line.mid(1, line.size() - 2).trimmed();
            section = name == QLatin1String("keyword")      ? &kinds.reserved
                      : name == QLatin1String("type")       ? &kinds.dtypes
                      : name == QLatin1String("contextual") ? &kinds.contextual
                                                            : nullptr;
            if (section == nullptr)
                qWarning("DSL highlighter: unknown section [%s] in %s", qPrintable(name), qPrintable(file.fileName()));
            continue;
        }
        if (section == nullptr)
            continue;
        for (const QString& word : line.simplified().split(QLatin1Char(' ')))
            section->insert(word);
    }
    return kinds;
}

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
    static const WordKinds kinds = loadWordKinds();
    if (kinds.reserved.contains(word))
        return Kind::Keyword;
    if (kinds.dtypes.contains(word))
        return Kind::Type;
    if (kinds.contextual.contains(word))
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
