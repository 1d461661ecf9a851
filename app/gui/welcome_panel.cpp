#include "app/gui/welcome_panel.h"

#include <QCheckBox>
#include <QCommandLinkButton>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QScrollArea>
#include <QSettings>
#include <QToolButton>
#include <QVBoxLayout>

namespace tessera::app {
namespace {

const char* const kMarker = "mobilenet_v2.onnx";

bool hasSamples(const QString& dir) { return !dir.isEmpty() && QFileInfo::exists(QDir(dir).filePath(QLatin1String(kMarker))); }

}  // namespace

QString samplesDirectory()
{
    const QString env = qEnvironmentVariable("TESSERA_SAMPLES");
    if (hasSamples(env))
        return QDir(env).absolutePath();
    const QDir app(QCoreApplication::applicationDirPath());
    const QString installed = app.absoluteFilePath(QStringLiteral("../share/tessera/samples"));
    if (hasSamples(installed))
        return QDir(installed).canonicalPath();
    QDir up = app;
    for (int level = 0; level < 6; ++level) {
        if (hasSamples(up.filePath(QStringLiteral("samples"))))
            return QDir(up.filePath(QStringLiteral("samples"))).canonicalPath();
        if (!up.cdUp())
            break;
    }
#ifdef TESSERA_SOURCE_SAMPLES
    if (hasSamples(QStringLiteral(TESSERA_SOURCE_SAMPLES)))
        return QDir(QStringLiteral(TESSERA_SOURCE_SAMPLES)).canonicalPath();
#endif
    return {};
}

QStringList dslSamples(const QString& dir)
{
    QStringList out;
    if (dir.isEmpty())
        return out;
    const QDir d(dir);
    for (const QString& name : d.entryList({QStringLiteral("*.tsr")}, QDir::Files, QDir::Name))
        out << d.absoluteFilePath(name);
    return out;
}

WelcomePanel::WelcomePanel(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("welcomePanel"));
    auto* body = new QWidget;
    auto* layout = new QVBoxLayout(body);
    auto* intro = new QLabel(tr("<b>Welcome to Tessera.</b> Each box in the graph is an operator of the model. "
                                "Try these steps in order (about two minutes):"),
                             body);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    m_steps.resize(5);
    layout->addWidget(addStep(Step::Run, tr("1. Run it on the CPU"),
                              tr("Compiles every kernel with your C++ compiler, runs and times it in a separate "
                                 "process and checks it against the reference. The first run compiles for a minute; "
                                 "later runs come from the cache.")));
    layout->addWidget(addStep(Step::Roofline, tr("2. Read the roofline"),
                              tr("Each dot is a kernel against this machine's memory and compute roofs. No roofs "
                                 "yet? Click Measure Roofs in the roofline's banner (a few seconds). Click a dot to "
                                 "find its operator.")));
    layout->addWidget(addStep(Step::FusionPlan, tr("3. Switch the fusion planner"),
                              fusionPlanText(QStringLiteral("Ctrl+Shift+P"), QStringLiteral("Ctrl+Shift+B"))));
    layout->addWidget(addStep(Step::SelectNode, tr("4. Select a node"),
                              tr("Its kernel's lines light up in the Code dock; Properties shows its shapes and "
                                 "Task Mapping (Ctrl+M) who computes what.")));
    QCommandLinkButton* dsl = addStep(Step::DslSample, tr("5. Open a DSL program"),
                                      tr("Small programs in Tessera's language with their own schedules and fusions "
                                         "(Help > DSL Guide, F1)."));
    layout->addWidget(dsl);
    m_dsl = new QToolButton(body);
    m_dsl->setObjectName(QStringLiteral("welcomeDslMenu"));
    m_dsl->setText(tr("Choose a sample..."));
    m_dsl->setPopupMode(QToolButton::InstantPopup);
    m_dsl->setMenu(new QMenu(m_dsl));
    auto* dslRow = new QHBoxLayout;
    dslRow->addSpacing(32);
    dslRow->addWidget(m_dsl);
    dslRow->addStretch(1);
    layout->addLayout(dslRow);
    // The step's own button opens the menu too, so both read as one step.
    connect(dsl, &QCommandLinkButton::clicked, m_dsl, &QToolButton::showMenu);
    layout->addStretch(1);

