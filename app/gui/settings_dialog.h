#pragma once
/// @file
/// Edit > Preferences... (QKeySequence::Preferences, else Ctrl+,): the host C++ compiler (with a
/// Browse button and a check that runs `<compiler> --version` and shows its first line), extra
/// compiler flags, OpenMP threads (0 = all cores), the JIT cache folder (its host and CUDA folders
/// with their size, and Clear, which asks first), the target chosen at start-up and the theme.
/// The dialog edits an AppSettings value (app_settings.h); the caller stores it on accept().
///
/// Thread rules: UI thread only. The compiler check runs the compiler as a QProcess (never on the
/// UI thread's stack: the answer comes back through compilerChecked()).

#include <functional>

#include <QDialog>

#include "app/gui/app_settings.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QProcess;
class QPushButton;
class QSpinBox;

namespace tessera::app {

class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    /// Asks before a destructive step (the cache's Clear); returns true to go on.
    using Confirm = std::function<bool(const QString& title, const QString& text)>;

    explicit SettingsDialog(const AppSettings& settings, QWidget* parent = nullptr);
    ~SettingsDialog() override;

    /// The values as edited (trimmed).
    AppSettings settings() const;
    /// Puts `settings` into the fields (the compiler is checked again).
    void setSettings(const AppSettings& settings);
    /// Replaces the Clear confirmation (a QMessageBox by default), e.g. in tests.
    void setConfirm(Confirm confirm) { m_confirm = std::move(confirm); }

    /// Runs `<compiler> --version` for the compiler in the field (a check in flight is dropped).
    void checkCompiler();
    /// The check's line: the compiler's first --version line, or why it failed.
    QString compilerStatus() const;
    /// Recomputes the cache folders' sizes for the folder in the field.
    void refreshCacheUsage();
    /// "kernels: 43.1 MB in 812 files ..." as shown.
    QString cacheUsageText() const;
    /// Removes the cached kernels (host and CUDA) after the confirmation; returns the number of
    /// files removed, or -1 when the user declined or clearing failed.
    int clearCache();

    QLineEdit* compilerEdit() const { return m_compiler; }
    QLineEdit* flagsEdit() const { return m_flags; }
    QSpinBox* threadsSpin() const { return m_threads; }
    QLineEdit* cacheEdit() const { return m_cache; }
    QComboBox* targetCombo() const { return m_target; }
    QComboBox* themeCombo() const { return m_theme; }

signals:
    /// A compiler check finished: ok, and the version line or the reason.
    void compilerChecked(bool ok, const QString& line);

private:
    void browseCompiler();
    void browseCache();
    void onCheckFinished(QProcess* process, const QString& compiler);

    QLineEdit* m_compiler;
    QLabel* m_compilerStatus;
    QLineEdit* m_flags;
    QSpinBox* m_threads;
    QLineEdit* m_cache;
    QLabel* m_cacheUsage;
    QPushButton* m_clearCache;
    QComboBox* m_target;
    QComboBox* m_theme;
    QProcess* m_check = nullptr;
    QString m_status;
    Confirm m_confirm;
};

}  // namespace tessera::app
