// The roofline chart (views/roofline/roofline_view.h), offscreen: plotted roofs and dots against
// hand values, mode switches, the 30 Hz coalescing of live updates, trails, tooltips, selection
// and exports.

#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <qcustomplot.h>

#include "views/roofline/energy_view.h"
#include "views/roofline/roofline_view.h"

using tessera::perf::KernelSample;
using tessera::perf::MachineProfile;
using tessera::perf::RooflineMode;
using tessera::views::EnergyView;
using tessera::views::KernelEnergy;
using tessera::views::RooflineView;

namespace {

/// L1 1000 GB/s, DRAM 80 GB/s, FP32 FMA 539 GFLOP/s at 2 threads (plus 1-thread roofs that must
/// not be drawn for a 2-thread run).
MachineProfile profile() {
    MachineProfile p;
    p.fingerprint = "Test CPU | 2 logical CPUs | L1d 32 KiB";
    p.target = "cpu";
    p.measuredAt = "2026-01-02T03:04:05Z";
    p.roofs = {tessera::perf::bandwidthRoof("L1 load bandwidth", "L1", 1000.0, 2, "load 32 KiB"),
               tessera::perf::bandwidthRoof("L1 load bandwidth", "L1", 600.0, 1, "load 32 KiB"),
               tessera::perf::bandwidthRoof("DRAM triad bandwidth", "DRAM", 80.0, 2, "triad 512 MiB"),
               tessera::perf::computeRoof("FP32 FMA peak", "fp32", 539.0, 2, "fma avx2"),
               tessera::perf::computeRoof("FP32 FMA peak", "fp32", 270.0, 1, "fma avx2")};
    return p;
}

/// conv: 2e9 FLOPs in 10 ms = 200 GFLOP/s; CARM AI 5 (4e8 bytes), DRAM AI 40 (5e7), L1 AI 4 (5e8).
KernelSample conv(double seconds = 0.01) {
    KernelSample s;
    s.name = "conv";
    s.opType = "Conv";
    s.ops = {"conv"};
    s.flops = 2e9;
    s.seconds = seconds;
    s.issuedBytes = 4e8;
    s.compulsoryBytes = 5e7;
    s.levelBytes = {{"L1", 5e8}, {"DRAM", 5e7}};
    return s;
}

/// relu (fused with add): 1e6 FLOPs in 0.1 ms = 10 GFLOP/s; AI 0.125 in every mode.
KernelSample relu() {
    KernelSample s;
    s.name = "relu";
    s.opType = "Relu";
    s.ops = {"relu", "add"};
    s.group = "relu";
    s.flops = 1e6;
    s.seconds = 1e-4;
    s.issuedBytes = 8e6;
    s.compulsoryBytes = 8e6;
    s.levelBytes = {{"L1", 8e6}, {"DRAM", 8e6}};
    return s;
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

const RooflineView::RoofLine* lineNamed(const std::vector<RooflineView::RoofLine>& lines, const QString& label) {
    for (const auto& l : lines)
        if (l.label == label) return &l;
    return nullptr;
}

/// A fused dw-pw kernel: 4e9 FLOPs in 10 ms = 400 GFLOP/s, CARM AI 10.
KernelSample dwpw() {
    KernelSample s = conv();
    s.name = "dw_pw";
    s.ops = {"dw", "pw"};
    s.group = "dw_pw";
    s.fusionKind = "dw-pw";
    s.flops = 4e9;
    return s;
}

/// A kernel of no FLOPs (Flatten): no dot in any mode.
KernelSample flatten() {
    KernelSample s;
    s.name = "flatten";
    s.opType = "Flatten";
    s.ops = {"flatten"};
    s.seconds = 1e-6;
    s.issuedBytes = 4e3;
    s.compulsoryBytes = 4e3;
    s.levelBytes = {{"L1", 4e3}, {"DRAM", 4e3}};
    return s;
}

/// A CUDA-like profile: CUDA-core fp32/fp64 peaks and tensor-core fp16/bf16/tf32 peaks.
MachineProfile gpuProfile() {
    MachineProfile p;
    p.fingerprint = "Test GPU";
    p.target = "cuda:0";
    p.roofs = {tessera::perf::bandwidthRoof("HBM copy bandwidth", "HBM", 4000.0, 1, "copy 1 GiB"),
               tessera::perf::bandwidthRoof("L2 copy bandwidth", "L2", 10000.0, 1, "copy 32 MiB"),
               tessera::perf::computeRoof("FP32 FMA peak", "fp32", 60000.0, 1, "fma cuda-core"),
               tessera::perf::computeRoof("FP64 FMA peak", "fp64", 30000.0, 1, "fma cuda-core"),
               tessera::perf::computeRoof("FP16 tensor peak", "FP16", 900000.0, 1, "mma tensor"),
               tessera::perf::computeRoof("BF16 tensor peak", "bf16", 880000.0, 1, "mma tensor"),
               tessera::perf::computeRoof("TF32 tensor peak", "tf32", 450000.0, 1, "mma tensor")};
    return p;
}

/// conv at 0.5 J per run (50 W over its 10 ms): 2e9 / 1e9 / 0.5 = 4 GFLOP/J.
KernelEnergy convEnergy(double joules = 0.5) { return {conv(), joules, joules / 0.01}; }
/// relu at 10 mJ per run (100 W over 0.1 ms): 1e6 / 1e9 / 1e-2 = 0.1 GFLOP/J.
KernelEnergy reluEnergy() { return {relu(), 1e-2, 100.0}; }
/// A kernel the runner measured no energy for.
KernelEnergy noEnergy(const std::string& name) {
    KernelSample s = conv();
    s.name = name;
    return {s, -1, -1};
}

}  // namespace

class RooflineViewTest : public QObject {
    Q_OBJECT
private slots:
    void roofsAndDotsInCarm();
    void modeSwitchMovesDots();
    void liveUpdatesAreCoalesced();
    void trailKeepsPreviousPositions();
    void tooltipText();
    void noProfileShowsBannerAndDots();
    void clickSelectsAndSlotHighlights();
    void exportsPngSvgPdf();
    void legendListsOnlyKeysWithDots();
    void legendMovesOffTheDots();
    void hierarchicalDotsCarryTheirLevel();
    void precisionBoxListsTheProfilesPrecisions();
    void roofLabelsNeverOverlap();
    // EnergyView (the "Energy" tab beside the roofline).
    void energyDotsAndBestLine();
    void energyPlaceholderWithoutEnergy();
    void energyTooltip();
    void energyRoofNeedsAPowerFigure();
    void energyClickSelectsAndLiveUpdates();
    void energyPairsSamplesWithTheRun();
};

void RooflineViewTest::roofsAndDotsInCarm() {
    RooflineView v;
    v.setThreads(2);
    v.setProfile(profile());
    v.addPoints({conv(), relu()});
    QCOMPARE(v.pendingCount(), 2);
    v.flush();
    QCOMPARE(v.pendingCount(), 0);
    QCOMPARE(v.kernelNames(), QStringList({"conv", "relu"}));
    QVERIFY(v.title().contains("CARM: AI = FLOPs / all bytes issued by loads and stores"));
    QVERIFY(v.bannerText().isEmpty());

    const double xlo = v.plot()->xAxis->range().lower, xhi = v.plot()->xAxis->range().upper;
    QVERIFY(v.plot()->xAxis->scaleType() == QCPAxis::stLogarithmic);
    QVERIFY(v.plot()->yAxis->scaleType() == QCPAxis::stLogarithmic);
    QVERIFY(xlo <= 0.125 && xhi >= 6.7375);

    const auto lines = v.roofLines();
    QCOMPARE(lines.size(), std::size_t(3));  // the 1-thread roofs are not drawn
    const auto* l1 = lineNamed(lines, "L1 1000 GB/s");
    const auto* dram = lineNamed(lines, "DRAM 80 GB/s");
    const auto* fma = lineNamed(lines, "FP32 FMA 539 GFLOP/s");
    QVERIFY(l1 && dram && fma);
    // Slanted roofs from the left edge to their ridge with the 539 GFLOP/s peak.
    QVERIFY(near(l1->start.x(), xlo) && near(l1->start.y(), 1000.0 * xlo));
    QVERIFY(near(l1->end.x(), 0.539) && near(l1->end.y(), 539.0));
    QVERIFY(near(dram->start.x(), xlo) && near(dram->start.y(), 80.0 * xlo));
    QVERIFY(near(dram->end.x(), 539.0 / 80.0) && near(dram->end.y(), 539.0));
    // The flat roof from its ridge with the fastest bandwidth roof to the right edge.
    QVERIFY(near(fma->start.x(), 0.539) && near(fma->start.y(), 539.0));
    QVERIFY(near(fma->end.x(), xhi) && near(fma->end.y(), 539.0));

    const auto ridges = v.ridgePoints();
    QCOMPARE(ridges.size(), std::size_t(2));
    QVERIFY(near(ridges[0].x(), 0.539) && near(ridges[0].y(), 539.0));
    QVERIFY(near(ridges[1].x(), 6.7375));

    auto c = v.dotPositions("conv");
    QCOMPARE(c.size(), std::size_t(1));
    QVERIFY(near(c[0].x(), 5.0) && near(c[0].y(), 200.0));
    auto r = v.dotPositions("relu");
    QCOMPARE(r.size(), std::size_t(1));
    QVERIFY(near(r[0].x(), 0.125) && near(r[0].y(), 10.0));
    QCOMPARE(v.colourKey("conv"), QString("op Conv"));
    QCOMPARE(v.colourKey("relu"), QString("fused"));  // a fused kernel whose plan kind is unknown
}

void RooflineViewTest::modeSwitchMovesDots() {
    RooflineView v;
    v.setThreads(2);
    v.setProfile(profile());
    v.addPoints({conv(), relu()});
    v.flush();
    QSignalSpy modes(&v, &RooflineView::modeChanged);

    v.setMode(RooflineMode::Dram);
    QCOMPARE(modes.count(), 1);
    QVERIFY(v.title().contains("Classic (DRAM): AI = FLOPs / compulsory DRAM bytes"));
    auto c = v.dotPositions("conv");
    QCOMPARE(c.size(), std::size_t(1));
    QVERIFY(near(c[0].x(), 40.0) && near(c[0].y(), 200.0));  // y does not depend on the mode
    const auto lines = v.roofLines();
    QCOMPARE(lines.size(), std::size_t(2));  // DRAM and compute only
    QVERIFY(lineNamed(lines, "DRAM 80 GB/s") && !lineNamed(lines, "L1 1000 GB/s"));

    v.setMode(RooflineMode::Hierarchical);
    QVERIFY(v.title().contains("Hierarchical"));
    c = v.dotPositions("conv");
    QCOMPARE(c.size(), std::size_t(2));  // one dot per level, joined
    QVERIFY(near(c[0].x(), 4.0) && near(c[1].x(), 40.0));
    QVERIFY(near(c[0].y(), 200.0) && near(c[1].y(), 200.0));

    // The combo box drives the same switch.
    auto* box = v.findChild<QComboBox*>("rooflineMode");
    QVERIFY(box);
    box->setCurrentIndex(0);
    QCOMPARE(v.mode(), RooflineMode::Carm);
    QVERIFY(near(v.dotPositions("conv")[0].x(), 5.0));
}

void RooflineViewTest::liveUpdatesAreCoalesced() {
    RooflineView v;
    v.setProfile(profile());
    v.setThreads(2);
    const int before = v.replotCount();
    for (int i = 0; i < 100; ++i) v.addPoints({conv(0.01 + 1e-4 * i)});
    QCOMPARE(v.replotCount(), before);  // nothing drawn synchronously
    QCOMPARE(v.pendingCount(), 100);
    QTRY_COMPARE_WITH_TIMEOUT(v.pendingCount(), 0, 2000);
    QTest::qWait(120);  // a few more ticks: an idle timer must not replot
    const int replots = v.replotCount() - before;
    QVERIFY2(replots >= 1 && replots <= 3, qPrintable(QString("replots: %1").arg(replots)));
    // The last sample is shown; the previous positions form the trail (capped at 16).
    QVERIFY(near(v.dotPositions("conv")[0].y(), 2e9 / (0.01 + 1e-4 * 99) / 1e9));
    QCOMPARE(v.trailPositions("conv").size(), std::size_t(16));
}

void RooflineViewTest::trailKeepsPreviousPositions() {
    RooflineView v;
    v.setProfile(profile());
    v.addPoints({conv(0.01)});
    v.flush();
    QVERIFY(v.trailPositions("conv").empty());
    v.addPoints({conv(0.01)});  // the same place: no trail
    v.flush();
    QVERIFY(v.trailPositions("conv").empty());
    v.addPoints({conv(0.02)});
    v.flush();
    const auto trail = v.trailPositions("conv");
    QCOMPARE(trail.size(), std::size_t(1));
    QVERIFY(near(trail[0].x(), 5.0) && near(trail[0].y(), 200.0));
    QVERIFY(near(v.dotPositions("conv")[0].y(), 100.0));
    v.clearPoints();
    v.flush();
    QVERIFY(v.kernelNames().isEmpty());
}

void RooflineViewTest::tooltipText() {
    RooflineView v;
    v.setThreads(2);
    v.setProfile(profile());
    v.addPoints({conv(), relu()});
    v.flush();
    // CARM: AI 5 under L1 (1000 x 5 = 5000) is above the 539 peak: compute-bound, 200/539.
    QCOMPARE(v.tooltipText("conv"), QString("conv\nops: conv\nAI: 5 FLOP/byte (CARM)\nperformance: 200 GFLOP/s\n"
                                            "bound: 539 GFLOP/s\n% of bound: 37.1 %\nbinding roof: FP32 FMA peak"));
    // DRAM: relu at AI 0.125 is DRAM-bound at 80 x 0.125 = 10 GFLOP/s: 100 %.
    v.setMode(RooflineMode::Dram);
    QCOMPARE(v.tooltipText("relu"),
             QString("relu\nops: relu, add\nAI: 0.125 FLOP/byte (DRAM)\nperformance: 10 GFLOP/s\n"
                     "bound: 10 GFLOP/s\n% of bound: 100.0 %\nbinding roof: DRAM triad bandwidth"));
    v.setMode(RooflineMode::Hierarchical);
    QVERIFY(v.tooltipText("conv").contains("AI: L1 4, DRAM 40 FLOP/byte (hierarchical)"));
    QVERIFY(v.tooltipText("nope").isEmpty());
}

void RooflineViewTest::noProfileShowsBannerAndDots() {
    RooflineView v;
    v.setProfile(std::nullopt);
    v.addPoints({conv()});
    v.flush();
    QCOMPARE(v.bannerText(),
             QString("No measured roofs for this machine: measure them here (Run > Measure Roofs) or run "
                     "`tessera-cli roofline measure --target cpu --save`"));
    QVERIFY(!v.measureButton()->isHidden());  // the CPU hint offers the GUI twin
    QSignalSpy measure(&v, &RooflineView::measureRoofsRequested);
    v.measureButton()->click();
    QCOMPARE(measure.count(), 1);
    v.setProfile(std::nullopt, "No measured roofs for CUDA device 0");
    QVERIFY(v.measureButton()->isHidden());  // the GUI measures CPU roofs only
    v.setProfile(std::nullopt);
    QVERIFY(v.roofLines().empty());
    QCOMPARE(v.dotPositions("conv").size(), std::size_t(1));
    QVERIFY(v.tooltipText("conv").contains("bound: no measured roofs"));
    v.setProfile(profile());
    QVERIFY(v.bannerText().isEmpty());
}

void RooflineViewTest::clickSelectsAndSlotHighlights() {
    RooflineView v;
    v.resize(800, 600);
    v.setThreads(2);
    v.setProfile(profile());
    v.addPoints({conv(), relu()});
    v.show();
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    v.flush();
    v.plot()->replot();  // lay out at the shown size
    QSignalSpy selected(&v, &RooflineView::kernelSelected);
    const QPoint pixel(qRound(v.plot()->xAxis->coordToPixel(5.0)), qRound(v.plot()->yAxis->coordToPixel(200.0)));
    QTest::mouseClick(v.plot(), Qt::LeftButton, Qt::NoModifier, pixel);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.at(0).at(0).toString(), QString("conv"));
    QCOMPARE(v.selectedKernel(), QString("conv"));
    // Far from every dot: nothing.
    QTest::mouseClick(v.plot(), Qt::LeftButton, Qt::NoModifier, QPoint(5, 5));
    QCOMPARE(selected.count(), 1);
    // The slot highlights without emitting.
    v.setSelectedKernel("relu");
    QCOMPARE(v.selectedKernel(), QString("relu"));
    QCOMPARE(selected.count(), 1);
}

