#pragma once
/// @file
/// The Help menu's windows: the user guides (docs/dsl.md and docs/fusion.md, embedded as Qt
/// resources under ":/docs/" so an installed binary has them, rendered as Markdown in a non-modal
/// window), the Keyboard Shortcuts dialog (generated from a window's actions) and the About box
/// (versions of Tessera, Qt, CUDA and the host compiler).
///
/// Thread rules: UI thread only.

#include <QDialog>
#include <QString>
#include <QWidget>

class QLineEdit;
class QMainWindow;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTableView;
class QTextBrowser;

namespace tessera::app {

/// Tessera's version (CMake's PROJECT_VERSION), e.g. "0.1.0".
QString tesseraVersion();

/// ":/docs/dsl.md" for "dsl.md". The embedded guides: "dsl.md", "fusion.md".
QString docResource(const QString& fileName);

/// A non-modal window showing an embedded guide rendered from Markdown. Links to the other guide
/// open in the same window; web links open in the browser.
class DocWindow : public QWidget {
    Q_OBJECT
public:
    explicit DocWindow(const QString& fileName, QWidget* parent = nullptr);
    /// Shows `fileName` (an embedded guide); false when there is no such resource.
    bool load(const QString& fileName);
    QString fileName() const { return m_file; }
    QTextBrowser* browser() const { return m_browser; }

private:
    QTextBrowser* m_browser;
    QString m_file;
};

/// One row of the shortcut list.
struct ShortcutEntry {
    QString menuPath;  ///< "Run" or "View > Zoom" ("(window)" for actions in no menu)
    QString text;      ///< the action's text without mnemonics ("Run (CPU)")
    QString shortcut;  ///< native text of every shortcut, ", "-separated ("Ctrl+R")
};

/// Every action of `window` with a shortcut: those in its menus (menu path from the menu bar's
/// titles), then those only added to the window or its children; each action once, in menu order.
QList<ShortcutEntry> shortcutEntries(const QMainWindow* window);

/// Help > Keyboard Shortcuts: the entries in a table (Menu, Action, Shortcut) with a filter box
/// that matches any column, case-insensitively.
class ShortcutsDialog : public QDialog {
    Q_OBJECT
public:
    explicit ShortcutsDialog(const QMainWindow* window, QWidget* parent = nullptr);
    QLineEdit* filterEdit() const { return m_filter; }
    QTableView* table() const { return m_table; }
    /// The rows left by the filter, as shown.
    int visibleRows() const;
    /// Row `row` (as shown): menu path, text, shortcut.
    QStringList rowText(int row) const;

private:
    QStandardItemModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QLineEdit* m_filter;
    QTableView* m_table;
};

/// What About shows, one "Name: value" line each: Tessera, Qt (run time and build), the CUDA
/// toolkit headers of the build, NVRTC and the CUDA driver found at run time (or "not found:
/// <reason>"), and the host compiler (`compiler`'s --version line, or why not).
QStringList aboutLines(const QString& compiler);

/// Help > About Tessera: the lines above in a dialog with a Copy button.
class AboutDialog : public QDialog {
    Q_OBJECT
public:
    explicit AboutDialog(const QString& compiler, QWidget* parent = nullptr);
    QString text() const { return m_lines.join(QLatin1Char('\n')); }

private:
    QStringList m_lines;
};

}  // namespace tessera::app
