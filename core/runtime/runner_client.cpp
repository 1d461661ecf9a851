#include "core/runtime/runner_client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include "core/runtime/timing.h"

namespace tessera::runtime {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kStderrTailBytes = 8192;
constexpr int kStderrNoteLines = 12;

support::DiagnosticList errorList(const std::string& message, std::vector<std::string> notes = {},
                                  support::DiagnosticCode code = support::DiagnosticCode::None) {
    support::DiagnosticList d;
    support::Diagnostic e;
    e.message = message;
    e.notes = std::move(notes);
    e.code = code;
    d.add(std::move(e));
    return d;
}

std::string formatSeconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
}

/// Whether an error answer carries "fatal":true (the runner exits after sending it).
bool isFatalAnswer(const json& msg) {
    const auto it = msg.find("fatal");
    return it != msg.end() && it->is_boolean() && it->get<bool>();
}

bool isExecutable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0 && !fs::is_directory(path); }

}  // namespace

support::Expected<std::string> findRunnerExecutable() {
    if (const char* env = std::getenv("TESSERA_RUNNER"); env && *env) {
        if (isExecutable(env)) return std::string(env);
        return errorList(std::string("TESSERA_RUNNER is set to '") + env + "', which is not an executable file");
    }
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    std::vector<std::string> tried;
    if (!ec) {
        const fs::path dir = self.parent_path();
        for (const fs::path& candidate : {dir / "tessera-runner", dir / ".." / "runner" / "tessera-runner"}) {
            const std::string c = candidate.lexically_normal().string();
            if (isExecutable(c)) return c;
            tried.push_back(c);
        }
    }
    std::string where;
    for (const auto& t : tried) where += (where.empty() ? "" : ", ") + t;
    return errorList("tessera-runner not found" + (where.empty() ? std::string() : " (looked at " + where + ")") +
                         ": set TESSERA_RUNNER to its path",
                     {}, support::DiagnosticCode::RunnerNotFound);
}

RunnerClient::RunnerClient(RunnerClientOptions options) : m_options(std::move(options)) {}

RunnerClient::~RunnerClient() { shutdown(); }

void RunnerClient::shutdown() {
    if (m_child.pid <= 0) {
        closeChildFds(m_child);
        return;
    }
    // Closing our end gives the runner EOF on stdin: it exits on its own.
    if (m_child.inFd >= 0) ::shutdown(m_child.inFd, SHUT_WR);
    ExitStatus st;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!tryWaitProcess(m_child.pid, st)) {
        if (std::chrono::steady_clock::now() > deadline) {
            killProcessGroup(m_child.pid);
            waitProcess(m_child.pid);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    m_child.pid = -1;
    closeChildFds(m_child);
    m_readBuffer.clear();
}

ExitStatus RunnerClient::stop(bool kill) {
    ExitStatus st;
    if (m_child.pid > 0) {
        if (kill) {
            killProcessGroup(m_child.pid);
            st = waitProcess(m_child.pid);
        } else {
            // EOF on the protocol socket: the runner is ending. Give it a moment, then make sure.
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
            while (!tryWaitProcess(m_child.pid, st)) {
                if (std::chrono::steady_clock::now() > deadline) {
                    killProcessGroup(m_child.pid);
                    st = waitProcess(m_child.pid);
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        }
    }
    drainStderr();
    m_child.pid = -1;
    closeChildFds(m_child);
    m_readBuffer.clear();
    return st;
}

void RunnerClient::drainStderr() {
    if (m_child.errFd < 0) return;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(m_child.errFd, buf, sizeof buf);
        if (n > 0) {
            m_stderrTail.append(buf, static_cast<std::size_t>(n));
            if (m_stderrTail.size() > kStderrTailBytes) m_stderrTail.erase(0, m_stderrTail.size() - kStderrTailBytes);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) {  // the runner closed stderr (it ended): stop polling it
            ::close(m_child.errFd);
            m_child.errFd = -1;
        }
        return;  // EAGAIN: nothing more for now
    }
}

support::DiagnosticList RunnerClient::fault(const std::string& message) {
    std::vector<std::string> notes;
    std::istringstream in(m_stderrTail);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) lines.push_back(line);
    const std::size_t from = lines.size() > kStderrNoteLines ? lines.size() - kStderrNoteLines : 0;
    for (std::size_t i = from; i < lines.size(); ++i) notes.push_back("runner stderr: " + lines[i]);
    return errorList(message, std::move(notes), support::DiagnosticCode::RunnerFault);
}

bool RunnerClient::sendLine(const std::string& lineIn) {
    if (m_child.inFd < 0) return false;
    const std::string line = lineIn + "\n";
    std::size_t done = 0;
    while (done < line.size()) {
        // MSG_NOSIGNAL: a runner that died must not take this process down with SIGPIPE.
        const ssize_t n = ::send(m_child.inFd, line.data() + done, line.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

RunnerClient::Wait RunnerClient::readLine(std::string& line, double timeoutSeconds, const support::CancelToken* cancel) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeoutSeconds));
    char buf[65536];
    for (;;) {
        if (const std::size_t nl = m_readBuffer.find('\n'); nl != std::string::npos) {
            line = m_readBuffer.substr(0, nl);
            m_readBuffer.erase(0, nl + 1);
            return Wait::Line;
        }
        if (cancel && cancel->isCancelled()) return Wait::Cancelled;
        const auto now = Clock::now();
        if (now >= deadline) return Wait::Timeout;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
        const int waitMs = static_cast<int>(std::min<long long>(std::max<long long>(left, 1), 50));
        pollfd fds[2] = {{m_child.outFd, POLLIN, 0}, {m_child.errFd, POLLIN, 0}};
        const nfds_t count = m_child.errFd >= 0 ? 2 : 1;
        const int n = ::poll(fds, count, waitMs);
        if (n < 0) {
            if (errno == EINTR) continue;
            return Wait::Error;
        }
        if (count == 2 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) drainStderr();
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            const ssize_t got = ::recv(m_child.outFd, buf, sizeof buf, 0);
            if (got > 0) {
                m_readBuffer.append(buf, static_cast<std::size_t>(got));
                continue;
            }
            if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            return Wait::Eof;
        }
    }
}

