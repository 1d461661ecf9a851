#include "core/frontend/onnx/onnx_importer.h"

#include <climits>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "core/frontend/onnx/onnx_tensor.h"
#include "core/ir/op_registry.h"
#include "core/ir/shape_inference.h"
#include "core/ir/verifier.h"

namespace tessera::frontend::onnx {

namespace {

namespace fs = std::filesystem;
using detail::quoteName;
using support::DiagnosticList;

constexpr std::int64_t kMinIrVersion = 3, kMaxIrVersion = 10;
// IR versions after kMaxIrVersion up to this one (onnx 1.23 writes 14 by default) are read with a
// warning: their additions (new element types, fields) are reported where a model uses them;
// protobuf skips fields it does not know.
constexpr std::int64_t kNewestReadIrVersion = 14;
constexpr std::int64_t kMaxOpset = 21;
// What Debian's onnx 1.12 knows; beyond this its schemas, checker and inference are not used.
constexpr std::int64_t kOnnxLibMaxIr = 8, kOnnxLibMaxOpset = 17;

/// Values visible to a subgraph: the enclosing graphs, innermost first.
struct Scope {
    const ir::Graph* graph = nullptr;
    const Scope* parent = nullptr;

    const ir::Value* find(const std::string& name) const {
        for (const Scope* s = this; s; s = s->parent) {
            const ir::ValueId id = s->graph->findValue(name);
            if (id != ir::kNoValue) return &s->graph->value(id);
        }
        return nullptr;
    }
};

std::string nodeWhere(const std::string& ctx, const std::string& name, const std::string& op) {
    return ctx + "node " + quoteName(name) + " (" + (detail::isValidUtf8(op) ? op : quoteName(op)) + ")";
}

/// True when ONNX-inferred `theirs` contradicts `ours`: different defined dtypes, different known
/// ranks, or a pair of known extents that differ. Unknown or symbolic dims never contradict.
bool typesConflict(const ir::TensorType& ours, const ir::TensorType& theirs) {
    if (ours.dtype != ir::DType::Undefined && theirs.dtype != ir::DType::Undefined && ours.dtype != theirs.dtype)
        return true;
    if (!ours.shape.rankKnown() || !theirs.shape.rankKnown()) return false;
    if (ours.shape.rank() != theirs.shape.rank()) return true;
    for (std::size_t i = 0; i < ours.shape.rank(); ++i) {
        const auto& a = ours.shape[i];
        const auto& b = theirs.shape[i];
        if (a.isKnown() && b.isKnown() && a.value != b.value) return true;
    }
    return false;
}

class Importer {
public:
    Importer(std::string file, std::string baseDir, const ImportOptions& options)
        : m_file(std::move(file)), m_options(options) {
        m_tensorCtx.options = &m_options;
        m_tensorCtx.baseDir = std::move(baseDir);
        m_tensorCtx.externalBytesUsed = &m_externalBytes;
    }

    support::Expected<ir::Model> run(const std::string& bytes, const support::CancelToken* cancel);

private:
    void error(const std::string& where, const std::string& message) { m_diags.error(m_file, where, message); }
    bool cancelled(const support::CancelToken* cancel) {
        if (cancel && cancel->isCancelled()) {
            error("", "import cancelled");
            return true;
        }
        return false;
    }
    bool checkName(const std::string& where, const std::string& what, const std::string& name) {
        if (detail::isValidUtf8(name)) return true;
        error(where, what + " " + quoteName(name) + " is not valid UTF-8");
        return false;
    }
    bool convertGraph(const ::onnx::GraphProto& gp, ir::Graph& g, const Scope* outer, const std::string& ctx);
    bool convertAttribute(const ::onnx::AttributeProto& a, ir::Attribute& out, const ir::Graph& owner,
                          const Scope* outer, const std::string& where, const std::string& nodeName);
    void runOnnxInference(::onnx::ModelProto& proto, ir::Model& model);
    void checkTypeConstraints(const ir::Graph& g, const ir::Model& model, const std::string& ctx);
    /// One Note per op type the registry does not know (users should not have to read --ir to learn it).
    void noteUnknownOps(const ir::Graph& g);

