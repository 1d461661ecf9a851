// The main window's user-schedule wiring (issue 8): the Task Mapping dock's Apply / Reset become
// schedule edits on the plan's undo stack (schedule_controller.h); refusals go to the status bar
// and Problems; the next run (and Live) compiles with the schedules.
#include <QStatusBar>

#include "app/gui/main_window.h"

#include "app/gui/document.h"
#include "app/gui/run_session.h"
#include "app/gui/schedule_controller.h"
#include "core/pipeline/user_schedule.h"
#include "views/code/code_panel.h"

namespace tessera::app {
namespace {

std::string mappingsKey(const std::vector<ir::KernelScheduleDecl>& schedules)
{
    std::string k;
    for (const auto& s : schedules) {
        const pipeline::ScheduleMappings m = pipeline::scheduleMappings(s);
        k += s.subject + "=" + m.grid + ";" + m.block + "|";
    }
    return k;
}

}  // namespace

void MainWindow::createScheduleController()
{
    m_doc->attachSchedules(new ScheduleController(m_doc->plans(), m_mapping, m_doc));
    m_doc->schedules()->setObjectName(QStringLiteral("scheduleController"));
    // A check lowers the kernel as the next run will compile it (target, threads, preferences).
    m_doc->schedules()->setOptionsProvider([this] { return m_doc->runSettings().compile; });
    connect(m_doc->schedules(), &ScheduleController::applyRefused, this, [this](const QString& node, const QString& message) {
        statusBar()->showMessage(tr("Mapping of %1 not applied: %2").arg(node, message), 10000);
        showProblems();
    });
    connect(m_doc->schedules(), &ScheduleController::applied, this, [this](const QString& node) {
        statusBar()->showMessage(isLive() ? tr("Mapping of %1 applied: running again (Live)").arg(node)
                                          : tr("Mapping of %1 applied: Run (Ctrl+R) compiles it").arg(node),
                                 8000);
        // The refusal it replaces leaves Problems.
        showProblems();
    });
    connect(m_doc->schedules(), &ScheduleController::schedulesChanged, this, [this] {
        // The code on screen was generated with other mappings: say so until the next run.
        if (m_compiled && m_code->hasModule() &&
            mappingsKey(m_doc->runs()->lastOutcome().settings.compile.schedules) != mappingsKey(m_doc->schedules()->schedules()))
            m_code->showNote(tr("kernel mappings changed since this code was generated: run again (Ctrl+R)"));
        scheduleLive();
    });
}

}  // namespace tessera::app
