#pragma once
/// @file
/// The GUI's roof measurement channel (Run > Measure Roofs, the GUI twin of `tessera-cli roofline
/// measure --target cpu`): perf::measureCpuRoofs on the session's JobChannel (job_channel.h), with
/// progress and cancellation.
///
/// Every measurement gets a ticket of the channel. Starting a new one, or cancel(), cancels the
/// running one (through its CancelToken: the compiler or the runner is killed) and supersedes its
/// generation, so late progress and results of an older measurement are dropped.
///
/// The session only measures; the window decides whether and where to save (see
/// perf::cpuProfileFromMeasurement / perf::saveProfileToDefaultDir).
///
/// Thread rules: all public functions and signals belong to the UI thread (the thread that owns
/// the RoofSession); the worker only runs the measure function on options it copied. The
/// destructor cancels and waits for the worker.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <QObject>
#include <QString>
#include <memory>

#include "app/gui/job_channel.h"
#include "core/perf/cpu_microbench.h"
#include "core/support/cancel.h"
#include "core/support/diagnostic.h"
#include "core/support/expected.h"

namespace tessera::app {

/// What one measurement produced. On success `result` is set; `problems` are
/// perf::roofConsistencyProblems of its roofs (non-empty: the machine was probably busy), also in
/// `diagnostics` as warnings. On failure `diagnostics` holds at least one Error.
struct RoofOutcome {
    quint64 generation = 0;
    bool ok = false;
    bool cancelled = false;
    std::optional<perf::CpuMicrobenchResult> result;
    std::vector<std::string> problems;
    support::DiagnosticList diagnostics;
    bool quick = true;  ///< the options' quick flag (the saved profile says so)
};

class RoofSession : public QObject {
    Q_OBJECT
public:
    /// The measurement itself; perf::measureCpuRoofs unless a test replaces it.
    using MeasureFn = std::function<support::Expected<perf::CpuMicrobenchResult>(const perf::CpuMicrobenchOptions&,
                                                                                const support::CancelToken*)>;

    explicit RoofSession(QObject* parent = nullptr);
    ~RoofSession() override;

    /// Starts measuring, superseding a measurement in progress. Returns its generation.
    quint64 start();
    /// Cancels the measurement in progress (if any); finished() follows with cancelled = true.
    void cancel();
    bool isBusy() const { return m_busy; }
    quint64 generation() const { return m_jobs->generation(); }
    /// The last measurement that finished (ok, failed or cancelled).
    const RoofOutcome& lastOutcome() const { return m_last; }

    /// Options of the next measurements (default: quick mode, as a GUI user waits for it; the
    /// progress callback is the session's own). Tests pass a small minSeconds.
    void setOptions(const perf::CpuMicrobenchOptions& options) { m_options = options; }
    const perf::CpuMicrobenchOptions& options() const { return m_options; }
    /// Replaces the measurement (tests: a fake result); null restores perf::measureCpuRoofs.
    void setMeasureFunction(MeasureFn fn);

signals:
    void started(quint64 generation);
    /// fraction in [0, 1]; phase as the core names it ("compiling", "fp32 fma, 2 threads", ...).
    void progress(quint64 generation, double fraction, const QString& phase);
    /// A measurement finished; read lastOutcome(). Stale ones never emit this.
    void finished(quint64 generation, bool ok);

private:
    void onProgress(quint64 generation, double fraction, const QString& phase);
    void onFinished(quint64 generation, RoofOutcome outcome);

    MeasureFn m_measure;
    perf::CpuMicrobenchOptions m_options;
    bool m_busy = false;
    RoofOutcome m_last;
    /// Last, so that it is destroyed first: its destructor cancels and waits for the job.
    std::unique_ptr<JobChannel> m_jobs;
};

}  // namespace tessera::app
