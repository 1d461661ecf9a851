#include "views/roofline/energy_view.h"

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "views/roofline/plot_common.h"

namespace tessera::views {

namespace {

constexpr int kTickMs = 33;  // ~30 Hz drain
constexpr int kDefaultExportWidth = 1000, kDefaultExportHeight = 650;

QString q(const std::string& s) { return QString::fromStdString(s); }
QString sig(double v) { return q(perf::formatSignificant(v)); }

QString modeTag(perf::RooflineMode mode) {
    switch (mode) {
    case perf::RooflineMode::Carm: return "CARM";
    case perf::RooflineMode::Dram: return "DRAM";
    case perf::RooflineMode::Hierarchical: return "hierarchical";
    }
    return {};
}

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

EnergyView::EnergyView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);

    auto* bar = new QHBoxLayout;
    auto* modeLabel = new QLabel(tr("Intensity:"), this);
    m_modeBox = new QComboBox(this);
    m_modeBox->setObjectName("energyMode");
    m_modeBox->addItem(tr("CARM (all bytes issued)"), static_cast<int>(perf::RooflineMode::Carm));
    m_modeBox->addItem(tr("Classic (DRAM bytes)"), static_cast<int>(perf::RooflineMode::Dram));
    m_modeBox->addItem(tr("Hierarchical (per level)"), static_cast<int>(perf::RooflineMode::Hierarchical));
    m_modeBox->setToolTip(tr("Which arithmetic intensity the dots use (the same as the performance chart)"));
    modeLabel->setBuddy(m_modeBox);
    bar->addWidget(modeLabel);
    bar->addWidget(m_modeBox);
    bar->addStretch(1);
    layout->addLayout(bar);

    m_placeholder = new QLabel(placeholderMessage(), this);
    m_placeholder->setObjectName("energyPlaceholder");
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_placeholder->setStyleSheet("QLabel { color: #555; font-size: 11pt; padding: 24px; }");
    layout->addWidget(m_placeholder, 1);

    m_plot = new QCustomPlot(this);
    m_plot->setObjectName("energyPlot");
    m_plot->setMinimumSize(320, 240);
    m_plot->setMouseTracking(true);
    layout->addWidget(m_plot, 1);

    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, QString(), QFont(font().family(), 10, QFont::Bold));
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->plotLayout()->insertRow(1);
    m_subtitle = new QCPTextElement(m_plot, QString(), QFont(font().family(), 9));
    m_subtitle->setTextColor(QColor(90, 90, 90));
    m_plot->plotLayout()->addElement(1, 0, m_subtitle);

    roofline_detail::setUpLogLogAxes(m_plot);
    m_plot->xAxis->setLabel(tr("Arithmetic intensity (FLOP/byte)"));
    m_plot->yAxis->setLabel(tr("Energy efficiency (GFLOP/J)"));
    m_plot->addLayer("lines", m_plot->layer("grid"), QCustomPlot::limAbove);
    m_plot->addLayer("selected", m_plot->layer("main"), QCustomPlot::limAbove);

    m_plot->legend->setVisible(false);
    m_plot->legend->setFont(QFont(font().family(), 8));
    m_plot->legend->setBrush(QColor(255, 255, 255, 220));
    m_plot->legend->setIconSize(8, 8);
    m_plot->legend->setWrap(3);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setRowSpacing(0);
    m_plot->legend->setColumnSpacing(6);
    // Bottom right: high intensity at low efficiency is where kernels rarely sit.
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);

    m_timer = new QTimer(this);
    m_timer->setInterval(kTickMs);
    connect(m_timer, &QTimer::timeout, this, &EnergyView::drain);
    connect(m_plot, &QCustomPlot::afterReplot, this, [this] {
        ++m_replots;
        emit replotted();
    });
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        const QString k = hitTest(e->pos());
        if (k.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(e->globalPosition().toPoint(), tooltipText(k), m_plot);
    });
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
        if (e->button() != Qt::LeftButton) return;
        const QString k = hitTest(e->pos());
        if (k.isEmpty()) return;
        setSelectedKernel(k);
        emit kernelSelected(k);
    });
    connect(m_modeBox, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index < 0) return;
        setMode(static_cast<perf::RooflineMode>(m_modeBox->itemData(index).toInt()));
    });

    rebuild();
}

EnergyView::~EnergyView() = default;

void EnergyView::setProfile(std::optional<perf::MachineProfile> profile) {
    m_profile = std::move(profile);
    rebuild();
}

void EnergyView::setThreads(int threads) {
    if (threads == m_threads) return;
    m_threads = threads;
    rebuild();
}

void EnergyView::setPrecision(const QString& precision) {
    if (precision == m_precision) return;
    m_precision = precision;
    rebuild();
}

void EnergyView::setPowerWatts(std::optional<double> watts) {
    if (watts && !(*watts > 0)) watts.reset();
    m_power = watts;
    rebuild();
}

