// Reference implementations of the ONNX control-flow ops If, Loop and Scan (see
// core/eval/reference_interpreter.h for the semantics every op follows). Bodies run through
// runSubgraph(), which resolves the names a body does not define in the enclosing scopes.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/eval/reference_kernels.h"

namespace tessera::eval::refimpl {

namespace {

const ir::Graph& graphAttr(const Node& n, const std::string& name) {
    const ir::Attribute* a = n.attr(name);
    if (!a || a->type != ir::AttrType::Graph || !a->g) fail("graph attribute '" + name + "' is required");
    return *a->g;
}

BufPtr scalarBuf(DType t, double x) {
    auto b = std::make_shared<Buf>();
    b->dtype = t;
    b->v.assign(1, x);
    return b;
}

/// `b` at position `idx` of axis `axis`, that axis removed.
BufPtr sliceAt(Ctx& c, const Buf& b, std::size_t axis, std::int64_t idx) {
    Dims dims = b.dims;
    const std::int64_t len = dims[axis];
    dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(axis));
    auto r = c.make(dims, b.dtype);
    const std::int64_t outer = product(b.dims, 0, axis), inner = product(b.dims, axis + 1, b.dims.size());
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i)
            r->v[static_cast<std::size_t>(o * inner + i)] = b.v[static_cast<std::size_t>((o * len + idx) * inner + i)];
    return r;
}

/// The per-iteration values of one scan output, stacked along a new axis at the end.
struct Stack {
    std::string what;  ///< for messages, e.g. "scan output 0"
    std::vector<BufPtr> items;
    std::int64_t elements = 0;

    void add(Ctx& c, BufPtr b) {
        if (!items.empty() && items[0]->dims != b->dims)
            fail(what + " has shape " + dimsStr(b->dims) + " in iteration " + std::to_string(items.size()) +
                 " but " + dimsStr(items[0]->dims) + " in iteration 0");
        elements += static_cast<std::int64_t>(b->v.size());
        if (elements > c.opt.maxElements)
            fail(what + " exceeds the limit of " + std::to_string(c.opt.maxElements) + " elements after " +
                 std::to_string(items.size() + 1) + " iterations");
        items.push_back(std::move(b));
    }

    /// Items stacked along `axis` (of the result, negative counts from its end); with `reverse`,
    /// iteration t goes to position L-1-t. No items: the extents `body` declares for this output,
    /// with 0 at `axis` (rank 1 when it declares no fully known shape).
    BufPtr build(Ctx& c, std::int64_t axis, bool reverse, const ir::Value& bodyOut, DType fallback) const {
        if (items.empty()) {
            Dims per;
            const ir::Shape& s = bodyOut.type.shape;
            bool known = s.rankKnown();
            for (std::size_t i = 0; known && i < s.rank(); ++i) {
                if (!s[i].isKnown()) known = false;
                else per.push_back(s[i].value);
            }
            if (!known) per.clear();
            const std::int64_t a = normAxis(axis, per.size() + 1);
            per.insert(per.begin() + a, 0);
            const DType t = bodyOut.type.dtype != DType::Undefined ? bodyOut.type.dtype : fallback;
            return c.make(per, t);
        }
        const Dims& per = items[0]->dims;
        const std::size_t a = static_cast<std::size_t>(normAxis(axis, per.size() + 1));
        const auto len = static_cast<std::int64_t>(items.size());
        Dims dims = per;
        dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(a), len);
        auto r = c.make(dims, items[0]->dtype);
        const std::int64_t outer = product(per, 0, a), inner = product(per, a, per.size());
        for (std::int64_t t = 0; t < len; ++t) {
            const Buf& item = *items[static_cast<std::size_t>(t)];
            const std::int64_t pos = reverse ? len - 1 - t : t;
            for (std::int64_t o = 0; o < outer; ++o)
                for (std::int64_t i = 0; i < inner; ++i)
                    r->v[static_cast<std::size_t>((o * len + pos) * inner + i)] =
                        item.v[static_cast<std::size_t>(o * inner + i)];
        }
        return r;
    }
};

