#include "app/gui/run_session.h"

#include <chrono>

#include <QFutureWatcher>
#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>

#include "core/runtime/runner_client.h"

namespace tessera::app {
namespace {

double secondsSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The compile is quick next to JIT compiling and timing: it gets the first quarter of the bar.
constexpr double kCompileShare = 0.25;

bool hasRunnerError(const support::DiagnosticList& d)
{
    for (const support::Diagnostic& x : d.items()) {
        if (x.severity == support::Severity::Error && x.where == pipeline::kRunnerWhere)
            return true;
    }
    return false;
}

}  // namespace

RunSession::RunSession(QObject* parent) : QObject(parent)
{
    // One worker: runs never compete for the CPU they time, and the RunnerClient is used by one
    // job at a time (a superseded job unwinds before the next starts).
    m_pool.setMaxThreadCount(1);
    // The runner child dies with the thread that started it (PR_SET_PDEATHSIG is per thread):
    // keep the pool's one thread alive so an idle IDE keeps its runner.
    m_pool.setExpiryTimeout(-1);
    runtime::RunnerClientOptions options;
    options.threads = RunSettings().run.threads;
    m_runner = std::make_shared<runtime::RunnerClient>(options);
}

RunSession::~RunSession()
{
    m_cancel.cancel();
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
    emit started(gen);
    if (!model) {
        RunOutcome out;
        out.generation = gen;
        out.settings = settings;
        out.diagnostics.error("", "run", "no model is loaded");
        finish(std::move(out));
        return gen;
    }
    emit progress(gen, 0.0, tr("Starting"));

    const support::CancelToken token = m_cancel;
    std::shared_ptr<runtime::RunnerClient> runner = m_runner;
    auto* watcher = new QFutureWatcher<std::shared_ptr<RunOutcome>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, gen] {
        std::shared_ptr<RunOutcome> out = watcher->result();
        watcher->deleteLater();
        onFinished(gen, std::move(out));
    });
    watcher->setFuture(QtConcurrent::run(&m_pool, [this, gen, token, model, settings, runner]() {
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
            const QString text = stageText(stage);
            QMetaObject::invokeMethod(
                this, [this, gen, fraction, text] { onProgress(gen, fraction, text); }, Qt::QueuedConnection);
        };

        const std::vector<ir::TensorData> inputs = pipeline::defaultInputs(model->graph);
        auto t0 = std::chrono::steady_clock::now();
        support::Expected<pipeline::CompiledModel> cm = pipeline::compileModel(
            *model, inputs, settings.compile, &token,
            [&](double f, const std::string& stage) { post(kCompileShare * f, stage); });
        out->compileSeconds = secondsSince(t0);
        if (token.isCancelled()) {
            out->cancelled = true;
            return out;
        }
        if (!cm.ok()) {
            out->diagnostics = cm.diagnostics();
            if (!out->diagnostics.hasErrors())
                out->diagnostics.error(model->sourcePath, "compile", "the model could not be compiled");
            return out;
        }
        auto compiled = std::make_shared<const pipeline::CompiledModel>(std::move(*cm));
        out->compiled = compiled;
        QMetaObject::invokeMethod(
            this, [this, gen, compiled] { onCompiled(gen, compiled); }, Qt::QueuedConnection);

        t0 = std::chrono::steady_clock::now();
        support::Expected<pipeline::RunReport> rep = pipeline::runModel(
            *compiled, inputs, settings.run, *runner, &token,
            [&](double f, const std::string& stage) { post(kCompileShare + (1 - kCompileShare) * f, stage); });
        out->runSeconds = secondsSince(t0);
        if (token.isCancelled()) {
            out->cancelled = true;
            return out;
        }
        if (!rep.ok()) {
            out->diagnostics = rep.diagnostics();
            out->runnerFault = hasRunnerError(out->diagnostics);
            if (!out->diagnostics.hasErrors())
                out->diagnostics.error(model->sourcePath, "run", "the model could not be run");
            return out;
        }
        out->diagnostics = rep->warnings;
        out->report = std::make_shared<const pipeline::RunReport>(std::move(*rep));
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

void RunSession::onProgress(quint64 generation, double fraction, const QString& stage)
{
    if (generation != m_generation || !m_busy)
        return;
    emit progress(generation, fraction, stage);
}

void RunSession::onCompiled(quint64 generation, std::shared_ptr<const pipeline::CompiledModel> cm)
{
    if (generation != m_generation || !m_busy)
        return;
    m_compiled = std::move(cm);
    emit compiled(generation);
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
    m_last = std::move(outcome);
    if (m_last.compiled)
        m_compiled = m_last.compiled;
    emit finished(m_last.generation, m_last.ok);
}

}  // namespace tessera::app