void RooflineViewTest::exportsPngSvgPdf() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    RooflineView v;
    v.setThreads(2);
    v.setProfile(profile());
    v.addPoints({conv(), relu()});  // export drains the queue itself
    const QString png = dir.filePath("r.png"), svg = dir.filePath("r.svg"), pdf = dir.filePath("r.pdf");
    QString error;
    QVERIFY2(v.exportTo(png, 800, 500, &error), qPrintable(error));
    QImage image(png);
    QCOMPARE(image.size(), QSize(800, 500));
    QVERIFY2(v.exportTo(svg, 0, 0, &error), qPrintable(error));
    QFile s(svg);
    QVERIFY(s.open(QIODevice::ReadOnly));
    const QByteArray svgText = s.readAll();
    QVERIFY(svgText.contains("<svg"));
    QVERIFY(svgText.contains("1000 GB/s"));  // the roof labels are text in the SVG
    QVERIFY2(v.exportTo(pdf, 0, 0, &error), qPrintable(error));
    QFile p(pdf);
    QVERIFY(p.open(QIODevice::ReadOnly));
    QVERIFY(p.read(5) == "%PDF-");
    QVERIFY(p.size() > 1000);
    // A copy to look at: TESSERA_ROOFLINE_SHOT=/path/chart.png.
    if (qEnvironmentVariableIsSet("TESSERA_ROOFLINE_SHOT"))
        QVERIFY(v.exportTo(qEnvironmentVariable("TESSERA_ROOFLINE_SHOT"), 900, 560));
    QVERIFY(!v.exportTo(dir.filePath("r.bmp"), 0, 0, &error));
    QVERIFY(error.contains(".bmp"));
}