std::vector<BufPtr> ifOp(Ctx& c) {
    const bool cond = scalarOf(c.input(0), "cond") != 0.0;
    const std::string branch = cond ? "then_branch" : "else_branch";
    std::vector<BufPtr> outs = runSubgraph(c, graphAttr(c.n, branch), branch, {});
    if (outs.size() < c.n.outputs.size())
        fail(branch + " gives " + std::to_string(outs.size()) + " outputs but the node has " +
             std::to_string(c.n.outputs.size()));
    return outs;
}

std::vector<BufPtr> loopOp(Ctx& c) {
    const ir::Graph& body = graphAttr(c.n, "body");
    if (c.in.size() < 2) fail("Loop needs the inputs M and cond (either may be empty)");
    const std::size_t numCarried = c.in.size() - 2;
    std::vector<BufPtr> carried(c.in.begin() + 2, c.in.end());
    for (std::size_t k = 0; k < numCarried; ++k)
        if (!carried[k]) fail("loop-carried input " + std::to_string(k) + " is required");
    const std::size_t numBodyOuts = body.outputs().size();
    if (numBodyOuts < 1 + numCarried)
        fail("the body has " + std::to_string(numBodyOuts) + " outputs; it needs cond and the " +
             std::to_string(numCarried) + " loop-carried values");
    const std::size_t numScans = numBodyOuts - 1 - numCarried;

    std::optional<std::int64_t> maxTrips;
    if (c.has(0)) maxTrips = toInt64(scalarOf(c.input(0), "M"));
    const bool hasCond = c.has(1);
    bool cond = hasCond ? scalarOf(c.input(1), "cond") != 0.0 : true;

    std::vector<Stack> scans(numScans);
    for (std::size_t k = 0; k < numScans; ++k) scans[k].what = "scan output " + std::to_string(k);
    std::int64_t trip = 0;
    while ((!maxTrips || trip < *maxTrips) && cond) {
        c.poll();
        if (trip >= c.opt.maxLoopIterations)
            fail("the loop did not end after " + std::to_string(c.opt.maxLoopIterations) +
                 " iterations (ReferenceOptions::maxLoopIterations)");
        std::vector<BufPtr> ins;
        ins.reserve(2 + numCarried);
        ins.push_back(scalarBuf(DType::I64, static_cast<double>(trip)));
        ins.push_back(scalarBuf(DType::Bool, cond ? 1.0 : 0.0));
        ins.insert(ins.end(), carried.begin(), carried.end());
        std::vector<BufPtr> outs = runSubgraph(c, body, "body", ins);
        // Without a cond input the body's cond output is ignored (a plain for loop).
        if (hasCond) cond = scalarOf(*outs[0], "the body's cond output") != 0.0;
        for (std::size_t k = 0; k < numCarried; ++k) carried[k] = outs[1 + k];
        for (std::size_t k = 0; k < numScans; ++k) scans[k].add(c, outs[1 + numCarried + k]);
        ++trip;
    }
    std::vector<BufPtr> result = std::move(carried);
    for (std::size_t k = 0; k < numScans; ++k)
        result.push_back(scans[k].build(c, 0, false, body.value(body.outputs()[1 + numCarried + k]),
                                        c.outDType(numCarried + k)));
    return result;
}

struct ScanResult {
    std::vector<BufPtr> state;
    std::vector<BufPtr> scans;
};

