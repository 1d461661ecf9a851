#pragma once
/// @file
/// The GUI's model-loading job channel: load (ONNX model or DSL program -> IR, snapshot) on a worker thread, then
/// Graphviz layout on a single dedicated layout thread, results delivered on the UI thread.
///
/// Every load gets a generation number. Starting a new load or calling cancel() cancels the
/// running one (through its CancelToken) and bumps the generation, so late results of an older
/// load are dropped and never reach the window.
///
/// Thread rules: all public functions and signals belong to the UI thread (the thread that owns
/// the Session). Workers only run the pure functions pipeline::loadModel(), makeGraphSnapshot() and
/// layoutGraph() on data they own; the layout pool has one thread, so Graphviz is only ever
/// called from one worker at a time.

#include <cstdint>
#include <functional>
#include <memory>

#include <QObject>
#include <QString>
#include <QThreadPool>

#include "core/ir/graph.h"
#include "core/support/cancel.h"
#include "core/support/diagnostic.h"
#include "views/graph/graph_layout.h"
#include "views/graph/graph_snapshot.h"

namespace tessera::app {

/// What one load produced. On failure `diagnostics` holds at least one Error.
struct LoadOutcome {
    quint64 generation = 0;
    QString path;
    bool ok = false;
    bool cancelled = false;
    std::shared_ptr<const ir::Model> model;
    std::shared_ptr<const views::GraphSnapshot> snapshot;
    views::LayoutResult layout;
    support::DiagnosticList diagnostics;  ///< errors on failure; warnings and notes on success
    double importMs = 0;
    double layoutMs = 0;
};

class Session : public QObject {
    Q_OBJECT
public:
    /// Turns a snapshot into a layout request (box sizes from the view's fonts); called on the
    /// UI thread between the import and the layout stage.
    using MeasureFn = std::function<views::LayoutRequest(const views::GraphSnapshot&)>;

    explicit Session(MeasureFn measure, QObject* parent = nullptr);
    ~Session() override;

    /// Starts loading `path`, superseding any load in progress. Returns its generation.
    quint64 load(const QString& path);
    /// Cancels the load in progress (if any); finished() is emitted with cancelled = true.
    void cancel();
    bool isBusy() const { return m_busy; }
    quint64 generation() const { return m_generation; }
    /// The outcome of the last load that finished (ok, failed or cancelled).
    const LoadOutcome& lastOutcome() const { return m_last; }

signals:
    void started(quint64 generation, const QString& path);
    /// "Importing", "Laying out".
    void stageChanged(quint64 generation, const QString& stage);
    /// A load finished; read lastOutcome(). Stale loads never emit this.
    void finished(quint64 generation, bool ok);

private:
    struct ImportStage;
    void onImported(quint64 generation, std::shared_ptr<ImportStage> stage);
    void onLaidOut(quint64 generation, std::shared_ptr<ImportStage> stage, views::LayoutResult layout);
    void finish(LoadOutcome outcome);

    MeasureFn m_measure;
    QThreadPool m_layoutPool;
    quint64 m_generation = 0;
    support::CancelToken m_cancel;
    bool m_busy = false;
    LoadOutcome m_last;
};

}  // namespace tessera::app