void EnergyView::setMode(perf::RooflineMode mode) {
    const int index = m_modeBox->findData(static_cast<int>(mode));
    if (m_modeBox->currentIndex() != index) {
        const QSignalBlocker block(m_modeBox);
        m_modeBox->setCurrentIndex(index);
    }
    if (mode == m_mode) return;
    m_mode = mode;
    rebuild();
    emit modeChanged(mode);
}

void EnergyView::addPoints(const std::vector<KernelEnergy>& kernels) {
    m_pending.insert(m_pending.end(), kernels.begin(), kernels.end());
    if (!m_timer->isActive()) m_timer->start();
}

void EnergyView::clearPoints() {
    m_pending.clear();
    m_clearPending = true;
    if (!m_timer->isActive()) m_timer->start();
}

void EnergyView::flush() {
    m_timer->stop();
    if (m_pending.empty() && !m_clearPending) return;
    drain();
}

void EnergyView::drain() {
    if (m_pending.empty() && !m_clearPending) {
        m_timer->stop();
        return;
    }
    if (m_clearPending) {
        m_kernels.clear();
        m_clearPending = false;
    }
    for (KernelEnergy& e : m_pending) {
        auto it = std::find_if(m_kernels.begin(), m_kernels.end(),
                               [&](const Kernel& k) { return k.energy.sample.name == e.sample.name; });
        if (it == m_kernels.end())
            m_kernels.push_back(Kernel{std::move(e), nullptr});
        else
            it->energy = std::move(e);
    }
    m_pending.clear();
    rebuild();  // the one replot of this tick
}

std::vector<QPointF> EnergyView::positionsOf(const KernelEnergy& k) const {
    std::vector<QPointF> out;
    const double y = gflopsPerJoule(k);
    if (!(y > 0) || !std::isfinite(y)) return out;
    for (const perf::SampleDot& d : perf::sampleDots(k.sample, m_mode))
        if (std::isfinite(d.ai) && d.ai > 0) out.emplace_back(d.ai, y);
    return out;
}

QString EnergyView::colourKey(const perf::KernelSample& s) const {
    return s.group.empty() ? "op " + q(s.opType) : "group " + q(s.group);
}

QColor EnergyView::colourFor(const QString& key) {
    auto it = m_colours.find(key);
    if (it != m_colours.end()) return it->second;
    // The palette and the order of assignment of RooflineView, so that a kernel's colour matches.
    static const QColor palette[] = {QColor("#4e79a7"), QColor("#f28e2b"), QColor("#59a14f"), QColor("#e15759"),
                                     QColor("#b07aa1"), QColor("#76b7b2"), QColor("#edc948"), QColor("#9c755f"),
                                     QColor("#ff9da7"), QColor("#bab0ac")};
    const std::size_t n = m_colours.size();
    QColor c = n < std::size(palette) ? palette[n] : QColor::fromHsv(static_cast<int>((n * 47) % 360), 160, 200);
    m_colours[key] = c;
    return c;
}

void EnergyView::styleCurve(Kernel& k) {
    if (!k.curve) return;
    const bool selected = q(k.energy.sample.name) == m_selected;
    const QString key = colourKey(k.energy.sample);
    const QColor colour = m_colours.count(key) ? m_colours.at(key) : QColor(Qt::gray);
    const QPen outline = selected ? QPen(Qt::black, 2.0) : QPen(colour.darker(140), 1.0);
    k.curve->setPen(QPen(colour, 1.2));
    k.curve->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, outline, colour, selected ? 12 : 7));
    k.curve->setLayer(selected ? "selected" : "main");
}

void EnergyView::rebuild() {
    m_plot->clearItems();
    m_plot->clearPlottables();
    m_bestGraph = nullptr;
    m_roofGraph = nullptr;
    m_bestLabel.clear();

    // Best measured efficiency, and which kernels have energy at all.
    int withEnergy = 0;
    double best = 0;
    QString bestKernel;
    for (Kernel& k : m_kernels) {
        k.curve = nullptr;
        colourFor(colourKey(k.energy.sample));  // assigned for every kernel, as the roofline does
        const double g = gflopsPerJoule(k.energy);
        if (!(g > 0)) continue;
        ++withEnergy;
        if (g > best) {
            best = g;
            bestKernel = q(k.energy.sample.name);
        }
    }

    // The energy roof: the roofline's attainable bound over the power figure.
    double peak = 0, fastest = 0;
    if (m_profile && m_power) {
        const auto roofs =
            perf::roofsForMode(perf::chartRoofs(m_profile->roofs, m_threads, m_precision.toStdString()), m_mode);
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
    for (const Kernel& k : m_kernels)
        for (const QPointF& p : positionsOf(k.energy)) {
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

    const bool joined = m_mode == perf::RooflineMode::Hierarchical;
    std::vector<QString> legendKeys;
    for (Kernel& k : m_kernels) {
        const auto pos = positionsOf(k.energy);
        if (pos.empty()) continue;
        const QString key = colourKey(k.energy.sample);
        if (std::find(legendKeys.begin(), legendKeys.end(), key) == legendKeys.end()) legendKeys.push_back(key);
        auto* curve = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
        curve->removeFromLegend();
        curve->setName(q(k.energy.sample.name));
        curve->setLineStyle(joined ? QCPCurve::lsLine : QCPCurve::lsNone);
        curve->setSelectable(QCP::stNone);
        int t = 0;
        for (const QPointF& p : pos) curve->addData(t++, p.x(), p.y());
        k.curve = curve;
        styleCurve(k);
    }
    for (const QString& key : legendKeys) {
        auto* g = m_plot->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        const QColor colour = colourFor(key);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QPen(colour.darker(140), 1.0), colour, 7));
        g->setName(key.startsWith("op ") ? key.mid(3) : tr("fused: %1").arg(key.mid(6)));
        g->setSelectable(QCP::stNone);
    }
    m_plot->legend->setVisible(!legendKeys.empty());
    m_plot->replot();
}