/// Scan (opset 9 form) over `xs`: slices along inAxes[j] (reversed when inDirs[j] != 0) with
/// the state carried through `body`; scan output k stacked along outAxes[k].
ScanResult scanCore(Ctx& c, const ir::Graph& body, std::vector<BufPtr> state, const std::vector<BufPtr>& xs,
                    const Dims& inAxes, const Dims& inDirs, const Dims& outAxes, const Dims& outDirs) {
    const std::size_t numState = state.size();
    if (xs.empty()) fail("Scan needs at least one scan input");
    const std::size_t numBodyOuts = body.outputs().size();
    if (numBodyOuts < numState)
        fail("the body has " + std::to_string(numBodyOuts) + " outputs but there are " + std::to_string(numState) +
             " state variables");
    const std::size_t numScans = numBodyOuts - numState;
    if (outAxes.size() != numScans || outDirs.size() != numScans)
        fail("scan_output_axes and scan_output_directions must have " + std::to_string(numScans) + " values");

    std::vector<std::size_t> axes(xs.size());
    std::int64_t len = -1;
    for (std::size_t j = 0; j < xs.size(); ++j) {
        if (xs[j]->dims.empty()) fail("scan input " + std::to_string(j) + " is a scalar");
        axes[j] = static_cast<std::size_t>(normAxis(inAxes[j], xs[j]->dims.size()));
        const std::int64_t l = xs[j]->dims[axes[j]];
        if (len >= 0 && l != len)
            fail("scan input " + std::to_string(j) + " has sequence length " + std::to_string(l) + " but input 0 has " +
                 std::to_string(len));
        len = l;
    }
    std::vector<Stack> scans(numScans);
    for (std::size_t k = 0; k < numScans; ++k) scans[k].what = "scan output " + std::to_string(k);
    for (std::int64_t t = 0; t < len; ++t) {
        c.poll();
        std::vector<BufPtr> ins = state;
        for (std::size_t j = 0; j < xs.size(); ++j)
            ins.push_back(sliceAt(c, *xs[j], axes[j], inDirs[j] != 0 ? len - 1 - t : t));
        std::vector<BufPtr> outs = runSubgraph(c, body, "body", ins);
        for (std::size_t k = 0; k < numState; ++k) state[k] = outs[k];
        for (std::size_t k = 0; k < numScans; ++k) scans[k].add(c, outs[numState + k]);
    }
    ScanResult r;
    r.state = std::move(state);
    for (std::size_t k = 0; k < numScans; ++k)
        r.scans.push_back(scans[k].build(c, outAxes[k], outDirs[k] != 0, body.value(body.outputs()[numState + k]),
                                         c.outDType(numState + k)));
    return r;
}

Dims attrOfLength(const Node& n, const char* name, std::size_t count) {
    Dims v = n.attrInts(name, Dims(count, 0));
    if (v.size() != count) fail(std::string(name) + " must have " + std::to_string(count) + " values");
    return v;
}

std::vector<BufPtr> scan9(Ctx& c) {
    const ir::Graph& body = graphAttr(c.n, "body");
    const std::int64_t numScanIn = c.n.attrInt("num_scan_inputs", -1);
    if (numScanIn < 1 || static_cast<std::size_t>(numScanIn) > c.in.size())
        fail("num_scan_inputs must be between 1 and the number of inputs");
    const std::size_t m = static_cast<std::size_t>(numScanIn), numState = c.in.size() - m;
    for (std::size_t i = 0; i < c.in.size(); ++i)
        if (!c.in[i]) fail("input " + std::to_string(i) + " is required");
    const std::size_t numScans = body.outputs().size() >= numState ? body.outputs().size() - numState : 0;
    std::vector<BufPtr> state(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(numState));
    std::vector<BufPtr> xs(c.in.begin() + static_cast<std::ptrdiff_t>(numState), c.in.end());
    ScanResult r = scanCore(c, body, std::move(state), xs, attrOfLength(c.n, "scan_input_axes", m),
                            attrOfLength(c.n, "scan_input_directions", m),
                            attrOfLength(c.n, "scan_output_axes", numScans),
                            attrOfLength(c.n, "scan_output_directions", numScans));
    std::vector<BufPtr> out = std::move(r.state);
    out.insert(out.end(), r.scans.begin(), r.scans.end());
    return out;
}

