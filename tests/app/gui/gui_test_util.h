#pragma once
/// @file
/// Waiting helpers shared by the main window's Qt tests (offscreen). Each opens a file through
/// MainWindow::openFile, as File > Open does, and turns the app's asynchronous signals into a
/// yes/no for QVERIFY. UI thread only; they spin the event loop while waiting.

#include <QLatin1Char>
#include <QSignalSpy>
#include <QString>
#include <QTest>

#include "app/gui/document.h"
#include "app/gui/main_window.h"
#include "app/gui/roofline_controller.h"
#include "app/gui/run_controller.h"
#include "app/gui/plan_session.h"
#include "app/gui/session.h"

namespace tessera::test {

/// Opens `path` and waits (up to 120 s) for the load job to finish; true when it loaded.
inline bool openAndWaitLoaded(app::MainWindow& w, const QString& path)
{
    QSignalSpy finished(w.session(), &app::Session::finished);
    w.openFile(path);
    return finished.wait(120000) && finished.first().at(1).toBool();
}

#ifdef TESSERA_SAMPLES
/// openAndWaitLoaded on `file` of the samples folder.
inline bool loadSample(app::MainWindow& w, const QString& file)
{
    return openAndWaitLoaded(w, QStringLiteral(TESSERA_SAMPLES) + QLatin1Char('/') + file);
}
#endif

/// Opens `path`, waits (up to 60 s each) until the window shows the model and its fusion plan is
/// ready and idle; false when either does not happen in time.
inline bool openAndWaitPlanned(app::MainWindow& w, const QString& path)
{
    QSignalSpy shown(&w, &app::MainWindow::modelShown);
    w.openFile(path);
    if (!QTest::qWaitFor([&] { return shown.count() > 0; }, 60000))
        return false;
    return QTest::qWaitFor([&] { return w.document()->plans()->ready() && !w.document()->plans()->isBusy(); }, 60000);
}

}  // namespace tessera::test
