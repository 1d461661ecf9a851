#pragma once
/// @file
/// Pieces the roofline charts (RooflineView, EnergyView) share:
/// - roofline_detail: the compact logarithmic axis ticker, the axis set-up of a log-log chart,
///   chart export to PNG, SVG or PDF, the colour key of a kernel and the marker of a memory level;
/// - KernelChart: the base class of both views. It owns the widget layout (a tool bar with the
///   Intensity box, the QCustomPlot with a title and a subtitle), the 30 Hz drain timer, the
///   profile/threads/precision/mode state, the kernel dots (one curve per kernel; in hierarchical
///   mode one marker per level, joined by a line), their colours and legend, hit-testing, hover
///   tooltips, click selection and export. A subclass keeps its own queue and kernels and draws
///   its own lines (roofs, best-efficiency line) in rebuild().
///
/// Colours (both views, so that a kernel has the same colour in both charts): the colour key of a
/// kernel is "fused <kind>" when it is a fused kernel whose plan group has a kind
/// (KernelSample::fusionKind, e.g. "fused dw-pw", "fused prologue-epilogue"), "fused" for a fused
/// kernel of unknown kind, else "op <type>" (its op type). Keys get colours from one palette in
/// the order kernels arrive. One legend entry per key that has at least one plotted dot
/// ("Conv", "fused dw-pw"), in that order; in hierarchical mode then one grey entry per memory
/// level that has a dot, with its marker ("L1 level", "DRAM level").
///
/// Level markers (hierarchical mode): L1 disc, shared square, L2 triangle, L3 diamond, DRAM and
/// HBM inverted triangle, any other level a cross in a circle. Outside hierarchical mode every
/// dot is a disc.
///
/// Thread rules: UI thread only (QCustomPlot objects, QWidgets).

#include <map>
#include <optional>
#include <vector>

#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <qcustomplot.h>

#include "core/perf/kernel_points.h"
#include "core/perf/machine_profile.h"

class QComboBox;
class QHBoxLayout;
class QTimer;
class QVBoxLayout;

namespace tessera::views {

namespace roofline_detail {

/// Decade labels that stay short: 0.01, 0.1, 1, 10, 100, 1k, 10k, 1M ...; sub-ticks unlabelled.
class CompactLogTicker : public QCPAxisTickerLog {
protected:
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override;
};

/// Makes both axes of `plot` logarithmic with a CompactLogTicker (8 sub-ticks per decade) and
/// light solid/dotted grid lines.
void setUpLogLogAxes(QCustomPlot* plot);

/// Writes `plot` to `path` at width x height pixels; the format is the extension (.png, .svg or
/// .pdf; case-insensitive). `title` becomes the document title of SVG and PDF. False with
/// `error` set when the extension is unknown or nothing (or an empty file) was written.
bool exportPlot(QCustomPlot* plot, const QString& path, int width, int height, const QString& title,
                const QString& description, QString* error);

/// "CARM", "DRAM", "hierarchical".
QString modeTag(perf::RooflineMode mode);

/// The colour key of a kernel (see the file comment): "fused <kind>", "fused" or "op <type>".
QString colourKeyOf(const perf::KernelSample& sample);
/// The legend text of a colour key: the op type for "op <type>", the key itself otherwise.
QString legendName(const QString& key);

/// Marker of a dot at `level` (hierarchical mode; see the file comment); empty level = disc.
QCPScatterStyle::ScatterShape levelShape(const QString& level);
/// A character that looks like levelShape(level), for tooltips: "●", "■", "▲", "◆", "▼", "⊗".
QString levelGlyph(const QString& level);

/// The tooltip's intensity line of `sample` in `mode`: "AI: 5 FLOP/byte (CARM)"; hierarchical:
/// "AI: L1 4, DRAM 40 FLOP/byte (hierarchical)" then a second line naming each level's marker,
/// "markers: ● L1, ▼ DRAM".
QString aiLines(const perf::KernelSample& sample, perf::RooflineMode mode);

/// Distinct precisions of the compute roofs of `profile`, lower case, widest first: fp64, fp32,
/// tf32, bf16, fp16, then any other in alphabetical order. Empty without compute roofs.
QStringList profilePrecisions(const perf::MachineProfile& profile);

}  // namespace roofline_detail

/// Base of the roofline charts: see the file comment. Not instantiable on its own.
class KernelChart : public QWidget {
    Q_OBJECT
public:
    /// A dot as plotted: (AI, y) in data coordinates, its level ("" outside hierarchical mode)
    /// and its marker.
    struct PlottedDot {
        QPointF at;
        QString level;
        QCPScatterStyle::ScatterShape shape = QCPScatterStyle::ssDisc;
    };

    ~KernelChart() override;

    /// Thread count and compute precision ("fp32", "fp16", ...; case-insensitive) of the roofs
    /// (perf::chartRoofs). Redraw when changed.
    void setThreads(int threads);
    void setPrecision(const QString& precision);
    QString precision() const { return m_precision; }
    /// Chart mode; the Intensity box follows. Emits modeChanged when it changes.
    void setMode(perf::RooflineMode mode);
    perf::RooflineMode mode() const { return m_mode; }

