#include "views/roofline/roofline_view.h"

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <qcustomplot.h>

namespace tessera::views {

namespace {

constexpr std::size_t kMaxTrail = 16;  // previous positions kept per kernel

const char* kDefaultMissingHint =
    "No measured roofs for this machine: measure them here (Run > Measure Roofs) or run `tessera-cli roofline "
    "measure --target cpu --save`";

QString q(const std::string& s) { return QString::fromStdString(s); }

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

/// A roof's label without its value: "L2" for "L2 518 GB/s", "FP32 ADD/MUL" for
/// "FP32 ADD/MUL 64.6 GFLOP/s" (perf::roofLabel's text up to the value).
QString briefLabel(const perf::Roof& r) {
    const QString full = q(perf::roofLabel(r));
    const int cut = full.lastIndexOf(' ', full.lastIndexOf(' ') - 1);
    return cut > 0 ? full.left(cut) : full;
}

}  // namespace

RooflineView::RooflineView(QWidget* parent)
    : KernelChart("roofline", tr("Which arithmetic intensity the dots use (semantics \u00a72.4)"),
                  "Tessera roofline chart", parent),
      m_missingHint(kDefaultMissingHint) {
    m_precisionLabel = new QLabel(tr("Precision:"), this);
    m_precisionBox = new QComboBox(this);
    m_precisionBox->setObjectName("rooflinePrecision");
    m_precisionBox->setToolTip(tr("Compute precision of the flat roofs (the profile's measured precisions)"));
    m_precisionLabel->setBuddy(m_precisionBox);
    m_bar->insertWidget(2, m_precisionLabel);
    m_bar->insertWidget(3, m_precisionBox);

    m_banner = new QLabel(this);
    m_banner->setObjectName("rooflineBanner");
    m_banner->setWordWrap(true);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_banner->setStyleSheet("QLabel { background: #fff4ce; color: #5c4400; border: 1px solid #e0c060; padding: 4px; }");
    m_measureButton = new QPushButton(tr("Measure Roofs"), this);
    m_measureButton->setObjectName("rooflineMeasure");
    m_measureButton->setToolTip(tr("Measure this CPU's compute peaks and memory bandwidths now (Run > Measure Roofs)"));
    connect(m_measureButton, &QPushButton::clicked, this, &RooflineView::measureRoofsRequested);
    m_bannerRow = new QWidget(this);
    auto* bannerLayout = new QHBoxLayout(m_bannerRow);
    bannerLayout->setContentsMargins(0, 0, 0, 0);
    bannerLayout->addWidget(m_banner, 1);
    bannerLayout->addWidget(m_measureButton, 0, Qt::AlignVCenter);
    m_layout->insertWidget(1, m_bannerRow);  // between the tool bar and the plot

    m_plot->yAxis->setLabel(tr("Performance (GFLOP/s)"));
    m_plot->addLayer("trails", m_plot->layer("grid"), QCustomPlot::limAbove);
    m_plot->addLayer("roofs", m_plot->layer("trails"), QCustomPlot::limAbove);
    m_plot->addLayer("roofLabels", m_plot->layer("roofs"), QCustomPlot::limAbove);
    m_plot->addLayer("pinned", m_plot->layer("roofLabels"), QCustomPlot::limAbove);
    // Top left to begin with: above every bandwidth roof (placeLabels moves it off the dots).
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);

    connect(m_plot, &QCustomPlot::afterLayout, this, &RooflineView::placeLabels);
    connect(m_precisionBox, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index < 0) return;
        const QString p = m_precisionBox->itemData(index).toString();
        if (p == m_precision) return;
        setPrecision(p);
        emit precisionChanged(p);
    });

    fillPrecisions();
    rebuild();
}

RooflineView::~RooflineView() = default;

void RooflineView::setProfile(std::optional<perf::MachineProfile> profile, const QString& missingHint) {
    setProfileState(std::move(profile));
    m_missingHint = missingHint.isEmpty() ? QString(kDefaultMissingHint) : missingHint;
    fillPrecisions();
    rebuild();
}

