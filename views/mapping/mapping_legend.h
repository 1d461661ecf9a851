#pragma once
/// @file
/// Legend of the mapping canvas: one swatch per colour key (worker, block or thread) with its id,
/// wrapped over a few rows; beyond what fits, a "+N more" note. Clicking a swatch emits keyClicked.
///
/// Thread rules: UI thread only.

#include <cstdint>
#include <vector>

#include <QString>
#include <QWidget>

namespace tessera::views {

class MappingLegend : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMaxRows = 3;

    explicit MappingLegend(QWidget* parent = nullptr);

    /// `count` keys named `noun` ("worker", "block", "thread"); `highlighted` is drawn framed (-1: none).
    void setKeys(std::int64_t count, const QString& noun, std::int64_t highlighted = -1);
    void setHighlighted(std::int64_t key);
    std::int64_t count() const { return m_count; }
    /// Keys with a visible swatch (the rest are summarised as "+N more").
    std::int64_t shownKeys() const;

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return {120, rowHeight() + 4}; }

signals:
    void keyClicked(qint64 key);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    struct Layout {
        std::vector<QRect> items;  ///< swatch + label rectangle per shown key
        QRect title, more;
        int height = 0;
    };
    Layout layoutFor(int width) const;
    int rowHeight() const;
    int itemWidth() const;

    std::int64_t m_count = 0;
    std::int64_t m_highlighted = -1;
    QString m_noun;
};

}  // namespace tessera::views
