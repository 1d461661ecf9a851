#include "views/fusion/fusion_plan_panel.h"

#include <algorithm>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "views/fusion/fusion_plan_table_model.h"
#include "views/fusion/gpu_profile_dialog.h"

namespace tessera::views {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

const char* const kEditItem = "__edit__";

QToolButton* makeButton(QWidget* parent, const QString& text, const QString& tip, const char* name)
{
    auto* b = new QToolButton(parent);
    b->setText(text);
    b->setToolTip(tip);
    b->setObjectName(QLatin1String(name));
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    return b;
}

/// Draws node paths compactly (compactNodeName); the model's text, and so the tooltip, stays whole.
class CompactNameDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        option->text = compactNodeName(option->text);
    }
};

}  // namespace

FusionPlanPanel::FusionPlanPanel(QWidget* parent) : QWidget(parent)
{
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(4, 4, 4, 4);
    lay->setSpacing(4);
    auto* bar = new QHBoxLayout;
    bar->setSpacing(6);
    m_planner = new QComboBox(this);
    m_planner->setObjectName(QStringLiteral("plannerCombo"));
    m_planner->addItem(tr("none"), QStringLiteral("none"));
    m_planner->setItemData(0, tr("One kernel per op"), Qt::ToolTipRole);
    m_planner->addItem(tr("hidet"), QStringLiteral("hidet"));
    m_planner->setItemData(1, tr("Hidet's rules: anchors with prologues and epilogues"), Qt::ToolTipRole);
    m_planner->addItem(tr("fuseplanner"), QStringLiteral("fuseplanner"));
    m_planner->setItemData(2, tr("FusePlanner's cost model: fused dw/pw conv pairs on the chosen hardware, then Hidet's rules"),
                           Qt::ToolTipRole);
    m_planner->setToolTip(tr("Which planner makes the plan (undoable)"));
    m_hardware = new QComboBox(this);
    m_hardware->setObjectName(QStringLiteral("hardwareCombo"));
    m_hardware->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_hardware->setToolTip(tr("The GPU the plan is made for (FusePlanner's tile search and the shared-memory check)"));
    auto* plannerLabel = new QLabel(tr("Planner"), this);
    plannerLabel->setBuddy(m_planner);
    auto* hwLabel = new QLabel(tr("Hardware"), this);
    hwLabel->setBuddy(m_hardware);
    m_fuse = makeButton(this, tr("Fuse"),
                        tr("Fuse the nodes selected in the graph into one group (Ctrl+G); Ctrl+click or "
                           "Shift+click rows to select several groups"),
                        "fuseButton");
    m_split = makeButton(this, tr("Split"), tr("Split the selected group into one kernel per op (Ctrl+Shift+G)"), "splitButton");
    m_replan = makeButton(this, tr("Re-plan"), tr("Run the planner again, dropping hand edits"), "replanButton");
    bar->addWidget(plannerLabel);
    bar->addWidget(m_planner);
    bar->addSpacing(8);
    bar->addWidget(hwLabel);
    bar->addWidget(m_hardware);
    bar->addSpacing(8);
    bar->addWidget(m_fuse);
    bar->addWidget(m_split);
    bar->addWidget(m_replan);
    bar->addSpacing(8);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("planSummary"));
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setMinimumWidth(40);
    // A line of its own under the tool row: beside the combos a half-window dock showed only its
    // first words.
    m_summary->setWordWrap(true);
    m_summary->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    bar->addStretch(1);
    lay->addLayout(bar);
    lay->addWidget(m_summary);

    m_model = new FusionPlanTableModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(FusionPlanTableModel::kSortRole);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("planTable"));
    m_table->setModel(m_proxy);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setHighlightSections(false);
    // Singles are named after their node ("/features/features.3/conv/conv.0/conv.0.0/Conv"): drawn
    // compactly ("features.3/conv.0.0/Conv"), and what is still too long loses its middle, so the
    // block and the op stay readable; the tooltip has the whole name.
    m_table->setTextElideMode(Qt::ElideMiddle);
    auto* names = new CompactNameDelegate(m_table);
    m_table->setItemDelegateForColumn(FusionPlanTableModel::Group, names);
    m_table->setItemDelegateForColumn(FusionPlanTableModel::Anchor, names);
    // The numbers next to the group and its op count, the words after them: in a dock half the
    // window wide, Measured, Saved and Redundant stay in view beside a group named after its node.
    QHeaderView* header = m_table->horizontalHeader();
    int at = header->visualIndex(FusionPlanTableModel::Group);
    for (const int column : {FusionPlanTableModel::Ops, FusionPlanTableModel::Measured, FusionPlanTableModel::Saved,
                             FusionPlanTableModel::Redundant})
        header->moveSection(header->visualIndex(column), ++at);
    lay->addWidget(m_table, 1);
    m_timingWarning = new QLabel(this);
    m_timingWarning->setObjectName(QStringLiteral("planTimingWarning"));
    m_timingWarning->setTextFormat(Qt::PlainText);
    m_timingWarning->setWordWrap(true);
    m_timingWarning->setStyleSheet(QStringLiteral("color: #b35c00;"));
    m_timingWarning->hide();
    lay->addWidget(m_timingWarning);

    connect(m_planner, &QComboBox::activated, this, [this](int i) { emit plannerChosen(m_planner->itemData(i).toString()); });
    connect(m_hardware, &QComboBox::activated, this, &FusionPlanPanel::onHardwareActivated);
    connect(m_fuse, &QToolButton::clicked, this, &FusionPlanPanel::fuseClicked);
    connect(m_split, &QToolButton::clicked, this, [this] {
        const QString g = selectedGroup();
        if (!g.isEmpty())
            emit splitClicked(g);
    });
    connect(m_replan, &QToolButton::clicked, this, &FusionPlanPanel::replanClicked);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &FusionPlanPanel::onCurrentRowChanged);
    setPlaceholder(tr("Open a model to plan its fusion."));
    updateButtons();
}

