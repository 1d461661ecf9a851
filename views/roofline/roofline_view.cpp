#include "views/roofline/roofline_view.h"

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QFileInfo>
#include <QFontMetricsF>
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

constexpr int kTickMs = 33;           // ~30 Hz drain
constexpr std::size_t kMaxTrail = 16;  // previous positions kept per kernel
constexpr int kDefaultExportWidth = 1000, kDefaultExportHeight = 650;

const char* kDefaultMissingHint =
    "No measured roofs for this machine: run `tessera-cli roofline measure --target cpu --save`";

QString q(const std::string& s) { return QString::fromStdString(s); }

QString modeTag(perf::RooflineMode mode) {
    switch (mode) {
    case perf::RooflineMode::Carm: return "CARM";
    case perf::RooflineMode::Dram: return "DRAM";
    case perf::RooflineMode::Hierarchical: return "hierarchical";
    }
    return {};
}

/// "FP32 ADD peak" + "FP32 MUL peak" -> "FP32 ADD/MUL peak" (shared words kept once).
std::string mergedName(const std::string& a, const std::string& b) {
    auto words = [](const std::string& s) {
        std::vector<std::string> w;
        std::string cur;
        for (char c : s) {
            if (c == ' ') {
                if (!cur.empty()) w.push_back(cur);
                cur.clear();
            } else {
                cur += c;
            }
        }
        if (!cur.empty()) w.push_back(cur);
        return w;
    };
    const auto wa = words(a), wb = words(b);
    if (wa.size() != wb.size()) return a + " / " + b;
    std::string out;
    for (std::size_t i = 0; i < wa.size(); ++i) {
        if (!out.empty()) out += ' ';
        out += wa[i] == wb[i] ? wa[i] : wa[i] + "/" + wb[i];
    }
    return out;
}

QString modeTitle(perf::RooflineMode mode) {
    switch (mode) {
    case perf::RooflineMode::Carm: return QObject::tr("Cache-aware roofline (CARM)");
    case perf::RooflineMode::Dram: return QObject::tr("Classic roofline (DRAM)");
    case perf::RooflineMode::Hierarchical: return QObject::tr("Hierarchical roofline");
    }
    return {};
}

bool samePlace(const perf::KernelSample& a, const perf::KernelSample& b) {
    if (a.flops != b.flops || a.seconds != b.seconds || a.issuedBytes != b.issuedBytes ||
        a.compulsoryBytes != b.compulsoryBytes || a.levelBytes.size() != b.levelBytes.size())
        return false;
    for (std::size_t i = 0; i < a.levelBytes.size(); ++i)
        if (a.levelBytes[i].bytes != b.levelBytes[i].bytes || a.levelBytes[i].level != b.levelBytes[i].level)
            return false;
    return true;
}

