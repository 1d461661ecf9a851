#pragma once
/// @file
/// Kernel IR: the loop-level program one kernel of a graph becomes (issue 4). Lowering
/// (core/lower/lower.h) builds it from a graph group and its schedule; the code generators
/// (core/codegen/cpp, core/codegen/cuda) print it; static counts (core/lower/counts.h) walk it.
///
/// Semantics
/// - A Kernel owns buffers (`BufferDecl`): its parameters (graph tensors, `Global` scope, in
///   `params` order: every input, then every output) and temporaries (`Shared` or `Local`) that
///   an `Allocate` statement brings into scope. Buffers are dense, row-major, with the static
///   shape given (every extent known: kernels are specialised to concrete shapes). A Local
///   buffer of shape {} or {1} is a scalar (an accumulator, typically).
/// - Loads and stores address a buffer with one index expression per dimension (row-major;
///   the generator flattens). Indices are i64. An index outside the shape is undefined
///   behaviour; lowering guards with `If` or `Select` where padding or predicates need it.
/// - Expressions are immutable trees shared by pointer. Every expression has a dtype: indices
///   and loop variables are I64, comparisons and logic are Bool, arithmetic follows its
///   operands (lowering inserts explicit Casts; the builders below do not promote silently
///   except that an integer immediate meeting a float operand becomes a float immediate).
/// - Integer `Div` and `Mod` truncate toward zero (C semantics); `FloorDiv` and `FloorMod`
///   round toward negative infinity (DSL semantics, docs/dsl.md). Float `Mod` is fmod.
/// - `Select(c, a, b)` evaluates only the chosen branch (so it may guard a load).
/// - `For` runs `var` over [0, extent) with step 1; `kind` is a request to the back end
///   (Parallel: OpenMP `parallel for` on the CPU, workers on the GPU; Unroll: unroll by
///   `factor` or fully when 0; Vectorize: SIMD by `factor`). Nested Parallel loops are allowed in
///   the IR; the CPU generator parallelises the outermost one (collapsing directly nested
///   Parallel loops) and runs inner ones serially.
/// - `Let` binds an immutable variable for its body. `Allocate` declares a Shared or Local
///   buffer for its body. `Barrier` synchronises the workers of a block (a no-op on the CPU).
/// - Variables are identified by `Var::id`, unique within a kernel (`Kernel::newVar`). Names are
///   hints for printing only; generators make them unique and valid identifiers.
///
/// Thread rules: expression and statement trees are immutable values once built and may be read
/// from any thread. A Kernel under construction belongs to one thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/dtype.h"

namespace tessera::lower {

using ir::DType;

enum class MemoryScope { Global, Shared, Local };
const char* memoryScopeName(MemoryScope s);  ///< "global", "shared", "local"

enum class BufferRole { Input, Output, Temp };

struct BufferDecl {
    std::string name;                 ///< source name (graph tensor or a temp's hint); data, not code
    DType dtype = DType::F32;
    std::vector<std::int64_t> shape;  ///< every extent >= 1 (scalars: {})
    MemoryScope scope = MemoryScope::Global;
    BufferRole role = BufferRole::Temp;
    /// A Local buffer holding per-thread state across the phases of a block (see the comment on
    /// ForKind): allocated outside the Threads loops, shape[0] equals their extent, and every
    /// access has the enclosing Threads loop's variable as its first index. Only Local buffers
    /// may set it.
    bool perThread = false;

