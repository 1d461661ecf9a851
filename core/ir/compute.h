#pragma once
/// @file
/// Compute definitions: tensors defined element by element in index notation, as in TVM-TE's
/// `te.compute` and Hidet's `compute(...)` (docs/dsl.md §4.4), e.g.
/// `C[i, j] = sum(k) A[i, k] * B[k, j]`.
///
/// IR form: a node of op type "Compute" in domain "tessera" whose `Node::compute` points to a
/// ComputeDef. The node's inputs are the tensors the expression reads (an Access names the
/// input *slot*, not a value), its single output is the defined tensor. Its output type is
/// given by checkCompute (shape inference calls it for Compute nodes).
///
/// Semantics
/// - `axes` lists every index variable: first the output (spatial) axes in output-dimension
///   order (`numOutputAxes` of them), then the reduction axes. An Index expression names an axis
///   by position. Each axis has an extent: known, symbolic (a dim name such as "N") or unknown
///   until checkCompute infers it from a direct subscript use.
/// - Reduce(kind, axes) combines its body over the product of its axes' extents (sum, prod,
///   max, min). Reduction bodies may contain further reductions.
/// - Subscripts are integer expressions; `/` and `%` on integers are floor division and the
///   matching remainder (result sign of the divisor). Reads out of range are undefined unless
///   guarded by a Select, which evaluates only the chosen branch.
/// - Types: index variables are i64; literals are *weak* (take the other operand's type);
///   integer with float gives the float; two different float types are an error naming both.
/// - FLOPs (computeFlops): per output element, the arithmetic ops, comparisons, selects and
///   function calls of the expression (subscript arithmetic excluded), reductions multiplying
///   their body's count plus one combine by their extent product; times the output elements.
///
/// Thread rules: a ComputeDef is a plain value; once owned by a node (shared_ptr<const>) it is
/// immutable and may be read from any thread.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/shape.h"
#include "core/ir/tensor.h"
#include "core/support/diagnostic.h"

namespace tessera::ir {

enum class ComputeKind { Const, Index, Access, Unary, Binary, Select, Cast, Reduce };

/// Unary operators and one-argument functions.
enum class ComputeUnary {
    Neg,
    Not,
    Exp,
    Log,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Tan,
    Tanh,
    Sigmoid,
    Abs,
    Floor,
    Ceil,
    Round,
    Erf
};
/// Binary operators and two-argument functions (Min .. Atan2 are written as calls).
enum class ComputeBinary { Add, Sub, Mul, Div, Mod, Lt, Le, Gt, Ge, Eq, Ne, And, Or, Min, Max, Pow, Atan2 };
enum class ReduceKind { Sum, Prod, Max, Min };

/// "exp", "neg" ...; "+", "min" ...; "sum" ...
const char* computeUnaryName(ComputeUnary op);
const char* computeBinaryName(ComputeBinary op);
const char* reduceKindName(ReduceKind k);
std::optional<ComputeUnary> computeUnaryFromName(
    const std::string& fn);  ///< function names only (not neg/not)
std::optional<ComputeBinary> computeBinaryFromName(const std::string& fn);  ///< "min", "max", "pow", "atan2"

struct ComputeAxis {
    std::string name;
    Dim extent;  ///< known, symbolic or unknown (inferred by checkCompute)
    bool reduction = false;
};

struct ComputeExpr {
    ComputeKind kind = ComputeKind::Const;
    DType dtype = DType::Undefined;  ///< result type, set by checkCompute
    bool weak = false;               ///< an untyped literal (or an expression of literals only)
    // Const
    double value = 0.0;             ///< the constant (integers exactly representable up to 2^53)
    std::int64_t intValue = 0;      ///< the constant when constDType is an integer type
    DType constDType = DType::F32;  ///< I64 for integer literals, F32 for float literals, Bool
    // Index: axis number; Access: input slot; Reduce: axis numbers it reduces
    int axis = -1;
    int input = -1;
    std::vector<int> reduceAxes;
    ComputeUnary unary = ComputeUnary::Neg;
    ComputeBinary binary = ComputeBinary::Add;
    ReduceKind reduce = ReduceKind::Sum;
    DType castTo = DType::Undefined;
    /// Access: subscripts; Unary: 1; Binary: 2; Select: cond, then, else; Cast: 1; Reduce: body.
    std::vector<ComputeExpr> args;
    support::SourceLocation begin, end;  ///< where it was written; 0:0 when not from text