double decadeFloor(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decadeCeil(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

const QColor kBandwidthColour(40, 70, 120);
const QColor kComputeColour(150, 40, 40);

}  // namespace

RooflineView::RooflineView(QWidget* parent) : QWidget(parent), m_missingHint(kDefaultMissingHint) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);

    auto* bar = new QHBoxLayout;
    auto* modeLabel = new QLabel(tr("Intensity:"), this);
    m_modeBox = new QComboBox(this);
    m_modeBox->setObjectName("rooflineMode");
    m_modeBox->addItem(tr("CARM (all bytes issued)"), static_cast<int>(perf::RooflineMode::Carm));
    m_modeBox->addItem(tr("Classic (DRAM bytes)"), static_cast<int>(perf::RooflineMode::Dram));
    m_modeBox->addItem(tr("Hierarchical (per level)"), static_cast<int>(perf::RooflineMode::Hierarchical));
    m_modeBox->setToolTip(tr("Which arithmetic intensity the dots use (semantics \u00a72.4)"));
    modeLabel->setBuddy(m_modeBox);
    bar->addWidget(modeLabel);
    bar->addWidget(m_modeBox);
    bar->addStretch(1);
    layout->addLayout(bar);

    m_banner = new QLabel(this);
    m_banner->setObjectName("rooflineBanner");
    m_banner->setWordWrap(true);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_banner->setStyleSheet("QLabel { background: #fff4ce; color: #5c4400; border: 1px solid #e0c060; padding: 4px; }");
    layout->addWidget(m_banner);

    m_plot = new QCustomPlot(this);
    m_plot->setObjectName("rooflinePlot");
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
    m_plot->yAxis->setLabel(tr("Performance (GFLOP/s)"));

    m_plot->addLayer("trails", m_plot->layer("grid"), QCustomPlot::limAbove);
    m_plot->addLayer("roofs", m_plot->layer("trails"), QCustomPlot::limAbove);
    m_plot->addLayer("selected", m_plot->layer("main"), QCustomPlot::limAbove);

    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(QFont(font().family(), 8));
    m_plot->legend->setBrush(QColor(255, 255, 255, 220));
    m_plot->legend->setIconSize(8, 8);
    m_plot->legend->setWrap(3);  // three columns: a short legend in a small dock
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setRowSpacing(0);
    m_plot->legend->setColumnSpacing(6);
    // Top left: above every bandwidth roof, where no kernel can be.
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);

    m_timer = new QTimer(this);
    m_timer->setInterval(kTickMs);
    connect(m_timer, &QTimer::timeout, this, &RooflineView::drain);

    connect(m_plot, &QCustomPlot::afterLayout, this, &RooflineView::placeLabels);
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

RooflineView::~RooflineView() = default;

void RooflineView::setProfile(std::optional<perf::MachineProfile> profile, const QString& missingHint) {
    m_profile = std::move(profile);
    m_missingHint = missingHint.isEmpty() ? QString(kDefaultMissingHint) : missingHint;
    rebuild();
}

void RooflineView::setThreads(int threads) {
    if (threads == m_threads) return;
    m_threads = threads;
    rebuild();
}

void RooflineView::setPrecision(const QString& precision) {
    if (precision == m_precision) return;
    m_precision = precision;
    rebuild();
}

