#include "views/roofline/plot_common.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QObject>
#include <QSvgGenerator>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

namespace tessera::views {

namespace {

constexpr int kTickMs = 33;  // ~30 Hz drain
constexpr int kDefaultExportWidth = 1000, kDefaultExportHeight = 650;
constexpr double kDotSize = 7, kSelectedDotSize = 12;

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

namespace roofline_detail {

QString CompactLogTicker::getTickLabel(double tick, const QLocale&, QChar, int) {
    if (tick <= 0) return {};
    const double e = std::round(std::log10(tick));
    if (std::fabs(std::log10(tick) - e) > 1e-6) return {};  // only decades get a label
    const int d = static_cast<int>(e);
    if (d < -3) return QString("1e%1").arg(d);
    if (d < 0) return QString::number(tick, 'f', -d);
    if (d < 3) return QString::number(static_cast<long long>(std::llround(tick)));
    static const char* suffix[] = {"k", "M", "G", "T", "P"};
    const int group = std::min(d / 3, 5);
    return QString::number(static_cast<long long>(std::llround(std::pow(10.0, d - 3 * group)))) + suffix[group - 1];
}

void setUpLogLogAxes(QCustomPlot* plot) {
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        QSharedPointer<CompactLogTicker> ticker(new CompactLogTicker);
        ticker->setLogBase(10);
        ticker->setSubTickCount(8);
        axis->setTicker(ticker);
        axis->grid()->setSubGridVisible(true);
        axis->grid()->setPen(QPen(QColor(200, 200, 200), 0, Qt::SolidLine));
        axis->grid()->setSubGridPen(QPen(QColor(235, 235, 235), 0, Qt::DotLine));
    }
}

bool exportPlot(QCustomPlot* plot, const QString& path, int width, int height, const QString& title,
                const QString& description, QString* error) {
    const QString ext = QFileInfo(path).suffix().toLower();
    bool ok = false;
    if (ext == "png") {
        ok = plot->savePng(path, width, height, 1.0);
    } else if (ext == "pdf") {
        ok = plot->savePdf(path, width, height, QCP::epNoCosmetic, "Tessera", title);
    } else if (ext == "svg") {
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setSize(QSize(width, height));
        generator.setViewBox(QRect(0, 0, width, height));
        generator.setTitle(title);
        generator.setDescription(description);
        QCPPainter painter;
        if (painter.begin(&generator)) {
            plot->toPainter(&painter, width, height);
            ok = painter.end();
        }
    } else {
        if (error) *error = QObject::tr("unknown chart format '.%1': use .png, .svg or .pdf").arg(ext);
        return false;
    }
    if (ok) ok = QFileInfo(path).size() > 0;
    if (!ok && error) *error = QObject::tr("cannot write '%1'").arg(path);
    return ok;
}

QString modeTag(perf::RooflineMode mode) {
    switch (mode) {
    case perf::RooflineMode::Carm: return "CARM";
    case perf::RooflineMode::Dram: return "DRAM";
    case perf::RooflineMode::Hierarchical: return "hierarchical";
    }
    return {};
}

QString colourKeyOf(const perf::KernelSample& sample) {
    if (!sample.fusionKind.empty()) return "fused " + q(sample.fusionKind);
    if (!sample.group.empty() || sample.ops.size() > 1) return "fused";
    return "op " + q(sample.opType);
}

QString legendName(const QString& key) { return key.startsWith("op ") ? key.mid(3) : key; }

QCPScatterStyle::ScatterShape levelShape(const QString& level) {
    if (level.isEmpty()) return QCPScatterStyle::ssDisc;
    switch (perf::memoryLevelRank(level.toStdString())) {
    case 0: return QCPScatterStyle::ssDisc;
    case 1: return QCPScatterStyle::ssSquare;
    case 2: return QCPScatterStyle::ssTriangle;
    case 3: return QCPScatterStyle::ssDiamond;
    case 4:
    case 5: return QCPScatterStyle::ssTriangleInverted;
    default: return QCPScatterStyle::ssCrossCircle;
    }
}

QString levelGlyph(const QString& level) {
    switch (levelShape(level)) {
    case QCPScatterStyle::ssDisc: return QString::fromUtf8("\u25cf");
    case QCPScatterStyle::ssSquare: return QString::fromUtf8("\u25a0");
    case QCPScatterStyle::ssTriangle: return QString::fromUtf8("\u25b2");
    case QCPScatterStyle::ssDiamond: return QString::fromUtf8("\u25c6");
    case QCPScatterStyle::ssTriangleInverted: return QString::fromUtf8("\u25bc");
    default: return QString::fromUtf8("\u2297");
    }
}

QString aiLines(const perf::KernelSample& sample, perf::RooflineMode mode) {
    QStringList parts, markers;
    for (const perf::SampleDot& d : perf::sampleDots(sample, mode)) {
        const QString ai = q(perf::formatSignificant(d.ai));
        if (d.level.empty()) {
            parts << ai;
        } else {
            parts << q(d.level) + " " + ai;
            markers << levelGlyph(q(d.level)) + " " + q(d.level);
        }
    }
    QString out = QObject::tr("AI: %1 FLOP/byte (%2)").arg(parts.join(", "), modeTag(mode));
    if (mode == perf::RooflineMode::Hierarchical && !markers.isEmpty())
        out += '\n' + QObject::tr("markers: %1").arg(markers.join(", "));
    return out;
}

QStringList profilePrecisions(const perf::MachineProfile& profile) {
    static const QStringList known = {"fp64", "fp32", "tf32", "bf16", "fp16"};
    std::set<QString> found;
    for (const perf::Roof& r : profile.roofs)
        if (r.kind == perf::Roof::Kind::Compute && !r.precision.empty()) found.insert(q(r.precision).toLower());
    QStringList out;
    for (const QString& p : known)
        if (found.count(p)) out << p;
    for (const QString& p : found)
        if (!known.contains(p)) out << p;
    return out;
}

}  // namespace roofline_detail


using namespace roofline_detail;

KernelChart::KernelChart(const QString& prefix, const QString& modeToolTip, const QString& exportDescription,
                         QWidget* parent)
    : QWidget(parent), m_exportDescription(exportDescription) {
    m_layout = new QVBoxLayout(this);
    m_layout->setContentsMargins(2, 2, 2, 2);
    m_layout->setSpacing(2);

    m_bar = new QHBoxLayout;
    auto* modeLabel = new QLabel(tr("Intensity:"), this);
    m_modeBox = new QComboBox(this);
    m_modeBox->setObjectName(prefix + "Mode");
    m_modeBox->addItem(tr("CARM (all bytes issued)"), static_cast<int>(perf::RooflineMode::Carm));
    m_modeBox->addItem(tr("Classic (DRAM bytes)"), static_cast<int>(perf::RooflineMode::Dram));
    m_modeBox->addItem(tr("Hierarchical (per level)"), static_cast<int>(perf::RooflineMode::Hierarchical));
    m_modeBox->setToolTip(modeToolTip);
    modeLabel->setBuddy(m_modeBox);
    m_bar->addWidget(modeLabel);
    m_bar->addWidget(m_modeBox);
    m_bar->addStretch(1);
    m_layout->addLayout(m_bar);

    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(prefix + "Plot");
    m_plot->setMinimumSize(320, 240);
    m_plot->setMouseTracking(true);
    m_layout->addWidget(m_plot, 1);

    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, QString(), QFont(font().family(), 10, QFont::Bold));
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->plotLayout()->insertRow(1);
    m_subtitle = new QCPTextElement(m_plot, QString(), QFont(font().family(), 9));
    m_subtitle->setTextColor(QColor(90, 90, 90));
    m_plot->plotLayout()->addElement(1, 0, m_subtitle);

