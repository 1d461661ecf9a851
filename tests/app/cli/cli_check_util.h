#pragma once
// Shared by the CLI checkers (cli_json_check, cli_run_json_check): counted checks, shell quoting
// and running a command to capture its stdout.
#include <sys/wait.h>

#include <cstdio>
#include <iostream>
#include <string>

namespace tessera::test {

/// Records failed checks: each prints "FAIL: what" to stderr.
inline int& checkFailures() {
    static int failures = 0;
    return failures;
}

inline void check(bool ok, const std::string& what) {
    if (!ok) {
        std::cerr << "FAIL: " << what << "\n";
        ++checkFailures();
    }
}

/// `s` in single quotes for /bin/sh.
inline std::string shellQuote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

/// Runs `cmd` through the shell, appends its stdout to `text` and returns its exit status
/// (-1 when it could not be started or did not exit normally).
inline int runCapture(const std::string& cmd, std::string& text) {
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return -1;
    char buf[65536];
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) text.append(buf, n);
    const int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace tessera::test
