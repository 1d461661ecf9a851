#include "app/gui/help_controller.h"

#include <QAction>
#include <QApplication>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>

#include "app/gui/app_settings.h"
#include "app/gui/help_windows.h"
#include "app/gui/settings_dialog.h"
#include "app/gui/workspace_controller.h"

namespace tessera::app {
namespace {

QKeySequence standardOr(QKeySequence::StandardKey key, const QKeySequence& fallback)
{
    // Desktops without a binding for the standard key (Preferences on GNOME) get the fallback.
    const QList<QKeySequence> keys = QKeySequence::keyBindings(key);
    return keys.isEmpty() ? fallback : keys.first();
}

}  // namespace

HelpController::HelpController(QMainWindow* window, QMenu* editMenu, WorkspaceController* workspace)
    : QObject(window), m_window(window)
{
    editMenu->addSeparator();
    m_preferencesAction = editMenu->addAction(tr("&Preferences..."), this, &HelpController::showPreferences);
    m_preferencesAction->setObjectName(QStringLiteral("preferencesAction"));
    m_preferencesAction->setMenuRole(QAction::PreferencesRole);
    m_preferencesAction->setShortcut(standardOr(QKeySequence::Preferences, QKeySequence(Qt::CTRL | Qt::Key_Comma)));
    m_preferencesAction->setToolTip(tr("Compiler, threads, JIT cache, start-up target and theme"));

    QMenu* help = window->menuBar()->addMenu(tr("&Help"));
    help->setObjectName(QStringLiteral("helpMenu"));
    QAction* dsl = help->addAction(tr("&DSL Guide"), this, [this] { showDoc(QStringLiteral("dsl.md")); });
    dsl->setObjectName(QStringLiteral("dslGuideAction"));
    dsl->setShortcut(standardOr(QKeySequence::HelpContents, QKeySequence(Qt::Key_F1)));
    QAction* fusion = help->addAction(tr("&Fusion Guide"), this, [this] { showDoc(QStringLiteral("fusion.md")); });
    fusion->setObjectName(QStringLiteral("fusionGuideAction"));
    help->addSeparator();
    QAction* keys = help->addAction(tr("&Keyboard Shortcuts"), this, &HelpController::showShortcuts);
    keys->setObjectName(QStringLiteral("shortcutsAction"));
    QAction* welcome = help->addAction(tr("&Welcome"), workspace, &WorkspaceController::showWelcome);
    welcome->setObjectName(QStringLiteral("welcomeAction"));
    help->addSeparator();
    QAction* about = help->addAction(tr("&About Tessera"), this, &HelpController::showAbout);
    about->setObjectName(QStringLiteral("aboutAction"));
    about->setMenuRole(QAction::AboutRole);
    QAction* aboutQt = help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
    aboutQt->setMenuRole(QAction::AboutQtRole);

    const AppSettings settings = AppSettings::load();
    if (settings.theme != AppSettings::Theme::System)
        applyTheme(settings.theme);
}

SettingsDialog* HelpController::preferencesDialog() const { return m_preferences; }
ShortcutsDialog* HelpController::shortcutsDialog() const { return m_shortcuts; }
AboutDialog* HelpController::aboutDialog() const { return m_about; }
DocWindow* HelpController::docWindow() const { return m_docWindow; }

void HelpController::showPreferences()
{
    if (m_preferences) {
        m_preferences->raise();
        m_preferences->activateWindow();
        return;
    }
    m_preferences = new SettingsDialog(AppSettings::load(), m_window);
    m_preferences->setAttribute(Qt::WA_DeleteOnClose);
    connect(m_preferences, &QDialog::accepted, this, [this] {
        const AppSettings before = AppSettings::load();
        const AppSettings after = m_preferences->settings();
        after.save();
        if (after.theme != before.theme)
            applyTheme(after.theme);
        m_window->statusBar()->showMessage(tr("Preferences saved: the next run uses %1 thread(s)%2")
                                               .arg(after.effectiveThreads())
                                               .arg(after.extraFlags.isEmpty() ? QString()
                                                                               : tr(" and the flags %1").arg(after.extraFlags)),
                                           6000);
    });
    // Window-modal without blocking the event loop (runs and loads go on meanwhile).
    m_preferences->open();
}

void HelpController::showDoc(const QString& fileName)
{
    if (!m_docWindow) {
        m_docWindow = new DocWindow(fileName, m_window);
        m_docWindow->setAttribute(Qt::WA_DeleteOnClose);
    } else if (m_docWindow->fileName() != fileName) {
        m_docWindow->load(fileName);
    }
    m_docWindow->show();
    m_docWindow->raise();
    m_docWindow->activateWindow();
}

void HelpController::showShortcuts()
{
    // Generated again each time: actions change (targets, recent files).
    if (m_shortcuts)
        m_shortcuts->close();
    m_shortcuts = new ShortcutsDialog(m_window, m_window);
    m_shortcuts->setAttribute(Qt::WA_DeleteOnClose);
    m_shortcuts->show();
}

void HelpController::showAbout()
{
    if (m_about)
        m_about->close();
    m_about = new AboutDialog(AppSettings::load().effectiveCompiler(), m_window);
    m_about->setAttribute(Qt::WA_DeleteOnClose);
    m_about->open();
}

}  // namespace tessera::app
