#include "views/mapping/memory_view.h"

#include <algorithm>

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tessera::views {
namespace {

const QColor kBadBackground(0xfd, 0xe2, 0xe1);
const QColor kBadText(0xb7, 0x1c, 0x1c);
// The CPU target: the same warps, marked without alarm.
const QColor kGpuNoteBackground(0xee, 0xee, 0xee);
const QColor kGpuNoteText(0x55, 0x55, 0x55);

QString shapeText(const std::vector<std::int64_t>& shape)
{
    QStringList parts;
    for (const std::int64_t d : shape)
        parts << QString::number(d);
    return parts.join(QStringLiteral(", "));
}

}  // namespace

MemoryView::MemoryView(QWidget* parent)
    : QWidget(parent),
      m_layout(new QComboBox(this)),
      m_dtype(new QComboBox(this)),
      m_shape(new QLineEdit(this)),
      m_summary(new QLabel(this)),
      m_table(new QTableWidget(0, ColumnCount, this))
{
    m_layout->addItem(tr("Row-major"), static_cast<int>(schedule::MemoryLayout::RowMajor));
    m_layout->addItem(tr("Column-major"), static_cast<int>(schedule::MemoryLayout::ColumnMajor));
    m_layout->setObjectName(QStringLiteral("memoryLayout"));
    for (const auto& [bytes, name] : {std::pair{1, "1 B (int8)"}, std::pair{2, "2 B (f16)"}, std::pair{4, "4 B (f32)"},
                                      std::pair{8, "8 B (f64)"}})
        m_dtype->addItem(tr(name), bytes);
    m_dtype->setCurrentIndex(2);
    m_dtype->setObjectName(QStringLiteral("memoryDtype"));
    m_shape->setObjectName(QStringLiteral("memoryShape"));
    m_shape->setToolTip(tr("Tensor shape, comma separated; empty = the task shape"));
    m_shape->setMaximumWidth(140);

    auto* controls = new QHBoxLayout;
    controls->setContentsMargins(0, 0, 0, 0);
    controls->addWidget(new QLabel(tr("Layout"), this));
    controls->addWidget(m_layout);
    controls->addSpacing(8);
    controls->addWidget(new QLabel(tr("Shape"), this));
    controls->addWidget(m_shape);
    controls->addSpacing(8);
    controls->addWidget(new QLabel(tr("Element"), this));
    controls->addWidget(m_dtype);
    controls->addStretch(1);

    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setObjectName(QStringLiteral("memorySummary"));

    m_table->setObjectName(QStringLiteral("memoryTable"));
    m_table->setHorizontalHeaderLabels({tr("Warp"), tr("Workers"), tr("Active"), tr("Sectors (ideal)"),
                                        tr("Bank wavefronts (ideal)"), tr("Verdict")});
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);

    connect(m_layout, &QComboBox::currentIndexChanged, this, &MemoryView::specChanged);
    connect(m_dtype, &QComboBox::currentIndexChanged, this, &MemoryView::specChanged);
    connect(m_shape, &QLineEdit::textChanged, this, &MemoryView::specChanged);
}

void MemoryView::setDefaultShape(const std::vector<std::int64_t>& shape)
{
    m_shape->setPlaceholderText(shapeText(shape));
}

bool MemoryView::readSpec(schedule::MemoryAccessSpec* spec, QString* error) const
{
    spec->layout = static_cast<schedule::MemoryLayout>(m_layout->currentData().toInt());
    spec->elemBytes = m_dtype->currentData().toInt();
    spec->shape.clear();
    const QString text = m_shape->text().trimmed();
    if (text.isEmpty())
        return true;
    for (const QString& part : text.split(QLatin1Char(','))) {
        bool ok = false;
        const qlonglong v = part.trimmed().toLongLong(&ok);
        if (!ok || v <= 0) {
            *error = tr("shape: '%1' is not a positive integer").arg(part.trimmed());
            spec->shape.clear();
            return false;
        }
        spec->shape.push_back(v);
    }
    return true;
}

void MemoryView::setError(const QString& message)
{
    m_report.reset();
    m_table->setRowCount(0);
    m_summary->setText(QStringLiteral("<span style='color:#b71c1c'>%1</span>").arg(message.toHtmlEscaped()));
}

