#include "views/debug/error_heatmap_view.h"

#include <algorithm>
#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

namespace tessera::views {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
QString num(double v) { return QString::number(v, 'g', 6); }

/// White for no error through yellow and orange to dark red for the largest.
QCPColorGradient errorGradient()
{
    QCPColorGradient g;
    g.clearColorStops();
    g.setColorStopAt(0.0, QColor(255, 255, 255));
    g.setColorStopAt(0.25, QColor(255, 237, 160));
    g.setColorStopAt(0.5, QColor(254, 178, 76));
    g.setColorStopAt(0.75, QColor(240, 59, 32));
    g.setColorStopAt(1.0, QColor(128, 0, 38));
    g.setNanHandling(QCPColorGradient::nhNanColor);
    g.setNanColor(QColor(255, 0, 255));
    return g;
}

QCPColorGradient valueGradient()
{
    QCPColorGradient g(QCPColorGradient::gpPolar);
    g.setNanHandling(QCPColorGradient::nhNanColor);
    g.setNanColor(QColor(255, 0, 255));
    return g;
}

/// A plot with a colour map and its scale on the right; rows run top to bottom.
QCPColorMap* makeMap(QCustomPlot* plot, QCPColorScale** scale)
{
    plot->setInteractions(QCP::Interactions());
    plot->yAxis->setRangeReversed(true);
    plot->xAxis->setLabel(QStringLiteral("column"));
    plot->yAxis->setLabel(QStringLiteral("row"));
    plot->xAxis->grid()->setVisible(false);
    plot->yAxis->grid()->setVisible(false);
    auto* map = new QCPColorMap(plot->xAxis, plot->yAxis);
    map->setInterpolate(false);
    map->setTightBoundary(false);
    *scale = new QCPColorScale(plot);
    plot->plotLayout()->addElement(0, 1, *scale);
    (*scale)->setType(QCPAxis::atRight);
    map->setColorScale(*scale);
    auto* group = new QCPMarginGroup(plot);
    plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    (*scale)->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    return map;
}

void fill(QCPColorMap* map, const ErrorSlice& s)
{
    const int cols = static_cast<int>(std::max<std::int64_t>(1, s.cols));
    const int rows = static_cast<int>(std::max<std::int64_t>(1, s.rows));
    map->data()->setSize(cols, rows);
    map->data()->setRange(QCPRange(0, cols - 1), QCPRange(0, rows - 1));
    map->data()->fill(0);
    for (std::int64_t r = 0; r < s.rows; ++r)
        for (std::int64_t c = 0; c < s.cols; ++c)
            map->data()->setCell(static_cast<int>(c), static_cast<int>(r), s.cells[static_cast<std::size_t>(r * s.cols + c)]);
}

/// The finite range of cells, widened so that a constant slice still has a scale.
QCPRange cellRange(const ErrorSlice& s, bool symmetric)
{
    double lo = INFINITY, hi = -INFINITY;
    for (double v : s.cells) {
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    if (!(hi >= lo))
        return QCPRange(0, 1);
    if (symmetric) {
        const double m = std::max({std::fabs(lo), std::fabs(hi), 1e-30});
        return QCPRange(-m, m);
    }
    lo = std::min(lo, 0.0);
    if (hi <= lo)
        hi = lo + 1;
    return QCPRange(lo, hi);
}

void setAxes(QCustomPlot* plot, const ErrorSlice& s)
{
    plot->xAxis->setRange(-0.5, static_cast<double>(std::max<std::int64_t>(1, s.cols)) - 0.5);
    plot->yAxis->setRange(-0.5, static_cast<double>(std::max<std::int64_t>(1, s.rows)) - 0.5);
}

}  // namespace

ErrorHeatmapView::ErrorHeatmapView(QWidget* parent)
    : QWidget(parent), m_title(new QLabel(this)), m_outputBox(new QComboBox(this)),
      m_relativeBox(new QCheckBox(tr("Relative"), this)),
      m_rerunButton(new QPushButton(tr("Re-run in Reference Interpreter"), this)), m_sliceBar(new QWidget(this)),
      m_rowBox(new QComboBox(m_sliceBar)), m_colBox(new QComboBox(m_sliceBar)), m_info(new QLabel(this)),
      m_splitter(new QSplitter(Qt::Horizontal, this)), m_plot(new QCustomPlot(m_splitter)),
      m_rerunPane(new QWidget(m_splitter)), m_rerunLabel(new QLabel(m_rerunPane)), m_rerunPlot(new QCustomPlot(m_rerunPane))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->setSpacing(4);
    m_title->setObjectName(QStringLiteral("checkTitle"));
    m_title->setTextFormat(Qt::PlainText);
    m_title->setWordWrap(true);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    layout->addWidget(m_title);

    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Output"), this));
    m_outputBox->setObjectName(QStringLiteral("checkOutput"));
    m_outputBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    bar->addWidget(m_outputBox);
    m_relativeBox->setObjectName(QStringLiteral("checkRelative"));
    m_relativeBox->setToolTip(tr("Relative error |got − want| / max(|want|, the tensor's scale) instead of |got − want|"));
    bar->addWidget(m_relativeBox);
    bar->addStretch(1);
    m_rerunButton->setObjectName(QStringLiteral("checkRerun"));
    m_rerunButton->setToolTip(tr("Evaluate this kernel's nodes again in the reference interpreter on the inputs the "
                                 "kernel read, and show the result beside the error map"));
    bar->addWidget(m_rerunButton);
    layout->addLayout(bar);

