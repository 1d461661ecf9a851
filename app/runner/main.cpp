// tessera-runner: runs user kernels for the IDE and the CLI in a separate process, speaking the
// line-delimited JSON protocol of core/runtime/runner_protocol.h on stdin/stdout. A kernel that
// crashes takes only this process down; the client reports the signal as a diagnostic.
// CUDA kernels run here too: this process owns the CUDA contexts (the driver is loaded at run
// time, core/runtime/cuda/cuda_driver.h). After a GPU fault that leaves a context unusable it
// sends the fatal answer and exits with kRunnerFatalExitStatus; the client starts a fresh runner.

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/runtime/runner_service.h"

#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_RUNNER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_RUNNER_ASAN 1
#endif
#endif

#ifdef TESSERA_RUNNER_ASAN
// In a sanitizer build the kernel faults this process exists to contain must still end it with
// their signal (the client reports the signal), not with ASan's report and exit status 1.
extern "C" const char* __asan_default_options() {
    return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_leaks=0";
}
#endif

namespace {

/// Ends this process together with the client that started it. A CLI killed with SIGKILL while a
/// kernel runs cannot close our stdin in an orderly way, and the kernel never reads stdin; without
/// this the runner would be re-parented to init and keep computing.
///
/// PR_SET_PDEATHSIG delivers SIGKILL when the parent goes away. The parent may already have died
/// between the spawn and this call; RunnerClient passes its pid in TESSERA_RUNNER_PARENT, and a
/// different getppid() means that happened. (The signal is tied to the thread that spawned us:
/// when that thread ends, the runner ends too, and the client starts a fresh one on its next use.)
void followParent() {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const char* env = std::getenv("TESSERA_RUNNER_PARENT");
    if (!env || !*env) return;
    char* end = nullptr;
    const long parent = std::strtol(env, &end, 10);
    if (end == env || *end != '\0' || parent <= 0) return;
    if (::getppid() != static_cast<pid_t>(parent)) _exit(3);
}

}  // namespace

int main() {
    followParent();
    // The protocol keeps the original stdout; fd 1 becomes stderr so that anything a kernel (or a
    // library it loads) prints can never corrupt the protocol stream.
    const int protocolFd = ::dup(STDOUT_FILENO);
    if (protocolFd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        std::fprintf(stderr, "tessera-runner: cannot set up the protocol channel: %s\n", std::strerror(errno));
        return 2;
    }
    // A crashing kernel is an expected event here: do not spend seconds writing core dumps of
    // large arenas. TESSERA_RUNNER_CORE=1 keeps them for debugging the runner itself.
    if (const char* keep = std::getenv("TESSERA_RUNNER_CORE"); !keep || std::strcmp(keep, "1") != 0) {
        const rlimit none{0, 0};
        ::setrlimit(RLIMIT_CORE, &none);
    }
    // A client that went away is reported by write() failing; exit then instead of dying of SIGPIPE.
    ::signal(SIGPIPE, SIG_IGN);
    return tessera::runtime::serveRunner(STDIN_FILENO, protocolFd);
}
