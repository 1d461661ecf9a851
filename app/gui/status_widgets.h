#pragma once
/// @file
/// Status-bar widgets that give way to temporary messages. QStatusBar draws a temporary message
/// (showMessage) across its normal widgets' part; widgets shown through setStatusWidgetVisible
/// hide while one is up and come back when it goes (a label without text stays hidden).
///
/// Thread rules: UI thread only.

class QStatusBar;
class QWidget;

namespace tessera::app {

/// Shows or hides `widget`, a normal widget of `bar`; while a temporary message is up it stays
/// hidden and appears when the message goes.
void setStatusWidgetVisible(QStatusBar* bar, QWidget* widget, bool visible);

/// Makes `bar` hide and show its widgets as messages come and go (see the file comment); a
/// tooltip set on the bar for one message (property "tesseraTipFor" naming the message) goes
/// with that message.
void followStatusMessages(QStatusBar* bar);

}  // namespace tessera::app
