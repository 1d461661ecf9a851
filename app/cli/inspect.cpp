#include "app/cli/inspect.h"

#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/ir/dot_export.h"
#include "core/ir/printer.h"
#include "core/ir/shape_inference.h"
#include "core/pipeline/load_model.h"

namespace tessera::cli {

namespace {

using nlohmann::json;

const ir::TensorType& displayType(const ir::Value& v) {
    if (!v.type.isDefined() && v.onnxType) return *v.onnxType;
    return v.type;
}

json shapeJson(const ir::Shape& s) {
    if (!s.rankKnown()) return nullptr;
    json arr = json::array();
    for (const auto& d : s.dims()) {
        if (d.isKnown()) arr.push_back(d.value);
        else if (d.isSymbolic()) arr.push_back(d.symbol);
        else arr.push_back(nullptr);
    }
    return arr;
}

json valueJson(const ir::Value& v) {
    const auto& t = displayType(v);
    return json{{"name", v.name}, {"dtype", std::string(ir::dtypeName(t.dtype))}, {"shape", shapeJson(t.shape)}};
}

/// Thousands separators for large counts in the text report.
std::string grouped(std::int64_t v) {
    std::string digits = std::to_string(v < 0 ? -v : v);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return v < 0 ? "-" + out : out;
}

/// A name as one line of the text report: control characters and backslashes escaped (names may
/// hold newlines), so "a\nb" printed means the name had a real newline, "a\\nb" a backslash.
std::string printable(const std::string& s) {
    std::string out;
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c == '\r') out += "\\r";
        else if (c < 0x20 || c == 0x7F) {
            static const char* const kHex = "0123456789abcdef";
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        } else {
            out += ch;
        }
    }
    return out;
}

struct Summary {
    std::map<std::string, int> histogram;
    std::int64_t parameters = 0;
    std::int64_t parameterBytes = 0;
    std::int64_t flops = 0;         ///< sum over the nodes whose count is known
    int unknownFlopNodes = 0;       ///< nodes whose count is unknown (dynamic shapes, control flow, unknown op)
    bool flopsSaturated = false;    ///< the sum exceeded int64 and was clamped
    std::vector<std::optional<std::int64_t>> nodeFlops;
};

Summary summarize(const ir::Graph& g) {
    Summary s;
    for (const auto& n : g.nodes()) ++s.histogram[n.domain.empty() ? n.opType : n.domain + "." + n.opType];
    for (ir::ValueId id : g.initializers()) {
        const auto& v = g.value(id);
        if (!v.data) continue;
        s.parameters += v.data->numElements();
        if (v.data->dtype == ir::DType::String) {
            for (const auto& str : v.data->strings) s.parameterBytes += static_cast<std::int64_t>(str.size());
        } else {
            s.parameterBytes += static_cast<std::int64_t>(v.data->bytes.size());
        }
    }
    s.nodeFlops.reserve(g.numNodes());
    for (std::size_t i = 0; i < g.numNodes(); ++i) {
        auto f = ir::nodeFlops(g, static_cast<ir::NodeId>(i));
        s.nodeFlops.push_back(f);
        if (!f) {
            ++s.unknownFlopNodes;
        } else if (*f > 0) {
            if (s.flops <= INT64_MAX - *f) {
                s.flops += *f;
            } else {
                s.flops = INT64_MAX;
                s.flopsSaturated = true;
            }
        }
    }
    return s;
}

std::string outputsText(const ir::Graph& g, const ir::Node& n) {
    std::string out;
    for (ir::ValueId o : n.outputs) {
        if (o == ir::kNoValue) continue;
        if (!out.empty()) out += ", ";
        out += displayType(g.value(o)).str();
    }
    return out;
}