    std::string m_file;
    ImportOptions m_options;
    detail::TensorContext m_tensorCtx;
    std::int64_t m_externalBytes = 0;
    DiagnosticList m_diags;
};

bool Importer::convertAttribute(const ::onnx::AttributeProto& a, ir::Attribute& out, const ir::Graph& owner,
                                const Scope* outer, const std::string& where, const std::string& nodeName) {
    using AP = ::onnx::AttributeProto;
    const std::string aw = where + " attribute " + quoteName(a.name());
    auto type = a.type();
    if (type == AP::UNDEFINED) {
        // IR version 1 files leave `type` unset; the filled field tells.
        if (a.has_f()) type = AP::FLOAT;
        else if (a.has_i()) type = AP::INT;
        else if (a.has_s()) type = AP::STRING;
        else if (a.has_t()) type = AP::TENSOR;
        else if (a.has_g()) type = AP::GRAPH;
        else if (a.floats_size()) type = AP::FLOATS;
        else if (a.ints_size()) type = AP::INTS;
        else if (a.strings_size()) type = AP::STRINGS;
        else if (a.tensors_size()) type = AP::TENSORS;
        else if (a.graphs_size()) type = AP::GRAPHS;
        else {
            error(aw, "attribute has no type and no value");
            return false;
        }
    }
    std::string err;
    switch (type) {
        case AP::FLOAT: out = ir::Attribute::ofFloat(a.f()); return true;
        case AP::INT: out = ir::Attribute::ofInt(a.i()); return true;
        case AP::STRING: out = ir::Attribute::ofString(a.s()); return true;
        case AP::FLOATS: out = ir::Attribute::ofFloats({a.floats().begin(), a.floats().end()}); return true;
        case AP::INTS: out = ir::Attribute::ofInts({a.ints().begin(), a.ints().end()}); return true;
        case AP::STRINGS: out = ir::Attribute::ofStrings({a.strings().begin(), a.strings().end()}); return true;
        case AP::TENSOR: {
            if (!a.has_t()) {
                error(aw, "tensor attribute has no tensor");
                return false;
            }
            auto t = detail::convertTensor(a.t(), m_tensorCtx, err);
            if (!t) {
                error(aw, err);
                return false;
            }
            out = ir::Attribute::ofTensor(std::move(t));
            return true;
        }
        case AP::TENSORS: {
            out = ir::Attribute{};
            out.type = ir::AttrType::Tensors;
            for (int i = 0; i < a.tensors_size(); ++i) {
                auto t = detail::convertTensor(a.tensors(i), m_tensorCtx, err);
                if (!t) {
                    error(aw + " tensor " + std::to_string(i), err);
                    return false;
                }
                out.tensors.push_back(std::move(t));
            }
            return true;
        }
        case AP::GRAPH:
        case AP::GRAPHS: {
            const Scope scope{&owner, outer};
            auto convertOne = [&](const ::onnx::GraphProto& gp, const std::string& label) -> std::shared_ptr<ir::Graph> {
                auto sub = std::make_shared<ir::Graph>();
                const std::string ctx = "subgraph " + quoteName(label) + " of " + where + " > ";
                if (!convertGraph(gp, *sub, &scope, ctx)) return nullptr;
                return sub;
            };
            if (type == AP::GRAPH) {
                if (!a.has_g()) {
                    error(aw, "graph attribute has no graph");
                    return false;
                }
                auto sub = convertOne(a.g(), a.name());
                if (!sub) return false;
                out = ir::Attribute::ofGraph(std::move(sub));
                return true;
            }
            out = ir::Attribute{};
            out.type = ir::AttrType::Graphs;
            for (int i = 0; i < a.graphs_size(); ++i) {
                auto sub = convertOne(a.graphs(i), a.name() + "[" + std::to_string(i) + "]");
                if (!sub) return false;
                out.graphs.push_back(std::move(sub));
            }
            return true;
        }
        default:
            (void)nodeName;
            error(aw, "attribute type " + std::to_string(static_cast<int>(type)) +
                          " (sparse tensor or type proto) is not supported");
            return false;
    }
}

bool Importer::convertGraph(const ::onnx::GraphProto& gp, ir::Graph& g, const Scope* outer, const std::string& ctx) {
    const std::size_t errorsBefore = m_diags.items().size();
    g.name = gp.name();
    g.docString = gp.doc_string();
    std::string err, note;

    if (gp.sparse_initializer_size() > 0) {
        error(ctx + "sparse initializer " + quoteName(gp.sparse_initializer(0).values().name()),
              "sparse initializers are not supported");
        return false;
    }

    // 1. Initializers: constants with data.
    for (int i = 0; i < gp.initializer_size(); ++i) {
        const auto& t = gp.initializer(i);
        const std::string where = ctx + "initializer " + quoteName(t.name());
        if (t.name().empty()) {
            error(ctx + "initializer #" + std::to_string(i), "initializer has an empty name");
            continue;
        }
        if (!checkName(where, "name", t.name())) continue;
        auto data = detail::convertTensor(t, m_tensorCtx, err);
        if (!data) {
            error(where, err);
            continue;
        }
        ir::Value v;
        v.name = t.name();
        v.type = data->type();
        v.data = std::move(data);
        v.isInitializer = true;
        const ir::ValueId id = g.addValue(std::move(v));
        if (id == ir::kNoValue) {
            error(where, "duplicate initializer name");
            continue;
        }
        g.initializers().push_back(id);
    }

    // 2. Graph inputs (an initializer may also be listed: it then stays an initializer with a declared type).
    for (int i = 0; i < gp.input_size(); ++i) {
        const auto& in = gp.input(i);
        const std::string where = ctx + "graph input " + quoteName(in.name());
        if (in.name().empty()) {
            error(ctx + "graph input #" + std::to_string(i), "graph input has an empty name");
            continue;
        }
        if (!checkName(where, "name", in.name())) continue;
        ir::TensorType declared;
        note.clear();
        if (in.has_type() && !detail::convertType(in.type(), declared, err, note)) {
            error(where, err);
            continue;
        }
        if (!note.empty()) m_diags.note(m_file, where, note);
        const ir::ValueId existing = g.findValue(in.name());
        // Subgraph inputs (Loop/Scan bodies) may leave their types to the enclosing node.
        if (!in.has_type() && !outer && existing == ir::kNoValue) {
            error(where, "graph input has no type");
            continue;
        }
        if (existing != ir::kNoValue) {
            ir::Value& v = g.value(existing);
            if (v.isGraphInput) {
                error(where, "duplicate graph input name");
                continue;
            }
            v.isGraphInput = true;
            if (in.has_type()) v.onnxType = declared;
            g.inputs().push_back(existing);
            continue;
        }
        ir::Value v;
        v.name = in.name();
        v.type = declared;
        if (in.has_type()) v.onnxType = declared;
        v.isGraphInput = true;
        g.inputs().push_back(g.addValue(std::move(v)));
    }

    // 3. Node names (empty ones made unique) and output values. Outputs are created for all nodes
    //    before any input is resolved, so a cycle shows up as a cycle and not as a dangling input.
    const int numNodes = gp.node_size();
    std::vector<std::string> names(static_cast<std::size_t>(numNodes));
    std::unordered_set<std::string> taken;
    for (int i = 0; i < numNodes; ++i) {
        const auto& np = gp.node(i);
        if (!np.name().empty()) {
            const std::string where = nodeWhere(ctx, np.name(), np.op_type());
            if (!checkName(where, "node name", np.name())) continue;
            // ONNX does not require unique node names; Tessera keys nodes by name, so a repeated
            // name is renamed below (like an empty one) and reported.
            if (taken.insert(np.name()).second) names[static_cast<std::size_t>(i)] = np.name();
        }
    }
    for (int i = 0; i < numNodes; ++i) {
        auto& name = names[static_cast<std::size_t>(i)];
        if (!name.empty()) continue;
        if (!gp.node(i).name().empty()) {
            const std::string& orig = gp.node(i).name();
            if (!detail::isValidUtf8(orig)) continue;
            std::string candidate = orig + "_" + std::to_string(i);
            for (int k = 1; taken.count(candidate); ++k) candidate = orig + "_" + std::to_string(i) + "_" + std::to_string(k);
            taken.insert(candidate);
            name = candidate;
            m_diags.warning(m_file, nodeWhere(ctx, orig, gp.node(i).op_type()),
                            "duplicate node name; this node (#" + std::to_string(i) + ") is renamed " +
                                quoteName(candidate));
            continue;
        }
        const std::string op = gp.node(i).op_type().empty() ? std::string("Node") : gp.node(i).op_type();
        std::string candidate = op + "_" + std::to_string(i);
        for (int k = 1; taken.count(candidate); ++k) candidate = op + "_" + std::to_string(i) + "_" + std::to_string(k);
        taken.insert(candidate);
        name = candidate;
    }
    for (int i = 0; i < numNodes; ++i) {
        const auto& np = gp.node(i);
        const std::string where = nodeWhere(ctx, names[static_cast<std::size_t>(i)], np.op_type());
        if (np.op_type().empty()) error(where, "node has an empty op_type");
        else checkName(where, "op_type", np.op_type());
        checkName(where, "domain", np.domain());
        for (int k = 0; k < np.output_size(); ++k) {
            const std::string& out = np.output(k);
            if (out.empty()) continue;
            if (!checkName(where, "output", out)) continue;
            const ir::ValueId existing = g.findValue(out);
            if (existing != ir::kNoValue) {
                const ir::Value& v = g.value(existing);
                const char* what = v.isInitializer ? "an initializer" : v.isGraphInput ? "a graph input"
                                                                                       : "the output of another node";
                error(where, "output " + quoteName(out) + " is already defined as " + what +
                                 " (each value must be produced once)");
                continue;
            }
            ir::Value v;
            v.name = out;
            g.addValue(std::move(v));
        }
    }
    if (m_diags.items().size() != errorsBefore && m_diags.hasErrors()) return false;

    // 4. Nodes: resolve inputs (this graph, then enclosing graphs), convert attributes.
    for (int i = 0; i < numNodes; ++i) {
        const auto& np = gp.node(i);
        ir::Node node;
        node.name = names[static_cast<std::size_t>(i)];
        node.opType = np.op_type();
        node.domain = np.domain() == "ai.onnx" ? std::string() : np.domain();
        const std::string where = nodeWhere(ctx, node.name, node.opType);
        bool ok = true;
        for (int k = 0; k < np.input_size(); ++k) {
            const std::string& in = np.input(k);
            if (in.empty()) {
                node.inputs.push_back(ir::kNoValue);
                continue;
            }
            if (!checkName(where, "input", in)) {
                ok = false;
                continue;
            }
            ir::ValueId id = g.findValue(in);
            if (id == ir::kNoValue && outer) {
                // A name from an enclosing graph: keep a producer-less value of that name here,
                // which the verifier resolves through the enclosing graphs (ONNX scoping).
                if (const ir::Value* ov = outer->find(in)) {
                    ir::Value v;
                    v.name = in;
                    v.type = ov->type;
                    v.onnxType = ov->onnxType;
                    id = g.addValue(std::move(v));
                }
            }
            if (id == ir::kNoValue) {
                error(where, "input " + quoteName(in) +
                                 " is not defined (no node, graph input or initializer produces it)");
                ok = false;
                continue;
            }
            node.inputs.push_back(id);
        }
        for (int k = 0; k < np.output_size(); ++k) node.outputs.push_back(np.output(k).empty() ? ir::kNoValue
                                                                                               : g.findValue(np.output(k)));
        std::set<std::string> attrNames;
        for (int k = 0; k < np.attribute_size(); ++k) {
            const auto& a = np.attribute(k);
            if (a.name().empty()) {
                error(where, "attribute #" + std::to_string(k) + " has an empty name");
                ok = false;
                continue;
            }
            if (!checkName(where, "attribute", a.name())) {
                ok = false;
                continue;
            }
            if (!attrNames.insert(a.name()).second) {
                error(where, "duplicate attribute " + quoteName(a.name()));
                ok = false;
                continue;
            }
            ir::Attribute attr;
            if (!convertAttribute(a, attr, g, outer, where, node.name)) {
                ok = false;
                continue;
            }
            node.attributes.emplace_back(a.name(), std::move(attr));
        }
        if (ok) g.addNode(std::move(node));
    }

    // 5. Graph outputs.
    for (int i = 0; i < gp.output_size(); ++i) {
        const auto& o = gp.output(i);
        const std::string where = ctx + "graph output " + quoteName(o.name());
        if (o.name().empty()) {
            error(ctx + "graph output #" + std::to_string(i), "graph output has an empty name");
            continue;
        }
        if (!checkName(where, "name", o.name())) continue;
        ir::TensorType declared;
        note.clear();
        if (o.has_type() && !detail::convertType(o.type(), declared, err, note)) {
            error(where, err);
            continue;
        }
        ir::ValueId id = g.findValue(o.name());
        if (id == ir::kNoValue && outer) {
            if (const ir::Value* ov = outer->find(o.name())) {
                ir::Value v;
                v.name = o.name();
                v.type = ov->type;
                id = g.addValue(std::move(v));
            }
        }
        if (id == ir::kNoValue) {
            error(where, "graph output is not produced by any node, graph input or initializer");
            continue;
        }
        ir::Value& v = g.value(id);
        if (v.isGraphOutput) {
            error(where, "duplicate graph output name");
            continue;
        }
        v.isGraphOutput = true;
        if (o.has_type()) v.onnxType = declared;
        g.outputs().push_back(id);
    }

    // 6. value_info: declared types of intermediate values.
    for (int i = 0; i < gp.value_info_size(); ++i) {
        const auto& vi = gp.value_info(i);
        if (!vi.has_type()) continue;
        const ir::ValueId id = g.findValue(vi.name());
        const std::string where = ctx + "value_info " + quoteName(vi.name());
        ir::TensorType declared;
        note.clear();
        if (!detail::convertType(vi.type(), declared, err, note)) {
            error(where, err);
            continue;
        }
        if (id == ir::kNoValue) continue;  // describes a value no node uses: harmless
        ir::Value& v = g.value(id);
        if (!v.onnxType) v.onnxType = declared;
    }
    g.rebuildIndex();
    return !(m_diags.items().size() != errorsBefore && m_diags.hasErrors());
}

namespace {

/// Counts nodes per op the registry does not know, in a graph and its subgraphs.
void collectUnknownOps(const ir::Graph& g, std::map<std::string, int>& counts, int depth) {
    if (depth > 64) return;
    const auto& reg = ir::OpRegistry::instance();
    for (const auto& n : g.nodes()) {
        if (!reg.find(n.domain, n.opType)) ++counts[n.domain.empty() ? n.opType : n.domain + "::" + n.opType];
        for (const auto& [name, a] : n.attributes) {
            if (a.g) collectUnknownOps(*a.g, counts, depth + 1);
            for (const auto& sub : a.graphs)
                if (sub) collectUnknownOps(*sub, counts, depth + 1);
        }
    }
}

}  // namespace

void Importer::noteUnknownOps(const ir::Graph& g) {
    std::map<std::string, int> counts;
    collectUnknownOps(g, counts, 0);
    for (const auto& [op, n] : counts)
        m_diags.note(m_file, "", "op " + quoteName(op) + " (" + std::to_string(n) + (n == 1 ? " node" : " nodes") +
                                     ") is not in Tessera's op registry: kept as-is with its declared shapes, "
                                     "no shape inference, FLOP count or code generator");
}

void Importer::checkTypeConstraints(const ir::Graph& g, const ir::Model& model, const std::string& ctx) {
    for (const auto& node : g.nodes()) {
        const std::string where = nodeWhere(ctx, node.name, node.opType);
        for (const auto& [attrName, a] : node.attributes) {
            if (a.type == ir::AttrType::Graph && a.g)
                checkTypeConstraints(*a.g, model, "subgraph " + quoteName(attrName) + " of " + where + " > ");
            for (const auto& sub : a.graphs)
                if (sub) checkTypeConstraints(*sub, model, "subgraph " + quoteName(attrName) + " of " + where + " > ");
        }
        auto op = model.opsets.find(node.domain);
        if (op == model.opsets.end()) continue;
        const auto* schema = ::onnx::OpSchemaRegistry::Schema(node.opType, static_cast<int>(op->second),
                                                              node.domain);
        if (!schema) continue;
        const auto& formals = schema->inputs();
        if (formals.empty()) continue;
        std::set<std::string> params;
        for (const auto& p : schema->typeConstraintParams()) params.insert(p.type_param_str);
        // type parameter -> (dtype, formal name, value name) of the first input bound to it
        std::map<std::string, std::tuple<ir::DType, std::string, std::string>> bound;
        for (std::size_t i = 0; i < node.inputs.size(); ++i) {
            const bool variadicTail = i >= formals.size();
            const auto& f = formals[std::min(i, formals.size() - 1)];
            if (variadicTail && f.GetOption() != ::onnx::OpSchema::Variadic) break;
            if (f.GetOption() == ::onnx::OpSchema::Variadic && !f.GetIsHomogeneous()) continue;
            if (!params.count(f.GetTypeStr())) continue;
            const ir::ValueId id = node.inputs[i];
            if (id == ir::kNoValue) continue;
            const ir::Value& v = g.value(id);
            const ir::DType dt = v.type.dtype != ir::DType::Undefined ? v.type.dtype
                                 : v.onnxType                        ? v.onnxType->dtype
                                                                     : ir::DType::Undefined;
            if (dt == ir::DType::Undefined) continue;
            auto [it, inserted] = bound.emplace(f.GetTypeStr(), std::make_tuple(dt, f.GetName(), v.name));
            if (inserted || std::get<0>(it->second) == dt) continue;
            error(where, "input " + quoteName(f.GetName()) + " (" + quoteName(v.name) + ") has dtype " +
                             std::string(ir::dtypeName(dt)) + " but input " + quoteName(std::get<1>(it->second)) +
                             " (" + quoteName(std::get<2>(it->second)) + ") has dtype " +
                             std::string(ir::dtypeName(std::get<0>(it->second))) + "; both must be type " +
                             f.GetTypeStr());
            break;
        }
    }
}

/// Ops whose ONNX 1.12 inference shares the conv/pool/gemm helpers that crash on malformed nodes.
/// If one of them is not in Tessera's registry (so our checks did not vet it), ONNX's inference is skipped.
bool hasUnvettedRiskyOp(const ir::Graph& g, std::string& which) {
    static const std::set<std::string> kRisky = {"Conv",        "ConvInteger", "QLinearConv", "ConvTranspose", "MaxPool",
                                                 "AveragePool", "LpPool",      "MaxUnpool",   "GlobalLpPool",  "Gemm",
                                                 "MatMulInteger", "QLinearMatMul", "MaxRoiPool", "RoiAlign", "Col2Im"};
    const auto& registry = ir::OpRegistry::instance();
    for (const auto& n : g.nodes()) {
        if (n.domain.empty() && kRisky.count(n.opType) && !registry.find("", n.opType)) {
            which = n.opType;
            return true;
        }
        for (const auto& [name, a] : n.attributes) {
            if (a.g && hasUnvettedRiskyOp(*a.g, which)) return true;
            for (const auto& sub : a.graphs)
                if (sub && hasUnvettedRiskyOp(*sub, which)) return true;
        }
    }
    return false;
}

void Importer::runOnnxInference(::onnx::ModelProto& proto, ir::Model& model) {
    if (std::string risky; hasUnvettedRiskyOp(model.graph, risky)) {
        m_diags.note(m_file, "", "ONNX shape inference skipped: op " + risky +
                                     " is not checked by Tessera's registry and ONNX 1.12's inference can crash on it");
        return;
    }
    try {
        ::onnx::ShapeInferenceOptions opts;
        opts.check_type = false;
        opts.error_mode = 0;
        opts.enable_data_propagation = false;
        ::onnx::shape_inference::InferShapes(proto, ::onnx::OpSchemaRegistry::Instance(), opts);
    } catch (const std::exception& e) {
        std::string what = e.what();
        if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
        m_diags.warning(m_file, "", "ONNX shape inference failed: " + what);
        return;
    } catch (...) {
        m_diags.warning(m_file, "", "ONNX shape inference failed");
        return;
    }
    ir::Graph& g = model.graph;
    auto consider = [&](const ::onnx::ValueInfoProto& vi) {
        if (!vi.has_type()) return;
        const ir::ValueId id = g.findValue(vi.name());
        if (id == ir::kNoValue) return;
        ir::Value& v = g.value(id);
        if (v.onnxType) return;  // declared in the file: ir::inferShapes already compared it
        ir::TensorType theirs;
        std::string err, note;
        if (!detail::convertType(vi.type(), theirs, err, note)) return;
        v.onnxType = theirs;
        if (v.type.isDefined() && typesConflict(v.type, theirs))
            m_diags.warning(m_file, "value " + quoteName(v.name),
                            "Tessera infers " + v.type.str() + " but ONNX shape inference gives " + theirs.str());
    };
    for (const auto& vi : proto.graph().value_info()) consider(vi);
    for (const auto& vi : proto.graph().output()) consider(vi);
}

support::Expected<ir::Model> Importer::run(const std::string& bytes, const support::CancelToken* cancel) {
    if (bytes.empty()) {
        error("", "empty file");
        return m_diags;
    }
    static const std::string kLfs = "version https://git-lfs.github.com/spec";
    if (bytes.compare(0, kLfs.size(), kLfs) == 0) {
        error("", "this is a Git LFS pointer, not a model: run `git lfs pull`");
        return m_diags;
    }
    if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
        error("", "model file is over 2 GiB: weights must be stored as external data");
        return m_diags;
    }
    ::onnx::ModelProto proto;
    if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        error("", "not a valid ONNX model (protobuf parse failed)");
        return m_diags;
    }
    if (!proto.has_ir_version() && !proto.has_graph()) {
        error("", "not a valid ONNX model (no ir_version and no graph)");
        return m_diags;
    }
    if (cancelled(cancel)) return m_diags;