QString EnergyView::hitTest(const QPoint& pixel, double radius) const {
    QString best;
    double bestD = radius * radius;
    for (const Kernel& k : m_kernels) {
        for (const QPointF& p : positionsOf(k.energy)) {
            const double px = m_plot->xAxis->coordToPixel(p.x()), py = m_plot->yAxis->coordToPixel(p.y());
            const double d = (px - pixel.x()) * (px - pixel.x()) + (py - pixel.y()) * (py - pixel.y());
            if (d <= bestD) {
                bestD = d;
                best = q(k.energy.sample.name);
            }
        }
    }
    return best;
}

void EnergyView::setSelectedKernel(const QString& name) {
    if (name == m_selected) return;
    m_selected = name;
    bool known = false;
    for (Kernel& k : m_kernels) {
        known = known || q(k.energy.sample.name) == name;
        styleCurve(k);
    }
    if (known || name.isEmpty()) m_plot->replot();
}

QString EnergyView::tooltipText(const QString& kernel) const {
    const Kernel* found = nullptr;
    for (const Kernel& k : m_kernels)
        if (q(k.energy.sample.name) == kernel) found = &k;
    if (!found || !(gflopsPerJoule(found->energy) > 0)) return {};
    const KernelEnergy& e = found->energy;
    const perf::KernelSample& s = e.sample;
    QStringList ops;
    for (const auto& o : s.ops) ops << q(o);
    QStringList lines;
    lines << q(s.name);
    lines << tr("ops: %1").arg(ops.isEmpty() ? q(s.opType) : ops.join(", "));
    lines << tr("J/run: %1").arg(formatJoules(e.joules));
    lines << (e.watts > 0 ? tr("power: %1 W").arg(sig(e.watts)) : tr("power: unknown"));
    lines << tr("efficiency: %1 GFLOP/J").arg(sig(gflopsPerJoule(e)));
    const auto dots = perf::sampleDots(s, m_mode);
    QStringList parts;
    for (const auto& d : dots) parts << (d.level.empty() ? QString() : q(d.level) + " ") + sig(d.ai);
    lines << tr("AI: %1 FLOP/byte (%2)").arg(parts.join(", "), modeTag(m_mode));
    lines << tr("performance: %1 GFLOP/s").arg(sig(perf::sampleGflops(s)));
    return lines.join('\n');
}

QString EnergyView::title() const { return m_title->text() + '\n' + m_subtitle->text(); }

QString EnergyView::placeholderText() const { return m_placeholder->isHidden() ? QString() : m_placeholder->text(); }

std::vector<QPointF> EnergyView::dotPositions(const QString& kernel) const {
    std::vector<QPointF> out;
    for (const Kernel& k : m_kernels) {
        if (q(k.energy.sample.name) != kernel || !k.curve) continue;
        for (auto it = k.curve->data()->constBegin(); it != k.curve->data()->constEnd(); ++it)
            out.emplace_back(it->key, it->value);
    }
    return out;
}

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

QStringList EnergyView::kernelNames() const {
    QStringList out;
    for (const Kernel& k : m_kernels) out << q(k.energy.sample.name);
    return out;
}

bool EnergyView::exportTo(const QString& path, int width, int height, QString* error) {
    flush();
    if (width <= 0 || height <= 0) {
        const bool laidOut = m_plot->isVisible() && m_plot->width() > 100 && m_plot->height() > 100;
        width = laidOut ? m_plot->width() : kDefaultExportWidth;
        height = laidOut ? m_plot->height() : kDefaultExportHeight;
    }
    return roofline_detail::exportPlot(m_plot, path, width, height, m_title->text(), "Tessera energy-efficiency chart",
                                       error);
}

}  // namespace tessera::views
