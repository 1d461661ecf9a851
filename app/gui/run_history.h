#pragma once
/// @file
/// The runs of this session for the Timings dock's history chart (views/timing/timing_history.h).
/// The main window adds every successful timed run of the model on screen and clears the history
/// when another model is loaded; at most kCapacity runs are kept (the oldest drop out; run numbers
/// keep counting). The views draw snapshot()s; they never see this class.
/// Thread rules: UI thread (a plain value owned by the main window).

#include <cstddef>
#include <memory>
#include <string>

#include "app/gui/run_session.h"
#include "core/pipeline/run.h"
#include "core/project/project.h"
#include "views/timing/timing_history.h"

namespace tessera::app {

class RunHistory {
public:
    static constexpr std::size_t kCapacity = 50;

    /// Adds a finished run; `time` is the wall-clock label ("14:03:12"). Returns its number.
    int add(const pipeline::RunReport& report, const RunSettings& settings, const std::string& time);
    /// Adds a prepared run (its number is assigned here); for tests and seeding.
    int add(views::TimingHistoryRun run);
    /// Forgets every run and restarts the numbering at 1 (another model was loaded).
    void clear();
    std::size_t size() const { return m_history->runs.size(); }
    /// The history as the views draw it (a copy-on-write value: later adds do not change it).
    std::shared_ptr<const views::TimingHistory> snapshot() const { return m_history; }

    /// The run's plan and target, e.g. "planner hidet · CPU, 2 threads", "edited plan (12 groups)
    /// · CUDA sm_90", "plan from file (3 groups) · ..." (a planner's plan reads as its planner).
    static std::string planLabel(const RunSettings& settings, const pipeline::RunReport& report);
    /// A history run from a report (kernels with their medians and quartiles).
    static views::TimingHistoryRun fromReport(const pipeline::RunReport& report, const RunSettings& settings);

    /// A history run from a project's stored run (medians only, no quartiles; labelled like a
    /// live run of that planner and target).
    static views::TimingHistoryRun fromRecord(const project::RunRecord& record);

private:
    std::shared_ptr<views::TimingHistory> m_history = std::make_shared<views::TimingHistory>();
    int m_next = 1;
};

}  // namespace tessera::app