support::DiagnosticList RunnerClient::start(const support::CancelToken* cancel) {
    std::string path = m_options.runnerPath;
    if (path.empty()) {
        auto found = findRunnerExecutable();
        if (!found) return found.diagnostics();
        path = *found;
    }
    SpawnSpec spec;
    spec.argv = {path};
    spec.in = StdioMode::Socket;
    spec.out = StdioMode::Socket;
    spec.err = StdioMode::Pipe;
    spec.env = m_options.env;
    // The runner ends itself when this process dies (app/runner/main.cpp); our pid lets it notice
    // a death that happened before it could ask to be told.
    spec.env.emplace_back("TESSERA_RUNNER_PARENT", std::to_string(::getpid()));
    if (m_options.threads > 0) spec.env.emplace_back("OMP_NUM_THREADS", std::to_string(m_options.threads));
    std::string error;
    const int rc = spawnProcess(spec, m_child, error);
    if (rc == ENOENT)
        return errorList("tessera-runner not found at '" + path + "': set TESSERA_RUNNER to its path", {},
                         support::DiagnosticCode::RunnerNotFound);
    if (rc != 0) return errorList(error);
    ::fcntl(m_child.errFd, F_SETFL, ::fcntl(m_child.errFd, F_GETFL) | O_NONBLOCK);

    if (!sendLine(dumpLine({{"request", "hello"}, {"protocol", kRunnerProtocolVersion}}))) {
        const ExitStatus st = stop(true);
        (void)st;
        return fault("runner protocol error: cannot talk to '" + path + "'");
    }
    std::string line;
    switch (readLine(line, m_options.startTimeoutSeconds, cancel)) {
        case Wait::Line:
            break;
        case Wait::Cancelled:
            stop(true);
            return errorList("run cancelled");
        case Wait::Timeout:
            stop(true);
            return fault("runner did not answer within " + formatSeconds(m_options.startTimeoutSeconds) + " s (killed)");
        case Wait::Eof:
        case Wait::Error: {
            const ExitStatus st = stop(false);
            if (st.signal) return fault("runner crashed at start: " + describeSignal(st.signal));
            return fault("runner protocol error: '" + path + "' exited (status " + std::to_string(st.code) +
                         ") instead of answering hello");
        }
    }
    const json answer = json::parse(line, nullptr, false);
    if (answer.is_discarded() || !answer.is_object() || !answer.value("ok", false)) {
        stop(true);
        return fault("runner protocol error: '" + path + "' answered hello with '" + line.substr(0, 200) + "'");
    }
    const int protocol = answer.value("protocol", 0);
    if (protocol != kRunnerProtocolVersion) {
        stop(true);
        return errorList("runner protocol error: '" + path + "' speaks protocol " + std::to_string(protocol) +
                             ", this build expects " + std::to_string(kRunnerProtocolVersion) + " (rebuild tessera-runner)",
                         {}, support::DiagnosticCode::RunnerFault);
    }
    return {};
}

