#pragma once
/// @file
/// The Program dock's contents: a banner line (why the text is read-only, e.g. "Exported from
/// ONNX: File > Save Program As... to edit it as a program"; hidden when empty) above the
/// ProgramEditor, or a placeholder when no program is open.
///
/// Thread rules: UI thread only.

#include <QWidget>

class QLabel;
class QStackedWidget;

namespace tessera::views {

class ProgramEditor;

class ProgramPanel : public QWidget {
    Q_OBJECT
public:
    explicit ProgramPanel(QWidget* parent = nullptr);

    ProgramEditor* editor() const { return m_editor; }
    /// Shows `text` in the editor; read-only with a banner when `banner` is not empty.
    void showProgram(const QString& text, bool readOnly, const QString& banner = QString());
    /// No program: the editor is replaced by `message`.
    void showPlaceholder(const QString& message);
    bool hasProgram() const;
    QString bannerText() const;
    bool bannerVisible() const;
    QString placeholderText() const;

private:
    QLabel* m_banner;
    ProgramEditor* m_editor;
    QLabel* m_placeholder;
    QStackedWidget* m_stack;
};

}  // namespace tessera::views