void MemoryView::setReport(const schedule::MemoryReport& report, std::int64_t numWorkers, std::int64_t warpSize,
                           std::int64_t threadsPerBlock)
{
    m_report = report;
    const auto& warps = report.warps;
    m_table->setUpdatesEnabled(false);
    m_table->setRowCount(static_cast<int>(warps.size()));
    std::int64_t uncoalesced = 0, conflicted = 0;
    for (std::size_t i = 0; i < warps.size(); ++i) {
        const schedule::WarpAccess& w = warps[i];
        const int row = static_cast<int>(i);
        uncoalesced += w.uncoalesced ? 1 : 0;
        conflicted += w.bankConflict ? 1 : 0;
        const std::int64_t first = w.warp * warpSize;
        QString who = QStringLiteral("%1\u2013%2").arg(first).arg(std::min(first + warpSize, numWorkers) - 1);
        if (threadsPerBlock > 1)
            who += tr(" (block %1)").arg(first / threadsPerBlock);
        QStringList verdict;
        if (w.uncoalesced)
            verdict << tr("uncoalesced \u00d7%1").arg(QString::number(
                           static_cast<double>(w.sectors) / static_cast<double>(std::max<std::int64_t>(1, w.idealSectors)),
                           'g', 3));
        if (w.bankConflict)
            verdict << tr("%1-way bank conflict").arg(w.conflictDegree);
        if (verdict.isEmpty())
            verdict << (w.activeLanes == 0 ? tr("idle") : tr("ok"));
        const QStringList cells = {QString::number(w.warp),
                                   who,
                                   QString::number(w.activeLanes),
                                   QStringLiteral("%1 (%2)").arg(w.sectors).arg(w.idealSectors),
                                   QStringLiteral("%1 (%2)").arg(w.wavefronts).arg(w.idealWavefronts),
                                   verdict.join(QStringLiteral(", "))};
        const bool bad = w.uncoalesced || w.bankConflict;
        for (int c = 0; c < ColumnCount; ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c != ColWorkers && c != ColVerdict)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (bad) {
                item->setBackground(m_cpuTarget ? kGpuNoteBackground : kBadBackground);
                if (c == ColVerdict || (c == ColSectors && w.uncoalesced) || (c == ColWavefronts && w.bankConflict))
                    item->setForeground(m_cpuTarget ? kGpuNoteText : kBadText);
            }
            m_table->setItem(row, c, item);
        }
    }
    m_table->setUpdatesEnabled(true);
    QString text = tr("Step %1 of %2: %3 warp(s), %4 sector(s) (ideal %5)")
                       .arg(report.step)
                       .arg(report.steps)
                       .arg(warps.size())
                       .arg(report.totalSectors)
                       .arg(report.totalIdealSectors);
    if (m_cpuTarget) {
        // Warps, sectors and banks are GPU concepts: on the CPU they describe what this mapping
        // would do as CUDA threads, not a fault of the kernel that runs here.
        const QString what = report.badWarps > 0
                                 ? tr("GPU view: if these workers were CUDA threads, %1 warp(s) would be uncoalesced "
                                      "and %2 bank-conflicted (no effect on this CPU run)")
                                       .arg(uncoalesced)
                                       .arg(conflicted)
                                 : tr("GPU view: if these workers were CUDA threads, every warp would be coalesced "
                                      "and conflict-free");
        text += QStringLiteral(" \u2014 <span style='color:#555'>%1</span>").arg(what.toHtmlEscaped());
    } else if (report.badWarps > 0)
        text += QStringLiteral(" \u2014 <b style='color:#b71c1c'>%1</b>")
                    .arg(tr("%1 bad warp(s): %2 uncoalesced, %3 bank-conflicted")
                             .arg(report.badWarps)
                             .arg(uncoalesced)
                             .arg(conflicted)
                             .toHtmlEscaped());
    else
        text += QStringLiteral(" \u2014 <b style='color:#2e7d32'>%1</b>").arg(tr("all warps coalesced and conflict-free"));
    m_summary->setText(text);
}

}  // namespace tessera::views