void RooflineView::fillPrecisions() {
    const QStringList list = m_profile ? roofline_detail::profilePrecisions(*m_profile) : QStringList();
    QString chosen = m_precision;
    if (!list.isEmpty() && !list.contains(chosen.toLower())) chosen = list.contains("fp32") ? "fp32" : list.front();
    {
        const QSignalBlocker block(m_precisionBox);
        m_precisionBox->clear();
        for (const QString& p : list) m_precisionBox->addItem(p.toUpper(), p);
        m_precisionBox->setCurrentIndex(m_precisionBox->findData(chosen.toLower()));
    }
    m_precisionBox->setVisible(!list.isEmpty());
    m_precisionLabel->setVisible(!list.isEmpty());
    if (chosen != m_precision) {
        m_precision = chosen;  // the caller redraws
        emit precisionChanged(chosen);
    }
}

QStringList RooflineView::precisions() const {
    QStringList out;
    for (int i = 0; i < m_precisionBox->count(); ++i) out << m_precisionBox->itemData(i).toString();
    return out;
}

void RooflineView::addPoints(const std::vector<perf::KernelSample>& samples) {
    m_pending.insert(m_pending.end(), samples.begin(), samples.end());
    scheduleDrain();
}

void RooflineView::setPinnedPoints(std::vector<perf::KernelSample> pinned) {
    m_pinned = std::move(pinned);
    rebuild();
}

const RooflineView::Kernel* RooflineView::pinnedMatch(const perf::KernelSample& p) const {
    for (const Kernel& k : m_kernels)
        if (k.sample.name == p.name) return &k;
    std::vector<std::string> ops = p.ops;
    std::sort(ops.begin(), ops.end());
    if (ops.empty()) return nullptr;
    for (const Kernel& k : m_kernels) {
        std::vector<std::string> other = k.sample.ops;
        std::sort(other.begin(), other.end());
        if (other == ops) return &k;
    }
    return nullptr;
}

std::vector<QPointF> RooflineView::pinnedPositions(const QString& pinnedKernel) const {
    for (const perf::KernelSample& p : m_pinned)
        if (q(p.name) == pinnedKernel) return positionsOf(p);
    return {};
}

QString RooflineView::pinnedLink(const QString& pinnedKernel) const {
    for (const perf::KernelSample& p : m_pinned) {
        if (q(p.name) != pinnedKernel) continue;
        const Kernel* k = pinnedMatch(p);
        return k && !positionsOf(k->sample).empty() && !positionsOf(p).empty() ? q(k->sample.name) : QString();
    }
    return {};
}

bool RooflineView::rebuildPinned() {
    bool drawn = false;
    for (const perf::KernelSample& p : m_pinned) {
        const std::vector<QPointF> at = positionsOf(p);
        if (at.empty()) continue;
        drawn = true;
        QColor colour = colourFor(roofline_detail::colourKeyOf(p));
        auto* marker = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
        marker->setLayer("pinned");
        marker->removeFromLegend();
        marker->setSelectable(QCP::stNone);
        marker->setLineStyle(QCPCurve::lsNone);
        marker->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(colour, 1.5), QColor(255, 255, 255, 0), 9));
        for (std::size_t i = 0; i < at.size(); ++i) marker->addData(static_cast<double>(i), at[i].x(), at[i].y());
        const Kernel* k = pinnedMatch(p);
        if (!k) continue;
        const std::vector<QPointF> now = positionsOf(k->sample);
        QColor thin = colour;
        thin.setAlpha(150);
        for (std::size_t i = 0; i < at.size() && i < now.size(); ++i) {
            auto* link = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
            link->setLayer("pinned");
            link->removeFromLegend();
            link->setSelectable(QCP::stNone);
            link->setPen(QPen(thin, 1.0));
            link->addData(0, at[i].x(), at[i].y());
            link->addData(1, now[i].x(), now[i].y());
        }
    }
    return drawn;
}

