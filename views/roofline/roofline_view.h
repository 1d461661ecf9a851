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
/// - Roof labels are placed after every layout (their angle follows the axis rect's aspect): each
///   slides along its line to the first place, from the left (slanted) or the right (flat), where
///   it overlaps no other label and no legend, preferring places that cover no kernel dot and
///   cross no other roof line; a white box behind the text keeps it readable where it must
///   cross a line. When the full label fits nowhere, the value is dropped ("L2" instead of
///   "L2 518 GB/s"); when even that does not fit, the label is hidden (roofLabels() and
///   roofLines() keep the full text). Labels never overlap each other.
/// - Kernel dots: the y is the kernel's GFLOP/s, the x its AI in the selected mode (one dot in
///   CARM and DRAM mode; in hierarchical mode one dot per memory level, joined by a line, each
///   level with its own marker: L1 disc, shared square, L2 triangle, L3 diamond, DRAM/HBM
///   inverted triangle; the legend lists the markers as "L1 level", "DRAM level", the tooltip
///   names them and, on hover, the level of the dot under the cursor). When a kernel comes again
///   with a different position (another schedule, another run), its previous positions stay as
///   a faint trail.
/// - Colours (shared with EnergyView, views/roofline/plot_common.h): a fused kernel is coloured by
///   its fusion kind, "fused dw-pw", "fused pw-dw", "fused pw-pw", "fused prologue-epilogue" (a
///   plan of MobileNetV2 has dozens of fused kernels: one colour each would flood the legend, and
///   the kind is what tells their shape of fusion apart), "fused" when the kind is unknown; a
///   kernel of one node by its op type ("Conv", "Clip"). The legend, top left above every
///   slanted roof where no kernel can be, lists only the keys that have at least one dot on the
///   chart (a Flatten of 0 FLOPs has none, so no entry).
/// - The title names the chart ("Cache-aware roofline (CARM)", ...); the subtitle the AI
///   definition of the mode (perf::modeDefinition), then the profile (or that none is measured),
///   the thread count and the number of kernels.
/// - Precision: a box beside Intensity lists the precisions of the profile's compute roofs
///   (roofline_detail::profilePrecisions: fp64, fp32, tf32, bf16, fp16 ...; CUDA profiles have
///   tensor-core roofs in fp16/bf16/tf32); the flat roofs drawn are those of the chosen one
///   (default fp32; when a new profile lacks the chosen precision, fp32, else its first). Hidden
///   without a profile. precisionChanged() follows the box.
/// - A pinned run (setPinnedPoints, Run > Pin Run in the window): each of its kernels is a hollow
///   circle in its colour at its position in the pinned run, with a thin line to the current dot of
///   the same kernel (matched by name, else by the same set of nodes; hierarchical mode: level by
///   level). Pinned dots are not selectable; while any is drawn the legend ends with one entry,
///   "pinned run", a hollow grey circle.
/// - No roofs (setProfile(nullopt)): a banner above the chart says how to measure them; dots are
///   still plotted.
///
/// Live updates: addPoints() only queues; a 30 Hz timer drains the queue, so that at most one
/// replot happens per tick however many samples arrive (never one replot per sample). flush()
/// drains at once (exports call it).
///
/// Interaction: hovering a dot shows tooltipText(); clicking one selects it (kernelSelected());
/// setSelectedKernel() highlights a kernel without emitting. The mode combo box and setMode()
/// switch the chart (modeChanged()). Shared with EnergyView through their base KernelChart.
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

#include "views/roofline/plot_common.h"

class QComboBox;
class QCPCurve;
class QCPGraph;
class QCPItemText;
class QLabel;
class QPushButton;

namespace tessera::views {

class RooflineView : public KernelChart {
    Q_OBJECT
public:
    /// One drawn roof line, in data coordinates (for tests and exports).
    struct RoofLine {
        QString label;     ///< perf::roofLabel
        QPointF start;     ///< (AI, GFLOP/s) of the left end
        QPointF end;       ///< of the right end
        bool bandwidth = true;
    };
    /// A roof label as laid out, in pixels of the plot: its text as shown ("" when hidden), the
    /// full label and the four corners of its (rotated) box.
    struct PlacedLabel {
        QString text;
        QString full;
        QPolygonF box;
    };

    explicit RooflineView(QWidget* parent = nullptr);
    ~RooflineView() override;

    /// The machine's roofs; nullopt = none measured (the banner shows `missingHint`, by
    /// default the CPU measuring command). Fills the precision box. Redraws on the next tick.
    void setProfile(std::optional<perf::MachineProfile> profile, const QString& missingHint = {});

