#include "app/gui/help_windows.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QFile>
#include <QFontInfo>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTableView>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "core/pipeline/toolchain.h"

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "unknown"
#endif
#ifndef TESSERA_CUDA_TOOLKIT_VERSION
#define TESSERA_CUDA_TOOLKIT_VERSION ""
#endif

namespace tessera::app {
namespace {

QString firstError(const support::DiagnosticList& d)
{
    for (const support::Diagnostic& x : d.items()) {
        if (x.severity == support::Severity::Error)
            return QString::fromStdString(x.message);
    }
    return QStringLiteral("unknown reason");
}

QString plainText(QString text)
{
    // "&&" is a literal ampersand; a single '&' marks the mnemonic.
    text.replace(QLatin1String("&&"), QStringLiteral("\x01"));
    text.remove(QLatin1Char('&'));
    text.replace(QStringLiteral("\x01"), QStringLiteral("&"));
    return text;
}

QString shortcutText(const QAction* a)
{
    QStringList keys;
    for (const QKeySequence& k : a->shortcuts()) {
        if (!k.isEmpty())
            keys << k.toString(QKeySequence::NativeText);
    }
    return keys.join(QStringLiteral(", "));
}

void collectMenu(const QMenu* menu, const QString& path, QSet<const QAction*>& seen, QList<ShortcutEntry>& out)
{
    for (QAction* a : menu->actions()) {
        if (a->isSeparator())
            continue;
        if (QMenu* sub = a->menu()) {
            collectMenu(sub, path + QStringLiteral(" > ") + plainText(sub->title()), seen, out);
            continue;
        }
        if (seen.contains(a))
            continue;
        seen.insert(a);
        const QString keys = shortcutText(a);
        if (!keys.isEmpty())
            out.append({path, plainText(a->text()), keys});
    }
}

/// Heading sizes relative to the body text, by level (1-based; deeper levels use the last).
constexpr double kHeadingScale[] = {1.6, 1.35, 1.15, 1.0};

/// Gives Qt's Markdown rendering a guide's look: headings in the window's font at one size per
/// level (the importer leaves code spans in a heading at the body's size and in another family,
/// so "The Tessera DSL (.tsr)" came out in two sizes), room above headings, shaded code blocks
/// and a margin around the text.
void styleGuide(QTextDocument* doc, const QFont& body)
{
    doc->setDocumentMargin(14);
    const QString fixedFamily = QFontDatabase::systemFont(QFontDatabase::FixedFont).family();
    QTextCursor cursor(doc);
    cursor.beginEditBlock();
    for (QTextBlock block = doc->begin(); block.isValid(); block = block.next()) {
        QTextBlockFormat bf = block.blockFormat();
        const int level = bf.headingLevel();
        if (level <= 0) {
            if (bf.nonBreakableLines()) {  // a code block
                bf.setBackground(QColor(244, 245, 247));
                cursor.setPosition(block.position());
                cursor.setBlockFormat(bf);
            }
            continue;
        }
        bf.setTopMargin(level <= 2 ? 16 : 10);
        bf.setBottomMargin(6);
        cursor.setPosition(block.position());
        cursor.setBlockFormat(bf);
        const double size = QFontInfo(body).pointSizeF() *
                            kHeadingScale[std::min<std::size_t>(static_cast<std::size_t>(level), std::size(kHeadingScale)) - 1];
        // Formats are changed after the walk: changing them splits and merges the fragments walked.
        std::vector<std::pair<QTextFragment, QTextCharFormat>> fragments;
        for (QTextBlock::iterator it = block.begin(); !it.atEnd(); ++it) {
            QTextCharFormat cf = it.fragment().charFormat();
            const bool code = cf.fontFixedPitch() || cf.fontFamilies().toStringList().contains(fixedFamily);
            // The importer's relative size would win over the point size (even at 0).
            cf.clearProperty(QTextFormat::FontSizeAdjustment);
            cf.setFontPointSize(size);
            cf.setFontWeight(QFont::Bold);
            cf.setFontFamilies(QStringList{code ? fixedFamily : body.family()});
            fragments.emplace_back(it.fragment(), cf);
        }
        for (const auto& [fragment, cf] : fragments) {
            cursor.setPosition(fragment.position());
            cursor.setPosition(fragment.position() + fragment.length(), QTextCursor::KeepAnchor);
            cursor.setCharFormat(cf);
        }
    }
    cursor.endEditBlock();
}

}  // namespace

QString tesseraVersion() { return QStringLiteral(TESSERA_VERSION); }

QString docResource(const QString& fileName) { return QStringLiteral(":/docs/") + fileName; }

DocWindow::DocWindow(const QString& fileName, QWidget* parent) : QWidget(parent, Qt::Window)
{
    setObjectName(QStringLiteral("docWindow"));
    m_browser = new QTextBrowser(this);
    m_browser->setOpenLinks(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_browser);
    connect(m_browser, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        const QString name = url.fileName();
        if (url.isRelative() && name.endsWith(QLatin1String(".md")) && load(name))
            return;
        if (url.isRelative() && url.path().isEmpty() && url.hasFragment()) {
            m_browser->scrollToAnchor(url.fragment());
            return;
        }
        QDesktopServices::openUrl(url);
    });
    resize(860, 900);
    load(fileName);
}