void RooflineView::setMode(perf::RooflineMode mode) {
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

void RooflineView::addPoints(const std::vector<perf::KernelSample>& samples) {
    m_pending.insert(m_pending.end(), samples.begin(), samples.end());
    if (!m_timer->isActive()) m_timer->start();
}

void RooflineView::clearPoints() {
    m_pending.clear();
    m_clearPending = true;
    if (!m_timer->isActive()) m_timer->start();
}

void RooflineView::flush() {
    m_timer->stop();
    if (m_pending.empty() && !m_clearPending) return;
    drain();
}

void RooflineView::drain() {
    if (m_pending.empty() && !m_clearPending) {
        m_timer->stop();
        return;
    }
    if (m_clearPending) {
        m_kernels.clear();
        m_clearPending = false;
    }
    for (perf::KernelSample& s : m_pending) {
        auto it = std::find_if(m_kernels.begin(), m_kernels.end(), [&](const Kernel& k) { return k.sample.name == s.name; });
        if (it == m_kernels.end()) {
            Kernel k;
            k.sample = std::move(s);
            m_kernels.push_back(std::move(k));
            continue;
        }
        if (!samePlace(it->sample, s)) {
            it->history.push_back(it->sample);
            if (it->history.size() > kMaxTrail) it->history.erase(it->history.begin());
        }
        it->sample = std::move(s);
    }
    m_pending.clear();
    rebuild();  // the one replot of this tick
}

std::vector<perf::Roof> RooflineView::drawnRoofs() const { return perf::roofsForMode(m_roofs, m_mode); }

void RooflineView::rebuild() {
    m_roofs = m_profile ? perf::chartRoofs(m_profile->roofs, m_threads, m_precision.toStdString())
                        : std::vector<perf::Roof>{};

    m_title->setText(modeTitle(m_mode));
    const QString definition = q(perf::modeDefinition(m_mode));
    const QString kernelCount = m_kernels.size() == 1 ? tr(" \u00b7 1 kernel") : tr(" \u00b7 %1 kernels").arg(m_kernels.size());
    if (m_profile && !m_roofs.empty()) {
        std::string machine = m_profile->fingerprint;
        if (auto bar = machine.find(" | "); bar != std::string::npos) machine.resize(bar);
        QString sub = definition + "\n" + tr("Roofs: %1, %2").arg(q(m_profile->target), q(machine));
        if (!m_profile->measuredAt.empty()) sub += tr(", measured %1").arg(q(m_profile->measuredAt.substr(0, 10)));
        if (m_threads > 0) sub += m_threads == 1 ? tr(" \u00b7 1 thread") : tr(" \u00b7 %1 threads").arg(m_threads);
        sub += kernelCount;
        m_subtitle->setText(sub);
        m_banner->clear();
        m_banner->hide();
    } else {
        m_subtitle->setText(definition + "\n" + tr("No measured roofs") + kernelCount);
        m_banner->setText(m_missingHint);
        m_banner->show();
    }

    m_plot->clearItems();
    m_plot->clearPlottables();
    m_roofLabels.clear();
    m_legendGraphs.clear();
    updateRanges();
    rebuildRoofs();
    rebuildDots();
    m_plot->replot();
}

std::vector<QPointF> RooflineView::positionsOf(const perf::KernelSample& s) const {
    std::vector<QPointF> out;
    const double y = perf::sampleGflops(s);
    if (!(y > 0)) return out;
    for (const perf::SampleDot& d : perf::sampleDots(s, m_mode))
        if (std::isfinite(d.ai) && d.ai > 0) out.emplace_back(d.ai, y);
    return out;
}

void RooflineView::updateRanges() {
    double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
    auto take = [&](double x, double y) {
        if (x > 0 && std::isfinite(x)) {
            xmin = std::min(xmin, x);
            xmax = std::max(xmax, x);
        }
        if (y > 0 && std::isfinite(y)) {
            ymin = std::min(ymin, y);
            ymax = std::max(ymax, y);
        }
    };
    for (const Kernel& k : m_kernels) {
        for (const QPointF& p : positionsOf(k.sample)) take(p.x(), p.y());
        for (const perf::KernelSample& h : k.history)
            for (const QPointF& p : positionsOf(h)) take(p.x(), p.y());
    }
    const auto roofs = drawnRoofs();
    double peak = 0;
    for (const perf::Roof& r : roofs)
        if (r.kind == perf::Roof::Kind::Compute) peak = std::max(peak, r.value);
    for (const perf::Roof& r : roofs) {
        if (r.kind == perf::Roof::Kind::Compute) take(-1, r.value);
        else if (peak > 0) take(peak / r.value, -1);
    }
    if (!(xmax > 0)) {
        xmin = 0.1;
        xmax = 10;
    }
    if (!(ymax > 0)) {
        ymin = 1;
        ymax = 100;
    }
    double xlo = decadeFloor(xmin / 2), xhi = decadeCeil(xmax * 3);
    double ylo = decadeFloor(ymin / 2), yhi = decadeCeil(ymax * 2.5);
    while (xhi / xlo < 999) {  // at least three decades
        xlo /= 10;
        if (xhi / xlo < 999) xhi *= 10;
    }
    while (yhi / ylo < 999) ylo /= 10;
    m_plot->xAxis->setRange(xlo, xhi);
    m_plot->yAxis->setRange(ylo, yhi);
}

void RooflineView::rebuildRoofs() {
    m_roofLines.clear();
    m_roofGraphs.clear();
    m_ridges.clear();
    const auto roofs = drawnRoofs();
    const double xlo = m_plot->xAxis->range().lower, xhi = m_plot->xAxis->range().upper;
    const double ylo = m_plot->yAxis->range().lower, yhi = m_plot->yAxis->range().upper;
    double peak = 0, fastest = 0;
    for (const perf::Roof& r : roofs) {
        if (r.kind == perf::Roof::Kind::Compute) peak = std::max(peak, r.value);
        else fastest = std::max(fastest, r.value);
    }
    const double logSpanX = std::log10(xhi / xlo), logSpanY = std::log10(yhi / ylo);

    // Compute ceilings within 3 % of each other (ADD and MUL usually) share one line and label.
    struct Drawn {
        perf::Roof roof;
        QString label;
    };
    std::vector<Drawn> drawn;
    for (const perf::Roof& r : roofs) {
        if (r.kind == perf::Roof::Kind::Compute) {
            auto same = std::find_if(drawn.begin(), drawn.end(), [&](const Drawn& d) {
                return d.roof.kind == perf::Roof::Kind::Compute && std::fabs(d.roof.value - r.value) <= 0.03 * d.roof.value;
            });
            if (same != drawn.end()) {
                same->roof.name = mergedName(same->roof.name, r.name);
                same->roof.value = std::max(same->roof.value, r.value);
                same->label = q(perf::roofLabel(same->roof));
                continue;
            }
        }
        drawn.push_back({r, q(perf::roofLabel(r))});
    }

    QFont labelFont(font().family(), 8);
    int slantedIndex = 0, flatIndex = 0;
    for (const Drawn& d : drawn) {
        const perf::Roof& r = d.roof;
        RoofLine line;
        line.label = d.label;
        line.bandwidth = r.kind == perf::Roof::Kind::Bandwidth;
        if (line.bandwidth) {
            const double xEnd = peak > 0 ? std::min(peak / r.value, xhi) : xhi;
            line.start = QPointF(xlo, r.value * xlo);
            line.end = QPointF(xEnd, r.value * xEnd);
            if (peak > 0) m_ridges.emplace_back(peak / r.value, peak);
        } else {
            const double xStart = fastest > 0 ? std::max(r.value / fastest, xlo) : xlo;
            line.start = QPointF(xStart, r.value);
            line.end = QPointF(xhi, r.value);
        }
        const QColor colour = line.bandwidth ? kBandwidthColour : kComputeColour;
        auto* g = m_plot->addGraph();
        g->setLayer("roofs");
        g->removeFromLegend();
        QPen pen(colour, 1.8);
        if (!line.bandwidth && r.value < peak) pen.setStyle(Qt::DashLine);  // ceilings under the peak
        g->setPen(pen);
        g->addData(line.start.x(), line.start.y());
        g->addData(line.end.x(), line.end.y());
        g->setName(line.label);
        g->setSelectable(QCP::stNone);

        auto* text = new QCPItemText(m_plot);
        text->setLayer("roofs");
        text->setText(line.label);
        text->setFont(labelFont);
        text->setColor(colour);
        text->setPadding(QMargins(1, 0, 1, 3));  // clear of the line it labels
        text->setClipToAxisRect(true);
        QPointF anchor;
        if (line.bandwidth) {
            // Staggered along x so that labels of parallel roofs do not stack on each other, and
            // moved right until the line is inside the plot.
            double x = xlo * std::pow(10.0, logSpanX * (0.02 + 0.06 * slantedIndex++));
            const double yMinVisible = ylo * std::pow(10.0, logSpanY * 0.04);
            if (r.value * x < yMinVisible) x = yMinVisible / r.value;
            x = std::min(x, line.end.x() / std::pow(10.0, logSpanX * 0.12));
            anchor = QPointF(x, r.value * x);
            text->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        } else {
            const double x = xhi / std::pow(10.0, logSpanX * (0.01 + 0.3 * flatIndex++));
            anchor = QPointF(x, r.value);
            // The peak's label above its line; lower ceilings' below theirs, in the compute-bound
            // region right of the ridges, where no slanted roof crosses.
            if (r.value < peak) {
                text->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
                text->setPadding(QMargins(1, 3, 1, 0));
            } else {
                text->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
            }
        }
        text->position->setType(QCPItemPosition::ptPlotCoords);
        text->position->setCoords(anchor);
        m_roofLabels.push_back({text, anchor, line.bandwidth, r.value, line.bandwidth ? line.end.x() : line.start.x()});
        m_roofLines.push_back(line);
        m_roofGraphs.push_back(g);
    }

    if (!m_ridges.empty()) {
        auto* ridges = m_plot->addGraph();
        ridges->setLayer("roofs");
        ridges->removeFromLegend();
        ridges->setLineStyle(QCPGraph::lsNone);
        ridges->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(kComputeColour, 1.2), Qt::white, 9));
        ridges->setSelectable(QCP::stNone);
        std::vector<QPointF> sorted = m_ridges;
        std::sort(sorted.begin(), sorted.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
        for (const QPointF& p : sorted) ridges->addData(p.x(), p.y());
    }
}

