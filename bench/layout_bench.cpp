// Layout benchmark: import + Graphviz layout time per model, and how responsive the UI thread
// stays while the GUI's Session loads the model in the background.
// Usage: QT_QPA_PLATFORM=offscreen layout_bench MODEL.onnx [MODEL2.onnx ...]
// 'session' is the wall time from Session::load to the scene built and painted.
// Responsiveness: a 10 ms QTimer runs on the UI thread during Session::load; the largest gap
// between two ticks is the longest time the window could not repaint.
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>
#include <algorithm>
#include <cstdio>

#include "app/gui/session.h"
#include "bench/bench_util.h"
#include "core/frontend/onnx/onnx_importer.h"
#include "views/graph/graph_layout.h"
#include "views/graph/graph_snapshot.h"
#include "views/graph/graph_view.h"

using namespace tessera;

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s MODEL.onnx...\n", argv[0]);
        return 2;
    }
    views::GraphView view;
    view.resize(1600, 1000);
    view.show();
    for (int i = 1; i < argc; ++i) {
        const std::string path = argv[i];
        auto model = frontend::onnx::importModel(path);
        if (!model.ok()) {
            std::fprintf(stderr, "import failed: %s\n", path.c_str());
            return 1;
        }
        const auto snapshot = views::makeGraphSnapshot(model->graph);
        const auto request = view.makeLayoutRequest(snapshot);
        bool ok = true;
        const auto t = bench::timeIt(
            [&] {
                auto r = views::layoutGraph(request);
                ok = ok && r.ok;
            },
            3, 300);
        if (!ok) {
            std::fprintf(stderr, "layout failed: %s\n", path.c_str());
            return 1;
        }
        bench::report("layout " + path + " (" + std::to_string(snapshot.nodes.size()) + " drawn nodes)", t);
        std::printf("RESULT layout %s %.3f\n", path.c_str(), t.medianMs);

        // Whole background load through the GUI's Session, with a UI-thread heartbeat.
        app::Session session([&view](const views::GraphSnapshot& s) { return view.makeLayoutRequest(s); });
        QEventLoop loop;
        QElapsedTimer clock, sinceTick;
        double worstGapMs = 0;
        QTimer heartbeat;
        heartbeat.setInterval(10);
        QObject::connect(&heartbeat, &QTimer::timeout, [&] {
            worstGapMs = std::max(worstGapMs, sinceTick.nsecsElapsed() / 1e6);
            sinceTick.restart();
        });
        double sceneMs = 0, totalMs = 0;
        QObject::connect(&session, &app::Session::finished, [&](quint64, bool ok) {
            // What the main window does on the UI thread with the result: build the scene and paint.
            if (ok) {
                QElapsedTimer t;
                t.start();
                const auto& out = session.lastOutcome();
                view.setGraph(out.snapshot, out.layout);
                view.viewport()->repaint();
                sceneMs = t.nsecsElapsed() / 1e6;
            }
            totalMs = clock.nsecsElapsed() / 1e6;
            QTimer::singleShot(30, &loop, &QEventLoop::quit);  // let the heartbeat see the gap
        });
        clock.start();
        sinceTick.start();
        heartbeat.start();
        session.load(QString::fromStdString(path));
        loop.exec();
        heartbeat.stop();
        std::printf("%-48s total %9.2f ms, scene build+paint %.1f ms, longest UI-thread gap %.1f ms (timer 10 ms)\n",
                    ("session load " + path).c_str(), totalMs, sceneMs, worstGapMs);
        std::printf("RESULT session %s %.3f scene %.1f gap %.1f\n", path.c_str(), totalMs, sceneMs, worstGapMs);
    }
    return 0;
}
