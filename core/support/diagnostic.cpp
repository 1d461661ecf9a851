#include "core/support/diagnostic.h"

namespace tessera::support {

const char* severityName(Severity s) {
    switch (s) {
        case Severity::Note: return "note";
        case Severity::Warning: return "warning";
        case Severity::Error: return "error";
    }
    return "error";
}

std::string Diagnostic::format() const {
    std::string out;
    if (!file.empty()) {
        out += file;
        if (begin.line > 0) {
            out += ":" + std::to_string(begin.line);
            if (begin.column > 0) out += ":" + std::to_string(begin.column);
        }
        out += ": ";
    }
    out += severityName(severity);
    out += ": ";
    if (!where.empty()) out += where + ": ";
    out += message;
    return out;
}

void DiagnosticList::error(std::string file, std::string where, std::string message, DiagnosticCode code) {
    add(Diagnostic{Severity::Error, std::move(file), {}, {}, std::move(where), std::move(message), {}, code});
}
void DiagnosticList::warning(std::string file, std::string where, std::string message, DiagnosticCode code) {
    add(Diagnostic{Severity::Warning, std::move(file), {}, {}, std::move(where), std::move(message), {}, code});
}
void DiagnosticList::note(std::string file, std::string where, std::string message) {
    add(Diagnostic{Severity::Note, std::move(file), {}, {}, std::move(where), std::move(message), {}});
}

bool DiagnosticList::hasErrors() const { return firstError() != nullptr; }

bool DiagnosticList::hasCode(DiagnosticCode code) const {
    for (const auto& d : m_items)
        if (d.code == code) return true;
    return false;
}

const Diagnostic* DiagnosticList::firstError() const {
    for (const auto& d : m_items)
        if (d.severity == Severity::Error) return &d;
    return nullptr;
}

void DiagnosticList::append(const DiagnosticList& other) {
    m_items.insert(m_items.end(), other.m_items.begin(), other.m_items.end());
}

std::string DiagnosticList::formatAll() const {
    std::string r;
    for (const auto& d : m_items) r += d.format() + "\n";
    return r;
}

}  // namespace tessera::support
