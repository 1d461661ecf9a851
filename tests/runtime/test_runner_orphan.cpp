// tessera-runner ends with the process that started it: a client killed with SIGKILL while a
// kernel spins must not leave the runner computing as an orphan.

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "core/runtime/host_jit.h"
#include "core/runtime/runner_client.h"
#include "core/runtime/shared_arena.h"
#include "core/runtime/subprocess.h"
#include "runtime_test_util.h"

namespace tessera::runtime {
namespace {

const char* const kRunnerPath = TESSERA_BINARY_DIR "/app/runner/tessera-runner";

const char* const kSpinKernel = R"(static volatile int g_spin = 1;
extern "C" void spin(void* const*) {
    while (g_spin) {}
}
)";

/// The state letter of /proc/<pid>/stat ('R', 'S', 'Z', ...), or 0 when the process is gone.
char processState(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const std::size_t paren = text.rfind(')');
    if (paren == std::string::npos || paren + 2 >= text.size()) return 0;
    return text[paren + 2];
}

/// Gone, or a zombie waiting for init to reap it: either way it no longer runs.
bool processEnded(pid_t pid) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    const char state = processState(pid);
    return state == 0 || state == 'Z' || state == 'X';
}

TEST(RunnerLifetime, RunnerDiesWithAClientKilledMidKernel) {
    test::TempDir cache;
    HostCompilerOptions opts;
    opts.cacheDir = cache.str();
    opts.flags = {"-O1", "-shared", "-fPIC"};
    auto lib = compileHostLibrary(kSpinKernel, opts);
    ASSERT_TRUE(lib.ok()) << lib.diagnostics().items().front().format();

    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t helper = ::fork();
    ASSERT_GE(helper, 0);
    if (helper == 0) {
        // The helper plays the CLI: start a runner, report its pid, run a kernel that never ends.
        ::close(fds[0]);
        RunnerClientOptions o;
        o.runnerPath = kRunnerPath;
        RunnerClient client(o);
        auto h = client.hello();
        const pid_t runner = h.ok() ? client.pid() : -1;
        if (::write(fds[1], &runner, sizeof runner) != static_cast<ssize_t>(sizeof runner)) _exit(2);
        if (runner <= 0) _exit(1);
        auto arena = SharedArena::create(64);
        if (!arena.ok()) _exit(1);
        RunRequest req;
        req.libraryPath = lib->path;
        arena->attach(req);
        req.buffers = {{0, 64}};
        req.launches = {{"spin", {}, "Spin_0"}};
        req.timeoutSeconds = 600;
        (void)client.run(req);
        _exit(0);
    }
    ::close(fds[1]);
    pid_t runner = -1;
    const ssize_t got = ::read(fds[0], &runner, sizeof runner);
    ::close(fds[0]);
    auto killHelper = [&] {
        ::kill(helper, SIGKILL);
        ::waitpid(helper, nullptr, 0);
    };
    if (got != static_cast<ssize_t>(sizeof runner) || runner <= 0) {
        killHelper();
        FAIL() << "the helper could not start a runner";
    }

    // Wait until the runner is computing (running state), so the kill lands mid-kernel.
    bool spinning = false;
    for (int i = 0; i < 400 && !spinning; ++i) {
        int r = 0;
        for (int k = 0; k < 3; ++k) r += processState(runner) == 'R';
        spinning = r == 3;
        if (!spinning) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!spinning) {
        killHelper();
        ::kill(runner, SIGKILL);
        FAIL() << "the runner never started spinning (state " << processState(runner) << ")";
    }

    killHelper();
    const auto t0 = std::chrono::steady_clock::now();
    bool ended = false;
    while (!(ended = processEnded(runner)) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!ended) ::kill(runner, SIGKILL);  // do not leave it behind even when the test fails
    EXPECT_TRUE(ended) << "runner " << runner << " still alive (state " << processState(runner)
                       << ") 2 s after its client was killed";
}

TEST(RunnerLifetime, RunnerWhoseParentIsAlreadyGoneExitsAtOnce) {
    // TESSERA_RUNNER_PARENT names a process that is not the runner's parent: what the runner sees
    // when the client died between the spawn and prctl(PR_SET_PDEATHSIG). It must exit with 3
    // without waiting for a request (its stdin stays open here).
    SpawnSpec spec;
    spec.argv = {kRunnerPath};
    spec.in = StdioMode::Socket;
    spec.out = StdioMode::Socket;
    spec.err = StdioMode::Pipe;
    spec.env = {{"TESSERA_RUNNER_PARENT", std::to_string(::getpid() + 1000000)}};
    ChildProcess child;
    std::string error;
    ASSERT_EQ(spawnProcess(spec, child, error), 0) << error;
    ExitStatus st;
    const auto t0 = std::chrono::steady_clock::now();
    bool done = false;
    while (!(done = tryWaitProcess(child.pid, st)) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!done) {
        killProcessGroup(child.pid);
        waitProcess(child.pid);
    }
    closeChildFds(child);
    ASSERT_TRUE(done) << "the runner kept waiting for requests";
    EXPECT_TRUE(st.exited);
    EXPECT_EQ(st.code, 3);
}

TEST(RunnerLifetime, RunnerWithItsRealParentServes) {
    RunnerClientOptions o;
    o.runnerPath = kRunnerPath;
    RunnerClient client(o);
    auto h = client.hello();
    ASSERT_TRUE(h.ok()) << h.diagnostics().items().front().message;
    EXPECT_EQ(h->pid, client.pid());
    EXPECT_EQ(h->protocol, kRunnerProtocolVersion);
}

}  // namespace
}  // namespace tessera::runtime
