#include "views/timing/timing_history_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "views/timing/timing_table_model.h"

namespace tessera::views {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

TimingHistoryChart::TimingHistoryChart(QWidget* parent)
    : QWidget(parent), m_plot(new QCustomPlot(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setObjectName(QStringLiteral("timingHistoryPlot"));
    m_plot->setMinimumHeight(100);  // the Timings table above it comes first in a short dock
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, new QCPTextElement(m_plot, QString(), QFont(font().family(), font().pointSize())));
    m_line = m_plot->addGraph();
    m_changed = m_plot->addGraph();
    m_changed->setLineStyle(QCPGraph::lsNone);
    m_changed->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(0xef, 0x6c, 0x00), 8));
    m_bars = new QCPErrorBars(m_plot->xAxis, m_plot->yAxis);
    m_bars->setDataPlottable(m_line);
    m_bars->setPen(QPen(QColor(0x90, 0x90, 0x90)));
    m_plot->xAxis->setLabel(tr("run"));
    m_plot->yAxis->ticker()->setTickCount(3);  // readable in a short dock
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_plot->xAxis->setTicker(ticker);
    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        const double x = m_plot->xAxis->pixelToCoord(e->position().x());
        int best = -1;
        double bestDist = 0.5;
        for (std::size_t i = 0; i < m_points.size(); ++i) {
            const double d = std::abs(m_points[i].run - x);
            if (d < bestDist) {
                bestDist = d;
                best = static_cast<int>(i);
            }
        }
        if (best < 0)
            QToolTip::hideText();
        else
            QToolTip::showText(e->globalPosition().toPoint(), toolTipFor(best), m_plot);
    });
    setSeries({}, QString());
}

std::pair<QString, double> TimingHistoryChart::unitFor(double maxSeconds)
{
    if (maxSeconds < 1e-3)
        return {QStringLiteral("us"), 1e6};
    if (maxSeconds < 1.0)
        return {QStringLiteral("ms"), 1e3};
    return {QStringLiteral("s"), 1.0};
}

int TimingHistoryChart::pointCount() const
{
    return static_cast<int>(std::count_if(m_points.begin(), m_points.end(), [](const auto& p) { return p.present; }));
}

QString TimingHistoryChart::toolTipFor(int index) const
{
    if (index < 0 || index >= static_cast<int>(m_points.size()))
        return {};
    const TimingHistoryPoint& p = m_points[static_cast<std::size_t>(index)];
    QString text = tr("Run %1: ").arg(p.run);
    if (!p.present)
        text += m_kernel.isEmpty() ? tr("not timed") : tr("kernel missing or not timed");
    else
        text += TimingTableModel::formatSeconds(p.seconds);
    if (p.present && p.q3Seconds > 0)
        text += tr(" (q1-q3 %1 - %2)").arg(TimingTableModel::formatSeconds(p.q1Seconds),
                                          TimingTableModel::formatSeconds(p.q3Seconds));
    if (!p.kernel.empty() && fromStd(p.kernel) != m_kernel)
        text += tr("\nas '%1' (matched by its nodes)").arg(fromStd(p.kernel));
    if (!p.plan.empty())
        text += QLatin1Char('\n') + fromStd(p.plan);
    if (p.planDiffers)
        text += tr(" (differs from the latest run)");
    return text;
}

void TimingHistoryChart::setSeries(std::vector<TimingHistoryPoint> points, const QString& kernel)
{
    m_points = std::move(points);
    m_kernel = kernel;
    double maxSeconds = 0;
    for (const auto& p : m_points)
        if (p.present)
            maxSeconds = std::max({maxSeconds, p.seconds, p.q3Seconds});
    const auto [unit, scale] = unitFor(maxSeconds);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    QVector<double> xs, ys, minus, plus, cx, cy;
    for (const auto& p : m_points) {
        xs << p.run;
        const bool spread = p.present && p.q3Seconds > 0 && p.q1Seconds > 0;
        // NaN breaks the line: a run without the kernel is a gap, not a zero.
        ys << (p.present ? p.seconds * scale : nan);
        minus << (spread ? std::max(0.0, p.seconds - p.q1Seconds) * scale : 0.0);
        plus << (spread ? std::max(0.0, p.q3Seconds - p.seconds) * scale : 0.0);
        if (p.present && p.planDiffers) {
            cx << p.run;
            cy << p.seconds * scale;
        }
    }
    m_line->setData(xs, ys, true);
    m_bars->setData(minus, plus);
    m_changed->setData(cx, cy, true);
    const bool total = kernel.isEmpty();
    const QColor colour = total ? QColor(0x90, 0xa4, 0xae) : QColor(0x15, 0x65, 0xc0);
    m_line->setPen(QPen(colour, total ? 1.0 : 1.6, total ? Qt::DashLine : Qt::SolidLine));
    m_line->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colour, total ? 4 : 6));
    m_bars->setVisible(!total);
    const int n = static_cast<int>(m_points.size());
    if (n == 0)
        m_title = tr("Run history: no timed run yet");
    else if (total)
        m_title = tr("End to end over %1 %2 (median, %3); select a kernel for its history")
                      .arg(n)
                      .arg(n == 1 ? tr("run") : tr("runs"), unit);
    else
        m_title = tr("'%1' over %2 %3 (median, %4)").arg(kernel).arg(n).arg(n == 1 ? tr("run") : tr("runs"), unit);
    if (auto* t = qobject_cast<QCPTextElement*>(m_plot->plotLayout()->element(0, 0)))
        t->setText(m_title);
    m_plot->yAxis->setLabel(unit);
    if (n > 0) {
        m_plot->xAxis->setRange(m_points.front().run - 0.5, m_points.back().run + 0.5);
        double hi = 0;
        for (int i = 0; i < n; ++i)
            if (m_points[static_cast<std::size_t>(i)].present)
                hi = std::max(hi, ys[i] + plus[i]);
        m_plot->yAxis->setRange(0, hi > 0 ? hi * 1.15 : 1);
    } else {
        m_plot->xAxis->setRange(0.5, 1.5);
        m_plot->yAxis->setRange(0, 1);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace tessera::views