    ir::Model model;
    model.irVersion = proto.ir_version();
    model.producerName = proto.producer_name();
    model.producerVersion = proto.producer_version();
    if (model.irVersion < kMinIrVersion || model.irVersion > kNewestReadIrVersion) {
        error("ir_version", "unsupported IR version " + std::to_string(model.irVersion) + " (Tessera reads " +
                                std::to_string(kMinIrVersion) + ".." + std::to_string(kMaxIrVersion) + ", and up to " +
                                std::to_string(kNewestReadIrVersion) + " with a warning)");
        return m_diags;
    }
    if (model.irVersion > kMaxIrVersion)
        m_diags.warning(m_file, "ir_version",
                        "IR version " + std::to_string(model.irVersion) + " is newer than " + std::to_string(kMaxIrVersion) +
                            ", the newest Tessera was written for: read as far as it is understood (an element type "
                            "or field Tessera does not know is reported where the model uses it)");
    for (const auto& op : proto.opset_import()) {
        const std::string domain = op.domain() == "ai.onnx" ? std::string() : op.domain();
        if (!detail::isValidUtf8(domain)) {
            error("opset_import", "domain " + quoteName(domain) + " is not valid UTF-8");
            return m_diags;
        }
        if (model.opsets.count(domain)) {
            error("opset_import", "domain " + quoteName(domain.empty() ? "ai.onnx" : domain) + " is imported twice");
            return m_diags;
        }
        model.opsets[domain] = op.version();
    }
    auto def = model.opsets.find("");
    if (def == model.opsets.end()) {
        error("opset_import", "no opset is imported for the default ONNX domain");
        return m_diags;
    }
    if (def->second < 1 || def->second > kMaxOpset) {
        error("opset_import", "unsupported opset " + std::to_string(def->second) +
                                  " for the default domain (Tessera reads 1.." + std::to_string(kMaxOpset) + ")");
        return m_diags;
    }
    if (!proto.has_graph()) {
        error("graph", "model has no graph");
        return m_diags;
    }
    const bool newerThanLib = model.irVersion > kOnnxLibMaxIr || def->second > kOnnxLibMaxOpset;
    if (newerThanLib) {
        if (def->second > kOnnxLibMaxOpset)
            m_diags.note(m_file, "", "opset " + std::to_string(def->second) +
                                         " is newer than the ONNX 1.12 schemas in this build: checked with "
                                         "Tessera's own op registry only");
        else
            m_diags.note(m_file, "", "IR version " + std::to_string(model.irVersion) +
                                         " is newer than the ONNX 1.12 library in this build: checked with "
                                         "Tessera's own op registry only");
    }
    if (proto.functions_size() > 0)
        m_diags.note(m_file, "", std::to_string(proto.functions_size()) +
                                     " model-local function(s) are kept as opaque ops (not expanded)");