void RooflineViewTest::legendMovesOffTheDots() {
    // No roofs, so nothing keeps kernels out of the top left corner where the legend starts. Nine
    // op types make a three-row legend; the kernel of least intensity and most GFLOP/s (it sets
    // both ranges) sits right under it. The legend moves to the first free corner (top right: the
    // other extreme kernel is bottom right) and covers no dot there.
    RooflineView v;
    v.resize(800, 600);
    v.setProfile(std::nullopt);
    auto kernel = [](const std::string& name, const std::string& op, double ai, double gflops) {
        KernelSample s = conv();
        s.name = name;
        s.opType = op;
        s.ops = {name};
        s.issuedBytes = s.flops / ai;
        s.seconds = s.flops / (gflops * 1e9);
        return s;
    };
    std::vector<KernelSample> samples = {kernel("top_left", "Conv", 0.01, 2000), kernel("bottom_right", "Gemm", 100, 0.5)};
    const char* ops[] = {"Add", "Mul", "Relu", "Clip", "Softmax", "MatMul", "Sigmoid"};
    for (int i = 0; i < 7; ++i)
        samples.push_back(kernel(std::string("mid") + std::to_string(i), ops[i], 1.0 + 0.2 * i, 50));
    v.addPoints(samples);
    v.show();
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    v.flush();
    v.plot()->replot();
    QTRY_COMPARE(v.plot()->axisRect()->insetLayout()->insetAlignment(0), Qt::AlignTop | Qt::AlignRight);
    v.plot()->replot();
    const QRectF legend = v.plot()->legend->outerRect();
    QVERIFY(legend.height() > 40);  // three rows
    for (const KernelSample& s : samples) {
        const QPointF p(v.plot()->xAxis->coordToPixel(s.flops / s.issuedBytes),
                        v.plot()->yAxis->coordToPixel(s.flops / s.seconds / 1e9));
        QVERIFY2(!legend.contains(p), s.name.c_str());
    }
}