QColor RooflineView::colourFor(const QString& key) {
    auto it = m_colours.find(key);
    if (it != m_colours.end()) return it->second;
    static const QColor palette[] = {QColor("#4e79a7"), QColor("#f28e2b"), QColor("#59a14f"), QColor("#e15759"),
                                     QColor("#b07aa1"), QColor("#76b7b2"), QColor("#edc948"), QColor("#9c755f"),
                                     QColor("#ff9da7"), QColor("#bab0ac")};
    const std::size_t n = m_colours.size();
    QColor c = n < std::size(palette) ? palette[n] : QColor::fromHsv(static_cast<int>((n * 47) % 360), 160, 200);
    m_colours[key] = c;
    return c;
}

QString RooflineView::colourKey(const QString& kernel) const {
    for (const Kernel& k : m_kernels)
        if (q(k.sample.name) == kernel)
            return k.sample.group.empty() ? "op " + q(k.sample.opType) : "group " + q(k.sample.group);
    return {};
}

void RooflineView::rebuildDots() {
    const bool joined = m_mode == perf::RooflineMode::Hierarchical;
    std::vector<QString> legendKeys;
    for (Kernel& k : m_kernels) {
        k.curve = nullptr;
        k.trail = nullptr;
        const QString name = q(k.sample.name);
        const QString key = colourKey(name);
        const QColor colour = colourFor(key);
        if (std::find(legendKeys.begin(), legendKeys.end(), key) == legendKeys.end()) legendKeys.push_back(key);
        const bool selected = name == m_selected;

        if (!k.history.empty()) {
            auto* trail = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
            trail->setLayer("trails");
            trail->removeFromLegend();
            QColor faint = colour;
            faint.setAlpha(70);
            trail->setPen(QPen(faint, 1.0, Qt::DotLine));
            trail->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(faint, 1.0), QColor(255, 255, 255, 0), 6));
            trail->setLineStyle(joined ? QCPCurve::lsNone : QCPCurve::lsLine);
            int t = 0;
            for (const perf::KernelSample& h : k.history)
                for (const QPointF& p : positionsOf(h)) trail->addData(t++, p.x(), p.y());
            if (!joined)
                for (const QPointF& p : positionsOf(k.sample)) trail->addData(t++, p.x(), p.y());
            trail->setSelectable(QCP::stNone);
            k.trail = trail;
        }

        auto* curve = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
        curve->setLayer(selected ? "selected" : "main");
        curve->removeFromLegend();
        curve->setName(name);
        curve->setLineStyle(joined ? QCPCurve::lsLine : QCPCurve::lsNone);
        curve->setPen(QPen(colour, 1.2));
        const QPen outline = selected ? QPen(Qt::black, 2.0) : QPen(colour.darker(140), 1.0);
        curve->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, outline, colour, selected ? 12 : 7));
        curve->setSelectable(QCP::stNone);
        int t = 0;
        for (const QPointF& p : positionsOf(k.sample)) curve->addData(t++, p.x(), p.y());
        k.curve = curve;
    }
    for (const QString& key : legendKeys) {
        auto* g = m_plot->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        const QColor colour = colourFor(key);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QPen(colour.darker(140), 1.0), colour, 7));
        g->setName(key.startsWith("op ") ? key.mid(3) : tr("fused: %1").arg(key.mid(6)));
        g->setSelectable(QCP::stNone);
        m_legendGraphs.push_back(g);
    }
    m_plot->legend->setVisible(!legendKeys.empty());
}

