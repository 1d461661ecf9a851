#include "app/gui/program_outline.h"

#include "core/pipeline/dsl_text.h"

namespace tessera::app {

std::vector<views::ProgramStatement> programOutline(std::string_view text, const std::string& file)
{
    std::vector<views::ProgramStatement> out;
    for (pipeline::DslStatement& s : pipeline::dslOutline(text, file)) {
        views::ProgramStatement p;
        p.firstLine = s.firstLine;
        p.firstColumn = s.firstColumn;
        p.lastLine = s.lastLine;
        p.lastColumn = s.lastColumn;
        p.node = std::move(s.node);
        switch (s.defines) {
        case pipeline::DslStatement::Defines::Operator:
            p.kind = views::SnapshotNodeKind::Operator;
            break;
        case pipeline::DslStatement::Defines::GraphInput:
            p.kind = views::SnapshotNodeKind::GraphInput;
            break;
        case pipeline::DslStatement::Defines::GraphOutput:
            p.kind = views::SnapshotNodeKind::GraphOutput;
            break;
        }
        out.push_back(std::move(p));
    }
    return out;
}

std::uint64_t programTokenSignature(std::string_view text) { return pipeline::dslTokenSignature(text); }

}  // namespace tessera::app
