// The Tessera DSL's compute definitions: nodes of op type "Compute" in domain "tessera" that carry
// an index-notation definition in Node::compute (core/ir/compute.h). Their types and FLOPs come
// from that definition (ir::inferShapes and ir::nodeFlops handle node.compute before looking at
// the registry); this schema makes them known ops with a category of their own.
#include "core/ir/node.h"
#include "core/ir/ops/op_helpers.h"

namespace tessera::ir::ops {

void registerComputeOps(std::vector<OpSchema>& out) {
    OpSchema s;
    s.opType = kComputeOpType;
    s.domain = kTesseraDomain;
    s.category = OpCategory::Compute;
    s.minInputs = 0;
    s.maxInputs = -1;
    s.minOutputs = 1;
    s.maxOutputs = 1;
    // Reached only for a Compute node without a definition (a malformed graph).
    s.inferShapes = [](const InferContext&) { return fail("a Compute node needs a compute definition"); };
    s.flops = [](const InferContext&, const std::vector<TensorType>&) -> std::optional<std::int64_t> {
        return std::nullopt;
    };
    // Injective only when the definition has no reduction: decided per node, so the schema says no.
    s.injective = false;
    s.summary = "index-notation compute definition (Tessera DSL, docs/dsl.md)";
    out.push_back(std::move(s));
}

}  // namespace tessera::ir::ops