void RooflineView::placeLabels() {
    // Slanted labels follow the pixel slope of y = B x, which depends on the axis rect's aspect,
    // and slide along their line to the first place (from the left) where they cover no kernel
    // dot and no other label. Positions are pixels here, so this runs after every layout.
    QCPAxis* xa = m_plot->xAxis;
    QCPAxis* ya = m_plot->yAxis;
    const QCPRange xr = xa->range(), yr = ya->range();
    const double dx = xa->coordToPixel(xr.lower * 10) - xa->coordToPixel(xr.lower);
    const double dy = ya->coordToPixel(yr.lower * 10) - ya->coordToPixel(yr.lower);
    const double angle = (dx > 0) ? std::atan2(dy, dx) * 180.0 / M_PI : -45.0;
    const QPointF dir(std::cos(angle * M_PI / 180.0), std::sin(angle * M_PI / 180.0));
    const QPointF up(dir.y(), -dir.x());  // the text's "up" on screen
    const QRectF area = m_plot->axisRect()->rect();

    // What a label must not cover: kernel dots and ridge markers (with a margin), and the roof
    // lines other than its own (sampled every 4 pixels).
    struct Obstacle {
        QPointF at;
        double margin;
        int line;  ///< index into m_roofLines, -1 for markers
    };
    std::vector<Obstacle> obstacles;
    for (const Kernel& k : m_kernels)
        for (const QPointF& p : positionsOf(k.sample))
            obstacles.push_back({QPointF(xa->coordToPixel(p.x()), ya->coordToPixel(p.y())), 5, -1});
    for (const QPointF& p : m_ridges) obstacles.push_back({QPointF(xa->coordToPixel(p.x()), ya->coordToPixel(p.y())), 5, -1});
    for (std::size_t i = 0; i < m_roofLines.size(); ++i) {
        const QPointF a(xa->coordToPixel(m_roofLines[i].start.x()), ya->coordToPixel(m_roofLines[i].start.y()));
        const QPointF b(xa->coordToPixel(m_roofLines[i].end.x()), ya->coordToPixel(m_roofLines[i].end.y()));
        const int steps = std::clamp(static_cast<int>(std::hypot(b.x() - a.x(), b.y() - a.y()) / 4), 1, 2000);
        for (int j = 0; j <= steps; ++j)
            obstacles.push_back({a + (b - a) * (static_cast<double>(j) / steps), 1, static_cast<int>(i)});
    }

    struct Box {
        QPointF origin;  ///< bottom-left corner, pixels
        double w, h;
        QPointF dir, up;  ///< the box's unit axes (along the text, towards its top)
        bool contains(const QPointF& p, QPointF d, QPointF n, double margin) const {
            const QPointF r = p - origin;
            const double u = r.x() * d.x() + r.y() * d.y(), v = r.x() * n.x() + r.y() * n.y();
            return u >= -margin && u <= w + margin && v >= -margin && v <= h + margin;
        }
    };
    std::vector<Box> placed;
    const double logSpan = std::log10(xr.upper / xr.lower);
    for (std::size_t li = 0; li < m_roofLabels.size(); ++li) {
        const RoofLabel& l = m_roofLabels[li];
        l.item->setRotation(l.slanted ? angle : 0.0);
        if (!(dx > 0) || !(l.value > 0)) continue;
        // Slanted labels sit left-aligned on their line, flat ones right-aligned above (or, when
        // top-aligned, below) theirs.
        const bool below = !l.slanted && (l.item->positionAlignment() & Qt::AlignTop);
        const QPointF d = l.slanted ? dir : QPointF(1, 0), n = l.slanted ? up : QPointF(0, below ? 1 : -1);
        const QFontMetricsF fm(l.item->font());
        const double w = fm.horizontalAdvance(l.item->text()) + 4, h = fm.height() + 3;
        auto pointAt = [&](double f) {
            if (l.slanted) {
                const double x = xr.lower * std::pow(10.0, logSpan * f);
                return QPointF(x, l.value * x);
            }
            return QPointF(xr.upper / std::pow(10.0, logSpan * f), l.value);
        };
        std::optional<QPointF> best, firstValid;
        for (double f = 0.01; f <= 0.9 && !best; f += 0.02) {
            const QPointF at = pointAt(f);
            const QPointF anchor(xa->coordToPixel(at.x()), ya->coordToPixel(at.y()));
            const Box box{l.slanted ? anchor : anchor - d * w, w, h, d, n};
            // Inside the plot, and within the line's extent.
            const QPointF farEnd = box.origin + d * w, top = box.origin + n * h;
            if (!area.contains(box.origin) || !area.contains(farEnd) || !area.contains(top)) continue;
            if (l.slanted ? farEnd.x() > xa->coordToPixel(l.xLimit) : box.origin.x() < xa->coordToPixel(l.xLimit))
                continue;
            if (!firstValid) firstValid = at;
            if (m_plot->legend->visible()) {
                const QRectF legend = QRectF(m_plot->legend->outerRect()).adjusted(-3, -3, 3, 3);
                bool hit = false;
                for (const QPointF& c : {box.origin, box.origin + d * w, box.origin + n * h, box.origin + d * w + n * h})
                    hit = hit || legend.contains(c);
                for (const QPointF& c : {legend.topLeft(), legend.topRight(), legend.bottomLeft(), legend.bottomRight()})
                    hit = hit || box.contains(c, d, n, 0);
                if (hit) continue;
            }
            bool clear = std::none_of(obstacles.begin(), obstacles.end(), [&](const Obstacle& o) {
                return o.line != static_cast<int>(li) && box.contains(o.at, d, n, o.margin);
            });
            // Approximate for boxes of different angles: corners of one inside the other.
            for (const Box& other : placed) {
                for (const QPointF& c : {box.origin, box.origin + d * w, box.origin + n * h, box.origin + d * w + n * h})
                    clear = clear && !other.contains(c, other.dir, other.up, 1);
                for (const QPointF& c : {other.origin, other.origin + other.dir * other.w, other.origin + other.up * other.h,
                                         other.origin + other.dir * other.w + other.up * other.h})
                    clear = clear && !box.contains(c, d, n, 1);
            }
            if (clear) best = at;
        }
        const QPointF at = best ? *best : firstValid ? *firstValid : l.anchor;
        l.item->position->setCoords(at);
        const QPointF anchor(xa->coordToPixel(at.x()), ya->coordToPixel(at.y()));
        placed.push_back({l.slanted ? anchor : anchor - d * w, w, h, d, n});
    }
}

