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
///   mode (one dot per level joined by a line in hierarchical mode). Colours: the kernel's fusion
///   group, else its op type, assigned in order of arrival like RooflineView, so that both charts
///   of a run give a kernel the same colour. Kernels without energy (joules <= 0) get no dot.
/// - A dashed horizontal line at the best measured efficiency, labelled with its value and kernel.
/// - An energy roof, only when a power figure is given (setPowerWatts) and the profile has roofs:
///   the roofline's attainable bound divided by that power, min(peak, B_max x AI) / P GFLOP/J
///   (B_max the fastest bandwidth roof the mode draws, peak the highest compute roof): the best
///   efficiency a kernel can reach if the device draws P watts whatever it runs. Machine profiles
///   carry no power figure yet, so the main window sets none.
/// - No kernel with energy (CPU runs, no NVML, no run yet): the plot is hidden and a placeholder
///   says "Energy needs an NVIDIA GPU with NVML (run on a CUDA target)".
///
/// Live updates, selection and export work like RooflineView's: addPoints() queues, a 30 Hz timer
/// drains (at most one replot per tick); hover shows tooltipText(); a click selects
/// (kernelSelected()); setSelectedKernel() highlights without emitting; the mode combo box and
/// setMode() switch the mode (modeChanged()).
///
/// Thread rules: UI thread only (a QWidget); kernelEnergies and gflopsPerJoule are pure.

#include <map>
#include <optional>
#include <vector>

#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include "core/perf/kernel_points.h"
#include "core/perf/machine_profile.h"
#include "core/pipeline/run.h"

class QComboBox;
class QCustomPlot;
class QCPCurve;
class QCPGraph;
class QCPItemText;
class QCPTextElement;
class QLabel;
class QTimer;

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

class EnergyView : public QWidget {
    Q_OBJECT
public:
    /// The placeholder shown while no kernel has energy.
    static QString placeholderMessage();

    explicit EnergyView(QWidget* parent = nullptr);
    ~EnergyView() override;

    /// The machine's roofs, used only for the energy roof (with setPowerWatts). Redraws.
    void setProfile(std::optional<perf::MachineProfile> profile);
    /// Thread count and compute precision selecting the roofs, as RooflineView's.
    void setThreads(int threads);
    void setPrecision(const QString& precision);
    /// Power figure of the device in watts for the energy roof; nullopt (default) or <= 0 = none.
    void setPowerWatts(std::optional<double> watts);
    void setMode(perf::RooflineMode mode);
    perf::RooflineMode mode() const { return m_mode; }

    /// Queues kernels; drawn on the next timer tick (30 Hz). A kernel whose name is already known
    /// replaces it (no trail).
    void addPoints(const std::vector<KernelEnergy>& kernels);
    /// Removes every kernel (on the next tick).
    void clearPoints();
    /// Drains the queue and redraws now.
    void flush();

    /// Writes the chart to `path` (.png, .svg or .pdf); width/height 0 = the plot's size, or
    /// 1000 x 650 when it has never been laid out. False with `error` set on an unknown extension
    /// or a failed write. Without energy the placeholder is not part of the file (an empty chart).
    bool exportTo(const QString& path, int width = 0, int height = 0, QString* error = nullptr);

    /// Hover text of a kernel with energy, e.g. "conv\nops: conv\nJ/run: 0.5 J\npower: 100 W\n
    /// efficiency: 4 GFLOP/J\nAI: 5 FLOP/byte (CARM)\nperformance: 200 GFLOP/s"; empty for an
    /// unknown kernel or one without energy.
    QString tooltipText(const QString& kernel) const;

    // Read-only state, for tests and the main window.
    QCustomPlot* plot() const { return m_plot; }
    QString title() const;            ///< title line, then the subtitle lines ('\n' between)
    QString placeholderText() const;  ///< empty while the chart is shown
    /// Dot positions (AI, GFLOP/J) of a kernel as plotted; empty when unknown or without energy.
    std::vector<QPointF> dotPositions(const QString& kernel) const;
    /// y of the best-efficiency line as plotted (GFLOP/J), and its label; nullopt without energy.
    std::optional<double> bestLine() const;
    QString bestLabel() const;
    /// Vertices (AI, GFLOP/J) of the energy roof as plotted; empty when none is drawn.
    std::vector<QPointF> energyRoof() const;
    QString selectedKernel() const { return m_selected; }
    QStringList kernelNames() const;  ///< every kernel received, with energy or not
    int replotCount() const { return m_replots; }
    int pendingCount() const { return static_cast<int>(m_pending.size()); }

public slots:
    /// Highlights `name` (empty clears); does not emit kernelSelected.
    void setSelectedKernel(const QString& name);

signals:
    void kernelSelected(const QString& name);
    void modeChanged(perf::RooflineMode mode);
    void replotted();

private:
    struct Kernel {
        KernelEnergy energy;
        QCPCurve* curve = nullptr;
    };

    void drain();
    void rebuild();
    std::vector<QPointF> positionsOf(const KernelEnergy& k) const;
    QColor colourFor(const QString& key);
    QString colourKey(const perf::KernelSample& s) const;
    QString hitTest(const QPoint& pixel, double radius = 8.0) const;
    void styleCurve(Kernel& k);

    QCustomPlot* m_plot = nullptr;
    QComboBox* m_modeBox = nullptr;
    QLabel* m_placeholder = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPTextElement* m_subtitle = nullptr;
    QTimer* m_timer = nullptr;

    std::optional<perf::MachineProfile> m_profile;
    int m_threads = 0;
    QString m_precision = "fp32";
    std::optional<double> m_power;
    perf::RooflineMode m_mode = perf::RooflineMode::Carm;

    std::vector<KernelEnergy> m_pending;
    bool m_clearPending = false;
    std::vector<Kernel> m_kernels;  ///< in order of first arrival
    std::map<QString, QColor> m_colours;
    QString m_selected;

    QCPGraph* m_bestGraph = nullptr;
    QString m_bestLabel;
    QCPGraph* m_roofGraph = nullptr;
    int m_replots = 0;
};

}  // namespace tessera::views