support::Expected<RunnerHello> RunnerClient::hello(const std::string& libraryPath, const support::CancelToken* cancel) {
    m_stderrTail.clear();
    if (auto d = ensureStarted(cancel); d.hasErrors()) return d;
    json request = {{"request", "hello"}, {"protocol", kRunnerProtocolVersion}};
    if (!libraryPath.empty()) request["library"] = libraryPath;
    if (!sendLine(dumpLine(request))) {
        stop(true);
        return fault("runner protocol error: the runner went away");
    }
    std::string line;
    const Wait w = readLine(line, m_options.startTimeoutSeconds, cancel);
    if (w != Wait::Line) {
        const ExitStatus st = stop(w != Wait::Eof);
        if (w == Wait::Cancelled) return errorList("run cancelled");
        if (st.signal) return fault("runner crashed while loading '" + libraryPath + "': " + describeSignal(st.signal));
        return fault("runner protocol error: no answer to hello");
    }
    const json answer = json::parse(line, nullptr, false);
    if (answer.is_discarded() || !answer.is_object()) {
        stop(true);
        return fault("runner protocol error: '" + line.substr(0, 200) + "' is not JSON");
    }
    if (!answer.value("ok", false)) return errorList(answer.value("error", std::string("runner error")));
    RunnerHello h;
    h.protocol = answer.value("protocol", 0);
    h.pid = answer.value("pid", std::int64_t{0});
    if (auto it = answer.find("omp_max_threads"); it != answer.end() && it->is_number_integer()) h.ompMaxThreads = it->get<int>();
    return h;
}

support::DiagnosticList RunnerClient::ensureStarted(const support::CancelToken* cancel) {
    if (m_child.pid > 0) {
        ExitStatus st;
        if (tryWaitProcess(m_child.pid, st)) {  // died since the last call (killed from outside)
            m_child.pid = -1;
            stop(false);
        }
    }
    if (m_child.pid <= 0) return start(cancel);
    return {};
}

support::Expected<std::vector<cuda::CudaDeviceInfo>> RunnerClient::devices(const support::CancelToken* cancel,
                                                                           double timeoutSeconds) {
    m_stderrTail.clear();
    if (cancel && cancel->isCancelled()) return errorList("run cancelled");
    if (auto d = ensureStarted(cancel); d.hasErrors()) return d;
    if (!sendLine(dumpLine({{"request", "devices"}}))) {
        stop(true);
        return fault("runner protocol error: the runner went away");
    }
    std::string line;
    const Wait w = readLine(line, timeoutSeconds, cancel);
    switch (w) {
        case Wait::Line:
            break;
        case Wait::Cancelled:
            stop(true);
            return errorList("run cancelled");
        case Wait::Timeout:
            stop(true);
            return fault("runner did not list the CUDA devices within " + formatSeconds(timeoutSeconds) + " s (killed)");
        case Wait::Eof:
        case Wait::Error: {
            const ExitStatus st = stop(w == Wait::Error);
            if (st.signal) return fault("runner crashed while listing the CUDA devices: " + describeSignal(st.signal));
            return fault("runner protocol error: the runner exited (status " + std::to_string(st.code) + ") before answering");
        }
    }
    const json answer = json::parse(line, nullptr, false);
    if (answer.is_discarded() || !answer.is_object() || !answer.contains("ok") || !answer["ok"].is_boolean()) {
        stop(true);
        return fault("runner protocol error: unexpected answer '" + line.substr(0, 200) + "'");
    }
    if (!answer["ok"].get<bool>()) {
        const auto e = answer.find("error");
        return errorList(e != answer.end() && e->is_string() ? e->get<std::string>() : std::string("runner error"));
    }
    const auto list = answer.find("devices");
    if (list == answer.end() || !list->is_array()) {
        stop(true);
        return fault("runner protocol error: the devices answer has no 'devices' array");
    }
    std::vector<cuda::CudaDeviceInfo> out;
    for (const auto& d : *list) {
        auto info = cuda::cudaDeviceInfoFromJson(d);
        if (!info) {
            stop(true);
            return fault("runner protocol error: " + info.diagnostics().items().front().message);
        }
        out.push_back(std::move(*info));
    }
    return out;
}

