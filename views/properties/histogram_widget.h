#pragma once
/// @file
/// A small custom-painted bar histogram (e.g. of a weight tensor's values) with its min and max
/// under the axis. Thread rules: UI thread only.

#include <cstdint>
#include <vector>

#include <QWidget>

namespace tessera::views {

class HistogramWidget : public QWidget {
    Q_OBJECT
public:
    explicit HistogramWidget(QWidget* parent = nullptr);

    /// Bin counts over [min, max] (equal width).
    void setData(std::vector<std::int64_t> bins, double min, double max);
    const std::vector<std::int64_t>& bins() const { return m_bins; }

    QSize sizeHint() const override { return {240, 78}; }
    QSize minimumSizeHint() const override { return {120, 60}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::vector<std::int64_t> m_bins;
    double m_min = 0, m_max = 0;
};

}  // namespace tessera::views