    if (!convertGraph(proto.graph(), model.graph, nullptr, "")) return m_diags;
    if (cancelled(cancel)) return m_diags;

    DiagnosticList verified = ir::verify(model.graph, m_file);
    m_diags.append(verified);
    if (verified.hasErrors()) return m_diags;
    if (cancelled(cancel)) return m_diags;

    if (m_options.runTesseraShapeInference) {
        ir::ShapeInferenceResult inferred = ir::inferShapes(model.graph, m_file);
        m_diags.append(inferred.diagnostics);
        if (inferred.diagnostics.hasErrors()) return m_diags;
    }
    if (cancelled(cancel)) return m_diags;

    // Type-constraint consistency (e.g. Conv's X, W and B share T) from the ONNX schemas; the
    // schemas are only consulted for versions this libonnx knows.
    if (!newerThanLib) {
        const std::size_t before = m_diags.items().size();
        checkTypeConstraints(model.graph, model, "");
        if (m_diags.items().size() != before && m_diags.hasErrors()) return m_diags;
    }

    // Debian's onnx 1.12 inference crashes on some malformed nodes its checker accepts, so it runs
    // only after our verifier and inference found nothing wrong, and only on versions it knows.
    if (m_options.runOnnxShapeInference && m_options.runTesseraShapeInference && !newerThanLib)
        runOnnxInference(proto, model);

