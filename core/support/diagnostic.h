#pragma once
/// @file
/// Diagnostics: every error Tessera reports about user input (a model, a program, a plan) is a
/// Diagnostic, never an exception thrown into callers. A diagnostic names where the problem is
/// (file, line:column range for text input, or node/field for models) and what it is.
///
/// Callers that act on the kind of a problem (an exit code, a fallback, a hint in the window)
/// test Diagnostic::code, which the code that makes the diagnostic sets; the message is for
/// people and may be reworded without notice.
///
/// Thread rules: plain values; safe to copy between threads.

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::support {

enum class Severity { Note, Warning, Error };

/// The kind of problem a diagnostic reports, for callers that act on it. Most diagnostics have
/// none (None): their text is all there is to them.
enum class DiagnosticCode {
    None,
    /// tessera-runner failed rather than the model: the process crashed, hung (killed after its
    /// timeout), broke the protocol or lost its GPU context, at start or while a kernel ran (the
    /// message names the kernel: "kernel 'X' crashed: SIGSEGV ..."). pipeline::runModel also
    /// gives this code to every other error of running the kernels in the runner (an error
    /// answer, a runner that cannot be started).
    RunnerFault,
    /// The runner could not launch a kernel: the CUDA driver refused its grid, block or resources.
    KernelLaunchFailed,
    /// No tessera-runner executable was found (TESSERA_RUNNER, or next to the program).
    RunnerNotFound,
    /// The host compiler or NVRTC is missing, cannot be started, or failed to build the kernels.
    CompilerFailed,
    /// An op, or this form of an op, has no code generator; running it in the reference
    /// interpreter (--fallback-reference) is the way around.
    NoCodeGenerator,
    /// Measured roofs contradict each other (a bandwidth that falls with more threads, a level
    /// slower than the one behind it): other processes probably competed for the machine.
    MeasurementDisturbed,
};

/// A position in a text file; 1-based line and column, 0 when unknown.
struct SourceLocation {
    int line = 0;
    int column = 0;
};

struct Diagnostic {
    Severity severity = Severity::Error;
    std::string file;        ///< file the problem is in (may be empty for in-memory input)
    SourceLocation begin;    ///< start of the range in a text file (0:0 when not textual)
    SourceLocation end;      ///< end of the range (inclusive), 0:0 when unknown
    std::string where;       ///< for models: node or field, e.g. "node 'Conv_12' (Conv)" or "initializer 'w'"
    std::string message;     ///< one line, no trailing period needed
    std::vector<std::string> notes;  ///< extra lines: hints, the other side of a mismatch
    DiagnosticCode code = DiagnosticCode::None;

    /// "file:line:col: error: message" or "file: error: where: message"; one line (notes excluded).
    std::string format() const;
};

const char* severityName(Severity s);

/// Ordered list of diagnostics with helpers.
class DiagnosticList {
public:
    void add(Diagnostic d) { m_items.push_back(std::move(d)); }
    void error(std::string file, std::string where, std::string message,
               DiagnosticCode code = DiagnosticCode::None);
    void warning(std::string file, std::string where, std::string message,
                 DiagnosticCode code = DiagnosticCode::None);
    void note(std::string file, std::string where, std::string message);
    bool hasErrors() const;
    /// True when some item (of any severity) carries `code`.
    bool hasCode(DiagnosticCode code) const;
    const std::vector<Diagnostic>& items() const { return m_items; }
    std::vector<Diagnostic>& items() { return m_items; }
    bool empty() const { return m_items.empty(); }
    /// First error, or nullptr.
    const Diagnostic* firstError() const;
    void append(const DiagnosticList& other);
    /// Every item's format(), one per line (each line ends with a newline).
    std::string formatAll() const;

private:
    std::vector<Diagnostic> m_items;
};

}  // namespace tessera::support
