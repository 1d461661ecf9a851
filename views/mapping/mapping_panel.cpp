#include "views/mapping/mapping_panel.h"

#include <algorithm>

#include <QComboBox>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include "views/mapping/expression_edit.h"
#include "views/mapping/mapping_apply_bar.h"
#include "views/mapping/mapping_legend.h"
#include "views/mapping/memory_view.h"

namespace tessera::views {
namespace {

constexpr int kListedTasks = 12;

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString taskText(const std::vector<std::int64_t>& t)
{
    QStringList parts;
    for (const std::int64_t v : t)
        parts << QString::number(v);
    return QStringLiteral("(%1)").arg(parts.join(QLatin1Char(',')));
}

QString shapeText(const std::vector<std::int64_t>& shape, const QString& sep = QStringLiteral("\u00d7"))
{
    QStringList parts;
    for (const std::int64_t d : shape)
        parts << QString::number(d);
    return parts.join(sep);
}

QSpinBox* noneSpin(QWidget* parent, const QString& name)
{
    auto* s = new QSpinBox(parent);
    s->setObjectName(name);
    s->setRange(-1, 0);
    s->setValue(-1);
    s->setSpecialValueText(QObject::tr("none"));
    s->setMinimumWidth(70);
    return s;
}

}  // namespace

MappingPanel::MappingPanel(QWidget* parent)
    : QWidget(parent),
      m_applyBar(new MappingApplyBar(this)),
      m_gridEdit(new ExpressionEdit(this)),
      m_blockEdit(new ExpressionEdit(this)),
      m_gridLabel(new QLabel(tr("Mapping"), this)),
      m_diagnostic(new QLabel(this)),
      m_info(new QLabel(this)),
      m_levelRow(new QWidget(this)),
      m_colorBy(new QComboBox(this)),
      m_blockSpin(noneSpin(this, QStringLiteral("blockSpin"))),
      m_workerLabel(new QLabel(tr("Worker"), this)),
      m_workerSpin(noneSpin(this, QStringLiteral("workerSpin"))),
      m_sliceRow(new QWidget(this)),
      m_rowDim(new QComboBox(this)),
      m_colDim(new QComboBox(this)),
      m_play(new QToolButton(this)),
      m_stepSlider(new QSlider(Qt::Horizontal, this)),
      m_stepLabel(new QLabel(this)),
      m_playTimer(new QTimer(this)),
      m_canvas(new MappingCanvas(this)),
      m_legend(new MappingLegend(this)),
      m_selection(new QLabel(this)),
      m_memory(new MemoryView(this))
{
    m_gridEdit->setObjectName(QStringLiteral("mappingExpression"));
    m_blockEdit->setObjectName(QStringLiteral("blockExpression"));
    m_gridEdit->setPlaceholderText(tr("e.g. spatial(2,5).repeat(3,4)"));
    m_blockEdit->setPlaceholderText(tr("optional: the threads of each block, e.g. spatial(4,8).repeat(4,4)"));
    m_gridEdit->setToolTip(tr("A Hidet task mapping: spatial, repeat, row_/col_ forms, auto_map, '*' and "
                              ".spatial/.repeat chains. With a block mapping this is the grid (blocks) level."));
    m_blockEdit->setToolTip(tr("The mapping of the threads inside each block; drawn composed as grid * block."));

    m_diagnostic->setObjectName(QStringLiteral("mappingDiagnostic"));
    m_diagnostic->setTextFormat(Qt::RichText);
    m_diagnostic->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_diagnostic->hide();
    m_info->setObjectName(QStringLiteral("mappingInfo"));
    m_selection->setObjectName(QStringLiteral("mappingSelection"));
    m_selection->setWordWrap(true);
    m_selection->setTextFormat(Qt::RichText);

    auto* editors = new QGridLayout;
    editors->setContentsMargins(0, 0, 0, 0);
    editors->setHorizontalSpacing(6);
    editors->setVerticalSpacing(3);
    editors->addWidget(m_gridLabel, 0, 0);
    editors->addWidget(m_gridEdit, 0, 1);
    editors->addWidget(new QLabel(tr("Block"), this), 1, 0);
    editors->addWidget(m_blockEdit, 1, 1);
    editors->addWidget(m_diagnostic, 2, 1);
    editors->setColumnStretch(1, 1);

    m_colorBy->setObjectName(QStringLiteral("colorBy"));
    m_colorBy->addItem(tr("Blocks"), static_cast<int>(MappingCanvas::ColorBy::Block));
    m_colorBy->addItem(tr("Threads"), static_cast<int>(MappingCanvas::ColorBy::Thread));
    m_colorBy->addItem(tr("All workers"), static_cast<int>(MappingCanvas::ColorBy::Worker));
    m_colorBy->setToolTip(tr("Level: colour cells by block (grid level), by thread index within the block "
                             "(block level), or by global worker (block * threads + thread)"));
    auto* levelLayout = new QHBoxLayout(m_levelRow);
    levelLayout->setContentsMargins(0, 0, 0, 0);
    levelLayout->addWidget(new QLabel(tr("Colour by"), m_levelRow));
    levelLayout->addWidget(m_colorBy);
    levelLayout->addSpacing(8);
    levelLayout->addWidget(new QLabel(tr("Block"), m_levelRow));
    levelLayout->addWidget(m_blockSpin);
    m_levelRow->hide();

    auto* pickRow = new QHBoxLayout;
    pickRow->setContentsMargins(0, 0, 0, 0);
    pickRow->addWidget(m_levelRow);
    pickRow->addWidget(m_workerLabel);
    pickRow->addWidget(m_workerSpin);
    pickRow->addSpacing(12);
    pickRow->addWidget(m_sliceRow);
    pickRow->addStretch(1);
    auto* sliceLayout = new QHBoxLayout(m_sliceRow);
    sliceLayout->setContentsMargins(0, 0, 0, 0);
    sliceLayout->addWidget(new QLabel(tr("Rows"), m_sliceRow));
    sliceLayout->addWidget(m_rowDim);
    sliceLayout->addWidget(new QLabel(tr("Columns"), m_sliceRow));
    sliceLayout->addWidget(m_colDim);
    m_rowDim->setObjectName(QStringLiteral("rowDim"));
    m_colDim->setObjectName(QStringLiteral("colDim"));
    m_sliceRow->hide();

    m_play->setObjectName(QStringLiteral("playSteps"));
    m_play->setCheckable(true);
    m_play->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
    m_play->setToolTip(tr("Play: step through the repeat order, all workers together"));
    m_stepSlider->setObjectName(QStringLiteral("stepSlider"));
    m_stepSlider->setRange(0, 0);
    m_stepSlider->setPageStep(1);
    m_stepSlider->setToolTip(tr("Step: the s-th task of every worker's ordered list (leftmost: no step)"));
    m_stepLabel->setMinimumWidth(fontMetrics().horizontalAdvance(tr("step 0000 of 0000")));
    auto* stepRow = new QHBoxLayout;
    stepRow->setContentsMargins(0, 0, 0, 0);
    stepRow->addWidget(m_play);
    stepRow->addWidget(m_stepSlider, 1);
    stepRow->addWidget(m_stepLabel);
    m_playTimer->setInterval(kPlayIntervalMs);

    auto* canvasBox = new QWidget(this);
    auto* canvasLayout = new QVBoxLayout(canvasBox);
    canvasLayout->setContentsMargins(0, 0, 0, 0);
    canvasLayout->setSpacing(3);
    canvasLayout->addWidget(m_canvas, 1);
    canvasLayout->addWidget(m_legend);
    canvasLayout->addWidget(m_selection);
    m_canvas->setObjectName(QStringLiteral("mappingCanvas"));
    m_legend->setObjectName(QStringLiteral("mappingLegend"));
    m_memory->setObjectName(QStringLiteral("memoryView"));

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(canvasBox);
    split->addWidget(m_memory);
    // The canvas takes the room; the memory table shrinks first.
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);
    split->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->setSpacing(4);
    layout->addWidget(m_applyBar);
    layout->addLayout(editors);
    layout->addWidget(m_info);
    layout->addLayout(pickRow);
    layout->addLayout(stepRow);
    layout->addWidget(split, 1);

