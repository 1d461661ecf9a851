// mapping_canvas_bench: frame time of the task-mapping canvas (views/mapping/mapping_canvas.h).
//
// Draws spatial(16,16).repeat(16,16) (256x256 = 65,536 tasks, 256 workers) into a 1000x700 QImage
// at several zooms, from "whole grid fits" (~2.6 px cells) to 64 px cells with text, plain and with
// a followed worker and a step highlight, and reports the median ms per frame. Also times what an
// edit costs (parse + owner table) and what a highlight change costs (cell image rebuild + frame).
// This is the measurement behind the QPainter-vs-Dear-ImGui decision in mapping_canvas.h.
//
// Usage: mapping_canvas_bench [EXPR]   (runs on the offscreen platform unless QT_QPA_PLATFORM is set)
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <QApplication>
#include <QImage>
#include <QPainter>

#include "bench/bench_util.h"
#include "views/mapping/mapping_canvas.h"
#include "views/mapping/mapping_snapshot.h"

using namespace tessera;

namespace {

constexpr int kWidth = 1000;
constexpr int kHeight = 700;

double frameMs(views::MappingCanvas& canvas, QImage& image, const std::string& name)
{
    const auto t = bench::timeIt(
        [&] {
            QPainter p(&image);
            canvas.paintCanvas(p, image.rect());
        },
        20, 400);
    bench::report(name, t);
    return t.medianMs;
}

}  // namespace

int main(int argc, char** argv)
{
    if (std::getenv("QT_QPA_PLATFORM") == nullptr)
        setenv("QT_QPA_PLATFORM", "offscreen", 1);
    QApplication app(argc, argv);
    const std::string expr = argc > 1 ? argv[1] : "spatial(16,16).repeat(16,16)";

    views::MappingBuild build;
    bench::report("edit: parse + owner table (" + expr + ")",
                  bench::timeIt([&] { build = views::buildMappingSnapshot(expr, ""); }, 5, 300));
    if (!build.snapshot) {
        std::fprintf(stderr, "mapping_canvas_bench: %s\n", build.error.message.c_str());
        return 2;
    }
    const auto& shape = build.snapshot->shape();
    std::printf("task shape %lldx%lld, %lld workers, %lld steps, canvas %dx%d\n",
                static_cast<long long>(shape.front()), static_cast<long long>(shape.back()),
                static_cast<long long>(build.snapshot->numWorkers()), static_cast<long long>(build.snapshot->steps()),
                kWidth, kHeight);

    views::MappingCanvas canvas;
    canvas.resize(kWidth, kHeight);
    canvas.setSnapshot(build.snapshot);
    canvas.fitToView();
    QImage image(kWidth, kHeight, QImage::Format_ARGB32_Premultiplied);
    {
        QPainter warm(&image);
        canvas.paintCanvas(warm, image.rect());
    }
    const double fitCell = canvas.cellSize();
    double worst = 0;
    char name[128];
    std::snprintf(name, sizeof name, "frame, fit (%.2f px cells)", fitCell);
    worst = std::max(worst, frameMs(canvas, image, name));
    for (const double cell : {4.0, 8.0, 16.0, 32.0, 64.0}) {
        canvas.fitToView();
        canvas.setCellSize(cell, canvas.cellRect(0, 0).topLeft());  // grid corner stays: the view is full
        std::snprintf(name, sizeof name, "frame, %g px cells", cell);
        worst = std::max(worst, frameMs(canvas, image, name));
    }
    canvas.setFocusWorker(37);
    canvas.setStep(5);
    for (const double cell : {4.0, 16.0, 32.0}) {
        canvas.fitToView();
        canvas.setCellSize(cell, canvas.cellRect(0, 0).topLeft());  // grid corner stays: the view is full
        std::snprintf(name, sizeof name, "frame, %g px, worker 37 + step 5", cell);
        worst = std::max(worst, frameMs(canvas, image, name));
    }
    canvas.fitToView();
    int w = 0;
    const auto hl = bench::timeIt(
        [&] {
            canvas.setFocusWorker(w++ % 256);  // what a hover over a new worker costs
            QPainter p(&image);
            canvas.paintCanvas(p, image.rect());
        },
        20, 400);
    bench::report("highlight change + frame, fit", hl);
    worst = std::max(worst, hl.medianMs);
    std::printf("worst median frame: %.2f ms (budget 16.7 ms at 60 Hz)\n", worst);
    return 0;
}
