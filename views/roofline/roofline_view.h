#pragma once
/// @file
/// RooflineView: a log-log roofline chart (QCustomPlot) of a machine's measured roofs and the
/// kernels of a run (issue 7, item 4; semantics §2.4).
///
/// What it draws
/// - Axes: arithmetic intensity in FLOP/byte (x) and performance in GFLOP/s (y), both logarithmic
///   with decade ticks labelled 0.01, 0.1, 1, 10, 100, 1k, 10k, ... and unlabelled sub-ticks.
/// - Roofs (perf::chartRoofs of the profile for setThreads(), filtered by perf::roofsForMode):
///   each bandwidth roof is a slanted line y = B x from the left edge to its ridge with the
///   highest compute roof; each compute roof a flat line from its ridge with the fastest bandwidth
///   roof to the right edge. Each line carries its label (perf::roofLabel, e.g. "DRAM 80 GB/s",
///   "FP32 FMA 539 GFLOP/s"; compute ceilings within 3 % of each other share one line, e.g.
///   "FP32 ADD/MUL 265 GFLOP/s"; ceilings under the peak are dashed); ridge points (each bandwidth
///   roof x the highest compute roof) are marked with a diamond.
/// - Kernel dots: the y is the kernel's GFLOP/s, the x its AI in the selected mode (one dot in
///   CARM and DRAM mode, one dot per level joined by a line in hierarchical mode). Colour: the
///   kernel's fusion group when it has one, else its op type (a legend lists the colours). When a
///   kernel comes again with a different position (another schedule, another run), its previous
///   positions stay as a faint trail.
/// - The title names the chart ("Cache-aware roofline (CARM)", ...); the subtitle the AI
///   definition of the mode (perf::modeDefinition), then the profile (or that none is measured),
///   the thread count and the number of kernels. The legend sits top left, above every slanted
///   roof, where no kernel can be.
/// - No roofs (setProfile(nullopt)): a banner above the chart says how to measure them; dots are
///   still plotted.
///
/// Live updates: addPoints() only queues; a 30 Hz timer drains the queue, so that at most one
/// replot happens per tick however many samples arrive (never one replot per sample). flush()
/// drains at once (exports call it).
///
/// Interaction: hovering a dot shows tooltipText(); clicking one selects it (kernelSelected());
/// setSelectedKernel() highlights a kernel without emitting. The mode combo box and setMode()
/// switch the chart (modeChanged()).
///
/// The view never starts jobs: the main window (or the report command) feeds it samples.
/// Thread rules: UI thread only (a QWidget).

#include <map>
#include <optional>
#include <vector>

#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include "core/perf/kernel_points.h"
#include "core/perf/machine_profile.h"

class QComboBox;
class QCustomPlot;
class QCPCurve;
class QCPGraph;
class QCPItemText;
class QCPTextElement;
class QLabel;
class QTimer;

namespace tessera::views {

class RooflineView : public QWidget {
    Q_OBJECT
public:
    /// One drawn roof line, in data coordinates (for tests and exports).
    struct RoofLine {
        QString label;     ///< perf::roofLabel
        QPointF start;     ///< (AI, GFLOP/s) of the left end
        QPointF end;       ///< of the right end
        bool bandwidth = true;
    };

    explicit RooflineView(QWidget* parent = nullptr);
    ~RooflineView() override;

    /// The machine's measured roofs; nullopt = none measured (the banner shows `missingHint`, by
    /// default the CPU measuring command). Redraws on the next tick.
    void setProfile(std::optional<perf::MachineProfile> profile, const QString& missingHint = {});
    /// Thread count the kernels ran with: roofs measured with it are drawn (perf::chartRoofs).
    void setThreads(int threads);
    /// Compute precision of the flat roofs (default "fp32").
    void setPrecision(const QString& precision);
    void setMode(perf::RooflineMode mode);
    perf::RooflineMode mode() const { return m_mode; }

    /// Queues samples; they are drawn on the next timer tick (30 Hz). A sample whose name is
    /// already shown replaces it, and its previous position joins the kernel's trail when it moved.
    void addPoints(const std::vector<perf::KernelSample>& samples);
    /// Removes every kernel and trail (on the next tick).
    void clearPoints();
    /// Drains the queue and redraws now (one replot).
    void flush();

