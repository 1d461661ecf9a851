#pragma once
/// @file
/// A read-only source viewer: QPlainTextEdit with a line-number gutter, a monospace font, C++
/// syntax colours (cpp_highlighter.h) and one highlighted line range (the kernel of the node
/// selected in the graph: CompiledStep::firstLine..lastLine of the generated module).
///
/// Thread rules: UI thread only.

#include <QPlainTextEdit>

namespace tessera::views {

class CppHighlighter;

class CodeView : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit CodeView(QWidget* parent = nullptr);

    /// Replaces the text (clears the highlighted range).
    void setCode(const QString& text);

    /// Highlights lines first..last (1-based, inclusive; clamped to the text) and scrolls so that
    /// the range is in view, its first line near the top. first <= 0 clears the highlight.
    void highlightLines(int first, int last);
    void clearHighlight() { highlightLines(0, 0); }
    /// The highlighted range after clamping, {0, 0} when none.
    int highlightFirst() const { return m_first; }
    int highlightLast() const { return m_last; }
    /// The line (1-based) at the top of the viewport.
    int firstVisibleLine() const;

    /// Width of the line-number gutter in pixels.
    int gutterWidth() const;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    friend class CodeGutter;
    void paintGutter(QPaintEvent* event);
    void updateGutterWidth();
    void updateGutter(const QRect& rect, int dy);
    void applySelections();

    QWidget* m_gutter;
    CppHighlighter* m_highlighter;
    int m_first = 0;
    int m_last = 0;
};

}  // namespace tessera::views
