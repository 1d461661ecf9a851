// core/support/cpu_usage.h: /proc readings and the share of CPU time other processes used.
#include <gtest/gtest.h>

#include <chrono>
#include <unistd.h>

#include "core/support/cpu_usage.h"

using tessera::support::othersShare;
using tessera::support::processCpuTicks;
using tessera::support::SystemCpuTimes;
using tessera::support::systemCpuTimes;

TEST(CpuUsage, OthersShareSubtractsOurTicks) {
    const SystemCpuTimes before{1000, 400};
    const SystemCpuTimes after{1200, 550};  // 200 ticks of capacity, 150 busy
    EXPECT_DOUBLE_EQ(othersShare(before, after, 100), 0.25);  // 50 of 200 by others
    EXPECT_DOUBLE_EQ(othersShare(before, after, 150), 0.0);
    EXPECT_DOUBLE_EQ(othersShare(before, after, 400), 0.0);   // our count exceeds busy: clamped
    EXPECT_DOUBLE_EQ(othersShare(before, SystemCpuTimes{1400, 950}, 0), 1.0);  // more than capacity: clamped
    EXPECT_DOUBLE_EQ(othersShare(after, before, 0), 0.0);     // no time passed
}

TEST(CpuUsage, ReadsThisMachineAndThisProcess) {
    const auto t0 = systemCpuTimes();
    if (!t0) GTEST_SKIP() << "no /proc/stat on this system";
    const auto self0 = processCpuTicks(getpid());
    ASSERT_TRUE(self0.has_value());
    // Burn CPU until our own ticks have grown by 5 (0.05 s at 100 ticks/s), or give up after 10 s
    // of wall time: on a machine shared with other jobs the process gets only part of a core, so
    // the burn is measured in our own CPU time, not in wall time.
    volatile double x = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    auto self1 = processCpuTicks(getpid());
    while (self1 && *self1 - *self0 < 5u && std::chrono::steady_clock::now() < deadline) {
        for (int i = 0; i < 100000; ++i) x = x + 1.0;
        self1 = processCpuTicks(getpid());
    }
    const auto t1 = systemCpuTimes();
    ASSERT_TRUE(t1 && self1);
    EXPECT_GT(t1->total, t0->total);
    EXPECT_GE(t1->busy, t0->busy);
    EXPECT_GE(*self1 - *self0, 5u);
    EXPECT_FALSE(processCpuTicks(-1).has_value());
}