void RooflineViewTest::legendListsOnlyKeysWithDots() {
    RooflineView v;
    v.setThreads(2);
    v.setProfile(profile());
    v.addPoints({flatten(), conv(), relu(), dwpw()});
    v.flush();
    // Flatten has 0 FLOPs, so no dot and no entry; fused kernels go by their kind.
    QVERIFY(v.dotPositions("flatten").empty());
    QCOMPARE(v.colourKey("flatten"), QString("op Flatten"));
    QCOMPARE(v.colourKey("dw_pw"), QString("fused dw-pw"));
    QCOMPARE(v.legendEntries(), QStringList({"Conv", "fused", "fused dw-pw"}));
    // A second dw-pw kernel adds no entry.
    KernelSample second = dwpw();
    second.name = "dw_pw_2";
    v.addPoints({second});
    v.flush();
    QCOMPARE(v.legendEntries(), QStringList({"Conv", "fused", "fused dw-pw"}));
    // Only Flatten: no legend at all.
    v.clearPoints();
    v.addPoints({flatten()});
    v.flush();
    QVERIFY(v.legendEntries().isEmpty());
    QVERIFY(!v.plot()->legend->visible());

    // The energy chart: only kernels with energy have dots, so only their keys.
    EnergyView e;
    e.addPoints({noEnergy("pool"), reluEnergy(), KernelEnergy{flatten(), 1e-3, 10}});
    e.flush();
    QCOMPARE(e.legendEntries(), QStringList({"fused"}));
    // Colours follow the order of arrival in both charts: conv's key came first in each.
    QCOMPARE(e.colourKey("pool"), QString("op Conv"));
}

