#pragma once
/// @file
/// GutterTextEdit: a QPlainTextEdit with a gutter (line numbers, markers) on its left margin that
/// a subclass paints. The plumbing every such editor needs (the viewport margin that follows the
/// gutter's width, scrolling the gutter with the text, its geometry on resize) lives here once;
/// CodeView and ProgramEditor derive from it.
///
/// Subclasses implement gutterWidth() and paintGutter(), may handle gutterEvent() (tooltips), and
/// call updateGutterWidth() at the end of their constructor (the base constructor cannot call the
/// subclass's gutterWidth()) and whenever the width may change.
///
/// Thread rules: UI thread only.

#include <QPlainTextEdit>

class QPaintEvent;

namespace tessera::views {

class GutterTextEdit : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit GutterTextEdit(QWidget* parent = nullptr);
    ~GutterTextEdit() override;

    /// Width of the gutter in pixels.
    virtual int gutterWidth() const = 0;

protected:
    /// Paints the region `event` asks for; paint on gutter().
    virtual void paintGutter(QPaintEvent* event) = 0;
    /// A QEvent::ToolTip of the gutter widget; true when handled.
    virtual bool gutterEvent(QEvent* event);

    /// The gutter widget (a child of the editor, left of the viewport).
    QWidget* gutter() const { return m_gutter; }
    /// Sets the viewport's left margin to gutterWidth().
    void updateGutterWidth();
    void resizeEvent(QResizeEvent* event) override;

private:
    friend class GutterWidget;
    void updateGutter(const QRect& rect, int dy);

    QWidget* m_gutter;
};

}  // namespace tessera::views
