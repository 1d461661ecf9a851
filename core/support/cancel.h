#pragma once
/// @file
/// Cancellation and progress for long core entry points.
/// Thread rules: CancelToken::cancel() may be called from any thread; isCancelled() from any thread.
/// ProgressSink implementations must be callable from the worker thread that runs the job.

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace tessera::support {

class CancelToken {
public:
    void cancel() { m_flag->store(true, std::memory_order_relaxed); }
    bool isCancelled() const { return m_flag->load(std::memory_order_relaxed); }

private:
    std::shared_ptr<std::atomic<bool>> m_flag = std::make_shared<std::atomic<bool>>(false);
};

/// Progress callback: fraction in [0,1] (negative when unknown) and a short stage label.
using ProgressSink = std::function<void(double fraction, const std::string& stage)>;

}  // namespace tessera::support