void RooflineViewTest::hierarchicalDotsCarryTheirLevel() {
    RooflineView v;
    v.setThreads(2);
    v.setProfile(profile());
    v.addPoints({conv(), relu()});
    v.flush();
    // CARM: one disc, no level.
    auto dots = v.plottedDots("conv");
    QCOMPARE(dots.size(), std::size_t(1));
    QVERIFY(dots[0].level.isEmpty());
    QCOMPARE(dots[0].shape, QCPScatterStyle::ssDisc);
    QCOMPARE(v.legendEntries(), QStringList({"Conv", "fused"}));

    v.setMode(RooflineMode::Hierarchical);
    dots = v.plottedDots("conv");
    QCOMPARE(dots.size(), std::size_t(2));
    QCOMPARE(dots[0].level, QString("L1"));
    QCOMPARE(dots[1].level, QString("DRAM"));
    QVERIFY(near(dots[0].at.x(), 4.0) && near(dots[1].at.x(), 40.0));
    QCOMPARE(dots[0].shape, QCPScatterStyle::ssDisc);
    QCOMPARE(dots[1].shape, QCPScatterStyle::ssTriangleInverted);
    QCOMPARE(v.plottedDots("relu")[1].level, QString("DRAM"));
    // The legend names the markers after the colours, levels from the core outwards.
    QCOMPARE(v.legendEntries(), QStringList({"Conv", "fused", "L1 level", "DRAM level"}));
    QVERIFY(v.tooltipText("conv").contains(QString("markers: \u25cf L1, \u25bc DRAM")));
    // A CUDA kernel's levels: shared square, L2 triangle, HBM inverted triangle.
    KernelSample k = conv();
    k.name = "gemm";
    k.levelBytes = {{"shared", 1e9}, {"L2", 5e8}, {"HBM", 5e7}};
    v.addPoints({k});
    v.flush();
    dots = v.plottedDots("gemm");
    QCOMPARE(dots.size(), std::size_t(3));
    QCOMPARE(dots[0].shape, QCPScatterStyle::ssSquare);
    QCOMPARE(dots[1].shape, QCPScatterStyle::ssTriangle);
    QCOMPARE(dots[2].shape, QCPScatterStyle::ssTriangleInverted);
    QCOMPARE(v.legendEntries(), QStringList({"Conv", "fused", "L1 level", "shared level", "L2 level", "DRAM level", "HBM level"}));
    // Selecting keeps the markers (bigger, outlined).
    v.setSelectedKernel("gemm");
    QCOMPARE(v.plottedDots("gemm")[1].shape, QCPScatterStyle::ssTriangle);

    // The energy chart marks levels the same way.
    EnergyView e;
    e.setMode(RooflineMode::Hierarchical);
    e.addPoints({convEnergy()});
    e.flush();
    const auto ed = e.plottedDots("conv");
    QCOMPARE(ed.size(), std::size_t(2));
    QCOMPARE(ed[0].level, QString("L1"));
    QCOMPARE(ed[1].shape, QCPScatterStyle::ssTriangleInverted);
    QCOMPARE(e.legendEntries(), QStringList({"Conv", "L1 level", "DRAM level"}));
}

