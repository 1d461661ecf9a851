#include "views/code/code_diff_view.h"

#include <QFontDatabase>
#include <QLabel>
#include <QSyntaxHighlighter>
#include <QVBoxLayout>

namespace tessera::views {
namespace {

class DiffHighlighter : public QSyntaxHighlighter {
public:
    using QSyntaxHighlighter::QSyntaxHighlighter;

protected:
    void highlightBlock(const QString& text) override
    {
        QTextCharFormat f;
        // Only the first two lines are file headers: a removed "--i;" also starts with "---".
        const bool header = currentBlock().blockNumber() < 2;
        if (header && (text.startsWith(QLatin1String("---")) || text.startsWith(QLatin1String("+++")))) {
            f.setFontWeight(QFont::Bold);
        } else if (text.startsWith(QLatin1String("@@"))) {
            f.setForeground(QColor(30, 90, 180));
        } else {
            const QColor bg = text.startsWith(QLatin1Char('-'))   ? QColor(255, 225, 225)
                              : text.startsWith(QLatin1Char('+')) ? QColor(220, 250, 220)
                                                                  : QColor();
            if (!bg.isValid())
                return;
            f.setBackground(bg);
            f.setForeground(text.startsWith(QLatin1Char('-')) ? QColor(140, 20, 20) : QColor(20, 100, 30));
        }
        setFormat(0, static_cast<int>(text.size()), f);
    }
};

}  // namespace

CodeDiffView::CodeDiffView(QWidget* parent) : QWidget(parent), m_header(new QLabel(this)), m_editor(new QPlainTextEdit(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_header->setObjectName(QStringLiteral("diffHeader"));
    m_header->setTextFormat(Qt::PlainText);
    m_header->setContentsMargins(8, 4, 8, 4);
    m_header->setWordWrap(true);
    m_editor->setObjectName(QStringLiteral("diffView"));
    m_editor->setReadOnly(true);
    m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    new DiffHighlighter(m_editor->document());
    layout->addWidget(m_header);
    layout->addWidget(m_editor, 1);
}

void CodeDiffView::setDiff(const QString& diff, const QString& title, const QString& emptyNote)
{
    m_header->setText(title);
    m_editor->setPlainText(diff);
    m_editor->setPlaceholderText(emptyNote);
}

QString CodeDiffView::headerText() const { return m_header->text(); }
QString CodeDiffView::diffText() const { return m_editor->toPlainText(); }

QColor CodeDiffView::lineBackground(const QString& line)
{
    if (line.startsWith(QLatin1String("---")) || line.startsWith(QLatin1String("+++")))
        return {};
    if (line.startsWith(QLatin1Char('-')))
        return QColor(255, 225, 225);
    if (line.startsWith(QLatin1Char('+')))
        return QColor(220, 250, 220);
    return {};
}

}  // namespace tessera::views
