#include "core/runtime/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

extern char** environ;

namespace tessera::runtime {

namespace {

/// Closes every fd in the list once.
void closeAll(std::vector<int>& fds) {
    std::set<int> done;
    for (int fd : fds)
        if (fd >= 0 && done.insert(fd).second) ::close(fd);
    fds.clear();
}

std::vector<std::string> buildEnvironment(const std::vector<std::pair<std::string, std::string>>& overrides) {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry(*e);
        const std::size_t eq = entry.find('=');
        const std::string name = entry.substr(0, eq);
        bool replaced = false;
        for (const auto& [k, v] : overrides)
            if (k == name) replaced = true;
        if (!replaced) env.push_back(entry);
    }
    for (const auto& [k, v] : overrides) env.push_back(k + "=" + v);
    return env;
}


/// The program posix_spawnp would run for `name`: itself when it holds a '/', else the first
/// executable regular file `dir/name` along $PATH (default "/bin:/usr/bin"). Returns 0, ENOENT
/// (nowhere) or EACCES (found, not executable).
int resolveProgram(const std::string& name, std::string& path) {
    if (name.find('/') != std::string::npos) {
        path = name;
        return 0;
    }
    const char* env = std::getenv("PATH");
    const std::string dirs = env && *env ? env : "/bin:/usr/bin";
    int result = ENOENT;
    for (std::size_t begin = 0; begin <= dirs.size();) {
        std::size_t end = dirs.find(':', begin);
        if (end == std::string::npos) end = dirs.size();
        const std::string dir = end > begin ? dirs.substr(begin, end - begin) : std::string(".");
        const std::string candidate = dir + "/" + name;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
            if (::access(candidate.c_str(), X_OK) == 0) {
                path = candidate;
                return 0;
            }
            result = EACCES;
        }
        begin = end + 1;
    }
    return result;
}

/// Closes every fd >= `from` except `keep` (async-signal-safe: close_range, else a loop up to
/// `limit`).
void closeFdsFrom(int from, int keep, int limit) {
#ifdef SYS_close_range
    bool done = true;
    if (keep > from && ::syscall(SYS_close_range, static_cast<unsigned>(from), static_cast<unsigned>(keep - 1), 0u) != 0)
        done = false;
    if (done && ::syscall(SYS_close_range, static_cast<unsigned>(std::max(from, keep + 1)), ~0u, 0u) == 0) return;
#endif
    for (int fd = from; fd < limit; ++fd)
        if (fd != keep) ::close(fd);
}

/// Signals on which the guard kills its group: the parent-death signal and the usual requests
/// to stop.
constexpr int kGuardStopSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

/// The guard's life after fork() (see subprocess.h); never returns. Only async-signal-safe
/// calls: the parent may be multi-threaded and another thread may hold the malloc lock.
[[noreturn]] void runGuard(const char* path, char* const* argv, char* const* envp, const int childFd[3], int errorFd,
                           pid_t parent, int fdLimit) {
    auto fail = [errorFd](int err) {
        [[maybe_unused]] const ssize_t w = ::write(errorFd, &err, sizeof err);
        ::_exit(127);
    };
    ::setpgid(0, 0);
    // Default dispositions for every signal (the parent's handlers are not ours), stop signals and
    // SIGCHLD blocked so that sigwaitinfo() below receives them.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigemptyset(&dfl.sa_mask);
    for (int sig = 1; sig < NSIG; ++sig)
        if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
    sigset_t waitSet;
    ::sigemptyset(&waitSet);
    ::sigaddset(&waitSet, SIGCHLD);
    for (int sig : kGuardStopSignals) ::sigaddset(&waitSet, sig);
    ::sigprocmask(SIG_SETMASK, &waitSet, nullptr);
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) fail(errno);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl: nobody waits for us

    // Stdio: an fd that already has its number only loses close-on-exec.
    for (int s = 0; s < 3; ++s) {
        if (childFd[s] < 0) continue;
        if (childFd[s] == s) {
            ::fcntl(s, F_SETFD, 0);
        } else if (::dup2(childFd[s], s) < 0) {
            fail(errno);
        }
    }
    if (childFd[2] == -2 && ::dup2(1, 2) < 0) fail(errno);
    // Every other inherited fd (other children's pipes, the runner's socket ...) would otherwise
    // stay open as long as this guard lives: nobody would see their EOF.
    closeFdsFrom(3, errorFd, fdLimit);

    const pid_t program = ::vfork();
    if (program < 0) fail(errno);
    if (program == 0) {
        sigset_t none;
        ::sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::execve(path, argv, envp);
        const int err = errno;
        [[maybe_unused]] const ssize_t w = ::write(errorFd, &err, sizeof err);
        ::_exit(127);
    }
    ::close(errorFd);  // the parent's read sees EOF: the program runs (or its errno was written)

    for (;;) {
        siginfo_t info;
        const int sig = ::sigwaitinfo(&waitSet, &info);
        if (sig < 0) continue;  // EINTR
        if (sig != SIGCHLD) {
            ::kill(0, SIGKILL);  // the whole group, this guard included
            ::_exit(128 + SIGKILL);
        }
        int status = 0;
        const pid_t r = ::waitpid(program, &status, WNOHANG);
        if (r != program) continue;
        if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
        // End the way the program ended, so that the caller reads the same signal (without a
        // core dump of this guard: the program dumped its own, if any).
        const int how = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
        const rlimit noCore{0, 0};
        ::setrlimit(RLIMIT_CORE, &noCore);
        ::signal(how, SIG_DFL);
        sigset_t only;
        ::sigemptyset(&only);
        ::sigaddset(&only, how);
        ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
        ::kill(::getpid(), how);
        ::_exit(128 + how);
    }
}

