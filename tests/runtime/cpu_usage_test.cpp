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
    // Burn about 0.2 s of CPU: our own ticks must grow by at least a few.
    volatile double x = 0;
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 1000; ++i) x = x + 1.0;
    const auto t1 = systemCpuTimes();
    const auto self1 = processCpuTicks(getpid());
    ASSERT_TRUE(t1 && self1);
    EXPECT_GT(t1->total, t0->total);
    EXPECT_GE(t1->busy, t0->busy);
    EXPECT_GE(*self1 - *self0, 5u);  // 0.2 s at 100 ticks/s is 20; allow a busy machine
    EXPECT_FALSE(processCpuTicks(-1).has_value());
}
