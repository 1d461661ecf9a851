#include "views/code/code_panel.h"

#include <algorithm>

#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QStackedWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include "views/code/code_diff_view.h"
#include "views/code/code_view.h"
#include "views/code/ptx_highlighter.h"

namespace tessera::views {

namespace {

QLabel* makeHeader(QWidget* parent, const QString& name)
{
    auto* label = new QLabel(parent);
    label->setObjectName(name);
    label->setTextFormat(Qt::PlainText);
    label->setContentsMargins(8, 4, 8, 4);
    label->setAutoFillBackground(true);
    label->setWordWrap(true);
    return label;
}

}  // namespace

CodePanel::CodePanel(QWidget* parent)
    : QWidget(parent), m_splitter(new QSplitter(Qt::Horizontal, this)), m_ptxPane(new QWidget(m_splitter))
{
    // Each pane has its header above its text, so the two texts start level.
    auto* codePane = new QWidget(m_splitter);
    codePane->setObjectName(QStringLiteral("codePane"));
    m_header = makeHeader(codePane, QStringLiteral("codeHeader"));
    m_view = new CodeView(codePane);
    auto* codeLayout = new QVBoxLayout(codePane);
    codeLayout->setContentsMargins(0, 0, 0, 0);
    codeLayout->setSpacing(0);
    codeLayout->addWidget(m_header);
    codeLayout->addWidget(m_view, 1);
    m_ptxHeader = makeHeader(m_ptxPane, QStringLiteral("ptxHeader"));
    m_ptxView = new CodeView(m_ptxPane);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_view->setObjectName(QStringLiteral("codeView"));
    m_ptxView->setObjectName(QStringLiteral("ptxView"));
    m_ptxView->setLanguage(CodeView::Language::Ptx);
    m_ptxPane->setObjectName(QStringLiteral("ptxPane"));
    auto* ptxLayout = new QVBoxLayout(m_ptxPane);
    ptxLayout->setContentsMargins(0, 0, 0, 0);
    ptxLayout->setSpacing(0);
    ptxLayout->addWidget(m_ptxHeader);
    ptxLayout->addWidget(m_ptxView, 1);
    m_splitter->setObjectName(QStringLiteral("codeSplitter"));
    m_splitter->setChildrenCollapsible(false);
    m_splitter->addWidget(codePane);
    m_splitter->addWidget(m_ptxPane);
    m_splitter->setStretchFactor(0, 1);
    m_splitter->setStretchFactor(1, 1);
    m_diffBar = new QWidget(this);
    auto* bar = new QHBoxLayout(m_diffBar);
    bar->setContentsMargins(4, 2, 4, 2);
    bar->addStretch(1);
    m_diffButton = new QToolButton(m_diffBar);
    m_diffButton->setObjectName(QStringLiteral("diffButton"));
    m_diffButton->setText(tr("Diff vs pinned"));
    m_diffButton->setCheckable(true);
    m_diffButton->setToolTip(tr("Show the selected kernel's code as a diff against the pinned run's (Run > Pin Run)"));
    bar->addWidget(m_diffButton);
    m_diffBar->hide();
    m_diff = new CodeDiffView(this);
    m_diff->setObjectName(QStringLiteral("codeDiff"));
    m_stack = new QStackedWidget(this);
    m_stack->addWidget(m_splitter);
    m_stack->addWidget(m_diff);
    layout->addWidget(m_diffBar);
    layout->addWidget(m_stack, 1);
    connect(m_splitter, &QSplitter::splitterMoved, this, [this] { levelHeaders(); });
    connect(m_diffButton, &QToolButton::toggled, this, [this](bool on) {
        if (!on)
            m_stack->setCurrentWidget(m_splitter);
        emit diffToggled(on);
    });
    clear(tr("No generated code yet: Run > Run (CPU) (Ctrl+R) compiles the model."));
}

void CodePanel::setModule(const QString& source, const QString& title)
{
    m_title = title;
    m_hasModule = true;
    m_cuda = false;
    m_kernel.clear();
    m_entry.clear();
    m_view->setLanguage(CodeView::Language::Cpp);
    m_view->setCode(source);
    clearPtx(QString());
    m_ptxPane->hide();
    m_header->setText(title);
    levelHeaders();
}

void CodePanel::setCudaModule(const QString& source, const QString& title, const QString& ptxPlaceholder)
{
    m_title = title;
    m_hasModule = true;
    m_cuda = true;
    m_kernel.clear();
    m_entry.clear();
    m_view->setLanguage(CodeView::Language::Cuda);
    m_view->setCode(source);
    clearPtx(ptxPlaceholder);
    m_ptxPane->show();
    // Half and half when the pane appears; afterwards the user's split stays.
    if (m_splitter->sizes().value(1) == 0) {
        const int w = std::max(2, m_splitter->width());
        m_splitter->setSizes({w / 2, w - w / 2});
    }
    m_header->setText(title);
    levelHeaders();
}

void CodePanel::setPtx(const QString& ptx, const QString& title)
{
    if (!m_cuda)
        return;
    m_hasPtx = true;
    m_ptxTitle = title;
    m_ptxView->setCode(ptx);
    m_ptxHeader->setText(title);
    showPtxEntry();
}

void CodePanel::clearPtx(const QString& placeholder)
{
    m_hasPtx = false;
    m_ptxTitle.clear();
    m_ptxView->setCode(QString());
    m_ptxView->setPlaceholderText(placeholder);
    m_ptxHeader->setText(tr("PTX"));
}

void CodePanel::showKernel(const QString& kernelName, int firstLine, int lastLine, const QString& entry)
{
    m_view->highlightLines(firstLine, lastLine);
    if (m_view->highlightFirst() == 0) {
        showNote(tr("Kernel '%1': no lines in the module").arg(kernelName));
        return;
    }
    m_kernel = kernelName;
    m_entry = entry;
    showPtxEntry();
    updateHeader();
}

void CodePanel::showPtxEntry()
{
    if (!m_hasPtx)
        return;
    const PtxLines lines = m_entry.isEmpty() ? PtxLines{} : findPtxEntry(m_ptxView->toPlainText(), m_entry);
    m_ptxView->highlightLines(lines.first, lines.last);
    if (m_ptxView->highlightFirst() > 0) {
        m_ptxHeader->setText(tr("%1  \u2014  .entry %2, lines %3\u2013%4")
                                 .arg(m_ptxTitle, m_entry)
                                 .arg(m_ptxView->highlightFirst())
                                 .arg(m_ptxView->highlightLast()));
    } else if (!m_entry.isEmpty()) {
        m_ptxHeader->setText(tr("%1  \u2014  no .entry %2").arg(m_ptxTitle, m_entry));
    } else {
        m_ptxHeader->setText(m_ptxTitle);
    }
    levelHeaders();
}

void CodePanel::updateHeader()
{
    m_header->setText(tr("%1  \u2014  kernel '%2', lines %3\u2013%4")
                          .arg(m_title, m_kernel)
                          .arg(m_view->highlightFirst())
                          .arg(m_view->highlightLast()));
    levelHeaders();
}

void CodePanel::showNote(const QString& note)
{
    m_kernel.clear();
    m_entry.clear();
    m_view->clearHighlight();
    showPtxEntry();
    m_header->setText(m_title.isEmpty() ? note : QStringLiteral("%1  \u2014  %2").arg(m_title, note));
    levelHeaders();
}

void CodePanel::clear(const QString& placeholder)
{
    m_title.clear();
    m_kernel.clear();
    m_entry.clear();
    m_hasModule = false;
    m_cuda = false;
    m_view->setCode(QString());
    m_view->setPlaceholderText(placeholder);
    clearPtx(QString());
    m_ptxPane->hide();
    m_header->setText(tr("Generated code"));
}

void CodePanel::levelHeaders()
{
    // A header that wraps would push its text below the other pane's: both get the taller height.
    m_header->setMinimumHeight(0);
    m_ptxHeader->setMinimumHeight(0);
    if (m_ptxPane->isHidden())
        return;
    const int h = std::max(m_header->heightForWidth(m_header->width()), m_ptxHeader->heightForWidth(m_ptxHeader->width()));
    m_header->setMinimumHeight(h);
    m_ptxHeader->setMinimumHeight(h);
}

void CodePanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    levelHeaders();
}

void CodePanel::setDiffAvailable(bool available)
{
    if (!available)
        showCode();
    m_diffBar->setVisible(available);
}

void CodePanel::showDiff(const QString& diff, const QString& title, const QString& emptyNote)
{
    m_diff->setDiff(diff, title, emptyNote);
    m_stack->setCurrentWidget(m_diff);
    const QSignalBlocker block(m_diffButton);
    m_diffButton->setChecked(true);
}

void CodePanel::showCode()
{
    m_stack->setCurrentWidget(m_splitter);
    const QSignalBlocker block(m_diffButton);
    m_diffButton->setChecked(false);
}

bool CodePanel::isDiffShown() const { return m_stack->currentWidget() == m_diff; }

QString CodePanel::headerText() const { return m_header->text(); }

QString CodePanel::ptxHeaderText() const { return m_ptxHeader->text(); }

}  // namespace tessera::views