    std::int64_t numElements() const;
    std::int64_t bytes() const;  ///< numElements * dtypeSize
};

struct Var {
    int id = -1;
    std::string name;  ///< printing hint ("i", "w", "acc" ...)
    DType dtype = DType::I64;
    bool operator==(const Var& o) const { return id == o.id; }
};

enum class ExprKind { IntImm, FloatImm, VarRef, Unary, Binary, Select, Cast, Load, Call };
enum class UnaryOp { Neg, Not };
enum class BinaryOp {
    Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max,
    Lt, Le, Gt, Ge, Eq, Ne, And, Or
};
/// Math intrinsics (the C library function of the operand's float type on the CPU: expf/exp ...).
enum class Intrinsic {
    Exp, Log, Sqrt, Rsqrt, Sin, Cos, Tan, Tanh, Sigmoid, Erf, Abs, Floor, Ceil, Round,  // 1 arg
    Pow, Atan2,                                                                          // 2 args
    Fma,                                                                                 // 3 args: a*b+c
};
const char* unaryOpName(UnaryOp op);        ///< "-", "!"
const char* binaryOpName(BinaryOp op);      ///< "+", "-", "*", "/", "%", "floordiv", "floormod", "min", ...
const char* intrinsicName(Intrinsic f);     ///< "exp", "log", ..., "fma"
int intrinsicArity(Intrinsic f);
bool isComparison(BinaryOp op);             ///< Lt..Ne
bool isLogical(BinaryOp op);                ///< And, Or

struct ExprNode;

/// Handle to an immutable expression tree. Default-constructed = null (no expression).
class Expr {
public:
    Expr() = default;
    explicit Expr(std::shared_ptr<const ExprNode> n) : m_node(std::move(n)) {}
    const ExprNode* operator->() const { return m_node.get(); }
    const ExprNode& operator*() const { return *m_node; }
    const ExprNode* get() const { return m_node.get(); }
    explicit operator bool() const { return static_cast<bool>(m_node); }
    DType dtype() const;
    /// True for an IntImm (and sets *v).
    bool isIntImm(std::int64_t* v = nullptr) const;

private:
    std::shared_ptr<const ExprNode> m_node;
};

struct ExprNode {
    ExprKind kind = ExprKind::IntImm;
    DType dtype = DType::I64;
    std::int64_t intValue = 0;  ///< IntImm (Bool immediates too: 0/1)
    double floatValue = 0.0;    ///< FloatImm
    Var var;                    ///< VarRef
    UnaryOp unary = UnaryOp::Neg;
    BinaryOp binary = BinaryOp::Add;
    Intrinsic intrinsic = Intrinsic::Exp;
    int buffer = -1;            ///< Load: index into Kernel::buffers
    std::vector<Expr> args;     ///< Unary 1, Binary 2, Select 3 (c, a, b), Cast 1, Load indices, Call args
};

// ---- expression builders (fold integer constants and the identities x+0, x*1, x*0 on integers,
// so generated index arithmetic stays readable) ----
Expr intImm(std::int64_t v, DType t = DType::I64);
Expr boolImm(bool v);
Expr floatImm(double v, DType t = DType::F32);
/// An immediate of type t holding v (float or integer type).
Expr constant(double v, DType t);
Expr varRef(const Var& v);
Expr unary(UnaryOp op, Expr a);
Expr binary(BinaryOp op, Expr a, Expr b);
Expr select(Expr cond, Expr a, Expr b);
Expr cast(Expr a, DType to);  ///< no-op when a already has type `to`
Expr load(int buffer, DType dtype, std::vector<Expr> indices);
Expr call(Intrinsic f, std::vector<Expr> args);

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  ///< Div
Expr operator%(Expr a, Expr b);  ///< Mod
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator+(Expr a, std::int64_t b);
Expr operator*(Expr a, std::int64_t b);
Expr minOf(Expr a, Expr b);
Expr maxOf(Expr a, Expr b);

// ---- statements ----
enum class StmtKind { Seq, For, If, Let, Store, Allocate, Barrier, Evaluate, Comment, Mma };
/// Loop kinds. `Blocks` and `Threads` are GPU worker loops (what a kernel's grid and block task
/// mappings become on the CUDA target, Hidet's lowering):
/// - Blocks: the iterations are the grid's workers. CUDA: `for (w = blockIdx.x; w < extent;
///   w += gridDim.x)` with the launch's gridDim.x = min(extent, 2^31 - 1). At most one Blocks
///   loop on any path from the kernel body, and never inside another Blocks or a Threads loop.
///   CPU and the kernel-IR interpreter: like Parallel (independent iterations).
/// - Threads: the iterations are the workers of one block. CUDA: `for (t = threadIdx.x; t <
///   extent; t += blockDim.x)` (the bound check `t < extent` when the block has more threads
///   than the mapping has workers) with blockDim.x = the largest Threads extent of the kernel,
///   at most 1024. Several Threads loops may follow each other (e.g. fill a Shared tile, Barrier,
///   compute); a Threads loop never contains a Barrier or another Threads loop, and a Barrier
///   never sits under a condition that depends on a thread. CPU: Serial.
/// - Per-thread buffers (`BufferDecl::perThread`): a Local buffer allocated outside the Threads
///   loops that carries one thread's state from one phase to the next (a GEMM accumulator that
///   the zero phase writes, the compute phases update and the store phase reads). Its leading
///   dimension equals the extent of the Threads loops that touch it, and every load and store
///   indexes it with the enclosing Threads loop's variable first: acc[t][i][j]. The interpreter,
///   the static counts and the CPU back end treat it as an ordinary Local buffer (the phases run
///   one after another, each over every t, so the full array is exactly right). The CUDA
///   generator keeps only the running thread's row (`float acc[8*8]`, in registers when every
///   other index is constant), which requires each thread to run at most one iteration of those
///   Threads loops (extent <= block size); accesses whose first index is not the enclosing
///   Threads variable, or outside any Threads loop, are errors there.
enum class ForKind { Serial, Parallel, Unroll, Vectorize, Blocks, Threads };
const char* forKindName(ForKind k);  ///< "serial", "parallel", "unroll", "vectorize", "blocks", "threads"

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

/// Warp matrix multiply-accumulate on tensor cores (StmtKind::Mma): PTX
/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` (sm_80+; PTX ISA, "Matrix Fragments for
/// mma.m16n8k8" with .tf32), with operands read from buffers (shared memory in practice).
///
/// Per-thread semantics (what the interpreter computes; the CUDA back end gives the same result
/// with the warp's 32 lanes cooperating): with l = `lane` (in [0, 32)), g = l / 4 and q = l % 4,
/// the thread updates its four accumulator elements acc[idx..., last + r] (r = 0..3, the Store-like
/// `buffer` and `indices` of the statement) as
///     acc(r) += sum_{k = 0..7} A(row(r), k) * B(k, col(r)),  row(r) = g + 8 * (r / 2),
///                                                            col(r) = 2 * q + r % 2,
/// where A(m, k) is element [aBase[d] + m * aStride[d].row + k * aStride[d].col for each dim d] of
/// buffer `a` (a 16 x 8 tile, rows m) and B(k, n) likewise of buffer `b` (an 8 x 8 tile).
/// Precision: Tf32 rounds both operands to TF32 (10-bit mantissa, cvt.rna: to nearest, ties away
/// from zero) and accumulates in f32; Tf32x3 splits each operand x into big = tf32(x) and small =
/// tf32(x - big) and accumulates small*big + big*small + big*big (three MMAs, "3xTF32": products
/// accurate to about f32, NVIDIA CUTLASS's fast-accurate f32 GEMM), the term small*small dropped.
///
/// Rules: CUDA target only (the C++ generator reports it); inside a Threads loop whose extent is a
/// multiple of 32, with `lane` = the thread's index within its warp (t % 32 for Threads variable
/// t); every lane of a warp must execute it together (never under a condition that differs within
/// a warp) and the bases must be the same for the warp's 32 lanes; the accumulator is a f32
/// per-thread buffer, the operands f32.
enum class MmaPrecision { Tf32, Tf32x3 };
const char* mmaPrecisionName(MmaPrecision p);  ///< "tf32", "tf32x3"
struct MmaOperand {
    int buffer = -1;
    std::vector<Expr> base;  ///< one index per dim of the buffer: element (0, 0) of the tile
    struct Stride {
        std::int64_t row = 0, col = 0;
    };
    std::vector<Stride> stride;  ///< per dim: index step per tile row and per tile column
};
struct MmaInfo {
    MmaOperand a, b;  ///< A: 16 x 8 (rows m, columns k); B: 8 x 8 (rows k, columns n)
    Expr lane;        ///< the thread's lane in its warp, I64
    MmaPrecision precision = MmaPrecision::Tf32x3;
};
/// Calls f on every expression of an Mma statement's operands and lane (not its `indices`).
void forEachMmaExpr(const MmaInfo& m, const std::function<void(const Expr&)>& f);

struct StmtNode {
    StmtKind kind = StmtKind::Seq;
    std::vector<Stmt> body;       ///< Seq: statements; For/Let/Allocate: body[0]; If: then = body[0]
    Stmt elseBody;                ///< If only (may be null)
    Var var;                      ///< For loop variable, Let variable
    Expr extent;                  ///< For: trip count (loop runs var = 0 .. extent-1)
    ForKind forKind = ForKind::Serial;
    std::int64_t factor = 0;      ///< Unroll / Vectorize factor; 0 = back end decides (full unroll)
    Expr value;                   ///< Let value, Store value, Evaluate expression, If condition
    int buffer = -1;              ///< Store target, Allocate buffer (index into Kernel::buffers)
    std::vector<Expr> indices;    ///< Store indices
    std::string text;             ///< Comment text; For: annotation (e.g. "grid spatial(4,16)")
    std::shared_ptr<const MmaInfo> mma;  ///< Mma only (buffer/indices: the accumulator)
};

Stmt seq(std::vector<Stmt> stmts);  ///< flattens nested Seqs, drops nulls
Stmt forLoop(Var v, Expr extent, Stmt body, ForKind kind = ForKind::Serial, std::int64_t factor = 0,
             std::string annotation = {});
Stmt ifThen(Expr cond, Stmt thenBody, Stmt elseBody = nullptr);
Stmt let(Var v, Expr value, Stmt body);
Stmt store(int buffer, std::vector<Expr> indices, Expr value);
Stmt allocate(int buffer, Stmt body);
Stmt barrier();
Stmt evaluate(Expr e);
Stmt comment(std::string text);
/// Mma statement (see MmaInfo): accumulator `acc` at `accIndices` (last index: the first of 4).
Stmt mma(int acc, std::vector<Expr> accIndices, MmaInfo info);

/// One kernel: a unit of code generation, compilation, launch and timing.
struct Kernel {
    std::string name;                   ///< unique within a compiled module; sanitised by generators
    std::vector<BufferDecl> buffers;
    std::vector<int> params;            ///< buffer indices in ABI order: inputs, then outputs
    Stmt body;
    std::vector<std::string> sourceOps; ///< names of the graph nodes it computes (data, not code)
    std::string opType;                 ///< op type of the anchor node, e.g. "Conv"
    std::vector<std::string> mappings;  ///< "grid = spatial(64)", ... (what decided the loops)
    std::vector<std::string> notes;     ///< free text for the generated header comment

    int addBuffer(BufferDecl b);        ///< returns its index
    Var newVar(std::string name, DType t = DType::I64);

    int nextVarId = 0;
};

/// Stable, deterministic text form (golden-tested), e.g.
/// ```
/// kernel relu_0(in X: f32[1,8] global, out Y: f32[1,8] global)
///   // ops: Relu_0 (Relu)
///   parallel for i0 in 0..8 {  // grid = spatial(8)
///     Y[i0] = max(X[i0], 0.0f)
///   }
/// ```
std::string printKernel(const Kernel& k);
std::string printExpr(const Kernel& k, const Expr& e);

}  // namespace tessera::lower