support::Expected<RunResult> RunnerClient::run(const RunRequest& request, const support::CancelToken* cancel,
                                              const RunnerEventSink& onEvent) {
    m_stderrTail.clear();
    if (cancel && cancel->isCancelled()) return errorList("run cancelled");
    if (auto d = ensureStarted(cancel); d.hasErrors()) return d;

    json j = runRequestToJson(request);
    // CUDA: runRequestToJson keeps -1, which the runner reads as 2 x the device's L2.
    if (request.target == RunTarget::Cpu)
        j["rotate_bytes"] = request.rotateBytes < 0 ? 2 * lastLevelCacheBytes() : request.rotateBytes;
    if (!sendLine(dumpLine(j))) {
        stop(true);
        return fault("runner protocol error: the runner went away before the request was sent");
    }

    enum class Phase { None, Launch, Time, Total } phase = Phase::None;
    std::string label;
    auto inFlight = [&](const std::string& what) {
        switch (phase) {
            case Phase::Launch:
            case Phase::Time:
                return "kernel '" + label + "' " + what;
            case Phase::Total:
                return "end-to-end timing " + what;
            case Phase::None:
                break;
        }
        return "runner " + what;
    };

    for (;;) {
        std::string line;
        const Wait w = readLine(line, request.timeoutSeconds, cancel);
        switch (w) {
            case Wait::Line:
                break;
            case Wait::Cancelled:
                stop(true);
                return errorList("run cancelled");
            case Wait::Timeout:
                stop(true);
                if (phase == Phase::None)
                    return fault("runner did not answer within " + formatSeconds(request.timeoutSeconds) + " s (killed)");
                return fault(inFlight("did not finish within " + formatSeconds(request.timeoutSeconds) + " s (killed)"));
            case Wait::Eof:
            case Wait::Error: {
                const ExitStatus st = stop(w == Wait::Error);
                if (st.signal) return fault(inFlight("crashed: " + describeSignal(st.signal)));
                if (phase != Phase::None)
                    return fault(inFlight("ended the runner with exit status " + std::to_string(st.code)));
                return fault("runner protocol error: the runner exited (status " + std::to_string(st.code) +
                             ") before answering");
            }
        }
        const json msg = json::parse(line, nullptr, false);
        if (msg.is_discarded() || !msg.is_object()) {
            stop(true);
            return fault("runner protocol error: unexpected output '" + line.substr(0, 200) + "'");
        }
        if (auto ev = msg.find("event"); ev != msg.end()) {
            const std::string kind = ev->is_string() ? ev->get<std::string>() : std::string();
            if (kind == "time_total") {
                phase = Phase::Total;
                if (onEvent) onEvent({RunnerEvent::Kind::TimeTotal, 0});
                continue;
            }
            const auto idx = msg.find("index");
            if ((kind == "launch" || kind == "time") && idx != msg.end() && idx->is_number_integer() &&
                idx->get<std::int64_t>() >= 0 && idx->get<std::size_t>() < request.launches.size()) {
                phase = kind == "launch" ? Phase::Launch : Phase::Time;
                label = launchLabel(request.launches[idx->get<std::size_t>()]);
                if (onEvent)
                    onEvent({kind == "launch" ? RunnerEvent::Kind::Launch : RunnerEvent::Kind::Time,
                             idx->get<std::size_t>()});
                continue;
            }
            stop(true);
            return fault("runner protocol error: unexpected event '" + line.substr(0, 200) + "'");
        }
        const auto ok = msg.find("ok");
        if (ok == msg.end() || !ok->is_boolean()) {
            stop(true);
            return fault("runner protocol error: unexpected answer '" + line.substr(0, 200) + "'");
        }
        if (!ok->get<bool>()) {
            const auto e = msg.find("error");
            const std::string text = e != msg.end() && e->is_string() ? e->get<std::string>() : std::string("runner error");
            if (isFatalAnswer(msg)) {
                // The runner's GPU context is unusable and it is exiting: reap it, the next call starts a fresh one.
                stop(false);
                return fault(text);
            }
            const bool launchRefused = msg.value("code", std::string()) == kRunnerCodeKernelLaunchFailed;
            return errorList(text, {},
                             launchRefused ? support::DiagnosticCode::KernelLaunchFailed : support::DiagnosticCode::None);
        }
        auto result = runResultFromJson(msg);
        if (!result) {
            stop(true);
            return fault("runner protocol error: " + result.diagnostics().items().front().message);
        }
        return result;
    }
}

}  // namespace tessera::runtime
