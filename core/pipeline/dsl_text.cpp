#include "core/pipeline/dsl_text.h"

#include <set>

#include "core/frontend/dsl/diagnostic_render.h"
#include "core/frontend/dsl/dsl.h"
#include "core/frontend/dsl/lexer.h"
#include "core/frontend/dsl/parser.h"
#include "core/pipeline/load_model.h"

namespace tessera::pipeline {

static_assert(kMaxDslSourceBytes == frontend::dsl::kMaxSourceBytes);

namespace {

namespace ast = frontend::dsl::ast;

DslStatement statementAt(const frontend::dsl::SourceRange& r, std::string node, DslStatement::Defines defines) {
    DslStatement s;
    s.firstLine = r.begin.line;
    s.firstColumn = r.begin.column;
    s.lastLine = r.end.line > 0 ? r.end.line : r.begin.line;
    s.lastColumn = r.end.line > 0 ? r.end.column : r.begin.column;
    s.node = std::move(node);
    s.defines = defines;
    return s;
}

/// sema's uniqueNodeName over the names given so far.
std::string uniqueName(std::set<std::string>& used, const std::string& base) {
    std::string name = base;
    for (int k = 1; used.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
    used.insert(name);
    return name;
}

}  // namespace

support::Expected<ir::Model> parseDsl(std::string_view text, const std::string& file, const std::string& baseDir) {
    frontend::dsl::ParseOptions options = dslParseOptions();
    options.baseDir = baseDir;
    return frontend::dsl::parseProgram(text, file, options);
}

std::string printDsl(const ir::Model& model, const DslPrintOptions& options) {
    return frontend::dsl::printDsl(model, options);
}

std::string renderDslDiagnostics(const support::DiagnosticList& diagnostics, std::string_view source) {
    return frontend::dsl::renderDiagnostics(diagnostics, source);
}

std::vector<DslStatement> dslOutline(std::string_view text, const std::string& file) {
    using Defines = DslStatement::Defines;
    support::DiagnosticList ignored;
    const ast::Program program = frontend::dsl::parseSource(text, file, ignored);
    std::vector<DslStatement> out;
    std::set<std::string> used;
    std::size_t nodes = 0;
    for (const ast::Statement& st : program.statements) {
        switch (st.kind) {
            case ast::Statement::Kind::Op: {
                const ast::OpStmt& s = st.op;
                std::string name;
                if (s.nodeName) {
                    name = s.nodeName->text;
                    used.insert(name);
                } else {
                    std::string base;
                    for (const ast::Target& t : s.targets) {
                        if (!t.omitted) {
                            base = t.name.text;
                            break;
                        }
                    }
                    if (base.empty()) {
                        std::string op = s.domain ? s.op.text : frontend::dsl::resolveOpAlias(s.op.text);
                        base = (op.empty() ? s.op.text : op) + "_" + std::to_string(nodes);
                    }
                    name = uniqueName(used, base);
                }
                ++nodes;
                out.push_back(statementAt(s.range, std::move(name), Defines::Operator));
                break;
            }
            case ast::Statement::Kind::Compute: {
                const ast::ComputeStmt& s = st.compute;
                std::string name;
                if (s.nodeName) {
                    name = s.nodeName->text;
                    used.insert(name);
                } else {
                    name = uniqueName(used, s.output.text);
                }
                ++nodes;
                out.push_back(statementAt(s.range, std::move(name), Defines::Operator));
                break;
            }
            case ast::Statement::Kind::Input:
                out.push_back(statementAt(st.input.range, st.input.name.text, Defines::GraphInput));
                break;
            case ast::Statement::Kind::Output:
                for (const auto& item : st.output.items) {
                    // The whole statement for one name; for `output a, b;` each name on its own, so
                    // a click picks the one under the cursor.
                    const frontend::dsl::SourceRange& r =
                        st.output.items.size() == 1 ? st.output.range : item.first.range;
                    out.push_back(statementAt(r, item.first.text, Defines::GraphOutput));
                }
                break;
            case ast::Statement::Kind::Schedule:
                out.push_back(statementAt(st.schedule.range, st.schedule.subject.text, Defines::Operator));
                break;
            default:
                break;
        }
    }
    return out;
}

std::uint64_t dslTokenSignature(std::string_view text) {
    support::DiagnosticList ignored;
    const std::vector<frontend::dsl::Token> tokens = frontend::dsl::tokenize(text, "", ignored);
    // FNV-1a over each token's kind and spelling.
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&h](const void* data, std::size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < n; ++i) {
            h ^= p[i];
            h *= 1099511628211ull;
        }
    };
    for (const frontend::dsl::Token& t : tokens) {
        const int kind = static_cast<int>(t.kind);
        mix(&kind, sizeof kind);
        const std::uint64_t size = t.text.size();
        mix(&size, sizeof size);
        mix(t.text.data(), t.text.size());
    }
    return h;
}

}  // namespace tessera::pipeline
