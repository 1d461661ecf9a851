#pragma once
/// @file
/// The application's own windows, apart from any model: Edit > Preferences... (Ctrl+, where the
/// desktop has no Preferences key; window-modal, SettingsDialog) and the Help menu: DSL Guide
/// (F1) and Fusion Guide in one non-modal DocWindow, Keyboard Shortcuts (generated from the
/// window's actions each time it opens), Welcome, About Tessera and About Qt. The theme chosen
/// in the Preferences is applied at start (System leaves Qt's choice alone) and when it changes.
///
/// Thread rules: UI thread only.

#include <QObject>
#include <QPointer>
#include <QString>

class QAction;
class QMainWindow;
class QMenu;

namespace tessera::app {

class AboutDialog;
class DocWindow;
class SettingsDialog;
class ShortcutsDialog;
class WorkspaceController;

class HelpController : public QObject {
    Q_OBJECT
public:
    /// Preferences go at the end of `editMenu`, Help at the end of `window`'s menu bar; Help >
    /// Welcome opens `workspace`'s Welcome dock.
    HelpController(QMainWindow* window, QMenu* editMenu, WorkspaceController* workspace);

    QAction* preferencesAction() const { return m_preferencesAction; }
    void showPreferences();
    /// The embedded guide `fileName` ("dsl.md", "fusion.md") in the guide window.
    void showDoc(const QString& fileName);
    void showShortcuts();
    void showAbout();
    /// The open dialogs and guide window (null when closed).
    SettingsDialog* preferencesDialog() const;
    ShortcutsDialog* shortcutsDialog() const;
    AboutDialog* aboutDialog() const;
    DocWindow* docWindow() const;

private:
    QMainWindow* m_window;
    QAction* m_preferencesAction = nullptr;
    QPointer<SettingsDialog> m_preferences;
    QPointer<ShortcutsDialog> m_shortcuts;
    QPointer<AboutDialog> m_about;
    QPointer<DocWindow> m_docWindow;
};

}  // namespace tessera::app
