#include "views/properties/properties_panel.h"

#include <algorithm>
#include <cmath>

#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QScrollArea>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "core/ir/compute.h"
#include "core/ir/op_registry.h"
#include "core/ir/shape_inference.h"
#include "core/lower/lower.h"
#include "views/properties/histogram_widget.h"

namespace tessera::views {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString displayName(const std::string& s)
{
    QString out = fromStd(s);
    for (QChar& c : out) {
        if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            c = QChar(0x2423);
    }
    return out.isEmpty() ? QStringLiteral("(unnamed)") : out;
}

QString typeText(const ir::TensorType& t) { return t.isDefined() ? fromStd(t.str()) : QStringLiteral("?"); }

QString withUnit(double v, const char* unit)
{
    static const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
    int i = 0;
    while (std::abs(v) >= 1000 && i < 5) {
        v /= 1000;
        ++i;
    }
    return QStringLiteral("%1 %2%3").arg(QString::number(v, 'f', i == 0 ? 0 : 2), prefixes[i], unit);
}

QString bytesText(double bytes)
{
    static const char* units[] = {"B", "KiB", "MiB", "GiB"};
    int i = 0;
    while (bytes >= 1024 && i < 3) {
        bytes /= 1024;
        ++i;
    }
    return QStringLiteral("%1 %2").arg(QString::number(bytes, 'f', i == 0 ? 0 : 1), units[i]);
}

constexpr int kMaxNameColumn = 200;

QTreeWidget* makeTable(QWidget* parent, const QStringList& headers, const QString& objectName)
{
    auto* t = new QTreeWidget(parent);
    t->setObjectName(objectName);
    t->setHeaderLabels(headers);
    t->setRootIsDecorated(false);
    t->setUniformRowHeights(true);
    t->setAlternatingRowColors(true);
    t->setSelectionMode(QAbstractItemView::NoSelection);
    t->setFocusPolicy(Qt::NoFocus);
    t->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    t->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    t->header()->setStretchLastSection(true);
    t->setWordWrap(false);
    t->setTextElideMode(Qt::ElideMiddle);
    return t;
}

void fitHeight(QTreeWidget* t)
{
    for (int c = 0; c < t->columnCount(); ++c) {
        bool empty = c > 1;
        for (int r = 0; empty && r < t->topLevelItemCount(); ++r)
            empty = t->topLevelItem(r)->text(c).isEmpty();
        t->setColumnHidden(c, empty);
        t->resizeColumnToContents(c);
    }
    // Long ONNX names would push the types out of view; they are elided (full text in tooltips).
    t->setColumnWidth(0, std::min(t->columnWidth(0), kMaxNameColumn));
    const int rows = t->topLevelItemCount();
    const int rowH = rows > 0 ? t->sizeHintForRow(0) : t->fontMetrics().height() + 6;
    const int h = t->header()->sizeHint().height() + std::max(1, rows) * rowH + 2 * t->frameWidth() + 18;
    t->setFixedHeight(h);
}

QGroupBox* section(QWidget* page, const QString& title)
{
    auto* box = new QGroupBox(title, page);
    page->layout()->addWidget(box);
    return box;
}

}  // namespace

PropertiesPanel::PropertiesPanel(QWidget* parent) : QWidget(parent), m_scroll(new QScrollArea(this))
{
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    lay->addWidget(m_scroll);
    clear();
}

void PropertiesPanel::setModel(std::shared_ptr<const ir::Model> model)
{
    m_model = std::move(model);
    clear();
}

QWidget* PropertiesPanel::beginPage(const QString& title)
{
    m_attributes = m_inputs = m_outputs = nullptr;
    m_weightCount = 0;
    auto* page = new QWidget;
    auto* lay = new QVBoxLayout(page);
    lay->setContentsMargins(8, 8, 8, 8);
    lay->setSpacing(8);
    if (!title.isEmpty()) {
        auto* label = new QLabel(title, page);
        label->setObjectName(QStringLiteral("field_op"));
        QFont tf = label->font();
        tf.setPointSizeF(tf.pointSizeF() * 1.5);
        tf.setBold(true);
        label->setFont(tf);
        lay->addWidget(label);
    }
    return page;
}

void PropertiesPanel::finishPage(QWidget* page)
{
    static_cast<QVBoxLayout*>(page->layout())->addStretch(1);
    QWidget* old = m_scroll->takeWidget();
    m_scroll->setWidget(page);
    delete old;
}

