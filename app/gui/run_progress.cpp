#include "app/gui/run_progress.h"

#include <algorithm>

#include <QCoreApplication>

#include "core/pipeline/compile.h"

namespace tessera::app {

namespace {

/// A module compile shorter than this was (most likely) a cache hit: it says nothing about the
/// compiler's speed.
constexpr double kMinLearnSeconds = 0.5;
/// Per-kernel overhead of a timed kernel beyond RunOptions::minSeconds (warm-up, rotation copies).
constexpr double kTimedOverheadPerStep = 0.03;

QString tr(const char* text) { return QCoreApplication::translate("tessera::app::RunProgress", text); }

}  // namespace

void RunProgress::start(double now, int nodes, bool timed, double minSeconds, bool checked, const Rates& rates)
{
    *this = RunProgress();
    m_rates = rates;
    m_phase = Phase::Compile;
    m_start = m_phaseStart = now;
    m_nodes = std::max(1, nodes);
    m_timed = timed;
    m_minSeconds = std::max(0.0, minSeconds);
    m_checked = checked;
}

void RunProgress::compileProgress(double, double fraction, const std::string& stage)
{
    if (m_phase != Phase::Compile)
        return;
    m_compileFraction = std::clamp(fraction, m_compileFraction, 1.0);
    if (!stage.empty())
        m_compileStage = stage;
}

void RunProgress::compiled(double now, std::int64_t sourceBytes, int steps)
{
    m_sourceBytes = std::max<std::int64_t>(0, sourceBytes);
    m_steps = std::max(0, steps);
    if (m_phase == Phase::Compile) {
        m_phase = Phase::Module;
        m_phaseStart = now;
    }
}

void RunProgress::report(double now, int done, int total, const std::string& phase)
{
    if (m_phase == Phase::Done)
        return;
    total = std::max(1, total);
    done = std::clamp(done, 0, total);
    if (phase == pipeline::kPhaseCompilingModule) {
        if (m_phase != Phase::Module) {
            m_phase = Phase::Module;
            m_phaseStart = now;
        }
        if (done == total) {
            const double seconds = now - m_phaseStart;
            if (seconds >= kMinLearnSeconds && m_sourceBytes > 0)
                m_rates.compileBytesPerSecond = static_cast<double>(m_sourceBytes) / seconds;
            // The kernels start right after the module is built.
            m_phase = Phase::Running;
            m_phaseStart = now;
            m_done = 0;
            m_total = std::max(1, m_steps);
        }
        return;
    }
    if (phase == pipeline::kPhaseRunningKernels) {
        if (m_phase != Phase::Running) {
            m_phase = Phase::Running;
            m_phaseStart = now;
        }
        m_done = done;
        m_total = total;
        return;
    }
    if (phase == pipeline::kPhaseChecking) {
        if (m_phase != Phase::Checking) {
            m_phase = Phase::Checking;
            m_phaseStart = now;
        }
        m_done = done;
        m_total = total;
        if (done == total && now - m_phaseStart >= kMinLearnSeconds)
            m_rates.checkSecondsPerStep = (now - m_phaseStart) / total;
    }
}

void RunProgress::finish(double)
{
    m_phase = Phase::Done;
}

double RunProgress::expectedModule() const
{
    const double bytes = m_sourceBytes >= 0 ? static_cast<double>(m_sourceBytes) : m_nodes * kSourceBytesPerNode;
    return bytes / std::max(1.0, m_rates.compileBytesPerSecond);
}

double RunProgress::expectedRunning(int steps) const
{
    if (!m_timed)
        return steps * kUntimedSecondsPerStep;
    // Each kernel is timed for minSeconds, then the whole sequence end to end once more.
    return steps * (m_minSeconds + kTimedOverheadPerStep) + m_minSeconds;
}

double RunProgress::expectedChecking(int steps) const
{
    return m_checked ? steps * m_rates.checkSecondsPerStep : 0.0;
}

double RunProgress::remaining(double now) const
{
    const double inPhase = std::max(0.0, now - m_phaseStart);
    const int steps = m_steps >= 0 ? m_steps : m_nodes;
    switch (m_phase) {
        case Phase::Compile: {
            // compileModel's own fraction gives its rate once it has moved a little.
            const double expected = m_compileFraction > 0.2 ? inPhase / m_compileFraction : std::max(1.0, 1.5 * inPhase);
            return std::max(0.0, expected - inPhase) + expectedModule() + expectedRunning(steps) +
                   expectedChecking(steps);
        }
        case Phase::Module: {
            const double expected = expectedModule();
            // Overdue: keep a little left rather than claim it is over while the compiler runs.
            return std::max(0.05 * expected, expected - inPhase) + expectedRunning(steps) + expectedChecking(steps);
        }
        case Phase::Running: {
            const double prior = m_timed ? m_minSeconds + kTimedOverheadPerStep : kUntimedSecondsPerStep;
            const double perStep = m_done >= 2 ? inPhase / m_done : prior;
            return (m_total - m_done) * perStep + (m_timed ? m_minSeconds : 0.0) + expectedChecking(m_total);
        }
        case Phase::Checking: {
            const double perStep = m_done >= 2 ? inPhase / m_done : m_rates.checkSecondsPerStep;
            return (m_total - m_done) * perStep;
        }
        case Phase::Done:
            break;
    }
    return 0.0;
}

double RunProgress::fraction(double now)
{
    if (m_phase == Phase::Done) {
        m_shown = 1.0;
        return m_shown;
    }
    const double elapsed = std::max(0.0, now - m_start);
    const double rest = remaining(now);
    const double f = elapsed + rest > 0 ? elapsed / (elapsed + rest) : 0.0;
    // 100% belongs to the end of the job, not to an estimate that ran out.
    m_shown = std::max(m_shown, std::min(f, 0.99));
    return m_shown;
}

QString RunProgress::stage() const
{
    switch (m_phase) {
        case Phase::Compile: {
            QString s = m_compileStage.empty() ? tr("Compiling") : QString::fromStdString(m_compileStage);
            s[0] = s[0].toUpper();
            return s;
        }
        case Phase::Module:
            return tr("Compiling kernels");
        case Phase::Running:
            return (m_timed ? tr("Running and timing kernels (%1 of %2)") : tr("Running kernels (%1 of %2)"))
                .arg(m_done)
                .arg(m_total);
        case Phase::Checking:
            return tr("Checking against the reference (%1 of %2)").arg(m_done).arg(m_total);
        case Phase::Done:
            break;
    }
    return tr("Done");
}

}  // namespace tessera::app
