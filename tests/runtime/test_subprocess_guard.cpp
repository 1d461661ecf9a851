// The guarded spawn (SpawnSpec::killWithParent): the caller sees the program's own exit status,
// signal, output and spawn errors, and the guard holds no other descriptor of its parent open.
// That the guard kills its group when the parent dies is tested with the host JIT
// (test_host_jit_units.cpp, AKilledParentLeavesNoCompilerRunning).

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>

#include "core/runtime/subprocess.h"

namespace tessera::runtime {
namespace {

using Clock = std::chrono::steady_clock;

TEST(GuardedSpawn, ReportsTheProgramsOwnExit) {
    SpawnSpec spec;
    spec.killWithParent = true;
    spec.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"};
    ProcessOutput out;
    std::string error;
    ASSERT_EQ(runProcess(spec, nullptr, out, error), 0) << error;
    EXPECT_TRUE(out.status.exited);
    EXPECT_EQ(out.status.code, 3);
    EXPECT_EQ(out.output, "out\nerr\n");

    spec.argv = {"sh", "-c", "kill -USR1 $$"};
    ASSERT_EQ(runProcess(spec, nullptr, out, error), 0) << error;
    EXPECT_FALSE(out.status.exited);
    EXPECT_EQ(out.status.signal, SIGUSR1);

    spec.argv = {"definitely-not-a-program-here"};
    EXPECT_EQ(runProcess(spec, nullptr, out, error), ENOENT);
    EXPECT_EQ(error, "cannot start 'definitely-not-a-program-here': No such file or directory");
}

TEST(GuardedSpawn, DoesNotHoldOtherDescriptorsOpen) {
    // A pipe this process made (without close-on-exec): the guard must not keep its write end, or
    // nobody reading it would see EOF while a compiler runs.
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    SpawnSpec spec;
    spec.killWithParent = true;
    spec.argv = {"sleep", "5"};
    spec.out = StdioMode::Null;
    spec.err = StdioMode::Null;
    ChildProcess child;
    std::string error;
    ASSERT_EQ(spawnProcess(spec, child, error), 0) << error;
    ::close(p[1]);
    char c;
    const auto t0 = Clock::now();
    const ssize_t got = ::read(p[0], &c, 1);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    ::close(p[0]);
    killProcessGroup(child.pid);
    const ExitStatus st = waitProcess(child.pid);
    EXPECT_EQ(got, 0);
    EXPECT_LT(seconds, 1.0);
    EXPECT_EQ(st.signal, SIGKILL);
}

}  // namespace
}  // namespace tessera::runtime