void PropertiesPanel::clear()
{
    QWidget* page = beginPage();
    auto* hint = new QLabel(m_model ? tr("Select a node to see its properties.") : tr("No model loaded."), page);
    hint->setObjectName(QStringLiteral("hint"));
    hint->setAlignment(Qt::AlignCenter);
    hint->setEnabled(false);
    page->layout()->addWidget(hint);
    finishPage(page);
}

QString PropertiesPanel::fieldText(const QString& key) const
{
    if (QWidget* page = m_scroll->widget()) {
        if (auto* l = page->findChild<QLabel*>(QStringLiteral("field_") + key))
            return l->text();
    }
    return {};
}

void PropertiesPanel::showNode(ir::NodeId id)
{
    if (!m_model || id < 0 || static_cast<std::size_t>(id) >= m_model->graph.numNodes()) {
        clear();
        return;
    }
    const ir::Graph& g = m_model->graph;
    const ir::Node& node = g.node(id);
    const ir::OpSchema* schema = ir::OpRegistry::instance().find(node.domain, node.opType);

    QWidget* page = beginPage(fromStd(node.opType));
    auto addField = [](QFormLayout* form, const QString& label, const QString& key, const QString& text) {
        auto* v = new QLabel(text);
        v->setObjectName(QStringLiteral("field_") + key);
        v->setTextInteractionFlags(Qt::TextSelectableByMouse);
        v->setWordWrap(true);
        form->addRow(label, v);
        return v;
    };

    auto* head = new QWidget(page);
    auto* form = new QFormLayout(head);
    form->setContentsMargins(0, 0, 0, 0);
    form->setLabelAlignment(Qt::AlignLeft);
    addField(form, tr("Name"), QStringLiteral("name"), displayName(node.name));
    addField(form, tr("Domain"), QStringLiteral("domain"),
             node.domain.empty() ? tr("ai.onnx (default)") : fromStd(node.domain));
    addField(form, tr("Category"), QStringLiteral("category"),
             schema ? QString::fromLatin1(ir::opCategoryName(schema->category)) : tr("unknown op (not in Tessera's registry)"));
    if (schema && !schema->summary.empty())
        addField(form, tr("Summary"), QStringLiteral("summary"), fromStd(schema->summary));
    const std::optional<std::int64_t> flops = ir::nodeFlops(g, id);
    addField(form, tr("FLOPs"), QStringLiteral("flops"),
             flops ? QStringLiteral("%1 (%2)").arg(withUnit(static_cast<double>(*flops), "FLOP"),
                                                   QLocale::c().toString(static_cast<qlonglong>(*flops)))
                   : tr("unknown"));
    addField(form, tr("Code generator"), QStringLiteral("codegen"),
             lower::hasGenerator(node) ? tr("available (CPU and CUDA)")
                                       : tr("none: runs in the reference interpreter"));
    page->layout()->addWidget(head);

    // A DSL compute definition and the schedule written for this kernel, as DSL text.
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    if (node.compute) {
        auto* box = section(page, tr("Definition"));
        auto* lay = new QVBoxLayout(box);
        const std::string out = node.outputs.empty() || node.outputs[0] < 0 ? node.name : g.value(node.outputs[0]).name;
        const std::string text = ir::printCompute(*node.compute, out, [&](int slot) {
            const auto i = static_cast<std::size_t>(slot);
            return i < node.inputs.size() && node.inputs[i] >= 0 ? g.value(node.inputs[i]).name : std::string("?");
        });
        auto* def = new QLabel(fromStd(text), box);
        def->setObjectName(QStringLiteral("field_definition"));
        def->setFont(mono);
        def->setWordWrap(true);
        def->setTextInteractionFlags(Qt::TextSelectableByMouse);
        lay->addWidget(def);
    }
    if (const ir::KernelScheduleDecl* sched = m_model->program.scheduleFor(node.name)) {
        auto* box = section(page, tr("Schedule"));
        auto* lay = new QVBoxLayout(box);
        QStringList lines;
        if (!sched->target.empty())
            lines << QStringLiteral("target %1%2").arg(fromStd(sched->target),
                                                        sched->arch.empty() ? QString() : QStringLiteral(" ") + fromStd(sched->arch));
        for (const auto& m : sched->mappings) lines << QStringLiteral("%1 = %2").arg(fromStd(m.level), fromStd(m.text));
        for (const auto& t : sched->tiles) lines << QStringLiteral("tile %1 by %2").arg(fromStd(t.axis)).arg(t.factor);
        for (const auto& st : sched->stages) {
            QStringList names;
            for (const auto& n : st.tensors) names << fromStd(n);
            lines << QStringLiteral("stage %1 in %2").arg(names.join(QStringLiteral(", ")), fromStd(st.memory));
        }
        for (const auto& u : sched->unrolls)
            lines << (u.factor > 0 ? QStringLiteral("unroll %1 by %2").arg(fromStd(u.axis)).arg(u.factor)
                                   : QStringLiteral("unroll %1").arg(fromStd(u.axis)));
        for (const auto& v : sched->vectorizes) lines << QStringLiteral("vectorize %1 by %2").arg(fromStd(v.axis)).arg(v.factor);
        for (const auto& p : sched->parallels) lines << QStringLiteral("parallel %1").arg(fromStd(p.axis));
        auto* text = new QLabel(lines.join(QLatin1Char('\n')), box);
        text->setObjectName(QStringLiteral("field_schedule"));
        text->setFont(mono);
        text->setTextInteractionFlags(Qt::TextSelectableByMouse);
        lay->addWidget(text);
    }

    // Attributes: name, type, value.
    auto* attrBox = section(page, tr("Attributes (%1)").arg(node.attributes.size()));
    auto* attrLay = new QVBoxLayout(attrBox);
    m_attributes = makeTable(attrBox, {tr("Name"), tr("Type"), tr("Value")}, QStringLiteral("attributes"));
    for (const auto& [name, attr] : node.attributes) {
        auto* item = new QTreeWidgetItem(m_attributes);
        item->setText(0, displayName(name));
        item->setToolTip(0, displayName(name));
        item->setText(1, QString::fromLatin1(ir::attrTypeName(attr.type)));
        item->setText(2, fromStd(attr.str()));
        item->setToolTip(2, fromStd(attr.str()));
    }
    if (schema) {
        // Schema defaults the node does not set, greyed, so users see the effective values.
        for (const ir::AttrSchema& as : schema->attributes) {
            if (node.hasAttr(as.name) || !as.defaultValue)
                continue;
            auto* item = new QTreeWidgetItem(m_attributes);
            item->setText(0, fromStd(as.name));
            item->setText(1, QString::fromLatin1(ir::attrTypeName(as.type)));
            item->setText(2, fromStd(as.defaultValue->str()) + tr("  (default)"));
            for (int c = 0; c < 3; ++c)
                item->setForeground(c, QColor(0x80, 0x80, 0x80));
        }
    }
    fitHeight(m_attributes);
    attrLay->addWidget(m_attributes);
    if (m_attributes->topLevelItemCount() == 0) {
        m_attributes->hide();
        auto* none = new QLabel(tr("none"), attrBox);
        none->setEnabled(false);
        attrLay->addWidget(none);
    }

    auto addValueRows = [&g](QTreeWidget* t, const std::vector<ir::ValueId>& ids) {
        for (const ir::ValueId v : ids) {
            auto* item = new QTreeWidgetItem(t);
            if (v == ir::kNoValue) {
                item->setText(0, tr("(omitted)"));
                continue;
            }
            const ir::Value& val = g.value(v);
            item->setText(0, displayName(val.name) + (val.isInitializer ? tr("  [weight]") : QString()));
            item->setToolTip(0, displayName(val.name));
            item->setText(1, typeText(val.type));
            if (val.onnxType && *val.onnxType != val.type) {
                item->setText(2, typeText(*val.onnxType));
                item->setForeground(2, QColor(0xc0, 0x56, 0x00));
                item->setToolTip(2, tr("ONNX declares %1; Tessera infers %2").arg(typeText(*val.onnxType), typeText(val.type)));
            }
        }
    };
    auto* inBox = section(page, tr("Inputs (%1)").arg(node.inputs.size()));
    auto* inLay = new QVBoxLayout(inBox);
    m_inputs = makeTable(inBox, {tr("Name"), tr("Type"), tr("ONNX declared (if different)")}, QStringLiteral("inputs"));
    addValueRows(m_inputs, node.inputs);
    fitHeight(m_inputs);
    inLay->addWidget(m_inputs);

    auto* outBox = section(page, tr("Outputs (%1)").arg(node.outputs.size()));
    auto* outLay = new QVBoxLayout(outBox);
    m_outputs = makeTable(outBox, {tr("Name"), tr("Type"), tr("ONNX declared (if different)")}, QStringLiteral("outputs"));
    addValueRows(m_outputs, node.outputs);
    fitHeight(m_outputs);
    outLay->addWidget(m_outputs);

    // Weights: initializer inputs with their statistics.
    QGroupBox* wBox = nullptr;
    QVBoxLayout* wLay = nullptr;
    for (const ir::ValueId v : node.inputs) {
        if (v == ir::kNoValue)
            continue;
        const ir::Value& val = g.value(v);
        if (!val.isInitializer || !val.data)
            continue;
        if (wBox == nullptr) {
            wBox = section(page, tr("Weights"));
            wBox->setObjectName(QStringLiteral("weights"));
            wLay = new QVBoxLayout(wBox);
        }
        ++m_weightCount;
        const ir::TensorData& t = *val.data;
        auto* name = new QLabel(QStringLiteral("<b>%1</b>").arg(displayName(val.name).toHtmlEscaped()), wBox);
        wLay->addWidget(name);
        const double bytes = static_cast<double>(t.bytes.size());
        const qlonglong elements = static_cast<qlonglong>(t.numElements());
        auto* info = new QLabel(QStringLiteral("%1 %2 · %3 %4 · %5")
                                    .arg(QString::fromLatin1(ir::dtypeName(t.dtype).data(), static_cast<qsizetype>(ir::dtypeName(t.dtype).size())),
                                         fromStd(t.type().shape.str()),
                                         QLocale::c().toString(elements),
                                         elements == 1 ? QStringLiteral("element") : QStringLiteral("elements"),
                                         bytesText(bytes)),
                                wBox);
        wLay->addWidget(info);
        const bool numeric = t.dtype != ir::DType::String && t.dtype != ir::DType::Complex64 &&
                             t.dtype != ir::DType::Complex128 && t.dtype != ir::DType::Undefined && t.sizeConsistent();
        if (!numeric || t.numElements() == 0) {
            wLay->addWidget(new QLabel(tr("no statistics for this tensor"), wBox));
            continue;
        }
        const ir::TensorStats st = ir::computeStats(t, 40);
        QString stats = QStringLiteral("min %1   max %2   mean %3")
                            .arg(QString::number(st.min, 'g', 5), QString::number(st.max, 'g', 5),
                                 QString::number(st.mean, 'g', 5));
        if (st.nonFinite > 0)
            stats += tr("   %1 NaN/Inf").arg(st.nonFinite);
        auto* statsLabel = new QLabel(stats, wBox);
        statsLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
        wLay->addWidget(statsLabel);
        if (st.count > 0 && st.min == st.max) {
            wLay->addWidget(new QLabel(tr("all %1 values equal").arg(st.count), wBox));
            continue;
        }
        auto* hist = new HistogramWidget(wBox);
        hist->setData(st.histogram, st.min, st.max);
        wLay->addWidget(hist);
    }
    finishPage(page);
}

