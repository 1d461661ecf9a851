#include "app/gui/session.h"

#include <chrono>


#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "app/gui/program_outline.h"
#include "core/pipeline/dsl_text.h"
#include "core/pipeline/load_model.h"

namespace tessera::app {

struct Session::ImportStage {
    QString path;
    bool ok = false;
    bool cancelled = false;
    std::shared_ptr<const ir::Model> model;
    std::shared_ptr<const views::GraphSnapshot> snapshot;
    support::DiagnosticList diagnostics;
    double ms = 0;
    bool fromText = false;
    QString programText;
    bool programExported = false;
    std::vector<views::ProgramStatement> statements;
    std::uint64_t tokenSignature = 0;
};

namespace {

double msSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Session::Session(MeasureFn measure, QObject* parent)
    : QObject(parent), m_measure(std::move(measure)),
      // One layout thread: cgraph is not thread-safe, and a superseded layout must not compete
      // with the current one for the CPU.
      m_layouts(std::make_unique<JobChannel>(nullptr, JobChannel::Thread::Dedicated)),
      m_imports(std::make_unique<JobChannel>())
{
}

Session::~Session() = default;

quint64 Session::generation() const { return m_imports->generation(); }

quint64 Session::load(const QString& path) { return startImport(path, nullptr); }

quint64 Session::loadText(const QString& text, const QString& path) { return startImport(path, &text); }

quint64 Session::startImport(const QString& path, const QString* text)
{
    const JobChannel::Ticket ticket = m_imports->begin();
    m_cancel = ticket.cancel;
    const quint64 gen = ticket.generation;
    m_busy = true;
    m_textLoad = text != nullptr;
    if (!m_textLoad) {
        emit started(gen, path);
        emit stageChanged(gen, tr("Importing"));
    }

    const support::CancelToken token = ticket.cancel;
    const bool fromText = m_textLoad;
    const QString source = fromText ? *text : QString();
    m_imports->run(ticket, [path, token, fromText, source]() {
        auto stage = std::make_shared<ImportStage>();
        stage->path = path;
        stage->fromText = fromText;
        const auto t0 = std::chrono::steady_clock::now();
        const std::string file = path.toStdString();
        const bool dsl = fromText || pipeline::sourceKindOf(file) == pipeline::SourceKind::Dsl;
        std::string programText;
        support::Expected<ir::Model> result = support::DiagnosticList{};
        if (fromText) {
            programText = source.toStdString();
            result = pipeline::parseDsl(programText, file, QFileInfo(path).absolutePath().toStdString());
            if (result.ok())
                result.value().sourcePath = file;
        } else {
            result = pipeline::loadModel(file, {}, &token);
            if (dsl) {
                // The Program dock shows the file even when it does not parse, so it can be fixed.
                QFile f(path);
                if (f.open(QIODevice::ReadOnly))
                    programText = f.readAll().toStdString();
            }
        }
        stage->diagnostics = result.diagnostics();
        if (token.isCancelled()) {
            stage->cancelled = true;
        } else if (result.ok()) {
            auto model = std::make_shared<ir::Model>(std::move(result.value()));
            stage->snapshot = std::make_shared<const views::GraphSnapshot>(views::makeGraphSnapshot(model->graph));
            if (!dsl) {
                // Weights stay in the ONNX file, referenced by its name: the text is shown
                // beside it (Save Program As re-prints the references for the folder chosen).
                pipeline::DslPrintOptions po;
                po.onnxReference = QFileInfo(path).fileName().toStdString();
                programText = pipeline::printDsl(*model, po);
                stage->programExported = true;
            }
            stage->statements = programOutline(programText, file);
            stage->tokenSignature = programTokenSignature(programText);
            stage->model = std::move(model);
            stage->ok = true;
        } else if (!stage->diagnostics.hasErrors()) {
            stage->diagnostics.error(file, {}, "the model could not be imported");
        }
        stage->programText = QString::fromStdString(programText);
        stage->ms = msSince(t0);
        return stage;
    }, [this, gen](std::shared_ptr<ImportStage> stage) { onImported(gen, std::move(stage)); });
    return gen;
}

void Session::cancel()
{
    if (!m_busy)
        return;
    m_imports->invalidate();
    LoadOutcome out;
    out.generation = m_imports->generation();
    out.cancelled = true;
    out.fromText = m_textLoad;
    finish(std::move(out));
}

void Session::onImported(quint64 generation, std::shared_ptr<ImportStage> stage)
{
    if (!m_imports->isCurrent(generation))
        return;  // superseded or cancelled: drop
    if (!stage->ok) {
        LoadOutcome out;
        out.generation = generation;
        out.path = stage->path;
        out.cancelled = stage->cancelled;
        out.diagnostics = std::move(stage->diagnostics);
        out.importMs = stage->ms;
        out.fromText = stage->fromText;
        out.programText = stage->programText;
        finish(std::move(out));
        return;
    }
    views::LayoutRequest request = m_measure(*stage->snapshot);
    if (!stage->fromText)
        emit stageChanged(generation, tr("Laying out %n node(s)", nullptr, static_cast<int>(request.nodes.size())));
    // The import's token: a newer load cancels the layout of this one too.
    const support::CancelToken token = m_cancel;
    m_layouts->run(
        m_layouts->begin(), [request = std::move(request), token]() { return views::layoutGraph(request, &token); },
        [this, generation, stage](views::LayoutResult layout) { onLaidOut(generation, stage, std::move(layout)); });
}

void Session::onLaidOut(quint64 generation, std::shared_ptr<ImportStage> stage, views::LayoutResult layout)
{
    if (!m_imports->isCurrent(generation))
        return;
    LoadOutcome out;
    out.generation = generation;
    out.path = stage->path;
    out.importMs = stage->ms;
    out.layoutMs = layout.milliseconds;
    out.diagnostics = std::move(stage->diagnostics);
    out.fromText = stage->fromText;
    out.programText = stage->programText;
    out.programExported = stage->programExported;
    if (layout.cancelled) {
        out.cancelled = true;
    } else if (!layout.ok) {
        out.diagnostics.error(stage->path.toStdString(), {}, "graph layout failed: " + layout.error);
    } else {
        out.ok = true;
        out.model = stage->model;
        out.snapshot = stage->snapshot;
        out.layout = std::move(layout);
        out.statements = stage->statements;
        out.tokenSignature = stage->tokenSignature;
    }
    finish(std::move(out));
}

void Session::finish(LoadOutcome outcome)
{
    m_busy = false;
    m_last = std::move(outcome);
    if (m_last.fromText)
        emit textParsed(m_last.generation, m_last.ok);
    else
        emit finished(m_last.generation, m_last.ok);
}

}  // namespace tessera::app
