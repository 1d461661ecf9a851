#pragma once
/// @file
/// PTX text support for the Code dock: a lexical highlighter (directives such as `.entry`,
/// `.reg .f32`, `.param`; instruction mnemonics with their type suffixes, `ld.global.f32`;
/// registers and special registers, `%r12`, `%tid.x`; labels, `$L__BB0_3:`; numbers, including
/// PTX float literals `0f3F800000`; `//` and `/* */` comments) and findPtxEntry(), the line range
/// of one kernel's `.entry` in a module.
///
/// Thread rules: PtxHighlighter: UI thread only (it belongs to a QTextDocument); findPtxEntry is
/// pure and may be called from any thread.

#include <QRegularExpression>
#include <QString>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

namespace tessera::views {

/// Lines (1-based, inclusive) of a kernel in PTX text; {0, 0} when not found.
struct PtxLines {
    int first = 0;
    int last = 0;
    bool found() const { return first > 0; }
};

/// The kernel `entry` (its symbol, e.g. "tk_conv_0", as NVRTC writes it after `.entry`) in `ptx`:
/// from the line holding `.entry <entry>` (followed by `(`, white space or the end of the line,
/// so "tk_a" does not match "tk_ab") through the line holding the `}` that closes the kernel's
/// body (braces counted outside `//` and `/* */` comments from the first `{` after the entry).
/// A body that never closes ends at the last line. Not found: {0, 0}.
PtxLines findPtxEntry(const QString& ptx, const QString& entry);

class PtxHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    enum class Kind { Plain, Directive, Instruction, Register, Label, Number, Comment };

    explicit PtxHighlighter(QTextDocument* document);

    /// The format used for a kind (Plain: default format).
    QTextCharFormat format(Kind kind) const;

protected:
    void highlightBlock(const QString& text) override;

private:
    struct Rule {
        QRegularExpression pattern;
        Kind kind;
        int group;  ///< capture group coloured (0: whole match)
    };
    std::vector<Rule> m_rules;
    QTextCharFormat m_formats[7];
};

}  // namespace tessera::views
