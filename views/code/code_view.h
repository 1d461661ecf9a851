#pragma once
/// @file
/// A read-only source viewer: QPlainTextEdit with a line-number gutter, a monospace font, syntax
/// colours for its language (C++ or CUDA C: cpp_highlighter.h; PTX: ptx_highlighter.h; C++ by
/// default) and one highlighted line range (the kernel of the node selected in the graph:
/// CompiledStep::firstLine..lastLine of the generated module, or its `.entry` in the PTX).
///
/// Thread rules: UI thread only.

#include "views/code/gutter_text_edit.h"

class QSyntaxHighlighter;

namespace tessera::views {

class CodeView : public GutterTextEdit {
    Q_OBJECT
public:
    /// What the text is, for its colours.
    enum class Language { Cpp, Cuda, Ptx };

    explicit CodeView(QWidget* parent = nullptr);

    /// Switches the syntax colours (the text stays and is coloured anew).
    void setLanguage(Language language);
    Language language() const { return m_language; }
    /// The current highlighter (a CppHighlighter for Cpp and Cuda, a PtxHighlighter for Ptx).
    QSyntaxHighlighter* highlighter() const { return m_highlighter; }

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
    int gutterWidth() const override;

signals:
    /// The user clicked (pressed and released without selecting text) on line `line` (1-based):
    /// the app selects the kernel those lines belong to (linked selection).
    void lineClicked(int line);

protected:
    void mouseReleaseEvent(QMouseEvent* event) override;
    void paintGutter(QPaintEvent* event) override;

private:
    void applySelections();

    QSyntaxHighlighter* m_highlighter = nullptr;
    Language m_language = Language::Cpp;
    int m_first = 0;
    int m_last = 0;
};

}  // namespace tessera::views