    // Values our registry could not type (unknown ops) keep the type the file or ONNX gave them.
    for (std::size_t i = 0; i < model.graph.numValues(); ++i) {
        ir::Value& v = model.graph.value(static_cast<ir::ValueId>(i));
        if (!v.type.isDefined() && v.onnxType) v.type = *v.onnxType;
    }
    noteUnknownOps(model.graph);
    return support::Expected<ir::Model>(std::move(model), std::move(m_diags));
}

}  // namespace

support::Expected<ir::Model> importModel(const std::string& path, const ImportOptions& options,
                                         const support::CancelToken* cancel) {
    DiagnosticList diags;
    try {
        std::error_code ec;
        const fs::path p(path);
        const auto st = fs::status(p, ec);
        if (ec || !fs::exists(st)) {
            diags.error(path, "", "cannot open file: no such file");
            return diags;
        }
        if (fs::is_directory(st)) {
            diags.error(path, "", "is a directory, not a model file");
            return diags;
        }
        if (!fs::is_regular_file(st)) {
            diags.error(path, "", "not a regular file");
            return diags;
        }
        const auto size = fs::file_size(p, ec);
        if (ec) {
            diags.error(path, "", "cannot read the file size");
            return diags;
        }
        if (size == 0) {
            diags.error(path, "", "empty file");
            return diags;
        }
        if (static_cast<std::int64_t>(size) > options.maxFileBytes) {
            diags.error(path, "", "file is " + std::to_string(size) + " bytes, above the limit of " +
                                      std::to_string(options.maxFileBytes));
            return diags;
        }
        if (size > static_cast<std::uintmax_t>(INT_MAX)) {
            // protobuf cannot parse a message this large; do not read it into memory first.
            diags.error(path, "", "model file is over 2 GiB: weights must be stored as external data");
            return diags;
        }
        std::ifstream in(p, std::ios::binary);
        if (!in) {
            diags.error(path, "", "cannot open file");
            return diags;
        }
        std::string bytes(static_cast<std::size_t>(size), '\0');
        in.read(bytes.data(), static_cast<std::streamsize>(size));
        if (in.gcount() != static_cast<std::streamsize>(size)) {
            diags.error(path, "", "short read (file changed while reading?)");
            return diags;
        }
        std::string baseDir = p.parent_path().string();
        if (baseDir.empty()) baseDir = ".";
        Importer importer(path, baseDir, options);
        auto result = importer.run(bytes, cancel);
        if (result.ok()) result->sourcePath = path;
        return result;
    } catch (const std::bad_alloc&) {
        diags.error(path, "", "out of memory while importing");
    } catch (const std::exception& e) {
        diags.error(path, "", std::string("internal error while importing: ") + e.what());
    }
    return diags;
}

support::Expected<ir::Model> importModelFromBytes(const std::string& bytes, const std::string& displayName,
                                                  const std::string& baseDir, const ImportOptions& options) {
    try {
        Importer importer(displayName, baseDir, options);
        return importer.run(bytes, nullptr);
    } catch (const std::bad_alloc&) {
        DiagnosticList d;
        d.error(displayName, "", "out of memory while importing");
        return d;
    } catch (const std::exception& e) {
        DiagnosticList d;
        d.error(displayName, "", std::string("internal error while importing: ") + e.what());
        return d;
    }
}

}  // namespace tessera::frontend::onnx
