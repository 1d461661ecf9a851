#pragma once
/// @file
/// Tessera's main window: the graph view in the centre, the properties panel, a Problems list
/// and the task-mapping visualizer (View > Task Mapping, Ctrl+M) in docks, File/View menus, recent files, drag-and-drop of .onnx files and a status bar
/// (node count, import/layout time, warnings, progress with Cancel).
///
/// Loading goes through a Session (import and layout off the UI thread); a failed load reports
/// its diagnostics through the error reporter (a modal message box unless replaced, e.g. by
/// tests) and the model shown before stays.
///
/// Thread rules: UI thread only.

#include <functional>
#include <memory>

#include <QMainWindow>
#include <QStringList>

#include "core/ir/graph.h"
#include "core/support/diagnostic.h"

class QAction;
class QDockWidget;
class QLabel;
class QListWidget;
class QMenu;
class QProgressBar;
class QToolButton;

namespace tessera::views {
class GraphView;
class MappingPanel;
class PropertiesPanel;
}  // namespace tessera::views

namespace tessera::app {

class Session;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    /// Shows a load failure: a title and one line per diagnostic.
    using ErrorReporter = std::function<void(const QString& title, const QStringList& lines)>;

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Starts loading a model (asynchronously); supersedes a load in progress.
    void openFile(const QString& path);
    void setErrorReporter(ErrorReporter reporter);

    Session* session() const { return m_session; }
    views::GraphView* graphView() const { return m_view; }
    views::PropertiesPanel* propertiesPanel() const { return m_properties; }
    QListWidget* problemsList() const { return m_problems; }
    views::MappingPanel* mappingPanel() const { return m_mapping; }
    QDockWidget* mappingDock() const { return m_mappingDock; }
    /// Shows and raises the task-mapping dock with the given expressions (blank block = one level).
    void showMapping(const QString& grid, const QString& block = QString());
    /// The model on screen (null before the first successful load).
    std::shared_ptr<const ir::Model> model() const { return m_model; }
    QString currentPath() const { return m_path; }
    QStringList recentFiles() const;

    static constexpr int kMaxRecent = 10;

signals:
    /// A model was loaded and drawn.
    void modelShown(const QString& path);
    /// A load failed (after the error was reported).
    void loadFailed(const QString& path);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void createDocks();
    void createStatusBar();
    void onLoadStarted(quint64 generation, const QString& path);
    void onStage(quint64 generation, const QString& stage);
    void onLoadFinished(quint64 generation, bool ok);
    void onNodeSelected(int nodeId);
    void showKernelSchedule(ir::NodeId node);
    void showProblems(const support::DiagnosticList& diagnostics);
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    void setBusy(bool busy);
    void openDialog();

    Session* m_session;
    views::GraphView* m_view;
    views::PropertiesPanel* m_properties;
    QListWidget* m_problems = nullptr;
    QDockWidget* m_propertiesDock = nullptr;
    QDockWidget* m_problemsDock = nullptr;
    views::MappingPanel* m_mapping = nullptr;
    QDockWidget* m_mappingDock = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QLabel* m_stageLabel = nullptr;
    QLabel* m_nodesLabel = nullptr;
    QLabel* m_timeLabel = nullptr;
    QLabel* m_zoomLabel = nullptr;
    QToolButton* m_problemsButton = nullptr;
    QProgressBar* m_progress = nullptr;
    QToolButton* m_cancelButton = nullptr;
    ErrorReporter m_reportError;
    std::shared_ptr<const ir::Model> m_model;
    QString m_path;
    QString m_loadingPath;
};

}  // namespace tessera::app
