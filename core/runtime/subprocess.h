#pragma once
/// @file
/// Child processes without a shell (POSIX posix_spawnp): the host compiler and tessera-runner.
/// Arguments are passed as an argv vector, so file names and flags are data, never shell text.
///
/// Every child is started in its own process group with the default signal dispositions and an
/// empty signal mask, so killProcessGroup() also ends the helpers it started (cc1plus, as, ld).
/// Pipes and sockets are created close-on-exec: a child started by another thread at the same
/// time does not inherit them.
///
/// Children that must not outlive their parent (SpawnSpec::killWithParent: the host compiler)
/// are started under a guard: a forked copy of this process that makes itself the group leader,
/// asks for SIGTERM when the thread that spawned it ends (prctl PR_SET_PDEATHSIG; getppid() is
/// checked afterwards for a parent that died in between), starts the program (vfork + execve)
/// and waits. When the program ends, the guard ends the same way (same exit status or signal);
/// when the parent dies (even by SIGKILL, which no handler sees) or the guard gets SIGTERM,
/// SIGINT, SIGHUP or SIGQUIT, it SIGKILLs its whole process group: the program and everything it
/// started (cc1plus, as, ld), itself included. PR_SET_PDEATHSIG alone would not do: it applies to
/// the direct child only and is cleared in the compiler driver's own children. The guard closes
/// every fd it inherited except the child's stdio, runs only async-signal-safe calls and never
/// allocates (the parent may be multi-threaded). Linux only (prctl).
///
/// Thread rules: free functions; safe to call from several threads (each on its own children).
/// A child must be reaped (waitProcess) by the thread that owns it.

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "core/support/cancel.h"

namespace tessera::runtime {

/// How a child's standard stream is connected.
enum class StdioMode {
    Inherit,  ///< the parent's stream
    Null,     ///< /dev/null
    Pipe,     ///< a pipe; the parent's end is returned in ChildProcess
    Socket,   ///< one end of a stream socketpair (stdin and stdout may share one; writes never raise SIGPIPE)
    MergeOut, ///< stderr only: the same destination as stdout
};

struct SpawnSpec {
    std::vector<std::string> argv;  ///< argv[0] is searched in PATH when it has no '/'
    /// Variables set (or replaced) in the child's environment; the rest is inherited.
    std::vector<std::pair<std::string, std::string>> env;
    StdioMode in = StdioMode::Null;
    StdioMode out = StdioMode::Inherit;
    StdioMode err = StdioMode::Inherit;
    /// Start the program under a guard (see the file comment): it and every process it starts
    /// are killed when the thread that spawned it ends or this process dies. ChildProcess::pid is
    /// then the guard's, which is also the process group's id; exit statuses are the program's.
    bool killWithParent = false;
};

/// A started child. The fds are the parent's ends (-1 when not connected). When in and out are
/// both Socket they share one bidirectional socket: inFd == outFd.
struct ChildProcess {
    pid_t pid = -1;
    int inFd = -1;   ///< write here to feed the child's stdin
    int outFd = -1;  ///< read the child's stdout here
    int errFd = -1;  ///< read the child's stderr here
};

/// How a child ended.
struct ExitStatus {
    bool exited = false;  ///< normal exit: `code` is valid
    int code = 0;
    int signal = 0;       ///< the signal that ended it (0 when it exited)
};

/// Starts a child. Returns 0 or the errno of the failure (ENOENT when argv[0] is not found,
/// EACCES when it is not executable); `error` then holds a one-line explanation.
int spawnProcess(const SpawnSpec& spec, ChildProcess& child, std::string& error);

/// Blocks until `pid` ends and reaps it.
ExitStatus waitProcess(pid_t pid);

/// Reaps `pid` if it has ended (true, `status` filled); false while it still runs.
bool tryWaitProcess(pid_t pid, ExitStatus& status);

/// SIGKILL to the child's process group (and to the child itself). Does not reap.
void killProcessGroup(pid_t pid);

/// Closes the parent's fds of `child` (each once, even when shared) and sets them to -1.
void closeChildFds(ChildProcess& child);

/// "SIGSEGV (segmentation fault)", "SIGABRT (aborted)", "signal 42" for unknown numbers.
std::string describeSignal(int sig);

/// Result of runProcess().
struct ProcessOutput {
    ExitStatus status;
    std::string output;      ///< stdout and stderr interleaved as the child wrote them
    bool cancelled = false;  ///< the cancel token fired and the child's group was killed
};

/// Runs a child to completion with stdin from /dev/null, capturing stdout+stderr. Polls `cancel`
/// every 50 ms; when it fires the child's process group is killed and reaped. Returns the spawn
/// errno (0 on success) like spawnProcess.
int runProcess(const SpawnSpec& spec, const support::CancelToken* cancel, ProcessOutput& result, std::string& error);

}  // namespace tessera::runtime