    setUpLogLogAxes(m_plot);
    m_plot->xAxis->setLabel(tr("Arithmetic intensity (FLOP/byte)"));
    m_plot->addLayer("selected", m_plot->layer("main"), QCustomPlot::limAbove);

    m_plot->legend->setVisible(false);
    m_plot->legend->setFont(QFont(font().family(), 8));
    m_plot->legend->setBrush(QColor(255, 255, 255, 220));
    m_plot->legend->setIconSize(8, 8);
    m_plot->legend->setWrap(3);  // three columns: a short legend in a small dock
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setRowSpacing(0);
    m_plot->legend->setColumnSpacing(6);

    m_timer = new QTimer(this);
    m_timer->setInterval(kTickMs);
    connect(m_timer, &QTimer::timeout, this, &KernelChart::drain);
    connect(m_plot, &QCustomPlot::afterReplot, this, [this] {
        ++m_replots;
        emit replotted();
    });
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        const Hit hit = hitTest(e->pos());
        if (hit.kernel.isEmpty()) {
            QToolTip::hideText();
            return;
        }
        QString text = tooltipText(hit.kernel);
        const Plotted* p = plotted(hit.kernel);
        if (p && hit.dot >= 0 && !p->dots[static_cast<std::size_t>(hit.dot)].level.isEmpty()) {
            const QString level = p->dots[static_cast<std::size_t>(hit.dot)].level;
            text += '\n' + tr("this dot: %1 %2 (AI at that level)").arg(levelGlyph(level), level);
        }
        QToolTip::showText(e->globalPosition().toPoint(), text, m_plot);
    });
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
        if (e->button() != Qt::LeftButton) return;
        const QString k = hitTest(e->pos()).kernel;
        if (k.isEmpty()) return;
        setSelectedKernel(k);
        emit kernelSelected(k);
    });
    connect(m_modeBox, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index < 0) return;
        setMode(static_cast<perf::RooflineMode>(m_modeBox->itemData(index).toInt()));
    });
}

