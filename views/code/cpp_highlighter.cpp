#include "views/code/cpp_highlighter.h"

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

QString wordAlternation(const QStringList& words) { return QStringLiteral("\\b(?:%1)\\b").arg(words.join(QLatin1Char('|'))); }

}  // namespace

CppHighlighter::CppHighlighter(QTextDocument* document, Dialect dialect)
    : QSyntaxHighlighter(document), m_dialect(dialect)
{
    m_formats[static_cast<int>(Kind::Keyword)] = makeFormat(QColor(0x00, 0x33, 0xb3), true);
    m_formats[static_cast<int>(Kind::Type)] = makeFormat(QColor(0x00, 0x6e, 0x7a));
    m_formats[static_cast<int>(Kind::Number)] = makeFormat(QColor(0x17, 0x50, 0xeb));
    m_formats[static_cast<int>(Kind::String)] = makeFormat(QColor(0x06, 0x7d, 0x17));
    m_formats[static_cast<int>(Kind::Preprocessor)] = makeFormat(QColor(0x9e, 0x58, 0x0a));
    m_formats[static_cast<int>(Kind::Comment)] = makeFormat(QColor(0x8c, 0x8c, 0x8c), false, true);

    QStringList keywords = {
        QStringLiteral("alignas"),  QStringLiteral("auto"),     QStringLiteral("break"),
        QStringLiteral("case"),     QStringLiteral("const"),    QStringLiteral("constexpr"),
        QStringLiteral("continue"), QStringLiteral("default"),  QStringLiteral("do"),
        QStringLiteral("else"),     QStringLiteral("extern"),   QStringLiteral("for"),
        QStringLiteral("if"),       QStringLiteral("inline"),   QStringLiteral("namespace"),
        QStringLiteral("noexcept"), QStringLiteral("return"),   QStringLiteral("sizeof"),
        QStringLiteral("static"),   QStringLiteral("static_cast"), QStringLiteral("reinterpret_cast"),
        QStringLiteral("struct"),   QStringLiteral("switch"),   QStringLiteral("template"),
        QStringLiteral("typedef"),  QStringLiteral("using"),    QStringLiteral("while"),
        QStringLiteral("restrict"), QStringLiteral("__restrict"), QStringLiteral("__restrict__"),
        QStringLiteral("true"),     QStringLiteral("false"),    QStringLiteral("nullptr")};
    QStringList types = {
        QStringLiteral("void"),     QStringLiteral("bool"),     QStringLiteral("char"),
        QStringLiteral("short"),    QStringLiteral("int"),      QStringLiteral("long"),
        QStringLiteral("float"),    QStringLiteral("double"),   QStringLiteral("unsigned"),
        QStringLiteral("signed"),   QStringLiteral("size_t"),   QStringLiteral("u?int(?:8|16|32|64)_t"),
        QStringLiteral("std::\\w+")};
    if (dialect == Dialect::Cuda) {
        keywords << QStringLiteral("__global__") << QStringLiteral("__device__") << QStringLiteral("__host__")
                 << QStringLiteral("__shared__") << QStringLiteral("__constant__") << QStringLiteral("__forceinline__")
                 << QStringLiteral("__launch_bounds__") << QStringLiteral("__syncthreads") << QStringLiteral("__syncwarp")
                 << QStringLiteral("__ldg") << QStringLiteral("__shfl_\\w+");
        types << QStringLiteral("threadIdx") << QStringLiteral("blockIdx") << QStringLiteral("blockDim")
              << QStringLiteral("gridDim") << QStringLiteral("warpSize") << QStringLiteral("dim3")
              << QStringLiteral("__half") << QStringLiteral("__nv_bfloat16")
              << QStringLiteral("(?:float|int|uint|double)[234]");
    }
    // Later rules win where they overlap (they are applied in order), so literals and comments
    // come last.
    m_rules.push_back({QRegularExpression(wordAlternation(keywords)), Kind::Keyword});
    m_rules.push_back({QRegularExpression(QStringLiteral("(?<![\\w:])(?:%1)\\b").arg(types.join(QLatin1Char('|')))), Kind::Type});
    m_rules.push_back({QRegularExpression(QStringLiteral(
                           "(?<![\\w.])(?:0[xX][0-9a-fA-F]+|(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?)[fFuUlL]*\\b")),
                       Kind::Number});
    m_rules.push_back({QRegularExpression(QStringLiteral("^\\s*#.*$")), Kind::Preprocessor});
    m_rules.push_back({QRegularExpression(QStringLiteral("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'")), Kind::String});
    m_rules.push_back({QRegularExpression(QStringLiteral("//.*$")), Kind::Comment});
}

QTextCharFormat CppHighlighter::format(Kind kind) const { return m_formats[static_cast<int>(kind)]; }

void CppHighlighter::highlightBlock(const QString& text)
{
    for (const Rule& rule : m_rules) {
        auto it = rule.pattern.globalMatch(text);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            setFormat(static_cast<int>(m.capturedStart()), static_cast<int>(m.capturedLength()),
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