    auto* slice = new QHBoxLayout(m_sliceBar);
    slice->setContentsMargins(0, 0, 0, 0);
    slice->addWidget(new QLabel(tr("Rows"), m_sliceBar));
    m_rowBox->setObjectName(QStringLiteral("checkRowAxis"));
    slice->addWidget(m_rowBox);
    slice->addWidget(new QLabel(tr("Columns"), m_sliceBar));
    m_colBox->setObjectName(QStringLiteral("checkColAxis"));
    slice->addWidget(m_colBox);
    m_indexLayout = new QHBoxLayout;
    m_indexLayout->setContentsMargins(8, 0, 0, 0);
    slice->addLayout(m_indexLayout);
    slice->addStretch(1);
    layout->addWidget(m_sliceBar);

    m_info->setObjectName(QStringLiteral("checkInfo"));
    m_info->setTextFormat(Qt::PlainText);
    m_info->setWordWrap(true);
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_info);

    m_plot->setObjectName(QStringLiteral("checkPlot"));
    m_plot->setMinimumSize(200, 150);
    m_map = makeMap(m_plot, &m_scale);
    m_map->setGradient(errorGradient());
    m_scale->axis()->setLabel(tr("|got − want|"));
    m_badFrame = new QCPItemRect(m_plot);
    m_badFrame->setPen(QPen(QColor(0, 90, 200), 2));
    m_badFrame->setBrush(Qt::NoBrush);
    m_badFrame->setVisible(false);
    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, &ErrorHeatmapView::onHover);

    auto* rerunLayout = new QVBoxLayout(m_rerunPane);
    rerunLayout->setContentsMargins(0, 0, 0, 0);
    m_rerunLabel->setObjectName(QStringLiteral("checkRerunText"));
    m_rerunLabel->setWordWrap(true);
    m_rerunLabel->setTextFormat(Qt::PlainText);
    rerunLayout->addWidget(m_rerunLabel);
    m_rerunPlot->setObjectName(QStringLiteral("checkRerunPlot"));
    m_rerunPlot->setMinimumSize(200, 150);
    m_rerunMap = makeMap(m_rerunPlot, &m_rerunScale);
    m_rerunMap->setGradient(valueGradient());
    m_rerunScale->axis()->setLabel(tr("re-run value"));
    rerunLayout->addWidget(m_rerunPlot, 1);
    m_rerunPane->hide();
    m_splitter->addWidget(m_plot);
    m_splitter->addWidget(m_rerunPane);
    layout->addWidget(m_splitter, 1);

    connect(m_outputBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (!m_updating)
            setOutput(i);
    });
    connect(m_relativeBox, &QCheckBox::toggled, this,
            [this](bool on) { setMode(on ? ErrorMode::Relative : ErrorMode::Absolute); });
    connect(m_rowBox, &QComboBox::currentIndexChanged, this, [this] { onAxisChanged(true); });
    connect(m_colBox, &QComboBox::currentIndexChanged, this, [this] { onAxisChanged(false); });
    connect(m_rerunButton, &QPushButton::clicked, this, [this] {
        if (!m_snapshot.kernel.empty())
            emit rerunRequested(fromStd(m_snapshot.kernel));
    });
    clear(tr("No failing check: when a kernel's outputs differ from the reference interpreter, the error map "
             "shows here (Run > Check against Reference)."));
}