void RooflineView::applyPending(bool clearFirst) {
    if (clearFirst) m_kernels.clear();
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
}

std::vector<const perf::KernelSample*> RooflineView::samples() const {
    std::vector<const perf::KernelSample*> out;
    for (const Kernel& k : m_kernels) out.push_back(&k.sample);
    return out;
}

std::vector<perf::Roof> RooflineView::drawnRoofs() const { return perf::roofsForMode(m_roofs, m_mode); }

void RooflineView::rebuild() {
    m_roofs = profileRoofs();
    {
        const QSignalBlocker block(m_precisionBox);  // setPrecision() from outside: the box follows
        const int index = m_precisionBox->findData(m_precision.toLower());
        if (index >= 0) m_precisionBox->setCurrentIndex(index);
    }

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
        m_bannerRow->hide();
    } else {
        m_subtitle->setText(definition + "\n" + tr("No measured roofs") + kernelCount);
        m_banner->setText(m_missingHint);
        m_banner->show();
        m_measureButton->setVisible(m_missingHint == QLatin1String(kDefaultMissingHint));
        m_bannerRow->show();
    }

    clearChart();
    m_roofLabels.clear();
    m_placed.clear();
    updateRanges();
    rebuildRoofs();
    rebuildDots();
    m_plot->replot();
}

std::vector<QPointF> RooflineView::positionsOf(const perf::KernelSample& s) const {
    std::vector<QPointF> out;
    for (const PlottedDot& d : dotsOf(s, perf::sampleGflops(s))) out.push_back(d.at);
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
    for (const perf::KernelSample& s : m_pinned)
        for (const QPointF& p : positionsOf(s)) take(p.x(), p.y());
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
        text->setLayer("roofLabels");
        text->setText(line.label);
        text->setBrush(QColor(255, 255, 255, 210));  // readable where it must cross another line
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
        m_roofLabels.push_back({text, anchor, line.bandwidth, r.value, line.bandwidth ? line.end.x() : line.start.x(),
                                d.label, briefLabel(r), static_cast<int>(m_roofLines.size())});
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

void RooflineView::rebuildDots() {
    const bool joined = m_mode == perf::RooflineMode::Hierarchical;
    for (Kernel& k : m_kernels) {
        k.trail = nullptr;
        const QColor colour = colourFor(roofline_detail::colourKeyOf(k.sample));
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
        plotKernel(k.sample, dotsOf(k.sample, perf::sampleGflops(k.sample)));
    }
    const bool pinnedShown = rebuildPinned();
    finishKernels();
    if (pinnedShown) {
        // Hollow circles are otherwise unexplained: the legend says what they are.
        auto* key = m_plot->addGraph();
        key->setLineStyle(QCPGraph::lsNone);
        const QColor grey(110, 110, 110);
        key->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(grey, 1.5), QColor(255, 255, 255, 0), 9));
        key->setName(tr("pinned run"));
        key->setSelectable(QCP::stNone);
        m_plot->legend->setVisible(true);
    }
}

