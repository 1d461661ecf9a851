// The main window's desktop conventions (issue 8): Edit > Preferences, the Help menu (guides,
// Keyboard Shortcuts, Welcome, About), the Welcome dock and the first run, the saved layout, and
// initial sizes of the result docks.
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QCommandLinkButton>
#include <QDockWidget>
#include <QFileInfo>
#include <QHeaderView>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>

#include <algorithm>

#include "app/gui/app_settings.h"
#include "app/gui/compare_controller.h"
#include "app/gui/help_windows.h"
#include "app/gui/main_window.h"

#include "app/gui/document.h"
#include "app/gui/plan_session.h"
#include "app/gui/run_session.h"
#include "app/gui/schedule_controller.h"
#include "app/gui/settings_dialog.h"
#include "app/gui/welcome_panel.h"
#include "views/fusion/fusion_plan_panel.h"
#include "views/graph/graph_view.h"
#include "views/roofline/roofline_view.h"

namespace tessera::app {
namespace {

const char* const kGeometryKey = "window/geometry";
const char* const kStateKey = "window/state";
/// Bumped when docks are added or renamed, so an old saved arrangement is not half-applied.
constexpr int kLayoutVersion = 1;
/// The Timings table needs its Kernel, Median and GFLOP/s columns side by side.
constexpr int kMinTimingWidth = 380;
/// Rows of the fusion plan visible without scrolling after the first run.
constexpr int kFusionRows = 6;

QKeySequence standardOr(QKeySequence::StandardKey key, const QKeySequence& fallback)
{
    // Desktops without a binding for the standard key (Preferences on GNOME) get the fallback.
    const QList<QKeySequence> keys = QKeySequence::keyBindings(key);
    return keys.isEmpty() ? fallback : keys.first();
}

}  // namespace

void MainWindow::createConventions()
{
    // Edit > Preferences... (the Edit menu is made with the fusion plan's undo stack).
    QMenu* edit = findChild<QMenu*>(QStringLiteral("editMenu"));
    if (edit == nullptr)
        edit = menuBar()->addMenu(tr("&Edit"));
    edit->addSeparator();
    m_preferencesAction = edit->addAction(tr("&Preferences..."), this, &MainWindow::showPreferences);
    m_preferencesAction->setObjectName(QStringLiteral("preferencesAction"));
    m_preferencesAction->setMenuRole(QAction::PreferencesRole);
    m_preferencesAction->setShortcut(standardOr(QKeySequence::Preferences, QKeySequence(Qt::CTRL | Qt::Key_Comma)));
    m_preferencesAction->setToolTip(tr("Compiler, threads, JIT cache, start-up target and theme"));

    m_helpMenu = menuBar()->addMenu(tr("&Help"));
    m_helpMenu->setObjectName(QStringLiteral("helpMenu"));
    QAction* dsl = m_helpMenu->addAction(tr("&DSL Guide"), this, [this] { showDoc(QStringLiteral("dsl.md")); });
    dsl->setObjectName(QStringLiteral("dslGuideAction"));
    dsl->setShortcut(standardOr(QKeySequence::HelpContents, QKeySequence(Qt::Key_F1)));
    QAction* fusion =
        m_helpMenu->addAction(tr("&Fusion Guide"), this, [this] { showDoc(QStringLiteral("fusion.md")); });
    fusion->setObjectName(QStringLiteral("fusionGuideAction"));
    m_helpMenu->addSeparator();
    QAction* keys = m_helpMenu->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcuts);
    keys->setObjectName(QStringLiteral("shortcutsAction"));
    QAction* welcome = m_helpMenu->addAction(tr("&Welcome"), this, &MainWindow::showWelcome);
    welcome->setObjectName(QStringLiteral("welcomeAction"));
    m_helpMenu->addSeparator();
    QAction* about = m_helpMenu->addAction(tr("&About Tessera"), this, &MainWindow::showAbout);
    about->setObjectName(QStringLiteral("aboutAction"));
    about->setMenuRole(QAction::AboutRole);
    QAction* aboutQt = m_helpMenu->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
    aboutQt->setMenuRole(QAction::AboutQtRole);

