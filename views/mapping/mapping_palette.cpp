#include "views/mapping/mapping_palette.h"

#include <array>
#include <cmath>

namespace tessera::views {
namespace {

// Ordered so that the first few (the ids of small examples) are maximally distinct.
constexpr std::array<QRgb, kBaseColors> kBase = {
    0x3b75af, 0xef8636, 0x519e3e, 0xc53a32, 0x8d6bb8, 0x84584e, 0xd57dbf, 0x7f7f7f, 0xbcbc45, 0x58bbcc,
    0x9fc3e6, 0xf6bd7f, 0x9bd88a, 0xf2918c, 0xc5b0d5, 0xc49c94, 0x2e8b82, 0xe0c341, 0x5c5fa8, 0xa3473e,
};

}  // namespace

QColor categoricalColor(std::int64_t key)
{
    if (key < 0)
        return QColor(0xe4, 0xe6, 0xea);
    if (key < kBaseColors)
        return QColor::fromRgb(kBase[static_cast<std::size_t>(key)]);
    const double golden = 137.50776405;
    const double hue = std::fmod(static_cast<double>(key) * golden, 360.0) / 360.0;
    const double sat = (key / 7) % 2 == 0 ? 0.62 : 0.45;
    const double light = 0.42 + 0.12 * static_cast<double>(key % 3);
    // Returned as RGB so that colours compare equal to those read back from drawn pixels.
    return QColor::fromRgb(
        QColor::fromHslF(static_cast<float>(hue), static_cast<float>(sat), static_cast<float>(light)).rgb());
}

QColor fadedColor(const QColor& c, double amount)
{
    const auto mix = [amount](int v) { return static_cast<int>(std::lround(v + (255 - v) * amount)); };
    return QColor(mix(c.red()), mix(c.green()), mix(c.blue()));
}

QColor textColorOn(const QColor& fill)
{
    const double lum = 0.299 * fill.red() + 0.587 * fill.green() + 0.114 * fill.blue();
    return lum > 150 ? QColor(0x1a, 0x1a, 0x1a) : QColor(Qt::white);
}

}  // namespace tessera::views