QString RooflineView::hitTest(const QPoint& pixel, double radius) const {
    QString best;
    double bestD = radius * radius;
    for (const Kernel& k : m_kernels) {
        for (const QPointF& p : positionsOf(k.sample)) {
            const double px = m_plot->xAxis->coordToPixel(p.x()), py = m_plot->yAxis->coordToPixel(p.y());
            const double d = (px - pixel.x()) * (px - pixel.x()) + (py - pixel.y()) * (py - pixel.y());
            if (d <= bestD) {
                bestD = d;
                best = q(k.sample.name);
            }
        }
    }
    return best;
}

void RooflineView::setSelectedKernel(const QString& name) {
    if (name == m_selected) return;
    m_selected = name;
    bool known = false;
    for (const Kernel& k : m_kernels) known = known || q(k.sample.name) == name;
    // Restyle in place (no full rebuild): the previous and the new selection.
    for (Kernel& k : m_kernels) {
        if (!k.curve) continue;
        const QString kn = q(k.sample.name);
        const bool selected = kn == m_selected;
        const QColor colour = m_colours.count(colourKey(kn)) ? m_colours.at(colourKey(kn)) : QColor(Qt::gray);
        const QPen outline = selected ? QPen(Qt::black, 2.0) : QPen(colour.darker(140), 1.0);
        k.curve->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, outline, colour, selected ? 12 : 7));
        k.curve->setLayer(selected ? "selected" : "main");
    }
    if (known || name.isEmpty()) m_plot->replot();
}