    // The Welcome dock, left of the graph (closed until the first run or Help > Welcome).
    m_welcome = new WelcomePanel(this);
    m_welcome->setRunShortcut(m_runAction->shortcut().toString(QKeySequence::NativeText));
    m_welcome->setFusionPlanShortcuts(m_fusionDock->toggleViewAction()->shortcut().toString(QKeySequence::NativeText),
                                      m_compare->pinAction()->shortcut().toString(QKeySequence::NativeText));
    m_welcome->setDslSamples(dslSamples(samplesDirectory()));
    m_welcomeDock = new QDockWidget(tr("Welcome"), this);
    m_welcomeDock->setObjectName(QStringLiteral("welcomeDock"));
    m_welcomeDock->setWidget(m_welcome);
    addDockWidget(Qt::LeftDockWidgetArea, m_welcomeDock);
    m_welcomeDock->hide();
    // View lists it with the other docks (Help > Welcome also opens it).
    QAction* toggleWelcome = m_welcomeDock->toggleViewAction();
    toggleWelcome->setText(tr("&Welcome"));
    toggleWelcome->setObjectName(QStringLiteral("viewWelcomeAction"));
    m_viewMenu->addAction(toggleWelcome);
    connect(m_welcome, &WelcomePanel::closeRequested, m_welcomeDock, &QDockWidget::close);
    connect(m_welcome, &WelcomePanel::runRequested, this, &MainWindow::welcomeRun);
    connect(m_welcome, &WelcomePanel::rooflineRequested, this, [this] {
        m_rooflineDock->show();
        m_rooflineDock->raise();
        if (m_timingDock->isHidden()) {
            m_timingDock->show();
        }
        if (!m_roofline->bannerText().isEmpty() && m_roofline->measureButton()->isVisibleTo(m_roofline))
            statusBar()->showMessage(tr("No roofs for this machine yet: click Measure Roofs in the roofline's "
                                        "banner (a few seconds)"),
                                     8000);
        else if (!m_compiled)
            statusBar()->showMessage(tr("The roofline fills in after a run: Run > Run (%1)")
                                         .arg(m_runAction->shortcut().toString(QKeySequence::NativeText)),
                                     8000);
    });
    connect(m_welcome, &WelcomePanel::fusionPlanRequested, this, [this] {
        showFusionPlan();
        m_fusionPanel->plannerCombo()->setFocus();
        statusBar()->showMessage(tr("Choose a planner in the Fusion Plan dock, then run again (%1)")
                                     .arg(m_runAction->shortcut().toString(QKeySequence::NativeText)),
                                 8000);
    });
    connect(m_welcome, &WelcomePanel::selectNodeRequested, this, &MainWindow::welcomeSelectNode);
    connect(m_welcome, &WelcomePanel::dslSampleRequested, this, &MainWindow::openFile);

    // Problems keep one line each (the tooltip has the whole diagnostic and its notes).
    m_problems->setTextElideMode(Qt::ElideNone);
    m_problems->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);

    connect(m_fusionDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible)
            QTimer::singleShot(0, this, &MainWindow::sizeBottomDocks);
    });
    connect(m_timingDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible)
            QTimer::singleShot(0, this, &MainWindow::sizeBottomDocks);
    });

    // A theme other than the desktop's is applied at start; System leaves Qt's choice alone.
    const AppSettings settings = AppSettings::load();
    if (settings.theme != AppSettings::Theme::System)
        applyTheme(settings.theme);
}