void PropertiesPanel::showValue(ir::ValueId id)
{
    if (!m_model || id < 0 || static_cast<std::size_t>(id) >= m_model->graph.numValues()) {
        clear();
        return;
    }
    const ir::Graph& g = m_model->graph;
    const ir::Value& val = g.value(id);
    QWidget* page = beginPage(val.isGraphInput ? tr("Graph input") : tr("Graph output"));
    auto* head = new QWidget(page);
    auto* form = new QFormLayout(head);
    form->setContentsMargins(0, 0, 0, 0);
    auto add = [form](const QString& label, const QString& key, const QString& text) {
        auto* v = new QLabel(text);
        v->setObjectName(QStringLiteral("field_") + key);
        v->setTextInteractionFlags(Qt::TextSelectableByMouse);
        v->setWordWrap(true);
        form->addRow(label, v);
    };
    add(tr("Name"), QStringLiteral("name"), displayName(val.name));
    add(tr("Type"), QStringLiteral("type"), typeText(val.type));
    if (val.onnxType && *val.onnxType != val.type)
        add(tr("ONNX declared"), QStringLiteral("onnxType"), typeText(*val.onnxType));
    const ir::NodeId p = g.producer(id);
    if (p != ir::kNoNode)
        add(tr("Produced by"), QStringLiteral("producer"),
            QStringLiteral("%1 (%2)").arg(displayName(g.node(p).name), fromStd(g.node(p).opType)));
    add(tr("Consumers"), QStringLiteral("consumers"), QString::number(g.consumers(id).size()));
    page->layout()->addWidget(head);
    finishPage(page);
}

}  // namespace tessera::views
