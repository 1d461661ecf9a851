#include "views/code/gutter_text_edit.h"

#include <QEvent>
#include <QPaintEvent>
#include <QResizeEvent>

namespace tessera::views {

/// The gutter: a plain widget whose painting and events its editor handles.
class GutterWidget : public QWidget {
public:
    explicit GutterWidget(GutterTextEdit* editor) : QWidget(editor), m_editor(editor) {}
    QSize sizeHint() const override { return {m_editor->gutterWidth(), 0}; }

protected:
    void paintEvent(QPaintEvent* event) override { m_editor->paintGutter(event); }
    // Only what a subclass handles (tooltips) is forwarded: the widget also gets events while the
    // editor is being destroyed (hiding, deactivation), when its subclass part is gone.
    bool event(QEvent* event) override
    {
        return (event->type() == QEvent::ToolTip && m_editor->gutterEvent(event)) || QWidget::event(event);
    }

private:
    GutterTextEdit* m_editor;
};

GutterTextEdit::GutterTextEdit(QWidget* parent) : QPlainTextEdit(parent), m_gutter(new GutterWidget(this))
{
    connect(this, &QPlainTextEdit::blockCountChanged, this, [this] { updateGutterWidth(); });
    connect(this, &QPlainTextEdit::updateRequest, this, &GutterTextEdit::updateGutter);
}

GutterTextEdit::~GutterTextEdit()
{
    // Before QPlainTextEdit's and QWidget's destructors run: neither the text's signals nor the
    // gutter then call back into a half-destroyed editor (gutterWidth() is the subclass's).
    disconnect(this, nullptr, this, nullptr);
    delete m_gutter;
    m_gutter = nullptr;
}

bool GutterTextEdit::gutterEvent(QEvent*) { return false; }

void GutterTextEdit::updateGutterWidth() { setViewportMargins(gutterWidth(), 0, 0, 0); }

void GutterTextEdit::updateGutter(const QRect& rect, int dy)
{
    if (!m_gutter)
        return;
    if (dy != 0)
        m_gutter->scroll(0, dy);
    else
        m_gutter->update(0, rect.y(), m_gutter->width(), rect.height());
    if (rect.contains(viewport()->rect()))
        updateGutterWidth();
}

void GutterTextEdit::resizeEvent(QResizeEvent* event)
{
    QPlainTextEdit::resizeEvent(event);
    if (!m_gutter)
        return;
    const QRect cr = contentsRect();
    m_gutter->setGeometry(QRect(cr.left(), cr.top(), gutterWidth(), cr.height()));
}

}  // namespace tessera::views
