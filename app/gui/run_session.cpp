#include "app/gui/run_session.h"

#include <chrono>

#include <QFutureWatcher>
#include <QMetaObject>
#include <QSettings>
#include <QtConcurrent/QtConcurrentRun>

namespace tessera::app {
namespace {

double secondsSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// What past runs taught the progress estimate, kept across sessions (seconds and bytes).
constexpr const char* kCompileRateKey = "run/progressCompileBytesPerSecond";
constexpr const char* kCheckRateKey = "run/progressCheckSecondsPerStep";

}  // namespace

RunSession::RunSession(QObject* parent) : QObject(parent)
{
    // One worker: runs never compete for the CPU they time, and the RunnerClient is used by one
    // job at a time (a superseded job unwinds before the next starts).
    m_pool.setMaxThreadCount(1);
    // The runner child dies with the thread that started it (PR_SET_PDEATHSIG is per thread):
    // keep the pool's one thread alive so an idle IDE keeps its runner.
    m_pool.setExpiryTimeout(-1);
    m_runner = pipeline::makeRunner(RunSettings().run.threads);
    m_clock.start();
    const QSettings settings;
    m_rates.compileBytesPerSecond =
        settings.value(QLatin1String(kCompileRateKey), m_rates.compileBytesPerSecond).toDouble();
    m_rates.checkSecondsPerStep = settings.value(QLatin1String(kCheckRateKey), m_rates.checkSecondsPerStep).toDouble();
    if (!(m_rates.compileBytesPerSecond > 0) || !(m_rates.checkSecondsPerStep > 0))
        m_rates = RunProgress::Rates();
    // The module compile reports nothing while the compiler runs: the clock moves the bar.
    m_progressTick.setInterval(kProgressTickMs);
    connect(&m_progressTick, &QTimer::timeout, this, &RunSession::emitProgress);
}

RunSession::~RunSession()
{
    m_cancel.cancel();
    m_probeCancel.cancel();
    m_pool.clear();
    m_pool.waitForDone();
}

QString RunSession::stageText(const std::string& coreStage)
{
    QString s = QString::fromStdString(coreStage);
    if (s == QLatin1String("checking against the reference interpreter"))
        s = QStringLiteral("checking against the reference");
    if (!s.isEmpty())
        s[0] = s[0].toUpper();
    return s;
}

quint64 RunSession::start(std::shared_ptr<const ir::Model> model, const RunSettings& settings)
{
    m_cancel.cancel();
    m_cancel = support::CancelToken();
    const quint64 gen = ++m_generation;
    m_busy = true;
    m_compiled.reset();
    m_cudaModule.reset();
    emit started(gen);
    if (!model) {
        RunOutcome out;
        out.generation = gen;
        out.settings = settings;
        out.diagnostics.error("", "run", "no model is loaded");
        finish(std::move(out));
        return gen;
    }
    m_progress.start(m_clock.elapsed() / 1000.0, static_cast<int>(model->graph.numNodes()), settings.run.time,
                     settings.run.minSeconds, settings.run.check, m_rates);
    m_progressTick.start();
    emit progress(gen, 0.0, tr("Starting"));

    const support::CancelToken token = m_cancel;
    std::shared_ptr<pipeline::Runner> runner = m_runner;
    std::shared_ptr<const pipeline::PreparedModel> reusable = m_prepared;
    auto* watcher = new QFutureWatcher<std::shared_ptr<RunOutcome>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, gen] {
        std::shared_ptr<RunOutcome> out = watcher->result();
        watcher->deleteLater();
        onFinished(gen, std::move(out));
    });
    watcher->setFuture(QtConcurrent::run(&m_pool, [this, gen, token, model, settings, runner, reusable]() {
        auto out = std::make_shared<RunOutcome>();
        out->generation = gen;
        out->model = model;
        out->settings = settings;
        if (token.isCancelled()) {
            out->cancelled = true;
            return out;
        }
        // Progress is posted to the UI thread; a superseded run's posts are dropped there.
        auto post = [this, gen](double fraction, const std::string& stage) {
            QMetaObject::invokeMethod(
                this, [this, gen, fraction, stage] { onCompileProgress(gen, fraction, stage); }, Qt::QueuedConnection);
        };
        auto postKernels = [this, gen](int done, int total, const std::string& phase) {
            QMetaObject::invokeMethod(
                this, [this, gen, done, total, phase] { onKernelProgress(gen, done, total, phase); },
                Qt::QueuedConnection);
        };

        const auto t0 = std::chrono::steady_clock::now();
        out->prepared = reusable && reusable->matches(model, settings.givenInputs, {}) ? reusable : nullptr;
        if (!out->prepared) {
            support::Expected<std::shared_ptr<const pipeline::PreparedModel>> prepared =
                pipeline::prepare(model, settings.givenInputs, {}, &token, post);
            if (token.isCancelled()) {
                out->cancelled = true;
                return out;
            }
            if (!prepared.ok()) {
                out->compileSeconds = secondsSince(t0);
                out->diagnostics = prepared.diagnostics();
                if (!out->diagnostics.hasErrors())
                    out->diagnostics.error(model->sourcePath, "compile", "the model could not be compiled");
                return out;
            }
            out->prepared = *prepared;
        }

        pipeline::RunRequest request;
        request.prepared = out->prepared;
        request.compile = settings.compile;
        request.run = settings.run;
        request.run.kernelProgress = postKernels;
        request.precompileCuda = true;
        request.compileOnly = settings.cudaCompileOnly;
        request.runner = runner.get();
        pipeline::RunEvents events;
        events.progress = post;
        events.compiled = [this, gen, out, t0](const std::shared_ptr<const pipeline::CompiledModel>& compiled) {
            out->compiled = compiled;
            out->compileSeconds = secondsSince(t0);
            QMetaObject::invokeMethod(
                this, [this, gen, compiled] { onCompiled(gen, compiled); }, Qt::QueuedConnection);
            return true;
        };
        events.cudaCompiled = [this, gen, out, t0](const std::shared_ptr<const runtime::cuda::CudaCompiled>& module) {
            out->cudaModule = module;
            out->compileSeconds = secondsSince(t0);
            QMetaObject::invokeMethod(
                this, [this, gen, module] { onCudaCompiled(gen, module); }, Qt::QueuedConnection);
        };
        support::Expected<pipeline::RunResult> result = pipeline::compileAndRun(request, &token, events);
        if (token.isCancelled()) {
            out->cancelled = true;
            return out;
        }
        if (!result.ok()) {
            out->diagnostics = result.diagnostics();
            if (!out->compiled) {
                out->compileSeconds = secondsSince(t0);
                if (!out->diagnostics.hasErrors())
                    out->diagnostics.error(model->sourcePath, "compile", "the model could not be compiled");
            } else if (!out->cudaModule && pipeline::precompilesCuda(request, *out->compiled)) {
                out->compileSeconds = secondsSince(t0);
                out->nvrtcFailed = true;
                if (!out->diagnostics.hasErrors())
                    out->diagnostics.error(model->sourcePath, "cuda", "NVRTC could not compile the CUDA module");
            } else {
                out->runSeconds = secondsSince(t0) - out->compileSeconds;
                out->runnerFault = out->diagnostics.hasCode(support::DiagnosticCode::RunnerFault);
                if (!out->diagnostics.hasErrors())
                    out->diagnostics.error(model->sourcePath, "run", "the model could not be run");
            }
            return out;
        }
        out->diagnostics = result->nvrtcWarnings;
        if (settings.cudaCompileOnly) {
            out->compileOnly = true;
            out->ok = out->cudaModule != nullptr || out->compiled->kernelCount() == 0;
            if (!out->ok)
                out->diagnostics.error(model->sourcePath, "cuda", "no CUDA architecture to compile for");
            return out;
        }
        out->runSeconds = secondsSince(t0) - out->compileSeconds;
        for (const support::Diagnostic& d : result->report->warnings.items())
            out->diagnostics.add(d);
        out->report = result->report;
        out->ok = true;
        return out;
    }));
    return gen;
}

