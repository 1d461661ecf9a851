#pragma once
/// @file
/// The GUI's run job channel: prepare a model (pipeline::prepare), compile it and run, time and
/// check it (pipeline::compileAndRun) on a worker thread of the channel's own one-thread pool,
/// with the kernels executing in a tessera-runner child process (never in the GUI process).
///
/// Every run gets a generation number. Starting a new run, or cancel(), cancels the running one
/// (through its CancelToken: the host compiler or the runner is killed) and bumps the generation,
/// so late progress and results of an older run are dropped. Because the pool has one thread, a
/// new run starts once the cancelled one has unwound, and the channel's RunnerClient is only
/// ever used by one job at a time.
///
/// Inputs are those of pipeline::prepare(model, RunSettings::givenInputs): the inputs the user
/// fed (Run > Inputs...), the others from seed 42, as `tessera-cli run` does with --input, so the
/// GUI and the CLI compile and check the same thing. A run of the same model with the same fed
/// inputs as the last run reuses its prepared model (PreparedModel::matches).
///
/// CUDA (RunSettings::compile.target == Cuda): after the compile, NVRTC compiles the CUDA C for
/// RunOptions::cudaArch (RunRequest::precompileCuda; cudaCompiled() is emitted, so the PTX is on
/// screen before and even without a run). With RunSettings::cudaCompileOnly the job ends there:
/// ok, no report.
///
/// Devices: probeDevices() asks the runner, on the same worker (the runner is never used by two
/// jobs at once, and never by the UI thread), which CUDA devices there are; devicesProbed() brings
/// the answer back. A run started meanwhile waits for the probe to finish.
///
/// Thread rules: all public functions and signals belong to the UI thread (the thread that owns
/// the RunSession). The worker only runs the pure core entry points on data it owns or shares
/// read-only (the model, the compiled model), plus the RunnerClient, which only workers touch
/// (one at a time) until the destructor, which waits for the worker first.

#include <memory>

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QTimer>

#include "app/gui/run_progress.h"
#include "app/gui/run_targets.h"
#include "core/ir/graph.h"
#include "core/pipeline/engine.h"
#include "core/support/cancel.h"
#include "core/support/diagnostic.h"

namespace tessera::app {

/// What to run. Defaults: check against the reference interpreter, ops without a code generator
/// run in the reference interpreter, 2 threads, timing as the CLI times.
struct RunSettings {
    pipeline::CompileOptions compile;
    pipeline::RunOptions run;
    /// CUDA target only: compile to CUDA C and with NVRTC to PTX for run.cudaArch; run nothing.
    bool cudaCompileOnly = false;
    /// Inputs fed instead of seeded ones (Run > Inputs...), one per runtime input of the model's
    /// graph in graph order; an Undefined dtype (or an empty vector) = filled from the seed.
    std::vector<ir::TensorData> givenInputs;
    RunSettings()
    {
        compile.fallbackReference = true;
        run.check = true;
    }
};

/// What one run produced. A compile failure leaves `compiled` null; a run failure (compiler
/// missing, a kernel crashed) keeps `compiled` and leaves `report` null. On failure
/// `diagnostics` holds at least one Error. CUDA: `cudaModule` is NVRTC's result (null when
/// NVRTC failed: `nvrtcFailed`); a compile-only job that succeeded is ok with `compileOnly` set
/// and no report.
struct RunOutcome {
    quint64 generation = 0;
    bool ok = false;
    bool cancelled = false;
    bool runnerFault = false;  ///< the error came from the runner process (crash, timeout)
    std::shared_ptr<const ir::Model> model;
    /// The model with its inputs, specialised (null when preparing failed).
    std::shared_ptr<const pipeline::PreparedModel> prepared;
    std::shared_ptr<const pipeline::CompiledModel> compiled;
    std::shared_ptr<const pipeline::RunReport> report;
    std::shared_ptr<const runtime::cuda::CudaCompiled> cudaModule;
    bool compileOnly = false;
    bool nvrtcFailed = false;
    RunSettings settings;
    support::DiagnosticList diagnostics;
    double compileSeconds = 0;  ///< wall-clock seconds of preparing and compiling (NVRTC included)
    double runSeconds = 0;      ///< wall-clock seconds of the run (JIT, runs, timing, checks)
};

class RunSession : public QObject {
    Q_OBJECT
public:
    explicit RunSession(QObject* parent = nullptr);
    /// Cancels the running job and waits for the worker to unwind; stops the runner.
    ~RunSession() override;