void FusionPlanPanel::setProfiles(const std::vector<target::GpuProfile>& profiles)
{
    m_profiles = profiles;
    rebuildHardware(m_currentHardware);
}

void FusionPlanPanel::rebuildHardware(const QString& current)
{
    const QSignalBlocker block(m_hardware);
    m_hardware->clear();
    int select = -1;
    for (std::size_t i = 0; i < m_profiles.size(); ++i) {
        const target::GpuProfile& p = m_profiles[i];
        const QString name = fromStd(p.name);
        m_hardware->addItem(name, name);
        QString tip = fromStd(p.displayName.empty() ? p.name : p.displayName);
        tip += tr("\n%1 SMs · L1 %2 KiB · shared %3 KiB · warp %4 · L2 %5 KiB")
                   .arg(p.sms)
                   .arg(p.l1Bytes / 1024)
                   .arg(p.sharedBytes / 1024)
                   .arg(p.warpSize)
                   .arg(p.l2Bytes / 1024);
        if (!p.source.empty())
            tip += QLatin1Char('\n') + fromStd(p.source);
        m_hardware->setItemData(static_cast<int>(i), tip, Qt::ToolTipRole);
        if (name == current)
            select = static_cast<int>(i);
    }
    m_hardware->insertSeparator(m_hardware->count());
    m_hardware->addItem(tr("Edit..."), QLatin1String(kEditItem));
    m_hardware->setItemData(m_hardware->count() - 1, tr("Edit a copy of the current profile (what-if hardware)"),
                            Qt::ToolTipRole);
    if (select < 0 && !m_profiles.empty())
        select = 0;
    m_hardware->setCurrentIndex(select);
    m_currentHardware = select >= 0 ? m_hardware->itemData(select).toString() : QString();
}

void FusionPlanPanel::setState(const QString& planner, const QString& hardware)
{
    const int pi = m_planner->findData(planner);
    if (pi >= 0) {
        const QSignalBlocker block(m_planner);
        m_planner->setCurrentIndex(pi);
    } else if (planner == QLatin1String("program")) {
        // A program's own fuse statements: no planner made this plan; choosing one re-plans.
        const QSignalBlocker block(m_planner);
        m_planner->setPlaceholderText(tr("program"));
        m_planner->setCurrentIndex(-1);
    }
    if (hardware != m_currentHardware)
        rebuildHardware(hardware);
}

