// The GUI's job layer (app/gui/job_channel.h): results reach the channel's thread only while their
// ticket is current, a new ticket cancels the old job's token, the jobs of one channel never
// overlap, a dedicated channel runs every job on one thread, and the destructor waits for the job
// in flight.
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "app/gui/job_channel.h"

using namespace tessera;
using app::JobChannel;

namespace {

/// Spins until `flag` is set (at most ~5 s) without touching the event loop.
void waitFor(const std::atomic<bool>& flag)
{
    for (int i = 0; i < 5000 && !flag.load(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

class JobChannelTest : public QObject {
    Q_OBJECT
private slots:
    void deliversTheResultOnTheChannelsThread()
    {
        JobChannel channel;
        const JobChannel::Ticket t = channel.begin();
        QThread* workerThread = nullptr;
        QThread* doneThread = nullptr;
        int got = 0;
        channel.run(
            t,
            [&workerThread] {
                workerThread = QThread::currentThread();
                return 6 * 7;
            },
            [&](int value) {
                doneThread = QThread::currentThread();
                got = value;
            });
        QTRY_COMPARE(got, 42);
        QCOMPARE(doneThread, QThread::currentThread());
        QVERIFY(workerThread != QThread::currentThread());
        QTRY_VERIFY(!channel.busy());
    }

    void dropsTheResultOfASupersededJob()
    {
        JobChannel channel;
        std::atomic<bool> release{false}, started{false};
        const JobChannel::Ticket first = channel.begin();
        std::vector<int> delivered;
        channel.run(
            first,
            [&] {
                started = true;
                waitFor(release);
                return 1;
            },
            [&](int v) { delivered.push_back(v); });
        waitFor(started);
        const JobChannel::Ticket second = channel.begin();
        // The first job's token is cancelled by the new ticket; the new one is not.
        QVERIFY(first.cancel.isCancelled());
        QVERIFY(!second.cancel.isCancelled());
        QCOMPARE(second.generation, first.generation + 1);
        channel.run(second, [] { return 2; }, [&](int v) { delivered.push_back(v); });
        release = true;
        QTRY_VERIFY(!channel.busy());
        QTRY_COMPARE(delivered.size(), std::size_t{1});
        QTest::qWait(20);
        QCOMPARE(delivered, std::vector<int>{2});
    }

    void invalidateDropsResultsWithoutANewJob()
    {
        JobChannel channel;
        std::atomic<bool> release{false};
        const JobChannel::Ticket t = channel.begin();
        bool delivered = false;
        channel.run(t, [&] { waitFor(release); }, [&] { delivered = true; });
        channel.invalidate();
        QVERIFY(t.cancel.isCancelled());
        release = true;
        QTRY_VERIFY(!channel.busy());
        QTest::qWait(20);
        QVERIFY(!delivered);
    }

    void jobsOfOneChannelNeverOverlap()
    {
        JobChannel channel;
        std::atomic<int> inside{0}, most{0}, finished{0};
        for (int i = 0; i < 8; ++i) {
            // Each job gets its own ticket, as a new job would: only the last result is wanted,
            // but every job still runs, one after another.
            channel.run(channel.begin(), [&] {
                const int now = ++inside;
                most = std::max(most.load(), now);
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
                --inside;
                ++finished;
            }, [] {});
        }
        channel.waitForIdle();
        QCOMPARE(finished.load(), 8);
        QCOMPARE(most.load(), 1);
    }

    void dedicatedChannelUsesOneThread()
    {
        JobChannel channel(nullptr, JobChannel::Thread::Dedicated);
        std::vector<QThread*> threads(4, nullptr);
        for (std::size_t i = 0; i < threads.size(); ++i) {
            channel.run(channel.begin(), [&threads, i] { threads[i] = QThread::currentThread(); }, [] {});
            channel.waitForIdle();
            // Apart in time, so a pooled thread would have had the chance to change.
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        for (QThread* t : threads) {
            QVERIFY(t != nullptr);
            QCOMPARE(t, threads.front());
        }
    }

    void destructorWaitsForTheJobInFlight()
    {
        std::atomic<bool> started{false}, finished{false};
        bool delivered = false;
        {
            JobChannel channel;
            const JobChannel::Ticket t = channel.begin();
            channel.run(
                t,
                [&, token = t.cancel] {
                    started = true;
                    // A job that honours its token ends soon after the channel cancels it.
                    while (!token.isCancelled())
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    finished = true;
                },
                [&] { delivered = true; });
            waitFor(started);
        }
        QVERIFY(finished.load());
        QTest::qWait(20);
        QVERIFY(!delivered);
    }
};

QTEST_MAIN(JobChannelTest)
#include "job_channel_test.moc"
