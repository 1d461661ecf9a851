#pragma once
/// @file
/// C-like code generation from the kernel IR (core/lower/kernel_ir.h): the shared base of the
/// OpenMP C++ generator (core/codegen/cpp) and the CUDA C generator (core/codegen/cuda).
///
/// What the base emits
/// - Expressions with minimal parentheses (C precedence and associativity, plus parentheses
///   where compilers warn: `&&` inside `||`, a comparison inside a comparison, nested `?:`) or
///   full parentheses (Style::parens = Full: every non-primary operand is parenthesised).
/// - Statements: `for (int64_t i = 0; i < n; ++i)` loops, `if`/`else if`/`else`, `const T v = e;`
///   for Let, stores, `(void)(e);` for Evaluate, `//` comments.
/// - Buffers: a row-major flat index `i * s0 + j * s1 + k` for each access. F16/BF16 buffers are
///   uint16_t storage converted through float (helpers tsr_f16_to_f32 ...); Bool buffers are
///   uint8_t storage (load `x != 0`). A Local/Shared buffer of shape {} or {1} becomes a scalar
///   variable, other shapes a stack array (a heap array above kHeapThresholdBytes).
/// - Identifiers: every name in the generated code is built by the generator. Model names are
///   data: they are sanitised to [A-Za-z0-9_] (never starting with a digit, never a keyword),
///   prefixed (`tk_` entry points, `in_`/`out_` parameters, `t_` temporaries, `v_` for variable
///   hints that are not plainly safe) and made unique (suffix _2, _3 ...). Names quoted in
///   comments go through escapeCommentText, and only `//` comments are produced.
///
/// Subclasses override the virtual hooks (parallel loops, barriers, shared memory, intrinsic
/// spelling, function qualifiers, kernel signature, prelude).
///
/// Thread rules: an emitter object is used by one thread at a time; separate objects are
/// independent. The kernels are only read.

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/lower/kernel_ir.h"

namespace tessera::codegen {

using ir::DType;

/// One range of generated lines that belongs to a source op of a kernel.
struct SourceMapEntry {
    int kernel = 0;     ///< index of the kernel in the list given to the generator
    int firstLine = 0;  ///< 1-based, inclusive: the first line of the kernel's header comment
    int lastLine = 0;   ///< 1-based, inclusive: the closing brace of the kernel's function
    std::string node;   ///< source op name (Kernel::sourceOps; the kernel name when it has none); data
};

/// Bytes of a generated module that belong to one kernel.
struct TextSpan {
    std::size_t offset = 0;  ///< first byte (the start of a line)
    std::size_t size = 0;    ///< bytes, through the blank line after the closing brace
};

/// A generated module.
struct GeneratedSource {
    std::string source;                    ///< the complete translation unit
    std::vector<std::string> entryPoints;  ///< one exported symbol per kernel, in input order ("" for a null kernel)
    std::vector<SourceMapEntry> sourceMap; ///< for each kernel, one entry per source op (in order)
    /// How the module splits into translation units (the host JIT's compile units,
    /// core/runtime/host_jit.h): source[0, sharedPreludeBytes) is the part of the prelude any
    /// kernel needs and that defines nothing with external linkage (includes, static inline
    /// helpers); kernelSpans[i] is kernel i's text (header comment and function; empty for a null
    /// kernel), in module order. The rest (module-level functions) must go into one unit only.
    std::size_t sharedPreludeBytes = 0;
    std::vector<TextSpan> kernelSpans;
};

/// Text that is safe anywhere inside a `//` comment: printable ASCII is kept except that a
/// backslash becomes `\x5c` (so no line ends in a backslash: no line continuation) and the
/// second `?` of `??` becomes `\x3f` (no trigraphs); every other byte (control characters,
/// newlines, CR, NUL, all non-ASCII bytes, hence invalid UTF-8 and U+2028/U+2029 too) becomes
/// `\xNN`. Output longer than maxLength is cut and ends in "...".
std::string escapeCommentText(std::string_view text, std::size_t maxLength = 200);

/// `prefix` + `name` with every byte outside [A-Za-z0-9_] replaced by `_`, runs of `_` collapsed,
/// cut at 40 characters of `name`; an empty name becomes "x"; a result that starts with a digit
/// gets a leading "n", a C/C++ keyword a trailing "_". Not made unique (IdentifierTable does).
std::string sanitizeIdentifier(std::string_view name, std::string_view prefix = {});

/// True for C and C++ keywords, alternative operator tokens, and names the generated code or its
/// headers use (math functions, fixed-width types, `std`, `args`, predefined lowercase macros such
/// as `linux`, the `tsr_`/`tk_` prefixes of helpers and entry points).
bool isReservedIdentifier(std::string_view name);

/// A set of identifiers in one C scope; `unique` hands out sanitised names never handed out before.
class IdentifierTable {
public:
    void reserve(const std::string& name) { m_used.insert(name); }
    bool contains(const std::string& name) const { return m_used.count(name) != 0; }
    /// sanitizeIdentifier(name, prefix), with _2, _3 ... appended until it is unused; recorded.
    std::string unique(std::string_view name, std::string_view prefix = {});
    /// For printing hints (loop variables): the hint itself when it is plainly safe (lowercase
    /// [a-z][a-z0-9_]*, at most 24 characters, not reserved), otherwise "v_" + sanitised hint;
    /// then made unique.
    std::string uniqueVar(std::string_view hint);
    /// Makes a name available again (a loop variable whose `for` scope ended).
    void release(const std::string& name) { m_used.erase(name); }
    void clear() { m_used.clear(); }

private:
    std::set<std::string> m_used;
};

/// Line-oriented text buffer with indentation and 1-based line numbers.
class CodeWriter {
public:
    explicit CodeWriter(int indentWidth = 4) : m_width(indentWidth) {}
    /// Writes the current indentation, `text` and a newline.
    void line(std::string_view text);
    /// Writes `text` and a newline without indentation (preprocessor lines at column 0).
    void rawLine(std::string_view text);
    void blank() { rawLine({}); }
    void indent() { ++m_indent; }
    void dedent() { if (m_indent > 0) --m_indent; }
    /// Number of complete lines written so far (the next line has number lines() + 1).
    int lines() const { return m_lines; }
    const std::string& text() const { return m_text; }
    void clear() { m_text.clear(); m_lines = 0; m_indent = 0; }

private:
    std::string m_text;
    int m_lines = 0;
    int m_indent = 0;
    int m_width = 4;
};

/// Base class of the C-like generators. emitModule() drives: emitPrelude(), then per kernel a
/// header comment and emitKernelFunction(), then emitEpilogue().
class CEmitter {
public:
    enum class Parens { Minimal, Full };
    struct Style {
        Parens parens = Parens::Minimal;
        int indentWidth = 4;
    };
    /// Local/Shared arrays larger than this many bytes are heap-allocated (CPU stacks are small).
    static constexpr std::int64_t kHeapThresholdBytes = 64 * 1024;

