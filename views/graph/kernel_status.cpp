#include "views/graph/kernel_status.h"

#include <QCoreApplication>

namespace tessera::views {

QColor kernelStatusColor(KernelStatus status)
{
    switch (status) {
    case KernelStatus::None: return {};
    case KernelStatus::Compiled: return QColor(0x1e, 0x63, 0xd6);
    case KernelStatus::Ran: return QColor(0x00, 0x83, 0x8f);
    case KernelStatus::Passed: return QColor(0x1b, 0x9e, 0x3e);
    case KernelStatus::Failed: return QColor(0xd3, 0x2f, 0x2f);
    case KernelStatus::Reference: return QColor(0x7a, 0x7a, 0x7a);
    case KernelStatus::Folded: return QColor(0xa8, 0xa8, 0xa8);
    }
    return {};
}

Qt::PenStyle kernelStatusPenStyle(KernelStatus status)
{
    switch (status) {
    case KernelStatus::Reference: return Qt::DashLine;
    case KernelStatus::Folded: return Qt::DotLine;
    default: return Qt::SolidLine;
    }
}

QString kernelStatusLabel(KernelStatus status)
{
    switch (status) {
    case KernelStatus::None: return {};
    case KernelStatus::Compiled: return QStringLiteral("compiled");
    case KernelStatus::Ran: return QStringLiteral("ran");
    case KernelStatus::Passed: return QStringLiteral("passed");
    case KernelStatus::Failed: return QStringLiteral("failed");
    case KernelStatus::Reference: return QStringLiteral("reference");
    case KernelStatus::Folded: return QStringLiteral("folded");
    }
    return {};
}

QString kernelStatusDescription(KernelStatus status)
{
    switch (status) {
    case KernelStatus::None: return {};
    case KernelStatus::Compiled: return QCoreApplication::translate("KernelStatus", "kernel compiled, not run yet");
    case KernelStatus::Ran: return QCoreApplication::translate("KernelStatus", "kernel ran (not checked)");
    case KernelStatus::Passed:
        return QCoreApplication::translate("KernelStatus", "kernel matched the reference interpreter");
    case KernelStatus::Failed:
        return QCoreApplication::translate("KernelStatus", "kernel outside tolerance or crashed");
    case KernelStatus::Reference:
        return QCoreApplication::translate("KernelStatus", "no code generator: ran in the reference interpreter");
    case KernelStatus::Folded: return QCoreApplication::translate("KernelStatus", "folded into a constant at compile time");
    }
    return {};
}

}  // namespace tessera::views
