#pragma once
/// @file
/// The fusion-plan editor's panel (issue 6): a toolbar row (Planner: none / hidet / fuseplanner;
/// Hardware: the built-in GPU profiles, custom what-if copies and "Edit..."; Fuse, Split,
/// Re-plan) above the plan table (FusionPlanTableModel, sortable) and a one-line summary. The
/// table shows Group, Ops, Measured, Saved, Redundant, Kind, Anchor, Tile, Status (the numbers
/// before the words, so they stay in a narrow dock); group and anchor node paths are drawn
/// compactly (compactNodeName) and elided in the middle, with the whole name in the tooltip.
///
/// It draws what it is given and emits intent signals; it never plans or runs anything. The
/// setters (setState, setSnapshot, selectGroup) never emit the intent signals, so the app can
/// mirror its state without loops. "Edit..." opens a GpuProfileDialog on a copy of the current
/// profile; an accepted copy is added to the list and hardwareChosen() carries it.
///
/// Thread rules: UI thread only.

#include <map>
#include <vector>

#include <QWidget>

#include "core/target/gpu_profile.h"
#include "views/fusion/fusion_plan_snapshot.h"

class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QTableView;
class QToolButton;

namespace tessera::views {

class FusionPlanTableModel;

class FusionPlanPanel : public QWidget {
    Q_OBJECT
public:
    explicit FusionPlanPanel(QWidget* parent = nullptr);

    /// The hardware list (built-ins first, then custom profiles); the "Edit..." entry is added.
    void setProfiles(const std::vector<target::GpuProfile>& profiles);
    const std::vector<target::GpuProfile>& profiles() const { return m_profiles; }
    /// Shows `planner` and the profile named `hardware` as chosen (no signal). An unknown planner
    /// (e.g. "user" after edits) leaves the combo as it was.
    /// planner "program": the plan is a program's own fuse statements (the box shows "program"
    /// until a planner is chosen).
    void setState(const QString& planner, const QString& hardware);
    QString planner() const;
    /// The profile shown in the Hardware combo (nullptr when the list is empty).
    const target::GpuProfile* currentProfile() const;

    void setSnapshot(FusionPlanSnapshot snapshot);
    /// The Measured column's times (FusionPlanTableModel::setMeasuredTimes); a non-empty
    /// `unreliable` (the run's timing warning) also shows "⚠ Measured times unreliable: ..." in a
    /// line under the table (timingWarningLabel()).
    void setMeasuredTimes(const std::map<QString, double>& secondsByGroup, const QString& unreliable = QString());
    /// Text shown instead of the summary while there is no plan ("Open a model ...").
    void setPlaceholder(const QString& text);
    /// Planning in progress: Re-plan is disabled and the summary says `text`.
    void setBusy(bool busy, const QString& text = QString());

    /// Selects the row of `group` (no signal); an empty or unknown name clears the selection.
    void selectGroup(const QString& group);
    /// Selects the rows of `groups` (no signal; unknown names are skipped), the first one current.
    void selectGroups(const QStringList& groups);
    /// The current row's group when it is selected, else the first selected one ("" none).
    QString selectedGroup() const;
    /// Every selected row's group, in plan order (Ctrl+click and Shift+click extend the selection).
    QStringList selectedGroups() const;
    /// Opens the what-if dialog on the current profile (as "Edit..." does).
    void editHardware();

    QComboBox* plannerCombo() const { return m_planner; }
    QComboBox* hardwareCombo() const { return m_hardware; }
    QToolButton* fuseButton() const { return m_fuse; }
    QToolButton* splitButton() const { return m_split; }
    QToolButton* replanButton() const { return m_replan; }
    QTableView* table() const { return m_table; }
    FusionPlanTableModel* tableModel() const { return m_model; }
    QLabel* summaryLabel() const { return m_summary; }
    QLabel* timingWarningLabel() const { return m_timingWarning; }

signals:
    void plannerChosen(const QString& planner);
    void hardwareChosen(const tessera::target::GpuProfile& profile);
    void fuseClicked();
    void splitClicked(const QString& group);
    void replanClicked();
    /// The user changed the selected rows: the current row's group (selectedGroup()) and the
    /// member node names of every selected row (plan order), so several groups can be selected in
    /// the graph and fused.
    void groupSelected(const QString& group, const QStringList& members);

private:
    void rebuildHardware(const QString& current);
    void onHardwareActivated(int index);
    void onCurrentRowChanged();
    void updateSummary();
    void updateButtons();
    /// Widest a column gets when sized to its contents (Group and Anchor elide in the middle).
    int maxColumnWidth(int column) const;

    std::vector<target::GpuProfile> m_profiles;
    QString m_currentHardware;
    QComboBox* m_planner;
    QComboBox* m_hardware;
    QToolButton* m_fuse;
    QToolButton* m_split;
    QToolButton* m_replan;
    QTableView* m_table;
    FusionPlanTableModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QLabel* m_summary;
    QLabel* m_timingWarning;
    QString m_placeholder;
    QString m_busyText;
    bool m_busy = false;
    bool m_updating = false;
};

}  // namespace tessera::views