void MainWindow::sizeBottomDocks()
{
    // Once per session, when the Timings and Fusion Plan docks first share the bottom area: the
    // Timings table gets room for its columns, the plan room for a few rows.
    if (m_bottomSized || m_timingDock->isHidden() || m_fusionDock->isHidden() || m_timingDock->isFloating() ||
        m_fusionDock->isFloating() || dockWidgetArea(m_timingDock) != Qt::BottomDockWidgetArea ||
        dockWidgetArea(m_fusionDock) != Qt::BottomDockWidgetArea || tabifiedDockWidgets(m_timingDock).contains(m_fusionDock))
        return;
    m_bottomSized = true;
    // A dock just shown may not be laid out yet (width 0): the bottom area spans the graph too.
    const int bottomWidth = std::max(m_timingDock->width() + m_fusionDock->width(), centralWidget()->width());
    // Half each: the Timings table shows its time columns beside the kernel names, the plan its
    // Group, Ops, Measured, Saved and Redundant columns.
    const int timing = std::max(kMinTimingWidth, bottomWidth / 2);
    resizeDocks({m_timingDock, m_fusionDock}, {timing, std::max(200, bottomWidth - timing)}, Qt::Horizontal);
    QTableView* table = m_fusionPanel->table();
    const int rows = table->verticalHeader()->defaultSectionSize() * kFusionRows +
                     table->horizontalHeader()->sizeHint().height();
    // The panel's tool row and the dock's title bar above the table.
    const int chrome = m_fusionPanel->height() - table->height() + 28;
    const int wanted = std::min(height() / 2, rows + std::max(chrome, 60));
    if (m_fusionDock->height() < wanted)
        resizeDocks({m_fusionDock}, {wanted}, Qt::Vertical);
}

RunSettings MainWindow::currentRunSettings() const { return m_doc->runSettings(); }

SettingsDialog* MainWindow::preferencesDialog() const { return m_preferences; }
ShortcutsDialog* MainWindow::shortcutsDialog() const { return m_shortcuts; }
AboutDialog* MainWindow::aboutDialog() const { return m_about; }
DocWindow* MainWindow::docWindow() const { return m_docWindow; }

void MainWindow::showPreferences()
{
    if (m_preferences) {
        m_preferences->raise();
        m_preferences->activateWindow();
        return;
    }
    m_preferences = new SettingsDialog(AppSettings::load(), this);
    m_preferences->setAttribute(Qt::WA_DeleteOnClose);
    connect(m_preferences, &QDialog::accepted, this, [this] {
        const AppSettings before = AppSettings::load();
        const AppSettings after = m_preferences->settings();
        after.save();
        if (after.theme != before.theme)
            applyTheme(after.theme);
        statusBar()->showMessage(tr("Preferences saved: the next run uses %1 thread(s)%2")
                                     .arg(after.effectiveThreads())
                                     .arg(after.extraFlags.isEmpty() ? QString()
                                                                     : tr(" and the flags %1").arg(after.extraFlags)),
                                 6000);
    });
    // Window-modal without blocking the event loop (runs and loads go on meanwhile).
    m_preferences->open();
}

void MainWindow::showDoc(const QString& fileName)
{
    if (!m_docWindow) {
        m_docWindow = new DocWindow(fileName, this);
        m_docWindow->setAttribute(Qt::WA_DeleteOnClose);
    } else if (m_docWindow->fileName() != fileName) {
        m_docWindow->load(fileName);
    }
    m_docWindow->show();
    m_docWindow->raise();
    m_docWindow->activateWindow();
}

void MainWindow::showShortcuts()
{
    // Generated again each time: actions change (targets, recent files).
    if (m_shortcuts)
        m_shortcuts->close();
    m_shortcuts = new ShortcutsDialog(this, this);
    m_shortcuts->setAttribute(Qt::WA_DeleteOnClose);
    m_shortcuts->show();
}

void MainWindow::showAbout()
{
    if (m_about)
        m_about->close();
    m_about = new AboutDialog(AppSettings::load().effectiveCompiler(), this);
    m_about->setAttribute(Qt::WA_DeleteOnClose);
    m_about->open();
}

void MainWindow::showWelcome()
{
    if (m_welcomeDock->isHidden()) {
        m_welcomeDock->show();
        // After the window's first layout (at start-up the window is not shown yet).
        QTimer::singleShot(0, this, [this] {
            resizeDocks({m_welcomeDock}, {std::clamp(width() / 4, 320, 380)}, Qt::Horizontal);
        });
    }
    m_welcomeDock->raise();
}

