#include "app/gui/settings_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSpinBox>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

#include "core/pipeline/toolchain.h"

namespace tessera::app {
namespace {

// A compiler that prints nothing within this time is reported as not answering.
constexpr int kCheckTimeoutMs = 10000;

QString defaultFlagsText()
{
    QStringList flags;
    for (const std::string& f : pipeline::defaultHostCompilerFlags())
        flags << QString::fromStdString(f);
    return flags.join(QLatin1Char(' '));
}

}  // namespace

SettingsDialog::SettingsDialog(const AppSettings& settings, QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Preferences"));
    setObjectName(QStringLiteral("settingsDialog"));

    m_compiler = new QLineEdit(this);
    m_compiler->setObjectName(QStringLiteral("compilerEdit"));
    m_compiler->setPlaceholderText(QString::fromStdString(pipeline::defaultHostCompiler()));
    m_compiler->setToolTip(tr("Program name (searched in PATH) or path of the C++ compiler that builds the CPU "
                              "kernels (tessera-cli run --cxx). Empty: $TESSERA_CXX, else c++."));
    auto* browse = new QPushButton(tr("Browse..."), this);
    auto* check = new QPushButton(tr("Check"), this);
    check->setObjectName(QStringLiteral("checkCompiler"));
    auto* compilerRow = new QHBoxLayout;
    compilerRow->addWidget(m_compiler, 1);
    compilerRow->addWidget(browse);
    compilerRow->addWidget(check);
    m_compilerStatus = new QLabel(this);
    m_compilerStatus->setObjectName(QStringLiteral("compilerStatus"));
    m_compilerStatus->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_flags = new QLineEdit(this);
    m_flags->setObjectName(QStringLiteral("flagsEdit"));
    m_flags->setPlaceholderText(tr("e.g. -ffast-math"));
    m_flags->setToolTip(tr("Added after the default flags: %1").arg(defaultFlagsText()));
    auto* flagsNote = new QLabel(tr("Added after %1").arg(defaultFlagsText()), this);
    flagsNote->setEnabled(false);

    m_threads = new QSpinBox(this);
    m_threads->setObjectName(QStringLiteral("threadsSpin"));
    m_threads->setRange(0, 1024);
    m_threads->setSpecialValueText(tr("All cores (%1)").arg(std::max(1, QThread::idealThreadCount())));
    m_threads->setToolTip(tr("OpenMP threads of each run (tessera-cli run --threads). 0: every core. The "
                             "roofline compares against the roofs measured with the same number of threads."));

    m_cache = new QLineEdit(this);
    m_cache->setObjectName(QStringLiteral("cacheEdit"));
    m_cache->setPlaceholderText(tr("Default (%1)").arg(QDir::toNativeSeparators(
        QFileInfo(QString::fromStdString(pipeline::defaultKernelCacheDir())).absolutePath())));
    m_cache->setToolTip(tr("Compiled kernels are kept here by content hash, so an unchanged kernel is not "
                           "compiled again: host libraries in kernels/, CUDA PTX and CUBIN in cuda/."));
    auto* browseCache = new QPushButton(tr("Browse..."), this);
    m_clearCache = new QPushButton(tr("Clear..."), this);
    m_clearCache->setObjectName(QStringLiteral("clearCache"));
    m_clearCache->setToolTip(tr("Delete every cached kernel (the next run compiles them again)"));
    auto* cacheRow = new QHBoxLayout;
    cacheRow->addWidget(m_cache, 1);
    cacheRow->addWidget(browseCache);
    cacheRow->addWidget(m_clearCache);
    m_cacheUsage = new QLabel(this);
    m_cacheUsage->setObjectName(QStringLiteral("cacheUsage"));
    m_cacheUsage->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_target = new QComboBox(this);
    m_target->setObjectName(QStringLiteral("defaultTargetCombo"));
    m_target->addItem(tr("The target used last"), AppSettings::targetKey(AppSettings::DefaultTarget::LastUsed));
    m_target->addItem(tr("CPU"), AppSettings::targetKey(AppSettings::DefaultTarget::Cpu));
    m_target->addItem(tr("First CUDA device (compile only without one)"),
                      AppSettings::targetKey(AppSettings::DefaultTarget::FirstCuda));
    m_target->setToolTip(tr("The Run target selected when Tessera starts"));

    m_theme = new QComboBox(this);
    m_theme->setObjectName(QStringLiteral("themeCombo"));
    m_theme->addItem(tr("System"), AppSettings::themeKey(AppSettings::Theme::System));
    m_theme->addItem(tr("Light"), AppSettings::themeKey(AppSettings::Theme::Light));
    m_theme->addItem(tr("Dark"), AppSettings::themeKey(AppSettings::Theme::Dark));

    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    // Rows holding a layout get their label made here, so its mnemonic has a buddy.
    auto* compilerLabel = new QLabel(tr("C++ &compiler:"), this);
    compilerLabel->setBuddy(m_compiler);
    auto* cacheLabel = new QLabel(tr("JIT cache &folder:"), this);
    cacheLabel->setBuddy(m_cache);
    form->addRow(compilerLabel, compilerRow);
    form->addRow(QString(), m_compilerStatus);
    form->addRow(tr("Extra &flags:"), m_flags);
    form->addRow(QString(), flagsNote);
    form->addRow(tr("OpenMP &threads:"), m_threads);
    form->addRow(cacheLabel, cacheRow);
    form->addRow(QString(), m_cacheUsage);
    form->addRow(tr("Start-up &target:"), m_target);
    form->addRow(tr("T&heme:"), m_theme);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel |
                                             QDialogButtonBox::RestoreDefaults,
                                         this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
            [this] { setSettings(AppSettings()); });

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addStretch(1);
    layout->addWidget(buttons);
    resize(640, sizeHint().height());