    /// Removes every kernel (on the next tick).
    void clearPoints();
    /// Drains the queue and redraws now (one replot); nothing when the queue is empty.
    void flush();

    /// Writes the chart to `path`; the format is the extension: .png, .svg or .pdf. width/height
    /// 0 = the widget's plot size, or 1000 x 650 when it has never been laid out. False with
    /// `error` set when the extension is unknown or writing failed.
    bool exportTo(const QString& path, int width = 0, int height = 0, QString* error = nullptr);

    /// Hover text of a kernel; empty for an unknown kernel.
    virtual QString tooltipText(const QString& kernel) const = 0;
    /// Samples queued and not drawn yet.
    virtual int pendingCount() const = 0;

    // Read-only state, for tests and the main window.
    QCustomPlot* plot() const { return m_plot; }
    QString title() const;  ///< the title line, then the subtitle lines ('\n' between)
    /// Current dot positions of a kernel as plotted; empty when unknown or without a dot.
    std::vector<QPointF> dotPositions(const QString& kernel) const;
    /// Every dot of a kernel as plotted, with level and marker.
    std::vector<PlottedDot> plottedDots(const QString& kernel) const;
    /// Names of the legend's entries as plotted, in order.
    QStringList legendEntries() const;
    /// The colour key of a kernel (roofline_detail::colourKeyOf); empty when unknown.
    QString colourKey(const QString& kernel) const;
    QString selectedKernel() const { return m_selected; }
    /// Every kernel received, with a dot or not, in order of first arrival.
    QStringList kernelNames() const;
    int replotCount() const { return m_replots; }

public slots:
    /// Highlights `name` (empty clears); does not emit kernelSelected.
    void setSelectedKernel(const QString& name);

signals:
    /// The user clicked a kernel's dot.
    void kernelSelected(const QString& name);
    void modeChanged(perf::RooflineMode mode);
    /// After every replot of the chart.
    void replotted();

protected:
    /// `prefix` names the children: "<prefix>Mode" (the Intensity box), "<prefix>Plot".
    /// `exportDescription` is the SVG description. A subclass ends its constructor with rebuild().
    KernelChart(const QString& prefix, const QString& modeToolTip, const QString& exportDescription,
                QWidget* parent);

    // What a subclass provides.
    virtual bool hasPending() const = 0;
    /// Empties the queue.
    virtual void discardPending() = 0;
    /// Moves the queue into the kernels (after removing every kernel when `clearFirst`).
    virtual void applyPending(bool clearFirst) = 0;
    /// Redraws everything (clearChart, ranges, lines, plotKernel per kernel, finishKernels,
    /// replot). Called after every change of state and once per drained tick.
    virtual void rebuild() = 0;
    /// The kernels, in order of first arrival.
    virtual std::vector<const perf::KernelSample*> samples() const = 0;

    /// Starts the drain timer if it is not running (call after queueing).
    void scheduleDrain();
    void setProfileState(std::optional<perf::MachineProfile> profile) { m_profile = std::move(profile); }
    /// perf::chartRoofs of the profile for the threads and precision; empty without a profile.
    std::vector<perf::Roof> profileRoofs() const;

    /// Removes every plottable and item and forgets the plotted kernels.
    void clearChart();
    /// Colour of a key, assigned on first use from the shared palette.
    QColor colourFor(const QString& key);
    /// Dots of `sample` at height `y` in the current mode (those with a finite AI > 0); none when
    /// y is not > 0.
    std::vector<PlottedDot> dotsOf(const perf::KernelSample& sample, double y) const;
    /// Plots a kernel's dots (see the file comment), on the "main" layer or, when selected, on
    /// "selected"; nothing for no dots. Returns the curve through its dots (nullptr for none).
    QCPCurve* plotKernel(const perf::KernelSample& sample, const std::vector<PlottedDot>& dots);
    /// Builds the legend from the plotted kernels. Call after the last plotKernel.
    void finishKernels();

    QVBoxLayout* m_layout = nullptr;  ///< tool bar, then what the subclass inserts, then the plot
    QHBoxLayout* m_bar = nullptr;     ///< the tool bar (Intensity box first)
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPTextElement* m_subtitle = nullptr;

    std::optional<perf::MachineProfile> m_profile;
    int m_threads = 0;
    QString m_precision = "fp32";
    perf::RooflineMode m_mode = perf::RooflineMode::Carm;
    QString m_selected;

private:
    struct Plotted {
        QString name;
        QString key;
        std::vector<PlottedDot> dots;
        QCPCurve* curve = nullptr;          ///< every dot (the line between them in hierarchical mode)
        std::vector<QCPCurve*> markers;     ///< hierarchical mode: one per dot
    };
    struct Hit {
        QString kernel;
        int dot = -1;
    };

    void drain();
    void style(Plotted& p);
    Hit hitTest(const QPoint& pixel, double radius = 8.0) const;
    const Plotted* plotted(const QString& kernel) const;

    QComboBox* m_modeBox = nullptr;
    QTimer* m_timer = nullptr;
    QString m_exportDescription;
    bool m_clearPending = false;
    std::map<QString, QColor> m_colours;
    std::vector<Plotted> m_plotted;
    int m_replots = 0;
};

}  // namespace tessera::views