void printText(const ir::Model& m, const std::string& path, const support::DiagnosticList& diags, std::ostream& out) {
    const ir::Graph& g = m.graph;
    const Summary s = summarize(g);
    out << "model: " << path << "\n";
    out << "ir_version: " << m.irVersion << "\n";
    out << "opsets:";
    for (const auto& [domain, version] : m.opsets) out << " " << (domain.empty() ? "ai.onnx" : domain) << "=" << version;
    out << "\n";
    if (!m.producerName.empty()) {
        out << "producer: " << printable(m.producerName);
        if (!m.producerVersion.empty()) out << " " << printable(m.producerVersion);
        out << "\n";
    }
    out << "\ninputs:\n";
    for (ir::ValueId id : g.runtimeInputs()) out << "  " << printable(g.value(id).name) << "  " << printable(displayType(g.value(id)).str()) << "\n";
    out << "outputs:\n";
    for (ir::ValueId id : g.outputs()) out << "  " << printable(g.value(id).name) << "  " << printable(displayType(g.value(id)).str()) << "\n";
    out << "\nnodes: " << g.numNodes() << "\n";
    out << "op histogram:\n";
    for (const auto& [op, count] : s.histogram) out << "  " << std::left << std::setw(24) << printable(op) << std::right << count << "\n";
    out << "\nparameters: " << grouped(s.parameters) << " (" << grouped(s.parameterBytes) << " bytes in "
        << g.initializers().size() << " initializers)\n";
    if (s.unknownFlopNodes == 0 && !s.flopsSaturated) {
        out << "FLOPs: " << grouped(s.flops) << " total\n";
    } else {
        // A partial sum must not read as a total.
        out << "FLOPs: at least " << grouped(s.flops) << " (" << s.unknownFlopNodes << " of " << g.numNodes()
            << " nodes unknown: dynamic shapes, control flow or ops without a FLOP count"
            << (s.flopsSaturated ? "; sum clamped at int64 max" : "") << ")\n";
    }
    out << "\nper node (topological order):\n";
    out << "  " << std::left << std::setw(20) << "op" << std::right << std::setw(16) << "FLOPs" << "  "
        << std::left << std::setw(24) << "output" << std::right << "  name\n";
    const auto order = g.topologicalOrder();
    std::vector<ir::NodeId> ids;
    if (order) ids = *order;
    else for (std::size_t i = 0; i < g.numNodes(); ++i) ids.push_back(static_cast<ir::NodeId>(i));
    for (ir::NodeId id : ids) {
        const auto& n = g.node(id);
        const auto& f = s.nodeFlops[static_cast<std::size_t>(id)];
        out << "  " << std::left << std::setw(20) << printable(n.opType) << std::right << std::setw(16)
            << (f ? grouped(*f) : std::string("?")) << "  " << std::left << std::setw(24) << outputsText(g, n)
            << std::right << "  " << printable(n.name) << "\n";
    }
    if (!diags.empty()) {
        out << "\ndiagnostics:\n";
        for (const auto& d : diags.items()) out << "  " << d.format() << "\n";
    }
}

json buildJson(const ir::Model& m, const support::DiagnosticList& diags) {
    const ir::Graph& g = m.graph;
    const Summary s = summarize(g);
    json j;
    j["ir_version"] = m.irVersion;
    json opsets = json::object();
    for (const auto& [domain, version] : m.opsets) opsets[domain.empty() ? "ai.onnx" : domain] = version;
    j["opsets"] = opsets;
    j["producer"] = {{"name", m.producerName}, {"version", m.producerVersion}};
    j["inputs"] = json::array();
    for (ir::ValueId id : g.runtimeInputs()) j["inputs"].push_back(valueJson(g.value(id)));
    j["outputs"] = json::array();
    for (ir::ValueId id : g.outputs()) j["outputs"].push_back(valueJson(g.value(id)));
    j["nodes"] = g.numNodes();
    json hist = json::object();
    for (const auto& [op, count] : s.histogram) hist[op] = count;
    j["op_histogram"] = hist;
    j["parameters"] = s.parameters;
    j["parameter_bytes"] = s.parameterBytes;
    j["initializers"] = g.initializers().size();
    j["flops"] = s.flops;
    // flops is the sum over known nodes; complete says whether every node's count was known.
    j["flops_complete"] = s.unknownFlopNodes == 0 && !s.flopsSaturated;
    j["flops_unknown_nodes"] = s.unknownFlopNodes;
    json perNode = json::array();
    for (std::size_t i = 0; i < g.numNodes(); ++i) {
        const auto& n = g.node(static_cast<ir::NodeId>(i));
        json outs = json::array();
        for (ir::ValueId o : n.outputs) {
            if (o == ir::kNoValue) continue;
            json v = valueJson(g.value(o));
            outs.push_back(v);
        }
        const auto& f = s.nodeFlops[i];
        perNode.push_back({{"name", n.name}, {"op", n.opType}, {"domain", n.domain},
                           {"flops", f ? json(*f) : json(nullptr)}, {"outputs", outs}});
    }
    j["per_node"] = perNode;
    json ds = json::array();
    for (const auto& d : diags.items())
        ds.push_back({{"severity", support::severityName(d.severity)}, {"where", d.where}, {"message", d.message},
                      {"text", d.format()}});
    j["diagnostics"] = ds;
    return j;
}

}  // namespace

int runInspect(const InspectOptions& options, std::ostream& out, std::ostream& err) {
    pipeline::LoadOptions lo;
    lo.onnx.runOnnxShapeInference = !options.skipOnnxInference;
    auto result = pipeline::loadModel(options.modelPath, lo);
    if (!result.ok()) {
        for (const auto& d : result.diagnostics().items()) err << d.format() << "\n";
        if (!result.diagnostics().hasErrors()) err << options.modelPath << ": error: import failed\n";
        return kExitBadInput;
    }
    const ir::Model& model = result.value();
    switch (options.format) {
        case InspectFormat::Json:
            // Names are checked to be UTF-8 by the importer; other strings (producer) may not be.
            out << buildJson(model, result.diagnostics()).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
            break;
        case InspectFormat::Dot:
            out << ir::graphToDot(model.graph);
            break;
        case InspectFormat::Ir:
            out << ir::printModel(model);
            break;
        case InspectFormat::Text:
            printText(model, options.modelPath, result.diagnostics(), out);
            break;
    }
    if (options.format != InspectFormat::Text)
        for (const auto& d : result.diagnostics().items()) err << d.format() << "\n";
    return out.good() ? kExitOk : kExitInternal;
}

}  // namespace tessera::cli