    connect(browse, &QPushButton::clicked, this, &SettingsDialog::browseCompiler);
    connect(check, &QPushButton::clicked, this, &SettingsDialog::checkCompiler);
    connect(m_compiler, &QLineEdit::editingFinished, this, &SettingsDialog::checkCompiler);
    connect(browseCache, &QPushButton::clicked, this, &SettingsDialog::browseCache);
    connect(m_cache, &QLineEdit::editingFinished, this, &SettingsDialog::refreshCacheUsage);
    connect(m_clearCache, &QPushButton::clicked, this, &SettingsDialog::clearCache);

    m_confirm = [this](const QString& title, const QString& text) {
        return QMessageBox::question(this, title, text, QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    setSettings(settings);
}

SettingsDialog::~SettingsDialog()
{
    // The dialog hides as its QWidget part is destroyed, which takes the focus from the line
    // edits: their editingFinished would start a compiler check on a half-destroyed dialog (whose
    // QProcess, a child, then reports to deleted labels while it is deleted).
    m_compiler->disconnect(this);
    m_cache->disconnect(this);
    if (m_check != nullptr) {
        m_check->disconnect(this);
        m_check->kill();
        m_check->waitForFinished(1000);
    }
}

AppSettings SettingsDialog::settings() const
{
    AppSettings s;
    s.compiler = m_compiler->text().trimmed();
    s.extraFlags = m_flags->text().trimmed();
    s.threads = m_threads->value();
    s.cacheDir = m_cache->text().trimmed();
    s.defaultTarget = AppSettings::targetFromKey(m_target->currentData().toString());
    s.theme = AppSettings::themeFromKey(m_theme->currentData().toString());
    return s;
}

void SettingsDialog::setSettings(const AppSettings& s)
{
    m_compiler->setText(s.compiler);
    m_flags->setText(s.extraFlags);
    m_threads->setValue(s.threads);
    m_cache->setText(s.cacheDir);
    m_target->setCurrentIndex(std::max(0, m_target->findData(AppSettings::targetKey(s.defaultTarget))));
    m_theme->setCurrentIndex(std::max(0, m_theme->findData(AppSettings::themeKey(s.theme))));
    checkCompiler();
    refreshCacheUsage();
}

void SettingsDialog::browseCompiler()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("C++ Compiler"), QStringLiteral("/usr/bin"));
    if (path.isEmpty())
        return;
    m_compiler->setText(path);
    checkCompiler();
}

void SettingsDialog::browseCache()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("JIT Cache Folder"), m_cache->text());
    if (dir.isEmpty())
        return;
    m_cache->setText(dir);
    refreshCacheUsage();
}

