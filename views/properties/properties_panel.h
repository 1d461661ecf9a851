#pragma once
/// @file
/// Properties of the selected node: op type, name, domain, category, FLOPs, code generator
/// status, typed attributes, inputs/outputs with dtype and shape (and the ONNX-declared type
/// where it differs from Tessera's), and for each weight (initializer input) its dtype, shape,
/// min/max/mean and a histogram. Graph inputs and outputs show their value.
///
/// It reads the model it is given (read-only, shared) and computes weight statistics when a
/// node is shown. Thread rules: UI thread only.

#include <memory>

#include <QWidget>

#include "core/ir/graph.h"

class QLabel;
class QScrollArea;
class QTreeWidget;

namespace tessera::views {

class PropertiesPanel : public QWidget {
    Q_OBJECT
public:
    explicit PropertiesPanel(QWidget* parent = nullptr);

    /// Sets the model whose nodes will be shown (may be null) and clears the display.
    void setModel(std::shared_ptr<const ir::Model> model);
    void showNode(ir::NodeId node);
    /// A graph input or output value.
    void showValue(ir::ValueId value);
    void clear();

    /// For tests and tools: the current attribute and tensor tables (null when nothing shown).
    QTreeWidget* attributesTree() const { return m_attributes; }
    QTreeWidget* inputsTree() const { return m_inputs; }
    QTreeWidget* outputsTree() const { return m_outputs; }
    int weightCount() const { return m_weightCount; }
    /// Text of a header field: "op", "name", "domain", "category", "flops", "codegen"; empty if absent.
    QString fieldText(const QString& key) const;

private:
    /// A fresh page, with a large bold title (object name field_op) when `title` is not empty.
    QWidget* beginPage(const QString& title = QString());
    void finishPage(QWidget* page);

    std::shared_ptr<const ir::Model> m_model;
    QScrollArea* m_scroll;
    QTreeWidget* m_attributes = nullptr;
    QTreeWidget* m_inputs = nullptr;
    QTreeWidget* m_outputs = nullptr;
    int m_weightCount = 0;
};

}  // namespace tessera::views
