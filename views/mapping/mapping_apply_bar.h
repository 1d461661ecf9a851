#pragma once
/// @file
/// The Task Mapping dock's kernel row (issue 8): which kernel the expressions belong to, where
/// its schedule comes from (the op's default, the program's `schedule` block, or the user's
/// applied mapping), and the intents "Apply" (button, Ctrl+Return anywhere in the dock) and
/// "Reset to Default". A line under it shows the outcome of the last apply: the reason a mapping
/// was refused (red) or what the kernel now compiles with.
///
/// The bar only reports intent (applyRequested / resetRequested with the kernel's node name); the
/// app validates, pushes the undoable edit and tells the bar the result (setStatus, setKernel).
///
/// Thread rules: UI thread only.

#include <QString>
#include <QWidget>

class QAction;
class QLabel;
class QPushButton;

namespace tessera::views {

/// Where the schedule a kernel compiles with comes from.
enum class ScheduleOrigin { Default, Program, User };

class MappingApplyBar : public QWidget {
    Q_OBJECT
public:
    explicit MappingApplyBar(QWidget* parent = nullptr);

    /// The kernel the dock's expressions are for (its node name and op type), where its schedule
    /// comes from and, when known, the mappings it compiles with now ("grid / block"), shown so
    /// that edits not applied yet can be told apart. Clears the status line when the kernel changes.
    void setKernel(const QString& node, const QString& opType, ScheduleOrigin origin,
                   const QString& current = QString());
    /// No kernel: the dock is a preview; Apply and Reset are disabled.
    void clearKernel();
    QString node() const { return m_node; }
    ScheduleOrigin origin() const { return m_origin; }

    /// Whether the expressions on screen parse (Apply needs them to).
    void setExpressionsValid(bool valid);
    /// While a mapping is being checked: both buttons disabled, "Checking ..." in the status line.
    void setBusy(bool busy);
    bool isBusy() const { return m_busy; }
    /// The outcome line; `error` draws it red. Empty text hides it.
    void setStatus(const QString& text, bool error);
    QString statusText() const;
    bool statusIsError() const { return m_statusError; }

    QPushButton* applyButton() const { return m_apply; }
    QPushButton* resetButton() const { return m_reset; }
    QLabel* kernelLabel() const { return m_kernel; }
    QLabel* statusLabel() const { return m_status; }
    /// "Apply Mapping" with Ctrl+Return (and Ctrl+Enter); the owner adds it to the widget whose
    /// focus scope it should cover (the panel).
    QAction* applyAction() const { return m_applyAction; }

signals:
    void applyRequested(const QString& node);
    void resetRequested(const QString& node);

private:
    void updateEnabled();
    void requestApply();

    QLabel* m_kernel;
    QPushButton* m_apply;
    QPushButton* m_reset;
    QLabel* m_status;
    QAction* m_applyAction;
    QString m_node;
    QString m_opType;
    ScheduleOrigin m_origin = ScheduleOrigin::Default;
    bool m_valid = false;
    bool m_busy = false;
    bool m_statusError = false;
};

}  // namespace tessera::views
