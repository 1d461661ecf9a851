#include "views/program/program_editor.h"

#include <algorithm>

#include <QFontDatabase>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QTextBlock>
#include <QToolTip>

#include "views/program/dsl_highlighter.h"

namespace tessera::views {

namespace {

const QColor kCurrentLine(0xff, 0xe0, 0x66, 60);
const QColor kStatementBackground(0xd2, 0xe3, 0xfc);
const QColor kStatementGutter(0x4a, 0x86, 0xd8);

QColor severityColor(support::Severity s)
{
    switch (s) {
    case support::Severity::Error: return QColor(0xd3, 0x2f, 0x2f);
    case support::Severity::Warning: return QColor(0xe0, 0x8a, 0x00);
    case support::Severity::Note: break;
    }
    return QColor(0x1e, 0x6f, 0xd9);
}

QString diagnosticText(const support::Diagnostic& d)
{
    QString text = QStringLiteral("%1: %2").arg(QString::fromUtf8(support::severityName(d.severity)),
                                               QString::fromStdString(d.message));
    for (const std::string& n : d.notes)
        text += QLatin1Char('\n') + QString::fromStdString(n);
    return text;
}

/// The marker's diameter for a font height.
int markerSize(const QFontMetrics& fm) { return std::max(6, fm.height() * 3 / 5); }

}  // namespace

ProgramEditor::ProgramEditor(QWidget* parent)
    : GutterTextEdit(parent), m_highlighter(new DslHighlighter(document()))
{
    setLineWrapMode(QPlainTextEdit::NoWrap);
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    mono.setFamily(QStringLiteral("DejaVu Sans Mono"));
    mono.setStyleHint(QFont::Monospace);
    mono.setPointSize(9);
    setFont(mono);
    document()->setDefaultFont(mono);
    setTabStopDistance(QFontMetricsF(mono).horizontalAdvance(QLatin1Char(' ')) * 2);
    gutter()->setMouseTracking(true);

    connect(this, &QPlainTextEdit::cursorPositionChanged, this, &ProgramEditor::applySelections);
    connect(this, &QPlainTextEdit::textChanged, this, [this] {
        if (!m_settingText)
            emit programEdited(toPlainText());
    });
    updateGutterWidth();
    applySelections();
}

void ProgramEditor::setProgram(const QString& text)
{
    m_settingText = true;
    m_underlines.clear();
    m_diagnostics.clear();
    m_statements.clear();
    m_highlighted = -1;
    setPlainText(text);
    m_settingText = false;
    document()->setModified(false);
    applySelections();
    gutter()->update();
}

bool ProgramEditor::isModified() const { return document()->isModified(); }

void ProgramEditor::setUnmodified() { document()->setModified(false); }

int ProgramEditor::positionOf(int line, int byteColumn) const
{
    const QTextBlock block = document()->findBlockByNumber(line - 1);
    if (line <= 0 || !block.isValid())
        return -1;
    const QString text = block.text();
    const int n = static_cast<int>(text.size());
    int index = 0;
    int bytes = 0;
    const int skip = std::max(0, byteColumn - 1);
    // DSL columns count UTF-8 bytes; the document counts UTF-16 code units.
    while (index < n && bytes < skip) {
        const char16_t c = text[index].unicode();
        if (QChar::isHighSurrogate(c) && index + 1 < n) {
            bytes += 4;
            index += 2;
        } else {
            bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
            index += 1;
        }
    }
    return block.position() + index;
}

void ProgramEditor::setDiagnostics(const std::vector<support::Diagnostic>& diagnostics)
{
    m_diagnostics.clear();
    m_underlines.clear();
    for (const support::Diagnostic& d : diagnostics) {
        if (d.begin.line <= 0)
            continue;
        m_diagnostics.push_back(d);
        // A line past the end (an "unexpected end of file") is marked on the last line.
        const int line = std::min(d.begin.line, blockCount());
        int begin = positionOf(line, line == d.begin.line ? d.begin.column : 1 << 30);
        const QTextBlock block = document()->findBlock(begin);
        const int blockEnd = block.position() + block.length() - 1;
        // "expected ';'" points just past the line's last character: underline that character,
        // since an underline under the line break is not drawn.
        if (begin >= blockEnd && block.length() > 1)
            begin = blockEnd - 1;
        int end = -1;
        if (d.end.line > 0 && (d.end.line > d.begin.line || d.end.column >= d.begin.column)) {
            end = positionOf(d.end.line, d.end.column);
            if (end >= 0) {
                const QTextBlock endBlock = document()->findBlock(end);
                const QChar c = document()->characterAt(end);
                // Inclusive end -> exclusive, but never across the line break.
                end = std::min(end + (c.isHighSurrogate() ? 2 : 1), endBlock.position() + endBlock.length() - 1);
            }
        }
        if (end <= begin) {
            // No range: the word at the start, or one character.
            end = begin;
            while (end < blockEnd) {
                const QChar c = document()->characterAt(end);
                if (!c.isLetterOrNumber() && c != QLatin1Char('_'))
                    break;
                ++end;
            }
            if (end == begin)
                end = std::min(begin + 1, std::max(blockEnd, begin));
        }
        QTextCursor cursor(document());
        cursor.setPosition(begin);
        cursor.setPosition(end, QTextCursor::KeepAnchor);
        m_underlines.push_back({cursor, d.severity, diagnosticText(d)});
    }
    applySelections();
    gutter()->update();
}

QList<QTextEdit::ExtraSelection> ProgramEditor::diagnosticSelections() const
{
    QList<QTextEdit::ExtraSelection> out;
    for (const Underline& u : m_underlines) {
        QTextEdit::ExtraSelection sel;
        sel.cursor = u.cursor;
        sel.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
        sel.format.setUnderlineColor(severityColor(u.severity));
        out << sel;
    }
    return out;
}

QString ProgramEditor::diagnosticTextAt(int position) const
{
    QStringList parts;
    for (const Underline& u : m_underlines) {
        if (position >= u.cursor.selectionStart() && position <= u.cursor.selectionEnd())
            parts << u.text;
    }
    return parts.join(QLatin1Char('\n'));
}

QString ProgramEditor::diagnosticTextOnLine(int line) const
{
    QStringList parts;
    for (const Underline& u : m_underlines) {
        if (document()->findBlock(u.cursor.selectionStart()).blockNumber() + 1 == line)
            parts << u.text;
    }
    return parts.join(QLatin1Char('\n'));
}

int ProgramEditor::markerSeverity(int line) const
{
    int worst = -1;
    for (const Underline& u : m_underlines) {
        if (document()->findBlock(u.cursor.selectionStart()).blockNumber() + 1 == line)
            worst = std::max(worst, static_cast<int>(u.severity));
    }
    return worst;
}

void ProgramEditor::goTo(int line, int byteColumn)
{
    const int pos = positionOf(std::clamp(line, 1, std::max(1, blockCount())), byteColumn);
    if (pos < 0)
        return;
    QTextCursor cursor(document());
    cursor.setPosition(pos);
    setTextCursor(cursor);
    centerCursor();
    setFocus(Qt::OtherFocusReason);
}

void ProgramEditor::setStatements(std::vector<ProgramStatement> statements)
{
    m_statements = std::move(statements);
    m_highlighted = -1;
    applySelections();
    gutter()->update();
}

QTextCursor ProgramEditor::statementCursor(const ProgramStatement& s) const
{
    QTextCursor cursor(document());
    const int begin = positionOf(s.firstLine, s.firstColumn);
    int end = positionOf(s.lastLine, s.lastColumn);
    if (begin < 0 || end < 0)
        return {};
    end = std::min(end + 1, document()->characterCount() - 1);
    cursor.setPosition(begin);
    cursor.setPosition(std::max(begin, end), QTextCursor::KeepAnchor);
    return cursor;
}

bool ProgramEditor::highlightStatementOf(const std::string& node, SnapshotNodeKind kind)
{
    int found = -1;
    for (std::size_t i = 0; i < m_statements.size(); ++i) {
        if (m_statements[i].node == node && m_statements[i].kind == kind) {
            found = static_cast<int>(i);
            break;
        }
    }
    m_highlighted = found;
    applySelections();
    gutter()->update();
    if (found < 0)
        return false;
    const ProgramStatement& s = m_statements[static_cast<std::size_t>(found)];
    // Scroll only: moving the cursor would disturb typing when the graph's selection comes back
    // after a re-parse.
    const int first = firstVisibleBlock().blockNumber() + 1;
    const int lineHeight = std::max(1, fontMetrics().lineSpacing());
    const int visible = std::max(1, viewport()->height() / lineHeight);
    if (s.firstLine < first || s.lastLine > first + visible - 1)
        verticalScrollBar()->setValue(std::max(0, s.firstLine - 1 - 2));
    return true;
}

void ProgramEditor::clearStatementHighlight()
{
    if (m_highlighted < 0)
        return;
    m_highlighted = -1;
    applySelections();
    gutter()->update();
}

int ProgramEditor::statementAt(int position) const
{
    int best = -1;
    int bestLength = 0;
    for (std::size_t i = 0; i < m_statements.size(); ++i) {
        const QTextCursor c = statementCursor(m_statements[i]);
        if (c.isNull() || position < c.selectionStart() || position > c.selectionEnd())
            continue;
        const int length = c.selectionEnd() - c.selectionStart();
        if (best < 0 || length < bestLength) {
            best = static_cast<int>(i);
            bestLength = length;
        }
    }
    if (best >= 0)
        return best;
    // A click beside a statement (indentation, a trailing comment) means the statement of that line.
    const int line = document()->findBlock(position).blockNumber() + 1;
    for (std::size_t i = 0; i < m_statements.size(); ++i) {
        if (line >= m_statements[i].firstLine && line <= m_statements[i].lastLine)
            return static_cast<int>(i);
    }
    return -1;
}

QRect ProgramEditor::markerRect(int line) const
{
    const QTextBlock block = document()->findBlockByNumber(line - 1);
    if (line <= 0 || !block.isValid() || !block.isVisible())
        return {};
    const QRectF r = blockBoundingGeometry(block).translated(contentOffset());
    if (r.bottom() < 0 || r.top() > viewport()->height())
        return {};
    const QFontMetrics fm = fontMetrics();
    const int marker = markerSize(fm);
    const QPoint origin = gutter()->geometry().topLeft();
    return {origin.x() + 4, origin.y() + qRound(r.top()) + (fm.height() - marker) / 2, marker, marker};
}

int ProgramEditor::gutterWidth() const
{
    int digits = 1;
    for (int n = std::max(1, blockCount()); n >= 10; n /= 10)
        ++digits;
    digits = std::max(digits, 3);
    const QFontMetrics fm = fontMetrics();
    return 4 + markerSize(fm) + 4 + fm.horizontalAdvance(QLatin1Char('9')) * digits + 8;
}

void ProgramEditor::paintGutter(QPaintEvent* event)
{
    QPainter painter(gutter());
    painter.fillRect(event->rect(), QColor(0xf3, 0xf4, 0xf6));
    painter.setPen(QColor(0xdd, 0xe0, 0xe4));
    painter.drawLine(gutter()->width() - 1, event->rect().top(), gutter()->width() - 1, event->rect().bottom());
    painter.setFont(font());
    painter.setRenderHint(QPainter::Antialiasing);

    const QFontMetrics fm = fontMetrics();
    const int marker = markerSize(fm);
    const ProgramStatement* highlighted =
        m_highlighted >= 0 ? &m_statements[static_cast<std::size_t>(m_highlighted)] : nullptr;
    const int current = textCursor().blockNumber() + 1;
    QTextBlock block = firstVisibleBlock();
    int number = block.blockNumber() + 1;
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    int bottom = top + qRound(blockBoundingRect(block).height());
    const int w = gutter()->width();
    while (block.isValid() && top <= event->rect().bottom()) {
        if (block.isVisible() && bottom >= event->rect().top()) {
            if (highlighted != nullptr && number >= highlighted->firstLine && number <= highlighted->lastLine)
                painter.fillRect(QRect(w - 4, top, 3, bottom - top), kStatementGutter);
            const int severity = markerSeverity(number);
            if (severity >= 0) {
                painter.setPen(Qt::NoPen);
                painter.setBrush(severityColor(static_cast<support::Severity>(severity)));
                const QRect r = markerRect(number).translated(-gutter()->geometry().topLeft());
                painter.drawEllipse(r);
                if (severity == static_cast<int>(support::Severity::Error)) {
                    // A white bar makes the error marker readable without colour.
                    painter.setRenderHint(QPainter::Antialiasing, false);
                    painter.fillRect(QRect(r.left() + marker / 4, r.top() + marker / 2 - 1, marker - 2 * (marker / 4), 2),
                                     Qt::white);
                    painter.setRenderHint(QPainter::Antialiasing, true);
                }
            }
            painter.setPen(number == current ? QColor(0x30, 0x33, 0x38) : QColor(0x9a, 0xa0, 0xa6));
            painter.drawText(0, top, w - 8, fm.height(), Qt::AlignRight, QString::number(number));
        }
        block = block.next();
        top = bottom;
        bottom = top + qRound(blockBoundingRect(block).height());
        ++number;
    }
}

bool ProgramEditor::gutterEvent(QEvent* event)
{
    if (event->type() != QEvent::ToolTip)
        return false;
    auto* help = static_cast<QHelpEvent*>(event);
    const QTextBlock block = cursorForPosition(QPoint(0, help->pos().y())).block();
    const QString text = diagnosticTextOnLine(block.blockNumber() + 1);
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(help->globalPos(), text, gutter());
    return true;
}

bool ProgramEditor::viewportEvent(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = diagnosticTextAt(cursorForPosition(help->pos()).position());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, viewport());
        return true;
    }
    return QPlainTextEdit::viewportEvent(event);
}