void RooflineViewTest::precisionBoxListsTheProfilesPrecisions() {
    RooflineView v;
    auto* box = v.findChild<QComboBox*>("rooflinePrecision");
    QVERIFY(box);
    // No profile: nothing to choose.
    QVERIFY(v.precisions().isEmpty());
    QVERIFY(box->isHidden());
    // A CPU profile of fp32 only.
    v.setThreads(2);
    v.setProfile(profile());
    QCOMPARE(v.precisions(), QStringList({"fp32"}));
    QVERIFY(!box->isHidden());
    // A GPU profile: widest first, the tensor-core precisions included.
    QSignalSpy changed(&v, &RooflineView::precisionChanged);
    v.setThreads(1);
    v.setProfile(gpuProfile());
    QCOMPARE(v.precisions(), QStringList({"fp64", "fp32", "tf32", "bf16", "fp16"}));
    QCOMPARE(v.precision(), QString("fp32"));  // the default
    QCOMPARE(box->currentText(), QString("FP32"));
    QCOMPARE(changed.count(), 0);
    auto flat = [&] {
        QStringList out;
        for (const auto& l : v.roofLines())
            if (!l.bandwidth) out << l.label;
        return out;
    };
    QCOMPARE(flat(), QStringList({"FP32 FMA 60000 GFLOP/s"}));
    // The box switches the flat roofs to the tensor-core peak and says so.
    box->setCurrentIndex(box->findData("fp16"));
    QCOMPARE(v.precision(), QString("fp16"));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).toString(), QString("fp16"));
    QCOMPARE(flat(), QStringList({"FP16 tensor 900000 GFLOP/s"}));
    // setPrecision from outside moves the box without emitting.
    v.setPrecision("tf32");
    QCOMPARE(box->currentText(), QString("TF32"));
    QCOMPARE(changed.count(), 1);
    // Back to a profile without tf32: fp32 again, announced.
    v.setProfile(profile());
    QCOMPARE(v.precision(), QString("fp32"));
    QCOMPARE(changed.count(), 2);
    v.setProfile(std::nullopt);
    QVERIFY(v.precisions().isEmpty());
    QVERIFY(box->isHidden());
}

void RooflineViewTest::roofLabelsNeverOverlap() {
    // The roofs of a crowded CPU profile (L1 to DRAM within 1.6 decades, ADD and MUL 5 % apart)
    // in a small dock: the labels must not overlap each other, whatever they have to give up.
    MachineProfile p = profile();
    p.roofs = {tessera::perf::bandwidthRoof("L1 triad bandwidth", "L1", 1006.0, 2, "triad 45 KiB"),
               tessera::perf::bandwidthRoof("L2 copy bandwidth", "L2", 518.0, 2, "copy 1022 KiB"),
               tessera::perf::bandwidthRoof("L3 copy bandwidth", "L3", 191.0, 2, "copy 17 MiB"),
               tessera::perf::bandwidthRoof("DRAM copy bandwidth", "DRAM", 27.7, 2, "copy 256 MiB"),
               tessera::perf::computeRoof("FP32 FMA peak", "fp32", 550.0, 2, "fma avx512"),
               tessera::perf::computeRoof("FP32 ADD peak", "fp32", 64.6, 2, "add avx512"),
               tessera::perf::computeRoof("FP32 MUL peak", "fp32", 61.3, 2, "mul avx512")};
    for (const QSize size : {QSize(560, 360), QSize(900, 560), QSize(420, 300)}) {
        RooflineView v;
        v.resize(size);
        v.setThreads(2);
        v.setProfile(p);
        KernelSample slow = conv();
        slow.name = "add";
        slow.opType = "Add";
        slow.seconds = 1e3;  // 0.002 GFLOP/s: stretches the y axis over 8 decades
        v.addPoints({conv(), relu(), slow});
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        v.flush();
        v.plot()->replot();
        const auto labels = v.roofLabels();
        QCOMPARE(labels.size(), std::size_t(7));
        int shown = 0;
        for (std::size_t i = 0; i < labels.size(); ++i) {
            if (labels[i].text.isEmpty()) continue;
            ++shown;
            QVERIFY(labels[i].full.startsWith(labels[i].text));  // the full label or its start
            for (std::size_t j = i + 1; j < labels.size(); ++j)
                if (!labels[j].text.isEmpty())
                    QVERIFY2(!labels[i].box.intersects(labels[j].box),
                             qPrintable(QString("%1 x %2 at %3x%4").arg(labels[i].text, labels[j].text)
                                            .arg(size.width()).arg(size.height())));
        }
        QVERIFY2(shown >= 5, qPrintable(QString("%1 labels shown at %2x%3").arg(shown).arg(size.width()).arg(size.height())));
        // The peak keeps its full label.
        QCOMPARE(labels[4].text, QString("FP32 FMA 550 GFLOP/s"));
    }
}