KernelChart::~KernelChart() = default;

void KernelChart::setThreads(int threads) {
    if (threads == m_threads) return;
    m_threads = threads;
    rebuild();
}

void KernelChart::setPrecision(const QString& precision) {
    if (precision == m_precision) return;
    m_precision = precision;
    rebuild();
}

void KernelChart::setMode(perf::RooflineMode mode) {
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

void KernelChart::scheduleDrain() {
    if (!m_timer->isActive()) m_timer->start();
}

void KernelChart::clearPoints() {
    discardPending();
    m_clearPending = true;  // the kernels go on the next tick
    scheduleDrain();
}

void KernelChart::flush() {
    m_timer->stop();
    if (!hasPending() && !m_clearPending) return;
    drain();
}

void KernelChart::drain() {
    if (!hasPending() && !m_clearPending) {
        m_timer->stop();
        return;
    }
    applyPending(m_clearPending);
    m_clearPending = false;
    rebuild();  // the one replot of this tick
}

std::vector<perf::Roof> KernelChart::profileRoofs() const {
    return m_profile ? perf::chartRoofs(m_profile->roofs, m_threads, m_precision.toStdString()) : std::vector<perf::Roof>{};
}

void KernelChart::clearChart() {
    m_plot->clearItems();
    m_plot->clearPlottables();
    m_plotted.clear();
}

QColor KernelChart::colourFor(const QString& key) {
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

std::vector<KernelChart::PlottedDot> KernelChart::dotsOf(const perf::KernelSample& sample, double y) const {
    std::vector<PlottedDot> out;
    if (!(y > 0) || !std::isfinite(y)) return out;
    const bool levels = m_mode == perf::RooflineMode::Hierarchical;
    for (const perf::SampleDot& d : perf::sampleDots(sample, m_mode)) {
        if (!std::isfinite(d.ai) || !(d.ai > 0)) continue;
        const QString level = levels ? q(d.level) : QString();
        out.push_back({QPointF(d.ai, y), level, levels ? levelShape(level) : QCPScatterStyle::ssDisc});
    }
    return out;
}

QCPCurve* KernelChart::plotKernel(const perf::KernelSample& sample, const std::vector<PlottedDot>& dots) {
    // Every kernel gets its colour, dots or not, so that colours follow the order of arrival.
    const QString key = colourKeyOf(sample);
    colourFor(key);
    if (dots.empty()) return nullptr;
    Plotted p;
    p.name = q(sample.name);
    p.key = key;
    p.dots = dots;
    const bool joined = m_mode == perf::RooflineMode::Hierarchical;
    p.curve = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
    p.curve->removeFromLegend();
    p.curve->setName(p.name);
    p.curve->setLineStyle(joined ? QCPCurve::lsLine : QCPCurve::lsNone);
    p.curve->setSelectable(QCP::stNone);
    int t = 0;
    for (const PlottedDot& d : dots) p.curve->addData(t++, d.at.x(), d.at.y());
    if (joined) {
        for (const PlottedDot& d : dots) {
            auto* marker = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
            marker->removeFromLegend();
            marker->setName(p.name + " " + d.level);
            marker->setLineStyle(QCPCurve::lsNone);
            marker->setSelectable(QCP::stNone);
            marker->addData(0, d.at.x(), d.at.y());
            p.markers.push_back(marker);
        }
    }
    m_plotted.push_back(std::move(p));
    style(m_plotted.back());
    return m_plotted.back().curve;
}

void KernelChart::style(Plotted& p) {
    const bool selected = p.name == m_selected;
    const QColor colour = m_colours.count(p.key) ? m_colours.at(p.key) : QColor(Qt::gray);
    const QPen outline = selected ? QPen(Qt::black, 2.0) : QPen(colour.darker(140), 1.0);
    const double size = selected ? kSelectedDotSize : kDotSize;
    const QString layer = selected ? "selected" : "main";
    p.curve->setPen(QPen(colour, 1.2));
    p.curve->setLayer(layer);
    if (p.markers.empty()) {
        p.curve->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, outline, colour, size));
        return;
    }
    p.curve->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssNone));
    for (std::size_t i = 0; i < p.markers.size(); ++i) {
        const auto shape = p.dots[i].shape;
        // Outline-only shapes need a pen in the kernel's colour to show it.
        const QPen pen = shape == QCPScatterStyle::ssCrossCircle && !selected ? QPen(colour, 1.5) : outline;
        p.markers[i]->setScatterStyle(QCPScatterStyle(shape, pen, colour, size + 1));
        p.markers[i]->setLayer(layer);
    }
}