void RooflineView::placeLabels() {
    // Slanted labels follow the pixel slope of y = B x, which depends on the axis rect's aspect,
    // so positions are pixels here and this runs after every layout. Each label slides along its
    // line (slanted: from the left; flat: from the right) over candidate places. A place is
    // allowed when the label's box lies in the plot, along its own line's extent, and overlaps
    // neither the legend nor a label placed before; among those the first of least cost is
    // taken, a cost of 10 per kernel dot or ridge marker covered and 1 per sample (every 4 px)
    // of another roof line crossed. When the full text has no allowed place the value is
    // dropped; when that has none either the label is hidden.
    m_placed.clear();
    QCPAxis* xa = m_plot->xAxis;
    QCPAxis* ya = m_plot->yAxis;
    const QCPRange xr = xa->range(), yr = ya->range();
    const double dx = xa->coordToPixel(xr.lower * 10) - xa->coordToPixel(xr.lower);
    const double dy = ya->coordToPixel(yr.lower * 10) - ya->coordToPixel(yr.lower);
    const double angle = (dx > 0) ? std::atan2(dy, dx) * 180.0 / M_PI : -45.0;
    const QPointF dir(std::cos(angle * M_PI / 180.0), std::sin(angle * M_PI / 180.0));
    const QPointF up(dir.y(), -dir.x());  // the text's "up" on screen
    const QRectF area = m_plot->axisRect()->rect();

    struct Obstacle {
        QPointF at;
        double margin;
        int line;     ///< index into m_roofLines, -1 for markers
        double cost;
    };
    std::vector<Obstacle> obstacles;
    for (const Kernel& k : m_kernels)
        for (const QPointF& p : positionsOf(k.sample))
            obstacles.push_back({QPointF(xa->coordToPixel(p.x()), ya->coordToPixel(p.y())), 5, -1, 10});
    for (const QPointF& p : m_ridges)
        obstacles.push_back({QPointF(xa->coordToPixel(p.x()), ya->coordToPixel(p.y())), 5, -1, 10});
    for (std::size_t i = 0; i < m_roofLines.size(); ++i) {
        const QPointF a(xa->coordToPixel(m_roofLines[i].start.x()), ya->coordToPixel(m_roofLines[i].start.y()));
        const QPointF b(xa->coordToPixel(m_roofLines[i].end.x()), ya->coordToPixel(m_roofLines[i].end.y()));
        const int steps = std::clamp(static_cast<int>(std::hypot(b.x() - a.x(), b.y() - a.y()) / 4), 1, 2000);
        for (int j = 0; j <= steps; ++j)
            obstacles.push_back({a + (b - a) * (static_cast<double>(j) / steps), 1, static_cast<int>(i), 1});
    }
    const bool legend = m_plot->legend->visible();
    if (legend && !m_kernels.empty()) {
        // The legend goes to the corner of the axis rect that covers the fewest kernel dots (top
        // left first: above every bandwidth roof, empty unless there are no roofs or kernels beat
        // their DRAM bound). Moving it does not move the dots, so the next layout keeps it.
        const QSizeF size = QRectF(m_plot->legend->outerRect()).size() + QSizeF(6, 6);
        const Qt::Alignment corners[] = {Qt::AlignTop | Qt::AlignLeft, Qt::AlignTop | Qt::AlignRight,
                                         Qt::AlignBottom | Qt::AlignRight, Qt::AlignBottom | Qt::AlignLeft};
        auto rectAt = [&](Qt::Alignment a) {
            const double x = (a & Qt::AlignLeft) ? area.left() : area.right() - size.width();
            const double y = (a & Qt::AlignTop) ? area.top() : area.bottom() - size.height();
            return QRectF(QPointF(x, y), size);
        };
        Qt::Alignment best = corners[0];
        int bestCovered = -1;
        for (Qt::Alignment a : corners) {
            const QRectF r = rectAt(a).adjusted(-5, -5, 5, 5);
            int covered = 0;
            for (const Obstacle& o : obstacles)
                covered += (o.line < 0 && r.contains(o.at)) ? 1 : 0;
            if (bestCovered < 0 || covered < bestCovered) {
                best = a;
                bestCovered = covered;
            }
        }
        QCPLayoutInset* inset = m_plot->axisRect()->insetLayout();
        if (inset->insetAlignment(0) != best) {
            inset->setInsetAlignment(0, best);
            m_plot->replot(QCustomPlot::rpQueuedReplot);
        }
    }
    const QRectF legendRect = legend ? QRectF(m_plot->legend->outerRect()).adjusted(-3, -3, 3, 3) : QRectF();
    const QPolygonF legendBox(legendRect);

    std::vector<QPolygonF> placed;
    const double logSpan = std::log10(xr.upper / xr.lower);
    for (const RoofLabel& l : m_roofLabels) {
        l.item->setRotation(l.slanted ? angle : 0.0);
        PlacedLabel record{QString(), l.full, QPolygonF()};
        if (!(dx > 0) || !(l.value > 0)) {
            l.item->setVisible(false);
            m_placed.push_back(record);
            continue;
        }
        // Slanted labels sit left-aligned on their line, flat ones right-aligned above (or, when
        // top-aligned, below) theirs.
        const bool below = !l.slanted && (l.item->positionAlignment() & Qt::AlignTop);
        const QPointF d = l.slanted ? dir : QPointF(1, 0), n = l.slanted ? up : QPointF(0, below ? 1 : -1);
        const QFontMetricsF fm(l.item->font());
        auto pointAt = [&](double f) {
            if (l.slanted) {
                const double x = xr.lower * std::pow(10.0, logSpan * f);
                return QPointF(x, l.value * x);
            }
            return QPointF(xr.upper / std::pow(10.0, logSpan * f), l.value);
        };
        bool done = false;
        for (const QString& text : {l.full, l.brief}) {
            const double w = fm.horizontalAdvance(text) + 4, h = fm.height() + 3;
            std::optional<QPointF> best;
            QPolygonF bestBox;
            double bestCost = INFINITY;
            for (double f = 0.005; f <= 0.95 && bestCost > 0; f += 0.01) {
                const QPointF at = pointAt(f);
                const QPointF anchor(xa->coordToPixel(at.x()), ya->coordToPixel(at.y()));
                const QPointF origin = l.slanted ? anchor : anchor - d * w;  // the box's corner on the line
                const QPolygonF box({origin, origin + d * w, origin + d * w + n * h, origin + n * h});
                bool inside = true;
                for (const QPointF& c : box) inside = inside && area.contains(c);
                if (!inside) continue;
                // Within the line's extent.
                if (l.slanted ? (origin + d * w).x() > xa->coordToPixel(l.xLimit) : origin.x() < xa->coordToPixel(l.xLimit))
                    continue;
                // Never over the legend or another label (1 px apart at least).
                const QPolygonF grown({origin - d - n, origin + d * (w + 1) - n, origin + d * (w + 1) + n * (h + 1),
                                       origin - d + n * (h + 1)});
                if (legend && grown.intersects(legendBox)) continue;
                if (std::any_of(placed.begin(), placed.end(), [&](const QPolygonF& p) { return grown.intersects(p); }))
                    continue;
                double cost = 0;
                for (const Obstacle& o : obstacles) {
                    if (o.line == l.line) continue;
                    const QPointF r = o.at - origin;
                    const double u = r.x() * d.x() + r.y() * d.y(), v = r.x() * n.x() + r.y() * n.y();
                    if (u >= -o.margin && u <= w + o.margin && v >= -o.margin && v <= h + o.margin) cost += o.cost;
                }
                if (cost < bestCost) {
                    bestCost = cost;
                    best = at;
                    bestBox = box;
                }
            }
            if (!best) continue;
            l.item->setText(text);
            l.item->setVisible(true);
            l.item->position->setCoords(*best);
            placed.push_back(bestBox);
            record.text = text;
            record.box = bestBox;
            done = true;
            break;
        }
        if (!done) l.item->setVisible(false);
        m_placed.push_back(record);
    }
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
    lines << roofline_detail::aiLines(s, m_mode);
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

std::vector<QPointF> RooflineView::trailPositions(const QString& kernel) const {
    std::vector<QPointF> out;
    for (const Kernel& k : m_kernels) {
        if (q(k.sample.name) != kernel || !k.trail) continue;
        for (const perf::KernelSample& h : k.history)
            for (const QPointF& p : positionsOf(h)) out.push_back(p);
    }
    return out;
}

std::vector<RooflineView::PlacedLabel> RooflineView::roofLabels() const { return m_placed; }

}  // namespace tessera::views
