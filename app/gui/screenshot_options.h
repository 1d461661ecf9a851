#pragma once
/// @file
/// Extra options of `tessera --screenshot` for the documentation's pictures
/// (scripts/screenshot.sh takes every main view with them):
///
/// - `--screenshot-dock NAME`: the PNG shows one part of the window instead of all of it: a dock
///   by its title or object name, case-insensitive, '&' and spaces ignored ("Timings",
///   "fusion plan", "Roofline"), shown and raised first; or the Preferences / About dialog
///   ("preferences" or "settings", "about"), opened first.
/// - `--runs N` (with --run): run N times, each run started when the previous finished; the
///   picture waits for the last. The Timings history then holds N runs.
/// - `--pin` (with --runs >= 2): pin the first run (Run > Pin Run), so the runs after it are
///   compared with it (vs-pinned ratios, pinned roofline markers).
///
/// Thread rules: UI thread.

#include <QPixmap>
#include <QString>

class QCommandLineParser;

namespace tessera::app {

class MainWindow;

struct ScreenshotExtras {
    QString part;  ///< --screenshot-dock; empty = the whole window
    int runs = 1;
    bool pin = false;
};

/// Adds the options above to `parser`.
void addScreenshotOptions(QCommandLineParser& parser);
/// Reads them after parser.process(); `error` gets a one-line message for a bad value.
ScreenshotExtras screenshotExtras(const QCommandLineParser& parser, QString* error);

/// Called when a run finished during a screenshot with --run: when more runs are asked for,
/// pins the first (with --pin), starts the next and returns true (the picture waits).
bool startNextScreenshotRun(MainWindow& window, const ScreenshotExtras& extras);

/// The picture: the window, or the part named by `extras.part` (brought forward, and the event
/// loop turned briefly so it is laid out and painted). Null with `error` set when no dock or
/// dialog has that name (the message lists the names there are).
QPixmap grabScreenshot(MainWindow& window, const ScreenshotExtras& extras, QString* error);

}  // namespace tessera::app
