#include "views/code/code_panel.h"

#include <QLabel>
#include <QVBoxLayout>

#include "views/code/code_view.h"

namespace tessera::views {

CodePanel::CodePanel(QWidget* parent) : QWidget(parent), m_header(new QLabel(this)), m_view(new CodeView(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_header->setObjectName(QStringLiteral("codeHeader"));
    m_header->setTextFormat(Qt::PlainText);
    m_header->setContentsMargins(8, 4, 8, 4);
    m_header->setAutoFillBackground(true);
    m_header->setWordWrap(true);
    m_view->setObjectName(QStringLiteral("codeView"));
    layout->addWidget(m_header);
    layout->addWidget(m_view, 1);
    clear(tr("No generated code yet: Run > Run (CPU) (Ctrl+R) compiles the model."));
}

void CodePanel::setModule(const QString& source, const QString& title)
{
    m_title = title;
    m_hasModule = true;
    m_view->setCode(source);
    m_header->setText(title);
}

void CodePanel::showKernel(const QString& kernelName, int firstLine, int lastLine)
{
    m_view->highlightLines(firstLine, lastLine);
    if (m_view->highlightFirst() == 0) {
        showNote(tr("Kernel '%1': no lines in the module").arg(kernelName));
        return;
    }
    m_header->setText(tr("%1  \u2014  kernel '%2', lines %3\u2013%4")
                          .arg(m_title, kernelName)
                          .arg(m_view->highlightFirst())
                          .arg(m_view->highlightLast()));
}

void CodePanel::showNote(const QString& note)
{
    m_view->clearHighlight();
    m_header->setText(m_title.isEmpty() ? note : QStringLiteral("%1  \u2014  %2").arg(m_title, note));
}

void CodePanel::clear(const QString& placeholder)
{
    m_title.clear();
    m_hasModule = false;
    m_view->setCode(QString());
    m_view->setPlaceholderText(placeholder);
    m_header->setText(tr("Generated C++"));
}

QString CodePanel::headerText() const { return m_header->text(); }

}  // namespace tessera::views