const ErrorTensor* ErrorHeatmapView::current() const
{
    return m_output >= 0 && m_output < static_cast<int>(m_snapshot.outputs.size())
               ? &m_snapshot.outputs[static_cast<std::size_t>(m_output)]
               : nullptr;
}

bool ErrorHeatmapView::hasData() const
{
    const ErrorTensor* t = current();
    return t && t->got && t->want;
}

void ErrorHeatmapView::clear(const QString& message)
{
    m_snapshot = {};
    m_output = -1;
    m_cells = {};
    m_rerun.clear();
    m_rerunText.clear();
    m_rerunCells = {};
    m_updating = true;
    m_outputBox->clear();
    m_updating = false;
    m_outputBox->setEnabled(false);
    m_rerunButton->setEnabled(false);
    m_relativeBox->setEnabled(false);
    m_title->setText(message);
    m_info->clear();
    m_sliceBar->hide();
    m_rerunPane->hide();
    m_map->data()->clear();
    m_badFrame->setVisible(false);
    m_plot->replot();
}

void ErrorHeatmapView::setSnapshot(ErrorHeatmapSnapshot snapshot)
{
    m_snapshot = std::move(snapshot);
    m_rerun.clear();
    m_rerunText.clear();
    m_rerunCells = {};
    m_rerunPane->hide();
    m_updating = true;
    m_outputBox->clear();
    for (const ErrorTensor& t : m_snapshot.outputs)
        m_outputBox->addItem(fromStd(t.name));
    m_updating = false;
    m_outputBox->setEnabled(m_snapshot.outputs.size() > 1);
    m_relativeBox->setEnabled(true);
    m_rerunButton->setEnabled(m_snapshot.canRerun);
    m_rerunButton->setToolTip(m_snapshot.canRerun
                                  ? tr("Evaluate this kernel's nodes again in the reference interpreter on the inputs "
                                       "the kernel read, and show the result beside the error map")
                                  : tr("The run did not keep this kernel's inputs: %1").arg(fromStd(m_snapshot.note)));
    setOutput(m_snapshot.outputs.empty() ? -1 : 0);
}

void ErrorHeatmapView::setOutput(int index)
{
    if (index >= static_cast<int>(m_snapshot.outputs.size()))
        return;
    m_output = index;
    if (m_outputBox->currentIndex() != index) {
        m_updating = true;
        m_outputBox->setCurrentIndex(index);
        m_updating = false;
    }
    const ErrorTensor* t = current();
    m_slice = t ? defaultSlice(*t) : SliceSpec{};
    rebuildSliceBar();
    redraw();
}

void ErrorHeatmapView::setMode(ErrorMode mode)
{
    if (m_relativeBox->isChecked() != (mode == ErrorMode::Relative)) {
        m_relativeBox->setChecked(mode == ErrorMode::Relative);  // comes back through toggled()
        return;
    }
    if (m_mode == mode)
        return;
    m_mode = mode;
    m_scale->axis()->setLabel(mode == ErrorMode::Relative ? tr("|got − want| / |want|") : tr("|got − want|"));
    redraw();
}