    CEmitter();
    explicit CEmitter(Style style);
    virtual ~CEmitter() = default;
    CEmitter(const CEmitter&) = delete;
    CEmitter& operator=(const CEmitter&) = delete;

    /// Generates the whole translation unit. Kernels must stay alive during the call; a null
    /// pointer gets no code and an empty entry point name (entryPoints stays index-aligned). Deterministic: the same kernels give the same text.
    GeneratedSource emitModule(const std::vector<const lower::Kernel*>& kernels);

protected:
    /// An expression's text and C precedence (higher binds tighter; see kPrec* below).
    struct ExprText {
        std::string text;
        int prec = 16;
    };
    static constexpr int kPrecPrimary = 16, kPrecUnary = 15, kPrecMul = 13, kPrecAdd = 12, kPrecRel = 10,
                         kPrecEq = 9, kPrecAnd = 5, kPrecOr = 4, kPrecCond = 3;

    // ---- hooks ----
    /// Module start: includes, helpers (the base writes nothing; see emitCommonHelpers).
    virtual void emitPrelude() {}
    /// Module end (after the last kernel).
    virtual void emitEpilogue() {}
    /// Qualifiers before `void <entry>(...)`, e.g. `extern "C"` or `extern "C" __global__`.
    virtual std::string kernelQualifiers() const { return "extern \"C\""; }
    /// Qualifiers of the prelude's helper functions, e.g. `[[maybe_unused]] static inline`.
    virtual std::string helperQualifiers() const { return "[[maybe_unused]] static inline"; }
    /// The function signature line(s) ending in `{` and the parameter bindings (the base: one
    /// `void* const* args` argument, each param cast from args[i]). Names are in paramName().
    virtual void emitKernelSignature(const lower::Kernel& k, const std::string& entry);
    /// A For statement (the base: a serial loop, with unroll/vectorize pragmas from the hooks).
    virtual void emitFor(const lower::StmtNode& s);
    /// A Barrier statement (the base: a comment; no-op on the CPU).
    virtual void emitBarrier();
    /// An Mma statement (kernel_ir.h; the base: an error line: CUDA only).
    virtual void emitMma(const lower::StmtNode& s);
    /// Declaration of an Allocate'd buffer (the base: scalar, stack array or heap array).
    virtual void emitAllocateDecl(int buffer, const std::string& name);
    /// Pragma line for an Unroll loop, or empty. n > 0: unroll count; n == 0: unknown extent.
    virtual std::string unrollPragma(std::int64_t n) const;
    /// Pragma line for a Vectorize loop, or empty.
    virtual std::string vectorizePragma(std::int64_t factor) const;
    /// Function name for intrinsic f computed in C type of dtype t (a float dtype).
    virtual std::string intrinsicSpelling(lower::Intrinsic f, DType t) const;
    /// Float immediate of dtype t: round-trips exactly; inf/nan via std::numeric_limits.
    virtual ExprText floatLiteral(double v, DType t) const;
    /// `__restrict__` (the restrict spelling for pointer parameters).
    virtual std::string restrictQualifier() const { return "__restrict__"; }
    /// Storage type of a buffer element: uint16_t for f16/bf16, uint8_t for bool, float ...
    virtual std::string storageType(DType t) const;
    /// C type that holds a value of dtype t in expressions: float for f16/bf16, bool for bool.
    virtual std::string computeType(DType t) const;

