#include "views/mapping/expression_edit.h"

#include <algorithm>

#include <QCoreApplication>
#include <QFontDatabase>
#include <QInputMethodEvent>
#include <QTextCharFormat>

namespace tessera::views {

ExpressionEdit::ExpressionEdit(QWidget* parent) : QLineEdit(parent)
{
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setClearButtonEnabled(true);
}

void ExpressionEdit::setErrorRange(int beginColumn, int endColumn)
{
    const int len = static_cast<int>(text().size());
    m_begin = std::clamp(beginColumn, 1, std::max(1, len + 1));
    m_end = std::clamp(std::max(endColumn, m_begin), m_begin, std::max(m_begin, len));
    m_hasError = true;
    applyFormats();
    setStyleSheet(QStringLiteral("QLineEdit { border: 1px solid #d32f2f; border-radius: 2px; padding: 2px; }"));
}

void ExpressionEdit::clearError()
{
    if (!m_hasError)
        return;
    m_hasError = false;
    m_begin = m_end = 0;
    applyFormats();
    setStyleSheet(QString());
}

void ExpressionEdit::applyFormats()
{
    // QLineEdit has no public per-range formatting; an input-method event with TextFormat
    // attributes (start relative to the cursor) is the supported way to style parts of its text.
    QList<QInputMethodEvent::Attribute> attrs;
    if (m_hasError) {
        QTextCharFormat fmt;
        fmt.setUnderlineStyle(QTextCharFormat::WaveUnderline);
        fmt.setUnderlineColor(QColor(0xd3, 0x2f, 0x2f));
        fmt.setForeground(QColor(0xb7, 0x1c, 0x1c));
        const int start = m_begin - 1;
        // An error at the end of the text (e.g. a missing ')') marks the last character.
        const int textLen = static_cast<int>(text().size());
        const int s = std::min(start, std::max(0, textLen - 1));
        const int length = std::max(1, m_end - s);
        attrs << QInputMethodEvent::Attribute(QInputMethodEvent::TextFormat, s - cursorPosition(), length, fmt);
    }
    QInputMethodEvent ev(QString(), attrs);
    QCoreApplication::sendEvent(this, &ev);
}

}  // namespace tessera::views