void ProgramEditor::mouseReleaseEvent(QMouseEvent* event)
{
    QPlainTextEdit::mouseReleaseEvent(event);
    if (event->button() != Qt::LeftButton || textCursor().hasSelection())
        return;
    const int index = statementAt(textCursor().position());
    if (index >= 0)
        emit statementActivated(index);
}

void ProgramEditor::applySelections()
{
    QList<QTextEdit::ExtraSelection> selections;
    if (m_highlighted >= 0) {
        // One full-width selection per line: a multi-line one leaves the ends of lines unpainted.
        const ProgramStatement& s = m_statements[static_cast<std::size_t>(m_highlighted)];
        for (int line = s.firstLine; line <= s.lastLine; ++line) {
            const QTextBlock block = document()->findBlockByNumber(line - 1);
            if (!block.isValid())
                break;
            QTextEdit::ExtraSelection sel;
            sel.cursor = QTextCursor(block);
            sel.format.setBackground(kStatementBackground);
            sel.format.setProperty(QTextFormat::FullWidthSelection, true);
            selections << sel;
        }
    }
    {
        QTextEdit::ExtraSelection sel;
        sel.cursor = textCursor();
        sel.cursor.clearSelection();
        sel.format.setBackground(kCurrentLine);
        sel.format.setProperty(QTextFormat::FullWidthSelection, true);
        selections << sel;
    }
    selections << diagnosticSelections();
    setExtraSelections(selections);
    gutter()->update();
}

}  // namespace tessera::views
