#include "app/gui/status_widgets.h"

#include <QLabel>
#include <QStatusBar>
#include <QVariant>

namespace tessera::app {
namespace {

/// Whether a status-bar widget was asked to be visible (setStatusWidgetVisible).
const char* const kWantedProperty = "tesseraStatusWanted";

}  // namespace

void setStatusWidgetVisible(QStatusBar* bar, QWidget* widget, bool visible)
{
    widget->setProperty(kWantedProperty, visible);
    widget->setVisible(visible && bar->currentMessage().isEmpty());
}

void followStatusMessages(QStatusBar* bar)
{
    QObject::connect(bar, &QStatusBar::messageChanged, bar, [bar](const QString& message) {
        // A tooltip set for one message (its details) goes with it.
        if (message != bar->property("tesseraTipFor").toString()) {
            bar->setToolTip(QString());
            bar->setProperty("tesseraTipFor", QVariant());
        }
        for (QWidget* w : bar->findChildren<QWidget*>()) {
            if (!w->property(kWantedProperty).isValid())
                continue;
            bool wanted = w->property(kWantedProperty).toBool();
            // The run's line is hidden and cleared in places that do not go through here.
            if (auto* label = qobject_cast<QLabel*>(w))
                wanted = wanted && !label->text().isEmpty();
            w->setVisible(wanted && message.isEmpty());
        }
    });
}

}  // namespace tessera::app
