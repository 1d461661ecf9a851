#pragma once
/// @file
/// The Timings dock's history chart (QCustomPlot): one kernel's median time over the runs of this
/// session (x: run number, y: median in us, ms or s by the largest value), the q1-q3 spread as
/// error bars where the run measured it, gaps where the kernel was missing or untimed. Points of
/// runs whose plan/target differed from the latest run's are drawn orange; hovering a point shows
/// its run, time, kernel name in that run and plan. Without a kernel the chart shows the whole
/// model's end-to-end time as a faint line.
/// Thread rules: UI thread only; draws the series it is given (historySeries()).

#include <vector>

#include <QString>
#include <QWidget>

#include "views/timing/timing_history.h"

class QCustomPlot;
class QCPGraph;
class QCPErrorBars;

namespace tessera::views {

class TimingHistoryChart : public QWidget {
    Q_OBJECT
public:
    explicit TimingHistoryChart(QWidget* parent = nullptr);

    /// Draws `points`; `kernel` empty = the end-to-end series. An empty series shows a hint.
    void setSeries(std::vector<TimingHistoryPoint> points, const QString& kernel);
    const std::vector<TimingHistoryPoint>& series() const { return m_points; }
    /// Points drawn (present ones).
    int pointCount() const;
    /// The chart's title line, e.g. "'conv1' over 3 runs (median, ms)".
    QString title() const { return m_title; }
    /// The hover text of point `index` of series() (empty outside).
    QString toolTipFor(int index) const;
    QCustomPlot* plot() const { return m_plot; }

    /// The unit for a largest value: {"us", 1e6}, {"ms", 1e3} or {"s", 1}.
    static std::pair<QString, double> unitFor(double maxSeconds);

private:
    QCustomPlot* m_plot;
    QCPGraph* m_line;
    QCPGraph* m_changed;
    QCPErrorBars* m_bars;
    std::vector<TimingHistoryPoint> m_points;
    QString m_kernel;
    QString m_title;
};

}  // namespace tessera::views