    /// Queues samples; they are drawn on the next timer tick (30 Hz). A sample whose name is
    /// already shown replaces it, and its previous position joins the kernel's trail when it moved.
    void addPoints(const std::vector<perf::KernelSample>& samples);

    /// The pinned run's kernels (see the file comment); empty removes them. Redraws at once.
    void setPinnedPoints(std::vector<perf::KernelSample> pinned);
    /// Positions of a pinned kernel's hollow marker(s); empty when unknown or not plotted.
    std::vector<QPointF> pinnedPositions(const QString& pinnedKernel) const;
    /// The current kernel a pinned kernel is linked to; empty when none matches.
    QString pinnedLink(const QString& pinnedKernel) const;

    /// Tooltip of a kernel as shown on hover, e.g.
    /// "conv\nops: conv\nAI: 5 FLOP/byte (CARM)\nperformance: 200 GFLOP/s\nbound: 539 GFLOP/s\n
    /// % of bound: 37.1 %\nbinding roof: FP32 FMA peak"; empty for an unknown kernel. Without
    /// roofs (or when the analysis fails) the bound lines say why instead. Hierarchical mode
    /// adds "markers: ● L1, ▼ DRAM" after the AI line.
    QString tooltipText(const QString& kernel) const override;
    int pendingCount() const override { return static_cast<int>(m_pending.size()); }

    // Read-only state, for tests and the main window (more in KernelChart).
    QString bannerText() const;      ///< empty when roofs are measured
    std::vector<RoofLine> roofLines() const;
    std::vector<QPointF> ridgePoints() const;
    /// Previous positions of a kernel (oldest first), as plotted in its trail.
    std::vector<QPointF> trailPositions(const QString& kernel) const;
    /// The precisions the precision box offers (empty and hidden without a profile).
    QStringList precisions() const;
    /// Roof labels as laid out by the last layout.
    std::vector<PlacedLabel> roofLabels() const;

    /// The banner's "Measure Roofs" button; shown with the default (CPU) hint only, since the
    /// GUI measures CPU roofs. For tests.
    QPushButton* measureButton() const { return m_measureButton; }

signals:
    /// The precision box changed the precision (not emitted by setPrecision).
    void precisionChanged(const QString& precision);
    /// The banner's "Measure Roofs" button was clicked: the owner measures this CPU's roofs (the
    /// view starts nothing itself).
    void measureRoofsRequested();

protected:
    bool hasPending() const override { return !m_pending.empty(); }
    void discardPending() override { m_pending.clear(); }
    void applyPending(bool clearFirst) override;
    void rebuild() override;
    std::vector<const perf::KernelSample*> samples() const override;

private:
    struct Kernel {
        perf::KernelSample sample;
        std::vector<perf::KernelSample> history;  ///< earlier samples that sat elsewhere
        QCPCurve* trail = nullptr;
    };

    void rebuildRoofs();
    void rebuildDots();
    void updateRanges();
    void placeLabels();
    void fillPrecisions();
    std::vector<QPointF> positionsOf(const perf::KernelSample& s) const;
    std::vector<perf::Roof> drawnRoofs() const;

    QComboBox* m_precisionBox = nullptr;
    QLabel* m_precisionLabel = nullptr;
    QLabel* m_banner = nullptr;
    QWidget* m_bannerRow = nullptr;  ///< the banner and its button
    QPushButton* m_measureButton = nullptr;

    QString m_missingHint;
    std::vector<perf::Roof> m_roofs;  ///< perf::chartRoofs of the profile

    std::vector<perf::KernelSample> m_pending;
    std::vector<Kernel> m_kernels;  ///< in order of first arrival

    std::vector<RoofLine> m_roofLines;
    std::vector<QCPGraph*> m_roofGraphs;  ///< one per m_roofLines entry
    std::vector<QPointF> m_ridges;
    struct RoofLabel {
        QCPItemText* item;
        QPointF anchor;          ///< initial position (data coordinates)
        bool slanted;
        double value = 0;        ///< slanted: the roof's GB/s (the line is y = value * x); flat: GFLOP/s
        double xLimit = 0;       ///< slanted: where the line ends (its ridge); flat: where it starts
        QString full, brief;     ///< the label, and the label without its value
        int line = -1;           ///< index into m_roofLines
    };
    std::vector<RoofLabel> m_roofLabels;
    std::vector<perf::KernelSample> m_pinned;
    /// Draws the pinned run's markers; true when at least one was drawn.
    bool rebuildPinned();
    const Kernel* pinnedMatch(const perf::KernelSample& pinned) const;
    std::vector<PlacedLabel> m_placed;
};

}  // namespace tessera::views