/// Scan-8: a batch axis 0 on every input and output, the sequence on axis 1, an optional
/// sequence_lens input first. Each batch entry runs as a Scan-9 over axis 0.
std::vector<BufPtr> scan8(Ctx& c) {
    const ir::Graph& body = graphAttr(c.n, "body");
    const std::int64_t numScanIn = c.n.attrInt("num_scan_inputs", -1);
    if (c.in.empty() || numScanIn < 1 || static_cast<std::size_t>(numScanIn) > c.in.size() - 1)
        fail("num_scan_inputs must be between 1 and the number of inputs after sequence_lens");
    const std::size_t m = static_cast<std::size_t>(numScanIn), numState = c.in.size() - 1 - m;
    for (std::size_t i = 1; i < c.in.size(); ++i) {
        if (!c.in[i]) fail("input " + std::to_string(i) + " is required");
        if (c.in[i]->dims.size() < (i > numState ? 2u : 1u))
            fail("input " + std::to_string(i) + " of shape " + dimsStr(c.in[i]->dims) + " lacks the batch axis" +
                 (i > numState ? " and the sequence axis" : ""));
    }
    const std::int64_t batch = c.in[1]->dims[0];
    for (std::size_t i = 2; i < c.in.size(); ++i)
        if (c.in[i]->dims[0] != batch)
            fail("input " + std::to_string(i) + " has batch size " + std::to_string(c.in[i]->dims[0]) + " but input 1 has " +
                 std::to_string(batch));
    if (batch < 1) fail("the batch is empty");
    const std::int64_t len = c.in[1 + numState]->dims[1];
    if (c.has(0)) {
        const auto lens = intsOf(c.input(0));
        if (static_cast<std::int64_t>(lens.size()) != batch)
            fail("sequence_lens has " + std::to_string(lens.size()) + " values for a batch of " + std::to_string(batch));
        for (std::int64_t l : lens)
            if (l != len)
                fail(std::string(kNoReferenceImplementation) + " for Scan-8 sequence_lens other than the full length " +
                     std::to_string(len));
    }
    const Dims dirs = attrOfLength(c.n, "directions", m);
    const std::size_t numScans = body.outputs().size() >= numState ? body.outputs().size() - numState : 0;
    std::vector<Stack> outs(numState + numScans);
    for (std::size_t k = 0; k < outs.size(); ++k) outs[k].what = "output " + std::to_string(k);
    for (std::int64_t b = 0; b < batch; ++b) {
        std::vector<BufPtr> state, xs;
        for (std::size_t i = 1; i <= numState; ++i) state.push_back(sliceAt(c, *c.in[i], 0, b));
        for (std::size_t i = 1 + numState; i < c.in.size(); ++i) xs.push_back(sliceAt(c, *c.in[i], 0, b));
        ScanResult r = scanCore(c, body, std::move(state), xs, Dims(m, 0), dirs, Dims(numScans, 0), Dims(numScans, 0));
        for (std::size_t k = 0; k < numState; ++k) outs[k].add(c, r.state[k]);
        for (std::size_t k = 0; k < numScans; ++k) outs[numState + k].add(c, r.scans[k]);
    }
    std::vector<BufPtr> result;
    for (std::size_t k = 0; k < outs.size(); ++k)
        result.push_back(outs[k].build(c, 0, false, body.value(body.outputs()[k]), c.outDType(k)));
    return result;
}

}  // namespace

bool evalControlFlow(Ctx& c, std::vector<BufPtr>& outs) {
    const std::string& op = c.n.opType;
    if (op == "If") outs = ifOp(c);
    else if (op == "Loop") outs = loopOp(c);
    else if (op == "Scan") {
        // Scan-8 takes sequence_lens first: the node has one input more than the body.
        const ir::Graph& body = graphAttr(c.n, "body");
        outs = c.in.size() == body.runtimeInputs().size() + 1 ? scan8(c) : scan9(c);
    }
    else return false;
    return true;
}

}  // namespace tessera::eval::refimpl