void SettingsDialog::checkCompiler()
{
    if (m_check != nullptr) {
        m_check->disconnect(this);
        m_check->kill();
        m_check->deleteLater();
        m_check = nullptr;
    }
    const QString compiler = settings().effectiveCompiler();
    m_status = tr("Checking %1...").arg(compiler);
    m_compilerStatus->setText(m_status);
    m_compilerStatus->setStyleSheet(QString());
    m_check = new QProcess(this);
    m_check->setProcessChannelMode(QProcess::MergedChannels);
    QProcess* process = m_check;
    connect(process, &QProcess::finished, this, [this, process, compiler] { onCheckFinished(process, compiler); });
    connect(process, &QProcess::errorOccurred, this, [this, process, compiler](QProcess::ProcessError error) {
        // A program that never started sends no finished().
        if (error == QProcess::FailedToStart)
            onCheckFinished(process, compiler);
    });
    QTimer::singleShot(kCheckTimeoutMs, process, [process] { process->kill(); });
    process->start(compiler, {QStringLiteral("--version")});
}

void SettingsDialog::onCheckFinished(QProcess* process, const QString& compiler)
{
    if (process != m_check)
        return;
    m_check = nullptr;
    process->deleteLater();
    bool ok = false;
    QString line;
    if (process->error() == QProcess::FailedToStart) {
        line = tr("'%1' not found: install g++ or choose a compiler").arg(compiler);
    } else if (process->exitStatus() != QProcess::NormalExit) {
        line = tr("'%1 --version' did not answer").arg(compiler);
    } else {
        const QString out = QString::fromLocal8Bit(process->readAll()).trimmed();
        line = out.section(QLatin1Char('\n'), 0, 0).trimmed();
        ok = process->exitCode() == 0 && !line.isEmpty();
        if (!ok)
            line = tr("'%1 --version' exited with status %2%3")
                       .arg(compiler)
                       .arg(process->exitCode())
                       .arg(line.isEmpty() ? QString() : QStringLiteral(": ") + line);
    }
    m_status = line;
    m_compilerStatus->setText(ok ? QStringLiteral("\u2713 %1").arg(line) : QStringLiteral("\u2717 %1").arg(line));
    m_compilerStatus->setStyleSheet(ok ? QString() : QStringLiteral("color: #c62828;"));
    emit compilerChecked(ok, line);
}

QString SettingsDialog::compilerStatus() const { return m_status; }

void SettingsDialog::refreshCacheUsage()
{
    const AppSettings s = settings();
    const FolderUsage host = folderUsage(s.kernelCacheDir());
    const FolderUsage cuda = folderUsage(s.cudaCacheDir());
    auto files = [this](qint64 n) { return n == 1 ? tr("1 file") : tr("%1 files").arg(n); };
    m_cacheUsage->setText(tr("Host kernels: %1 (%2) in %3\nCUDA kernels: %4 (%5) in %6")
                              .arg(formatBytes(host.bytes), files(host.files),
                                   QDir::toNativeSeparators(s.kernelCacheDir()), formatBytes(cuda.bytes),
                                   files(cuda.files), QDir::toNativeSeparators(s.cudaCacheDir())));
    m_clearCache->setEnabled(host.files + cuda.files > 0);
}

QString SettingsDialog::cacheUsageText() const { return m_cacheUsage->text(); }

int SettingsDialog::clearCache()
{
    const AppSettings s = settings();
    const FolderUsage host = folderUsage(s.kernelCacheDir());
    const FolderUsage cuda = folderUsage(s.cudaCacheDir());
    if (!m_confirm(tr("Clear the JIT Cache"),
                   tr("Delete %1 of compiled kernels? The next run of each model compiles them again.")
                       .arg(formatBytes(host.bytes + cuda.bytes))))
        return -1;
    const support::Expected<std::int64_t> a = pipeline::clearKernelCache(s.kernelCacheDir().toStdString());
    const support::Expected<std::int64_t> b = pipeline::clearCudaCache(s.cudaCacheDir().toStdString());
    refreshCacheUsage();
    if (!a.ok() || !b.ok()) {
        const support::DiagnosticList& d = !a.ok() ? a.diagnostics() : b.diagnostics();
        QMessageBox::warning(this, tr("Clear the JIT Cache"),
                             QString::fromStdString(d.items().empty() ? std::string("failed") : d.items()[0].message));
        return -1;
    }
    return static_cast<int>(*a + *b);
}

}  // namespace tessera::app