void KernelChart::finishKernels() {
    std::vector<QString> keys;
    for (const Plotted& p : m_plotted)
        if (std::find(keys.begin(), keys.end(), p.key) == keys.end()) keys.push_back(p.key);
    for (const QString& key : keys) {
        auto* g = m_plot->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        const QColor colour = colourFor(key);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QPen(colour.darker(140), 1.0), colour, kDotSize));
        g->setName(legendName(key));
        g->setSelectable(QCP::stNone);
    }
    if (m_mode == perf::RooflineMode::Hierarchical) {
        std::vector<QString> levels;
        for (const Plotted& p : m_plotted)
            for (const PlottedDot& d : p.dots)
                if (std::find(levels.begin(), levels.end(), d.level) == levels.end()) levels.push_back(d.level);
        std::stable_sort(levels.begin(), levels.end(), [](const QString& a, const QString& b) {
            const int ra = perf::memoryLevelRank(a.toStdString()), rb = perf::memoryLevelRank(b.toStdString());
            return (ra < 0 ? 99 : ra) < (rb < 0 ? 99 : rb);
        });
        const QColor grey(130, 130, 130);
        for (const QString& level : levels) {
            auto* g = m_plot->addGraph();
            g->setLineStyle(QCPGraph::lsNone);
            g->setScatterStyle(QCPScatterStyle(levelShape(level), QPen(grey.darker(140), 1.0), grey, kDotSize + 1));
            g->setName(tr("%1 level").arg(level));
            g->setSelectable(QCP::stNone);
        }
    }
    m_plot->legend->setVisible(!keys.empty());
}

const KernelChart::Plotted* KernelChart::plotted(const QString& kernel) const {
    for (const Plotted& p : m_plotted)
        if (p.name == kernel) return &p;
    return nullptr;
}

KernelChart::Hit KernelChart::hitTest(const QPoint& pixel, double radius) const {
    Hit best;
    double bestD = radius * radius;
    for (const Plotted& p : m_plotted) {
        for (std::size_t i = 0; i < p.dots.size(); ++i) {
            const double px = m_plot->xAxis->coordToPixel(p.dots[i].at.x());
            const double py = m_plot->yAxis->coordToPixel(p.dots[i].at.y());
            const double d = (px - pixel.x()) * (px - pixel.x()) + (py - pixel.y()) * (py - pixel.y());
            if (d <= bestD) {
                bestD = d;
                best = {p.name, static_cast<int>(i)};
            }
        }
    }
    return best;
}

void KernelChart::setSelectedKernel(const QString& name) {
    if (name == m_selected) return;
    m_selected = name;
    // Restyle in place (no full rebuild).
    for (Plotted& p : m_plotted) style(p);
    const auto names = kernelNames();
    if (names.contains(name) || name.isEmpty()) m_plot->replot();
}

QString KernelChart::title() const { return m_title->text() + '\n' + m_subtitle->text(); }

std::vector<QPointF> KernelChart::dotPositions(const QString& kernel) const {
    // Read back from the plotted curve, so that tests see what is drawn.
    std::vector<QPointF> out;
    const Plotted* p = plotted(kernel);
    if (!p) return out;
    for (auto it = p->curve->data()->constBegin(); it != p->curve->data()->constEnd(); ++it)
        out.emplace_back(it->key, it->value);
    return out;
}

std::vector<KernelChart::PlottedDot> KernelChart::plottedDots(const QString& kernel) const {
    const Plotted* p = plotted(kernel);
    if (!p) return {};
    std::vector<PlottedDot> out = p->dots;
    // The markers as drawn.
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i].shape = p->markers.empty() ? p->curve->scatterStyle().shape() : p->markers[i]->scatterStyle().shape();
    return out;
}

QStringList KernelChart::legendEntries() const {
    QStringList out;
    if (!m_plot->legend->visible()) return out;
    for (int i = 0; i < m_plot->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(m_plot->legend->item(i))) out << item->plottable()->name();
    return out;
}

QString KernelChart::colourKey(const QString& kernel) const {
    for (const perf::KernelSample* s : samples())
        if (q(s->name) == kernel) return colourKeyOf(*s);
    return {};
}

QStringList KernelChart::kernelNames() const {
    QStringList out;
    for (const perf::KernelSample* s : samples()) out << q(s->name);
    return out;
}

bool KernelChart::exportTo(const QString& path, int width, int height, QString* error) {
    flush();
    if (width <= 0 || height <= 0) {
        const bool laidOut = m_plot->isVisible() && m_plot->width() > 100 && m_plot->height() > 100;
        width = laidOut ? m_plot->width() : kDefaultExportWidth;
        height = laidOut ? m_plot->height() : kDefaultExportHeight;
    }
    return exportPlot(m_plot, path, width, height, m_title->text(), m_exportDescription, error);
}

}  // namespace tessera::views
