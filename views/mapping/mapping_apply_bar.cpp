#include "views/mapping/mapping_apply_bar.h"

#include <QAction>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace tessera::views {

MappingApplyBar::MappingApplyBar(QWidget* parent)
    : QWidget(parent),
      m_kernel(new QLabel(this)),
      m_apply(new QPushButton(tr("Apply"), this)),
      m_reset(new QPushButton(tr("Reset to Default"), this)),
      m_status(new QLabel(this)),
      m_applyAction(new QAction(tr("Apply Mapping to Kernel"), this))
{
    m_kernel->setObjectName(QStringLiteral("mappingKernel"));
    m_kernel->setTextFormat(Qt::RichText);
    m_kernel->setWordWrap(true);  // a long two-level mapping must not widen the dock
    m_apply->setObjectName(QStringLiteral("applyMapping"));
    m_reset->setObjectName(QStringLiteral("resetMapping"));
    m_status->setObjectName(QStringLiteral("mappingApplyStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->hide();
    m_apply->setToolTip(tr("Compile the selected kernel with these mappings (Ctrl+Return); undo with Ctrl+Z"));
    m_reset->setToolTip(tr("Forget the mapping applied to this kernel: it compiles with its default schedule again"));
    // Both Return keys: laptops without a keypad send Key_Return, keypads Key_Enter.
    m_applyAction->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)});
    m_applyAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);

    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_kernel, 1);
    row->addWidget(m_apply);
    row->addWidget(m_reset);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(row);
    layout->addWidget(m_status);

    connect(m_apply, &QPushButton::clicked, this, &MappingApplyBar::requestApply);
    connect(m_applyAction, &QAction::triggered, this, &MappingApplyBar::requestApply);
    connect(m_reset, &QPushButton::clicked, this, [this] {
        if (!m_node.isEmpty() && m_origin == ScheduleOrigin::User && !m_busy)
            emit resetRequested(m_node);
    });
    clearKernel();
}

void MappingApplyBar::setKernel(const QString& node, const QString& opType, ScheduleOrigin origin,
                                const QString& current)
{
    if (node != m_node)
        setStatus(QString(), false);
    m_node = node;
    m_opType = opType;
    m_origin = origin;
    QString from;
    switch (origin) {
    case ScheduleOrigin::Default: from = tr("default schedule"); break;
    case ScheduleOrigin::Program: from = tr("the program's schedule"); break;
    case ScheduleOrigin::User: from = tr("your mapping"); break;
    }
    QString text = tr("Kernel <b>%1</b> (%2) \u00b7 compiles with %3").arg(node.toHtmlEscaped(), opType.toHtmlEscaped(), from);
    if (!current.isEmpty())
        text += QStringLiteral(" <code>%1</code>").arg(current.toHtmlEscaped());
    m_kernel->setText(text);
    m_kernel->setToolTip(current);
    // ONNX exporters name nodes by module path ("/features/features.0/features.0.0/Conv"): the
    // button keeps a readable width, its tooltip and the kernel line have the whole name.
    const QString shortName = m_apply->fontMetrics().elidedText(node, Qt::ElideMiddle, 160);
    m_apply->setText(tr("Apply to %1").arg(shortName));
    m_apply->setToolTip(tr("Compile %1 with these mappings (Ctrl+Return); undo with Ctrl+Z").arg(node));
    updateEnabled();
}

void MappingApplyBar::clearKernel()
{
    m_node.clear();
    m_opType.clear();
    m_origin = ScheduleOrigin::Default;
    m_kernel->setText(tr("<i>Preview: select an operator to apply a mapping to its kernel</i>"));
    m_apply->setText(tr("Apply"));
    m_apply->setToolTip(tr("Select an operator: its kernel compiles with the mappings you apply (Ctrl+Return)"));
    setStatus(QString(), false);
    updateEnabled();
}

void MappingApplyBar::setExpressionsValid(bool valid)
{
    m_valid = valid;
    updateEnabled();
}

void MappingApplyBar::setBusy(bool busy)
{
    m_busy = busy;
    if (busy)
        setStatus(tr("Checking the mapping against %1 ...").arg(m_node), false);
    updateEnabled();
}

void MappingApplyBar::setStatus(const QString& text, bool error)
{
    m_statusError = error && !text.isEmpty();
    m_status->setText(text);
    m_status->setStyleSheet(m_statusError ? QStringLiteral("color: #c62828;") : QString());
    m_status->setVisible(!text.isEmpty());
}

QString MappingApplyBar::statusText() const { return m_status->text(); }

void MappingApplyBar::updateEnabled()
{
    const bool kernel = !m_node.isEmpty();
    m_apply->setEnabled(kernel && m_valid && !m_busy);
    m_applyAction->setEnabled(kernel && m_valid && !m_busy);
    m_reset->setEnabled(kernel && m_origin == ScheduleOrigin::User && !m_busy);
}

void MappingApplyBar::requestApply()
{
    if (m_node.isEmpty() || !m_valid || m_busy)
        return;
    emit applyRequested(m_node);
}

}  // namespace tessera::views
