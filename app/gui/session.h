#pragma once
/// @file
/// The GUI's model loading: load (ONNX model or DSL program -> IR, snapshot) on the import
/// JobChannel (job_channel.h), then Graphviz layout on a layout channel with a dedicated thread,
/// results delivered on the UI thread.
///
/// Every load gets a ticket of the import channel. Starting a new load or calling cancel()
/// cancels the running one (through its CancelToken) and supersedes its generation, so late
/// results of an older load are dropped and never reach the window.
///
/// Program text (the Program dock): loadText() parses edited DSL text instead of reading a file;
/// it shares the generation (a newer load or parse supersedes an older one of either kind) and
/// the layout thread, and ends with textParsed() instead of finished(). Every load of a `.tsr`
/// also reports the file's text, and of an ONNX model its DSL print (LoadOutcome::programText),
/// with the statement outline and token signature of program_outline.h (on success).
///
/// Thread rules: all public functions and signals belong to the UI thread (the thread that owns
/// the Session). Workers only run the pure functions pipeline::loadModel(), makeGraphSnapshot() and
/// layoutGraph() on data they own; the layout channel has one thread, so Graphviz is only ever
/// called from one thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <QObject>
#include <QString>

#include "app/gui/job_channel.h"
#include "core/ir/graph.h"
#include "core/support/cancel.h"
#include "core/support/diagnostic.h"
#include "views/graph/graph_layout.h"
#include "views/graph/graph_snapshot.h"
#include "views/program/program_editor.h"

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
    /// Program dock: loadText() made this outcome (else a file was loaded).
    bool fromText = false;
    /// The program's DSL text: the text parsed (loadText), the `.tsr` file's text (also when it
    /// failed to parse), or an ONNX model printed as DSL (`programExported`; success only).
    QString programText;
    bool programExported = false;
    /// On success: the statements that define drawn nodes, and the text's token signature.
    std::vector<views::ProgramStatement> statements;
    std::uint64_t tokenSignature = 0;
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
    /// Parses `text` as the DSL program saved at `path` (relative `npy`/`onnx` files resolve
    /// against its folder; diagnostics name it), superseding any load in progress. Returns its
    /// generation; textParsed() follows (never finished()).
    quint64 loadText(const QString& text, const QString& path);
    /// Whether the load in progress (or the last one) is a loadText().
    bool isTextLoad() const { return m_textLoad; }
    /// Cancels the load in progress (if any); finished() (textParsed() for a loadText) is emitted
    /// with cancelled = true.
    void cancel();
    bool isBusy() const { return m_busy; }
    quint64 generation() const;
    /// The outcome of the last load that finished (ok, failed or cancelled).
    const LoadOutcome& lastOutcome() const { return m_last; }

signals:
    void started(quint64 generation, const QString& path);
    /// "Importing", "Laying out".
    void stageChanged(quint64 generation, const QString& stage);
    /// A load finished; read lastOutcome(). Stale loads never emit this.
    void finished(quint64 generation, bool ok);
    /// A loadText() finished; read lastOutcome(). Stale parses never emit this.
    void textParsed(quint64 generation, bool ok);

private:
    struct ImportStage;
    void onImported(quint64 generation, std::shared_ptr<ImportStage> stage);
    void onLaidOut(quint64 generation, std::shared_ptr<ImportStage> stage, views::LayoutResult layout);
    void finish(LoadOutcome outcome);
    quint64 startImport(const QString& path, const QString* text);

    MeasureFn m_measure;
    support::CancelToken m_cancel;  ///< the current load's (its import and its layout)
    bool m_busy = false;
    bool m_textLoad = false;
    LoadOutcome m_last;
    /// Last, so that they are destroyed first (imports first: their cancel ends the layout too).
    std::unique_ptr<JobChannel> m_layouts;
    std::unique_ptr<JobChannel> m_imports;
};

}  // namespace tessera::app