bool DocWindow::load(const QString& fileName)
{
    QFile f(docResource(fileName));
    if (!f.open(QIODevice::ReadOnly)) {
        m_browser->setPlainText(tr("The guide '%1' is not part of this build.").arg(fileName));
        return false;
    }
    m_file = fileName;
    m_browser->setMarkdown(QString::fromUtf8(f.readAll()));
    styleGuide(m_browser->document(), m_browser->font());
    // The first heading names the guide.
    const QString title = m_browser->document()->firstBlock().text().trimmed();
    setWindowTitle(title.isEmpty() ? fileName : tr("%1 \u2014 Tessera").arg(title));
    return true;
}

QList<ShortcutEntry> shortcutEntries(const QMainWindow* window)
{
    QList<ShortcutEntry> out;
    QSet<const QAction*> seen;
    if (QMenuBar* bar = window->menuBar()) {
        for (QAction* a : bar->actions()) {
            if (QMenu* m = a->menu())
                collectMenu(m, plainText(m->title()), seen, out);
        }
    }
    // Actions with a shortcut that live on the window or a dock, not in a menu (e.g. a view's).
    for (const QAction* a : window->findChildren<QAction*>()) {
        if (seen.contains(a) || a->isSeparator() || a->menu() != nullptr)
            continue;
        seen.insert(a);
        const QString keys = shortcutText(a);
        if (!keys.isEmpty() && !a->text().isEmpty())
            out.append({QStringLiteral("(window)"), plainText(a->text()), keys});
    }
    return out;
}

ShortcutsDialog::ShortcutsDialog(const QMainWindow* window, QWidget* parent) : QDialog(parent)
{
    setObjectName(QStringLiteral("shortcutsDialog"));
    setWindowTitle(tr("Keyboard Shortcuts"));
    m_model = new QStandardItemModel(0, 3, this);
    m_model->setHorizontalHeaderLabels({tr("Menu"), tr("Action"), tr("Shortcut")});
    for (const ShortcutEntry& e : shortcutEntries(window)) {
        QList<QStandardItem*> row{new QStandardItem(e.menuPath), new QStandardItem(e.text),
                                  new QStandardItem(e.shortcut)};
        for (QStandardItem* item : row)
            item->setEditable(false);
        m_model->appendRow(row);
    }
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);

    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("shortcutFilter"));
    m_filter->setPlaceholderText(tr("Filter by menu, action or key (e.g. run, Ctrl+G)"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);

    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("shortcutTable"));
    m_table->setModel(m_proxy);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setSortingEnabled(false);
    m_table->resizeColumnsToContents();

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_filter);
    layout->addWidget(m_table, 1);
    layout->addWidget(buttons);
    resize(620, 560);
}

int ShortcutsDialog::visibleRows() const { return m_proxy->rowCount(); }

QStringList ShortcutsDialog::rowText(int row) const
{
    QStringList out;
    for (int c = 0; c < 3; ++c)
        out << m_proxy->index(row, c).data().toString();
    return out;
}

QStringList aboutLines(const QString& compiler)
{
    QStringList lines;
    lines << QStringLiteral("Tessera: %1").arg(tesseraVersion());
    lines << QStringLiteral("Qt: %1 (built with %2)").arg(QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR));
    const QString toolkit = QStringLiteral(TESSERA_CUDA_TOOLKIT_VERSION);
    lines << (toolkit.isEmpty() ? QStringLiteral("CUDA toolkit (build): not found: built without the CUDA toolkit")
                                : QStringLiteral("CUDA toolkit (build): %1").arg(toolkit));
    const support::Expected<pipeline::NvrtcVersion> nvrtc = pipeline::nvrtcVersion();
    lines << (nvrtc.ok() ? QStringLiteral("NVRTC: %1 (%2)")
                               .arg(QString::fromStdString(nvrtc->version), QString::fromStdString(nvrtc->path))
                         : QStringLiteral("NVRTC: not found: %1").arg(firstError(nvrtc.diagnostics())));
    const support::Expected<std::string> driver = pipeline::cudaDriverVersion();
    lines << (driver.ok() ? QStringLiteral("CUDA driver: %1").arg(QString::fromStdString(*driver))
                          : QStringLiteral("CUDA driver: not found: %1").arg(firstError(driver.diagnostics())));
    const support::Expected<std::string> cxx = pipeline::hostCompilerVersion(compiler.toStdString());
    lines << (cxx.ok() ? QStringLiteral("C++ compiler: %1 (%2)").arg(QString::fromStdString(*cxx), compiler)
                       : QStringLiteral("C++ compiler: not found: %1").arg(firstError(cxx.diagnostics())));
    return lines;
}

AboutDialog::AboutDialog(const QString& compiler, QWidget* parent) : QDialog(parent), m_lines(aboutLines(compiler))
{
    setObjectName(QStringLiteral("aboutDialog"));
    setWindowTitle(tr("About Tessera"));
    auto* title = new QLabel(tr("<h2>Tessera %1</h2><p>An IDE for tensor programs: graphs, task mappings, "
                                "fusion, JIT and rooflines.</p>")
                                 .arg(tesseraVersion().toHtmlEscaped()),
                             this);
    auto* details = new QLabel(this);
    details->setObjectName(QStringLiteral("aboutDetails"));
    details->setTextFormat(Qt::PlainText);
    details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    details->setText(m_lines.join(QLatin1Char('\n')));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    QPushButton* copy = buttons->addButton(tr("Copy"), QDialogButtonBox::ActionRole);
    copy->setToolTip(tr("Copy the versions (for a bug report)"));
    connect(copy, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(text()); });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(title);
    layout->addWidget(details);
    layout->addWidget(buttons);
}

}  // namespace tessera::app