    // ---- helpers for subclasses ----
    /// Lines of prelude code defining helper functions; an '@' before any `//` stands for
    /// helperQualifiers().
    using HelperLines = std::span<const char* const>;
    /// Writes the helper functions the base's expressions use (half conversion, floordiv,
    /// floormod, min/max, sigmoid, rsqrt, abs), qualified with helperQualifiers(), in host C++.
    void emitCommonHelpers();
    /// The same helpers with a target's own definitions of the f16/bf16 conversions
    /// (`conversions`: tsr_f16_to_f32, tsr_f32_to_f16, tsr_bf16_to_f32, tsr_f32_to_bf16) and of
    /// tsr_floordiv/tsr_floormod (`floorOps`), then `more`; the rounding, min/max/abs and sigmoid
    /// helpers between them are the same text on every target.
    void emitHelpers(HelperLines conversions, HelperLines floorOps, HelperLines more);
    /// Called by emitPrelude() where the shareable part of the prelude ends
    /// (GeneratedSource::sharedPreludeBytes); when never called, the whole prelude is shareable.
    void endSharedPrelude() { m_sharedPreludeBytes = m_w.text().size(); }
    /// Emits one statement tree.
    void emitStmt(const lower::Stmt& s);
    /// Emits the loop header (with its annotation comment), the body and the closing brace; the
    /// loop variable is bound for the body. `pragmas` are written before the header.
    void emitLoop(const lower::StmtNode& s, const std::vector<std::string>& pragmas);
    /// The two halves of emitLoop, for subclasses that nest loops themselves (collapse):
    /// beginLoop writes the pragmas and the header, binds the variable and indents; endLoop
    /// dedents, writes the closing brace and unbinds.
    void beginLoop(const lower::StmtNode& s, const std::vector<std::string>& pragmas);
    void endLoop(const lower::StmtNode& s);
    /// Binds a variable to a fresh C name for the duration of a scope; unbind restores.
    std::string bindVar(const lower::Var& v);
    void unbindVar(const lower::Var& v);
    /// Text of an expression.
    ExprText expr(const lower::Expr& e);
    std::string exprString(const lower::Expr& e) { return expr(e).text; }
    /// Name of a buffer in the current kernel (parameter or currently allocated temporary).
    const std::string& bufferName(int buffer) const;
    /// True for a Local/Shared buffer of shape {} or {1} (emitted as a scalar variable).
    bool isScalarTemp(int buffer) const;
    /// Comment line(s) escaped with escapeCommentText.
    void commentLine(std::string_view text);
    /// An `#error` line with a fixed message (the IR is malformed; the module must not compile).
    void errorLine(std::string_view fixedMessage);
    const lower::Kernel& kernel() const { return *m_kernel; }
    CodeWriter& writer() { return m_w; }
    const Style& style() const { return m_style; }
    IdentifierTable& localIds() { return m_localIds; }
    IdentifierTable& moduleIds() { return m_moduleIds; }
    /// Parameter i's C name (valid inside emitKernelSignature and the body).
    const std::string& paramName(std::size_t i) const { return m_paramNames.at(i); }
    /// Wraps t in parentheses when its precedence is below minPrec (Full style: below primary).
    std::string operand(const ExprText& t, int minPrec) const;
    /// Integer literal of dtype t.
    static ExprText intLiteral(std::int64_t v, DType t);
    /// The element of `buffer` that `indices` address, e.g. `in_X[i * 8 + j]` (row-major flat
    /// index; a scalar temporary is its bare name). Loads and stores go through it; the CUDA
    /// generator overrides it for per-thread buffers.
    virtual std::string accessText(int buffer, const std::vector<lower::Expr>& indices);

private:
    void emitKernel(int index, const lower::Kernel& k, const std::string& entry, GeneratedSource& out);
    void emitHeaderComment(const lower::Kernel& k, const std::string& entry);
    void emitIf(const lower::StmtNode& s, bool elseIf);
    ExprText binaryExpr(const lower::ExprNode& n);
    ExprText castText(const ExprText& a, DType from, DType to);
    ExprText callExpr(const lower::ExprNode& n);
    ExprText loadExpr(const lower::ExprNode& n);
    std::string storeValueText(const ExprText& v, DType valueType, DType bufferType);
    bool validBuffer(int buffer) const;

    Style m_style;
    CodeWriter m_w;
    IdentifierTable m_moduleIds;
    IdentifierTable m_localIds;
    const lower::Kernel* m_kernel = nullptr;
    std::vector<std::string> m_paramNames;
    std::vector<std::string> m_bufferNames;  ///< per buffer index; "" when not in scope
    std::unordered_map<int, std::vector<std::string>> m_varNames;  ///< var id -> binding stack
    std::string m_unknown = "tsr_unbound";
    std::size_t m_sharedPreludeBytes = std::string::npos;  ///< npos: not marked (the whole prelude)
};

}  // namespace tessera::codegen
