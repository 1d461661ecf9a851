#pragma once
/// @file
/// Pieces the roofline charts (RooflineView, EnergyView) share: the compact logarithmic axis
/// ticker, the axis set-up of a log-log chart, and chart export to PNG, SVG or PDF.
///
/// Thread rules: UI thread only (QCustomPlot objects).

#include <QString>

#include <qcustomplot.h>

namespace tessera::views::roofline_detail {

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

}  // namespace tessera::views::roofline_detail