/// Starts `name` under a guard (subprocess.h); `pid` is the guard's. Returns 0 or an errno.
int spawnGuarded(const std::string& name, const std::vector<char*>& argv, const std::vector<char*>& envp,
                 const int childFd[3], pid_t& pid) {
    std::string path;
    if (const int rc = resolveProgram(name, path)) return rc;
    int errorPipe[2];
    if (::pipe2(errorPipe, O_CLOEXEC) != 0) return errno;
    rlimit lim {};
    int fdLimit = 65536;
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
        fdLimit = static_cast<int>(std::min<rlim_t>(lim.rlim_cur, 1 << 20));
    const pid_t parent = ::getpid();
    pid = ::fork();
    if (pid < 0) {
        const int err = errno;
        ::close(errorPipe[0]);
        ::close(errorPipe[1]);
        return err;
    }
    if (pid == 0) {
        ::close(errorPipe[0]);
        runGuard(path.c_str(), argv.data(), envp.data(), childFd, errorPipe[1], parent, fdLimit);
    }
    ::setpgid(pid, pid);  // also here, so that a kill of the group right away cannot miss it
    ::close(errorPipe[1]);
    int err = 0;
    ssize_t got;
    do {
        got = ::read(errorPipe[0], &err, sizeof err);
    } while (got < 0 && errno == EINTR);
    ::close(errorPipe[0]);
    if (got == static_cast<ssize_t>(sizeof err) && err != 0) {
        waitProcess(pid);
        pid = -1;
        return err;
    }
    return 0;
}

}  // namespace

int spawnProcess(const SpawnSpec& spec, ChildProcess& child, std::string& error) {
    child = ChildProcess{};
    if (spec.argv.empty()) {
        error = "no program to run";
        return EINVAL;
    }
    // childEnds: fds that become the child's 0/1/2 (closed in the parent after the spawn).
    // parentEnds: fds the parent keeps; closed on failure.
    std::vector<int> childEnds, parentEnds;
    int childFd[3] = {-1, -1, -1};
    int sockParent = -1, sockChild = -1;
    auto fail = [&](int err, const std::string& what) {
        closeAll(childEnds);
        closeAll(parentEnds);
        error = what + ": " + std::strerror(err);
        return err;
    };
    auto ensureSocket = [&]() -> int {
        if (sockParent >= 0) return 0;
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return errno;
        sockParent = sv[0];
        sockChild = sv[1];
        parentEnds.push_back(sockParent);
        childEnds.push_back(sockChild);
        return 0;
    };
    const StdioMode modes[3] = {spec.in, spec.out, spec.err};
    for (int s = 0; s < 3; ++s) {
        switch (modes[s]) {
            case StdioMode::Inherit:
                break;
            case StdioMode::Null: {
                const int fd = ::open("/dev/null", (s == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
                if (fd < 0) return fail(errno, "cannot open /dev/null");
                childEnds.push_back(fd);
                childFd[s] = fd;
                break;
            }
            case StdioMode::Pipe: {
                int p[2];
                if (::pipe2(p, O_CLOEXEC) != 0) return fail(errno, "cannot create a pipe");
                const int mine = s == 0 ? p[1] : p[0];
                const int theirs = s == 0 ? p[0] : p[1];
                parentEnds.push_back(mine);
                childEnds.push_back(theirs);
                childFd[s] = theirs;
                (s == 0 ? child.inFd : s == 1 ? child.outFd : child.errFd) = mine;
                break;
            }
            case StdioMode::Socket: {
                if (const int e = ensureSocket()) return fail(e, "cannot create a socket pair");
                childFd[s] = sockChild;
                (s == 0 ? child.inFd : s == 1 ? child.outFd : child.errFd) = sockParent;
                break;
            }
            case StdioMode::MergeOut:
                if (s != 2) return fail(EINVAL, "MergeOut is for stderr only");
                childFd[2] = -2;  // resolved below: dup of the child's stdout
                break;
        }
    }

    std::vector<char*> argv;
    for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::vector<std::string> envStrings = buildEnvironment(spec.env);
    std::vector<char*> envp;
    for (const auto& e : envStrings) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    pid_t pid = -1;
    int rc = 0;
    if (spec.killWithParent) {
        rc = spawnGuarded(spec.argv[0], argv, envp, childFd, pid);
    } else {
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        for (int s = 0; s < 3; ++s)
            if (childFd[s] >= 0) posix_spawn_file_actions_adddup2(&actions, childFd[s], s);
        if (childFd[2] == -2) posix_spawn_file_actions_adddup2(&actions, 1, 2);

        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        sigset_t empty, defaults;
        sigemptyset(&empty);
        sigemptyset(&defaults);
        for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGUSR1,
                        SIGUSR2})
            sigaddset(&defaults, sig);
        posix_spawnattr_setsigmask(&attr, &empty);
        posix_spawnattr_setsigdefault(&attr, &defaults);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
        rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
    }
    closeAll(childEnds);
    if (rc != 0) {
        closeAll(parentEnds);
        child = ChildProcess{};
        error = "cannot start '" + spec.argv[0] + "': " + std::strerror(rc);
        return rc;
    }
    child.pid = pid;
    return 0;
}

