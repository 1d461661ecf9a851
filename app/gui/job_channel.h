#pragma once
/// @file
/// The GUI's one job layer. A JobChannel carries one kind of background job (a load, a layout, a
/// plan, a schedule check, a run, a roof measurement, a re-run in the reference interpreter):
///
/// - Generation and cancel token: begin() cancels the job in flight (its support::CancelToken) and
///   returns a Ticket with a new generation number and a fresh token; invalidate() does the same
///   without a new job (a reset, a new model). Results, progress and relayed calls of a ticket
///   that is no longer current are dropped, so a superseded job never reaches the UI.
/// - Serial execution on a shared bounded pool: the jobs of one channel run one after another
///   (a new job starts once the cancelled one has unwound, so worker-side state such as the
///   runner process is used by one job at a time), on the process-wide pool whose size follows
///   the cores (QThreadPool::globalInstance()). A channel made with Thread::Dedicated runs its
///   jobs on a thread of its own that lives as long as the channel instead: for jobs whose
///   resources belong to the thread (a child process started with PR_SET_PDEATHSIG dies with the
///   thread that started it; Graphviz is called from one thread only).
/// - Relay to the UI thread: run() calls `done(result)` on the channel's thread (the thread that
///   owns the channel, the UI thread) when the ticket is still current; post() relays any call
///   (progress, an intermediate result) the same way.
/// - Shutdown synchronizer: the destructor cancels the job in flight, drops queued jobs and waits
///   for the running one, so no job outlives its channel (and the objects its callbacks use).
///
/// Thread rules: begin(), invalidate(), isCurrent(), run(), busy() and the destructor belong to
/// the channel's thread; post() and the ticket's token may be used from the job's worker.

#include <QObject>
#include <QPointer>
#include <QThreadPool>

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "core/support/cancel.h"

namespace tessera::app {

class JobChannel : public QObject {
    Q_OBJECT
public:
    enum class Thread { Shared, Dedicated };

    /// One job's identity: its generation and its cancel token.
    struct Ticket {
        quint64 generation = 0;
        support::CancelToken cancel;
    };

    explicit JobChannel(QObject* parent = nullptr, Thread thread = Thread::Shared);
    ~JobChannel() override;

    /// Cancels the job in flight and returns the ticket of the next one.
    Ticket begin();
    /// Cancels the job in flight and drops its results (no new job).
    void invalidate();
    /// Whether `generation` is the newest ticket's (its results are still wanted).
    bool isCurrent(quint64 generation) const { return generation == m_generation; }
    quint64 generation() const { return m_generation; }
    /// Whether a job of this channel is queued or running.
    bool busy() const;

    /// Runs `work()` on the channel's worker after the jobs queued before it, then `done(result)`
    /// on the channel's thread when `ticket` is still current. `work` must only use data it owns
    /// or shares read-only.
    template <typename Work, typename Done>
    void run(const Ticket& ticket, Work work, Done done)
    {
        const quint64 generation = ticket.generation;
        QPointer<JobChannel> self(this);
        enqueue([self, generation, work = std::move(work), done = std::move(done)]() mutable {
            using Result = std::invoke_result_t<Work&>;
            if constexpr (std::is_void_v<Result>) {
                work();
                if (self)
                    self->post(generation, std::move(done));
            } else {
                auto result = std::make_shared<Result>(work());
                if (self)
                    self->post(generation, [done = std::move(done), result]() mutable { done(std::move(*result)); });
            }
        });
    }

    /// Calls `fn` on the channel's thread when `generation` is still current then (from any thread).
    template <typename Fn>
    void post(quint64 generation, Fn fn)
    {
        QPointer<JobChannel> self(this);
        QMetaObject::invokeMethod(
            this,
            [self, generation, fn = std::move(fn)]() mutable {
                if (self && self->isCurrent(generation))
                    fn();
            },
            Qt::QueuedConnection);
    }

    /// Blocks until no job is queued or running (the destructor does this after cancelling).
    void waitForIdle();

private:
    struct Queue;
    void enqueue(std::function<void()> task);
    /// Starts the queue's next task on its pool; the caller holds the queue's mutex.
    static void launchNext(const std::shared_ptr<Queue>& q);

    std::shared_ptr<Queue> m_queue;
    QThreadPool* m_dedicated = nullptr;
    quint64 m_generation = 0;
    support::CancelToken m_cancel;
};

}  // namespace tessera::app
