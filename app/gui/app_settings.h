#pragma once
/// @file
/// The user's preferences (Edit > Preferences..., settings_dialog.h), stored in QSettings under
/// "settings/...", and how they reach a run and the look of the application.
///
/// Keys: "settings/compiler" (host C++ compiler, program name or path; empty = TESSERA_CXX or
/// "c++", as the CLI), "settings/extraFlags" (appended to the default host flags, split like a
/// shell command line), "settings/threads" (OpenMP threads per run, 0 = every core the machine
/// has; default 2, as `tessera-cli run`), "settings/cacheDir" (a folder holding the host JIT
/// cache in kernels/ and the NVRTC cache in cuda/; empty = each cache's default folder),
/// "settings/defaultTarget" ("last": the target used last, stored in "run/target"; "cpu";
/// "cuda": the first CUDA device) and "settings/theme" ("system", "light", "dark").
///
/// The values are read when a run starts (MainWindow builds its RunSettings through
/// applyTo()), so a change reaches the next run without a restart.
///
/// Thread rules: load()/save() and applyTheme() on the UI thread; the struct itself is a value.

#include <QString>
#include <QStringList>

namespace tessera::app {

struct RunSettings;

struct AppSettings {
    enum class DefaultTarget { LastUsed, Cpu, FirstCuda };
    enum class Theme { System, Light, Dark };

    static constexpr int kDefaultThreads = 0;  ///< every core of the user's machine

    QString compiler;    ///< empty = pipeline::defaultHostCompiler()
    QString extraFlags;  ///< appended to pipeline::defaultHostCompilerFlags()
    int threads = kDefaultThreads;  ///< 0 = all cores
    QString cacheDir;    ///< empty = the default cache folders
    DefaultTarget defaultTarget = DefaultTarget::LastUsed;
    Theme theme = Theme::System;

    /// Reads "settings/..." from QSettings() (missing or invalid values: the defaults above).
    static AppSettings load();
    /// Writes every field to QSettings().
    void save() const;

    /// The compiler Run uses: `compiler`, or pipeline::defaultHostCompiler() when empty.
    QString effectiveCompiler() const;
    /// Threads a run uses: `threads`, or QThread::idealThreadCount() for 0.
    int effectiveThreads() const;
    /// `extraFlags` split into arguments (QProcess::splitCommand: quotes group words).
    QStringList extraFlagList() const;
    /// The host JIT cache folder a run uses (<cacheDir>/kernels or pipeline::defaultKernelCacheDir()).
    QString kernelCacheDir() const;
    /// The NVRTC cache folder a run uses (<cacheDir>/cuda or pipeline::defaultCudaCacheDir()).
    QString cudaCacheDir() const;

    /// Sets the run's threads (RunOptions::threads and CompileOptions::cpuThreads), host compiler,
    /// extra flags (after the defaults) and cache folders. Leaves everything else alone.
    void applyTo(RunSettings& settings) const;
    /// The target id to select at start-up: `lastUsed` for LastUsed, "cpu" or "cuda".
    QString startupTargetId(const QString& lastUsed) const;

    static QString themeKey(Theme theme);
    static Theme themeFromKey(const QString& key);
    static QString targetKey(DefaultTarget target);
    static DefaultTarget targetFromKey(const QString& key);
};

/// Applies a theme to the whole application: System = the style and palette Qt chose at start-up;
/// Light and Dark = the Fusion style with a light or a dark palette.
void applyTheme(AppSettings::Theme theme);

/// Bytes and files under `dir` (recursively; 0 for a missing folder).
struct FolderUsage {
    qint64 bytes = 0;
    qint64 files = 0;
};
FolderUsage folderUsage(const QString& dir);

/// "12.3 MB", "512 KB", "0 bytes" (powers of 1024, one decimal above KB).
QString formatBytes(qint64 bytes);

}  // namespace tessera::app
