#pragma once
/// @file
/// Estimated time remaining for the status bar's job progress ("Run: Lowering... · about 20 s
/// left"), from the job's progress fraction (RunSession::progress: the whole job, 0..1) and the
/// time since it started.
///
/// Estimate: the average rate so far gives raw = elapsed x (1 - f) / f; each report blends it
/// half and half with the previous estimate counted down by the time since that report (so one
/// slow or fast step does not make the text jump). Nothing is shown before 2 s and 10% progress,
/// at 100%, or when the job is expected to take 3 s or less in all (elapsed + estimate).
/// Thread rules: UI thread (a plain value).

#include <optional>

#include <QElapsedTimer>
#include <QString>

namespace tessera::app {

class EtaEstimator {
public:
    static constexpr double kMinElapsed = 2.0;   ///< seconds before any estimate is shown
    static constexpr double kMinFraction = 0.1;  ///< progress before any estimate is shown
    static constexpr double kMinJob = 3.0;       ///< jobs expected to be this short show none

    /// Forgets the previous job and starts the clock for a new one.
    void start();
    /// Feeds a report: `fraction` of the job done after `elapsedSeconds`. Returns the smoothed
    /// seconds left when it should be shown (see the file comment), nullopt otherwise.
    std::optional<double> update(double fraction, double elapsedSeconds);
    /// update() with the clock started by start(); returns " · about 20 s left" or empty.
    QString suffix(double fraction);

    /// "almost done" (under 1.5 s), "about 7 s left" (under 10 s, whole seconds), "about 25 s
    /// left" (under 100 s, to 5 s), "about 3 min left" (under an hour, whole minutes), "about 1 h
    /// 20 min left".
    static QString formatRemaining(double seconds);

private:
    QElapsedTimer m_clock;
    double m_estimate = -1;  ///< last smoothed estimate, -1 none yet
    double m_lastElapsed = 0;
};

}  // namespace tessera::app