void RunSession::cancel()
{
    if (!m_busy)
        return;
    m_cancel.cancel();
    RunOutcome out;
    out.generation = ++m_generation;
    out.cancelled = true;
    out.compiled = m_compiled;
    finish(std::move(out));
}

void RunSession::onCompileProgress(quint64 generation, double fraction, const std::string& stage)
{
    if (generation != m_generation || !m_busy)
        return;
    m_progress.compileProgress(m_clock.elapsed() / 1000.0, fraction, stage);
    emitProgress();
}

void RunSession::onKernelProgress(quint64 generation, int done, int total, const std::string& phase)
{
    if (generation != m_generation || !m_busy)
        return;
    m_progress.report(m_clock.elapsed() / 1000.0, done, total, phase);
    emitProgress();
}

void RunSession::emitProgress()
{
    if (!m_busy)
        return;
    const double now = m_clock.elapsed() / 1000.0;
    emit progress(m_generation, m_progress.fraction(now), m_progress.stage());
}

void RunSession::onCompiled(quint64 generation, std::shared_ptr<const pipeline::CompiledModel> cm)
{
    if (generation != m_generation || !m_busy)
        return;
    m_compiled = std::move(cm);
    m_progress.compiled(m_clock.elapsed() / 1000.0, static_cast<std::int64_t>(m_compiled->code.source.size()),
                        static_cast<int>(m_compiled->steps.size()));
    emitProgress();
    emit compiled(generation);
}