namespace {

ExitStatus decodeStatus(int status) {
    ExitStatus st;
    if (WIFEXITED(status)) {
        st.exited = true;
        st.code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        st.signal = WTERMSIG(status);
    }
    return st;
}

}  // namespace

bool tryWaitProcess(pid_t pid, ExitStatus& status) {
    if (pid <= 0) return true;
    int raw = 0;
    pid_t r;
    do {
        r = ::waitpid(pid, &raw, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == 0) return false;
    if (r != pid) {
        status = ExitStatus{true, -1, 0};
        return true;
    }
    status = decodeStatus(raw);
    return true;
}

ExitStatus waitProcess(pid_t pid) {
    ExitStatus st;
    if (pid <= 0) return st;
    int status = 0;
    pid_t r;
    do {
        r = ::waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    if (r != pid) {
        st.exited = true;
        st.code = -1;
        return st;
    }
    return decodeStatus(status);
}

void killProcessGroup(pid_t pid) {
    if (pid <= 0) return;
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
}

void closeChildFds(ChildProcess& child) {
    std::vector<int> fds{child.inFd, child.outFd, child.errFd};
    closeAll(fds);
    child.inFd = child.outFd = child.errFd = -1;
}

std::string describeSignal(int sig) {
    struct Entry {
        int sig;
        const char* name;
        const char* text;
    };
    static const Entry kTable[] = {
        {SIGSEGV, "SIGSEGV", "segmentation fault"},
        {SIGABRT, "SIGABRT", "aborted"},
        {SIGBUS, "SIGBUS", "bus error"},
        {SIGFPE, "SIGFPE", "floating-point exception"},
        {SIGILL, "SIGILL", "illegal instruction"},
        {SIGKILL, "SIGKILL", "killed"},
        {SIGTERM, "SIGTERM", "terminated"},
        {SIGINT, "SIGINT", "interrupted"},
        {SIGTRAP, "SIGTRAP", "trace/breakpoint trap"},
        {SIGPIPE, "SIGPIPE", "broken pipe"},
        {SIGXCPU, "SIGXCPU", "CPU time limit exceeded"},
        {SIGSYS, "SIGSYS", "bad system call"},
    };
    for (const auto& e : kTable)
        if (e.sig == sig) return std::string(e.name) + " (" + e.text + ")";
    const char* text = ::strsignal(sig);
    return "signal " + std::to_string(sig) + (text ? std::string(" (") + text + ")" : std::string());
}

int runProcess(const SpawnSpec& specIn, const support::CancelToken* cancel, ProcessOutput& result, std::string& error) {
    result = ProcessOutput{};
    SpawnSpec spec = specIn;
    spec.in = StdioMode::Null;
    spec.out = StdioMode::Pipe;
    spec.err = StdioMode::MergeOut;
    ChildProcess child;
    if (const int rc = spawnProcess(spec, child, error)) return rc;
    char buf[8192];
    for (;;) {
        pollfd p{child.outFd, POLLIN, 0};
        const int n = ::poll(&p, 1, 50);
        if (cancel && cancel->isCancelled()) {
            killProcessGroup(child.pid);
            result.cancelled = true;
            break;
        }
        if (n < 0 && errno != EINTR) break;
        if (n <= 0) continue;
        const ssize_t got = ::read(child.outFd, buf, sizeof buf);
        if (got > 0) {
            result.output.append(buf, static_cast<std::size_t>(got));
            continue;
        }
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        break;  // EOF: the child (and every helper holding the pipe) is done
    }
    closeChildFds(child);
    result.status = waitProcess(child.pid);
    return 0;
}

}  // namespace tessera::runtime
