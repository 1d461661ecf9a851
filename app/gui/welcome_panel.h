#pragma once
/// @file
/// The Welcome panel (a dock, so it never hides the graph; Help > Welcome reopens it): a few
/// steps that take a new user from the MobileNetV2 sample to its timings on the roofline, each a
/// button that does the step. The panel only emits what the user asked for; the workspace
/// controller does it (workspace_controller.h).
///
/// Also: where the samples are (samplesDirectory), and the first-run flags in QSettings
/// ("welcome/firstRunDone", "welcome/dontShow").
///
/// Thread rules: UI thread only.

#include <QString>
#include <QStringList>
#include <QWidget>

class QCheckBox;
class QCommandLinkButton;
class QLabel;
class QToolButton;

namespace tessera::app {

/// The samples folder (the one holding mobilenet_v2.onnx): $TESSERA_SAMPLES, then
/// <binary>/../share/tessera/samples (an installed binary), then a samples/ folder next to an
/// ancestor of the binary's folder (a build tree inside the source tree), then the source tree
/// this binary was built from. Empty when none has the file.
QString samplesDirectory();

/// The DSL programs (*.tsr) in `dir`, sorted by name (absolute paths).
QStringList dslSamples(const QString& dir);

class WelcomePanel : public QWidget {
    Q_OBJECT
public:
    enum class Step { Run, Roofline, FusionPlan, SelectNode, DslSample };

    explicit WelcomePanel(QWidget* parent = nullptr);

    /// The Run step's key ("Ctrl+R"), shown in its title.
    void setRunShortcut(const QString& keys);
    /// The fusion step's keys: View > Fusion Plan's (`planKeys`, "Ctrl+Shift+P") and Run > Pin
    /// Run's (`pinKeys`), shown in its text (which says where the planner is chosen).
    void setFusionPlanShortcuts(const QString& planKeys, const QString& pinKeys);
    /// The DSL programs offered by the last step (its menu); none disables it.
    void setDslSamples(const QStringList& paths);
    /// Whether "Don't show again" is ticked (mirrors QSettings "welcome/dontShow").
    bool dontShowAgain() const;
    void setDontShowAgain(bool on);
    /// The button of a step (for tests and keyboard focus).
    QCommandLinkButton* stepButton(Step step) const;
    QToolButton* dslButton() const { return m_dsl; }

    /// QSettings keys.
    static constexpr const char* kFirstRunKey = "welcome/firstRunDone";
    static constexpr const char* kDontShowKey = "welcome/dontShow";

signals:
    void runRequested();
    void rooflineRequested();
    void fusionPlanRequested();
    void selectNodeRequested();
    void dslSampleRequested(const QString& path);
    void closeRequested();

private:
    static QString fusionPlanText(const QString& planKeys, const QString& pinKeys);
    QCommandLinkButton* addStep(Step step, const QString& title, const QString& text);

    QList<QCommandLinkButton*> m_steps;
    QToolButton* m_dsl = nullptr;
    QCheckBox* m_dontShow = nullptr;
};

}  // namespace tessera::app