    m_dontShow = new QCheckBox(tr("Don't show this at start-up"), body);
    m_dontShow->setObjectName(QStringLiteral("welcomeDontShow"));
    m_dontShow->setToolTip(tr("Help > Welcome shows it again"));
    m_dontShow->setChecked(QSettings().value(QLatin1String(kDontShowKey), false).toBool());
    connect(m_dontShow, &QCheckBox::toggled, this,
            [](bool on) { QSettings().setValue(QLatin1String(kDontShowKey), on); });
    auto* close = new QToolButton(body);
    close->setText(tr("Close"));
    connect(close, &QToolButton::clicked, this, &WelcomePanel::closeRequested);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(m_dontShow, 1);
    bottom->addWidget(close);
    layout->addLayout(bottom);

    auto* scroll = new QScrollArea(this);
    scroll->setWidget(body);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(scroll);
    setDslSamples({});
}

QCommandLinkButton* WelcomePanel::addStep(Step step, const QString& title, const QString& text)
{
    auto* b = new QCommandLinkButton(title, text, this);
    // Fit the dock's width: the description wraps (height for width) instead of being cut.
    QSizePolicy policy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    b->setSizePolicy(policy);
    b->setObjectName(QStringLiteral("welcomeStep%1").arg(static_cast<int>(step) + 1));
    m_steps[static_cast<int>(step)] = b;
    switch (step) {
    case Step::Run: connect(b, &QCommandLinkButton::clicked, this, &WelcomePanel::runRequested); break;
    case Step::Roofline: connect(b, &QCommandLinkButton::clicked, this, &WelcomePanel::rooflineRequested); break;
    case Step::FusionPlan: connect(b, &QCommandLinkButton::clicked, this, &WelcomePanel::fusionPlanRequested); break;
    case Step::SelectNode: connect(b, &QCommandLinkButton::clicked, this, &WelcomePanel::selectNodeRequested); break;
    case Step::DslSample: break;
    }
    return b;
}

void WelcomePanel::setRunShortcut(const QString& keys)
{
    QCommandLinkButton* b = stepButton(Step::Run);
    b->setText(keys.isEmpty() ? tr("1. Run it on the CPU") : tr("1. Run it on the CPU (%1)").arg(keys));
}

QString WelcomePanel::fusionPlanText(const QString& planKeys, const QString& pinKeys)
{
    return tr("View > Fusion Plan (%1): choose the planner (none, hidet, fuseplanner). Pin this run first (Run > "
              "Pin Run, %2), then run again: Timings compares each kernel with the pinned run.")
        .arg(planKeys, pinKeys);
}

void WelcomePanel::setFusionPlanShortcuts(const QString& planKeys, const QString& pinKeys)
{
    stepButton(Step::FusionPlan)->setDescription(fusionPlanText(planKeys, pinKeys));
}

void WelcomePanel::setDslSamples(const QStringList& paths)
{
    QMenu* menu = m_dsl->menu();
    menu->clear();
    for (const QString& p : paths) {
        QAction* a = menu->addAction(QFileInfo(p).fileName());
        a->setToolTip(p);
        connect(a, &QAction::triggered, this, [this, p] { emit dslSampleRequested(p); });
    }
    m_dsl->setEnabled(!paths.isEmpty());
    stepButton(Step::DslSample)->setEnabled(!paths.isEmpty());
}

bool WelcomePanel::dontShowAgain() const { return m_dontShow->isChecked(); }

void WelcomePanel::setDontShowAgain(bool on) { m_dontShow->setChecked(on); }

QCommandLinkButton* WelcomePanel::stepButton(Step step) const { return m_steps.value(static_cast<int>(step)); }

}  // namespace tessera::app
