#include "views/program/program_panel.h"

#include <QLabel>
#include <QStackedWidget>
#include <QVBoxLayout>

#include "views/program/program_editor.h"

namespace tessera::views {

ProgramPanel::ProgramPanel(QWidget* parent)
    : QWidget(parent), m_banner(new QLabel(this)), m_editor(new ProgramEditor(this)), m_placeholder(new QLabel(this)),
      m_stack(new QStackedWidget(this))
{
    m_banner->setObjectName(QStringLiteral("programBanner"));
    m_banner->setWordWrap(true);
    m_banner->setTextFormat(Qt::PlainText);
    m_banner->setContentsMargins(8, 4, 8, 4);
    m_banner->setStyleSheet(QStringLiteral("background: #fff4ce; color: #5a4500; border-bottom: 1px solid #e6d38a;"));
    m_banner->hide();
    m_editor->setObjectName(QStringLiteral("programEditor"));
    m_placeholder->setObjectName(QStringLiteral("programPlaceholder"));
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_placeholder->setStyleSheet(QStringLiteral("color: #6b7280;"));
    m_stack->addWidget(m_placeholder);
    m_stack->addWidget(m_editor);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_banner);
    layout->addWidget(m_stack, 1);
    showPlaceholder(tr("Open a program (.tsr) to edit it here; an ONNX model shows as DSL."));
}

void ProgramPanel::showProgram(const QString& text, bool readOnly, const QString& banner)
{
    m_editor->setProgram(text);
    m_editor->setReadOnly(readOnly);
    if (readOnly)
        m_editor->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_banner->setText(banner);
    m_banner->setVisible(!banner.isEmpty());
    m_stack->setCurrentWidget(m_editor);
}

void ProgramPanel::showPlaceholder(const QString& message)
{
    m_editor->setProgram(QString());
    m_placeholder->setText(message);
    m_banner->hide();
    m_stack->setCurrentWidget(m_placeholder);
}

bool ProgramPanel::hasProgram() const { return m_stack->currentWidget() == m_editor; }

QString ProgramPanel::bannerText() const { return m_banner->text(); }

bool ProgramPanel::bannerVisible() const { return !m_banner->isHidden(); }

QString ProgramPanel::placeholderText() const { return m_placeholder->text(); }

}  // namespace tessera::views