    m_applyBar->setObjectName(QStringLiteral("mappingApplyBar"));
    // Ctrl+Return applies from anywhere in the panel (typically the expression being edited).
    addAction(m_applyBar->applyAction());
    connect(m_gridEdit, &QLineEdit::textChanged, this, &MappingPanel::rebuild);
    connect(m_blockEdit, &QLineEdit::textChanged, this, &MappingPanel::rebuild);
    connect(m_colorBy, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_updatingControls)
            applyFocus();
    });
    connect(m_blockSpin, &QSpinBox::valueChanged, this, [this] {
        if (!m_updatingControls)
            applyFocus();
    });
    connect(m_workerSpin, &QSpinBox::valueChanged, this, [this] {
        if (!m_updatingControls)
            applyFocus();
    });
    connect(m_rowDim, &QComboBox::currentIndexChanged, this, [this] {
        if (m_updatingControls)
            return;
        // Choosing the columns' dim for the rows swaps the two.
        if (m_rowDim->currentIndex() == m_colDim->currentIndex()) {
            m_updatingControls = true;
            m_colDim->setCurrentIndex(std::max(0, m_canvas->rowDim()));
            m_updatingControls = false;
        }
        rebuildSliceControls();
    });
    connect(m_colDim, &QComboBox::currentIndexChanged, this, [this] {
        if (m_updatingControls)
            return;
        if (m_rowDim->currentIndex() == m_colDim->currentIndex()) {
            m_updatingControls = true;
            m_rowDim->setCurrentIndex(m_canvas->colDim());
            m_updatingControls = false;
        }
        rebuildSliceControls();
    });
    connect(m_stepSlider, &QSlider::valueChanged, this, [this] {
        m_canvas->setStep(step());
        updateStepLabel();
        runMemoryAnalysis();
        updateSelectionText();
    });
    connect(m_play, &QToolButton::toggled, this, [this](bool on) {
        m_play->setIcon(style()->standardIcon(on ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
        if (on) {
            if (m_stepSlider->value() == 0)
                m_stepSlider->setValue(1);
            m_playTimer->start();
        } else {
            m_playTimer->stop();
        }
    });
    connect(m_playTimer, &QTimer::timeout, this, &MappingPanel::advancePlay);
    connect(m_canvas, &MappingCanvas::cellClicked, this, &MappingPanel::onCellClicked);
    connect(m_canvas, &MappingCanvas::workerHovered, this, [this] { updateSelectionText(); });
    connect(m_legend, &MappingLegend::keyClicked, this, &MappingPanel::onLegendClicked);
    connect(m_memory, &MemoryView::specChanged, this, &MappingPanel::runMemoryAnalysis);

    updateStepLabel();
    updateSelectionText();
}

MappingPanel::~MappingPanel() = default;

void MappingPanel::setExpressions(const QString& grid, const QString& block)
{
    const QSignalBlocker b1(m_gridEdit), b2(m_blockEdit);
    m_gridEdit->setText(grid);
    m_blockEdit->setText(block);
    rebuild();
}

QString MappingPanel::gridExpression() const { return m_gridEdit->text(); }
QString MappingPanel::blockExpression() const { return m_blockEdit->text(); }

void MappingPanel::rebuild()
{
    const MappingBuild build =
        buildMappingSnapshot(m_gridEdit->text().toStdString(), m_blockEdit->text().toStdString());
    m_applyBar->setExpressionsValid(build.snapshot != nullptr);
    if (!build.snapshot) {
        showError(build);
        return;
    }
    m_errorText.clear();
    m_gridEdit->clearError();
    m_blockEdit->clearError();
    m_diagnostic->hide();
    applySnapshot(build.snapshot);
    emit mappingEdited(m_gridEdit->text(), m_blockEdit->text());
}

void MappingPanel::showError(const MappingBuild& build)
{
    ExpressionEdit* edit = build.source == MappingSource::Block ? m_blockEdit : m_gridEdit;
    ExpressionEdit* other = edit == m_gridEdit ? m_blockEdit : m_gridEdit;
    other->clearError();
    const support::Diagnostic& d = build.error;
    const QString text = edit->text();
    const int begin = std::max(1, d.begin.column);
    const int end = std::max(begin, d.end.column);
    edit->setErrorRange(begin, end);

    // Compiler-style: the source, a caret line under the columns, then message and hints.
    const QString where = build.source == MappingSource::Block ? tr("block") : tr("mapping");
    const QString caret = QString(begin - 1, QLatin1Char(' ')) + QLatin1Char('^') +
                          QString(std::max(0, std::min(end, static_cast<int>(text.size())) - begin), QLatin1Char('~'));
    m_errorText = QStringLiteral("%1:%2:%3: error: %4").arg(where).arg(1).arg(begin).arg(fromStd(d.message));
    QString html = QStringLiteral("<pre style='margin:0'>%1\n<span style='color:#d32f2f'><b>%2</b></span></pre>"
                                  "<span style='color:#b71c1c'><b>%3</b></span>")
                       .arg(text.toHtmlEscaped(), caret, m_errorText.toHtmlEscaped());
    for (const std::string& n : d.notes)
        html += QStringLiteral("<br><span style='color:#555'>hint: %1</span>").arg(fromStd(n).toHtmlEscaped());
    if (m_snapshot)
        html += QStringLiteral("<br><i style='color:#777'>%1</i>").arg(tr("(showing the last valid mapping)"));
    m_diagnostic->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_diagnostic->setText(html);
    m_diagnostic->show();
}

void MappingPanel::applySnapshot(std::shared_ptr<const MappingSnapshot> snapshot)
{
    const bool rankChanged = !m_snapshot || m_snapshot->rank() != snapshot->rank();
    const bool levelsChanged = !m_snapshot || m_snapshot->twoLevel() != snapshot->twoLevel();
    m_snapshot = std::move(snapshot);
    const MappingSnapshot& s = *m_snapshot;

    m_updatingControls = true;
    m_gridLabel->setText(s.twoLevel() ? tr("Grid") : tr("Mapping"));
    m_levelRow->setVisible(s.twoLevel());
    m_workerLabel->setText(s.twoLevel() ? tr("Thread") : tr("Worker"));
    m_blockSpin->setRange(-1, static_cast<int>(std::min<std::int64_t>(s.numBlocks() - 1, INT32_MAX)));
    m_workerSpin->setRange(
        -1, static_cast<int>(std::min<std::int64_t>((s.twoLevel() ? s.threadsPerBlock() : s.numWorkers()) - 1, INT32_MAX)));
    if (levelsChanged) {
        m_colorBy->setCurrentIndex(0);
        m_blockSpin->setValue(-1);
        m_workerSpin->setValue(-1);
    }
    const int oldStep = m_stepSlider->value();
    m_stepSlider->setRange(0, static_cast<int>(std::min<std::int64_t>(s.steps(), INT32_MAX)));
    m_stepSlider->setValue(std::min(oldStep, m_stepSlider->maximum()));
    if (rankChanged) {
        m_rowDim->clear();
        m_colDim->clear();
        for (int d = 0; d < s.rank(); ++d) {
            m_rowDim->addItem(tr("dim %1").arg(d));
            m_colDim->addItem(tr("dim %1").arg(d));
        }
        m_rowDim->setCurrentIndex(std::max(0, s.rank() - 2));
        m_colDim->setCurrentIndex(s.rank() - 1);
    }
    for (int d = 0; d < s.rank(); ++d) {
        const QString text = tr("dim %1 (%2)").arg(d).arg(s.shape()[static_cast<std::size_t>(d)]);
        m_rowDim->setItemText(d, text);
        m_colDim->setItemText(d, text);
    }
    m_sliceRow->setVisible(s.rank() >= 2);
    m_updatingControls = false;

    QString info = tr("%n worker(s)", nullptr, static_cast<int>(std::min<std::int64_t>(s.numWorkers(), INT32_MAX)));
    if (s.twoLevel())
        info += tr(" = %1 block(s) \u00d7 %2 thread(s)").arg(s.numBlocks()).arg(s.threadsPerBlock());
    info += tr(" \u00b7 task shape %1 \u00b7 %2 task(s) per worker, in order").arg(shapeText(s.shape())).arg(s.steps());
    if (s.twoLevel())
        info += tr(" \u00b7 %1").arg(fromStd(s.mapping.str()));
    m_info->setText(info);
    m_info->setToolTip(fromStd(s.mapping.str()));
    m_memory->setDefaultShape(s.shape());

    m_canvas->setSnapshot(m_snapshot);
    m_canvas->setStep(step());
    rebuildSliceControls();
    applyFocus();
    updateStepLabel();
    runMemoryAnalysis();
}

void MappingPanel::rebuildSliceControls()
{
    if (!m_snapshot)
        return;
    const MappingSnapshot& s = *m_snapshot;
    const int rowDim = s.rank() >= 2 ? m_rowDim->currentIndex() : -1;
    const int colDim = s.rank() >= 2 ? m_colDim->currentIndex() : 0;
    std::vector<std::int64_t> oldValues;
    for (QSpinBox* sp : m_fixedSpins)
        oldValues.push_back(sp->value());
    const bool sameCount = m_fixedSpins.size() == static_cast<std::size_t>(s.rank());
    for (QSpinBox* sp : m_fixedSpins)
        sp->deleteLater();
    for (QLabel* l : m_fixedLabels)
        l->deleteLater();
    m_fixedSpins.assign(static_cast<std::size_t>(s.rank()), nullptr);
    m_fixedLabels.clear();
    auto* layout = static_cast<QHBoxLayout*>(m_sliceRow->layout());
    std::vector<QSpinBox*> spins;
    for (int d = 0; d < s.rank(); ++d) {
        if (d == rowDim || d == colDim)
            continue;
        auto* label = new QLabel(tr("dim %1 =").arg(d), m_sliceRow);
        auto* spin = new QSpinBox(m_sliceRow);
        spin->setObjectName(QStringLiteral("sliceDim%1").arg(d));
        spin->setRange(0, static_cast<int>(std::min<std::int64_t>(s.shape()[static_cast<std::size_t>(d)] - 1, INT32_MAX)));
        if (sameCount && oldValues[static_cast<std::size_t>(d)] >= 0)
            spin->setValue(static_cast<int>(oldValues[static_cast<std::size_t>(d)]));
        layout->addWidget(label);
        layout->addWidget(spin);
        m_fixedLabels.push_back(label);
        m_fixedSpins[static_cast<std::size_t>(d)] = spin;
        connect(spin, &QSpinBox::valueChanged, this, &MappingPanel::applySlice);
    }
    // Spins only exist for sliced dims; keep a -1 placeholder value for the drawn ones.
    for (int d = 0; d < s.rank(); ++d) {
        if (m_fixedSpins[static_cast<std::size_t>(d)] == nullptr) {
            auto* hidden = new QSpinBox(m_sliceRow);
            hidden->setRange(-1, -1);
            hidden->hide();
            m_fixedSpins[static_cast<std::size_t>(d)] = hidden;
        }
    }
    applySlice();
}

void MappingPanel::applySlice()
{
    if (!m_snapshot)
        return;
    std::vector<std::int64_t> fixed;
    for (QSpinBox* sp : m_fixedSpins)
        fixed.push_back(std::max(0, sp->value()));
    const int rank = m_snapshot->rank();
    m_canvas->setSlice(rank >= 2 ? m_rowDim->currentIndex() : -1, rank >= 2 ? m_colDim->currentIndex() : 0,
                       std::move(fixed));
}

void MappingPanel::applyFocus()
{
    if (!m_snapshot)
        return;
    const MappingSnapshot& s = *m_snapshot;
    std::int64_t legendKey = -1;
    if (s.twoLevel()) {
        const auto mode = static_cast<MappingCanvas::ColorBy>(m_colorBy->currentData().toInt());
        m_canvas->setColorBy(mode);
        const std::int64_t b = m_blockSpin->value();
        const std::int64_t t = m_workerSpin->value();
        m_canvas->setRegionBlock(b);
        m_canvas->setFocusWorker(b >= 0 && t >= 0 ? b * s.threadsPerBlock() + t : -1);
        legendKey = mode == MappingCanvas::ColorBy::Block    ? b
                    : mode == MappingCanvas::ColorBy::Thread ? t
                                                             : m_canvas->focusWorker();
        m_legend->setKeys(m_canvas->numColorKeys(),
                          mode == MappingCanvas::ColorBy::Block    ? tr("Block")
                          : mode == MappingCanvas::ColorBy::Thread ? tr("Thread")
                                                                   : tr("Worker"),
                          legendKey);
    } else {
        m_canvas->setColorBy(MappingCanvas::ColorBy::Worker);
        m_canvas->setRegionBlock(-1);
        m_canvas->setFocusWorker(m_workerSpin->value());
        m_legend->setKeys(s.numWorkers(), tr("Worker"), m_workerSpin->value());
    }
    updateSelectionText();
}

void MappingPanel::setStep(std::int64_t step)
{
    m_stepSlider->setValue(static_cast<int>(std::clamp<std::int64_t>(step + 1, 0, m_stepSlider->maximum())));
}

std::int64_t MappingPanel::step() const { return m_stepSlider->value() - 1; }

void MappingPanel::setFocusWorker(std::int64_t worker)
{
    if (m_snapshot && m_snapshot->twoLevel() && worker >= 0) {
        setBlockThread(worker / m_snapshot->threadsPerBlock(), worker % m_snapshot->threadsPerBlock());
        return;
    }
    m_workerSpin->setValue(static_cast<int>(worker));
}

void MappingPanel::setBlockThread(std::int64_t block, std::int64_t thread)
{
    m_updatingControls = true;
    m_blockSpin->setValue(static_cast<int>(block));
    m_workerSpin->setValue(static_cast<int>(thread));
    m_updatingControls = false;
    applyFocus();
}

void MappingPanel::setColorBy(MappingCanvas::ColorBy mode)
{
    const int idx = m_colorBy->findData(static_cast<int>(mode));
    if (idx >= 0)
        m_colorBy->setCurrentIndex(idx);
}

void MappingPanel::setPlaying(bool playing) { m_play->setChecked(playing); }
bool MappingPanel::isPlaying() const { return m_play->isChecked(); }

void MappingPanel::advancePlay()
{
    const int next = m_stepSlider->value() + 1;
    m_stepSlider->setValue(next > m_stepSlider->maximum() ? std::min(1, m_stepSlider->maximum()) : next);
}

void MappingPanel::updateStepLabel()
{
    const std::int64_t steps = m_snapshot ? m_snapshot->steps() : 0;
    m_stepLabel->setText(step() < 0 ? tr("all %n step(s)", nullptr, static_cast<int>(steps))
                                    : tr("step %1 of %2").arg(step()).arg(steps));
}

void MappingPanel::onCellClicked(qint64 worker, qint64)
{
    if (!m_snapshot || worker < 0)
        return;
    if (m_snapshot->twoLevel()) {
        const std::int64_t tpb = m_snapshot->threadsPerBlock();
        const bool same = m_blockSpin->value() == worker / tpb && m_workerSpin->value() == worker % tpb;
        setBlockThread(same ? -1 : worker / tpb, same ? -1 : worker % tpb);
    } else {
        m_workerSpin->setValue(m_workerSpin->value() == worker ? -1 : static_cast<int>(worker));
    }
}

void MappingPanel::onLegendClicked(qint64 key)
{
    if (!m_snapshot)
        return;
    if (!m_snapshot->twoLevel()) {
        m_workerSpin->setValue(m_workerSpin->value() == key ? -1 : static_cast<int>(key));
        return;
    }
    switch (m_canvas->colorBy()) {
    case MappingCanvas::ColorBy::Block: m_blockSpin->setValue(m_blockSpin->value() == key ? -1 : static_cast<int>(key)); break;
    case MappingCanvas::ColorBy::Thread:
        setBlockThread(std::max(0, m_blockSpin->value()), m_workerSpin->value() == key ? -1 : key);
        break;
    case MappingCanvas::ColorBy::Worker: onCellClicked(key, 0); break;
    }
}

void MappingPanel::updateSelectionText()
{
    if (!m_snapshot) {
        m_selection->setText(QString());
        return;
    }
    const MappingSnapshot& s = *m_snapshot;
    const auto listTasks = [&s](std::int64_t w) {
        QStringList items;
        s.mapping.forEachTask(w, [&items](std::int64_t, const schedule::Task& t) {
            items << taskText(t);
            return items.size() < kListedTasks;
        });
        QString text = items.join(QLatin1Char(' '));
        if (s.steps() > kListedTasks)
            text += QStringLiteral(" \u2026");
        return text;
    };
    QStringList parts;
    const std::int64_t hover = m_canvas->hoveredWorker();
    if (s.twoLevel()) {
        const std::int64_t tpb = s.threadsPerBlock();
        const std::int64_t b = hover >= 0 ? hover / tpb : m_blockSpin->value();
        if (b >= 0) {
            // Bounding box of block b's cells, and whether it is a dense box.
            const std::size_t rank = s.shape().size();
            std::vector<std::int64_t> lo(rank, INT64_MAX), hi(rank, -1);
            std::int64_t count = 0;
            for (std::size_t i = 0; i < s.cells.size(); ++i) {
                if (s.cells[i].worker < 0 || s.cells[i].worker / tpb != b)
                    continue;
                ++count;
                std::int64_t flat = static_cast<std::int64_t>(i);
                for (std::size_t d = 0; d < rank; ++d) {
                    const std::int64_t v = flat / s.strides[d];
                    flat %= s.strides[d];
                    lo[d] = std::min(lo[d], v);
                    hi[d] = std::max(hi[d], v);
                }
            }
            QStringList ranges;
            std::int64_t volume = 1;
            for (std::size_t d = 0; d < rank; ++d) {
                ranges << QStringLiteral("%1:%2").arg(lo[d]).arg(hi[d] + 1);
                volume *= hi[d] - lo[d] + 1;
            }
            parts << tr("<b>Block %1</b> owns [%2] of the %3 output: %4 task(s)%5")
                         .arg(b)
                         .arg(ranges.join(QStringLiteral(", ")), shapeText(s.shape()))
                         .arg(count)
                         .arg(count == volume ? tr(", one contiguous tile") : tr(", spread over that box"));
        }
        const std::int64_t w = hover >= 0 ? hover : m_canvas->focusWorker();
        if (w >= 0)
            parts << tr("<b>thread %1</b> (worker %2) runs %3 task(s): %4")
                         .arg(w % tpb)
                         .arg(w)
                         .arg(s.steps())
                         .arg(listTasks(w));
    } else {
        const std::int64_t w = m_canvas->effectiveFocus();
        if (w >= 0)
            parts << tr("<b>Worker %1</b> runs %2 task(s) in this order: %3").arg(w).arg(s.steps()).arg(listTasks(w));
    }
    if (parts.isEmpty())
        parts << tr("<span style='color:#666'>Hover a cell to follow its worker, click it (or a swatch) to keep "
                    "it; numbers on its cells are the execution order.</span>");
    m_selection->setText(parts.join(QStringLiteral(" \u00b7 ")));
}

void MappingPanel::setCpuTarget(bool cpu)
{
    if (m_memory->cpuTarget() == cpu)
        return;
    m_memory->setCpuTarget(cpu);
    if (m_snapshot)
        runMemoryAnalysis();
}

void MappingPanel::runMemoryAnalysis()
{
    if (!m_snapshot)
        return;
    schedule::MemoryAccessSpec spec;
    QString error;
    if (!m_memory->readSpec(&spec, &error)) {
        m_memory->setError(error);
        m_canvas->setFlaggedWorkers({});
        return;
    }
    spec.step = std::max<std::int64_t>(step(), 0);
    const auto report = schedule::analyzeMemory(m_snapshot->mapping, spec);
    if (!report) {
        const support::Diagnostic* d = report.diagnostics().firstError();
        m_memory->setError(d ? fromStd(d->message) : tr("memory analysis failed"));
        m_canvas->setFlaggedWorkers({});
        return;
    }
    m_memory->setReport(*report, m_snapshot->numWorkers(), spec.warpSize,
                        m_snapshot->twoLevel() ? m_snapshot->threadsPerBlock() : 1);
    std::vector<bool> flags(static_cast<std::size_t>(m_snapshot->numWorkers()), false);
    for (const schedule::WarpAccess& w : report->warps) {
        if (m_memory->cpuTarget())
            break;  // no red outlines for a GPU-only concern on the CPU
        if (!w.uncoalesced && !w.bankConflict)
            continue;
        const std::int64_t first = w.warp * spec.warpSize;
        const std::int64_t last = std::min(first + spec.warpSize, m_snapshot->numWorkers());
        for (std::int64_t k = first; k < last; ++k)
            flags[static_cast<std::size_t>(k)] = true;
    }
    m_canvas->setFlaggedWorkers(std::move(flags));
}

}  // namespace tessera::views
