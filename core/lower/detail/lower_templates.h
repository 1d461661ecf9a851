#pragma once
/// @file
/// The table of lowering templates (internal to core/lower; not a public API): op type -> the
/// function that lowers one node of that op (core/lower/detail/lower_util.h, LowerContext). lower.cpp
/// builds the table once from the register functions below; each lowering source file fills in
/// the ops it handles.
///
/// Keys are ONNX op types of the default domain ("Relu", "Conv" ...) and "Compute" for tessera's
/// compute-definition nodes (domain "tessera"). A register function may overwrite an entry of an
/// earlier one; registration order is elementwise, movement, compute, heavy.
///
/// Thread rules: the table is built once (function-local static) and only read afterwards;
/// template functions are pure (core/lower/lower.h).

#include <functional>
#include <map>
#include <string>

#include "core/lower/detail/lower_util.h"

namespace tessera::lower::detail {

/// Lowers one node; errors are diagnostics at ctx.where.
using TemplateFn = std::function<support::Expected<LoweredKernel>(const LowerContext&)>;
using TemplateTable = std::map<std::string, TemplateFn, std::less<>>;

/// Body of a pointwise kernel: the loaded inputs (native dtypes, in the order of the slots given
/// to lowerPointwise) -> one value per node output (converted to the output's type on store; a
/// null Expr leaves that output unwritten).
using PointwiseFn = std::function<std::vector<Expr>(const std::vector<Expr>& loads)>;

/// One loop nest over the shape of output 0 (schedule or defaultCpuMapping): loads input slot
/// `slots[i]` at its broadcast index (numpy rules), calls fn and stores into every output (all
/// outputs must have output 0's shape). Errors: a missing input, non-concrete shapes, string
/// tensors, a schedule that does not fit.
support::Expected<LoweredKernel> lowerPointwise(const LowerContext& ctx, const std::vector<std::size_t>& slots,
                                                const PointwiseFn& fn);

/// Unary, binary-broadcast, variadic and Where ops (core/lower/common/lower_elementwise.cpp).
void registerElementwiseTemplates(TemplateTable& table);
/// Data movement: Reshape, Transpose, Concat, Slice, Gather, Pad ... (core/lower/common/lower_movement.cpp).
void registerMovementTemplates(TemplateTable& table);
/// tessera Compute nodes (core/lower/common/lower_compute.cpp).
void registerComputeTemplates(TemplateTable& table);
/// Compute-heavy ops: Conv, MatMul, Gemm, pooling, normalisation, reductions, Softmax ...
/// (core/lower/common/lower_heavy_registry.cpp and the files it draws on).
void registerHeavyTemplates(TemplateTable& table);

}  // namespace tessera::lower::detail
