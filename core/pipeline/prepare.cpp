#include "core/pipeline/prepare.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/eval/reference_interpreter.h"
#include "core/ir/shape_inference.h"

namespace tessera::pipeline {

namespace {

std::string dimsStr(const std::vector<std::int64_t>& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
}

bool hasSubgraph(const ir::Node& n) {
    return std::any_of(n.attributes.begin(), n.attributes.end(), [](const auto& a) {
        return a.second.type == ir::AttrType::Graph || a.second.type == ir::AttrType::Graphs;
    });
}

bool isConstant(const ir::Graph& g, ir::ValueId v) {
    return v == ir::kNoValue || static_cast<bool>(g.value(v).data);
}

/// Replaces every If whose condition is a constant by the nodes of the branch it takes (values
/// local to the branch renamed "<If name>/<name>" where the name is taken; the branch's outputs
/// written straight into the If's outputs, through an Identity where a branch output is not
/// computed in the branch). Branches holding subgraphs of their own are left alone. Returns the
/// number of Ifs replaced; value ids of `g` are preserved (new values are appended).
int inlineConstantIfs(ir::Graph& g) {
    int inlined = 0;
    std::vector<ir::Node> nodes;
    bool changed = false;
    for (std::size_t ni = 0; ni < g.numNodes(); ++ni) {
        const ir::Node& n = g.node(static_cast<ir::NodeId>(ni));
        const ir::Graph* branch = nullptr;
        if (n.opType == "If" && (n.domain.empty() || n.domain == "ai.onnx") && n.inputs.size() == 1 &&
            n.inputs[0] != ir::kNoValue && g.value(n.inputs[0]).data && g.value(n.inputs[0]).data->numElements() == 1) {
            const bool cond = g.value(n.inputs[0]).data->elementAsDouble(0) != 0.0;
            const ir::Attribute* a = n.attr(cond ? "then_branch" : "else_branch");
            if (a && a->type == ir::AttrType::Graph && a->g) branch = a->g.get();
        }
        if (branch && (branch->outputs().size() != n.outputs.size() ||
                       std::any_of(branch->nodes().begin(), branch->nodes().end(),
                                   [](const ir::Node& bn) { return hasSubgraph(bn); })))
            branch = nullptr;
        if (!branch) {
            nodes.push_back(n);
            continue;
        }
        changed = true;
        ++inlined;
        std::map<ir::ValueId, ir::ValueId> local;  // branch value -> value of g
        for (std::size_t o = 0; o < n.outputs.size(); ++o) {
            const ir::ValueId bo = branch->outputs()[o];
            if (n.outputs[o] != ir::kNoValue && branch->producer(bo) != ir::kNoNode && !local.count(bo))
                local[bo] = n.outputs[o];
        }
        auto mapped = [&](ir::ValueId bv) -> ir::ValueId {
            if (bv == ir::kNoValue) return ir::kNoValue;
            if (auto it = local.find(bv); it != local.end()) return it->second;
            const ir::Value& v = branch->value(bv);
            const bool inner = branch->producer(bv) != ir::kNoNode || v.isInitializer;
            if (!inner) return g.findValue(v.name);  // read from the enclosing graph (ONNX scoping)
            ir::Value nv = v;
            nv.isGraphInput = nv.isGraphOutput = false;
            std::string name = v.name;
            for (int k = 1; g.findValue(name) != ir::kNoValue; ++k)
                name = n.name + "/" + v.name + (k > 1 ? "_" + std::to_string(k) : "");
            nv.name = name;
            const ir::ValueId id = g.addValue(std::move(nv));
            if (g.value(id).isInitializer) g.initializers().push_back(id);
            local[bv] = id;
            return id;
        };
        for (const ir::Node& bn : branch->nodes()) {
            ir::Node copy = bn;
            copy.name = n.name + "/" + bn.name;
            for (auto& v : copy.inputs) v = mapped(v);
            for (auto& v : copy.outputs) v = mapped(v);
            nodes.push_back(std::move(copy));
        }
        for (std::size_t o = 0; o < n.outputs.size(); ++o) {
            const ir::ValueId bo = branch->outputs()[o];
            if (n.outputs[o] == ir::kNoValue) continue;
            if (branch->producer(bo) != ir::kNoNode && local.at(bo) == n.outputs[o]) continue;
            ir::Node id;
            id.opType = "Identity";
            id.name = n.name + "/output_" + std::to_string(o);
            id.inputs = {mapped(bo)};
            id.outputs = {n.outputs[o]};
            nodes.push_back(std::move(id));
        }
    }
    if (!changed) return 0;
    ir::Graph out;
    out.name = g.name;
    out.docString = g.docString;
    for (const ir::Value& v : g.values()) out.addValue(v);
    for (ir::Node& n : nodes) out.addNode(std::move(n));
    out.inputs() = g.inputs();
    out.outputs() = g.outputs();
    out.initializers() = g.initializers();
    out.rebuildIndex();
    g = std::move(out);
    return inlined;
}

}  // namespace

bool isShapeOperand(const std::string& op, std::size_t slot) {
    if (op == "Reshape" || op == "Expand" || op == "Tile" || op == "Squeeze" || op == "Unsqueeze" || op == "Split" ||
        op == "TopK" || op == "Upsample")
        return slot == 1;
    if (op == "Slice") return slot >= 1 && slot <= 4;
    if (op == "Pad") return slot >= 1 && slot <= 3;
    if (op == "Resize") return slot >= 1 && slot <= 3;
    if (op == "Dropout") return slot == 1 || slot == 2;
    if (op == "Trilu") return slot == 1;  // the diagonal k, folded into the kernel
    if (op == "ConstantOfShape") return slot == 0;
    if (op == "Range") return slot <= 2;
    if (op.rfind("Reduce", 0) == 0) return slot == 1;
    return false;
}

bool feedsShapeOperand(const ir::Graph& g, ir::ValueId v) {
    for (ir::NodeId c : g.consumers(v)) {
        const ir::Node& n = g.node(c);
        for (std::size_t s = 0; s < n.inputs.size(); ++s)
            if (n.inputs[s] == v && isShapeOperand(n.opType, s)) return true;
    }
    return false;
}

support::DiagnosticList checkFedInput(const ir::Graph& g, ir::ValueId v, const ir::TensorData& fed,
                                      std::vector<std::pair<std::string, std::int64_t>>& bindings,
                                      const std::string& file) {
    support::DiagnosticList diags;
    const ir::Value& val = g.value(v);
    const std::string where = "input '" + val.name + "'";
    const ir::TensorType& t = val.type;
    const std::string got = std::string(ir::dtypeName(fed.dtype)) + dimsStr(fed.dims);
    if (!fed.sizeConsistent() && !fed.isShapeOnly()) {
        diags.error(file, where, "data size does not match its shape " + got);
        return diags;
    }
    if (t.dtype != ir::DType::Undefined && t.dtype != fed.dtype) {
        diags.error(file, where, "expected " + t.str() + ", got " + got + " (dtype differs)");
        return diags;
    }
    if (!t.shape.rankKnown()) return diags;
    if (t.shape.rank() != fed.dims.size()) {
        diags.error(file, where, "expected " + t.str() + ", got " + got + " (rank differs)");
        return diags;
    }
    for (std::size_t d = 0; d < fed.dims.size(); ++d) {
        const ir::Dim& dim = t.shape[d];
        if (dim.isKnown()) {
            if (dim.value != fed.dims[d]) {
                diags.error(file, where,
                            "expected " + t.str() + ", got " + got + " (dim " + std::to_string(d) + " is " +
                                std::to_string(fed.dims[d]) + ", not " + std::to_string(dim.value) + ")");
                return diags;
            }
        } else if (!dim.symbol.empty()) {
            auto it = std::find_if(bindings.begin(), bindings.end(), [&](const auto& b) { return b.first == dim.symbol; });
            if (it == bindings.end()) {
                bindings.emplace_back(dim.symbol, fed.dims[d]);
            } else if (it->second != fed.dims[d]) {
                diags.error(file, where,
                            "expected " + t.str() + ", got " + got + " (dim '" + dim.symbol + "' is already " +
                                std::to_string(it->second) + " from another input)");
                return diags;
            }
        }
    }
    return diags;
}

ir::Graph singleNodeGraph(const ir::Graph& g, ir::NodeId nid) {
    const ir::Node& n = g.node(nid);
    ir::Graph sub;
    sub.name = n.name;
    ir::Node copy = n;
    auto addInput = [&](ir::ValueId v) {
        ir::ValueId existing = sub.findValue(g.value(v).name);
        if (existing != ir::kNoValue) return existing;
        ir::Value val = g.value(v);
        val.isGraphOutput = false;
        const bool constant = static_cast<bool>(val.data);
        val.isInitializer = constant;
        val.isGraphInput = !constant;
        const ir::ValueId id = sub.addValue(val);
        if (constant)
            sub.initializers().push_back(id);
        else
            sub.inputs().push_back(id);
        return id;
    };
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
        if (n.inputs[i] != ir::kNoValue) copy.inputs[i] = addInput(n.inputs[i]);
    // Values its If/Loop/Scan bodies read by name become inputs of the single-node graph too.
    for (ir::ValueId v : eval::subgraphInputs(g, nid)) addInput(v);
    for (std::size_t i = 0; i < n.outputs.size(); ++i) {
        const ir::ValueId v = n.outputs[i];
        if (v == ir::kNoValue) continue;
        ir::Value val = g.value(v);
        val.isGraphInput = val.isInitializer = false;
        val.isGraphOutput = true;
        val.data.reset();
        const ir::ValueId id = sub.addValue(val);
        copy.outputs[i] = id;
        sub.outputs().push_back(id);
    }
    sub.addNode(std::move(copy));
    return sub;
}

ir::Graph groupGraph(const ir::Graph& g, const std::vector<ir::NodeId>& nodes, const std::vector<ir::ValueId>& outputs) {
    if (nodes.size() == 1 && outputs.size() == g.node(nodes[0]).outputs.size()) return singleNodeGraph(g, nodes[0]);
    ir::Graph sub;
    sub.name = nodes.empty() ? std::string() : g.node(nodes.front()).name;
    std::map<ir::ValueId, ir::ValueId> mapped;  // value of g -> value of sub
    auto valueOf = [&](ir::ValueId v, bool produced) {
        auto it = mapped.find(v);
        if (it != mapped.end()) return it->second;
        ir::Value val = g.value(v);
        val.isGraphOutput = false;
        ir::ValueId id;
        if (produced) {
            val.isGraphInput = val.isInitializer = false;
            val.data.reset();
            id = sub.addValue(val);
        } else {
            const bool constant = static_cast<bool>(val.data);
            val.isInitializer = constant;
            val.isGraphInput = !constant;
            id = sub.addValue(val);
            if (constant)
                sub.initializers().push_back(id);
            else
                sub.inputs().push_back(id);
        }
        mapped[v] = id;
        return id;
    };
    std::set<ir::ValueId> producedHere;
    for (ir::NodeId n : nodes)
        for (ir::ValueId v : g.node(n).outputs)
            if (v != ir::kNoValue) producedHere.insert(v);
    for (ir::NodeId n : nodes) {
        ir::Node copy = g.node(n);
        for (std::size_t i = 0; i < copy.inputs.size(); ++i)
            if (copy.inputs[i] != ir::kNoValue) copy.inputs[i] = valueOf(copy.inputs[i], producedHere.count(copy.inputs[i]) > 0);
        for (ir::ValueId v : eval::subgraphInputs(g, n)) valueOf(v, producedHere.count(v) > 0);
        for (std::size_t i = 0; i < copy.outputs.size(); ++i)
            if (copy.outputs[i] != ir::kNoValue) copy.outputs[i] = valueOf(copy.outputs[i], true);
        sub.addNode(std::move(copy));
    }
    for (ir::ValueId v : outputs) {
        auto it = mapped.find(v);
        if (it == mapped.end()) continue;
        sub.value(it->second).isGraphOutput = true;
        sub.outputs().push_back(it->second);
    }
    return sub;
}

ir::Graph filterNodes(const ir::Graph& g, const std::vector<bool>& keep) {
    ir::Graph out;
    out.name = g.name;
    out.docString = g.docString;
    for (const ir::Value& v : g.values()) out.addValue(v);
    for (std::size_t i = 0; i < g.numNodes(); ++i)
        if (keep[i]) out.addNode(g.node(static_cast<ir::NodeId>(i)));
    out.inputs() = g.inputs();
    out.outputs() = g.outputs();
    out.initializers() = g.initializers();
    out.rebuildIndex();
    return out;
}

support::Expected<ir::Model> specialiseModel(const ir::Model& model, const std::vector<ir::TensorData>& runtimeInputs,
                                             SpecialiseStats* stats, const support::CancelToken* cancel,
                                             std::vector<std::size_t>* keptInputs) {
    support::DiagnosticList diags;
    const std::string& file = model.sourcePath;
    ir::Model m = model;
    ir::Graph& g = m.graph;
    const auto rin = g.runtimeInputs();
    if (rin.size() != runtimeInputs.size()) {
        diags.error(file, "graph inputs",
                    "the model has " + std::to_string(rin.size()) + " runtime inputs, " +
                        std::to_string(runtimeInputs.size()) + " were given");
        return diags;
    }
    std::vector<std::pair<std::string, std::int64_t>> bindings;
    for (std::size_t i = 0; i < rin.size(); ++i) diags.append(checkFedInput(g, rin[i], runtimeInputs[i], bindings, file));
    if (diags.hasErrors()) return diags;
    for (std::size_t i = 0; i < rin.size(); ++i) {
        ir::Value& v = g.value(rin[i]);
        v.type.dtype = runtimeInputs[i].dtype;
        v.type.shape = ir::Shape::ofKnown(runtimeInputs[i].dims);
    }
    // Shape operands fed at run time become constants (the kernels are specialised to them).
    int bound = 0;
    std::vector<bool> isBound(rin.size(), false);
    for (std::size_t i = 0; i < rin.size(); ++i) {
        if (!feedsShapeOperand(g, rin[i])) continue;
        if (runtimeInputs[i].isShapeOnly()) {
            diags.error(file, "input '" + g.value(rin[i]).name + "'",
                        "its values decide shapes (a shape operand), but only its shape was given");
            return diags;
        }
        ir::Value& v = g.value(rin[i]);
        v.data = std::make_shared<const ir::TensorData>(runtimeInputs[i]);
        v.isInitializer = true;
        g.initializers().push_back(rin[i]);
        isBound[i] = true;
        ++bound;
    }
    if (keptInputs) {
        keptInputs->clear();
        for (std::size_t i = 0; i < rin.size(); ++i)
            if (!isBound[i]) keptInputs->push_back(i);
    }
    // Shapes and constants are propagated together, node by node in topological order: a node
    // is folded right after its outputs were typed, so the nodes after it are typed with the
    // folded values (Shape -> Gather -> Concat -> Reshape gives the Reshape a concrete shape,
    // which the next Shape reads in turn).
    std::vector<bool> keep;
    int folded = 0;
    eval::ReferenceOptions ropts;
    ropts.opset = m.defaultOpset();
    ropts.file = file;
    bool cancelled = false;
    auto setConstant = [](ir::Graph& gg, ir::ValueId v, ir::TensorData data) {
        ir::Value& val = gg.value(v);
        val.data = std::make_shared<const ir::TensorData>(std::move(data));
        val.type.dtype = val.data->dtype;
        val.type.shape = ir::Shape::ofKnown(val.data->dims);
        val.isInitializer = true;
        gg.initializers().push_back(v);
    };
    auto foldNode = [&](ir::Graph& gg, ir::NodeId id) {
        if (cancelled || (cancel && cancel->isCancelled())) {
            cancelled = true;
            return;
        }
        const ir::Node& n = gg.node(id);
        if (hasSubgraph(n) || n.outputs.empty() || n.outputs[0] == ir::kNoValue) return;
        // Shape and Size only read their input's shape: once it is known they are constants,
        // whether or not the input's values are.
        if ((n.opType == "Shape" || n.opType == "Size") && (n.domain.empty() || n.domain == "ai.onnx") &&
            n.inputs.size() == 1 && n.inputs[0] != ir::kNoValue) {
            const auto dims = gg.value(n.inputs[0]).type.shape.knownDims();
            if (!dims) return;
            ir::TensorData out;
            if (n.opType == "Size") {
                std::int64_t count = 1;
                for (std::int64_t d : *dims) count *= d;
                out = ir::TensorData::fromInts({count}, {});
            } else {
                const auto rank = static_cast<std::int64_t>(dims->size());
                auto clampAxis = [rank](std::int64_t a) { return std::clamp(a < 0 ? a + rank : a, std::int64_t{0}, rank); };
                const std::int64_t b = clampAxis(n.attrInt("start", 0));
                const std::int64_t e = clampAxis(n.attrInt("end", rank));
                std::vector<std::int64_t> sel;
                for (std::int64_t i = b; i < e; ++i) sel.push_back((*dims)[static_cast<std::size_t>(i)]);
                const auto len = static_cast<std::int64_t>(sel.size());
                out = ir::TensorData::fromInts(sel, {len});
            }
            setConstant(gg, n.outputs[0], std::move(out));
            keep[static_cast<std::size_t>(id)] = false;
            ++folded;
            return;
        }
        if (!std::all_of(n.inputs.begin(), n.inputs.end(), [&](ir::ValueId v) { return isConstant(gg, v); })) return;
        ir::Graph sub = singleNodeGraph(gg, id);
        auto r = eval::evaluate(sub, {}, ropts, cancel);
        // Not every op has a reference implementation; such a node simply stays a kernel.
        if (!r.ok()) return;
        for (std::size_t i = 0, k = 0; i < n.outputs.size(); ++i) {
            const ir::ValueId v = n.outputs[i];
            if (v == ir::kNoValue) continue;
            setConstant(gg, v, std::move((*r)[k++]));
        }
        keep[static_cast<std::size_t>(id)] = false;
        ++folded;
    };
    // An If whose condition folded to a constant is replaced by the branch it takes, and the
    // graph is folded again (the branch may hold shape arithmetic of its own); a few rounds at
    // most, as nested constant Ifs surface one level per round.
    for (int round = 0; round < 8; ++round) {
        if (!g.topologicalOrder()) {
            diags.error(file, "graph", "the graph has a cycle");
            return diags;
        }
        keep.assign(g.numNodes(), true);
        const int before = folded;
        auto inferred = ir::inferShapes(g, file, foldNode);
        if (cancelled) {
            diags.error(file, "constant folding", "cancelled");
            return diags;
        }
        for (const auto& d : inferred.diagnostics.items())
            if (d.severity == support::Severity::Error) diags.add(d);
        if (diags.hasErrors()) return diags;
        if (folded > before) g = filterNodes(g, keep);
        const int inlined = inlineConstantIfs(g);
        folded += inlined;
        if (inlined == 0) {
            if (folded > before) {
                auto again = ir::inferShapes(g, file);
                for (const auto& d : again.diagnostics.items())
                    if (d.severity == support::Severity::Error) diags.add(d);
                if (diags.hasErrors()) return diags;
            }
            break;
        }
    }
    if (stats) {
        stats->foldedNodes = folded;
        stats->boundInputs = bound;
    }
    return m;
}

}  // namespace tessera::pipeline