void RooflineViewTest::energyDotsAndBestLine() {
    EnergyView v;
    v.addPoints({convEnergy(), reluEnergy(), noEnergy("pool")});
    QCOMPARE(v.pendingCount(), 3);
    v.flush();
    QCOMPARE(v.kernelNames(), QStringList({"conv", "relu", "pool"}));
    QVERIFY(v.placeholderText().isEmpty());
    QVERIFY(v.plot()->isVisibleTo(&v));
    QVERIFY(v.plot()->xAxis->scaleType() == QCPAxis::stLogarithmic);
    QVERIFY(v.plot()->yAxis->scaleType() == QCPAxis::stLogarithmic);
    QVERIFY(v.title().startsWith("Energy efficiency (CARM)\nGFLOP/J = FLOPs / 1e9 / joules per kernel run (NVML)\n"
                                 "CARM: AI = FLOPs / all bytes issued by loads and stores\n2 of 3 kernels with energy"));

    // y = FLOPs / 1e9 / J, x = AI of the mode.
    auto c = v.dotPositions("conv");
    QCOMPARE(c.size(), std::size_t(1));
    QVERIFY(near(c[0].x(), 5.0) && near(c[0].y(), 4.0));
    auto r = v.dotPositions("relu");
    QCOMPARE(r.size(), std::size_t(1));
    QVERIFY(near(r[0].x(), 0.125) && near(r[0].y(), 0.1));
    QVERIFY(v.dotPositions("pool").empty());  // no energy, no dot
    QVERIFY(near(tessera::views::gflopsPerJoule(convEnergy(0.25)), 8.0));
    QCOMPARE(tessera::views::gflopsPerJoule(noEnergy("x")), 0.0);
    // Every dot inside the axes.
    for (const QPointF& p : {c[0], r[0]}) {
        QVERIFY(v.plot()->xAxis->range().contains(p.x()));
        QVERIFY(v.plot()->yAxis->range().contains(p.y()));
    }

    QVERIFY(v.bestLine().has_value());
    QVERIFY(near(*v.bestLine(), 4.0));
    QCOMPARE(v.bestLabel(), QString("best measured 4 GFLOP/J (conv)"));
    QVERIFY(v.energyRoof().empty());  // no power figure

    // The mode moves x only.
    QSignalSpy modes(&v, &EnergyView::modeChanged);
    v.setMode(RooflineMode::Dram);
    QCOMPARE(modes.count(), 1);
    QVERIFY(v.title().startsWith("Energy efficiency (DRAM)"));
    c = v.dotPositions("conv");
    QVERIFY(near(c[0].x(), 40.0) && near(c[0].y(), 4.0));
    v.setMode(RooflineMode::Hierarchical);
    c = v.dotPositions("conv");
    QCOMPARE(c.size(), std::size_t(2));
    QVERIFY(near(c[0].x(), 4.0) && near(c[1].x(), 40.0) && near(c[0].y(), 4.0) && near(c[1].y(), 4.0));
    auto* box = v.findChild<QComboBox*>("energyMode");
    QVERIFY(box);
    box->setCurrentIndex(0);
    QCOMPARE(v.mode(), RooflineMode::Carm);
    QCOMPARE(modes.count(), 3);

    // A better kernel arrives: the line follows it.
    v.addPoints({convEnergy(0.1)});
    v.flush();
    QVERIFY(near(v.dotPositions("conv")[0].y(), 20.0));
    QVERIFY(near(*v.bestLine(), 20.0));
}

void RooflineViewTest::energyPlaceholderWithoutEnergy() {
    EnergyView v;
    QCOMPARE(v.placeholderText(), QString("Energy needs an NVIDIA GPU with NVML (run on a CUDA target)"));
    v.addPoints({noEnergy("a"), noEnergy("b")});  // a CPU run: every joules -1
    v.flush();
    QCOMPARE(v.kernelNames(), QStringList({"a", "b"}));
    QCOMPARE(v.placeholderText(), QString("Energy needs an NVIDIA GPU with NVML (run on a CUDA target)"));
    QVERIFY(!v.plot()->isVisibleTo(&v));
    QVERIFY(v.dotPositions("a").empty());
    QVERIFY(!v.bestLine().has_value());
    QVERIFY(v.title().contains("0 of 2 kernels with energy"));
    QVERIFY(v.tooltipText("a").isEmpty());
    v.addPoints({convEnergy()});
    v.flush();
    QVERIFY(v.placeholderText().isEmpty());
    QVERIFY(v.plot()->isVisibleTo(&v));
    v.clearPoints();
    v.flush();
    QVERIFY(v.kernelNames().isEmpty());
    QVERIFY(!v.placeholderText().isEmpty());
}

void RooflineViewTest::energyTooltip() {
    EnergyView v;
    v.addPoints({convEnergy(), reluEnergy()});
    v.flush();
    QCOMPARE(v.tooltipText("conv"), QString("conv\nops: conv\nJ/run: 500 mJ\npower: 50 W\nefficiency: 4 GFLOP/J\n"
                                            "AI: 5 FLOP/byte (CARM)\nperformance: 200 GFLOP/s"));
    QCOMPARE(v.tooltipText("relu"), QString("relu\nops: relu, add\nJ/run: 10 mJ\npower: 100 W\n"
                                            "efficiency: 0.1 GFLOP/J\nAI: 0.125 FLOP/byte (CARM)\n"
                                            "performance: 10 GFLOP/s"));
    // Micro-joules for short kernels.
    v.addPoints({KernelEnergy{relu(), 4.5e-5, 0.45}});
    v.flush();
    QVERIFY(v.tooltipText("relu").contains(QString::fromUtf8("J/run: 45 \u00b5J\npower: 0.45 W\nefficiency: 22.2 GFLOP/J")));
    v.addPoints({convEnergy(2.5)});
    v.setMode(RooflineMode::Hierarchical);
    v.flush();
    QCOMPARE(v.tooltipText("conv"), QString("conv\nops: conv\nJ/run: 2.5 J\npower: 250 W\nefficiency: 0.8 GFLOP/J\n"
                                            "AI: L1 4, DRAM 40 FLOP/byte (hierarchical)\n"
                                            "markers: \u25cf L1, \u25bc DRAM\nperformance: 200 GFLOP/s"));
    QVERIFY(v.tooltipText("nope").isEmpty());
}