bool ErrorHeatmapView::setSlice(const SliceSpec& s)
{
    const ErrorTensor* t = current();
    if (!t || errorSlice(*t, s, m_mode).flat.empty())
        return false;
    m_slice = s;
    rebuildSliceBar();
    redraw();
    return true;
}

void ErrorHeatmapView::rebuildSliceBar()
{
    for (QWidget* w : m_indexWidgets)
        delete w;
    m_indexWidgets.clear();
    m_indexBoxes.clear();
    const ErrorTensor* t = current();
    const std::vector<std::int64_t> dims = t && t->want ? t->want->dims : std::vector<std::int64_t>{};
    const int rank = static_cast<int>(dims.size());
    m_sliceBar->setVisible(rank >= 2 && hasData());
    m_updating = true;
    m_rowBox->clear();
    m_colBox->clear();
    for (int a = 0; a < rank; ++a) {
        const QString label = tr("axis %1 (%2)").arg(a).arg(dims[static_cast<std::size_t>(a)]);
        m_rowBox->addItem(label, a);
        m_colBox->addItem(label, a);
    }
    m_rowBox->setCurrentIndex(m_slice.rowAxis);
    m_colBox->setCurrentIndex(m_slice.colAxis);
    for (int a = 0; a < rank; ++a) {
        if (a == m_slice.rowAxis || a == m_slice.colAxis)
            continue;
        auto* label = new QLabel(tr("axis %1").arg(a), m_sliceBar);
        auto* spin = new QSpinBox(m_sliceBar);
        spin->setObjectName(QStringLiteral("checkIndex%1").arg(a));
        spin->setRange(0, static_cast<int>(std::max<std::int64_t>(0, dims[static_cast<std::size_t>(a)] - 1)));
        spin->setValue(static_cast<int>(m_slice.index[static_cast<std::size_t>(a)]));
        spin->setToolTip(tr("Index along axis %1 (0 .. %2)").arg(a).arg(dims[static_cast<std::size_t>(a)] - 1));
        connect(spin, &QSpinBox::valueChanged, this, [this, a](int v) {
            if (m_updating)
                return;
            m_slice.index[static_cast<std::size_t>(a)] = v;
            redraw();
        });
        m_indexLayout->addWidget(label);
        m_indexLayout->addWidget(spin);
        m_indexWidgets.push_back(label);
        m_indexWidgets.push_back(spin);
        m_indexBoxes.push_back(spin);
    }
    m_updating = false;
}

void ErrorHeatmapView::onAxisChanged(bool rowBox)
{
    if (m_updating)
        return;
    const int row = m_rowBox->currentIndex(), col = m_colBox->currentIndex();
    SliceSpec s = m_slice;
    // Choosing the axis the other box holds swaps the two (a transpose).
    if (rowBox) {
        if (row == s.colAxis)
            s.colAxis = s.rowAxis;
        s.rowAxis = row;
    } else {
        if (col == s.rowAxis)
            s.rowAxis = s.colAxis;
        s.colAxis = col;
    }
    m_slice = s;
    rebuildSliceBar();
    redraw();
}

ErrorStats ErrorHeatmapView::stats() const
{
    const ErrorTensor* t = current();
    return t ? errorStats(*t, m_mode) : ErrorStats{};
}

QString ErrorHeatmapView::titleText() const { return m_title->text(); }
QString ErrorHeatmapView::infoText() const { return m_info->text(); }

