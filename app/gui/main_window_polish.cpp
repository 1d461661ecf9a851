// The main window's fixes from a newcomer's first session (issue 8): status-bar messages that do
// not draw over the run's status, docks that keep a few rows, View toggles that bring their dock
// to the front, the fusion plan's hardware following the target, and the Program dock's state
// when a project holds the program text. See main_window.h.
#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QProgressBar>
#include <QStatusBar>
#include <QTableView>
#include <QToolButton>

#include <algorithm>

#include "app/gui/main_window.h"

#include "app/gui/document.h"
#include "app/gui/plan_session.h"
#include "views/fusion/fusion_plan_panel.h"
#include "views/mapping/mapping_panel.h"
#include "views/program/program_editor.h"
#include "views/program/program_panel.h"

namespace tessera::app {
namespace {

/// Whether a status-bar widget was asked to be visible (setStatusWidgetVisible).
const char* const kWantedProperty = "tesseraStatusWanted";

/// Rows a list or table in a bottom dock keeps however small the dock is made.
constexpr int kMinimumRows = 3;

/// A table's height for its header and `rows` rows (frame included).
int tableHeightFor(const QTableView* table, int rows)
{
    const int header = table->horizontalHeader()->isHidden() ? 0 : table->horizontalHeader()->sizeHint().height();
    return header + rows * table->verticalHeader()->defaultSectionSize() + 2 * table->frameWidth();
}

/// The Task Mapping tab shares the right area with Properties and Code, above the Roofline: at
/// that area's default height its canvas was a strip. Brought to the front it gets most of the
/// area's height and half the width, inside the window as it is (resizeDocks never grows it).
void giveMappingRoom(QMainWindow* window, QDockWidget* dock)
{
    if (dock->isFloating() || window->dockWidgetArea(dock) == Qt::NoDockWidgetArea)
        return;
    const int wantHeight = window->height() * 3 / 4;
    if (dock->height() < wantHeight)
        window->resizeDocks({dock}, {wantHeight}, Qt::Vertical);
    const int wantWidth = window->width() / 2;
    if (dock->width() < wantWidth)
        window->resizeDocks({dock}, {wantWidth}, Qt::Horizontal);
}

}  // namespace

void MainWindow::createPolish()
{
    // Temporary messages are drawn across the normal widgets' part of the status bar: while one
    // is up, the run's line, progress and Cancel wait (setStatusWidgetVisible) and come back after.
    connect(statusBar(), &QStatusBar::messageChanged, this, &MainWindow::onStatusMessageChanged);

    // Bottom docks keep a header and a few rows when made small (the Timings table does so
    // itself, views::TimingPanel).
    const int problemRow = std::max(m_problems->fontMetrics().height(), m_problems->iconSize().height()) + 6;
    m_problems->setMinimumHeight(kMinimumRows * problemRow + 2 * m_problems->frameWidth());
    m_fusionPanel->table()->setMinimumHeight(tableHeightFor(m_fusionPanel->table(), kMinimumRows));

    // View > <dock> brings the dock to the front: shown when hidden, its tab raised when it is
    // behind another tab (or its window raised when floating); only a dock already in front is
    // closed. Qt's own toggle would close a dock that is open behind another tab.
    for (QDockWidget* dock : findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly)) {
        QAction* toggle = dock->toggleViewAction();
        disconnect(toggle, &QAction::triggered, dock, nullptr);
        connect(toggle, &QAction::triggered, this, [this, dock] { toggleDock(dock); });
    }
    // The mapping canvas asks for a large minimum: shown beside the graph it must fit the window
    // as it is instead of widening it (the canvas scrolls and zooms).
    m_mapping->setMinimumSize(240, 200);

    // Until the user picks a hardware profile in the Fusion Plan dock, plans are made for the run
    // target's hardware (this CPU, or the H200 for CUDA), as `tessera-cli compile` does.
    auto followTarget = [this] { m_doc->plans()->setTargetHardware(PlanSession::defaultHardwareFor(currentTarget().isCuda())); };
    connect(this, &MainWindow::targetChanged, this, followTarget);
    followTarget();
    // Warps and banks are GPU concepts: on the CPU target the mapping's memory view is a GPU view.
    auto mappingTarget = [this] { m_mapping->setCpuTarget(!currentTarget().isCuda()); };
    connect(this, &MainWindow::targetChanged, this, mappingTarget);
    mappingTarget();
    m_fusionPanel->hardwareCombo()->setToolTip(
        tr("Hardware the plan is made for. Until you pick one it follows the run target: \"host\" (this CPU) "
           "for the CPU, \"h200\" for CUDA."));
}

void MainWindow::setStatusWidgetVisible(QWidget* widget, bool visible)
{
    widget->setProperty(kWantedProperty, visible);
    widget->setVisible(visible && statusBar()->currentMessage().isEmpty());
}

void MainWindow::onStatusMessageChanged(const QString& message)
{
    // A tooltip set for one message (its details) goes with it.
    if (message != statusBar()->property("tesseraTipFor").toString()) {
        statusBar()->setToolTip(QString());
        statusBar()->setProperty("tesseraTipFor", QVariant());
    }
    for (QWidget* w : {static_cast<QWidget*>(m_runLabel), static_cast<QWidget*>(m_runProgress),
                       static_cast<QWidget*>(m_runCancel), static_cast<QWidget*>(m_roofProgress),
                       static_cast<QWidget*>(m_roofCancel), static_cast<QWidget*>(m_progress),
                       static_cast<QWidget*>(m_cancelButton)}) {
        if (w == nullptr || !w->property(kWantedProperty).isValid())
            continue;
        bool wanted = w->property(kWantedProperty).toBool();
        // The run's line is hidden and cleared in places that do not go through here.
        if (auto* label = qobject_cast<QLabel*>(w))
            wanted = wanted && !label->text().isEmpty();
        w->setVisible(wanted && message.isEmpty());
    }
}

void MainWindow::toggleDock(QDockWidget* dock)
{
    // A dock counts as in front when it is shown and not behind another tab (the window moves
    // the widgets of tabs that are not current out of sight: they stay "visible" but nothing of
    // them can be seen). Without a shown window nothing can be seen: then this is a plain toggle.
    const bool inFront = !dock->isHidden() && (!dock->visibleRegion().isEmpty() || !isVisible());
    if (dock->isHidden()) {
        dock->show();
        dock->raise();
        if (dock == m_mappingDock)
            giveMappingRoom(this, dock);
    } else if (!inFront) {
        dock->raise();
        if (dock->isFloating())
            dock->activateWindow();
        if (dock == m_mappingDock)
            giveMappingRoom(this, dock);
    } else {
        dock->close();
    }
    // QAction flipped its check mark on the click; it shows whether the dock is open.
    dock->toggleViewAction()->setChecked(!dock->isHidden());
}

void MainWindow::setProgramHeldByProject(const QString& text) { m_doc->setProgramHeldByProject(text); }

bool MainWindow::programDiffersFromFile() const
{
    return m_programPanel->hasProgram() && !m_programExported && m_programPanel->editor()->isModified();
}

}  // namespace tessera::app