bool MainWindow::startFirstRun(bool openSample)
{
    QSettings s;
    const bool first = !s.value(QLatin1String(WelcomePanel::kFirstRunKey), false).toBool();
    s.setValue(QLatin1String(WelcomePanel::kFirstRunKey), true);
    bool opened = false;
    if (first && openSample) {
        const QString dir = samplesDirectory();
        const QString model = dir.isEmpty() ? QString() : dir + QStringLiteral("/mobilenet_v2.onnx");
        if (!model.isEmpty()) {
            openFile(model);
            opened = true;
        }
    }
    // The README's run command names the sample: its first run still gets the Welcome panel.
    if (first || (openSample && !s.value(QLatin1String(WelcomePanel::kDontShowKey), false).toBool()))
        showWelcome();
    else
        m_welcomeDock->hide();  // also when a restored layout had it open
    return opened;
}

void MainWindow::welcomeRun()
{
    // "Run it on the CPU": the CPU whatever the selector says (not stored as the user's choice).
    selectTarget(QStringLiteral("cpu"));
    if (m_doc->model()) {
        m_runAction->trigger();
        return;
    }
    const QString dir = samplesDirectory();
    if (dir.isEmpty()) {
        setRunMessage(tr("Open a model first (File > Open)"), true);
        return;
    }
    connect(this, &MainWindow::modelShown, this, [this] { m_runAction->trigger(); }, Qt::SingleShotConnection);
    openFile(dir + QStringLiteral("/mobilenet_v2.onnx"));
}

void MainWindow::welcomeSelectNode()
{
    if (!m_doc->model()) {
        statusBar()->showMessage(tr("Open a model first (File > Open)"), 6000);
        return;
    }
    // The first operator with weights (a convolution in MobileNetV2): a kernel worth reading.
    const ir::Graph& g = m_doc->model()->graph;
    int pick = g.numNodes() > 0 ? 0 : -1;
    for (std::size_t n = 0; n < g.numNodes(); ++n) {
        bool weighted = false;
        for (const ir::ValueId v : g.node(static_cast<int>(n)).inputs)
            weighted = weighted || (v != ir::kNoValue && g.value(v).isInitializer);
        if (weighted) {
            pick = static_cast<int>(n);
            break;
        }
    }
    if (pick < 0)
        return;
    const int id = m_view->operatorIdByName(g.node(pick).name);
    if (id >= 0)
        m_view->selectNode(id, true);
    if (m_compiled) {
        m_codeDock->show();
        m_codeDock->raise();
    } else {
        m_propertiesDock->show();
        m_propertiesDock->raise();
        statusBar()->showMessage(tr("Run first (%1) to see this node's generated kernel in the Code dock")
                                     .arg(m_runAction->shortcut().toString(QKeySequence::NativeText)),
                                 8000);
    }
}

void MainWindow::restoreLayout()
{
    const QSettings s;
    const QByteArray geometry = s.value(QLatin1String(kGeometryKey)).toByteArray();
    const QByteArray state = s.value(QLatin1String(kStateKey)).toByteArray();
    if (!geometry.isEmpty())
        restoreGeometry(geometry);
    if (!state.isEmpty() && restoreState(state, kLayoutVersion) && !m_timingDock->isHidden()) {
        // The result docks are where the user left them: the first run does not resize them.
        m_runDocksShown = true;
        m_bottomSized = true;
    }
}

bool MainWindow::hasSavedLayout() const { return QSettings().contains(QLatin1String(kGeometryKey)); }

void MainWindow::saveLayout() const
{
    QSettings s;
    s.setValue(QLatin1String(kGeometryKey), saveGeometry());
    s.setValue(QLatin1String(kStateKey), saveState(kLayoutVersion));
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    saveLayout();
    QMainWindow::closeEvent(event);
}

}  // namespace tessera::app
