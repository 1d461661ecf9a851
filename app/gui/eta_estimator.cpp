#include "app/gui/eta_estimator.h"

#include <algorithm>
#include <cmath>

#include <QCoreApplication>

namespace tessera::app {

void EtaEstimator::start()
{
    m_clock.start();
    m_estimate = -1;
    m_lastElapsed = 0;
}

std::optional<double> EtaEstimator::update(double fraction, double elapsedSeconds)
{
    if (!(fraction >= kMinFraction) || fraction >= 1.0 || elapsedSeconds < kMinElapsed)
        return std::nullopt;
    const double raw = elapsedSeconds * (1.0 - fraction) / fraction;
    if (m_estimate < 0) {
        m_estimate = raw;
    } else {
        const double carried = std::max(0.0, m_estimate - (elapsedSeconds - m_lastElapsed));
        m_estimate = 0.5 * raw + 0.5 * carried;
    }
    m_lastElapsed = elapsedSeconds;
    if (elapsedSeconds + m_estimate <= kMinJob)
        return std::nullopt;
    return m_estimate;
}

QString EtaEstimator::suffix(double fraction)
{
    if (!m_clock.isValid())
        return {};
    const std::optional<double> left = update(fraction, static_cast<double>(m_clock.elapsed()) / 1000.0);
    return left ? QStringLiteral(" \u00b7 ") + formatRemaining(*left) : QString();
}

QString EtaEstimator::formatRemaining(double s)
{
    auto tr = [](const char* text) { return QCoreApplication::translate("EtaEstimator", text); };
    if (s < 1.5)
        return tr("almost done");
    if (s < 10)
        return tr("about %1 s left").arg(static_cast<int>(std::lround(s)));
    if (s < 100)
        return tr("about %1 s left").arg(static_cast<int>(std::lround(s / 5) * 5));
    if (s < 3600)
        return tr("about %1 min left").arg(static_cast<int>(std::lround(s / 60)));
    const long minutes = std::lround(s / 60);
    if (minutes % 60 == 0)
        return tr("about %1 h left").arg(minutes / 60);
    return tr("about %1 h %2 min left").arg(minutes / 60).arg(minutes % 60);
}

}  // namespace tessera::app