QString RooflineView::tooltipText(const QString& kernel) const {
    const Kernel* found = nullptr;
    for (const Kernel& k : m_kernels)
        if (q(k.sample.name) == kernel) found = &k;
    if (!found) return {};
    const perf::KernelSample& s = found->sample;
    QStringList ops;
    for (const auto& o : s.ops) ops << q(o);
    QStringList lines;
    lines << q(s.name);
    lines << tr("ops: %1").arg(ops.isEmpty() ? q(s.opType) : ops.join(", "));
    const auto dots = perf::sampleDots(s, m_mode);
    if (m_mode == perf::RooflineMode::Hierarchical) {
        QStringList parts;
        for (const auto& d : dots) parts << q(d.level) + " " + q(perf::formatSignificant(d.ai));
        lines << tr("AI: %1 FLOP/byte (%2)").arg(parts.join(", "), modeTag(m_mode));
    } else {
        lines << tr("AI: %1 FLOP/byte (%2)").arg(q(perf::formatSignificant(dots.front().ai)), modeTag(m_mode));
    }
    lines << tr("performance: %1 GFLOP/s").arg(q(perf::formatSignificant(perf::sampleGflops(s))));
    if (m_roofs.empty()) {
        lines << tr("bound: no measured roofs");
    } else {
        auto a = perf::analyseSample(s, m_roofs, m_mode);
        if (!a) {
            const auto* e = a.diagnostics().firstError();
            lines << tr("bound: %1").arg(e ? q(e->message) : tr("cannot be computed"));
        } else {
            lines << tr("bound: %1 GFLOP/s").arg(q(perf::formatSignificant(a->bound)));
            lines << tr("% of bound: %1 %").arg(a->percentOfBound, 0, 'f', 1);
            lines << tr("binding roof: %1").arg(q(a->bindingRoof));
        }
    }
    if (!s.exactCounts) lines << tr("(byte counts bounded: data-dependent control flow)");
    return lines.join('\n');
}

