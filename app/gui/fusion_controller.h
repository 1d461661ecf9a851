#pragma once
/// @file
/// The fusion plan in the window: the Fusion Plan dock (View > Fusion Plan, Ctrl+Shift+P;
/// views::FusionPlanPanel), the Edit menu (Undo/Redo of the Document's undo stack, Fuse, Split),
/// the plan's fused groups drawn as clusters on the graph with notes on the edges between them,
/// and the user schedules of the Task Mapping dock (ScheduleController, attached to the Document).
///
/// The plan is the Document's (PlanSession). Fuse (Ctrl+G) merges the selected nodes' groups,
/// Split (Ctrl+Shift+G) splits the selected node's group; a refused edit shows its reason next
/// to the node and in the status bar (and, as every plan problem, in Problems). Selecting a row
/// selects the group's nodes; selecting a node (selectGroupOfNode) selects its group's rows.
/// The table's Measured column shows each group's time from the last run (showPlanTimings) or
/// from a project's stored run (Document::shownRecord) until a run replaces it.
///
/// Until the user picks a hardware profile in the dock, plans are made for the run target's
/// hardware (this CPU, or the H200 for CUDA), as `tessera-cli compile` does; the Task Mapping
/// panel's memory view follows the target too (a CPU view on the CPU target).
///
/// Thread rules: UI thread only.

#include <QObject>
#include <QString>
#include <QStringList>

class QAction;
class QDockWidget;
class QMainWindow;
class QMenu;

namespace tessera::views {
class FusionPlanPanel;
class GraphView;
class MappingPanel;
}  // namespace tessera::views

namespace tessera::pipeline {
struct RunReport;
}

namespace tessera::app {

class Document;
class ProgramController;
class ProjectController;

class FusionController : public QObject {
    Q_OBJECT
public:
    /// The window it works in: the dock goes into `window`'s bottom area, its toggle into
    /// `viewMenu`, and the Edit menu before `viewMenu` in the menu bar; clusters, notes and
    /// refusals are drawn on `graph`; the schedules are applied from `mapping`.
    struct Placement {
        QMainWindow* window = nullptr;
        views::GraphView* graph = nullptr;
        views::MappingPanel* mapping = nullptr;
        QMenu* viewMenu = nullptr;
    };
    FusionController(Document* doc, const Placement& place);

    views::FusionPlanPanel* panel() const { return m_panel; }
    QDockWidget* dock() const { return m_dock; }
    /// Edit (objectName "editMenu"): Undo, Redo | Fuse, Split.
    QMenu* editMenu() const { return m_editMenu; }
    QAction* undoAction() const { return m_undoAction; }
    QAction* redoAction() const { return m_redoAction; }
    /// Shows and raises the Fusion Plan dock (a quarter of the window's height the first time).
    void showPlan();
    /// Selects the rows of the groups of the graph's node `nodeId` and of the other selected
    /// nodes (none for a node that is no operator).
    void selectGroupOfNode(int nodeId);
    /// The measured time of each group of a finished run, into the plan table.
    void showPlanTimings(const pipeline::RunReport& report);
    /// Where a restored plan came from is the open project when there is one (said in the
    /// status bar's tooltip); an applied mapping says whether Live runs it at once.
    void setProject(const ProjectController* project) { m_project = project; }
    void setProgram(const ProgramController* program) { m_program = program; }

private:
    void createDock(QMenu* viewMenu);
    void createEditMenu(QMenu* viewMenu);
    void createSchedules(views::MappingPanel* mapping);
    void followTarget(views::MappingPanel* mapping);
    void onPlanChanged();
    void onRefused(const QString& node, const QString& message);
    void onGroupSelected(const QString& group, const QStringList& members);
    /// The Measured column from a project's stored run (Document::shownRecord).
    void showRecordPlanTimes();

    Document* m_doc;
    QMainWindow* m_window;
    views::GraphView* m_graph;
    views::FusionPlanPanel* m_panel = nullptr;
    QDockWidget* m_dock = nullptr;
    QMenu* m_editMenu = nullptr;
    QAction* m_undoAction = nullptr;
    QAction* m_redoAction = nullptr;
    const ProjectController* m_project = nullptr;
    const ProgramController* m_program = nullptr;
};

}  // namespace tessera::app
