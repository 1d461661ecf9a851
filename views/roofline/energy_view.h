#pragma once
/// @file
/// EnergyView: the energy-efficiency chart beside the performance roofline (issue 7, item 3): per
/// kernel, GFLOP/J against arithmetic intensity, both axes logarithmic (QCustomPlot).
///
/// What it draws
/// - Axes: arithmetic intensity in FLOP/byte (x), in the same chart mode as the roofline (CARM,
///   DRAM or hierarchical: perf::sampleDots), and energy efficiency in GFLOP/J (y), with decade
///   ticks like the roofline's.
/// - Kernel dots: y = KernelSample::flops / 1e9 / joules per run (gflopsPerJoule), x its AI in the
///   mode (one marker per level, joined by a line, in hierarchical mode). Colours: the fusion kind
///   of a fused kernel, else its op type (KernelChart's colour keys), assigned in order of arrival
///   like RooflineView, so that both charts of a run give a kernel the same colour. Kernels
///   without energy (joules <= 0) get no dot.
/// - A dashed horizontal line at the best measured efficiency, labelled with its value and kernel.
/// - An energy roof, only when a power figure is given (setPowerWatts) and the profile has roofs:
///   the roofline's attainable bound divided by that power, min(peak, B_max x AI) / P GFLOP/J
///   (B_max the fastest bandwidth roof the mode draws, peak the highest compute roof): the best
///   efficiency a kernel can reach if the device draws P watts whatever it runs. Machine profiles
///   carry no power figure yet, so the main window sets none.
/// - No kernel with energy (CPU runs, no NVML, no run yet): the plot is hidden and a placeholder
///   says "Energy needs an NVIDIA GPU with NVML (run on a CUDA target)".
///
/// Live updates, selection, legend, level markers and export are RooflineView's, from their
/// shared base KernelChart (views/roofline/plot_common.h): addPoints() queues, a 30 Hz timer
/// drains (at most one replot per tick); hover shows tooltipText(); a click selects
/// (kernelSelected()); setSelectedKernel() highlights without emitting; the mode combo box and
/// setMode() switch the mode (modeChanged()). The legend lists the colour keys of kernels with a
/// dot (with energy).
///
/// Thread rules: UI thread only (a QWidget); kernelEnergies and gflopsPerJoule are pure.

#include <optional>
#include <vector>

#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include "core/perf/kernel_points.h"
#include "core/perf/machine_profile.h"
#include "core/pipeline/run.h"
#include "views/roofline/plot_common.h"

class QLabel;

namespace tessera::views {

/// A kernel of a run with its energy.
struct KernelEnergy {
    perf::KernelSample sample;
    double joules = -1;  ///< energy of one run of the kernel, J; <= 0 = not measured
    double watts = -1;   ///< average power while it was timed, W; <= 0 = not measured
};

/// sample.flops / 1e9 / joules (GFLOP/J); 0 when joules <= 0 or flops <= 0.
double gflopsPerJoule(const KernelEnergy& kernel);

/// Pairs every sample with the energy its kernel reported in `report` (KernelReport::energyJoules
/// and avgPowerWatts, matched by kernel name); a sample whose kernel is not in the report keeps
/// -1. Output in the order of `samples`.
std::vector<KernelEnergy> kernelEnergies(const std::vector<perf::KernelSample>& samples,
                                         const pipeline::RunReport& report);

class EnergyView : public KernelChart {
    Q_OBJECT
public:
    /// The placeholder shown while no kernel has energy.
    static QString placeholderMessage();

    explicit EnergyView(QWidget* parent = nullptr);
    ~EnergyView() override;

    /// The machine's roofs, used only for the energy roof (with setPowerWatts). Redraws.
    /// setThreads and setPrecision (KernelChart) select the roofs as RooflineView's do.
    void setProfile(std::optional<perf::MachineProfile> profile);
    /// Power figure of the device in watts for the energy roof; nullopt (default) or <= 0 = none.
    void setPowerWatts(std::optional<double> watts);

    /// Queues kernels; drawn on the next timer tick (30 Hz). A kernel whose name is already known
    /// replaces it (no trail).
    void addPoints(const std::vector<KernelEnergy>& kernels);

    /// Writes the chart like KernelChart::exportTo. Without energy the placeholder is not part of
    /// the file (an empty chart).
    using KernelChart::exportTo;

    /// Hover text of a kernel with energy, e.g. "conv\nops: conv\nJ/run: 0.5 J\npower: 100 W\n
    /// efficiency: 4 GFLOP/J\nAI: 5 FLOP/byte (CARM)\nperformance: 200 GFLOP/s" (hierarchical:
    /// the AI line, then "markers: ● L1, ▼ DRAM"); empty for an unknown kernel or one without
    /// energy.
    QString tooltipText(const QString& kernel) const override;
    int pendingCount() const override { return static_cast<int>(m_pending.size()); }

    // Read-only state, for tests and the main window (more in KernelChart: dotPositions gives
    // (AI, GFLOP/J); kernels without energy have no dot).
    QString placeholderText() const;  ///< empty while the chart is shown
    /// y of the best-efficiency line as plotted (GFLOP/J), and its label; nullopt without energy.
    std::optional<double> bestLine() const;
    QString bestLabel() const;
    /// Vertices (AI, GFLOP/J) of the energy roof as plotted; empty when none is drawn.
    std::vector<QPointF> energyRoof() const;

protected:
    bool hasPending() const override { return !m_pending.empty(); }
    void discardPending() override { m_pending.clear(); }
    void applyPending(bool clearFirst) override;
    void rebuild() override;
    std::vector<const perf::KernelSample*> samples() const override;

private:
    std::vector<QPointF> positionsOf(const KernelEnergy& k) const;

    QLabel* m_placeholder = nullptr;
    std::optional<double> m_power;
    std::vector<KernelEnergy> m_pending;
    std::vector<KernelEnergy> m_kernels;  ///< in order of first arrival

    QCPGraph* m_bestGraph = nullptr;
    QString m_bestLabel;
    QCPGraph* m_roofGraph = nullptr;
};

}  // namespace tessera::views
