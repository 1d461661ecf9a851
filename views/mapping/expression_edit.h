#pragma once
/// @file
/// A one-line editor for a task-mapping expression that can mark an error range inline: the range
/// gets a red wavy underline (through QLineEdit's input-method text formats, so it scrolls with the
/// text) and the frame turns red. Columns are 1-based and inclusive, as in support::Diagnostic.
///
/// Thread rules: UI thread only.

#include <QLineEdit>

namespace tessera::views {

class ExpressionEdit : public QLineEdit {
    Q_OBJECT
public:
    explicit ExpressionEdit(QWidget* parent = nullptr);

    /// Marks columns [beginColumn, endColumn] (1-based, inclusive; clamped to the text).
    void setErrorRange(int beginColumn, int endColumn);
    void clearError();
    bool hasError() const { return m_hasError; }
    int errorBegin() const { return m_begin; }
    int errorEnd() const { return m_end; }

private:
    void applyFormats();

    bool m_hasError = false;
    int m_begin = 0, m_end = 0;
};

}  // namespace tessera::views