void RooflineViewTest::energyRoofNeedsAPowerFigure() {
    EnergyView v;
    v.setThreads(2);
    v.setProfile(profile());
    v.addPoints({convEnergy(), reluEnergy()});
    v.flush();
    QVERIFY(v.energyRoof().empty());  // roofs but no power figure
    v.setPowerWatts(250.0);
    QVERIFY(v.title().contains("energy roof = roofline bound / 250 W"));
    // CARM: min(539, 1000 x AI) / 250: slanted up to the ridge at 0.539, then flat at 2.156.
    auto roof = v.energyRoof();
    const double xlo = v.plot()->xAxis->range().lower, xhi = v.plot()->xAxis->range().upper;
    QCOMPARE(roof.size(), std::size_t(3));
    QVERIFY(near(roof[0].x(), xlo) && near(roof[0].y(), 1000.0 * xlo / 250.0));
    QVERIFY(near(roof[1].x(), 0.539) && near(roof[1].y(), 539.0 / 250.0));
    QVERIFY(near(roof[2].x(), xhi) && near(roof[2].y(), 539.0 / 250.0));
    // DRAM mode: the DRAM roof is the only bandwidth roof; ridge at 539 / 80.
    v.setMode(RooflineMode::Dram);
    roof = v.energyRoof();
    QCOMPARE(roof.size(), std::size_t(3));
    QVERIFY(near(roof[1].x(), 539.0 / 80.0) && near(roof[1].y(), 539.0 / 250.0));
    // Without a profile, or with a power of 0: none.
    v.setPowerWatts(0.0);
    QVERIFY(v.energyRoof().empty());
    v.setPowerWatts(250.0);
    v.setProfile(std::nullopt);
    QVERIFY(v.energyRoof().empty());
}

void RooflineViewTest::energyClickSelectsAndLiveUpdates() {
    EnergyView v;
    v.resize(800, 600);
    v.addPoints({convEnergy(), reluEnergy()});
    v.show();
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    v.flush();
    v.plot()->replot();  // lay out at the shown size
    QSignalSpy selected(&v, &EnergyView::kernelSelected);
    const QPoint pixel(qRound(v.plot()->xAxis->coordToPixel(0.125)), qRound(v.plot()->yAxis->coordToPixel(0.1)));
    QTest::mouseClick(v.plot(), Qt::LeftButton, Qt::NoModifier, pixel);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.at(0).at(0).toString(), QString("relu"));
    QCOMPARE(v.selectedKernel(), QString("relu"));
    QTest::mouseClick(v.plot(), Qt::LeftButton, Qt::NoModifier, QPoint(5, 5));
    QCOMPARE(selected.count(), 1);
    v.setSelectedKernel("conv");
    QCOMPARE(v.selectedKernel(), QString("conv"));
    QCOMPARE(selected.count(), 1);

    // Live: many queued updates, at most a few replots.
    const int before = v.replotCount();
    for (int i = 0; i < 50; ++i) v.addPoints({convEnergy(0.5 + 0.01 * i)});
    QCOMPARE(v.replotCount(), before);
    QTRY_COMPARE_WITH_TIMEOUT(v.pendingCount(), 0, 2000);
    QTest::qWait(120);
    const int replots = v.replotCount() - before;
    QVERIFY2(replots >= 1 && replots <= 3, qPrintable(QString("replots: %1").arg(replots)));
    QVERIFY(near(v.dotPositions("conv")[0].y(), 2.0 / (0.5 + 0.01 * 49)));

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QString error;
    QVERIFY2(v.exportTo(dir.filePath("e.png"), 700, 450, &error), qPrintable(error));
    QCOMPARE(QImage(dir.filePath("e.png")).size(), QSize(700, 450));
    QVERIFY2(v.exportTo(dir.filePath("e.svg"), 0, 0, &error), qPrintable(error));
    QFile svg(dir.filePath("e.svg"));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    QVERIFY(svg.readAll().contains("GFLOP/J"));
    QVERIFY(!v.exportTo(dir.filePath("e.bmp"), 0, 0, &error));
}

void RooflineViewTest::energyPairsSamplesWithTheRun() {
    tessera::pipeline::RunReport report;
    tessera::pipeline::KernelReport a, b;
    a.name = "relu";
    a.energyJoules = 2e-3;
    a.avgPowerWatts = 150;
    b.name = "conv";  // a CPU-like kernel: no energy
    report.kernels = {a, b};
    const auto out = tessera::views::kernelEnergies({conv(), relu(), noEnergy("gone").sample}, report);
    QCOMPARE(out.size(), std::size_t(3));
    QCOMPARE(out[0].sample.name, std::string("conv"));
    QCOMPARE(out[0].joules, -1.0);
    QCOMPARE(out[1].sample.name, std::string("relu"));
    QCOMPARE(out[1].joules, 2e-3);
    QCOMPARE(out[1].watts, 150.0);
    QCOMPARE(out[2].joules, -1.0);  // not in the report
    QVERIFY(near(tessera::views::gflopsPerJoule(out[1]), 0.5));  // 1e6 FLOPs / 1e9 / 2 mJ
}

QTEST_MAIN(RooflineViewTest)
#include "roofline_view_test.moc"
