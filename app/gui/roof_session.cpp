#include "app/gui/roof_session.h"


namespace tessera::app {

RoofSession::RoofSession(QObject* parent) : QObject(parent), m_jobs(std::make_unique<JobChannel>())
{
    m_options.quick = true;
}

RoofSession::~RoofSession() = default;

void RoofSession::setMeasureFunction(MeasureFn fn) { m_measure = std::move(fn); }

quint64 RoofSession::start()
{
    const JobChannel::Ticket ticket = m_jobs->begin();
    const quint64 gen = ticket.generation;
    m_busy = true;
    emit started(gen);
    emit progress(gen, 0.0, tr("starting"));

    const support::CancelToken token = ticket.cancel;
    MeasureFn measure = m_measure ? m_measure : MeasureFn([](const perf::CpuMicrobenchOptions& o,
                                                              const support::CancelToken* c) {
        return perf::measureCpuRoofs(o, c);
    });
    perf::CpuMicrobenchOptions options = m_options;
    // Progress is posted to the UI thread; a superseded measurement's posts are dropped there.
    JobChannel* jobs = m_jobs.get();
    options.progress = [this, jobs, gen](double fraction, const std::string& phase) {
        const QString text = QString::fromStdString(phase);
        jobs->post(gen, [this, gen, fraction, text] { onProgress(gen, fraction, text); });
    };

    m_jobs->run(ticket, [gen, token, measure, options]() {
        RoofOutcome out;
        out.generation = gen;
        out.quick = options.quick;
        // A measurement superseded before it began must not load the machine at all.
        if (token.isCancelled()) {
            out.cancelled = true;
            return out;
        }
        support::Expected<perf::CpuMicrobenchResult> r = measure(options, &token);
        if (token.isCancelled()) {
            out.cancelled = true;
            return out;
        }
        if (!r.ok()) {
            out.diagnostics = r.diagnostics();
            if (!out.diagnostics.hasErrors())
                out.diagnostics.error("", "roofline measure", "the measurement failed");
            return out;
        }
        // The problems are recomputed from the roofs rather than read from the warnings, so that
        // any measure function (a fake one too) is judged alike; the core's own copies are skipped.
        out.problems = perf::roofConsistencyProblems(r->roofs);
        for (const support::Diagnostic& d : r.diagnostics().items())
            if (d.code != support::DiagnosticCode::MeasurementDisturbed)
                out.diagnostics.add(d);
        for (const std::string& p : out.problems)
            out.diagnostics.warning("", "roofline measure", p);
        out.result = std::move(*r);
        out.ok = true;
        return out;
    }, [this, gen](RoofOutcome out) { onFinished(gen, std::move(out)); });
    return gen;
}

void RoofSession::cancel()
{
    if (!m_busy)
        return;
    m_jobs->invalidate();
    RoofOutcome out;
    out.generation = m_jobs->generation();
    out.cancelled = true;
    out.quick = m_options.quick;
    onFinished(out.generation, std::move(out));
}

void RoofSession::onProgress(quint64 generation, double fraction, const QString& phase)
{
    if (!m_jobs->isCurrent(generation) || !m_busy)
        return;
    emit progress(generation, fraction, phase);
}

void RoofSession::onFinished(quint64 generation, RoofOutcome outcome)
{
    if (!m_jobs->isCurrent(generation) || !m_busy)
        return;  // superseded or cancelled: drop
    m_busy = false;
    m_last = std::move(outcome);
    emit finished(generation, m_last.ok);
}

}  // namespace tessera::app
