#include "app/gui/screenshot_options.h"

#include <algorithm>

#include <QAction>
#include <QCommandLineParser>
#include <QDialog>
#include <QDockWidget>
#include <QEventLoop>
#include <QTimer>

#include "app/gui/compare_controller.h"
#include "app/gui/document.h"
#include "app/gui/help_controller.h"
#include "app/gui/main_window.h"
#include "app/gui/roofline_controller.h"
#include "app/gui/run_controller.h"
#include "app/gui/run_inputs_dialog.h"
#include "app/gui/settings_dialog.h"
#include "app/gui/help_windows.h"

namespace tessera::app {

namespace {

const char* const kRunsDoneProperty = "tesseraScreenshotRunsDone";
/// A dock smaller than this is photographed floating at this size, so its picture is readable.
constexpr int kMinDockWidth = 1000;
constexpr int kMinDockHeight = 620;
/// Long enough for a raised dock or a new dialog to be laid out and painted.
constexpr int kSettleMs = 400;

QString normalized(QString s)
{
    s.remove(QLatin1Char('&'));
    s.remove(QLatin1Char(' '));
    return s.toLower();
}

void settle()
{
    QEventLoop loop;
    QTimer::singleShot(kSettleMs, &loop, &QEventLoop::quit);
    loop.exec();
}

}  // namespace

void addScreenshotOptions(QCommandLineParser& parser)
{
    parser.addOption(QCommandLineOption(
        QStringLiteral("screenshot-dock"),
        QStringLiteral("With --screenshot: photograph one dock (its title, e.g. Timings) or the preferences / about / inputs "
                       "dialog instead of the whole window."),
        QStringLiteral("NAME")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("runs"), QStringLiteral("With --run: run N times in a row before the screenshot (Timings history)."),
        QStringLiteral("N")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("pin"), QStringLiteral("With --runs 2 or more: pin the first run so the later ones are compared with it.")));
}

ScreenshotExtras screenshotExtras(const QCommandLineParser& parser, QString* error)
{
    ScreenshotExtras e;
    e.part = parser.value(QStringLiteral("screenshot-dock"));
    e.pin = parser.isSet(QStringLiteral("pin"));
    if (parser.isSet(QStringLiteral("runs"))) {
        bool ok = false;
        e.runs = parser.value(QStringLiteral("runs")).toInt(&ok);
        if (!ok || e.runs < 1 || e.runs > 100) {
            *error = QStringLiteral("bad --runs '%1' (expected 1 to 100)").arg(parser.value(QStringLiteral("runs")));
            e.runs = 1;
        }
    }
    return e;
}

bool startNextScreenshotRun(MainWindow& window, const ScreenshotExtras& extras)
{
    const int done = window.property(kRunsDoneProperty).toInt() + 1;
    window.setProperty(kRunsDoneProperty, done);
    if (done >= extras.runs)
        return false;
    if (extras.pin && done == 1)
        window.compareController()->pinAction()->trigger();
    // After the finished run's own handlers (Timings, roofline, history) have seen it.
    QTimer::singleShot(0, &window, [&window] { window.run()->startRun(); });
    return true;
}

QPixmap grabScreenshot(MainWindow& window, const ScreenshotExtras& extras, QString* error)
{
    const QString want = normalized(extras.part);
    if (want.isEmpty())
        return window.grab();
    if (want == QLatin1String("preferences") || want == QLatin1String("settings")) {
        window.help()->showPreferences();
        settle();
        return window.help()->preferencesDialog() ? window.help()->preferencesDialog()->grab() : QPixmap();
    }
    if (want == QLatin1String("inputs")) {
        // Run > Inputs... as it opens, with the files of --input / --expect filled in.
        if (!window.model()) {
            *error = QStringLiteral("no model is open for the Run > Inputs dialog");
            return QPixmap();
        }
        RunInputsDialog dialog(window.model()->graph, window.document()->runInputFiles(), &window);
        dialog.show();
        settle();
        QPixmap pm = dialog.grab();
        dialog.close();
        return pm;
    }
    if (want == QLatin1String("about")) {
        window.help()->showAbout();
        settle();
        return window.help()->aboutDialog() ? window.help()->aboutDialog()->grab() : QPixmap();
    }
    QStringList names;
    for (QDockWidget* dock : window.findChildren<QDockWidget*>()) {
        names << dock->windowTitle().remove(QLatin1Char('&'));
        if (normalized(dock->windowTitle()) != want && normalized(dock->objectName()) != want)
            continue;
        dock->show();
        dock->raise();
        settle();
        if (dock->width() < kMinDockWidth || dock->height() < kMinDockHeight) {
            // Floating, the dock is drawn at a size that shows its content; no window manager is
            // needed for a widget to paint itself into a pixmap.
            dock->setFloating(true);
            dock->resize(std::max(dock->width(), kMinDockWidth), std::max(dock->height(), kMinDockHeight));
            settle();
        }
        return dock->grab();
    }
    names.sort(Qt::CaseInsensitive);
    *error = QStringLiteral("no dock named '%1' (docks: %2; dialogs: preferences, about, inputs)")
                 .arg(extras.part, names.join(QLatin1String(", ")));
    return QPixmap();
}

}  // namespace tessera::app