void ErrorHeatmapView::redraw()
{
    const ErrorTensor* t = current();
    m_cells = t ? errorSlice(*t, m_slice, m_mode) : ErrorSlice{};
    int failing = 0;
    for (const ErrorTensor& o : m_snapshot.outputs) {
        if (o.got && o.want && eval::compareTensors(*o.got, *o.want, o.tolerance).beyondTolerance > 0)
            ++failing;
    }
    QString title = tr("Kernel '%1'").arg(fromStd(m_snapshot.kernel));
    if (!m_snapshot.opType.empty())
        title += QStringLiteral(" (%1)").arg(fromStd(m_snapshot.opType));
    if (t)
        title += tr(" \u00b7 output '%1'").arg(fromStd(t->name));
    if (!m_snapshot.outputs.empty())
        title += tr(" \u00b7 %1 of %2 outputs outside tolerance").arg(failing).arg(m_snapshot.outputs.size());
    m_title->setText(title);

    if (!hasData()) {
        QString why = t && !t->note.empty() ? fromStd(t->note) : fromStd(m_snapshot.note);
        m_info->setText(why.isEmpty() ? tr("No data kept for this output.") : why);
        m_map->data()->clear();
        m_badFrame->setVisible(false);
        m_plot->replot();
        return;
    }
    const ErrorStats s = errorStats(*t, m_mode);
    const QString unit = m_mode == ErrorMode::Relative ? tr("rel") : tr("abs");
    QStringList parts;
    if (s.firstBad >= 0)
        parts << tr("first bad index %1: got %2, want %3")
                     .arg(fromStd(coordText(s.firstBadCoord)), num(s.firstBadGot), num(s.firstBadWant));
    else
        parts << tr("every element within tolerance");
    parts << tr("max %1 error %2").arg(unit, num(s.maxError)) << tr("mean %1 error %2").arg(unit, num(s.meanError));
    parts << tr("%1 of %2 elements beyond tolerance (rel %3, abs %4)")
                 .arg(s.bad)
                 .arg(s.elements)
                 .arg(num(t->tolerance.relTol), num(t->tolerance.absTol));
    if (s.nonFinite > 0)
        parts << tr("%1 NaN errors (magenta)").arg(s.nonFinite);
    m_info->setText(parts.join(QStringLiteral(" \u00b7 ")));

    fill(m_map, m_cells);
    m_map->setDataRange(cellRange(m_cells, false));
    setAxes(m_plot, m_cells);
    m_plot->xAxis->setLabel(m_slice.colAxis >= 0 ? tr("axis %1").arg(m_slice.colAxis) : QString());
    m_plot->yAxis->setLabel(m_slice.rowAxis >= 0 ? tr("axis %1").arg(m_slice.rowAxis) : QString());
    // Frame the first bad element when the slice goes through it.
    m_badFrame->setVisible(false);
    if (s.firstBad >= 0) {
        const auto it = std::find(m_cells.flat.begin(), m_cells.flat.end(), s.firstBad);
        if (it != m_cells.flat.end()) {
            const auto k = static_cast<std::int64_t>(it - m_cells.flat.begin());
            const double r = static_cast<double>(k / std::max<std::int64_t>(1, m_cells.cols));
            const double c = static_cast<double>(k % std::max<std::int64_t>(1, m_cells.cols));
            m_badFrame->topLeft->setCoords(c - 0.5, r - 0.5);
            m_badFrame->bottomRight->setCoords(c + 0.5, r + 0.5);
            m_badFrame->setVisible(true);
        }
    }
    m_plot->replot();
    redrawRerun();
}

