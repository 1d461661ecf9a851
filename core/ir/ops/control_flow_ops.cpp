// Control-flow ops: If, Loop, Scan (ONNX operator specs, opsets 11-21). Their bodies stay subgraph
// attributes (never lowered); shape inference reads the body outputs' types, which
// ir::inferShapes has already inferred (bodies are visited before their node).
//
// FLOPs: unknown (nullopt) — the trip count and the branch taken are known only at run time.
#include <algorithm>

#include "core/ir/ops/op_helpers.h"

namespace tessera::ir::ops {

namespace {

const Graph* bodyOf(const InferContext& c, const char* name) {
    const Attribute* a = c.node.attr(name);
    return a && a->type == AttrType::Graph && a->g ? a->g.get() : nullptr;
}

std::vector<TensorType> bodyOutputTypes(const Graph& g) {
    std::vector<TensorType> out;
    for (ValueId v : g.outputs()) {
        const Value& val = g.value(v);
        out.push_back(val.type.isDefined() || !val.onnxType ? val.type : *val.onnxType);
    }
    return out;
}

/// The type both branches agree on: dtype must match; extents that differ become unknown.
std::optional<TensorType> mergeBranchTypes(const TensorType& a, const TensorType& b, std::string& error) {
    if (a.dtype != DType::Undefined && b.dtype != DType::Undefined && a.dtype != b.dtype) {
        error = "then_branch gives " + a.str() + " but else_branch gives " + b.str();
        return std::nullopt;
    }
    TensorType t;
    t.dtype = a.dtype != DType::Undefined ? a.dtype : b.dtype;
    if (!a.shape.rankKnown() || !b.shape.rankKnown() || a.shape.rank() != b.shape.rank()) {
        t.shape = Shape::unknownRank();
        return t;
    }
    std::vector<Dim> dims;
    for (std::size_t i = 0; i < a.shape.rank(); ++i) dims.push_back(a.shape[i] == b.shape[i] ? a.shape[i] : Dim::unknown());
    t.shape = Shape(std::move(dims));
    return t;
}

InferResult inferIf(const InferContext& c) {
    const Graph* thenG = bodyOf(c, "then_branch");
    const Graph* elseG = bodyOf(c, "else_branch");
    if (!thenG || !elseG) return fail("If needs graph attributes 'then_branch' and 'else_branch'");
    const auto& cond = inputType(c, 0);
    if (cond.dtype != DType::Undefined && cond.dtype != DType::Bool)
        return fail("condition must be bool, got " + cond.str());
    if (cond.shape.isStatic() && numel(cond).value_or(1) != 1)
        return fail("condition must have exactly one element, got " + cond.str());
    const auto thenT = bodyOutputTypes(*thenG), elseT = bodyOutputTypes(*elseG);
    if (thenT.size() != elseT.size())
        return fail("then_branch has " + std::to_string(thenT.size()) + " outputs but else_branch has " +
                    std::to_string(elseT.size()));
    if (thenT.size() != c.node.outputs.size())
        return fail("the branches have " + std::to_string(thenT.size()) + " outputs but the node has " +
                    std::to_string(c.node.outputs.size()));
    InferResult r;
    for (std::size_t i = 0; i < thenT.size(); ++i) {
        std::string error;
        auto t = mergeBranchTypes(thenT[i], elseT[i], error);
        if (!t) return fail("output " + std::to_string(i) + ": " + error);
        r.outputs.push_back(*t);
    }
    return r;
}

/// Adds a leading dimension (the iteration axis) to a per-iteration type.
TensorType stacked(const TensorType& t, Dim lead) {
    if (!t.shape.rankKnown()) return TensorType{t.dtype, Shape::unknownRank()};
    std::vector<Dim> dims{std::move(lead)};
    dims.insert(dims.end(), t.shape.dims().begin(), t.shape.dims().end());
    return TensorType{t.dtype, Shape(std::move(dims))};
}

// Loop(M?, cond?, v_initial...) -> (v_final..., scan_outputs...).
// Body: (iteration_num, cond, v...) -> (cond, v..., scan...).
InferResult inferLoop(const InferContext& c) {
    const Graph* body = bodyOf(c, "body");
    if (!body) return fail("Loop needs a graph attribute 'body'");
    const std::size_t nCarried = c.node.inputs.size() >= 2 ? c.node.inputs.size() - 2 : 0;
    const auto bodyT = bodyOutputTypes(*body);
    if (bodyT.size() < 1 + nCarried)
        return fail("body has " + std::to_string(bodyT.size()) + " outputs, needs at least 1 + " +
                    std::to_string(nCarried) + " (condition and loop-carried values)");
    const std::size_t nScan = bodyT.size() - 1 - nCarried;
    if (c.node.outputs.size() != nCarried + nScan)
        return fail("node has " + std::to_string(c.node.outputs.size()) + " outputs, body gives " +
                    std::to_string(nCarried) + " loop-carried + " + std::to_string(nScan) + " scan outputs");
    // Trip count: M when constant and there is no condition input.
    Dim trips = Dim::unknown();
    if (hasInput(c, 0) && !hasInput(c, 1)) {
        if (auto m = constantInts(c, 0); m && m->size() == 1 && (*m)[0] >= 0) trips = Dim::known((*m)[0]);
    }
    InferResult r;
    for (std::size_t i = 0; i < nCarried; ++i) {
        const TensorType& init = inputType(c, 2 + i);
        r.outputs.push_back(init.isDefined() ? init : bodyT[1 + i]);
    }
    for (std::size_t i = 0; i < nScan; ++i) r.outputs.push_back(stacked(bodyT[1 + nCarried + i], trips));
    return r;
}

/// Scan-8 (opset 8): an optional sequence_lens input first (the node has one input more than
/// the body), a batch axis 0 on every state and scan tensor, the sequence on axis 1.
InferResult inferScan8(const InferContext& c, const Graph& body, std::size_t nScanIn) {
    if (c.node.inputs.size() < 1 + nScanIn) return fail("num_scan_inputs is too large for Scan-8");
    const std::size_t nState = c.node.inputs.size() - 1 - nScanIn;
    const auto bodyT = bodyOutputTypes(body);
    if (bodyT.size() < nState) return fail("body has fewer outputs than state variables");
    const std::size_t nScanOut = bodyT.size() - nState;
    if (c.node.outputs.size() != nState + nScanOut)
        return fail("node has " + std::to_string(c.node.outputs.size()) + " outputs, body gives " +
                    std::to_string(bodyT.size()));
    Dim batch = Dim::unknown(), seq = Dim::unknown();
    const TensorType& first = inputType(c, 1 + nState);
    if (first.shape.rankKnown() && first.shape.rank() >= 2) {
        batch = first.shape[0];
        seq = first.shape[1];
    }
    InferResult r;
    for (std::size_t i = 0; i < nState; ++i) {
        const TensorType& init = inputType(c, 1 + i);
        r.outputs.push_back(init.isDefined() ? init : TensorType{bodyT[i].dtype, Shape::unknownRank()});
    }
    for (std::size_t i = 0; i < nScanOut; ++i) {
        const TensorType& per = bodyT[nState + i];
        if (!per.shape.rankKnown()) {
            r.outputs.push_back(TensorType{per.dtype, Shape::unknownRank()});
            continue;
        }
        std::vector<Dim> dims{batch, seq};
        for (const Dim& d : per.shape.dims()) dims.push_back(d);
        r.outputs.push_back(TensorType{per.dtype, Shape(std::move(dims))});
    }
    return r;
}

// Scan(state..., scan_inputs...) -> (final_state..., scan_outputs...), opset 9+ form; the opset-8
// form (one input more than the body takes) goes to inferScan8.
InferResult inferScan(const InferContext& c) {
    const Graph* body = bodyOf(c, "body");
    if (!body) return fail("Scan needs a graph attribute 'body'");
    const std::int64_t nScanIn = c.node.attrInt("num_scan_inputs", -1);
    if (nScanIn < 1 || static_cast<std::size_t>(nScanIn) > c.node.inputs.size())
        return fail("num_scan_inputs must be in 1.." + std::to_string(c.node.inputs.size()));
    if (c.node.inputs.size() == body->runtimeInputs().size() + 1)
        return inferScan8(c, *body, static_cast<std::size_t>(nScanIn));
    const std::size_t nState = c.node.inputs.size() - static_cast<std::size_t>(nScanIn);
    const auto bodyT = bodyOutputTypes(*body);
    if (bodyT.size() < nState) return fail("body has fewer outputs than state variables");
    const std::size_t nScanOut = bodyT.size() - nState;
    if (c.node.outputs.size() != nState + nScanOut)
        return fail("node has " + std::to_string(c.node.outputs.size()) + " outputs, body gives " +
                    std::to_string(bodyT.size()));
    // Sequence length: extent of the first scan input along its scan axis.
    Dim seq = Dim::unknown();
    const TensorType& first = inputType(c, nState);
    const auto inAxes = c.node.attrInts("scan_input_axes");
    if (first.shape.rankKnown() && first.shape.rank() > 0) {
        const auto axis = normalizeAxis(inAxes.empty() ? 0 : inAxes[0], static_cast<std::int64_t>(first.shape.rank()));
        if (!axis) return fail("scan_input_axes[0] is out of range for " + first.str());
        seq = first.shape[static_cast<std::size_t>(*axis)];
    }
    const auto outAxes = c.node.attrInts("scan_output_axes");
    InferResult r;
    for (std::size_t i = 0; i < nState; ++i) {
        const TensorType& init = inputType(c, i);
        r.outputs.push_back(init.isDefined() ? init : bodyT[i]);
    }
    for (std::size_t i = 0; i < nScanOut; ++i) {
        const TensorType& per = bodyT[nState + i];
        if (!per.shape.rankKnown()) {
            r.outputs.push_back(TensorType{per.dtype, Shape::unknownRank()});
            continue;
        }
        const auto rank = static_cast<std::int64_t>(per.shape.rank()) + 1;
        const auto axis = normalizeAxis(i < outAxes.size() ? outAxes[i] : 0, rank);
        if (!axis) return fail("scan_output_axes[" + std::to_string(i) + "] is out of range");
        std::vector<Dim> dims = per.shape.dims();
        dims.insert(dims.begin() + *axis, seq);
        r.outputs.push_back(TensorType{per.dtype, Shape(std::move(dims))});
    }
    return r;
}

OpSchema controlFlow(std::string op, int minIn, int maxIn, ShapeFn fn, std::string summary) {
    OpSchema s;
    s.opType = std::move(op);
    s.category = OpCategory::ControlFlow;
    s.minInputs = minIn;
    s.maxInputs = maxIn;
    s.minOutputs = 1;
    s.maxOutputs = -1;
    s.inferShapes = std::move(fn);
    s.flops = [](const InferContext&, const std::vector<TensorType>&) -> std::optional<std::int64_t> {
        return std::nullopt;
    };
    s.summary = std::move(summary);
    return s;
}

}  // namespace

void registerControlFlowOps(std::vector<OpSchema>& out) {
    {
        OpSchema s = controlFlow("If", 1, 1, inferIf, "runs then_branch or else_branch on a bool condition");
        s.attributes = {attr("then_branch", AttrType::Graph, true), attr("else_branch", AttrType::Graph, true)};
        out.push_back(std::move(s));
    }
    {
        OpSchema s = controlFlow("Loop", 2, -1, inferLoop, "runs body while cond and i < M; carries values, stacks scan outputs");
        s.attributes = {attr("body", AttrType::Graph, true)};
        out.push_back(std::move(s));
    }
    {
        // minInputs 0: Scan-8's first input (sequence_lens) may be empty; num_scan_inputs bounds the rest.
        OpSchema s = controlFlow("Scan", 0, -1, inferScan, "runs body over slices of the scan inputs, carrying state");
        s.attributes = {attr("body", AttrType::Graph, true), attr("num_scan_inputs", AttrType::Int, true),
                        attr("directions", AttrType::Ints),  // Scan-8
                        attr("scan_input_directions", AttrType::Ints), attr("scan_output_directions", AttrType::Ints),
                        attr("scan_input_axes", AttrType::Ints), attr("scan_output_axes", AttrType::Ints)};
        out.push_back(std::move(s));
    }
}

}  // namespace tessera::ir::ops