void RunSession::onCudaCompiled(quint64 generation, std::shared_ptr<const runtime::cuda::CudaCompiled> module)
{
    if (generation != m_generation || !m_busy)
        return;
    m_cudaModule = std::move(module);
    emit cudaCompiled(generation);
}

void RunSession::probeDevices()
{
    if (m_probing)
        return;
    m_probing = true;
    const support::CancelToken token = m_probeCancel;
    std::shared_ptr<pipeline::Runner> runner = m_runner;
    auto* watcher = new QFutureWatcher<DeviceProbe>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        m_probe = watcher->result();
        watcher->deleteLater();
        m_probing = false;
        emit devicesProbed();
    });
    watcher->setFuture(QtConcurrent::run(&m_pool, [token, runner]() {
        DeviceProbe probe;
        probe.answered = true;
        // cuInit may take seconds on a real machine; the probe gives up after 30.
        support::Expected<std::vector<runtime::cuda::CudaDeviceInfo>> devices = runner->devices(&token, 30);
        if (devices.ok()) {
            probe.devices = std::move(*devices);
        } else {
            for (const support::Diagnostic& d : devices.diagnostics().items()) {
                if (d.severity == support::Severity::Error) {
                    probe.error = QString::fromStdString(d.message);
                    break;
                }
            }
            if (probe.error.isEmpty())
                probe.error = QStringLiteral("the runner did not list CUDA devices");
        }
        return probe;
    }));
}

void RunSession::onFinished(quint64 generation, std::shared_ptr<RunOutcome> outcome)
{
    if (generation != m_generation || !m_busy)
        return;  // superseded or cancelled: drop
    finish(std::move(*outcome));
}

void RunSession::finish(RunOutcome outcome)
{
    m_busy = false;
    m_progressTick.stop();
    // Only a job that got going measured anything (a null model finishes before it starts).
    const bool measured = m_progress.phase() != RunProgress::Phase::Done;
    m_progress.finish(m_clock.elapsed() / 1000.0);
    // A cancelled or failed run's partial measurements are still measurements.
    const RunProgress::Rates learned = m_progress.learnedRates();
    if (measured && (learned.compileBytesPerSecond != m_rates.compileBytesPerSecond ||
                     learned.checkSecondsPerStep != m_rates.checkSecondsPerStep)) {
        m_rates = learned;
        QSettings settings;
        settings.setValue(QLatin1String(kCompileRateKey), m_rates.compileBytesPerSecond);
        settings.setValue(QLatin1String(kCheckRateKey), m_rates.checkSecondsPerStep);
    }
    m_last = std::move(outcome);
    if (m_last.prepared)
        m_prepared = m_last.prepared;
    if (m_last.compiled)
        m_compiled = m_last.compiled;
    if (m_last.cudaModule)
        m_cudaModule = m_last.cudaModule;
    emit finished(m_last.generation, m_last.ok);
}

}  // namespace tessera::app
