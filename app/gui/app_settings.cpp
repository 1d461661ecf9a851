#include "app/gui/app_settings.h"

#include <QApplication>
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QLocale>
#include <QPalette>
#include <QProcess>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>
#include <QThread>

#include <algorithm>

#include "app/gui/run_session.h"
#include "core/pipeline/toolchain.h"

namespace tessera::app {
namespace {

const char* const kCompilerKey = "settings/compiler";
const char* const kFlagsKey = "settings/extraFlags";
const char* const kThreadsKey = "settings/threads";
const char* const kCacheKey = "settings/cacheDir";
const char* const kDefaultTargetKey = "settings/defaultTarget";
const char* const kThemeKey = "settings/theme";

QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x30);
    const QColor base(0x1f, 0x20, 0x22);
    const QColor text(0xe6, 0xe6, 0xe6);
    const QColor disabled(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Link, QColor(0x5c, 0xa8, 0xf0));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xb5));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Light, QColor(0x45, 0x47, 0x4a));
    p.setColor(QPalette::Midlight, QColor(0x3a, 0x3c, 0x3f));
    p.setColor(QPalette::Mid, QColor(0x25, 0x26, 0x28));
    p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1a));
    p.setColor(QPalette::Shadow, Qt::black);
    for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

}  // namespace

AppSettings AppSettings::load()
{
    const QSettings s;
    AppSettings a;
    a.compiler = s.value(QLatin1String(kCompilerKey)).toString().trimmed();
    a.extraFlags = s.value(QLatin1String(kFlagsKey)).toString().trimmed();
    bool ok = false;
    const int threads = s.value(QLatin1String(kThreadsKey), kDefaultThreads).toInt(&ok);
    a.threads = ok && threads >= 0 && threads <= 1024 ? threads : kDefaultThreads;
    a.cacheDir = s.value(QLatin1String(kCacheKey)).toString().trimmed();
    a.defaultTarget = targetFromKey(s.value(QLatin1String(kDefaultTargetKey)).toString());
    a.theme = themeFromKey(s.value(QLatin1String(kThemeKey)).toString());
    return a;
}

void AppSettings::save() const
{
    QSettings s;
    s.setValue(QLatin1String(kCompilerKey), compiler.trimmed());
    s.setValue(QLatin1String(kFlagsKey), extraFlags.trimmed());
    s.setValue(QLatin1String(kThreadsKey), threads);
    s.setValue(QLatin1String(kCacheKey), cacheDir.trimmed());
    s.setValue(QLatin1String(kDefaultTargetKey), targetKey(defaultTarget));
    s.setValue(QLatin1String(kThemeKey), themeKey(theme));
}

QString AppSettings::effectiveCompiler() const
{
    return compiler.isEmpty() ? QString::fromStdString(pipeline::defaultHostCompiler()) : compiler;
}

int AppSettings::effectiveThreads() const { return threads > 0 ? threads : std::max(1, QThread::idealThreadCount()); }

QStringList AppSettings::extraFlagList() const { return QProcess::splitCommand(extraFlags); }

QString AppSettings::kernelCacheDir() const
{
    return cacheDir.isEmpty() ? QString::fromStdString(pipeline::defaultKernelCacheDir())
                              : QDir(cacheDir).filePath(QStringLiteral("kernels"));
}

QString AppSettings::cudaCacheDir() const
{
    return cacheDir.isEmpty() ? QString::fromStdString(pipeline::defaultCudaCacheDir())
                              : QDir(cacheDir).filePath(QStringLiteral("cuda"));
}

void AppSettings::applyTo(RunSettings& settings) const
{
    const int n = effectiveThreads();
    settings.run.threads = n;
    settings.compile.cpuThreads = n;
    if (!compiler.isEmpty())
        settings.run.compiler.compiler = compiler.toStdString();
    // Appended, not replacing: the defaults make a shared library (-shared -fPIC) with OpenMP.
    for (const QString& f : extraFlagList())
        settings.run.compiler.flags.push_back(f.toStdString());
    if (!cacheDir.isEmpty()) {
        settings.run.compiler.cacheDir = kernelCacheDir().toStdString();
        settings.run.cudaCacheDir = cudaCacheDir().toStdString();
    }
}

QString AppSettings::startupTargetId(const QString& lastUsed) const
{
    switch (defaultTarget) {
    case DefaultTarget::Cpu: return QStringLiteral("cpu");
    case DefaultTarget::FirstCuda: return QStringLiteral("cuda");
    case DefaultTarget::LastUsed: break;
    }
    return lastUsed;
}

QString AppSettings::themeKey(Theme theme)
{
    switch (theme) {
    case Theme::Light: return QStringLiteral("light");
    case Theme::Dark: return QStringLiteral("dark");
    case Theme::System: break;
    }
    return QStringLiteral("system");
}

AppSettings::Theme AppSettings::themeFromKey(const QString& key)
{
    if (key == QLatin1String("light"))
        return Theme::Light;
    if (key == QLatin1String("dark"))
        return Theme::Dark;
    return Theme::System;
}

QString AppSettings::targetKey(DefaultTarget target)
{
    switch (target) {
    case DefaultTarget::Cpu: return QStringLiteral("cpu");
    case DefaultTarget::FirstCuda: return QStringLiteral("cuda");
    case DefaultTarget::LastUsed: break;
    }
    return QStringLiteral("last");
}

AppSettings::DefaultTarget AppSettings::targetFromKey(const QString& key)
{
    if (key == QLatin1String("cpu"))
        return DefaultTarget::Cpu;
    if (key == QLatin1String("cuda"))
        return DefaultTarget::FirstCuda;
    return DefaultTarget::LastUsed;
}

void applyTheme(AppSettings::Theme theme)
{
    // The style Qt picked for this desktop, remembered before the first change so that System
    // can go back to it.
    static const QString systemStyle = QApplication::style() ? QApplication::style()->name() : QString();
    if (theme == AppSettings::Theme::System) {
        if (QStyle* style = QStyleFactory::create(systemStyle.isEmpty() ? QStringLiteral("Fusion") : systemStyle)) {
            QApplication::setStyle(style);
            QApplication::setPalette(style->standardPalette());
        }
        return;
    }
    QApplication::setStyle(QStringLiteral("Fusion"));
    QApplication::setPalette(theme == AppSettings::Theme::Dark ? darkPalette() : QApplication::style()->standardPalette());
}

FolderUsage folderUsage(const QString& dir)
{
    FolderUsage u;
    if (dir.isEmpty() || !QFileInfo(dir).isDir())
        return u;
    QDirIterator it(dir, QDir::Files | QDir::Hidden | QDir::NoSymLinks, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        it.next();
        u.bytes += it.fileInfo().size();
        ++u.files;
    }
    return u;
}

QString formatBytes(qint64 bytes)
{
    if (bytes < 1024)
        return QStringLiteral("%1 bytes").arg(bytes);
    const char* const units[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes) / 1024.0;
    int u = 0;
    while (v >= 1024.0 && u < 3) {
        v /= 1024.0;
        ++u;
    }
    return QStringLiteral("%1 %2").arg(u == 0 ? QString::number(qRound(v)) : QString::number(v, 'f', 1),
                                       QLatin1String(units[u]));
}

}  // namespace tessera::app