    /// Starts compiling and running `model`, superseding any run in progress. Returns its
    /// generation. A null model finishes at once with an error.
    quint64 start(std::shared_ptr<const ir::Model> model, const RunSettings& settings = {});
    /// Cancels the run in progress (if any); finished() is emitted with cancelled = true.
    void cancel();
    bool isBusy() const { return m_busy; }
    quint64 generation() const { return m_generation; }
    /// The outcome of the last run that finished (ok, failed or cancelled).
    const RunOutcome& lastOutcome() const { return m_last; }
    /// The compiled model of the current run once compiled() was emitted (null before).
    std::shared_ptr<const pipeline::CompiledModel> currentCompiled() const { return m_compiled; }
    /// NVRTC's result for the current run once cudaCompiled() was emitted (null before, and for
    /// CPU runs).
    std::shared_ptr<const runtime::cuda::CudaCompiled> currentCudaModule() const { return m_cudaModule; }

    /// Asks the runner for its CUDA devices on the worker (once at a time; a probe in flight is
    /// not repeated). devicesProbed() follows; an error (no driver, a runner that cannot list
    /// devices, no runner) is an answer with DeviceProbe::error set.
    void probeDevices();
    /// The last probe's answer (answered = false before it came).
    const DeviceProbe& deviceProbe() const { return m_probe; }

    /// Stage text for a core progress label ("lowering" -> "Lowering", "running kernels" ->
    /// "Running kernels", ...).
    static QString stageText(const std::string& coreStage);

signals:
    void started(quint64 generation);
    /// fraction in [0, 1] over the whole job, in time (RunProgress: it moves per kernel from the
    /// pipeline's per-kernel reports and with the clock through the module compile; never back);
    /// stage for the status bar ("Running and timing kernels (12 of 100)"). Emitted on each report
    /// and every kProgressTickMs while a run is busy.
    void progress(quint64 generation, double fraction, const QString& stage);
    /// The compile finished (read currentCompiled()); the run goes on.
    void compiled(quint64 generation);
    /// NVRTC compiled the CUDA module (read currentCudaModule()); the run, if any, goes on.
    void cudaCompiled(quint64 generation);
    /// The device probe answered (read deviceProbe()).
    void devicesProbed();
    /// A run finished; read lastOutcome(). Stale runs never emit this.
    void finished(quint64 generation, bool ok);

public:
    static constexpr int kProgressTickMs = 250;
    /// What past runs taught the progress estimate (compiler and check speed); kept in QSettings
    /// ("run/progressCompileBytesPerSecond", "run/progressCheckSecondsPerStep") across sessions.
    const RunProgress::Rates& progressRates() const { return m_rates; }

private:
    void onCompileProgress(quint64 generation, double fraction, const std::string& stage);
    void onKernelProgress(quint64 generation, int done, int total, const std::string& phase);
    void emitProgress();
    void onCompiled(quint64 generation, std::shared_ptr<const pipeline::CompiledModel> cm);
    void onCudaCompiled(quint64 generation, std::shared_ptr<const runtime::cuda::CudaCompiled> module);
    void onFinished(quint64 generation, std::shared_ptr<RunOutcome> outcome);
    void finish(RunOutcome outcome);

    QThreadPool m_pool;
    std::shared_ptr<pipeline::Runner> m_runner;
    /// The last run's prepared model, reused by a run of the same model and inputs.
    std::shared_ptr<const pipeline::PreparedModel> m_prepared;
    quint64 m_generation = 0;
    support::CancelToken m_cancel;
    bool m_busy = false;
    std::shared_ptr<const pipeline::CompiledModel> m_compiled;
    std::shared_ptr<const runtime::cuda::CudaCompiled> m_cudaModule;
    RunOutcome m_last;
    DeviceProbe m_probe;
    bool m_probing = false;
    support::CancelToken m_probeCancel;
    RunProgress m_progress;
    RunProgress::Rates m_rates;
    QElapsedTimer m_clock;
    QTimer m_progressTick;
};

}  // namespace tessera::app
