#pragma once
// Shared by the lowering tests (tests/lower/test_lower_basic*.cpp, test_lower_compute*.cpp): lower
// every node of a graph, run each kernel with the kernel-IR interpreter on the reference
// interpreter's inputs, and compare its outputs with the reference values.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/eval/compare.h"
#include "core/eval/reference_interpreter.h"
#include "core/ir/graph.h"
#include "core/lower/lower.h"
#include "tests/test_support/kernel_eval.h"

namespace tessera::lower::test {

/// True when one of k's notes starts with `prefix` (which form a template chose).
inline bool hasNote(const Kernel& k, const std::string& prefix) {
    for (const auto& n : k.notes)
        if (n.rfind(prefix, 0) == 0) return true;
    return false;
}

/// Occurrences of `what` in `text` (e.g. in printKernel's output).
inline std::size_t countOf(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
}

/// Deterministic test data of `dtype` and `dims`: floats in [-2, 2) with a few exact zeros and
/// halves, integers in [-5, 5] (non-negative for unsigned), bools alternating.
inline ir::TensorData makeData(ir::DType dtype, const std::vector<std::int64_t>& dims, std::uint32_t seed = 1) {
    ir::TensorData t;
    t.dtype = dtype;
    t.dims = dims;
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    const std::size_t sz = ir::dtypeSize(dtype);
    t.bytes.resize(static_cast<std::size_t>(n) * sz);
    std::uint32_t s = seed * 2654435761u + 12345u;
    auto next = [&] {
        s = s * 1664525u + 1013904223u;
        return s >> 8;
    };
    for (std::int64_t i = 0; i < n; ++i) {
        std::uint8_t* p = t.bytes.data() + static_cast<std::size_t>(i) * sz;
        const std::uint32_t r = next();
        const double f = (i % 7 == 3) ? 0.0 : (i % 11 == 5) ? 0.5 : (static_cast<double>(r % 4096) / 1024.0 - 2.0);
        const std::int64_t k = static_cast<std::int64_t>(r % 11) - 5;
        switch (dtype) {
        case ir::DType::F32: { float v = static_cast<float>(f); std::memcpy(p, &v, 4); break; }
        case ir::DType::F64: std::memcpy(p, &f, 8); break;
        case ir::DType::F16: { auto h = floatToHalfBits(static_cast<float>(f)); std::memcpy(p, &h, 2); break; }
        case ir::DType::BF16: { auto h = floatToBf16Bits(static_cast<float>(f)); std::memcpy(p, &h, 2); break; }
        case ir::DType::I8: { auto v = static_cast<std::int8_t>(k); std::memcpy(p, &v, 1); break; }
        case ir::DType::I16: { auto v = static_cast<std::int16_t>(k); std::memcpy(p, &v, 2); break; }
        case ir::DType::I32: { auto v = static_cast<std::int32_t>(k); std::memcpy(p, &v, 4); break; }
        case ir::DType::I64: std::memcpy(p, &k, 8); break;
        case ir::DType::U8: { auto v = static_cast<std::uint8_t>(k + 5); std::memcpy(p, &v, 1); break; }
        case ir::DType::U16: { auto v = static_cast<std::uint16_t>(k + 5); std::memcpy(p, &v, 2); break; }
        case ir::DType::U32: { auto v = static_cast<std::uint32_t>(k + 5); std::memcpy(p, &v, 4); break; }
        case ir::DType::U64: { auto v = static_cast<std::uint64_t>(k + 5); std::memcpy(p, &v, 8); break; }
        case ir::DType::Bool: { std::uint8_t v = (r >> 3) & 1; std::memcpy(p, &v, 1); break; }
        default: break;
        }
    }
    return t;
}

/// Random inputs for g.runtimeInputs() (their declared static shapes).
inline std::vector<ir::TensorData> makeInputs(const ir::Graph& g, std::uint32_t seed = 1) {
    std::vector<ir::TensorData> r;
    for (ir::ValueId v : g.runtimeInputs()) {
        const auto dims = g.value(v).type.shape.knownDims().value_or(std::vector<std::int64_t>{});
        r.push_back(makeData(g.value(v).type.dtype, dims, seed++));
    }
    return r;
}

/// Lowers every node of `g` (schedules from `program` by node name when given), runs each kernel
/// on the reference interpreter's values and compares every output. Returns "" when all match,
/// else one line per problem. `tolerance` replaces the per-dtype defaults of compareTensors.
/// With options.target == Cpu the check runs twice: once lowered for the CPU and once for CUDA
/// (Blocks/Threads loops and the default GPU mappings, run by the interpreter); problems of the
/// CUDA lowering start with "[cuda] ".
inline std::string checkAgainstReferenceFor(const ir::Graph& g, const std::vector<ir::TensorData>& inputs,
                                            const ir::ProgramSchedule* program, const LowerOptions& options,
                                            std::optional<eval::CompareOptions> tolerance,
                                            const eval::ReferenceValues& refResult);

inline std::string checkAgainstReference(const ir::Graph& g, const std::vector<ir::TensorData>& inputs,
                                         const ir::ProgramSchedule* program = nullptr,
                                         const LowerOptions& options = {},
                                         std::optional<eval::CompareOptions> tolerance = std::nullopt) {
    auto ref = eval::evaluateAll(g, inputs);
    if (!ref) return "reference: " + ref.diagnostics().firstError()->format();
    std::string problems = checkAgainstReferenceFor(g, inputs, program, options, tolerance, *ref);
    if (options.target == Target::Cpu) {
        LowerOptions cuda = options;
        cuda.target = Target::Cuda;
        const std::string p = checkAgainstReferenceFor(g, inputs, program, cuda, tolerance, *ref);
        std::size_t pos = 0;
        while (pos < p.size()) {
            const std::size_t nl = p.find('\n', pos);
            problems += "[cuda] " + p.substr(pos, nl == std::string::npos ? std::string::npos : nl + 1 - pos);
            pos = nl == std::string::npos ? p.size() : nl + 1;
        }
    }
    return problems;
}

inline std::string checkAgainstReferenceFor(const ir::Graph& g, const std::vector<ir::TensorData>& inputs,
                                            const ir::ProgramSchedule* program, const LowerOptions& options,
                                            std::optional<eval::CompareOptions> tolerance,
                                            const eval::ReferenceValues& refResult) {
    (void)inputs;
    const eval::ReferenceValues* ref = &refResult;
    std::string problems;
    for (std::size_t id = 0; id < g.numNodes(); ++id) {
        const ir::Node& n = g.node(static_cast<ir::NodeId>(id));
        const ir::KernelScheduleDecl* sched = program ? program->scheduleFor(n.name) : nullptr;
        auto lk = lowerNode(g, static_cast<ir::NodeId>(id), sched, options);
        if (!lk) {
            problems += n.name + ": lowering: " + lk.diagnostics().firstError()->format() + "\n";
            continue;
        }
        std::vector<ir::TensorData> storage;
        storage.reserve(lk->inputs.size() + lk->outputs.size());
        bool ok = true;
        for (ir::ValueId v : lk->inputs) {
            const ir::Value& val = g.value(v);
            if (val.data) storage.push_back(*val.data);
            else if (const ir::TensorData* t = ref->value(v)) storage.push_back(*t);
            else {
                problems += n.name + ": no reference value for input '" + val.name + "'\n";
                ok = false;
            }
        }
        if (!ok) continue;
        for (std::size_t o = 0; o < lk->outputs.size(); ++o) storage.emplace_back();
        std::vector<ir::TensorData*> params;
        for (auto& t : storage) params.push_back(&t);
        auto st = evalKernel(lk->kernel, params);
        if (!st) {
            problems += n.name + ": eval: " + st.diagnostics().firstError()->format() + "\n";
            continue;
        }
        for (std::size_t o = 0; o < lk->outputs.size(); ++o) {
            const ir::TensorData* want = ref->value(lk->outputs[o]);
            if (!want) {
                problems += n.name + ": no reference value for output " + std::to_string(o) + "\n";
                continue;
            }
            ir::TensorData got = storage[lk->inputs.size() + o];
            got.dims = want->dims;  // the kernel buffer is dense: only the element count matters
            auto cmp = tolerance ? eval::compareTensors(got, *want, *tolerance) : eval::compareTensors(got, *want);
            if (!cmp.ok) problems += n.name + " output " + std::to_string(o) + ": " + cmp.summary() + "\n";
        }
    }
    return problems;
}

}  // namespace tessera::lower::test
