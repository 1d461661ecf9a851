#include "views/roofline/energy_view.h"

#include <algorithm>
#include <cmath>

#include <QLabel>
#include <QVBoxLayout>

#include <qcustomplot.h>

namespace tessera::views {

namespace {

using roofline_detail::modeTag;

QString q(const std::string& s) { return QString::fromStdString(s); }
QString sig(double v) { return q(perf::formatSignificant(v)); }

/// Joules with a unit that keeps the number readable: "1.5 J", "12.3 mJ", "45.6 µJ".
QString formatJoules(double j) {
    if (j >= 1.0) return sig(j) + " J";
    if (j >= 1e-3) return sig(j * 1e3) + " mJ";
    return sig(j * 1e6) + QString::fromUtf8(" \u00b5J");
}

double decadeFloor(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decadeCeil(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

const QColor kBestColour(30, 120, 60);
const QColor kRoofColour(150, 40, 40);

}  // namespace

double gflopsPerJoule(const KernelEnergy& kernel) {
    if (!(kernel.joules > 0) || !(kernel.sample.flops > 0)) return 0.0;
    return kernel.sample.flops / 1e9 / kernel.joules;
}

std::vector<KernelEnergy> kernelEnergies(const std::vector<perf::KernelSample>& samples,
                                         const pipeline::RunReport& report) {
    std::vector<KernelEnergy> out;
    out.reserve(samples.size());
    for (const perf::KernelSample& s : samples) {
        KernelEnergy e;
        e.sample = s;
        for (const pipeline::KernelReport& k : report.kernels) {
            if (k.name != s.name) continue;
            e.joules = k.energyJoules;
            e.watts = k.avgPowerWatts;
            break;
        }
        out.push_back(std::move(e));
    }
    return out;
}

QString EnergyView::placeholderMessage() {
    return tr("Energy needs an NVIDIA GPU with NVML (run on a CUDA target)");
}

EnergyView::EnergyView(QWidget* parent)
    : KernelChart("energy", tr("Which arithmetic intensity the dots use (the same as the performance chart)"),
                  "Tessera energy-efficiency chart", parent) {
    m_placeholder = new QLabel(placeholderMessage(), this);
    m_placeholder->setObjectName("energyPlaceholder");
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_placeholder->setStyleSheet("QLabel { color: #555; font-size: 11pt; padding: 24px; }");
    m_layout->insertWidget(1, m_placeholder, 1);  // between the tool bar and the plot

    m_plot->yAxis->setLabel(tr("Energy efficiency (GFLOP/J)"));
    m_plot->addLayer("lines", m_plot->layer("grid"), QCustomPlot::limAbove);
    // Bottom right: high intensity at low efficiency is where kernels rarely sit.
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);

    rebuild();
}

EnergyView::~EnergyView() = default;

void EnergyView::setProfile(std::optional<perf::MachineProfile> profile) {
    setProfileState(std::move(profile));
    rebuild();
}

void EnergyView::setPowerWatts(std::optional<double> watts) {
    if (watts && !(*watts > 0)) watts.reset();
    m_power = watts;
    rebuild();
}

void EnergyView::addPoints(const std::vector<KernelEnergy>& kernels) {
    m_pending.insert(m_pending.end(), kernels.begin(), kernels.end());
    scheduleDrain();
}

void EnergyView::applyPending(bool clearFirst) {
    if (clearFirst) m_kernels.clear();
    for (KernelEnergy& e : m_pending) {
        auto it = std::find_if(m_kernels.begin(), m_kernels.end(),
                               [&](const KernelEnergy& k) { return k.sample.name == e.sample.name; });
        if (it == m_kernels.end())
            m_kernels.push_back(std::move(e));
        else
            *it = std::move(e);
    }
    m_pending.clear();
}

std::vector<const perf::KernelSample*> EnergyView::samples() const {
    std::vector<const perf::KernelSample*> out;
    for (const KernelEnergy& k : m_kernels) out.push_back(&k.sample);
    return out;
}

std::vector<QPointF> EnergyView::positionsOf(const KernelEnergy& k) const {
    std::vector<QPointF> out;
    for (const PlottedDot& d : dotsOf(k.sample, gflopsPerJoule(k))) out.push_back(d.at);
    return out;
}

void EnergyView::rebuild() {
    clearChart();
    m_bestGraph = nullptr;
    m_roofGraph = nullptr;
    m_bestLabel.clear();

    // Best measured efficiency, and which kernels have energy at all.
    int withEnergy = 0;
    double best = 0;
    QString bestKernel;
    for (const KernelEnergy& k : m_kernels) {
        const double g = gflopsPerJoule(k);
        if (!(g > 0)) continue;
        ++withEnergy;
        if (g > best) {
            best = g;
            bestKernel = q(k.sample.name);
        }
    }

    // The energy roof: the roofline's attainable bound over the power figure.
    double peak = 0, fastest = 0;
    if (m_profile && m_power) {
        const auto roofs = perf::roofsForMode(profileRoofs(), m_mode);
        for (const perf::Roof& r : roofs) {
            if (r.kind == perf::Roof::Kind::Compute) peak = std::max(peak, r.value);
            else fastest = std::max(fastest, r.value);
        }
    }
    const bool roof = m_power && peak > 0 && fastest > 0;

    m_title->setText(tr("Energy efficiency (%1)").arg(modeTag(m_mode)));
    QString sub = tr("GFLOP/J = FLOPs / 1e9 / joules per kernel run (NVML)") + "\n" + q(perf::modeDefinition(m_mode));
    sub += "\n" + (m_kernels.size() == 1 ? tr("%1 of 1 kernel with energy").arg(withEnergy)
                                         : tr("%1 of %2 kernels with energy").arg(withEnergy).arg(m_kernels.size()));
    if (roof) sub += tr(" \u00b7 energy roof = roofline bound / %1 W").arg(sig(*m_power));
    m_subtitle->setText(sub);

    const bool show = withEnergy > 0;
    m_placeholder->setVisible(!show);
    m_plot->setVisible(show);

    // Ranges: every dot, the best line, the roof's ridge.
    double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
    for (const KernelEnergy& k : m_kernels)
        for (const QPointF& p : positionsOf(k)) {
            xmin = std::min(xmin, p.x());
            xmax = std::max(xmax, p.x());
            ymin = std::min(ymin, p.y());
            ymax = std::max(ymax, p.y());
        }
    if (roof) {
        xmin = std::min(xmin, peak / fastest);
        xmax = std::max(xmax, peak / fastest);
        ymax = std::max(ymax, peak / *m_power);
        ymin = std::min(ymin, peak / *m_power);
    }
    if (!(xmax > 0)) {
        xmin = 0.1;
        xmax = 10;
    }
    if (!(ymax > 0)) {
        ymin = 0.1;
        ymax = 10;
    }
    double xlo = decadeFloor(xmin / 2), xhi = decadeCeil(xmax * 3);
    double ylo = decadeFloor(ymin / 2), yhi = decadeCeil(ymax * 4);
    while (xhi / xlo < 999) {  // at least three decades
        xlo /= 10;
        if (xhi / xlo < 999) xhi *= 10;
    }
    while (yhi / ylo < 99) ylo /= 10;  // at least two
    m_plot->xAxis->setRange(xlo, xhi);
    m_plot->yAxis->setRange(ylo, yhi);
    const double logSpanX = std::log10(xhi / xlo);
    const QFont labelFont(font().family(), 8);

    if (roof) {
        const double ridge = peak / fastest;
        m_roofGraph = m_plot->addGraph();
        m_roofGraph->setLayer("lines");
        m_roofGraph->removeFromLegend();
        m_roofGraph->setPen(QPen(kRoofColour, 1.8));
        m_roofGraph->setSelectable(QCP::stNone);
        m_roofGraph->addData(xlo, fastest * xlo / *m_power);
        m_roofGraph->addData(ridge, peak / *m_power);
        m_roofGraph->addData(xhi, peak / *m_power);
        auto* text = new QCPItemText(m_plot);
        text->setLayer("lines");
        text->setFont(labelFont);
        text->setColor(kRoofColour);
        text->setText(tr("energy roof %1 GFLOP/J (%2 GFLOP/s / %3 W)").arg(sig(peak / *m_power), sig(peak), sig(*m_power)));
        text->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
        text->setPadding(QMargins(1, 0, 1, 3));
        text->setClipToAxisRect(true);
        text->position->setType(QCPItemPosition::ptPlotCoords);
        text->position->setCoords(xhi / std::pow(10.0, logSpanX * 0.01), peak / *m_power);
    }

    if (best > 0) {
        m_bestGraph = m_plot->addGraph();
        m_bestGraph->setLayer("lines");
        m_bestGraph->removeFromLegend();
        m_bestGraph->setPen(QPen(kBestColour, 1.5, Qt::DashLine));
        m_bestGraph->setSelectable(QCP::stNone);
        m_bestGraph->addData(xlo, best);
        m_bestGraph->addData(xhi, best);
        m_bestLabel = tr("best measured %1 GFLOP/J (%2)").arg(sig(best), bestKernel);
        auto* text = new QCPItemText(m_plot);
        text->setLayer("lines");
        text->setFont(labelFont);
        text->setColor(kBestColour);
        text->setText(m_bestLabel);
        text->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        text->setPadding(QMargins(1, 0, 1, 3));
        text->setClipToAxisRect(true);
        text->position->setType(QCPItemPosition::ptPlotCoords);
        text->position->setCoords(xlo * std::pow(10.0, logSpanX * 0.01), best);
    }

    for (const KernelEnergy& k : m_kernels) plotKernel(k.sample, dotsOf(k.sample, gflopsPerJoule(k)));
    finishKernels();
    m_plot->replot();
}

QString EnergyView::tooltipText(const QString& kernel) const {
    const KernelEnergy* found = nullptr;
    for (const KernelEnergy& k : m_kernels)
        if (q(k.sample.name) == kernel) found = &k;
    if (!found || !(gflopsPerJoule(*found) > 0)) return {};
    const KernelEnergy& e = *found;
    const perf::KernelSample& s = e.sample;
    QStringList ops;
    for (const auto& o : s.ops) ops << q(o);
    QStringList lines;
    lines << q(s.name);
    lines << tr("ops: %1").arg(ops.isEmpty() ? q(s.opType) : ops.join(", "));
    lines << tr("J/run: %1").arg(formatJoules(e.joules));
    lines << (e.watts > 0 ? tr("power: %1 W").arg(sig(e.watts)) : tr("power: unknown"));
    lines << tr("efficiency: %1 GFLOP/J").arg(sig(gflopsPerJoule(e)));
    lines << roofline_detail::aiLines(s, m_mode);
    lines << tr("performance: %1 GFLOP/s").arg(sig(perf::sampleGflops(s)));
    return lines.join('\n');
}

QString EnergyView::placeholderText() const { return m_placeholder->isHidden() ? QString() : m_placeholder->text(); }

std::optional<double> EnergyView::bestLine() const {
    if (!m_bestGraph || m_bestGraph->data()->isEmpty()) return std::nullopt;
    return m_bestGraph->data()->at(0)->value;
}

QString EnergyView::bestLabel() const { return m_bestLabel; }

std::vector<QPointF> EnergyView::energyRoof() const {
    std::vector<QPointF> out;
    if (!m_roofGraph) return out;
    for (auto it = m_roofGraph->data()->constBegin(); it != m_roofGraph->data()->constEnd(); ++it)
        out.emplace_back(it->key, it->value);
    return out;
}

}  // namespace tessera::views
