#pragma once
/// @file
/// One progress fraction for a whole run job (compile, module compile, run and time, check),
/// proportional to time, from the pipeline's per-kernel reports (pipeline::KernelProgress).
///
/// The fraction is elapsed / (elapsed + remaining), where `remaining` is an estimate in seconds:
/// the rest of the current phase at the rate this phase has shown so far (seconds per kernel once
/// two kernels are done; a prior before that), plus the phases still to come at learned or prior
/// rates. Because the fraction is in time, EtaEstimator's "elapsed x (1 - f) / f" gives back
/// `remaining`, so the status bar's ETA is this estimate, smoothed.
///
/// The module compile is one compiler process without progress of its own: its expected length
/// is the generated source's size over a compile rate (bytes per second; learned from the last
/// compile that missed the cache, with a prior of kDefaultCompileBytesPerSecond), and the bar
/// moves with the clock during it (the caller polls fraction()). A cache hit simply ends the
/// phase early. Rates (Rates) outlive a job: the caller keeps them between runs.
///
/// The fraction never goes back: fraction() returns the largest value it returned since start().
/// Thread rules: a plain value; the caller serialises access (RunSession: the UI thread).
/// Times are seconds since any fixed origin, passed in (so tests control the clock).

#include <cstdint>
#include <string>

#include <QString>

namespace tessera::app {

class RunProgress {
public:
    static constexpr double kDefaultCompileBytesPerSecond = 30000.0;  ///< g++ -O3 on generated kernels
    static constexpr double kDefaultCheckSecondsPerStep = 0.02;
    static constexpr double kUntimedSecondsPerStep = 0.005;
    static constexpr double kSourceBytesPerNode = 2800.0;  ///< guess of the module size before it exists

    /// What earlier jobs taught: the host compiler's speed and the reference check's.
    struct Rates {
        double compileBytesPerSecond = kDefaultCompileBytesPerSecond;
        double checkSecondsPerStep = kDefaultCheckSecondsPerStep;
    };

    enum class Phase { Compile, Module, Running, Checking, Done };

    /// A new job at `now`: a model of `nodes` nodes; timed runs spend about `minSeconds` per kernel.
    void start(double now, int nodes, bool timed, double minSeconds, bool checked, const Rates& rates);
    /// compileModel's own fraction (0..1) and stage text ("lowering").
    void compileProgress(double now, double fraction, const std::string& stage);
    /// compileModel finished: the module has `sourceBytes` of code and the job `steps` steps.
    void compiled(double now, std::int64_t sourceBytes, int steps);
    /// A pipeline::KernelProgress report (phase names from core/pipeline/compile.h). Reports of
    /// compileModel's phases are ignored (compileProgress covers them).
    void report(double now, int done, int total, const std::string& phase);
    /// The job is over.
    void finish(double now);

    Phase phase() const { return m_phase; }
    /// Estimated seconds left (see the file comment); 0 when done.
    double remaining(double now) const;
    /// Fraction of the job done in [0, 1], never less than a value returned before.
    double fraction(double now);
    /// For the status bar: "Lowering", "Compiling kernels", "Running and timing kernels (12 of 100)",
    /// "Checking against the reference (40 of 100)".
    QString stage() const;
    /// The rates with what this job measured folded in (call after the job).
    Rates learnedRates() const { return m_rates; }

private:
    double expectedModule() const;
    double expectedRunning(int steps) const;
    double expectedChecking(int steps) const;

    Rates m_rates;
    Phase m_phase = Phase::Done;
    double m_start = 0;
    double m_phaseStart = 0;
    int m_nodes = 0;
    bool m_timed = true;
    double m_minSeconds = 0.1;
    bool m_checked = true;
    double m_compileFraction = 0;
    std::string m_compileStage;
    std::int64_t m_sourceBytes = -1;  ///< -1 before compiled()
    int m_steps = -1;                 ///< -1 before compiled()
    int m_done = 0, m_total = 0;      ///< of the current kernel phase
    double m_shown = 0;               ///< the largest fraction returned
};

}  // namespace tessera::app
