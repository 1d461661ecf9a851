// MainWindow's Timings history seeding (see main_window.h); the live runs are added in
// onRunFinished.
#include "app/gui/main_window.h"
#include "views/timing/timing_panel.h"

namespace tessera::app {

void MainWindow::seedRunHistory(const std::vector<views::TimingHistoryRun>& runs)
{
    m_runHistory.clear();
    for (const views::TimingHistoryRun& r : runs)
        m_runHistory.add(r);
    m_timing->setHistory(m_runHistory.snapshot());
}

}  // namespace tessera::app
