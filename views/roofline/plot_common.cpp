#include "views/roofline/plot_common.h"

#include <algorithm>
#include <cmath>

#include <QFileInfo>
#include <QObject>
#include <QSvgGenerator>

namespace tessera::views::roofline_detail {

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

}  // namespace tessera::views::roofline_detail
