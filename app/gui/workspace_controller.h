#pragma once
/// @file
/// The window's arrangement and the way in for a new user: the Welcome dock (left of the graph;
/// Help > Welcome, View > Welcome) and the first run, the layout saved when the window closes,
/// the first sizes of the bottom docks, and View's dock toggles.
///
/// The Welcome panel's steps are done here: Run runs the model on the CPU (opening the
/// MobileNetV2 sample first when no model is open), Roofline and Fusion Plan bring their docks
/// forward and say what to do next in the status bar, Select a Node selects the first operator
/// with weights and shows its kernel (or says to run first), a DSL sample is opened.
///
/// View > <dock> brings the dock to the front: shown when hidden, its tab raised when it is
/// behind another tab (its window when floating); only a dock already in front is closed (Qt's
/// own toggle would close a dock that is open behind another tab). The Task Mapping dock gets
/// room for its canvas when it comes forward. This holds for the window's docks that exist when
/// the controller is made.
///
/// Signals:
/// - openRequested(path): the first run or the Welcome panel asks the window to open `path`
///   (as File > Open does, asking about unsaved work).
///
/// Thread rules: UI thread only.

#include <QObject>
#include <QString>

class QAction;
class QDockWidget;
class QMainWindow;
class QMenu;

namespace tessera::views {
class GraphView;
}

namespace tessera::app {

class Document;
class FusionController;
class RooflineController;
class RunController;
class WelcomePanel;

class WorkspaceController : public QObject {
    Q_OBJECT
public:
    /// The window and the docks it arranges; the Welcome dock's toggle goes into `viewMenu`,
    /// `pinAction`'s key is named by the Welcome panel's fusion step.
    struct Placement {
        QMainWindow* window = nullptr;
        views::GraphView* graph = nullptr;
        QDockWidget* propertiesDock = nullptr;
        QDockWidget* mappingDock = nullptr;
        QMenu* viewMenu = nullptr;
        RunController* runs = nullptr;
        RooflineController* roofline = nullptr;
        FusionController* fusion = nullptr;
        QAction* pinAction = nullptr;
    };
    WorkspaceController(Document* doc, const Placement& place);

    WelcomePanel* welcomePanel() const { return m_welcome; }
    QDockWidget* welcomeDock() const { return m_welcomeDock; }
    /// Help > Welcome: shows (a quarter of the window's width) and raises the Welcome dock.
    void showWelcome();
    /// At start-up. On the first run (QSettings "welcome/firstRunDone" unset) shows the Welcome
    /// dock and, when `openSample` (no file was named), asks to open the MobileNetV2 sample. Later
    /// runs show the dock without a file unless "Don't show this at start-up" was ticked, and hide
    /// it when a file was named. Returns true when it asked to open the sample.
    bool startFirstRun(bool openSample = true);
    /// Restores the window geometry and dock arrangement saved when the window last closed
    /// (QSettings "window/geometry", "window/state", layout version 1); result docks restored
    /// open stay as they are when the first run ends.
    void restoreLayout();
    bool hasSavedLayout() const;
    void saveLayout() const;

signals:
    void openRequested(const QString& path);

private:
    void createWelcome(QMenu* viewMenu, QAction* pinAction);
    void welcomeRun();
    void welcomeRoofline();
    void welcomeFusionPlan();
    void welcomeSelectNode();
    /// Once, when the Timings and Fusion Plan docks first share the bottom area: room for the
    /// Timings table's columns and a few rows of the plan.
    void sizeBottomDocks();
    void toggleDock(QDockWidget* dock);
    QString runKeys() const;

    Document* m_doc;
    QMainWindow* m_window;
    views::GraphView* m_graph;
    QDockWidget* m_propertiesDock;
    QDockWidget* m_mappingDock;
    RunController* m_runs;
    RooflineController* m_roofline;
    FusionController* m_fusion;
    WelcomePanel* m_welcome = nullptr;
    QDockWidget* m_welcomeDock = nullptr;
    bool m_bottomSized = false;
};

}  // namespace tessera::app
