#include "views/code/ptx_highlighter.h"

#include <QColor>
#include <QFont>
#include <QStringList>

namespace tessera::views {
namespace {

constexpr int kInBlockComment = 1;

QTextCharFormat makeFormat(const QColor& color, bool bold = false, bool italic = false)
{
    QTextCharFormat f;
    f.setForeground(color);
    if (bold)
        f.setFontWeight(QFont::DemiBold);
    f.setFontItalic(italic);
    return f;
}

/// Removes `//` and `/* */` comments from one line; `inBlock` carries a block comment across lines.
QString stripComments(const QString& line, bool& inBlock)
{
    QString out;
    out.reserve(line.size());
    qsizetype i = 0;
    while (i < line.size()) {
        if (inBlock) {
            const qsizetype end = line.indexOf(QStringLiteral("*/"), i);
            if (end < 0)
                return out;
            inBlock = false;
            i = end + 2;
            continue;
        }
        if (line[i] == QLatin1Char('/') && i + 1 < line.size()) {
            if (line[i + 1] == QLatin1Char('/'))
                return out;
            if (line[i + 1] == QLatin1Char('*')) {
                inBlock = true;
                i += 2;
                continue;
            }
        }
        out += line[i];
        ++i;
    }
    return out;
}

}  // namespace

PtxLines findPtxEntry(const QString& ptx, const QString& entry)
{
    if (entry.isEmpty())
        return {};
    const QStringList lines = ptx.split(QLatin1Char('\n'));
    const QRegularExpression head(QStringLiteral("\\.entry\\s+%1(?:\\s|\\(|$)").arg(QRegularExpression::escape(entry)));
    int first = -1;
    for (int i = 0; i < lines.size(); ++i) {
        if (head.match(lines[i]).hasMatch()) {
            first = i;
            break;
        }
    }
    if (first < 0)
        return {};
    bool inBlock = false;
    bool opened = false;
    int depth = 0;
    for (int i = first; i < lines.size(); ++i) {
        const QString code = stripComments(lines[i], inBlock);
        for (const QChar c : code) {
            if (c == QLatin1Char('{')) {
                opened = true;
                ++depth;
            } else if (c == QLatin1Char('}') && opened) {
                if (--depth == 0)
                    return {first + 1, i + 1};
            }
        }
    }
    int last = static_cast<int>(lines.size());
    // A trailing newline makes an empty last element that is no line of the text.
    if (last > first + 1 && lines.back().isEmpty())
        --last;
    return {first + 1, last};
}

PtxHighlighter::PtxHighlighter(QTextDocument* document) : QSyntaxHighlighter(document)
{
    m_formats[static_cast<int>(Kind::Directive)] = makeFormat(QColor(0x00, 0x33, 0xb3), true);
    m_formats[static_cast<int>(Kind::Instruction)] = makeFormat(QColor(0x87, 0x10, 0x94));
    m_formats[static_cast<int>(Kind::Register)] = makeFormat(QColor(0x00, 0x6e, 0x7a));
    m_formats[static_cast<int>(Kind::Label)] = makeFormat(QColor(0x9e, 0x58, 0x0a), true);
    m_formats[static_cast<int>(Kind::Number)] = makeFormat(QColor(0x17, 0x50, 0xeb));
    m_formats[static_cast<int>(Kind::Comment)] = makeFormat(QColor(0x8c, 0x8c, 0x8c), false, true);

    // Applied in order; later rules win where they overlap, so comments come last.
    // An instruction is the first word of a statement, after an optional predicate guard
    // ("@%p1 bra $L__BB0_2;", "@!%p2 ld.global.f32 ...").
    m_rules.push_back({QRegularExpression(QStringLiteral("^\\s*(?:@!?%\\w+\\s+)?([a-z][a-z0-9_]*(?:\\.[a-z0-9_]+)*)(?=[\\s;])")),
                       Kind::Instruction, 1});
    // Directives: a dot-word not glued to a word before it (".reg .f32" but not ".f32" of "ld.global.f32").
    m_rules.push_back({QRegularExpression(QStringLiteral("(?<![\\w%.])\\.[A-Za-z_][\\w]*")), Kind::Directive, 0});
    m_rules.push_back({QRegularExpression(QStringLiteral("(?<![\\w$%.])(?:0[fFdD][0-9a-fA-F]+|0[xX][0-9a-fA-F]+|-?\\d+(?:\\.\\d+)?)\\b")),
                       Kind::Number, 0});
    m_rules.push_back({QRegularExpression(QStringLiteral("%[A-Za-z_][\\w]*(?:\\.[xyzw])?(?:<\\d+>)?")), Kind::Register, 0});
    m_rules.push_back({QRegularExpression(QStringLiteral("\\$[A-Za-z_][\\w$]*")), Kind::Label, 0});
    m_rules.push_back({QRegularExpression(QStringLiteral("//.*$")), Kind::Comment, 0});
}

QTextCharFormat PtxHighlighter::format(Kind kind) const { return m_formats[static_cast<int>(kind)]; }

void PtxHighlighter::highlightBlock(const QString& text)
{
    for (const Rule& rule : m_rules) {
        auto it = rule.pattern.globalMatch(text);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            setFormat(static_cast<int>(m.capturedStart(rule.group)), static_cast<int>(m.capturedLength(rule.group)),
                      m_formats[static_cast<int>(rule.kind)]);
        }
    }

    // Block comments, which may continue from the previous line.
    setCurrentBlockState(0);
    const QTextCharFormat& comment = m_formats[static_cast<int>(Kind::Comment)];
    bool continuing = previousBlockState() == kInBlockComment;
    int start = continuing ? 0 : static_cast<int>(text.indexOf(QStringLiteral("/*")));
    while (start >= 0) {
        const int end = static_cast<int>(text.indexOf(QStringLiteral("*/"), continuing ? start : start + 2));
        continuing = false;
        int length = 0;
        if (end < 0) {
            setCurrentBlockState(kInBlockComment);
            length = static_cast<int>(text.length()) - start;
        } else {
            length = end - start + 2;
        }
        setFormat(start, length, comment);
        start = static_cast<int>(text.indexOf(QStringLiteral("/*"), start + length));
    }
}

}  // namespace tessera::views