    static ComputeExpr constant(double v, DType t = DType::F32);
    static ComputeExpr integer(std::int64_t v);
    static ComputeExpr index(int axis);
    static ComputeExpr access(int input, std::vector<ComputeExpr> subscripts);
    static ComputeExpr unaryOp(ComputeUnary op, ComputeExpr a);
    static ComputeExpr binaryOp(ComputeBinary op, ComputeExpr a, ComputeExpr b);
    static ComputeExpr select(ComputeExpr c, ComputeExpr a, ComputeExpr b);
    static ComputeExpr cast(ComputeExpr a, DType to);
    static ComputeExpr reduction(ReduceKind k, std::vector<int> axes, ComputeExpr body);
};

struct ComputeDef {
    std::vector<ComputeAxis> axes;  ///< output axes first (numOutputAxes), then reduction axes
    std::size_t numOutputAxes = 0;
    ComputeExpr body;
    DType forcedDType = DType::Undefined;  ///< `C[i]: f64 = ...`; Undefined = the body's type

    /// Output shape from the output axes' extents (unknown dims where not yet inferred).
    Shape outputShape() const;
};

/// Checks `def` against the types of the node's inputs and completes it: infers unknown axis
/// extents from direct subscript uses (all uses must agree: an error names both sides), sets
/// every expression's dtype, and checks subscript counts against ranks, subscript types, bool
/// operands of && || ! and select, and float-type conflicts. `inputNames` name the inputs in
/// messages. Errors carry the expression's source location and `file`.
/// Returns the output type (dtype Undefined when there were errors).
TensorType checkCompute(ComputeDef& def, const std::vector<TensorType>& inputs,
                        const std::vector<std::string>& inputNames, const std::string& file,
                        support::DiagnosticList& diags);

/// checkCompute on a copy; the first error as a one-line message (for ir::inferShapes).
struct ComputeTypeResult {
    TensorType output;
    std::string error;
};
ComputeTypeResult inferComputeType(const ComputeDef& def, const std::vector<TensorType>& inputs,
                                   const std::vector<std::string>& inputNames);

/// FLOPs for one output element (see the file comment); nullopt when a reduction extent is not known.
std::optional<std::int64_t> computeFlopsPerElement(const ComputeDef& def);
/// FLOPs of the whole output; nullopt unless every extent is known (or on overflow).
std::optional<std::int64_t> computeFlops(const ComputeDef& def);

/// DSL text of the definition: `C[i: 4, j: 8] = sum(k: 16) A[i, k] * B[k, j]` (extents printed
/// where known or symbolic, `: dtype` after the index list when forced). `tensorName(slot)` gives
/// the text for an input; `outputName` the left-hand tensor. Reparses to an equal definition.
std::string printCompute(const ComputeDef& def, const std::string& outputName,
                         const std::function<std::string(int slot)>& tensorName);
/// The expression alone.
std::string printComputeExpr(const ComputeDef& def, const ComputeExpr& e,
                             const std::function<std::string(int slot)>& tensorName);

/// Structural problems (an Index/Reduce naming a missing axis, an Access naming a missing input
/// slot, a wrong operand count, output axes marked as reductions or the reverse); empty when none.
std::string computeStructureProblem(const ComputeDef& def, std::size_t numInputs);

/// Structural equality (kinds, operators, constants, axes, extents, slots; not dtypes or source locations).
bool computeEqual(const ComputeDef& a, const ComputeDef& b);

}  // namespace tessera::ir
