#pragma once
/// @file
/// What the graph view shows about each operator after a compile or a run (Run > Run (CPU)):
/// the status of the kernel that computes it, as a coloured border and a line of tooltip text.
///
/// | status      | meaning                                                  | drawn as                    |
/// |-------------|----------------------------------------------------------|-----------------------------|
/// | None        | nothing compiled yet                                     | the node's own colours      |
/// | Compiled    | a kernel was generated (not run or not checked yet)      | blue border                 |
/// | Passed      | the kernel ran and matched the reference interpreter     | green border                |
/// | Failed      | the kernel ran and is outside tolerance (or crashed)     | red border                  |
/// | Reference   | the node ran in the reference interpreter (no generator) | grey dashed border          |
/// | Ran         | the kernel ran without a check                           | teal border                 |
/// | Folded      | folded into a constant at compile time (no kernel)       | faded, dotted border        |
///
/// Thread rules: pure functions, any thread.

#include <string>
#include <unordered_map>

#include <QColor>
#include <QString>
#include <Qt>

namespace tessera::views {

enum class KernelStatus { None, Compiled, Ran, Passed, Failed, Reference, Folded };

/// A node's status plus free text for its tooltip (time, error).
struct NodeKernelStatus {
    KernelStatus status = KernelStatus::None;
    QString detail;
};

/// Operator node name (ir::Node::name, as in the snapshot) -> status. Names not in the map are None.
using KernelStatusMap = std::unordered_map<std::string, NodeKernelStatus>;

/// Border colour for a status (invalid QColor for None).
QColor kernelStatusColor(KernelStatus status);
/// Pen style of the status border: dashed for Reference, dotted for Folded, solid otherwise.
Qt::PenStyle kernelStatusPenStyle(KernelStatus status);
/// Short label: "compiled", "ran", "passed", "failed", "reference", "folded" ("" for None).
QString kernelStatusLabel(KernelStatus status);
/// One sentence for tooltips and the legend, e.g. "kernel matched the reference interpreter".
QString kernelStatusDescription(KernelStatus status);

}  // namespace tessera::views