    /// Writes the chart to `path`; the format is the extension: .png, .svg or .pdf. width/height
    /// 0 = the widget's plot size, or 1000 x 650 when it has never been laid out. False with
    /// `error` set when the extension is unknown or writing failed.
    bool exportTo(const QString& path, int width = 0, int height = 0, QString* error = nullptr);

    /// Tooltip of a kernel as shown on hover, e.g.
    /// "conv\nops: conv\nAI: 5 FLOP/byte (CARM)\nperformance: 200 GFLOP/s\nbound: 539 GFLOP/s\n
    /// % of bound: 37.1 %\nbinding roof: FP32 FMA peak"; empty for an unknown kernel. Without
    /// roofs (or when the analysis fails) the bound lines say why instead.
    QString tooltipText(const QString& kernel) const;

    // Read-only state, for tests and the main window.
    QCustomPlot* plot() const { return m_plot; }
    QString title() const;           ///< the title line, then the subtitle lines ('\n' between)
    QString bannerText() const;      ///< empty when roofs are measured
    std::vector<RoofLine> roofLines() const;
    std::vector<QPointF> ridgePoints() const;
    /// Current dot positions (AI, GFLOP/s) of a kernel as plotted; empty when unknown.
    std::vector<QPointF> dotPositions(const QString& kernel) const;
    /// Previous positions of a kernel (oldest first), as plotted in its trail.
    std::vector<QPointF> trailPositions(const QString& kernel) const;
    QString selectedKernel() const { return m_selected; }
    QStringList kernelNames() const;
    int replotCount() const { return m_replots; }
    int pendingCount() const { return static_cast<int>(m_pending.size()); }
    /// The colour key of a kernel: "group <name>" or "op <type>".
    QString colourKey(const QString& kernel) const;

public slots:
    /// Highlights `name` (empty clears); does not emit kernelSelected.
    void setSelectedKernel(const QString& name);

signals:
    /// The user clicked a kernel's dot.
    void kernelSelected(const QString& name);
    void modeChanged(perf::RooflineMode mode);
    /// After every replot of the chart.
    void replotted();

private:
    struct Kernel {
        perf::KernelSample sample;
        std::vector<perf::KernelSample> history;  ///< earlier samples that sat elsewhere
        QCPCurve* curve = nullptr;
        QCPCurve* trail = nullptr;
    };

    void drain();
    void rebuild();
    void rebuildRoofs();
    void rebuildDots();
    void updateRanges();
    void placeLabels();
    std::vector<QPointF> positionsOf(const perf::KernelSample& s) const;
    QColor colourFor(const QString& key);
    QString hitTest(const QPoint& pixel, double radius = 8.0) const;
    std::vector<perf::Roof> drawnRoofs() const;

    QCustomPlot* m_plot = nullptr;
    QComboBox* m_modeBox = nullptr;
    QLabel* m_banner = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPTextElement* m_subtitle = nullptr;
    QTimer* m_timer = nullptr;

    std::optional<perf::MachineProfile> m_profile;
    QString m_missingHint;
    int m_threads = 0;
    QString m_precision = "fp32";
    perf::RooflineMode m_mode = perf::RooflineMode::Carm;
    std::vector<perf::Roof> m_roofs;  ///< perf::chartRoofs of the profile

    std::vector<perf::KernelSample> m_pending;
    bool m_clearPending = false;
    std::vector<Kernel> m_kernels;  ///< in order of first arrival
    std::map<QString, QColor> m_colours;
    QString m_selected;

    std::vector<RoofLine> m_roofLines;
    std::vector<QCPGraph*> m_roofGraphs;  ///< one per m_roofLines entry
    std::vector<QPointF> m_ridges;
    struct RoofLabel {
        QCPItemText* item;
        QPointF anchor;          ///< initial position (data coordinates)
        bool slanted;
        double value = 0;        ///< slanted: the roof's GB/s (the line is y = value * x); flat: GFLOP/s
        double xLimit = 0;       ///< slanted: where the line ends (its ridge); flat: where it starts
    };
    std::vector<RoofLabel> m_roofLabels;
    std::vector<QCPGraph*> m_legendGraphs;
    int m_replots = 0;
};

}  // namespace tessera::views
