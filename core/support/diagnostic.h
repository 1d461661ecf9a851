#pragma once
/// @file
/// Diagnostics: every error Tessera reports about user input (a model, a program, a plan) is a
/// Diagnostic, never an exception thrown into callers. A diagnostic names where the problem is
/// (file, line:column range for text input, or node/field for models) and what it is.
///
/// Thread rules: plain values; safe to copy between threads.

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::support {

enum class Severity { Note, Warning, Error };

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

    /// "file:line:col: error: message" or "file: error: where: message"; one line (notes excluded).
    std::string format() const;
};

const char* severityName(Severity s);

/// Ordered list of diagnostics with helpers.
class DiagnosticList {
public:
    void add(Diagnostic d) { m_items.push_back(std::move(d)); }
    void error(std::string file, std::string where, std::string message);
    void warning(std::string file, std::string where, std::string message);
    void note(std::string file, std::string where, std::string message);
    bool hasErrors() const;
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
