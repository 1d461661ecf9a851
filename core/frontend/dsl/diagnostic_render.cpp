#include "core/frontend/dsl/diagnostic_render.h"

#include <algorithm>

namespace tessera::frontend::dsl {

namespace {

/// Line `line` (1-based) of `source`, without its newline; empty when out of range.
std::string_view sourceLine(std::string_view source, int line) {
    if (line < 1) return {};
    std::size_t pos = 0;
    for (int l = 1; l < line; ++l) {
        const std::size_t nl = source.find('\n', pos);
        if (nl == std::string_view::npos) return {};
        pos = nl + 1;
    }
    std::size_t end = source.find('\n', pos);
    if (end == std::string_view::npos) end = source.size();
    std::string_view l = source.substr(pos, end - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    return l;
}

}  // namespace

std::string renderDiagnostic(const support::Diagnostic& d, std::string_view source) {
    std::string out = d.format();
    out += "\n";
    const std::string_view line = sourceLine(source, d.begin.line);
    if (d.begin.line > 0 && d.begin.column > 0 && (!line.empty() || d.begin.column == 1)) {
        constexpr std::size_t kMaxShown = 400;
        const std::string num = std::to_string(d.begin.line);
        const std::string pad(num.size(), ' ');
        std::string shown;
        const std::size_t n = std::min(line.size(), kMaxShown);
        for (std::size_t i = 0; i < n; ++i) {
            const unsigned char c = static_cast<unsigned char>(line[i]);
            shown += (c < 0x20 && c != '\t') || c == 0x7F ? '?' : static_cast<char>(c);
        }
        if (line.size() > kMaxShown) shown += " ...";
        out += "    " + num + " | " + shown + "\n";
        const std::size_t col = static_cast<std::size_t>(d.begin.column - 1);
        std::size_t endCol = col;
        if (d.end.line == d.begin.line && d.end.column >= d.begin.column)
            endCol = static_cast<std::size_t>(d.end.column - 1);
        else if (d.end.line > d.begin.line)
            endCol = line.empty() ? col : std::max(col, line.size() - 1);
        std::string marks;
        for (std::size_t i = 0; i < col && i < kMaxShown; ++i)
            marks += (i < line.size() && line[i] == '\t') ? '\t' : ' ';
        if (col <= kMaxShown) {
            marks += '^';
            for (std::size_t i = col + 1; i <= endCol && i <= kMaxShown; ++i) marks += '~';
        }
        out += "    " + pad + " | " + marks + "\n";
        for (const auto& note : d.notes) out += "    " + pad + " = " + note + "\n";
    } else {
        for (const auto& note : d.notes) out += "    = " + note + "\n";
    }
    return out;
}

std::string renderDiagnostics(const support::DiagnosticList& list, std::string_view source) {
    std::string out;
    for (const auto& d : list.items()) out += renderDiagnostic(d, source);
    return out;
}

}  // namespace tessera::frontend::dsl