QString RooflineView::title() const { return m_title->text() + '\n' + m_subtitle->text(); }

QString RooflineView::bannerText() const { return m_banner->isHidden() ? QString() : m_banner->text(); }

std::vector<RooflineView::RoofLine> RooflineView::roofLines() const {
    // Read back from the plotted graphs, so that tests see what is drawn.
    std::vector<RoofLine> out;
    for (std::size_t i = 0; i < m_roofGraphs.size(); ++i) {
        const QCPGraph* g = m_roofGraphs[i];
        if (g->data()->size() != 2) continue;
        RoofLine l = m_roofLines[i];
        l.start = QPointF(g->data()->at(0)->key, g->data()->at(0)->value);
        l.end = QPointF(g->data()->at(1)->key, g->data()->at(1)->value);
        out.push_back(l);
    }
    return out;
}

std::vector<QPointF> RooflineView::ridgePoints() const { return m_ridges; }

std::vector<QPointF> RooflineView::dotPositions(const QString& kernel) const {
    std::vector<QPointF> out;
    for (const Kernel& k : m_kernels) {
        if (q(k.sample.name) != kernel || !k.curve) continue;
        for (auto it = k.curve->data()->constBegin(); it != k.curve->data()->constEnd(); ++it)
            out.emplace_back(it->key, it->value);
    }
    return out;
}

std::vector<QPointF> RooflineView::trailPositions(const QString& kernel) const {
    std::vector<QPointF> out;
    for (const Kernel& k : m_kernels) {
        if (q(k.sample.name) != kernel || !k.trail) continue;
        for (const perf::KernelSample& h : k.history)
            for (const QPointF& p : positionsOf(h)) out.push_back(p);
    }
    return out;
}

QStringList RooflineView::kernelNames() const {
    QStringList out;
    for (const Kernel& k : m_kernels) out << q(k.sample.name);
    return out;
}

bool RooflineView::exportTo(const QString& path, int width, int height, QString* error) {
    flush();
    if (width <= 0 || height <= 0) {
        const bool laidOut = m_plot->isVisible() && m_plot->width() > 100 && m_plot->height() > 100;
        width = laidOut ? m_plot->width() : kDefaultExportWidth;
        height = laidOut ? m_plot->height() : kDefaultExportHeight;
    }
    return roofline_detail::exportPlot(m_plot, path, width, height, m_title->text(), "Tessera roofline chart", error);
}

}  // namespace tessera::views
