#include "app/gui/job_channel.h"

#include <condition_variable>
#include <deque>
#include <mutex>

namespace tessera::app {

/// The channel's serial queue. Shared with the tasks in flight, so a task that finishes after its
/// channel is gone (it cannot: the destructor waits) would still find valid state.
struct JobChannel::Queue {
    std::mutex mutex;
    std::condition_variable idle;
    std::deque<std::function<void()>> tasks;
    bool running = false;
    QThreadPool* pool = nullptr;
};

JobChannel::JobChannel(QObject* parent, Thread thread) : QObject(parent), m_queue(std::make_shared<Queue>())
{
    if (thread == Thread::Dedicated) {
        m_dedicated = new QThreadPool(this);
        m_dedicated->setMaxThreadCount(1);
        // The worker thread lives as long as the channel (see the file comment).
        m_dedicated->setExpiryTimeout(-1);
        m_queue->pool = m_dedicated;
    } else {
        m_queue->pool = QThreadPool::globalInstance();
    }
}

JobChannel::~JobChannel()
{
    m_cancel.cancel();
    {
        std::lock_guard<std::mutex> lock(m_queue->mutex);
        m_queue->tasks.clear();
    }
    waitForIdle();
}

JobChannel::Ticket JobChannel::begin()
{
    m_cancel.cancel();
    m_cancel = support::CancelToken();
    return Ticket{++m_generation, m_cancel};
}

void JobChannel::invalidate()
{
    m_cancel.cancel();
    m_cancel = support::CancelToken();
    ++m_generation;
}

bool JobChannel::busy() const
{
    std::lock_guard<std::mutex> lock(m_queue->mutex);
    return m_queue->running;
}

void JobChannel::waitForIdle()
{
    std::unique_lock<std::mutex> lock(m_queue->mutex);
    m_queue->idle.wait(lock, [this] { return !m_queue->running; });
}

void JobChannel::launchNext(const std::shared_ptr<Queue>& q)
{
    std::function<void()> task = std::move(q->tasks.front());
    q->tasks.pop_front();
    q->pool->start([q, task = std::move(task)]() {
        task();
        std::lock_guard<std::mutex> lock(q->mutex);
        if (q->tasks.empty()) {
            q->running = false;
            q->idle.notify_all();
        } else {
            launchNext(q);
        }
    });
}

void JobChannel::enqueue(std::function<void()> task)
{
    std::lock_guard<std::mutex> lock(m_queue->mutex);
    m_queue->tasks.push_back(std::move(task));
    if (!m_queue->running) {
        m_queue->running = true;
        launchNext(m_queue);
    }
}

}  // namespace tessera::app