QString FusionPlanPanel::planner() const { return m_planner->currentData().toString(); }

const target::GpuProfile* FusionPlanPanel::currentProfile() const
{
    for (const target::GpuProfile& p : m_profiles) {
        if (fromStd(p.name) == m_currentHardware)
            return &p;
    }
    return nullptr;
}

void FusionPlanPanel::onHardwareActivated(int index)
{
    const QString data = m_hardware->itemData(index).toString();
    if (data == QLatin1String(kEditItem)) {
        // Back to the current entry while the dialog is open (and after a cancel).
        rebuildHardware(m_currentHardware);
        editHardware();
        return;
    }
    m_currentHardware = data;
    if (const target::GpuProfile* p = currentProfile())
        emit hardwareChosen(*p);
}

void FusionPlanPanel::editHardware()
{
    const target::GpuProfile* current = currentProfile();
    if (current == nullptr)
        return;
    GpuProfileDialog dialog(*current, this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const target::GpuProfile edited = dialog.profile();
    bool replaced = false;
    for (target::GpuProfile& p : m_profiles) {
        if (p.name == edited.name) {
            p = edited;
            replaced = true;
        }
    }
    if (!replaced)
        m_profiles.push_back(edited);
    rebuildHardware(fromStd(edited.name));
    emit hardwareChosen(edited);
}

void FusionPlanPanel::setSnapshot(FusionPlanSnapshot snapshot)
{
    const QString selected = selectedGroup();
    m_updating = true;
    m_model->setSnapshot(std::move(snapshot));
    m_table->resizeColumnsToContents();
    for (int c = 0; c < FusionPlanTableModel::ColumnCount; ++c)
        m_table->setColumnWidth(c, std::min(m_table->columnWidth(c), maxColumnWidth(c)));
    m_updating = false;
    selectGroup(selected);
    m_placeholder.clear();
    updateSummary();
    updateButtons();
}

int FusionPlanPanel::maxColumnWidth(int column) const
{
    // Room for a compact node path ("features.16/conv.0.0/Conv"); longer ones are elided.
    const int chars = m_table->fontMetrics().averageCharWidth();
    switch (column) {
    case FusionPlanTableModel::Group: return 32 * chars;
    case FusionPlanTableModel::Anchor: return 32 * chars;
    default: return 300;
    }
}

void FusionPlanPanel::setMeasuredTimes(const std::map<QString, double>& secondsByGroup, const QString& unreliable)
{
    m_model->setMeasuredTimes(secondsByGroup, unreliable);
    m_table->resizeColumnToContents(FusionPlanTableModel::Measured);
    const QString& why = m_model->timingWarning();
    m_timingWarning->setText(why.isEmpty() ? QString() : QStringLiteral("\u26a0 ") + tr("Measured times unreliable: %1").arg(why));
    m_timingWarning->setToolTip(why.isEmpty() ? QString()
                                              : tr("The Measured column's medians are suspect (values at the "
                                                   "scheduler tick, e.g. 8.000 ms, are time slices, not kernel "
                                                   "time). The Timings dock says the same."));
    m_timingWarning->setVisible(!why.isEmpty());
}

void FusionPlanPanel::setPlaceholder(const QString& text)
{
    m_placeholder = text;
    m_updating = true;
    m_model->setSnapshot({});
    m_updating = false;
    updateSummary();
    updateButtons();
}

void FusionPlanPanel::setBusy(bool busy, const QString& text)
{
    m_busy = busy;
    m_busyText = text;
    updateSummary();
    updateButtons();
}

void FusionPlanPanel::selectGroup(const QString& group)
{
    selectGroups(group.isEmpty() ? QStringList() : QStringList{group});
}

void FusionPlanPanel::selectGroups(const QStringList& groups)
{
    m_updating = true;
    QItemSelection selection;
    QModelIndex first;
    for (const QString& group : groups) {
        const int row = m_model->snapshot().rowOf(group);
        if (row < 0)
            continue;
        const QModelIndex idx = m_proxy->mapFromSource(m_model->index(row, 0));
        selection.select(idx, idx);
        if (!first.isValid())
            first = idx;
    }
    if (!first.isValid()) {
        m_table->clearSelection();
    } else {
        QItemSelectionModel* sm = m_table->selectionModel();
        sm->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        sm->setCurrentIndex(first, QItemSelectionModel::NoUpdate);
        m_table->scrollTo(first);
    }
    m_updating = false;
    updateButtons();
}

QString FusionPlanPanel::selectedGroup() const
{
    const QItemSelectionModel* sm = m_table->selectionModel();
    const QModelIndex current = sm->currentIndex();
    if (current.isValid() && sm->isRowSelected(current.row(), current.parent()))
        return current.data(FusionPlanTableModel::kGroupRole).toString();
    const QModelIndexList rows = sm->selectedRows();
    return rows.isEmpty() ? QString() : rows.first().data(FusionPlanTableModel::kGroupRole).toString();
}

QStringList FusionPlanPanel::selectedGroups() const
{
    std::vector<int> rows;
    for (const QModelIndex& idx : m_table->selectionModel()->selectedRows())
        rows.push_back(m_proxy->mapToSource(idx).row());
    std::sort(rows.begin(), rows.end());
    QStringList groups;
    for (const int row : rows) {
        if (const FusionPlanRow* r = m_model->rowAt(row))
            groups << r->group;
    }
    return groups;
}

void FusionPlanPanel::onCurrentRowChanged()
{
    updateButtons();
    if (m_updating)
        return;
    const QString group = selectedGroup();
    if (group.isEmpty())
        return;
    QStringList members;
    for (const QString& g : selectedGroups()) {
        const int row = m_model->snapshot().rowOf(g);
        if (const FusionPlanRow* r = m_model->rowAt(row))
            members << r->ops;
    }
    emit groupSelected(group, members);
}

void FusionPlanPanel::updateSummary()
{
    QString text;
    if (m_busy) {
        text = m_busyText.isEmpty() ? tr("Planning...") : m_busyText;
    } else if (!m_placeholder.isEmpty()) {
        text = m_placeholder;
    } else {
        const FusionPlanSnapshot& s = m_model->snapshot();
        int broken = 0;
        for (const FusionPlanRow& r : s.rows)
            broken += r.status.isEmpty() ? 0 : 1;
        text = tr("%1 plan · %n kernel(s)", nullptr, static_cast<int>(s.rows.size())).arg(s.planner);
        text += tr(" · %n fused group(s)", nullptr, s.fusedGroupCount());
        // Conv chains and other groups count saved bytes with different models: a sum alone could
        // go down when more is fused, so the parts are named.
        const qint64 total = s.totalBytesSaved(), chains = s.convChainBytesSaved(), others = total - chains;
        if (chains > 0 && others > 0)
            text += tr(" · saves %1 (conv chains %2 by FusePlanner's access model, other groups %3 by tensor sizes)")
                        .arg(formatBytes(total), formatBytes(chains), formatBytes(others));
        else if (chains > 0)
            text += tr(" · saves %1 (FusePlanner's access model)").arg(formatBytes(chains));
        else if (others > 0)
            text += tr(" · saves %1 (tensor sizes)").arg(formatBytes(others));
        if (broken > 0)
            text += tr(" · %n broken", nullptr, broken);
    }
    m_summary->setText(text);
    m_summary->setToolTip(text + tr("\n\nPredicted global traffic saved against one kernel per op. Conv chains "
                                    "(dw-pw, pw-dw, pw-pw) use FusePlanner's global-memory-access model (tiles, "
                                    "halos, weights read per tile); the other groups count each tensor kept inside "
                                    "a kernel twice (its write and its read). The two are different models, so "
                                    "fusing more can lower the sum."));
}

void FusionPlanPanel::updateButtons()
{
    const bool havePlan = !m_model->snapshot().rows.empty();
    const FusionPlanSnapshot& s = m_model->snapshot();
    const int row = s.rowOf(selectedGroup());
    m_fuse->setEnabled(havePlan);
    // Split acts on one group: with several rows selected it would be unclear which.
    m_split->setEnabled(row >= 0 && s.rows[static_cast<std::size_t>(row)].fused() && selectedGroups().size() == 1);
    m_replan->setEnabled(havePlan && !m_busy);
}

}  // namespace tessera::views
