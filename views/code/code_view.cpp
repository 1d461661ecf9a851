#include "views/code/code_view.h"

#include <algorithm>

#include <QFontDatabase>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QTextBlock>

#include "views/code/cpp_highlighter.h"
#include "views/code/ptx_highlighter.h"

namespace tessera::views {

namespace {

const QColor kRangeBackground(0xff, 0xf1, 0xc4);
const QColor kRangeGutter(0xf2, 0xc9, 0x4c);

}  // namespace

CodeView::CodeView(QWidget* parent) : GutterTextEdit(parent)
{
    setReadOnly(true);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    mono.setFamily(QStringLiteral("DejaVu Sans Mono"));
    mono.setStyleHint(QFont::Monospace);
    mono.setPointSize(9);
    setFont(mono);
    document()->setDefaultFont(mono);
    setTabStopDistance(QFontMetricsF(mono).horizontalAdvance(QLatin1Char(' ')) * 4);
    m_highlighter = new CppHighlighter(document(), CppHighlighter::Dialect::Cpp);

    updateGutterWidth();
}

void CodeView::setLanguage(Language language)
{
    if (language == m_language)
        return;
    m_language = language;
    // Detach the old highlighter first so that its formats do not linger on the text.
    m_highlighter->setDocument(nullptr);
    delete m_highlighter;
    if (language == Language::Ptx)
        m_highlighter = new PtxHighlighter(document());
    else
        m_highlighter = new CppHighlighter(document(), language == Language::Cuda ? CppHighlighter::Dialect::Cuda
                                                                                  : CppHighlighter::Dialect::Cpp);
}

void CodeView::setCode(const QString& text)
{
    m_first = m_last = 0;
    setPlainText(text);
    applySelections();
}

int CodeView::gutterWidth() const
{
    int digits = 1;
    for (int n = std::max(1, blockCount()); n >= 10; n /= 10)
        ++digits;
    digits = std::max(digits, 3);
    return 12 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * digits;
}

void CodeView::paintGutter(QPaintEvent* event)
{
    QPainter painter(gutter());
    painter.fillRect(event->rect(), QColor(0xf3, 0xf4, 0xf6));
    painter.setPen(QColor(0xdd, 0xe0, 0xe4));
    painter.drawLine(gutter()->width() - 1, event->rect().top(), gutter()->width() - 1, event->rect().bottom());
    painter.setFont(font());

    QTextBlock block = firstVisibleBlock();
    int number = block.blockNumber() + 1;
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    int bottom = top + qRound(blockBoundingRect(block).height());
    const int w = gutter()->width();
    while (block.isValid() && top <= event->rect().bottom()) {
        if (block.isVisible() && bottom >= event->rect().top()) {
            const bool inRange = m_first > 0 && number >= m_first && number <= m_last;
            if (inRange)
                painter.fillRect(QRect(w - 4, top, 3, bottom - top), kRangeGutter);
            painter.setPen(inRange ? QColor(0x5a, 0x45, 0x00) : QColor(0x9a, 0xa0, 0xa6));
            painter.drawText(0, top, w - 8, fontMetrics().height(), Qt::AlignRight, QString::number(number));
        }
        block = block.next();
        top = bottom;
        bottom = top + qRound(blockBoundingRect(block).height());
        ++number;
    }
}

int CodeView::firstVisibleLine() const { return firstVisibleBlock().blockNumber() + 1; }

void CodeView::highlightLines(int first, int last)
{
    const int lines = blockCount();
    if (first <= 0 || lines == 0 || first > lines) {
        m_first = m_last = 0;
    } else {
        m_first = first;
        m_last = std::clamp(last, first, lines);
    }
    applySelections();
    gutter()->update();
    if (m_first == 0)
        return;
    // Put the first line of the range a couple of lines below the top, so the reader sees what
    // comes before it, and the cursor at its start (without selecting anything).
    QTextCursor cursor(document()->findBlockByNumber(m_first - 1));
    setTextCursor(cursor);
    verticalScrollBar()->setValue(std::max(0, m_first - 1 - 2));
}

void CodeView::applySelections()
{
    QList<QTextEdit::ExtraSelection> selections;
    if (m_first > 0) {
        // One full-width selection per line: a single multi-line selection would leave the
        // ends of the lines unpainted.
        QTextBlock block = document()->findBlockByNumber(m_first - 1);
        for (int line = m_first; line <= m_last && block.isValid(); ++line, block = block.next()) {
            QTextEdit::ExtraSelection sel;
            sel.format.setBackground(kRangeBackground);
            sel.format.setProperty(QTextFormat::FullWidthSelection, true);
            sel.cursor = QTextCursor(block);
            selections.append(sel);
        }
    }
    setExtraSelections(selections);
}

void CodeView::mouseReleaseEvent(QMouseEvent* event)
{
    QPlainTextEdit::mouseReleaseEvent(event);
    // A plain click, not the end of a text selection (copying code must not change the selection).
    if (event->button() == Qt::LeftButton && !textCursor().hasSelection())
        emit lineClicked(cursorForPosition(event->position().toPoint()).blockNumber() + 1);
}

}  // namespace tessera::views