void ErrorHeatmapView::redrawRerun()
{
    m_rerunCells = {};
    const ErrorTensor* t = current();
    std::shared_ptr<const ir::TensorData> out;
    if (t) {
        for (const auto& [name, data] : m_rerun)
            if (name == t->name)
                out = data;
    }
    QString text = m_rerunText;
    if (out && t && t->want) {
        m_rerunCells = valueSlice(*out, m_slice);
        double worst = 0;
        bool comparable = out->dims == t->want->dims;
        if (comparable) {
            for (std::int64_t i = 0; i < out->numElements(); ++i) {
                const double d = std::fabs(out->elementAsDouble(i) - t->want->elementAsDouble(i));
                if (std::isfinite(d))
                    worst = std::max(worst, d);
            }
        }
        text = comparable ? tr("Reference interpreter re-run of '%1', output '%2': max |re-run − want| = %3%4")
                                .arg(fromStd(m_snapshot.kernel), fromStd(t->name), num(worst),
                                     worst == 0 ? tr(" (the check's reference is reproduced: the kernel is at fault)")
                                                : QString())
                           : tr("Reference interpreter re-run: output '%1' has another shape").arg(fromStd(t->name));
    }
    m_rerunLabel->setText(text);
    if (!m_rerunCells.cells.empty()) {
        fill(m_rerunMap, m_rerunCells);
        m_rerunMap->setDataRange(cellRange(m_rerunCells, true));
        setAxes(m_rerunPlot, m_rerunCells);
    } else {
        m_rerunMap->data()->clear();
    }
    m_rerunPlot->setVisible(!m_rerunCells.cells.empty());
    m_rerunPlot->replot();
}

void ErrorHeatmapView::setRerunBusy()
{
    m_rerun.clear();
    m_rerunText = tr("Re-running '%1' in the reference interpreter...").arg(fromStd(m_snapshot.kernel));
    m_rerunButton->setEnabled(false);
    m_rerunPane->show();
    redrawRerun();
}

void ErrorHeatmapView::setRerunResult(const std::vector<std::pair<std::string, ir::TensorData>>& outputs)
{
    m_rerun.clear();
    for (const auto& [name, data] : outputs)
        m_rerun.emplace_back(name, std::make_shared<const ir::TensorData>(data));
    m_rerunText = tr("The re-run has no output named like this one.");
    m_rerunButton->setEnabled(m_snapshot.canRerun);
    m_rerunPane->show();
    redrawRerun();
}

void ErrorHeatmapView::setRerunError(const QString& message)
{
    m_rerun.clear();
    m_rerunText = tr("Re-run failed: %1").arg(message);
    m_rerunButton->setEnabled(m_snapshot.canRerun);
    m_rerunPane->show();
    redrawRerun();
}

QString ErrorHeatmapView::rerunText() const { return m_rerunPane->isVisibleTo(this) ? m_rerunLabel->text() : QString(); }
bool ErrorHeatmapView::rerunShown() const { return m_rerunPane->isVisibleTo(this) && !m_rerunCells.cells.empty(); }

QString ErrorHeatmapView::cellToolTip(std::int64_t row, std::int64_t col) const
{
    const ErrorTensor* t = current();
    if (!hasData() || row < 0 || col < 0 || row >= m_cells.rows || col >= m_cells.cols)
        return {};
    const std::int64_t k = row * m_cells.cols + col;
    const std::int64_t flat = m_cells.flat[static_cast<std::size_t>(k)];
    const double got = t->got->elementAsDouble(flat), want = t->want->elementAsDouble(flat);
    QString tip = fromStd(coordText(unflatten(flat, t->want->dims)));
    tip += tr("\ngot %1\nwant %2\n|got − want| %3\nrelative %4")
               .arg(num(got), num(want), num(elementError(got, want, ErrorMode::Absolute, t->tolerance)),
                    num(elementError(got, want, ErrorMode::Relative, t->tolerance)));
    if (!m_rerunCells.cells.empty() && k < static_cast<std::int64_t>(m_rerunCells.cells.size()))
        tip += tr("\nre-run %1").arg(num(m_rerunCells.cells[static_cast<std::size_t>(k)]));
    return tip;
}

void ErrorHeatmapView::onHover(QMouseEvent* event)
{
    const double x = m_plot->xAxis->pixelToCoord(event->position().x());
    const double y = m_plot->yAxis->pixelToCoord(event->position().y());
    const QString tip = cellToolTip(static_cast<std::int64_t>(std::floor(y + 0.5)), static_cast<std::int64_t>(std::floor(x + 0.5)));
    if (tip.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), tip, m_plot);
}

}  // namespace tessera::views
